// SPDX-License-Identifier: GPL-2.0-or-later
/* Device and image-file I/O with exclusive open and signature checks. */
#include "config.h"

#include <blkid.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fsforge/dev.h"
#include "fsforge/undo.h"
#include "undo_format.h"

/* Is a loop device backed by this file?  Returns the loop name or NULL. */
static char *loop_backing_user(const struct stat *st)
{
	DIR *d = opendir("/sys/block");
	struct dirent *de;
	char *found = NULL;

	if (!d)
		return NULL;
	while (!found && (de = readdir(d)) != NULL) {
		char p[512], backing[4096];
		struct stat bst;
		FILE *f;

		if (strncmp(de->d_name, "loop", 4) != 0)
			continue;
		snprintf(p, sizeof(p), "/sys/block/%s/loop/backing_file",
			 de->d_name);
		f = fopen(p, "re");
		if (!f)
			continue;
		if (fgets(backing, sizeof(backing), f)) {
			backing[strcspn(backing, "\n")] = '\0';
			if (stat(backing, &bst) == 0 &&
			    bst.st_dev == st->st_dev && bst.st_ino == st->st_ino)
				found = strdup(de->d_name);
		}
		fclose(f);
	}
	closedir(d);
	return found;
}

/* mountinfo escapes blanks and backslashes as \ooo */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 |
				      (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
}

/* dev and inode of PATH without asking the filesystem for fresh
 * attributes: a hung FUSE daemon must not hang the checker */
static bool same_file(const char *path, const struct stat *st)
{
	struct statx sx;

	if (statx(AT_FDCWD, path, AT_STATX_DONT_SYNC, STATX_TYPE | STATX_INO,
		  &sx) != 0 || !S_ISREG(sx.stx_mode))
		return false;
	return makedev(sx.stx_dev_major, sx.stx_dev_minor) == st->st_dev &&
	       sx.stx_ino == st->st_ino;
}

/* Is the image file (ST, REAL = its canonical path) the source of a
 * mount (ntfs-3g and other FUSE drivers record the image path)?  Writes
 * the mount point and type into WHY. */
static bool file_mounted(const struct stat *st, const char *real, char *why,
			 size_t n)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	bool found = false;

	if (!f)
		return false;
	while (!found && getline(&line, &cap, f) > 0) {
		char mnt[4096], type[64], src[4096];
		char *sep = strstr(line, " - ");

		/* id parent maj:min root MOUNTPOINT opts [tags] - TYPE SOURCE */
		if (!sep || sscanf(line, "%*d %*d %*s %*s %4095s", mnt) != 1 ||
		    sscanf(sep + 3, "%63s %4095s", type, src) != 2)
			continue;
		unescape(src);
		unescape(mnt);
		if (src[0] != '/')
			continue;
		if ((real && strcmp(src, real) == 0) || same_file(src, st)) {
			snprintf(why, n, "mounted on %s (%s)", mnt, type);
			found = true;
		}
	}
	free(line);
	fclose(f);
	return found;
}

/* Another process holding the file open for writing: its pid and name
 * into WHY.  Only processes we may inspect are seen (all, as root). */
