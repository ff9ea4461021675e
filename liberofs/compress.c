// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Compressed files (-z lz4 | lz4hc | lzma | deflate | zstd): cut into
 * extents, each compressed into one physical cluster of at most -C bytes
 * ("destination size" compression fills the pcluster with as much input as
 * fits), or stored raw (PLAIN, one block) where compressing does not save a
 * block.  lz4 and MicroLZMA (liblzma) stop by themselves when the output is
 * full; for raw deflate (libdeflate) and zstd frames (libzstd) the input
 * length is searched for (see squeeze_search).  Their data goes
 * after every other data block, file after file in layout order.
 *
 * Worker threads take files in layout order and compress them into their
 * own buffers; the blocks are written under a turn: file i is written only
 * after file i-1, at the next free block.  A worker whose file's turn has
 * not come keeps it (up to HOLD_MAX bytes) and goes on with the next file,
 * writing what it keeps as the turns come.  A file larger than the buffer
 * is compressed on into a larger one while the worker's hold allows, then
 * takes the turn and writes as it goes.  Addresses thus follow the
 * layout order only, never the thread schedule: the image is the same for
 * any --workers.  The lcluster index (full form: 8 bytes per block of the
 * file) is built once the file's first block is known and kept for the
 * metadata pass; the fingerprint digest is taken over the uncompressed
 * bytes as they are read.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <libdeflate.h>
#include <lz4.h>
#include <lz4hc.h>
#include <limits.h>
#include <lzma.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "erofs/erofs_fs.h"
#include "internal.h"
#include "lz4_destsize.h"

/* Largest decompressed extent: bounds the input window of a worker.  An
 * extent also spans fewer than 2048 lclusters, so that no lookback
 * distance sets the CBLKCNT bit (bit 11 of delta[0]). */
#define MAX_EXTENT	(4u << 20)
/* Compressed bytes a worker holds before it must write. */
#define OUT_FLUSH	(4u << 20)
/* The packed inode is compressed in pieces of this many bytes, each on
 * any worker (a multiple of MAX_EXTENT: where extents reach MAX_EXTENT,
 * the cuts fall where they would without pieces). */
#define PACKED_PIECE	(16ull << 20)
/* ... with lzma, whose pieces cost several seconds each: the last one
 * alone on a core leaves the others idle for less */
#define PACKED_PIECE_LZMA	(8ull << 20)

struct zext {
	uint64_t la;		/* logical start */
	uint32_t len;		/* decompressed bytes */
	uint32_t cblks;		/* pcluster blocks */
	uint64_t rel;		/* pcluster block, from the file's first */
	uint64_t rh;		/* -E dedupe: rolling hash of its first block */
	uint8_t sha[32];	/* -E dedupe: SHA-256 of its LEN bytes */
	uint32_t blk;		/* ref: the earlier pcluster's block */
	bool plain;
	bool frag;		/* in the packed inode (-E fragments) */
	bool inl;		/* inline after the index (-E ztailpacking) */
	bool ref;		/* an earlier file's pcluster (-E dedupe) */
	bool partial;		/* ref: the first len bytes of its content */
};

/* -E dedupe: where the current file's scan for earlier pclusters is */
struct segscan {
	uint64_t at;		/* next window to test (file offset) */
	uint64_t h;		/* its hash, when have */
	bool have;
	uint64_t hit_at;	/* a verified match found ahead */
	const struct erofs_seg *hit;
	uint32_t hit_len;	/* its bytes: hit->len, or fewer (a prefix) */
};

struct cpass {
	struct erofs_build *b;
	struct erofs_node **files;
	size_t nfiles;
	atomic_size_t next;
	atomic_int error;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	size_t turn;		/* the file allowed to write */
	uint64_t cursor;	/* next free block */
	/* the packed inode in pieces (files[] holds it once per piece):
	 * piece k is bytes [k * piece, (k + 1) * piece) */
	uint64_t piece;
	uint64_t pbase;		/* its first block */
	struct zext *pext;	/* its extents so far (pieces in order) */
	size_t npext;
};

struct worker {
	struct cpass *cp;
	uint8_t *in, *out, *z;
	size_t in_cap, out_cap;
	void *hc;		/* lz4hc state (levels other than 9) */
	struct erofs_lz4enc *lz4enc;	/* lz4hc level 9: lz4_destsize.c */
	struct erofs_grams grams;	/* lz4hc: extents of literals only */
	lzma_stream lz;		/* lzma */
	/* the compressors of each -z configuration */
	struct zctx {
		lzma_options_lzma lzopt;		/* lzma */
		struct libdeflate_compressor *dfl;	/* deflate */
		ZSTD_CCtx *zc;				/* zstd */
	} zx[EROFS_MKFS_MAX_ZCFGS];
	unsigned int icur;	/* the configuration of the current file */
	unsigned int alg;	/* ... its on-disk algorithm */
	uint8_t *trial;		/* deflate, zstd: one attempt's output */
	size_t trial_cap;
	EVP_MD_CTX *md;
	struct zext *ext;
	size_t next_ext, ext_cap;
	uint32_t max_extent;
	bool digest;		/* the current file is hashed (fingerprint
				 * or -E dedupe) */
	size_t plan_outlen;	/* the exact test's bytes in out */
	/* the exact test: the file as the probe opened it (PATH its
	 * relative path), taken over by cut_file instead of opening it
	 * again; NULL when there is none */
	struct erofs_src *given;
	const char *given_path;
	bool at_end;		/* the current file's end is confirmed */
	uint8_t *frag;		/* the current file's fragment */
	size_t frag_len, frag_cap;
	struct segscan sc;
	uint8_t *verify;	/* -E dedupe: an earlier extent read again */
	/* files compressed but not written yet (their turn has not come):
	 * the worker goes on with the next file instead of waiting */
	struct held {
		size_t i;
		uint8_t *out;
		size_t outlen;
		struct zext *ext;
		size_t n_ext;
		uint8_t *frag;
		size_t frag_len;
	} *held;
	size_t nheld, held_cap, held_bytes;
};

/* Compressed bytes a worker may hold for files whose turn has not come
 * (held files, and the output so far of a big file it compresses on; see
 * keep_going).  32 MiB lets a worker go on past a big file (a 76 MB table
 * of /usr/share is 20 MB of lz4hc) instead of idling until it is written. */
#define HOLD_MAX	(32u << 20)

bool erofs_zindex_compact(const struct erofs_build *b)
{
	/* 12-bit entries: 4 KiB lclusters only.  -E dedupe: a pcluster of
	 * an earlier file breaks the run of blocks a compact pack counts
	 * from its one block address, so every head has its own (full) */
	return b->blksz == 4096 && !b->opts->legacy_compress &&
	       !b->opts->dedupe;
}

/*
 * Compact indexes with COMPACTED_2B (4 KiB lclusters), as the reader
 * splits them: 4-byte entries up to the first 32-byte boundary after the
 * map header (its offset in the image is the record's, HEAD bytes of
 * inode and xattrs, plus 8-byte alignment and the 8-byte header: the
 * inode itself starts on a 32-byte slot), then 2-byte entries in packs of
 * 16 (32 bytes), the rest in 4-byte packs of 2 (8 bytes).
 */
struct compact_split {
	uint64_t init4, two, end4;	/* lclusters in each part */
};

static struct compact_split compact_split(uint64_t nlc, uint32_t head)
{
	const uint64_t ebase = erofs_round_up(head, 8) +
			       sizeof(struct z_erofs_map_header);
	uint64_t init = ((32 - ebase % 32) / 4) & 7;
	struct compact_split c = { .init4 = nlc };

	if (init < nlc) {
		c.init4 = init;
		c.two = (nlc - init) / 16 * 16;
		c.end4 = nlc - init - c.two;
	}
	return c;
}

static uint64_t compact_bytes(uint64_t nlc, uint32_t head)
{
	struct compact_split c = compact_split(nlc, head);

	return erofs_round_up(c.init4 * 4, 8) + c.two * 2 +
	       erofs_round_up(c.end4 * 4, 8);
}

uint64_t erofs_zindex_size(const struct erofs_build *b,
			   const struct erofs_node *n, uint32_t head)
{
	uint64_t nlc = (n->size + b->blksz - 1) / b->blksz;

	if (n->whole_frag)	/* the map header only */
		return erofs_round_up(head, 8) - head +
		       sizeof(struct z_erofs_map_header);
	if (n->datalayout == EROFS_LAYOUT_COMPRESSED_COMPACT)
		return erofs_round_up(head, 8) - head +
		       sizeof(struct z_erofs_map_header) +
		       compact_bytes(nlc, head);
	return erofs_round_up(head, 8) - head +
	       sizeof(struct z_erofs_map_header) + 8 +
	       nlc * sizeof(struct z_erofs_lcluster_index);
}

unsigned int erofs_compr_alg(const struct erofs_zcfg *z)
{
	switch (z->compr) {
	case EROFS_COMPR_LZMA:
		return Z_EROFS_COMPRESSION_LZMA;
	case EROFS_COMPR_DEFLATE:
		return Z_EROFS_COMPRESSION_DEFLATE;
	case EROFS_COMPR_ZSTD:
		return Z_EROFS_COMPRESSION_ZSTD;
	default:
		return Z_EROFS_COMPRESSION_LZ4;
	}
}

unsigned int erofs_compr_algs(const struct erofs_mkfs_opts *o)
{
	unsigned int m = 0;

	for (unsigned int i = 0; i < o->nzcfgs; i++)
		m |= 1u << erofs_compr_alg(&o->zcfgs[i]);
	return m;
}

/* Largest decompressed extent of the build. */
static uint32_t max_extent(const struct erofs_build *b)
{
	uint32_t m = MAX_EXTENT < 1024u * b->blksz ? MAX_EXTENT : 1024u * b->blksz;

	if (b->opts->max_extent_bytes && b->opts->max_extent_bytes < m)
		m = b->opts->max_extent_bytes;
	return m;
}

/* LZMA dictionary: -z lzma,dictsize=N, else four of the largest
 * pclusters, from 32 KiB to 8 MiB (what the reader allocates per stream;
 * a pcluster's input rarely reaches further back). */
static uint32_t lzma_dict(const struct erofs_build *b, const struct erofs_zcfg *z)
{
	uint64_t d = (uint64_t)b->pclusterblks * b->blksz * 4;

	if (z->dictsize)
		return z->dictsize;
	return d < 32768 ? 32768 : d > Z_EROFS_LZMA_MAX_DICT_SIZE ?
	       Z_EROFS_LZMA_MAX_DICT_SIZE : (uint32_t)d;
}

/* zstd window log: -z zstd,dictsize=N (a power of two), else enough for
 * the largest extent; from 10 to 20 (the reader's limit, 1 MiB). */
static unsigned int zstd_wlog(const struct erofs_build *b,
			      const struct erofs_zcfg *z)
{
	uint32_t want = z->dictsize ? z->dictsize : max_extent(b);
	unsigned int l = 10;

	while (l < 20 && (1u << l) < want)
		l++;
	return l;
}

/* The settings record of on-disk algorithm ALG (the largest dictionary or
 * window among the configurations using it) into REC: its size */
