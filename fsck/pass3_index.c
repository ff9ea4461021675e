// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 3: every directory's $I30 index.  The B+tree is walked by the
 * libntfs walker (libntfs/btree.c: key order in nodes and against the
 * separators above, uniform depth, block VCNs, $BITMAP); every entry must name a record in use, of the same
 * sequence number, that has that name in this directory; every name a
 * record gives itself must have its entry.  Problems are reported with
 * the directory's record number, and each asks to rebuild the index
 * (pass3_rebuild.c), which is done once per directory after the check.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs_check.h"
#include "ntfs_problems.h"
#include "ntfs/index_leaf.h"
#include "ntfs/name_edit.h"

static void name_of(const struct ntfs_ie_view *ie, uint16_t *u)
{
	for (unsigned int i = 0; i < ie->name_len; i++) {
		uint16_t v;

		memcpy(&v, ie->name + 2 * i, 2);
		u[i] = le16toh(v);
	}
}

/* a name whose entry was not met: looked up in its directory's index */
struct suspect {
	uint64_t dir, recno;
	uint8_t len;
	bool found;
	const uint8_t *name;		/* little-endian UTF-16 */
};

static int cmp_suspect(const void *x, const void *y)
{
	const struct suspect *a = x, *b = y;

	if (a->dir != b->dir)
		return a->dir < b->dir ? -1 : 1;
	if (a->recno != b->recno)
		return a->recno < b->recno ? -1 : 1;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return memcmp(a->name, b->name, 2u * a->len);
}

struct dir_walk {
	struct ntfs_check *c;
	uint64_t dir;
	const uint16_t *upcase;
	char obj[1200];			/* named on the first report */
	bool reported;			/* one corruption report per index */
	/* leaf blocks holding nothing but their end entry: how many, and
	 * where the first hangs (ntfs/btree.h) */
	unsigned int empty;
	int64_t empty_vcn, empty_top, empty_parent;
	uint32_t empty_pos;
	uint8_t *unchecked;		/* directories whose names are not judged */
	uint8_t *fbuf;			/* a record of an indexed file */
	bool metadata;			/* $Extend or below: sizes not judged */
	uint16_t dir_seq;		/* the directory's sequence number */
	/* lookup mode: only mark which of these entries exist */
	struct suspect *lookup;
	size_t nlookup;
	/* counting mode: only take each entry that names a file's name
	 * from the names pending (nothing reported) */
	bool counting;
	/* digest mode: only add each entry to its bucket (name_counts.c);
	 * anything that needs a closer look marks the bucket bad */
	bool digest;
};

static const char *wobj(struct dir_walk *w)
{
	if (!w->obj[0])
		ntfs_object_name(w->c, "directory", w->dir, w->obj, sizeof(w->obj));
	return w->obj;
}

static void corrupt(struct dir_walk *w, const char *why)
{
	if (w->digest)
		w->c->nbuckets[names_bucket(w->dir)].bad = true;
	if (w->lookup || w->counting || w->digest)
		return;
	if (!w->reported && fsf_fix_ask(&w->c->fix, &PR_INDEX_CORRUPT, wobj(w), why))
		ntfs_rebuild_promise(w->c, w->dir);
	w->reported = true;
	/* its missing entries follow from the corruption: not reported */
	rare_set(w->unchecked, w->dir);
}

/* Does the file have the entry's name in this directory?  Its data sizes
 * come along. */
struct entry_match {
	uint64_t dir;
	const uint8_t *name;		/* little-endian UTF-16 */
	uint8_t len;
	bool found;
	unsigned int names;		/* $FILE_NAMEs the file has */
	unsigned int bad;		/* ... and those holding a NUL or '/' */
	uint64_t parent;		/* the matching name's parent reference */
	struct ntfs_data_sizes data;
	/* set: also look for a name of the entry's spelling and namespace
	 * NS whose parent reference names no directory (pass3_strays.c),
	 * file RECNO's; its value then in STRAY */
	const struct ntfs_check *c;
	uint64_t recno;
	uint8_t ns;
	uint32_t stray_len;
	uint8_t stray[0x42 + 2 * 255];
	/* the matching name's value, and the file's other names in this
	 * directory by namespace (pass3_namespace.c) */
	uint32_t mine_len;
	uint8_t mine[0x42 + 2 * 255];
	unsigned int other[4];
};

