/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Record 0 and the records $MFTMirr copies (libntfs/mft_mirror.c): read
 * and written as on disk (fixups applied) at the clusters the boot sector
 * names, judged as system records, compared with their copies.
 */
#ifndef NTFS_MFT_MIRROR_H
#define NTFS_MFT_MIRROR_H

#include <stdbool.h>
#include <stdint.h>

#include "ntfs/read.h"

/* Byte offset of record RECNO's copy in $MFTMirr. */
uint64_t ntfs_vol_mirror_offset(const struct ntfs_vol *v, uint64_t recno);
/* Record RECNO's copy in $MFTMirr, as on disk, into BUF (a record's
 * size); record 0 at the cluster the boot sector gives $MFT, read and
 * written as on disk; RAW written as it is at record RECNO's place in
 * $MFT (-ERANGE outside it).  0 or the device's error. */
int ntfs_vol_read_mirror(struct ntfs_vol *v, uint64_t recno, uint8_t *buf);
int ntfs_vol_read_record0(struct ntfs_vol *v, uint8_t *buf);
int ntfs_vol_write_record0(struct ntfs_vol *v, const uint8_t *raw);
int ntfs_vol_write_record_raw(struct ntfs_vol *v, uint64_t recno,
			      const uint8_t *raw);

/* Is REC (as on disk: its fixups are removed here) a system record that
 * $MFTMirr can vouch for?  A valid base record in use whose attributes
 * parse, with $STANDARD_INFORMATION and $FILE_NAME (or a list), record 0
 * also $DATA with a runlist and $BITMAP.  0, or -1 with WHY. */
int ntfs_sysrec_usable(const struct ntfs_vol *v, uint8_t *rec, uint64_t recno,
		       char *why);
/* Is MIR, a usable $MFTMirr copy of record 0 that differs from REC
 * ($MFT's, usable), the newer one, by the evidence on disk?  *WHY says
 * so. */
bool ntfs_mft_mirror_newer(struct ntfs_vol *v, const uint8_t *rec,
			   const uint8_t *mir, char *why);
/* Is RAW (as on disk, not changed) a usable copy of mirrored record
 * RECNO: a usable system record for 0-11, a valid record for the rest?
 * 0, or -1 with WHY. */
int ntfs_mirrored_usable(const struct ntfs_vol *v, const uint8_t *raw,
			 uint64_t recno, char *why);
/* Do two copies of a record (fixups removed) say the same, every byte
 * (ntfsck compares the slack after the bytes in use too)? */
bool ntfs_rec_same(const uint8_t *a, const uint8_t *b, uint32_t rs);
/* The record number a record's header gives (RECNO if it has none). */
uint64_t ntfs_rec_self_ref(const uint8_t *rec, uint64_t recno);

#endif
