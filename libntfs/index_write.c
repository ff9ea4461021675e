// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libntfs: an index placed on the volume (any index of a record, built by
 * the index builder from the entries given).  Its blocks go into the old
 * index clusters when they are enough or else into clusters the caller's
 * allocator finds, and the index attributes of the record are replaced,
 * each where its type and name sort; every other attribute is kept byte
 * for byte.  A directory whose index attributes are spread over the
 * records of its $ATTRIBUTE_LIST has them replaced in each record.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/attrlist.h"
#include "ntfs/file_attrs.h"
#include "ntfs/index_write.h"
#include "ntfs/repair.h"
#include "ntfs/volume_io.h"

#define MP_MAX 256			/* mapping pairs we are ready to write */
/* The root of a large view index: only its end entry, over one top block
 * (as Windows and ntfs-3g leave it).  A view index shares its record with
 * another ($Secure's $SII and $SDH, $Quota's $O and $Q): a root that took
 * all the room left would leave none for the other's. */
#define LOW_ROOT (sizeof(struct ntfs_index_root) + sizeof(struct ntfs_index_entry) + 8)

/* Is A an attribute of index NAME?  A directory has one index, $I30, and
 * $Extend/$Reparse one, $R: every index attribute of its record is
 * replaced, whatever its (possibly damaged) name; other records keep
 * their other indexes. */
bool ntfs_index_is_attr(const struct ntfs_attr_header *a, const char *name)
{
	uint32_t t = le32toh(a->type);

	if (t != NTFS_AT_INDEX_ROOT && t != NTFS_AT_INDEX_ALLOCATION &&
	    t != NTFS_AT_BITMAP)
		return false;
	return !strcmp(name, "$I30") || !strcmp(name, "$R") ||
	       ntfs_attr_has_name(a, name);
}

/* Where NBLOCKS blocks go: the old allocation if big enough (and not
 * perhaps another file's too), else one new free run (with RESERVE free
 * clusters after it).  Returns the mapping pairs length or -1. */
static int place(const struct ntfs_geometry *g,
		 const struct ntfs_cluster_source *src, struct index_plan *p,
		 const struct ntfs_run *old, long nold, uint64_t reserve)
{
	uint32_t cs = g->cluster_size, bs = g->index_block_size;
	uint64_t need = ((uint64_t)p->res.nblocks * bs + cs - 1) / cs, have = 0;
	uint8_t mp[MP_MAX];
	int64_t lcn;
	int len;

	bool holes = false;

	for (long i = 0; i < nold; i++) {
		have += old[i].lcn >= 0 ? old[i].len : 0;
		holes |= old[i].lcn < 0;
	}
	free(p->runs);
	p->runs = NULL;
	/* on a truncated device, clusters past its end are unreadable and
	 * cannot be written: the blocks go to new clusters on the device */
	holes |= ntfs_runs_past(old, nold, src->dev_clusters);
	if (nold > 0 && !holes && !src->no_reuse && have >= need &&
	    (len = ntfs_mp_encode(old, (size_t)nold, mp, sizeof(mp))) > 0) {
		p->runs = malloc((size_t)nold * sizeof(*old));
		if (!p->runs)
			return -1;
		memcpy(p->runs, old, (size_t)nold * sizeof(*old));
		p->nruns = nold;
		p->reuse = true;
		p->clusters = have;
		return len;
	}
	lcn = src->find_free(src->arg, need + reserve);
	p->runs = malloc(sizeof(*p->runs));
	if (lcn < 0 || !p->runs)
		return -1;
	p->runs[0].lcn = lcn;
	p->runs[0].len = need;
	p->nruns = 1;
	p->reuse = false;
	p->clusters = need;
	return ntfs_mp_encode(p->runs, 1, mp, sizeof(mp));
}

/* The bitmap of P in clusters of its own (as Windows and ntfs-3g make a
 * big one), right after a new allocation or in the first free run: does
 * the record (OTHER bytes besides) then hold the index?  MPLEN: the
 * allocation's mapping pairs. */
