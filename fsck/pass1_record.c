// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 1, per record: header flags against what the record holds, the VCN
 * range and allocated size of each non-resident attribute against its
 * runs, and (after all records are read) every extension record against
 * the base record it claims: the base must be in use and list it in its
 * $ATTRIBUTE_LIST, or the extension is debris and is freed.  A record
 * that claims such a base but holds $STANDARD_INFORMATION is a file whose
 * base reference is the damage: judged before the record is classified
 * (a free or unusable base says nothing: then only an entry of its
 * directory's index naming the record says it is the file).
 */
#include "config.h"

#include <endian.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/format.h"
#include "ntfs/index_read.h"
#include "ntfs/repair.h"
#include "ntfs_check.h"
#include "ntfs_problems.h"

static const uint8_t I30[8] = { '$', 0, 'I', 0, '3', 0, '0', 0 };

#define KNOWN_RECORD_FLAGS (NTFS_MFT_IN_USE | NTFS_MFT_IS_DIRECTORY | \
			    NTFS_MFT_IS_4 | NTFS_MFT_IS_VIEW_INDEX)

static int write_back(struct ntfs_check *c, uint64_t recno, uint8_t *rec)
{
	if (ntfs_check_write_record(c, recno, rec)) {
		fsf_fix_failed(&c->fix);
		return -1;
	}
	return 0;
}

/* M, REC's header as a repair leaves it (record RECNO): into REC and
 * written when the repair was taken (YES); under -n into REC all the same
 * and assumed in memory, so that the rest of the check and every later
 * read see the record as -a leaves it.  Whether REC holds M; when not
 * (declined, or past the budget of assumed records) M is REC's again. */
static bool take_header(struct ntfs_check *c, uint64_t recno, uint8_t *rec,
			struct ntfs_mft_record *m, bool yes)
{
	struct ntfs_mft_record was;

	memcpy(&was, rec, sizeof(was));
	if (yes || c->fix.mode == FSF_MODE_NO) {
		memcpy(rec, m, sizeof(*m));
		if (yes) {
			write_back(c, recno, rec);
			return true;
		}
		if (!ntfs_vol_assume_record(&c->vol, recno, rec))
			return true;
		memcpy(rec, &was, sizeof(was));
	}
	memcpy(m, &was, sizeof(*m));
	return false;
}

static int add_standard_information(struct ntfs_check *c, uint8_t *rec);

static int add_empty_data(struct ntfs_check *c, uint8_t *rec)
{
	return ntfs_rec_add_empty_data(rec, c->vol.boot.g.mft_record_size);
}

/* REC (record RECNO) edited by EDIT: written when the repair was taken
 * (YES); under -n assumed in memory (as take_header); an edit that fails
 * when taken is a failed fix.  Unless taken or assumed, REC as read. */
static void edit_record(struct ntfs_check *c, uint64_t recno, uint8_t *rec,
			int (*edit)(struct ntfs_check *, uint8_t *), bool yes)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *was = malloc(rs);

	if (!was) {
		if (yes)
			fsf_fix_failed(&c->fix);
		return;
	}
	memcpy(was, rec, rs);
	if (edit(c, rec)) {
		if (yes)
			fsf_fix_failed(&c->fix);
		memcpy(rec, was, rs);
	} else if (yes) {
		write_back(c, recno, rec);
	} else if (ntfs_vol_assume_record(&c->vol, recno, rec)) {
		memcpy(rec, was, rs);
	}
	free(was);
}

/* REC, a base record without $STANDARD_INFORMATION, gets one (in
 * memory): the times and file attributes of its first $FILE_NAME, the
 * root's security id (a file made in it inherits that), no owner, quota
 * or USN.  0, or -1 (no room). */