static int match_name(const struct ntfs_attr_header *a, void *arg)
{
	struct entry_match *m = arg;
	struct ntfs_file_name fn;
	const uint8_t *v;
	uint32_t len;

	if (le32toh(a->type) != NTFS_AT_FILE_NAME || a->non_resident) {
		if (!m->data.known)
			ntfs_data_sizes_of(a, &m->data);
		return 0;
	}
	v = ntfs_attr_value(a, &len);
	if (len < sizeof(fn))
		return (void)m->names++, 0;
	memcpy(&fn, v, sizeof(fn));
	/* a name no namespace allows (a NUL or a '/', a damaged unit) is
	 * not one the file can keep: with no other, the entry's key is its
	 * name again (ntfs-3g cannot list a directory holding it) */
	if (sizeof(fn) + 2u * fn.name_length <= len &&
	    !ntfs_name_units_allowed(v + sizeof(fn), fn.name_length))
		return (void)m->bad++, 0;
	m->names++;
	if ((le64toh(fn.parent_directory) & 0xffffffffffffULL) == m->dir &&
	    fn.name_length == m->len && sizeof(fn) + 2u * m->len <= len &&
	    !memcmp(v + sizeof(fn), m->name, 2u * m->len) && !m->found) {
		m->found = true;
		m->parent = le64toh(fn.parent_directory);
		if (len <= sizeof(m->mine)) {
			memcpy(m->mine, v, len);
			m->mine_len = len;
		}
		return 0;
	}
	if ((le64toh(fn.parent_directory) & 0xffffffffffffULL) == m->dir &&
	    fn.name_type <= NTFS_NS_WIN32_AND_DOS)
		m->other[fn.name_type]++;
	if (m->c && !m->stray_len && fn.name_length == m->len &&
		   fn.name_type == m->ns && len <= sizeof(m->stray) &&
		   sizeof(fn) + 2u * m->len <= len &&
		   !memcmp(v + sizeof(fn), m->name, 2u * m->len) &&
		   ntfs_parent_is_stray(m->c, m->recno, le64toh(fn.parent_directory)) &&
		   !ntfs_name_given(m->c, m->recno, v, len)) {
		memcpy(m->stray, v, len);
		m->stray_len = len;
	}
	return 0;
}

/*
 * The file has no name of the entry's spelling in this directory, but
 * one of that spelling and namespace whose parent reference names no
 * directory (M->stray); the entry is that name's own: it names this
 * record with its sequence number, and its key's parent reference is
 * this very directory.  The name takes the directory back (the least
 * change that keeps it; dropping the entry lost it).  1: given back, or
 * so reported (-n), and the entry is then judged as any; 0: not so; -1:
 * the repair failed.
 */
static int parent_from_entry(struct dir_walk *w, const struct ntfs_ie_view *ie,
			     const uint16_t *name, uint64_t recno, uint16_t seq,
			     struct entry_match *m)
{
	struct ntfs_check *c = w->c;
	uint64_t dref = w->dir | (uint64_t)w->dir_seq << 48, p;
	struct ntfs_file_name key, fn;
	char n8[1024], what[64], why[NTFS_WHY];

	if (!m->stray_len || !seq || recno < NTFS_FILE_FIRST_USER || w->metadata ||
	    ie->key_len < sizeof(key) + 2u * ie->name_len)
		return 0;
	memcpy(&key, ie->key, sizeof(key));
	if (le64toh(key.parent_directory) != dref)
		return 0;
	memcpy(&fn, m->stray, sizeof(fn));
	p = le64toh(fn.parent_directory) & 0xffffffffffffULL;
	if (p == recno)
		snprintf(what, sizeof(what), "the file itself");
	else if (p >= c->vol.mft_records)
		snprintf(what, sizeof(what), "record %llu (past the MFT)",
			 (unsigned long long)p);
	else if (!cset_get(&c->record_used, p))
		snprintf(what, sizeof(what), "record %llu (not in use)",
			 (unsigned long long)p);
	else
		snprintf(what, sizeof(what), "record %llu (no directory)",
			 (unsigned long long)p);
	if (ntfs_name_given_add(c, recno, m->stray, m->stray_len))
		return 0;
	ntfs_name_to_utf8(name, ie->name_len, n8, sizeof(n8));
	if (fsf_fix_ask(&c->fix, &PR_NAME_PARENT_FROM_INDEX, wobj(w), n8,
			(unsigned long long)recno, what)) {
		if (ntfs_name_set_parent(c, recno, m->stray, m->stray_len, dref,
					 false, why)) {
			fsf_warn(c->log, "MFT record %llu: %s",
				 (unsigned long long)recno, why);
			fsf_fix_failed(&c->fix);
			return -1;
		}
		c->given[c->ngiven - 1].written = true;
	}
	m->found = true;
	m->parent = dref;
	return 1;
}

