// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 1B: clusters claimed by more than one attribute (cross-links), as
 * e2fsck's pass 1B-1D resolves duplicate blocks.  Pass 1 only counts the
 * clashes; this pass runs when it found any, after the extension records
 * have been judged, and works from what is really in use:
 *
 *   1. every in-use record's attribute extents are claimed again, skipping
 *      what cannot own clusters: orphan extension records, extents that the
 *      base's attribute list does not reference (a stale copy of an extent
 *      left behind in an extension record) and sparse runs (lcn < 0, which
 *      is also all of $BadClus:$Bad but its bad clusters).  The clusters
 *      claimed twice or more are the real cross-links, and the claims make
 *      the cluster map pass 4 writes to $Bitmap.
 *   2. the owners of each shared cluster, in phases (below): the
 *      first owner keeps the clusters;
 *      every other owner gets a private copy in newly allocated free space
 *      (data copied first, then its runlist re-encoded and its record
 *      written).  A runlist that no longer fits in its record is reported
 *      and left alone.  Records whose clusters have a meaning of their own
 *      ($MFT, $MFTMirr, $Boot, $BadClus) are never moved; $Bad gives up
 *      only what $MFT, $MFTMirr or $Boot hold.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/repair.h"
#include "ntfs_check.h"
#include "ntfs_problems.h"

/* who kept a stretch of shared clusters (for the messages); stretches,
 * not clusters, so that two big files laid over each other cost little */
struct keeper {
	uint64_t lcn, len, recno;
};

struct pass1b {
	struct ntfs_check *c;
	uint8_t *dup;			/* clusters claimed twice or more */
	uint8_t *claimed;		/* shared clusters given to an owner */
	uint8_t *given;			/* shared clusters a cut tail gave up */
	bool cut;			/* a tail was cut: claims made again */
	struct keeper *keepers;
	size_t nkeepers, cap_keepers;
	uint64_t next_free;		/* allocation cursor */
	uint64_t nfree;			/* free clusters left */
	uint64_t shared;		/* clusters claimed twice or more */
	uint64_t left;			/* shared clusters not resolved */
	uint8_t *base;			/* scratch record */
	uint8_t *copy;			/* one cluster of data */
	uint64_t *order;		/* in-use records, in phase order */
	size_t norder;
};

/* Does base record BASE list the extent (TYPE, NAME, LOWEST) in record
 * EXT?  Extents an attribute list does not reference are stale. */
static bool listed(struct ntfs_check *c, const uint8_t *base, uint64_t ext,
		   const struct ntfs_attr_header *a, uint64_t lowest)
{
	struct ntfs_run *runs = NULL;
	uint8_t *list = NULL;
	uint64_t len = 0, off = 0;
	long nruns;
	bool found = false;

	if (ntfs_vol_read_attr(&c->vol, base, NTFS_AT_ATTRIBUTE_LIST, &list, &len,
			       &runs, &nruns))
		return false;
	while (!found && off + 26 <= len) {
		uint32_t type;
		uint16_t elen;
		uint64_t vcn, mref;
		uint8_t nlen = list[off + 6], noff = list[off + 7];

		memcpy(&type, list + off, 4);
		memcpy(&elen, list + off + 4, 2);
		memcpy(&vcn, list + off + 8, 8);
		memcpy(&mref, list + off + 16, 8);
		elen = le16toh(elen);
		if (elen < 26 || off + elen > len)
			break;
		found = le32toh(type) == le32toh(a->type) &&
			(le64toh(mref) & 0xffffffffffffULL) == ext &&
			le64toh(vcn) == lowest && nlen == a->name_length &&
			(uint64_t)noff + 2u * nlen <= elen &&
			!memcmp(list + off + noff,
				(const uint8_t *)a + le16toh(a->name_offset),
				2u * nlen);
		off += elen;
	}
	free(list);
	free(runs);
	return found;
}

/* The file a record belongs to: its base record, or itself. */
static uint64_t file_of(uint64_t recno, const uint8_t *rec)
{
	return ntfs_record_file(rec, recno);
}

/*
 * The walks go over the records in four phases, each in record order
 * (a file's extension records may be anywhere in the MFT, and go with
 * their file): 0, the files whose place is fixed ($MFT, $MFTMirr,
 * $Boot); 1, $BadClus; 2, the other system files; 3, the user files.
 * The first owner met keeps a shared cluster: a fixed file always keeps
 * (and $Bad then lists the cluster no longer: nothing else can be done);
 * $Bad keeps a bad cluster from every file that can move (which gets a
 * copy); among the others the lowest record keeps.
 */
