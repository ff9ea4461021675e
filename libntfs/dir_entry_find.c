// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libntfs: does a directory's $I30 hold an entry for a given file (record
 * number and sequence number)?  The directory's record as a checker's
 * pass 1 will have it (mended in a private copy, never written), its
 * index walked once; the references of its entries are kept, sorted, for
 * the caller's next question about the same directory (many files of one
 * directory asked about cost one walk, not one each).  Also: the data
 * size an entry for a given file says (the $FILE_NAME its key repeats).
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

/* DIR's $I30 walked, each entry to ENTRY(ARG): 1 walked, 0 DIR is no
 * readable in-use base directory, -1 out of memory or ENTRY stopped it */
static int walk_dir(struct ntfs_vol *v, uint64_t dir,
		    int (*entry)(void *, const struct ntfs_ie_view *), void *arg)
{
	uint32_t rs = v->boot.g.mft_record_size;
	struct ntfs_bt_ops ops = { .entry = entry };
	struct ntfs_bt t = { .type = NTFS_AT_FILE_NAME,
			     .collation = NTFS_COLLATION_FILE_NAME, .arg = arg };
	struct ntfs_mft_record m;
	struct ntfs_index ix;
	uint8_t *rec = malloc(rs);
	int ret = 0;

	if (!rec)
		return -1;
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
		ret = t.stopped ? -1 : 1;
		ntfs_bt_free(&t);
	}
	ntfs_index_close(&ix);
out:
	free(rec);
	return ret;
}

/* R holds the entries of DIR (none when they cannot be read) */
static void hold(struct ntfs_vol *v, struct ntfs_dir_refs *r, uint64_t dir)
{
	r->n = 0;
	r->dir = dir;
	/* out of memory: asked again */
	r->held = walk_dir(v, dir, on_entry, r) >= 0;
	if (r->held && r->n > 1)
		qsort(r->refs, r->n, sizeof(*r->refs), cmp_ref);
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

struct entry_size {
	uint64_t mref, size;
	bool found;
};

static int on_size(void *arg, const struct ntfs_ie_view *ie)
{
	struct entry_size *s = arg;
	struct ntfs_file_name fn;

	if (ie->mref != s->mref || ie->key_len < sizeof(fn))
		return 0;
	memcpy(&fn, ie->key, sizeof(fn));
	s->size = le64toh((uint64_t)fn.data_size);
	s->found = true;
	return 1;
}

int ntfs_vol_dir_entry_size(struct ntfs_vol *v, uint64_t dir, uint64_t mref,
			    uint64_t *size)
{
	struct entry_size s = { .mref = mref };

	if (!(mref >> 48))
		return -1;
	walk_dir(v, dir, on_size, &s);
	if (!s.found)
		return -1;
	*size = s.size;
	return 0;
}

void ntfs_dir_refs_free(struct ntfs_dir_refs *r)
{
	free(r->refs);
	memset(r, 0, sizeof(*r));
}
