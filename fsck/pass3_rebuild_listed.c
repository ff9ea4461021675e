// SPDX-License-Identifier: GPL-2.0-or-later
/* Pass 3 repair: rebuild an index (a directory's $I30 or a view index)
 * of a file whose attributes continue in extension records
 * ($ATTRIBUTE_LIST): each index attribute is replaced in the record that
 * holds it; an allocation or bitmap in several extents keeps its extents
 * and clusters and takes the new blocks and bits. */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/attrlist.h"
#include "ntfs_index_write.h"

/* The runs of every later extent (VCN above 0) of D's allocation and
 * bitmap NAME that a record in use still holds (VCN order or not),
 * appended to *RUNS (*N of them). */
struct later_runs {
	const char *name;
	uint64_t nr_clusters;
	int64_t first_vcn, first_bvcn;	/* the extents that become the first
					 * (0: none) */
	struct ntfs_run *runs;
	long n;
	bool nomem;
};

static int add_runs(const struct ntfs_attr_header *a, void *arg)
{
	struct later_runs *l = arg;
	struct ntfs_attr_nonresident n;
	struct ntfs_run *r = NULL, *g;
	char why[NTFS_WHY];
	long k;

	int64_t first = le32toh(a->type) == NTFS_AT_BITMAP ? l->first_bvcn : l->first_vcn;

	if ((le32toh(a->type) != NTFS_AT_INDEX_ALLOCATION &&
	     le32toh(a->type) != NTFS_AT_BITMAP) || !a->non_resident ||
	    !ntfs_attr_has_name(a, l->name))
		return 0;
	memcpy(&n, a, sizeof(n));
	if (!n.lowest_vcn || (first && (int64_t)le64toh((uint64_t)n.lowest_vcn) == first) ||
	    (k = ntfs_attr_runs(a, l->nr_clusters, &r, why)) <= 0)
		return 0;	/* the first extent: the caller has it */
	g = realloc(l->runs, (size_t)(l->n + k) * sizeof(*g));
	if (!g) {
		free(r);
		l->nomem = true;
		return 1;
	}
	memcpy(g + l->n, r, (size_t)k * sizeof(*r));
	l->runs = g;
	l->n += k;
	free(r);
	return 0;
}

/* List V (LEN bytes): the entry of TYPE and NAME at VCN is put at VCN 0
 * (it becomes the first extent). */
static void al_make_first(uint8_t *v, uint32_t len, uint32_t type, const char *name,
			  int64_t vcn)
{
	struct ntfs_al_entry e;
	uint32_t off = 0, at = 0;
	char why[NTFS_WHY];

	while (ntfs_al_next(v, len, &off, &e, why) == 1) {
		if (e.type == type && e.lowest_vcn == vcn && ntfs_al_entry_named(&e, name)) {
			memset(v + at + 8, 0, 8);
			return;
		}
		at = off;
	}
}

/* The later extent of TYPE and NAME with the lowest VCN in D's list
 * (base record BASE): its record's reference (with its sequence number)
 * and VCN, or -1. */
static int lowest_later(struct ntfs_check *c, const uint8_t *base, uint32_t type,
			const char *name, uint64_t *rec, int64_t *vcn)
{
	struct ntfs_run *runs = NULL;
	struct ntfs_al_entry e;
	uint8_t *list = NULL;
	uint64_t len = 0;
	uint32_t off = 0;
	long nruns;
	char why[NTFS_WHY];

	*vcn = 0;
	if (ntfs_vol_read_attr(&c->vol, base, NTFS_AT_ATTRIBUTE_LIST, &list, &len,
			       &runs, &nruns) || len > UINT32_MAX) {
		free(list);
		free(runs);
		return -1;
	}
	while (ntfs_al_next(list, (uint32_t)len, &off, &e, why) == 1)
		if (e.type == type && e.lowest_vcn > 0 && ntfs_al_entry_named(&e, name) &&
		    (!*vcn || e.lowest_vcn < *vcn)) {
			*vcn = e.lowest_vcn;
			*rec = e.mref;
		}
	free(list);
	free(runs);
	return *vcn ? 0 : -1;
}

