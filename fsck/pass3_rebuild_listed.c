// SPDX-License-Identifier: GPL-2.0-or-later
/* Pass 3 repair: rebuild the $I30 index of a directory whose attributes
 * continue in extension records ($ATTRIBUTE_LIST): each index attribute
 * is replaced in the record that holds it; an allocation in several
 * extents keeps its extents and clusters and takes the new blocks. */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs_index_write.h"

/*
 * A directory whose attributes continue in extension records: each $I30
 * attribute is replaced in the record that holds it, keeping its instance
 * number, so that the $ATTRIBUTE_LIST stays true as it is.  The index
 * keeps its shape (a large index stays large, a small one small).  An
 * $INDEX_ALLOCATION in several extents stays as it is, every extent byte
 * for byte (and so the list): the new blocks are written into its
 * clusters from VCN 0, the $BITMAP marks them, the blocks past them are
 * free blocks of the index, as a directory that shrank leaves them.
 * Root and bitmap in several extents are not handled.
 */
enum { I_ROOT, I_ALLOC, I_BITMAP, I_TYPES };
static const uint32_t index_types[I_TYPES] = {
	NTFS_AT_INDEX_ROOT, NTFS_AT_INDEX_ALLOCATION, NTFS_AT_BITMAP
};
static const uint8_t I30[8] = { '$', 0, 'I', 0, '3', 0, '0', 0 };

static int type_slot(uint32_t t)
{
	for (int i = 0; i < I_TYPES; i++)
		if (index_types[i] == t)
			return i;
	return -1;
}

static bool named_i30(const struct ntfs_attr_header *a)
{
	return a->name_length == 4 &&
	       !memcmp((const uint8_t *)a + le16toh(a->name_offset), I30, 8);
}

/* Which record holds each $I30 attribute (UINT64_MAX: none; for the
 * allocation, its extent at VCN 0); *MORE: its later extents. */
static int find_holders(struct ntfs_check *c, const uint8_t *rec,
			uint64_t at[I_TYPES], size_t *more, char *why)
{
	struct ntfs_run *runs = NULL;
	uint8_t *list = NULL;
	uint64_t len = 0, off = 0;
	long nruns;
	int ret = 0;

	for (int i = 0; i < I_TYPES; i++)
		at[i] = UINT64_MAX;
	*more = 0;
	if (ntfs_vol_read_attr(&c->vol, rec, NTFS_AT_ATTRIBUTE_LIST, &list, &len,
			       &runs, &nruns)) {
		snprintf(why, NTFS_WHY, "its attribute list is unreadable");
		ret = -1;
		goto out;
	}
	/* entries: type, length, name length/offset, lowest VCN, record */
	while (off + 26 <= len) {
		uint32_t t;
		uint16_t elen;
		uint8_t nlen = list[off + 6], noff = list[off + 7];
		uint64_t lvcn, mref;
		int k;

		memcpy(&t, list + off, 4);
		memcpy(&elen, list + off + 4, 2);
		memcpy(&lvcn, list + off + 8, 8);
		memcpy(&mref, list + off + 16, 8);
		elen = le16toh(elen);
		if (elen < 26 || off + elen > len || noff + 2u * nlen > elen)
			break;
		k = type_slot(le32toh(t));
		if (k == I_ALLOC && le64toh(lvcn) && nlen == 4 &&
		    !memcmp(list + off + noff, I30, 8)) {
			++*more;
		} else if (k >= 0 && nlen == 4 && !memcmp(list + off + noff, I30, 8)) {
			if (le64toh(lvcn) || at[k] != UINT64_MAX) {
				snprintf(why, NTFS_WHY, "its index attributes are in several extents");
				ret = -1;
				goto out;
			}
			at[k] = le64toh(mref) & 0xffffffffffffULL;
		}
		off += elen;
	}
	if (at[I_ROOT] == UINT64_MAX || (at[I_ALLOC] == UINT64_MAX) !=
	    (at[I_BITMAP] == UINT64_MAX)) {
		snprintf(why, NTFS_WHY, "its attribute list lacks index attributes");
		ret = -1;
	}
out:
	free(list);
	free(runs);
	return ret;
}

