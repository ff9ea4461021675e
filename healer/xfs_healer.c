// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * xfs_healer: watch one mounted XFS filesystem through the kernel's health
 * monitor, report every event, repair what the kernel reports as sick, and
 * hand lost events or failed repairs to the xfs_scrub service.  --replay
 * runs the same decoding and policy over a capture file instead.
 * Options follow xfsprogs' xfs_healer, plus --json, --exec, --replay and
 * --record.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "healer.h"

enum { EXIT_USAGE = 16 };

enum {
	OPT_EVERYTHING = 256, OPT_FOREGROUND, OPT_NO_AUTOFSCK, OPT_QUIET,
	OPT_REPAIR, OPT_SUPPORTED, OPT_JSON, OPT_EXEC, OPT_EXEC_TIMEOUT,
	OPT_REPLAY, OPT_RECORD, OPT_QUEUE, OPT_REPLAY_NOWAIT, OPT_NO_SCRUB_SVC,
	OPT_ALLOW_RISKY, OPT_KERNEL_RELEASE, OPT_RECHECK_INTERVAL,
	OPT_STATUS, OPT_STATE_DIR,
};

static const struct option long_opts[] = {
	{ "everything", no_argument, NULL, OPT_EVERYTHING },
	{ "foreground", no_argument, NULL, OPT_FOREGROUND },
	{ "no-autofsck", no_argument, NULL, OPT_NO_AUTOFSCK },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "repair", no_argument, NULL, OPT_REPAIR },
	{ "supported", no_argument, NULL, OPT_SUPPORTED },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "exec", required_argument, NULL, OPT_EXEC },
	{ "exec-timeout", required_argument, NULL, OPT_EXEC_TIMEOUT },
	{ "replay", required_argument, NULL, OPT_REPLAY },
	{ "record", required_argument, NULL, OPT_RECORD },
	{ "queue-events", required_argument, NULL, OPT_QUEUE },
	{ "replay-nowait", no_argument, NULL, OPT_REPLAY_NOWAIT },
	{ "no-scrub-service", no_argument, NULL, OPT_NO_SCRUB_SVC },
	{ "allow-risky-repairs", no_argument, NULL, OPT_ALLOW_RISKY },
	{ "kernel-release", required_argument, NULL, OPT_KERNEL_RELEASE },
	{ "recheck-interval", required_argument, NULL, OPT_RECHECK_INTERVAL },
	{ "status", no_argument, NULL, OPT_STATUS },
	{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
	{ "version", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fputs(
"Usage: xfs_healer [OPTIONS] MOUNTPOINT\n"
"       xfs_healer --replay FILE [OPTIONS] [LABEL]\n"
"       xfs_healer --status [--json] [--state-dir DIR] MOUNTPOINT\n"
"Watch the XFS filesystem mounted at MOUNTPOINT through the kernel's health\n"
"monitor (Linux 7.0+), report every event on one line, and repair the\n"
"metadata the kernel reports as sick when allowed.\n"
"\n"
"      --everything        also report healthy (good) events\n"
"      --foreground        one event-handling thread per online CPU\n"
"                          (default: one)\n"
"      --no-autofsck       ignore the filesystem's autofsck property:\n"
"                          repair only with --repair\n"
"      --repair            repair sick metadata as it is reported; on a\n"
"                          failed repair start the xfs_scrub@ service\n"
"      --allow-risky-repairs  also ask for repairs known to crash the\n"
"                          running kernel (see KERNEL HAZARDS in the manual)\n"
"      --kernel-release REL  judge kernel hazards for release REL instead\n"
"                          of the running kernel's (for --replay)\n"
"      --recheck-interval SEC  at most one full re-check per SEC seconds\n"
"                          (default 60); requests in between are counted\n"
"                          and one deferred re-check starts when it ends\n"
"      --no-scrub-service  never start xfs_scrub@: re-check every AG and\n"
"                          filesystem-wide object in-process instead (the\n"
"                          default when systemd is not running)\n"
"      --quiet             do not report every event\n"
"      --supported         exit 0 if the filesystem can send health\n"
"                          events, 1 if not\n"
"      --json              report events as one JSON object per line\n"
"      --exec HOOK         run HOOK for each event, the event in its\n"
"                          environment (XFS_HEALER_*); never waits for it\n"
"      --exec-timeout SEC  kill a hook after SEC seconds (default 30)\n"
"      --queue-events N    events held between the reader and the\n"
"                          workers (default 16384, 1 MiB); beyond that\n"
"                          events are counted as lost and re-checked\n"
"      --record FILE       also write the raw event stream to FILE\n"
"      --replay FILE       decode a recorded stream instead of a live\n"
"                          monitor; repairs are shown, not done\n"
"      --replay-nowait     replay as the kernel delivers: never wait for\n"
"                          the workers (a full queue loses events)\n"
"      --status            print the status of the healer of MOUNTPOINT\n"
"                          (counters since it started; --json: as is)\n"
"      --state-dir DIR     where status files are (default\n"
"                          $XFS_HEALER_STATE_DIR, else /run/xfs_healer;\n"
"                          a replay writes one only with this option or\n"
"                          the variable)\n"
"  -V, --version           print the version and exit\n"
"  -h, --help              print this help and exit\n"
"\n"
"Lost events always lead to a full re-check (xfs_scrub@), in every mode.\n"
"Without --repair or --no-autofsck the filesystem's autofsck property\n"
"decides: repair -> repair, check/optimize -> report, none -> exit; unset ->\n"
"report if the filesystem has rmapbt or parent pointers, else exit.\n"
"One thread reads events into a queue; workers report, repair and run\n"
"hooks.  SIGHUP is ignored.  Inode events name the file through parent\n"
"pointers when the filesystem has them (else \"ino N gen G\").\n"
"Exit status: 0 after unmount, SIGTERM or SIGINT; 1 on errors (also when\n"
"the event stream ends without an unmount event); 16 on usage\n"
"errors.\n", f);
}

/* everything xfs_healer knows; main() owns the only instance */
struct healer {
	struct fsf_log log;
	struct hm_out out;
	const char *path;		/* mount point (live) or label (replay) */
	char *label;			/* path escaped: for every line */
	const char *replay;
	const char *record;
	bool everything, repair, no_autofsck, supported, replay_nowait;
	bool no_scrub_service, allow_risky;
	const char *kernel_release;	/* for the hazard table */
	unsigned int nworkers;
	size_t queue_events;
	enum hm_mode mode;
	const char *mode_why;
	struct hm_fsinfo fsinfo;
	struct hm_handle handle;
	struct hm_hooks hooks;
	struct hm_capture rec;		/* --record, written by the reader */
	bool recording;
	struct hm_capture cap;		/* --replay source */
	int mfd;			/* live source: the monitor */
	struct hm_queue q;
	int wakefd;			/* main thread: workers done, deadlines */
	int stopfd;			/* reader: stop polling the monitor */
	int reader_status;		/* 1: the stream ended in an error */
	char *reader_err;		/* printed once the workers are done */
	uint64_t last_time_ns;		/* of the last event read */
	bool saw_unmount;		/* the reader queued the unmount */

	/* shared by the workers, under mu */
	pthread_mutex_t mu;
	unsigned int workers_left;
	uint64_t events;
	bool shut_down;			/* no repair can work any more */
	bool ro_said;			/* "read-only" said since the last repair */
	bool scrub_started;
	uint64_t scrub_time_ns;		/* event time of the last start */
	uint64_t scrub_suppressed;	/* requests since, by the rate limit */
	bool deferred_queued;		/* the deferred re-check is queued */
	uint64_t clock_ns;		/* latest event time handled ... */
	uint64_t clock_ms;		/* ... and hm_now_ms() then */
	uint64_t interval_ns;		/* --recheck-interval */
	struct hm_status st;		/* counters for the status file */
	bool st_dirty;			/* changed since the last write */
	bool st_woken;			/* main thread told of st_dirty */

	/* the status file: written by the main thread only */
	char *status_path;		/* NULL: none */
	uint64_t status_ms;		/* hm_now_ms() of the last write */
	bool status_warned;
};

/* one xfs_scrub@ start per minute of event time is plenty: a flood of
 * lost events or failed repairs must not flood systemd */
#define RECHECK_INTERVAL_S 60
#define NS_PER_S 1000000000ULL

static void wake_main(struct healer *h)
{
	uint64_t one = 1;

	if (write(h->wakefd, &one, sizeof(one)) < 0)
		(void)0;	/* an eventfd only fails on overflow */
}

static bool systemd_running(void)
{
	/* sd_booted(): systemd creates this directory when it is PID 1 */
	return access("/run/systemd/system", F_OK) == 0;
}

/*
 * The full re-check after lost events or a failed repair: the xfs_scrub@
 * service (xfs_scrub follows the autofsck property itself), or, without
 * systemd or with --no-scrub-service, the kernel's scrub of every AG and
 * filesystem-wide object in-process (repairing in repair mode).  At most
 * one per minute of event time; a suppressed request is said once per
 * minute and counted, the count given at the next start and at exit.
 */
static void start_full_scrub(struct healer *h, const char *why,
			     uint64_t time_ns)
{
	char unit[1200], msg[1400];
	uint64_t suppressed;
	bool say_suppressed = false, repair = h->mode == HM_MODE_REPAIR;

	pthread_mutex_lock(&h->mu);
	if (h->scrub_started && time_ns >= h->scrub_time_ns &&
	    time_ns - h->scrub_time_ns < h->interval_ns) {
		say_suppressed = h->scrub_suppressed++ == 0;
		h->st.rechecks_suppressed++;
		h->st_dirty = true;
		pthread_mutex_unlock(&h->mu);
		if (say_suppressed) {
			/* its timer queues the deferred re-check if no
			 * event does */
			wake_main(h);
			hm_say(&h->out, HM_NOTICE, "%s: %s: a full re-check "
			       "was started %" PRIu64 " s ago; not starting "
			       "another within %llu s (rate limit; further "
			       "requests are counted)", h->label, why,
			       (uint64_t)((time_ns - h->scrub_time_ns) / NS_PER_S),
			       (unsigned long long)(h->interval_ns / NS_PER_S));
		}
		return;
	}
	h->scrub_started = true;
	h->scrub_time_ns = time_ns;
	suppressed = h->scrub_suppressed;
	h->scrub_suppressed = 0;
	h->st.rechecks++;
	h->st_dirty = true;
	pthread_mutex_unlock(&h->mu);

	if (suppressed)
		hm_say(&h->out, HM_NOTICE, "%s: %" PRIu64 " re-check request%s "
		       "suppressed by the rate limit since the last start",
		       h->label, suppressed, suppressed == 1 ? " was" : "s were");
	if (!h->no_scrub_service &&
	    hm_unit_name("xfs_scrub", h->path, unit, sizeof(unit)) < 0) {
		hm_say(&h->out, HM_ERR, "%s: mount point too long for a unit "
		       "name; run xfs_scrub by hand", h->label);
		return;
	}
	if (h->replay) {
		if (h->no_scrub_service)
			hm_say(&h->out, HM_NOTICE, "%s: %s: would %s every AG "
			       "and filesystem-wide object in-process", h->label,
			       why, repair ? "repair" : "check");
		else
			hm_say(&h->out, HM_NOTICE, "%s: %s: would start %s",
			       h->label, why, unit);
		return;
	}
	if (!h->no_scrub_service && systemd_running()) {
		if (hm_start_unit(unit, msg, sizeof(msg)) == 0) {
			hm_say(&h->out, HM_NOTICE, "%s: %s: %s", h->label, why,
			       msg);
			return;
		}
		hm_say(&h->out, HM_ERR, "%s: %s: %s; checking in-process "
		       "instead", h->label, why, msg);
	} else {
		hm_say(&h->out, HM_NOTICE, "%s: %s: %s every AG and "
		       "filesystem-wide object in-process%s", h->label, why,
		       repair ? "repairing" : "checking",
		       h->no_scrub_service ? "" : " (systemd is not running)");
	}
	hm_recheck(h->path, h->label, &h->handle, repair, &h->out);
}

/*
 * The event clock: the latest event time a worker handled, advanced by the
 * time that passed since.  Live, events are handled as they come, so this
 * is the kernel's clock; in a replay it stays with the recorded times.
 */
static void clock_advance(struct healer *h, uint64_t time_ns)
{
	pthread_mutex_lock(&h->mu);
	if (time_ns >= h->clock_ns) {
		h->clock_ns = time_ns;
		h->clock_ms = hm_now_ms();
	}
	pthread_mutex_unlock(&h->mu);
}

/* with h->mu held: ms until the deferred re-check is due, -1 if none */
static int64_t deferred_due_ms(const struct healer *h, uint64_t *now_ns)
{
	uint64_t now = h->clock_ns + (hm_now_ms() - h->clock_ms) * 1000000ULL;
	uint64_t due = h->scrub_time_ns + h->interval_ns;

	*now_ns = now;
	if (!h->scrub_suppressed || h->shut_down)
		return -1;
	return now >= due ? 0 : (int64_t)((due - now + 999999) / 1000000);
}

/*
 * Requests suppressed by the rate limit are not dropped: once the interval
 * since the last start has passed, one deferred re-check starts (a worker
 * that handles a later event sees it due; with no later event the main
 * thread's timer queues it).  A loss reported just after a re-check began
 * may concern objects that re-check had already passed.
 */
static void deferred_recheck(struct healer *h, uint64_t time_ns, bool timer)
{
	uint64_t now;
	bool due;

	pthread_mutex_lock(&h->mu);
	due = deferred_due_ms(h, &now) == 0;
	if (timer)
		h->deferred_queued = false;
	pthread_mutex_unlock(&h->mu);
	if (due)
		start_full_scrub(h, "re-check requests deferred by the rate "
				 "limit", time_ns > now ? time_ns : now);
}

/* at exit: requests the rate limit swallowed after the last start */
static void report_suppressed(struct healer *h)
{
	if (h->scrub_suppressed)
		hm_say(&h->out, HM_NOTICE, "%s: %" PRIu64 " re-check request%s "
		       "suppressed by the rate limit after the last start",
		       h->label, h->scrub_suppressed,
		       h->scrub_suppressed == 1 ? " was" : "s were");
}

static bool is_shut_down(struct healer *h)
{
	bool r;

	pthread_mutex_lock(&h->mu);
	r = h->shut_down;
	pthread_mutex_unlock(&h->mu);
	return r;
}

/* a repair found the filesystem read-only: say it once per read-only spell */
static void readonly_once(struct healer *h)
{
	bool say;

	pthread_mutex_lock(&h->mu);
	say = !h->ro_said;
	h->ro_said = true;
	pthread_mutex_unlock(&h->mu);
	if (say)
		hm_say(&h->out, HM_WARNING, "%s: the filesystem is mounted "
		       "read-only: no repairs while it stays so (events are "
		       "still reported)", h->label);
}

/* a status counter, from a worker */
static void status_add(struct healer *h, uint64_t *counter)
{
	pthread_mutex_lock(&h->mu);
	(*counter)++;
	h->st_dirty = true;
	pthread_mutex_unlock(&h->mu);
}

/* with h->mu held: an event into the status counters; our own queue's
 * loss notices count as lost events, not as events */
static void status_count_event(struct healer *h, const struct hm_qent *qe)
{
	const struct xfs_health_monitor_event *ev = &qe->ev;
	bool lost = ev->domain == XFS_HM_DOMAIN_MOUNT &&
		    ev->type == XFS_HM_TYPE_LOST;

	h->st_dirty = true;
	h->st.last_event_seen = time(NULL);
	if (qe->flags & HM_QF_QUEUE) {
		h->st.lost += ev->e.lost.count;
		h->st.lost_queue += ev->e.lost.count;
		return;
	}
	h->st.events++;
	h->st.by_type[ev->type < HM_STATUS_TYPES && hm_type_name(ev->type) ?
		      ev->type : HM_STATUS_TYPES]++;
	h->st.last_event_ns = ev->time_ns;
	if (lost)
		h->st.lost += ev->e.lost.count;
}

/*
 * The status file, from the main thread: at most once a second while
 * counters change (force: now, e.g. at start and exit).  Returns the ms
 * until the next write is due, -1 if none is pending.
 */
#define STATUS_INTERVAL_MS 1000
static int status_flush(struct healer *h, bool force)
{
	struct hm_status copy;
	uint64_t now = hm_now_ms();
	int err;

	if (!h->status_path)
		return -1;
	pthread_mutex_lock(&h->mu);
	if (!force && (!h->st_dirty || now - h->status_ms < STATUS_INTERVAL_MS)) {
		bool dirty = h->st_dirty;

		pthread_mutex_unlock(&h->mu);
		return dirty ? (int)(STATUS_INTERVAL_MS - (now - h->status_ms)) :
		       -1;
	}
	copy = h->st;
	h->st_dirty = false;
	h->st_woken = false;
	pthread_mutex_unlock(&h->mu);
	h->status_ms = now;
	err = hm_status_write(h->status_path, &copy);
	if (err && !h->status_warned) {
		h->status_warned = true;
		hm_say(&h->out, HM_WARNING, "%s: cannot write the status file "
		       "%s: %s (events are still handled)", h->label,
		       h->status_path, strerror(-err));
	}
	return -1;
}

static void status_state(struct healer *h, const char *state)
{
	pthread_mutex_lock(&h->mu);
	h->st.state = state;
	pthread_mutex_unlock(&h->mu);
	status_flush(h, true);
}

/*
 * After an event, from a worker: counters changed while the main thread
 * may sleep in poll() with no deadline; wake it once per write, so that it
 * writes within STATUS_INTERVAL_MS even when no later event comes.
 */
static void status_wake(struct healer *h)
{
	bool wake;

	pthread_mutex_lock(&h->mu);
	wake = h->st_dirty && !h->st_woken;
	if (wake)
		h->st_woken = true;
	pthread_mutex_unlock(&h->mu);
	if (wake)
		wake_main(h);
}

/* one event, on a worker */
static void handle_event(struct healer *h, const struct hm_qent *qe)
{
	const struct xfs_health_monitor_event *ev = &qe->ev;
	struct hm_plan plan;
	char obj[64], msg[512];
	bool scrub = false, first_shutdown = false;
	const char *why = NULL;
	char *path = NULL;

	if (qe->flags & HM_QF_RECHECK) {
		deferred_recheck(h, ev->time_ns, true);
		return;
	}
	clock_advance(h, ev->time_ns);
	pthread_mutex_lock(&h->mu);
	h->events++;
	status_count_event(h, qe);
	pthread_mutex_unlock(&h->mu);
	/* live inode events: the file's path, through parent pointers */
	if (!h->replay && hm_event_path_safe(ev))
		path = hm_inode_path(h->path, &h->handle, h->label,
				     ev->domain == XFS_HM_DOMAIN_INODE ?
				     ev->e.inode.ino : ev->e.filerange.ino,
				     ev->domain == XFS_HM_DOMAIN_INODE ?
				     ev->e.inode.gen : ev->e.filerange.gen);
	hm_emit_event(&h->out, ev, h->label, path);
	if (qe->flags & HM_QF_QUEUE)
		hm_say(&h->out, HM_WARNING, "%s: %" PRIu64 " events dropped: "
		       "xfs_healer's event queue (%zu events) was full",
		       h->label, ev->e.lost.count, h->q.cap);
	hm_hook_spawn(&h->hooks, &h->out, ev, h->label, path);
	free(path);
	path = NULL;
	hm_plan_event(ev, h->mode, &plan);
	/* in every mode: nothing more can be done but unmount and repair */
	if (ev->domain == XFS_HM_DOMAIN_MOUNT &&
	    ev->type == XFS_HM_TYPE_SHUTDOWN) {
		pthread_mutex_lock(&h->mu);
		first_shutdown = !h->shut_down;
		h->shut_down = true;
		h->st.shut_down = true;
		pthread_mutex_unlock(&h->mu);
	}
	if (first_shutdown)
		hm_say(&h->out, HM_ERR, "%s: the filesystem is shut down; no "
		       "more repairs: unmount it and run xfs_repair", h->label);
	if (is_shut_down(h))
		return;
	hm_object_text(ev, obj, sizeof(obj));
	for (unsigned int i = 0; i < plan.nr; i++) {
		const struct hm_repair *r = &plan.r[i];
		const struct hm_hazard *hz = h->allow_risky ? NULL :
			hm_hazard_find(h->kernel_release, r->scrub_type);
		enum hm_repair_result res;

		status_add(h, &h->st.repairs_requested);
		if (hz) {
			status_add(h, &h->st.repairs_skipped);
			hm_say(&h->out, HM_WARNING, "%s%s%s %s: not repairing: "
			       "on Linux %s the %s (--allow-risky-repairs "
			       "overrides)", h->label, *obj ? " " : "", obj,
			       r->what, h->kernel_release, hz->what);
			scrub = true;
			why = "repair skipped (known kernel hazard)";
			continue;
		}
		if (h->replay && h->fsinfo.readonly) {
			status_add(h, &h->st.repairs_skipped);
			readonly_once(h);
			continue;
		}
		if (h->replay) {
			hm_say(&h->out, HM_NOTICE, "%s%s%s %s: would repair "
			       "(scrub type %s)", h->label, *obj ? " " : "",
			       obj, r->what, hm_scrub_type_name(r->scrub_type));
			continue;
		}
		res = hm_repair_one(h->path, &h->handle, r, msg, sizeof(msg));
		if (res == HM_REPAIR_READONLY) {
			status_add(h, &h->st.repairs_skipped);
			readonly_once(h);
			continue;
		}
		pthread_mutex_lock(&h->mu);
		h->ro_said = false;
		h->st_dirty = true;
		if (res == HM_REPAIR_DONE)
			h->st.repairs_done++;
		else if (res == HM_REPAIR_CLEAN)
			h->st.repairs_clean++;
		else
			h->st.repairs_failed++;
		pthread_mutex_unlock(&h->mu);
		hm_say(&h->out, res == HM_REPAIR_DONE || res == HM_REPAIR_CLEAN ?
		       HM_NOTICE : HM_ERR, "%s%s%s %s: %s", h->label,
		       *obj ? " " : "", obj, r->what, msg);
		if (res == HM_REPAIR_FAILED || res == HM_REPAIR_UNSUPPORTED) {
			scrub = true;
			why = "repair failed";
		}
	}
	if (plan.full_scrub) {
		scrub = true;
		why = plan.full_scrub_why;
	}
	if (scrub)
		start_full_scrub(h, why, ev->time_ns);
	else
		deferred_recheck(h, ev->time_ns, false);
}

static void *worker(void *arg)
{
	struct healer *h = arg;
	struct hm_qent qe;
	bool last;

	while (hm_queue_pop(&h->q, &qe)) {
		handle_event(h, &qe);
		status_wake(h);
		/* lines reach a pipe as soon as the queue is drained */
		if (!hm_queue_len(&h->q))
			fflush(stdout);
	}
	pthread_mutex_lock(&h->mu);
	last = --h->workers_left == 0;
	pthread_mutex_unlock(&h->mu);
	if (last)
		wake_main(h);
	return NULL;
}

static bool is_unmount(const struct xfs_health_monitor_event *ev)
{
	return ev->domain == XFS_HM_DOMAIN_MOUNT &&
	       ev->type == XFS_HM_TYPE_UNMOUNT;
}

/* the reader of a capture: waits for room unless --replay-nowait */
static void *replay_reader(void *arg)
{
	struct healer *h = arg;
	struct xfs_health_monitor_event ev;
	int r;

	while ((r = hm_capture_next(&h->cap, &ev)) == 1) {
		h->last_time_ns = ev.time_ns;
		/* the stream ends after an unmount: it is never dropped */
		if (!hm_queue_push(&h->q, &ev, !h->replay_nowait ||
				   is_unmount(&ev)) && h->q.stopping)
			break;
		if (is_unmount(&ev))
			break;
	}
	if (r < 0) {
		h->reader_status = 1;
		h->reader_err = h->cap.err;
		h->cap.err = NULL;
	}
	hm_queue_close(&h->q, h->last_time_ns);
	return NULL;
}

/* the reader of the monitor: never waits for anything but the kernel */
static void *live_reader(void *arg)
{
	struct healer *h = arg;
	struct xfs_health_monitor_event evs[64];
	struct pollfd pfd[2] = {
		{ .fd = h->mfd, .events = POLLIN },
		{ .fd = h->stopfd, .events = POLLIN },
	};

	for (;;) {
		ssize_t n;

		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			if (asprintf(&h->reader_err, "%s: waiting for events: %s",
				     h->label, strerror(errno)) < 0)
				h->reader_err = NULL;
			h->reader_status = 1;
			break;
		}
		if (pfd[1].revents)
			break;
		if (!(pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = read(h->mfd, evs, sizeof(evs));
		if (n == 0)
			break;		/* after the unmount event */
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			if (asprintf(&h->reader_err, "%s: reading events: %s",
				     h->label, strerror(errno)) < 0)
				h->reader_err = NULL;
			h->reader_status = 1;
			break;
		}
		if (n % XFS_HM_EVENT_SIZE)
			hm_say(&h->out, HM_WARNING, "%s: short event record "
			       "(%zd bytes) ignored", h->label,
			       n % XFS_HM_EVENT_SIZE);
		for (ssize_t i = 0; i < n / XFS_HM_EVENT_SIZE; i++) {
			h->last_time_ns = evs[i].time_ns;
			if (h->recording &&
			    hm_capture_write(&h->rec, &evs[i], &h->log) < 0)
				h->recording = false;
			hm_queue_push(&h->q, &evs[i], is_unmount(&evs[i]));
			if (is_unmount(&evs[i]))
				h->saw_unmount = true;
		}
		/* the stream ends with the unmount event (EOF follows) */
		if (h->saw_unmount)
			break;
	}
	hm_queue_close(&h->q, h->last_time_ns);
	return NULL;
}

/*
 * The policy says "not monitored": say so to systemd as a ready service
 * that then ends with status 0, so that a Type=notify unit ends up
 * inactive, not failed ("protocol"), and wait until systemd has taken the
 * READY=1 in before exiting.
 */
static int not_monitored(const char *why)
{
	char *st;

	if (asprintf(&st, "READY=1\nSTATUS=not monitoring (%s)", why) < 0)
		return 0;
	if (hm_notify(st) == 0)
		hm_notify_barrier(5000);
	free(st);
	return 0;
}

static void set_mode(struct healer *h)
{
	struct hm_policy_in in = {
		.opt_repair = h->repair, .opt_no_autofsck = h->no_autofsck,
		.fs = &h->fsinfo,
	};
	const char *why;
	static const char *const names[] = {
		"not monitoring", "reporting events", "repairing sick metadata",
	};

	h->mode = hm_policy_mode(&in, &why);
	h->mode_why = why;
	h->st.mode = h->mode == HM_MODE_REPAIR ? "repair" :
		     h->mode == HM_MODE_LOG ? "report" : "none";
	hm_say(&h->out, HM_INFO, "%s: %s (%s)", h->label, names[h->mode], why);
	if (h->mode == HM_MODE_REPAIR && h->fsinfo.readonly)
		readonly_once(h);
}

/*
 * The reader, the workers and, on this thread, hooks.  SIGTERM or SIGINT
 * end the daemon within a second whatever is in flight (a repair ioctl or a
 * D-Bus call is left to finish, or to die with the process), even when
 * every thread, this one included, is blocked writing to a stalled stdout
 * or journal: a stopper thread that never touches stdio takes the signal,
 * stops the queue, the hooks and the reader, and ends the process at
 * STOP_LIMIT_MS if nothing else has.  SIGHUP is ignored.
 */
#define STOP_GRACE_MS 400	/* this thread: workers finish what they hold */
#define STOP_LIMIT_MS 550	/* the stopper: the process ends, whatever */

struct stopper {
	struct healer *h;		/* NULL once run_threads tears down */
	const char *prog;
	sigset_t set;			/* SIGTERM, SIGINT */
	pthread_mutex_t mu;
	int sig;			/* the stop signal, 0 before */
};

/* static: the thread outlives run_threads (and main's frame, at exit);
 * signals are per process anyway */
static struct stopper stop_state = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* a line on stderr only if it cannot block (poll says there is room) */
static void say_nonblocking(int fd, const char *line)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };

	if (poll(&p, 1, 0) == 1 && (p.revents & POLLOUT) &&
	    write(fd, line, strlen(line)) < 0)
		(void)0;
}

