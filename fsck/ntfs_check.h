/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fsck.ntfs: the state shared by the passes.  Each pass is a file of its
 * own; every problem it can report is a row of ntfs_problems.c, and what
 * happens with a problem in -n/-a/-y/interactive mode is decided by
 * common/problem.c alone.
 */
#ifndef FSCK_NTFS_CHECK_H
#define FSCK_NTFS_CHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <endian.h>
#include <string.h>

#include "fsforge/dev.h"
#include "fsforge/log.h"
#include "fsforge/problem.h"
#include "fsforge/progress.h"
#include "ntfs/attr_split.h"
#include "ntfs/btree.h"
#include "ntfs/file_attrs.h"
#include "ntfs/index_read.h"
#include "ntfs/read.h"
#include "ntfs/volume_io.h"

/* a $FILE_NAME naming a directory whose index is rebuilt (name in host
 * order UTF-16) */
struct ntfs_fn_ref {
	uint64_t recno;			/* the file (its base record) */
	uint16_t seq;			/* ... and its sequence number */
	uint64_t parent;		/* parent record number */
	uint64_t holder;		/* the record holding the $FILE_NAME */
	uint8_t name_len;
	uint16_t *name;
	uint8_t *fn;			/* the $FILE_NAME value (index key),
					 * in the same allocation as NAME */
	uint16_t fn_len;
	bool mended;			/* a NUL or '/' made '_': on a clash
					 * this name is the one renamed */
};

/* a $FILE_NAME value pass 3 gave a parent back (pass3_strays.c) */
struct ntfs_name_given {
	uint64_t recno;			/* the file */
	bool written;			/* its new parent is on disk */
	uint16_t len;
	uint8_t fn[0x42 + 2 * 255];	/* the value as it was */
};

/* an extension record and the base it claims */
struct ntfs_ext_ref {
	uint64_t recno, base;
};

/*
 * The geometry pass 0 verified before anything is written (e2fsck checks
 * its superblock first): where $MFT and $MFTMirr are, agreed by a boot
 * sector and the FILE records found there (pass0_geometry.c).
 */
struct ntfs_geom {
	bool mirr_ok;		/* vol.boot.mftmirr_lcn holds $MFTMirr: the
				 * only place mirror copies are read or
				 * written */
	uint8_t mft_bad;	/* bit i (records 0-3): $MFT's copy contradicts
				 * the verified geometry (restore it from the
				 * mirror) */
	char mft_why[4][NTFS_WHY];
	uint64_t dev_clusters;	/* clusters wholly on the device */
	uint64_t lost_records;	/* in-use MFT records past the device's end */
};

/* A boot sector as a candidate for the volume's geometry. */
struct ntfs_candidate {
	struct ntfs_boot_info b;
	bool mft_ok;		/* records 0-3 found where it puts $MFT */
	int64_t mirr_lcn;	/* where $MFTMirr verifiably is, -1: unknown */
	uint32_t mirr_records;	/* records mirrored there */
	uint8_t mft_bad;	/* see struct ntfs_geom */
	char mft_why[4][NTFS_WHY];
	char why[NTFS_WHY];	/* !mft_ok: why not */
};

/* record_set.c: a set of record numbers below BITS that few records are
 * in, kept as a sorted array (a map of one bit per record once it is
 * cheaper); rset_set: 0, or -1 when memory ran out (R not added). */
struct ntfs_rset {
	uint32_t *v;			/* members, sorted */
	size_t n, cap;
	uint8_t *map;			/* instead of V, when there are many */
	uint64_t bits;
};
void rset_init(struct ntfs_rset *s, uint64_t bits);
void rset_free(struct ntfs_rset *s);
bool rset_get(const struct ntfs_rset *s, uint64_t r);
int rset_set(struct ntfs_rset *s, uint64_t r);
void rset_clear(struct ntfs_rset *s, uint64_t r);

/* cluster_set.c: a set of cluster or record numbers below BITS, kept as
 * a sorted array of extents (a map of one bit per item once cheaper);
 * cset_set: 0, or -1 when memory ran out (L not added); cset_clear:
 * when memory runs out splitting an extent, L stays in the set.  Either
 * sets NOMEM. */
