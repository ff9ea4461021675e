/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libntfs: the one index builder.  A whole index (a directory's $I30 or a
 * view index: $SII, $SDH, $O, $Q, $R) from its entries, bottom up: leaves
 * filled in collation order, one separator entry promoted per node
 * boundary, levels added until the top level fits in the index root.
 * Pure (no I/O); mkfs.ntfs builds every index of a fresh volume with it,
 * fsck.ntfs rebuilds damaged ones.
 */
#ifndef NTFS_INDEX_BUILD_H
#define NTFS_INDEX_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One entry: for $I30 the indexed file and its $FILE_NAME value (the
 * key); for a view index its key and data (MREF only orders equal keys). */
struct ntfs_ib_entry {
	uint64_t mref;
	const uint8_t *key;
	uint16_t key_len;
	const uint8_t *data;
	uint16_t data_len;
};

/* What to build: TYPE is NTFS_AT_FILE_NAME for $I30, 0 for a view index;
 * COLLATION its rule (UPCASE for file names, used by ntfs_ib_sort);
 * ROOT_ROOM the most bytes the $INDEX_ROOT value may take; BLOCK_SIZE and
 * CLUSTER_SIZE the INDX geometry; LARGE: always a root over INDX blocks
 * (at least one), as an index whose $INDEX_ALLOCATION must stay needs. */
struct ntfs_ib_spec {
	uint32_t type, collation;
	const uint16_t *upcase;
	uint32_t root_room, block_size, cluster_size;
	bool large;
};

struct ntfs_ib_result {
	uint8_t *root;			/* the whole $INDEX_ROOT value */
	uint32_t root_len;
	bool large;			/* blocks exist */
	uint8_t *blocks;		/* nblocks * block_size, fixups applied */
	uint32_t nblocks;		/* block i is at VCN i * block_size / vcn unit */
	uint32_t depth;			/* levels below the root */
};

/*
 * ENTRIES (N of them) must already be in collation order (ntfs_ib_sort).
 * Returns 0, -EINVAL when an entry cannot fit a block (or an argument is
 * impossible), -ENOMEM.
 */
int ntfs_index_build_spec(const struct ntfs_ib_spec *spec,
			  const struct ntfs_ib_entry *entries, size_t n,
			  struct ntfs_ib_result *out);
/* ENTRIES into SPEC's collation order (equal keys by MREF). */
void ntfs_ib_sort(struct ntfs_ib_entry *entries, size_t n,
		  const struct ntfs_ib_spec *spec);
/*
 * The same for a directory ($I30, file name collation).  ROOT_ROOM is the
 * most bytes the $INDEX_ROOT value may take; BLOCK_SIZE and CLUSTER_SIZE
 * give the INDX geometry.  Returns 0, -EINVAL when an entry cannot fit a
 * block (or an argument is impossible), -ENOMEM.
 */
int ntfs_index_build(const struct ntfs_ib_entry *entries, size_t n,
		     uint32_t root_room, uint32_t block_size,
		     uint32_t cluster_size, struct ntfs_ib_result *out);
/* The same; LARGE: always a root over INDX blocks (at least one), as a
 * directory whose $INDEX_ALLOCATION must stay needs. */
int ntfs_index_build_shape(const struct ntfs_ib_entry *entries, size_t n,
			   uint32_t root_room, uint32_t block_size,
			   uint32_t cluster_size, bool large,
			   struct ntfs_ib_result *out);
void ntfs_index_build_free(struct ntfs_ib_result *r);

/* The VCN of index block I for this geometry. */
static inline int64_t ntfs_index_block_vcn(uint32_t i, uint32_t block_size,
					   uint32_t cluster_size)
{
	uint32_t unit = block_size >= cluster_size ? cluster_size : 512;

	return (int64_t)i * (block_size / unit);
}

#endif
