// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: the libntfs read side over arbitrary bytes, as fsck.ntfs
 * meets them: a boot sector, then a 1024-byte FILE record (fixups,
 * header), its attributes, resident values and runlists.  Built and run by
 * scripts/fuzz with ASan+UBSan.
 */
#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/logfile.h"
#include "ntfs/read.h"
#include "ntfs/repair.h"
#include "ntfs/rindex.h"

#define NR (1u << 20)		/* clusters of the volume the record is on */

/*
 * The attribute repairs of fsck.ntfs (pass1_salvage.c) over a record whose
 * header is valid: flags cleared, sizes clamped, value lengths cut, bad
 * attributes removed, runlists cut, the walk ended at a broken length.
 * Whatever the bytes, afterwards every attribute must parse and every
 * runlist decode inside the volume.
 */
static void repair(uint8_t *rec, uint32_t rsize)
{
	struct ntfs_attr_cursor c;
	const struct ntfs_attr_header *ah;
	struct ntfs_mft_record m;
	uint32_t off, len, last = 0;
	char why[NTFS_WHY];
	int r;

	memcpy(&m, rec, sizeof(m));
	off = m.attrs_offset;
	for (int guard = 0; guard < 10000; guard++) {
		uint8_t *a;
		int k;

		memcpy(&m, rec, sizeof(m));
		r = ntfs_attr_frame(rec, m.bytes_in_use, off, &len, why);
		if (r == 0)
			break;
		if (r < 0) {
			if (ntfs_rec_end_at(rec, rsize, off))
				return;		/* fsck gives the record up */
			break;
		}
		a = rec + off;
		for (k = 0; k < 8; k++) {
			enum ntfs_attr_fault f = ntfs_attr_fault((void *)a, off, last, why);
			struct ntfs_sizes sz;
			uint32_t room;

			if (f == NTFS_AF_NONE)
				break;
			if (f == NTFS_AF_FLAGS) {
				ntfs_attr_clear_unknown_flags(a);
			} else if (f == NTFS_AF_SIZES) {
				ntfs_attr_clamp_sizes(a, UINT64_MAX, &sz);
			} else if (f == NTFS_AF_VALUE &&
				   (room = ntfs_attr_value_room(a)) != UINT32_MAX) {
				uint32_t want = ntfs_attr_value_length_of(a, room);

				ntfs_attr_set_value_length(a, want ? want : room);
			} else {
				break;
			}
		}
		if (ntfs_attr_fault((void *)a, off, last, why) != NTFS_AF_NONE) {
			ntfs_rec_remove_attr(rec, rsize, off);
			continue;
		}
		if (a[8]) {
			struct ntfs_attr_nonresident n;
			struct ntfs_run runs[512];
			size_t nruns, stop;

			memcpy(&n, a, sizeof(n));
			stop = ntfs_mp_valid_prefix(a + n.mapping_pairs_offset,
						    len - n.mapping_pairs_offset, NR,
						    runs, 512, &nruns);
			if (a[n.mapping_pairs_offset + stop]) {
				ntfs_attr_cut_runs(a, n.mapping_pairs_offset + (uint32_t)stop,
						   runs, nruns, 4096);
				/* VCNs past 2^63: fsck gives the attribute up */
				if (ntfs_attr_fault((void *)a, off, last, why) != NTFS_AF_NONE) {
					ntfs_rec_remove_attr(rec, rsize, off);
					continue;
				}
			}
		}
		last = ((struct ntfs_attr_header *)a)->type;
		off += len;
	}
	ntfs_attr_cursor_init(&c, rec);
	while ((r = ntfs_attr_next(&c, &ah, why)) == 1) {
		if (ah->non_resident) {
			struct ntfs_run *runs;

			if (ntfs_attr_runs(ah, NR, &runs, why) < 0)
				abort();	/* a repaired runlist must decode */
			free(runs);
		}
	}
	if (r < 0) {
		fprintf(stderr, "repaired record does not parse: %s\n", why);
		abort();	/* a repaired record must parse */
	}
}

/*
 * Pass 2's rewrite of a small $R in its index root (libntfs/rindex.c) and
 * pass 5's clearing of the dirty flag over a checked record: afterwards
 * the record parses as far as before, and a rewritten $R root parses and
 * holds exactly the keys given, in their order, then its end entry.
 */
static bool root_parses(const struct ntfs_attr_header *a)
{
	struct ntfs_index_root root;
	const uint8_t *ents;
	uint32_t len, elen;
	char why[NTFS_WHY];
	const uint8_t *v = ntfs_attr_value(a, &len);

	return !ntfs_index_root_parse(v, len, &root, &ents, &elen, why);
}

