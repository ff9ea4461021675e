// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 3, $Extend/$UsnJrnl, the change journal (found by name in
 * $Extend's index, after the $I30 pass checked it): its $Max stream must
 * be resident, 32 bytes, with a nonzero maximum size and a lowest valid
 * USN 8-aligned within $J; its $J stream non-resident; and the records
 * of $J's last NTFS_USN_TAIL bytes (never the whole sparse stream; from
 * the lowest valid USN or the first readable page after a hole) must be
 * well-formed (libntfs/usnjrnl.c).  Repairs touch $Max only: a damaged
 * one is rewritten with a new journal id and the lowest valid USN at
 * $J's end, and a damaged tail moves the lowest valid USN past it; the
 * journal's history is then gone, which its readers (backup, indexing)
 * handle by re-scanning the volume.  A journal without $Max or $J, or
 * whose $Max cannot be rewritten, is reported and left as it is (exit 4).
 * A journal with an attribute list (a $J of many runs, as Windows leaves
 * one on a fragmented volume) is judged the same way through it: $Max in
 * the record the list names (rewritten there), $J's extents joined in VCN
 * order from the records in use that point back at it.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ntfs/attrlist.h"
#include "ntfs/repair.h"
#include "ntfs/usnjrnl.h"
#include "ntfs_check.h"
#include "ntfs_problems.h"

#define OBJ_LEN 64

/* offset of the $DATA attribute called NAME in REC (0: none); *LIST: the
 * record has an attribute list */
static uint32_t find_stream(const uint8_t *rec, const char *name, bool *list)
{
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];
	size_t n = strlen(name);

	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1) {
		const uint8_t *nm = (const uint8_t *)a + le16toh(a->name_offset);
		bool same = a->name_length == n;

		if (le32toh(a->type) == NTFS_AT_ATTRIBUTE_LIST)
			*list = true;
		if (le32toh(a->type) != NTFS_AT_DATA)
			continue;
		for (size_t k = 0; same && k < n; k++)
			same = nm[2 * k] == (uint8_t)name[k] && !nm[2 * k + 1];
		if (same)
			return (uint32_t)((const uint8_t *)a - rec);
	}
	return 0;
}

/* the last records of $J (RUNS, SIZE bytes) from the lowest valid USN
 * LOW: 0 sound, 1 damaged at *BAD (WHY), <0 no memory */
static int scan_tail(struct ntfs_check *c, const struct ntfs_run *runs, long n,
		     uint64_t size, uint64_t low, uint64_t *bad, char *why)
{
	uint64_t start = size > NTFS_USN_TAIL ? size - NTFS_USN_TAIL : 0, first, count;
	uint8_t *buf;
	int ret = 0;

	start -= start % NTFS_USN_PAGE;
	if (start < low)
		start = low;
	if (start >= size)
		return 0;
	buf = malloc(size - start);
	if (!buf)
		return -ENOMEM;
	/* a page that does not read (a hole: deallocated) starts the scan
	 * after it */
	first = start;
	for (uint64_t at = start; at < size;) {
		uint64_t end = at - at % NTFS_USN_PAGE + NTFS_USN_PAGE;

		if (end > size)
			end = size;
		if (ntfs_vol_runs_pread(&c->vol, runs, n, at, end - at, buf + (at - start)))
			first = end;
		at = end;
	}
	if (first < size && ntfs_usn_scan(buf + (first - start), size - first, first,
					  &count, bad, why))
		ret = 1;
	free(buf);
	return ret;
}

/* now as an NTFS time (100 ns since 1601), Windows' choice of journal id */
static uint64_t nt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)ts.tv_sec + 11644473600ULL) * 10000000ULL +
	       (uint64_t)ts.tv_nsec / 100;
}

/* $Max of RECNO (in REC, at OFF) rewritten as M: 0 or -1 */
static int write_max(struct ntfs_check *c, uint64_t recno, uint8_t *rec, uint32_t off,
		     const struct ntfs_usn_max *m)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	const struct ntfs_attr_resident *r;

	if (ntfs_rec_resize_resident(rec, rs, off, NTFS_USN_MAX_LEN))
		return -1;
	r = (const struct ntfs_attr_resident *)(const void *)(rec + off);
	ntfs_usn_max_encode(m, rec + off + le16toh(r->value_offset));
	return ntfs_check_write_record(c, recno, rec);
}

/* Where the journal's streams are: $Max in record MREC (read into MBUF, at
 * MOFF; 0: none), $J's first extent in JBUF at JOFF (0: none). */
