// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The monitored filesystem: open its mount point (checking that it is the
 * root of an XFS mount), record its file handle so that a later reopen can
 * prove it is still the same filesystem, read the autofsck property and
 * the back-reference features, and open the health monitor.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "healer.h"

#ifndef STATX_ATTR_MOUNT_ROOT
#define STATX_ATTR_MOUNT_ROOT 0x00002000
#endif
/* Linux 5.8 and 6.8 UAPI; bookworm's headers may lack the second */
#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x00001000U
#endif
#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x00004000U
#endif

/* the unique id of the mount of fd/path, 0 if the kernel has none */
static uint64_t mnt_unique(int dirfd, const char *path, int flags)
{
	struct statx stx;

	memset(&stx, 0, sizeof(stx));
	if (statx(dirfd, path, flags, STATX_MNT_ID_UNIQUE, &stx) < 0 ||
	    !(stx.stx_mask & STATX_MNT_ID_UNIQUE))
		return 0;
	return stx.stx_mnt_id;
}

uint64_t hm_mount_key(const char *path, uint64_t mi_id)
{
	struct statx stx;
	int flags = AT_NO_AUTOMOUNT | AT_SYMLINK_NOFOLLOW;
	uint64_t u;

	memset(&stx, 0, sizeof(stx));
	/* the path may be covered by a later mount: only its own id counts */
	if (statx(AT_FDCWD, path, flags, STATX_MNT_ID, &stx) == 0 &&
	    (stx.stx_mask & STATX_MNT_ID) && stx.stx_mnt_id == mi_id &&
	    (u = mnt_unique(AT_FDCWD, path, flags)) != 0)
		return u;
	return mi_id | (1ULL << 63);
}

/* the fs property lives in the root directory as a trusted xattr */
#define AUTOFSCK_XATTR "trusted.xfs:autofsck"

static int is_mount_root(int fd)
{
	struct statx stx;
	struct stat a, b;
	int pfd, ret;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &stx) == 0 &&
	    (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
		return !!(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
	/* older kernels: the parent is on another device, or is itself */
	pfd = openat(fd, "..", O_RDONLY | O_CLOEXEC);
	if (pfd < 0)
		return -1;
	ret = fstat(fd, &a) == 0 && fstat(pfd, &b) == 0 &&
	      (a.st_dev != b.st_dev || a.st_ino == b.st_ino);
	close(pfd);
	return ret;
}

int hm_open_mountpoint(const char *path, const struct hm_out *o)
{
	char *lbl = hm_escape_dup(path);
	struct statfs sfs;
	int fd, root;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		hm_say(o, HM_ERR, "cannot open %s: %s", lbl, strerror(errno));
		goto out;
	}
	if (fstatfs(fd, &sfs) < 0) {
		hm_say(o, HM_ERR, "%s: %s", lbl, strerror(errno));
		goto fail;
	}
	if (sfs.f_type != XFS_SUPER_MAGIC) {
		hm_say(o, HM_ERR, "%s: not an XFS filesystem", lbl);
		goto fail;
	}
	root = is_mount_root(fd);
	if (root <= 0) {
		hm_say(o, HM_ERR, "%s: not a mount point (give the directory "
		       "where the XFS filesystem is mounted)", lbl);
		goto fail;
	}
	goto out;
fail:
	close(fd);
	fd = -1;
out:
	free(lbl);
	return fd;
}

int hm_get_handle(int fd, struct hm_handle *h)
{
	union {
		struct file_handle fh;
		unsigned char buf[sizeof(struct file_handle) + HM_HANDLE_MAX];
	} u;

	memset(h, 0, sizeof(*h));
	u.fh.handle_bytes = HM_HANDLE_MAX;
	if (name_to_handle_at(fd, "", &u.fh, &h->mount_id, AT_EMPTY_PATH) < 0)
		return -1;
	h->mnt_unique = mnt_unique(fd, "", AT_EMPTY_PATH);
	h->len = u.fh.handle_bytes;
	h->type = u.fh.handle_type;
	memcpy(h->bytes, u.fh.f_handle, h->len);
	return 0;
}

bool hm_handle_equal(const struct hm_handle *a, const struct hm_handle *b)
{
	/* the unique id tells a new mount that reuses the 31-bit id */
	return a->mount_id == b->mount_id && a->mnt_unique == b->mnt_unique &&
	       a->len == b->len &&
	       a->type == b->type && !memcmp(a->bytes, b->bytes, a->len);
}

void hm_read_fsinfo(int fd, struct hm_fsinfo *info)
{
	struct xfs_fsop_geom geo;
	struct statvfs vfs;
	ssize_t n;

	memset(info, 0, sizeof(*info));
	n = fgetxattr(fd, AUTOFSCK_XATTR, info->autofsck,
		      sizeof(info->autofsck) - 1);
	if (n >= 0) {
		info->autofsck[n] = '\0';
		info->has_autofsck = true;
	}
	if (fstatvfs(fd, &vfs) == 0)
		info->readonly = vfs.f_flag & ST_RDONLY;
	memset(&geo, 0, sizeof(geo));
	if (ioctl(fd, XFS_IOC_FSGEOMETRY, &geo) == 0)
		info->backrefs = geo.flags & (XFS_FSOP_GEOM_FLAGS_RMAPBT |
					      XFS_FSOP_GEOM_FLAGS_PARENT);
}

int hm_open_monitor(int fd, bool verbose, const char *path,
		    const struct hm_out *o)
{
	struct xfs_health_monitor req;
	int mfd, err;

	memset(&req, 0, sizeof(req));
	req.flags = verbose ? XFS_HEALTH_MONITOR_VERBOSE : 0;
	req.format = XFS_HEALTH_MONITOR_FMT_V0;
	mfd = ioctl(fd, XFS_IOC_HEALTH_MONITOR, &req);
	if (mfd >= 0) {
		/* hooks must not inherit the monitor */
		fcntl(mfd, F_SETFD, FD_CLOEXEC);
		return mfd;
	}
	err = errno;
	switch (err) {
	case ENOTTY:
	case EOPNOTSUPP:
	case EINVAL:
		hm_say(o, HM_ERR, "%s: this kernel has no XFS health monitor "
		       "(Linux 7.0 or later needed): %s", path, strerror(err));
		break;
	case EEXIST:
		hm_say(o, HM_ERR, "%s: already watched by another health "
		       "monitor", path);
		break;
	case EPERM:
	case EACCES:
		hm_say(o, HM_ERR, "%s: opening the health monitor needs "
		       "CAP_SYS_ADMIN: %s", path, strerror(err));
		break;
	default:
		hm_say(o, HM_ERR, "%s: cannot open the health monitor: %s",
		       path, strerror(err));
	}
	errno = err;
	return -1;
}
