// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 3, $Secure.  $SDS holds the security descriptors (each 256 KiB
 * block followed by its mirror); $SII (by security id) and $SDH (by hash)
 * index them.  The descriptors are read from $SDS first: an entry is
 * valid when its header names its own offset and its descriptor has its
 * hash; a damaged entry whose mirror copy is valid is restored from the
 * mirror.  Both indexes are walked by the libntfs B+tree walker and every
 * entry must repeat the header of a valid $SDS entry; both must index
 * exactly the valid entries.  Otherwise they are rebuilt from $SDS with
 * the index builder.  When no descriptor is left, the default ones of a
 * fresh volume are written.  Reading and writing $SDS and the indexes'
 * keys are libntfs/sds.c's; this pass decides and reports.  Last, every file's security id must be
 * indexed: an unknown id is replaced by the root directory's (or, for
 * system files, $Extend's files and when the root's is unknown too, the
 * lowest known id).
 * With very many descriptors $Secure's attributes continue in extension
 * records ($ATTRIBUTE_LIST): $SDS is read through its extents there, the
 * indexes walked through theirs (an extent lost with its record: the
 * index is corrupt) and rebuilt where they are (pass3_rebuild_listed.c).
 * On a truncated device with $SDS partly past its end nothing is judged.
 * $SDS is read through two 16 KiB windows whatever its size, so any size
 * its runs map (at most the volume) is judged: time linear in the size,
 * memory per valid descriptor 32 bytes (each takes at least 48 of $SDS's
 * bytes and its mirror as many), about 140 more while the indexes are
 * rebuilt.  A size beyond what its runs map or beyond the volume is
 * reported and $Secure left unchecked (exit 4, never "clean").
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/index_build.h"
#include "ntfs/sds.h"
#include "ntfs_check.h"
#include "ntfs_problems.h"

struct sd {
	struct ntfs_sds_header h;	/* little-endian, as on disk */
	uint32_t id;
	size_t at;			/* its place in $SDS, among the valid */
};

struct secure {
	struct ntfs_check *c;
	struct ntfs_sds sds;
	struct sd *v;			/* valid entries, by id */
	size_t n, cap;
	bool rebuild, unsorted;		/* v in $SDS order until sort_sds() */
};

static int cmp_sd(const void *x, const void *y)
{
	const struct sd *a = x, *b = y;

	return a->id < b->id ? -1 : a->id > b->id;
}

static int cmp_sd_at(const void *x, const void *y)
{
	const struct sd *a = x, *b = y;

	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return a->at < b->at ? -1 : a->at > b->at;
}

/* $SDS's entries by id, the first in $SDS of each id kept: sorted once
 * after the scan (sorting after each of 100,000 entries out of order
 * never ended) */
static void sort_sds(struct secure *s)
{
	size_t k = 0;

	if (!s->unsorted)
		return;
	qsort(s->v, s->n, sizeof(*s->v), cmp_sd_at);
	for (size_t i = 0; i < s->n; i++)
		if (!k || s->v[i].id != s->v[k - 1].id)
			s->v[k++] = s->v[i];
	s->n = k;
	s->unsorted = false;
}

static const struct sd *lookup(const struct secure *s, uint32_t id)
{
	struct sd key = { .id = id };

	return s->n ? bsearch(&key, s->v, s->n, sizeof(key), cmp_sd) : NULL;
}

static int add_sd(struct secure *s, const struct ntfs_sds_header *h)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct sd *g = realloc(s->v, cap * sizeof(*g));

		if (!g)
			return -ENOMEM;
		s->v = g;
		s->cap = cap;
	}
	s->v[s->n].h = *h;
	s->v[s->n].id = le32toh(h->security_id);
	s->v[s->n].at = s->n;
	s->n++;
	return 0;
}

