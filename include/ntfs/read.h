/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libntfs read side: the parsers a checker runs over untrusted bytes.
 * Every function is bounded by the lengths it is given, never trusts an
 * on-disk offset or length before checking it, and explains a rejection in
 * WHY (a short phrase for the problem message).  No I/O here except in the
 * ntfs_vol_* functions, which go through the fsforge device layer.
 */
#ifndef NTFS_READ_H
#define NTFS_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fsforge/dev.h"
#include "ntfs/format.h"
#include "ntfs/layout.h"

#define NTFS_WHY 128		/* size of a WHY buffer */

/* Geometry and system file locations read from a boot sector. */
struct ntfs_boot_info {
	struct ntfs_geometry g;
	int64_t mft_lcn;
	int64_t mftmirr_lcn;
	uint64_t serial;
	uint64_t backup_offset;		/* byte offset of the backup sector */
};

/* Validate a boot sector against a device of DEV_BYTES (0: unknown).
 * Returns 0 and fills INFO, or -1 with WHY. */
int ntfs_boot_check(const struct ntfs_boot_sector *bs, uint64_t dev_bytes,
		    struct ntfs_boot_info *info, char *why);

enum ntfs_rec_state {
	NTFS_REC_OK,		/* FILE/INDX record, fixups removed */
	NTFS_REC_UNUSED,	/* all zeroes: never formatted */
	NTFS_REC_BAD_MAGIC,
	NTFS_REC_BAAD,		/* "BAAD": marked bad by a previous check */
	NTFS_REC_BAD_USA,	/* update sequence array out of bounds */
	NTFS_REC_TORN,		/* a stride's check value does not match */
	NTFS_REC_BAD_HEADER,	/* FILE header fields inconsistent */
};
/* Check a multi-sector record of SIZE bytes in place (fixups removed when
 * valid).  MAGIC is NTFS_MAGIC_FILE or NTFS_MAGIC_INDX. */
enum ntfs_rec_state ntfs_record_check(uint8_t *rec, uint32_t size,
				      uint32_t magic, char *why);

/* The header fields of a FILE record whose fixups are removed. */
enum ntfs_rec_state ntfs_file_header_check(const uint8_t *rec, uint32_t size,
					   char *why);

/* Is FILE record REC a base record?  Only a base reference zero as a whole
 * (8 bytes) says so: an extension record of $MFT names record 0, with a
 * sequence number. */
bool ntfs_record_is_base(const uint8_t *rec);
/* The file FILE record RECNO (REC) belongs to: the record number its base
 * reference names, or RECNO for a base record. */
uint64_t ntfs_record_file(const uint8_t *rec, uint64_t recno);
/* Is FILE record REC the one an attribute list entry of base record D
 * names by MREF: its base reference names D and, unless MREF's sequence
 * number is 0, its sequence number is MREF's?  false with WHY. */
bool ntfs_record_listed(const uint8_t *rec, uint64_t d, uint64_t mref,
			char *why);

/* Walk the attributes of a checked FILE record. */
struct ntfs_attr_cursor {
	const uint8_t *rec;
	uint32_t used;		/* bytes_in_use */
	uint32_t off;		/* offset of the next attribute */
	uint32_t last_type;
	unsigned int count;
};
void ntfs_attr_cursor_init(struct ntfs_attr_cursor *c, const uint8_t *rec);
/* 1: *A is the next valid attribute; 0: end marker; -1: corrupt (WHY). */
int ntfs_attr_next(struct ntfs_attr_cursor *c,
		   const struct ntfs_attr_header **a, char *why);
/* The two halves of ntfs_attr_next, for a checker that repairs:
 * the frame (is there an attribute at OFF of a length that keeps the walk
 * inside the USED bytes of REC: 1 with *LEN, 0 end marker, -1 WHY), and
 * the fields of a framed attribute (what is wrong first, with WHY). */
int ntfs_attr_frame(const uint8_t *rec, uint32_t used, uint32_t off,
		    uint32_t *len, char *why);
/* The frames of REC from its attribute offset within its first USED
 * bytes: 0 with *END the end marker's offset, or -1 (WHY) at the first
 * that does not frame. */
int ntfs_attr_frames_end(const uint8_t *rec, uint32_t used, uint32_t *end,
			 char *why);