struct ntfs_extent {
	uint64_t start, len;
};
struct ntfs_cset {
	struct ntfs_extent *v;		/* sorted, disjoint, never adjacent */
	size_t n, cap, hint;
	uint8_t *map;			/* instead of V, when there are many */
	uint64_t bits;
	bool nomem;			/* a change was lost: not to be relied on */
};
void cset_init(struct ntfs_cset *s, uint64_t bits);
void cset_free(struct ntfs_cset *s);
bool cset_get(const struct ntfs_cset *s, uint64_t l);
/* whether an item of [FROM, TO) is in the set */
bool cset_any(const struct ntfs_cset *s, uint64_t from, uint64_t to);
int cset_set(struct ntfs_cset *s, uint64_t l);
void cset_clear(struct ntfs_cset *s, uint64_t l);
void cset_reset(struct ntfs_cset *s);

struct ntfs_check {
	const struct fsf_log *log;
	struct fsf_dev dev;
	struct fsf_fix_ctx fix;
	struct ntfs_vol vol;
	bool verbose, progress;
	uint32_t mirr_records;		/* records mirrored in $MFTMirr */
	struct ntfs_geom geo;

	/* what the volume really uses, built by pass 1 */
	struct ntfs_cset cluster_used;	/* the clusters (cluster_set.c) */
	struct ntfs_cset record_used;	/* the MFT records (cluster_set.c) */
	uint64_t crosslinked;

	/* per record, for the index pass */
	struct ntfs_rset record_dir;	/* the directories (base records) */
	/* name_counts.c: the digests of the $FILE_NAMEs (pass 1) and of the
	 * index entries that name them (pass 3), and its key */
	uint64_t names_sum[2], entries_sum[2], name_key[2];
	bool names_inexact;		/* a repair moved names: count them */
	bool upcase_assumed;		/* -n: $UpCase's rewrite with the
					 * standard table declined; pass 3
					 * collates by that table, as -a's */
	/* the same per bucket of directories (names_bucket), with what
	 * pass 3 checks of an entry against its file: sequence number,
	 * parent reference, directory or not, data sizes; a bucket whose
	 * sums agree has its entries right without reading the files */
	struct ntfs_name_bucket {
		uint64_t names[2], entries[2], entry_names[2];
		bool bad;		/* not provable: check each entry */
	} *nbuckets;
	struct ntfs_rset early_named;	/* bases named by an extension
					 * record before them (pass 1) */
	struct ntfs_rset uncounted;	/* marked in use after pass 1's scan */
	struct ntfs_rset size_told;	/* pass 3: files whose 0-byte $DATA
					 * was reported (once, not per name) */
	/* only when the digests differ: per base record, 3 bits
	 * (fnp_get/fnp_set): its $FILE_NAMEs less the index entries found
	 * for it; FNP_MANY: too many to count, not judged */
	uint8_t *fn_pending;
	struct ntfs_fnp_big { uint64_t r; uint16_t n; } *fnp_big;
	size_t nfnp_big, cap_fnp_big;
	uint8_t *ext_bad;		/* one bit per record: orphan extension */
	struct ntfs_dir_refs dir_refs;	/* pass 1: the last directory whose
					 * entries a base reference asked */
	uint8_t *record_lost;		/* one bit per record: unusable (pass 1) */
	uint8_t *list_left;		/* one bit per record: its attribute
					 * list found wrong and left (pass 1) */
	uint8_t *salvage_left;		/* one bit per record: its salvage
					 * declined, left as read (pass 1);
					 * its extension records are left too */
	uint8_t *names_lost;		/* one bit per base record: its list
					 * named $FILE_NAMEs in a record found
					 * unusable (pass 1); pass 3 gives the
					 * names back from index entries */
	/* -n: the entries of a base's non-resident attribute list that a
	 * declined salvage removes with their attributes (pass1_salvage.c;
	 * the list check judges the list without them, as -a leaves it) */
	struct ntfs_unlisted {
		uint64_t base, rec;
		uint32_t type;
		uint16_t inst;
	} *unlisted;
	size_t nunlisted;
	struct ntfs_names_lost { uint64_t b; uint32_t n; } *lost_names;
	size_t nlost_names;		/* how many such names each file lost:
					 * no more are given back */
	uint8_t *nameless;		/* one bit per record: a file without
					 * any $FILE_NAME (pass 1) */
	/* pass1_summary.c: what pass 1 saw, so later passes read less */
	/* records in use that pass 2 must look at: all records that are not
	 * plain (summary_ok: pass 1 noted every record it accepted) */
	struct ntfs_rset not_plain;
	/* plain records holding an $OBJECT_ID (pass3_objid.c reads only
	 * those, the not plain ones and the system records) */
	struct ntfs_rset has_objid;
	bool summary_ok;
	uint32_t *secids;		/* the base records' security ids */
	size_t nsecids, cap_secids;
	bool secids_overflow;		/* too many to keep: not used */
	struct ntfs_fn_ref *names;	/* names of the directories rebuilt */
	size_t nnames, cap_names;
	struct ntfs_ext_ref *exts;	/* extension records in use */
	size_t nexts, cap_exts;
	/* pass2_rindex.c for pass3_views.c: the $R keys the files' reparse
	 * points call for (12 bytes each: tag, reference; sorted), when $R
	 * is large (its rebuild is the index builder's); whether pass 2
	 * asked about $R (rp_asked) and the rebuild was accepted; whether
	 * pass 2 walked $R (rp_walked) in record rp_rec, so that pass 3
	 * does not walk it again */
	uint8_t *rp_keys;
	size_t rp_nkeys;
	bool rp_asked, rp_rebuild, rp_walked;
	uint64_t rp_rec;
	uint64_t *lbases;		/* base records with an attribute list */
	size_t nlbases, cap_lbases;
	uint8_t *rebuild;		/* one bit per record: rebuild its $I30 */
	uint8_t *mend;			/* one bit per record: a name of its
					 * holding a NUL or '/' is mended when
					 * its directory is rebuilt (agreed) */
	struct ntfs_promise {		/* the answers a rebuild carries out */
		uint64_t dir;
		long answer;		/* fsf_fix_promise() */
	} *promises;
	size_t npromises, cap_promises;
	bool root_recreated;		/* pass1_root.c made record 5 again */
	uint16_t volume_flags;		/* $VOLUME_INFORMATION flags */
	bool volume_flags_found;
	/* system records pass 1 makes again (pass1_system.c) */
	struct ntfs_sysrec *sysrec;
	bool tables_unchecked;	/* pass 1 done: $UpCase, $AttrDef after pass 1B */
	/* the attribute types the volume defines: its $AttrDef's, or the
	 * standard table's when that is damaged (pass1_system.c) */
	uint32_t attr_types[NTFS_ATTRDEF_MAX_TYPES];
	size_t nattr_types;
	/* names whose parent pass 3 took back or is to take back (-n) */
	struct ntfs_name_given *given;
	size_t ngiven;
	/* /lost+found, once looked for (pass3_orphans.c) */
	bool lf_known;
	int64_t lf;			/* record; 0: none, -1: unusable */
	uint16_t lf_seq;
};

