// SPDX-License-Identifier: GPL-2.0-or-later
/* The one place that decides what each fsck mode does with a problem. */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fsforge/problem.h"

struct fsf_fix_record {
	const struct fsf_problem *p;
	char *object;
	char *message;
	enum { REC_INFO, REC_FIXED, REC_NOT_FIXED, REC_FAILED } action;
};

static const char *const prompt_word[] = {
	[FSF_PROMPT_NONE] = "",
	[FSF_PROMPT_FIX] = "Fix",
	[FSF_PROMPT_REPAIR] = "Repair",
	[FSF_PROMPT_CLEAR] = "Clear",
	[FSF_PROMPT_REBUILD] = "Rebuild",
	[FSF_PROMPT_RECONNECT] = "Reconnect",
	[FSF_PROMPT_RELOCATE] = "Relocate",
	[FSF_PROMPT_RESET] = "Reset",
};

/* what -p prints once it has done it */
static const char *const done_word[] = {
	[FSF_PROMPT_NONE] = "",
	[FSF_PROMPT_FIX] = "FIXED",
	[FSF_PROMPT_REPAIR] = "REPAIRED",
	[FSF_PROMPT_CLEAR] = "CLEARED",
	[FSF_PROMPT_REBUILD] = "REBUILT",
	[FSF_PROMPT_RECONNECT] = "RECONNECTED",
	[FSF_PROMPT_RELOCATE] = "RELOCATED",
	[FSF_PROMPT_RESET] = "RESET",
};

void fsf_fix_init(struct fsf_fix_ctx *c, const struct fsf_log *log,
		  enum fsf_fix_mode mode, const char *device)
{
	memset(c, 0, sizeof(*c));
	c->log = log;
	c->mode = mode;
	c->in = stdin;
	c->out = stdout;
	c->device = device ? device : "";
}

void fsf_fix_free(struct fsf_fix_ctx *c)
{
	for (size_t i = 0; i < c->nrecords; i++) {
		free(c->records[i].object);
		free(c->records[i].message);
	}
	free(c->records);
	c->records = NULL;
	c->nrecords = c->cap = 0;
}

static struct fsf_fix_record *add_record(struct fsf_fix_ctx *c,
					 const struct fsf_problem *p,
					 const char *object, const char *msg)
{
	struct fsf_fix_record *r;

	if (c->nrecords == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		struct fsf_fix_record *g = realloc(c->records, cap * sizeof(*g));

		if (!g)
			return NULL;
		c->records = g;
		c->cap = cap;
	}
	r = &c->records[c->nrecords++];
	r->p = p;
	r->object = object ? strdup(object) : NULL;
	r->message = strdup(msg);
	r->action = REC_INFO;
	return r;
}

/* Interactive: y, n, a (yes to all), q (quit); empty line = default. */
static bool ask_terminal(struct fsf_fix_ctx *c, const struct fsf_problem *p)
{
	bool def = !(p->flags & FSF_PR_NO_DEFAULT);
	char line[64];

	for (;;) {
		fprintf(c->out, "%s<%c>? ", prompt_word[p->prompt],
			def ? 'y' : 'n');
		fflush(c->out);
		if (!fgets(line, sizeof(line), c->in)) {
			c->cancelled = true;	/* EOF: nobody to ask */
			fputs("cancelled\n", c->out);
			return false;
		}
		switch (line[0]) {
		case '\n': return def;
		case 'y': case 'Y': return true;
		case 'n': case 'N': return false;
		case 'a': case 'A': c->yes_to_all = true; return true;
		case 'q': case 'Q': c->cancelled = true; return false;
		}
		fputs("Please answer y (yes), n (no), a (yes to all) or q (quit).\n",
		      c->out);
	}
}

