// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Compressed files with the same content, compressed once.  Without
 * -E dedupe the image keeps every copy of a content, but the pclusters of
 * a copy are those of the first: the cuts and the compressed bytes depend
 * on the content, the -z configuration and the pcluster size only, not on
 * where the file goes (not so with -E fragments, ztailpacking or dedupe,
 * which are left out).  The data pass's files are grouped before it by
 * size, a hash of their first block (taken by the plan's probe, which
 * reads it anyway), configuration and pcluster size.  The first of a group
 * to be compressed leaves its bytes here (within REUSE_MAX for all
 * groups); the next ones read their content whole (for their digest, as
 * they would to compress it) and take those bytes when the SHA-256 agrees,
 * else compress as usual.  Which files reuse depends on timing; the image
 * does not.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* compressed bytes held for all groups at once */
#define REUSE_MAX	(32u << 20)

struct erofs_zgroup {
	size_t left;		/* members not done */
	bool has;		/* out, ext, sha are set */
	uint8_t sha[32];
	uint8_t *out;
	size_t outlen;
	void *ext;
	size_t ext_bytes;
};

struct erofs_zreuse {
	pthread_mutex_t lock;
	size_t held;		/* bytes in the groups' out */
	struct erofs_zgroup *g;
	size_t ng;
	uint64_t reused;	/* files that took a group's bytes */
	uint64_t later;		/* members after each group's first */
};

uint64_t erofs_zreuse_head(const uint8_t *p, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ len;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t v;

		memcpy(&v, p + i, 8);
		h = (h ^ v) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	for (; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

struct key {
	uint64_t size, head;
	uint32_t pcl;
	uint8_t zcfg;
	size_t i;
};

static int key_cmp(const void *a, const void *b)
{
	const struct key *x = a, *y = b;

	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	if (x->head != y->head)
		return x->head < y->head ? -1 : 1;
	if (x->pcl != y->pcl)
		return x->pcl < y->pcl ? -1 : 1;
	if (x->zcfg != y->zcfg)
		return x->zcfg < y->zcfg ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static bool same_key(const struct key *x, const struct key *y)
{
	return x->size == y->size && x->head == y->head && x->pcl == y->pcl &&
	       x->zcfg == y->zcfg;
}

int erofs_zreuse_group(struct erofs_build *b, struct erofs_node **files,
		       size_t nfiles, uint64_t max_size)
{
	const struct erofs_mkfs_opts *o = b->opts;
	const char *off = getenv("FSFORGE_EROFS_ZREUSE");	/* tests: "0" */
	struct erofs_zreuse *r;
	struct key *k;
	size_t nk = 0, ng = 0;

	/* a tar's files are read as a stream, their end never confirmed
	 * ahead (see the data pass's refill) */
	if (o->dedupe || o->fragments || o->ztailpacking || b->from_tar ||
	    (off && !strcmp(off, "0")))
		return 0;
	/* the reuse only saves time: without memory for it, every file is
	 * compressed as it would be anyway */
	k = malloc(nfiles * sizeof(*k) + 1);
	if (!k)
		return 0;
	for (size_t i = 0; i < nfiles; i++) {
		const struct erofs_node *n = files[i];

		if (n == b->packed || n->zkept || n->size <= b->blksz ||
		    n->size > max_size)
			continue;
		k[nk++] = (struct key){ .size = n->size, .head = n->zhead,
					.pcl = erofs_node_pcl(b, n),
					.zcfg = n->zcfg, .i = i };
	}
	qsort(k, nk, sizeof(*k), key_cmp);
	for (size_t i = 0; i + 1 < nk; i++)
		if (same_key(&k[i], &k[i + 1]) &&
		    (!i || !same_key(&k[i - 1], &k[i])))
			ng++;
	r = calloc(1, sizeof(*r));
	if (r && ng)
		r->g = calloc(ng, sizeof(*r->g));
	if (!r || (ng && !r->g)) {
		free(r);
		free(k);
		return 0;
	}
	pthread_mutex_init(&r->lock, NULL);
	for (size_t i = 0, j; i < nk; i = j) {
		for (j = i + 1; j < nk && same_key(&k[i], &k[j]); j++)
			;
		if (j - i < 2)
			continue;
		r->g[r->ng].left = j - i;
		r->later += j - i - 1;
		for (size_t m = i; m < j; m++)
			files[k[m].i]->zgroup = &r->g[r->ng];
		r->ng++;
	}
	free(k);
	b->zreuse = r;
	return 0;
}

bool erofs_zreuse_take(struct erofs_build *b, struct erofs_node *n,
		       uint8_t **out, size_t *outlen, void **ext,
		       size_t *ext_bytes)
{
	struct erofs_zreuse *r = b->zreuse;
	struct erofs_zgroup *g = n->zgroup;
	bool took = false;

	pthread_mutex_lock(&r->lock);
	if (g->has && !memcmp(g->sha, n->digest, sizeof(g->sha))) {
		if (g->left == 1) {	/* the last: its bytes are N's */
			*out = g->out;
			*ext = g->ext;
			g->out = g->ext = NULL;
			g->has = false;
			r->held -= g->outlen;
			took = true;
		} else {
			*out = malloc(g->outlen ? g->outlen : 1);
			*ext = malloc(g->ext_bytes + 1);
			took = *out && *ext;
			if (took) {
				memcpy(*out, g->out, g->outlen);
				memcpy(*ext, g->ext, g->ext_bytes);
			} else {	/* compressed again instead */
				free(*out);
				free(*ext);
			}
		}
		if (took) {
			*outlen = g->outlen;
			*ext_bytes = g->ext_bytes;
			r->reused++;
		}
	}
	pthread_mutex_unlock(&r->lock);
	return took;
}

void erofs_zreuse_done(struct erofs_build *b, struct erofs_node *n,
		       const uint8_t *out, size_t outlen, const void *ext,
		       size_t ext_bytes)
{
	struct erofs_zreuse *r = b->zreuse;
	struct erofs_zgroup *g = n->zgroup;

	n->zgroup = NULL;
	pthread_mutex_lock(&r->lock);
	if (--g->left && out && !g->has && r->held + outlen <= REUSE_MAX) {
		g->out = malloc(outlen ? outlen : 1);
		g->ext = malloc(ext_bytes + 1);
		if (g->out && g->ext) {
			memcpy(g->out, out, outlen);
			memcpy(g->ext, ext, ext_bytes);
			memcpy(g->sha, n->digest, sizeof(g->sha));
			g->outlen = outlen;
			g->ext_bytes = ext_bytes;
			g->has = true;
			r->held += outlen;
		} else {
			free(g->out);
			free(g->ext);
			g->out = g->ext = NULL;
		}
	}
	if (!g->left && g->has) {
		free(g->out);
		free(g->ext);
		g->out = g->ext = NULL;
		g->has = false;
		r->held -= g->outlen;
	}
	pthread_mutex_unlock(&r->lock);
}

uint64_t erofs_zreuse_free(struct erofs_build *b, uint64_t *later)
{
	struct erofs_zreuse *r = b->zreuse;
	uint64_t reused;

	if (!r)
		return 0;
	reused = r->reused;
	*later = r->later;
	for (size_t i = 0; i < r->ng; i++) {
		free(r->g[i].out);
		free(r->g[i].ext);
	}
	pthread_mutex_destroy(&r->lock);
	free(r->g);
	free(r);
	b->zreuse = NULL;
	return reused;
}
