// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * $UpCase: the 64 Ki-entry table mapping every UTF-16 unit to its upper
 * case form, as Windows (NTFS 3.1) writes it.  It differs from plain
 * Unicode case mapping, so it is kept as data: runs of characters whose
 * upper case is the character plus DELTA, either contiguous (STEP 1) or
 * every other character (STEP 2, the Latin Extended/Cyrillic pairs).
 * The runs were derived from the table as stored on disk by Windows-
 * compatible formatters; tests/unit compares the result byte for byte with
 * the $UpCase written by ntfs-3g's mkntfs.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ntfs/format.h"

struct upcase_run {
	uint16_t first;
	uint16_t count;
	int32_t delta;
	uint8_t step;
};

static const struct upcase_run runs[] = {
	{ 0x0061, 26, -32, 1 }, { 0x00e0, 23, -32, 1 }, { 0x00f8, 7, -32, 1 },
	{ 0x00ff, 1, 121, 1 }, { 0x0101, 24, -1, 2 }, { 0x0133, 3, -1, 2 },
	{ 0x013a, 8, -1, 2 }, { 0x014b, 23, -1, 2 }, { 0x017a, 3, -1, 2 },
	{ 0x0180, 1, 195, 1 }, { 0x0183, 2, -1, 2 }, { 0x0188, 1, -1, 1 },
	{ 0x018c, 1, -1, 1 }, { 0x0192, 1, -1, 1 }, { 0x0195, 1, 97, 1 },
	{ 0x0199, 1, -1, 1 }, { 0x019a, 1, 163, 1 }, { 0x019e, 1, 130, 1 },
	{ 0x01a1, 3, -1, 2 }, { 0x01a8, 1, -1, 1 }, { 0x01ad, 1, -1, 1 },
	{ 0x01b0, 1, -1, 1 }, { 0x01b4, 2, -1, 2 }, { 0x01b9, 1, -1, 1 },
	{ 0x01bd, 1, -1, 1 }, { 0x01bf, 1, 56, 1 }, { 0x01c6, 1, -2, 1 },
	{ 0x01c9, 1, -2, 1 }, { 0x01cc, 1, -2, 1 }, { 0x01ce, 7, -1, 2 },
	{ 0x01dc, 1, -1, 1 }, { 0x01dd, 1, -79, 1 }, { 0x01df, 9, -1, 2 },
	{ 0x01f3, 1, -2, 1 }, { 0x01f5, 1, -1, 1 }, { 0x01f9, 20, -1, 2 },
	{ 0x0223, 9, -1, 2 }, { 0x023c, 1, -1, 1 }, { 0x0242, 1, -1, 1 },
	{ 0x0247, 4, -1, 2 }, { 0x024f, 1, -1, 1 }, { 0x0250, 1, 10783, 1 },
	{ 0x0251, 1, 10780, 1 }, { 0x0253, 1, -210, 1 }, { 0x0254, 1, -206, 1 },
	{ 0x0256, 2, -205, 1 }, { 0x0259, 1, -202, 1 }, { 0x025b, 1, -203, 1 },
	{ 0x0260, 1, -205, 1 }, { 0x0263, 1, -207, 1 }, { 0x0268, 1, -209, 1 },
	{ 0x0269, 1, -211, 1 }, { 0x026b, 1, 10743, 1 }, { 0x026f, 1, -211, 1 },
	{ 0x0271, 1, 10749, 1 }, { 0x0272, 1, -213, 1 }, { 0x0275, 1, -214, 1 },
	{ 0x027d, 1, 10727, 1 }, { 0x0280, 1, -218, 1 }, { 0x0283, 1, -218, 1 },
	{ 0x0288, 1, -218, 1 }, { 0x0289, 1, -69, 1 }, { 0x028a, 2, -217, 1 },
	{ 0x028c, 1, -71, 1 }, { 0x0292, 1, -219, 1 }, { 0x0371, 2, -1, 2 },
	{ 0x0377, 1, -1, 1 }, { 0x037b, 3, 130, 1 }, { 0x03ac, 1, -38, 1 },
	{ 0x03ad, 3, -37, 1 }, { 0x03b1, 17, -32, 1 }, { 0x03c3, 9, -32, 1 },
	{ 0x03cc, 1, -64, 1 }, { 0x03cd, 2, -63, 1 }, { 0x03d7, 1, -8, 1 },
	{ 0x03d9, 12, -1, 2 }, { 0x03f2, 1, 7, 1 }, { 0x03f8, 1, -1, 1 },
	{ 0x03fb, 1, -1, 1 }, { 0x0430, 32, -32, 1 }, { 0x0450, 16, -80, 1 },
	{ 0x0461, 17, -1, 2 }, { 0x048b, 27, -1, 2 }, { 0x04c2, 6, -1, 2 },
	{ 0x04ce, 1, -1, 1 }, { 0x04cf, 1, -15, 1 }, { 0x04d1, 42, -1, 2 },
	{ 0x0561, 38, -48, 1 }, { 0x1d79, 1, -30204, 1 }, { 0x1d7d, 1, 3814, 1 },
	{ 0x1e01, 75, -1, 2 }, { 0x1ea1, 47, -1, 2 }, { 0x1eff, 1, -1, 1 },
	{ 0x1f00, 8, 8, 1 }, { 0x1f10, 6, 8, 1 }, { 0x1f20, 8, 8, 1 },
	{ 0x1f30, 8, 8, 1 }, { 0x1f40, 6, 8, 1 }, { 0x1f51, 4, 8, 2 },
	{ 0x1f60, 8, 8, 1 }, { 0x1f70, 2, 74, 1 }, { 0x1f72, 4, 86, 1 },
	{ 0x1f76, 2, 100, 1 }, { 0x1f78, 2, 128, 1 }, { 0x1f7a, 2, 112, 1 },
	{ 0x1f7c, 2, 126, 1 }, { 0x1f80, 8, 8, 1 }, { 0x1f90, 8, 8, 1 },
	{ 0x1fa0, 8, 8, 1 }, { 0x1fb0, 2, 8, 1 }, { 0x1fb3, 1, 9, 1 },
	{ 0x1fc3, 1, 9, 1 }, { 0x1fd0, 2, 8, 1 }, { 0x1fe0, 2, 8, 1 },
	{ 0x1fe5, 1, 7, 1 }, { 0x1ff3, 1, 9, 1 }, { 0x214e, 1, -28, 1 },
	{ 0x2170, 16, -16, 1 }, { 0x2184, 1, -1, 1 }, { 0x24d0, 26, -26, 1 },
	{ 0x2c30, 47, -48, 1 }, { 0x2c61, 1, -1, 1 }, { 0x2c65, 1, -10795, 1 },
	{ 0x2c66, 1, -10792, 1 }, { 0x2c68, 3, -1, 2 }, { 0x2c73, 1, -1, 1 },
	{ 0x2c76, 1, -1, 1 }, { 0x2c81, 50, -1, 2 }, { 0x2d00, 38, -7264, 1 },
	{ 0xa641, 16, -1, 2 }, { 0xa663, 6, -1, 2 }, { 0xa681, 12, -1, 2 },
	{ 0xa723, 7, -1, 2 }, { 0xa733, 31, -1, 2 }, { 0xa77a, 2, -1, 2 },
	{ 0xa77f, 5, -1, 2 }, { 0xa78c, 1, -1, 1 }, { 0xff41, 26, -32, 1 },
};

