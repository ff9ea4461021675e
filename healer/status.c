// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The status file for operators: <state dir>/<escaped mount>.json, the
 * mount point escaped as `systemd-escape --path` does ("/mnt/a b" ->
 * "mnt-a\x20b.json", "/" -> "-.json").  Counters since the daemon started,
 * written whole to a temporary file in the same directory and renamed over
 * the old one, so that a reader sees the old or the new status, never a
 * mix.  The file is left in place when the daemon ends, with "state" saying
 * so; the next daemon for the mount replaces it.  `xfs_healer --status`
 * prints it.
 *
 * The JSON is written one member per line; hm_status_show relies on that
 * (it reads only files this code wrote).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "healer.h"

char *hm_status_path(const char *dir, const char *mount)
{
	char esc[1024];
	char *p;

	if (hm_escape_path(mount, esc, sizeof(esc)) < 0)
		return NULL;
	if (asprintf(&p, "%s/%s.json", dir, esc) < 0)
		return NULL;
	return p;
}

static void iso_time(struct hm_str *s, const char *key, time_t t)
{
	struct tm tm;
	char buf[40];

	if (!t || !gmtime_r(&t, &tm) ||
	    !strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm))
		hm_str_add(s, "  \"%s\": null,\n", key);
	else
		hm_str_add(s, "  \"%s\": \"%s\",\n", key, buf);
}

void hm_status_format(const struct hm_status *st, struct hm_str *s)
{
	bool first = true;

	hm_str_add(s, "{\n  \"version\": 1,\n  \"mount\": ");
	hm_json_str(s, st->label ? st->label : "");
	hm_str_add(s, ",\n  \"pid\": %ld,\n  \"state\": \"%s\",\n",
		   (long)st->pid, st->state ? st->state : "running");
	hm_str_add(s, "  \"mode\": \"%s\",\n", st->mode ? st->mode : "");
	iso_time(s, "started", st->started);
	iso_time(s, "updated", time(NULL));
	hm_str_add(s, "  \"events\": %" PRIu64 ",\n", st->events);
	hm_str_add(s, "  \"events_by_type\": {");
	for (unsigned int t = 0; t <= HM_STATUS_TYPES; t++) {
		const char *name = t < HM_STATUS_TYPES ? hm_type_name(t) :
				   "unknown";

		if (!st->by_type[t] || !name)
			continue;
		hm_str_add(s, "%s\"%s\": %" PRIu64, first ? " " : ", ", name,
			   st->by_type[t]);
		first = false;
	}
	hm_str_add(s, "%s},\n", first ? "" : " ");
	hm_str_add(s, "  \"lost_events\": %" PRIu64 ",\n", st->lost);
	hm_str_add(s, "  \"lost_in_queue\": %" PRIu64 ",\n", st->lost_queue);
	hm_str_add(s, "  \"repairs_requested\": %" PRIu64 ",\n",
		   st->repairs_requested);
	hm_str_add(s, "  \"repairs_done\": %" PRIu64 ",\n", st->repairs_done);
	hm_str_add(s, "  \"repairs_not_needed\": %" PRIu64 ",\n",
		   st->repairs_clean);
	hm_str_add(s, "  \"repairs_failed\": %" PRIu64 ",\n",
		   st->repairs_failed);
	hm_str_add(s, "  \"repairs_skipped\": %" PRIu64 ",\n",
		   st->repairs_skipped);
	hm_str_add(s, "  \"rechecks_started\": %" PRIu64 ",\n",
		   st->rechecks);
	hm_str_add(s, "  \"rechecks_suppressed\": %" PRIu64 ",\n",
		   st->rechecks_suppressed);
	if (st->last_event_ns)
		hm_str_add(s, "  \"last_event_time_ns\": %" PRIu64 ",\n",
			   st->last_event_ns);
	else
		hm_str_add(s, "  \"last_event_time_ns\": null,\n");
	iso_time(s, "last_event_seen", st->last_event_seen);
	/* last member: no trailing comma */
	hm_str_add(s, "  \"shut_down\": %s\n}\n",
		   st->shut_down ? "true" : "false");
}

