// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Extended attributes: the $EA value is a chain of entries (next-entry
 * offset, flags, name length, value length, the name and its NUL, the
 * value, padded to 4 bytes); $EA_INFORMATION repeats what the chain adds
 * up to (packed size, entries that need EA support, unpacked size).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "ntfs/special.h"
#include "le.h"

int ntfs_ea_next(const uint8_t *v, uint32_t len, uint32_t *off,
		 struct ntfs_ea_view *e, char *why)
{
	uint32_t o = *off, next, min;

	if (o >= len)
		return 0;
	if (len - o < 8) {
		snprintf(why, 128, "%u stray bytes at offset %u after the last entry",
			 len - o, o);
		return -1;
	}
	next = ntfs_get32(v + o);
	e->off = o;
	e->flags = v[o + 4];
	e->name_len = v[o + 5];
	e->value_len = ntfs_get16(v + o + 6);
	min = 8 + e->name_len + 1u + e->value_len;
	if (min > len - o) {
		snprintf(why, 128, "entry at offset %u (name %u, value %u bytes) runs past the %u bytes",
			 o, e->name_len, e->value_len, len);
		return -1;
	}
	if (!e->name_len || v[o + 8 + e->name_len] ||
	    memchr(v + o + 8, 0, e->name_len)) {
		snprintf(why, 128, "entry at offset %u has no NUL-terminated name of %u bytes",
			 o, e->name_len);
		return -1;
	}
	if (e->flags & ~NTFS_EA_NEED_EA) {
		snprintf(why, 128, "entry at offset %u has unknown flags 0x%x", o, e->flags);
		return -1;
	}
	if (next) {
		if (next < min || next % 4 || next > len - o) {
			snprintf(why, 128, "entry at offset %u: next-entry offset %u (entry of %u bytes, %u left)",
				 o, next, min, len - o);
			return -1;
		}
		e->size = next;
	} else {
		/* the last entry: its padding may be left out */
		e->size = (min + 3) & ~3u;
		if (e->size > len - o)
			e->size = len - o;
		if (e->size != len - o) {
			snprintf(why, 128, "entry at offset %u says it is the last, %u bytes follow it",
				 o, len - o - e->size);
			return -1;
		}
	}
	e->name = v + o + 8;
	e->value = v + o + 9 + e->name_len;
	*off = o + e->size;
	return 1;
}

int ntfs_ea_sum(const uint8_t *v, uint32_t len, struct ntfs_ea_sum *s,
		char *why)
{
	struct ntfs_ea_view e, f;
	uint32_t off = 0;
	int r;

	memset(s, 0, sizeof(*s));
	while ((r = ntfs_ea_next(v, len, &off, &e, why)) == 1) {
		uint32_t o2 = 0;

		/* names are unique (compared as stored; Windows keeps them
		 * upper case) */
		while (o2 < e.off) {
			char w2[128];

			if (ntfs_ea_next(v, len, &o2, &f, w2) != 1)
				break;
			if (f.name_len == e.name_len &&
			    !memcmp(f.name, e.name, e.name_len)) {
				s->duplicate = true;
				snprintf(why, 128, "two entries are called \"%.*s\"",
					 e.name_len, (const char *)e.name);
				return -1;
			}
		}
		s->count++;
		s->valid_len = off;
		s->packed += 5u + e.name_len + e.value_len;
		if (e.flags & NTFS_EA_NEED_EA)
			s->need_ea++;
	}
	s->whole = r == 0;
	if (s->whole && !s->count) {
		snprintf(why, 128, "no entries");
		return -1;
	}
	return r;
}

int ntfs_ea_info_parse(const uint8_t *v, uint32_t len, struct ntfs_ea_info *i,
		       char *why)
{
	if (len != NTFS_EA_INFO_LEN) {
		snprintf(why, 128, "$EA_INFORMATION of %u bytes, not %u", len,
			 NTFS_EA_INFO_LEN);
		return -1;
	}
	i->packed_size = ntfs_get16(v);
	i->need_ea = ntfs_get16(v + 2);
	i->unpacked_size = ntfs_get32(v + 4);
	return 0;
}

void ntfs_ea_info_make(const struct ntfs_ea_sum *s, uint8_t *out)
{
	uint32_t p = s->packed > 0xffff ? 0xffff : s->packed;

	out[0] = (uint8_t)p;
	out[1] = (uint8_t)(p >> 8);
	out[2] = (uint8_t)s->need_ea;
	out[3] = (uint8_t)(s->need_ea >> 8);
	out[4] = (uint8_t)s->valid_len;
	out[5] = (uint8_t)(s->valid_len >> 8);
	out[6] = (uint8_t)(s->valid_len >> 16);
	out[7] = (uint8_t)(s->valid_len >> 24);
}
