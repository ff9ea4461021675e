// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 1: every MFT record.  $MFT is located from record 0 (or its copy in
 * $MFTMirr); each record's header, update sequence, attributes and
 * runlists are checked; records of the mirrored range are compared with
 * $MFTMirr; the clusters and records really in use are collected for the
 * bitmap pass.  A record beyond repair is cleared (its content is already
 * lost); a system record beyond repair stops the check.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <string.h>

#include "ntfs/attrlist.h"
#include "ntfs/mft_grow.h"
#include "ntfs/mft_mirror.h"
#include "ntfs/mft_tail.h"
#include "ntfs/repair.h"
#include "ntfs_check.h"
#include "ntfs_problems.h"
#include "ntfs/sysfile.h"

/* Record 0 from $MFT, or from $MFTMirr when $MFT's copy is unusable.
 * Both locations were verified by pass 0. */
static int load_record0(struct ntfs_check *c, uint8_t *rec)
{
	const struct ntfs_boot_info *b = &c->vol.boot;
	uint32_t rs = b->g.mft_record_size;
	uint8_t *raw = malloc(rs), *mir = malloc(rs);
	char why[NTFS_WHY], mwhy[NTFS_WHY] = "no verified $MFTMirr";
	bool mir_ok = false;
	int ret = 0;

	if (!raw || !mir) {
		ret = -ENOMEM;
		goto out;
	}
	/* a read error: the mirror's copy is checked instead (and, with
	 * read errors, nothing is written: fsf_fix_ask says no) */
	if (ntfs_vol_read_record0(&c->vol, rec))
		snprintf(why, sizeof(why), "read error at byte %llu",
			 (unsigned long long)b->mft_lcn * b->g.cluster_size);
	else if (c->geo.mft_bad & 1)
		snprintf(why, sizeof(why), "%s", c->geo.mft_why[0]);
	else if (ntfs_sysrec_usable(&c->vol, rec, 0, why) == 0) {
		/* usable, and older than the mirror's copy? */
		if (!c->geo.mirr_ok || ntfs_vol_read_mirror(&c->vol, 0, mir))
			goto out;
		memcpy(raw, mir, rs);	/* as on disk: the fixups undone below */
		if (ntfs_sysrec_usable(&c->vol, mir, 0, mwhy) != 0 ||
		    !ntfs_mft_mirror_newer(&c->vol, rec, mir, why))
			goto out;
		memcpy(rec, mir, rs);
		if (fsf_fix_ask(&c->fix, &PR_MFT_MIRROR_NEWER, "$MFT record 0", why)) {
			if (ntfs_vol_write_record0(&c->vol, raw))
				fsf_fix_failed(&c->fix);
		} else if (c->fix.mode == FSF_MODE_NO) {
			/* -n: every later read of record 0 (the mirror's
			 * comparison, pass 4) returns the copy's bytes, as
			 * -a writes them */
			ntfs_vol_assume_record_raw(&c->vol, 0, raw);
		}
		goto out;
	}
	if (c->geo.mirr_ok && !ntfs_vol_read_mirror(&c->vol, 0, mir)) {
		memcpy(raw, mir, rs);
		mir_ok = ntfs_sysrec_usable(&c->vol, mir, 0, mwhy) == 0;
	}
	if (!mir_ok) {
		fsf_fix_ask(&c->fix, &PR_MFT_UNREADABLE, NULL, why, mwhy);
		ret = -EUCLEAN;
		goto out;
	}
	memcpy(rec, mir, rs);
	if (fsf_fix_ask(&c->fix, &PR_MFT_FROM_MIRROR, "$MFT record 0", why)) {
		if (ntfs_vol_write_record0(&c->vol, raw))
			fsf_fix_failed(&c->fix);
		else
			c->geo.mft_bad &= (uint8_t)~1u;	/* it is the mirror's now */
	} else if (c->fix.mode == FSF_MODE_NO) {
		/* -n: later reads return the copy, as -a writes it */
		ntfs_vol_assume_record_raw(&c->vol, 0, raw);
	}
out:
	free(raw);
	free(mir);
	return ret;
}

