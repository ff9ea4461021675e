// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 3, orphans: a file in use whose names are in no index and whose
 * names' parents are no directories (the directory was lost, or reused)
 * is reconnected to /lost+found, made when missing, under the name
 * "#<record number>" (unique, so two orphans never collide); its other
 * names go.  The indexes of /lost+found (and of the root, when
 * /lost+found is new) are then rebuilt with the rest.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ntfs/dir_record.h"
#include "ntfs/name_edit.h"
#include "ntfs/repair.h"
#include "ntfs_check.h"
#include "ntfs_problems.h"

#define MASK48 0xffffffffffffULL

/* /lost+found's record number, 0 when there is none, -1 when the name is
 * taken by something that is not a directory (its record in *TAKEN) */
static int64_t find_lost_found(struct ntfs_check *c, uint8_t *rec,
			       uint64_t *taken)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	char why[NTFS_WHY];

	for (uint64_t r = NTFS_FILE_FIRST_USER; r < c->vol.mft_records; r++) {
		struct ntfs_attr_cursor cur;
		const struct ntfs_attr_header *a;

		if (!cset_get(&c->record_used, r) || ntfs_vol_read_record(&c->vol, r, rec) ||
		    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
			continue;
		ntfs_attr_cursor_init(&cur, rec);
		while (ntfs_attr_next(&cur, &a, why) == 1) {
			uint32_t len;
			const uint8_t *v;

			if (le32toh(a->type) != NTFS_AT_FILE_NAME || a->non_resident)
				continue;
			v = ntfs_attr_value(a, &len);
			if (len >= sizeof(struct ntfs_file_name) && ntfs_is_lost_found(v, len)) {
				*taken = r;
				return rset_get(&c->record_dir, r) ? (int64_t)r : -1;
			}
		}
	}
	return 0;
}

uint64_t ntfs_free_record(struct ntfs_check *c, uint8_t *buf, uint16_t *seq)
{
	struct ntfs_mft_record m;
	uint64_t r;

	/* free on disk as well as in our view; 16..23 stay reserved */
	for (r = 24; r < c->vol.mft_records; r++) {
		if (cset_get(&c->record_used, r) || ntfs_vol_read_record(&c->vol, r, buf))
			continue;
		memcpy(&m, buf, sizeof(m));
		*seq = 1;
		if (le32toh(m.h.magic) != NTFS_MAGIC_FILE)
			break;
		if (!(le16toh(m.flags) & NTFS_MFT_IN_USE)) {
			*seq = (uint16_t)(le16toh(m.sequence_number) + 1);
			*seq = *seq ? *seq : 1;
			break;
		}
	}
	return r;
}

/* Make /lost+found in a free record; returns its number or -1 (WHY). */
static int64_t make_lost_found(struct ntfs_check *c, uint8_t *rec, uint8_t *buf,
			       char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct ntfs_standard_information si;
	uint8_t fnv[NTFS_LOST_FOUND_FN];
	uint16_t seq = 1;
	uint64_t r;
	char w[NTFS_WHY];
	int err;

	/* the root's $STANDARD_INFORMATION (owner, security id) */
	if (ntfs_vol_read_record(&c->vol, NTFS_FILE_ROOT, rec) ||
	    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, w) != NTFS_REC_OK ||
	    ntfs_lost_found_values(rec, ntfs_time((int64_t)time(NULL)), &si, fnv)) {
		snprintf(why, NTFS_WHY, "the root directory's record is unusable");
		return -1;
	}
	r = ntfs_free_record(c, buf, &seq);
	if (r >= c->vol.mft_records) {
		snprintf(why, NTFS_WHY, "the MFT has no free record for /lost+found");
		return -1;
	}
	err = ntfs_dir_record_build(&c->vol.boot.g, buf, (uint32_t)r, seq, &si,
				    fnv, sizeof(fnv));
	if (err) {
		snprintf(why, NTFS_WHY, err == -ENOMEM ? "out of memory" :
			 "the new record overflows");
		return -1;
	}
	if (ntfs_check_write_record(c, r, buf)) {
		snprintf(why, NTFS_WHY, "writing the new record failed");
		return -1;
	}
	cset_set(&c->record_used, r);
	if (rset_set(&c->record_dir, r)) {
		snprintf(why, NTFS_WHY, "out of memory");
		return -1;
	}
	ntfs_rebuild_promise(c, NTFS_FILE_ROOT);
	return (int64_t)r;
}