static int add_standard_information(struct ntfs_check *c, uint8_t *rec)
{
	uint32_t rs = c->vol.boot.g.mft_record_size, len;
	struct ntfs_standard_information si;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];
	uint8_t *root = malloc(rs);

	memset(&si, 0, sizeof(si));
	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1) {
		struct ntfs_file_name fn;

		if (ntfs_file_name_of(a, &fn)) {
			si.creation_time = fn.creation_time;
			si.last_data_change_time = fn.last_data_change_time;
			si.last_mft_change_time = fn.last_mft_change_time;
			si.last_access_time = fn.last_access_time;
			/* the low word, less the directory bit $FILE_NAME adds */
			si.file_attributes = htole32(le32toh(fn.file_attributes) & 0xffef);
			break;
		}
	}
	if (root && !ntfs_vol_read_record(&c->vol, NTFS_FILE_ROOT, root) &&
	    ntfs_record_check(root, rs, NTFS_MAGIC_FILE, why) == NTFS_REC_OK &&
	    (a = ntfs_attr_named(root, NTFS_AT_STANDARD_INFORMATION, "")) &&
	    !a->non_resident) {
		const uint8_t *v = ntfs_attr_value(a, &len);

		if (len >= sizeof(si))
			memcpy(&si.security_id,
			       v + offsetof(struct ntfs_standard_information, security_id), 4);
	}
	free(root);
	return ntfs_rec_insert_resident(rec, rs, NTFS_AT_STANDARD_INFORMATION, &si, sizeof(si));
}

/* Does base record REC list extension record EXT in its attribute list? */
static bool lists(struct ntfs_check *c, const uint8_t *rec, uint64_t ext);

enum base_says { BASE_LISTS, BASE_DOES_NOT, BASE_NOT_KNOWN };

/* Does B, the base record that record E names, list E?  It positively
 * does not when B is past the MFT, or B as pass 1 will have it (a torn
 * base is judged repaired: pass 1 reaches a base numbered above E only
 * later) is an in-use extension record itself or an in-use base with no
 * list entry for E.  A base not in use or unusable is not known: a stale
 * copy of a file's record left in a free slot names such a base as well
 * as damage does. */
static enum base_says base_lists(struct ntfs_check *c, uint64_t b, uint64_t e)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *base;
	struct ntfs_mft_record bm;
	enum base_says says = BASE_NOT_KNOWN;

	if (b >= c->vol.mft_records)
		return BASE_DOES_NOT;
	base = malloc(rs);
	if (!base)
		return BASE_LISTS;	/* not known not to: left as it is */
	/* B as pass 1 will have it (mended in this copy, never written) */
	if (!ntfs_vol_read_record(&c->vol, b, base) &&
	    !ntfs_record_usable(base, rs)) {
		memcpy(&bm, base, sizeof(bm));
		if (le16toh(bm.flags) & NTFS_MFT_IN_USE)
			says = !le64toh(bm.base_mft_record) && lists(c, base, e) ?
			       BASE_LISTS : BASE_DOES_NOT;
	}
	free(base);
	return says;
}

/* Is record RECNO (REC) named, with its sequence number, by an entry of
 * the index of a directory one of its $FILE_NAMEs names as parent?  Then
 * it is that file's own base record, not a stale copy of one (whose
 * directory entry names the file's record, not this slot). */
static bool own_entry(struct ntfs_check *c, uint64_t recno, const uint8_t *rec)
{
	struct ntfs_mft_record m;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];
	uint64_t mref, tried[4];
	unsigned int n = 0;

	memcpy(&m, rec, sizeof(m));
	mref = recno | (uint64_t)le16toh(m.sequence_number) << 48;
	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1) {
		struct ntfs_file_name fn;
		uint64_t dir;
		bool seen = false;

		if (le32toh(a->type) != NTFS_AT_FILE_NAME || !ntfs_file_name_of(a, &fn))
			continue;
		dir = le64toh(fn.parent_directory) & 0xffffffffffffULL;
		/* a name pair (Win32 and DOS) names one directory: walked once;
		 * a handful of directories at most */
		for (unsigned int k = 0; k < n; k++)
			seen |= tried[k] == dir;
		if (seen || dir == recno)
			continue;
		if (n == sizeof(tried) / sizeof(tried[0]))
			break;
		tried[n++] = dir;
		if (ntfs_vol_dir_has_entry(&c->vol, &c->dir_refs, dir, mref))
			return true;
	}
	return false;
}