static uint16_t cfg_record(const struct erofs_build *b, unsigned int alg,
			   uint8_t *rec)
{
	const struct erofs_mkfs_opts *o = b->opts;
	uint32_t dict = 0;
	unsigned int wlog = 0;

	for (unsigned int i = 0; i < o->nzcfgs; i++) {
		const struct erofs_zcfg *z = &o->zcfgs[i];

		if (erofs_compr_alg(z) != alg)
			continue;
		if (alg == Z_EROFS_COMPRESSION_LZMA && lzma_dict(b, z) > dict)
			dict = lzma_dict(b, z);
		if (alg == Z_EROFS_COMPRESSION_ZSTD && zstd_wlog(b, z) > wlog)
			wlog = zstd_wlog(b, z);
	}
	switch (alg) {
	case Z_EROFS_COMPRESSION_LZMA: {
		struct z_erofs_lzma_cfgs c = { .dict_size = htole32(dict) };

		memcpy(rec, &c, sizeof(c));
		return sizeof(c);
	}
	case Z_EROFS_COMPRESSION_DEFLATE: {
		struct z_erofs_deflate_cfgs c = { .windowbits = 15 };

		memcpy(rec, &c, sizeof(c));
		return sizeof(c);
	}
	case Z_EROFS_COMPRESSION_ZSTD: {
		struct z_erofs_zstd_cfgs c = {
			.windowlog = (uint8_t)(wlog - 10),
		};

		memcpy(rec, &c, sizeof(c));
		return sizeof(c);
	}
	default: {
		struct z_erofs_lz4_cfgs c = {
			.max_distance = htole16(UINT16_MAX),
			.max_pclusterblks = htole16((uint16_t)b->pclusterblks),
		};

		memcpy(rec, &c, sizeof(c));
		return sizeof(c);
	}
	}
}

size_t erofs_compr_cfgs_encode(const struct erofs_build *b, uint8_t *out)
{
	const unsigned int algs = erofs_compr_algs(b->opts);
	size_t at = 0;

	/* lz4 alone needs them for big pclusters only */
	if (!algs || (algs == 1u << Z_EROFS_COMPRESSION_LZ4 &&
		      b->pclusterblks <= 1))
		return 0;
	/* one record per algorithm of the bitmap, lowest first */
	for (unsigned int alg = 0; alg < 16; alg++) {
		uint8_t rec[14] = { 0 };
		uint16_t len;

		if (!(algs & 1u << alg))
			continue;
		len = cfg_record(b, alg, rec);
		if (out) {
			uint16_t le = htole16(len);

			memset(out + at, 0, erofs_round_up(2u + len, 4));
			memcpy(out + at, &le, 2);
			memcpy(out + at + 2, rec, len);
		}
		at += erofs_round_up(2u + len, 4);
	}
	return at;
}

static int fail(struct cpass *cp, int err)
{
	int expected = 0;

	atomic_compare_exchange_strong(&cp->error, &expected, err);
	pthread_mutex_lock(&cp->lock);
	pthread_cond_broadcast(&cp->cond);
	pthread_mutex_unlock(&cp->lock);
	return err;
}

static void give_turn(struct cpass *cp, uint64_t end);
static int write_held(struct worker *w);
static int build_index(struct worker *w, struct erofs_node *n, uint64_t base,
		       const struct zext *ext, size_t n_ext);
static size_t zindex_len(const struct erofs_build *b, const struct erofs_node *n);

/* Wait until file I may write; its first block is then cp->cursor.  While
 * waiting, the files this worker holds are written as their turn comes. */
static int take_turn(struct worker *w, size_t i, uint64_t *base)
{
	struct cpass *cp = w->cp;
	int err = 0;

	pthread_mutex_lock(&cp->lock);
	while (cp->turn != i && !(err = atomic_load(&cp->error))) {
		if (w->nheld && w->held[0].i == cp->turn) {
			pthread_mutex_unlock(&cp->lock);
			err = write_held(w);
			pthread_mutex_lock(&cp->lock);
			if (err)
				break;
			continue;
		}
		pthread_cond_wait(&cp->cond, &cp->lock);
	}
	if (!err)
		err = atomic_load(&cp->error);
	*base = cp->cursor;
	pthread_mutex_unlock(&cp->lock);
	return err;
}

/* Write piece I of the packed inode (its turn has come) after the pieces
 * before it; the last one builds the inode's index from all their
 * extents. */
static int finish_piece(struct worker *w, size_t i, const uint8_t *out,
			size_t outlen, uint64_t base, uint64_t written,
			const struct zext *ext, size_t n_ext)
{
	struct cpass *cp = w->cp;
	struct erofs_build *b = cp->b;
	struct erofs_node *n = cp->files[i];
	const unsigned int bs = b->blksz;
	uint64_t end;
	int ret = 0;

	if (outlen)
		ret = fsf_dev_pwrite(&b->dev, out, outlen,
				     (base + written) * bs);
	if (ret)
		return fail(cp, ret);
	end = base + written + outlen / bs;
	if (!i)
		cp->pbase = base;
	if (n_ext) {
		struct zext *g = realloc(cp->pext, (cp->npext + n_ext) * sizeof(*g));

		if (!g)
			return fail(cp, -ENOMEM);
		cp->pext = g;
		for (size_t k = 0; k < n_ext; k++) {
			g[cp->npext + k] = ext[k];
			g[cp->npext + k].rel += base - cp->pbase;
		}
		cp->npext += n_ext;
	}
	if (i + 1 == cp->nfiles) {
		n->blkaddr = cp->pbase;
		n->zblocks = (uint32_t)(end - cp->pbase);
		ret = build_index(w, n, cp->pbase, cp->pext, cp->npext);
	}
	give_turn(cp, end);
	return ret ? fail(cp, ret) : 0;
}

/* Write the file that ends a worker's compression (its turn has come):
 * blocks at cp->cursor, index, turn passed on. */
static int finish_file(struct worker *w, size_t i, const uint8_t *out,
		       size_t outlen, uint64_t base, uint64_t written,
		       const struct zext *ext, size_t n_ext,
		       const uint8_t *frag, size_t frag_len)
{
	struct cpass *cp = w->cp;
	struct erofs_build *b = cp->b;
	struct erofs_node *n = cp->files[i], *same = NULL;
	const unsigned int bs = b->blksz;
	int ret = 0;

	if (cp->piece)
		return finish_piece(w, i, out, outlen, base, written, ext,
				    n_ext);
	/* under the turn: fragments and the dedupe table in file order */
	if (frag_len || n->whole_frag) {
		uint8_t sha[32];

		EVP_Digest(frag, frag_len, sha, NULL, EVP_sha256(), NULL);
		ret = erofs_frag_store(b, n, frag, frag_len, sha, &n->fragoff);
		if (ret)
			return fail(cp, ret);
		n->tail_frag = !n->whole_frag;
	}
	/* -E fragments shares identical files too, as erofs-utils' does
	 * (it finds a whole file in the packed inode) */
	if ((b->opts->dedupe || b->opts->fragments) && !written &&
	    !n->whole_frag && n != b->packed)
		same = erofs_dedupe_match(b, n);
	/* a tail inline in one and in a block in the other (the layout
	 * dropped one): the extents differ */
	if (same && (same->ztail != n->ztail || same->fragoff != n->fragoff))
		same = NULL;
	/* its extents are N's only when cut the same way (and decode
	 * with N's algorithm) */
	if (same && (same->zcfg != n->zcfg ||
		     erofs_node_pcl(b, same) != erofs_node_pcl(b, n)))
		same = NULL;
	if (same) {
		b->files_shared++;
		n->blkaddr = same->blkaddr;
		n->zblocks = same->zblocks;
		/* -E dedupe: N's extents may point at pclusters of files
		 * before SAME, in SAME's place: its index is N's */
		if (b->opts->dedupe) {
			uint8_t *zindex;

			ret = erofs_read_zindex(b, same, &zindex);
			if (!ret)
				ret = erofs_place_zindex(b, n, zindex);
			give_turn(cp, base);
			return ret ? fail(cp, ret) : 0;
		}
		give_turn(cp, base);
		/* the same content compresses to the same extents */
		ret = build_index(w, n, same->blkaddr, ext, n_ext);
		return ret ? fail(cp, ret) : 0;
	}
	if (outlen)
		ret = fsf_dev_pwrite(&b->dev, out, outlen,
				     (base + written) * bs);
	if (ret)
		return fail(cp, ret);
	written += outlen / bs;
	n->blkaddr = base;
	n->zblocks = (uint32_t)written;
	/* -E dedupe: its new pclusters for the files after it */
	for (size_t k = 0; b->opts->dedupe && n != b->packed && k < n_ext; k++) {
		const struct zext *x = &ext[k];
		struct erofs_seg sg = {
			.rh = x->rh, .n = n, .la = x->la, .len = x->len,
			.blk = (uint32_t)(base + x->rel), .cblks = x->cblks,
			.plain = x->plain,
		};

		if (x->ref || x->frag || x->inl || x->len < bs)
			continue;
		memcpy(sg.sha, x->sha, sizeof(sg.sha));
		ret = erofs_seg_add(b, &sg);
		if (ret)
			return fail(cp, ret);
	}
	/* -E dedupe: a later file with the same content copies the index,
	 * so it is there before the turn passes */
	if (b->opts->dedupe)
		ret = build_index(w, n, base, ext, n_ext);
	give_turn(cp, base + written);
	if (!b->opts->dedupe)
		ret = build_index(w, n, base, ext, n_ext);
	return ret ? fail(cp, ret) : 0;
}

/* Write the oldest held file (its turn has come). */
static int write_held(struct worker *w)
{
	struct held h = w->held[0];
	uint64_t base;
	int ret;

	pthread_mutex_lock(&w->cp->lock);
	base = w->cp->cursor;
	pthread_mutex_unlock(&w->cp->lock);
	memmove(w->held, w->held + 1, --w->nheld * sizeof(*w->held));
	w->held_bytes -= h.outlen + h.frag_len;
	ret = finish_file(w, h.i, h.out, h.outlen, base, 0, h.ext, h.n_ext,
			  h.frag, h.frag_len);
	free(h.out);
	free(h.ext);
	free(h.frag);
	return ret;
}

/* Write every held file whose turn has come; with WAIT, all of them. */
static int flush_held(struct worker *w, bool wait)
{
	while (w->nheld) {
		uint64_t base;
		bool ready;
		int ret;

		pthread_mutex_lock(&w->cp->lock);
		ready = w->cp->turn == w->held[0].i;
		pthread_mutex_unlock(&w->cp->lock);
		if (!ready && !wait)
			return 0;
		ret = ready ? write_held(w) : take_turn(w, w->held[0].i, &base);
		if (ret)
			return ret;
	}
	return 0;
}

/* Keep H (its buffers now the worker's) until its turn. */
static int hold_take(struct worker *w, const struct held *h)
{
	if (w->nheld == w->held_cap) {
		size_t cap = w->held_cap ? w->held_cap * 2 : 16;
		struct held *g = realloc(w->held, cap * sizeof(*g));

		if (!g)
			return -ENOMEM;
		w->held = g;
		w->held_cap = cap;
	}
	w->held[w->nheld++] = *h;
	w->held_bytes += h->outlen + h->frag_len;
	return 0;
}

/* Keep a compressed file until its turn. */
static int hold(struct worker *w, size_t i, size_t outlen)
{
	struct held h = { .i = i, .outlen = outlen, .n_ext = w->next_ext,
			  .frag_len = w->frag_len };
	int ret;

	h.out = malloc(outlen ? outlen : 1);
	h.ext = malloc(w->next_ext * sizeof(*h.ext) + 1);
	h.frag = malloc(w->frag_len + 1);
	if (!h.out || !h.ext || !h.frag) {
		free(h.out);
		free(h.ext);
		free(h.frag);
		return -ENOMEM;
	}
	if (w->frag_len)
		memcpy(h.frag, w->frag, w->frag_len);
	memcpy(h.out, w->out, outlen);
	memcpy(h.ext, w->ext, w->next_ext * sizeof(*h.ext));
	ret = hold_take(w, &h);
	if (ret) {
		free(h.out);
		free(h.ext);
		free(h.frag);
	}
	return ret;
}

static void give_turn(struct cpass *cp, uint64_t end)
{
	pthread_mutex_lock(&cp->lock);
	cp->cursor = end;
	cp->turn++;
	pthread_cond_broadcast(&cp->cond);
	pthread_mutex_unlock(&cp->lock);
}

