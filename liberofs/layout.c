// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 3: decide where everything goes.  All sizes are known before any
 * byte is read (a directory's size depends on its names only, a file's
 * fingerprint xattr has a fixed size), so nids and block addresses are fixed
 * here, in breadth-first order, and the parallel data pass only fills them
 * in.  That is what makes the image byte-identical whatever --workers is.
 *
 * Image layout (meta_blkaddr = 0, so a nid is a 32-byte slot of the image):
 *   [0, 1024) zero | superblock | long prefix table | inodes with their
 *   xattrs and inline tails ... | shared xattrs (block aligned) |
 *   data blocks (block aligned)
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "erofs/erofs_fs.h"
#include "internal.h"

static bool want_compact(const struct erofs_build *b, const struct erofs_node *n)
{
	if (b->opts->force_extended)
		return false;
	if (n->size > UINT32_MAX || n->uid > UINT16_MAX ||
	    n->gid > UINT16_MAX || n->nlink > UINT16_MAX)
		return false;
	if (b->opts->ignore_mtime)
		return true;
	/* compact inodes keep seconds after the epoch and one shared nsec */
	return n->mtime >= b->epoch &&
	       n->mtime - b->epoch <= (int64_t)UINT32_MAX &&
	       n->mtime_nsec == 0;
}

/*
 * Without a build time asked for (-T, SOURCE_DATE_EPOCH), the superblock's
 * epoch, the base of every compact inode's time, is the oldest time (at
 * or after 1970) of a file whose time a compact inode could hold (zero
 * nanoseconds), when that is before the current time: files unpacked by
 * a package manager then fit 32-byte inodes instead of 64-byte ones (on
 * /usr/share, 70,314 of 71,304).  The times read back are the same.
 */
static void choose_epoch(struct erofs_build *b)
{
	int64_t lo = b->epoch;

	if (!b->opts->free_epoch || b->opts->ignore_mtime)
		return;
	for (size_t i = 0; i < b->count; i++) {
		const struct erofs_node *n = b->order[i];

		if (!n->master && !n->mtime_nsec && n->mtime >= 0 &&
		    n->mtime < lo)
			lo = n->mtime;
	}
	b->epoch = lo;
}

/*
 * Metadata placement, best fit: an inode with its xattrs and inline tail
 * goes into the partly used metadata block with the least room that still
 * holds it whole, else into a new block.  Blocks are bucketed by free
 * 32-byte slots, so a placement costs at most blksz/32 probes.  Everything
 * is decided in a fixed order, so the result is deterministic.  A record
 * larger than a block takes fresh blocks; a compressed one with an inline
 * tail starts where the tail then lies in one block (the kernel's rule,
 * fs/erofs/zmap.c: the inode and index may cross blocks, the tail not), and
 * the room before it in its first block is free like the room at a block's
 * end: each block's free room is [fill, lim).
 */
struct meta_alloc {
	unsigned int bs, slots;		/* block size, 32-byte slots per block */
	uint64_t next_block;		/* first block never used */
	uint32_t *fill;			/* bytes used from the start, per block */
	uint32_t *lim;			/* end of the free room, per block */
	uint64_t nfill;
	uint64_t **bucket;		/* bucket[k]: stack of blocks with k free slots */
	size_t *blen, *bcap;
};

static int ma_push(struct meta_alloc *m, unsigned int k, uint64_t blk)
{
	if (m->blen[k] == m->bcap[k]) {
		size_t cap = m->bcap[k] ? m->bcap[k] * 2 : 16;
		uint64_t *g = realloc(m->bucket[k], cap * sizeof(*g));

		if (!g)
			return -ENOMEM;
		m->bucket[k] = g;
		m->bcap[k] = cap;
	}
	m->bucket[k][m->blen[k]++] = blk;
	return 0;
}

static int ma_note_fill(struct meta_alloc *m, uint64_t blk, uint32_t fill)
{
	if (blk >= m->nfill) {
		uint64_t n = m->nfill ? m->nfill : 64;
		uint32_t *g, *l;

		while (n <= blk)
			n *= 2;
		g = realloc(m->fill, n * sizeof(*g));
		if (!g)
			return -ENOMEM;
		m->fill = g;
		l = realloc(m->lim, n * sizeof(*l));
		if (!l)
			return -ENOMEM;
		m->lim = l;
		for (uint64_t i = m->nfill; i < n; i++) {
			g[i] = 0;
			l[i] = m->bs;
		}
		m->nfill = n;
	}
	m->fill[blk] = fill;
	return 0;
}

