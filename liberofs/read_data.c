// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Read side: a file's content, flat (blocks from the start block, the
 * tail inline after the inode) or compressed (every extent decoded).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/erofs_fs.h"
#include "erofs/read.h"

static const char *const alg_names[] = { "lz4", "lzma", "deflate", "zstd" };

/* content is read and handed over in pieces of at most this */
#define PIECE	(32u << 10)

/* LEN bytes at OFF of device DEV (range checked), to FN in pieces */
static int read_pieces(struct erofs_img *img, uint32_t dev, uint64_t off,
		       uint64_t len, erofs_data_fn fn, void *ctx)
{
	while (len) {
		uint64_t n = len < PIECE ? len : PIECE;
		const uint8_t *p = erofs_img_read(img, dev, off, n, "file content");
		int ret;

		if (!p)
			return -EIO;
		ret = fn(ctx, p, (size_t)n);
		if (ret)
			return ret;
		off += n;
		len -= n;
	}
	return 0;
}

static int read_flat(struct erofs_img *img, const struct erofs_rinode *ino,
		     erofs_data_fn fn, void *ctx, uint64_t *phys)
{
	uint64_t nblocks = (ino->size + img->blksz - 1) >> img->blkszbits;
	uint64_t full = ino->layout == EROFS_LAYOUT_FLAT_INLINE ? nblocks - 1 : nblocks;
	uint64_t fullbytes = full << img->blkszbits, tail = 0;
	const uint8_t *p;
	int ret;

	if (ino->size > fullbytes)
		tail = ino->size - fullbytes;
	if (full) {
		uint64_t len = ino->size < fullbytes ? ino->size : fullbytes;

		if ((uint64_t)ino->i_u > img->size >> img->blkszbits ||
		    !erofs_img_has(img, (uint64_t)ino->i_u << img->blkszbits,
				   len, "data blocks"))
			return erofs_corrupt(img, "inode %" PRIu64 ": %" PRIu64 " data blocks from block %u (byte %" PRIu64 ") lie beyond the image end",
					     ino->nid, full, ino->i_u, ino->pos + 0x10);
		ret = read_pieces(img, 0, (uint64_t)ino->i_u << img->blkszbits,
				  len, fn, ctx);
		if (ret)
			return ret;
		*phys += fullbytes;
	}
	if (ino->layout == EROFS_LAYOUT_FLAT_INLINE && tail) {
		uint64_t at = erofs_inode_end(ino);

		if ((at & (img->blksz - 1)) + tail > img->blksz)
			return erofs_corrupt(img, "inode %" PRIu64 ": inline tail of %" PRIu64 " bytes at byte %" PRIu64 " crosses a block boundary",
					     ino->nid, tail, at);
		p = erofs_img_at(img, at, tail, "inline tail");
		if (!p)
			return -EUCLEAN;
		ret = fn(ctx, p, (size_t)tail);
		if (ret)
			return ret;
		*phys += tail;
	}
	return 0;
}

struct collect {
	uint8_t *buf;
	size_t len;
};

static int collect_fn(void *ctx, const uint8_t *buf, size_t len)
{
	struct collect *c = ctx;

	if (buf)
		memcpy(c->buf + c->len, buf, len);
	else
		memset(c->buf + c->len, 0, len);
	c->len += len;
	return 0;
}

/* Largest packed inode decoded (its content is held in memory). */
#define PACKED_MAX	(1ull << 32)

/* The packed inode's content, decoded once and kept in IMG. */
int erofs_packed_load(struct erofs_img *img)
{
	struct erofs_rinode p;
	struct collect c = { 0 };
	int ret;

	if (img->packed || img->packed_err)
		return img->packed_err ?
		       erofs_corrupt(img, "packed inode %" PRIu64 " is unreadable (reported before)",
				     img->packed_nid) : 0;
	if (img->in_packed)
		return erofs_corrupt(img, "packed inode %" PRIu64 ": its content refers to itself",
				     img->packed_nid);
	ret = erofs_read_inode(img, img->packed_nid, &p);
	if (!ret && ((p.mode & 0170000) != 0100000 || p.size > PACKED_MAX ||
		     p.size > img->size * 1024u))
		ret = erofs_corrupt(img, "packed inode %" PRIu64 ": not a regular file of a plausible size (%" PRIu64 " bytes)",
				    img->packed_nid, p.size);
	if (!ret) {
		c.buf = malloc(p.size + 1);
		if (!c.buf) {
			snprintf(img->err, sizeof(img->err), "out of memory");
			ret = -ENOMEM;
		}
	}
	if (!ret) {
		img->in_packed = true;
		ret = erofs_read_data(img, &p, collect_fn, &c, NULL);
		img->in_packed = false;
	}
	if (ret) {
		free(c.buf);
		img->packed_err = ret;
		return ret;
	}
	img->packed = c.buf;
	img->packed_len = c.len;
	return 0;
}

