// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * $Extend/$Reparse's $R index (include/ntfs/rindex.h): its keys encoded
 * as on disk, and a small $R rewritten in its index root: each entry a
 * 16-byte header (data offset 28 with no data, entry length 32, key
 * length 12), its key and 4 bytes of padding, then the end entry; the
 * root's header (type 0, NTOFS_ULONGS, the volume's index block size)
 * written anew.
 */
#include "config.h"

#include <endian.h>
#include <string.h>

#include "ntfs/repair.h"
#include "ntfs/rindex.h"

bool ntfs_attr_is_r(const struct ntfs_attr_header *a)
{
	const uint8_t *n = (const uint8_t *)a + le16toh(a->name_offset);

	return a->name_length == 2 && n[0] == '$' && !n[1] && n[2] == 'R' && !n[3];
}

void ntfs_r_keys_encode(uint8_t *out, const struct ntfs_rp_key *k, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t tag = htole32(k[i].tag);
		uint64_t mref = htole64(k[i].mref);

		memcpy(out + NTFS_R_KEY_LEN * i, &tag, 4);
		memcpy(out + NTFS_R_KEY_LEN * i + 4, &mref, 8);
	}
}

int ntfs_rec_r_root_set(uint8_t *rec, const struct ntfs_geometry *g,
			const struct ntfs_rp_key *k, size_t n)
{
	uint32_t size = g->mft_record_size, bs = g->index_block_size;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];

	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1) {
		uint32_t off = (uint32_t)((const uint8_t *)a - rec), vlen, len;
		struct ntfs_index_root root;
		uint8_t *v;

		if (le32toh(a->type) != NTFS_AT_INDEX_ROOT || !ntfs_attr_is_r(a) ||
		    a->non_resident)
			continue;
		ntfs_attr_value(a, &vlen);
		if (vlen < sizeof(root))
			return -1;
		len = (uint32_t)sizeof(root) + (uint32_t)n * NTFS_R_ENTRY_LEN + 16;
		if (ntfs_rec_resize_resident(rec, size, off, len))
			return -1;
		v = (uint8_t *)ntfs_attr_value((const void *)(rec + off), &vlen);
		/* the whole header anew: a view index (type 0) of 32-bit
		 * words, blocks of the volume's size, whatever was there */
		memset(&root, 0, sizeof(root));
		root.type = 0;
		root.collation_rule = htole32(NTFS_COLLATION_NTOFS_ULONGS);
		root.index_block_size = htole32(bs);
		root.clusters_per_index_block = (int8_t)(bs >= g->cluster_size ?
			bs / g->cluster_size : bs / NTFS_USA_STRIDE);
		root.ih.entries_offset = htole32(16);
		root.ih.index_length = htole32(16 + (uint32_t)n * NTFS_R_ENTRY_LEN + 16);
		root.ih.allocated_size = root.ih.index_length;
		root.ih.flags = 0;
		memcpy(v, &root, sizeof(root));
		memset(v + sizeof(root), 0, len - sizeof(root));
		for (size_t i = 0; i <= n; i++) {
			uint8_t *e = v + sizeof(root) + i * NTFS_R_ENTRY_LEN;
			uint16_t u16;

			if (i == n) {
				u16 = htole16(16);
				memcpy(e + 8, &u16, 2);
				u16 = htole16(NTFS_IE_END);
				memcpy(e + 12, &u16, 2);
				break;
			}
			u16 = htole16(28);		/* data offset */
			memcpy(e, &u16, 2);
			u16 = htole16(NTFS_R_ENTRY_LEN);
			memcpy(e + 8, &u16, 2);
			u16 = htole16(NTFS_R_KEY_LEN);
			memcpy(e + 10, &u16, 2);
			ntfs_r_keys_encode(e + 16, &k[i], 1);
		}
		return 0;
	}
	return -1;
}
