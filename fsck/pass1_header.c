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
 * Otherwise the record is cleared as before.  What is believed is
 * libntfs's ntfs_record_mend() (every reader that must see a record as
 * pass 1 will have it asks the same); this file asks and puts back.
 */
#include "config.h"

#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs_check.h"
#include "ntfs_problems.h"
#include "ntfs/repair.h"

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
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *copy = malloc(rs);
	struct ntfs_rec_mend how;
	int r = -1;

	if (!copy)
		return -1;
	memcpy(copy, rec, rs);
	if (ntfs_record_mend(copy, rs, NTFS_REC_TORN, &how) > 0)
		r = put_back(c, recno, rec, copy,
			     fsf_fix_ask(&c->fix, how.torn_in_attrs ?
					 &PR_RECORD_TORN_ATTRS : &PR_RECORD_TORN_UNUSED,
					 obj, how.first_torn));
	free(copy);
	return r;
}

int ntfs_salvage_header(struct ntfs_check *c, uint64_t recno, uint8_t *rec,
			enum ntfs_rec_state st, const char *obj)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *copy = malloc(rs);
	struct ntfs_rec_mend how;
	int r = -1;

	if (!copy)
		return -1;
	/* REC as read for a bad array; fixups removed for a bad header */
	memcpy(copy, rec, rs);
	if (ntfs_record_mend(copy, rs, st, &how) > 0)
		r = put_back(c, recno, rec, copy,
			     fsf_fix_ask(&c->fix, &PR_RECORD_HEADER, obj,
					 how.usa[0] ? how.usa : how.hdr,
					 how.usa[0] && how.hdr[0] ? "; " : "",
					 how.usa[0] ? how.hdr : ""));
	free(copy);
	return r;
}
