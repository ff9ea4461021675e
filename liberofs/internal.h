/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * liberofs private structures: the in-memory tree that mkfs builds from the
 * source directory, and the build context that carries it through the
 * passes (scan -> xattrs -> layout -> data -> metadata).
 */
#ifndef LIBEROFS_INTERNAL_H
#define LIBEROFS_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "erofs/format.h"
#include "erofs/mkfs.h"
#include "fsforge/dev.h"
#include "fsforge/log.h"

/* One distinct (name, value) pair; inodes share it by pointer. */
struct erofs_xattr {
	char *name;		/* full name, e.g. "user.mime" */
	void *value;
	uint16_t name_len;
	uint16_t value_len;
	uint8_t index;		/* e_name_index (0x80 | n for long prefixes) */
	uint8_t base_index;	/* standard namespace, for the filter */
	uint16_t suffix_off;	/* name bytes covered by index/prefix */
	uint16_t filter_off;	/* name bytes covered by the namespace */
	uint32_t refs;		/* inodes carrying it */
	int64_t shared_id;	/* -1: stored inline */
};

struct erofs_node {
	char *name;			/* entry name; "" for the root */
	struct erofs_node *parent;
	struct erofs_node **children;	/* directories: sorted by name */
	uint32_t nchildren;
	struct erofs_node *master;	/* hard link: node owning the inode */

	/* attributes, after uid/gid/time options are applied */
	uint32_t mode, uid, gid, nlink;
	int64_t mtime;
	uint32_t mtime_nsec;
	uint64_t size;			/* file, directory or symlink bytes */
	uint32_t rdev;			/* encoded device number */
	dev_t src_dev;
	ino_t src_ino;
	uint32_t src_nlink;
	uint16_t name_len;
	/* tar input: the content is size bytes at data_off of
	 * b->data_fd[data_src] (the tar itself, or the spool file) */
	uint8_t data_src;
	uint64_t data_off;
	uint64_t tar_off;		/* --tar=i: the data's offset in the
					 * (decompressed) tar stream */
	uint64_t src_seq;		/* tar input: the file's place in the
					 * archive (--sort=none), from 1 */

	char *symlink;			/* link target */
	struct erofs_xattr **xattrs;	/* sorted by name */
	uint16_t nxattrs;
	uint8_t nshared;

	/* layout */
	bool extended;			/* 64-byte inode */
	bool has_digest;		/* regular file with a fingerprint */
	uint8_t datalayout;
	uint32_t xattr_isize;
	uint32_t inline_size;		/* tail bytes stored after the inode */
	uint32_t ino;
	uint64_t nid;
	uint64_t blkaddr;		/* first data block */
	uint64_t nblocks;		/* data blocks */

	bool compressed;		/* COMPRESSED_FULL layout */
	bool planned;			/* compressed or not: decided (the
					 * plan's threads, compress.c) */
	struct erofs_zkept *zkept;	/* the exact test's compressed bytes
					 * and extents, kept for the data pass
					 * (compress.c) */
	uint8_t zcfg;			/* compressed: its -z configuration
					 * (0 unless a compress hint says) */
	uint32_t zpcl;			/* compressed: its pcluster blocks
					 * (0: the default, -C) */
	uint64_t zhead;			/* the probe's hash of its first
					 * block (zreuse.c) */
	struct erofs_zgroup *zgroup;	/* the data pass's files that may
					 * have its content (zreuse.c) */
	uint32_t zblocks;		/* compressed: pcluster blocks */
	uint8_t *zindex;		/* compressed: lcluster indexes */
	bool whole_frag;		/* compressed: all of it in the packed
					 * inode (-E fragments) */
	bool tail_frag;			/* compressed: its last extent there
					 * (fragoff set) */
	bool ztail;			/* compressed: its last extent inline
					 * after the index (-E ztailpacking):
					 * inline_size bytes in tail */
	bool ztail_plain;		/* ... stored raw */
	uint64_t ztail_la;		/* ... from this logical byte */
	uint64_t ztail_off;		/* ... its inline_size bytes in the
					 * tail spool (tailspool.c) */
	uint64_t fragoff;		/* byte offset in the packed inode */

