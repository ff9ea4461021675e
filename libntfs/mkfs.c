// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ntfs_mkfs(): open the device through the common I/O layer, plan the
 * volume, build the system files in memory (a few hundred KiB whatever the
 * volume size) and write them; the cluster bitmap is streamed in chunks and
 * the all-zero parts become holes (or zeroing requests), so a quick format
 * of a multi-TiB volume writes little more than $LogFile.  The boot sector
 * is written last, so an interrupted run leaves no NTFS signature.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <iconv.h>
#include <linux/fs.h>
#include <linux/hdreg.h>
#include <stdio.h>
#include <sys/sysmacros.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uuid.h>

#include "internal.h"

#define CHUNK (128u << 10)	/* I/O buffer: small, RSS matters */

struct writer {
	struct fsf_dev *dev;
	const struct ntfs_plan *p;
	uint8_t *buf;			/* CHUNK bytes */
};

static uint64_t lcn_off(const struct ntfs_plan *p, int64_t lcn)
{
	return (uint64_t)lcn * p->g.cluster_size;
}

/* write DATA at the start of area A and zeros over the rest of it */
static int write_area(struct writer *w, enum ntfs_area a, const void *data,
		      uint64_t len)
{
	uint64_t off = lcn_off(w->p, w->p->ext[a].lcn);
	uint64_t total = w->p->ext[a].clusters * w->p->g.cluster_size;
	uint64_t tail = ntfs_align(len, 4096);
	int ret = 0;

	if (tail > total)
		tail = total;
	/* pad the last partial block in memory, hole-punch the rest */
	for (uint64_t pos = 0; pos < tail && !ret; pos += CHUNK) {
		uint64_t n = tail - pos < CHUNK ? tail - pos : CHUNK;

		memset(w->buf, 0, (size_t)n);
		if (pos < len)
			memcpy(w->buf, (const uint8_t *)data + pos,
			       (size_t)(len - pos < n ? len - pos : n));
		ret = fsf_dev_pwrite(w->dev, w->buf, (size_t)n, off + pos);
	}
	if (!ret && tail < total)
		ret = fsf_dev_zero(w->dev, off + tail, total - tail);
	return ret;
}

static int write_fill(struct writer *w, enum ntfs_area a, int byte)
{
	uint64_t off = lcn_off(w->p, w->p->ext[a].lcn);
	uint64_t total = w->p->ext[a].clusters * w->p->g.cluster_size;
	int ret = 0;

	memset(w->buf, byte, CHUNK);
	for (uint64_t pos = 0; pos < total && !ret; pos += CHUNK)
		ret = fsf_dev_pwrite(w->dev, w->buf, (size_t)(total - pos < CHUNK ?
				     total - pos : CHUNK), off + pos);
	return ret;
}

static void set_bits(uint8_t *buf, uint64_t first_bit, uint64_t nbits,
		     uint64_t from, uint64_t count)
{
	uint64_t lo = from > first_bit ? from : first_bit;
	uint64_t hi = from + count < first_bit + nbits ? from + count :
		      first_bit + nbits;

	for (uint64_t b = lo; b < hi; b++)
		buf[(b - first_bit) >> 3] |= (uint8_t)(1u << ((b - first_bit) & 7));
}

