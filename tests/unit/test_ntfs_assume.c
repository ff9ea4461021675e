// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the table of records assumed in memory by a read-only
 * check (libntfs/record_assume.c): a record put in is found by its
 * number with its bytes as ntfs_vol_write_record would have written
 * them (the update sequence number one up, the fixups applied: stated
 * here by hand), a record not put in is not found, a second put replaces
 * the first, thousands of neighbouring and scattered numbers stay apart,
 * and past the byte budget a new record is refused (-ENOSPC, counted)
 * while one already held is still replaced.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/read.h"
#include "ntfs/volume_io.h"
#include "tap.h"

#define RS 1024u

/* a FILE record of RS bytes, fixups removed: update sequence array at
 * 0x30, 3 entries, number USN; TAG at byte 0x100 and in each stride's
 * last two bytes (which the fixups move into the array) */
static void record(uint8_t *r, uint16_t usn, uint32_t tag)
{
	memset(r, 0, RS);
	memcpy(r, "FILE", 4);
	r[4] = 0x30;
	r[6] = 3;
	r[0x30] = (uint8_t)usn;
	r[0x31] = (uint8_t)(usn >> 8);
	memcpy(r + 0x100, &tag, 4);
	memcpy(r + 510, &tag, 2);
	memcpy(r + 1022, (uint8_t *)&tag + 2, 2);
}

/* RAW is record (USN, TAG) as written: USN + 1 at 0x30 and at each
 * stride's end, the stride ends' bytes in the array */
static int written(const uint8_t *raw, uint16_t usn, uint32_t tag)
{
	uint16_t n = (uint16_t)(usn + 1);
	uint8_t le[2] = { (uint8_t)n, (uint8_t)(n >> 8) };

	return raw && !memcmp(raw, "FILE", 4) && !memcmp(raw + 0x30, le, 2) &&
	       !memcmp(raw + 510, le, 2) && !memcmp(raw + 1022, le, 2) &&
	       !memcmp(raw + 0x32, &tag, 2) &&
	       !memcmp(raw + 0x34, (uint8_t *)&tag + 2, 2) &&
	       !memcmp(raw + 0x100, &tag, 4);
}

static uint64_t scatter(uint32_t i)
{
	return i % 2 ? (uint64_t)i * 64 : (uint64_t)i * 2654435761u;
}

int main(void)
{
	struct ntfs_vol v = { 0 };
	uint8_t r[RS];
	int bad, ret;

	v.boot.g.mft_record_size = RS;
	ok(!ntfs_vol_assumed(&v, 0), "an empty table holds nothing");

	record(r, 5, 0xa1b2c3d4);
	ok(!ntfs_vol_assume_record(&v, 7, r), "record 7 put in");
	ok(written(ntfs_vol_assumed(&v, 7), 5, 0xa1b2c3d4),
	   "record 7 found as written (USN 6, fixups applied)");
	ok(!ntfs_vol_assumed(&v, 8) && !ntfs_vol_assumed(&v, 6),
	   "records 6 and 8 not found");

	record(r, 9, 0x11223344);
	ok(!ntfs_vol_assume_record(&v, 7, r) && v.assumed.count == 1,
	   "record 7 put in again: replaced, still one record");
	ok(written(ntfs_vol_assumed(&v, 7), 9, 0x11223344),
	   "record 7 found as put in the second time");

	for (uint32_t i = 0; i < 20000; i++) {
		record(r, (uint16_t)i, i);
		if (ntfs_vol_assume_record(&v, scatter(i) + 1000, r))
			break;
	}
	bad = 0;
	for (uint32_t i = 0; i < 20000; i++) {
		bad += !written(ntfs_vol_assumed(&v, scatter(i) + 1000),
				(uint16_t)i, i);
		/* above every number put in */
		bad += ntfs_vol_assumed(&v, (1ull << 50) + i) != NULL;
		/* between the neighbours (every 64th) */
		bad += ntfs_vol_assumed(&v, (uint64_t)i * 64 + 1001) != NULL;
	}
	ok(!bad && v.assumed.count == 20001,
	   "20,000 more records (neighbours and scattered): each found as put in, 40,000 others not");
	ok(written(ntfs_vol_assumed(&v, 7), 9, 0x11223344),
	   "record 7 still found as put in");
	ret = 0;
	for (uint32_t i = 20000; i < 70000 && !ret; i++) {
		record(r, 1, i);
		ret = ntfs_vol_assume_record(&v, scatter(i) + 1000, r);
	}
	/* 64 MiB: 63,488 KiB of records and 131,072 slots of 16 bytes
	 * (the man page's figure) */
	ok(ret == -ENOSPC && v.assumed.refused == 1 &&
	   v.assumed.count == 63488 && v.assumed.bytes == 64ull << 20,
	   "the default budget: refused past %zu records of 1 KiB (%llu bytes)",
	   v.assumed.count, (unsigned long long)v.assumed.bytes);
	ntfs_vol_assumed_free(&v);
	ok(!ntfs_vol_assumed(&v, 7) && !v.assumed.count && !v.assumed.bytes,
	   "freed: nothing found");

	/* a budget of 64 KiB: fewer than 64 records of 1 KiB */
	v.assumed.budget = 64 << 10;
	ret = 0;
	for (uint32_t i = 0; i < 100 && !ret; i++) {
		record(r, 1, i);
		ret = ntfs_vol_assume_record(&v, i, r);
	}
	ok(ret == -ENOSPC && v.assumed.refused == 1,
	   "past a 64 KiB budget: refused (-ENOSPC) after %zu records",
	   v.assumed.count);
	ok(v.assumed.count > 32 && v.assumed.count < 64 &&
	   v.assumed.bytes <= 64 << 10,
	   "the records held and their table within the budget: %llu bytes",
	   (unsigned long long)v.assumed.bytes);
	ok(!ntfs_vol_assumed(&v, v.assumed.count) &&
	   written(ntfs_vol_assumed(&v, v.assumed.count - 1), 1,
		   (uint32_t)v.assumed.count - 1),
	   "the refused record not found; the last held one is");
	record(r, 3, 0x5555);
	ok(!ntfs_vol_assume_record(&v, 0, r) &&
	   written(ntfs_vol_assumed(&v, 0), 3, 0x5555) &&
	   v.assumed.refused == 1,
	   "past the budget, a record held is still replaced");
	ok(ntfs_vol_assume_record(&v, 1u << 20, r) == -ENOSPC &&
	   v.assumed.refused == 2, "another new record refused, counted");
	ntfs_vol_assumed_free(&v);
	return tap_done();
}
