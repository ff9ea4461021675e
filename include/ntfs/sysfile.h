/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libntfs: one system file made again on an existing volume, with the
 * code mkfs.ntfs formats with (files.c), for a checker whose copy of the
 * record is beyond repair.  The caller says where the file's content is
 * (or was just put); the record is built as mkfs.ntfs builds it.
 */
#ifndef NTFS_SYSFILE_H
#define NTFS_SYSFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntfs/format.h"

struct ntfs_sysfile {
	struct ntfs_geometry g;
	int64_t now;			/* NTFS time stamped on the record */
	struct ntfs_run data;		/* the unnamed $DATA's one run */
	uint64_t data_size;		/* ... and its size in bytes */
	uint32_t secid;			/* security id; 0: mkfs.ntfs's */
	/* $Volume: its name (little-endian UTF-16) and flags */
	const uint16_t *label;
	size_t label_len;
	uint16_t volume_flags;
	/* $Volume's NTFS version (0.0: 3.1, what mkfs.ntfs writes) */
	uint8_t major_ver, minor_ver;
	/* attributes kept from the old record (whole, framed, in the order
	 * they sort after the built ones: $BadClus:$Bad, $UpCase:$Info),
	 * appended with new instance numbers */
	const uint8_t *keep[2];
	uint32_t keep_len[2];
};

/* $AttrDef's content as mkfs.ntfs writes it */
#define NTFS_SYSFILE_ATTRDEF_BYTES 2560u
void ntfs_sysfile_attrdef(uint8_t *out);
/* $Secure:$SDS as mkfs.ntfs writes it: its default security descriptors
 * and their mirror copy one 256 KiB block on; ntfs_sysfile_size() bytes
 * into OUT. */
void ntfs_sysfile_sds(uint8_t *out);
/* Is RECNO one of the records ntfs_sysfile_record() builds?  (1-4, 6-11;
 * the root directory and $MFT need more than a record) */
bool ntfs_sysfile_buildable(uint32_t recno);
/* The size mkfs.ntfs gives the unnamed $DATA of system file RECNO on a
 * volume of geometry G (0: resident or none).  MIRR_RECORDS: records in
 * $MFTMirr. */
uint64_t ntfs_sysfile_size(uint32_t recno, const struct ntfs_geometry *g,
			   uint32_t mirr_records);
/* Build system record RECNO into REC (G's record size, fixups not
 * applied, the update sequence array in place).  $Extend gets an empty
 * $I30 index: the caller rebuilds it from its children's names.
 * 0, or -1 (not such a record, or it does not fit). */
int ntfs_sysfile_record(uint32_t recno, const struct ntfs_sysfile *s,
			uint8_t *rec);

#endif