/* The first extent of index NAME's allocation (and of its bitmap, when
 * that too) lost with its record: the later extent with the lowest VCN
 * takes its place in AT (its record then holds the new allocation at VCN
 * 0, *AVCN and *BVCN saying which extents those were).  The bitmap's
 * other extents, however many, are dropped with the allocation's later
 * ones: the new bitmap marks the new allocation's blocks alone.  0, or -1
 * (not that case). */
static int promote_later(struct ntfs_check *c, const uint8_t *base, const char *name,
			 uint64_t at[NTFS_IX_SLOTS], size_t more[NTFS_IX_SLOTS],
			 int64_t *avcn, int64_t *bvcn)
{
	*avcn = *bvcn = 0;
	if (at[NTFS_IX_ROOT] == UINT64_MAX || at[NTFS_IX_ALLOC] != UINT64_MAX ||
	    !more[NTFS_IX_ALLOC] ||
	    lowest_later(c, base, NTFS_AT_INDEX_ALLOCATION, name, &at[NTFS_IX_ALLOC], avcn))
		return -1;
	more[NTFS_IX_ALLOC]--;
	if (at[NTFS_IX_BITMAP] == UINT64_MAX) {
		if (!more[NTFS_IX_BITMAP] ||
		    lowest_later(c, base, NTFS_AT_BITMAP, name, &at[NTFS_IX_BITMAP], bvcn))
			return -1;
		more[NTFS_IX_BITMAP]--;
	}
	return 0;
}

/* The list names no root of index NAME, or no bitmap for its allocation
 * (their records lost): new ones go to the record with the most room of
 * the base (its list then grows by an entry each) and the holders of the
 * index attributes left, as AT[k] for each slot k in *MISSING.  0, or -1
 * (not that case). */
static int new_home(struct ntfs_check *c, uint64_t d, const uint8_t *base,
		    const char *name, uint64_t at[NTFS_IX_SLOTS],
		    const size_t more[NTFS_IX_SLOTS], unsigned int *missing)
{
	uint32_t rs = c->vol.boot.g.mft_record_size, best = 0, grow;
	const struct ntfs_mft_record *m = (const void *)base;
	uint64_t home = d | (uint64_t)le16toh(m->sequence_number) << 48;
	uint8_t *buf;
	char why[NTFS_WHY];
	int nmissing = 0;

	*missing = 0;
	if (at[NTFS_IX_ALLOC] == UINT64_MAX &&
	    (at[NTFS_IX_BITMAP] != UINT64_MAX || more[NTFS_IX_ALLOC] || more[NTFS_IX_BITMAP]))
		return -1;	/* an allocation's first extent lost: not here */
	for (int k = 0; k < NTFS_IX_SLOTS; k++)
		if (k != NTFS_IX_ALLOC && at[k] == UINT64_MAX &&
		    (k == NTFS_IX_ROOT || at[NTFS_IX_ALLOC] != UINT64_MAX)) {
			*missing |= 1u << k;
			nmissing++;
		}
	if (!*missing)
		return -1;
	grow = (uint32_t)nmissing * ntfs_al_entry_size(name);
	if (le32toh(m->bytes_in_use) + grow < rs)
		best = rs - le32toh(m->bytes_in_use) - grow;
	if (!(buf = malloc(rs)))
		return -1;
	for (int k = 0; k < NTFS_IX_SLOTS; k++) {
		const struct ntfs_mft_record *x = (const void *)buf;

		if (at[k] == UINT64_MAX || (at[k] & 0xffffffffffffULL) == d ||
		    ntfs_read_listed(c, d, at[k], buf, why))
			continue;
		if (le32toh(x->bytes_in_use) < rs && rs - le32toh(x->bytes_in_use) > best) {
			best = rs - le32toh(x->bytes_in_use);
			home = at[k];
		}
	}
	free(buf);
	for (int k = 0; k < NTFS_IX_SLOTS; k++)
		if (*missing & (1u << k))
			at[k] = home;
	return 0;
}

/* The new attribute of slot K of index NAME added to its record (OUT, D's
 * base record or one of its extension records, REF), and the entry for it
 * to D's list
 * (BASE_OUT: the base record as it will be written; a list in clusters
 * is written there, in the room its allocated size leaves).  0, or -1
 * with WHY. */
