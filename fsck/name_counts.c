// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Do the index entries name every $FILE_NAME?  Two ways to know.
 *
 * The digest (every run): pass 1 adds up a keyed hash of each
 * $FILE_NAME it counts, (file, parent directory, name); pass 3 adds up
 * the same hash of each index entry that named a file's name
 * (pass3_index.c).  A sum does not depend on the order, so equal sums
 * say that the two are the same multiset: every name has its entry, no
 * name two, and the exact count below would find nothing pending.  The
 * key is random for every run (no volume can be made to collide), 2 x 64
 * bits.  The repairs of pass 1 that move names between records (orphan
 * extensions, bases given back) mark the digest inexact instead of
 * following it.
 *
 * The exact count (only when the sums differ or are inexact): the names
 * pending per record (pass 1's names, counted again by names_count_all
 * from the records pass 1 accepted, less each index entry found for it
 * by a second walk of the indexes): 3 bits per record, which
 * is enough for almost every file (a name, its DOS twin, a few hard
 * links); a count of 7 or more is kept in a small table sorted by record
 * (a file with many hard links, up to the 1,024 NTFS allows: a cap of
 * 255 once left a file of 300 links unjudged, a lost entry unreported).  The 3 bits of record R are bits 3R to
 * 3R+2 of the map, least significant first, and may straddle two bytes
 * (the map has one byte to spare: FNP_MAP_BYTES).  Counts
 * stop at FNP_MANY ("too many to count, not judged"), also when the table
 * cannot grow.
 */
#include "config.h"

#include <endian.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>

#include "ntfs_check.h"
#include "ntfs/name_edit.h"

#define NIBBLE_BIG 7u

static size_t big_find(const struct ntfs_check *c, uint64_t r, bool *found)
{
	size_t lo = 0, hi = c->nfnp_big;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->fnp_big[mid].r < r)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < c->nfnp_big && c->fnp_big[lo].r == r;
	return lo;
}

unsigned int fnp_get(const struct ntfs_check *c, uint64_t r)
{
	uint64_t at = 3 * r;
	unsigned int w, v;
	bool found;
	size_t i;

	if (!c->fn_pending)
		return 0;
	w = c->fn_pending[at / 8] | c->fn_pending[at / 8 + 1] << 8;
	v = (w >> (at % 8)) & NIBBLE_BIG;
	if (v != NIBBLE_BIG)
		return v;
	i = big_find(c, r, &found);
	return found ? c->fnp_big[i].n : FNP_MANY;
}

static void nibble(struct ntfs_check *c, uint64_t r, unsigned int v)
{
	uint64_t at = 3 * r;
	uint8_t *b = &c->fn_pending[at / 8];
	unsigned int w = b[0] | b[1] << 8;

	w = (w & ~(NIBBLE_BIG << (at % 8))) | v << (at % 8);
	b[0] = (uint8_t)w;
	b[1] = (uint8_t)(w >> 8);
}

void fnp_set(struct ntfs_check *c, uint64_t r, unsigned int v)
{
	bool found;
	size_t i;

	if (!c->fn_pending)
		return;
	i = big_find(c, r, &found);
	if (v > FNP_MANY)
		v = FNP_MANY;
	if (v < NIBBLE_BIG) {
		if (found) {
			memmove(c->fnp_big + i, c->fnp_big + i + 1,
				(c->nfnp_big - i - 1) * sizeof(*c->fnp_big));
			c->nfnp_big--;
		}
		nibble(c, r, v);
		return;
	}
	nibble(c, r, NIBBLE_BIG);
	if (!found) {
		if (c->nfnp_big == c->cap_fnp_big) {
			size_t cap = c->cap_fnp_big ? 2 * c->cap_fnp_big : 16;
			struct ntfs_fnp_big *g = realloc(c->fnp_big, cap * sizeof(*g));

			if (!g)
				return;	/* read back as FNP_MANY */
			c->fnp_big = g;
			c->cap_fnp_big = cap;
		}
		memmove(c->fnp_big + i + 1, c->fnp_big + i,
			(c->nfnp_big - i) * sizeof(*c->fnp_big));
		c->nfnp_big++;
		c->fnp_big[i].r = r;
	}
	c->fnp_big[i].n = (uint16_t)v;
}

