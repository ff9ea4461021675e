// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The tar input stream: the raw file (a plain tar, seekable or a pipe) or
 * its decompression (gzip through zlib, xz and lzma through liblzma, zstd
 * through libzstd; concatenated members/streams/frames are read on).
 * Reads are buffered; skips of a seekable plain file are seeks.
 */
#include "config.h"

#include <errno.h>
#include <lzma.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "tar.h"

#define IN_BUF (256u << 10)
#define OUT_BUF (256u << 10)
/* What the xz/lzma decoder may allocate: 4 times the dictionary of the
 * largest preset (xz -9, 64 MiB).  A crafted or custom stream asking for
 * up to 4 GiB is refused with a message instead of allocated (found by
 * the fuzz tier); zstd's decoder has its own window limit (128 MiB),
 * gzip needs 32 KiB. */
#define XZ_MEMLIMIT (256ull << 20)

struct tar_stream {
	int fd;
	enum tar_codec codec;
	const struct fsf_log *log;
	const char *name;
	bool seekable;
	bool in_eof;		/* the file is at its end */
	bool dec_end;		/* the decoder saw the end of its stream */
	bool pending;		/* the decoder filled its output: more may
				 * come without input */
	uint64_t base;		/* file offset of the first byte */
	uint64_t pos;		/* bytes consumed by the reader */
	uint8_t *in, *out;
	size_t in_len, in_pos;	/* raw bytes buffered */
	size_t out_len, out_pos;	/* decoded (or raw) bytes buffered */
	z_stream z;
	lzma_stream x;
	ZSTD_DStream *zs;

	/* a blob whose raw bytes are hashed as they are read (OCI layers) */
	EVP_MD_CTX *md;
	uint8_t want[32];
	uint64_t want_size, raw_len;
	const char *digest;

	/* a copy of the decoded stream (--ungzip=FILE) */
	int (*tee)(void *arg, const void *buf, size_t len);
	void *tee_arg;
};

int tar_stream_open(struct tar_stream **out, int fd, enum tar_codec codec,
		    const struct fsf_log *log, const char *name)
{
	struct tar_stream *ts = calloc(1, sizeof(*ts));
	struct stat st;
	off_t at;
	int ret = 0;

	if (!ts)
		return -ENOMEM;
	ts->fd = fd;
	ts->codec = codec;
	ts->log = log;
	ts->name = name;
	ts->in = malloc(IN_BUF);
	ts->out = malloc(OUT_BUF);
	if (!ts->in || !ts->out) {
		ret = -ENOMEM;
		goto fail;
	}
	at = lseek(fd, 0, SEEK_CUR);
	ts->seekable = codec == TAR_PLAIN && at >= 0 && !fstat(fd, &st) &&
		       S_ISREG(st.st_mode);
	ts->base = ts->seekable ? (uint64_t)at : 0;
	switch (codec) {
	case TAR_GZIP:
		/* 15 + 32: a zlib or gzip header, detected */
		if (inflateInit2(&ts->z, 15 + 32) != Z_OK)
			ret = -ENOMEM;
		break;
	case TAR_XZ:
		ts->x = (lzma_stream)LZMA_STREAM_INIT;
		if (lzma_auto_decoder(&ts->x, XZ_MEMLIMIT, LZMA_CONCATENATED) != LZMA_OK)
			ret = -ENOMEM;
		break;
	case TAR_ZSTD:
		ts->zs = ZSTD_createDStream();
		if (!ts->zs || ZSTD_isError(ZSTD_initDStream(ts->zs)))
			ret = -ENOMEM;
		break;
	case TAR_PLAIN:
		break;
	}
	if (ret)
		goto fail;
	*out = ts;
	return 0;
fail:
	free(ts->in);
	free(ts->out);
	free(ts);
	return ret;
}

void tar_stream_close(struct tar_stream *ts)
{
	if (!ts)
		return;
	if (ts->codec == TAR_GZIP)
		inflateEnd(&ts->z);
	else if (ts->codec == TAR_XZ)
		lzma_end(&ts->x);
	else if (ts->codec == TAR_ZSTD)
		ZSTD_freeDStream(ts->zs);
	EVP_MD_CTX_free(ts->md);
	free(ts->in);
	free(ts->out);
	free(ts);
}

bool tar_stream_seekable(const struct tar_stream *ts)
{
	return ts->seekable;
}

int tar_stream_fd(const struct tar_stream *ts)
{
	return ts->fd;
}

uint64_t tar_stream_pos(const struct tar_stream *ts)
{
	return ts->base + ts->pos;
}

/* R raw bytes just read into BUF: hashed, and refused past the size the
 * blob's descriptor gives */
