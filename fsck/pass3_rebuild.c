// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 3 repair: rebuild a directory's $I30 index from the $FILE_NAME
 * attributes that name the directory as their parent (collected here in
 * one pass over the records).  The names are sorted by $UpCase collation,
 * each key brought up to date with the file it names, and the index is
 * built and written by ntfs_write_index (pass3_index_write.c, placed by
 * libntfs/index_write.c).
 * Directories whose attributes spill into extension records
 * ($ATTRIBUTE_LIST) go to pass3_rebuild_listed.c.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/name_edit.h"
#include "ntfs_index_write.h"
#include "ntfs_problems.h"

static int cmp_by_collation(const void *x, const void *y, void *upcase)
{
	const struct ntfs_fn_ref *a = *(const struct ntfs_fn_ref *const *)x;
	const struct ntfs_fn_ref *b = *(const struct ntfs_fn_ref *const *)y;
	int r = ntfs_collate_file_name(upcase, a->name, a->name_len, b->name,
				       b->name_len);

	if (r)
		return r;
	if (a->mended != b->mended)
		return a->mended ? 1 : -1;
	return a->recno < b->recno ? -1 : a->recno > b->recno;
}

/* The names pointing to D that belong to records in use, in collation
 * order, one entry per distinct name.  Returns the count or -1. */
long ntfs_dir_names(struct ntfs_check *c, uint64_t d, const uint16_t *upcase,
		    struct ntfs_fn_ref ***out)
{
	size_t lo = 0, hi = c->nnames, n = 0, k = 0;
	struct ntfs_fn_ref **v;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c->names[mid].parent < d)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (hi = lo; hi < c->nnames && c->names[hi].parent == d; hi++)
		n++;
	v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return -1;
	for (size_t i = lo; i < hi; i++) {
		uint64_t r = c->names[i].recno;

		if (r < c->vol.mft_records && cset_get(&c->record_used, r))
			v[k++] = &c->names[i];
	}
	qsort_r(v, k, sizeof(*v), cmp_by_collation, (void *)upcase);
	/* the same name twice (two records claiming it, or one twice): the
	 * first keeps it, the other is renamed (pass3_dupnames.c) or, if
	 * that is refused, left out of the index */
	for (size_t i = 1, first = 0, renamed = 0; i <= k; i++) {
		if (i == k) {
			if (renamed)
				qsort_r(v, k, sizeof(*v), cmp_by_collation, (void *)upcase);
		} else if (ntfs_collate_file_name(upcase, v[first]->name,
						  v[first]->name_len, v[i]->name,
						  v[i]->name_len)) {
			first = i;
		} else if (!ntfs_rename_duplicate(c, d, upcase, v, (long)k, v[first],
						  v[i])) {
			renamed++;
		}
	}
	n = 0;
	for (size_t i = 0; i < k; i++)
		if (!n || ntfs_collate_file_name(upcase, v[n - 1]->name,
						 v[n - 1]->name_len, v[i]->name,
						 v[i]->name_len))
			v[n++] = v[i];
	*out = v;
	return (long)n;
}

static int data_sizes(const struct ntfs_attr_header *a, void *arg)
{
	struct ntfs_data_sizes *d = arg;

	return !d->known && ntfs_data_sizes_of(a, d);
}

/* The entries of directory names V (N of them): each key repeats its
 * file's data sizes and says whether it names a directory. */
struct ntfs_ib_entry *ntfs_dir_entries(struct ntfs_check *c,
				       struct ntfs_fn_ref **v, long n)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct ntfs_ib_entry *e = calloc((size_t)n + 1, sizeof(*e));
	uint8_t *scratch = malloc(rs);

	if (!e || !scratch) {
		free(e);
		free(scratch);
		return NULL;
	}
	for (long i = 0; i < n; i++) {
		struct ntfs_data_sizes sizes = { 0 }, *d = &sizes;

		/* a file's entry repeats its data sizes */
		if (!rset_get(&c->record_dir, v[i]->recno) &&
		    v[i]->recno >= NTFS_FILE_FIRST_USER)
			ntfs_file_foreach(c, v[i]->recno, scratch, data_sizes, d);
		/* a directory's entry says 0 bytes */
		if (d->known || (rset_get(&c->record_dir, v[i]->recno) &&
				 v[i]->recno >= NTFS_FILE_FIRST_USER)) {
			uint64_t al = htole64(d->alloc), sz = htole64(d->size);

			memcpy(v[i]->fn + offsetof(struct ntfs_file_name, allocated_size), &al, 8);
			memcpy(v[i]->fn + offsetof(struct ntfs_file_name, data_size), &sz, 8);
		}
		/* the key says whether it names a directory */
		if (v[i]->recno >= NTFS_FILE_FIRST_USER) {
			uint32_t fa;

			memcpy(&fa, v[i]->fn + offsetof(struct ntfs_file_name, file_attributes), 4);
			fa = le32toh(fa);
			if (rset_get(&c->record_dir, v[i]->recno))
				fa |= NTFS_FA_DUP_FILE_NAME_INDEX_PRESENT;
			else
				fa &= ~(uint32_t)NTFS_FA_DUP_FILE_NAME_INDEX_PRESENT;
			fa = htole32(fa);
			memcpy(v[i]->fn + offsetof(struct ntfs_file_name, file_attributes), &fa, 4);
		}
		e[i].mref = v[i]->recno | (uint64_t)v[i]->seq << 48;
		e[i].key = v[i]->fn;
		e[i].key_len = v[i]->fn_len;
	}
	free(scratch);
	return e;
}

