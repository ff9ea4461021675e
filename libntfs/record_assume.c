// SPDX-License-Identifier: GPL-2.0-or-later
/* libntfs: MFT records assumed in memory, never written: a checker run
 * read-only (fsck -n) goes on with a record as its declined repair would
 * have left it, and every later read of that record returns that version,
 * so that the rest of the check tells what the repair run would find. */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/format.h"
#include "ntfs/volume_io.h"

int ntfs_vol_assume_record(struct ntfs_vol *v, uint64_t recno, const uint8_t *buf)
{
	uint32_t rs = v->boot.g.mft_record_size;
	struct ntfs_assumed *a = v->assumed;
	struct ntfs_record_header h;
	uint16_t usn;
	uint8_t *raw;

	for (; a; a = a->next)
		if (a->recno == recno)
			break;
	if (!a) {
		a = calloc(1, sizeof(*a) + rs);
		if (!a)
			return -ENOMEM;
		a->recno = recno;
		a->next = v->assumed;
		v->assumed = a;
	}
	/* as on disk, as ntfs_vol_write_record would put it there */
	raw = a->raw;
	memcpy(raw, buf, rs);
	memcpy(&h, raw, sizeof(h));
	memcpy(&usn, raw + le16toh(h.usa_ofs), 2);
	ntfs_fixup_apply(raw, rs, (uint16_t)(le16toh(usn) + 1));
	return 0;
}

const uint8_t *ntfs_vol_assumed(const struct ntfs_vol *v, uint64_t recno)
{
	for (const struct ntfs_assumed *a = v->assumed; a; a = a->next)
		if (a->recno == recno)
			return a->raw;
	return NULL;
}

void ntfs_vol_assumed_free(struct ntfs_vol *v)
{
	while (v->assumed) {
		struct ntfs_assumed *a = v->assumed;

		v->assumed = a->next;
		free(a);
	}
}