static bool file_writer(const struct stat *st, char *why, size_t n)
{
	DIR *proc = opendir("/proc");
	struct dirent *pe;
	pid_t self = getpid();
	bool found = false;

	if (!proc)
		return false;
	while (!found && (pe = readdir(proc)) != NULL) {
		char p[600], comm[64] = "?";
		struct dirent *fe;
		DIR *fds;
		FILE *f;

		if (pe->d_name[0] < '1' || pe->d_name[0] > '9' ||
		    atoi(pe->d_name) == self)
			continue;
		snprintf(p, sizeof(p), "/proc/%s/fd", pe->d_name);
		fds = opendir(p);
		if (!fds)
			continue;
		while (!found && (fe = readdir(fds)) != NULL) {
			unsigned int flags = 0;
			char line[128];

			if (fe->d_name[0] < '0' || fe->d_name[0] > '9')
				continue;
			snprintf(p, sizeof(p), "/proc/%s/fd/%s", pe->d_name,
				 fe->d_name);
			if (!same_file(p, st))
				continue;
			snprintf(p, sizeof(p), "/proc/%s/fdinfo/%s", pe->d_name,
				 fe->d_name);
			f = fopen(p, "re");
			if (!f)
				continue;
			while (fgets(line, sizeof(line), f))
				if (sscanf(line, "flags: %o", &flags) == 1)
					break;
			fclose(f);
			found = (flags & O_ACCMODE) != O_RDONLY;
		}
		closedir(fds);
		if (!found)
			continue;
		snprintf(p, sizeof(p), "/proc/%s/comm", pe->d_name);
		f = fopen(p, "re");
		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
		snprintf(why, n, "open for writing by pid %s (%s)", pe->d_name,
			 comm);
	}
	closedir(proc);
	return found;
}

/* A read lease is refused while anyone, in any namespace, has the file
 * open for writing: it sees the writers /proc does not show us. */
static bool file_open_for_write(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	bool busy = false;

	if (fd < 0)
		return false;
	/* someone opening the file for writing while we hold the lease
	 * makes the kernel send us SIGIO, whose default action kills */
	sigemptyset(&ign.sa_mask);
	sigaction(SIGIO, &ign, &old);
	if (fcntl(fd, F_SETLEASE, F_RDLCK) == 0)
		fcntl(fd, F_SETLEASE, F_UNLCK);
	else
		busy = errno == EAGAIN;
	close(fd);
	sigaction(SIGIO, &old, NULL);
	return busy;
}

/* Is the image file PATH (ST) in use: attached to a loop device (unless
 * ALLOW_LOOP), the source of a mount, open for writing by another
 * process?  WHY says how (one phrase naming the loop device, mount point
 * or process). */
static bool file_in_use(const char *path, const struct stat *st,
			bool allow_loop, char *why, size_t n)
{
	char *real = realpath(path, NULL), *loop = loop_backing_user(st);
	bool busy = true;

	if (loop && !allow_loop)
		snprintf(why, n, "attached to /dev/%s", loop);
	else if (file_mounted(st, real, why, n) || file_writer(st, why, n))
		busy = true;
	else if (!loop && file_open_for_write(path))	/* loop: its driver */
		snprintf(why, n, "open for writing by another process");
	else
		busy = false;
	free(loop);
	free(real);
	return busy;
}

/*
 * libblkid, loaded when a device is first probed rather than linked: only
 * the formatters probe, and the library's pages would otherwise count in
 * the peak memory of every tool (fsck.ntfs, bench/ntfs-fsck).
 */
static struct {
	blkid_probe (*new_probe)(void);
	int (*set_device)(blkid_probe, int, blkid_loff_t, blkid_loff_t);
	int (*enable_superblocks)(blkid_probe, int);
	int (*set_superblocks_flags)(blkid_probe, int);
	int (*enable_partitions)(blkid_probe, int);
	int (*set_partitions_flags)(blkid_probe, int);
	int (*do_fullprobe)(blkid_probe);
	int (*lookup_value)(blkid_probe, const char *, const char **, size_t *);
	void (*free_probe)(blkid_probe);
} bk;