	bool chunked;			/* CHUNK_BASED layout (--chunksize,
					 * --tar=i, --tar=headerball) */
	uint8_t chunkbits;		/* chunked: log2 of its chunk size;
					 * its map is written by chunk.c */

	/* filled by the data pass */
	uint8_t *tail;			/* inline tail bytes, until placed */
	bool placed;			/* the record's bytes after inode and
					 * xattrs (inline tail, compressed
					 * index, block map) are in the image
					 * (record.c, chunk.c) */
	uint8_t digest[32];		/* SHA-256 of the content */
};

struct erofs_build {
	const struct erofs_mkfs_opts *opts;
	const struct fsf_log *log;
	struct fsf_dev dev;
	unsigned int blksz;
	int64_t epoch;			/* compact inodes count from here */
	uint8_t uuid[16];

	int src_fd;			/* the source directory */
	int data_fd[2];			/* tar input: the tar (-1 when not
					 * seekable) and the spool file */
	bool from_tar;
	struct erofs_node *root;
	struct erofs_node **order;	/* all nodes, breadth-first */
	size_t count;
	size_t ninodes;			/* nodes that own an inode */

	struct erofs_xattr **xattrs;	/* distinct pairs, sorted */
	size_t nxattrs;
	struct erofs_long_prefix *prefixes;	/* long prefix table */
	size_t nprefixes;
	int digest_prefix;		/* index into prefixes, -1: none */
	uint8_t digest_base_index;
	const char *digest_filter_name;	/* digest name after its namespace */

	uint64_t prefix_start;		/* byte offset of the prefix table */
	uint32_t pclusterblks;		/* compressed: blocks of the largest
					 * pcluster (-C or a compress hint) */
	uint32_t pcl_def;		/* ... of a file no hint names (-C) */
	struct erofs_zhint *zhints;	/* --compress-hints, in file order */
	size_t nzhints;
	uint64_t meta_end;		/* end of inodes (bytes) */
	uint64_t xattr_blkaddr;		/* shared xattr area */
	uint64_t shared_size;
	uint64_t data_blkaddr;		/* first data block */
	uint64_t total_blocks;
	unsigned int chunkbits;		/* log2 of --chunksize, 0: off */
	bool chunk_indexes;		/* chunk entries are 8-byte indexes
					 * (an extra device holds the data) */
	struct fsf_dev blob;		/* --blobdev */
	struct fsf_dev dump;		/* --ungzip=FILE: the decompressed tar */
	uint64_t dump_len;		/* bytes written to it */
	/* the tar reader's copy of its decoded stream (mkfs.c sets them
	 * for --ungzip=FILE): every decoded block, then the end */
	int (*tar_copy)(struct erofs_build *b, const void *buf, size_t len);
	int (*tar_copy_end)(struct erofs_build *b);
	uint64_t tar_end;		/* bytes of the tar stream read */
	uint64_t dev_blocks;		/* extra device 1: blocks, 0: none */
	uint64_t devt_off;		/* byte offset of the device table */
	uint64_t hole_chunks, dedup_chunks;	/* chunk pass counts */
	/* -E fragments: the packed inode's content, spooled to an unlinked
	 * file in file order; identical fragments are stored once */
	int packed_fd;
	uint64_t packed_size;
	struct erofs_node *packed;	/* its inode, after all data */
	struct frag_table *frags;
	struct dedupe_table *dedupe;	/* -E dedupe: whole files */
	uint64_t frag_shared, files_shared;	/* counts */
	/* -E dedupe: the pclusters written so far, by the rolling hash of
	 * their first uncompressed block (segdedupe.c) */
	struct erofs_seg_table *segs;
	uint64_t segs_shared;		/* extents pointing at one of them */
	/* -E ztailpacking: the plan's inline tails, until the data pass
	 * stores them (tailspool.c) */
	int tail_fd;
	atomic_uint_fast64_t tail_end;
	atomic_bool tail_failed;	/* a write to it failed (told once) */
	/* the compression plan's threads while the scan runs (compress.c) */
	struct plan *early;
	atomic_size_t zkept_bytes;	/* held in nodes' zkept */
	struct erofs_zreuse *zreuse;	/* the data pass's groups (zreuse.c) */
	/* the metadata chunks written before the compressed files end
	 * (metadata.c) */
	struct meta_plan *meta;
};

