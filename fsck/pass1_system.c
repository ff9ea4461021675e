// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 1: system files made again instead of giving up.  A system record
 * of $MFTMirr, $LogFile, $Volume, $AttrDef, $Bitmap, $Boot, $BadClus,
 * $Secure, $UpCase or $Extend that neither its mirror copy nor the in-place repairs
 * make usable, or that does not fit its role (no journal stream, a $Boot
 * not at cluster 0, a $Bitmap too small for the volume...), is built again
 * by libntfs exactly as mkfs.ntfs builds it.  What is still readable in
 * the old record is kept: $Volume's name, flags and version, the security id,
 * $BadClus:$Bad (the bad clusters), $UpCase:$Info.  Where the file's
 * content is known it stays ($MFTMirr at the cluster pass 0 verified,
 * $Boot at cluster 0); otherwise the content is written to free clusters
 * after every record has been scanned: an empty journal (0xff, as
 * ntfsfix and ntfsck reset it), the standard attribute and upper case
 * tables, a cluster map the bitmap pass then fills, mkfs.ntfs's security
 * descriptors (the $Secure pass then gives every file whose security id
 * they do not hold the default one).  $Extend gets an
 * empty index that the index pass rebuilds from its files' names.
 *
 * $UpCase's table is also checked: an entry that is neither the character
 * itself nor its standard upper case is damage (tables of older Windows
 * versions upcase fewer characters, never others), as is an ASCII letter
 * left lower case; the standard table is then written over it.  A table
 * with $UpCase:$Info (Windows 8 and later, whose tables may know newer
 * Unicode versions) is judged on its ASCII half only.  $AttrDef's table
 * too: one that does not parse or lacks the core types gets the standard
 * one.  Both tables are judged after pass 1B: a table whose run reaches
 * another file's clusters is then alone on them (that file has its copy),
 * and a table in a hole is left, never "written" into nothing.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ntfs_check.h"
#include "ntfs_problems.h"
#include "ntfs/sysfile.h"

#define CHUNK (1u << 20)

/* what is kept of an old record */
struct keep {
	uint8_t *attr[2];	/* whole attributes */
	uint32_t len[2];
	uint16_t label[128];	/* little-endian UTF-16 */
	size_t label_len;
	uint16_t vflags;
	uint8_t major, minor;	/* $Volume's version, 0.0: not read */
	uint32_t secid;
};

struct ntfs_sysrec {
	uint16_t pending;	/* bit RECNO: make it again */
	struct keep k[NTFS_FILE_EXTEND + 1];
};

static const uint8_t NAME_BAD[8] = { '$', 0, 'B', 0, 'a', 0, 'd', 0 };
static const uint8_t NAME_INFO[10] = { '$', 0, 'I', 0, 'n', 0, 'f', 0, 'o', 0 };
static const uint8_t NAME_I30[8] = { '$', 0, 'I', 0, '3', 0, '0', 0 };

static bool named(const struct ntfs_attr_header *a, const uint8_t *name,
		  unsigned int n)
{
	return a->name_length == n &&
	       !memcmp((const uint8_t *)a + le16toh(a->name_offset), name, 2u * n);
}