void ntfs_check_base_reference(struct ntfs_check *c, uint64_t recno,
			       uint8_t *rec, const char *obj)
{
	struct ntfs_mft_record m;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];
	uint64_t b;
	bool si = false;

	memcpy(&m, rec, sizeof(m));
	b = le64toh(m.base_mft_record) & 0xffffffffffffULL;
	if (recno < NTFS_FILE_FIRST_USER || !m.base_mft_record)
		return;
	ntfs_attr_cursor_init(&cur, rec);
	while (!si && ntfs_attr_next(&cur, &a, why) == 1)
		si = le32toh(a->type) == NTFS_AT_STANDARD_INFORMATION;
	/* no extension record holds $STANDARD_INFORMATION: a record that
	 * does, claimed by no base, is a file whose base reference is the
	 * damage; one its base lists is left to the list checks.  One whose
	 * base is free or unusable is that file only when its directory's
	 * index names it (else the list checks free it, as before) */
	if (!si)
		return;
	switch (base_lists(c, b, recno)) {
	case BASE_LISTS:
		return;
	case BASE_NOT_KNOWN:
		if (!own_entry(c, recno, rec))
			return;
		break;
	case BASE_DOES_NOT:
		break;
	}
	m.base_mft_record = 0;
	if (fsf_fix_ask(&c->fix, &PR_BASE_REFERENCE, obj, (unsigned long long)b)) {
		memcpy(rec, &m, sizeof(m));
		write_back(c, recno, rec);
		return;
	}
	/* declined or -n: checked as the file it is all the same; under -n
	 * later passes read it so too (in memory only), as -a leaves it */
	memcpy(rec, &m, sizeof(m));
	if (c->fix.mode == FSF_MODE_NO)
		ntfs_vol_assume_record(&c->vol, recno, rec);
}

