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
 *
 * A user file's unnamed $DATA whose sparse or compressed flag, or whose
 * compression unit, was lost is put back only when the evidence agrees:
 * the file attributes ($STANDARD_INFORMATION, and no $FILE_NAME saying
 * otherwise), the runs (compressed data is whole compression units of 16
 * clusters: all allocated, allocated then holes, or all holes) and the
 * data (a partly allocated unit holds LZNT1 chunks).  When it does not,
 * nothing is changed (not the file attributes either) and the reason is
 * reported.
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
#define LZNT1_FLAG 0x0001		/* the compression method NTFS has */
#define WHY(...) snprintf(why, EVIDENCE_WHY, __VA_ARGS__)
#define EVIDENCE_WHY (2 * NTFS_WHY)	/* the evidence, with a reason of libntfs */

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

#define CU_CLUSTERS 16u			/* compression unit 4 */
#define CONTENT_FA (NTFS_FA_SPARSE_FILE | NTFS_FA_COMPRESSED)
#define CONTENT_AF (NTFS_ATTR_SPARSE | NTFS_ATTR_COMPRESSION_MASK)

/* "sparse, compressed" for the content flags F of file attributes */
static void flag_words(uint32_t f, char *out, size_t size)
{
	snprintf(out, size, "%s%s%s%s", f & NTFS_FA_SPARSE_FILE ? "sparse " : "",
		 f & NTFS_FA_COMPRESSED ? "compressed " : "",
		 f & NTFS_FA_ENCRYPTED ? "encrypted " : "",
		 f ? "" : "plain ");
	out[strlen(out) - 1] = 0;
}

/* The file attributes of REC's $STANDARD_INFORMATION (false: none) */
static bool si_attributes(const uint8_t *rec, uint32_t *fa)
{
	const struct ntfs_attr_header *si = ntfs_attr_find(rec, NTFS_AT_STANDARD_INFORMATION);
	const uint8_t *v;
	uint32_t len;

	if (!si || si->non_resident)
		return false;
	v = ntfs_attr_value(si, &len);
	if (!v || len < offsetof(struct ntfs_standard_information, file_attributes) + 4)
		return false;
	memcpy(fa, v + offsetof(struct ntfs_standard_information, file_attributes), 4);
	*fa = le32toh(*fa);
	return true;
}

/* What the evidence says the content flags of the unnamed $DATA A (its
 * runs RUNS, NR) of a user file's base record REC are: NTFS_ATTR_SPARSE
 * and NTFS_ATTR_COMPRESSION_MASK bits, or -1 (WHY) when it does not agree.
 * The file attributes first ($STANDARD_INFORMATION; a $FILE_NAME may lag
 * behind, ntfs-3g does not set its sparse bit, but must not say more),
 * then the runs and the data. */