static bool bitmap_outside(const struct ntfs_geometry *g,
			   const struct ntfs_cluster_source *src, struct index_plan *p,
			   const struct ntfs_run *old, long nold, uint32_t other, int mplen)
{
	uint32_t cs = g->cluster_size;
	uint64_t nb = (p->bitmap_len + cs - 1) / cs;
	uint8_t mp[MP_MAX];
	int blen;

	if (!p->reuse && (mplen = place(g, src, p, old, nold, nb)) < 0)
		return false;
	p->bitmap_run.len = nb;
	p->bitmap_run.lcn = p->reuse ? src->find_free(src->arg, nb) :
				       p->runs[0].lcn + (int64_t)p->runs[0].len;
	if (p->bitmap_run.lcn < 0 ||
	    (blen = ntfs_mp_encode(&p->bitmap_run, 1, mp, sizeof(mp))) < 0 ||
	    other + RESIDENT_HDR + p->res.root_len +
	    ntfs_align(NONRESIDENT_HDR + (uint32_t)mplen, 8) +
	    ntfs_align(NONRESIDENT_HDR + (uint32_t)blen, 8) > g->mft_record_size)
		return false;
	p->bitmap_nonres = true;
	return true;
}

/* The index of SPEC's type and collation from E (N entries, sorted) for a
 * record whose other attributes take OTHER bytes: the root as big as
 * fits, blocks placed (the old allocation OLD reused when big enough). */
int ntfs_index_plan_build(const struct ntfs_geometry *g,
			  const struct ntfs_cluster_source *src,
			  struct index_plan *p, uint32_t type,
			  uint32_t collation, const struct ntfs_ib_entry *e,
			  long n, uint32_t other, const struct ntfs_run *old,
			  long nold, const struct index_shape *sh, char *why)
{
	uint32_t rs = g->mft_record_size;
	uint32_t bs = g->index_block_size, cs = g->cluster_size;
	uint32_t room = rs > other + RESIDENT_HDR ? rs - other - RESIDENT_HDR : 0;
	struct ntfs_ib_spec spec = { .type = type, .collation = collation,
				     .block_size = bs, .cluster_size = cs,
				     .large = sh->large };
	int ret = -1;

	/* as small as can be first; a large index also needs room for its
	 * allocation and bitmap attributes, so shrink the root until all fit */
	for (int tries = 0; tries < 8; tries++) {
		uint32_t extra;
		int mplen;

		ntfs_index_build_free(&p->res);
		spec.root_room = room;
		if (room < LOW_ROOT) {
			snprintf(why, NTFS_WHY, "its %u-byte MFT record has no room for the index (%u bytes left)",
				 rs, room);
			goto out;
		}
		if (ntfs_index_build_spec(&spec, e, (size_t)n, &p->res)) {
			snprintf(why, NTFS_WHY, "%u-byte index blocks cannot hold the entries in a %u-byte record",
				 bs, rs);
			goto out;
		}
		if (!p->res.large) {
			ret = 0;
			goto out;
		}
		if (sh->small) {
			snprintf(why, NTFS_WHY, "the index no longer fits its record");
			goto out;
		}
		if (type != NTFS_AT_FILE_NAME && room > LOW_ROOT) {
			room = LOW_ROOT;
			continue;
		}
		p->bitmap_nonres = false;
		mplen = place(g, src, p, old, nold, 0);
		if (mplen < 0) {
			snprintf(why, NTFS_WHY, "no %llu free clusters for the index",
				 (unsigned long long)(((uint64_t)p->res.nblocks * bs + cs - 1) / cs));
			goto out;
		}
		p->bitmap_len = (uint32_t)ntfs_align((p->res.nblocks + 7) / 8, 8);
		if (p->bitmap_len > sizeof(p->bitmap)) {
			snprintf(why, NTFS_WHY, "%u index blocks are too many", p->res.nblocks);
			goto out;
		}
		memset(p->bitmap, 0, p->bitmap_len);
		for (uint32_t b = 0; b < p->res.nblocks; b++)
			p->bitmap[b >> 3] |= (uint8_t)(1u << (b & 7));
		extra = sh->alone ? 0 :
			(uint32_t)ntfs_align(NONRESIDENT_HDR + (uint32_t)mplen, 8) +
			RESIDENT_HDR + p->bitmap_len;
		if (other + RESIDENT_HDR + p->res.root_len + extra <= rs) {
			ret = 0;
			goto out;
		}
		room = rs > other + RESIDENT_HDR + extra ? rs - other - RESIDENT_HDR - extra : 0;
		/* no smaller root possible: the bitmap out of the record */
		if (room < LOW_ROOT && !sh->alone &&
		    bitmap_outside(g, src, p, old, nold, other, mplen)) {
			ret = 0;
			goto out;
		}
	}
	snprintf(why, NTFS_WHY, "the index does not fit the directory record");
out:
	return ret;
}

