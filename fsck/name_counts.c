// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The names pending per record (pass 1 counts a file's $FILE_NAMEs, pass
 * 3 takes away each index entry found for it): 3 bits per record, which
 * is enough for almost every file (a name, its DOS twin, a few hard
 * links); a count of 7 or more is kept in a small table sorted by record
 * (a file with many hard links).  The 3 bits of record R are bits 3R to
 * 3R+2 of the map, least significant first, and may straddle two bytes
 * (the map has one byte to spare: FNP_MAP_BYTES).  Counts
 * stop at FNP_MANY ("too many to count, not judged"), also when the table
 * cannot grow.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ntfs_check.h"

#define NIBBLE_BIG 7u

static size_t big_find(const struct ntfs_check *c, uint64_t r, bool *found)
{
	size_t lo = 0, hi = c->nfnp_big;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->fnp_big[mid].r < r)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < c->nfnp_big && c->fnp_big[lo].r == r;
	return lo;
}

unsigned int fnp_get(const struct ntfs_check *c, uint64_t r)
{
	uint64_t at = 3 * r;
	unsigned int w = c->fn_pending[at / 8] | c->fn_pending[at / 8 + 1] << 8;
	unsigned int v = (w >> (at % 8)) & NIBBLE_BIG;
	bool found;
	size_t i;

	if (v != NIBBLE_BIG)
		return v;
	i = big_find(c, r, &found);
	return found ? c->fnp_big[i].n : FNP_MANY;
}

static void nibble(struct ntfs_check *c, uint64_t r, unsigned int v)
{
	uint64_t at = 3 * r;
	uint8_t *b = &c->fn_pending[at / 8];
	unsigned int w = b[0] | b[1] << 8;

	w = (w & ~(NIBBLE_BIG << (at % 8))) | v << (at % 8);
	b[0] = (uint8_t)w;
	b[1] = (uint8_t)(w >> 8);
}

void fnp_set(struct ntfs_check *c, uint64_t r, unsigned int v)
{
	bool found;
	size_t i = big_find(c, r, &found);

	if (v > FNP_MANY)
		v = FNP_MANY;
	if (v < NIBBLE_BIG) {
		if (found) {
			memmove(c->fnp_big + i, c->fnp_big + i + 1,
				(c->nfnp_big - i - 1) * sizeof(*c->fnp_big));
			c->nfnp_big--;
		}
		nibble(c, r, v);
		return;
	}
	nibble(c, r, NIBBLE_BIG);
	if (!found) {
		if (c->nfnp_big == c->cap_fnp_big) {
			size_t cap = c->cap_fnp_big ? 2 * c->cap_fnp_big : 16;
			struct ntfs_fnp_big *g = realloc(c->fnp_big, cap * sizeof(*g));

			if (!g)
				return;	/* read back as FNP_MANY */
			c->fnp_big = g;
			c->cap_fnp_big = cap;
		}
		memmove(c->fnp_big + i + 1, c->fnp_big + i,
			(c->nfnp_big - i) * sizeof(*c->fnp_big));
		c->nfnp_big++;
		c->fnp_big[i].r = r;
	}
	c->fnp_big[i].n = (uint8_t)v;
}