int ntfs_sysrec_check(struct ntfs_check *c, uint64_t recno, const uint8_t *rec,
		      char *why)
{
	const struct ntfs_geometry *g = &c->vol.boot.g;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	struct ntfs_mft_record m;
	bool si = false, fn = false, list = false, vi = false, bad = false;
	bool i30 = false, data = false, nonres = false;
	uint64_t size = 0, alloc = 0;
	int64_t lcn0 = -1;
	int r;

	memcpy(&m, rec, sizeof(m));
	if (!(le16toh(m.flags) & NTFS_MFT_IN_USE)) {
		snprintf(why, NTFS_WHY, "not in use");
		return -1;
	}
	ntfs_attr_cursor_init(&cur, rec);
	while ((r = ntfs_attr_next(&cur, &a, why)) == 1) {
		uint32_t t = le32toh(a->type), len = 0;
		struct ntfs_run *runs = NULL;
		long n = 0;

		if (a->non_resident) {
			n = ntfs_attr_runs(a, g->nr_clusters, &runs, why);
			if (n < 0)
				return -1;
		} else {
			ntfs_attr_value(a, &len);
		}
		switch (t) {
		case NTFS_AT_STANDARD_INFORMATION:
			si = true;
			break;
		case NTFS_AT_ATTRIBUTE_LIST:
			list = true;
			break;
		case NTFS_AT_FILE_NAME:
			fn = true;
			break;
		case NTFS_AT_VOLUME_INFORMATION:
			vi |= len >= sizeof(struct ntfs_volume_information);
			break;
		case NTFS_AT_INDEX_ROOT:
			i30 |= named(a, NAME_I30, 4);
			break;
		case NTFS_AT_DATA:
			bad |= a->non_resident && named(a, NAME_BAD, 4);
			if (a->name_length)
				break;
			if (a->non_resident) {
				struct ntfs_attr_nonresident nr;

				memcpy(&nr, a, sizeof(nr));
				if (nr.lowest_vcn)
					break;
				size = le64toh((uint64_t)nr.data_size);
				alloc = le64toh((uint64_t)nr.allocated_size);
				lcn0 = n > 0 ? runs[0].lcn : -1;
				nonres = true;
			} else {
				size = alloc = len;
			}
			data = true;
			break;
		}
		free(runs);
	}
	if (r < 0)
		return -1;
	if (list)
		return 0;	/* its attributes are elsewhere too */
	if (!si || !fn) {
		snprintf(why, NTFS_WHY, "no %s attribute",
			 si ? "$FILE_NAME" : "$STANDARD_INFORMATION");
		return -1;
	}
	switch (recno) {
	case NTFS_FILE_MFTMIRR:
	case NTFS_FILE_LOGFILE:
		if (!nonres || !size)
			goto no_data;
		break;
	case NTFS_FILE_BOOT:
		if (!nonres || !size)
			goto no_data;
		if (lcn0 != 0) {
			snprintf(why, NTFS_WHY, "its data starts at cluster %lld, not at the boot sector",
				 (long long)lcn0);
			return -1;
		}
		break;
	case NTFS_FILE_ATTRDEF:
		if (!data || !size || size % sizeof(struct ntfs_attrdef) ||
		    size > 0x10000)
			goto no_data;
		break;
	case NTFS_FILE_BITMAP:
		if (!nonres || size < (g->nr_clusters + 7) / 8 || alloc < size) {
			snprintf(why, NTFS_WHY, "its data holds %llu bytes, the volume's %llu clusters need %llu",
				 (unsigned long long)size,
				 (unsigned long long)g->nr_clusters,
				 (unsigned long long)((g->nr_clusters + 7) / 8));
			return -1;
		}
		break;
	case NTFS_FILE_UPCASE:
		if (!data || size != 2ull * NTFS_UPCASE_LEN)
			goto no_data;
		break;
	case NTFS_FILE_VOLUME:
		if (!vi) {
			snprintf(why, NTFS_WHY, "no $VOLUME_INFORMATION attribute");
			return -1;
		}
		break;
	case NTFS_FILE_BADCLUS:
		if (!data || !bad) {
			snprintf(why, NTFS_WHY, "no %s stream", data ? "$Bad" : "unnamed $DATA");
			return -1;
		}
		break;
	case NTFS_FILE_EXTEND:
		if (!(le16toh(m.flags) & NTFS_MFT_IS_DIRECTORY) || !i30) {
			snprintf(why, NTFS_WHY, "not a directory with a $I30 index");
			return -1;
		}
		break;
	}
	return 0;
no_data:
	snprintf(why, NTFS_WHY, "no usable $DATA attribute (%llu bytes%s)",
		 (unsigned long long)size, data && !nonres ? ", resident" : "");
	return -1;
}

