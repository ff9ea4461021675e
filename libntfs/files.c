// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The system files: MFT records 0-26 of a fresh volume, and the root
 * directory's index block.  Records 0-15 are reserved for the system
 * (12-15 in use but empty), 16-23 are free, 24-26 are $Extend's $Quota,
 * $ObjId and $Reparse.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define FA_SYS (NTFS_FA_HIDDEN | NTFS_FA_SYSTEM)
#define FA_DIR NTFS_FA_DUP_FILE_NAME_INDEX_PRESENT
#define FA_VIEW NTFS_FA_DUP_VIEW_INDEX_PRESENT

/* sequence numbers: $MFT, $MFTMirr and $Extend's files have 1, the other
 * reserved records their own number */
static uint16_t seq_of(uint32_t rec)
{
	return rec < 2 || rec >= 24 ? 1 : (uint16_t)rec;
}

static uint64_t mref(uint32_t rec) { return NTFS_MREF(rec, seq_of(rec)); }

static uint8_t *record(struct ntfs_build *b, uint32_t rec)
{
	return b->mft + (size_t)rec * b->plan->g.mft_record_size;
}

static void add_si(struct ntfs_build *b, struct ntfs_rec *r, uint32_t fa,
		   uint32_t secid)
{
	struct ntfs_standard_information si;

	memset(&si, 0, sizeof(si));
	si.creation_time = si.last_data_change_time =
		si.last_mft_change_time = si.last_access_time =
		(int64_t)htole64((uint64_t)b->now);
	si.file_attributes = htole32(fa);
	si.security_id = htole32(b->secid ? b->secid : secid);
	ntfs_rec_add_resident(r, NTFS_AT_STANDARD_INFORMATION, NULL, &si,
			      sizeof(si), 0);
}

/* $FILE_NAME in the Win32-and-DOS namespace (system names fit both) */
static void add_fn(struct ntfs_build *b, struct ntfs_rec *r, uint32_t rec,
		   uint32_t parent, const char *name, uint32_t fa,
		   uint64_t alloc, uint64_t size)
{
	uint8_t *v = b->fn[rec];
	struct ntfs_file_name fn;
	size_t n = strlen(name);

	memset(&fn, 0, sizeof(fn));
	fn.parent_directory = htole64(mref(parent));
	fn.creation_time = fn.last_data_change_time = fn.last_mft_change_time =
		fn.last_access_time = (int64_t)htole64((uint64_t)b->now);
	fn.allocated_size = (int64_t)htole64(alloc);
	fn.data_size = (int64_t)htole64(size);
	fn.file_attributes = htole32(fa);
	fn.name_length = (uint8_t)n;
	fn.name_type = NTFS_NS_WIN32_AND_DOS;
	memcpy(v, &fn, sizeof(fn));
	for (size_t i = 0; i < n; i++) {
		uint16_t c = htole16((uint16_t)(unsigned char)name[i]);

		memcpy(v + sizeof(fn) + 2 * i, &c, 2);
	}
	b->fnlen[rec] = sizeof(fn) + 2 * n;
	ntfs_rec_add_resident(r, NTFS_AT_FILE_NAME, NULL, v, (uint32_t)b->fnlen[rec], 1);
}

static uint64_t alloc_of(const struct ntfs_build *b, enum ntfs_area a)
{
	return b->plan->ext[a].clusters * b->plan->g.cluster_size;
}

static int add_data(struct ntfs_build *b, struct ntfs_rec *r, uint32_t type,
		    const char *name, enum ntfs_area a)
{
	struct ntfs_run run = { b->plan->ext[a].lcn, b->plan->ext[a].clusters };
	uint64_t size = b->plan->size[a];

	return ntfs_rec_add_nonresident(r, type, name, &run, 1,
					alloc_of(b, a), size, size);
}

/* a plain system file whose $DATA is area A */
static int data_file(struct ntfs_build *b, uint32_t rec, const char *name,
		     uint32_t secid, enum ntfs_area a)
{
	struct ntfs_rec r;

	ntfs_rec_init(&r, record(b, rec), b->plan->g.mft_record_size, rec,
		      seq_of(rec), NTFS_MFT_IN_USE, 1);
	add_si(b, &r, FA_SYS, secid);
	add_fn(b, &r, rec, NTFS_FILE_ROOT, name, FA_SYS, alloc_of(b, a),
	       b->plan->size[a]);
	if (add_data(b, &r, NTFS_AT_DATA, NULL, a))
		return -ENOSPC;
	if (rec == NTFS_FILE_MFT && add_data(b, &r, NTFS_AT_BITMAP, NULL, AREA_MFTBMP))
		return -ENOSPC;
	return 0;
}

