// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Chunk-based files (--chunksize).  Every uncompressed regular file is cut
 * into chunks of 2^chunkbits bytes (the last one short); its inode is
 * followed by a block map, one 4-byte start block per chunk (the layout
 * reserved it: its size depends on the file size only).  This pass runs
 * after every other data block is placed and appends the chunks, one file
 * after the other in layout order, on one thread, so that the image is
 * the same on every run:
 *
 * - a chunk without data in the source (SEEK_DATA finds none in it) is a
 *   hole: the null address, nothing stored;
 * - a chunk whose bytes are all zero is a hole too (as erofs-utils);
 * - a chunk equal to one stored before (same length and SHA-256, then the
 *   bytes compared) points to that copy;
 * - any other chunk is stored at the end of the image.
 *
 * Each file's map is written to its place in the metadata area (after
 * its inode and xattrs, record.c) as it is made, in pieces of MAP_PIECE
 * entries: none is held to the end, so the pass's memory does not grow
 * with the number of files or their size.
 *
 * The file's fingerprint is computed over its whole content, holes read
 * as zeros.  A chunk larger than the read buffer is written as it is read
 * and taken back (the end pointer not moved) when it turns out to be a
 * hole or a copy; what lies beyond the final end is cut off by the
 * image's final size.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/erofs_fs.h"
#include "internal.h"

#define PIECE (1u << 20)	/* read buffer */
#define MAP_PIECE 4096u		/* map entries written at once */

struct stored {			/* a chunk stored in the image */
	uint8_t md[32];
	uint64_t len;		/* bytes (the last chunk of a file: short) */
	uint32_t blkaddr;
	bool used;
};

struct cpass {
	struct erofs_build *b;
	uint64_t cursor;	/* next free block */
	struct stored *tab;	/* open addressing on the digest */
	size_t cap, used;
	uint8_t *buf, *cmp, *zeros;
	EVP_MD_CTX *file_md, *chunk_md;
	const char *path;	/* file being written, for messages */
	struct fsf_dev *out;	/* the image, or the --blobdev device */
	uint16_t dev_id;	/* its device id in the chunk indexes */
	/* the current file's map: entries [map_first, map_first + MAP_PIECE)
	 * in map, until written */
	uint8_t *map;
	uint64_t map_first;
};

unsigned int erofs_node_chunkbits(const struct erofs_build *b,
				  const struct erofs_node *n)
{
	unsigned int bits = b->opts->blkszbits;

	if (b->chunkbits)
		return b->chunkbits;
	while ((1ull << bits) < n->size &&
	       bits < b->opts->blkszbits + EROFS_CHUNK_FORMAT_BLKBITS_MASK)
		bits++;
	return bits;
}

uint64_t erofs_chunkmap_size(const struct erofs_build *b,
			     const struct erofs_node *n, uint32_t head)
{
	uint64_t cs = 1ull << n->chunkbits;
	unsigned int unit = b->chunk_indexes ? 8u : EROFS_BLOCK_MAP_ENTRY_SIZE;

	return erofs_round_up(head, unit) - head +
	       (n->size + cs - 1) / cs * unit;
}

/* chunk C of N starts at block BLK (EROFS_NULL_ADDR: a hole) of device
 * DEV (0: the image); C is in the piece of the map held (map_flush) */
static void set_entry(struct cpass *cp, uint64_t c, uint32_t blk, uint16_t dev)
{
	uint64_t k = c - cp->map_first;

	if (cp->b->chunk_indexes) {
		struct erofs_inode_chunk_index ix = {
			.device_id = htole16(blk == EROFS_NULL_ADDR ? 0 : dev),
			.startblk_lo = htole32(blk),
		};

		memcpy(cp->map + k * sizeof(ix), &ix, sizeof(ix));
	} else {
		uint32_t le = htole32(blk);

		memcpy(cp->map + k * EROFS_BLOCK_MAP_ENTRY_SIZE, &le,
		       sizeof(le));
	}
}

/* Write N's map entries [cp->map_first, END) to their place in its record
 * and hold the next piece from END on; at the file's start (END 0) only
 * the alignment padding after inode and xattrs is written (zeros). */
static int map_flush(struct cpass *cp, struct erofs_node *n, uint64_t end)
{
	const unsigned int unit = cp->b->chunk_indexes ? 8u : 4u;
	const uint32_t head = erofs_record_head(n);
	const uint64_t start = n->nid * EROFS_SLOT_SIZE +
			       erofs_round_up(head, unit);
	int ret;

	if (!end) {
		static const uint8_t zero[8];
		size_t pad = (size_t)(erofs_round_up(head, unit) - head);

		cp->map_first = 0;
		ret = pad ? fsf_dev_pwrite(&cp->b->dev, zero, pad,
					   n->nid * EROFS_SLOT_SIZE + head) : 0;
	} else {
		ret = fsf_dev_pwrite(&cp->b->dev, cp->map,
				     (size_t)(end - cp->map_first) * unit,
				     start + cp->map_first * unit);
	}
	if (ret)
		fsf_err(cp->b->log, "cannot write the block map of %s: %s",
			n->name, strerror(-ret));
	cp->map_first = end;
	return ret;
}

