// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 2: $Extend/$Reparse.  Its $R index has one entry per reparse point
 * (key: the tag and the file's reference, collated as 32-bit words, no
 * data).  The entries are read (root and INDX blocks, through the read
 * side's index parsers) and compared with the reparse points the files
 * have; a missing or stale entry is reported by the file it names.  The
 * index is rewritten from the files when it is small enough to live in
 * its root; a larger one by the shared index builder in pass 3
 * (pass3_views.c), from the files' keys kept here.
 */
#include "config.h"

#include <endian.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/repair.h"
#include "ntfs/special.h"
#include "ntfs_check.h"
#include "ntfs_problems.h"
#include "ntfs_reparse_index.h"

#define R_ENTRY_LEN 32u		/* header 16, key 12, padding 4 */
#define MAX_DEPTH 8

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

static bool named_r(const struct ntfs_attr_header *a)
{
	const uint8_t *n = (const uint8_t *)a + le16toh(a->name_offset);

	return a->name_length == 2 && n[0] == '$' && !n[1] && n[2] == 'R' && !n[3];
}

struct walk {
	struct ntfs_check *c;
	struct ntfs_run *runs;
	long nruns;
	uint32_t block_size;
	struct ntfs_rp_set *found;
	bool bad;
	char why[NTFS_WHY];
};

static void walk_node(struct walk *w, const uint8_t *ents, uint32_t elen,
		      int depth);

static void walk_block(struct walk *w, int64_t vcn, int depth)
{
	uint32_t cs = w->c->vol.boot.g.cluster_size;
	uint32_t unit = w->block_size >= cs ? cs : 512;
	uint8_t *blk = malloc(w->block_size);
	const uint8_t *ents;
	uint32_t elen;

	if (!blk || depth > MAX_DEPTH || vcn < 0 ||
	    ntfs_vol_runs_pread(&w->c->vol, w->runs, w->nruns, (uint64_t)vcn * unit,
				w->block_size, blk) ||
	    ntfs_record_check(blk, w->block_size, NTFS_MAGIC_INDX, w->why) != NTFS_REC_OK ||
	    ntfs_index_block_parse(blk, w->block_size, vcn, &ents, &elen, w->why)) {
		if (!w->bad && depth > MAX_DEPTH)
			snprintf(w->why, sizeof(w->why), "more than %d levels", MAX_DEPTH);
		else if (!w->bad && (!blk || vcn < 0))
			snprintf(w->why, sizeof(w->why), "index block VCN %lld", (long long)vcn);
		w->bad = true;
		free(blk);
		return;
	}
	walk_node(w, ents, elen, depth);
	free(blk);
}

static void walk_node(struct walk *w, const uint8_t *ents, uint32_t elen,
		      int depth)
{
	struct ntfs_ie_view ie;
	uint32_t off = 0;
	int r;

	for (;;) {
		r = ntfs_ie_next(ents, elen, &off, false, &ie, w->why);
		if (r < 0) {
			w->bad = true;
			return;
		}
		if (ie.flags & NTFS_IE_NODE)
			walk_block(w, ie.child_vcn, depth + 1);
		if (r == 0)
			return;
		if (ie.key_len != 12) {
			snprintf(w->why, sizeof(w->why), "key of %u bytes", ie.key_len);
			w->bad = true;
			return;
		}
		{
			uint32_t tag;
			uint64_t mref;

			memcpy(&tag, ie.key, 4);
			memcpy(&mref, ie.key + 4, 8);
			if (ntfs_rp_set_add(w->found, le32toh(tag), le64toh(mref))) {
				w->bad = true;
				return;
			}
		}
	}
}

/* Rewrite $R in the index root of REC (root only) from SEEN. */
static int rewrite_root(struct ntfs_check *c, uint64_t recno, uint8_t *rec,
			const struct ntfs_rp_set *seen)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];

	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1) {
		uint32_t off = (uint32_t)((const uint8_t *)a - rec), vlen, len;
		struct ntfs_index_root root;
		uint8_t *v;

		if (le32toh(a->type) != NTFS_AT_INDEX_ROOT || !named_r(a) || a->non_resident)
			continue;
		ntfs_attr_value(a, &vlen);
		if (vlen < sizeof(root))
			return -1;
		len = (uint32_t)sizeof(root) + (uint32_t)seen->n * R_ENTRY_LEN + 16;
		if (ntfs_rec_resize_resident(rec, rs, off, len))
			return -1;
		v = (uint8_t *)ntfs_attr_value((const void *)(rec + off), &vlen);
		memcpy(&root, v, sizeof(root));
		root.ih.entries_offset = htole32(16);
		root.ih.index_length = htole32(16 + (uint32_t)seen->n * R_ENTRY_LEN + 16);
		root.ih.allocated_size = root.ih.index_length;
		root.ih.flags = 0;
		memcpy(v, &root, sizeof(root));
		memset(v + sizeof(root), 0, len - sizeof(root));
		for (size_t i = 0; i <= seen->n; i++) {
			uint8_t *e = v + sizeof(root) + i * R_ENTRY_LEN;
			uint16_t u16;
			uint32_t u32;
			uint64_t u64;

			if (i == seen->n) {
				u16 = htole16(16);
				memcpy(e + 8, &u16, 2);
				u16 = htole16(NTFS_IE_END);
				memcpy(e + 12, &u16, 2);
				break;
			}
			u16 = htole16(28);		/* data offset */
			memcpy(e, &u16, 2);
			u16 = htole16(R_ENTRY_LEN);
			memcpy(e + 8, &u16, 2);
			u16 = htole16(12);		/* key length */
			memcpy(e + 10, &u16, 2);
			u32 = htole32(seen->v[i].tag);
			memcpy(e + 16, &u32, 4);
			u64 = htole64(seen->v[i].mref);
			memcpy(e + 20, &u64, 8);
		}
		return ntfs_check_write_record(c, recno, rec);
	}
	return -1;
}