/* NAME (ASCII) against A's name, as attributes of one type are ordered */
static int name_cmp(const char *name, const struct ntfs_attr_header *a)
{
	const uint8_t *n = (const uint8_t *)a + le16toh(a->name_offset);
	size_t len = strlen(name);

	for (size_t i = 0; i < len && i < a->name_length; i++) {
		uint16_t x = (uint8_t)name[i], y = (uint16_t)(n[2 * i] | n[2 * i + 1] << 8);

		if (x != y)
			return x < y ? -1 : 1;
	}
	return len == a->name_length ? 0 : (len < a->name_length ? -1 : 1);
}

/* P's bitmap of index NAME, resident or in its clusters */
static bool add_bitmap(const struct ntfs_geometry *g, struct ntfs_rec *r,
		       const struct index_plan *p, const char *name)
{
	if (p->bitmap_nonres)
		return !ntfs_rec_add_nonresident(r, NTFS_AT_BITMAP, name, &p->bitmap_run, 1,
						 p->bitmap_run.len * g->cluster_size,
						 p->bitmap_len, p->bitmap_len);
	return ntfs_rec_add_resident(r, NTFS_AT_BITMAP, name, p->bitmap,
				     p->bitmap_len, 0) != NULL;
}

/* Add the next of P's attributes of index NAME (*K: 0 root, 1 allocation,
 * 2 bitmap) while they sort before A (NULL: all of them). */
static bool add_new(const struct ntfs_geometry *g, struct ntfs_rec *r,
		    const struct index_plan *p, const char *name, int *k,
		    const struct ntfs_attr_header *a)
{
	static const uint32_t types[3] = { NTFS_AT_INDEX_ROOT,
					   NTFS_AT_INDEX_ALLOCATION, NTFS_AT_BITMAP };
	uint32_t cs = g->cluster_size;
	uint64_t data = (uint64_t)p->res.nblocks * g->index_block_size;
	bool ok = true;

	for (; *k < (p->res.large ? 3 : 1) && ok; ++*k) {
		if (a && (types[*k] > le32toh(a->type) ||
			  (types[*k] == le32toh(a->type) && name_cmp(name, a) > 0)))
			break;
		if (*k == 0)
			ok = ntfs_rec_add_resident(r, NTFS_AT_INDEX_ROOT, name,
						   p->res.root, p->res.root_len, 0) != NULL;
		else if (*k == 1)
			ok = !ntfs_rec_add_nonresident(r, NTFS_AT_INDEX_ALLOCATION, name,
						       p->runs, (size_t)p->nruns,
						       p->clusters * cs, data, data);
		else
			ok = add_bitmap(g, r, p, name);
	}
	return ok;
}

/* Record REC with the attributes of its index NAME replaced by P's, each
 * where its type and name sort among the attributes kept. */
int ntfs_index_rewrite_record(const struct ntfs_geometry *g, const uint8_t *rec,
			      uint8_t *out, const struct index_plan *p,
			      const char *name, char *why)
{
	uint32_t rs = g->mft_record_size;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	struct ntfs_rec r;
	int k = 0, more;
	bool ok = true;

	memcpy(out, rec, rs);
	ntfs_rec_reopen(&r, out, rs);
	ntfs_attr_cursor_init(&cur, rec);
	while (ok && (more = ntfs_attr_next(&cur, &a, why)) == 1) {
		if (ntfs_index_is_attr(a, name))
			continue;
		ok = add_new(g, &r, p, name, &k, a) &&
		     ntfs_rec_add_raw(&r, a, le32toh(a->length)) != NULL;
	}
	if (ok && more < 0)
		return -1;
	if (ok)
		ok = add_new(g, &r, p, name, &k, NULL);
	if (!ok)
		snprintf(why, NTFS_WHY, "the index does not fit the record");
	return ok ? 0 : -1;
}