static void *stopper(void *arg)
{
	struct stopper *st = arg;
	struct healer *h;
	uint64_t one = 1, deadline;
	char line[160];
	int sig = 0;

	while (sigwait(&st->set, &sig) != 0 || !sig)
		;
	deadline = hm_now_ms() + STOP_LIMIT_MS;
	pthread_mutex_lock(&st->mu);
	st->sig = sig;
	h = st->h;
	/* under st->mu, so that the queue and hooks are not torn down
	 * meanwhile; none of these waits on a thread stuck in stdio */
	if (h) {
		hm_queue_stop(&h->q);
		hm_hook_stop(&h->hooks);
		if (write(h->stopfd, &one, sizeof(one)) < 0)
			(void)0;
		wake_main(h);
	}
	pthread_mutex_unlock(&st->mu);
	for (uint64_t now; (now = hm_now_ms()) < deadline;) {
		struct timespec ts = {
			.tv_sec = (time_t)((deadline - now) / 1000),
			.tv_nsec = (long)((deadline - now) % 1000) * 1000000L,
		};

		nanosleep(&ts, NULL);
	}
	/* the main thread did not get to exit: it is blocked too */
	snprintf(line, sizeof(line), "%s: warning: stopping on signal %d with "
		 "output blocked; exiting now\n", st->prog, sig);
	say_nonblocking(2, line);
	_exit(0);
}

