// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * liberofs/lz4_destsize.c (mkfs.erofs -zlz4hc level 9): every block is
 * checked by liblz4's decoders, LZ4_decompress_safe into a buffer of
 * exactly the bytes taken and LZ4_decompress_safe_partial (whole and half
 * targets), and by a walk of its sequences for the block format's closing
 * rules (the last match starts 12 bytes or more before the end and ends 5
 * or more before it).  Inputs: zeros, random bytes, text, byte runs,
 * mixed, of 0 to 70 KiB, into 0 to 64 KiB.  Bytes taken: something
 * whenever a literal fits; the whole input into exactly the bytes it was
 * encoded in without a limit, not into one byte less; as many as liblz4's
 * lz4hc level 9 takes on text (to 1%).  The same bytes out whatever the
 * tables encoded before.
 */
#include "config.h"

#include <lz4.h>
#include <lz4hc.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../../liberofs/lz4_destsize.h"
#include "tap.h"

#define MAXLEN (70u << 10)
#define BIGCAP (MAXLEN + MAXLEN / 255 + 64)

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 24);
}

enum { ZEROS, RANDOM, TEXT, RUNS, MIXED, KINDS };
static const char *const kind_name[KINDS] = {
	"zeros", "random", "text", "runs", "mixed"
};

static void text(uint8_t *p, uint32_t len)
{
	static const char *const words[] = {
		"the ", "block ", "of ", "erofs ", "compressed ", "cluster ",
		"and ", "a ", "data\n", "index ", "with ", "inode ", "to ",
		"is ", "lz4 ", "match ", "offset ", "literal ", "\t", "# ",
	};
	uint32_t i = 0;

	while (i < len) {
		const char *w = words[next() % 20];
		size_t n = strlen(w);

		if (n > len - i)
			n = len - i;
		memcpy(p + i, w, n);
		i += (uint32_t)n;
	}
}

static void fill(uint8_t *p, uint32_t len, int kind)
{
	uint32_t i = 0, n;

	switch (kind) {
	case ZEROS:
		memset(p, 0, len);
		break;
	case RANDOM:
		for (; i < len; i++)
			p[i] = (uint8_t)next();
		break;
	case TEXT:
		text(p, len);
		break;
	case RUNS:
		/* runs of one byte, 1 to 300 long, or of a 2-8 byte pattern */
		while (i < len) {
			uint8_t pat[8];
			uint32_t per = next() % 3 ? 1 : 2 + next() % 7;

			for (uint32_t k = 0; k < 8; k++)
				pat[k] = (uint8_t)next();
			for (n = 1 + next() % 300; n && i < len; n--, i++)
				p[i] = pat[i % per];
		}
		break;
	default:
		/* text, random pieces, copies from far back (past 64 KiB) */
		while (i < len) {
			uint32_t c = next() % 4;

			n = 1 + next() % 2000;
			if (n > len - i)
				n = len - i;
			if (c == 0) {
				for (uint32_t k = 0; k < n; k++)
					p[i + k] = (uint8_t)next();
			} else if (c == 1 && i > n) {
				memmove(p + i, p + next() % (i - n), n);
			} else {
				text(p + i, n);
			}
			i += n;
		}
	}
}

/* The sequences of block D (N bytes) rebuild TAKEN bytes and keep the
 * closing rules; false (with the reason in WHY) otherwise. */
