// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 1: a record whose update sequence or header fields are wrong is put
 * back, not cleared, when its own bytes say how.  A torn record (one
 * stride's check value differs from the update sequence number) gets its
 * saved stride ends back when its attributes still parse (certain when the
 * torn stride holds no attribute byte); an update sequence array in the
 * wrong place or with the wrong count is put where every stride end holds
 * its number; a wrong allocated size, attribute offset or bytes in use
 * (past the record's allocated size too) is set to what the attribute
 * frames say, believed when they then lead to the end marker inside the
 * record.  Bytes in use that pass the header check but end inside
 * an attribute (one bit of the field lost: m-deep4k-1500009) or past the
 * end marker's 8 bytes (ntfsck -n objects to the slack) are set to the
 * end marker the same way when every attribute up to it parses.
 * Otherwise the record is cleared as before.
 */
#include "config.h"

#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs_check.h"
#include "ntfs_problems.h"
#include "ntfs/repair.h"

static uint32_t used_of(const uint8_t *rec)
{
	struct ntfs_mft_record m;

	memcpy(&m, rec, sizeof(m));
	return le32toh(m.bytes_in_use);
}

/* COPY, the record put back, in place of REC and written when the
 * answer was YES: 0; 1 when it was not (under -n: 0, REC assumed in
 * memory as put back). */
static int put_back(struct ntfs_check *c, uint64_t recno, uint8_t *rec,
		    const uint8_t *copy, bool yes)
{
	if (!yes && c->fix.mode != FSF_MODE_NO)
		return 1;
	if (!yes) {
		/* -n goes on with the record as -a puts it back (in memory
		 * only): checked, and read again later, as -a has it; not
		 * held (past the budget): left as read, as declined */
		if (ntfs_vol_assume_record(&c->vol, recno, copy))
			return 1;
		memcpy(rec, copy, c->vol.boot.g.mft_record_size);
		return 0;
	}
	memcpy(rec, copy, c->vol.boot.g.mft_record_size);
	if (ntfs_check_write_record(c, recno, rec))
		fsf_fix_failed(&c->fix);
	return 0;
}

int ntfs_salvage_torn(struct ntfs_check *c, uint64_t recno, uint8_t *rec,
		      const char *obj)
{
	uint32_t rs = c->vol.boot.g.mft_record_size, first = 0, used;
	uint8_t *copy = malloc(rs);
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];
	bool in_attrs;
	int r = -1;

	if (!copy)
		return -1;
	memcpy(copy, rec, rs);
	if (ntfs_fixup_force(copy, rs, &first) <= 0 ||
	    ntfs_file_header_check(copy, rs, why) != NTFS_REC_OK)
		goto out;
	used = used_of(copy);
	in_attrs = (uint64_t)first * NTFS_USA_STRIDE < used;
	/* the walk must reach the end marker through attributes that parse;
	 * field damage elsewhere is left to ntfs_salvage_attrs */
	ntfs_attr_cursor_init(&cur, copy);
	while ((r = ntfs_attr_next(&cur, &a, why)) == 1)
		;
	if (r < 0 && in_attrs)
		goto out;
	if (!in_attrs) {
		uint32_t end;

		r = ntfs_attr_frames_end(copy, used, &end, why);
		if (r < 0)
			goto out;
	}
	r = put_back(c, recno, rec, copy,
		     fsf_fix_ask(&c->fix, in_attrs ? &PR_RECORD_TORN_ATTRS :
				 &PR_RECORD_TORN_UNUSED, obj, first));
out:
	free(copy);
	return r < 0 ? -1 : r;
}

int ntfs_salvage_header(struct ntfs_check *c, uint64_t recno, uint8_t *rec,
			enum ntfs_rec_state st, const char *obj)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *copy = malloc(rs);
	char usa[NTFS_WHY] = "", hdr[NTFS_WHY] = "", why[NTFS_WHY];
	int r = -1;

	if (!copy)
		return -1;
	/* REC as read for a bad array; fixups removed for a bad header */
	memcpy(copy, rec, rs);
	if (st == NTFS_REC_BAD_USA && ntfs_usa_repair(copy, rs, usa))
		goto out;
	if (ntfs_file_header_repair(copy, rs, hdr) ||
	    ntfs_file_header_check(copy, rs, why) != NTFS_REC_OK)
		goto out;
	if (st == NTFS_REC_OK) {
		/* fields that pass their check, bytes in use short of the
		 * attributes: believed only when the longer walk gives a new
		 * bytes in use and every attribute on it parses */
		struct ntfs_attr_cursor cur;
		const struct ntfs_attr_header *a;

		if (!hdr[0])
			goto out;
		ntfs_attr_cursor_init(&cur, copy);
		while ((r = ntfs_attr_next(&cur, &a, why)) == 1)
			;
		if (r < 0)
			goto out;
	}
	/* believed only when every attribute frame leads to the end marker */
	{
		struct ntfs_mft_record m;
		uint32_t end;

		memcpy(&m, copy, sizeof(m));
		r = ntfs_attr_frames_end(copy, le32toh(m.bytes_in_use), &end, why);
		if (r < 0 || end == le16toh(m.attrs_offset))
			goto out;
	}
	r = put_back(c, recno, rec, copy,
		     fsf_fix_ask(&c->fix, &PR_RECORD_HEADER, obj,
				 usa[0] ? usa : hdr, usa[0] && hdr[0] ? "; " : "",
				 usa[0] ? hdr : ""));
out:
	free(copy);
	return r < 0 ? -1 : r;
}