static void check_entry(struct dir_walk *w, const struct ntfs_ie_view *ie,
			const uint16_t *name)
{
	struct ntfs_check *c = w->c;
	uint64_t recno = ie->mref & 0xffffffffffffULL;
	uint16_t seq = (uint16_t)(ie->mref >> 48);
	struct entry_match m = { .dir = w->dir, .name = ie->name, .len = ie->name_len,
				 .c = c, .recno = recno,
				 /* no key, no namespace: 0xff matches none */
				 .ns = ie->key_len >= sizeof(struct ntfs_file_name) ?
				       ie->key[offsetof(struct ntfs_file_name, name_type)] : 0xff };
	struct ntfs_file_name fn;
	struct ntfs_mft_record hdr;
	char n8[1024], why[96];
	int given = 0;

	if (recno < c->vol.mft_records && cset_get(&c->record_used, recno)) {
		/* in use but unreadable: past a truncated device's end
		 * (pass 1 kept it), so it cannot be judged */
		if (ntfs_vol_read_record(&c->vol, recno, w->fbuf))
			return;
		memcpy(&hdr, w->fbuf, sizeof(hdr));
	} else {
		hdr.sequence_number = 0;
	}
	if (recno >= c->vol.mft_records || !cset_get(&c->record_used, recno)) {
		ntfs_name_to_utf8(name, ie->name_len, n8, sizeof(n8));
		if (ntfs_recreate_dir(c, w->dir, ie, n8, w->unchecked, wobj(w)) >= 0)
			return;	/* made again, or that was declined */
		snprintf(why, sizeof(why), "is not in use");
	}
	else if (seq && le16toh(hdr.sequence_number) != seq)
		snprintf(why, sizeof(why), "was reused (sequence %u, the entry says %u)",
			 le16toh(hdr.sequence_number), seq);
	/* a user file's reference carries its sequence number: 0 there is
	 * a cleared field, not a wildcard (ntfsck: IDX_SEQNO_ZERO) */
	else if (!seq && hdr.sequence_number && recno >= NTFS_FILE_FIRST_USER &&
		 !w->metadata)
		snprintf(why, sizeof(why), "has sequence number %u; the entry says 0",
			 le16toh(hdr.sequence_number));
	else if ((ntfs_file_foreach(c, recno, w->fbuf, match_name, &m) < 0 ||
		  !m.found) &&
		 (given = m.names ? parent_from_entry(w, ie, name, recno, seq, &m) : 0) <= 0) {
		char fwhy[NTFS_WHY];

		if (given < 0)
			return;

		/* a key holding a NUL or a '/', of a file whose names do
		 * too: the names are mended ('_' for each such unit) when
		 * the index is rebuilt from them (pass3_rebuild.c) */
		if (!ntfs_name_units_allowed(ie->name, ie->name_len) && m.bad &&
		    recno >= NTFS_FILE_FIRST_USER && !w->metadata) {
			if (ntfs_ask_name_mend(c, wobj(w), recno, ie->name,
					       ie->name_len)) {
				rare_set(c->mend, recno);
				ntfs_rebuild_promise(c, w->dir);
			}
			return;
		}
		/* a file whose names were lost with their attribute: the
		 * entry's key is its name (not an orphan to /lost+found);
		 * a key holding a NUL or a '/' is mended first */
		if (!m.names && recno >= NTFS_FILE_FIRST_USER &&
		    ie->name_len && ie->key_len >= sizeof(fn) + 2u * ie->name_len) {
			ntfs_name_to_utf8(name, ie->name_len, n8, sizeof(n8));
			if (fsf_fix_ask(&c->fix, &PR_NAME_FROM_INDEX, wobj(w), n8,
					(unsigned long long)recno)) {
				if (ntfs_name_from_entry(c, recno, w->dir, ie, fwhy)) {
					fsf_warn(c->log, "MFT record %llu: %s",
						 (unsigned long long)recno, fwhy);
					fsf_fix_failed(&c->fix);
				}
			}
			return;
		}
		/* a name lost with an extension record the file's list
		 * named (pass 1): this entry's key is a copy of it */
		if (m.names && recno >= NTFS_FILE_FIRST_USER && !w->metadata &&
		    ie->name_len && ie->key_len >= sizeof(fn) + 2u * ie->name_len &&
		    ie->parent == (w->dir | (uint64_t)w->dir_seq << 48) &&
		    ntfs_take_lost_name(c, recno)) {
			ntfs_name_to_utf8(name, ie->name_len, n8, sizeof(n8));
			if (fsf_fix_ask(&c->fix, &PR_NAME_LOST_RECORD, wobj(w), n8,
					(unsigned long long)recno)) {
				bool rekey = false;

				if (ntfs_name_back_from_entry(c, recno, ie, &rekey, fwhy)) {
					fsf_warn(c->log, "MFT record %llu: %s",
						 (unsigned long long)recno, fwhy);
					fsf_fix_failed(&c->fix);
				} else if (rekey) {
					ntfs_rebuild_promise(c, w->dir);
				}
				/* else the entry is the name's key: it stays (the
				 * name was in no digest, the entry is in none) */
			}
			return;
		}
		snprintf(why, sizeof(why), "has no such name in this directory");
	} else {
		const struct ntfs_data_sizes *d = &m.data;

		/* the entry names one of the file's names */
		names_digest_add(c, c->entries_sum, recno, w->dir,
				 ie->name_len, ie->name);
		memcpy(&fn, ie->key, sizeof(fn));
		/* parent references name the directory with its sequence
		 * number (0: not checked in system files; in a user file's
		 * name it is a cleared field, ntfsck's FN_PARENT_SEQNO_ZERO) */
		bool user = recno >= NTFS_FILE_FIRST_USER && !w->metadata;
		uint64_t key_parent = le64toh(fn.parent_directory);
		bool in_file = (m.parent >> 48 || user) &&
			       (uint16_t)(m.parent >> 48) != w->dir_seq;

		if (in_file || ((key_parent >> 48 || user) &&
				key_parent != (w->dir | (uint64_t)w->dir_seq << 48))) {

			ntfs_name_to_utf8(name, ie->name_len, n8, sizeof(n8));
			if (fsf_fix_ask(&c->fix, &PR_NAME_PARENT_SEQ, wobj(w), n8,
					in_file ? "the file's name" : "its index entry",
					(unsigned)((in_file ? m.parent :
						    le64toh(fn.parent_directory)) >> 48),
					(unsigned)w->dir_seq))
				ntfs_rebuild_promise(c, w->dir);
			return;
		}
		/* the name's namespace, and the key's (pass3_namespace.c) */
		if (user && m.mine_len &&
		    ntfs_check_namespace(c, wobj(w), recno, m.mine, m.mine_len,
					 m.ns, m.other)) {
			ntfs_rebuild_promise(c, w->dir);
			return;
		}
		/* a key says whether it names a directory */
		if (!w->metadata && recno >= NTFS_FILE_FIRST_USER &&
		    !(le32toh(fn.file_attributes) & NTFS_FA_DUP_FILE_NAME_INDEX_PRESENT) !=
		    !rset_get(&c->record_dir, recno)) {
			ntfs_name_to_utf8(name, ie->name_len, n8, sizeof(n8));
			if (fsf_fix_ask(&c->fix, &PR_INDEX_KEY_TYPE, wobj(w), n8,
					rset_get(&c->record_dir, recno) ? "a file" : "a directory",
					rset_get(&c->record_dir, recno) ? "a directory" : "a file"))
				ntfs_rebuild_promise(c, w->dir);
			return;
		}
		/* a directory's entry says 0 bytes (ntfsck: DIR_NONZERO_SIZE) */
		if (user && rset_get(&c->record_dir, recno) &&
		    (fn.data_size || fn.allocated_size)) {
			ntfs_name_to_utf8(name, ie->name_len, n8, sizeof(n8));
			if (fsf_fix_ask(&c->fix, &PR_INDEX_SIZES, wobj(w), n8,
					(unsigned long long)le64toh((uint64_t)fn.data_size),
					(unsigned long long)le64toh((uint64_t)fn.allocated_size),
					0ULL, 0ULL))
				ntfs_rebuild_promise(c, w->dir);
			return;
		}
		if (!d->known || rset_get(&c->record_dir, recno) ||
		    recno < NTFS_FILE_FIRST_USER || w->metadata ||
		    (le64toh((uint64_t)fn.data_size) == d->size &&
		     le64toh((uint64_t)fn.allocated_size) == d->alloc))
			return;
		ntfs_name_to_utf8(name, ie->name_len, n8, sizeof(n8));
		/* a file at 0 bytes whose clusters are still allocated: its
		 * size may come back from this entry */
		if (!d->size && d->alloc && fn.data_size &&
		    ntfs_data_size_from_entry(c, recno,
					      le64toh((uint64_t)fn.data_size),
					      le64toh((uint64_t)fn.allocated_size),
					      n8, wobj(w)))
			return;
		if (fsf_fix_ask(&c->fix, &PR_INDEX_SIZES, wobj(w), n8,
				(unsigned long long)le64toh((uint64_t)fn.data_size),
				(unsigned long long)le64toh((uint64_t)fn.allocated_size),
				(unsigned long long)d->size,
				(unsigned long long)d->alloc))
			ntfs_rebuild_promise(c, w->dir);
		return;
	}
	ntfs_name_to_utf8(name, ie->name_len, n8, sizeof(n8));
	if (fsf_fix_ask(&c->fix, &PR_INDEX_STALE, wobj(w), n8,
			(unsigned long long)recno, why))
		ntfs_rebuild_promise(c, w->dir);
}

