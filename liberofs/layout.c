// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 3: decide where everything goes.  All sizes are known before any
 * byte is read (a directory's size depends on its names only, a file's
 * fingerprint xattr has a fixed size), so nids and block addresses are fixed
 * here, in breadth-first order, and the parallel data pass only fills them
 * in.  That is what makes the image byte-identical whatever --workers is.
 *
 * Image layout (meta_blkaddr = 0, so a nid is a 32-byte slot of the image):
 *   [0, 1024) zero | superblock | long prefix table | inodes with their
 *   xattrs and inline tails ... | shared xattrs (block aligned) |
 *   data blocks (block aligned)
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>

#include "erofs/erofs_fs.h"
#include "internal.h"

static bool want_compact(const struct erofs_build *b, const struct erofs_node *n)
{
	if (b->opts->force_extended)
		return false;
	if (n->size > UINT32_MAX || n->uid > UINT16_MAX ||
	    n->gid > UINT16_MAX || n->nlink > UINT16_MAX)
		return false;
	if (b->opts->ignore_mtime)
		return true;
	/* compact inodes keep seconds after the epoch and one shared nsec */
	return n->mtime >= b->epoch &&
	       n->mtime - b->epoch <= (int64_t)UINT32_MAX &&
	       n->mtime_nsec == 0;
}

/* Place one inode in the metadata stream at *pos; returns the new pos. */
static uint64_t place_inode(struct erofs_build *b, struct erofs_node *n,
			    uint64_t pos)
{
	const unsigned int bs = b->blksz;
	uint32_t isize = n->extended ? 64u : 32u;
	uint32_t head = isize + n->xattr_isize;
	uint32_t tail = (uint32_t)(n->size % bs);
	bool inlinable = tail && head + tail <= bs &&
			 !(S_ISREG(n->mode) && b->opts->noinline_data);

	n->datalayout = EROFS_LAYOUT_FLAT_PLAIN;
	n->inline_size = 0;
	if (inlinable && (pos + head) % bs + tail > bs) {
		/* the tail may not cross a block: either pad to the next block
		 * or give the tail a data block of its own, whichever wastes
		 * less space */
		uint64_t room = bs - pos % bs;

		if (room < bs - tail)
			pos += room;
		else
			inlinable = false;
	}
	if (inlinable) {
		n->datalayout = EROFS_LAYOUT_FLAT_INLINE;
		n->inline_size = tail;
	}
	n->nblocks = inlinable ? n->size / bs : (n->size + bs - 1) / bs;
	n->nid = pos / EROFS_SLOT_SIZE;
	return erofs_round_up(pos + head + n->inline_size, EROFS_SLOT_SIZE);
}

int erofs_layout(struct erofs_build *b)
{
	const unsigned int bs = b->blksz;
	uint64_t pos, next;
	uint32_t ino = 0;

	b->prefix_start = EROFS_SUPER_OFFSET + 128;
	pos = b->prefix_start +
	      erofs_prefix_table_encode(b->prefixes, b->nprefixes, NULL);
	pos = erofs_round_up(pos, EROFS_SLOT_SIZE);

	for (size_t i = 0; i < b->count; i++) {
		struct erofs_node *n = b->order[i];

		if (n->master)
			continue;
		if (S_ISDIR(n->mode))
			n->size = erofs_node_dir_size(b, n);
		n->xattr_isize = erofs_node_xattr_isize(b, n);
		if (n->xattr_isize > 12u + 4u * 65534u) {
			fsf_err(b->log, "%s: too many extended attributes for one inode",
				n->name[0] ? n->name : "/");
			return -E2BIG;
		}
		n->extended = !want_compact(b, n);
		n->ino = ++ino;
		pos = place_inode(b, n, pos);
	}
	/* the root's nid must fit the superblock's 16-bit field */
	if (b->root->nid > UINT16_MAX)
		return -EFBIG;
	b->meta_end = pos;

	next = erofs_round_up(pos, bs) / bs;
	b->xattr_blkaddr = b->shared_size ? next : 0;
	next += erofs_round_up(b->shared_size, bs) / bs;
	b->data_blkaddr = next;
	for (size_t i = 0; i < b->count; i++) {
		struct erofs_node *n = b->order[i];

		if (n->master || !n->nblocks)
			continue;
		n->blkaddr = next;
		next += n->nblocks;
	}
	if (next > UINT32_MAX) {
		fsf_err(b->log, "image would need %llu blocks; EROFS without 48-bit addressing holds at most %u",
			(unsigned long long)next, UINT32_MAX);
		return -EFBIG;
	}
	b->total_blocks = next;
	return 0;
}
