// SPDX-License-Identifier: GPL-2.0-or-later
/* $ATTRIBUTE_LIST values: bounded parser, builder from records, and the
 * in-place replacement of a resident value. */
#include "config.h"

#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/attrlist.h"
#include "ntfs/read.h"
#include "le.h"

#define WHY(...) snprintf(why, NTFS_WHY, __VA_ARGS__)

static uint16_t entry_len(uint8_t name_len)
{
	return (uint16_t)((NTFS_AL_HEADER + 2u * name_len + 7) & ~7u);
}

int ntfs_al_next(const uint8_t *v, uint32_t len, uint32_t *off,
		 struct ntfs_al_entry *e, char *why)
{
	uint32_t o = *off;
	uint8_t noff;

	if (o >= len)
		return 0;
	if (len - o < NTFS_AL_HEADER)
		return WHY("entry at %u is cut off", o), -1;
	e->type = ntfs_get32(v + o);
	e->length = ntfs_get16(v + o + 4);
	e->name_len = v[o + 6];
	noff = v[o + 7];
	e->lowest_vcn = (int64_t)ntfs_get64(v + o + 8);
	e->mref = ntfs_get64(v + o + 16);
	e->instance = ntfs_get16(v + o + 24);
	if (e->length < NTFS_AL_HEADER || e->length & 7 || e->length > len - o)
		return WHY("entry at %u has length %u", o, e->length), -1;
	if (e->name_len && (noff < NTFS_AL_HEADER ||
			    noff + 2u * e->name_len > e->length))
		return WHY("entry at %u: name outside the entry", o), -1;
	if (!e->type || e->type == NTFS_AT_END || e->type & 0xf ||
	    e->type == NTFS_AT_ATTRIBUTE_LIST)
		return WHY("entry at %u has type 0x%x", o, e->type), -1;
	if (e->lowest_vcn < 0)
		return WHY("entry at %u has lowest VCN %lld", o,
			   (long long)e->lowest_vcn), -1;
	e->name = v + o + noff;
	*off = o + e->length;
	return 1;
}

static int cmp_names(const uint8_t *a, uint8_t alen, const uint8_t *b,
		     uint8_t blen, const uint16_t *upcase)
{
	unsigned int n = alen < blen ? alen : blen;

	for (int pass = upcase ? 0 : 1; pass < 2; pass++) {
		for (unsigned int i = 0; i < n; i++) {
			uint16_t x = ntfs_get16(a + 2 * i), y = ntfs_get16(b + 2 * i);

			if (!pass) {
				x = upcase[x];
				y = upcase[y];
			}
			if (x != y)
				return x < y ? -1 : 1;
		}
		if (alen != blen)
			return alen < blen ? -1 : 1;
	}
	return 0;
}

int ntfs_al_cmp(const struct ntfs_al_entry *a, const struct ntfs_al_entry *b,
		const uint16_t *upcase)
{
	int r;

	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	r = cmp_names(a->name, a->name_len, b->name, b->name_len, upcase);
	if (r)
		return r;
	if (a->lowest_vcn != b->lowest_vcn)
		return a->lowest_vcn < b->lowest_vcn ? -1 : 1;
	return 0;
}

bool ntfs_al_entry_named(const struct ntfs_al_entry *e, const char *name)
{
	size_t n = strlen(name);

	if (e->name_len != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (e->name[2 * i] != (uint8_t)name[i] || e->name[2 * i + 1])
			return false;
	return true;
}

int ntfs_al_check(const uint8_t *v, uint32_t len, char *why)
{
	struct ntfs_al_entry e, prev = { 0 };
	uint32_t off = 0;
	bool have = false;
	int r;

	while ((r = ntfs_al_next(v, len, &off, &e, why)) == 1) {
		if (have && e.type < prev.type)
			return WHY("entry for attribute 0x%x follows one for 0x%x",
				   e.type, prev.type), -1;
		if (have && e.type == prev.type &&
		    !cmp_names(e.name, e.name_len, prev.name, prev.name_len, NULL) &&
		    e.lowest_vcn && e.lowest_vcn <= prev.lowest_vcn)
			return WHY("extents of attribute 0x%x are not in VCN order (%lld after %lld)",
				   e.type, (long long)e.lowest_vcn,
				   (long long)prev.lowest_vcn), -1;
		prev = e;
		have = true;
	}
	if (r < 0)
		return -1;
	if (!have)
		return WHY("it is empty"), -1;
	return 0;
}

int ntfs_al_add_record(struct ntfs_al_build *b, const uint8_t *rec,
		       uint64_t mref)
{
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];
	int r;

	ntfs_attr_cursor_init(&cur, rec);
	while ((r = ntfs_attr_next(&cur, &a, why)) == 1) {
		struct ntfs_al_entry *e;
		uint8_t *name = NULL;

		if (le32toh(a->type) == NTFS_AT_ATTRIBUTE_LIST)
			continue;
		if (b->n == b->cap) {
			size_t cap = b->cap ? 2 * b->cap : 32;
			struct ntfs_al_entry *g = realloc(b->v, cap * sizeof(*g));
			uint8_t **gn;

			if (!g)
				return -1;
			b->v = g;
			gn = realloc(b->names, cap * sizeof(*gn));
			if (!gn)
				return -1;
			b->names = gn;
			b->cap = cap;
		}
		if (a->name_length) {
			name = malloc(2u * a->name_length);
			if (!name)
				return -1;
			memcpy(name, (const uint8_t *)a + le16toh(a->name_offset),
			       2u * a->name_length);
		}
		b->names[b->n] = name;
		e = &b->v[b->n++];
		e->type = le32toh(a->type);
		e->name_len = a->name_length;
		e->name = name;
		e->length = entry_len(a->name_length);
		e->lowest_vcn = 0;
		if (a->non_resident) {
			struct ntfs_attr_nonresident n;

			memcpy(&n, a, sizeof(n));
			e->lowest_vcn = (int64_t)le64toh((uint64_t)n.lowest_vcn);
		}
		e->mref = mref;
		e->instance = le16toh(a->instance);
	}
	return r < 0 ? -1 : 0;
}

