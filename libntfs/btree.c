// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The B+tree walker (include/ntfs/btree.h).  In-order, recursive with one
 * block buffer per level (at most MAX_DEPTH): the entry before the current
 * one always lies in a node at the same or a shallower level, whose buffer
 * is still intact, so keys are compared in place without copies.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/btree.h"

#define MAX_DEPTH 32

struct walk {
	struct ntfs_bt *t;
	uint8_t *buf[MAX_DEPTH + 1];
	uint32_t vcn_unit;
	uint64_t alloc_end;		/* blocks walked lie below it */
	struct ntfs_ie_view prev;
	bool have_prev;
	int prev_depth;
	int leaf_depth;			/* -1: no leaf yet */
	bool small_reported;
};

static void fault(struct walk *w, enum ntfs_bt_fault f,
		  const struct ntfs_ie_view *a, const struct ntfs_ie_view *b,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void fault(struct walk *w, enum ntfs_bt_fault f,
		  const struct ntfs_ie_view *a, const struct ntfs_ie_view *b,
		  const char *fmt, ...)
{
	char why[NTFS_WHY];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	w->t->faults++;
	if (w->t->ops->fault)
		w->t->ops->fault(w->t->arg, f, a, b, why);
}

/* where a node hangs: its VCN, its parent's (-1: the root) and the
 * position of the pointing entry there; TOP: the highest block of the
 * chain of blocks above it (itself included) that hold nothing but an end
 * entry, TOP_PARENT and TOP_POS where that one hangs */
struct at {
	int64_t vcn, parent;
	uint32_t pos;
	int64_t top, top_parent;
	uint32_t top_pos;
};

static int walk_node(struct walk *w, const uint8_t *ents, uint32_t len,
		     int depth, bool node, struct at at);

/* The block at VCN, a child of a node at DEPTH - 1 (at PARENT, through
 * its entry POS); CHAIN: PARENT holds nothing but its end entry, the
 * pointing one, and is a block (the chain above goes on through it). */
static int descend(struct walk *w, int64_t vcn, int depth, struct at parent,
		   uint32_t pos, bool chain)
{
	struct ntfs_bt *t = w->t;
	uint64_t byte = (uint64_t)vcn * w->vcn_unit, blk;
	const uint8_t *ents;
	struct ntfs_index_block b;
	uint32_t elen;
	char why[NTFS_WHY];
	uint8_t *buf;

	if (!t->has_alloc) {
		if (!w->small_reported)
			fault(w, NTFS_BT_SHAPE, NULL, NULL,
			      "small index has sub-nodes");
		w->small_reported = true;
		return 0;
	}
	if (depth > MAX_DEPTH) {
		fault(w, NTFS_BT_CORRUPT, NULL, NULL, "index tree too deep");
		return 0;
	}
	if ((uint64_t)vcn > UINT64_MAX / w->vcn_unit || byte % t->block_size ||
	    byte + t->block_size > w->alloc_end) {
		fault(w, NTFS_BT_VCN, NULL, NULL,
		      "sub-node VCN %lld is outside the allocation", (long long)vcn);
		return 0;
	}
	blk = byte / t->block_size;
	if (t->reached[blk >> 3] & (1u << (blk & 7))) {
		fault(w, NTFS_BT_VCN, NULL, NULL,
		      "index block VCN %lld is reached twice", (long long)vcn);
		return 0;
	}
	t->reached[blk >> 3] |= (uint8_t)(1u << (blk & 7));
	if (!w->buf[depth] && !(w->buf[depth] = malloc(t->block_size)))
		return -ENOMEM;
	buf = w->buf[depth];
	if (t->ops->read(t->read_arg, byte, t->block_size, buf)) {
		fault(w, NTFS_BT_BLOCK, NULL, NULL,
		      "index block VCN %lld is in no clusters", (long long)vcn);
		return 0;
	}
	if (ntfs_record_check(buf, t->block_size, NTFS_MAGIC_INDX, why) != NTFS_REC_OK) {
		fault(w, NTFS_BT_BLOCK, NULL, NULL, "%s", why);
		return 0;
	}
	memcpy(&b, buf, sizeof(b));
	if ((int64_t)le64toh((uint64_t)b.index_block_vcn) != vcn) {
		fault(w, NTFS_BT_VCN, NULL, NULL,
		      "index block at VCN %lld says VCN %lld", (long long)vcn,
		      (long long)le64toh((uint64_t)b.index_block_vcn));
		return 0;
	}
	if (ntfs_index_block_parse(buf, t->block_size, vcn, &ents, &elen, why)) {
		fault(w, NTFS_BT_CORRUPT, NULL, NULL, "%s", why);
		return 0;
	}
	return walk_node(w, ents, elen, depth, b.ih.flags & 1,
			 chain ? (struct at){ vcn, parent.vcn, pos, parent.top,
					      parent.top_parent, parent.top_pos } :
				 (struct at){ vcn, parent.vcn, pos, vcn,
					      parent.vcn, pos });
}

static void check_order(struct walk *w, const struct ntfs_ie_view *ie, int depth)
{
	struct ntfs_bt *t = w->t;
	int c;

	if (!w->have_prev)
		return;
	c = ntfs_collate(t->collation, t->upcase, w->prev.key, w->prev.key_len,
			 ie->key, ie->key_len);
	if (c == NTFS_COLLATE_BAD || c < 0)
		return;
	if (c == 0)
		fault(w, NTFS_BT_DUPLICATE, &w->prev, ie, "two entries have the same key");
	else if (w->prev_depth == depth)
		fault(w, NTFS_BT_ORDER, &w->prev, ie, "keys out of order in a node");
	else
		fault(w, NTFS_BT_SEPARATOR, &w->prev, ie,
		      "a key is not between the separators of the node above");
}

/* Entries of a node at DEPTH (the block AT, or the root) whose header
 * says NODE (entries have sub-nodes). */
static int walk_node(struct walk *w, const uint8_t *ents, uint32_t len,
		     int depth, bool node, struct at at)
{
	struct ntfs_bt *t = w->t;
	bool fn_keys = t->type == NTFS_AT_FILE_NAME, mixed = false;
	struct ntfs_ie_view ie;
	char why[NTFS_WHY];
	uint32_t off = 0;
	uint32_t own = 0;		/* entries of this node */
	int r, ret;

	for (;;) {
		r = ntfs_ie_next(ents, len, &off, fn_keys, &ie, why);
		if (r < 0) {
			fault(w, NTFS_BT_CORRUPT, NULL, NULL, "%s", why);
			return 0;
		}
		if (!(ie.flags & NTFS_IE_NODE) != !node && !mixed) {
			fault(w, NTFS_BT_DEPTH, NULL, NULL,
			      "a node at depth %d mixes entries with and without sub-nodes",
			      depth);
			mixed = true;
		}
		if (ie.flags & NTFS_IE_NODE) {
			ret = descend(w, ie.child_vcn, depth + 1, at, own,
				      depth > 0 && r == 0 && !own);
			if (ret || t->stopped)
				return ret;
		}
		if (r == 0)
			break;
		check_order(w, &ie, depth);
		t->entries++;
		own++;
		if (t->ops->entry && t->ops->entry(t->arg, &ie)) {
			t->stopped = true;
			return 0;
		}
		w->prev = ie;
		w->prev_depth = depth;
		w->have_prev = true;
	}
	if (!node && !own && depth > 0 && !mixed) {
		if (t->ops->empty_leaf) {
			t->ops->empty_leaf(t->arg, at.vcn, at.top, at.top_parent,
					   at.top_pos);
		} else if (t->ops->empty_leaf_fault && t->ops->fault) {
			char msg[NTFS_WHY];

			snprintf(msg, sizeof(msg),
				 "index block at VCN %lld is a leaf with no entry",
				 (long long)at.vcn);
			t->ops->fault(t->arg, NTFS_BT_SHAPE, NULL, NULL, msg);
		}
	}
	if (!node) {
		if (w->leaf_depth < 0)
			w->leaf_depth = depth;
		else if (w->leaf_depth != depth)
			fault(w, NTFS_BT_DEPTH, NULL, NULL,
			      "leaves at depths %d and %d", w->leaf_depth, depth);
	}
	return 0;
}

static void check_bitmap(struct walk *w)
{
	struct ntfs_bt *t = w->t;

	for (uint64_t b = 0; b < t->nblocks; b++) {
		bool used = b / 8 < t->bitmap_len && (t->bitmap[b / 8] >> (b % 8) & 1);
		bool reached = t->reached[b >> 3] & (1u << (b & 7));

		if (used != reached) {
			fault(w, NTFS_BT_BITMAP, NULL, NULL,
			      "index bitmap says block %llu is %s, the tree says %s",
			      (unsigned long long)b, used ? "used" : "free",
			      used ? "unused" : "used");
			return;
		}
	}
}

int ntfs_bt_walk(struct ntfs_bt *t)
{
	struct walk w = { .t = t, .leaf_depth = -1 };
	struct ntfs_index_root root;
	const uint8_t *ents;
	uint32_t elen;
	char why[NTFS_WHY];
	int ret = 0;

	t->depth = 0;
	t->entries = t->nblocks = 0;
	t->faults = 0;
	t->stopped = false;
	t->reached = NULL;
	if (ntfs_index_root_parse(t->root, t->root_len, &root, &ents, &elen, why)) {
		fault(&w, NTFS_BT_CORRUPT, NULL, NULL, "%s", why);
		return 0;
	}
	if (le32toh(root.type) != t->type ||
	    le32toh(root.collation_rule) != t->collation) {
		fault(&w, NTFS_BT_CORRUPT, NULL, NULL,
		      "index root has type 0x%x and collation 0x%x, not 0x%x and 0x%x",
		      le32toh(root.type), le32toh(root.collation_rule), t->type,
		      t->collation);
		return 0;
	}
	t->block_size = le32toh(root.index_block_size);
	if ((root.ih.flags & 1) && !t->has_alloc) {
		fault(&w, NTFS_BT_SHAPE, NULL, NULL,
		      "large index without an index allocation");
		return 0;
	}
	if (t->has_alloc) {
		if (t->block_size < 512 || t->block_size > 65536 ||
		    t->block_size & (t->block_size - 1) || !t->cluster_size) {
			fault(&w, NTFS_BT_SHAPE, NULL, NULL,
			      "index block size %u is impossible", t->block_size);
			return 0;
		}
		w.vcn_unit = t->block_size >= t->cluster_size ? t->cluster_size : 512;
		/* a data size past what the runs map (a damaged size of
		 * 2^45 bytes, say) is a fault; the blocks walked and
		 * counted are the mapped ones */
		w.alloc_end = t->alloc_size;
		if (t->alloc_mapped && t->alloc_size > t->alloc_mapped) {
			fault(&w, NTFS_BT_SHAPE, NULL, NULL,
			      "index allocation of %llu bytes has %llu bytes mapped",
			      (unsigned long long)t->alloc_size,
			      (unsigned long long)t->alloc_mapped);
			w.alloc_end = t->alloc_mapped;
		}
		t->nblocks = w.alloc_end / t->block_size;
		t->reached = calloc(1, t->nblocks / 8 + 1);
		if (!t->reached)
			return -ENOMEM;
	}
	ret = walk_node(&w, ents, elen, 0, root.ih.flags & 1,
			(struct at){ -1, -1, 0, -1, -1, 0 });
	if (!ret && w.leaf_depth > 0)
		t->depth = (uint32_t)w.leaf_depth;
	if (!ret && !t->stopped && t->has_alloc && t->bitmap)
		check_bitmap(&w);
	for (int i = 0; i <= MAX_DEPTH; i++)
		free(w.buf[i]);
	return ret;
}

void ntfs_bt_free(struct ntfs_bt *t)
{
	free(t->reached);
	t->reached = NULL;
}
