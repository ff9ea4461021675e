// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of libntfs' pure format helpers against independent values:
 * the $UpCase that ntfs-3g's mkntfs writes (argv[1], extracted with
 * ntfscat), a security descriptor and its hash as stored by that mkntfs,
 * and hand-computed byte layouts of boot sectors, MFT records, runlists,
 * fixups and index entries.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/btree.h"
#include "ntfs/file_attrs.h"
#include "ntfs/format.h"
#include "ntfs/index_build.h"
#include "ntfs/index_write.h"
#include "ntfs/logfile.h"
#include "ntfs/name_edit.h"
#include "ntfs/read.h"
#include "ntfs/repair.h"
#include "tap.h"
#include "../../libntfs/internal.h"	/* the planner */

static uint16_t rd16(const void *p) { uint16_t v; memcpy(&v, p, 2); return le16toh(v); }
static uint32_t rd32(const void *p) { uint32_t v; memcpy(&v, p, 4); return le32toh(v); }
static uint64_t rd64(const void *p) { uint64_t v; memcpy(&v, p, 8); return le64toh(v); }

static void test_upcase(const char *ref)
{
	static uint16_t t[NTFS_UPCASE_LEN];
	static uint8_t disk[NTFS_UPCASE_LEN * 2];

	ntfs_upcase_build(t);
	ok(t['a'] == 'A' && t['z'] == 'Z' && t['A'] == 'A' && t['0'] == '0',
	   "upcase: ASCII letters fold, others stay");
	ok(t[0xff] == 0x178 && t[0xe9] == 0xc9 && t[0xdf] == 0xdf,
	   "upcase: y-diaeresis -> U+0178, e-acute -> E-acute, sharp s unchanged");
	ok(t[0x3b1] == 0x391 && t[0x44f] == 0x42f && t[0xff41] == 0xff21,
	   "upcase: Greek alpha, Cyrillic ya, fullwidth a");
	ok(t[0x101] == 0x100 && t[0x100] == 0x100, "upcase: Latin Extended-A pairs");
	{
		/* the judge, against tables written here (little-endian) */
		static uint8_t le[NTFS_UPCASE_LEN * 2];
		uint32_t first = 99, bad;

		for (uint32_t i = 0; i < NTFS_UPCASE_LEN; i++) {
			le[2 * i] = (uint8_t)t[i];
			le[2 * i + 1] = (uint8_t)(t[i] >> 8);
		}
		ok(ntfs_upcase_judge(le, NTFS_UPCASE_LEN, &first) == 0,
		   "upcase judge: the standard table is good");
		le[2 * 0x3b1] = 0xb1;	/* alpha left lower case: an older table */
		le[2 * 0x3b1 + 1] = 0x03;
		ok(ntfs_upcase_judge(le, NTFS_UPCASE_LEN, &first) == 0,
		   "upcase judge: a character left as itself is accepted");
		le[2 * 'q'] = 'q';	/* an ASCII letter left lower case */
		le[2 * 0x4000] = 0x41;	/* a character mapped to another */
		bad = ntfs_upcase_judge(le, NTFS_UPCASE_LEN, &first);
		ok(bad == 2 && first == 'q', "upcase judge: 2 bad entries, the first at 'q' (%u, U+%04X)",
		   bad, first);
		ok(ntfs_upcase_judge(le, 0x80, &first) == 1 && first == 'q',
		   "upcase judge: only the ASCII half judged");
	}
	if (ref) {
		FILE *f = fopen(ref, "rb");
		size_t n = f ? fread(disk, 1, sizeof(disk), f) : 0;
		size_t diff = 0, first = 0;

		if (f)
			fclose(f);
		for (size_t i = 0; n == sizeof(disk) && i < NTFS_UPCASE_LEN; i++)
			if (rd16(disk + 2 * i) != t[i] && !diff++)
				first = i;
		ok(n == sizeof(disk) && diff == 0,
		   "upcase: identical to the $UpCase written by ntfs-3g's mkntfs (%zu bytes, %zu differences, first at U+%04zX)",
		   n, diff, first);
	}
}

/* a name unit NUL or '/' is allowed by no namespace; mended, each is '_'
 * and nothing else changes (a surrogate pair, 0x2f as a high byte) */
static void test_name_units(void)
{
	uint8_t u[] = { 'a', 0, '/', 0, 0x3d, 0xd8, 0x00, 0xde, 0, 0, 0x00, 0x2f };
	const uint8_t want[] = { 'a', 0, '_', 0, 0x3d, 0xd8, 0x00, 0xde, '_', 0,
				 0x00, 0x2f };

	ok(!ntfs_name_units_allowed(u, 6) && !ntfs_name_units_allowed(u, 2) &&
	   ntfs_name_units_allowed(u, 1) && ntfs_name_units_allowed(u + 4, 2) &&
	   ntfs_name_units_allowed(u + 10, 1),
	   "name units: NUL and '/' refused, U+2F00 and a surrogate pair allowed");
	ok(ntfs_name_units_mend(u, 6) == 2 && !memcmp(u, want, sizeof(want)) &&
	   ntfs_name_units_allowed(u, 6) && ntfs_name_units_mend(u, 6) == 0,
	   "name units: mended, each NUL or '/' made '_' and nothing else");
}

/* a name in the DOS namespace is an 8.3 name: Windows' short names are,
 * the long names campaign21 found marked DOS or Win32&DOS are not */
static bool is_8dot3(const char *a)
{
	uint8_t u[2 * 64];
	size_t n = strlen(a);

	for (size_t i = 0; i < n; i++) {
		u[2 * i] = (uint8_t)a[i];
		u[2 * i + 1] = 0;
	}
	return ntfs_name_is_8dot3(u, (unsigned int)n);
}

static void test_name_8dot3(void)
{
	static const char *const good[] = { "LONGFI~4.DOC", "PROGRA~1", "A",
					     "ABCDEFGH.TXT", "$RECYC~1.BIN", "X.Y" };
	static const char *const bad[] = { "Long File Name Number 03.document",
					   "longfi~1.doc", "ABCDEFGHI", "A.TXTX",
					   "A.B.C", ".A", "A.", "A B.TXT", "A+B",
					   "A[1]", "" };
	int wrong = 0;

	for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++)
		wrong += !is_8dot3(good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		wrong += is_8dot3(bad[i]);
	ok(wrong == 0, "8.3 names: %d of 17 judged wrong (length, dots, case, space, DOS-forbidden characters)",
	   wrong);
}

/* a file's one DOS-type name may be whatever some writer stores: the
 * names ntfs-3g marks Win32&DOS when given their upper-case twin, and
 * Windows' lower-case 8.3 names; not over 12 units, nor a unit Win32
 * refuses in any name */
static bool may_be_dos(const char *a)
{
	uint8_t u[2 * 64];
	size_t n = strlen(a);

	for (size_t i = 0; i < n; i++) {
		u[2 * i] = (uint8_t)a[i];
		u[2 * i + 1] = 0;
	}
	return ntfs_name_may_be_dos(u, (unsigned int)n);
}

static void test_name_may_be_dos(void)
{
	static const char *const good[] = { "readme.txt", "Readme3.txt", "noext",
					     "abcdefghij", "a+b.txt", "c d.txt",
					     "x[1].txt", "e=f", "g;h", ".profile",
					     "notepad.exe", "desktop.ini",
					     "LONGFI~55.DO", "LONGFI~4.DOC" };
	static const char *const bad[] = { "Long File Name 3.document",
					   "LONGFI~55.DOC", "", "a?b", "a*b", "a:b",
					   "a<b", "a>b", "a|b", "a\\b", "a/b",
					   "a\"b", "a\tb" };
	int wrong = 0;

	for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++)
		wrong += !may_be_dos(good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		wrong += may_be_dos(bad[i]);
	ok(wrong == 0, "one DOS-type name: %d of 27 judged wrong (12 units, Win32-refused units)",
	   wrong);
}

