/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * EROFS on-disk format, as read by Linux 7.x (fs/erofs).  Written for fsforge
 * from the format documentation; every field is little-endian on disk and is
 * converted with htole*() by the encoders in liberofs.
 */
#ifndef FSFORGE_EROFS_FS_H
#define FSFORGE_EROFS_FS_H

#include <assert.h>
#include <stdint.h>

#define EROFS_SUPER_MAGIC	0xE0F5E1E2u
#define EROFS_SUPER_OFFSET	1024u
#define EROFS_SLOT_SIZE		32u	/* nid unit: inodes are 32-byte aligned */
#define EROFS_NAME_LEN		255u

/* feature_compat: a reader that does not know a bit may still mount */
#define EROFS_COMPAT_SB_CHKSUM		0x00000001u
#define EROFS_COMPAT_MTIME		0x00000002u	/* compact i_mtime valid */
#define EROFS_COMPAT_XATTR_FILTER	0x00000004u
#define EROFS_COMPAT_PLAIN_XATTR_PFX	0x00000010u
#define EROFS_COMPAT_ISHARE_XATTRS	0x00000020u
/* feature_incompat: a reader that does not know a bit must refuse */
#define EROFS_INCOMPAT_ZERO_PADDING	0x00000001u	/* lz4 data ends its pcluster */
#define EROFS_INCOMPAT_COMPR_CFGS	0x00000002u	/* configs after the sb */
#define EROFS_INCOMPAT_BIG_PCLUSTER	0x00000002u	/* (same bit) */
#define EROFS_INCOMPAT_CHUNKED_FILE	0x00000004u	/* chunk-based inodes */
#define EROFS_INCOMPAT_DEVICE_TABLE	0x00000008u	/* extra devices */
#define EROFS_INCOMPAT_ZTAILPACKING	0x00000010u	/* inline pclusters */
#define EROFS_INCOMPAT_FRAGMENTS	0x00000020u	/* packed inode */
#define EROFS_INCOMPAT_DEDUPE		0x00000020u	/* (same bit) */
#define EROFS_INCOMPAT_XATTR_PREFIXES	0x00000040u

struct erofs_super_block {
	uint32_t magic;			/* 0x00 */
	uint32_t checksum;		/* 0x04 crc32c of the superblock block */
	uint32_t feature_compat;	/* 0x08 */
	uint8_t blkszbits;		/* 0x0c */
	uint8_t sb_extslots;		/* 0x0d */
	uint16_t rootnid_2b;		/* 0x0e */
	uint64_t inos;			/* 0x10 */
	uint64_t epoch;			/* 0x18 base of compact inode mtimes */
	uint32_t fixed_nsec;		/* 0x20 nsec of every compact inode */
	uint32_t blocks_lo;		/* 0x24 */
	uint32_t meta_blkaddr;		/* 0x28 */
	uint32_t xattr_blkaddr;		/* 0x2c */
	uint8_t uuid[16];		/* 0x30 */
	uint8_t volume_name[16];	/* 0x40 */
	uint32_t feature_incompat;	/* 0x50 */
	uint16_t available_compr_algs;	/* 0x54 bitmap with COMPR_CFGS, else
					 * the lz4 window (lz4_max_distance) */
	uint16_t extra_devices;		/* 0x56 */
	uint16_t devt_slotoff;		/* 0x58 */
	uint8_t dirblkbits;		/* 0x5a */
	uint8_t xattr_prefix_count;	/* 0x5b */
	uint32_t xattr_prefix_start;	/* 0x5c in 4-byte units */
	uint64_t packed_nid;		/* 0x60 */
	uint8_t xattr_filter_reserved;	/* 0x68 */
	uint8_t ishare_xattr_prefix_id;	/* 0x69 */
	uint8_t reserved[2];		/* 0x6a */
	uint32_t build_time;		/* 0x6c seconds after epoch */
	uint64_t rootnid_8b;		/* 0x70 */
	uint64_t reserved2;		/* 0x78 */
} __attribute__((packed));
static_assert(sizeof(struct erofs_super_block) == 128, "superblock size");