/* Before chunk C of N is set: the held piece written when C is past it */
static int map_room(struct cpass *cp, struct erofs_node *n, uint64_t c)
{
	return c - cp->map_first < MAP_PIECE ? 0 : map_flush(cp, n, c);
}

static bool all_zero(const uint8_t *p, size_t len)
{
	return !len || (!p[0] && !memcmp(p, p + 1, len - 1));
}

static size_t slot_of(const struct cpass *cp, const uint8_t *md)
{
	uint64_t h;

	memcpy(&h, md, sizeof(h));
	return (size_t)(h & (cp->cap - 1));
}

static int remember(struct cpass *cp, const uint8_t *md, uint64_t len,
		    uint32_t blkaddr)
{
	size_t i;

	if ((cp->used + 1) * 2 > cp->cap) {
		size_t ncap = cp->cap ? cp->cap * 2 : 1024;
		struct stored *old = cp->tab, *t = calloc(ncap, sizeof(*t));
		size_t ocap = cp->cap;

		if (!t)
			return -ENOMEM;
		cp->tab = t;
		cp->cap = ncap;
		for (size_t k = 0; k < ocap; k++) {
			if (!old[k].used)
				continue;
			for (i = slot_of(cp, old[k].md); t[i].used;
			     i = (i + 1) & (ncap - 1))
				;
			t[i] = old[k];
		}
		free(old);
	}
	for (i = slot_of(cp, md); cp->tab[i].used; i = (i + 1) & (cp->cap - 1))
		;
	memcpy(cp->tab[i].md, md, 32);
	cp->tab[i].len = len;
	cp->tab[i].blkaddr = blkaddr;
	cp->tab[i].used = true;
	cp->used++;
	return 0;
}

static const struct stored *lookup(const struct cpass *cp, const uint8_t *md,
				   uint64_t len)
{
	if (!cp->cap)
		return NULL;
	for (size_t i = slot_of(cp, md); cp->tab[i].used;
	     i = (i + 1) & (cp->cap - 1))
		if (cp->tab[i].len == len && !memcmp(cp->tab[i].md, md, 32))
			return &cp->tab[i];
	return NULL;
}

static int failed(struct cpass *cp, const char *what, int err)
{
	fsf_err(cp->b->log, "%s %s/%s: %s", what, cp->b->opts->source,
		cp->path, strerror(-err));
	return err;
}

/* LEN bytes of the source at OFF into BUF; short means the file shrank */
static int read_at(struct cpass *cp, struct erofs_src *src, uint8_t *buf,
		   size_t len, uint64_t off)
{
	ssize_t r = erofs_src_pread(src, buf, len, off);

	if (r < 0)
		return failed(cp, "cannot read", (int)r);
	if ((size_t)r != len)
		return failed(cp, "file shrank while reading", -EAGAIN);
	return 0;
}

/* Does the source hold no data in [OFF, OFF + LEN)?  A filesystem without
 * SEEK_DATA answers with OFF itself: data.  A tar entry is a window of
 * the tar (no holes) or of the spool file (a sparse entry's holes are
 * holes there). */
static bool source_hole(const struct erofs_src *src, uint64_t off,
			uint64_t len)
{
	uint64_t at = src->shared ? src->base + off : off;
	off_t d = lseek(src->fd, (off_t)at, SEEK_DATA);

	if (d < 0)
		return errno == ENXIO;
	return (uint64_t)d >= at + len;
}

/* LEN bytes of BUF written at byte BYTE of the image, the last block
 * zero-padded (BUF has room for the padding) */
static int write_blocks(struct cpass *cp, uint8_t *buf, size_t len,
			uint64_t byte)
{
	const unsigned int bs = cp->b->blksz;
	size_t padded = (size_t)erofs_round_up(len, bs);

	memset(buf + len, 0, padded - len);
	return fsf_dev_pwrite(cp->out, buf, padded, byte);
}

/* Are the LEN bytes at blocks A and C of the image equal? */
static int same_in_image(struct cpass *cp, uint64_t a, uint64_t c,
			 uint64_t len, bool *same)
{
	const unsigned int bs = cp->b->blksz;

	*same = true;
	for (uint64_t off = 0; off < len && *same; off += PIECE) {
		size_t n = len - off < PIECE ? (size_t)(len - off) : PIECE;
		int ret = fsf_dev_pread(cp->out, cp->buf, n, a * bs + off);

		if (!ret)
			ret = fsf_dev_pread(cp->out, cp->cmp, n, c * bs + off);
		if (ret)
			return ret;
		*same = !memcmp(cp->buf, cp->cmp, n);
	}
	return 0;
}

