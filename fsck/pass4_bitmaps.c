// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 4: $Bitmap (one bit per cluster) and $MFT's bitmap (one bit per
 * record) must say exactly what pass 1 found in use; they are rewritten
 * from that when they do not.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs_check.h"
#include "ntfs_problems.h"

/*
 * What each bit of a bitmap must be, as the formatters (mkntfs, our
 * mkfs.ntfs) write it and ntfsck checks it:
 *   $Bitmap: a cluster's bit is set when it is in use; the bits past the
 *     last cluster (the bitmap is a multiple of 8 bytes) are set, so that
 *     no allocator hands out a cluster the volume does not have;
 *   $MFT's bitmap: a record's bit is set when it is in use; records 12-15
 *     (reserved for future system files, formatted but not in use) are
 *     set; 16-23 (reserved for $MFT's own extension records) only when in
 *     use; the bits past the last record are clear (an allocator extends
 *     $MFT's data before it uses them).
 */
struct bit_rules {
	const uint8_t *want;		/* in use, one bit per item */
	const struct ntfs_cset *set;	/* or: the items in use */
	uint64_t count;			/* items */
	bool tail;			/* value of the bits past COUNT */
	uint64_t set_from, set_to;	/* always set */
	uint64_t skip_from, skip_to;	/* not judged (a missing tail) */
};

static bool wanted(const struct bit_rules *r, uint64_t i)
{
	if (i >= r->count)
		return r->tail;
	return (r->set ? cset_get(r->set, i) : bit_get(r->want, i)) ||
	       (i >= r->set_from && i < r->set_to);
}

/*
 * The N bytes at P, bits FROM on of the bitmap, agree with the rules
 * because they are all zero and no item of theirs is wanted: known
 * without asking for each bit (a volume of terabytes mostly free has
 * hundreds of millions of such bits: 8 s of CPU for 3 TiB, asked one by
 * one).  False: compare them bit by bit.
 */
static bool zero_span_agrees(const uint8_t *p, uint64_t n,
			     const struct bit_rules *r, uint64_t from)
{
	uint64_t to = from + n * 8, end = to < r->count ? to : r->count;

	if (!n || !r->set || (to > r->count && r->tail) ||
	    (from < r->set_to && to > r->set_from))
		return false;
	if (cset_any(r->set, from, end))
		return false;
	return !p[0] && !memcmp(p, p + 1, n - 1);
}

#define SPAN_BYTES 4096u

/* Compare the LEN bytes of DISK with the rules; count both kinds of
 * difference; make DISK right. */
static bool reconcile(uint8_t *disk, uint64_t len, const struct bit_rules *r,
		      unsigned long long *missing, unsigned long long *extra)
{
	*missing = *extra = 0;
	for (uint64_t i = 0; i < len * 8; i++) {
		bool d, w;

		if (!(i % (8 * SPAN_BYTES))) {
			uint64_t n = len - i / 8 < SPAN_BYTES ? len - i / 8 : SPAN_BYTES;

			if (zero_span_agrees(disk + i / 8, n, r, i)) {
				i += 8 * n - 1;
				continue;
			}
		}
		d = bit_get(disk, i);
		w = wanted(r, i);

		if (i >= r->skip_from && i < r->skip_to)
			continue;
		if (d == w)
			continue;
		if (w) {
			(*missing)++;
			bit_set(disk, i);
		} else {
			(*extra)++;
			bit_clear(disk, i);
		}
	}
	return *missing || *extra;
}

/*
 * A bitmap on disk that says what the rules say, known without holding
 * it whole (2M clusters: 256 kB):
 * its clusters are read a window at a time and compared.  True only
 * when every bit was read and agrees; anything else (a difference, a
 * resident value, a hole, bytes past the initialized size, an I/O
 * error) is left to the comparison of the whole bitmap below, which
 * reports and repairs.
 */
#define WINDOW_BYTES 16384u

static bool agrees_streamed(struct ntfs_check *c, const uint8_t *holder,
			    uint32_t type, const struct bit_rules *r)
{
	const struct ntfs_attr_header *a = ntfs_attr_find(holder, type);
	struct ntfs_attr_nonresident n;
	struct ntfs_run *runs = NULL;
	uint8_t *w = NULL;
	uint64_t len = 0;
	long nruns = 0;
	bool same = false;

	if (!a || !a->non_resident || a->name_length)
		return false;
	memcpy(&n, a, sizeof(n));
	if (n.lowest_vcn || n.data_size != n.initialized_size ||
	    ntfs_vol_attr_runs(&c->vol, holder, type, &len, &runs, &nruns) ||
	    nruns <= 0 || len != (uint64_t)le64toh((uint64_t)n.data_size) ||
	    len * 8 < r->count || !(w = malloc(WINDOW_BYTES)))
		goto out;
	same = true;
	for (uint64_t at = 0; same && at < len; at += WINDOW_BYTES) {
		uint64_t k = len - at < WINDOW_BYTES ? len - at : WINDOW_BYTES;

		if (ntfs_vol_runs_pread(&c->vol, runs, nruns, at, k, w)) {
			same = false;
			break;
		}
		if (zero_span_agrees(w, k, r, at * 8))
			continue;
		for (uint64_t i = 0; i < k * 8; i++) {
			uint64_t bit = at * 8 + i;

			if (bit >= r->skip_from && bit < r->skip_to)
				continue;
			if (bit_get(w, i) != wanted(r, bit)) {
				same = false;
				break;
			}
		}
	}
out:
	free(w);
	free(runs);
	return same;
}

