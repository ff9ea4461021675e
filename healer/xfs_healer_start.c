// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * xfs_healer_start: start xfs_healer@<escaped mount point>.service for every
 * XFS filesystem mounted in a mount namespace, those present at start and
 * every later one.  Mount attach/detach notifications come from fanotify
 * (FAN_REPORT_MNT, Linux 6.15+); on each notification the namespace's
 * mountinfo is rescanned, so no event format details matter and nothing is
 * missed when notifications are merged or overflow.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "healer.h"

/* fanotify mount notifications (Linux 6.15 UAPI; bookworm's headers lack them) */
#ifndef FAN_REPORT_MNT
#define FAN_REPORT_MNT 0x00004000
#endif
#ifndef FAN_MARK_MNTNS
#define FAN_MARK_MNTNS 0x00000110
#endif
#ifndef FAN_MNT_ATTACH
#define FAN_MNT_ATTACH 0x01000000
#endif
#ifndef FAN_MNT_DETACH
#define FAN_MNT_DETACH 0x02000000
#endif

enum { EXIT_USAGE = 16 };

static const struct option long_opts[] = {
	{ "supported", no_argument, NULL, 's' },
	{ "mountns", required_argument, NULL, 'm' },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "version", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fputs(
"Usage: xfs_healer_start [--supported] [--mountns PATH] [--dry-run]\n"
"Start xfs_healer@<mount point>.service for every XFS filesystem mounted\n"
"in the mount namespace, now and whenever one is mounted later.\n"
"\n"
"      --supported     exit 0 if the kernel reports mount events, 1 if not\n"
"      --mountns PATH  the mount namespace to watch (/proc/PID/ns/mnt);\n"
"                      only our own is accepted: another one is refused\n"
"                      (its mounts are invisible to xfs_healer@ units)\n"
"      --dry-run       print the units instead of starting them\n"
"  -V, --version       print the version and exit\n"
"  -h, --help          print this help and exit\n", f);
}

struct starter {
	struct fsf_log log;
	struct hm_out out;
	bool dry_run;
	int mi_fd;			/* mountinfo of the watched namespace */
	unsigned long long *seen;	/* mount ids already handled */
	size_t nseen, seen_cap;
	unsigned long long *now;	/* mount ids of this scan */
	size_t nnow, now_cap;
};

/* mountinfo escapes space, tab, newline and backslash as \ooo */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
				      (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
}

static bool push(unsigned long long **v, size_t *n, size_t *cap,
		 unsigned long long x)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		unsigned long long *nv = realloc(*v, nc * sizeof(**v));

		if (!nv)
			return false;
		*v = nv;
		*cap = nc;
	}
	(*v)[(*n)++] = x;
	return true;
}

