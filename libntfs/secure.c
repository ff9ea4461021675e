// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * $Secure: the default security descriptors of a fresh volume, stored once
 * in $SDS (each 256 KiB block followed by its mirror); mkfs.ntfs indexes
 * them by id in $SII and by hash in $SDH with the index builder (keys
 * from ntfs_sds_index_entries, which fsck.ntfs's rebuild uses too), and
 * fsck.ntfs writes them when no descriptor is left.
 *
 *   0x100  system files: SYSTEM and Administrators may read
 *   0x101  $Secure, $Extend and its files: SYSTEM and Administrators modify
 *   0x102  the root directory: Everyone, SYSTEM and Administrators have full
 *          control, inherited by new files and directories
 */
#include "config.h"

#include <endian.h>
#include <string.h>

#include "internal.h"
#include "ntfs/sds.h"
#include "le.h"

uint32_t ntfs_sd_hash(const uint8_t *sd, size_t len)
{
	uint32_t h = 0;

	for (size_t i = 0; i + 4 <= len; i += 4) {
		uint32_t w = (uint32_t)sd[i] | (uint32_t)sd[i + 1] << 8 |
			     (uint32_t)sd[i + 2] << 16 | (uint32_t)sd[i + 3] << 24;

		h = ((h >> 29) | (h << 3)) + w;
	}
	return h;
}

/* SIDs: revision, count, 6-byte authority (big-endian), sub-authorities */
static const uint8_t sid_everyone[12] = { 1, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0 };
static const uint8_t sid_system[12] = { 1, 1, 0, 0, 0, 0, 0, 5, 18, 0, 0, 0 };
static const uint8_t sid_admins[16] = { 1, 2, 0, 0, 0, 0, 0, 5, 32, 0, 0, 0,
					0x20, 0x02, 0, 0 };

struct ace_spec {
	const uint8_t *sid;
	uint8_t sid_len;
	uint8_t flags;		/* 0x01 object inherit, 0x02 container inherit */
	uint32_t mask;
};

/* A self-relative descriptor: header, DACL, owner and group (both
 * Administrators).  Returns its length. */
static size_t build_sd(uint8_t *out, const struct ace_spec *aces, int n)
{
	size_t dacl = 20, pos = dacl + 8;

	memset(out, 0, 512);
	out[0] = 1;				/* revision */
	ntfs_put16(out + 2, 0x8004);			/* self-relative, DACL present */
	for (int i = 0; i < n; i++) {
		size_t sz = 8 + aces[i].sid_len;

		out[pos] = 0;			/* ACCESS_ALLOWED */
		out[pos + 1] = aces[i].flags;
		ntfs_put16(out + pos + 2, (uint16_t)sz);
		ntfs_put32(out + pos + 4, aces[i].mask);
		memcpy(out + pos + 8, aces[i].sid, aces[i].sid_len);
		pos += sz;
	}
	out[dacl] = 2;				/* ACL revision */
	ntfs_put16(out + dacl + 2, (uint16_t)(pos - dacl));
	ntfs_put16(out + dacl + 4, (uint16_t)n);
	ntfs_put32(out + 4, (uint32_t)pos);		/* owner */
	memcpy(out + pos, sid_admins, sizeof(sid_admins));
	pos += sizeof(sid_admins);
	ntfs_put32(out + 8, (uint32_t)pos);		/* group */
	memcpy(out + pos, sid_admins, sizeof(sid_admins));
	pos += sizeof(sid_admins);
	ntfs_put32(out + 16, (uint32_t)dacl);
	return pos;
}

const uint8_t *ntfs_sid_admins(size_t *len)
{
	*len = sizeof(sid_admins);
	return sid_admins;
}

void ntfs_secure_build(struct ntfs_secure *s)
{
	const struct ace_spec read_only[] = {
		{ sid_system, 12, 0, 0x120089 }, { sid_admins, 16, 0, 0x120089 },
	};
	const struct ace_spec modify[] = {
		{ sid_system, 12, 0, 0x12019f }, { sid_admins, 16, 0, 0x12019f },
	};
	const struct ace_spec root[] = {
		{ sid_everyone, 12, 3, 0x1f01ff }, { sid_system, 12, 3, 0x1f01ff },
		{ sid_admins, 16, 3, 0x1f01ff },
	};
	struct { const struct ace_spec *a; int n; } sds[NTFS_NR_SD] = {
		{ read_only, 2 }, { modify, 2 }, { root, 3 },
	};
	struct ntfs_sds_header *hdr = s->hdr;
	size_t pos = 0;

	memset(s, 0, sizeof(*s));
	for (int i = 0; i < NTFS_NR_SD; i++) {
		uint8_t *e = s->sds + pos;
		size_t len = build_sd(e + sizeof(hdr[i]), sds[i].a, sds[i].n);

		hdr[i].hash = htole32(ntfs_sd_hash(e + sizeof(hdr[i]), len));
		hdr[i].security_id = htole32(NTFS_SECURITY_ID_FIRST + (uint32_t)i);
		hdr[i].offset = htole64(pos);
		hdr[i].length = htole32((uint32_t)(sizeof(hdr[i]) + len));
		memcpy(e, &hdr[i], sizeof(hdr[i]));
		s->sds_len = pos + sizeof(hdr[i]) + len;
		pos = ntfs_align(s->sds_len, 16);
	}
}

void ntfs_sds_index_entries(const struct ntfs_sds_header *h, size_t n,
			    uint8_t (*keys)[8], struct ntfs_ib_entry *sii,
			    struct ntfs_ib_entry *sdh)
{
	for (size_t i = 0; i < n; i++) {
		memcpy(keys[i], &h[i].hash, 4);
		memcpy(keys[i] + 4, &h[i].security_id, 4);
		sii[i] = (struct ntfs_ib_entry){ .key = keys[i] + 4, .key_len = 4,
						 .data = (const uint8_t *)&h[i],
						 .data_len = sizeof(h[i]) };
		sdh[i] = (struct ntfs_ib_entry){ .key = keys[i], .key_len = 8,
						 .data = (const uint8_t *)&h[i],
						 .data_len = sizeof(h[i]) };
	}
}
