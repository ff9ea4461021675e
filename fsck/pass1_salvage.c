// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 1: repair the smallest thing.  Before a record's other checks its
 * attributes are walked one by one and what is wrong is repaired where it
 * is, so that one bad field no longer costs the whole file:
 *
 *  - flag bits that do not exist are cleared;
 *  - sizes are made initialized <= data <= allocated, the allocated size
 *    of a single-extent attribute recomputed from its runs;
 *  - a resident value longer than its attribute is cut to what its
 *    content says ($STANDARD_INFORMATION, $FILE_NAME) or to the room;
 *  - a runlist that stops decoding (or leaves the volume) keeps the runs
 *    before the bad one: a user file's $DATA makes the rest a hole (its
 *    size kept), anything else is cut there, sizes following;
 *  - an attribute whose fields are beyond that is removed, the walk going
 *    on after it (its length is sane, or it would not be framed);
 *  - a length that breaks the walk ends the record there, the attributes
 *    before it kept.
 *
 * In a record of an attribute list (a base with $ATTRIBUTE_LIST or an
 * extension record) an attribute is removed only together with its entry
 * in the list, and only when it has no other extent and is not the
 * unnamed $DATA; nothing is cut there.  What cannot be done that way falls
 * back to the old treatment (record cleared), as do system records beyond
 * the in-place repairs and a record that would keep nothing or lose its
 * $STANDARD_INFORMATION.  A file whose $DATA went gets an empty one.

 */
#include "config.h"

#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/attrlist.h"
#include "ntfs_check.h"
#include "ntfs_problems.h"
#include "ntfs/repair.h"
#include "ntfs/special.h"

struct salvage {
	struct ntfs_check *c;
	uint64_t recno;
	uint8_t *rec;
	const char *obj;
	bool structural;	/* attributes may be removed or cut */
	bool changed, declined, assumed;	/* assumed: -n repaired the copy */
	bool drop_asked;	/* the removal salvage_fields returns was asked */
	uint32_t secid_to;	/* the security id the file's $SI is to name */
	uint8_t *base;		/* an extension's base record, when edited */
	uint64_t base_recno;
	/* the base's non-resident $ATTRIBUTE_LIST, when edited: written
	 * with the records, never before */
	uint8_t *list;
	uint64_t list_len;	/* as read (the clusters rewritten) */
	uint32_t list_vlen;	/* as edited */
	struct ntfs_run *list_runs;
	long list_nruns;
	/* the entries dropped from it: (type, instance) of this record */
	struct salvage_drop { uint32_t type; uint16_t inst; } drop[8];
	unsigned int ndrop;	/* more than 8: not noted (-n) */
};

/* The answer YES to a repair of the copy.  -n repairs the copy anyway,
 * to go on with the record as -a leaves it (assumed in memory, never
 * written: ntfs_salvage_attrs). */
static bool asked(struct salvage *s, bool yes)
{
	if (!yes && s->c->fix.mode == FSF_MODE_NO) {
		s->assumed = true;
		yes = true;
	}
	if (yes)
		s->changed = true;
	else
		s->declined = true;
	return yes;
}

static uint32_t used_of(const uint8_t *rec)
{
	struct ntfs_mft_record m;

	memcpy(&m, rec, sizeof(m));
	return le32toh(m.bytes_in_use);
}

/* Does the record have an $ATTRIBUTE_LIST, as far as its frames go? */
static bool has_list(const uint8_t *rec)
{
	struct ntfs_mft_record m;
	uint32_t off, len, used = used_of(rec);
	char why[NTFS_WHY];

	memcpy(&m, rec, sizeof(m));
	for (off = le16toh(m.attrs_offset);
	     ntfs_attr_frame(rec, used, off, &len, why) == 1; off += len)
		if (le32toh(((const struct ntfs_attr_header *)(rec + off))->type) ==
		    NTFS_AT_ATTRIBUTE_LIST)
			return true;
	return false;
}

/* Is A a directory's $I30 $INDEX_ALLOCATION or $BITMAP?  Cutting its
 * runs loses no name: pass 3 finds the index incomplete and rebuilds it
 * from the $FILE_NAMEs of the records. */
static bool dir_index(const uint8_t *rec, const uint8_t *a)
{
	static const uint8_t i30[8] = { '$', 0, 'I', 0, '3', 0, '0', 0 };
	const struct ntfs_attr_header *h = (const void *)a;
	struct ntfs_mft_record m;
	uint32_t t = le32toh(h->type);

	memcpy(&m, rec, sizeof(m));
	return (le16toh(m.flags) & NTFS_MFT_IS_DIRECTORY) &&
	       (t == NTFS_AT_INDEX_ALLOCATION || t == NTFS_AT_BITMAP) &&
	       h->name_length == 4 &&
	       (uint32_t)le16toh(h->name_offset) + 8 <= le32toh(h->length) &&
	       !memcmp(a + le16toh(h->name_offset), i30, 8);
}

/* Is N (a non-resident header) a later extent (lowest VCN above 0) in an
 * extension record of a user file?  Its runs may be cut like a whole
 * attribute's: the sizes live with the first extent, the VCNs it no
 * longer maps are judged with the file's attribute list. */
static bool later_extent(const struct salvage *s, const struct ntfs_attr_nonresident *n)
{
	struct ntfs_mft_record m;

	memcpy(&m, s->rec, sizeof(m));
	return m.base_mft_record && s->recno >= NTFS_FILE_FIRST_USER &&
	       (int64_t)le64toh((uint64_t)n->lowest_vcn) > 0;
}

/*
 * Sparse attribute A (one extent, lowest VCN 0, not compressed, in no
 * list) whose runs decode, but from run K on every one that is not a hole
 * lies wholly outside the volume: none of them holds a readable cluster
 * (those after K are decoded from K's LCN, so K's damage moves them too).
 * They become one hole, the runs before K and the sizes kept
 * (PR_ATTR_RUNS_HOLE, -a too).  A run inside the volume after K is not
 * believed either way: the cut below asks, as before.  Returns 1 (made or
 * declined), 0 (not this case), -1 (no memory).
 */
static int runs_outside_hole(struct salvage *s, uint8_t *a, const char *why)
{
	const struct ntfs_geometry *g = &s->c->vol.boot.g;
	struct ntfs_attr_nonresident n;
	struct ntfs_run *runs;
	uint32_t len;
	uint16_t mpo, flags;
	uint64_t span = 0, tail = 0, gone = 0, nr = g->nr_clusters;
	size_t max, k, kept, bad = 0;
	uint8_t *copy;
	int got, ret = 0;

	memcpy(&n, a, sizeof(n));
	flags = le16toh(n.h.flags);
	len = le32toh(n.h.length);
	mpo = le16toh(n.mapping_pairs_offset);
	if (!s->structural || n.lowest_vcn || !(flags & NTFS_ATTR_SPARSE) ||
	    flags & NTFS_ATTR_COMPRESSION_MASK ||
	    mpo < sizeof(n) + 8 || mpo >= len)
		return 0;
	max = (len - mpo) / 2 + 1;
	runs = calloc(max, sizeof(*runs));
	if (!runs)
		return -1;
	got = ntfs_mp_decode(a + mpo, len - mpo, runs, max);
	for (k = 0; got > 0 && k < (size_t)got; k++)
		if (runs[k].lcn >= 0 && ((uint64_t)runs[k].lcn >= nr ||
					 runs[k].len > nr - (uint64_t)runs[k].lcn))
			break;
	if (got <= 0 || k == (size_t)got)
		goto out;
	for (size_t i = 0; i < (size_t)got; i++) {
		if (__builtin_add_overflow(span, runs[i].len, &span) || span > INT64_MAX)
			goto out;	/* hostile lengths */
		if (i < k)
			continue;
		tail += runs[i].len;
		if (runs[i].lcn < 0)
			continue;
		if ((uint64_t)runs[i].lcn < nr)
			goto out;	/* (part of) a cluster to read */
		gone += runs[i].len;
		bad++;
	}
	if ((int64_t)le64toh((uint64_t)n.highest_vcn) != (int64_t)span - 1)
		goto out;	/* the runs do not map the attribute's VCNs */
	/* the runs before K, then one hole (joined to a hole before it) */
	kept = k;
	if (kept && runs[kept - 1].lcn < 0)
		runs[kept - 1].len += tail;
	else
		runs[kept++] = (struct ntfs_run){ .lcn = -1, .len = tail };
	/* on a copy first: the new runs must fit the attribute's bytes */
	if (!(copy = malloc(len))) {
		ret = -1;
		goto out;
	}
	memcpy(copy, a, len);
	if (ntfs_attr_put_runs(copy, runs, kept, g->cluster_size)) {
		free(copy);
		goto out;
	}
	ret = 1;
	if (asked(s, fsf_fix_ask(&s->c->fix, &PR_ATTR_RUNS_HOLE, s->obj,
				 le32toh(n.h.type), bad,
				 (unsigned long long)(span - tail), why,
				 (unsigned long long)gone, k)))
		memcpy(a, copy, len);
	free(copy);
out:
	free(runs);
	return ret;
}