enum { PHASES = 4 };

static int phase_of(uint64_t file)
{
	if (file == NTFS_FILE_MFT || file == NTFS_FILE_MFTMIRR ||
	    file == NTFS_FILE_BOOT)
		return 0;
	if (file == NTFS_FILE_BADCLUS)
		return 1;
	return file < NTFS_FILE_FIRST_USER ? 2 : 3;
}

/* Can the extents of in-use record RECNO own clusters? */
static bool record_owns(struct ntfs_check *c, uint64_t recno, const uint8_t *rec)
{
	struct ntfs_mft_record m;

	if (!cset_get(&c->record_used, recno) || rare_get(c->ext_bad, recno))
		return false;
	memcpy(&m, rec, sizeof(m));
	return le16toh(m.flags) & NTFS_MFT_IN_USE;
}

/* Does attribute A of record REC (number RECNO) own its runs? */
static bool extent_owns(struct pass1b *p, uint64_t recno, const uint8_t *rec,
			const struct ntfs_attr_header *a)
{
	struct ntfs_check *c = p->c;
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct ntfs_attr_nonresident n;
	uint64_t base;
	char why[NTFS_WHY];

	memcpy(&n, a, sizeof(n));
	if (le32toh(a->type) == NTFS_AT_ATTRIBUTE_LIST)
		return ntfs_record_is_base(rec);	/* only a base has one */
	if (ntfs_record_is_base(rec)) {
		/* with an attribute list, the list says which extent is
		 * where (the base's own ones too): a copy left behind in
		 * the base when a driver moved it out owns nothing */
		return !ntfs_attr_find(rec, NTFS_AT_ATTRIBUTE_LIST) ||
		       listed(c, rec, recno, a, le64toh((uint64_t)n.lowest_vcn));
	}
	base = ntfs_record_file(rec, recno);
	return !ntfs_vol_read_record(&c->vol, base, p->base) &&
	       ntfs_record_check(p->base, rs, NTFS_MAGIC_FILE, why) == NTFS_REC_OK &&
	       listed(c, p->base, recno, a, le64toh((uint64_t)n.lowest_vcn));
}

typedef void (*extent_fn)(struct pass1b *p, uint64_t recno, uint8_t *rec,
			  const struct ntfs_attr_header *a,
			  const struct ntfs_run *runs, long n);

/*
 * The in-use records, sorted once into phase order (one read of each):
 * the walks then read each record once, in that order.
 */
static int order_records(struct pass1b *p)
{
	struct ntfs_check *c = p->c;
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint64_t nrec = c->vol.mft_records;
	uint8_t *rec = malloc(rs), *phase = malloc(nrec ? nrec : 1);
	size_t at[PHASES + 1] = { 0 };
	char why[NTFS_WHY];
	int ret = -ENOMEM;

	if (!rec || !phase)
		goto out;
	for (uint64_t i = 0; i < nrec; i++) {
		phase[i] = PHASES;		/* not walked */
		if (!cset_get(&c->record_used, i) || rare_get(c->ext_bad, i) ||
		    ntfs_vol_read_record(&c->vol, i, rec) ||
		    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK ||
		    !record_owns(c, i, rec))
			continue;
		phase[i] = (uint8_t)phase_of(file_of(i, rec));
		at[phase[i] + 1]++;
	}
	for (int k = 1; k <= PHASES; k++)
		at[k] += at[k - 1];
	p->norder = at[PHASES];
	p->order = malloc((p->norder ? p->norder : 1) * sizeof(*p->order));
	if (!p->order)
		goto out;
	for (uint64_t i = 0; i < nrec; i++)
		if (phase[i] < PHASES)
			p->order[at[phase[i]]++] = i;
	ret = 0;
out:
	free(rec);
	free(phase);
	return ret;
}

/*
 * Every owning extent of every in-use record, in phase order.  A callback
 * may rewrite the record it is given (relocation grows one extent): each
 * record is read afresh, and the cursor goes on from the changed
 * attribute's end, so the other extents' shifted offsets are followed.
 */
