// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The order of index keys, one function per collation rule:
 *   FILE_NAME ($I30): names compare unit by unit after folding through
 *     $UpCase; a shorter name that is a prefix of a longer one sorts
 *     first; names equal when folded are ordered by their exact units.
 *   NTOFS_ULONG ($SII, $Q): one little-endian 32-bit number.
 *   NTOFS_SECURITY_HASH ($SDH), NTOFS_ULONGS ($O of $ObjId, $R): 32-bit
 *     little-endian numbers compared in turn, a shorter key first.
 *   NTOFS_SID ($O of $Quota), BINARY: bytes, a shorter key first.
 */
#include "config.h"

#include <endian.h>
#include <string.h>

#include "ntfs/format.h"
#include "le.h"

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

/* the name of a $FILE_NAME key in host order; -1 if it does not fit */
static int key_name(const uint8_t *k, uint32_t len, uint16_t *u, size_t *n)
{
	const size_t hdr = sizeof(struct ntfs_file_name);

	if (len < hdr || !k[64] || hdr + 2u * k[64] > len)
		return -1;
	*n = k[64];
	for (size_t i = 0; i < *n; i++)
		u[i] = (uint16_t)(k[hdr + 2 * i] | k[hdr + 2 * i + 1] << 8);
	return 0;
}

int ntfs_collate(uint32_t rule, const uint16_t *upcase, const uint8_t *a,
		 uint32_t alen, const uint8_t *b, uint32_t blen)
{
	uint16_t ua[255], ub[255];
	size_t na, nb;
	int c;

	switch (rule) {
	case NTFS_COLLATION_FILE_NAME:
		if (!upcase || key_name(a, alen, ua, &na) || key_name(b, blen, ub, &nb))
			return NTFS_COLLATE_BAD;
		return ntfs_collate_file_name(upcase, ua, na, ub, nb);
	case NTFS_COLLATION_NTOFS_ULONG:
		if (alen != 4 || blen != 4)
			return NTFS_COLLATE_BAD;
		return ntfs_get32(a) < ntfs_get32(b) ? -1 : ntfs_get32(a) > ntfs_get32(b);
	case NTFS_COLLATION_NTOFS_SECURITY_HASH:
	case NTFS_COLLATION_NTOFS_ULONGS:
		if (alen & 3 || blen & 3 || !alen || !blen)
			return NTFS_COLLATE_BAD;
		for (uint32_t i = 0; i < alen && i < blen; i += 4)
			if (ntfs_get32(a + i) != ntfs_get32(b + i))
				return ntfs_get32(a + i) < ntfs_get32(b + i) ? -1 : 1;
		return alen == blen ? 0 : (alen < blen ? -1 : 1);
	case NTFS_COLLATION_NTOFS_SID:
	case NTFS_COLLATION_BINARY:
		c = memcmp(a, b, alen < blen ? alen : blen);
		if (c)
			return c < 0 ? -1 : 1;
		return alen == blen ? 0 : (alen < blen ? -1 : 1);
	}
	return NTFS_COLLATE_BAD;
}
