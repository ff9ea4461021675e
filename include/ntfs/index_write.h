/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libntfs: an index placed on the volume (index_write.c).  The index is
 * built by the one builder (ntfs/index_build.h); here its blocks are given
 * clusters (the old allocation's when big enough, else a free run the
 * caller's allocator finds), written, and the index attributes of a
 * record are replaced, each where its type and name sort, every other
 * attribute kept byte for byte.  Which clusters are free is the caller's
 * knowledge (a checker's computed map), not the library's.
 */
#ifndef NTFS_INDEX_WRITE_H
#define NTFS_INDEX_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntfs/index_build.h"
#include "ntfs/read.h"

#define RESIDENT_HDR 0x20		/* resident header + "$I30" */
#define NONRESIDENT_HDR 0x48		/* non-resident header + "$I30" */

/* A new index: built, its blocks placed in clusters. */
struct index_plan {
	struct ntfs_ib_result res;
	struct ntfs_run *runs;		/* clusters of the new allocation */
	long nruns;
	bool reuse;			/* RUNS are the old allocation's */
	uint64_t clusters;
	uint8_t bitmap[4096];
	uint32_t bitmap_len;
	bool bitmap_nonres;		/* the bitmap in BITMAP_RUN's clusters */
	struct ntfs_run bitmap_run;
};

/* What the new index must look like: LARGE forces INDX blocks, SMALL
 * forbids them; ALONE: the allocation and bitmap attributes are in
 * another record than the root, so they take no room from it. */
struct index_shape {
	bool large, small, alone;
};

/* Where new clusters come from: FIND_FREE (with ARG) returns the first of
 * COUNT free clusters in a row, or -1; the old allocation is reused only
 * when all its clusters are below DEV_CLUSTERS (wholly on the device). */
struct ntfs_cluster_source {
	int64_t (*find_free)(void *arg, uint64_t count);
	void *arg;
	uint64_t dev_clusters;
	/* the old allocation's clusters may belong to another file too
	 * (cross-links left): its blocks are never written over */
	bool no_reuse;
};

/* The index of TYPE and COLLATION from E (N entries, sorted) for a record
 * of volume geometry G whose other attributes take OTHER bytes: the root
 * as big as fits, blocks placed (the old allocation OLD reused when big
 * enough, else clusters from SRC).  0, or -1 with WHY. */
int ntfs_index_plan_build(const struct ntfs_geometry *g,
			  const struct ntfs_cluster_source *src,
			  struct index_plan *p, uint32_t type,
			  uint32_t collation, const struct ntfs_ib_entry *e,
			  long n, uint32_t other, const struct ntfs_run *old,
			  long nold, const struct index_shape *sh, char *why);
/* The index of TYPE and COLLATION from E (N entries) for an allocation
 * kept where it is (in one or several extents), whose runs (all extents,
 * NOLD of them) are OLD and data size OLD_SIZE: the root as big as ROOM,
 * the blocks in the old clusters (there must be enough of them), a bitmap
 * of BITMAP_LEN bytes.  0, or -1 with WHY. */
int ntfs_index_plan_in_extents(const struct ntfs_geometry *g,
			       struct index_plan *p, uint32_t type,
			       uint32_t collation,
			       const struct ntfs_ib_entry *e, long n,
			       uint32_t room, const struct ntfs_run *old,
			       long nold, uint64_t old_size,
			       uint32_t bitmap_len, char *why);
/* P's blocks (if it has any) written into its clusters.  0, or -1 with
 * WHY. */
int ntfs_index_plan_write(struct ntfs_vol *v, const struct index_plan *p,
			  char *why);
void ntfs_index_plan_free(struct index_plan *p);

/* Is A an attribute of index NAME?  A directory has one index, $I30:
 * every index attribute of its record is replaced, whatever its (possibly
 * damaged) name; other records keep their other indexes. */
bool ntfs_index_is_attr(const struct ntfs_attr_header *a, const char *name);
/* Of checked record REC (attributes all in it) and its index NAME: the
 * bytes its other attributes take (*OTHER, header and end marker
 * included), the runs of its old $INDEX_ALLOCATION (*OLD) and of its
 * non-resident $BITMAP (*GONE), malloc'ed or NULL.  0, or -1 with WHY
 * (also when REC has an $ATTRIBUTE_LIST). */
int ntfs_index_attrs_scan(const struct ntfs_geometry *g, const uint8_t *rec,
			  const char *name, uint32_t *other,
			  struct ntfs_run **old, long *nold,
			  struct ntfs_run **gone, long *ngone, char *why);
/* Record REC (G's record size) with the attributes of its index NAME
 * replaced by P's, each where its type and name sort among the
 * attributes kept, into OUT.  0, or -1 with WHY. */
int ntfs_index_rewrite_record(const struct ntfs_geometry *g, const uint8_t *rec,
			      uint8_t *out, const struct index_plan *p,
			      const char *name, char *why);
/* Record REC with the attributes of its index NAME replaced by P's in
 * place, each keeping its instance number (but for the slots whose bit
 * 1 << NTFS_IX_* is in KEEP: those stay byte for byte), into OUT: for a
 * file whose index attributes are spread over the records its
 * $ATTRIBUTE_LIST names.  0, or -1 with WHY. */
int ntfs_index_rewrite_holder(const struct ntfs_geometry *g,
			      const uint8_t *rec, uint8_t *out,
			      const struct index_plan *p, const char *name,
			      unsigned int keep, char *why);

/* Record REC with P's attribute of slot K (NTFS_IX_ROOT or
 * NTFS_IX_BITMAP, resident) of index NAME added where its type sorts (the
 * record had none), numbered by the record's next instance (*INSTANCE),
 * into OUT.  0, or -1 with WHY (it does not fit). */
int ntfs_index_add_attr(const struct ntfs_geometry *g, const uint8_t *rec,
			uint8_t *out, const struct index_plan *p, const char *name,
			int k, uint16_t *instance, char *why);

/* The three index attributes, in the order of their types. */
enum { NTFS_IX_ROOT, NTFS_IX_ALLOC, NTFS_IX_BITMAP, NTFS_IX_SLOTS };
extern const uint32_t ntfs_ix_slot_types[NTFS_IX_SLOTS];
/* The reference (record number and sequence number, as the list names
 * it: ntfs_vol_read_listed checks both) of the record holding each
 * attribute of index NAME of the file whose checked base record REC has
 * an $ATTRIBUTE_LIST (UINT64_MAX: none; for
 * the allocation and the bitmap, their extent at VCN 0); MORE[k]: the
 * later extents of slot k (allocation, bitmap).  0, or -1 with WHY (the
 * list unreadable, lacking index attributes, or naming a root in several
 * extents). */
int ntfs_index_holders(struct ntfs_vol *v, const uint8_t *rec, const char *name,
		       uint64_t at[NTFS_IX_SLOTS], size_t more[NTFS_IX_SLOTS],
		       char *why);
/* Record REC without the extents of index NAME's $INDEX_ALLOCATION and
 * $BITMAP at a lowest VCN above 0 (but the allocation's at ALLOC_VCN and
 * the bitmap's at BITMAP_VCN when those are not 0: the extents that take
 * a lost first extent's place), into OUT; *LEFT: the attributes it
 * keeps.  0, or -1 with WHY. */
int ntfs_index_drop_later(const struct ntfs_geometry *g, const uint8_t *rec,
			  uint8_t *out, const char *name, int64_t alloc_vcn,
			  int64_t bitmap_vcn, int *left, char *why);

#endif
