// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fsck.ntfs's set of clusters in use (fsck/cluster_set.c), an array of
 * extents that turns into a bitmap, against a plain bitmap kept beside
 * it: the same marks and clears, in order, at random and in the patterns
 * passes 1 and 1B make (runs marked cluster by cluster, a cluster
 * cleared in the middle of an extent, all cleared), must answer the same
 * for every cluster, and whether a range holds one (cset_any).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "../../fsck/ntfs_check.h"
#include "tap.h"

#define BITS 100000u

static uint8_t model[BITS / 8 + 1];

static void set(struct ntfs_cset *s, uint64_t l)
{
	cset_set(s, l);
	if (l < BITS)
		model[l / 8] |= (uint8_t)(1u << (l % 8));
}

static void clear(struct ntfs_cset *s, uint64_t l)
{
	cset_clear(s, l);
	if (l < BITS)
		model[l / 8] &= (uint8_t)~(1u << (l % 8));
}

/* every cluster (and a few past the end) answers as the model does */
static bool same(struct ntfs_cset *s)
{
	for (uint64_t l = 0; l < BITS + 16; l++) {
		bool want = l < BITS && (model[l / 8] >> (l % 8) & 1);

		if (cset_get(s, l) != want)
			return false;
	}
	/* and backwards, so that a stale lookup hint shows */
	for (uint64_t l = BITS; l-- > 0;)
		if (cset_get(s, l) != (bool)(model[l / 8] >> (l % 8) & 1))
			return false;
	return true;
}

/* cset_any over ranges at random (some empty, some past the end, some
 * long) answers as a scan of the model does */
static bool spans(const struct ntfs_cset *s)
{
	for (int i = 0; i < 3000; i++) {
		uint64_t from = (uint64_t)rand() % (BITS + 64);
		uint64_t to = from + (uint64_t)rand() % (i % 10 ? 70 : 5000);
		bool want = false;

		for (uint64_t l = from; l < to && l < BITS && !want; l++)
			want = model[l / 8] >> (l % 8) & 1;
		if (cset_any(s, from, to) != want)
			return false;
	}
	return true;
}

/* a sorted, disjoint array of extents with no two adjacent */
static bool tidy(const struct ntfs_cset *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (!s->v[i].len ||
		    (i && s->v[i - 1].start + s->v[i - 1].len >= s->v[i].start))
			return false;
	return true;
}

int main(void)
{
	struct ntfs_cset s;

	cset_init(&s, BITS);
	ok(same(&s) && !s.n && !s.map, "an empty set holds nothing");
	/* runs, marked one cluster at a time as pass 1 does */
	for (uint64_t l = 1000; l < 9000; l++)
		set(&s, l);
	for (uint64_t l = 20000; l < 20010; l++)
		set(&s, l);
	set(&s, 9001);
	set(&s, 9000);		/* joins two extents */
	set(&s, 999);		/* grows one down */
	set(&s, 5000);		/* already in */
	ok(same(&s) && tidy(&s) && s.n == 2 && !s.map && spans(&s),
	   "runs marked cluster by cluster are two extents (%zu)", s.n);
	clear(&s, 4000);	/* splits */
	clear(&s, 999);		/* first cluster */
	clear(&s, 20009);	/* last cluster */
	clear(&s, 50000);	/* not in */
	ok(same(&s) && tidy(&s) && s.n == 3, "clears split and shrink extents (%zu)", s.n);
	for (uint64_t l = 20000; l < 20009; l++)
		clear(&s, l);
	ok(same(&s) && tidy(&s) && s.n == 2, "an extent cleared whole is gone (%zu)", s.n);
	set(&s, BITS);		/* past the end: ignored */
	set(&s, BITS - 1);
	ok(same(&s) && tidy(&s), "the last cluster, and none past it");
	cset_reset(&s);
	memset(model, 0, sizeof(model));
	ok(same(&s) && !s.n, "reset holds nothing");
	/* every other cluster: more extents than the bitmap's bytes, so
	 * the set becomes the bitmap, and keeps answering the same */
	srand(11);
	for (uint64_t l = 0; l < BITS; l += 2)
		set(&s, l);
	ok(same(&s) && s.map && !s.nomem, "many extents turn into the bitmap");
	for (int i = 0; i < 20000; i++) {
		uint64_t l = (uint64_t)rand() % (BITS + 8);

		if (rand() % 3)
			clear(&s, l);
		else
			set(&s, l);
	}
	ok(same(&s) && spans(&s), "the bitmap takes marks and clears at random; ranges are asked right");
	cset_free(&s);
	/* random work on the extents, checked as it goes */
	cset_init(&s, BITS);
	memset(model, 0, sizeof(model));
	bool all = true;

	for (int round = 0; round < 50 && all; round++) {
		for (int i = 0; i < 400; i++) {
			uint64_t at = (uint64_t)rand() % BITS, len = 1 + (uint64_t)rand() % 40;

			for (uint64_t l = at; l < at + len; l++) {
				if (rand() % 5)
					set(&s, l);
				else
					clear(&s, l);
			}
		}
		all = same(&s) && tidy(&s) && spans(&s);
	}
	ok(all && !s.nomem, "random runs marked and cleared (%zu extents%s)", s.n,
	   s.map ? ", now the bitmap" : "");
	cset_free(&s);
	/* a big volume marked backwards, one cluster in two: the extents
	 * would be cheaper than its 32 MiB map, but past 8,192 of them an
	 * insert at the front moves them all; the set is the map by then */
	cset_init(&s, 1u << 28);
	size_t most = 0;

	for (uint64_t k = 20000; k > 0; k--) {
		cset_set(&s, 2 * k);
		if (s.n > most)
			most = s.n;
	}
	ok(s.map && !s.nomem && most <= 8192 && cset_get(&s, 2) &&
	   !cset_get(&s, 3) && cset_get(&s, 40000) && !cset_get(&s, 40002),
	   "out-of-order marks on a big volume stop at 8192 extents (%zu)", most);
	cset_free(&s);
	return tap_done();
}