void ntfs_check_record_flags(struct ntfs_check *c, uint64_t recno,
			     uint8_t *rec, const char *obj)
{
	struct ntfs_mft_record m;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];
	bool list = false, root = false, fn_dir = false, si = false, data = false;
	bool view_root = false;
	char named[1200];
	uint16_t flags, known = KNOWN_RECORD_FLAGS;
	int walk;

	memcpy(&m, rec, sizeof(m));
	flags = le16toh(m.flags);
	/* system files are base records, always; the reserved records
	 * 12-15 may extend $MFT (record 0), as ntfs-3g makes them when
	 * $MFT's runs overflow record 0 */
	if (recno < NTFS_FILE_FIRST_USER && m.base_mft_record &&
	    (recno <= NTFS_FILE_EXTEND || le64toh(m.base_mft_record) & 0xffffffffffffULL)) {
		bool yes = fsf_fix_ask(&c->fix, &PR_SYSTEM_BASE, obj,
				       (unsigned long long)(le64toh(m.base_mft_record) &
							    0xffffffffffffULL));

		m.base_mft_record = 0;
		take_header(c, recno, rec, &m, yes);
	}
	ntfs_attr_cursor_init(&cur, rec);
	while ((walk = ntfs_attr_next(&cur, &a, why)) == 1) {
		uint32_t t = le32toh(a->type), len;

		if (t == NTFS_AT_ATTRIBUTE_LIST) {
			list = true;
		} else if (t == NTFS_AT_STANDARD_INFORMATION) {
			si = true;
		} else if (t == NTFS_AT_DATA) {
			data |= !a->name_length;
		} else if (t == NTFS_AT_INDEX_ROOT) {
			view_root |= !(a->name_length == 4 &&
				       !memcmp((const uint8_t *)a + le16toh(a->name_offset),
					       I30, 8));
			root |= a->name_length == 4 &&
				!memcmp((const uint8_t *)a + le16toh(a->name_offset),
					I30, 8);
		} else if (t == NTFS_AT_FILE_NAME) {
			const uint8_t *v = ntfs_attr_value(a, &len);
			struct ntfs_file_name fn;

			if (len >= sizeof(fn)) {
				memcpy(&fn, v, sizeof(fn));
				fn_dir |= !!(le32toh(fn.file_attributes) &
					     NTFS_FA_DUP_FILE_NAME_INDEX_PRESENT);
			}
		}
	}
	if (flags & ~known) {
		bool yes = fsf_fix_ask(&c->fix, &PR_RECORD_FLAGS, obj, flags);

		m.flags = htole16(flags & known);
		if (take_header(c, recno, rec, &m, yes))
			flags &= known;
	}
	/* a walk that breaks says nothing of what the record lacks (the
	 * attribute checks judge it) */
	if (walk || le64toh(m.base_mft_record) || recno < NTFS_FILE_FIRST_USER)
		return;
	/* a base record without a list holds all of its file: what every
	 * file has and this one lacks is added, the least that makes it
	 * whole (its names and data are kept as they are); a view index
	 * ($Extend's $Quota, $ObjId, $Reparse) holds no data.  Not in a
	 * record without links: an extension record whose base reference
	 * was lost looks like a base record but has no link count (the
	 * attribute-list pass gives it its base back); a file with no link
	 * is the orphan checks' */
	bool whole = !list && le16toh(m.link_count);

	if (whole && !(flags & NTFS_MFT_IS_DIRECTORY) && root && !data) {
		bool yes;

		ntfs_object_name(c, "directory", recno, named, sizeof(named));
		yes = fsf_fix_ask(&c->fix, &PR_RECORD_IS_DIRECTORY, named);
		m.flags = htole16(flags | NTFS_MFT_IS_DIRECTORY);
		if (take_header(c, recno, rec, &m, yes))
			flags |= NTFS_MFT_IS_DIRECTORY;
	}
	if (whole && !si) {
		bool yes;

		ntfs_object_name(c, "file", recno, named, sizeof(named));
		yes = fsf_fix_ask(&c->fix, &PR_RECORD_SI_MISSING, named);
		if (yes || c->fix.mode == FSF_MODE_NO)
			edit_record(c, recno, rec, add_standard_information, yes);
	}
	if (whole && !(flags & (NTFS_MFT_IS_DIRECTORY | NTFS_MFT_IS_4 |
				NTFS_MFT_IS_VIEW_INDEX)) &&
	    !root && !view_root && !data) {
		bool yes;

		ntfs_object_name(c, "file", recno, named, sizeof(named));
		yes = fsf_fix_ask(&c->fix, &PR_RECORD_DATA_MISSING, named);
		if (yes || c->fix.mode == FSF_MODE_NO)
			edit_record(c, recno, rec, add_empty_data, yes);
	}
	if (!(flags & NTFS_MFT_IS_DIRECTORY))
		return;
	/* no index, and its names say "file": the flag is the damage */
	if (!list && !root && !fn_dir) {
		bool yes = fsf_fix_ask(&c->fix, &PR_RECORD_NOT_DIRECTORY, obj);

		m.flags = htole16(flags & ~NTFS_MFT_IS_DIRECTORY);
		take_header(c, recno, rec, &m, yes);
	}
}

/* A compressed attribute's header (VCNs from 0, its allocation theirs)
 * and its RUNS (NR, CLUSTERS in all) disagree by a hole that runs on into
 * the next compression unit: the hole is cut back to its unit's end, the
 * data keeps its VCNs (taking the runs instead would shift every unit
 * after the hole).  Whether it was that. */
