// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 0, second half: is a boot sector's geometry true?  A boot sector
 * that parses is only a claim; it is believed when the FILE records it
 * leads to say so: record 0 at its $MFT cluster (self-reference 0) whose
 * $DATA starts at that same cluster, records 1-3 where that runlist puts
 * them, and $MFTMirr's records 0-3 at the cluster the boot sector or
 * $MFTMirr's own runlist names.  Everything here only reads: no write may
 * go through a location before it has been verified this way.
 */
#include "config.h"

#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs_check.h"

/* get_rec() results */
enum { REC_OK = 0, REC_BAD = -1, REC_OTHER = -2 };

/*
 * The record at byte OFF, expected to be in-use base record RECNO:
 * REC_OK (fixups removed), REC_BAD (unreadable or not a valid FILE
 * record: WHY), or REC_OTHER (a valid FILE record that says it is another
 * record: evidence that OFF is the wrong place).
 */
static int get_rec(struct ntfs_check *c, const struct ntfs_geometry *g,
		   uint64_t off, uint32_t recno, uint8_t *buf, char *why)
{
	uint32_t rs = g->mft_record_size;
	struct ntfs_mft_record m;

	if (off > c->dev.size || rs > c->dev.size - off ||
	    fsf_dev_pread(&c->dev, buf, rs, off)) {
		snprintf(why, NTFS_WHY, "unreadable at byte %llu",
			 (unsigned long long)off);
		return REC_BAD;
	}
	if (ntfs_record_check(buf, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		return REC_BAD;
	memcpy(&m, buf, sizeof(m));
	if (le16toh(m.h.usa_ofs) >= 0x30 &&
	    le32toh(m.mft_record_number) != recno) {
		snprintf(why, NTFS_WHY, "holds MFT record %u, not %u",
			 le32toh(m.mft_record_number), recno);
		return REC_OTHER;
	}
	if (!(le16toh(m.flags) & NTFS_MFT_IN_USE) || le64toh(m.base_mft_record)) {
		snprintf(why, NTFS_WHY, "record %u is not an in-use base record",
			 recno);
		return REC_BAD;
	}
	return REC_OK;
}

/* The runs and size of a checked record's unnamed $DATA (first extent);
 * 0, or -1 with WHY. */
static int data_runs(const uint8_t *rec, uint64_t nr_clusters,
		     struct ntfs_run **runs, long *n, uint64_t *size, char *why)
{
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	int r;

	*runs = NULL;
	ntfs_attr_cursor_init(&cur, rec);
	while ((r = ntfs_attr_next(&cur, &a, why)) == 1) {
		struct ntfs_attr_nonresident nr;

		if (le32toh(a->type) != NTFS_AT_DATA || a->name_length)
			continue;
		if (!a->non_resident)
			break;
		memcpy(&nr, a, sizeof(nr));
		if (nr.lowest_vcn)
			continue;
		*n = ntfs_attr_runs(a, nr_clusters, runs, why);
		if (*n < 0)
			return -1;
		if (*n == 0 || (*runs)[0].lcn < 0) {
			free(*runs);
			*runs = NULL;
			snprintf(why, NTFS_WHY, "$DATA has no first cluster");
			return -1;
		}
		*size = le64toh((uint64_t)nr.data_size);
		return 0;
	}
	if (r >= 0)
		snprintf(why, NTFS_WHY, "no non-resident $DATA attribute");
	return -1;
}

/* Does [off, off + len) meet any of RUNS? */
static bool overlaps(const struct ntfs_run *runs, long n, uint32_t cs,
		     uint64_t off, uint64_t len)
{
	for (long i = 0; i < n; i++) {
		uint64_t s = (uint64_t)runs[i].lcn * cs, e = s + runs[i].len * cs;

		if (runs[i].lcn >= 0 && off < e && s < off + len)
			return true;
	}
	return false;
}

/* How many of records 0-3 are at cluster LCN as the mirror holds them;
 * -1 when something else is there (other MFT records, or $MFT itself). */
static int mirror_score(struct ntfs_check *c, const struct ntfs_geometry *g,
			int64_t lcn, const struct ntfs_run *mft, long nmft,
			uint8_t *buf)
{
	uint32_t rs = g->mft_record_size;
	uint64_t off = (uint64_t)lcn * g->cluster_size;
	char why[NTFS_WHY];
	int score = 0;

	if (lcn <= 0 || (uint64_t)lcn >= g->nr_clusters ||
	    overlaps(mft, nmft, g->cluster_size, off, 4ull * rs))
		return -1;
	for (uint32_t i = 0; i < 4; i++) {
		int r = get_rec(c, g, off + (uint64_t)i * rs, i, buf, why);

		if (r == REC_OTHER)
			return -1;
		score += r == REC_OK;
	}
	return score;
}

void ntfs_geometry_verify(struct ntfs_check *c, struct ntfs_candidate *k)
{
	const struct ntfs_geometry *g = &k->b.g;
	uint32_t rs = g->mft_record_size, cs = g->cluster_size;
	uint8_t *buf = malloc(rs);
	struct ntfs_run *runs = NULL, *r1runs = NULL, *oruns = NULL;
	long nruns = 0, nr1 = 0, noruns = 0;
	uint64_t size, mirr_size = 0;
	int64_t l1 = -1, lb = k->b.mftmirr_lcn;
	char why[NTFS_WHY], why0[NTFS_WHY];
	int found = 0, other = 0, r, sb, s1 = -1;

	k->mft_ok = false;
	k->mirr_lcn = -1;
	k->mft_bad = 0;
	k->mirr_records = cs > 4 * rs ? cs / rs : 4;
	if (!buf) {
		snprintf(k->why, NTFS_WHY, "out of memory");
		return;
	}
	/* record 0: $MFT's copy, else the mirror's, if its $DATA starts
	 * where this boot sector puts $MFT; last, $MFT's copy with a wrong
	 * self-reference (pass 1 fixes the number) */
	r = get_rec(c, g, (uint64_t)k->b.mft_lcn * cs, 0, buf, why0);
	if ((r == REC_OK || r == REC_OTHER) &&
	    data_runs(buf, g->nr_clusters, &runs, &nruns, &size, why) != 0) {
		if (r == REC_OK)
			snprintf(why0, NTFS_WHY, "%s", why);
	} else if (runs && runs[0].lcn != k->b.mft_lcn) {
		if (r == REC_OK)
			snprintf(why0, NTFS_WHY, "its $DATA starts at cluster %lld, $MFT is at cluster %lld",
				 (long long)runs[0].lcn, (long long)k->b.mft_lcn);
		free(runs);
		runs = NULL;
	}
	if (runs && r == REC_OTHER) {
		oruns = runs;
		noruns = nruns;
		runs = NULL;
	}
	if (!runs) {
		if (get_rec(c, g, (uint64_t)lb * cs, 0, buf, why) == REC_OK &&
		    data_runs(buf, g->nr_clusters, &runs, &nruns, &size, why) == 0 &&
		    runs[0].lcn == k->b.mft_lcn) {
			k->mft_bad |= 1;
			snprintf(k->mft_why[0], NTFS_WHY, "%s", why0);
		} else if (oruns) {
			free(runs);
			runs = oruns;
			nruns = noruns;
			oruns = NULL;
		} else {
			snprintf(k->why, NTFS_WHY, "its $MFT cluster %lld: %.80s",
				 (long long)k->b.mft_lcn, why0);
			goto out;
		}
	}
	/* records 1-3 where that runlist puts them: most of those that are
	 * valid FILE records must say they are 1-3 */
	for (uint32_t i = 1; i < 4; i++) {
		uint64_t off = ntfs_runs_offset(runs, nruns, cs, (uint64_t)i * rs, rs);

		r = off == UINT64_MAX ? REC_BAD : get_rec(c, g, off, i, buf, why);
		if (r == REC_OTHER)
			other++;
		if (r != REC_OK)
			continue;
		found++;
		if (i == NTFS_FILE_MFTMIRR &&
		    data_runs(buf, g->nr_clusters, &r1runs, &nr1, &mirr_size, why) == 0)
			l1 = r1runs[0].lcn;
	}
	if (!found || other >= found) {
		snprintf(k->why, NTFS_WHY, "records 1-3 are not at $MFT cluster %lld",
			 (long long)k->b.mft_lcn);
		goto out;
	}
	k->mft_ok = true;
	/* $MFTMirr: where the boot sector says, or where its own $DATA is */
	sb = mirror_score(c, g, lb, runs, nruns, buf);
	if (l1 >= 0 && l1 != lb)
		s1 = mirror_score(c, g, l1, runs, nruns, buf);
	if (l1 == lb && sb >= 0)
		k->mirr_lcn = lb;	/* two sources agree */
	else if (s1 >= 1 && s1 >= sb)
		k->mirr_lcn = l1;	/* the boot sector's field is wrong */
	else if (sb >= 1) {
		k->mirr_lcn = lb;
		if (l1 >= 0) {		/* record 1's runlist is wrong */
			k->mft_bad |= 2;
			snprintf(k->mft_why[1], NTFS_WHY,
				 "its $DATA is at cluster %lld, $MFTMirr is at cluster %lld",
				 (long long)l1, (long long)lb);
		}
	}
	/* the mirror holds what $MFTMirr's data holds, up to a cluster */
	if (k->mirr_lcn >= 0 && k->mirr_lcn == l1) {
		uint64_t fit = r1runs[0].len * cs / rs;

		if (mirr_size / rs < fit)
			fit = mirr_size / rs;
		if (fit >= 1 && fit < k->mirr_records)
			k->mirr_records = (uint32_t)fit;
	}
out:
	free(buf);
	free(runs);
	free(oruns);
	free(r1runs);
}

int64_t ntfs_geometry_mft_from_mirror(struct ntfs_check *c,
				      const struct ntfs_candidate *k)
{
	const struct ntfs_geometry *g = &k->b.g;
	uint8_t *buf = malloc(g->mft_record_size);
	struct ntfs_run *runs = NULL;
	char why[NTFS_WHY];
	uint64_t size;
	int64_t lcn = -1;
	long n;

	if (buf && get_rec(c, g, (uint64_t)k->b.mftmirr_lcn * g->cluster_size,
			   0, buf, why) == REC_OK &&
	    data_runs(buf, g->nr_clusters, &runs, &n, &size, why) == 0)
		lcn = runs[0].lcn;
	free(buf);
	free(runs);
	return lcn;
}
