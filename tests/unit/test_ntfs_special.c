// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the reparse point and extended attribute parsers
 * (libntfs/reparse.c, libntfs/ea.c) and the resident attribute resize and
 * insert of libntfs/repair.c, against values stated independently: bytes
 * the Linux 7.2 ntfs driver and ntfs-3g wrote (read back with ntfs-3g's
 * system.ntfs_reparse_data and system.ntfs_ea), and hand-built layouts
 * from MS-FSCC (2.1.2 reparse data, 2.4.15 FILE_FULL_EA_INFORMATION);
 * and the change journal's parsers (libntfs/usnjrnl.c) against
 * hand-built USN_RECORD_V2 pages and $Max values (USN_JOURNAL_DATA's
 * maximum size, allocation delta, journal id, lowest valid USN).
 */
#include "config.h"

#include <endian.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/format.h"
#include "ntfs/read.h"
#include "ntfs/repair.h"
#include "ntfs/special.h"
#include "ntfs/usnjrnl.h"
#include "tap.h"

static size_t unhex(const char *h, uint8_t *out)
{
	size_t n = 0;

	for (; h[0] && h[1]; h += 2) {
		unsigned int b;

		sscanf(h, "%2x", &b);
		out[n++] = (uint8_t)b;
	}
	return n;
}

static void test_reparse(void)
{
	uint8_t v[512];
	struct ntfs_reparse_view rp;
	char why[NTFS_WHY];
	size_t n;

	/* the 7.2 driver's symlink to "hello.txt" */
	n = unhex("1d0000a00d0000000200000068656c6c6f2e747874", v);
	ok(!ntfs_reparse_parse(v, (uint32_t)n, &rp, why) &&
	   rp.tag == NTFS_RT_LX_SYMLINK && rp.target_len == 9 &&
	   !memcmp(rp.target, "hello.txt", 9), "LX_SYMLINK written by Linux 7.2");
	v[4] = 0x0e;	/* one byte too many */
	ok(ntfs_reparse_parse(v, (uint32_t)n, &rp, why) &&
	   ntfs_reparse_fixable_len(v, (uint32_t)n) == 13,
	   "a wrong LX_SYMLINK data length is found and recomputed (13)");
	v[4] = 0x0d;
	v[8] = 7;	/* version */
	ok(ntfs_reparse_parse(v, (uint32_t)n, &rp, why) &&
	   !ntfs_reparse_fixable_len(v, (uint32_t)n), "LX_SYMLINK version 7 is refused (%s)", why);
	/* the driver's FIFO, socket, devices: tag and no data */
	n = unhex("2400008000000000", v);
	ok(!ntfs_reparse_parse(v, (uint32_t)n, &rp, why) && rp.tag == NTFS_RT_LX_FIFO &&
	   !rp.data_len, "LX_FIFO with no data");
	n = unhex("2300008000000000", v);
	ok(!ntfs_reparse_parse(v, (uint32_t)n, &rp, why) && rp.tag == NTFS_RT_AF_UNIX, "AF_UNIX");
	/* MS-FSCC 2.1.2.4: relative symlink "hello.txt", names back to back */
	n = unhex("0c0000a030000000000012001200120001000000"
		  "680065006c006c006f002e00740078007400"
		  "680065006c006c006f002e00740078007400", v);
	ok(!ntfs_reparse_parse(v, (uint32_t)n, &rp, why) && rp.subst_len == 18 &&
	   rp.print == rp.subst + 18 && rp.flags == NTFS_SYMLINK_RELATIVE, "Windows symlink");
	v[8] = 0xf0;
	v[9] = 0xff;	/* substitute name offset */
	ok(ntfs_reparse_parse(v, (uint32_t)n, &rp, why), "symlink name outside the value (%s)", why);
	/* MS-FSCC 2.1.2.5: junction \??\C:\Windows, names NUL-terminated */
	n = unhex("030000a03c00000000001c001e0014005c003f003f005c0043003a005c0057"
		  "0069006e0064006f0077007300000043003a005c00570069006e0064006f00770073000000", v);
	ok(!ntfs_reparse_parse(v, (uint32_t)n, &rp, why) && rp.subst_len == 28 &&
	   rp.print_len == 20, "junction");
	v[4] = 0x40;
	ok(ntfs_reparse_fixable_len(v, (uint32_t)n) == 0x3c, "a junction's length recomputed (60)");
	/* a third-party tag carries a GUID: 24-byte header */
	memset(v, 0, 32);
	v[0] = 0x34;
	v[1] = 0x12;
	v[4] = 4;
	ok(!ntfs_reparse_parse(v, 28, &rp, why) && rp.header_len == 24, "non-Microsoft tag with GUID");
	ok(ntfs_reparse_parse(v, 12, &rp, why), "non-Microsoft tag without room for its GUID");
	memset(v, 0, 8);
	ok(ntfs_reparse_parse(v, 8, &rp, why), "tag 0 refused");
}

