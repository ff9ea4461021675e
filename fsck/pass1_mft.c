// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 1: every MFT record.  $MFT is located from record 0 (or its copy in
 * $MFTMirr); each record's header, update sequence, attributes and
 * runlists are checked; records of the mirrored range are compared with
 * $MFTMirr; the clusters and records really in use are collected for the
 * bitmap pass.  A record beyond repair is cleared (its content is already
 * lost); a system record beyond repair stops the check.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <string.h>

#include "ntfs/attrlist.h"
#include "ntfs/repair.h"
#include "ntfs_check.h"
#include "ntfs_problems.h"
#include "ntfs/sysfile.h"

static uint64_t mirror_offset(const struct ntfs_check *c, uint64_t recno)
{
	const struct ntfs_boot_info *b = &c->vol.boot;

	return (uint64_t)b->mftmirr_lcn * b->g.cluster_size +
	       recno * b->g.mft_record_size;
}

/* Does resident attribute list A name an unnamed attribute TYPE? */
static bool list_names(const struct ntfs_attr_header *a, uint32_t type)
{
	struct ntfs_al_entry e;
	char why[NTFS_WHY];
	uint32_t len, off = 0;
	const uint8_t *v;

	if (a->non_resident)
		return false;	/* not read here: record 0's is resident */
	v = ntfs_attr_value(a, &len);
	while (ntfs_al_next(v, len, &off, &e, why) == 1)
		if (e.type == type && !e.name_len && !e.lowest_vcn)
			return true;
	return false;
}

/*
 * A system record that $MFTMirr can vouch for must be more than a valid
 * header: its attributes must parse and it must have what the driver needs
 * ($STANDARD_INFORMATION, $FILE_NAME; record 0 also $DATA with a runlist
 * and $BITMAP).  Returns 0 or -1 with WHY.
 */
