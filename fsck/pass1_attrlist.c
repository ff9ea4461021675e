// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 1, after every record was read: each base record with an
 * $ATTRIBUTE_LIST against the records that really hold its attributes.
 * The list a file should have is made from its base record and the
 * extension records that point back at it (base reference in their
 * header; libntfs/attrlist.c); a list that is malformed or says otherwise
 * is rebuilt from them.  An extension record the list does not name is
 * taken in when none of its attribute extents is already held elsewhere
 * (the list lost its entries; names may be many), and left out otherwise (a stale copy, freed by
 * ntfs_check_extensions), or when another base's list (as found, before
 * any is rebuilt: the order of the bases does not decide) names it with
 * its sequence number and it holds what that list says: a damaged base
 * reference, given back to that base below, not a lost entry.  A record the list names whose header names
 * another base (or none) but which holds exactly the attributes the list
 * says, and which its claimed base does not list, gets its base reference
 * back.  Extents lost with their records leave VCNs no extent maps: a
 * gap between extents, or after the last one (the sizes say more), becomes
 * a hole where holes are allowed and the record has room; a lost tail
 * otherwise cuts the sizes to what is mapped.  Then the file's link count
 * is checked against the names of all its records.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/attrlist.h"
#include "ntfs/index_read.h"
#include "ntfs/repair.h"
#include "ntfs_check.h"
#include "ntfs_problems.h"

#define MASK48 0xffffffffffffULL
#define LIST_MAX (1u << 20)		/* a list value we are ready to read */

struct lctx {
	struct ntfs_check *c;
	uint32_t rs;
	uint8_t *rec, *ext;
	struct ntfs_ext_ref *by_base;	/* c->exts sorted by base (a copy:
					 * reclaimed records grow c->exts) */
	size_t nby;
	struct ntfs_ext_ref *named;	/* (record, base whose list names it),
					 * every list as found, by record */
	size_t nnamed;
	bool assume_list;		/* -n: the file's records assumed as
					 * a declined hole leaves them; its
					 * rebuilt list is assumed too */
};

static int cmp_base(const void *x, const void *y)
{
	const struct ntfs_ext_ref *a = x, *b = y;

	if (a->base != b->base)
		return a->base < b->base ? -1 : 1;
	return a->recno < b->recno ? -1 : a->recno > b->recno;
}

static int load(struct lctx *l, uint64_t r, uint8_t *buf)
{
	char why[NTFS_WHY];

	if (r >= l->c->vol.mft_records || ntfs_vol_read_record(&l->c->vol, r, buf) ||
	    ntfs_record_check(buf, l->rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		return -1;
	return 0;
}

static uint16_t seq_of(const uint8_t *rec)
{
	struct ntfs_mft_record m;

	memcpy(&m, rec, sizeof(m));
	return le16toh(m.sequence_number);
}

static uint64_t base_of(const uint8_t *rec)
{
	struct ntfs_mft_record m;

	memcpy(&m, rec, sizeof(m));
	return le64toh(m.base_mft_record) & MASK48;
}

/* The list attribute of REC: its offset, or 0. */
static uint32_t list_attr(const uint8_t *rec)
{
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];

	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1)
		if (le32toh(a->type) == NTFS_AT_ATTRIBUTE_LIST)
			return (uint32_t)((const uint8_t *)a - rec);
	return 0;
}

/* The list's value (malloc'ed), or NULL with WHY. */
static uint8_t *read_list(struct ntfs_check *c, const uint8_t *rec,
			  uint32_t at, uint32_t *len, char *why)
{
	const struct ntfs_attr_header *a = (const void *)(rec + at);
	struct ntfs_attr_nonresident n;
	struct ntfs_run *runs = NULL;
	uint8_t *v;
	long nr;

	if (!a->non_resident) {
		const void *val = ntfs_attr_value(a, len);

		v = malloc(*len ? *len : 1);
		if (v)
			memcpy(v, val, *len);
		else
			snprintf(why, NTFS_WHY, "out of memory");
		return v;
	}
	memcpy(&n, a, sizeof(n));
	if ((uint64_t)le64toh((uint64_t)n.data_size) > LIST_MAX) {
		snprintf(why, NTFS_WHY, "its value says %llu bytes",
			 (unsigned long long)le64toh((uint64_t)n.data_size));
		return NULL;
	}
	*len = (uint32_t)le64toh((uint64_t)n.data_size);
	nr = ntfs_attr_runs(a, c->vol.boot.g.nr_clusters, &runs, why);
	if (nr < 0)
		return NULL;
	v = calloc(1, *len ? *len : 1);
	if (!v || ntfs_vol_runs_pread(&c->vol, runs, nr, 0, *len, v)) {
		snprintf(why, NTFS_WHY, "its value is unreadable");
		free(v);
		v = NULL;
	}
	free(runs);
	return v;
}

/* Does list V name record R (with sequence SEQ, or none)? */
static bool names_record(const uint8_t *v, uint32_t len, uint64_t r, uint16_t seq)
{
	struct ntfs_al_entry e;
	uint32_t off = 0;
	char why[NTFS_WHY];

	while (v && ntfs_al_next(v, len, &off, &e, why) == 1)
		if ((e.mref & MASK48) == r && (!(e.mref >> 48) || e.mref >> 48 == seq))
			return true;
	return false;
}

/* The records a list names, sorted (record number, then sequence): a
 * list of thousands of extents is asked once for each of its extension
 * records, and walking it each time was quadratic. */
struct named_set {
	uint64_t *v;
	size_t n;
};

static uint64_t ref_key(uint64_t mref)
{
	return (mref & MASK48) << 16 | mref >> 48;
}

static int cmp_ref(const void *x, const void *y)
{
	uint64_t a = ref_key(*(const uint64_t *)x), b = ref_key(*(const uint64_t *)y);

	return a < b ? -1 : a > b;
}

/* NULL set (no memory): names_in() answers from the list itself */
static void named_set_of(struct named_set *s, const uint8_t *v, uint32_t len)
{
	struct ntfs_al_entry e;
	uint32_t off = 0;
	size_t cap = 0;
	char why[NTFS_WHY];

	s->v = NULL;
	s->n = 0;
	while (v && ntfs_al_next(v, len, &off, &e, why) == 1) {
		if (s->n == cap) {
			uint64_t *g = realloc(s->v, (cap = cap ? 2 * cap : 64) * sizeof(*g));

			if (!g) {
				free(s->v);
				s->v = NULL;
				return;
			}
			s->v = g;
		}
		s->v[s->n++] = e.mref;
	}
	if (s->v)
		qsort(s->v, s->n, sizeof(*s->v), cmp_ref);
}

