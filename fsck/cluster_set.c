// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The clusters in use (pass 1 marks them, pass 1B, pass 4 and the index
 * writer read them) and the MFT records in use: a sorted array of
 * extents, 16 bytes an extent, where a map of one bit per item takes an
 * eighth of a byte for every cluster or record of the volume.  A volume
 * of small files (their data resident in their records) uses its
 * clusters in a few hundred extents (8 kB instead of a 250 kB map at
 * 8 GB) and its records in a few.  When the extents would take more
 * than the map (a badly fragmented volume), the set turns into the map,
 * for good.  Changes come mostly in increasing order (pass 1 marks a
 * run cluster by cluster): the extent the last one was at is tried
 * first, by lookups too.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ntfs_check.h"

/* 8,192 extents (128 KiB): a worst-case insert moves 128 KiB, and the
 * 1M-file bench volume uses 424 */
#define CSET_MAX_EXTENTS 8192

void cset_init(struct ntfs_cset *s, uint64_t bits)
{
	memset(s, 0, sizeof(*s));
	s->bits = bits;
}

void cset_free(struct ntfs_cset *s)
{
	free(s->v);
	free(s->map);
	cset_init(s, s->bits);
}

static uint64_t end_of(const struct ntfs_extent *e)
{
	return e->start + e->len;
}

/* the first extent that ends past L (s->n: none); the one the last
 * change was at first, then the next one */
static size_t lookup(const struct ntfs_cset *s, uint64_t l)
{
	size_t lo = 0, hi = s->n, h = s->hint;

	if (h < s->n && end_of(&s->v[h]) > l && (!h || end_of(&s->v[h - 1]) <= l))
		return h;
	if (h + 1 < s->n && end_of(&s->v[h + 1]) > l && end_of(&s->v[h]) <= l)
		return h + 1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (end_of(&s->v[mid]) <= l)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t find(struct ntfs_cset *s, uint64_t l)
{
	size_t i = lookup(s, l);

	if (i < s->n)
		s->hint = i;
	return i;
}

bool cset_get(const struct ntfs_cset *s, uint64_t l)
{
	size_t i;

	if (l >= s->bits)
		return false;
	if (s->map)
		return bit_get(s->map, l);
	i = lookup(s, l);
	return i < s->n && s->v[i].start <= l;
}

bool cset_any(const struct ntfs_cset *s, uint64_t from, uint64_t to)
{
	size_t i;

	if (to > s->bits)
		to = s->bits;
	if (from >= to)
		return false;
	if (s->map) {
		/* whole zero bytes skipped */
		for (uint64_t l = from; l < to; l++) {
			if (!(l % 8) && l + 8 <= to && !s->map[l / 8])
				l += 7;
			else if (bit_get(s->map, l))
				return true;
		}
		return false;
	}
	i = lookup(s, from);
	return i < s->n && s->v[i].start < to;
}

/* the extents turned into the map */
static int to_map(struct ntfs_cset *s)
{
	uint8_t *m = calloc(1, s->bits / 8 + 1);

	if (!m)
		return -1;
	for (size_t i = 0; i < s->n; i++)
		for (uint64_t l = s->v[i].start; l < end_of(&s->v[i]); l++)
			bit_set(m, l);
	free(s->v);
	s->v = NULL;
	s->n = s->cap = s->hint = 0;
	s->map = m;
	return 0;
}

/* room for one more extent: 0, 1 (the set is the map now), -1 */
static int room(struct ntfs_cset *s)
{
	size_t cap;
	struct ntfs_extent *g;

	if (s->n < s->cap)
		return 0;
	cap = s->cap ? 2 * s->cap : 64;
	/* an insert moves the extents after it: past CSET_MAX_EXTENTS a
	 * volume marked out of order (fragmented files, pass 1 in record
	 * order) would cost time quadratic in the extents; the map costs
	 * one bit per cluster whatever the order */
	if (cap * sizeof(*g) > s->bits / 8 + 1024 || cap > CSET_MAX_EXTENTS)
		return to_map(s) ? -1 : 1;
	g = realloc(s->v, cap * sizeof(*g));
	if (!g)
		return to_map(s) ? -1 : 1;
	s->v = g;
	s->cap = cap;
	return 0;
}

static void insert(struct ntfs_cset *s, size_t i, uint64_t start, uint64_t len)
{
	memmove(s->v + i + 1, s->v + i, (s->n - i) * sizeof(*s->v));
	s->v[i] = (struct ntfs_extent){ start, len };
	s->n++;
}

static void remove_at(struct ntfs_cset *s, size_t i)
{
	memmove(s->v + i, s->v + i + 1, (s->n - i - 1) * sizeof(*s->v));
	s->n--;
	s->hint = 0;
}

int cset_set(struct ntfs_cset *s, uint64_t l)
{
	bool prev, next;
	size_t i;
	int r;

	if (l >= s->bits)
		return 0;
	if (s->map) {
		bit_set(s->map, l);
		return 0;
	}
	i = find(s, l);
	if (i < s->n && s->v[i].start <= l)
		return 0;
	prev = i > 0 && end_of(&s->v[i - 1]) == l;
	next = i < s->n && s->v[i].start == l + 1;
	if (prev && next) {
		s->v[i - 1].len += 1 + s->v[i].len;
		remove_at(s, i);
	} else if (prev) {
		s->v[i - 1].len++;
	} else if (next) {
		s->v[i].start--;
		s->v[i].len++;
	} else {
		r = room(s);
		if (r < 0) {
			s->nomem = true;
			return -1;
		}
		if (r > 0) {
			bit_set(s->map, l);
			return 0;
		}
		insert(s, i, l, 1);
	}
	return 0;
}

void cset_clear(struct ntfs_cset *s, uint64_t l)
{
	struct ntfs_extent *e;
	size_t i;

	if (l >= s->bits)
		return;
	if (s->map) {
		bit_clear(s->map, l);
		return;
	}
	i = find(s, l);
	if (i >= s->n || s->v[i].start > l)
		return;
	e = &s->v[i];
	if (e->len == 1) {
		remove_at(s, i);
	} else if (l == e->start) {
		e->start++;
		e->len--;
	} else if (l == end_of(e) - 1) {
		e->len--;
	} else {
		uint64_t tail = end_of(e) - l - 1;
		int r = room(s);

		/* no memory: the cluster stays marked (counted in use) */
		if (r < 0) {
			s->nomem = true;
			return;
		}
		if (r > 0) {
			bit_clear(s->map, l);
			return;
		}
		s->v[i].len = l - s->v[i].start;
		insert(s, i + 1, l + 1, tail);
	}
}

void cset_reset(struct ntfs_cset *s)
{
	if (s->map)
		memset(s->map, 0, s->bits / 8 + 1);
	s->n = s->hint = 0;
}
