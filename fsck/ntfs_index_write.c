// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 3 repair: write an index (ntfs_write_index: any index of a record,
 * built by the libntfs builder from the entries given).  Its blocks go into
 * the old index clusters when they are enough or else into newly allocated
 * ones, and the index attributes of the record are replaced, each where
 * its type and name sort; every other attribute is kept byte for byte.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs_index_write.h"

#define MP_MAX 256			/* mapping pairs we are ready to write */

/* Is A an attribute of index NAME?  A directory has one index, $I30:
 * every index attribute of its record is replaced, whatever its (possibly
 * damaged) name; other records keep their other indexes. */
static bool is_index_attr(const struct ntfs_attr_header *a, const char *name)
{
	uint32_t t = le32toh(a->type);

	if (t != NTFS_AT_INDEX_ROOT && t != NTFS_AT_INDEX_ALLOCATION &&
	    t != NTFS_AT_BITMAP)
		return false;
	return !strcmp(name, "$I30") || ntfs_attr_has_name(a, name);
}

/* First run of COUNT free clusters, or -1. */
static int64_t find_free(const struct ntfs_check *c, uint64_t count)
{
	uint64_t run = 0;

	/* on a truncated device: only clusters on it, and none at all when
	 * records lost past its end may own any of them */
	if (c->geo.lost_records || c->cluster_used.nomem)
		return -1;
	for (uint64_t l = 0; l < c->geo.dev_clusters; l++) {
		run = cset_get(&c->cluster_used, l) ? 0 : run + 1;
		if (run == count)
			return (int64_t)(l + 1 - count);
	}
	return -1;
}

static void set_clusters(struct ntfs_check *c, const struct ntfs_run *runs,
			 long n, bool used)
{
	for (long i = 0; i < n; i++)
		for (uint64_t k = 0; runs[i].lcn >= 0 && k < runs[i].len; k++) {
			uint64_t l = (uint64_t)runs[i].lcn + k;

			if (used)
				cset_set(&c->cluster_used, l);
			else
				cset_clear(&c->cluster_used, l);
		}
}

/* Where NBLOCKS blocks go: the old allocation if big enough, else one new
 * free run.  Returns the mapping pairs length or -1. */
static int place(struct ntfs_check *c, struct index_plan *p,
		 const struct ntfs_run *old, long nold)
{
	uint32_t cs = c->vol.boot.g.cluster_size, bs = c->vol.boot.g.index_block_size;
	uint64_t need = ((uint64_t)p->res.nblocks * bs + cs - 1) / cs, have = 0;
	uint8_t mp[MP_MAX];
	int64_t lcn;
	int len;

	bool holes = false;

	for (long i = 0; i < nold; i++) {
		have += old[i].lcn >= 0 ? old[i].len : 0;
		holes |= old[i].lcn < 0;
	}
	free(p->runs);
	p->runs = NULL;
	/* on a truncated device, clusters past its end are unreadable and
	 * cannot be written: the blocks go to new clusters on the device */
	for (long i = 0; i < nold; i++)
		holes |= old[i].lcn >= 0 &&
			 (uint64_t)old[i].lcn + old[i].len > c->geo.dev_clusters;
	if (nold > 0 && !holes && have >= need &&
	    (len = ntfs_mp_encode(old, (size_t)nold, mp, sizeof(mp))) > 0) {
		p->runs = malloc((size_t)nold * sizeof(*old));
		if (!p->runs)
			return -1;
		memcpy(p->runs, old, (size_t)nold * sizeof(*old));
		p->nruns = nold;
		p->reuse = true;
		p->clusters = have;
		return len;
	}
	lcn = find_free(c, need);
	p->runs = malloc(sizeof(*p->runs));
	if (lcn < 0 || !p->runs)
		return -1;
	p->runs[0].lcn = lcn;
	p->runs[0].len = need;
	p->nruns = 1;
	p->reuse = false;
	p->clusters = need;
	return ntfs_mp_encode(p->runs, 1, mp, sizeof(mp));
}

/* The index of SPEC's type and collation from E (N entries, sorted) for a
 * record whose other attributes take OTHER bytes: the root as big as
 * fits, blocks placed (the old allocation OLD reused when big enough). */
