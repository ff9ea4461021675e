// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libntfs: a file's attributes wherever they are -- its base record and
 * the extension records its $ATTRIBUTE_LIST names -- read on demand, so
 * that a checker can look at the file an index entry names without
 * keeping every name in memory.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/attrlist.h"
#include "ntfs/file_attrs.h"
#include "ntfs/volume_io.h"

/* An attribute name: ASCII, or else LEN little-endian UTF-16 units. */
struct attr_name {
	const char *ascii;
	const uint8_t *u16;
	uint8_t len;
};

static bool named(const struct ntfs_attr_header *a, const struct attr_name *nm)
{
	if (nm->ascii)
		return ntfs_attr_has_name(a, nm->ascii);
	return a->name_length == nm->len &&
	       (!nm->len || !memcmp((const uint8_t *)a + le16toh(a->name_offset),
				    nm->u16, 2u * nm->len));
}

/* The attribute TYPE named NM of REC whose lowest VCN is VCN, or NULL; a
 * resident one stands for VCN 0 when RESIDENT, else it is passed over. */
static const struct ntfs_attr_header *find_extent(const uint8_t *rec, uint32_t type,
						  const struct attr_name *nm,
						  int64_t vcn, bool resident)
{
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	struct ntfs_attr_nonresident n;
	char why[NTFS_WHY];

	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1) {
		if (le32toh(a->type) != type || !named(a, nm))
			continue;
		if (!a->non_resident) {
			if (resident)
				return vcn ? NULL : a;
			continue;
		}
		memcpy(&n, a, sizeof(n));
		if ((int64_t)le64toh((uint64_t)n.lowest_vcn) == vcn)
			return a;
	}
	return NULL;
}

const struct ntfs_attr_header *ntfs_attr_unnamed_extent(const uint8_t *rec,
							uint32_t type,
							int64_t vcn)
{
	return find_extent(rec, type, &(struct attr_name){ .ascii = "" }, vcn, false);
}

const struct ntfs_attr_header *ntfs_attr_extent(const uint8_t *rec, uint32_t type,
						const char *name, int64_t vcn)
{
	return find_extent(rec, type, &(struct attr_name){ .ascii = name }, vcn, true);
}

const struct ntfs_attr_header *ntfs_attr_extent_u16(const uint8_t *rec, uint32_t type,
						    const uint8_t *name,
						    uint8_t name_len, int64_t vcn)
{
	return find_extent(rec, type,
			   &(struct attr_name){ .u16 = name, .len = name_len },
			   vcn, false);
}

int ntfs_vol_read_listed(struct ntfs_vol *v, ntfs_rec_in_use in_use,
			 const void *in_use_arg, uint64_t d, uint64_t mref,
			 uint8_t *buf, char *why)
{
	uint64_t x = mref & 0xffffffffffffULL;

	if (x >= v->mft_records || (in_use && !in_use(in_use_arg, x)) ||
	    ntfs_vol_read_record(v, x, buf) ||
	    ntfs_record_check(buf, v->boot.g.mft_record_size, NTFS_MAGIC_FILE,
			      why) != NTFS_REC_OK) {
		snprintf(why, NTFS_WHY, "MFT record %llu is unusable",
			 (unsigned long long)x);
		return -1;
	}
	return ntfs_record_listed(buf, d, mref, why) ? 0 : -1;
}

/* ntfs_vol_extents_runs: the extents met in the records of a file */
struct extents {
	uint32_t type;
	const char *name;
	uint64_t nr_clusters;
	struct ntfs_attr_extent *x;
	size_t n, cap;
	uint64_t size;
	int err;			/* -1 (WHY) or -ENOMEM */
	char why[NTFS_WHY];
};

static int add_extent(const struct ntfs_attr_header *a, void *arg)
{
	struct extents *e = arg;
	struct ntfs_attr_nonresident n;
	struct ntfs_attr_extent *x;

	if (le32toh(a->type) != e->type || !a->non_resident ||
	    !ntfs_attr_has_name(a, e->name))
		return 0;
	if (e->n == e->cap) {
		size_t cap = e->cap ? 2 * e->cap : 8;
		struct ntfs_attr_extent *g = realloc(e->x, cap * sizeof(*g));

		if (!g) {
			e->err = -ENOMEM;
			return 1;
		}
		e->x = g;
		e->cap = cap;
	}
	x = &e->x[e->n];
	x->nruns = ntfs_attr_runs(a, e->nr_clusters, &x->runs, e->why);
	if (x->nruns < 0) {
		e->err = -1;
		return 1;
	}
	memcpy(&n, a, sizeof(n));
	x->lowest_vcn = (int64_t)le64toh((uint64_t)n.lowest_vcn);
	x->highest_vcn = (int64_t)le64toh((uint64_t)n.highest_vcn);
	if (!x->lowest_vcn)
		e->size = le64toh((uint64_t)n.data_size);
	e->n++;
	return 0;
}

