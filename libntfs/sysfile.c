// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One system record made again (see ntfs/sysfile.h): a plan holding only
 * that file's extent is handed to the builders mkfs.ntfs formats with.
 */
#include "config.h"

#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "ntfs/sysfile.h"

void ntfs_sysfile_attrdef(uint8_t *out)
{
	ntfs_attrdef_build(out);
}

void ntfs_sysfile_sds(uint8_t *out)
{
	struct ntfs_secure sec;

	ntfs_secure_build(&sec);
	memset(out, 0, NTFS_SDS_BLOCK + sec.sds_len);
	memcpy(out, sec.sds, sec.sds_len);
	memcpy(out + NTFS_SDS_BLOCK, sec.sds, sec.sds_len);
}

bool ntfs_sysfile_buildable(uint32_t recno)
{
	return recno >= NTFS_FILE_MFTMIRR && recno <= NTFS_FILE_EXTEND &&
	       recno != NTFS_FILE_ROOT;
}

uint64_t ntfs_sysfile_size(uint32_t recno, const struct ntfs_geometry *g,
			   uint32_t mirr_records)
{
	switch (recno) {
	case NTFS_FILE_MFTMIRR:
		return (uint64_t)mirr_records * g->mft_record_size;
	case NTFS_FILE_LOGFILE:
		return ntfs_logfile_size(g->nr_clusters * g->cluster_size,
					 g->cluster_size);
	case NTFS_FILE_ATTRDEF:
		return NTFS_ATTRDEF_SIZE;
	case NTFS_FILE_BITMAP:
		return ntfs_align((g->nr_clusters + 7) / 8, 8);
	case NTFS_FILE_BOOT:
		return 8192;
	case NTFS_FILE_UPCASE:
		return NTFS_UPCASE_LEN * 2;
	case NTFS_FILE_SECURE: {
		struct ntfs_secure sec;

		ntfs_secure_build(&sec);
		return NTFS_SDS_BLOCK + sec.sds_len;
	}
	default:
		return 0;
	}
}

static enum ntfs_area area_of(uint32_t recno)
{
	switch (recno) {
	case NTFS_FILE_MFTMIRR: return AREA_MIRR;
	case NTFS_FILE_LOGFILE: return AREA_LOGFILE;
	case NTFS_FILE_ATTRDEF: return AREA_ATTRDEF;
	case NTFS_FILE_BITMAP: return AREA_BITMAP;
	case NTFS_FILE_BOOT: return AREA_BOOT;
	case NTFS_FILE_UPCASE: return AREA_UPCASE;
	case NTFS_FILE_SECURE: return AREA_SDS;
	default: return AREA_COUNT;
	}
}

int ntfs_sysfile_record(uint32_t recno, const struct ntfs_sysfile *s,
			uint8_t *rec)
{
	static const struct ntfs_mkfs_opts opts;
	struct ntfs_secure sec;
	uint32_t rs = s->g.mft_record_size;
	struct ntfs_plan *plan = calloc(1, sizeof(*plan));
	struct ntfs_build *b = calloc(1, sizeof(*b));
	enum ntfs_area a = area_of(recno);
	struct ntfs_rec r;
	int ret = -1;

	if (!plan || !b || !ntfs_sysfile_buildable(recno))
		goto out;
	plan->g = s->g;
	if (a != AREA_COUNT) {
		plan->ext[a].lcn = s->data.lcn;
		plan->ext[a].clusters = s->data.len;
		plan->size[a] = s->data_size;
	}
	b->plan = plan;
	b->opts = &opts;
	b->sec = &sec;
	ntfs_secure_build(&sec);
	b->now = s->now;
	b->label = s->label;
	b->label_len = s->label_len;
	b->secid = s->secid;
	b->volume_flags = s->volume_flags;
	b->major_ver = s->major_ver;
	b->minor_ver = s->minor_ver;
	b->extend_empty = true;
	/* a readable $Bad replaces the built one (a stream of each name) */
	b->bad_kept = recno == NTFS_FILE_BADCLUS && s->keep[0];
	/* the builders write at record RECNO of B->mft */
	b->mft = calloc(recno + 1, rs);
	if (!b->mft || ntfs_build_one(b, recno))
		goto out;
	memcpy(rec, b->mft + (size_t)recno * rs, rs);
	/* kept attributes go after the built ones, numbered after them */
	{
		struct ntfs_mft_record m;
		uint16_t inst;

		memcpy(&m, rec, sizeof(m));
		inst = le16toh(m.next_attr_instance);
		r.buf = rec;
		r.size = rs;
		r.end = le32toh(m.bytes_in_use) - 8;
		for (int i = 0; i < 2; i++) {
			uint8_t *at;
			uint16_t le = htole16(inst);

			if (!s->keep[i])
				continue;
			at = ntfs_rec_add_raw(&r, s->keep[i], s->keep_len[i]);
			if (!at)
				goto out;
			memcpy(at + offsetof(struct ntfs_attr_header, instance), &le, 2);
			inst++;
		}
		memcpy(&m, rec, sizeof(m));
		m.next_attr_instance = htole16(inst);
		memcpy(rec, &m, sizeof(m));
	}
	ret = 0;
out:
	if (b)
		free(b->mft);
	free(plan);
	free(b);
	return ret;
}