static void test_ea(void)
{
	uint8_t v[512], info[NTFS_EA_INFO_LEN];
	struct ntfs_ea_sum s;
	struct ntfs_ea_info ei;
	char why[NTFS_WHY];
	size_t n;

	/* a chr device's EAs written by ntfs-3g (special_files=wsl) */
	n = unhex("1400000000060400244c584d4f4400a4210000001800000000060800244c5844455600010000000300000000", v);
	ok(!ntfs_ea_sum(v, (uint32_t)n, &s, why) && s.count == 2 && s.valid_len == 44 &&
	   s.packed == 15 + 19 && !s.need_ea, "ntfs-3g's $LXMOD/$LXDEV chain (44 bytes, packed 34)");
	/* ntfs-3g wrote $EA_INFORMATION 22 00 00 00 2c 00 00 00 for it */
	ntfs_ea_info_make(&s, info);
	ok(!memcmp(info, "\x22\x00\x00\x00\x2c\x00\x00\x00", 8), "the summary ntfs-3g wrote is the one made");
	ok(!ntfs_ea_info_parse(info, 8, &ei, why) && ei.packed_size == 34 &&
	   ei.unpacked_size == 44, "summary parsed back");
	/* the second entry's next-entry offset broken */
	v[20] = 3;
	ok(ntfs_ea_sum(v, (uint32_t)n, &s, why) && s.count == 1 && s.valid_len == 20,
	   "a broken chain keeps its first entry (%s)", why);
	v[20] = 0x18;
	/* last entry with next-entry offset 0, padding left out */
	v[20] = 0;
	ok(!ntfs_ea_sum(v, 43, &s, why) && s.count == 2, "last entry with offset 0, no padding");
	ok(ntfs_ea_sum(v, (uint32_t)n + 8, &s, why), "stray bytes after the last entry (%s)", why);
	v[20] = 0x18;
	v[4] = 0x81;	/* unknown flag */
	ok(ntfs_ea_sum(v, (uint32_t)n, &s, why) && !s.count, "unknown entry flags (%s)", why);
	v[4] = 0x80;
	ok(!ntfs_ea_sum(v, (uint32_t)n, &s, why) && s.need_ea == 1, "NEED_EA counted");
	/* the same name twice */
	memcpy(v + 28, "$LXMOD", 6);
	ok(ntfs_ea_sum(v, (uint32_t)n, &s, why) && s.duplicate, "a name used twice (%s)", why);
	ok(ntfs_ea_info_parse(v, 7, &ei, why), "$EA_INFORMATION of 7 bytes refused");
}

/* ntfs_ea_mend on the chr chain above ($LXMOD at 0, 20 bytes; $LXDEV at
 * 20, 24 bytes): the expectations are worked out by hand from the layout */
