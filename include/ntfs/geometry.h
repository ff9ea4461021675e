/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The FILE records a boot sector's geometry leads to, read where it says
 * (libntfs/geometry.c), for a checker that must verify a geometry before
 * it writes through it.  Only reads.
 */
#ifndef NTFS_GEOMETRY_H
#define NTFS_GEOMETRY_H

#include <stdbool.h>
#include <stdint.h>

#include "fsforge/dev.h"
#include "ntfs/read.h"

/* ntfs_geom_read_record() results */
enum { NTFS_GEOM_REC_OK = 0, NTFS_GEOM_REC_BAD = -1, NTFS_GEOM_REC_OTHER = -2 };

/* The record at byte OFF of DEV (G's record size), expected to be in-use
 * base record RECNO: NTFS_GEOM_REC_OK (fixups removed), _BAD (unreadable
 * or not a valid FILE record: WHY), or _OTHER (a valid FILE record that
 * says it is another record: evidence that OFF is the wrong place). */
int ntfs_geom_read_record(struct fsf_dev *dev, const struct ntfs_geometry *g,
			  uint64_t off, uint32_t recno, uint8_t *buf, char *why);
/* Is the record at byte OFF of DEV a valid FILE record, in use or free,
 * whose self-reference (NTFS 3.1, offset 0x2c) says it is RECNO?  BUF: a
 * record's scratch. */
bool ntfs_geom_record_states(struct fsf_dev *dev, const struct ntfs_geometry *g,
			     uint64_t off, uint32_t recno, uint8_t *buf);
/* The runs and size of checked record REC's unnamed $DATA (first
 * extent), decoded against NR_CLUSTERS; 0, or -1 with WHY. */
int ntfs_rec_data_runs(const uint8_t *rec, uint64_t nr_clusters,
		       struct ntfs_run **runs, long *n, uint64_t *size, char *why);
/* Does [OFF, OFF + LEN) (bytes) meet any of RUNS (N, clusters of CS)? */
bool ntfs_runs_meet(const struct ntfs_run *runs, long n, uint32_t cs,
		    uint64_t off, uint64_t len);
/* How many of records 0-3 are at cluster LCN as $MFTMirr holds them;
 * -1 when something else is there (other MFT records, or $MFT's runs MFT
 * (NMFT) themselves).  BUF: a record's scratch. */
int ntfs_geom_mirror_score(struct fsf_dev *dev, const struct ntfs_geometry *g,
			   int64_t lcn, const struct ntfs_run *mft, long nmft,
			   uint8_t *buf);

#endif
