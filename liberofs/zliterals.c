// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * LZ4 extents that can only come out as literals.  An LZ4 sequence copies
 * a match of at least 4 bytes, so a match can start only at a position
 * whose 4 bytes occur at an earlier position too.  When no 4-byte group
 * starting in the first CAP bytes of an extent repeats an earlier one,
 * every sequence a compressor could write into CAP bytes carries literals
 * alone (a match would start at CAP or later, behind CAP literals, which
 * do not fit CAP bytes): whatever the compressor, it takes fewer bytes of
 * input than it writes, and the extent is stored raw.
 *
 * lz4hc's destination-size mode finds that out only after searching the
 * input for its first match, up to the whole extent (4 MiB) in already
 * compressed data; this check reads CAP bytes once.  The table keeps the
 * 4-byte groups by value (no false repeat) with a stamp per slot, so that
 * it is not cleared for each extent.
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

int erofs_grams_init(struct erofs_grams *g, uint32_t cap)
{
	uint32_t slots = 64;

	while (slots < 2 * cap)
		slots *= 2;
	memset(g, 0, sizeof(*g));
	g->val = malloc(slots * sizeof(*g->val));
	g->stamp = calloc(slots, sizeof(*g->stamp));
	if (!g->val || !g->stamp) {
		erofs_grams_free(g);
		return -ENOMEM;
	}
	g->mask = slots - 1;
	g->cap = cap;
	for (g->shift = 32; slots > 1; slots /= 2)
		g->shift--;
	return 0;
}

void erofs_grams_free(struct erofs_grams *g)
{
	free(g->val);
	free(g->stamp);
	memset(g, 0, sizeof(*g));
}

bool erofs_lz4_literals_only(struct erofs_grams *g, const uint8_t *src,
			     uint32_t len, uint32_t cap)
{
	/* the groups starting before CAP (and inside SRC) */
	uint32_t n = len < 4 ? 0 : len - 3;

	if (cap > g->cap)
		return false;
	if (n > cap)
		n = cap;
	if (++g->now == 0) {	/* the stamps wrapped: clear them once */
		memset(g->stamp, 0, (size_t)(g->mask + 1) * sizeof(*g->stamp));
		g->now = 1;
	}
	for (uint32_t p = 0; p < n; p++) {
		uint32_t v, h;

		memcpy(&v, src + p, 4);
		h = (v * 2654435761u) >> g->shift;
		for (;;) {
			if (g->stamp[h] != g->now) {
				g->stamp[h] = g->now;
				g->val[h] = v;
				break;
			}
			if (g->val[h] == v)
				return false;
			h = (h + 1) & g->mask;
		}
	}
	return true;
}
