// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The FILE records a boot sector's geometry leads to, read where it
 * says (include/ntfs/geometry.h): record 0 and its $DATA, records 1-3,
 * $MFTMirr's copies scored.  Only reads; the checker judges.
 */
#include "config.h"

#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/geometry.h"

int ntfs_geom_read_record(struct fsf_dev *dev, const struct ntfs_geometry *g,
			  uint64_t off, uint32_t recno, uint8_t *buf, char *why)
{
	uint32_t rs = g->mft_record_size;
	struct ntfs_mft_record m;

	if (off > dev->size || rs > dev->size - off ||
	    fsf_dev_pread(dev, buf, rs, off)) {
		snprintf(why, NTFS_WHY, "unreadable at byte %llu",
			 (unsigned long long)off);
		return NTFS_GEOM_REC_BAD;
	}
	if (ntfs_record_check(buf, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		return NTFS_GEOM_REC_BAD;
	memcpy(&m, buf, sizeof(m));
	if (le16toh(m.h.usa_ofs) >= 0x30 &&
	    le32toh(m.mft_record_number) != recno) {
		snprintf(why, NTFS_WHY, "holds MFT record %u, not %u",
			 le32toh(m.mft_record_number), recno);
		return NTFS_GEOM_REC_OTHER;
	}
	if (!(le16toh(m.flags) & NTFS_MFT_IN_USE) || le64toh(m.base_mft_record)) {
		snprintf(why, NTFS_WHY, "record %u is not an in-use base record",
			 recno);
		return NTFS_GEOM_REC_BAD;
	}
	return NTFS_GEOM_REC_OK;
}

bool ntfs_geom_record_states(struct fsf_dev *dev, const struct ntfs_geometry *g,
			     uint64_t off, uint32_t recno, uint8_t *buf)
{
	uint32_t rs = g->mft_record_size;
	struct ntfs_mft_record m;
	char why[NTFS_WHY];

	if (off > dev->size || rs > dev->size - off ||
	    fsf_dev_pread(dev, buf, rs, off) ||
	    ntfs_record_check(buf, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		return false;
	memcpy(&m, buf, sizeof(m));
	return le16toh(m.h.usa_ofs) >= 0x30 &&
	       le32toh(m.mft_record_number) == recno;
}

int ntfs_rec_data_runs(const uint8_t *rec, uint64_t nr_clusters,
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

bool ntfs_runs_meet(const struct ntfs_run *runs, long n, uint32_t cs,
		    uint64_t off, uint64_t len)
{
	for (long i = 0; i < n; i++) {
		uint64_t s = (uint64_t)runs[i].lcn * cs, e = s + runs[i].len * cs;

		if (runs[i].lcn >= 0 && off < e && s < off + len)
			return true;
	}
	return false;
}

int ntfs_geom_mirror_score(struct fsf_dev *dev, const struct ntfs_geometry *g,
			   int64_t lcn, const struct ntfs_run *mft, long nmft,
			   uint8_t *buf)
{
	uint32_t rs = g->mft_record_size;
	uint64_t off = (uint64_t)lcn * g->cluster_size;
	char why[NTFS_WHY];
	int score = 0;

	if (lcn <= 0 || (uint64_t)lcn >= g->nr_clusters ||
	    ntfs_runs_meet(mft, nmft, g->cluster_size, off, 4ull * rs))
		return -1;
	for (uint32_t i = 0; i < 4; i++) {
		int r = ntfs_geom_read_record(dev, g, off + (uint64_t)i * rs, i, buf, why);

		if (r == NTFS_GEOM_REC_OTHER)
			return -1;
		score += r == NTFS_GEOM_REC_OK;
	}
	return score;
}

