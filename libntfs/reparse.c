// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * $REPARSE_POINT values: a header (tag, data length, reserved; a GUID
 * after it for third-party tags) and the tag's data.  The tags a Linux or
 * Windows volume holds for symbolic links, junctions and special files
 * are parsed down to their names; any other tag is accepted when its
 * header agrees with the value's length.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "ntfs/special.h"
#include "le.h"

const char *ntfs_reparse_tag_name(uint32_t tag, char *buf, unsigned int size)
{
	switch (tag) {
	case NTFS_RT_SYMLINK: return "symlink";
	case NTFS_RT_MOUNT_POINT: return "junction";
	case NTFS_RT_LX_SYMLINK: return "LX_SYMLINK";
	case NTFS_RT_AF_UNIX: return "AF_UNIX";
	case NTFS_RT_LX_FIFO: return "LX_FIFO";
	case NTFS_RT_LX_CHR: return "LX_CHR";
	case NTFS_RT_LX_BLK: return "LX_BLK";
	}
	snprintf(buf, size, "tag 0x%08x", tag);
	return buf;
}

/* A name of a symlink or junction: OFF/LEN (bytes) inside a path buffer
 * of ROOM bytes; 0 or -1 with WHY. */
static int name_in(const uint8_t *buf, uint32_t room, uint16_t off,
		   uint16_t len, const char *what, const uint8_t **p,
		   char *why)
{
	if (len % 2 || (uint32_t)off + len > room) {
		snprintf(why, 128, "%s name (%u bytes at %u) is outside the %u bytes of names",
			 what, len, off, room);
		return -1;
	}
	*p = buf + off;
	return 0;
}

/* The data of tags whose layout is known.  STRICT: the names must end
 * where the data does (used to tell the length a value really has). */
static int parse_data(struct ntfs_reparse_view *rp, bool strict, char *why)
{
	const uint8_t *d = rp->data;
	uint32_t n = rp->data_len, hdr, room, end;

	switch (rp->tag) {
	case NTFS_RT_SYMLINK:
	case NTFS_RT_MOUNT_POINT:
		hdr = rp->tag == NTFS_RT_SYMLINK ? 12 : 8;
		if (n < hdr) {
			snprintf(why, 128, "%s data of %u bytes, fewer than its %u-byte header",
				 rp->tag == NTFS_RT_SYMLINK ? "symlink" : "junction", n, hdr);
			return -1;
		}
		room = n - hdr;
		rp->subst_len = ntfs_get16(d + 2);
		rp->print_len = ntfs_get16(d + 6);
		rp->flags = hdr == 12 ? ntfs_get32(d + 8) : 0;
		if (name_in(d + hdr, room, ntfs_get16(d), rp->subst_len, "substitute",
			    &rp->subst, why) ||
		    name_in(d + hdr, room, ntfs_get16(d + 4), rp->print_len, "print",
			    &rp->print, why))
			return -1;
		if (!rp->subst_len) {
			snprintf(why, 128, "empty target name");
			return -1;
		}
		/* symlink flags: only RELATIVE is documented, others are
		 * left alone (a newer Windows may set them) */
		if (strict) {
			end = ntfs_get16(d) + rp->subst_len;
			if ((uint32_t)ntfs_get16(d + 4) + rp->print_len > end)
				end = ntfs_get16(d + 4) + rp->print_len;
			/* junctions (and some symlinks) end each name in NUL */
			if (room != end && room != end + 2 && room != end + 4)
				return -1;
		}
		return 0;
	case NTFS_RT_LX_SYMLINK:
		if (n < 5 || ntfs_get32(d) != 2) {
			snprintf(why, 128, "LX_SYMLINK data of %u bytes without version 2 and a target", n);
			return -1;
		}
		rp->target = d + 4;
		rp->target_len = n - 4;
		if (memchr(rp->target, 0, rp->target_len)) {
			snprintf(why, 128, "LX_SYMLINK target holds a NUL byte");
			return -1;
		}
		return 0;
	}
	return 0;
}

static int parse(const uint8_t *val, uint32_t len, struct ntfs_reparse_view *rp,
		 bool strict, uint32_t force_len, char *why)
{
	memset(rp, 0, sizeof(*rp));
	if (len < 8) {
		snprintf(why, 128, "value of %u bytes is shorter than its header", len);
		return -1;
	}
	if (len > NTFS_REPARSE_MAX) {
		snprintf(why, 128, "value of %u bytes is larger than %u", len, NTFS_REPARSE_MAX);
		return -1;
	}
	rp->tag = ntfs_get32(val);
	rp->data_len = force_len != UINT32_MAX ? (uint16_t)force_len : ntfs_get16(val + 4);
	rp->header_len = rp->tag & NTFS_RT_MICROSOFT ? 8 : 24;
	if (!rp->tag) {
		snprintf(why, 128, "reparse tag is 0");
		return -1;
	}
	if (len < rp->header_len || (uint32_t)rp->data_len != len - rp->header_len) {
		snprintf(why, 128, "%u bytes of reparse data in a value of %u bytes",
			 rp->data_len, len);
		return -1;
	}
	rp->data = val + rp->header_len;
	return parse_data(rp, strict, why);
}

int ntfs_reparse_parse(const uint8_t *val, uint32_t len,
		       struct ntfs_reparse_view *rp, char *why)
{
	return parse(val, len, rp, false, UINT32_MAX, why);
}

uint32_t ntfs_reparse_fixable_len(const uint8_t *val, uint32_t len)
{
	struct ntfs_reparse_view rp;
	char why[128];
	uint32_t tag, hdr;

	if (len < 8 || len > NTFS_REPARSE_MAX)
		return 0;
	tag = ntfs_get32(val);
	hdr = tag & NTFS_RT_MICROSOFT ? 8 : 24;
	/* only tags whose content says how long it is */
	if (len < hdr || (tag != NTFS_RT_SYMLINK && tag != NTFS_RT_MOUNT_POINT &&
			  tag != NTFS_RT_LX_SYMLINK))
		return 0;
	if (parse(val, len, &rp, true, len - hdr, why))
		return 0;
	return len - hdr;
}