static void test_fixups(void)
{
	uint8_t rec[1024], copy[1024];
	struct ntfs_rec r;

	ntfs_rec_init(&r, rec, sizeof(rec), 7, 7, NTFS_MFT_IN_USE, 1);
	rec[510] = 0x12; rec[511] = 0x34; rec[1022] = 0x56; rec[1023] = 0x78;
	memcpy(copy, rec, sizeof(rec));
	ntfs_fixup_apply(rec, sizeof(rec), 0x0203);
	ok(rd16(rec + 0x30) == 0x0203 && rd16(rec + 510) == 0x0203 &&
	   rd16(rec + 1022) == 0x0203, "fixup: usn in the array and at each stride end");
	ok(rd16(rec + 0x32) == 0x3412 && rd16(rec + 0x34) == 0x7856,
	   "fixup: original stride ends saved in the array");
	ok(ntfs_fixup_remove(rec, sizeof(rec)) == 0 &&
	   memcmp(rec + 0x38, copy + 0x38, sizeof(rec) - 0x38) == 0,
	   "fixup: removal restores the record");
	ntfs_fixup_apply(rec, sizeof(rec), 5);
	rec[1022] ^= 1;
	memcpy(copy, rec, sizeof(rec));
	ok(ntfs_fixup_remove(rec, sizeof(rec)) == -1, "fixup: a torn stride is detected");
	ok(memcmp(rec, copy, sizeof(rec)) == 0, "fixup: a torn record is left as read");
	{
		uint32_t first = 99;

		ok(ntfs_fixup_force(rec, sizeof(rec), &first) == 1 && first == 1 &&
		   rd16(rec + 510) == 0x3412 && rd16(rec + 1022) == 0x7856,
		   "fixup: forced removal restores every stride end, names torn stride 1");
	}
}

/* a framed attribute with each kind of fault, and its in-place repair */
static void test_repair(void)
{
	uint8_t rec[1024], *a;
	struct ntfs_rec r;
	struct ntfs_run runs[2] = { { 100, 8 }, { 200, 4 } }, got[4];
	struct ntfs_sizes sz;
	char why[NTFS_WHY];
	size_t n, stop;
	uint32_t off, len;

	ntfs_rec_init(&r, rec, sizeof(rec), 70, 1, NTFS_MFT_IN_USE, 1);
	ok(ntfs_rec_add_resident(&r, NTFS_AT_STANDARD_INFORMATION, NULL, rec, 72, 0) != NULL &&
	   ntfs_rec_add_nonresident(&r, NTFS_AT_DATA, NULL, runs, 2, 12 * 4096,
				    12 * 4096 - 100, 12 * 4096 - 100) == 0,
	   "repair: a record with $SI and a 12-cluster $DATA");
	off = 0x38 + 0x60;	/* $SI: 24 header + 72 value */
	a = rec + off;
	ok(ntfs_attr_frame(rec, rd32(rec + 0x18), off, &len, why) == 1 && rd32(a) == 0x80,
	   "repair: $DATA framed at 0x98");
	a[12] |= 0x10; a[13] |= 0x01;
	ok(ntfs_attr_fault((void *)a, off, 0x10, why) == NTFS_AF_FLAGS,
	   "repair: flags 0x110 are unknown");
	ok(ntfs_attr_clear_unknown_flags(a) == 0x0110 && rd16(a + 12) == 0,
	   "repair: unknown flag bits cleared");
	memcpy(a + 0x30, &(uint64_t){ htole64(13 * 4096) }, 8);
	memcpy(a + 0x38, &(uint64_t){ htole64(14 * 4096) }, 8);
	ok(ntfs_attr_fault((void *)a, off, 0x10, why) == NTFS_AF_SIZES,
	   "repair: data > allocated is a size fault");
	ok(ntfs_attr_clamp_sizes(a, 12 * 4096, &sz) && sz.alloc == 12 * 4096 &&
	   sz.data == 12 * 4096 && sz.init == 12 * 4096 &&
	   ntfs_attr_fault((void *)a, off, 0x10, why) == NTFS_AF_NONE,
	   "repair: sizes clamped to initialized = data = allocated");
	/* second run moved outside a 150-cluster volume */
	n = 0;
	stop = ntfs_mp_valid_prefix(a + rd16(a + 0x20), len - rd16(a + 0x20), 150,
				    got, 4, &n);
	ok(n == 1 && got[0].lcn == 100 && got[0].len == 8 && stop == 3,
	   "repair: valid prefix of the runlist is the first run (stops at byte 3)");
	ntfs_attr_cut_runs(a, rd16(a + 0x20) + (uint32_t)stop, got, n, 4096);
	ok(a[rd16(a + 0x20) + 3] == 0 && rd64(a + 0x18) == 7 && rd64(a + 0x28) == 8 * 4096 &&
	   rd64(a + 0x30) == 8 * 4096 && rd64(a + 0x38) == 8 * 4096,
	   "repair: runlist cut after run 0: VCNs 0-7, sizes 32 KiB");
	a[10] = 0xf0; a[11] = 0xff; a[9] = 1;	/* name far outside */
	ok(ntfs_attr_fault((void *)a, off, 0x10, why) == NTFS_AF_NAME,
	   "repair: a name outside the attribute");
	ntfs_rec_remove_attr(rec, sizeof(rec), off);
	ok(rd32(rec + off) == NTFS_AT_END && rd32(rec + 0x18) == off + 8,
	   "repair: attribute removed, end marker moved up");
	ok(ntfs_rec_end_at(rec, sizeof(rec), 0x38) == 0 &&
	   rd32(rec + 0x38) == NTFS_AT_END && rd32(rec + 0x18) == 0x40 && rec[0x40] == 0,
	   "repair: record ended at its first attribute");
	ok(ntfs_rec_end_at(rec, sizeof(rec), sizeof(rec) - 4) == -1,
	   "repair: no end marker where it does not fit");
}

static void test_header_repair(void)
{
	uint8_t rec[1024];
	struct ntfs_rec r;
	char what[NTFS_WHY];

	ntfs_rec_init(&r, rec, sizeof(rec), 70, 1, NTFS_MFT_IN_USE, 1);
	ntfs_rec_add_resident(&r, NTFS_AT_STANDARD_INFORMATION, NULL, rec, 72, 0);
	ntfs_fixup_apply(rec, sizeof(rec), 9);
	rec[6] = 2;	/* usa_count: one stride too few */
	ok(ntfs_usa_repair(rec, sizeof(rec), what) == 0 && rd16(rec + 6) == 3 &&
	   rd16(rec + 4) == 0x30 && rd16(rec + 510) == 0 && strstr(what, "at 48 with 3"),
	   "usa repair: the count the strides say, fixups removed (%s)", what);
	ntfs_fixup_apply(rec, sizeof(rec), 9);
	rec[1022] ^= 1;
	rec[6] = 2;
	ok(ntfs_usa_repair(rec, sizeof(rec), what) == -1,
	   "usa repair: refused when a stride end disagrees");
	ntfs_fixup_remove(rec, sizeof(rec));	/* fails: torn; clean it by hand */
	rec[1022] ^= 1;
	memcpy(rec + 0x1c, &(uint32_t){ htole32(1023) }, 4);
	memcpy(rec + 0x18, &(uint32_t){ htole32(0x9c) }, 4);	/* not 8-aligned */
	ok(ntfs_file_header_repair(rec, sizeof(rec), what) == 0 &&
	   rd32(rec + 0x1c) == 1024 && rd32(rec + 0x18) == 0x38 + 0x60 + 8,
	   "header repair: allocated size and bytes in use from the frames (%s)", what);
}

