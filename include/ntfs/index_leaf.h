/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libntfs: an empty leaf dropped from an index B+tree in place
 * (index_leaf.c), as ntfs-3g's index code removes a leaf it has emptied:
 * its bit in the index's $BITMAP cleared and the pointer to it gone from
 * its parent node.  An entry of a node has a sub-node or none as its
 * siblings do, so the pointing entry cannot just lose its pointer: when it
 * is not its node's end entry, it leaves the node and its key goes down
 * into the leaf that then holds the keys right above it (the first leaf
 * below the next entry); when it is the end entry, the end entry takes the
 * sub-node of the entry before it, whose key goes down to the end of the
 * last leaf below that sub-node.  The root with nothing left but its end
 * entry becomes a small index.  A block whose one sub-node is the empty
 * leaf, holding no key itself, would be left with nothing: it goes too,
 * with any such blocks above it, as ntfs-3g's ntfs_index_rm_leaf climbs
 * (the pointer dropped is then the one to the highest of them).  Nothing
 * else changes: no key is lost, no other block moves.
 */
#ifndef NTFS_INDEX_LEAF_H
#define NTFS_INDEX_LEAF_H

#include <stdint.h>

#include "ntfs/index_read.h"

/* Drop the empty leaf of index NAME of record D at VCN, or below VCN
 * through blocks holding nothing but their end entry (all dropped), whose
 * $INDEX_ROOT and resident $BITMAP are in REC (D's record as read, fixups
 * removed; rewritten with MIRRORED as ntfs_vol_write_record takes it), its
 * blocks read and written through IX's runs; VCN is pointed at by entry
 * POS of the node at PARENT (-1: the root).  0: dropped; 1: not done in
 * place (the leaf a key goes down to has no room, the attributes are
 * elsewhere, PARENT is a block that would be left empty, the tree is not
 * as said: the caller rebuilds the index); -1: an I/O error (WHY).  REC
 * is changed whatever the outcome. */
int ntfs_index_drop_empty_leaf(struct ntfs_vol *v, const struct ntfs_index *ix,
			       uint64_t d, uint8_t *rec, const char *name,
			       int64_t vcn, int64_t parent, uint32_t pos,
			       uint64_t mirrored, char *why);

#endif