/* File R, no directory, is called /lost+found: it is renamed
 * "lost+found.fsck-R" (asked), so that the directory can be made. */
static bool rename_squatter(struct ntfs_check *c, uint64_t r, uint8_t *rec)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	struct ntfs_fn_ref x = { .recno = r, .holder = r, .parent = NTFS_FILE_ROOT };
	struct ntfs_fn_ref *none = NULL;
	uint16_t name[255];
	unsigned int len;
	char new8[1024], obj[1200], why[NTFS_WHY];
	bool ok = false;

	if (ntfs_vol_read_record(&c->vol, r, rec) ||
	    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		return false;
	ntfs_attr_cursor_init(&cur, rec);
	while (!x.name && ntfs_attr_next(&cur, &a, why) == 1) {
		uint32_t vlen;
		const uint8_t *v;

		if (le32toh(a->type) != NTFS_AT_FILE_NAME || a->non_resident)
			continue;
		v = ntfs_attr_value(a, &vlen);
		if (vlen < sizeof(struct ntfs_file_name) || !ntfs_is_lost_found(v, vlen))
			continue;
		x.name_len = NTFS_LOST_FOUND_LEN;
		x.fn_len = (uint16_t)(sizeof(struct ntfs_file_name) + 2u * x.name_len);
		x.name = malloc(2u * x.name_len + x.fn_len);
		if (!x.name)
			return false;
		x.fn = (uint8_t *)(x.name + x.name_len);
		memcpy(x.fn, v, x.fn_len);
		for (unsigned int i = 0; i < x.name_len; i++)
			x.name[i] = (uint8_t)NTFS_LOST_FOUND[i];
	}
	if (!x.name)
		return false;
	ntfs_object_name(c, "file", r, obj, sizeof(obj));
	if (!ntfs_free_name(NULL, &none, 0, &x, name, &len)) {
		ntfs_name_to_utf8(name, len, new8, sizeof(new8));
		if (fsf_fix_ask(&c->fix, &PR_LOST_FOUND_TAKEN, obj, new8)) {
			ok = !ntfs_rename_to(c, &x, name, len, why);
			if (!ok)
				fsf_fix_failed(&c->fix);
			else
				ntfs_rebuild_promise(c, NTFS_FILE_ROOT);
		}
	}
	free(x.name);
	return ok;
}

int64_t ntfs_lost_found(struct ntfs_check *c, uint16_t *seq, char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *rec = malloc(rs), *buf = malloc(rs);
	struct ntfs_mft_record m;

	if (!rec || !buf) {
		free(rec);
		free(buf);
		snprintf(why, NTFS_WHY, "out of memory");
		return -1;
	}
	if (!c->lf_known) {
		uint64_t taken = 0;

		c->lf_known = true;
		c->lf = find_lost_found(c, rec, &taken);
		if (c->lf < 0 && rename_squatter(c, taken, rec))
			c->lf = 0;
		if (c->lf < 0)
			snprintf(why, NTFS_WHY, "/lost+found is not a directory");
		else if (c->lf == 0)
			c->lf = make_lost_found(c, rec, buf, why);
		if (c->lf > 0 && !ntfs_vol_read_record(&c->vol, (uint64_t)c->lf, rec)) {
			memcpy(&m, rec, sizeof(m));
			c->lf_seq = le16toh(m.sequence_number);
		} else if (c->lf > 0) {
			snprintf(why, NTFS_WHY, "/lost+found is unreadable");
			c->lf = -1;
		}
		if (c->lf <= 0)
			c->lf = -1;
	} else if (c->lf < 0) {
		snprintf(why, NTFS_WHY, "/lost+found is unusable");
	}
	free(rec);
	free(buf);
	*seq = c->lf_seq;
	return c->lf;
}

/* The directory of a name file C's record no longer has is rebuilt. */
static void mark_parent(void *arg, const struct ntfs_file_name *fn)
{
	struct ntfs_check *c = arg;
	uint64_t p = le64toh(fn->parent_directory) & MASK48;

	if (p < c->vol.mft_records && rset_get(&c->record_dir, p) &&
	    cset_get(&c->record_used, p))
		ntfs_rebuild_promise(c, p);
}