static int load_blkid(const struct fsf_dev *dev)
{
	static const char *const names[] = {
		"blkid_new_probe", "blkid_probe_set_device",
		"blkid_probe_enable_superblocks",
		"blkid_probe_set_superblocks_flags",
		"blkid_probe_enable_partitions",
		"blkid_probe_set_partitions_flags", "blkid_do_fullprobe",
		"blkid_probe_lookup_value", "blkid_free_probe",
	};
	void *fns[sizeof(names) / sizeof(names[0])];
	void *h;

	if (bk.new_probe)
		return 0;
	h = dlopen("libblkid.so.1", RTLD_NOW | RTLD_LOCAL);
	for (size_t i = 0; h && i < sizeof(names) / sizeof(names[0]); i++)
		if (!(fns[i] = dlsym(h, names[i]))) {
			dlclose(h);
			h = NULL;
		}
	if (!h) {
		fsf_err(dev->log, "%s: cannot load libblkid.so.1 to look for an existing filesystem",
			dev->path);
		return -ENOSYS;
	}
	_Static_assert(sizeof(bk) == sizeof(fns), "one pointer per name");
	memcpy(&bk, fns, sizeof(bk));
	return 0;
}

/* libblkid: refuse a device that holds a filesystem or partition table. */
static int check_signatures(struct fsf_dev *dev)
{
	blkid_probe pr;
	const char *type = NULL, *what = "filesystem";
	int ret = load_blkid(dev);

	if (ret)
		return ret;
	pr = bk.new_probe();
	if (!pr)
		return -ENOMEM;
	if (bk.set_device(pr, dev->fd, 0, 0) != 0) {
		bk.free_probe(pr);
		return -EIO;
	}
	bk.enable_superblocks(pr, 1);
	bk.set_superblocks_flags(pr, BLKID_SUBLKS_TYPE);
	bk.enable_partitions(pr, 1);
	bk.set_partitions_flags(pr, BLKID_PARTS_MAGIC);
	if (bk.do_fullprobe(pr) == 0) {
		if (bk.lookup_value(pr, "TYPE", &type, NULL) != 0) {
			what = "partition table";
			if (bk.lookup_value(pr, "PTTYPE", &type,
					    NULL) != 0)
				type = "unknown";
		}
		char q[512];

		snprintf(q, sizeof(q), "%s contains a %s %s", dev->path, type,
			 what);
		if (dev->confirm && dev->confirm(q, dev->confirm_arg)) {
			fsf_warn(dev->log, "%s: overwriting it as confirmed", q);
		} else {
			fsf_err(dev->log, "%s; use --force to overwrite it", q);
			ret = -EEXIST;
		}
	}
	bk.free_probe(pr);
	return ret;
}

static int open_blkdev(struct fsf_dev *dev, unsigned flags)
{
	int oflags = (flags & FSF_DEV_DRY_RUN) ? O_RDONLY : O_RDWR;
	uint64_t bytes = 0;

	/* O_EXCL on a block device: the kernel refuses it while it is
	 * mounted or held by anyone else (md, dm, another mkfs) */
	if (!(flags & FSF_DEV_NO_EXCL))
		oflags |= O_EXCL;
	dev->fd = open(dev->path, oflags | O_CLOEXEC);
	if (dev->fd < 0) {
		int e = errno;

		if (e == EBUSY)
			fsf_err(dev->log, "%s is mounted or in use; refusing to touch it",
				dev->path);
		else
			fsf_err(dev->log, "cannot open %s: %s", dev->path,
				strerror(e));
		return -e;
	}
	if (!(flags & FSF_DEV_FORCE) || (flags & FSF_DEV_LOOP_STRICT)) {
		/* a loop device stacked on this one does not claim it */
		struct stat st;
		char *loop = fstat(dev->fd, &st) == 0 ? loop_backing_user(&st) : NULL;

		if (loop) {
			fsf_err(dev->log, "%s is attached to /dev/%s; detach it or use --force%s",
				dev->path, loop,
				(flags & FSF_DEV_LOOP_STRICT) ? " twice" : "");
			free(loop);
			return -EBUSY;
		}
	}
	if (ioctl(dev->fd, BLKGETSIZE64, &bytes) != 0) {
		int e = errno;

		fsf_err(dev->log, "cannot get size of %s: %s", dev->path,
			strerror(e));
		return -e;
	}
	dev->size = bytes;
	if (!(flags & FSF_DEV_FORCE))
		return check_signatures(dev);
	return 0;
}

