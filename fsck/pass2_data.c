// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 2: data attributes, record by record.  Compressed attributes must
 * use the one compression unit NTFS knows (16 clusters of at most 4 KiB),
 * and one with no unit and no compressed size field is plain (the
 * compressed flag is cleared);
 * the compressed size of a compressed or sparse attribute is what its
 * runs really hold (recomputed when the whole attribute is in one
 * extent); holes need the sparse or compressed flag; attributes that live
 * only in the record ($STANDARD_INFORMATION, $FILE_NAME, $OBJECT_ID, the
 * volume name and information, $INDEX_ROOT, $EA_INFORMATION) must be
 * resident and $INDEX_ALLOCATION must not be; a file has one $DATA stream
 * per name; a file's $STANDARD_INFORMATION says sparse, compressed and
 * encrypted exactly when its unnamed $DATA is (set from the $DATA).
 */
#include "config.h"

#include <endian.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs_check.h"
#include "ntfs_problems.h"

#define COMPRESSED_SIZE_AT 0x40		/* after the initialized size */

static bool must_be_resident(uint32_t t)
{
	return t == NTFS_AT_STANDARD_INFORMATION || t == NTFS_AT_FILE_NAME ||
	       t == NTFS_AT_OBJECT_ID || t == NTFS_AT_VOLUME_NAME ||
	       t == NTFS_AT_VOLUME_INFORMATION || t == NTFS_AT_INDEX_ROOT ||
	       t == NTFS_AT_EA_INFORMATION;
}

/* ":name" of a named attribute, for messages */
static void stream_name(const struct ntfs_attr_header *a, char *out, size_t size)
{
	uint16_t u[255];
	char n8[NTFS_WHY];

	out[0] = 0;
	if (!a->name_length)
		return;
	memcpy(u, (const uint8_t *)a + le16toh(a->name_offset), 2u * a->name_length);
	for (unsigned int i = 0; i < a->name_length; i++)
		u[i] = le16toh(u[i]);
	ntfs_name_to_utf8(u, a->name_length, n8, sizeof(n8));
	snprintf(out, size, ":%s", n8);
}

