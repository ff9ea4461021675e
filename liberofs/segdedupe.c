// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * -E dedupe, segments: every pcluster written for a file is entered with
 * a rolling hash of its first block of uncompressed bytes (a polynomial
 * over SEG_W = one block, modulo 2^64), the file and logical offset it
 * came from, its uncompressed length and its blocks.  While a later file
 * is cut into extents, the hash of the window at every byte is tested
 * (a bitmap first, then the table); a hit counts only when the file's
 * next LEN bytes equal the pcluster's uncompressed content, compared byte
 * for byte with the earlier file's source read again, and only when what
 * is read again has the SHA-256 of the bytes compressed then (a file
 * changed during the build is not shared from).  The extent then points
 * at the earlier pcluster: a whole pcluster, or, when only a prefix of its
 * content matches (at least SEG_MIN_PARTIAL blocks: a text shared up to
 * its end, then other bytes), a partial reference (the PARTIAL_REF bit of
 * a full index's head: the reader decodes the pcluster and keeps the
 * extent's first bytes).  The table is used under the compression turn
 * only (file order), so the result depends on the content and the layout
 * order only.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define SEG_P		0x9e3779b97f4a7c15ull	/* odd multiplier */
#define BLOOM_BITS	24			/* 2 MiB of bits */

struct erofs_seg_table {
	struct erofs_seg *v;
	size_t n, cap;
	uint32_t *slot;		/* index + 1 into v, 0: empty */
	size_t nslot;		/* power of two */
	uint8_t *bloom;
	uint64_t pw;		/* SEG_P^(W-1) */
	uint32_t w;
};

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

uint64_t erofs_seg_hash(const struct erofs_build *b, const uint8_t *p)
{
	uint64_t h = 0;

	for (unsigned int i = 0; i < b->blksz; i++)
		h = h * SEG_P + p[i];
	return h;
}

static struct erofs_seg_table *table(struct erofs_build *b)
{
	struct erofs_seg_table *t = b->segs;

	if (t)
		return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->bloom = calloc(1, (size_t)1 << (BLOOM_BITS - 3));
	if (!t->bloom) {
		free(t);
		return NULL;
	}
	t->w = b->blksz;
	t->pw = 1;
	for (unsigned int i = 1; i < t->w; i++)
		t->pw *= SEG_P;
	b->segs = t;
	return t;
}

static bool bloom_has(const struct erofs_seg_table *t, uint64_t h)
{
	uint64_t k = mix(h) >> (64 - BLOOM_BITS);

	return t->bloom[k >> 3] & (1u << (k & 7));
}

bool erofs_seg_scan(const struct erofs_build *b, const uint8_t *buf,
		    size_t avail, size_t *at, size_t end, uint64_t *h,
		    bool *have)
{
	const struct erofs_seg_table *t = b->segs;
	size_t i = *at;
	uint64_t x = *h;

	if (!t || !t->n || i >= end) {
		*at = end > i ? end : i;
		*have = false;
		return false;
	}
	if (!*have)
		x = erofs_seg_hash(b, buf + i);
	for (;;) {
		if (bloom_has(t, x)) {
			*at = i;
			*h = x;
			*have = true;
			return true;
		}
		if (i + 1 >= end || i + t->w >= avail) {
			*at = i + 1;
			*have = false;
			return false;
		}
		x = (x - buf[i] * t->pw) * SEG_P + buf[i + t->w];
		i++;
	}
}

void erofs_seg_step(const struct erofs_build *b, const uint8_t *buf,
		    size_t avail, size_t *at, uint64_t *h, bool *have)
{
	const struct erofs_seg_table *t = b->segs;
	size_t i = *at;

	if (*have && i + t->w < avail)
		*h = (*h - buf[i] * t->pw) * SEG_P + buf[i + t->w];
	else
		*have = false;
	*at = i + 1;
}

const struct erofs_seg *erofs_seg_next(const struct erofs_build *b,
				       uint64_t h, size_t *cursor)
{
	const struct erofs_seg_table *t = b->segs;

	if (!t || !t->nslot)
		return NULL;
	for (size_t k = *cursor; k < t->nslot; k++) {
		size_t s = (mix(h) + k) & (t->nslot - 1);

		if (!t->slot[s])
			return NULL;
		if (t->v[t->slot[s] - 1].rh == h) {
			*cursor = k + 1;
			return &t->v[t->slot[s] - 1];
		}
	}
	return NULL;
}

static int rehash(struct erofs_seg_table *t, size_t nslot)
{
	uint32_t *s = calloc(nslot, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		size_t k = mix(t->v[i].rh) & (nslot - 1);

		while (s[k])
			k = (k + 1) & (nslot - 1);
		s[k] = (uint32_t)(i + 1);
	}
	free(t->slot);
	t->slot = s;
	t->nslot = nslot;
	return 0;
}

int erofs_seg_add(struct erofs_build *b, const struct erofs_seg *e)
{
	struct erofs_seg_table *t = table(b);
	uint64_t k;
	size_t s;

	if (!t)
		return -ENOMEM;
	if (t->n >= UINT32_MAX - 1)
		return 0;	/* full: later pclusters are not shared */
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct erofs_seg *g = realloc(t->v, cap * sizeof(*g));

		if (!g)
			return -ENOMEM;
		t->v = g;
		t->cap = cap;
	}
	if ((t->n + 1) * 2 > t->nslot) {
		int ret = rehash(t, t->nslot ? t->nslot * 2 : 4096);

		if (ret)
			return ret;
	}
	t->v[t->n] = *e;
	for (s = mix(e->rh) & (t->nslot - 1); t->slot[s];
	     s = (s + 1) & (t->nslot - 1))
		;
	t->slot[s] = (uint32_t)++t->n;
	k = mix(e->rh) >> (64 - BLOOM_BITS);
	t->bloom[k >> 3] |= (uint8_t)(1u << (k & 7));
	return 0;
}

