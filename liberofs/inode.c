// SPDX-License-Identifier: GPL-2.0-or-later
/* On-disk inode records: compact (32 bytes) or extended (64 bytes). */
#include "config.h"

#include <endian.h>
#include <string.h>
#include <sys/stat.h>

#include "erofs/erofs_fs.h"
#include "internal.h"

static uint32_t i_u_of(const struct erofs_build *b,
		       const struct erofs_node *n)
{
	if (S_ISCHR(n->mode) || S_ISBLK(n->mode))
		return n->rdev;
	if (n->compressed)
		return n->zblocks;
	if (n->chunked)	/* the chunk format: chunk size in blocks, log2 */
		return (n->chunkbits - b->opts->blkszbits) |
		       (b->chunk_indexes ? EROFS_CHUNK_FORMAT_INDEXES : 0);
	return n->nblocks ? (uint32_t)n->blkaddr : 0;
}

static uint16_t icount_of(const struct erofs_node *n)
{
	return n->xattr_isize ?
	       (uint16_t)((n->xattr_isize - 12u) / 4u + 1u) : 0;
}

/* Seconds after the epoch for a compact inode (--ignore-mtime may have
 * chosen compact for a time it cannot hold: the image time stands in). */
static uint32_t compact_mtime(const struct erofs_build *b,
			      const struct erofs_node *n)
{
	if (n->mtime < b->epoch || n->mtime - b->epoch > (int64_t)UINT32_MAX)
		return 0;
	return (uint32_t)(n->mtime - b->epoch);
}

void erofs_inode_encode(const struct erofs_build *b, const struct erofs_node *n,
			uint8_t *out)
{
	uint16_t format = (uint16_t)(n->datalayout << EROFS_I_LAYOUT_SHIFT);
	uint32_t isize;

	if (n->extended) {
		struct erofs_inode_extended d = {
			.i_format = htole16(format | EROFS_INODE_EXTENDED),
			.i_xattr_icount = htole16(icount_of(n)),
			.i_mode = htole16((uint16_t)n->mode),
			.i_size = htole64(n->size),
			.i_u = htole32(i_u_of(b, n)),
			.i_ino = htole32(n->ino),
			.i_uid = htole32(n->uid),
			.i_gid = htole32(n->gid),
			.i_mtime = htole64((uint64_t)n->mtime),
			.i_mtime_nsec = htole32(n->mtime_nsec),
			.i_nlink = htole32(n->nlink),
		};

		memcpy(out, &d, sizeof(d));
		isize = sizeof(d);
	} else {
		struct erofs_inode_compact d = {
			.i_format = htole16(format | EROFS_INODE_COMPACT),
			.i_xattr_icount = htole16(icount_of(n)),
			.i_mode = htole16((uint16_t)n->mode),
			.i_nlink = htole16((uint16_t)n->nlink),
			.i_size = htole32((uint32_t)n->size),
			.i_mtime = htole32(compact_mtime(b, n)),
			.i_u = htole32(i_u_of(b, n)),
			.i_ino = htole32(n->ino),
			.i_uid = htole16((uint16_t)n->uid),
			.i_gid = htole16((uint16_t)n->gid),
		};

		memcpy(out, &d, sizeof(d));
		isize = sizeof(d);
	}
	if (n->xattr_isize)
		erofs_node_xattr_encode(b, n, out + isize);
	if (n->tail && !n->compressed)
		memcpy(out + isize + n->xattr_isize, n->tail, n->inline_size);
	if (n->zindex) {
		uint32_t head = isize + n->xattr_isize;
		uint64_t z = erofs_zindex_size(b, n, head);
		uint32_t pad = (uint32_t)(erofs_round_up(head, 8) - head);

		memcpy(out + head + pad, n->zindex, z - pad);
		if (n->ztail)
			memcpy(out + head + z, n->tail, n->inline_size);
	}
}
