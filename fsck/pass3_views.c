// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 3, the view indexes of $Extend's files: $Quota's $O (owner ids by
 * SID) and $Q (quotas by owner id), $ObjId's $O (object ids) and
 * $Reparse's $R (reparse points by tag and file).  The files are found by
 * name in $Extend's index; each index present is walked by the libntfs
 * B+tree walker (structure, key order under its collation, depth, VCNs,
 * $BITMAP).  A damaged one is rebuilt with the index builder: $ObjId's
 * $O from the $OBJECT_ID of every file (and the birth ids its readable
 * entries hold, pass3_objid.c), $R from the files' reparse points (pass
 * 2 gathered them and asked), the others from the entries the walk
 * could still read (equal keys: the first kept; $Quota's also from the
 * other view, quota_fill).  $ObjId's $O is also
 * compared with the files' object ids when it is sound, and rebuilt the
 * same way when they differ; what the other views' entries say (quotas)
 * is not judged here ($R: pass2_rindex.c).
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/index_build.h"
#include "ntfs_check.h"
#include "ntfs_objid.h"
#include "ntfs_problems.h"

static const struct view {
	const char *file, *index;
	uint32_t collation;
} views[] = {
	{ "$Quota", "$O", NTFS_COLLATION_NTOFS_SID },
	{ "$Quota", "$Q", NTFS_COLLATION_NTOFS_ULONG },
	{ "$ObjId", "$O", NTFS_COLLATION_NTOFS_ULONGS },
	{ "$Reparse", "$R", NTFS_COLLATION_NTOFS_ULONGS },
};
#define NVIEWS (sizeof(views) / sizeof(views[0]))

struct vwalk {
	struct ntfs_check *c;
	const struct view *v;
	char obj[64];
	int bad;			/* 1: rebuild, 2: declined, 3: rebuild
					 * (filled from the other view) */
	struct ntfs_view_entry *k;
	size_t n, cap;
	bool nomem;
};

static int keep(struct vwalk *w, const uint8_t *key, uint16_t klen,
		const uint8_t *data, uint16_t dlen);

static void on_fault(void *arg, enum ntfs_bt_fault f, const struct ntfs_ie_view *a,
		     const struct ntfs_ie_view *b, const char *why)
{
	struct vwalk *w = arg;

	(void)f;
	(void)a;
	(void)b;
	if (!w->bad)
		w->bad = fsf_fix_ask(&w->c->fix, &PR_VIEW_INDEX, w->obj, why) ? 1 : 2;
}


/* A view entry's data (offset and length in IE's mref), or NULL when
 * it lies outside the entry or over its key. */
static const uint8_t *entry_data(const struct ntfs_ie_view *ie)
{
	uint16_t doff = (uint16_t)(ie->mref & 0xffff), dlen = (uint16_t)(ie->mref >> 16);
	const uint8_t *entry = ie->key - sizeof(struct ntfs_index_entry);
	uint16_t elen;

	memcpy(&elen, entry + 8, 2);
	elen = le16toh(elen) - ((ie->flags & NTFS_IE_NODE) ? 8 : 0);
	if ((uint32_t)doff + dlen > elen || (dlen && doff < sizeof(struct ntfs_index_entry) +
					     ie->key_len))
		return NULL;
	return entry + doff;
}

static int on_entry(void *arg, const struct ntfs_ie_view *ie)
{
	struct vwalk *w = arg;
	uint16_t dlen = (uint16_t)(ie->mref >> 16);
	const uint8_t *data = entry_data(ie);

	if (!data) {
		on_fault(w, NTFS_BT_CORRUPT, NULL, NULL, "an entry's data lies outside it");
		return 0;	/* not kept */
	}
	if (keep(w, ie->key, ie->key_len, data, dlen)) {
		w->nomem = true;
		return 1;
	}
	return 0;
}

static int keep(struct vwalk *w, const uint8_t *key, uint16_t klen,
		const uint8_t *data, uint16_t dlen)
{
	struct ntfs_view_entry *k;

	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 32;
		struct ntfs_view_entry *g = realloc(w->k, cap * sizeof(*g));

		if (!g)
			return -ENOMEM;
		w->k = g;
		w->cap = cap;
	}
	k = &w->k[w->n];
	k->mem = malloc((size_t)klen + dlen + 1);
	if (!k->mem)
		return -ENOMEM;
	memcpy(k->mem, key, klen);
	memcpy(k->mem + klen, data, dlen);
	k->klen = klen;
	k->dlen = dlen;
	w->n++;
	return 0;
}

