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
#include "ntfs/index_build.h"
#include "ntfs/sds.h"

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

/* Index NAME of record R from E (N entries, sorted here) by the index
 * builder.  LARGE: a root over one INDX block, written to BLOCK, whose
 * clusters are area AREA_ROOT_IA. */
static int add_index(struct ntfs_build *b, struct ntfs_rec *r, const char *name,
		     uint32_t type, uint32_t collation, struct ntfs_ib_entry *e,
		     size_t n, bool large, uint8_t *block)
{
	const struct ntfs_plan *p = b->plan;
	uint32_t hdr = (uint32_t)ntfs_align(24 + 2 * strlen(name), 8);
	uint32_t room = r->size - r->end - 8 - hdr - (large ? 0x80 : 0);
	struct ntfs_ib_spec spec = {
		.type = type, .collation = collation, .upcase = b->upcase,
		.root_room = room, .block_size = p->g.index_block_size,
		.cluster_size = p->g.cluster_size, .large = large,
	};
	struct ntfs_ib_result res;
	int ret = -ENOSPC;

	if (r->size < r->end + 8 + hdr + (large ? 0x80 : 0) + 64)
		return -ENOSPC;
	ntfs_ib_sort(e, n, &spec);
	if (ntfs_index_build_spec(&spec, e, n, &res))
		return -ENOSPC;
	if (res.large != large || (large && res.nblocks != 1))
		goto out;
	if (!ntfs_rec_add_resident(r, NTFS_AT_INDEX_ROOT, name, res.root,
				   res.root_len, 0))
		goto out;
	if (large) {
		struct ntfs_run run = { p->ext[AREA_ROOT_IA].lcn,
					p->ext[AREA_ROOT_IA].clusters };
		uint8_t bmp[8] = { 1 };

		memcpy(block, res.blocks, p->g.index_block_size);
		if (ntfs_rec_add_nonresident(r, NTFS_AT_INDEX_ALLOCATION, name, &run, 1,
					     alloc_of(b, AREA_ROOT_IA),
					     p->size[AREA_ROOT_IA], p->size[AREA_ROOT_IA]) ||
		    !ntfs_rec_add_resident(r, NTFS_AT_BITMAP, name, bmp, 8, 0))
			goto out;
	}
	ret = 0;
out:
	ntfs_index_build_free(&res);
	return ret;
}

static int view_index(struct ntfs_build *b, struct ntfs_rec *r, const char *name,
		      uint32_t collation, struct ntfs_ib_entry *e, size_t n)
{
	return add_index(b, r, name, 0, collation, e, n, false, NULL);
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
	uint8_t data[sizeof(struct ntfs_quota_control) + 16];
	struct ntfs_quota_control qc;
	size_t sidlen;
	const uint8_t *sid = ntfs_sid_admins(&sidlen);
	uint32_t id_admin = htole32(0x100), id_default = htole32(1);
	struct ntfs_ib_entry o[1] = { { .key = sid, .key_len = (uint16_t)sidlen,
					.data = (const uint8_t *)&id_admin, .data_len = 4 } };
	struct ntfs_ib_entry q[2];
	struct ntfs_rec r;
	int ret;

	extend_file_start(b, &r, NTFS_FILE_QUOTA, "$Quota");
	ret = view_index(b, &r, "$O", NTFS_COLLATION_NTOFS_SID, o, 1);
	memset(&qc, 0, sizeof(qc));
	qc.version = htole32(2);
	qc.flags = htole32(NTFS_QUOTA_DEFAULT_LIMITS);
	qc.change_time = (int64_t)htole64((uint64_t)b->now);
	qc.threshold = qc.limit = -1;
	memcpy(data, &qc, sizeof(qc));
	memcpy(data + sizeof(qc), sid, sidlen);
	q[0] = (struct ntfs_ib_entry){ .key = (const uint8_t *)&id_default, .key_len = 4,
				       .data = data, .data_len = sizeof(qc) };
	q[1] = (struct ntfs_ib_entry){ .key = (const uint8_t *)&id_admin, .key_len = 4,
				       .data = data, .data_len = (uint16_t)(sizeof(qc) + sidlen) };
	return ret ? ret : view_index(b, &r, "$Q", NTFS_COLLATION_NTOFS_ULONG, q, 2);
}

static int objid_file(struct ntfs_build *b)
{
	uint8_t data[56];
	uint64_t vol = htole64(mref(NTFS_FILE_VOLUME));
	struct ntfs_ib_entry e = { .key = b->volume_guid, .key_len = 16,
				   .data = data, .data_len = sizeof(data) };
	struct ntfs_rec r;

	extend_file_start(b, &r, NTFS_FILE_OBJID, "$ObjId");
	/* the volume's object id: file, birth volume, birth object, domain */
	memset(data, 0, sizeof(data));
	memcpy(data, &vol, 8);
	memcpy(data + 24, b->volume_guid, 16);
	return view_index(b, &r, "$O", NTFS_COLLATION_NTOFS_ULONGS, &e,
			  b->opts->with_uuid ? 1 : 0);
}