/* $MFT's data runs and size, and the count of mirrored records. */
static int locate_mft(struct ntfs_check *c, uint8_t *rec0,
		      uint8_t **mft_bitmap, uint64_t *bitmap_len,
		      struct ntfs_run **bitmap_runs, long *bitmap_nruns)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *ext, *holder;
	uint64_t len, where, volume;
	int ret;

	ret = ntfs_vol_attr_runs(&c->vol, rec0, NTFS_AT_DATA, &len,
				 &c->vol.mft_runs, &c->vol.nmft_runs);
	if (ret || c->vol.nmft_runs <= 0 || len < 16ull * rs) {
		fsf_fix_ask(&c->fix, &PR_MFT_DATA_BAD, "$MFT",
			    ret ? strerror(-ret) : "fewer than 16 records");
		return ret ? ret : -EUCLEAN;
	}
	if (c->vol.mft_runs[0].lcn == c->vol.boot.mft_lcn) {
		/* its later extents, when record 0 has a list */
		char why[NTFS_WHY];

		if (ntfs_mft_extents(c, rec0, len, why)) {
			fsf_fix_ask(&c->fix, &PR_MFT_DATA_BAD, "$MFT", why);
			return -EUCLEAN;
		}
	} else {
		/* only the mirror's copy could disagree: pass 0 checked */
		char why[NTFS_WHY];

		snprintf(why, sizeof(why), "it starts at cluster %lld, $MFT is at cluster %lld",
			 (long long)c->vol.mft_runs[0].lcn, (long long)c->vol.boot.mft_lcn);
		fsf_fix_ask(&c->fix, &PR_MFT_DATA_BAD, "$MFT", why);
		return -EUCLEAN;
	}
	/* a data size past the volume (2^32 records on 16 MiB) must not
	 * make every pass walk records that cannot be there: the count stops
	 * at the volume's size (pass 1 repairs record 0's sizes) */
	volume = c->vol.boot.g.nr_clusters > UINT64_MAX / c->vol.boot.g.cluster_size ?
		 UINT64_MAX : c->vol.boot.g.nr_clusters * c->vol.boot.g.cluster_size;
	c->vol.mft_records = (len < volume ? len : volume) / rs;
	ext = malloc(rs);
	if (!ext)
		return -ENOMEM;
	ret = ntfs_file_attr_holder(c, rec0, NTFS_FILE_MFT,
				    NTFS_AT_BITMAP, ext, &holder, &where);
	if (!ret)
		ret = ntfs_vol_read_attr(&c->vol, holder, NTFS_AT_BITMAP, mft_bitmap,
					   bitmap_len, bitmap_runs, bitmap_nruns);
	else
		/* in several extents, in the records record 0's list names */
		ret = ntfs_read_split(c, NTFS_FILE_MFT, NTFS_AT_BITMAP, mft_bitmap,
				      bitmap_len, bitmap_runs, bitmap_nruns);
	free(ext);
	if (ret) {
		fsf_fix_ask(&c->fix, &PR_MFT_DATA_BAD, "$MFT bitmap", strerror(-ret));
		return ret;
	}
	/* and, when the runs found do not map that size, at what they map
	 * or what the bitmap covers, the more of the two: a hostile size on
	 * a big volume is not walked record by record (268 million on
	 * 256 GiB), and a later extent a damaged list hides keeps its
	 * records, which the bitmap still covers */
	{
		uint64_t mapped = 0, bits;

		for (long i = 0; i < c->vol.nmft_runs; i++) {
			uint64_t n = c->vol.mft_runs[i].len;

			mapped = n > (UINT64_MAX - mapped) / c->vol.boot.g.cluster_size ?
				 UINT64_MAX : mapped + n * c->vol.boot.g.cluster_size;
		}
		bits = *bitmap_len > UINT64_MAX / 8 / rs ? UINT64_MAX : *bitmap_len * 8 * rs;
		if (mapped < bits)
			mapped = bits;
		if (mapped < len && mapped / rs < c->vol.mft_records)
			c->vol.mft_records = mapped / rs;
	}
	{
		struct ntfs_run *last = &c->vol.mft_runs[c->vol.nmft_runs - 1];
		const struct ntfs_attr_header *bh = ntfs_attr_find(rec0, NTFS_AT_BITMAP);
		uint64_t alloc = 0, tail, hidden, end, had, bmbytes = *bitmap_len;
		uint64_t on_disk;	/* clusters the runs as written map */
		struct ntfs_mft_bm bv = {
			.bm = *mft_bitmap, .len = *bitmap_len, .bits = *bitmap_len * 8,
			.runs = *bitmap_runs, .nruns = *bitmap_nruns, .win_at = UINT64_MAX,
		};

		for (long i = 0; i < c->vol.nmft_runs; i++)
			alloc += c->vol.mft_runs[i].len;
		on_disk = alloc;
		alloc = alloc * c->vol.boot.g.cluster_size / rs;
		/* bits the bitmap's allocation holds, when record 0 has it */
		if (bh && bh->non_resident && !bh->name_length && *bitmap_nruns > 0) {
			struct ntfs_attr_nonresident bn;

			memcpy(&bn, bh, sizeof(bn));
			if ((uint64_t)le64toh((uint64_t)bn.allocated_size) > *bitmap_len)
				bv.bits = (uint64_t)le64toh((uint64_t)bn.allocated_size) * 8;
		}
		tail = ntfs_mft_lost_tail(&c->vol, &bv, alloc);
		if (tail) {
			uint32_t cs = c->vol.boot.g.cluster_size;
			uint64_t grow = ((alloc + tail) * rs + cs - 1) / cs -
					alloc * rs / cs;

			/* ntfs_mft_lost_tail() read these bits: unreadable now, no
			 * tail (its files would stay out of the bitmap) */
			if (ntfs_mft_widen_bitmap(&c->vol, mft_bitmap, bitmap_len,
						  &bv, alloc + tail)) {
				free(bv.win);
				return -ENOMEM;
			}
			if (*bitmap_len * 8 < alloc + tail)
				tail = 0;
			bmbytes = *bitmap_len;
			/* checked with the tail, -n included (the data
			 * size grows below, as for records hidden in the
			 * allocation) */
			if (tail) {
				last->len += grow;
				if (fsf_fix_ask(&c->fix, &PR_MFT_TAIL_LOST, "$MFT",
						(unsigned long long)alloc,
						(unsigned long long)tail,
						(unsigned long long)grow)) {
					if (ntfs_mft_grow_runs(&c->vol, ntfs_check_mirrored(c), bmbytes, alloc * rs / cs))
						fsf_fix_failed(&c->fix);
					else
						on_disk += grow;
				}
			}
		}
		for (int round = 0; !tail && round < 8; round++) {
			uint32_t cs = c->vol.boot.g.cluster_size;
			uint64_t old = 0, top;
			struct ntfs_run *nr;
			struct ntfs_mft_moved mv;
			char mwhy[NTFS_WHY];
			int r;

			for (long i = 0; i < c->vol.nmft_runs; i++)
				old += c->vol.mft_runs[i].len;
			top = old * cs / rs;
			if (old * cs % rs)
				break;
			r = ntfs_mft_moved_tail(&c->vol, &bv, top, &mv, mwhy,
						c->progress ? "pass 1: $MFT's moved tail looked for" : NULL);
			if (!r && mv.len &&
			    ntfs_mft_widen_bitmap(&c->vol, mft_bitmap, bitmap_len,
					  &bv, top + mv.records))
				r = -ENOMEM;
			if (r) {
				free(bv.win);
				return r;
			}
			if (!mv.len || *bitmap_len * 8 < top + mv.records) {
				if (!mwhy[0])
					break;
				/* the files there would be lost: stop */
				fsf_fix_ask(&c->fix, &PR_MFT_TAIL_LEFT, "$MFT",
					    (unsigned long long)top, mwhy);
				free(bv.win);
				return -EUCLEAN;
			}
			nr = realloc(c->vol.mft_runs, (size_t)(c->vol.nmft_runs + 1) *
							sizeof(*nr));
			if (!nr) {
				free(bv.win);
				return -ENOMEM;
			}
			c->vol.mft_runs = nr;
			nr[c->vol.nmft_runs].lcn = mv.lcn;
			nr[c->vol.nmft_runs++].len = mv.len;
			if (fsf_fix_ask(&c->fix, &PR_MFT_TAIL_MOVED, "$MFT",
					(unsigned long long)top,
					(unsigned long long)mv.records,
					(long long)mv.lcn,
					(unsigned long long)mv.len)) {
				if (ntfs_mft_grow_runs(&c->vol, ntfs_check_mirrored(c), *bitmap_len, old))
					fsf_fix_failed(&c->fix);
				else if (on_disk == old)
					on_disk += mv.len;
			}
		}
		had = c->vol.mft_records;
		hidden = ntfs_mft_hidden_records(&c->vol, &bv, &end);
		if (hidden && ntfs_mft_widen_bitmap(&c->vol, mft_bitmap,
						    bitmap_len, &bv, end)) {
			free(bv.win);
			return -ENOMEM;
		}
		free(bv.win);
		if (hidden && *bitmap_len * 8 >= end) {
			/* checked at the size it must have, -n included */
			c->vol.mft_records = end;
			if (fsf_fix_ask(&c->fix, &PR_MFT_SIZE_SHORT, "$MFT",
					(unsigned long long)had,
					(unsigned long long)hidden,
					(unsigned long long)end) &&
			    ntfs_mft_grow_size(&c->vol, ntfs_check_mirrored(c), end * rs,
					  on_disk * c->vol.boot.g.cluster_size,
					  *bitmap_len))
				fsf_fix_failed(&c->fix);
		}
	}
	return 0;
}

