// SPDX-License-Identifier: GPL-2.0-or-later
/* Bounded parsers for boot sectors, multi-sector records, attributes and
 * runlists, as a checker meets them on a possibly damaged volume. */
#include "config.h"

#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/read.h"

#define WHY(...) snprintf(why, NTFS_WHY, __VA_ARGS__)

static bool pow2(uint64_t v) { return v && !(v & (v - 1)); }

/* "clusters per record" byte: > 0 clusters, < 0 log2 of bytes */
static uint32_t record_bytes(int8_t v, uint32_t cluster)
{
	if (v > 0)
		return (uint32_t)v * cluster <= (1u << 21) ? (uint32_t)v * cluster : 0;
	if (v < -31 || v == 0)
		return 0;
	return 1u << -v;
}

int ntfs_boot_check(const struct ntfs_boot_sector *bs, uint64_t dev_bytes,
		    struct ntfs_boot_info *info, char *why)
{
	uint32_t bps = le16toh(bs->bytes_per_sector), spc = bs->sectors_per_cluster;
	uint64_t sectors = (uint64_t)le64toh((uint64_t)bs->number_of_sectors);
	uint32_t cluster;

	memset(info, 0, sizeof(*info));
	if (memcmp(bs->oem_id, "NTFS    ", 8) != 0)
		return WHY("no NTFS signature"), -1;
	if (le16toh(bs->end_marker) != 0xAA55)
		return WHY("end marker is 0x%04x, not 0xaa55", le16toh(bs->end_marker)), -1;
	if (!pow2(bps) || bps < 256 || bps > 4096)
		return WHY("invalid bytes per sector %u", bps), -1;
	if (spc > 0x80) {
		if (256 - spc > 31)
			return WHY("invalid sectors per cluster 0x%02x", spc), -1;
		spc = 1u << (256 - spc);
	}
	if (!pow2(spc))
		return WHY("invalid sectors per cluster %u", spc), -1;
	if ((uint64_t)bps * spc > (2u << 20))
		return WHY("cluster size %llu is over 2 MiB",
			   (unsigned long long)bps * spc), -1;
	cluster = bps * spc;
	if (sectors == 0 || sectors > (UINT64_MAX / bps) - 1)
		return WHY("invalid number of sectors %llu", (unsigned long long)sectors), -1;
	if (dev_bytes && (sectors + 1) * bps > dev_bytes &&
	    sectors * bps > dev_bytes)
		return WHY("volume (%llu sectors) is larger than the device (%llu bytes)",
			   (unsigned long long)sectors, (unsigned long long)dev_bytes), -1;
	info->g.sector_size = bps;
	info->g.cluster_size = cluster;
	info->g.volume_sectors = sectors + 1;
	info->g.nr_clusters = sectors / spc;
	info->g.mft_record_size = record_bytes(bs->clusters_per_mft_record, cluster);
	info->g.index_block_size = record_bytes(bs->clusters_per_index_record, cluster);
	if (!pow2(info->g.mft_record_size) || info->g.mft_record_size < 256 ||
	    info->g.mft_record_size > 65536 || info->g.mft_record_size < bps)
		return WHY("invalid MFT record size (clusters per record %d)",
			   bs->clusters_per_mft_record), -1;
	if (!pow2(info->g.index_block_size) || info->g.index_block_size < 256 ||
	    info->g.index_block_size > 65536)
		return WHY("invalid index block size (clusters per index block %d)",
			   bs->clusters_per_index_record), -1;
	info->mft_lcn = (int64_t)le64toh((uint64_t)bs->mft_lcn);
	info->mftmirr_lcn = (int64_t)le64toh((uint64_t)bs->mftmirr_lcn);
	if (info->mft_lcn <= 0 || (uint64_t)info->mft_lcn >= info->g.nr_clusters)
		return WHY("$MFT cluster %lld is outside the volume",
			   (long long)info->mft_lcn), -1;
	if (info->mftmirr_lcn <= 0 ||
	    (uint64_t)info->mftmirr_lcn >= info->g.nr_clusters)
		return WHY("$MFTMirr cluster %lld is outside the volume",
			   (long long)info->mftmirr_lcn), -1;
	info->serial = le64toh(bs->volume_serial);
	info->backup_offset = sectors * bps;
	return 0;
}