void names_digest_init(struct ntfs_check *c)
{
	if (getrandom(c->name_key, sizeof(c->name_key), 0) != sizeof(c->name_key)) {
		c->name_key[0] = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ULL;
		c->name_key[1] = (uint64_t)clock() ^ 0xd1b54a32d192ed03ULL;
	}
}

static uint64_t mix(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

void names_digest_add(const struct ntfs_check *c, uint64_t sum[2],
		      uint64_t file, uint64_t parent, unsigned int len,
		      const uint8_t *name)
{
	for (int lane = 0; lane < 2; lane++) {
		uint64_t h = mix(c->name_key[lane] ^ mix(file + 0x9e3779b97f4a7c15ULL));

		h = mix(h ^ parent);
		h = mix(h ^ len ^ (uint64_t)lane << 32);
		for (unsigned int i = 0; i < 2 * len; i += 8) {
			uint64_t w = 0;
			unsigned int k = 2 * len - i < 8 ? 2 * len - i : 8;

			memcpy(&w, name + i, k);
			h = mix(h ^ le64toh(w));
		}
		sum[lane] += h;
	}
}

void names_digest_attr(struct ntfs_check *c, uint64_t owner,
		       const struct ntfs_attr_header *a)
{
	struct ntfs_file_name fn;
	uint32_t len;
	const uint8_t *v = ntfs_attr_value(a, &len);

	/* as pass 3 matches a name (match_name): too short to hold one
	 * counts as a name no entry can match */
	if (len < sizeof(fn)) {
		names_digest_add(c, c->names_sum, owner, UINT64_MAX, 0, NULL);
		return;
	}
	memcpy(&fn, v, sizeof(fn));
	if (sizeof(fn) + 2u * fn.name_length > len) {
		names_digest_add(c, c->names_sum, owner, UINT64_MAX, 0, NULL);
		return;
	}
	names_digest_add(c, c->names_sum, owner,
			 le64toh(fn.parent_directory) & 0xffffffffffffULL,
			 fn.name_length, v + sizeof(fn));
}

bool names_digest_equal(const struct ntfs_check *c)
{
	return !c->names_inexact && c->names_sum[0] == c->entries_sum[0] &&
	       c->names_sum[1] == c->entries_sum[1];
}

static void count_one(struct ntfs_check *c, uint64_t owner)
{
	if (owner < c->vol.mft_records && fnp_get(c, owner) < FNP_MANY)
		fnp_set(c, owner, fnp_get(c, owner) + 1);
}

int names_count_all(struct ntfs_check *c, uint8_t *buf)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;

	c->fn_pending = calloc(FNP_MAP_BYTES(c->vol.mft_records), 1);
	if (!c->fn_pending)
		return -1;
	for (uint64_t r = 0; r < c->vol.mft_records; r++) {
		struct ntfs_attr_cursor cur;
		const struct ntfs_attr_header *a;
		struct ntfs_mft_record m;
		char why[NTFS_WHY];
		uint64_t owner;

		/* the records pass 1 counted: accepted by it, not orphan
		 * extensions (their names were taken away again), not
		 * marked in use after its scan */
		if (!cset_get(&c->record_used, r) || rare_get(c->ext_bad, r) ||
		    rset_get(&c->uncounted, r) ||
		    ntfs_vol_read_record(&c->vol, r, buf) ||
		    ntfs_record_check(buf, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
			continue;
		memcpy(&m, buf, sizeof(m));
		owner = ntfs_record_file(buf, r);
		ntfs_attr_cursor_init(&cur, buf);
		while (ntfs_attr_next(&cur, &a, why) == 1)
			if (!a->non_resident &&
			    le32toh(a->type) == NTFS_AT_FILE_NAME)
				count_one(c, owner);
	}
	return 0;
}

/*
 * The buckets: directories are spread over NAME_BUCKETS by their record
 * number.  Each name of a file (pass 1) adds the hash of what pass 3
 * checks of its entry: (file, its sequence number, the full parent
 * reference, the name, directory or not, the data sizes the key must
 * repeat: 0 for a directory) to its parent's bucket; each entry (pass 3,
 * read from the index alone) adds (indexed record, the reference's
 * sequence number, the directory with its sequence number, the key's
 * name, the key's directory bit, the key's sizes); both add the
 * namespace byte, and a name marked DOS that is no 8.3 name marks its
 * bucket bad (pass3_namespace.c judges both).  Equal sums, and no
 * name in the bucket that pass 3 would judge otherwise (POISON, unknown
 * sizes), prove that every entry there names a file in use that has that
 * name, with the sequence numbers, type and sizes check_entry wants.
 */
unsigned int names_bucket(uint64_t dir)
{
	return (unsigned int)(mix(dir) % NAME_BUCKETS);
}

static void bucket_add(const struct ntfs_check *c, uint64_t sum[2],
		       uint64_t file, uint16_t seq, uint64_t parent, bool dir,
		       uint64_t size, uint64_t alloc, uint8_t ns, unsigned int len,
		       const uint8_t *name)
{
	uint64_t t[2] = { 0, 0 };

	names_digest_add(c, t, file ^ (uint64_t)seq << 48, parent, len, name);
	for (int lane = 0; lane < 2; lane++)
		sum[lane] += mix(t[lane] ^ mix(size + c->name_key[lane]) ^
				 mix(alloc ^ (dir ? 0x5bd1e995ULL : 0)) ^
				 mix(ns ^ c->name_key[lane] ^ 0x2545f4914f6cdd1dULL));
}

void names_bucket_attr(struct ntfs_check *c, uint64_t owner,
		       const struct ntfs_name_owner *o,
		       const struct ntfs_attr_header *a)
{
	struct ntfs_file_name fn;
	uint32_t len;
	const uint8_t *v = ntfs_attr_value(a, &len);
	struct ntfs_name_bucket *b;

	if (!c->nbuckets || len < sizeof(fn))
		return;	/* no entry can match it: the names digest differs */
	memcpy(&fn, v, sizeof(fn));
	if (sizeof(fn) + 2u * fn.name_length > len)
		return;
	b = &c->nbuckets[names_bucket(le64toh(fn.parent_directory) & 0xffffffffffffULL)];
	/* a name marked DOS that is no 8.3 name: stricter than
	 * pass3_namespace.c's verdict on purpose (a bad bucket only sends
	 * its entries to that check, which lets a file's one DOS-type name
	 * be any a writer stores) */
	if (o->poison || (!o->dir && !o->data.known) ||
	    (owner >= NTFS_FILE_FIRST_USER &&
	     (fn.name_type == NTFS_NS_DOS || fn.name_type == NTFS_NS_WIN32_AND_DOS) &&
	     !ntfs_name_is_8dot3(v + sizeof(fn), fn.name_length))) {
		b->bad = true;
		return;
	}
	bucket_add(c, b->names, owner, o->seq, le64toh(fn.parent_directory),
		   o->dir, o->dir ? 0 : o->data.size, o->dir ? 0 : o->data.alloc,
		   fn.name_type, fn.name_length, v + sizeof(fn));
}

bool names_bucket_entry(struct ntfs_check *c, uint64_t dir, uint16_t dseq,
			const struct ntfs_ie_view *ie)
{
	struct ntfs_name_bucket *b = &c->nbuckets[names_bucket(dir)];
	uint64_t self = dir | (uint64_t)dseq << 48, recno;
	struct ntfs_file_name fn;
	uint64_t size, alloc;
	bool isdir;

	if (ie->key_len < sizeof(fn) ||
	    ie->key_len < sizeof(fn) + 2u * ie->name_len)
		return false;
	memcpy(&fn, ie->key, sizeof(fn));
	isdir = le32toh(fn.file_attributes) & NTFS_FA_DUP_FILE_NAME_INDEX_PRESENT;
	size = le64toh((uint64_t)fn.data_size);
	alloc = le64toh((uint64_t)fn.allocated_size);
	recno = ie->mref & 0xffffffffffffULL;
	/* what check_entry judges from the entry alone */
	if (le64toh(fn.parent_directory) != self || (isdir && (size || alloc)) ||
	    recno < NTFS_FILE_FIRST_USER)
		return false;
	bucket_add(c, b->entries, recno, (uint16_t)(ie->mref >> 48), self,
		   isdir, size, alloc, fn.name_type, ie->name_len, ie->name);
	names_digest_add(c, b->entry_names, recno, dir, ie->name_len, ie->name);
	return true;
}

bool names_bucket_good(const struct ntfs_check *c, uint64_t dir)
{
	const struct ntfs_name_bucket *b;

	if (!c->nbuckets)
		return false;
	b = &c->nbuckets[names_bucket(dir)];
	return !b->bad && b->names[0] == b->entries[0] &&
	       b->names[1] == b->entries[1];
}
