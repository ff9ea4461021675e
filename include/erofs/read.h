/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * liberofs read side: bounded parsers over an image read with pread from
 * a file descriptor (read_cache.c: metadata through a small cache, file
 * content through one bounded buffer).  No function trusts an offset or
 * length from the image before checking it against the image size; on
 * bad input each returns -EUCLEAN (corrupt) or -EOPNOTSUPP and leaves a
 * one-line reason, with the byte offset, in img->err (a failed read:
 * -EIO).  One struct erofs_img is used by one thread at a time; another
 * thread reads through its own erofs_img_clone().
 * The on-disk layouts are those of erofs/erofs_fs.h, shared with mkfs.
 */
#ifndef FSFORGE_EROFS_READ_H
#define FSFORGE_EROFS_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EROFS_READ_MAX_PREFIXES 128u
/* longest extent we decode (the kernel's limit is 12 MiB) */
#define EROFS_READ_MAX_EXTENT	(16u << 20)

struct erofs_rprefix {
	uint8_t base_index;
	const uint8_t *infix;
	uint16_t infix_len;
};

/* extra devices (the device table): their size from the table, and the
 * content when the caller attached it (erofs_img_attach) */
#define EROFS_READ_MAX_DEVICES 64u
struct erofs_rdevice {
	uint64_t blocks;		/* from its slot */
	bool attached;
	int fd;				/* when attached */
	uint64_t size;			/* its bytes */
};

/* erofs_img_at pointers stay valid across this many later calls */
#define EROFS_READ_LIVE 7u
struct erofs_rcache;

struct erofs_img {
	int fd;
	uint64_t size;
	/* superblock, host order */
	uint32_t blkszbits, blksz;
	uint32_t feature_compat, feature_incompat;
	uint32_t checksum;
	uint64_t root_nid, inos, epoch, blocks;
	uint32_t fixed_nsec;
	uint64_t meta_off;		/* byte offset of nid 0 */
	uint64_t xattr_off;		/* byte offset of shared xattr id 0 */
	uint16_t compr_algs;		/* bitmap with COMPR_CFGS */
	uint8_t ishare_prefix;		/* with COMPAT_ISHARE_XATTRS */
	uint32_t nprefixes;
	struct erofs_rprefix prefixes[EROFS_READ_MAX_PREFIXES];
	uint64_t packed_nid;		/* with INCOMPAT_FRAGMENTS, 0: none */
	/* the packed inode's content, decoded on first use (fragments) */
	uint8_t *packed;
	uint64_t packed_len;
	int packed_err;			/* its load failed: this error */
	bool in_packed;			/* loading it (no fragments in it) */
	uint32_t ndevices;		/* extra devices: device id k is
					 * devices[k - 1] */
	struct erofs_rdevice devices[EROFS_READ_MAX_DEVICES];
	/* long prefixes' infixes (copies) and the packed content belong
	 * to the image opened, not to its clones */
	bool clone;
	struct erofs_rcache *cache;	/* read_cache.c: metadata windows */
	uint8_t *cbuf;			/* content read (erofs_img_read) */
	size_t ccap;
	char err[320];			/* last error: one line */
};
/* read_data.c: decode the packed inode's content into img->packed (once;
 * the long prefix table may live there) */
int erofs_packed_load(struct erofs_img *img);
/* free what reading holds (the cache, the packed inode's content); the
 * descriptors are the caller's */
void erofs_img_close(struct erofs_img *img);

/* read_super.c: check and load the superblock, the compression configs
 * and the long xattr prefix table.  0, or an error in img->err. */
#define EROFS_OPEN_NO_SBCRC	1u	/* skip the superblock checksum */
int erofs_img_open(struct erofs_img *img, int fd, uint64_t size,
		   unsigned int flags);
/* extra device ID (1..ndevices) read from FD, SIZE bytes; a device
 * shorter than its slot says is refused (-EUCLEAN, img->err) */
int erofs_img_attach(struct erofs_img *img, uint32_t id, int fd,
		     uint64_t size);

/* read_cache.c: pointer to LEN bytes at OFF (metadata: from the cache,
 * valid across the next EROFS_READ_LIVE calls), or NULL and img->err
 * when out of range or unreadable */
const uint8_t *erofs_img_at(struct erofs_img *img, uint64_t off,
			    uint64_t len, const char *what);
/* whether LEN bytes at OFF lie in the image (else img->err), nothing read */
bool erofs_img_has(struct erofs_img *img, uint64_t off, uint64_t len,
		   const char *what);
/* LEN bytes at OFF of device DEV (0: the image; the caller checked the
 * range) into the content buffer, valid until the next call; NULL and
 * img->err when the read fails */
const uint8_t *erofs_img_read(struct erofs_img *img, uint32_t dev,
			      uint64_t off, uint64_t len, const char *what);
/* a reader of the same image for another thread: its own cache, the
 * same descriptors, prefixes and packed content (load that first:
 * erofs_packed_load).  Close it (erofs_img_close) before the original. */
