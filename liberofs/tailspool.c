// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * -E ztailpacking: the compression plan finds each file's inline tail
 * before the layout has placed its inode, and the data pass stores it after
 * the index.  In between the tail bytes wait in an unlinked temporary file
 * in $TMPDIR (or /tmp), not in memory, so that the plan's memory does not
 * grow with the files' content; the file goes with the last descriptor on
 * every exit path.  The packed inode of -E fragments (fragment.c) and a
 * tar read from a pipe or with sparse entries (tar.c) are spooled by the
 * same rule (erofs_spool_open): an O_TMPFILE file where the filesystem
 * makes one, else a named one unlinked at once.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

const char *erofs_spool_dir(void)
{
	const char *dir = getenv("TMPDIR");

	return dir && *dir ? dir : "/tmp";
}

/* All LEN bytes at OFF of a spool file, read or written: 0 or -errno. */
int erofs_spool_io(int fd, uint8_t *buf, size_t len, uint64_t off, bool wr)
{
	for (size_t done = 0; done < len;) {
		ssize_t r = wr ? pwrite(fd, buf + done, len - done,
					(off_t)(off + done)) :
				 pread(fd, buf + done, len - done,
				       (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EIO;	/* the spool is shorter than written */
		done += (size_t)r;
	}
	return 0;
}

int erofs_spool_open(struct erofs_build *b, const char *tag, const char *what)
{
	const char *dir = erofs_spool_dir();
	char path[4096];
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/mkfs.erofs-%s.XXXXXX",
			     dir, tag) >= sizeof(path)) {
		fsf_err(b->log, "cannot make the spool file of %s in %s: %s",
			what, dir, strerror(ENAMETOOLONG));
		return -EIO;
	}
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0) {
		/* reported here, and not as ENOSPC, which the caller
		 * takes for no room beside the image */
		fsf_err(b->log, "cannot make the spool file of %s in %s: %s",
			what, dir, strerror(errno));
		return -EIO;
	}
	unlink(path);
	return fd;
}

int erofs_tail_spool_open(struct erofs_build *b)
{
	int fd = erofs_spool_open(b, "tails", "inline tails");

	if (fd < 0)
		return fd;
	b->tail_fd = fd;
	atomic_init(&b->tail_end, 0);
	atomic_init(&b->tail_failed, false);
	return 0;
}

void erofs_tail_spool_close(struct erofs_build *b)
{
	if (b->tail_fd >= 0)
		close(b->tail_fd);
	b->tail_fd = -1;
}

int erofs_tail_spill(struct erofs_build *b, struct erofs_node *n,
		     const uint8_t *bytes)
{
	uint64_t at = atomic_fetch_add(&b->tail_end, n->inline_size);
	int ret = erofs_spool_io(b->tail_fd, (uint8_t *)bytes, n->inline_size, at, true);

	if (ret) {
		/* reported here, and not as ENOSPC, which the caller
		 * takes for no room beside the image */
		if (!atomic_exchange(&b->tail_failed, true))
			fsf_err(b->log, "cannot write the spool file of inline tails (in %s): %s",
				erofs_spool_dir(), strerror(-ret));
		return -EIO;
	}
	n->ztail_off = at;
	return 0;
}

int erofs_tail_load(struct erofs_build *b, const struct erofs_node *n,
		    uint8_t *buf)
{
	int ret = erofs_spool_io(b->tail_fd, buf, n->inline_size, n->ztail_off, false);

	if (!ret)
		return 0;
	fsf_err(b->log, "%s: cannot read its inline tail back from the spool file: %s",
		n->name, strerror(-ret));
	return -EIO;
}
