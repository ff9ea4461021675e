/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libntfs: $ATTRIBUTE_LIST values.  A file whose attributes do not fit its
 * base MFT record keeps some of them in extension records (whose header
 * names the base); the base's $ATTRIBUTE_LIST has one entry per attribute
 * extent of the file, wherever it is (the list itself excepted): type,
 * name, lowest VCN, the record holding it (reference with sequence
 * number) and its instance number there.  Entries are sorted by type,
 * name and lowest VCN; each is 8-byte aligned.
 *
 * The parser is bounded by the lengths it is given; the builder makes the
 * list that a set of records implies, so that a damaged list can be made
 * again from the extension records that point back at their base.
 */
#ifndef NTFS_ATTRLIST_H
#define NTFS_ATTRLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NTFS_AL_HEADER 0x1a	/* entry header; the name follows */

struct ntfs_al_entry {
	uint32_t type;
	uint16_t length;
	uint8_t name_len;
	const uint8_t *name;		/* little-endian UTF-16, unaligned */
	int64_t lowest_vcn;
	uint64_t mref;			/* record number | sequence << 48 */
	uint16_t instance;
};

/* The entry at *OFF of list V (LEN bytes): 1 with E (and *OFF past it),
 * 0 at the end of the value, -1 when malformed (WHY). */
int ntfs_al_next(const uint8_t *v, uint32_t len, uint32_t *off,
		 struct ntfs_al_entry *e, char *why);
/* Is E's name the ASCII NAME? */
bool ntfs_al_entry_named(const struct ntfs_al_entry *e, const char *name);
/* Every entry well formed and in order (type, then for the extents of one
 * attribute rising lowest VCNs).  0 or -1 with WHY. */
int ntfs_al_check(const uint8_t *v, uint32_t len, char *why);
/* The order of the entries: type, name (folded through UPCASE of 65536
 * units when given, then exact), lowest VCN. */
int ntfs_al_cmp(const struct ntfs_al_entry *a, const struct ntfs_al_entry *b,
		const uint16_t *upcase);

/* A list being made from records. */
struct ntfs_al_build {
	struct ntfs_al_entry *v;
	size_t n, cap;
	uint8_t **names;		/* copies of the names (freed with it) */
};
/* Add an entry for every attribute of checked FILE record REC (fixups
 * removed), numbered MREF, except an $ATTRIBUTE_LIST.  0 or -1 (memory,
 * or a record whose attributes do not parse). */
int ntfs_al_add_record(struct ntfs_al_build *b, const uint8_t *rec,
		       uint64_t mref);
/* Does B have an entry for (TYPE, NAME, LOWEST_VCN)? */
bool ntfs_al_has(const struct ntfs_al_build *b, uint32_t type,
		 const uint8_t *name, uint8_t name_len, int64_t lowest_vcn);
/* The list value: sorted, encoded into a malloc'ed *OUT of *LEN bytes. */
int ntfs_al_encode(struct ntfs_al_build *b, const uint16_t *upcase,
		   uint8_t **out, uint32_t *len);
void ntfs_al_build_free(struct ntfs_al_build *b);

/* Lists V1 and V2 hold the same entries (in any order)?  Both parse. */
bool ntfs_al_same(const uint8_t *v1, uint32_t len1, const uint8_t *v2,
		  uint32_t len2, char *why);

/* Replace the value of the resident attribute at OFF of checked record
 * REC (SIZE bytes) by VAL (LEN bytes): what follows moves.  0, or -1 when
 * it does not fit. */
int ntfs_rec_set_value(uint8_t *rec, uint32_t size, uint32_t off,
		       const void *val, uint32_t len);
/* List V (LEN bytes, parsing) without the entries of the extents of
 * attribute TYPE NAME (ASCII) at a lowest VCN above 0, in place: its new
 * length (the entries after a malformed one are dropped too). */
uint32_t ntfs_al_drop_later(uint8_t *v, uint32_t len, uint32_t type,
			    const char *name);

/* The bytes of a list entry for an attribute named NAME (ASCII). */
uint32_t ntfs_al_entry_size(const char *name);
/* List V (LEN bytes, parsing, with room for ntfs_al_entry_size(NAME)
 * more) with an entry for the extent at VCN 0 of attribute TYPE NAME
 * (ASCII), held in record MREF (with its sequence number) as INSTANCE,
 * put before the first entry of a higher type: its new length. */
uint32_t ntfs_al_insert_first(uint8_t *v, uint32_t len, uint32_t type,
			      const char *name, uint64_t mref, uint16_t instance);
#endif
