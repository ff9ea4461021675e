// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 3, names lost with a record: a file with an attribute list whose
 * list named $FILE_NAMEs in an extension record pass 1 found unusable
 * (zeroed, BAAD: c->names_lost) lost those names, yet the index entries
 * naming them remain, each key a full copy of a $FILE_NAME.  An entry
 * naming the file with its sequence number, in the directory its key
 * names, that is not already a name of the file, gives its name back:
 * into the base record when it has room, else into an extension record
 * of the file with room, else into a new extension record; the attribute
 * list names it and the link count counts it.
 */
#include "config.h"

#include <endian.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/format.h"
#include "ntfs/name_edit.h"
#include "ntfs/repair.h"
#include "ntfs_check.h"

#define MASK48 0xffffffffffffULL
/* an unnamed attribute list entry */
#define LIST_ENTRY_LEN 32u

/* Insert $FILE_NAME FNV (LEN bytes) into record REC (RS bytes), indexed.
 * 0, or -1 when it has no room. */
static int insert_name(uint8_t *rec, uint32_t rs, const uint8_t *fnv, uint32_t len)
{
	struct ntfs_mft_record m;
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	uint16_t inst;
	char why[NTFS_WHY];

	memcpy(&m, rec, sizeof(m));
	inst = le16toh(m.next_attr_instance);
	if (ntfs_rec_insert_resident(rec, rs, NTFS_AT_FILE_NAME, fnv, len))
		return -1;
	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1)
		if (le32toh(a->type) == NTFS_AT_FILE_NAME && le16toh(a->instance) == inst)
			rec[(const uint8_t *)a - rec +
			    offsetof(struct ntfs_attr_resident, resident_flags)] =
				NTFS_RESIDENT_INDEXED;
	return 0;
}

/* Whether the attribute list of base record REC (RS bytes) takes one
 * entry more: room in its clusters, or in the record when resident
 * (RESERVE bytes of which the caller takes too). */
static bool list_has_room(const uint8_t *rec, uint32_t rs, uint32_t reserve)
{
	const struct ntfs_attr_header *a = ntfs_attr_find(rec, NTFS_AT_ATTRIBUTE_LIST);
	struct ntfs_attr_nonresident n;
	struct ntfs_mft_record m;

	if (!a)
		return false;
	if (a->non_resident) {
		memcpy(&n, a, sizeof(n));
		return le64toh((uint64_t)n.data_size) + LIST_ENTRY_LEN <=
		       le64toh((uint64_t)n.allocated_size);
	}
	memcpy(&m, rec, sizeof(m));
	return le32toh(m.bytes_in_use) <= rs &&
	       rs - le32toh(m.bytes_in_use) >= reserve + LIST_ENTRY_LEN;
}

/* An extension record of base B (record REC) named by its list, with
 * room for FNV (LEN bytes) put there and written; its number, or
 * UINT64_MAX when none has room. */
static uint64_t into_extension(struct ntfs_check *c, uint64_t b, const uint8_t *base,
			       uint8_t *rec, const uint8_t *fnv, uint32_t len)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct ntfs_run *runs = NULL;
	uint8_t *list = NULL;
	uint64_t llen = 0, off = 0, e, found = UINT64_MAX, last = UINT64_MAX;
	uint32_t type;
	long nruns;
	char why[NTFS_WHY];

	if (ntfs_vol_read_attr(&c->vol, base, NTFS_AT_ATTRIBUTE_LIST, &list, &llen,
			       &runs, &nruns))
		goto out;
	while (found == UINT64_MAX && ntfs_list_next(list, llen, &off, &type, &e)) {
		struct ntfs_mft_record m;

		if (e == b || e == last || e >= c->vol.mft_records ||
		    !cset_get(&c->record_used, e))
			continue;
		last = e;
		if (ntfs_vol_read_record(&c->vol, e, rec) ||
		    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
			continue;
		memcpy(&m, rec, sizeof(m));
		if ((le64toh(m.base_mft_record) & MASK48) != b ||
		    insert_name(rec, rs, fnv, len))
			continue;
		if (ntfs_check_write_record(c, e, rec))
			goto out;
		found = e;
	}
out:
	free(list);
	free(runs);
	return found;
}

/* A new extension record of base B (sequence BSEQ) holding FNV (LEN
 * bytes), written; its number, or UINT64_MAX (WHY). */
