// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pax extended headers: "LEN KEY=VALUE\n" records.  The keywords EROFS can
 * keep (path, linkpath, size, uid, gid, mtime with nanoseconds, xattrs as
 * SCHILY.xattr.NAME=raw and LIBARCHIVE.xattr.%-encoded-NAME=base64, GNU
 * sparse 1.0) are decoded; uname, gname, atime, ctime and unknown keywords
 * are read and ignored (EROFS stores numeric owners and one time).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tar.h"

#define XATTR_NAME_MAX_LEN 255

void tar_pax_init(struct tar_pax *p)
{
	memset(p, 0, sizeof(*p));
	p->sparse_major = p->sparse_minor = -1;
}

void tar_pax_free(struct tar_pax *p)
{
	free(p->path);
	free(p->linkpath);
	free(p->sparse_name);
	for (size_t i = 0; i < p->nxattrs; i++) {
		free(p->xattrs[i].name);
		free(p->xattrs[i].value);
	}
	free(p->xattrs);
	tar_pax_init(p);
}

/* an unsigned decimal of exactly LEN bytes, at most MAX */
static int dec_u64(const char *s, size_t len, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!len)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		if (v > (max - (uint64_t)(s[i] - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

/* [-]SECONDS[.FRACTION]: nanoseconds from the first 9 fraction digits */
static int parse_time(const char *s, size_t len, int64_t *sec, uint32_t *nsec)
{
	const char *dot = memchr(s, '.', len);
	size_t ilen = dot ? (size_t)(dot - s) : len;
	bool neg = ilen && s[0] == '-';
	uint64_t whole, frac = 0;
	size_t digits = 0;

	if (dec_u64(s + neg, ilen - neg, (uint64_t)INT64_MAX / 2, &whole))
		return -EINVAL;
	if (dot) {
		for (const char *c = dot + 1; c < s + len; c++) {
			if (*c < '0' || *c > '9')
				return -EINVAL;
			if (digits < 9) {
				frac = frac * 10 + (uint64_t)(*c - '0');
				digits++;
			}
		}
	}
	for (; digits < 9; digits++)
		frac *= 10;
	if (!neg) {
		*sec = (int64_t)whole;
		*nsec = (uint32_t)frac;
	} else if (frac) {
		*sec = -(int64_t)whole - 1;
		*nsec = (uint32_t)(1000000000u - frac);
	} else {
		*sec = -(int64_t)whole;
		*nsec = 0;
	}
	return 0;
}

static char *dup_str(const char *s, size_t len)
{
	char *d;

	if (memchr(s, '\0', len))
		return NULL;
	d = malloc(len + 1);
	if (d) {
		memcpy(d, s, len);
		d[len] = '\0';
	}
	return d;
}

static int set_str(char **dst, const char *s, size_t len, const char **why)
{
	char *d;

	if (memchr(s, '\0', len)) {
		*why = "NUL byte inside a pax path";
		return -EINVAL;
	}
	d = dup_str(s, len);
	if (!d)
		return -ENOMEM;
	free(*dst);
	*dst = d;
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* LIBARCHIVE.xattr names are %-encoded */
static char *url_decode(const char *s, size_t len)
{
	char *d = malloc(len + 1);
	size_t n = 0;

	if (!d)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '%' && i + 2 < len &&
		    hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
			d[n++] = (char)(hexval(s[i + 1]) << 4 | hexval(s[i + 2]));
			i += 2;
		} else {
			d[n++] = s[i];
		}
	}
	d[n] = '\0';
	if (strlen(d) != n) {	/* an encoded NUL */
		free(d);
		return NULL;
	}
	return d;
}

static int b64val(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* base64, padding optional; OUT holds at least LEN * 3 / 4 + 3 bytes */
static int b64_decode(const char *s, size_t len, uint8_t *out, size_t *olen)
{
	uint32_t acc = 0;
	unsigned int bits = 0;
	size_t n = 0;

	while (len && s[len - 1] == '=')
		len--;
	for (size_t i = 0; i < len; i++) {
		int v = b64val(s[i]);

		if (v < 0)
			return -EINVAL;
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[n++] = (uint8_t)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	*olen = n;
	return 0;
}

static int add_xattr(struct tar_pax *p, char *name, uint8_t *value,
		     size_t len)
{
	struct tar_xattr *grown;

	for (size_t i = 0; i < p->nxattrs; i++) {
		if (strcmp(p->xattrs[i].name, name))
			continue;
		free(p->xattrs[i].value);
		free(name);
		p->xattrs[i].value = value;
		p->xattrs[i].len = len;
		return 0;
	}
	grown = realloc(p->xattrs, (p->nxattrs + 1) * sizeof(*grown));
	if (!grown) {
		free(name);
		free(value);
		return -ENOMEM;
	}
	p->xattrs = grown;
	p->xattrs[p->nxattrs++] = (struct tar_xattr){ name, value, len };
	return 0;
}

static int xattr_record(struct tar_pax *p, const char *key, size_t klen,
			const char *val, size_t vlen, bool libarchive,
			const char **why)
{
	char *name = libarchive ? url_decode(key, klen) : dup_str(key, klen);
	uint8_t *value;
	size_t len = vlen;

	if (!name) {
		*why = "NUL byte inside a pax xattr name";
		return -EINVAL;
	}
	if (!*name || strlen(name) > XATTR_NAME_MAX_LEN) {
		free(name);
		*why = "pax xattr name empty or longer than 255 bytes";
		return -EINVAL;
	}
	value = malloc(vlen + 3);
	if (!value) {
		free(name);
		return -ENOMEM;
	}
	if (libarchive) {
		if (b64_decode(val, vlen, value, &len)) {
			free(name);
			free(value);
			*why = "invalid base64 in a LIBARCHIVE.xattr value";
			return -EINVAL;
		}
	} else {
		memcpy(value, val, vlen);
	}
	return add_xattr(p, name, value, len);
}

#define KEY_IS(k) (klen == sizeof(k) - 1 && !memcmp(key, k, sizeof(k) - 1))
#define KEY_HAS(k) (klen > sizeof(k) - 1 && !memcmp(key, k, sizeof(k) - 1))

static int record(struct tar_pax *p, const char *key, size_t klen,
		  const char *val, size_t vlen, const char **why)
{
	uint64_t v;

	if (KEY_IS("path"))
		return set_str(&p->path, val, vlen, why);
	if (KEY_IS("linkpath"))
		return set_str(&p->linkpath, val, vlen, why);
	if (KEY_IS("size") || KEY_IS("uid") || KEY_IS("gid")) {
		uint64_t max = key[0] == 's' ? TAR_SIZE_MAX : UINT32_MAX;

		if (dec_u64(val, vlen, max, &v)) {
			*why = "invalid or out-of-range pax size, uid or gid";
			return -EINVAL;
		}
		if (key[0] == 's') {
			p->size = v;
			p->has_size = true;
		} else if (key[0] == 'u') {
			p->uid = v;
			p->has_uid = true;
		} else {
			p->gid = v;
			p->has_gid = true;
		}
		return 0;
	}
	if (KEY_IS("mtime")) {
		if (parse_time(val, vlen, &p->mtime, &p->mtime_nsec)) {
			*why = "invalid pax mtime";
			return -EINVAL;
		}
		p->has_mtime = true;
		return 0;
	}
	if (KEY_HAS("SCHILY.xattr."))
		return xattr_record(p, key + 13, klen - 13, val, vlen, false, why);
	if (KEY_HAS("LIBARCHIVE.xattr."))
		return xattr_record(p, key + 17, klen - 17, val, vlen, true, why);
	if (KEY_IS("GNU.sparse.major") || KEY_IS("GNU.sparse.minor")) {
		if (dec_u64(val, vlen, 1000, &v)) {
			*why = "invalid GNU.sparse version";
			return -EINVAL;
		}
		if (key[11] == 'm' && key[12] == 'a')
			p->sparse_major = (int)v;
		else
			p->sparse_minor = (int)v;
		return 0;
	}
	if (KEY_IS("GNU.sparse.name"))
		return set_str(&p->sparse_name, val, vlen, why);
	if (KEY_IS("GNU.sparse.realsize") || KEY_IS("GNU.sparse.size")) {
		if (dec_u64(val, vlen, TAR_SIZE_MAX, &p->realsize)) {
			*why = "invalid GNU.sparse.realsize";
			return -EINVAL;
		}
		p->has_realsize = true;
		return 0;
	}
	if (KEY_IS("GNU.sparse.map") || KEY_IS("GNU.sparse.offset") ||
	    KEY_IS("GNU.sparse.numblocks")) {
		*why = "GNU sparse format 0.x is not supported (only 1.0 and old GNU 'S')";
		return -EINVAL;
	}
	return 0;	/* uname, gname, atime, ctime, comment, ... */
}

int tar_pax_parse(const uint8_t *buf, size_t len, struct tar_pax *p,
		  const char **why)
{
	const char *s = (const char *)buf;
	size_t at = 0;

	while (at < len) {
		size_t rlen = 0, i = at, key, eq, end;
		int ret;

		/* a run of NULs pads some writers' last block */
		if (s[at] == '\0') {
			while (at < len && s[at] == '\0')
				at++;
			if (at == len)
				break;
			*why = "NUL bytes between pax records";
			return -EINVAL;
		}
		while (i < len && s[i] >= '0' && s[i] <= '9' && i - at < 19)
			rlen = rlen * 10 + (size_t)(s[i++] - '0');
		if (i == at || i >= len || s[i] != ' ' || rlen <= i - at + 1 ||
		    rlen > len - at) {
			*why = "malformed pax record length";
			return -EINVAL;
		}
		key = i + 1;
		end = at + rlen - 1;	/* the '\n' */
		if (s[end] != '\n') {
			*why = "pax record not ended by a newline";
			return -EINVAL;
		}
		eq = key;
		while (eq < end && s[eq] != '=')
			eq++;
		if (eq == end || eq == key) {
			*why = "pax record without KEY=";
			return -EINVAL;
		}
		ret = record(p, s + key, eq - key, s + eq + 1, end - eq - 1, why);
		if (ret)
			return ret;
		at += rlen;
	}
	return 0;
}

static int copy_str(char **dst, const char *src)
{
	if (*dst || !src)
		return 0;
	*dst = strdup(src);
	return *dst ? 0 : -ENOMEM;
}

int tar_pax_inherit(struct tar_pax *p, const struct tar_pax *g)
{
	int ret = copy_str(&p->path, g->path);

	if (!ret)
		ret = copy_str(&p->linkpath, g->linkpath);
	if (ret)
		return ret;
	if (!p->has_size && g->has_size) {
		p->size = g->size;
		p->has_size = true;
	}
	if (!p->has_uid && g->has_uid) {
		p->uid = g->uid;
		p->has_uid = true;
	}
	if (!p->has_gid && g->has_gid) {
		p->gid = g->gid;
		p->has_gid = true;
	}
	if (!p->has_mtime && g->has_mtime) {
		p->mtime = g->mtime;
		p->mtime_nsec = g->mtime_nsec;
		p->has_mtime = true;
	}
	for (size_t i = 0; i < g->nxattrs; i++) {
		bool have = false;
		char *name;
		uint8_t *value;

		for (size_t j = 0; j < p->nxattrs && !have; j++)
			have = !strcmp(p->xattrs[j].name, g->xattrs[i].name);
		if (have)
			continue;
		name = strdup(g->xattrs[i].name);
		value = malloc(g->xattrs[i].len + 1);
		if (!name || !value) {
			free(name);
			free(value);
			return -ENOMEM;
		}
		memcpy(value, g->xattrs[i].value, g->xattrs[i].len);
		ret = add_xattr(p, name, value, g->xattrs[i].len);
		if (ret)
			return ret;
	}
	return 0;
}
