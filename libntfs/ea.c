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

/* The entry at O, its next-entry offset not judged: its bytes (header,
 * name and value) or 0 with WHY. */
static uint32_t entry_at(const uint8_t *v, uint32_t len, uint32_t o,
			 struct ntfs_ea_view *e, char *why)
{
	uint32_t min;

	if (len - o < 8) {
		snprintf(why, 128, "%u stray bytes at offset %u after the last entry",
			 len - o, o);
		return 0;
	}
	e->off = o;
	e->flags = v[o + 4];
	e->name_len = v[o + 5];
	e->value_len = ntfs_get16(v + o + 6);
	min = 8 + e->name_len + 1u + e->value_len;
	if (min > len - o) {
		snprintf(why, 128, "entry at offset %u (name %u, value %u bytes) runs past the %u bytes",
			 o, e->name_len, e->value_len, len);
		return 0;
	}
	if (!e->name_len || v[o + 8 + e->name_len] ||
	    memchr(v + o + 8, 0, e->name_len)) {
		snprintf(why, 128, "entry at offset %u has no NUL-terminated name of %u bytes",
			 o, e->name_len);
		return 0;
	}
	if (e->flags & ~NTFS_EA_NEED_EA) {
		snprintf(why, 128, "entry at offset %u has unknown flags 0x%x", o, e->flags);
		return 0;
	}
	e->name = v + o + 8;
	e->value = v + o + 9 + e->name_len;
	return min;
}

int ntfs_ea_next(const uint8_t *v, uint32_t len, uint32_t *off,
		 struct ntfs_ea_view *e, char *why)
{
	uint32_t o = *off, next, min;

	if (o >= len)
		return 0;
	if (!(min = entry_at(v, len, o, e, why)))
		return -1;
	next = ntfs_get32(v + o);
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
	*off = o + e->size;
	return 1;
}

/* Is the name of entry E (at E->off) the name of an entry before it? */
static bool named_before(const uint8_t *v, uint32_t len,
			 const struct ntfs_ea_view *e)
{
	struct ntfs_ea_view f;
	uint32_t o = 0;
	char why[128];

	while (o < e->off && ntfs_ea_next(v, len, &o, &f, why) == 1)
		if (f.name_len == e->name_len && !memcmp(f.name, e->name, e->name_len))
			return true;
	return false;
}

uint32_t ntfs_ea_mend(uint8_t *v, uint32_t len, uint32_t *newlen)
{
	struct ntfs_ea_view e, f;
	uint32_t o = 0, kept = 0;
	char why[128];

	*newlen = 0;
	while (o < len) {
		uint32_t min = entry_at(v, len, o, &e, why), need, next;

		if (!min && (next = ntfs_get32(v + o)) >= 8 && !(next % 4) &&
		    next < len - o && entry_at(v, len, o + next, &f, why) &&
		    !named_before(v, len - next, &f)) {
			/* an entry that cannot be read whose link still
			 * leads to one that can: only it is dropped (its
			 * bytes taken out), the entries after it are kept */
			memmove(v + o, v + o + next, len - o - next);
			memset(v + len - next, 0, next);
			len -= next;
			continue;
		}
		if (!min || named_before(v, len, &e))
			break;	/* the chain is cut before this entry */
		kept++;
		need = (min + 3) & ~3u;
		next = ntfs_get32(v + o);
		if (next && next >= min && !(next % 4) && next <= len - o) {
			o += next;	/* a link that holds */
			*newlen = o;
			continue;
		}
		/* a link that does not hold: to where the entry ends, if an
		 * entry is there; else this one is the last */
		if (need < len - o && entry_at(v, len, o + need, &f, why)) {
			ntfs_put32(v + o, need);
			o += need;
			*newlen = o;
			continue;
		}
		ntfs_put32(v + o, 0);
		*newlen = o + (need < len - o ? need : len - o);
		break;
	}
	return kept;
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