static void check_attr(struct ntfs_check *c, uint64_t recno, uint8_t *rec,
		       const struct ntfs_attr_header *a, bool whole,
		       const char *obj)
{
	uint32_t cs = c->vol.boot.g.cluster_size, t = le32toh(a->type);
	uint16_t flags = le16toh(a->flags);
	struct ntfs_attr_nonresident n;
	struct ntfs_run *runs;
	uint64_t real = 0, holes = 0, csize;
	char why[NTFS_WHY], sn[NTFS_WHY + 2];
	long nr;

	stream_name(a, sn, sizeof(sn));
	if (must_be_resident(t) && a->non_resident) {
		fsf_fix_ask(&c->fix, &PR_DATA_RESIDENCE, obj, t, sn, "non-resident", "resident");
		return;
	}
	/* a directory's resident $I30 allocation goes with the rebuild of
	 * its index (pass 3 reports it there): no second, unfixed report */
	if (t == NTFS_AT_INDEX_ALLOCATION && !a->non_resident &&
	    (strcmp(sn, ":$I30") || !(rec[offsetof(struct ntfs_mft_record, flags)] &
				      NTFS_MFT_IS_DIRECTORY))) {
		fsf_fix_ask(&c->fix, &PR_DATA_RESIDENCE, obj, t, sn, "resident", "non-resident");
		return;
	}
	if (!a->non_resident)
		return;
	memcpy(&n, a, sizeof(n));
	/* compressed, but written as a plain attribute: the flag is wrong */
	if (flags & NTFS_ATTR_COMPRESSION_MASK && !n.lowest_vcn && !n.compression_unit &&
	    !(flags & NTFS_ATTR_SPARSE) &&
	    le16toh(n.mapping_pairs_offset) < COMPRESSED_SIZE_AT + 8) {
		if (fsf_fix_ask(&c->fix, &PR_DATA_COMPRESSION_FLAG, obj, t, sn)) {
			uint16_t f = htole16(flags & ~NTFS_ATTR_COMPRESSION_MASK);

			memcpy((uint8_t *)a + offsetof(struct ntfs_attr_header, flags), &f, 2);
			if (ntfs_check_write_record(c, recno, rec))
				fsf_fix_failed(&c->fix);
		}
		return;
	}
	if (flags & NTFS_ATTR_COMPRESSION_MASK && !n.lowest_vcn &&
	    (n.compression_unit != 4 || cs > 4096)) {
		fsf_fix_ask(&c->fix, &PR_DATA_COMPRESSION, obj, t, sn,
			    n.compression_unit, cs);
		return;
	}
	nr = ntfs_attr_runs(a, c->vol.boot.g.nr_clusters, &runs, why);
	if (nr < 0)
		return;		/* pass 1 reported it */
	for (long i = 0; i < nr; i++) {
		if (runs[i].lcn < 0)
			holes += runs[i].len;
		else
			real += runs[i].len;
	}
	free(runs);
	/* $BadClus:$Bad is one hole the size of the volume, never sparse */
	if (holes && recno != NTFS_FILE_BADCLUS && !(flags & (NTFS_ATTR_COMPRESSION_MASK | NTFS_ATTR_SPARSE))) {
		fsf_fix_ask(&c->fix, &PR_DATA_HOLES, obj, t, sn,
			    (unsigned long long)holes);
		return;
	}
	if (!(flags & (NTFS_ATTR_COMPRESSION_MASK | NTFS_ATTR_SPARSE)) ||
	    n.lowest_vcn || !whole ||
	    le16toh(n.mapping_pairs_offset) < COMPRESSED_SIZE_AT + 8)
		return;
	memcpy(&csize, (const uint8_t *)a + COMPRESSED_SIZE_AT, 8);
	csize = le64toh(csize);
	if (csize == real * cs)
		return;
	if (fsf_fix_ask(&c->fix, &PR_DATA_COMPRESSED_SIZE, obj, t, sn,
			(unsigned long long)csize, (unsigned long long)(real * cs))) {
		uint64_t v = htole64(real * cs);

		memcpy((uint8_t *)a + COMPRESSED_SIZE_AT, &v, 8);
		if (ntfs_check_write_record(c, recno, rec))
			fsf_fix_failed(&c->fix);
	}
}

/* two first extents of $DATA with one name in the record */
static void check_streams(struct ntfs_check *c, const uint8_t *rec,
			  const char *obj)
{
	struct ntfs_attr_cursor cur, cur2;
	const struct ntfs_attr_header *a, *b;
	char why[NTFS_WHY];

	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1) {
		if (le32toh(a->type) != NTFS_AT_DATA ||
		    (a->non_resident && ((const struct ntfs_attr_nonresident *)(const void *)a)->lowest_vcn))
			continue;
		cur2 = cur;
		while (ntfs_attr_next(&cur2, &b, why) == 1) {
			char sn[NTFS_WHY + 2];

			if (le32toh(b->type) != NTFS_AT_DATA ||
			    b->name_length != a->name_length ||
			    memcmp((const uint8_t *)a + le16toh(a->name_offset),
				   (const uint8_t *)b + le16toh(b->name_offset),
				   2u * a->name_length) ||
			    (b->non_resident && ((const struct ntfs_attr_nonresident *)(const void *)b)->lowest_vcn))
				continue;
			stream_name(a, sn, sizeof(sn));
			fsf_fix_ask(&c->fix, &PR_DATA_STREAM_DUPLICATE, obj,
				    sn[0] ? sn + 1 : "(unnamed)");
			return;
		}
	}
}

/* "sparse, compressed" for the content flags F of file attributes */
static void flag_words(uint32_t f, char *out, size_t size)
{
	snprintf(out, size, "%s%s%s%s", f & NTFS_FA_SPARSE_FILE ? "sparse " : "",
		 f & NTFS_FA_COMPRESSED ? "compressed " : "",
		 f & NTFS_FA_ENCRYPTED ? "encrypted " : "",
		 f ? "" : "plain ");
	out[strlen(out) - 1] = 0;
}