/* The $I30 attribute of TYPE in checked record REC, or NULL. */
static const struct ntfs_attr_header *i30_in(const uint8_t *rec, uint32_t type)
{
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];

	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1)
		if (le32toh(a->type) == type && named_i30(a))
			return a;
	return NULL;
}

/* Add P's attribute of slot K to R, numbered INSTANCE; false if full. */
static bool add_index_attr(struct ntfs_check *c, struct ntfs_rec *r, int k,
			   const struct index_plan *p, uint16_t instance)
{
	uint32_t at = r->end;
	uint64_t data = (uint64_t)p->res.nblocks * c->vol.boot.g.index_block_size;
	bool ok;

	if (k == I_ROOT)
		ok = ntfs_rec_add_resident(r, NTFS_AT_INDEX_ROOT, "$I30", p->res.root,
					   p->res.root_len, 0) != NULL;
	else if (k == I_ALLOC)
		ok = !ntfs_rec_add_nonresident(r, NTFS_AT_INDEX_ALLOCATION, "$I30",
					       p->runs, (size_t)p->nruns,
					       p->clusters * c->vol.boot.g.cluster_size,
					       data, data);
	else
		ok = ntfs_rec_add_resident(r, NTFS_AT_BITMAP, "$I30", p->bitmap,
					   p->bitmap_len, 0) != NULL;
	if (ok)
		memcpy(r->buf + at + offsetof(struct ntfs_attr_header, instance),
		       &instance, 2);
	return ok;
}

/* REC (record RECNO) with its $I30 attributes replaced by P's (but for
 * the allocation when KEEP_ALLOC). */
static int rewrite_holder(struct ntfs_check *c, const uint8_t *rec,
			  uint8_t *out, const struct index_plan *p, bool keep_alloc,
			  char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	struct ntfs_rec r;
	int more;

	memcpy(out, rec, rs);
	ntfs_rec_reopen(&r, out, rs);
	ntfs_attr_cursor_init(&cur, rec);
	while ((more = ntfs_attr_next(&cur, &a, why)) == 1) {
		int k = named_i30(a) ? type_slot(le32toh(a->type)) : -1;
		bool ok;

		if (k == I_ALLOC && keep_alloc)
			k = -1;
		ok = k >= 0 ? add_index_attr(c, &r, k, p, a->instance) :
			  ntfs_rec_add_raw(&r, a, le32toh(a->length)) != NULL;
		if (!ok) {
			snprintf(why, NTFS_WHY, "the index does not fit MFT record %llu",
				 (unsigned long long)le32toh(((const struct ntfs_mft_record *)rec)->mft_record_number));
			return -1;
		}
	}
	return more < 0 ? -1 : 0;
}

/* The index of E (N entries) for an allocation in several extents, whose
 * runs (all extents, NOLD of them) are OLD and data size OLD_SIZE: the
 * root as big as the ROOM left in its record, the blocks in the old
 * clusters (there must be enough of them), a bitmap of BITMAP_LEN bytes. */
