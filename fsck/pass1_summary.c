// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 1 notes, for every record it accepts, what the later passes need
 * to know so that they do not read every record again:
 *  - plain records: nothing but $STANDARD_INFORMATION without reparse,
 *    sparse, compressed or encrypted bits, resident $FILE_NAMEs, at most
 *    one $DATA (resident, unnamed, no flags), a resident $INDEX_ROOT,
 *    $SECURITY_DESCRIPTOR or $OBJECT_ID.  Pass 2 (data attributes,
 *    reparse points, extended attributes) has nothing to check in them.
 *    A record not marked plain (or changed after pass 1 by a pass that
 *    makes records) is checked as before.
 *  - the security ids of the base records, as a small set (up to
 *    SECID_MAX distinct ones): when $Secure holds every one of them,
 *    pass 3 need not look at each file's id again.
 */
#include "config.h"

#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/special.h"
#include "ntfs_check.h"

#define SECID_MAX 4096

static bool plain(const uint8_t *rec, uint32_t *secid, bool *has_si, bool *oid)
{
	const uint32_t special = NTFS_FA_REPARSE_POINT | NTFS_FA_SPARSE_FILE |
				 NTFS_FA_COMPRESSED | NTFS_FA_ENCRYPTED;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];
	unsigned int datas = 0;
	bool ok = true;
	int r;

	*has_si = false;
	*oid = false;
	ntfs_attr_cursor_init(&cur, rec);
	while ((r = ntfs_attr_next(&cur, &a, why)) == 1) {
		uint32_t t = le32toh(a->type), len, fa;
		const uint8_t *v;

		if (a->non_resident) {
			ok = false;
			continue;
		}
		switch (t) {
		case NTFS_AT_STANDARD_INFORMATION:
			v = ntfs_attr_value(a, &len);
			if (len < offsetof(struct ntfs_standard_information, file_attributes) + 4) {
				ok = false;
				break;
			}
			memcpy(&fa, v + offsetof(struct ntfs_standard_information,
						 file_attributes), 4);
			if (le32toh(fa) & special)
				ok = false;
			/* NTFS 1.2's 48 bytes hold no security id */
			if (len >= offsetof(struct ntfs_standard_information, security_id) + 4) {
				memcpy(secid, v + offsetof(struct ntfs_standard_information,
							   security_id), 4);
				*secid = le32toh(*secid);
				*has_si = true;
			}
			break;
		case NTFS_AT_DATA:
			if (a->name_length || a->flags || ++datas > 1)
				ok = false;
			break;
		case NTFS_AT_OBJECT_ID:
			*oid = true;
			break;
		case NTFS_AT_FILE_NAME: case NTFS_AT_INDEX_ROOT:
		case NTFS_AT_SECURITY_DESCRIPTOR:
			break;
		default:
			ok = false;
		}
	}
	return ok && r == 0;
}

void ntfs_note_record(struct ntfs_check *c, uint64_t recno, const uint8_t *rec)
{
	struct ntfs_mft_record m;
	uint32_t id = 0;
	bool si, oid;

	if (!c->summary_ok)
		return;
	if ((!plain(rec, &id, &si, &oid) && rset_set(&c->not_plain, recno)) ||
	    (oid && rset_set(&c->has_objid, recno))) {
		c->summary_ok = false;	/* pass 2 looks at every record */
		return;
	}
	memcpy(&m, rec, sizeof(m));
	if (m.base_mft_record || !si || !id || c->secids_overflow)
		return;
	for (size_t i = 0; i < c->nsecids; i++)
		if (c->secids[i] == id)
			return;
	if (c->nsecids == c->cap_secids) {
		size_t cap = c->cap_secids ? c->cap_secids * 2 : 16;
		uint32_t *g;

		if (cap > SECID_MAX || !(g = realloc(c->secids, cap * sizeof(*g)))) {
			c->secids_overflow = true;
			return;
		}
		c->secids = g;
		c->cap_secids = cap;
	}
	c->secids[c->nsecids++] = id;
}

bool ntfs_record_no_objid(const struct ntfs_check *c, uint64_t recno)
{
	return ntfs_record_plain(c, recno) && !rset_get(&c->has_objid, recno);
}

bool ntfs_record_plain(const struct ntfs_check *c, uint64_t recno)
{
	/* system and reserved records: always looked at (made again, and
	 * few) */
	return c->summary_ok && recno >= 24 && !rset_get(&c->not_plain, recno);
}