static int add_ext(struct worker *w, const struct zext *e)
{
	if (w->next_ext == w->ext_cap) {
		size_t cap = w->ext_cap ? w->ext_cap * 2 : 64;
		struct zext *g = realloc(w->ext, cap * sizeof(*g));

		if (!g)
			return -ENOMEM;
		w->ext = g;
		w->ext_cap = cap;
	}
	w->ext[w->next_ext++] = *e;
	return 0;
}

/* deflate, zstd: compress all of SRC (LEN bytes) into w->trial; returns
 * the size, or a negative errno. */
static long compress_all(struct worker *w, const uint8_t *src, uint32_t len)
{
	size_t c;

	if (w->zx[w->icur].dfl) {
		c = libdeflate_deflate_compress(w->zx[w->icur].dfl, src, len,
						w->trial, w->trial_cap);
		return c ? (long)c : -EOVERFLOW;
	}
	c = ZSTD_compress2(w->zx[w->icur].zc, w->trial, w->trial_cap, src, len);
	if (ZSTD_isError(c))
		return ZSTD_getErrorCode(c) == ZSTD_error_memory_allocation ?
		       -ENOMEM : -EIO;
	return (long)c;
}

/*
 * deflate, zstd (no destination size mode): the longest input, to within
 * SEARCH_TOL bytes, whose compressed stream fits CAP.  Each attempt
 * compresses a prefix whole; the next length is interpolated between the
 * longest prefix that fits and the shortest that does not (the sizes grow
 * with the length, not quite linearly), halving when the interpolation
 * lands on a bound.  The result depends on the data only.  A stream that
 * starts with a zero byte does not fit: the reader takes leading zeros
 * for padding (a raw deflate stream can start so, a zstd frame cannot).
 */
#define SEARCH_TOL	32u
#define SEARCH_MAX	24

static int squeeze_search(struct worker *w, const uint8_t *src, uint32_t len,
			  uint32_t cap, uint32_t *taken)
{
	uint32_t lo = 0, hi = len + 1, m = len < 4 * cap ? len : 4 * cap;
	uint64_t clo = 0, chi = 0;

	for (int it = 0; it < SEARCH_MAX; it++) {
		long c = compress_all(w, src, m);
		uint64_t next;

		if (c < 0)
			return (int)c;
		if ((uint64_t)c <= cap && w->trial[0]) {
			lo = m;
			clo = (uint64_t)c;
			memcpy(w->z, w->trial, (size_t)c);
		} else {
			hi = m;
			chi = (uint64_t)c;
			/* no gain at all: raw blocks do as well */
			if (!lo && chi >= hi)
				break;
		}
		if (lo == len || hi - lo <= SEARCH_TOL)
			break;
		if (hi > len) {		/* everything tried fits */
			next = (uint64_t)lo * cap / clo;
			if (next > len)
				next = len;
			if (next <= lo)
				next = lo + (len - lo + 1) / 2;
		} else {
			next = chi > clo ? lo + (cap - clo) * (hi - lo) /
					   (chi - clo) : lo + (hi - lo) / 2;
			/* keep off the bounds: the interpolation alone
			 * converges from one side only */
			if (next <= lo + SEARCH_TOL / 2 ||
			    next + SEARCH_TOL / 2 >= hi)
				next = lo + (hi - lo) / 2;
		}
		m = (uint32_t)next;
	}
	*taken = lo;
	return (int)clo;
}

/* lzma: MicroLZMA stops when CAP bytes are out. */
static int squeeze_lzma(struct worker *w, const uint8_t *src, uint32_t len,
			uint32_t cap, uint32_t *taken)
{
	lzma_ret r = lzma_microlzma_encoder(&w->lz, &w->zx[w->icur].lzopt);

	if (r != LZMA_OK)
		return r == LZMA_MEM_ERROR ? -ENOMEM : -EINVAL;
	w->lz.next_in = src;
	w->lz.avail_in = len;
	w->lz.next_out = w->z;
	w->lz.avail_out = cap;
	r = lzma_code(&w->lz, LZMA_FINISH);
	if (r != LZMA_STREAM_END)
		return r == LZMA_MEM_ERROR ? -ENOMEM : -EIO;
	*taken = (uint32_t)w->lz.total_in;
	return w->lz.total_in ? (int)w->lz.total_out : 0;
}

/* lz4hc's default level (9, or given as 9) is lz4_destsize.c's encoder:
 * as many bytes per pcluster as liblz4's level 9 for 0.9x its work (bench/
 * RESULTS-erofs-compress.md, session 21); the other levels are liblz4's */
static bool lz4hc_own(const struct erofs_zcfg *z)
{
	return z->level < 0 || z->level == 9;
}

/* Compress as much of SRC (LEN bytes) as fits CAP bytes: returns the
 * compressed size (0: nothing fit, or a negative errno) and the bytes
 * taken in *TAKEN. */
static int squeeze(struct worker *w, const uint8_t *src, uint32_t len,
		   uint32_t cap, uint32_t *taken)
{
	const struct erofs_zcfg *z = &w->cp->b->opts->zcfgs[w->icur];
	int in = (int)len, r;

	*taken = 0;
	if (z->compr == EROFS_COMPR_LZMA)
		return squeeze_lzma(w, src, len, cap, taken);
	if (z->compr == EROFS_COMPR_DEFLATE || z->compr == EROFS_COMPR_ZSTD)
		return squeeze_search(w, src, len, cap, taken);
	if (z->compr == EROFS_COMPR_LZ4HC) {
		/* literals alone cannot save a block: stored raw (the
		 * extent is longer than CAP, so none of the callers'
		 * choices taking all of it applies either) */
		if (len > cap &&
		    erofs_lz4_literals_only(&w->grams, src, len, cap))
			return 0;
		/* level 9: our own encoder (lz4_destsize.c) */
		if (lz4hc_own(z)) {
			r = erofs_lz4enc_destsize(w->lz4enc, src, len, w->z,
						  cap, taken);
			return *taken ? r : 0;
		}
		/*
		 * LZ4_compress_HC_destSize would clear the whole state
		 * (256 KiB of tables) for every pcluster.  The fast reset
		 * moves the stream's index base past the last input
		 * instead, so that every older table entry lies out of
		 * reach (LZ4's documented way to start an independent
		 * block); the bytes out are the same as from a cleared
		 * state.
		 */
		LZ4_resetStreamHC_fast(w->hc, z->level);
		r = LZ4_compress_HC_continue_destSize(w->hc, (const char *)src,
						      (char *)w->z, &in,
						      (int)cap);
	} else
		r = LZ4_compress_destSize((const char *)src, (char *)w->z, &in,
					  (int)cap);
	*taken = r > 0 ? (uint32_t)in : 0;
	return r > 0 ? r : 0;
}

/* One lcluster as the kernel sees it, before encoding. */
struct lent {
	uint8_t type;
	bool eof;		/* the head marking an EOF (no pcluster) */
	uint16_t ofs;		/* HEAD: clusterofs */
	uint16_t d0, d1;	/* NONHEAD: d0 may be CBLKCNT | blocks */
	uint32_t blk;		/* HEAD: pcluster block */
	bool partial;		/* HEAD: PARTIAL_REF (full indexes only) */
};

/*
 * Compact indexes (COMPRESSED_COMPACT with COMPACTED_2B, 4 KiB lclusters):
 * packs of VCNT entries and a 32-bit block, 2 entries of 16 bits in
 * 8 bytes or 16 of 14 bits in 32 bytes, each entry 12 bits of clusterofs
 * or distance and 2 bits of type, packed little-endian from the pack's
 * first bit.  A NONHEAD in a pack's last slot stores its lookahead
 * distance (delta[1]) instead of delta[0]; a HEAD's block is the pack's
 * block plus the pclusters of the heads before it in the pack (a HEAD
 * followed by CBLKCNT counts CBLKCNT blocks, another one block; without
 * big pclusters, plus one).  The pack's block is chosen so that this
 * gives every head its block, then checked.
 */
static uint32_t pack_nblk(const uint16_t *v, int i, bool big)
{
	uint32_t nblk = big ? 0 : 1;

	while (i > 0) {
		uint16_t lo;
		unsigned int type;

		--i;
		lo = v[i] & 0x0fffu;
		type = (v[i] >> 12) & 3u;
		if (type != Z_EROFS_LCLUSTER_TYPE_NONHEAD) {
			++nblk;
			continue;
		}
		if (!big) {
			i -= lo;
			if (i >= 0)
				++nblk;
		} else if (lo & Z_EROFS_LI_D0_CBLKCNT) {
			--i;
			nblk += lo & ~Z_EROFS_LI_D0_CBLKCNT;
		} else {
			i -= lo - 2;
		}
	}
	return nblk;
}

/* One pack of the N (up to VCNT) entries at E into OUT. */
static int encode_pack(const struct lent *e, unsigned int n, unsigned int vcnt,
		       bool big, uint8_t *out)
{
	const unsigned int packsz = vcnt == 2 ? 8 : 32;
	const unsigned int bits = (packsz - 4) * 8 / vcnt;
	uint16_t v[16] = { 0 };
	uint32_t blk = 0;
	int first = -1;

	for (unsigned int i = 0; i < n; i++) {
		const struct lent *x = &e[i];
		uint16_t lo = x->ofs;

		if (x->type == Z_EROFS_LCLUSTER_TYPE_NONHEAD)
			lo = i == vcnt - 1 && !(x->d0 & Z_EROFS_LI_D0_CBLKCNT) ?
			     x->d1 : x->d0;
		else if (first < 0 && !x->eof)
			first = (int)i;
		if (lo > 0x0fffu)
			return -EOVERFLOW;
		v[i] = (uint16_t)(lo | x->type << 12);
	}
	if (first >= 0)
		blk = e[first].blk - pack_nblk(v, first, big);
	for (unsigned int i = 0; i < n; i++) {
		const struct lent *x = &e[i];

		if (x->type != Z_EROFS_LCLUSTER_TYPE_NONHEAD && !x->eof &&
		    blk + pack_nblk(v, (int)i, big) != x->blk)
			return -EPROTO;
	}
	memset(out, 0, packsz);
	for (unsigned int i = 0; i < n; i++)
		for (unsigned int k = 0; k < bits; k++)
			if (v[i] >> k & 1u)
				out[(bits * i + k) / 8] |=
					(uint8_t)(1u << (bits * i + k) % 8);
	blk = htole32(blk);
	memcpy(out + packsz - 4, &blk, 4);
	return 0;
}

/* The NLC entries at E into OUT, split as compact_split says for a record
 * of HEAD bytes before the map header. */
static int encode_compact(const struct lent *e, uint64_t nlc, uint32_t head,
			  bool big, uint8_t *out)
{
	const struct compact_split c = compact_split(nlc, head);
	uint64_t l = 0;
	int ret = 0;

	for (; !ret && l < c.init4; l += 2, out += 8)
		ret = encode_pack(e + l, c.init4 - l < 2 ? 1 : 2, 2, big, out);
	for (; !ret && l < c.init4 + c.two; l += 16, out += 32)
		ret = encode_pack(e + l, 16, 16, big, out);
	for (; !ret && l < nlc; l += 2, out += 8)
		ret = encode_pack(e + l, nlc - l < 2 ? 1 : 2, 2, big, out);
	return ret;
}

/* Bytes of N's inode and xattrs (as laid out) before its map header. */
static uint32_t zindex_head(const struct erofs_node *n)
{
	return (n->extended ? 64u : 32u) + n->xattr_isize;
}

/* Bytes of N's index (map header and lclusters). */
static size_t zindex_len(const struct erofs_build *b, const struct erofs_node *n)
{
	const uint64_t nlc = (n->size + b->blksz - 1) / b->blksz;

	return n->datalayout == EROFS_LAYOUT_COMPRESSED_COMPACT ?
	       8 + compact_bytes(nlc, zindex_head(n)) :
	       16 + nlc * sizeof(struct z_erofs_lcluster_index);
}

