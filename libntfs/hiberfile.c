// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libntfs: is Windows hibernated on a volume (ntfs/hiberfile.h)?  The
 * header of the root's hiberfil.sys, read from the boot sector's geometry
 * through a private volume view, without writing.
 */
#include "config.h"

#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/attrlist.h"
#include "ntfs/btree.h"
#include "ntfs/file_attrs.h"
#include "ntfs/format.h"
#include "ntfs/hiberfile.h"
#include "ntfs/index_read.h"
#include "ntfs/repair.h"
#include "ntfs/volume_io.h"

/* Record RECNO of V's $MFT made usable as pass 1 would make it, in the
 * probe's own buffer REC only (ntfs_record_usable): 0, or -1. */
static int read_usable(struct ntfs_vol *v, uint64_t recno, uint8_t *rec)
{
	return ntfs_vol_read_record(v, recno, rec) ||
	       ntfs_record_usable(rec, v->boot.g.mft_record_size) ? -1 : 0;
}

/* $MFT's runs and record count from the copy of its record 0 at cluster
 * LCN: 0, or -1 when that record or its $DATA is not usable. */
static int open_mft_at(struct ntfs_vol *v, uint8_t *rec, int64_t lcn)
{
	uint32_t rs = v->boot.g.mft_record_size, cs = v->boot.g.cluster_size;
	const struct ntfs_attr_header *a;
	struct ntfs_attr_nonresident n;
	uint64_t mapped = 0, size;
	char why[NTFS_WHY];
	long nruns;

	if (lcn <= 0 || fsf_dev_pread(v->dev, rec, rs, (uint64_t)lcn * cs) ||
	    ntfs_record_usable(rec, rs))
		return -1;
	a = ntfs_attr_named(rec, NTFS_AT_DATA, "");
	if (!a || !a->non_resident || le32toh(a->length) < sizeof(n))
		return -1;
	memcpy(&n, a, sizeof(n));
	if (n.lowest_vcn)
		return -1;
	nruns = ntfs_attr_runs(a, v->boot.g.nr_clusters, &v->mft_runs, why);
	if (nruns < 0) {
		v->mft_runs = NULL;
		return -1;
	}
	v->nmft_runs = nruns;
	for (long i = 0; i < nruns; i++)
		mapped += v->mft_runs[i].len;
	/* the records the first extent's runs map, at most the data size:
	 * a later extent is not followed (records there read as outside) */
	mapped = mapped * cs / rs;
	size = le64toh((uint64_t)n.data_size) / rs;
	v->mft_records = size < mapped ? size : mapped;
	return 0;
}

/* $MFT's runs from its record 0 as the boot sector places it, and when
 * that is not usable from $MFTMirr's copy, as pass 1 falls back to it. */
static int open_mft(struct ntfs_vol *v, uint8_t *rec)
{
	if (!open_mft_at(v, rec, v->boot.mft_lcn))
		return 0;
	free(v->mft_runs);
	v->mft_runs = NULL;
	return open_mft_at(v, rec, v->boot.mftmirr_lcn);
}

struct hiber_find {
	uint64_t mref;
	bool found;
};

/* Is the UTF-16LE NAME of LEN units "hiberfil.sys" in any case (Windows
 * names it so; its DOS name is the same letters in capitals)? */
static bool is_hiberfil(const uint8_t *name, unsigned int len)
{
	static const char want[] = "hiberfil.sys";

	if (len != sizeof(want) - 1)
		return false;
	for (size_t k = 0; k < sizeof(want) - 1; k++) {
		uint8_t lo = name[2 * k];

		if (name[2 * k + 1])
			return false;
		if (lo >= 'A' && lo <= 'Z')
			lo += 'a' - 'A';
		if (lo != (uint8_t)want[k])
			return false;
	}
	return true;
}

static int on_entry(void *arg, const struct ntfs_ie_view *ie)
{
	struct hiber_find *f = arg;

	if (!is_hiberfil(ie->name, ie->name_len))
		return 0;
	f->mref = ie->mref;
	f->found = true;
	return 1;
}

/* hiberfil.sys's reference in the root's $I30, REC the root's record:
 * true with *MREF; *DAMAGED when the root's record or index could not be
 * read whole (the name may be there all the same). */
