// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libntfs: a record's $FILE_NAME attributes edited (include/ntfs/
 * name_edit.h).  A renamed or replaced name: the record is composed again
 * attribute by attribute, a renamed one with its old header (type, flags,
 * instance) and new lengths, a replacing one as a new attribute in its
 * place by type.  Removed names: each attribute taken out in place.
 */
#include "config.h"

#include <endian.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "ntfs/file_attrs.h"
#include "ntfs/format.h"
#include "ntfs/name_edit.h"
#include "ntfs/read.h"
#include "ntfs/repair.h"

int ntfs_rec_replace_file_name(const uint8_t *rec, uint32_t size, uint8_t *out,
			       const uint8_t *old, uint32_t old_len,
			       const uint8_t *fn, uint32_t fn_len,
			       bool *was_dos, char *why)
{
	uint8_t attr[0x18 + 0x42 + 2 * 255 + 8];
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	struct ntfs_rec r;
	bool done = false;
	int more;

	*was_dos = false;
	if (0x18 + (uint64_t)fn_len + 8 > sizeof(attr)) {
		snprintf(why, NTFS_WHY, "the new name is too long");
		return -1;
	}
	memcpy(out, rec, size);
	ntfs_rec_reopen(&r, out, size);
	ntfs_attr_cursor_init(&cur, rec);
	while ((more = ntfs_attr_next(&cur, &a, why)) == 1) {
		uint32_t len, alen = le32toh(a->length);
		const uint8_t *v;

		if (!done && le32toh(a->type) == NTFS_AT_FILE_NAME &&
		    !a->non_resident && (v = ntfs_attr_value(a, &len)) &&
		    len == old_len && !memcmp(v, old, len)) {
			uint32_t voff = 0x18, total = (uint32_t)ntfs_align(voff + fn_len, 8);
			uint32_t vl = htole32(fn_len), tl = htole32(total);
			uint16_t vo = htole16((uint16_t)voff);

			memset(attr, 0, sizeof(attr));
			memcpy(attr, a, 0x18);
			/* the value is at 0x18: a name (a $FILE_NAME has
			 * none) would overlap it, so none is kept */
			attr[9] = 0;
			memset(attr + 0x0a, 0, 2);
			memcpy(attr + 4, &tl, 4);
			memcpy(attr + 0x10, &vl, 4);
			memcpy(attr + 0x14, &vo, 2);
			memcpy(attr + voff, fn, fn_len);
			*was_dos = v[offsetof(struct ntfs_file_name, name_type)] == NTFS_NS_DOS;
			a = (const struct ntfs_attr_header *)attr;
			alen = total;
			done = true;
		}
		if (!ntfs_rec_add_raw(&r, a, alen)) {
			snprintf(why, NTFS_WHY, "the record is full");
			return -1;
		}
	}
	if (more < 0)
		return -1;
	return done ? 0 : 1;
}

int ntfs_rec_set_only_name(const uint8_t *rec, uint32_t size, uint8_t *out,
			   const uint8_t *fn, uint32_t fn_len, char *why)
{
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	struct ntfs_mft_record m;
	bool added = false;
	struct ntfs_rec r;
	int more;

	memcpy(out, rec, size);
	ntfs_rec_reopen(&r, out, size);
	ntfs_attr_cursor_init(&cur, rec);
	do {
		more = ntfs_attr_next(&cur, &a, why);
		if (more < 0)
			return -1;
		if (!added && (!more || le32toh(a->type) > NTFS_AT_FILE_NAME)) {
			if (!ntfs_rec_add_resident(&r, NTFS_AT_FILE_NAME, NULL, fn,
						   fn_len, 1)) {
				snprintf(why, NTFS_WHY, "the record is full");
				return -1;
			}
			added = true;
		}
		if (more && le32toh(a->type) != NTFS_AT_FILE_NAME &&
		    !ntfs_rec_add_raw(&r, a, le32toh(a->length))) {
			snprintf(why, NTFS_WHY, "the record is full");
			return -1;
		}
	} while (more);
	memcpy(&m, out, sizeof(m));
	m.link_count = htole16(1);
	memcpy(out, &m, sizeof(m));
	return 0;
}

size_t ntfs_rec_drop_names(uint8_t *rec, uint32_t size,
			   void (*dropped)(void *arg, const struct ntfs_file_name *fn),
			   void *arg)
{
	size_t n = 0;

	for (;;) {
		struct ntfs_attr_cursor cur;
		const struct ntfs_attr_header *a, *f = NULL;
		struct ntfs_file_name fn;
		char why[NTFS_WHY];

		ntfs_attr_cursor_init(&cur, rec);
		while (!f && ntfs_attr_next(&cur, &a, why) == 1)
			if (le32toh(a->type) == NTFS_AT_FILE_NAME)
				f = a;
		if (!f)
			return n;
		if (ntfs_file_name_of(f, &fn) && dropped)
			dropped(arg, &fn);
		ntfs_rec_remove_attr(rec, size, (uint32_t)((const uint8_t *)f - rec));
		n++;
	}
}

bool ntfs_name_units_allowed(const uint8_t *u, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		uint16_t x = (uint16_t)(u[2 * i] | u[2 * i + 1] << 8);

		if (!x || x == '/')
			return false;
	}
	return true;
}

/* the ASCII units no 8.3 name holds, a bit each: controls, space, DEL,
 * lower case and " * + , / : ; < = > ? [ \ ] | ('.' is judged apart) */
static bool dos_refused(uint16_t x)
{
	static const uint32_t map[4] = {
		0xffffffffu,			/* 0x00-0x1f */
		0xfc009c05u,			/* ' ' '"' '*' '+' ',' '/' ':'-'?' */
		0x38000000u,			/* '[' backslash ']' */
		0x97fffffeu,			/* 'a'-'z' '|' DEL */
	};

	return x < 0x80 && (map[x >> 5] >> (x & 31) & 1);
}

bool ntfs_name_is_8dot3(const uint8_t *u, unsigned int n)
{
	unsigned int base = 0, ext = 0;
	bool dot = false;

	for (unsigned int i = 0; i < n; i++) {
		uint16_t x = (uint16_t)(u[2 * i] | u[2 * i + 1] << 8);

		if (x == '.') {
			if (dot || !base)
				return false;
			dot = true;
			continue;
		}
		if (dos_refused(x))
			return false;
		if (dot ? ++ext > 3 : ++base > 8)
			return false;
	}
	return base && (!dot || ext);
}

bool ntfs_name_may_be_dos(const uint8_t *u, unsigned int n)
{
	if (!n || n > 12)
		return false;
	for (unsigned int i = 0; i < n; i++) {
		uint16_t x = (uint16_t)(u[2 * i] | u[2 * i + 1] << 8);

		if (x < 0x20 || (x < 0x80 && strchr("\"*/:<>?\\|", x)))
			return false;
	}
	return true;
}

unsigned int ntfs_name_units_mend(uint8_t *u, unsigned int n)
{
	unsigned int k = 0;

	for (unsigned int i = 0; i < n; i++) {
		uint16_t x = (uint16_t)(u[2 * i] | u[2 * i + 1] << 8);

		if (!x || x == '/') {
			u[2 * i] = '_';
			u[2 * i + 1] = 0;
			k++;
		}
	}
	return k;
}
