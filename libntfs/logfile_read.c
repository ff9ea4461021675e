// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * $LogFile read side: a bounded parser of the two restart pages and their
 * restart areas (see include/ntfs/logfile.h for the layout).  Every field
 * is read with memcpy from BUF at an offset checked against the page size
 * first; the page is judged in the order a driver would: magic, sizes and
 * version, update sequence array, restart area offset, then the restart
 * area's own lengths and client lists.
 */
#include "config.h"

#include <endian.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ntfs/format.h"
#include "ntfs/logfile.h"
#include "le.h"

/* restart page header */
#define RP_MAGIC 0x00
#define RP_USA_OFS 0x04
#define RP_USA_COUNT 0x06
#define RP_CHKDSK_LSN 0x08
#define RP_SYS_PAGE 0x10
#define RP_LOG_PAGE 0x14
#define RP_RA_OFS 0x18
#define RP_MINOR 0x1a
#define RP_MAJOR 0x1c
#define RP_SIZE 0x1e
/* restart area */
#define RA_CURRENT_LSN 0x00
#define RA_LOG_CLIENTS 0x08
#define RA_FREE_LIST 0x0a
#define RA_IN_USE_LIST 0x0c
#define RA_FLAGS 0x0e
#define RA_SEQ_BITS 0x10
#define RA_LENGTH 0x14
#define RA_CLIENT_ARRAY 0x16
#define RA_FILE_SIZE 0x18
#define RA_REC_HDR_LEN 0x24
#define RA_PAGE_DATA_OFS 0x26
#define RA_SIZE 0x30
#define CLIENT_RECORD_SIZE 0xa0
#define CR_NEXT 0x12
#define BLOCK 512u
#define MAX_PAGE 65536u

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int reject(struct ntfs_log_info *info, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(info->why, sizeof(info->why), fmt, ap);
	va_end(ap);
	return -1;
}

static int pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

int ntfs_restart_page_check(uint8_t *buf, uint32_t page_size,
			    struct ntfs_log_info *info)
{
	uint32_t magic, sps, lps, usa_end, ra_len, ca_end, fs_bits, walked = 0;
	uint64_t fsz;
	uint16_t usa_ofs, usa_count, ra_ofs, clients, free_l, used_l, ca_ofs;
	const uint8_t *ra;
	int16_t major, minor;

	info->why[0] = 0;
	if (page_size < BLOCK)
		return reject(info, "restart page truncated (%u bytes)", page_size);
	magic = ntfs_get32(buf + RP_MAGIC);
	if (magic != NTFS_MAGIC_RSTR && magic != NTFS_MAGIC_CHKD)
		return reject(info, "restart page magic is 0x%08x, not RSTR or CHKD", magic);
	sps = ntfs_get32(buf + RP_SYS_PAGE);
	lps = ntfs_get32(buf + RP_LOG_PAGE);
	if (sps < BLOCK || sps > MAX_PAGE || !pow2(sps))
		return reject(info, "system page size %u is not a power of two in 512..65536", sps);
	if (lps < BLOCK || lps > MAX_PAGE || !pow2(lps))
		return reject(info, "log page size %u is not a power of two in 512..65536", lps);
	if (sps > page_size)
		return reject(info, "system page size %u exceeds the %u bytes read", sps, page_size);
	major = (int16_t)ntfs_get16(buf + RP_MAJOR);
	minor = (int16_t)ntfs_get16(buf + RP_MINOR);
	if (!(major == 1 && minor == 1) && !(major == 2 && minor == 0))
		return reject(info, "version %d.%d is neither 1.1 nor 2.0", major, minor);
	usa_ofs = ntfs_get16(buf + RP_USA_OFS);
	usa_count = ntfs_get16(buf + RP_USA_COUNT);
	usa_end = (uint32_t)usa_ofs + 2u * usa_count;
	if (usa_count != 1 + sps / BLOCK || usa_ofs < RP_SIZE || usa_ofs & 1 ||
	    usa_end > BLOCK - 2)
		return reject(info, "update sequence array (offset %u, %u entries) does not fit a %u-byte page",
			      usa_ofs, usa_count, sps);
	if (magic == NTFS_MAGIC_RSTR && ntfs_get64(buf + RP_CHKDSK_LSN))
		return reject(info, "RSTR page with a chkdsk LSN");
	ra_ofs = ntfs_get16(buf + RP_RA_OFS);
	if (ra_ofs & 7 || ra_ofs < usa_end || (uint32_t)ra_ofs + RA_SIZE > sps)
		return reject(info, "restart area offset %u is outside the page", ra_ofs);
	if (ntfs_fixup_remove(buf, sps))
		return reject(info, "restart page is torn (update sequence mismatch)");