static ssize_t verify_raw(struct tar_stream *ts, const uint8_t *buf, size_t r)
{
	ts->raw_len += r;
	if (ts->raw_len > ts->want_size) {
		fsf_err(ts->log, "blob %s is larger than the %llu bytes its descriptor gives",
			ts->digest, (unsigned long long)ts->want_size);
		return -EIO;
	}
	if (EVP_DigestUpdate(ts->md, buf, r) != 1)
		return -ENOMEM;
	return (ssize_t)r;
}

/* raw bytes into BUF; 0 at the end of the file */
static ssize_t raw_read(struct tar_stream *ts, uint8_t *buf, size_t len)
{
	for (;;) {
		ssize_t r = read(ts->fd, buf, len);

		if (r >= 0 || errno != EINTR) {
			if (r < 0) {
				int e = errno;

				fsf_err(ts->log, "cannot read %s: %s", ts->name,
					strerror(e));
				return -e;
			}
			if (ts->md && r > 0)
				return verify_raw(ts, buf, (size_t)r);
			return r;
		}
	}
}

static int fill_in(struct tar_stream *ts)
{
	ssize_t r;

	if (ts->in_pos < ts->in_len || ts->in_eof)
		return 0;
	r = raw_read(ts, ts->in, IN_BUF);
	if (r < 0)
		return (int)r;
	ts->in_pos = 0;
	ts->in_len = (size_t)r;
	ts->in_eof = r == 0;
	return 0;
}

static int corrupt(struct tar_stream *ts, const char *what, const char *msg)
{
	fsf_err(ts->log, "%s: %s data is corrupt: %s", ts->name, what, msg);
	return -EIO;
}

/* decode more into ts->out; out_len 0 afterwards means the end */
static int decode_more(struct tar_stream *ts)
{
	ts->out_pos = ts->out_len = 0;
	while (!ts->out_len) {
		int ret = fill_in(ts);

		if (ret)
			return ret;
		if (ts->in_eof && !ts->pending &&
		    (ts->codec != TAR_XZ || ts->dec_end))
			return 0;
		switch (ts->codec) {
		case TAR_GZIP: {
			int zr;

			ts->z.next_in = ts->in + ts->in_pos;
			ts->z.avail_in = (uInt)(ts->in_len - ts->in_pos);
			ts->z.next_out = ts->out;
			ts->z.avail_out = OUT_BUF;
			zr = inflate(&ts->z, Z_NO_FLUSH);
			ts->in_pos = ts->in_len - ts->z.avail_in;
			ts->out_len = OUT_BUF - ts->z.avail_out;
			if (zr == Z_STREAM_END) {
				/* another member may follow */
				inflateReset(&ts->z);
			} else if (zr != Z_OK && zr != Z_BUF_ERROR) {
				return corrupt(ts, "gzip", ts->z.msg ? ts->z.msg : "inflate failed");
			}
			break;
		}
		case TAR_XZ: {
			lzma_ret xr;

			ts->x.next_in = ts->in + ts->in_pos;
			ts->x.avail_in = ts->in_len - ts->in_pos;
			ts->x.next_out = ts->out;
			ts->x.avail_out = OUT_BUF;
			xr = lzma_code(&ts->x, ts->in_eof ? LZMA_FINISH : LZMA_RUN);
			ts->in_pos = ts->in_len - ts->x.avail_in;
			ts->out_len = OUT_BUF - ts->x.avail_out;
			if (xr == LZMA_STREAM_END) {
				ts->dec_end = true;
			} else if (xr == LZMA_MEMLIMIT_ERROR) {
				fsf_err(ts->log, "%s: the xz/lzma stream needs %llu MiB to decode, more than the %llu MiB allowed; decompress it with xz -dc and pipe the tar in",
					ts->name,
					(unsigned long long)(lzma_memusage(&ts->x) >> 20),
					(unsigned long long)(XZ_MEMLIMIT >> 20));
				return -ENOMEM;
			} else if (xr != LZMA_OK && xr != LZMA_BUF_ERROR)
				return corrupt(ts, "xz/lzma", "lzma_code failed");
			if (ts->in_eof && !ts->out_len && !ts->dec_end)
				return corrupt(ts, "xz/lzma", "truncated stream");
			break;
		}
		case TAR_ZSTD: {
			ZSTD_inBuffer ib = { ts->in, ts->in_len, ts->in_pos };
			ZSTD_outBuffer ob = { ts->out, OUT_BUF, 0 };
			size_t zr = ZSTD_decompressStream(ts->zs, &ob, &ib);

			if (ZSTD_isError(zr))
				return corrupt(ts, "zstd", ZSTD_getErrorName(zr));
			ts->in_pos = ib.pos;
			ts->out_len = ob.pos;
			break;
		}
		case TAR_PLAIN:
			return 0;
		}
		ts->pending = ts->out_len == OUT_BUF;
		if (ts->tee && ts->out_len &&
		    (ret = ts->tee(ts->tee_arg, ts->out, ts->out_len)))
			return ret;
	}
	return 0;
}