long ntfs_vol_extents_runs(struct ntfs_vol *v, ntfs_rec_in_use in_use,
			   const void *in_use_arg, uint64_t d, uint32_t type,
			   const char *name, struct ntfs_run **runs,
			   uint64_t *size, size_t *nextents, char *why)
{
	struct extents e = { .type = type, .name = name,
			     .nr_clusters = v->boot.g.nr_clusters };
	uint8_t *buf = malloc(v->boot.g.mft_record_size);
	long ret;

	*runs = NULL;
	*size = 0;
	*nextents = 0;
	if (!buf)
		return -ENOMEM;
	if (ntfs_vol_file_foreach(v, in_use, in_use_arg, d, buf, add_extent,
				  &e) < 0 && !e.err) {
		e.err = -1;
		snprintf(e.why, sizeof(e.why), "MFT record %llu is unreadable",
			 (unsigned long long)d);
	}
	free(buf);
	if (e.err) {
		ret = e.err;
		if (ret == -1)
			memcpy(why, e.why, NTFS_WHY);
	} else if (!e.n) {
		ret = 0;
	} else {
		ret = ntfs_extents_join(e.x, e.n, runs, why);
		*size = e.size;
		*nextents = e.n;
	}
	for (size_t i = 0; i < e.n; i++)
		free(e.x[i].runs);
	free(e.x);
	return ret;
}

static int visit(const uint8_t *rec, ntfs_attr_visit fn, void *arg)
{
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];
	int r;

	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1)
		if ((r = fn(a, arg)))
			return r;
	return 0;
}

