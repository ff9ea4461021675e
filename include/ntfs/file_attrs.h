/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libntfs: a file's attributes wherever they are -- its base record and the
 * extension records its $ATTRIBUTE_LIST names -- read on demand through
 * the volume (file_attrs.c); the names and paths of files as messages print
 * them (names.c).
 *
 * A checker may know better than the records' flags which records are in
 * use: IN_USE (with its ARG), when given, says whether an extension record
 * may be read at all; NULL reads every record the list names.
 */
#ifndef NTFS_FILE_ATTRS_H
#define NTFS_FILE_ATTRS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <endian.h>

#include "ntfs/read.h"

typedef bool (*ntfs_rec_in_use)(const void *arg, uint64_t recno);

/* the sizes of a file's unnamed $DATA, which the $FILE_NAME keys of its
 * index entries repeat */
struct ntfs_data_sizes {
	uint64_t alloc, size;
	bool known;
};

/* The next entry of an $ATTRIBUTE_LIST value: 1 with its type and the
 * record holding it, 0 at the end or at a malformed entry. */
static inline int ntfs_list_next(const uint8_t *list, uint64_t len,
				 uint64_t *off, uint32_t *type, uint64_t *recno)
{
	uint32_t t;
	uint16_t elen;
	uint64_t mref;

	if (*off + 26 > len)
		return 0;
	memcpy(&t, list + *off, 4);
	memcpy(&elen, list + *off + 4, 2);
	memcpy(&mref, list + *off + 16, 8);
	elen = le16toh(elen);
	if (elen < 26)
		return 0;
	*off += elen;
	*type = le32toh(t);
	*recno = le64toh(mref) & 0xffffffffffffULL;
	return 1;
}

/* Every attribute of file BASE (base record, then the extension records
 * of its attribute list that are in use and point back at it), BUF a
 * record-sized scratch; FN returning nonzero stops the walk (its value
 * returned).  -1 if the base is unreadable. */
typedef int (*ntfs_attr_visit)(const struct ntfs_attr_header *a, void *arg);
int ntfs_vol_file_foreach(struct ntfs_vol *v, ntfs_rec_in_use in_use,
			  const void *in_use_arg, uint64_t base, uint8_t *buf,
			  ntfs_attr_visit fn, void *arg);
/* The record holding unnamed attribute TYPE of file BASE, whose checked
 * base record is REC: the extension record REC's attribute list names
 * for it, read into EXT (record-sized) and checked (Linux's ntfs driver
 * moves $MFT's $BITMAP and $FILE_NAME out of record 0 when $MFT's $DATA
 * grows), else REC itself.  *HOLDER and *WHERE: that record and its
 * number.  0, or -EUCLEAN: the list or the record it names is not
 * usable, or the attribute is in several extents (the callers read
 * one). */
int ntfs_vol_attr_holder(struct ntfs_vol *v, uint8_t *rec, uint64_t base,
			 uint32_t type, uint8_t *ext, uint8_t **holder,
			 uint64_t *where);
/* The record of file BASE holding a resident $FILE_NAME whose value is
 * FN (FN_LEN bytes), as a checker edits one name where it lives: BASE
 * itself, else an extension record its $ATTRIBUTE_LIST names for a
 * $FILE_NAME that is in use (IN_USE as above) and points back at BASE.
 * Read into BUF (record-sized) and checked; its number in *WHERE.  0; 1
 * when none of the file's records holds it; -1 when the base record is
 * unreadable. */
int ntfs_vol_name_holder(struct ntfs_vol *v, ntfs_rec_in_use in_use,
			 const void *in_use_arg, uint64_t base,
			 const uint8_t *fn, uint32_t fn_len, uint8_t *buf,
			 uint64_t *where);
/* A's value if it is a resident $FILE_NAME whose name fits (header in FN). */
const uint8_t *ntfs_file_name_of(const struct ntfs_attr_header *a,
				 struct ntfs_file_name *fn);
/* A's sizes if it is the first extent of the unnamed $DATA. */
bool ntfs_data_sizes_of(const struct ntfs_attr_header *a,
			struct ntfs_data_sizes *d);
/* Is A named NAME (ASCII)?  The attribute TYPE named NAME of checked
 * record REC, or NULL. */
bool ntfs_attr_has_name(const struct ntfs_attr_header *a, const char *name);
const struct ntfs_attr_header *ntfs_attr_named(const uint8_t *rec,
					       uint32_t type, const char *name);
/* The security id in checked record REC's resident $STANDARD_INFORMATION,
 * its offset in REC in *AT; 0 when it has none (or the NTFS 1.x form,
 * without one), *AT then untouched. */
uint32_t ntfs_security_id_of(const uint8_t *rec, uint32_t *at);
/* The extent at VCN of the unnamed non-resident attribute TYPE of checked
 * record REC, or NULL. */
const struct ntfs_attr_header *ntfs_attr_unnamed_extent(const uint8_t *rec,
							uint32_t type,
							int64_t vcn);
/* The attribute TYPE named NAME (ASCII, "" for none) of checked record
 * REC whose lowest VCN is VCN (a resident one is VCN 0), or NULL. */
const struct ntfs_attr_header *ntfs_attr_extent(const uint8_t *rec, uint32_t type,
						const char *name, int64_t vcn);
/* The non-resident extent at VCN of the attribute TYPE of checked record
 * REC named NAME as an attribute list entry holds it (NAME_LEN units of
 * little-endian UTF-16, compared exactly), or NULL. */
const struct ntfs_attr_header *ntfs_attr_extent_u16(const uint8_t *rec, uint32_t type,
						    const uint8_t *name,
						    uint8_t name_len, int64_t vcn);
/* The record MREF that an attribute list entry of base record D names,
 * read into BUF: in use (IN_USE), a checked FILE record and
 * ntfs_record_listed.  0, or -1 with WHY. */
int ntfs_vol_read_listed(struct ntfs_vol *v, ntfs_rec_in_use in_use,
			 const void *in_use_arg, uint64_t d, uint64_t mref,
			 uint8_t *buf, char *why);
/* The runs of every extent of file D's non-resident attribute TYPE NAME
 * (base record and the extension records of its list), joined in VCN
 * order: the count of runs (0: no such attribute), with the data size of
 * the first extent and how many extents there are; -1 with WHY when the
 * extents do not join, -ENOMEM. */
long ntfs_vol_extents_runs(struct ntfs_vol *v, ntfs_rec_in_use in_use,
			   const void *in_use_arg, uint64_t d, uint32_t type,
			   const char *name, struct ntfs_run **runs,
			   uint64_t *size, size_t *nextents, char *why);

/* names.c: UTF-16 (host order) to printable UTF-8 for messages */
void ntfs_name_to_utf8(const uint16_t *u, unsigned int n, char *out,
		       size_t size);
/* "WHAT MFT record N (/path/of/it)" for messages; the path is left out
 * when it cannot be followed to the root. */
void ntfs_vol_object_name(struct ntfs_vol *v, ntfs_rec_in_use in_use,
			  const void *in_use_arg, const char *what,
			  uint64_t recno, char *out, size_t size);
/* Is directory DIR $Extend or inside it (metadata files, whose index
 * entries keep whatever sizes Windows left)?  BUF: a record's scratch. */
bool ntfs_vol_in_extend(struct ntfs_vol *v, ntfs_rec_in_use in_use,
			const void *in_use_arg, uint64_t dir, uint8_t *buf);

#endif