/* names_record() of the list S was made from */
static bool names_in(const struct named_set *s, const uint8_t *v, uint32_t len,
		     uint64_t r, uint16_t seq)
{
	size_t lo = 0, hi = s->n;

	if (!s->v)
		return names_record(v, len, r, seq);
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (ref_key(s->v[mid]) < (r << 16))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < s->n && (s->v[lo] & MASK48) == r; lo++)
		if (!(s->v[lo] >> 48) || s->v[lo] >> 48 == seq)
			return true;
	return false;
}

/* Does base BASE (record number) list record X? */
static bool base_lists(struct lctx *l, uint64_t base, uint64_t x, uint16_t xseq)
{
	uint8_t *v;
	uint32_t at, len = 0;
	char why[NTFS_WHY];
	bool yes;

	if (!cset_get(&l->c->record_used, base) || load(l, base, l->ext) ||
	    !ntfs_record_is_base(l->ext) || !(at = list_attr(l->ext)))
		return false;
	v = read_list(l->c, l->ext, at, &len, why);
	yes = names_record(v, len, x, xseq);
	free(v);
	return yes;
}

/* Every entry of V naming X matches an attribute of X (type, instance and
 * lowest VCN), and there is at least one. */
static bool holds_listed(const uint8_t *v, uint32_t len, uint64_t x,
			 const uint8_t *xrec)
{
	struct ntfs_al_build hb = { 0 };
	struct ntfs_al_entry e;
	uint32_t off = 0;
	char why[NTFS_WHY];
	int n = 0;
	bool ok = !ntfs_al_add_record(&hb, xrec, 0);

	while (ok && ntfs_al_next(v, len, &off, &e, why) == 1) {
		bool hit = false;

		if ((e.mref & MASK48) != x)
			continue;
		for (size_t i = 0; i < hb.n && !hit; i++)
			hit = hb.v[i].type == e.type && hb.v[i].instance == e.instance &&
			      hb.v[i].lowest_vcn == e.lowest_vcn;
		ok = hit;
		n++;
	}
	ntfs_al_build_free(&hb);
	return ok && n;
}

static int cmp_recno(const void *x, const void *y)
{
	const struct ntfs_ext_ref *a = x, *b = y;

	if (a->recno != b->recno)
		return a->recno < b->recno ? -1 : 1;
	return a->base < b->base ? -1 : a->base > b->base;
}

/* Which records each base's list names, before any list is rebuilt:
 * l->named, sorted by record.  Without it (no memory) nothing is
 * known to be named elsewhere. */
static void collect_named(struct lctx *l)
{
	struct ntfs_check *c = l->c;
	uint8_t *rec = malloc(l->rs);
	size_t cap = 0;

	for (size_t i = 0; rec && i < c->nlbases; i++) {
		uint64_t b = c->lbases[i], last = UINT64_MAX;
		struct ntfs_al_entry e;
		uint32_t at, len = 0, off = 0;
		char why[NTFS_WHY];
		uint8_t *v;

		if (load(l, b, rec) || !ntfs_record_is_base(rec) || !(at = list_attr(rec)) ||
		    !(v = read_list(c, rec, at, &len, why)))
			continue;
		while (ntfs_al_next(v, len, &off, &e, why) == 1) {
			uint64_t x = e.mref & MASK48;

			if (x == b || x == last)
				continue;
			last = x;
			if (l->nnamed == cap) {
				struct ntfs_ext_ref *g;

				cap = cap ? cap * 2 : 64;
				g = realloc(l->named, cap * sizeof(*g));
				if (!g) {
					free(v);
					goto out;
				}
				l->named = g;
			}
			l->named[l->nnamed].recno = x;
			l->named[l->nnamed++].base = b;
		}
		free(v);
	}
	free(rec);
	if (l->nnamed)
		qsort(l->named, l->nnamed, sizeof(*l->named), cmp_recno);
	return;
out:
	free(rec);
	free(l->named);
	l->named = NULL;
	l->nnamed = 0;
}

static bool names_record_past_end(const struct lctx *l, const uint8_t *v, uint32_t len);

/*
 * Extension record X (XREC), which base B's list does not name, is named
 * (with its sequence number) by the list of another base that holds what
 * that list says: it is that base's, whatever its own base reference
 * says (reclaim gives the reference back there), not B's to take.  Known
 * from the lists as found, so that the order the bases are checked in
 * does not decide.
 */