int ntfs_index_plan_write(struct ntfs_vol *v, const struct index_plan *p,
			  char *why)
{
	if (p->res.large &&
	    ntfs_vol_write_runs(v, p->runs, p->nruns, p->res.blocks,
				(uint64_t)p->res.nblocks * v->boot.g.index_block_size)) {
		snprintf(why, NTFS_WHY, "writing the index blocks failed");
		return -1;
	}
	if (p->bitmap_nonres) {
		uint64_t len = p->bitmap_run.len * v->boot.g.cluster_size;
		uint8_t *b = calloc(1, len);
		int r = -1;

		if (b) {
			memcpy(b, p->bitmap, p->bitmap_len);
			r = ntfs_vol_write_runs(v, &p->bitmap_run, 1, b, len);
		}
		free(b);
		if (r) {
			snprintf(why, NTFS_WHY, "writing the index bitmap failed");
			return -1;
		}
	}
	return 0;
}

void ntfs_index_plan_free(struct index_plan *p)
{
	ntfs_index_build_free(&p->res);
	free(p->runs);
	p->runs = NULL;
}

int ntfs_index_attrs_scan(const struct ntfs_geometry *g, const uint8_t *rec,
			  const char *name, uint32_t *other,
			  struct ntfs_run **old, long *nold,
			  struct ntfs_run **gone, long *ngone, char *why)
{
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	struct ntfs_mft_record m;
	int more;

	*old = *gone = NULL;
	*nold = *ngone = 0;
	memcpy(&m, rec, sizeof(m));
	*other = le16toh(m.attrs_offset) + 8;
	ntfs_attr_cursor_init(&cur, rec);
	while ((more = ntfs_attr_next(&cur, &a, why)) == 1) {
		uint32_t t = le32toh(a->type);

		if (t == NTFS_AT_ATTRIBUTE_LIST) {
			snprintf(why, NTFS_WHY, "its attributes are in several records");
			return -1;
		}
		if (!ntfs_index_is_attr(a, name)) {
			*other += le32toh(a->length);
			continue;
		}
		if (!a->non_resident)
			continue;
		if (t == NTFS_AT_INDEX_ALLOCATION && !*old) {
			*nold = ntfs_attr_runs(a, g->nr_clusters, old, why);
			if (*nold < 0) {
				*old = NULL;
				*nold = 0;
			}
		} else if (!*gone) {
			*ngone = ntfs_attr_runs(a, g->nr_clusters, gone, why);
			if (*ngone < 0) {
				*gone = NULL;
				*ngone = 0;
			}
		}
	}
	return more < 0 ? -1 : 0;
}

const uint32_t ntfs_ix_slot_types[NTFS_IX_SLOTS] = {
	NTFS_AT_INDEX_ROOT, NTFS_AT_INDEX_ALLOCATION, NTFS_AT_BITMAP
};

static int type_slot(uint32_t t)
{
	for (int i = 0; i < NTFS_IX_SLOTS; i++)
		if (ntfs_ix_slot_types[i] == t)
			return i;
	return -1;
}

/* Is the list entry's name (LEN units at N) NAME? */
static bool entry_named(const uint8_t *n, uint8_t len, const char *name)
{
	size_t nlen = strlen(name);

	if (len != nlen)
		return false;
	for (size_t i = 0; i < nlen; i++)
		if (n[2 * i] != (uint8_t)name[i] || n[2 * i + 1])
			return false;
	return true;
}

/* The reference (record and sequence number, as the list names it) of
 * the record holding each attribute of index NAME (UINT64_MAX: none; its
 * extent at VCN 0); MORE[k]: the later extents of slot k. */