/* i_format: bit 0 version, bits 1-3 data layout */
#define EROFS_INODE_COMPACT		0u
#define EROFS_INODE_EXTENDED		1u
#define EROFS_LAYOUT_FLAT_PLAIN		0u
#define EROFS_LAYOUT_COMPRESSED_FULL	1u	/* one 8-byte index per lcluster */
#define EROFS_LAYOUT_FLAT_INLINE	2u
#define EROFS_LAYOUT_COMPRESSED_COMPACT	3u	/* 4-byte packed indexes */
#define EROFS_LAYOUT_CHUNK_BASED	4u	/* chunk block map or indexes */
#define EROFS_I_LAYOUT_SHIFT		1u

struct erofs_inode_compact {
	uint16_t i_format;		/* 0x00 */
	uint16_t i_xattr_icount;	/* 0x02 */
	uint16_t i_mode;		/* 0x04 */
	uint16_t i_nlink;		/* 0x06 */
	uint32_t i_size;		/* 0x08 */
	uint32_t i_mtime;		/* 0x0c seconds after sb epoch */
	uint32_t i_u;			/* 0x10 start block or rdev */
	uint32_t i_ino;			/* 0x14 */
	uint16_t i_uid;			/* 0x18 */
	uint16_t i_gid;			/* 0x1a */
	uint32_t i_reserved;		/* 0x1c */
} __attribute__((packed));
static_assert(sizeof(struct erofs_inode_compact) == 32, "compact inode");

struct erofs_inode_extended {
	uint16_t i_format;		/* 0x00 */
	uint16_t i_xattr_icount;	/* 0x02 */
	uint16_t i_mode;		/* 0x04 */
	uint16_t i_nb;			/* 0x06 start block high bits */
	uint64_t i_size;		/* 0x08 */
	uint32_t i_u;			/* 0x10 */
	uint32_t i_ino;			/* 0x14 */
	uint32_t i_uid;			/* 0x18 */
	uint32_t i_gid;			/* 0x1c */
	uint64_t i_mtime;		/* 0x20 */
	uint32_t i_mtime_nsec;		/* 0x28 */
	uint32_t i_nlink;		/* 0x2c */
	uint8_t i_reserved2[16];	/* 0x30 */
} __attribute__((packed));
static_assert(sizeof(struct erofs_inode_extended) == 64, "extended inode");

/* inline xattr body: header, shared ids, then entries */
struct erofs_xattr_ibody_header {
	uint32_t h_name_filter;		/* bloom filter, bit set = absent */
	uint8_t h_shared_count;
	uint8_t h_reserved2[7];
} __attribute__((packed));
static_assert(sizeof(struct erofs_xattr_ibody_header) == 12, "xattr header");

struct erofs_xattr_entry {
	uint8_t e_name_len;
	uint8_t e_name_index;
	uint16_t e_value_size;
} __attribute__((packed));
static_assert(sizeof(struct erofs_xattr_entry) == 4, "xattr entry");

#define EROFS_XATTR_INDEX_USER			1u
#define EROFS_XATTR_INDEX_POSIX_ACL_ACCESS	2u
#define EROFS_XATTR_INDEX_POSIX_ACL_DEFAULT	3u
#define EROFS_XATTR_INDEX_TRUSTED		4u
#define EROFS_XATTR_INDEX_LUSTRE		5u
#define EROFS_XATTR_INDEX_SECURITY		6u
#define EROFS_XATTR_LONG_PREFIX			0x80u
#define EROFS_XATTR_LONG_PREFIX_MASK		0x7fu
#define EROFS_XATTR_FILTER_BITS			32u
#define EROFS_XATTR_FILTER_SEED			0x25BBE08Fu
#define EROFS_XATTR_MAX_VALUE			0xffffu

struct erofs_dirent {
	uint64_t nid;
	uint16_t nameoff;
	uint8_t file_type;
	uint8_t reserved;
} __attribute__((packed));
static_assert(sizeof(struct erofs_dirent) == 12, "dirent");

enum {
	EROFS_FT_UNKNOWN = 0,
	EROFS_FT_REG_FILE = 1,
	EROFS_FT_DIR = 2,
	EROFS_FT_CHRDEV = 3,
	EROFS_FT_BLKDEV = 4,
	EROFS_FT_FIFO = 5,
	EROFS_FT_SOCK = 6,
	EROFS_FT_SYMLINK = 7,
};

