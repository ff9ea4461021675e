// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * -E ztailpacking: the compression plan finds each file's inline tail
 * before the layout has placed its inode, and the data pass stores it after
 * the index.  In between the tail bytes wait in an unlinked temporary file
 * in $TMPDIR (or /tmp), not in memory, so that the plan's memory does not
 * grow with the files' content; the file goes with the last descriptor on
 * every exit path.  The packed inode of -E fragments (fragment.c) is
 * spooled by the same rule (erofs_spool_open).
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

	for (size_t done = 0; done < n->inline_size;) {
		ssize_t w = pwrite(b->tail_fd, bytes + done,
				   n->inline_size - done, (off_t)(at + done));

		if (w < 0) {
			int ret = -errno;

			if (!atomic_exchange(&b->tail_failed, true))
				fsf_err(b->log, "cannot write the spool file of inline tails (in %s): %s",
					erofs_spool_dir(), strerror(-ret));
			return ret;
		}
		done += (size_t)w;
	}
	n->ztail_off = at;
	return 0;
}

int erofs_tail_load(struct erofs_build *b, const struct erofs_node *n,
		    uint8_t *buf)
{
	ssize_t r = pread(b->tail_fd, buf, n->inline_size, (off_t)n->ztail_off);
	int err = r < 0 ? errno : EIO;

	if (r == (ssize_t)n->inline_size)
		return 0;
	fsf_err(b->log, "%s: cannot read its inline tail back from the spool file: %s",
		n->name, r < 0 ? strerror(err) : "short read");
	return -err;
}