int ntfs_index_plan(struct ntfs_check *c, struct index_plan *p, uint32_t type,
		    uint32_t collation, const struct ntfs_ib_entry *e, long n,
		    uint32_t other, const struct ntfs_run *old, long nold,
		    const struct index_shape *sh, char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint32_t bs = c->vol.boot.g.index_block_size, cs = c->vol.boot.g.cluster_size;
	uint32_t room = rs > other + RESIDENT_HDR ? rs - other - RESIDENT_HDR : 0;
	struct ntfs_ib_spec spec = { .type = type, .collation = collation,
				     .block_size = bs, .cluster_size = cs,
				     .large = sh->large };
	int ret = -1;

	/* as small as can be first; a large index also needs room for its
	 * allocation and bitmap attributes, so shrink the root until all fit */
	for (int tries = 0; tries < 8; tries++) {
		uint32_t extra;
		int mplen;

		ntfs_index_build_free(&p->res);
		spec.root_room = room;
		if (ntfs_index_build_spec(&spec, e, (size_t)n, &p->res)) {
			snprintf(why, NTFS_WHY, "%u-byte index blocks cannot hold the entries in a %u-byte record",
				 bs, rs);
			goto out;
		}
		if (!p->res.large) {
			ret = 0;
			goto out;
		}
		if (sh->small) {
			snprintf(why, NTFS_WHY, "the index no longer fits its record");
			goto out;
		}
		mplen = place(c, p, old, nold);
		if (mplen < 0) {
			snprintf(why, NTFS_WHY, "no %llu free clusters for the index",
				 (unsigned long long)(((uint64_t)p->res.nblocks * bs + cs - 1) / cs));
			goto out;
		}
		p->bitmap_len = (uint32_t)ntfs_align((p->res.nblocks + 7) / 8, 8);
		if (p->bitmap_len > sizeof(p->bitmap)) {
			snprintf(why, NTFS_WHY, "%u index blocks are too many", p->res.nblocks);
			goto out;
		}
		memset(p->bitmap, 0, p->bitmap_len);
		for (uint32_t b = 0; b < p->res.nblocks; b++)
			p->bitmap[b >> 3] |= (uint8_t)(1u << (b & 7));
		extra = sh->alone ? 0 :
			(uint32_t)ntfs_align(NONRESIDENT_HDR + (uint32_t)mplen, 8) +
			RESIDENT_HDR + p->bitmap_len;
		if (other + RESIDENT_HDR + p->res.root_len + extra <= rs) {
			ret = 0;
			goto out;
		}
		room = rs > other + RESIDENT_HDR + extra ? rs - other - RESIDENT_HDR - extra : 0;
	}
	snprintf(why, NTFS_WHY, "the index does not fit the directory record");
out:
	return ret;
}

/* NAME (ASCII) against A's name, as attributes of one type are ordered */
static int name_cmp(const char *name, const struct ntfs_attr_header *a)
{
	const uint8_t *n = (const uint8_t *)a + le16toh(a->name_offset);
	size_t len = strlen(name);

	for (size_t i = 0; i < len && i < a->name_length; i++) {
		uint16_t x = (uint8_t)name[i], y = (uint16_t)(n[2 * i] | n[2 * i + 1] << 8);

		if (x != y)
			return x < y ? -1 : 1;
	}
	return len == a->name_length ? 0 : (len < a->name_length ? -1 : 1);
}

/* Add the next of P's attributes of index NAME (*K: 0 root, 1 allocation,
 * 2 bitmap) while they sort before A (NULL: all of them). */
static bool add_new(struct ntfs_check *c, struct ntfs_rec *r, const struct index_plan *p,
		    const char *name, int *k, const struct ntfs_attr_header *a)
{
	static const uint32_t types[3] = { NTFS_AT_INDEX_ROOT,
					   NTFS_AT_INDEX_ALLOCATION, NTFS_AT_BITMAP };
	uint32_t cs = c->vol.boot.g.cluster_size;
	uint64_t data = (uint64_t)p->res.nblocks * c->vol.boot.g.index_block_size;
	bool ok = true;

	for (; *k < (p->res.large ? 3 : 1) && ok; ++*k) {
		if (a && (types[*k] > le32toh(a->type) ||
			  (types[*k] == le32toh(a->type) && name_cmp(name, a) > 0)))
			break;
		if (*k == 0)
			ok = ntfs_rec_add_resident(r, NTFS_AT_INDEX_ROOT, name,
						   p->res.root, p->res.root_len, 0) != NULL;
		else if (*k == 1)
			ok = !ntfs_rec_add_nonresident(r, NTFS_AT_INDEX_ALLOCATION, name,
						       p->runs, (size_t)p->nruns,
						       p->clusters * cs, data, data);
		else
			ok = ntfs_rec_add_resident(r, NTFS_AT_BITMAP, name, p->bitmap,
						   p->bitmap_len, 0) != NULL;
	}
	return ok;
}