/*
 * The main thread's timer for deferred re-checks (live, no later event
 * may come): queue one for the workers once due.  Returns the ms to wait
 * before the next look, -1 for none.
 */
static int queue_deferred(struct healer *h)
{
	struct xfs_health_monitor_event ev;
	uint64_t now;
	int64_t ms;

	pthread_mutex_lock(&h->mu);
	ms = h->deferred_queued ? -1 : deferred_due_ms(h, &now);
	pthread_mutex_unlock(&h->mu);
	if (ms != 0)
		return ms < 0 ? -1 : ms > 60000 ? 60000 : (int)ms;
	memset(&ev, 0, sizeof(ev));
	ev.time_ns = now;
	/* never waits; a full queue: look again shortly */
	if (!hm_queue_push_ctl(&h->q, &ev, HM_QF_RECHECK))
		return 100;
	pthread_mutex_lock(&h->mu);
	h->deferred_queued = true;
	pthread_mutex_unlock(&h->mu);
	return -1;
}

/* run_threads is done with its queue and hooks: the stopper keeps away */
static void stopper_detach(struct stopper *st)
{
	pthread_mutex_lock(&st->mu);
	st->h = NULL;
	pthread_mutex_unlock(&st->mu);
}

static int stop_signal(struct stopper *st)
{
	int sig;

	pthread_mutex_lock(&st->mu);
	sig = st->sig;
	pthread_mutex_unlock(&st->mu);
	return sig;
}

