/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * $LogFile on a volume opened for checking (libntfs/logfile_io.c): the
 * journal's runs, the state its restart pages say, whether it is all
 * 0xff, and its reset to two restart pages of a clean, closed log
 * (ntfs_logfile_restart_build) followed by 0xff.  The decisions (when to
 * look, when to reset, what to report) are the caller's.
 */
#ifndef NTFS_LOGFILE_IO_H
#define NTFS_LOGFILE_IO_H

#include <stddef.h>
#include <stdint.h>

#include "ntfs/logfile.h"
#include "ntfs/read.h"

/* Both restart pages, whatever their size: the bytes of the journal's
 * head that are parsed or rewritten. */
#define NTFS_LOG_HEAD (2u * 65536u)

/* The journal's stream: $LogFile's unnamed $DATA. */
struct ntfs_journal {
	struct ntfs_run *runs;
	long nruns;
	uint64_t len;			/* data size in bytes */
};

/* Record 2's $DATA runs into *J: 0, or nonzero when the record cannot be
 * read or checked or has no non-resident $DATA (*J empty; close it in
 * every case). */
int ntfs_journal_open(struct ntfs_vol *v, struct ntfs_journal *j);
void ntfs_journal_close(struct ntfs_journal *j);

/* The first LEN bytes of the journal into BUF (holes read as zeros,
 * bytes past its runs as 0xff): 0 or the device's error. */
int ntfs_journal_head(struct ntfs_vol *v, const struct ntfs_journal *j,
		      uint8_t *buf, uint32_t len);

/* Is every byte of the journal from offset FROM on 0xff already?  1 yes,
 * 0 no, <0 error. */
int ntfs_journal_empty_from(struct ntfs_vol *v, const struct ntfs_journal *j,
			    uint64_t from);

/* What the journal's restart pages say (read-only): INFO filled by
 * ntfs_logfile_parse on its first NTFS_LOG_HEAD bytes.  The state, or <0
 * when the journal cannot be read. */
int ntfs_journal_state(struct ntfs_vol *v, struct ntfs_log_info *info);

/* The head of a reset journal: WANT (NTFS_LOG_HEAD bytes) gets the two
 * restart pages of a clean, closed log for 4 KiB system pages whose
 * current LSN is the highest of the old restart area's and V->max_lsn,
 * 0xff after them; *BUILT their length (0 when the journal is too small
 * for a log: all 0xff).  1 when the journal is already all 0xff or
 * already exactly that (nothing to write; also when it cannot be read),
 * 0 when it must be written with ntfs_journal_reset, <0 on error. */
int ntfs_journal_reset_head(struct ntfs_vol *v, const struct ntfs_journal *j,
			    uint8_t *want, size_t *built);

/* Write the journal whole: the first BUILT bytes of WANT, 0xff after
 * them.  0 or the device's error (-ENOMEM). */
int ntfs_journal_reset(struct ntfs_vol *v, const struct ntfs_journal *j,
		       const uint8_t *want, size_t built);

#endif
