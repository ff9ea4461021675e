// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * $LogFile on a volume (include/ntfs/logfile_io.h): its runs from record
 * 2, its head read, checked for 0xff a megabyte at a time, and written
 * back reset: two restart pages of a clean, closed log
 * (logfile_write.c), every log record page after them 0xff, so that no
 * driver replays records written against the metadata as it was before
 * a repair, and every driver mounts the volume as cleanly unmounted.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fsforge/dev.h"
#include "ntfs/logfile_io.h"
#include "ntfs/volume_io.h"
#include "internal.h"

#define CHUNK (1u << 20)

/* The system page size the restart pages are laid out for: the page size
 * of the hosts Windows runs on (x86, x86-64 and arm64 alike). */
#define SYS_PAGE 4096u

int ntfs_journal_open(struct ntfs_vol *v, struct ntfs_journal *j)
{
	uint32_t rs = v->boot.g.mft_record_size;
	uint8_t *rec = malloc(rs);
	char why[NTFS_WHY];
	int ret = -ENOMEM;

	memset(j, 0, sizeof(*j));
	if (rec) {
		ret = ntfs_vol_read_record(v, NTFS_FILE_LOGFILE, rec);
		if (!ret && ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
			ret = -EUCLEAN;
		if (!ret)
			ret = ntfs_vol_attr_runs(v, rec, NTFS_AT_DATA, &j->len,
						 &j->runs, &j->nruns);
	}
	free(rec);
	return ret;
}

void ntfs_journal_close(struct ntfs_journal *j)
{
	free(j->runs);
	j->runs = NULL;
	j->nruns = 0;
}

/*
 * The journal's runs from byte FROM in chunks of at most CHUNK bytes
 * (holes skipped): FN gets each one's length, its device offset OFF and
 * its journal byte AT, with a CHUNK-byte buffer; the walk goes on while
 * it returns GO.  Returns the last FN's result (GO when there was none),
 * or -ENOMEM.
 */
typedef int (*chunk_fn)(struct ntfs_vol *v, uint8_t *buf, uint32_t len,
			uint64_t off, uint64_t at, const void *arg);

static int each_chunk(struct ntfs_vol *v, const struct ntfs_journal *j,
		      uint64_t from, int go, chunk_fn fn, const void *arg)
{
	const struct ntfs_run *runs = j->runs;
	uint32_t cs = v->boot.g.cluster_size;
	uint8_t *buf = malloc(CHUNK);
	uint64_t foff = 0;
	int ret = go;

	if (!buf)
		return -ENOMEM;
	for (long i = 0; i < j->nruns && ret == go; foff += runs[i].len * cs, i++) {
		uint64_t off = (uint64_t)runs[i].lcn * cs, left = runs[i].len * cs;
		uint64_t at = foff;

		if (at + left <= from)
			continue;
		if (at < from) {
			off += from - at;
			left -= from - at;
			at = from;
		}
		while (runs[i].lcn >= 0 && left && ret == go) {
			uint32_t len = left < CHUNK ? (uint32_t)left : CHUNK;

			ret = fn(v, buf, len, off, at, arg);
			off += len;
			at += len;
			left -= len;
		}
	}
	free(buf);
	return ret;
}

/* 1 while the chunk is all 0xff, 0 when not, or the device's error. */
static int chunk_empty(struct ntfs_vol *v, uint8_t *buf, uint32_t len,
		       uint64_t off, uint64_t at, const void *arg)
{
	int r = fsf_dev_pread(v->dev, buf, len, off);

	(void)at;
	(void)arg;
	if (r)
		return r;
	for (uint32_t k = 0; k < len; k++)
		if (buf[k] != 0xff)
			return 0;
	return 1;
}

int ntfs_journal_empty_from(struct ntfs_vol *v, const struct ntfs_journal *j,
			    uint64_t from)
{
	return each_chunk(v, j, from, 1, chunk_empty, NULL);
}

int ntfs_journal_head(struct ntfs_vol *v, const struct ntfs_journal *j,
		      uint8_t *buf, uint32_t len)
{
	uint32_t cs = v->boot.g.cluster_size, done = 0;

	for (long i = 0; i < j->nruns && done < len; i++) {
		uint64_t run = j->runs[i].len * cs;
		uint32_t l = run < len - done ? (uint32_t)run : len - done;
		int ret = 0;

		if (j->runs[i].lcn < 0)
			memset(buf + done, 0, l);
		else
			ret = fsf_dev_pread(v->dev, buf + done, l,
					    (uint64_t)j->runs[i].lcn * cs);
		if (ret)
			return ret;
		done += l;
	}
	if (done < len)
		memset(buf + done, 0xff, len - done);
	return 0;
}

int ntfs_journal_state(struct ntfs_vol *v, struct ntfs_log_info *info)
{
	uint8_t *buf = malloc(NTFS_LOG_HEAD);
	struct ntfs_journal j;
	uint32_t hl;
	int ret = ntfs_journal_open(v, &j);

	if (!buf && !ret)
		ret = -ENOMEM;
	if (!ret) {
		hl = j.len < NTFS_LOG_HEAD ? (uint32_t)j.len : NTFS_LOG_HEAD;
		ret = ntfs_journal_head(v, &j, buf, hl);
		if (!ret)
			ret = (int)ntfs_logfile_parse(buf, hl, info);
	}
	ntfs_journal_close(&j);
	free(buf);
	return ret;
}

int ntfs_journal_reset_head(struct ntfs_vol *v, const struct ntfs_journal *j,
			    uint8_t *want, size_t *built)
{
	uint8_t *head = malloc(NTFS_LOG_HEAD);
	struct ntfs_log_info info;
	uint64_t lsn = v->max_lsn;
	uint32_t hl;
	int ret = 1, b;

	*built = 0;
	if (!head)
		return -ENOMEM;
	if (ntfs_journal_empty_from(v, j, 0) != 0)
		goto out;	/* all 0xff (or unreadable): leave it */
	hl = j->len < NTFS_LOG_HEAD ? (uint32_t)j->len : NTFS_LOG_HEAD;
	if (ntfs_journal_head(v, j, head, hl))
		goto out;
	memcpy(want, head, hl);	/* parsed in place: fixups removed */
	switch (ntfs_logfile_parse(want, hl, &info)) {
	case NTFS_LOG_CLEAN:
	case NTFS_LOG_DIRTY:
		if (info.current_lsn > lsn)
			lsn = info.current_lsn;
		break;
	default:
		break;
	}
	memset(want, 0xff, NTFS_LOG_HEAD);
	b = ntfs_logfile_restart_build(want, NTFS_LOG_HEAD, j->len, SYS_PAGE, lsn);
	if (b < 0)
		b = 0;	/* too small for a log: all 0xff, as before */
	else if (!memcmp(head, want, (size_t)b) &&
		 ntfs_journal_empty_from(v, j, (uint64_t)b) != 0)
		goto out;	/* already reset (or unreadable: leave it) */
	*built = (size_t)b;
	ret = 0;
out:
	free(head);
	return ret;
}

/* The chunk written: the bytes of the new head it covers, 0xff after. */
struct head {
	const uint8_t *want;
	size_t built;
};

static int chunk_reset(struct ntfs_vol *v, uint8_t *buf, uint32_t len,
		       uint64_t off, uint64_t at, const void *arg)
{
	const struct head *h = arg;

	memset(buf, 0xff, len);
	if (at < (uint64_t)h->built)
		memcpy(buf, h->want + at,
		       (size_t)((uint64_t)h->built - at < len ?
				(uint64_t)h->built - at : len));
	return fsf_dev_pwrite(v->dev, buf, len, off);
}

int ntfs_journal_reset(struct ntfs_vol *v, const struct ntfs_journal *j,
		       const uint8_t *want, size_t built)
{
	struct head h = { .want = want, .built = built };

	return each_chunk(v, j, 0, 0, chunk_reset, &h);
}