static bool find_hiberfile(struct ntfs_vol *v, uint8_t *rec, uint64_t *mref,
			   bool *damaged)
{
	struct hiber_find f = { 0 };
	struct ntfs_bt_ops ops = { .entry = on_entry };
	struct ntfs_bt t = { .type = NTFS_AT_FILE_NAME,
			     .collation = NTFS_COLLATION_FILE_NAME, .arg = &f };
	struct ntfs_index ix;

	*damaged = true;
	if (read_usable(v, NTFS_FILE_ROOT, rec))
		return false;
	if (!ntfs_vol_index_open(v, NULL, NULL, NTFS_FILE_ROOT, rec, "$I30", &ix)) {
		ntfs_index_bt(&ix, &t, &ops);
		*damaged = ntfs_bt_walk(&t) || t.faults;
		ntfs_bt_free(&t);
	}
	ntfs_index_close(&ix);
	*mref = f.mref;
	return f.found;
}

/* With the root's index damaged, the base record of a file in the root
 * named hiberfil.sys (a $FILE_NAME whose parent is record 5), found by
 * reading $MFT from record 16 on, as pass 1 would read each record, up to
 * the first such record: true with *MREF.  At most one read of each
 * record (through the chunk cache), on a damaged volume only. */
static bool scan_hiberfile(struct ntfs_vol *v, uint8_t *rec, uint64_t *mref)
{
	for (uint64_t i = NTFS_FILE_FIRST_USER; i < v->mft_records; i++) {
		const struct ntfs_attr_header *a;
		struct ntfs_attr_cursor cur;
		struct ntfs_mft_record m;
		struct ntfs_file_name fn;
		const uint8_t *val;
		char why[NTFS_WHY];

		if (read_usable(v, i, rec))
			continue;
		memcpy(&m, rec, sizeof(m));
		if (!(le16toh(m.flags) & NTFS_MFT_IN_USE) ||
		    (le16toh(m.flags) & NTFS_MFT_IS_DIRECTORY) ||
		    !ntfs_record_is_base(rec))
			continue;
		ntfs_attr_cursor_init(&cur, rec);
		while (ntfs_attr_next(&cur, &a, why) == 1) {
			if (le32toh(a->type) != NTFS_AT_FILE_NAME ||
			    !(val = ntfs_file_name_of(a, &fn)))
				continue;
			if ((le64toh(fn.parent_directory) & 0xffffffffffffULL) ==
			    NTFS_FILE_ROOT &&
			    is_hiberfil(val + sizeof(fn), fn.name_length)) {
				*mref = i | (uint64_t)le16toh(m.sequence_number) << 48;
				return true;
			}
		}
	}
	return false;
}

/* The first extent (VCN 0) of the unnamed $DATA in usable record REC,
 * or NULL. */
static const struct ntfs_attr_header *data_at_zero(const uint8_t *rec)
{
	const struct ntfs_attr_header *a;
	struct ntfs_attr_nonresident n;
	struct ntfs_attr_cursor cur;
	char why[NTFS_WHY];

	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1) {
		if (le32toh(a->type) != NTFS_AT_DATA || a->name_length)
			continue;
		if (!a->non_resident)
			return a;
		if (le32toh(a->length) < sizeof(n))
			continue;
		memcpy(&n, a, sizeof(n));
		if (!n.lowest_vcn)
			return a;
	}
	return NULL;
}

/* The first extent of the unnamed $DATA of file RECNO, REC its usable
 * base record: in REC, or in the extension record its attribute list
 * names for VCN 0 (read into EXT and made usable as the others: a torn
 * one too); the later extents (a large hiberfil.sys is fragmented) are
 * not needed for the header.  NULL when there is none such. */
static const struct ntfs_attr_header *first_data(struct ntfs_vol *v, uint8_t *rec,
						 uint64_t recno, uint8_t *ext)
{
	const struct ntfs_attr_header *a = data_at_zero(rec);
	struct ntfs_run *runs = NULL;
	struct ntfs_mft_record m;
	struct ntfs_al_entry e;
	uint8_t *list = NULL;
	uint64_t len, x = 0;
	uint32_t off = 0;
	char why[NTFS_WHY];
	long nruns;

	if (a || !ntfs_attr_named(rec, NTFS_AT_ATTRIBUTE_LIST, ""))
		return a;
	if (ntfs_vol_read_attr(v, rec, NTFS_AT_ATTRIBUTE_LIST, &list, &len, &runs,
			       &nruns) || len > UINT32_MAX)
		goto out;
	while (!x && ntfs_al_next(list, (uint32_t)len, &off, &e, why) == 1)
		if (e.type == NTFS_AT_DATA && !e.name_len && !e.lowest_vcn)
			x = e.mref & 0xffffffffffffULL;
	if (!x || x == recno || x >= v->mft_records || read_usable(v, x, ext))
		goto out;
	memcpy(&m, ext, sizeof(m));
	if ((le16toh(m.flags) & NTFS_MFT_IN_USE) &&
	    (le64toh(m.base_mft_record) & 0xffffffffffffULL) == recno)
		a = data_at_zero(ext);
out:
	free(list);
	free(runs);
	return a;
}

