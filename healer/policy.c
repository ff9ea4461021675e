// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What xfs_healer does with a filesystem and with each event.  Pure logic
 * (no I/O), so that --replay and the tests exercise exactly what the live
 * daemon runs.
 *
 * Mode: --repair repairs; otherwise --no-autofsck only reports; otherwise
 * the autofsck property decides: repair -> repair, check/optimize -> report,
 * none -> exit; unset -> report when the filesystem has back-reference
 * metadata (rmapbt, parent pointers), else exit.
 *
 * Events: SICK (found at runtime) is repaired object by object; CORRUPT
 * (found by a scrub) is only reported, xfs_scrub owns it; lost events (in
 * every mode, report-only too) or a sick object with no repair of its own
 * ask for a full xfs_scrub run.
 */
#include "config.h"

#include <string.h>

#include "healer.h"

enum hm_mode hm_policy_mode(const struct hm_policy_in *in, const char **why)
{
	const struct hm_fsinfo *fs = in->fs;

	if (in->opt_repair) {
		*why = "--repair";
		return HM_MODE_REPAIR;
	}
	if (in->opt_no_autofsck) {
		*why = "--no-autofsck";
		return HM_MODE_LOG;
	}
	if (fs->has_autofsck) {
		if (!strcmp(fs->autofsck, "repair")) {
			*why = "autofsck=repair";
			return HM_MODE_REPAIR;
		}
		if (!strcmp(fs->autofsck, "check")) {
			*why = "autofsck=check";
			return HM_MODE_LOG;
		}
		if (!strcmp(fs->autofsck, "optimize")) {
			*why = "autofsck=optimize";
			return HM_MODE_LOG;
		}
		if (!strcmp(fs->autofsck, "none")) {
			*why = "autofsck=none";
			return HM_MODE_EXIT;
		}
		*why = "unknown autofsck value";
		return HM_MODE_LOG;
	}
	if (fs->backrefs) {
		*why = "autofsck unset, back-reference metadata present";
		return HM_MODE_LOG;
	}
	*why = "autofsck unset, no back-reference metadata";
	return HM_MODE_EXIT;
}

struct scrubmap { uint32_t bit; uint32_t type; const char *what; };

/* type 0 (PROBE) = no targeted repair: needs a full xfs_scrub run */
static const struct scrubmap fs_map[] = {
	{ XFS_FSOP_GEOM_SICK_COUNTERS, XFS_SCRUB_TYPE_FSCOUNTERS, "fscounters" },
	{ XFS_FSOP_GEOM_SICK_UQUOTA, XFS_SCRUB_TYPE_UQUOTA, "usrquota" },
	{ XFS_FSOP_GEOM_SICK_GQUOTA, XFS_SCRUB_TYPE_GQUOTA, "grpquota" },
	{ XFS_FSOP_GEOM_SICK_PQUOTA, XFS_SCRUB_TYPE_PQUOTA, "prjquota" },
	{ XFS_FSOP_GEOM_SICK_RT_BITMAP, XFS_SCRUB_TYPE_RTBITMAP, "rtbitmap" },
	{ XFS_FSOP_GEOM_SICK_RT_SUMMARY, XFS_SCRUB_TYPE_RTSUM, "rtsummary" },
	{ XFS_FSOP_GEOM_SICK_QUOTACHECK, XFS_SCRUB_TYPE_QUOTACHECK, "quotacheck" },
	{ XFS_FSOP_GEOM_SICK_NLINKS, XFS_SCRUB_TYPE_NLINKS, "nlinks" },
	{ XFS_FSOP_GEOM_SICK_METADIR, 0, "metadir" },
	{ XFS_FSOP_GEOM_SICK_METAPATH, 0, "metapath" },
	{ 0, 0, NULL },
};

static const struct scrubmap ag_map[] = {
	{ XFS_AG_GEOM_SICK_SB, XFS_SCRUB_TYPE_SB, "sb" },
	{ XFS_AG_GEOM_SICK_AGF, XFS_SCRUB_TYPE_AGF, "agf" },
	{ XFS_AG_GEOM_SICK_AGFL, XFS_SCRUB_TYPE_AGFL, "agfl" },
	{ XFS_AG_GEOM_SICK_AGI, XFS_SCRUB_TYPE_AGI, "agi" },
	{ XFS_AG_GEOM_SICK_BNOBT, XFS_SCRUB_TYPE_BNOBT, "bnobt" },
	{ XFS_AG_GEOM_SICK_CNTBT, XFS_SCRUB_TYPE_CNTBT, "cntbt" },
	{ XFS_AG_GEOM_SICK_INOBT, XFS_SCRUB_TYPE_INOBT, "inobt" },
	{ XFS_AG_GEOM_SICK_FINOBT, XFS_SCRUB_TYPE_FINOBT, "finobt" },
	{ XFS_AG_GEOM_SICK_RMAPBT, XFS_SCRUB_TYPE_RMAPBT, "rmapbt" },
	{ XFS_AG_GEOM_SICK_REFCNTBT, XFS_SCRUB_TYPE_REFCNTBT, "refcountbt" },
	{ XFS_AG_GEOM_SICK_INODES, 0, "inodes" },
	{ 0, 0, NULL },
};

