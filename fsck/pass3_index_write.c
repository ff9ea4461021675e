// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 3 repair: write an index (ntfs_write_index: any index of a record,
 * built by the libntfs builder from the entries given and placed by
 * libntfs/index_write.c).  What is fsck's own: which clusters are free
 * (its computed map, never clusters past the end of a truncated device),
 * and that while clusters are cross-linked the old index clusters are
 * neither written over nor freed.
 */
#include "config.h"

#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs_index_write.h"

/* First run of COUNT free clusters, or -1. */
static int64_t find_free(void *arg, uint64_t count)
{
	const struct ntfs_check *c = arg;
	uint64_t run = 0;

	/* on a truncated device: only clusters on it, and none at all when
	 * records lost past its end may own any of them */
	if (c->geo.lost_records || c->cluster_used.nomem)
		return -1;
	for (uint64_t l = 0; l < c->geo.dev_clusters; l++) {
		run = cset_get(&c->cluster_used, l) ? 0 : run + 1;
		if (run == count)
			return (int64_t)(l + 1 - count);
	}
	return -1;
}

static void set_clusters(struct ntfs_check *c, const struct ntfs_run *runs,
			 long n, bool used)
{
	for (long i = 0; i < n; i++)
		for (uint64_t k = 0; runs[i].lcn >= 0 && k < runs[i].len; k++) {
			uint64_t l = (uint64_t)runs[i].lcn + k;

			if (used)
				cset_set(&c->cluster_used, l);
			else
				cset_clear(&c->cluster_used, l);
		}
}

int ntfs_index_plan(struct ntfs_check *c, struct index_plan *p, uint32_t type,
		    uint32_t collation, const struct ntfs_ib_entry *e, long n,
		    uint32_t other, const struct ntfs_run *old, long nold,
		    const struct index_shape *sh, char *why)
{
	const struct ntfs_cluster_source src = {
		.find_free = find_free, .arg = c,
		.dev_clusters = c->geo.dev_clusters,
		/* cross-links left by pass 1b: the old index clusters may
		 * be another file's, so new ones are taken */
		.no_reuse = c->crosslinked != 0,
	};

	return ntfs_index_plan_build(&c->vol.boot.g, &src, p, type, collation,
				     e, n, other, old, nold, sh, why);
}

/* The clusters of the new index taken, the old ones not kept freed
 * (unless clusters are cross-linked: then nothing is freed), the new
 * blocks written. */
int ntfs_index_plan_commit(struct ntfs_check *c, const struct index_plan *p,
			   const struct ntfs_run *old, long nold,
			   const struct ntfs_run *gone, long ngone, char *why)
{
	if (!c->crosslinked) {
		if (!p->reuse || !p->res.large)
			set_clusters(c, old, nold, false);
		set_clusters(c, gone, ngone, false);
	}
	if (p->res.large)
		set_clusters(c, p->runs, p->nruns, true);
	if (p->bitmap_nonres)
		set_clusters(c, &p->bitmap_run, 1, true);
	return ntfs_index_plan_write(&c->vol, p, why);
}

int ntfs_write_index(struct ntfs_check *c, uint64_t d, const char *name,
		     uint32_t type, uint32_t collation,
		     const struct ntfs_ib_entry *e, long n, char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *rec = malloc(rs), *out = malloc(rs);
	struct ntfs_run *old = NULL, *gone = NULL;
	long nold = 0, ngone = 0;
	struct index_plan p;
	const struct index_shape whole = { false, false, false };
	uint32_t other;
	int ret = -1;

	memset(&p, 0, sizeof(p));
	if (!rec || !out) {
		snprintf(why, NTFS_WHY, "out of memory");
		goto out;
	}
	if (ntfs_vol_read_record(&c->vol, d, rec) ||
	    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		goto out;
	if (ntfs_attr_named(rec, NTFS_AT_ATTRIBUTE_LIST, "")) {
		/* attributes in extension records: replaced where they are */
		ret = ntfs_write_index_listed(c, d, rec, name, type, collation,
					      e, n, why);
		goto out;
	}
	if (ntfs_index_attrs_scan(&c->vol.boot.g, rec, name, &other, &old, &nold,
				  &gone, &ngone, why))
		goto out;
	if (ntfs_index_plan(c, &p, type, collation, e, n, other, old, nold, &whole, why) ||
	    ntfs_index_rewrite_record(&c->vol.boot.g, rec, out, &p, name, why))
		goto out;
	if (ntfs_index_plan_commit(c, &p, old, nold, gone, ngone, why))
		goto out;
	if (ntfs_check_write_record(c, d, out)) {
		snprintf(why, NTFS_WHY, "writing the record failed");
		goto out;
	}
	ret = 0;
out:
	ntfs_index_plan_free(&p);
	free(old);
	free(gone);
	free(rec);
	free(out);
	return ret;
}