/* The first 4 bytes of the unnamed $DATA of file RECNO (REC its record,
 * usable; EXT record-sized scratch): 0, or -1 when they cannot be read. */
static int read_head(struct ntfs_vol *v, uint8_t *rec, uint64_t recno,
		     uint8_t *ext, uint8_t head[4])
{
	const struct ntfs_attr_header *a;
	struct ntfs_attr_nonresident n;
	struct ntfs_run *runs = NULL;
	char why[NTFS_WHY];
	long nruns;
	int r;

	a = first_data(v, rec, recno, ext);
	if (!a)
		return -1;
	if (!a->non_resident) {
		uint32_t len;
		const uint8_t *val = ntfs_attr_value(a, &len);

		if (!val || len < 4)
			return -1;
		memcpy(head, val, 4);
		return 0;
	}
	if (le32toh(a->length) < sizeof(n) ||
	    (le16toh(a->flags) & (NTFS_ATTR_COMPRESSION_MASK | NTFS_ATTR_ENCRYPTED)))
		return -1;
	memcpy(&n, a, sizeof(n));
	if (le64toh((uint64_t)n.data_size) < 4)
		return -1;
	if (le64toh((uint64_t)n.initialized_size) < 4) {
		/* never written there: reads as zeros */
		memset(head, 0, 4);
		return 0;
	}
	nruns = ntfs_attr_runs(a, v->boot.g.nr_clusters, &runs, why);
	if (nruns < 0)
		return -1;
	r = ntfs_vol_runs_pread(v, runs, nruns, 0, 4, head);
	free(runs);
	return r ? -1 : 0;
}

/* The probe from one boot sector's geometry. */
static void probe(struct fsf_dev *dev, const struct ntfs_boot_info *boot,
		  struct ntfs_hiber *h)
{
	struct ntfs_vol v = { .dev = dev, .boot = *boot };
	uint32_t rs = boot->g.mft_record_size;
	uint8_t *rec = malloc(rs), *ext = malloc(rs);
	struct ntfs_mft_record m;
	uint64_t mref, seq;
	bool damaged;

	memset(h, 0, sizeof(*h));
	h->state = NTFS_HIBER_NO_FILE;
	if (!rec || !ext || open_mft(&v, rec))
		goto out;
	if (!find_hiberfile(&v, rec, &mref, &damaged) &&
	    (!damaged || !scan_hiberfile(&v, rec, &mref)))
		goto out;
	h->recno = mref & 0xffffffffffffULL;
	seq = mref >> 48;
	if (h->recno < NTFS_FILE_FIRST_USER || read_usable(&v, h->recno, rec))
		goto out;
	memcpy(&m, rec, sizeof(m));
	if (!(le16toh(m.flags) & NTFS_MFT_IN_USE) ||
	    (le16toh(m.flags) & NTFS_MFT_IS_DIRECTORY) || !ntfs_record_is_base(rec) ||
	    (seq && le16toh(m.sequence_number) != seq))
		goto out;
	h->state = NTFS_HIBER_UNREADABLE;
	if (read_head(&v, rec, h->recno, ext, h->head))
		goto out;
	h->state = NTFS_HIBER_CLEAR;
	for (int i = 0; i < 4; i++)
		if ((h->head[i] | 0x20) != (uint8_t)"hibr"[i])
			goto out;
	h->state = NTFS_HIBER_HIBERNATED;
out:
	free(v.mft_runs);
	ntfs_vol_cache_free(&v);
	free(rec);
	free(ext);
}

bool ntfs_hibernated(struct fsf_dev *dev, struct ntfs_hiber *h)
{
	/* the primary boot sector, then a backup in the device's last
	 * sector (512 or 4096 bytes), until one's geometry leads to
	 * hiberfil.sys (a wrong $MFT location leads nowhere) */
	const uint64_t at[3] = { 0, dev->size - 512, dev->size - 4096 };
	struct ntfs_hiber one;
	uint8_t sec[512];
	char why[NTFS_WHY];

	memset(h, 0, sizeof(*h));
	for (int i = 0; i < 3; i++) {
		struct ntfs_boot_info boot;

		if ((i && dev->size < 512 * (i == 1 ? 2u : 9u)) ||
		    fsf_dev_pread(dev, sec, 512, at[i]) ||
		    ntfs_boot_check((const void *)sec, 0, &boot, why))
			continue;
		probe(dev, &boot, &one);
		if (one.state > h->state)
			*h = one;
		if (one.state >= NTFS_HIBER_UNREADABLE)
			break;
	}
	return h->state == NTFS_HIBER_HIBERNATED;
}