static int ma_init(struct meta_alloc *m, unsigned int bs, uint64_t start)
{
	memset(m, 0, sizeof(*m));
	m->bs = bs;
	m->slots = bs / EROFS_SLOT_SIZE;
	m->bucket = calloc(m->slots + 1, sizeof(*m->bucket));
	m->blen = calloc(m->slots + 1, sizeof(*m->blen));
	m->bcap = calloc(m->slots + 1, sizeof(*m->bcap));
	if (!m->bucket || !m->blen || !m->bcap)
		return -ENOMEM;
	m->next_block = start / bs;
	if (start % bs) {
		/* the block holding the superblock and prefix table */
		if (ma_note_fill(m, m->next_block, (uint32_t)(start % bs)))
			return -ENOMEM;
		if (ma_push(m, (unsigned int)((bs - start % bs) / EROFS_SLOT_SIZE),
			    m->next_block))
			return -ENOMEM;
		m->next_block++;
	}
	return 0;
}

static void ma_free(struct meta_alloc *m)
{
	for (unsigned int k = 0; m->bucket && k <= m->slots; k++)
		free(m->bucket[k]);
	free(m->bucket);
	free(m->blen);
	free(m->bcap);
	free(m->fill);
	free(m->lim);
}

/*
 * Where in its first block a record of BYTES, the last TAIL of them an
 * inline tail, starts so that the tail lies in one block and does not
 * start one (erofs-utils' rule for inline data, stricter than the
 * kernel's); 0 without a tail; UINT32_MAX where no slot does.
 */
static uint32_t tail_start(unsigned int bs, uint32_t bytes, uint32_t tail)
{
	uint32_t hz = bytes - tail;

	if (!tail)
		return 0;
	for (uint32_t s = 0; s < bs; s += EROFS_SLOT_SIZE) {
		uint32_t r = (s + hz) % bs;

		if (r && r + tail <= bs)
			return s;
	}
	return UINT32_MAX;
}

/* Room for BYTES (TAIL of them an inline tail, see tail_start): inside one
 * block if they fit one; returns the byte offset or UINT64_MAX. */
static uint64_t ma_alloc(struct meta_alloc *m, uint32_t bytes, uint32_t tail)
{
	unsigned int need = (bytes + EROFS_SLOT_SIZE - 1) / EROFS_SLOT_SIZE;
	uint64_t blk = UINT64_MAX, at;
	unsigned int left;

	if (bytes > m->bs) {
		/* a huge xattr body or index: fresh blocks, crossing
		 * allowed; the room before a tail's record is free */
		uint32_t s = tail_start(m->bs, bytes, tail);
		uint64_t nb = ((uint64_t)s + bytes + m->bs - 1) / m->bs;

		if (s == UINT32_MAX)
			return UINT64_MAX;
		blk = m->next_block;
		m->next_block += nb;
		if (s) {
			if (ma_note_fill(m, blk, 0))
				return UINT64_MAX;
			m->lim[blk] = s;
			if (ma_push(m, s / EROFS_SLOT_SIZE, blk))
				return UINT64_MAX;
		}
		left = (unsigned int)((nb * m->bs - s - bytes) / EROFS_SLOT_SIZE);
		at = blk * m->bs + s;
		blk += nb - 1;
		if (ma_note_fill(m, blk, m->bs - left * EROFS_SLOT_SIZE) ||
		    (left && ma_push(m, left, blk)))
			return UINT64_MAX;
		return at;
	}
	for (unsigned int k = need; k <= m->slots && blk == UINT64_MAX; k++)
		if (m->blen[k])
			blk = m->bucket[k][--m->blen[k]];
	if (blk == UINT64_MAX) {
		blk = m->next_block++;
		if (ma_note_fill(m, blk, 0))
			return UINT64_MAX;
	}
	at = blk * m->bs + m->fill[blk];
	m->fill[blk] += need * EROFS_SLOT_SIZE;
	left = (m->lim[blk] - m->fill[blk]) / EROFS_SLOT_SIZE;
	if (left && ma_push(m, left, blk))
		return UINT64_MAX;
	return at;
}