/* counting mode: the entry takes one from its file's names pending when
 * check_entry would find the name it names (nothing is reported) */
static void count_entry(struct dir_walk *w, const struct ntfs_ie_view *ie)
{
	struct ntfs_check *c = w->c;
	uint64_t recno = ie->mref & 0xffffffffffffULL;
	uint16_t seq = (uint16_t)(ie->mref >> 48);
	struct entry_match m = { .dir = w->dir, .name = ie->name, .len = ie->name_len };
	struct ntfs_mft_record hdr;

	if (recno >= c->vol.mft_records || !cset_get(&c->record_used, recno) ||
	    ntfs_vol_read_record(&c->vol, recno, w->fbuf))
		return;
	memcpy(&hdr, w->fbuf, sizeof(hdr));
	if (seq && le16toh(hdr.sequence_number) != seq)
		return;
	if (!seq && hdr.sequence_number && recno >= NTFS_FILE_FIRST_USER &&
	    !w->metadata)
		return;
	if (ntfs_file_foreach(c, recno, w->fbuf, match_name, &m) < 0 || !m.found)
		return;
	if (fnp_get(c, recno) && fnp_get(c, recno) < FNP_MANY)
		fnp_set(c, recno, fnp_get(c, recno) - 1);
}

/* lookup mode: mark the suspect this entry is, if any */
static void lookup_entry(struct dir_walk *w, const struct ntfs_ie_view *ie)
{
	struct suspect key;
	struct suspect *hit;

	key.dir = w->dir;
	key.recno = ie->mref & 0xffffffffffffULL;
	key.len = ie->name_len;
	key.name = ie->name;
	hit = bsearch(&key, w->lookup, w->nlookup, sizeof(key), cmp_suspect);
	if (hit)
		hit->found = true;
}