/* What the old record REC (as read or checked) still says. */
static void salvage_keep(struct ntfs_check *c, uint64_t recno,
			 const uint8_t *rec, struct keep *k)
{
	uint32_t rs = c->vol.boot.g.mft_record_size, first, used, off, len;
	uint8_t *copy = malloc(rs);
	struct ntfs_mft_record m;
	char why[NTFS_WHY];

	if (!copy)
		return;
	memcpy(copy, rec, rs);
	/* stride ends back in place (a no-op when they already are) */
	ntfs_fixup_force(copy, rs, &first);
	memcpy(&m, copy, sizeof(m));
	used = le32toh(m.bytes_in_use);
	if (used > rs)
		used = rs;
	for (off = le16toh(m.attrs_offset);
	     off < used && ntfs_attr_frame(copy, used, off, &len, why) == 1;
	     off += len) {
		const struct ntfs_attr_header *a = (const void *)(copy + off);
		uint32_t t = le32toh(a->type), vlen = 0;
		const uint8_t *v = NULL;
		int slot = -1;

		if (ntfs_attr_fault(a, off, 0, why) != NTFS_AF_NONE)
			continue;
		if (!a->non_resident)
			v = ntfs_attr_value(a, &vlen);
		if (t == NTFS_AT_STANDARD_INFORMATION && vlen >= 72) {
			uint32_t id;

			memcpy(&id, v + offsetof(struct ntfs_standard_information,
						 security_id), 4);
			k->secid = le32toh(id);
		} else if (recno == NTFS_FILE_VOLUME && t == NTFS_AT_VOLUME_NAME &&
			   v && vlen <= sizeof(k->label) && !(vlen & 1)) {
			memcpy(k->label, v, vlen);
			k->label_len = vlen / 2;
		} else if (recno == NTFS_FILE_VOLUME &&
			   t == NTFS_AT_VOLUME_INFORMATION && v &&
			   vlen >= sizeof(struct ntfs_volume_information)) {
			struct ntfs_volume_information vi;

			memcpy(&vi, v, sizeof(vi));
			k->vflags = le16toh(vi.flags);
			/* the versions NTFS has had: 1.2 (NT 4), 3.0, 3.1 */
			if ((vi.major_ver == 1 && vi.minor_ver == 2) ||
			    (vi.major_ver == 3 && vi.minor_ver <= 1)) {
				k->major = vi.major_ver;
				k->minor = vi.minor_ver;
			}
		} else if (recno == NTFS_FILE_BADCLUS && t == NTFS_AT_DATA &&
			   a->non_resident && named(a, NAME_BAD, 4)) {
			struct ntfs_attr_nonresident nr;
			struct ntfs_run *runs = NULL;

			memcpy(&nr, a, sizeof(nr));
			if (!nr.lowest_vcn &&
			    ntfs_attr_runs(a, c->vol.boot.g.nr_clusters, &runs, why) > 0)
				slot = 0;
			free(runs);
		} else if (recno == NTFS_FILE_UPCASE && t == NTFS_AT_DATA &&
			   named(a, NAME_INFO, 5)) {
			slot = 0;
		}
		if (slot >= 0 && !k->attr[slot] && (k->attr[slot] = malloc(len))) {
			memcpy(k->attr[slot], a, len);
			k->len[slot] = len;
		}
	}
	free(copy);
}

int ntfs_sysrec_lost(struct ntfs_check *c, uint64_t recno, const uint8_t *rec,
		     const char *obj, const char *why)
{
	static const char *const what[NTFS_FILE_EXTEND + 1] = {
		[NTFS_FILE_MFTMIRR] = ", pointing at the verified mirror",
		[NTFS_FILE_LOGFILE] = ", the journal empty in free clusters",
		[NTFS_FILE_VOLUME] = ", keeping its name, flags and version where readable",
		[NTFS_FILE_ATTRDEF] = ", the standard attribute table in free clusters",
		[NTFS_FILE_BITMAP] = ", the computed cluster map in free clusters",
		[NTFS_FILE_BOOT] = ", pointing at the boot sectors",
		[NTFS_FILE_BADCLUS] = ", keeping its $Bad stream where readable",
		[NTFS_FILE_SECURE] = ", mkfs.ntfs's security descriptors in free clusters (files with other ids get the default one)",
		[NTFS_FILE_UPCASE] = ", the standard upper case table in free clusters",
		[NTFS_FILE_EXTEND] = ", its index rebuilt from its files' names",
	};
	struct ntfs_sysrec *s = c->sysrec;

	if (!ntfs_sysfile_buildable((uint32_t)recno) ||
	    (recno == NTFS_FILE_MFTMIRR && !c->geo.mirr_ok))
		return -1;
	if (!fsf_fix_ask(&c->fix, &PR_SYSTEM_RECORD_REMADE, obj, why, what[recno]))
		return -2;
	if (!s && !(s = c->sysrec = calloc(1, sizeof(*s)))) {
		fsf_fix_failed(&c->fix);
		return -2;
	}
	s->pending |= (uint16_t)(1u << recno);
	salvage_keep(c, recno, rec, &s->k[recno]);
	return 0;
}

