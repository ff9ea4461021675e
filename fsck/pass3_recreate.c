// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 3: a directory whose record pass 1 found unusable (and cleared) is
 * made again from the $FILE_NAME its parent's index entry keeps: a fresh
 * record at the same number and sequence number, that name, the parent's
 * $STANDARD_INFORMATION (security id) with the entry's times and
 * attributes, and an index rebuilt from the names that point to it.  Its
 * files keep their names where they were instead of going to /lost+found
 * as #record.  (A cleared file's data cannot come back that way: its
 * runlist went with its record.)
 */
#include "config.h"

#include <endian.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/dir_record.h"
#include "ntfs_check.h"
#include "ntfs_problems.h"

#define MASK48 0xffffffffffffULL

/* the parent's $STANDARD_INFORMATION, or false */
static bool parent_si(struct ntfs_check *c, uint64_t parent, uint8_t *buf,
		      struct ntfs_standard_information *si)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];

	if (ntfs_vol_read_record(&c->vol, parent, buf) ||
	    ntfs_record_check(buf, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		return false;
	ntfs_attr_cursor_init(&cur, buf);
	while (ntfs_attr_next(&cur, &a, why) == 1) {
		uint32_t len;
		const void *v;

		if (le32toh(a->type) != NTFS_AT_STANDARD_INFORMATION || a->non_resident)
			continue;
		v = ntfs_attr_value(a, &len);
		if (len < 48)
			return false;
		memset(si, 0, sizeof(*si));
		memcpy(si, v, len < sizeof(*si) ? len : sizeof(*si));
		return true;
	}
	return false;
}

int ntfs_recreate_dir(struct ntfs_check *c, uint64_t parent,
		      const struct ntfs_ie_view *ie, const char *name8,
		      uint8_t *unchecked, const char *obj)
{
	const struct ntfs_geometry *g = &c->vol.boot.g;
	uint32_t rs = g->mft_record_size;
	uint64_t recno = ie->mref & MASK48;
	uint16_t seq = (uint16_t)(ie->mref >> 48);
	struct ntfs_standard_information si;
	struct ntfs_file_name fn;
	uint8_t *buf;
	int ret = -1;

	if (recno < NTFS_FILE_FIRST_USER || recno >= c->vol.mft_records ||
	    !c->record_lost || !rare_get(c->record_lost, recno) ||
	    cset_get(&c->record_used, recno) || !seq ||
	    ie->key_len < sizeof(fn))
		return -1;
	memcpy(&fn, ie->key, sizeof(fn));
	if (!(le32toh(fn.file_attributes) & NTFS_FA_DUP_FILE_NAME_INDEX_PRESENT) ||
	    (le64toh(fn.parent_directory) & MASK48) != parent ||
	    sizeof(fn) + 2u * fn.name_length > ie->key_len || !fn.name_length)
		return -1;
	buf = malloc(rs);
	if (!buf)
		return -1;
	if (!parent_si(c, parent, buf, &si))
		goto out;
	if (!fsf_fix_ask(&c->fix, &PR_DIR_RECREATED, obj, name8,
			 (unsigned long long)recno)) {
		/* -n goes on as if it were made again (in memory only): its
		 * files are in it, as -a leaves them, not orphans, and it is
		 * placed by the name its entry keeps (not on disk) */
		if (c->fix.mode == FSF_MODE_NO) {
			cset_set(&c->record_used, recno);
			if (!rset_set(&c->record_dir, recno))
				rare_set(unchecked, recno);
			ntfs_name_given_add(c, recno, ie->key,
					    (uint32_t)(sizeof(fn) + 2u * fn.name_length));
		}
		ret = 1;
		goto out;
	}
	si.creation_time = fn.creation_time;
	si.last_data_change_time = fn.last_data_change_time;
	si.last_mft_change_time = fn.last_mft_change_time;
	si.last_access_time = fn.last_access_time;
	si.file_attributes = htole32(le32toh(fn.file_attributes) &
				     ~(uint32_t)(NTFS_FA_DUP_FILE_NAME_INDEX_PRESENT |
						 NTFS_FA_DUP_VIEW_INDEX_PRESENT));
	if (ntfs_dir_record_build(g, buf, (uint32_t)recno, seq, &si, ie->key,
				  (uint32_t)(sizeof(fn) + 2u * fn.name_length)) ||
	    ntfs_check_write_record(c, recno, buf))
		goto failed;
	cset_set(&c->record_used, recno);
	if (rset_set(&c->record_dir, recno))
		goto failed;
	/* its index comes from the names that point to it: they are not
	 * judged against the empty one */
	ntfs_rebuild_promise(c, recno);
	rare_set(unchecked, recno);
	ret = 0;
	goto out;
failed:
	fsf_fix_failed(&c->fix);
out:
	free(buf);
	return ret;
}