static int on_entry(void *arg, const struct ntfs_ie_view *ie)
{
	struct dir_walk *w = arg;
	uint16_t cur[255];

	if (w->lookup) {
		lookup_entry(w, ie);
		return 0;
	}
	if (w->counting) {
		count_entry(w, ie);
		return 0;
	}
	if (w->digest) {
		/* a key holding a NUL or a '/' is judged one by one */
		if (!ntfs_name_units_allowed(ie->name, ie->name_len) ||
		    !names_bucket_entry(w->c, w->dir, w->dir_seq, ie))
			w->c->nbuckets[names_bucket(w->dir)].bad = true;
		return 0;
	}
	name_of(ie, cur);
	check_entry(w, ie, cur);
	return 0;
}

static void on_fault(void *arg, enum ntfs_bt_fault f,
		     const struct ntfs_ie_view *x, const struct ntfs_ie_view *y,
		     const char *why)
{
	struct dir_walk *w = arg;
	uint16_t u[255];
	char a[1024], b[1024];

	if (w->digest)
		w->c->nbuckets[names_bucket(w->dir)].bad = true;
	if (w->lookup || w->counting || w->digest)
		return;
	if (f != NTFS_BT_ORDER && f != NTFS_BT_SEPARATOR && f != NTFS_BT_DUPLICATE) {
		corrupt(w, why);
		return;
	}
	name_of(x, u);
	ntfs_name_to_utf8(u, x->name_len, a, sizeof(a));
	name_of(y, u);
	ntfs_name_to_utf8(u, y->name_len, b, sizeof(b));
	if (f == NTFS_BT_DUPLICATE ?
	    fsf_fix_ask(&w->c->fix, &PR_INDEX_DUPLICATE, wobj(w), b,
			(unsigned long long)(x->mref & 0xffffffffffffULL),
			(unsigned long long)(y->mref & 0xffffffffffffULL)) :
	    fsf_fix_ask(&w->c->fix, &PR_INDEX_ORDER, wobj(w), a, b))
		ntfs_rebuild_promise(w->c, w->dir);
}

/* A leaf block with nothing but its end entry: the tree holds every
 * name, but the block is one ntfs-3g and the Linux driver free (ntfsck
 * reports it).  Noted during the walk, judged after it (empty_leaves). */
static void on_empty_leaf(void *arg, int64_t vcn, int64_t top, int64_t parent,
			  uint32_t pos)
{
	struct dir_walk *w = arg;

	if (w->digest)
		w->c->nbuckets[names_bucket(w->dir)].bad = true;
	if (w->lookup || w->counting || w->digest || w->empty++)
		return;
	w->empty_vcn = vcn;
	w->empty_top = top;
	w->empty_parent = parent;
	w->empty_pos = pos;
}

/* One report per index.  One empty leaf in a tree found whole, in an
 * index not otherwise rebuilt, is dropped in place as ntfs-3g drops a
 * leaf it emptied (ntfs/index_leaf.h: its bit, its parent's pointer, one
 * key moved down a level; blocks above it left with no key go with it;
 * nothing else changes); otherwise, or when that
 * cannot be done in place, the index is rebuilt from its files' names.
 * Either way no name is lost. */
static void empty_leaves(struct dir_walk *w, const struct ntfs_index *ix,
			 unsigned int faults)
{
	struct ntfs_check *c = w->c;
	char why[NTFS_WHY];
	uint8_t *rec;
	int r = 1;

	if (!fsf_fix_ask(&c->fix, &PR_INDEX_EMPTY_LEAF, wobj(w),
			 (long long)w->empty_vcn))
		return;
	if (w->empty == 1 && !faults && !w->reported &&
	    !rare_get(c->rebuild, w->dir) &&
	    (rec = malloc(c->vol.boot.g.mft_record_size))) {
		if (!ntfs_vol_read_record(&c->vol, w->dir, rec))
			r = ntfs_index_drop_empty_leaf(&c->vol, ix, w->dir, rec,
						       "$I30", w->empty_top,
						       w->empty_parent,
						       w->empty_pos,
						       ntfs_check_mirrored(c), why);
		free(rec);
	}
	if (r < 0) {
		fsf_warn(c->log, "%s: %s", wobj(w), why);
		fsf_fix_failed(&c->fix);
	} else if (r) {
		ntfs_rebuild_promise(c, w->dir);
	}
}

struct bufs {
	uint8_t *rec, *file;
};

/* Check directory D's index, or with LOOKUP only mark which of the
 * LOOKUP entries (all of D) it has, or with COUNTING only count its
 * entries against the names pending. */
enum walk_mode { WALK_CHECK, WALK_COUNT, WALK_DIGEST };