static int add_new_attr(struct ntfs_check *c, uint8_t *out, uint64_t ref, uint8_t *base_out,
			const struct index_plan *p, const char *name, int k, char *why)
{
	const struct ntfs_geometry *g = &c->vol.boot.g;
	uint32_t rs = g->mft_record_size, len, grow = ntfs_al_entry_size(name);
	const struct ntfs_attr_header *la;
	uint8_t *tmp = malloc(rs), *list = NULL;
	struct ntfs_run *lruns = NULL;
	long nlruns = 0;
	uint16_t instance;
	int ret = -1;

	if (!tmp) {
		snprintf(why, NTFS_WHY, "out of memory");
		return -1;
	}
	if (ntfs_index_add_attr(g, out, tmp, p, name, k, &instance, why))
		goto out;
	memcpy(out, tmp, rs);	/* first: OUT may be BASE_OUT */
	la = ntfs_attr_named(base_out, NTFS_AT_ATTRIBUTE_LIST, "");
	if (!la) {
		snprintf(why, NTFS_WHY, "it has no attribute list");
		goto out;
	}
	if (la->non_resident) {
		struct ntfs_attr_nonresident n;
		uint64_t len64 = 0;
		size_t at = (size_t)((const uint8_t *)la - base_out);

		memcpy(&n, la, sizeof(n));
		if (ntfs_vol_read_attr(&c->vol, base_out, NTFS_AT_ATTRIBUTE_LIST,
				       &list, &len64, &lruns, &nlruns) ||
		    len64 + grow > (uint64_t)le64toh((uint64_t)n.allocated_size)) {
			snprintf(why, NTFS_WHY, "its attribute list is unreadable or has no room for the root's entry");
			goto out;
		}
		len = (uint32_t)len64;
		uint8_t *l2 = realloc(list, len + grow);

		if (!l2) {
			snprintf(why, NTFS_WHY, "out of memory");
			goto out;
		}
		list = l2;
		len = ntfs_al_insert_first(list, len, ntfs_ix_slot_types[k], name, ref,
					   instance);
		if (ntfs_vol_runs_pwrite(&c->vol, lruns, nlruns, 0, len, list)) {
			snprintf(why, NTFS_WHY, "writing its attribute list failed");
			goto out;
		}
		n.data_size = (int64_t)htole64(len);
		n.initialized_size = (int64_t)htole64(len);
		memcpy(base_out + at, &n, sizeof(n));
	} else {
		const uint8_t *val = ntfs_attr_value(la, &len);

		if (!(list = malloc(len + grow))) {
			snprintf(why, NTFS_WHY, "out of memory");
			goto out;
		}
		memcpy(list, val, len);
		len = ntfs_al_insert_first(list, len, ntfs_ix_slot_types[k], name, ref,
					   instance);
		if (ntfs_rec_set_value(base_out, rs, (uint32_t)((const uint8_t *)la - base_out),
				       list, len)) {
			snprintf(why, NTFS_WHY, "its attribute list does not fit");
			goto out;
		}
	}
	ret = 0;
out:
	free(tmp);
	free(list);
	free(lruns);
	return ret;
}

/* The allocation NAME of D lost an extent (its record gone): its later
 * extents, and its bitmap's, are dropped from the records that hold them
 * but no index attribute (a record left with no attribute is freed; the
 * holders, REC_OF, are rewritten without them) and from the attribute
 * list in BASE_OUT (D's base record as it will be written).  0, or -1
 * with WHY. */