/* Encode the index of N from the extents, its data at block BASE. */
static int build_index(struct worker *w, struct erofs_node *n, uint64_t base,
		       const struct zext *ext, size_t n_ext)
{
	struct erofs_build *b = w->cp->b;
	const unsigned int bs = b->blksz;
	const uint64_t nlc = (n->size + bs - 1) / bs;
	const bool big = b->pclusterblks > 1;
	const bool compact = n->datalayout == EROFS_LAYOUT_COMPRESSED_COMPACT;
	/* compact indexes need both big pcluster bits or neither */
	struct z_erofs_map_header h = {
		.h_advise = htole16((compact ? Z_EROFS_ADVISE_COMPACTED_2B : 0) |
				    (!big ? 0 : compact ?
				     Z_EROFS_ADVISE_BIG_PCLUSTER_1 |
				     Z_EROFS_ADVISE_BIG_PCLUSTER_2 :
				     Z_EROFS_ADVISE_BIG_PCLUSTER_1)),
		/* HEAD1 extents decode with the file's configuration */
		.h_algorithmtype = (uint8_t)erofs_compr_alg(&b->opts->zcfgs[n->zcfg]),
		.h_clusterbits = 0,	/* lcluster = block */
	};
	struct lent *e;
	size_t len = zindex_len(b, n);
	uint8_t *buf;
	int ret = 0;

	if (n->whole_frag) {
		/* all 64 bits of the header: bit 63 and the offset */
		uint64_t v = htole64(n->fragoff | 1ull << 63);

		buf = malloc(8);
		if (!buf)
			return -ENOMEM;
		memcpy(buf, &v, 8);
		return erofs_place_zindex(b, n, buf);
	}
	if (n_ext && ext[n_ext - 1].inl) {
		h.h_advise |= htole16(Z_EROFS_ADVISE_INLINE_PCLUSTER);
		h.h_idata_size = htole16((uint16_t)n->inline_size);
	}
	if (n_ext && ext[n_ext - 1].frag) {
		uint32_t off = htole32((uint32_t)n->fragoff);

		h.h_advise |= htole16(Z_EROFS_ADVISE_FRAGMENT_PCLUSTER);
		memcpy(&h, &off, 4);	/* h_fragmentoff */
	}
	e = calloc(nlc, sizeof(*e));
	buf = calloc(1, len);
	if (!buf || !e) {
		free(buf);
		free(e);
		return -ENOMEM;
	}
	memcpy(buf, &h, sizeof(h));
	for (size_t k = 0; k < n_ext; k++) {
		const struct zext *x = &ext[k];
		uint64_t head = x->la / bs, end = x->la + x->len;
		/* the lcluster holding the next head; after the last extent
		 * an EOF inside an lcluster is marked by a head there whose
		 * clusterofs is the EOF (so that lookups before it end the
		 * extent at EOF, not at the lcluster's end) */
		uint64_t next = end / bs;

		e[head].type = x->plain ? Z_EROFS_LCLUSTER_TYPE_PLAIN :
					  Z_EROFS_LCLUSTER_TYPE_HEAD1;
		e[head].ofs = (uint16_t)(x->la % bs);
		e[head].blk = x->ref ? x->blk : (uint32_t)(base + x->rel);
		e[head].partial = x->partial;
		/* a full index keeps the fragment offset's high 32 bits
		 * in the tail head's block address */
		if (x->frag && !compact)
			e[head].blk = 0;
		for (uint64_t l = head + 1; l < next && l < nlc; l++) {
			e[l].type = Z_EROFS_LCLUSTER_TYPE_NONHEAD;
			e[l].ofs = e[head].ofs;
			e[l].d0 = (uint16_t)(l - head);
			if (l == head + 1 && big)
				e[l].d0 = (uint16_t)(Z_EROFS_LI_D0_CBLKCNT | x->cblks);
			e[l].d1 = (uint16_t)(next - l);
		}
		if (end >= n->size && next < nlc && next > head) {
			e[next].type = Z_EROFS_LCLUSTER_TYPE_PLAIN;
			e[next].eof = true;
			e[next].ofs = (uint16_t)(n->size % bs);
		}
	}
	if (compact) {
		ret = encode_compact(e, nlc, zindex_head(n), big, buf + 8);
		if (ret)
			fsf_err(b->log, "%s: internal error encoding its compact index (%s)",
				n->name, strerror(-ret));
	} else {
		struct z_erofs_lcluster_index *ix = (void *)(buf + 16);

		for (uint64_t l = 0; l < nlc; l++) {
			ix[l].di_advise = htole16(e[l].type |
					(e[l].partial ? Z_EROFS_LI_PARTIAL_REF : 0));
			ix[l].di_clusterofs = htole16(e[l].ofs);
			if (e[l].type == Z_EROFS_LCLUSTER_TYPE_NONHEAD) {
				ix[l].di_u.delta[0] = htole16(e[l].d0);
				ix[l].di_u.delta[1] = htole16(e[l].d1);
			} else {
				ix[l].di_u.blkaddr = htole32(e[l].blk);
			}
		}
	}
	free(e);
	if (ret) {
		free(buf);
		return ret;
	}
	return erofs_place_zindex(b, n, buf);
}

/* Read more of the file behind the AVAIL bytes at W->in + *OFF. */
static int refill(struct worker *w, struct erofs_src *s, const char *path, size_t *off,
		  size_t *avail, uint64_t left)
{
	struct cpass *cp = w->cp;
	size_t want;
	ssize_t r;
	bool last;

	if (*off) {
		memmove(w->in, w->in + *off, *avail);
		*off = 0;
	}
	want = w->in_cap - *avail;
	if (want > left)
		want = (size_t)left;
	/* the rest of a file of the tree, with room for a byte more: its
	 * end is confirmed in the same read (see erofs_src_read_last) */
	last = !s->shared && want == left && want < w->in_cap - *avail;
	r = last ? erofs_src_read_last(s, w->in + *avail, want) :
		   erofs_src_read(s, w->in + *avail, want);
	if (r < 0) {
		fsf_err(cp->b->log, "cannot read %s/%s: %s", cp->b->opts->source,
			path, strerror((int)-r));
		return (int)r;
	}
	if ((size_t)r != want) {
		fsf_err(cp->b->log, "%s/%s: file %s while reading",
			cp->b->opts->source, path,
			(size_t)r < want ? "shrank" : "grew");
		return -EAGAIN;
	}
	w->at_end = last;
	if (w->digest)
		EVP_DigestUpdate(w->md, w->in + *avail, want);
	*avail += want;
	return 0;
}

/* Copy the LEFT bytes from W->in + *OFF on (reading more as needed) into
 * the worker's fragment buffer. */
static int take_fragment(struct worker *w, struct erofs_src *s, const char *path,
			 size_t *off, size_t *avail, uint64_t *read_to,
			 uint64_t size, uint64_t left)
{
	if (left > SIZE_MAX / 2)
		return -EFBIG;
	if (w->frag_cap < left) {
		uint8_t *g = realloc(w->frag, (size_t)left);

		if (!g)
			return -ENOMEM;
		w->frag = g;
		w->frag_cap = (size_t)left;
	}
	while (left) {
		size_t take;

		if (!*avail) {
			int ret = refill(w, s, path, off, avail, size - *read_to);

			if (ret)
				return ret;
			*read_to += *avail;
		}
		take = *avail < left ? *avail : (size_t)left;
		memcpy(w->frag + w->frag_len, w->in + *off, take);
		w->frag_len += take;
		*off += take;
		*avail -= take;
		left -= take;
	}
	return 0;
}

/* A squeeze result makes a compressed extent (TAKEN bytes in CSIZE) when
 * that saves a block; else the extent is one raw block.  The plan's tail
 * plan (ztail_plan) and the data pass cut the same extents with it. */
static bool cut_compressed(uint32_t csize, uint32_t taken, unsigned int bs)
{
	return csize && (csize + bs - 1) / bs < (taken + bs - 1) / bs;
}

/* Bytes of the fast test of whether data after a failed attempt is
 * still incompressible (see raw_ahead). */
#define RAW_PROBE	(64u << 10)

/*
 * After an attempt at a window that saved nothing (already compressed
 * data), the next attempt starts only a block later and would compress
 * nearly the same bytes again: with lzma and 1 MiB pclusters, a megabyte
 * of work per 4 KiB block.  So inside the bytes that attempt took, a
 * block is stored raw without another attempt while fast lz4 finds no
 * sixteenth to save in the next RAW_PROBE bytes (at most a pcluster);
 * where it does, attempts resume.  Not for lz4 and lz4hc, whose attempts
 * cost little.  The data alone decides, so the plan cuts the same way.
 */
static bool raw_ahead(struct worker *w, const uint8_t *src, size_t avail,
		      uint32_t pcl)
{
	int len = (int)(avail < RAW_PROBE ? avail : RAW_PROBE), in;

	if ((uint32_t)len > pcl)
		len = (int)pcl;
	in = len;
	return LZ4_compress_destSize((const char *)src, (char *)w->z, &in,
				     len - len / 16) > 0 && in < len;
}

/*
 * -z lzma: runs of incompressible data (already compressed files: .gz,
 * .png, .xz) are stored raw without an lzma attempt.  Per byte, lzma
 * costs most on such data (more than on text) and saves nothing there,
 * while fast lz4 tells it apart at a small fraction of the cost.  A run
 * is at least RAW_RUN bytes of RAW_PROBE chunks in which lz4 finds no
 * sixteenth to save (as raw_ahead); shorter ones stay in the extent, as
 * a cut costs the padding of a partly filled pcluster.  The data alone
 * decides, so the plan and any --workers cut the same way.
 */
#define RAW_RUN		(256u << 10)

static bool chunk_raw(struct worker *w, const uint8_t *src, uint32_t len)
{
	int in = (int)len;

	return LZ4_compress_destSize((const char *)src, (char *)w->z, &in,
				     (int)(len - len / 16)) > 0 && in < (int)len;
}

/* Where the chunks have been probed (file offsets): AT is the next chunk,
 * START the first of the incompressible ones just before it. */
struct rawscan {
	uint64_t at, start;
};

/*
 * The file offset where the first run at or after POS starts (POS when
 * one holds POS), probing on from where the last call stopped through the
 * whole chunks of the LEN bytes at SRC (the data from POS on); POS + LEN
 * when none starts there yet.  A run's end as far as probed is r->at.
 */
static uint64_t raw_run(struct worker *w, struct rawscan *r, uint64_t pos,
			const uint8_t *src, uint32_t len)
{
	if (r->at <= pos)	/* a run found before ended by POS */
		r->at = r->start = pos;
	while (r->at + RAW_PROBE <= pos + len) {
		if (chunk_raw(w, src + (r->at - pos), RAW_PROBE)) {
			r->at += RAW_PROBE;
			continue;
		}
		if (r->at - r->start >= RAW_RUN)
			break;
		r->at += RAW_PROBE;
		r->start = r->at;
	}
	if (r->at - r->start < RAW_RUN)
		return pos + len;
	return r->start > pos ? r->start : pos;
}

/*
 * -E dedupe: the first window in [POS, POS + WANT) where an earlier
 * pcluster's content starts, compared byte for byte: all of it (ending by
 * LIMIT), or else the longest prefix of at least SEG_MIN_PARTIAL blocks
 * among the candidates (a compressed pcluster's: a raw one is whole).
 * W->in + OFF holds the AVAIL bytes from POS on.  Returns 1 (w->sc.hit
 * at w->sc.hit_at), 0 (none up to where AVAIL allows; the scan goes on
 * from there), 2 (a candidate needs bytes past AVAIL: refill and call
 * again) or -errno.
 */