static void test_record(void)
{
	uint8_t rec[4096];
	struct ntfs_rec r;
	uint8_t v[8] = { 1, 2, 3 };

	ntfs_rec_init(&r, rec, 1024, 5, 5, NTFS_MFT_IN_USE | NTFS_MFT_IS_DIRECTORY, 1);
	ok(rd32(rec) == NTFS_MAGIC_FILE && rd16(rec + 4) == 0x30 && rd16(rec + 6) == 3,
	   "record: FILE magic, USA at 0x30 with 3 entries (1024 bytes)");
	ok(rd16(rec + 0x14) == 0x38 && rd32(rec + 0x18) == 0x40 && rd32(rec + 0x1c) == 1024 &&
	   rd32(rec + 0x38) == 0xffffffff, "record: attributes at 0x38, 0x40 in use, end marker");
	ok(rd16(rec + 0x10) == 5 && rd16(rec + 0x12) == 1 && rd16(rec + 0x16) == 3 &&
	   rd32(rec + 0x2c) == 5, "record: sequence, links, flags, number");
	ok(ntfs_rec_add_resident(&r, NTFS_AT_BITMAP, "$I30", v, 8, 0) != NULL &&
	   rd32(rec + 0x38) == 0xb0 && rd32(rec + 0x3c) == 0x28 && rd16(rec + 0x38 + 0x14) == 0x20 &&
	   rd16(rec + 0x38 + 0x18) == '$' && rd32(rec + 0x60) == 0xffffffff &&
	   rd32(rec + 0x18) == 0x68, "record: named resident attribute layout");
	ntfs_rec_init(&r, rec, 4096, 0, 1, NTFS_MFT_IN_USE, 1);
	ok(rd16(rec + 6) == 9 && rd16(rec + 0x14) == 0x48,
	   "record: 4096-byte record has 9 USA entries, attributes at 0x48");
}

/* base and extension records by the header's 8-byte base reference: an
 * extension record of $MFT names record 0 with sequence 1 */
static void test_record_base(void)
{
	uint8_t rec[1024];
	struct ntfs_rec r;
	char why[NTFS_WHY];
	uint64_t ref = htole64(NTFS_MREF(0, 1));

	ntfs_rec_init(&r, rec, 1024, 17, 3, NTFS_MFT_IN_USE, 1);
	ok(ntfs_record_is_base(rec) && ntfs_record_file(rec, 17) == 17 &&
	   !ntfs_record_listed(rec, 0, NTFS_MREF(17, 3), why),
	   "record base: a zero reference is a base record, its own file");
	memcpy(rec + 0x20, &ref, 8);
	ok(!ntfs_record_is_base(rec) && ntfs_record_file(rec, 17) == 0,
	   "record base: reference 0 with sequence 1 is an extension of $MFT");
	ok(ntfs_record_listed(rec, 0, NTFS_MREF(17, 3), why) &&
	   ntfs_record_listed(rec, 0, 17, why),
	   "record base: listed by its base with its sequence, or none given");
	ok(!ntfs_record_listed(rec, 0, NTFS_MREF(17, 4), why) && strstr(why, "sequence number 3"),
	   "record base: a list entry naming another sequence number is refused (%s)", why);
	ok(!ntfs_record_listed(rec, 5, NTFS_MREF(17, 3), why),
	   "record base: an extension of another base is refused (%s)", why);
}

/* an attribute named in UTF-16, as list entries hold names */
static void test_attr_extent_u16(void)
{
	uint8_t rec[1024];
	struct ntfs_rec r;
	struct ntfs_run run = { 100, 4 };
	const uint8_t i30[] = { '$', 0, 'I', 0, '3', 0, '0', 0 };
	const uint8_t i31[] = { '$', 0, 'I', 0, '3', 0, '1', 0 };
	const struct ntfs_attr_header *a;

	ntfs_rec_init(&r, rec, 1024, 20, 1, NTFS_MFT_IN_USE, 1);
	ok(ntfs_rec_add_nonresident(&r, NTFS_AT_INDEX_ALLOCATION, "$I30", &run, 1,
				    4 * 4096, 4 * 4096, 4 * 4096) == 0,
	   "extent u16: $I30's allocation added");
	a = ntfs_attr_extent_u16(rec, NTFS_AT_INDEX_ALLOCATION, i30, 4, 0);
	ok(a && le32toh(a->type) == NTFS_AT_INDEX_ALLOCATION,
	   "extent u16: found by its UTF-16 name at VCN 0");
	ok(!ntfs_attr_extent_u16(rec, NTFS_AT_INDEX_ALLOCATION, i31, 4, 0) &&
	   !ntfs_attr_extent_u16(rec, NTFS_AT_INDEX_ALLOCATION, i30, 3, 0) &&
	   !ntfs_attr_extent_u16(rec, NTFS_AT_INDEX_ALLOCATION, i30, 4, 1) &&
	   !ntfs_attr_extent_u16(rec, NTFS_AT_INDEX_ALLOCATION, NULL, 0, 0),
	   "extent u16: another name, length or VCN, or no name: none");
}

static void test_runlist(void)
{
	struct ntfs_run a[3] = { { 4, 7 }, { -1, 16 }, { 2, 0x300 } }, d[4];
	struct ntfs_run hole = { -1, 16383 };
	uint8_t mp[64];
	int n = ntfs_mp_encode(a, 3, mp, sizeof(mp));

	ok(n == 10 && !memcmp(mp, "\x11\x07\x04\x01\x10\x12\x00\x03\xfe\x00", 10),
	   "runlist: mapping pairs with a hole and a negative delta");
	ok(ntfs_mp_decode(mp, (size_t)n, d, 4) == 3 && d[0].lcn == 4 && d[1].lcn == -1 &&
	   d[2].lcn == 2 && d[2].len == 0x300, "runlist: decode round trip");
	n = ntfs_mp_encode(&hole, 1, mp, sizeof(mp));
	ok(n == 4 && !memcmp(mp, "\x02\xff\x3f\x00", 4), "runlist: $Bad's hole of 16383 clusters");
	ok(ntfs_mp_encode(a, 3, mp, 5) == -1, "runlist: overflow is reported");
	ok(!ntfs_runs_past(a, 3, 0x302) && ntfs_runs_past(a, 3, 0x301) &&
	   !ntfs_runs_past(&hole, 1, 1) && !ntfs_runs_past(a, 0, 0),
	   "runlist: runs past a truncated device's end (holes never)");
}

/* extents of one attribute, joined in VCN order (given out of order) */
static void test_extents_join(void)
{
	struct ntfs_run r0[2] = { { 10, 3 }, { 20, 2 } }, r1[1] = { { 40, 4 } };
	struct ntfs_run r2[1] = { { 50, 1 } }, *out = NULL;
	struct ntfs_attr_extent x[3] = {
		{ 5, 8, r1, 1 }, { 0, 4, r0, 2 }, { 9, 9, r2, 1 },
	};
	struct ntfs_attr_extent empty[1] = { { 0, -1, NULL, 0 } };
	char why[NTFS_WHY];
	long n = ntfs_extents_join(x, 3, &out, why);

	ok(n == 4 && out[0].lcn == 10 && out[1].lcn == 20 && out[2].lcn == 40 &&
	   out[3].lcn == 50, "extents: joined in VCN order");
	free(out);
	x[2].lowest_vcn = x[2].highest_vcn = 10;
	ok(ntfs_extents_join(x, 3, &out, why) == -1 && !out,
	   "extents: a gap between two extents is refused (%s)", why);
	x[2].lowest_vcn = x[2].highest_vcn = 9;
	x[0].highest_vcn = 9;
	ok(ntfs_extents_join(x, 3, &out, why) == -1,
	   "extents: an extent longer than its runs is refused (%s)", why);
	ok(ntfs_extents_join(empty, 1, &out, why) == 0,
	   "extents: an empty attribute (highest VCN -1) has no runs");
	free(out);
}