static int drop_later_extents(struct ntfs_check *c, uint64_t d, const char *name,
			      uint8_t *base_out, const uint64_t *rec_of, int nrec,
			      int64_t avcn, int64_t bvcn, char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size, len, off = 0;
	const struct ntfs_attr_header *la = ntfs_attr_named(base_out, NTFS_AT_ATTRIBUTE_LIST, "");
	uint8_t *list = NULL, *buf = malloc(rs), *out = malloc(rs);
	struct ntfs_al_entry e;
	struct ntfs_mft_record m;
	const uint8_t *val;
	struct ntfs_run *lruns = NULL;
	long nlruns = 0;
	uint32_t old_len;
	int ret = -1, left;

	if (!buf || !out) {
		snprintf(why, NTFS_WHY, "out of memory");
		goto out;
	}
	if (!la) {
		snprintf(why, NTFS_WHY, "it has no attribute list");
		goto out;
	}
	if (la->non_resident) {
		uint64_t len64 = 0;

		if (ntfs_vol_read_attr(&c->vol, base_out, NTFS_AT_ATTRIBUTE_LIST,
				       &list, &len64, &lruns, &nlruns) ||
		    len64 > UINT32_MAX) {
			snprintf(why, NTFS_WHY, "its attribute list is unreadable");
			goto out;
		}
		len = (uint32_t)len64;
	} else {
		val = ntfs_attr_value(la, &len);
		list = malloc(len ? len : 1);
		if (!list) {
			snprintf(why, NTFS_WHY, "out of memory");
			goto out;
		}
		memcpy(list, val, len);
	}
	old_len = len;
	/* the records holding a later extent, each once */
	while (ntfs_al_next(list, len, &off, &e, why) == 1) {
		uint64_t x = e.mref & 0xffffffffffffULL;
		bool held = false;

		if ((e.type != NTFS_AT_INDEX_ALLOCATION && e.type != NTFS_AT_BITMAP) ||
		    !e.lowest_vcn || x == d || !ntfs_al_entry_named(&e, name) ||
		    (e.type == NTFS_AT_INDEX_ALLOCATION && avcn && e.lowest_vcn == avcn) ||
		    (e.type == NTFS_AT_BITMAP && bvcn && e.lowest_vcn == bvcn))
			continue;
		for (int j = 0; j < nrec; j++)
			held |= rec_of[j] == x;
		if (held)
			continue;	/* a holder: rewritten without them */
		if (ntfs_read_listed(c, d, e.mref, buf, why) ||
		    ntfs_index_drop_later(&c->vol.boot.g, buf, out, name, 0, 0, &left, why))
			continue;
		if (!memcmp(buf, out, rs))
			continue;	/* a record named twice: done */
		if (!left) {
			/* nothing left in it: the record is free */
			memcpy(&m, out, sizeof(m));
			m.flags = htole16(le16toh(m.flags) & ~NTFS_MFT_IN_USE);
			memcpy(out, &m, sizeof(m));
			cset_clear(&c->record_used, x);
		}
		if (ntfs_check_write_record(c, x, out)) {
			snprintf(why, NTFS_WHY, "writing MFT record %llu failed",
				 (unsigned long long)x);
			goto out;
		}
	}
	/* an extent that became the first one is at VCN 0 */
	if (avcn)
		al_make_first(list, len, NTFS_AT_INDEX_ALLOCATION, name, avcn);
	if (bvcn)
		al_make_first(list, len, NTFS_AT_BITMAP, name, bvcn);
	len = ntfs_al_drop_later(list, len, NTFS_AT_INDEX_ALLOCATION, name);
	len = ntfs_al_drop_later(list, len, NTFS_AT_BITMAP, name);
	if (la->non_resident) {
		/* the shorter list in its clusters, zeros after it */
		struct ntfs_attr_nonresident n;
		size_t at = (size_t)((const uint8_t *)la - base_out);

		memset(list + len, 0, old_len - len);
		if (ntfs_vol_runs_pwrite(&c->vol, lruns, nlruns, 0, old_len, list)) {
			snprintf(why, NTFS_WHY, "writing its attribute list failed");
			goto out;
		}
		memcpy(&n, base_out + at, sizeof(n));
		n.data_size = (int64_t)htole64(len);
		n.initialized_size = (int64_t)htole64(len);
		memcpy(base_out + at, &n, sizeof(n));
	} else if (ntfs_rec_set_value(base_out, rs, (uint32_t)((const uint8_t *)la - base_out),
				      list, len)) {
		snprintf(why, NTFS_WHY, "its attribute list does not fit");
		goto out;
	}
	ret = 0;
out:
	free(list);
	free(lruns);
	free(buf);
	free(out);
	return ret;
}

/* Each holder of index NAME (BUFS, NREC of them) without the later
 * extents of its allocation and bitmap (but those at AVCN and BVCN, that
 * take a lost first extent's place), into *SRCS: the index is rebuilt
 * into a new allocation from these.  0, or -1 with WHY. */