bool ntfs_al_has(const struct ntfs_al_build *b, uint32_t type,
		 const uint8_t *name, uint8_t name_len, int64_t lowest_vcn)
{
	for (size_t i = 0; i < b->n; i++)
		if (b->v[i].type == type && b->v[i].lowest_vcn == lowest_vcn &&
		    !cmp_names(b->v[i].name, b->v[i].name_len, name, name_len, NULL))
			return true;
	return false;
}

static const uint16_t *sort_upcase;

static int cmp_sort(const void *x, const void *y)
{
	const struct ntfs_al_entry *a = x, *b = y;
	int r = ntfs_al_cmp(a, b, sort_upcase);

	if (r)
		return r;
	/* the same extent twice: a stable order all the same */
	if (a->mref != b->mref)
		return a->mref < b->mref ? -1 : 1;
	return a->instance < b->instance ? -1 : a->instance > b->instance;
}

int ntfs_al_encode(struct ntfs_al_build *b, const uint16_t *upcase,
		   uint8_t **out, uint32_t *len)
{
	uint32_t total = 0, off = 0;
	uint8_t *v;

	sort_upcase = upcase;
	if (b->n)
		qsort(b->v, b->n, sizeof(*b->v), cmp_sort);
	sort_upcase = NULL;
	for (size_t i = 0; i < b->n; i++)
		total += b->v[i].length;
	v = calloc(1, total ? total : 1);
	if (!v)
		return -1;
	for (size_t i = 0; i < b->n; i++) {
		const struct ntfs_al_entry *e = &b->v[i];
		uint32_t t = htole32(e->type);
		uint16_t l = htole16(e->length), in = htole16(e->instance);
		uint64_t vcn = htole64((uint64_t)e->lowest_vcn), m = htole64(e->mref);

		memcpy(v + off, &t, 4);
		memcpy(v + off + 4, &l, 2);
		v[off + 6] = e->name_len;
		v[off + 7] = NTFS_AL_HEADER;
		memcpy(v + off + 8, &vcn, 8);
		memcpy(v + off + 16, &m, 8);
		memcpy(v + off + 24, &in, 2);
		if (e->name_len)
			memcpy(v + off + NTFS_AL_HEADER, e->name, 2u * e->name_len);
		off += e->length;
	}
	*out = v;
	*len = total;
	return 0;
}

void ntfs_al_build_free(struct ntfs_al_build *b)
{
	for (size_t i = 0; i < b->n; i++)
		free(b->names[i]);
	free(b->names);
	free(b->v);
	memset(b, 0, sizeof(*b));
}

static int cmp_plain(const void *x, const void *y)
{
	return cmp_sort(x, y);
}

static struct ntfs_al_entry *decode_all(const uint8_t *v, uint32_t len,
					size_t *n, char *why)
{
	struct ntfs_al_entry e, *out = NULL;
	uint32_t off = 0;
	size_t cap = 0;
	int r;

	*n = 0;
	while ((r = ntfs_al_next(v, len, &off, &e, why)) == 1) {
		if (*n == cap) {
			struct ntfs_al_entry *g;

			cap = cap ? 2 * cap : 32;
			g = realloc(out, cap * sizeof(*g));
			if (!g) {
				free(out);
				WHY("out of memory");
				return NULL;
			}
			out = g;
		}
		out[(*n)++] = e;
	}
	if (r < 0 || !out) {
		free(out);
		if (!r)
			WHY("it is empty");
		return NULL;
	}
	qsort(out, *n, sizeof(*out), cmp_plain);
	return out;
}

