/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libntfs: a file's $FILE_NAME attributes edited in its record
 * (name_edit.c): one given a new value, as a checker renames a file whose
 * name collides; all replaced by one, as a checker moves a file to
 * /lost+found; all removed, from an extension record.  Pure: the caller
 * reads the record and writes the result.
 */
#ifndef NTFS_NAME_EDIT_H
#define NTFS_NAME_EDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntfs/layout.h"

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

/* Checked record REC (SIZE bytes) into OUT with every $FILE_NAME
 * replaced by one resident, indexed $FILE_NAME of value FN (FN_LEN
 * bytes), in its place by type; every other attribute kept byte for
 * byte; the link count 1.  0, or -1 with WHY (the record does not parse,
 * or is full). */
int ntfs_rec_set_only_name(const uint8_t *rec, uint32_t size, uint8_t *out,
			   const uint8_t *fn, uint32_t fn_len, char *why);

/* Every $FILE_NAME attribute removed from checked record REC (SIZE
 * bytes) in place; DROPPED (when given) is called with each one's value
 * that parses before it goes.  Returns how many were removed. */
size_t ntfs_rec_drop_names(uint8_t *rec, uint32_t size,
			   void (*dropped)(void *arg, const struct ntfs_file_name *fn),
			   void *arg);

/* No namespace allows a NUL or a '/' in a name (ntfs-3g cannot list a
 * directory whose index holds one).  True when none of the N
 * little-endian UTF-16 units at U is either. */
bool ntfs_name_units_allowed(const uint8_t *u, unsigned int n);

/* Can a name of the N little-endian UTF-16 units at U stand in the DOS
 * namespace (DOS or WIN32_AND_DOS)?  An 8.3 name: 1 to 8 units, then
 * optionally a '.' and 1 to 3 more, no second '.'; no lower-case letter,
 * no space, no control unit, none of " * + , / : ; < = > ? [ \ ] |
 * (Windows gives a name outside these rules a DOS twin instead). */
bool ntfs_name_is_8dot3(const uint8_t *u, unsigned int n);

/* Could some writer have stored the N little-endian UTF-16 units at U as
 * a file's one DOS-type name?  1 to 12 units, no control unit and none of
 * " * / : < > ? \ | (Win32 refuses those in any name).  Looser than
 * ntfs_name_is_8dot3: ntfs-3g stores what system.ntfs_dos_name is given
 * (lower case, spaces, + , ; = [ ], no dot) and Windows keeps lower-case
 * 8.3 names as Win32&DOS. */
bool ntfs_name_may_be_dos(const uint8_t *u, unsigned int n);

/* Each NUL or '/' of the N little-endian UTF-16 units at U made '_'
 * (e2fsck makes them '.'; Windows drops a name's trailing dots, so '_');
 * returns how many were. */
unsigned int ntfs_name_units_mend(uint8_t *u, unsigned int n);

#endif