/*
 * Names that count as links: every $FILE_NAME, the DOS half of a name pair
 * too (Windows and ntfs-3g count each directory entry of the record);
 * *DOS gets the number of DOS-only names, since some writers leave them
 * out of the count and either count is accepted.
 */
static int count_links(const uint8_t *rec, bool *has_list, int *dos)
{
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];
	int n = 0;

	bool si = false;

	*has_list = false;
	*dos = 0;
	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1) {
		uint32_t len;
		const uint8_t *v;

		si |= le32toh(a->type) == NTFS_AT_STANDARD_INFORMATION;
		if (le32toh(a->type) == NTFS_AT_ATTRIBUTE_LIST)
			*has_list = true;
		if (le32toh(a->type) != NTFS_AT_FILE_NAME || a->non_resident)
			continue;
		v = ntfs_attr_value(a, &len);
		if (len < sizeof(struct ntfs_file_name))
			continue;
		n++;
		if (v[offsetof(struct ntfs_file_name, name_type)] == NTFS_NS_DOS)
			(*dos)++;
	}
	/* no $STANDARD_INFORMATION: an extension record that lost its base
	 * reference (pass1_attrlist.c), not a file to count */
	return si ? n : 0;
}

/* Make a record free: header kept, no attributes, sequence number bumped. */
void ntfs_clear_record(uint8_t *rec, uint32_t rs, uint64_t recno)
{
	struct ntfs_mft_record m;
	uint16_t seq;

	memcpy(&m, rec, sizeof(m));
	seq = (uint16_t)(le16toh(m.sequence_number) + 1);
	if (!seq)
		seq = 1;
	memset(rec, 0, rs);
	ntfs_rec_init_free(rec, rs, (uint32_t)recno, seq);
}

/*
 * Is NEW (a record found at another slot, saying it is record X) a newer
 * version of OLD, what slot X holds?  A misdirected write that missed its
 * place leaves the place with its earlier version: the file not yet in
 * use there, an earlier incarnation (an older sequence number), or the
 * same file before its last change (an older LSN).  OLD not a record at
 * all (never formatted, or torn) counts as older; so does a free OLD
 * with NEW's sequence number (a record freed keeps the number it is
 * reused with).  Anything else (the same LSN, another base) is not
 * decided here.
 */