static int flags_evidence(struct ntfs_check *c, const uint8_t *rec,
			  const struct ntfs_attr_header *a, const struct ntfs_run *runs,
			  long nr, char *why)
{
	uint32_t cs = c->vol.boot.g.cluster_size, si, len;
	const struct ntfs_attr_nonresident *n = (const void *)a;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *b;
	struct ntfs_cunit *part = NULL;
	char w[NTFS_WHY], w2[40], w3[40];
	uint8_t *buf = NULL;
	long k, good = 0;
	int want = 0;

	if (a->name_length)
		return WHY("a named stream, whose flags the file attributes do not give"), -1;
	if (!si_attributes(rec, &si))
		return WHY("no $STANDARD_INFORMATION to give the file attributes"), -1;
	si &= CONTENT_FA;
	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &b, w) == 1) {
		const struct ntfs_file_name *fn = ntfs_attr_value(b, &len);
		uint32_t fa;

		if (le32toh(b->type) != NTFS_AT_FILE_NAME || b->non_resident || !fn ||
		    len < sizeof(*fn))
			continue;
		memcpy(&fa, &fn->file_attributes, 4);
		fa = le32toh(fa) & CONTENT_FA;
		if (fa & ~si) {
			flag_words(fa, w2, sizeof(w2));
			flag_words(si, w3, sizeof(w3));
			return WHY("$FILE_NAME says %s, $STANDARD_INFORMATION %s", w2, w3), -1;
		}
	}
	if (si & NTFS_FA_SPARSE_FILE)
		want |= NTFS_ATTR_SPARSE;
	if (si & NTFS_FA_COMPRESSED)
		want |= LZNT1_FLAG;
	if (!want)
		return 0;
	if (le16toh(n->mapping_pairs_offset) < COMPRESSED_SIZE_AT + 8)
		return WHY("the file attributes say %s but it has no compressed size field",
			   si & NTFS_FA_COMPRESSED ? "compressed" : "sparse"), -1;
	k = ntfs_cunits_partial(runs, nr, CU_CLUSTERS, NULL, 0, w);
	if (k > 0 && (part = calloc((size_t)k, sizeof(*part))) &&
	    (buf = malloc((size_t)CU_CLUSTERS * cs))) {
		ntfs_cunits_partial(runs, nr, CU_CLUSTERS, part, k, w);
		for (good = 0; good < k; good++)
			if (ntfs_vol_runs_pread(&c->vol, runs, nr, part[good].vcn * cs,
						part[good].clusters * cs, buf) ||
			    !ntfs_lznt1_chunks(buf, part[good].clusters * cs,
					       CU_CLUSTERS * cs, w))
				break;
	} else if (k > 0) {
		k = -1;
		snprintf(w, sizeof(w), "out of memory");
	}
	if (want & NTFS_ATTR_COMPRESSION_MASK) {
		if (cs > 4096)
			want = -1, WHY("the file attributes say compressed, but clusters of %u bytes cannot be", cs);
		else if (k < 0)
			want = -1, WHY("the file attributes say compressed, but %s", w);
		else if (good < k)
			want = -1, WHY("the file attributes say compressed, but the unit at VCN %llu does not hold LZNT1 data (%s)",
				       (unsigned long long)part[good].vcn, w);
	} else if (k > 0 && good == k) {
		want = -1, WHY("the file attributes say sparse, but its %ld partly allocated units of 16 clusters all hold LZNT1 data", k);
	}
	free(part);
	free(buf);
	return want;
}

/* The content flags of a non-resident data attribute A (N, RUNS, NR; HOLES
 * clusters of holes), neither sparse nor compressed, that has holes or a
 * compression unit: put back from the evidence, or the unit cleared
 * (nothing else says compressed and no hole could read otherwise), or
 * left.  True when the file attributes must be left alone. */
static bool lost_flags(struct ntfs_check *c, uint64_t recno, uint8_t *rec,
		       const struct ntfs_attr_header *a, const struct ntfs_attr_nonresident *n,
		       const struct ntfs_run *runs, long nr, uint64_t holes,
		       bool user, const char *obj, const char *sn)
{
	uint32_t t = le32toh(a->type);
	char why[EVIDENCE_WHY], words[40];
	int want = -1;

	if (user)
		want = flags_evidence(c, rec, a, runs, nr, why);
	else
		snprintf(why, sizeof(why), "not a user file's data in one record");
	if (want > 0) {
		flag_words((want & NTFS_ATTR_SPARSE ? NTFS_FA_SPARSE_FILE : 0) |
			   (want & NTFS_ATTR_COMPRESSION_MASK ? NTFS_FA_COMPRESSED : 0),
			   words, sizeof(words));
		if (fsf_fix_ask(&c->fix, &PR_DATA_FLAGS_LOST, obj, t, sn,
				(unsigned long long)holes, n->compression_unit, words)) {
			uint16_t f = htole16((uint16_t)(le16toh(a->flags) | want));

			memcpy((uint8_t *)a + offsetof(struct ntfs_attr_header, flags), &f, 2);
			/* the runs were judged in units of 16 clusters */
			if (want & LZNT1_FLAG)
				((uint8_t *)a)[offsetof(struct ntfs_attr_nonresident, compression_unit)] = 4;
			if (ntfs_check_write_record(c, recno, rec))
				fsf_fix_failed(&c->fix);
		}
		return true;
	}
	if (!holes && (want == 0 || !user)) {
		/* no hole: plain, sparse and compressed read the same */
		if (fsf_fix_ask(&c->fix, &PR_DATA_UNIT_PLAIN, obj, t, sn, n->compression_unit)) {
			((uint8_t *)a)[offsetof(struct ntfs_attr_nonresident, compression_unit)] = 0;
			if (ntfs_check_write_record(c, recno, rec))
				fsf_fix_failed(&c->fix);
		}
		return false;
	}
	if (want == 0)
		snprintf(why, sizeof(why), "the file attributes say plain");
	fsf_fix_ask(&c->fix, &PR_DATA_HOLES, obj, t, sn, (unsigned long long)holes, why);
	return true;
}