/* An existing image file is probed exactly as a block device (as mkfs.xfs
 * does): a filesystem or partition table in it needs FSF_DEV_FORCE or a
 * "yes" from the confirm callback.  Read-only, before anything is opened
 * for writing; an empty file holds nothing to lose. */
static int check_file_signatures(struct fsf_dev *dev, const struct stat *st)
{
	int ret;

	if (st->st_size == 0)
		return 0;
	dev->fd = open(dev->path, O_RDONLY | O_CLOEXEC);
	if (dev->fd < 0)
		return 0;	/* the open for writing reports the error */
	ret = check_signatures(dev);
	close(dev->fd);
	dev->fd = -1;
	return ret;
}

/* PATH with every symlink followed (the last component may not exist
 * yet: a dangling link names the file to create).  NULL on a loop. */
static char *resolve_links(const char *path)
{
	char *cur = strdup(path);

	for (int hops = 0; cur && hops < 40; hops++) {
		char target[4096], *next;
		struct stat st;
		ssize_t n;

		if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
			return cur;
		n = readlink(cur, target, sizeof(target) - 1);
		if (n < 0)
			break;
		target[n] = '\0';
		if (target[0] == '/') {
			next = strdup(target);
		} else {
			const char *slash = strrchr(cur, '/');
			size_t dl = slash ? (size_t)(slash - cur) + 1 : 0;

			next = malloc(dl + (size_t)n + 1);
			if (next) {
				memcpy(next, cur, dl);
				memcpy(next + dl, target, (size_t)n + 1);
			}
		}
		free(cur);
		cur = next;
	}
	free(cur);
	errno = ELOOP;
	return NULL;
}

/* The temporary file beside the (resolved) target: created with the
 * target's mode and owner when it exists, else 0666 & ~umask, as a file
 * created by open(2) would be. */
static int create_replacement(struct fsf_dev *dev, const struct stat *old)
{
	size_t n;
	mode_t mask;

	dev->target = resolve_links(dev->path);
	if (!dev->target) {
		int e = errno;

		fsf_err(dev->log, "cannot resolve %s: %s", dev->path, strerror(e));
		return -e;
	}
	n = strlen(dev->target) + 16;
	dev->tmp_path = malloc(n);
	if (!dev->tmp_path)
		return -ENOMEM;
	snprintf(dev->tmp_path, n, "%s.tmpXXXXXX", dev->target);
	dev->fd = mkostemp(dev->tmp_path, O_CLOEXEC);
	if (dev->fd < 0)
		return -errno;
	if (old) {
		dev->has_old = true;
		dev->old_dev = old->st_dev;
		dev->old_ino = old->st_ino;
		if (fchown(dev->fd, old->st_uid, old->st_gid) != 0 &&
		    (old->st_uid != geteuid() || old->st_gid != getegid()))
			fsf_warn(dev->log, "%s: cannot keep owner %u:%u of the image it replaces: %s",
				 dev->path, (unsigned int)old->st_uid,
				 (unsigned int)old->st_gid, strerror(errno));
		/* after chown, which may clear set-id bits */
		if (fchmod(dev->fd, old->st_mode & 07777) != 0)
			return -errno;
		return 0;
	}
	mask = umask(0);
	umask(mask);
	if (fchmod(dev->fd, 0666 & ~mask) != 0)
		return -errno;
	return 0;
}