static bool long_hole(struct ntfs_check *c, uint64_t recno, uint8_t *rec,
		      const struct ntfs_attr_header *a, const struct ntfs_run *runs,
		      long nr, uint64_t clusters, const char *obj)
{
	struct ntfs_attr_nonresident n;
	int64_t hvcn;
	long hole;

	memcpy(&n, a, sizeof(n));
	hvcn = (int64_t)le64toh((uint64_t)n.highest_vcn);
	if (!(le16toh(n.h.flags) & NTFS_ATTR_COMPRESSION_MASK) ||
	    !n.compression_unit || n.compression_unit > 8 || n.lowest_vcn ||
	    hvcn < 0 || clusters <= (uint64_t)hvcn + 1 ||
	    (uint64_t)le64toh((uint64_t)n.allocated_size) !=
	    ((uint64_t)hvcn + 1) * c->vol.boot.g.cluster_size)
		return false;
	hole = ntfs_cunits_long_hole(runs, nr, 1u << n.compression_unit,
				     clusters - ((uint64_t)hvcn + 1));
	if (hole < 0)
		return false;
	if (fsf_fix_ask(&c->fix, &PR_ATTR_HOLE_LONG, obj, le32toh(a->type),
			(unsigned long long)clusters, 0LL, (long long)hvcn, hole,
			(unsigned long long)(clusters - ((uint64_t)hvcn + 1)))) {
		if (ntfs_attr_set_run_length((uint8_t *)a, hole, runs[hole].len -
					     (clusters - ((uint64_t)hvcn + 1))))
			fsf_fix_failed(&c->fix);
		else
			write_back(c, recno, rec);
	}
	return true;
}

/* A user file's attribute (not compressed) whose RUNS (NR, CLUSTERS in
 * all) run past its header, and whose header is whole: VCNs from 0, its
 * allocation exactly its VCNs, its data size within them.  The clusters
 * past its highest VCN hold nothing the file needs (a run length one too
 * big, often onto the next file's first cluster): its last run is cut
 * back, the header stays, and the other file keeps its clusters (taking
 * the runs would grow the file and make a cross-link to copy).  Under -n
 * the cut is assumed in memory, so that the cluster claims see it.
 * Whether it was that. */
static bool long_tail(struct ntfs_check *c, uint64_t recno, uint8_t *rec,
		      const struct ntfs_attr_header *a, const struct ntfs_run *runs,
		      long nr, uint64_t clusters, const char *obj)
{
	uint32_t cs = c->vol.boot.g.cluster_size;
	struct ntfs_attr_nonresident n;
	uint64_t alloc, size, over;
	int64_t hvcn;
	bool yes;

	memcpy(&n, a, sizeof(n));
	hvcn = (int64_t)le64toh((uint64_t)n.highest_vcn);
	alloc = le64toh((uint64_t)n.allocated_size);
	size = le64toh((uint64_t)n.data_size);
	if (recno < NTFS_FILE_FIRST_USER || nr < 1 || n.lowest_vcn || hvcn < 0 ||
	    (le16toh(n.h.flags) & NTFS_ATTR_COMPRESSION_MASK) ||
	    clusters <= (uint64_t)hvcn + 1 ||
	    alloc != ((uint64_t)hvcn + 1) * cs || size > alloc ||
	    le64toh((uint64_t)n.initialized_size) > size)
		return false;
	/* one run only: with several, the length off by one may be any
	 * run's (every later VCN shifted), and cutting the last would free
	 * the file's real last clusters; those are left to the claims */
	if (nr != 1)
		return false;
	over = clusters - ((uint64_t)hvcn + 1);
	if (runs[nr - 1].len <= over)
		return false;	/* more than the last run: not a length off */
	yes = fsf_fix_ask(&c->fix, &PR_ATTR_RUN_LONG, obj, le32toh(a->type),
			  (unsigned long long)clusters, 0LL, (long long)hvcn,
			  (unsigned long long)alloc, (unsigned long long)size,
			  (unsigned long long)over);
	if (!yes && c->fix.mode != FSF_MODE_NO)
		return true;
	if (ntfs_attr_set_run_length((uint8_t *)a, nr - 1, runs[nr - 1].len - over)) {
		if (yes)
			fsf_fix_failed(&c->fix);
		return true;
	}
	if (yes)
		write_back(c, recno, rec);
	else if (ntfs_vol_assume_record(&c->vol, recno, rec))
		/* past the budget of assumed records: left as read */
		ntfs_attr_set_run_length((uint8_t *)a, nr - 1, runs[nr - 1].len);
	return true;
}

