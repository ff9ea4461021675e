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

/*
 * The tables hold what a lookup needs and no more (they grow with the
 * number of distinct fragments and files): a fragment is its SHA-256,
 * offset and length and the file that stored it (its name groups it with
 * similar ones when the packed inode is reordered), 48 bytes, in store
 * order, found through 4-byte slots; a whole file is found through a slot
 * holding its node, whose digest and size are the key.
 */
struct frag_rec {
	uint8_t sha[32];
	uint32_t off, len;
	const struct erofs_node *n;
};

struct frag_table {
	struct frag_rec *recs;	/* in store (= offset) order */
	size_t nrecs, caprecs;
	uint32_t *slot;		/* index + 1 into recs, 0: empty */
	size_t nslot;		/* a power of two */
};

struct dedupe_table {
	struct erofs_node **slot;
	size_t nslot, n;
};

static size_t slot_of(const uint8_t *key, size_t cap)
{
	uint64_t h;

	memcpy(&h, key, sizeof(h));
	return (size_t)(h & (cap - 1));
}

/* Room for one more fragment: recs and slots (at most half full). */
static int frag_room(struct frag_table *t)
{
	if (t->nrecs == t->caprecs) {
		size_t cap = t->caprecs ? t->caprecs * 2 : 1024;
		struct frag_rec *r = realloc(t->recs, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		t->recs = r;
		t->caprecs = cap;
	}
	if ((t->nrecs + 1) * 2 > t->nslot) {
		size_t cap = t->nslot ? t->nslot * 2 : 2048;
		uint32_t *v = calloc(cap, sizeof(*v));

		if (!v)
			return -ENOMEM;
		for (size_t i = 0; i < t->nrecs; i++) {
			size_t s = slot_of(t->recs[i].sha, cap);

			while (v[s])
				s = (s + 1) & (cap - 1);
			v[s] = (uint32_t)(i + 1);
		}
		free(t->slot);
		t->slot = v;
		t->nslot = cap;
	}
	return 0;
}

/* Room for one more file (at most three quarters full). */
static int dedupe_room(struct dedupe_table *t)
{
	size_t cap;
	struct erofs_node **v;

	if ((t->n + 1) * 4 <= t->nslot * 3)
		return 0;
	cap = t->nslot ? t->nslot * 2 : 1024;
	v = calloc(cap, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < t->nslot; i++) {
		size_t s;

		if (!t->slot[i])
			continue;
		for (s = slot_of(t->slot[i]->digest, cap); v[s];
		     s = (s + 1) & (cap - 1))
			;
		v[s] = t->slot[i];
	}
	free(t->slot);
	t->slot = v;
	t->nslot = cap;
	return 0;
}

static void frag_table_free(struct erofs_build *b)
{
	if (b->frags) {
		free(b->frags->recs);
		free(b->frags->slot);
	}
	free(b->frags);
	b->frags = NULL;
}

void erofs_frag_tables_free(struct erofs_build *b)
{
	frag_table_free(b);
	if (b->dedupe)
		free(b->dedupe->slot);
	free(b->dedupe);
	b->dedupe = NULL;
	if (b->packed_fd >= 0)
		close(b->packed_fd);
	b->packed_fd = -1;
	free(b->packed);
	b->packed = NULL;
}

int erofs_frag_store(struct erofs_build *b, const struct erofs_node *n,
		     const uint8_t *data, size_t len, const uint8_t *sha,
		     uint64_t *off)
{
	struct frag_table *t = b->frags;
	size_t s;
	int ret;

	if (!t && !(t = b->frags = calloc(1, sizeof(*t))))
		return -ENOMEM;
	if (frag_room(t))
		return -ENOMEM;
	for (s = slot_of(sha, t->nslot); t->slot[s]; s = (s + 1) & (t->nslot - 1)) {
		const struct frag_rec *r = &t->recs[t->slot[s] - 1];

		if (r->len == len && !memcmp(r->sha, sha, 32)) {
			*off = r->off;
			b->frag_shared++;
			return 0;
		}
	}
	if (b->packed_size + len > UINT32_MAX) {
		fsf_err(b->log, "the packed inode would pass 4 GiB of fragments");
		return -EFBIG;
	}
	if (b->packed_fd < 0) {
		ret = erofs_spool_open(b, "packed", "the packed inode");
		if (ret < 0)
			return ret;
		b->packed_fd = ret;
	}
	ret = erofs_spool_io(b->packed_fd, (uint8_t *)data, len, b->packed_size, true);
	if (ret) {
		/* reported here, and not as ENOSPC, which the caller
		 * takes for no room beside the image */
		fsf_err(b->log, "cannot write the spool file of the packed inode (in %s): %s",
			erofs_spool_dir(), strerror(-ret));
		return -EIO;
	}
	t->recs[t->nrecs] = (struct frag_rec){ .off = (uint32_t)b->packed_size,
					       .len = (uint32_t)len, .n = n };
	memcpy(t->recs[t->nrecs].sha, sha, 32);
	t->slot[s] = (uint32_t)++t->nrecs;
	*off = b->packed_size;
	b->packed_size += len;
	return 0;
}

struct erofs_node *erofs_dedupe_match(struct erofs_build *b,
				      struct erofs_node *n)
{
	struct dedupe_table *t = b->dedupe;
	size_t s;

	if (!t && !(t = b->dedupe = calloc(1, sizeof(*t))))
		return NULL;
	if (dedupe_room(t))
		return NULL;
	for (s = slot_of(n->digest, t->nslot); t->slot[s];
	     s = (s + 1) & (t->nslot - 1)) {
		struct erofs_node *e = t->slot[s];

		if (e->size == n->size && !memcmp(e->digest, n->digest, 32))
			return e;
	}
	t->slot[s] = n;
	t->n++;
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
	int r = strcmp(group_of(a->n), group_of(c->n));

	if (r)
		return r;
	return a->off < c->off ? -1 : a->off > c->off;
}

/* The index of the fragment stored at OFF (they are in offset order),
 * or T->nrecs. */
static size_t rec_at(const struct frag_table *t, uint64_t off)
{
	size_t lo = 0, hi = t->nrecs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->recs[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->nrecs && t->recs[lo].off == off ? lo : t->nrecs;
}

/* Copy the fragments to a new spool file in ORDER, fragment I to AT[I]. */
static int respool(struct erofs_build *b, const struct frag_table *t,
		   const struct frag_rec **order, uint32_t *at)
{
	const size_t bufsz = 1u << 20;
	uint8_t *buf = malloc(bufsz);
	uint64_t to = 0;
	int fd, ret = 0;

	if (!buf)
		return -ENOMEM;
	fd = erofs_spool_open(b, "packed", "the packed inode");
	if (fd < 0) {
		free(buf);
		return fd;	/* reported */
	}
	for (size_t i = 0; i < t->nrecs && !ret; i++) {
		const struct frag_rec *r = order[i];

		at[r - t->recs] = (uint32_t)to;
		for (uint64_t done = 0; done < r->len && !ret;) {
			size_t k = r->len - done < bufsz ? (size_t)(r->len - done) : bufsz;

			ret = erofs_spool_io(b->packed_fd, buf, k, r->off + done, false);
			if (!ret)
				ret = erofs_spool_io(fd, buf, k, to + done, true);
			done += k;
		}
		to += r->len;
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
 * fragment offset into its map header, in the image already.  No fragment
 * is looked up any more: the slots go first.
 */
static int frag_reorder(struct erofs_build *b)
{
	struct frag_table *t = b->frags;
	const struct frag_rec **order;
	uint32_t *at;
	int ret;

	if (!t || t->nrecs < 2)
		return 0;
	free(t->slot);
	t->slot = NULL;
	t->nslot = 0;
	order = malloc(t->nrecs * sizeof(*order));
	at = malloc(t->nrecs * sizeof(*at));
	if (!order || !at) {
		free(order);
		free(at);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->nrecs; i++)
		order[i] = &t->recs[i];
	qsort(order, t->nrecs, sizeof(*order), cmp_group);
	ret = respool(b, t, order, at);
	free(order);
	for (size_t i = 0; i < b->count && !ret; i++) {
		struct erofs_node *n = b->order[i];
		size_t r;
		uint64_t to;
		uint8_t h[8];

		if (n->master || !(n->whole_frag || n->tail_frag))
			continue;
		r = rec_at(t, n->fragoff);
		if (r == t->nrecs) {
			ret = -EIO;
			break;
		}
		n->fragoff = at[r];
		to = n->nid * EROFS_SLOT_SIZE +
		     erofs_round_up(erofs_record_head(n), 8);
		if (n->whole_frag) {
			/* all 64 bits of the map header: bit 63, offset */
			uint64_t v = htole64(at[r] | 1ull << 63);

			memcpy(h, &v, 8);
			ret = fsf_dev_pwrite(&b->dev, h, 8, to);
		} else {
			uint32_t v = htole32(at[r]);	/* h_fragmentoff */

			memcpy(h, &v, 4);
			ret = fsf_dev_pwrite(&b->dev, h, 4, to);
		}
	}
	free(at);
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