static inline uint32_t erofs_xattr_ibody_size(uint16_t icount)
{
	return icount ? (uint32_t)sizeof(struct erofs_xattr_ibody_header) +
			(uint32_t)(icount - 1) * 4u : 0u;
}

static inline uint32_t erofs_xattr_entry_size(uint32_t name_len,
					      uint32_t value_len)
{
	return (uint32_t)(sizeof(struct erofs_xattr_entry) + name_len +
			  value_len + 3u) & ~3u;
}

/*
 * Compressed files (fs/erofs/zmap.c).  A file is cut into logical clusters
 * (lclusters, here one block each) and into extents, each decoded from one
 * physical cluster (pcluster) of whole blocks.  After the inode and its
 * xattrs, 8-byte aligned: the map header, 8 unused bytes, then (full
 * indexes) one lcluster index per lcluster of the file.  The lcluster where
 * an extent starts is its HEAD (di_clusterofs: where in it the extent
 * starts; blkaddr: the pcluster), the others NONHEAD (delta[0] back to the
 * head, delta[1] on to the next head).  With big pclusters the first
 * NONHEAD of a compressed extent holds its block count in delta[0] instead,
 * flagged by Z_EROFS_LI_D0_CBLKCNT.  PLAIN heads are stored raw, one
 * lcluster, the extent's bytes from the pcluster's start.  With
 * ZERO_PADDING, lz4 data ends its pcluster and zeros lead; the other
 * algorithms always end their pcluster so (the reader skips the leading
 * zeros to find the compressed size, so a stream never starts with 0).
 */
#define Z_EROFS_COMPRESSION_LZ4		0u
#define Z_EROFS_COMPRESSION_LZMA	1u	/* MicroLZMA */
#define Z_EROFS_COMPRESSION_DEFLATE	2u	/* raw deflate */
#define Z_EROFS_COMPRESSION_ZSTD	3u	/* one zstd frame */
#define Z_EROFS_ADVISE_COMPACTED_2B	0x0001u	/* 2-byte compact entries */
#define Z_EROFS_ADVISE_BIG_PCLUSTER_1	0x0002u
#define Z_EROFS_ADVISE_BIG_PCLUSTER_2	0x0004u
#define Z_EROFS_ADVISE_INLINE_PCLUSTER	0x0008u	/* tail after the index */
#define Z_EROFS_ADVISE_FRAGMENT_PCLUSTER 0x0020u	/* tail in the packed inode */
/* h_clusterbits bit 7: the whole file is in the packed inode; the other 63
 * bits of the little-endian map header are its offset there */
#define Z_EROFS_FRAGMENT_INODE_BIT	7
#define Z_EROFS_LCLUSTER_TYPE_PLAIN	0u
#define Z_EROFS_LCLUSTER_TYPE_HEAD1	1u
#define Z_EROFS_LCLUSTER_TYPE_NONHEAD	2u
#define Z_EROFS_LI_D0_CBLKCNT		(1u << 11)
/* full indexes, a compressed head: the extent is only the first bytes of
 * what its pcluster decodes to (another extent's pcluster, shared) */
#define Z_EROFS_LI_PARTIAL_REF		(1u << 15)
#define Z_EROFS_PCLUSTER_MAX_SIZE	(1024u * 1024u)
#define Z_EROFS_PCLUSTER_MAX_DSIZE	(12u * 1024u * 1024u)

struct z_erofs_map_header {
	uint16_t h_reserved1;		/* with h_idata_size, h_fragmentoff:
					 * a tail's offset in the packed inode */
	uint16_t h_idata_size;		/* ztailpacking: inline tail size */
	uint16_t h_advise;
	uint8_t h_algorithmtype;	/* bits 0-3 HEAD1, 4-7 HEAD2 */
	uint8_t h_clusterbits;		/* lcluster bits - block bits */
} __attribute__((packed));
static_assert(sizeof(struct z_erofs_map_header) == 8, "map header");

