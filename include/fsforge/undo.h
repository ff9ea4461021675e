/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Undo files: every block of a device is saved before its first overwrite,
 * so that a run can be taken back byte for byte (the idea of e2fsprogs'
 * undo I/O manager and e2undo; the format is our own).
 *
 * Attached to a struct fsf_dev, the undo file sees every write, because
 * every write goes through fsf_dev_pwrite/fsf_dev_zero/fsf_dev_set_size.
 * A block's old content is durable in the undo file (fdatasync) before the
 * write that changes it is issued; sequential writes save ahead so that a
 * long stream costs a few syncs, not one per write.
 *
 * Format (little-endian; BS = block size, 4096):
 *   header, one BS block at offset 0: magic "FSFUNDO1", version, BS, the
 *     device size before and after the run, the number of saved blocks,
 *     where the index is, state (finished or not), a CRC-32C of a sample
 *     of the device's blocks after the run, the tool's name, header CRC;
 *   records from offset BS on, in the order they were saved: a 32-byte
 *     record header (magic, length, block number, CRC of the data, CRC of
 *     the header) and the block's old content (BS bytes, or less for the
 *     last block of a device whose size is not a multiple of BS);
 *   index, written when the run ends: per saved block its number, record
 *     offset, length and the CRC of its content after the run; index CRC.
 * A run that dies leaves an unfinished file: its records still carry their
 * own CRCs and can be restored with force.
 */
#ifndef FSFORGE_UNDO_H
#define FSFORGE_UNDO_H

#include <stdint.h>

#include "fsforge/dev.h"

#define FSF_UNDO_BLOCK 4096u

enum fsf_undo_flags {
	FSF_UNDO_FORCE = 1u << 0,	/* restore despite a mismatch */
	FSF_UNDO_DRY_RUN = 1u << 1,	/* verify only, write nothing */
};

/*
 * Create (or overwrite) the undo file PATH for DEV, which must be open for
 * writing, and attach it: from now on every write to DEV saves the blocks
 * it changes first.  Refused when PATH is the device itself or lives on it.
 * Returns 0 or a negative errno (reported through dev->log).
 */
int fsf_undo_start(struct fsf_dev *dev, const char *path, const char *tool);

/* Called by the I/O layer. */
int fsf_undo_save(struct fsf_dev *dev, uint64_t off, uint64_t len);
/* Record the state the run left (after the device is flushed): the
 * content CRC of every saved block, a sample, the index; then the header
 * says finished.  Idempotent. */
int fsf_undo_finish(struct fsf_dev *dev);
void fsf_undo_free(struct fsf_dev *dev);
/* Number of blocks saved so far. */
uint64_t fsf_undo_blocks(const struct fsf_dev *dev);

/*
 * Put back on DEVICE the blocks saved in the undo file PATH.  Refused
 * (unless FSF_UNDO_FORCE) when the file is damaged, truncated or unfinished,
 * when the device's size differs from the size after the run, or when any
 * saved block's current content (or the sample) is not what the run left:
 * the undo file belongs to another device or the device changed since.
 * The device is opened as fsf_dev_open_check does (mounted or in-use
 * devices are refused).  Returns 0 or a negative errno (reported).
 */
int fsf_undo_apply(const char *path, const char *device, unsigned flags,
		   const struct fsf_log *log);

#endif
