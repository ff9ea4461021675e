// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * $Secure's $SDS on a volume (include/ntfs/sds.h): its entries read
 * through two windows (one on a block, one on its mirror: a fresh
 * volume's $SDS is 256 KiB, larger than anything else a checker holds at
 * a time), each judged by its header and its descriptor's hash, a damaged
 * one's mirror copy written back, the default entries written.  The keys
 * $SII and $SDH index the entries by are secure.c's (mkfs.ntfs uses them).
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/file_attrs.h"
#include "ntfs/sds.h"
#include "ntfs/volume_io.h"
#include "internal.h"

#define SDS_WINDOW (16u << 10)	/* bytes of $SDS held at a time */

int ntfs_sds_open(struct ntfs_vol *v, ntfs_rec_in_use in_use, const void *in_use_arg,
		  uint64_t d, const uint8_t *rec, struct ntfs_sds *s)
{
	const struct ntfs_attr_header *sa;
	struct ntfs_attr_nonresident n;
	char why[NTFS_WHY];

	memset(s, 0, sizeof(*s));
	s->v = v;
	if (ntfs_attr_named(rec, NTFS_AT_ATTRIBUTE_LIST, "")) {
		/* in the base record or an extension record, maybe in
		 * several extents: their runs joined */
		size_t nx;
		long nr = ntfs_vol_extents_runs(v, in_use, in_use_arg, d, NTFS_AT_DATA,
						"$SDS", &s->runs, &s->size, &nx, why);

		if (nr <= 0) {
			free(s->runs);
			s->runs = NULL;
			s->size = 0;
			return nr == -ENOMEM ? -ENOMEM : 0;
		}
		s->nruns = nr;
		return 1;
	}
	if (!(sa = ntfs_attr_named(rec, NTFS_AT_DATA, "$SDS")) || !sa->non_resident ||
	    (s->nruns = ntfs_attr_runs(sa, v->boot.g.nr_clusters, &s->runs, why)) < 0)
		return 0;
	memcpy(&n, sa, sizeof(n));
	s->size = le64toh((uint64_t)n.data_size);
	return 1;
}

void ntfs_sds_close(struct ntfs_sds *s)
{
	free(s->win[0].buf);
	free(s->win[1].buf);
	free(s->runs);
	memset(s, 0, sizeof(*s));
}

/* Bytes OFF..OFF+LEN of $SDS (inside it) through window W (a page that
 * cannot be read is zero: its entries are not valid); NULL when out of
 * memory (s->nomem). */
static const uint8_t *sds_bytes(struct ntfs_sds *s, struct ntfs_sds_window *w,
				uint64_t off, uint64_t len)
{
	uint64_t at = off & ~4095ull, want;

	if (off >= w->at && off + len <= w->at + w->len)
		return w->buf + (off - w->at);
	want = (off - at + len + 4095) & ~4095ull;
	if (want < SDS_WINDOW)
		want = SDS_WINDOW;
	if (want > s->size - at)
		want = s->size - at;
	if (want > w->cap) {
		uint8_t *g = realloc(w->buf, want);

		if (!g) {
			s->nomem = true;
			return NULL;
		}
		w->buf = g;
		w->cap = want;
	}
	w->at = at;
	w->len = want;
	for (uint64_t o = 0; o < want; o += 4096) {
		uint64_t n = want - o < 4096 ? want - o : 4096;

		if (ntfs_vol_runs_pread(s->v, s->runs, s->nruns, at + o, n,
					w->buf + o))
			memset(w->buf + o, 0, n);
	}
	return w->buf + (off - at);
}

/* Is the entry at OFF (read through window W; a copy of the entry that
 * belongs at AT) a valid one inside the block ending at END?  Its
 * header in *H. */