static void test_boot(void)
{
	struct ntfs_boot_sector bs;
	struct ntfs_geometry g = { 512, 4096, 1024, 4096, 131072, 16383 };
	const uint8_t *b = (const uint8_t *)&bs;

	ok(sizeof(bs) == 512, "boot: 512-byte structure");
	ntfs_boot_build(&bs, &g, 4, 8191, 0x1122334455667788ULL, 63, 255, 63);
	ok(!memcmp(b, "\xeb\x52\x90NTFS    ", 11) && rd16(b + 0x0b) == 512 && b[0x0d] == 8 &&
	   b[0x15] == 0xf8 && rd16(b + 0x1fe) == 0xaa55, "boot: jump, OEM id, geometry, signature");
	ok(rd64(b + 0x28) == 131071 && rd64(b + 0x30) == 4 && rd64(b + 0x38) == 8191,
	   "boot: sectors exclude the backup, MFT and mirror clusters");
	ok((int8_t)b[0x40] == -10 && b[0x44] == 1 && rd64(b + 0x48) == 0x1122334455667788ULL,
	   "boot: 1024-byte records as 2^10, one-cluster index blocks, serial");
	ok(rd16(b + 0x18) == 63 && rd16(b + 0x1a) == 255 && rd32(b + 0x1c) == 63 &&
	   b[0x24] == 0x80 && b[0x26] == 0x80, "boot: CHS, hidden sectors, drive, signature");
	g.cluster_size = 2u << 20;
	ntfs_boot_build(&bs, &g, 1, 2, 0, 0, 0, 0);
	ok(b[0x0d] == 0xf4 && (int8_t)b[0x44] == -12,
	   "boot: 2 MiB clusters of 512-byte sectors encoded as 2^12, index blocks as 2^-12");
	g.sector_size = 4096; g.cluster_size = 4096; g.mft_record_size = 4096;
	ntfs_boot_build(&bs, &g, 1, 2, 0, 0, 0, 0);
	ok(rd16(b + 0x0b) == 4096 && b[0x0d] == 1 && b[0x40] == 1,
	   "boot: 4096-byte sectors, one-sector clusters and one-cluster records");
}

static void test_collation_index(void)
{
	static uint16_t t[NTFS_UPCASE_LEN];
	const uint16_t mft[] = { '$', 'M', 'F', 'T' }, mirr[] = { '$', 'M', 'F', 'T', 'M', 'i', 'r', 'r' };
	const uint16_t dot[] = { '.' }, abc[] = { 'a', 'b', 'c' }, ABD[] = { 'A', 'B', 'D' };
	const uint16_t Abc[] = { 'A', 'b', 'c' };
	uint8_t e[64];

	ntfs_upcase_build(t);
	ok(ntfs_collate_file_name(t, mft, 4, mirr, 8) < 0, "collate: a prefix sorts first");
	ok(ntfs_collate_file_name(t, mft, 4, dot, 1) < 0, "collate: '$' before '.'");
	ok(ntfs_collate_file_name(t, abc, 3, ABD, 3) < 0 && ntfs_collate_file_name(t, ABD, 3, abc, 3) > 0,
	   "collate: case-insensitive order");
	ok(ntfs_collate_file_name(t, Abc, 3, abc, 3) < 0 && ntfs_collate_file_name(t, abc, 3, abc, 3) == 0,
	   "collate: folded ties broken by exact units");
	ok(ntfs_ie_end(e, true, 0) == 0x18 && rd16(e + 8) == 0x18 && rd16(e + 12) == 3,
	   "index: end entry with a child node");
	ok(ntfs_ie_view(e, "\x01\x01\0\0", 4, "abcdefghijklmnopqrst", 20) == 0x28 &&
	   rd16(e) == 0x14 && rd16(e + 2) == 20 && rd16(e + 8) == 0x28 && rd16(e + 10) == 4,
	   "index: $SII-style view entry layout");
}

static void test_sd_hash(void)
{
	/* a descriptor and its $SDH hash as stored by ntfs-3g's mkntfs */
	static const uint8_t sd[] =
		"\x01\x00\x04\x80\x48\x00\x00\x00\x58\x00\x00\x00\x00\x00\x00\x00"
		"\x14\x00\x00\x00\x02\x00\x34\x00\x02\x00\x00\x00\x00\x00\x14\x00"
		"\x89\x00\x12\x00\x01\x01\x00\x00\x00\x00\x00\x05\x12\x00\x00\x00"
		"\x00\x00\x18\x00\x89\x00\x12\x00\x01\x02\x00\x00\x00\x00\x00\x05"
		"\x20\x00\x00\x00\x20\x02\x00\x00\x01\x02\x00\x00\x00\x00\x00\x05"
		"\x20\x00\x00\x00\x20\x02\x00\x00\x01\x02\x00\x00\x00\x00\x00\x05"
		"\x20\x00\x00\x00\x20\x02\x00\x00";

	ok(ntfs_sd_hash(sd, sizeof(sd) - 1) == 0xf80312f0u,
	   "secure: descriptor hash matches mkntfs' $SDH key");
}

/* planner invariants over sizes and cluster sizes: every area inside the
 * volume, no two overlapping, the MFT zone after the MFT, Windows-like
 * $LogFile sizes, at most 2^32 - 1 clusters */
static void test_planner(void)
{
	static const uint64_t sizes[] = { 1ULL << 20, 3ULL << 20, 100ULL << 20,
		1ULL << 30, 100ULL << 30, 2ULL << 40, 256ULL << 40 };
	static const uint32_t cls[] = { 0, 512, 4096, 65536, 2u << 20 };
	struct fsf_log quiet = { "test", -1 };
	int plans = 0, bad = 0, refused = 0;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (size_t j = 0; j < sizeof(cls) / sizeof(cls[0]); j++) {
			struct ntfs_mkfs_opts o = { .cluster_size = cls[j], .log = &quiet };
			struct ntfs_plan p;

			memset(&p, 0, sizeof(p));
			if (ntfs_plan_volume(&p, &o, sizes[i], 512)) {
				refused++;
				continue;
			}
			plans++;
			for (int a = 0; a < AREA_COUNT; a++) {
				const struct ntfs_extent *x = &p.ext[a];

				if (x->lcn < 0 || x->clusters == 0 ||
				    (uint64_t)x->lcn + x->clusters > p.g.nr_clusters)
					bad++;
				for (int b = a + 1; b < AREA_COUNT; b++) {
					const struct ntfs_extent *y = &p.ext[b];

					if (x->lcn < y->lcn + (int64_t)y->clusters &&
					    y->lcn < x->lcn + (int64_t)x->clusters)
						bad++;
				}
			}
			if (p.g.nr_clusters > 0xffffffffULL || p.ext[AREA_BOOT].lcn != 0 ||
			    p.mft_zone_end < (uint64_t)p.ext[AREA_MFT].lcn ||
			    p.mirr_records * p.g.mft_record_size < 4096 ||
			    (sizes[i] >= (12ULL << 30) && p.size[AREA_LOGFILE] != ntfs_align(64u << 20, p.g.cluster_size)))
				bad++;
		}
	ok(plans >= 25 && bad == 0,
	   "planner: %d plans (%d refused), areas inside the volume and disjoint", plans, refused);
	{
		struct ntfs_mkfs_opts o = { .log = &quiet };
		struct ntfs_plan p;

		memset(&p, 0, sizeof(p));
		ok(ntfs_plan_volume(&p, &o, 64ULL << 20, 512) == 0 && p.g.nr_clusters == 16383 &&
		   p.ext[AREA_MIRR].lcn == 8191 && p.size[AREA_LOGFILE] == (2u << 20) &&
		   p.size[AREA_BITMAP] == 2048 && p.size[AREA_MFT] == 27 * 1024,
		   "planner: 64 MiB volume: 16383 clusters, mirror in the middle, 2 MiB log");
		memset(&p, 0, sizeof(p));
		ok(ntfs_plan_volume(&p, &o, 256ULL << 40, 512) == 0 && p.g.cluster_size == 65536 &&
		   p.g.nr_clusters == 0xffffffffULL, "planner: 256 TiB gets 64 KiB clusters");
	}
}

