// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Index entries, $INDEX_ROOT values and INDX blocks.  Callers pass entries
 * already in collation order, ending with the end entry.
 */
#include "config.h"

#include <endian.h>
#include <string.h>

#include "ntfs/format.h"

size_t ntfs_ie_file_name(uint8_t *out, uint64_t mref, const void *fn,
			 size_t fnlen)
{
	struct ntfs_index_entry *e = (struct ntfs_index_entry *)out;
	size_t len = ntfs_align(sizeof(*e) + fnlen, 8);

	memset(out, 0, len);
	e->u.indexed_file = htole64(mref);
	e->length = htole16((uint16_t)len);
	e->key_length = htole16((uint16_t)fnlen);
	memcpy(out + sizeof(*e), fn, fnlen);
	return len;
}

size_t ntfs_ie_view(uint8_t *out, const void *key, uint16_t klen,
		    const void *data, uint16_t dlen)
{
	struct ntfs_index_entry *e = (struct ntfs_index_entry *)out;
	size_t doff = sizeof(*e) + klen;
	size_t len = ntfs_align(doff + dlen, 8);

	memset(out, 0, len);
	e->u.v.data_offset = htole16((uint16_t)doff);
	e->u.v.data_length = htole16(dlen);
	e->length = htole16((uint16_t)len);
	e->key_length = htole16(klen);
	memcpy(out + sizeof(*e), key, klen);
	memcpy(out + doff, data, dlen);
	return len;
}

size_t ntfs_ie_end(uint8_t *out, bool node, int64_t vcn)
{
	struct ntfs_index_entry *e = (struct ntfs_index_entry *)out;
	size_t len = sizeof(*e) + (node ? 8 : 0);

	memset(out, 0, len);
	e->length = htole16((uint16_t)len);
	e->flags = htole16(NTFS_IE_END | (node ? NTFS_IE_NODE : 0));
	if (node) {
		int64_t v = (int64_t)htole64((uint64_t)vcn);

		memcpy(out + sizeof(*e), &v, 8);
	}
	return len;
}

size_t ntfs_index_root(uint8_t *out, uint32_t type, uint32_t collation,
		       uint32_t block_size, uint32_t cluster_size,
		       const uint8_t *entries, size_t elen, bool large)
{
	struct ntfs_index_root *ir = (struct ntfs_index_root *)out;
	uint32_t ilen = (uint32_t)(sizeof(ir->ih) + elen);

	memset(ir, 0, sizeof(*ir));
	ir->type = htole32(type);
	ir->collation_rule = htole32(collation);
	ir->index_block_size = htole32(block_size);
	/* in clusters, or in 512-byte units when a block is below a cluster */
	ir->clusters_per_index_block = (int8_t)(block_size >= cluster_size ?
		block_size / cluster_size : block_size / NTFS_USA_STRIDE);
	ir->ih.entries_offset = htole32(sizeof(ir->ih));
	ir->ih.index_length = htole32(ilen);
	ir->ih.allocated_size = htole32(ilen);
	ir->ih.flags = large ? 1 : 0;
	memcpy(out + sizeof(*ir), entries, elen);
	return sizeof(*ir) + elen;
}

int ntfs_index_block(uint8_t *out, uint32_t block_size, int64_t vcn,
		     const uint8_t *entries, size_t elen, uint16_t usn, bool node)
{
	struct ntfs_index_block *b = (struct ntfs_index_block *)out;
	uint16_t cnt = (uint16_t)(block_size / NTFS_USA_STRIDE + 1);
	uint32_t eoff = (uint32_t)ntfs_align(sizeof(*b) + 2u * cnt, 8);

	if (eoff + elen > block_size)
		return -1;
	memset(out, 0, block_size);
	b->h.magic = htole32(NTFS_MAGIC_INDX);
	b->h.usa_ofs = htole16(sizeof(*b));
	b->h.usa_count = htole16(cnt);
	b->index_block_vcn = (int64_t)htole64((uint64_t)vcn);
	b->ih.entries_offset = htole32(eoff - offsetof(struct ntfs_index_block, ih));
	b->ih.index_length = htole32((uint32_t)(eoff + elen - offsetof(struct ntfs_index_block, ih)));
	b->ih.allocated_size = htole32(block_size - offsetof(struct ntfs_index_block, ih));
	b->ih.flags = node ? 1 : 0;	/* entries have sub-nodes */
	memcpy(out + eoff, entries, elen);
	ntfs_fixup_apply(out, block_size, usn);
	return 0;
}
