// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * $Extend/$UsnJrnl's $Max value and the records at the end of its $J
 * (ntfs/usnjrnl.h): parsed from bytes, no I/O.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "le.h"
#include "ntfs/usnjrnl.h"

#define WHY 128

int ntfs_usn_max_parse(const uint8_t *val, uint32_t len, uint64_t j_size,
		       struct ntfs_usn_max *m, char *why)
{
	uint64_t end = (j_size + 7) & ~7ULL;

	if (len != NTFS_USN_MAX_LEN) {
		snprintf(why, WHY, "$Max holds %u bytes, not %u", len, NTFS_USN_MAX_LEN);
		return -1;
	}
	m->max_size = ntfs_get64(val);
	m->delta = ntfs_get64(val + 8);
	m->journal_id = ntfs_get64(val + 16);
	m->lowest_valid = ntfs_get64(val + 24);
	if (!m->max_size) {
		snprintf(why, WHY, "maximum size 0");
		return -1;
	}
	if (m->lowest_valid >> 63 || m->lowest_valid & 7 || m->lowest_valid > end) {
		snprintf(why, WHY, "lowest valid USN %lld %s", (long long)m->lowest_valid,
			 m->lowest_valid >> 63 ? "is negative" : m->lowest_valid & 7 ?
			 "is not a multiple of 8" : "lies past the end of $J");
		return -1;
	}
	return 0;
}

void ntfs_usn_max_encode(const struct ntfs_usn_max *m, uint8_t out[NTFS_USN_MAX_LEN])
{
	ntfs_put64(out, m->max_size);
	ntfs_put64(out + 8, m->delta);
	ntfs_put64(out + 16, m->journal_id);
	ntfs_put64(out + 24, m->lowest_valid);
}

void ntfs_usn_max_restamp(struct ntfs_usn_max *m, uint64_t j_size, uint64_t new_id)
{
	if (!m->max_size || m->max_size >> 62)
		m->max_size = 32ULL << 20;
	if (!m->delta || m->delta > m->max_size)
		m->delta = m->max_size / 4;
	m->journal_id = new_id == m->journal_id ? new_id + 1 : new_id;
	m->lowest_valid = (j_size + 7) & ~7ULL;
}

/* the header a major version needs, and where its USN and name are */
struct layout {
	uint32_t header, usn, name_len, name_off;
};

static int layout_of(uint16_t major, struct layout *l)
{
	switch (major) {
	case 2:
		*l = (struct layout){ 0x3c, 0x18, 0x38, 0x3a };
		return 0;
	case 3:
		*l = (struct layout){ 0x4c, 0x28, 0x48, 0x4a };
		return 0;
	case 4:		/* range tracking: extents follow, no name */
		*l = (struct layout){ 0x38, 0x28, 0, 0 };
		return 0;
	}
	return -1;
}

int ntfs_usn_scan(const uint8_t *buf, size_t len, uint64_t base,
		  uint64_t *count, uint64_t *bad, char *why)
{
	size_t pos = 0;

	*count = 0;
	while (pos < len) {
		uint64_t at = base + pos;
		size_t page_left = NTFS_USN_PAGE - (size_t)(at % NTFS_USN_PAGE);
		uint32_t rl;
		struct layout l;

		if (len - pos < 4) {
			snprintf(why, WHY, "$J ends inside a record's length");
			goto bad;
		}
		rl = ntfs_get32(buf + pos);
		if (!rl) {
			/* the rest of the page is padding */
			for (size_t k = pos; k < len && k < pos + page_left; k++)
				if (buf[k]) {
					snprintf(why, WHY, "bytes after a page's padding began");
					goto bad;
				}
			pos += page_left;
			continue;
		}
		if (rl % 8 || rl < 8 || rl > page_left || rl > len - pos) {
			snprintf(why, WHY, "record length %u %s", rl,
				 rl % 8 || rl < 8 ? "is not a multiple of 8" :
				 rl > len - pos ? "runs past the end of $J" :
				 "crosses a page boundary");
			goto bad;
		}
		if (layout_of(ntfs_get16(buf + pos + 4), &l)) {
			snprintf(why, WHY, "major version %u", ntfs_get16(buf + pos + 4));
			goto bad;
		}
		if (rl < l.header) {
			snprintf(why, WHY, "record length %u below its header's %u", rl, l.header);
			goto bad;
		}
		if (ntfs_get64(buf + pos + l.usn) != at) {
			snprintf(why, WHY, "USN %lld, not its offset",
				 (long long)ntfs_get64(buf + pos + l.usn));
			goto bad;
		}
		if (l.name_off) {
			uint32_t nl = ntfs_get16(buf + pos + l.name_len);
			uint32_t no = ntfs_get16(buf + pos + l.name_off);

			if (nl % 2 || no < l.header || no + nl > rl) {
				snprintf(why, WHY, "name (%u bytes at %u) outside the record", nl, no);
				goto bad;
			}
		}
		(*count)++;
		pos += rl;
	}
	return 0;
bad:
	*bad = base + pos;
	return -1;
}
