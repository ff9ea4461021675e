// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libntfs: an index of a record (a directory's $I30 or a view index such
 * as $Secure's $SII) as the libntfs B+tree walker needs it: its three
 * attributes found by name in the base record or, through the record's
 * $ATTRIBUTE_LIST, in an extension record; the $BITMAP read whole whether
 * resident or not (in several extents: their runs joined); index blocks
 * read through the runs of the allocation (all its extents).
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/index_read.h"
#include "ntfs/volume_io.h"

/* The attribute TYPE NAME of record D: in REC, or through its attribute
 * list in an extension record read into EXT.  *SPLIT when it has extents
 * in several records. */
static const struct ntfs_attr_header *find(struct ntfs_vol *v, uint64_t d,
					   const uint8_t *rec, uint8_t *ext,
					   uint32_t type, const char *name,
					   bool *split)
{
	const struct ntfs_attr_header *a = ntfs_attr_named(rec, type, name);
	size_t nlen = strlen(name);
	struct ntfs_run *runs = NULL;
	uint8_t *list = NULL;
	char why[NTFS_WHY];
	uint64_t len = 0, off = 0, where = UINT64_MAX;
	long nruns;

	if (a)
		return a;
	if (ntfs_vol_read_attr(v, rec, NTFS_AT_ATTRIBUTE_LIST, &list, &len,
			       &runs, &nruns)) {
		free(list);
		free(runs);
		return NULL;
	}
	free(runs);
	/* entries: type, length, name length/offset, lowest VCN, record */
	while (off + 26 <= len) {
		uint32_t t;
		uint16_t elen;
		uint8_t nl = list[off + 6], no = list[off + 7];
		uint64_t lvcn, mref;
		bool same = nl == nlen;

		memcpy(&t, list + off, 4);
		memcpy(&elen, list + off + 4, 2);
		memcpy(&lvcn, list + off + 8, 8);
		memcpy(&mref, list + off + 16, 8);
		elen = le16toh(elen);
		if (elen < 26 || off + elen > len || no + 2u * nl > elen)
			break;
		for (size_t i = 0; same && i < nlen; i++)
			same = list[off + no + 2 * i] == (uint8_t)name[i] &&
			       !list[off + no + 2 * i + 1];
		if (le32toh(t) == type && same) {
			if (le64toh(lvcn))
				*split = true;
			else
				where = le64toh(mref) & 0xffffffffffffULL;
		}
		off += elen;
	}
	free(list);
	if (where == UINT64_MAX || where == d || ntfs_vol_read_record(v, where, ext) ||
	    ntfs_record_check(ext, v->boot.g.mft_record_size, NTFS_MAGIC_FILE,
			      why) != NTFS_REC_OK)
		return NULL;
	return ntfs_attr_named(ext, type, name);
}

