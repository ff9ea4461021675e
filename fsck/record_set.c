// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A set of MFT record numbers that few records are in (directories,
 * records pass 2 must look at): a sorted array of 32-bit record numbers
 * (MFT record numbers fit 32 bits: the record header's own field), 4
 * bytes a member, where a map of one bit per record takes an eighth of a
 * byte for every record of the volume.  When the members grow past 1 in
 * 32 records the array would take more than the map: the set turns into
 * the map, for good.  Members come mostly in increasing order (pass 1
 * scans the MFT in order): adding at the end is the common case.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ntfs_check.h"

void rset_init(struct ntfs_rset *s, uint64_t bits)
{
	memset(s, 0, sizeof(*s));
	s->bits = bits;
}

void rset_free(struct ntfs_rset *s)
{
	free(s->v);
	free(s->map);
	rset_init(s, s->bits);
}

static size_t find(const struct ntfs_rset *s, uint32_t r, bool *found)
{
	size_t lo = 0, hi = s->n;

	if (s->n && s->v[s->n - 1] < r) {
		*found = false;
		return s->n;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->v[mid] < r)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < s->n && s->v[lo] == r;
	return lo;
}

bool rset_get(const struct ntfs_rset *s, uint64_t r)
{
	bool found;

	if (r >= s->bits)
		return false;
	if (s->map)
		return bit_get(s->map, r);
	find(s, (uint32_t)r, &found);
	return found;
}

/* the array turned into the map */
static int to_map(struct ntfs_rset *s)
{
	uint8_t *m = calloc(1, s->bits / 8 + 1);

	if (!m)
		return -1;
	for (size_t i = 0; i < s->n; i++)
		bit_set(m, s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
	s->map = m;
	return 0;
}

int rset_set(struct ntfs_rset *s, uint64_t r)
{
	bool found;
	size_t i;

	if (r >= s->bits)
		return 0;
	if (s->map) {
		bit_set(s->map, r);
		return 0;
	}
	i = find(s, (uint32_t)r, &found);
	if (found)
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		uint32_t *g;

		if (cap > s->bits / 32 + 64) {
			if (to_map(s))
				return -1;
			bit_set(s->map, r);
			return 0;
		}
		g = realloc(s->v, cap * sizeof(*g));
		if (!g)
			return to_map(s) ? -1 : (bit_set(s->map, r), 0);
		s->v = g;
		s->cap = cap;
	}
	memmove(s->v + i + 1, s->v + i, (s->n - i) * sizeof(*s->v));
	s->v[i] = (uint32_t)r;
	s->n++;
	return 0;
}

void rset_clear(struct ntfs_rset *s, uint64_t r)
{
	bool found;
	size_t i;

	if (r >= s->bits)
		return;
	if (s->map) {
		bit_clear(s->map, r);
		return;
	}
	i = find(s, (uint32_t)r, &found);
	if (!found)
		return;
	memmove(s->v + i, s->v + i + 1, (s->n - i - 1) * sizeof(*s->v));
	s->n--;
}