/* File O (its record read into REC) keeps one name, the $FILE_NAME value
 * FNV of FNLEN bytes, written through OUT; the directories of its old
 * names are marked for rebuild.  0 or -1 (WHY). */
static int set_name(struct ntfs_check *c, uint64_t o, const uint8_t *rec,
		    uint8_t *out, const uint8_t *fnv, uint32_t fnlen, char *why)
{
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;

	if (ntfs_rec_set_only_name(rec, c->vol.boot.g.mft_record_size, out, fnv,
				   fnlen, why))
		return -1;
	if (ntfs_check_write_record(c, o, out)) {
		snprintf(why, NTFS_WHY, "writing the record failed");
		return -1;
	}
	/* the old names' entries are stale now */
	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1) {
		struct ntfs_file_name old;

		if (ntfs_file_name_of(a, &old))
			mark_parent(c, &old);
	}
	return 0;
}

/* The $FILE_NAMEs of the extension records of file O (base record
 * read into REC, clobbered) are removed, their directories marked for
 * rebuild; a record left with no attribute is freed.  0 or -1 (WHY). */
static int drop_extension_names(struct ntfs_check *c, uint64_t o, uint8_t *rec,
				char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct ntfs_run *runs = NULL;
	uint8_t *list = NULL;
	uint64_t len = 0, off = 0, e, *done = NULL;
	size_t ndone = 0;
	uint32_t type;
	long nruns;
	int ret = 0;

	if (ntfs_vol_read_record(&c->vol, o, rec) ||
	    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK ||
	    ntfs_vol_read_attr(&c->vol, rec, NTFS_AT_ATTRIBUTE_LIST, &list, &len,
			       &runs, &nruns)) {
		snprintf(why, NTFS_WHY, "its attribute list is unreadable");
		free(list);
		free(runs);
		return -1;
	}
	while (!ret && ntfs_list_next(list, len, &off, &type, &e)) {
		struct ntfs_attr_cursor cur;
		const struct ntfs_attr_header *a;
		struct ntfs_mft_record m;
		bool seen = false;
		uint64_t *g;

		if (type != NTFS_AT_FILE_NAME || e == o || e >= c->vol.mft_records ||
		    !cset_get(&c->record_used, e))
			continue;
		for (size_t i = 0; i < ndone && !seen; i++)
			seen = done[i] == e;
		if (seen || !(g = realloc(done, (ndone + 1) * sizeof(*g))))
			continue;
		done = g;
		done[ndone++] = e;
		if (ntfs_vol_read_record(&c->vol, e, rec) ||
		    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
			continue;
		memcpy(&m, rec, sizeof(m));
		if ((le64toh(m.base_mft_record) & MASK48) != o)
			continue;
		if (!ntfs_rec_drop_names(rec, rs, mark_parent, c))
			continue;
		ntfs_attr_cursor_init(&cur, rec);
		if (ntfs_attr_next(&cur, &a, why) == 0) {
			/* nothing left in it */
			ntfs_clear_record(rec, rs, e);
			cset_clear(&c->record_used, e);
		}
		if (ntfs_check_write_record(c, e, rec)) {
			snprintf(why, NTFS_WHY, "writing MFT record %llu failed",
				 (unsigned long long)e);
			ret = -1;
		}
	}
	free(done);
	free(list);
	free(runs);
	return ret;
}

/* File O keeps one name, "#O" in LF; the directories of its old names
 * are marked for rebuild.  0 or -1 (WHY). */
static int reconnect(struct ntfs_check *c, uint64_t o, uint64_t lf,
		     uint16_t lf_seq, uint8_t *rec, uint8_t *out, char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	struct ntfs_file_name fn;
	struct ntfs_mft_record m;
	uint8_t fnv[sizeof(fn) + 2 * 24];
	bool have = false, list = false;
	char name[24];
	int n;

	if (ntfs_vol_read_record(&c->vol, o, rec) ||
	    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		return -1;
	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1) {
		uint32_t len;
		const uint8_t *v;

		if (le32toh(a->type) == NTFS_AT_ATTRIBUTE_LIST)
			list = true;
		if (le32toh(a->type) != NTFS_AT_FILE_NAME || a->non_resident)
			continue;
		v = ntfs_attr_value(a, &len);
		if (len < sizeof(fn))
			continue;
		if (!have || v[offsetof(struct ntfs_file_name, name_type)] != NTFS_NS_DOS) {
			memcpy(&fn, v, sizeof(fn));
			have = true;
		}
	}
	if (!have) {
		memset(&fn, 0, sizeof(fn));
		memcpy(&m, rec, sizeof(m));
		if (le16toh(m.flags) & NTFS_MFT_IS_DIRECTORY)
			fn.file_attributes = htole32(NTFS_FA_DUP_FILE_NAME_INDEX_PRESENT);
	}
	n = snprintf(name, sizeof(name), "#%llu", (unsigned long long)o);
	fn.parent_directory = htole64(lf | (uint64_t)lf_seq << 48);
	fn.name_length = (uint8_t)n;
	fn.name_type = NTFS_NS_POSIX;
	memcpy(fnv, &fn, sizeof(fn));
	for (int i = 0; i < n; i++) {
		fnv[sizeof(fn) + 2 * i] = (uint8_t)name[i];
		fnv[sizeof(fn) + 2 * i + 1] = 0;
	}
	if (set_name(c, o, rec, out, fnv, (uint32_t)(sizeof(fn) + 2u * n), why))
		return -1;
	ntfs_rebuild_promise(c, lf);
	/* names in extension records go too, and the list follows */
	if (list && (drop_extension_names(c, o, rec, why) ||
		     ntfs_rewrite_attr_list(c, o, UINT64_MAX, why)))
		return -1;
	return 0;
}

int ntfs_name_from_entry(struct ntfs_check *c, uint64_t r, uint64_t dir,
			 const struct ntfs_ie_view *ie, char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *rec = malloc(rs), *out = malloc(rs), *fnv = NULL;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	struct ntfs_file_name fn;
	uint32_t len = (uint32_t)sizeof(fn) + 2u * ie->name_len;
	int ret = -1;

	snprintf(why, NTFS_WHY, "out of memory");
	if (!rec || !out || ie->key_len < len || !(fnv = malloc(len)))
		goto out;
	if (ntfs_vol_read_record(&c->vol, r, rec) ||
	    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		goto out;
	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1)
		if (le32toh(a->type) == NTFS_AT_ATTRIBUTE_LIST) {
			snprintf(why, NTFS_WHY, "its attributes continue in other records");
			goto out;
		}
	/* the key is the file's $FILE_NAME as it was; a name of its own now
	 * (not half of a Win32/DOS pair), in this directory */
	memcpy(fnv, ie->key, len);
	memcpy(&fn, fnv, sizeof(fn));
	fn.name_type = NTFS_NS_POSIX;
	memcpy(fnv, &fn, sizeof(fn));
	/* a NUL or '/' in the key is no name to give back: mended */
	ntfs_name_units_mend(fnv + sizeof(fn), ie->name_len);
	ret = set_name(c, r, rec, out, fnv, len, why);
	if (!ret)
		ntfs_rebuild_promise(c, dir);
out:
	free(rec);
	free(out);
	free(fnv);
	return ret;
}

int ntfs_move_to_lost_found(struct ntfs_check *c, uint64_t r, char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *rec = malloc(rs), *buf = malloc(rs);
	uint16_t seq;
	int64_t lf = ntfs_lost_found(c, &seq, why);
	int ret = -1;

	if (!rec || !buf)
		snprintf(why, NTFS_WHY, "out of memory");
	else if (lf > 0 && (uint64_t)lf == r)
		snprintf(why, NTFS_WHY, "it is /lost+found");
	else if (lf > 0)
		ret = reconnect(c, r, (uint64_t)lf, seq, rec, buf, why);
	free(rec);
	free(buf);
	return ret;
}

void ntfs_reconnect_orphans(struct ntfs_check *c, const uint64_t *orphans,
			    size_t n)
{
	char why[NTFS_WHY], obj[1200];

	for (size_t i = 0; i < n; i++) {
		ntfs_object_name(c, "file", orphans[i], obj, sizeof(obj));
		if (!fsf_fix_ask(&c->fix, &PR_ORPHAN, obj))
			continue;
		if (ntfs_move_to_lost_found(c, orphans[i], why)) {
			fsf_fix_failed(&c->fix);
			fsf_fix_ask(&c->fix, &PR_ORPHAN_FAILED, obj, why);
		}
	}
}
