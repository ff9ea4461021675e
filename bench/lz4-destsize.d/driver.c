// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench/lz4-destsize's driver: DUMP [ATTEMPTS [ROUNDS [WHICH]]]
 * Runs lz4hc level 9 (fast reset + continue_destSize, as liberofs's
 * squeeze() did before) and liberofs/lz4_destsize.c's encoder on every input of DUMP
 * (records of shim.c), ROUNDS times each, interleaved; prints process
 * CPU time of each and the bytes each took and wrote (every call is one
 * 4 KiB pcluster, so more bytes taken is the smaller image).  WHICH:
 * 1 liblz4, 2 candidate, 4 check the candidate's blocks through
 * LZ4_decompress_safe (default 7); run one at a time under
 * valgrind --tool=callgrind for instruction counts.
 */
#define LZ4_HC_STATIC_LINKING_ONLY
#include <lz4.h>
#include <lz4hc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lz4_destsize.h"

struct rec {
	uint32_t cap, len;
	uint8_t *src;
};

static double cpu(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	FILE *f = argc > 1 ? fopen(argv[1], "rb") : NULL;
	int attempts = argc > 2 ? atoi(argv[2]) : EROFS_LZ4ENC_ATTEMPTS;
	int rounds = argc > 3 ? atoi(argv[3]) : 1;
	int which = argc > 4 ? atoi(argv[4]) : 7;
	size_t n = 0, room = 0, better = 0, worse = 0, i;
	uint64_t tk_l = 0, tk_c = 0, out_l = 0, out_c = 0;
	double t_l = 0, t_c = 0;
	struct rec *r = NULL;
	uint32_t h[3], *taken;
	uint8_t *dst = malloc(1 << 20), *chk = malloc(64 << 20);
	LZ4_streamHC_t *hc = malloc((size_t)LZ4_sizeofStateHC());
	struct erofs_lz4enc *ws = erofs_lz4enc_new(attempts);

	if (!f || !dst || !chk || !hc || !ws) {
		fprintf(stderr, "usage: driver DUMP [ATTEMPTS [ROUNDS [WHICH]]]\n");
		return 2;
	}
	while (fread(h, 4, 3, f) == 3) {
		if (n == room) {
			room = room ? 2 * room : 1024;
			r = realloc(r, room * sizeof(*r));
		}
		r[n].cap = h[0];
		r[n].len = h[1];
		r[n].src = malloc(h[1]);
		if (!r || !r[n].src || fread(r[n].src, 1, h[1], f) != h[1])
			break;
		++n;
	}
	taken = calloc(n + 1, sizeof(*taken));
	LZ4_initStreamHC(hc, LZ4_sizeofStateHC());
	for (int round = 0; round < rounds; ++round) {
		double t0 = cpu();

		for (i = 0; (which & 1) && i < n; ++i) {
			int in = (int)r[i].len, o;

			LZ4_resetStreamHC_fast(hc, 9);
			o = LZ4_compress_HC_continue_destSize(hc,
					(const char *)r[i].src, (char *)dst,
					&in, (int)r[i].cap);
			if (!round) {
				taken[i] = (uint32_t)in;
				tk_l += (uint32_t)in;
				out_l += (uint32_t)o;
			}
		}
		t_l += cpu() - t0;
		t0 = cpu();
		for (i = 0; (which & 2) && i < n; ++i) {
			uint32_t tk;
			int o = erofs_lz4enc_destsize(ws, r[i].src, r[i].len,
						      dst, r[i].cap, &tk);

			if (round)
				continue;
			tk_c += tk;
			out_c += (uint32_t)o;
			better += (which & 1) && tk > taken[i];
			worse += (which & 1) && tk < taken[i];
			if (o > (int)r[i].cap) {
				fprintf(stderr, "input %zu: %d bytes over %u\n",
					i, o, r[i].cap);
				return 1;
			}
			if ((which & 4) &&
			    (LZ4_decompress_safe((const char *)dst, (char *)chk,
						 o, 64 << 20) != (int)tk ||
			     memcmp(chk, r[i].src, tk))) {
				fprintf(stderr, "input %zu: round trip fails\n", i);
				return 1;
			}
		}
		t_c += cpu() - t0;
	}
	printf("inputs %zu\n", n);
	if (which & 1)
		printf("lz4hc 9:   cpu %.3f s  taken %llu  written %llu\n", t_l,
		       (unsigned long long)tk_l, (unsigned long long)out_l);
	if (which & 2)
		printf("candidate: cpu %.3f s  taken %llu  written %llu  (attempts %d)\n",
		       t_c, (unsigned long long)tk_c,
		       (unsigned long long)out_c, attempts);
	if ((which & 3) == 3)
		printf("candidate/lz4hc: cpu %.3f  taken %.5f  (more taken in %zu inputs, less in %zu)\n",
		       t_c / t_l, (double)tk_c / (double)tk_l, better, worse);
	for (i = 0; i < n; ++i)
		free(r[i].src);
	free(r);
	free(taken);
	free(dst);
	free(chk);
	free(hc);
	erofs_lz4enc_free(ws);
	fclose(f);
	return 0;
}