void ntfs_check_attr_extents(struct ntfs_check *c, uint64_t recno,
			     uint8_t *rec, const char *obj)
{
	uint32_t cs = c->vol.boot.g.cluster_size;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	struct ntfs_mft_record m;
	char why[NTFS_WHY];
	bool list = false;

	memcpy(&m, rec, sizeof(m));
	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1)
		list |= le32toh(a->type) == NTFS_AT_ATTRIBUTE_LIST;
	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1) {
		struct ntfs_attr_nonresident n, was;
		struct ntfs_run *runs;
		uint64_t clusters = 0, want_alloc;
		int64_t lvcn, hvcn;
		bool whole, vcn_bad, alloc_bad, yes;
		int64_t want_lvcn;
		long nr;

		if (!a->non_resident)
			continue;
		nr = ntfs_attr_runs(a, c->vol.boot.g.nr_clusters, &runs, why);
		if (nr < 0)
			continue;	/* scan_attributes reports it */
		for (long i = 0; i < nr; i++)
			clusters += runs[i].len;
		memcpy(&n, a, sizeof(n));
		lvcn = (int64_t)le64toh((uint64_t)n.lowest_vcn);
		hvcn = (int64_t)le64toh((uint64_t)n.highest_vcn);
		if (!list && !le64toh(m.base_mft_record) &&
		    (long_hole(c, recno, rec, a, runs, nr, clusters, obj) ||
		     long_tail(c, recno, rec, a, runs, nr, clusters, obj))) {
			free(runs);
			continue;
		}
		free(runs);
		/* the one extent of an attribute of a record without a list:
		 * it starts at VCN 0 (nothing else could hold VCN 0: a lowest
		 * VCN above it would shift every byte of the data) and its
		 * allocation is exactly its runs (compressed ones aside) */
		whole = !list && !le64toh(m.base_mft_record);
		want_lvcn = whole ? 0 : lvcn;
		want_alloc = clusters * cs;
		vcn_bad = lvcn != want_lvcn || (uint64_t)(hvcn - lvcn + 1) != clusters;
		alloc_bad = whole && !(le16toh(n.h.flags) & 0xff) &&
			    (uint64_t)le64toh((uint64_t)n.allocated_size) != want_alloc;
		if (!vcn_bad && !alloc_bad)
			continue;
		yes = fsf_fix_ask(&c->fix, &PR_ATTR_EXTENT, obj, le32toh(a->type),
				  (unsigned long long)clusters, (long long)lvcn,
				  (long long)hvcn,
				  (unsigned long long)le64toh((uint64_t)n.allocated_size));
		if (!yes && c->fix.mode != FSF_MODE_NO)
			continue;
		n.lowest_vcn = (int64_t)htole64((uint64_t)want_lvcn);
		n.highest_vcn = (int64_t)htole64((uint64_t)(want_lvcn + (int64_t)clusters - 1));
		if (whole && !(le16toh(n.h.flags) & 0xff)) {
			uint64_t size = le64toh((uint64_t)n.data_size);
			uint64_t init = le64toh((uint64_t)n.initialized_size);

			if (size > want_alloc)
				size = want_alloc;
			if (init > size)
				init = size;
			n.allocated_size = (int64_t)htole64(want_alloc);
			n.data_size = (int64_t)htole64(size);
			n.initialized_size = (int64_t)htole64(init);
		}
		memcpy(&was, a, sizeof(was));
		memcpy((uint8_t *)a, &n, sizeof(n));
		if (!yes) {
			/* -n goes on with the sizes -a gives (in memory only):
			 * the file's index entries are judged against them;
			 * not held (past the budget): left as read */
			if (ntfs_vol_assume_record(&c->vol, recno, rec)) {
				memcpy((uint8_t *)a, &was, sizeof(was));
				return;
			}
			continue;
		}
		if (write_back(c, recno, rec))
			return;
	}
}