static bool closing_rules(const uint8_t *d, int n, uint32_t taken,
			  const char **why)
{
	const uint8_t *ip = d, *end = d + n;
	uint64_t pos = 0;

	while (ip < end) {
		uint32_t tok = *ip++, lit = tok >> 4, ml = tok & 15, off;

		if (lit == 15) {
			do {
				if (ip >= end)
					return *why = "literal length cut", false;
				lit += *ip;
			} while (*ip++ == 255);
		}
		if ((uint64_t)(end - ip) < lit)
			return *why = "literals cut", false;
		ip += lit;
		pos += lit;
		if (ip == end)
			break;	/* the last sequence: literals only */
		if (end - ip < 2)
			return *why = "offset cut", false;
		off = (uint32_t)ip[0] | (uint32_t)ip[1] << 8;
		ip += 2;
		if (!off || off > pos)
			return *why = "offset out of the block", false;
		if (ml == 15) {
			do {
				if (ip >= end)
					return *why = "match length cut", false;
				ml += *ip;
			} while (*ip++ == 255);
		}
		ml += 4;
		if (pos + 12 > taken)
			return *why = "a match starts within 12 bytes of the end", false;
		if (pos + ml + 5 > taken)
			return *why = "a match ends within 5 bytes of the end", false;
		if (ip == end)
			return *why = "the last sequence has a match", false;
		pos += ml;
	}
	if (pos != taken)
		return *why = "the sequences do not make the bytes taken", false;
	return true;
}

static unsigned int fails;

static bool fail(const char *what, int kind, uint32_t len, uint32_t cap)
{
	if (++fails <= 10)
		printf("# %s: %s, %u bytes into %u\n", what, kind_name[kind],
		       len, cap);
	return false;
}

/* encode SRC into CAP bytes of DST and check the block; its size and
 * the bytes taken in *N and *TAKEN */
static bool check(struct erofs_lz4enc *ws, const uint8_t *src, uint32_t len,
		  uint32_t cap, int kind, uint8_t *dst, int *n, uint32_t *taken)
{
	const char *why = NULL;
	uint8_t *out, *part;
	bool good = true;
	int r;

	*n = erofs_lz4enc_destsize(ws, src, len, dst, cap, taken);
	if (*n < 0 || (uint32_t)*n > cap || *taken > len)
		return fail("over CAP or LEN", kind, len, cap);
	if (cap >= 2 && len && !*taken)
		return fail("nothing taken though a literal fits", kind, len, cap);
	if (!*taken)
		return true;
	if (!closing_rules(dst, *n, *taken, &why))
		return fail(why, kind, len, cap);
	/* exactly TAKEN bytes of room: ASan catches a write past them */
	out = malloc(*taken);
	part = malloc(*taken);
	r = LZ4_decompress_safe((const char *)dst, (char *)out, *n, (int)*taken);
	if (r != (int)*taken || memcmp(out, src, *taken))
		good = fail("LZ4_decompress_safe disagrees", kind, len, cap);
	r = LZ4_decompress_safe_partial((const char *)dst, (char *)part, *n,
					(int)*taken, (int)*taken);
	if (r != (int)*taken || memcmp(part, src, *taken))
		good = fail("LZ4_decompress_safe_partial (all) disagrees", kind, len, cap);
	r = LZ4_decompress_safe_partial((const char *)dst, (char *)part, *n,
					(int)(*taken / 2), (int)*taken);
	if (r < (int)(*taken / 2) || r > (int)*taken || memcmp(part, src, (size_t)r))
		good = fail("LZ4_decompress_safe_partial (half) disagrees", kind, len, cap);
	free(out);
	free(part);
	return good;
}