/* scan.c: read the source tree into b->root and b->order */
int erofs_scan(struct erofs_build *b);
bool erofs_path_excluded(const struct erofs_build *b, const char *rel);
/* tar.c: read a tar stream (opts->source, "-" = stdin) into the tree */
int erofs_tar_scan(struct erofs_build *b);
/* tree.c: node attributes (after the uid/gid/time options), xattrs, and
 * the finished tree: children sorted (SORT), b->order, hard-link masters */
int erofs_node_set_ids(struct erofs_build *b, struct erofs_node *n,
		       uint64_t uid, uint64_t gid);
void erofs_node_set_mtime(struct erofs_build *b, struct erofs_node *n,
			  int64_t sec, uint32_t nsec);
int erofs_node_add_xattr(struct erofs_build *b, struct erofs_node *n,
			 const char *path, const char *name, const void *value,
			 size_t value_len);
int erofs_cmp_child(const void *a, const void *c);
int erofs_tree_finish(struct erofs_build *b, bool sort);
/* Regular files V[0..N) (in node order) put in the order their blocks
 * are laid out and written: unchanged, or with --sort=none in the order
 * of the archive (then the inode number, for a file of no entry). */
void erofs_data_order(const struct erofs_build *b, struct erofs_node **v,
		      size_t n);
/* xattr.c: intern pairs, choose shared ones, build the prefix table */
int erofs_xattrs_prepare(struct erofs_build *b);
uint32_t erofs_node_xattr_isize(const struct erofs_build *b,
				const struct erofs_node *n);
void erofs_node_xattr_encode(const struct erofs_build *b,
			     const struct erofs_node *n, uint8_t *out);
void erofs_shared_xattrs_encode(const struct erofs_build *b, uint8_t *out);
/* layout.c: sizes, inode placement (nids) and data blocks */
int erofs_layout(struct erofs_build *b);
/* data.c: read, hash and write file contents (parallel) */
int erofs_write_file_data(struct erofs_build *b);
/* data.c: a regular file's content being read: its own descriptor (a
 * source directory's file, read to its end) or a window of size bytes of
 * the tar or spool file shared by every reader (read with pread) */
struct erofs_src {
	int fd;
	bool shared;
	uint64_t base, pos, len;
};
/* Files above this size are read with posix_fadvise(SEQUENTIAL); smaller
 * ones fit the kernel's default readahead window and are spared the
 * syscall (one per file: about 60,000 on /usr/share). */
#define EROFS_FADV_MIN	(128u << 10)
/* open the content of N (PATH gets its path relative to the source);
 * 0 or a negative errno, reported */
int erofs_open_source(struct erofs_build *b, const struct erofs_node *n,
		      char *path, size_t size, struct erofs_src *s);
/* read up to LEN bytes: the count (short only at the end) or -errno */
ssize_t erofs_src_read(struct erofs_src *s, uint8_t *buf, size_t len);
/* read the last LEN bytes of the file and confirm its end in the same
 * read (BUF has room for LEN + 1): LEN, fewer (the file shrank), LEN + 1
 * (it grew) or -errno */
ssize_t erofs_src_read_last(struct erofs_src *s, uint8_t *buf, size_t len);
ssize_t erofs_src_pread(struct erofs_src *s, uint8_t *buf, size_t len,
			uint64_t off);
void erofs_src_close(struct erofs_src *s);
ssize_t erofs_read_full(int fd, uint8_t *buf, size_t len);
/* compress.c: choose the files worth compressing (before the layout);
 * write them, after every other data block */
int erofs_compress_plan(struct erofs_build *b);
/* the pcluster settings (-C, hints), before the scan */
int erofs_compress_settings(struct erofs_build *b);
/* the plan of the files the scan finds, as it finds them: started before
 * it, each regular file added when its node is complete, ended (threads
 * joined, first error returned) when the scan is over; after a failed
 * scan (SCAN_RET) the files still queued are left unplanned */