/* Does the volume define attribute type T?  (Before $AttrDef is read:
 * any type NTFS allows.)  ntfs_load_attrdef (pass1_system.c) reads the
 * table, REC a record's scratch. */
static inline bool ntfs_type_defined(const struct ntfs_check *c, uint32_t t)
{
	return c->nattr_types ? ntfs_attrdef_has(c->attr_types, c->nattr_types, t) :
				ntfs_attr_type_valid(t);
}
void ntfs_load_attrdef(struct ntfs_check *c, uint8_t *rec);

/* Write MFT record RECNO (ntfs_vol_write_record), its copy in $MFTMirr
 * too when pass 0 verified the mirror and RECNO is in its range.
 * Everything else is read and written with ntfs/volume_io.h on C->vol. */
/* The records whose writes go to $MFTMirr too. */
static inline uint64_t ntfs_check_mirrored(const struct ntfs_check *c)
{
	return c->geo.mirr_ok ? c->mirr_records : 0;
}
static inline int ntfs_check_write_record(struct ntfs_check *c, uint64_t recno,
					  uint8_t *buf)
{
	return ntfs_vol_write_record(&c->vol, recno, buf, ntfs_check_mirrored(c));
}
/* rare_map.c: a zeroed map of BITS bits whose pages take memory only once written
 * (for maps seldom marked: ext_bad, record_lost, nameless, rebuild,
 * pass 3's unchecked directories),
 * freed by ntfs_rare_map_free; NULL if none. */
uint8_t *ntfs_rare_map(uint64_t bits);
void ntfs_rare_map_free(uint8_t *map);
#define NTFS_RARE_HEAD 16u

/* name_counts.c: the digest of names and entries (see there).
 * names_digest_add: add the hash of (FILE, PARENT, the LEN units of
 * NAME, little-endian UTF-16) to SUM; names_digest_attr: of $FILE_NAME A
 * of file OWNER, to c->names_sum; names_digest_equal: nothing pending?
 * names_count_all: the exact count (c->fn_pending made) of the names of
 * the records pass 1 counted, BUF a record's scratch; 0, or -1 (no
 * memory). */
void names_digest_init(struct ntfs_check *c);
void names_digest_add(const struct ntfs_check *c, uint64_t sum[2],
		      uint64_t file, uint64_t parent, unsigned int len,
		      const uint8_t *name);
