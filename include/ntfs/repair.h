/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libntfs repair side: the smallest in-place changes a checker makes to
 * one attribute or one FILE record (fixups removed) so that it parses
 * again.  Each function changes only the bytes it names; the caller has
 * already decided, with ntfs_attr_frame() and ntfs_attr_fault(), that the
 * attribute is framed (its length keeps the walk inside the record).
 */
#ifndef NTFS_REPAIR_H
#define NTFS_REPAIR_H

#include <stdbool.h>
#include <stdint.h>

#include "ntfs/format.h"
#include "ntfs/read.h"

struct ntfs_sizes {
	uint64_t alloc, data, init;
};

/* Clear the flag bits of attribute A that do not exist, and the known ones
 * that are suspect beside them (compressed or sparse: kept on a
 * non-resident $DATA, compressed with a compression unit; encrypted:
 * never kept, it would hide the bytes from every reader); returns the
 * flags as they were. */
uint16_t ntfs_attr_clear_unknown_flags(uint8_t *a);
/* The flags ntfs_attr_clear_unknown_flags() would leave. */
uint16_t ntfs_attr_known_flags(const uint8_t *a);

/* The sizes of non-resident attribute A, read as unsigned. */
void ntfs_attr_sizes(const uint8_t *a, struct ntfs_sizes *sz);
/* Make initialized <= data <= allocated: ALLOC replaces the allocated size
 * unless it is UINT64_MAX; the data size is clamped to the allocated size
 * and the initialized size to the data size (a negative size, read as
 * unsigned, is clamped too).  An extent other than the first (lowest VCN
 * not 0) carries no sizes: negative ones become 0.  Returns whether
 * anything changed; *NOW gets the result. */
bool ntfs_attr_clamp_sizes(uint8_t *a, uint64_t alloc, struct ntfs_sizes *now);

/* Resident attribute A: the bytes its value may take (length less value
 * offset), or UINT32_MAX when the value offset itself is impossible. */
uint32_t ntfs_attr_value_room(const uint8_t *a);
/* The length a resident value of TYPE must have, judged from its own
 * content (for $STANDARD_INFORMATION, $FILE_NAME, $OBJECT_ID,
 * $EA_INFORMATION, $SECURITY_DESCRIPTOR and $REPARSE_POINT), within
 * ROOM bytes;
 * 0 when the content does not say. */
uint32_t ntfs_attr_value_length_of(const uint8_t *a, uint32_t room);
void ntfs_attr_set_value_length(uint8_t *a, uint32_t len);
/* Resident attribute A whose value length runs past its ROOM bytes: the
 * one length one bit away from it that ends the value in the
 * attribute's last 8 bytes (where its length puts the value's end);
 * 0 when none is, or more than one. */
uint32_t ntfs_attr_value_length_one_bit(const uint8_t *a, uint32_t room);

/* End the mapping pairs of non-resident attribute A at STOP (offset in the
 * attribute) where its valid runs RUNS (N of them) end: the end marker is
 * written there and the bytes after it zeroed, the highest VCN follows the
 * runs kept and, for a first extent (lowest VCN 0), the allocated (and
 * compressed) size follow them too and the other sizes are clamped. */
void ntfs_attr_cut_runs(uint8_t *a, uint32_t stop, const struct ntfs_run *runs,
			size_t n, uint32_t cluster_size);
/* RUNS (N of them) encoded as the mapping pairs of non-resident attribute
 * A in the bytes its length has now (nothing moves; the rest zeroed),
 * then its VCN range and sizes following as ntfs_attr_cut_runs() does.
 * 0, or -1 when they do not fit. */
int ntfs_attr_put_runs(uint8_t *a, const struct ntfs_run *runs, size_t n,
		       uint32_t cluster_size);
/* Mapping pairs MP (LEN bytes) in place of those of the non-resident
 * attribute at AOFF of record REC (SIZE bytes): the attribute grows to
 * the next 8 bytes (what follows it moves) when they do not fit and the
 * record has room; the bytes after them are zeroed.  0, or -1 when they do
 * not fit or the attribute is not framed in the bytes in use. */