/* One chunk with data in the source: hole, copy, or stored at the end. */
static int data_chunk(struct cpass *cp, struct erofs_node *n,
		      struct erofs_src *src, uint64_t off, uint64_t len, uint64_t c)
{
	const unsigned int bs = cp->b->blksz;
	const bool whole = len <= PIECE;	/* the chunk fits the buffer */
	uint64_t nblk = (len + bs - 1) / bs;
	const struct stored *s;
	bool zero = true, same = false;
	uint8_t md[32];
	int ret;

	EVP_DigestInit_ex(cp->chunk_md, EVP_sha256(), NULL);
	for (uint64_t p = 0; p < len; p += PIECE) {
		size_t k = len - p < PIECE ? (size_t)(len - p) : PIECE;

		ret = read_at(cp, src, cp->buf, k, off + p);
		if (ret)
			return ret;
		if (n->has_digest)
			EVP_DigestUpdate(cp->file_md, cp->buf, k);
		EVP_DigestUpdate(cp->chunk_md, cp->buf, k);
		zero = zero && all_zero(cp->buf, k);
		if (!whole) {
			ret = write_blocks(cp, cp->buf, k,
					   cp->cursor * bs + p);
			if (ret)
				return failed(cp, "cannot write data of", ret);
		}
	}
	EVP_DigestFinal_ex(cp->chunk_md, md, NULL);
	if (zero) {
		set_entry(cp, c, EROFS_NULL_ADDR, 0);
		cp->b->hole_chunks++;
		return 0;
	}
	s = lookup(cp, md, len);
	if (s && whole) {
		ret = fsf_dev_pread(cp->out, cp->cmp, (size_t)len,
				    (uint64_t)s->blkaddr * bs);
		if (ret)
			return failed(cp, "cannot read back a chunk for", ret);
		same = !memcmp(cp->cmp, cp->buf, (size_t)len);
	} else if (s) {
		ret = same_in_image(cp, s->blkaddr, cp->cursor, len, &same);
		if (ret)
			return failed(cp, "cannot read back a chunk for", ret);
	}
	if (same) {
		set_entry(cp, c, s->blkaddr, cp->dev_id);
		cp->b->dedup_chunks++;
		return 0;
	}
	if (cp->cursor + nblk >= EROFS_NULL_ADDR) {
		fsf_err(cp->b->log, "image would need more than %u blocks at %s/%s",
			EROFS_NULL_ADDR - 1, cp->b->opts->source, cp->path);
		return -EFBIG;
	}
	if (whole) {
		ret = write_blocks(cp, cp->buf, (size_t)len, cp->cursor * bs);
		if (ret)
			return failed(cp, "cannot write data of", ret);
	}
	/* a digest collision with different bytes keeps the first copy in
	 * the table; this one is stored all the same */
	if (!s && remember(cp, md, len, (uint32_t)cp->cursor))
		return failed(cp, "out of memory for", -ENOMEM);
	set_entry(cp, c, (uint32_t)cp->cursor, cp->dev_id);
	cp->cursor += nblk;
	return 0;
}

static void feed_zeros(struct cpass *cp, uint64_t len)
{
	while (len) {
		size_t k = len < PIECE ? (size_t)len : PIECE;

		EVP_DigestUpdate(cp->file_md, cp->zeros, k);
		len -= k;
	}
}

static int write_file(struct cpass *cp, struct erofs_node *n)
{
	const uint64_t cs = 1ull << n->chunkbits;
	uint64_t nchunks = (n->size + cs - 1) / cs;
	char path[PATH_MAX];
	struct erofs_src src;
	uint8_t probe;
	int ret = 0;

	ret = map_flush(cp, n, 0);
	if (ret)
		return ret;
	ret = erofs_open_source(cp->b, n, path, sizeof(path), &src);
	if (ret)
		return ret;
	cp->path = path;
	if (n->has_digest)
		EVP_DigestInit_ex(cp->file_md, EVP_sha256(), NULL);
	for (uint64_t c = 0; c < nchunks && !ret; c++) {
		uint64_t off = c * cs;
		uint64_t len = n->size - off < cs ? n->size - off : cs;

		ret = map_room(cp, n, c);
		if (ret)
			break;
		if (source_hole(&src, off, len)) {
			set_entry(cp, c, EROFS_NULL_ADDR, 0);
			cp->b->hole_chunks++;
			if (n->has_digest)
				feed_zeros(cp, len);
			continue;
		}
		ret = data_chunk(cp, n, &src, off, len, c);
	}
	if (!ret) {
		ssize_t r = erofs_src_pread(&src, &probe, 1, n->size);

		if (r < 0)
			ret = failed(cp, "cannot read", (int)r);
		else if (r > 0)
			ret = failed(cp, "file grew while reading", -EAGAIN);
	}
	if (!ret)
		ret = map_flush(cp, n, nchunks);
	if (!ret)
		n->placed = true;
	if (!ret && n->has_digest)
		EVP_DigestFinal_ex(cp->file_md, n->digest, NULL);
	erofs_src_close(&src);
	return ret;
}