static bool listed_elsewhere(struct lctx *l, uint64_t b, uint64_t x,
			     const uint8_t *xrec)
{
	struct ntfs_check *c = l->c;
	struct ntfs_ext_ref key = { x, 0 };
	size_t lo = 0, hi = l->nnamed;
	uint8_t *rec;
	bool yes = false;

	if (x < NTFS_FILE_FIRST_USER || !l->nnamed)
		return false;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (cmp_recno(&l->named[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == l->nnamed || l->named[lo].recno != x || !(rec = malloc(l->rs)))
		return false;
	for (; !yes && lo < l->nnamed && l->named[lo].recno == x; lo++) {
		uint64_t o = l->named[lo].base;
		uint32_t at, len = 0;
		char why[NTFS_WHY];
		uint8_t *v;

		if (o == b || !cset_get(&c->record_used, o) || load(l, o, rec) ||
		    !ntfs_record_is_base(rec) || !(at = list_attr(rec)) ||
		    !(v = read_list(c, rec, at, &len, why)))
			continue;
		yes = len && names_record(v, len, x, seq_of(xrec)) &&
		      holds_listed(v, len, x, xrec) && !names_record_past_end(l, v, len);
		free(v);
	}
	free(rec);
	return yes;
}

static void set_ext_base(struct ntfs_check *c, uint64_t x, uint64_t b)
{
	for (size_t i = 0; i < c->nexts; i++)
		if (c->exts[i].recno == x) {
			c->exts[i].base = b;
			return;
		}
	if (c->nexts == c->cap_exts) {
		size_t cap = c->cap_exts ? c->cap_exts * 2 : 64;
		struct ntfs_ext_ref *g = realloc(c->exts, cap * sizeof(*g));

		if (!g)
			return;
		c->exts = g;
		c->cap_exts = cap;
	}
	c->exts[c->nexts].recno = x;
	c->exts[c->nexts++].base = b;
}

/* Claim the clusters of REC's non-resident attributes, unless one of
 * them is taken already (then nothing is claimed: false). */
static bool claim_clusters(struct ntfs_check *c, const uint8_t *rec)
{
	for (int pass = 0; pass < 2; pass++) {
		struct ntfs_attr_cursor cur;
		const struct ntfs_attr_header *a;
		char why[NTFS_WHY];

		ntfs_attr_cursor_init(&cur, rec);
		while (ntfs_attr_next(&cur, &a, why) == 1) {
			struct ntfs_run *runs;
			long n;

			if (!a->non_resident)
				continue;
			n = ntfs_attr_runs(a, c->vol.boot.g.nr_clusters, &runs, why);
			if (n < 0)
				return false;
			for (long i = 0; i < n; i++)
				for (uint64_t k = 0; runs[i].lcn >= 0 && k < runs[i].len; k++) {
					uint64_t lcn = (uint64_t)runs[i].lcn + k;

					if (!pass && cset_get(&c->cluster_used, lcn)) {
						free(runs);
						return false;
					}
					if (pass)
						cset_set(&c->cluster_used, lcn);
				}
			free(runs);
		}
	}
	return true;
}

/* Record X, which list V of base B names (as MREF), is marked free but
 * still names B and holds what the list says: it is put back in use
 * (asked) when its clusters are free.  -n answers no but goes on as if
 * it were back (in memory only), so that it reports what -a does, not
 * the consequences of a revival -a makes (its extents lost, the list
 * wrong, its clusters free). */
static void revive(struct lctx *l, uint64_t b, const uint8_t *v, uint32_t len,
		   uint64_t x, uint64_t mref, const char *obj,
		   struct ntfs_al_build *nb)
{
	struct ntfs_check *c = l->c;
	struct ntfs_mft_record m;
	char xobj[48], why[NTFS_WHY];
	bool yes;

	if (rare_get(c->record_lost, x) || load(l, x, l->rec) ||
	    !ntfs_record_listed(l->rec, b, mref, why) || !holds_listed(v, len, x, l->rec))
		return;
	snprintf(xobj, sizeof(xobj), "MFT record %llu", (unsigned long long)x);
	yes = fsf_fix_ask(&c->fix, &PR_EXTENSION_FREED, xobj, obj);
	if ((!yes && c->fix.mode != FSF_MODE_NO) || !claim_clusters(c, l->rec))
		return;
	memcpy(&m, l->rec, sizeof(m));
	m.flags = htole16(le16toh(m.flags) | NTFS_MFT_IN_USE);
	memcpy(l->rec, &m, sizeof(m));
	if (yes && ntfs_check_write_record(c, x, l->rec)) {
		fsf_fix_failed(&c->fix);
		return;
	}
	cset_set(&c->record_used, x);
	/* pass 1 did not count its names, nor note it for pass 2 */
	rset_set(&c->uncounted, x);
	if (rset_set(&c->not_plain, x))
		c->summary_ok = false;
	set_ext_base(c, x, b);
	ntfs_al_add_record(nb, l->rec, NTFS_MREF(x, seq_of(l->rec)));
}

/*
 * The records list V names that do not point back at base B: those that
 * hold what the list says and that nothing else claims get their base
 * reference back (asked) and join the build.
 */
static void reclaim(struct lctx *l, uint64_t b, uint16_t bseq, const uint8_t *v,
		    uint32_t len, struct ntfs_al_build *nb, const char *obj)
{
	struct ntfs_check *c = l->c;
	struct ntfs_al_entry e;
	uint32_t off = 0;
	uint64_t last = UINT64_MAX;
	char why[NTFS_WHY];

	while (ntfs_al_next(v, len, &off, &e, why) == 1) {
		uint64_t x = e.mref & MASK48, claimed;
		struct ntfs_mft_record m;
		char xobj[48];

		if (x == b || x == last || x < NTFS_FILE_FIRST_USER ||
		    x >= c->vol.mft_records)
			continue;
		last = x;
		if (!cset_get(&c->record_used, x)) {
			revive(l, b, v, len, x, e.mref, obj, nb);
			continue;
		}
		if (load(l, x, l->rec))
			continue;
		claimed = base_of(l->rec);
		if ((!ntfs_record_is_base(l->rec) && claimed == b) || (e.mref >> 48 && e.mref >> 48 != seq_of(l->rec)))
			continue;
		if (!holds_listed(v, len, x, l->rec))
			continue;
		if (!ntfs_record_is_base(l->rec) ? base_lists(l, claimed, x, seq_of(l->rec)) :
		    ntfs_attr_find(l->rec, NTFS_AT_STANDARD_INFORMATION) != NULL)
			continue;	/* it is someone else's, or a file */
		if (load(l, x, l->rec))
			continue;
		snprintf(xobj, sizeof(xobj), "MFT record %llu", (unsigned long long)x);
		if (!fsf_fix_ask(&c->fix, &PR_EXTENSION_BASE, xobj,
				 (unsigned long long)claimed, obj))
			continue;
		memcpy(&m, l->rec, sizeof(m));
		m.base_mft_record = htole64(NTFS_MREF(b, bseq));
		memcpy(l->rec, &m, sizeof(m));
		if (ntfs_check_write_record(c, x, l->rec)) {
			fsf_fix_failed(&c->fix);
			continue;
		}
		/* its names are the file's now: counted again in pass 3 */
		c->names_inexact = true;
		rset_clear(&c->record_dir, x);
		set_ext_base(c, x, b);
		ntfs_al_add_record(nb, l->rec, NTFS_MREF(x, seq_of(l->rec)));
	}
}

/* Write list NV (NLEN bytes) into base record REC (record B) at AT. */
static int write_list(struct lctx *l, uint64_t b, uint8_t *rec, uint32_t at,
		      const uint8_t *nv, uint32_t nlen, char *why)
{
	struct ntfs_check *c = l->c;
	struct ntfs_attr_header *a = (void *)(rec + at);
	struct ntfs_attr_nonresident n;
	struct ntfs_run *runs = NULL;
	uint64_t old;
	uint8_t *buf;
	long nr;
	int ret;

	if (!a->non_resident) {
		if (ntfs_rec_set_value(rec, l->rs, at, nv, nlen)) {
			snprintf(why, NTFS_WHY, "the new list does not fit the base record");
			return -1;
		}
		return ntfs_check_write_record(c, b, rec);
	}
	memcpy(&n, a, sizeof(n));
	nr = ntfs_attr_runs(a, c->vol.boot.g.nr_clusters, &runs, why);
	if (nr < 0)
		return -1;
	if (nlen > (uint64_t)le64toh((uint64_t)n.allocated_size)) {
		free(runs);
		snprintf(why, NTFS_WHY, "the new list is larger than the clusters of the old one");
		return -1;
	}
	old = le64toh((uint64_t)n.data_size);
	if (old > le64toh((uint64_t)n.allocated_size))
		old = le64toh((uint64_t)n.allocated_size);
	buf = calloc(1, old > nlen ? old : nlen);
	if (!buf) {
		free(runs);
		return -1;
	}
	memcpy(buf, nv, nlen);
	ret = ntfs_vol_write_runs(&c->vol, runs, nr, buf, old > nlen ? old : nlen);
	free(buf);
	free(runs);
	if (ret)
		return ret;
	n.data_size = n.initialized_size = (int64_t)htole64(nlen);
	memcpy(a, &n, sizeof(n));
	return ntfs_check_write_record(c, b, rec);
}

/* The attribute (TYPE, NAME of NAME_LEN units, lowest VCN LO) of record
 * REC: its offset, or 0. */
static uint32_t extent_in(const uint8_t *rec, uint32_t type, const uint8_t *name,
			  uint8_t name_len, int64_t lo)
{
	const struct ntfs_attr_header *a = ntfs_attr_extent_u16(rec, type, name,
								name_len, lo);

	return a ? (uint32_t)((const uint8_t *)a - rec) : 0;
}

/* Is Q an extent of the attribute E names (type and name)? */
static bool same_attr(const struct ntfs_al_entry *q, const struct ntfs_al_entry *e)
{
	return q->type == e->type && q->name_len == e->name_len &&
	       (!e->name_len || !memcmp(q->name, e->name, 2u * e->name_len));
}

/* The records a sparse conversion edits: the base and each extent's. */
struct edit_set {
	uint64_t no[64];
	uint8_t *buf[64];
	size_t n;
};

static uint8_t *edit_rec(struct lctx *l, struct edit_set *s, uint64_t r)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->no[i] == r)
			return s->buf[i];
	if (s->n == 64 || !(s->buf[s->n] = malloc(l->rs)))
		return NULL;
	if (load(l, r, s->buf[s->n])) {
		free(s->buf[s->n]);
		return NULL;
	}
	s->no[s->n] = r;
	return s->buf[s->n++];
}