static int build_in_extents(struct ntfs_check *c, struct index_plan *p,
			    const struct ntfs_ib_entry *e, long n, uint32_t room,
			    const struct ntfs_run *old, long nold,
			    uint64_t old_size, uint32_t bitmap_len, char *why)
{
	uint32_t bs = c->vol.boot.g.index_block_size, cs = c->vol.boot.g.cluster_size;
	struct ntfs_ib_spec spec = { .type = NTFS_AT_FILE_NAME,
				     .collation = NTFS_COLLATION_FILE_NAME,
				     .block_size = bs, .cluster_size = cs,
				     .root_room = room, .large = true };
	uint64_t blocks = old_size / bs;

	if (ntfs_index_build_spec(&spec, e, (size_t)n, &p->res)) {
		snprintf(why, NTFS_WHY, "%u-byte index blocks cannot hold the entries", bs);
		return -1;
	}
	if (p->res.nblocks > blocks || bitmap_len > sizeof(p->bitmap) ||
	    (uint64_t)bitmap_len * 8 < blocks) {
		snprintf(why, NTFS_WHY, "the index needs %u blocks, its allocation in several extents holds %llu",
			 p->res.nblocks, (unsigned long long)blocks);
		return -1;
	}
	p->runs = malloc((size_t)nold * sizeof(*old));
	if (!p->runs) {
		snprintf(why, NTFS_WHY, "out of memory");
		return -1;
	}
	memcpy(p->runs, old, (size_t)nold * sizeof(*old));
	p->nruns = nold;
	p->reuse = true;
	p->clusters = 0;
	for (long i = 0; i < nold; i++)
		p->clusters += old[i].len;
	p->bitmap_len = bitmap_len;
	memset(p->bitmap, 0, bitmap_len);
	for (uint32_t b = 0; b < p->res.nblocks; b++)
		p->bitmap[b >> 3] |= (uint8_t)(1u << (b & 7));
	return 0;
}

