// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Read side: one pcluster decoded with the Debian libraries (liblz4,
 * liblzma's MicroLZMA, libdeflate, libzstd); the output must fill exactly
 * the extent's length, or with a partial reference (PARTIAL_REF) the
 * extent is the first bytes of a longer output: the decoder stops there
 * (deflate decodes into a scratch buffer up to the extent limit).  SRC is
 * the compressed stream with the leading zero padding already skipped.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <libdeflate.h>
#include <lz4.h>
#include <lzma.h>
#include <string.h>
#include <zstd.h>

#include "erofs/erofs_fs.h"
#include "erofs/read.h"

static int lz4_decode(struct erofs_img *img, const uint8_t *src, size_t slen,
		      uint8_t *dst, size_t dlen, bool prefix)
{
	int r;

	if (slen > (size_t)INT32_MAX || dlen > (size_t)INT32_MAX)
		return -EINVAL;
	if ((img->feature_incompat & EROFS_INCOMPAT_ZERO_PADDING) && !prefix)
		r = LZ4_decompress_safe((const char *)src, (char *)dst, (int)slen,
					(int)dlen);
	else	/* the stream starts the pcluster, junk may follow it */
		r = LZ4_decompress_safe_partial((const char *)src, (char *)dst,
						(int)slen, (int)dlen, (int)dlen);
	return r == (int)dlen ? 0 : -EUCLEAN;
}

static int lzma_decode(const uint8_t *src, size_t slen, uint8_t *dst,
		       size_t dlen, bool prefix)
{
	lzma_stream s = LZMA_STREAM_INIT;
	uint32_t dict = dlen < 4096 ? 4096 : (uint32_t)dlen;
	lzma_ret r;

	if (lzma_microlzma_decoder(&s, slen, dlen, !prefix, dict) != LZMA_OK)
		return -ENOMEM;
	s.next_in = src;
	s.avail_in = slen;
	s.next_out = dst;
	s.avail_out = dlen;
	r = lzma_code(&s, LZMA_FINISH);
	lzma_end(&s);
	return (r == LZMA_STREAM_END || r == LZMA_OK) && s.avail_out == 0 ?
	       0 : -EUCLEAN;
}

static int deflate_decode(const uint8_t *src, size_t slen, uint8_t *dst,
			  size_t dlen, bool prefix)
{
	struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
	enum libdeflate_result r;
	uint8_t *all = NULL;
	size_t got = 0;

	if (!d)
		return -ENOMEM;
	if (!prefix) {
		r = libdeflate_deflate_decompress(d, src, slen, dst, dlen, NULL);
	} else if (!(all = malloc(EROFS_READ_MAX_EXTENT))) {
		libdeflate_free_decompressor(d);
		return -ENOMEM;
	} else {
		r = libdeflate_deflate_decompress(d, src, slen, all,
						  EROFS_READ_MAX_EXTENT, &got);
		if (r == LIBDEFLATE_SUCCESS && got >= dlen)
			memcpy(dst, all, dlen);
		else
			r = LIBDEFLATE_BAD_DATA;
		free(all);
	}
	libdeflate_free_decompressor(d);
	return r == LIBDEFLATE_SUCCESS ? 0 : -EUCLEAN;
}

static int zstd_decode(const uint8_t *src, size_t slen, uint8_t *dst,
		       size_t dlen, bool prefix)
{
	ZSTD_DStream *z;
	ZSTD_inBuffer in = { src, slen, 0 };
	ZSTD_outBuffer out = { dst, dlen, 0 };
	size_t r;

	if (!prefix) {
		r = ZSTD_decompress(dst, dlen, src, slen);
		return !ZSTD_isError(r) && r == dlen ? 0 : -EUCLEAN;
	}
	/* a stream: it stops when DST is full */
	z = ZSTD_createDStream();
	if (!z)
		return -ENOMEM;
	do {
		r = ZSTD_decompressStream(z, &out, &in);
	} while (!ZSTD_isError(r) && r && out.pos < dlen && in.pos < slen);
	ZSTD_freeDStream(z);
	return !ZSTD_isError(r) && out.pos == dlen ? 0 : -EUCLEAN;
}

int erofs_decompress(struct erofs_img *img, unsigned int alg,
		     const uint8_t *src, size_t slen, uint8_t *dst, size_t dlen,
		     bool prefix)
{
	switch (alg) {
	case Z_EROFS_COMPRESSION_LZ4:
		return lz4_decode(img, src, slen, dst, dlen, prefix);
	case Z_EROFS_COMPRESSION_LZMA:
		return lzma_decode(src, slen, dst, dlen, prefix);
	case Z_EROFS_COMPRESSION_DEFLATE:
		return deflate_decode(src, slen, dst, dlen, prefix);
	case Z_EROFS_COMPRESSION_ZSTD:
		return zstd_decode(src, slen, dst, dlen, prefix);
	}
	return -EOPNOTSUPP;
}