/* A user file's base record REC: its $STANDARD_INFORMATION's content
 * flags against its unnamed $DATA's first extent, both in REC. */
static void check_file_flags(struct ntfs_check *c, uint64_t recno, uint8_t *rec,
			     const char *obj)
{
	const uint32_t mask = NTFS_FA_SPARSE_FILE | NTFS_FA_COMPRESSED | NTFS_FA_ENCRYPTED;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a, *si = NULL, *data = NULL;
	uint32_t fa, want = 0, len;
	uint16_t af;
	char why[NTFS_WHY], said[40], is[40];
	uint8_t *v;

	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1) {
		if (le32toh(a->type) == NTFS_AT_STANDARD_INFORMATION && !a->non_resident)
			si = a;
		else if (le32toh(a->type) == NTFS_AT_DATA && !a->name_length && !data &&
			 (!a->non_resident ||
			  !((const struct ntfs_attr_nonresident *)(const void *)a)->lowest_vcn))
			data = a;
	}
	if (!si || !data)
		return;
	v = (uint8_t *)ntfs_attr_value(si, &len);
	if (!v || len < offsetof(struct ntfs_standard_information, file_attributes) + 4)
		return;
	memcpy(&fa, v + offsetof(struct ntfs_standard_information, file_attributes), 4);
	fa = le32toh(fa);
	af = le16toh(data->flags);
	if (af & NTFS_ATTR_SPARSE)
		want |= NTFS_FA_SPARSE_FILE;
	if (af & NTFS_ATTR_COMPRESSION_MASK)
		want |= NTFS_FA_COMPRESSED;
	if (af & NTFS_ATTR_ENCRYPTED)
		want |= NTFS_FA_ENCRYPTED;
	if ((fa & mask) == want)
		return;
	flag_words(fa & mask, said, sizeof(said));
	flag_words(want, is, sizeof(is));
	if (fsf_fix_ask(&c->fix, &PR_DATA_FILE_FLAGS, obj, fa, said, is)) {
		fa = htole32((fa & ~mask) | want);
		memcpy(v + offsetof(struct ntfs_standard_information, file_attributes), &fa, 4);
		if (ntfs_check_write_record(c, recno, rec))
			fsf_fix_failed(&c->fix);
	}
}

int ntfs_pass2_data(struct ntfs_check *c)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *rec = malloc(rs);

	if (!rec)
		return -1;
	for (uint64_t r = 0; r < c->vol.mft_records; r++) {
		struct ntfs_attr_cursor cur;
		const struct ntfs_attr_header *a;
		struct ntfs_mft_record m;
		char why[NTFS_WHY], obj[NTFS_WHY + 64];
		bool whole = true;

		if (!bit_get(c->record_used, r) || ntfs_record_plain(c, r) ||
		    ntfs_vol_read_record(&c->vol, r, rec) ||
		    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
			continue;
		memcpy(&m, rec, sizeof(m));
		whole = !le64toh(m.base_mft_record);
		ntfs_attr_cursor_init(&cur, rec);
		while (ntfs_attr_next(&cur, &a, why) == 1)
			if (le32toh(a->type) == NTFS_AT_ATTRIBUTE_LIST)
				whole = false;
		obj[0] = 0;
		ntfs_attr_cursor_init(&cur, rec);
		while (ntfs_attr_next(&cur, &a, why) == 1) {
			if (!obj[0])
				ntfs_object_name(c, "file", whole ? r :
						 le64toh(m.base_mft_record) & 0xffffffffffffULL,
						 obj, sizeof(obj));
			check_attr(c, r, rec, a, whole, obj);
		}
		check_streams(c, rec, obj[0] ? obj : "record");
		if (!le64toh(m.base_mft_record) && r >= NTFS_FILE_FIRST_USER &&
		    !(le16toh(m.flags) & NTFS_MFT_IS_DIRECTORY))
			check_file_flags(c, r, rec, obj[0] ? obj : "record");
	}
	free(rec);
	return 0;
}