static bool newer_version(const uint8_t *new, const uint8_t *old, uint64_t x)
{
	struct ntfs_mft_record n, o;
	uint16_t d;

	if (memcmp(old, "FILE", 4))
		return true;
	memcpy(&n, new, sizeof(n));
	memcpy(&o, old, sizeof(o));
	if (le16toh(o.h.usa_ofs) >= 0x30 && le32toh(o.mft_record_number) != x)
		return false;	/* slot X holds another record's block */
	d = (uint16_t)(le16toh(n.sequence_number) - le16toh(o.sequence_number));
	if (!(le16toh(o.flags) & NTFS_MFT_IN_USE))
		return d < 0x8000;
	if (o.base_mft_record != n.base_mft_record)
		return false;
	return (d && d < 0x8000) ||
	       (!d && le64toh(n.h.lsn) > le64toh(o.h.lsn));
}

/*
 * Mark in COPIES the in-use user records that are a copy of another user
 * record's slot (a misdirected write: the same block at its place and at
 * this one; it says it is that record).  Renumbering one would make a
 * second file with the first one's names and clusters.  Both slots are
 * compared as read, before pass 1 writes anything: once it has repaired
 * the record at its own slot, the copy would no longer match it.
 *
 * A copy that is the newer version of the record it says it is, whose
 * own slot the $MFT bitmap marks in use but holds an older version (the
 * write missed its place: mode l of the lab's misdirect), is written back
 * there, and then marked as a copy: the newest data is kept, once.  The
 * slot it landed in is checked whether the bitmap marks it or not.
 */
static int find_misplaced_copies(struct ntfs_check *c, uint8_t *copies,
				 const uint8_t *bitmap, uint64_t blen)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *rec = malloc(rs), *at = malloc(rs);
	char why[NTFS_WHY];
	int ret = 0;

	if (!rec || !at) {
		ret = -ENOMEM;
		goto out;
	}
	for (uint64_t i = NTFS_FILE_FIRST_USER; i < c->vol.mft_records; i++) {
		struct ntfs_mft_record m;
		uint32_t other;
		char obj[48];

		if (ntfs_vol_read_record(&c->vol, i, rec) || memcmp(rec, "FILE", 4))
			continue;
		memcpy(&m, rec, sizeof(m));
		other = le32toh(m.mft_record_number);
		if (le16toh(m.h.usa_ofs) < 0x30 || other == i ||
		    !(le16toh(m.flags) & NTFS_MFT_IN_USE) ||
		    other < NTFS_FILE_FIRST_USER || other >= c->vol.mft_records ||
		    ntfs_vol_read_record(&c->vol, other, at))
			continue;
		if (!memcmp(at, rec, rs)) {
			if (ntfs_record_check(at, rs, NTFS_MAGIC_FILE, why) ==
			    NTFS_REC_OK)
				rare_set(copies, i);
			continue;
		}
		if (other / 8 >= blen || !bit_get(bitmap, other) ||
		    !newer_version(rec, at, other))
			continue;
		memcpy(at, rec, rs);
		if (ntfs_record_check(at, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK ||
		    ntfs_record_used_wrong(at))
			continue;
		snprintf(obj, sizeof(obj), "MFT record %u", other);
		if (fsf_fix_ask(&c->fix, &PR_RECORD_NEWER_ELSEWHERE, obj,
				(unsigned long long)i) &&
		    ntfs_check_write_record(c, other, at))
			fsf_fix_failed(&c->fix);
		rare_set(copies, i);
	}
out:
	free(rec);
	free(at);
	return ret;
}

/* Claim the clusters of RUNS; a cluster claimed twice is only counted
 * here: pass 1B finds every owner and resolves it. */
static void mark_clusters(struct ntfs_check *c, const struct ntfs_run *runs,
			  long n)
{
	for (long i = 0; i < n; i++)
		for (uint64_t k = 0; runs[i].lcn >= 0 && k < runs[i].len; k++) {
			uint64_t lcn = (uint64_t)runs[i].lcn + k;

			if (cset_get(&c->cluster_used, lcn))
				c->crosslinked++;
			cset_set(&c->cluster_used, lcn);
		}
}

/* Count $FILE_NAME A of file OWNER, found in record RECNO, for the index
 * pass (its digest); a base named before it is scanned is noted. */
static void note_file_name(struct ntfs_check *c, uint64_t owner,
			   uint64_t recno, const struct ntfs_attr_header *a,
			   const struct ntfs_name_owner *o)
{
	if (owner >= c->vol.mft_records)
		return;
	names_digest_attr(c, owner, a);
	names_bucket_attr(c, owner, o, a);
	if (owner > recno)
		/* (out of memory: not noted, and OWNER judged by its own
		 * record's names alone) */
		rset_set(&c->early_named, owner);
}

static int note_extension(struct ntfs_check *c, uint64_t recno, uint64_t base)
{
	if (c->nexts == c->cap_exts) {
		size_t cap = c->cap_exts ? c->cap_exts * 2 : 64;
		struct ntfs_ext_ref *g = realloc(c->exts, cap * sizeof(*g));

		if (!g)
			return -1;
		c->exts = g;
		c->cap_exts = cap;
	}
	c->exts[c->nexts].recno = recno;
	c->exts[c->nexts++].base = base;
	return 0;
}

