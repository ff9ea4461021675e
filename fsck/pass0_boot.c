// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 0: the boot sector and its backup in the volume's last sector.
 * Each one that parses is a candidate geometry; pass0_geometry.c checks
 * every candidate against the FILE records on disk, and only the one the
 * records confirm is used.  Nothing is written before that decision: then
 * a wrong or broken boot sector is rewritten from the verified one.  If no
 * candidate is confirmed, the volume is not touched at all.  A volume
 * larger than its device is checked as far as the device goes.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "ntfs_check.h"
#include "ntfs_problems.h"

/* Try a boot sector at OFF; 0 and INFO when it is valid NTFS.  The
 * device size is not held against it: a truncated volume is checked. */
static int try_sector(struct ntfs_check *c, uint64_t off, uint8_t *buf,
		      struct ntfs_boot_info *info, char *why)
{
	if (off > c->dev.size || c->dev.size - off < 512 ||
	    fsf_dev_pread(&c->dev, buf, 512, off)) {
		snprintf(why, NTFS_WHY, "unreadable at offset %llu",
			 (unsigned long long)off);
		return -1;
	}
	return ntfs_boot_check((const void *)buf, 0, info, why);
}

/* A boot sector in the device's last sector (512 or 4096 bytes): a
 * backup found where the primary cannot say. */
static bool backup_at_end(struct ntfs_check *c, uint8_t *sec,
			  struct ntfs_candidate *k, char *why, uint64_t *off)
{
	static const uint32_t sizes[] = { 512, 4096 };

	for (size_t i = 0; i < 2 && c->dev.size >= sizes[i]; i++) {
		*off = c->dev.size - sizes[i];
		if (try_sector(c, *off, sec, &k->b, why) == 0)
			return true;
	}
	return false;
}

/* Does candidate K's volume, backup sector included, fit on the device? */
static bool fits(const struct ntfs_check *c, const struct ntfs_candidate *k)
{
	return k->b.g.volume_sectors * k->b.g.sector_size <= c->dev.size;
}

/* 2: $MFT and $MFTMirr where it says; 1: $MFT only; 0: neither; -1: no
 * boot sector */
static int rank(bool ok, const struct ntfs_candidate *k)
{
	if (!ok)
		return -1;
	if (!k->mft_ok)
		return 0;
	return k->mirr_lcn >= 0 && k->mirr_lcn == k->b.mftmirr_lcn ? 2 : 1;
}

/* The jump at the start of an NTFS boot sector: EB 52 90 (mkntfs,
 * Windows) or EB 5B 90; ntfsck and chkdsk refuse a sector with another. */
static bool standard_jump(const uint8_t *sec)
{
	return sec[0] == 0xeb && (sec[1] == 0x52 || sec[1] == 0x5b) && sec[2] == 0x90;
}

/* The offset of the first BIOS parameter block field NTFS leaves zero
 * (reserved sectors, FATs, root entries, small sector count, sectors per
 * FAT, large sector count) that is not zero in SEC, else 0: ntfs-3g and
 * ntfsck refuse such a boot sector ("Reserved fields aren't zero"). */
static const uint8_t bpb_zero[] = { 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14,
				    0x16, 0x17, 0x20, 0x21, 0x22, 0x23 };

static unsigned nonzero_bpb(const uint8_t *sec)
{
	for (size_t i = 0; i < sizeof(bpb_zero); i++)
		if (sec[bpb_zero[i]])
			return bpb_zero[i];
	return 0;
}

/* Why candidate K is worse than the chosen one. */
static const char *worse(const struct ntfs_candidate *k, char *why)
{
	if (!k->mft_ok)
		return k->why;
	snprintf(why, NTFS_WHY, "$MFTMirr is not at its cluster %lld",
		 (long long)k->b.mftmirr_lcn);
	return why;
}