static int for_each_extent(struct pass1b *p, extent_fn fn)
{
	struct ntfs_check *c = p->c;
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *rec = malloc(rs);
	char why[NTFS_WHY];

	if (!rec)
		return -ENOMEM;
	for (size_t j = 0; j < p->norder; j++) {
		uint64_t i = p->order[j];
		struct ntfs_attr_cursor cur;
		const struct ntfs_attr_header *a;

		if (ntfs_vol_read_record(&c->vol, i, rec) ||
		    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK ||
		    !record_owns(c, i, rec))
			continue;
		ntfs_attr_cursor_init(&cur, rec);
		while (ntfs_attr_next(&cur, &a, why) == 1) {
			struct ntfs_run *runs;
			long n;

			if (!a->non_resident || !extent_owns(p, i, rec, a))
				continue;
			n = ntfs_attr_runs(a, c->vol.boot.g.nr_clusters, &runs, why);
			if (n > 0)
				fn(p, i, rec, a, runs, n);
			free(runs);
			/* FN may have changed the record (a relocated
			 * extent grows): go on after the attribute's new
			 * end; a no-op for callbacks that change nothing */
			{
				struct ntfs_mft_record m;
				uint32_t alen;

				memcpy(&m, rec, sizeof(m));
				memcpy(&alen, &a->length, 4);
				cur.used = le32toh(m.bytes_in_use);
				cur.off = (uint32_t)((const uint8_t *)a - rec) +
					  le32toh(alen);
			}
		}
	}
	free(rec);
	return 0;
}

static void claim(struct pass1b *p, uint64_t recno, uint8_t *rec,
		  const struct ntfs_attr_header *a, const struct ntfs_run *runs,
		  long n)
{
	(void)recno; (void)rec; (void)a;
	for (long i = 0; i < n; i++)
		for (uint64_t k = 0; runs[i].lcn >= 0 && k < runs[i].len; k++) {
			uint64_t l = (uint64_t)runs[i].lcn + k;

			if (cset_get(&p->c->cluster_used, l)) {
				if (!bit_get(p->dup, l))
					p->shared++;
				bit_set(p->dup, l);
			}
			cset_set(&p->c->cluster_used, l);
		}
}

static int keeper_cmp(const void *x, const void *y)
{
	const struct keeper *a = x, *b = y;

	return a->lcn < b->lcn ? -1 : a->lcn > b->lcn;
}

static uint64_t keeper_of(const struct pass1b *p, uint64_t lcn)
{
	size_t lo = 0, hi = p->nkeepers;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct keeper *k = &p->keepers[mid];

		if (lcn < k->lcn)
			hi = mid;
		else if (lcn >= k->lcn + k->len)
			lo = mid + 1;
		else
			return k->recno;
	}
	return UINT64_MAX;
}

/*
 * A user file's attribute, whole in its base record (VCN 0 to the end of
 * its runs, allocation exactly them, not compressed or sparse), whose
 * last clusters are shared and lie past what its data size needs: a run
 * length too big (the header grown with it) onto another file's first
 * clusters.  The file needs none of them: its last run is cut back and
 * the other owner keeps them, nothing copied.  Only the shared clusters
 * at the very end, and never all of a shared cluster's owners (the
 * first cut marks its clusters given; a second owner keeps them).
 */