/* A base record with an attribute list, for ntfs_check_attr_lists(). */
static int note_list(struct ntfs_check *c, uint64_t recno, const uint8_t *rec)
{
	bool list;
	int dos;

	count_links(rec, &list, &dos);
	if (!list)
		return 0;
	if (c->nlbases == c->cap_lbases) {
		size_t cap = c->cap_lbases ? c->cap_lbases * 2 : 64;
		uint64_t *g = realloc(c->lbases, cap * sizeof(*g));

		if (!g)
			return -1;
		c->lbases = g;
		c->cap_lbases = cap;
	}
	c->lbases[c->nlbases++] = recno;
	return 0;
}

/* Attributes of an in-use record: clusters, volume flags, names (*NAMES:
 * how many $FILE_NAMEs it has).  Returns 0, or -1 when the record had to
 * be cleared. */
static int scan_attributes(struct ntfs_check *c, uint64_t recno, uint8_t *rec,
			   const char *obj, unsigned int *names)
{
	struct ntfs_mft_record m;
	bool base;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];
	int r;

	struct ntfs_name_owner o = { 0 };

	memcpy(&m, rec, sizeof(m));
	base = ntfs_record_is_base(rec);
	/* what pass 3 checks of its names' entries (name_counts.c) */
	o.seq = le16toh(m.sequence_number);
	o.dir = base && (le16toh(m.flags) & NTFS_MFT_IS_DIRECTORY);
	o.poison = !base || recno < NTFS_FILE_FIRST_USER;
	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1) {
		if (le32toh(a->type) == NTFS_AT_ATTRIBUTE_LIST)
			o.poison = true;
		else if (!o.data.known &&
			 (le32toh(a->type) != NTFS_AT_FILE_NAME || a->non_resident))
			ntfs_data_sizes_of(a, &o.data);
	}
	/* runlists first, all of them, before any cluster is claimed */
	ntfs_attr_cursor_init(&cur, rec);
	while ((r = ntfs_attr_next(&cur, &a, why)) == 1) {
		struct ntfs_run *runs;
		long n;

		if (!a->non_resident)
			continue;
		n = ntfs_attr_runs(a, c->vol.boot.g.nr_clusters, &runs, why);
		if (n < 0) {
			if (recno < NTFS_FILE_FIRST_USER) {
				fsf_fix_ask(&c->fix, &PR_SYSTEM_RECORD_CORRUPT, obj, why);
				return -1;
			}
			rare_set(c->record_lost, recno);
			if (fsf_fix_ask(&c->fix, &PR_RECORD_RUNS_BAD, obj,
					le32toh(a->type), why)) {
				ntfs_clear_record(rec, c->vol.boot.g.mft_record_size, recno);
				if (ntfs_check_write_record(c, recno, rec))
					fsf_fix_failed(&c->fix);
			}
			return -1;
		}
		free(runs);
	}
	if (r < 0) {
		if (recno < NTFS_FILE_FIRST_USER) {
			fsf_fix_ask(&c->fix, &PR_SYSTEM_RECORD_CORRUPT, obj, why);
			return -1;
		}
		rare_set(c->record_lost, recno);
		if (fsf_fix_ask(&c->fix, &PR_RECORD_ATTR_CORRUPT, obj, why)) {
			ntfs_clear_record(rec, c->vol.boot.g.mft_record_size, recno);
			if (ntfs_check_write_record(c, recno, rec))
				fsf_fix_failed(&c->fix);
		}
		return -1;
	}
	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1) {
		if (a->non_resident) {
			struct ntfs_run *runs;
			long n = ntfs_attr_runs(a, c->vol.boot.g.nr_clusters,
						&runs, why);

			if (n > 0)
				mark_clusters(c, runs, n);
			free(runs);
		} else if (le32toh(a->type) == NTFS_AT_FILE_NAME) {
			/* a name in an extension record belongs to its base */
			note_file_name(c, ntfs_record_file(rec, recno), recno, a, &o);
			++*names;
		} else if (recno == NTFS_FILE_VOLUME &&
			   le32toh(a->type) == NTFS_AT_VOLUME_INFORMATION) {
			uint32_t len;
			const void *v = ntfs_attr_value(a, &len);
			struct ntfs_volume_information vi;

			if (len >= sizeof(vi)) {
				memcpy(&vi, v, sizeof(vi));
				c->volume_flags = le16toh(vi.flags);
				c->volume_flags_found = true;
			}
		}
	}
	return 0;
}

/*
 * Records 0..mirr-1 must equal their $MFTMirr copies (at the location
 * pass 0 verified; nothing is read or written there otherwise).  WHY says
 * why $MFT's copy is not usable, and is updated when this finds out more.
 */