int main(void)
{
	static const uint32_t lens[] = {
		0, 1, 2, 3, 4, 5, 11, 12, 13, 14, 17, 31, 64, 100, 1000, 4095,
		4096, 4097, 8192, 12345, 32768, 65535, 65536, 65537, MAXLEN,
	};
	static const uint32_t caps[] = {
		0, 1, 2, 3, 5, 6, 7, 13, 14, 15, 16, 17, 20, 64, 255, 256,
		1000, 4096, 4097, 8192, 16384, 32768, 65535, 65536,
	};
	const size_t nlens = sizeof(lens) / sizeof(lens[0]);
	const size_t ncaps = sizeof(caps) / sizeof(caps[0]);
	struct erofs_lz4enc *ws = erofs_lz4enc_new(EROFS_LZ4ENC_ATTEMPTS);
	uint8_t *src = malloc(MAXLEN), *dst = malloc(BIGCAP), *d2 = malloc(BIGCAP);
	void *hc = malloc((size_t)LZ4_sizeofStateHC());
	unsigned int blocks = 0, good = 0, whole = 0, exact = 0, short1 = 0;
	unsigned int fits = 0, same = 0, nsame = 0, nfits = 0;
	uint64_t ours = 0, theirs = 0;
	uint32_t taken, t2;
	int n, n2;

	ok(ws && src && dst && d2 && hc, "tables and buffers");
	if (!ws || !src || !dst || !d2 || !hc)
		return tap_done();
	for (int kind = 0; kind < KINDS; kind++) {
		for (size_t li = 0; li < nlens; li++) {
			uint32_t len = lens[li];

			fill(src, len, kind);
			for (size_t ci = 0; ci < ncaps; ci++) {
				blocks++;
				good += check(ws, src, len, caps[ci], kind, dst,
					      &n, &taken);
				/* random bytes: all the literals that fit */
				if (kind == RANDOM && len) {
					uint32_t c = caps[ci], want;

					want = c < 2 ? 0 : c - 2 - c / 255;
					nfits++;
					fits += taken >= (len < want ? len : want);
				}
			}
			/* without a limit: all of it */
			whole += check(ws, src, len, BIGCAP, kind, dst, &n,
				       &taken) && taken == len;
			/* exactly N bytes: all, the same bytes; N - 1: less */
			if (check(ws, src, len, (uint32_t)n, kind, d2, &n2, &t2) &&
			    t2 == len && n2 == n && !memcmp(dst, d2, (size_t)n))
				exact++;
			else
				fail("not all taken into the exact size", kind, len, (uint32_t)n);
			if (!len ||
			    (check(ws, src, len, (uint32_t)n - 1, kind, d2, &n2, &t2) &&
			     t2 < len))
				short1++;
			else
				fail("all taken into one byte less", kind, len, (uint32_t)n - 1);
			/* fresh tables give the same bytes */
			if (len > 4096 || kind == MIXED) {
				struct erofs_lz4enc *w2 =
					erofs_lz4enc_new(EROFS_LZ4ENC_ATTEMPTS);

				erofs_lz4enc_destsize(ws, src, len, dst, 4096, &taken);
				n = erofs_lz4enc_destsize(w2, src, len, d2, 4096, &t2);
				nsame++;
				same += w2 && t2 == taken &&
					!memcmp(dst, d2, (size_t)n);
				erofs_lz4enc_free(w2);
			}
		}
	}
	ok(good == blocks, "%u of %u blocks decoded by liblz4 and keep the closing rules",
	   good, blocks);
	ok(fits == nfits, "random bytes: all the literals that fit taken (%u of %u)",
	   fits, nfits);
	ok(whole == KINDS * nlens, "without a limit, every input taken whole (%u of %zu)",
	   whole, KINDS * nlens);
	ok(exact == KINDS * nlens,
	   "into exactly its size, every input taken whole, the same bytes (%u of %zu)",
	   exact, KINDS * nlens);
	ok(short1 == KINDS * nlens, "into one byte less, none taken whole (%u of %zu)",
	   short1, KINDS * nlens);
	ok(same == nsame, "fresh tables give the same bytes (%u of %u)", same, nsame);

	/* as much as lz4hc level 9 into 4 KiB pclusters, on text and mixed
	 * data, 64 KiB at a time */
	for (int k = 0; k < 40; k++) {
		int in = 65536;

		fill(src, 65536, k % 2 ? TEXT : MIXED);
		erofs_lz4enc_destsize(ws, src, 65536, dst, 4096, &taken);
		ours += taken;
		LZ4_compress_HC_destSize(hc, (const char *)src, (char *)d2, &in,
					 4096, 9);
		theirs += (uint32_t)in;
	}
	ok(ours * 100 >= theirs * 99, "4 KiB pclusters of text: %llu bytes taken, lz4hc 9 %llu",
	   (unsigned long long)ours, (unsigned long long)theirs);
	erofs_lz4enc_free(ws);
	free(src);
	free(dst);
	free(d2);
	free(hc);
	return tap_done();
}