int erofs_plan_early_start(struct erofs_build *b);
void erofs_plan_early_add(struct erofs_build *b, struct erofs_node *n);
int erofs_plan_early_end(struct erofs_build *b, int scan_ret);
/* The exact test's output kept for the data pass (compress.c fills it,
 * takes it; tree.c frees what is left with its node) */
struct zext;
struct erofs_zkept {
	uint8_t *out;
	size_t outlen;
	struct zext *ext;		/* compress.c's extents */
	size_t n_ext;
};
void erofs_zkept_free(struct erofs_node *n);
/* zreuse.c: files of the same content compressed once (without -E
 * dedupe, fragments, ztailpacking).  _group sets the zgroup of FILES
 * (up to MAX_SIZE bytes) that share size, first-block hash, -z
 * configuration and pcluster size (FSFORGE_EROFS_ZREUSE=0: none, for the
 * tests); _take gives a copy of the bytes and extents (EXT_BYTES of them)
 * a member left, when its digest is N's; _done ends N's part, leaving
 * OUT (OUTLEN bytes, NULL: none) and EXT for the members after it; _free
 * returns the count of files that took bytes, and in *LATER that of the
 * members after the first of each group. */
uint64_t erofs_zreuse_head(const uint8_t *p, size_t len);
int erofs_zreuse_group(struct erofs_build *b, struct erofs_node **files,
		       size_t nfiles, uint64_t max_size);
bool erofs_zreuse_take(struct erofs_build *b, struct erofs_node *n,
		       uint8_t **out, size_t *outlen, void **ext,
		       size_t *ext_bytes);
void erofs_zreuse_done(struct erofs_build *b, struct erofs_node *n,
		       const uint8_t *out, size_t outlen, const void *ext,
		       size_t ext_bytes);
uint64_t erofs_zreuse_free(struct erofs_build *b, uint64_t *later);
int erofs_write_compressed(struct erofs_build *b);
/* bytes of a compressed inode's map header and index after its xattrs
 * (HEAD is inode + xattr bytes) */
bool erofs_zindex_compact(const struct erofs_build *b);
uint64_t erofs_zindex_size(const struct erofs_build *b,
			   const struct erofs_node *n, uint32_t head);
size_t erofs_compr_cfgs_encode(const struct erofs_build *b, uint8_t *out);
/* compress FILES[0..N) after every block so far (b->total_blocks) */
int erofs_compress_files(struct erofs_build *b, struct erofs_node **files,
			 size_t n);
/* fragment.c: -E fragments and dedupe.  Store N's LEN bytes (SHA-256 SHA)
 * in the packed inode, or find them there: their offset in *OFF (until
 * erofs_write_packed reorders the packed inode and rewrites it) */
int erofs_frag_store(struct erofs_build *b, const struct erofs_node *n,
		     const uint8_t *data, size_t len, const uint8_t *sha,
		     uint64_t *off);
/* the first earlier file with N's content (n->digest, size), or NULL (N is
 * then recorded) */
struct erofs_node *erofs_dedupe_match(struct erofs_build *b,
				      struct erofs_node *n);
/* compress the packed inode after all data and place its record */
int erofs_write_packed(struct erofs_build *b);
void erofs_frag_tables_free(struct erofs_build *b);
/* segdedupe.c: -E dedupe of segments.  One pcluster written: RH is the
 * rolling hash of its first block of uncompressed bytes, which are N's
 * from logical byte LA on */
struct erofs_seg {
	uint64_t rh;
	const struct erofs_node *n;
	uint64_t la;
	uint32_t len;		/* uncompressed bytes */
	uint32_t blk;		/* first block */
	uint32_t cblks;
	bool plain;
	uint8_t sha[32];	/* SHA-256 of the LEN bytes as compressed */
};
int erofs_seg_add(struct erofs_build *b, const struct erofs_seg *e);
/* the rolling hash of the block at P */
uint64_t erofs_seg_hash(const struct erofs_build *b, const uint8_t *p);
/* From window *AT of BUF (AVAIL bytes) on, while *AT < END (END + one
 * block <= AVAIL + 1): true at the first window whose hash *H may be in
 * the table.  *H holds the hash of window *AT when *HAVE. */
