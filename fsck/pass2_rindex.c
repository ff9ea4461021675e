// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 2: $Extend/$Reparse.  Its $R index has one entry per reparse point
 * (key: the tag and the file's reference, collated as 32-bit words, no
 * data).  It is walked by the libntfs B+tree walker (libntfs/btree.c, as
 * pass 3 walks $I30 and the other view indexes): a structural fault (key
 * order against separators, depth, VCNs, $BITMAP) is asked about once,
 * and the index rebuilt from the files.  A sound index's entries are
 * compared with the reparse points the files have; a missing or stale
 * entry is reported by the file it names.  Pass 3 does not walk $R
 * again.  The index is rewritten from the files when it is small enough to live in
 * its root; a larger one by the shared index builder in pass 3
 * (pass3_views.c), from the files' keys kept here.  The keys' encoding
 * and the root's rewrite are libntfs/rindex.c's.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/repair.h"
#include "ntfs/rindex.h"
#include "ntfs/special.h"
#include "ntfs_check.h"
#include "ntfs_problems.h"
#include "ntfs_reparse_index.h"

int ntfs_rp_set_add(struct ntfs_rp_set *s, uint32_t tag, uint64_t mref)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct ntfs_rp_key *g = realloc(s->v, cap * sizeof(*g));

		if (!g)
			return -1;
		s->v = g;
		s->cap = cap;
	}
	s->v[s->n].tag = tag;
	s->v[s->n++].mref = mref;
	return 0;
}

