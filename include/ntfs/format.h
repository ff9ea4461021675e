/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Pure NTFS format helpers of libntfs: no I/O, no global state, so that the
 * unit tests can check them byte by byte.
 */
#ifndef NTFS_FORMAT_H
#define NTFS_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntfs/layout.h"

#define NTFS_UPCASE_LEN 65536u		/* UTF-16 units in $UpCase */

/* upcase.c: the $UpCase table Windows writes (NTFS 3.1), host order */
void ntfs_upcase_build(uint16_t *table);
/* Judge the first JUDGED entries of an on-disk (little-endian) $UpCase
 * table against the standard one without building it: an entry must be
 * the character itself or its standard upper case, and an ASCII letter
 * must be upper-cased.  Returns the number of entries that are neither
 * (the first in *FIRST); UINT32_MAX when out of memory. */
uint32_t ntfs_upcase_judge(const uint8_t *le_table, uint32_t judged,
			   uint32_t *first);

/* fixup.c: protect / unprotect a multi-sector record in place */
void ntfs_fixup_apply(uint8_t *rec, uint32_t size, uint16_t usn);
int ntfs_fixup_remove(uint8_t *rec, uint32_t size);	/* -1: torn, REC unchanged */
/* Remove the fixups whether or not each stride's check value matches:
 * every stride end gets its saved bytes back.  Returns the number of
 * strides that did not match (the first, 0-based, in *FIRST_TORN), or -1
 * if the update sequence array itself is invalid. */
int ntfs_fixup_force(uint8_t *rec, uint32_t size, uint32_t *first_torn);

/* runlist.c: one run of clusters; lcn < 0 is a hole */
struct ntfs_run {
	int64_t lcn;
	uint64_t len;
};
/* Encode mapping pairs with terminator; returns bytes or -1 if > max. */
int ntfs_mp_encode(const struct ntfs_run *runs, size_t n, uint8_t *out,
		   size_t max);
/* Decode (for tests and checks); returns the number of runs or -1. */
int ntfs_mp_decode(const uint8_t *mp, size_t len, struct ntfs_run *runs,
		   size_t max);

/* The longest prefix of mapping pairs MP (LEN bytes) whose runs decode and
 * lie inside NR_CLUSTERS: its runs in RUNS (at most MAX, *NRUNS of them);
 * returns the offset where it stops (the end marker when all is valid;
 * always < LEN when LEN > 0, so that an end marker fits there).  RUNS may
 * be NULL (only counted). */
size_t ntfs_mp_valid_prefix(const uint8_t *mp, size_t len, uint64_t nr_clusters,
			    struct ntfs_run *runs, size_t max, size_t *nruns);

/* record.c: build an MFT record attribute by attribute (sorted order) */
struct ntfs_rec {
	uint8_t *buf;
	uint32_t size;
	uint32_t end;			/* offset of the end marker */
};
void ntfs_rec_init(struct ntfs_rec *r, uint8_t *buf, uint32_t size,
		   uint32_t recno, uint16_t seq, uint16_t flags,
		   uint16_t links);
/* An extension record in use, of base record BASE_REF (its number |
 * sequence << 48), with no attribute yet. */
void ntfs_rec_init_extension(struct ntfs_rec *r, uint8_t *buf, uint32_t size,
			     uint32_t recno, uint16_t seq, uint64_t base_ref);
/* Returns a pointer to the value in the record, or NULL if it is full. */
void *ntfs_rec_add_resident(struct ntfs_rec *r, uint32_t type,
			    const char *name, const void *value, uint32_t len,
			    uint8_t resident_flags);
int ntfs_rec_add_nonresident(struct ntfs_rec *r, uint32_t type,
			     const char *name, const struct ntfs_run *runs,
			     size_t n, uint64_t alloc, uint64_t size,
			     uint64_t init);
/* An existing record's header kept, its attributes dropped, so that they
 * can be added again (ATTRS_OFFSET must be valid). */
void ntfs_rec_reopen(struct ntfs_rec *r, uint8_t *buf, uint32_t size);
/* Append a whole attribute as it is (instance kept); NULL if full. */
void *ntfs_rec_add_raw(struct ntfs_rec *r, const void *attr, uint32_t len);
/* Empty, unused record (formatted, not in use). */
void ntfs_rec_init_free(uint8_t *buf, uint32_t size, uint32_t recno,
			uint16_t seq);

/* collate.c: order of keys in the indexes */
int ntfs_collate_file_name(const uint16_t *upcase, const uint16_t *a,
			   size_t alen, const uint16_t *b, size_t blen);
/* Keys A and B of an index with collation RULE: -1, 0, 1, or
 * NTFS_COLLATE_BAD when the rule is unknown, a key does not have the
 * rule's shape, or (file names) UPCASE is NULL. */
#define NTFS_COLLATE_BAD 2
int ntfs_collate(uint32_t rule, const uint16_t *upcase, const uint8_t *a,
		 uint32_t alen, const uint8_t *b, uint32_t blen);
/* index.c: entries and index roots/blocks */
size_t ntfs_ie_file_name(uint8_t *out, uint64_t mref, const void *fn,
			 size_t fnlen);
size_t ntfs_ie_view(uint8_t *out, const void *key, uint16_t klen,
		    const void *data, uint16_t dlen);
size_t ntfs_ie_end(uint8_t *out, bool node, int64_t vcn);
/* $INDEX_ROOT value holding ENTRIES (end entry included) in OUT */
size_t ntfs_index_root(uint8_t *out, uint32_t type, uint32_t collation,
		       uint32_t block_size, uint32_t cluster_size,
		       const uint8_t *entries, size_t elen, bool large);
/* one INDX block of BLOCK_SIZE bytes, fixups applied; NODE: its entries
 * have sub-nodes */
int ntfs_index_block(uint8_t *out, uint32_t block_size, int64_t vcn,
		     const uint8_t *entries, size_t elen, uint16_t usn,
		     bool node);

/* secure.c: security descriptor hash used by $SDH */
uint32_t ntfs_sd_hash(const uint8_t *sd, size_t len);
/* The default security descriptors of a fresh volume (ids 0x100-0x102):
 * the used part of the first $SDS block and each entry's header (the data
 * of its $SII and $SDH entries). */
#define NTFS_NR_SD 3
struct ntfs_secure {
	uint8_t sds[1024];
	size_t sds_len;
	struct ntfs_sds_header hdr[NTFS_NR_SD];
};
void ntfs_secure_build(struct ntfs_secure *s);

/* boot.c */
struct ntfs_geometry {
	uint32_t sector_size;
	uint32_t cluster_size;
	uint32_t mft_record_size;
	uint32_t index_block_size;
	uint64_t volume_sectors;	/* all sectors, backup included */
	uint64_t nr_clusters;
};
/* size in bytes of one thing, encoded as in the boot sector */
int8_t ntfs_clusters_per(uint32_t bytes, uint32_t cluster_size);
void ntfs_boot_build(struct ntfs_boot_sector *bs,
		     const struct ntfs_geometry *g, int64_t mft_lcn,
		     int64_t mftmirr_lcn, uint64_t serial, uint32_t hidden,
		     uint16_t heads, uint16_t spt);

/* time: seconds since 1970 to NTFS (100 ns since 1601) */
static inline int64_t ntfs_time(int64_t unix_sec)
{
	return unix_sec * 10000000LL + NTFS_TIME_OFFSET;
}

static inline uint64_t ntfs_align(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

#endif
