// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * MFT records: the FILE header with its update sequence array, and
 * attributes appended in the order NTFS requires (by type, then name).
 * Attribute names here are ASCII system names ($I30, $SDS, ...).
 */
#include "config.h"

#include <endian.h>
#include <string.h>

#include "ntfs/format.h"

static uint16_t usa_count(uint32_t size)
{
	return (uint16_t)(size / NTFS_USA_STRIDE + 1);
}

static void header(uint8_t *buf, uint32_t size, uint32_t recno, uint16_t seq)
{
	struct ntfs_mft_record *m = (struct ntfs_mft_record *)buf;
	uint32_t attrs = (uint32_t)ntfs_align(sizeof(*m) + 2u * usa_count(size), 8);
	uint32_t end = htole32(NTFS_AT_END);

	memset(buf, 0, size);
	m->h.magic = htole32(NTFS_MAGIC_FILE);
	m->h.usa_ofs = htole16(sizeof(*m));
	m->h.usa_count = htole16(usa_count(size));
	m->sequence_number = htole16(seq);
	m->attrs_offset = htole16((uint16_t)attrs);
	m->bytes_in_use = htole32(attrs + 8);
	m->bytes_allocated = htole32(size);
	m->mft_record_number = htole32(recno);
	memcpy(buf + attrs, &end, 4);
}

void ntfs_rec_init_free(uint8_t *buf, uint32_t size, uint32_t recno,
			uint16_t seq)
{
	header(buf, size, recno, seq);
}

void ntfs_rec_init_extension(struct ntfs_rec *r, uint8_t *buf, uint32_t size,
			     uint32_t recno, uint16_t seq, uint64_t base_ref)
{
	struct ntfs_mft_record *m = (struct ntfs_mft_record *)buf;

	ntfs_rec_init(r, buf, size, recno, seq, NTFS_MFT_IN_USE, 0);
	m->base_mft_record = htole64(base_ref);
}

void ntfs_rec_init(struct ntfs_rec *r, uint8_t *buf, uint32_t size,
		   uint32_t recno, uint16_t seq, uint16_t flags,
		   uint16_t links)
{
	struct ntfs_mft_record *m = (struct ntfs_mft_record *)buf;

	header(buf, size, recno, seq);
	m->flags = htole16(flags);
	m->link_count = htole16(links);
	r->buf = buf;
	r->size = size;
	r->end = le16toh(m->attrs_offset);
}

/* Reserve LEN bytes for an attribute; fills the common header. */
static struct ntfs_attr_header *reserve(struct ntfs_rec *r, uint32_t type,
					uint32_t len, const char *name,
					uint16_t name_off, bool nonres)
{
	struct ntfs_mft_record *m = (struct ntfs_mft_record *)r->buf;
	struct ntfs_attr_header *a;
	size_t nlen = name ? strlen(name) : 0;
	uint32_t end = htole32(NTFS_AT_END);
	uint16_t inst;

	if (r->end + len + 8 > r->size)
		return NULL;
	a = (struct ntfs_attr_header *)(r->buf + r->end);
	memset(a, 0, len);
	inst = le16toh(m->next_attr_instance);
	a->type = htole32(type);
	a->length = htole32(len);
	a->non_resident = nonres;
	a->name_length = (uint8_t)nlen;
	a->name_offset = htole16(nlen ? name_off : (nonres ? 0x40 : 0x18));
	a->instance = htole16(inst);
	m->next_attr_instance = htole16((uint16_t)(inst + 1));
	for (size_t i = 0; i < nlen; i++) {
		uint16_t c = htole16((uint16_t)(unsigned char)name[i]);

		memcpy((uint8_t *)a + name_off + 2 * i, &c, 2);
	}
	r->end += len;
	memcpy(r->buf + r->end, &end, 4);
	m->bytes_in_use = htole32(r->end + 8);
	return a;
}

void *ntfs_rec_add_resident(struct ntfs_rec *r, uint32_t type,
			    const char *name, const void *value, uint32_t len,
			    uint8_t resident_flags)
{
	size_t nlen = name ? strlen(name) : 0;
	uint16_t voff = (uint16_t)ntfs_align(sizeof(struct ntfs_attr_resident) + 2 * nlen, 8);
	uint32_t total = (uint32_t)ntfs_align(voff + len, 8);
	struct ntfs_attr_resident *a;

	a = (struct ntfs_attr_resident *)reserve(r, type, total, name,
						 sizeof(*a), false);
	if (!a)
		return NULL;
	a->value_length = htole32(len);
	a->value_offset = htole16(voff);
	a->resident_flags = resident_flags;
	if (value && len)
		memcpy((uint8_t *)a + voff, value, len);
	return (uint8_t *)a + voff;
}

int ntfs_rec_add_nonresident(struct ntfs_rec *r, uint32_t type,
			     const char *name, const struct ntfs_run *runs,
			     size_t n, uint64_t alloc, uint64_t size,
			     uint64_t init)
{
	size_t nlen = name ? strlen(name) : 0;
	uint16_t mpo = (uint16_t)ntfs_align(sizeof(struct ntfs_attr_nonresident) + 2 * nlen, 8);
	uint8_t mp[256];
	int mplen = ntfs_mp_encode(runs, n, mp, sizeof(mp));
	struct ntfs_attr_nonresident *a;
	uint64_t clusters = 0;

	if (mplen < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		clusters += runs[i].len;
	a = (struct ntfs_attr_nonresident *)reserve(
		r, type, (uint32_t)ntfs_align(mpo + (size_t)mplen, 8), name,
		sizeof(*a), true);
	if (!a)
		return -1;
	a->lowest_vcn = 0;
	a->highest_vcn = htole64(clusters - 1);
	a->mapping_pairs_offset = htole16(mpo);
	a->allocated_size = htole64(alloc);
	a->data_size = htole64(size);
	a->initialized_size = htole64(init);
	memcpy((uint8_t *)a + mpo, mp, (size_t)mplen);
	return 0;
}

void *ntfs_rec_add_raw(struct ntfs_rec *r, const void *attr, uint32_t len)
{
	struct ntfs_mft_record *m = (struct ntfs_mft_record *)r->buf;
	uint32_t end = htole32(NTFS_AT_END);
	uint8_t *at;

	if (len & 7 || r->end + len + 8 > r->size)
		return NULL;
	at = r->buf + r->end;
	memcpy(at, attr, len);
	r->end += len;
	memcpy(r->buf + r->end, &end, 4);
	m->bytes_in_use = htole32(r->end + 8);
	return at;
}

void ntfs_rec_reopen(struct ntfs_rec *r, uint8_t *buf, uint32_t size)
{
	struct ntfs_mft_record *m = (struct ntfs_mft_record *)buf;
	uint32_t end = htole32(NTFS_AT_END);

	r->buf = buf;
	r->size = size;
	r->end = le16toh(m->attrs_offset);
	memcpy(buf + r->end, &end, 4);
	m->bytes_in_use = htole32(r->end + 8);
}