int ntfs_rebuild_dir_index(struct ntfs_check *c, uint64_t d,
			   const uint16_t *upcase, char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *rec = malloc(rs);
	struct ntfs_fn_ref **v = NULL;
	struct ntfs_ib_entry *e = NULL;
	long n;
	int ret = -1;

	if (!rec) {
		snprintf(why, NTFS_WHY, "out of memory");
		goto out;
	}
	if (!upcase) {
		snprintf(why, NTFS_WHY, "$UpCase is unreadable");
		goto out;
	}
	if (ntfs_vol_read_record(&c->vol, d, rec) ||
	    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		goto out;
	if (ntfs_attr_named(rec, NTFS_AT_ATTRIBUTE_LIST, "")) {
		ret = ntfs_rebuild_listed(c, d, rec, upcase, why);
		goto out;
	}
	n = ntfs_dir_names(c, d, upcase, &v);
	if (n < 0 || !(e = ntfs_dir_entries(c, v, n))) {
		snprintf(why, NTFS_WHY, "out of memory");
		goto out;
	}
	ret = ntfs_write_index(c, d, "$I30", NTFS_AT_FILE_NAME,
			       NTFS_COLLATION_FILE_NAME, e, n, why);
out:
	free(e);
	free(v);
	free(rec);
	return ret;
}

bool ntfs_ask_name_mend(struct ntfs_check *c, const char *obj, uint64_t r,
			const uint8_t *u, unsigned int n)
{
	uint8_t fixed[2 * 255];
	uint16_t old[255], mended[255];
	char old8[1024], new8[1024];

	memcpy(fixed, u, 2u * n);
	ntfs_name_units_mend(fixed, n);
	for (unsigned int i = 0; i < n; i++) {
		old[i] = (uint16_t)(u[2 * i] | u[2 * i + 1] << 8);
		mended[i] = (uint16_t)(fixed[2 * i] | fixed[2 * i + 1] << 8);
	}
	ntfs_name_to_utf8(old, n, old8, sizeof(old8));
	ntfs_name_to_utf8(mended, n, new8, sizeof(new8));
	return fsf_fix_ask(&c->fix, &PR_NAME_UNIT, obj, old8,
			   (unsigned long long)r, new8);
}

/* Every $FILE_NAME that names a directory to rebuild, from one pass over
 * all records in use (extension records counted for their base). */
static int collect_names(struct ntfs_check *c, uint8_t *rec, uint8_t *base)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint64_t last_p = UINT64_MAX;
	uint16_t last_seq = 0;
	char why[NTFS_WHY];

	for (uint64_t r = 0; r < c->vol.mft_records; r++) {
		struct ntfs_attr_cursor cur;
		const struct ntfs_attr_header *a;
		struct ntfs_mft_record m;
		uint64_t owner;
		uint16_t seq;
		bool dirty = false;

		if (!cset_get(&c->record_used, r) || rare_get(c->ext_bad, r) ||
		    ntfs_vol_read_record(&c->vol, r, rec) ||
		    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
			continue;
		memcpy(&m, rec, sizeof(m));
		owner = ntfs_record_file(rec, r);
		seq = le16toh(m.sequence_number);
		if (owner >= c->vol.mft_records || !cset_get(&c->record_used, owner))
			continue;
		if (owner != r) {
			/* the entry names the base record, with its sequence */
			if (ntfs_vol_read_record(&c->vol, owner, base))
				continue;
			memcpy(&m, base, sizeof(m));
			seq = le16toh(m.sequence_number);
			if (ntfs_vol_read_record(&c->vol, r, rec) ||
			    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
				continue;
		}
		ntfs_attr_cursor_init(&cur, rec);
		while (ntfs_attr_next(&cur, &a, why) == 1) {
			struct ntfs_file_name fn;
			struct ntfs_fn_ref *n;
			const uint8_t *v;
			uint32_t len;
			uint64_t p;
			bool mended;

			if (le32toh(a->type) != NTFS_AT_FILE_NAME || a->non_resident)
				continue;
			v = ntfs_attr_value(a, &len);
			if (len < sizeof(fn))
				continue;
			memcpy(&fn, v, sizeof(fn));
			p = le64toh(fn.parent_directory) & 0xffffffffffffULL;
			if (!fn.name_length || sizeof(fn) + 2u * fn.name_length > len ||
			    p >= c->vol.mft_records || !rare_get(c->rebuild, p))
				continue;
			/* a NUL or '/' in it: never into an index; mended
			 * (agreed in pass 3, or asked now), or left out */
			mended = false;
			if (!ntfs_name_units_allowed(v + sizeof(fn), fn.name_length)) {
				char obj[1200];

				ntfs_object_name(c, "directory", p, obj, sizeof(obj));
				if (!rare_get(c->mend, owner) &&
				    !ntfs_ask_name_mend(c, obj, owner, v + sizeof(fn),
							fn.name_length))
					continue;
				ntfs_name_units_mend((uint8_t *)v + sizeof(fn), fn.name_length);
				dirty = mended = true;
			}
			/* a parent reference with a stale sequence number is
			 * refreshed in the file and so in its key */
			if (p != last_p && !ntfs_vol_read_record(&c->vol, p, base)) {
				memcpy(&m, base, sizeof(m));
				last_p = p;
				last_seq = le16toh(m.sequence_number);
			}
			if (p == last_p &&
			    (le64toh(fn.parent_directory) >> 48 || owner >= NTFS_FILE_FIRST_USER) &&
			    le64toh(fn.parent_directory) >> 48 != last_seq) {
				uint64_t ref = htole64(p | (uint64_t)last_seq << 48);

				memcpy((uint8_t *)v, &ref, 8);
				dirty = true;
			}
			if (c->nnames == c->cap_names) {
				size_t cap = c->cap_names ? c->cap_names * 2 : 256;
				struct ntfs_fn_ref *g = realloc(c->names, cap * sizeof(*g));

				if (!g)
					return -ENOMEM;
				c->names = g;
				c->cap_names = cap;
			}
			n = &c->names[c->nnames];
			/* the name in host order, then the value (the key) */
			n->fn_len = (uint16_t)(sizeof(fn) + 2u * fn.name_length);
			n->name = malloc(2u * fn.name_length + n->fn_len);
			if (!n->name)
				return -ENOMEM;
			n->fn = (uint8_t *)(n->name + fn.name_length);
			memcpy(n->fn, v, n->fn_len);
			for (unsigned int i = 0; i < fn.name_length; i++)
				n->name[i] = (uint16_t)(v[sizeof(fn) + 2 * i] |
							v[sizeof(fn) + 2 * i + 1] << 8);
			n->recno = owner;
			n->holder = r;
			n->seq = seq;
			n->parent = p;
			n->name_len = fn.name_length;
			n->mended = mended;
			c->nnames++;
		}
		if (dirty && ntfs_check_write_record(c, r, rec))
			fsf_fix_failed(&c->fix);
	}
	return 0;
}

static int cmp_parent(const void *x, const void *y)
{
	const struct ntfs_fn_ref *a = x, *b = y;

	return a->parent < b->parent ? -1 : a->parent > b->parent;
}

void ntfs_rebuild_promise(struct ntfs_check *c, uint64_t d)
{
	long answer = fsf_fix_promise(&c->fix);

	rare_set(c->rebuild, d);
	if (answer < 0)
		return;
	if (c->npromises == c->cap_promises) {
		size_t cap = c->cap_promises ? c->cap_promises * 2 : 64;
		struct ntfs_promise *g = realloc(c->promises, cap * sizeof(*g));

		if (!g)
			return;	/* fsf_fix_failed_object still finds most */
		c->promises = g;
		c->cap_promises = cap;
	}
	c->promises[c->npromises++] = (struct ntfs_promise){ d, answer };
}

int ntfs_rebuild_indexes(struct ntfs_check *c, const uint16_t *upcase)
{
	uint8_t *rec = malloc(c->vol.boot.g.mft_record_size);
	uint8_t *base = malloc(c->vol.boot.g.mft_record_size);
	int ret = rec && base ? collect_names(c, rec, base) : -ENOMEM;

	free(rec);
	free(base);
	if (ret)
		return ret;
	if (c->nnames)
		qsort(c->names, c->nnames, sizeof(*c->names), cmp_parent);
	for (uint64_t d = 0; d < c->vol.mft_records; d++) {
		char why[NTFS_WHY], obj[1200];
		unsigned int failed;

		if (!rare_get(c->rebuild, d))
			continue;
		/* a read failed since the rebuild was agreed: nothing more
		 * is written to the failing device (fsf_fix_ask's rule) */
		if (c->dev.read_errors)
			snprintf(why, sizeof(why), "not written: the device failed reads");
		else if (!ntfs_rebuild_dir_index(c, d, upcase, why))
			continue;
		ntfs_object_name(c, "directory", d, obj, sizeof(obj));
		/* the fixes promised for it did not happen: each is left, and
		 * the failure is not one more problem found */
		failed = fsf_fix_failed_object(&c->fix, obj, FSF_PROMPT_REBUILD);
		for (size_t i = 0; i < c->npromises; i++)
			if (c->promises[i].dir == d)
				failed += fsf_fix_failed_at(&c->fix, c->promises[i].answer);
		fsf_fix_ask(&c->fix, failed ? &PR_INDEX_NOT_REBUILT :
			    &PR_INDEX_REBUILD_FAILED, obj, why);
	}
	return 0;
}