void names_digest_attr(struct ntfs_check *c, uint64_t owner,
		       const struct ntfs_attr_header *a);
bool names_digest_equal(const struct ntfs_check *c);
/* What pass 1 knows of the file a $FILE_NAME belongs to.  POISON: its
 * entries cannot be proved by the digest (an extension record's name, a
 * file with an attribute list, a system file). */
struct ntfs_name_owner {
	uint16_t seq;
	bool dir, poison;
	struct ntfs_data_sizes data;	/* of the unnamed $DATA */
};
#define NAME_BUCKETS 256u
unsigned int names_bucket(uint64_t dir);
void names_bucket_attr(struct ntfs_check *c, uint64_t owner,
		       const struct ntfs_name_owner *o,
		       const struct ntfs_attr_header *a);
/* entry IE of directory DIR (sequence number DSEQ): false when the entry
 * alone shows it cannot be proved */
bool names_bucket_entry(struct ntfs_check *c, uint64_t dir, uint16_t dseq,
			const struct ntfs_ie_view *ie);
bool names_bucket_good(const struct ntfs_check *c, uint64_t dir);
int names_count_all(struct ntfs_check *c, uint8_t *buf);

/* above NTFS's 1,024 hard links (and their DOS names) */
#define FNP_MANY 65535u
/* name_counts.c: the names pending per record (0..65534, FNP_MANY: too
 * many to count), 3 bits each; 7 and more in a small sorted side table */
#define FNP_MAP_BYTES(records) ((records) * 3 / 8 + 2)
unsigned int fnp_get(const struct ntfs_check *c, uint64_t r);
void fnp_set(struct ntfs_check *c, uint64_t r, unsigned int v);

static inline bool bit_get(const uint8_t *map, uint64_t i)
{
	return map[i >> 3] & (1u << (i & 7));
}

static inline void bit_set(uint8_t *map, uint64_t i)
{
	map[i >> 3] |= (uint8_t)(1u << (i & 7));
}

static inline void bit_clear(uint8_t *map, uint64_t i)
{
	map[i >> 3] &= (uint8_t)~(1u << (i & 7));
}

/* a map of ntfs_rare_map: bit I set; is it set; was any bit ever set
 * (a map never marked is not read at all) */
static inline void rare_set(uint8_t *map, uint64_t i)
{
	bit_set(map, i);
	map[-1] = 1;
}

static inline bool rare_get(const uint8_t *map, uint64_t i)
{
	return map[-1] && bit_get(map, i);
}

static inline bool rare_any(const uint8_t *map)
{
	return map && map[-1];
}

/*
 * The volume's files as libntfs reads them (ntfs/file_attrs.h,
 * ntfs/index_read.h), with the records pass 1 found in use (c->record_used)
 * as the only extension records followed.
 */
static inline bool ntfs_check_in_use(const void *arg, uint64_t recno)
{
	return cset_get(&((const struct ntfs_check *)arg)->record_used, recno);
}
static inline int ntfs_read_listed(struct ntfs_check *c, uint64_t d,
				   uint64_t mref, uint8_t *buf, char *why)
{
	return ntfs_vol_read_listed(&c->vol, ntfs_check_in_use, c, d, mref, buf, why);
}
static inline int ntfs_file_foreach(struct ntfs_check *c, uint64_t base,
				    uint8_t *buf, ntfs_attr_visit fn, void *arg)
{
	return ntfs_vol_file_foreach(&c->vol, ntfs_check_in_use, c, base, buf,
				     fn, arg);
}
static inline int ntfs_file_attr_holder(struct ntfs_check *c, uint8_t *rec,
					uint64_t base, uint32_t type,
					uint8_t *ext, uint8_t **holder,
					uint64_t *where)
{
	return ntfs_vol_attr_holder(&c->vol, rec, base, type, ext, holder,
				    where);
}
static inline int ntfs_index_open(struct ntfs_check *c, uint64_t d,
				  const uint8_t *rec, const char *name,
				  struct ntfs_index *ix)
{
	return ntfs_vol_index_open(&c->vol, ntfs_check_in_use, c, d, rec, name,
				   ix);
}
static inline long ntfs_attr_extents_runs(struct ntfs_check *c, uint64_t d,
					  uint32_t type, const char *name,
					  struct ntfs_run **runs,
					  uint64_t *size, size_t *nextents,
					  char *why)
{
	return ntfs_vol_extents_runs(&c->vol, ntfs_check_in_use, c, d, type,
				     name, runs, size, nextents, why);
}
static inline void ntfs_object_name(struct ntfs_check *c, const char *what,
				    uint64_t recno, char *out, size_t size)
{
	ntfs_vol_object_name(&c->vol, ntfs_check_in_use, c, what, recno, out,
			     size);
}
static inline bool ntfs_in_extend(struct ntfs_check *c, uint64_t dir,
				  uint8_t *buf)
{
	return ntfs_vol_in_extend(&c->vol, ntfs_check_in_use, c, dir, buf);
}

