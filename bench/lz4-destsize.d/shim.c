// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * LD_PRELOAD shim for bench/lz4-destsize: passes every call of
 * LZ4_compress_HC_continue_destSize on to liblz4 and appends every
 * ZENC_EVERY-th call's input to the file $ZENC_DUMP as a record of
 * little-endian u32 cap, u32 length, u32 bytes liblz4 took, then the
 * input (cut to twice what was taken plus 4 KiB: the compressor reads
 * no further).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*destsize_fn)(void *, const char *, char *, int *, int);
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long calls;
static FILE *out;

int LZ4_compress_HC_continue_destSize(void *st, const char *src, char *dst,
				      int *in, int cap)
{
	static destsize_fn real;
	const char *every = getenv("ZENC_EVERY");
	int len = *in, r;

	if (!real)
		real = (destsize_fn)dlsym(RTLD_NEXT,
					  "LZ4_compress_HC_continue_destSize");
	r = real(st, src, dst, in, cap);
	pthread_mutex_lock(&lock);
	if (calls++ % (unsigned long)(every ? atoi(every) : 10) == 0) {
		uint32_t h[3];

		if ((uint64_t)len > 2ull * (uint64_t)*in + 4096)
			len = 2 * *in + 4096;
		h[0] = (uint32_t)cap;
		h[1] = (uint32_t)len;
		h[2] = (uint32_t)*in;
		if (!out)
			out = fopen(getenv("ZENC_DUMP"), "wb");
		if (out) {
			fwrite(h, 4, 3, out);
			fwrite(src, 1, (size_t)len, out);
			fflush(out);
		}
	}
	pthread_mutex_unlock(&lock);
	return r;
}