static void check_dir(struct ntfs_check *c, uint64_t d, const uint16_t *upcase,
		      const struct bufs *b, uint8_t *unchecked,
		      struct suspect *lookup, size_t nlookup, enum walk_mode mode)
{
	struct dir_walk w = { .c = c, .dir = d, .upcase = upcase,
			      .unchecked = unchecked, .fbuf = b->file,
			      .lookup = lookup, .nlookup = nlookup,
			      .counting = mode == WALK_COUNT,
			      .digest = mode == WALK_DIGEST };
	bool counting = mode != WALK_CHECK;
	struct ntfs_bt_ops ops = { .entry = on_entry, .fault = on_fault,
				   .empty_leaf = on_empty_leaf };
	struct ntfs_bt t = { .type = NTFS_AT_FILE_NAME,
			     .collation = NTFS_COLLATION_FILE_NAME,
			     .upcase = upcase, .arg = &w };
	uint8_t *rec = b->rec;
	struct ntfs_index ix;
	char why[NTFS_WHY];
	int r;

	w.metadata = !lookup && ntfs_in_extend(c, d, b->file);
	if (w.digest && w.metadata) {
		/* metadata indexes keep what Windows left: each entry judged */
		c->nbuckets[names_bucket(d)].bad = true;
		return;
	}
	if (ntfs_vol_read_record(&c->vol, d, rec) ||
	    ntfs_record_check(rec, c->vol.boot.g.mft_record_size,
			      NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		return;		/* pass 1 dealt with it */
	w.dir_seq = le16toh(((const struct ntfs_mft_record *)rec)->sequence_number);
	r = ntfs_index_open(c, d, rec, "$I30", &ix);
	if (r == 1) {
		/* extents in several records: not walked yet, and so its
		 * names are not judged either */
		if (w.digest)
			c->nbuckets[names_bucket(d)].bad = true;
		else if (!lookup && !counting)
			rare_set(unchecked, d);
	} else if (r < 0) {
		if (r == -1)
			corrupt(&w, ix.why);
	} else {
		ntfs_index_bt(&ix, &t, &ops);
		if (ix.has_alloc && !ix.has_bitmap)
			corrupt(&w, "large index without its $BITMAP");
		ntfs_bt_walk(&t);
		if (w.empty)
			empty_leaves(&w, &ix, t.faults);
		ntfs_bt_free(&t);
	}
	ntfs_index_close(&ix);
}

static uint16_t *load_upcase(struct ntfs_check *c, uint8_t *rec)
{
	struct ntfs_run *runs = NULL;
	uint8_t *data = NULL;
	uint16_t *up = NULL;
	uint64_t len = 0;
	char why[NTFS_WHY] = "cannot be read";
	long nruns;

	/* -n: the standard table its declined rewrite writes */
	if (c->upcase_assumed && (up = malloc(2u * NTFS_UPCASE_LEN))) {
		ntfs_upcase_build(up);
		return up;
	}
	if (!ntfs_vol_read_record(&c->vol, NTFS_FILE_UPCASE, rec) &&
	    ntfs_record_check(rec, c->vol.boot.g.mft_record_size,
			      NTFS_MAGIC_FILE, why) == NTFS_REC_OK &&
	    !ntfs_vol_read_attr(&c->vol, rec, NTFS_AT_DATA, &data, &len, &runs, &nruns)) {
		if (len == 2u * NTFS_UPCASE_LEN) {
			/* converted in place: one 128 KiB table, not two */
			for (uint32_t i = 0; i < NTFS_UPCASE_LEN; i++) {
				uint16_t v;

				memcpy(&v, data + 2 * i, 2);
				v = le16toh(v);
				memcpy(data + 2 * i, &v, 2);
			}
			up = (uint16_t *)(void *)data;
			data = NULL;
		} else {
			snprintf(why, sizeof(why), "holds %llu bytes, not %u",
				 (unsigned long long)len, 2u * NTFS_UPCASE_LEN);
		}
	}
	free(data);
	free(runs);	/* also when the data could not be read */
	if (!up)
		fsf_fix_ask(&c->fix, &PR_UPCASE_BAD, "$UpCase", why);
	return up;
}

/* The names of file R (all its records) whose directory's index was
 * walked: candidates for a missing entry. */
struct suspects {
	struct ntfs_check *c;
	const uint8_t *unchecked;
	uint64_t recno;
	unsigned int names, placed;	/* of this file: names, in a directory */
	struct suspect *v;
	size_t n, cap;
	bool nomem;
	/* names whose parent reference names no directory, of files that
	 * are no directories (pass3_strays.c) */
	struct ntfs_name_given *strays;
	size_t nstrays;
};

static void add_stray(struct suspects *s, const struct ntfs_attr_header *a)
{
	struct ntfs_name_given *g;
	const uint8_t *v;
	uint32_t len;

	if (s->recno < NTFS_FILE_FIRST_USER || rset_get(&s->c->record_dir, s->recno) ||
	    !(v = ntfs_attr_value(a, &len)) || len > sizeof(g->fn) ||
	    ntfs_name_given(s->c, s->recno, v, len))
		return;
	g = realloc(s->strays, (s->nstrays + 1) * sizeof(*g));
	if (!g) {
		s->nomem = true;
		return;
	}
	s->strays = g;
	g += s->nstrays++;
	g->recno = s->recno;
	g->len = (uint16_t)len;
	memcpy(g->fn, v, len);
}

static int add_suspect(const struct ntfs_attr_header *a, void *arg)
{
	struct suspects *s = arg;
	struct ntfs_check *c = s->c;
	struct ntfs_file_name fn;
	const uint8_t *v = ntfs_file_name_of(a, &fn);
	uint8_t *name;
	uint64_t p;

	if (!v)
		return 0;
	p = le64toh(fn.parent_directory) & 0xffffffffffffULL;
	s->names++;
	if (fn.name_length && ntfs_parent_is_stray(c, s->recno, p))
		add_stray(s, a);
	if (!fn.name_length ||
	    p >= c->vol.mft_records || !rset_get(&c->record_dir, p) ||
	    !cset_get(&c->record_used, p))
		return 0;
	s->placed++;
	if (rare_get(s->unchecked, p))
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct suspect *g = realloc(s->v, cap * sizeof(*g));

		if (!g) {
			s->nomem = true;
			return 1;
		}
		s->v = g;
		s->cap = cap;
	}
	name = malloc(2u * fn.name_length);
	if (!name) {
		s->nomem = true;
		return 1;
	}
	memcpy(name, v + sizeof(fn), 2u * fn.name_length);
	s->v[s->n++] = (struct suspect){ .dir = p, .recno = s->recno,
					 .len = fn.name_length, .name = name };
	return 0;
}

static int count_names(const struct ntfs_attr_header *a, void *arg)
{
	if (le32toh(a->type) == NTFS_AT_FILE_NAME)
		++*(unsigned int *)arg;
	return 0;
}

/*
 * Names without entries.  Pass 1 summed up the digest of every name, the
 * walk that of every entry that names one (name_counts.c): equal, every
 * name has its entry, no count is needed.  Else the names of every file
 * are counted again, less each entry that names one (a second walk):
 * only files with fewer entries than names are looked at again, and each
 * directory concerned is walked once more looking for just those names.
 */
static int count_pending(struct ntfs_check *c, const uint16_t *upcase,
			 const struct bufs *b, uint8_t *unchecked)
{
	struct fsf_progress prog;

	fsf_info(c->log, "pass 3: the names and the index entries differ: every file's names counted");
	if (names_count_all(c, b->file))
		return -ENOMEM;
	fsf_progress_init(&prog, "pass 3: names counted", c->progress);
	for (uint64_t d = 0; d < c->vol.mft_records; d++) {
		fsf_progress_update(&prog, d, c->vol.mft_records);
		if (rset_get(&c->record_dir, d) && cset_get(&c->record_used, d))
			check_dir(c, d, upcase, b, unchecked, NULL, 0, WALK_COUNT);
	}
	fsf_progress_done(&prog);
	return 0;
}

static int find_missing(struct ntfs_check *c, const uint16_t *upcase,
			const struct bufs *b, uint8_t *unchecked)
{
	struct suspects s = { .c = c, .unchecked = unchecked };
	uint64_t *orphans = NULL;
	size_t norphans = 0, strays_from;
	int ret = 0;

	if (!names_digest_equal(c) && count_pending(c, upcase, b, unchecked))
		return -ENOMEM;

	for (uint64_t r = 0; r < c->vol.mft_records && !s.nomem; r++) {
		unsigned int names = 0;

		/* a file with no name at all that no entry gave one back
		 * (check_entry) is an orphan too */
		if (c->nameless && rare_get(c->nameless, r) &&
		    cset_get(&c->record_used, r) &&
		    ntfs_file_foreach(c, r, b->file, count_names, &names) == 0 &&
		    !names) {
			uint64_t *g = realloc(orphans, (norphans + 1) * sizeof(*g));

			if (!g) {
				s.nomem = true;
				break;
			}
			orphans = g;
			orphans[norphans++] = r;
			continue;
		}
		if (!cset_get(&c->record_used, r) || !fnp_get(c, r) ||
		    fnp_get(c, r) == FNP_MANY)
			continue;
		s.recno = r;
		s.names = s.placed = 0;
		strays_from = s.nstrays;
		ntfs_file_foreach(c, r, b->file, add_suspect, &s);
		/* strays of a file reachable through another name are
		 * reconnected one by one; an orphan's go with it */
		if (!s.placed)
			s.nstrays = strays_from;
		/* no name indexed anywhere, no name in a directory (nor one
		 * given its directory back from an entry, under -n) */
		if (r >= NTFS_FILE_FIRST_USER && !s.placed && s.names &&
		    s.names == fnp_get(c, r) && !ntfs_name_given(c, r, NULL, 0)) {
			uint64_t *g = realloc(orphans, (norphans + 1) * sizeof(*g));

			if (!g) {
				s.nomem = true;
				break;
			}
			orphans = g;
			orphans[norphans++] = r;
		}
	}
	if (s.nomem)
		ret = -ENOMEM;
	if (s.n)
		qsort(s.v, s.n, sizeof(*s.v), cmp_suspect);
	for (size_t i = 0, j; i < s.n; i = j) {
		for (j = i; j < s.n && s.v[j].dir == s.v[i].dir; j++)
			;
		check_dir(c, s.v[i].dir, upcase, b, unchecked, s.v + i, j - i,
			  WALK_CHECK);
		for (size_t k = i; k < j; k++) {
			uint16_t u[255];
			char n8[1024], obj[1200];

			if (s.v[k].found)
				continue;
			for (unsigned int x = 0; x < s.v[k].len; x++)
				u[x] = (uint16_t)(s.v[k].name[2 * x] |
						  s.v[k].name[2 * x + 1] << 8);
			ntfs_name_to_utf8(u, s.v[k].len, n8, sizeof(n8));
			ntfs_object_name(c, "directory", s.v[k].dir, obj, sizeof(obj));
			if (fsf_fix_ask(&c->fix, &PR_INDEX_MISSING, obj, n8,
					(unsigned long long)s.v[k].recno))
				ntfs_rebuild_promise(c, s.v[k].dir);
		}
	}
	for (size_t i = 0; i < s.n; i++)
		free((void *)s.v[i].name);
	free(s.v);
	for (size_t i = 0, j; i < s.nstrays && !ret; i = j) {
		for (j = i; j < s.nstrays && s.strays[j].recno == s.strays[i].recno; j++)
			;
		ntfs_reconnect_stray_names(c, s.strays[i].recno, s.strays + i, j - i);
	}
	free(s.strays);
	if (norphans && !ret)
		ntfs_reconnect_orphans(c, orphans, norphans);
	free(orphans);
	return ret;
}

int ntfs_pass3_indexes(struct ntfs_check *c)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct bufs b = { malloc(rs), malloc(rs) };
	uint8_t *unchecked = ntfs_rare_map(c->vol.mft_records);
	uint16_t *upcase = NULL;
	struct fsf_progress prog;
	bool any = false, fast;
	uint64_t checked = 0;
	int ret = -ENOMEM;

