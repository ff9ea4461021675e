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
 * is written, the packed content is itself compressed, after all other
 * data, and its inode record (with its index) follows its data: the
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
		if (t[i])
			free(t[i]->v);
		free(t[i]);
	}
	b->frags = b->dedupe = NULL;
	if (b->packed_fd >= 0)
		close(b->packed_fd);
	b->packed_fd = -1;
	free(b->packed);
	b->packed = NULL;
}

int erofs_frag_store(struct erofs_build *b, const uint8_t *data, size_t len,
		     const uint8_t *sha, uint64_t *off)
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
	for (size_t done = 0; done < len;) {
		ssize_t w = pwrite(b->packed_fd, data + done, len - done,
				   (off_t)(b->packed_size + done));

		if (w < 0) {
			/* reported here, and not as ENOSPC, which the
			 * caller takes for no room beside the image */
			fsf_err(b->log, "cannot write the spool file of the packed inode (in %s): %s",
				erofs_spool_dir(), strerror(errno));
			return -EIO;
		}
		done += (size_t)w;
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

int erofs_write_packed(struct erofs_build *b)
{
	const unsigned int bs = b->blksz;
	struct erofs_node *p;
	uint64_t at, rec;
	uint8_t *buf;
	int ret;

	if (!b->packed_size)
		return 0;
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
