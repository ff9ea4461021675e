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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "healer.h"

enum { EXIT_USAGE = 16 };

enum {
	OPT_EVERYTHING = 256, OPT_FOREGROUND, OPT_NO_AUTOFSCK, OPT_QUIET,
	OPT_REPAIR, OPT_SUPPORTED, OPT_JSON, OPT_EXEC, OPT_EXEC_TIMEOUT,
	OPT_REPLAY, OPT_RECORD,
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
	{ "version", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fputs(
"Usage: xfs_healer [OPTIONS] MOUNTPOINT\n"
"       xfs_healer --replay FILE [OPTIONS] [LABEL]\n"
"Watch the XFS filesystem mounted at MOUNTPOINT through the kernel's health\n"
"monitor (Linux 7.0+), report every event on one line, and repair the\n"
"metadata the kernel reports as sick when allowed.\n"
"\n"
"      --everything        also report healthy (good) events\n"
"      --foreground        accepted for compatibility (always foreground,\n"
"                          one thread)\n"
"      --no-autofsck       ignore the filesystem's autofsck property:\n"
"                          repair only with --repair\n"
"      --repair            repair sick metadata as it is reported; on a\n"
"                          failed repair or lost events start the\n"
"                          xfs_scrub@ service for the mount\n"
"      --quiet             do not report every event\n"
"      --supported         exit 0 if the filesystem can send health\n"
"                          events, 1 if not\n"
"      --json              report events as one JSON object per line\n"
"      --exec HOOK         run HOOK for each event, the event in its\n"
"                          environment (XFS_HEALER_*); never waits for it\n"
"      --exec-timeout SEC  kill a hook after SEC seconds (default 30)\n"
"      --record FILE       also write the raw event stream to FILE\n"
"      --replay FILE       decode a recorded stream instead of a live\n"
"                          monitor; repairs are shown, not done\n"
"  -V, --version           print the version and exit\n"
"  -h, --help              print this help and exit\n"
"\n"
"Without --repair or --no-autofsck the filesystem's autofsck property\n"
"decides: repair -> repair, check/optimize -> report, none -> exit; unset ->\n"
"report if the filesystem has rmapbt or parent pointers, else exit.\n"
"Exit status: 0 after unmount, SIGTERM or SIGINT; 1 on errors; 16 on usage\n"
"errors.\n", f);
}

/* everything xfs_healer knows; main() owns the only instance */
struct healer {
	struct fsf_log log;
	struct hm_out out;
	const char *path;		/* mount point (live) or label (replay) */
	const char *replay;
	const char *record;
	bool everything, repair, no_autofsck, supported;
	enum hm_mode mode;
	struct hm_fsinfo fsinfo;
	struct hm_handle handle;
	struct hm_hooks hooks;
	struct hm_capture rec;
	bool recording;
	uint64_t events;
	bool shut_down;			/* no repair can work any more */
	bool scrub_started;
	uint64_t scrub_time_ns;		/* event time of the last start */
};

/* one xfs_scrub@ start per minute of event time is plenty: a flood of
 * lost events or failed repairs must not flood systemd */
#define SCRUB_INTERVAL_NS (60ULL * 1000000000ULL)

static void start_full_scrub(struct healer *h, const char *why,
			     uint64_t time_ns)
{
	char unit[1200], msg[1400];

	if (h->scrub_started && time_ns >= h->scrub_time_ns &&
	    time_ns - h->scrub_time_ns < SCRUB_INTERVAL_NS)
		return;
	h->scrub_started = true;
	h->scrub_time_ns = time_ns;

	if (hm_unit_name("xfs_scrub", h->path, unit, sizeof(unit)) < 0) {
		hm_say(&h->out, HM_ERR, "%s: mount point too long for a unit "
		       "name; run xfs_scrub by hand", h->path);
		return;
	}
	if (h->replay) {
		hm_say(&h->out, HM_NOTICE, "%s: %s: would start %s", h->path,
		       why, unit);
		return;
	}
	if (hm_start_unit(unit, msg, sizeof(msg)) < 0)
		hm_say(&h->out, HM_ERR, "%s: %s: %s; run xfs_scrub %s by hand",
		       h->path, why, msg, h->path);
	else
		hm_say(&h->out, HM_NOTICE, "%s: %s: %s", h->path, why, msg);
}

/* returns true when the stream has ended */
static bool handle_event(struct healer *h,
			 const struct xfs_health_monitor_event *ev)
{
	struct hm_plan plan;
	char obj[64], msg[512];
	bool scrub = false;
	const char *why = NULL;

	h->events++;
	hm_emit_event(&h->out, ev, h->path);
	if (h->recording && hm_capture_write(&h->rec, ev, &h->log) < 0)
		h->recording = false;
	hm_hook_spawn(&h->hooks, &h->out, ev, h->path);
	hm_plan_event(ev, h->mode, &plan);
	if (ev->domain == XFS_HM_DOMAIN_MOUNT &&
	    ev->type == XFS_HM_TYPE_SHUTDOWN && h->mode == HM_MODE_REPAIR &&
	    !h->shut_down) {
		h->shut_down = true;
		hm_say(&h->out, HM_ERR, "%s: the filesystem is shut down; no "
		       "more repairs: unmount it and run xfs_repair", h->path);
	}
	if (h->shut_down)
		return plan.stop;
	hm_object_text(ev, obj, sizeof(obj));
	for (unsigned int i = 0; i < plan.nr; i++) {
		const struct hm_repair *r = &plan.r[i];
		enum hm_repair_result res;

		if (h->replay) {
			hm_say(&h->out, HM_NOTICE, "%s%s%s %s: would repair "
			       "(scrub type %s)", h->path, *obj ? " " : "",
			       obj, r->what, hm_scrub_type_name(r->scrub_type));
			continue;
		}
		res = hm_repair_one(h->path, &h->handle, r, msg, sizeof(msg));
		hm_say(&h->out, res == HM_REPAIR_DONE || res == HM_REPAIR_CLEAN ?
		       HM_NOTICE : HM_ERR, "%s%s%s %s: %s", h->path,
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
	return plan.stop;
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
	hm_say(&h->out, HM_INFO, "%s: %s (%s)", h->path, names[h->mode], why);
}

static int run_replay(struct healer *h)
{
	struct hm_capture c;
	struct xfs_health_monitor_event ev;
	int r;

	if (hm_capture_open(&c, h->replay, &h->log) < 0)
		return 1;
	h->fsinfo = c.info;
	set_mode(h);
	if (h->mode == HM_MODE_EXIT) {
		hm_capture_close(&c);
		return 0;
	}
	while ((r = hm_capture_next(&c, &ev, &h->log)) == 1)
		if (handle_event(h, &ev))
			break;
	hm_capture_close(&c);
	hm_hook_drain(&h->hooks, &h->out);
	fflush(stdout);
	return r < 0 ? 1 : 0;
}

/* --repair on a kernel without online repair: say so and stop */
static bool kernel_can_repair(int fd)
{
	struct xfs_scrub_metadata sm;

	memset(&sm, 0, sizeof(sm));
	sm.sm_type = XFS_SCRUB_TYPE_PROBE;
	sm.sm_flags = XFS_SCRUB_IFLAG_REPAIR;
	return ioctl(fd, XFS_IOC_SCRUB_METADATA, &sm) == 0 ||
	       (errno != EOPNOTSUPP && errno != ENOTTY);
}

static int monitor_loop(struct healer *h, int mfd, int sfd)
{
	struct xfs_health_monitor_event evs[64];
	struct pollfd pfd[2] = {
		{ .fd = mfd, .events = POLLIN }, { .fd = sfd, .events = POLLIN },
	};

	for (;;) {
		int timeout = hm_hook_reap(&h->hooks, &h->out);

		if (poll(pfd, 2, timeout) < 0) {
			if (errno == EINTR)
				continue;
			hm_say(&h->out, HM_ERR, "poll: %s", strerror(errno));
			return 1;
		}
		if (pfd[1].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == sizeof(si) &&
			    si.ssi_signo != SIGCHLD) {
				hm_say(&h->out, HM_INFO, "%s: stopping on "
				       "signal %u", h->path, si.ssi_signo);
				return 0;
			}
		}
		if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t n = read(mfd, evs, sizeof(evs));

			if (n == 0) {
				hm_say(&h->out, HM_INFO, "%s: event stream "
				       "ended", h->path);
				return 0;
			}
			if (n < 0) {
				if (errno == EAGAIN || errno == EINTR)
					continue;
				hm_say(&h->out, HM_ERR, "%s: reading events: %s",
				       h->path, strerror(errno));
				return 1;
			}
			if (n % XFS_HM_EVENT_SIZE)
				hm_say(&h->out, HM_WARNING, "%s: short event "
				       "record (%zd bytes) ignored", h->path,
				       n % XFS_HM_EVENT_SIZE);
			for (ssize_t i = 0; i < n / XFS_HM_EVENT_SIZE; i++)
				if (handle_event(h, &evs[i]))
					return 0;
			fflush(stdout);
		}
	}
}

static int run_live(struct healer *h)
{
	sigset_t mask;
	int fd, mfd, sfd, ret;

	fd = hm_open_mountpoint(h->path, &h->out);
	if (fd < 0)
		return 1;
	if (h->supported) {
		mfd = hm_open_monitor(fd, false, h->path, &h->out);
		close(fd);
		if (mfd < 0)
			return 1;
		close(mfd);
		hm_say(&h->out, HM_INFO, "%s: health monitoring supported",
		       h->path);
		return 0;
	}
	if (hm_get_handle(fd, &h->handle) < 0) {
		hm_say(&h->out, HM_ERR, "%s: cannot get a file handle: %s",
		       h->path, strerror(errno));
		close(fd);
		return 1;
	}
	hm_read_fsinfo(fd, &h->fsinfo);
	set_mode(h);
	if (h->mode == HM_MODE_EXIT) {
		close(fd);
		return 0;
	}
	if (h->mode == HM_MODE_REPAIR && !kernel_can_repair(fd)) {
		hm_say(&h->out, HM_ERR, "%s: the kernel cannot repair this "
		       "filesystem (online repair missing)", h->path);
		close(fd);
		return 1;
	}
	mfd = hm_open_monitor(fd, h->everything, h->path, &h->out);
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
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		hm_say(&h->out, HM_ERR, "signalfd: %s", strerror(errno));
		close(mfd);
		return 1;
	}
	hm_notify("READY=1\nSTATUS=watching for health events");
	ret = monitor_loop(h, mfd, sfd);
	hm_notify("STOPPING=1");
	close(mfd);
	close(sfd);
	hm_hook_drain(&h->hooks, &h->out);
	if (h->recording)
		hm_capture_close(&h->rec);
	fflush(stdout);
	return ret;
}

