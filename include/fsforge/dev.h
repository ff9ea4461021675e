/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one I/O layer through which every fsforge tool touches a device or an
 * image file.  It owns the safety rules:
 *  - block devices are opened O_EXCL, so a mounted or otherwise claimed
 *    device is refused by the kernel itself;
 *  - before formatting, libblkid must find no filesystem or partition table
 *    on a block device unless the caller forces it;
 *  - an image file attached to a loop device is refused unless forced;
 *  - an image file written in place is refused while it is in use: the
 *    source of a mount (ntfs-3g and other FUSE drivers name the image as
 *    the mount source in /proc/self/mountinfo), or open for writing by
 *    another process (its /proc/PID/fd and fdinfo flags name it; a read
 *    lease, refused by the kernel while anyone has the file open for
 *    writing, finds writers /proc does not show);
 *  - a dry run (-n) opens read-only and every write fails with EROFS, so no
 *    byte can reach the disk even through a bug in the caller;
 *  - a regular-file output can be written to a temporary file beside the
 *    target and renamed into place on commit, so a failed run never leaves
 *    a half-written image under the requested name.
 */
#ifndef FSFORGE_DEV_H
#define FSFORGE_DEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fsforge/log.h"

enum fsf_dev_flags {
	FSF_DEV_FORCE = 1u << 0,	/* overwrite an existing signature */
	FSF_DEV_DRY_RUN = 1u << 1,	/* never write */
	FSF_DEV_REPLACE = 1u << 2,	/* regular file: temp file + rename */
	FSF_DEV_NO_EXCL = 1u << 3,	/* block device: open without O_EXCL
					 * (mke2fs-style -F -F; dangerous) */
	FSF_DEV_LOOP_STRICT = 1u << 4,	/* refuse a loop-attached target even
					 * with FSF_DEV_FORCE */
	FSF_DEV_OVERWRITE = 1u << 5,	/* regular file written in place on
					 * request: an existing signature is
					 * not probed (in-use checks stay) */
};

/* Asked, when set, before refusing a device that holds a signature:
 * QUESTION names the device and what it holds; true means overwrite. */
typedef bool (*fsf_dev_confirm_fn)(const char *question, void *arg);

struct fsf_undo;

struct fsf_dev {
	int fd;
	char *path;		/* the name the user gave */
	char *tmp_path;		/* FSF_DEV_REPLACE: where we really write */
	char *target;		/* FSF_DEV_REPLACE: PATH with symlinks
				 * resolved, the name renamed onto */
	bool is_blkdev;
	bool dry_run;
	bool committed;
	bool overwrite;		/* FSF_DEV_OVERWRITE: fsync on commit */
	bool fixed_size;	/* writes past size are refused (checkers) */
	dev_t st_dev;		/* identity of what we write, to keep an */
	ino_t st_ino;		/* output file out of its own source tree */
	bool has_old;		/* FSF_DEV_REPLACE: the file being replaced */
	dev_t old_dev;		/* (also kept out of the source tree) */
	ino_t old_ino;
	uint64_t size;		/* block device size in bytes, else 0 */
	const struct fsf_log *log;
	fsf_dev_confirm_fn confirm;	/* see fsf_dev_open_output_confirm */
	void *confirm_arg;
	struct fsf_undo *undo;	/* fsforge/undo.h: blocks saved before
				 * their first overwrite */
	/* reads the device failed (EIO, after one retry), and the byte
	 * ranges of the first few (each reported once, to the log; a read
	 * that covers one fails at once, without asking the device again:
	 * a failing disk may take seconds per attempt) */
	unsigned int read_errors;
#define FSF_DEV_READ_ERRORS_KEPT 16
	uint64_t read_error_at[FSF_DEV_READ_ERRORS_KEPT];
	uint64_t read_error_end[FSF_DEV_READ_ERRORS_KEPT];
};

/* Open PATH to be formatted.  Returns 0 or a negative errno (reported). */
int fsf_dev_open_output(struct fsf_dev *dev, const char *path, unsigned flags,
			const struct fsf_log *log);
/* The same, but a filesystem or partition table found without
 * FSF_DEV_FORCE is first put to CONFIRM (e.g. a y/N prompt).  Block devices
 * and existing image files are probed alike, except with FSF_DEV_REPLACE
 * (the image is replaced by a new file, not overwritten). */
int fsf_dev_open_output_confirm(struct fsf_dev *dev, const char *path,
				unsigned flags, const struct fsf_log *log,
				fsf_dev_confirm_fn confirm, void *arg);
/*
 * Open PATH to be checked (fsck): read-only with FSF_DEV_DRY_RUN, else
 * read-write.  A block device mounted read-write is refused in both cases
 * (its contents move under the checker); a read-write open is exclusive,
 * so any mount or holder is refused.  An image file attached to a loop
 * device is refused for read-write unless FSF_DEV_FORCE; one that is
 * mounted (FUSE) or open for writing by another process is refused for
 * read-write and only warned about read-only.  dev->size is the
 * device or file size in bytes.  Returns 0 or a negative errno (reported).
 */
int fsf_dev_open_check(struct fsf_dev *dev, const char *path, unsigned flags,
		       const struct fsf_log *log);
/* Is the block device DEV (st_rdev) mounted, and read-write? */
int fsf_dev_mount_state(dev_t rdev, bool *mounted, bool *rw);
/* Write all of BUF at OFF (with an undo file attached, the blocks it
 * changes are saved and synced first).  Returns 0 or a negative errno
 * (reported). */
int fsf_dev_pwrite(struct fsf_dev *dev, const void *buf, size_t len,
		   uint64_t off);
/* Read all of BUF at OFF (short read at end of device: -EIO).  A read
 * the device fails (EIO) is tried once more, then counted in
 * dev->read_errors and reported once per offset; -EIO either way. */
int fsf_dev_pread(struct fsf_dev *dev, void *buf, size_t len, uint64_t off);
/* Make LEN bytes at OFF read back as zeros: a hole in a regular file, a
 * zeroing request on a block device, or written zeros where neither is
 * supported.  Returns 0 or a negative errno (reported). */
int fsf_dev_zero(struct fsf_dev *dev, uint64_t off, uint64_t len);
/* Make the output exactly SIZE bytes (files) or check it fits (devices). */
int fsf_dev_set_size(struct fsf_dev *dev, uint64_t size);
/* Flush (fsync) and, for FSF_DEV_REPLACE, rename the temporary file into
 * place and fsync its directory, so that after a crash the name holds the
 * old image or the complete new one; an attached undo file records the
 * state the run left. */
int fsf_dev_commit(struct fsf_dev *dev);
/* Close; an uncommitted temporary file is removed. */
void fsf_dev_close(struct fsf_dev *dev);
/* Is (st_dev, st_ino) the file this device writes to, or the file a
 * FSF_DEV_REPLACE output replaces? */
bool fsf_dev_is_same_file(const struct fsf_dev *dev, dev_t d, ino_t i);

#endif