void ntfs_upcase_build(uint16_t *table)
{
	for (uint32_t c = 0; c < NTFS_UPCASE_LEN; c++)
		table[c] = (uint16_t)c;
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		const struct upcase_run *r = &runs[i];

		for (uint32_t k = 0; k < r->count; k++) {
			uint32_t c = r->first + k * r->step;

			table[c] = (uint16_t)(c + (uint32_t)r->delta);
		}
	}
}

static uint16_t entry(const uint8_t *t, uint32_t c)
{
	return (uint16_t)(t[2 * c] | t[2 * c + 1] << 8);
}

static void judged_bad(uint32_t c, uint32_t *bad, uint32_t *first)
{
	if (!(*bad)++ || c < *first)
		*first = c;
}

uint32_t ntfs_upcase_judge(const uint8_t *t, uint32_t judged, uint32_t *first)
{
	/* one bit per character: in a run (its upper case differs) */
	uint8_t *in_run = calloc(NTFS_UPCASE_LEN / 8, 1);
	uint32_t bad = 0;

	if (!in_run)
		return UINT32_MAX;
	*first = 0;
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		const struct upcase_run *r = &runs[i];

		for (uint32_t k = 0; k < r->count; k++) {
			uint32_t c = r->first + k * r->step;
			uint16_t v, s = (uint16_t)(c + (uint32_t)r->delta);

			in_run[c / 8] |= (uint8_t)(1u << (c % 8));
			if (c >= judged)
				continue;
			v = entry(t, c);
			if ((v != c && v != s) || (c >= 'a' && c <= 'z' && v != s))
				judged_bad(c, &bad, first);
		}
	}
	for (uint32_t c = 0; c < judged; c++)
		if (!(in_run[c / 8] & (1u << (c % 8))) && entry(t, c) != c)
			judged_bad(c, &bad, first);
	free(in_run);
	return bad;
}
