// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Record 0 and the records $MFTMirr copies (include/ntfs/mft_mirror.h):
 * read and written as on disk at the clusters the boot sector names,
 * judged usable as system records, compared with their copies.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsforge/dev.h"
#include "ntfs/attrlist.h"
#include "ntfs/mft_mirror.h"
#include "ntfs/sysfile.h"
#include "ntfs/volume_io.h"

uint64_t ntfs_vol_mirror_offset(const struct ntfs_vol *v, uint64_t recno)
{
	const struct ntfs_boot_info *b = &v->boot;

	return (uint64_t)b->mftmirr_lcn * b->g.cluster_size +
	       recno * b->g.mft_record_size;
}

int ntfs_vol_read_mirror(struct ntfs_vol *v, uint64_t recno, uint8_t *buf)
{
	return fsf_dev_pread(v->dev, buf, v->boot.g.mft_record_size,
			     ntfs_vol_mirror_offset(v, recno));
}

int ntfs_vol_read_record0(struct ntfs_vol *v, uint8_t *buf)
{
	const struct ntfs_boot_info *b = &v->boot;

	return fsf_dev_pread(v->dev, buf, b->g.mft_record_size,
			     (uint64_t)b->mft_lcn * b->g.cluster_size);
}

int ntfs_vol_write_record0(struct ntfs_vol *v, const uint8_t *raw)
{
	const struct ntfs_boot_info *b = &v->boot;

	return fsf_dev_pwrite(v->dev, raw, b->g.mft_record_size,
			      (uint64_t)b->mft_lcn * b->g.cluster_size);
}

int ntfs_vol_write_record_raw(struct ntfs_vol *v, uint64_t recno,
			      const uint8_t *raw)
{
	return fsf_dev_pwrite(v->dev, raw, v->boot.g.mft_record_size,
			      ntfs_vol_record_offset(v, recno));
}

/* Does resident attribute list A name an unnamed attribute TYPE? */
static bool list_names(const struct ntfs_attr_header *a, uint32_t type)
{
	struct ntfs_al_entry e;
	char why[NTFS_WHY];
	uint32_t len, off = 0;
	const uint8_t *v;

	if (a->non_resident)
		return false;	/* not read here: record 0's is resident */
	v = ntfs_attr_value(a, &len);
	while (ntfs_al_next(v, len, &off, &e, why) == 1)
		if (e.type == type && !e.name_len && !e.lowest_vcn)
			return true;
	return false;
}

/*
 * A system record that $MFTMirr can vouch for must be more than a valid
 * header: its attributes must parse and it must have what the driver needs
 * ($STANDARD_INFORMATION, $FILE_NAME; record 0 also $DATA with a runlist
 * and $BITMAP).  Returns 0 or -1 with WHY.
 */