static void use_geometry(struct ntfs_check *c, const struct ntfs_candidate *k)
{
	const struct ntfs_geometry *g = &k->b.g;
	uint64_t vol_bytes = g->volume_sectors * g->sector_size;

	c->vol.boot = k->b;
	c->mirr_records = k->mirr_records;
	c->geo.mft_bad = k->mft_bad;
	memcpy(c->geo.mft_why, k->mft_why, sizeof(c->geo.mft_why));
	if (k->mirr_lcn >= 0) {
		uint64_t end = (uint64_t)k->mirr_lcn * g->cluster_size +
			       (uint64_t)k->mirr_records * g->mft_record_size;

		c->vol.boot.mftmirr_lcn = k->mirr_lcn;
		/* a mirror in a truncated device's missing tail is neither
		 * read nor written (the truncation is reported) */
		c->geo.mirr_ok = end <= c->dev.size;
	}
	c->geo.dev_clusters = c->dev.size / g->cluster_size;
	if (c->geo.dev_clusters > g->nr_clusters)
		c->geo.dev_clusters = g->nr_clusters;
	if (vol_bytes > c->dev.size)
		fsf_fix_ask(&c->fix, &PR_VOLUME_TRUNCATED, c->dev.path,
			    (unsigned long long)vol_bytes,
			    (unsigned long long)c->dev.size,
			    (unsigned long long)(vol_bytes - c->dev.size));
}