static int find_match(struct worker *w, uint64_t pos, size_t off,
		      size_t avail, uint32_t want, uint64_t limit)
{
	struct segscan *sc = &w->sc;
	struct erofs_build *b = w->cp->b;
	const uint8_t *buf = w->in + off;
	const unsigned int bs = b->blksz;
	size_t end = avail < bs ? 0 : avail - bs + 1;

	if (sc->hit && sc->hit_at >= pos)
		return 1;
	sc->hit = NULL;
	if (sc->at < pos) {
		sc->at = pos;
		sc->have = false;
	}
	if (end > want)
		end = want;
	for (;;) {
		size_t i = (size_t)(sc->at - pos), cur = 0;
		const struct erofs_seg *e, *best = NULL;
		uint32_t best_len = 0;

		if (!erofs_seg_scan(b, buf, avail, &i, end, &sc->h, &sc->have)) {
			sc->at = pos + i;
			return 0;
		}
		sc->at = pos + i;
		while ((e = erofs_seg_next(b, sc->h, &cur))) {
			uint64_t room = limit - sc->at;
			uint32_t len = room < e->len ? (uint32_t)room : e->len;
			uint32_t common;
			int r;

			if (len < e->len &&
			    (e->plain || len < SEG_MIN_PARTIAL * bs))
				continue;
			/* a compressed pcluster decodes with the algorithm
			 * of the file it is in: shared only between files
			 * of one algorithm (a raw one with any) */
			if (!e->plain &&
			    erofs_compr_alg(&b->opts->zcfgs[e->n->zcfg]) != w->alg)
				continue;
			if (i + len > avail)
				return 2;
			if (!w->verify && !(w->verify = malloc(w->max_extent)))
				return -ENOMEM;
			r = erofs_seg_common(b, e, buf + i, len, w->verify,
					     &common);
			if (r < 0)
				return r;
			if (common == e->len) {
				best = e;
				best_len = common;
				break;
			}
			if (!e->plain && common >= SEG_MIN_PARTIAL * bs &&
			    common > best_len) {
				best = e;
				best_len = common;
			}
		}
		if (best) {
			sc->hit = best;
			sc->hit_len = best_len;
			sc->hit_at = sc->at;
			return 1;
		}
		erofs_seg_step(b, buf, avail, &i, &sc->h, &sc->have);
		sc->at = pos + i;
	}
}

static void drop_hit(struct worker *w)
{
	w->sc.at = w->sc.hit_at + 1;
	w->sc.have = false;
	w->sc.hit = NULL;
}

/*
 * -E dedupe: squeeze the GAP bytes at SRC before a match (GAP >= one
 * block).  Every extent but the last starts a new lcluster (one head per
 * lcluster), so the piece left before the match must be none or at least
 * a block: else the extent is cut a block shorter, or, when the gap is
 * under two blocks, the match is dropped and the extent cut from all of
 * WANT as without it.
 */
static int squeeze_before(struct worker *w, const uint8_t *src, uint32_t want,
			  uint32_t gap, uint32_t cap, uint32_t *taken)
{
	const unsigned int bs = w->cp->b->blksz;
	int r = squeeze(w, src, gap, cap, taken);
	uint32_t len;

	if (r < 0)
		return r;
	len = cut_compressed((uint32_t)r, *taken, bs) ? *taken : bs;
	if (len == gap || gap - len >= bs)
		return r;
	if (gap >= 2 * bs)
		return squeeze(w, src, gap - bs, cap, taken);
	drop_hit(w);
	return squeeze(w, src, want, cap, taken);
}

/* What cut_file does with the extents it cuts. */
enum cut_mode {
	CUT_WRITE,	/* the data pass: written, indexed */
	CUT_ZTAIL,	/* the -E ztailpacking plan: the last one found */
	CUT_COUNT,	/* the plan's exact test: counted in w->ext only */
};

/*
 * A big file's first OUTLEN compressed bytes are in w->out, its turn has
 * not come (the files before it are still being compressed): rather than
 * wait, compress on while those bytes, the next OUT_FLUSH and what the
 * worker holds stay within HOLD_MAX (the other workers compress the files
 * before it meanwhile, and after it into their hold).  Held files whose
 * turn came are written first.  Beyond HOLD_MAX it waits for its turn.
 */
static bool keep_going(struct worker *w, size_t i, size_t outlen)
{
	bool ready;

	if (flush_held(w, false))
		return false;	/* the error is in cp->error: take_turn sees it */
	pthread_mutex_lock(&w->cp->lock);
	ready = w->cp->turn == i;
	pthread_mutex_unlock(&w->cp->lock);
	return !ready &&
	       w->held_bytes + outlen + OUT_FLUSH <= HOLD_MAX;
}

/* Room in w->out for OUT_FLUSH more bytes after OUTLEN (and the extent
 * that crosses it). */
static int grow_out(struct worker *w, size_t outlen)
{
	size_t need = outlen + OUT_FLUSH + MAX_EXTENT +
		      (size_t)w->cp->b->pclusterblks * w->cp->b->blksz;
	uint8_t *g;

	if (need <= w->out_cap)
		return 0;
	g = realloc(w->out, need);
	if (!g)
		return -ENOMEM;
	w->out = g;
	w->out_cap = need;
	return 0;
}

/*
 * The exact test (plan_blocks) compresses a file in doubt as the data pass
 * would.  When it pays, its output and extents are kept in the node
 * (within ZKEPT_MAX bytes for all of them) and the data pass writes them
 * instead of compressing the file again; the digest was taken by the
 * test.  The bytes are the same either way: which files are kept
 * depends on timing, the image does not.  Not with -E dedupe, fragments
 * or ztailpacking, whose data pass cuts differently from the test.
 */
#define ZKEPT_MAX (24u << 20)

/* Keep the test's OUTLEN bytes in w->out and its extents for N. */
static void zkept_keep(struct worker *w, struct erofs_node *n, size_t outlen)
{
	struct erofs_build *b = w->cp->b;
	struct erofs_zkept *k;

	if (b->opts->dedupe || b->opts->fragments || b->opts->ztailpacking ||
	    n->size > OUT_FLUSH || !outlen)
		return;
	if (atomic_fetch_add(&b->zkept_bytes, outlen) + outlen > ZKEPT_MAX) {
		atomic_fetch_sub(&b->zkept_bytes, outlen);
		return;
	}
	k = calloc(1, sizeof(*k));
	if (k) {
		k->out = malloc(outlen);
		k->ext = malloc(w->next_ext * sizeof(*k->ext) + 1);
	}
	if (!k || !k->out || !k->ext) {	/* compressed again instead */
		if (k) {
			free(k->out);
			free(k->ext);
		}
		free(k);
		atomic_fetch_sub(&b->zkept_bytes, outlen);
		return;
	}
	memcpy(k->out, w->out, outlen);
	memcpy(k->ext, w->ext, w->next_ext * sizeof(*k->ext));
	k->outlen = outlen;
	k->n_ext = w->next_ext;
	n->zkept = k;
}

/* The data pass for file I, whose compressed bytes and extents H are
 * known (the exact test's, or a file's of the same content): as the end
 * of cut_file, with H's buffers handed over. */
static int write_given(struct worker *w, size_t i, struct held h)
{
	struct cpass *cp = w->cp;
	uint64_t base;
	bool ready;
	int ret;

	pthread_mutex_lock(&cp->lock);
	ready = cp->turn == i;
	base = cp->cursor;
	pthread_mutex_unlock(&cp->lock);
	if (!ready || w->nheld) {
		ret = hold_take(w, &h);
		if (ret) {
			free(h.out);
			free(h.ext);
		} else if (w->held_bytes > HOLD_MAX) {
			ret = flush_held(w, true);
		} else {
			ret = flush_held(w, false);
		}
		return ret ? fail(cp, ret) : 0;
	}
	ret = finish_file(w, i, h.out, h.outlen, base, 0, h.ext, h.n_ext,
			  NULL, 0);
	free(h.out);
	free(h.ext);
	return ret;
}

/* The data pass for file I, whose bytes the test kept. */
static int write_kept(struct worker *w, size_t i, struct erofs_node *n)
{
	struct erofs_zkept *k = n->zkept;
	struct held h = { .i = i, .out = k->out, .outlen = k->outlen,
			  .ext = k->ext, .n_ext = k->n_ext };

	n->zkept = NULL;
	free(k);
	atomic_fetch_sub(&w->cp->b->zkept_bytes, h.outlen);
	return write_given(w, i, h);
}

/* A file of a group (zreuse.c) read whole into w->in (its digest taken,
 * the reading confirmed at its end): the bytes of an earlier file of the
 * same content, written as file I's, when there are (*TOOK). */
static int write_reused(struct worker *w, size_t i, struct erofs_node *n,
			bool *took)
{
	struct held h = { .i = i };
	size_t ext_bytes;
	void *ext;

	*took = erofs_zreuse_take(w->cp->b, n, &h.out, &h.outlen, &ext,
				  &ext_bytes);
	if (!*took)
		return 0;
	erofs_zreuse_done(w->cp->b, n, NULL, 0, NULL, 0);
	h.ext = ext;
	h.n_ext = ext_bytes / sizeof(*h.ext);
	return write_given(w, i, h);
}

/*
 * Cut N into extents and compress them: the data pass (file I of the
 * pass), or in a plan mode the same cuts, writing nothing: the
 * -E ztailpacking plan finds the last extent (see ztail_plan), the exact
 * test leaves the extents in w->ext to count their blocks (see
 * plan_blocks).
 */
static int cut_file(struct worker *w, size_t i, struct erofs_node *n,
		    enum cut_mode mode)
{
	const bool plan = mode != CUT_WRITE;
	struct cpass *cp = w->cp;
	struct erofs_build *b = cp->b;
	const unsigned int bs = b->blksz;
	const uint32_t pcl = erofs_node_pcl(b, n) * bs;
	uint64_t pos = 0, read_to = 0, base = 0, written = 0, end = n->size;
	uint64_t raw_until = 0;	/* see raw_ahead */
	struct rawscan rs = { 0 };	/* see raw_run */
	size_t off = 0, avail = 0, outlen = 0;
	const enum erofs_compr compr = b->opts->zcfgs[n->zcfg].compr;
	const bool slow = compr != EROFS_COMPR_LZ4 && compr != EROFS_COMPR_LZ4HC;
	const bool lzma = compr == EROFS_COMPR_LZMA;	/* see raw_run */
	/* a piece of the packed inode is written whole under its turn */
	size_t flush_at = cp->piece ? SIZE_MAX : OUT_FLUSH;
	bool turn = false;
	char path[PATH_MAX];
	uint8_t probe;
	struct erofs_src s;
	/* the packed inode's own tail is no fragment */
	const bool frags = b->opts->fragments && n != b->packed;
	/* -E dedupe: extents of earlier files are found by content, so the
	 * file is cut under the turn, in file order.  Not in a file with an
	 * inline tail: its extents must end where the plan's did */
	const bool seg = !plan && b->opts->dedupe && n != b->packed && !n->ztail;
	int ret = 0;

