// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * $Extend's files found by name in its index ($I30, which the index pass
 * has checked, and rebuilt when it could): for the passes that judge
 * them ($Quota, $ObjId, $Reparse in pass3_views.c, $UsnJrnl in
 * pass3_usnjrnl.c).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs_check.h"

struct extend_find {
	const char *const *names;
	uint64_t *recs;
	size_t n;
};

static bool name_is(const struct ntfs_ie_view *ie, const char *s)
{
	size_t n = strlen(s);

	if (ie->name_len != n)
		return false;
	for (size_t k = 0; k < n; k++)
		if (ie->name[2 * k] != (uint8_t)s[k] || ie->name[2 * k + 1])
			return false;
	return true;
}

static int on_entry(void *arg, const struct ntfs_ie_view *ie)
{
	struct extend_find *f = arg;

	for (size_t i = 0; i < f->n; i++)
		if (name_is(ie, f->names[i]))
			f->recs[i] = ie->mref & 0xffffffffffffULL;
	return 0;
}

int ntfs_extend_files(struct ntfs_check *c, const char *const *names, size_t n,
		      uint64_t *recs)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *rec = malloc(rs);
	struct extend_find f = { .names = names, .recs = recs, .n = n };
	struct ntfs_bt_ops ops = { .entry = on_entry };
	struct ntfs_bt t = { .type = NTFS_AT_FILE_NAME,
			     .collation = NTFS_COLLATION_FILE_NAME, .arg = &f };
	struct ntfs_index ix;
	char why[NTFS_WHY];
	int ret = 0;

	for (size_t i = 0; i < n; i++)
		recs[i] = UINT64_MAX;
	if (!rec)
		return -ENOMEM;
	if (ntfs_vol_read_record(&c->vol, NTFS_FILE_EXTEND, rec) ||
	    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		goto out;
	if (!ntfs_index_open(c, NTFS_FILE_EXTEND, rec, "$I30", &ix)) {
		ntfs_index_bt(&ix, &t, &ops);
		ret = ntfs_bt_walk(&t);
		ntfs_bt_free(&t);
	}
	ntfs_index_close(&ix);
	/* a record that is not a usable file is no file */
	for (size_t i = 0; i < n && !ret; i++)
		if (recs[i] != UINT64_MAX &&
		    (recs[i] >= c->vol.mft_records || !cset_get(&c->record_used, recs[i])))
			recs[i] = UINT64_MAX;
out:
	free(rec);
	return ret;
}
