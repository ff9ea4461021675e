// SPDX-License-Identifier: GPL-2.0-or-later
/* Message output for all fsforge tools: one line per call, prefixed. */
#include "config.h"

#include <stdio.h>

#include "fsforge/log.h"

__attribute__((format(printf, 4, 0)))
static void emit(FILE *f, const struct fsf_log *log, const char *tag,
		 const char *fmt, va_list ap)
{
	/* build the line first so that threads never interleave halves */
	char line[4096];
	int n = snprintf(line, sizeof(line), "%s: %s", log->prog, tag);

	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	fprintf(f, "%s\n", line);
}

#define DEFINE_LEVEL(fn, minlevel, stream, tag)				\
void fn(const struct fsf_log *log, const char *fmt, ...)		\
{									\
	va_list ap;							\
	if (log->level < (minlevel))					\
		return;							\
	va_start(ap, fmt);						\
	emit(stream, log, tag, fmt, ap);				\
	va_end(ap);							\
}

DEFINE_LEVEL(fsf_err, FSF_QUIET, stderr, "error: ")
DEFINE_LEVEL(fsf_warn, FSF_NORMAL, stderr, "warning: ")
DEFINE_LEVEL(fsf_info, FSF_VERBOSE, stderr, "")
DEFINE_LEVEL(fsf_debug, FSF_DEBUG, stderr, "debug: ")

void fsf_out(const struct fsf_log *log, const char *fmt, ...)
{
	va_list ap;

	if (log->level < FSF_NORMAL)
		return;
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
}