/*
 * A user file's $DATA (record in no list, one extent) whose runs go bad
 * at some run: the good runs before it (a compressed attribute's down to
 * a compression unit's start, a unit being read whole) are kept, and the
 * VCNs from there to the end of the attribute become one hole, so the
 * file keeps its size and every byte at its offset; the clusters the bad
 * runs gave are unreadable either way.  An attribute neither sparse nor
 * compressed is made sparse (the 8-byte compressed size inserted, the
 * file's $STANDARD_INFORMATION saying sparse for the unnamed $DATA).
 * RUNS (NRUNS) is the valid prefix.  Done on a copy of the record: 1
 * (made or declined), 0 (not this case, or no room: the cut follows),
 * -1 (no memory).
 */
static int runs_bad_hole(struct salvage *s, uint8_t *a, const struct ntfs_run *runs,
			 size_t nruns, const char *why)
{
	const struct ntfs_geometry *g = &s->c->vol.boot.g;
	uint32_t rs = g->mft_record_size, off = (uint32_t)(a - s->rec);
	struct ntfs_attr_nonresident n;
	struct ntfs_run *keep;
	uint64_t want, unit = 1, kept = 0, real = 0, hi, alloc;
	uint16_t flags;
	uint8_t *copy;
	size_t k = 0, kr;
	int ret = 0;

	memcpy(&n, a, sizeof(n));
	flags = le16toh(n.h.flags);
	hi = le64toh((uint64_t)n.highest_vcn);
	alloc = le64toh((uint64_t)n.allocated_size);
	if (!s->structural || le32toh(n.h.type) != NTFS_AT_DATA || n.lowest_vcn ||
	    hi >= INT64_MAX / g->cluster_size || alloc != (hi + 1) * g->cluster_size)
		return 0;	/* the header does not say what the runs mapped */
	want = hi + 1;
	if (flags & NTFS_ATTR_COMPRESSION_MASK) {
		if (n.compression_unit > 16 || !n.compression_unit)
			return 0;
		unit = 1ull << n.compression_unit;
	}
	if (!(keep = calloc(nruns + 1, sizeof(*keep))))
		return -1;
	for (size_t i = 0; i < nruns; i++)
		kept += runs[i].len;
	if (kept > want) {	/* more than the header says: the cut judges */
		free(keep);
		return 0;
	}
	kept -= kept % unit;
	/* the runs of the first KEPT VCNs, the last one shortened */
	for (uint64_t at = 0; k < nruns && at < kept; k++) {
		keep[k] = runs[k];
		if (keep[k].len > kept - at)
			keep[k].len = kept - at;
		at += keep[k].len;
		if (keep[k].lcn >= 0)
			real += keep[k].len;
	}
	kr = k;
	if (k && keep[k - 1].lcn < 0)
		keep[k - 1].len += want - kept;
	else
		keep[k++] = (struct ntfs_run){ .lcn = -1, .len = want - kept };
	copy = malloc(rs);
	if (!copy) {
		free(keep);
		return -1;
	}
	memcpy(copy, s->rec, rs);
	/* the runs first (a truncated array gets its end marker), then the
	 * sparse header when it is not one yet */
	if (!ntfs_attr_put_runs(copy + off, keep, k, g->cluster_size) &&
	    (flags & (NTFS_ATTR_SPARSE | NTFS_ATTR_COMPRESSION_MASK) ||
	     !ntfs_rec_attr_make_sparse(copy, rs, off, real * g->cluster_size))) {
		bool named = n.h.name_length;

		if (!named)
			ntfs_rec_set_file_attr(copy, NTFS_FA_SPARSE_FILE);
		ret = 1;
		if (asked(s, fsf_fix_ask(&s->c->fix, &PR_ATTR_RUNS_BAD_HOLE, s->obj,
					 le32toh(n.h.type), why, kr,
					 (unsigned long long)real,
					 (unsigned long long)kept,
					 (unsigned long long)(want - 1),
					 (unsigned long long)le64toh((uint64_t)n.data_size))))
			memcpy(s->rec, copy, rs);
	}
	free(copy);
	free(keep);
	return ret;
}

/*
 * Whether the runs of non-resident A before its first bad one are real
 * clusters holding all of its data: a cut then keeps the file's own
 * descriptor whole, and it is cut as any attribute (a bad terminator
 * after one good run is one bit away from a good runlist).
 */
static bool prefix_holds_data(struct salvage *s, const uint8_t *a)
{
	const struct ntfs_geometry *g = &s->c->vol.boot.g;
	struct ntfs_attr_nonresident n;
	struct ntfs_run *runs;
	uint32_t len, mpo;
	size_t max, nruns = 0;
	uint64_t bytes = 0, size;
	bool whole = true;

	memcpy(&n, a, sizeof(n));
	len = le32toh(n.h.length);
	mpo = le16toh(n.mapping_pairs_offset);
	size = le64toh((uint64_t)n.data_size);
	if (mpo >= len || !size)
		return false;
	max = (len - mpo) / 2 + 1;
	if (!(runs = calloc(max, sizeof(*runs))))
		return false;
	ntfs_mp_valid_prefix(a + mpo, len - mpo, g->nr_clusters, runs, max, &nruns);
	for (size_t i = 0; i < nruns && bytes < size; i++) {
		if (runs[i].lcn < 0) {
			whole = false;
			break;
		}
		bytes += runs[i].len * g->cluster_size;
	}
	free(runs);
	return whole && bytes >= size;
}

static int unlist(struct salvage *s, uint32_t type, uint16_t inst, bool do_it);

/* The number of the file's base record (S->rec's own, or its base's):
 * whether it is a system file is the base's to say. */
static uint64_t file_recno(const struct salvage *s)
{
	struct ntfs_mft_record m;

	memcpy(&m, s->rec, sizeof(m));
	return m.base_mft_record ? le64toh(m.base_mft_record) & 0xffffffffffffULL : s->recno;
}

/* Does the $STANDARD_INFORMATION of SI_REC (S->rec or its base) grow to
 * name security id ID, with descriptor A removed when it is in the same
 * record?  Tried in COPY only. */
static bool id_fits(const struct salvage *s, uint8_t *copy, const uint8_t *si_rec,
		    const uint8_t *a, uint32_t id)
{
	uint32_t rs = s->c->vol.boot.g.mft_record_size;

	memcpy(copy, si_rec, rs);
	if (si_rec == s->rec)
		ntfs_rec_remove_attr(copy, rs, (uint32_t)(a - s->rec));
	return !ntfs_rec_set_security_id(copy, rs, id);
}

