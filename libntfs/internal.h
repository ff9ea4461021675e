/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libntfs internals shared by the files of the formatter. */
#ifndef LIBNTFS_INTERNAL_H
#define LIBNTFS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fsforge/dev.h"
#include "fsforge/log.h"
#include "ntfs/format.h"
#include "ntfs/mkfs.h"

enum { SECID_SYSTEM = 0x100, SECID_MODIFY = 0x101, SECID_ROOT = 0x102 };
const uint8_t *ntfs_sid_admins(size_t *len);

/* attrdef.c: the $AttrDef table, NTFS_ATTRDEF_SIZE bytes */
#define NTFS_ATTRDEF_SIZE 2560u
void ntfs_attrdef_build(uint8_t *out);

/* logfile.c */
uint64_t ntfs_logfile_size(uint64_t volume_bytes, uint32_t cluster_size);

/* layout.c: geometry and where every system file goes */
struct ntfs_extent {
	int64_t lcn;
	uint64_t clusters;
};

enum ntfs_area {
	AREA_BOOT, AREA_MFTBMP, AREA_MFT, AREA_MIRR, AREA_LOGFILE,
	AREA_ROOT_IA, AREA_ATTRDEF, AREA_BITMAP, AREA_SDS, AREA_UPCASE,
	AREA_COUNT,
};

struct ntfs_plan {
	struct ntfs_geometry g;
	uint32_t mft_records;		/* initialised records in $MFT */
	uint32_t mirr_records;
	uint64_t size[AREA_COUNT];	/* data size of each area in bytes */
	struct ntfs_extent ext[AREA_COUNT];
	uint64_t mft_zone_end;		/* first cluster after the MFT zone */
};
/* DEV_BYTES: bytes available; DEV_SECTOR: device logical sector size. */
int ntfs_plan_volume(struct ntfs_plan *p, const struct ntfs_mkfs_opts *o,
		     uint64_t dev_bytes, uint32_t dev_sector);

/* files.c: every system MFT record, the root index block */
struct ntfs_build {
	const struct ntfs_plan *plan;
	const struct ntfs_mkfs_opts *opts;
	const uint16_t *upcase;
	const struct ntfs_secure *sec;
	int64_t now;
	const uint16_t *label;		/* little-endian UTF-16 */
	size_t label_len;
	uint8_t volume_guid[16];
	uint8_t *mft;			/* mft_records * record size */
	uint8_t *root_indx;		/* one index block */
	/* each system file's $FILE_NAME value, for the directory indexes */
	uint8_t fn[NTFS_FILE_COUNT_MIN][0x250];
	size_t fnlen[NTFS_FILE_COUNT_MIN];
	/* a record made again on an existing volume (sysfile.c): */
	uint32_t secid;			/* security id of every file; 0: ours */
	uint16_t volume_flags;		/* $VOLUME_INFORMATION flags */
	uint8_t major_ver, minor_ver;	/* its NTFS version; 0.0: 3.1 */
	bool extend_empty;		/* $Extend's $I30 without entries */
	bool bad_kept;			/* $BadClus: $Bad comes from the old record */
};
int ntfs_build_records(struct ntfs_build *b);
/* Only system record REC (1-4, 6-8, 10, 11) of B's plan; 0 or -ENOSPC. */
int ntfs_build_one(struct ntfs_build *b, uint32_t rec);

#endif