int ntfs_rec_set_pairs(uint8_t *rec, uint32_t size, uint32_t aoff,
		       const uint8_t *mp, uint32_t len);
/* The VCN range and sizes of the single extent of an attribute (lowest VCN
 * 0) from its runs.  Returns whether anything changed. */
bool ntfs_attr_set_extent(uint8_t *a, const struct ntfs_run *runs, size_t n,
			  uint32_t cluster_size);

/* Run IDX of non-resident attribute A's mapping pairs made LEN clusters
 * long, in the bytes its length has now (nothing else moves).  0, or -1
 * when there is no such run or LEN does not fit them. */
int ntfs_attr_set_run_length(uint8_t *a, long idx, uint64_t len);

/* Remove the attribute at OFF (framed) from record REC of SIZE bytes: the
 * attributes after it move down, bytes in use shrink, the freed tail is
 * zeroed. */
void ntfs_rec_remove_attr(uint8_t *rec, uint32_t size, uint32_t off);
/* End record REC at OFF (8-aligned): an end marker there, bytes in use
 * follow, what was after is zeroed.  -1 if the marker does not fit. */
int ntfs_rec_end_at(uint8_t *rec, uint32_t size, uint32_t off);

/* Insert an empty resident unnamed $DATA in its place in REC (a file
 * whose $DATA was removed is a file of 0 bytes).  0, or -1 if no room. */
int ntfs_rec_add_empty_data(uint8_t *rec, uint32_t size);
/* Remove from base record REC's resident $ATTRIBUTE_LIST the one entry
 * naming attribute TYPE with INSTANCE in record RECNO, when that attribute
 * has no other extent.  Returns the bytes the record shrank by (what
 * followed the list moved down), or -1 (no such single entry, or the list
 * is not resident). */
int ntfs_rec_unlist_attr(uint8_t *rec, uint32_t size, uint32_t type,
			 uint16_t instance, uint64_t recno);
/* The same on a list's value V of VLEN bytes (wherever it is stored):
 * the entry is removed, the rest moves down, the tail is zeroed.  Returns
 * the new length or -1. */
int ntfs_list_drop_entry(uint8_t *v, uint32_t vlen, uint32_t type,
			 uint16_t instance, uint64_t recno);
/* Data and initialized size of non-resident attribute A. */
void ntfs_attr_set_data_size(uint8_t *a, uint64_t size);
/* A FILE record as read whose update sequence array is invalid: the
 * array is put where every stride end holds its number (where it was, or
 * where NTFS 3.1 or 3.0 puts it, with one entry per stride), and the
 * fixups are removed.  0 with WHAT, or -1 (no such place, or torn). */
int ntfs_usa_repair(uint8_t *rec, uint32_t size, char *what);
/* A FILE record (fixups removed) whose allocated size, attribute offset
 * or bytes in use are wrong: each set to what the record and its
 * attribute frames say (the attributes begin after the update sequence
 * array and end at their end marker, whose 8 bytes are the last in use).  0 with WHAT (empty when nothing
 * changed), or -1 when no frame walk reaches an end marker. */
int ntfs_file_header_repair(uint8_t *rec, uint32_t size, char *what);

/* Resident attribute at OFF of REC (SIZE bytes): its value becomes VLEN
 * bytes (cut, or grown with zeroes), the attribute is resized and what
 * follows it moves.  -1 if it does not fit. */
int ntfs_rec_resize_resident(uint8_t *rec, uint32_t size, uint32_t off,
			     uint32_t vlen);
/* Insert an unnamed resident attribute TYPE with value VAL (VLEN bytes)
 * in its place in REC (after the attributes of lower or equal type).  0,
 * or -1 if no room. */
int ntfs_rec_insert_resident(uint8_t *rec, uint32_t size, uint32_t type,
			     const void *val, uint32_t vlen);
/* Unnamed attribute at OFF (framed) of REC (SIZE bytes) replaced by a
 * resident one of its type and instance number (an attribute list's
 * entry naming it stays true) with value VAL (VLEN bytes), what follows
 * it moving.  0, or -1 if it is named or the value does not fit. */
