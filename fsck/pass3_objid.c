// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 3: $Extend/$ObjId's $O index against the files.  Each entry's key
 * is an object id, its data the file's reference and the birth volume,
 * birth object and domain ids (8 + 3 x 16 bytes).  The truth is the
 * files' $OBJECT_ID attributes (already judged by pass 1's value-length
 * checks): an entry for an id no file holds is stale (its file is not in
 * use, has no object id or another one), an id no entry names is missing,
 * an entry naming another reference is wrong.  The index the files call
 * for keeps what it can of the old one: an attribute of 16 bytes (the id
 * alone, as ntfs-3g writes it) leaves the birth ids to the entry, and a
 * missing entry takes them from the stale entry that named the same file
 * (a damaged key).  Several files with one id: the entry may name any.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs_check.h"
#include "ntfs_objid.h"
#include "ntfs_problems.h"

#define MASK48 0xffffffffffffULL
#define OID_DATA 56u			/* reference + three 16-byte ids */

struct file_id {
	uint8_t id[16], birth[48];
	uint64_t mref;
	bool has_birth;
};

struct ids {
	struct file_id *v;
	size_t n, cap;
};

static int cmp_id(const void *x, const void *y)
{
	const struct file_id *a = x, *b = y;
	int d = memcmp(a->id, b->id, 16);

	if (d)
		return d;
	return (a->mref & MASK48) < (b->mref & MASK48) ? -1 :
	       (a->mref & MASK48) > (b->mref & MASK48);
}

/* every record in use with a resident $OBJECT_ID of at least 16 bytes;
 * an extension record's counts for its base */
static int file_ids(struct ntfs_check *c, uint8_t *rec, struct ids *s)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	char why[NTFS_WHY];

	for (uint64_t r = 0; r < c->vol.mft_records; r++) {
		struct ntfs_attr_cursor cur;
		const struct ntfs_attr_header *a;
		struct ntfs_mft_record m;

		if (!cset_get(&c->record_used, r) || ntfs_record_no_objid(c, r) ||
		    ntfs_vol_read_record(&c->vol, r, rec) ||
		    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
			continue;
		memcpy(&m, rec, sizeof(m));
		ntfs_attr_cursor_init(&cur, rec);
		while (ntfs_attr_next(&cur, &a, why) == 1) {
			struct file_id *f;
			const uint8_t *v;
			uint32_t len;

			if (le32toh(a->type) != NTFS_AT_OBJECT_ID || a->non_resident)
				continue;
			v = ntfs_attr_value(a, &len);
			if (len < 16)
				break;
			if (s->n == s->cap) {
				size_t cap = s->cap ? 2 * s->cap : 32;
				struct file_id *g = realloc(s->v, cap * sizeof(*g));

				if (!g)
					return -ENOMEM;
				s->v = g;
				s->cap = cap;
			}
			f = &s->v[s->n++];
			memset(f, 0, sizeof(*f));
			memcpy(f->id, v, 16);
			f->has_birth = len >= 64;
			if (f->has_birth)
				memcpy(f->birth, v + 16, 48);
			f->mref = m.base_mft_record ? le64toh(m.base_mft_record) :
				  NTFS_MREF(r, le16toh(m.sequence_number));
			break;
		}
	}
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), cmp_id);
	return 0;
}

static void hex_id(const uint8_t *id, char *out)
{
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", id[i]);
}

static uint64_t entry_mref(const struct ntfs_view_entry *e)
{
	uint64_t m = 0;

	if (e->dlen >= 8)
		memcpy(&m, e->mem + e->klen, 8);
	return le64toh(m);
}

/* the first file holding ID, or NULL; *N: how many hold it */
static const struct file_id *holders(const struct ids *s, const uint8_t *id,
				     size_t *n)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (memcmp(s->v[mid].id, id, 16) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (*n = 0; lo + *n < s->n && !memcmp(s->v[lo + *n].id, id, 16); (*n)++)
		;
	return *n ? &s->v[lo] : NULL;
}

static int cmp_entry(const void *x, const void *y)
{
	const struct ntfs_view_entry *a = *(const struct ntfs_view_entry *const *)x;
	const struct ntfs_view_entry *b = *(const struct ntfs_view_entry *const *)y;

	if (a->klen != 16 || b->klen != 16)
		return (a->klen == 16) - (b->klen == 16);
	return memcmp(a->mem, b->mem, 16);
}