static void cut_tail(struct pass1b *p, uint64_t recno, uint8_t *rec,
		     const struct ntfs_attr_header *a,
		     const struct ntfs_run *runs, long n)
{
	struct ntfs_check *c = p->c;
	uint32_t cs = c->vol.boot.g.cluster_size;
	struct ntfs_attr_nonresident nr, was;
	uint64_t clusters = 0, size, need, cut = 0, end;
	char obj[1100];
	bool yes;

	memcpy(&nr, a, sizeof(nr));
	for (long i = 0; i < n; i++)
		clusters += runs[i].len;
	size = le64toh((uint64_t)nr.data_size);
	if (file_of(recno, rec) < NTFS_FILE_FIRST_USER || !ntfs_record_is_base(rec) ||
	    ntfs_attr_find(rec, NTFS_AT_ATTRIBUTE_LIST) || nr.lowest_vcn ||
	    (le16toh(nr.h.flags) & (NTFS_ATTR_COMPRESSION_MASK | NTFS_ATTR_SPARSE |
				    NTFS_ATTR_ENCRYPTED)) ||
	    runs[n - 1].lcn < 0 ||
	    (uint64_t)le64toh((uint64_t)nr.highest_vcn) + 1 != clusters ||
	    (uint64_t)le64toh((uint64_t)nr.allocated_size) != clusters * cs ||
	    size > clusters * cs)
		return;
	need = (size + cs - 1) / cs;
	end = (uint64_t)runs[n - 1].lcn + runs[n - 1].len;
	while (cut < clusters - need && cut + 1 < runs[n - 1].len &&
	       bit_get(p->dup, end - cut - 1) && !bit_get(p->given, end - cut - 1))
		cut++;
	if (!cut)
		return;
	ntfs_object_name(c, "file", recno, obj, sizeof(obj));
	yes = fsf_fix_ask(&c->fix, &PR_CROSSLINK_TAIL, obj, le32toh(a->type),
			  (unsigned long long)cut, (unsigned long long)(end - cut),
			  (unsigned long long)(end - 1), (unsigned long long)size);
	if (!yes && c->fix.mode != FSF_MODE_NO)
		return;
	memcpy(&was, a, sizeof(was));
	if (ntfs_attr_set_run_length((uint8_t *)a, n - 1, runs[n - 1].len - cut)) {
		if (yes)
			fsf_fix_failed(&c->fix);
		return;
	}
	nr.highest_vcn = (int64_t)htole64(clusters - cut - 1);
	nr.allocated_size = (int64_t)htole64((clusters - cut) * cs);
	memcpy((uint8_t *)a, &nr, sizeof(nr));
	if (yes ? ntfs_check_write_record(c, recno, rec) :
		  ntfs_vol_assume_record(&c->vol, recno, rec)) {
		/* not written, or past the budget of assumed records */
		if (yes)
			fsf_fix_failed(&c->fix);
		memcpy((uint8_t *)a, &was, sizeof(was));
		ntfs_attr_set_run_length((uint8_t *)a, n - 1, runs[n - 1].len);
		return;
	}
	for (uint64_t k = 1; k <= cut; k++)
		bit_set(p->given, end - k);
	p->cut = true;
}

/* The first owner of each shared cluster keeps it. */
static void note_keepers(struct pass1b *p, uint64_t recno, uint8_t *rec,
			 const struct ntfs_attr_header *a,
			 const struct ntfs_run *runs, long n)
{
	(void)rec; (void)a;
	for (long i = 0; i < n; i++)
		for (uint64_t k = 0; runs[i].lcn >= 0 && k < runs[i].len; k++) {
			uint64_t l = (uint64_t)runs[i].lcn + k;
			struct keeper *last = p->nkeepers ?
					      &p->keepers[p->nkeepers - 1] : NULL;

			if (!bit_get(p->dup, l) || bit_get(p->claimed, l))
				continue;
			bit_set(p->claimed, l);
			if (last && last->recno == recno && last->lcn + last->len == l) {
				last->len++;
				continue;
			}
			if (p->nkeepers == p->cap_keepers) {
				size_t cap = p->cap_keepers ? 2 * p->cap_keepers : 256;
				struct keeper *g = realloc(p->keepers, cap * sizeof(*g));

				if (!g)
					continue;	/* named "another file" */
				p->keepers = g;
				p->cap_keepers = cap;
			}
			p->keepers[p->nkeepers].lcn = l;
			p->keepers[p->nkeepers].len = 1;
			p->keepers[p->nkeepers++].recno = recno;
		}
}

/* A free cluster, or UINT64_MAX when the volume is full. */
static uint64_t alloc_cluster(struct pass1b *p)
{
	uint64_t nr = p->c->vol.boot.g.nr_clusters;

	if (p->c->cluster_used.nomem)
		return UINT64_MAX;
	for (uint64_t tries = 0; tries < nr; tries++) {
		uint64_t l = p->next_free++;

		if (p->next_free >= nr)
			p->next_free = 0;
		if (!cset_get(&p->c->cluster_used, l)) {
			cset_set(&p->c->cluster_used, l);
			p->nfree--;
			return l;
		}
	}
	return UINT64_MAX;
}

/* Append LEN clusters from LCN (or a hole, LCN < 0) to the run list
 * being built. */