int ntfs_sysrec_usable(const struct ntfs_vol *v, uint8_t *rec, uint64_t recno,
		       char *why)
{
	uint32_t rs = v->boot.g.mft_record_size;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	bool si = false, fn = false, data = false, bitmap = false, list = false;
	const struct ntfs_attr_header *la = NULL;
	int r;

	struct ntfs_mft_record m;

	if (ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		return -1;
	/* system files are base records */
	memcpy(&m, rec, sizeof(m));
	if (le64toh(m.base_mft_record)) {
		snprintf(why, NTFS_WHY, "claims to extend record %llu",
			 (unsigned long long)(le64toh(m.base_mft_record) & 0xffffffffffffULL));
		return -1;
	}
	if (!(le16toh(m.flags) & NTFS_MFT_IN_USE)) {
		snprintf(why, NTFS_WHY, "not marked in use");
		return -1;
	}
	ntfs_attr_cursor_init(&cur, rec);
	while ((r = ntfs_attr_next(&cur, &a, why)) == 1) {
		uint32_t type = le32toh(a->type);

		si |= type == NTFS_AT_STANDARD_INFORMATION;
		if (type == NTFS_AT_ATTRIBUTE_LIST) {
			list = true;
			la = a;
		}
		fn |= type == NTFS_AT_FILE_NAME;
		bitmap |= type == NTFS_AT_BITMAP && !a->name_length;
		if (type == NTFS_AT_DATA && !a->name_length && a->non_resident) {
			struct ntfs_run *runs;
			long n = ntfs_attr_runs(a, v->boot.g.nr_clusters,
						&runs, why);

			free(runs);
			if (n <= 0)
				return -1;
			data = true;
		}
	}
	if (r < 0)
		return -1;
	/* with an attribute list (a fragmented $MFT: ntfs-3g moves
	 * attributes out when record 0 fills) the name may be elsewhere */
	if (!si || (!fn && !list)) {
		snprintf(why, NTFS_WHY, "no %s attribute",
			 si ? "$FILE_NAME" : "$STANDARD_INFORMATION");
		return -1;
	}
	/* Linux's ntfs driver moves $BITMAP out too (locate_mft finds it) */
	if (!bitmap && la)
		bitmap = list_names(la, NTFS_AT_BITMAP);
	if (recno == NTFS_FILE_MFT && (!data || !bitmap)) {
		snprintf(why, NTFS_WHY, "no usable %s attribute",
			 data ? "$BITMAP" : "$DATA");
		return -1;
	}
	return 0;
}

/* Is MIR, a usable $MFTMirr copy of record 0 that differs from REC
 * ($MFT's, usable), the newer one?  Only when the evidence is on disk:
 * neither has an attribute list, the mirror's $DATA runs are REC's with
 * the last one longer or more after it (the MFT grew; REC's write was
 * lost or an old copy of it written back), and the first record past
 * REC's runs, where the mirror's map it, is a FILE record in use
 * carrying that number.  *WHY says so. */
bool ntfs_mft_mirror_newer(struct ntfs_vol *v, const uint8_t *rec,
			   const uint8_t *mir, char *why)
{
	uint32_t rs = v->boot.g.mft_record_size, cs = v->boot.g.cluster_size;
	struct ntfs_run *pr = NULL, *mr = NULL;
	long pn = 0, mn = 0;
	uint64_t plen = 0, mlen = 0, off;
	uint8_t *top = malloc(rs);
	struct ntfs_mft_record m;
	char twhy[NTFS_WHY];
	bool newer = false;

	if (!top || !memcmp(rec, mir, rs) ||
	    ntfs_attr_find(rec, NTFS_AT_ATTRIBUTE_LIST) ||
	    ntfs_attr_find(mir, NTFS_AT_ATTRIBUTE_LIST) ||
	    ntfs_vol_attr_runs(v, rec, NTFS_AT_DATA, &plen, &pr, &pn) ||
	    ntfs_vol_attr_runs(v, mir, NTFS_AT_DATA, &mlen, &mr, &mn) ||
	    pn <= 0 || mn < pn || plen % rs || mlen <= plen)
		goto out;
	for (long i = 0; i < pn; i++)
		if (pr[i].lcn < 0 || mr[i].lcn != pr[i].lcn ||
		    (i < pn - 1 ? mr[i].len != pr[i].len : mr[i].len < pr[i].len))
			goto out;
	off = ntfs_runs_offset(mr, mn, cs, plen, rs);
	if (off == UINT64_MAX || fsf_dev_pread(v->dev, top, rs, off) ||
	    ntfs_record_check(top, rs, NTFS_MAGIC_FILE, twhy) != NTFS_REC_OK)
		goto out;
	memcpy(&m, top, sizeof(m));
	if (le16toh(m.h.usa_ofs) < sizeof(m) ||
	    le32toh(m.mft_record_number) != (uint32_t)(plen / rs) ||
	    !(le16toh(m.flags) & NTFS_MFT_IN_USE))
		goto out;
	snprintf(why, NTFS_WHY, "its runs end at record %llu, the copy's map %llu records, record %llu in use",
		 (unsigned long long)(plen / rs), (unsigned long long)(mlen / rs),
		 (unsigned long long)(plen / rs));
	newer = true;
out:
	free(pr);
	free(mr);
	free(top);
	return newer;
}

/* Do the two copies of a record (fixups removed) say the same?  Every
 * byte: ntfs-3g and the Linux driver compare the bytes in use when they
 * mount (the update sequence number included: a mirror whose USN differs
 * makes ntfs-3g refuse the volume), ntfsck the whole record, the slack
 * after the bytes in use too (writers copy the whole record). */
bool ntfs_rec_same(const uint8_t *a, const uint8_t *b, uint32_t rs)
{
	return !memcmp(a, b, rs);
}

/*
 * Is RAW (a record as on disk) a usable copy of mirrored record RECNO?
 * System files (0-11) must be usable system records; the rest of the
 * mirrored range (12-15: reserved, free or $MFT's extension records;
 * user files when a cluster holds more than 16 records) only a valid
 * record.  Checks a copy; 0 or -1 with WHY.
 */
int ntfs_mirrored_usable(const struct ntfs_vol *v, const uint8_t *raw,
			 uint64_t recno, char *why)
{
	uint32_t rs = v->boot.g.mft_record_size;
	uint8_t *copy = malloc(rs);
	int ret;

	if (!copy) {
		snprintf(why, NTFS_WHY, "out of memory");
		return -1;
	}
	memcpy(copy, raw, rs);
	if (recno <= NTFS_FILE_EXTEND)
		ret = ntfs_sysrec_usable(v, copy, recno, why);
	else
		ret = ntfs_record_check(copy, rs, NTFS_MAGIC_FILE, why) ==
		      NTFS_REC_OK ? 0 : -1;
	free(copy);
	return ret;
}

/* The record number a record's header gives (RECNO if it has none). */
uint64_t ntfs_rec_self_ref(const uint8_t *rec, uint64_t recno)
{
	struct ntfs_mft_record m;

	memcpy(&m, rec, sizeof(m));
	return le16toh(m.h.usa_ofs) >= 0x30 ? le32toh(m.mft_record_number) : recno;
}