/* the entry of BY (N pointers sorted by cmp_entry) with key ID, or NULL */
static const struct ntfs_view_entry *entry_of(const struct ntfs_view_entry **by,
					      size_t n, const uint8_t *id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int d = by[mid]->klen != 16 ? -1 : memcmp(by[mid]->mem, id, 16);

		if (!d)
			return by[mid];
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int add(struct ntfs_view_entry *out, size_t *nout, const struct file_id *f,
	       const struct ntfs_view_entry *from)
{
	uint8_t *m = calloc(1, 16 + OID_DATA);
	uint64_t ref = htole64(f->mref);

	if (!m)
		return -ENOMEM;
	memcpy(m, f->id, 16);
	memcpy(m + 16, &ref, 8);
	if (f->has_birth)
		memcpy(m + 24, f->birth, 48);
	else if (from && from->dlen > 8)
		memcpy(m + 24, from->mem + from->klen + 8,
		       from->dlen - 8 < 48 ? from->dlen - 8u : 48u);
	out[*nout] = (struct ntfs_view_entry){ .mem = m, .klen = 16, .dlen = OID_DATA };
	(*nout)++;
	return 0;
}

int ntfs_objid_wanted(struct ntfs_check *c, uint8_t *rec,
		      const struct ntfs_view_entry *ix, size_t n, bool ask,
		      struct ntfs_view_entry **out, size_t *nout, bool *repair)
{
	const char *obj = "$ObjId:$O";
	struct ids s = { 0 };
	struct ntfs_view_entry *w;
	const struct ntfs_view_entry **by = malloc((n ? n : 1) * sizeof(*by));
	char hex[33], name[NTFS_WHY + 64];
	int ret;

	*out = NULL;
	*nout = 0;
	*repair = false;
	ret = by ? file_ids(c, rec, &s) : -ENOMEM;
	if (ret)
		goto out;
	for (size_t j = 0; j < n; j++)
		by[j] = &ix[j];
	if (n)
		qsort(by, n, sizeof(*by), cmp_entry);
	w = calloc(s.n + 1, sizeof(*w));
	if (!w) {
		ret = -ENOMEM;
		goto out;
	}
	*out = w;
	for (size_t i = 0, k; i < s.n; i += k) {
		const struct file_id *f = holders(&s, s.v[i].id, &k), *use = f;
		const struct ntfs_view_entry *e = entry_of(by, n, f->id), *from = e;

		hex_id(f->id, hex);
		if (e) {
			uint64_t em = entry_mref(e);
			bool ok = false;

			for (size_t j = 0; j < k && !ok; j++)
				if (f[j].mref == em) {
					use = &f[j];
					ok = e->dlen >= OID_DATA &&
					     (!use->has_birth ||
					      !memcmp(e->mem + e->klen + 8, use->birth, 48));
				}
			if (!ok && ask) {
				ntfs_object_name(c, "file", use->mref & MASK48, name, sizeof(name));
				*repair |= fsf_fix_ask(&c->fix, &PR_OBJID_WRONG, obj, hex,
						       (unsigned long long)(em & MASK48),
						       (unsigned)(em >> 48),
						       use->mref == em ? " and other birth ids" : "",
						       name);
			}
		} else {
			/* a stale entry that named this file: its key damaged */
			for (size_t j = 0, kk; j < n && !from; j++)
				if ((entry_mref(&ix[j]) & MASK48) == (f->mref & MASK48) &&
				    (ix[j].klen != 16 || !holders(&s, ix[j].mem, &kk)))
					from = &ix[j];
			if (ask) {
				ntfs_object_name(c, "file", f->mref & MASK48, name, sizeof(name));
				*repair |= fsf_fix_ask(&c->fix, &PR_OBJID_MISSING, obj, hex, name);
			}
		}
		ret = add(w, nout, use, from);
		if (ret)
			goto out;
	}
	for (size_t j = 0; j < n && ask; j++) {
		uint64_t em = entry_mref(&ix[j]), r = em & MASK48;
		const char *why = "has no object id";
		char held[64];
		size_t k;

		if (ix[j].klen == 16 && holders(&s, ix[j].mem, &k))
			continue;
		if (ix[j].klen == 16)
			hex_id(ix[j].mem, hex);
		else
			snprintf(hex, sizeof(hex), "(a key of %u bytes)", ix[j].klen);
		if (r >= c->vol.mft_records || !cset_get(&c->record_used, r))
			why = "is not in use";
		for (size_t i = 0; i < s.n; i++)
			if ((s.v[i].mref & MASK48) == r) {
				char h[33];

				hex_id(s.v[i].id, h);
				snprintf(held, sizeof(held), "holds object id %s", h);
				why = held;
				break;
			}
		*repair |= fsf_fix_ask(&c->fix, &PR_OBJID_STALE, obj, hex,
				       (unsigned long long)r, why);
	}
out:
	free(by);
	free(s.v);
	return ret;
}
