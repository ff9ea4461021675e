/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * $MFT's records past what record 0 says (libntfs/mft_tail.c): those
 * hidden past a data size cut short, a lost tail right after the last
 * run, a tail the driver put elsewhere.  Reads only; V->mft_records is
 * widened for a look and given back, the record cache dropped.
 */
#ifndef NTFS_MFT_TAIL_H
#define NTFS_MFT_TAIL_H

#include <stdbool.h>
#include <stdint.h>

#include "ntfs/read.h"

/* The $MFT bitmap as the checker looks at it: the bytes of its size (BM,
 * LEN), and past them, up to BITS (what its allocation holds), bytes
 * read from its runs in windows (a driver that grew the MFT set them
 * there; the size is as stale as what it describes).  WIN_AT starts at
 * UINT64_MAX; free WIN when done. */
#define TAIL_BM_WINDOW 4096u
struct ntfs_mft_bm {
	const uint8_t *bm;
	uint64_t len, bits;
	const struct ntfs_run *runs;
	long nruns;
	uint8_t *win;
	uint64_t win_at;	/* byte of the bitmap in win[0] */
};

/*
 * Records in use past $MFT's data size: the $MFT bitmap marks them and
 * they hold FILE records in use, in clusters $MFT already owns.  Returns
 * how many; *END is one past the last.
 */
uint64_t ntfs_mft_hidden_records(struct ntfs_vol *v, struct ntfs_mft_bm *bv,
				 uint64_t *end);

/*
 * Records past $MFT's allocation (TOP records) right after its last run,
 * FILE records carrying their own numbers in sequence: how many records
 * that lost tail holds up to the last one both the bitmap and its own
 * flags have in use (0: none, or a record in use claims its clusters).
 */
uint64_t ntfs_mft_lost_tail(struct ntfs_vol *v, struct ntfs_mft_bm *bv,
			    uint64_t top);

/*
 * A lost tail that is not right after the last run: the driver that
 * grew the MFT found the clusters after it taken and put the MFT's next
 * extent elsewhere.  Looked for only when the $MFT bitmap (BV) has the
 * first record past the allocation (TOP records) in use (a driver takes
 * the lowest free records), and decided conservatively: the one
 * cluster-aligned FILE record numbered TOP in a cluster $Bitmap has in
 * use that no record in use claims (two such: left; a FILE record inside
 * a file's data, an image kept on the volume, is the file's), the
 * records after it numbered in sequence, up to the last one both its
 * flag and its bit have in use; no record of the MFT in use (those mapped
 * and those found) claims a cluster of that run.  The run found: MV (its
 * length 0: none); *WHY says why a record found there is not taken (two
 * of them, or clusters claimed), empty when none is (a stray bit).  The
 * volume is read in chunks with a progress line labelled PROGRESS (NULL:
 * none).  0 or -ENOMEM.
 */
struct ntfs_mft_moved {
	int64_t lcn;
	uint64_t len, records;
};
int ntfs_mft_moved_tail(struct ntfs_vol *v, struct ntfs_mft_bm *bv,
			uint64_t top, struct ntfs_mft_moved *mv, char *why,
			const char *progress);

/* The $MFT bitmap *BM (*LEN bytes) of BV widened to hold RECORDS bits
 * (8-byte steps, as drivers grow it), the bytes past its size read from
 * its allocation.  -ENOMEM; 0 otherwise, the bitmap unchanged when those
 * bytes cannot be read. */
int ntfs_mft_widen_bitmap(struct ntfs_vol *v, uint8_t **bm, uint64_t *len,
			  struct ntfs_mft_bm *bv, uint64_t records);

#endif
