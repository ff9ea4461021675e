// SPDX-License-Identifier: GPL-2.0-or-later
/* libntfs: MFT records of a volume, read and written through the device
 * layer, with a small cache of chunks of consecutive records. */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/format.h"
#include "ntfs/volume_io.h"

/*
 * MFT records are read through a small cache of whole chunks (16 KiB of
 * consecutive records): a checker reads the MFT in order and its index
 * pass mostly meets the files of one directory close together, so this
 * turns one read per record into one per chunk while keeping memory flat.
 */
#define CHUNK_BYTES 16384u

static uint8_t *cached(struct ntfs_vol *v, uint64_t recno)
{
	struct ntfs_rec_cache *rc = &v->cache;
	uint32_t rs = v->boot.g.mft_record_size;
	uint64_t k, first, off0;
	uint32_t n;
	int victim = 0;

	if (!rc->mem) {
		rc->per_chunk = CHUNK_BYTES / rs ? CHUNK_BYTES / rs : 1;
		rc->mem = malloc((size_t)NTFS_CACHE_SLOTS * rc->per_chunk * rs);
		if (!rc->mem)
			return NULL;
		for (int i = 0; i < NTFS_CACHE_SLOTS; i++)
			rc->chunk[i] = UINT64_MAX;
	}
	k = recno / rc->per_chunk;
	for (int i = 0; i < NTFS_CACHE_SLOTS; i++) {
		if (rc->chunk[i] == k) {
			rc->stamp[i] = ++rc->clock;
			return rc->mem + ((size_t)i * rc->per_chunk +
					  recno % rc->per_chunk) * rs;
		}
		if (rc->stamp[i] < rc->stamp[victim])
			victim = i;
	}
	/* only a chunk that lies in one piece on disk is cached */
	first = k * rc->per_chunk;
	n = (uint32_t)(v->mft_records - first < rc->per_chunk ?
		       v->mft_records - first : rc->per_chunk);
	off0 = ntfs_vol_record_offset(v, first);
	if (off0 == UINT64_MAX ||
	    ntfs_vol_record_offset(v, first + n - 1) != off0 + (uint64_t)(n - 1) * rs)
		return NULL;
	for (uint32_t i = 1; i + 1 < n; i++)
		if (ntfs_vol_record_offset(v, first + i) != off0 + (uint64_t)i * rs)
			return NULL;
	rc->chunk[victim] = UINT64_MAX;
	if (fsf_dev_pread(v->dev, rc->mem + (size_t)victim * rc->per_chunk * rs,
			  (size_t)n * rs, off0))
		return NULL;	/* read record by record: errors stay local */
	rc->chunk[victim] = k;
	rc->stamp[victim] = ++rc->clock;
	return rc->mem + ((size_t)victim * rc->per_chunk + recno % rc->per_chunk) * rs;
}

void ntfs_vol_cache_drop(struct ntfs_vol *v)
{
	for (int i = 0; i < NTFS_CACHE_SLOTS; i++)
		v->cache.chunk[i] = UINT64_MAX;
}

void ntfs_vol_cache_free(struct ntfs_vol *v)
{
	free(v->cache.mem);
	v->cache.mem = NULL;
}

int ntfs_vol_read_record(struct ntfs_vol *v, uint64_t recno, uint8_t *buf)
{
	uint64_t off = ntfs_vol_record_offset(v, recno);
	uint32_t rs = v->boot.g.mft_record_size;
	const uint8_t *hit;
	int ret;

	if (off == UINT64_MAX)
		return -ERANGE;
	hit = ntfs_vol_assumed(v, recno);
	if (!hit)
		hit = cached(v, recno);
	if (hit)
		memcpy(buf, hit, rs);
	else if ((ret = fsf_dev_pread(v->dev, buf, rs, off)))
		return ret;
	/* the LSN field lies before the first protected word */
	if (!memcmp(buf, "FILE", 4)) {
		struct ntfs_record_header h;

		memcpy(&h, buf, sizeof(h));
		if (le64toh(h.lsn) > v->max_lsn)
			v->max_lsn = le64toh(h.lsn);
	}
	return 0;
}

int ntfs_vol_write_record(struct ntfs_vol *v, uint64_t recno, uint8_t *buf,
			  uint64_t mirrored)
{
	const struct ntfs_boot_info *b = &v->boot;
	uint32_t size = b->g.mft_record_size;
	uint64_t off = ntfs_vol_record_offset(v, recno);
	struct ntfs_record_header h;
	uint16_t usn;
	int ret;

	if (off == UINT64_MAX)
		return -ERANGE;
	memcpy(&h, buf, sizeof(h));
	memcpy(&usn, buf + le16toh(h.usa_ofs), 2);
	usn = (uint16_t)(le16toh(usn) + 1);
	ntfs_fixup_apply(buf, size, usn);
	ret = fsf_dev_pwrite(v->dev, buf, size, off);
	if (v->cache.mem) {
		uint32_t per = v->cache.per_chunk;

		for (int i = 0; i < NTFS_CACHE_SLOTS; i++)
			if (v->cache.chunk[i] == recno / per)
				memcpy(v->cache.mem + ((size_t)i * per + recno % per) * size,
				       buf, size);
	}
	if (!ret && recno < mirrored)
		ret = fsf_dev_pwrite(v->dev, buf, size,
				     (uint64_t)b->mftmirr_lcn * b->g.cluster_size +
				     recno * size);
	ntfs_fixup_remove(buf, size);
	return ret;
}
