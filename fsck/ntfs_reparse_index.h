/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fsck.ntfs: the reparse points found (pass2_special.c) against the
 * entries of $Extend/$Reparse's $R index (pass2_rindex.c, the one place
 * that reads that index).
 */
#ifndef FSCK_NTFS_REPARSE_INDEX_H
#define FSCK_NTFS_REPARSE_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "ntfs/rindex.h"		/* struct ntfs_rp_key */

struct ntfs_check;

struct ntfs_rp_set {
	struct ntfs_rp_key *v;
	size_t n, cap;
};

int ntfs_rp_set_add(struct ntfs_rp_set *s, uint32_t tag, uint64_t mref);
void ntfs_rp_set_free(struct ntfs_rp_set *s);
/* Compare $R with SEEN (every usable reparse point): missing and stale
 * entries reported, $R rewritten from SEEN when accepted and it fits in
 * its index root; a larger $R: SEEN's keys kept in C for pass 3's index
 * builder. */
void ntfs_reparse_index_check(struct ntfs_check *c, struct ntfs_rp_set *seen);

#endif
