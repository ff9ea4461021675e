/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fsck.erofs: regular files' content checked (decoded, fingerprinted,
 * written out by --extract), on worker threads or inline. */
#ifndef FSCK_EROFS_FILES_H
#define FSCK_EROFS_FILES_H

#include <stdbool.h>
#include <stdint.h>

#include "erofs/read.h"
#include "erofs_check.h"
#include "fsforge/log.h"

/* one regular file: what the walk found, then what its content gave */
struct erofs_fjob {
	struct erofs_rinode ino;
	char *path;
	int fd;				/* the extracted file, -1: none */
	bool want;			/* a fingerprint is to be checked */
	bool have_digest, digest_bad;	/* its xattr: found, malformed */
	uint8_t digest[32];
	const char *digest_name;
	/* results */
	uint64_t phys;
	bool verified;			/* the fingerprint matched */
	unsigned int nmsg;
	char *msg;			/* problems, in order, each NUL-ended
					 * (malloc()ed when there is one) */
	size_t msglen;
	bool done;
};

struct erofs_fpool;

/* WORKERS threads reading through clones of IMG (0 or 1: every file
 * checked inline by erofs_fpool_submit).  Results are reported (LOG,
 * ST) in the order the files were submitted. */
int erofs_fpool_start(struct erofs_fpool **pool, struct erofs_img *img,
		      unsigned int workers, const struct fsf_log *log,
		      struct erofs_check_stats *st);
/* check the file of JOB (PATH is copied when it is queued) */
int erofs_fpool_submit(struct erofs_fpool *pool, const struct erofs_fjob *job);
/* report every file submitted so far */
void erofs_fpool_drain(struct erofs_fpool *pool);
/* drain, stop the threads, free */
void erofs_fpool_stop(struct erofs_fpool *pool);

#endif
