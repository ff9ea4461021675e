// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Read side: directory blocks.  Each block starts with its dirents; the
 * first nameoff gives their count; names follow in the same order, each
 * ending where the next starts (the last at the first NUL or the block
 * end).  Names must be 1..255 bytes, inside the block, without '/' or
 * NUL, and sorted bytewise across the whole directory.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "erofs/erofs_fs.h"
#include "erofs/read.h"

static int name_cmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
	int c = memcmp(a, b, al < bl ? al : bl);

	return c ? c : (al > bl) - (al < bl);
}

int erofs_read_dir(struct erofs_img *img, const struct erofs_rinode *dir,
		   const uint8_t *data, uint64_t size, erofs_dirent_fn fn,
		   void *ctx)
{
	return erofs_read_dir_split(img, dir, data, size, NULL, size, fn, ctx);
}

int erofs_read_dir_split(struct erofs_img *img, const struct erofs_rinode *dir,
			 const uint8_t *blocks, uint64_t blocks_len,
			 const uint8_t *tail, uint64_t size,
			 erofs_dirent_fn fn, void *ctx)
{
	const uint8_t *prev = NULL;
	size_t prevlen = 0;
	int ret;

	for (uint64_t off = 0, blk = 0; off < size; off += img->blksz, blk++) {
		/* BLOCKS_LEN is a whole number of blocks: no block
		 * straddles the two pieces */
		const uint8_t *b = off < blocks_len ? blocks + off :
				   tail + (off - blocks_len);
		uint64_t blen = size - off < img->blksz ? size - off : img->blksz;
		struct erofs_dirent de;
		uint32_t first, count, prevoff = 0;

		if (blen < sizeof(de))
			return erofs_corrupt(img, "directory inode %" PRIu64 ": block %" PRIu64 " holds %" PRIu64 " bytes, less than one entry",
					     dir->nid, blk, blen);
		memcpy(&de, b, sizeof(de));
		first = le16toh(de.nameoff);
		if (first < sizeof(de) || first % sizeof(de) || first >= blen)
			return erofs_corrupt(img, "directory inode %" PRIu64 ": block %" PRIu64 ": first name offset %u is invalid",
					     dir->nid, blk, first);
		count = first / (uint32_t)sizeof(de);
		for (uint32_t i = 0; i < count; i++) {
			uint32_t nameoff, end;
			const uint8_t *name;
			size_t len;

			memcpy(&de, b + i * sizeof(de), sizeof(de));
			nameoff = le16toh(de.nameoff);
			if (i + 1 < count) {
				struct erofs_dirent nx;

				memcpy(&nx, b + (i + 1) * sizeof(de), sizeof(nx));
				end = le16toh(nx.nameoff);
			} else {
				end = (uint32_t)blen;
			}
			if (nameoff < first || nameoff <= prevoff || end > blen ||
			    end <= nameoff)
				return erofs_corrupt(img, "directory inode %" PRIu64 ": block %" PRIu64 ", entry %u: name offset %u is out of order or out of the block",
						     dir->nid, blk, i, nameoff);
			prevoff = nameoff;
			name = b + nameoff;
			len = end - nameoff;
			if (i + 1 == count) {
				const uint8_t *z = memchr(name, 0, len);

				if (z)
					len = (size_t)(z - name);
			}
			if (!len || len > EROFS_NAME_LEN || memchr(name, 0, len) ||
			    memchr(name, '/', len))
				return erofs_corrupt(img, "directory inode %" PRIu64 ": block %" PRIu64 ", entry %u: invalid name of %zu bytes at offset %u",
						     dir->nid, blk, i, len, nameoff);
			if (de.file_type > EROFS_FT_SYMLINK)
				return erofs_corrupt(img, "directory inode %" PRIu64 ": entry '%.*s': unknown file type %u",
						     dir->nid, (int)len, (const char *)name,
						     de.file_type);
			if (prev && name_cmp(prev, prevlen, name, len) >= 0)
				return erofs_corrupt(img, "directory inode %" PRIu64 ": entry '%.*s' (block %" PRIu64 ") is not sorted after '%.*s'",
						     dir->nid, (int)len, (const char *)name, blk,
						     (int)prevlen, (const char *)prev);
			prev = name;
			prevlen = len;
			ret = fn(ctx, (const char *)name, len, le64toh(de.nid),
				 de.file_type);
			if (ret)
				return ret;
		}
	}
	return 0;
}