enum ntfs_rec_state ntfs_record_check(uint8_t *rec, uint32_t size,
				      uint32_t magic, char *why)
{
	struct ntfs_record_header h;
	uint32_t strides = size / NTFS_USA_STRIDE;
	uint16_t usa_ofs, usa_count;
	size_t i;

	if (size < NTFS_USA_STRIDE || size % NTFS_USA_STRIDE)
		return WHY("record size %u", size), NTFS_REC_BAD_USA;
	memcpy(&h, rec, sizeof(h));
	if (le32toh(h.magic) != magic) {
		for (i = 0; i < size && !rec[i]; i++)
			;
		if (i == size)
			return WHY("never used"), NTFS_REC_UNUSED;
		if (!memcmp(rec, "BAAD", 4))
			return WHY("marked bad (BAAD)"), NTFS_REC_BAAD;
		return WHY("bad magic 0x%08x", le32toh(h.magic)), NTFS_REC_BAD_MAGIC;
	}
	usa_ofs = le16toh(h.usa_ofs);
	usa_count = le16toh(h.usa_count);
	if (usa_ofs & 1 || usa_ofs < sizeof(h) || usa_count != strides + 1 ||
	    (uint32_t)usa_ofs + 2u * usa_count > NTFS_USA_STRIDE - 2)
		return WHY("update sequence array at %u with %u entries is invalid",
			   usa_ofs, usa_count), NTFS_REC_BAD_USA;
	if (ntfs_fixup_remove(rec, size) != 0)
		return WHY("update sequence mismatch (torn write)"), NTFS_REC_TORN;
	if (magic == NTFS_MAGIC_FILE)
		return ntfs_file_header_check(rec, size, why);
	return NTFS_REC_OK;
}

bool ntfs_record_is_base(const uint8_t *rec)
{
	struct ntfs_mft_record m;

	memcpy(&m, rec, sizeof(m));
	return !m.base_mft_record;
}

uint64_t ntfs_record_file(const uint8_t *rec, uint64_t recno)
{
	struct ntfs_mft_record m;

	memcpy(&m, rec, sizeof(m));
	return m.base_mft_record ? le64toh(m.base_mft_record) & 0xffffffffffffULL : recno;
}

bool ntfs_record_listed(const uint8_t *rec, uint64_t d, uint64_t mref, char *why)
{
	struct ntfs_mft_record m;
	uint64_t x = mref & 0xffffffffffffULL;
	uint16_t seq = (uint16_t)(mref >> 48);

	memcpy(&m, rec, sizeof(m));
	if (ntfs_record_is_base(rec) ||
	    (le64toh(m.base_mft_record) & 0xffffffffffffULL) != d) {
		snprintf(why, NTFS_WHY, "MFT record %llu is not an extension record of %llu",
			 (unsigned long long)x, (unsigned long long)d);
		return false;
	}
	if (seq && seq != le16toh(m.sequence_number)) {
		snprintf(why, NTFS_WHY, "MFT record %llu has sequence number %u, not %u",
			 (unsigned long long)x, le16toh(m.sequence_number), seq);
		return false;
	}
	return true;
}

enum ntfs_rec_state ntfs_file_header_check(const uint8_t *rec, uint32_t size,
					   char *why)
{
	struct ntfs_mft_record m;
	uint32_t used, alloc, aofs;

	memcpy(&m, rec, sizeof(m));
	used = le32toh(m.bytes_in_use);
	alloc = le32toh(m.bytes_allocated);
	aofs = le16toh(m.attrs_offset);
	if (alloc != size)
		return WHY("allocated size %u is not the record size %u",
			   alloc, size), NTFS_REC_BAD_HEADER;
	if (used > size || used & 7 || used < aofs + 8)
		return WHY("bytes in use %u is invalid", used), NTFS_REC_BAD_HEADER;
	/* attributes begin after the update sequence array and the header
	 * fields (0x30 bytes, NTFS 3.1; 3.0's 0x2a round up to it) */
	if (aofs & 7 || aofs < le16toh(m.h.usa_ofs) + 2u * le16toh(m.h.usa_count) ||
	    aofs < sizeof(m))
		return WHY("attribute offset %u is invalid", aofs), NTFS_REC_BAD_HEADER;
	return NTFS_REC_OK;
}

void ntfs_attr_cursor_init(struct ntfs_attr_cursor *c, const uint8_t *rec)
{
	struct ntfs_mft_record m;

	memcpy(&m, rec, sizeof(m));
	c->rec = rec;
	c->used = le32toh(m.bytes_in_use);
	c->off = le16toh(m.attrs_offset);
	c->last_type = 0;
	c->count = 0;
}

