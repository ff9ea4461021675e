/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * $MFT grown to the records found past what record 0 says
 * (libntfs/mft_grow.c, ntfs/mft_tail.h finds them).  The records are
 * written with ntfs_vol_write_record(), those below MIRR to $MFTMirr too.
 * 0, -ENOMEM, -EUCLEAN (what is on disk is not what was expected: nothing
 * written) or the device's error.
 */
#ifndef NTFS_MFT_GROW_H
#define NTFS_MFT_GROW_H

#include <stdint.h>

#include "ntfs/read.h"

/* $MFT's last extent given the runs V->mft_runs has past its lowest
 * VCN (its last run grown over a lost tail, or runs added where the tail
 * was found elsewhere): the mapping pairs and highest VCN of the extent,
 * in record 0 or, with an attribute list, in the extension record that
 * holds it; record 0's allocated size (the first extent's) grows with
 * it.  Only when that extent ends at OLD clusters, where the old
 * allocation ended, with the runs it had, and its pairs fit in its
 * record; the $BITMAP gets the size BMBYTES where its allocation holds
 * it. */
int ntfs_mft_grow_runs(struct ntfs_vol *v, uint64_t mirr, uint64_t bmbytes,
		       uint64_t old);

/* $MFT's data size and initialized size set to BYTES (record 0 and its
 * mirror copy); the runs on disk (record 0's and its extents' as
 * written: MAPPED bytes) already hold them, else nothing is written (a
 * tail run added in memory but not written, declined or without room,
 * maps nothing on disk).  A stale record 0 of an $MFT with an attribute
 * list (its later extents, up to date in their extension records, map
 * more than its sizes say) gets the allocated size of the runs too, and
 * the $BITMAP the size BMBYTES when its allocation holds it. */
int ntfs_mft_grow_size(struct ntfs_vol *v, uint64_t mirr, uint64_t bytes,
		       uint64_t mapped, uint64_t bmbytes);

#endif
