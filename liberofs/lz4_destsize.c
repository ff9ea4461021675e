// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * An LZ4 block encoder into a destination size, for mkfs.erofs -zlz4hc at
 * its default level (9): "compress as much of SRC as fits CAP bytes" for
 * one independent block (no dictionary), written from the LZ4 block format
 * description.  On mkfs.erofs's own inputs it takes 0.90x the instructions
 * of liblz4 1.9.4's lz4hc level 9 for as many bytes per pcluster
 * (bench/lz4-destsize, bench/RESULTS-erofs-compress.md "session 21: zenc").
 *
 * Block format: sequences of a token (literal count in the high nibble,
 * match length - 4 in the low one, 15 meaning "more bytes follow, each
 * 255 adds on, the first below 255 ends"), the literals, a 2-byte
 * little-endian offset (1..65535) and the match length's extra bytes.
 * The last sequence has literals only.  The last 5 bytes of a block are
 * literals and the last match starts at least 12 bytes before its end.
 *
 * Match finding: a hash of the next 4 bytes heads a chain of earlier
 * positions with the same hash (16-bit distances in a 64 Ki ring), walked
 * for at most ATTEMPTS candidates.  Parsing is lazy with overlaps: after a
 * match M1, a match overlapping its end that reaches further (M2) is
 * looked for, and one more past M2 (M3); M1 is cut where M2 starts (or M2
 * is shortened so that M1 keeps up to 18 bytes, its token's reach), and M2
 * is dropped when M3 starts close enough to M1's end.  A match that
 * replaced one starting up to 2 bytes before it gives way to that one
 * again when the next match starts within the earlier one's reach.
 *
 * The walk's own savings over lz4hc's: the searched position enters the
 * chains with the hash computed for the search, an empty chain returns
 * before the walk; a candidate is judged by one byte before its match is
 * counted (at LONGEST when no backward extension is allowed, else first
 * the forward run, then the byte as far back as a wider match needs).
 *
 * Tunables, for bench/lz4-destsize (-D, 1 or 0 for the switches): HLOG
 * (hash bits, 16), SPLIT_ML (18), NICE (stop a search at a match this
 * long: off), SKIP_IN (enter only the last SKIP_IN positions of a long
 * match: off), RUNSKIP (a run of IP's first byte in the chain is judged
 * once: off, it costs 4% more instructions for 0.004% more taken, where
 * 128 more attempts give more), PERIODIC (a candidate periodic with IP
 * sends the walk to its run's start: on).  mkfs.erofs uses the defaults
 * with EROFS_LZ4ENC_ATTEMPTS.
 *
 * Destination size: every sequence is written only with room left for
 * the block's closing literals (5, and enough that the match starts 12
 * bytes before the end); the one that does not fit is shortened or left
 * out, and the closing literals take what room is left.
 *
 * The table positions are kept as an index rising across blocks (BASE is
 * SRC[0]'s), so that a new block ignores the older entries without
 * clearing them: the output depends on SRC, LEN and CAP alone, never on
 * the blocks encoded before with the same tables.
 */
#include "config.h"
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "lz4_destsize.h"

#define MINMATCH	4
#define MFLIMIT		12	/* last match starts this far from the end */
#define LASTLITS	5	/* last bytes always literals */
#define MAXDIST		65535u
#ifndef HLOG
#define HLOG		16
#endif
#ifndef SPLIT_ML
#define SPLIT_ML	18
#endif
#ifndef SKIP_IN
#define SKIP_IN		1000000
#endif
#ifndef RUNSKIP
#define RUNSKIP		0
#endif
#ifndef PERIODIC
#define PERIODIC	1
#endif
#ifndef NICE
#define NICE		1000000
#endif
#define BASE_LIMIT	0x80000000u
#define LEN_LIMIT	0x40000000u

struct erofs_lz4enc {
	uint32_t base;		/* index of the block's first byte */
	int attempts;
	uint32_t htab[1u << HLOG];
	uint16_t chain[1u << 16];
};

struct erofs_lz4enc *erofs_lz4enc_new(int attempts)
{
	struct erofs_lz4enc *ws = calloc(1, sizeof(*ws));

	if (!ws)
		return NULL;
	ws->base = MAXDIST + 1;
	ws->attempts = attempts > 0 ? attempts : 1;
	return ws;
}

void erofs_lz4enc_free(struct erofs_lz4enc *ws)
{
	free(ws);
}

/* one block's encoding state */
struct enc {
	const uint8_t *src, *end;
	const uint8_t *mflimit;	/* last position a match may start at */
	const uint8_t *mlimit;	/* a match ends at or before */
	const uint8_t *anchor;	/* first byte not written yet */
	uint8_t *op, *oend;
	uint32_t *htab;
	uint16_t *chain;
	uint32_t base, next;	/* next: first offset not in the tables */
	int attempts;
	bool full;		/* a shortened match was the last one */
};

static inline uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static inline uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static inline uint32_t hash4(const uint8_t *p)
{
	return (rd32(p) * 2654435761u) >> (32 - HLOG);
}

/* length of the common run of A and B, A stopping before LIM */
static inline uint32_t common(const uint8_t *a, const uint8_t *b,
			      const uint8_t *lim)
{
	const uint8_t *s = a;

	while (a + 8 <= lim) {
		uint64_t x = rd64(a) ^ rd64(b);

		if (x) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
			return (uint32_t)(a - s) + (uint32_t)(__builtin_clzll(x) >> 3);
#else
			return (uint32_t)(a - s) + (uint32_t)(__builtin_ctzll(x) >> 3);
#endif
		}
		a += 8;
		b += 8;
	}
	while (a < lim && *a == *b) {
		++a;
		++b;
	}
	return (uint32_t)(a - s);
}

/* length of the common run of the bytes before A and B, at most MAX */
static inline uint32_t common_back(const uint8_t *a, const uint8_t *b,
				   uint32_t max)
{
	uint32_t n = 0;

	while (n + 8 <= max) {
		uint64_t x = rd64(a - n - 8) ^ rd64(b - n - 8);

		if (x) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
			return n + (uint32_t)(__builtin_ctzll(x) >> 3);
#else
			return n + (uint32_t)(__builtin_clzll(x) >> 3);
#endif
		}
		n += 8;
	}
	while (n < max && a[-1 - (int)n] == b[-1 - (int)n])
		++n;
	return n;
}

/* enter the positions before P into the hash chains */
static inline void insert_upto(struct enc *e, const uint8_t *p)
{
	uint32_t t = (uint32_t)(p - e->src), i;

	/* a long match's inside is left out of the chains but for its end */
	if (t > e->next + SKIP_IN)
		e->next = t - SKIP_IN;

	for (i = e->next; i < t; ++i) {
		uint32_t h = hash4(e->src + i), idx = e->base + i;
		uint32_t d = idx - e->htab[h];

		e->chain[idx & 0xffff] = (uint16_t)(d > MAXDIST ? MAXDIST : d);
		e->htab[h] = idx;
	}
	if (t > e->next)
		e->next = t;
}

/* find_wider()'s walk down the chain from CAND */
static uint32_t walk(struct enc *e, const uint8_t *ip, const uint8_t *low,
		     uint32_t longest, const uint8_t **start,
		     const uint8_t **ref, uint32_t cand, uint32_t lowidx)
{
	uint32_t fmax = (uint32_t)(e->mlimit - ip);
	uint32_t backmax = (uint32_t)(ip - low);
	uint32_t head = rd32(ip);
	int left = e->attempts;
	uint32_t run = 0;	/* IP's bytes equal to its first, if 4+ */

	if (RUNSKIP && head == ip[0] * 0x01010101u &&
	    (!backmax || ip[-1] != ip[0]))
		run = MINMATCH + common(ip + MINMATCH, ip, e->mlimit);
	while (cand >= lowidx && left-- > 0) {
		const uint8_t *m = e->src + (cand - e->base);

		if (run && e->chain[cand & 0xffff] == 1 && m[-1] == ip[0]) {
			/* M inside a run of IP's byte: of the run's
			 * positions, the one RUN bytes before its end
			 * matches furthest; the chain goes on from the
			 * run's start */
			const uint8_t *rs = m, *re = m + MINMATCH;

			while (rs > e->src && rs[-1] == ip[0])
				--rs;
			while (re < ip && *re == ip[0])
				++re;
			if (e->base + (uint32_t)(rs - e->src) < lowidx)
				rs = e->src + (lowidx - e->base);
			m = re - rs > run ? re - run : rs;
			if (m + MINMATCH > re || m >= ip)
				goto next;
			cand = e->base + (uint32_t)(rs - e->src);
			if (m != rs) {
				/* M itself, then RS's chain */
				if (rd32(m) == head)
					goto judge;
			}
		}

		if (rd32(m) == head) {
			uint32_t b, bm, f, need;
judge:
			b = 0;
			bm = backmax;

			if (!bm) {
				/* beating LONGEST needs the byte at LONGEST
				 * (below FMAX, or find_wider() returned) */
				if (longest >= MINMATCH &&
				    ip[longest] != m[longest])
					goto next;
				f = MINMATCH + common(ip + MINMATCH,
						      m + MINMATCH, e->mlimit);
			} else {
				f = MINMATCH + common(ip + MINMATCH,
						      m + MINMATCH, e->mlimit);
				if (bm > (uint32_t)(m - e->src))
					bm = (uint32_t)(m - e->src);
				/* beating LONGEST needs NEED bytes back */
				need = f > longest ? 0 : longest + 1 - f;
				if (need > bm ||
				    (need && ip[-(int)need] != m[-(int)need]))
					goto next;
				if (bm && ip[-1] == m[-1])
					b = common_back(ip, m, bm);
				if (b < need)
					goto next;
			}
			if (f + b > longest) {
				longest = f + b;
				*start = ip - b;
				*ref = m - b;
				if (f == fmax || longest >= NICE)
					break;
			}
			if (PERIODIC && f > (uint32_t)(ip - m)) {
				/* a periodic run: every position of its phase
				 * before M gives the same forward match; go to
				 * the earliest (its chain leaves the run) */
				uint32_t d = (uint32_t)(ip - m);
				const uint8_t *x = m;

				while ((size_t)(x - e->src) >= d &&
				       x[-1] == x[d - 1])
					--x;
				x += (m - x) % d;
				if (x < m && e->base + (uint32_t)(x - e->src) >= lowidx) {
					cand = e->base + (uint32_t)(x - e->src);
					continue;
				}
			}
		}
next:
		cand -= e->chain[cand & 0xffff];
	}
	return longest;
}

/*
 * The longest match for IP that may extend backwards down to LOW, if
 * longer than LONGEST bytes (counted from where it starts): its length,
 * start and reference in *START and *REF; else LONGEST.  IP enters the
 * chains here (its hash is at hand), the positions before it first.
 */
static inline uint32_t find_wider(struct enc *e, const uint8_t *ip,
				  const uint8_t *low, uint32_t longest,
				  const uint8_t **start, const uint8_t **ref)
{
	uint32_t t = (uint32_t)(ip - e->src), cur, lowidx, cand, h, d;

	if (longest >= (uint32_t)(e->mlimit - low))
		return longest;
	insert_upto(e, ip);
	cur = e->base + t;
	lowidx = t > MAXDIST ? cur - MAXDIST : e->base;
	h = hash4(ip);
	cand = e->htab[h];
	if (e->next == t) {
		d = cur - cand;
		e->chain[cur & 0xffff] = (uint16_t)(d > MAXDIST ? MAXDIST : d);
		e->htab[h] = cur;
		e->next = t + 1;
	} else {
		/* searched before: skip the positions from IP on */
		while (cand >= cur && cand >= lowidx)
			cand -= e->chain[cand & 0xffff];
	}
	if (cand < lowidx)
		return longest;
	return walk(e, ip, low, longest, start, ref, cand, lowidx);
}

static inline uint8_t *put_len(uint8_t *op, uint32_t n)
{
	for (; n >= 255; n -= 255)
		*op++ = 255;
	*op++ = (uint8_t)n;
	return op;
}

/* bytes a literal run of N takes, token included */
static inline size_t lit_cost(uint32_t n)
{
	return 1 + n + (n >= 15 ? 1 + (n - 15) / 255 : 0);
}

/* the longest literal run that fits ROOM bytes, token included */
static uint32_t lits_fitting(size_t room)
{
	uint32_t n;

	if (room < 1)
		return 0;
	n = (uint32_t)(room - 1);
	while (n && lit_cost(n) > room)
		--n;
	return n;
}

/*
 * Write the sequence of the literals from the anchor to S and the match
 * of ML bytes at S from REF, leaving room for the block's closing
 * literals; a match that does not fit whole is shortened (and is the
 * last one).  False when not even a 4-byte match fits.
 */
static bool emit(struct enc *e, const uint8_t *s, uint32_t ml,
		 const uint8_t *ref)
{
	uint32_t lit = (uint32_t)(s - e->anchor), off = (uint32_t)(s - ref);
	size_t room = (size_t)(e->oend - e->op), need = lit_cost(lit) + 2;
	uint8_t *op = e->op, *tok = op++;
	size_t r;

	if (need > room)
		return false;
	r = room - need;	/* for the match's length bytes and the close */
	if (ml < 7) {
		if (r < 13 - ml)
			return false;
	} else {
		if (r < 6)
			return false;
		if (ml > 18 + 255 * (r - 6)) {
			ml = (uint32_t)(18 + 255 * (r - 6));
			e->full = true;
		}
	}
	if (lit >= 15) {
		*tok = 15 << 4;
		op = put_len(op, lit - 15);
	} else {
		*tok = (uint8_t)(lit << 4);
	}
	memcpy(op, e->anchor, lit);
	op += lit;
	*op++ = (uint8_t)off;
	*op++ = (uint8_t)(off >> 8);
	if (ml - MINMATCH >= 15) {
		*tok |= 15;
		op = put_len(op, ml - MINMATCH - 15);
	} else {
		*tok |= (uint8_t)(ml - MINMATCH);
	}
	e->op = op;
	e->anchor = s + ml;
	return true;
}

/* the closing literals: as many of the rest as fit */
static void close_block(struct enc *e)
{
	uint32_t n = (uint32_t)(e->end - e->anchor);
	size_t room = (size_t)(e->oend - e->op);

	if (lit_cost(n) > room)
		n = lits_fitting(room);
	if (n >= 15) {
		*e->op++ = 15 << 4;
		e->op = put_len(e->op, n - 15);
	} else {
		*e->op++ = (uint8_t)(n << 4);
	}
	memcpy(e->op, e->anchor, n);
	e->op += n;
	e->anchor += n;
}

/*
 * Cut M1 (S1, ML1) where M2 starts, or, when M2 starts within the first
 * SPLIT_ML bytes of M1, shorten M2 from its start so that M1 keeps as
 * much of its length as its token holds (M2 keeping 4 bytes).  False
 * when M1 would be left under 4 bytes (M2 is then dropped).
 */
static bool split(const struct enc *e, const uint8_t *s1, uint32_t ml1,
		  const uint8_t **s2, uint32_t *ml2, const uint8_t **r2)
{
	uint32_t gap = (uint32_t)(*s2 - s1);

	if (gap < SPLIT_ML) {
		uint32_t nm = ml1 < SPLIT_ML ? ml1 : SPLIT_ML;
		int corr;

		if (nm > gap + *ml2 - MINMATCH)
			nm = gap + *ml2 - MINMATCH;
		corr = (int)nm - (int)gap;
		/* M2 still starts 12 bytes before the end */
		if (corr > e->mflimit - *s2)
			corr = (int)(e->mflimit - *s2);
		if (corr > 0) {
			*s2 += corr;
			*r2 += corr;
			*ml2 -= (uint32_t)corr;
		}
	}
	return *s2 >= s1 + MINMATCH;
}

int erofs_lz4enc_destsize(struct erofs_lz4enc *ws, const uint8_t *src,
			  uint32_t len, uint8_t *dst, uint32_t cap,
			  uint32_t *taken)
{
	struct enc e = {
		.src = src, .end = src + len, .anchor = src,
		.op = dst, .oend = dst + cap,
		.htab = ws->htab, .chain = ws->chain,
		.base = ws->base, .attempts = ws->attempts,
	};
	const uint8_t *ip = src;

	*taken = 0;
	if (!cap)
		return 0;
	/* keeps BASE's arithmetic in range (a prefix is all that fits) */
	if (len > LEN_LIMIT) {
		len = LEN_LIMIT;
		e.end = src + len;
	}
	if (ws->base >= BASE_LIMIT - len - MAXDIST) {
		memset(ws->htab, 0, sizeof(ws->htab));
		e.base = MAXDIST + 1;
	}
	if (len >= MFLIMIT + 1) {
		e.mflimit = e.end - MFLIMIT;
		e.mlimit = e.end - LASTLITS;
		while (ip <= e.mflimit && !e.full) {
			const uint8_t *s0, *r0, *s1, *r1, *s2, *r2, *s3, *r3;
			uint32_t ml0, ml1, ml2, ml3;

			ml1 = find_wider(&e, ip, ip, MINMATCH - 1, &s1, &r1);
			if (ml1 < MINMATCH) {
				++ip;
				continue;
			}
			s0 = s1;
			r0 = r1;
			ml0 = ml1;
search2:
			ml2 = ml1;
			if (s1 + ml1 - 2 <= e.mflimit)
				ml2 = find_wider(&e, s1 + ml1 - 2, s1, ml1,
						 &s2, &r2);
			if (ml2 == ml1) {
				if (!emit(&e, s1, ml1, r1))
					break;
				ip = s1 + ml1;
				continue;
			}
			if (s0 < s1 && s2 < s1 + ml0) {
				/* M1 replaced M0 starting up to 2 bytes
				 * earlier, and M2 starts within M0's reach:
				 * M0 serves as well and saves literals */
				s1 = s0;
				r1 = r0;
				ml1 = ml0;
			}
			if (s2 < s1 + 3) {
				s1 = s2;
				r1 = r2;
				ml1 = ml2;
				goto search2;
			}
search3:
			if (s2 < s1 + 3) {
				s1 = s2;
				r1 = r2;
				ml1 = ml2;
				goto search2;
			}
			if (!split(&e, s1, ml1, &s2, &ml2, &r2)) {
				if (!emit(&e, s1, ml1, r1))
					break;
				ip = s1 + ml1;
				continue;
			}
			ml3 = ml2;
			if (s2 + ml2 - 3 <= e.mflimit)
				ml3 = find_wider(&e, s2 + ml2 - 3, s2, ml2,
						 &s3, &r3);
			if (ml3 == ml2) {
				if (s2 < s1 + ml1)
					ml1 = (uint32_t)(s2 - s1);
				if (!emit(&e, s1, ml1, r1) ||
				    e.full || !emit(&e, s2, ml2, r2))
					break;
				ip = s2 + ml2;
				continue;
			}
			if (s3 < s1 + ml1 + 3) {
				/* M2 adds too little before M3: drop it */
				if (s3 >= s1 + ml1) {
					if (!emit(&e, s1, ml1, r1) || e.full)
						break;
					s0 = s1 = s3;
					r0 = r1 = r3;
					ml0 = ml1 = ml3;
					goto search2;
				}
				s2 = s3;
				r2 = r3;
				ml2 = ml3;
				goto search3;
			}
			if (s2 < s1 + ml1)
				ml1 = (uint32_t)(s2 - s1);
			if (!emit(&e, s1, ml1, r1) || e.full)
				break;
			s0 = s1 = s2;
			r0 = r1 = r2;
			ml0 = ml1 = ml2;
			s2 = s3;
			r2 = r3;
			ml2 = ml3;
			goto search3;
		}
	}
	close_block(&e);
	ws->base = e.base + len + MAXDIST + 1;
	*taken = (uint32_t)(e.anchor - src);
	return (int)(e.op - dst);
}