static int reparse_file(struct ntfs_build *b)
{
	struct ntfs_rec r;

	extend_file_start(b, &r, NTFS_FILE_REPARSE, "$Reparse");
	return view_index(b, &r, "$R", NTFS_COLLATION_NTOFS_ULONGS, NULL, 0);
}

/* directory index $I30 of record R: the entries of RECS (their
 * $FILE_NAME keys) */
static int dir_index(struct ntfs_build *b, struct ntfs_rec *r,
		     const uint32_t *recs, int n, bool large)
{
	struct ntfs_ib_entry e[NTFS_FILE_COUNT_MIN];

	for (int i = 0; i < n; i++)
		e[i] = (struct ntfs_ib_entry){ .mref = mref(recs[i]), .key = b->fn[recs[i]],
					       .key_len = (uint16_t)b->fnlen[recs[i]] };
	return add_index(b, r, "$I30", NTFS_AT_FILE_NAME, NTFS_COLLATION_FILE_NAME,
			 e, (size_t)n, large, b->root_indx);
}

static int extend_dir(struct ntfs_build *b)
{
	static const uint32_t kids[] = { NTFS_FILE_QUOTA, NTFS_FILE_OBJID,
					 NTFS_FILE_REPARSE };
	struct ntfs_rec r;

	ntfs_rec_init(&r, record(b, NTFS_FILE_EXTEND), b->plan->g.mft_record_size,
		      NTFS_FILE_EXTEND, seq_of(NTFS_FILE_EXTEND),
		      NTFS_MFT_IN_USE | NTFS_MFT_IS_DIRECTORY, 1);
	add_si(b, &r, FA_SYS, SECID_MODIFY);
	add_fn(b, &r, NTFS_FILE_EXTEND, NTFS_FILE_ROOT, "$Extend", FA_SYS | FA_DIR, 0, 0);
	return dir_index(b, &r, kids, b->extend_empty ? 0 : 3, false);
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
	vi.major_ver = b->major_ver ? b->major_ver : 3;
	vi.minor_ver = b->major_ver ? b->minor_ver : 1;
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
	if (b->bad_kept)
		return 0;
	/* $Bad: one hole as long as the volume; bad clusters get mapped in */
	return ntfs_rec_add_nonresident(&r, NTFS_AT_DATA, "$Bad", &hole, 1,
					n * b->plan->g.cluster_size,
					n * b->plan->g.cluster_size, 0) ? -ENOSPC : 0;
}

static int secure_file(struct ntfs_build *b)
{
	uint32_t fa = FA_SYS | FA_VIEW;
	struct ntfs_ib_entry sii[NTFS_NR_SD], sdh[NTFS_NR_SD];
	uint8_t keys[NTFS_NR_SD][8];
	struct ntfs_rec r;
	int ret;

	ntfs_sds_index_entries(b->sec->hdr, NTFS_NR_SD, keys, sii, sdh);
	ntfs_rec_init(&r, record(b, NTFS_FILE_SECURE), b->plan->g.mft_record_size,
		      NTFS_FILE_SECURE, seq_of(NTFS_FILE_SECURE),
		      NTFS_MFT_IN_USE | NTFS_MFT_IS_VIEW_INDEX, 1);
	add_si(b, &r, fa, SECID_MODIFY);
	add_fn(b, &r, NTFS_FILE_SECURE, NTFS_FILE_ROOT, "$Secure", fa, 0, 0);
	if (add_data(b, &r, NTFS_AT_DATA, "$SDS", AREA_SDS))
		return -ENOSPC;
	ret = view_index(b, &r, "$SDH", NTFS_COLLATION_NTOFS_SECURITY_HASH,
			 sdh, NTFS_NR_SD);
	return ret ? ret : view_index(b, &r, "$SII", NTFS_COLLATION_NTOFS_ULONG,
				      sii, NTFS_NR_SD);
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
	struct ntfs_rec r;

	ntfs_rec_init(&r, record(b, NTFS_FILE_ROOT), p->g.mft_record_size,
		      NTFS_FILE_ROOT, seq_of(NTFS_FILE_ROOT),
		      NTFS_MFT_IN_USE | NTFS_MFT_IS_DIRECTORY, 1);
	add_si(b, &r, root_fa(b), SECID_ROOT);
	add_fn(b, &r, NTFS_FILE_ROOT, NTFS_FILE_ROOT, ".", root_fa(b) | FA_DIR, 0, 0);
	return dir_index(b, &r, all, 12, true);
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
	case NTFS_FILE_SECURE:
		return secure_file(b);
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
