/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libntfs: the one walker of NTFS B+trees, for the directory indexes
 * ($I30) and the view indexes ($SII, $SDH, $O, $Q, $R).  The tree is
 * walked in key order from the $INDEX_ROOT value through the INDX blocks
 * of $INDEX_ALLOCATION (read by a callback, so that the caller's I/O layer
 * does the reading); each block is visited once and the depth is bounded,
 * so a looping or deep tree cannot hang it.  It checks:
 *   - every node and entry is well formed (ntfs_ie_next);
 *   - every key is above the key before it in key order, under the
 *     index's collation rule: inside a node, and against the separators
 *     of the nodes above (a subtree's keys lie between the parent's
 *     entries around it);
 *   - every leaf is at the same depth, and a node's entries all have
 *     sub-nodes or none have (as its header flag says);
 *   - each sub-node VCN is inside the allocation, reached once, names a
 *     block that says it is at that VCN;
 *   - the $BITMAP (its bytes, however the caller read them) marks exactly
 *     the blocks reached;
 *   - no leaf block holds nothing but its end entry (told apart from the
 *     faults: the tree is whole, the block is one ntfs-3g and the Linux
 *     driver free; only callers that ask are told).
 * Faults go to a callback; the walk goes on where it can (a bad subtree is
 * skipped), so that the caller still sees every entry it can reach.
 * Pure: no I/O of its own.
 */
#ifndef NTFS_BTREE_H
#define NTFS_BTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntfs/read.h"

enum ntfs_bt_fault {
	NTFS_BT_CORRUPT,	/* root, node or entry unparsable */
	NTFS_BT_ORDER,		/* two keys of one node in the wrong order */
	NTFS_BT_SEPARATOR,	/* a key not between its parent's separators */
	NTFS_BT_DUPLICATE,	/* two entries with equal keys */
	NTFS_BT_DEPTH,		/* leaves at different depths, or a node
				 * mixing entries with and without sub-nodes */
	NTFS_BT_VCN,		/* sub-node VCN outside, reached twice, or the
				 * block says another VCN */
	NTFS_BT_BLOCK,		/* block unreadable, not INDX, BAAD, torn */
	NTFS_BT_BITMAP,		/* $BITMAP disagrees with the blocks reached */
	NTFS_BT_SHAPE,		/* root and allocation disagree (large flag,
				 * allocation missing, sub-nodes in a small
				 * index) */
};

struct ntfs_bt;
struct ntfs_bt_ops {
	/* LEN bytes at BYTE of the index allocation into BUF: 0 or -1
	 * (READ_ARG of struct ntfs_bt) */
	int (*read)(void *read_arg, uint64_t byte, uint32_t len, void *buf);
	/* every entry (not end entries) in key order; nonzero stops the walk */
	int (*entry)(void *arg, const struct ntfs_ie_view *ie);
	/* a fault: for ORDER, SEPARATOR and DUPLICATE, A is the entry before
	 * B (both valid only during the call); WHY says what is wrong */
	void (*fault)(void *arg, enum ntfs_bt_fault f,
		      const struct ntfs_ie_view *a,
		      const struct ntfs_ie_view *b, const char *why);
	/* a leaf block (below the root) whose only entry is its end entry,
	 * at VCN, below TOP: the highest of the blocks above it (itself
	 * included) that hold nothing but their end entry, pointed at by
	 * entry POS (0: the first) of the node at PARENT (-1: the root);
	 * NULL: not looked for */
	void (*empty_leaf)(void *arg, int64_t vcn, int64_t top,
			   int64_t parent, uint32_t pos);
	/* with no EMPTY_LEAF: true passes such a leaf to FAULT as
	 * NTFS_BT_SHAPE ("index block at VCN N is a leaf with no entry"),
	 * for an index that is rebuilt rather than mended in place; it is
	 * not counted in FAULTS */
	bool empty_leaf_fault;
};

struct ntfs_bt {
	/* in */
	const uint8_t *root;		/* the $INDEX_ROOT value */
	uint32_t root_len;
	uint32_t type, collation;	/* expected: indexed attribute type
					 * (0 for a view index) and rule */
	const uint16_t *upcase;		/* file names; NULL: order not judged */
	bool has_alloc;			/* $INDEX_ALLOCATION exists */
	uint64_t alloc_size;		/* its data size */
	uint64_t alloc_mapped;		/* bytes its runs map; 0: not known
					 * (alloc_size trusted) */
	uint32_t cluster_size;
	const uint8_t *bitmap;		/* $BITMAP value; NULL: not judged */
	uint64_t bitmap_len;
	const struct ntfs_bt_ops *ops;
	void *arg;			/* of ENTRY and FAULT */
	void *read_arg;			/* of READ */
	/* out */
	uint32_t block_size;		/* from the root */
	uint32_t depth;			/* levels below the root */
	uint64_t entries;		/* entries seen */
	uint64_t nblocks;		/* blocks in the allocation */
	uint8_t *reached;		/* one bit per block (freed by
					 * ntfs_bt_free) */
	unsigned int faults;
	bool stopped;			/* the entry callback stopped it */
};

/* Walk T.  0 when walked (look at T->faults), -ENOMEM. */
int ntfs_bt_walk(struct ntfs_bt *t);
void ntfs_bt_free(struct ntfs_bt *t);

#endif
