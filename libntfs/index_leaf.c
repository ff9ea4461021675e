// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * An empty leaf dropped from an index B+tree in place, with the blocks
 * above it left with no key (include/ntfs/index_leaf.h).  Nodes are edited in memory, each one
 * checked as the walker checks it when read; the leaf that takes a key is
 * written first (the key is then briefly in two places, never in none),
 * then the parent block, then the record with the root and the $BITMAP.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "le.h"
#include "ntfs/file_attrs.h"
#include "ntfs/format.h"
#include "ntfs/index_leaf.h"
#include "ntfs/repair.h"
#include "ntfs/volume_io.h"

#define MAX_DEPTH 32
#define IH_BLOCK 0x18		/* the index header in an INDX block */

/* the index header at IH of BUF: entries offset, length, allocated, flags */
struct node {
	uint8_t *buf;
	uint32_t ih;
};

static uint32_t il_of(const struct node *n) { return ntfs_get32(n->buf + n->ih + 4); }
static uint16_t len_of(const uint8_t *e) { return ntfs_get16(e + 8); }
static uint16_t flags_of(const uint8_t *e) { return ntfs_get16(e + 12); }

/* Offset in N's buffer of entry POS (0: the first), or 0. */
static uint32_t entry_at(const struct node *n, uint32_t pos)
{
	uint32_t off = n->ih + ntfs_get32(n->buf + n->ih), end = n->ih + il_of(n);

	for (uint32_t i = 0;; i++) {
		if (off + 16 > end || len_of(n->buf + off) < 16 ||
		    len_of(n->buf + off) > end - off)
			return 0;
		if (i == pos)
			return off;
		if (flags_of(n->buf + off) & NTFS_IE_END)
			return 0;
		off += len_of(n->buf + off);
	}
}

/* Offset of N's end entry, or 0. */
static uint32_t end_entry(const struct node *n)
{
	for (uint32_t i = 0;; i++) {
		uint32_t off = entry_at(n, i);

		if (!off || flags_of(n->buf + off) & NTFS_IE_END)
			return off;
	}
}

static int64_t child_of(const uint8_t *e)
{
	return (int64_t)ntfs_get64(e + len_of(e) - 8);
}

struct tree {
	struct ntfs_vol *v;
	const struct ntfs_index *ix;
	uint32_t bs, unit;
};

/* Block VCN into BUF (fixups removed), checked: 0, or 1. */
static int read_block(const struct tree *t, int64_t vcn, uint8_t *buf)
{
	const uint8_t *ents;
	uint32_t elen;
	char why[NTFS_WHY];

	if (vcn < 0 ||
	    ntfs_vol_runs_pread(t->v, t->ix->runs, t->ix->nruns,
				(uint64_t)vcn * t->unit, t->bs, buf) ||
	    ntfs_record_check(buf, t->bs, NTFS_MAGIC_INDX, why) != NTFS_REC_OK ||
	    ntfs_index_block_parse(buf, t->bs, vcn, &ents, &elen, why))
		return 1;
	return 0;
}

static int write_block(const struct tree *t, int64_t vcn, uint8_t *buf)
{
	uint16_t usn = ntfs_get16(buf + ntfs_get16(buf + 4));

	ntfs_fixup_apply(buf, t->bs, (uint16_t)(usn + 1));
	return ntfs_vol_runs_pwrite(t->v, t->ix->runs, t->ix->nruns,
				    (uint64_t)vcn * t->unit, t->bs, buf);
}

/* The leaf below the sub-node at VCN, down its first (FIRST) or its end
 * entries, into BUF; its VCN in *LEAF.  0, or 1. */