void tar_stream_tee(struct tar_stream *ts,
		    int (*fn)(void *arg, const void *buf, size_t len),
		    void *arg)
{
	ts->tee = fn;
	ts->tee_arg = arg;
}

static int refill(struct tar_stream *ts)
{
	if (ts->codec != TAR_PLAIN)
		return decode_more(ts);
	if (ts->in_eof)
		return 0;
	{
		ssize_t r = raw_read(ts, ts->out, OUT_BUF);

		if (r < 0)
			return (int)r;
		ts->out_pos = 0;
		ts->out_len = (size_t)r;
		ts->in_eof = r == 0;
	}
	return 0;
}

int tar_stream_read(struct tar_stream *ts, void *buf, size_t len)
{
	uint8_t *dst = buf;

	while (len) {
		size_t n;

		if (ts->out_pos == ts->out_len) {
			int ret = refill(ts);

			if (ret)
				return ret;
			if (ts->out_pos == ts->out_len)
				return -ENODATA;	/* premature end */
		}
		n = ts->out_len - ts->out_pos;
		if (n > len)
			n = len;
		if (dst) {
			memcpy(dst, ts->out + ts->out_pos, n);
			dst += n;
		}
		ts->out_pos += n;
		ts->pos += n;
		len -= n;
	}
	return 0;
}

int tar_stream_skip(struct tar_stream *ts, uint64_t len)
{
	uint64_t buffered = ts->out_len - ts->out_pos;
	struct stat st;

	if (!ts->seekable || len <= buffered) {
		while (len) {
			size_t n = len > SIZE_MAX / 2 ? SIZE_MAX / 2 : (size_t)len;
			int ret = tar_stream_read(ts, NULL, n);

			if (ret)
				return ret;
			len -= n;
		}
		return 0;
	}
	/* a seek past the buffer; the end must be inside the file */
	ts->pos += buffered;
	len -= buffered;
	ts->out_pos = ts->out_len = 0;
	if (fstat(ts->fd, &st))
		return -errno;
	if ((uint64_t)st.st_size < ts->base + ts->pos ||
	    len > (uint64_t)st.st_size - ts->base - ts->pos) {
		ts->in_eof = true;
		return -ENODATA;
	}
	ts->pos += len;
	if (lseek(ts->fd, (off_t)(ts->base + ts->pos), SEEK_SET) < 0)
		return -errno;
	return 0;
}

int tar_stream_verify(struct tar_stream *ts, const uint8_t want[32],
		      uint64_t size, const char *digest)
{
	ts->md = EVP_MD_CTX_new();
	if (!ts->md || EVP_DigestInit_ex(ts->md, EVP_sha256(), NULL) != 1)
		return -ENOMEM;
	memcpy(ts->want, want, sizeof(ts->want));
	ts->want_size = size;
	ts->digest = digest;
	/* every byte goes through raw_read: no seeks past data */
	ts->seekable = false;
	return 0;
}

int tar_stream_verify_end(struct tar_stream *ts)
{
	uint8_t got[32];
	unsigned int glen = 0;
	char hex[65];

	/* what the reader left (the archive's padding, a compressed
	 * stream's tail) is part of the blob */
	while (!ts->in_eof) {
		ssize_t r = raw_read(ts, ts->in, IN_BUF);

		if (r < 0)
			return (int)r;
		ts->in_eof = r == 0;
	}
	if (ts->raw_len != ts->want_size) {
		fsf_err(ts->log, "blob %s is %llu bytes, its descriptor gives %llu",
			ts->digest, (unsigned long long)ts->raw_len,
			(unsigned long long)ts->want_size);
		return -EIO;
	}
	if (EVP_DigestFinal_ex(ts->md, got, &glen) != 1 || glen != 32)
		return -ENOMEM;
	if (memcmp(got, ts->want, 32)) {
		for (int i = 0; i < 32; i++)
			snprintf(hex + 2 * i, 3, "%02x", got[i]);
		fsf_err(ts->log, "blob %s does not match its digest: its content hashes to sha256:%s",
			ts->digest, hex);
		return -EIO;
	}
	return 0;
}

int tar_stream_drain(struct tar_stream *ts)
{
	for (;;) {
		int ret;

		ts->pos += ts->out_len - ts->out_pos;
		ts->out_pos = ts->out_len;
		ret = refill(ts);
		if (ret)
			return ret;
		if (ts->out_pos == ts->out_len)
			return 0;
	}
}
