// SPDX-License-Identifier: GPL-2.0-or-later
/* fsck.ntfs: MFT records and attribute data, through the device layer. */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs_check.h"

/*
 * MFT records are read through a small cache of whole chunks (16 KiB of
 * consecutive records): pass 1 reads the MFT in order and the index pass
 * mostly meets the files of one directory close together, so this turns
 * one read per record into one per chunk while keeping memory flat.
 */
#define CHUNK_BYTES 16384u

static uint8_t *cached(struct ntfs_check *c, uint64_t recno)
{
	struct ntfs_rec_cache *rc = &c->cache;
	uint32_t rs = c->vol.boot.g.mft_record_size;
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
	n = (uint32_t)(c->vol.mft_records - first < rc->per_chunk ?
		       c->vol.mft_records - first : rc->per_chunk);
	off0 = ntfs_vol_record_offset(&c->vol, first);
	if (off0 == UINT64_MAX ||
	    ntfs_vol_record_offset(&c->vol, first + n - 1) != off0 + (uint64_t)(n - 1) * rs)
		return NULL;
	for (uint32_t i = 1; i + 1 < n; i++)
		if (ntfs_vol_record_offset(&c->vol, first + i) != off0 + (uint64_t)i * rs)
			return NULL;
	rc->chunk[victim] = UINT64_MAX;
	if (fsf_dev_pread(&c->dev, rc->mem + (size_t)victim * rc->per_chunk * rs,
			  (size_t)n * rs, off0))
		return NULL;	/* read record by record: errors stay local */
	rc->chunk[victim] = k;
	rc->stamp[victim] = ++rc->clock;
	return rc->mem + ((size_t)victim * rc->per_chunk + recno % rc->per_chunk) * rs;
}

void ntfs_check_cache_drop(struct ntfs_check *c)
{
	for (int i = 0; i < NTFS_CACHE_SLOTS; i++)
		c->cache.chunk[i] = UINT64_MAX;
}

int ntfs_check_read_record(struct ntfs_check *c, uint64_t recno, uint8_t *buf)
{
	uint64_t off = ntfs_vol_record_offset(&c->vol, recno);
	uint32_t rs = c->vol.boot.g.mft_record_size;
	const uint8_t *hit;
	int ret;

	if (off == UINT64_MAX)
		return -ERANGE;
	hit = cached(c, recno);
	if (hit)
		memcpy(buf, hit, rs);
	else if ((ret = fsf_dev_pread(&c->dev, buf, rs, off)))
		return ret;
	/* the LSN field lies before the first protected word */
	if (!memcmp(buf, "FILE", 4)) {
		struct ntfs_record_header h;

		memcpy(&h, buf, sizeof(h));
		if (le64toh(h.lsn) > c->max_lsn)
			c->max_lsn = le64toh(h.lsn);
	}
	return 0;
}

int ntfs_check_write_record(struct ntfs_check *c, uint64_t recno, uint8_t *buf)
{
	const struct ntfs_boot_info *b = &c->vol.boot;
	uint32_t size = b->g.mft_record_size;
	uint64_t off = ntfs_vol_record_offset(&c->vol, recno);
	struct ntfs_record_header h;
	uint16_t usn;
	int ret;

	if (off == UINT64_MAX)
		return -ERANGE;
	memcpy(&h, buf, sizeof(h));
	memcpy(&usn, buf + le16toh(h.usa_ofs), 2);
	usn = (uint16_t)(le16toh(usn) + 1);
	ntfs_fixup_apply(buf, size, usn);
	ret = fsf_dev_pwrite(&c->dev, buf, size, off);
	if (c->cache.mem) {
		uint32_t per = c->cache.per_chunk;

		for (int i = 0; i < NTFS_CACHE_SLOTS; i++)
			if (c->cache.chunk[i] == recno / per)
				memcpy(c->cache.mem + ((size_t)i * per + recno % per) * size,
				       buf, size);
	}
	/* mirror copies go only where pass 0 verified $MFTMirr to be */
	if (!ret && c->geo.mirr_ok && recno < c->mirr_records)
		ret = fsf_dev_pwrite(&c->dev, buf, size,
				     (uint64_t)b->mftmirr_lcn * b->g.cluster_size +
				     recno * size);
	ntfs_fixup_remove(buf, size);
	return ret;
}