/* $ObjId:$O: the entries read against the files' object ids (asked
 * when the index itself is sound); W's entries become those the files
 * call for.  Rebuild? */
static int object_ids(struct vwalk *w, uint8_t *rec, bool *rebuild)
{
	struct ntfs_view_entry *want;
	size_t n;
	bool repair;
	int r = ntfs_objid_wanted(w->c, rec, w->k, w->n, !w->bad, &want, &n, &repair);

	for (size_t i = 0; i < w->n; i++)
		free(w->k[i].mem);
	free(w->k);
	w->k = want;
	w->n = w->cap = n;
	*rebuild = w->bad == 1 || repair;
	if (r)
		w->nomem = true;
	return r;
}

static void rebuild(struct vwalk *w, uint64_t recno)
{
	struct ntfs_ib_spec spec = { .collation = w->v->collation };
	struct ntfs_ib_entry *e = calloc(w->n + 1, sizeof(*e));
	char why[NTFS_WHY];
	size_t m = 0;

	if (!e) {
		fsf_fix_failed(&w->c->fix);
		return;
	}
	for (size_t i = 0; i < w->n; i++)
		e[i] = (struct ntfs_ib_entry){ .mref = i, .key = w->k[i].mem,
					       .key_len = w->k[i].klen,
					       .data = w->k[i].mem + w->k[i].klen,
					       .data_len = w->k[i].dlen };
	ntfs_ib_sort(e, w->n, &spec);
	/* equal keys (or keys the rule cannot compare): the first kept */
	for (size_t i = 0; i < w->n; i++)
		if (!m || ntfs_collate(spec.collation, NULL, e[m - 1].key, e[m - 1].key_len,
				       e[i].key, e[i].key_len) == -1)
			e[m++] = e[i];
	if (ntfs_write_index(w->c, recno, w->v->index, 0, w->v->collation, e,
			     (long)m, why)) {
		/* the fixes answered for it (REBUILT, FIXED) are taken
		 * back: left, not fixed, and said so once */
		unsigned int n = fsf_fix_failed_object(&w->c->fix, w->obj,
						       FSF_PROMPT_REBUILD) +
				 fsf_fix_failed_object(&w->c->fix, w->obj,
						       FSF_PROMPT_FIX);

		fsf_fix_ask(&w->c->fix, n ? &PR_VIEW_NOT_REBUILT :
				       &PR_VIEW_INDEX_FAILED, w->obj, why);
	}
	free(e);
}

/* Is KEY (KLEN bytes) among W's entries? */
static bool has_key(const struct vwalk *w, const uint8_t *key, uint16_t klen)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->k[i].klen == klen && !memcmp(w->k[i].mem, key, klen))
			return true;
	return false;
}

#define QUOTA_DATA 48			/* a $Q entry's data before its SID */
#define QUOTA_FLAG_DEFAULT_LIMITS 0x1u
#define QUOTA_FLAG_OUT_OF_DATE 0x200u

/* The other view's entries, for W to take what it lacks: $Quota:$O
 * (SID -> owner id) from $Q's entries (owner id -> data ending in the
 * SID), losslessly; $Q from $O's, each new entry with the default
 * entry's (owner id 1) limits and no usage, the default entry then
 * marked out of date (Windows counts the usage again, as after ntfs-3g
 * wrote to the volume).  Read-only walk of $Quota's record REC (D). */
struct other {
	struct ntfs_check *c;
	struct vwalk *w;
	bool q;				/* W is $Q */
	bool nomem;
	bool added;
};

