// SPDX-License-Identifier: GPL-2.0-or-later
/* Superblock checksum: crc32c from ISA-L, the way EROFS defines it. */
#include "config.h"

#include <endian.h>
#include <isa-l/crc.h>
#include <limits.h>
#include <string.h>

#include "erofs/erofs_fs.h"
#include "erofs/format.h"

uint32_t erofs_crc32c(uint32_t seed, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	/* ISA-L's crc32_iscsi takes an int length and neither inverts the
	 * seed nor the result, which is exactly the kernel's crc32c() */
	while (len) {
		int chunk = len > INT_MAX ? INT_MAX : (int)len;

		seed = crc32_iscsi((unsigned char *)p, chunk, seed);
		p += chunk;
		len -= (size_t)chunk;
	}
	return seed;
}

void erofs_sb_set_checksum(void *sb_block, unsigned int blksz)
{
	struct erofs_super_block *sb = sb_block;
	/* the checksum covers the rest of the superblock's block; for block
	 * sizes below 2 KiB that is what follows offset 1024 in that block */
	unsigned int len = blksz > EROFS_SUPER_OFFSET ?
			   blksz - EROFS_SUPER_OFFSET : blksz;

	sb->checksum = 0;
	sb->checksum = htole32(erofs_crc32c(~0u, sb_block, len));
}