static void check_mirror(struct ntfs_check *c, uint64_t recno, uint8_t *rec,
			 enum ntfs_rec_state *state, const char *obj, char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *mir = malloc(rs), *raw = malloc(rs);
	char mwhy[NTFS_WHY];
	enum ntfs_rec_state ms;
	/* a record whose header is sound is judged further by its
	 * attributes below; unusable there, it may still be repaired in
	 * place (or made again) when the mirror cannot help */
	bool header_ok = *state == NTFS_REC_OK &&
			 !(recno < 4 && c->geo.mft_bad & (1u << recno));

	if (recno < 4 && c->geo.mft_bad & (1u << recno)) {
		/* it contradicts the geometry pass 0 verified */
		*state = NTFS_REC_BAD_HEADER;
		snprintf(why, NTFS_WHY, "%s", c->geo.mft_why[recno]);
	}
	if (!c->geo.mirr_ok || !mir || !raw ||
	    ntfs_vol_read_mirror(&c->vol, recno, raw))
		goto out;
	ms = ntfs_mirrored_usable(&c->vol, raw, recno, mwhy) == 0 ? NTFS_REC_OK :
							 NTFS_REC_BAD_HEADER;
	memcpy(mir, raw, rs);
	if (ms == NTFS_REC_OK)
		ntfs_record_check(mir, rs, NTFS_MAGIC_FILE, mwhy);
	if (*state == NTFS_REC_OK) {
		/* a valid header is not enough for a mirrored system file;
		 * rec has its fixups removed: check a protected copy */
		uint8_t *copy = malloc(rs);

		if (copy) {
			memcpy(copy, rec, rs);
			ntfs_fixup_apply(copy, rs, 1);
			if (ntfs_mirrored_usable(&c->vol, copy, recno, why) != 0)
				*state = NTFS_REC_BAD_HEADER;
			free(copy);
		}
	}
	if (*state == NTFS_REC_OK && ms == NTFS_REC_OK &&
	    ntfs_rec_self_ref(rec, recno) != recno && ntfs_rec_self_ref(mir, recno) == recno) {
		/* the mirror's copy is the one that knows its number */
		*state = NTFS_REC_BAD_HEADER;
		snprintf(why, NTFS_WHY, "says it is MFT record %llu",
			 (unsigned long long)ntfs_rec_self_ref(rec, recno));
	}
	if (*state != NTFS_REC_OK && ms == NTFS_REC_OK) {
		if (fsf_fix_ask(&c->fix, &PR_MFT_FROM_MIRROR, obj, why)) {
			if (ntfs_vol_write_record_raw(&c->vol, recno, raw))
				fsf_fix_failed(&c->fix);
		} else if (c->fix.mode == FSF_MODE_NO) {
			/* -n: later reads return the copy, as -a writes it */
			ntfs_vol_assume_record_raw(&c->vol, recno, raw);
		}
		ntfs_vol_cache_drop(&c->vol);
		memcpy(rec, mir, rs);
		*state = NTFS_REC_OK;
	} else if (*state == NTFS_REC_OK &&
		   (ms != NTFS_REC_OK || !ntfs_rec_same(rec, mir, rs))) {
		if (fsf_fix_ask(&c->fix, &PR_MIRROR_DIFFERS, obj)) {
			memcpy(mir, rec, rs);
			/* write our record's bytes, fixups applied, to the mirror */
			if (ntfs_check_write_record(c, recno, mir))
				fsf_fix_failed(&c->fix);
		}
	} else if (*state != NTFS_REC_OK && header_ok) {
		/* both copies unusable: the repairs that follow take $MFT's
		 * (their writes go to the mirror too) */
		*state = NTFS_REC_OK;
	}
out:
	free(mir);
	free(raw);
}

