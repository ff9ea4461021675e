// SPDX-License-Identifier: GPL-2.0-or-later
/* The problem-table mechanism in every mode: answers, messages, counters,
 * fsck(8) exit codes and the JSON report.  argv[1]: where to write a JSON
 * report for the caller to validate with an independent parser. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fsforge/problem.h"
#include "tap.h"

static const struct fsf_problem PR_BITMAP = {
	0x040001, "cluster_bitmap_differs", "cluster bitmap differs at %u",
	FSF_PROMPT_FIX, FSF_PR_PREEN_OK };
static const struct fsf_problem PR_INDEX = {
	0x030002, "index_order", "index entry \"%s\" out of order",
	FSF_PROMPT_REBUILD, 0 };
static const struct fsf_problem PR_DIRTY = {
	0x050001, "volume_dirty", "volume is marked dirty",
	FSF_PROMPT_CLEAR, FSF_PR_PREEN_OK | FSF_PR_NOT_ERROR };
static const struct fsf_problem PR_NOFIX = {
	0x030009, "index_stale", "entry \"%s\" is stale",
	FSF_PROMPT_REBUILD, FSF_PR_NO_FIX };
static const struct fsf_problem PR_NOTE = {
	0x000001, "note", "checking %s", FSF_PROMPT_NONE, 0 };

static const struct fsf_log quiet = { "test", FSF_QUIET };

struct run {
	struct fsf_fix_ctx c;
	char *outbuf;
	size_t outlen;
	FILE *in;
};

static void start(struct run *r, enum fsf_fix_mode m, const char *answers)
{
	fsf_fix_init(&r->c, &quiet, m, "/dev/test");
	r->c.out = open_memstream(&r->outbuf, &r->outlen);
	r->in = fmemopen((void *)answers, strlen(answers) + 1, "r");
	r->c.in = r->in;
}

static void stop(struct run *r)
{
	fclose(r->c.out);
	fclose(r->in);
	fsf_fix_free(&r->c);
	free(r->outbuf);
}

int main(int argc, char **argv)
{
	struct run r;
	bool a, b;

	start(&r, FSF_MODE_NO, "");
	a = fsf_fix_ask(&r.c, &PR_BITMAP, NULL, 7u);
	fflush(r.c.out);
	ok(!a && strstr(r.outbuf, "cluster bitmap differs at 7.  Fix? no"),
	   "-n answers no and says so");
	ok(fsf_fix_exit_code(&r.c) == FSF_EXIT_UNCORRECTED, "-n with a problem exits 4");
	stop(&r);

	start(&r, FSF_MODE_YES, "");
	a = fsf_fix_ask(&r.c, &PR_INDEX, "MFT record 5 (/)", "b");
	fflush(r.c.out);
	ok(a && strstr(r.outbuf, "MFT record 5 (/): index entry \"b\" out of order.  Rebuild? yes"),
	   "-y answers yes, names the object");
	ok(fsf_fix_exit_code(&r.c) == FSF_EXIT_FIXED, "-y exits 1 after fixing");
	fsf_fix_failed(&r.c);
	ok(fsf_fix_exit_code(&r.c) == FSF_EXIT_UNCORRECTED, "a failed fix is left uncorrected");
	stop(&r);

	start(&r, FSF_MODE_PREEN, "");
	a = fsf_fix_ask(&r.c, &PR_BITMAP, NULL, 9u);
	b = fsf_fix_ask(&r.c, &PR_INDEX, "MFT record 30", "x");
	fflush(r.c.out);
	ok(a && strstr(r.outbuf, "/dev/test: cluster bitmap differs at 9. FIXED."),
	   "-p fixes a PREEN_OK problem with a one-line message");
	ok(!b && strstr(r.outbuf, "UNEXPECTED INCONSISTENCY; RUN fsck MANUALLY"),
	   "-p stops at a problem it may not fix");
	ok(!fsf_fix_ask(&r.c, &PR_BITMAP, NULL, 10u), "and fixes nothing after that");
	ok(fsf_fix_exit_code(&r.c) == (FSF_EXIT_FIXED | FSF_EXIT_UNCORRECTED),
	   "exit code is the OR of fixed (1) and uncorrected (4)");
	stop(&r);

	start(&r, FSF_MODE_PREEN, "");
	fsf_fix_ask(&r.c, &PR_DIRTY, NULL);
	ok(fsf_fix_exit_code(&r.c) == 0, "housekeeping (clearing the dirty flag) exits 0");
	stop(&r);

	start(&r, FSF_MODE_YES, "");
	a = fsf_fix_ask(&r.c, &PR_NOFIX, "dir 5", "x");
	fflush(r.c.out);
	ok(!a && strstr(r.outbuf, "dir 5: entry \"x\" is stale.  Not repaired") &&
	   fsf_fix_exit_code(&r.c) == FSF_EXIT_UNCORRECTED,
	   "a problem with no repair yet is reported and left, even with -y");
	stop(&r);

	start(&r, FSF_MODE_NO, "");
	fsf_fix_ask(&r.c, &PR_DIRTY, NULL);
	ok(fsf_fix_exit_code(&r.c) == 0, "declining housekeeping under -n exits 0");
	stop(&r);

	start(&r, FSF_MODE_INTERACTIVE, "y\nn\n\nmaybe\nn\na\n");
	ok(fsf_fix_ask(&r.c, &PR_BITMAP, NULL, 1u), "interactive y");
	ok(!fsf_fix_ask(&r.c, &PR_BITMAP, NULL, 2u), "interactive n");
	ok(fsf_fix_ask(&r.c, &PR_BITMAP, NULL, 3u), "interactive empty line takes the default");
	ok(!fsf_fix_ask(&r.c, &PR_BITMAP, NULL, 4u), "an unclear answer is asked again");
	ok(fsf_fix_ask(&r.c, &PR_BITMAP, NULL, 5u) && fsf_fix_ask(&r.c, &PR_INDEX, NULL, "z"),
	   "a answers yes to this and every later question");
	stop(&r);

	/* a fix carried out later (a rebuild at the end) that fails: the
	 * answer kept when it was given counts failed, once */
	start(&r, FSF_MODE_YES, "");
	fsf_fix_ask(&r.c, &PR_BITMAP, "dir 7", 1u);
	{
		long promise = fsf_fix_promise(&r.c);

		fsf_fix_ask(&r.c, &PR_INDEX, "dir 8", "b");
		ok(promise == 0 && fsf_fix_promise(&r.c) == 1,
		   "a fix answered yes can be kept as a promise");
		ok(fsf_fix_failed_at(&r.c, promise) == 1 && fsf_fix_failed_at(&r.c, promise) == 0 &&
		   r.c.found == 2 && r.c.fixed == 1 && r.c.left == 1,
		   "a promise that failed counts left, not fixed, once");
		ok(fsf_fix_exit_code(&r.c) == (FSF_EXIT_FIXED | FSF_EXIT_UNCORRECTED),
		   "the fix kept and the one failed: exit 5");
		ok(fsf_fix_failed_object(&r.c, "dir 8", FSF_PROMPT_REBUILD) == 1 &&
		   r.c.fixed == 0 && r.c.left == 2 && fsf_fix_exit_code(&r.c) == FSF_EXIT_UNCORRECTED,
		   "failed by object and prompt: nothing fixed, exit 4");
	}
	fsf_fix_ask(&r.c, &PR_NOFIX, "dir 9", "c");
	ok(fsf_fix_promise(&r.c) == -1, "an answer that is not a fix is no promise");
	stop(&r);

	start(&r, FSF_MODE_INTERACTIVE, "q\n");
	ok(!fsf_fix_ask(&r.c, &PR_BITMAP, NULL, 1u) && r.c.cancelled, "q cancels");
	ok(fsf_fix_exit_code(&r.c) & FSF_EXIT_CANCELLED, "cancelled sets exit bit 32");
	stop(&r);

	{
		/* the device failed a read: no mode repairs anything after it */
		unsigned int errs = 0;

		start(&r, FSF_MODE_PREEN, "");
		r.c.read_errors = &errs;
		ok(fsf_fix_ask(&r.c, &PR_BITMAP, NULL, 1u), "preen repairs before a read error");
		errs = 1;
		ok(!fsf_fix_ask(&r.c, &PR_BITMAP, NULL, 2u) && !fsf_fix_ask(&r.c, &PR_DIRTY, NULL),
		   "nothing is repaired after a read error, housekeeping neither");
		fflush(r.c.out);
		ok(strstr(r.outbuf, "the device fails reads") && strstr(r.outbuf, "Not repaired (read errors)"),
		   "a read error's refusal is said");
		ok(r.c.fixed == 1 && r.c.left == 1 && !r.c.preen_halted, "counted as left, preen not halted");
		ok(fsf_fix_exit_code(&r.c) == (FSF_EXIT_FIXED | FSF_EXIT_UNCORRECTED), "a read error exits 4 (+1)");
		stop(&r);
		start(&r, FSF_MODE_YES, "");
		r.c.read_errors = &errs;
		ok(!fsf_fix_ask(&r.c, &PR_BITMAP, NULL, 3u), "-y repairs nothing after a read error");
		stop(&r);
		start(&r, FSF_MODE_NO, "");
		r.c.read_errors = &errs;
		ok(fsf_fix_exit_code(&r.c) == FSF_EXIT_UNCORRECTED, "a read error alone exits 4");
		stop(&r);
	}

	/* no rebuild possible: a Rebuild prompt is left once, with the
	 * reason, never REBUILT; other prompts go on */
	start(&r, FSF_MODE_PREEN, "");
	r.c.no_rebuild = "$UpCase is unreadable";
	ok(!fsf_fix_ask(&r.c, &PR_INDEX, "dir", "corrupt") && fsf_fix_ask(&r.c, &PR_BITMAP, NULL, 4u),
	   "no rebuild: a Rebuild prompt is left, a Fix one repaired");
	fflush(r.c.out);
	ok(strstr(r.outbuf, "Not rebuilt ($UpCase is unreadable).") && !strstr(r.outbuf, "REBUILT"),
	   "no rebuild: the reason said, REBUILT never");
	ok(r.c.found == 2 && r.c.fixed == 1 && r.c.left == 1 &&
	   fsf_fix_exit_code(&r.c) == (FSF_EXIT_FIXED | FSF_EXIT_UNCORRECTED),
	   "no rebuild: counted as left (exit 5)");
	stop(&r);

	start(&r, FSF_MODE_YES, "");
	fsf_fix_ask(&r.c, &PR_NOTE, NULL, "indexes");
	fsf_fix_ask(&r.c, &PR_INDEX, "dir \"q\\\"\"", "tab\there");
	ok(r.c.found == 1, "informational rows are not problems");
	if (argc > 1) {
		FILE *f = fopen(argv[1], "w");

		fsf_fix_json(&r.c, f);
		fclose(f);
	}
	stop(&r);
	return tap_done();
}
