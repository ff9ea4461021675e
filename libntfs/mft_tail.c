// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * $MFT's records past what record 0 says (include/ntfs/mft_tail.h): a
 * data size cut short, a lost tail after the last run, a tail moved
 * elsewhere; read through the $MFT bitmap as its allocation holds it.
 * Only reads: the checker decides and ntfs/mft_grow.h writes.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsforge/dev.h"
#include "fsforge/progress.h"
#include "ntfs/file_attrs.h"
#include "ntfs/mft_tail.h"
#include "ntfs/volume_io.h"

#define SCAN_CHUNK (1u << 20)
#define MAX_CANDIDATES 16

/* Bit I: 1 or 0, -1 when it cannot be read (or is past BITS). */
static int bm_bit(struct ntfs_vol *v, struct ntfs_mft_bm *bv, uint64_t i)
{
	uint64_t byte = i / 8, w, n;

	if (byte < bv->len)
		return bv->bm[byte] >> (i % 8) & 1;
	if (i >= bv->bits || !bv->nruns)
		return -1;
	w = byte / TAIL_BM_WINDOW * TAIL_BM_WINDOW;
	n = bv->bits / 8 - w < TAIL_BM_WINDOW ? bv->bits / 8 - w : TAIL_BM_WINDOW;
	if (w != bv->win_at) {
		if (!bv->win && !(bv->win = malloc(TAIL_BM_WINDOW)))
			return -1;
		bv->win_at = UINT64_MAX;	/* half read: not a window */
		if (ntfs_vol_runs_pread(v, bv->runs, bv->nruns, w, n, bv->win))
			return -1;
		bv->win_at = w;
	}
	return bv->win[byte - w] >> (i % 8) & 1;
}

/*
 * Records in use past $MFT's data size: the $MFT bitmap marks them and
 * they hold FILE records in use, in clusters $MFT already owns.  With a
 * data size cut short (a power cut while a driver grew the MFT, or
 * damage) every one of them, and every name pointing at one, would look
 * lost, so the size is what is wrong.  Returns how many; *END is one past
 * the last (ntfs_vol_record_offset() stops at mft_records: widened here
 * for the look).
 */
uint64_t ntfs_mft_hidden_records(struct ntfs_vol *v, struct ntfs_mft_bm *bv,
				 uint64_t *end)
{
	uint32_t rs = v->boot.g.mft_record_size, cs = v->boot.g.cluster_size;
	uint64_t alloc = 0, n = 0, have = v->mft_records, top;
	uint8_t *rec = malloc(rs);
	char why[NTFS_WHY];

	*end = have;
	if (!rec || !bv->bm)
		return free(rec), 0;
	for (long i = 0; i < v->nmft_runs; i++)
		alloc += v->mft_runs[i].len * cs;
	top = alloc / rs;
	if (top > bv->bits && top > bv->len * 8)
		top = bv->bits > bv->len * 8 ? bv->bits : bv->len * 8;
	v->mft_records = top;
	for (uint64_t i = have; i < top; i++) {
		struct ntfs_mft_record m;
		int bit = bm_bit(v, bv, i);

		if (bit < 0)
			break;	/* no records past an unreadable bit */
		if (!bit || ntfs_vol_read_record(v, i, rec) ||
		    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
			continue;
		memcpy(&m, rec, sizeof(m));
		if (le16toh(m.flags) & NTFS_MFT_IN_USE) {
			n++;
			*end = i + 1;
		}
	}
	v->mft_records = have;
	ntfs_vol_cache_drop(v);
	free(rec);
	return n;
}

/* Does any non-resident attribute of checked record REC claim a
 * cluster of [LCN, LCN + LEN)? */
static bool claims(const struct ntfs_vol *v, uint8_t *rec, int64_t lcn,
		   uint64_t len)
{
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];
	bool hit = false;

	ntfs_attr_cursor_init(&cur, rec);
	while (!hit && ntfs_attr_next(&cur, &a, why) == 1) {
		struct ntfs_run *runs;
		long n;

		if (!a->non_resident)
			continue;
		n = ntfs_attr_runs(a, v->boot.g.nr_clusters, &runs, why);
		for (long i = 0; i < n && !hit; i++)
			hit = runs[i].lcn >= 0 && runs[i].lcn < lcn + (int64_t)len &&
			      runs[i].lcn + (int64_t)runs[i].len > lcn;
		if (n >= 0)
			free(runs);
	}
	return hit;
}