static int other_entry(void *arg, const struct ntfs_ie_view *ie)
{
	struct other *o = arg;
	uint16_t dlen = (uint16_t)(ie->mref >> 16);
	const uint8_t *data = entry_data(ie);
	uint8_t buf[QUOTA_DATA + 68];

	if (!data)
		return 0;		/* judged (and dropped) on its own turn */
	if (!o->q) {
		/* a $Q entry: its SID becomes an $O key, its id the data */
		if (ie->key_len != 4 || dlen <= QUOTA_DATA || dlen - QUOTA_DATA > 68 ||
		    has_key(o->w, data + QUOTA_DATA, dlen - QUOTA_DATA))
			return 0;
		if (keep(o->w, data + QUOTA_DATA, dlen - QUOTA_DATA, ie->key, 4)) {
			o->nomem = true;
			return 1;
		}
		o->added = true;
		return 0;
	}
	/* an $O entry: its id becomes a $Q key */
	if (dlen != 4 || !ie->key_len || ie->key_len > 68 || has_key(o->w, data, 4))
		return 0;
	memset(buf, 0, sizeof(buf));
	buf[0] = 2;				/* version */
	buf[4] = QUOTA_FLAG_DEFAULT_LIMITS;
	memset(buf + 24, 0xff, 16);		/* threshold, limit: none */
	memcpy(buf + QUOTA_DATA, ie->key, ie->key_len);
	if (keep(o->w, data, 4, buf, (uint16_t)(QUOTA_DATA + ie->key_len))) {
		o->nomem = true;
		return 1;
	}
	o->added = true;
	return 0;
}

static void other_fault(void *arg, enum ntfs_bt_fault f, const struct ntfs_ie_view *a,
			const struct ntfs_ie_view *b, const char *why)
{
	(void)arg;
	(void)f;
	(void)a;
	(void)b;
	(void)why;			/* judged on its own turn */
}

static int quota_fill(struct vwalk *w, uint64_t recno, const uint8_t *rec)
{
	bool q = !strcmp(w->v->index, "$Q");
	struct other o = { .c = w->c, .w = w, .q = q };
	struct ntfs_bt_ops ops = { .entry = other_entry, .fault = other_fault };
	struct ntfs_bt t = { .type = 0, .arg = &o,
			     .collation = q ? NTFS_COLLATION_NTOFS_SID : NTFS_COLLATION_NTOFS_ULONG };
	struct ntfs_index ix;
	size_t had = w->n;

	if (!ntfs_index_open(w->c, recno, rec, q ? "$O" : "$Q", &ix)) {
		ntfs_index_bt(&ix, &t, &ops);
		if (ntfs_bt_walk(&t))
			o.nomem = true;
		ntfs_bt_free(&t);
	}
	ntfs_index_close(&ix);
	if (o.nomem)
		return -ENOMEM;
	if (q && !has_key(w, (const uint8_t *)"\1\0\0", 4)) {
		/* the default entry (owner id 1, no SID) lost: made again
		 * as a fresh volume has it, out of date */
		uint8_t id[4] = { 1 }, d[QUOTA_DATA] = { 2 };

		d[4] = QUOTA_FLAG_DEFAULT_LIMITS;
		d[5] = QUOTA_FLAG_OUT_OF_DATE >> 8;
		memset(d + 24, 0xff, 16);
		if (keep(w, id, 4, d, QUOTA_DATA))
			return -ENOMEM;
	}
	if (q && o.added) {
		/* limits from the default entry, which is out of date now */
		for (size_t i = 0; i < had; i++) {
			uint32_t id, flags;
			struct ntfs_view_entry *d = &w->k[i];

			memcpy(&id, d->mem, 4);
			if (d->klen != 4 || le32toh(id) != 1 || d->dlen < QUOTA_DATA)
				continue;
			memcpy(&flags, d->mem + 8, 4);
			flags = htole32(le32toh(flags) | QUOTA_FLAG_OUT_OF_DATE);
			memcpy(d->mem + 8, &flags, 4);
			for (size_t j = had; j < w->n; j++)
				memcpy(w->k[j].mem + 4 + 24, d->mem + 4 + 24, 16);
		}
	}
	return 0;
}

/* W's entries become KEYS (N $R keys of 12 bytes, no data): the files'
 * reparse points, which pass 2 gathered.  0 or -ENOMEM. */
static int from_files(struct vwalk *w, const uint8_t *keys, size_t n)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->k[i].mem);
	w->n = 0;
	for (size_t i = 0; i < n; i++)
		if (keep(w, keys + 12 * i, 12, keys, 0))
			return -ENOMEM;
	return 0;
}