/* One valid entry of $SDS (a damaged one restored from its mirror). */
static int on_sds_entry(void *arg, struct ntfs_sds *sds,
			const struct ntfs_sds_header *h, uint64_t off, bool mirror)
{
	struct secure *s = arg;
	struct ntfs_check *c = s->c;

	if (mirror && fsf_fix_ask(&c->fix, &PR_SECURE_SDS_MIRROR, "$Secure:$SDS",
				  le32toh(h->security_id), (unsigned long long)off) &&
	    ntfs_sds_restore(sds, off, le32toh(h->length)))
		fsf_fix_failed(&c->fix);
	/* in order: after the last, so no duplicate (as $SDS is written);
	 * out of order: sorted and the duplicates dropped after the scan */
	if (s->n && le32toh(h->security_id) <= s->v[s->n - 1].id)
		s->unsorted = true;
	return add_sd(s, h);
}

/* one index walked */
struct sec_walk {
	struct secure *s;
	const char *obj;		/* "$Secure:$SII" */
	bool sdh, reported;
	uint8_t *seen;			/* one byte per valid entry */
};

static void report(struct sec_walk *w, const char *why)
{
	if (!w->reported && fsf_fix_ask(&w->s->c->fix, &PR_SECURE_INDEX, w->obj, why))
		w->s->rebuild = true;
	w->reported = true;
}

static void on_fault(void *arg, enum ntfs_bt_fault f, const struct ntfs_ie_view *a,
		     const struct ntfs_ie_view *b, const char *why)
{
	(void)f;
	(void)a;
	(void)b;
	report(arg, why);
}

static int on_entry(void *arg, const struct ntfs_ie_view *ie)
{
	struct sec_walk *w = arg;
	uint16_t doff = (uint16_t)(ie->mref & 0xffff), dlen = (uint16_t)(ie->mref >> 16);
	const uint8_t *entry = ie->key - sizeof(struct ntfs_index_entry);
	struct ntfs_sds_header h;
	const struct sd *sd;
	uint32_t k[2];
	char why[NTFS_WHY];

	/* the entry's length bounds its data (ntfs_ie_next checked it) */
	if (dlen != sizeof(h) || doff < sizeof(struct ntfs_index_entry) + ie->key_len ||
	    ie->key_len != (w->sdh ? 8 : 4)) {
		snprintf(why, sizeof(why), "an entry of %u key bytes has %u data bytes at %u",
			 ie->key_len, dlen, doff);
		report(w, why);
		return 0;
	}
	memcpy(&h, entry + doff, sizeof(h));
	memcpy(k, ie->key, ie->key_len);
	sd = lookup(w->s, le32toh(h.security_id));
	if (le32toh(k[w->sdh]) != le32toh(h.security_id) ||
	    (w->sdh && le32toh(k[0]) != le32toh(h.hash))) {
		snprintf(why, sizeof(why), "the key of security id %u does not match its data",
			 le32toh(h.security_id));
		report(w, why);
	} else if (!sd || memcmp(&sd->h, &h, sizeof(h))) {
		snprintf(why, sizeof(why), "security id %u is not at $SDS offset %llu",
			 le32toh(h.security_id), (unsigned long long)le64toh(h.offset));
		report(w, why);
	} else {
		w->seen[sd - w->s->v] = 1;
	}
	return 0;
}

static void check_index(struct secure *s, const uint8_t *rec, const char *name,
			bool sdh)
{
	char obj[32];
	struct sec_walk w = { .s = s, .obj = obj, .sdh = sdh };
	struct ntfs_bt_ops ops = { .entry = on_entry, .fault = on_fault,
				   .empty_leaf_fault = true };
	struct ntfs_bt t = { .type = 0, .arg = &w,
			     .collation = sdh ? NTFS_COLLATION_NTOFS_SECURITY_HASH :
						NTFS_COLLATION_NTOFS_ULONG };
	struct ntfs_index ix;
	int r;

	snprintf(obj, sizeof(obj), "$Secure:%s", name);
	w.seen = calloc(1, s->n + 1);
	if (!w.seen)
		return;
	r = ntfs_index_open(s->c, NTFS_FILE_SECURE, rec, name, &ix);
	if (r < 0) {
		report(&w, r == -1 ? ix.why : "out of memory");
	} else if (r == 0) {
		ntfs_index_bt(&ix, &t, &ops);
		if (ix.has_alloc && !ix.has_bitmap)
			report(&w, "large index without its $BITMAP");
		ntfs_bt_walk(&t);
		ntfs_bt_free(&t);
		for (size_t i = 0; i < s->n && !w.reported; i++)
			if (!w.seen[i]) {
				char why[NTFS_WHY];

				snprintf(why, sizeof(why), "security id %u of $SDS has no entry",
					 s->v[i].id);
				report(&w, why);
			}
	}
	ntfs_index_close(&ix);
	free(w.seen);
}

