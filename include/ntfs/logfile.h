/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * $LogFile read side: the two restart pages at the start of the journal
 * (offset 0 and the system page size) and the restart area each holds.
 * Layout (public NTFS documentation, the Linux ntfs driver's logfile.h):
 * restart page header "RSTR" (or "CHKD" after chkdsk), multi-sector
 * protected like FILE records, then at restart_area_offset the restart
 * area: current LSN, log clients (count, free and in-use lists, array
 * offset), flags (0x0002: the volume is clean), lengths and sizes.
 */
#ifndef NTFS_LOGFILE_H
#define NTFS_LOGFILE_H

#include <stddef.h>
#include <stdint.h>

#define NTFS_MAGIC_RSTR 0x52545352u	/* "RSTR" */
#define NTFS_MAGIC_CHKD 0x444b4843u	/* "CHKD" */
#define NTFS_LOG_NO_CLIENT 0xffffu
#define NTFS_RESTART_VOLUME_IS_CLEAN 0x0002u
#define NTFS_LOG_WHY 128

enum ntfs_log_state {
	NTFS_LOG_EMPTY,		/* every byte given is 0xff: nothing to replay */
	NTFS_LOG_CLEAN,		/* restart area says the volume is clean */
	NTFS_LOG_DIRTY,		/* log open without the clean flag: changes
				 * not checkpointed (not cleanly unmounted) */
	NTFS_LOG_CORRUPT,	/* no usable restart page: WHY says why */
};

struct ntfs_log_info {
	enum ntfs_log_state state;
	int page;			/* restart page used: 0 or 1; -1 none */
	uint32_t magic;			/* RSTR or CHKD */
	uint32_t system_page_size, log_page_size;
	int16_t major, minor;
	uint64_t current_lsn;
	uint16_t log_clients, client_in_use, flags;
	uint64_t file_size;
	char why[NTFS_LOG_WHY];		/* CORRUPT: the first page's rejection */
};

/* Parse the start of a journal: BUF holds its first LEN bytes (at least
 * the first two restart pages, 2 * 64 KiB is always enough).  BUF is
 * modified (fixups removed from the pages parsed).  Never reads outside
 * BUF[0..LEN).  Returns INFO->state. */
enum ntfs_log_state ntfs_logfile_parse(uint8_t *buf, size_t len,
				       struct ntfs_log_info *info);

/* Check one restart page of PAGE_SIZE bytes at BUF in place (fixups
 * removed when valid).  0 and INFO filled (state CLEAN or DIRTY), or -1
 * with INFO->why. */
int ntfs_restart_page_check(uint8_t *buf, uint32_t page_size,
			    struct ntfs_log_info *info);

/* Write side (logfile_write.c): the two restart pages of a clean, closed
 * journal of LOG_SIZE bytes for system pages of SYS_PAGE_SIZE bytes (a
 * power of two, 512..65536; 4096 on the usual hosts), current LSN
 * CURRENT_LSN, fixups applied, into BUF[0 .. 2 * SYS_PAGE_SIZE).  The
 * rest of the journal is the caller's (0xff).  Returns the bytes written,
 * or -EINVAL when BUF_LEN is too short or the journal too small (two
 * restart pages and 48 log pages) or too large (4 GiB) to hold a log. */
int ntfs_logfile_restart_build(uint8_t *buf, size_t buf_len, uint64_t log_size,
			       uint32_t sys_page_size, uint64_t current_lsn);

#endif