static int strip_holders(const struct ntfs_geometry *g, uint8_t *const *bufs, uint8_t **srcs,
			 int nrec, const char *name, int64_t avcn, int64_t bvcn, char *why)
{
	int left;

	for (int j = 0; j < nrec; j++) {
		if (!srcs[j] && !(srcs[j] = malloc(g->mft_record_size))) {
			snprintf(why, NTFS_WHY, "out of memory");
			return -1;
		}
		if (ntfs_index_drop_later(g, bufs[j], srcs[j], name, avcn, bvcn, &left, why))
			return -1;
	}
	return 0;
}

/* The index is to be rebuilt into a new allocation (an extent lost, or
 * its extents too small for it): *OLD becomes the first extent's runs
 * (ALLOC, replaced), the first bitmap extent's clusters (BITMAP, when
 * non-resident) join *GONE unless it holds them already. */
static void first_extents(const struct ntfs_geometry *g, const struct ntfs_attr_header *alloc,
			  const struct ntfs_attr_header *bitmap, struct ntfs_run **old,
			  long *nold, struct ntfs_run **gone, long *ngone, char *why)
{
	free(*old);
	*nold = ntfs_attr_runs(alloc, g->nr_clusters, old, why);
	if (*nold < 0) {
		*old = NULL;
		*nold = 0;
	}
	if (!*gone && bitmap->non_resident) {
		*ngone = ntfs_attr_runs(bitmap, g->nr_clusters, gone, why);
		if (*ngone < 0) {
			*gone = NULL;
			*ngone = 0;
		}
	}
}

/* The clusters of D's later extents (LATER names the index) appended to
 * *GONE.  0, or -1 with WHY. */
static int later_clusters(struct ntfs_check *c, uint64_t d, struct later_runs *later,
			  struct ntfs_run **gone, long *ngone, char *why)
{
	uint8_t *buf = malloc(c->vol.boot.g.mft_record_size);
	struct ntfs_run *g;
	int r;

	r = !buf ? -1 : ntfs_vol_file_foreach(&c->vol, ntfs_check_in_use, c, d, buf,
					      add_runs, later);
	free(buf);
	if (r < 0 || later->nomem) {
		snprintf(why, NTFS_WHY, "its later index extents are unreadable");
		return -1;
	}
	if (!later->n)
		return 0;
	g = realloc(*gone, (size_t)(*ngone + later->n) * sizeof(*g));
	if (!g) {
		snprintf(why, NTFS_WHY, "out of memory");
		return -1;
	}
	memcpy(g + *ngone, later->runs, (size_t)later->n * sizeof(*g));
	*gone = g;
	*ngone += later->n;
	return 0;
}

/*
 * A file whose attributes continue in extension records: each attribute
 * of index NAME is replaced in the record that holds it, keeping its
 * instance number, so that the $ATTRIBUTE_LIST stays true as it is.  The
 * index keeps its shape (a large index stays large, a small one small).
 * An $INDEX_ALLOCATION or $BITMAP in several extents stays as it is, every
 * extent byte for byte (and so the list): the new blocks are written into
 * the allocation's clusters from VCN 0, the bitmap marks them (written
 * into its own clusters when it is in several extents), the blocks past
 * them are free blocks of the index, as an index that shrank leaves them.
 */
