/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libntfs: the record of a new, empty directory (dir_record.c), as a
 * checker makes one again or anew: the root directory, a directory whose
 * record was lost but whose parent's index entry still holds its
 * $FILE_NAME, and /lost+found.  Pure: the caller picks the record, writes
 * it and keeps its own books.
 */
#ifndef NTFS_DIR_RECORD_H
#define NTFS_DIR_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "ntfs/format.h"
#include "ntfs/layout.h"

/* /lost+found: a $FILE_NAME value of that name in the root */
#define NTFS_LOST_FOUND "lost+found"
#define NTFS_LOST_FOUND_LEN (sizeof(NTFS_LOST_FOUND) - 1)
#define NTFS_LOST_FOUND_FN (sizeof(struct ntfs_file_name) + 2 * NTFS_LOST_FOUND_LEN)

/* Record RECNO (sequence number SEQ) of G's record size into BUF: an
 * empty directory with $STANDARD_INFORMATION SI, the $FILE_NAME value FN
 * (FN_LEN bytes) and an empty $I30 index root.  0, -ENOMEM (the index),
 * or -ENOSPC (it does not fit the record). */
int ntfs_dir_record_build(const struct ntfs_geometry *g, uint8_t *buf,
			  uint32_t recno, uint16_t seq,
			  const struct ntfs_standard_information *si,
			  const void *fn, uint32_t fn_len);

/* The root directory's $STANDARD_INFORMATION and "." $FILE_NAME (FN:
 * sizeof(struct ntfs_file_name) + 2 bytes) as mkfs.ntfs makes them, with
 * all four times NOW (NTFS time). */
void ntfs_root_dir_values(int64_t now, struct ntfs_standard_information *si,
			  uint8_t *fn);

/* Is the $FILE_NAME value V (LEN bytes, at least a header) the name
 * "lost+found" in the root directory? */
bool ntfs_is_lost_found(const uint8_t *v, uint32_t len);
/* A new /lost+found's values from the checked root record ROOT: its
 * $STANDARD_INFORMATION (the root's owner and security id, an ordinary
 * directory's attributes) and $FILE_NAME (FN: NTFS_LOST_FOUND_FN bytes,
 * parent the root with its sequence number), times NOW (NTFS time).
 * 0, or -1 when the root has no usable $STANDARD_INFORMATION. */
int ntfs_lost_found_values(const uint8_t *root, int64_t now,
			   struct ntfs_standard_information *si, uint8_t *fn);

#endif
