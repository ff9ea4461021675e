// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Read side: the image's bytes, read with pread.  Metadata (inodes,
 * xattrs, indexes, directory tails) comes through a small cache of
 * windows of the image, file content through one bounded buffer (a
 * request that starts where the previous one ended is read ahead, so a
 * file's pclusters take one pread per 32 KiB, not one each), so what
 * reading holds in memory does not grow with the image.  Every range is
 * checked against the size of its device before it is read.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "erofs/read.h"

/* a metadata read brings in at least this much around it */
#define WINDOW		(4u << 10)
#define WINDOW_ALIGN	4096u

/* Under AddressSanitizer a slot's buffer is freed when the slot takes
 * another window, so a pointer kept past EROFS_READ_LIVE further reads
 * is a use-after-free ASan reports, not silently other bytes. */
#if defined(__SANITIZE_ADDRESS__)
#define STALE_POINTERS_TRAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STALE_POINTERS_TRAP 1
#endif
#endif
#ifndef STALE_POINTERS_TRAP
#define STALE_POINTERS_TRAP 0
#endif

struct slot {
	uint64_t start, end;		/* bytes held: [start, end) */
	uint8_t *buf;
	size_t cap;
	uint64_t used;			/* LRU clock */
};

struct erofs_rcache {
	struct slot s[EROFS_READ_LIVE + 1];
	unsigned int last;
	uint64_t clock;
	/* content (erofs_img_read): the bytes in img->cbuf, [cstart,
	 * cend) of device cdev, and where the last request ended */
	uint64_t cstart, cend, cnext;
	uint32_t cdev;
};

/* content read right after the previous request (a file's pclusters or
 * blocks in order) is read ahead up to this, in one pread */
#define READAHEAD	(32u << 10)

static int pread_full(int fd, uint8_t *buf, uint64_t len, uint64_t off)
{
	while (len) {
		ssize_t r = pread(fd, buf, len, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (!r)
			return -ENODATA;	/* the file shrank */
		buf += r;
		len -= (uint64_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

static void read_failed(struct erofs_img *img, int err, const char *what,
			uint64_t off, uint64_t len)
{
	snprintf(img->err, sizeof(img->err),
		 "cannot read the %s at byte %" PRIu64 " (%" PRIu64 " bytes): %s",
		 what, off, len, err == -ENODATA ? "the image is shorter than when opened" :
		 strerror(-err));
}

static struct erofs_rcache *cache_of(struct erofs_img *img)
{
	if (!img->cache) {
		img->cache = calloc(1, sizeof(*img->cache));
		if (!img->cache)
			snprintf(img->err, sizeof(img->err), "out of memory");
	}
	return img->cache;
}

bool erofs_img_has(struct erofs_img *img, uint64_t off, uint64_t len,
		   const char *what)
{
	if (off > img->size || len > img->size - off) {
		erofs_corrupt(img, "%s at byte %" PRIu64 " (%" PRIu64
			      " bytes) lies beyond the image end (%" PRIu64 ")",
			      what, off, len, img->size);
		return false;
	}
	return true;
}

const uint8_t *erofs_img_at(struct erofs_img *img, uint64_t off, uint64_t len,
			    const char *what)
{
	static const uint8_t nothing[1];
	struct erofs_rcache *c = img->cache;
	struct slot *s;
	uint64_t start, end;
	unsigned int i, lru = 0;
	int ret;

	if (!erofs_img_has(img, off, len, what))
		return NULL;
	if (!len)
		return nothing;
	if (!c && !(c = cache_of(img)))
		return NULL;
	s = &c->s[c->last];
	if (s->start <= off && off + len <= s->end) {
		s->used = ++c->clock;
		return s->buf + (off - s->start);
	}
	for (i = 0; i <= EROFS_READ_LIVE; i++) {
		s = &c->s[i];
		if (s->start <= off && off + len <= s->end) {
			c->last = i;
			s->used = ++c->clock;
			return s->buf + (off - s->start);
		}
		if (s->used < c->s[lru].used)
			lru = i;
	}
	/* the least recently used slot takes the window around the range */
	s = &c->s[lru];
	start = off & ~(uint64_t)(WINDOW_ALIGN - 1);
	end = off + len > start + WINDOW ? off + len : start + WINDOW;
	end = (end + WINDOW_ALIGN - 1) & ~(uint64_t)(WINDOW_ALIGN - 1);
	if (end > img->size)
		end = img->size;
	if (STALE_POINTERS_TRAP) {
		free(s->buf);
		s->buf = NULL;
		s->cap = 0;
	}
	if (s->cap < end - start || (s->cap > 4 * WINDOW && end - start <= WINDOW)) {
		uint8_t *b = realloc(s->buf, end - start);

		if (!b) {
			snprintf(img->err, sizeof(img->err), "out of memory");
			return NULL;
		}
		s->buf = b;
		s->cap = end - start;
	}
	s->start = s->end = 0;
	ret = pread_full(img->fd, s->buf, end - start, start);
	if (ret) {
		read_failed(img, ret, what, off, len);
		return NULL;
	}
	s->start = start;
	s->end = end;
	s->used = ++c->clock;
	c->last = lru;
	return s->buf + (off - start);
}

const uint8_t *erofs_img_read(struct erofs_img *img, uint32_t dev,
			      uint64_t off, uint64_t len, const char *what)
{
	static const uint8_t nothing[1];
	int fd = dev ? img->devices[dev - 1].fd : img->fd;
	uint64_t limit = dev ? img->devices[dev - 1].size : img->size;
	struct erofs_rcache *c;
	uint64_t want = len;
	bool sequential;
	int ret;

	if (!len)
		return nothing;
	c = cache_of(img);
	if (!c)
		return NULL;
	if (c->cdev == dev && c->cstart <= off && off < c->cend &&
	    len <= c->cend - off) {
		c->cnext = off + len;
		return img->cbuf + (off - c->cstart);
	}
	/* Sequential: the request starts where the last one ended.  The
	 * caller checked [off, off + len) against the device, so clipping
	 * the read-ahead to it keeps at least len. */
	sequential = c->cdev == dev && off == c->cnext;
	if (sequential && len < READAHEAD && off < limit)
		want = limit - off < READAHEAD ? limit - off : READAHEAD;
	if (want < len)
		want = len;
	c->cstart = c->cend = 0;
	if (want > img->ccap) {
		uint8_t *b = realloc(img->cbuf, want);

		if (!b) {
			snprintf(img->err, sizeof(img->err), "out of memory");
			return NULL;
		}
		img->cbuf = b;
		img->ccap = want;
	}
	ret = pread_full(fd, img->cbuf, want, off);
	if (ret == -ENODATA && want > len) {
		/* the device shrank past the read-ahead: the range itself */
		want = len;
	ret = pread_full(fd, img->cbuf, want, off);
	}
	if (ret) {
		read_failed(img, ret, what, off, len);
		return NULL;
	}
	c->cdev = dev;
	c->cstart = off;
	c->cend = off + want;
	c->cnext = off + len;
	return img->cbuf;
}

void erofs_img_drop_cache(struct erofs_img *img)
{
	struct erofs_rcache *c = img->cache;

	if (c)
		for (unsigned int i = 0; i <= EROFS_READ_LIVE; i++)
			free(c->s[i].buf);
	free(c);
	img->cache = NULL;
	free(img->cbuf);
	img->cbuf = NULL;
	img->ccap = 0;
}

int erofs_img_clone(struct erofs_img *dst, const struct erofs_img *src)
{
	memcpy(dst, src, sizeof(*dst));
	dst->cache = NULL;
	dst->cbuf = NULL;
	dst->ccap = 0;
	dst->clone = true;
	dst->err[0] = 0;
	return 0;
}
