// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * $LogFile write side: the two restart pages of a clean, closed journal,
 * as a checker leaves it after a repair (layout in include/ntfs/logfile.h;
 * facts from the public NTFS documentation and the Linux driver's
 * logfile.h):
 *
 *  - "RSTR", version 1.1, chkdsk LSN 0, update sequence array right after
 *    the 0x1e-byte header (1 + system page size / 512 entries), restart
 *    area at the next 8-byte boundary;
 *  - restart area: one log client, on the free list (index 0), none in
 *    use: the log is closed, so every reader takes the volume as clean
 *    whatever its Windows version; the clean flag is set as well; client
 *    array right after the 0x30-byte area; file size the journal's usable
 *    size (whole log pages); sequence number bits 67 less the bits of that
 *    size; log record header 0x30 bytes; log record data after the log
 *    page header and its update sequence array;
 *  - client record "NTFS", no previous or next client, both LSNs the
 *    current LSN.
 *
 * The current LSN is the caller's: it must not be below any LSN already
 * stamped on the volume's metadata, so that the log records written next
 * (with higher LSNs) are never taken as older than the records they
 * describe.  Both pages are the same but for their update sequence
 * number.  Everything after them is the caller's (0xff: no log record
 * page written yet).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "ntfs/format.h"
#include "ntfs/logfile.h"
#include "le.h"

#define BLOCK 512u
#define HEADER 0x1eu		/* restart page header */
#define AREA 0x30u		/* restart area */
#define CLIENT 0xa0u		/* log client record */
#define LOG_RECORD_HEADER 0x30u
#define LOG_PAGE_HEADER 0x28u	/* log record page header before its USA */
#define MIN_LOG_PAGES 48u	/* log record pages a journal must hold */

static uint16_t align8(uint32_t v)
{
	return (uint16_t)((v + 7) & ~7u);
}

int ntfs_logfile_restart_build(uint8_t *buf, size_t buf_len, uint64_t log_size,
			       uint32_t sys_page_size, uint64_t current_lsn)
{
	uint32_t sps = sys_page_size, lps, fs_bits = 0;
	uint16_t usa_count, ra_ofs;
	uint64_t usable, v;

	if (sps < BLOCK || sps > 65536u || sps & (sps - 1))
		return -EINVAL;
	/* the default log page size for system pages of 4 and 8 KiB, the
	 * system page size otherwise */
	lps = sps == 8192u ? 4096u : sps;
	usable = log_size & ~(uint64_t)(lps - 1);
	if (buf_len < 2u * sps || log_size > (1ULL << 32) ||
	    usable < 2u * sps + (uint64_t)MIN_LOG_PAGES * lps)
		return -EINVAL;
	for (v = usable; v; v >>= 1)
		fs_bits++;
	usa_count = (uint16_t)(1 + sps / BLOCK);
	ra_ofs = align8(HEADER + 2u * usa_count);

	for (int page = 0; page < 2; page++) {
		uint8_t *p = buf + (size_t)page * sps, *ra = p + ra_ofs;
		uint8_t *cr = ra + AREA;

		memset(p, 0, sps);
		ntfs_put32(p + 0x00, NTFS_MAGIC_RSTR);
		ntfs_put16(p + 0x04, HEADER);
		ntfs_put16(p + 0x06, usa_count);
		/* 0x08 chkdsk LSN: 0 (an RSTR page) */
		ntfs_put32(p + 0x10, sps);
		ntfs_put32(p + 0x14, lps);
		ntfs_put16(p + 0x18, ra_ofs);
		ntfs_put16(p + 0x1a, 1);		/* minor version */
		ntfs_put16(p + 0x1c, 1);		/* major version */

		ntfs_put64(ra + 0x00, current_lsn);
		ntfs_put16(ra + 0x08, 1);		/* log clients */
		ntfs_put16(ra + 0x0a, 0);		/* free list: client 0 */
		ntfs_put16(ra + 0x0c, NTFS_LOG_NO_CLIENT);	/* none in use */
		ntfs_put16(ra + 0x0e, NTFS_RESTART_VOLUME_IS_CLEAN);
		ntfs_put32(ra + 0x10, 67 - fs_bits);
		ntfs_put16(ra + 0x14, AREA + CLIENT);	/* area with the clients */
		ntfs_put16(ra + 0x16, AREA);		/* client array offset */
		ntfs_put64(ra + 0x18, usable);
		/* 0x20 last LSN data length: 0 */
		ntfs_put16(ra + 0x24, LOG_RECORD_HEADER);
		ntfs_put16(ra + 0x26, align8(LOG_PAGE_HEADER + 2u * (1 + lps / BLOCK)));
		ntfs_put32(ra + 0x28, 1);	/* restart log open count */

		ntfs_put64(cr + 0x00, current_lsn);	/* oldest LSN */
		ntfs_put64(cr + 0x08, current_lsn);	/* client restart LSN */
		ntfs_put16(cr + 0x10, NTFS_LOG_NO_CLIENT);	/* previous */
		ntfs_put16(cr + 0x12, NTFS_LOG_NO_CLIENT);	/* next */
		ntfs_put16(cr + 0x14, 1);		/* sequence number: closed */
		ntfs_put32(cr + 0x1c, 8);		/* name length in bytes */
		ntfs_put16(cr + 0x20, 'N');
		ntfs_put16(cr + 0x22, 'T');
		ntfs_put16(cr + 0x24, 'F');
		ntfs_put16(cr + 0x26, 'S');

		ntfs_fixup_apply(p, sps, (uint16_t)(page + 1));
	}
	return (int)(2 * sps);
}
