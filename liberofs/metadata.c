// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The metadata area (inodes in nid order, each with its xattrs), the
 * shared xattrs and the superblock.  The area is assembled in memory chunk
 * by chunk and written in large writes.  The record parts the data passes
 * placed already (inline tails, compressed indexes, record.c) are read
 * back with the chunk; every other byte is written, gaps as zeroes.  The
 * first chunk holds the superblock and the prefix table and is written
 * last, so an interrupted run never leaves a valid superblock over
 * incomplete data.
 *
 * With -z and two workers or more, the chunks holding few compressed
 * records are written early (erofs_meta_write_early), on the thread of
 * the file data and directory passes once those are done, while the
 * compressed files are still being written: every byte of such a chunk
 * is final then except the compressed records, which that write leaves
 * out and the last pass (erofs_write_metadata) writes one by one.  What
 * stays after the compressed files is the first chunk, the chunks dense
 * in compressed records, the records left out, and the superblock.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/erofs_fs.h"
#include "internal.h"

#define META_CHUNK (4u << 20)
/* a chunk with more compressed records than this is written whole at the
 * end (each record left out costs a read and a write of its own) */
#define EARLY_MAX_Z 1024

struct meta_plan {
	struct erofs_node **by_nid;	/* the nodes owning an inode */
	size_t n;
	bool *early;			/* per chunk: written early */
	size_t nchunks;
};

static int cmp_nid(const void *x, const void *y)
{
	const struct erofs_node *a = *(struct erofs_node *const *)x;
	const struct erofs_node *c = *(struct erofs_node *const *)y;

	return a->nid < c->nid ? -1 : a->nid > c->nid;
}

static size_t record_size(const struct erofs_build *b,
			  const struct erofs_node *n)
{
	uint32_t head = (n->extended ? 64u : 32u) + n->xattr_isize;

	if (n->compressed)
		return head + erofs_zindex_size(b, n, head) + n->inline_size;
	if (n->chunked)
		return head + erofs_chunkmap_size(b, n, head);
	return head + n->inline_size;
}

static struct erofs_node **nodes_by_nid(const struct erofs_build *b,
					size_t *n)
{
	struct erofs_node **v = malloc(b->count * sizeof(*v) + 1);

	*n = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < b->count; i++)
		if (!b->order[i]->master)
			v[(*n)++] = b->order[i];
	qsort(v, *n, sizeof(*v), cmp_nid);
	return v;
}

void erofs_meta_free(struct erofs_build *b)
{
	if (!b->meta)
		return;
	free(b->meta->by_nid);
	free(b->meta->early);
	free(b->meta);
	b->meta = NULL;
}

/*
 * Which chunks erofs_meta_write_early may write (none where some other
 * pass writes into the area after the data passes: -E fragments' headers,
 * chunk maps; nor where a record crosses a chunk end).  Record sizes and
 * nids are fixed by the layout, read only since.
 */
static int meta_prepare(struct erofs_build *b)
{
	const struct erofs_mkfs_opts *o = b->opts;
	struct meta_plan *m;
	size_t k = 0, nearly = 0;

	if (!o->nzcfgs || o->workers < 2 || o->fragments || b->chunkbits ||
	    b->chunk_indexes || b->from_tar || b->meta_end <= META_CHUNK)
		return 0;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	b->meta = m;
	m->by_nid = nodes_by_nid(b, &m->n);
	m->nchunks = (size_t)((b->meta_end + META_CHUNK - 1) / META_CHUNK);
	m->early = calloc(m->nchunks, sizeof(*m->early));
	if (!m->by_nid || !m->early) {
		erofs_meta_free(b);
		return -ENOMEM;
	}
	for (size_t c = 0; c < m->nchunks; c++) {
		uint64_t end = (uint64_t)(c + 1) * META_CHUNK;
		size_t nz = 0;

		for (; k < m->n && m->by_nid[k]->nid * EROFS_SLOT_SIZE < end; k++) {
			struct erofs_node *x = m->by_nid[k];
			uint64_t at = x->nid * EROFS_SLOT_SIZE;

			if (at + record_size(b, x) > end) {
				/* a record across a chunk end (huge
				 * xattrs): the area is written at the end */
				erofs_meta_free(b);
				return 0;
			}
			nz += x->compressed;
		}
		/* the first chunk (superblock) is always last */
		m->early[c] = c > 0 && nz <= EARLY_MAX_Z;
		nearly += m->early[c];
	}
	if (!nearly)
		erofs_meta_free(b);
	return 0;
}