/* libntfs/attr_split.c: unnamed non-resident attribute TYPE of file
 * BASE in several extents, read through their joined runs
 * (ntfs_vol_read_split). */
static inline int ntfs_read_split(struct ntfs_check *c, uint64_t base, uint32_t type,
				  uint8_t **data, uint64_t *len, struct ntfs_run **runs,
				  long *nruns)
{
	return ntfs_vol_read_split(&c->vol, base, type, data, len, runs, nruns);
}

/* pass1_record.c */
/* A user record that claims a base which does not list it, yet holds
 * $STANDARD_INFORMATION (no extension record does), is a file: its base
 * reference is set back to 0 (in REC whatever the answer). */
void ntfs_check_base_reference(struct ntfs_check *c, uint64_t recno,
			       uint8_t *rec, const char *obj);
void ntfs_check_record_flags(struct ntfs_check *c, uint64_t recno,
			     uint8_t *rec, const char *obj);
void ntfs_check_attr_extents(struct ntfs_check *c, uint64_t recno,
			     uint8_t *rec, const char *obj);
void ntfs_check_extensions(struct ntfs_check *c);
/* pass1_attrlist.c: every base record with an $ATTRIBUTE_LIST (in
 * c->lbases) against the extension records that point back at it: the
 * list rebuilt when it says otherwise, extension records whose base
 * reference was lost given it back, link counts over all the records. */
void ntfs_check_attr_lists(struct ntfs_check *c);
/* Whether base record REC's non-resident attribute list has clusters
 * past the end of a truncated device (not read: unknown, not wrong). */
bool ntfs_list_past_end(const struct ntfs_check *c, const uint8_t *rec);
/* The list of base record B made again from B and the extension records
 * its list names that still point back at B (after attributes were
 * removed from them or added to them), and record EXTRA too when it is
 * one of B's (a new extension record; UINT64_MAX: none).  0, or -1 with
 * WHY. */
int ntfs_rewrite_attr_list(struct ntfs_check *c, uint64_t b, uint64_t extra,
			   char *why);
/* libntfs/attr_split.c: $MFT's $DATA with its later extents joined
 * into C->vol.mft_runs (ntfs_vol_mft_extents). */
static inline int ntfs_mft_extents(struct ntfs_check *c, const uint8_t *rec0,
				   uint64_t size, char *why)
{
	return ntfs_vol_mft_extents(&c->vol, rec0, size, why);
}
/* pass1_salvage.c: repair record REC's attributes in place where they
 * are wrong (written back when accepted).  0: usable now; 1: a repair was
 * declined, the record is left alone; -1: nothing to do in place, the
 * record is treated as before (cleared when corrupt).
 * pass1_header.c, ntfs_salvage_torn: REC as read (fixups not removed) with
 * a torn stride; 0 when its saved stride ends were put back (REC then has
 * its fixups removed). */
int ntfs_salvage_attrs(struct ntfs_check *c, uint64_t recno, uint8_t *rec,
		       const char *obj);
int ntfs_salvage_torn(struct ntfs_check *c, uint64_t recno, uint8_t *rec,
		      const char *obj);
/* REC with an invalid update sequence array (as read) or header fields
 * (fixups removed), ST saying which (NTFS_REC_OK: fields that pass their
 * check, bytes in use ending inside an attribute): 0 when the array and fields were put
 * back where the strides and the attribute frames say (REC then has its
 * fixups removed), 1 declined, -1 not that way. */
int ntfs_salvage_header(struct ntfs_check *c, uint64_t recno, uint8_t *rec,
			enum ntfs_rec_state st, const char *obj);
/* Make REC a free record (sequence number bumped). */
void ntfs_clear_record(uint8_t *rec, uint32_t rs, uint64_t recno);

/* pass1_summary.c: note record RECNO (accepted by pass 1; REC fixups
 * removed) for the later passes; ntfs_record_plain: may pass 2 skip it? */