/* The data size of a $DATA whose first extent, which held its sizes, was
 * lost, ALLOC bytes now mapped (the last extent's end, UNIT bytes a
 * cluster or compression unit): the best evidence that lies in the last
 * unit of them (a size past them, or a unit short, would say bytes the
 * runs no longer map, or cut mapped ones): the size the parent
 * directory's index entry naming the file says (the fresher: writers
 * update it with the file, not the record's own $FILE_NAME), then the
 * base record REC's (number B) $FILE_NAME, else ALLOC.  The largest of
 * a kind wins (Windows updates only the entry of the link opened: a
 * smaller one may be stale, a larger one never cuts what was written).
 * A NAMED stream takes ALLOC: index entries and $FILE_NAME hold the
 * size of the unnamed $DATA. */
static uint64_t head_data_size(struct ntfs_vol *v, const uint8_t *rec,
			       uint64_t b, uint64_t alloc, uint32_t unit,
			       bool named)
{
	uint64_t best = 0;
	bool found = false;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	struct ntfs_mft_record m;
	struct ntfs_file_name fn;
	char why[NTFS_WHY];
	uint64_t d, mref;

	memcpy(&m, rec, sizeof(m));
	mref = b | (uint64_t)le16toh(m.sequence_number) << 48;
	for (int pass = 0; !named && pass < 2; pass++) {
		ntfs_attr_cursor_init(&cur, rec);
		while (ntfs_attr_next(&cur, &a, why) == 1) {
			if (!ntfs_file_name_of(a, &fn))
				continue;
			d = le64toh((uint64_t)fn.data_size);
			if (!pass && ntfs_vol_dir_entry_size(v, le64toh(fn.parent_directory) & MASK48,
							     mref, &d))
				continue;
			if (d <= alloc && d + unit > alloc && (!found || d > best)) {
				best = d;
				found = true;
			}
		}
		if (found)
			return best;
	}
	return alloc;
}

/* -n: every record of S assumed (true), or none changed past the
 * first refused (false: the budget) */
static bool assume_set(struct ntfs_check *c, const struct edit_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (ntfs_vol_assume_record(&c->vol, s->no[i], s->buf[i]))
			return false;
	return true;
}

/* The extent at AT of REC made the first: it holds the sizes. */
static void head_sizes(uint8_t *rec, uint32_t at, uint64_t alloc, uint64_t data)
{
	struct ntfs_attr_nonresident x;

	memcpy(&x, rec + at, sizeof(x));
	x.allocated_size = (int64_t)htole64(alloc);
	x.data_size = x.initialized_size = (int64_t)htole64(data);
	memcpy(rec + at, &x, sizeof(x));
}

/*
 * The attribute of E (in NB, base B), neither sparse nor compressed, has
 * a gap of N clusters before extent E (its lowest VCN; a user file's
 * $DATA, the only attribute that may be sparse): made sparse
 * where every record of it has room (each extent's header grows by the
 * 8-byte compressed size, as writers lay out sparse extents; the base's
 * $STANDARD_INFORMATION says sparse when it is the unnamed $DATA), and the gap a hole at E's head.
 * When the gap starts at VCN 0 (the first extent lost with its record),
 * E becomes the first extent and takes the sizes the lost one held: the
 * clusters up to the last extent's end, the data size the base's
 * $FILE_NAME says when it is within the last of them.
 * Edited in memory; written when asked (PR_ATTR_HOLE_SPARSE).  0 done or
 * declined, -1 no room (nothing written).
 */
static int gap_sparse(struct lctx *l, uint64_t b, struct ntfs_al_build *nb,
		      struct ntfs_al_entry *e, uint64_t n, const char *file)
{
	struct ntfs_check *c = l->c;
	uint32_t cs = c->vol.boot.g.cluster_size;
	struct edit_set s = { .n = 0 };
	uint64_t mapped = 0, end = 0;
	bool head = e->lowest_vcn == (int64_t)n;
	uint8_t *rec;
	uint32_t at;
	int ret = -1;

	for (size_t k = 0; k < nb->n; k++) {
		struct ntfs_attr_nonresident x;
		struct ntfs_al_entry *q = &nb->v[k];

		if (!same_attr(q, e))
			continue;
		if (!(rec = edit_rec(l, &s, q->mref & MASK48)) ||
		    !(at = extent_in(rec, q->type, q->name, q->name_len, q->lowest_vcn)))
			goto out;
		memcpy(&x, rec + at, sizeof(x));
		mapped += (uint64_t)(le64toh((uint64_t)x.highest_vcn) -
				     le64toh((uint64_t)x.lowest_vcn) + 1);
		if (le64toh((uint64_t)x.highest_vcn) + 1 > end)
			end = le64toh((uint64_t)x.highest_vcn) + 1;
	}
	if (head && !(rec = edit_rec(l, &s, b)))
		goto out;
	for (size_t k = 0; k < nb->n; k++) {
		struct ntfs_al_entry *q = &nb->v[k];

		if (!same_attr(q, e))
			continue;
		rec = edit_rec(l, &s, q->mref & MASK48);
		at = extent_in(rec, q->type, q->name, q->name_len, q->lowest_vcn);
		if (ntfs_rec_attr_make_sparse(rec, l->rs, at,
					      q->lowest_vcn && !(head && q == e) ?
					      0 : mapped * cs) ||
		    (q == e && ntfs_rec_extent_hole_before(rec, l->rs, at, n)))
			goto out;
		if (head && q == e)
			head_sizes(rec, at, end * cs,
				   head_data_size(&c->vol, edit_rec(l, &s, b), b,
						  end * cs, cs, e->name_len));
	}
	if (!(rec = edit_rec(l, &s, b)))
		goto out;
	/* the file's flags follow its unnamed $DATA (pass 2's check) */
	if (!e->name_len)
		ntfs_rec_set_file_attr(rec, NTFS_FA_SPARSE_FILE);
	ret = 0;
	if (!fsf_fix_ask(&c->fix, &PR_ATTR_HOLE_SPARSE, file, e->type,
			 (unsigned long long)(e->lowest_vcn - (int64_t)n),
			 (unsigned long long)(e->lowest_vcn - 1))) {
		/* -n: the rest of the check (the list, the file's index
		 * entries in pass 3) sees the records as -a leaves them, in
		 * memory (past the budget: as read) */
		if (c->fix.mode == FSF_MODE_NO && assume_set(c, &s)) {
			e->lowest_vcn -= (int64_t)n;
			l->assume_list = true;
		}
		goto out;
	}
	for (size_t i = 0; i < s.n; i++)
		if (ntfs_check_write_record(c, s.no[i], s.buf[i]))
			fsf_fix_failed(&c->fix);
	e->lowest_vcn -= (int64_t)n;
out:
	for (size_t i = 0; i < s.n; i++)
		free(s.buf[i]);
	return ret;
}