static int read_fragment(struct erofs_img *img, const struct erofs_rinode *ino,
			 const struct erofs_rextent *e, erofs_data_fn fn,
			 void *ctx)
{
	int ret = erofs_packed_load(img);

	if (ret)
		return ret;
	if (e->fragoff > img->packed_len || e->llen > img->packed_len - e->fragoff)
		return erofs_corrupt(img, "inode %" PRIu64 ": fragment of %" PRIu64 " bytes at %" PRIu64 " lies beyond the packed inode's %" PRIu64,
				     ino->nid, e->llen, e->fragoff, img->packed_len);
	return fn(ctx, img->packed + e->fragoff, (size_t)e->llen);
}

struct zread {
	struct erofs_img *img;
	const struct erofs_rinode *ino;
	erofs_data_fn fn;
	void *ctx;
	uint64_t *phys;
	uint64_t pos;			/* logical bytes handed over */
	uint8_t *buf;			/* an extent decoded */
	size_t cap;
};

static int read_extent(void *arg, const struct erofs_rextent *e)
{
	struct zread *z = arg;
	struct erofs_img *img = z->img;
	const struct erofs_rinode *ino = z->ino;
	const uint8_t *src;
	size_t slen = e->plen;
	int ret;

	if (e->la != z->pos)
		return erofs_corrupt(img, "inode %" PRIu64 ": extent at logical byte %" PRIu64 " leaves a gap after %" PRIu64,
				     ino->nid, e->la, z->pos);
	z->pos += e->llen;
	*z->phys += e->plen;
	if (e->frag)
		return read_fragment(img, ino, e, z->fn, z->ctx);
	src = erofs_img_read(img, 0, e->pa, e->plen, "pcluster");	/* range checked by zmap */
	if (!src)
		return -EIO;
	if (e->plain && e->interlaced) {
		/* the extent starts at its offset in the block and wraps
		 * to the pcluster's start */
		uint64_t at = e->la & (img->blksz - 1);
		uint64_t right = e->plen - at < e->llen ? e->plen - at : e->llen;

		if (at >= e->plen)
			return erofs_corrupt(img, "inode %" PRIu64 ": interlaced raw extent at logical byte %" PRIu64 " starts past its pcluster",
					     ino->nid, e->la);
		ret = z->fn(z->ctx, src + at, (size_t)right);
		if (!ret && e->llen > right)
			ret = z->fn(z->ctx, src, (size_t)(e->llen - right));
		return ret;
	}
	if (e->plain)
		return z->fn(z->ctx, src, (size_t)e->llen);
	if (e->alg != Z_EROFS_COMPRESSION_LZ4 ||
	    (img->feature_incompat & EROFS_INCOMPAT_ZERO_PADDING)) {
		while (slen && !*src) {
			src++;
			slen--;
		}
	}
	if (!slen)
		return erofs_corrupt(img, "inode %" PRIu64 ": pcluster at byte %" PRIu64 " holds only zeros",
				     ino->nid, e->pa);
	if (z->cap < e->llen) {
		free(z->buf);
		z->cap = (size_t)e->llen;
		z->buf = malloc(z->cap);
		if (!z->buf) {
			z->cap = 0;
			snprintf(img->err, sizeof(img->err), "out of memory");
			return -ENOMEM;
		}
	}
	ret = erofs_decompress(img, e->alg, src, slen, z->buf, (size_t)e->llen,
			       e->partial);
	if (ret) {
		erofs_corrupt(img, "inode %" PRIu64 ": %s pcluster at byte %" PRIu64 " (%u bytes) does not decode to %sthe %" PRIu64 " bytes at logical byte %" PRIu64,
			      ino->nid, alg_names[e->alg & 3], e->pa, e->plen,
			      e->partial ? "at least " : "", e->llen, e->la);
		return -EUCLEAN;
	}
	return z->fn(z->ctx, z->buf, (size_t)e->llen);
}

static int read_compressed(struct erofs_img *img,
			   const struct erofs_rinode *ino, erofs_data_fn fn,
			   void *ctx, uint64_t *phys)
{
	struct zread z = { .img = img, .ino = ino, .fn = fn, .ctx = ctx,
			   .phys = phys };
	int ret = erofs_read_zmap(img, ino, read_extent, &z);

	if (!ret && z.pos != ino->size)
		ret = erofs_corrupt(img, "inode %" PRIu64 ": extents end at %" PRIu64 ", the size is %" PRIu64,
				    ino->nid, z.pos, ino->size);
	free(z.buf);
	return ret;
}

/*
 * Chunk-based: after the inode and its xattrs, aligned to the entry size,
 * one block map entry (4 bytes) or chunk index (8 bytes) per chunk.
 */