static int push(struct ntfs_run **out, long *n, long *cap, int64_t lcn,
		uint64_t len)
{
	struct ntfs_run *r = *n ? &(*out)[*n - 1] : NULL;

	if (!len)
		return 0;
	if (r && ((lcn < 0 && r->lcn < 0) ||
		  (lcn >= 0 && r->lcn >= 0 && r->lcn + (int64_t)r->len == lcn))) {
		r->len += len;
		return 0;
	}
	if (*n == *cap) {
		long c2 = *cap ? 2 * *cap : 16;
		struct ntfs_run *g = realloc(*out, (size_t)c2 * sizeof(*g));

		if (!g)
			return -1;
		*out = g;
		*cap = c2;
	}
	(*out)[*n].lcn = lcn;
	(*out)[(*n)++].len = len;
	return 0;
}

/*
 * RUNS (N of them) with the clusters at extent indexes NEED (COUNT of
 * them, ascending, none in a hole) replaced by TO (holes when TO is
 * NULL), into *OUT.  Run by run: a hole or a stretch between two needed
 * clusters goes in whole, so a sparse extent of any size costs its runs.
 */
static int remap(const struct ntfs_run *runs, long n, const uint64_t *need,
		 size_t count, const uint64_t *to, struct ntfs_run **out,
		 long *nout)
{
	long cap = 0;
	uint64_t j = 0;
	size_t q = 0;

	*out = NULL;
	*nout = 0;
	for (long i = 0; i < n; j += runs[i++].len) {
		uint64_t at = 0;	/* clusters of run I pushed */

		if (runs[i].lcn < 0) {
			if (push(out, nout, &cap, -1, runs[i].len))
				return -1;
			continue;
		}
		for (; q < count && need[q] < j + runs[i].len; q++) {
			uint64_t k = need[q] - j;

			if (push(out, nout, &cap, runs[i].lcn + (int64_t)at, k - at) ||
			    push(out, nout, &cap, to ? (int64_t)to[q] : -1, 1))
				return -1;
			at = k + 1;
		}
		if (push(out, nout, &cap, runs[i].lcn + (int64_t)at,
			 runs[i].len - at))
			return -1;
	}
	return 0;
}

/* Copy cluster FROM to cluster TO; one that cannot be read is zeros
 * when ZERO_OK (a file whose content is rebuilt anyway), an error
 * otherwise. */
static int copy_cluster(struct pass1b *p, uint64_t from, uint64_t to,
			bool zero_ok)
{
	uint32_t cs = p->c->vol.boot.g.cluster_size;
	int ret = fsf_dev_pread(&p->c->dev, p->copy, cs, from * cs);

	if (ret && zero_ok) {
		memset(p->copy, 0, cs);
		ret = 0;
	}
	if (!ret)
		ret = fsf_dev_pwrite(&p->c->dev, p->copy, cs, to * cs);
	return ret;
}

/* Files whose clusters have a meaning of their own (where the boot
 * sector says, the MFT being read, the bad clusters) */
static bool unmovable(uint64_t recno)
{
	return recno == NTFS_FILE_MFT || recno == NTFS_FILE_MFTMIRR ||
	       recno == NTFS_FILE_BOOT || recno == NTFS_FILE_BADCLUS;
}

/*
 * $BadClus:$Bad lists COUNT clusters (extent indexes NEED, the first at
 * FIRST, the last at LAST) that an earlier owner keeps: a file whose
 * place is fixed ($MFT, $MFTMirr, $Boot; the phases put every file that
 * can move after $BadClus).  A copy of a bad cluster would list a good
 * one as bad and leave the file on the bad one, so the file keeps them
 * and $Bad maps them no longer (holes again, as on a volume never
 * scanned); no data is moved.
 */
static void unlist_bad(struct pass1b *p, uint64_t recno, uint8_t *rec,
		       uint32_t aoff, const struct ntfs_run *runs, long n,
		       const uint64_t *need, size_t count, uint64_t first,
		       uint64_t last, const char *obj, const char *owner)
{
	struct ntfs_check *c = p->c;
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct ntfs_run *out = NULL;
	long nout = 0;
	uint8_t *mp = malloc(rs), *nrec = malloc(rs);
	int len = -1;

	if (!mp || !nrec || remap(runs, n, need, count, NULL, &out, &nout))
		goto failed;
	memcpy(nrec, rec, rs);
	len = ntfs_mp_encode(out, (size_t)nout, mp, rs);
	if (len < 0 || ntfs_rec_set_pairs(nrec, rs, aoff, mp, (uint32_t)len))
		goto failed;
	if (fsf_fix_ask(&c->fix, &PR_BADCLUS_SHARED, obj, (unsigned long long)count,
			(unsigned long long)first, (unsigned long long)last,
			owner)) {
		memcpy(rec, nrec, rs);
		if (ntfs_check_write_record(c, recno, rec))
			fsf_fix_failed(&c->fix);
	} else {
		p->left += count;
	}
	goto out;
failed:
	fsf_fix_ask(&c->fix, &PR_CROSSLINK_FAILED, obj,
		    "$Bad's runlist could not be rewritten");
	p->left += count;
out:
	free(out);
	free(mp);
	free(nrec);
}