static uint64_t new_extension(struct ntfs_check *c, uint64_t b, uint16_t bseq,
			      uint8_t *rec, const uint8_t *fnv, uint32_t len,
			      char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct ntfs_rec nr;
	uint16_t seq;
	uint64_t r = ntfs_free_record(c, rec, &seq);

	if (r >= c->vol.mft_records) {
		snprintf(why, NTFS_WHY, "the MFT has no free record for an extension record");
		return UINT64_MAX;
	}
	ntfs_rec_init_extension(&nr, rec, rs, (uint32_t)r, seq, NTFS_MREF(b, bseq));
	if (!ntfs_rec_add_resident(&nr, NTFS_AT_FILE_NAME, NULL, fnv, len,
				   NTFS_RESIDENT_INDEXED)) {
		snprintf(why, NTFS_WHY, "the name does not fit an MFT record");
		return UINT64_MAX;
	}
	if (ntfs_check_write_record(c, r, rec)) {
		snprintf(why, NTFS_WHY, "writing the new extension record failed");
		return UINT64_MAX;
	}
	cset_set(&c->record_used, r);
	return r;
}

bool ntfs_take_lost_name(struct ntfs_check *c, uint64_t r)
{
	if (!c->names_lost || !rare_get(c->names_lost, r))
		return false;
	for (size_t i = 0; i < c->nlost_names; i++)
		if (c->lost_names[i].b == r && c->lost_names[i].n) {
			c->lost_names[i].n--;
			return true;
		}
	return false;
}

int ntfs_name_back_from_entry(struct ntfs_check *c, uint64_t r,
			      const struct ntfs_ie_view *ie, bool *rekey, char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint32_t len = (uint32_t)sizeof(struct ntfs_file_name) + 2u * ie->name_len;
	uint8_t *base = malloc(rs), *rec = malloc(rs), *fnv = malloc(len);
	struct ntfs_file_name fn;
	struct ntfs_mft_record m;
	uint64_t extra = UINT64_MAX;
	int ret = -1;

	snprintf(why, NTFS_WHY, "out of memory");
	if (!base || !rec || !fnv || ie->key_len < len)
		goto out;
	if (ntfs_vol_read_record(&c->vol, r, base) ||
	    ntfs_record_check(base, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK ||
	    !ntfs_record_is_base(base) ||
	    !ntfs_attr_find(base, NTFS_AT_ATTRIBUTE_LIST)) {
		snprintf(why, NTFS_WHY, "its base record or attribute list is unusable");
		goto out;
	}
	/* the key as it was; half of a Win32/DOS pair becomes a name of
	 * its own (its other half may be lost too) */
	memcpy(fnv, ie->key, len);
	memcpy(&fn, fnv, sizeof(fn));
	if (fn.name_type == NTFS_NS_WIN32 || fn.name_type == NTFS_NS_DOS)
		fn.name_type = NTFS_NS_POSIX;
	memcpy(fnv, &fn, sizeof(fn));
	ntfs_name_units_mend(fnv + sizeof(fn), ie->name_len);
	*rekey = memcmp(fnv, ie->key, len) != 0;
	memcpy(rec, base, rs);
	if (list_has_room(base, rs, (uint32_t)ntfs_align(sizeof(struct ntfs_attr_resident) + len, 8)) &&
	    !insert_name(rec, rs, fnv, len)) {
		/* into the base record: the list follows below */
		if (ntfs_check_write_record(c, r, rec)) {
			snprintf(why, NTFS_WHY, "writing the record failed");
			goto out;
		}
	} else if (!list_has_room(base, rs, 0)) {
		snprintf(why, NTFS_WHY, "its attribute list has no room for one entry more");
		goto out;
	} else if (into_extension(c, r, base, rec, fnv, len) == UINT64_MAX) {
		memcpy(&m, base, sizeof(m));
		extra = new_extension(c, r, le16toh(m.sequence_number), rec, fnv,
				      len, why);
		if (extra == UINT64_MAX)
			goto out;
	}
	if (ntfs_rewrite_attr_list(c, r, extra, why))
		goto out;
	/* one link more (the list's rewrite wrote the base record) */
	if (ntfs_vol_read_record(&c->vol, r, base) ||
	    ntfs_record_check(base, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK) {
		snprintf(why, NTFS_WHY, "reading the base record failed");
		goto out;
	}
	memcpy(&m, base, sizeof(m));
	if (le16toh(m.link_count) < 0xffff)
		m.link_count = htole16((uint16_t)(le16toh(m.link_count) + 1));
	memcpy(base, &m, sizeof(m));
	if (ntfs_check_write_record(c, r, base)) {
		snprintf(why, NTFS_WHY, "writing the base record failed");
		goto out;
	}
	ret = 0;
out:
	free(base);
	free(rec);
	free(fnv);
	return ret;
}