static int read_chunked(struct erofs_img *img, const struct erofs_rinode *ino,
			erofs_data_fn fn, void *ctx, uint64_t *phys)
{
	const uint32_t fmt = ino->i_u & 0xffffu;	/* checked by read_inode */
	const unsigned int chunkbits = img->blkszbits +
				       (fmt & EROFS_CHUNK_FORMAT_BLKBITS_MASK);
	const bool indexes = fmt & EROFS_CHUNK_FORMAT_INDEXES;
	const unsigned int unit = indexes ? 8u : EROFS_BLOCK_MAP_ENTRY_SIZE;
	const uint64_t cs = 1ull << chunkbits;
	uint64_t nchunks = (ino->size >> chunkbits) + !!(ino->size & (cs - 1));
	uint64_t mapoff = (erofs_inode_end(ino) + unit - 1) / unit * unit;
	int ret;

	if (nchunks > img->size / unit ||
	    !erofs_img_has(img, mapoff, nchunks * unit, "chunk map"))
		return erofs_corrupt(img, "inode %" PRIu64 ": the map of %" PRIu64 " chunks at byte %" PRIu64 " lies beyond the image end",
				     ino->nid, nchunks, mapoff);
	for (uint64_t c = 0; c < nchunks; c++) {
		const uint8_t *e = erofs_img_at(img, mapoff + c * unit, unit, "chunk map");
		uint64_t off = c << chunkbits;
		uint64_t len = ino->size - off < cs ? ino->size - off : cs;
		uint64_t limit = img->size;
		uint16_t dev = 0;
		uint32_t blk;

		if (!e)
			return -EIO;
		if (indexes) {
			dev = (uint16_t)(e[2] | e[3] << 8);
			blk = (uint32_t)e[4] | (uint32_t)e[5] << 8 |
			      (uint32_t)e[6] << 16 | (uint32_t)e[7] << 24;
		} else {
			blk = (uint32_t)e[0] | (uint32_t)e[1] << 8 |
			      (uint32_t)e[2] << 16 | (uint32_t)e[3] << 24;
		}
		if (blk == EROFS_NULL_ADDR) {
			ret = fn(ctx, NULL, (size_t)len);
			if (ret)
				return ret;
			continue;
		}
		if (dev > img->ndevices)
			return erofs_corrupt(img, "inode %" PRIu64 ": chunk %" PRIu64 " on device %u (index at byte %" PRIu64 "), the image has %u extra devices",
					     ino->nid, c, dev, mapoff + c * unit,
					     img->ndevices);
		if (dev) {
			limit = img->devices[dev - 1].size;
			if (!img->devices[dev - 1].attached)
				return erofs_unsupported(img, "inode %" PRIu64 ": chunk %" PRIu64 " on extra device %u, which was not given",
							 ino->nid, c, dev);
		}
		if (((uint64_t)blk << img->blkszbits) > limit ||
		    len > limit - ((uint64_t)blk << img->blkszbits)) {
			if (dev)
				return erofs_corrupt(img, "inode %" PRIu64 ": chunk %" PRIu64 " at block %u of extra device %u (index at byte %" PRIu64 ") lies beyond its end (%" PRIu64 " bytes)",
						     ino->nid, c, blk, dev,
						     mapoff + c * unit, limit);
			return erofs_corrupt(img, "inode %" PRIu64 ": chunk %" PRIu64 " at block %u (entry at byte %" PRIu64 ") lies beyond the image end",
					     ino->nid, c, blk, mapoff + c * unit);
		}
		ret = read_pieces(img, dev, (uint64_t)blk << img->blkszbits, len,
				  fn, ctx);
		if (ret)
			return ret;
		*phys += (len + img->blksz - 1) & ~(uint64_t)(img->blksz - 1);
	}
	return 0;
}

int erofs_read_data(struct erofs_img *img, const struct erofs_rinode *ino,
		    erofs_data_fn fn, void *ctx, uint64_t *phys)
{
	uint64_t dummy = 0;

	if (!phys)
		phys = &dummy;
	*phys = 0;
	if (!ino->size)
		return 0;
	if (ino->layout == EROFS_LAYOUT_FLAT_PLAIN ||
	    ino->layout == EROFS_LAYOUT_FLAT_INLINE)
		return read_flat(img, ino, fn, ctx, phys);
	if (ino->layout == EROFS_LAYOUT_CHUNK_BASED)
		return read_chunked(img, ino, fn, ctx, phys);
	return read_compressed(img, ino, fn, ctx, phys);
}

int erofs_read_all(struct erofs_img *img, const struct erofs_rinode *ino,
		   uint64_t max, uint8_t **out)
{
	struct collect c = { 0 };
	int ret;

	*out = NULL;
	if (ino->size > max || ino->size > img->size * 8u + 65536u)
		return erofs_corrupt(img, "inode %" PRIu64 ": size %" PRIu64 " is implausible for its type",
				     ino->nid, ino->size);
	c.buf = malloc(ino->size + 1);
	if (!c.buf) {
		snprintf(img->err, sizeof(img->err), "out of memory");
		return -ENOMEM;
	}
	ret = erofs_read_data(img, ino, collect_fn, &c, NULL);
	if (ret) {
		free(c.buf);
		return ret;
	}
	c.buf[c.len] = 0;
	*out = c.buf;
	return 0;
}