/* Give extent A of record RECNO private copies of the shared clusters
 * that an earlier owner (lower record, or earlier in this one) keeps. */
static void relocate(struct pass1b *p, uint64_t recno, uint8_t *rec,
		     const struct ntfs_attr_header *a,
		     const struct ntfs_run *runs, long n)
{
	struct ntfs_check *c = p->c;
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint64_t first = UINT64_MAX, last = 0, other = UINT64_MAX, j = 0;
	uint32_t aoff = (uint32_t)((const uint8_t *)a - rec);
	uint64_t *need = NULL, *fresh = NULL;
	size_t count = 0, cap_need = 0, nfresh = 0;
	struct ntfs_run *out = NULL;
	long nout = 0;
	uint8_t *mp = NULL, *nrec = NULL;
	char obj[1100], owner[1100];
	bool zero_ok = file_of(recno, rec) == NTFS_FILE_LOGFILE ||
		       file_of(recno, rec) == NTFS_FILE_BITMAP;
	int len;

	/* which of its clusters an earlier owner keeps (by extent index;
	 * a hole, as most of $Bad, skipped whole) */
	for (long i = 0; i < n; j += runs[i++].len)
		for (uint64_t k = 0; runs[i].lcn >= 0 && k < runs[i].len; k++) {
			uint64_t l = (uint64_t)runs[i].lcn + k;

			if (!bit_get(p->dup, l))
				continue;
			if (!bit_get(p->claimed, l)) {
				bit_set(p->claimed, l);	/* ours to keep */
				continue;
			}
			if (count == cap_need) {
				size_t c2 = cap_need ? 2 * cap_need : 64;
				uint64_t *g = realloc(need, c2 * sizeof(*g));

				if (!g) {
					fsf_fix_failed(&c->fix);
					goto out;
				}
				need = g;
				cap_need = c2;
			}
			need[count++] = j + k;
			if (other == UINT64_MAX)
				other = keeper_of(p, l);
			if (first == UINT64_MAX)
				first = l;
			last = l;
		}
	if (!count)
		goto out;
	ntfs_object_name(c, "file", recno, obj, sizeof(obj));
	if (other != UINT64_MAX)
		ntfs_object_name(c, "file", other, owner, sizeof(owner));
	else
		snprintf(owner, sizeof(owner), "another file");
	if (file_of(recno, rec) == NTFS_FILE_BADCLUS) {
		unlist_bad(p, recno, rec, aoff, runs, n, need, count, first,
			   last, obj, owner);
		goto out;
	}
	if (unmovable(file_of(recno, rec))) {
		fsf_fix_ask(&c->fix, &PR_CROSSLINK_KEPT, obj, le32toh(a->type),
			    (unsigned long long)count, (unsigned long long)first,
			    (unsigned long long)last, owner);
		p->left += count;
		goto out;
	}
	/* the plan first (new clusters, new runlist in a copy of the
	 * record), so that what cannot be done is said instead of asked */
	if (count > p->nfree) {
		fsf_fix_ask(&c->fix, &PR_CROSSLINK_FAILED, obj,
			    "no free clusters are left");
		p->left += count;
		goto out;
	}
	fresh = malloc(count * sizeof(*fresh));
	mp = malloc(rs);
	nrec = malloc(rs);
	if (!fresh || !mp || !nrec) {
		fsf_fix_ask(&c->fix, &PR_CROSSLINK_FAILED, obj, "out of memory");
		goto undo;
	}
	for (nfresh = 0; nfresh < count; nfresh++) {
		fresh[nfresh] = alloc_cluster(p);
		if (fresh[nfresh] == UINT64_MAX) {
			fsf_fix_ask(&c->fix, &PR_CROSSLINK_FAILED, obj,
				    "no free clusters are left");
			goto undo;
		}
	}
	/* the new runlist: those clusters replaced by the new ones */
	if (remap(runs, n, need, count, fresh, &out, &nout)) {
		fsf_fix_ask(&c->fix, &PR_CROSSLINK_FAILED, obj, "out of memory");
		goto undo;
	}
	memcpy(nrec, rec, rs);
	len = ntfs_mp_encode(out, (size_t)nout, mp, rs);
	if (len < 0 || ntfs_rec_set_pairs(nrec, rs, aoff, mp, (uint32_t)len)) {
		fsf_fix_ask(&c->fix, &PR_CROSSLINK_FAILED, obj,
			    "its new runlist would not fit in its MFT record");
		goto undo;
	}
	if (!fsf_fix_ask(&c->fix, &PR_CROSSLINK, obj, le32toh(a->type),
			 (unsigned long long)count, (unsigned long long)first,
			 (unsigned long long)last, owner))
		goto undo;
	/* the data first, then the record that points to it; $LogFile's
	 * and $Bitmap's content is rebuilt anyway: a cluster of theirs that
	 * cannot be read (a bad one) is copied as zeros */
	j = 0;
	for (long i = 0, q = 0; i < n && (size_t)q < count; j += runs[i++].len)
		for (; (size_t)q < count && need[q] < j + runs[i].len; q++)
			if (copy_cluster(p, (uint64_t)runs[i].lcn + (need[q] - j),
					 fresh[q], zero_ok)) {
				fsf_fix_failed(&c->fix);
				goto undo;
			}
	memcpy(rec, nrec, rs);
	if (ntfs_check_write_record(c, recno, rec))
		fsf_fix_failed(&c->fix);
	goto out;
undo:
	/* give back what was allocated */
	for (size_t i = 0; i < nfresh; i++) {
		cset_clear(&c->cluster_used, fresh[i]);
		p->nfree++;
	}
	p->left += count;
out:
	free(need);
	free(nrec);
	free(fresh);
	free(out);
	free(mp);
}

