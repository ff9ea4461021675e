// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libntfs: does a directory's $I30 hold an entry for a given file (record
 * number and sequence number)?  The directory's record as a checker's
 * pass 1 will have it (mended in a private copy, never written), its
 * index walked once; the references of its entries are kept, sorted, for
 * the caller's next question about the same directory (many files of one
 * directory asked about cost one walk, not one each).
 */
#include "config.h"

#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/btree.h"
#include "ntfs/format.h"
#include "ntfs/index_read.h"
#include "ntfs/repair.h"
#include "ntfs/volume_io.h"

static int on_entry(void *arg, const struct ntfs_ie_view *ie)
{
	struct ntfs_dir_refs *r = arg;

	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64;
		uint64_t *more = realloc(r->refs, cap * sizeof(*more));

		if (!more)
			return -1;	/* stops the walk; not held */
		r->refs = more;
		r->cap = cap;
	}
	r->refs[r->n++] = ie->mref;
	return 0;
}

static int cmp_ref(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* R holds the entries of DIR (none when they cannot be read) */
static void hold(struct ntfs_vol *v, struct ntfs_dir_refs *r, uint64_t dir)
{
	uint32_t rs = v->boot.g.mft_record_size;
	struct ntfs_bt_ops ops = { .entry = on_entry };
	struct ntfs_bt t = { .type = NTFS_AT_FILE_NAME,
			     .collation = NTFS_COLLATION_FILE_NAME, .arg = r };
	struct ntfs_mft_record m;
	struct ntfs_index ix;
	uint8_t *rec = malloc(rs);

	r->n = 0;
	r->held = false;
	if (!rec)
		return;
	r->dir = dir;
	r->held = true;
	if (dir >= v->mft_records || ntfs_vol_read_record(v, dir, rec) ||
	    ntfs_record_usable(rec, rs))
		goto out;
	memcpy(&m, rec, sizeof(m));
	if (!(le16toh(m.flags) & NTFS_MFT_IN_USE) ||
	    !(le16toh(m.flags) & NTFS_MFT_IS_DIRECTORY) || !ntfs_record_is_base(rec))
		goto out;
	if (!ntfs_vol_index_open(v, NULL, NULL, dir, rec, "$I30", &ix)) {
		ntfs_index_bt(&ix, &t, &ops);
		ntfs_bt_walk(&t);
		r->held = !t.stopped;	/* out of memory: asked again */
		ntfs_bt_free(&t);
	}
	ntfs_index_close(&ix);
	if (r->n > 1)
		qsort(r->refs, r->n, sizeof(*r->refs), cmp_ref);
out:
	free(rec);
}

bool ntfs_vol_dir_has_entry(struct ntfs_vol *v, struct ntfs_dir_refs *r,
			    uint64_t dir, uint64_t mref)
{
	if (!(mref >> 48))
		return false;
	if (!r->held || r->dir != dir)
		hold(v, r, dir);
	return r->held && r->n &&
	       bsearch(&mref, r->refs, r->n, sizeof(*r->refs), cmp_ref);
}

void ntfs_dir_refs_free(struct ntfs_dir_refs *r)
{
	free(r->refs);
	memset(r, 0, sizeof(*r));
}