/*
 * The attribute of E (in NB, base B), already sparse or compressed, lost
 * its first extent (VCN 0) with its record: a hole from VCN 0 at E's
 * head, E the first extent, with the sizes the lost one held (as
 * gap_sparse: the clusters up to the last extent's end, the data size
 * the evidence puts in the last cluster or compression unit of them) and
 * the compressed size, the clusters the extents' runs still allocate.  A
 * compressed one only when E starts a compression unit (a unit whose
 * head was lost cannot be decoded: left as before), and only when E's
 * header holds the compressed size field.  Edited in memory; written
 * when asked (PR_ATTR_HOLE); with -n assumed.
 */
static void head_hole(struct lctx *l, uint64_t b, struct ntfs_al_build *nb,
		      struct ntfs_al_entry *e, const char *file)
{
	struct ntfs_check *c = l->c;
	uint32_t cs = c->vol.boot.g.cluster_size, unit = cs;
	struct edit_set s = { .n = 0 };
	struct ntfs_attr_nonresident x;
	uint64_t held = 0, end = 0, csize, n = (uint64_t)e->lowest_vcn;
	uint8_t *rec, *tmp = malloc(l->rs);
	uint32_t at;
	char why[NTFS_WHY];

	for (size_t k = 0; tmp && k < nb->n; k++) {
		struct ntfs_al_entry *q = &nb->v[k];
		struct ntfs_run *runs = NULL;
		long nr;

		if (!same_attr(q, e))
			continue;
		rec = tmp;
		if (load(l, q->mref & MASK48, rec) ||
		    !(at = extent_in(rec, q->type, q->name, q->name_len, q->lowest_vcn)))
			goto out;
		memcpy(&x, rec + at, sizeof(x));
		if (le64toh((uint64_t)x.highest_vcn) + 1 > end)
			end = le64toh((uint64_t)x.highest_vcn) + 1;
		nr = ntfs_attr_runs((const void *)(rec + at), c->vol.boot.g.nr_clusters,
				    &runs, why);
		if (nr < 0)
			goto out;
		for (long i = 0; i < nr; i++)
			if (runs[i].lcn >= 0)
				held += (uint64_t)runs[i].len;
		free(runs);
	}
	if (!tmp || load(l, b, tmp) || !(rec = edit_rec(l, &s, e->mref & MASK48)) ||
	    !(at = extent_in(rec, e->type, e->name, e->name_len, e->lowest_vcn)))
		goto out;
	memcpy(&x, rec + at, sizeof(x));
	if (le16toh(x.h.flags) & NTFS_ATTR_COMPRESSION_MASK) {
		if (!x.compression_unit || x.compression_unit > 8 ||
		    n % (1u << x.compression_unit))
			goto out;
		unit = cs << x.compression_unit;
	}
	if (le16toh(x.mapping_pairs_offset) < 0x48 ||
	    (x.h.name_length && le16toh(x.h.name_offset) < 0x48) ||
	    ntfs_rec_extent_hole_before(rec, l->rs, at, n))
		goto out;
	head_sizes(rec, at, end * cs, head_data_size(&c->vol, tmp, b, end * cs, unit, e->name_len));
	csize = htole64(held * cs);
	memcpy(rec + at + 0x40, &csize, 8);
	if (!fsf_fix_ask(&c->fix, &PR_ATTR_HOLE, file, e->type, 0ULL,
			 (unsigned long long)(n - 1))) {
		if (c->fix.mode == FSF_MODE_NO && assume_set(c, &s)) {
			e->lowest_vcn = 0;
			l->assume_list = true;
		}
		goto out;
	}
	for (size_t i = 0; i < s.n; i++)
		if (ntfs_check_write_record(c, s.no[i], s.buf[i]))
			fsf_fix_failed(&c->fix);
	e->lowest_vcn = 0;
out:
	for (size_t i = 0; i < s.n; i++)
		free(s.buf[i]);
	free(tmp);
}

/* Is E (of file B) an index allocation that pass 3 rebuilds from a
 * source other than the index itself when its extents do not join: a
 * directory's $I30 (the children's names), $ObjId's $O and $Reparse's
 * $R (the files' object ids and reparse points: their root collates by
 * ULONGS; $Quota's $O does not and is left, as its $Q, and $Secure with
 * an attribute list is not judged in pass 3)? */
static bool rebuilt_in_pass3(struct lctx *l, uint64_t b, const struct ntfs_al_entry *e)
{
	const struct ntfs_attr_header *ra;
	struct ntfs_index_root ir;
	const char *name;
	uint8_t *rec;
	uint32_t len;
	bool yes = false;

	if (e->type != NTFS_AT_INDEX_ALLOCATION)
		return false;
	if (ntfs_al_entry_named(e, "$I30"))
		return true;
	if (ntfs_al_entry_named(e, "$O"))
		name = "$O";
	else if (ntfs_al_entry_named(e, "$R"))
		name = "$R";
	else
		return false;
	/* the root is in the base record (pass 3 reads it there) */
	rec = malloc(l->rs);
	if (rec && !load(l, b, rec) &&
	    (ra = ntfs_attr_named(rec, NTFS_AT_INDEX_ROOT, name)) && !ra->non_resident) {
		const void *v = ntfs_attr_value(ra, &len);

		if (len >= sizeof(ir)) {
			memcpy(&ir, v, sizeof(ir));
			yes = le32toh(ir.collation_rule) == NTFS_COLLATION_NTOFS_ULONGS;
		}
	}
	free(rec);
	return yes;
}

/* Extents of one attribute in NB with a gap before them (an extent lost
 * with its record): the gap made a hole at the head of the extent after
 * it, in its record, and its entry follows (PR_ATTR_HOLE). */
