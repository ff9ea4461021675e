// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 5: the volume's dirty flag.  It is cleared only when nothing was
 * left uncorrected, so that a volume that still needs attention keeps
 * saying so.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs_check.h"
#include "ntfs_problems.h"

#define NTFS_VOLUME_IS_DIRTY 0x0001

int ntfs_pass5_volume(struct ntfs_check *c)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];
	uint8_t *rec;
	int ret = 0;

	if (!(c->volume_flags & NTFS_VOLUME_IS_DIRTY) || c->fix.left ||
	    c->fix.preen_halted || c->fix.fatal)
		return 0;
	if (!fsf_fix_ask(&c->fix, &PR_VOLUME_DIRTY, "$Volume"))
		return 0;
	rec = malloc(rs);
	if (!rec)
		return -ENOMEM;
	ret = ntfs_check_read_record(c, NTFS_FILE_VOLUME, rec);
	if (!ret && ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		ret = -EUCLEAN;
	if (!ret) {
		ret = -ENOENT;
		ntfs_attr_cursor_init(&cur, rec);
		while (ntfs_attr_next(&cur, &a, why) == 1) {
			struct ntfs_volume_information vi;
			uint32_t len;
			uint8_t *v;

			if (le32toh(a->type) != NTFS_AT_VOLUME_INFORMATION ||
			    a->non_resident)
				continue;
			v = (uint8_t *)ntfs_attr_value(a, &len);
			if (len < sizeof(vi))
				break;
			memcpy(&vi, v, sizeof(vi));
			vi.flags = htole16(le16toh(vi.flags) & ~NTFS_VOLUME_IS_DIRTY);
			memcpy(v, &vi, sizeof(vi));
			ret = ntfs_check_write_record(c, NTFS_FILE_VOLUME, rec);
			break;
		}
	}
	if (ret)
		fsf_fix_failed(&c->fix);
	free(rec);
	return 0;
}