/* Check non-resident attribute A of REC; true when the file attributes
 * must not be set from it (its content flags are in doubt or were put
 * back from them). */
static bool check_attr(struct ntfs_check *c, uint64_t recno, uint8_t *rec,
		       const struct ntfs_attr_header *a, bool whole, bool user,
		       const char *obj)
{
	uint32_t cs = c->vol.boot.g.cluster_size, t = le32toh(a->type);
	uint16_t flags = le16toh(a->flags);
	struct ntfs_attr_nonresident n;
	struct ntfs_run *runs;
	uint64_t real = 0, holes = 0, csize;
	char why[EVIDENCE_WHY], sn[NTFS_WHY + 2];
	long nr;

	stream_name(a, sn, sizeof(sn));
	if (must_be_resident(t) && a->non_resident) {
		fsf_fix_ask(&c->fix, &PR_DATA_RESIDENCE, obj, t, sn, "non-resident", "resident");
		return false;
	}
	/* a directory's resident $I30 allocation goes with the rebuild of
	 * its index (pass 3 reports it there): no second, unfixed report */
	if (t == NTFS_AT_INDEX_ALLOCATION && !a->non_resident &&
	    (strcmp(sn, ":$I30") || !(rec[offsetof(struct ntfs_mft_record, flags)] &
				      NTFS_MFT_IS_DIRECTORY))) {
		fsf_fix_ask(&c->fix, &PR_DATA_RESIDENCE, obj, t, sn, "resident", "non-resident");
		return false;
	}
	if (!a->non_resident)
		return false;
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
		return true;
	}
	nr = ntfs_attr_runs(a, c->vol.boot.g.nr_clusters, &runs, why);
	if (nr < 0)
		return false;		/* pass 1 reported it */
	if (flags & NTFS_ATTR_COMPRESSION_MASK && !n.lowest_vcn &&
	    (n.compression_unit != 4 || cs > 4096)) {
		/* the unit back to 4 when everything else says compressed */
		int want = -1;

		if (!whole || !user)
			WHY("not a user file's data in one extent");
		else if ((flags & NTFS_ATTR_COMPRESSION_MASK) != LZNT1_FLAG)
			WHY("compression method 0x%x", flags & NTFS_ATTR_COMPRESSION_MASK);
		else
			want = flags_evidence(c, rec, a, runs, nr, why);
		if (want >= 0 && want != (flags & (NTFS_ATTR_SPARSE | LZNT1_FLAG)))
			WHY("the file attributes do not say compressed");
		if (want >= 0 && want == (flags & (NTFS_ATTR_SPARSE | LZNT1_FLAG))) {
			if (fsf_fix_ask(&c->fix, &PR_DATA_UNIT_SET, obj, t, sn, n.compression_unit)) {
				((uint8_t *)a)[offsetof(struct ntfs_attr_nonresident, compression_unit)] = 4;
				if (ntfs_check_write_record(c, recno, rec))
					fsf_fix_failed(&c->fix);
			}
		} else {
			fsf_fix_ask(&c->fix, &PR_DATA_COMPRESSION, obj, t, sn,
				    n.compression_unit, cs, why);
		}
		free(runs);
		return true;
	}
	for (long i = 0; i < nr; i++) {
		if (runs[i].lcn < 0)
			holes += runs[i].len;
		else
			real += runs[i].len;
	}
	/* $BadClus:$Bad is one hole the size of the volume, never sparse */
	if ((holes || n.compression_unit) && recno != NTFS_FILE_BADCLUS &&
	    !(flags & (NTFS_ATTR_COMPRESSION_MASK | NTFS_ATTR_SPARSE))) {
		bool doubt = lost_flags(c, recno, rec, a, &n, runs, nr, holes,
					user && whole && !n.lowest_vcn, obj, sn);

		free(runs);
		return doubt;
	}
	free(runs);
	if (!(flags & (NTFS_ATTR_COMPRESSION_MASK | NTFS_ATTR_SPARSE)) ||
	    n.lowest_vcn || !whole ||
	    le16toh(n.mapping_pairs_offset) < COMPRESSED_SIZE_AT + 8)
		return false;
	memcpy(&csize, (const uint8_t *)a + COMPRESSED_SIZE_AT, 8);
	csize = le64toh(csize);
	if (csize == real * cs)
		return false;
	if (fsf_fix_ask(&c->fix, &PR_DATA_COMPRESSED_SIZE, obj, t, sn,
			(unsigned long long)csize, (unsigned long long)(real * cs))) {
		uint64_t v = htole64(real * cs);

		memcpy((uint8_t *)a + COMPRESSED_SIZE_AT, &v, 8);
		if (ntfs_check_write_record(c, recno, rec))
			fsf_fix_failed(&c->fix);
	} else if (c->fix.mode == FSF_MODE_NO) {
		/* -n: pass 3 judges the file's index entries by the size -a
		 * gives (in memory only; past the budget: as read) */
		uint64_t v = htole64(real * cs), was = htole64(csize);

		memcpy((uint8_t *)a + COMPRESSED_SIZE_AT, &v, 8);
		if (ntfs_vol_assume_record(&c->vol, recno, rec))
			memcpy((uint8_t *)a + COMPRESSED_SIZE_AT, &was, 8);
	}
	return false;
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
	/* the name of the file whose record was named last: its extension
	 * records follow it, and naming the file walks all its records
	 * (each of a file's 3,000 extension records naming it was 3,000
	 * walks of 3,000 records) */
	uint64_t named = UINT64_MAX;
	char name[NTFS_WHY + 64];

	if (!rec)
		return -1;
	for (uint64_t r = 0; r < c->vol.mft_records; r++) {
		struct ntfs_attr_cursor cur;
		const struct ntfs_attr_header *a;
		struct ntfs_mft_record m;
		char why[NTFS_WHY], obj[NTFS_WHY + 64];
		bool whole = true, user, doubt = false;
		uint64_t file;

		if (!cset_get(&c->record_used, r) || ntfs_record_plain(c, r) ||
		    ntfs_vol_read_record(&c->vol, r, rec) ||
		    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
			continue;
		memcpy(&m, rec, sizeof(m));
		whole = !le64toh(m.base_mft_record);
		ntfs_attr_cursor_init(&cur, rec);
		while (ntfs_attr_next(&cur, &a, why) == 1)
			if (le32toh(a->type) == NTFS_AT_ATTRIBUTE_LIST)
				whole = false;
		user = !le64toh(m.base_mft_record) && r >= NTFS_FILE_FIRST_USER &&
		       !(le16toh(m.flags) & NTFS_MFT_IS_DIRECTORY);
		obj[0] = 0;
		file = ntfs_record_file(rec, r);
		ntfs_attr_cursor_init(&cur, rec);
		while (ntfs_attr_next(&cur, &a, why) == 1) {
			if (!obj[0] && file != named) {
				ntfs_object_name(c, "file", file, name, sizeof(name));
				named = file;
			}
			if (!obj[0])
				memcpy(obj, name, sizeof(obj));
			if (check_attr(c, r, rec, a, whole, user, obj) &&
			    le32toh(a->type) == NTFS_AT_DATA && !a->name_length)
				doubt = true;
		}
		check_streams(c, rec, obj[0] ? obj : "record");
		if (user && !doubt)
			check_file_flags(c, r, rec, obj[0] ? obj : "record");
	}
	free(rec);
	return 0;
}
