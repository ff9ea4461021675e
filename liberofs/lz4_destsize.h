/* SPDX-License-Identifier: GPL-2.0-or-later */
/* liberofs/lz4_destsize.c: an LZ4 block encoder into a destination size
 * (erofs's pclusters): as much of SRC as fits, one independent block */
#ifndef LIBEROFS_LZ4_DESTSIZE_H
#define LIBEROFS_LZ4_DESTSIZE_H
#include <stdint.h>

/* candidates tried per search for -zlz4hc's default level (9): as many
 * bytes per pcluster as lz4hc 9 at 0.90x its instructions */
#define EROFS_LZ4ENC_ATTEMPTS	384

struct erofs_lz4enc;

/* tables (384 KiB) for blocks of any size, one set per thread; ATTEMPTS:
 * candidates tried per search */
struct erofs_lz4enc *erofs_lz4enc_new(int attempts);
void erofs_lz4enc_free(struct erofs_lz4enc *ws);
/* Compress a prefix of SRC (LEN bytes) into at most CAP bytes of DST:
 * returns the bytes written, with the bytes of SRC they hold in *TAKEN (a
 * valid LZ4 block of *TAKEN bytes, the same for the same SRC, LEN and CAP
 * whatever WS encoded before; nothing taken when CAP is under 2).  No
 * allocation: WS's tables are reused without clearing. */
int erofs_lz4enc_destsize(struct erofs_lz4enc *ws, const uint8_t *src,
			  uint32_t len, uint8_t *dst, uint32_t cap,
			  uint32_t *taken);
#endif