int ntfs_attr_frames_end(const uint8_t *rec, uint32_t used, uint32_t *end,
			 char *why)
{
	struct ntfs_mft_record m;
	uint32_t off, len;
	int r;

	memcpy(&m, rec, sizeof(m));
	for (off = le16toh(m.attrs_offset);
	     (r = ntfs_attr_frame(rec, used, off, &len, why)) == 1; off += len)
		;
	*end = off;
	return r < 0 ? -1 : 0;
}

int ntfs_attr_frame(const uint8_t *rec, uint32_t used, uint32_t off,
		    uint32_t *lenp, char *why)
{
	const struct ntfs_attr_header *a;
	uint32_t type, len;

	if (off + 4 > used || off + 4 < off)
		return WHY("attributes run past bytes in use without an end marker"), -1;
	a = (const void *)(rec + off);
	memcpy(&type, &a->type, 4);
	type = le32toh(type);
	if (type == NTFS_AT_END)
		return 0;
	if (off + sizeof(*a) > used)
		return WHY("attribute at %u is cut off", off), -1;
	memcpy(&len, &a->length, 4);
	len = le32toh(len);
	if (len < sizeof(struct ntfs_attr_resident) || len & 7 || len > used - off)
		return WHY("attribute 0x%x at %u has invalid length %u", type, off, len), -1;
	*lenp = len;
	return 1;
}

bool ntfs_attr_type_valid(uint32_t type)
{
	return !(type & 0xf) && ((type >= 0x10 && type <= 0x100) ||
				 (type >= 0x1000 && type != NTFS_AT_END));
}

