/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libntfs: a file's $FILE_NAME attribute given a new value in its record
 * (name_edit.c), as a checker renames a file whose name collides.  Pure:
 * the caller reads the record and writes the result.
 */
#ifndef NTFS_NAME_EDIT_H
#define NTFS_NAME_EDIT_H

#include <stdbool.h>
#include <stdint.h>

/* Checked record REC (SIZE bytes) into OUT with its first resident
 * $FILE_NAME whose value is OLD (OLD_LEN bytes) given the value FN
 * (FN_LEN bytes): the attribute keeps its place, header and instance;
 * every other attribute is kept byte for byte.  *WAS_DOS: the old name
 * was in the DOS namespace.  0; 1 when REC has no such name; -1 with WHY
 * (the record does not parse, or is full). */
int ntfs_rec_replace_file_name(const uint8_t *rec, uint32_t size, uint8_t *out,
			       const uint8_t *old, uint32_t old_len,
			       const uint8_t *fn, uint32_t fn_len,
			       bool *was_dos, char *why);

#endif
