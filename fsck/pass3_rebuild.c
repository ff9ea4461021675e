// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 3 repair: write an index (ntfs_write_index: any index of a record,
 * built by the libntfs builder from the entries given) and rebuild a
 * directory's $I30 index from the $FILE_NAME
 * attributes that name the directory as their parent (collected by pass
 * 1).  The names are sorted by $UpCase collation, built into a fresh tree
 * (libntfs/index_build.c), written into the directory's old index clusters
 * when they are enough or else into newly allocated ones, and the three
 * $I30 attributes of the directory record are replaced; every other
 * attribute is kept byte for byte.  Directories whose attributes spill
 * into extension records ($ATTRIBUTE_LIST) have each index attribute
 * replaced in the record that holds it; an allocation in several extents
 * keeps its extents and clusters and takes the new blocks.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/index_build.h"
#include "ntfs_check.h"
#include "ntfs_problems.h"

#define MP_MAX 256			/* mapping pairs we are ready to write */
#define RESIDENT_HDR 0x20		/* resident header + "$I30" */
#define NONRESIDENT_HDR 0x48		/* non-resident header + "$I30" */

/* Is A an attribute of index NAME?  A directory has one index, $I30:
 * every index attribute of its record is replaced, whatever its (possibly
 * damaged) name; other records keep their other indexes. */
static bool is_index_attr(const struct ntfs_attr_header *a, const char *name)
{
	uint32_t t = le32toh(a->type);

	if (t != NTFS_AT_INDEX_ROOT && t != NTFS_AT_INDEX_ALLOCATION &&
	    t != NTFS_AT_BITMAP)
		return false;
	return !strcmp(name, "$I30") || ntfs_attr_has_name(a, name);
}

static int cmp_by_collation(const void *x, const void *y, void *upcase)
{
	const struct ntfs_fn_ref *a = *(const struct ntfs_fn_ref *const *)x;
	const struct ntfs_fn_ref *b = *(const struct ntfs_fn_ref *const *)y;
	int r = ntfs_collate_file_name(upcase, a->name, a->name_len, b->name,
				       b->name_len);

	if (r)
		return r;
	return a->recno < b->recno ? -1 : a->recno > b->recno;
}

/* The names pointing to D that belong to records in use, in collation
 * order, one entry per distinct name.  Returns the count or -1. */
static long gather(struct ntfs_check *c, uint64_t d, const uint16_t *upcase,
		   struct ntfs_fn_ref ***out)
{
	size_t lo = 0, hi = c->nnames, n = 0, k = 0;
	struct ntfs_fn_ref **v;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c->names[mid].parent < d)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (hi = lo; hi < c->nnames && c->names[hi].parent == d; hi++)
		n++;
	v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return -1;
	for (size_t i = lo; i < hi; i++) {
		uint64_t r = c->names[i].recno;

		if (r < c->vol.mft_records && bit_get(c->record_used, r))
			v[k++] = &c->names[i];
	}
	qsort_r(v, k, sizeof(*v), cmp_by_collation, (void *)upcase);
	/* the same name twice (two records claiming it, or one twice): the
	 * first keeps it, the other is renamed (pass3_dupnames.c) or, if
	 * that is refused, left out of the index */
	for (size_t i = 1, first = 0, renamed = 0; i <= k; i++) {
		if (i == k) {
			if (renamed)
				qsort_r(v, k, sizeof(*v), cmp_by_collation, (void *)upcase);
		} else if (ntfs_collate_file_name(upcase, v[first]->name,
						  v[first]->name_len, v[i]->name,
						  v[i]->name_len)) {
			first = i;
		} else if (!ntfs_rename_duplicate(c, d, upcase, v, (long)k, v[first],
						  v[i])) {
			renamed++;
		}
	}
	n = 0;
	for (size_t i = 0; i < k; i++)
		if (!n || ntfs_collate_file_name(upcase, v[n - 1]->name,
						 v[n - 1]->name_len, v[i]->name,
						 v[i]->name_len))
			v[n++] = v[i];
	*out = v;
	return (long)n;
}

/* First run of COUNT free clusters, or -1. */
static int64_t find_free(const struct ntfs_check *c, uint64_t count)
{
	uint64_t run = 0;

	/* on a truncated device: only clusters on it, and none at all when
	 * records lost past its end may own any of them */
	if (c->geo.lost_records)
		return -1;
	for (uint64_t l = 0; l < c->geo.dev_clusters; l++) {
		run = bit_get(c->cluster_used, l) ? 0 : run + 1;
		if (run == count)
			return (int64_t)(l + 1 - count);
	}
	return -1;
}