static void test_ea_mend(void)
{
	static const char chain[] =
		"1400000000060400244c584d4f4400a4210000001800000000060800244c5844455600010000000300000000";
	uint8_t v[64], good[64];
	struct ntfs_ea_sum s;
	char why[NTFS_WHY];
	uint32_t len;
	size_t n = unhex(chain, good);

	/* the first link leaves the value: set back to 20, both kept */
	memcpy(v, good, n);
	v[0] = 44 + 64;
	ok(ntfs_ea_mend(v, (uint32_t)n, &len) == 2 && len == 44 && !memcmp(v, good, n),
	   "first link past the value: mended to 20, both entries kept");
	/* the last entry's link is 3: it becomes the last (0) */
	memcpy(v, good, n);
	v[20] = 3;
	ok(ntfs_ea_mend(v, (uint32_t)n, &len) == 2 && len == 44 && v[20] == 0 &&
	   !ntfs_ea_sum(v, len, &s, why) && s.count == 2,
	   "last link 3: set to 0, both entries kept, the chain parses");
	/* the first entry says it is the last, the second follows: linked */
	memcpy(v, good, n);
	v[0] = 0;
	ok(ntfs_ea_mend(v, (uint32_t)n, &len) == 2 && len == 44 && v[0] == 20,
	   "a 0 link with a whole entry after it: linked to it");
	/* the second entry's value runs past the chain: cut before it */
	memcpy(v, good, n);
	v[26] = 0x40;
	ok(ntfs_ea_mend(v, (uint32_t)n, &len) == 1 && len == 20 &&
	   !ntfs_ea_sum(v, len, &s, why) && s.count == 1,
	   "second entry not whole: the first kept alone (%s)", why);
	/* the second entry has the first's name: cut before it */
	memcpy(v, good, n);
	memcpy(v + 28, "$LXMOD", 6);
	ok(ntfs_ea_mend(v, (uint32_t)n, &len) == 1 && len == 20, "a name used twice: cut before it");
	/* the first entry's flags unknown, its link to the second good:
	 * the first taken out, the second kept, moved to offset 0 */
	memcpy(v, good, n);
	v[4] = 0x81;
	ok(ntfs_ea_mend(v, (uint32_t)n, &len) == 1 && len == 24 &&
	   !memcmp(v, good + 20, 24) && !ntfs_ea_sum(v, len, &s, why) && s.count == 1,
	   "first entry not whole, its link good: dropped alone, the second kept");
	/* the first entry's name length past the value (lab case
	 * m-win4k-2100016): the same */
	memcpy(v, good, n);
	v[5] = 0xff;
	ok(ntfs_ea_mend(v, (uint32_t)n, &len) == 1 && len == 24 && !memcmp(v, good + 20, 24),
	   "first entry's name length 0xff, its link good: the second kept");
	/* the first entry not whole and its link not to a whole entry:
	 * nothing kept */
	memcpy(v, good, n);
	v[4] = 0x81;
	v[0] = 8;
	ok(ntfs_ea_mend(v, (uint32_t)n, &len) == 0 && len == 0,
	   "first entry not whole, its link to no entry: nothing kept");
	memcpy(v, good, n);
	v[4] = 0x81;
	v[0] = 0;
	ok(ntfs_ea_mend(v, (uint32_t)n, &len) == 0 && len == 0,
	   "first entry not whole, its link 0: nothing kept");
}

static void test_resident(void)
{
	uint8_t rec[1024];
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];
	uint32_t types[4], lens[4], len;
	uint8_t val[48];	/* $STANDARD_INFORMATION is at least 48 bytes */
	int k = 0;

	memset(rec, 0, sizeof(rec));
	ntfs_rec_init_free(rec, sizeof(rec), 40, 1);
	memset(val, 0xab, sizeof(val));
	ok(!ntfs_rec_insert_resident(rec, sizeof(rec), NTFS_AT_EA, val, 20) &&
	   !ntfs_rec_insert_resident(rec, sizeof(rec), NTFS_AT_STANDARD_INFORMATION, val, 48) &&
	   !ntfs_rec_insert_resident(rec, sizeof(rec), NTFS_AT_EA_INFORMATION, val, 8),
	   "three attributes inserted");
	ntfs_attr_cursor_init(&cur, rec);
	while (k < 4 && ntfs_attr_next(&cur, &a, why) == 1) {
		ntfs_attr_value(a, &len);
		types[k] = le32toh(a->type);
		lens[k++] = len;
	}
	ok(k == 3 && types[0] == 0x10 && types[1] == 0xd0 && types[2] == 0xe0 &&
	   lens[0] == 48 && lens[1] == 8 && lens[2] == 20, "in type order, values as given");
	/* the $EA_INFORMATION (second) resized to 12, then 4 bytes */
	{
		uint32_t off = le16toh(((struct ntfs_mft_record *)(void *)rec)->attrs_offset);
		uint32_t alen;

		memcpy(&alen, rec + off + 4, 4);
		off += le32toh(alen);
		ok(!ntfs_rec_resize_resident(rec, sizeof(rec), off, 12) &&
		   !ntfs_rec_resize_resident(rec, sizeof(rec), off, 4), "resized");
	}
	k = 0;
	ntfs_attr_cursor_init(&cur, rec);
	while (k < 4 && ntfs_attr_next(&cur, &a, why) == 1) {
		const uint8_t *p = ntfs_attr_value(a, &len);

		types[k] = le32toh(a->type);
		lens[k++] = len;
		if (types[k - 1] == 0xe0)
			ok(p[0] == 0xab && p[19] == 0xab, "the attribute after it moved intact");
	}
	ok(k == 3 && lens[1] == 4 && lens[2] == 20, "record parses, value of 4 bytes");
	ok(ntfs_rec_insert_resident(rec, sizeof(rec), NTFS_AT_DATA, val, 1000),
	   "no room: refused");
}

