// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A failing disk for tests, without a root device or device-mapper:
 * loaded with LD_PRELOAD, it makes reads of one image file fail for
 * listed byte ranges, as a disk with unreadable sectors does.
 *
 *   FSFORGE_EIO_FILE  the image (matched by device and inode, so any
 *                     path or fd of it is caught)
 *   FSFORGE_EIO       ranges START+LEN[,START+LEN...] in bytes
 *   FSFORGE_EIO_MODE  eio   (default) a read touching a range fails
 *                           with EIO and transfers nothing;
 *                     short the bytes before the range come back (a
 *                           short read), a read starting in it fails
 *                           with EIO: the kernel's buffered reads of a
 *                           medium error;
 *                     once  each range fails once (EIO), then reads
 *                           back fine: a transient error a retry cures
 *   FSFORGE_EIO_LOG   optional: one line "OFFSET LEN" appended per
 *                     read that failed or came back short, so a test
 *                     can tell that the range was read at all
 *
 * Caught: read, pread, pread64, readv, preadv, preadv64.  Writes pass
 * through untouched (a sector rewritten on a real disk is remapped and
 * reads back; the lab's oracles read the image without the shim).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_RANGES 64

static struct range {
	uint64_t start, end;
	int failed;	/* "once": it has failed already */
} ranges[MAX_RANGES];
static int nranges, mode;	/* 0 eio, 1 short, 2 once */
static dev_t img_dev;
static ino_t img_ino;
static int active;

static ssize_t (*real_pread)(int, void *, size_t, off_t);
static ssize_t (*real_read)(int, void *, size_t);
static ssize_t (*real_preadv)(int, const struct iovec *, int, off_t);

__attribute__((constructor)) static void eio_init(void)
{
	const char *f = getenv("FSFORGE_EIO_FILE");
	const char *r = getenv("FSFORGE_EIO");
	const char *m = getenv("FSFORGE_EIO_MODE");
	struct stat st;

	real_pread = (ssize_t (*)(int, void *, size_t, off_t))dlsym(RTLD_NEXT, "pread64");
	real_read = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
	real_preadv = (ssize_t (*)(int, const struct iovec *, int, off_t))dlsym(RTLD_NEXT, "preadv64");
	if (!f || !r || stat(f, &st) != 0)
		return;
	img_dev = st.st_dev;
	img_ino = st.st_ino;
	while (*r && nranges < MAX_RANGES) {
		char *end;
		unsigned long long s = strtoull(r, &end, 0), l;

		if (*end != '+')
			break;
		l = strtoull(end + 1, &end, 0);
		ranges[nranges].start = s;
		ranges[nranges].end = s + l;
		nranges++;
		if (*end != ',')
			break;
		r = end + 1;
	}
	mode = m && !strcmp(m, "short") ? 1 : m && !strcmp(m, "once") ? 2 : 0;
	active = nranges > 0;
}

static int is_image(int fd)
{
	struct stat st;

	return active && fstat(fd, &st) == 0 && st.st_dev == img_dev &&
	       st.st_ino == img_ino;
}

static void note(uint64_t off, size_t len)
{
	const char *p = getenv("FSFORGE_EIO_LOG");
	char line[64];
	int fd, n;

	if (!p)
		return;
	fd = open(p, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	n = snprintf(line, sizeof(line), "%llu %zu\n", (unsigned long long)off, len);
	if (write(fd, line, (size_t)n) < 0)
		n = 0;
	close(fd);
}

/*
 * How many bytes of [OFF, OFF+LEN) may be read: LEN when no range is
 * touched, else -1 (EIO) or, in short mode, the bytes before the first
 * range touched.
 */
static ssize_t allowed(uint64_t off, size_t len)
{
	uint64_t end = off + len, cut = end;
	int hit = 0;

	for (int i = 0; i < nranges; i++) {
		struct range *g = &ranges[i];

		if (g->start >= end || g->end <= off)
			continue;
		if (mode == 2) {
			if (g->failed)
				continue;
			g->failed = 1;
		}
		hit = 1;
		if (g->start < cut)
			cut = g->start;
	}
	if (!hit)
		return (ssize_t)len;
	note(off, len);
	if (mode == 1 && cut > off)
		return (ssize_t)(cut - off);
	return -1;
}

ssize_t pread64(int fd, void *buf, size_t len, off_t off)
{
	ssize_t n;

	if (!real_pread)
		eio_init();
	if (!is_image(fd) || off < 0)
		return real_pread(fd, buf, len, off);
	n = allowed((uint64_t)off, len);
	if (n < 0) {
		errno = EIO;
		return -1;
	}
	return real_pread(fd, buf, (size_t)n, off);
}

ssize_t pread(int fd, void *buf, size_t len, off_t off)
{
	return pread64(fd, buf, len, off);
}

ssize_t read(int fd, void *buf, size_t len)
{
	off_t off;
	ssize_t n;

	if (!real_read)
		eio_init();
	if (!is_image(fd) || (off = lseek(fd, 0, SEEK_CUR)) < 0)
		return real_read(fd, buf, len);
	n = allowed((uint64_t)off, len);
	if (n < 0) {
		errno = EIO;
		return -1;
	}
	return real_read(fd, buf, (size_t)n);
}

/* vectored reads: checked as one span; a short one is cut to the span */
ssize_t preadv64(int fd, const struct iovec *iov, int cnt, off_t off)
{
	size_t total = 0;
	ssize_t n;

	if (!real_preadv)
		eio_init();
	if (!is_image(fd) || off < 0)
		return real_preadv(fd, iov, cnt, off);
	for (int i = 0; i < cnt; i++)
		total += iov[i].iov_len;
	n = allowed((uint64_t)off, total);
	if (n < 0) {
		errno = EIO;
		return -1;
	}
	if ((size_t)n == total)
		return real_preadv(fd, iov, cnt, off);
	/* short: read the allowed prefix piecewise */
	total = 0;
	for (int i = 0; i < cnt && total < (size_t)n; i++) {
		size_t want = iov[i].iov_len < (size_t)n - total ?
			      iov[i].iov_len : (size_t)n - total;
		ssize_t got = real_pread(fd, iov[i].iov_base, want, off + (off_t)total);

		if (got < 0)
			return total ? (ssize_t)total : -1;
		total += (size_t)got;
		if ((size_t)got < want)
			break;
	}
	return (ssize_t)total;
}

ssize_t preadv(int fd, const struct iovec *iov, int cnt, off_t off)
{
	return preadv64(fd, iov, cnt, off);
}

ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	off_t off;
	ssize_t n;

	if (!is_image(fd) || (off = lseek(fd, 0, SEEK_CUR)) < 0) {
		ssize_t (*rv)(int, const struct iovec *, int) =
			(ssize_t (*)(int, const struct iovec *, int))dlsym(RTLD_NEXT, "readv");
		return rv(fd, iov, cnt);
	}
	n = preadv64(fd, iov, cnt, off);
	if (n > 0)
		lseek(fd, n, SEEK_CUR);
	return n;
}