	if (!plan && n->zkept)
		return write_kept(w, i, n);
	if (n == b->packed) {
		s = (struct erofs_src){ .fd = b->packed_fd, .shared = true,
					.len = n->size };
		snprintf(path, sizeof(path), "%s", n->name);
	} else if (plan && w->given) {
		s = *w->given;
		snprintf(path, sizeof(path), "%s", w->given_path);
		w->given = NULL;
	} else {
		ret = erofs_open_source(b, n, path, sizeof(path), &s);
	}
	if (ret)
		return ret;
	if (cp->piece && !plan) {
		pos = read_to = s.pos = i * cp->piece;
		if (n->size - pos > cp->piece)
			end = pos + cp->piece;
	}
	if (!s.shared && n->size > EROFS_FADV_MIN)
		posix_fadvise(s.fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	/* the exact test takes the digest too, for its kept bytes (see
	 * zkept_keep) */
	w->digest = plan ? mode == CUT_COUNT && b->opts->digest_name :
		    (n->has_digest || n->zgroup ||
		     ((b->opts->dedupe || b->opts->fragments) && n != b->packed));
	if (w->digest)
		EVP_DigestInit_ex(w->md, EVP_sha256(), NULL);
	w->next_ext = 0;
	w->frag_len = 0;
	w->at_end = false;
	w->sc = (struct segscan){ 0 };
	w->icur = n->zcfg;
	w->alg = erofs_compr_alg(&b->opts->zcfgs[n->zcfg]);
	if (seg) {
		ret = take_turn(w, i, &base);
		turn = !ret;
	}
	if (!plan && n->zgroup) {
		/* its content may be an earlier file's (zreuse.c): read
		 * whole (it fits w->in) for the digest that tells */
		ret = refill(w, &s, path, &off, &avail, end);
		read_to = avail;
		if (!ret && w->at_end) {
			bool took;

			EVP_DigestFinal_ex(w->md, n->digest, NULL);
			w->digest = false;
			ret = write_reused(w, i, n, &took);
			if (took) {
				erofs_src_close(&s);
				return ret;
			}
		}
		if (ret) {
			erofs_src_close(&s);
			return fail(cp, ret);
		}
	}
	while (pos < end && !ret) {
		uint64_t left = end - pos;
		uint32_t want = left < w->max_extent ? (uint32_t)left : w->max_extent;
		uint32_t taken = 0, cblks, csize;
		uint64_t run = UINT64_MAX;
		struct zext e = { .la = pos };
		int r;

		if (n->ztail && pos == n->ztail_la) {
			/* the tail, inline: its bytes are in the tail
			 * spool since the plan; read through for the digest */
			ret = take_fragment(w, &s, path, &off, &avail,
					    &read_to, n->size, left);
			w->frag_len = 0;
			if (ret)
				break;
			e.len = (uint32_t)left;
			e.cblks = 1;
			e.inl = true;
			e.plain = n->ztail_plain;
			e.rel = written + outlen / bs;
			ret = add_ext(w, &e);
			pos = n->size;
			break;
		}
		if (frags && (n->whole_frag || left <= pcl)) {
			/* the rest goes to the packed inode */
			ret = take_fragment(w, &s, path, &off, &avail,
					    &read_to, n->size, n->size - pos);
			if (ret)
				break;
			e.len = (uint32_t)(n->size - pos);
			e.cblks = 1;
			e.frag = true;
			e.rel = written + outlen / bs;
			ret = add_ext(w, &e);
			pos = n->size;
			break;
		}

		if (avail < want) {
			ret = refill(w, &s, path, &off, &avail, end - read_to);
			if (ret)
				break;
			read_to = pos + avail;
		}
		r = seg ?
		    find_match(w, pos, off, avail, want, end) : 0;
		if (r == 2 && read_to < end) {
			ret = refill(w, &s, path, &off, &avail, end - read_to);
			if (ret)
				break;
			read_to = pos + avail;
			r = find_match(w, pos, off, avail, want, end);
		}
		if (r < 0 || r == 2) {
			fsf_err(b->log, "%s/%s: looking for shared extents: %s",
				b->opts->source, path,
				strerror(r < 0 ? -r : EPROTO));
			ret = r < 0 ? r : -EPROTO;
			break;
		}
		if (r == 1 && w->sc.hit_at == pos) {
			/* an earlier file's pcluster holds the next bytes */
			const struct erofs_seg *h = w->sc.hit;

			e.len = w->sc.hit_len;
			e.cblks = h->cblks;
			e.plain = h->plain;
			e.ref = true;
			e.partial = e.len < h->len;
			e.blk = h->blk;
			w->sc.hit = NULL;
			b->segs_shared++;
			ret = add_ext(w, &e);
			pos += e.len;
			off += e.len;
			avail -= e.len;
			continue;
		}
		if (r == 1 && w->sc.hit_at - pos < bs)
			drop_hit(w);	/* no room for an extent before it */
		if (lzma && !w->sc.hit && want > bs &&
		    (run = raw_run(w, &rs, pos, w->in + off,
				   avail < want ? (uint32_t)avail : want)) <
		    pos + bs)
			r = 0;		/* in a run: raw, one block */
		else if (!w->sc.hit && pos < raw_until && want > bs &&
			 raw_ahead(w, w->in + off, avail, pcl))
			r = 0;		/* stored raw, one block */
		else if (lzma && !w->sc.hit && want > bs && run < pos + want) {
			want = (uint32_t)(run - pos);	/* ends where one starts */
			r = squeeze(w, w->in + off, want, pcl, &taken);
		} else
			r = w->sc.hit ? squeeze_before(w, w->in + off, want,
						       (uint32_t)(w->sc.hit_at - pos),
						       pcl, &taken) :
					squeeze(w, w->in + off, want, pcl, &taken);
		if (r < 0) {
			fsf_err(b->log, "%s/%s: compressing: %s", b->opts->source,
				path, strerror(-r));
			ret = r;
			break;
		}
		csize = (uint32_t)r;
		cblks = (csize + bs - 1) / bs;
		if (slow && taken > bs && !cut_compressed(csize, taken, bs))
			raw_until = pos + taken;
		if (mode == CUT_ZTAIL && want == left) {
			/* the last extent: inline when it packs below a block
			 * or is a raw tail under one */
			bool packs = csize && taken == left && csize < bs &&
				     csize < left;

			if (packs || left < bs) {
				n->ztail = true;
				n->ztail_la = pos;
				n->ztail_plain = !packs;
				n->inline_size = packs ? csize : (uint32_t)left;
				ret = erofs_tail_spill(b, n, packs ? w->z :
						       w->in + off);
				break;
			}
		}
		if (frags && taken == left && csize % bs) {
			/* the rest fits one partly filled pcluster: packed
			 * with the other fragments, it costs less */
			ret = take_fragment(w, &s, path, &off, &avail,
					    &read_to, n->size, left);
			if (ret)
				break;
			e.len = (uint32_t)left;
			e.cblks = 1;
			e.frag = true;
			e.rel = written + outlen / bs;
			ret = add_ext(w, &e);
			pos = n->size;
			break;
		}
		if (cut_compressed(csize, taken, bs)) {
			/* zeros first: the data ends the pcluster */
			memset(w->out + outlen, 0, cblks * bs - csize);
			memcpy(w->out + outlen + cblks * bs - csize, w->z, csize);
			e.len = taken;
			e.cblks = cblks;
		} else {
			e.len = want < bs ? want : bs;
			e.cblks = 1;
			e.plain = true;
			memcpy(w->out + outlen, w->in + off, e.len);
			memset(w->out + outlen + e.len, 0, bs - e.len);
		}
		e.rel = written + outlen / bs;
		if (b->opts->dedupe && n != b->packed && e.len >= bs) {
			e.rh = erofs_seg_hash(b, w->in + off);
			erofs_seg_digest(w->in + off, e.len, e.sha);
		}
		outlen += (size_t)e.cblks * bs;
		ret = add_ext(w, &e);
		pos += e.len;
		off += e.len;
		avail -= e.len;
		if (ret || outlen < flush_at || pos >= end)
			continue;
		if (plan) {	/* nothing is written */
			outlen = 0;
			continue;
		}
		/* a big file: write as it goes, holding the turn; while the
		 * turn has not come, go on into a larger buffer as long as
		 * the worker's hold allows (see keep_going) */
		if (!turn && keep_going(w, i, outlen)) {
			ret = grow_out(w, outlen);
			flush_at = outlen + OUT_FLUSH;
			continue;
		}
		if (!turn) {
			ret = take_turn(w, i, &base);
			turn = !ret;
		}
		flush_at = OUT_FLUSH;
		if (!ret)
			ret = fsf_dev_pwrite(&b->dev, w->out, outlen,
					     (base + written) * bs);
		written += outlen / bs;
		outlen = 0;
	}
	if (!ret && end == n->size && !w->at_end) {
		ssize_t r = erofs_src_read(&s, &probe, 1);

		if (r) {
			fsf_err(b->log, "%s/%s: %s", b->opts->source, path,
				r < 0 ? strerror((int)-r) : "file grew while reading");
			ret = r < 0 ? (int)r : -EAGAIN;
		}
	}
	erofs_src_close(&s);
	if (plan && !ret && mode == CUT_COUNT && w->digest)
		EVP_DigestFinal_ex(w->md, n->digest, NULL);
	if (plan && !ret && mode == CUT_COUNT)
		w->plan_outlen = outlen;
	if (plan)
		return ret;
	if (ret)
		return fail(cp, ret);
	if (w->digest)
		EVP_DigestFinal_ex(w->md, n->digest, NULL);
	if (n->zgroup)	/* its bytes for the files after it */
		erofs_zreuse_done(b, n, written ? NULL : w->out, outlen,
				  w->ext, w->next_ext * sizeof(*w->ext));
	if (!turn) {
		bool ready;

		pthread_mutex_lock(&cp->lock);
		ready = cp->turn == i;
		base = cp->cursor;
		pthread_mutex_unlock(&cp->lock);
		if (!ready || w->nheld) {
			/* not its turn yet: keep it and go on */
			ret = hold(w, i, outlen);
			if (!ret && w->held_bytes > HOLD_MAX)
				ret = flush_held(w, true);
			else if (!ret)
				ret = flush_held(w, false);
			return ret ? fail(cp, ret) : 0;
		}
	}
	return finish_file(w, i, w->out, outlen, base, written, w->ext,
			   w->next_ext, w->frag, w->frag_len);
}

static void *run(void *arg)
{
	struct worker *w = arg;
	struct cpass *cp = w->cp;

	for (;;) {
		size_t i = atomic_fetch_add(&cp->next, 1);

		if (i >= cp->nfiles || atomic_load(&cp->error))
			break;
		if (cut_file(w, i, cp->files[i], CUT_WRITE))
			return NULL;
	}
	if (flush_held(w, true))
		fail(cp, -EIO);
	return NULL;
}

/* the compressor of configuration I */
static int zctx_init(struct worker *w, unsigned int i)
{
	const struct erofs_build *b = w->cp->b;
	const struct erofs_zcfg *z = &b->opts->zcfgs[i];
	struct zctx *x = &w->zx[i];
	size_t cap = 0;

	if (z->compr == EROFS_COMPR_LZMA) {
		int l = z->level < 0 ? 6 : z->level;
		uint32_t preset = l >= 100 ? (uint32_t)(l - 100) | LZMA_PRESET_EXTREME :
				  (uint32_t)l;

		if (lzma_lzma_preset(&x->lzopt, preset))
			return -EINVAL;
		x->lzopt.dict_size = lzma_dict(b, z);
	} else if (z->compr == EROFS_COMPR_DEFLATE) {
		x->dfl = libdeflate_alloc_compressor(z->level < 0 ? 1 : z->level);
		if (!x->dfl)
			return -ENOMEM;
		cap = libdeflate_deflate_compress_bound(x->dfl, w->max_extent);
	} else if (z->compr == EROFS_COMPR_ZSTD) {
		x->zc = ZSTD_createCCtx();
		if (!x->zc ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(x->zc, ZSTD_c_compressionLevel,
							z->level < 0 ? 3 : z->level)) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(x->zc, ZSTD_c_windowLog,
							(int)zstd_wlog(b, z))) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(x->zc, ZSTD_c_checksumFlag, 0)))
			return -ENOMEM;
		cap = ZSTD_compressBound(w->max_extent);
	} else if (z->compr == EROFS_COMPR_LZ4HC) {
		if (lz4hc_own(z) && !w->lz4enc) {
			/* its tables are never cleared (squeeze) */
			w->lz4enc = erofs_lz4enc_new(EROFS_LZ4ENC_ATTEMPTS);
			if (!w->lz4enc)
				return -ENOMEM;
		} else if (!lz4hc_own(z) && !w->hc) {
			w->hc = malloc((size_t)LZ4_sizeofStateHC());
			if (!w->hc)
				return -ENOMEM;
			/* once in full: later pclusters reset it cheaply
			 * (squeeze) */
			LZ4_initStreamHC(w->hc, LZ4_sizeofStateHC());
		}
		/* pclusters above 64 KiB are left to the compressor (the
		 * check would rarely pass over so many bytes) */
		if (!w->grams.val &&
		    erofs_grams_init(&w->grams, b->pclusterblks * b->blksz <
					       (64u << 10) ?
					       b->pclusterblks * b->blksz :
					       64u << 10))
			return -ENOMEM;
	}
	if (cap > w->trial_cap)
		w->trial_cap = cap;
	return 0;
}