static int check_view(struct ntfs_check *c, const struct view *v, uint64_t recno,
		      uint8_t *rec)
{
	struct vwalk w = { .c = c, .v = v };
	struct ntfs_bt_ops ops = { .entry = on_entry, .fault = on_fault,
				   .empty_leaf_fault = true };
	struct ntfs_bt t = { .type = 0, .collation = v->collation, .arg = &w };
	struct ntfs_index ix;
	int r, ret = 0;
	bool objid = !strcmp(v->file, "$ObjId"), again = false;
	bool reparse = !strcmp(v->file, "$Reparse"), quota = !strcmp(v->file, "$Quota");

	snprintf(w.obj, sizeof(w.obj), "%s:%s", v->file, v->index);
	/* $R: pass 2 compared it with the files and asked (once is
	 * enough); its rebuild is done here, from the files' keys */
	if (reparse && c->rp_asked)
		w.bad = c->rp_rebuild ? 1 : 2;
	/* $R that pass 2 walked: only its rebuild is left */
	if (reparse && c->rp_walked && c->rp_rec == recno)
		r = 2;
	else
		r = ntfs_index_open(c, recno, rec, v->index, &ix);
	if (r == 0) {
		ntfs_index_bt(&ix, &t, &ops);
		if (ix.has_alloc && !ix.has_bitmap)
			on_fault(&w, NTFS_BT_SHAPE, NULL, NULL, "large index without its $BITMAP");
		if (ntfs_bt_walk(&t))
			w.nomem = true;
		ntfs_bt_free(&t);
	} else if (r == -ENOMEM) {
		w.nomem = true;
	} else if (r == -1 && ix.root && (objid || reparse)) {
		/* its root is there but the rest unreadable (an extent of
		 * its allocation or bitmap lost with its record): rebuilt
		 * from the files' object ids or reparse points */
		on_fault(&w, NTFS_BT_CORRUPT, NULL, NULL, ix.why);
	} else if (r == -1 && ix.root && quota) {
		/* $Quota's: what its root and the blocks its extents left
		 * still map hold (faults past the first not asked again),
		 * then what the other view knows (quota_fill) */
		on_fault(&w, NTFS_BT_CORRUPT, NULL, NULL, ix.why);
		ntfs_index_bt(&ix, &t, &ops);
		t.bitmap = NULL;
		if (ntfs_bt_walk(&t))
			w.nomem = true;
		ntfs_bt_free(&t);
	}
	/* r == -1 with no root (not this file's index) and 1 (split): not
	 * judged */
	if (r != 2)
		ntfs_index_close(&ix);
	/* a sound $Quota view: what the other holds and the default
	 * entry, taken now; asked when any was missing (rebuilt: 3) */
	if (!w.nomem && r == 0 && !w.bad && quota) {
		size_t had = w.n;

		if (quota_fill(&w, recno, rec))
			w.nomem = true;
		else if (w.n > had)
			w.bad = fsf_fix_ask(&c->fix, &PR_QUOTA_VIEW_SHORT, w.obj,
					    (unsigned long long)(w.n - had),
					    strcmp(v->index, "$Q") ?
					    "owners $Q names" :
					    "owners $O names or the default entry, owner id 1") ? 3 : 2;
	}
	if (!w.nomem && (r == 0 || w.bad == 1) && objid && w.bad != 2 &&
	    object_ids(&w, rec, &again))
		ret = -ENOMEM;
	else if (w.nomem)
		ret = -ENOMEM;
	else if (w.bad == 1 && quota && quota_fill(&w, recno, rec))
		ret = -ENOMEM;
	else if ((w.bad == 1 || again) && reparse && c->rp_keys &&
		 from_files(&w, c->rp_keys, c->rp_nkeys))
		ret = -ENOMEM;
	else if (w.bad == 1 || w.bad == 3 || again)
		rebuild(&w, recno);
	for (size_t i = 0; i < w.n; i++)
		free(w.k[i].mem);
	free(w.k);
	return ret;
}

int ntfs_pass3_views(struct ntfs_check *c)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *rec = malloc(rs);
	const char *names[NVIEWS];
	uint64_t recs[NVIEWS];
	char why[NTFS_WHY];
	int ret;

	if (!rec)
		return -ENOMEM;
	for (size_t i = 0; i < NVIEWS; i++)
		names[i] = views[i].file;
	/* $Extend's index was checked (and rebuilt) by the $I30 pass */
	ret = ntfs_extend_files(c, names, NVIEWS, recs);
	for (size_t i = 0; i < NVIEWS && !ret; i++) {
		uint64_t r = recs[i];

		if (r == UINT64_MAX || ntfs_vol_read_record(&c->vol, r, rec) ||
		    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
			continue;
		ret = check_view(c, &views[i], r, rec);
	}
	free(rec);
	return ret;
}