int ntfs_rec_replace_resident(uint8_t *rec, uint32_t size, uint32_t off,
			      const void *val, uint32_t vlen);
/* Extent at OFF (non-resident, lowest VCN >= N) of record REC (SIZE
 * bytes) made to begin N clusters earlier with a hole: a sparse run of N
 * clusters before its runs (the LCNs after it unchanged), the attribute
 * and the record grown by what that takes.  0, or -1 if it does not fit.
 * _after: a sparse run of N clusters after its runs, its highest VCN N
 * more. */
int ntfs_rec_extent_hole_after(uint8_t *rec, uint32_t size, uint32_t off,
			       uint64_t n);
int ntfs_rec_extent_hole_before(uint8_t *rec, uint32_t size, uint32_t off,
				uint64_t n);
/* Make the non-resident attribute at OFF of REC (neither sparse nor
 * compressed) sparse: the sparse flag set and the 8-byte compressed size
 * field inserted after the fixed header (its name and mapping pairs
 * moved up into the attribute's slack after them, or the attribute and
 * the record 8 bytes longer), holding
 * COMPRESSED (the bytes of the clusters its runs allocate; 0 in an
 * extent after the first).  0, or -1 if it does not fit or the
 * attribute is not such. */
int ntfs_rec_attr_make_sparse(uint8_t *rec, uint32_t size, uint32_t off,
			      uint64_t compressed);
/* Set the file attribute bits FLAGS in the resident
 * $STANDARD_INFORMATION of REC, when it has one. */
void ntfs_rec_set_file_attr(uint8_t *rec, uint32_t flags);
/* The resident $STANDARD_INFORMATION of REC (SIZE bytes) names security
 * id ID, grown from the NTFS 1.x form (48 bytes) to 3.x's (72) when it is
 * that (what follows it moves).  -1 if it does not fit or REC has none. */
int ntfs_rec_set_security_id(uint8_t *rec, uint32_t size, uint32_t id);
/* Clear the bits FLAGS of the volume flags in the first resident
 * $VOLUME_INFORMATION of checked record REC ($Volume's): 0, or -ENOENT
 * when it has none (or one too short to hold them). */
int ntfs_rec_clear_volume_flags(uint8_t *rec, uint16_t flags);
/* record_mend.c: a FILE record made usable as a checker's pass 1 makes
 * it, from its own bytes.  How it was mended: */
struct ntfs_rec_mend {
	bool torn;		/* a torn stride's saved ends put back */
	uint32_t first_torn;	/* torn: the first stride that was */
	bool torn_in_attrs;	/* torn: that stride holds attribute bytes */
	char usa[NTFS_WHY];	/* where the update sequence array went ("": kept) */
	char hdr[NTFS_WHY];	/* which header fields were set ("": none) */
};
/* REC (SIZE bytes) as ntfs_record_check() left it in state ST, mended in
 * place: a torn stride gets back the bytes the array saved (believed when
 * the header then checks and, the stride holding attribute bytes, every
 * attribute parses; else when the frames reach the end marker); an array
 * out of place is put where the strides say and wrong allocated size,
 * attribute offset or bytes in use are set to what the frames say
 * (believed when every frame leads to an end marker after an attribute;
 * for fields that passed their check, bytes in use short of or past the
 * end marker, only when every attribute then parses).  1: mended (fixups
 * removed, HOW says how); 0: usable as it is (ST NTFS_REC_OK; also when
 * its bytes in use could not be set, REC unchanged); -1: not usable this
 * way (REC unchanged). */
int ntfs_record_mend(uint8_t *rec, uint32_t size, enum ntfs_rec_state st,
		     struct ntfs_rec_mend *how);
/* Do the bytes in use of checked record REC miss its end marker (the
 * frames break first, or more than its 8 bytes follow it)? */
bool ntfs_record_used_wrong(const uint8_t *rec);
/* REC (SIZE bytes) as read from disk, checked and mended as above (a
 * torn record put back then has its bytes in use mended too), in this
 * buffer only: the record as a checker's pass 1 will have it, nothing
 * written.  0 (fixups removed), or -1 when it is not usable. */
int ntfs_record_usable(uint8_t *rec, uint32_t size);
#endif