/* $SII and $SDH rebuilt from the valid entries */
static int rebuild(struct secure *s)
{
	struct ntfs_sds_header *h = calloc(s->n + 1, sizeof(*h));
	struct ntfs_ib_entry *sii = calloc(s->n + 1, sizeof(*sii));
	struct ntfs_ib_entry *sdh = calloc(s->n + 1, sizeof(*sdh));
	uint8_t (*keys)[8] = calloc(s->n + 1, 8);
	struct ntfs_ib_spec spec = { .collation = NTFS_COLLATION_NTOFS_ULONG };
	char why[NTFS_WHY];
	int ret = -1;

	if (!h || !sii || !sdh || !keys) {
		snprintf(why, sizeof(why), "out of memory");
		goto out;
	}
	for (size_t i = 0; i < s->n; i++)
		h[i] = s->v[i].h;
	ntfs_sds_index_entries(h, s->n, keys, sii, sdh);
	ntfs_ib_sort(sii, s->n, &spec);
	if (ntfs_write_index(s->c, NTFS_FILE_SECURE, "$SII", 0,
			     NTFS_COLLATION_NTOFS_ULONG, sii, (long)s->n, why))
		goto out;
	spec.collation = NTFS_COLLATION_NTOFS_SECURITY_HASH;
	ntfs_ib_sort(sdh, s->n, &spec);
	if (ntfs_write_index(s->c, NTFS_FILE_SECURE, "$SDH", 0,
			     NTFS_COLLATION_NTOFS_SECURITY_HASH, sdh, (long)s->n, why))
		goto out;
	ret = 0;
out:
	if (ret)
		fsf_fix_ask(&s->c->fix, &PR_SECURE_FAILED, "$Secure", why);
	free(h);
	free(sii);
	free(sdh);
	free(keys);
	return ret;
}

/* No descriptor left: the defaults of a fresh volume, both copies. */
static int write_defaults(struct secure *s)
{
	struct ntfs_secure def;

	ntfs_secure_build(&def);
	if (s->sds.size < NTFS_SDS_BLOCK + def.sds_len) {
		fsf_fix_ask(&s->c->fix, &PR_SECURE_FAILED, "$Secure",
			    "$SDS is too small for the default descriptors");
		return -1;
	}
	if (!ntfs_sds_entries_fit(&s->sds, def.sds_len)) {
		fsf_fix_ask(&s->c->fix, &PR_SECURE_FAILED, "$Secure",
			    "$SDS has a hole where the default descriptors go");
		return -1;
	}
	if (!fsf_fix_ask(&s->c->fix, &PR_SECURE_DEFAULTS, "$Secure:$SDS"))
		return -1;
	if (ntfs_sds_write_entries(&s->sds, def.sds, def.sds_len)) {
		fsf_fix_failed(&s->c->fix);
		return -1;
	}
	for (int i = 0; i < NTFS_NR_SD; i++)
		if (add_sd(s, &def.hdr[i]))
			return -1;
	s->rebuild = true;
	return 0;
}

/* Does REC name $Extend as its parent? */
static bool in_extend(const uint8_t *rec)
{
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];

	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1) {
		struct ntfs_file_name fn;

		if (ntfs_file_name_of(a, &fn) &&
		    (le64toh(fn.parent_directory) & 0xffffffffffffULL) == NTFS_FILE_EXTEND)
			return true;
	}
	return false;
}

