// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 3: a file's unnamed $DATA that says 0 bytes while its runs still
 * map clusters (data and initialized size 0, allocated size and runs
 * kept; ntfsck calls it ATTR_EMPTY_DATA_STALE_RUNS and frees the runs).
 * Allocation past the end of a file is valid NTFS, so nothing here is
 * ever freed.  The size is taken back from the file's index entry, which
 * repeats it, when all the evidence agrees:
 *   - the attribute is plain (not sparse, compressed or encrypted), in
 *     one extent, its runs without holes adding up to its allocated size;
 *   - the entry says the same allocated size and a data size of which
 *     that allocation is exactly the clusters it needs;
 *   - $Bitmap on disk marks every cluster of the runs in use.
 * Data and initialized size then become the entry's (the clusters read
 * as the file did before).  Otherwise (the entry says 0 or another
 * allocation, the runs have another shape, $Bitmap has freed some of
 * the clusters: a truncate cut by a power loss looks like that) the
 * clusters stay the file's, as they are, the entry follows the file (0
 * bytes), and a line says so.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs_check.h"
#include "ntfs_problems.h"

/* Does the on-disk $Bitmap mark every cluster of RUNS in use?  -1: it
 * cannot be read. */
static int bitmap_holds(struct ntfs_check *c, const struct ntfs_run *runs,
			long n)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	struct ntfs_run *bruns = NULL;
	uint8_t *rec = malloc(rs), *map = NULL;
	uint64_t len = 0;
	char why[NTFS_WHY];
	long bn = 0;
	int ret = -1;

	if (!rec || ntfs_vol_read_record(&c->vol, NTFS_FILE_BITMAP, rec) ||
	    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK ||
	    ntfs_vol_read_attr(&c->vol, rec, NTFS_AT_DATA, &map, &len, &bruns, &bn))
		goto out;
	ret = 1;
	for (long i = 0; i < n && ret == 1; i++)
		for (uint64_t k = 0; k < runs[i].len; k++) {
			uint64_t l = (uint64_t)runs[i].lcn + k;

			if (l / 8 >= len || !(map[l / 8] & (1u << (l % 8)))) {
				ret = 0;
				break;
			}
		}
out:
	free(rec);
	free(map);
	free(bruns);
	return ret;
}

int ntfs_data_size_from_entry(struct ntfs_check *c, uint64_t recno,
			      uint64_t size, uint64_t alloc, const char *name,
			      const char *dirobj)
{
	uint32_t rs = c->vol.boot.g.mft_record_size, cs = c->vol.boot.g.cluster_size;
	uint8_t *rec = malloc(rs), *ext = malloc(rs), *holder;
	const struct ntfs_attr_header *a;
	struct ntfs_attr_nonresident nr;
	struct ntfs_run *runs = NULL;
	uint64_t where, mapped = 0, need;
	char why[NTFS_WHY], obj[NTFS_WHY + 64];
	const char *doubt = NULL;
	long n = 0;
	int ret = 0;
	bool told;

	if (!rec || !ext) {
		ret = -ENOMEM;
		goto out;
	}
	if (ntfs_vol_read_record(&c->vol, recno, rec) ||
	    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK ||
	    ntfs_file_attr_holder(c, rec, recno, NTFS_AT_DATA, ext, &holder, &where) ||
	    !(a = ntfs_attr_named(holder, NTFS_AT_DATA, "")) || !a->non_resident)
		goto out;
	memcpy(&nr, a, sizeof(nr));
	if (nr.lowest_vcn || nr.data_size || nr.initialized_size || !nr.allocated_size)
		goto out;
	ntfs_object_name(c, "file", recno, obj, sizeof(obj));
	need = (size + cs - 1) / cs * cs;
	if (le16toh(a->flags) & (NTFS_ATTR_COMPRESSION_MASK | NTFS_ATTR_SPARSE |
				 NTFS_ATTR_ENCRYPTED))
		doubt = "it is sparse, compressed or encrypted";
	else if ((uint64_t)le64toh((uint64_t)nr.allocated_size) != alloc)
		doubt = "its index entry says another allocated size";
	else if (!size || size > alloc)
		doubt = "its index entry says no size within the allocation";
	else if (need != alloc)
		doubt = "the allocation is not what the entry's size needs";
	else if ((n = ntfs_attr_runs(a, c->vol.boot.g.nr_clusters, &runs, why)) <= 0)
		doubt = "its runs do not decode";
	if (!doubt) {
		for (long i = 0; i < n; i++) {
			if (runs[i].lcn < 0) {
				doubt = "its runs have holes";
				break;
			}
			mapped += runs[i].len * cs;
		}
		if (!doubt && (mapped != alloc ||
			       (uint64_t)le64toh((uint64_t)nr.highest_vcn) + 1 != alloc / cs))
			doubt = "its runs do not map its allocated size";
	}
	if (!doubt) {
		int held = bitmap_holds(c, runs, n);

		if (held < 0)
			doubt = "$Bitmap cannot be read";
		else if (!held)
			doubt = "$Bitmap has freed some of its clusters";
	}
	/* once per file, not per name: -n meets it at each hard link's
	 * entry (-a at the first only, which takes the size back) */
	if (!c->size_told.bits)
		rset_init(&c->size_told, c->vol.mft_records);
	told = rset_get(&c->size_told, recno);
	if (!told && rset_set(&c->size_told, recno)) {
		ret = -ENOMEM;
		goto out;
	}
	if (doubt) {
		if (!told)
			fsf_fix_ask(&c->fix, &PR_DATA_SIZE_KEPT, obj,
			    (unsigned long long)le64toh((uint64_t)nr.allocated_size), name,
				    (unsigned long long)size, doubt);
		goto out;
	}
	ret = 1;
	if (!told && fsf_fix_ask(&c->fix, &PR_DATA_SIZE_FROM_ENTRY, obj,
			(unsigned long long)alloc, name, dirobj,
			(unsigned long long)size)) {
		uint64_t le = htole64(size);
		uint8_t *at = holder + ((const uint8_t *)a - holder);

		memcpy(at + offsetof(struct ntfs_attr_nonresident, data_size), &le, 8);
		memcpy(at + offsetof(struct ntfs_attr_nonresident, initialized_size), &le, 8);
		if (ntfs_check_write_record(c, where, holder))
			fsf_fix_failed(&c->fix);
	}
out:
	free(rec);
	free(ext);
	free(runs);
	return ret;
}
