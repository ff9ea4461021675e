// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One targeted repair: reopen the mount point, make sure its file handle is
 * still the one recorded at start (the mount may have moved or been
 * replaced; never repair the wrong filesystem), then XFS_IOC_SCRUB_METADATA
 * with the repair flag on exactly the reported object.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "healer.h"

int hm_ioctl_retry(int fd, unsigned long req, void *arg)
{
	/* a signal or a busy object: try again, backing off up to ~1.5 s */
	for (unsigned int i = 0;; i++) {
		struct timespec ts = { 0, (long)(50000000L << (i < 4 ? i : 4)) };
		int ret = ioctl(fd, req, arg);

		if (ret >= 0 || i == 5 || (errno != EINTR && errno != EAGAIN))
			return ret;
		if (errno == EAGAIN)
			nanosleep(&ts, NULL);
	}
}

enum hm_repair_result hm_repair_one(const char *mountpoint,
				    const struct hm_handle *expect,
				    const struct hm_repair *r, char *msg,
				    size_t msglen)
{
	struct xfs_scrub_metadata sm;
	struct hm_handle now;
	struct statvfs vfs;
	int fd, ret, err;

	fd = open(mountpoint, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(msg, msglen, "cannot reopen the mount point: %s",
			 strerror(errno));
		return HM_REPAIR_MOVED;
	}
	if (hm_get_handle(fd, &now) < 0 || !hm_handle_equal(&now, expect)) {
		close(fd);
		snprintf(msg, msglen, "the mount point is no longer the "
			 "monitored filesystem; not repairing");
		return HM_REPAIR_MOVED;
	}
	if (fstatvfs(fd, &vfs) == 0 && (vfs.f_flag & ST_RDONLY)) {
		close(fd);
		snprintf(msg, msglen, "mounted read-only; not repairing");
		return HM_REPAIR_READONLY;
	}
	memset(&sm, 0, sizeof(sm));
	sm.sm_type = r->scrub_type;
	sm.sm_flags = XFS_SCRUB_IFLAG_REPAIR;
	sm.sm_ino = r->ino;
	sm.sm_gen = r->gen;
	sm.sm_agno = r->agno;
	ret = hm_ioctl_retry(fd, XFS_IOC_SCRUB_METADATA, &sm);
	err = errno;
	close(fd);
	if (ret < 0) {
		switch (err) {
		case EOPNOTSUPP:
		case ENOTTY:
			snprintf(msg, msglen, "the kernel cannot repair this: %s",
				 strerror(err));
			return HM_REPAIR_UNSUPPORTED;
		case EROFS:
			snprintf(msg, msglen, "mounted read-only; not repairing");
			return HM_REPAIR_READONLY;
		case ENOENT:
		case ESTALE:
			snprintf(msg, msglen, "object is gone: %s",
				 strerror(err));
			return HM_REPAIR_CLEAN;
		}
		snprintf(msg, msglen, "Repair failed: %s", strerror(err));
		return HM_REPAIR_FAILED;
	}
	if (sm.sm_flags & (XFS_SCRUB_OFLAG_CORRUPT | XFS_SCRUB_OFLAG_XCORRUPT |
			   XFS_SCRUB_OFLAG_INCOMPLETE)) {
		snprintf(msg, msglen, "Repair unsuccessful; still corrupt "
			 "(flags 0x%x).", sm.sm_flags);
		return HM_REPAIR_FAILED;
	}
	if (sm.sm_flags & XFS_SCRUB_OFLAG_XFAIL) {
		snprintf(msg, msglen, "Repair unsuccessful; cross-referencing "
			 "failed (flags 0x%x).", sm.sm_flags);
		return HM_REPAIR_FAILED;
	}
	if (sm.sm_flags & XFS_SCRUB_OFLAG_NO_REPAIR_NEEDED) {
		snprintf(msg, msglen, "No repairs needed.");
		return HM_REPAIR_CLEAN;
	}
	snprintf(msg, msglen, "Repairs successful.");
	return HM_REPAIR_DONE;
}
