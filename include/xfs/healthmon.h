/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fsforge's own description of the XFS kernel ABI used by xfs_healer: the
 * health monitor of Linux 7.x, online scrub/repair, geometry.  Written from
 * the values documented in shared/docs/xfs-health-monitor.md and the bit
 * numbers of Linux's UAPI header (not copied from it).  Sizes are checked at
 * compile time below.
 */
#ifndef FSFORGE_XFS_HEALTHMON_H
#define FSFORGE_XFS_HEALTHMON_H

#include <stdint.h>
#include <sys/ioctl.h>

/* ---- health monitor request --------------------------------------------- */
struct xfs_health_monitor {
	uint64_t flags;			/* XFS_HEALTH_MONITOR_* */
	uint8_t format;			/* XFS_HEALTH_MONITOR_FMT_* */
	uint8_t pad[23];		/* must be zero */
};
#define XFS_HEALTH_MONITOR_VERBOSE	(1ULL << 0)	/* healthy events too */
#define XFS_HEALTH_MONITOR_FMT_V0	0

/* argument of XFS_IOC_HEALTH_FD_ON_MONITORED_FS (issued on the monitor) */
struct xfs_health_file_on_monitored_fs {
	int32_t fd;
	uint32_t flags;			/* zero */
};

/* ---- events: read(2) returns whole 64-byte records ---------------------- */
enum xfs_hm_domain {
	XFS_HM_DOMAIN_MOUNT = 0,
	XFS_HM_DOMAIN_FS = 1,
	XFS_HM_DOMAIN_AG = 2,
	XFS_HM_DOMAIN_INODE = 3,
	XFS_HM_DOMAIN_RTGROUP = 4,
	XFS_HM_DOMAIN_DATADEV = 5,
	XFS_HM_DOMAIN_RTDEV = 6,
	XFS_HM_DOMAIN_LOGDEV = 7,
	XFS_HM_DOMAIN_FILERANGE = 8,
	XFS_HM_DOMAIN_NR
};

enum xfs_hm_type {
	XFS_HM_TYPE_RUNNING = 0,
	XFS_HM_TYPE_LOST = 1,
	XFS_HM_TYPE_UNMOUNT = 2,
	XFS_HM_TYPE_SICK = 3,		/* found at runtime */
	XFS_HM_TYPE_CORRUPT = 4,	/* found by a scrub */
	XFS_HM_TYPE_HEALTHY = 5,
	XFS_HM_TYPE_SHUTDOWN = 6,
	XFS_HM_TYPE_MEDIA_ERROR = 7,
	XFS_HM_TYPE_BUFREAD = 8,
	XFS_HM_TYPE_BUFWRITE = 9,
	XFS_HM_TYPE_DIOREAD = 10,
	XFS_HM_TYPE_DIOWRITE = 11,
	XFS_HM_TYPE_DATALOST = 12,
	XFS_HM_TYPE_NR
};

struct xfs_health_monitor_event {
	uint32_t domain;		/* enum xfs_hm_domain */
	uint32_t type;			/* enum xfs_hm_type */
	uint64_t time_ns;		/* since the Unix epoch, coarse */
	union {
		struct { uint64_t count; } lost;
		struct { uint32_t mask; } fs;
		struct { uint32_t mask; uint32_t gno; } group;
		struct { uint32_t mask; uint32_t gen; uint64_t ino; } inode;
		struct { uint32_t reasons; } shutdown;
		struct { uint64_t daddr; uint64_t bbcount; } media;
		struct {
			uint64_t pos;
			uint64_t len;
			uint64_t ino;
			uint32_t gen;
			uint32_t error;
		} filerange;
		uint8_t raw[32];
	} e;
	uint64_t pad[2];
};
#define XFS_HM_EVENT_SIZE 64

/* shutdown reasons */
#define XFS_HM_SHUTDOWN_META_IO_ERROR	(1U << 0)
#define XFS_HM_SHUTDOWN_LOG_IO_ERROR	(1U << 1)
#define XFS_HM_SHUTDOWN_FORCE_UMOUNT	(1U << 2)
#define XFS_HM_SHUTDOWN_CORRUPT_INCORE	(1U << 3)
#define XFS_HM_SHUTDOWN_CORRUPT_ONDISK	(1U << 4)
#define XFS_HM_SHUTDOWN_DEVICE_REMOVED	(1U << 5)

