// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 1: a root directory record beyond use is made again, as mkfs.ntfs
 * makes it (same record and sequence number 5, the name ".", the root's
 * default security id, an empty index); pass 3 then rebuilds its index
 * from the $FILE_NAMEs of its children, which name it as their parent.
 */
#include "config.h"

#include <endian.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ntfs/index_build.h"
#include "ntfs_check.h"
#include "ntfs_problems.h"

#define ROOT_SECURITY_ID 0x102		/* mkfs.ntfs's root descriptor */

int ntfs_recreate_root(struct ntfs_check *c, uint8_t *rec, const char *obj,
		       const char *why)
{
	const struct ntfs_geometry *g = &c->vol.boot.g;
	uint32_t rs = g->mft_record_size;
	uint32_t fa = NTFS_FA_HIDDEN | NTFS_FA_SYSTEM | NTFS_FA_ARCHIVE;
	int64_t now = (int64_t)htole64((uint64_t)ntfs_time(time(NULL)));
	struct ntfs_standard_information si;
	struct ntfs_file_name fn;
	uint8_t fnv[sizeof(fn) + 2];
	struct ntfs_ib_result ir;
	struct ntfs_rec nr;
	char w[NTFS_WHY];
	bool ok;

	if (!fsf_fix_ask(&c->fix, &PR_ROOT_RECREATED, obj, why))
		return -1;
	memset(&si, 0, sizeof(si));
	si.creation_time = si.last_data_change_time = now;
	si.last_mft_change_time = si.last_access_time = now;
	si.file_attributes = htole32(fa);
	si.security_id = htole32(ROOT_SECURITY_ID);
	memset(&fn, 0, sizeof(fn));
	fn.parent_directory = htole64(NTFS_MREF(NTFS_FILE_ROOT, NTFS_FILE_ROOT));
	fn.creation_time = fn.last_data_change_time = now;
	fn.last_mft_change_time = fn.last_access_time = now;
	fn.file_attributes = htole32(fa | NTFS_FA_DUP_FILE_NAME_INDEX_PRESENT);
	fn.name_length = 1;
	fn.name_type = NTFS_NS_WIN32_AND_DOS;
	memcpy(fnv, &fn, sizeof(fn));
	fnv[sizeof(fn)] = '.';
	fnv[sizeof(fn) + 1] = 0;
	if (ntfs_index_build(NULL, 0, 256, g->index_block_size, g->cluster_size, &ir)) {
		fsf_fix_failed(&c->fix);
		return -1;
	}
	ntfs_rec_init(&nr, rec, rs, NTFS_FILE_ROOT, NTFS_FILE_ROOT,
		      NTFS_MFT_IN_USE | NTFS_MFT_IS_DIRECTORY, 1);
	ok = ntfs_rec_add_resident(&nr, NTFS_AT_STANDARD_INFORMATION, NULL, &si,
				   sizeof(si), 0) &&
	     ntfs_rec_add_resident(&nr, NTFS_AT_FILE_NAME, NULL, fnv, sizeof(fnv), 1) &&
	     ntfs_rec_add_resident(&nr, NTFS_AT_INDEX_ROOT, "$I30", ir.root,
				   ir.root_len, 0);
	ntfs_index_build_free(&ir);
	/* written, then read back as pass 1 reads every record */
	if (!ok || ntfs_check_write_record(c, NTFS_FILE_ROOT, rec) ||
	    ntfs_vol_read_record(&c->vol, NTFS_FILE_ROOT, rec) ||
	    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, w) != NTFS_REC_OK) {
		fsf_fix_failed(&c->fix);
		return -1;
	}
	c->root_recreated = true;
	return 0;
}