/*
 * A file's own $SECURITY_DESCRIPTOR (A, its only extent) whose runlist is
 * bad: no runs kept make a descriptor of it.  Beside a security id (what
 * NTFS 3.x reads) it is removed: 1, S->drop_asked.  Otherwise it is the
 * file's only security: in a record in no list it becomes the volume's
 * default descriptor, resident, in its place (0); where that does not fit
 * (or in a list, where the list names the attribute) it is removed and
 * the file's $STANDARD_INFORMATION names the id pass 3 would give it (the
 * root directory's if $Secure holds it, else the lowest $Secure holds;
 * grown to 72 bytes from 48: the removed header freed more), set
 * when the walk ends (S->secid_to): 1; with no such id (no usable
 * $Secure), or no room for it in the record of the $SI, the default
 * descriptor takes the attribute's place, its instance kept, list or
 * not (0); where that does not fit either but
 * pass 3 writes the default descriptors to an $SDS holding none, the
 * file is given the root directory's id among them, as above (1).  2: none
 * of these (the runs are cut as any attribute's: the file is never given
 * up for a descriptor).
 * -1: no memory.
 */
static int descriptor_runs(struct salvage *s, uint8_t *a, const char *why)
{
	uint32_t rs = s->c->vol.boot.g.mft_record_size, id, at;
	const struct ntfs_attr_header *h = (const void *)a;
	struct ntfs_mft_record m;
	struct ntfs_secure sec;
	uint8_t *copy, *si_rec = s->rec;
	const uint8_t *sd;
	uint32_t len;
	bool pending;
	int ret = 2;

	memcpy(&m, s->rec, sizeof(m));
	if (!s->structural) {
		/* removed only with its list entry; the base holds the $SI */
		if (file_recno(s) < NTFS_FILE_FIRST_USER ||
		    unlist(s, NTFS_AT_SECURITY_DESCRIPTOR, le16toh(h->instance), false) < 0)
			return 2;
		if (m.base_mft_record)
			si_rec = s->base;
	}
	if ((id = ntfs_security_id_of(si_rec, &at))) {
		if (!asked(s, fsf_fix_ask(&s->c->fix, &PR_SD_RUNS_DROPPED, s->obj,
					  why, id)))
			return 0;
		s->drop_asked = true;
		return 1;
	}
	if (!(copy = malloc(rs)))
		return -1;
	/* the root's: the last of the defaults */
	ntfs_secure_build(&sec);
	len = le32toh(sec.hdr[NTFS_NR_SD - 1].length) - (uint32_t)sizeof(sec.hdr[0]);
	sd = sec.sds + le64toh(sec.hdr[NTFS_NR_SD - 1].offset) + sizeof(sec.hdr[0]);
	if (s->structural) {
		memcpy(copy, s->rec, rs);
		ntfs_rec_remove_attr(copy, rs, (uint32_t)(a - s->rec));
		if (!ntfs_rec_insert_resident(copy, rs, NTFS_AT_SECURITY_DESCRIPTOR, sd, len)) {
			if (asked(s, fsf_fix_ask(&s->c->fix, &PR_SD_RUNS_DEFAULT, s->obj,
						 why, len)))
				memcpy(s->rec, copy, rs);
			free(copy);
			return 0;
		}
	}
	id = ntfs_check_fallback_secid(s->c, &pending);
	if (id && !pending && id_fits(s, copy, si_rec, a, id)) {
		ret = 1;
		if (asked(s, fsf_fix_ask(&s->c->fix, &PR_SD_RUNS_SECID, s->obj, why, id))) {
			s->secid_to = id;
			s->drop_asked = true;
		} else {
			ret = 0;
		}
	} else {
		/* no id $Secure holds, or no room for one in the $SI's
		 * record (a full base, the descriptor in an extension
		 * record): the default in the attribute's place, its
		 * instance kept (a list's entry names it) */
		memcpy(copy, s->rec, rs);
		if (!ntfs_rec_replace_resident(copy, rs, (uint32_t)(a - s->rec), sd, len)) {
			ret = 0;
			if (asked(s, fsf_fix_ask(&s->c->fix, &PR_SD_RUNS_DEFAULT, s->obj,
						 why, len)))
				memcpy(s->rec, copy, rs);
		} else if (pending && id_fits(s, copy, si_rec, a, id)) {
			/* where it does not fit: the id of that descriptor
			 * among the defaults pass 3 writes to the empty $SDS */
			ret = 1;
			if (asked(s, fsf_fix_ask(&s->c->fix, &PR_SD_RUNS_NEWID, s->obj,
						 why, id))) {
				s->secid_to = id;
				s->drop_asked = true;
			} else {
				ret = 0;
			}
		}
	}
	free(copy);
	return ret;
}

/* Is A a file's metadata attribute that may be non-resident ($EA,
 * $LOGGED_UTILITY_STREAM, $REPARSE_POINT, $OBJECT_ID)?  A hole in it
 * reads as no value any reader takes (pass 2 leaves it). */
static bool metadata_attr(const uint8_t *a)
{
	uint32_t t = le32toh(((const struct ntfs_attr_header *)a)->type);

	return t == NTFS_AT_EA || t == NTFS_AT_LOGGED_UTILITY_STREAM ||
	       t == NTFS_AT_REPARSE_POINT || t == NTFS_AT_OBJECT_ID;
}

/*
 * Metadata attribute A (first extent) whose runs go bad after NRUNS valid
 * ones: a hole among them is no part of a value, so only the allocated
 * runs before the first hole are kept (*NRUNS cut to them).  With none
 * left, or in a list (nothing is cut there), the attribute is removed and
 * pass 2 keeps what depends on it in step ($EA_INFORMATION, the reparse
 * flag and $Extend/$Reparse): 1, S->drop_asked.  0: cut at the hole (or
 * declined), -1: give up.
 */
static int metadata_runs(struct salvage *s, uint8_t *a, struct ntfs_run *runs,
			 size_t *nruns, const char *why)
{
	const struct ntfs_attr_header *h = (const void *)a;
	size_t k = 0;

	while (k < *nruns && runs[k].lcn >= 0)
		k++;
	if (k && s->structural) {
		*nruns = k;
		return 0;
	}
	if (!s->structural &&
	    (s->recno < NTFS_FILE_FIRST_USER ||
	     unlist(s, le32toh(h->type), le16toh(h->instance), false) < 0))
		return -1;
	if (!asked(s, fsf_fix_ask(&s->c->fix, &PR_META_RUNS_DROPPED, s->obj,
				  le32toh(h->type), why, k)))
		return 0;
	s->drop_asked = true;
	return 1;
}

/*
 * The runs of non-resident attribute A (at OFF): cut before the first bad
 * run when allowed (a record in no list, or a later extent in an
 * extension record).  Returns 0 (runs fine or cut), 1 (it is removed:
 * S->drop_asked), -1 (give up).
 */