static void set_clusters(struct ntfs_check *c, const struct ntfs_run *runs,
			 long n, bool used)
{
	for (long i = 0; i < n; i++)
		for (uint64_t k = 0; runs[i].lcn >= 0 && k < runs[i].len; k++) {
			uint64_t l = (uint64_t)runs[i].lcn + k;

			if (used)
				bit_set(c->cluster_used, l);
			else
				bit_clear(c->cluster_used, l);
		}
}

struct plan {
	struct ntfs_ib_result res;
	struct ntfs_run *runs;		/* clusters of the new allocation */
	long nruns;
	bool reuse;			/* RUNS are the old allocation's */
	uint64_t clusters;
	uint8_t bitmap[4096];
	uint32_t bitmap_len;
};

/* Where NBLOCKS blocks go: the old allocation if big enough, else one new
 * free run.  Returns the mapping pairs length or -1. */
static int place(struct ntfs_check *c, struct plan *p,
		 const struct ntfs_run *old, long nold)
{
	uint32_t cs = c->vol.boot.g.cluster_size, bs = c->vol.boot.g.index_block_size;
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
	for (long i = 0; i < nold; i++)
		holes |= old[i].lcn >= 0 &&
			 (uint64_t)old[i].lcn + old[i].len > c->geo.dev_clusters;
	if (nold > 0 && !holes && have >= need &&
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
	lcn = find_free(c, need);
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

static int data_sizes(const struct ntfs_attr_header *a, void *arg)
{
	struct ntfs_data_sizes *d = arg;

	return !d->known && ntfs_data_sizes_of(a, d);
}

/* What the new index must look like: LARGE forces INDX blocks, SMALL
 * forbids them; ALONE: the allocation and bitmap attributes are in
 * another record than the root, so they take no room from it. */
struct shape {
	bool large, small, alone;
};

/* The entries of directory names V (N of them): each key repeats its
 * file's data sizes and says whether it names a directory. */
static struct ntfs_ib_entry *dir_entries(struct ntfs_check *c,
					 struct ntfs_fn_ref **v, long n)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct ntfs_ib_entry *e = calloc((size_t)n + 1, sizeof(*e));
	uint8_t *scratch = malloc(rs);

	if (!e || !scratch) {
		free(e);
		free(scratch);
		return NULL;
	}
	for (long i = 0; i < n; i++) {
		struct ntfs_data_sizes sizes = { 0 }, *d = &sizes;

		/* a file's entry repeats its data sizes */
		if (!bit_get(c->record_dir, v[i]->recno) &&
		    v[i]->recno >= NTFS_FILE_FIRST_USER)
			ntfs_file_foreach(c, v[i]->recno, scratch, data_sizes, d);
		/* a directory's entry says 0 bytes */
		if (d->known || (bit_get(c->record_dir, v[i]->recno) &&
				 v[i]->recno >= NTFS_FILE_FIRST_USER)) {
			uint64_t al = htole64(d->alloc), sz = htole64(d->size);

			memcpy(v[i]->fn + offsetof(struct ntfs_file_name, allocated_size), &al, 8);
			memcpy(v[i]->fn + offsetof(struct ntfs_file_name, data_size), &sz, 8);
		}
		/* the key says whether it names a directory */
		if (v[i]->recno >= NTFS_FILE_FIRST_USER) {
			uint32_t fa;

			memcpy(&fa, v[i]->fn + offsetof(struct ntfs_file_name, file_attributes), 4);
			fa = le32toh(fa);
			if (bit_get(c->record_dir, v[i]->recno))
				fa |= NTFS_FA_DUP_FILE_NAME_INDEX_PRESENT;
			else
				fa &= ~(uint32_t)NTFS_FA_DUP_FILE_NAME_INDEX_PRESENT;
			fa = htole32(fa);
			memcpy(v[i]->fn + offsetof(struct ntfs_file_name, file_attributes), &fa, 4);
		}
		e[i].mref = v[i]->recno | (uint64_t)v[i]->seq << 48;
		e[i].key = v[i]->fn;
		e[i].key_len = v[i]->fn_len;
	}
	free(scratch);
	return e;
}

/* The index of SPEC's type and collation from E (N entries, sorted) for a
 * record whose other attributes take OTHER bytes: the root as big as
 * fits, blocks placed (the old allocation OLD reused when big enough). */
static int build(struct ntfs_check *c, struct plan *p, uint32_t type,
		 uint32_t collation, const struct ntfs_ib_entry *e, long n,
		 uint32_t other, const struct ntfs_run *old, long nold,
		 const struct shape *sh, char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint32_t bs = c->vol.boot.g.index_block_size, cs = c->vol.boot.g.cluster_size;
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
		mplen = place(c, p, old, nold);
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

/* Add the next of P's attributes of index NAME (*K: 0 root, 1 allocation,
 * 2 bitmap) while they sort before A (NULL: all of them). */
static bool add_new(struct ntfs_check *c, struct ntfs_rec *r, const struct plan *p,
		    const char *name, int *k, const struct ntfs_attr_header *a)
{
	static const uint32_t types[3] = { NTFS_AT_INDEX_ROOT,
					   NTFS_AT_INDEX_ALLOCATION, NTFS_AT_BITMAP };
	uint32_t cs = c->vol.boot.g.cluster_size;
	uint64_t data = (uint64_t)p->res.nblocks * c->vol.boot.g.index_block_size;
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
			ok = ntfs_rec_add_resident(r, NTFS_AT_BITMAP, name, p->bitmap,
						   p->bitmap_len, 0) != NULL;
	}
	return ok;
}

/* Record REC with the attributes of its index NAME replaced by P's, each
 * where its type and name sort among the attributes kept. */
static int rewrite_record(struct ntfs_check *c, const uint8_t *rec,
			  uint8_t *out, const struct plan *p, const char *name,
			  char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	struct ntfs_rec r;
	int k = 0, more;
	bool ok = true;

	memcpy(out, rec, rs);
	ntfs_rec_reopen(&r, out, rs);
	ntfs_attr_cursor_init(&cur, rec);
	while (ok && (more = ntfs_attr_next(&cur, &a, why)) == 1) {
		if (is_index_attr(a, name))
			continue;
		ok = add_new(c, &r, p, name, &k, a) &&
		     ntfs_rec_add_raw(&r, a, le32toh(a->length)) != NULL;
	}
	if (ok && more < 0)
		return -1;
	if (ok)
		ok = add_new(c, &r, p, name, &k, NULL);
	if (!ok)
		snprintf(why, NTFS_WHY, "the index does not fit the record");
	return ok ? 0 : -1;
}

/* The clusters of the new index taken, the old ones not kept freed
 * (unless clusters are cross-linked: then nothing is freed), the new
 * blocks written. */
static int commit_blocks(struct ntfs_check *c, const struct plan *p,
			 const struct ntfs_run *old, long nold,
			 const struct ntfs_run *gone, long ngone, char *why)
{
	if (!c->crosslinked) {
		if (!p->reuse || !p->res.large)
			set_clusters(c, old, nold, false);
		set_clusters(c, gone, ngone, false);
	}
	if (p->res.large) {
		set_clusters(c, p->runs, p->nruns, true);
		if (ntfs_check_write_runs(c, p->runs, p->nruns, p->res.blocks,
					  (uint64_t)p->res.nblocks *
					  c->vol.boot.g.index_block_size)) {
			snprintf(why, NTFS_WHY, "writing the index blocks failed");
			return -1;
		}
	}
	return 0;
}

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
	if (ntfs_check_read_attr(c, rec, NTFS_AT_ATTRIBUTE_LIST, &list, &len,
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
			   const struct plan *p, uint16_t instance)
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
			  uint8_t *out, const struct plan *p, bool keep_alloc,
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
static int build_in_extents(struct ntfs_check *c, struct plan *p,
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

static int rebuild_listed(struct ntfs_check *c, uint64_t d, const uint8_t *base,
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
	struct shape sh;
	struct plan p;
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
				   !bit_get(c->record_used, at[k]) ||
				   ntfs_check_read_record(c, at[k], bufs[nrec]) ||
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
	n = gather(c, d, upcase, &v);
	if (n < 0) {
		snprintf(why, NTFS_WHY, "out of memory");
		goto out;
	}
	e = dir_entries(c, v, n);
	if (!e) {
		snprintf(why, NTFS_WHY, "out of memory");
		goto out;
	}
	if (more ? build_in_extents(c, &p, e, n,
				    rs > other + RESIDENT_HDR ? rs - other - RESIDENT_HDR : 0,
				    old, nold, old_size, bitmap_len, why) :
	    build(c, &p, NTFS_AT_FILE_NAME, NTFS_COLLATION_FILE_NAME, e, n,
		  other, old, nold, &sh, why))
		goto out;
	for (int j = 0; j < nrec; j++)
		if (rewrite_holder(c, bufs[j], outs[j], &p, more > 0, why))
			goto out;
	if (commit_blocks(c, &p, old, nold, gone, ngone, why))
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

int ntfs_write_index(struct ntfs_check *c, uint64_t d, const char *name,
		     uint32_t type, uint32_t collation,
		     const struct ntfs_ib_entry *e, long n, char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *rec = malloc(rs), *out = malloc(rs);
	struct ntfs_run *old = NULL, *gone = NULL;
	long nold = 0, ngone = 0;
	struct plan p;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	struct ntfs_mft_record m;
	const struct shape whole = { false, false, false };
	uint32_t other;
	int ret = -1, more;

	memset(&p, 0, sizeof(p));
	if (!rec || !out) {
		snprintf(why, NTFS_WHY, "out of memory");
		goto out;
	}
	if (ntfs_check_read_record(c, d, rec) ||
	    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		goto out;
	memcpy(&m, rec, sizeof(m));
	other = le16toh(m.attrs_offset) + 8;
	ntfs_attr_cursor_init(&cur, rec);
	while ((more = ntfs_attr_next(&cur, &a, why)) == 1) {
		uint32_t t = le32toh(a->type);

		if (t == NTFS_AT_ATTRIBUTE_LIST) {
			snprintf(why, NTFS_WHY, "its attributes are in several records");
			goto out;
		}
		if (!is_index_attr(a, name)) {
			other += le32toh(a->length);
			continue;
		}
		if (!a->non_resident)
			continue;
		if (t == NTFS_AT_INDEX_ALLOCATION && !old) {
			nold = ntfs_attr_runs(a, c->vol.boot.g.nr_clusters, &old, why);
			if (nold < 0) {
				old = NULL;
				nold = 0;
			}
		} else if (!gone) {
			ngone = ntfs_attr_runs(a, c->vol.boot.g.nr_clusters, &gone, why);
			if (ngone < 0) {
				gone = NULL;
				ngone = 0;
			}
		}
	}
	if (more < 0)
		goto out;
	if (build(c, &p, type, collation, e, n, other, old, nold, &whole, why) ||
	    rewrite_record(c, rec, out, &p, name, why))
		goto out;
	if (commit_blocks(c, &p, old, nold, gone, ngone, why))
		goto out;
	if (ntfs_check_write_record(c, d, out)) {
		snprintf(why, NTFS_WHY, "writing the record failed");
		goto out;
	}
	ret = 0;
out:
	ntfs_index_build_free(&p.res);
	free(p.runs);
	free(old);
	free(gone);
	free(rec);
	free(out);
	return ret;
}

int ntfs_rebuild_dir_index(struct ntfs_check *c, uint64_t d,
			   const uint16_t *upcase, char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *rec = malloc(rs);
	struct ntfs_fn_ref **v = NULL;
	struct ntfs_ib_entry *e = NULL;
	long n;
	int ret = -1;

	if (!rec) {
		snprintf(why, NTFS_WHY, "out of memory");
		goto out;
	}
	if (!upcase) {
		snprintf(why, NTFS_WHY, "$UpCase is unreadable");
		goto out;
	}
	if (ntfs_check_read_record(c, d, rec) ||
	    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		goto out;
	if (ntfs_attr_named(rec, NTFS_AT_ATTRIBUTE_LIST, "")) {
		ret = rebuild_listed(c, d, rec, upcase, why);
		goto out;
	}
	n = gather(c, d, upcase, &v);
	if (n < 0 || !(e = dir_entries(c, v, n))) {
		snprintf(why, NTFS_WHY, "out of memory");
		goto out;
	}
	ret = ntfs_write_index(c, d, "$I30", NTFS_AT_FILE_NAME,
			       NTFS_COLLATION_FILE_NAME, e, n, why);
out:
	free(e);
	free(v);
	free(rec);
	return ret;
}

/* Every $FILE_NAME that names a directory to rebuild, from one pass over
 * all records in use (extension records counted for their base). */
static int collect_names(struct ntfs_check *c, uint8_t *rec, uint8_t *base)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint64_t last_p = UINT64_MAX;
	uint16_t last_seq = 0;
	char why[NTFS_WHY];

	for (uint64_t r = 0; r < c->vol.mft_records; r++) {
		struct ntfs_attr_cursor cur;
		const struct ntfs_attr_header *a;
		struct ntfs_mft_record m;
		uint64_t owner;
		uint16_t seq;
		bool dirty = false;

		if (!bit_get(c->record_used, r) || bit_get(c->ext_bad, r) ||
		    ntfs_check_read_record(c, r, rec) ||
		    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
			continue;
		memcpy(&m, rec, sizeof(m));
		owner = le64toh(m.base_mft_record) & 0xffffffffffffULL;
		seq = le16toh(m.sequence_number);
		if (!owner)
			owner = r;
		if (owner >= c->vol.mft_records || !bit_get(c->record_used, owner))
			continue;
		if (owner != r) {
			/* the entry names the base record, with its sequence */
			if (ntfs_check_read_record(c, owner, base))
				continue;
			memcpy(&m, base, sizeof(m));
			seq = le16toh(m.sequence_number);
			if (ntfs_check_read_record(c, r, rec) ||
			    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
				continue;
		}
		ntfs_attr_cursor_init(&cur, rec);
		while (ntfs_attr_next(&cur, &a, why) == 1) {
			struct ntfs_file_name fn;
			struct ntfs_fn_ref *n;
			const uint8_t *v;
			uint32_t len;
			uint64_t p;

			if (le32toh(a->type) != NTFS_AT_FILE_NAME || a->non_resident)
				continue;
			v = ntfs_attr_value(a, &len);
			if (len < sizeof(fn))
				continue;
			memcpy(&fn, v, sizeof(fn));
			p = le64toh(fn.parent_directory) & 0xffffffffffffULL;
			if (!fn.name_length || sizeof(fn) + 2u * fn.name_length > len ||
			    p >= c->vol.mft_records || !bit_get(c->rebuild, p))
				continue;
			/* a parent reference with a stale sequence number is
			 * refreshed in the file and so in its key */
			if (p != last_p && !ntfs_check_read_record(c, p, base)) {
				memcpy(&m, base, sizeof(m));
				last_p = p;
				last_seq = le16toh(m.sequence_number);
			}
			if (p == last_p &&
			    (le64toh(fn.parent_directory) >> 48 || owner >= NTFS_FILE_FIRST_USER) &&
			    le64toh(fn.parent_directory) >> 48 != last_seq) {
				uint64_t ref = htole64(p | (uint64_t)last_seq << 48);

				memcpy((uint8_t *)v, &ref, 8);
				dirty = true;
			}
			if (c->nnames == c->cap_names) {
				size_t cap = c->cap_names ? c->cap_names * 2 : 256;
				struct ntfs_fn_ref *g = realloc(c->names, cap * sizeof(*g));

				if (!g)
					return -ENOMEM;
				c->names = g;
				c->cap_names = cap;
			}
			n = &c->names[c->nnames];
			/* the name in host order, then the value (the key) */
			n->fn_len = (uint16_t)(sizeof(fn) + 2u * fn.name_length);
			n->name = malloc(2u * fn.name_length + n->fn_len);
			if (!n->name)
				return -ENOMEM;
			n->fn = (uint8_t *)(n->name + fn.name_length);
			memcpy(n->fn, v, n->fn_len);
			for (unsigned int i = 0; i < fn.name_length; i++)
				n->name[i] = (uint16_t)(v[sizeof(fn) + 2 * i] |
							v[sizeof(fn) + 2 * i + 1] << 8);
			n->recno = owner;
			n->holder = r;
			n->seq = seq;
			n->parent = p;
			n->name_len = fn.name_length;
			c->nnames++;
		}
		if (dirty && ntfs_check_write_record(c, r, rec))
			fsf_fix_failed(&c->fix);
	}
	return 0;
}

static int cmp_parent(const void *x, const void *y)
{
	const struct ntfs_fn_ref *a = x, *b = y;

	return a->parent < b->parent ? -1 : a->parent > b->parent;
}

int ntfs_rebuild_indexes(struct ntfs_check *c, const uint16_t *upcase)
{
	uint8_t *rec = malloc(c->vol.boot.g.mft_record_size);
	uint8_t *base = malloc(c->vol.boot.g.mft_record_size);
	int ret = rec && base ? collect_names(c, rec, base) : -ENOMEM;

	free(rec);
	free(base);
	if (ret)
		return ret;
	if (c->nnames)
		qsort(c->names, c->nnames, sizeof(*c->names), cmp_parent);
	for (uint64_t d = 0; d < c->vol.mft_records; d++) {
		char why[NTFS_WHY], obj[1200];

		if (!bit_get(c->rebuild, d) || !ntfs_rebuild_dir_index(c, d, upcase, why))
			continue;
		ntfs_object_name(c, "directory", d, obj, sizeof(obj));
		/* the rebuilds promised for it did not happen */
		fsf_fix_failed_object(&c->fix, obj, FSF_PROMPT_REBUILD);
		fsf_fix_ask(&c->fix, &PR_INDEX_REBUILD_FAILED, obj, why);
	}
	return 0;
}
