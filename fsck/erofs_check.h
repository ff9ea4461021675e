/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fsck.erofs: the walk over an image and what it checks. */
#ifndef FSCK_EROFS_CHECK_H
#define FSCK_EROFS_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "erofs/read.h"
#include "fsforge/log.h"

struct erofs_check_opts {
	bool digest;			/* --xattr-inode-digest */
	const char *digest_name;	/* its NAME, NULL: the superblock's */
	const char *extract_dir;	/* --extract=DIR, NULL: check only */
	bool extract_xattrs;		/* --xattrs */
	bool overwrite;			/* --overwrite */
	bool preserve_owner;		/* --[no-]preserve-owner */
	bool preserve_perms;		/* --[no-]preserve-perms */
	unsigned int workers;		/* --workers: threads checking files'
					 * content (0, 1: none; --extract
					 * uses none) */
};

struct erofs_check_stats {
	uint64_t errors;		/* problems reported */
	uint64_t inodes;		/* distinct inodes reached */
	uint64_t digests;		/* fingerprints verified */
	uint64_t logical;		/* bytes of file content */
	uint64_t physical;		/* bytes it occupies in the image */
};

/* Walk the tree from the root and check every inode reached.  Returns 0
 * when the walk finished (stats->errors says what it found), a negative
 * errno on an operational failure (already reported). */
int erofs_check(struct erofs_img *img, const struct erofs_check_opts *o,
		const struct fsf_log *log, struct erofs_check_stats *st);

/* erofs_extract.c: restore one object under the extract directory */
struct erofs_extract;
int erofs_extract_begin(struct erofs_extract **ex,
			const struct erofs_check_opts *o,
			const struct fsf_log *log);
/* a directory (before its entries), a file (returns a writable fd), a
 * symlink, a device/FIFO/socket, a hard link to OLD */
int erofs_extract_dir(struct erofs_extract *ex, const char *path);
int erofs_extract_file(struct erofs_extract *ex, const char *path);
int erofs_extract_symlink(struct erofs_extract *ex, const char *path,
			  const char *target);
int erofs_extract_special(struct erofs_extract *ex, const char *path,
			  const struct erofs_rinode *ino);
int erofs_extract_link(struct erofs_extract *ex, const char *path,
		       const char *old);
int erofs_extract_xattr(struct erofs_extract *ex, const char *path,
			const char *name, size_t name_len,
			const uint8_t *value, size_t value_len);
/* owner, mode and times of PATH (directories: deferred to the end) */
int erofs_extract_meta(struct erofs_extract *ex, const char *path,
		       const struct erofs_rinode *ino);
int erofs_extract_end(struct erofs_extract *ex);

#endif
