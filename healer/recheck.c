// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The full re-check without systemd: when events were lost (or a repair
 * failed) and no xfs_scrub@ service can be started, ask the kernel to
 * check - and in repair mode repair - every per-AG and filesystem-wide
 * metadata type itself, one XFS_IOC_SCRUB_METADATA per object.  Types the
 * filesystem does not have (quotas off, no rmapbt, no realtime) answer
 * ENOENT/EOPNOTSUPP and are skipped.  Per-inode metadata needs a walk of
 * every inode and stays xfs_scrub's job: the message says so.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "healer.h"

static const uint32_t ag_types[] = {
	XFS_SCRUB_TYPE_SB, XFS_SCRUB_TYPE_AGF, XFS_SCRUB_TYPE_AGFL,
	XFS_SCRUB_TYPE_AGI, XFS_SCRUB_TYPE_BNOBT, XFS_SCRUB_TYPE_CNTBT,
	XFS_SCRUB_TYPE_INOBT, XFS_SCRUB_TYPE_FINOBT, XFS_SCRUB_TYPE_RMAPBT,
	XFS_SCRUB_TYPE_REFCNTBT,
};

static const uint32_t fs_types[] = {
	XFS_SCRUB_TYPE_RTBITMAP, XFS_SCRUB_TYPE_RTSUM, XFS_SCRUB_TYPE_UQUOTA,
	XFS_SCRUB_TYPE_GQUOTA, XFS_SCRUB_TYPE_PQUOTA, XFS_SCRUB_TYPE_QUOTACHECK,
	XFS_SCRUB_TYPE_NLINKS, XFS_SCRUB_TYPE_FSCOUNTERS,
};

struct tally { unsigned int checked, corrupt, repaired, failed; };

static void one(int fd, const char *label, uint32_t type, uint32_t agno,
		bool per_ag, bool repair, const struct hm_out *o,
		struct tally *t)
{
	struct xfs_scrub_metadata sm;
	char where[32] = "";
	int ret;

	if (per_ag)
		snprintf(where, sizeof(where), " agno 0x%x", agno);
	memset(&sm, 0, sizeof(sm));
	sm.sm_type = type;
	sm.sm_agno = agno;
	sm.sm_flags = repair ? XFS_SCRUB_IFLAG_REPAIR : 0;
	ret = hm_ioctl_retry(fd, XFS_IOC_SCRUB_METADATA, &sm);
	if (ret < 0) {
		if (errno == ENOENT || errno == EOPNOTSUPP || errno == ENOTTY)
			return;		/* not on this filesystem */
		t->checked++;
		t->failed++;
		hm_say(o, HM_ERR, "%s%s %s: re-check failed: %s", label, where,
		       hm_scrub_type_name(type), strerror(errno));
		return;
	}
	t->checked++;
	if (!(sm.sm_flags & (XFS_SCRUB_OFLAG_CORRUPT | XFS_SCRUB_OFLAG_XCORRUPT |
			     XFS_SCRUB_OFLAG_XFAIL | XFS_SCRUB_OFLAG_INCOMPLETE))) {
		if (repair && !(sm.sm_flags & XFS_SCRUB_OFLAG_NO_REPAIR_NEEDED)) {
			/* the repair flag with no "not needed": it was fixed */
			t->repaired++;
			hm_say(o, HM_NOTICE, "%s%s %s: Repairs successful.",
			       label, where, hm_scrub_type_name(type));
		}
		return;
	}
	if (repair) {
		t->failed++;
		hm_say(o, HM_ERR, "%s%s %s: still corrupt after repair (flags "
		       "0x%x)", label, where, hm_scrub_type_name(type),
		       sm.sm_flags);
	} else {
		t->corrupt++;
		hm_say(o, HM_WARNING, "%s%s %s: corrupt (flags 0x%x)", label,
		       where, hm_scrub_type_name(type), sm.sm_flags);
	}
}

int hm_recheck(const char *mountpoint, const char *label,
	       const struct hm_handle *expect, bool repair,
	       const struct hm_out *o)
{
	struct xfs_fsop_geom geo;
	struct hm_handle now;
	struct statvfs vfs;
	struct tally t = { 0 };
	int fd;

	fd = open(mountpoint, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || hm_get_handle(fd, &now) < 0 ||
	    !hm_handle_equal(&now, expect)) {
		hm_say(o, HM_ERR, "%s: the mount point is no longer the "
		       "monitored filesystem; no re-check", label);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (repair && fstatvfs(fd, &vfs) == 0 && (vfs.f_flag & ST_RDONLY)) {
		hm_say(o, HM_NOTICE, "%s: mounted read-only: re-check without "
		       "repairs", label);
		repair = false;
	}
	memset(&geo, 0, sizeof(geo));
	if (ioctl(fd, XFS_IOC_FSGEOMETRY, &geo) < 0) {
		hm_say(o, HM_ERR, "%s: re-check: cannot read the geometry: %s",
		       label, strerror(errno));
		close(fd);
		return -1;
	}
	for (uint32_t ag = 0; ag < geo.agcount; ag++)
		for (size_t i = 0; i < sizeof(ag_types) / sizeof(*ag_types); i++)
			one(fd, label, ag_types[i], ag, true, repair, o, &t);
	for (size_t i = 0; i < sizeof(fs_types) / sizeof(*fs_types); i++)
		one(fd, label, fs_types[i], 0, false, repair, o, &t);
	close(fd);
	hm_say(o, t.corrupt || t.failed ? HM_WARNING : HM_NOTICE,
	       "%s: re-check done: %u objects checked, %u corrupt, %u "
	       "repaired, %u failed (per-inode metadata: run xfs_scrub)",
	       label, t.checked, t.corrupt, t.repaired, t.failed);
	return t.corrupt || t.failed ? 1 : 0;
}
