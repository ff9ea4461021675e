/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lz4_encode.c: an LZ4 block encoder into a destination size (erofs's
 * pclusters): as much of SRC as fits, one independent block */
#ifndef FSFORGE_LZ4_ENCODE_H
#define FSFORGE_LZ4_ENCODE_H
#include <stdint.h>

struct erofs_lz4enc;

/* tables for blocks of any size; ATTEMPTS: candidates tried per search */
struct erofs_lz4enc *erofs_lz4enc_new(int attempts);
void erofs_lz4enc_free(struct erofs_lz4enc *ws);
/* Compress a prefix of SRC (LEN bytes) into at most CAP bytes of DST:
 * returns the bytes written, with the bytes of SRC they hold in *TAKEN
 * (a valid LZ4 block of *TAKEN bytes; 0 when CAP is 0) */
int erofs_lz4enc_destsize(struct erofs_lz4enc *ws, const uint8_t *src,
			  uint32_t len, uint8_t *dst, uint32_t cap,
			  uint32_t *taken);
#endif