void ntfs_note_record(struct ntfs_check *c, uint64_t recno, const uint8_t *rec);
bool ntfs_record_plain(const struct ntfs_check *c, uint64_t recno);
/* May a record be skipped by a search for $OBJECT_IDs? */
bool ntfs_record_no_objid(const struct ntfs_check *c, uint64_t recno);

/* pass1_system.c: system records 1-4, 6-8, 10 and 11 that are beyond
 * repair are made again as mkfs.ntfs makes them (libntfs/sysfile.c).
 * ntfs_sysrec_check: does checked, in-use record REC fit its role (0, or
 * -1 with WHY)?  ntfs_sysrec_lost: asks to make record RECNO (REC: its
 * bytes, as read or checked) again, keeping what is readable of it; 0
 * when it will be (after the records are scanned, by ntfs_sysrec_remake),
 * -1 when declined.  ntfs_check_system_tables: $UpCase's and $AttrDef's
 * tables judged and rewritten, after pass 1B (a table's run that reaches
 * another file's clusters must not overwrite them before that file has
 * its copy). */
struct ntfs_sysrec;
int ntfs_sysrec_check(struct ntfs_check *c, uint64_t recno, const uint8_t *rec,
		      char *why);
int ntfs_sysrec_lost(struct ntfs_check *c, uint64_t recno, const uint8_t *rec,
		     const char *obj, const char *why);
int ntfs_sysrec_remake(struct ntfs_check *c);
void ntfs_check_system_tables(struct ntfs_check *c);
/* System record RECNO (checked, fixups removed) says it is not in use
 * though it still holds its file ($STANDARD_INFORMATION and a $FILE_NAME
 * in the root): its in-use flag is set back (asked; the directory flag
 * too when it has a $I30 index root), the rest of pass 1
 * then checks it as any record.  0: it is that file (flag set, or the
 * repair declined: scanned as in use), -1: it does not show itself as
 * that file (ntfs_sysrec_lost's turn). */
int ntfs_sysrec_unused(struct ntfs_check *c, uint64_t recno, uint8_t *rec,
		       const char *obj);
void ntfs_sysrec_free(struct ntfs_check *c);

/* pass1_root.c: the root directory's record REC is beyond use (WHY):
 * made again (asked) with an empty index that pass 3 rebuilds; 0 when REC
 * now holds it (fixups removed), -1 declined or failed. */
int ntfs_recreate_root(struct ntfs_check *c, uint8_t *rec, const char *obj,
		       const char *why);

/* pass0_geometry.c: check candidate K against the records on disk
 * (reads only). */
void ntfs_geometry_verify(struct ntfs_check *c, struct ntfs_candidate *k);
/* Where the $MFTMirr copy of record 0 at K's mirror cluster puts $MFT's
 * data, or -1. */
int64_t ntfs_geometry_mft_from_mirror(struct ntfs_check *c,
				      const struct ntfs_candidate *k);
int ntfs_pass0_boot(struct ntfs_check *c);
int ntfs_pass1_mft(struct ntfs_check *c);
/* pass1b_crosslinks.c: clusters claimed twice (pass 1 counted them in
 * c->crosslinked) resolved by copies; leaves the unresolved count there
 * and c->cluster_used exact. */
int ntfs_pass1b_crosslinks(struct ntfs_check *c);
/* pass2_special.c: reparse points (and $Extend/$Reparse), extended
 * attributes; pass2_data.c: compressed, sparse and named data
 * attributes, residence. */
int ntfs_pass2_special(struct ntfs_check *c);
int ntfs_pass2_data(struct ntfs_check *c);
int ntfs_pass3_indexes(struct ntfs_check *c);
int ntfs_pass3_secure(struct ntfs_check *c);
/* secure_fallback.c: the security id pass 3 gives a file whose own one
 * is unknown (the root's if $Secure holds it, else the lowest it holds),
 * read from $SDS without writing; when $SDS holds none but has room for
 * the default descriptors pass 3 then writes, the root directory's among
 * those (*PENDING true); 0 when there is neither. */
uint32_t ntfs_check_fallback_secid(struct ntfs_check *c, bool *pending);
/* pass3_views.c: $Quota's $O/$Q, $ObjId's $O, $Reparse's $R */
int ntfs_pass3_views(struct ntfs_check *c);
/* pass3_usnjrnl.c: $Extend/$UsnJrnl's $Max and the end of its $J */
int ntfs_pass3_usnjrnl(struct ntfs_check *c);
/* extend_files.c: the records of $Extend's files called NAMES (N of
 * them) from its index, into RECS (UINT64_MAX: not there, or naming a
 * record not in use).  0, or what the index walk returned (<0). */