int ntfs_sysrec_unused(struct ntfs_check *c, uint64_t recno, uint8_t *rec,
		       const char *obj)
{
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	struct ntfs_mft_record m;
	char why[NTFS_WHY];
	static const uint8_t i30[8] = { '$', 0, 'I', 0, '3', 0, '0', 0 };
	bool si = false, named = false, dir = false;
	uint16_t flags;

	memcpy(&m, rec, sizeof(m));
	if (le16toh(m.h.usa_ofs) >= 0x30 && le32toh(m.mft_record_number) != (uint32_t)recno)
		return -1;
	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1) {
		uint32_t len;
		const uint8_t *v;
		uint64_t parent;

		si |= le32toh(a->type) == NTFS_AT_STANDARD_INFORMATION;
		/* the root and $Extend: their flag goes with the in-use one */
		dir |= le32toh(a->type) == NTFS_AT_INDEX_ROOT && a->name_length == 4 &&
		       !memcmp((const uint8_t *)a + le16toh(a->name_offset), i30, 8);
		if (le32toh(a->type) != NTFS_AT_FILE_NAME || a->non_resident)
			continue;
		v = ntfs_attr_value(a, &len);
		if (!v || len < sizeof(struct ntfs_file_name))
			continue;
		memcpy(&parent, v, sizeof(parent));
		named |= (le64toh(parent) & 0xffffffffffffULL) == NTFS_FILE_ROOT;
	}
	if (!si || !named)
		return -1;
	if (fsf_fix_ask(&c->fix, &PR_SYSTEM_FILE_UNUSED, obj)) {
		flags = (uint16_t)(le16toh(m.flags) | NTFS_MFT_IN_USE);
		m.flags = htole16(dir ? flags | NTFS_MFT_IS_DIRECTORY : flags);
		memcpy(rec, &m, sizeof(m));
		if (ntfs_check_write_record(c, recno, rec))
			fsf_fix_failed(&c->fix);
	}
	return 0;
}

/* N free clusters in a row (none past the device's end), searched from
 * the middle of the volume, where mkfs puts the system files; -1: none. */
static int64_t find_free(struct ntfs_check *c, uint64_t n)
{
	uint64_t nr = c->vol.boot.g.nr_clusters, mid;

	/* records lost past a truncated device's end may own any cluster;
	 * a set that ran out of memory does not know every cluster in use */
	if (c->geo.lost_records || c->cluster_used.nomem)
		return -1;
	if (c->geo.dev_clusters && c->geo.dev_clusters < nr)
		nr = c->geo.dev_clusters;
	mid = nr / 2;
	for (int pass = 0; pass < 2; pass++) {
		uint64_t from = pass ? 1 : mid, to = pass ? mid + n : nr, run = 0;

		if (to > nr)
			to = nr;
		for (uint64_t l = from; l < to; l++) {
			run = cset_get(&c->cluster_used, l) ? 0 : run + 1;
			if (run == n)
				return (int64_t)(l + 1 - n);
		}
	}
	return -1;
}

/* The content of system file RECNO at byte POS (LEN bytes into BUF). */
static void content(uint32_t recno, uint64_t pos, uint8_t *buf, uint32_t len,
		    const uint8_t *table, uint64_t tlen)
{
	if (recno == NTFS_FILE_LOGFILE) {
		memset(buf, 0xff, len);
		return;
	}
	memset(buf, 0, len);
	if (table && pos < tlen)
		memcpy(buf, table + pos, tlen - pos < len ? tlen - pos : len);
}

/* The standard upper case table, little-endian. */
static uint8_t *upcase_le(void)
{
	uint16_t *t = malloc(NTFS_UPCASE_LEN * 2);

	if (!t)
		return NULL;
	ntfs_upcase_build(t);
	for (uint32_t i = 0; i < NTFS_UPCASE_LEN; i++)
		t[i] = htole16(t[i]);
	return (uint8_t *)t;
}

