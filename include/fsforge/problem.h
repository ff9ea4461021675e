/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The problem table mechanism shared by fsforge's checkers (after e2fsck):
 * every problem a checker can report is one row (code, stable id, message,
 * prompt, flags) in one table, and one function, fsf_fix_ask(), decides
 * what -n, -y, -p/-a and interactive mode do with it.  That gives every
 * problem the same wording in each mode, fsck(8) exit codes from the
 * counters, and a JSON report of everything found and done.
 */
#ifndef FSFORGE_PROBLEM_H
#define FSFORGE_PROBLEM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fsforge/log.h"

enum fsf_prompt {
	FSF_PROMPT_NONE,	/* informational: nothing to answer */
	FSF_PROMPT_FIX,
	FSF_PROMPT_REPAIR,
	FSF_PROMPT_CLEAR,
	FSF_PROMPT_REBUILD,
	FSF_PROMPT_RECONNECT,
	FSF_PROMPT_RELOCATE,
	FSF_PROMPT_RESET,
};

enum fsf_problem_flags {
	FSF_PR_PREEN_OK = 1u << 0,	/* -p/-a may fix it without asking */
	FSF_PR_PREEN_NOMSG = 1u << 1,	/* ... and without a message */
	FSF_PR_NO_DEFAULT = 1u << 2,	/* interactive default is "no" */
	FSF_PR_FATAL = 1u << 3,		/* the check cannot go on */
	FSF_PR_NOT_ERROR = 1u << 4,	/* fixing it is housekeeping, not an
					 * error correction (no exit bit 1) */
	FSF_PR_NO_FIX = 1u << 5,	/* found, but this checker cannot
					 * repair it (yet): always left; with
					 * FSF_PROMPT_NONE, an error reported
					 * without a question */
};

struct fsf_problem {
	uint32_t code;		/* 0xPPNNNN: pass PP, number NNNN */
	const char *id;		/* stable name for --json and tests */
	const char *msg;	/* printf format; the caller's arguments */
	enum fsf_prompt prompt;
	unsigned int flags;
};

enum fsf_fix_mode {
	FSF_MODE_INTERACTIVE,	/* -r: ask on the terminal */
	FSF_MODE_PREEN,		/* -a / -p */
	FSF_MODE_NO,		/* -n: read-only, answer no */
	FSF_MODE_YES,		/* -y */
};

/* fsck(8) exit status bits */
enum {
	FSF_EXIT_OK = 0,
	FSF_EXIT_FIXED = 1,
	FSF_EXIT_REBOOT = 2,
	FSF_EXIT_UNCORRECTED = 4,
	FSF_EXIT_ERROR = 8,
	FSF_EXIT_USAGE = 16,
	FSF_EXIT_CANCELLED = 32,
	FSF_EXIT_LIBRARY = 128,
};

struct fsf_fix_record;

struct fsf_fix_ctx {
	const struct fsf_log *log;
	enum fsf_fix_mode mode;
	FILE *in;		/* interactive answers (default stdin) */
	FILE *out;		/* problem messages (default stdout) */
	const char *device;	/* named by preen messages */
	unsigned int found, fixed, left, housekeeping;
	bool yes_to_all;	/* interactive "a" */
	bool cancelled;		/* interactive "q" or EOF */
	bool preen_halted;	/* -p met a problem it may not fix */
	bool fatal;
	bool reboot;		/* fixes touched a mounted root */
	bool operational_error;	/* I/O or internal failure */
	/* the checked device's count of failed reads (fsf_dev.read_errors;
	 * may be NULL): once one failed, nothing more is repaired, since a
	 * structure that could not be read must not be "repaired" from
	 * what was readable, and the exit status says errors are left */
	const unsigned int *read_errors;
	bool read_halted;	/* said so */
	/* why no rebuild can be made (NULL: it can): a problem whose
	 * prompt is Rebuild is then found and left, with this reason,
	 * instead of a REBUILT that a later failure takes back */
	const char *no_rebuild;
	struct fsf_fix_record *records;
	size_t nrecords, cap;
};

void fsf_fix_init(struct fsf_fix_ctx *c, const struct fsf_log *log,
		  enum fsf_fix_mode mode, const char *device);
void fsf_fix_free(struct fsf_fix_ctx *c);
/*
 * Report problem P about OBJECT ("MFT record 42 (/a/b)", may be NULL) with
 * the message's printf arguments.  Returns true when the caller must fix
 * it; it then counts as fixed unless fsf_fix_failed() follows.
 */
bool fsf_fix_ask(struct fsf_fix_ctx *c, const struct fsf_problem *p,
		 const char *object, ...);
/* The fix the caller just attempted did not work. */
void fsf_fix_failed(struct fsf_fix_ctx *c);
/* Fixes of OBJECT with prompt PROMPT accepted earlier and carried out
 * later (e.g. a directory index marked for a rebuild at the end) did not
 * work after all: each counts as failed, not fixed.  Returns how many. */
unsigned int fsf_fix_failed_object(struct fsf_fix_ctx *c, const char *object,
				   enum fsf_prompt prompt);
/* The answer to the last problem reported, when it was "fix" (else -1):
 * a caller that carries the fix out later keeps it, and if that fails
 * hands it to fsf_fix_failed_at(), which counts it as failed, not fixed
 * (once; returns 1 when it did). */
long fsf_fix_promise(const struct fsf_fix_ctx *c);
unsigned int fsf_fix_failed_at(struct fsf_fix_ctx *c, long answer);
/* fsck(8) exit status from what happened. */
int fsf_fix_exit_code(const struct fsf_fix_ctx *c);
/* Everything found and done, as one JSON object. */
void fsf_fix_json(const struct fsf_fix_ctx *c, FILE *f);

#endif