int main(int argc, char **argv)
{
	struct healer h = {
		.log = { .prog = "xfs_healer", .level = FSF_NORMAL },
		.hooks = { .timeout_s = 30 },
	};
	int c;
	char *end;
	unsigned long v;

	h.out.log = &h.log;
	while ((c = getopt_long(argc, argv, "Vh", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_EVERYTHING: h.everything = true; break;
		case OPT_FOREGROUND: break;
		case OPT_NO_AUTOFSCK: h.no_autofsck = true; break;
		case OPT_QUIET: h.out.quiet = true; break;
		case OPT_REPAIR: h.repair = true; break;
		case OPT_SUPPORTED: h.supported = true; break;
		case OPT_JSON: h.out.json = true; break;
		case OPT_EXEC: h.hooks.path = optarg; break;
		case OPT_EXEC_TIMEOUT:
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || *end || !*optarg || v == 0 || v > 86400) {
				fsf_err(&h.log, "--exec-timeout: expected 1..86400 "
					"seconds, got '%s'", optarg);
				return EXIT_USAGE;
			}
			h.hooks.timeout_s = (unsigned int)v;
			break;
		case OPT_REPLAY: h.replay = optarg; break;
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
	if (h.replay) {
		if (argc - optind > 1 || h.supported || h.record) {
			fsf_err(&h.log, "--replay takes at most one LABEL and "
				"no --supported or --record");
			return EXIT_USAGE;
		}
		h.path = optind < argc ? argv[optind] : h.replay;
		return run_replay(&h);
	}
	if (argc - optind != 1) {
		fsf_err(&h.log, argc == optind ? "missing MOUNTPOINT" :
			"too many arguments");
		usage(stderr);
		return EXIT_USAGE;
	}
	h.path = argv[optind];
	h.out.journal = hm_stderr_is_journal();
	return run_live(&h);
}
