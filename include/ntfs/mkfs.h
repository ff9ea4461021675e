/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libntfs: format an NTFS 3.1 volume (the engine behind mkfs.ntfs). */
#ifndef NTFS_MKFS_H
#define NTFS_MKFS_H

#include <stdbool.h>
#include <stdint.h>

#include "fsforge/log.h"

struct ntfs_mkfs_opts {
	const char *device;
	uint64_t num_sectors;		/* 0: the whole device/file */
	uint32_t sector_size;		/* 0: from the device, else 512 */
	uint32_t cluster_size;		/* 0: 4096, grown for huge volumes */
	const char *label;		/* UTF-8, or NULL */
	bool full;			/* zero every sector (--full) */
	bool no_action;			/* -n: compute, write nothing */
	bool enable_compression;	/* -C */
	bool no_indexing;		/* -I */
	bool zero_time;			/* -T */
	bool with_uuid;			/* -U */
	int force;			/* -F count: 1 signatures, 2 busy */
	uint64_t part_start;		/* -p, hidden sectors */
	bool part_start_set;
	uint32_t heads, sectors_per_track;	/* -H, -S */
	int zone_multiplier;		/* -z 1..4 */
	const struct fsf_log *log;
	/* asked before overwriting a filesystem or partition table found
	 * without -F (mkfs.ntfs: a y/N question); NULL refuses */
	bool (*confirm)(const char *question, void *arg);
	void *confirm_arg;
};

/* 0 on success, or a negative errno (already reported). */
int ntfs_mkfs(const struct ntfs_mkfs_opts *o);

#endif
