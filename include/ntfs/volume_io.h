/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libntfs volume I/O: MFT records and attribute data of a struct ntfs_vol,
 * through the fsforge device layer (V->dev).  Records are read raw (the
 * caller checks them with ntfs_record_check) and written with their
 * fixups applied; attribute values and streams are read and written in
 * the clusters their runs name.
 */
#ifndef NTFS_VOLUME_IO_H
#define NTFS_VOLUME_IO_H

#include <stdint.h>

#include "ntfs/read.h"

/* record_io.c: MFT records, read through a small cache of chunks of
 * consecutive records.  Any other write to the MFT's clusters must be
 * followed by ntfs_vol_cache_drop(); ntfs_vol_cache_free() when done. */
void ntfs_vol_cache_drop(struct ntfs_vol *v);
void ntfs_vol_cache_free(struct ntfs_vol *v);
/* Record RECNO as on disk into BUF (a record's size): 0, -ERANGE outside
 * $MFT, or the device's error. */
int ntfs_vol_read_record(struct ntfs_vol *v, uint64_t recno, uint8_t *buf);
/* Record RECNO from BUF (fixups removed; its update sequence number is
 * bumped, fixups applied for the write and removed again).  Records below
 * MIRRORED also go to $MFTMirr at V->boot.mftmirr_lcn (written only after
 * the $MFT copy was). */
int ntfs_vol_write_record(struct ntfs_vol *v, uint64_t recno, uint8_t *buf,
			  uint64_t mirrored);

/* record_assume.c: record RECNO from BUF (fixups removed) kept in memory
 * only, as ntfs_vol_write_record would have written it; every later
 * ntfs_vol_read_record of RECNO returns it (a read-only check going on as
 * a declined repair would have left the record).  0; -ENOSPC when a new
 * record would take the table past its budget (V->assumed.budget, 0:
 * NTFS_ASSUMED_BUDGET; counted in V->assumed.refused; a record already
 * held is always replaced); -ENOMEM.  On failure nothing is assumed and
 * the caller leaves the record as a declined repair does.
 * ntfs_vol_assume_record_raw: the same from RAW, a record as on disk
 * (fixups applied), kept byte for byte (as ntfs_vol_write_record_raw or
 * ntfs_vol_write_record0 would write it).
 * ntfs_vol_assumed: its raw bytes, or NULL; ntfs_vol_assumed_free: drop
 * them all. */
/* Bytes the assumed records and their table may take: 64 MiB, 63,488
 * records of 1 KiB (and a table of 131,072 slots).  A read-only check of
 * a volume whose every record wants a repair would otherwise hold a copy
 * of its whole $MFT (10 GiB for a 10 GiB MFT). */
#define NTFS_ASSUMED_BUDGET	(64ULL << 20)
int ntfs_vol_assume_record(struct ntfs_vol *v, uint64_t recno, const uint8_t *buf);
int ntfs_vol_assume_record_raw(struct ntfs_vol *v, uint64_t recno, const uint8_t *raw);
const uint8_t *ntfs_vol_assumed(const struct ntfs_vol *v, uint64_t recno);
void ntfs_vol_assumed_free(struct ntfs_vol *v);

/* attr_io.c: the resident or non-resident value of the unnamed attribute
 * TYPE of checked record REC, read whole into a malloc'ed *DATA (*LEN
 * bytes; its runs, if non-resident, in *RUNS).  0, -ENOENT (no such
 * attribute), -EUCLEAN (corrupt), -EFBIG, -ENOMEM or the device's error;
 * free *DATA and *RUNS in every case. */
int ntfs_vol_read_attr(struct ntfs_vol *v, const uint8_t *rec, uint32_t type,
		       uint8_t **data, uint64_t *len, struct ntfs_run **runs,
		       long *nruns);
/* Only the runs and data size of non-resident attribute TYPE (-EINVAL
 * when it is resident). */
int ntfs_vol_attr_runs(struct ntfs_vol *v, const uint8_t *rec, uint32_t type,
		       uint64_t *len, struct ntfs_run **runs, long *nruns);
/* Write LEN bytes of DATA into the clusters of RUNS (holes skipped); the
 * record cache is dropped. */
int ntfs_vol_write_runs(struct ntfs_vol *v, const struct ntfs_run *runs,
			long nruns, const uint8_t *data, uint64_t len);
/* Where bytes BYTE..BYTE+LEN of a non-resident stream are on disk, if in
 * one run; UINT64_MAX otherwise. */
uint64_t ntfs_runs_offset(const struct ntfs_run *runs, long n, uint32_t cs,
			  uint64_t byte, uint64_t len);
/* Do RUNS (N of them) map every byte of BYTE..BYTE+LEN to clusters (no
 * hole, nothing past the runs), so that ntfs_vol_runs_pwrite can write
 * them? */
bool ntfs_runs_mapped(const struct ntfs_run *runs, long n, uint32_t cs,
		      uint64_t byte, uint64_t len);
/* Read LEN bytes at BYTE of a non-resident stream, across as many runs as
 * they span: 0, or -1 for a hole, bytes past the runs or an I/O error. */
int ntfs_vol_runs_pread(struct ntfs_vol *v, const struct ntfs_run *runs,
			long n, uint64_t byte, uint64_t len, void *buf);
/* The same, written (the record cache is dropped first). */
int ntfs_vol_runs_pwrite(struct ntfs_vol *v, const struct ntfs_run *runs,
			 long n, uint64_t byte, uint64_t len, const void *buf);

#endif