int ntfs_extend_files(struct ntfs_check *c, const char *const *names, size_t n,
		      uint64_t *recs);
/* pass3_recreate.c: the entry IE of directory PARENT names a directory
 * whose record pass 1 found unusable: make it again from the entry's
 * $FILE_NAME (asked; its index marked for the rebuild and in UNCHECKED).
 * 0 when made, 1 declined, -1 when it does not apply or failed. */
int ntfs_recreate_dir(struct ntfs_check *c, uint64_t parent,
		      const struct ntfs_ie_view *ie, const char *name8,
		      uint8_t *unchecked, const char *obj);
/* pass3_orphans.c: reconnect files in no directory to /lost+found
 * (asked one by one; directories to rebuild are marked). */
void ntfs_reconnect_orphans(struct ntfs_check *c, const uint64_t *orphans,
			    size_t n);
/* /lost+found's record number (found, or made on first use; its
 * sequence number in *SEQ), or -1 with WHY. */
int64_t ntfs_lost_found(struct ntfs_check *c, uint16_t *seq, char *why);
/* File R (its base record) keeps one name, "#R" in /lost+found; the
 * directories that held its other names are marked for rebuild.  0, or -1
 * with WHY. */
int ntfs_move_to_lost_found(struct ntfs_check *c, uint64_t r, char *why);
/* A record free on disk and in c->record_used (read into BUF), with the
 * sequence number it takes in *SEQ; c->vol.mft_records if none. */
uint64_t ntfs_free_record(struct ntfs_check *c, uint8_t *buf, uint16_t *seq);
/* pass3_lostnames.c: file R (an attribute list) lost $FILE_NAMEs with an
 * unusable extension record (c->names_lost); index entry IE still holds
 * one: it is given back, into the base record or an extension record of
 * the file with room, else a new one; the list and the link count
 * follow.  *REKEY: the name differs from the key (half of a Win32/DOS
 * pair made a name of its own, a unit mended), the index must be
 * rebuilt.  0, or -1 with WHY. */
int ntfs_name_back_from_entry(struct ntfs_check *c, uint64_t r,
			      const struct ntfs_ie_view *ie, bool *rekey, char *why);
/* Whether file R lost a $FILE_NAME so that an index entry may give one
 * back; counted off when so (no more than were lost come back). */
bool ntfs_take_lost_name(struct ntfs_check *c, uint64_t r);
/* File R has no $FILE_NAME left; its entry IE in directory DIR still
 * holds a copy: give it back to the file (the index is marked for the
 * rebuild).  0, or -1 with WHY. */
int ntfs_name_from_entry(struct ntfs_check *c, uint64_t r, uint64_t dir,
			 const struct ntfs_ie_view *ie, char *why);
/* pass3_strays.c: does PARENT (a $FILE_NAME's parent reference of file
 * RECNO) name nothing a name can live in: a record past the MFT or not in
 * use, no directory, the file itself? */
bool ntfs_parent_is_stray(const struct ntfs_check *c, uint64_t recno,
			  uint64_t parent);
/* The name of value FN (LEN bytes) of file RECNO is given a parent back
 * (done, or declined under -n): remembered, 0 or -ENOMEM.  Is it (any
 * name of RECNO when FN is NULL)?  The list freed. */
int ntfs_name_given_add(struct ntfs_check *c, uint64_t recno,
			const uint8_t *fn, uint32_t len);
bool ntfs_name_given(const struct ntfs_check *c, uint64_t recno,
		     const uint8_t *fn, uint32_t len);
/* Has RECNO a name given back that is not on disk (-n, declined)?  Its
 * directory is then taken as placed by the walk up the parents. */
bool ntfs_name_given_unwritten(const struct ntfs_check *c, uint64_t recno);
void ntfs_name_given_free(struct ntfs_check *c);
/* File R's $FILE_NAME of value OLD (LEN bytes) replaced by NEW (as long)
 * in whichever of its records holds it and written (REC: that record as
 * read, OUT: as written), *WAS_DOS whether OLD was half of a Win32/DOS
 * pair.  0, or -1 with WHY. */
int ntfs_name_rewrite(struct ntfs_check *c, uint64_t r, const uint8_t *old,
		      const uint8_t *new, uint32_t len, uint8_t *rec,
		      uint8_t *out, bool *was_dos, char *why);
/* File R's $FILE_NAME of value OLD (OLD_LEN bytes), in whichever of its
 * records holds it, given the parent reference PARENT; with POSIX, half
 * of a Win32/DOS pair becomes a POSIX name of its own (a DOS one counts
 * as a link then).  0, or -1 with WHY. */