static int worker_init(struct worker *w, struct cpass *cp)
{
	uint32_t pcl = cp->b->pclusterblks * cp->b->blksz;
	int ret;

	memset(w, 0, sizeof(*w));
	w->cp = cp;
	w->lz = (lzma_stream)LZMA_STREAM_INIT;
	w->max_extent = max_extent(cp->b);
	for (unsigned int i = 0; i < cp->b->opts->nzcfgs; i++) {
		ret = zctx_init(w, i);
		if (ret)
			return ret;
	}
	if (w->trial_cap) {
		w->trial = malloc(w->trial_cap);
		if (!w->trial)
			return -ENOMEM;
	}
	w->in_cap = 2u * MAX_EXTENT;
	w->out_cap = (cp->piece > OUT_FLUSH ? cp->piece : OUT_FLUSH) +
		     MAX_EXTENT + pcl;
	w->in = malloc(w->in_cap);
	w->out = malloc(w->out_cap);
	w->z = malloc(pcl > RAW_PROBE ? pcl : RAW_PROBE);	/* see chunk_raw */
	w->md = EVP_MD_CTX_new();
	if (!w->in || !w->out || !w->z || !w->md)
		return -ENOMEM;
	return 0;
}

static void worker_free(struct worker *w)
{
	free(w->in);
	free(w->out);
	free(w->z);
	free(w->hc);
	erofs_lz4enc_free(w->lz4enc);
	erofs_grams_free(&w->grams);
	lzma_end(&w->lz);
	for (unsigned int i = 0; i < EROFS_MKFS_MAX_ZCFGS; i++) {
		if (w->zx[i].dfl)
			libdeflate_free_compressor(w->zx[i].dfl);
		ZSTD_freeCCtx(w->zx[i].zc);
	}
	free(w->trial);
	free(w->ext);
	free(w->frag);
	free(w->verify);
	for (size_t k = 0; k < w->nheld; k++) {
		free(w->held[k].out);
		free(w->held[k].ext);
		free(w->held[k].frag);
	}
	free(w->held);
	EVP_MD_CTX_free(w->md);
}

/*
 * Plan: which files to compress.  The inode's size depends on it and is
 * fixed before any data is written, so the choice is made from samples
 * compressed with fast lz4: a small file (up to PROBE) whole, a larger one
 * from three windows (start, middle, end).  A sample either settles it or
 * sends the file to the exact test (plan_blocks), which cuts and
 * compresses it as the data pass will and compresses it when its
 * pclusters and index take fewer bytes than the flat layout with its
 * inline tail (erofs-utils compresses every file and falls back to flat
 * when no block is saved: the exact test keeps flat what it would, and
 * costs a second compression of the files in doubt only).
 *  - a small file: compressed when the sample saves two blocks and a
 *    quarter block, flat when even a third better than the sample it
 *    would not save a block, else tested;
 *  - a larger one: compressed when a window shrinks by 1/8 (incompressible
 *    extents of a compressed file are stored raw at little cost), flat
 *    when none shrinks, else tested (compressed above TEST_MAX);
 *  - with -E fragments or ztailpacking (which store the tail apart): lz4hc
 *    counted 1/8 better than the sample, compressed when any window, or
 *    the small file, then shrinks by 1/8.
 * Already compressed data (images, archives) thus stays flat with its
 * tail inlined and costs no more than in an uncompressed image.  The
 * choice depends on the content only.
 */
#define PROBE (64u << 10)
#define WINDOW (32u << 10)

struct plan {
	struct erofs_build *b;
	struct erofs_node **files;
	size_t nfiles;
	atomic_size_t next;
	atomic_int error;
	/* the early plan (erofs_plan_early_start): FILES is a queue the
	 * scan appends to, under LOCK; DONE when it has seen every file */
	bool queued, done;
	size_t head, cap;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t *tids;
	unsigned int started;
};

/* fast lz4's size of LEN bytes at IN (LEN when it does not shrink) */
static uint64_t lz4_sample(const uint8_t *in, uint32_t len, uint8_t *z, int zcap)
{
	int c = LZ4_compress_default((const char *)in, (char *)z, (int)len, zcap);

	return c > 0 ? (uint64_t)c : len;
}

/* what the probe tells of a file */
enum verdict { FLAT, TEST, COMPRESS };

/* A small file (SIZE bytes, its fast lz4 sample C): see above. */
static enum verdict small_verdict(uint64_t size, uint64_t c, unsigned int bs)
{
	const uint64_t blks = (size + bs - 1) / bs;
	const uint64_t cblks = (c + bs - 1) / bs, best = c * 2 / 3;

	if (cblks + 2 <= blks && cblks * bs + bs / 4 <= size)
		return COMPRESS;
	return (best + bs - 1) / bs < blks ? TEST : FLAT;
}

/* A larger file's window (R bytes, its sample C); the exact test for
 * files up to TEST_MAX only. */
#define TEST_MAX (4u << 20)

static enum verdict window_verdict(uint64_t size, uint64_t r, uint64_t c)
{
	if (c * 8 <= r * 7)
		return COMPRESS;
	if (c >= r)
		return FLAT;
	return size <= TEST_MAX ? TEST : COMPRESS;
}

/* The probe of N; a file it sends to the exact test (*V == TEST) is left
 * open in *SP (PATH, of PSIZE bytes, gets its relative path) for the test
 * to read from its start, as the data pass would. */
static int probe(struct plan *p, struct erofs_node *n, uint8_t *in,
		 uint8_t *z, int zcap, enum verdict *v, struct erofs_src *sp,
		 char *path, size_t psize)
{
	const unsigned int bs = p->b->blksz;
	uint64_t offs[3] = { 0, n->size / 2 / bs * bs, n->size - WINDOW };
	struct erofs_src s;
	int ret = erofs_open_source(p->b, n, path, psize, &s);

	*v = FLAT;
	if (ret)
		return ret;
	for (int k = 0; k < (n->size <= PROBE ? 1 : 3); k++) {
		uint32_t want = n->size <= PROBE ? (uint32_t)n->size : WINDOW;
		ssize_t r = erofs_src_pread(&s, in, want, offs[k]);
		uint64_t c;

		if (r < 0) {
			ret = (int)r;
			fsf_err(p->b->log, "cannot read %s/%s: %s",
				p->b->opts->source, path, strerror((int)-r));
			break;
		}
		/* a file that shrank is reported by the data pass */
		if (!k)		/* see zreuse.c */
			n->zhead = erofs_zreuse_head(in, (size_t)r < bs ?
						     (size_t)r : bs);
		c = lz4_sample(in, (uint32_t)r, z, zcap);
		if (n->size <= PROBE && !p->b->opts->fragments &&
		    !p->b->opts->ztailpacking) {
			*v = small_verdict((uint64_t)r, c, bs);
		} else if (p->b->opts->fragments || p->b->opts->ztailpacking) {
			/* lz4hc counted 1/8 better than the sample */
			if (c * 7 / 8 * 8 <= (uint64_t)r * 7)
				*v = COMPRESS;
		} else {
			enum verdict w = window_verdict(n->size, (uint64_t)r, c);

			if (w > *v)	/* COMPRESS > TEST > FLAT */
				*v = w;
		}
		if (*v == COMPRESS)
			break;
	}
	if (!ret && *v == TEST)
		*sp = s;
	else
		erofs_src_close(&s);
	return ret;
}

/* The exact test: N cut and compressed as the data pass will (into
 * w->ext, nothing written) pays when its pclusters and index take fewer
 * bytes than the file flat (its tail inline). */
static int plan_blocks(struct worker *w, struct erofs_node *n, bool *pays)
{
	const struct erofs_build *b = w->cp->b;
	const uint64_t nlc = (n->size + b->blksz - 1) / b->blksz;
	uint64_t cost = erofs_zindex_compact(b) ? 8 + (nlc + 1) / 2 * 8 :
						   16 + nlc * 8;
	int ret = cut_file(w, 0, n, CUT_COUNT);

	if (ret)
		return ret;
	for (size_t k = 0; k < w->next_ext; k++)
		cost += (uint64_t)w->ext[k].cblks * b->blksz;
	*pays = cost < n->size;
	if (*pays)
		zkept_keep(w, n, w->plan_outlen);
	return 0;
}

/*
 * -E ztailpacking: cut N's extents in the data pass's loop (cut_file) and
 * find its last one; when that one compresses below a block (or is a raw
 * tail under a block), its bytes go to the tail spool (erofs_tail_spill)
 * to be stored after the index.  The layout drops it again where the inode, index and tail do
 * not fit one block.  The extents before the tail are compressed again in
 * the data pass: the inode's size must be known before the layout, and
 * keeping their compressed bytes until then would hold them all in memory
 * (a file that is its tail alone is compressed once).
 */
static int ztail_plan(struct worker *w, struct erofs_node *n)
{
	return cut_file(w, 0, n, CUT_ZTAIL);
}

/*
 * -E ztailpacking: a file of a block or less is compressed whole into its
 * inode, after the map header and its one index pack (16 bytes), where
 * that takes fewer 32-byte slots than its bytes inline (counted after a
 * 32-byte inode), as erofs-utils does; else it stays flat.
 */
static int small_ztail(struct worker *w, struct erofs_node *n)
{
	int ret = ztail_plan(w, n);

	if (ret)
		return ret;
	n->compressed = n->ztail && !n->ztail_plain &&
			(32 + 16 + n->inline_size + 31) / 32 <
			(32 + n->size + 31) / 32;
	if (!n->compressed) {
		free(n->tail);
		n->tail = NULL;
		n->ztail = false;
		n->inline_size = 0;
	}
	return 0;
}

/* The next file to plan: from the list, or (early plan) from the queue,
 * waiting for the scan to add one; NULL when there is none left or a
 * thread failed. */
static struct erofs_node *plan_next(struct plan *p)
{
	struct erofs_node *n = NULL;

	if (!p->queued) {
		size_t i = atomic_fetch_add(&p->next, 1);

		return i < p->nfiles && !atomic_load(&p->error) ?
		       p->files[i] : NULL;
	}
	pthread_mutex_lock(&p->lock);
	while (p->head == p->nfiles && !p->done && !atomic_load(&p->error))
		pthread_cond_wait(&p->cond, &p->lock);
	if (p->head < p->nfiles && !atomic_load(&p->error))
		n = p->files[p->head++];
	pthread_mutex_unlock(&p->lock);
	return n;
}