/* Every base record's security id is a known one. */
static void check_ids(struct secure *s, uint8_t *rec)
{
	struct ntfs_check *c = s->c;
	uint32_t rs = c->vol.boot.g.mft_record_size, at, root_id = 0, low;
	char why[NTFS_WHY], obj[1200];
	bool known = c->summary_ok && !c->secids_overflow;

	if (!s->n)
		return;
	low = s->v[0].id;
	if (!ntfs_vol_read_record(&c->vol, NTFS_FILE_ROOT, rec) &&
	    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) == NTFS_REC_OK)
		root_id = ntfs_security_id_of(rec, &at);
	if (!lookup(s, root_id)) {
		root_id = low;
		known = false;	/* a /lost+found made with the root's id */
	}
	/* pass 1 saw every base record's id: when $Secure holds them all,
	 * only the records made after pass 1 (system ones) need a look */
	for (size_t i = 0; known && i < c->nsecids; i++)
		known = lookup(s, c->secids[i]);
	for (uint64_t r = 0; r < c->vol.mft_records; r++) {
		struct ntfs_mft_record m;
		uint32_t id, to;

		if (known && r >= 24)
			break;

		if (!cset_get(&c->record_used, r) || ntfs_vol_read_record(&c->vol, r, rec) ||
		    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
			continue;
		memcpy(&m, rec, sizeof(m));
		if (m.base_mft_record)
			continue;
		id = ntfs_security_id_of(rec, &at);
		if (!id || lookup(s, id))
			continue;
		/* system files, the root and $Extend's files: the lowest id */
		to = r < NTFS_FILE_FIRST_USER || in_extend(rec) ? low : root_id;
		ntfs_object_name(c, "file", r, obj, sizeof(obj));
		if (!fsf_fix_ask(&c->fix, &PR_SECURE_ID, obj, id, to))
			continue;
		to = htole32(to);
		memcpy(rec + at, &to, 4);
		if (ntfs_check_write_record(c, r, rec))
			fsf_fix_failed(&c->fix);
	}
}

/* $SDS's size against the bytes its runs map (holes included), at most
 * the volume's: false (reported) when it claims more */
static bool sds_size_mapped(struct ntfs_check *c, const struct ntfs_sds *sds)
{
	uint64_t cs = c->vol.boot.g.cluster_size, vcns = 0, most;

	for (long i = 0; i < sds->nruns && vcns < UINT64_MAX / 2; i++)
		vcns += sds->runs[i].len < UINT64_MAX / 2 ? sds->runs[i].len : UINT64_MAX / 2;
	most = vcns < c->vol.boot.g.nr_clusters ? vcns : c->vol.boot.g.nr_clusters;
	if (sds->size <= most * cs)
		return true;
	fsf_fix_ask(&c->fix, &PR_SECURE_UNCHECKED, "$Secure:$SDS",
		    (unsigned long long)sds->size, (unsigned long long)(most * cs));
	return false;
}

int ntfs_pass3_secure(struct ntfs_check *c)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *rec = malloc(rs);
	struct secure s = { .c = c };
	char why[NTFS_WHY];
	int ret = 0;

	if (!rec)
		return -ENOMEM;
	if (ntfs_vol_read_record(&c->vol, NTFS_FILE_SECURE, rec) ||
	    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		goto out;	/* not judged: pass 1 vouched for the record */
	ret = ntfs_sds_open(&c->vol, ntfs_check_in_use, c, NTFS_FILE_SECURE, rec, &s.sds);
	if (ret <= 0)
		goto out;	/* no $SDS to judge the indexes by (or out of memory) */
	ret = 0;
	/* clusters past the end of a truncated device were not read: the
	 * descriptors there are unknown, not gone (the truncation is
	 * reported), so $Secure is not judged: no entry restored from its
	 * mirror (a write past the end), no index rebuilt without them, no
	 * file's security id replaced because its descriptor was not read */
	if (ntfs_runs_past(s.sds.runs, s.sds.nruns, c->geo.dev_clusters) ||
	    !sds_size_mapped(c, &s.sds))
		goto out;
	ret = ntfs_sds_scan(&s.sds, on_sds_entry, &s);
	if (ret)
		goto out;
	sort_sds(&s);
	if (!s.n && write_defaults(&s))
		goto out;
	check_index(&s, rec, "$SII", false);
	check_index(&s, rec, "$SDH", true);
	if (s.rebuild)
		rebuild(&s);
	check_ids(&s, rec);
out:
	free(s.v);
	ntfs_sds_close(&s.sds);
	free(rec);
	return ret;
}
