// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 3 repair: rebuild a directory's $I30 index from the $FILE_NAME
 * attributes that name the directory as their parent (collected by pass
 * 1).  The names are sorted by $UpCase collation, built into a fresh tree
 * (libntfs/index_build.c), written into the directory's old index clusters
 * when they are enough or else into newly allocated ones, and the three
 * $I30 attributes of the directory record are replaced; every other
 * attribute is kept byte for byte.  Directories whose attributes spill
 * into extension records ($ATTRIBUTE_LIST) are not rebuilt.
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

/* A directory has one index, $I30: every index attribute of its record
 * is replaced, whatever its (possibly damaged) name. */
static bool is_index_attr(const struct ntfs_attr_header *a)
{
	uint32_t t = le32toh(a->type);

	return t == NTFS_AT_INDEX_ROOT || t == NTFS_AT_INDEX_ALLOCATION ||
	       t == NTFS_AT_BITMAP;
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

	for (uint64_t l = 0; l < c->vol.boot.g.nr_clusters; l++) {
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

static int build(struct ntfs_check *c, struct plan *p,
		 struct ntfs_fn_ref **v, long n, uint32_t other,
		 const struct ntfs_run *old, long nold, char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint32_t bs = c->vol.boot.g.index_block_size, cs = c->vol.boot.g.cluster_size;
	struct ntfs_ib_entry *e = malloc(((size_t)n + 1) * sizeof(*e));
	uint8_t *scratch = malloc(rs);
	uint32_t room = rs > other + RESIDENT_HDR ? rs - other - RESIDENT_HDR : 0;
	int ret = -1;

	if (!e) {
		snprintf(why, NTFS_WHY, "out of memory");
		return -1;
	}
	for (long i = 0; i < n; i++) {
		struct ntfs_data_sizes sizes = { 0 }, *d = &sizes;

		/* a file's entry repeats its data sizes */
		if (!bit_get(c->record_dir, v[i]->recno) &&
		    v[i]->recno >= NTFS_FILE_FIRST_USER && scratch)
			ntfs_file_foreach(c, v[i]->recno, scratch, data_sizes, d);
		if (d->known) {
			uint64_t al = htole64(d->alloc), sz = htole64(d->size);

			memcpy(v[i]->fn + offsetof(struct ntfs_file_name, allocated_size), &al, 8);
			memcpy(v[i]->fn + offsetof(struct ntfs_file_name, data_size), &sz, 8);
		}
		e[i].mref = v[i]->recno | (uint64_t)v[i]->seq << 48;
		e[i].key = v[i]->fn;
		e[i].key_len = v[i]->fn_len;
	}
	/* as small as can be first; a large index also needs room for its
	 * allocation and bitmap attributes, so shrink the root until all fit */
	for (int tries = 0; tries < 8; tries++) {
		uint32_t extra;
		int mplen;

		ntfs_index_build_free(&p->res);
		if (ntfs_index_build(e, (size_t)n, room, bs, cs, &p->res)) {
			snprintf(why, NTFS_WHY, "%u-byte index blocks cannot hold the entries in a %u-byte record",
				 bs, rs);
			goto out;
		}
		if (!p->res.large) {
			ret = 0;
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
		extra = (uint32_t)ntfs_align(NONRESIDENT_HDR + (uint32_t)mplen, 8) +
			RESIDENT_HDR + p->bitmap_len;
		if (other + RESIDENT_HDR + p->res.root_len + extra <= rs) {
			ret = 0;
			goto out;
		}
		room = rs > other + RESIDENT_HDR + extra ? rs - other - RESIDENT_HDR - extra : 0;
	}
	snprintf(why, NTFS_WHY, "the index does not fit the directory record");
out:
	free(e);
	free(scratch);
	return ret;
}

/* The directory record REC with its $I30 attributes replaced by P's. */
static int rewrite_record(struct ntfs_check *c, const uint8_t *rec,
			  uint8_t *out, const struct plan *p, char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint32_t bs = c->vol.boot.g.index_block_size, cs = c->vol.boot.g.cluster_size;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	struct ntfs_rec r;
	bool added = false;
	int ok = 1;

	memcpy(out, rec, rs);
	ntfs_rec_reopen(&r, out, rs);
	ntfs_attr_cursor_init(&cur, rec);
	for (;;) {
		int more = ntfs_attr_next(&cur, &a, why);

		if (more < 0)
			return -1;
		if (!added && (!more || le32toh(a->type) > NTFS_AT_INDEX_ROOT)) {
			uint64_t data = (uint64_t)p->res.nblocks * bs;

			ok = ntfs_rec_add_resident(&r, NTFS_AT_INDEX_ROOT, "$I30",
						   p->res.root, p->res.root_len, 0) != NULL;
			if (ok && p->res.large)
				ok = !ntfs_rec_add_nonresident(&r, NTFS_AT_INDEX_ALLOCATION,
							       "$I30", p->runs,
							       (size_t)p->nruns,
							       p->clusters * cs, data, data) &&
				     ntfs_rec_add_resident(&r, NTFS_AT_BITMAP, "$I30",
							   p->bitmap, p->bitmap_len, 0);
			added = true;
		}
		if (!more || !ok)
			break;
		if (!is_index_attr(a))
			ok = ntfs_rec_add_raw(&r, a, le32toh(a->length)) != NULL;
	}
	if (!ok)
		snprintf(why, NTFS_WHY, "the index does not fit the directory record");
	return ok ? 0 : -1;
}

int ntfs_rebuild_dir_index(struct ntfs_check *c, uint64_t d,
			   const uint16_t *upcase, char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *rec = malloc(rs), *out = malloc(rs);
	struct ntfs_fn_ref **v = NULL;
	struct ntfs_run *old = NULL, *gone = NULL;
	long nold = 0, ngone = 0, n;
	struct plan p;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	struct ntfs_mft_record m;
	uint32_t other;
	int ret = -1, more;

	memset(&p, 0, sizeof(p));
	if (!rec || !out) {
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
	memcpy(&m, rec, sizeof(m));
	other = le16toh(m.attrs_offset) + 8;
	ntfs_attr_cursor_init(&cur, rec);
	while ((more = ntfs_attr_next(&cur, &a, why)) == 1) {
		uint32_t t = le32toh(a->type);

		if (t == NTFS_AT_ATTRIBUTE_LIST) {
			snprintf(why, NTFS_WHY, "its attributes continue in other records");
			goto out;
		}
		if (!is_index_attr(a)) {
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
	n = gather(c, d, upcase, &v);
	if (n < 0) {
		snprintf(why, NTFS_WHY, "out of memory");
		goto out;
	}
	if (build(c, &p, v, n, other, old, nold, why) ||
	    rewrite_record(c, rec, out, &p, why))
		goto out;
	/* clusters: what the old index had and the new one does not use is
	 * freed, unless clusters are cross-linked (then nothing is freed) */
	if (!c->crosslinked) {
		if (!p.reuse || !p.res.large)
			set_clusters(c, old, nold, false);
		set_clusters(c, gone, ngone, false);
	}
	if (p.res.large) {
		set_clusters(c, p.runs, p.nruns, true);
		if (ntfs_check_write_runs(c, p.runs, p.nruns, p.res.blocks,
					  (uint64_t)p.res.nblocks *
					  c->vol.boot.g.index_block_size)) {
			snprintf(why, NTFS_WHY, "writing the index blocks failed");
			goto out;
		}
	}
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
	free(v);
	free(rec);
	free(out);
	return ret;
}

/* Every $FILE_NAME that names a directory to rebuild, from one pass over
 * all records in use (extension records counted for their base). */
static int collect_names(struct ntfs_check *c, uint8_t *rec, uint8_t *base)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	char why[NTFS_WHY];

	for (uint64_t r = 0; r < c->vol.mft_records; r++) {
		struct ntfs_attr_cursor cur;
		const struct ntfs_attr_header *a;
		struct ntfs_mft_record m;
		uint64_t owner;
		uint16_t seq;

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
		fsf_fix_ask(&c->fix, &PR_INDEX_REBUILD_FAILED, obj, why);
	}
	return 0;
}