static int run_threads(struct healer *h)
{
	pthread_t reader, stop_thread, *workers;
	struct stopper *st = &stop_state;
	sigset_t mask;
	int sfd, ret = 0;
	bool stopped = false;
	unsigned int started = 0;

	if (hm_queue_init(&h->q, h->queue_events) < 0) {
		hm_say(&h->out, HM_ERR, "cannot allocate the event queue");
		return 1;
	}
	workers = calloc(h->nworkers, sizeof(*workers));
	h->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	h->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	sigemptyset(&st->set);
	sigaddset(&st->set, SIGTERM);
	sigaddset(&st->set, SIGINT);
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	/* before any thread starts, so that every thread inherits it */
	pthread_sigmask(SIG_BLOCK, &st->set, NULL);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	/* this thread: children ended, and SIGHUP read and ignored */
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (!workers || h->wakefd < 0 || h->stopfd < 0 || sfd < 0) {
		hm_say(&h->out, HM_ERR, "cannot set up threads: %s",
		       strerror(errno));
		return 1;
	}
	hm_hook_init(&h->hooks, h->wakefd);
	/* first: a stop signal is taken from now on, whatever else fails */
	st->h = h;
	st->prog = h->log.prog;
	if (pthread_create(&stop_thread, NULL, stopper, st) ||
	    pthread_detach(stop_thread)) {
		hm_say(&h->out, HM_ERR, "cannot start the signal thread");
		return 1;
	}
	h->workers_left = h->nworkers;
	for (; started < h->nworkers; started++)
		if (pthread_create(&workers[started], NULL, worker, h))
			break;
	if (started < h->nworkers) {
		hm_say(&h->out, HM_ERR, "cannot start worker threads");
		hm_queue_stop(&h->q);
		for (unsigned int i = 0; i < started; i++)
			pthread_join(workers[i], NULL);
		stopper_detach(st);
		return 1;
	}
	if (pthread_create(&reader, NULL, h->replay ? replay_reader :
			   live_reader, h)) {
		hm_say(&h->out, HM_ERR, "cannot start the reader thread");
		hm_queue_stop(&h->q);
		for (unsigned int i = 0; i < started; i++)
			pthread_join(workers[i], NULL);
		stopper_detach(st);
		return 1;
	}
	status_state(h, "running");
	hm_notify("READY=1\nSTATUS=watching for health events");

	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = sfd, .events = POLLIN },
			{ .fd = h->wakefd, .events = POLLIN },
		};
		int timeout = hm_hook_reap(&h->hooks, &h->out);
		int recheck = queue_deferred(h);
		int stwait = status_flush(h, false);
		bool done;
		uint64_t v;

		if (stop_signal(st)) {
			/* may block on a stalled stdout: the stopper ends
			 * the process then */
			hm_say(&h->out, HM_INFO, "%s: stopping on signal %d",
			       h->label, stop_signal(st));
			stopped = true;
			break;
		}
		pthread_mutex_lock(&h->mu);
		done = h->workers_left == 0;
		pthread_mutex_unlock(&h->mu);
		if (done)
			break;
		if (recheck >= 0 && (timeout < 0 || recheck < timeout))
			timeout = recheck;
		if (stwait >= 0 && (timeout < 0 || stwait < timeout))
			timeout = stwait;
		if (poll(pfd, 2, timeout) < 0 && errno != EINTR) {
			hm_say(&h->out, HM_ERR, "poll: %s", strerror(errno));
			ret = 1;
			stopped = true;
			break;
		}
		if (pfd[1].revents & POLLIN && read(h->wakefd, &v, sizeof(v)) < 0)
			(void)0;
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			/* SIGCHLD: reaped at the top; SIGHUP: ignored */
			while (read(sfd, &si, sizeof(si)) == sizeof(si))
				;
		}
	}
	hm_notify("STOPPING=1");
	if (stopped) {
		uint64_t one = 1, deadline = hm_now_ms() + STOP_GRACE_MS;
		bool done = false;

		hm_queue_stop(&h->q);
		hm_hook_stop(&h->hooks);
		if (write(h->stopfd, &one, sizeof(one)) < 0)
			(void)0;
		/* workers finish the action in hand; wait a little for them */
		while (!done && hm_now_ms() < deadline) {
			struct pollfd p = { .fd = h->wakefd, .events = POLLIN };

			pthread_mutex_lock(&h->mu);
			done = h->workers_left == 0;
			pthread_mutex_unlock(&h->mu);
			if (!done)
				poll(&p, 1, (int)(deadline - hm_now_ms()));
		}
		hm_hook_reap(&h->hooks, &h->out);
		if (!done) {
			hm_say(&h->out, HM_WARNING, "%s: exiting with work in "
			       "flight (a repair or a service start); the "
			       "kernel finishes a repair on its own", h->label);
			status_state(h, "stopped by signal");
			fflush(stdout);
			fflush(stderr);
			_exit(ret);
		}
	}
	pthread_join(reader, NULL);
	for (unsigned int i = 0; i < started; i++)
		pthread_join(workers[i], NULL);
	if (!stopped)
		hm_hook_drain(&h->hooks, &h->out);
	report_suppressed(h);
	if (h->reader_err) {
		fflush(stdout);
		hm_say(&h->out, HM_ERR, "%s", h->reader_err);
		free(h->reader_err);
	} else if (!stopped && !h->replay && !h->saw_unmount) {
		/* the unmount event itself lost, or the monitor detached:
		 * status 1, so that the unit comes back if it is still
		 * mounted (its ConditionPathIsMountPoint= says if not) */
		hm_say(&h->out, HM_ERR, "%s: the event stream ended without "
		       "an unmount event", h->label);
		ret = 1;
	}
	if (h->reader_status)
		ret = 1;
	status_state(h, stopped ? "stopped by signal" : ret ? "failed" :
		     "stopped");
	stopper_detach(st);
	close(sfd);
	free(workers);
	hm_queue_destroy(&h->q);
	fflush(stdout);
	return ret;
}