int ntfs_vol_index_open(struct ntfs_vol *v, ntfs_rec_in_use in_use,
			const void *in_use_arg, uint64_t d, const uint8_t *rec,
			const char *name, struct ntfs_index *ix)
{
	uint32_t rs = v->boot.g.mft_record_size;
	const struct ntfs_attr_header *ra, *ia, *ba;
	struct ntfs_attr_nonresident n;
	char why[NTFS_WHY];
	bool more = false, bsplit = false;

	memset(ix, 0, sizeof(*ix));
	ix->vol = v;
	ix->ext[0] = malloc(rs);
	ix->ext[1] = malloc(rs);
	ix->ext[2] = malloc(rs);
	if (!ix->ext[0] || !ix->ext[1] || !ix->ext[2])
		return -ENOMEM;
	ra = find(v, d, rec, ix->ext[0], NTFS_AT_INDEX_ROOT, name, &ix->split);
	/* the allocation's later extents are joined below */
	ia = find(v, d, rec, ix->ext[1], NTFS_AT_INDEX_ALLOCATION, name, &more);
	ba = find(v, d, rec, ix->ext[2], NTFS_AT_BITMAP, name, &bsplit);
	if (ix->split)
		return 1;
	if (!ra || ra->non_resident) {
		snprintf(ix->why, sizeof(ix->why), "no %s index root", name);
		return -1;
	}
	ix->root = ntfs_attr_value(ra, &ix->root_len);
	if (ia) {
		if (!ia->non_resident) {
			snprintf(ix->why, sizeof(ix->why), "resident index allocation");
			return -1;
		}
		memcpy(&n, ia, sizeof(n));
		ix->nruns = ntfs_attr_runs(ia, v->boot.g.nr_clusters, &ix->runs, why);
		if (ix->nruns < 0) {
			ix->runs = NULL;
			memcpy(ix->why, why, sizeof(ix->why));
			return -1;
		}
		ix->has_alloc = true;
		ix->alloc_size = le64toh((uint64_t)n.data_size);
		ix->alloc_extents = 1;
		if (ntfs_attr_named(rec, NTFS_AT_ATTRIBUTE_LIST, "")) {
			struct ntfs_run *all;
			uint64_t size;
			size_t nx;
			long nr = ntfs_vol_extents_runs(v, in_use, in_use_arg, d,
							NTFS_AT_INDEX_ALLOCATION,
							name, &all, &size, &nx, why);

			if (nr == -ENOMEM)
				return -ENOMEM;
			if (nr < 0) {
				memcpy(ix->why, why, sizeof(ix->why));
				return -1;
			}
			if (nx > 1) {
				free(ix->runs);
				ix->runs = all;
				ix->nruns = nr;
				ix->alloc_extents = nx;
			} else {
				free(all);
			}
		}
	}
	if (!ba)
		return 0;
	ix->has_bitmap = true;
	if (!ba->non_resident) {
		uint32_t len;
		const void *val = ntfs_attr_value(ba, &len);

		ix->bitmap = malloc(len ? len : 1);
		if (!ix->bitmap)
			return -ENOMEM;
		memcpy(ix->bitmap, val, len);
		ix->bitmap_len = len;
	} else {
		struct ntfs_run *runs = NULL;
		long nr;

		memcpy(&n, ba, sizeof(n));
		ix->bitmap_len = le64toh((uint64_t)n.data_size);
		if (bsplit) {
			/* in several extents: their runs joined */
			size_t nx;

			nr = ntfs_vol_extents_runs(v, in_use, in_use_arg, d,
						   NTFS_AT_BITMAP, name, &runs,
						   &ix->bitmap_len, &nx, why);
			if (nr == -ENOMEM)
				return -ENOMEM;
		} else {
			nr = ntfs_attr_runs(ba, v->boot.g.nr_clusters, &runs, why);
		}
		if (nr < 0 || ix->bitmap_len > (1u << 24) ||
		    !(ix->bitmap = calloc(1, ix->bitmap_len + 1)) ||
		    ntfs_vol_runs_pread(v, runs, nr, 0, ix->bitmap_len, ix->bitmap)) {
			free(runs);
			snprintf(ix->why, sizeof(ix->why), "index bitmap unreadable");
			return -1;
		}
		free(runs);
	}
	return 0;
}

void ntfs_index_close(struct ntfs_index *ix)
{
	for (int i = 0; i < 3; i++)
		free(ix->ext[i]);
	free(ix->runs);
	free(ix->bitmap);
	memset(ix, 0, sizeof(*ix));
}

static int read_block(void *arg, uint64_t byte, uint32_t len, void *buf)
{
	struct ntfs_index *ix = arg;

	return ntfs_vol_runs_pread(ix->vol, ix->runs, ix->nruns, byte, len, buf);
}

void ntfs_index_bt(struct ntfs_index *ix, struct ntfs_bt *t,
		   struct ntfs_bt_ops *ops)
{
	t->root = ix->root;
	t->root_len = ix->root_len;
	t->has_alloc = ix->has_alloc;
	t->alloc_size = ix->alloc_size;
	t->alloc_mapped = 0;
	for (long i = 0; i < ix->nruns; i++)
		t->alloc_mapped += ix->runs[i].len * ix->vol->boot.g.cluster_size;
	t->cluster_size = ix->vol->boot.g.cluster_size;
	t->bitmap = ix->bitmap;
	t->bitmap_len = ix->bitmap_len;
	ops->read = read_block;
	t->ops = ops;
	t->read_arg = ix;
}