struct z_erofs_lcluster_index {
	uint16_t di_advise;		/* bits 0-1: lcluster type */
	uint16_t di_clusterofs;
	union {
		uint32_t blkaddr;	/* HEAD: the pcluster */
		uint16_t delta[2];	/* NONHEAD */
	} di_u;
} __attribute__((packed));
static_assert(sizeof(struct z_erofs_lcluster_index) == 8, "lcluster index");

/* lz4 settings, stored after the superblock with COMPR_CFGS (le16 size
 * first, 4-byte aligned) */
struct z_erofs_lz4_cfgs {
	uint16_t max_distance;
	uint16_t max_pclusterblks;
	uint8_t reserved[10];
} __attribute__((packed));
static_assert(sizeof(struct z_erofs_lz4_cfgs) == 14, "lz4 cfgs");

/* With COMPR_CFGS, available_compr_algs is a bitmap of the algorithms
 * used; one record per bit, lowest first, each 4-byte aligned. */
struct z_erofs_lzma_cfgs {
	uint32_t dict_size;		/* at most 8 MiB */
	uint16_t format;		/* 0: MicroLZMA */
	uint8_t reserved[8];
} __attribute__((packed));
static_assert(sizeof(struct z_erofs_lzma_cfgs) == 14, "lzma cfgs");
#define Z_EROFS_LZMA_MAX_DICT_SIZE	(8u * Z_EROFS_PCLUSTER_MAX_SIZE)

struct z_erofs_deflate_cfgs {
	uint8_t windowbits;		/* at most 15 */
	uint8_t reserved[5];
} __attribute__((packed));
static_assert(sizeof(struct z_erofs_deflate_cfgs) == 6, "deflate cfgs");

struct z_erofs_zstd_cfgs {
	uint8_t format;			/* 0: zstd frames */
	uint8_t windowlog;		/* window log - 10, at most 10 */
	uint8_t reserved[4];
} __attribute__((packed));
static_assert(sizeof(struct z_erofs_zstd_cfgs) == 6, "zstd cfgs");

/*
 * Chunk-based files (EROFS_LAYOUT_CHUNK_BASED).  The file is cut into
 * chunks of (block size << (format & BLKBITS_MASK)) bytes, the last one
 * short.  i_u holds the chunk format (low 16 bits).  After the inode and
 * its xattrs, aligned to the entry size, one entry per chunk: without
 * CHUNK_FORMAT_INDEXES a 4-byte block map (le32 start block), with it an
 * 8-byte index (start block high bits, device id, start block low bits).
 * A chunk's data is contiguous from its start block; the null address
 * (all ones in the low 32 bits) is a hole that reads as zeros.
 */
#define EROFS_CHUNK_FORMAT_BLKBITS_MASK	0x001fu
#define EROFS_CHUNK_FORMAT_INDEXES	0x0020u
#define EROFS_CHUNK_FORMAT_48BIT	0x0040u
#define EROFS_BLOCK_MAP_ENTRY_SIZE	4u
#define EROFS_NULL_ADDR			0xffffffffu

struct erofs_inode_chunk_index {
	uint16_t startblk_hi;		/* with 48-bit addressing */
	uint16_t device_id;		/* 0: the primary device */
	uint32_t startblk_lo;
} __attribute__((packed));
static_assert(sizeof(struct erofs_inode_chunk_index) == 8, "chunk index");


/*
 * Device table (EROFS_INCOMPAT_DEVICE_TABLE): extra_devices slots of 128
 * bytes at byte devt_slotoff * 128 of the image.  Slot k describes device
 * k + 1, which chunk indexes name by device_id; the tag identifies it (a
 * digest or a path; zeros here).  uniaddr is where the device's blocks
 * would start in one flat address space after the primary device.
 */
#define EROFS_DEVT_SLOT_SIZE		128u

struct erofs_deviceslot {
	uint8_t tag[64];
	uint32_t blocks_lo;		/* device size in blocks */
	uint32_t uniaddr_lo;
	uint32_t blocks_hi;
	uint16_t uniaddr_hi;
	uint8_t reserved[50];
} __attribute__((packed));
static_assert(sizeof(struct erofs_deviceslot) == EROFS_DEVT_SLOT_SIZE,
	      "device slot");

#endif