static int run_replay(struct healer *h)
{
	int ret;

	if (hm_capture_open(&h->cap, h->replay, &h->log) < 0)
		return 1;
	h->fsinfo = h->cap.info;
	set_mode(h);
	if (h->mode == HM_MODE_EXIT) {
		hm_capture_close(&h->cap);
		status_state(h, "not monitoring");
		return not_monitored(h->mode_why);
	}
	ret = run_threads(h);
	hm_capture_close(&h->cap);
	return ret;
}

/* --repair on a kernel without online repair: say so and stop */
static bool kernel_can_repair(int fd)
{
	struct xfs_scrub_metadata sm;

	memset(&sm, 0, sizeof(sm));
	sm.sm_type = XFS_SCRUB_TYPE_PROBE;
	sm.sm_flags = XFS_SCRUB_IFLAG_REPAIR;
	return hm_ioctl_retry(fd, XFS_IOC_SCRUB_METADATA, &sm) == 0 ||
	       (errno != EOPNOTSUPP && errno != ENOTTY);
}

static int run_live(struct healer *h)
{
	int fd, mfd, ret;

	fd = hm_open_mountpoint(h->path, &h->out);
	if (fd < 0)
		return 1;
	if (h->supported) {
		mfd = hm_open_monitor(fd, false, h->label, &h->out);
		close(fd);
		if (mfd < 0)
			return 1;
		close(mfd);
		hm_say(&h->out, HM_INFO, "%s: health monitoring supported",
		       h->label);
		return 0;
	}
	if (hm_get_handle(fd, &h->handle) < 0) {
		hm_say(&h->out, HM_ERR, "%s: cannot get a file handle: %s",
		       h->label, strerror(errno));
		close(fd);
		return 1;
	}
	hm_read_fsinfo(fd, &h->fsinfo);
	set_mode(h);
	if (h->mode == HM_MODE_EXIT) {
		close(fd);
		status_state(h, "not monitoring");
		return not_monitored(h->mode_why);
	}
	if (h->mode == HM_MODE_REPAIR && !kernel_can_repair(fd)) {
		hm_say(&h->out, HM_ERR, "%s: the kernel cannot repair this "
		       "filesystem (online repair missing)", h->label);
		close(fd);
		return 1;
	}
	mfd = hm_open_monitor(fd, h->everything, h->label, &h->out);
	/* do not pin the mount: only the monitor fd stays open */
	close(fd);
	if (mfd < 0)
		return 1;
	fcntl(mfd, F_SETFL, fcntl(mfd, F_GETFL) | O_NONBLOCK);
	if (h->record) {
		if (hm_capture_create(&h->rec, h->record, &h->fsinfo,
				      &h->log) < 0) {
			close(mfd);
			return 1;
		}
		h->recording = true;
	}
	h->mfd = mfd;
	ret = run_threads(h);
	close(mfd);
	if (h->recording)
		hm_capture_close(&h->rec);
	return ret;
}

