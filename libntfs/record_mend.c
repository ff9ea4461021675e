// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libntfs: a FILE record made usable as a checker's pass 1 makes it (see
 * ntfs/repair.h): the one place that says which torn records, misplaced
 * update sequence arrays and wrong header fields are put back from the
 * record's own bytes, for the checker that repairs them and for every
 * reader that must see a record as that checker will have it.
 */
#include "config.h"

#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/format.h"
#include "ntfs/read.h"
#include "ntfs/repair.h"

static uint32_t used_of(const uint8_t *rec)
{
	struct ntfs_mft_record m;

	memcpy(&m, rec, sizeof(m));
	return le32toh(m.bytes_in_use);
}

/* Every attribute of REC parses up to its end marker. */
static bool walks(const uint8_t *rec)
{
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];
	int r;

	ntfs_attr_cursor_init(&cur, rec);
	while ((r = ntfs_attr_next(&cur, &a, why)) == 1)
		;
	return r == 0;
}

bool ntfs_record_used_wrong(const uint8_t *rec)
{
	uint32_t end;
	char why[NTFS_WHY];

	return ntfs_attr_frames_end(rec, used_of(rec), &end, why) < 0 ||
	       end + 8 < used_of(rec);
}

/* A torn stride's saved ends put back: believed when the header checks
 * and, the torn stride holding attribute bytes, every attribute parses
 * (else the frames reach the end marker; field damage is the attribute
 * checks'). */
static int mend_torn(uint8_t *rec, uint32_t rs, struct ntfs_rec_mend *how)
{
	char why[NTFS_WHY];
	uint32_t end;

	if (ntfs_fixup_force(rec, rs, &how->first_torn) <= 0 ||
	    ntfs_file_header_check(rec, rs, why) != NTFS_REC_OK)
		return -1;
	how->torn_in_attrs = (uint64_t)how->first_torn * NTFS_USA_STRIDE < used_of(rec);
	if (how->torn_in_attrs)
		return walks(rec) ? 1 : -1;
	return ntfs_attr_frames_end(rec, used_of(rec), &end, why) < 0 ? -1 : 1;
}

/* The array put where the strides say (ST NTFS_REC_BAD_USA) and the
 * header fields set to what the frames say: believed when every frame
 * leads to an end marker after at least one attribute; fields that
 * passed their check (ST NTFS_REC_OK) only when something changed and
 * every attribute then parses. */
static int mend_header(uint8_t *rec, uint32_t rs, enum ntfs_rec_state st,
		       struct ntfs_rec_mend *how)
{
	struct ntfs_mft_record m;
	char why[NTFS_WHY];
	uint32_t end;

	if (st == NTFS_REC_BAD_USA && ntfs_usa_repair(rec, rs, how->usa))
		return -1;
	if (ntfs_file_header_repair(rec, rs, how->hdr) ||
	    ntfs_file_header_check(rec, rs, why) != NTFS_REC_OK)
		return -1;
	if (st == NTFS_REC_OK && (!how->hdr[0] || !walks(rec)))
		return -1;
	memcpy(&m, rec, sizeof(m));
	if (ntfs_attr_frames_end(rec, le32toh(m.bytes_in_use), &end, why) < 0 ||
	    end == le16toh(m.attrs_offset))
		return -1;
	return 1;
}

int ntfs_record_mend(uint8_t *rec, uint32_t rs, enum ntfs_rec_state st,
		     struct ntfs_rec_mend *how)
{
	uint8_t *copy;
	int r;

	memset(how, 0, sizeof(*how));
	if (st == NTFS_REC_OK && !ntfs_record_used_wrong(rec))
		return 0;
	if (st != NTFS_REC_OK && st != NTFS_REC_TORN &&
	    st != NTFS_REC_BAD_USA && st != NTFS_REC_BAD_HEADER)
		return -1;
	copy = malloc(rs);
	if (!copy)
		return -1;
	memcpy(copy, rec, rs);
	how->torn = st == NTFS_REC_TORN;
	r = how->torn ? mend_torn(copy, rs, how) : mend_header(copy, rs, st, how);
	if (r > 0)
		memcpy(rec, copy, rs);
	else if (st == NTFS_REC_OK) {
		/* kept as it is: the attribute checks judge it */
		memset(how, 0, sizeof(*how));
		r = 0;
	}
	free(copy);
	return r;
}

int ntfs_record_usable(uint8_t *rec, uint32_t rs)
{
	struct ntfs_rec_mend how;
	char why[NTFS_WHY];
	enum ntfs_rec_state st = ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why);
	int r = ntfs_record_mend(rec, rs, st, &how);

	/* a torn record put back may have bytes in use to set after */
	if (r > 0 && how.torn)
		r = ntfs_record_mend(rec, rs, NTFS_REC_OK, &how);
	return r < 0 ? -1 : 0;
}