/* $Bitmap: one bit per cluster; bits past the last cluster are set */
static int write_bitmap(struct writer *w)
{
	const struct ntfs_plan *p = w->p;
	uint64_t size = p->size[AREA_BITMAP];
	uint64_t total = p->ext[AREA_BITMAP].clusters * p->g.cluster_size;
	uint64_t off = lcn_off(p, p->ext[AREA_BITMAP].lcn);
	uint64_t zero_from = 0, zero_len = 0;	/* pending all-zero span */
	int ret = 0;

	for (uint64_t pos = 0; pos < total && !ret; pos += CHUNK) {
		uint64_t n = total - pos < CHUNK ? total - pos : CHUNK;
		uint64_t bit0 = pos * 8, nbits = (n < size - (pos < size ? pos : size) ?
				n : (pos < size ? size - pos : 0)) * 8;
		bool any = false;

		memset(w->buf, 0, (size_t)n);
		for (int a = 0; a < AREA_COUNT; a++) {
			const struct ntfs_extent *e = &p->ext[a];

			if ((uint64_t)e->lcn < bit0 + nbits &&
			    (uint64_t)e->lcn + e->clusters > bit0) {
				set_bits(w->buf, bit0, nbits, (uint64_t)e->lcn, e->clusters);
				any = true;
			}
		}
		if (p->g.nr_clusters < bit0 + nbits) {
			set_bits(w->buf, bit0, nbits, p->g.nr_clusters, size * 8 - p->g.nr_clusters);
			any = true;
		}
		if (!any) {
			if (!zero_len)
				zero_from = off + pos;
			zero_len += n;
			continue;
		}
		if (zero_len)
			ret = fsf_dev_zero(w->dev, zero_from, zero_len);
		zero_len = 0;
		if (!ret)
			ret = fsf_dev_pwrite(w->dev, w->buf, (size_t)n, off + pos);
	}
	if (!ret && zero_len)
		ret = fsf_dev_zero(w->dev, zero_from, zero_len);
	return ret;
}

static int label_utf16(const char *label, uint16_t *out, size_t *n,
		       const struct fsf_log *log)
{
	iconv_t cd;
	char *in = (char *)label, *o = (char *)out;
	size_t il, ol = 128 * 2;

	*n = 0;
	if (!label || !*label)
		return 0;
	il = strlen(label);
	cd = iconv_open("UTF-16LE", "UTF-8");
	if (cd == (iconv_t)-1)
		return -errno;
	if (iconv(cd, &in, &il, &o, &ol) == (size_t)-1) {
		int e = errno;

		iconv_close(cd);
		fsf_err(log, e == E2BIG ? "label '%s' is too long: at most 128 UTF-16 units" :
			"label '%s' is not valid UTF-8", label);
		return -EINVAL;
	}
	iconv_close(cd);
	*n = (size_t)(o - (char *)out) / 2;
	return 0;
}

static int device_size(struct fsf_dev *dev, const struct ntfs_mkfs_opts *o,
		       uint64_t *bytes, uint32_t *sector)
{
	struct stat st;

	*sector = 0;
	if (dev->is_blkdev) {
		int ss = 0;

		*bytes = dev->size;
		if (ioctl(dev->fd, BLKSSZGET, &ss) == 0 && ss > 0)
			*sector = (uint32_t)ss;
		return 0;
	}
	*bytes = stat(o->device, &st) == 0 ? (uint64_t)st.st_size : 0;
	if (o->num_sectors) {
		*bytes = 0;	/* a file grows to the requested size */
		return 0;
	}
	if (*bytes == 0) {
		fsf_err(o->log, "%s is empty or missing: give the NUMBER-OF-SECTORS to create an image",
			o->device);
		return -EINVAL;
	}
	return 0;
}

/* Boot-sector geometry of a partition: its start (hidden sectors) from
 * sysfs and heads/sectors per track from the driver, unless given. */
static void partition_geometry(const struct fsf_dev *dev,
			       const struct ntfs_mkfs_opts *o,
			       uint32_t sector_size, uint64_t *hidden,
			       uint16_t *heads, uint16_t *spt)
{
	struct hd_geometry geo;
	char path[96];
	unsigned long long start;
	FILE *f;

	*hidden = o->part_start;
	*heads = (uint16_t)o->heads;
	*spt = (uint16_t)o->sectors_per_track;
	if (!dev->is_blkdev)
		return;
	if (!o->part_start_set) {
		snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/start",
			 major(dev->st_dev), minor(dev->st_dev));
		f = fopen(path, "re");
		if (f) {
			/* sysfs counts 512-byte units */
			if (fscanf(f, "%llu", &start) == 1)
				*hidden = start * 512 / sector_size;
			fclose(f);
		}
	}
	if ((!o->heads || !o->sectors_per_track) &&
	    ioctl(dev->fd, HDIO_GETGEO, &geo) == 0) {
		if (!o->heads)
			*heads = geo.heads;
		if (!o->sectors_per_track)
			*spt = geo.sectors;
	}
}