static void edits(const uint8_t *rec, uint32_t rsize, uint8_t pick)
{
	static const struct ntfs_rp_key keys[3] = {
		{ 0xa000000cu, 40 | 1ull << 48 }, { 0xa000000cu, 41 | 2ull << 48 },
		{ 0xa0000003u, 0xffffffffffffull },
	};
	size_t n = (size_t)(pick >> 4) % 4;	/* keys: bits 4-5 of the first byte */
	const struct ntfs_geometry g = { .mft_record_size = rsize, .cluster_size = 4096,
					 .index_block_size = 4096 };
	struct ntfs_attr_cursor c;
	const struct ntfs_attr_header *a;
	uint8_t copy[4096];
	char why[NTFS_WHY];
	int r;

	int r0;

	ntfs_attr_cursor_init(&c, rec);
	while ((r0 = ntfs_attr_next(&c, &a, why)) == 1)
		;
	memcpy(copy, rec, rsize);
	(void)ntfs_rec_clear_volume_flags(copy, 1);
	ntfs_attr_cursor_init(&c, copy);
	while ((r = ntfs_attr_next(&c, &a, why)) == 1)
		;
	if (r != r0)
		abort();	/* only a value's bytes changed */
	/* as in pass 2: only a root the walker could open is rewritten */
	ntfs_attr_cursor_init(&c, rec);
	while ((r = ntfs_attr_next(&c, &a, why)) == 1)
		if (le32toh(a->type) == NTFS_AT_INDEX_ROOT && !a->non_resident &&
		    ntfs_attr_is_r(a))
			break;
	if (r != 1 || !root_parses(a))
		return;
	memcpy(copy, rec, rsize);
	if (ntfs_rec_r_root_set(copy, &g, keys, n))
		return;
	ntfs_attr_cursor_init(&c, copy);
	while ((r = ntfs_attr_next(&c, &a, why)) == 1) {
		struct ntfs_index_root root;
		const uint8_t *ents;
		struct ntfs_ie_view ie;
		uint32_t len, elen, off = 0;
		const uint8_t *v;
		size_t i = 0;

		if (le32toh(a->type) != NTFS_AT_INDEX_ROOT || a->non_resident ||
		    !ntfs_attr_is_r(a))
			continue;
		v = ntfs_attr_value(a, &len);
		if (ntfs_index_root_parse(v, len, &root, &ents, &elen, why))
			abort();	/* the rewritten root must parse */
		while ((r = ntfs_ie_next(ents, elen, &off, false, &ie, why)) == 1) {
			uint8_t want[NTFS_R_KEY_LEN];

			ntfs_r_keys_encode(want, &keys[i], 1);
			if (i >= n || ie.key_len != NTFS_R_KEY_LEN ||
			    memcmp(ie.key, want, NTFS_R_KEY_LEN))
				abort();
			i++;
		}
		if (r != 0 || i != n)
			abort();
		return;
	}
	abort();	/* the record parses, its $R root first among them */
}

/* A checked record's frames reach its end marker (ntfs_attr_frames_end);
 * its first non-resident attribute's runs, encoded again, put back by
 * ntfs_rec_set_pairs: the record must still walk and the attribute
 * decode to as many runs. */
static void pairs_again(const uint8_t *rec, uint32_t rsize)
{
	struct ntfs_attr_cursor c;
	const struct ntfs_attr_header *a;
	struct ntfs_mft_record m;
	uint8_t copy[4096], mp[4096];
	char why[NTFS_WHY];
	uint32_t end;

	memcpy(&m, rec, sizeof(m));
	if (ntfs_attr_frames_end(rec, m.bytes_in_use, &end, why) < 0)
		return;
	memcpy(copy, rec, rsize);
	ntfs_attr_cursor_init(&c, copy);
	while (ntfs_attr_next(&c, &a, why) == 1) {
		struct ntfs_run *runs, *again;
		long n, n2;
		int len;

		if (!a->non_resident)
			continue;
		n = ntfs_attr_runs(a, NR, &runs, why);
		if (n < 0)
			return;
		len = ntfs_mp_encode(runs, (size_t)n, mp, sizeof(mp));
		if (len >= 0 &&
		    !ntfs_rec_set_pairs(copy, rsize, (uint32_t)((const uint8_t *)a - copy),
					mp, (uint32_t)len)) {
			n2 = ntfs_attr_runs(a, NR, &again, why);
			if (n2 != n)
				abort();	/* the same runs, put back */
			free(again);
			ntfs_attr_cursor_init(&c, copy);
			while (ntfs_attr_next(&c, &a, why) == 1)
				;
		}
		free(runs);
		return;
	}
}

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
	/* the rest as the head of a $LogFile, in a copy of its exact size so
	 * that any read beyond it is caught; bit 2 of the first byte forces
	 * the RSTR magic so that the restart area checks are reached */
	{
		uint8_t *log = malloc(size - 1 ? size - 1 : 1);
		struct ntfs_log_info li;

		if (log) {
			memcpy(log, data + 1, size - 1);
			if (data[0] & 4 && size - 1 >= 4)
				memcpy(log, "RSTR", 4);
			(void)ntfs_logfile_parse(log, size - 1, &li);
			memcpy(log, data + 1, size - 1);
			if (size - 1 >= 4)
				memcpy(log, "CHKD", 4);
			(void)ntfs_restart_page_check(log, (uint32_t)(size - 1), &li);
			free(log);
		}
	}
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
	{
		uint8_t copy[4096];
		uint32_t first;

		memcpy(copy, rec, rsize);
		if (ntfs_fixup_force(copy, rsize, &first) >= 0 &&
		    ntfs_file_header_check(copy, rsize, why) == NTFS_REC_OK)
			repair(copy, rsize);
		/* the header repairs first, as for a record with a bad array */
		memcpy(copy, rec, rsize);
		if (ntfs_usa_repair(copy, rsize, why) == 0 &&
		    ntfs_file_header_repair(copy, rsize, why) == 0 &&
		    ntfs_file_header_check(copy, rsize, why) == NTFS_REC_OK)
			repair(copy, rsize);
	}
	if (ntfs_record_check(rec, rsize, NTFS_MAGIC_FILE, why) == NTFS_REC_OK) {
		struct ntfs_attr_cursor c;
		const struct ntfs_attr_header *a;

		edits(rec, rsize, data[-1]);	/* the first byte */
		pairs_again(rec, rsize);
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