/* a USN_RECORD_V2 for a one-letter name at USN (64 bytes) */
static void usn_rec(uint8_t *p, uint64_t usn)
{
	memset(p, 0, 64);
	p[0] = 64;		/* record length */
	p[4] = 2;		/* major version */
	for (int i = 0; i < 8; i++)
		p[0x18 + i] = (uint8_t)(usn >> (8 * i));
	p[0x38] = 2;		/* name: 2 bytes at 0x3c */
	p[0x3a] = 0x3c;
	p[0x3c] = 'a';
}

static void test_usnjrnl(void)
{
	uint8_t page[8192], max[32] = { 0 };
	uint64_t count, bad;
	struct ntfs_usn_max m;
	char why[NTFS_WHY];

	/* two pages from USN 0x11000: two records at the first's end
	 * (0x11f40, 0x11f80), its last 64 bytes padding, two in the second */
	memset(page, 0, sizeof(page));
	usn_rec(page + 0xf40, 0x11f40);
	usn_rec(page + 0xf80, 0x11f80);
	usn_rec(page + 0x1000, 0x12000);
	usn_rec(page + 0x1040, 0x12040);
	ok(!ntfs_usn_scan(page + 0xf40, 0x1080 - 0xf40, 0x11f40, &count, &bad, why) &&
	   count == 4, "usn: records and a page's padding scan clean");
	page[0x1040 + 0x18] ^= 1;
	ok(ntfs_usn_scan(page + 0xf40, 0x1080 - 0xf40, 0x11f40, &count, &bad, why) &&
	   bad == 0x12040, "usn: a USN not its offset: %s", why);
	page[0x1040 + 0x18] ^= 1;
	page[0xfc8] = 1;
	ok(ntfs_usn_scan(page + 0xf40, 0x1080 - 0xf40, 0x11f40, &count, &bad, why) &&
	   bad == 0x11fc0, "usn: bytes in a page's padding: %s", why);
	page[0xfc8] = 0;
	usn_rec(page + 0xfc0, 0x11fc0);
	page[0xfc0] = 72;	/* 8 bytes into the next page */
	ok(ntfs_usn_scan(page + 0xf40, 0x1080 - 0xf40, 0x11f40, &count, &bad, why) &&
	   bad == 0x11fc0, "usn: a record across a page boundary: %s", why);
	memset(page + 0xfc0, 0, 64);
	page[0x1004] = 9;
	ok(ntfs_usn_scan(page + 0xf40, 0x1080 - 0xf40, 0x11f40, &count, &bad, why) &&
	   bad == 0x12000, "usn: major version 9: %s", why);
	page[0x1004] = 2;
	page[0x1038] = 6;
	ok(ntfs_usn_scan(page + 0xf40, 0x1080 - 0xf40, 0x11f40, &count, &bad, why) &&
	   bad == 0x12000, "usn: a name outside its record: %s", why);
	page[0x1038] = 2;
	ok(ntfs_usn_scan(page + 0xf40, 0x1080 - 0xf40 - 4, 0x11f40, &count, &bad, why) &&
	   bad == 0x12040, "usn: a record cut by $J's end: %s", why);

	/* 32 MiB, 8 MiB, id 7, lowest valid 0x11f40 */
	max[3] = 2;
	max[10] = 0x80;
	max[16] = 7;
	max[25] = 0x1f;
	max[24] = 0x40;
	max[26] = 1;
	ok(!ntfs_usn_max_parse(max, 32, 0x12080, &m, why) && m.max_size == 32u << 20 &&
	   m.delta == 8u << 20 && m.journal_id == 7 && m.lowest_valid == 0x11f40,
	   "usn: $Max parses");
	ok(ntfs_usn_max_parse(max, 32, 0x11f00, &m, why), "usn: lowest valid past $J: %s", why);
	ok(ntfs_usn_max_parse(max, 24, 0x12080, &m, why), "usn: $Max of 24 bytes: %s", why);
	max[24] = 0x41;
	ok(ntfs_usn_max_parse(max, 32, 0x12080, &m, why), "usn: lowest valid unaligned: %s", why);
	ntfs_usn_max_restamp(&m, 0x12079, 7);
	ok(m.max_size == 32u << 20 && m.delta == 8u << 20 && m.journal_id == 8 &&
	   m.lowest_valid == 0x12080, "usn: restamped: sizes kept, a new id, $J's end");
}

int main(void)
{
	test_reparse();
	test_ea();
	test_ea_mend();
	test_resident();
	test_usnjrnl();
	return tap_done();
}
