// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Read side: the superblock, the compression configurations after it and
 * the long xattr prefix table, each checked before it is used.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/erofs_fs.h"
#include "erofs/format.h"
#include "erofs/read.h"

/* incompat features this reader decodes */
#define KNOWN_INCOMPAT (EROFS_INCOMPAT_ZERO_PADDING | EROFS_INCOMPAT_COMPR_CFGS | \
			EROFS_INCOMPAT_XATTR_PREFIXES | \
			EROFS_INCOMPAT_CHUNKED_FILE | EROFS_INCOMPAT_ZTAILPACKING | \
			EROFS_INCOMPAT_FRAGMENTS | EROFS_INCOMPAT_DEVICE_TABLE)

__attribute__((format(printf, 3, 0)))
static int vreport(struct erofs_img *img, int err, const char *fmt, va_list ap)
{
	vsnprintf(img->err, sizeof(img->err), fmt, ap);
	return err;
}

int erofs_corrupt(struct erofs_img *img, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vreport(img, -EUCLEAN, fmt, ap);
	va_end(ap);
	return r;
}

int erofs_unsupported(struct erofs_img *img, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vreport(img, -EOPNOTSUPP, fmt, ap);
	va_end(ap);
	return r;
}

static uint16_t le16_at(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

/* a record of the metadata stream after the superblock or in the prefix
 * table: 4-byte aligned, le16 size, then the payload */
static const uint8_t *meta_record(struct erofs_img *img, uint64_t *off,
				  uint16_t *size, const char *what)
{
	const uint8_t *p;

	*off = (*off + 3) & ~(uint64_t)3;
	p = erofs_img_at(img, *off, 2, what);
	if (!p)
		return NULL;
	*size = le16_at(p);
	p = erofs_img_at(img, *off + 2, *size, what);
	if (p)
		*off += 2u + *size;
	return p;
}

static int load_compr_cfgs(struct erofs_img *img, uint64_t off)
{
	for (unsigned int alg = 0; alg < 16; alg++) {
		const uint8_t *p;
		uint16_t size;
		uint64_t at;

		if (!(img->compr_algs & (1u << alg)))
			continue;
		if (alg > Z_EROFS_COMPRESSION_ZSTD)
			return erofs_unsupported(img, "superblock: unknown compression algorithm %u", alg);
		at = (off + 3) & ~(uint64_t)3;
		p = meta_record(img, &off, &size, "compression configuration");
		if (!p)
			return -EUCLEAN;
		switch (alg) {
		case Z_EROFS_COMPRESSION_LZ4:
			if (size < sizeof(struct z_erofs_lz4_cfgs))
				goto bad;
			break;
		case Z_EROFS_COMPRESSION_LZMA: {
			struct z_erofs_lzma_cfgs c;

			if (size < sizeof(c))
				goto bad;
			memcpy(&c, p, sizeof(c));
			if (le32toh(c.dict_size) > Z_EROFS_LZMA_MAX_DICT_SIZE ||
			    le16toh(c.format))
				goto bad;
			break;
		}
		case Z_EROFS_COMPRESSION_DEFLATE:
			if (size < sizeof(struct z_erofs_deflate_cfgs) ||
			    p[0] > 15)
				goto bad;
			break;
		default: /* zstd */
			if (size < sizeof(struct z_erofs_zstd_cfgs) || p[0])
				goto bad;
			break;
		}
		continue;
bad:
		return erofs_corrupt(img, "superblock: configuration of compression algorithm %u at byte %" PRIu64 " is invalid",
				     alg, at);
	}
	return 0;
}

static int load_prefixes(struct erofs_img *img, uint32_t count, uint32_t start)
{
	uint64_t off = (uint64_t)start * 4u;

	/* without PLAIN_XATTR_PFX the table is in the packed inode */
	const bool packed = !(img->feature_compat & EROFS_COMPAT_PLAIN_XATTR_PFX);
	int ret;

	if (!count)
		return 0;
	if (count > EROFS_READ_MAX_PREFIXES)
		return erofs_corrupt(img, "superblock: %u long xattr prefixes (at most %u)",
				     count, EROFS_READ_MAX_PREFIXES);
	if (packed) {
		if (!img->packed_nid)
			return erofs_corrupt(img, "superblock: long xattr prefixes in a packed inode, but there is none");
		ret = erofs_packed_load(img);
		if (ret)
			return ret;
	}
	for (uint32_t i = 0; i < count; i++) {
		uint64_t at = (off + 3) & ~(uint64_t)3;
		uint16_t size;
		const uint8_t *p;
		uint8_t *infix;

		if (packed) {
			off = at;
			if (off > img->packed_len || img->packed_len - off < 2 ||
			    img->packed_len - off - 2 < le16_at(img->packed + off))
				return erofs_corrupt(img, "long xattr prefix %u at byte %" PRIu64 " of the packed inode lies beyond its end",
						     i, at);
			size = le16_at(img->packed + off);
			p = img->packed + off + 2;
			off += 2u + size;
		} else {
			p = meta_record(img, &off, &size, "long xattr prefix");
		}
		if (!p)
			return -EUCLEAN;
		if (size < 1 || p[0] > EROFS_XATTR_INDEX_SECURITY)
			return erofs_corrupt(img, "long xattr prefix %u at byte %" PRIu64 ": invalid size %u or namespace",
					     i, at, size);
		infix = malloc(size);	/* a copy: P is in the cache */
		if (!infix) {
			snprintf(img->err, sizeof(img->err), "out of memory");
			return -ENOMEM;
		}
		memcpy(infix, p + 1, size - 1u);
		img->prefixes[i].base_index = p[0];
		img->prefixes[i].infix = infix;
		img->prefixes[i].infix_len = (uint16_t)(size - 1);
		img->nprefixes = i + 1;
	}
	img->nprefixes = count;
	return 0;
}

void erofs_img_close(struct erofs_img *img)
{
	erofs_img_drop_cache(img);
	if (img->clone)
		return;
	for (uint32_t i = 0; i < img->nprefixes; i++)
		free((void *)img->prefixes[i].infix);
	img->nprefixes = 0;
	free(img->packed);
	img->packed = NULL;
}

/* the device table: COUNT slots at SLOTOFF * 128 */
static int load_devices(struct erofs_img *img, uint32_t count, uint32_t slotoff)
{
	uint64_t off = (uint64_t)slotoff * EROFS_DEVT_SLOT_SIZE;

	if (count > EROFS_READ_MAX_DEVICES)
		return erofs_unsupported(img, "superblock: %u extra devices (at most %u)",
					 count, EROFS_READ_MAX_DEVICES);
	if (count && off < EROFS_SUPER_OFFSET + sizeof(struct erofs_super_block))
		return erofs_corrupt(img, "superblock: device table at byte %" PRIu64 " (slot offset at byte %u) overlaps the superblock",
				     off, EROFS_SUPER_OFFSET + 0x58);
	for (uint32_t i = 0; i < count; i++) {
		struct erofs_deviceslot d;
		const uint8_t *p = erofs_img_at(img, off + i * sizeof(d),
						sizeof(d), "device table slot");

		if (!p)
			return -EUCLEAN;
		memcpy(&d, p, sizeof(d));
		img->devices[i].blocks = le32toh(d.blocks_lo) |
					 (uint64_t)le32toh(d.blocks_hi) << 32;
	}
	img->ndevices = count;
	return 0;
}

int erofs_img_attach(struct erofs_img *img, uint32_t id, int fd,
		     uint64_t size)
{
	struct erofs_rdevice *d;

	if (!id || id > img->ndevices)
		return erofs_corrupt(img, "extra device %u: the device table has %u",
				     id, img->ndevices);
	d = &img->devices[id - 1];
	if (d->blocks > size >> img->blkszbits)
		return erofs_corrupt(img, "extra device %u holds %" PRIu64 " bytes, its slot says %" PRIu64 " blocks of %u bytes",
				     id, size, d->blocks, img->blksz);
	d->attached = true;
	d->fd = fd;
	d->size = size;
	return 0;
}

static int open_image(struct erofs_img *img, unsigned int flags);

int erofs_img_open(struct erofs_img *img, int fd, uint64_t size,
		   unsigned int flags)
{
	int ret;

	memset(img, 0, sizeof(*img));
	img->fd = fd;
	img->size = size;
	ret = open_image(img, flags);
	if (ret)
		erofs_img_close(img);	/* img->err stays */
	return ret;
}

static int open_image(struct erofs_img *img, unsigned int flags)
{
	struct erofs_super_block sb;
	const uint8_t *p;
	uint32_t crclen;
	int ret;

	p = erofs_img_at(img, EROFS_SUPER_OFFSET, sizeof(sb), "superblock");
	if (!p)
		return -EUCLEAN;
	memcpy(&sb, p, sizeof(sb));
	if (le32toh(sb.magic) != EROFS_SUPER_MAGIC)
		return erofs_corrupt(img, "superblock: bad magic 0x%08x at byte %u",
				     le32toh(sb.magic), EROFS_SUPER_OFFSET);
	img->blkszbits = sb.blkszbits;
	if (img->blkszbits < 9 || img->blkszbits > 16)
		return erofs_corrupt(img, "superblock: block size 2^%u at byte %u is out of 512..65536",
				     img->blkszbits, EROFS_SUPER_OFFSET + 0x0c);
	img->blksz = 1u << img->blkszbits;
	img->feature_compat = le32toh(sb.feature_compat);
	img->feature_incompat = le32toh(sb.feature_incompat);
	img->checksum = le32toh(sb.checksum);
	if ((img->feature_compat & EROFS_COMPAT_SB_CHKSUM) &&
	    !(flags & EROFS_OPEN_NO_SBCRC)) {
		uint8_t blk[65536];

		crclen = img->blksz > EROFS_SUPER_OFFSET ?
			 img->blksz - EROFS_SUPER_OFFSET : img->blksz;
		p = erofs_img_at(img, EROFS_SUPER_OFFSET, crclen, "superblock block");
		if (!p)
			return -EUCLEAN;
		memcpy(blk, p, crclen);
		memset(blk + 4, 0, 4);
		if (erofs_crc32c(~0u, blk, crclen) != img->checksum)
			return erofs_corrupt(img, "superblock: checksum 0x%08x at byte %u does not match its block (0x%08x)",
					     img->checksum, EROFS_SUPER_OFFSET + 4,
					     erofs_crc32c(~0u, blk, crclen));
	}
	if (img->feature_incompat & ~KNOWN_INCOMPAT)
		return erofs_unsupported(img, "superblock: unsupported incompatible features 0x%x",
					 img->feature_incompat & ~KNOWN_INCOMPAT);
	if (sb.dirblkbits)
		return erofs_unsupported(img, "superblock: directory block bits %u are not supported",
					 sb.dirblkbits);
	if (img->feature_incompat & EROFS_INCOMPAT_DEVICE_TABLE) {
		ret = load_devices(img, le16toh(sb.extra_devices),
				   le16toh(sb.devt_slotoff));
		if (ret)
			return ret;
	}
	img->root_nid = le16toh(sb.rootnid_2b);
	if (img->feature_incompat & EROFS_INCOMPAT_FRAGMENTS)
		img->packed_nid = le64toh(sb.packed_nid);
	img->inos = le64toh(sb.inos);
	img->epoch = le64toh(sb.epoch);
	img->fixed_nsec = le32toh(sb.fixed_nsec);
	img->blocks = le32toh(sb.blocks_lo);
	img->meta_off = (uint64_t)le32toh(sb.meta_blkaddr) << img->blkszbits;
	img->xattr_off = (uint64_t)le32toh(sb.xattr_blkaddr) << img->blkszbits;
	if (img->blocks > img->size >> img->blkszbits)
		return erofs_corrupt(img, "superblock: %" PRIu64 " blocks (byte %u) but the image holds %" PRIu64,
				     img->blocks, EROFS_SUPER_OFFSET + 0x24,
				     img->size >> img->blkszbits);
	if (img->meta_off >= img->size)
		return erofs_corrupt(img, "superblock: metadata block at byte %u lies beyond the image",
				     EROFS_SUPER_OFFSET + 0x28);
	if (img->nprefixes || sb.xattr_prefix_count) {
		if (!(img->feature_incompat & EROFS_INCOMPAT_XATTR_PREFIXES))
			return erofs_corrupt(img, "superblock: long xattr prefixes without their feature bit");
	}
	img->compr_algs = le16toh(sb.available_compr_algs);
	if (img->feature_incompat & EROFS_INCOMPAT_COMPR_CFGS) {
		ret = load_compr_cfgs(img, EROFS_SUPER_OFFSET + sizeof(sb) +
				      (uint64_t)sb.sb_extslots * 16u);
		if (ret)
			return ret;
	} else {
		img->compr_algs = 1u << Z_EROFS_COMPRESSION_LZ4;
	}
	if (img->feature_incompat & EROFS_INCOMPAT_XATTR_PREFIXES) {
		ret = load_prefixes(img, sb.xattr_prefix_count,
				    le32toh(sb.xattr_prefix_start));
		if (ret)
			return ret;
	}
	img->ishare_prefix = sb.ishare_xattr_prefix_id;
	if ((img->feature_compat & EROFS_COMPAT_ISHARE_XATTRS) &&
	    img->ishare_prefix >= img->nprefixes)
		return erofs_corrupt(img, "superblock: fingerprint prefix %u at byte %u is not among the %u long prefixes",
				     img->ishare_prefix, EROFS_SUPER_OFFSET + 0x69,
				     img->nprefixes);
	return 0;
}
