// SPDX-License-Identifier: GPL-2.0-or-later
/* $AttrDef: the attribute types an NTFS 3.1 volume knows. */
#include "config.h"

#include <endian.h>
#include <string.h>

#include "internal.h"
#include "ntfs/read.h"

static const struct {
	const char *name;
	uint32_t type, flags;
	int64_t min, max;
} defs[] = {
	{ "$STANDARD_INFORMATION", NTFS_AT_STANDARD_INFORMATION, NTFS_ATTRDEF_RESIDENT, 0x30, 0x48 },
	{ "$ATTRIBUTE_LIST", NTFS_AT_ATTRIBUTE_LIST, NTFS_ATTRDEF_LOG_NONRESIDENT, 0, -1 },
	{ "$FILE_NAME", NTFS_AT_FILE_NAME, NTFS_ATTRDEF_RESIDENT | NTFS_ATTRDEF_INDEXABLE, 0x44, 0x242 },
	{ "$OBJECT_ID", NTFS_AT_OBJECT_ID, NTFS_ATTRDEF_RESIDENT, 0, 0x100 },
	{ "$SECURITY_DESCRIPTOR", NTFS_AT_SECURITY_DESCRIPTOR, NTFS_ATTRDEF_LOG_NONRESIDENT, 0, -1 },
	{ "$VOLUME_NAME", NTFS_AT_VOLUME_NAME, NTFS_ATTRDEF_RESIDENT, 2, 0x100 },
	{ "$VOLUME_INFORMATION", NTFS_AT_VOLUME_INFORMATION, NTFS_ATTRDEF_RESIDENT, 0xc, 0xc },
	{ "$DATA", NTFS_AT_DATA, 0, 0, -1 },
	{ "$INDEX_ROOT", NTFS_AT_INDEX_ROOT, NTFS_ATTRDEF_RESIDENT, 0, -1 },
	{ "$INDEX_ALLOCATION", NTFS_AT_INDEX_ALLOCATION, NTFS_ATTRDEF_LOG_NONRESIDENT, 0, -1 },
	{ "$BITMAP", NTFS_AT_BITMAP, NTFS_ATTRDEF_LOG_NONRESIDENT, 0, -1 },
	{ "$REPARSE_POINT", NTFS_AT_REPARSE_POINT, NTFS_ATTRDEF_LOG_NONRESIDENT, 0, 0x4000 },
	{ "$EA_INFORMATION", NTFS_AT_EA_INFORMATION, NTFS_ATTRDEF_RESIDENT, 8, 8 },
	{ "$EA", NTFS_AT_EA, 0, 0, 0x10000 },
	{ "$LOGGED_UTILITY_STREAM", NTFS_AT_LOGGED_UTILITY_STREAM, NTFS_ATTRDEF_LOG_NONRESIDENT, 0, 0x10000 },
};

void ntfs_attrdef_build(uint8_t *out)
{
	memset(out, 0, NTFS_ATTRDEF_SIZE);
	for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]); i++) {
		struct ntfs_attrdef d;

		memset(&d, 0, sizeof(d));
		for (size_t k = 0; defs[i].name[k]; k++)
			d.name[k] = htole16((uint16_t)defs[i].name[k]);
		d.type = htole32(defs[i].type);
		d.flags = htole32(defs[i].flags);
		d.min_size = (int64_t)htole64((uint64_t)defs[i].min);
		d.max_size = (int64_t)htole64((uint64_t)defs[i].max);
		memcpy(out + i * sizeof(d), &d, sizeof(d));
	}
}

bool ntfs_attrdef_standard(uint32_t type)
{
	for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]); i++)
		if (defs[i].type == type)
			return true;
	return false;
}

size_t ntfs_attrdef_types(const uint8_t *tab, uint64_t len, uint32_t *types,
			  bool *damaged)
{
	size_t n = 0, nstd = sizeof(defs) / sizeof(defs[0]);
	uint32_t last = 0;

	for (size_t i = 0; i < nstd; i++)
		types[n++] = defs[i].type;
	*damaged = !tab || len % sizeof(struct ntfs_attrdef) ||
		   len > NTFS_ATTRDEF_MAX_TYPES * sizeof(struct ntfs_attrdef);
	/* the table's entries: types increasing, each named, up to the
	 * first entry of type 0 */
	for (uint64_t o = 0; !*damaged && o < len; o += sizeof(struct ntfs_attrdef)) {
		struct ntfs_attrdef d;
		uint32_t t;

		memcpy(&d, tab + o, sizeof(d));
		t = le32toh(d.type);
		if (!t)
			break;
		if (!ntfs_attr_type_valid(t) || t <= last || !d.name[0])
			*damaged = true;
		last = t;
	}
	if (*damaged)
		return n;
	for (uint64_t o = 0; o < len && n < NTFS_ATTRDEF_MAX_TYPES; o += sizeof(struct ntfs_attrdef)) {
		struct ntfs_attrdef d;
		uint32_t t;

		memcpy(&d, tab + o, sizeof(d));
		t = le32toh(d.type);
		if (!t)
			break;
		if (!ntfs_attrdef_standard(t))
			types[n++] = t;
	}
	return n;
}

bool ntfs_attrdef_usable(const uint8_t *tab, uint64_t len)
{
	/* the types every NTFS version's table defines */
	static const uint32_t core[] = {
		NTFS_AT_STANDARD_INFORMATION, NTFS_AT_FILE_NAME, NTFS_AT_DATA,
		NTFS_AT_INDEX_ROOT, NTFS_AT_INDEX_ALLOCATION, NTFS_AT_BITMAP,
	};
	uint32_t types[NTFS_ATTRDEF_MAX_TYPES], seen = 0;
	bool damaged;

	ntfs_attrdef_types(tab, len, types, &damaged);
	if (damaged)
		return false;
	for (uint64_t o = 0; o < len; o += sizeof(struct ntfs_attrdef)) {
		struct ntfs_attrdef d;
		uint32_t t;

		memcpy(&d, tab + o, sizeof(d));
		t = le32toh(d.type);
		if (!t)
			break;
		for (size_t i = 0; i < sizeof(core) / sizeof(core[0]); i++)
			if (t == core[i])
				seen |= 1u << i;
	}
	return seen == (1u << (sizeof(core) / sizeof(core[0]))) - 1;
}

bool ntfs_attrdef_has(const uint32_t *types, size_t n, uint32_t type)
{
	for (size_t i = 0; i < n; i++)
		if (types[i] == type)
			return true;
	return false;
}