static int open_file(struct fsf_dev *dev, unsigned flags)
{
	struct stat st;
	bool exists = stat(dev->path, &st) == 0;

	if (exists) {
		char *loop = loop_backing_user(&st);

		if (!S_ISREG(st.st_mode)) {
			fsf_err(dev->log, "%s is neither a regular file nor a block device",
				dev->path);
			free(loop);
			return -EINVAL;
		}
		if (loop && (!(flags & FSF_DEV_FORCE) ||
			     (flags & FSF_DEV_LOOP_STRICT))) {
			fsf_err(dev->log, "%s is attached to /dev/%s; detach it or use --force%s",
				dev->path, loop,
				(flags & FSF_DEV_LOOP_STRICT) ? " twice" : "");
			free(loop);
			return -EBUSY;
		}
		free(loop);
		/* written in place: a mounted or open image is refused like
		 * a mounted device (only FSF_DEV_NO_EXCL, -F -F, overrides) */
		if (!(flags & (FSF_DEV_DRY_RUN | FSF_DEV_REPLACE |
			       FSF_DEV_NO_EXCL))) {
			char why[4200];

			if (file_in_use(dev->path, &st, true, why, sizeof(why))) {
				fsf_err(dev->log, "%s is %s; refusing to overwrite it",
					dev->path, why);
				return -EBUSY;
			}
		}
		/* a replaced image (temp file + rename, as erofs-utils does)
		 * is a new file: what the old one held is not overwritten */
		if (!(flags & (FSF_DEV_FORCE | FSF_DEV_REPLACE |
			       FSF_DEV_OVERWRITE))) {
			int ret = check_file_signatures(dev, &st);

			if (ret)
				return ret;
		}
	}
	if (flags & FSF_DEV_DRY_RUN) {
		dev->fd = -1;
		return 0;
	}
	dev->overwrite = flags & FSF_DEV_OVERWRITE;
	if (flags & FSF_DEV_REPLACE) {
		int ret = create_replacement(dev, exists ? &st : NULL);

		if (ret) {
			fsf_err(dev->log, "cannot create %s: %s",
				dev->tmp_path && dev->fd >= 0 ? dev->tmp_path :
				dev->path, strerror(-ret));
			if (dev->fd >= 0) {
				close(dev->fd);
				dev->fd = -1;
				unlink(dev->tmp_path);
			}
			free(dev->tmp_path);
			dev->tmp_path = NULL;
			return ret;
		}
	} else {
		/* 0666 & ~umask, as any file open(2) creates */
		dev->fd = open(dev->path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	}
	if (dev->fd < 0) {
		int e = errno;

		fsf_err(dev->log, "cannot create %s: %s", dev->path,
			strerror(e));
		return -e;
	}
	if (fstat(dev->fd, &st) == 0) {
		dev->st_dev = st.st_dev;
		dev->st_ino = st.st_ino;
	}
	return 0;
}

int fsf_dev_open_output(struct fsf_dev *dev, const char *path, unsigned flags,
			const struct fsf_log *log)
{
	return fsf_dev_open_output_confirm(dev, path, flags, log, NULL, NULL);
}

int fsf_dev_open_output_confirm(struct fsf_dev *dev, const char *path,
				unsigned flags, const struct fsf_log *log,
				fsf_dev_confirm_fn confirm, void *arg)
{
	struct stat st;
	int ret;

	memset(dev, 0, sizeof(*dev));
	dev->confirm = confirm;
	dev->confirm_arg = arg;
	dev->fd = -1;
	dev->log = log;
	dev->dry_run = flags & FSF_DEV_DRY_RUN;
	dev->path = strdup(path);
	if (!dev->path)
		return -ENOMEM;
	if (stat(path, &st) == 0 && S_ISBLK(st.st_mode)) {
		dev->is_blkdev = true;
		dev->st_dev = st.st_rdev;
		ret = open_blkdev(dev, flags);
	} else {
		ret = open_file(dev, flags);
	}
	if (ret)
		fsf_dev_close(dev);
	return ret;
}

int fsf_dev_mount_state(dev_t rdev, bool *mounted, bool *rw)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];

	*mounted = *rw = false;
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned int ma, mi;
		char opts[1024];

		/* id parent major:minor root mountpoint options ... */
		if (sscanf(line, "%*d %*d %u:%u %*s %*s %1023s", &ma, &mi, opts) != 3)
			continue;
		if (makedev(ma, mi) != rdev)
			continue;
		*mounted = true;
		if (!strncmp(opts, "rw", 2) && (opts[2] == ',' || !opts[2]))
			*rw = true;
	}
	fclose(f);
	return 0;
}