int ntfs_pass1b_crosslinks(struct ntfs_check *c)
{
	uint64_t bytes = c->vol.boot.g.nr_clusters / 8 + 1;
	struct pass1b p = { .c = c };
	int ret = -ENOMEM;

	if (!c->crosslinked)
		return 0;
	p.dup = calloc(1, bytes);
	p.claimed = calloc(1, bytes);
	p.base = malloc(c->vol.boot.g.mft_record_size);
	p.copy = malloc(c->vol.boot.g.cluster_size);
	if (!p.dup || !p.claimed || !p.base || !p.copy)
		goto out;
	ret = order_records(&p);
	if (ret)
		goto out;
	/* what is really in use, claimed again from scratch */
	cset_reset(&c->cluster_used);
	ret = for_each_extent(&p, claim);
	/* a cluster the set could not take would look free to the copies */
	if (!ret && c->cluster_used.nomem)
		ret = -ENOMEM;
	if (ret || !p.shared)
		goto out;
	/* tails past their data size given up first; then the claims are
	 * made again without them */
	p.given = calloc(1, bytes);
	ret = p.given ? for_each_extent(&p, cut_tail) : -ENOMEM;
	if (!ret && p.cut) {
		cset_reset(&c->cluster_used);
		memset(p.dup, 0, bytes);
		p.shared = 0;
		ret = for_each_extent(&p, claim);
		if (!ret && c->cluster_used.nomem)
			ret = -ENOMEM;
	}
	if (ret || !p.shared)
		goto out;
	ret = for_each_extent(&p, note_keepers);
	if (ret)
		goto out;
	if (p.nkeepers)
		qsort(p.keepers, p.nkeepers, sizeof(*p.keepers), keeper_cmp);
	for (uint64_t l = 0; l < c->vol.boot.g.nr_clusters; l++)
		p.nfree += !cset_get(&c->cluster_used, l);
	/* the same walk again: the first owner keeps, the others copy */
	memset(p.claimed, 0, bytes);
	ret = for_each_extent(&p, relocate);
out:
	c->crosslinked = p.left;
	free(p.dup);
	free(p.claimed);
	free(p.given);
	free(p.keepers);
	free(p.base);
	free(p.copy);
	free(p.order);
	return ret;
}
