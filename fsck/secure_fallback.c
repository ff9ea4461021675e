// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The security id a file is given when its own one is unusable, chosen
 * as pass 3 chooses it (pass3_secure.c): the root directory's when $Secure
 * holds it, otherwise the lowest one $Secure holds.  "Holds" is a valid
 * entry of $SDS, what pass 3 judges ids by and rebuilds $SII from.  Read
 * only: a damaged entry whose mirror is valid counts, and pass 3 restores
 * it.  When $SDS holds no valid entry but has room for the default
 * descriptors (both pages on clusters, not holes), pass 3 writes those (0x030042): the id is then the root
 * directory's default one (the descriptor pass 1 otherwise copies into
 * a file's record), said to be one still to be written.
 */
#include "config.h"

#include <endian.h>
#include <stdlib.h>

#include "ntfs/format.h"
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

/* the bytes $SDS's runs map, holes included */
static uint64_t mapped_bytes(const struct ntfs_check *c, const struct ntfs_sds *sds)
{
	uint64_t most = c->vol.boot.g.nr_clusters, vcns = 0;

	for (long i = 0; i < sds->nruns && vcns < most; i++)
		vcns = sds->runs[i].len < most - vcns ? vcns + sds->runs[i].len : most;
	return vcns * c->vol.boot.g.cluster_size;
}

uint32_t ntfs_check_fallback_secid(struct ntfs_check *c, bool *pending)
{
	uint32_t rs = c->vol.boot.g.mft_record_size, at;
	uint8_t *rec = malloc(rs);
	struct ntfs_sds sds = { 0 };
	struct ntfs_secure def;
	struct pick p = { 0 };
	char why[NTFS_WHY];
	bool scanned = false;

	*pending = false;
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
		scanned = !ntfs_sds_scan(&sds, on_entry, &p);
	/* none held: the defaults, when pass 3 has room to write them (and
	 * judges $SDS: a size its runs map) */
	ntfs_secure_build(&def);
	if (scanned && !p.low && ntfs_sds_entries_fit(&sds, def.sds_len) &&
	    sds.size <= mapped_bytes(c, &sds)) {
		*pending = true;
		p.low = le32toh(def.hdr[NTFS_NR_SD - 1].security_id);
		p.root_held = false;
	}
	ntfs_sds_close(&sds);
	free(rec);
	return p.root_held ? p.root : p.low;
}