bool fsf_fix_ask(struct fsf_fix_ctx *c, const struct fsf_problem *p,
		 const char *object, ...)
{
	struct fsf_fix_record *r;
	char msg[1024];
	bool fix = false;
	va_list ap;

	va_start(ap, object);
	/* the format is a row of the caller's const problem table */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	vsnprintf(msg, sizeof(msg), p->msg, ap);
#pragma GCC diagnostic pop
	va_end(ap);
	r = add_record(c, p, object, msg);
	if (!r)
		c->operational_error = true;
	if (p->flags & FSF_PR_FATAL)
		c->fatal = true;
	if (p->prompt == FSF_PROMPT_NONE) {
		fprintf(c->out, "%s%s%s\n", object ? object : "",
			object ? ": " : "", msg);
		/* nothing to ask, but an error all the same: found and left */
		if (p->flags & (FSF_PR_FATAL | FSF_PR_NO_FIX)) {
			c->found++;
			c->left++;
			if (r)
				r->action = REC_NOT_FIXED;
		}
		return false;
	}
	c->found++;
	if (p->flags & FSF_PR_NO_FIX) {
		/* found and left: say so instead of asking */
		fprintf(c->out, "%s%s%s%s%s.  Not repaired (no repair for this yet).\n",
			c->mode == FSF_MODE_PREEN ? c->device : "",
			c->mode == FSF_MODE_PREEN ? ": " : "",
			object ? object : "", object ? ": " : "", msg);
		c->left++;
		if (r)
			r->action = REC_NOT_FIXED;
		return false;
	}
	if (c->read_errors && *c->read_errors && c->mode != FSF_MODE_NO) {
		/* found and left, as in -n: the device fails reads */
		if (!c->read_halted)
			fprintf(c->out, "%s: the device fails reads: nothing more is repaired (copy it, e.g. with ddrescue, and check the copy)\n",
				c->device);
		c->read_halted = true;
		fprintf(c->out, "%s%s%s.  Not repaired (read errors).\n",
			object ? object : "", object ? ": " : "", msg);
	} else if (c->no_rebuild && p->prompt == FSF_PROMPT_REBUILD) {
		fprintf(c->out, "%s%s%s%s%s.  Not rebuilt (%s).\n",
			c->mode == FSF_MODE_PREEN ? c->device : "",
			c->mode == FSF_MODE_PREEN ? ": " : "",
			object ? object : "", object ? ": " : "", msg, c->no_rebuild);
	} else if (c->cancelled || c->preen_halted) {
		fix = false;
	} else if (c->mode == FSF_MODE_PREEN) {
		if (p->flags & FSF_PR_PREEN_OK) {
			if (!(p->flags & FSF_PR_PREEN_NOMSG))
				fprintf(c->out, "%s: %s%s%s. %s.\n", c->device,
					object ? object : "", object ? ": " : "",
					msg, done_word[p->prompt]);
			fix = true;
		} else {
			fprintf(c->out, "%s: %s%s%s.\n\n%s: UNEXPECTED INCONSISTENCY; RUN fsck MANUALLY.\n\t(i.e., without -a or -p options)\n",
				c->device, object ? object : "",
				object ? ": " : "", msg, c->device);
			c->preen_halted = true;
		}
	} else {
		fprintf(c->out, "%s%s%s.  ", object ? object : "",
			object ? ": " : "", msg);
		if (c->mode == FSF_MODE_NO) {
			fprintf(c->out, "%s? no\n", prompt_word[p->prompt]);
		} else if (c->mode == FSF_MODE_YES || c->yes_to_all) {
			fprintf(c->out, "%s? yes\n", prompt_word[p->prompt]);
			fix = true;
		} else {
			fix = ask_terminal(c, p);
		}
	}
	if (fix) {
		if (p->flags & FSF_PR_NOT_ERROR)
			c->housekeeping++;
		else
			c->fixed++;
	} else if (!(p->flags & FSF_PR_NOT_ERROR)) {
		c->left++;	/* declined housekeeping leaves nothing wrong */
	}
	if (r)
		r->action = fix ? REC_FIXED : REC_NOT_FIXED;
	return fix;
}

/* record R's fix, counted as made, was not: failed, left */
static unsigned int fail_record(struct fsf_fix_ctx *c, struct fsf_fix_record *r)
{
	if (r->action != REC_FIXED)
		return 0;
	r->action = REC_FAILED;
	if (r->p->flags & FSF_PR_NOT_ERROR)
		c->housekeeping--;
	else
		c->fixed--;
	c->left++;
	return 1;
}

void fsf_fix_failed(struct fsf_fix_ctx *c)
{
	if (c->nrecords)
		fsf_fix_failed_at(c, (long)c->nrecords - 1);
}

unsigned int fsf_fix_failed_object(struct fsf_fix_ctx *c, const char *object,
				   enum fsf_prompt prompt)
{
	unsigned int n = 0;

	for (size_t i = 0; i < c->nrecords; i++) {
		struct fsf_fix_record *r = &c->records[i];

		if (r->p->prompt != prompt || !r->object || !object ||
		    strcmp(r->object, object))
			continue;
		n += fail_record(c, r);
	}
	return n;
}

long fsf_fix_promise(const struct fsf_fix_ctx *c)
{
	if (!c->nrecords || c->records[c->nrecords - 1].action != REC_FIXED)
		return -1;
	return (long)c->nrecords - 1;
}

unsigned int fsf_fix_failed_at(struct fsf_fix_ctx *c, long answer)
{
	if (answer < 0 || (size_t)answer >= c->nrecords)
		return 0;
	return fail_record(c, &c->records[answer]);
}

int fsf_fix_exit_code(const struct fsf_fix_ctx *c)
{
	int code = 0;

	if (c->operational_error)
		code |= FSF_EXIT_ERROR;
	if (c->cancelled)
		code |= FSF_EXIT_CANCELLED;
	if (c->left || c->preen_halted || c->fatal ||
	    (c->read_errors && *c->read_errors))
		code |= FSF_EXIT_UNCORRECTED;
	if (c->fixed)
		code |= c->reboot ? FSF_EXIT_REBOOT | FSF_EXIT_FIXED : FSF_EXIT_FIXED;
	return code;
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch == '\n')
			fputs("\\n", f);
		else if (ch == '\t')
			fputs("\\t", f);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

void fsf_fix_json(const struct fsf_fix_ctx *c, FILE *f)
{
	static const char *const action[] = { "info", "fixed", "not fixed",
					      "fix failed" };
	static const char *const mode[] = { "interactive", "preen", "no", "yes" };

	fputs("{\"device\":", f);
	json_str(f, c->device);
	fprintf(f, ",\"mode\":\"%s\",\"found\":%u,\"fixed\":%u,\"left\":%u,"
		"\"exit_code\":%d,\"problems\":[", mode[c->mode], c->found,
		c->fixed + c->housekeeping, c->left, fsf_fix_exit_code(c));
	for (size_t i = 0; i < c->nrecords; i++) {
		const struct fsf_fix_record *r = &c->records[i];

		fprintf(f, "%s{\"code\":\"0x%06x\",\"id\":", i ? "," : "",
			r->p->code);
		json_str(f, r->p->id);
		fputs(",\"object\":", f);
		if (r->object)
			json_str(f, r->object);
		else
			fputs("null", f);
		fputs(",\"message\":", f);
		json_str(f, r->message);
		fprintf(f, ",\"action\":\"%s\"}", action[r->action]);
	}
	fputs("]}\n", f);
}