/* whole-fs sickness (as in XFS_IOC_FSGEOMETRY sick/checked) */
#define XFS_FSOP_GEOM_SICK_COUNTERS	(1U << 0)
#define XFS_FSOP_GEOM_SICK_UQUOTA	(1U << 1)
#define XFS_FSOP_GEOM_SICK_GQUOTA	(1U << 2)
#define XFS_FSOP_GEOM_SICK_PQUOTA	(1U << 3)
#define XFS_FSOP_GEOM_SICK_RT_BITMAP	(1U << 4)
#define XFS_FSOP_GEOM_SICK_RT_SUMMARY	(1U << 5)
#define XFS_FSOP_GEOM_SICK_QUOTACHECK	(1U << 6)
#define XFS_FSOP_GEOM_SICK_NLINKS	(1U << 7)
#define XFS_FSOP_GEOM_SICK_METADIR	(1U << 8)
#define XFS_FSOP_GEOM_SICK_METAPATH	(1U << 9)

/* per-AG sickness (XFS_IOC_AG_GEOMETRY) */
#define XFS_AG_GEOM_SICK_SB		(1U << 0)
#define XFS_AG_GEOM_SICK_AGF		(1U << 1)
#define XFS_AG_GEOM_SICK_AGFL		(1U << 2)
#define XFS_AG_GEOM_SICK_AGI		(1U << 3)
#define XFS_AG_GEOM_SICK_BNOBT		(1U << 4)
#define XFS_AG_GEOM_SICK_CNTBT		(1U << 5)
#define XFS_AG_GEOM_SICK_INOBT		(1U << 6)
#define XFS_AG_GEOM_SICK_FINOBT		(1U << 7)
#define XFS_AG_GEOM_SICK_RMAPBT		(1U << 8)
#define XFS_AG_GEOM_SICK_REFCNTBT	(1U << 9)
#define XFS_AG_GEOM_SICK_INODES		(1U << 10)

/* per-rtgroup sickness (XFS_IOC_RTGROUP_GEOMETRY) */
#define XFS_RTGROUP_GEOM_SICK_SUPER	(1U << 0)
#define XFS_RTGROUP_GEOM_SICK_BITMAP	(1U << 1)
#define XFS_RTGROUP_GEOM_SICK_SUMMARY	(1U << 2)
#define XFS_RTGROUP_GEOM_SICK_RMAPBT	(1U << 3)
#define XFS_RTGROUP_GEOM_SICK_REFCNTBT	(1U << 4)

/* per-inode sickness (bulkstat bs_sick) */
#define XFS_BS_SICK_INODE		(1U << 0)
#define XFS_BS_SICK_BMBTD		(1U << 1)
#define XFS_BS_SICK_BMBTA		(1U << 2)
#define XFS_BS_SICK_BMBTC		(1U << 3)
#define XFS_BS_SICK_DIR			(1U << 4)
#define XFS_BS_SICK_XATTR		(1U << 5)
#define XFS_BS_SICK_SYMLINK		(1U << 6)
#define XFS_BS_SICK_PARENT		(1U << 7)
#define XFS_BS_SICK_DIRTREE		(1U << 8)

/* ---- online scrub / repair ---------------------------------------------- */
struct xfs_scrub_metadata {
	uint32_t sm_type;		/* XFS_SCRUB_TYPE_* */
	uint32_t sm_flags;		/* XFS_SCRUB_[IO]FLAG_* */
	uint64_t sm_ino;
	uint32_t sm_gen;
	uint32_t sm_agno;		/* AG or rtgroup number */
	uint64_t sm_reserved[5];	/* zero */
};