static int write_content(struct ntfs_check *c, uint32_t recno, int64_t lcn,
			 uint64_t clusters)
{
	uint32_t cs = c->vol.boot.g.cluster_size;
	uint64_t total = clusters * cs, tlen = 0;
	uint8_t *buf = malloc(CHUNK), *table = NULL;
	int ret = 0;

	if (recno == NTFS_FILE_ATTRDEF && (table = malloc(NTFS_SYSFILE_ATTRDEF_BYTES))) {
		ntfs_sysfile_attrdef(table);
		tlen = NTFS_SYSFILE_ATTRDEF_BYTES;
	} else if (recno == NTFS_FILE_UPCASE && (table = upcase_le())) {
		tlen = NTFS_UPCASE_LEN * 2;
	} else if (recno == NTFS_FILE_SECURE &&
		   (table = malloc(tlen = ntfs_sysfile_size(recno, &c->vol.boot.g, 0)))) {
		ntfs_sysfile_sds(table);
	}
	if (!buf || ((recno == NTFS_FILE_ATTRDEF || recno == NTFS_FILE_UPCASE ||
		      recno == NTFS_FILE_SECURE) && !table))
		ret = -ENOMEM;
	for (uint64_t pos = 0; pos < total && !ret; pos += CHUNK) {
		uint32_t len = total - pos < CHUNK ? (uint32_t)(total - pos) : CHUNK;

		content(recno, pos, buf, len, table, tlen);
		ret = fsf_dev_pwrite(&c->dev, buf, len, (uint64_t)lcn * cs + pos);
	}
	free(buf);
	free(table);
	return ret;
}

static void claim(struct ntfs_check *c, int64_t lcn, uint64_t n)
{
	for (uint64_t k = 0; lcn >= 0 && k < n; k++) {
		if (cset_get(&c->cluster_used, (uint64_t)lcn + k))
			c->crosslinked++;
		cset_set(&c->cluster_used, (uint64_t)lcn + k);
	}
}

/* $Volume's version: the old record's when it was readable, else what
 * $MFT's record header says of the format (3.1 added the record number
 * before the update sequence array: at 0x30; at 0x2a it is 3.0). */
static void volume_version(struct ntfs_check *c, const struct keep *k,
			   struct ntfs_sysfile *sf)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct ntfs_mft_record m;
	uint8_t *rec;

	if (k->major) {
		sf->major_ver = k->major;
		sf->minor_ver = k->minor;
		return;
	}
	rec = malloc(rs);
	if (rec && !ntfs_vol_read_record(&c->vol, NTFS_FILE_MFT, rec)) {
		memcpy(&m, rec, sizeof(m));
		if (!memcmp(rec, "FILE", 4) && le16toh(m.h.usa_ofs) < 0x30) {
			sf->major_ver = 3;
			sf->minor_ver = 0;
		}
	}
	free(rec);
}