static bool contains(const unsigned long long *v, size_t n,
		     unsigned long long x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

static void start_for(struct starter *s, const char *mnt)
{
	char unit[1200], msg[1400];

	if (hm_unit_name("xfs_healer", mnt, unit, sizeof(unit)) < 0) {
		hm_say(&s->out, HM_WARNING, "%s: mount point too long for a "
		       "unit name", mnt);
		return;
	}
	if (s->dry_run) {
		printf("%s\n", unit);
		fflush(stdout);
		return;
	}
	if (hm_start_unit(unit, msg, sizeof(msg)) < 0)
		hm_say(&s->out, HM_ERR, "%s: %s", mnt, msg);
	else
		hm_say(&s->out, HM_INFO, "%s: %s", mnt, msg);
}

/* one pass over mountinfo: start a healer for each new XFS root mount */
static int scan(struct starter *s)
{
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	int fd = dup(s->mi_fd);

	if (fd < 0 || lseek(fd, 0, SEEK_SET) < 0 || !(f = fdopen(fd, "r"))) {
		hm_say(&s->out, HM_ERR, "cannot read mountinfo: %s",
		       strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	s->nnow = 0;
	while (getline(&line, &cap, f) > 0) {
		unsigned long long id;
		char root[4096], mnt[4096], fstype[64];
		const char *sep = strstr(line, " - ");

		if (!sep || sscanf(line, "%llu %*u %*s %4095s %4095s", &id, root,
				   mnt) != 3 || sscanf(sep + 3, "%63s", fstype) != 1)
			continue;
		/* only whole filesystems: a healer needs the fs root */
		if (strcmp(fstype, "xfs") || strcmp(root, "/"))
			continue;
		unescape(mnt);
		/* mountinfo's id is reused at once by the next mount: an
		 * unmount and mount between two scans would look like the
		 * same mount; the unique id tells them apart */
		id = hm_mount_key(mnt, id);
		if (!push(&s->now, &s->nnow, &s->now_cap, id))
			break;
		if (contains(s->seen, s->nseen, id))
			continue;
		start_for(s, mnt);
	}
	free(line);
	fclose(f);
	/* forget detached mounts, so that a remount is started again */
	s->nseen = 0;
	for (size_t i = 0; i < s->nnow; i++)
		push(&s->seen, &s->nseen, &s->seen_cap, s->now[i]);
	return 0;
}

static int watch(struct starter *s, int fan, int sfd)
{
	char buf[8192];
	struct pollfd pfd[2] = {
		{ .fd = fan, .events = POLLIN }, { .fd = sfd, .events = POLLIN },
	};

	for (;;) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		if (pfd[1].revents & POLLIN)
			return 0;
		if (pfd[0].revents & POLLIN) {
			/* drain: the content does not matter, see above */
			while (read(fan, buf, sizeof(buf)) > 0)
				;
			if (scan(s) < 0)
				return 1;
		}
	}
}

/*
 * xfs_healer@ units run in systemd's mount namespace (ours, as a service
 * of the same systemd); a mount that exists only in another namespace is
 * invisible there, so its healer could not watch it: refuse.
 */
static bool other_namespace(struct starter *s, const char *mountns)
{
	struct stat a, b;

	if (stat(mountns, &a) < 0) {
		hm_say(&s->out, HM_ERR, "cannot open mount namespace %s: %s",
		       mountns, strerror(errno));
		return true;
	}
	if (stat("/proc/self/ns/mnt", &b) == 0 && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino)
		return false;
	hm_say(&s->out, HM_ERR, "--mountns %s: another mount namespace is not "
	       "supported: xfs_healer@ units run in this one, where its "
	       "mounts are not visible; run xfs_healer_start (or xfs_healer "
	       "MOUNTPOINT) inside that namespace instead", mountns);
	return true;
}

int main(int argc, char **argv)
{
	struct starter s = {
		.log = { .prog = "xfs_healer_start", .level = FSF_NORMAL },
		.mi_fd = -1,
	};
	const char *mountns = NULL;
	bool supported = false;
	sigset_t mask;
	int c, fan, nsfd, sfd, ret;

	s.out.log = &s.log;
	while ((c = getopt_long(argc, argv, "Vh", long_opts, NULL)) != -1) {
		switch (c) {
		case 's': supported = true; break;
		case 'm': mountns = optarg; break;
		case 'n': s.dry_run = true; break;
		case 'V':
			printf("xfs_healer_start (fsforge) %s\n", PACKAGE_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fsf_err(&s.log, "unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	s.out.journal = hm_stderr_is_journal();
	if (mountns && other_namespace(&s, mountns))
		return 1;
	fan = fanotify_init(FAN_REPORT_MNT | FAN_CLOEXEC | FAN_NONBLOCK, O_RDONLY);
	if (fan < 0) {
		hm_say(&s.out, HM_ERR, "this kernel cannot report mount events "
		       "(fanotify FAN_REPORT_MNT, Linux 6.15+): %s",
		       strerror(errno));
		return 1;
	}
	nsfd = open(mountns ? mountns : "/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	if (nsfd < 0) {
		hm_say(&s.out, HM_ERR, "cannot open mount namespace %s: %s",
		       mountns ? mountns : "/proc/self/ns/mnt", strerror(errno));
		return 1;
	}
	if (fanotify_mark(fan, FAN_MARK_ADD | FAN_MARK_MNTNS,
			  FAN_MNT_ATTACH | FAN_MNT_DETACH, nsfd, NULL) < 0) {
		hm_say(&s.out, HM_ERR, "cannot watch mount namespace %s: %s",
		       mountns ? mountns : "/proc/self/ns/mnt", strerror(errno));
		return 1;
	}
	if (supported) {
		hm_say(&s.out, HM_INFO, "mount notifications supported");
		return 0;
	}
	/* the mounts of the namespace: its process's mountinfo */
	if (mountns) {
		char path[4096];
		const char *ns = strstr(mountns, "/ns/mnt");

		if (!ns || (size_t)(ns - mountns) >= sizeof(path) - 16) {
			hm_say(&s.out, HM_ERR, "--mountns: expected "
			       "/proc/PID/ns/mnt, got %s", mountns);
			return EXIT_USAGE;
		}
		snprintf(path, sizeof(path), "%.*s/mountinfo",
			 (int)(ns - mountns), mountns);
		s.mi_fd = open(path, O_RDONLY | O_CLOEXEC);
	} else {
		s.mi_fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	}
	if (s.mi_fd < 0) {
		hm_say(&s.out, HM_ERR, "cannot open mountinfo: %s",
		       strerror(errno));
		return 1;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0 || scan(&s) < 0)
		return 1;
	hm_notify("READY=1\nSTATUS=watching for XFS mounts");
	ret = watch(&s, fan, sfd);
	hm_notify("STOPPING=1");
	close(sfd);
	close(nsfd);
	close(fan);
	close(s.mi_fd);
	free(s.seen);
	free(s.now);
	return ret;
}