/* Record I of the MFT's first TOP (REC, read and checked) when both its
 * bit in BV and its own flag have it in use; false when it cannot be
 * read.  A record not in use claims nothing: drivers reuse a deleted
 * file's clusters, its runlist stays. */
static bool record_in_use(struct ntfs_vol *v, struct ntfs_mft_bm *bv,
			  uint64_t i, uint8_t *rec)
{
	uint32_t rs = v->boot.g.mft_record_size;
	struct ntfs_mft_record m;
	char why[NTFS_WHY];

	if (bm_bit(v, bv, i) != 1 || ntfs_vol_read_record(v, i, rec) ||
	    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		return false;
	memcpy(&m, rec, sizeof(m));
	return le16toh(m.flags) & NTFS_MFT_IN_USE;
}

/* The record at byte OFF, read into REC: a FILE record (NTFS 3.1
 * header) carrying number I?  1 when its own flag has it in use, else 0;
 * -1 when it is not (unreadable, invalid, another number). */
static int numbered_record(struct ntfs_vol *v, uint8_t *rec, uint64_t off,
			   uint64_t i, char *why)
{
	uint32_t rs = v->boot.g.mft_record_size;
	struct ntfs_mft_record m;

	if (fsf_dev_pread(v->dev, rec, rs, off) ||
	    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		return -1;
	memcpy(&m, rec, sizeof(m));
	if (le16toh(m.h.usa_ofs) < sizeof(m) ||
	    le32toh(m.mft_record_number) != (uint32_t)i)
		return -1;
	return (le16toh(m.flags) & NTFS_MFT_IN_USE) ? 1 : 0;
}

/*
 * Records past $MFT's allocation: a stale record 0 (its write lost, or
 * an old copy written back after the MFT grew) maps fewer clusters than
 * the MFT has, and the newest files are in the clusters it no longer
 * maps.  The records right after its last run that are FILE records
 * carrying their own numbers in sequence (NTFS 3.1 headers) are that
 * lost tail: returns how many records it holds up to the last one
 * that both the $MFT bitmap and its own flags have in use (0: none;
 * none either when a record in use claims a cluster of them: a file's
 * data that holds FILE records).
 * Past the bitmap's size (as stale as the runs) the bits are read from
 * its allocation (struct ntfs_mft_bm).  A volume
 * formatted again over an older one has the old MFT's records after
 * its own, numbered in sequence and flagged in use, but its fresh
 * bitmap has no bit for them: they are not a tail.
 */
uint64_t ntfs_mft_lost_tail(struct ntfs_vol *v, struct ntfs_mft_bm *bv,
			    uint64_t top)
{
	const struct ntfs_boot_info *b = &v->boot;
	const struct ntfs_run *last = &v->mft_runs[v->nmft_runs - 1];
	uint32_t rs = b->g.mft_record_size, cs = b->g.cluster_size;
	uint64_t at, end = top, vol = b->g.nr_clusters * cs;
	uint64_t mapped = 0;
	uint8_t *rec = malloc(rs);
	char why[NTFS_WHY];

	for (long k = 0; k < v->nmft_runs; k++)
		mapped += v->mft_runs[k].len * cs;
	/* the allocation must end where record TOP begins */
	if (!rec || !bv->bm || last->lcn < 0 || mapped % rs ||
	    mapped / rs != top) {
		free(rec);
		return 0;
	}
	at = ((uint64_t)last->lcn + last->len) * cs;
	for (uint64_t i = top; i < bv->bits && i <= UINT32_MAX; i++) {
		int used;
		uint64_t off = at + (i - top) * rs;
		int bit = bm_bit(v, bv, i);

		/* a bitmap byte that cannot be read: no tail past it */
		if (bit < 0)
			break;
		if (off + rs > vol || (used = numbered_record(v, rec, off, i, why)) < 0)
			break;
		if (bit && used)
			end = i + 1;
	}
	/* clusters a record in use claims are that file's, not a tail */
	if (end > top) {
		uint64_t had = v->mft_records;
		int64_t lcn = last->lcn + (int64_t)last->len;
		uint64_t len = ((end - top) * rs + cs - 1) / cs;

		v->mft_records = top;
		for (uint64_t i = 0; i < top && end > top; i++)
			if (record_in_use(v, bv, i, rec) && claims(v, rec, lcn, len))
				end = top;
		v->mft_records = had;
		ntfs_vol_cache_drop(v);
	}
	free(rec);
	return end - top;
}

/* Candidates CAND (N, each a cluster holding a FILE record numbered
 * TOP) that a record in use of the MFT's first TOP claims: dropped.
 * Returns how many are left. */
static int unclaimed(struct ntfs_vol *v, struct ntfs_mft_bm *bv, uint64_t top,
		     int64_t *cand, int n, uint8_t *rec)
{
	uint32_t rs = v->boot.g.mft_record_size, cs = v->boot.g.cluster_size;
	uint64_t had = v->mft_records, span = (rs + cs - 1) / cs;

	v->mft_records = top;
	for (uint64_t i = 0; i < top && n; i++) {
		if (!record_in_use(v, bv, i, rec))
			continue;
		for (int k = 0; k < n; k++)
			if (claims(v, rec, cand[k], span))
				cand[k--] = cand[--n];
	}
	v->mft_records = had;
	return n;
}

int ntfs_mft_moved_tail(struct ntfs_vol *v, struct ntfs_mft_bm *bv, uint64_t top,
			struct ntfs_mft_moved *mv, char *why, const char *progress)
{
	const struct ntfs_boot_info *b = &v->boot;
	uint32_t rs = b->g.mft_record_size, cs = b->g.cluster_size;
	uint64_t nrc = b->g.nr_clusters, vbytes = 0, end = top, seq = top, i, had;
	uint64_t bufsz = cs > SCAN_CHUNK ? cs : SCAN_CHUNK;
	uint8_t *rec = malloc(rs), *rec6 = malloc(rs), *vbm = NULL, *buf = NULL;
	struct ntfs_run *vruns = NULL;
	struct fsf_progress prog;
	int64_t cand[MAX_CANDIDATES], found;
	long vnr = 0;
	int ncand = 0, ret = -ENOMEM;
	bool more = false;

	mv->len = 0;
	why[0] = 0;
	if (!rec || !rec6)
		goto out;
	ret = 0;
	/* the first record past the allocation in use (a driver takes the
	 * lowest free record: one file created after the MFT grew is the
	 * first record of the new extent alone) */
	if (bm_bit(v, bv, top) != 1)
		goto out;
	/* $Bitmap (its first extent is enough: record 6 is in $MFT's) */
	if (ntfs_vol_read_record(v, NTFS_FILE_BITMAP, rec6) ||
	    ntfs_record_check(rec6, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK ||
	    ntfs_vol_read_attr(v, rec6, NTFS_AT_DATA, &vbm, &vbytes,
			       &vruns, &vnr) || vbytes * 8 < nrc) {
		why[0] = 0;	/* nothing to look at: as before */
		goto out;
	}
	/* a chunk holds at least a cluster (2 MiB clusters exist) */
	buf = malloc(bufsz);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	/* every cluster $Bitmap has in use, not $MFT's, read in chunks of
	 * clusters in use */
	fsf_progress_init(&prog, progress ? progress : "", progress != NULL);
	for (uint64_t l = 0; l < nrc;) {
		uint64_t n = 0, cap = bufsz / cs;

		fsf_progress_update(&prog, l, nrc);
		if (!(vbm[l / 8] >> (l % 8) & 1)) {
			l++;
			continue;
		}
		while (l + n < nrc && n < cap && vbm[(l + n) / 8] >> ((l + n) % 8) & 1)
			n++;
		if (cs >= rs || n * cs >= rs) {
			if (fsf_dev_pread(v->dev, buf, n * cs, l * cs)) {
				l += n;
				continue;
			}
			for (uint64_t k = 0; k < n && k * cs + rs <= n * cs; k++) {
				const uint8_t *r = buf + k * cs;
				uint32_t num;

				memcpy(&num, r + offsetof(struct ntfs_mft_record,
							  mft_record_number), 4);
				if (memcmp(r, "FILE", 4) || le32toh(num) != (uint32_t)top)
					continue;
				for (long j = 0; j < v->nmft_runs; j++)
					if (v->mft_runs[j].lcn >= 0 &&
					    (int64_t)(l + k) >= v->mft_runs[j].lcn &&
					    (int64_t)(l + k) < v->mft_runs[j].lcn +
							      (int64_t)v->mft_runs[j].len)
						goto next;
				memcpy(rec, r, rs);
				if (ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
					continue;
				if (ncand < MAX_CANDIDATES)
					cand[ncand++] = (int64_t)(l + k);
				else
					more = true;
next:
				;
			}
		}
		l += n;
	}
	fsf_progress_done(&prog);
	why[0] = 0;
	/* those in a file's data are the file's */
	ncand = unclaimed(v, bv, top, cand, ncand, rec);
	if (ncand > 1 || (ncand && more)) {
		snprintf(why, NTFS_WHY, "FILE records numbered %llu at clusters %lld and %lld%s",
			 (unsigned long long)top, (long long)(cand[0] < cand[1] ? cand[0] : cand[1]),
			 (long long)(cand[0] < cand[1] ? cand[1] : cand[0]),
			 ncand > 2 || more ? " (and more)" : "");
		goto out;
	}
	if (!ncand)		/* a stray bit: the bitmap pass clears it */
		goto out;
	found = cand[0];
	/* the records in sequence from there, in clusters in use */
	for (i = top; i <= UINT32_MAX; i++) {
		int used;
		uint64_t off = (uint64_t)found * cs + (i - top) * rs;
		int bb = bm_bit(v, bv, i);

		if (bb < 0 || off + rs > nrc * cs ||
		    !(vbm[off / cs / 8] >> (off / cs % 8) & 1) ||
		    !(vbm[(off + rs - 1) / cs / 8] >> ((off + rs - 1) / cs % 8) & 1) ||
		    (used = numbered_record(v, rec, off, i, why)) < 0)
			break;
		if (bb && used)
			end = i + 1;
		seq = i + 1;
	}
	why[0] = 0;
	if (end == top)
		goto out;
	mv->lcn = found;
	mv->records = end - top;
	/* the whole run the records in sequence fill (the driver's
	 * extent: its free records stay the MFT's) */
	mv->len = ((seq - top) * rs + cs - 1) / cs;
	end = seq;
	/* no record of the MFT in use claims its clusters */
	had = v->mft_records;
	v->mft_records = top;
	for (i = 0; i < end; i++) {
		struct ntfs_mft_record m;
		bool used;

		if (i < top) {
			used = record_in_use(v, bv, i, rec);
		} else {
			used = bm_bit(v, bv, i) == 1 &&
			       !fsf_dev_pread(v->dev, rec, rs, (uint64_t)found * cs + (i - top) * rs) &&
			       ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) == NTFS_REC_OK;
			why[0] = 0;
			memcpy(&m, rec, sizeof(m));
			used = used && (le16toh(m.flags) & NTFS_MFT_IN_USE);
		}
		if (!used || !claims(v, rec, mv->lcn, mv->len))
			continue;
		memcpy(&m, rec, sizeof(m));
		mv->len = 0;
		/* an extension record of $MFT's own: the run is the
		 * MFT's, named by an extent its list no longer says
		 * (the list's repair finds it), not a lost tail */
		if (i && !(le64toh(m.base_mft_record) & 0xffffffffffffULL) &&
		    le64toh(m.base_mft_record))
			break;
		snprintf(why, NTFS_WHY, "MFT record %llu claims clusters of the run at %lld",
			 (unsigned long long)i, (long long)found);
		break;
	}
	v->mft_records = had;
out:
	ntfs_vol_cache_drop(v);
	free(rec);
	free(rec6);
	free(vbm);
	free(vruns);
	free(buf);
	return ret;
}

/* The $MFT bitmap of BV widened to hold RECORDS bits (8-byte steps, as
 * drivers grow it), the bytes past its size read from its allocation for
 * the check.  -ENOMEM; 0 otherwise, the bitmap unchanged when those bytes
 * cannot be read. */
int ntfs_mft_widen_bitmap(struct ntfs_vol *v, uint8_t **bm, uint64_t *len,
			  struct ntfs_mft_bm *bv, uint64_t records)
{
	uint64_t bytes = ((records + 7) / 8 + 7) & ~7ull;
	uint8_t *nb;

	if (bytes <= *len)
		return 0;
	nb = realloc(*bm, bytes);
	if (!nb)
		return -ENOMEM;
	*bm = nb;
	bv->bm = nb;
	if (ntfs_vol_runs_pread(v, bv->runs, bv->nruns, *len,
				bytes - *len, nb + *len))
		return 0;
	*len = bytes;
	bv->len = bytes;
	return 0;
}