int ntfs_pass1_mft(struct ntfs_check *c)
{
	const struct ntfs_boot_info *b = &c->vol.boot;
	uint32_t rs = b->g.mft_record_size;
	uint8_t *rec = malloc(rs), *bitmap = NULL, *copies = NULL;
	struct ntfs_run *bruns = NULL;
	long bnruns = 0;
	uint64_t blen = 0;
	struct fsf_progress prog;
	int ret;

	if (!rec)
		return -ENOMEM;
	ret = load_record0(c, rec);
	if (!ret)
		ret = locate_mft(c, rec, &bitmap, &blen, &bruns, &bnruns);
	if (ret)
		goto out;
	ntfs_load_attrdef(c, rec);
	cset_init(&c->cluster_used, b->g.nr_clusters);
	cset_init(&c->record_used, c->vol.mft_records);
	rset_init(&c->record_dir, c->vol.mft_records);
	rset_init(&c->not_plain, c->vol.mft_records);
	rset_init(&c->has_objid, c->vol.mft_records);
	c->summary_ok = true;
	names_digest_init(c);
	c->nbuckets = calloc(NAME_BUCKETS, sizeof(*c->nbuckets));	/* optional */
	rset_init(&c->early_named, c->vol.mft_records);
	rset_init(&c->uncounted, c->vol.mft_records);
	c->ext_bad = ntfs_rare_map(c->vol.mft_records);
	c->record_lost = ntfs_rare_map(c->vol.mft_records);
	c->nameless = ntfs_rare_map(c->vol.mft_records);
	c->list_left = ntfs_rare_map(c->vol.mft_records);
	c->salvage_left = ntfs_rare_map(c->vol.mft_records);
	c->names_lost = ntfs_rare_map(c->vol.mft_records);
	copies = ntfs_rare_map(c->vol.mft_records);
	if (!c->ext_bad || !c->record_lost || !c->nameless || !c->list_left ||
	    !c->salvage_left || !c->names_lost ||
	    !copies) {
		ret = -ENOMEM;
		goto out;
	}
	ret = find_misplaced_copies(c, copies, bitmap, blen);
	if (ret)
		goto out;
	/* pass 0 counted the mirrored records; none without a mirror */
	if (!c->geo.mirr_ok)
		c->mirr_records = 0;
	if (c->mirr_records > c->vol.mft_records)
		c->mirr_records = (uint32_t)c->vol.mft_records;

	fsf_progress_init(&prog, "pass 1: MFT records", c->progress);
	for (uint64_t i = 0; i < c->vol.mft_records; i++) {
		enum ntfs_rec_state st;
		struct ntfs_mft_record m;
		char why[NTFS_WHY], obj[48];
		bool marked = i / 8 < blen && bit_get(bitmap, i);

		fsf_progress_update(&prog, i, c->vol.mft_records);
		snprintf(obj, sizeof(obj), "MFT record %llu", (unsigned long long)i);
		if (ntfs_vol_read_record(&c->vol, i, rec)) {
			uint64_t off = ntfs_vol_record_offset(&c->vol, i);

			st = NTFS_REC_BAD_MAGIC;
			snprintf(why, sizeof(why), "unreadable");
			if (off > c->dev.size || c->dev.size - off < rs) {
				/* past the end of a truncated device:
				 * unknown, so kept as the bitmap says */
				snprintf(why, sizeof(why), "past the end of the device");
				if (i >= NTFS_FILE_FIRST_USER) {
					if (marked) {
						cset_set(&c->record_used, i);
						/* not read: pass 2 looks at it */
						if (rset_set(&c->not_plain, i))
							c->summary_ok = false;
						c->geo.lost_records++;
					}
					continue;
				}
			}
		} else {
			st = ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why);
		}
		if (i < c->mirr_records)
			check_mirror(c, i, rec, &st, obj, why);
		if (st == NTFS_REC_TORN && (marked || i < NTFS_FILE_FIRST_USER)) {
			int s = ntfs_salvage_torn(c, i, rec, obj);

			if (s == 0)
				st = NTFS_REC_OK;
			else if (s > 0 && i >= NTFS_FILE_FIRST_USER)
				continue;	/* declined: left alone */
		}
		if ((st == NTFS_REC_BAD_USA || st == NTFS_REC_BAD_HEADER ||
		     (st == NTFS_REC_OK && ntfs_record_used_wrong(rec))) &&
		    (marked || i < NTFS_FILE_FIRST_USER)) {
			int s = ntfs_salvage_header(c, i, rec, st, obj);

			if (s == 0)
				st = NTFS_REC_OK;
			else if (s > 0 && i >= NTFS_FILE_FIRST_USER)
				continue;	/* declined: left alone */
		}
		if (st == NTFS_REC_UNUSED && !marked && i >= NTFS_FILE_FIRST_USER)
			continue;
		if (st != NTFS_REC_OK && i == NTFS_FILE_ROOT &&
		    !ntfs_recreate_root(c, rec, obj, why))
			st = NTFS_REC_OK;
		if (st != NTFS_REC_OK) {
			if (i < NTFS_FILE_FIRST_USER) {
				int s = ntfs_sysrec_lost(c, i, rec, obj, why);

				if (s == 0)
					continue;	/* made again after the scan */
				if (s == -1)
					fsf_fix_ask(&c->fix, &PR_SYSTEM_RECORD_CORRUPT, obj, why);
				ret = -EUCLEAN;
				break;
			}
			if (!marked)
				continue;	/* free anyway: the bitmap pass fixes it */
			rare_set(c->record_lost, i);
			if (fsf_fix_ask(&c->fix, &PR_RECORD_CORRUPT, obj, why)) {
				ntfs_clear_record(rec, rs, i);
				if (ntfs_check_write_record(c, i, rec))
					fsf_fix_failed(&c->fix);
			}
			continue;
		}
		memcpy(&m, rec, sizeof(m));
		if (!(le16toh(m.flags) & NTFS_MFT_IN_USE) && i < 12 &&
		    !ntfs_sysrec_unused(c, i, rec, obj))
			memcpy(&m, rec, sizeof(m));	/* in use again */
		else if (!(le16toh(m.flags) & NTFS_MFT_IN_USE)) {
			if (i < 12) {
				int s = ntfs_sysrec_lost(c, i, rec, obj, "not in use");

				if (s == 0)
					continue;
				if (s == -1)
					fsf_fix_ask(&c->fix, &PR_SYSTEM_FILE_MISSING, obj);
				ret = -EUCLEAN;
				break;
			}
			continue;
		}
		if (i < 12 && le16toh(m.sequence_number) != (i ? i : 1)) {
			/* a system file's sequence number is its record
			 * number ($MFT: 1); index entries rely on it */
			if (fsf_fix_ask(&c->fix, &PR_SYSTEM_SEQUENCE, obj,
					le16toh(m.sequence_number), (unsigned)(i ? i : 1))) {
				m.sequence_number = htole16((uint16_t)(i ? i : 1));
				memcpy(rec, &m, sizeof(m));
				if (ntfs_check_write_record(c, i, rec))
					fsf_fix_failed(&c->fix);
			}
		}
		if (le16toh(m.h.usa_ofs) >= 0x30 &&
		    le32toh(m.mft_record_number) != (uint32_t)i &&
		    rare_get(copies, i)) {
			/* the file this slot held is lost, as a corrupt one;
			 * a free slot held none */
			if (marked)
				rare_set(c->record_lost, i);
			if (fsf_fix_ask(&c->fix, marked ? &PR_RECORD_MISPLACED :
					&PR_RECORD_MISPLACED_FREE, obj,
					le32toh(m.mft_record_number))) {
				ntfs_clear_record(rec, rs, i);
				if (ntfs_check_write_record(c, i, rec))
					fsf_fix_failed(&c->fix);
			}
			continue;
		}
		if (le16toh(m.h.usa_ofs) >= 0x30 &&
		    le32toh(m.mft_record_number) != (uint32_t)i) {
			if (fsf_fix_ask(&c->fix, &PR_RECORD_NUMBER, obj,
					le32toh(m.mft_record_number))) {
				m.mft_record_number = htole32((uint32_t)i);
				memcpy(rec, &m, sizeof(m));
				if (ntfs_check_write_record(c, i, rec))
					fsf_fix_failed(&c->fix);
			}
		}
		ntfs_check_base_reference(c, i, rec, obj);
		if (ntfs_salvage_attrs(c, i, rec, obj) > 0) {
			rare_set(c->salvage_left, i);
			continue;	/* declined: left alone */
		}
		ntfs_check_record_flags(c, i, rec, obj);
		ntfs_check_attr_extents(c, i, rec, obj);
		if (ntfs_sysfile_buildable((uint32_t)i) &&
		    ntfs_sysrec_check(c, i, rec, why)) {
			int s = ntfs_sysrec_lost(c, i, rec, obj, why);

			if (s == 0)
				continue;
			if (s == -2) {
				ret = -EUCLEAN;
				break;
			}
		}
		memcpy(&m, rec, sizeof(m));
		if (!le64toh(m.base_mft_record)) {
			bool list;
			int dos;
			int links = count_links(rec, &list, &dos);

			/* names in extension records are not counted here */
			if (!list && links > 0 && links != le16toh(m.link_count) &&
			    links - dos != le16toh(m.link_count) &&
			    fsf_fix_ask(&c->fix, &PR_LINK_COUNT, obj,
					le16toh(m.link_count), (unsigned)links)) {
				m.link_count = htole16((uint16_t)links);
				memcpy(rec, &m, sizeof(m));
				if (ntfs_check_write_record(c, i, rec))
					fsf_fix_failed(&c->fix);
			}
		}
		unsigned int names = 0;

		if (scan_attributes(c, i, rec, obj, &names) == 0) {
			bool list;
			int dos;

			cset_set(&c->record_used, i);
			ntfs_note_record(c, i, rec);
			/* a user file without a name in its own record and no
			 * list: pass 3 gives it one (its entry's, or /lost+found) */
			if (i >= NTFS_FILE_FIRST_USER && !le64toh(m.base_mft_record) &&
			    !names && !rset_get(&c->early_named, i) &&
			    (count_links(rec, &list, &dos), !list))
				rare_set(c->nameless, i);
			if (le16toh(m.flags) & NTFS_MFT_IS_DIRECTORY &&
			    !le64toh(m.base_mft_record) &&
			    rset_set(&c->record_dir, i)) {
				ret = -ENOMEM;
				break;
			}
			if (le64toh(m.base_mft_record) &&
			    note_extension(c, i, le64toh(m.base_mft_record) &
					   0xffffffffffffULL)) {
				ret = -ENOMEM;
				break;
			}
			if (!le64toh(m.base_mft_record) && note_list(c, i, rec)) {
				ret = -ENOMEM;
				break;
			}
		}
		else if (i < NTFS_FILE_FIRST_USER) {
			ret = -EUCLEAN;
			break;
		}
	}
	fsf_progress_done(&prog);
	/* the entries held for the base-reference checks: later passes
	 * change indexes */
	ntfs_dir_refs_free(&c->dir_refs);
	/* $MFT's clusters as pass 1 read them: a lost tail it took (with
	 * -n record 0 still maps less) is in use */
	for (long k = 0; !ret && k < c->vol.nmft_runs; k++)
		for (uint64_t j = 0; c->vol.mft_runs[k].lcn >= 0 &&
		     j < c->vol.mft_runs[k].len; j++)
			cset_set(&c->cluster_used, (uint64_t)c->vol.mft_runs[k].lcn + j);
	if (c->geo.lost_records)
		fsf_info(c->log, "%llu in-use MFT records lie past the end of the device and are not checked",
			 (unsigned long long)c->geo.lost_records);
	/* a cluster or record the sets could not take is not known to be in
	 * use: nothing may be allocated or claimed from them */
	if (!ret && (c->cluster_used.nomem || c->record_used.nomem))
		ret = -ENOMEM;
	if (!ret)
		ret = ntfs_sysrec_remake(c);
	if (!ret) {
		ntfs_check_attr_lists(c);
		ntfs_check_extensions(c);
	}
out:
	if (!ret && (c->cluster_used.nomem || c->record_used.nomem))
		ret = -ENOMEM;
	free(rec);
	free(bitmap);
	free(bruns);
	ntfs_rare_map_free(copies);
#ifdef __GLIBC__
	/* the $MFT bitmap (an eighth of a byte per record, under glibc's
	 * mmap threshold up to 1M records) came from the heap: its pages
	 * would stay resident, unused, through the later passes */
	malloc_trim(0);
#endif
	return ret;
}