static int leaf_below(const struct tree *t, int64_t vcn, bool first,
		      uint8_t *buf, int64_t *leaf)
{
	struct node n = { buf, IH_BLOCK };

	for (int depth = 0; depth < MAX_DEPTH; depth++) {
		uint32_t off;

		if (read_block(t, vcn, buf))
			return 1;
		if (!(buf[IH_BLOCK + 12] & 1)) {
			*leaf = vcn;
			return 0;
		}
		off = first ? entry_at(&n, 0) : end_entry(&n);
		if (!off || !(flags_of(buf + off) & NTFS_IE_NODE))
			return 1;
		vcn = child_of(buf + off);
	}
	return 1;
}

/* The blocks from VCN down through blocks holding nothing but an end
 * entry with a sub-node to a leaf holding nothing but its end entry, their
 * VCNs into CHAIN (*N of them), BUF a block's room.  0, or 1: not so. */
static int keyless_chain(const struct tree *t, int64_t vcn, uint8_t *buf,
			 int64_t *chain, int *n)
{
	struct node b = { buf, IH_BLOCK };

	for (*n = 0; *n < MAX_DEPTH; (*n)++) {
		uint32_t off;

		if (read_block(t, vcn, buf))
			return 1;
		chain[*n] = vcn;
		off = entry_at(&b, 0);
		if (!off || !(flags_of(buf + off) & NTFS_IE_END))
			return 1;
		if (!(buf[IH_BLOCK + 12] & 1)) {
			(*n)++;
			return 0;
		}
		if (!(flags_of(buf + off) & NTFS_IE_NODE))
			return 1;
		vcn = child_of(buf + off);
	}
	return 1;
}

/* Entry E of a node (with its sub-node pointer) put into leaf L at AT as
 * a leaf entry: 0, or 1 when L has no room. */
static int put_key(struct node *l, uint32_t at, const uint8_t *e)
{
	uint32_t klen = len_of(e) - 8u, il = il_of(l);

	if (il + klen > ntfs_get32(l->buf + l->ih + 8))
		return 1;
	memmove(l->buf + at + klen, l->buf + at, l->ih + il - at);
	memcpy(l->buf + at, e, klen);
	ntfs_put16(l->buf + at + 8, (uint16_t)klen);
	ntfs_put16(l->buf + at + 12, flags_of(e) & ~NTFS_IE_NODE);
	ntfs_put32(l->buf + l->ih + 4, il + klen);
	return 0;
}

/* The entry at OFF of node N taken out, the bytes freed zeroed. */
static void take_out(struct node *n, uint32_t off)
{
	uint32_t il = il_of(n), len = len_of(n->buf + off), end = n->ih + il;

	memmove(n->buf + off, n->buf + off + len, end - off - len);
	memset(n->buf + end - len, 0, len);
	ntfs_put32(n->buf + n->ih + 4, il - len);
}