static bool lists(struct ntfs_check *c, const uint8_t *rec, uint64_t ext)
{
	struct ntfs_run *runs = NULL;
	uint8_t *list = NULL;
	uint64_t len = 0, off = 0;
	long nruns;
	bool found = false;

	if (!ntfs_vol_read_attr(&c->vol, rec, NTFS_AT_ATTRIBUTE_LIST, &list, &len,
				&runs, &nruns)) {
		uint32_t type;
		uint64_t r;

		while (!found && ntfs_list_next(list, len, &off, &type, &r))
			found = r == ext;
	} else {
		/* past the end of a truncated device: not known not to */
		found = ntfs_list_past_end(c, rec);
	}
	free(list);
	free(runs);
	return found;
}

void ntfs_check_extensions(struct ntfs_check *c)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *rec = malloc(rs), *base = malloc(rs);
	char why[NTFS_WHY];

	for (size_t i = 0; rec && base && i < c->nexts; i++) {
		uint64_t e = c->exts[i].recno, b = c->exts[i].base;
		struct ntfs_mft_record bm;
		const char *what = NULL;
		char obj[48];

		if (e < NTFS_FILE_FIRST_USER)
			continue;	/* a system record: pass 1 made it a base */
		/* a base whose repair was declined is left as read, and so
		 * are the records of its file: never cleared for that */
		if (b < c->vol.mft_records && rare_get(c->salvage_left, b))
			continue;
		if (b >= c->vol.mft_records || !cset_get(&c->record_used, b))
			what = "is not in use";
		else if (ntfs_vol_read_record(&c->vol, b, base) ||
			 ntfs_record_check(base, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
			what = "is unreadable";
		else if (memcpy(&bm, base, sizeof(bm)), le64toh(bm.base_mft_record))
			what = "is itself an extension";
		else if (!lists(c, base, e))
			what = "does not list it";
		if (!what)
			continue;
		/* its names are not the base's, whatever is done with it:
		 * pass 3 counts the names again without it */
		rare_set(c->ext_bad, e);
		c->names_inexact = true;
		snprintf(obj, sizeof(obj), "MFT record %llu", (unsigned long long)e);
		if (!fsf_fix_ask(&c->fix, &PR_EXTENSION_ORPHAN, obj,
				 (unsigned long long)b, what))
			continue;
		/* its clusters go with it */
		if (!ntfs_vol_read_record(&c->vol, e, rec) &&
		    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) == NTFS_REC_OK) {
			struct ntfs_attr_cursor cur;
			const struct ntfs_attr_header *a;

			ntfs_attr_cursor_init(&cur, rec);
			while (!c->crosslinked && ntfs_attr_next(&cur, &a, why) == 1) {
				struct ntfs_run *runs;
				long n;

				if (!a->non_resident ||
				    (n = ntfs_attr_runs(a, c->vol.boot.g.nr_clusters,
							&runs, why)) < 0)
					continue;
				for (long r = 0; r < n; r++)
					for (uint64_t k = 0; runs[r].lcn >= 0 && k < runs[r].len; k++) {
						uint64_t l = (uint64_t)runs[r].lcn + k;

						cset_clear(&c->cluster_used, l);
					}
				free(runs);
			}
			ntfs_clear_record(rec, rs, e);
			if (ntfs_check_write_record(c, e, rec))
				fsf_fix_failed(&c->fix);
		}
		cset_clear(&c->record_used, e);
	}
	free(rec);
	free(base);
}