static int write_back(struct ntfs_check *c, uint64_t recno, uint8_t *rec,
		      uint32_t type, const uint8_t *data, uint64_t len,
		      const struct ntfs_run *runs, long nruns)
{
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];

	if (nruns > 0)
		return ntfs_vol_write_runs(&c->vol, runs, nruns, data, len);
	/* resident: patch the value in the record and write the record */
	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1) {
		uint32_t vlen;
		const uint8_t *v;

		if (le32toh(a->type) != type || a->non_resident || a->name_length)
			continue;
		v = ntfs_attr_value(a, &vlen);
		memcpy((uint8_t *)v, data, vlen < len ? vlen : len);
		return ntfs_check_write_record(c, recno, rec);
	}
	return -ENOENT;
}

static int check_one(struct ntfs_check *c, uint64_t recno, uint32_t type,
		     const struct fsf_problem *pr, const char *obj,
		     const struct bit_rules *rules)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *rec = malloc(rs), *ext = malloc(rs), *holder = NULL, *disk = NULL;
	struct ntfs_run *runs = NULL;
	unsigned long long missing, extra;
	char why[NTFS_WHY];
	uint64_t len, where = recno;
	long nruns;
	int ret;

	if (!rec || !ext) {
		free(rec);
		free(ext);
		return -ENOMEM;
	}
	ret = ntfs_vol_read_record(&c->vol, recno, rec);
	if (!ret && ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		ret = -EUCLEAN;
	/* in an extension record when the base has a list ($MFT's $BITMAP
	 * as Linux's ntfs driver leaves it) */
	if (!ret)
		ret = ntfs_file_attr_holder(c, rec, recno, type, ext, &holder, &where);
	if (ret == -EUCLEAN && type == NTFS_AT_BITMAP) {
		/* $MFT's bitmap in several extents: read and written
		 * through their joined runs */
		holder = rec;
		ret = ntfs_read_split(c, recno, type, &disk, &len, &runs, &nruns);
		if (ret)
			goto out;
		goto judge;
	}
	if (!ret && agrees_streamed(c, holder, type, rules)) {
		free(rec);
		free(ext);
		return 0;
	}
	if (!ret)
		ret = ntfs_vol_read_attr(&c->vol, holder, type, &disk, &len, &runs, &nruns);
	if (ret == -EIO && c->geo.dev_clusters < c->vol.boot.g.nr_clusters) {
		/* in the missing tail: pass 0 reported it, and nothing
		 * can be compared */
		free(rec);
		free(ext);
		free(disk);
		free(runs);
		return 0;
	}
	if (ret == -EIO && c->dev.read_errors) {
		fsf_fix_ask(&c->fix, &PR_BITMAP_READ_ERROR, obj);
		ret = 0;
		goto out;
	}
judge:
	if (!ret && len * 8 < rules->count)
		ret = -EUCLEAN;
	if (!ret && reconcile(disk, len, rules, &missing, &extra) &&
	    fsf_fix_ask(&c->fix, pr, obj, missing, extra) &&
	    write_back(c, where, holder, type, disk, len, runs, nruns))
		fsf_fix_failed(&c->fix);
out:
	free(rec);
	free(ext);
	free(disk);
	free(runs);
	return ret;
}

int ntfs_pass4_bitmaps(struct ntfs_check *c)
{
	struct bit_rules clusters = {
		.set = &c->cluster_used, .count = c->vol.boot.g.nr_clusters,
		.tail = true,
		/* a truncated device: clusters past its end are unreadable,
		 * but every record that owns one was read, so their bits
		 * are judged as any other (ntfsck does; a repair that moved
		 * an index from there frees them); if MFT records were lost
		 * there, no bit is judged */
		.skip_from = 0,
		.skip_to = c->geo.lost_records ? UINT64_MAX : 0,
	};
	struct bit_rules records = {
		.set = &c->record_used, .count = c->vol.mft_records,
		.tail = false, .set_from = 12, .set_to = NTFS_FILE_FIRST_USER,
	};
	int ret;

	/* a cluster marked in use was lost to memory running out: $Bitmap
	 * is not judged against that */
	if (c->cluster_used.nomem || c->record_used.nomem)
		return -ENOMEM;
	ret = check_one(c, NTFS_FILE_BITMAP, NTFS_AT_DATA, &PR_CLUSTER_BITMAP,
			"$Bitmap", &clusters);
	if (ret)
		return ret;
	return check_one(c, NTFS_FILE_MFT, NTFS_AT_BITMAP, &PR_MFT_BITMAP,
			 "$MFT bitmap", &records);
}
