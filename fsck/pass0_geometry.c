// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 0, second half: is a boot sector's geometry true?  A boot sector
 * that parses is only a claim; it is believed when the FILE records it
 * leads to say so: record 0 at its $MFT cluster (self-reference 0) whose
 * $DATA starts at that same cluster, records 1-3 where that runlist puts
 * them, and $MFTMirr's records 0-3 at the cluster the boot sector or
 * $MFTMirr's own runlist names.  Everything here only reads: no write may
 * go through a location before it has been verified this way.  When
 * $MFT's first records are all gone (another block written over its
 * first cluster by a misdirected write: none of records 0-3 there is a
 * FILE record, not even another's), the mirror confirms the location
 * alone: its record 0's $DATA starts at the boot sector's $MFT cluster
 * and its records 1-3 are whole, and the record after the overwritten
 * span is in its place (else the whole $MFT is gone, and the volume is
 * refused); pass 1 restores the four from it.
 */
#include "config.h"

#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/geometry.h"
#include "ntfs_check.h"

/*
 * $MFT goes on after its overwritten head: the first record past the span
 * a misdirected write covers (records 0-3, or the whole first cluster:
 * record max(4, cluster / record size)), in use or free, is where the
 * mirror's runlist RUNS (N) puts it and says it is that record.  Without
 * it the mirror alone would rebuild a volume whose $MFT is gone.
 */
static bool mft_continues(struct ntfs_check *c, const struct ntfs_geometry *g,
			  const struct ntfs_run *runs, long n, uint8_t *buf)
{
	uint32_t rs = g->mft_record_size, cs = g->cluster_size;
	uint32_t next = cs / rs > 4 ? cs / rs : 4;
	uint64_t off = ntfs_runs_offset(runs, n, cs, (uint64_t)next * rs, rs);

	return off != UINT64_MAX &&
	       ntfs_geom_record_states(&c->dev, g, off, next, buf);
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
	char why[NTFS_WHY], why0[NTFS_WHY], whyi[4][NTFS_WHY];
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
	r = ntfs_geom_read_record(&c->dev, g, (uint64_t)k->b.mft_lcn * cs, 0, buf,
				  why0);
	if ((r == NTFS_GEOM_REC_OK || r == NTFS_GEOM_REC_OTHER) &&
	    ntfs_rec_data_runs(buf, g->nr_clusters, &runs, &nruns, &size, why) != 0) {
		if (r == NTFS_GEOM_REC_OK)
			snprintf(why0, NTFS_WHY, "%s", why);
	} else if (runs && runs[0].lcn != k->b.mft_lcn) {
		if (r == NTFS_GEOM_REC_OK)
			snprintf(why0, NTFS_WHY, "its $DATA starts at cluster %lld, $MFT is at cluster %lld",
				 (long long)runs[0].lcn, (long long)k->b.mft_lcn);
		free(runs);
		runs = NULL;
	}
	if (runs && r == NTFS_GEOM_REC_OTHER) {
		oruns = runs;
		noruns = nruns;
		runs = NULL;
	}
	if (!runs) {
		if (ntfs_geom_read_record(&c->dev, g, (uint64_t)lb * cs, 0, buf,
					  why) == NTFS_GEOM_REC_OK &&
		    ntfs_rec_data_runs(buf, g->nr_clusters, &runs, &nruns, &size, why) == 0 &&
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

		snprintf(why, NTFS_WHY, "not in $MFT's runlist");
		r = off == UINT64_MAX ? NTFS_GEOM_REC_BAD :
		    ntfs_geom_read_record(&c->dev, g, off, i, buf, why);
		snprintf(whyi[i], NTFS_WHY, "%s", why);
		if (r == NTFS_GEOM_REC_OTHER)
			other++;
		if (r != NTFS_GEOM_REC_OK)
			continue;
		found++;
		if (i == NTFS_FILE_MFTMIRR &&
		    ntfs_rec_data_runs(buf, g->nr_clusters, &r1runs, &nr1, &mirr_size, why) == 0)
			l1 = r1runs[0].lcn;
	}
	if (!found && !other && (k->mft_bad & 1) &&
	    ntfs_geom_mirror_score(&c->dev, g, lb, runs, nruns, buf) == 4 &&
	    mft_continues(c, g, runs, nruns, buf)) {
		/* $MFT's first records overwritten whole: the mirror's */
		for (uint32_t i = 1; i < 4; i++) {
			k->mft_bad |= (uint8_t)(1u << i);
			snprintf(k->mft_why[i], NTFS_WHY, "%s", whyi[i]);
		}
		found = 3;
	}
	if (!found || other >= found) {
		snprintf(k->why, NTFS_WHY, "records 1-3 are not at $MFT cluster %lld",
			 (long long)k->b.mft_lcn);
		goto out;
	}
	k->mft_ok = true;
	/* $MFTMirr: where the boot sector says, or where its own $DATA is */
	sb = ntfs_geom_mirror_score(&c->dev, g, lb, runs, nruns, buf);
	if (l1 >= 0 && l1 != lb)
		s1 = ntfs_geom_mirror_score(&c->dev, g, l1, runs, nruns, buf);
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

	if (buf && ntfs_geom_read_record(&c->dev, g,
					 (uint64_t)k->b.mftmirr_lcn * g->cluster_size,
					 0, buf, why) == NTFS_GEOM_REC_OK &&
	    ntfs_rec_data_runs(buf, g->nr_clusters, &runs, &n, &size, why) == 0)
		lcn = runs[0].lcn;
	free(buf);
	free(runs);
	return lcn;
}
