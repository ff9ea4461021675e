// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 3, stray names: a $FILE_NAME whose parent reference names nothing
 * a name can live in -- a record past the MFT or not in use, a record
 * that is no directory, or the file itself (a damaged field).  Two
 * repairs, each on the one name, wherever it lives (base or extension
 * record, edited through libntfs):
 *
 *  - its directory's index still holds it: an entry of that spelling and
 *    namespace naming this record with its sequence number, whose key's
 *    parent reference is that very directory (pass3_index.c finds it).
 *    The name takes the entry's parent back and keeps its place;
 *  - no index holds it, and the file has another name in a directory
 *    (else it is an orphan, pass3_orphans.c): the name is reconnected to
 *    /lost+found under its own spelling (a POSIX name of its own there).
 *
 * The names given back are remembered (also under -n, where nothing is
 * written) so that the later checks of the pass do not see them as
 * strays or orphans again.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/name_edit.h"
#include "ntfs_check.h"
#include "ntfs_problems.h"

#define MASK48 0xffffffffffffULL

bool ntfs_parent_is_stray(const struct ntfs_check *c, uint64_t recno,
			  uint64_t parent)
{
	uint64_t p = parent & MASK48;

	return p >= c->vol.mft_records || !cset_get(&c->record_used, p) ||
	       !rset_get(&c->record_dir, p) || p == recno;
}

int ntfs_name_given_add(struct ntfs_check *c, uint64_t recno,
			const uint8_t *fn, uint32_t len)
{
	struct ntfs_name_given *g;

	if (len > sizeof(g->fn))
		return -1;
	g = realloc(c->given, (c->ngiven + 1) * sizeof(*g));
	if (!g)
		return -ENOMEM;
	c->given = g;
	g += c->ngiven++;
	g->recno = recno;
	g->written = false;
	g->len = (uint16_t)len;
	memcpy(g->fn, fn, len);
	return 0;
}

bool ntfs_name_given(const struct ntfs_check *c, uint64_t recno,
		     const uint8_t *fn, uint32_t len)
{
	for (size_t i = 0; i < c->ngiven; i++)
		if (c->given[i].recno == recno &&
		    (!fn || (c->given[i].len == len &&
			     !memcmp(c->given[i].fn, fn, len))))
			return true;
	return false;
}

bool ntfs_name_given_unwritten(const struct ntfs_check *c, uint64_t recno)
{
	for (size_t i = 0; i < c->ngiven; i++)
		if (c->given[i].recno == recno && !c->given[i].written)
			return true;
	return false;
}

void ntfs_name_given_free(struct ntfs_check *c)
{
	free(c->given);
	c->given = NULL;
	c->ngiven = 0;
}