/* Choose the data layout of N: *BYTES of metadata its inode takes (with
 * its xattrs, index or block map, and inline tail), all in one block. */
static int inode_bytes(struct erofs_build *b, struct erofs_node *n,
		       uint32_t *bytes)
{
	const unsigned int bs = b->blksz;
	uint32_t head = (n->extended ? 64u : 32u) + n->xattr_isize;
	uint32_t tail = (uint32_t)(n->size % bs);
	uint64_t zsize;
	bool inlinable = tail && head + tail <= bs &&
			 !(S_ISREG(n->mode) && b->opts->noinline_data);

	/* compressed (chosen by erofs_compress_plan): the index size
	 * depends on the file size only */
	if (n->compressed) {
		n->datalayout = erofs_zindex_compact(b) ?
				EROFS_LAYOUT_COMPRESSED_COMPACT :
				EROFS_LAYOUT_COMPRESSED_FULL;
		n->nblocks = 0;
		zsize = erofs_zindex_size(b, n, head);
		if (zsize > UINT32_MAX - head)
			return -EFBIG;
		/* -E ztailpacking: the tail follows the index; the record
		 * may cross blocks where the tail then lies in one
		 * (tail_start), else the tail goes to a block of its own */
		if (n->ztail && head + zsize + n->inline_size > bs &&
		    tail_start(bs, (uint32_t)(head + zsize + n->inline_size),
			       n->inline_size) == UINT32_MAX) {
			n->ztail = false;
			free(n->tail);
			n->tail = NULL;
		}
		if (!n->ztail)
			n->inline_size = 0;
		*bytes = head + (uint32_t)zsize + n->inline_size;
		return 0;
	}
	/* chunk-based: the block map's size depends on the file size only;
	 * the chunks get their blocks in the chunk pass */
	n->chunked = (b->chunkbits || erofs_tar_index(b)) &&
		     S_ISREG(n->mode) && n->size;
	if (n->chunked) {
		uint64_t map;

		n->chunkbits = (uint8_t)erofs_node_chunkbits(b, n);
		map = erofs_chunkmap_size(b, n, head);

		n->datalayout = EROFS_LAYOUT_CHUNK_BASED;
		n->inline_size = 0;
		n->nblocks = 0;
		if (map > UINT32_MAX - head)
			return -EFBIG;
		*bytes = head + (uint32_t)map;
		return 0;
	}
	n->datalayout = inlinable ? EROFS_LAYOUT_FLAT_INLINE :
				    EROFS_LAYOUT_FLAT_PLAIN;
	n->inline_size = inlinable ? tail : 0;
	n->nblocks = inlinable ? n->size / bs : (n->size + bs - 1) / bs;
	*bytes = head + n->inline_size;
	return 0;
}

/* An inode to place: its metadata bytes (the last TAIL of them an inline
 * tail after a compressed index) and its index in b->order. */
struct slot_req {
	uint32_t bytes, tail;
	size_t i;
};

/* The root first (its nid must fit 16 bits), then the largest first,
 * ties in layout order. */
static int cmp_req(const void *x, const void *y)
{
	const struct slot_req *a = x, *c = y;

	if (a->i == 0 || c->i == 0)
		return a->i == 0 ? (c->i == 0 ? 0 : -1) : 1;
	if (a->bytes != c->bytes)
		return a->bytes > c->bytes ? -1 : 1;
	return a->i < c->i ? -1 : a->i > c->i;
}

/*
 * Place the inodes: best fit decreasing.  The largest records (inline
 * tails, indexes) go first and the small ones fill the room they leave
 * at the ends of blocks; in layout order the blocks kept about twice the
 * unused room (0.6% of /usr/share's metadata blocks against 0.02%).  A
 * directory's inodes are thus no longer together, which costs a reader
 * that stats a whole directory more metadata blocks: erofs-utils does not
 * keep them together either.
 */
static int place_inodes(struct erofs_build *b, struct meta_alloc *m,
			struct slot_req *r, size_t nr)
{
	qsort(r, nr, sizeof(*r), cmp_req);
	for (size_t k = 0; k < nr; k++) {
		uint64_t at = ma_alloc(m, r[k].bytes, r[k].tail);

		if (at == UINT64_MAX)
			return -ENOMEM;
		b->order[r[k].i]->nid = at / EROFS_SLOT_SIZE;
	}
	return 0;
}