/*
 * --tar=i: the chunks of N are the blocks of the tar from its data's
 * offset on (device 1, one chunk for the whole file but for files beyond
 * 2^31 blocks); --tar=headerball: holes.  The content is read only for
 * the fingerprint.
 */
static int map_tar_file(struct cpass *cp, struct erofs_node *n)
{
	const struct erofs_build *b = cp->b;
	const bool headerball = b->opts->tar_mode == EROFS_TAR_HEADERBALL;
	const uint64_t cs = 1ull << n->chunkbits;
	uint64_t nchunks = (n->size + cs - 1) / cs;
	uint64_t first = n->tar_off / b->blksz;
	char path[PATH_MAX];
	struct erofs_src src;
	int ret = 0;

	if (!headerball && (n->tar_off % b->blksz ||
	    first + (n->size + b->blksz - 1) / b->blksz >= EROFS_NULL_ADDR)) {
		fsf_err(b->log, "%s: data of %s at byte %llu of the tar cannot be mapped with 32-bit block addresses",
			b->opts->source ? b->opts->source : "(stdin)", n->name,
			(unsigned long long)n->tar_off);
		return -EFBIG;
	}
	ret = map_flush(cp, n, 0);
	for (uint64_t c = 0; c < nchunks && !ret; c++) {
		ret = map_room(cp, n, c);
		if (!ret)
			set_entry(cp, c, headerball ? EROFS_NULL_ADDR :
				  (uint32_t)(first + (c << (n->chunkbits - b->opts->blkszbits))),
				  cp->dev_id);
	}
	if (!ret)
		ret = map_flush(cp, n, nchunks);
	if (ret)
		return ret;
	n->placed = true;
	if (!n->has_digest)
		return 0;
	EVP_DigestInit_ex(cp->file_md, EVP_sha256(), NULL);
	if (headerball) {
		feed_zeros(cp, n->size);
	} else {
		ret = erofs_open_source(cp->b, n, path, sizeof(path), &src);
		if (ret)
			return ret;
		cp->path = path;
		for (uint64_t off = 0; off < n->size && !ret; off += PIECE) {
			size_t k = n->size - off < PIECE ? (size_t)(n->size - off) : PIECE;

			ret = read_at(cp, &src, cp->buf, k, off);
			if (!ret)
				EVP_DigestUpdate(cp->file_md, cp->buf, k);
		}
		erofs_src_close(&src);
	}
	if (!ret)
		EVP_DigestFinal_ex(cp->file_md, n->digest, NULL);
	return ret;
}

int erofs_write_chunked(struct erofs_build *b)
{
	const bool blob = b->opts->blobdev || b->opts->tar_mode == EROFS_TAR_INDEX;
	struct cpass cp = { .b = b, .cursor = b->opts->blobdev ? 0 : b->total_blocks,
			    .out = b->opts->blobdev ? &b->blob : &b->dev,
			    .dev_id = blob ? 1 : 0 };
	int ret = 0;

	cp.buf = malloc(PIECE + b->blksz);
	cp.cmp = malloc(PIECE);
	cp.zeros = calloc(1, PIECE);
	cp.map = malloc(MAP_PIECE * 8u);
	cp.file_md = EVP_MD_CTX_new();
	cp.chunk_md = EVP_MD_CTX_new();
	if (!cp.buf || !cp.cmp || !cp.zeros || !cp.map || !cp.file_md || !cp.chunk_md) {
		fsf_err(b->log, "out of memory for the chunked files");
		ret = -ENOMEM;
	}
	for (size_t i = 0; i < b->count && !ret; i++) {
		struct erofs_node *n = b->order[i];

		if (n->master || !n->chunked)
			continue;
		ret = erofs_tar_index(b) ? map_tar_file(&cp, n) :
					   write_file(&cp, n);
	}
	if (!ret && b->opts->blobdev)
		b->dev_blocks = cp.cursor;
	else if (!ret && !erofs_tar_index(b))
		b->total_blocks = cp.cursor;
	EVP_MD_CTX_free(cp.chunk_md);
	EVP_MD_CTX_free(cp.file_md);
	free(cp.map);
	free(cp.zeros);
	free(cp.cmp);
	free(cp.buf);
	free(cp.tab);
	return ret;
}