/* SEEN's keys (sorted) for pass 3, encoded as $R's keys.  0 or -1. */
static int keep_keys(struct ntfs_check *c, const struct ntfs_rp_set *seen)
{
	free(c->rp_keys);
	c->rp_nkeys = 0;
	c->rp_keys = malloc(seen->n * 12 + 1);
	if (!c->rp_keys)
		return -1;
	for (size_t k = 0; k < seen->n; k++) {
		uint32_t tag = htole32(seen->v[k].tag);
		uint64_t mref = htole64(seen->v[k].mref);

		memcpy(c->rp_keys + 12 * k, &tag, 4);
		memcpy(c->rp_keys + 12 * k + 4, &mref, 8);
	}
	c->rp_nkeys = seen->n;
	return 0;
}

void ntfs_reparse_index_check(struct ntfs_check *c, struct ntfs_rp_set *seen)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct ntfs_rp_set found = { 0 };
	struct walk w = { .c = c, .found = &found };
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	uint8_t *rec = malloc(rs), *root = NULL;
	uint32_t rlen = 0;
	bool has_root = false, large = false, want_rebuild = false, asked = false;
	int64_t r;
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
	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1) {
		if (!named_r(a))
			continue;
		if (le32toh(a->type) == NTFS_AT_INDEX_ROOT && !a->non_resident) {
			const void *v = ntfs_attr_value(a, &rlen);

			root = malloc(rlen ? rlen : 1);
			if (!root)
				goto out;
			memcpy(root, v, rlen);
			has_root = true;
		} else if (le32toh(a->type) == NTFS_AT_INDEX_ALLOCATION && a->non_resident &&
			   !w.runs) {
			w.nruns = ntfs_attr_runs(a, c->vol.boot.g.nr_clusters, &w.runs, why);
			if (w.nruns < 0)
				w.runs = NULL;
		}
	}
	if (!has_root) {
		snprintf(w.why, sizeof(w.why), "no $R index root");
		w.bad = true;
	} else {
		struct ntfs_index_root ir;
		const uint8_t *ents;
		uint32_t elen;

		if (ntfs_index_root_parse(root, rlen, &ir, &ents, &elen, w.why)) {
			w.bad = true;
		} else {
			w.block_size = le32toh(ir.index_block_size);
			large = ir.ih.flags & 1;
			if (w.block_size < 512 || w.block_size > 65536) {
				snprintf(w.why, sizeof(w.why), "index block size %u", w.block_size);
				w.bad = true;
			} else {
				walk_node(&w, ents, elen, 0);
			}
		}
	}
	snprintf(obj, sizeof(obj), "$Extend/$Reparse (MFT record %lld)", (long long)r);
	if (w.bad) {
		want_rebuild = fsf_fix_ask(&c->fix, &PR_REPARSE_INDEX_CORRUPT, obj, w.why);
		goto rebuild;
	}
	if (seen->n)
		qsort(seen->v, seen->n, sizeof(*seen->v), key_cmp);
	if (found.n)
		qsort(found.v, found.n, sizeof(*found.v), key_cmp);
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
rebuild:
	c->rp_asked = w.bad || asked;
	if (large && has_root) {
		/* pass 3's view check rebuilds it with the index builder,
		 * from the files (what it reads of $R may have lost keys) */
		if (seen->n)
			qsort(seen->v, seen->n, sizeof(*seen->v), key_cmp);
		if (keep_keys(c, seen)) {
			if (want_rebuild)
				fsf_fix_failed(&c->fix);
		} else {
			c->rp_rebuild = want_rebuild;
		}
	} else if (want_rebuild) {
		if (seen->n)
			qsort(seen->v, seen->n, sizeof(*seen->v), key_cmp);
		if (!has_root ||
		    ntfs_vol_read_record(&c->vol, (uint64_t)r, rec) ||
		    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK ||
		    rewrite_root(c, (uint64_t)r, rec, seen))
			fsf_fix_failed(&c->fix);
	}
out:
	free(root);
	free(w.runs);
	ntfs_rp_set_free(&found);
	free(rec);
}