int ntfs_name_set_parent(struct ntfs_check *c, uint64_t r, const uint8_t *old,
			 uint32_t old_len, uint64_t parent, bool posix,
			 char *why);
/* pass3_namespace.c: the name of value FN (LEN bytes) of file RECNO,
 * named by an entry of directory DIROBJ whose key says namespace ENT_NS;
 * OTHER: the file's other names in that directory by namespace.  A name
 * marked DOS that is no 8.3 name, or a namespace byte the record and the
 * entry disagree on, is set right (asked); true when the directory's
 * index must then be rebuilt. */
bool ntfs_check_namespace(struct ntfs_check *c, const char *dirobj,
			  uint64_t recno, const uint8_t *fn, uint32_t len,
			  uint8_t ent_ns, const unsigned int other[4]);
/* The N stray names V of file R, which no index holds while R has a name
 * in a directory: each reconnected to /lost+found (asked). */
void ntfs_reconnect_stray_names(struct ntfs_check *c, uint64_t r,
				const struct ntfs_name_given *v, size_t n);
/* pass3_datasize.c: file RECNO's unnamed $DATA says 0 bytes with clusters
 * allocated, its entry NAME in DIROBJ says SIZE bytes (ALLOC allocated):
 * the size taken back on agreeing evidence (1: reported, the entry is
 * right then), or a line saying the clusters stay (0: the entry follows
 * the file), -ENOMEM. */
int ntfs_data_size_from_entry(struct ntfs_check *c, uint64_t recno,
			      uint64_t size, uint64_t alloc, const char *name,
			      const char *dirobj);
/* pass3_connect.c: every directory must be reachable from the root;
 * a directory in a loop of parents is moved to /lost+found. */
int ntfs_pass3_connect(struct ntfs_check *c);
/* Mark directory D for the rebuild that carries out the fix just
 * answered: if the rebuild fails, that fix counts as failed. */
void ntfs_rebuild_promise(struct ntfs_check *c, uint64_t d);
/* Ask to mend name U (N little-endian units, holding a NUL or '/') of file
 * R, in object OBJ (PR_NAME_UNIT; the mended spelling is
 * ntfs_name_units_mend's). */
bool ntfs_ask_name_mend(struct ntfs_check *c, const char *obj, uint64_t r,
			const uint8_t *u, unsigned int n);
/* Rebuild every directory marked in c->rebuild (names collected from all
 * records); failures are reported, the fixes promised counted failed. */
int ntfs_rebuild_indexes(struct ntfs_check *c, const uint16_t *upcase);
/* Rebuild directory D's $I30 from the names that point to it (c->names
 * sorted by parent); 0, or -1 with WHY. */
int ntfs_rebuild_dir_index(struct ntfs_check *c, uint64_t d,
			   const uint16_t *upcase, char *why);
/* Replace index NAME of record D with one of TYPE and COLLATION built
 * from E (N entries, sorted); its attributes in its base record, or where
 * its $ATTRIBUTE_LIST says (pass3_rebuild_listed.c); 0, or -1 with WHY. */
struct ntfs_ib_entry;
int ntfs_write_index(struct ntfs_check *c, uint64_t d, const char *name,
		     uint32_t type, uint32_t collation,
		     const struct ntfs_ib_entry *e, long n, char *why);
/* pass3_dupnames.c: X (one of the N names V of directory D) has the name
 * KEEP keeps: rename X in its record (asked); 0 when X has its new name,
 * -1 when it keeps the old one. */
int ntfs_rename_duplicate(struct ntfs_check *c, uint64_t d,
			  const uint16_t *upcase, struct ntfs_fn_ref *const *v,
			  long n, const struct ntfs_fn_ref *keep,
			  struct ntfs_fn_ref *x);
/* Give X the name NAME (LEN units, POSIX namespace) in its record and in
 * X; 0, or -1 with WHY. */
int ntfs_rename_to(struct ntfs_check *c, struct ntfs_fn_ref *x,
		   const uint16_t *name, unsigned int len, char *why);
/* "<X's name>.fsck-<record>" (or -2, -3...) that none of the N names V
 * has; 0, or -1 when none is free. */
int ntfs_free_name(const uint16_t *upcase, struct ntfs_fn_ref *const *v,
		   long n, const struct ntfs_fn_ref *x, uint16_t *name,
		   unsigned int *len);
int ntfs_pass4_bitmaps(struct ntfs_check *c);
int ntfs_pass5_volume(struct ntfs_check *c);

#endif