int ntfs_write_index_listed(struct ntfs_check *c, uint64_t d, const uint8_t *base,
			    const char *name, uint32_t type, uint32_t collation,
			    const struct ntfs_ib_entry *e, long n, char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint64_t at[NTFS_IX_SLOTS], ref[NTFS_IX_SLOTS], rec_of[NTFS_IX_SLOTS];
	uint8_t *bufs[NTFS_IX_SLOTS] = { 0 }, *outs[NTFS_IX_SLOTS] = { 0 };
	uint8_t *srcs[NTFS_IX_SLOTS] = { 0 };	/* the holders without later
						 * extents (a new allocation) */
	const struct ntfs_attr_header *attr[NTFS_IX_SLOTS] = { 0 };
	struct ntfs_run *old = NULL, *gone = NULL, *bruns = NULL;
	long nold = 0, ngone = 0, nbruns = 0;
	size_t more[NTFS_IX_SLOTS];
	struct ntfs_mft_record m;
	struct index_shape sh;
	struct index_plan p;
	int nrec = 0, ret = -1;
	uint32_t other = 0, bitmap_len = 0;
	uint64_t old_size = 0, bsize = 0;
	uint8_t *bits = NULL;
	unsigned int keep = 0;
	bool lost = false, extent_lost = false;
	unsigned int missing = 0;
	int64_t avcn = 0, bvcn = 0;
	struct later_runs later = { .name = name,
				    .nr_clusters = c->vol.boot.g.nr_clusters };

	memset(&p, 0, sizeof(p));
	if (ntfs_index_holders(&c->vol, base, name, at, more, why) &&
	    promote_later(c, base, name, at, more, &avcn, &bvcn)) {
		/* no root or bitmap named (their record lost): new ones */
		if (new_home(c, d, base, name, at, more, &missing))
			return -1;
	}
	/* the references as the list names them, read with their sequence
	 * numbers (a record freed and used again is not the file's); the
	 * record numbers below */
	for (int k = 0; k < NTFS_IX_SLOTS; k++) {
		ref[k] = at[k];
		if (at[k] != UINT64_MAX)
			at[k] &= 0xffffffffffffULL;
	}
	/* an allocation or bitmap in several extents: both kept */
	if (more[NTFS_IX_ALLOC] || more[NTFS_IX_BITMAP])
		keep = 1u << NTFS_IX_ALLOC;
	if (more[NTFS_IX_BITMAP])
		keep |= 1u << NTFS_IX_BITMAP;
	if (avcn) {
		/* the first extent lost: a new allocation replaces the
		 * extent that takes its place, the later ones dropped */
		keep = 0;
		lost = true;
		later.first_vcn = avcn;
		later.first_bvcn = bvcn;
	}
	/* the distinct records holding them, read and checked */
	for (int k = 0; k < NTFS_IX_SLOTS; k++) {
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
			} else if (ntfs_read_listed(c, d, ref[k], bufs[nrec], why)) {
				nrec++;
				snprintf(why, NTFS_WHY, "MFT record %llu holding its index is unusable",
					 (unsigned long long)at[k]);
				goto out;
			}
			nrec++;
		}
		if (missing & (1u << k))
			continue;	/* none yet */
		attr[k] = ntfs_attr_extent(bufs[j], ntfs_ix_slot_types[k], name,
					   k == NTFS_IX_ALLOC ? avcn :
					   k == NTFS_IX_BITMAP ? bvcn : 0);
		if (!attr[k] || (k == NTFS_IX_ROOT && attr[k]->non_resident) ||
		    (k == NTFS_IX_ALLOC && !attr[k]->non_resident) ||
		    (k == NTFS_IX_BITMAP && more[k] && !attr[k]->non_resident)) {
			snprintf(why, NTFS_WHY, "its index attributes are not where its list says");
			goto out;
		}
	}
	if (missing) {
		/* the base too: its list takes the new attributes' entries */
		int j;

		for (j = 0; j < nrec && rec_of[j] != d; j++)
			;
		if (j == nrec) {
			rec_of[nrec] = d;
			bufs[nrec] = malloc(rs);
			outs[nrec] = malloc(rs);
			nrec++;
			if (!bufs[j] || !outs[j]) {
				snprintf(why, NTFS_WHY, "out of memory");
				goto out;
			}
			memcpy(bufs[j], base, rs);
		}
	}
	if (attr[NTFS_IX_ALLOC]) {
		nold = ntfs_attr_runs(attr[NTFS_IX_ALLOC], c->vol.boot.g.nr_clusters, &old, why);
		if (nold < 0) {
			old = NULL;
			nold = 0;
		}
	}
	if (attr[NTFS_IX_BITMAP] && attr[NTFS_IX_BITMAP]->non_resident &&
	    !(keep & (1u << NTFS_IX_BITMAP))) {
		ngone = ntfs_attr_runs(attr[NTFS_IX_BITMAP], c->vol.boot.g.nr_clusters, &gone, why);
		if (ngone < 0) {
			gone = NULL;
			ngone = 0;
		}
	}
	if (keep & (1u << NTFS_IX_BITMAP)) {
		/* every extent of the bitmap: they stay, and take the new
		 * bits */
		size_t nx;

		nbruns = ntfs_attr_extents_runs(c, d, NTFS_AT_BITMAP, name, &bruns,
						&bsize, &nx, why);
		if (nbruns < 0) {
			bruns = NULL;
			if (nbruns == -ENOMEM) {
				snprintf(why, NTFS_WHY, "out of memory");
				nbruns = 0;
				goto out;
			}
			/* an extent of it lost with its record: below */
			nbruns = 0;
			extent_lost = true;
		}
	}
	if (keep) {
		/* every extent of the allocation: they stay, and hold the
		 * new blocks */
		size_t nx;

		free(old);
		nold = ntfs_attr_extents_runs(c, d, NTFS_AT_INDEX_ALLOCATION, name,
					      &old, &old_size, &nx, why);
		uint64_t mapped = 0;

		for (long i = 0; i < nold; i++)
			mapped += old[i].len;
		/* the extents join but end short of the data size: the
		 * last ones lost with their record */
		if (nold > 0 && mapped * c->vol.boot.g.cluster_size < old_size)
			extent_lost = true;
		if ((nold == -1 || (nold >= 0 && extent_lost)) && attr[NTFS_IX_BITMAP]) {
			/* the extents of the allocation or of the bitmap do
			 * not join, or the last ones are missing (lost with
			 * their record): a new index in
			 * free clusters replaces their first extents, the
			 * later ones are dropped (a bitmap in several extents
			 * too: its clusters are freed, all of them) */
			if (nold < 0)
				old = NULL;
			lost = true;
			keep = 0;
			free(bruns);
			bruns = NULL;
			nbruns = 0;
			first_extents(&c->vol.boot.g, attr[NTFS_IX_ALLOC], attr[NTFS_IX_BITMAP],
				      &old, &nold, &gone, &ngone, why);
		} else if (nold < 0) {
			if (nold == -ENOMEM)
				snprintf(why, NTFS_WHY, "out of memory");
			old = NULL;
			nold = 0;
			goto out;
		}
		for (long i = 0; keep && i < nold; i++)
			if (old[i].lcn < 0 ||
			    (uint64_t)old[i].lcn + old[i].len > c->geo.dev_clusters) {
				snprintf(why, NTFS_WHY, "its index allocation in %zu extents has holes or clusters past the device",
					 nx);
				goto out;
			}
		for (long i = 0; i < nbruns; i++)
			if (bruns[i].lcn < 0 ||
			    (uint64_t)bruns[i].lcn + bruns[i].len > c->geo.dev_clusters) {
				snprintf(why, NTFS_WHY, "its index bitmap in %zu extents has holes or clusters past the device",
					 more[NTFS_IX_BITMAP] + 1);
				goto out;
			}
		bitmap_len = (uint32_t)ntfs_align((old_size / c->vol.boot.g.index_block_size + 7) / 8, 8);
		if (keep && attr[NTFS_IX_BITMAP] && !attr[NTFS_IX_BITMAP]->non_resident) {
			uint32_t blen;

			ntfs_attr_value(attr[NTFS_IX_BITMAP], &blen);
			if (blen > bitmap_len)
				bitmap_len = blen;
		}
	}
	/* the later extents' clusters: freed with the old bitmap */
	if (lost && later_clusters(c, d, &later, &gone, &ngone, why))
		goto out;