static int view_root(struct ntfs_build *b, struct ntfs_rec *r,
		     const char *name, uint32_t collation,
		     const uint8_t *entries, size_t elen)
{
	uint8_t ir[1024];
	uint8_t end[16];
	size_t n;

	if (!entries) {
		elen = ntfs_ie_end(end, false, 0);
		entries = end;
	}
	if (elen + sizeof(struct ntfs_index_root) > sizeof(ir))
		return -ENOSPC;
	n = ntfs_index_root(ir, 0, collation, b->plan->g.index_block_size,
			    b->plan->g.cluster_size, entries, elen, false);
	return ntfs_rec_add_resident(r, NTFS_AT_INDEX_ROOT, name, ir,
				     (uint32_t)n, 0) ? 0 : -ENOSPC;
}

static void extend_file_start(struct ntfs_build *b, struct ntfs_rec *r,
			      uint32_t rec, const char *name)
{
	uint32_t fa = FA_SYS | NTFS_FA_ARCHIVE | FA_VIEW;

	ntfs_rec_init(r, record(b, rec), b->plan->g.mft_record_size, rec,
		      seq_of(rec), NTFS_MFT_IN_USE | NTFS_MFT_IS_4 |
		      NTFS_MFT_IS_VIEW_INDEX, 1);
	add_si(b, r, fa, SECID_MODIFY);
	add_fn(b, r, rec, NTFS_FILE_EXTEND, name, fa, 0, 0);
}

/* $Quota: owner ids by SID ($O) and the quota of each owner ($Q):
 * id 1 holds the volume's default limits, 0x100 belongs to Administrators */
static int quota_file(struct ntfs_build *b)
{
	uint8_t o[128], q[256], *p, data[sizeof(struct ntfs_quota_control) + 16];
	struct ntfs_quota_control qc;
	size_t sidlen;
	const uint8_t *sid = ntfs_sid_admins(&sidlen);
	uint32_t id_admin = htole32(0x100), id_default = htole32(1);
	struct ntfs_rec r;
	int ret;

	extend_file_start(b, &r, NTFS_FILE_QUOTA, "$Quota");
	p = o + ntfs_ie_view(o, sid, (uint16_t)sidlen, &id_admin, 4);
	p += ntfs_ie_end(p, false, 0);
	ret = view_root(b, &r, "$O", NTFS_COLLATION_NTOFS_SID, o, (size_t)(p - o));
	memset(&qc, 0, sizeof(qc));
	qc.version = htole32(2);
	qc.flags = htole32(NTFS_QUOTA_DEFAULT_LIMITS);
	qc.change_time = (int64_t)htole64((uint64_t)b->now);
	qc.threshold = qc.limit = -1;
	memcpy(data, &qc, sizeof(qc));
	memcpy(data + sizeof(qc), sid, sidlen);
	p = q + ntfs_ie_view(q, &id_default, 4, data, sizeof(qc));
	p += ntfs_ie_view(p, &id_admin, 4, data, (uint16_t)(sizeof(qc) + sidlen));
	p += ntfs_ie_end(p, false, 0);
	return ret ? ret : view_root(b, &r, "$Q", NTFS_COLLATION_NTOFS_ULONG,
				     q, (size_t)(p - q));
}

static int objid_file(struct ntfs_build *b)
{
	uint8_t o[128], *p = o, data[56];
	uint64_t vol = htole64(mref(NTFS_FILE_VOLUME));
	struct ntfs_rec r;

	extend_file_start(b, &r, NTFS_FILE_OBJID, "$ObjId");
	if (!b->opts->with_uuid)
		return view_root(b, &r, "$O", NTFS_COLLATION_NTOFS_ULONGS, NULL, 0);
	/* the volume's object id: file, birth volume, birth object, domain */
	memset(data, 0, sizeof(data));
	memcpy(data, &vol, 8);
	memcpy(data + 24, b->volume_guid, 16);
	p += ntfs_ie_view(p, b->volume_guid, 16, data, sizeof(data));
	p += ntfs_ie_end(p, false, 0);
	return view_root(b, &r, "$O", NTFS_COLLATION_NTOFS_ULONGS, o, (size_t)(p - o));
}

