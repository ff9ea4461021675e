// SPDX-License-Identifier: GPL-2.0-or-later
/* The superblock, written last, once everything it describes is on disk. */
#include "config.h"

#include <endian.h>
#include <string.h>

#include "erofs/erofs_fs.h"
#include "internal.h"

void erofs_super_encode(const struct erofs_build *b, uint8_t *out)
{
	const struct erofs_mkfs_opts *o = b->opts;
	struct erofs_super_block sb = {
		.magic = htole32(EROFS_SUPER_MAGIC),
		.feature_compat = EROFS_COMPAT_SB_CHKSUM | EROFS_COMPAT_MTIME |
				  EROFS_COMPAT_XATTR_FILTER,
		.blkszbits = (uint8_t)o->blkszbits,
		.rootnid_2b = htole16((uint16_t)b->root->nid),
		.inos = htole64(b->ninodes),
		.epoch = htole64((uint64_t)b->epoch),
		.fixed_nsec = 0,
		.blocks_lo = htole32((uint32_t)b->total_blocks),
		.meta_blkaddr = 0,
		.xattr_blkaddr = htole32((uint32_t)b->xattr_blkaddr),
		.xattr_prefix_count = (uint8_t)b->nprefixes,
	};
	uint32_t compat = sb.feature_compat, incompat = 0;

	if (b->nprefixes) {
		incompat |= EROFS_INCOMPAT_XATTR_PREFIXES;
		compat |= EROFS_COMPAT_PLAIN_XATTR_PFX;
		sb.xattr_prefix_start = htole32((uint32_t)(b->prefix_start / 4));
	}
	if (b->digest_prefix >= 0) {
		compat |= EROFS_COMPAT_ISHARE_XATTRS;
		sb.ishare_xattr_prefix_id = (uint8_t)b->digest_prefix;
	}
	if (o->nzcfgs) {
		incompat |= EROFS_INCOMPAT_ZERO_PADDING;
		if (erofs_compr_cfgs_encode(b, NULL)) {
			/* the algorithms' settings follow the superblock
			 * (the bit also allows big pclusters); as
			 * erofs-utils, every algorithm of -z is listed,
			 * used or not */
			incompat |= EROFS_INCOMPAT_COMPR_CFGS |
				    EROFS_INCOMPAT_BIG_PCLUSTER;
			sb.available_compr_algs =
				htole16((uint16_t)erofs_compr_algs(o));
		} else {
			sb.available_compr_algs = htole16(UINT16_MAX);
		}
	}
	/* as erofs-utils: set with the option, used or not */
	if (o->ztailpacking)
		incompat |= EROFS_INCOMPAT_ZTAILPACKING;
	if (o->fragments || o->dedupe)
		incompat |= EROFS_INCOMPAT_FRAGMENTS;
	if (b->packed)
		sb.packed_nid = htole64(b->packed->nid);
	/* as erofs-utils: set with --chunksize, chunked files or not */
	if (o->chunk_size)
		incompat |= EROFS_INCOMPAT_CHUNKED_FILE;
	if (b->devt_off) {
		incompat |= EROFS_INCOMPAT_DEVICE_TABLE;
		sb.extra_devices = htole16(1);
		sb.devt_slotoff = htole16((uint16_t)(b->devt_off / EROFS_DEVT_SLOT_SIZE));
	}
	sb.feature_compat = htole32(compat);
	sb.feature_incompat = htole32(incompat);
	memcpy(sb.uuid, b->uuid, sizeof(sb.uuid));
	memcpy(sb.volume_name, o->label, strnlen(o->label, sizeof(sb.volume_name)));
	memcpy(out, &sb, sizeof(sb));
}