/* DATA NULL: only the runs and the size of a non-resident attribute */
static int get_attr(struct ntfs_check *c, const uint8_t *rec, uint32_t type,
		    uint8_t **data, uint64_t *len, struct ntfs_run **runs,
		    long *nruns)
{
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];
	uint32_t cs = c->vol.boot.g.cluster_size;
	int r;

	if (data)
		*data = NULL;
	*len = 0;
	*runs = NULL;
	*nruns = 0;
	ntfs_attr_cursor_init(&cur, rec);
	while ((r = ntfs_attr_next(&cur, &a, why)) == 1) {
		struct ntfs_attr_nonresident n;
		uint64_t pos = 0;
		uint32_t vlen;

		if (le32toh(a->type) != type || a->name_length)
			continue;
		if (!a->non_resident) {
			const void *v = ntfs_attr_value(a, &vlen);

			if (!data)
				return -EINVAL;
			*data = malloc(vlen ? vlen : 1);
			if (!*data)
				return -ENOMEM;
			memcpy(*data, v, vlen);
			*len = vlen;
			return 0;
		}
		memcpy(&n, a, sizeof(n));
		*nruns = ntfs_attr_runs(a, c->vol.boot.g.nr_clusters, runs, why);
		if (*nruns < 0)
			return -EUCLEAN;
		*len = (uint64_t)le64toh((uint64_t)n.data_size);
		if (!data)
			return 0;
		if (*len > (1ull << 32))
			return -EFBIG;	/* bitmaps of up to 32 Ti clusters */
		*data = calloc(1, *len ? *len : 1);
		if (!*data)
			return -ENOMEM;
		for (long i = 0; i < *nruns && pos < *len; i++) {
			uint64_t bytes = (*runs)[i].len * cs;

			if (bytes > *len - pos)
				bytes = *len - pos;
			if ((*runs)[i].lcn >= 0) {
				int ret = fsf_dev_pread(&c->dev, *data + pos, bytes,
							(uint64_t)(*runs)[i].lcn * cs);

				if (ret)
					return ret;
			}
			pos += bytes;
		}
		return 0;
	}
	return r < 0 ? -EUCLEAN : -ENOENT;
}

int ntfs_check_read_attr(struct ntfs_check *c, const uint8_t *rec,
			 uint32_t type, uint8_t **data, uint64_t *len,
			 struct ntfs_run **runs, long *nruns)
{
	return get_attr(c, rec, type, data, len, runs, nruns);
}

int ntfs_check_attr_runs(struct ntfs_check *c, const uint8_t *rec,
			 uint32_t type, uint64_t *len, struct ntfs_run **runs,
			 long *nruns)
{
	return get_attr(c, rec, type, NULL, len, runs, nruns);
}

int ntfs_check_write_runs(struct ntfs_check *c, const struct ntfs_run *runs,
			  long nruns, const uint8_t *data, uint64_t len)
{
	uint32_t cs = c->vol.boot.g.cluster_size;
	uint64_t pos = 0;

	ntfs_check_cache_drop(c);	/* whatever the clusters were */
	for (long i = 0; i < nruns && pos < len; i++) {
		uint64_t bytes = runs[i].len * cs;
		int ret;

		if (bytes > len - pos)
			bytes = len - pos;
		if (runs[i].lcn >= 0) {
			ret = fsf_dev_pwrite(&c->dev, data + pos, bytes,
					     (uint64_t)runs[i].lcn * cs);
			if (ret)
				return ret;
		}
		pos += bytes;
	}
	return 0;
}
