// SPDX-License-Identifier: GPL-2.0-or-later
/* libntfs: attribute values and non-resident streams of a volume, read
 * and written in the clusters their runs name, through the device layer. */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/volume_io.h"

/* DATA NULL: only the runs and the size of a non-resident attribute */
static int get_attr(struct ntfs_vol *v, const uint8_t *rec, uint32_t type,
		    uint8_t **data, uint64_t *len, struct ntfs_run **runs,
		    long *nruns)
{
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];
	uint32_t cs = v->boot.g.cluster_size;
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
			const void *val = ntfs_attr_value(a, &vlen);

			if (!data)
				return -EINVAL;
			*data = malloc(vlen ? vlen : 1);
			if (!*data)
				return -ENOMEM;
			memcpy(*data, val, vlen);
			*len = vlen;
			return 0;
		}
		memcpy(&n, a, sizeof(n));
		*nruns = ntfs_attr_runs(a, v->boot.g.nr_clusters, runs, why);
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
				int ret = fsf_dev_pread(v->dev, *data + pos, bytes,
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

int ntfs_vol_read_attr(struct ntfs_vol *v, const uint8_t *rec, uint32_t type,
		       uint8_t **data, uint64_t *len, struct ntfs_run **runs,
		       long *nruns)
{
	return get_attr(v, rec, type, data, len, runs, nruns);
}

int ntfs_vol_attr_runs(struct ntfs_vol *v, const uint8_t *rec, uint32_t type,
		       uint64_t *len, struct ntfs_run **runs, long *nruns)
{
	return get_attr(v, rec, type, NULL, len, runs, nruns);
}

int ntfs_vol_write_runs(struct ntfs_vol *v, const struct ntfs_run *runs,
			long nruns, const uint8_t *data, uint64_t len)
{
	uint32_t cs = v->boot.g.cluster_size;
	uint64_t pos = 0;

	ntfs_vol_cache_drop(v);	/* whatever the clusters were */
	for (long i = 0; i < nruns && pos < len; i++) {
		uint64_t bytes = runs[i].len * cs;
		int ret;

		if (bytes > len - pos)
			bytes = len - pos;
		if (runs[i].lcn >= 0) {
			ret = fsf_dev_pwrite(v->dev, data + pos, bytes,
					     (uint64_t)runs[i].lcn * cs);
			if (ret)
				return ret;
		}
		pos += bytes;
	}
	return 0;
}

uint64_t ntfs_runs_offset(const struct ntfs_run *runs, long n, uint32_t cs,
			  uint64_t byte, uint64_t len)
{
	uint64_t pos = 0;

	for (long i = 0; i < n; i++) {
		uint64_t run = runs[i].len * cs;

		if (byte < pos + run)
			return runs[i].lcn < 0 || byte + len > pos + run ?
			       UINT64_MAX : (uint64_t)runs[i].lcn * cs + (byte - pos);
		pos += run;
	}
	return UINT64_MAX;
}

/* LEN bytes at BYTE of the stream RUNS (N of them, clusters of CS
 * bytes), read or written; with no volume V, only whether they are all
 * on clusters (no hole, nothing past the runs) */
static int runs_io(struct ntfs_vol *v, uint32_t cs, const struct ntfs_run *runs,
		   long n, uint64_t byte, uint64_t len, void *buf, bool write)
{
	uint8_t *out = buf;
	uint64_t pos = 0;

	for (long i = 0; i < n && len; i++) {
		uint64_t run = runs[i].len * cs, part;

		if (byte >= pos + run) {
			pos += run;
			continue;
		}
		if (runs[i].lcn < 0)
			return -1;
		part = pos + run - byte < len ? pos + run - byte : len;
		if (v && (write ? fsf_dev_pwrite(v->dev, out, part,
						 (uint64_t)runs[i].lcn * cs + (byte - pos)) :
			  fsf_dev_pread(v->dev, out, part,
					(uint64_t)runs[i].lcn * cs + (byte - pos))))
			return -1;
		if (v)
			out += part;
		byte += part;
		len -= part;
		pos += run;
	}
	return len ? -1 : 0;
}

bool ntfs_runs_mapped(const struct ntfs_run *runs, long n, uint32_t cs,
		      uint64_t byte, uint64_t len)
{
	return !runs_io(NULL, cs, runs, n, byte, len, NULL, false);
}

int ntfs_vol_runs_pread(struct ntfs_vol *v, const struct ntfs_run *runs,
			long n, uint64_t byte, uint64_t len, void *buf)
{
	return runs_io(v, v->boot.g.cluster_size, runs, n, byte, len, buf, false);
}

int ntfs_vol_runs_pwrite(struct ntfs_vol *v, const struct ntfs_run *runs,
			 long n, uint64_t byte, uint64_t len, const void *buf)
{
	ntfs_vol_cache_drop(v);	/* whatever the clusters were */
	return runs_io(v, v->boot.g.cluster_size, runs, n, byte, len, (void *)buf, true);
}