static bool parse_uint(const char *s, unsigned long min, unsigned long max,
		       unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 10);
	return !errno && !*end && *s && *s != '-' && *v >= min && *v <= max;
}

static unsigned int online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > 64 ? 64 : (unsigned int)n;
}

static void status_init(struct healer *h, const char *dir)
{
	h->status_path = hm_status_path(dir, h->path);
	if (!h->status_path)
		hm_say(&h->out, HM_WARNING, "%s: mount point too long for a "
		       "status file name; none written", h->label);
	h->st.label = h->label;
	h->st.pid = getpid();
	h->st.started = time(NULL);
	h->st.state = "starting";
}

/* --status: the file of the mount as given, else of its real path */
static int show_status(struct healer *h, const char *dir, const char *mount)
{
	char *path = hm_status_path(dir, mount), *real = realpath(mount, NULL);
	int err = path ? hm_status_show(path, h->out.json, stdout) : -ENAMETOOLONG;

	if (err == -ENOENT && real) {
		free(path);
		path = hm_status_path(dir, real);
		err = path ? hm_status_show(path, h->out.json, stdout) :
		      -ENAMETOOLONG;
	}
	free(real);
	if (err) {
		char *lbl = hm_escape_dup(mount);

		if (err == -ENOENT)
			fsf_err(&h->log, "%s: no status (%s): no xfs_healer "
				"has watched it since boot", lbl,
				path ? path : dir);
		else
			fsf_err(&h->log, "%s: %s: %s", lbl, path ? path : dir,
				strerror(-err));
		free(lbl);
	}
	free(path);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct healer h = {
		.log = { .prog = "xfs_healer", .level = FSF_NORMAL },
		.hooks = { .timeout_s = 30, .wakefd = -1 },
		.nworkers = 1, .queue_events = HM_QUEUE_DEFAULT,
		.mfd = -1, .wakefd = -1, .stopfd = -1,
		.interval_ns = RECHECK_INTERVAL_S * NS_PER_S,
	};
	int c, ret;
	unsigned long v;
	bool status = false;
	const char *state_dir = getenv("XFS_HEALER_STATE_DIR");
	bool state_dir_given = state_dir && *state_dir;

	h.out.log = &h.log;
	pthread_mutex_init(&h.mu, NULL);
	while ((c = getopt_long(argc, argv, "Vh", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_EVERYTHING: h.everything = true; break;
		case OPT_FOREGROUND: h.nworkers = online_cpus(); break;
		case OPT_NO_AUTOFSCK: h.no_autofsck = true; break;
		case OPT_QUIET: h.out.quiet = true; break;
		case OPT_REPAIR: h.repair = true; break;
		case OPT_SUPPORTED: h.supported = true; break;
		case OPT_JSON: h.out.json = true; break;
		case OPT_EXEC: h.hooks.path = optarg; break;
		case OPT_QUEUE:
			if (!parse_uint(optarg, 2, 1UL << 24, &v)) {
				fsf_err(&h.log, "--queue-events: expected 2..%lu "
					"events, got '%s'", 1UL << 24, optarg);
				return EXIT_USAGE;
			}
			h.queue_events = v;
			break;
		case OPT_REPLAY_NOWAIT: h.replay_nowait = true; break;
		case OPT_NO_SCRUB_SVC: h.no_scrub_service = true; break;
		case OPT_ALLOW_RISKY: h.allow_risky = true; break;
		case OPT_KERNEL_RELEASE: h.kernel_release = optarg; break;
		case OPT_RECHECK_INTERVAL:
			if (!parse_uint(optarg, 1, 86400, &v)) {
				fsf_err(&h.log, "--recheck-interval: expected "
					"1..86400 seconds, got '%s'", optarg);
				return EXIT_USAGE;
			}
			h.interval_ns = v * NS_PER_S;
			break;
		case OPT_EXEC_TIMEOUT:
			if (!parse_uint(optarg, 1, 86400, &v)) {
				fsf_err(&h.log, "--exec-timeout: expected 1..86400 "
					"seconds, got '%s'", optarg);
				return EXIT_USAGE;
			}
			h.hooks.timeout_s = (unsigned int)v;
			break;
		case OPT_REPLAY: h.replay = optarg; break;
		case OPT_STATUS: status = true; break;
		case OPT_STATE_DIR:
			state_dir = optarg;
			state_dir_given = true;
			break;
		case OPT_RECORD: h.record = optarg; break;
		case 'V':
			printf("xfs_healer (fsforge) %s\n", PACKAGE_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (!h.kernel_release) {
		static struct utsname uts;

		if (uname(&uts) == 0)
			h.kernel_release = uts.release;
	}
	if (!state_dir_given)
		state_dir = HM_STATUS_DIR;
	if (status) {
		if (argc - optind != 1 || h.replay) {
			fsf_err(&h.log, "--status takes one MOUNTPOINT");
			return EXIT_USAGE;
		}
		return show_status(&h, state_dir, argv[optind]);
	}
	if (h.replay_nowait && !h.replay) {
		fsf_err(&h.log, "--replay-nowait needs --replay");
		return EXIT_USAGE;
	}
	if (h.replay) {
		if (argc - optind > 1 || h.supported || h.record) {
			fsf_err(&h.log, "--replay takes at most one LABEL and "
				"no --supported or --record");
			return EXIT_USAGE;
		}
		h.path = optind < argc ? argv[optind] : h.replay;
		h.label = hm_escape_dup(h.path);
		/* a replay writes a status file only when asked */
		if (state_dir_given)
			status_init(&h, state_dir);
		ret = run_replay(&h);
		free(h.status_path);
		free(h.label);
		return ret;
	}
	if (argc - optind != 1) {
		fsf_err(&h.log, argc == optind ? "missing MOUNTPOINT" :
			"too many arguments");
		usage(stderr);
		return EXIT_USAGE;
	}
	h.path = argv[optind];
	h.label = hm_escape_dup(h.path);
	h.out.journal = hm_stderr_is_journal();
	if (!h.supported)
		status_init(&h, state_dir);
	ret = run_live(&h);
	free(h.status_path);
	free(h.label);
	return ret;
}
