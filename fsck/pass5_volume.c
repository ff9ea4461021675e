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
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/logfile.h"
#include "ntfs_check.h"
#include "ntfs_problems.h"

#define NTFS_VOLUME_IS_DIRTY 0x0001

#define CHUNK (1u << 20)

/* Is every byte of the journal from file offset FROM on 0xff already?
 * 1 yes, 0 no, <0 error. */
static int journal_empty(struct ntfs_check *c, const struct ntfs_run *runs,
			 long n, uint8_t *buf, uint64_t from)
{
	uint32_t cs = c->vol.boot.g.cluster_size;
	uint64_t foff = 0;

	for (long i = 0; i < n; foff += runs[i].len * cs, i++) {
		uint64_t off = (uint64_t)runs[i].lcn * cs, left = runs[i].len * cs;
		uint64_t at = foff;

		if (at + left <= from)
			continue;
		if (at < from) {
			off += from - at;
			left -= from - at;
			at = from;
		}
		while (runs[i].lcn >= 0 && left) {
			uint32_t len = left < CHUNK ? (uint32_t)left : CHUNK;
			int ret = fsf_dev_pread(&c->dev, buf, len, off);

			if (ret)
				return ret;
			for (uint32_t k = 0; k < len; k++)
				if (buf[k] != 0xff)
					return 0;
			off += len;
			left -= len;
		}
	}
	return 1;
}

#define HEAD (2u * 65536u)	/* both restart pages, whatever their size */

/* Read the first LEN bytes of the journal (its runs) into BUF. */
static int journal_head(struct ntfs_check *c, const struct ntfs_run *runs,
			long n, uint8_t *buf, uint32_t len)
{
	uint32_t cs = c->vol.boot.g.cluster_size, done = 0;

	for (long i = 0; i < n && done < len; i++) {
		uint64_t run = runs[i].len * cs;
		uint32_t l = run < len - done ? (uint32_t)run : len - done;
		int ret = 0;

		if (runs[i].lcn < 0)
			memset(buf + done, 0, l);
		else
			ret = fsf_dev_pread(&c->dev, buf + done, l,
					    (uint64_t)runs[i].lcn * cs);
		if (ret)
			return ret;
		done += l;
	}
	if (done < len)
		memset(buf + done, 0xff, len - done);
	return 0;
}

/* Name what a journal that is not empty holds (read-only; a journal whose
 * first two restart pages' bytes are all 0xff is judged empty here). */
static void inspect_journal(struct ntfs_check *c)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *rec = malloc(rs), *buf = malloc(HEAD);
	struct ntfs_run *runs = NULL;
	struct ntfs_log_info info;
	char why[NTFS_WHY];
	uint64_t len;
	long n = 0;

	if (!rec || !buf || ntfs_vol_read_record(&c->vol, NTFS_FILE_LOGFILE, rec) ||
	    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK ||
	    ntfs_vol_attr_runs(&c->vol, rec, NTFS_AT_DATA, &len, &runs, &n) ||
	    journal_head(c, runs, n, buf, len < HEAD ? (uint32_t)len : HEAD))
		goto out;
	switch (ntfs_logfile_parse(buf, len < HEAD ? (size_t)len : HEAD, &info)) {
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
out:
	free(rec);
	free(buf);
	free(runs);
}

/* The system page size the restart pages are laid out for: the page size
 * of the hosts Windows runs on (x86, x86-64 and arm64 alike). */
#define SYS_PAGE 4096u

/*
 * After a repair: the journal becomes two restart pages of a clean, closed
 * log (ntfs_logfile_restart_build), the rest 0xff.  Its current LSN is the
 * highest of the old restart area's and of every FILE record read, so
 * that the LSNs written next are above everything on disk.  A journal
 * that is all 0xff, or that holds exactly that structure with the rest
 * 0xff, is left alone: nothing to replay there, nothing to write.
 */