void erofs_seg_digest(const uint8_t *p, uint32_t len, uint8_t sha[32])
{
	unsigned int n = 32;

	if (!EVP_Digest(p, len, sha, &n, EVP_sha256(), NULL))
		memset(sha, 0, 32);	/* matches nothing read back */
}

int erofs_seg_common(struct erofs_build *b, const struct erofs_seg *e,
		     const uint8_t *data, uint32_t len, uint8_t *scratch,
		     uint32_t *common)
{
	char path[PATH_MAX];
	struct erofs_src s;
	uint8_t sha[32];
	ssize_t r;
	uint32_t k = 0;
	int ret = erofs_open_source(b, e->n, path, sizeof(path), &s);

	*common = 0;
	if (ret)
		return ret;
	if (len > e->len)
		len = e->len;
	/* all of E: its digest proves these are the bytes compressed */
	r = erofs_src_pread(&s, scratch, e->len, e->la);
	erofs_src_close(&s);
	if (r < 0) {
		fsf_err(b->log, "cannot read %s/%s again: %s", b->opts->source,
			path, strerror((int)-r));
		return (int)r;
	}
	/* a file that changed since is not shared: its pcluster holds
	 * what it was, not what is read now */
	if ((uint32_t)r != e->len)
		return 0;
	erofs_seg_digest(scratch, e->len, sha);
	if (memcmp(sha, e->sha, sizeof(sha)))
		return 0;
	while (k < len && scratch[k] == data[k])
		k++;
	*common = k;
	return 0;
}

void erofs_seg_free(struct erofs_build *b)
{
	struct erofs_seg_table *t = b->segs;

	if (!t)
		return;
	free(t->v);
	free(t->slot);
	free(t->bloom);
	free(t);
	b->segs = NULL;
}

/*
 * Files the plan leaves uncompressed (already compressed data) cannot
 * share blocks with each other.  Those with the size and SHA-256 of
 * another such file are compressed as well (their extents mostly raw
 * blocks), so that -E dedupe shares them: the later copies point at the
 * first one's pclusters.  Only files of equal size are read; the set
 * chosen depends on the content only.
 *
 * With -E fragments, every such file is compressed (as erofs-utils does):
 * its raw blocks enter the segment table, so a file that holds the same
 * bytes at another offset (a .gz of the same text whose header names
 * another file) shares them, and its tail goes to the packed inode
 * instead of an inline tail that costs metadata room.
 */
struct twin {
	struct erofs_node *n;
	uint8_t sha[32];
};

static int by_size(const void *x, const void *y)
{
	const struct twin *a = x, *b = y;

	return a->n->size < b->n->size ? -1 : a->n->size > b->n->size;
}

static int by_sha(const void *x, const void *y)
{
	return memcmp(((const struct twin *)x)->sha,
		      ((const struct twin *)y)->sha, 32);
}

static int file_sha(struct erofs_build *b, struct erofs_node *n,
		    uint8_t *buf, size_t cap, EVP_MD_CTX *md, uint8_t *sha)
{
	char path[PATH_MAX];
	struct erofs_src s;
	int ret = erofs_open_source(b, n, path, sizeof(path), &s);
	uint64_t left = n->size;

	if (ret)
		return ret;
	EVP_DigestInit_ex(md, EVP_sha256(), NULL);
	while (left && !ret) {
		ssize_t r = erofs_src_read(&s, buf, left < cap ? (size_t)left : cap);

		if (r <= 0) {
			/* a file that shrank is reported by the data pass */
			ret = r < 0 ? (int)r : 0;
			break;
		}
		EVP_DigestUpdate(md, buf, (size_t)r);
		left -= (uint64_t)r;
	}
	EVP_DigestFinal_ex(md, sha, NULL);
	erofs_src_close(&s);
	if (ret)
		fsf_err(b->log, "cannot read %s/%s: %s", b->opts->source, path,
			strerror(-ret));
	return ret;
}

int erofs_seg_twins(struct erofs_build *b, struct erofs_node **files,
		    size_t nfiles)
{
	const size_t cap = 1u << 20;
	struct twin *t = malloc((nfiles + 1) * sizeof(*t));
	uint8_t *buf = malloc(cap);
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	size_t n = 0;
	int ret = 0;

	if (!t || !buf || !md) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nfiles; i++) {
		if (files[i]->compressed)
			continue;
		if (b->opts->fragments)
			files[i]->compressed = true;
		else
			t[n++].n = files[i];
	}
	qsort(t, n, sizeof(*t), by_size);
	for (size_t i = 0, j; i < n && !ret; i = j) {
		for (j = i + 1; j < n && t[j].n->size == t[i].n->size; j++)
			;
		if (j - i < 2)
			continue;
		for (size_t k = i; k < j && !ret; k++)
			ret = file_sha(b, t[k].n, buf, cap, md, t[k].sha);
		if (ret)
			break;
		qsort(t + i, j - i, sizeof(*t), by_sha);
		for (size_t k = i; k < j; k++)
			if ((k > i && !memcmp(t[k].sha, t[k - 1].sha, 32)) ||
			    (k + 1 < j && !memcmp(t[k].sha, t[k + 1].sha, 32)))
				t[k].n->compressed = true;
	}
out:
	EVP_MD_CTX_free(md);
	free(buf);
	free(t);
	return ret;
}
