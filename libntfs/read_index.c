// SPDX-License-Identifier: GPL-2.0-or-later
/* Bounded parsers for index roots, INDX blocks and index entries. */
#include "config.h"

#include <endian.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "ntfs/read.h"

#define WHY(...) snprintf(why, NTFS_WHY, __VA_ARGS__)

/* The entries area described by an index header at HDR_OFF of a region
 * of LEN bytes. */
static int header_entries(const uint8_t *base, uint32_t len, uint32_t hdr_off,
			  const uint8_t **entries, uint32_t *elen, char *why)
{
	struct ntfs_index_header ih;
	uint64_t start, end;

	if ((uint64_t)hdr_off + sizeof(ih) > len)
		return WHY("index header cut off"), -1;
	memcpy(&ih, base + hdr_off, sizeof(ih));
	start = (uint64_t)hdr_off + le32toh(ih.entries_offset);
	end = (uint64_t)hdr_off + le32toh(ih.index_length);
	if (le32toh(ih.entries_offset) < sizeof(ih) || start > end || end > len ||
	    le32toh(ih.index_length) > le32toh(ih.allocated_size))
		return WHY("index header: entries %u..%u of %u allocated",
			   le32toh(ih.entries_offset), le32toh(ih.index_length),
			   le32toh(ih.allocated_size)), -1;
	*entries = base + start;
	*elen = (uint32_t)(end - start);
	return 0;
}

int ntfs_index_root_parse(const uint8_t *val, uint32_t len,
			  struct ntfs_index_root *root, const uint8_t **entries,
			  uint32_t *elen, char *why)
{
	if (len < sizeof(*root))
		return WHY("index root of %u bytes", len), -1;
	memcpy(root, val, sizeof(*root));
	/* the root holds what it allocates (as ntfs-3g and ntfsck require) */
	if ((uint64_t)le32toh(root->ih.allocated_size) +
	    offsetof(struct ntfs_index_root, ih) > len)
		return WHY("index root allocated size %u over its %u bytes",
			   le32toh(root->ih.allocated_size), len), -1;
	return header_entries(val, len, offsetof(struct ntfs_index_root, ih),
			      entries, elen, why);
}

int ntfs_index_block_parse(const uint8_t *blk, uint32_t size, int64_t vcn,
			   const uint8_t **entries, uint32_t *elen, char *why)
{
	struct ntfs_index_block b;

	if (size < sizeof(b))
		return WHY("index block of %u bytes", size), -1;
	memcpy(&b, blk, sizeof(b));
	if ((int64_t)le64toh((uint64_t)b.index_block_vcn) != vcn)
		return WHY("index block says VCN %lld, found at %lld",
			   (long long)le64toh((uint64_t)b.index_block_vcn),
			   (long long)vcn), -1;
	/* the block's header allocates the whole block (ntfs-3g refuses
	 * the directory otherwise) */
	if ((uint64_t)le32toh(b.ih.allocated_size) +
	    offsetof(struct ntfs_index_block, ih) != size)
		return WHY("index block allocated size %u, not the block's %u",
			   le32toh(b.ih.allocated_size),
			   size - (uint32_t)offsetof(struct ntfs_index_block, ih)), -1;
	return header_entries(blk, size, offsetof(struct ntfs_index_block, ih),
			      entries, elen, why);
}

int ntfs_ie_next(const uint8_t *node, uint32_t len, uint32_t *off,
		 bool file_name_keys, struct ntfs_ie_view *ie, char *why)
{
	struct ntfs_index_entry e;
	uint32_t o = *off, elen, klen, room;

	memset(ie, 0, sizeof(*ie));
	ie->child_vcn = -1;
	if ((uint64_t)o + sizeof(e) > len)
		return WHY("index entries end without an end entry"), -1;
	memcpy(&e, node + o, sizeof(e));
	elen = le16toh(e.length);
	klen = le16toh(e.key_length);
	ie->flags = le16toh(e.flags);
	if (elen < sizeof(e) || elen & 7 || (uint64_t)o + elen > len)
		return WHY("index entry at %u has length %u", o, elen), -1;
	room = elen - (uint32_t)sizeof(e);
	if (ie->flags & NTFS_IE_NODE) {
		int64_t vcn;

		if (room < 8)
			return WHY("node entry at %u has no room for its VCN", o), -1;
		memcpy(&vcn, node + o + elen - 8, 8);
		ie->child_vcn = (int64_t)le64toh((uint64_t)vcn);
		if (ie->child_vcn < 0)
			return WHY("node entry at %u points to VCN %lld", o,
				   (long long)ie->child_vcn), -1;
		room -= 8;
	}
	*off = o + elen;
	/* the end entry has no key, but a key length past the entry is
	 * refused (ntfsck: "no vcn space in index node") */
	if (klen > room)
		return WHY("%s at %u: key of %u bytes in %u",
			   ie->flags & NTFS_IE_END ? "end entry" : "index entry", o, klen, room), -1;
	if (ie->flags & NTFS_IE_END)
		return 0;
	ie->mref = le64toh(e.u.indexed_file);
	ie->key = node + o + sizeof(e);
	ie->key_len = (uint16_t)klen;
	if (file_name_keys) {
		struct ntfs_file_name fn;

		if (klen < sizeof(fn))
			return WHY("index entry at %u: file name key of %u bytes", o, klen), -1;
		memcpy(&fn, ie->key, sizeof(fn));
		if (!fn.name_length || sizeof(fn) + 2u * fn.name_length > klen)
			return WHY("index entry at %u: name of %u characters in a %u-byte key",
				   o, fn.name_length, klen), -1;
		ie->parent = le64toh(fn.parent_directory);
		ie->name_len = fn.name_length;
		ie->name = ie->key + sizeof(fn);
	}
	return 1;
}
