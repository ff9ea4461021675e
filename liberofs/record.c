// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The parts of an inode record that the data passes make - the inline tail
 * of a flat file, directory or symlink, the index of a compressed file and
 * its inline (ztailpacking) tail - are written to their place in the
 * metadata area as soon as they are made (so is a chunk-based file's block
 * map, by chunk.c): the layout has given every inode
 * its nid before any data is written.  None of them is held to the end, so
 * that the memory of a build grows with the number of inodes, not with the
 * size of their content.  The metadata writer (mkfs.c) later puts the inode
 * and its xattrs in front of what is there.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/erofs_fs.h"
#include "internal.h"

uint32_t erofs_record_head(const struct erofs_node *n)
{
	return (n->extended ? 64u : 32u) + n->xattr_isize;
}

int erofs_place_tail(struct erofs_build *b, struct erofs_node *n,
		     const uint8_t *tail)
{
	int ret;

	if (!n->inline_size)
		return 0;
	ret = fsf_dev_pwrite(&b->dev, tail, n->inline_size,
			     n->nid * EROFS_SLOT_SIZE + erofs_record_head(n));
	if (!ret)
		n->placed = true;
	return ret;
}

/* The bytes of N's record after its head: alignment padding, the index
 * (ZINDEX, as inode.c copies it) and a ztailpacking tail. */
static uint8_t *zrecord_body(struct erofs_build *b,
			     const struct erofs_node *n,
			     const uint8_t *zindex, size_t *len)
{
	uint32_t head = erofs_record_head(n);
	uint64_t z = erofs_zindex_size(b, n, head);
	uint32_t pad = (uint32_t)(erofs_round_up(head, 8) - head);
	uint8_t *body;

	*len = (size_t)z + (n->ztail ? n->inline_size : 0);
	body = calloc(1, *len);
	if (!body)
		return NULL;
	memcpy(body + pad, zindex, (size_t)z - pad);
	if (n->ztail && erofs_tail_load(b, n, body + z)) {
		free(body);
		return NULL;
	}
	return body;
}

int erofs_place_zindex(struct erofs_build *b, struct erofs_node *n,
		       uint8_t *zindex)
{
	size_t len;
	uint8_t *body;
	int ret;

	/* the packed inode is placed after all data: its record is
	 * written by fragment.c, from memory */
	if (n == b->packed) {
		n->zindex = zindex;
		return 0;
	}
	body = zrecord_body(b, n, zindex, &len);
	free(zindex);
	if (!body)
		return n->ztail ? -EIO : -ENOMEM;
	ret = fsf_dev_pwrite(&b->dev, body, len,
			     n->nid * EROFS_SLOT_SIZE + erofs_record_head(n));
	free(body);
	n->zindex = NULL;
	if (!ret)
		n->placed = true;
	return ret;
}

int erofs_read_zindex(struct erofs_build *b, const struct erofs_node *n,
		      uint8_t **zindex)
{
	uint32_t head = erofs_record_head(n);
	uint64_t z = erofs_zindex_size(b, n, head);
	uint32_t pad = (uint32_t)(erofs_round_up(head, 8) - head);
	uint8_t *buf = malloc((size_t)z - pad);
	int ret;

	if (!buf)
		return -ENOMEM;
	ret = fsf_dev_pread(&b->dev, buf, (size_t)z - pad,
			    n->nid * EROFS_SLOT_SIZE + head + pad);
	if (ret) {
		free(buf);
		return ret;
	}
	*zindex = buf;
	return 0;
}