struct streams {
	uint64_t mrec;
	uint8_t *mbuf, *jbuf;
	uint32_t moff, joff;
	bool listed;
};

/* The streams of journal D (base record REC, with an attribute list) at
 * the records its list names: 0, -1 (WHY: unusable), -ENOMEM. */
static int listed_streams(struct ntfs_check *c, uint64_t d, uint8_t *rec,
			  struct streams *s, char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size, off = 0;
	struct ntfs_run *lruns = NULL;
	struct ntfs_al_entry e;
	uint8_t *list = NULL;
	uint64_t len = 0, mx = UINT64_MAX, jx = UINT64_MAX;
	long nl;
	int r, ret = -1;

	if (ntfs_vol_read_attr(&c->vol, rec, NTFS_AT_ATTRIBUTE_LIST, &list, &len,
			       &lruns, &nl) || len > UINT32_MAX) {
		snprintf(why, NTFS_WHY, "its attribute list is unreadable");
		goto out;
	}
	while ((r = ntfs_al_next(list, (uint32_t)len, &off, &e, why)) == 1) {
		if (e.type != NTFS_AT_DATA || e.lowest_vcn)
			continue;
		if (ntfs_al_entry_named(&e, "$Max"))
			mx = e.mref;
		else if (ntfs_al_entry_named(&e, "$J"))
			jx = e.mref;
	}
	if (r < 0)
		goto out;
	ret = 0;
	s->mrec = d;
	for (int k = 0; k < 2; k++) {
		uint64_t ref = k ? jx : mx, x = ref & 0xffffffffffffULL;
		uint8_t **buf = k ? &s->jbuf : &s->mbuf;

		if (ref == UINT64_MAX)
			continue;	/* none: as in a record without a list */
		if (x == d) {
			*buf = rec;
		} else if (!k && ref == jx && s->jbuf && s->jbuf != rec) {
			*buf = s->jbuf;
		} else if (k && ref == mx && s->mbuf && s->mbuf != rec) {
			*buf = s->mbuf;
		} else {
			if (!(*buf = malloc(rs))) {
				ret = -ENOMEM;
				goto out;
			}
			if (ntfs_read_listed(c, d, ref, *buf, why)) {
				ret = -1;
				goto out;
			}
		}
		if (!k)
			s->mrec = x;
	}
	if (s->mbuf)
		s->moff = find_stream(s->mbuf, "$Max", &s->listed);
	if (s->jbuf)
		s->joff = find_stream(s->jbuf, "$J", &s->listed);
	if ((s->mbuf && !s->moff) || (s->jbuf && !s->joff)) {
		snprintf(why, NTFS_WHY, "its streams are not where its attribute list says");
		ret = -1;
	}
	s->listed = true;
out:
	free(list);
	free(lruns);
	return ret;
}

static void streams_free(struct streams *s, const uint8_t *rec)
{
	if (s->jbuf != rec && s->jbuf != s->mbuf)
		free(s->jbuf);
	if (s->mbuf != rec)
		free(s->mbuf);
}

