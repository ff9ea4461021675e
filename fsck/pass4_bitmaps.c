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

/* Compare COUNT bits; count both kinds of difference; make DISK right. */
static bool reconcile(uint8_t *disk, const uint8_t *want, uint64_t count,
		      uint64_t skip_from, uint64_t skip_to,
		      unsigned long long *missing, unsigned long long *extra)
{
	*missing = *extra = 0;
	for (uint64_t i = 0; i < count; i++) {
		bool d = bit_get(disk, i), w = bit_get(want, i);

		if (i >= skip_from && i < skip_to)
			continue;	/* reserved: either answer is right */
		if (d == w)
			continue;
		if (w) {
			(*missing)++;
			disk[i >> 3] |= (uint8_t)(1u << (i & 7));
		} else {
			(*extra)++;
			disk[i >> 3] &= (uint8_t)~(1u << (i & 7));
		}
	}
	return *missing || *extra;
}

static int write_back(struct ntfs_check *c, uint64_t recno, uint8_t *rec,
		      uint32_t type, const uint8_t *data, uint64_t len,
		      const struct ntfs_run *runs, long nruns)
{
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];

	if (nruns > 0)
		return ntfs_check_write_runs(c, runs, nruns, data, len);
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
		     const uint8_t *want, uint64_t count, uint64_t skip_from,
		     uint64_t skip_to)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *rec = malloc(rs), *disk = NULL;
	struct ntfs_run *runs = NULL;
	unsigned long long missing, extra;
	char why[NTFS_WHY];
	uint64_t len;
	long nruns;
	int ret;

	if (!rec)
		return -ENOMEM;
	ret = ntfs_check_read_record(c, recno, rec);
	if (!ret && ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		ret = -EUCLEAN;
	if (!ret)
		ret = ntfs_check_read_attr(c, rec, type, &disk, &len, &runs, &nruns);
	if (ret == -EIO && c->geo.dev_clusters < c->vol.boot.g.nr_clusters) {
		ret = 0;	/* in the missing tail: pass 0 reported it */
		count = 0;	/* ... and nothing can be compared */
	} else if (!ret && len * 8 < count) {
		ret = -EUCLEAN;
	}
	if (!ret && count && reconcile(disk, want, count, skip_from, skip_to, &missing, &extra) &&
	    fsf_fix_ask(&c->fix, pr, obj, missing, extra) &&
	    write_back(c, recno, rec, type, disk, len, runs, nruns))
		fsf_fix_failed(&c->fix);
	free(rec);
	free(disk);
	free(runs);
	return ret;
}

int ntfs_pass4_bitmaps(struct ntfs_check *c)
{
	/* a truncated device: clusters past its end are unreadable, and
	 * are not judged; if MFT records were lost there, no cluster is */
	int ret = check_one(c, NTFS_FILE_BITMAP, NTFS_AT_DATA, &PR_CLUSTER_BITMAP,
			    "$Bitmap", c->cluster_used, c->vol.boot.g.nr_clusters,
			    c->geo.lost_records ? 0 : c->geo.dev_clusters,
			    c->vol.boot.g.nr_clusters);

	if (ret)
		return ret;
	/* records 12-23 are reserved: formatters mark them either way */
	return check_one(c, NTFS_FILE_MFT, NTFS_AT_BITMAP, &PR_MFT_BITMAP,
			 "$MFT bitmap", c->record_used, c->vol.mft_records,
			 12, NTFS_FILE_QUOTA);
}
