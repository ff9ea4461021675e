// SPDX-License-Identifier: GPL-2.0-or-later
/* fsck.ntfs: where MFT records are written (libntfs/record_io.c does the
 * writing): $MFTMirr gets its copies only where pass 0 verified it to be. */
#include "config.h"

#include "ntfs_check.h"

int ntfs_check_write_record(struct ntfs_check *c, uint64_t recno, uint8_t *buf)
{
	return ntfs_vol_write_record(&c->vol, recno, buf,
				     c->geo.mirr_ok ? c->mirr_records : 0);
}
