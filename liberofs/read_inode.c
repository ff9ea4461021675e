// SPDX-License-Identifier: GPL-2.0-or-later
/* Read side: one inode (compact or extended) by nid, checked. */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

#include "erofs/erofs_fs.h"
#include "erofs/read.h"

static bool valid_type(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: case S_IFDIR: case S_IFLNK: case S_IFCHR:
	case S_IFBLK: case S_IFIFO: case S_IFSOCK:
		return true;
	}
	return false;
}

int erofs_read_inode(struct erofs_img *img, uint64_t nid,
		     struct erofs_rinode *ino)
{
	const uint8_t *p;
	uint16_t fmt;

	memset(ino, 0, sizeof(*ino));
	ino->nid = nid;
	if (nid > (img->size - img->meta_off) / EROFS_SLOT_SIZE)
		return erofs_corrupt(img, "nid %" PRIu64 " lies beyond the image end", nid);
	ino->pos = img->meta_off + nid * EROFS_SLOT_SIZE;
	p = erofs_img_at(img, ino->pos, sizeof(struct erofs_inode_compact), "inode");
	if (!p)
		return -EUCLEAN;
	fmt = (uint16_t)(p[0] | p[1] << 8);
	if (fmt & ~0x1fu)
		return erofs_corrupt(img, "inode %" PRIu64 ": unknown format bits 0x%x at byte %" PRIu64,
				     nid, fmt, ino->pos);
	ino->extended = fmt & 1u;
	ino->layout = (uint8_t)((fmt >> EROFS_I_LAYOUT_SHIFT) & 7u);
	if (ino->layout > EROFS_LAYOUT_CHUNK_BASED)
		return erofs_corrupt(img, "inode %" PRIu64 ": unknown data layout %u at byte %" PRIu64,
				     nid, ino->layout, ino->pos);
	if (ino->extended) {
		struct erofs_inode_extended d;

		p = erofs_img_at(img, ino->pos, sizeof(d), "extended inode");
		if (!p)
			return -EUCLEAN;
		memcpy(&d, p, sizeof(d));
		ino->isize = sizeof(d);
		ino->xattr_icount = le16toh(d.i_xattr_icount);
		ino->mode = le16toh(d.i_mode);
		ino->nlink = le32toh(d.i_nlink);
		ino->size = le64toh(d.i_size);
		ino->i_u = le32toh(d.i_u);
		ino->ino = le32toh(d.i_ino);
		ino->uid = le32toh(d.i_uid);
		ino->gid = le32toh(d.i_gid);
		ino->mtime = (int64_t)le64toh(d.i_mtime);
		ino->mtime_nsec = le32toh(d.i_mtime_nsec);
	} else {
		struct erofs_inode_compact d;

		memcpy(&d, p, sizeof(d));
		ino->isize = sizeof(d);
		ino->xattr_icount = le16toh(d.i_xattr_icount);
		ino->mode = le16toh(d.i_mode);
		ino->nlink = le16toh(d.i_nlink);
		ino->size = le32toh(d.i_size);
		ino->i_u = le32toh(d.i_u);
		ino->ino = le32toh(d.i_ino);
		ino->uid = le16toh(d.i_uid);
		ino->gid = le16toh(d.i_gid);
		ino->mtime = (int64_t)img->epoch;
		if (img->feature_compat & EROFS_COMPAT_MTIME)
			ino->mtime += le32toh(d.i_mtime);
		ino->mtime_nsec = img->fixed_nsec;
	}
	if (!valid_type(ino->mode))
		return erofs_corrupt(img, "inode %" PRIu64 ": invalid file type in mode 0%o at byte %" PRIu64,
				     nid, ino->mode, ino->pos + 4);
	if (ino->mtime_nsec >= 1000000000u)
		return erofs_corrupt(img, "inode %" PRIu64 ": nanoseconds %u out of range",
				     nid, ino->mtime_nsec);
	if ((ino->layout == EROFS_LAYOUT_COMPRESSED_FULL ||
	     ino->layout == EROFS_LAYOUT_COMPRESSED_COMPACT) &&
	    !S_ISREG(ino->mode))
		return erofs_corrupt(img, "inode %" PRIu64 ": compressed layout on a non-regular file at byte %" PRIu64,
				     nid, ino->pos);
	if (ino->layout == EROFS_LAYOUT_CHUNK_BASED &&
	    (ino->i_u & 0xffffu) & ~(EROFS_CHUNK_FORMAT_BLKBITS_MASK |
				    EROFS_CHUNK_FORMAT_INDEXES))
		return erofs_unsupported(img, "inode %" PRIu64 ": chunk format 0x%x at byte %" PRIu64 " (48-bit or unknown bits) is not supported",
					 nid, ino->i_u & 0xffffu, ino->pos + 0x10);
	ino->xattr_isize = erofs_xattr_ibody_size(ino->xattr_icount);
	if (!erofs_img_has(img, ino->pos, (uint64_t)ino->isize + ino->xattr_isize,
			   "inode and inline xattrs"))
		return -EUCLEAN;
	return 0;
}