static const struct scrubmap rtg_map[] = {
	{ XFS_RTGROUP_GEOM_SICK_SUPER, XFS_SCRUB_TYPE_RGSUPER, "rgsuper" },
	{ XFS_RTGROUP_GEOM_SICK_BITMAP, XFS_SCRUB_TYPE_RTBITMAP, "rtbitmap" },
	{ XFS_RTGROUP_GEOM_SICK_SUMMARY, XFS_SCRUB_TYPE_RTSUM, "rtsummary" },
	{ XFS_RTGROUP_GEOM_SICK_RMAPBT, XFS_SCRUB_TYPE_RTRMAPBT, "rtrmapbt" },
	{ XFS_RTGROUP_GEOM_SICK_REFCNTBT, XFS_SCRUB_TYPE_RTREFCBT, "rtrefcountbt" },
	{ 0, 0, NULL },
};

static const struct scrubmap ino_map[] = {
	{ XFS_BS_SICK_INODE, XFS_SCRUB_TYPE_INODE, "inode core" },
	{ XFS_BS_SICK_BMBTD, XFS_SCRUB_TYPE_BMBTD, "data fork" },
	{ XFS_BS_SICK_BMBTA, XFS_SCRUB_TYPE_BMBTA, "attr fork" },
	{ XFS_BS_SICK_BMBTC, XFS_SCRUB_TYPE_BMBTC, "cow fork" },
	{ XFS_BS_SICK_DIR, XFS_SCRUB_TYPE_DIR, "directory" },
	{ XFS_BS_SICK_XATTR, XFS_SCRUB_TYPE_XATTR, "extended attributes" },
	{ XFS_BS_SICK_SYMLINK, XFS_SCRUB_TYPE_SYMLINK, "symbolic link" },
	{ XFS_BS_SICK_PARENT, XFS_SCRUB_TYPE_PARENT, "parent pointers" },
	{ XFS_BS_SICK_DIRTREE, XFS_SCRUB_TYPE_DIRTREE, "directory tree" },
	{ 0, 0, NULL },
};

static const char *const scrub_names[] = {
	"probe", "sb", "agf", "agfl", "agi", "bnobt", "cntbt", "inobt",
	"finobt", "rmapbt", "refcountbt", "inode", "bmapbtd", "bmapbta",
	"bmapbtc", "directory", "xattr", "symlink", "parent", "rtbitmap",
	"rtsummary", "usrquota", "grpquota", "prjquota", "fscounters",
	"quotacheck", "nlinks", "healthy", "dirtree", "metapath", "rgsuper",
	"rtrmapbt", "rtrefcountbt",
};

const char *hm_scrub_type_name(uint32_t type)
{
	if (type < sizeof(scrub_names) / sizeof(scrub_names[0]))
		return scrub_names[type];
	return "unknown";
}

static void plan_mask(struct hm_plan *plan, const struct scrubmap *map,
		      uint32_t mask, uint32_t agno, uint64_t ino, uint32_t gen)
{
	uint32_t left = mask;

	for (; map->what; map++) {
		if (!(mask & map->bit))
			continue;
		left &= ~map->bit;
		if (!map->type || plan->nr == HM_MAX_REPAIRS) {
			plan->full_scrub = true;
			plan->full_scrub_why = "no targeted repair for this metadata";
			continue;
		}
		plan->r[plan->nr++] = (struct hm_repair){
			.scrub_type = map->type, .agno = agno, .ino = ino,
			.gen = gen, .what = map->what,
		};
	}
	if (left) {
		plan->full_scrub = true;
		plan->full_scrub_why = "unknown sickness bits";
	}
}

void hm_plan_event(const struct xfs_health_monitor_event *ev,
		   enum hm_mode mode, struct hm_plan *plan)
{
	memset(plan, 0, sizeof(*plan));
	if (!hm_event_known(ev))
		return;
	if (ev->domain == XFS_HM_DOMAIN_MOUNT) {
		if (ev->type == XFS_HM_TYPE_UNMOUNT)
			plan->stop = true;
		/* whatever the mode: what was lost must be looked at */
		if (ev->type == XFS_HM_TYPE_LOST && mode != HM_MODE_EXIT) {
			plan->full_scrub = true;
			plan->full_scrub_why = "events were lost";
		}
		return;
	}
	if (mode != HM_MODE_REPAIR || ev->type != XFS_HM_TYPE_SICK)
		return;
	switch (ev->domain) {
	case XFS_HM_DOMAIN_FS:
		plan_mask(plan, fs_map, ev->e.fs.mask, 0, 0, 0);
		break;
	case XFS_HM_DOMAIN_AG:
		plan_mask(plan, ag_map, ev->e.group.mask, ev->e.group.gno, 0, 0);
		break;
	case XFS_HM_DOMAIN_RTGROUP:
		plan_mask(plan, rtg_map, ev->e.group.mask, ev->e.group.gno, 0, 0);
		break;
	case XFS_HM_DOMAIN_INODE:
		plan_mask(plan, ino_map, ev->e.inode.mask, 0, ev->e.inode.ino,
			  ev->e.inode.gen);
		break;
	}
}