static int write_volume(struct writer *w, struct ntfs_build *b,
			const struct ntfs_secure *sec,
			const struct ntfs_boot_sector *bs, bool full)
{
	const struct ntfs_plan *p = w->p;
	uint64_t vol_bytes = p->g.volume_sectors * p->g.sector_size;
	uint8_t attrdef[NTFS_ATTRDEF_SIZE], mftbmp[4096];
	uint16_t *up = (uint16_t *)b->upcase;
	uint8_t *sds, *upcase_le = (uint8_t *)up;	/* converted in place */
	int ret;

	if (!w->dev->is_blkdev && (ret = fsf_dev_set_size(w->dev, vol_bytes)))
		return ret;
	if (full && (ret = fsf_dev_zero(w->dev, 0, vol_bytes)))
		return ret;
	memset(mftbmp, 0, sizeof(mftbmp));
	for (uint32_t i = 0; i < p->mft_records; i++)
		if (i < NTFS_FILE_FIRST_USER ||
		    (i >= NTFS_FILE_QUOTA && i < NTFS_FILE_COUNT_MIN))
			mftbmp[i / 8] |= (uint8_t)(1u << (i % 8));
	ntfs_attrdef_build(attrdef);
	sds = calloc(1, NTFS_SDS_BLOCK + sec->sds_len);
	if (!sds)
		return -ENOMEM;
	memcpy(sds, sec->sds, sec->sds_len);
	memcpy(sds + NTFS_SDS_BLOCK, sec->sds, sec->sds_len);
	for (uint32_t i = 0; i < NTFS_UPCASE_LEN; i++) {
		uint16_t v = htole16(up[i]);

		memcpy(upcase_le + 2 * i, &v, 2);
	}
	/* zero the boot sector first: no NTFS signature until the end */
	ret = write_area(w, AREA_BOOT, NULL, 0);
	if (!ret)
		ret = write_area(w, AREA_MFT, b->mft, p->size[AREA_MFT]);
	if (!ret)
		ret = write_area(w, AREA_MFTBMP, mftbmp, p->size[AREA_MFTBMP]);
	if (!ret)
		ret = write_area(w, AREA_MIRR, b->mft, p->size[AREA_MIRR]);
	if (!ret)
		ret = write_fill(w, AREA_LOGFILE, 0xff);
	if (!ret)
		ret = write_area(w, AREA_ROOT_IA, b->root_indx, p->g.index_block_size);
	if (!ret)
		ret = write_area(w, AREA_ATTRDEF, attrdef, sizeof(attrdef));
	if (!ret)
		ret = write_bitmap(w);
	if (!ret)
		ret = write_area(w, AREA_SDS, sds, NTFS_SDS_BLOCK + sec->sds_len);
	if (!ret)
		ret = write_area(w, AREA_UPCASE, upcase_le, NTFS_UPCASE_LEN * 2);
	/* the backup boot sector: the volume's last sector */
	if (!ret) {
		memset(w->buf, 0, p->g.sector_size);
		memcpy(w->buf, bs, sizeof(*bs));
		ret = fsf_dev_pwrite(w->dev, w->buf, p->g.sector_size,
				     vol_bytes - p->g.sector_size);
	}
	if (!ret)
		ret = fsf_dev_pwrite(w->dev, w->buf, p->g.sector_size, 0);
	free(sds);
	return ret;
}

static uint64_t random_u64(void)
{
	uint64_t v = 0;

	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ULL;
	return v;
}

