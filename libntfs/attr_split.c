// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * An attribute split over extension records (include/ntfs/attr_split.h):
 * its extents found through the base record's $ATTRIBUTE_LIST and their
 * runs joined (ntfs_extents_join).  $MFT's own $DATA first: an MFT that
 * grew on fragmented free space has more runs than record 0 can hold, so
 * record 0 gets an $ATTRIBUTE_LIST and the later extents of its $DATA live
 * in extension records (ntfs-3g takes the reserved records 12-15 first).
 * Before any record past the first extent can be read, those extents are
 * found: in VCN order, each in a record the extents before it already
 * map.  Then any unnamed attribute of a file in several extents ($MFT's
 * $BITMAP when it grew large), read whole through its joined runs.
 * Reads only.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/attr_split.h"
#include "ntfs/attrlist.h"
#include "ntfs/file_attrs.h"
#include "ntfs/volume_io.h"

#define MASK48 0xffffffffffffULL

struct want {
	int64_t vcn;
	uint64_t recno;
};

static int cmp_want(const void *x, const void *y)
{
	const struct want *a = x, *b = y;

	return a->vcn < b->vcn ? -1 : a->vcn > b->vcn;
}

/* Records the runs RUNS (N) map, at most those of SIZE bytes. */
static uint64_t mapped(const struct ntfs_vol *v, const struct ntfs_run *runs,
		       long n, uint64_t size)
{
	uint64_t bytes = 0;

	for (long i = 0; i < n; i++)
		bytes += runs[i].len * v->boot.g.cluster_size;
	if (bytes > size)
		bytes = size;
	return bytes / v->boot.g.mft_record_size;
}

int ntfs_attr_extent_at(struct ntfs_vol *v, const uint8_t *rec, uint32_t type,
			int64_t vcn, struct ntfs_attr_extent *x, uint64_t *size,
			char *why)
{
	const struct ntfs_attr_header *a = ntfs_attr_unnamed_extent(rec, type, vcn);
	struct ntfs_attr_nonresident n;

	if (!a) {
		snprintf(why, NTFS_WHY, "has no extent at VCN %lld", (long long)vcn);
		return -1;
	}
	memcpy(&n, a, sizeof(n));
	if (size)
		*size = le64toh((uint64_t)n.data_size);
	x->lowest_vcn = vcn;
	x->highest_vcn = (int64_t)le64toh((uint64_t)n.highest_vcn);
	x->nruns = ntfs_attr_runs(a, v->boot.g.nr_clusters, &x->runs, why);
	return x->nruns < 0 ? -1 : 0;
}

static int extent_in(struct ntfs_vol *v, const uint8_t *rec, int64_t vcn,
		     struct ntfs_attr_extent *x, char *why)
{
	return ntfs_attr_extent_at(v, rec, NTFS_AT_DATA, vcn, x, NULL, why);
}

int ntfs_vol_mft_extents(struct ntfs_vol *v, const uint8_t *rec0, uint64_t size,
			 char *why)
{
	uint32_t rs = v->boot.g.mft_record_size;
	const struct ntfs_attr_header *a0 = ntfs_attr_named(rec0, NTFS_AT_DATA, "");
	struct ntfs_attr_nonresident n0;
	struct ntfs_attr_extent *x = NULL;
	struct want *w = NULL;
	struct ntfs_run *lruns = NULL, *joined;
	struct ntfs_al_entry e;
	uint8_t *list = NULL, *rec = malloc(rs);
	uint64_t len = 0;
	uint32_t off = 0;
	size_t nw = 0, nx = 0;
	long lnr, nj;
	int ret = -1;

	if (!rec || !a0 || !a0->non_resident) {
		snprintf(why, NTFS_WHY, rec ? "no $DATA in record 0" : "out of memory");
		goto out;
	}
	if (!ntfs_attr_named(rec0, NTFS_AT_ATTRIBUTE_LIST, "")) {
		ret = 0;
		goto out;
	}
	/* a list that cannot be read names no extent: the records past
	 * the first extent stay unread, as without a list (pass 1 then
	 * judges the list) */
	if (ntfs_vol_read_attr(v, rec0, NTFS_AT_ATTRIBUTE_LIST, &list, &len,
			       &lruns, &lnr) || len > UINT32_MAX) {
		ret = 0;
		goto out;
	}
	w = calloc(len / NTFS_AL_HEADER + 1, sizeof(*w));
	x = calloc(len / NTFS_AL_HEADER + 2, sizeof(*x));
	if (!w || !x) {
		snprintf(why, NTFS_WHY, "out of memory");
		goto out;
	}
	/* the entries before a malformed one still say where extents are */
	while (ntfs_al_next(list, (uint32_t)len, &off, &e, why) == 1)
		if (e.type == NTFS_AT_DATA && !e.name_len && e.lowest_vcn) {
			w[nw].vcn = e.lowest_vcn;
			w[nw++].recno = e.mref & MASK48;
		}
	if (!nw) {
		ret = 0;
		goto out;
	}
	qsort(w, nw, sizeof(*w), cmp_want);
	/* the first extent: record 0's */
	memcpy(&n0, a0, sizeof(n0));
	x[0].lowest_vcn = (int64_t)le64toh((uint64_t)n0.lowest_vcn);
	x[0].highest_vcn = (int64_t)le64toh((uint64_t)n0.highest_vcn);
	x[0].nruns = v->nmft_runs;
	x[0].runs = malloc((size_t)v->nmft_runs * sizeof(*x[0].runs));
	if (!x[0].runs) {
		snprintf(why, NTFS_WHY, "out of memory");
		goto out;
	}
	memcpy(x[0].runs, v->mft_runs, (size_t)v->nmft_runs * sizeof(*x[0].runs));
	nx = 1;
	for (size_t i = 0; i < nw; i++) {
		struct ntfs_mft_record m;
		char rwhy[NTFS_WHY];

		/* the records mapped so far can be read */
		v->mft_records = mapped(v, v->mft_runs, v->nmft_runs, size);
		ntfs_vol_cache_drop(v);
		if (w[i].recno >= v->mft_records || !w[i].recno) {
			snprintf(why, NTFS_WHY, "its extent at VCN %lld is in MFT record %llu, which the extents before it do not map",
				 (long long)w[i].vcn, (unsigned long long)w[i].recno);
			goto out;
		}
		rwhy[0] = 0;
		if (ntfs_vol_read_record(v, w[i].recno, rec)) {
			snprintf(rwhy, sizeof(rwhy), "is unreadable");
		} else if (ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, rwhy) == NTFS_REC_OK) {
			memcpy(&m, rec, sizeof(m));
			if (!(le16toh(m.flags) & NTFS_MFT_IN_USE) || !m.base_mft_record ||
			    le64toh(m.base_mft_record) & MASK48)
				snprintf(rwhy, sizeof(rwhy), "is not an extension record of $MFT");
			else if (!extent_in(v, rec, w[i].vcn, &x[nx], rwhy))
				rwhy[0] = 0;
		}
		if (rwhy[0]) {
			snprintf(why, NTFS_WHY, "MFT record %llu holding its extent at VCN %lld %.60s",
				 (unsigned long long)w[i].recno, (long long)w[i].vcn, rwhy);
			goto out;
		}
		nx++;
		nj = ntfs_extents_join(x, nx, &joined, why);
		if (nj < 0)
			goto out;
		free(v->mft_runs);
		v->mft_runs = joined;
		v->nmft_runs = nj;
	}
	ret = 0;
