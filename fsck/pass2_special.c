// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 2: reparse points and extended attributes, file by file (the base
 * record and the extension records that point back at it).  A
 * $REPARSE_POINT must parse (symbolic links, junctions, the WSL tags the
 * Linux driver writes for special files, any other tag by its header),
 * agree with the file's reparse flag and have its entry in
 * $Extend/$Reparse ($R), which must name no other file.  $EA_INFORMATION
 * must say what the $EA chain adds up to.  Damage is repaired in the
 * attribute it hits (a length recomputed, the chain cut where it breaks,
 * the summary recomputed) or the attribute is removed; the file and its
 * data are always kept.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/repair.h"
#include "ntfs/special.h"
#include "ntfs_check.h"
#include "ntfs_problems.h"
#include "ntfs_reparse_index.h"

/* an attribute of interest: which file, where */
struct item {
	uint64_t base, recno;
	uint32_t type;
	uint16_t instance;
};

struct items {
	struct item *v;
	size_t n, cap;
};

static int add_item(struct items *it, uint64_t base, uint64_t recno,
		    uint32_t type, uint16_t instance)
{
	if (it->n == it->cap) {
		size_t cap = it->cap ? it->cap * 2 : 64;
		struct item *g = realloc(it->v, cap * sizeof(*g));

		if (!g)
			return -1;
		it->v = g;
		it->cap = cap;
	}
	it->v[it->n++] = (struct item){ base, recno, type, instance };
	return 0;
}

static int by_base(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	if (x->base != y->base)
		return x->base < y->base ? -1 : 1;
	return x->type < y->type ? -1 : x->type > y->type;
}

/* The attribute of TYPE with INSTANCE in REC: its offset, 0 if none. */
static uint32_t find_attr(const uint8_t *rec, uint32_t type, uint16_t instance,
			  const struct ntfs_attr_header **out)
{
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];

	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1)
		if (le32toh(a->type) == type && le16toh(a->instance) == instance &&
		    !a->name_length) {
			*out = a;
			return (uint32_t)((const uint8_t *)a - rec);
		}
	return 0;
}

/* Per file: the record buffers and what was found. */
struct file {
	struct ntfs_check *c;
	uint64_t base;
	uint16_t seq;
	char obj[NTFS_WHY + 64];
	char why[NTFS_WHY];		/* scratch */
	uint8_t *rec;			/* scratch record */
};

/* The value of an attribute (resident: copied; non-resident: read). */
static int read_value(struct file *f, const struct ntfs_attr_header *a,
		      const uint8_t *rec, uint8_t **val, uint64_t *len,
		      struct ntfs_run **runs, long *nruns)
{
	*runs = NULL;
	*nruns = 0;
	if (!a->non_resident) {
		uint32_t l;
		const void *v = ntfs_attr_value(a, &l);

		*val = malloc(l ? l : 1);
		if (!*val)
			return -ENOMEM;
		memcpy(*val, v, l);
		*len = l;
		return 0;
	}
	return ntfs_vol_read_attr(&f->c->vol, rec, le32toh(a->type), val, len,
				  runs, nruns);
}

/* Remove attribute TYPE/INSTANCE from record RECNO (and from the base's
 * resident attribute list when it is in an extension record); its
 * clusters become free.  0 or -1. */
/* Drop the entry of attribute TYPE/INSTANCE of RECNO from the
 * non-resident $ATTRIBUTE_LIST of BASE (in memory): the list's clusters
 * rewritten, its sizes in BASE following.  0, or -1 (none such). */
static int unlist_nonresident(struct ntfs_check *c, uint8_t *base, uint32_t type,
			      uint16_t instance, uint64_t recno)
{
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *la;
	struct ntfs_run *runs = NULL;
	uint8_t *v = NULL;
	uint64_t len = 0;
	long nruns = 0;
	char why[NTFS_WHY];
	int nv = -1;

	if (ntfs_vol_read_attr(&c->vol, base, NTFS_AT_ATTRIBUTE_LIST, &v, &len,
			       &runs, &nruns))
		return -1;
	if (nruns > 0 && len <= UINT32_MAX)
		nv = ntfs_list_drop_entry(v, (uint32_t)len, type, instance, recno);
	if (nv >= 0 && ntfs_vol_write_runs(&c->vol, runs, nruns, v, len))
		nv = -1;
	if (nv >= 0) {
		ntfs_attr_cursor_init(&cur, base);
		while (ntfs_attr_next(&cur, &la, why) == 1)
			if (le32toh(la->type) == NTFS_AT_ATTRIBUTE_LIST && la->non_resident)
				ntfs_attr_set_data_size((uint8_t *)la, (uint64_t)nv);
	}
	free(v);
	free(runs);
	return nv < 0 ? -1 : 0;
}

