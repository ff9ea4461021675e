// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * -E fragments / all-fragments and -E dedupe: the packed inode and the
 * content-keyed tables.
 *
 * A fragment (a compressed file's last extent, or a whole file up to a
 * pcluster, or any whole file with all-fragments) is appended to the
 * packed inode's content, which is spooled to an unlinked temporary file
 * in $TMPDIR (or /tmp; erofs_spool_open).
 * Fragments are stored in file order (the compression pass stores a
 * file's fragment under its write turn), and a fragment whose SHA-256 and
 * length match an earlier one gets the earlier offset.  Once every file
 * is written, the fragments are copied to a new spool grouped by kind
 * (file extension, or name), each file's map header in the image gets
 * its new offset, and the packed content is itself compressed, after all
 * other data; its inode record (with its index) follows its data: the
 * superblock's packed_nid points there.
 *
 * The dedupe table maps the SHA-256 of a whole file's content to the
 * first file that had it; a later identical file shares its pclusters.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/erofs_fs.h"
#include "internal.h"

/* a fragment as stored: where, how long, for which file (its name
 * groups it with similar ones when the packed inode is reordered) */
struct frag_rec {
	uint64_t off, len;
	const struct erofs_node *n;
	const char *group;
	uint64_t at;		/* offset after reordering */
};

struct frag_ent {
	uint8_t key[32];
	uint64_t len;
	uint64_t off;
	struct erofs_node *node;
	bool used;
};

struct frag_table {
	struct frag_ent *v;
	size_t cap, n;
	struct frag_rec *recs;	/* -E fragments: stored ones, in order */
	size_t nrecs, caprecs;
};

static size_t slot_of(const uint8_t *key, size_t cap)
{
	uint64_t h;

	memcpy(&h, key, sizeof(h));
	return (size_t)(h & (cap - 1));
}

static int table_grow(struct frag_table *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024;
	struct frag_ent *v = calloc(cap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		size_t s;

		if (!t->v[i].used)
			continue;
		for (s = slot_of(t->v[i].key, cap); v[s].used; s = (s + 1) & (cap - 1))
			;
		v[s] = t->v[i];
	}
	free(t->v);
	t->v = v;
	t->cap = cap;
	return 0;
}

/* The entry for (KEY, LEN): the existing one (*found set), or a new one. */
static struct frag_ent *table_get(struct frag_table **tp, const uint8_t *key,
				  uint64_t len, bool *found)
{
	struct frag_table *t = *tp;
	size_t s;

	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t)
			return NULL;
		*tp = t;
	}
	if ((t->n + 1) * 4 > t->cap * 3 && table_grow(t))
		return NULL;
	for (s = slot_of(key, t->cap); t->v[s].used; s = (s + 1) & (t->cap - 1)) {
		if (t->v[s].len == len && !memcmp(t->v[s].key, key, 32)) {
			*found = true;
			return &t->v[s];
		}
	}
	*found = false;
	memcpy(t->v[s].key, key, 32);
	t->v[s].len = len;
	t->v[s].used = true;
	t->n++;
	return &t->v[s];
}

void erofs_frag_tables_free(struct erofs_build *b)
{
	struct frag_table *t[2] = { b->frags, b->dedupe };

	for (int i = 0; i < 2; i++) {
		if (t[i]) {
			free(t[i]->v);
			free(t[i]->recs);
		}
		free(t[i]);
	}
	b->frags = b->dedupe = NULL;
	if (b->packed_fd >= 0)
		close(b->packed_fd);
	b->packed_fd = -1;
	free(b->packed);
	b->packed = NULL;
}