/* index_build.c, checked with the read side: every name comes back once,
 * in order, from a tree whose leaves are all at the same depth */
struct ib_walk {
	const struct ntfs_ib_result *r;
	uint32_t next;			/* the next name expected */
	int leaf_depth, bad;
	uint8_t seen[512];
};

static void ib_visit(struct ib_walk *w, const uint8_t *ents, uint32_t len, int depth)
{
	struct ntfs_ie_view ie;
	char why[NTFS_WHY];
	uint32_t off = 0;
	int r;

	do {
		r = ntfs_ie_next(ents, len, &off, true, &ie, why);
		if (r < 0) {
			w->bad++;
			return;
		}
		if (ie.child_vcn >= 0) {
			uint32_t b = (uint32_t)ie.child_vcn;	/* 4 KiB blocks, 4 KiB clusters */
			uint8_t blk[4096];
			const uint8_t *e;
			uint32_t el;

			if (b >= w->r->nblocks || w->seen[b]++) {
				w->bad++;
				return;
			}
			memcpy(blk, w->r->blocks + (size_t)b * 4096, 4096);
			if (ntfs_record_check(blk, 4096, NTFS_MAGIC_INDX, why) != NTFS_REC_OK ||
			    ntfs_index_block_parse(blk, 4096, b, &e, &el, why)) {
				w->bad++;
				return;
			}
			ib_visit(w, e, el, depth + 1);
		} else if (r == 0) {
			if (w->leaf_depth < 0)
				w->leaf_depth = depth;
			else if (w->leaf_depth != depth)
				w->bad++;
		}
		if (r == 1) {
			char want[8];

			snprintf(want, sizeof(want), "n%05u", w->next++);
			for (int i = 0; i < 6; i++)
				if (ie.name_len != 6 || ie.name[2 * i] != (uint8_t)want[i])
					w->bad++;
			if ((ie.mref & 0xffffffffffffULL) != 100u + w->next - 1)
				w->bad++;
		}
	} while (r == 1);
}

static void test_index_build(void)
{
	static uint8_t keys[3000][sizeof(struct ntfs_file_name) + 12];
	static struct ntfs_ib_entry e[3000];
	const uint32_t counts[] = { 0, 3, 3000, 0, 3 };
	const uint32_t rooms[] = { 480, 480, 200, 480, 480 };
	const bool large[] = { false, false, false, true, true };

	for (uint32_t i = 0; i < 3000; i++) {
		struct ntfs_file_name fn;
		char name[8];

		memset(&fn, 0, sizeof(fn));
		fn.parent_directory = htole64(5);
		fn.name_length = 6;
		fn.name_type = NTFS_NS_WIN32;
		memcpy(keys[i], &fn, sizeof(fn));
		snprintf(name, sizeof(name), "n%05u", i);
		for (int k = 0; k < 6; k++) {
			keys[i][sizeof(fn) + 2 * k] = (uint8_t)name[k];
			keys[i][sizeof(fn) + 2 * k + 1] = 0;
		}
		e[i].mref = 100u + i;
		e[i].key = keys[i];
		e[i].key_len = sizeof(keys[i]);
	}
	for (int t = 0; t < 5; t++) {
		struct ntfs_ib_result r;
		struct ntfs_index_root root;
		struct ib_walk w = { .r = &r, .leaf_depth = -1 };
		const uint8_t *ents;
		uint32_t elen;
		char why[NTFS_WHY];
		int ret = ntfs_index_build_shape(e, counts[t], rooms[t], 4096, 4096,
						 large[t], &r);

		ok(ret == 0 && r.root_len <= rooms[t] &&
		   !ntfs_index_root_parse(r.root, r.root_len, &root, &ents, &elen, why) &&
		   (!large[t] || (r.large && r.nblocks == 1 && r.depth == 1)),
		   "index build: %u entries, a %u-byte root%s", counts[t], rooms[t],
		   large[t] ? ", large asked" : "");
		if (ret)
			continue;
		ib_visit(&w, ents, elen, 0);
		ok(!w.bad && w.next == counts[t] && (r.nblocks > 0) == r.large &&
		   (counts[t] < 3000 || (r.depth >= 2 && r.nblocks > 40)),
		   "index build: %u names back in order, balanced (depth %u, %u blocks)",
		   w.next, r.depth, r.nblocks);
		ntfs_index_build_free(&r);
	}
	{
		struct ntfs_ib_result r;
		static uint8_t big[sizeof(struct ntfs_file_name) + 510];
		struct ntfs_ib_entry one = { .mref = 1, .key = big, .key_len = sizeof(big) };

		memset(big, 0, sizeof(big));
		big[offsetof(struct ntfs_file_name, name_length)] = 255;
		ok(ntfs_index_build(&one, 1, 100, 512, 4096, &r) == -EINVAL,
		   "index build: an entry larger than a block is refused");
	}
}

/* the walker over what the builder made: a view index of ULONG keys */
struct bt_seen {
	unsigned int faults[NTFS_BT_SHAPE + 1];
	uint32_t next, bad;
};

static int bt_read(void *arg, uint64_t byte, uint32_t len, void *buf)
{
	const struct ntfs_ib_result *r = arg;

	if (byte + len > (uint64_t)r->nblocks * 4096)
		return -1;
	memcpy(buf, r->blocks + byte, len);
	return 0;
}

static int bt_entry(void *arg, const struct ntfs_ie_view *ie)
{
	struct bt_seen *s = arg;
	uint32_t k;

	memcpy(&k, ie->key, 4);
	if (ie->key_len != 4 || le32toh(k) != 7 * s->next++)
		s->bad++;
	return 0;
}

static void bt_fault(void *arg, enum ntfs_bt_fault f, const struct ntfs_ie_view *a,
		     const struct ntfs_ie_view *b, const char *why)
{
	(void)a;
	(void)b;
	(void)why;
	((struct bt_seen *)arg)->faults[f]++;
}

static unsigned int bt_run(struct ntfs_ib_result *r, const uint8_t *bitmap,
			   struct bt_seen *s)
{
	struct ntfs_bt_ops ops = { .read = bt_read, .entry = bt_entry, .fault = bt_fault };
	struct ntfs_bt t = { .root = r->root, .root_len = r->root_len, .type = 0,
			     .collation = NTFS_COLLATION_NTOFS_ULONG,
			     .has_alloc = r->large,
			     .alloc_size = (uint64_t)r->nblocks * 4096,
			     .cluster_size = 4096, .bitmap = bitmap,
			     .bitmap_len = bitmap ? (r->nblocks + 7) / 8 : 0,
			     .ops = &ops, .arg = s, .read_arg = r };

	memset(s, 0, sizeof(*s));
	if (ntfs_bt_walk(&t))
		return 1000;
	ntfs_bt_free(&t);
	return t.faults;
}

static int64_t free_at_500(void *arg, uint64_t count)
{
	(void)arg;
	(void)count;
	return 500;
}

/* The old allocation is reused only when its clusters are surely the
 * index's own: with cross-links left (NO_REUSE) new ones are taken. */
static void test_index_place(void)
{
	static uint32_t keys[300];
	static struct ntfs_ib_entry e[300];
	const struct ntfs_geometry g = { .cluster_size = 4096, .mft_record_size = 1024,
					 .index_block_size = 4096, .nr_clusters = 1000 };
	struct ntfs_cluster_source src = { .find_free = free_at_500,
					   .dev_clusters = 1000 };
	const struct ntfs_run old = { .lcn = 10, .len = 100 };
	const struct index_shape sh = { false, false, false };
	struct index_plan p;
	char why[NTFS_WHY];

	for (uint32_t i = 0; i < 300; i++) {
		keys[i] = htole32(i);
		e[i] = (struct ntfs_ib_entry){ .mref = i, .key = (const uint8_t *)&keys[i],
					       .key_len = 4, .data = (const uint8_t *)&keys[i] };
	}
	for (int nr = 0; nr < 2; nr++) {
		src.no_reuse = nr;
		memset(&p, 0, sizeof(p));
		ok(!ntfs_index_plan_build(&g, &src, &p, 0, NTFS_COLLATION_NTOFS_ULONG, e, 300,
					  200, &old, 1, &sh, why) && p.res.large &&
		   p.reuse == !nr && p.runs[0].lcn == (nr ? 500 : 10),
		   "index placement: the old clusters %s", nr ? "not reused (cross-links left)" :
		   "reused");
		ntfs_index_plan_free(&p);
	}
}

