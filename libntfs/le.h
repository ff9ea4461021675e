/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Little-endian fields at any alignment, for libntfs's parsers and
 * builders (on-disk NTFS is little-endian; fields are often unaligned).
 */
#ifndef FSFORGE_LIBNTFS_LE_H
#define FSFORGE_LIBNTFS_LE_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

static inline uint16_t ntfs_get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return le16toh(v);
}

static inline uint32_t ntfs_get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return le32toh(v);
}

static inline uint64_t ntfs_get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return le64toh(v);
}

static inline void ntfs_put16(uint8_t *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, 2);
}

static inline void ntfs_put32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, 4);
}

static inline void ntfs_put64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, 8);
}

#endif