int erofs_layout(struct erofs_build *b)
{
	const unsigned int bs = b->blksz;
	struct meta_alloc m;
	struct erofs_node **files;
	struct slot_req *req;
	size_t nfiles = 0, nreq = 0;
	uint64_t pos, next;
	uint32_t ino = 0;

	choose_epoch(b);
	/* b->pclusterblks: set by the compression plan */
	/* compression settings, if any, then the long prefix table */
	b->prefix_start = EROFS_SUPER_OFFSET + 128 +
			  erofs_compr_cfgs_encode(b, NULL);
	/* one extra device (--tar=i: the tar; --blobdev): its slot, on a
	 * 128-byte boundary, before the prefix table */
	if (b->chunk_indexes) {
		b->devt_off = erofs_round_up(b->prefix_start, EROFS_DEVT_SLOT_SIZE);
		b->prefix_start = b->devt_off + EROFS_DEVT_SLOT_SIZE;
		if (b->opts->tar_mode == EROFS_TAR_INDEX)
			b->dev_blocks = erofs_round_up(b->tar_end, bs) / bs;
	}
	pos = b->prefix_start +
	      erofs_prefix_table_encode(b->prefixes, b->nprefixes, NULL);
	pos = erofs_round_up(pos, EROFS_SLOT_SIZE);
	req = malloc(b->count * sizeof(*req) + 1);
	if (!req || ma_init(&m, bs, pos)) {
		free(req);
		ma_free(&m);
		return -ENOMEM;
	}

	for (size_t i = 0; i < b->count; i++) {
		struct erofs_node *n = b->order[i];

		if (n->master)
			continue;
		if (S_ISDIR(n->mode))
			n->size = erofs_node_dir_size(b, n);
		n->xattr_isize = erofs_node_xattr_isize(b, n);
		if (n->xattr_isize > 12u + 4u * 65534u) {
			fsf_err(b->log, "%s: too many extended attributes for one inode",
				n->name[0] ? n->name : "/");
			free(req);
			ma_free(&m);
			return -E2BIG;
		}
		n->extended = !want_compact(b, n);
		n->ino = ++ino;
		req[nreq].i = i;
		if (inode_bytes(b, n, &req[nreq].bytes)) {
			fsf_err(b->log, "%s: cannot place its inode (too large)",
				n->name[0] ? n->name : "/");
			free(req);
			ma_free(&m);
			return -EFBIG;
		}
		req[nreq].tail = n->compressed && n->ztail &&
				 req[nreq].bytes > bs ? n->inline_size : 0;
		nreq++;
	}
	if (place_inodes(b, &m, req, nreq)) {
		free(req);
		ma_free(&m);
		return -ENOMEM;
	}
	free(req);
	pos = m.next_block * bs;
	ma_free(&m);
	/* the root's nid must fit the superblock's 16-bit field */
	if (b->root->nid > UINT16_MAX)
		return -EFBIG;
	b->meta_end = pos;

	next = erofs_round_up(pos, bs) / bs;
	b->xattr_blkaddr = b->shared_size ? next : 0;
	next += erofs_round_up(b->shared_size, bs) / bs;
	b->data_blkaddr = next;
	/* regular files first, so that their blocks are contiguous in data
	 * order (layout order, or the archive's with --sort=none: the data
	 * pass writes runs of files with one write), then directories and
	 * symlinks */
	files = malloc(b->count * sizeof(*files));
	if (!files)
		return -ENOMEM;
	for (size_t i = 0; i < b->count; i++) {
		struct erofs_node *n = b->order[i];

		if (!n->master && n->nblocks && S_ISREG(n->mode))
			files[nfiles++] = n;
	}
	erofs_data_order(b, files, nfiles);
	for (size_t i = 0; i < nfiles; i++) {
		files[i]->blkaddr = next;
		next += files[i]->nblocks;
	}
	free(files);
	for (size_t i = 0; i < b->count; i++) {
		struct erofs_node *n = b->order[i];

		if (n->master || !n->nblocks || S_ISREG(n->mode))
			continue;
		n->blkaddr = next;
		next += n->nblocks;
	}
	if (next > UINT32_MAX) {
		fsf_err(b->log, "image would need %llu blocks; EROFS without 48-bit addressing holds at most %u",
			(unsigned long long)next, UINT32_MAX);
		return -EFBIG;
	}
	b->total_blocks = next;
	return 0;
}