/* Make record RECNO again; 0, or -1 with WHY. */
static int remake(struct ntfs_check *c, uint32_t recno, struct keep *k,
		  uint8_t *rec, char *why)
{
	const struct ntfs_boot_info *b = &c->vol.boot;
	uint32_t cs = b->g.cluster_size;
	struct ntfs_sysfile sf;
	uint64_t size = ntfs_sysfile_size(recno, &b->g, c->mirr_records);
	uint64_t clusters = (size + cs - 1) / cs;
	int64_t lcn = -1;

	memset(&sf, 0, sizeof(sf));
	sf.g = b->g;
	sf.now = ntfs_time((int64_t)time(NULL));
	sf.secid = k->secid;
	sf.label = k->label;
	sf.label_len = k->label_len;
	sf.volume_flags = k->vflags;
	if (recno == NTFS_FILE_VOLUME)
		volume_version(c, k, &sf);
	for (int i = 0; i < 2; i++) {
		sf.keep[i] = k->attr[i];
		sf.keep_len[i] = k->len[i];
	}
	if (size) {
		if (recno == NTFS_FILE_MFTMIRR)
			lcn = b->mftmirr_lcn;
		else if (recno == NTFS_FILE_BOOT)
			lcn = 0;
		else
			lcn = find_free(c, clusters);
		if (lcn < 0) {
			snprintf(why, NTFS_WHY, "no %llu free clusters in a row for its content",
				 (unsigned long long)clusters);
			return -1;
		}
		sf.data.lcn = lcn;
		sf.data.len = clusters;
		sf.data_size = size;
	}
	if (ntfs_sysfile_record(recno, &sf, rec)) {
		snprintf(why, NTFS_WHY, "it does not fit in a %u-byte record",
			 b->g.mft_record_size);
		return -1;
	}
	/* the content first: a record never names what is not there */
	if (size && recno != NTFS_FILE_MFTMIRR && recno != NTFS_FILE_BOOT &&
	    write_content(c, recno, lcn, clusters))
		fsf_fix_failed(&c->fix);
	claim(c, lcn, size ? clusters : 0);
	if (k->attr[0] && recno == NTFS_FILE_BADCLUS) {
		struct ntfs_run *runs = NULL;
		long n = ntfs_attr_runs((const void *)k->attr[0], b->g.nr_clusters,
					&runs, why);

		for (long i = 0; i < n; i++)
			claim(c, runs[i].lcn, runs[i].len);
		free(runs);
	}
	if (ntfs_check_write_record(c, recno, rec))
		fsf_fix_failed(&c->fix);
	cset_set(&c->record_used, recno);
	bit_clear(c->record_lost, recno);
	c->names_inexact = true;	/* its name: counted again in pass 3 */
	if (recno == NTFS_FILE_EXTEND && rset_set(&c->record_dir, recno))
		return -1;
	if (recno == NTFS_FILE_VOLUME) {
		c->volume_flags = k->vflags;
		c->volume_flags_found = true;
	}
	return 0;
}

/* $UpCase's table against the standard one (see the top). */
static void check_upcase(struct ntfs_check *c, uint8_t *rec)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct ntfs_run *runs = NULL;
	uint8_t *data = NULL, *std = NULL;
	uint64_t len = 0;
	uint32_t bad = 0, first = 0, judged = NTFS_UPCASE_LEN;
	char why[NTFS_WHY];
	long n = 0;

	if (!cset_get(&c->record_used, NTFS_FILE_UPCASE) ||
	    ntfs_vol_read_record(&c->vol, NTFS_FILE_UPCASE, rec) ||
	    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK ||
	    ntfs_vol_read_attr(&c->vol, rec, NTFS_AT_DATA, &data, &len, &runs, &n) ||
	    len != 2ull * NTFS_UPCASE_LEN)
		goto out;
	/* $UpCase:$Info: a table of Windows 8 or later, which may upcase
	 * characters of newer Unicode versions than ours: only its ASCII
	 * half is judged */
	{
		struct ntfs_attr_cursor cur;
		const struct ntfs_attr_header *a;

		ntfs_attr_cursor_init(&cur, rec);
		while (ntfs_attr_next(&cur, &a, why) == 1)
			if (le32toh(a->type) == NTFS_AT_DATA && named(a, NAME_INFO, 5))
				judged = 0x80;
	}
	/* judged without a second 128 KiB table (peak memory) */
	bad = ntfs_upcase_judge(data, judged, &first);
	if (bad == UINT32_MAX) {
		fsf_fix_failed(&c->fix);
		goto out;
	}
	/* a table in a hole reads as zeros and cannot be written there */
	if (bad && fsf_fix_ask(&c->fix, &PR_UPCASE_CONTENT, "$UpCase", bad, first)) {
		if (!ntfs_runs_mapped(runs, n, c->vol.boot.g.cluster_size, 0, len) ||
		    !(std = upcase_le()) || ntfs_vol_write_runs(&c->vol, runs, n, std, len))
			fsf_fix_failed(&c->fix);
	} else if (bad && c->fix.mode == FSF_MODE_NO &&
		   ntfs_runs_mapped(runs, n, c->vol.boot.g.cluster_size, 0, len)) {
		/* -n: the rest of the check collates names as -a leaves
		 * the table (the standard one), not by the damaged one */
		c->upcase_assumed = true;
	}
out:
	free(data);
	free(runs);
	free(std);
}

/* $AttrDef's table: one that does not parse or lacks the core types (a
 * cluster of zeros, of 0xff) gets the standard table, zeros after it;
 * one too small for it, or in a hole, is left, its fix failed. */