enum ntfs_attr_fault {
	NTFS_AF_NONE,
	NTFS_AF_ORDER,		/* type below the previous attribute's */
	NTFS_AF_NAME,		/* name outside the attribute */
	NTFS_AF_FLAGS,		/* flag bits that do not exist */
	NTFS_AF_VALUE,		/* resident value outside the attribute */
	NTFS_AF_SHORT,		/* non-resident header cut short */
	NTFS_AF_MAPPING,	/* mapping pairs offset outside */
	NTFS_AF_VCN,		/* VCN range impossible */
	NTFS_AF_SIZES,		/* initialized <= data <= allocated broken */
	NTFS_AF_TYPE,		/* not an attribute type NTFS defines */
	NTFS_AF_RESFLAGS,	/* resident flag bits that do not exist */
	NTFS_AF_NAMELEN,	/* a $FILE_NAME whose name is empty */
};
/* An attribute type of NTFS 3.1's $AttrDef (0x10..0x100 in steps of
 * 0x10) or of the range left to user definitions (0x1000 and up, in
 * steps of 0x10). */
bool ntfs_attr_type_valid(uint32_t type);
/* $AttrDef (attrdef.c).  ntfs_attrdef_standard: is TYPE in the table
 * mkfs.ntfs writes (NTFS 3.1's)?  ntfs_attrdef_types: the types a
 * volume defines, into TYPES (room for NTFS_ATTRDEF_MAX_TYPES): the
 * standard table's, then those the volume's table TAB (LEN bytes) adds;
 * a table that does not parse (a size not a multiple of an entry, types
 * not increasing valid types, an entry without a name) adds none and
 * sets *DAMAGED.  Returns the count.  ntfs_attrdef_has: TYPE among the N
 * TYPES? */
#define NTFS_ATTRDEF_MAX_TYPES 512u
bool ntfs_attrdef_standard(uint32_t type);
size_t ntfs_attrdef_types(const uint8_t *tab, uint64_t len, uint32_t *types,
			  bool *damaged);
bool ntfs_attrdef_has(const uint32_t *types, size_t n, uint32_t type);
/* Is the volume's table TAB (LEN bytes) one a driver can use: it parses
 * and defines the types every NTFS version's table defines
 * ($STANDARD_INFORMATION, $FILE_NAME, $DATA, $INDEX_ROOT,
 * $INDEX_ALLOCATION, $BITMAP)?  A table of zeros defines none. */
bool ntfs_attrdef_usable(const uint8_t *tab, uint64_t len);
#define NTFS_ATTR_KNOWN_FLAGS 0xc001u	/* compressed (LZNT1), encrypted, sparse */
enum ntfs_attr_fault ntfs_attr_fault(const struct ntfs_attr_header *a,
				     uint32_t off, uint32_t last_type,
				     char *why);
/* A resident attribute's value (after ntfs_attr_next accepted it). */
const void *ntfs_attr_value(const struct ntfs_attr_header *a, uint32_t *len);
/* The first attribute of TYPE in record REC (fixups removed) that the
 * cursor reaches before the end or the first fault; NULL if none. */
const struct ntfs_attr_header *ntfs_attr_find(const uint8_t *rec, uint32_t type);
/* Decode a non-resident attribute's runs into a malloc'ed array, checking
 * every cluster is inside NR_CLUSTERS.  Returns the count or -1 (WHY). */
long ntfs_attr_runs(const struct ntfs_attr_header *a, uint64_t nr_clusters,
		    struct ntfs_run **runs, char *why);
/* Does a run of RUNS (N, holes passed over) reach past cluster END, as the
 * clusters past the end of a truncated device of END clusters? */
bool ntfs_runs_past(const struct ntfs_run *runs, long n, uint64_t end);

/* One extent of a non-resident attribute whose runs an $ATTRIBUTE_LIST
 * spreads over several records: its VCN range and its decoded runs. */
struct ntfs_attr_extent {
	int64_t lowest_vcn, highest_vcn;
	struct ntfs_run *runs;		/* as ntfs_attr_runs decoded them */
	long nruns;
};
/* The runs of the N extents X (any order; sorted in place) joined in VCN
 * order into a malloc'ed *RUNS: the extents must start at VCN 0 and follow
 * one another without a gap or an overlap, each exactly as long as its
 * runs.  Returns the count of runs, or -1 (WHY; *RUNS NULL). */
long ntfs_extents_join(struct ntfs_attr_extent *x, size_t n, struct ntfs_run **runs,
		       char *why);

/* Compressed data (LZNT1) is cut into compression units of UNIT clusters
 * (16 for compression unit 4): each unit is stored whole (every cluster
 * allocated, the bytes as they are), or compressed (allocated clusters
 * followed by holes to the unit's end), or is all holes (zeros).  A partly
 * allocated unit, by its first VCN and its allocated clusters: */
struct ntfs_cunit {
	uint64_t vcn;
	uint64_t clusters;
};
/* Whether RUNS (N, from VCN 0) have that shape: the count of partly
 * allocated units (the first MAX of them in PART), or -1 (WHY) when the
 * runs do not end on a unit boundary or a unit has clusters after a hole. */
