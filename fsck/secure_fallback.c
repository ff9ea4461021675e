// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The security id a file is given when its own one is unusable, chosen
 * as pass 3 chooses it (pass3_secure.c): the root directory's when $Secure
 * holds it, otherwise the lowest one $Secure holds.  "Holds" is a valid
 * entry of $SDS, what pass 3 judges ids by and rebuilds $SII from.  Read
 * only: a damaged entry whose mirror is valid counts, and pass 3 restores
 * it.
 */
#include "config.h"

#include <endian.h>
#include <stdlib.h>

#include "ntfs/sds.h"
#include "ntfs_check.h"

struct pick {
	uint32_t root, low;
	bool root_held;
};

static int on_entry(void *arg, struct ntfs_sds *sds, const struct ntfs_sds_header *h,
		    uint64_t off, bool mirror)
{
	struct pick *p = arg;
	uint32_t id = le32toh(h->security_id);

	(void)sds;
	(void)off;
	(void)mirror;
	if (!p->low || id < p->low)
		p->low = id;
	p->root_held |= p->root && id == p->root;
	return 0;
}

uint32_t ntfs_check_fallback_secid(struct ntfs_check *c)
{
	uint32_t rs = c->vol.boot.g.mft_record_size, at;
	uint8_t *rec = malloc(rs);
	struct ntfs_sds sds = { 0 };
	struct pick p = { 0 };
	char why[NTFS_WHY];

	if (!rec)
		return 0;
	if (!ntfs_vol_read_record(&c->vol, NTFS_FILE_ROOT, rec) &&
	    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) == NTFS_REC_OK)
		p.root = ntfs_security_id_of(rec, &at);
	if (!ntfs_vol_read_record(&c->vol, NTFS_FILE_SECURE, rec) &&
	    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) == NTFS_REC_OK &&
	    ntfs_sds_open(&c->vol, ntfs_check_in_use, c, NTFS_FILE_SECURE, rec, &sds) > 0 &&
	    sds.size <= (64u << 20) &&	/* as pass 3 judges it */
	    !ntfs_runs_past(sds.runs, sds.nruns, c->geo.dev_clusters))
		ntfs_sds_scan(&sds, on_entry, &p);
	ntfs_sds_close(&sds);
	free(rec);
	return p.root_held ? p.root : p.low;
}
