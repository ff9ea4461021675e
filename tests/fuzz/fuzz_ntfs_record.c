// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: the libntfs read side over arbitrary bytes, as fsck.ntfs
 * meets them: a boot sector, then a 1024-byte FILE record (fixups,
 * header), its attributes, resident values and runlists.  Built and run by
 * scripts/fuzz with ASan+UBSan.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t rec[4096];
	struct ntfs_boot_info bi;
	struct ntfs_boot_sector bs;
	char why[NTFS_WHY];
	uint32_t rsize = 1024;

	if (size >= sizeof(bs)) {
		memcpy(&bs, data, sizeof(bs));
		(void)ntfs_boot_check(&bs, size * 4096, &bi, why);
	}
	/* the first byte picks the record size, the rest is the record */
	if (size < 1)
		return 0;
	rsize = 512u << (data[0] % 4);
	data++;
	size--;
	memset(rec, 0, sizeof(rec));
	memcpy(rec, data, size < rsize ? size : rsize);
	/* the same bytes as an index root value and as an INDX block */
	{
		struct ntfs_index_root root;
		const uint8_t *ents;
		uint32_t elen, off = 0;
		struct ntfs_ie_view ie;
		uint8_t blk[4096];

		if (!ntfs_index_root_parse(rec, rsize, &root, &ents, &elen, why))
			while (ntfs_ie_next(ents, elen, &off, true, &ie, why) == 1)
				;
		memcpy(blk, rec, rsize);
		if (ntfs_record_check(blk, rsize, NTFS_MAGIC_INDX, why) == NTFS_REC_OK &&
		    !ntfs_index_block_parse(blk, rsize, 0, &ents, &elen, why)) {
			off = 0;
			while (ntfs_ie_next(ents, elen, &off, true, &ie, why) == 1) {
				volatile uint8_t sum = 0;

				for (unsigned int i = 0; i < 2u * ie.name_len; i++)
					sum ^= ie.name[i];	/* inside blk */
			}
		}
	}
	if (ntfs_record_check(rec, rsize, NTFS_MAGIC_FILE, why) == NTFS_REC_OK) {
		struct ntfs_attr_cursor c;
		const struct ntfs_attr_header *a;

		ntfs_attr_cursor_init(&c, rec);
		while (ntfs_attr_next(&c, &a, why) == 1) {
			if (a->non_resident) {
				struct ntfs_run *runs;
				long n = ntfs_attr_runs(a, 1u << 30, &runs, why);

				if (n >= 0)
					free(runs);
			} else {
				uint32_t len;
				const uint8_t *v = ntfs_attr_value(a, &len);
				volatile uint8_t sum = 0;

				for (uint32_t i = 0; i < len; i++)
					sum ^= v[i];	/* must stay inside rec */
			}
		}
	}
	return 0;
}