	ra = buf + ra_ofs;
	clients = ntfs_get16(ra + RA_LOG_CLIENTS);
	free_l = ntfs_get16(ra + RA_FREE_LIST);
	used_l = ntfs_get16(ra + RA_IN_USE_LIST);
	ca_ofs = ntfs_get16(ra + RA_CLIENT_ARRAY);
	ra_len = ntfs_get16(ra + RA_LENGTH);
	if (ca_ofs & 7 || (uint32_t)ra_ofs + ca_ofs > BLOCK - 2)
		return reject(info, "client array offset %u is outside the first sector", ca_ofs);
	ca_end = ca_ofs + (uint32_t)clients * CLIENT_RECORD_SIZE;
	if ((uint32_t)ra_ofs + ca_end > sps || (uint32_t)ra_ofs + ra_len > sps ||
	    ca_end > ra_len)
		return reject(info, "restart area (%u bytes, %u clients) overruns the page",
			      ra_len, clients);
	if ((free_l != NTFS_LOG_NO_CLIENT && free_l >= clients) ||
	    (used_l != NTFS_LOG_NO_CLIENT && used_l >= clients))
		return reject(info, "client list head out of range (%u clients)", clients);
	if (ntfs_get64(ra + RA_FILE_SIZE) & 7 || (int64_t)ntfs_get64(ra + RA_FILE_SIZE) <= 0)
		return reject(info, "log file size %llu is invalid",
			      (unsigned long long)ntfs_get64(ra + RA_FILE_SIZE));
	/* the sequence number takes the bits the file offset leaves of 67 */
	for (fsz = ntfs_get64(ra + RA_FILE_SIZE), fs_bits = 0; fsz; fsz >>= 1)
		fs_bits++;
	if (ntfs_get32(ra + RA_SEQ_BITS) != 67 - fs_bits)
		return reject(info, "sequence number bits %u do not match the log file size",
			      ntfs_get32(ra + RA_SEQ_BITS));
	if (ntfs_get16(ra + RA_REC_HDR_LEN) & 7 || ntfs_get16(ra + RA_PAGE_DATA_OFS) & 7 ||
	    ntfs_get16(ra + RA_PAGE_DATA_OFS) >= lps)
		return reject(info, "log record header length or page data offset is misaligned");
	/* both client lists: indexes in range, no loop (at most CLIENTS
	 * steps in all), the records inside the restart area */
	for (int list = 0; list < 2; list++) {
		uint32_t idx = list ? used_l : free_l, steps = 0;

		while (idx != NTFS_LOG_NO_CLIENT) {
			if (idx >= clients || ++steps > clients || ++walked > clients)
				return reject(info, "log client %s list is corrupt",
					      list ? "in-use" : "free");
			idx = ntfs_get16(ra + ca_ofs + idx * CLIENT_RECORD_SIZE + CR_NEXT);
		}
	}

	info->magic = magic;
	info->system_page_size = sps;
	info->log_page_size = lps;
	info->major = major;
	info->minor = minor;
	info->current_lsn = ntfs_get64(ra + RA_CURRENT_LSN);
	info->log_clients = clients;
	info->client_in_use = used_l;
	info->flags = ntfs_get16(ra + RA_FLAGS);
	info->file_size = ntfs_get64(ra + RA_FILE_SIZE);
	info->state = used_l != NTFS_LOG_NO_CLIENT &&
		!(info->flags & NTFS_RESTART_VOLUME_IS_CLEAN) ?
		NTFS_LOG_DIRTY : NTFS_LOG_CLEAN;
	return 0;
}

enum ntfs_log_state ntfs_logfile_parse(uint8_t *buf, size_t len,
				       struct ntfs_log_info *info)
{
	struct ntfs_log_info first, second;
	uint32_t n = len > 2 * MAX_PAGE ? 2 * MAX_PAGE : (uint32_t)len;
	uint32_t off2 = 0;
	int ok1, ok2 = -1;
	size_t i;

	memset(info, 0, sizeof(*info));
	memset(&first, 0, sizeof(first));
	memset(&second, 0, sizeof(second));
	info->page = -1;
	for (i = 0; i < n && buf[i] == 0xff; i++)
		;
	if (i == n && n) {
		info->state = NTFS_LOG_EMPTY;
		return info->state;
	}
	ok1 = ntfs_restart_page_check(buf, n < MAX_PAGE ? n : MAX_PAGE, &first);
	if (!ok1) {
		off2 = first.system_page_size;
		if (off2 < n)
			ok2 = ntfs_restart_page_check(buf + off2, n - off2, &second);
	} else {
		/* the first page is unusable: the second is at a power of two */
		for (off2 = BLOCK; off2 <= MAX_PAGE && off2 + 4 <= n && ok2; off2 <<= 1)
			if (ntfs_get32(buf + off2) == NTFS_MAGIC_RSTR ||
			    ntfs_get32(buf + off2) == NTFS_MAGIC_CHKD)
				ok2 = ntfs_restart_page_check(buf + off2, n - off2, &second);
	}
	if (!ok1 && (ok2 || first.current_lsn >= second.current_lsn)) {
		*info = first;
		info->page = 0;
	} else if (!ok2) {
		*info = second;
		info->page = 1;
		/* a page the driver would not use is worth saying too */
		memcpy(info->why, first.why, sizeof(info->why));
	} else {
		*info = first;
		info->page = -1;
		info->state = NTFS_LOG_CORRUPT;
		if (!info->why[0])
			snprintf(info->why, sizeof(info->why), "no restart page");
	}
	return info->state;
}
