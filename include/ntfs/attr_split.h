/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An attribute split over extension records (libntfs/attr_split.c): the
 * extents an $ATTRIBUTE_LIST names, found in their records and joined in
 * VCN order; $MFT's own $DATA before the MFT can be read past its first
 * extent, and any other unnamed non-resident attribute read whole.
 */
#ifndef NTFS_ATTR_SPLIT_H
#define NTFS_ATTR_SPLIT_H

#include <stdint.h>

#include "ntfs/read.h"

/* The extent of the unnamed non-resident TYPE at VCN in checked record
 * REC into *X (its runs decoded against V's clusters; *SIZE, when given:
 * its data size).  0, or -1 with WHY. */
int ntfs_attr_extent_at(struct ntfs_vol *v, const uint8_t *rec, uint32_t type,
			int64_t vcn, struct ntfs_attr_extent *x, uint64_t *size,
			char *why);

/* $MFT's $DATA (first extent in V->mft_runs, SIZE bytes) with its later
 * extents, named by record 0's (REC0) attribute list, joined into
 * V->mft_runs.  0, or -1 with WHY; V->mft_records is left 0 for the
 * caller to set. */
int ntfs_vol_mft_extents(struct ntfs_vol *v, const uint8_t *rec0, uint64_t size,
			 char *why);

/* Unnamed non-resident attribute TYPE of file BASE in several extents
 * (its list names them; $MFT's $BITMAP when it grew large): its value
 * (*DATA, *LEN: the data size) read through the joined runs (*RUNS,
 * *NRUNS).  0, -ENOMEM, or -EUCLEAN when the extents do not join or
 * cannot be read. */
int ntfs_vol_read_split(struct ntfs_vol *v, uint64_t base, uint32_t type,
			uint8_t **data, uint64_t *len, struct ntfs_run **runs,
			long *nruns);

#endif