/* Chunk C written early: every record but the compressed ones, which are
 * left out (their bytes are written by the compressed pass and the last
 * pass); the bytes between records as zeroes. */
static int write_early_chunk(struct erofs_build *b, uint8_t *chunk, size_t c,
			     size_t *next)
{
	struct meta_plan *m = b->meta;
	const uint64_t base = (uint64_t)c * META_CHUNK;
	const uint64_t len = b->meta_end - base < META_CHUNK ?
			     b->meta_end - base : META_CHUNK;
	uint64_t zeroed = 0, from = 0;	/* bytes set; first to write */
	int ret = fsf_dev_pread(&b->dev, chunk, len, base);

	for (; *next < m->n && !ret; (*next)++) {
		struct erofs_node *x = m->by_nid[*next];
		uint64_t rel = x->nid * EROFS_SLOT_SIZE - base;
		size_t sz = record_size(b, x);

		if (rel >= len)
			break;
		if (rel > zeroed)
			memset(chunk + zeroed, 0, rel - zeroed);
		if (x->compressed) {
			if (rel > from)
				ret = fsf_dev_pwrite(&b->dev, chunk + from,
						     rel - from, base + from);
			from = zeroed = rel + sz;
			continue;
		}
		memset(chunk + rel, 0, x->placed ? erofs_record_head(x) : sz);
		erofs_inode_encode(b, x, chunk + rel);
		zeroed = rel + sz;
	}
	if (ret)
		return ret;
	if (len > zeroed)
		memset(chunk + zeroed, 0, len - zeroed);
	return len > from ? fsf_dev_pwrite(&b->dev, chunk + from, len - from,
					   base + from) : 0;
}

int erofs_meta_write_early(struct erofs_build *b)
{
	struct meta_plan *m;
	uint8_t *chunk;
	size_t next = 0, nearly = 0;
	int ret = meta_prepare(b);

	m = b->meta;
	if (ret || !m)
		return ret;
	chunk = malloc(META_CHUNK);
	if (!chunk)
		return -ENOMEM;
	for (size_t c = 0; c < m->nchunks && !ret; c++) {
		uint64_t end = (uint64_t)(c + 1) * META_CHUNK;

		if (m->early[c]) {
			ret = write_early_chunk(b, chunk, c, &next);
			nearly++;
			continue;
		}
		while (next < m->n && m->by_nid[next]->nid * EROFS_SLOT_SIZE < end)
			next++;
	}
	free(chunk);
	fsf_info(b->log, "metadata: %zu of %zu chunks written early", nearly,
		 m->nchunks);
	return ret;
}

/* Record X (SZ bytes at AT) alone: its placed part read back, the rest
 * encoded, all of it written. */
static int write_record(struct erofs_build *b, struct erofs_node *x,
			uint64_t at, size_t sz)
{
	size_t own = x->placed ? erofs_record_head(x) : sz;
	uint8_t *rec = calloc(1, sz);
	int ret = 0;

	if (!rec)
		return -ENOMEM;
	if (own < sz)
		ret = fsf_dev_pread(&b->dev, rec + own, sz - own, at + own);
	erofs_inode_encode(b, x, rec);
	if (!ret)
		ret = fsf_dev_pwrite(&b->dev, rec, sz, at);
	free(rec);
	return ret;
}

