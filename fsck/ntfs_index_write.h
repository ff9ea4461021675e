/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fsck.ntfs, pass 3: an index written into its record (pass3_index_write.c),
 * shared by the directory rebuild (pass3_rebuild.c) and its variant for a
 * directory whose attributes continue in extension records
 * (pass3_rebuild_listed.c).  The index is built and placed by libntfs
 * (ntfs/index_build.h, ntfs/index_write.h); here fsck's map of clusters
 * in use says where new clusters may come from and is kept up to date.
 */
#ifndef FSCK_NTFS_INDEX_WRITE_H
#define FSCK_NTFS_INDEX_WRITE_H

#include <stdbool.h>
#include <stdint.h>

#include "ntfs/index_build.h"
#include "ntfs/index_write.h"
#include "ntfs_check.h"

/* pass3_index_write.c: the index of TYPE and COLLATION from E (N entries,
 * sorted) for a record whose other attributes take OTHER bytes: the root
 * as big as fits, blocks placed (the old allocation OLD reused when big
 * enough).  0, or -1 with WHY. */
int ntfs_index_plan(struct ntfs_check *c, struct index_plan *p, uint32_t type,
		    uint32_t collation, const struct ntfs_ib_entry *e, long n,
		    uint32_t other, const struct ntfs_run *old, long nold,
		    const struct index_shape *sh, char *why);
/* P's clusters taken, the old ones (OLD, GONE) not kept freed, P's blocks
 * written.  0, or -1 with WHY. */
int ntfs_index_plan_commit(struct ntfs_check *c, const struct index_plan *p,
			   const struct ntfs_run *old, long nold,
			   const struct ntfs_run *gone, long ngone, char *why);

/* pass3_rebuild.c: the names pointing to directory D that belong to
 * records in use, in collation order, one per distinct name (duplicates
 * renamed when accepted): the count, or -1.  Their index entries (keys
 * brought up to date with the files they name), or NULL. */
long ntfs_dir_names(struct ntfs_check *c, uint64_t d, const uint16_t *upcase,
		    struct ntfs_fn_ref ***out);
struct ntfs_ib_entry *ntfs_dir_entries(struct ntfs_check *c,
				       struct ntfs_fn_ref **v, long n);

/* pass3_rebuild_listed.c: replace index NAME of file D, whose attributes
 * are listed in base record BASE's $ATTRIBUTE_LIST, with one of TYPE and
 * COLLATION built from E (N entries, sorted); rebuild directory D's $I30
 * so.  0, or -1 with WHY. */
int ntfs_write_index_listed(struct ntfs_check *c, uint64_t d, const uint8_t *base,
			    const char *name, uint32_t type, uint32_t collation,
			    const struct ntfs_ib_entry *e, long n, char *why);
int ntfs_rebuild_listed(struct ntfs_check *c, uint64_t d, const uint8_t *base,
			const uint16_t *upcase, char *why);

#endif