int fsf_dev_open_check(struct fsf_dev *dev, const char *path, unsigned flags,
		       const struct fsf_log *log)
{
	bool ro = flags & FSF_DEV_DRY_RUN;
	struct stat st;
	int e;

	memset(dev, 0, sizeof(*dev));
	dev->fd = -1;
	dev->log = log;
	dev->dry_run = ro;
	dev->path = strdup(path);
	if (!dev->path)
		return -ENOMEM;
	if (stat(path, &st) != 0) {
		e = errno;
		fsf_err(log, "cannot open %s: %s", path, strerror(e));
		fsf_dev_close(dev);
		return -e;
	}
	if (S_ISBLK(st.st_mode)) {
		bool mounted, rw;

		dev->is_blkdev = true;
		if (fsf_dev_mount_state(st.st_rdev, &mounted, &rw) == 0 && rw) {
			fsf_err(log, "%s is mounted read-write; unmount it first", path);
			fsf_dev_close(dev);
			return -EBUSY;
		}
	} else if (!S_ISREG(st.st_mode)) {
		fsf_err(log, "%s is neither a block device nor an image file", path);
		fsf_dev_close(dev);
		return -EINVAL;
	} else {
		/* an image in use moves under the checker like a mounted
		 * device: refused for writing, a warning for reading */
		char why[4200];

		if (file_in_use(path, &st, ro || (flags & FSF_DEV_FORCE), why,
				sizeof(why))) {
			if (ro) {
				fsf_warn(log, "%s is %s; checking it read-only, results may be inconsistent",
					 path, why);
			} else {
				fsf_err(log, "%s is %s; %s first", path, why,
					!strncmp(why, "attached", 8) ? "detach it" :
					!strncmp(why, "mounted", 7) ? "unmount it" :
					"close it");
				fsf_dev_close(dev);
				return -EBUSY;
			}
		}
	}
	dev->fd = open(path, (ro ? O_RDONLY : O_RDWR) |
		       (dev->is_blkdev && !ro ? O_EXCL : 0) | O_CLOEXEC);
	if (dev->fd < 0) {
		e = errno;
		if (e == EBUSY)
			fsf_err(log, "%s is mounted or in use; refusing to touch it", path);
		else
			fsf_err(log, "cannot open %s: %s", path, strerror(e));
		fsf_dev_close(dev);
		return -e;
	}
	if (dev->is_blkdev) {
		uint64_t bytes = 0;

		if (ioctl(dev->fd, BLKGETSIZE64, &bytes) != 0) {
			e = errno;
			fsf_err(log, "cannot get size of %s: %s", path, strerror(e));
			fsf_dev_close(dev);
			return -e;
		}
		dev->size = bytes;
	} else {
		dev->size = (uint64_t)st.st_size;
		dev->fixed_size = true;	/* a checker never grows an image */
		dev->st_dev = st.st_dev;
		dev->st_ino = st.st_ino;
	}
	return 0;
}

bool fsf_dev_is_same_file(const struct fsf_dev *dev, dev_t d, ino_t i)
{
	if (dev->is_blkdev)
		return false;
	if (dev->has_old && dev->old_dev == d && dev->old_ino == i)
		return true;
	return dev->fd >= 0 && dev->st_dev == d && dev->st_ino == i;
}

/* Every write starts here: nothing under -n or on a closed device,
 * nothing past the end of a device of fixed size, and the old bytes
 * saved to the undo file before they are overwritten. */