int ntfs_index_holders(struct ntfs_vol *v, const uint8_t *rec, const char *name,
		       uint64_t at[NTFS_IX_SLOTS], size_t more[NTFS_IX_SLOTS],
		       char *why)
{
	struct ntfs_run *runs = NULL;
	struct ntfs_al_entry e;
	uint8_t *list = NULL;
	uint64_t len = 0;
	uint32_t off = 0;
	long nruns;
	int ret = 0, r;

	for (int i = 0; i < NTFS_IX_SLOTS; i++) {
		at[i] = UINT64_MAX;
		more[i] = 0;
	}
	if (ntfs_vol_read_attr(v, rec, NTFS_AT_ATTRIBUTE_LIST, &list, &len,
			       &runs, &nruns) || len > UINT32_MAX) {
		snprintf(why, NTFS_WHY, "its attribute list is unreadable");
		ret = -1;
		goto out;
	}
	while ((r = ntfs_al_next(list, (uint32_t)len, &off, &e, why)) == 1) {
		int k = type_slot(e.type);

		if (k < 0 || !entry_named(e.name, e.name_len, name))
			continue;
		if (e.lowest_vcn && k != NTFS_IX_ROOT) {
			++more[k];
		} else if (e.lowest_vcn || at[k] != UINT64_MAX) {
			snprintf(why, NTFS_WHY, "its index root is in several extents");
			ret = -1;
			goto out;
		} else {
			at[k] = e.mref;
		}
	}
	if (r < 0) {
		ret = -1;
	} else if (at[NTFS_IX_ROOT] == UINT64_MAX ||
		   (at[NTFS_IX_ALLOC] == UINT64_MAX) != (at[NTFS_IX_BITMAP] == UINT64_MAX) ||
		   (more[NTFS_IX_ALLOC] && at[NTFS_IX_ALLOC] == UINT64_MAX) ||
		   (more[NTFS_IX_BITMAP] && at[NTFS_IX_BITMAP] == UINT64_MAX)) {
		snprintf(why, NTFS_WHY, "its attribute list lacks index attributes");
		ret = -1;
	}
out:
	free(list);
	free(runs);
	return ret;
}

/* Add P's attribute of slot K of index NAME to R, numbered INSTANCE;
 * false if full. */
static bool add_index_attr(const struct ntfs_geometry *g, struct ntfs_rec *r,
			   int k, const struct index_plan *p, const char *name,
			   uint16_t instance)
{
	uint32_t at = r->end;
	uint64_t data = (uint64_t)p->res.nblocks * g->index_block_size;
	bool ok;

	if (k == NTFS_IX_ROOT)
		ok = ntfs_rec_add_resident(r, NTFS_AT_INDEX_ROOT, name, p->res.root,
					   p->res.root_len, 0) != NULL;
	else if (k == NTFS_IX_ALLOC)
		ok = !ntfs_rec_add_nonresident(r, NTFS_AT_INDEX_ALLOCATION, name,
					       p->runs, (size_t)p->nruns,
					       p->clusters * g->cluster_size,
					       data, data);
	else
		ok = add_bitmap(g, r, p, name);
	if (ok)
		memcpy(r->buf + at + offsetof(struct ntfs_attr_header, instance),
		       &instance, 2);
	return ok;
}

int ntfs_index_rewrite_holder(const struct ntfs_geometry *g,
			      const uint8_t *rec, uint8_t *out,
			      const struct index_plan *p, const char *name,
			      unsigned int keep, char *why)
{
	uint32_t rs = g->mft_record_size;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	struct ntfs_rec r;
	int more;

	memcpy(out, rec, rs);
	ntfs_rec_reopen(&r, out, rs);
	ntfs_attr_cursor_init(&cur, rec);
	while ((more = ntfs_attr_next(&cur, &a, why)) == 1) {
		int k = ntfs_attr_has_name(a, name) ? type_slot(le32toh(a->type)) : -1;
		bool ok;

		if (k >= 0 && (keep & (1u << k)))
			k = -1;
		ok = k >= 0 ? add_index_attr(g, &r, k, p, name, a->instance) :
			  ntfs_rec_add_raw(&r, a, le32toh(a->length)) != NULL;
		if (!ok) {
			snprintf(why, NTFS_WHY, "the index does not fit MFT record %llu",
				 (unsigned long long)le32toh(((const struct ntfs_mft_record *)rec)->mft_record_number));
			return -1;
		}
	}
	return more < 0 ? -1 : 0;
}