static int reparse_file(struct ntfs_build *b)
{
	struct ntfs_rec r;

	extend_file_start(b, &r, NTFS_FILE_REPARSE, "$Reparse");
	return view_root(b, &r, "$R", NTFS_COLLATION_NTOFS_ULONGS, NULL, 0);
}

/* directory entries of RECS (with their $FILE_NAME keys), collated */
static size_t dir_entries(struct ntfs_build *b, const uint32_t *recs, int n,
			  uint8_t *out)
{
	uint32_t order[NTFS_FILE_COUNT_MIN];
	uint16_t na[255], nb[255];
	uint8_t *p = out;

	for (int i = 0; i < n; i++) {
		int j = i;

		order[i] = recs[i];
		for (; j > 0; j--) {
			const uint8_t *x = b->fn[order[j - 1]], *y = b->fn[order[j]];
			size_t lx = x[64], ly = y[64];

			for (size_t k = 0; k < lx; k++)
				na[k] = (uint16_t)(x[66 + 2 * k] | x[67 + 2 * k] << 8);
			for (size_t k = 0; k < ly; k++)
				nb[k] = (uint16_t)(y[66 + 2 * k] | y[67 + 2 * k] << 8);
			if (ntfs_collate_file_name(b->upcase, na, lx, nb, ly) <= 0)
				break;
			uint32_t t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
		}
	}
	for (int i = 0; i < n; i++)
		p += ntfs_ie_file_name(p, mref(order[i]), b->fn[order[i]],
				       b->fnlen[order[i]]);
	return (size_t)(p - out);
}

static int extend_dir(struct ntfs_build *b)
{
	static const uint32_t kids[] = { NTFS_FILE_QUOTA, NTFS_FILE_OBJID,
					 NTFS_FILE_REPARSE };
	uint8_t ents[1024], ir[1200];
	struct ntfs_rec r;
	size_t n, ilen;

	ntfs_rec_init(&r, record(b, NTFS_FILE_EXTEND), b->plan->g.mft_record_size,
		      NTFS_FILE_EXTEND, seq_of(NTFS_FILE_EXTEND),
		      NTFS_MFT_IN_USE | NTFS_MFT_IS_DIRECTORY, 1);
	add_si(b, &r, FA_SYS, SECID_MODIFY);
	add_fn(b, &r, NTFS_FILE_EXTEND, NTFS_FILE_ROOT, "$Extend", FA_SYS | FA_DIR, 0, 0);
	n = b->extend_empty ? 0 : dir_entries(b, kids, 3, ents);
	n += ntfs_ie_end(ents + n, false, 0);
	ilen = ntfs_index_root(ir, NTFS_AT_FILE_NAME, NTFS_COLLATION_FILE_NAME,
			       b->plan->g.index_block_size,
			       b->plan->g.cluster_size, ents, n, false);
	return ntfs_rec_add_resident(&r, NTFS_AT_INDEX_ROOT, "$I30", ir,
				     (uint32_t)ilen, 0) ? 0 : -ENOSPC;
}

static int volume_file(struct ntfs_build *b)
{
	struct ntfs_volume_information vi;
	struct ntfs_rec r;

	ntfs_rec_init(&r, record(b, NTFS_FILE_VOLUME), b->plan->g.mft_record_size,
		      NTFS_FILE_VOLUME, seq_of(NTFS_FILE_VOLUME), NTFS_MFT_IN_USE, 1);
	add_si(b, &r, FA_SYS, SECID_SYSTEM);
	add_fn(b, &r, NTFS_FILE_VOLUME, NTFS_FILE_ROOT, "$Volume", FA_SYS, 0, 0);
	if (b->opts->with_uuid)
		ntfs_rec_add_resident(&r, NTFS_AT_OBJECT_ID, NULL, b->volume_guid, 16, 0);
	if (!ntfs_rec_add_resident(&r, NTFS_AT_VOLUME_NAME, NULL, b->label,
				   (uint32_t)(2 * b->label_len), 0))
		return -ENOSPC;
	memset(&vi, 0, sizeof(vi));
	vi.major_ver = 3;
	vi.minor_ver = 1;
	vi.flags = htole16(b->volume_flags);
	ntfs_rec_add_resident(&r, NTFS_AT_VOLUME_INFORMATION, NULL, &vi, sizeof(vi), 0);
	return ntfs_rec_add_resident(&r, NTFS_AT_DATA, NULL, NULL, 0, 0) ? 0 : -ENOSPC;
}