static int salvage_runs(struct salvage *s, uint8_t *a)
{
	const struct ntfs_geometry *g = &s->c->vol.boot.g;
	struct ntfs_attr_nonresident n;
	struct ntfs_run *runs;
	char why[NTFS_WHY];
	uint32_t len;
	size_t max, nruns, stop;
	long r;
	uint64_t clusters = 0;
	bool meta, sd;

	r = ntfs_attr_runs((const void *)a, g->nr_clusters, &runs, why);
	free(runs);
	if (r >= 0)
		return 0;
	memcpy(&n, a, sizeof(n));
	/* a listed file's own descriptor, its only extent: as in no list */
	sd = le32toh(n.h.type) == NTFS_AT_SECURITY_DESCRIPTOR && !n.lowest_vcn &&
	     (s->structural || (file_recno(s) >= NTFS_FILE_FIRST_USER &&
				unlist(s, NTFS_AT_SECURITY_DESCRIPTOR,
				       le16toh(n.h.instance), false) >= 0));
	if (sd && !prefix_holds_data(s, a)) {
		r = descriptor_runs(s, a, why);
		if (r != 2)
			return (int)r;
	}
	r = runs_outside_hole(s, a, why);
	if (r)
		return r < 0 ? -1 : 0;
	meta = metadata_attr(a) && !n.lowest_vcn;
	/* in a list only a later extent is cut: its sizes live elsewhere.
	 * -a cuts it too (PR_EXTENT_RUNS_CUT): clearing the record instead
	 * would lose every run -y keeps */
	if (!s->structural && !later_extent(s, &n) && !meta && !sd)
		return -1;
	len = le32toh(n.h.length);
	max = (len - le16toh(n.mapping_pairs_offset)) / 2 + 1;
	runs = calloc(max, sizeof(*runs));
	if (!runs)
		return -1;
	stop = ntfs_mp_valid_prefix(a + le16toh(n.mapping_pairs_offset),
				    len - le16toh(n.mapping_pairs_offset),
				    g->nr_clusters, runs, max, &nruns);
	/* a later extent keeps at least one run: its VCNs then end early,
	 * and the list check makes the rest a hole or cuts the sizes */
	if (!s->structural && !nruns && !meta && !sd) {
		free(runs);
		return -1;
	}
	if (meta) {
		size_t valid = nruns;

		r = metadata_runs(s, a, runs, &nruns, why);
		if (r || s->declined) {
			free(runs);
			return (int)r;
		}
		if (nruns < valid) {	/* cut at a hole: re-encoded */
			for (size_t i = 0; i < nruns; i++)
				clusters += runs[i].len;
			if (asked(s, fsf_fix_ask(&s->c->fix, &PR_ATTR_RUNS_CUT, s->obj,
						 le32toh(n.h.type), why, nruns,
						 (unsigned long long)clusters)) &&
			    ntfs_attr_put_runs(a, runs, nruns, g->cluster_size)) {
				free(runs);
				return -1;
			}
			free(runs);
			if (s->declined)
				return 0;
			goto check;
		}
	}
	r = runs_bad_hole(s, a, runs, nruns, why);
	if (r) {
		free(runs);
		if (r < 0 || s->declined)
			return r < 0 ? -1 : 0;
		goto check;
	}
	for (size_t i = 0; i < nruns; i++)
		clusters += runs[i].len;
	if (asked(s, fsf_fix_ask(&s->c->fix, dir_index(s->rec, a) ?
				 &PR_INDEX_RUNS_CUT : !s->structural && !sd ?
				 &PR_EXTENT_RUNS_CUT : &PR_ATTR_RUNS_CUT, s->obj,
				 le32toh(n.h.type), why, nruns,
				 (unsigned long long)clusters)))
		ntfs_attr_cut_runs(a, (uint32_t)(le16toh(n.mapping_pairs_offset) + stop),
				   runs, nruns, g->cluster_size);
	free(runs);
	if (s->declined)
		return 0;
check:
	r = ntfs_attr_runs((const void *)a, g->nr_clusters, &runs, why);
	free(runs);
	/* the cut (or the hole) must leave an attribute that parses (VCNs near 2^63) */
	return r < 0 || ntfs_attr_fault((const void *)a, 0, 0, why) != NTFS_AF_NONE ?
	       -1 : 0;
}

/* A whole attribute (the one extent of a record in no list): the
 * allocated size its runs give, or UINT64_MAX when they do not say. */
static uint64_t alloc_from_runs(struct salvage *s, const uint8_t *a)
{
	const struct ntfs_geometry *g = &s->c->vol.boot.g;
	struct ntfs_run *runs;
	char why[NTFS_WHY];
	uint64_t span = 0;
	uint16_t flags;
	long n;

	memcpy(&flags, a + offsetof(struct ntfs_attr_header, flags), 2);
	if (!s->structural || le16toh(flags) & NTFS_ATTR_COMPRESSION_MASK)
		return UINT64_MAX;
	n = ntfs_attr_runs((const void *)a, g->nr_clusters, &runs, why);
	for (long i = 0; i < n; i++)
		span += runs[i].len;
	free(runs);
	return n < 0 ? UINT64_MAX : span * g->cluster_size;
}

/* The VCN range of a whole attribute, from its runs.  0 or -1 (give up). */
static int salvage_vcns(struct salvage *s, uint8_t *a)
{
	const struct ntfs_geometry *g = &s->c->vol.boot.g;
	struct ntfs_attr_nonresident n;
	struct ntfs_run *runs;
	char why[NTFS_WHY];
	uint64_t clusters = 0;
	long nr;

	if (!s->structural)
		return -1;
	nr = ntfs_attr_runs((const void *)a, g->nr_clusters, &runs, why);
	if (nr < 0)
		return -1;
	for (long i = 0; i < nr; i++)
		clusters += runs[i].len;
	memcpy(&n, a, sizeof(n));
	if (asked(s, fsf_fix_ask(&s->c->fix, &PR_ATTR_EXTENT, s->obj,
				 le32toh(n.h.type), (unsigned long long)clusters,
				 (long long)le64toh((uint64_t)n.lowest_vcn),
				 (long long)le64toh((uint64_t)n.highest_vcn),
				 (unsigned long long)le64toh((uint64_t)n.allocated_size))))
		ntfs_attr_set_extent(a, runs, (size_t)nr, g->cluster_size);
	free(runs);
	return 0;
}

/*
 * In-place repair of the framed attribute at OFF.  Returns 0 (it parses
 * now, or the fix was declined), 1 (it must be removed), -1 (give up).
 */
/* The type of the attribute after the one at OFF; NTFS_AT_END when there
 * is none or it does not frame. */
static uint32_t type_after(const uint8_t *rec, uint32_t off)
{
	uint32_t len, next, t;
	char why[NTFS_WHY];

	if (ntfs_attr_frame(rec, used_of(rec), off, &len, why) != 1 ||
	    ntfs_attr_frame(rec, used_of(rec), off + len, &next, why) != 1)
		return NTFS_AT_END;
	memcpy(&t, rec + off + len, 4);
	return le32toh(t);
}

/* The resident $EA_INFORMATION of record REC (its 8-byte value in INFO)
 * when the record holds one and no $EA. */
static bool ea_info_alone(const uint8_t *rec, uint8_t info[NTFS_EA_INFO_LEN])
{
	struct ntfs_mft_record m;
	uint32_t off, len, used = used_of(rec), vlen;
	bool found = false;
	char why[NTFS_WHY];

	memcpy(&m, rec, sizeof(m));
	for (off = le16toh(m.attrs_offset);
	     ntfs_attr_frame(rec, used, off, &len, why) == 1; off += len) {
		const struct ntfs_attr_header *h = (const void *)(rec + off);
		const uint8_t *v;

		if (le32toh(h->type) == NTFS_AT_EA)
			return false;
		if (le32toh(h->type) != NTFS_AT_EA_INFORMATION || h->non_resident ||
		    ntfs_attr_fault(h, off, 0, why) != NTFS_AF_NONE)
			continue;
		v = ntfs_attr_value(h, &vlen);
		if (vlen != NTFS_EA_INFO_LEN)
			continue;
		memcpy(info, v, NTFS_EA_INFO_LEN);
		found = true;
	}
	return found;
}

/* Does attribute A of record REC (framed, its type not defined) hold
 * the $EA of the file's lone $EA_INFORMATION?  Its fields must be sound
 * as an $EA's, and it must hold a resident value whose entries parse
 * (mended on a copy: at least one kept), or a non-resident one of the
 * size $EA_INFORMATION gives. */