int ntfs_vol_file_foreach(struct ntfs_vol *v, ntfs_rec_in_use in_use,
			  const void *in_use_arg, uint64_t base, uint8_t *buf,
			  ntfs_attr_visit fn, void *arg)
{
	uint32_t rs = v->boot.g.mft_record_size;
	uint64_t *ext = NULL, len = 0;
	struct ntfs_run *runs = NULL;
	uint8_t *list = NULL;
	char why[NTFS_WHY];
	size_t n = 0, cap = 0;
	int r;
	long nruns;

	if (base >= v->mft_records || ntfs_vol_read_record(v, base, buf) ||
	    ntfs_record_check(buf, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		return -1;
	if ((r = visit(buf, fn, arg)) || !ntfs_attr_find(buf, NTFS_AT_ATTRIBUTE_LIST))
		return r;
	if (ntfs_vol_read_attr(v, buf, NTFS_AT_ATTRIBUTE_LIST, &list, &len,
			       &runs, &nruns)) {
		free(list);
		free(runs);
		return 0;
	}
	/* every record the list names, once (a file with thousands of
	 * names has hundreds of extension records) */
	for (uint64_t off = 0, e; n < v->mft_records;) {
		uint32_t type;
		bool seen = false;

		if (!ntfs_list_next(list, len, &off, &type, &e))
			break;
		for (size_t i = n; i-- > 0 && !seen;)
			seen = ext[i] == e;
		if (e == base || seen)
			continue;
		if (n == cap) {
			uint64_t *g = realloc(ext, (cap = cap ? 2 * cap : 16) * sizeof(*g));

			if (!g)
				break;
			ext = g;
		}
		ext[n++] = e;
	}
	free(list);
	free(runs);
	r = 0;
	for (size_t i = 0; i < n && !r; i++) {
		struct ntfs_mft_record m;

		if (ext[i] >= v->mft_records ||
		    (in_use && !in_use(in_use_arg, ext[i])) ||
		    ntfs_vol_read_record(v, ext[i], buf) ||
		    ntfs_record_check(buf, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
			continue;
		memcpy(&m, buf, sizeof(m));
		if ((le64toh(m.base_mft_record) & 0xffffffffffffULL) != base)
			continue;
		r = visit(buf, fn, arg);
	}
	free(ext);
	return r;
}

/* Does checked record REC hold a resident $FILE_NAME of value FN? */
static bool holds_name(const uint8_t *rec, const uint8_t *fn, uint32_t fn_len)
{
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];

	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1) {
		const uint8_t *v;
		uint32_t len;

		if (le32toh(a->type) == NTFS_AT_FILE_NAME && !a->non_resident &&
		    (v = ntfs_attr_value(a, &len)) && len == fn_len &&
		    !memcmp(v, fn, len))
			return true;
	}
	return false;
}

int ntfs_vol_name_holder(struct ntfs_vol *v, ntfs_rec_in_use in_use,
			 const void *in_use_arg, uint64_t base,
			 const uint8_t *fn, uint32_t fn_len, uint8_t *buf,
			 uint64_t *where)
{
	uint32_t rs = v->boot.g.mft_record_size;
	struct ntfs_run *runs = NULL;
	uint8_t *list = NULL;
	uint64_t len = 0, e;
	char why[NTFS_WHY];
	long nruns;
	int r = 1;

	if (base >= v->mft_records || ntfs_vol_read_record(v, base, buf) ||
	    ntfs_record_check(buf, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		return -1;
	*where = base;
	if (holds_name(buf, fn, fn_len))
		return 0;
	if (!ntfs_attr_find(buf, NTFS_AT_ATTRIBUTE_LIST) ||
	    ntfs_vol_read_attr(v, buf, NTFS_AT_ATTRIBUTE_LIST, &list, &len,
			       &runs, &nruns)) {
		free(list);
		free(runs);
		return 1;
	}
	for (uint64_t off = 0; r == 1;) {
		struct ntfs_mft_record m;
		uint32_t type;

		if (!ntfs_list_next(list, len, &off, &type, &e))
			break;
		if (type != NTFS_AT_FILE_NAME || e == base || e >= v->mft_records ||
		    (in_use && !in_use(in_use_arg, e)) ||
		    ntfs_vol_read_record(v, e, buf) ||
		    ntfs_record_check(buf, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
			continue;
		memcpy(&m, buf, sizeof(m));
		if ((le64toh(m.base_mft_record) & 0xffffffffffffULL) == base &&
		    holds_name(buf, fn, fn_len)) {
			*where = e;
			r = 0;
		}
	}
	free(list);
	free(runs);
	return r;
}

int ntfs_vol_attr_holder(struct ntfs_vol *v, uint8_t *rec, uint64_t base,
			 uint32_t type, uint8_t *ext, uint8_t **holder,
			 uint64_t *where)
{
	uint32_t rs = v->boot.g.mft_record_size, off = 0;
	struct ntfs_run *runs = NULL;
	struct ntfs_al_entry e;
	struct ntfs_mft_record m;
	uint8_t *list = NULL;
	uint64_t len, found = 0;
	bool have = false, split = false;
	char why[NTFS_WHY];
	long nruns;
	int r;

	/* the base, unless its list names an extension record: reading it
	 * then says what is wrong, as it did before lists were followed */
	*holder = rec;
	*where = base;
	if (ntfs_attr_named(rec, type, "") ||
	    !ntfs_attr_named(rec, NTFS_AT_ATTRIBUTE_LIST, ""))
		return 0;
	if (ntfs_vol_read_attr(v, rec, NTFS_AT_ATTRIBUTE_LIST, &list, &len,
			       &runs, &nruns) || len > UINT32_MAX) {
		r = -EUCLEAN;
		goto out;
	}
	while ((r = ntfs_al_next(list, (uint32_t)len, &off, &e, why)) == 1) {
		if (e.type != type || e.name_len)
			continue;
		if (e.lowest_vcn)
			split = true;
		else if (!have)
			found = e.mref & 0xffffffffffffULL, have = true;
	}
	if (r < 0 || split) {
		r = -EUCLEAN;
		goto out;
	}
	if (!have) {
		r = 0;
		goto out;
	}
	r = -EUCLEAN;
	if (found == base || found >= v->mft_records ||
	    ntfs_vol_read_record(v, found, ext) ||
	    ntfs_record_check(ext, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		goto out;
	memcpy(&m, ext, sizeof(m));
	if (!(le16toh(m.flags) & NTFS_MFT_IN_USE) ||
	    (le64toh(m.base_mft_record) & 0xffffffffffffULL) != base ||
	    !ntfs_attr_named(ext, type, ""))
		goto out;
	*holder = ext;
	*where = found;
	r = 0;
out:
	free(list);
	free(runs);
	return r;
}

bool ntfs_data_sizes_of(const struct ntfs_attr_header *a,
			struct ntfs_data_sizes *d)
{
	if (le32toh(a->type) != NTFS_AT_DATA || a->name_length)
		return false;
	if (!a->non_resident) {
		uint32_t len;

		ntfs_attr_value(a, &len);
		d->size = len;
		d->alloc = ntfs_align(len, 8);
	} else {
		struct ntfs_attr_nonresident n;

		memcpy(&n, a, sizeof(n));
		if (n.lowest_vcn)
			return false;
		d->size = le64toh((uint64_t)n.data_size);
		d->alloc = le64toh((uint64_t)n.allocated_size);
		/* neither, but with a compression unit: its content flag
		 * may be lost (pass 2), what it allocates is not known */
		if (!(le16toh(a->flags) & (NTFS_ATTR_COMPRESSION_MASK | NTFS_ATTR_SPARSE)) &&
		    n.compression_unit)
			return false;
		/* compressed or sparse: the clusters really allocated */
		if (le16toh(a->flags) & (NTFS_ATTR_COMPRESSION_MASK | NTFS_ATTR_SPARSE)) {
			uint64_t csize;

			if (le16toh(n.mapping_pairs_offset) < sizeof(n) + 8)
				return false;
			memcpy(&csize, (const uint8_t *)a + sizeof(n), 8);
			d->alloc = le64toh(csize);
		}
	}
	d->known = true;
	return true;
}

const uint8_t *ntfs_file_name_of(const struct ntfs_attr_header *a,
				 struct ntfs_file_name *fn)
{
	const uint8_t *v;
	uint32_t len;

	if (le32toh(a->type) != NTFS_AT_FILE_NAME || a->non_resident)
		return NULL;
	v = ntfs_attr_value(a, &len);
	if (len < sizeof(*fn))
		return NULL;
	memcpy(fn, v, sizeof(*fn));
	return sizeof(*fn) + 2u * fn->name_length <= len ? v : NULL;
}