/* Record REC with the attributes of its index NAME replaced by P's, each
 * where its type and name sort among the attributes kept. */
static int rewrite_record(struct ntfs_check *c, const uint8_t *rec,
			  uint8_t *out, const struct index_plan *p, const char *name,
			  char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	struct ntfs_rec r;
	int k = 0, more;
	bool ok = true;

	memcpy(out, rec, rs);
	ntfs_rec_reopen(&r, out, rs);
	ntfs_attr_cursor_init(&cur, rec);
	while (ok && (more = ntfs_attr_next(&cur, &a, why)) == 1) {
		if (is_index_attr(a, name))
			continue;
		ok = add_new(c, &r, p, name, &k, a) &&
		     ntfs_rec_add_raw(&r, a, le32toh(a->length)) != NULL;
	}
	if (ok && more < 0)
		return -1;
	if (ok)
		ok = add_new(c, &r, p, name, &k, NULL);
	if (!ok)
		snprintf(why, NTFS_WHY, "the index does not fit the record");
	return ok ? 0 : -1;
}

/* The clusters of the new index taken, the old ones not kept freed
 * (unless clusters are cross-linked: then nothing is freed), the new
 * blocks written. */
int ntfs_index_plan_commit(struct ntfs_check *c, const struct index_plan *p,
			   const struct ntfs_run *old, long nold,
			   const struct ntfs_run *gone, long ngone, char *why)
{
	if (!c->crosslinked) {
		if (!p->reuse || !p->res.large)
			set_clusters(c, old, nold, false);
		set_clusters(c, gone, ngone, false);
	}
	if (p->res.large) {
		set_clusters(c, p->runs, p->nruns, true);
		if (ntfs_vol_write_runs(&c->vol, p->runs, p->nruns, p->res.blocks,
					(uint64_t)p->res.nblocks *
					c->vol.boot.g.index_block_size)) {
			snprintf(why, NTFS_WHY, "writing the index blocks failed");
			return -1;
		}
	}
	return 0;
}

int ntfs_write_index(struct ntfs_check *c, uint64_t d, const char *name,
		     uint32_t type, uint32_t collation,
		     const struct ntfs_ib_entry *e, long n, char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *rec = malloc(rs), *out = malloc(rs);
	struct ntfs_run *old = NULL, *gone = NULL;
	long nold = 0, ngone = 0;
	struct index_plan p;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	struct ntfs_mft_record m;
	const struct index_shape whole = { false, false, false };
	uint32_t other;
	int ret = -1, more;

	memset(&p, 0, sizeof(p));
	if (!rec || !out) {
		snprintf(why, NTFS_WHY, "out of memory");
		goto out;
	}
	if (ntfs_vol_read_record(&c->vol, d, rec) ||
	    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		goto out;
	memcpy(&m, rec, sizeof(m));
	other = le16toh(m.attrs_offset) + 8;
	ntfs_attr_cursor_init(&cur, rec);
	while ((more = ntfs_attr_next(&cur, &a, why)) == 1) {
		uint32_t t = le32toh(a->type);

		if (t == NTFS_AT_ATTRIBUTE_LIST) {
			snprintf(why, NTFS_WHY, "its attributes are in several records");
			goto out;
		}
		if (!is_index_attr(a, name)) {
			other += le32toh(a->length);
			continue;
		}
		if (!a->non_resident)
			continue;
		if (t == NTFS_AT_INDEX_ALLOCATION && !old) {
			nold = ntfs_attr_runs(a, c->vol.boot.g.nr_clusters, &old, why);
			if (nold < 0) {
				old = NULL;
				nold = 0;
			}
		} else if (!gone) {
			ngone = ntfs_attr_runs(a, c->vol.boot.g.nr_clusters, &gone, why);
			if (ngone < 0) {
				gone = NULL;
				ngone = 0;
			}
		}
	}
	if (more < 0)
		goto out;
	if (ntfs_index_plan(c, &p, type, collation, e, n, other, old, nold, &whole, why) ||
	    rewrite_record(c, rec, out, &p, name, why))
		goto out;
	if (ntfs_index_plan_commit(c, &p, old, nold, gone, ngone, why))
		goto out;
	if (ntfs_check_write_record(c, d, out)) {
		snprintf(why, NTFS_WHY, "writing the record failed");
		goto out;
	}
	ret = 0;
out:
	ntfs_index_build_free(&p.res);
	free(p.runs);
	free(old);
	free(gone);
	free(rec);
	free(out);
	return ret;
}

