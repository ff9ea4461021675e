// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Mapping pairs: the compressed runlist of a non-resident attribute.  Each
 * run is a header byte (high nibble: bytes of the LCN delta, low nibble:
 * bytes of the length), the length, then the signed delta from the
 * previous run's LCN; a hole has no delta.  A zero byte ends the list.
 */
#include "config.h"

#include "ntfs/format.h"

/* bytes needed to hold V as a signed little-endian number */
static int sbytes(int64_t v)
{
	int n = 1;

	while (n < 8 && (v < -(1LL << (8 * n - 1)) || v >= (1LL << (8 * n - 1))))
		n++;
	return n;
}

static void put_le(uint8_t *p, int64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)((uint64_t)v >> (8 * i));
}

int ntfs_mp_encode(const struct ntfs_run *runs, size_t n, uint8_t *out,
		   size_t max)
{
	size_t pos = 0;
	int64_t prev = 0;

	for (size_t i = 0; i < n; i++) {
		int lb = sbytes((int64_t)runs[i].len);
		int ob = 0;
		int64_t delta = 0;

		if (runs[i].lcn >= 0) {
			delta = runs[i].lcn - prev;
			ob = sbytes(delta);
			prev = runs[i].lcn;
		}
		if (pos + 1 + (size_t)lb + (size_t)ob + 1 > max)
			return -1;
		out[pos++] = (uint8_t)(ob << 4 | lb);
		put_le(out + pos, (int64_t)runs[i].len, lb);
		pos += (size_t)lb;
		put_le(out + pos, delta, ob);
		pos += (size_t)ob;
	}
	if (pos + 1 > max)
		return -1;
	out[pos++] = 0;
	return (int)pos;
}

static int64_t get_sle(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	if (n < 8 && (p[n - 1] & 0x80))
		v |= ~0ULL << (8 * n);
	return (int64_t)v;
}

int ntfs_mp_decode(const uint8_t *mp, size_t len, struct ntfs_run *runs,
		   size_t max)
{
	size_t pos = 0, n = 0;
	int64_t lcn = 0;

	while (pos < len && mp[pos]) {
		int lb = mp[pos] & 0xf, ob = mp[pos] >> 4;
		int64_t l;

		pos++;
		if (lb == 0 || lb > 8 || ob > 8 || pos + (size_t)lb + (size_t)ob > len ||
		    n == max)
			return -1;
		l = get_sle(mp + pos, lb);
		pos += (size_t)lb;
		if (l <= 0)
			return -1;
		runs[n].len = (uint64_t)l;
		if (ob) {
			/* hostile deltas must not overflow; a negative LCN is
			 * no cluster either */
			if (__builtin_add_overflow(lcn, get_sle(mp + pos, ob), &lcn) ||
			    lcn < 0)
				return -1;
			pos += (size_t)ob;
			runs[n].lcn = lcn;
		} else {
			runs[n].lcn = -1;
		}
		n++;
	}
	return pos < len ? (int)n : -1;
}

size_t ntfs_mp_valid_prefix(const uint8_t *mp, size_t len, uint64_t nr_clusters,
			    struct ntfs_run *runs, size_t max, size_t *nruns)
{
	size_t pos = 0, last = 0, n = 0;
	int64_t lcn = 0;

	while (pos < len && mp[pos] && (!runs || n < max)) {
		int lb = mp[pos] & 0xf, ob = mp[pos] >> 4;
		size_t p = pos + 1;
		int64_t l, next = lcn;

		if (lb == 0 || lb > 8 || ob > 8 || p + (size_t)lb + (size_t)ob > len)
			break;
		l = get_sle(mp + p, lb);
		p += (size_t)lb;
		if (l <= 0)
			break;
		/* a hole may be larger than the volume (sparse files) */
		if (ob) {
			if (__builtin_add_overflow(lcn, get_sle(mp + p, ob), &next) ||
			    next < 0 || (uint64_t)next >= nr_clusters ||
			    (uint64_t)l > nr_clusters ||
			    (uint64_t)next + (uint64_t)l > nr_clusters)
				break;
			p += (size_t)ob;
		}
		if (runs) {
			runs[n].len = (uint64_t)l;
			runs[n].lcn = ob ? next : -1;
		}
		lcn = next;
		n++;
		last = pos;
		pos = p;
	}
	/* the end marker must fit: a list that fills its room loses its last run */
	if (pos >= len && n) {
		n--;
		pos = last;
	}
	*nruns = n;
	return pos;
}