static void fill_gaps(struct lctx *l, uint64_t b, struct ntfs_al_build *nb)
{
	struct ntfs_check *c = l->c;
	char file[1200];
	bool named = false;

	for (size_t i = 0; i < nb->n; i++) {
		struct ntfs_al_entry *e = &nb->v[i], *p = NULL;
		struct ntfs_attr_nonresident n;
		uint32_t at;
		int64_t hi;

		if (e->lowest_vcn <= 0)
			continue;
		/* the extent before it: the highest lowest VCN below its */
		for (size_t k = 0; k < nb->n; k++) {
			struct ntfs_al_entry *q = &nb->v[k];

			if (same_attr(q, e) && q->lowest_vcn < e->lowest_vcn &&
			    (!p || q->lowest_vcn > p->lowest_vcn))
				p = q;
		}
		/* none: the first extent was lost with its record, a hole
		 * from VCN 0 in a user file's $DATA (which may be sparse) */
		if (!p) {
			if (e->type != NTFS_AT_DATA || b < NTFS_FILE_FIRST_USER)
				continue;
			hi = -1;
		} else {
			if (load(l, p->mref & MASK48, l->rec) ||
			    !(at = extent_in(l->rec, p->type, p->name, p->name_len,
					     p->lowest_vcn)))
				continue;
			memcpy(&n, l->rec + at, sizeof(n));
			hi = (int64_t)le64toh((uint64_t)n.highest_vcn);
			if (hi + 1 >= e->lowest_vcn || hi < p->lowest_vcn - 1)
				continue;
		}
		/* the extent after the gap takes it, if its record has room */
		if (load(l, e->mref & MASK48, l->rec) ||
		    !(at = extent_in(l->rec, e->type, e->name, e->name_len, e->lowest_vcn)))
			continue;
		if (!named)
			ntfs_object_name(c, "file", b, file, sizeof(file));
		named = true;
		/* holes are allowed in sparse and compressed attributes:
		 * another one is made sparse first, where it has room */
		memcpy(&n, l->rec + at, sizeof(n));
		if (!(le16toh(n.h.flags) & (NTFS_ATTR_SPARSE | NTFS_ATTR_COMPRESSION_MASK))) {
			/* only a user file's $DATA may be sparse; an index
			 * pass 3 rebuilds from another source is rebuilt
			 * there (its extents do not join), in new clusters */
			if (rebuilt_in_pass3(l, b, e))
				continue;
			if (e->type != NTFS_AT_DATA || b < NTFS_FILE_FIRST_USER)
				fsf_fix_ask(&c->fix, &PR_ATTR_GAP_NOT_SPARSE, file, e->type,
					    (unsigned long long)(hi + 1),
					    (unsigned long long)(e->lowest_vcn - 1));
			else if (gap_sparse(l, b, nb, e, (uint64_t)(e->lowest_vcn - hi - 1), file))
				fsf_fix_ask(&c->fix, &PR_ATTR_GAP_LEFT, file, e->type,
					    (unsigned long long)(hi + 1),
					    (unsigned long long)(e->lowest_vcn - 1));
			continue;
		}
		/* an already sparse or compressed one's lost head: the
		 * sizes from the extents left and the evidence */
		if (!p) {
			head_hole(l, b, nb, e, file);
			continue;
		}
		if (ntfs_rec_extent_hole_before(l->rec, l->rs, at,
						(uint64_t)(e->lowest_vcn - hi - 1)))
			continue;
		if (!fsf_fix_ask(&c->fix, &PR_ATTR_HOLE, file, e->type,
				 (unsigned long long)(hi + 1),
				 (unsigned long long)(e->lowest_vcn - 1)))
			continue;
		if (ntfs_check_write_record(c, e->mref & MASK48, l->rec)) {
			fsf_fix_failed(&c->fix);
			continue;
		}
		e->lowest_vcn = hi + 1;
	}
}

/* The extent of (TYPE, NAME) in NB with the highest lowest VCN, or NULL. */
static struct ntfs_al_entry *last_extent(struct ntfs_al_build *nb,
					 const struct ntfs_al_entry *e)
{
	struct ntfs_al_entry *p = NULL;

	for (size_t k = 0; k < nb->n; k++) {
		struct ntfs_al_entry *q = &nb->v[k];

		if (same_attr(q, e) && (!p || q->lowest_vcn > p->lowest_vcn))
			p = q;
	}
	return p;
}

/* Attributes of NB whose last extent ends before the clusters their
 * sizes allocate (the last extent lost with its record, or cut): the
 * VCNs no extent maps become a hole after the last extent when holes are
 * allowed and its record has room (the size kept, PR_ATTR_TAIL_HOLE);
 * otherwise the sizes are cut to what the extents map, every mapped
 * cluster kept (PR_ATTR_TAIL_CUT).  A $DATA (not $MFT's) whose first
 * extent is its only one is judged so too: its later extents lost with
 * their records, or sizes beyond its runs, which a record in a list is
 * not judged by alone ($Secure's $SDS there: it was left unchecked,
 * secure_not_checked). */
static uint64_t mft_clusters(const struct ntfs_check *c)
{
	uint64_t n = 0;

	for (long i = 0; i < c->vol.nmft_runs; i++)
		n += c->vol.mft_runs[i].len;
	return n;
}

static void fill_tail(struct lctx *l, uint64_t b, struct ntfs_al_build *nb)
{
	struct ntfs_check *c = l->c;
	uint32_t cs = c->vol.boot.g.cluster_size;
	char file[1200];
	bool named = false;

	for (size_t i = 0; i < nb->n; i++) {
		struct ntfs_al_entry *e = &nb->v[i], *p;
		struct ntfs_attr_nonresident n, f;
		uint64_t alloc, data, init, want;
		uint16_t flags;
		uint32_t at, pat;
		int64_t hi;

		/* a $DATA left with its first extent alone (the list named
		 * a later one, lost with its record): as after a later one */
		if (e->lowest_vcn || !(p = last_extent(nb, e)) ||
		    (p == e ? e->type != NTFS_AT_DATA || b == NTFS_FILE_MFT : !p->lowest_vcn) ||
		    load(l, e->mref & MASK48, l->ext) ||
		    !(at = extent_in(l->ext, e->type, e->name, e->name_len, 0)))
			continue;
		memcpy(&f, l->ext + at, sizeof(f));
		flags = le16toh(f.h.flags);
		alloc = le64toh((uint64_t)f.allocated_size);
		data = le64toh((uint64_t)f.data_size);
		init = le64toh((uint64_t)f.initialized_size);
		if (alloc % cs || load(l, p->mref & MASK48, l->rec) ||
		    !(pat = extent_in(l->rec, p->type, p->name, p->name_len, p->lowest_vcn)))
			continue;
		memcpy(&n, l->rec + pat, sizeof(n));
		hi = (int64_t)le64toh((uint64_t)n.highest_vcn);
		if (hi < p->lowest_vcn - 1 || (uint64_t)hi + 1 >= alloc / cs)
			continue;
		/* $MFT's lost tail, which pass 1 took (asked with -n) */
		if (b == NTFS_FILE_MFT && e->type == NTFS_AT_DATA && !e->name_len &&
		    mft_clusters(c) >= alloc / cs)
			continue;
		if (!named)
			ntfs_object_name(c, "file", b, file, sizeof(file));
		named = true;
		if ((flags & (NTFS_ATTR_SPARSE | NTFS_ATTR_COMPRESSION_MASK)) &&
		    !ntfs_rec_extent_hole_after(l->rec, l->rs, pat,
						alloc / cs - (uint64_t)hi - 1)) {
			if (fsf_fix_ask(&c->fix, &PR_ATTR_TAIL_HOLE, file, e->type,
					(unsigned long long)(hi + 1),
					(unsigned long long)(alloc / cs - 1)) &&
			    ntfs_check_write_record(c, p->mref & MASK48, l->rec))
				fsf_fix_failed(&c->fix);
			continue;
		}
		/* a compressed attribute allocates whole units: not cut */
		if (flags & NTFS_ATTR_COMPRESSION_MASK)
			continue;
		want = ((uint64_t)hi + 1) * cs;
		if (!fsf_fix_ask(&c->fix, &PR_ATTR_TAIL_CUT, file, e->type,
				 (unsigned long long)(hi + 1),
				 (unsigned long long)(alloc / cs),
				 (unsigned long long)(data < want ? data : want)))
			continue;
		f.allocated_size = (int64_t)htole64(want);
		if (data > want)
			f.data_size = (int64_t)htole64(want);
		if (init > want)
			f.initialized_size = (int64_t)htole64(want);
		memcpy(l->ext + at, &f, sizeof(f));
		if (ntfs_check_write_record(c, e->mref & MASK48, l->ext))
			fsf_fix_failed(&c->fix);
	}
}