static int remove_attr(struct file *f, uint64_t recno, uint32_t type,
		       uint16_t instance)
{
	struct ntfs_check *c = f->c;
	uint32_t rs = c->vol.boot.g.mft_record_size, off;
	const struct ntfs_attr_header *a;

	if (ntfs_vol_read_record(&c->vol, recno, f->rec) ||
	    ntfs_record_check(f->rec, rs, NTFS_MAGIC_FILE, f->why) != NTFS_REC_OK ||
	    !(off = find_attr(f->rec, type, instance, &a)))
		return -1;
	if (a->non_resident) {
		struct ntfs_run *runs;
		char why[NTFS_WHY];
		long n = ntfs_attr_runs(a, c->vol.boot.g.nr_clusters, &runs, why);

		for (long i = 0; i < n; i++)
			for (uint64_t k = 0; runs[i].lcn >= 0 && k < runs[i].len; k++)
				cset_clear(&c->cluster_used, (uint64_t)runs[i].lcn + k);
		if (n >= 0)
			free(runs);
	}
	ntfs_rec_remove_attr(f->rec, rs, off);
	if (recno != f->base) {
		if (ntfs_check_write_record(c, recno, f->rec) ||
		    ntfs_vol_read_record(&c->vol, f->base, f->rec) ||
		    ntfs_record_check(f->rec, rs, NTFS_MAGIC_FILE, f->why) != NTFS_REC_OK)
			return -1;
		if (ntfs_rec_unlist_attr(f->rec, rs, type, instance, recno) < 0 &&
		    unlist_nonresident(c, f->rec, type, instance, recno) < 0)
			return 0;	/* no list names it */
	} else if (ntfs_rec_unlist_attr(f->rec, rs, type, instance, recno) < 0) {
		/* the base's own attribute: its entry in the list too */
		unlist_nonresident(c, f->rec, type, instance, recno);
	}
	return ntfs_check_write_record(c, f->base, f->rec) ? -1 : 0;
}

/* Replace the value of resident attribute TYPE/INSTANCE of RECNO by VAL
 * (LEN bytes), resizing it; non-resident: the data is written into its
 * clusters and its data size set.  0 or -1. */
static int rewrite_value(struct file *f, uint64_t recno, uint32_t type,
			 uint16_t instance, const uint8_t *val, uint32_t len)
{
	struct ntfs_check *c = f->c;
	uint32_t rs = c->vol.boot.g.mft_record_size, off;
	const struct ntfs_attr_header *a;

	if (ntfs_vol_read_record(&c->vol, recno, f->rec) ||
	    ntfs_record_check(f->rec, rs, NTFS_MAGIC_FILE, f->why) != NTFS_REC_OK ||
	    !(off = find_attr(f->rec, type, instance, &a)))
		return -1;
	if (!a->non_resident) {
		if (ntfs_rec_resize_resident(f->rec, rs, off, len))
			return -1;
		memcpy(f->rec + off + le16toh(((const struct ntfs_attr_resident *)
					      (const void *)(f->rec + off))->value_offset),
		       val, len);
	} else {
		struct ntfs_run *runs;
		char why[NTFS_WHY];
		long n = ntfs_attr_runs(a, c->vol.boot.g.nr_clusters, &runs, why);
		struct ntfs_sizes sz;

		if (n < 0)
			return -1;
		ntfs_attr_sizes((const uint8_t *)a, &sz);
		if (len > sz.alloc || ntfs_vol_write_runs(&c->vol, runs, n, val, len)) {
			free(runs);
			return -1;
		}
		free(runs);
		ntfs_attr_set_data_size(f->rec + off, len);
	}
	return ntfs_check_write_record(c, recno, f->rec);
}

