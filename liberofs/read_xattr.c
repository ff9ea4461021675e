// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Read side: an inode's xattrs.  The inline body is a header (name filter,
 * shared count), the shared ids (4-byte units into the shared area), then
 * entries (name index, name suffix, value, each 4-byte aligned) filling
 * the body exactly.  Long prefixes (index 0x80 | n) put the superblock's
 * prefix n in front of the suffix.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/erofs_fs.h"
#include "erofs/format.h"
#include "erofs/read.h"

static const char *const std_prefix[] = {
	"", "user.", "system.posix_acl_access", "system.posix_acl_default",
	"trusted.", "lustre.", "security.",
};

struct xwalk {
	struct erofs_img *img;
	const struct erofs_rinode *ino;
	uint32_t filter;		/* set bits: names absent */
	bool check_filter;
	char *name;			/* scratch for the full name */
	erofs_xattr_fn fn;
	void *ctx;
};

/* the entry at OFF (LIMIT: end of its area); *SIZE gets its bytes */
static int one_entry(struct xwalk *w, uint64_t off, uint64_t limit,
		     uint32_t *size, const char *where)
{
	struct erofs_img *img = w->img;
	struct erofs_xattr_entry e;
	const uint8_t *p;
	const char *pre;
	size_t plen, flen, off_ns;
	uint8_t base;

	if (limit < off || limit - off < sizeof(e) ||
	    !(p = erofs_img_at(img, off, sizeof(e), "xattr entry")))
		return erofs_corrupt(img, "inode %" PRIu64 ": %s xattr entry at byte %" PRIu64 " is truncated",
				     w->ino->nid, where, off);
	memcpy(&e, p, sizeof(e));
	*size = erofs_xattr_entry_size(e.e_name_len, le16toh(e.e_value_size));
	if (limit - off < *size ||
	    !(p = erofs_img_at(img, off, *size, "xattr entry")))
		return erofs_corrupt(img, "inode %" PRIu64 ": %s xattr entry at byte %" PRIu64 " (%u bytes) overruns its area",
				     w->ino->nid, where, off, *size);
	if (e.e_name_index & EROFS_XATTR_LONG_PREFIX) {
		unsigned int k = e.e_name_index & EROFS_XATTR_LONG_PREFIX_MASK;
		const struct erofs_rprefix *lp;

		if (k >= img->nprefixes)
			return erofs_corrupt(img, "inode %" PRIu64 ": %s xattr at byte %" PRIu64 " names long prefix %u of %u",
					     w->ino->nid, where, off, k, img->nprefixes);
		lp = &img->prefixes[k];
		base = lp->base_index;
		pre = std_prefix[base];
		plen = strlen(pre);
		memcpy(w->name, pre, plen);
		memcpy(w->name + plen, lp->infix, lp->infix_len);
		flen = plen + lp->infix_len;
	} else {
		if (e.e_name_index > EROFS_XATTR_INDEX_SECURITY)
			return erofs_corrupt(img, "inode %" PRIu64 ": %s xattr at byte %" PRIu64 " has unknown name index %u",
					     w->ino->nid, where, off, e.e_name_index);
		base = e.e_name_index;
		pre = std_prefix[base];
		plen = strlen(pre);
		memcpy(w->name, pre, plen);
		flen = plen;
	}
	off_ns = plen;
	memcpy(w->name + flen, p + sizeof(e), e.e_name_len);
	flen += e.e_name_len;
	if (!flen || memchr(w->name, 0, flen))
		return erofs_corrupt(img, "inode %" PRIu64 ": %s xattr at byte %" PRIu64 " has an empty or NUL-holding name",
				     w->ino->nid, where, off);
	if (w->check_filter && base != 0 &&
	    (w->filter >> erofs_xattr_filter_bit(base, w->name + off_ns,
						  flen - off_ns) & 1u))
		return erofs_corrupt(img, "inode %" PRIu64 ": xattr '%.*s' is missing from the name filter at byte %" PRIu64,
				     w->ino->nid, (int)flen, w->name, w->ino->pos + w->ino->isize);
	return w->fn(w->ctx, w->name, flen, p + sizeof(e) + e.e_name_len,
		     le16toh(e.e_value_size), e.e_name_index);
}

int erofs_read_xattrs(struct erofs_img *img, const struct erofs_rinode *ino,
		      erofs_xattr_fn fn, void *ctx)
{
	struct xwalk w = { .img = img, .ino = ino, .fn = fn, .ctx = ctx };
	struct erofs_xattr_ibody_header h;
	uint64_t body = ino->pos + ino->isize, end = body + ino->xattr_isize, off;
	const uint8_t *p;
	int ret = 0;

	if (!ino->xattr_isize)
		return 0;
	if (ino->xattr_isize < sizeof(h))
		return erofs_corrupt(img, "inode %" PRIu64 ": xattr body of %u bytes at byte %" PRIu64 " is too small",
				     ino->nid, ino->xattr_isize, body);
	p = erofs_img_at(img, body, ino->xattr_isize, "inline xattrs");
	if (!p)
		return -EUCLEAN;
	memcpy(&h, p, sizeof(h));
	if (sizeof(h) + h.h_shared_count * 4u > ino->xattr_isize)
		return erofs_corrupt(img, "inode %" PRIu64 ": %u shared xattr ids overrun the xattr body at byte %" PRIu64,
				     ino->nid, h.h_shared_count, body + 4);
	w.filter = le32toh(h.h_name_filter);
	w.check_filter = img->feature_compat & EROFS_COMPAT_XATTR_FILTER;
	w.name = malloc(65536 + 512);
	if (!w.name) {
		snprintf(img->err, sizeof(img->err), "out of memory");
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < h.h_shared_count && !ret; i++) {
		uint32_t id, size;

		/* again each time: one_entry reads through the cache */
		p = erofs_img_at(img, body + sizeof(h) + i * 4u, 4, "shared xattr id");
		if (!p) {
			ret = -EUCLEAN;
			break;
		}
		memcpy(&id, p, 4);
		id = le32toh(id);
		off = img->xattr_off + (uint64_t)id * 4u;
		ret = one_entry(&w, off, img->size, &size, "shared");
	}
	off = body + sizeof(h) + h.h_shared_count * 4u;
	while (!ret && off < end) {
		uint32_t size;

		ret = one_entry(&w, off, end, &size, "inline");
		off += size;
	}
	free(w.name);
	return ret;
}