static int check_journal(struct ntfs_check *c, uint64_t recno, uint8_t *rec)
{
	char obj[OBJ_LEN], why[NTFS_WHY];
	struct streams s = { .mrec = recno };
	uint32_t moff, joff;
	const struct ntfs_attr_header *ma, *ja;
	struct ntfs_usn_max m;
	struct ntfs_sizes sz;
	struct ntfs_run *runs = NULL;
	uint64_t bad, jsize;
	uint32_t mlen;
	const uint8_t *mval;
	long n;
	int ret = 0, r;

	snprintf(obj, sizeof(obj), "$Extend/$UsnJrnl (MFT record %llu)",
		 (unsigned long long)recno);
	moff = find_stream(rec, "$Max", &s.listed);
	joff = find_stream(rec, "$J", &s.listed);
	if (s.listed) {
		/* its streams where its list says */
		r = listed_streams(c, recno, rec, &s, why);
		if (r) {
			streams_free(&s, rec);
			if (r == -ENOMEM)
				return r;
			/* a list pass 1 found wrong and left: that problem
			 * stands for this one (-n then counts what -a fixes) */
			fsf_fix_ask(&c->fix, c->list_left &&
					    rare_get(c->list_left, recno) ?
				    &PR_USN_LIST_LEFT : &PR_USN_UNUSABLE, obj, why);
			return 0;
		}
		moff = s.moff;
		joff = s.joff;
	} else {
		s.mbuf = s.jbuf = rec;
	}
	if (!moff || !joff) {
		fsf_fix_ask(&c->fix, &PR_USN_UNUSABLE, obj,
			    !moff ? "it has no $Max stream" : "it has no $J stream");
		goto out;
	}
	ma = (const struct ntfs_attr_header *)(const void *)(s.mbuf + moff);
	ja = (const struct ntfs_attr_header *)(const void *)(s.jbuf + joff);
	if (ma->non_resident || !ja->non_resident) {
		fsf_fix_ask(&c->fix, &PR_USN_UNUSABLE, obj, ma->non_resident ?
			    "its $Max stream is not resident" :
			    "its $J stream is resident");
		goto out;
	}
	ntfs_attr_sizes((const uint8_t *)ja, &sz);
	if (s.listed) {
		/* every extent of it, joined in VCN order */
		size_t nx;
		uint64_t size;

		n = ntfs_attr_extents_runs(c, recno, NTFS_AT_DATA, "$J", &runs, &size, &nx, why);
		if (n == -ENOMEM) {
			ret = -ENOMEM;
			runs = NULL;
			goto out;
		}
	} else {
		n = ntfs_attr_runs(ja, c->vol.boot.g.nr_clusters, &runs, why);
	}
	if (n < 0 || (s.listed && !n) || sz.data > sz.alloc || sz.init > sz.data ||
	    le64toh(((const struct ntfs_attr_nonresident *)(const void *)ja)->lowest_vcn)) {
		if (n < 0)
			runs = NULL;
		fsf_fix_ask(&c->fix, &PR_USN_UNUSABLE, obj, n < 0 ? why : !n ?
			    "its $J stream has no runs" :
			    "its $J stream's sizes are inconsistent");
		goto out;
	}
	/* its runs (in the base record, or in every extent) cover its
	 * allocation */
	{
		uint64_t clusters = 0;
		const struct ntfs_attr_nonresident *nr =
			(const struct ntfs_attr_nonresident *)(const void *)ja;

		for (long i = 0; i < n; i++)
			clusters += runs[i].len;
		if ((!s.listed && (uint64_t)le64toh(nr->highest_vcn) + 1 != clusters) ||
		    clusters * c->vol.boot.g.cluster_size != sz.alloc) {
			fsf_fix_ask(&c->fix, &PR_USN_UNUSABLE, obj,
				    "its $J stream's runs do not cover its allocated size");
			goto out;
		}
	}
	jsize = sz.data;
	mval = ntfs_attr_value(ma, &mlen);
	if (ntfs_usn_max_parse(mval, mlen, jsize, &m, why)) {
		if (mlen != NTFS_USN_MAX_LEN)
			memset(&m, 0, sizeof(m));
		ntfs_usn_max_restamp(&m, jsize, nt_now());
		if (fsf_fix_ask(&c->fix, &PR_USN_MAX_BAD, obj, why,
				(unsigned long long)m.lowest_valid) &&
		    write_max(c, s.mrec, s.mbuf, moff, &m))
			fsf_fix_failed(&c->fix);
		goto out;
	}
	r = scan_tail(c, runs, n, jsize, m.lowest_valid, &bad, why);
	if (r < 0) {
		ret = r;
		goto out;
	}
	if (r) {
		/* the same journal, its records up to $J's end no longer valid */
		m.lowest_valid = (jsize + 7) & ~7ULL;
		if (fsf_fix_ask(&c->fix, &PR_USN_TAIL_BAD, obj, (unsigned long long)bad,
				why, (unsigned long long)m.lowest_valid) &&
		    write_max(c, s.mrec, s.mbuf, moff, &m))
			fsf_fix_failed(&c->fix);
	}
out:
	free(runs);
	if (s.listed)
		streams_free(&s, rec);
	return ret;
}

int ntfs_pass3_usnjrnl(struct ntfs_check *c)
{
	static const char *const name[] = { "$UsnJrnl" };
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *rec;
	uint64_t r;
	char why[NTFS_WHY];
	int ret = ntfs_extend_files(c, name, 1, &r);

	if (ret || r == UINT64_MAX)
		return ret;
	rec = malloc(rs);
	if (!rec)
		return -ENOMEM;
	if (!ntfs_vol_read_record(&c->vol, r, rec) &&
	    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) == NTFS_REC_OK)
		ret = check_journal(c, r, rec);
	free(rec);
	return ret;
}
