// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * $MFT grown to the records found past what record 0 says
 * (include/ntfs/mft_grow.h): its last extent's runs, its sizes and its
 * $BITMAP's size written in the records that hold them.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/attrlist.h"
#include "ntfs/file_attrs.h"
#include "ntfs/mft_grow.h"
#include "ntfs/repair.h"
#include "ntfs/sysfile.h"
#include "ntfs/volume_io.h"

/* Record RECNO read and checked into REC: 0, -EUCLEAN or the device's
 * error. */
static int read_checked(struct ntfs_vol *v, uint64_t recno, uint8_t *rec)
{
	char why[NTFS_WHY];
	int ret = ntfs_vol_read_record(v, recno, rec);

	if (!ret && ntfs_record_check(rec, v->boot.g.mft_record_size,
				      NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		ret = -EUCLEAN;
	return ret;
}

/* The record holding the last extent of $MFT's $DATA and that extent's
 * lowest VCN: record 0 (VCN 0) without an attribute list, else the
 * entry of record 0's list with the highest VCN.  0 or -1. */
static int last_extent_holder(struct ntfs_vol *v, const uint8_t *rec0,
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
	if (ntfs_vol_read_attr(v, rec0, NTFS_AT_ATTRIBUTE_LIST, &list, &len,
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
static int bitmap_sizes_holder(struct ntfs_vol *v, const uint8_t *rec0,
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
	    ntfs_vol_read_attr(v, rec0, NTFS_AT_ATTRIBUTE_LIST, &list, &len,
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
static int grow_bitmap_elsewhere(struct ntfs_vol *v, uint64_t mirr,
				 uint64_t recno, uint64_t bmbytes)
{
	uint32_t rs = v->boot.g.mft_record_size;
	uint8_t *rec = malloc(rs);
	int ret = -ENOMEM;

	if (!rec)
		return ret;
	ret = read_checked(v, recno, rec);
	if (!ret && set_bitmap_size(rec, bmbytes))
		ret = ntfs_vol_write_record(v, recno, rec, mirr);
	free(rec);
	return ret;
}

int ntfs_mft_grow_runs(struct ntfs_vol *v, uint64_t mirr, uint64_t bmbytes,
		       uint64_t old)
{
	uint32_t rs = v->boot.g.mft_record_size, cs = v->boot.g.cluster_size;
	uint8_t *rec = malloc(rs), *xrec = malloc(rs), *mp = malloc(rs), *a, *x;
	struct ntfs_run *runs = NULL;
	uint64_t clusters = 0, holder, at = 0, bmrec;
	int64_t vcn;
	char why[NTFS_WHY];
	int ret = -ENOMEM, len;
	long nr, k = 0;

	if (!rec || !xrec || !mp)
		goto out;
	for (long i = 0; i < v->nmft_runs; i++)
		clusters += v->mft_runs[i].len;
	ret = read_checked(v, NTFS_FILE_MFT, rec);
	if (!ret && (last_extent_holder(v, rec, &holder, &vcn) ||
		     bitmap_sizes_holder(v, rec, &bmrec)))
		ret = -EUCLEAN;
	if (!ret && holder != NTFS_FILE_MFT) {
		ret = read_checked(v, holder, xrec);
	} else if (!ret) {
		memcpy(xrec, rec, rs);
	}
	if (ret)
		goto out;
	ret = -EUCLEAN;
	/* the run of v->mft_runs where the extent begins */
	while (k < v->nmft_runs && at < (uint64_t)vcn)
		at += v->mft_runs[k++].len;
	a = (uint8_t *)ntfs_attr_find(rec, NTFS_AT_DATA);
	x = (uint8_t *)ntfs_attr_unnamed_extent(xrec, NTFS_AT_DATA,
						   vcn);
	if (at != (uint64_t)vcn || k == v->nmft_runs || !a || !x || !a[8])
		goto out;
	{
		struct ntfs_attr_nonresident n, f;

		memcpy(&f, a, sizeof(f));
		memcpy(&n, x, sizeof(n));
		nr = ntfs_attr_runs((struct ntfs_attr_header *)x,
				    v->boot.g.nr_clusters, &runs, why);
		/* the extent ends the old allocation with the runs it had:
		 * the same runs begin the new ones, its last one as long or
		 * longer */
		if (nr <= 0 || f.h.name_length || f.lowest_vcn ||
		    (uint64_t)le64toh((uint64_t)n.highest_vcn) + 1 != old ||
		    v->nmft_runs - k < nr)
			goto out;
		for (long i = 0; i < nr; i++)
			if (runs[i].lcn != v->mft_runs[k + i].lcn ||
			    runs[i].len > v->mft_runs[k + i].len ||
			    (i < nr - 1 && runs[i].len != v->mft_runs[k + i].len))
				goto out;
		len = ntfs_mp_encode(v->mft_runs + k, (size_t)(v->nmft_runs - k),
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
			ret = ntfs_vol_write_record(v, holder, xrec, mirr);
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
		ret = ntfs_vol_write_record(v, NTFS_FILE_MFT, rec, mirr);
		if (!ret && bmrec != NTFS_FILE_MFT && bmrec != holder)
			ret = grow_bitmap_elsewhere(v, mirr, bmrec, bmbytes);
	}
out:
	free(rec);
	free(xrec);
	free(mp);
	free(runs);
	return ret;
}

int ntfs_mft_grow_size(struct ntfs_vol *v, uint64_t mirr, uint64_t bytes,
		       uint64_t mapped, uint64_t bmbytes)
{
	uint32_t rs = v->boot.g.mft_record_size;
	uint8_t *rec = malloc(rs), *a;
	uint64_t bmrec;
	int ret = -ENOMEM;

	if (!rec)
		return ret;
	ret = read_checked(v, NTFS_FILE_MFT, rec);
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
		if (bitmap_sizes_holder(v, rec, &bmrec)) {
			ret = -EUCLEAN;
			goto out;
		}
		if (bmrec == NTFS_FILE_MFT)
			set_bitmap_size(rec, bmbytes);
		ret = ntfs_vol_write_record(v, NTFS_FILE_MFT, rec, mirr);
		if (!ret && bmrec != NTFS_FILE_MFT)
			ret = grow_bitmap_elsewhere(v, mirr, bmrec, bmbytes);
	}
out:
	free(rec);
	return ret;
}