enum ntfs_attr_fault ntfs_attr_fault(const struct ntfs_attr_header *a,
				     uint32_t off, uint32_t last_type,
				     char *why)
{
	uint32_t type = le32toh(a->type), len = le32toh(a->length), name_end, vlen;

	if (!ntfs_attr_type_valid(type))
		return WHY("attribute at %u has type 0x%x, which NTFS does not define",
			   off, type), NTFS_AF_TYPE;
	if (type < last_type)
		return WHY("attribute 0x%x at %u is out of order", type, off), NTFS_AF_ORDER;
	name_end = a->name_length ? le16toh(a->name_offset) + 2u * a->name_length : 0;
	if (a->name_length &&
	    (name_end > len || le16toh(a->name_offset) <
	     (a->non_resident ? sizeof(struct ntfs_attr_nonresident) :
				sizeof(struct ntfs_attr_resident))))
		return WHY("attribute 0x%x at %u: name outside the attribute", type, off),
		       NTFS_AF_NAME;
	/* no name, but an offset inside the header (writers put 0 or where
	 * the header ends): ntfsck rejects the attribute */
	if (!a->name_length && le16toh(a->name_offset) &&
	    le16toh(a->name_offset) < (a->non_resident ? sizeof(struct ntfs_attr_nonresident) :
				       sizeof(struct ntfs_attr_resident)))
		return WHY("attribute 0x%x at %u: name offset %u inside its header",
			   type, off, le16toh(a->name_offset)), NTFS_AF_NAME;
	/* compression method (low byte) 0 or 1, encrypted, sparse: no other
	 * bits exist */
	if (le16toh(a->flags) & ~NTFS_ATTR_KNOWN_FLAGS)
		return WHY("attribute 0x%x at %u has unknown flags 0x%x", type, off,
			   le16toh(a->flags)), NTFS_AF_FLAGS;
	if (!a->non_resident) {
		struct ntfs_attr_resident r;

		memcpy(&r, a, sizeof(r));
		if (r.resident_flags & ~NTFS_RESIDENT_INDEXED)
			return WHY("attribute 0x%x at %u has unknown resident flags 0x%x",
				   type, off, r.resident_flags), NTFS_AF_RESFLAGS;
		/* 64-bit sum: a hostile length must not wrap around */
		if ((uint64_t)le16toh(r.value_offset) + le32toh(r.value_length) > len ||
		    le16toh(r.value_offset) < sizeof(r) ||
		    (le32toh(r.value_length) && le16toh(r.value_offset) < name_end))
			return WHY("attribute 0x%x at %u: value outside the attribute",
				   type, off), NTFS_AF_VALUE;
		/* every writer puts the value on an 8-byte boundary */
		if (le32toh(r.value_length) && le16toh(r.value_offset) & 7)
			return WHY("attribute 0x%x at %u: value offset %u is not a multiple of 8",
				   type, off, le16toh(r.value_offset)), NTFS_AF_VALUE;
		/* the two values every reader parses must hold what they
		 * say (a $STANDARD_INFORMATION of NTFS 1.2 has 48 bytes) */
		vlen = le32toh(r.value_length);
		if (type == NTFS_AT_STANDARD_INFORMATION && vlen < 48)
			return WHY("$STANDARD_INFORMATION at %u: value of %u bytes is too short",
				   off, vlen), NTFS_AF_VALUE;
		if (type == NTFS_AT_FILE_NAME &&
		    (vlen < sizeof(struct ntfs_file_name) ||
		     vlen < sizeof(struct ntfs_file_name) + 2u *
			    ((const uint8_t *)a)[le16toh(r.value_offset) +
				offsetof(struct ntfs_file_name, name_length)]))
			return WHY("$FILE_NAME at %u: value of %u bytes is too short for its name",
				   off, vlen), NTFS_AF_VALUE;
		/* no file has an empty name (ntfsck: a corrupt file name) */
		if (type == NTFS_AT_FILE_NAME &&
		    !((const uint8_t *)a)[le16toh(r.value_offset) +
					  offsetof(struct ntfs_file_name, name_length)])
			return WHY("$FILE_NAME at %u: the name is empty", off), NTFS_AF_NAMELEN;
		/* an object id has at least its 16-byte id (readers refuse
		 * the file otherwise) */
		if (type == NTFS_AT_OBJECT_ID && vlen < 16)
			return WHY("$OBJECT_ID at %u: value of %u bytes is too short",
				   off, vlen), NTFS_AF_VALUE;
	} else {
		struct ntfs_attr_nonresident n;

		if (len < sizeof(n))
			return WHY("non-resident attribute 0x%x at %u is too short", type, off),
			       NTFS_AF_SHORT;
		memcpy(&n, a, sizeof(n));
		if (le16toh(n.mapping_pairs_offset) >= len ||
		    le16toh(n.mapping_pairs_offset) < sizeof(n) ||
		    le16toh(n.mapping_pairs_offset) < name_end)
			return WHY("attribute 0x%x at %u: mapping pairs offset %u invalid",
				   type, off, le16toh(n.mapping_pairs_offset)), NTFS_AF_MAPPING;
		if ((int64_t)le64toh((uint64_t)n.lowest_vcn) < 0 ||
		    (int64_t)le64toh((uint64_t)n.highest_vcn) < -1 ||
		    (int64_t)le64toh((uint64_t)n.lowest_vcn) >
			    (int64_t)le64toh((uint64_t)n.highest_vcn) + 1)
			return WHY("attribute 0x%x at %u: invalid VCN range", type, off),
			       NTFS_AF_VCN;
		if ((int64_t)le64toh((uint64_t)n.data_size) < 0 ||
		    (int64_t)le64toh((uint64_t)n.initialized_size) < 0 ||
		    (n.lowest_vcn == 0 &&
		     ((int64_t)le64toh((uint64_t)n.allocated_size) <
			      (int64_t)le64toh((uint64_t)n.data_size) ||
		      (int64_t)le64toh((uint64_t)n.data_size) <
			      (int64_t)le64toh((uint64_t)n.initialized_size))))
			return WHY("attribute 0x%x at %u: inconsistent sizes", type, off),
			       NTFS_AF_SIZES;
	}
	return NTFS_AF_NONE;
}

int ntfs_attr_next(struct ntfs_attr_cursor *c,
		   const struct ntfs_attr_header **out, char *why)
{
	const struct ntfs_attr_header *a;
	uint32_t len;
	int r = ntfs_attr_frame(c->rec, c->used, c->off, &len, why);

	if (r <= 0)
		return r;
	a = (const void *)(c->rec + c->off);
	if (ntfs_attr_fault(a, c->off, c->last_type, why) != NTFS_AF_NONE)
		return -1;
	if (++c->count > 4096)
		return WHY("too many attributes"), -1;
	c->last_type = le32toh(a->type);
	c->off += len;
	*out = a;
	return 1;
}

const void *ntfs_attr_value(const struct ntfs_attr_header *a, uint32_t *len)
{
	struct ntfs_attr_resident r;

	memcpy(&r, a, sizeof(r));
	*len = le32toh(r.value_length);
	return (const uint8_t *)a + le16toh(r.value_offset);
}