static void reset_journal(struct ntfs_check *c)
{
	uint32_t rs = c->vol.boot.g.mft_record_size, cs = c->vol.boot.g.cluster_size;
	uint8_t *rec = malloc(rs), *buf = malloc(CHUNK), *head = malloc(HEAD);
	uint8_t *want = malloc(HEAD);
	struct ntfs_run *runs = NULL;
	struct ntfs_log_info info;
	char why[NTFS_WHY];
	uint64_t len, lsn, foff = 0;
	uint32_t hl;
	long n = 0;
	int ret = -ENOMEM, built;

	if (!rec || !buf || !head || !want ||
	    ntfs_vol_read_record(&c->vol, NTFS_FILE_LOGFILE, rec) ||
	    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK ||
	    ntfs_vol_attr_runs(&c->vol, rec, NTFS_AT_DATA, &len, &runs, &n) ||
	    journal_empty(c, runs, n, buf, 0) != 0)
		goto out;
	hl = len < HEAD ? (uint32_t)len : HEAD;
	if (journal_head(c, runs, n, head, hl))
		goto out;
	memcpy(buf, head, hl);
	lsn = c->vol.max_lsn;
	switch (ntfs_logfile_parse(buf, hl, &info)) {
	case NTFS_LOG_CLEAN:
	case NTFS_LOG_DIRTY:
		if (info.current_lsn > lsn)
			lsn = info.current_lsn;
		break;
	default:
		break;
	}
	memset(want, 0xff, HEAD);
	built = ntfs_logfile_restart_build(want, HEAD, len, SYS_PAGE, lsn);
	if (built < 0)
		built = 0;	/* too small for a log: all 0xff, as before */
	else if (!memcmp(head, want, (size_t)built) &&
		 journal_empty(c, runs, n, buf, (uint64_t)built) != 0)
		goto out;	/* already reset (or unreadable: leave it) */
	if (!fsf_fix_ask(&c->fix, &PR_LOGFILE_RESET, "$LogFile"))
		goto out;
	ret = 0;
	for (long i = 0; i < n && !ret; foff += runs[i].len * cs, i++) {
		uint64_t off = (uint64_t)runs[i].lcn * cs, left = runs[i].len * cs;
		uint64_t at = foff;

		while (runs[i].lcn >= 0 && left && !ret) {
			uint32_t l = left < CHUNK ? (uint32_t)left : CHUNK;

			memset(buf, 0xff, l);
			if (at < (uint64_t)built)
				memcpy(buf, want + at,
				       (size_t)((uint64_t)built - at < l ?
						(uint64_t)built - at : l));
			ret = fsf_dev_pwrite(&c->dev, buf, l, off);
			off += l;
			at += l;
			left -= l;
		}
	}
	if (ret)
		fsf_fix_failed(&c->fix);
out:
	free(rec);
	free(buf);
	free(head);
	free(want);
	free(runs);
}

int ntfs_pass5_volume(struct ntfs_check *c)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];
	uint8_t *rec;
	int ret = 0;

	if (!c->fix.fatal)
		inspect_journal(c);
	if (c->fix.left || c->fix.preen_halted || c->fix.fatal)
		return 0;
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
	if (!ret) {
		ret = -ENOENT;
		ntfs_attr_cursor_init(&cur, rec);
		while (ntfs_attr_next(&cur, &a, why) == 1) {
			struct ntfs_volume_information vi;
			uint32_t len;
			uint8_t *v;

			if (le32toh(a->type) != NTFS_AT_VOLUME_INFORMATION ||
			    a->non_resident)
				continue;
			v = (uint8_t *)ntfs_attr_value(a, &len);
			if (len < sizeof(vi))
				break;
			memcpy(&vi, v, sizeof(vi));
			vi.flags = htole16(le16toh(vi.flags) & ~NTFS_VOLUME_IS_DIRTY);
			memcpy(v, &vi, sizeof(vi));
			ret = ntfs_check_write_record(c, NTFS_FILE_VOLUME, rec);
			break;
		}
	}
	if (ret)
		fsf_fix_failed(&c->fix);
	free(rec);
	return 0;
}
