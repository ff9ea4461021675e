// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * liberofs/zliterals.c: an extent whose first CAP bytes hold no repeated
 * 4-byte group is reported as literals only, and then liblz4's lz4hc
 * (every level), compressing into CAP bytes, indeed takes fewer bytes
 * than it writes (the extent is stored raw without it).  Repeats inside
 * and just past CAP, and the table's reuse across extents, checked by
 * hand-made buffers.
 */
#include "config.h"

#include <lz4hc.h>
#include <stdlib.h>
#include <string.h>

#include "../../liberofs/internal.h"
#include "tap.h"

#define CAP 4096u
#define LEN (256u << 10)

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint8_t next_byte(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint8_t)(rng >> 24);
}

/* lz4hc at LEVEL into CAP bytes takes fewer bytes of SRC than it writes */
static bool hc_raw(const uint8_t *src, int level)
{
	static char dst[CAP];
	void *st = malloc((size_t)LZ4_sizeofStateHC());
	int in = (int)LEN, r;

	r = LZ4_compress_HC_destSize(st, (const char *)src, dst, &in, (int)CAP,
				     level);
	free(st);
	return r > 0 && in < r;
}

int main(void)
{
	static uint8_t buf[LEN];
	struct erofs_grams g;
	unsigned int passed = 0, agreed = 0;

	ok(erofs_grams_init(&g, CAP) == 0, "table for 4 KiB");
	/* random extents: literals only unless a 4-byte group repeats
	 * by chance (about 1 in 500 over 4 KiB) */
	for (int k = 0; k < 40; k++) {
		for (size_t i = 0; i < LEN; i++)
			buf[i] = next_byte();
		if (!erofs_lz4_literals_only(&g, buf, LEN, CAP))
			continue;
		passed++;
		for (int level = 1; level <= 12; level++)
			agreed += hc_raw(buf, level);
	}
	ok(passed >= 35, "random extents found literals only: %u of 40", passed);
	ok(agreed == passed * 12, "lz4hc levels 1-12 store all of them raw (%u of %u)",
	   agreed, passed * 12);

	/* a group repeated inside the first CAP bytes */
	do {
		for (size_t i = 0; i < CAP + 8; i++)
			buf[i] = next_byte();
	} while (!erofs_lz4_literals_only(&g, buf, LEN, CAP));
	ok(erofs_lz4_literals_only(&g, buf, LEN, CAP), "the base extent passes");
	memcpy(buf + 3000, buf + 100, 4);
	ok(!erofs_lz4_literals_only(&g, buf, LEN, CAP), "a repeat at 3000 of 100 is seen");
	/* the last group starting before CAP (CAP - 1) counts, one at CAP not */
	do {
		for (size_t i = 0; i < CAP + 8; i++)
			buf[i] = next_byte();
	} while (!erofs_lz4_literals_only(&g, buf, LEN, CAP));
	memcpy(buf + CAP, buf + 10, 4);
	ok(erofs_lz4_literals_only(&g, buf, LEN, CAP), "a repeat starting at CAP is past the check");
	memcpy(buf + CAP - 1, buf + 10, 4);
	ok(!erofs_lz4_literals_only(&g, buf, LEN, CAP), "a repeat starting at CAP - 1 is seen");
	/* all zeros: repeats at once; a short extent holds no group */
	memset(buf, 0, 64);
	ok(!erofs_lz4_literals_only(&g, buf, 64, CAP), "zeros repeat");
	ok(erofs_lz4_literals_only(&g, buf, 3, CAP), "3 bytes hold no group");
	ok(!erofs_lz4_literals_only(&g, buf, LEN, 2 * CAP), "a CAP above the table's: no answer");
	/* the stamps wrap: the table is cleared, not read stale */
	g.now = UINT32_MAX;
	for (size_t i = 0; i < 64; i++)
		buf[i] = (uint8_t)i;
	ok(erofs_lz4_literals_only(&g, buf, 64, CAP), "after the stamps wrap, 0..63 has no repeat");
	erofs_grams_free(&g);
	return tap_done();
}
