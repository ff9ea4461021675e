// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 0: the boot sector and its backup in the volume's last sector.  A
 * broken one is rebuilt from the other; if neither is valid the volume
 * cannot be checked at all.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "ntfs_check.h"
#include "ntfs_problems.h"

/* Try a boot sector at OFF; 0 and INFO when it is valid NTFS. */
static int try_sector(struct ntfs_check *c, uint64_t off, uint8_t *buf,
		      struct ntfs_boot_info *info, char *why)
{
	if (off + 512 > c->dev.size || fsf_dev_pread(&c->dev, buf, 512, off)) {
		snprintf(why, NTFS_WHY, "unreadable at offset %llu",
			 (unsigned long long)off);
		return -1;
	}
	return ntfs_boot_check((const void *)buf, c->dev.size, info, why);
}

int ntfs_pass0_boot(struct ntfs_check *c)
{
	uint8_t primary[512], backup[512];
	struct ntfs_boot_info pi, bi;
	char pwhy[NTFS_WHY], bwhy[NTFS_WHY] = "not found";
	int pok = try_sector(c, 0, primary, &pi, pwhy) == 0;
	uint64_t boff = 0;
	int bok = 0;

	if (pok) {
		boff = pi.backup_offset;
		bok = try_sector(c, boff, backup, &bi, bwhy) == 0;
	} else {
		/* where the backup would be: the last sector (512 or 4096) */
		static const uint32_t sizes[] = { 512, 4096 };

		for (size_t i = 0; i < 2 && !bok && c->dev.size >= sizes[i]; i++) {
			boff = c->dev.size - sizes[i];
			bok = try_sector(c, boff, backup, &bi, bwhy) == 0;
		}
	}
	if (!pok && !bok) {
		fsf_fix_ask(&c->fix, &PR_BOOT_BOTH_BAD, c->dev.path, pwhy, bwhy);
		return -EINVAL;
	}
	if (!pok) {
		c->vol.boot = bi;
		if (fsf_fix_ask(&c->fix, &PR_BOOT_PRIMARY_BAD, "boot sector", pwhy) &&
		    fsf_dev_pwrite(&c->dev, backup, 512, 0))
			fsf_fix_failed(&c->fix);
		return 0;
	}
	c->vol.boot = pi;
	if (!bok) {
		if (fsf_fix_ask(&c->fix, &PR_BOOT_BACKUP_BAD, "backup boot sector", bwhy) &&
		    fsf_dev_pwrite(&c->dev, primary, 512, boff))
			fsf_fix_failed(&c->fix);
	} else if (memcmp(primary, backup, 512) != 0) {
		if (fsf_fix_ask(&c->fix, &PR_BOOT_BACKUP_DIFFERS, "backup boot sector") &&
		    fsf_dev_pwrite(&c->dev, primary, 512, boff))
			fsf_fix_failed(&c->fix);
	}
	return 0;
}
