// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * --exec HOOK: run an executable for each event, zedlet style, with the
 * event in its environment (XFS_HEALER_MOUNT, _DOMAIN, _TYPE, _TIME_NS,
 * _OBJECT, _MESSAGE, _JSON).  Event reading never waits for a hook: hooks
 * run in the background in their own process group, at most HM_HOOK_MAX at
 * a time (events beyond that are counted as skipped), are reaped without
 * blocking and killed (the whole group) when they pass their time limit.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "healer.h"

uint64_t hm_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void child(const char *path, const struct xfs_health_monitor_event *ev,
		  const char *label)
{
	char buf[2048], num[32];
	int fd;

	setpgid(0, 0);
	fd = open("/dev/null", O_RDONLY);
	if (fd >= 0 && fd != 0) {
		dup2(fd, 0);
		close(fd);
	}
	setenv("XFS_HEALER_MOUNT", label, 1);
	setenv("XFS_HEALER_DOMAIN", hm_domain_name(ev->domain) ?
	       hm_domain_name(ev->domain) : "unknown", 1);
	setenv("XFS_HEALER_TYPE", hm_type_name(ev->type) ?
	       hm_type_name(ev->type) : "unknown", 1);
	snprintf(num, sizeof(num), "%" PRIu64, ev->time_ns);
	setenv("XFS_HEALER_TIME_NS", num, 1);
	setenv("XFS_HEALER_OBJECT", hm_object_text(ev, buf, sizeof(buf)), 1);
	hm_format_text(ev, label, buf, sizeof(buf));
	setenv("XFS_HEALER_MESSAGE", buf, 1);
	hm_format_json(ev, label, buf, sizeof(buf));
	setenv("XFS_HEALER_JSON", buf, 1);
	execl(path, path, (char *)NULL);
	fprintf(stderr, "xfs_healer: cannot run hook %s: %s\n", path,
		strerror(errno));
	_exit(127);
}

void hm_hook_spawn(struct hm_hooks *h, const struct hm_out *o,
		   const struct xfs_health_monitor_event *ev, const char *label)
{
	pid_t pid;

	if (!h->path)
		return;
	hm_hook_reap(h, o);
	if (h->nr == HM_HOOK_MAX) {
		if (h->skipped++ == 0)
			hm_say(o, HM_WARNING, "%d hooks still running; skipping "
			       "hooks until one ends", HM_HOOK_MAX);
		return;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		hm_say(o, HM_WARNING, "cannot run hook %s: %s", h->path,
		       strerror(errno));
		return;
	}
	if (pid == 0)
		child(h->path, ev, label);
	/* also in the parent, so that a kill never misses the group */
	setpgid(pid, pid);
	h->pid[h->nr] = pid;
	h->deadline_ms[h->nr] = hm_now_ms() + (uint64_t)h->timeout_s * 1000;
	h->nr++;
}

static void drop(struct hm_hooks *h, unsigned int i)
{
	h->nr--;
	h->pid[i] = h->pid[h->nr];
	h->deadline_ms[i] = h->deadline_ms[h->nr];
}

int hm_hook_reap(struct hm_hooks *h, const struct hm_out *o)
{
	uint64_t now = hm_now_ms(), next = UINT64_MAX;
	unsigned int i = 0;
	int st;

	while (i < h->nr) {
		pid_t r = waitpid(h->pid[i], &st, WNOHANG);

		if (r == h->pid[i] || (r < 0 && errno == ECHILD)) {
			if (r > 0 && WIFEXITED(st) && WEXITSTATUS(st))
				hm_say(o, HM_WARNING, "hook %s exited with "
				       "status %d", h->path, WEXITSTATUS(st));
			else if (r > 0 && WIFSIGNALED(st))
				hm_say(o, HM_WARNING, "hook %s killed by "
				       "signal %d", h->path, WTERMSIG(st));
			drop(h, i);
			continue;
		}
		if (now >= h->deadline_ms[i]) {
			hm_say(o, HM_WARNING, "hook %s ran over %u s; killing "
			       "it", h->path, h->timeout_s);
			kill(-h->pid[i], SIGKILL);
			kill(h->pid[i], SIGKILL);
			/* reaped on the next pass, give it a moment */
			h->deadline_ms[i] = now + 1000;
		}
		if (h->deadline_ms[i] < next)
			next = h->deadline_ms[i];
		i++;
	}
	if (h->skipped && h->nr < HM_HOOK_MAX) {
		hm_say(o, HM_WARNING, "%" PRIu64 " events had no hook run",
		       h->skipped);
		h->skipped = 0;
	}
	if (!h->nr)
		return -1;
	return next > now ? (int)(next - now) : 0;
}

void hm_hook_drain(struct hm_hooks *h, const struct hm_out *o)
{
	while (h->nr) {
		int wait_ms = hm_hook_reap(h, o);

		if (wait_ms < 0)
			break;
		/* poll children at 20 ms steps, bounded by their deadlines */
		struct timespec ts = { 0, 20 * 1000000L };
		nanosleep(&ts, NULL);
	}
}
