// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libntfs: the record of a new, empty directory -- the root, a directory
 * made again from its parent's index entry, /lost+found -- and the values
 * of the root and /lost+found.  No I/O.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <string.h>

#include "ntfs/dir_record.h"
#include "ntfs/index_build.h"
#include "ntfs/read.h"

#define MASK48 0xffffffffffffULL
#define ROOT_SECURITY_ID 0x102		/* mkfs.ntfs's root descriptor */

int ntfs_dir_record_build(const struct ntfs_geometry *g, uint8_t *buf,
			  uint32_t recno, uint16_t seq,
			  const struct ntfs_standard_information *si,
			  const void *fn, uint32_t fn_len)
{
	struct ntfs_ib_result ir;
	struct ntfs_rec nr;
	bool ok;

	if (ntfs_index_build(NULL, 0, 256, g->index_block_size, g->cluster_size, &ir))
		return -ENOMEM;
	ntfs_rec_init(&nr, buf, g->mft_record_size, recno, seq,
		      NTFS_MFT_IN_USE | NTFS_MFT_IS_DIRECTORY, 1);
	ok = ntfs_rec_add_resident(&nr, NTFS_AT_STANDARD_INFORMATION, NULL, si,
				   sizeof(*si), 0) &&
	     ntfs_rec_add_resident(&nr, NTFS_AT_FILE_NAME, NULL, fn, fn_len, 1) &&
	     ntfs_rec_add_resident(&nr, NTFS_AT_INDEX_ROOT, "$I30", ir.root,
				   ir.root_len, 0);
	ntfs_index_build_free(&ir);
	return ok ? 0 : -ENOSPC;
}

void ntfs_root_dir_values(int64_t now, struct ntfs_standard_information *si,
			  uint8_t *fnv)
{
	uint32_t fa = NTFS_FA_HIDDEN | NTFS_FA_SYSTEM | NTFS_FA_ARCHIVE;
	int64_t t = (int64_t)htole64((uint64_t)now);
	struct ntfs_file_name fn;

	memset(si, 0, sizeof(*si));
	si->creation_time = si->last_data_change_time = t;
	si->last_mft_change_time = si->last_access_time = t;
	si->file_attributes = htole32(fa);
	si->security_id = htole32(ROOT_SECURITY_ID);
	memset(&fn, 0, sizeof(fn));
	fn.parent_directory = htole64(NTFS_MREF(NTFS_FILE_ROOT, NTFS_FILE_ROOT));
	fn.creation_time = fn.last_data_change_time = t;
	fn.last_mft_change_time = fn.last_access_time = t;
	fn.file_attributes = htole32(fa | NTFS_FA_DUP_FILE_NAME_INDEX_PRESENT);
	fn.name_length = 1;
	fn.name_type = NTFS_NS_WIN32_AND_DOS;
	memcpy(fnv, &fn, sizeof(fn));
	fnv[sizeof(fn)] = '.';
	fnv[sizeof(fn) + 1] = 0;
}

bool ntfs_is_lost_found(const uint8_t *v, uint32_t len)
{
	struct ntfs_file_name fn;

	memcpy(&fn, v, sizeof(fn));
	if ((le64toh(fn.parent_directory) & MASK48) != NTFS_FILE_ROOT ||
	    fn.name_length != NTFS_LOST_FOUND_LEN ||
	    sizeof(fn) + 2u * fn.name_length > len)
		return false;
	for (unsigned int i = 0; i < fn.name_length; i++)
		if (v[sizeof(fn) + 2 * i] != (uint8_t)NTFS_LOST_FOUND[i] ||
		    v[sizeof(fn) + 2 * i + 1])
			return false;
	return true;
}

/* the resident value of TYPE in checked record REC, or NULL */
static const uint8_t *value_of(const uint8_t *rec, uint32_t type, uint32_t *len)
{
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];

	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1)
		if (le32toh(a->type) == type && !a->non_resident && !a->name_length)
			return ntfs_attr_value(a, len);
	return NULL;
}

int ntfs_lost_found_values(const uint8_t *root, int64_t now,
			   struct ntfs_standard_information *si, uint8_t *fnv)
{
	struct ntfs_mft_record m;
	struct ntfs_file_name fn;
	uint32_t len = 0;
	const uint8_t *v;
	uint16_t root_seq;

	/* the root's $STANDARD_INFORMATION (owner, security id) */
	if (!(v = value_of(root, NTFS_AT_STANDARD_INFORMATION, &len)) || len < 48)
		return -1;
	memset(si, 0, sizeof(*si));
	memcpy(si, v, len < sizeof(*si) ? len : sizeof(*si));
	memcpy(&m, root, sizeof(m));
	root_seq = le16toh(m.sequence_number);
	/* an ordinary directory (the root is hidden and system), with the
	 * root's owner and security descriptor */
	si->file_attributes = htole32(NTFS_FA_ARCHIVE);
	si->creation_time = si->last_data_change_time = si->last_mft_change_time =
		si->last_access_time = (int64_t)htole64((uint64_t)now);
	memset(&fn, 0, sizeof(fn));
	fn.parent_directory = htole64(NTFS_FILE_ROOT | (uint64_t)root_seq << 48);
	fn.creation_time = fn.last_data_change_time = fn.last_mft_change_time =
		fn.last_access_time = si->creation_time;
	fn.file_attributes = htole32(le32toh(si->file_attributes) |
				     NTFS_FA_DUP_FILE_NAME_INDEX_PRESENT);
	fn.name_length = NTFS_LOST_FOUND_LEN;
	fn.name_type = NTFS_NS_POSIX;
	memcpy(fnv, &fn, sizeof(fn));
	for (size_t i = 0; i < NTFS_LOST_FOUND_LEN; i++) {
		fnv[sizeof(fn) + 2 * i] = (uint8_t)NTFS_LOST_FOUND[i];
		fnv[sizeof(fn) + 2 * i + 1] = 0;
	}
	return 0;
}