/* a DOS name made a POSIX one counts as a link of its own now */
static int add_link(struct ntfs_check *c, uint64_t r, uint8_t *rec, char *why)
{
	struct ntfs_mft_record m;

	if (ntfs_vol_read_record(&c->vol, r, rec) ||
	    ntfs_record_check(rec, c->vol.boot.g.mft_record_size,
			      NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		return -1;
	memcpy(&m, rec, sizeof(m));
	m.link_count = htole16((uint16_t)(le16toh(m.link_count) + 1));
	memcpy(rec, &m, sizeof(m));
	if (ntfs_check_write_record(c, r, rec)) {
		snprintf(why, NTFS_WHY, "writing the record failed");
		return -1;
	}
	return 0;
}

/* The name of value OLD (LEN bytes) of file R replaced by NEW (as long)
 * in the record that holds it (REC: that record as read, OUT: as
 * written; RS bytes each), *WAS_DOS whether OLD was half of a Win32/DOS
 * pair: 0, or -1 with WHY. */
int ntfs_name_rewrite(struct ntfs_check *c, uint64_t r, const uint8_t *old,
		      const uint8_t *new, uint32_t len, uint8_t *rec,
		      uint8_t *out, bool *was_dos, char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint64_t where;
	int h = ntfs_vol_name_holder(&c->vol, ntfs_check_in_use, c, r, old,
				     len, rec, &where);

	if (h) {
		snprintf(why, NTFS_WHY, h < 0 ? "the record is unreadable" :
			 "the name is in none of the file's records");
		return -1;
	}
	h = ntfs_rec_replace_file_name(rec, rs, out, old, len, new, len,
				       was_dos, why);
	if (h) {
		if (h > 0)
			snprintf(why, NTFS_WHY, "the name left MFT record %llu",
				 (unsigned long long)where);
		return -1;
	}
	if (ntfs_check_write_record(c, where, out)) {
		snprintf(why, NTFS_WHY, "writing MFT record %llu failed",
			 (unsigned long long)where);
		return -1;
	}
	return 0;
}

int ntfs_name_set_parent(struct ntfs_check *c, uint64_t r, const uint8_t *old,
			 uint32_t old_len, uint64_t parent, bool posix,
			 char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *rec = malloc(rs), *out = malloc(rs), fnv[sizeof(struct ntfs_file_name) + 2 * 255];
	struct ntfs_file_name fn;
	bool was_dos = false;
	int ret = -1;

	snprintf(why, NTFS_WHY, !rec || !out ? "out of memory" :
		 "its value is %u bytes", old_len);
	if (!rec || !out || old_len < sizeof(fn) || old_len > sizeof(fnv))
		goto out;
	memcpy(fnv, old, old_len);
	memcpy(&fn, fnv, sizeof(fn));
	fn.parent_directory = htole64(parent);
	/* half of a Win32/DOS pair alone in its new directory: a name of
	 * its own */
	if (posix && (fn.name_type == NTFS_NS_WIN32 || fn.name_type == NTFS_NS_DOS))
		fn.name_type = NTFS_NS_POSIX;
	memcpy(fnv, &fn, sizeof(fn));
	if (ntfs_name_rewrite(c, r, old, fnv, old_len, rec, out, &was_dos, why))
		goto out;
	if (was_dos && fn.name_type == NTFS_NS_POSIX && add_link(c, r, rec, why))
		goto out;
	ret = 0;
out:
	free(rec);
	free(out);
	return ret;
}

void ntfs_reconnect_stray_names(struct ntfs_check *c, uint64_t r,
				const struct ntfs_name_given *v, size_t n)
{
	char obj[1200], n8[1024], why[NTFS_WHY];

	for (size_t i = 0; i < n; i++) {
		struct ntfs_file_name fn;
		uint16_t u[255];
		uint16_t seq;
		int64_t lf;

		memcpy(&fn, v[i].fn, sizeof(fn));
		for (unsigned int k = 0; k < fn.name_length; k++)
			u[k] = (uint16_t)(v[i].fn[sizeof(fn) + 2 * k] |
					  v[i].fn[sizeof(fn) + 2 * k + 1] << 8);
		ntfs_name_to_utf8(u, fn.name_length, n8, sizeof(n8));
		ntfs_object_name(c, "file", r, obj, sizeof(obj));
		if (!fsf_fix_ask(&c->fix, &PR_NAME_PARENT_STRAY, obj, n8,
				 (unsigned long long)(le64toh(fn.parent_directory) & MASK48)))
			continue;
		lf = ntfs_lost_found(c, &seq, why);
		if (lf > 0 && (uint64_t)lf == r)
			snprintf(why, NTFS_WHY, "it is /lost+found");
		else if (lf > 0 &&
			 !ntfs_name_set_parent(c, r, v[i].fn, v[i].len,
					       (uint64_t)lf | (uint64_t)seq << 48,
					       true, why)) {
			ntfs_rebuild_promise(c, (uint64_t)lf);
			continue;
		}
		fsf_fix_failed(&c->fix);
		fsf_fix_ask(&c->fix, &PR_ORPHAN_FAILED, obj, why);
	}
}