bool erofs_seg_scan(const struct erofs_build *b, const uint8_t *buf,
		    size_t avail, size_t *at, size_t end, uint64_t *h,
		    bool *have);
/* past window *AT (its hash *H rolled to the next window when BUF has
 * its last byte) */
void erofs_seg_step(const struct erofs_build *b, const uint8_t *buf,
		    size_t avail, size_t *at, uint64_t *h, bool *have);
/* the entries of hash H, one a call (*CURSOR starts at 0), then NULL */
const struct erofs_seg *erofs_seg_next(const struct erofs_build *b,
				       uint64_t h, size_t *cursor);
/* SHA: the SHA-256 of the LEN bytes at P */
void erofs_seg_digest(const uint8_t *p, uint32_t len, uint8_t sha[32]);
/* *COMMON: how many of the first LEN bytes of DATA (at most E->len) are
 * E's content, read again into SCRATCH from its source: 0 when what is
 * read is not what was compressed (E->sha; the file changed since);
 * 0 or -errno */
int erofs_seg_common(struct erofs_build *b, const struct erofs_seg *e,
		     const uint8_t *data, uint32_t len, uint8_t *scratch,
		     uint32_t *common);
/* -E dedupe: the fewest blocks of an earlier pcluster's content that a
 * partial reference shares (an extent but the last spans a block) */
#define SEG_MIN_PARTIAL	1u
void erofs_seg_free(struct erofs_build *b);
/* after the plan: FILES left uncompressed whose content another of them
 * has (with -E fragments: all of them) are compressed too, so that
 * -E dedupe can share them */
int erofs_seg_twins(struct erofs_build *b, struct erofs_node **files,
		    size_t nfiles);
/* the on-disk algorithm (Z_EROFS_COMPRESSION_*) of configuration Z of
 * -z, and the bitmap of those of all of them */
unsigned int erofs_compr_alg(const struct erofs_zcfg *z);
unsigned int erofs_compr_algs(const struct erofs_mkfs_opts *o);
/* the pcluster blocks of N's extents */
static inline uint32_t erofs_node_pcl(const struct erofs_build *b,
				      const struct erofs_node *n)
{
	return n->zpcl ? n->zpcl : b->pcl_def;
}
/* zhints.c: --compress-hints.  Load the file (errors reported); give N
 * (at PATH in the image, no leading '/') its pcluster blocks (0: left
 * uncompressed) and configuration; the largest pcluster of the hints */
int erofs_zhints_load(struct erofs_build *b);
void erofs_zhint_apply(const struct erofs_build *b, struct erofs_node *n,
		       const char *path);
uint32_t erofs_zhints_max_pcl(const struct erofs_build *b);
void erofs_zhints_free(struct erofs_build *b);
/* zliterals.c: whether no 4-byte group starting in SRC's first CAP bytes
 * (LEN bytes in all) repeats an earlier one, so that LZ4 into CAP bytes
 * can write literals only (false also when CAP is above the table's);
 * the table for CAP bytes */
struct erofs_grams {
	uint32_t *val, *stamp;
	uint32_t mask, shift, cap, now;
};
int erofs_grams_init(struct erofs_grams *g, uint32_t cap);
void erofs_grams_free(struct erofs_grams *g);
bool erofs_lz4_literals_only(struct erofs_grams *g, const uint8_t *src,
			     uint32_t len, uint32_t cap);
/* data.c: "<dir>/<name>" of N relative to the source (0 or -errno) */
int erofs_node_relpath(const struct erofs_node *n, char *buf, size_t size);
/* chunk.c: the chunk-based files (every uncompressed regular file when
 * --chunksize is given), after every other data block: holes found with
 * SEEK_DATA/SEEK_HOLE and all-zero chunks left unstored, identical chunks
 * stored once; fills each file's block map and fingerprint */