int erofs_img_clone(struct erofs_img *dst, const struct erofs_img *src);
/* free the cache and content buffer (erofs_img_close does it too) */
void erofs_img_drop_cache(struct erofs_img *img);
int erofs_corrupt(struct erofs_img *img, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int erofs_unsupported(struct erofs_img *img, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* read_inode.c */
struct erofs_rinode {
	uint64_t nid;
	uint64_t pos;			/* byte offset of the inode */
	bool extended;
	uint8_t layout;			/* EROFS_LAYOUT_* */
	uint32_t isize;			/* 32 or 64 */
	uint32_t xattr_isize;		/* inline xattr body bytes */
	uint16_t xattr_icount;
	uint32_t mode, nlink, uid, gid, ino;
	uint64_t size;
	int64_t mtime;
	uint32_t mtime_nsec;
	uint32_t i_u;			/* start block, rdev or compressed blocks */
};
int erofs_read_inode(struct erofs_img *img, uint64_t nid,
		     struct erofs_rinode *ino);
/* byte just after the inode and its inline xattrs */
static inline uint64_t erofs_inode_end(const struct erofs_rinode *ino)
{
	return ino->pos + ino->isize + ino->xattr_isize;
}

/* read_data.c: the content of a file, directory or symlink, in order, in
 * pieces handed to FN (which returns 0 to go on).  Compressed extents are
 * decoded (decompress.c) and checked to fill exactly their length.  A
 * hole of a chunk-based file comes as BUF == NULL: LEN bytes of zeros.
 * Every chunk address is checked against the size of its device (the
 * image, or an attached extra device; a chunk on one not attached is
 * -EOPNOTSUPP).
 * PHYS (may be NULL) gets the bytes the content occupies in the image
 * (a chunk shared by several entries counted each time). */
typedef int (*erofs_data_fn)(void *ctx, const uint8_t *buf, size_t len);
int erofs_read_data(struct erofs_img *img, const struct erofs_rinode *ino,
		    erofs_data_fn fn, void *ctx, uint64_t *phys);
/* the whole content in a malloc()ed buffer (directories, symlinks) */
int erofs_read_all(struct erofs_img *img, const struct erofs_rinode *ino,
		   uint64_t max, uint8_t **out);

/* read_zmap.c: the extents of a compressed inode, checked, handed to FN
 * in order one at a time (nothing the size of the file's extent list is
 * held); the lclusters are all checked before the first is handed over.
 * FN's nonzero return stops the walk and is returned. */
struct erofs_rextent {
	uint64_t la, llen;		/* logical bytes */
	uint64_t pa;			/* byte offset of the pcluster */
	uint32_t plen;			/* pcluster bytes */
	bool plain;			/* stored raw */
	bool interlaced;		/* raw, rotated by la % block size */
	bool frag;			/* in the packed inode at fragoff */
	bool partial;			/* the first llen bytes of what the
					 * pcluster decodes to (PARTIAL_REF) */
	uint64_t fragoff;
	uint8_t alg;			/* Z_EROFS_COMPRESSION_* */
};
typedef int (*erofs_extent_fn)(void *ctx, const struct erofs_rextent *e);
int erofs_read_zmap(struct erofs_img *img, const struct erofs_rinode *ino,
		    erofs_extent_fn fn, void *ctx);

/* decompress.c: decode SRC into exactly DLEN bytes of DST; with PREFIX,
 * DST gets the first DLEN bytes of a longer output (a partial reference) */
int erofs_decompress(struct erofs_img *img, unsigned int alg,
		     const uint8_t *src, size_t slen, uint8_t *dst,
		     size_t dlen, bool prefix);

/* read_dir.c: every entry of a directory's content (DIR, SIZE bytes), in
 * order; names are bounds-checked and sorted, nameoffs ordered. */
typedef int (*erofs_dirent_fn)(void *ctx, const char *name, size_t len,
			       uint64_t nid, unsigned int file_type);
int erofs_read_dir(struct erofs_img *img, const struct erofs_rinode *dir,
		   const uint8_t *data, uint64_t size, erofs_dirent_fn fn,
		   void *ctx);
/* the same, the content in two pieces: BLOCKS (a whole number of blocks)
 * then TAIL (the rest, SIZE - BLOCKS_LEN bytes), as a flat inline
 * directory lies in the image (read in place, no copy) */
int erofs_read_dir_split(struct erofs_img *img, const struct erofs_rinode *dir,
			 const uint8_t *blocks, uint64_t blocks_len,
			 const uint8_t *tail, uint64_t size,
			 erofs_dirent_fn fn, void *ctx);

/* read_xattr.c: every xattr of an inode (shared ones first), with its
 * full name (prefix + suffix, no NUL) and value; the name filter is
 * checked when the image has one. */
typedef int (*erofs_xattr_fn)(void *ctx, const char *name, size_t name_len,
			      const uint8_t *value, size_t value_len,
			      unsigned int name_index);
int erofs_read_xattrs(struct erofs_img *img, const struct erofs_rinode *ino,
		      erofs_xattr_fn fn, void *ctx);

#endif