int erofs_write_metadata(struct erofs_build *b)
{
	struct meta_plan *m = b->meta;
	size_t n = m ? m->n : 0, next = 0;
	struct erofs_node **by_nid = m ? m->by_nid : nodes_by_nid(b, &n);
	uint8_t *chunk = malloc(META_CHUNK), *first = NULL;
	uint64_t first_len = 0;
	uint64_t carried = 0;	/* next chunk's bytes a record crossing
				 * into it wrote already */
	int ret = 0;

	if (!by_nid || !chunk) {
		ret = -ENOMEM;
		goto out;
	}
	for (uint64_t base = 0; base < b->meta_end && !ret; base += META_CHUNK) {
		uint64_t len = b->meta_end - base < META_CHUNK ?
			       b->meta_end - base : META_CHUNK;
		uint64_t zeroed = carried < len ? carried : len;
		/* chunk bytes before ZEROED are set */

		if (m && m->early[base / META_CHUNK]) {
			/* written early but for its compressed records */
			for (; next < n && !ret; next++) {
				struct erofs_node *x = by_nid[next];
				uint64_t at = x->nid * EROFS_SLOT_SIZE;

				if (at >= base + len)
					break;
				if (x->compressed)
					ret = write_record(b, x, at,
							   record_size(b, x));
			}
			continue;
		}
		carried = 0;
		ret = fsf_dev_pread(&b->dev, chunk, len, base);
		for (; next < n && !ret; next++) {
			struct erofs_node *x = by_nid[next];
			uint64_t at = x->nid * EROFS_SLOT_SIZE, rel = at - base;
			size_t sz = record_size(b, x);
			/* the bytes encoded here: all but the placed ones */
			size_t own = x->placed ? erofs_record_head(x) : sz;

			if (at >= base + len)
				break;
			if (rel > zeroed)
				memset(chunk + zeroed, 0, rel - zeroed);
			if (at + sz <= base + len) {
				memset(chunk + rel, 0, own);
				erofs_inode_encode(b, x, chunk + rel);
				zeroed = rel + sz;
				continue;
			}
			/* a record crossing the chunk end (huge xattrs) */
			{
				uint8_t *rec = calloc(1, sz);

				if (!rec) {
					ret = -ENOMEM;
					break;
				}
				if (own < sz)
					ret = fsf_dev_pread(&b->dev, rec + own,
							    sz - own, at + own);
				erofs_inode_encode(b, x, rec);
				memcpy(chunk + rel, rec, base + len - at);
				if (!ret)
					ret = fsf_dev_pwrite(&b->dev, rec + (base + len - at),
							     sz - (base + len - at), base + len);
				free(rec);
				zeroed = len;
				carried = at + sz - (base + len);
				if (ret)
					break;
			}
		}
		if (ret)
			break;
		if (len > zeroed)
			memset(chunk + zeroed, 0, len - zeroed);
		if (base == 0) {
			/* kept for last: superblock, compression
			 * settings, prefix table */
			erofs_compr_cfgs_encode(b, chunk + EROFS_SUPER_OFFSET + 128);
			erofs_prefix_table_encode(b->prefixes, b->nprefixes,
						  chunk + b->prefix_start);
			first = chunk;
			first_len = len;
			chunk = malloc(META_CHUNK);
			if (!chunk)
				ret = -ENOMEM;
			continue;
		}
		ret = fsf_dev_pwrite(&b->dev, chunk, len, base);
	}
	if (!ret && b->shared_size) {
		uint64_t len = erofs_round_up(b->shared_size, b->blksz);
		uint8_t *s = calloc(1, len);

		if (!s) {
			ret = -ENOMEM;
			goto out;
		}
		erofs_shared_xattrs_encode(b, s);
		ret = fsf_dev_pwrite(&b->dev, s, len, b->xattr_blkaddr * b->blksz);
		free(s);
	}
	if (!ret && first && b->devt_off) {
		struct erofs_deviceslot d = {
			.blocks_lo = htole32((uint32_t)b->dev_blocks),
			.uniaddr_lo = htole32((uint32_t)b->total_blocks),
			.blocks_hi = htole32((uint32_t)(b->dev_blocks >> 32)),
		};

		memcpy(first + b->devt_off, &d, sizeof(d));
	}
	if (!ret && first) {
		erofs_super_encode(b, first + EROFS_SUPER_OFFSET);
		erofs_sb_set_checksum(first + EROFS_SUPER_OFFSET, b->blksz);
		ret = fsf_dev_pwrite(&b->dev, first, first_len, 0);
	}
out:
	free(first);
	free(chunk);
	if (!m)
		free(by_nid);
	erofs_meta_free(b);
	return ret;
}
