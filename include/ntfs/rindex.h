/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * $Extend/$Reparse's $R index (libntfs/rindex.c): one entry per reparse
 * point, keyed by the tag and the file's reference (12 bytes, collated
 * as 32-bit words, no data).  Its keys encoded as on disk, and an $R
 * small enough to live in its index root rewritten there.
 */
#ifndef NTFS_RINDEX_H
#define NTFS_RINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntfs/read.h"

#define NTFS_R_KEY_LEN 12u
#define NTFS_R_ENTRY_LEN 32u		/* header 16, key 12, padding 4 */

struct ntfs_rp_key {
	uint32_t tag;
	uint64_t mref;			/* record | sequence << 48 */
};

/* Is A named "$R"? */
bool ntfs_attr_is_r(const struct ntfs_attr_header *a);

/* The N keys K as $R's keys on disk: NTFS_R_KEY_LEN bytes each into OUT
 * (tag, then the reference, little-endian). */
void ntfs_r_keys_encode(uint8_t *out, const struct ntfs_rp_key *k, size_t n);

/* The resident $INDEX_ROOT named $R of checked record REC (of G's record
 * size) made a root without sub-nodes holding the N keys K (in their
 * order) and its end entry, its header that of a view index of 32-bit
 * words with G's index block size; the attribute resized in place.  0, or -1 when REC
 * has no such root or it cannot grow. */
int ntfs_rec_r_root_set(uint8_t *rec, const struct ntfs_geometry *g,
			const struct ntfs_rp_key *k, size_t n);

#endif