const struct ntfs_attr_header *ntfs_attr_find(const uint8_t *rec, uint32_t type)
{
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];

	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1)
		if (le32toh(a->type) == type)
			return a;
	return NULL;
}

bool ntfs_runs_past(const struct ntfs_run *runs, long n, uint64_t end)
{
	for (long i = 0; i < n; i++)
		if (runs[i].lcn >= 0 && (uint64_t)runs[i].lcn + runs[i].len > end)
			return true;
	return false;
}

long ntfs_attr_runs(const struct ntfs_attr_header *a, uint64_t nr_clusters,
		    struct ntfs_run **runs, char *why)
{
	struct ntfs_attr_nonresident n;
	uint32_t len, mpo;
	size_t max;
	int cnt;

	memcpy(&n, a, sizeof(n));
	memcpy(&len, &a->length, 4);
	len = le32toh(len);
	mpo = le16toh(n.mapping_pairs_offset);
	max = (len - mpo) / 2 + 1;	/* every run takes at least 2 bytes */
	*runs = calloc(max, sizeof(**runs));
	if (!*runs)
		return WHY("out of memory"), -1;
	cnt = ntfs_mp_decode((const uint8_t *)a + mpo, len - mpo, *runs, max);
	if (cnt < 0) {
		free(*runs);
		*runs = NULL;
		return WHY("mapping pairs do not decode"), -1;
	}
	for (int i = 0; i < cnt; i++) {
		const struct ntfs_run *r = &(*runs)[i];

		if (r->lcn < 0)
			continue;	/* sparse hole */
		if ((uint64_t)r->lcn >= nr_clusters || r->len > nr_clusters ||
		    (uint64_t)r->lcn + r->len > nr_clusters) {
			WHY("run at cluster %lld of %llu clusters is outside the volume",
			    (long long)r->lcn, (unsigned long long)r->len);
			free(*runs);
			*runs = NULL;
			return -1;
		}
	}
	return cnt;
}

static int cmp_extent(const void *x, const void *y)
{
	const struct ntfs_attr_extent *a = x, *b = y;

	return a->lowest_vcn < b->lowest_vcn ? -1 : a->lowest_vcn > b->lowest_vcn;
}

long ntfs_extents_join(struct ntfs_attr_extent *x, size_t n, struct ntfs_run **runs,
		       char *why)
{
	int64_t next = 0;
	size_t total = 0;
	long k = 0;

	*runs = NULL;
	if (!n)
		return WHY("no extent"), -1;
	qsort(x, n, sizeof(*x), cmp_extent);
	for (size_t i = 0; i < n; i++) {
		uint64_t clusters = 0;

		for (long j = 0; j < x[i].nruns; j++)
			clusters += x[i].runs[j].len;
		if (x[i].lowest_vcn != next)
			return WHY("its extent at VCN %lld should start at VCN %lld",
				   (long long)x[i].lowest_vcn, (long long)next), -1;
		/* an empty extent has its highest VCN just below its lowest */
		if (x[i].highest_vcn < x[i].lowest_vcn - 1 ||
		    (uint64_t)(x[i].highest_vcn + 1 - x[i].lowest_vcn) != clusters)
			return WHY("its extent at VCN %lld has %llu clusters of runs for VCNs up to %lld",
				   (long long)x[i].lowest_vcn,
				   (unsigned long long)clusters,
				   (long long)x[i].highest_vcn), -1;
		next = x[i].highest_vcn + 1;
		total += (size_t)x[i].nruns;
	}
	*runs = calloc(total ? total : 1, sizeof(**runs));
	if (!*runs)
		return WHY("out of memory"), -1;
	for (size_t i = 0; i < n; i++)
		for (long j = 0; j < x[i].nruns; j++)
			(*runs)[k++] = x[i].runs[j];
	return k;
}

long ntfs_cunits_partial(const struct ntfs_run *runs, long n, uint32_t unit,
			 struct ntfs_cunit *part, long max, char *why)
{
	uint64_t vcn = 0, alloc = 0;
	bool hole = false;
	long k = 0;

