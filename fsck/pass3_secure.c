// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 3, $Secure: every entry of its two indexes ($SII by security id,
 * $SDH by descriptor hash) must be in order, repeat the header of the
 * $SDS entry it points to, whose descriptor must have that hash; and both
 * indexes must name the same descriptors.  Descriptors are read one by
 * one where the indexes point (no copy of $SDS is kept).  Problems are
 * reported, not repaired yet.  $Secure's attributes must be in its base
 * record (they are unless the volume has very many descriptors);
 * otherwise it is not judged.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs_check.h"
#include "ntfs_problems.h"

#define MAX_DEPTH 32

struct secure_walk {
	struct ntfs_check *c;
	const char *index;		/* "$SII" or "$SDH" */
	bool sdh;
	/* the index allocation */
	struct ntfs_run *runs;
	long nruns;
	uint32_t block_size, vcn_unit;
	uint64_t alloc_bytes;
	uint8_t *visited, *block;
	/* $SDS */
	const struct ntfs_run *sds;
	long nsds;
	uint64_t sds_size;
	/* what was seen */
	uint32_t *ids;
	size_t nids, cap;
	uint64_t prev_key;
	bool have_prev, bad;
};

static void report(struct secure_walk *w, const char *why)
{
	char obj[32];

	w->bad = true;		/* one report per index */
	snprintf(obj, sizeof(obj), "$Secure:%s", w->index);
	fsf_fix_ask(&w->c->fix, &PR_SECURE_INDEX, obj, why);
}

#define PROBLEM(w, ...) do {						\
	if (!(w)->bad) {						\
		char why_[160];						\
		snprintf(why_, sizeof(why_), __VA_ARGS__);		\
		report(w, why_);					\
	}								\
} while (0)

static const uint8_t *attr_named(const uint8_t *rec, uint32_t type, const char *name)
{
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];

	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1) {
		const uint8_t *n = (const uint8_t *)a + le16toh(a->name_offset);
		bool same = le32toh(a->type) == type && a->name_length == 4;

		for (int i = 0; same && i < 4; i++)
			same = n[2 * i] == (uint8_t)name[i] && !n[2 * i + 1];
		if (same)
			return (const uint8_t *)a;
	}
	return NULL;
}

/* Read LEN bytes at OFF of $SDS. */
static int sds_read(struct secure_walk *w, uint64_t off, void *buf, uint32_t len)
{
	if (off + len > w->sds_size)
		return -1;
	return ntfs_runs_pread(w->c, w->sds, w->nsds, off, len, buf);
}

static void check_entry(struct secure_walk *w, const struct ntfs_ie_view *ie,
			const uint8_t *end)
{
	uint16_t doff = (uint16_t)(ie->mref & 0xffff), dlen = (uint16_t)(ie->mref >> 16);
	const uint8_t *entry = ie->key - sizeof(struct ntfs_index_entry);
	struct ntfs_sds_header h, disk;
	uint8_t *sd = NULL;
	uint64_t key;
	uint32_t k[2];

	if (dlen < sizeof(h) || entry + doff + sizeof(h) > end ||
	    ie->key_len != (w->sdh ? 8 : 4)) {
		PROBLEM(w, "an entry of %u key bytes has no valid data (%u bytes)",
			ie->key_len, dlen);
		return;
	}
	memcpy(&h, entry + doff, sizeof(h));
	memcpy(k, ie->key, ie->key_len);
	if (w->sdh ? le32toh(k[0]) != le32toh(h.hash) || le32toh(k[1]) != le32toh(h.security_id)
		   : le32toh(k[0]) != le32toh(h.security_id)) {
		PROBLEM(w, "the key of security id %u does not match its data (%u)",
			le32toh(h.security_id), le32toh(k[0]));
		return;
	}
	key = w->sdh ? (uint64_t)le32toh(h.hash) << 32 | le32toh(h.security_id)
		     : le32toh(h.security_id);
	if (w->have_prev && key <= w->prev_key) {
		PROBLEM(w, "security id %u is out of order (after key %llu)",
			le32toh(h.security_id), (unsigned long long)w->prev_key);
		return;
	}
	w->prev_key = key;
	w->have_prev = true;
	if (le32toh(h.length) < sizeof(h) || le32toh(h.length) - sizeof(h) > 65536 ||
	    !(sd = malloc(le32toh(h.length))) ||
	    sds_read(w, le64toh(h.offset), &disk, sizeof(disk)) ||
	    memcmp(&disk, &h, sizeof(h)) ||
	    sds_read(w, le64toh(h.offset) + sizeof(h), sd,
		     le32toh(h.length) - (uint32_t)sizeof(h))) {
		free(sd);
		PROBLEM(w, "security id %u points to $SDS offset %llu, which does not hold it",
			le32toh(h.security_id), (unsigned long long)le64toh(h.offset));
		return;
	}
	if (ntfs_sd_hash(sd, le32toh(h.length) - sizeof(h)) != le32toh(h.hash)) {
		free(sd);
		PROBLEM(w, "the descriptor of security id %u does not have hash 0x%x",
			le32toh(h.security_id), le32toh(h.hash));
		return;
	}
	free(sd);
	if (w->nids == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 64;
		uint32_t *g = realloc(w->ids, cap * sizeof(*g));

		if (!g)
			return;
		w->ids = g;
		w->cap = cap;
	}
	w->ids[w->nids++] = le32toh(h.security_id);
}

static uint64_t block_offset(const struct secure_walk *w, int64_t vcn)
{
	uint64_t byte = (uint64_t)vcn * w->vcn_unit;

	if (vcn < 0 || byte + w->block_size > w->alloc_bytes)
		return UINT64_MAX;
	return byte;		/* read with ntfs_runs_pread: may span runs */
}