out:
	v->mft_records = 0;		/* the caller sets it */
	ntfs_vol_cache_drop(v);
	for (size_t i = 0; i < nx; i++)
		free(x[i].runs);
	free(x);
	free(w);
	free(list);
	free(lruns);
	free(rec);
	return ret;
}

int ntfs_vol_read_split(struct ntfs_vol *v, uint64_t base, uint32_t type,
			uint8_t **data, uint64_t *len, struct ntfs_run **runs,
			long *nruns)
{
	uint32_t rs = v->boot.g.mft_record_size;
	uint8_t *rec = malloc(rs), *list = NULL;
	struct ntfs_attr_extent *x = NULL;
	struct ntfs_run *lruns = NULL;
	struct ntfs_al_entry e;
	uint64_t llen = 0, clusters = 0;
	uint32_t off = 0;
	size_t nx = 0;
	long lnr = 0, n = -1;
	char why[NTFS_WHY];
	int ret = -ENOMEM;

	*data = NULL;
	*runs = NULL;
	*nruns = 0;
	*len = 0;
	if (!rec)
		goto out;
	ret = -EUCLEAN;
	if (ntfs_vol_read_record(v, base, rec) ||
	    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK ||
	    ntfs_vol_read_attr(v, rec, NTFS_AT_ATTRIBUTE_LIST, &list, &llen,
			       &lruns, &lnr) || llen > UINT32_MAX)
		goto out;
	x = calloc(llen / NTFS_AL_HEADER + 1, sizeof(*x));
	if (!x) {
		ret = -ENOMEM;
		goto out;
	}
	/* each extent the list names, in a record of this file */
	while (ntfs_al_next(list, (uint32_t)llen, &off, &e, why) == 1) {
		uint64_t r = e.mref & MASK48;
		struct ntfs_mft_record m;

		if (e.type != type || e.name_len)
			continue;
		if (r >= v->mft_records || ntfs_vol_read_record(v, r, rec) ||
		    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
			goto out;
		memcpy(&m, rec, sizeof(m));
		if (r != base && (le64toh(m.base_mft_record) & MASK48) != base)
			goto out;
		if (ntfs_attr_extent_at(v, rec, type, e.lowest_vcn, &x[nx],
			      e.lowest_vcn ? NULL : len, why))
			goto out;
		nx++;
	}
	n = nx ? ntfs_extents_join(x, nx, runs, why) : -1;
	if (n <= 0)
		goto out;
	for (long i = 0; i < n; i++)
		clusters += (*runs)[i].len;
	if (*len > clusters * v->boot.g.cluster_size)
		goto out;
	*data = malloc(*len ? *len : 1);
	if (!*data) {
		ret = -ENOMEM;
		goto out;
	}
	if (!ntfs_vol_runs_pread(v, *runs, n, 0, *len, *data)) {
		*nruns = n;
		ret = 0;
	}
out:
	if (ret) {
		free(*data);
		free(*runs);
		*data = NULL;
		*runs = NULL;
	}
	for (size_t i = 0; i < nx; i++)
		free(x[i].runs);
	free(x);
	free(list);
	free(lruns);
	free(rec);
	return ret;
}