static int begin_write(struct fsf_dev *dev, uint64_t off, uint64_t len)
{
	if (dev->dry_run || dev->fd < 0)
		return -EROFS;
	if ((dev->is_blkdev || dev->fixed_size) &&
	    (off > dev->size || len > dev->size - off)) {
		fsf_err(dev->log, "%s: write beyond the end of the device",
			dev->path);
		return -ENOSPC;
	}
	return dev->undo ? fsf_undo_save(dev, off, len) : 0;
}

static int write_all(struct fsf_dev *dev, const void *buf, size_t len,
		     uint64_t off)
{
	const char *p = buf;

	while (len) {
		ssize_t n = pwrite(dev->fd, p, len, (off_t)off);

		if (n < 0) {
			int e = errno;

			if (e == EINTR)
				continue;
			if ((e == ENOSPC || e == EDQUOT) && dev->tmp_path) {
				fsf_err(dev->log, "no room for the new image beside %s (its temporary copy %s): %s",
					dev->path, dev->tmp_path, strerror(e));
				return -e;
			}
			fsf_err(dev->log, "write to %s at offset %llu failed: %s",
				dev->path, (unsigned long long)off,
				strerror(e));
			return -e;
		}
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

int fsf_dev_pwrite(struct fsf_dev *dev, const void *buf, size_t len,
		   uint64_t off)
{
	int ret = begin_write(dev, off, len);

	return ret ? ret : write_all(dev, buf, len, off);
}

/*
 * Read all of LEN bytes at OFF.  -EIO also for the end of the device (a
 * short read that returns nothing); *BAD is set, and *AT to where the
 * failing read began, only when the device itself failed the read.
 */
static int read_all(int fd, void *buf, size_t len, uint64_t off, bool *bad,
		    uint64_t *at)
{
	char *p = buf;

	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			*bad = e == EIO;
			*at = off;
			return -e;
		}
		if (n == 0)
			return -EIO;
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/* Say so once per place: a cache or a pass may ask again for the same bytes */
static void report_read_error(struct fsf_dev *dev, uint64_t at, uint64_t from,
			      uint64_t end, int err)
{
	for (unsigned int i = 0; i < dev->read_errors && i < FSF_DEV_READ_ERRORS_KEPT; i++)
		if (dev->read_error_at[i] == at)
			return;
	if (dev->read_errors < FSF_DEV_READ_ERRORS_KEPT) {
		dev->read_error_at[dev->read_errors] = at;
		dev->read_error_end[dev->read_errors] = end;
		if (dev->log)
			fsf_err(dev->log, "%s: read error at byte %llu (reading bytes %llu-%llu): %s",
				dev->path ? dev->path : "device",
				(unsigned long long)at, (unsigned long long)from,
				(unsigned long long)end - 1, strerror(-err));
	} else if (dev->read_errors == FSF_DEV_READ_ERRORS_KEPT && dev->log) {
		fsf_err(dev->log, "%s: more read errors, not listed",
			dev->path ? dev->path : "device");
	}
	dev->read_errors++;
}

int fsf_dev_pread(struct fsf_dev *dev, void *buf, size_t len, uint64_t off)
{
	uint64_t at = off;
	bool bad = false;
	int ret;

	/* it holds bytes that failed twice already */
	for (unsigned int i = 0; i < dev->read_errors && i < FSF_DEV_READ_ERRORS_KEPT; i++)
		if (off <= dev->read_error_at[i] && off + len >= dev->read_error_end[i])
			return -EIO;
	ret = read_all(dev->fd, buf, len, off, &bad, &at);
	if (!ret || !bad)
		return ret;
	/* a failing disk's error may be transient: one more try, then the
	 * bytes are unreadable (never taken as zeros: the caller gets -EIO) */
	bad = false;
	ret = read_all(dev->fd, buf, len, off, &bad, &at);
	if (ret && bad)
		report_read_error(dev, at, off, off + len, ret);
	return ret;
}

int fsf_dev_zero(struct fsf_dev *dev, uint64_t off, uint64_t len)
{
	static const char zeros[65536];
	int mode = dev->is_blkdev ? FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE :
		   FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
	int ret;

	if (len == 0)
		return dev->dry_run || dev->fd < 0 ? -EROFS : 0;
	if ((ret = begin_write(dev, off, len)))
		return ret;
	if (fallocate(dev->fd, mode, (off_t)off, (off_t)len) == 0)
		return 0;
	while (len) {
		size_t n = len < sizeof(zeros) ? (size_t)len : sizeof(zeros);

		if ((ret = write_all(dev, zeros, n, off)))
			return ret;
		off += n;
		len -= n;
	}
	return 0;
}

int fsf_dev_set_size(struct fsf_dev *dev, uint64_t size)
{
	if (dev->is_blkdev) {
		if (size > dev->size) {
			fsf_err(dev->log, "%s is too small: %llu bytes needed, %llu available",
				dev->path, (unsigned long long)size,
				(unsigned long long)dev->size);
			return -ENOSPC;
		}
		return 0;
	}
	if (dev->dry_run || dev->fd < 0)
		return 0;
	if (dev->undo) {
		/* a shrink drops the tail: save it first */
		struct stat st;
		int ret = 0;

		if (fstat(dev->fd, &st) == 0 && (uint64_t)st.st_size > size)
			ret = fsf_undo_save(dev, size, (uint64_t)st.st_size - size);
		if (ret)
			return ret;
	}
	if (ftruncate(dev->fd, (off_t)size) != 0) {
		int e = errno;

		fsf_err(dev->log, "cannot size %s: %s", dev->path, strerror(e));
		return -e;
	}
	return 0;
}

/* fsync the directory holding PATH, so that a rename in it is durable */
static int sync_parent(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) :
		    strdup(".");
	int fd, ret = 0;

	if (!dir)
		return -ENOMEM;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (fd < 0)
		return -errno;
	if (fsync(fd) != 0 && errno != EINVAL)
		ret = -errno;
	close(fd);
	return ret;
}

int fsf_dev_commit(struct fsf_dev *dev)
{
	if (dev->dry_run || dev->fd < 0)
		return 0;
	/* the data is on stable storage before the name points at it */
	if ((dev->is_blkdev || dev->fixed_size || dev->tmp_path ||
	     dev->overwrite) && fsync(dev->fd) != 0) {
		int e = errno;

		fsf_err(dev->log, "flushing %s failed: %s", dev->path,
			strerror(e));
		return -e;
	}
	if (dev->undo) {
		int ret = fsf_undo_finish(dev);

		if (ret)
			return ret;
	}
	if (dev->tmp_path) {
		int ret;

		if (rename(dev->tmp_path, dev->target) != 0) {
			int e = errno;

			fsf_err(dev->log, "cannot rename %s to %s: %s",
				dev->tmp_path, dev->target, strerror(e));
			return -e;
		}
		dev->committed = true;
		ret = sync_parent(dev->target);
		if (ret) {
			fsf_err(dev->log, "flushing the directory of %s failed: %s",
				dev->target, strerror(-ret));
			return ret;
		}
	}
	dev->committed = true;
	return 0;
}

void fsf_dev_close(struct fsf_dev *dev)
{
	/* a run that ends without commit still leaves a usable undo file:
	 * what it wrote is on the device once flushed */
	if (dev->undo && dev->fd >= 0 && fsync(dev->fd) == 0)
		fsf_undo_finish(dev);
	fsf_undo_free(dev);
	if (dev->fd >= 0)
		close(dev->fd);
	if (dev->tmp_path && !dev->committed)
		unlink(dev->tmp_path);
	free(dev->tmp_path);
	free(dev->target);
	free(dev->path);
	dev->target = NULL;
	dev->fd = -1;
	dev->tmp_path = NULL;
	dev->path = NULL;
}