int ntfs_mkfs(const struct ntfs_mkfs_opts *o)
{
	const struct fsf_log *log = o->log;
	struct ntfs_plan plan;
	struct ntfs_secure sec;
	struct ntfs_build *b = NULL;
	struct ntfs_boot_sector bs;
	struct fsf_dev dev;
	struct writer w = { &dev, &plan, NULL };
	uint16_t label[128];
	uint16_t *upcase = NULL;
	uint64_t dev_bytes, serial, hidden;
	uint16_t heads, spt;
	struct stat st;
	bool created;
	uint32_t dev_sector;
	unsigned flags = 0;
	int ret;

	if (o->no_action)
		flags |= FSF_DEV_DRY_RUN;
	/* -F: signatures; a busy device or loop-attached image needs -F -F */
	if (o->force == 1)
		flags |= FSF_DEV_FORCE | FSF_DEV_LOOP_STRICT;
	if (o->force >= 2)
		flags |= FSF_DEV_FORCE | FSF_DEV_NO_EXCL;
	memset(&plan, 0, sizeof(plan));
	size_t label_len;

	ret = label_utf16(o->label, label, &label_len, log);
	if (ret)
		return ret;
	/* a missing path becomes an image only when its size is given:
	 * a mistyped device name must not create a file under /dev */
	created = stat(o->device, &st) != 0;
	if (created && (errno != ENOENT || !o->num_sectors)) {
		fsf_err(log, "cannot open %s: %s%s", o->device, strerror(errno),
			errno == ENOENT ? " (give NUMBER-OF-SECTORS to create an image file)" : "");
		return -ENOENT;
	}
	ret = fsf_dev_open_output_confirm(&dev, o->device, flags, log,
					  o->confirm, o->confirm_arg);
	if (ret)
		return ret;
	ret = device_size(&dev, o, &dev_bytes, &dev_sector);
	if (!ret)
		ret = ntfs_plan_volume(&plan, o, dev_bytes, dev_sector);
	if (ret)
		goto out;
	partition_geometry(&dev, o, plan.g.sector_size, &hidden, &heads, &spt);
	if (hidden > 0xffffffffULL) {
		fsf_err(log, "partition start %llu does not fit in 32 bits",
			(unsigned long long)hidden);
		ret = -EINVAL;
		goto out;
	}
	ntfs_secure_build(&sec);
	plan.size[AREA_SDS] = NTFS_SDS_BLOCK + sec.sds_len;
	fsf_info(log, "%llu sectors of %u bytes, %llu clusters of %u bytes, MFT at cluster %lld, mirror at %lld",
		 (unsigned long long)plan.g.volume_sectors, plan.g.sector_size,
		 (unsigned long long)plan.g.nr_clusters, plan.g.cluster_size,
		 (long long)plan.ext[AREA_MFT].lcn, (long long)plan.ext[AREA_MIRR].lcn);
	b = calloc(1, sizeof(*b));
	upcase = malloc(NTFS_UPCASE_LEN * sizeof(*upcase));
	w.buf = malloc(CHUNK);
	if (b) {
		b->mft = calloc(plan.mft_records, plan.g.mft_record_size);
		b->root_indx = calloc(1, plan.g.index_block_size);
	}
	if (!b || !upcase || !w.buf || !b->mft || !b->root_indx) {
		fsf_err(log, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	ntfs_upcase_build(upcase);
	b->plan = &plan;
	b->opts = o;
	b->upcase = upcase;
	b->sec = &sec;
	b->now = ntfs_time(o->zero_time ? 0 : (int64_t)time(NULL));
	b->label = label;		/* already little-endian */
	b->label_len = label_len;
	if (o->with_uuid)
		uuid_generate(b->volume_guid);
	ret = ntfs_build_records(b);
	if (ret)
		goto out;
	serial = random_u64();
	ntfs_boot_build(&bs, &plan.g, plan.ext[AREA_MFT].lcn,
			plan.ext[AREA_MIRR].lcn, serial, (uint32_t)hidden,
			heads, spt);
	fsf_info(log, "boot sector: %llu hidden sectors, %u heads, %u sectors per track",
		 (unsigned long long)hidden, heads, spt);
	if (o->no_action) {
		fsf_out(log, "%s: would create an NTFS volume of %llu bytes (-n: nothing written)",
			o->device, (unsigned long long)(plan.g.nr_clusters * plan.g.cluster_size));
		goto out;
	}
	ret = write_volume(&w, b, &sec, &bs, o->full);
	if (!ret)
		ret = fsf_dev_commit(&dev);
	if (!ret)
		fsf_out(log, "%s: NTFS volume of %llu bytes (%llu clusters of %u bytes), serial %016llX",
			o->device,
			(unsigned long long)(plan.g.nr_clusters * plan.g.cluster_size),
			(unsigned long long)plan.g.nr_clusters, plan.g.cluster_size,
			(unsigned long long)serial);
out:
	if (ret && created && !o->no_action)
		unlink(o->device);	/* ours, and unusable */
	if (b) {
		free(b->mft);
		free(b->root_indx);
	}
	free(b);
	free(upcase);
	free(w.buf);
	fsf_dev_close(&dev);
	return ret;
}
