// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Tar header blocks (ustar, GNU, pax): numbers, names, the checksum and
 * the GNU sparse map, each field checked against its own width.  Pure
 * functions of the bytes given; nothing here reads or allocates beyond
 * them, so the fuzzer drives them directly.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tar.h"

/* field offsets and widths of the ustar header */
#define F_NAME		0, 100
#define F_MODE		100, 8
#define F_UID		108, 8
#define F_GID		116, 8
#define F_SIZE		124, 12
#define F_MTIME		136, 12
#define F_CHKSUM	148, 8
#define O_TYPE		156
#define F_LINK		157, 100
#define O_MAGIC		257
#define F_DEVMAJ	329, 8
#define F_DEVMIN	337, 8
#define F_PREFIX	345, 155
/* old GNU: the sparse map in place of the prefix */
#define O_GNU_SPARSE	386
#define O_GNU_EXTENDED	482
#define F_GNU_REALSIZE	483, 12

int tar_number(const uint8_t *f, size_t len, int64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;

	if (len && (f[0] == 0x80 || f[0] == 0xff)) {
		/* base-256, two's complement; 0xff: negative (old times) */
		bool neg = f[0] == 0xff;

		v = neg ? ~0ull : 0;
		for (i = 1; i < len; i++) {
			if ((v >> 56) != (neg ? 0xffu : 0u))
				return -ERANGE;
			v = v << 8 | f[i];
		}
		if (neg != ((int64_t)v < 0))
			return -ERANGE;
		*out = (int64_t)v;
		return 0;
	}
	while (i < len && f[i] == ' ')
		i++;
	for (; i < len && f[i] >= '0' && f[i] <= '7'; i++) {
		if (v >> 60)
			return -ERANGE;
		v = v << 3 | (uint64_t)(f[i] - '0');
	}
	/* the digits end with a space or NUL, then only those follow */
	for (; i < len; i++)
		if (f[i] != ' ' && f[i] != '\0')
			return -EINVAL;
	*out = (int64_t)v;
	return 0;
}

static int field_u64(const uint8_t *blk, size_t off, size_t len,
		     uint64_t max, uint64_t *out)
{
	int64_t v;
	int ret = tar_number(blk + off, len, &v);

	if (ret)
		return ret;
	if (v < 0 || (uint64_t)v > max)
		return -ERANGE;
	*out = (uint64_t)v;
	return 0;
}

/* a string field: up to LEN bytes, NUL-terminated into OUT (LEN + 1) */
static size_t field_str(const uint8_t *blk, size_t off, size_t len, char *out)
{
	size_t n = strnlen((const char *)blk + off, len);

	memcpy(out, blk + off, n);
	out[n] = '\0';
	return n;
}

static bool checksum_ok(const uint8_t *blk)
{
	uint64_t want;
	uint32_t usum = 0;
	int32_t ssum = 0;

	if (field_u64(blk, F_CHKSUM, UINT32_MAX, &want))
		return false;
	for (size_t i = 0; i < TAR_BLOCK; i++) {
		uint8_t c = i >= 148 && i < 156 ? ' ' : blk[i];

		usum += c;
		ssum += (int8_t)c;
	}
	/* some old tars summed signed chars */
	return want == usum || (int64_t)want == (int64_t)ssum;
}

static int sparse_entry(const uint8_t *e, struct tar_extent *x)
{
	if (field_u64(e, 0, 12, TAR_SIZE_MAX, &x->off) ||
	    field_u64(e, 12, 12, TAR_SIZE_MAX, &x->len))
		return -EINVAL;
	return 0;
}

int tar_header_parse(const uint8_t *blk, struct tar_hdr *h, const char **why)
{
	const uint8_t *magic = blk + O_MAGIC;
	bool posix, gnu;
	uint64_t v;
	int64_t t;
	size_t n;

	memset(h, 0, sizeof(*h));
	for (n = 0; n < TAR_BLOCK && !blk[n]; n++)
		;
	if (n == TAR_BLOCK)
		return 1;
	if (!checksum_ok(blk)) {
		*why = "header checksum mismatch (not a tar, or damaged)";
		return -EINVAL;
	}
	posix = !memcmp(magic, "ustar\0", 6);
	gnu = !memcmp(magic, "ustar  \0", 8);
	if (!posix && !gnu && memcmp(magic, "ustar", 5)) {
		*why = "no ustar magic (pre-POSIX tar formats are not supported)";
		return -EINVAL;
	}
	h->type = blk[O_TYPE] ? (char)blk[O_TYPE] : '0';
	if (field_u64(blk, F_MODE, UINT32_MAX, &v)) {
		*why = "invalid mode field";
		return -EINVAL;
	}
	h->mode = (uint32_t)v & 07777;
	if (field_u64(blk, F_UID, UINT32_MAX, &h->uid) ||
	    field_u64(blk, F_GID, UINT32_MAX, &h->gid)) {
		*why = "invalid uid or gid field";
		return -EINVAL;
	}
	if (field_u64(blk, F_SIZE, TAR_SIZE_MAX, &h->size)) {
		*why = "invalid size field";
		return -EINVAL;
	}
	if (tar_number(blk + 136, 12, &t)) {
		*why = "invalid mtime field";
		return -EINVAL;
	}
	h->mtime = t;
	if (h->type == '3' || h->type == '4') {
		if (field_u64(blk, F_DEVMAJ, UINT32_MAX, &v)) {
			*why = "invalid device major field";
			return -EINVAL;
		}
		h->devmajor = (uint32_t)v;
		if (field_u64(blk, F_DEVMIN, UINT32_MAX, &v)) {
			*why = "invalid device minor field";
			return -EINVAL;
		}
		h->devminor = (uint32_t)v;
	}
	n = 0;
	if (posix && blk[345]) {	/* GNU keeps times there instead */
		n = field_str(blk, F_PREFIX, h->name);
		h->name[n++] = '/';
	}
	field_str(blk, F_NAME, h->name + n);
	field_str(blk, F_LINK, h->linkname);

	if (h->type == 'S') {
		for (unsigned int i = 0; i < 4; i++) {
			const uint8_t *e = blk + O_GNU_SPARSE + 24 * i;

			if (!e[0])
				break;
			if (sparse_entry(e, &h->sp[h->nsp])) {
				*why = "invalid GNU sparse map";
				return -EINVAL;
			}
			h->nsp++;
		}
		h->sp_more = blk[O_GNU_EXTENDED] != 0;
		if (field_u64(blk, F_GNU_REALSIZE, TAR_SIZE_MAX, &h->realsize)) {
			*why = "invalid GNU sparse real size";
			return -EINVAL;
		}
	}
	return 0;
}

int tar_sparse_ext_parse(const uint8_t *blk, struct tar_extent **sp,
			 size_t *n, bool *more, const char **why)
{
	for (unsigned int i = 0; i < 21; i++) {
		const uint8_t *e = blk + 24 * i;
		struct tar_extent x, *grown;

		if (!e[0])
			break;
		if (sparse_entry(e, &x)) {
			*why = "invalid GNU sparse extension block";
			return -EINVAL;
		}
		if (*n >= (1u << 20)) {
			*why = "GNU sparse map of more than 1048576 extents";
			return -EINVAL;
		}
		grown = realloc(*sp, (*n + 1) * sizeof(**sp));
		if (!grown)
			return -ENOMEM;
		*sp = grown;
		(*sp)[(*n)++] = x;
	}
	*more = blk[504] != 0;
	return 0;
}
