// SPDX-License-Identifier: GPL-2.0-or-later
/* Pass 3 repair: rebuild the $I30 index of a directory whose attributes
 * continue in extension records ($ATTRIBUTE_LIST): each index attribute
 * is replaced in the record that holds it; an allocation in several
 * extents keeps its extents and clusters and takes the new blocks. */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs_index_write.h"

/*
 * A directory whose attributes continue in extension records: each $I30
 * attribute is replaced in the record that holds it, keeping its instance
 * number, so that the $ATTRIBUTE_LIST stays true as it is.  The index
 * keeps its shape (a large index stays large, a small one small).  An
 * $INDEX_ALLOCATION in several extents stays as it is, every extent byte
 * for byte (and so the list): the new blocks are written into its
 * clusters from VCN 0, the $BITMAP marks them, the blocks past them are
 * free blocks of the index, as a directory that shrank leaves them.
 * Root and bitmap in several extents are not handled.
 */
int ntfs_rebuild_listed(struct ntfs_check *c, uint64_t d, const uint8_t *base,
			const uint16_t *upcase, char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint64_t at[NTFS_IX_SLOTS], rec_of[NTFS_IX_SLOTS];
	uint8_t *bufs[NTFS_IX_SLOTS] = { 0 }, *outs[NTFS_IX_SLOTS] = { 0 };
	const struct ntfs_attr_header *attr[NTFS_IX_SLOTS] = { 0 };
	struct ntfs_run *old = NULL, *gone = NULL;
	long nold = 0, ngone = 0, n;
	struct ntfs_fn_ref **v = NULL;
	struct ntfs_ib_entry *e = NULL;
	struct ntfs_mft_record m;
	struct index_shape sh;
	struct index_plan p;
	int nrec = 0, ret = -1;
	uint32_t other = 0, bitmap_len = 0;
	uint64_t old_size = 0;
	size_t more;

	memset(&p, 0, sizeof(p));
	if (ntfs_i30_holders(&c->vol, base, at, &more, why))
		return -1;
	/* the distinct records holding them, read and checked */
	for (int k = 0; k < NTFS_IX_SLOTS; k++) {
		int j;

		if (at[k] == UINT64_MAX)
			continue;
		for (j = 0; j < nrec && rec_of[j] != at[k]; j++)
			;
		if (j == nrec) {
			rec_of[nrec] = at[k];
			bufs[nrec] = malloc(rs);
			outs[nrec] = malloc(rs);
			if (!bufs[nrec] || !outs[nrec]) {
				nrec++;
				snprintf(why, NTFS_WHY, "out of memory");
				goto out;
			}
			if (at[k] == d) {
				memcpy(bufs[nrec], base, rs);
			} else if (at[k] >= c->vol.mft_records ||
				   !cset_get(&c->record_used, at[k]) ||
				   ntfs_vol_read_record(&c->vol, at[k], bufs[nrec]) ||
				   ntfs_record_check(bufs[nrec], rs, NTFS_MAGIC_FILE,
						     why) != NTFS_REC_OK ||
				   (memcpy(&m, bufs[nrec], sizeof(m)),
				    (le64toh(m.base_mft_record) & 0xffffffffffffULL) != d)) {
				nrec++;
				snprintf(why, NTFS_WHY, "MFT record %llu holding its index is unusable",
					 (unsigned long long)at[k]);
				goto out;
			}
			nrec++;
		}
		attr[k] = ntfs_i30_in(bufs[j], ntfs_ix_slot_types[k]);
		if (!attr[k] || (k == NTFS_IX_ROOT && attr[k]->non_resident) ||
		    (k == NTFS_IX_ALLOC && !attr[k]->non_resident)) {
			snprintf(why, NTFS_WHY, "its index attributes are not where its list says");
			goto out;
		}
	}
	if (attr[NTFS_IX_ALLOC]) {
		nold = ntfs_attr_runs(attr[NTFS_IX_ALLOC], c->vol.boot.g.nr_clusters, &old, why);
		if (nold < 0) {
			old = NULL;
			nold = 0;
		}
	}
	if (attr[NTFS_IX_BITMAP] && attr[NTFS_IX_BITMAP]->non_resident) {
		ngone = ntfs_attr_runs(attr[NTFS_IX_BITMAP], c->vol.boot.g.nr_clusters, &gone, why);
		if (ngone < 0) {
			gone = NULL;
			ngone = 0;
		}
	}
	if (more) {
		/* every extent of the allocation: they stay, and hold the
		 * new blocks */
		size_t nx;

		free(old);
		nold = ntfs_attr_extents_runs(c, d, NTFS_AT_INDEX_ALLOCATION, "$I30",
					      &old, &old_size, &nx, why);
		if (nold < 0) {
			if (nold == -ENOMEM)
				snprintf(why, NTFS_WHY, "out of memory");
			old = NULL;
			nold = 0;
			goto out;
		}
		for (long i = 0; i < nold; i++)
			if (old[i].lcn < 0 ||
			    (uint64_t)old[i].lcn + old[i].len > c->geo.dev_clusters) {
				snprintf(why, NTFS_WHY, "its index allocation in %zu extents has holes or clusters past the device",
					 nx);
				goto out;
			}
		bitmap_len = (uint32_t)ntfs_align((old_size / c->vol.boot.g.index_block_size + 7) / 8, 8);
		if (attr[NTFS_IX_BITMAP] && !attr[NTFS_IX_BITMAP]->non_resident) {
			uint32_t blen;

			ntfs_attr_value(attr[NTFS_IX_BITMAP], &blen);
			if (blen > bitmap_len)
				bitmap_len = blen;
		}
	}
	/* the root's record: what is not index stays */
	for (int j = 0; j < nrec; j++)
		if (rec_of[j] == at[NTFS_IX_ROOT]) {
			memcpy(&m, bufs[j], sizeof(m));
			other = le32toh(m.bytes_in_use);
		}
	for (int k = 0; k < NTFS_IX_SLOTS; k++)
		if (attr[k] && at[k] == at[NTFS_IX_ROOT] && !(more && k == NTFS_IX_ALLOC))
			other -= le32toh(attr[k]->length);
	if (more && at[NTFS_IX_BITMAP] == at[NTFS_IX_ROOT])
		other += (uint32_t)ntfs_align(RESIDENT_HDR + bitmap_len, 8);
	sh.large = attr[NTFS_IX_ALLOC] != NULL;
	sh.small = !sh.large;
	sh.alone = at[NTFS_IX_ALLOC] != at[NTFS_IX_ROOT] && at[NTFS_IX_BITMAP] != at[NTFS_IX_ROOT];
	n = ntfs_dir_names(c, d, upcase, &v);
	if (n < 0) {
		snprintf(why, NTFS_WHY, "out of memory");
		goto out;
	}
	e = ntfs_dir_entries(c, v, n);
	if (!e) {
		snprintf(why, NTFS_WHY, "out of memory");
		goto out;
	}
	if (more ? ntfs_index_plan_in_extents(&c->vol.boot.g, &p, e, n,
				    rs > other + RESIDENT_HDR ? rs - other - RESIDENT_HDR : 0,
				    old, nold, old_size, bitmap_len, why) :
	    ntfs_index_plan(c, &p, NTFS_AT_FILE_NAME, NTFS_COLLATION_FILE_NAME, e, n,
			    other, old, nold, &sh, why))
		goto out;
	for (int j = 0; j < nrec; j++)
		if (ntfs_index_rewrite_holder(&c->vol.boot.g, bufs[j], outs[j], &p,
					      more > 0, why))
			goto out;
	if (ntfs_index_plan_commit(c, &p, old, nold, gone, ngone, why))
		goto out;
	for (int j = 0; j < nrec; j++)
		if (memcmp(bufs[j], outs[j], rs) &&
		    ntfs_check_write_record(c, rec_of[j], outs[j])) {
			snprintf(why, NTFS_WHY, "writing MFT record %llu failed",
				 (unsigned long long)rec_of[j]);
			goto out;
		}
	ret = 0;
out:
	for (int j = 0; j < nrec; j++) {
		free(bufs[j]);
		free(outs[j]);
	}
	ntfs_index_build_free(&p.res);
	free(p.runs);
	free(old);
	free(gone);
	free(e);
	free(v);
	return ret;
}