	c->rebuild = ntfs_rare_map(c->vol.mft_records);
	c->mend = ntfs_rare_map(c->vol.mft_records);
	if (!b.rec || !b.file || !unchecked ||
	    !c->rebuild || !c->mend)
		goto out;
	/* a root made again in pass 1: its index comes from its children */
	if (c->root_recreated) {
		rare_set(c->rebuild, NTFS_FILE_ROOT);
		rare_set(unchecked, NTFS_FILE_ROOT);
	}
	upcase = load_upcase(c, b.rec);
	/* no index can be rebuilt without it: what would be, is left */
	if (!upcase)
		c->fix.no_rebuild = "$UpCase is unreadable";
	/* nothing found or repaired so far (what pass 1 saw is what is on
	 * the volume): the entries are first proved by the digests of their
	 * directories' buckets, without reading the files they name */
	fast = c->nbuckets && !c->names_inexact && !c->fix.found &&
	       !c->fix.housekeeping && !c->root_recreated;
	fsf_progress_init(&prog, "pass 3: directory indexes", c->progress);
	for (uint64_t d = 0; fast && d < c->vol.mft_records; d++) {
		fsf_progress_update(&prog, d, c->vol.mft_records);
		if (rset_get(&c->record_dir, d) && cset_get(&c->record_used, d))
			check_dir(c, d, upcase, &b, unchecked, NULL, 0, WALK_DIGEST);
	}
	for (uint64_t d = 0; d < c->vol.mft_records; d++) {
		fsf_progress_update(&prog, d, c->vol.mft_records);
		if (rset_get(&c->record_dir, d) && cset_get(&c->record_used, d) &&
		    !(fast && names_bucket_good(c, d))) {
			check_dir(c, d, upcase, &b, unchecked, NULL, 0, WALK_CHECK);
			checked++;
		}
	}
	fsf_progress_done(&prog);
	/* the proved entries name their files' names */
	for (unsigned int i = 0; fast && i < NAME_BUCKETS; i++) {
		const struct ntfs_name_bucket *nb = &c->nbuckets[i];

		if (!nb->bad && nb->names[0] == nb->entries[0] &&
		    nb->names[1] == nb->entries[1]) {
			c->entries_sum[0] += nb->entry_names[0];
			c->entries_sum[1] += nb->entry_names[1];
		}
	}
	if (fast)
		fsf_info(c->log, "pass 3: %llu directories' entries checked one by one, the others proved by their digests",
			 (unsigned long long)checked);
	ret = find_missing(c, upcase, &b, unchecked);
	if (!ret)
		ret = ntfs_pass3_connect(c);
	for (uint64_t d = 0; d < c->vol.mft_records && !any; d++)
		any = rare_get(c->rebuild, d);
	if (any && !ret)
		ret = ntfs_rebuild_indexes(c, upcase);
out:
	c->fix.no_rebuild = NULL;
	free(upcase);
	free(b.rec);
	free(b.file);
	ntfs_rare_map_free(unchecked);
	ntfs_name_given_free(c);
	return ret;
}
