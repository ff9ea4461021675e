/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fsck.ntfs: the state shared by the passes.  Each pass is a file of its
 * own; every problem it can report is a row of ntfs_problems.c, and what
 * happens with a problem in -n/-a/-y/interactive mode is decided by
 * common/problem.c alone.
 */
#ifndef FSCK_NTFS_CHECK_H
#define FSCK_NTFS_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "fsforge/dev.h"
#include "fsforge/log.h"
#include "fsforge/problem.h"
#include "fsforge/progress.h"
#include "ntfs/read.h"

/* a $FILE_NAME found in pass 1 (name in host-order UTF-16) */
struct ntfs_fn_ref {
	uint64_t recno;
	uint64_t parent;		/* parent record number */
	uint16_t parent_seq;
	uint8_t name_len;
	uint8_t name_type;
	uint16_t *name;
	bool indexed;			/* an index entry was found for it */
};

struct ntfs_check {
	const struct fsf_log *log;
	struct fsf_dev dev;
	struct fsf_fix_ctx fix;
	struct ntfs_vol vol;
	bool verbose, progress;
	uint32_t mirr_records;		/* records mirrored in $MFTMirr */

	/* what the volume really uses, built by pass 1 */
	uint8_t *cluster_used;		/* one bit per cluster */
	uint8_t *record_used;		/* one bit per MFT record */
	uint64_t crosslinked;

	/* per record, for the index pass */
	uint16_t *record_seq;		/* sequence numbers */
	uint8_t *record_dir;		/* one bit per record: a directory */
	struct ntfs_fn_ref *names;	/* every $FILE_NAME of a base record */
	size_t nnames, cap_names;
	uint16_t volume_flags;		/* $VOLUME_INFORMATION flags */
	bool volume_flags_found;
};

/* I/O of MFT records (fixups removed on read, applied on write; records
 * of the mirrored range also go to $MFTMirr). */
int ntfs_check_read_record(struct ntfs_check *c, uint64_t recno, uint8_t *buf);
int ntfs_check_write_record(struct ntfs_check *c, uint64_t recno, uint8_t *buf);
/* The non-resident or resident value of attribute TYPE (unnamed) of a
 * checked record, read whole into a malloc'ed buffer. */
int ntfs_check_read_attr(struct ntfs_check *c, const uint8_t *rec,
			 uint32_t type, uint8_t **data, uint64_t *len,
			 struct ntfs_run **runs, long *nruns);
/* Write LEN bytes of DATA back into the clusters of RUNS. */
int ntfs_check_write_runs(struct ntfs_check *c, const struct ntfs_run *runs,
			  long nruns, const uint8_t *data, uint64_t len);

static inline bool bit_get(const uint8_t *map, uint64_t i)
{
	return map[i >> 3] & (1u << (i & 7));
}

static inline void bit_set(uint8_t *map, uint64_t i)
{
	map[i >> 3] |= (uint8_t)(1u << (i & 7));
}

int ntfs_pass0_boot(struct ntfs_check *c);
int ntfs_pass1_mft(struct ntfs_check *c);
int ntfs_pass3_indexes(struct ntfs_check *c);
int ntfs_pass4_bitmaps(struct ntfs_check *c);
int ntfs_pass5_volume(struct ntfs_check *c);

#endif