enum xfs_scrub_type {
	XFS_SCRUB_TYPE_PROBE = 0,
	XFS_SCRUB_TYPE_SB = 1,
	XFS_SCRUB_TYPE_AGF = 2,
	XFS_SCRUB_TYPE_AGFL = 3,
	XFS_SCRUB_TYPE_AGI = 4,
	XFS_SCRUB_TYPE_BNOBT = 5,
	XFS_SCRUB_TYPE_CNTBT = 6,
	XFS_SCRUB_TYPE_INOBT = 7,
	XFS_SCRUB_TYPE_FINOBT = 8,
	XFS_SCRUB_TYPE_RMAPBT = 9,
	XFS_SCRUB_TYPE_REFCNTBT = 10,
	XFS_SCRUB_TYPE_INODE = 11,
	XFS_SCRUB_TYPE_BMBTD = 12,
	XFS_SCRUB_TYPE_BMBTA = 13,
	XFS_SCRUB_TYPE_BMBTC = 14,
	XFS_SCRUB_TYPE_DIR = 15,
	XFS_SCRUB_TYPE_XATTR = 16,
	XFS_SCRUB_TYPE_SYMLINK = 17,
	XFS_SCRUB_TYPE_PARENT = 18,
	XFS_SCRUB_TYPE_RTBITMAP = 19,
	XFS_SCRUB_TYPE_RTSUM = 20,
	XFS_SCRUB_TYPE_UQUOTA = 21,
	XFS_SCRUB_TYPE_GQUOTA = 22,
	XFS_SCRUB_TYPE_PQUOTA = 23,
	XFS_SCRUB_TYPE_FSCOUNTERS = 24,
	XFS_SCRUB_TYPE_QUOTACHECK = 25,
	XFS_SCRUB_TYPE_NLINKS = 26,
	XFS_SCRUB_TYPE_HEALTHY = 27,
	XFS_SCRUB_TYPE_DIRTREE = 28,
	XFS_SCRUB_TYPE_METAPATH = 29,
	XFS_SCRUB_TYPE_RGSUPER = 30,
	XFS_SCRUB_TYPE_RTRMAPBT = 31,
	XFS_SCRUB_TYPE_RTREFCBT = 32,
};

#define XFS_SCRUB_IFLAG_REPAIR		(1U << 0)
#define XFS_SCRUB_OFLAG_CORRUPT		(1U << 1)
#define XFS_SCRUB_OFLAG_PREEN		(1U << 2)
#define XFS_SCRUB_OFLAG_XFAIL		(1U << 3)
#define XFS_SCRUB_OFLAG_XCORRUPT	(1U << 4)
#define XFS_SCRUB_OFLAG_INCOMPLETE	(1U << 5)
#define XFS_SCRUB_OFLAG_WARNING		(1U << 6)
#define XFS_SCRUB_OFLAG_NO_REPAIR_NEEDED (1U << 7)

/* ---- geometry (for the back-reference features) ------------------------- */
struct xfs_fsop_geom {
	uint32_t blocksize, rtextsize, agblocks, agcount;
	uint32_t logblocks, sectsize, inodesize, imaxpct;
	uint64_t datablocks, rtblocks, rtextents, logstart;
	unsigned char uuid[16];
	uint32_t sunit, swidth, version, flags;
	uint32_t logsectsize, rtsectsize, dirblocksize, logsunit;
	uint32_t sick, checked;
	uint64_t reserved[17];
};
#define XFS_FSOP_GEOM_FLAGS_RMAPBT	(1U << 19)
#define XFS_FSOP_GEOM_FLAGS_PARENT	(1U << 25)

/* ---- ioctls (type 'X') --------------------------------------------------- */
#define XFS_IOC_FSGEOMETRY	_IOR('X', 126, struct xfs_fsop_geom)
#define XFS_IOC_SCRUB_METADATA	_IOWR('X', 60, struct xfs_scrub_metadata)
#define XFS_IOC_HEALTH_MONITOR	_IOW('X', 68, struct xfs_health_monitor)
#define XFS_IOC_HEALTH_FD_ON_MONITORED_FS \
	_IOW('X', 69, struct xfs_health_file_on_monitored_fs)

#define XFS_SUPER_MAGIC 0x58465342

_Static_assert(sizeof(struct xfs_health_monitor) == 32, "monitor request");
_Static_assert(sizeof(struct xfs_health_monitor_event) == XFS_HM_EVENT_SIZE,
	       "event record");
_Static_assert(sizeof(struct xfs_scrub_metadata) == 64, "scrub request");
_Static_assert(sizeof(struct xfs_fsop_geom) == 256, "fs geometry");
_Static_assert(sizeof(struct xfs_health_file_on_monitored_fs) == 8, "fd query");

#endif