/* A large view index (its record shared with another index) has a root
 * of only its end entry; a bitmap that does not fit its record resident
 * goes to clusters of its own, after the new allocation. */
static void test_index_low_root(void)
{
	enum { N = 40000 };
	static uint32_t keys[N];
	static uint8_t data[20];
	static struct ntfs_ib_entry e[N];
	const struct ntfs_geometry g = { .cluster_size = 4096, .mft_record_size = 1024,
					 .index_block_size = 4096, .nr_clusters = 100000 };
	const struct ntfs_cluster_source src = { .find_free = free_at_500,
						 .dev_clusters = 100000 };
	const struct index_shape sh = { false, false, false };
	struct index_plan p;
	char why[NTFS_WHY];
	bool fit;

	for (uint32_t i = 0; i < N; i++) {
		keys[i] = htole32(i);
		e[i] = (struct ntfs_ib_entry){ .mref = i, .key = (const uint8_t *)&keys[i],
					       .key_len = 4, .data = data, .data_len = 20 };
	}
	for (int full = 0; full < 2; full++) {
		memset(&p, 0, sizeof(p));
		/* 772 bytes taken: a resident bitmap of 56 bytes no longer fits */
		fit = !ntfs_index_plan_build(&g, &src, &p, 0, NTFS_COLLATION_NTOFS_ULONG, e, N,
					     full ? 772 : 200, NULL, 0, &sh, why);
		ok(fit && p.res.large && p.res.depth >= 2 &&
		   p.res.root_len == sizeof(struct ntfs_index_root) + sizeof(struct ntfs_index_entry) + 8 &&
		   p.bitmap_len == 56 && p.bitmap_nonres == full &&
		   (!full || (p.bitmap_run.lcn == 500 + (int64_t)p.runs[0].len &&
			      p.bitmap_run.len == 1)),
		   "index plan: %u views in %u blocks, root of its end entry, bitmap %s (%s)",
		   N, p.res.nblocks, full ? "in a cluster after them" : "resident", fit ? "" : why);
		ntfs_index_plan_free(&p);
	}
}

static void test_btree_walk(void)
{
	static uint32_t keys[2000];
	static struct ntfs_ib_entry e[2000];
	static uint8_t data[20], bitmap[256];
	struct ntfs_ib_spec spec = { .type = 0, .collation = NTFS_COLLATION_NTOFS_ULONG,
				     .root_room = 200, .block_size = 4096,
				     .cluster_size = 4096 };
	struct ntfs_ib_result r;
	struct bt_seen s;
	uint32_t t;
	int64_t v;

	for (uint32_t i = 0; i < 2000; i++) {
		keys[i] = htole32(7 * i);
		e[i] = (struct ntfs_ib_entry){ .mref = i, .key = (const uint8_t *)&keys[i],
					       .key_len = 4, .data = data, .data_len = 20 };
	}
	/* given in reverse, sorted back by the collation */
	for (uint32_t i = 0; i < 1000; i++) {
		struct ntfs_ib_entry x = e[i];

		e[i] = e[1999 - i];
		e[1999 - i] = x;
	}
	ntfs_ib_sort(e, 2000, &spec);
	ok(!ntfs_index_build_spec(&spec, e, 2000, &r) && r.depth >= 2,
	   "btree: 2000 ULONG keys built, depth %u, %u blocks", r.depth, r.nblocks);
	memset(bitmap, 0, sizeof(bitmap));
	for (uint32_t b = 0; b < r.nblocks; b++)
		bitmap[b / 8] |= (uint8_t)(1u << (b % 8));
	ok(bt_run(&r, bitmap, &s) == 0 && s.next == 2000 && !s.bad,
	   "btree: the walk finds every key in order, no fault");
	{
		/* a data size past what the runs map: a fault, and the walk
		 * (and its block count) stays inside the mapped bytes */
		struct ntfs_bt_ops ops = { .read = bt_read, .entry = bt_entry,
					   .fault = bt_fault };
		struct ntfs_bt bt = { .root = r.root, .root_len = r.root_len,
				     .collation = NTFS_COLLATION_NTOFS_ULONG,
				     .has_alloc = true, .alloc_size = 1ull << 45,
				     .alloc_mapped = (uint64_t)r.nblocks * 4096,
				     .cluster_size = 4096, .bitmap = bitmap,
				     .bitmap_len = (r.nblocks + 7) / 8, .ops = &ops,
				     .arg = &s, .read_arg = &r };

		memset(&s, 0, sizeof(s));
		ok(!ntfs_bt_walk(&bt) && bt.faults == 1 && s.faults[NTFS_BT_SHAPE] == 1 &&
		   s.next == 2000 && bt.nblocks == r.nblocks,
		   "btree: an allocation of 2^45 bytes with %u blocks mapped is a fault",
		   r.nblocks);
		ntfs_bt_free(&bt);
	}
	bitmap[0] &= (uint8_t)~1u;
	ok(bt_run(&r, bitmap, &s) == 1 && s.faults[NTFS_BT_BITMAP] == 1,
	   "btree: a cleared $BITMAP bit is found");
	bitmap[0] |= 1;
	memcpy(&v, r.blocks + 4096 + 0x10, 8);
	t = 99;
	memcpy(r.blocks + 4096 + 0x10, &(int64_t){ (int64_t)htole64(t) }, 8);
	ok(bt_run(&r, bitmap, &s) >= 1 && s.faults[NTFS_BT_VCN] == 1,
	   "btree: a block that says another VCN is found");
	memcpy(r.blocks + 4096 + 0x10, &v, 8);
	ntfs_index_build_free(&r);
	/* two keys out of place: in a leaf, and across a separator */
	{
		struct ntfs_ib_entry x = e[10];

		e[10] = e[11];
		e[11] = x;
	}
	ntfs_index_build_spec(&spec, e, 2000, &r);
	ok(bt_run(&r, NULL, &s) >= 1 && s.faults[NTFS_BT_ORDER] + s.faults[NTFS_BT_SEPARATOR] >= 1,
	   "btree: two swapped keys are out of order");
	ntfs_index_build_free(&r);
	ntfs_ib_sort(e, 2000, &spec);
	ntfs_index_build_spec(&spec, e, 2000, &r);
	{
		/* the first leaf's last key moved past the separator above it:
		 * swap it with the root's first separator in the entry array
		 * and rebuild gives the same shape, the keys in other places */
		const uint8_t *ents;
		uint32_t elen, off = 0;
		struct ntfs_index_root root;
		struct ntfs_ie_view ie;
		char why[NTFS_WHY];

		static uint8_t blk[4096];

		ntfs_index_root_parse(r.root, r.root_len, &root, &ents, &elen, why);
		/* the first node from the top holding a separator */
		while (ntfs_ie_next(ents, elen, &off, false, &ie, why) == 0 &&
		       ie.child_vcn >= 0 && (uint64_t)ie.child_vcn < r.nblocks) {
			memcpy(blk, r.blocks + (size_t)ie.child_vcn * 4096, 4096);
			if (ntfs_record_check(blk, 4096, NTFS_MAGIC_INDX, why) != NTFS_REC_OK ||
			    ntfs_index_block_parse(blk, 4096, ie.child_vcn, &ents, &elen, why))
				break;
			off = 0;
		}
		t = ie.key ? le32toh(*(const uint32_t *)(const void *)ie.key) / 7 : 0;
		ntfs_index_build_free(&r);
		if (t > 0 && t < 2000) {
			struct ntfs_ib_entry x = e[t];

			e[t] = e[t + 1];
			e[t + 1] = x;
		}
		ntfs_index_build_spec(&spec, e, 2000, &r);
		ok(t > 0 && bt_run(&r, NULL, &s) >= 1 && s.faults[NTFS_BT_SEPARATOR] >= 1,
		   "btree: a key on the wrong side of a separator is found");
		ntfs_index_build_free(&r);
	}
}