static bool entry_valid(struct ntfs_sds *s, struct ntfs_sds_window *w, uint64_t off,
			uint64_t end, uint64_t at, struct ntfs_sds_header *h)
{
	const uint8_t *p;
	uint32_t len;

	if (off + sizeof(*h) > end || !(p = sds_bytes(s, w, off, sizeof(*h))))
		return false;
	memcpy(h, p, sizeof(*h));
	len = le32toh(h->length);
	if (le64toh(h->offset) != at || len < sizeof(*h) + 20 || off + len > end ||
	    le32toh(h->security_id) < NTFS_SECURITY_ID_FIRST ||
	    !(p = sds_bytes(s, w, off, len)))
		return false;
	return ntfs_sd_hash(p + sizeof(*h), len - sizeof(*h)) == le32toh(h->hash);
}

int ntfs_sds_scan(struct ntfs_sds *s, ntfs_sds_entry_fn fn, void *arg)
{
	struct ntfs_sds_header h;

	for (uint64_t blk = 0; blk < s->size; blk += 2ull * NTFS_SDS_BLOCK) {
		uint64_t end = blk + NTFS_SDS_BLOCK < s->size ?
			       blk + NTFS_SDS_BLOCK : s->size;
		uint64_t mend = end + NTFS_SDS_BLOCK < s->size ?
				end + NTFS_SDS_BLOCK : s->size;

		for (uint64_t off = blk; off + sizeof(h) <= end;) {
			bool mirror = false;
			int r;

			if (entry_valid(s, &s->win[0], off, end, off, &h)) {
				/* valid where it is */
			} else if (!s->nomem &&
				   entry_valid(s, &s->win[1], off + NTFS_SDS_BLOCK,
					       mend, off, &h)) {
				mirror = true;
			} else if (s->nomem) {
				return -ENOMEM;
			} else {
				off += 16;
				continue;
			}
			r = fn(arg, s, &h, off, mirror);
			if (r)
				return r;
			off += ntfs_align(le32toh(h.length), 16);
		}
	}
	return 0;
}

int ntfs_sds_restore(struct ntfs_sds *s, uint64_t off, uint32_t len)
{
	/* in the window: the scan just read it there */
	const uint8_t *m = sds_bytes(s, &s->win[1], off + NTFS_SDS_BLOCK, len);

	s->win[0].len = 0;	/* no longer what is there */
	return ntfs_vol_runs_pwrite(s->v, s->runs, s->nruns, off, len, m) ? -1 : 0;
}

bool ntfs_sds_entries_fit(const struct ntfs_sds *s, size_t sds_len)
{
	uint32_t cs = s->v->boot.g.cluster_size;
	uint64_t mlen;

	if (s->size < NTFS_SDS_BLOCK + sds_len || sds_len > 4096)
		return false;
	mlen = s->size - NTFS_SDS_BLOCK < 4096 ? s->size - NTFS_SDS_BLOCK : 4096;
	return ntfs_runs_mapped(s->runs, s->nruns, cs, 0, 4096) &&
	       ntfs_runs_mapped(s->runs, s->nruns, cs, NTFS_SDS_BLOCK, mlen);
}

int ntfs_sds_write_entries(struct ntfs_sds *s, const uint8_t *sds, size_t sds_len)
{
	uint8_t page[4096];
	uint64_t mlen;

	if (s->size < NTFS_SDS_BLOCK + sds_len || sds_len > sizeof(page))
		return -ENOSPC;
	mlen = s->size - NTFS_SDS_BLOCK < 4096 ? s->size - NTFS_SDS_BLOCK : 4096;
	memset(page, 0, sizeof(page));
	memcpy(page, sds, sds_len);
	s->win[0].len = s->win[1].len = 0;
	if (ntfs_vol_runs_pwrite(s->v, s->runs, s->nruns, 0, 4096, page) ||
	    ntfs_vol_runs_pwrite(s->v, s->runs, s->nruns, NTFS_SDS_BLOCK, mlen, page))
		return -1;
	return 0;
}