/* Names that count as links, in REC: every $FILE_NAME (see count_links
 * in pass1_mft.c); *DOS: how many of them are DOS-only names. */
static unsigned int links_in(const uint8_t *rec, unsigned int *dos)
{
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	struct ntfs_file_name fn;
	char why[NTFS_WHY];
	unsigned int n = 0;

	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1)
		if (ntfs_file_name_of(a, &fn)) {
			n++;
			*dos += fn.name_type == NTFS_NS_DOS;
		}
	return n;
}

bool ntfs_list_past_end(const struct ntfs_check *c, const uint8_t *rec)
{
	const struct ntfs_attr_header *a = ntfs_attr_find(rec, NTFS_AT_ATTRIBUTE_LIST);
	struct ntfs_run *runs = NULL;
	bool past = false;
	char why[NTFS_WHY];
	long nr;

	if (!a || !a->non_resident ||
	    (nr = ntfs_attr_runs(a, c->vol.boot.g.nr_clusters, &runs, why)) < 0)
		return false;
	past = ntfs_runs_past(runs, nr, c->geo.dev_clusters);
	free(runs);
	return past;
}

/* Whether list V (LEN bytes) names a record that lies past the end of a
 * truncated device: not read, so not known to be wrong. */
static bool names_record_past_end(const struct lctx *l, const uint8_t *v, uint32_t len)
{
	const struct ntfs_check *c = l->c;
	struct ntfs_al_entry e;
	uint32_t off = 0;
	char why[NTFS_WHY];

	while (ntfs_al_next(v, len, &off, &e, why) == 1) {
		uint64_t at = ntfs_vol_record_offset(&c->vol, e.mref & MASK48);

		if (at != UINT64_MAX && (at > c->dev.size || c->dev.size - at < l->rs))
			return true;
	}
	return false;
}

/* List V (LEN bytes) of base B names $FILE_NAMEs in records pass 1
 * found unusable: those names are gone with them, and pass 3 may give
 * back as many from the index entries that still hold them. */
static void note_names_lost(struct lctx *l, uint64_t b, const uint8_t *v,
			    uint32_t len)
{
	struct ntfs_check *c = l->c;
	struct ntfs_names_lost *g;
	struct ntfs_al_entry e;
	uint32_t off = 0, n = 0;
	char why[NTFS_WHY];

	while (ntfs_al_next(v, len, &off, &e, why) == 1) {
		uint64_t x = e.mref & MASK48;

		n += e.type == NTFS_AT_FILE_NAME && x != b &&
		     x < c->vol.mft_records && rare_get(c->record_lost, x);
	}
	if (!n || !(g = realloc(c->lost_names, (c->nlost_names + 1) * sizeof(*g))))
		return;
	c->lost_names = g;
	g[c->nlost_names++] = (struct ntfs_names_lost){ b, n };
	rare_set(c->names_lost, b);
}