static void *plan_run(void *arg)
{
	struct plan *p = arg;
	int zcap = LZ4_compressBound(PROBE);
	uint8_t *in = malloc(PROBE), *z = malloc((size_t)zcap);
	const bool ztail = p->b->opts->ztailpacking && !p->b->opts->fragments;
	/* a worker for the -E ztailpacking plan or the exact test */
	const bool cuts = ztail || !p->b->opts->fragments;
	struct cpass cp = { .b = p->b };
	struct worker w;
	bool wok = false;

	if (!in || !z) {
		atomic_store(&p->error, -ENOMEM);
		goto out;
	}
	if (cuts) {
		int ret = worker_init(&w, &cp);

		wok = true;
		if (ret) {
			atomic_store(&p->error, ret);
			goto out;
		}
	}
	for (;;) {
		struct erofs_node *n = plan_next(p);
		enum verdict v;
		struct erofs_src s;
		char path[PATH_MAX];
		int ret;

		if (!n)
			break;
		if (n->planned)		/* by the early plan */
			continue;
		if (n->size <= p->b->blksz) {	/* ztail only */
			ret = small_ztail(&w, n);
			if (ret) {
				atomic_store(&p->error, ret);
				break;
			}
			continue;
		}
		ret = probe(p, n, in, z, zcap, &v, &s, path, sizeof(path));
		n->compressed = v == COMPRESS;
		if (!ret && v == TEST) {
			/* the test reads the file the probe opened */
			w.given = &s;
			w.given_path = path;
			ret = plan_blocks(&w, n, &n->compressed);
		}
		if (!ret && ztail && n->compressed)
			ret = ztail_plan(&w, n);
		if (ret) {
			atomic_store(&p->error, ret);
			break;
		}
		n->planned = true;
	}
out:
	if (wok)
		worker_free(&w);
	free(in);
	free(z);
	return NULL;
}

int erofs_compress_settings(struct erofs_build *b)
{
	if (!b->opts->nzcfgs)
		return 0;
	/* a hint's pcluster above -C makes it the image's largest */
	b->pcl_def = b->opts->pcluster_size ?
		     b->opts->pcluster_size / b->blksz : 1;
	b->pclusterblks = b->pcl_def;
	if (erofs_zhints_max_pcl(b) > b->pclusterblks) {
		b->pclusterblks = erofs_zhints_max_pcl(b);
		/* as erofs-utils warns ("update max pclustersize") */
		fsf_warn(b->log, "%s: a hint's pcluster of %u bytes raises the image's largest pcluster above -C's %u bytes",
			 b->opts->compress_hints,
			 b->pclusterblks * b->blksz, b->pcl_def * b->blksz);
	}
	/* -E fragments=SIZE: at most the largest pcluster, as erofs-utils */
	if (b->opts->packed_pcluster / b->blksz > b->pclusterblks) {
		fsf_err(b->log, "pcluster size %u of the packed inode exceeds the largest pcluster (%u bytes, -C)",
			b->opts->packed_pcluster, b->pclusterblks * b->blksz);
		return -EINVAL;
	}
	return 0;
}

/*
 * The early plan: while the scan reads the tree (one thread, mostly
 * waiting on system calls), the plan's threads probe the regular files it
 * has found so far, as the plan would after it (plan_run).  A file's
 * verdict depends on its content and the pcluster settings only, which
 * are fixed before the scan (erofs_compress_settings).  Not for hard
 * links (which node owns the inode is known only after the scan), nor
 * where the plan depends on more than the content: -E fragments,
 * -E ztailpacking, --compress-hints; nor for a tar (read by the scan
 * thread).  The plan after the scan takes the files left.
 */
int erofs_plan_early_start(struct erofs_build *b)
{
	const struct erofs_mkfs_opts *o = b->opts;
	unsigned int nw = o->workers ? o->workers : 1;
	struct plan *p;

	if (!o->nzcfgs || o->fragments || o->ztailpacking || b->nzhints ||
	    b->from_tar)
		return 0;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->b = b;
	p->queued = true;
	p->tids = calloc(nw, sizeof(*p->tids));
	if (!p->tids) {
		free(p);
		return -ENOMEM;
	}
	atomic_init(&p->next, 0);
	atomic_init(&p->error, 0);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	for (unsigned int i = 0; i < nw; i++) {
		if (pthread_create(&p->tids[i], NULL, plan_run, p) != 0)
			break;
		p->started++;
	}
	if (!p->started) {	/* the plan after the scan does it all */
		pthread_cond_destroy(&p->cond);
		pthread_mutex_destroy(&p->lock);
		free(p->tids);
		free(p);
		return 0;
	}
	b->early = p;
	return 0;
}

/* The scan found N (its node complete, never written again by the scan). */
void erofs_plan_early_add(struct erofs_build *b, struct erofs_node *n)
{
	struct plan *p = b->early;

	if (!p || !S_ISREG(n->mode) || n->size <= b->blksz || n->src_nlink > 1)
		return;
	pthread_mutex_lock(&p->lock);
	if (p->nfiles == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 1024;
		struct erofs_node **g = realloc(p->files, cap * sizeof(*g));

		if (!g) {	/* left to the plan after the scan */
			pthread_mutex_unlock(&p->lock);
			return;
		}
		p->files = g;
		p->cap = cap;
	}
	p->files[p->nfiles++] = n;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

/* The scan is over: the files queued are planned, the threads gone.
 * After a failed scan (SCAN_RET) nothing more is planned: each thread
 * ends with the file it has. */
int erofs_plan_early_end(struct erofs_build *b, int scan_ret)
{
	struct plan *p = b->early;
	int ret;

	if (!p)
		return 0;
	pthread_mutex_lock(&p->lock);
	if (scan_ret)
		atomic_store(&p->error, scan_ret);
	p->done = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	for (unsigned int i = 0; i < p->started; i++)
		pthread_join(p->tids[i], NULL);
	ret = atomic_load(&p->error);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p->files);
	free(p->tids);
	free(p);
	b->early = NULL;
	return ret;
}

int erofs_compress_plan(struct erofs_build *b)
{
	const bool ztail = b->opts->ztailpacking && !b->opts->fragments;
	struct plan p = { .b = b };
	size_t nlarge;
	unsigned int nw = b->opts->workers ? b->opts->workers : 1;
	unsigned int started = 0;
	int ret = 0;
	pthread_t *tids;

	if (!b->opts->nzcfgs)
		return 0;
	p.files = malloc(b->count * sizeof(*p.files));
	tids = calloc(nw, sizeof(*tids));
	if (!p.files || !tids) {
		free(p.files);
		free(tids);
		return -ENOMEM;
	}
	for (size_t i = 0; i < b->count; i++) {
		struct erofs_node *n = b->order[i];

		if (n->master || !S_ISREG(n->mode) || !n->size)
			continue;
		if (b->nzhints) {
			char path[PATH_MAX];

			if (erofs_node_relpath(n, path, sizeof(path))) {
				fsf_err(b->log, "%s: path too long", n->name);
				ret = -ENAMETOOLONG;
				break;
			}
			erofs_zhint_apply(b, n, path);
			if (!n->zpcl)	/* a hint of 0: left uncompressed */
				continue;
		}
		/* -E fragments: a file up to its pcluster goes whole to
		 * the packed inode (all-fragments: every file) */
		if (b->opts->fragments &&
		    (b->opts->all_fragments ||
		     n->size <= (uint64_t)erofs_node_pcl(b, n) * b->blksz)) {
			n->compressed = n->whole_frag = true;
			continue;
		}
		if (n->size > b->blksz)
			p.files[p.nfiles++] = n;
	}
	if (ret) {
		free(p.files);
		free(tids);
		return ret;
	}
	if (b->opts->ztailpacking && !b->opts->fragments)
		ret = erofs_tail_spool_open(b);
	if (ret) {
		free(p.files);
		free(tids);
		return ret;
	}
	nlarge = p.nfiles;
	/* -E ztailpacking: files of a block or less too (small_ztail) */
	for (size_t i = 0; ztail && i < b->count; i++) {
		struct erofs_node *n = b->order[i];

		if (!n->master && S_ISREG(n->mode) && n->size &&
		    n->size <= b->blksz && !n->compressed &&
		    (!b->nzhints || n->zpcl))
			p.files[p.nfiles++] = n;
	}
	atomic_init(&p.next, 0);
	atomic_init(&p.error, 0);
	for (unsigned int i = 0; i < nw; i++) {
		if (pthread_create(&tids[i], NULL, plan_run, &p) != 0)
			break;
		started++;
	}
	if (!started)
		plan_run(&p);
	for (unsigned int i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	free(tids);
	ret = atomic_load(&p.error);
	if (!ret && b->opts->dedupe)
		ret = erofs_seg_twins(b, p.files, nlarge);
	free(p.files);
	return ret;
}

int erofs_write_compressed(struct erofs_build *b)
{
	struct erofs_node **files = malloc((b->count + 1) * sizeof(*files));
	size_t n = 0;
	int ret;

	if (!files)
		return -ENOMEM;
	for (size_t i = 0; i < b->count; i++)
		if (b->order[i]->compressed && !b->order[i]->master)
			files[n++] = b->order[i];
	ret = erofs_zreuse_group(b, files, n, OUT_FLUSH);
	if (!ret)
		ret = erofs_compress_files(b, files, n);
	if (b->zreuse) {
		uint64_t later = 0, reused = erofs_zreuse_free(b, &later);

		fsf_info(b->log, "compressed files: %llu of the same content as an earlier one, not compressed again (%llu after another of their size and first block)",
			 (unsigned long long)reused, (unsigned long long)later);
	}
	free(files);
	if (!ret && b->opts->fragments)
		ret = erofs_write_packed(b);
	if (!ret && b->total_blocks > UINT32_MAX) {
		fsf_err(b->log, "image would need %llu blocks; EROFS without 48-bit addressing holds at most %u",
			(unsigned long long)b->total_blocks, UINT32_MAX);
		ret = -EFBIG;
	}
	return ret;
}

int erofs_compress_files(struct erofs_build *b, struct erofs_node **files,
			 size_t nfiles)
{
	struct cpass cp = { .b = b, .cursor = b->total_blocks,
			    .files = files, .nfiles = nfiles };
	unsigned int nw = b->opts->workers ? b->opts->workers : 1;
	struct worker *ws = NULL;
	pthread_t *tids = NULL;
	unsigned int started = 0;
	uint64_t piece = PACKED_PIECE;
	int ret = 0;

	if (!cp.nfiles)
		return 0;
	if (b->opts->zcfgs[files[0]->zcfg].compr == EROFS_COMPR_LZMA)
		piece = PACKED_PIECE_LZMA;
	if (nfiles == 1 && files[0] == b->packed && files[0]->size > piece) {
		/* the packed inode (with all-fragments, every file's data):
		 * compressed in pieces on all the workers, cut at fixed
		 * offsets whatever their number */
		cp.piece = piece;
		cp.nfiles = (size_t)((files[0]->size + piece - 1) / piece);
		cp.files = malloc(cp.nfiles * sizeof(*cp.files));
		if (!cp.files)
			return -ENOMEM;
		for (size_t k = 0; k < cp.nfiles; k++)
			cp.files[k] = files[0];
	}
	if (nw > cp.nfiles)
		nw = (unsigned int)cp.nfiles;
	atomic_init(&cp.next, 0);
	atomic_init(&cp.error, 0);
	pthread_mutex_init(&cp.lock, NULL);
	pthread_cond_init(&cp.cond, NULL);
	ws = calloc(nw, sizeof(*ws));
	tids = calloc(nw, sizeof(*tids));
	if (!ws || !tids) {
		ret = -ENOMEM;
		goto out_sync;
	}
	for (unsigned int i = 0; i < nw && !ret; i++)
		ret = worker_init(&ws[i], &cp);
	if (ret)
		goto out_workers;
	for (unsigned int i = 0; i < nw; i++) {
		if (pthread_create(&tids[i], NULL, run, &ws[i]) != 0)
			break;
		started++;
	}
	if (!started)
		run(&ws[0]);
	for (unsigned int i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	ret = atomic_load(&cp.error);
	if (!ret)
		b->total_blocks = cp.cursor;
out_workers:
	for (unsigned int i = 0; i < nw; i++)
		worker_free(&ws[i]);
out_sync:
	pthread_cond_destroy(&cp.cond);
	pthread_mutex_destroy(&cp.lock);
	free(ws);
	free(tids);
	free(cp.pext);
	if (cp.piece)
		free(cp.files);
	return ret;
}