/* A restart page laid out by hand from the documented offsets (header:
 * magic 0, usa 4/6, chkdsk LSN 8, page sizes 0x10/0x14, restart area
 * offset 0x18, minor/major 0x1a/0x1c; area: LSN 0, clients 8, free and
 * in-use lists 0xa/0xc, flags 0xe, length 0x14, client array 0x16, file
 * size 0x18), fixups applied by hand with update sequence number 7. */
static void put16(uint8_t *p, uint16_t v) { v = htole16(v); memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { v = htole32(v); memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { v = htole64(v); memcpy(p, &v, 8); }

static void restart_page(uint8_t *pg, uint16_t in_use, uint16_t flags, uint64_t lsn)
{
	uint8_t *ra = pg + 0x30;

	memset(pg, 0, 4096);
	memcpy(pg, "RSTR", 4);
	put16(pg + 4, 0x1e);
	put16(pg + 6, 9);
	put32(pg + 0x10, 4096);
	put32(pg + 0x14, 4096);
	put16(pg + 0x18, 0x30);
	put16(pg + 0x1a, 1);
	put16(pg + 0x1c, 1);
	put64(ra, lsn);
	put16(ra + 8, 1);
	put16(ra + 0xa, 0xffff);
	put16(ra + 0xc, in_use);
	put16(ra + 0xe, flags);
	put32(ra + 0x10, 46);	/* 67 - bits of 0x1f0000 */
	put16(ra + 0x14, 0x30 + 0xa0);
	put16(ra + 0x16, 0x30);
	put64(ra + 0x18, 0x1f0000);
	put16(ra + 0x24, 0x30);
	put16(ra + 0x26, 0x40);
	put16(ra + 0x30 + 0x10, 0xffff);	/* client 0: no previous */
	put16(ra + 0x30 + 0x12, 0xffff);	/* ... and no next client */
	memcpy(ra + 0x30 + 0x20, "N\0T\0F\0S\0", 8);
	pg[4096 - 2] = 0xab;	/* a tail value the fixup must restore */
	for (int i = 1; i <= 8; i++) {
		memcpy(pg + 0x1e + 2 * i, pg + 512 * i - 2, 2);
		put16(pg + 512 * i - 2, 7);
	}
	put16(pg + 0x1e, 7);
}

/* The write side: what it builds is read back as a clean, closed log,
 * and the bytes that matter are where the documentation puts them. */
static void test_logfile_write(void)
{
	static uint8_t a[2 * 65536 + 4096], b[2 * 65536 + 4096];
	struct ntfs_log_info li;
	int n;

	memset(a, 0xff, sizeof(a));
	n = ntfs_logfile_restart_build(a, sizeof(a), 2 << 20, 4096, 0x12345);
	ok(n == 8192 && !memcmp(a, "RSTR", 4) && a[8192] == 0xff &&
	   a[0x30 + 0x0a] == 0 && a[0x30 + 0x0b] == 0 &&		/* free: client 0 */
	   a[0x30 + 0x0c] == 0xff && a[0x30 + 0x0d] == 0xff &&	/* none in use */
	   a[0x30 + 0x0e] == 0x02 && a[0x30 + 0x10] == 67 - 22 &&
	   !memcmp(a + 0x30 + 0x30 + 0x20, "N\0T\0F\0S\0", 8) &&
	   !memcmp(a + 4096, "RSTR", 4),
	   "logfile write: two RSTR pages, closed log, clean flag, client NTFS");
	memcpy(b, a, sizeof(a));
	ok(ntfs_logfile_parse(b, 3 * 4096, &li) == NTFS_LOG_CLEAN && li.page == 0 &&
	   li.current_lsn == 0x12345 && li.file_size == 2 << 20 &&
	   li.client_in_use == NTFS_LOG_NO_CLIENT && li.major == 1 && li.minor == 1 &&
	   li.system_page_size == 4096 && li.log_page_size == 4096,
	   "logfile write: read back as clean, first page, LSN and size kept");
	memcpy(b, a, sizeof(a));	/* the parse removed both pages' fixups */
	ok(ntfs_restart_page_check(b + 4096, 4096, &li) == 0 &&
	   li.state == NTFS_LOG_CLEAN, "logfile write: the second page is valid too");
	memset(b, 0xff, sizeof(b));
	ntfs_logfile_restart_build(b, sizeof(b), 2 << 20, 4096, 0x12345);
	ok(!memcmp(a, b, sizeof(a)), "logfile write: the same input gives the same bytes");

	memset(a, 0xff, sizeof(a));
	n = ntfs_logfile_restart_build(a, sizeof(a), (300 << 10) + 1000, 8192, 7);
	ok(n == 16384 && ntfs_logfile_parse(a, sizeof(a), &li) == NTFS_LOG_CLEAN &&
	   li.system_page_size == 8192 && li.log_page_size == 4096 &&
	   li.file_size == 300 << 10,
	   "logfile write: 8 KiB system pages, 4 KiB log pages, size in whole log pages");
	ok(ntfs_logfile_restart_build(a, sizeof(a), 49 * 4096, 4096, 0) < 0 &&
	   ntfs_logfile_restart_build(a, 8191, 2 << 20, 4096, 0) < 0 &&
	   ntfs_logfile_restart_build(a, sizeof(a), 2 << 20, 3000, 0) < 0,
	   "logfile write: too small a journal or buffer, odd page size refused");
}

static void test_logfile(void)
{
	static uint8_t log[3 * 4096];
	struct ntfs_log_info li;

	memset(log, 0xff, sizeof(log));
	ok(ntfs_logfile_parse(log, sizeof(log), &li) == NTFS_LOG_EMPTY,
	   "logfile: all 0xff is empty");

	restart_page(log, 0, 0x0002, 0x1000);
	restart_page(log + 4096, 0, 0x0002, 0x1000);
	ok(ntfs_logfile_parse(log, sizeof(log), &li) == NTFS_LOG_CLEAN &&
	   li.page == 0 && li.current_lsn == 0x1000 && li.system_page_size == 4096 &&
	   li.major == 1 && li.minor == 1 && log[4094] == 0xab,
	   "logfile: open log with the clean flag is clean, fixups removed");

	restart_page(log, 0xffff, 0, 0x1000);
	restart_page(log + 4096, 0xffff, 0, 0x1000);
	ok(ntfs_logfile_parse(log, sizeof(log), &li) == NTFS_LOG_CLEAN,
	   "logfile: closed log (no client in use) is clean");

	restart_page(log, 0, 0, 0x1000);
	restart_page(log + 4096, 0, 0, 0x2000);
	ok(ntfs_logfile_parse(log, sizeof(log), &li) == NTFS_LOG_DIRTY &&
	   li.page == 1 && li.current_lsn == 0x2000,
	   "logfile: open log without the clean flag is dirty; newer page used");

	restart_page(log, 0, 0, 0x1000);
	memcpy(log, "RSTX", 4);
	restart_page(log + 4096, 0, 0x0002, 0x1000);
	ok(ntfs_logfile_parse(log, sizeof(log), &li) == NTFS_LOG_CLEAN &&
	   li.page == 1 && strstr(li.why, "magic"),
	   "logfile: bad first page, second used (%s)", li.why);
	memcpy(log + 4096, "XXXX", 4);
	ok(ntfs_logfile_parse(log, sizeof(log), &li) == NTFS_LOG_CORRUPT &&
	   strstr(li.why, "magic"), "logfile: both pages bad: corrupt (%s)", li.why);

	restart_page(log, 0, 0x0002, 0x1000);
	log[1024 - 1] ^= 1;	/* a torn sector */
	ok(ntfs_restart_page_check(log, 4096, &li) == -1 && strstr(li.why, "torn"),
	   "logfile: bad fixup rejected (%s)", li.why);

	restart_page(log, 0, 0x0002, 0x1000);
	put16(log + 0x18, 0xff8);	/* restart area at the page's end */
	ok(ntfs_restart_page_check(log, 4096, &li) == -1 && strstr(li.why, "restart area offset"),
	   "logfile: restart area offset out of bounds (%s)", li.why);

	restart_page(log, 0, 0x0002, 0x1000);
	put16(log + 6, 200);		/* usa beyond the first sector */
	ok(ntfs_restart_page_check(log, 4096, &li) == -1 && strstr(li.why, "update sequence array"),
	   "logfile: update sequence array out of bounds (%s)", li.why);

	restart_page(log, 0, 0x0002, 0x1000);
	put16(log + 0x30 + 8, 30);	/* 30 clients cannot fit 4096 bytes */
	ok(ntfs_restart_page_check(log, 4096, &li) == -1 && strstr(li.why, "overruns"),
	   "logfile: client array beyond the page (%s)", li.why);

	restart_page(log, 0, 0x0002, 0x1000);
	put32(log + 0x10, 65536);	/* page size larger than the bytes given */
	ok(ntfs_restart_page_check(log, 4096, &li) == -1,
	   "logfile: system page size beyond the buffer rejected (%s)", li.why);

	restart_page(log, 0, 0x0002, 0x1000);
	put16(log + 0x1c, 3);
	ok(ntfs_restart_page_check(log, 4096, &li) == -1 && strstr(li.why, "version"),
	   "logfile: version 3.1 rejected (%s)", li.why);

	restart_page(log, 5, 0x0002, 0x1000);
	ok(ntfs_restart_page_check(log, 4096, &li) == -1 && strstr(li.why, "client list"),
	   "logfile: in-use list head beyond the clients (%s)", li.why);

	restart_page(log, 0, 0x0002, 0x1000);
	put32(log + 0x30 + 0x10, 44);	/* LSN bits no longer 67 - 21 */
	ok(ntfs_restart_page_check(log, 4096, &li) == -1 && strstr(li.why, "sequence number bits"),
	   "logfile: sequence number bits inconsistent with the file size (%s)", li.why);

	{
		uint8_t *ra = log + 0x30;

		restart_page(log, 0, 0x0002, 0x1000);
		/* the fixup of sector 0 is not involved: offsets < 510 */
		put16(ra + 0x30 + 0x12, 0);	/* client 0 follows itself */
		ok(ntfs_restart_page_check(log, 4096, &li) == -1 && strstr(li.why, "in-use list"),
		   "logfile: looping client list (%s)", li.why);
	}

	restart_page(log, 0, 0, 0x1000);
	ok(ntfs_logfile_parse(log, 700, &li) == NTFS_LOG_CORRUPT,
	   "logfile: truncated journal is corrupt, not read beyond (%s)", li.why);

	test_logfile_write();
}

/* compression units (16 clusters) and LZNT1 chunk headers, by hand from
 * the format: a chunk header is 0x3000 | (bytes after it - 1), bit 15 set
 * when the chunk is compressed */
static void test_cunits(void)
{
	char why[NTFS_WHY];
	struct ntfs_cunit part[4];
	/* unit 0: 3 clusters then 13 holes; units 1-3 whole; unit 4: 4
	 * clusters then a hole; unit 5 all holes */
	struct ntfs_run shaped[] = { { 100, 3 }, { -1, 13 }, { 200, 52 }, { -1, 28 } };
	struct ntfs_run after_hole[] = { { -1, 9 }, { 300, 1 }, { -1, 6 } };
	struct ntfs_run short_tail[] = { { 400, 20 } };
	struct ntfs_run huge_hole[] = { { -1, 1ULL << 40 }, { 500, 2 }, { -1, 14 } };
	uint8_t buf[3 * 4096];
	long k;

	k = ntfs_cunits_partial(shaped, 4, 16, part, 4, why);
	ok(k == 2 && part[0].vcn == 0 && part[0].clusters == 3 &&
	   part[1].vcn == 64 && part[1].clusters == 4,
	   "cunits: two partly allocated units at VCN 0 (3) and 64 (4): %ld", k);
	ok(ntfs_cunits_partial(after_hole, 3, 16, part, 4, why) == -1 && strstr(why, "after a hole"),
	   "cunits: clusters after a hole in a unit (%s)", why);
	ok(ntfs_cunits_partial(short_tail, 1, 16, part, 4, why) == -1 && strstr(why, "whole compression units"),
	   "cunits: 20 clusters are not whole units (%s)", why);
	k = ntfs_cunits_partial(huge_hole, 3, 16, part, 4, why);
	ok(k == 1 && part[0].vcn == 1ULL << 40 && part[0].clusters == 2,
	   "cunits: a hole of 2^40 clusters is skipped whole: %ld", k);
	/* a hole one cluster too long (the unit after it shifted): that
	 * hole cut back; runs already whole units, 16 clusters (a whole
	 * unit) more than the header says: no hole is cut, data would move */
	{
		struct ntfs_run long_hole[] = { { 100, 3 }, { -1, 14 }, { 200, 16 } };
		struct ntfs_run whole[] = { { 100, 8 }, { -1, 24 }, { 200, 16 } };

		ok(ntfs_cunits_long_hole(long_hole, 3, 16, 1) == 1,
		   "cunits: the one hole that runs past its unit is the one cut back");
		ok(ntfs_cunits_long_hole(whole, 3, 16, 16) == -1,
		   "cunits: runs of whole units: no hole cut back");
	}

	memset(buf, 0, sizeof(buf));
	/* a compressed chunk of 100 bytes, an uncompressed one of 4096 */
	buf[0] = 99; buf[1] = 0xb0;
	buf[102] = 0xff; buf[103] = 0x3f;
	ok(ntfs_lznt1_chunks(buf, sizeof(buf), 65536, why), "lznt1: two chunks then zeros");
	buf[1] = 0x20;
	ok(!ntfs_lznt1_chunks(buf, sizeof(buf), 65536, why) && strstr(why, "signature"),
	   "lznt1: signature 2 refused (%s)", why);
	buf[1] = 0xb0;
	buf[103] = 0x3f;
	ok(!ntfs_lznt1_chunks(buf, 4096, 65536, why) && strstr(why, "runs past"),
	   "lznt1: a chunk past the allocated bytes (%s)", why);
	memset(buf, 0, sizeof(buf));
	ok(!ntfs_lznt1_chunks(buf, sizeof(buf), 65536, why) && strstr(why, "no LZNT1"),
	   "lznt1: zeros are no chunk (%s)", why);
	for (int i = 0; i < 3; i++) {
		buf[i * 12] = 9;
		buf[i * 12 + 1] = 0xb0;
	}
	ok(!ntfs_lznt1_chunks(buf, sizeof(buf), 8192, why) && strstr(why, "more than 2"),
	   "lznt1: 3 chunks in a unit of 8 KiB (%s)", why);
}

int main(int argc, char **argv)
{
	test_upcase(argc > 1 ? argv[1] : NULL);
	test_fixups();
	test_name_units();
	test_name_8dot3();
	test_name_may_be_dos();
	test_repair();
	test_header_repair();
	test_record();
	test_record_base();
	test_attr_extent_u16();
	test_runlist();
	test_extents_join();
	test_cunits();
	test_boot();
	test_collation_index();
	test_sd_hash();
	test_planner();
	test_index_build();
	test_btree_walk();
	test_index_place();
	test_index_low_root();
	test_logfile();
	return tap_done();
}