static int system_record_usable(const struct ntfs_check *c, uint8_t *rec,
				uint64_t recno, char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	bool si = false, fn = false, data = false, bitmap = false, list = false;
	const struct ntfs_attr_header *la = NULL;
	int r;

	struct ntfs_mft_record m;

	if (ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		return -1;
	/* system files are base records */
	memcpy(&m, rec, sizeof(m));
	if (le64toh(m.base_mft_record)) {
		snprintf(why, NTFS_WHY, "claims to extend record %llu",
			 (unsigned long long)(le64toh(m.base_mft_record) & 0xffffffffffffULL));
		return -1;
	}
	if (!(le16toh(m.flags) & NTFS_MFT_IN_USE)) {
		snprintf(why, NTFS_WHY, "not marked in use");
		return -1;
	}
	ntfs_attr_cursor_init(&cur, rec);
	while ((r = ntfs_attr_next(&cur, &a, why)) == 1) {
		uint32_t type = le32toh(a->type);

		si |= type == NTFS_AT_STANDARD_INFORMATION;
		if (type == NTFS_AT_ATTRIBUTE_LIST) {
			list = true;
			la = a;
		}
		fn |= type == NTFS_AT_FILE_NAME;
		bitmap |= type == NTFS_AT_BITMAP && !a->name_length;
		if (type == NTFS_AT_DATA && !a->name_length && a->non_resident) {
			struct ntfs_run *runs;
			long n = ntfs_attr_runs(a, c->vol.boot.g.nr_clusters,
						&runs, why);

			free(runs);
			if (n <= 0)
				return -1;
			data = true;
		}
	}
	if (r < 0)
		return -1;
	/* with an attribute list (a fragmented $MFT: ntfs-3g moves
	 * attributes out when record 0 fills) the name may be elsewhere */
	if (!si || (!fn && !list)) {
		snprintf(why, NTFS_WHY, "no %s attribute",
			 si ? "$FILE_NAME" : "$STANDARD_INFORMATION");
		return -1;
	}
	/* Linux's ntfs driver moves $BITMAP out too (locate_mft finds it) */
	if (!bitmap && la)
		bitmap = list_names(la, NTFS_AT_BITMAP);
	if (recno == NTFS_FILE_MFT && (!data || !bitmap)) {
		snprintf(why, NTFS_WHY, "no usable %s attribute",
			 data ? "$BITMAP" : "$DATA");
		return -1;
	}
	return 0;
}

/* Is MIR, a usable $MFTMirr copy of record 0 that differs from REC
 * ($MFT's, usable), the newer one?  Only when the evidence is on disk:
 * neither has an attribute list, the mirror's $DATA runs are REC's with
 * the last one longer or more after it (the MFT grew; REC's write was
 * lost or an old copy of it written back), and the first record past
 * REC's runs, where the mirror's map it, is a FILE record in use
 * carrying that number.  *WHY says so. */
static bool mirror_newer(struct ntfs_check *c, const uint8_t *rec,
			 const uint8_t *mir, char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size, cs = c->vol.boot.g.cluster_size;
	struct ntfs_run *pr = NULL, *mr = NULL;
	long pn = 0, mn = 0;
	uint64_t plen = 0, mlen = 0, off;
	uint8_t *top = malloc(rs);
	struct ntfs_mft_record m;
	char twhy[NTFS_WHY];
	bool newer = false;

	if (!top || !memcmp(rec, mir, rs) ||
	    ntfs_attr_find(rec, NTFS_AT_ATTRIBUTE_LIST) ||
	    ntfs_attr_find(mir, NTFS_AT_ATTRIBUTE_LIST) ||
	    ntfs_vol_attr_runs(&c->vol, rec, NTFS_AT_DATA, &plen, &pr, &pn) ||
	    ntfs_vol_attr_runs(&c->vol, mir, NTFS_AT_DATA, &mlen, &mr, &mn) ||
	    pn <= 0 || mn < pn || plen % rs || mlen <= plen)
		goto out;
	for (long i = 0; i < pn; i++)
		if (pr[i].lcn < 0 || mr[i].lcn != pr[i].lcn ||
		    (i < pn - 1 ? mr[i].len != pr[i].len : mr[i].len < pr[i].len))
			goto out;
	off = ntfs_runs_offset(mr, mn, cs, plen, rs);
	if (off == UINT64_MAX || fsf_dev_pread(&c->dev, top, rs, off) ||
	    ntfs_record_check(top, rs, NTFS_MAGIC_FILE, twhy) != NTFS_REC_OK)
		goto out;
	memcpy(&m, top, sizeof(m));
	if (le16toh(m.h.usa_ofs) < sizeof(m) ||
	    le32toh(m.mft_record_number) != (uint32_t)(plen / rs) ||
	    !(le16toh(m.flags) & NTFS_MFT_IN_USE))
		goto out;
	snprintf(why, NTFS_WHY, "its runs end at record %llu, the copy's map %llu records, record %llu in use",
		 (unsigned long long)(plen / rs), (unsigned long long)(mlen / rs),
		 (unsigned long long)(plen / rs));
	newer = true;
out:
	free(pr);
	free(mr);
	free(top);
	return newer;
}

/* Record 0 from $MFT, or from $MFTMirr when $MFT's copy is unusable.
 * Both locations were verified by pass 0. */
static int load_record0(struct ntfs_check *c, uint8_t *rec)
{
	const struct ntfs_boot_info *b = &c->vol.boot;
	uint32_t rs = b->g.mft_record_size;
	uint8_t *raw = malloc(rs), *mir = malloc(rs);
	char why[NTFS_WHY], mwhy[NTFS_WHY] = "no verified $MFTMirr";
	bool mir_ok = false;
	uint64_t off = (uint64_t)b->mft_lcn * b->g.cluster_size;
	int ret = 0;

	if (!raw || !mir) {
		ret = -ENOMEM;
		goto out;
	}
	if (fsf_dev_pread(&c->dev, rec, rs, off)) {
		ret = -EIO;
		goto out;
	}
	if (c->geo.mft_bad & 1)
		snprintf(why, sizeof(why), "%s", c->geo.mft_why[0]);
	else if (system_record_usable(c, rec, 0, why) == 0) {
		/* usable, and older than the mirror's copy? */
		if (!c->geo.mirr_ok || fsf_dev_pread(&c->dev, mir, rs, mirror_offset(c, 0)))
			goto out;
		memcpy(raw, mir, rs);	/* as on disk: the fixups undone below */
		if (system_record_usable(c, mir, 0, mwhy) != 0 ||
		    !mirror_newer(c, rec, mir, why))
			goto out;
		memcpy(rec, mir, rs);
		if (fsf_fix_ask(&c->fix, &PR_MFT_MIRROR_NEWER, "$MFT record 0", why) &&
		    fsf_dev_pwrite(&c->dev, raw, rs, off))
			fsf_fix_failed(&c->fix);
		goto out;
	}
	if (c->geo.mirr_ok && !fsf_dev_pread(&c->dev, mir, rs, mirror_offset(c, 0))) {
		memcpy(raw, mir, rs);
		mir_ok = system_record_usable(c, mir, 0, mwhy) == 0;
	}
	if (!mir_ok) {
		fsf_fix_ask(&c->fix, &PR_MFT_UNREADABLE, NULL, why, mwhy);
		ret = -EUCLEAN;
		goto out;
	}
	memcpy(rec, mir, rs);
	if (fsf_fix_ask(&c->fix, &PR_MFT_FROM_MIRROR, "$MFT record 0", why)) {
		if (fsf_dev_pwrite(&c->dev, raw, rs, off))
			fsf_fix_failed(&c->fix);
		else
			c->geo.mft_bad &= (uint8_t)~1u;	/* it is the mirror's now */
	}
out:
	free(raw);
	free(mir);
	return ret;
}

/* The $MFT bitmap as pass 1 looks at it: the bytes of its size (BM,
 * LEN), and past them, up to BITS (what its allocation holds), bytes
 * read from its runs in windows (a driver that grew the MFT set them
 * there; the size is as stale as what it describes). */
#define TAIL_BM_WINDOW 4096u
struct bm_view {
	const uint8_t *bm;
	uint64_t len, bits;
	const struct ntfs_run *runs;
	long nruns;
	uint8_t *win;
	uint64_t win_at;	/* byte of the bitmap in win[0] */
};

/* Bit I: 1 or 0, -1 when it cannot be read (or is past BITS). */
static int bm_bit(struct ntfs_check *c, struct bm_view *v, uint64_t i)
{
	uint64_t byte = i / 8, w, n;

	if (byte < v->len)
		return v->bm[byte] >> (i % 8) & 1;
	if (i >= v->bits || !v->nruns)
		return -1;
	w = byte / TAIL_BM_WINDOW * TAIL_BM_WINDOW;
	n = v->bits / 8 - w < TAIL_BM_WINDOW ? v->bits / 8 - w : TAIL_BM_WINDOW;
	if (w != v->win_at) {
		if (!v->win && !(v->win = malloc(TAIL_BM_WINDOW)))
			return -1;
		v->win_at = UINT64_MAX;	/* half read: not a window */
		if (ntfs_vol_runs_pread(&c->vol, v->runs, v->nruns, w, n, v->win))
			return -1;
		v->win_at = w;
	}
	return v->win[byte - w] >> (i % 8) & 1;
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
static uint64_t hidden_records(struct ntfs_check *c, struct bm_view *bv,
			       uint64_t *end)
{
	uint32_t rs = c->vol.boot.g.mft_record_size, cs = c->vol.boot.g.cluster_size;
	uint64_t alloc = 0, n = 0, have = c->vol.mft_records, top;
	uint8_t *rec = malloc(rs);
	char why[NTFS_WHY];

	*end = have;
	if (!rec || !bv->bm)
		return free(rec), 0;
	for (long i = 0; i < c->vol.nmft_runs; i++)
		alloc += c->vol.mft_runs[i].len * cs;
	top = alloc / rs;
	if (top > bv->bits && top > bv->len * 8)
		top = bv->bits > bv->len * 8 ? bv->bits : bv->len * 8;
	c->vol.mft_records = top;
	for (uint64_t i = have; i < top; i++) {
		struct ntfs_mft_record m;
		int bit = bm_bit(c, bv, i);

		if (bit < 0)
			break;	/* no records past an unreadable bit */
		if (!bit || ntfs_vol_read_record(&c->vol, i, rec) ||
		    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
			continue;
		memcpy(&m, rec, sizeof(m));
		if (le16toh(m.flags) & NTFS_MFT_IN_USE) {
			n++;
			*end = i + 1;
		}
	}
	c->vol.mft_records = have;
	ntfs_vol_cache_drop(&c->vol);
	free(rec);
	return n;
}

/* Does any non-resident attribute of checked record REC claim a
 * cluster of [LCN, LCN + LEN)? */
static bool claims(const struct ntfs_check *c, uint8_t *rec, int64_t lcn,
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
		n = ntfs_attr_runs(a, c->vol.boot.g.nr_clusters, &runs, why);
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
static bool record_in_use(struct ntfs_check *c, struct bm_view *bv,
			  uint64_t i, uint8_t *rec)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct ntfs_mft_record m;
	char why[NTFS_WHY];

	if (bm_bit(c, bv, i) != 1 || ntfs_vol_read_record(&c->vol, i, rec) ||
	    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		return false;
	memcpy(&m, rec, sizeof(m));
	return le16toh(m.flags) & NTFS_MFT_IN_USE;
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
 * its allocation (struct bm_view).  A volume
 * formatted again over an older one has the old MFT's records after
 * its own, numbered in sequence and flagged in use, but its fresh
 * bitmap has no bit for them: they are not a tail.
 */
static uint64_t lost_tail(struct ntfs_check *c, struct bm_view *bv,
			  uint64_t top)
{
	const struct ntfs_boot_info *b = &c->vol.boot;
	const struct ntfs_run *last = &c->vol.mft_runs[c->vol.nmft_runs - 1];
	uint32_t rs = b->g.mft_record_size, cs = b->g.cluster_size;
	uint64_t at, end = top, vol = b->g.nr_clusters * cs;
	uint64_t mapped = 0;
	uint8_t *rec = malloc(rs);
	char why[NTFS_WHY];

	for (long k = 0; k < c->vol.nmft_runs; k++)
		mapped += c->vol.mft_runs[k].len * cs;
	/* the allocation must end where record TOP begins */
	if (!rec || !bv->bm || last->lcn < 0 || mapped % rs ||
	    mapped / rs != top) {
		free(rec);
		return 0;
	}
	at = ((uint64_t)last->lcn + last->len) * cs;
	for (uint64_t i = top; i < bv->bits && i <= UINT32_MAX; i++) {
		struct ntfs_mft_record m;
		uint64_t off = at + (i - top) * rs;
		int bit = bm_bit(c, bv, i);

		/* a bitmap byte that cannot be read: no tail past it */
		if (bit < 0)
			break;
		if (off + rs > vol || fsf_dev_pread(&c->dev, rec, rs, off) ||
		    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
			break;
		memcpy(&m, rec, sizeof(m));
		if (le16toh(m.h.usa_ofs) < sizeof(m) ||
		    le32toh(m.mft_record_number) != (uint32_t)i)
			break;
		if (bit && (le16toh(m.flags) & NTFS_MFT_IN_USE))
			end = i + 1;
	}
	/* clusters a record in use claims are that file's, not a tail */
	if (end > top) {
		uint64_t had = c->vol.mft_records;
		int64_t lcn = last->lcn + (int64_t)last->len;
		uint64_t len = ((end - top) * rs + cs - 1) / cs;

		c->vol.mft_records = top;
		for (uint64_t i = 0; i < top && end > top; i++)
			if (record_in_use(c, bv, i, rec) && claims(c, rec, lcn, len))
				end = top;
		c->vol.mft_records = had;
		ntfs_vol_cache_drop(&c->vol);
	}
	free(rec);
	return end - top;
}

/*
 * A lost tail that is not right after the last run: the driver that
 * grew the MFT found the clusters after it taken and put the MFT's next
 * extent elsewhere.  Looked for only when the $MFT bitmap (BV) has the
 * first two records past the allocation (TOP records) in use (a driver
 * takes the lowest free records; one stray bit is no evidence worth
 * reading the volume for: pass 4 clears it), and decided
 * conservatively: the one cluster-aligned FILE record numbered TOP in a
 * cluster $Bitmap has in use that no record in use claims (two such:
 * left; a FILE record inside a file's data, an image kept on the volume,
 * is the file's), the records after it numbered in sequence, up to the
 * last one both its flag and its bit have in use; no record of the MFT
 * in use (those mapped and those found) claims a cluster of that run.
 * The run found: MV (its length 0: none); *WHY says why a record found
 * there is not taken (two of them, or clusters claimed), empty when none
 * is (a stray bit).
 */
#define SCAN_CHUNK (1u << 20)
#define MAX_CANDIDATES 16
struct moved {
	int64_t lcn;
	uint64_t len, records;
};

/* Candidates CAND (N, each a cluster holding a FILE record numbered
 * TOP) that a record in use of the MFT's first TOP claims: dropped.
 * Returns how many are left. */
static int unclaimed(struct ntfs_check *c, struct bm_view *bv, uint64_t top,
		     int64_t *cand, int n, uint8_t *rec)
{
	uint32_t rs = c->vol.boot.g.mft_record_size, cs = c->vol.boot.g.cluster_size;
	uint64_t had = c->vol.mft_records, span = (rs + cs - 1) / cs;

	c->vol.mft_records = top;
	for (uint64_t i = 0; i < top && n; i++) {
		if (!record_in_use(c, bv, i, rec))
			continue;
		for (int k = 0; k < n; k++)
			if (claims(c, rec, cand[k], span))
				cand[k--] = cand[--n];
	}
	c->vol.mft_records = had;
	return n;
}

static int moved_tail(struct ntfs_check *c, struct bm_view *bv, uint64_t top,
		      struct moved *mv, char *why)
{
	const struct ntfs_boot_info *b = &c->vol.boot;
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
	if (bm_bit(c, bv, top) != 1)
		goto out;
	/* $Bitmap (its first extent is enough: record 6 is in $MFT's) */
	if (ntfs_vol_read_record(&c->vol, NTFS_FILE_BITMAP, rec6) ||
	    ntfs_record_check(rec6, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK ||
	    ntfs_vol_read_attr(&c->vol, rec6, NTFS_AT_DATA, &vbm, &vbytes,
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
	fsf_progress_init(&prog, "pass 1: $MFT's moved tail looked for", c->progress);
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
			if (fsf_dev_pread(&c->dev, buf, n * cs, l * cs)) {
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
				for (long j = 0; j < c->vol.nmft_runs; j++)
					if (c->vol.mft_runs[j].lcn >= 0 &&
					    (int64_t)(l + k) >= c->vol.mft_runs[j].lcn &&
					    (int64_t)(l + k) < c->vol.mft_runs[j].lcn +
							      (int64_t)c->vol.mft_runs[j].len)
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
	ncand = unclaimed(c, bv, top, cand, ncand, rec);
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
		struct ntfs_mft_record m;
		uint64_t off = (uint64_t)found * cs + (i - top) * rs;
		int bb = bm_bit(c, bv, i);

		if (bb < 0 || off + rs > nrc * cs ||
		    !(vbm[off / cs / 8] >> (off / cs % 8) & 1) ||
		    !(vbm[(off + rs - 1) / cs / 8] >> ((off + rs - 1) / cs % 8) & 1) ||
		    fsf_dev_pread(&c->dev, rec, rs, off) ||
		    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
			break;
		memcpy(&m, rec, sizeof(m));
		if (le16toh(m.h.usa_ofs) < sizeof(m) ||
		    le32toh(m.mft_record_number) != (uint32_t)i)
			break;
		if (bb && (le16toh(m.flags) & NTFS_MFT_IN_USE))
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
	had = c->vol.mft_records;
	c->vol.mft_records = top;
	for (i = 0; i < end; i++) {
		struct ntfs_mft_record m;
		bool used;

		if (i < top) {
			used = record_in_use(c, bv, i, rec);
		} else {
			used = bm_bit(c, bv, i) == 1 &&
			       !fsf_dev_pread(&c->dev, rec, rs, (uint64_t)found * cs + (i - top) * rs) &&
			       ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) == NTFS_REC_OK;
			why[0] = 0;
			memcpy(&m, rec, sizeof(m));
			used = used && (le16toh(m.flags) & NTFS_MFT_IN_USE);
		}
		if (!used || !claims(c, rec, mv->lcn, mv->len))
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
	c->vol.mft_records = had;
out:
	ntfs_vol_cache_drop(&c->vol);
	free(rec);
	free(rec6);
	free(vbm);
	free(vruns);
	free(buf);
	return ret;
}

/* The record holding the last extent of $MFT's $DATA and that extent's
 * lowest VCN: record 0 (VCN 0) without an attribute list, else the
 * entry of record 0's list with the highest VCN.  0 or -1. */
static int last_extent_holder(struct ntfs_check *c, const uint8_t *rec0,
			      uint64_t *recno, int64_t *vcn)
{
	struct ntfs_run *lruns = NULL;
	struct ntfs_al_entry e;
	uint8_t *list = NULL;
	uint64_t len = 0;
	uint32_t off = 0;
	long lnr = 0;
	char why[NTFS_WHY];

	*recno = NTFS_FILE_MFT;
	*vcn = 0;
	if (!ntfs_attr_named(rec0, NTFS_AT_ATTRIBUTE_LIST, ""))
		return 0;
	if (ntfs_vol_read_attr(&c->vol, rec0, NTFS_AT_ATTRIBUTE_LIST, &list, &len,
			       &lruns, &lnr) || len > UINT32_MAX) {
		free(list);
		free(lruns);
		return -1;
	}
	while (ntfs_al_next(list, (uint32_t)len, &off, &e, why) == 1)
		if (e.type == NTFS_AT_DATA && !e.name_len && e.lowest_vcn >= *vcn) {
			*vcn = e.lowest_vcn;
			*recno = e.mref & 0xffffffffffffULL;
		}
	free(list);
	free(lruns);
	return 0;
}

/* The record holding the first extent of $MFT's $BITMAP (where its
 * sizes live): record 0, or the one record 0's list names for VCN 0 (a
 * bitmap moved out or split by a driver).  0 or -1. */
static int bitmap_sizes_holder(struct ntfs_check *c, const uint8_t *rec0,
			       uint64_t *recno)
{
	const struct ntfs_attr_header *a = ntfs_attr_named(rec0, NTFS_AT_BITMAP, "");
	struct ntfs_run *lruns = NULL;
	struct ntfs_al_entry e;
	uint8_t *list = NULL;
	uint64_t len = 0;
	uint32_t off = 0;
	long lnr = 0;
	char why[NTFS_WHY];
	int ret = -1;

	*recno = NTFS_FILE_MFT;
	if (a)
		return 0;
	if (!ntfs_attr_named(rec0, NTFS_AT_ATTRIBUTE_LIST, "") ||
	    ntfs_vol_read_attr(&c->vol, rec0, NTFS_AT_ATTRIBUTE_LIST, &list, &len,
			       &lruns, &lnr) || len > UINT32_MAX)
		goto out;
	while (ntfs_al_next(list, (uint32_t)len, &off, &e, why) == 1)
		if (e.type == NTFS_AT_BITMAP && !e.name_len && !e.lowest_vcn) {
			*recno = e.mref & 0xffffffffffffULL;
			ret = 0;
			break;
		}
out:
	free(list);
	free(lruns);
	return ret;
}

/* The $MFT bitmap's first extent in checked record REC: its data size
 * BMBYTES when shorter and its allocation holds them.  True when
 * changed. */
static bool set_bitmap_size(uint8_t *rec, uint64_t bmbytes)
{
	uint8_t *h = (uint8_t *)ntfs_attr_unnamed_extent(rec, NTFS_AT_BITMAP, 0);
	struct ntfs_attr_nonresident n;

	if (!h)
		return false;
	memcpy(&n, h, sizeof(n));
	if ((uint64_t)le64toh((uint64_t)n.data_size) >= bmbytes ||
	    (uint64_t)le64toh((uint64_t)n.allocated_size) < bmbytes)
		return false;
	n.data_size = (int64_t)htole64(bmbytes);
	n.initialized_size = (int64_t)htole64(bmbytes);
	memcpy(h, &n, sizeof(n));
	return true;
}

/* The $MFT bitmap's size grown to BMBYTES in extension record RECNO
 * (after record 0's write: a failure leaves the bitmap short, which
 * the bitmap pass reports, never a size its allocation lacks). */
static int grow_bitmap_elsewhere(struct ntfs_check *c, uint64_t recno,
				 uint64_t bmbytes)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *rec = malloc(rs);
	char why[NTFS_WHY];
	int ret = -ENOMEM;

	if (!rec)
		return ret;
	ret = ntfs_vol_read_record(&c->vol, recno, rec);
	if (!ret && ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		ret = -EUCLEAN;
	if (!ret && set_bitmap_size(rec, bmbytes))
		ret = ntfs_check_write_record(c, recno, rec);
	free(rec);
	return ret;
}

/* $MFT's last extent given the runs c->vol.mft_runs has past its lowest
 * VCN (its last run grown over a lost tail, or runs added where the tail
 * was found elsewhere): the mapping pairs and highest VCN of the extent,
 * in record 0 or, with an attribute list, in the extension record that
 * holds it; record 0's allocated size (the first extent's) grows with
 * it.  Only when that extent ends at OLD clusters, where the old
 * allocation ended, with the runs it had, and its pairs fit in its
 * record. */
static int grow_mft_runs(struct ntfs_check *c, uint64_t bmbytes, uint64_t old)
{
	uint32_t rs = c->vol.boot.g.mft_record_size, cs = c->vol.boot.g.cluster_size;
	uint8_t *rec = malloc(rs), *xrec = malloc(rs), *mp = malloc(rs), *a, *x;
	struct ntfs_run *runs = NULL;
	uint64_t clusters = 0, holder, v = 0, bmrec;
	int64_t vcn;
	char why[NTFS_WHY];
	int ret = -ENOMEM, len;
	long nr, k = 0;

	if (!rec || !xrec || !mp)
		goto out;
	for (long i = 0; i < c->vol.nmft_runs; i++)
		clusters += c->vol.mft_runs[i].len;
	ret = ntfs_vol_read_record(&c->vol, NTFS_FILE_MFT, rec);
	if (!ret && ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		ret = -EUCLEAN;
	if (!ret && (last_extent_holder(c, rec, &holder, &vcn) ||
		     bitmap_sizes_holder(c, rec, &bmrec)))
		ret = -EUCLEAN;
	if (!ret && holder != NTFS_FILE_MFT) {
		ret = ntfs_vol_read_record(&c->vol, holder, xrec);
		if (!ret && ntfs_record_check(xrec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
			ret = -EUCLEAN;
	} else if (!ret) {
		memcpy(xrec, rec, rs);
	}
	if (ret)
		goto out;
	ret = -EUCLEAN;
	/* the run of c->vol.mft_runs where the extent begins */
	while (k < c->vol.nmft_runs && v < (uint64_t)vcn)
		v += c->vol.mft_runs[k++].len;
	a = (uint8_t *)ntfs_attr_find(rec, NTFS_AT_DATA);
	x = (uint8_t *)ntfs_attr_unnamed_extent(xrec, NTFS_AT_DATA,
						   vcn);
	if (v != (uint64_t)vcn || k == c->vol.nmft_runs || !a || !x || !a[8])
		goto out;
	{
		struct ntfs_attr_nonresident n, f;

		memcpy(&f, a, sizeof(f));
		memcpy(&n, x, sizeof(n));
		nr = ntfs_attr_runs((struct ntfs_attr_header *)x,
				    c->vol.boot.g.nr_clusters, &runs, why);
		/* the extent ends the old allocation with the runs it had:
		 * the same runs begin the new ones, its last one as long or
		 * longer */
		if (nr <= 0 || f.h.name_length || f.lowest_vcn ||
		    (uint64_t)le64toh((uint64_t)n.highest_vcn) + 1 != old ||
		    c->vol.nmft_runs - k < nr)
			goto out;
		for (long i = 0; i < nr; i++)
			if (runs[i].lcn != c->vol.mft_runs[k + i].lcn ||
			    runs[i].len > c->vol.mft_runs[k + i].len ||
			    (i < nr - 1 && runs[i].len != c->vol.mft_runs[k + i].len))
				goto out;
		len = ntfs_mp_encode(c->vol.mft_runs + k, (size_t)(c->vol.nmft_runs - k),
				     mp, rs);
		if (len < 0 || ntfs_rec_set_pairs(xrec, rs, (uint32_t)(x - xrec),
						  mp, (uint32_t)len))
			goto out;
		memcpy(&n, x, sizeof(n));
		n.highest_vcn = (int64_t)htole64(clusters - 1);
		if (holder == NTFS_FILE_MFT)
			n.allocated_size = (int64_t)htole64(clusters * cs);
		memcpy(x, &n, sizeof(n));
		/* the $BITMAP's size, when the tail goes past it (its
		 * allocation holds it: lost_tail() looked no further), in
		 * the record of its first extent */
		if (bmrec == holder)
			set_bitmap_size(xrec, bmbytes);
		if (holder == NTFS_FILE_MFT) {
			memcpy(rec, xrec, rs);
		} else {
			/* the extent first: record 0's sizes never say more
			 * than the runs on disk map (a stale record 0 with
			 * later extents up to date is what the next run
			 * grows, the other way round is a size past them) */
			ret = ntfs_check_write_record(c, holder, xrec);
			if (ret)
				goto out;
			ret = -EUCLEAN;
			/* the sizes live in the first extent, record 0's */
			if ((uint64_t)le64toh((uint64_t)f.allocated_size) < clusters * cs)
				f.allocated_size = (int64_t)htole64(clusters * cs);
			memcpy(a, &f, sizeof(f));
		}
		if (bmrec == NTFS_FILE_MFT)
			set_bitmap_size(rec, bmbytes);
		ret = ntfs_check_write_record(c, NTFS_FILE_MFT, rec);
		if (!ret && bmrec != NTFS_FILE_MFT && bmrec != holder)
			ret = grow_bitmap_elsewhere(c, bmrec, bmbytes);
	}
out:
	free(rec);
	free(xrec);
	free(mp);
	free(runs);
	return ret;
}

/* The $MFT bitmap of BV widened to hold RECORDS bits (8-byte steps, as
 * drivers grow it), the bytes past its size read from its allocation for
 * the check.  -ENOMEM; 0 otherwise, the bitmap unchanged when those bytes
 * cannot be read. */
static int widen_bitmap(struct ntfs_check *c, uint8_t **bm, uint64_t *len,
			struct bm_view *bv, uint64_t records)
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
	if (ntfs_vol_runs_pread(&c->vol, bv->runs, bv->nruns, *len,
				bytes - *len, nb + *len))
		return 0;
	*len = bytes;
	bv->len = bytes;
	return 0;
}

/* $MFT's data size and initialized size set to BYTES (record 0 and its
 * mirror copy); the runs on disk (record 0's and its extents' as
 * written: MAPPED bytes) already hold them, else nothing is written (a
 * tail run added in memory but not written, declined or without room,
 * maps nothing on disk).  A stale record 0 of an $MFT with an attribute
 * list (its later extents, up to date in their extension records, map
 * more than its sizes say) gets the allocated size of the runs too, and
 * the $BITMAP the size BMBYTES when its allocation holds it. */
static int grow_mft_size(struct ntfs_check *c, uint64_t bytes, uint64_t mapped,
			 uint64_t bmbytes)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *rec = malloc(rs), *a;
	uint64_t bmrec;
	char why[NTFS_WHY];
	int ret = -ENOMEM;

	if (!rec)
		return ret;
	ret = ntfs_vol_read_record(&c->vol, NTFS_FILE_MFT, rec);
	if (!ret && ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		ret = -EUCLEAN;
	if (!ret) {
		struct ntfs_attr_nonresident n;

		a = (uint8_t *)ntfs_attr_find(rec, NTFS_AT_DATA);
		if (a)
			memcpy(&n, a, sizeof(n));
		if (!a || !n.h.non_resident || n.h.name_length || n.lowest_vcn ||
		    mapped < bytes) {
			ret = -EUCLEAN;
			goto out;
		}
		if ((uint64_t)le64toh((uint64_t)n.allocated_size) < bytes)
			n.allocated_size = (int64_t)htole64(mapped);
		n.data_size = (int64_t)htole64(bytes);
		n.initialized_size = (int64_t)htole64(bytes);
		memcpy(a, &n, sizeof(n));
		if (bitmap_sizes_holder(c, rec, &bmrec)) {
			ret = -EUCLEAN;
			goto out;
		}
		if (bmrec == NTFS_FILE_MFT)
			set_bitmap_size(rec, bmbytes);
		ret = ntfs_check_write_record(c, NTFS_FILE_MFT, rec);
		if (!ret && bmrec != NTFS_FILE_MFT)
			ret = grow_bitmap_elsewhere(c, bmrec, bmbytes);
	}
out:
	free(rec);
	return ret;
}

/* $MFT's data runs and size, and the count of mirrored records. */
static int locate_mft(struct ntfs_check *c, uint8_t *rec0,
		      uint8_t **mft_bitmap, uint64_t *bitmap_len,
		      struct ntfs_run **bitmap_runs, long *bitmap_nruns)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *ext, *holder;
	uint64_t len, where;
	int ret;

	ret = ntfs_vol_attr_runs(&c->vol, rec0, NTFS_AT_DATA, &len,
				 &c->vol.mft_runs, &c->vol.nmft_runs);
	if (ret || c->vol.nmft_runs <= 0 || len < 16ull * rs) {
		fsf_fix_ask(&c->fix, &PR_MFT_DATA_BAD, "$MFT",
			    ret ? strerror(-ret) : "fewer than 16 records");
		return ret ? ret : -EUCLEAN;
	}
	if (c->vol.mft_runs[0].lcn == c->vol.boot.mft_lcn) {
		/* its later extents, when record 0 has a list */
		char why[NTFS_WHY];

		if (ntfs_mft_extents(c, rec0, len, why)) {
			fsf_fix_ask(&c->fix, &PR_MFT_DATA_BAD, "$MFT", why);
			return -EUCLEAN;
		}
	} else {
		/* only the mirror's copy could disagree: pass 0 checked */
		char why[NTFS_WHY];

		snprintf(why, sizeof(why), "it starts at cluster %lld, $MFT is at cluster %lld",
			 (long long)c->vol.mft_runs[0].lcn, (long long)c->vol.boot.mft_lcn);
		fsf_fix_ask(&c->fix, &PR_MFT_DATA_BAD, "$MFT", why);
		return -EUCLEAN;
	}
	c->vol.mft_records = len / rs;
	ext = malloc(rs);
	if (!ext)
		return -ENOMEM;
	ret = ntfs_file_attr_holder(c, rec0, NTFS_FILE_MFT,
				    NTFS_AT_BITMAP, ext, &holder, &where);
	if (!ret)
		ret = ntfs_vol_read_attr(&c->vol, holder, NTFS_AT_BITMAP, mft_bitmap,
					   bitmap_len, bitmap_runs, bitmap_nruns);
	else
		/* in several extents, in the records record 0's list names */
		ret = ntfs_read_split(c, NTFS_FILE_MFT, NTFS_AT_BITMAP, mft_bitmap,
				      bitmap_len, bitmap_runs, bitmap_nruns);
	free(ext);
	if (ret) {
		fsf_fix_ask(&c->fix, &PR_MFT_DATA_BAD, "$MFT bitmap", strerror(-ret));
		return ret;
	}
	{
		struct ntfs_run *last = &c->vol.mft_runs[c->vol.nmft_runs - 1];
		const struct ntfs_attr_header *bh = ntfs_attr_find(rec0, NTFS_AT_BITMAP);
		uint64_t alloc = 0, tail, hidden, end, had, bmbytes = *bitmap_len;
		uint64_t on_disk;	/* clusters the runs as written map */
		struct bm_view bv = {
			.bm = *mft_bitmap, .len = *bitmap_len, .bits = *bitmap_len * 8,
			.runs = *bitmap_runs, .nruns = *bitmap_nruns, .win_at = UINT64_MAX,
		};

		for (long i = 0; i < c->vol.nmft_runs; i++)
			alloc += c->vol.mft_runs[i].len;
		on_disk = alloc;
		alloc = alloc * c->vol.boot.g.cluster_size / rs;
		/* bits the bitmap's allocation holds, when record 0 has it */
		if (bh && bh->non_resident && !bh->name_length && *bitmap_nruns > 0) {
			struct ntfs_attr_nonresident bn;

			memcpy(&bn, bh, sizeof(bn));
			if ((uint64_t)le64toh((uint64_t)bn.allocated_size) > *bitmap_len)
				bv.bits = (uint64_t)le64toh((uint64_t)bn.allocated_size) * 8;
		}
		tail = lost_tail(c, &bv, alloc);
		if (tail) {
			uint32_t cs = c->vol.boot.g.cluster_size;
			uint64_t grow = ((alloc + tail) * rs + cs - 1) / cs -
					alloc * rs / cs;

			/* lost_tail() read these bits: unreadable now, no
			 * tail (its files would stay out of the bitmap) */
			if (widen_bitmap(c, mft_bitmap, bitmap_len, &bv, alloc + tail)) {
				free(bv.win);
				return -ENOMEM;
			}
			if (*bitmap_len * 8 < alloc + tail)
				tail = 0;
			bmbytes = *bitmap_len;
			/* checked with the tail, -n included (the data
			 * size grows below, as for records hidden in the
			 * allocation) */
			if (tail) {
				last->len += grow;
				if (fsf_fix_ask(&c->fix, &PR_MFT_TAIL_LOST, "$MFT",
						(unsigned long long)alloc,
						(unsigned long long)tail,
						(unsigned long long)grow)) {
					if (grow_mft_runs(c, bmbytes, alloc * rs / cs))
						fsf_fix_failed(&c->fix);
					else
						on_disk += grow;
				}
			}
		}
		for (int round = 0; !tail && round < 8; round++) {
			uint32_t cs = c->vol.boot.g.cluster_size;
			uint64_t old = 0, top;
			struct ntfs_run *nr;
			struct moved mv;
			char mwhy[NTFS_WHY];
			int r;

			for (long i = 0; i < c->vol.nmft_runs; i++)
				old += c->vol.mft_runs[i].len;
			top = old * cs / rs;
			if (old * cs % rs)
				break;
			r = moved_tail(c, &bv, top, &mv, mwhy);
			if (!r && mv.len &&
			    widen_bitmap(c, mft_bitmap, bitmap_len, &bv, top + mv.records))
				r = -ENOMEM;
			if (r) {
				free(bv.win);
				return r;
			}
			if (!mv.len || *bitmap_len * 8 < top + mv.records) {
				if (!mwhy[0])
					break;
				/* the files there would be lost: stop */
				fsf_fix_ask(&c->fix, &PR_MFT_TAIL_LEFT, "$MFT",
					    (unsigned long long)top, mwhy);
				free(bv.win);
				return -EUCLEAN;
			}
			nr = realloc(c->vol.mft_runs, (size_t)(c->vol.nmft_runs + 1) *
							sizeof(*nr));
			if (!nr) {
				free(bv.win);
				return -ENOMEM;
			}
			c->vol.mft_runs = nr;
			nr[c->vol.nmft_runs].lcn = mv.lcn;
			nr[c->vol.nmft_runs++].len = mv.len;
			if (fsf_fix_ask(&c->fix, &PR_MFT_TAIL_MOVED, "$MFT",
					(unsigned long long)top,
					(unsigned long long)mv.records,
					(long long)mv.lcn,
					(unsigned long long)mv.len)) {
				if (grow_mft_runs(c, *bitmap_len, old))
					fsf_fix_failed(&c->fix);
				else if (on_disk == old)
					on_disk += mv.len;
			}
		}
		had = c->vol.mft_records;
		hidden = hidden_records(c, &bv, &end);
		if (hidden && widen_bitmap(c, mft_bitmap, bitmap_len, &bv, end)) {
			free(bv.win);
			return -ENOMEM;
		}
		free(bv.win);
		if (hidden && *bitmap_len * 8 >= end) {
			/* checked at the size it must have, -n included */
			c->vol.mft_records = end;
			if (fsf_fix_ask(&c->fix, &PR_MFT_SIZE_SHORT, "$MFT",
					(unsigned long long)had,
					(unsigned long long)hidden,
					(unsigned long long)end) &&
			    grow_mft_size(c, end * rs,
					  on_disk * c->vol.boot.g.cluster_size,
					  *bitmap_len))
				fsf_fix_failed(&c->fix);
		}
	}
	return 0;
}

/*
 * Names that count as links: every $FILE_NAME, the DOS half of a name pair
 * too (Windows and ntfs-3g count each directory entry of the record);
 * *DOS gets the number of DOS-only names, since some writers leave them
 * out of the count and either count is accepted.
 */
static int count_links(const uint8_t *rec, bool *has_list, int *dos)
{
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];
	int n = 0;

	bool si = false;

	*has_list = false;
	*dos = 0;
	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1) {
		uint32_t len;
		const uint8_t *v;

		si |= le32toh(a->type) == NTFS_AT_STANDARD_INFORMATION;
		if (le32toh(a->type) == NTFS_AT_ATTRIBUTE_LIST)
			*has_list = true;
		if (le32toh(a->type) != NTFS_AT_FILE_NAME || a->non_resident)
			continue;
		v = ntfs_attr_value(a, &len);
		if (len < sizeof(struct ntfs_file_name))
			continue;
		n++;
		if (v[offsetof(struct ntfs_file_name, name_type)] == NTFS_NS_DOS)
			(*dos)++;
	}
	/* no $STANDARD_INFORMATION: an extension record that lost its base
	 * reference (pass1_attrlist.c), not a file to count */
	return si ? n : 0;
}

/* Make a record free: header kept, no attributes, sequence number bumped. */
void ntfs_clear_record(uint8_t *rec, uint32_t rs, uint64_t recno)
{
	struct ntfs_mft_record m;
	uint16_t seq;

	memcpy(&m, rec, sizeof(m));
	seq = (uint16_t)(le16toh(m.sequence_number) + 1);
	if (!seq)
		seq = 1;
	memset(rec, 0, rs);
	ntfs_rec_init_free(rec, rs, (uint32_t)recno, seq);
}

/* Claim the clusters of RUNS; a cluster claimed twice is only counted
 * here: pass 1B finds every owner and resolves it. */
static void mark_clusters(struct ntfs_check *c, const struct ntfs_run *runs,
			  long n)
{
	for (long i = 0; i < n; i++)
		for (uint64_t k = 0; runs[i].lcn >= 0 && k < runs[i].len; k++) {
			uint64_t lcn = (uint64_t)runs[i].lcn + k;

			if (cset_get(&c->cluster_used, lcn))
				c->crosslinked++;
			cset_set(&c->cluster_used, lcn);
		}
}

/* Count $FILE_NAME A of file OWNER, found in record RECNO, for the index
 * pass (its digest); a base named before it is scanned is noted. */
static void note_file_name(struct ntfs_check *c, uint64_t owner,
			   uint64_t recno, const struct ntfs_attr_header *a,
			   const struct ntfs_name_owner *o)
{
	if (owner >= c->vol.mft_records)
		return;
	names_digest_attr(c, owner, a);
	names_bucket_attr(c, owner, o, a);
	if (owner > recno)
		/* (out of memory: not noted, and OWNER judged by its own
		 * record's names alone) */
		rset_set(&c->early_named, owner);
}

static int note_extension(struct ntfs_check *c, uint64_t recno, uint64_t base)
{
	if (c->nexts == c->cap_exts) {
		size_t cap = c->cap_exts ? c->cap_exts * 2 : 64;
		struct ntfs_ext_ref *g = realloc(c->exts, cap * sizeof(*g));

		if (!g)
			return -1;
		c->exts = g;
		c->cap_exts = cap;
	}
	c->exts[c->nexts].recno = recno;
	c->exts[c->nexts++].base = base;
	return 0;
}

/* A base record with an attribute list, for ntfs_check_attr_lists(). */
static int note_list(struct ntfs_check *c, uint64_t recno, const uint8_t *rec)
{
	bool list;
	int dos;

	count_links(rec, &list, &dos);
	if (!list)
		return 0;
	if (c->nlbases == c->cap_lbases) {
		size_t cap = c->cap_lbases ? c->cap_lbases * 2 : 64;
		uint64_t *g = realloc(c->lbases, cap * sizeof(*g));

		if (!g)
			return -1;
		c->lbases = g;
		c->cap_lbases = cap;
	}
	c->lbases[c->nlbases++] = recno;
	return 0;
}

/* Attributes of an in-use record: clusters, volume flags, names (*NAMES:
 * how many $FILE_NAMEs it has).  Returns 0, or -1 when the record had to
 * be cleared. */
static int scan_attributes(struct ntfs_check *c, uint64_t recno, uint8_t *rec,
			   const char *obj, unsigned int *names)
{
	struct ntfs_mft_record m;
	bool base;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];
	int r;

	struct ntfs_name_owner o = { 0 };

	memcpy(&m, rec, sizeof(m));
	base = le64toh(m.base_mft_record) == 0;
	/* what pass 3 checks of its names' entries (name_counts.c) */
	o.seq = le16toh(m.sequence_number);
	o.dir = base && (le16toh(m.flags) & NTFS_MFT_IS_DIRECTORY);
	o.poison = !base || recno < NTFS_FILE_FIRST_USER;
	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1) {
		if (le32toh(a->type) == NTFS_AT_ATTRIBUTE_LIST)
			o.poison = true;
		else if (!o.data.known &&
			 (le32toh(a->type) != NTFS_AT_FILE_NAME || a->non_resident))
			ntfs_data_sizes_of(a, &o.data);
	}
	/* runlists first, all of them, before any cluster is claimed */
	ntfs_attr_cursor_init(&cur, rec);
	while ((r = ntfs_attr_next(&cur, &a, why)) == 1) {
		struct ntfs_run *runs;
		long n;

		if (!a->non_resident)
			continue;
		n = ntfs_attr_runs(a, c->vol.boot.g.nr_clusters, &runs, why);
		if (n < 0) {
			if (recno < NTFS_FILE_FIRST_USER) {
				fsf_fix_ask(&c->fix, &PR_SYSTEM_RECORD_CORRUPT, obj, why);
				return -1;
			}
			rare_set(c->record_lost, recno);
			if (fsf_fix_ask(&c->fix, &PR_RECORD_RUNS_BAD, obj,
					le32toh(a->type), why)) {
				ntfs_clear_record(rec, c->vol.boot.g.mft_record_size, recno);
				if (ntfs_check_write_record(c, recno, rec))
					fsf_fix_failed(&c->fix);
			}
			return -1;
		}
		free(runs);
	}
	if (r < 0) {
		if (recno < NTFS_FILE_FIRST_USER) {
			fsf_fix_ask(&c->fix, &PR_SYSTEM_RECORD_CORRUPT, obj, why);
			return -1;
		}
		rare_set(c->record_lost, recno);
		if (fsf_fix_ask(&c->fix, &PR_RECORD_ATTR_CORRUPT, obj, why)) {
			ntfs_clear_record(rec, c->vol.boot.g.mft_record_size, recno);
			if (ntfs_check_write_record(c, recno, rec))
				fsf_fix_failed(&c->fix);
		}
		return -1;
	}
	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1) {
		if (a->non_resident) {
			struct ntfs_run *runs;
			long n = ntfs_attr_runs(a, c->vol.boot.g.nr_clusters,
						&runs, why);

			if (n > 0)
				mark_clusters(c, runs, n);
			free(runs);
		} else if (le32toh(a->type) == NTFS_AT_FILE_NAME) {
			/* a name in an extension record belongs to its base */
			note_file_name(c, base ? recno :
				       le64toh(m.base_mft_record) & 0xffffffffffffULL,
				       recno, a, &o);
			++*names;
		} else if (recno == NTFS_FILE_VOLUME &&
			   le32toh(a->type) == NTFS_AT_VOLUME_INFORMATION) {
			uint32_t len;
			const void *v = ntfs_attr_value(a, &len);
			struct ntfs_volume_information vi;

			if (len >= sizeof(vi)) {
				memcpy(&vi, v, sizeof(vi));
				c->volume_flags = le16toh(vi.flags);
				c->volume_flags_found = true;
			}
		}
	}
	return 0;
}

/* Do the two copies of a record (fixups removed) say the same?  As
 * ntfs-3g and the Linux driver compare them when they mount: the bytes in
 * use, the update sequence number included (a mirror whose USN differs
 * makes ntfs-3g refuse the volume). */
static bool same_record(const uint8_t *a, const uint8_t *b, uint32_t rs)
{
	struct ntfs_mft_record m;
	uint32_t used;

	memcpy(&m, a, sizeof(m));
	used = le32toh(m.bytes_in_use);
	if (used > rs || used < sizeof(m))
		used = rs;
	return !memcmp(a, b, used);
}

/*
 * Is RAW (a record as on disk) a usable copy of mirrored record RECNO?
 * System files (0-11) must be usable system records; the rest of the
 * mirrored range (12-15: reserved, free or $MFT's extension records;
 * user files when a cluster holds more than 16 records) only a valid
 * record.  Checks a copy; 0 or -1 with WHY.
 */
static int mirrored_usable(const struct ntfs_check *c, const uint8_t *raw,
			   uint64_t recno, char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *copy = malloc(rs);
	int ret;

	if (!copy) {
		snprintf(why, NTFS_WHY, "out of memory");
		return -1;
	}
	memcpy(copy, raw, rs);
	if (recno <= NTFS_FILE_EXTEND)
		ret = system_record_usable(c, copy, recno, why);
	else
		ret = ntfs_record_check(copy, rs, NTFS_MAGIC_FILE, why) ==
		      NTFS_REC_OK ? 0 : -1;
	free(copy);
	return ret;
}

/* The record number a record's header gives (RECNO if it has none). */
static uint64_t self_ref(const uint8_t *rec, uint64_t recno)
{
	struct ntfs_mft_record m;

	memcpy(&m, rec, sizeof(m));
	return le16toh(m.h.usa_ofs) >= 0x30 ? le32toh(m.mft_record_number) : recno;
}

/*
 * Records 0..mirr-1 must equal their $MFTMirr copies (at the location
 * pass 0 verified; nothing is read or written there otherwise).  WHY says
 * why $MFT's copy is not usable, and is updated when this finds out more.
 */
static void check_mirror(struct ntfs_check *c, uint64_t recno, uint8_t *rec,
			 enum ntfs_rec_state *state, const char *obj, char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *mir = malloc(rs), *raw = malloc(rs);
	char mwhy[NTFS_WHY];
	enum ntfs_rec_state ms;
	/* a record whose header is sound is judged further by its
	 * attributes below; unusable there, it may still be repaired in
	 * place (or made again) when the mirror cannot help */
	bool header_ok = *state == NTFS_REC_OK &&
			 !(recno < 4 && c->geo.mft_bad & (1u << recno));

	if (recno < 4 && c->geo.mft_bad & (1u << recno)) {
		/* it contradicts the geometry pass 0 verified */
		*state = NTFS_REC_BAD_HEADER;
		snprintf(why, NTFS_WHY, "%s", c->geo.mft_why[recno]);
	}
	if (!c->geo.mirr_ok || !mir || !raw ||
	    fsf_dev_pread(&c->dev, raw, rs, mirror_offset(c, recno)))
		goto out;
	ms = mirrored_usable(c, raw, recno, mwhy) == 0 ? NTFS_REC_OK :
							 NTFS_REC_BAD_HEADER;
	memcpy(mir, raw, rs);
	if (ms == NTFS_REC_OK)
		ntfs_record_check(mir, rs, NTFS_MAGIC_FILE, mwhy);
	if (*state == NTFS_REC_OK) {
		/* a valid header is not enough for a mirrored system file;
		 * rec has its fixups removed: check a protected copy */
		uint8_t *copy = malloc(rs);

		if (copy) {
			memcpy(copy, rec, rs);
			ntfs_fixup_apply(copy, rs, 1);
			if (mirrored_usable(c, copy, recno, why) != 0)
				*state = NTFS_REC_BAD_HEADER;
			free(copy);
		}
	}
	if (*state == NTFS_REC_OK && ms == NTFS_REC_OK &&
	    self_ref(rec, recno) != recno && self_ref(mir, recno) == recno) {
		/* the mirror's copy is the one that knows its number */
		*state = NTFS_REC_BAD_HEADER;
		snprintf(why, NTFS_WHY, "says it is MFT record %llu",
			 (unsigned long long)self_ref(rec, recno));
	}
	if (*state != NTFS_REC_OK && ms == NTFS_REC_OK) {
		if (fsf_fix_ask(&c->fix, &PR_MFT_FROM_MIRROR, obj, why) &&
		    fsf_dev_pwrite(&c->dev, raw, rs, ntfs_vol_record_offset(&c->vol, recno)))
			fsf_fix_failed(&c->fix);
		ntfs_vol_cache_drop(&c->vol);
		memcpy(rec, mir, rs);
		*state = NTFS_REC_OK;
	} else if (*state == NTFS_REC_OK &&
		   (ms != NTFS_REC_OK || !same_record(rec, mir, rs))) {
		if (fsf_fix_ask(&c->fix, &PR_MIRROR_DIFFERS, obj)) {
			memcpy(mir, rec, rs);
			/* write our record's bytes, fixups applied, to the mirror */
			if (ntfs_check_write_record(c, recno, mir))
				fsf_fix_failed(&c->fix);
		}
	} else if (*state != NTFS_REC_OK && header_ok) {
		/* both copies unusable: the repairs that follow take $MFT's
		 * (their writes go to the mirror too) */
		*state = NTFS_REC_OK;
	}
out:
	free(mir);
	free(raw);
}

int ntfs_pass1_mft(struct ntfs_check *c)
{
	const struct ntfs_boot_info *b = &c->vol.boot;
	uint32_t rs = b->g.mft_record_size;
	uint8_t *rec = malloc(rs), *bitmap = NULL;
	struct ntfs_run *bruns = NULL;
	long bnruns = 0;
	uint64_t blen = 0;
	struct fsf_progress prog;
	int ret;

	if (!rec)
		return -ENOMEM;
	ret = load_record0(c, rec);
	if (!ret)
		ret = locate_mft(c, rec, &bitmap, &blen, &bruns, &bnruns);
	if (ret)
		goto out;
	ntfs_load_attrdef(c, rec);
	cset_init(&c->cluster_used, b->g.nr_clusters);
	cset_init(&c->record_used, c->vol.mft_records);
	rset_init(&c->record_dir, c->vol.mft_records);
	rset_init(&c->not_plain, c->vol.mft_records);
	rset_init(&c->has_objid, c->vol.mft_records);
	c->summary_ok = true;
	names_digest_init(c);
	c->nbuckets = calloc(NAME_BUCKETS, sizeof(*c->nbuckets));	/* optional */
	rset_init(&c->early_named, c->vol.mft_records);
	rset_init(&c->uncounted, c->vol.mft_records);
	c->ext_bad = ntfs_rare_map(c->vol.mft_records);
	c->record_lost = ntfs_rare_map(c->vol.mft_records);
	c->nameless = ntfs_rare_map(c->vol.mft_records);
	if (!c->ext_bad || !c->record_lost || !c->nameless) {
		ret = -ENOMEM;
		goto out;
	}
	/* pass 0 counted the mirrored records; none without a mirror */
	if (!c->geo.mirr_ok)
		c->mirr_records = 0;
	if (c->mirr_records > c->vol.mft_records)
		c->mirr_records = (uint32_t)c->vol.mft_records;

	fsf_progress_init(&prog, "pass 1: MFT records", c->progress);
	for (uint64_t i = 0; i < c->vol.mft_records; i++) {
		enum ntfs_rec_state st;
		struct ntfs_mft_record m;
		char why[NTFS_WHY], obj[48];
		bool marked = i / 8 < blen && bit_get(bitmap, i);

		fsf_progress_update(&prog, i, c->vol.mft_records);
		snprintf(obj, sizeof(obj), "MFT record %llu", (unsigned long long)i);
		if (ntfs_vol_read_record(&c->vol, i, rec)) {
			uint64_t off = ntfs_vol_record_offset(&c->vol, i);

			st = NTFS_REC_BAD_MAGIC;
			snprintf(why, sizeof(why), "unreadable");
			if (off > c->dev.size || c->dev.size - off < rs) {
				/* past the end of a truncated device:
				 * unknown, so kept as the bitmap says */
				snprintf(why, sizeof(why), "past the end of the device");
				if (i >= NTFS_FILE_FIRST_USER) {
					if (marked) {
						cset_set(&c->record_used, i);
						/* not read: pass 2 looks at it */
						if (rset_set(&c->not_plain, i))
							c->summary_ok = false;
						c->geo.lost_records++;
					}
					continue;
				}
			}
		} else {
			st = ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why);
		}
		if (i < c->mirr_records)
			check_mirror(c, i, rec, &st, obj, why);
		if (st == NTFS_REC_TORN && (marked || i < NTFS_FILE_FIRST_USER)) {
			int s = ntfs_salvage_torn(c, i, rec, obj);

			if (s == 0)
				st = NTFS_REC_OK;
			else if (s > 0 && i >= NTFS_FILE_FIRST_USER)
				continue;	/* declined: left alone */
		}
		if ((st == NTFS_REC_BAD_USA || st == NTFS_REC_BAD_HEADER) &&
		    (marked || i < NTFS_FILE_FIRST_USER)) {
			int s = ntfs_salvage_header(c, i, rec, st, obj);

			if (s == 0)
				st = NTFS_REC_OK;
			else if (s > 0 && i >= NTFS_FILE_FIRST_USER)
				continue;	/* declined: left alone */
		}
		if (st == NTFS_REC_UNUSED && !marked && i >= NTFS_FILE_FIRST_USER)
			continue;
		if (st != NTFS_REC_OK && i == NTFS_FILE_ROOT &&
		    !ntfs_recreate_root(c, rec, obj, why))
			st = NTFS_REC_OK;
		if (st != NTFS_REC_OK) {
			if (i < NTFS_FILE_FIRST_USER) {
				int s = ntfs_sysrec_lost(c, i, rec, obj, why);

				if (s == 0)
					continue;	/* made again after the scan */
				if (s == -1)
					fsf_fix_ask(&c->fix, &PR_SYSTEM_RECORD_CORRUPT, obj, why);
				ret = -EUCLEAN;
				break;
			}
			if (!marked)
				continue;	/* free anyway: the bitmap pass fixes it */
			rare_set(c->record_lost, i);
			if (fsf_fix_ask(&c->fix, &PR_RECORD_CORRUPT, obj, why)) {
				ntfs_clear_record(rec, rs, i);
				if (ntfs_check_write_record(c, i, rec))
					fsf_fix_failed(&c->fix);
			}
			continue;
		}
		memcpy(&m, rec, sizeof(m));
		if (!(le16toh(m.flags) & NTFS_MFT_IN_USE)) {
			if (i < 12) {
				int s = ntfs_sysrec_lost(c, i, rec, obj, "not in use");

				if (s == 0)
					continue;
				if (s == -1)
					fsf_fix_ask(&c->fix, &PR_SYSTEM_FILE_MISSING, obj);
				ret = -EUCLEAN;
				break;
			}
			continue;
		}
		if (i < 12 && le16toh(m.sequence_number) != (i ? i : 1)) {
			/* a system file's sequence number is its record
			 * number ($MFT: 1); index entries rely on it */
			if (fsf_fix_ask(&c->fix, &PR_SYSTEM_SEQUENCE, obj,
					le16toh(m.sequence_number), (unsigned)(i ? i : 1))) {
				m.sequence_number = htole16((uint16_t)(i ? i : 1));
				memcpy(rec, &m, sizeof(m));
				if (ntfs_check_write_record(c, i, rec))
					fsf_fix_failed(&c->fix);
			}
		}
		if (le16toh(m.h.usa_ofs) >= 0x30 &&
		    le32toh(m.mft_record_number) != (uint32_t)i) {
			if (fsf_fix_ask(&c->fix, &PR_RECORD_NUMBER, obj,
					le32toh(m.mft_record_number))) {
				m.mft_record_number = htole32((uint32_t)i);
				memcpy(rec, &m, sizeof(m));
				if (ntfs_check_write_record(c, i, rec))
					fsf_fix_failed(&c->fix);
			}
		}
		if (ntfs_salvage_attrs(c, i, rec, obj) > 0)
			continue;	/* declined: left alone */
		ntfs_check_record_flags(c, i, rec, obj);
		ntfs_check_attr_extents(c, i, rec, obj);
		if (ntfs_sysfile_buildable((uint32_t)i) &&
		    ntfs_sysrec_check(c, i, rec, why)) {
			int s = ntfs_sysrec_lost(c, i, rec, obj, why);

			if (s == 0)
				continue;
			if (s == -2) {
				ret = -EUCLEAN;
				break;
			}
		}
		memcpy(&m, rec, sizeof(m));
		if (!le64toh(m.base_mft_record)) {
			bool list;
			int dos;
			int links = count_links(rec, &list, &dos);

			/* names in extension records are not counted here */
			if (!list && links > 0 && links != le16toh(m.link_count) &&
			    links - dos != le16toh(m.link_count) &&
			    fsf_fix_ask(&c->fix, &PR_LINK_COUNT, obj,
					le16toh(m.link_count), (unsigned)links)) {
				m.link_count = htole16((uint16_t)links);
				memcpy(rec, &m, sizeof(m));
				if (ntfs_check_write_record(c, i, rec))
					fsf_fix_failed(&c->fix);
			}
		}
		unsigned int names = 0;

		if (scan_attributes(c, i, rec, obj, &names) == 0) {
			bool list;
			int dos;

			cset_set(&c->record_used, i);
			ntfs_note_record(c, i, rec);
			/* a user file without a name in its own record and no
			 * list: pass 3 gives it one (its entry's, or /lost+found) */
			if (i >= NTFS_FILE_FIRST_USER && !le64toh(m.base_mft_record) &&
			    !names && !rset_get(&c->early_named, i) &&
			    (count_links(rec, &list, &dos), !list))
				rare_set(c->nameless, i);
			if (le16toh(m.flags) & NTFS_MFT_IS_DIRECTORY &&
			    !le64toh(m.base_mft_record) &&
			    rset_set(&c->record_dir, i)) {
				ret = -ENOMEM;
				break;
			}
			if (le64toh(m.base_mft_record) &&
			    note_extension(c, i, le64toh(m.base_mft_record) &
					   0xffffffffffffULL)) {
				ret = -ENOMEM;
				break;
			}
			if (!le64toh(m.base_mft_record) && note_list(c, i, rec)) {
				ret = -ENOMEM;
				break;
			}
		}
		else if (i < NTFS_FILE_FIRST_USER) {
			ret = -EUCLEAN;
			break;
		}
	}
	fsf_progress_done(&prog);
	/* $MFT's clusters as pass 1 read them: a lost tail it took (with
	 * -n record 0 still maps less) is in use */
	for (long k = 0; !ret && k < c->vol.nmft_runs; k++)
		for (uint64_t j = 0; c->vol.mft_runs[k].lcn >= 0 &&
		     j < c->vol.mft_runs[k].len; j++)
			cset_set(&c->cluster_used, (uint64_t)c->vol.mft_runs[k].lcn + j);
	if (c->geo.lost_records)
		fsf_info(c->log, "%llu in-use MFT records lie past the end of the device and are not checked",
			 (unsigned long long)c->geo.lost_records);
	/* a cluster or record the sets could not take is not known to be in
	 * use: nothing may be allocated or claimed from them */
	if (!ret && (c->cluster_used.nomem || c->record_used.nomem))
		ret = -ENOMEM;
	if (!ret)
		ret = ntfs_sysrec_remake(c);
	if (!ret) {
		ntfs_check_attr_lists(c);
		ntfs_check_extensions(c);
	}
out:
	if (!ret && (c->cluster_used.nomem || c->record_used.nomem))
		ret = -ENOMEM;
	free(rec);
	free(bitmap);
	free(bruns);
#ifdef __GLIBC__
	/* the $MFT bitmap (an eighth of a byte per record, under glibc's
	 * mmap threshold up to 1M records) came from the heap: its pages
	 * would stay resident, unused, through the later passes */
	malloc_trim(0);
#endif
	return ret;
}