int ntfs_index_add_attr(const struct ntfs_geometry *g, const uint8_t *rec,
			uint8_t *out, const struct index_plan *p, const char *name,
			int k, uint16_t *instance, char *why)
{
	uint32_t rs = g->mft_record_size, type = ntfs_ix_slot_types[k];
	struct ntfs_mft_record *m = (struct ntfs_mft_record *)out;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	struct ntfs_rec r;
	bool added = false;
	uint16_t inst;
	int more;

	memcpy(out, rec, rs);
	inst = le16toh(m->next_attr_instance);
	ntfs_rec_reopen(&r, out, rs);
	ntfs_attr_cursor_init(&cur, rec);
	for (;;) {
		more = ntfs_attr_next(&cur, &a, why);
		if (more < 0)
			return -1;
		if (!added && (!more || le32toh(a->type) > type)) {
			if (!add_index_attr(g, &r, k, p, name, htole16(inst)))
				break;
			added = true;
		}
		if (!more)
			break;
		if (!ntfs_rec_add_raw(&r, a, le32toh(a->length))) {
			added = false;
			break;
		}
	}
	if (!added) {
		snprintf(why, NTFS_WHY, "a new index attribute 0x%x does not fit MFT record %llu",
			 (unsigned)type,
			 (unsigned long long)le32toh(((const struct ntfs_mft_record *)rec)->mft_record_number));
		return -1;
	}
	m->next_attr_instance = htole16((uint16_t)(inst + 1));
	*instance = inst;
	return 0;
}

/* The index of E (N entries) for an allocation in several extents, whose
 * runs (all extents, NOLD of them) are OLD and data size OLD_SIZE: the
 * root as big as the ROOM left in its record, the blocks in the old
 * clusters (there must be enough of them), a bitmap of BITMAP_LEN bytes. */
int ntfs_index_plan_in_extents(const struct ntfs_geometry *g,
			       struct index_plan *p, uint32_t type,
			       uint32_t collation,
			       const struct ntfs_ib_entry *e, long n,
			       uint32_t room, const struct ntfs_run *old,
			       long nold, uint64_t old_size,
			       uint32_t bitmap_len, char *why)
{
	uint32_t bs = g->index_block_size, cs = g->cluster_size;
	struct ntfs_ib_spec spec = { .type = type, .collation = collation,
				     .block_size = bs, .cluster_size = cs,
				     .root_room = type != NTFS_AT_FILE_NAME && room > LOW_ROOT ?
						  (uint32_t)LOW_ROOT : room,
				     .large = true };
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

int ntfs_index_drop_later(const struct ntfs_geometry *g, const uint8_t *rec,
			  uint8_t *out, const char *name, int64_t alloc_vcn,
			  int64_t bitmap_vcn, int *left, char *why)
{
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	struct ntfs_rec r;
	int more;

	*left = 0;
	memcpy(out, rec, g->mft_record_size);
	ntfs_rec_reopen(&r, out, g->mft_record_size);
	ntfs_attr_cursor_init(&cur, rec);
	while ((more = ntfs_attr_next(&cur, &a, why)) == 1) {
		struct ntfs_attr_nonresident n;

		if ((le32toh(a->type) == NTFS_AT_INDEX_ALLOCATION ||
		     le32toh(a->type) == NTFS_AT_BITMAP) && a->non_resident &&
		    ntfs_attr_has_name(a, name)) {
			int64_t vcn, kept;

			memcpy(&n, a, sizeof(n));
			vcn = (int64_t)le64toh((uint64_t)n.lowest_vcn);
			kept = le32toh(a->type) == NTFS_AT_BITMAP ? bitmap_vcn : alloc_vcn;
			if (vcn && vcn != kept)
				continue;
		}
		if (!ntfs_rec_add_raw(&r, a, le32toh(a->length)))
			return -1;	/* cannot happen: it was there */
		++*left;
	}
	return more < 0 ? -1 : 0;
}