long ntfs_cunits_partial(const struct ntfs_run *runs, long n, uint32_t unit,
			 struct ntfs_cunit *part, long max, char *why);
/* RUNS (N, from VCN 0) hold EXCESS clusters more than their attribute
 * says: the index of the one hole that, EXCESS clusters shorter, gives
 * them the shape above (every hole then ends where its unit does), when
 * their allocated clusters do not overlap; -1 when no hole or more than
 * one would. */
long ntfs_cunits_long_hole(const struct ntfs_run *runs, long n, uint32_t unit,
			   uint64_t excess);
/* Whether BUF (LEN bytes, the allocated clusters of a partly allocated
 * unit of UNIT_BYTES) starts a chain of LZNT1 chunks: each a 2-byte
 * little-endian header (bit 15: compressed; bits 14-12: the signature 3;
 * bits 11-0: the bytes after the header, less 1) and its bytes, inside
 * BUF, at most one chunk per 4096 bytes of the unit, the chain ended by a
 * zero header or by the end of BUF.  false (WHY) otherwise. */
bool ntfs_lznt1_chunks(const uint8_t *buf, size_t len, uint32_t unit_bytes,
		       char *why);

/* One index entry as a checker sees it (pointers into the node). */
struct ntfs_ie_view {
	uint64_t mref;			/* indexed file (directory indexes) */
	uint16_t flags;			/* NTFS_IE_NODE, NTFS_IE_END */
	const uint8_t *key;
	uint16_t key_len;
	int64_t child_vcn;		/* NTFS_IE_NODE: sub-node, else -1 */
	/* directory ($I30) keys: the $FILE_NAME they carry */
	uint64_t parent;
	uint8_t name_len;
	const uint8_t *name;		/* little-endian UTF-16, unaligned */
};
/* The entries area of an index node: NODE (LEN bytes) holds entries
 * starting at *OFF.  Returns 1 (entry), 0 (end entry, IE filled), -1
 * (corrupt, WHY).  FILE_NAME_KEYS: keys must be $FILE_NAME values. */
int ntfs_ie_next(const uint8_t *node, uint32_t len, uint32_t *off,
		 bool file_name_keys, struct ntfs_ie_view *ie, char *why);
/* A resident $INDEX_ROOT value: where its entries are.  Returns 0 or -1. */
int ntfs_index_root_parse(const uint8_t *val, uint32_t len,
			  struct ntfs_index_root *root, const uint8_t **entries,
			  uint32_t *elen, char *why);
/* An INDX block of SIZE bytes (fixups already removed) that should be at
 * VCN: where its entries are.  Returns 0 or -1. */
int ntfs_index_block_parse(const uint8_t *blk, uint32_t size, int64_t vcn,
			   const uint8_t **entries, uint32_t *elen, char *why);

/* Chunks of consecutive MFT records as on disk (libntfs/record_io.c). */
#define NTFS_CACHE_SLOTS 4
struct ntfs_rec_cache {
	uint8_t *mem;
	uint64_t chunk[NTFS_CACHE_SLOTS];	/* UINT64_MAX: empty */
	uint64_t stamp[NTFS_CACHE_SLOTS];	/* last use */
	uint64_t clock;
	uint32_t per_chunk;			/* records per chunk */
};

/* Records assumed in memory, never written (libntfs/record_assume.c):
 * an open-addressing hash by record number (linear probing, never more
 * than half full), so that a read of a record not assumed costs one
 * probe, or none while the table is empty. */
struct ntfs_assumed_slot {
	uint64_t recno;
	uint8_t *raw;				/* as on disk, fixups applied;
						 * NULL: an empty slot */
};
struct ntfs_assumed {
	struct ntfs_assumed_slot *slot;		/* cap slots */
	size_t cap;				/* 0 or a power of two */
	size_t count;				/* records held */
	uint64_t bytes;				/* held: records and slots */
	uint64_t budget;			/* 0: NTFS_ASSUMED_BUDGET */
	uint64_t refused;			/* records not held for it */
};

/* A volume opened for checking (its I/O: ntfs/volume_io.h). */
struct ntfs_vol {
	struct fsf_dev *dev;
	struct ntfs_boot_info boot;
	struct ntfs_run *mft_runs;	/* $MFT's $DATA */
	long nmft_runs;
	uint64_t mft_records;		/* records in $MFT's data */
	struct ntfs_rec_cache cache;	/* zeroed: empty */
	struct ntfs_assumed assumed;	/* read in place of the disk's */
	uint64_t max_lsn;		/* highest LSN of the FILE records
					 * read so far (a journal reset
					 * must start above it) */
};
/* Byte offset of MFT record RECNO, or UINT64_MAX if outside $MFT. */
uint64_t ntfs_vol_record_offset(const struct ntfs_vol *v, uint64_t recno);

#endif