int erofs_write_chunked(struct erofs_build *b);
/* bytes of a chunked inode's block map or chunk indexes after inode and
 * xattrs (HEAD is inode + xattr bytes), alignment padding included */
uint64_t erofs_chunkmap_size(const struct erofs_build *b,
			     const struct erofs_node *n, uint32_t head);
/* the chunk size of N: --chunksize, or for --tar=i|headerball one chunk
 * for the whole file (as erofs-utils; at most 2^31 blocks) */
unsigned int erofs_node_chunkbits(const struct erofs_build *b,
				  const struct erofs_node *n);
/* the file data lives outside the image: index mode or headerball */
static inline bool erofs_tar_index(const struct erofs_build *b)
{
	return b->opts->tar_mode == EROFS_TAR_INDEX ||
	       b->opts->tar_mode == EROFS_TAR_HEADERBALL;
}
/* record.c: the record parts the data passes make, written to the
 * metadata area as soon as they are made (N's nid is laid out): the bytes
 * of inode and xattrs (HEAD); N's inline tail, TAIL[0..inline_size); N's
 * index ZINDEX (laid out as inode.c copies it, taken) and its ztailpacking
 * tail (from the tail spool); the index of a placed N read back into *ZINDEX
 * (malloc'd).  0 or a negative errno */
uint32_t erofs_record_head(const struct erofs_node *n);
int erofs_place_tail(struct erofs_build *b, struct erofs_node *n,
		     const uint8_t *tail);
int erofs_place_zindex(struct erofs_build *b, struct erofs_node *n,
		       uint8_t *zindex);
int erofs_read_zindex(struct erofs_build *b, const struct erofs_node *n,
		      uint8_t **zindex);
/* tailspool.c: a spool file in erofs_spool_dir() ($TMPDIR, else /tmp):
 * O_TMPFILE, else named mkfs.erofs-TAG.XXXXXX and unlinked at once: its
 * descriptor, or -EIO once reported as "cannot make the spool file of
 * WHAT in DIR: why" */
const char *erofs_spool_dir(void);
int erofs_spool_open(struct erofs_build *b, const char *tag, const char *what);
/* all LEN bytes at OFF of a spool file, read or written (WR): 0, or
 * -errno (-EIO for a spool shorter than written) */
int erofs_spool_io(int fd, uint8_t *buf, size_t len, uint64_t off, bool wr);
/* tailspool.c: the spool of -E ztailpacking's tails (an erofs_spool_open
 * file); N's inline_size bytes spilled (n->ztail_off set) and read back
 * into BUF.  0 or -EIO, reported (never ENOSPC, which mkfs takes for
 * no room beside the image) */
int erofs_tail_spool_open(struct erofs_build *b);
void erofs_tail_spool_close(struct erofs_build *b);
int erofs_tail_spill(struct erofs_build *b, struct erofs_node *n,
		     const uint8_t *bytes);
int erofs_tail_load(struct erofs_build *b, const struct erofs_node *n,
		    uint8_t *buf);
/* dir.c: directory and symlink contents */
int erofs_write_dirs_and_symlinks(struct erofs_build *b);

/* metadata.c: the inodes, shared xattrs and superblock, after all data;
 * with -z and 2+ workers the chunks few compressed records live in can be
 * written while the compressed files are (write early: once the file
 * data and directories are written, beside the compressed files) */
int erofs_meta_write_early(struct erofs_build *b);
int erofs_write_metadata(struct erofs_build *b);
void erofs_meta_free(struct erofs_build *b);
uint64_t erofs_node_dir_size(const struct erofs_build *b,
			     const struct erofs_node *n);
/* inode.c: inode records into the metadata buffer */
void erofs_inode_encode(const struct erofs_build *b, const struct erofs_node *n,
			uint8_t *meta);
uint8_t erofs_file_type(uint32_t mode);
/* super.c: the superblock */
void erofs_super_encode(const struct erofs_build *b, uint8_t *meta);

void erofs_tree_free(struct erofs_build *b);

static inline uint64_t erofs_round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

#endif
