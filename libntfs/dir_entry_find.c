// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libntfs: does a directory's $I30 hold an entry for a given file (record
 * number and sequence number)?  The directory's record as a checker's
 * pass 1 will have it (mended in a private copy, never written), its
 * index walked until the entry is met.
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

struct entry_find {
	uint64_t mref;
	bool found;
};

static int on_entry(void *arg, const struct ntfs_ie_view *ie)
{
	struct entry_find *f = arg;

	if (ie->mref != f->mref)
		return 0;
	f->found = true;
	return 1;
}

bool ntfs_vol_dir_has_entry(struct ntfs_vol *v, uint64_t dir, uint64_t mref)
{
	uint32_t rs = v->boot.g.mft_record_size;
	struct entry_find f = { .mref = mref };
	struct ntfs_bt_ops ops = { .entry = on_entry };
	struct ntfs_bt t = { .type = NTFS_AT_FILE_NAME,
			     .collation = NTFS_COLLATION_FILE_NAME, .arg = &f };
	struct ntfs_mft_record m;
	struct ntfs_index ix;
	uint8_t *rec;

	if (!(mref >> 48) || dir >= v->mft_records || !(rec = malloc(rs)))
		return false;
	if (ntfs_vol_read_record(v, dir, rec) || ntfs_record_usable(rec, rs))
		goto out;
	memcpy(&m, rec, sizeof(m));
	if (!(le16toh(m.flags) & NTFS_MFT_IN_USE) ||
	    !(le16toh(m.flags) & NTFS_MFT_IS_DIRECTORY) || !ntfs_record_is_base(rec))
		goto out;
	if (!ntfs_vol_index_open(v, NULL, NULL, dir, rec, "$I30", &ix)) {
		ntfs_index_bt(&ix, &t, &ops);
		ntfs_bt_walk(&t);
		ntfs_bt_free(&t);
	}
	ntfs_index_close(&ix);
out:
	free(rec);
	return f.found;
}
