// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 1: a root directory record beyond use is made again, as mkfs.ntfs
 * makes it (same record and sequence number 5, the name ".", the root's
 * default security id, an empty index); pass 3 then rebuilds its index
 * from the $FILE_NAMEs of its children, which name it as their parent.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ntfs/dir_record.h"
#include "ntfs_check.h"
#include "ntfs_problems.h"

int ntfs_recreate_root(struct ntfs_check *c, uint8_t *rec, const char *obj,
		       const char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct ntfs_standard_information si;
	uint8_t fnv[sizeof(struct ntfs_file_name) + 2];
	char w[NTFS_WHY];
	int err;

	if (!fsf_fix_ask(&c->fix, &PR_ROOT_RECREATED, obj, why))
		return -1;
	ntfs_root_dir_values(ntfs_time(time(NULL)), &si, fnv);
	err = ntfs_dir_record_build(&c->vol.boot.g, rec, NTFS_FILE_ROOT,
				    NTFS_FILE_ROOT, &si, fnv, sizeof(fnv));
	if (err == -ENOMEM) {
		fsf_fix_failed(&c->fix);
		return -1;
	}
	/* written, then read back as pass 1 reads every record */
	if (err || ntfs_check_write_record(c, NTFS_FILE_ROOT, rec) ||
	    ntfs_vol_read_record(&c->vol, NTFS_FILE_ROOT, rec) ||
	    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, w) != NTFS_REC_OK) {
		fsf_fix_failed(&c->fix);
		return -1;
	}
	c->root_recreated = true;
	return 0;
}