int ntfs_rebuild_listed(struct ntfs_check *c, uint64_t d, const uint8_t *base,
			const uint16_t *upcase, char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint64_t at[I_TYPES], rec_of[I_TYPES];
	uint8_t *bufs[I_TYPES] = { 0 }, *outs[I_TYPES] = { 0 };
	const struct ntfs_attr_header *attr[I_TYPES] = { 0 };
	struct ntfs_run *old = NULL, *gone = NULL;
	long nold = 0, ngone = 0, n;
	struct ntfs_fn_ref **v = NULL;
	struct ntfs_ib_entry *e = NULL;
	struct ntfs_mft_record m;
	struct index_shape sh;
	struct index_plan p;
	int nrec = 0, ret = -1;
	uint32_t other = 0, bitmap_len = 0;
	uint64_t old_size = 0;
	size_t more;

	memset(&p, 0, sizeof(p));
	if (find_holders(c, base, at, &more, why))
		return -1;
	/* the distinct records holding them, read and checked */
	for (int k = 0; k < I_TYPES; k++) {
		int j;

		if (at[k] == UINT64_MAX)
			continue;
		for (j = 0; j < nrec && rec_of[j] != at[k]; j++)
			;
		if (j == nrec) {
			rec_of[nrec] = at[k];
			bufs[nrec] = malloc(rs);
			outs[nrec] = malloc(rs);
			if (!bufs[nrec] || !outs[nrec]) {
				nrec++;
				snprintf(why, NTFS_WHY, "out of memory");
				goto out;
			}
			if (at[k] == d) {
				memcpy(bufs[nrec], base, rs);
			} else if (at[k] >= c->vol.mft_records ||
				   !cset_get(&c->record_used, at[k]) ||
				   ntfs_vol_read_record(&c->vol, at[k], bufs[nrec]) ||
				   ntfs_record_check(bufs[nrec], rs, NTFS_MAGIC_FILE,
						     why) != NTFS_REC_OK ||
				   (memcpy(&m, bufs[nrec], sizeof(m)),
				    (le64toh(m.base_mft_record) & 0xffffffffffffULL) != d)) {
				nrec++;
				snprintf(why, NTFS_WHY, "MFT record %llu holding its index is unusable",
					 (unsigned long long)at[k]);
				goto out;
			}
			nrec++;
		}
		attr[k] = i30_in(bufs[j], index_types[k]);
		if (!attr[k] || (k == I_ROOT && attr[k]->non_resident) ||
		    (k == I_ALLOC && !attr[k]->non_resident)) {
			snprintf(why, NTFS_WHY, "its index attributes are not where its list says");
			goto out;
		}
	}
	if (attr[I_ALLOC]) {
		nold = ntfs_attr_runs(attr[I_ALLOC], c->vol.boot.g.nr_clusters, &old, why);
		if (nold < 0) {
			old = NULL;
			nold = 0;
		}
	}
	if (attr[I_BITMAP] && attr[I_BITMAP]->non_resident) {
		ngone = ntfs_attr_runs(attr[I_BITMAP], c->vol.boot.g.nr_clusters, &gone, why);
		if (ngone < 0) {
			gone = NULL;
			ngone = 0;
		}
	}
	if (more) {
		/* every extent of the allocation: they stay, and hold the
		 * new blocks */
		size_t nx;

		free(old);
		nold = ntfs_attr_extents_runs(c, d, NTFS_AT_INDEX_ALLOCATION, "$I30",
					      &old, &old_size, &nx, why);
		if (nold < 0) {
			if (nold == -ENOMEM)
				snprintf(why, NTFS_WHY, "out of memory");
			old = NULL;
			nold = 0;
			goto out;
		}
		for (long i = 0; i < nold; i++)
			if (old[i].lcn < 0 ||
			    (uint64_t)old[i].lcn + old[i].len > c->geo.dev_clusters) {
				snprintf(why, NTFS_WHY, "its index allocation in %zu extents has holes or clusters past the device",
					 nx);
				goto out;
			}
		bitmap_len = (uint32_t)ntfs_align((old_size / c->vol.boot.g.index_block_size + 7) / 8, 8);
		if (attr[I_BITMAP] && !attr[I_BITMAP]->non_resident) {
			uint32_t blen;

			ntfs_attr_value(attr[I_BITMAP], &blen);
			if (blen > bitmap_len)
				bitmap_len = blen;
		}
	}
	/* the root's record: what is not index stays */
	for (int j = 0; j < nrec; j++)
		if (rec_of[j] == at[I_ROOT]) {
			memcpy(&m, bufs[j], sizeof(m));
			other = le32toh(m.bytes_in_use);
		}
	for (int k = 0; k < I_TYPES; k++)
		if (attr[k] && at[k] == at[I_ROOT] && !(more && k == I_ALLOC))
			other -= le32toh(attr[k]->length);
	if (more && at[I_BITMAP] == at[I_ROOT])
		other += (uint32_t)ntfs_align(RESIDENT_HDR + bitmap_len, 8);
	sh.large = attr[I_ALLOC] != NULL;
	sh.small = !sh.large;
	sh.alone = at[I_ALLOC] != at[I_ROOT] && at[I_BITMAP] != at[I_ROOT];
	n = ntfs_dir_names(c, d, upcase, &v);
	if (n < 0) {
		snprintf(why, NTFS_WHY, "out of memory");
		goto out;
	}
	e = ntfs_dir_entries(c, v, n);
	if (!e) {
		snprintf(why, NTFS_WHY, "out of memory");
		goto out;
	}
	if (more ? build_in_extents(c, &p, e, n,
				    rs > other + RESIDENT_HDR ? rs - other - RESIDENT_HDR : 0,
				    old, nold, old_size, bitmap_len, why) :
	    ntfs_index_plan(c, &p, NTFS_AT_FILE_NAME, NTFS_COLLATION_FILE_NAME, e, n,
			    other, old, nold, &sh, why))
		goto out;
	for (int j = 0; j < nrec; j++)
		if (rewrite_holder(c, bufs[j], outs[j], &p, more > 0, why))
			goto out;
	if (ntfs_index_plan_commit(c, &p, old, nold, gone, ngone, why))
		goto out;
	for (int j = 0; j < nrec; j++)
		if (memcmp(bufs[j], outs[j], rs) &&
		    ntfs_check_write_record(c, rec_of[j], outs[j])) {
			snprintf(why, NTFS_WHY, "writing MFT record %llu failed",
				 (unsigned long long)rec_of[j]);
			goto out;
		}
	ret = 0;
out:
	for (int j = 0; j < nrec; j++) {
		free(bufs[j]);
		free(outs[j]);
	}
	ntfs_index_build_free(&p.res);
	free(p.runs);
	free(old);
	free(gone);
	free(e);
	free(v);
	return ret;
}

