// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Update sequence arrays: before a multi-sector record ($FILE, $INDX) is
 * written, the last two bytes of each 512-byte stride are saved in the
 * array and replaced by the update sequence number, so that a torn write
 * is detectable; reading reverses it.
 */
#include "config.h"

#include <endian.h>
#include <string.h>

#include "ntfs/format.h"

void ntfs_fixup_apply(uint8_t *rec, uint32_t size, uint16_t usn)
{
	struct ntfs_record_header *h = (struct ntfs_record_header *)rec;
	uint16_t ofs = le16toh(h->usa_ofs);
	uint16_t cnt = le16toh(h->usa_count);
	uint8_t *usa = rec + ofs;
	uint16_t le = htole16(usn);

	if (usn == 0 || usn == 0xffff)
		le = htole16(1);
	memcpy(usa, &le, 2);
	for (uint32_t i = 1; i < cnt && i * NTFS_USA_STRIDE <= size; i++) {
		uint8_t *tail = rec + i * NTFS_USA_STRIDE - 2;

		memcpy(usa + 2 * i, tail, 2);
		memcpy(tail, &le, 2);
	}
}

int ntfs_fixup_remove(uint8_t *rec, uint32_t size)
{
	struct ntfs_record_header *h = (struct ntfs_record_header *)rec;
	uint16_t ofs = le16toh(h->usa_ofs);
	uint16_t cnt = le16toh(h->usa_count);
	uint8_t *usa = rec + ofs;

	if (cnt == 0 || (uint32_t)(cnt - 1) * NTFS_USA_STRIDE != size ||
	    (uint32_t)ofs + 2u * cnt > NTFS_USA_STRIDE - 2)
		return -1;
	/* all strides are checked before any is restored: a torn record is
	 * left exactly as read, so that a checker can still look at it */
	for (uint32_t i = 1; i < cnt; i++)
		if (memcmp(rec + i * NTFS_USA_STRIDE - 2, usa, 2) != 0)
			return -1;
	for (uint32_t i = 1; i < cnt; i++)
		memcpy(rec + i * NTFS_USA_STRIDE - 2, usa + 2 * i, 2);
	return 0;
}

int ntfs_fixup_force(uint8_t *rec, uint32_t size, uint32_t *first_torn)
{
	struct ntfs_record_header *h = (struct ntfs_record_header *)rec;
	uint16_t ofs = le16toh(h->usa_ofs);
	uint16_t cnt = le16toh(h->usa_count);
	uint8_t *usa = rec + ofs;
	int torn = 0;

	if (cnt == 0 || (uint32_t)(cnt - 1) * NTFS_USA_STRIDE != size ||
	    (uint32_t)ofs + 2u * cnt > NTFS_USA_STRIDE - 2)
		return -1;
	for (uint32_t i = 1; i < cnt; i++) {
		uint8_t *tail = rec + i * NTFS_USA_STRIDE - 2;

		if (memcmp(tail, usa, 2) != 0 && !torn++)
			*first_torn = i - 1;
		memcpy(tail, usa + 2 * i, 2);
	}
	return torn;
}
