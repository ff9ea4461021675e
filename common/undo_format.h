/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The undo file format (see include/fsforge/undo.h), shared by the writer
 * (undo.c) and the restorer (undo_apply.c).  Internal to common/. */
#ifndef FSFORGE_UNDO_FORMAT_H
#define FSFORGE_UNDO_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "fsforge/undo.h"

#define MAGIC "FSFUNDO1"
#define UNDO_VERSION 1u
#define STATE_FINISHED 1u
#define REC_MAGIC 0x52444e55u	/* "UNDR" */
#define HDR_BYTES 128u		/* used part of the header block */
#define REC_HDR 32u
#define IDX_ENTRY 24u
#define NSAMPLE 16u
#define BATCH 256u		/* records per write to the undo file */
#define AHEAD_MAX 1024u		/* blocks saved ahead of a sequential stream */
/* CRC-32C (Castagnoli), reflected, as in iSCSI and ext4 */
uint32_t undo_crc32c(uint32_t crc, const void *buf, size_t len);
void undo_put32(uint8_t *p, uint32_t v);
void undo_put64(uint8_t *p, uint64_t v);
uint32_t undo_get32(const uint8_t *p);
uint64_t undo_get64(const uint8_t *p);
int undo_pwrite_all(int fd, const void *buf, size_t len, uint64_t off);
int undo_pread_all(int fd, void *buf, size_t len, uint64_t off);
/* Bytes of block BLK that exist on a device of SIZE bytes. */
uint32_t undo_blk_len(uint64_t blk, uint32_t bs, uint64_t size);
/* CRC of NSAMPLE blocks spread over the device (first and last among
 * them): who the device is, beyond the blocks the run changed.  BUF holds
 * one block. */
int undo_sample_crc(struct fsf_dev *dev, uint32_t bs, uint64_t size,
		    uint8_t *buf, uint32_t *crc);

#endif
