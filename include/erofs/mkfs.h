/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * liberofs image builder: everything mkfs.erofs does, as one call.
 * The options are plain data filled by the tool; the library keeps no
 * global state and reports through the caller's fsf_log.
 */
#ifndef FSFORGE_EROFS_MKFS_H
#define FSFORGE_EROFS_MKFS_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fsforge/log.h"

#define EROFS_DEFAULT_DIGEST_NAME "erofs.fingerprint.v1"
/* -z A:B:...: at most this many compression configurations */
#define EROFS_MKFS_MAX_ZCFGS 8

struct erofs_mkfs_opts {
	const char *image;		/* output file or block device */
	const char *source;		/* source directory, or with tar_mode
					 * the tar file (NULL or "-": stdin) */
	enum erofs_tar_mode {
		EROFS_TAR_NONE, EROFS_TAR_FULL, EROFS_TAR_INDEX,
		EROFS_TAR_HEADERBALL,
	} tar_mode;			/* --tar=f, i (metadata only, file
					 * data mapped to the tar as device 1)
					 * or headerball (no file data follows
					 * the headers: files are holes) */
	enum erofs_tar_codec {
		EROFS_TAR_PLAIN, EROFS_TAR_GZIP, EROFS_TAR_XZ, EROFS_TAR_ZSTD,
	} tar_codec;			/* --ungzip, --unxz, --unzstd */
	const char *tar_dump;		/* --ungzip=FILE (and --unxz=, --unzstd=):
					 * the decompressed archive written
					 * to FILE too (the device --tar=i
					 * maps its files to) */
	bool aufs;			/* --aufs: .wh. entries to overlayfs */
	bool sort_none;			/* --sort=none: uncompressed files'
					 * blocks in archive order (default
					 * --sort=path: in the image's order) */
	bool ovlfs_strip;		/* --ovlfs-strip: no whiteouts, no
					 * opaque marks */
	/* --oci: source is a local OCI image layout directory (with
	 * tar_mode EROFS_TAR_FULL); its image's layers are read as tars */
	bool oci;
	const char *oci_platform;	/* platform=OS/ARCH[/VARIANT] */
	int64_t oci_layer;		/* layer=N (0-based); -1: all */
	const char *oci_blob;		/* blob=sha256:HEX; NULL: by layer */
	unsigned int blkszbits;		/* -b: log2 of the block size */
	char label[16];			/* -L, NUL-terminated, <= 15 bytes */
	uint8_t uuid[16];		/* -U (see uuid_mode) */
	enum { EROFS_UUID_RANDOM, EROFS_UUID_GIVEN } uuid_mode;
	int64_t build_time;		/* seconds since the epoch */
	bool all_time;			/* every file takes build_time */
	bool clamp_time;		/* files newer than build_time take it
					 * (SOURCE_DATE_EPOCH) */
	bool free_epoch;		/* no -T nor SOURCE_DATE_EPOCH: the
					 * compact inodes' base time may be
					 * the oldest file's (layout.c) */
	bool ignore_mtime;		/* --ignore-mtime */
	bool all_root;			/* --all-root */
	int64_t force_uid, force_gid;	/* -1 when not forced */
	int64_t uid_offset, gid_offset;
	const char *const *exclude_paths;	/* --exclude-path */
	size_t n_exclude_paths;
	const regex_t *exclude_regexes;		/* --exclude-regex */
	size_t n_exclude_regexes;
	int xattr_tolerance;		/* -x: shared when used by more inodes;
					 * < 0 drops all xattrs */
	const char *const *xattr_prefixes;	/* --xattr-prefix */
	size_t n_xattr_prefixes;
	const char *digest_name;	/* --xattr-inode-digest, NULL = off */
	unsigned int workers;		/* threads reading/hashing files */
	/* -z ALG[,level=N][,dictsize=N][:ALG...]: the compression
	 * configurations, zcfgs[0] the primary one every file uses unless a
	 * compress hint names another; nzcfgs 0: no compression */
	struct erofs_zcfg {
		enum erofs_compr {
			EROFS_COMPR_NONE, EROFS_COMPR_LZ4, EROFS_COMPR_LZ4HC,
			EROFS_COMPR_LZMA, EROFS_COMPR_DEFLATE, EROFS_COMPR_ZSTD,
		} compr;
		int level;		/* -1: the default (lzma: 100-109 =
					 * extreme 0-9) */
		uint32_t dictsize;	/* lzma dictionary, zstd window;
					 * 0: the default */
	} zcfgs[EROFS_MKFS_MAX_ZCFGS];
	unsigned int nzcfgs;
	const char *compress_hints;	/* --compress-hints=FILE: lines
					 * PCLUSTER_SIZE [ZCFG_INDEX] REGEX */
	uint32_t pcluster_size;		/* -C bytes; 0: one block */
	uint32_t max_extent_bytes;	/* --max-extent-bytes; 0: default */
	bool legacy_compress;		/* -E legacy-compress: full indexes */
	bool ztailpacking;		/* -E ztailpacking: a small file's
					 * compressed data inline */
	bool fragments;			/* -E fragments: tails (and files up
					 * to a pcluster) in the packed inode */
	bool all_fragments;		/* -E all-fragments: whole files */
	uint32_t packed_pcluster;	/* -E fragments=SIZE: the packed
					 * inode's pcluster bytes; 0: -C's */
	bool dedupe;			/* -E dedupe: identical files share
					 * their compressed extents */
	uint64_t chunk_size;		/* --chunksize: uncompressed regular
					 * files as chunk-based inodes (holes,
					 * deduplicated chunks); 0: off */
	const char *blobdev;		/* --blobdev: chunk data on this
					 * extra device, not in the image */
	bool noinline_data;		/* -E noinline_data */
	bool force_extended;		/* -E force-inode-extended */
	bool force;			/* overwrite an existing signature */
	bool in_place;			/* write an image file directly, not
					 * through a temporary copy + rename */
	bool dry_run;			/* plan only, write nothing */
	bool progress;			/* progress line on a terminal */
};

struct erofs_mkfs_stats {
	uint64_t blocks;		/* image size in blocks */
	uint64_t inodes;
	uint64_t meta_bytes;		/* superblock + inodes + xattrs */
	uint64_t data_bytes;		/* file and directory data blocks */
	uint64_t fingerprints;		/* regular files given a digest */
	uint64_t compressed;		/* regular files stored compressed */
	uint64_t chunked;		/* regular files stored in chunks */
	uint64_t hole_chunks;		/* chunks stored as holes */
	uint64_t dedup_chunks;		/* chunks sharing an earlier copy */
	uint64_t dev_blocks;		/* extra device 1 (--tar=i, --blobdev):
					 * its blocks; 0: none */
	uint8_t uuid[16];
};

void erofs_mkfs_opts_init(struct erofs_mkfs_opts *o);
/* Build the image.  0 on success, else a negative errno (already reported);
 * on failure no image is left under opts->image (block devices excepted,
 * whose superblock is never written). */
int erofs_mkfs(const struct erofs_mkfs_opts *opts, const struct fsf_log *log,
	       struct erofs_mkfs_stats *stats);

#endif
