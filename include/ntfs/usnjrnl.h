/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * $Extend/$UsnJrnl, the update sequence number change journal
 * (libntfs/usnjrnl.c): its $Max stream (resident, 32 bytes: maximum size,
 * allocation delta, journal id, lowest valid USN) and the records of its
 * $J stream (non-resident, sparse: what lies before the lowest valid USN
 * is deallocated; a record's USN is its offset in $J; records are 8-byte
 * aligned and never cross a 4 KiB page, the rest of a page is zeros).
 */
#ifndef NTFS_USNJRNL_H
#define NTFS_USNJRNL_H

#include <stddef.h>
#include <stdint.h>

#define NTFS_USN_MAX_LEN 32u
#define NTFS_USN_PAGE 4096u
/* what fsck reads of $J: its last bytes, never the whole sparse stream */
#define NTFS_USN_TAIL 8192u

struct ntfs_usn_max {
	uint64_t max_size, delta, journal_id, lowest_valid;
};

/* $Max's value VAL (LEN bytes) for a $J of J_SIZE bytes: 0 with *M, or
 * -1 with WHY (not 32 bytes, maximum size 0, lowest valid USN negative,
 * not 8-aligned or past $J's end rounded up to 8). *M is filled
 * whenever LEN is 32. */
int ntfs_usn_max_parse(const uint8_t *val, uint32_t len, uint64_t j_size,
		       struct ntfs_usn_max *m, char *why);
void ntfs_usn_max_encode(const struct ntfs_usn_max *m, uint8_t out[NTFS_USN_MAX_LEN]);
/* *M stamped as a new journal whose history is gone: the lowest valid
 * USN at the end of a $J of J_SIZE bytes (rounded up to 8), journal id
 * NEW_ID (made different from the old one), a maximum size of 0 made
 * 32 MiB and an allocation delta of 0 or above the maximum a quarter of
 * it; what else it held is kept. */
void ntfs_usn_max_restamp(struct ntfs_usn_max *m, uint64_t j_size, uint64_t new_id);

/* The records of BUF, LEN bytes of $J from offset BASE (a page
 * boundary or a record's start) to its end: 0 when each is well-formed
 * (length a multiple of 8 inside its page, major version 2, 3 or 4 with
 * a header that fits, its USN its offset, its name inside it), with
 * *COUNT records; -1 with *BAD the offset in $J of the first that is not,
 * and WHY. */
int ntfs_usn_scan(const uint8_t *buf, size_t len, uint64_t base,
		  uint64_t *count, uint64_t *bad, char *why);

#endif