/* $STANDARD_INFORMATION's reparse flag (base record) set to HAS. */
static void check_reparse_flag(struct file *f, bool has, uint32_t tag)
{
	struct ntfs_check *c = f->c;
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY], tn[32], what[64];

	if (ntfs_vol_read_record(&c->vol, f->base, f->rec) ||
	    ntfs_record_check(f->rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		return;
	ntfs_attr_cursor_init(&cur, f->rec);
	while (ntfs_attr_next(&cur, &a, why) == 1) {
		uint32_t len, fa;
		uint8_t *v;

		if (le32toh(a->type) != NTFS_AT_STANDARD_INFORMATION || a->non_resident)
			continue;
		v = (uint8_t *)ntfs_attr_value(a, &len);
		if (len < offsetof(struct ntfs_standard_information, file_attributes) + 4)
			return;
		memcpy(&fa, v + offsetof(struct ntfs_standard_information, file_attributes), 4);
		fa = le32toh(fa);
		if (!!(fa & NTFS_FA_REPARSE_POINT) == has)
			return;
		snprintf(what, sizeof(what), "a %s reparse point",
			 ntfs_reparse_tag_name(tag, tn, sizeof(tn)));
		if (!fsf_fix_ask(&c->fix, &PR_REPARSE_FLAG, f->obj,
				 has ? "lack" : "have", has ? what : "none"))
			return;
		fa = htole32(has ? fa | NTFS_FA_REPARSE_POINT : fa & ~NTFS_FA_REPARSE_POINT);
		memcpy(v + offsetof(struct ntfs_standard_information, file_attributes), &fa, 4);
		if (ntfs_check_write_record(c, f->base, f->rec))
			fsf_fix_failed(&c->fix);
		return;
	}
}

/* The file's $REPARSE_POINT (IT): 1 if it has a usable one (*TAG),
 * else 0. */
static int check_reparse(struct file *f, const struct item *it, uint32_t *tag)
{
	struct ntfs_check *c = f->c;
	uint32_t rs = c->vol.boot.g.mft_record_size, fix;
	const struct ntfs_attr_header *a;
	struct ntfs_reparse_view rp;
	struct ntfs_run *runs = NULL;
	uint8_t *val = NULL;
	uint64_t len = 0;
	long nruns;
	char why[NTFS_WHY];
	int ret = 0;

	if (ntfs_vol_read_record(&c->vol, it->recno, f->rec) ||
	    ntfs_record_check(f->rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK ||
	    !find_attr(f->rec, it->type, it->instance, &a))
		return 0;
	if (read_value(f, a, f->rec, &val, &len, &runs, &nruns)) {
		snprintf(why, sizeof(why), "its value cannot be read");
	} else if (len > NTFS_REPARSE_MAX) {
		snprintf(why, sizeof(why), "value of %llu bytes", (unsigned long long)len);
	} else if (!ntfs_reparse_parse(val, (uint32_t)len, &rp, why)) {
		*tag = rp.tag;
		ret = 1;
		goto out;
	} else if ((fix = ntfs_reparse_fixable_len(val, (uint32_t)len))) {
		uint16_t old = (uint16_t)(val[4] | val[5] << 8);

		*tag = (uint32_t)val[0] | (uint32_t)val[1] << 8 |
		       (uint32_t)val[2] << 16 | (uint32_t)val[3] << 24;
		ret = 1;
		if (fsf_fix_ask(&c->fix, &PR_REPARSE_LENGTH, f->obj, old, fix)) {
			val[4] = (uint8_t)fix;
			val[5] = (uint8_t)(fix >> 8);
			if (rewrite_value(f, it->recno, it->type, it->instance,
					  val, (uint32_t)len))
				fsf_fix_failed(&c->fix);
		}
		goto out;
	}
	if (fsf_fix_ask(&c->fix, &PR_REPARSE_CORRUPT, f->obj, why) &&
	    remove_attr(f, it->recno, it->type, it->instance))
		fsf_fix_failed(&c->fix);
out:
	free(val);
	free(runs);
	return ret;
}

/* The file's $EA_INFORMATION (INFO, may be NULL) and $EA (EA, may be
 * NULL). */
static void check_ea(struct file *f, const struct item *info,
		     const struct item *ea)
{
	struct ntfs_check *c = f->c;
	uint32_t rs = c->vol.boot.g.mft_record_size;
	const struct ntfs_attr_header *a;
	struct ntfs_run *runs = NULL;
	uint8_t *val = NULL, want[NTFS_EA_INFO_LEN], have[NTFS_EA_INFO_LEN];
	struct ntfs_ea_info ei;
	struct ntfs_ea_sum s;
	uint64_t len = 0;
	uint32_t mended = 0;
	long nruns;
	char why[NTFS_WHY], iwhy[NTFS_WHY];
	int r;

	if (!ea) {
		if (fsf_fix_ask(&c->fix, &PR_EA_INFO_ALONE, f->obj) &&
		    remove_attr(f, info->recno, info->type, info->instance))
			fsf_fix_failed(&c->fix);
		return;
	}
	if (ntfs_vol_read_record(&c->vol, ea->recno, f->rec) ||
	    ntfs_record_check(f->rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK ||
	    !find_attr(f->rec, ea->type, ea->instance, &a))
		return;
	if (read_value(f, a, f->rec, &val, &len, &runs, &nruns)) {
		snprintf(why, sizeof(why), "its value cannot be read");
		r = -1;
		memset(&s, 0, sizeof(s));
	} else if (len > 65536 + 1024) {
		snprintf(why, sizeof(why), "value of %llu bytes", (unsigned long long)len);
		r = -1;
		memset(&s, 0, sizeof(s));
	} else {
		r = ntfs_ea_sum(val, (uint32_t)len, &s, why);
		/* the whole entries are kept, their chain mended (in memory
		 * until the repair is agreed) */
		if (r && ntfs_ea_mend(val, (uint32_t)len, &mended)) {
			char w2[NTFS_WHY];

			if (ntfs_ea_sum(val, mended, &s, w2))
				memset(&s, 0, sizeof(s));
		}
	}
	free(runs);
	if (r && !s.count) {
		if (fsf_fix_ask(&c->fix, &PR_EA_CORRUPT, f->obj, why)) {
			if (remove_attr(f, ea->recno, ea->type, ea->instance) ||
			    (info && remove_attr(f, info->recno, info->type, info->instance)))
				fsf_fix_failed(&c->fix);
		}
		goto out;
	}
	if (r) {
		if (!fsf_fix_ask(&c->fix, &PR_EA_CHAIN, f->obj, why, s.count))
			goto out;
		if (rewrite_value(f, ea->recno, ea->type, ea->instance, val,
				  mended)) {
			fsf_fix_failed(&c->fix);
			goto out;
		}
	}
	ntfs_ea_info_make(&s, want);
	if (!info) {
		if (fsf_fix_ask(&c->fix, &PR_EA_INFO_MISSING, f->obj, s.count)) {
			/* next to $EA when it is in the base record */
			if (ea->recno != f->base ||
			    ntfs_vol_read_record(&c->vol, f->base, f->rec) ||
			    ntfs_record_check(f->rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK ||
			    ntfs_rec_insert_resident(f->rec, rs, NTFS_AT_EA_INFORMATION,
						     want, sizeof(want)) ||
			    ntfs_check_write_record(c, f->base, f->rec))
				fsf_fix_failed(&c->fix);
		}
		goto out;
	}
	if (ntfs_vol_read_record(&c->vol, info->recno, f->rec) ||
	    ntfs_record_check(f->rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK ||
	    !find_attr(f->rec, info->type, info->instance, &a))
		goto out;
	if (a->non_resident) {
		ei.packed_size = ei.need_ea = 0;
		ei.unpacked_size = 0;
		snprintf(iwhy, sizeof(iwhy), "non-resident");
	} else {
		uint32_t il;
		const uint8_t *iv = ntfs_attr_value(a, &il);

		if (ntfs_ea_info_parse(iv, il, &ei, iwhy))
			memset(&ei, 0, sizeof(ei));
		else if (!memcmp(iv, want, sizeof(want)))
			goto out;	/* as it should be */
		memset(have, 0, sizeof(have));
		memcpy(have, iv, il < sizeof(have) ? il : sizeof(have));
	}
	if (fsf_fix_ask(&c->fix, &PR_EA_INFO, f->obj, ei.packed_size, ei.need_ea,
			ei.unpacked_size, s.count, s.packed, s.need_ea, s.valid_len)) {
		if (a->non_resident) {
			if (remove_attr(f, info->recno, info->type, info->instance) ||
			    ntfs_vol_read_record(&c->vol, f->base, f->rec) ||
			    ntfs_record_check(f->rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK ||
			    ntfs_rec_insert_resident(f->rec, rs, NTFS_AT_EA_INFORMATION,
						     want, sizeof(want)) ||
			    ntfs_check_write_record(c, f->base, f->rec))
				fsf_fix_failed(&c->fix);
		} else if (rewrite_value(f, info->recno, info->type,
					 info->instance, want, sizeof(want))) {
			fsf_fix_failed(&c->fix);
		}
	}
out:
	free(val);
}

/* One file's items (N of them, sorted by type). */
static void check_file(struct file *f, const struct item *v, size_t n,
		       struct ntfs_rp_set *seen)
{
	const struct item *rp = NULL, *info = NULL, *ea = NULL;
	uint32_t tag = 0;
	bool has = false, flagged = false;

	for (size_t i = 0; i < n; i++) {
		if (v[i].type == NTFS_AT_REPARSE_POINT && !rp)
			rp = &v[i];
		else if (v[i].type == NTFS_AT_EA_INFORMATION && !info)
			info = &v[i];
		else if (v[i].type == NTFS_AT_EA && !ea)
			ea = &v[i];
		else if (v[i].type == NTFS_AT_STANDARD_INFORMATION)
			flagged = true;
	}
	ntfs_object_name(f->c, "file", f->base, f->obj, sizeof(f->obj));
	if (rp)
		has = check_reparse(f, rp, &tag) == 1;
	if (rp || flagged)
		check_reparse_flag(f, has, tag);
	if (has && ntfs_rp_set_add(seen, tag, NTFS_MREF(f->base, f->seq)))
		fsf_fix_failed(&f->c->fix);
	if (info || ea)
		check_ea(f, info, ea);
}

/* Every in-use record's attributes of interest, by file. */
static int collect(struct ntfs_check *c, struct items *it, uint8_t *rec)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;

	for (uint64_t r = 0; r < c->vol.mft_records; r++) {
		struct ntfs_attr_cursor cur;
		const struct ntfs_attr_header *a;
		char why[NTFS_WHY];
		uint64_t base;

		if (!cset_get(&c->record_used, r) || ntfs_record_plain(c, r) ||
		    ntfs_vol_read_record(&c->vol, r, rec) ||
		    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
			continue;
		base = ntfs_record_file(rec, r);
		ntfs_attr_cursor_init(&cur, rec);
		while (ntfs_attr_next(&cur, &a, why) == 1) {
			uint32_t t = le32toh(a->type);

			if (t == NTFS_AT_STANDARD_INFORMATION && base == r &&
			    !a->non_resident) {
				/* a file flagged as a reparse point */
				uint32_t len, fa;
				const uint8_t *v = ntfs_attr_value(a, &len);

				if (len < offsetof(struct ntfs_standard_information,
						   file_attributes) + 4)
					continue;
				memcpy(&fa, v + offsetof(struct ntfs_standard_information,
							 file_attributes), 4);
				if ((le32toh(fa) & NTFS_FA_REPARSE_POINT) &&
				    add_item(it, base, r, t, le16toh(a->instance)))
					return -ENOMEM;
				continue;
			}
			if ((t != NTFS_AT_REPARSE_POINT && t != NTFS_AT_EA_INFORMATION &&
			     t != NTFS_AT_EA) || a->name_length)
				continue;
			if (add_item(it, base, r, t, le16toh(a->instance)))
				return -ENOMEM;
		}
	}
	return 0;
}

int ntfs_pass2_special(struct ntfs_check *c)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct items it = { 0 };
	struct ntfs_rp_set seen = { 0 };
	struct file f = { .c = c };
	uint8_t *hdr = malloc(rs);
	int ret;

	f.rec = malloc(rs);
	if (!f.rec || !hdr) {
		ret = -ENOMEM;
		goto out;
	}
	ret = collect(c, &it, f.rec);
	if (ret)
		goto out;
	if (it.n)
		qsort(it.v, it.n, sizeof(*it.v), by_base);
	for (size_t i = 0, j; i < it.n; i = j) {
		struct ntfs_mft_record m;

		for (j = i; j < it.n && it.v[j].base == it.v[i].base; j++)
			;
		f.base = it.v[i].base;
		/* a file whose base record is gone is the orphan pass's */
		if (f.base >= c->vol.mft_records || !cset_get(&c->record_used, f.base) ||
		    ntfs_vol_read_record(&c->vol, f.base, hdr))
			continue;
		memcpy(&m, hdr, sizeof(m));
		f.seq = le16toh(m.sequence_number);
		check_file(&f, it.v + i, j - i, &seen);
	}
	ntfs_reparse_index_check(c, &seen);
out:
	ntfs_rp_set_free(&seen);
	free(it.v);
	free(f.rec);
	free(hdr);
	return ret;
}