static int badclus_file(struct ntfs_build *b)
{
	uint64_t n = b->plan->g.nr_clusters;
	struct ntfs_run hole = { -1, n };
	struct ntfs_rec r;

	ntfs_rec_init(&r, record(b, NTFS_FILE_BADCLUS), b->plan->g.mft_record_size,
		      NTFS_FILE_BADCLUS, seq_of(NTFS_FILE_BADCLUS), NTFS_MFT_IN_USE, 1);
	add_si(b, &r, FA_SYS, SECID_SYSTEM);
	add_fn(b, &r, NTFS_FILE_BADCLUS, NTFS_FILE_ROOT, "$BadClus", FA_SYS, 0, 0);
	ntfs_rec_add_resident(&r, NTFS_AT_DATA, NULL, NULL, 0, 0);
	/* $Bad: one hole as long as the volume; bad clusters get mapped in */
	return ntfs_rec_add_nonresident(&r, NTFS_AT_DATA, "$Bad", &hole, 1,
					n * b->plan->g.cluster_size,
					n * b->plan->g.cluster_size, 0) ? -ENOSPC : 0;
}

static int secure_file(struct ntfs_build *b)
{
	uint32_t fa = FA_SYS | FA_VIEW;
	struct ntfs_rec r;
	int ret;

	ntfs_rec_init(&r, record(b, NTFS_FILE_SECURE), b->plan->g.mft_record_size,
		      NTFS_FILE_SECURE, seq_of(NTFS_FILE_SECURE),
		      NTFS_MFT_IN_USE | NTFS_MFT_IS_VIEW_INDEX, 1);
	add_si(b, &r, fa, SECID_MODIFY);
	add_fn(b, &r, NTFS_FILE_SECURE, NTFS_FILE_ROOT, "$Secure", fa, 0, 0);
	if (add_data(b, &r, NTFS_AT_DATA, "$SDS", AREA_SDS))
		return -ENOSPC;
	ret = view_root(b, &r, "$SDH", NTFS_COLLATION_NTOFS_SECURITY_HASH,
			b->sec->sdh, b->sec->sdh_len);
	return ret ? ret : view_root(b, &r, "$SII", NTFS_COLLATION_NTOFS_ULONG,
				     b->sec->sii, b->sec->sii_len);
}

static uint32_t root_fa(const struct ntfs_build *b)
{
	uint32_t fa = FA_SYS | NTFS_FA_ARCHIVE;

	if (b->opts->enable_compression)
		fa |= NTFS_FA_COMPRESSED;
	if (b->opts->no_indexing)
		fa |= NTFS_FA_NOT_CONTENT_INDEXED;
	return fa;
}

/* root: a large index: the root node only points at VCN 0, one INDX block
 * holding every system file's entry */
static int root_dir(struct ntfs_build *b)
{
	static const uint32_t all[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 };
	const struct ntfs_plan *p = b->plan;
	uint8_t ents[4096], ir[64], bmp[8] = { 1 };
	struct ntfs_run run = { p->ext[AREA_ROOT_IA].lcn, p->ext[AREA_ROOT_IA].clusters };
	struct ntfs_rec r;
	size_t n;

	ntfs_rec_init(&r, record(b, NTFS_FILE_ROOT), p->g.mft_record_size,
		      NTFS_FILE_ROOT, seq_of(NTFS_FILE_ROOT),
		      NTFS_MFT_IN_USE | NTFS_MFT_IS_DIRECTORY, 1);
	add_si(b, &r, root_fa(b), SECID_ROOT);
	add_fn(b, &r, NTFS_FILE_ROOT, NTFS_FILE_ROOT, ".", root_fa(b) | FA_DIR, 0, 0);
	n = dir_entries(b, all, 12, ents);
	n += ntfs_ie_end(ents + n, false, 0);
	if (ntfs_index_block(b->root_indx, p->g.index_block_size, 0, ents, n, 1, false))
		return -ENOSPC;
	n = ntfs_ie_end(ents, true, 0);
	n = ntfs_index_root(ir, NTFS_AT_FILE_NAME, NTFS_COLLATION_FILE_NAME,
			    p->g.index_block_size, p->g.cluster_size, ents, n, true);
	if (!ntfs_rec_add_resident(&r, NTFS_AT_INDEX_ROOT, "$I30", ir, (uint32_t)n, 0))
		return -ENOSPC;
	if (ntfs_rec_add_nonresident(&r, NTFS_AT_INDEX_ALLOCATION, "$I30", &run, 1,
				     alloc_of(b, AREA_ROOT_IA), p->size[AREA_ROOT_IA],
				     p->size[AREA_ROOT_IA]))
		return -ENOSPC;
	return ntfs_rec_add_resident(&r, NTFS_AT_BITMAP, "$I30", bmp, 8, 0) ? 0 : -ENOSPC;
}

