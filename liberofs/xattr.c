// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 2: extended attributes.  Identical (name, value) pairs are interned
 * so that a pair carried by more than -x inodes is stored once in the shared
 * xattr area; names are matched against the long-prefix table (from
 * --xattr-prefix and the fingerprint name); every inode with xattrs gets a
 * bloom filter of the names it carries.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "erofs/erofs_fs.h"
#include "internal.h"

#define DIGEST_VALUE_LEN (7u + 32u)	/* "sha256:" + raw digest */

static int add_prefix(struct erofs_build *b, const char *full, bool digest)
{
	struct erofs_long_prefix *grown, *p;
	uint8_t base = 0;
	size_t off = 0;

	if (erofs_xattr_std_prefix(full, &base, &off) != 0 ||
	    base == EROFS_XATTR_INDEX_POSIX_ACL_ACCESS ||
	    base == EROFS_XATTR_INDEX_POSIX_ACL_DEFAULT) {
		if (!digest) {
			fsf_err(b->log, "xattr prefix '%s' must start with user., trusted., security. or lustre.",
				full);
			return -EINVAL;
		}
		base = 0;	/* no namespace: hidden from listxattr */
		off = 0;
	}
	if (b->nprefixes >= EROFS_XATTR_LONG_PREFIX_MASK + 1u) {
		fsf_err(b->log, "too many xattr prefixes (at most %u)",
			EROFS_XATTR_LONG_PREFIX_MASK + 1u);
		return -EINVAL;
	}
	if (strlen(full) - off > 250) {
		fsf_err(b->log, "xattr prefix '%s' is too long", full);
		return -ENAMETOOLONG;
	}
	grown = realloc(b->prefixes, (b->nprefixes + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	b->prefixes = grown;
	p = &b->prefixes[b->nprefixes++];
	p->base_index = base;
	p->infix = full + off;
	p->infix_len = strlen(full) - off;
	if (digest) {
		b->digest_prefix = (int)(b->nprefixes - 1);
		b->digest_base_index = base;
		b->digest_filter_name = full + off;
	}
	return 0;
}

/* Use the longest --xattr-prefix that covers the name, if any. */
static void match_long_prefix(const struct erofs_build *b, struct erofs_xattr *x)
{
	size_t best = 0;
	int best_i = -1;

	for (size_t i = 0; i < b->opts->n_xattr_prefixes; i++) {
		const char *pre = b->opts->xattr_prefixes[i];
		size_t l = strlen(pre);

		if (l > best && l <= x->name_len && !strncmp(x->name, pre, l)) {
			best = l;
			best_i = (int)i;
		}
	}
	if (best_i >= 0) {
		x->index = (uint8_t)(EROFS_XATTR_LONG_PREFIX | (unsigned)best_i);
		x->suffix_off = (uint16_t)best;
	}
}

struct xref {
	struct erofs_xattr *x;
	struct erofs_node *n;
	uint16_t slot;
};

static int cmp_pair(const struct erofs_xattr *a, const struct erofs_xattr *c)
{
	int r = strcmp(a->name, c->name);
	size_t l;

	if (r)
		return r;
	if (a->value_len != c->value_len)
		return a->value_len < c->value_len ? -1 : 1;
	l = a->value_len;
	return memcmp(a->value, c->value, l);
}

static int cmp_xref(const void *a, const void *c)
{
	const struct xref *x = a, *y = c;
	int r = cmp_pair(x->x, y->x);

	if (r)
		return r;
	return x->x < y->x ? -1 : x->x > y->x;
}

static int cmp_by_name(const void *a, const void *c)
{
	return strcmp((*(struct erofs_xattr *const *)a)->name,
		      (*(struct erofs_xattr *const *)c)->name);
}

static void free_xattr(struct erofs_xattr *x)
{
	free(x->name);
	free(x->value);
	free(x);
}

int erofs_xattrs_prepare(struct erofs_build *b)
{
	const struct erofs_mkfs_opts *o = b->opts;
	struct xref *refs;
	size_t nrefs = 0, ndistinct = 0;
	uint64_t shared_off = 0;
	int ret;

	b->digest_prefix = -1;
	for (size_t i = 0; i < o->n_xattr_prefixes; i++) {
		ret = add_prefix(b, o->xattr_prefixes[i], false);
		if (ret)
			return ret;
	}
	if (o->digest_name) {
		ret = add_prefix(b, o->digest_name, true);
		if (ret)
			return ret;
	}

	for (size_t i = 0; i < b->count; i++) {
		struct erofs_node *n = b->order[i];

		if (n->nxattrs > 1)
			qsort(n->xattrs, n->nxattrs, sizeof(*n->xattrs),
			      cmp_by_name);
		nrefs += n->nxattrs;
		n->has_digest = o->digest_name && !n->master &&
				S_ISREG(n->mode) && n->size > 0;
	}
	if (!nrefs)
		return 0;
	refs = malloc(nrefs * sizeof(*refs));
	if (!refs)
		return -ENOMEM;
	nrefs = 0;
	for (size_t i = 0; i < b->count; i++) {
		struct erofs_node *n = b->order[i];

		for (uint16_t s = 0; s < n->nxattrs; s++)
			refs[nrefs++] = (struct xref){ n->xattrs[s], n, s };
	}
	qsort(refs, nrefs, sizeof(*refs), cmp_xref);

	/* intern: the first of each run of equal pairs stands for all */
	b->xattrs = malloc(nrefs * sizeof(*b->xattrs));
	if (!b->xattrs) {
		free(refs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nrefs;) {
		struct erofs_xattr *canon = refs[i].x;
		size_t j = i + 1;

		while (j < nrefs && !cmp_pair(refs[j].x, canon)) {
			refs[j].n->xattrs[refs[j].slot] = canon;
			free_xattr(refs[j].x);
			j++;
		}
		canon->refs = (uint32_t)(j - i);
		match_long_prefix(b, canon);
		b->xattrs[ndistinct++] = canon;
		i = j;
	}
	b->nxattrs = ndistinct;
	free(refs);

	/* shared area: pairs used by more inodes than the tolerance */
	for (size_t i = 0; i < b->nxattrs; i++) {
		struct erofs_xattr *x = b->xattrs[i];

		if ((int64_t)x->refs <= o->xattr_tolerance)
			continue;
		x->shared_id = (int64_t)(shared_off / 4);
		shared_off += erofs_xattr_entry_size(x->name_len - x->suffix_off,
						     x->value_len);
	}
	if (shared_off / 4 > UINT32_MAX) {
		fsf_err(b->log, "shared xattr area too large");
		return -EFBIG;
	}
	b->shared_size = shared_off;
	for (size_t i = 0; i < b->count; i++) {
		struct erofs_node *n = b->order[i];

		n->nshared = 0;
		for (uint16_t s = 0; s < n->nxattrs && n->nshared < 255; s++)
			if (n->xattrs[s]->shared_id >= 0)
				n->nshared++;
	}
	return 0;
}

/* Is slot S of node N stored through the shared area?  At most 255 shared
 * ids fit in an inode; the rest of the shared pairs are inlined. */
static bool slot_is_shared(const struct erofs_node *n, uint16_t s,
			   unsigned int *seen)
{
	if (n->xattrs[s]->shared_id < 0 || *seen >= n->nshared)
		return false;
	(*seen)++;
	return true;
}

uint32_t erofs_node_xattr_isize(const struct erofs_build *b,
				const struct erofs_node *n)
{
	uint32_t size;
	unsigned int seen = 0;

	(void)b;
	if (!n->nxattrs && !n->has_digest)
		return 0;
	size = sizeof(struct erofs_xattr_ibody_header) + 4u * n->nshared;
	for (uint16_t s = 0; s < n->nxattrs; s++) {
		const struct erofs_xattr *x = n->xattrs[s];

		if (!slot_is_shared(n, s, &seen))
			size += erofs_xattr_entry_size(x->name_len - x->suffix_off,
						       x->value_len);
	}
	if (n->has_digest)
		size += erofs_xattr_entry_size(0, DIGEST_VALUE_LEN);
	return size;
}

static uint8_t *put_entry(uint8_t *p, uint8_t index, const char *suffix,
			  uint8_t suffix_len, const void *value,
			  uint16_t value_len)
{
	struct erofs_xattr_entry e = {
		.e_name_len = suffix_len,
		.e_name_index = index,
		.e_value_size = htole16(value_len),
	};
	uint32_t sz = erofs_xattr_entry_size(suffix_len, value_len);

	memcpy(p, &e, sizeof(e));
	memcpy(p + sizeof(e), suffix, suffix_len);
	memcpy(p + sizeof(e) + suffix_len, value, value_len);
	memset(p + sizeof(e) + suffix_len + value_len, 0,
	       sz - sizeof(e) - suffix_len - value_len);
	return p + sz;
}

void erofs_node_xattr_encode(const struct erofs_build *b,
			     const struct erofs_node *n, uint8_t *out)
{
	struct erofs_xattr_ibody_header h = { 0 };
	uint32_t present = 0;
	uint8_t *p = out + sizeof(h);
	unsigned int seen = 0;

	for (uint16_t s = 0; s < n->nxattrs; s++) {
		const struct erofs_xattr *x = n->xattrs[s];

		present |= 1u << erofs_xattr_filter_bit(x->base_index,
				x->name + x->filter_off,
				(size_t)(x->name_len - x->filter_off));
		if (slot_is_shared(n, s, &seen)) {
			uint32_t id = htole32((uint32_t)x->shared_id);

			memcpy(p, &id, 4);
			p += 4;
		}
	}
	seen = 0;
	for (uint16_t s = 0; s < n->nxattrs; s++) {
		const struct erofs_xattr *x = n->xattrs[s];

		if (slot_is_shared(n, s, &seen))
			continue;
		p = put_entry(p, x->index, x->name + x->suffix_off,
			      (uint8_t)(x->name_len - x->suffix_off), x->value,
			      x->value_len);
	}
	if (n->has_digest) {
		uint8_t value[DIGEST_VALUE_LEN];

		memcpy(value, "sha256:", 7);
		memcpy(value + 7, n->digest, 32);
		present |= 1u << erofs_xattr_filter_bit(b->digest_base_index,
				b->digest_filter_name,
				strlen(b->digest_filter_name));
		p = put_entry(p, (uint8_t)(EROFS_XATTR_LONG_PREFIX |
					   (unsigned)b->digest_prefix),
			      "", 0, value, DIGEST_VALUE_LEN);
	}
	h.h_name_filter = htole32(~present);
	h.h_shared_count = n->nshared;
	memcpy(out, &h, sizeof(h));
}

void erofs_shared_xattrs_encode(const struct erofs_build *b, uint8_t *out)
{
	for (size_t i = 0; i < b->nxattrs; i++) {
		const struct erofs_xattr *x = b->xattrs[i];

		if (x->shared_id < 0)
			continue;
		put_entry(out + (uint64_t)x->shared_id * 4, x->index,
			  x->name + x->suffix_off,
			  (uint8_t)(x->name_len - x->suffix_off), x->value,
			  x->value_len);
	}
}
