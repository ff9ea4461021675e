// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 5: the journal and the volume's dirty flag.  After repairs the
 * journal ($LogFile) is reset to what chkdsk leaves: two restart pages of
 * a clean, closed log (libntfs/logfile_write.c), every log record page
 * after them 0xff, so that no driver replays records written against the
 * metadata as it was before the repair (the Linux driver cannot replay
 * them anyway), and every driver mounts the volume as cleanly unmounted.
 * Both happen only when nothing was left uncorrected, so that a volume
 * that still needs attention keeps saying so.  A journal that is not
 * empty is read first: its restart pages say whether Windows left changes
 * that were not checkpointed (reported by name, read-only), or are corrupt.
 * Reading and writing the journal is libntfs/logfile_io.c's.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "ntfs/logfile_io.h"
#include "ntfs/repair.h"
#include "ntfs_check.h"
#include "ntfs_problems.h"

#define NTFS_VOLUME_IS_DIRTY 0x0001

/* Name what a journal that is not empty holds (read-only; a journal whose
 * first two restart pages' bytes are all 0xff is judged empty here). */
static void inspect_journal(struct ntfs_check *c)
{
	struct ntfs_log_info info;

	switch (ntfs_journal_state(&c->vol, &info)) {
	case NTFS_LOG_DIRTY:
		fsf_fix_ask(&c->fix, &PR_LOGFILE_DIRTY, "$LogFile",
			    (unsigned long long)info.current_lsn);
		break;
	case NTFS_LOG_CORRUPT:
		fsf_fix_ask(&c->fix, &PR_LOGFILE_CORRUPT, "$LogFile", info.why);
		break;
	default:
		break;
	}
}

/*
 * After a repair: the journal becomes two restart pages of a clean, closed
 * log, the rest 0xff (ntfs_journal_reset_head).  Its current LSN is the
 * highest of the old restart area's and of every FILE record read, so
 * that the LSNs written next are above everything on disk.  A journal
 * that is all 0xff, or that holds exactly that structure with the rest
 * 0xff, is left alone: nothing to replay there, nothing to write.
 */
static void reset_journal(struct ntfs_check *c)
{
	uint8_t *want = malloc(NTFS_LOG_HEAD);
	struct ntfs_journal j = { 0 };
	size_t built;

	if (want && !ntfs_journal_open(&c->vol, &j) &&
	    !ntfs_journal_reset_head(&c->vol, &j, want, &built) &&
	    fsf_fix_ask(&c->fix, &PR_LOGFILE_RESET, "$LogFile") &&
	    ntfs_journal_reset(&c->vol, &j, want, built))
		fsf_fix_failed(&c->fix);
	ntfs_journal_close(&j);
	free(want);
}

int ntfs_pass5_volume(struct ntfs_check *c)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	char why[NTFS_WHY];
	uint8_t *rec;
	int ret = 0;

	if (!c->fix.fatal)
		inspect_journal(c);
	if (c->fix.left || c->fix.preen_halted || c->fix.fatal) {
		/* -n: the dirty flag -a clears once the rest is repaired */
		if (c->fix.mode == FSF_MODE_NO && !c->fix.fatal &&
		    c->volume_flags & NTFS_VOLUME_IS_DIRTY)
			fsf_fix_ask(&c->fix, &PR_VOLUME_DIRTY, "$Volume");
		return 0;
	}
	if (c->fix.fixed || (c->volume_flags & NTFS_VOLUME_IS_DIRTY &&
			     c->fix.mode != FSF_MODE_NO))
		reset_journal(c);
	if (!(c->volume_flags & NTFS_VOLUME_IS_DIRTY))
		return 0;
	if (!fsf_fix_ask(&c->fix, &PR_VOLUME_DIRTY, "$Volume"))
		return 0;
	rec = malloc(rs);
	if (!rec)
		return -ENOMEM;
	ret = ntfs_vol_read_record(&c->vol, NTFS_FILE_VOLUME, rec);
	if (!ret && ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		ret = -EUCLEAN;
	if (!ret)
		ret = ntfs_rec_clear_volume_flags(rec, NTFS_VOLUME_IS_DIRTY);
	if (!ret)
		ret = ntfs_check_write_record(c, NTFS_FILE_VOLUME, rec);
	if (ret)
		fsf_fix_failed(&c->fix);
	free(rec);
	return 0;
}