static void name8(const struct ntfs_al_entry *e, char *out, size_t size)
{
	size_t k = 0;

	for (unsigned int i = 0; i < e->name_len && k + 2 < size; i++) {
		uint16_t u = ntfs_get16(e->name + 2 * i);

		out[k++] = u >= 0x20 && u < 0x7f ? (char)u : '?';
	}
	out[k] = 0;
}

bool ntfs_al_same(const uint8_t *v1, uint32_t len1, const uint8_t *v2,
		  uint32_t len2, char *why)
{
	size_t n1, n2, i;
	struct ntfs_al_entry *a = decode_all(v1, len1, &n1, why);
	struct ntfs_al_entry *b = a ? decode_all(v2, len2, &n2, why) : NULL;
	bool same = false;
	char nm[24];

	if (!a || !b)
		goto out;
	for (i = 0; i < n1 && i < n2; i++) {
		const struct ntfs_al_entry *x = &a[i], *y = &b[i];

		if (ntfs_al_cmp(x, y, NULL) || x->mref != y->mref ||
		    x->instance != y->instance) {
			const struct ntfs_al_entry *w = cmp_sort(x, y) < 0 ? x : y;

			name8(w, nm, sizeof(nm));
			WHY("%s entry for attribute 0x%x%s%.20s (VCN %lld, MFT record %llu, instance %u)",
			    w == x ? "an" : "no", w->type, nm[0] ? " " : "", nm,
			    (long long)w->lowest_vcn,
			    (unsigned long long)(w->mref & 0xffffffffffffULL),
			    w->instance);
			goto out;
		}
	}
	if (n1 != n2) {
		WHY("%zu entries, the records hold %zu attributes", n1, n2);
		goto out;
	}
	same = true;
out:
	free(a);
	free(b);
	return same;
}

int ntfs_rec_set_value(uint8_t *rec, uint32_t size, uint32_t off,
		       const void *val, uint32_t len)
{
	struct ntfs_mft_record m;
	struct ntfs_attr_resident r;
	uint32_t used, old_len, new_len, voff;

	memcpy(&m, rec, sizeof(m));
	memcpy(&r, rec + off, sizeof(r));
	used = le32toh(m.bytes_in_use);
	voff = le16toh(r.value_offset);
	old_len = le32toh(r.h.length);
	new_len = (voff + len + 7) & ~7u;
	if (used - old_len + new_len > size)
		return -1;
	memmove(rec + off + new_len, rec + off + old_len, used - off - old_len);
	if (new_len < old_len)
		memset(rec + used - (old_len - new_len), 0, old_len - new_len);
	memset(rec + off + voff, 0, new_len - voff);
	memcpy(rec + off + voff, val, len);
	r.h.length = htole32(new_len);
	r.value_length = htole32(len);
	memcpy(rec + off, &r, sizeof(r));
	m.bytes_in_use = htole32(used - old_len + new_len);
	memcpy(rec, &m, sizeof(m));
	return 0;
}

uint32_t ntfs_al_drop_later(uint8_t *v, uint32_t len, uint32_t type,
			    const char *name)
{
	uint32_t off = 0, out = 0, at;
	size_t nlen = strlen(name);
	struct ntfs_al_entry e;
	char why[NTFS_WHY];

	for (at = off; ntfs_al_next(v, len, &off, &e, why) == 1; at = off) {
		bool same = e.type == type && e.name_len == nlen && e.lowest_vcn;

		for (size_t i = 0; same && i < nlen; i++)
			same = e.name[2 * i] == (uint8_t)name[i] && !e.name[2 * i + 1];
		if (same)
			continue;
		memmove(v + out, v + at, e.length);
		out += e.length;
	}
	return out;
}

uint32_t ntfs_al_insert_first(uint8_t *v, uint32_t len, uint32_t type,
			      const char *name, uint64_t mref, uint16_t instance)
{
	uint32_t off = 0, at, size = ntfs_al_entry_size(name);
	size_t nlen = strlen(name);
	struct ntfs_al_entry e;
	char why[NTFS_WHY];
	uint16_t l16 = htole16((uint16_t)size), i16 = htole16(instance);
	uint32_t t32 = htole32(type);
	uint64_t m64 = htole64(mref);

	for (at = off; ntfs_al_next(v, len, &off, &e, why) == 1; at = off)
		if (e.type > type)
			break;
	memmove(v + at + size, v + at, len - at);
	memset(v + at, 0, size);
	memcpy(v + at, &t32, 4);
	memcpy(v + at + 4, &l16, 2);
	v[at + 6] = (uint8_t)nlen;
	v[at + 7] = NTFS_AL_HEADER;
	memcpy(v + at + 0x10, &m64, 8);
	memcpy(v + at + 0x18, &i16, 2);
	for (size_t i = 0; i < nlen; i++)
		v[at + NTFS_AL_HEADER + 2 * i] = (uint8_t)name[i];
	return len + size;
}

uint32_t ntfs_al_entry_size(const char *name)
{
	return (uint32_t)((NTFS_AL_HEADER + 2 * strlen(name) + 7) & ~(size_t)7);
}
