/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * $Secure's $SDS stream and the keys of its two indexes (libntfs/sds.c).
 * $SDS holds the security descriptors, each entry a struct
 * ntfs_sds_header and its descriptor, 16-byte aligned, in blocks of
 * NTFS_SDS_BLOCK bytes each followed by its mirror; an entry is valid when
 * its header names its own offset, a security id from
 * NTFS_SECURITY_ID_FIRST on, a length that holds a descriptor inside its
 * block, and the descriptor's hash.  $SII indexes the entries by security
 * id (key: the id), $SDH by hash (key: hash then id); both carry the
 * entry's header as data.
 */
#ifndef NTFS_SDS_H
#define NTFS_SDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntfs/file_attrs.h"
#include "ntfs/index_build.h"
#include "ntfs/layout.h"
#include "ntfs/read.h"

/* The index entries of the N headers H: KEYS[i] (8 bytes each) gets the
 * $SDH key of H[i] (hash, security id); SII[i] keys on the id (the last
 * 4 bytes of KEYS[i]), SDH[i] on the whole of KEYS[i]; both carry H[i]
 * as their data.  In the order of H (sort them with ntfs_ib_sort). */
void ntfs_sds_index_entries(const struct ntfs_sds_header *h, size_t n,
			    uint8_t (*keys)[8], struct ntfs_ib_entry *sii,
			    struct ntfs_ib_entry *sdh);

/* A window on $SDS: bytes AT..AT+LEN, read a page at a time. */
struct ntfs_sds_window {
	uint8_t *buf;
	size_t cap;
	uint64_t at, len;
};

/* $SDS of a volume, read through two windows, one on a block and one on
 * its mirror, so that it is never held whole. */
struct ntfs_sds {
	struct ntfs_vol *v;
	struct ntfs_run *runs;
	long nruns;
	uint64_t size;			/* data size in bytes */
	struct ntfs_sds_window win[2];	/* on a block, on its mirror */
	bool nomem;
};

/* $SDS of $Secure (record D, base record REC, checked) into *S: 1 when
 * it has a non-resident $DATA named "$SDS" whose runs decode (with an
 * $ATTRIBUTE_LIST: wherever the list puts its extents, in the records
 * IN_USE accepts, joined in VCN order), 0 otherwise (*S empty), -ENOMEM.
 * Close *S in every case. */
int ntfs_sds_open(struct ntfs_vol *v, ntfs_rec_in_use in_use, const void *in_use_arg,
		  uint64_t d, const uint8_t *rec, struct ntfs_sds *s);
void ntfs_sds_close(struct ntfs_sds *s);

/* Called for every valid entry of the scan, H its header, OFF its offset;
 * MIRROR when the entry at OFF is not valid but its copy in the mirror
 * block is (ntfs_sds_restore writes it back).  Nonzero stops the scan and
 * is returned. */
typedef int (*ntfs_sds_entry_fn)(void *arg, struct ntfs_sds *s,
				 const struct ntfs_sds_header *h, uint64_t off,
				 bool mirror);
/* Every valid entry of $SDS in offset order, block by block (an offset
 * that holds none is passed 16 bytes at a time).  0, -ENOMEM or FN's. */
int ntfs_sds_scan(struct ntfs_sds *s, ntfs_sds_entry_fn fn, void *arg);
/* During the scan's call for a MIRROR entry: its copy written over the
 * LEN bytes at OFF.  0 or -1 (a write error). */
int ntfs_sds_restore(struct ntfs_sds *s, uint64_t off, uint32_t len);
/* Can ntfs_sds_write_entries write SDS_LEN bytes of entries: is $SDS
 * big enough, and are both pages it writes (at 0 and at the mirror
 * block) on clusters, not holes? */
bool ntfs_sds_entries_fit(const struct ntfs_sds *s, size_t sds_len);
/* The SDS_LEN bytes of entries SDS (the default descriptors of
 * ntfs_secure_build) written at the start of $SDS and of its mirror
 * block, each in a 4 KiB page padded with zeros.  0, -ENOSPC when $SDS
 * is too small, or -1 (a write error). */
int ntfs_sds_write_entries(struct ntfs_sds *s, const uint8_t *sds, size_t sds_len);

#endif
