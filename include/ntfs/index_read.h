/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libntfs: an index of a record (a directory's $I30 or a view index such
 * as $Secure's $SII) as the B+tree walker (ntfs/btree.h) needs it: its
 * three attributes found by name in the base record or, through the
 * record's $ATTRIBUTE_LIST, in an extension record; the $BITMAP read whole
 * whether resident or not; index blocks read through the runs of the
 * allocation (index_read.c).
 */
#ifndef NTFS_INDEX_READ_H
#define NTFS_INDEX_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntfs/btree.h"
#include "ntfs/file_attrs.h"
#include "ntfs/read.h"

/* ntfs_vol_index_open: index NAME of record D (base record REC, checked):
 * 0, 1 when its list names extents of its (resident) root at a VCN
 * other than 0 (not walked), -1 corrupt (IX->why), -ENOMEM; close it in
 * every case.  An $INDEX_ALLOCATION or a $BITMAP in several extents (its
 * base's list names them) is read whole: the runs of all extents joined
 * in VCN order (IN_USE as in ntfs/file_attrs.h). */
struct ntfs_index {
	struct ntfs_vol *vol;
	const uint8_t *root;		/* $INDEX_ROOT value */
	uint32_t root_len;
	bool has_alloc, has_bitmap, split;
	uint64_t alloc_size;
	struct ntfs_run *runs;		/* of $INDEX_ALLOCATION (all extents) */
	long nruns;
	size_t alloc_extents;		/* its extents */
	uint8_t *bitmap;		/* $BITMAP, read whole */
	uint64_t bitmap_len;
	uint8_t *ext[3];		/* records holding the attributes */
	char why[NTFS_WHY];
};
int ntfs_vol_index_open(struct ntfs_vol *v, ntfs_rec_in_use in_use,
			const void *in_use_arg, uint64_t d, const uint8_t *rec,
			const char *name, struct ntfs_index *ix);
void ntfs_index_close(struct ntfs_index *ix);
/* T's index fields, T->ops = OPS with OPS->read set to read IX's blocks
 * (T->read_arg = IX); the caller sets the rest of T and OPS. */
void ntfs_index_bt(struct ntfs_index *ix, struct ntfs_bt *t,
		   struct ntfs_bt_ops *ops);

/* dir_entry_find.c: does directory DIR's $I30 hold an entry for MREF
 * (record number and sequence number, which must not be 0)?  DIR's
 * record as ntfs_record_usable() has it, an in-use base directory; its
 * index walked once (faults skipped), the references of its entries kept
 * sorted in R for the next question about DIR (R zeroed at first; freed
 * with ntfs_dir_refs_free; the caller drops it when the index may have
 * changed).  False also when it cannot be told. */
struct ntfs_dir_refs {
	uint64_t dir;
	bool held;		/* REFS are DIR's */
	uint64_t *refs;
	size_t n, cap;
};
bool ntfs_vol_dir_has_entry(struct ntfs_vol *v, struct ntfs_dir_refs *r,
			    uint64_t dir, uint64_t mref);
void ntfs_dir_refs_free(struct ntfs_dir_refs *r);
/* The data size DIR's $I30 entry for MREF (as above) says, the
 * $FILE_NAME its key repeats, in *SIZE: 0, or -1 no such entry (or it
 * cannot be read). */
int ntfs_vol_dir_entry_size(struct ntfs_vol *v, uint64_t dir, uint64_t mref,
			    uint64_t *size);

#endif