int hm_status_write(const char *path, const struct hm_status *st)
{
	struct hm_str s = { 0 };
	char *tmp = NULL, *slash;
	int fd = -1, err = 0;
	size_t off = 0;

	hm_status_format(st, &s);
	if (s.oom || !s.p) {
		hm_str_free(&s);
		return -ENOMEM;
	}
	/* the directory: created if missing (e.g. /run/xfs_healer) */
	slash = strrchr(path, '/');
	if (slash && slash != path) {
		char *dir = strndup(path, (size_t)(slash - path));

		if (dir && mkdir(dir, 0755) < 0 && errno != EEXIST)
			err = -errno;
		free(dir);
		if (err)
			goto out;
	}
	if (asprintf(&tmp, "%s.XXXXXX", path) < 0) {
		tmp = NULL;
		err = -ENOMEM;
		goto out;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		free(tmp);
		tmp = NULL;
		goto out;
	}
	/* readable by operators whatever the umask (the unit's is 7777) */
	if (fchmod(fd, 0644) < 0)
		err = -errno;
	while (!err && off < s.len) {
		ssize_t n = write(fd, s.p + off, s.len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			err = n < 0 ? -errno : -EIO;
		else
			off += (size_t)n;
	}
	if (close(fd) < 0 && !err)
		err = -errno;
	/* no fsync: /run is memory, and a stale status after a crash is
	 * as good as none */
	if (!err && rename(tmp, path) < 0)
		err = -errno;
	if (err)
		unlink(tmp);
out:
	free(tmp);
	hm_str_free(&s);
	return err;
}

/* the display name of a member, NULL to leave it out */
static const char *show_name(const char *key)
{
	static const char *const names[][2] = {
		{ "mount", "mount point" }, { "pid", "process" },
		{ "state", "state" }, { "mode", "mode" },
		{ "started", "started" }, { "updated", "updated" },
		{ "events", "events" }, { "events_by_type", "by type" },
		{ "lost_events", "lost events" },
		{ "lost_in_queue", "  of which in the queue" },
		{ "repairs_requested", "repairs requested" },
		{ "repairs_done", "repairs done" },
		{ "repairs_not_needed", "repairs not needed" },
		{ "repairs_failed", "repairs failed" },
		{ "repairs_skipped", "repairs skipped" },
		{ "rechecks_started", "full re-checks" },
		{ "rechecks_suppressed", "re-checks suppressed" },
		{ "last_event_seen", "last event" },
		{ "shut_down", "shut down" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(names[i][0], key))
			return names[i][1];
	return NULL;
}

int hm_status_show(const char *path, bool json, FILE *out)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	long pid = 0;
	bool running = false;

	if (!f)
		return -errno;
	while ((n = getline(&line, &cap, f)) > 0) {
		char *key, *val, *end;
		const char *name;

		if (json) {
			fputs(line, out);
			continue;
		}
		/* `  "key": value,` */
		if (strncmp(line, "  \"", 3))
			continue;
		key = line + 3;
		end = strstr(key, "\": ");
		if (!end)
			continue;
		*end = '\0';
		val = end + 3;
		val[strcspn(val, "\n")] = '\0';
		if (*val && val[strlen(val) - 1] == ',')
			val[strlen(val) - 1] = '\0';
		if (!strcmp(key, "pid"))
			pid = strtol(val, NULL, 10);
		if (!strcmp(key, "state"))
			running = !strcmp(val, "\"running\"");
		name = show_name(key);
		if (!name)
			continue;
		/* strings: the quotes off (the content stays escaped) */
		if (*val == '"' && strlen(val) >= 2) {
			val++;
			val[strlen(val) - 1] = '\0';
		} else if (*val == '{') {
			/* { "sick": 3, "lost": 1 } -> sick 3, lost 1 */
			char *d = val;

			for (char *p = val; *p; p++)
				if (*p != '{' && *p != '}' && *p != '"' &&
				    !(*p == ':'))
					*d++ = *p;
			*d = '\0';
			while (*val == ' ')
				val++;
			if (d > val && d[-1] == ' ')
				d[-1] = '\0';
			if (!*val)
				val = "none";
		} else if (!strcmp(val, "null")) {
			val = "never";
		}
		fprintf(out, "%-24s %s%s\n", name, val,
			!strcmp(key, "state") && running && pid > 0 &&
			kill((pid_t)pid, 0) < 0 && errno == ESRCH ?
			" (but the process is gone: it was killed)" : "");
	}
	free(line);
	fclose(f);
	return 0;
}