static bool holds_ea(const uint8_t *rec, const uint8_t *a)
{
	struct ntfs_attr_header h;
	uint8_t info[NTFS_EA_INFO_LEN], *copy;
	struct ntfs_ea_info ei;
	char why[NTFS_WHY];
	uint32_t vlen, mended, et = htole32(NTFS_AT_EA);
	bool ok = false;

	if (!ea_info_alone(rec, info) ||
	    ntfs_ea_info_parse(info, sizeof(info), &ei, why))
		return false;
	memcpy(&h, a, sizeof(h));
	if (!(copy = malloc(le32toh(h.length))))
		return false;
	memcpy(copy, a, le32toh(h.length));
	memcpy(copy, &et, 4);
	if (ntfs_attr_fault((const void *)copy, 0, 0, why) != NTFS_AF_NONE) {
		/* not sound as an $EA */
	} else if (h.non_resident) {
		struct ntfs_attr_nonresident n;

		memcpy(&n, copy, sizeof(n));
		ok = !n.lowest_vcn && ei.unpacked_size &&
		     le64toh((uint64_t)n.data_size) == ei.unpacked_size;
	} else {
		uint8_t *v = (uint8_t *)ntfs_attr_value((const void *)copy, &vlen);

		ok = vlen && ntfs_ea_mend(v, vlen, &mended) > 0;
	}
	free(copy);
	return ok;
}

/* Could attribute A (its header framed) be of type T by its form? */
static bool form_fits(const uint8_t *rec, const uint8_t *a, uint32_t t)
{
	bool nonres = a[offsetof(struct ntfs_attr_header, non_resident)];
	uint32_t vlen;

	memcpy(&vlen, a + offsetof(struct ntfs_attr_resident, value_length), 4);
	vlen = le32toh(vlen);
	switch (t) {
	case NTFS_AT_STANDARD_INFORMATION:
		return !nonres && (vlen == 48 || vlen == 72);
	case NTFS_AT_FILE_NAME:
		return !nonres && vlen >= sizeof(struct ntfs_file_name);
	case NTFS_AT_OBJECT_ID: case NTFS_AT_VOLUME_NAME:
	case NTFS_AT_VOLUME_INFORMATION: case NTFS_AT_INDEX_ROOT:
	case NTFS_AT_EA_INFORMATION:
		return !nonres;
	case NTFS_AT_INDEX_ALLOCATION:
		return nonres;
	case NTFS_AT_EA:
		return holds_ea(rec, a);
	default:
		return true;
	}
}

/* The type the file's attribute list gives attribute A of this record
 * (the entry naming this record, A's instance, name and lowest VCN); 0
 * when the record is in no list or the list does not say. */
