// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * COLLATION_FILE_NAME: names compare unit by unit after folding through
 * $UpCase; a shorter name that is a prefix of a longer one sorts first;
 * names equal when folded are ordered by their exact units.
 */
#include "config.h"

#include "ntfs/format.h"

static int cmp_units(const uint16_t *upcase, const uint16_t *a, size_t alen,
		     const uint16_t *b, size_t blen)
{
	size_t n = alen < blen ? alen : blen;

	for (size_t i = 0; i < n; i++) {
		uint16_t x = upcase ? upcase[a[i]] : a[i];
		uint16_t y = upcase ? upcase[b[i]] : b[i];

		if (x != y)
			return x < y ? -1 : 1;
	}
	return alen == blen ? 0 : (alen < blen ? -1 : 1);
}

int ntfs_collate_file_name(const uint16_t *upcase, const uint16_t *a,
			   size_t alen, const uint16_t *b, size_t blen)
{
	int c = cmp_units(upcase, a, alen, b, blen);

	return c ? c : cmp_units(NULL, a, alen, b, blen);
}