void ntfs_rp_set_free(struct ntfs_rp_set *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

/* NTOFS_ULONGS order: the tag, then the reference as two 32-bit words */
static int key_cmp(const void *a, const void *b)
{
	const struct ntfs_rp_key *x = a, *y = b;
	uint32_t xw[3] = { x->tag, (uint32_t)x->mref, (uint32_t)(x->mref >> 32) };
	uint32_t yw[3] = { y->tag, (uint32_t)y->mref, (uint32_t)(y->mref >> 32) };

	for (int i = 0; i < 3; i++)
		if (xw[i] != yw[i])
			return xw[i] < yw[i] ? -1 : 1;
	return 0;
}

/* $Reparse's record: a child of $Extend called "$Reparse" (record 26 on
 * every formatter, so the search ends there); -1 if none. */
static int64_t find_reparse_file(struct ntfs_check *c, uint8_t *rec)
{
	static const uint16_t name[] = { '$', 'R', 'e', 'p', 'a', 'r', 's', 'e' };
	uint32_t rs = c->vol.boot.g.mft_record_size;
	for (uint64_t r = NTFS_FILE_FIRST_USER; r < c->vol.mft_records; r++) {
		struct ntfs_attr_cursor cur;
		const struct ntfs_attr_header *a;
		char why[NTFS_WHY];

		if (!cset_get(&c->record_used, r) || ntfs_vol_read_record(&c->vol, r, rec) ||
		    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
			continue;
		ntfs_attr_cursor_init(&cur, rec);
		while (ntfs_attr_next(&cur, &a, why) == 1) {
			struct ntfs_file_name fn;
			const uint8_t *n = ntfs_file_name_of(a, &fn);

			if (n)
				n += sizeof(fn);
			if (!n || (le64toh(fn.parent_directory) & 0xffffffffffffULL) != NTFS_FILE_EXTEND ||
			    fn.name_length != 8)
				continue;
			for (int i = 0; i < 8; i++)
				if ((uint16_t)(n[2 * i] | n[2 * i + 1] << 8) != name[i])
					goto next;
			return (int64_t)r;
next:
			;
		}
	}
	return -1;
}

/* The walk of $R by the libntfs B+tree walker: its keys, and its
 * faults.  One that may have lost entries (a node, block, VCN, depth,
 * bitmap) is asked about at once, as the other view indexes are, and the
 * entries are not compared with the files.  Keys out of order or
 * repeated lose nothing: they are kept (ORDER) and asked about only when
 * the comparison with the files found nothing (the rebuild it asks for
 * puts the order right too). */
struct rwalk {
	struct ntfs_check *c;
	const char *obj;
	struct ntfs_rp_set *found;
	bool bad, asked, want, nomem, misordered;
	char order[NTFS_WHY];
};

static void on_fault(void *arg, enum ntfs_bt_fault f, const struct ntfs_ie_view *a,
		     const struct ntfs_ie_view *b, const char *why)
{
	struct rwalk *w = arg;

	(void)a;
	(void)b;
	if (f == NTFS_BT_ORDER || f == NTFS_BT_SEPARATOR || f == NTFS_BT_DUPLICATE) {
		if (!w->misordered)
			snprintf(w->order, sizeof(w->order), "%s", why);
		w->misordered = true;
		return;
	}
	w->bad = true;
	if (!w->asked)
		w->want = fsf_fix_ask(&w->c->fix, &PR_REPARSE_INDEX_CORRUPT, w->obj, why);
	w->asked = true;
}

static int on_entry(void *arg, const struct ntfs_ie_view *ie)
{
	struct rwalk *w = arg;
	uint32_t tag;
	uint64_t mref;
	char why[64];

	if (ie->key_len != 12) {
		snprintf(why, sizeof(why), "key of %u bytes", ie->key_len);
		on_fault(w, NTFS_BT_CORRUPT, NULL, NULL, why);
		return 0;
	}
	memcpy(&tag, ie->key, 4);
	memcpy(&mref, ie->key + 4, 8);
	if (ntfs_rp_set_add(w->found, le32toh(tag), le64toh(mref))) {
		w->nomem = true;
		return 1;
	}
	return 0;
}

/* Walk $R of record RECNO (REC): W's keys and faults.  LARGE: its root
 * has sub-nodes, it has an allocation, or it has no root (each rebuilt
 * by pass 3's index builder).  0, 1 when its attributes are
 * split over several records (not judged), -ENOMEM. */
static int walk_r(struct rwalk *w, uint64_t recno, const uint8_t *rec, bool *large)
{
	struct ntfs_bt_ops ops = { .entry = on_entry, .fault = on_fault,
				   .empty_leaf_fault = true };
	struct ntfs_bt t = { .type = 0, .collation = NTFS_COLLATION_NTOFS_ULONGS, .arg = w };
	struct ntfs_index ix;
	int r = ntfs_index_open(w->c, recno, rec, "$R", &ix);

	*large = false;
	if (r == 0) {
		struct ntfs_index_root ir;

		if (ix.root_len >= sizeof(ir)) {
			memcpy(&ir, ix.root, sizeof(ir));
			*large = ir.ih.flags & 1;
		}
		*large |= ix.has_alloc;
		ntfs_index_bt(&ix, &t, &ops);
		if (ix.has_alloc && !ix.has_bitmap)
			on_fault(w, NTFS_BT_SHAPE, NULL, NULL, "large index without its $BITMAP");
		if (ntfs_bt_walk(&t))
			w->nomem = true;
		ntfs_bt_free(&t);
	} else if (r == -1) {
		/* no root to rewrite (lost, or misnamed): pass 3's builder
		 * makes the index anew, a root included */
		on_fault(w, NTFS_BT_CORRUPT, NULL, NULL, ix.why);
		*large = true;
	}
	ntfs_index_close(&ix);
	return w->nomem || r == -ENOMEM ? -ENOMEM : r == 1;
}

/* Rewrite $R in the index root of REC (root only) from SEEN. */
static int rewrite_root(struct ntfs_check *c, uint64_t recno, uint8_t *rec,
			const struct ntfs_rp_set *seen)
{
	if (ntfs_rec_r_root_set(rec, &c->vol.boot.g, seen->v, seen->n))
		return -1;
	return ntfs_check_write_record(c, recno, rec);
}

/* SEEN's keys (sorted) for pass 3, encoded as $R's keys.  0 or -1. */
static int keep_keys(struct ntfs_check *c, const struct ntfs_rp_set *seen)
{
	free(c->rp_keys);
	c->rp_nkeys = 0;
	c->rp_keys = malloc(seen->n * NTFS_R_KEY_LEN + 1);
	if (!c->rp_keys)
		return -1;
	ntfs_r_keys_encode(c->rp_keys, seen->v, seen->n);
	c->rp_nkeys = seen->n;
	return 0;
}

void ntfs_reparse_index_check(struct ntfs_check *c, struct ntfs_rp_set *seen)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct ntfs_rp_set found = { 0 };
	uint8_t *rec = malloc(rs);
	bool large = false, want_rebuild = false, asked = false;
	struct rwalk w = { .c = c, .found = &found };
	int64_t r;
	int wr;
	char why[NTFS_WHY], obj[NTFS_WHY + 64];
	size_t i, j;

	if (!rec)
		return;
	r = find_reparse_file(c, rec);
	if (r < 0) {
		if (seen->n)
			fsf_fix_ask(&c->fix, &PR_REPARSE_INDEX_NONE, "$Extend/$Reparse",
				    (unsigned long long)seen->n);
		goto out;
	}
	snprintf(obj, sizeof(obj), "$Extend/$Reparse (MFT record %lld)", (long long)r);
	w.obj = obj;
	wr = walk_r(&w, (uint64_t)r, rec, &large);
	if (wr)
		goto out;	/* no memory, or split: not judged (pass 3 neither) */
	c->rp_walked = true;
	c->rp_rec = (uint64_t)r;
	if (w.bad) {
		want_rebuild = w.want;
		goto rebuild;
	}
	if (seen->n)
		qsort(seen->v, seen->n, sizeof(*seen->v), key_cmp);
	if (found.n) {
		/* a repeated key is the walk's (DUPLICATE), not a stale entry */
		qsort(found.v, found.n, sizeof(*found.v), key_cmp);
		for (i = 1, j = 1; i < found.n; i++)
			if (key_cmp(&found.v[j - 1], &found.v[i]))
				found.v[j++] = found.v[i];
		found.n = j;
	}
	for (i = 0, j = 0; i < seen->n || j < found.n;) {
		int d = i == seen->n ? 1 : j == found.n ? -1 :
			key_cmp(&seen->v[i], &found.v[j]);
		char name[NTFS_WHY + 64], tn[32];

		if (!d) {
			i++, j++;
			continue;
		}
		if (d < 0) {
			ntfs_object_name(c, "file", seen->v[i].mref & 0xffffffffffffULL,
					 name, sizeof(name));
			asked = true;
			want_rebuild |= fsf_fix_ask(&c->fix, &PR_REPARSE_INDEX_MISSING, obj,
						    ntfs_reparse_tag_name(seen->v[i].tag, tn, sizeof(tn)),
						    name);
			i++;
		} else {
			asked = true;
			want_rebuild |= fsf_fix_ask(&c->fix, &PR_REPARSE_INDEX_STALE, obj,
						    ntfs_reparse_tag_name(found.v[j].tag, tn, sizeof(tn)),
						    (unsigned long long)(found.v[j].mref & 0xffffffffffffULL),
						    (unsigned)(found.v[j].mref >> 48));
			j++;
		}
	}
	if (!asked && w.misordered) {
		asked = true;
		want_rebuild = fsf_fix_ask(&c->fix, &PR_REPARSE_INDEX_CORRUPT, obj, w.order);
	}
rebuild:
	c->rp_asked = w.bad || asked;
	if (seen->n)
		qsort(seen->v, seen->n, sizeof(*seen->v), key_cmp);
	if (large) {
		/* pass 3's view check rebuilds it with the index builder,
		 * from the files (what the walk read of $R may have lost
		 * keys) */
		if (keep_keys(c, seen)) {
			if (want_rebuild)
				fsf_fix_failed(&c->fix);
		} else {
			c->rp_rebuild = want_rebuild;
		}
	} else if (want_rebuild) {
		if (ntfs_vol_read_record(&c->vol, (uint64_t)r, rec) ||
		    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK ||
		    rewrite_root(c, (uint64_t)r, rec, seen))
			fsf_fix_failed(&c->fix);
	}
out:
	ntfs_rp_set_free(&found);
	free(rec);
}