static void check_attrdef(struct ntfs_check *c, uint8_t *rec)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct ntfs_run *runs = NULL;
	uint8_t *data = NULL;
	uint64_t len = 0;
	char why[NTFS_WHY];
	long n = 0;

	if (!cset_get(&c->record_used, NTFS_FILE_ATTRDEF) ||
	    ntfs_vol_read_record(&c->vol, NTFS_FILE_ATTRDEF, rec) ||
	    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK ||
	    ntfs_vol_read_attr(&c->vol, rec, NTFS_AT_DATA, &data, &len, &runs, &n) ||
	    !n || ntfs_attrdef_usable(data, len))
		goto out;
	if (len < NTFS_SYSFILE_ATTRDEF_BYTES ||
	    !ntfs_runs_mapped(runs, n, c->vol.boot.g.cluster_size, 0, len)) {
		fsf_fix_ask(&c->fix, &PR_ATTRDEF_UNWRITABLE, "$AttrDef", (unsigned long long)len,
			    len < NTFS_SYSFILE_ATTRDEF_BYTES ? "too small for it" :
			    "its data is a hole");
		goto out;
	}
	if (fsf_fix_ask(&c->fix, &PR_ATTRDEF_CONTENT, "$AttrDef", (unsigned long long)len)) {
		memset(data, 0, len);
		ntfs_sysfile_attrdef(data);
		if (ntfs_vol_write_runs(&c->vol, runs, n, data, len))
			fsf_fix_failed(&c->fix);
	}
out:
	free(data);
	free(runs);
}

int ntfs_sysrec_remake(struct ntfs_check *c)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct ntfs_sysrec *s = c->sysrec;
	uint8_t *rec = malloc(rs);
	int ret = 0;

	if (!rec)
		return -ENOMEM;
	for (uint32_t r = 0; s && r <= NTFS_FILE_EXTEND && !ret; r++) {
		char why[NTFS_WHY], obj[48];

		if (!(s->pending & (1u << r)))
			continue;
		snprintf(obj, sizeof(obj), "MFT record %u", r);
		if (remake(c, r, &s->k[r], rec, why)) {
			fsf_fix_ask(&c->fix, &PR_SYSTEM_REMAKE_FAILED, obj, why);
			ret = -EUCLEAN;
		}
	}
	c->tables_unchecked = !ret;
	free(rec);
	return ret;
}

void ntfs_check_system_tables(struct ntfs_check *c)
{
	struct ntfs_sysrec *s = c->sysrec;
	uint8_t *rec;

	if (!c->tables_unchecked || !(rec = malloc(c->vol.boot.g.mft_record_size)))
		return;
	c->tables_unchecked = false;
	if (!(s && s->pending & (1u << NTFS_FILE_UPCASE)))
		check_upcase(c, rec);
	if (!(s && s->pending & (1u << NTFS_FILE_ATTRDEF)))
		check_attrdef(c, rec);
	free(rec);
}

void ntfs_sysrec_free(struct ntfs_check *c)
{
	if (!c->sysrec)
		return;
	for (int r = 0; r <= NTFS_FILE_EXTEND; r++)
		for (int i = 0; i < 2; i++)
			free(c->sysrec->k[r].attr[i]);
	free(c->sysrec);
	c->sysrec = NULL;
}

void ntfs_load_attrdef(struct ntfs_check *c, uint8_t *rec)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct ntfs_run *runs = NULL;
	uint8_t *data = NULL;
	uint64_t len = 0;
	char why[NTFS_WHY];
	bool damaged;
	long n = 0;

	if (ntfs_vol_read_record(&c->vol, NTFS_FILE_ATTRDEF, rec) ||
	    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK ||
	    ntfs_vol_read_attr(&c->vol, rec, NTFS_AT_DATA, &data, &len, &runs, &n)) {
		free(data);
		data = NULL;
		len = 0;
	}
	c->nattr_types = ntfs_attrdef_types(data, len, c->attr_types, &damaged);
	if (damaged && c->verbose)
		fsf_info(c->log, "$AttrDef does not parse: the attribute types of the standard table are the defined ones");
	free(data);
	free(runs);
}
