/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Messages shared by every fsforge tool.
 *
 * A tool owns one struct fsf_log and hands a const pointer to the libraries,
 * so the libraries keep no global state: the prefix and the verbosity travel
 * with each call.  Every line goes to stderr except fsf_out(), which is the
 * tool's normal report on stdout.
 */
#ifndef FSFORGE_LOG_H
#define FSFORGE_LOG_H

#include <stdarg.h>

enum fsf_level {
	FSF_QUIET = 0,		/* errors only */
	FSF_NORMAL = 1,		/* plus warnings and the final report */
	FSF_VERBOSE = 2,	/* plus informational lines */
	FSF_DEBUG = 3,
};

struct fsf_log {
	const char *prog;	/* prefix of every line, e.g. "mkfs.erofs" */
	int level;		/* enum fsf_level */
};

#define FSF_PRINTF(a, b) __attribute__((format(printf, a, b)))

void fsf_err(const struct fsf_log *log, const char *fmt, ...) FSF_PRINTF(2, 3);
void fsf_warn(const struct fsf_log *log, const char *fmt, ...) FSF_PRINTF(2, 3);
void fsf_info(const struct fsf_log *log, const char *fmt, ...) FSF_PRINTF(2, 3);
void fsf_debug(const struct fsf_log *log, const char *fmt, ...) FSF_PRINTF(2, 3);
/* the tool's own report: stdout, suppressed by --quiet */
void fsf_out(const struct fsf_log *log, const char *fmt, ...) FSF_PRINTF(2, 3);

#endif
