/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Pure EROFS format helpers (no I/O), shared by the builder and the unit
 * tests: superblock checksum, xattr name prefixes and bloom filter bits,
 * directory block packing.
 */
#ifndef FSFORGE_EROFS_FORMAT_H
#define FSFORGE_EROFS_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* crc32c as EROFS uses it: seed ~0, no final inversion */
uint32_t erofs_crc32c(uint32_t seed, const void *buf, size_t len);
/* Fill sb->checksum for a superblock block of BLKSZ bytes starting at the
 * superblock (offset 1024 of the image). */
void erofs_sb_set_checksum(void *sb_block, unsigned int blksz);

/* Split a full xattr name into a standard namespace index and the suffix
 * offset.  Returns 0 (and *index, *suffix_off) or -1 if no namespace fits. */
int erofs_xattr_std_prefix(const char *name, uint8_t *index,
			   size_t *suffix_off);
/* Bloom filter bit of a name: BASE_INDEX is the standard namespace, NAME is
 * everything after that namespace's prefix. */
unsigned int erofs_xattr_filter_bit(uint8_t base_index, const char *name,
				    size_t len);

/* A long xattr name prefix: namespace index + infix. */
struct erofs_long_prefix {
	uint8_t base_index;
	const char *infix;
	size_t infix_len;
};
/* Encode the long prefix table (4-byte aligned records of le16 size,
 * base_index, infix).  Returns the byte size; writes only if OUT != NULL. */
size_t erofs_prefix_table_encode(const struct erofs_long_prefix *p, size_t n,
				 uint8_t *out);

/* One directory entry as the packer sees it. */
struct erofs_dirent_in {
	const char *name;
	uint16_t name_len;
	uint8_t file_type;
	uint64_t nid;
};
/* Sort entries bytewise by name (as the on-disk format requires). */
void erofs_dirents_sort(struct erofs_dirent_in *e, size_t n);
/* Size in bytes of the directory made of sorted entries E: full blocks plus
 * the used part of the last block. */
uint64_t erofs_dir_size(const struct erofs_dirent_in *e, size_t n,
			unsigned int blksz);
/* Encode the directory into OUT (erofs_dir_size rounded up to BLKSZ bytes,
 * zeroed by the caller). */
void erofs_dir_encode(const struct erofs_dirent_in *e, size_t n,
		      unsigned int blksz, uint8_t *out);

#endif