static uint32_t type_by_list(const struct salvage *s, const uint8_t *a)
{
	uint32_t rs = s->c->vol.boot.g.mft_record_size;
	struct ntfs_attr_header h;
	struct ntfs_mft_record m;
	struct ntfs_al_entry e;
	struct ntfs_run *runs = NULL;
	uint8_t *base = NULL, *v = NULL;
	const uint8_t *lrec = s->rec;
	uint64_t len = 0;
	int64_t lowest = 0;
	uint32_t off = 0, t = 0;
	long nr;
	char why[NTFS_WHY];

	memcpy(&h, a, sizeof(h));
	if (h.non_resident) {
		struct ntfs_attr_nonresident n;

		memcpy(&n, a, sizeof(n));
		lowest = (int64_t)le64toh((uint64_t)n.lowest_vcn);
	}
	memcpy(&m, s->rec, sizeof(m));
	if (m.base_mft_record) {
		uint64_t b = le64toh(m.base_mft_record) & 0xffffffffffffULL;
		struct ntfs_mft_record bm;

		base = malloc(rs);
		if (!base || b >= s->c->vol.mft_records ||
		    ntfs_vol_read_record(&s->c->vol, b, base) ||
		    ntfs_record_check(base, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK ||
		    (memcpy(&bm, base, sizeof(bm)), bm.base_mft_record))
			goto out;
		lrec = base;
	}
	if (!has_list(lrec) ||
	    ntfs_vol_read_attr(&s->c->vol, lrec, NTFS_AT_ATTRIBUTE_LIST, &v, &len,
			       &runs, &nr) || len > UINT32_MAX)
		goto out;
	while (ntfs_al_next(v, (uint32_t)len, &off, &e, why) == 1)
		if ((e.mref & 0xffffffffffffULL) == s->recno &&
		    (!(e.mref >> 48) || e.mref >> 48 == le16toh(m.sequence_number)) &&
		    e.instance == le16toh(h.instance) && e.lowest_vcn == lowest &&
		    e.name_len == h.name_length &&
		    (uint32_t)le16toh(h.name_offset) + 2u * h.name_length <= le32toh(h.length) &&
		    !memcmp(e.name, a + le16toh(h.name_offset), 2u * h.name_length)) {
			t = e.type;
			break;
		}
out:
	free(v);
	free(runs);
	free(base);
	return t;
}

/* The one defined type one bit away from TYPE that fits between LAST and
 * NEXT and the form of A; 0 when there is none or more than one. */
static uint32_t type_by_bit(const struct salvage *s, const uint8_t *a,
			    uint32_t type, uint32_t last, uint32_t next)
{
	uint32_t found = 0;

	for (int bit = 0; bit < 32; bit++) {
		uint32_t t = type ^ (1u << bit);

		if (!ntfs_attr_type_valid(t) || !ntfs_type_defined(s->c, t) ||
		    t < last || t > next || !form_fits(s->rec, a, t))
			continue;
		if (found)
			return 0;
		found = t;
	}
	return found;
}

/* A resident value whose offset is off the 8-byte grid: where writers
 * put it (after the header and name), when the value fits there; 0 if
 * not. */
static uint16_t value_offset_fix(const uint8_t *a)
{
	struct ntfs_attr_resident r;
	uint32_t start = sizeof(r);

	memcpy(&r, a, sizeof(r));
	if (r.h.non_resident || !(le16toh(r.value_offset) & 7))
		return 0;
	if (r.h.name_length)
		start = le16toh(r.h.name_offset) + 2u * r.h.name_length;
	start = (start + 7) & ~7u;
	if (start + (uint64_t)le32toh(r.value_length) > le32toh(r.h.length))
		return 0;
	return (uint16_t)start;
}

static int salvage_fields(struct salvage *s, uint32_t off, uint32_t last_type)
{
	uint8_t *a = s->rec + off;
	uint32_t type = le32toh(((struct ntfs_attr_header *)a)->type);
	char why[NTFS_WHY];

	for (int round = 0; round < 8; round++) {
		enum ntfs_attr_fault f = ntfs_attr_fault((const void *)a, off,
							 last_type, why);
		struct ntfs_sizes old, now;
		uint32_t room, want, vlen;
		uint16_t flags, now_ofs16;
		int cut;

		if (s->declined)
			return 0;
		/* fields sound, a type the volume does not define */
		if (f == NTFS_AF_NONE && !ntfs_type_defined(s->c, type))
			f = NTFS_AF_TYPE;
		switch (f) {
		case NTFS_AF_NONE:
			if (a[offsetof(struct ntfs_attr_header, non_resident)])
				return salvage_runs(s, a);
			return 0;
		case NTFS_AF_FLAGS:
			memcpy(&flags, a + offsetof(struct ntfs_attr_header, flags), 2);
			if (asked(s, fsf_fix_ask(&s->c->fix, &PR_ATTR_FLAGS, s->obj,
						 type, off, le16toh(flags),
						 ntfs_attr_known_flags(a))))
				ntfs_attr_clear_unknown_flags(a);
			break;
		case NTFS_AF_RESFLAGS: {
			uint8_t *rf = a + offsetof(struct ntfs_attr_resident, resident_flags);

			if (asked(s, fsf_fix_ask(&s->c->fix, &PR_ATTR_RESIDENT_FLAGS, s->obj,
						 type, off, *rf,
						 *rf & NTFS_RESIDENT_INDEXED)))
				*rf &= NTFS_RESIDENT_INDEXED;
			break;
		}
		case NTFS_AF_SIZES:
			cut = salvage_runs(s, a);
			if (cut)
				return cut;	/* -1, or removed */
			if (s->declined)
				return 0;
			/* a descriptor made resident: judged again */
			if (!a[offsetof(struct ntfs_attr_header, non_resident)])
				break;
			ntfs_attr_sizes(a, &old);
			/* on a copy first: the question states the result */
			{
				uint8_t copy[sizeof(struct ntfs_attr_nonresident)];

				memcpy(copy, a, sizeof(copy));
				ntfs_attr_clamp_sizes(copy, alloc_from_runs(s, a), &now);
			}
			if (!memcmp(&old, &now, sizeof(old)))
				break;	/* the runs cut fixed them */
			if (asked(s, fsf_fix_ask(&s->c->fix, &PR_ATTR_SIZES, s->obj, type,
						 (unsigned long long)old.alloc,
						 (unsigned long long)old.data,
						 (unsigned long long)old.init,
						 (unsigned long long)now.alloc,
						 (unsigned long long)now.data,
						 (unsigned long long)now.init)))
				ntfs_attr_clamp_sizes(a, alloc_from_runs(s, a), &now);
			break;
		case NTFS_AF_TYPE: {
			uint32_t next = type_after(s->rec, off);
			uint32_t t = type_by_list(s, a);
			const struct fsf_problem *pr = &PR_ATTR_TYPE_LISTED;

			/* the file's attribute list names it: its entry says
			 * the type, when that fits the place and the form */
			if (t && (!ntfs_attr_type_valid(t) || !ntfs_type_defined(s->c, t) ||
				  t < last_type || t > next || !form_fits(s->rec, a, t)))
				t = 0;
			if (!t) {
				t = type_by_bit(s, a, type, last_type, next);
				pr = &PR_ATTR_TYPE;
			}
			/* not one bit away: what it holds may say */
			if (!t && last_type <= NTFS_AT_EA && next >= NTFS_AT_EA &&
			    holds_ea(s->rec, a)) {
				t = NTFS_AT_EA;
				pr = &PR_ATTR_TYPE_EA;
			}
			if (!t)
				return 1;	/* dropped, if it may be */
			if (asked(s, pr != &PR_ATTR_TYPE_EA ?
				  fsf_fix_ask(&s->c->fix, pr, s->obj, off, type, t) :
				  fsf_fix_ask(&s->c->fix, pr, s->obj, off, type))) {
				uint32_t le = htole32(t);

				memcpy(a, &le, 4);
				type = t;
			}
			break;
		}
		case NTFS_AF_VALUE: {
			uint16_t vofs = value_offset_fix(a), now_ofs;

			memcpy(&now_ofs, a + offsetof(struct ntfs_attr_resident, value_offset), 2);
			if (vofs) {
				if (asked(s, fsf_fix_ask(&s->c->fix, &PR_ATTR_VALUE_OFFSET,
							 s->obj, type, le16toh(now_ofs), vofs))) {
					vofs = htole16(vofs);
					memcpy(a + offsetof(struct ntfs_attr_resident, value_offset),
					       &vofs, 2);
				}
				break;
			}
		}
			room = ntfs_attr_value_room(a);
			if (room == UINT32_MAX)
				return 1;
			memcpy(&vlen, a + offsetof(struct ntfs_attr_resident, value_length), 4);
			vlen = le32toh(vlen);
			want = ntfs_attr_value_length_of(a, room);
			if (!want && (type == NTFS_AT_STANDARD_INFORMATION ||
				      type == NTFS_AT_FILE_NAME))
				return 1;	/* its content does not fit */
			if (want) {
				if (asked(s, fsf_fix_ask(&s->c->fix, vlen < want ?
							 &PR_ATTR_VALUE_SHORT :
							 &PR_ATTR_VALUE_LENGTH,
							 s->obj, type, vlen, want)))
					ntfs_attr_set_value_length(a, want);
			} else if ((want = ntfs_attr_value_length_one_bit(a, room))) {
				if (asked(s, fsf_fix_ask(&s->c->fix, &PR_ATTR_VALUE_BIT,
							 s->obj, type, vlen, want)))
					ntfs_attr_set_value_length(a, want);
			} else if (asked(s, fsf_fix_ask(&s->c->fix, &PR_ATTR_VALUE_CUT,
							s->obj, type, vlen, room))) {
				ntfs_attr_set_value_length(a, room);
			}
			break;
		case NTFS_AF_VCN:
			if (salvage_vcns(s, a) < 0)
				return 1;
			break;
		case NTFS_AF_NAMELEN: {
			/* the value's length says how long the name is, when
			 * it holds a whole name after the fixed part */
			uint32_t fixed = sizeof(struct ntfs_file_name);
			uint8_t *nl;

			memcpy(&vlen, a + offsetof(struct ntfs_attr_resident, value_length), 4);
			memcpy(&now_ofs16, a + offsetof(struct ntfs_attr_resident, value_offset), 2);
			vlen = le32toh(vlen);
			if (vlen <= fixed || (vlen - fixed) & 1 || (vlen - fixed) / 2 > 255)
				return 1;
			nl = a + le16toh(now_ofs16) + offsetof(struct ntfs_file_name, name_length);
			if (asked(s, fsf_fix_ask(&s->c->fix, &PR_FILE_NAME_LENGTH, s->obj,
						 vlen, (vlen - fixed) / 2)))
				*nl = (uint8_t)((vlen - fixed) / 2);
			break;
		}
		case NTFS_AF_NAME: {
			uint16_t noff, aflags, at;

			/* where writers put it: the header's end (a compressed
			 * or sparse one holds compressed_size, 0x48) */
			memcpy(&aflags, a + offsetof(struct ntfs_attr_header, flags), 2);
			at = !a[offsetof(struct ntfs_attr_header, non_resident)] ? 0x18 :
			     le16toh(aflags) & 0x8001u ? 0x48 : 0x40;

			/* a name of its own length cannot be placed again */
			if (a[offsetof(struct ntfs_attr_header, name_length)])
				return 1;
			memcpy(&noff, a + offsetof(struct ntfs_attr_header, name_offset), 2);
			if (asked(s, fsf_fix_ask(&s->c->fix, &PR_ATTR_NAME_OFFSET, s->obj, type,
						 le16toh(noff), at))) {
				noff = htole16(at);
				memcpy(a + offsetof(struct ntfs_attr_header, name_offset), &noff, 2);
			}
			break;
		}
		default:
			return 1;
		}
	}
	return (ntfs_attr_fault((const void *)a, off, last_type, why) == NTFS_AF_NONE &&
		ntfs_type_defined(s->c, type)) || s->declined ? 0 : 1;
}

/* The same in the base record's (S->base, or S->rec when it is the base)
 * non-resident $ATTRIBUTE_LIST: edited in memory (its sizes follow, allocation kept), written at the end. */
static int unlist_nonresident(struct salvage *s, uint32_t type, uint16_t inst,
			      bool do_it)
{
	struct ntfs_check *c = s->c;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *la;
	uint8_t *buf, *base = s->base ? s->base : s->rec;
	char why[NTFS_WHY];
	int nv;

	if (!s->list) {
		if (ntfs_vol_read_attr(&c->vol, base, NTFS_AT_ATTRIBUTE_LIST, &s->list,
				       &s->list_len, &s->list_runs, &s->list_nruns) ||
		    s->list_nruns <= 0 || s->list_len > UINT32_MAX) {
			free(s->list);
			free(s->list_runs);
			s->list = NULL;
			s->list_runs = NULL;
			return -1;
		}
		s->list_vlen = (uint32_t)s->list_len;
	}
	buf = do_it ? s->list : malloc(s->list_vlen ? s->list_vlen : 1);
	if (!buf)
		return -1;
	if (!do_it)
		memcpy(buf, s->list, s->list_vlen);
	nv = ntfs_list_drop_entry(buf, s->list_vlen, type, inst, s->recno);
	if (!do_it) {
		free(buf);
		return nv < 0 ? -1 : 0;
	}
	if (nv < 0)
		return -1;
	if (s->ndrop < 8)
		s->drop[s->ndrop] = (struct salvage_drop){ type, inst };
	s->ndrop++;
	s->list_vlen = (uint32_t)nv;
	ntfs_attr_cursor_init(&cur, base);
	while (ntfs_attr_next(&cur, &la, why) == 1)
		if (le32toh(la->type) == NTFS_AT_ATTRIBUTE_LIST && la->non_resident)
			ntfs_attr_set_data_size((uint8_t *)la, (uint64_t)nv);
	return 0;
}

/*
 * In a file with an attribute list, an attribute (TYPE, INST) of this
 * record can be removed only with its entry in the list (the attribute
 * must have no other extent).  Returns the bytes the record shrinks by
 * before the attribute (its own list), 0, or -1 when it cannot be done.
 * DO: really do it (otherwise only find out on a copy).
 */
static int unlist(struct salvage *s, uint32_t type, uint16_t inst, bool do_it)
{
	uint32_t rs = s->c->vol.boot.g.mft_record_size;
	struct ntfs_mft_record m;
	uint8_t *tmp = malloc(rs);
	char why[NTFS_WHY];
	int d = -1;

	if (!tmp)
		return -1;
	memcpy(&m, s->rec, sizeof(m));
	if (!m.base_mft_record) {
		memcpy(tmp, s->rec, rs);
		d = ntfs_rec_unlist_attr(do_it ? s->rec : tmp, rs, type, inst,
					 s->recno);
		/* a non-resident list: edited beside the record */
		if (d < 0)
			d = unlist_nonresident(s, type, inst, do_it);
		goto out;
	}
	if (!s->base) {
		struct ntfs_mft_record bm;

		s->base_recno = le64toh(m.base_mft_record) & 0xffffffffffffULL;
		s->base = malloc(rs);
		if (!s->base || s->base_recno >= s->c->vol.mft_records ||
		    ntfs_vol_read_record(&s->c->vol, s->base_recno, s->base) ||
		    ntfs_record_check(s->base, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK ||
		    (memcpy(&bm, s->base, sizeof(bm)), bm.base_mft_record)) {
			free(s->base);
			s->base = NULL;
			goto out;
		}
	}
	memcpy(tmp, s->base, rs);
	d = ntfs_rec_unlist_attr(do_it ? s->base : tmp, rs, type, inst,
				 s->recno);
	if (d < 0)
		d = unlist_nonresident(s, type, inst, do_it);
	else
		d = 0;	/* the shift is in the base record */
out:
	free(tmp);
	return d;
}


/* Does the resident value of A parse as a $FILE_NAME: a parent record in
 * the volume, a name of 1-255 units that fills the value (to its 8-byte
 * padding) with no NUL or '/', a namespace that exists? */
static bool value_is_file_name(const struct ntfs_check *c, const uint8_t *a)
{
	const struct ntfs_attr_header *h = (const void *)a;
	struct ntfs_file_name fn;
	const uint8_t *v;
	uint32_t len, need;
	char why[NTFS_WHY];

	if (h->non_resident || ntfs_attr_fault(h, 0, 0, why) != NTFS_AF_NONE)
		return false;
	v = ntfs_attr_value(h, &len);
	if (!v || len < sizeof(fn))
		return false;
	memcpy(&fn, v, sizeof(fn));
	need = sizeof(fn) + 2u * fn.name_length;
	if (!fn.name_length || fn.name_type > NTFS_NS_WIN32_AND_DOS ||
	    len < need || len > ((need + 7) & ~7u) ||
	    (le64toh(fn.parent_directory) & 0xffffffffffffULL) >= c->vol.mft_records)
		return false;
	for (uint32_t i = 0; i < fn.name_length; i++) {
		uint16_t u = (uint16_t)(v[sizeof(fn) + 2 * i] | v[sizeof(fn) + 2 * i + 1] << 8);

		if (!u || u == '/')
			return false;
	}
	return true;
}

/*
 * In a record of an attribute list, the attribute at OFF has a type
 * NTFS defines but its list entry says $FILE_NAME, which fits its place
 * (after LAST, before the next) and its value parses as one: the type
 * was flipped (a $FILE_NAME made $BITMAP is otherwise out of order and
 * costs the record, or is dropped with its name).  The list's type is put
 * back (PR_ATTR_TYPE_NAME_LISTED).
 */
static void listed_file_name(struct salvage *s, uint32_t off, uint32_t last)
{
	uint8_t *a = s->rec + off;
	uint32_t type = le32toh(((struct ntfs_attr_header *)a)->type), le;

	if (s->structural || type == NTFS_AT_FILE_NAME || last > NTFS_AT_FILE_NAME ||
	    type_after(s->rec, off) < NTFS_AT_FILE_NAME ||
	    !value_is_file_name(s->c, a) || type_by_list(s, a) != NTFS_AT_FILE_NAME)
		return;
	if (!asked(s, fsf_fix_ask(&s->c->fix, &PR_ATTR_TYPE_NAME_LISTED, s->obj,
				  off, type)))
		return;
	le = htole32(NTFS_AT_FILE_NAME);
	memcpy(a, &le, 4);
}

/* The walk of ntfs_salvage_attrs over S->rec.  0, 1 (declined), -1. */
static int salvage_walk(struct salvage *s)
{
	struct ntfs_check *c = s->c;
	uint8_t *rec = s->rec;
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct ntfs_mft_record m;
	uint32_t off, len, last_type = 0, before_last = 0, first_type = 0;
	unsigned int kept = 0;
	bool data = false, dir, removed = false;
	char why[NTFS_WHY];
	int r;

	memcpy(&m, rec, sizeof(m));
	s->structural = !le64toh(m.base_mft_record) &&
			s->recno >= NTFS_FILE_FIRST_USER && !has_list(rec);
	dir = le16toh(m.flags) & NTFS_MFT_IS_DIRECTORY;
	off = le16toh(m.attrs_offset);
	for (;;) {
		const struct ntfs_attr_header *a;
		uint32_t type;

		r = ntfs_attr_frame(rec, used_of(rec), off, &len, why);
		if (r == 0)
			break;
		if (r < 0) {
			/* a list may hide behind the break: only cut after
			 * the types that come before $ATTRIBUTE_LIST's place */
			if (!s->structural || last_type <= NTFS_AT_ATTRIBUTE_LIST ||
			    off > rs - 8)
				return -1;
			if (asked(s, fsf_fix_ask(&c->fix, &PR_ATTR_CHAIN_CUT, s->obj,
						 why, kept))) {
				ntfs_rec_end_at(rec, rs, off);
				removed = true;
			}
			break;
		}
		a = (const void *)(rec + off);
		listed_file_name(s, off, last_type);
		if (s->declined)
			break;
		type = le32toh(a->type);
		r = salvage_fields(s, off, last_type);
		if (r < 0)
			return -1;
		type = le32toh(a->type);	/* a flipped type bit put back */
		if (s->declined)
			break;
		if (r > 0) {
			enum ntfs_attr_fault f = ntfs_attr_fault(a, off, last_type, why);

			bool listed = !s->structural;
			uint16_t inst = le16toh(a->instance);

			if (type == NTFS_AT_STANDARD_INFORMATION ||
			    type == NTFS_AT_ATTRIBUTE_LIST)
				return -1;
			/* out of order but in order after the one before the
			 * previous: which of the two is wrong is not known */
			if (f == NTFS_AF_ORDER && type >= before_last)
				return -1;
			/* in an attribute list: its entry goes too, never the
			 * unnamed $DATA (the file's content) */
			if (listed && (s->recno < NTFS_FILE_FIRST_USER ||
				       (type == NTFS_AT_DATA && !a->name_length) ||
				       unlist(s, type, inst, false) < 0))
				return -1;
			if (s->drop_asked) {
				s->drop_asked = false;	/* salvage_runs asked */
			} else if (!ntfs_type_defined(c, type)) {
				/* named by its path: the whole file is not
				 * what goes */
				char file[1200];

				ntfs_object_name(c, "file", s->base ? s->base_recno :
						 ntfs_record_file(s->rec, s->recno),
						 file, sizeof(file));
				if (!asked(s, fsf_fix_ask(&c->fix, &PR_ATTR_TYPE_UNKNOWN, file,
							  off, type)))
					break;
			} else if (!asked(s, fsf_fix_ask(&c->fix, &PR_ATTR_DROPPED, s->obj, why))) {
				break;
			}
			ntfs_rec_remove_attr(rec, rs, off);
			if (listed) {
				int d = unlist(s, type, inst, true);

				if (d < 0)
					return -1;
				off -= (uint32_t)d;
			}
			removed = true;
			continue;
		}
		if (!kept)
			first_type = type;
		data |= type == NTFS_AT_DATA && !a->name_length;
		dir |= type == NTFS_AT_INDEX_ROOT;
		before_last = last_type;
		last_type = type;
		kept++;
		/* a repair may have grown it (a header made sparse) */
		if (ntfs_attr_frame(rec, used_of(rec), off, &len, why) != 1)
			return -1;
		off += len;
	}
	if (s->declined)
		return 1;
	/* a base record begins with its $STANDARD_INFORMATION */
	if (!kept || (s->structural && first_type != NTFS_AT_STANDARD_INFORMATION))
		return -1;	/* nothing usable left: cleared as before */
	/* a file whose $DATA went is a file of 0 bytes, not a broken one;
	 * only a base record in no list holds all of the file (an extension
	 * record holds no unnamed $DATA of its own, and a list's unnamed
	 * $DATA is never removed) */
	if (removed && s->structural && !data && !dir &&
	    ntfs_rec_add_empty_data(rec, rs))
		return -1;
	/* a descriptor removed for the root's security id (descriptor_runs) */
	if (s->secid_to &&
	    ntfs_rec_set_security_id(le64toh(m.base_mft_record) ? s->base : rec, rs,
				     s->secid_to))
		return -1;
	return 0;
}

/* Does every attribute parse and every runlist decode inside the volume?
 * (the common case, without allocating) */
static bool record_sound(const struct ntfs_check *c, const uint8_t *rec)
{
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];
	int r;

	ntfs_attr_cursor_init(&cur, rec);
	while ((r = ntfs_attr_next(&cur, &a, why)) == 1) {
		struct ntfs_attr_nonresident n;
		size_t nruns, stop, room;

		if (!ntfs_type_defined(c, le32toh(a->type)))
			return false;
		/* a name with another type: the list may say $FILE_NAME */
		if (!a->non_resident && le32toh(a->type) != NTFS_AT_FILE_NAME &&
		    le64toh(((const struct ntfs_mft_record *)rec)->base_mft_record) &&
		    value_is_file_name(c, (const uint8_t *)a))
			return false;
		if (!a->non_resident)
			continue;
		memcpy(&n, a, sizeof(n));
		room = le32toh(n.h.length) - le16toh(n.mapping_pairs_offset);
		stop = ntfs_mp_valid_prefix((const uint8_t *)a +
					    le16toh(n.mapping_pairs_offset), room,
					    c->vol.boot.g.nr_clusters, NULL, 0, &nruns);
		if (((const uint8_t *)a)[le16toh(n.mapping_pairs_offset) + stop])
			return false;
	}
	return r == 0;
}

/* -n: the list entries S dropped, noted for the list check; 0, or -1
 * (not the list of another record, more than 8, no memory: the salvage
 * is left as declined) */
static int note_unlisted(struct ntfs_check *c, const struct salvage *s)
{
	/* S->list is read from S->base, or from S->rec when it is the base */
	uint64_t base = s->base ? s->base_recno : s->recno;
	struct ntfs_unlisted *u;

	if (!s->list || !s->ndrop || s->ndrop > 8)
		return -1;
	u = realloc(c->unlisted, (c->nunlisted + s->ndrop) * sizeof(*u));
	if (!u)
		return -1;
	c->unlisted = u;
	for (unsigned int i = 0; i < s->ndrop; i++)
		u[c->nunlisted++] = (struct ntfs_unlisted){
			base, s->recno, s->drop[i].type, s->drop[i].inst };
	return 0;
}

/* -n: the sizes of base record REC's non-resident $ATTRIBUTE_LIST put
 * back to those of READ (the record as read): the list's clusters are
 * not rewritten, the entries dropped are noted instead (note_unlisted).
 * 0, or -1 (either has no such list) */
static int list_sizes_as_read(uint8_t *rec, const uint8_t *read)
{
	const struct ntfs_attr_header *a, *ra = NULL;
	struct ntfs_attr_cursor cur;
	char why[NTFS_WHY];
	size_t d = offsetof(struct ntfs_attr_nonresident, data_size),
	       i = offsetof(struct ntfs_attr_nonresident, initialized_size);

	ntfs_attr_cursor_init(&cur, read);
	while (!ra && ntfs_attr_next(&cur, &a, why) == 1)
		if (le32toh(a->type) == NTFS_AT_ATTRIBUTE_LIST && a->non_resident)
			ra = a;
	if (!ra)
		return -1;
	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1)
		if (le32toh(a->type) == NTFS_AT_ATTRIBUTE_LIST && a->non_resident) {
			memcpy((uint8_t *)a + d, (const uint8_t *)ra + d, 8);
			memcpy((uint8_t *)a + i, (const uint8_t *)ra + i, 8);
			return 0;
		}
	return -1;
}

