// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: the $REPARSE_POINT and extended attribute parsers
 * (libntfs/reparse.c, libntfs/ea.c) over arbitrary bytes, with the
 * properties fsck.ntfs's repairs rely on: a reparse value whose length
 * fsck recomputes parses with it; the valid prefix of a broken $EA chain
 * is itself a whole chain of as many entries; the $EA_INFORMATION made
 * from a chain parses back to what the chain says; and the change
 * journal's parsers (libntfs/usnjrnl.c) over every input: a $Max that
 * fsck restamps parses, and the records before the first bad one of $J's
 * tail scan clean on their own.  Built and run by
 * scripts/fuzz with ASan+UBSan.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/special.h"
#include "ntfs/usnjrnl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void reparse(const uint8_t *data, uint32_t len)
{
	struct ntfs_reparse_view rp;
	char why[128], tn[32];
	uint32_t fix;
	volatile uint8_t sum = 0;

	if (!ntfs_reparse_parse(data, len, &rp, why)) {
		for (uint32_t i = 0; i < rp.subst_len; i++)
			sum ^= rp.subst[i];	/* inside the value */
		for (uint32_t i = 0; i < rp.print_len; i++)
			sum ^= rp.print[i];
		for (uint32_t i = 0; i < rp.target_len; i++)
			sum ^= rp.target[i];
		for (uint32_t i = 0; i < rp.data_len; i++)
			sum ^= rp.data[i];
		(void)ntfs_reparse_tag_name(rp.tag, tn, sizeof(tn));
	}
	fix = ntfs_reparse_fixable_len(data, len);
	if (fix) {
		uint8_t *copy = malloc(len);

		memcpy(copy, data, len);
		copy[4] = (uint8_t)fix;
		copy[5] = (uint8_t)(fix >> 8);
		if (ntfs_reparse_parse(copy, len, &rp, why))
			abort();	/* the recomputed length must do */
		free(copy);
	}
}

static void ea(const uint8_t *data, uint32_t len)
{
	struct ntfs_ea_sum s, s2;
	struct ntfs_ea_info info;
	uint8_t out[NTFS_EA_INFO_LEN];
	char why[128];
	int r = ntfs_ea_sum(data, len, &s, why);

	(void)ntfs_ea_info_parse(data, len, &info, why);
	if (r && s.count) {
		/* fsck keeps the prefix: it must be a whole chain */
		if (ntfs_ea_sum(data, s.valid_len, &s2, why) || s2.count != s.count ||
		    s2.packed != s.packed || s2.need_ea != s.need_ea)
			abort();
	}
	if (!r || s.count) {
		ntfs_ea_info_make(&s, out);
		if (ntfs_ea_info_parse(out, sizeof(out), &info, why) ||
		    info.need_ea != s.need_ea || info.unpacked_size != s.valid_len)
			abort();
	}
}

static void usnjrnl(const uint8_t *data, size_t size)
{
	struct ntfs_usn_max m;
	uint8_t out[NTFS_USN_MAX_LEN];
	uint64_t count, count2, bad, base = (uint64_t)(size ? data[0] : 0) * 8;
	char why[128];

	if (size >= NTFS_USN_MAX_LEN) {
		/* what fsck writes back must parse, for a $J of SIZE bytes */
		(void)ntfs_usn_max_parse(data, NTFS_USN_MAX_LEN, size, &m, why);
		ntfs_usn_max_restamp(&m, size, m.journal_id);
		ntfs_usn_max_encode(&m, out);
		if (ntfs_usn_max_parse(out, sizeof(out), size, &m, why))
			abort();
	}
	if (ntfs_usn_scan(data, size, base, &count, &bad, why)) {
		if (bad < base || bad > base + size ||
		    ntfs_usn_scan(data, (size_t)(bad - base), base, &count2, &bad, why))
			abort();	/* the records before the bad one stand */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the first byte picks the parser */
	if (size < 1 || size > 70000)
		return 0;
	usnjrnl(data, size);
	if (data[0] & 1)
		reparse(data + 1, (uint32_t)size - 1);
	else
		ea(data + 1, (uint32_t)size - 1);
	return 0;
}
