// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Where xfs_healer's lines go.  Run by systemd with stderr on the journal
 * (JOURNAL_STREAM names stderr's device:inode), each line is a journal
 * entry with a priority and the event's fields (XFS_HEALER_DOMAIN=, ...),
 * so `journalctl -u xfs_healer@...` can filter on them.  Otherwise events
 * and informational lines (repairs, mode) go to stdout, in order, and
 * warnings and errors to stderr; with --json only JSON goes to stdout.
 * Lines are built in growing strings: never truncated, whatever the length
 * of the mount point.  Outside text in them is escaped by the callers.
 */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "healer.h"

bool hm_stderr_is_journal(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2)
		return false;
	if (fstat(2, &st) < 0)
		return false;
	return (unsigned long long)st.st_dev == dev &&
	       (unsigned long long)st.st_ino == ino;
}

void hm_say(const struct hm_out *o, enum hm_prio prio, const char *fmt, ...)
{
	char *line;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&line, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (o->journal) {
		hm_journal((int)prio, line, NULL);
	} else {
		if (prio <= HM_WARNING)
			fflush(stdout);	/* keep the order with the events */
		if (prio <= HM_ERR)
			fprintf(stderr, "%s: error: %s\n", o->log->prog, line);
		else if (prio == HM_WARNING)
			fprintf(stderr, "%s: warning: %s\n", o->log->prog, line);
		else if (o->json)
			fprintf(stderr, "%s: %s\n", o->log->prog, line);
		else
			/* in line with the events, so that the order is kept */
			printf("%s\n", line);
	}
	free(line);
}

void hm_emit_event(const struct hm_out *o,
		   const struct xfs_health_monitor_event *ev, const char *label,
		   const char *path)
{
	struct hm_str line = { 0 };

	if (o->quiet)
		return;
	if (o->json) {
		hm_format_json(ev, label, path, &line);
		/* one call: workers never interleave halves of lines */
		printf("%s\n", hm_str_get(&line));
		hm_str_free(&line);
		return;
	}
	hm_format_text(ev, label, path, &line);
	if (o->journal) {
		int prio = HM_INFO;
		char dom[16], typ[16];
		const char *kv[] = {
			"XFS_HEALER_MOUNT", label, "XFS_HEALER_DOMAIN", dom,
			"XFS_HEALER_TYPE", typ, NULL,
		};

		if (ev->type == XFS_HM_TYPE_SICK ||
		    ev->type == XFS_HM_TYPE_CORRUPT ||
		    ev->type == XFS_HM_TYPE_LOST ||
		    ev->type == XFS_HM_TYPE_SHUTDOWN ||
		    ev->type >= XFS_HM_TYPE_MEDIA_ERROR)
			prio = HM_WARNING;
		snprintf(dom, sizeof(dom), "%" PRIu32, ev->domain);
		snprintf(typ, sizeof(typ), "%" PRIu32, ev->type);
		hm_journal(prio, hm_str_get(&line), kv);
	} else {
		printf("%s\n", hm_str_get(&line));
	}
	hm_str_free(&line);
}