int ntfs_index_drop_empty_leaf(struct ntfs_vol *v, const struct ntfs_index *ix,
			       uint64_t d, uint8_t *rec, const char *name,
			       int64_t vcn, int64_t parent, uint32_t pos,
			       uint64_t mirrored, char *why)
{
	uint32_t rs = v->boot.g.mft_record_size, cs = v->boot.g.cluster_size;
	const struct ntfs_attr_header *a;
	struct tree t = { .v = v, .ix = ix };
	struct node p, l = { NULL, IH_BLOCK };
	uint32_t ra, rv, eoff, at;
	int64_t lvcn = -1, chain[MAX_DEPTH];
	int nchain = 0;
	uint8_t *pb = NULL;
	uint64_t blk;
	int r = 1;

	a = ntfs_attr_named(rec, NTFS_AT_INDEX_ROOT, name);
	if (!a || a->non_resident || !ix->has_alloc || !ix->runs)
		return 1;
	ra = (uint32_t)((const uint8_t *)a - rec);
	rv = ra + ntfs_get16(rec + ra + 0x14);
	a = ntfs_attr_named(rec, NTFS_AT_BITMAP, name);
	if (!a || a->non_resident)
		return 1;
	t.bs = ntfs_get32(rec + rv + 8);
	if (t.bs < 512 || !cs)
		return 1;
	t.unit = t.bs >= cs ? cs : 512;
	l.buf = malloc(t.bs);
	if (parent < 0) {
		p = (struct node){ rec, rv + 16 };
	} else {
		pb = malloc(t.bs);
		p = (struct node){ pb, IH_BLOCK };
	}
	if (!l.buf || (parent >= 0 && !pb)) {
		r = -1;
		snprintf(why, NTFS_WHY, "out of memory");
		goto out;
	}
	if (keyless_chain(&t, vcn, l.buf, chain, &nchain) ||
	    (parent >= 0 && read_block(&t, parent, pb)))
		goto out;
	eoff = entry_at(&p, pos);
	if (!eoff || !(flags_of(p.buf + eoff) & NTFS_IE_NODE) ||
	    child_of(p.buf + eoff) != vcn)
		goto out;
	if (!(flags_of(p.buf + eoff) & NTFS_IE_END)) {
		/* its key goes down to the first leaf below the next entry */
		uint32_t next = eoff + len_of(p.buf + eoff);

		if (!(flags_of(p.buf + next) & NTFS_IE_NODE) ||
		    leaf_below(&t, child_of(p.buf + next), true, l.buf, &lvcn) ||
		    !(at = entry_at(&l, 0)) || put_key(&l, at, p.buf + eoff))
			goto out;
		take_out(&p, eoff);
	} else if (pos) {
		/* the end entry takes the sub-node of the entry before it,
		 * whose key goes down to the end of that sub-node's last leaf */
		uint32_t q = entry_at(&p, pos - 1);

		if (!q || !(flags_of(p.buf + q) & NTFS_IE_NODE) ||
		    leaf_below(&t, child_of(p.buf + q), false, l.buf, &lvcn) ||
		    !(at = end_entry(&l)) || put_key(&l, at, p.buf + q))
			goto out;
		ntfs_put64(p.buf + eoff + len_of(p.buf + eoff) - 8,
			   (uint64_t)child_of(p.buf + q));
		take_out(&p, q);
	} else if (parent < 0) {
		/* the root keeps its end entry alone: a small index */
		uint32_t eo = ntfs_get32(rec + p.ih);

		memset(rec + eoff, 0, il_of(&p) - eo);
		ntfs_put16(rec + eoff + 8, 16);
		ntfs_put16(rec + eoff + 12, NTFS_IE_END);
		ntfs_put32(rec + p.ih + 4, eo + 16);
		rec[p.ih + 12] &= (uint8_t)~1u;
	} else {
		goto out;	/* its block would be left empty in turn */
	}
	if (parent < 0) {
		uint32_t il = il_of(&p);

		ntfs_put32(rec + p.ih + 8, il);
		if (ntfs_rec_resize_resident(rec, rs, ra, 16 + il))
			goto out;
	}
	a = ntfs_attr_named(rec, NTFS_AT_BITMAP, name);
	for (int i = 0; i < nchain; i++) {
		uint32_t blen;
		uint8_t *bm = (uint8_t *)(uintptr_t)ntfs_attr_value(a, &blen);

		blk = (uint64_t)chain[i] * t.unit / t.bs;
		if (!bm || blk / 8 >= blen)
			goto out;
		bm[blk / 8] &= (uint8_t)~(1u << (blk % 8));
	}
	r = -1;
	if (lvcn >= 0 && write_block(&t, lvcn, l.buf)) {
		snprintf(why, NTFS_WHY, "index block VCN %lld cannot be written",
			 (long long)lvcn);
		goto out;
	}
	if (parent >= 0 && write_block(&t, parent, pb)) {
		snprintf(why, NTFS_WHY, "index block VCN %lld cannot be written",
			 (long long)parent);
		goto out;
	}
	if (ntfs_vol_write_record(v, d, rec, mirrored)) {
		snprintf(why, NTFS_WHY, "MFT record %llu cannot be written",
			 (unsigned long long)d);
		goto out;
	}
	r = 0;
out:
	free(l.buf);
	free(pb);
	return r;
}