plan:
	/* a new allocation: the later extents leave their holders */
	if (lost && strip_holders(&c->vol.boot.g, bufs, srcs, nrec, name, avcn, bvcn, why))
		goto out;
	/* the root's record: what is not index stays */
	for (int j = 0; j < nrec; j++)
		if (rec_of[j] == at[NTFS_IX_ROOT]) {
			memcpy(&m, lost ? srcs[j] : bufs[j], sizeof(m));
			other = le32toh(m.bytes_in_use);
		}
	for (int k = 0; k < NTFS_IX_SLOTS; k++)
		if (attr[k] && at[k] == at[NTFS_IX_ROOT] && !(keep & (1u << k)))
			other -= le32toh(attr[k]->length);
	for (int k = 0; k < NTFS_IX_SLOTS; k++)
		if ((missing & (1u << k)) && at[NTFS_IX_ROOT] == d)
			other += ntfs_al_entry_size(name);	/* the list's new entry */
	if (keep && !(keep & (1u << NTFS_IX_BITMAP)) && at[NTFS_IX_BITMAP] == at[NTFS_IX_ROOT])
		other += (uint32_t)ntfs_align(RESIDENT_HDR + bitmap_len, 8);
	sh.large = attr[NTFS_IX_ALLOC] != NULL;
	sh.small = !sh.large;
	sh.alone = at[NTFS_IX_ALLOC] != at[NTFS_IX_ROOT] && at[NTFS_IX_BITMAP] != at[NTFS_IX_ROOT];
	if (keep ? ntfs_index_plan_in_extents(&c->vol.boot.g, &p, type, collation, e, n,
					      rs > other + RESIDENT_HDR ? rs - other - RESIDENT_HDR : 0,
					      old, nold, old_size, bitmap_len, why) :
	    ntfs_index_plan(c, &p, type, collation, e, n, other, old, nold, &sh, why)) {
		if (!keep || lost || !attr[NTFS_IX_ALLOC] || !attr[NTFS_IX_BITMAP])
			goto out;
		/* its extents too small for it (the last ones lost with
		 * their record, the size cut to what is left): a new
		 * allocation, as when an extent is lost */
		ntfs_index_build_free(&p.res);
		free(p.runs);
		memset(&p, 0, sizeof(p));
		lost = true;
		keep = 0;
		free(bruns);
		bruns = NULL;
		nbruns = 0;
		first_extents(&c->vol.boot.g, attr[NTFS_IX_ALLOC], attr[NTFS_IX_BITMAP],
			      &old, &nold, &gone, &ngone, why);
		if (later_clusters(c, d, &later, &gone, &ngone, why))
			goto out;
		goto plan;
	}
	if (keep & (1u << NTFS_IX_BITMAP)) {
		/* the new bits over the whole of the old bitmap */
		if (bsize * 8 < p.res.nblocks || bsize > (1u << 24) ||
		    !(bits = calloc(1, bsize + 1))) {
			snprintf(why, NTFS_WHY, "its index bitmap of %llu bytes cannot mark %u blocks",
				 (unsigned long long)bsize, p.res.nblocks);
			goto out;
		}
		for (uint32_t b = 0; b < p.res.nblocks; b++)
			bits[b >> 3] |= (uint8_t)(1u << (b & 7));
	}
	for (int j = 0; j < nrec; j++)
		if (ntfs_index_rewrite_holder(&c->vol.boot.g, lost ? srcs[j] : bufs[j],
					      outs[j], &p, name, keep, why))
			goto out;
	if (lost) {
		int j;

		for (j = 0; j < nrec && rec_of[j] != d; j++)
			;
		if (j == nrec) {
			snprintf(why, NTFS_WHY, "its base record holds no index attribute");
			goto out;
		}
		if (drop_later_extents(c, d, name, outs[j], rec_of, nrec, avcn, bvcn, why))
			goto out;
	}
	for (int k = 0; k < NTFS_IX_SLOTS; k++) {
		int j, b;

		if (!(missing & (1u << k)))
			continue;
		for (j = 0; j < nrec && rec_of[j] != at[k]; j++)
			;
		for (b = 0; b < nrec && rec_of[b] != d; b++)
			;
		if (add_new_attr(c, outs[j], ref[k], outs[b], &p, name, k, why))
			goto out;
	}
	if (ntfs_index_plan_commit(c, &p, old, nold, gone, ngone, why))
		goto out;
	if (bits && ntfs_vol_runs_pwrite(&c->vol, bruns, nbruns, 0, bsize, bits)) {
		snprintf(why, NTFS_WHY, "writing its index bitmap failed");
		goto out;
	}
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
		free(srcs[j]);
	}
	ntfs_index_build_free(&p.res);
	free(p.runs);
	free(old);
	free(gone);
	free(bruns);
	free(bits);
	free(later.runs);
	return ret;
}

/* A directory: its index from the names that point to it. */
int ntfs_rebuild_listed(struct ntfs_check *c, uint64_t d, const uint8_t *base,
			const uint16_t *upcase, char *why)
{
	struct ntfs_fn_ref **v = NULL;
	struct ntfs_ib_entry *e = NULL;
	long n = ntfs_dir_names(c, d, upcase, &v);
	int ret = -1;

	if (n < 0 || !(e = ntfs_dir_entries(c, v, n)))
		snprintf(why, NTFS_WHY, "out of memory");
	else
		ret = ntfs_write_index_listed(c, d, base, "$I30", NTFS_AT_FILE_NAME,
					      NTFS_COLLATION_FILE_NAME, e, n, why);
	free(e);
	free(v);
	return ret;
}