int ntfs_pass0_boot(struct ntfs_check *c)
{
	uint8_t sec[2][512], good[512];
	struct ntfs_candidate k[2];
	char why[2][NTFS_WHY] = { "", "not found" }, w[NTFS_WHY];
	bool ok[2] = { false, false }, backup_gone = false;
	bool put_primary = false, put_backup = false;
	uint64_t boff = 0;
	int64_t moved = -1;	/* $MFT cluster both boot sectors got wrong */
	int best, r0, r1;

	memset(k, 0, sizeof(k));
	ok[0] = try_sector(c, 0, sec[0], &k[0].b, why[0]) == 0;
	if (ok[0]) {
		boff = k[0].b.backup_offset;
		backup_gone = boff > c->dev.size || c->dev.size - boff < 512;
		if (backup_gone)
			snprintf(why[1], NTFS_WHY, "past the end of the device");
		else
			ok[1] = try_sector(c, boff, sec[1], &k[1].b, why[1]) == 0;
	} else {
		ok[1] = backup_at_end(c, sec[1], &k[1], why[1], &boff);
	}
	if (!ok[0] && !ok[1]) {
		fsf_fix_ask(&c->fix, &PR_BOOT_BOTH_BAD, c->dev.path, why[0], why[1]);
		return -EINVAL;
	}
	/* every candidate is judged by the records before anything is
	 * written */
	for (int i = 0; i < 2; i++)
		if (ok[i])
			ntfs_geometry_verify(c, &k[i]);
	r0 = rank(ok[0], &k[0]);
	r1 = rank(ok[1], &k[1]);
	best = r1 > r0 ? 1 : 0;
	if (ok[0] && ok[1] && r0 == r1 && !standard_jump(sec[0]) && standard_jump(sec[1])) {
		/* equally confirmed: the one whose jump is NTFS's */
		best = 1;
		k[0].mft_ok = false;	/* for worse() */
		snprintf(k[0].why, NTFS_WHY, "its jump instruction is %02X %02X %02X",
			 sec[0][0], sec[0][1], sec[0][2]);
	}
	if (ok[0] && ok[1] && r0 == r1 && best == 0 && nonzero_bpb(sec[0]) &&
	    !nonzero_bpb(sec[1])) {
		/* equally confirmed: the one whose zero fields are zero */
		best = 1;
		k[0].mft_ok = false;	/* for worse() */
		snprintf(k[0].why, NTFS_WHY, "its byte 0x%02x is 0x%02x, not the zero NTFS leaves there",
			 nonzero_bpb(sec[0]), sec[0][nonzero_bpb(sec[0])]);
	}
	if (ok[0] && !ok[1] && !fits(c, &k[0])) {
		/* a primary larger than the device and no backup where it
		 * says: its size may be the damage, and a backup at the
		 * device's end that fits, with the same records, the truth */
		struct ntfs_candidate t;
		uint64_t toff;
		char twhy[NTFS_WHY];

		memset(&t, 0, sizeof(t));
		if (backup_at_end(c, sec[1], &t, twhy, &toff) &&
		    t.b.backup_offset == toff && fits(c, &t)) {
			ntfs_geometry_verify(c, &t);
			if (rank(true, &t) > 0 && rank(true, &t) >= r0) {
				k[1] = t;
				ok[1] = true;
				r1 = rank(true, &t);
				boff = toff;
				backup_gone = false;
				best = 1;
				snprintf(k[0].why, NTFS_WHY,
					 "its volume of %llu bytes is larger than the device",
					 (unsigned long long)(k[0].b.g.volume_sectors *
							      k[0].b.g.sector_size));
				k[0].mft_ok = false;	/* for worse() */
			}
		}
	}
	if ((best ? r1 : r0) <= 0) {
		/* both wrong about $MFT: where the mirror's record 0 puts it,
		 * if the records there confirm it */
		for (best = 0; best < 2; best++) {
			struct ntfs_candidate d;

			if (!ok[best])
				continue;
			d = k[best];
			d.b.mft_lcn = ntfs_geometry_mft_from_mirror(c, &k[best]);
			if (d.b.mft_lcn <= 0 || d.b.mft_lcn == k[best].b.mft_lcn ||
			    (uint64_t)d.b.mft_lcn >= d.b.g.nr_clusters)
				continue;
			ntfs_geometry_verify(c, &d);
			if (rank(true, &d) <= 0)
				continue;
			moved = k[best].b.mft_lcn;
			k[best] = d;
			r0 = r1 = 0;	/* every sector gets the correction */
			break;
		}
		if (best == 2) {
			fsf_fix_ask(&c->fix, &PR_GEOMETRY_UNCONFIRMED, "$MFT",
				    ok[0] ? k[0].why : why[0], ok[1] ? k[1].why : why[1]);
			return -EUCLEAN;
		}
	}
	use_geometry(c, &k[best]);
	memcpy(good, sec[best], 512);
	if (nonzero_bpb(good) &&
	    fsf_fix_ask(&c->fix, &PR_BOOT_RESERVED, "boot sector", nonzero_bpb(good),
			good[nonzero_bpb(good)])) {
		/* both sectors have it (else the other one won): set to the
		 * zero NTFS leaves there, nothing else changed */
		for (size_t i = 0; i < sizeof(bpb_zero); i++)
			good[bpb_zero[i]] = 0;
		put_primary = put_backup = true;
	}
	if (moved >= 0 &&
	    fsf_fix_ask(&c->fix, &PR_MFT_LOCATION, "boot sector", (long long)moved,
			(long long)c->vol.boot.mft_lcn)) {
		int64_t le = (int64_t)htole64((uint64_t)c->vol.boot.mft_lcn);

		memcpy(good + offsetof(struct ntfs_boot_sector, mft_lcn), &le, 8);
		put_primary = put_backup = true;
	}

	if (k[best].mirr_lcn < 0) {
		fsf_fix_ask(&c->fix, &PR_MIRROR_UNVERIFIED, "$MFTMirr",
			    (long long)k[best].b.mftmirr_lcn);
	} else if (k[best].mirr_lcn != k[best].b.mftmirr_lcn &&
		   fsf_fix_ask(&c->fix, &PR_MIRROR_LOCATION, "boot sector",
			       (long long)k[best].b.mftmirr_lcn,
			       (long long)c->vol.boot.mftmirr_lcn)) {
		int64_t le = (int64_t)htole64((uint64_t)c->vol.boot.mftmirr_lcn);

		memcpy(good + offsetof(struct ntfs_boot_sector, mftmirr_lcn), &le, 8);
		put_primary = put_backup = true;
	}
	if (best == 1) {
		put_primary |= fsf_fix_ask(&c->fix, &PR_BOOT_PRIMARY_BAD, "boot sector",
					   ok[0] ? worse(&k[0], w) : why[0]);
		put_backup = false;	/* the one the records confirmed */
		if (memcmp(good, sec[1], 512))
			put_backup = true;	/* ... with its mirror field fixed */
	} else if (!backup_gone) {
		if (!ok[1] || r1 < r0)
			put_backup |= fsf_fix_ask(&c->fix, &PR_BOOT_BACKUP_BAD,
						  "backup boot sector",
						  ok[1] ? worse(&k[1], w) : why[1]);
		else if (memcmp(sec[0], sec[1], 512))
			put_backup |= fsf_fix_ask(&c->fix, &PR_BOOT_BACKUP_DIFFERS,
						  "backup boot sector");
	}
	if (put_primary && fsf_dev_pwrite(&c->dev, good, 512, 0))
		fsf_fix_failed(&c->fix);
	if (put_backup && !backup_gone && fsf_dev_pwrite(&c->dev, good, 512, boff))
		fsf_fix_failed(&c->fix);
	return 0;
}