	if (!unit)
		return WHY("no compression unit"), -1;
	for (long i = 0; i < n; i++) {
		uint64_t left = runs[i].len;

		while (left) {
			uint64_t take = unit - vcn % unit;

			/* whole units at once: all holes or all clusters */
			if (take == unit && left >= unit) {
				take = left - left % unit;
				vcn += take;
				left -= take;
				continue;
			}
			if (take > left)
				take = left;
			if (runs[i].lcn < 0)
				hole = true;
			else if (hole)
				return WHY("the compression unit at VCN %llu has clusters after a hole",
					   (unsigned long long)(vcn - vcn % unit)), -1;
			else
				alloc += take;
			vcn += take;
			left -= take;
			if (vcn % unit)
				continue;
			if (alloc && alloc < unit) {
				if (k < max)
					part[k] = (struct ntfs_cunit){ vcn - unit, alloc };
				k++;
			}
			alloc = 0;
			hole = false;
		}
	}
	if (vcn % unit)
		return WHY("its %llu clusters are not whole compression units of %u",
			   (unsigned long long)vcn, unit), -1;
	return k;
}

static int cmp_lcn(const void *x, const void *y)
{
	const struct ntfs_run *a = x, *b = y;

	return a->lcn < b->lcn ? -1 : a->lcn > b->lcn;
}

/* Do the allocated runs of RUNS (N) claim a cluster twice? */
static bool runs_overlap(const struct ntfs_run *runs, long n)
{
	struct ntfs_run *v = malloc((size_t)(n ? n : 1) * sizeof(*v));
	bool overlap = !v;
	long k = 0;

	for (long i = 0; v && i < n; i++)
		if (runs[i].lcn >= 0)
			v[k++] = runs[i];
	if (v)
		qsort(v, (size_t)k, sizeof(*v), cmp_lcn);
	for (long i = 1; v && i < k && !overlap; i++)
		overlap = (uint64_t)v[i - 1].lcn + v[i - 1].len > (uint64_t)v[i].lcn;
	free(v);
	return overlap;
}

long ntfs_cunits_long_hole(const struct ntfs_run *runs, long n, uint32_t unit,
			   uint64_t excess)
{
	struct ntfs_run *v;
	char why[NTFS_WHY];
	long found = -1, count = 0;

	if (!unit || !excess || n <= 0 || runs_overlap(runs, n))
		return -1;
	/* runs that already make whole units: no hole runs past its unit,
	 * and cutting one would move the data after it */
	if (ntfs_cunits_partial(runs, n, unit, NULL, 0, why) >= 0)
		return -1;
	if (!(v = malloc((size_t)n * sizeof(*v))))
		return -1;
	memcpy(v, runs, (size_t)n * sizeof(*v));
	for (long i = 0; i < n && count < 2; i++) {
		if (v[i].lcn >= 0 || v[i].len <= excess)
			continue;
		v[i].len -= excess;
		if (ntfs_cunits_partial(v, n, unit, NULL, 0, why) >= 0) {
			found = i;
			count++;
		}
		v[i].len += excess;
	}
	free(v);
	return count == 1 ? found : -1;
}

bool ntfs_lznt1_chunks(const uint8_t *buf, size_t len, uint32_t unit_bytes,
		       char *why)
{
	size_t at = 0, chunks = 0;

	while (len - at >= 2) {
		uint16_t h = (uint16_t)(buf[at] | buf[at + 1] << 8);
		size_t size = (h & 0xfffu) + 1;

		if (!h)
			break;
		if ((h >> 12 & 7) != 3)
			return WHY("the chunk header 0x%04x at byte %zu has no LZNT1 signature",
				   h, at), false;
		if (size > len - at - 2)
			return WHY("the chunk at byte %zu runs past the %zu allocated bytes",
				   at, len), false;
		if (++chunks > unit_bytes / 4096)
			return WHY("more than %u chunks", unit_bytes / 4096), false;
		at += 2 + size;
	}
	if (!chunks)
		return WHY("no LZNT1 chunk"), false;
	return true;
}

uint64_t ntfs_vol_record_offset(const struct ntfs_vol *v, uint64_t recno)
{
	uint64_t byte = recno * v->boot.g.mft_record_size, vcn_bytes = 0;
	uint32_t cs = v->boot.g.cluster_size;

	if (recno >= v->mft_records)
		return UINT64_MAX;
	for (long i = 0; i < v->nmft_runs; i++) {
		uint64_t run_bytes = v->mft_runs[i].len * cs;

		if (byte < vcn_bytes + run_bytes) {
			if (v->mft_runs[i].lcn < 0)
				return UINT64_MAX;
			return (uint64_t)v->mft_runs[i].lcn * cs + (byte - vcn_bytes);
		}
		vcn_bytes += run_bytes;
	}
	return UINT64_MAX;
}
