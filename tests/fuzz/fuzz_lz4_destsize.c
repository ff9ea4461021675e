// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: liberofs/lz4_destsize.c, the LZ4 encoder of mkfs.erofs
 * -zlz4hc level 9, over arbitrary bytes into any size: the first three
 * bytes give CAP (17 bits: 0 to 128 KiB - 1), the rest is the input.  The
 * block must fit CAP, take something whenever a literal fits, decode
 * through liblz4's LZ4_decompress_safe into exactly the bytes taken (and
 * LZ4_decompress_safe_partial to half of them) as the input's prefix, and
 * come out the same when encoded again with the tables the first encoding
 * left (one set of tables serves every input, as a worker's does).  Built
 * and run by scripts/fuzz with ASan+UBSan.
 */
#include <lz4.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lz4_destsize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct erofs_lz4enc *ws;
	uint32_t cap, len, taken, t2;
	uint8_t *dst, *again, *out;
	int n, n2, r;

	if (size < 3 || size - 3 > (1u << 20))
		return 0;
	if (!ws && !(ws = erofs_lz4enc_new(EROFS_LZ4ENC_ATTEMPTS)))
		abort();
	cap = (uint32_t)data[0] | (uint32_t)data[1] << 8 |
	      (uint32_t)(data[2] & 1) << 16;
	len = (uint32_t)(size - 3);
	data += 3;
	/* exactly CAP bytes: ASan catches a write past them */
	dst = malloc(cap ? cap : 1);
	again = malloc(cap ? cap : 1);
	if (!dst || !again)
		abort();
	n = erofs_lz4enc_destsize(ws, data, len, dst, cap, &taken);
	if (n < 0 || (uint32_t)n > cap || taken > len)
		abort();
	if (cap >= 2 && len && !taken)
		abort();
	n2 = erofs_lz4enc_destsize(ws, data, len, again, cap, &t2);
	if (n2 != n || t2 != taken || memcmp(dst, again, (size_t)n))
		abort();
	if (taken) {
		out = malloc(taken);
		if (!out)
			abort();
		r = LZ4_decompress_safe((const char *)dst, (char *)out, n,
					(int)taken);
		if (r != (int)taken || memcmp(out, data, taken))
			abort();
		r = LZ4_decompress_safe_partial((const char *)dst, (char *)out,
						n, (int)(taken / 2), (int)taken);
		if (r < (int)(taken / 2) || r > (int)taken ||
		    memcmp(out, data, (size_t)r))
			abort();
		free(out);
	}
	free(dst);
	free(again);
	return 0;
}