/* Record a new fragment of N at OFF, LEN bytes. */
static int rec_add(struct frag_table *t, const struct erofs_node *n,
		   uint64_t off, uint64_t len)
{
	if (t->nrecs == t->caprecs) {
		size_t cap = t->caprecs ? t->caprecs * 2 : 1024;
		struct frag_rec *r = realloc(t->recs, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		t->recs = r;
		t->caprecs = cap;
	}
	t->recs[t->nrecs++] = (struct frag_rec){ .off = off, .len = len,
						 .n = n };
	return 0;
}

int erofs_frag_store(struct erofs_build *b, const struct erofs_node *n,
		     const uint8_t *data, size_t len, const uint8_t *sha,
		     uint64_t *off)
{
	bool found;
	struct frag_ent *e = table_get(&b->frags, sha, len, &found);
	int ret;

	if (!e)
		return -ENOMEM;
	if (found) {
		*off = e->off;
		b->frag_shared++;
		return 0;
	}
	ret = rec_add(b->frags, n, b->packed_size, len);
	if (ret)
		return ret;	/* the build fails */
	if (b->packed_fd < 0) {
		ret = erofs_spool_open(b, "packed", "the packed inode");
		if (ret < 0)
			return ret;
		b->packed_fd = ret;
	}
	if (b->packed_size + len > UINT32_MAX) {
		fsf_err(b->log, "the packed inode would pass 4 GiB of fragments");
		return -EFBIG;
	}
	ret = erofs_spool_io(b->packed_fd, (uint8_t *)data, len, b->packed_size, true);
	if (ret) {
		/* reported here, and not as ENOSPC, which the caller
		 * takes for no room beside the image */
		fsf_err(b->log, "cannot write the spool file of the packed inode (in %s): %s",
			erofs_spool_dir(), strerror(-ret));
		return -EIO;
	}
	e->off = b->packed_size;
	*off = e->off;
	b->packed_size += len;
	return 0;
}

struct erofs_node *erofs_dedupe_match(struct erofs_build *b,
				      struct erofs_node *n)
{
	bool found;
	struct frag_ent *e = table_get(&b->dedupe, n->digest, n->size, &found);

	if (!e)
		return NULL;
	if (found)
		return e->node;
	e->node = n;
	return NULL;
}

/* The group of a fragment: its file's extension ("mo", "gz", "html"),
 * or the whole name when it has none ("copyright", "README"). */
static const char *group_of(const struct erofs_node *n)
{
	const char *dot = strrchr(n->name, '.');

	return dot && dot != n->name && dot[1] ? dot + 1 : n->name;
}

static int cmp_group(const void *x, const void *y)
{
	const struct frag_rec *a = *(const struct frag_rec *const *)x;
	const struct frag_rec *c = *(const struct frag_rec *const *)y;
	int r = strcmp(a->group, c->group);

	if (r)
		return r;
	return a->off < c->off ? -1 : a->off > c->off;
}

/* The record stored at OFF (records are in offset order). */
static const struct frag_rec *rec_at(const struct frag_table *t, uint64_t off)
{
	size_t lo = 0, hi = t->nrecs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->recs[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->nrecs && t->recs[lo].off == off ? &t->recs[lo] : NULL;
}

/* Copy the fragments to a new spool file in ORDER. */
static int respool(struct erofs_build *b, struct frag_rec **order, size_t n)
{
	const size_t bufsz = 1u << 20;
	uint8_t *buf = malloc(bufsz);
	uint64_t at = 0;
	int fd, ret = 0;

	if (!buf)
		return -ENOMEM;
	fd = erofs_spool_open(b, "packed", "the packed inode");
	if (fd < 0) {
		free(buf);
		return fd;	/* reported */
	}
	for (size_t i = 0; i < n && !ret; i++) {
		struct frag_rec *r = order[i];

		r->at = at;
		for (uint64_t done = 0; done < r->len && !ret;) {
			size_t k = r->len - done < bufsz ? (size_t)(r->len - done) : bufsz;

			ret = erofs_spool_io(b->packed_fd, buf, k, r->off + done, false);
			if (!ret)
				ret = erofs_spool_io(fd, buf, k, at + done, true);
			done += k;
		}
		at += r->len;
	}
	free(buf);
	if (ret) {
		close(fd);
		/* reported here, and not as ENOSPC, which the caller
		 * takes for no room beside the image */
		fsf_err(b->log, "cannot reorder the spool file of the packed inode (in %s): %s",
			erofs_spool_dir(), strerror(-ret));
		return -EIO;
	}
	close(b->packed_fd);
	b->packed_fd = fd;
	return 0;
}

/*
 * Put fragments of one group (file extension, or name) next to each other
 * in the packed inode, in file order within a group, so that each of its
 * pclusters compresses text of one kind; then write every file's new
 * fragment offset into its map header, in the image already.
 */
static int frag_reorder(struct erofs_build *b)
{
	struct frag_table *t = b->frags;
	struct frag_rec **order;
	int ret;

	if (!t || t->nrecs < 2)
		return 0;
	order = malloc(t->nrecs * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < t->nrecs; i++) {
		t->recs[i].group = group_of(t->recs[i].n);
		order[i] = &t->recs[i];
	}
	qsort(order, t->nrecs, sizeof(*order), cmp_group);
	ret = respool(b, order, t->nrecs);
	free(order);
	for (size_t i = 0; i < b->count && !ret; i++) {
		struct erofs_node *n = b->order[i];
		const struct frag_rec *r;
		uint64_t at;
		uint8_t h[8];

		if (n->master || !(n->whole_frag || n->tail_frag))
			continue;
		r = rec_at(t, n->fragoff);
		if (!r)
			return -EIO;
		n->fragoff = r->at;
		at = n->nid * EROFS_SLOT_SIZE +
		     erofs_round_up(erofs_record_head(n), 8);
		if (n->whole_frag) {
			/* all 64 bits of the map header: bit 63, offset */
			uint64_t v = htole64(r->at | 1ull << 63);

			memcpy(h, &v, 8);
			ret = fsf_dev_pwrite(&b->dev, h, 8, at);
		} else {
			uint32_t v = htole32((uint32_t)r->at);	/* h_fragmentoff */

			memcpy(h, &v, 4);
			ret = fsf_dev_pwrite(&b->dev, h, 4, at);
		}
	}
	return ret;
}

int erofs_write_packed(struct erofs_build *b)
{
	const unsigned int bs = b->blksz;
	struct erofs_node *p;
	uint64_t at, rec;
	uint8_t *buf;
	int ret;

	if (!b->packed_size)
		return 0;
	ret = frag_reorder(b);
	if (ret)
		return ret;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	b->packed = p;
	p->name = "(packed inode)";
	p->mode = S_IFREG | 0644;
	p->nlink = 1;
	p->ino = (uint32_t)b->ninodes + 1;
	p->mtime = b->epoch;
	p->size = b->packed_size;
	p->compressed = true;
	p->zpcl = b->opts->packed_pcluster / bs;	/* 0: -C's */
	p->extended = false;
	p->datalayout = erofs_zindex_compact(b) ? EROFS_LAYOUT_COMPRESSED_COMPACT :
						  EROFS_LAYOUT_COMPRESSED_FULL;
	ret = erofs_compress_files(b, &p, 1);
	if (ret)
		return ret;
	/* its record after all the data, in a block of its own */
	at = b->total_blocks * bs;
	rec = 32 + erofs_zindex_size(b, p, 32);
	buf = calloc(1, erofs_round_up(rec, bs));
	if (!buf)
		return -ENOMEM;
	p->nid = at / EROFS_SLOT_SIZE;
	erofs_inode_encode(b, p, buf);
	ret = fsf_dev_pwrite(&b->dev, buf, erofs_round_up(rec, bs), at);
	free(buf);
	free(p->zindex);
	p->zindex = NULL;
	if (ret)
		return ret;
	b->total_blocks += erofs_round_up(rec, bs) / bs;
	return 0;
}
