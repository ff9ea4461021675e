/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fsck.ntfs: $Extend/$ObjId's $O index against the files' $OBJECT_ID
 * attributes (pass3_objid.c), for the view pass (pass3_views.c).
 */
#ifndef FSCK_NTFS_OBJID_H
#define FSCK_NTFS_OBJID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ntfs_check;

/* a view index entry: key, then data, in one allocation */
struct ntfs_view_entry {
	uint8_t *mem;
	uint16_t klen, dlen;
};

/*
 * The entries $ObjId:$O should hold, from IX (N entries read from the
 * index) and the files: one per object id a file's $OBJECT_ID holds (the
 * file's reference; its birth ids, or the entry's where the attribute has
 * only the id).  With ASK, each difference is a problem (an entry
 * missing, stale, or naming the wrong file); *REPAIR tells whether one
 * was accepted.  *OUT (malloc'ed, *NOUT entries) is set in any case.
 * REC: a record's scratch.  0, or -ENOMEM.
 */
int ntfs_objid_wanted(struct ntfs_check *c, uint8_t *rec,
		      const struct ntfs_view_entry *ix, size_t n, bool ask,
		      struct ntfs_view_entry **out, size_t *nout, bool *repair);

#endif
