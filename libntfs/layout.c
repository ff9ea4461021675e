// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The volume planner: checks the geometry and decides where every system
 * file lives.  $Boot starts the volume, then the MFT bitmap and the MFT,
 * followed by the MFT zone (left free so the MFT can grow contiguously);
 * the other system files start in the middle of the volume, as Windows
 * places them, or right after the MFT when the volume is too small.
 */
#include "config.h"

#include <errno.h>

#include "internal.h"

static bool pow2(uint64_t v) { return v && !(v & (v - 1)); }

static uint64_t clusters_for(uint64_t bytes, uint32_t cs)
{
	return ntfs_align(bytes, cs) / cs;
}

static int geometry(struct ntfs_plan *p, const struct ntfs_mkfs_opts *o,
		    uint64_t dev_bytes, uint32_t dev_sector)
{
	const struct fsf_log *log = o->log;
	struct ntfs_geometry *g = &p->g;
	uint64_t vol_bytes;

	g->sector_size = o->sector_size ? o->sector_size :
			 (dev_sector ? dev_sector : 512);
	if (!pow2(g->sector_size) || g->sector_size < 256 || g->sector_size > 4096) {
		fsf_err(log, "invalid sector size %u: must be a power of two from 256 to 4096",
			g->sector_size);
		return -EINVAL;
	}
	if (o->sector_size && dev_sector && o->sector_size < dev_sector)
		fsf_warn(log, "sector size %u is smaller than the device's %u bytes",
			 o->sector_size, dev_sector);
	g->volume_sectors = o->num_sectors ? o->num_sectors :
			    dev_bytes / g->sector_size;
	if (o->num_sectors && dev_bytes &&
	    o->num_sectors > dev_bytes / g->sector_size) {
		fsf_err(log, "number of sectors %llu is larger than the device (%llu sectors of %u bytes)",
			(unsigned long long)o->num_sectors,
			(unsigned long long)(dev_bytes / g->sector_size),
			g->sector_size);
		return -EINVAL;
	}
	if (g->volume_sectors < 2) {
		fsf_err(log, "volume of %llu sectors is too small",
			(unsigned long long)g->volume_sectors);
		return -EINVAL;
	}
	vol_bytes = (g->volume_sectors - 1) * g->sector_size;
	g->mft_record_size = g->sector_size > 1024 ? g->sector_size : 1024;
	g->index_block_size = g->sector_size > 4096 ? g->sector_size : 4096;
	if (o->cluster_size) {
		g->cluster_size = o->cluster_size;
		if (!pow2(g->cluster_size) || g->cluster_size > (2u << 20)) {
			fsf_err(log, "invalid cluster size %u: must be a power of two up to 2097152",
				g->cluster_size);
			return -EINVAL;
		}
		if (g->cluster_size < g->sector_size) {
			fsf_err(log, "cluster size %u is smaller than the sector size %u",
				g->cluster_size, g->sector_size);
			return -EINVAL;
		}
	} else {
		g->cluster_size = g->sector_size > 4096 ? g->sector_size : 4096;
		/* a huge volume needs bigger clusters: at most 2^32 - 1 */
		while (vol_bytes / g->cluster_size > 0xffffffffULL &&
		       g->cluster_size < (2u << 20))
			g->cluster_size <<= 1;
	}
	g->nr_clusters = vol_bytes / g->cluster_size;
	if (g->nr_clusters > 0xffffffffULL) {
		fsf_err(log, "cluster size %u gives %llu clusters, more than NTFS allows (2^32 - 1); use a larger -c",
			g->cluster_size, (unsigned long long)g->nr_clusters);
		return -EINVAL;
	}
	return 0;
}

int ntfs_plan_volume(struct ntfs_plan *p, const struct ntfs_mkfs_opts *o,
		     uint64_t dev_bytes, uint32_t dev_sector)
{
	const struct ntfs_geometry *g = &p->g;
	uint32_t cs;
	uint64_t cur, need = 0, mid, zone;
	int ret;

	ret = geometry(p, o, dev_bytes, dev_sector);
	if (ret)
		return ret;
	cs = g->cluster_size;
	/* the mirror covers 4 records or one cluster, whichever is more */
	p->mirr_records = cs > 4 * g->mft_record_size ?
			  cs / g->mft_record_size : 4;
	p->mft_records = p->mirr_records > NTFS_FILE_COUNT_MIN ?
			 p->mirr_records : NTFS_FILE_COUNT_MIN;
	p->size[AREA_BOOT] = 8192;
	p->size[AREA_MFT] = (uint64_t)p->mft_records * g->mft_record_size;
	p->size[AREA_MFTBMP] = ntfs_align((p->mft_records + 7) / 8, 8);
	p->size[AREA_MIRR] = (uint64_t)p->mirr_records * g->mft_record_size;
	p->size[AREA_LOGFILE] = ntfs_logfile_size(g->nr_clusters * cs, cs);
	p->size[AREA_ROOT_IA] = g->index_block_size;
	p->size[AREA_ATTRDEF] = NTFS_ATTRDEF_SIZE;
	p->size[AREA_BITMAP] = ntfs_align((g->nr_clusters + 7) / 8, 8);
	p->size[AREA_SDS] = 0;	/* set by the caller from $Secure */
	p->size[AREA_UPCASE] = NTFS_UPCASE_LEN * 2;
	for (int a = 0; a < AREA_COUNT; a++)
		p->ext[a].clusters = clusters_for(a == AREA_SDS ?
			NTFS_SDS_BLOCK + 4096 : p->size[a], cs);
	cur = 0;
	for (int a = AREA_BOOT; a <= AREA_MFT; a++) {
		p->ext[a].lcn = (int64_t)cur;
		cur += p->ext[a].clusters;
	}
	for (int a = AREA_MIRR; a < AREA_COUNT; a++)
		need += p->ext[a].clusters;
	zone = g->nr_clusters / 8 * (uint64_t)(o->zone_multiplier ? o->zone_multiplier : 1);
	p->mft_zone_end = (uint64_t)p->ext[AREA_MFT].lcn + zone;
	mid = g->nr_clusters / 2;
	if (mid < cur)
		mid = cur;
	if (mid + need > g->nr_clusters)
		mid = cur;
	if (mid + need > g->nr_clusters) {
		uint64_t min = (cur + need) * cs + g->sector_size;

		fsf_err(o->log, "volume of %llu bytes is too small: at least %llu bytes are needed with %u-byte clusters",
			(unsigned long long)(g->volume_sectors * g->sector_size),
			(unsigned long long)min, cs);
		return -ENOSPC;
	}
	if (p->mft_zone_end > mid && mid > cur)
		p->mft_zone_end = mid;
	for (int a = AREA_MIRR; a < AREA_COUNT; a++) {
		p->ext[a].lcn = (int64_t)mid;
		mid += p->ext[a].clusters;
	}
	return 0;
}
