// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libntfs: one checked record's attributes found by type and name, and
 * the security id its $STANDARD_INFORMATION holds -- lookups within a
 * single record, with no volume I/O (the fuzz target links this alone).
 */
#include "config.h"

#include <endian.h>
#include <stddef.h>
#include <string.h>

#include "ntfs/file_attrs.h"

bool ntfs_attr_has_name(const struct ntfs_attr_header *a, const char *name)
{
	const uint8_t *n = (const uint8_t *)a + le16toh(a->name_offset);
	size_t len = strlen(name);

	if (a->name_length != len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (n[2 * i] != (uint8_t)name[i] || n[2 * i + 1])
			return false;
	return true;
}

const struct ntfs_attr_header *ntfs_attr_named(const uint8_t *rec,
					       uint32_t type, const char *name)
{
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];

	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1)
		if (le32toh(a->type) == type && ntfs_attr_has_name(a, name))
			return a;
	return NULL;
}

uint32_t ntfs_security_id_of(const uint8_t *rec, uint32_t *at)
{
	const struct ntfs_attr_header *a = ntfs_attr_named(rec, NTFS_AT_STANDARD_INFORMATION, "");
	const uint8_t *v;
	uint32_t len, id;

	if (!a || a->non_resident)
		return 0;
	v = ntfs_attr_value(a, &len);
	if (len < offsetof(struct ntfs_standard_information, security_id) + 4)
		return 0;	/* NTFS 1.x form: no id */
	*at = (uint32_t)(v - rec) + offsetof(struct ntfs_standard_information, security_id);
	memcpy(&id, rec + *at, 4);
	return le32toh(id);
}
