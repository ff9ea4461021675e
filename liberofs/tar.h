/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tar input, private to liberofs: the header block and pax record parsers
 * (pure functions over bytes, fuzzed by tests/fuzz/fuzz_erofs_tar.c), the
 * input stream (plain, gzip, xz/lzma, zstd) and the tree builder.
 */
#ifndef LIBEROFS_TAR_H
#define LIBEROFS_TAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "erofs/mkfs.h"
#include "fsforge/log.h"

#define TAR_BLOCK 512u
/* largest 'L'/'K'/'x'/'g' payload held in memory */
#define TAR_META_MAX (1u << 20)
/* largest size of an entry: no tar or EROFS file is near it */
#define TAR_SIZE_MAX (1ull << 62)

struct tar_extent {
	uint64_t off, len;		/* sparse data at OFF of the file */
};

/* One header block, decoded. */
struct tar_hdr {
	char type;			/* typeflag ('\0' is returned as '0') */
	char name[257];			/* POSIX prefix "/" name, or name */
	char linkname[101];
	uint32_t mode;			/* permission bits only (07777) */
	uint64_t uid, gid;
	int64_t mtime;
	uint64_t size;			/* bytes following the header */
	uint32_t devmajor, devminor;
	/* GNU sparse ('S'): the map of the header and the real size */
	struct tar_extent sp[4];
	unsigned int nsp;
	bool sp_more;			/* extension blocks follow */
	uint64_t realsize;
};

struct tar_xattr {
	char *name;
	uint8_t *value;
	size_t len;
};

/* Keywords of one pax header ('x'), or the global ones ('g'). */
struct tar_pax {
	char *path, *linkpath;
	bool has_size, has_uid, has_gid, has_mtime;
	uint64_t size, uid, gid;
	int64_t mtime;
	uint32_t mtime_nsec;
	struct tar_xattr *xattrs;
	size_t nxattrs;
	/* GNU sparse in pax: format 1.0 (map at the start of the data) */
	int sparse_major, sparse_minor;	/* -1: none */
	char *sparse_name;
	bool has_realsize;
	uint64_t realsize;
};

/* 0: a header (H filled); 1: an all-zero block; -EINVAL: malformed, *WHY
 * says how */
int tar_header_parse(const uint8_t *blk, struct tar_hdr *h, const char **why);
/* the 21 extents of a GNU sparse extension block, appended to *SP (of
 * *N, capacity grown); *MORE: another block follows */
int tar_sparse_ext_parse(const uint8_t *blk, struct tar_extent **sp,
			 size_t *n, bool *more, const char **why);
/* a numeric header field: octal (space/NUL ended) or base-256 */
int tar_number(const uint8_t *f, size_t len, int64_t *out);

void tar_pax_init(struct tar_pax *p);
void tar_pax_free(struct tar_pax *p);
/* the records of BUF (LEN bytes) into P; later records win */
int tar_pax_parse(const uint8_t *buf, size_t len, struct tar_pax *p,
		  const char **why);
/* what GLOBAL sets and P does not, copied into P */
int tar_pax_inherit(struct tar_pax *p, const struct tar_pax *global);

/* the input stream: a file descriptor, optionally decompressed */
enum tar_codec { TAR_PLAIN, TAR_GZIP, TAR_XZ, TAR_ZSTD };
struct tar_stream;
int tar_stream_open(struct tar_stream **ts, int fd, enum tar_codec codec,
		    const struct fsf_log *log, const char *name);
/* exactly LEN bytes, or -EIO at a premature end (reported by the caller) */
int tar_stream_read(struct tar_stream *ts, void *buf, size_t len);
int tar_stream_skip(struct tar_stream *ts, uint64_t len);
uint64_t tar_stream_pos(const struct tar_stream *ts);
/* the stream is the raw file, seekable: data can be read at an offset */
bool tar_stream_seekable(const struct tar_stream *ts);
/* the underlying descriptor, for reads at offsets when seekable */
int tar_stream_fd(const struct tar_stream *ts);
void tar_stream_close(struct tar_stream *ts);
/* Every decoded byte is passed to FN(ARG, BUF, LEN) as it is decoded
 * (a nonzero return stops the stream with that error);
 * tar_stream_drain decodes what the reader left, to the stream's end. */
void tar_stream_tee(struct tar_stream *ts,
		    int (*fn)(void *arg, const void *buf, size_t len),
		    void *arg);
int tar_stream_drain(struct tar_stream *ts);
/* hash the raw bytes as they are read (the stream is no longer
 * seekable): more than SIZE bytes is refused at once; DIGEST names the
 * blob in messages and must outlive the stream */
int tar_stream_verify(struct tar_stream *ts, const uint8_t want[32],
		      uint64_t size, const char *digest);
/* the rest of the file read and hashed; -EIO (reported) when the size
 * or the SHA-256 differs from what tar_stream_verify was given */
int tar_stream_verify_end(struct tar_stream *ts);

/* tar_tree.c: the tree being read (nodes by parent and name; a replaced
 * node and its subtree are dropped when the tree is finished) */
struct erofs_build;
struct erofs_node;
struct tar_tree;
/* a tree of the root alone (b->root) */
int tar_tree_new(struct tar_tree **t, struct erofs_build *b);
struct erofs_node *tar_tree_lookup(struct tar_tree *t, struct erofs_node *dir,
				   const char *s, size_t len);
/* a new node S under DIR, replacing whatever had that name */
struct erofs_node *tar_tree_add(struct tar_tree *t, struct erofs_node *dir,
				const char *s, size_t len);
/* PATH as erofs-utils walks it: *PARENT and the last component (*LEN 0:
 * the root); missing directories made when MAKE (-ENOENT otherwise);
 * -EINVAL with *WHY for a bad path */
int tar_tree_walk(struct tar_tree *t, const char *path, bool make,
		  struct erofs_node **parent, const char **last, size_t *len,
		  const char **why);
void tar_tree_mark_whiteouts(struct tar_tree *t, struct erofs_node *dir);
/* nodes made so far: the nodes of a layer read next come after */
size_t tar_tree_count(const struct tar_tree *t);
/* the live children of DIR made before node BEFORE (a lower layer's)
 * replaced by whiteouts, DIR marked to hold whiteouts */
int tar_tree_hide_below(struct tar_tree *t, struct erofs_node *dir,
			size_t before);
/* N and what is under it left out of the finished tree */
void tar_tree_drop(struct tar_tree *t, struct erofs_node *n);
void tar_node_clear_xattrs(struct erofs_node *n);
/* live nodes linked into their parents, the rest freed; overlayfs
 * metadata stripped (OVLFS_STRIP) or whiteout directories marked */
int tar_tree_finish(struct tar_tree *t, bool ovlfs_strip);
/* the table; and every node when the tree was not finished */
void tar_tree_free(struct tar_tree *t);

#endif