/* records 12-15: reserved, in use, no name */
static void reserved_file(struct ntfs_build *b, uint32_t rec)
{
	struct ntfs_rec r;

	ntfs_rec_init(&r, record(b, rec), b->plan->g.mft_record_size, rec,
		      seq_of(rec), NTFS_MFT_IN_USE, 0);
	add_si(b, &r, FA_SYS, SECID_SYSTEM);
	ntfs_rec_add_resident(&r, NTFS_AT_DATA, NULL, NULL, 0, 0);
}

int ntfs_build_one(struct ntfs_build *b, uint32_t rec)
{
	static const char *const names[] = {
		[NTFS_FILE_MFTMIRR] = "$MFTMirr", [NTFS_FILE_LOGFILE] = "$LogFile",
		[NTFS_FILE_ATTRDEF] = "$AttrDef", [NTFS_FILE_BITMAP] = "$Bitmap",
		[NTFS_FILE_BOOT] = "$Boot", [NTFS_FILE_UPCASE] = "$UpCase",
	};
	static const enum ntfs_area areas[] = {
		[NTFS_FILE_MFTMIRR] = AREA_MIRR, [NTFS_FILE_LOGFILE] = AREA_LOGFILE,
		[NTFS_FILE_ATTRDEF] = AREA_ATTRDEF, [NTFS_FILE_BITMAP] = AREA_BITMAP,
		[NTFS_FILE_BOOT] = AREA_BOOT, [NTFS_FILE_UPCASE] = AREA_UPCASE,
	};

	switch (rec) {
	case NTFS_FILE_MFTMIRR: case NTFS_FILE_LOGFILE: case NTFS_FILE_ATTRDEF:
	case NTFS_FILE_BITMAP: case NTFS_FILE_BOOT: case NTFS_FILE_UPCASE:
		return data_file(b, rec, names[rec], SECID_SYSTEM, areas[rec]);
	case NTFS_FILE_VOLUME:
		return volume_file(b);
	case NTFS_FILE_BADCLUS:
		return badclus_file(b);
	case NTFS_FILE_EXTEND:
		return extend_dir(b);
	default:
		return -EINVAL;
	}
}

int ntfs_build_records(struct ntfs_build *b)
{
	const struct ntfs_plan *p = b->plan;
	uint32_t rs = p->g.mft_record_size;
	int ret = 0;

	for (uint32_t i = 0; i < p->mft_records; i++)
		ntfs_rec_init_free(record(b, i), rs, i,
				   i < NTFS_FILE_QUOTA ? seq_of(i) : 1);
	ret |= quota_file(b);
	ret |= objid_file(b);
	ret |= reparse_file(b);
	ret |= extend_dir(b);
	ret |= data_file(b, NTFS_FILE_MFT, "$MFT", SECID_SYSTEM, AREA_MFT);
	ret |= data_file(b, NTFS_FILE_MFTMIRR, "$MFTMirr", SECID_SYSTEM, AREA_MIRR);
	ret |= data_file(b, NTFS_FILE_LOGFILE, "$LogFile", SECID_SYSTEM, AREA_LOGFILE);
	ret |= volume_file(b);
	ret |= data_file(b, NTFS_FILE_ATTRDEF, "$AttrDef", SECID_SYSTEM, AREA_ATTRDEF);
	ret |= data_file(b, NTFS_FILE_BITMAP, "$Bitmap", SECID_SYSTEM, AREA_BITMAP);
	ret |= data_file(b, NTFS_FILE_BOOT, "$Boot", SECID_SYSTEM, AREA_BOOT);
	ret |= badclus_file(b);
	ret |= secure_file(b);
	ret |= data_file(b, NTFS_FILE_UPCASE, "$UpCase", SECID_SYSTEM, AREA_UPCASE);
	for (uint32_t i = 12; i < NTFS_FILE_FIRST_USER; i++)
		reserved_file(b, i);
	ret |= root_dir(b);
	if (ret) {
		fsf_err(b->opts->log, "internal error: a system file does not fit in a %u-byte MFT record", rs);
		return -ENOSPC;
	}
	for (uint32_t i = 0; i < p->mft_records; i++)
		ntfs_fixup_apply(record(b, i), rs, 1);
	return 0;
}