static void check_one(struct lctx *l, uint64_t b)
{
	struct ntfs_check *c = l->c;
	struct ntfs_al_build nb = { 0 };
	struct ntfs_ext_ref key = { 0, b }, *lo;
	struct ntfs_mft_record m;
	uint8_t *v = NULL, *nv = NULL, *rec = NULL;
	uint32_t at, len = 0, nlen;
	uint16_t bseq;
	unsigned int links = 0, dos = 0;
	char why[NTFS_WHY] = "", obj[1200];
	bool cur_ok;
	size_t i, first;
	struct named_set named = { 0 };

	rec = malloc(l->rs);
	if (!rec || load(l, b, rec) || !ntfs_record_is_base(rec) || !(at = list_attr(rec)))
		goto out;
	bseq = seq_of(rec);
	l->assume_list = false;
	snprintf(obj, sizeof(obj), "MFT record %llu", (unsigned long long)b);
	v = read_list(c, rec, at, &len, why);
	/* -n: without the entries a declined salvage removes */
	for (i = 0; v && i < c->nunlisted; i++) {
		const struct ntfs_unlisted *u = &c->unlisted[i];
		int nv2;

		if (u->base == b &&
		    (nv2 = ntfs_list_drop_entry(v, len, u->type, u->inst, u->rec)) >= 0)
			len = (uint32_t)nv2;
	}
	cur_ok = v && !ntfs_al_check(v, len, why);
	/* an extent or name in a record the truncated device lost is
	 * unknown, not missing: the list, the sizes and the link count
	 * stay as they are (the truncation is reported) */
	if ((cur_ok && names_record_past_end(l, v, len)) ||
	    (!v && ntfs_list_past_end(c, rec)))
		goto out;
	if (ntfs_al_add_record(&nb, rec, NTFS_MREF(b, bseq)))
		goto out;
	if (cur_ok)
		named_set_of(&named, v, len);
	/* the extension records pointing back: listed ones first */
	lo = l->by_base;
	first = 0;
	{
		size_t hi = l->nby;

		while (first < hi) {
			size_t mid = (first + hi) / 2;

			if (cmp_base(&lo[mid], &key) < 0)
				first = mid + 1;
			else
				hi = mid;
		}
	}
	for (int pass = 0; pass < 2; pass++)
		for (i = first; i < l->nby && lo[i].base == b; i++) {
			uint64_t e = lo[i].recno;
			bool listed;

			if (!cset_get(&c->record_used, e) || load(l, e, l->rec))
				continue;
			listed = cur_ok && names_in(&named, v, len, e, seq_of(l->rec));
			if (pass == 0 && !listed && cur_ok)
				continue;
			if (pass == 1 && (listed || !cur_ok))
				continue;
			if (!listed) {
				/* not listed: a stale copy if it holds what
				 * another record already does */
				struct ntfs_al_build eb = { 0 };
				bool stale = ntfs_al_add_record(&eb, l->rec, 0) != 0;

				for (size_t k = 0; k < eb.n && !stale; k++)
					stale = eb.v[k].type != NTFS_AT_FILE_NAME &&
						ntfs_al_has(&nb, eb.v[k].type, eb.v[k].name,
							    eb.v[k].name_len,
							    eb.v[k].lowest_vcn);
				ntfs_al_build_free(&eb);
				/* another base's list names it: that base's */
				if (stale || listed_elsewhere(l, b, e, l->rec))
					continue;
			}
			if (ntfs_al_add_record(&nb, l->rec, NTFS_MREF(e, seq_of(l->rec))))
				goto out;
		}
	if (v && len)
		reclaim(l, b, bseq, v, len, &nb, obj);
	fill_gaps(l, b, &nb);
	fill_tail(l, b, &nb);
	if (v && len)
		note_names_lost(l, b, v, len);
	if (ntfs_al_encode(&nb, NULL, &nv, &nlen))
		goto out;
	if (cur_ok && ntfs_al_same(v, len, nv, nlen, why))
		goto links;
	if (!fsf_fix_ask(&c->fix, &PR_ATTRLIST_BAD, obj, why)) {
		if (c->list_left)
			rare_set(c->list_left, b);
		/* -n after an assumed hole: the list -a writes (resident) */
		if (l->assume_list && !load(l, b, rec) && (at = list_attr(rec)) &&
		    !((struct ntfs_attr_header *)(rec + at))->non_resident &&
		    !ntfs_rec_set_value(rec, l->rs, at, nv, nlen))
			ntfs_vol_assume_record(&c->vol, b, rec);
		goto links;
	}
	if (load(l, b, rec) || write_list(l, b, rec, at, nv, nlen, why)) {
		fsf_fix_failed(&c->fix);
		fsf_fix_ask(&c->fix, &PR_ATTRLIST_REBUILD_FAILED, obj, why);
		if (c->list_left)
			rare_set(c->list_left, b);
	}
links:
	/* the names of every record of the file, against its link count */
	for (i = 0; i < nb.n; i++) {
		uint64_t r = nb.v[i].mref & MASK48;
		bool seen = false;

		for (size_t k = 0; k < i && !seen; k++)
			seen = nb.v[k].type == NTFS_AT_FILE_NAME &&
			       (nb.v[k].mref & MASK48) == r;
		if (seen || nb.v[i].type != NTFS_AT_FILE_NAME)
			continue;
		if (!load(l, r, l->rec))
			links += links_in(l->rec, &dos);
	}
	if (load(l, b, rec))
		goto out;
	memcpy(&m, rec, sizeof(m));
	if (links && links != le16toh(m.link_count) &&
	    links - dos != le16toh(m.link_count) && links <= 0xffff &&
	    fsf_fix_ask(&c->fix, &PR_LINK_COUNT, obj, le16toh(m.link_count), links)) {
		m.link_count = htole16((uint16_t)links);
		memcpy(rec, &m, sizeof(m));
		if (ntfs_check_write_record(c, b, rec))
			fsf_fix_failed(&c->fix);
	}
out:
	ntfs_al_build_free(&nb);
	free(named.v);
	free(v);
	free(nv);
	free(rec);
}

void ntfs_check_attr_lists(struct ntfs_check *c)
{
	struct lctx l = { .c = c, .rs = c->vol.boot.g.mft_record_size };

	if (!c->nlbases)
		return;
	l.rec = malloc(l.rs);
	l.ext = malloc(l.rs);
	l.by_base = malloc((c->nexts ? c->nexts : 1) * sizeof(*l.by_base));
	if (l.rec && l.ext && l.by_base) {
		l.nby = c->nexts;
		if (l.nby)
			memcpy(l.by_base, c->exts, l.nby * sizeof(*l.by_base));
		qsort(l.by_base, l.nby, sizeof(*l.by_base), cmp_base);
		collect_named(&l);
		for (size_t i = 0; i < c->nlbases; i++)
			check_one(&l, c->lbases[i]);
	}
	free(l.rec);
	free(l.ext);
	free(l.by_base);
	free(l.named);
}

int ntfs_rewrite_attr_list(struct ntfs_check *c, uint64_t b, uint64_t extra,
			   char *why)
{
	struct lctx l = { .c = c, .rs = c->vol.boot.g.mft_record_size };
	struct ntfs_al_build nb = { 0 };
	struct ntfs_al_entry e;
	uint8_t *rec = malloc(l.rs), *v = NULL, *nv = NULL;
	uint32_t at, len = 0, nlen, off = 0;
	uint64_t last = UINT64_MAX;
	int ret = -1;

	l.rec = malloc(l.rs);
	snprintf(why, NTFS_WHY, "its base record is unusable");
	if (!rec || !l.rec || load(&l, b, rec) || !(at = list_attr(rec)))
		goto out;
	v = read_list(c, rec, at, &len, why);
	if (!v || ntfs_al_add_record(&nb, rec, NTFS_MREF(b, seq_of(rec))))
		goto out;
	while (ntfs_al_next(v, len, &off, &e, why) == 1) {
		uint64_t x = e.mref & MASK48;

		if (x == b || x == last)
			continue;
		last = x;
		if (x >= c->vol.mft_records || !cset_get(&c->record_used, x) ||
		    load(&l, x, l.rec) || ntfs_record_is_base(l.rec) || base_of(l.rec) != b)
			continue;
		for (size_t i = 0; i < nb.n; i++)
			if ((nb.v[i].mref & MASK48) == x)
				goto next;
		if (ntfs_al_add_record(&nb, l.rec, NTFS_MREF(x, seq_of(l.rec))))
			goto out;
next:		;
	}
	if (extra < c->vol.mft_records && cset_get(&c->record_used, extra) &&
	    !load(&l, extra, l.rec) && !ntfs_record_is_base(l.rec) &&
	    base_of(l.rec) == b &&
	    ntfs_al_add_record(&nb, l.rec, NTFS_MREF(extra, seq_of(l.rec))))
		goto out;
	if (ntfs_al_encode(&nb, NULL, &nv, &nlen))
		goto out;
	ret = write_list(&l, b, rec, at, nv, nlen, why);
out:
	ntfs_al_build_free(&nb);
	free(v);
	free(nv);
	free(rec);
	free(l.rec);
	return ret;
}