/* In-order walk (keys must come out sorted), depth-bounded, each block once. */
static void walk(struct secure_walk *w, const uint8_t *ents, uint32_t len, int depth)
{
	struct ntfs_ie_view ie;
	char why[NTFS_WHY];
	uint32_t off = 0;
	int r;

	do {
		r = ntfs_ie_next(ents, len, &off, false, &ie, why);
		if (r < 0) {
			PROBLEM(w, "an entry is corrupt (%s)", why);
			return;
		}
		if (ie.child_vcn >= 0) {
			uint64_t at = w->block ? block_offset(w, ie.child_vcn) : UINT64_MAX;
			uint64_t b = at == UINT64_MAX ? 0 :
				     (uint64_t)ie.child_vcn * w->vcn_unit / w->block_size;
			uint8_t *blk;
			const uint8_t *e;
			uint32_t el;

			if (at == UINT64_MAX || depth >= MAX_DEPTH || bit_get(w->visited, b)) {
				PROBLEM(w, "sub-node VCN %lld is invalid or reached twice",
					(long long)ie.child_vcn);
				return;
			}
			bit_set(w->visited, b);
			blk = malloc(w->block_size);
			if (!blk)
				return;
			if (ntfs_runs_pread(w->c, w->runs, w->nruns, at, w->block_size, blk) ||
			    ntfs_record_check(blk, w->block_size, NTFS_MAGIC_INDX, why) != NTFS_REC_OK ||
			    ntfs_index_block_parse(blk, w->block_size, ie.child_vcn, &e, &el, why)) {
				PROBLEM(w, "index block VCN %lld is unusable (%s)",
					(long long)ie.child_vcn, why);
				free(blk);
				return;
			}
			walk(w, e, el, depth + 1);
			free(blk);
			if (w->bad)
				return;
		}
		if (r == 1)
			check_entry(w, &ie, ents + len);
	} while (r == 1 && !w->bad);
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

static void check_index(struct secure_walk *w, const uint8_t *rec)
{
	const struct ntfs_attr_header *ra =
		(const void *)attr_named(rec, NTFS_AT_INDEX_ROOT, w->index);
	const struct ntfs_attr_header *ia =
		(const void *)attr_named(rec, NTFS_AT_INDEX_ALLOCATION, w->index);
	struct ntfs_index_root root;
	const uint8_t *ents;
	uint32_t elen, vlen = 0;
	char why[NTFS_WHY];
	const uint8_t *val = ra && !ra->non_resident ? ntfs_attr_value(ra, &vlen) : NULL;

	if (!val || ntfs_index_root_parse(val, vlen, &root, &ents, &elen, why)) {
		PROBLEM(w, "%s", "the index root is missing or corrupt");
		return;
	}
	if (root.ih.flags & 1) {
		struct ntfs_attr_nonresident n;

		w->block_size = le32toh(root.index_block_size);
		if (!ia || !ia->non_resident || w->block_size < 512 ||
		    w->block_size > 65536 || w->block_size & (w->block_size - 1) ||
		    (w->nruns = ntfs_attr_runs(ia, w->c->vol.boot.g.nr_clusters,
					       &w->runs, why)) < 0) {
			PROBLEM(w, "%s", "a large index without a usable allocation");
			return;
		}
		memcpy(&n, ia, sizeof(n));
		w->alloc_bytes = le64toh((uint64_t)n.data_size);
		w->vcn_unit = w->block_size >= w->c->vol.boot.g.cluster_size ?
			      w->c->vol.boot.g.cluster_size : 512;
		w->visited = calloc(1, w->alloc_bytes / w->block_size / 8 + 1);
		w->block = (uint8_t *)1;	/* blocks exist */
		if (!w->visited)
			return;
	}
	walk(w, ents, elen, 0);
	if (w->nids)
		qsort(w->ids, w->nids, sizeof(*w->ids), cmp_u32);
}

int ntfs_pass3_secure(struct ntfs_check *c)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *rec = malloc(rs);
	struct ntfs_run *sds = NULL;
	struct secure_walk sii = { .c = c, .index = "$SII" };
	struct secure_walk sdh = { .c = c, .index = "$SDH", .sdh = true };
	const struct ntfs_attr_header *sa;
	char why[NTFS_WHY];
	long nsds;

	if (!rec)
		return -ENOMEM;
	if (ntfs_check_read_record(c, NTFS_FILE_SECURE, rec) ||
	    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK ||
	    !(sa = (const void *)attr_named(rec, NTFS_AT_DATA, "$SDS")) ||
	    !sa->non_resident ||
	    (nsds = ntfs_attr_runs(sa, c->vol.boot.g.nr_clusters, &sds, why)) < 0)
		goto out;	/* not judged: pass 1 vouched for the record */
	{
		struct ntfs_attr_nonresident n;

		memcpy(&n, sa, sizeof(n));
		sii.sds = sdh.sds = sds;
		sii.nsds = sdh.nsds = nsds;
		sii.sds_size = sdh.sds_size = le64toh((uint64_t)n.data_size);
	}
	check_index(&sii, rec);
	check_index(&sdh, rec);
	if (!sii.bad && !sdh.bad &&
	    (sii.nids != sdh.nids ||
	     (sii.nids && memcmp(sii.ids, sdh.ids, sii.nids * sizeof(*sii.ids))))) {
		sdh.bad = false;
		sdh.index = "$SDH";
		PROBLEM(&sdh, "it names %zu descriptors, $SII names %zu",
			sdh.nids, sii.nids);
	}
out:
	free(sii.ids);
	free(sdh.ids);
	free(sii.runs);
	free(sdh.runs);
	free(sii.visited);
	free(sdh.visited);
	free(sds);
	free(rec);
	return 0;
}