int ntfs_salvage_attrs(struct ntfs_check *c, uint64_t recno, uint8_t *rec,
		       const char *obj)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct salvage s = { .c = c, .recno = recno, .obj = obj };
	int ret;

	if (record_sound(c, rec))
		return 0;

	/* repaired on a copy: a record given up on stays as it was read */
	s.rec = malloc(rs);
	if (!s.rec)
		return -1;
	memcpy(s.rec, rec, rs);
	ret = salvage_walk(&s);
	if (ret >= 0 && s.changed && s.assumed) {
		/* -n: checked on as repaired; the entries of a non-resident
		 * list removed with the attributes are noted for the list
		 * check, the list's sizes left as read (the base record's
		 * edit is only the list's size; a base record salvaged
		 * itself is assumed with its other edits).  Not when the
		 * repair edits an extension's base record otherwise: left
		 * alone, as declined */
		bool nlist = s.list && s.list_vlen != s.list_len;
		size_t noted = c->nunlisted;

		if ((s.base && !nlist) ||
		    (nlist && ((!s.base && list_sizes_as_read(s.rec, rec)) ||
			       note_unlisted(c, &s))))
			ret = 1;
		else if (ntfs_vol_assume_record(&c->vol, recno, s.rec)) {
			c->nunlisted = noted;
			ret = 1;	/* not held: left as read */
		} else
			memcpy(rec, s.rec, rs);
	} else if (ret >= 0 && s.changed) {
		memcpy(rec, s.rec, rs);
		/* the list first: a record never names what it lost */
		if ((s.list && s.list_vlen != s.list_len &&
		     ntfs_vol_write_runs(&c->vol, s.list_runs, s.list_nruns, s.list,
					 s.list_len)) ||
		    ntfs_check_write_record(c, recno, rec) ||
		    (s.base && ntfs_check_write_record(c, s.base_recno, s.base)))
			fsf_fix_failed(&c->fix);
	}
	free(s.list);
	free(s.list_runs);
	free(s.base);
	free(s.rec);
	return ret;
}
