// SPDX-License-Identifier: GPL-2.0-or-later
/* In-place repairs of one attribute or one FILE record (see ntfs/repair.h). */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/file_attrs.h"
#include "ntfs/read.h"
#include "ntfs/repair.h"
#include "le.h"

#define NR_LOWEST offsetof(struct ntfs_attr_nonresident, lowest_vcn)
#define NR_HIGHEST offsetof(struct ntfs_attr_nonresident, highest_vcn)
#define NR_MPO offsetof(struct ntfs_attr_nonresident, mapping_pairs_offset)
#define NR_ALLOC offsetof(struct ntfs_attr_nonresident, allocated_size)
#define NR_DATA offsetof(struct ntfs_attr_nonresident, data_size)
#define NR_INIT offsetof(struct ntfs_attr_nonresident, initialized_size)
#define NR_COMPRESSED sizeof(struct ntfs_attr_nonresident)	/* 8 bytes */
#define R_VLEN offsetof(struct ntfs_attr_resident, value_length)
#define R_VOFS offsetof(struct ntfs_attr_resident, value_offset)

uint16_t ntfs_attr_known_flags(const uint8_t *a)
{
	uint16_t f = ntfs_get16(a + offsetof(struct ntfs_attr_header, flags)) &
		     NTFS_ATTR_KNOWN_FLAGS;
	uint32_t type = ntfs_get32(a);
	uint32_t len = ntfs_get32(a + offsetof(struct ntfs_attr_header, length));
	bool nonres = a[offsetof(struct ntfs_attr_header, non_resident)];
	size_t cu = offsetof(struct ntfs_attr_nonresident, compression_unit);

	/* bits beside garbage are suspect too: keep only what this
	 * attribute can be (a non-resident $DATA may be compressed, with a
	 * compression unit, or sparse) */
	/* encrypted: beside garbage bits, believing it would hide a
	 * stream's bytes from every reader; its bytes stay as they are */
	f &= (uint16_t)~NTFS_ATTR_ENCRYPTED;
	if (type != NTFS_AT_DATA || !nonres)
		f &= (uint16_t)~(NTFS_ATTR_COMPRESSION_MASK | NTFS_ATTR_SPARSE);
	else if (len <= cu || !a[cu])
		f &= (uint16_t)~NTFS_ATTR_COMPRESSION_MASK;
	return f;
}

uint16_t ntfs_attr_clear_unknown_flags(uint8_t *a)
{
	uint16_t old = ntfs_get16(a + offsetof(struct ntfs_attr_header, flags));
	uint16_t f = htole16(ntfs_attr_known_flags(a));

	memcpy(a + offsetof(struct ntfs_attr_header, flags), &f, 2);
	return old;
}

void ntfs_attr_sizes(const uint8_t *a, struct ntfs_sizes *sz)
{
	sz->alloc = ntfs_get64(a + NR_ALLOC);
	sz->data = ntfs_get64(a + NR_DATA);
	sz->init = ntfs_get64(a + NR_INIT);
}

bool ntfs_attr_clamp_sizes(uint8_t *a, uint64_t alloc, struct ntfs_sizes *now)
{
	struct ntfs_sizes old;

	ntfs_attr_sizes(a, &old);
	*now = old;
	if (ntfs_get64(a + NR_LOWEST)) {
		if (now->data >> 63)
			now->data = 0;
		if (now->init >> 63)
			now->init = 0;
	} else {
		if (alloc != UINT64_MAX)
			now->alloc = alloc;
		if (now->data > now->alloc)
			now->data = now->alloc;
		if (now->init > now->data)
			now->init = now->data;
	}
	ntfs_put64(a + NR_ALLOC, now->alloc);
	ntfs_put64(a + NR_DATA, now->data);
	ntfs_put64(a + NR_INIT, now->init);
	return memcmp(&old, now, sizeof(old)) != 0;
}

uint32_t ntfs_attr_value_room(const uint8_t *a)
{
	uint32_t len = ntfs_get32(a + offsetof(struct ntfs_attr_header, length));
	uint16_t vofs = ntfs_get16(a + R_VOFS);
	uint8_t nlen = a[offsetof(struct ntfs_attr_header, name_length)];
	uint32_t name_end = nlen ? ntfs_get16(a + offsetof(struct ntfs_attr_header, name_offset)) +
				   2u * nlen : 0;

	if (vofs < sizeof(struct ntfs_attr_resident) || vofs < name_end || vofs > len)
		return UINT32_MAX;
	return len - vofs;
}

/* The length a self-relative security descriptor of ROOM bytes at V
 * says it has: the furthest end of its 20-byte header, owner and group
 * SIDs (8 + 4 per sub-authority) and present SACL and DACL (their size
 * field); 0 when it is not one or a part lies past ROOM. */
static uint32_t sd_length(const uint8_t *v, uint32_t room)
{
	uint16_t control;
	uint32_t end = 20;

	if (room < 20 || v[0] != 1)
		return 0;
	control = ntfs_get16(v + 2);
	if (!(control & 0x8000))	/* SE_SELF_RELATIVE */
		return 0;
	for (int i = 0; i < 4; i++) {
		uint32_t off = ntfs_get32(v + 4 + 4 * i), len;

		/* owner, group, SACL (present: 0x10), DACL (0x04) */
		if (!off || (i == 2 && !(control & 0x10)) || (i == 3 && !(control & 0x04)))
			continue;
		if (off < 20 || off > room - 8)
			return 0;
		len = i < 2 ? 8u + 4u * v[off + 1] : ntfs_get16(v + off + 2);
		if (len < 8 || len > room - off)
			return 0;
		if (off + len > end)
			end = off + len;
	}
	return end;
}

uint32_t ntfs_attr_value_length_of(const uint8_t *a, uint32_t room)
{
	uint32_t type = ntfs_get32(a);
	const uint8_t *v = a + ntfs_get16(a + R_VOFS);

	if (type == NTFS_AT_STANDARD_INFORMATION)
		return room >= 72 ? 72 : room >= 48 ? 48 : 0;
	if (type == NTFS_AT_FILE_NAME && room >= sizeof(struct ntfs_file_name)) {
		uint32_t want = sizeof(struct ntfs_file_name) +
				2u * v[offsetof(struct ntfs_file_name, name_length)];

		return want <= room ? want : 0;
	}
	/* an object id alone (16 bytes) or with its birth ids (64) */
	if (type == NTFS_AT_OBJECT_ID)
		return room >= 64 ? 64 : room >= 16 ? 16 : 0;
	if (type == NTFS_AT_EA_INFORMATION)
		return room >= 8 ? 8 : 0;
	/* a security descriptor: its parts' offsets and sizes; the
	 * attribute rounds it up to 8 bytes */
	if (type == NTFS_AT_SECURITY_DESCRIPTOR) {
		uint32_t want = sd_length(v, room);

		return want && room - want < 8 ? want : 0;
	}
	/* tag, data length, reserved, the GUID of a third-party tag (bit 31
	 * clear), the data; the attribute rounds it up to 8 bytes */
	if (type == NTFS_AT_REPARSE_POINT && room >= 8) {
		uint32_t want = 8 + (ntfs_get32(v) & 0x80000000u ? 0 : 16) + ntfs_get16(v + 4);

		return want <= room && room - want < 8 ? want : 0;
	}
	return 0;
}

void ntfs_attr_set_value_length(uint8_t *a, uint32_t len)
{
	uint32_t le = htole32(len);

	memcpy(a + R_VLEN, &le, 4);
}

uint32_t ntfs_attr_value_length_one_bit(const uint8_t *a, uint32_t room)
{
	uint32_t vlen = ntfs_get32(a + R_VLEN), want = 0;
	unsigned int found = 0;

	if (vlen <= room)
		return 0;
	for (uint32_t c = room > 7 ? room - 7 : 1; c <= room; c++) {
		uint32_t x = c ^ vlen;

		if (!(x & (x - 1))) {
			want = c;
			found++;
		}
	}
	return found == 1 ? want : 0;
}

static void runs_total(const struct ntfs_run *runs, size_t n, uint64_t *span,
		       uint64_t *real)
{
	*span = *real = 0;
	for (size_t i = 0; i < n; i++) {
		*span += runs[i].len;
		if (runs[i].lcn >= 0)
			*real += runs[i].len;
	}
}

void ntfs_attr_cut_runs(uint8_t *a, uint32_t stop, const struct ntfs_run *runs,
			size_t n, uint32_t cluster_size)
{
	uint32_t len = ntfs_get32(a + offsetof(struct ntfs_attr_header, length));
	uint16_t mpo = ntfs_get16(a + NR_MPO);
	uint64_t span, real;
	struct ntfs_sizes sz;

	memset(a + stop, 0, len - stop);
	runs_total(runs, n, &span, &real);
	ntfs_put64(a + NR_HIGHEST, ntfs_get64(a + NR_LOWEST) + span - 1);
	if (ntfs_get64(a + NR_LOWEST))
		return;
	if (ntfs_get16(a + offsetof(struct ntfs_attr_header, flags)) &
	    (NTFS_ATTR_COMPRESSION_MASK | NTFS_ATTR_SPARSE) &&
	    mpo >= NR_COMPRESSED + 8)
		ntfs_put64(a + NR_COMPRESSED, real * cluster_size);
	ntfs_attr_clamp_sizes(a, span * cluster_size, &sz);
}

int ntfs_attr_put_runs(uint8_t *a, const struct ntfs_run *runs, size_t n,
		       uint32_t cluster_size)
{
	uint32_t len = ntfs_get32(a + offsetof(struct ntfs_attr_header, length));
	uint16_t mpo = ntfs_get16(a + NR_MPO);
	uint8_t *mp;
	int mlen;

	if (mpo >= len || !(mp = malloc(len - mpo)))
		return -1;
	mlen = ntfs_mp_encode(runs, n, mp, len - mpo);
	if (mlen > 0) {
		memcpy(a + mpo, mp, (size_t)mlen);
		/* the end marker is the last byte written */
		ntfs_attr_cut_runs(a, mpo + (uint32_t)mlen - 1, runs, n, cluster_size);
	}
	free(mp);
	return mlen > 0 ? 0 : -1;
}

bool ntfs_attr_set_extent(uint8_t *a, const struct ntfs_run *runs, size_t n,
			  uint32_t cluster_size)
{
	uint64_t span, real, lo = ntfs_get64(a + NR_LOWEST), hi = ntfs_get64(a + NR_HIGHEST);
	struct ntfs_sizes sz;
	bool changed = lo != 0;

	runs_total(runs, n, &span, &real);
	changed |= hi != span - 1;
	ntfs_put64(a + NR_LOWEST, 0);
	ntfs_put64(a + NR_HIGHEST, span - 1);
	/* compressed attributes allocate by compression unit */
	if (ntfs_get16(a + offsetof(struct ntfs_attr_header, flags)) & NTFS_ATTR_COMPRESSION_MASK)
		changed |= ntfs_attr_clamp_sizes(a, UINT64_MAX, &sz);
	else
		changed |= ntfs_attr_clamp_sizes(a, span * cluster_size, &sz);
	return changed;
}

int ntfs_attr_set_run_length(uint8_t *a, long idx, uint64_t len)
{
	uint32_t alen = ntfs_get32(a + offsetof(struct ntfs_attr_header, length));
	uint32_t p = ntfs_get16(a + NR_MPO);

	for (long i = 0; p < alen && a[p]; i++) {
		unsigned int lb = a[p] & 0xf, ob = a[p] >> 4;

		if (!lb || lb > 8 || ob > 8 || p + 1 + lb + ob > alen)
			return -1;
		if (i == idx) {
			/* a positive length: its top bit clear */
			if (!len || (lb < 8 && len >> (8 * lb - 1)) || len >> 63)
				return -1;
			for (unsigned int k = 0; k < lb; k++)
				a[p + 1 + k] = (uint8_t)(len >> (8 * k));
			return 0;
		}
		p += 1 + lb + ob;
	}
	return -1;
}

void ntfs_rec_remove_attr(uint8_t *rec, uint32_t size, uint32_t off)
{
	uint32_t used = ntfs_get32(rec + offsetof(struct ntfs_mft_record, bytes_in_use));
	uint32_t len = ntfs_get32(rec + off + offsetof(struct ntfs_attr_header, length));
	uint32_t le;

	memmove(rec + off, rec + off + len, used - off - len);
	memset(rec + used - len, 0, len);
	le = htole32(used - len);
	memcpy(rec + offsetof(struct ntfs_mft_record, bytes_in_use), &le, 4);
	(void)size;
}

int ntfs_rec_end_at(uint8_t *rec, uint32_t size, uint32_t off)
{
	uint32_t used = ntfs_get32(rec + offsetof(struct ntfs_mft_record, bytes_in_use));
	uint32_t end = htole32(NTFS_AT_END), le = htole32(off + 8);

	if (off > size || size - off < 8)
		return -1;
	if (used > size)
		used = size;
	memset(rec + off, 0, used > off ? used - off : 0);
	memcpy(rec + off, &end, 4);
	memcpy(rec + offsetof(struct ntfs_mft_record, bytes_in_use), &le, 4);
	return 0;
}

int ntfs_rec_add_empty_data(uint8_t *rec, uint32_t size)
{
	uint32_t used = ntfs_get32(rec + offsetof(struct ntfs_mft_record, bytes_in_use));
	uint32_t off = ntfs_get16(rec + offsetof(struct ntfs_mft_record, attrs_offset));
	uint32_t len = sizeof(struct ntfs_attr_resident), le;
	uint16_t inst = ntfs_get16(rec + offsetof(struct ntfs_mft_record, next_attr_instance));
	struct ntfs_attr_resident a;

	if (used + len > size)
		return -1;
	/* after the attributes that sort before an unnamed $DATA */
	while (off + 8 <= used && ntfs_get32(rec + off) < NTFS_AT_DATA) {
		if (ntfs_get32(rec + off + 4) < 24 || ntfs_get32(rec + off + 4) > used - off)
			return -1;
		off += ntfs_get32(rec + off + 4);
	}
	if (off + 8 > used)
		return -1;
	memmove(rec + off + len, rec + off, used - off);
	memset(&a, 0, sizeof(a));
	a.h.type = htole32(NTFS_AT_DATA);
	a.h.length = htole32(len);
	a.h.name_offset = htole16(sizeof(a));
	a.h.instance = htole16(inst);
	a.value_offset = htole16(sizeof(a));
	memcpy(rec + off, &a, sizeof(a));
	inst = htole16((uint16_t)(inst + 1));
	memcpy(rec + offsetof(struct ntfs_mft_record, next_attr_instance), &inst, 2);
	le = htole32(used + len);
	memcpy(rec + offsetof(struct ntfs_mft_record, bytes_in_use), &le, 4);
	return 0;
}

int ntfs_list_drop_entry(uint8_t *v, uint32_t vlen, uint32_t type,
			 uint16_t instance, uint64_t recno)
{
	uint32_t eoff = 0, elen = 0;
	const uint8_t *ename = NULL;
	uint8_t enlen = 0;
	unsigned int hits = 0;

	for (uint32_t p = 0; p + 26 <= vlen;) {
		uint16_t l = ntfs_get16(v + p + 4);

		if (l < 26 || p + l > vlen)
			return -1;
		if (ntfs_get32(v + p) == type && ntfs_get16(v + p + 24) == instance &&
		    (ntfs_get64(v + p + 16) & 0xffffffffffffULL) == recno) {
			hits++;
			eoff = p;
			elen = l;
			enlen = v[p + 6];
			ename = v + p + v[p + 7];
			if (v[p + 7] + 2u * enlen > l)
				return -1;
		}
		p += l;
	}
	if (hits != 1)
		return -1;
	/* another extent of the same attribute: removing one breaks it */
	for (uint32_t p = 0; p + 26 <= vlen; p += ntfs_get16(v + p + 4))
		if (p != eoff && ntfs_get32(v + p) == type && v[p + 6] == enlen &&
		    v[p + 7] + 2u * enlen <= ntfs_get16(v + p + 4) &&
		    !memcmp(v + p + v[p + 7], ename, 2u * enlen))
			return -1;
	memmove(v + eoff, v + eoff + elen, vlen - eoff - elen);
	memset(v + vlen - elen, 0, elen);
	return (int)(vlen - elen);
}

int ntfs_rec_unlist_attr(uint8_t *rec, uint32_t size, uint32_t type,
			 uint16_t instance, uint64_t recno)
{
	uint32_t used = ntfs_get32(rec + offsetof(struct ntfs_mft_record, bytes_in_use));
	uint32_t off = ntfs_get16(rec + offsetof(struct ntfs_mft_record, attrs_offset));
	uint32_t len, vlen, voff, newlen, delta, le;
	uint8_t *a;
	char why[NTFS_WHY];
	int nv;

	if (used > size)
		return -1;
	for (;; off += len) {
		if (ntfs_attr_frame(rec, used, off, &len, why) != 1)
			return -1;
		if (ntfs_get32(rec + off) == NTFS_AT_ATTRIBUTE_LIST)
			break;
	}
	a = rec + off;
	if (a[offsetof(struct ntfs_attr_header, non_resident)] ||
	    ntfs_attr_fault((const void *)a, off, 0, why) != NTFS_AF_NONE)
		return -1;	/* only a resident list is edited here */
	vlen = ntfs_get32(a + R_VLEN);
	voff = ntfs_get16(a + R_VOFS);
	nv = ntfs_list_drop_entry(a + voff, vlen, type, instance, recno);
	if (nv < 0)
		return -1;
	vlen = (uint32_t)nv;
	newlen = (uint32_t)ntfs_align(voff + vlen, 8);
	delta = len - newlen;
	le = htole32(vlen);
	memcpy(a + R_VLEN, &le, 4);
	le = htole32(newlen);
	memcpy(a + offsetof(struct ntfs_attr_header, length), &le, 4);
	memmove(a + newlen, a + len, used - off - len);
	memset(rec + used - delta, 0, delta);
	le = htole32(used - delta);
	memcpy(rec + offsetof(struct ntfs_mft_record, bytes_in_use), &le, 4);
	return (int)delta;
}

void ntfs_attr_set_data_size(uint8_t *a, uint64_t size)
{
	ntfs_put64(a + NR_DATA, size);
	ntfs_put64(a + NR_INIT, size);
}

/* do all stride ends hold the number at OFS? */
static bool strides_agree(const uint8_t *rec, uint32_t size, uint32_t ofs)
{
	for (uint32_t i = 1; i <= size / NTFS_USA_STRIDE; i++)
		if (memcmp(rec + i * NTFS_USA_STRIDE - 2, rec + ofs, 2))
			return false;
	return true;
}

int ntfs_usa_repair(uint8_t *rec, uint32_t size, char *what)
{
	struct ntfs_record_header h;
	uint16_t cnt = (uint16_t)(size / NTFS_USA_STRIDE + 1);
	/* where it was, where NTFS 3.1 and 3.0 put it */
	uint32_t cand[3], ofs = UINT32_MAX;

	if (size < NTFS_USA_STRIDE || size % NTFS_USA_STRIDE)
		return -1;
	memcpy(&h, rec, sizeof(h));
	cand[0] = le16toh(h.usa_ofs);
	cand[1] = 0x30;
	cand[2] = 0x2a;
	for (int i = 0; i < 3 && ofs == UINT32_MAX; i++)
		/* a FILE record's header fields end at 0x2a (NTFS 3.0) */
		if (!(cand[i] & 1) && cand[i] >= 0x2a &&
		    cand[i] + 2u * cnt <= NTFS_USA_STRIDE - 2 &&
		    strides_agree(rec, size, cand[i]))
			ofs = cand[i];
	if (ofs == UINT32_MAX)
		return -1;
	snprintf(what, NTFS_WHY, "update sequence array at %u with %u entries, the strides say at %u with %u",
		 le16toh(h.usa_ofs), le16toh(h.usa_count), ofs, cnt);
	h.usa_ofs = htole16((uint16_t)ofs);
	h.usa_count = htole16(cnt);
	memcpy(rec, &h, sizeof(h));
	return ntfs_fixup_remove(rec, size);
}

/* the end marker's offset walking frames from AOFS within LIMIT, or 0 */
static uint32_t chain_end(const uint8_t *rec, uint32_t limit, uint32_t aofs)
{
	uint32_t off = aofs, len;
	char why[NTFS_WHY];
	int r;

	while ((r = ntfs_attr_frame(rec, limit, off, &len, why)) == 1)
		off += len;
	return r == 0 && off + 8 <= limit ? off : 0;
}

int ntfs_file_header_repair(uint8_t *rec, uint32_t size, char *what)
{
	struct ntfs_mft_record m;
	uint32_t aofs, used, end, first;
	size_t n = 0;

	memcpy(&m, rec, sizeof(m));
	what[0] = 0;
	first = (uint32_t)ntfs_align(le16toh(m.h.usa_ofs) + 2u * le16toh(m.h.usa_count), 8);
	/* attributes never overlap the header fields written back below */
	if (first < sizeof(m))
		first = sizeof(m);
	if (le32toh(m.bytes_allocated) != size) {
		n += (size_t)snprintf(what + n, NTFS_WHY - n, "allocated size %u, not %u; ",
				      le32toh(m.bytes_allocated), size);
		m.bytes_allocated = htole32(size);
	}
	aofs = le16toh(m.attrs_offset);
	if (aofs & 7 || aofs < first || aofs >= size || !chain_end(rec, size, aofs)) {
		/* the attributes begin right after the update sequence array */
		if (!chain_end(rec, size, first))
			return -1;
		if (n < NTFS_WHY)
			n += (size_t)snprintf(what + n, NTFS_WHY - n,
					      "attribute offset %u, not %u; ", aofs, first);
		aofs = first;
		m.attrs_offset = htole16((uint16_t)aofs);
	}
	used = le32toh(m.bytes_in_use);
	end = chain_end(rec, used <= size ? used : size, aofs);
	/* the end marker's 8 bytes are the last in use (slack after them
	 * is cut when the field is otherwise valid; bytes in use past the
	 * record are set back to them when the chain ends inside it) */
	if (!end || used > size || used & 7 || end + 8 > used || end + 8 < used) {
		end = chain_end(rec, size, aofs);
		if (n < NTFS_WHY)
			n += (size_t)snprintf(what + n, NTFS_WHY - n,
					      "bytes in use %u, not %u; ", used, end + 8);
		m.bytes_in_use = htole32(end + 8);
	}
	if (n >= 2 && n < NTFS_WHY)
		what[n - 2] = 0;	/* the last "; " */
	memcpy(rec, &m, sizeof(m));
	return 0;
}

int ntfs_rec_resize_resident(uint8_t *rec, uint32_t size, uint32_t off,
			     uint32_t vlen)
{
	uint32_t used = ntfs_get32(rec + offsetof(struct ntfs_mft_record, bytes_in_use));
	uint32_t alen = ntfs_get32(rec + off + 4);
	uint16_t voff = ntfs_get16(rec + off + offsetof(struct ntfs_attr_resident, value_offset));
	uint32_t nlen = (uint32_t)ntfs_align((uint64_t)voff + vlen, 8);
	uint32_t old_v = ntfs_get32(rec + off + offsetof(struct ntfs_attr_resident, value_length));
	uint32_t le;

	if (rec[off + 8] || off + alen > used || used > size ||
	    used - alen + nlen > size)
		return -1;
	memmove(rec + off + nlen, rec + off + alen, used - off - alen);
	if (nlen < alen)
		memset(rec + used - (alen - nlen), 0, alen - nlen);
	/* a value that grows gets zeroes */
	if (vlen > old_v)
		memset(rec + off + voff + old_v, 0, vlen - old_v);
	else
		memset(rec + off + voff + vlen, 0, nlen - voff - vlen);
	le = htole32(nlen);
	memcpy(rec + off + 4, &le, 4);
	le = htole32(vlen);
	memcpy(rec + off + offsetof(struct ntfs_attr_resident, value_length), &le, 4);
	le = htole32(used - alen + nlen);
	memcpy(rec + offsetof(struct ntfs_mft_record, bytes_in_use), &le, 4);
	return 0;
}

int ntfs_rec_insert_resident(uint8_t *rec, uint32_t size, uint32_t type,
			     const void *val, uint32_t vlen)
{
	uint32_t used = ntfs_get32(rec + offsetof(struct ntfs_mft_record, bytes_in_use));
	uint32_t off = ntfs_get16(rec + offsetof(struct ntfs_mft_record, attrs_offset));
	uint32_t len = (uint32_t)ntfs_align(sizeof(struct ntfs_attr_resident) + vlen, 8), le;
	uint16_t inst = ntfs_get16(rec + offsetof(struct ntfs_mft_record, next_attr_instance));
	struct ntfs_attr_resident a;

	if (used > size || len > size - used)
		return -1;
	while (off + 8 <= used && ntfs_get32(rec + off) <= type) {
		if (ntfs_get32(rec + off + 4) < 24 || ntfs_get32(rec + off + 4) > used - off)
			return -1;
		off += ntfs_get32(rec + off + 4);
	}
	if (off + 8 > used)
		return -1;
	memmove(rec + off + len, rec + off, used - off);
	memset(rec + off, 0, len);
	memset(&a, 0, sizeof(a));
	a.h.type = htole32(type);
	a.h.length = htole32(len);
	a.h.name_offset = htole16(sizeof(a));
	a.h.instance = htole16(inst);
	a.value_length = htole32(vlen);
	a.value_offset = htole16(sizeof(a));
	memcpy(rec + off, &a, sizeof(a));
	memcpy(rec + off + sizeof(a), val, vlen);
	inst = htole16((uint16_t)(inst + 1));
	memcpy(rec + offsetof(struct ntfs_mft_record, next_attr_instance), &inst, 2);
	le = htole32(used + len);
	memcpy(rec + offsetof(struct ntfs_mft_record, bytes_in_use), &le, 4);
	return 0;
}

int ntfs_rec_replace_resident(uint8_t *rec, uint32_t size, uint32_t off,
			      const void *val, uint32_t vlen)
{
	uint32_t used = ntfs_get32(rec + offsetof(struct ntfs_mft_record, bytes_in_use));
	uint32_t old = ntfs_get32(rec + off + offsetof(struct ntfs_attr_header, length));
	uint32_t len = (uint32_t)ntfs_align(sizeof(struct ntfs_attr_resident) + vlen, 8), le;
	struct ntfs_attr_resident a;

	memcpy(&a.h, rec + off, sizeof(a.h));
	if (a.h.name_length || used > size || off > used || old > used - off ||
	    used - old + len > size)
		return -1;
	memmove(rec + off + len, rec + off + old, used - off - old);
	if (old > len)
		memset(rec + used - old + len, 0, old - len);
	memset(rec + off, 0, len);
	a.h.length = htole32(len);
	a.h.non_resident = 0;
	a.h.name_offset = htole16(sizeof(a));
	a.h.flags = 0;
	a.value_length = htole32(vlen);
	a.value_offset = htole16(sizeof(a));
	a.resident_flags = 0;
	a.reserved = 0;
	memcpy(rec + off, &a, sizeof(a));
	memcpy(rec + off + sizeof(a), val, vlen);
	le = htole32(used - old + len);
	memcpy(rec + offsetof(struct ntfs_mft_record, bytes_in_use), &le, 4);
	return 0;
}

int ntfs_rec_extent_hole_after(uint8_t *rec, uint32_t size, uint32_t off,
			       uint64_t n)
{
	uint8_t *a = rec + off;
	uint32_t used = ntfs_get32(rec + offsetof(struct ntfs_mft_record, bytes_in_use));
	uint32_t len = ntfs_get32(a + offsetof(struct ntfs_attr_header, length));
	uint32_t mpo = ntfs_get16(a + NR_MPO), p = mpo, need, nlen, lb = 1;
	uint64_t hi = ntfs_get64(a + NR_HIGHEST);

	if (!n || n >> 62 || hi >> 62 || used > size || off + len > used)
		return -1;
	/* the end marker of the mapping pairs */
	while (p < len && a[p])
		p += 1u + (a[p] & 15) + (a[p] >> 4);
	if (p >= len)
		return -1;
	/* a sparse run: a header of length bytes only (the length signed) */
	while (lb < 8 && n >> (8 * lb - 1))
		lb++;
	need = p + 1 + lb + 1;
	nlen = need > len ? (need + 7) & ~7u : len;
	if (used + (nlen - len) > size)
		return -1;
	memmove(rec + off + nlen, rec + off + len, used - off - len);
	a[p] = (uint8_t)lb;
	for (uint32_t i = 0; i < lb; i++)
		a[p + 1 + i] = (uint8_t)(n >> (8 * i));
	memset(a + p + 1 + lb, 0, nlen - (p + 1 + lb));
	ntfs_put32(a + offsetof(struct ntfs_attr_header, length), nlen);
	ntfs_put32(rec + offsetof(struct ntfs_mft_record, bytes_in_use), used + nlen - len);
	ntfs_put64(a + NR_HIGHEST, hi + n);
	return 0;
}

int ntfs_rec_extent_hole_before(uint8_t *rec, uint32_t size, uint32_t off,
				uint64_t n)
{
	uint8_t *a = rec + off;
	uint32_t used = ntfs_get32(rec + offsetof(struct ntfs_mft_record, bytes_in_use));
	uint32_t len = ntfs_get32(a + offsetof(struct ntfs_attr_header, length));
	uint32_t mpo = ntfs_get16(a + NR_MPO), p = mpo, mp, need, nlen, lb = 1;
	uint64_t lo = ntfs_get64(a + NR_LOWEST);

	if (!n || n > lo || used > size || off + len > used)
		return -1;
	/* the mapping pairs in use, with their end marker */
	while (p < len && a[p])
		p += 1u + (a[p] & 15) + (a[p] >> 4);
	if (p >= len)
		return -1;
	mp = p + 1 - mpo;
	/* a sparse run: a header of length bytes only (the length signed) */
	while (lb < 8 && n >> (8 * lb - 1))
		lb++;
	need = mpo + mp + 1 + lb;
	nlen = need > len ? (need + 7) & ~7u : len;
	if (used + (nlen - len) > size)
		return -1;
	memmove(rec + off + nlen, rec + off + len, used - off - len);
	memmove(a + mpo + 1 + lb, a + mpo, mp);
	a[mpo] = (uint8_t)lb;
	for (uint32_t i = 0; i < lb; i++)
		a[mpo + 1 + i] = (uint8_t)(n >> (8 * i));
	memset(a + mpo + 1 + lb + mp, 0, nlen - (mpo + 1 + lb + mp));
	ntfs_put32(a + offsetof(struct ntfs_attr_header, length), nlen);
	ntfs_put32(rec + offsetof(struct ntfs_mft_record, bytes_in_use), used + nlen - len);
	ntfs_put64(a + NR_LOWEST, lo - n);
	return 0;
}

int ntfs_rec_attr_make_sparse(uint8_t *rec, uint32_t size, uint32_t off,
			      uint64_t compressed)
{
	uint8_t *a = rec + off;
	uint32_t used = ntfs_get32(rec + offsetof(struct ntfs_mft_record, bytes_in_use));
	uint32_t len, p, at = NR_COMPRESSED;
	uint16_t flags, mpo, noff;

	if (used > size || off + NR_COMPRESSED > used || !a[8])
		return -1;
	len = ntfs_get32(a + offsetof(struct ntfs_attr_header, length));
	flags = ntfs_get16(a + offsetof(struct ntfs_attr_header, flags));
	mpo = ntfs_get16(a + NR_MPO);
	noff = ntfs_get16(a + offsetof(struct ntfs_attr_header, name_offset));
	if (off + len > used || mpo < at || mpo > len ||
	    (a[offsetof(struct ntfs_attr_header, name_length)] && noff < at) ||
	    flags & (NTFS_ATTR_SPARSE | NTFS_ATTR_COMPRESSION_MASK))
		return -1;
	/* the end marker of the mapping pairs: slack after it is used first */
	p = mpo;
	while (p < len && a[p])
		p += 1u + (a[p] & 15) + (a[p] >> 4);
	if (p >= len)
		return -1;
	if (p + 1 + 8 <= len) {
		memmove(a + at + 8, a + at, p + 1 - at);
	} else {
		if (size - used < 8)
			return -1;
		memmove(a + at + 8, a + at, used - off - at);
		ntfs_put32(a + offsetof(struct ntfs_attr_header, length), len + 8);
		ntfs_put32(rec + offsetof(struct ntfs_mft_record, bytes_in_use), used + 8);
	}
	ntfs_put64(a + at, compressed);
	if (noff >= at)
		ntfs_put16(a + offsetof(struct ntfs_attr_header, name_offset),
			   (uint16_t)(noff + 8));
	ntfs_put16(a + NR_MPO, (uint16_t)(mpo + 8));
	ntfs_put16(a + offsetof(struct ntfs_attr_header, flags), flags | NTFS_ATTR_SPARSE);
	return 0;
}

void ntfs_rec_set_file_attr(uint8_t *rec, uint32_t flags)
{
	uint32_t used = ntfs_get32(rec + offsetof(struct ntfs_mft_record, bytes_in_use));
	uint32_t off = ntfs_get16(rec + offsetof(struct ntfs_mft_record, attrs_offset));
	uint32_t at = offsetof(struct ntfs_standard_information, file_attributes);

	while (off + 24 <= used && ntfs_get32(rec + off) < NTFS_AT_STANDARD_INFORMATION) {
		if (ntfs_get32(rec + off + 4) < 24 || ntfs_get32(rec + off + 4) > used - off)
			return;
		off += ntfs_get32(rec + off + 4);
	}
	if (off + 24 <= used && ntfs_get32(rec + off) == NTFS_AT_STANDARD_INFORMATION &&
	    !rec[off + 8]) {
		uint32_t vlen = ntfs_get32(rec + off + offsetof(struct ntfs_attr_resident, value_length));
		uint32_t voff = ntfs_get16(rec + off + offsetof(struct ntfs_attr_resident, value_offset));

		if (vlen >= at + 4 && (uint64_t)voff + vlen <= ntfs_get32(rec + off + 4) &&
		    (uint64_t)off + voff + vlen <= used)
			ntfs_put32(rec + off + voff + at,
				   ntfs_get32(rec + off + voff + at) | flags);
	}
}

int ntfs_rec_set_security_id(uint8_t *rec, uint32_t size, uint32_t id)
{
	const struct ntfs_attr_header *a = ntfs_attr_named(rec, NTFS_AT_STANDARD_INFORMATION, "");
	uint32_t off, vlen, at = 0;

	if (!a || a->non_resident)
		return -1;
	off = (uint32_t)((const uint8_t *)a - rec);
	ntfs_attr_value(a, &vlen);
	/* the NTFS 1.x form (48 bytes) grows to 3.x's, its new fields zero */
	if (vlen < sizeof(struct ntfs_standard_information) &&
	    ntfs_rec_resize_resident(rec, size, off,
				     (uint32_t)sizeof(struct ntfs_standard_information)))
		return -1;
	ntfs_security_id_of(rec, &at);
	if (!at || at + 4 > size)
		return -1;
	ntfs_put32(rec + at, id);
	return 0;
}

int ntfs_rec_clear_volume_flags(uint8_t *rec, uint16_t flags)
{
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];

	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1) {
		struct ntfs_volume_information vi;
		uint32_t len;
		uint8_t *v;

		if (le32toh(a->type) != NTFS_AT_VOLUME_INFORMATION || a->non_resident)
			continue;
		v = (uint8_t *)ntfs_attr_value(a, &len);
		if (len < sizeof(vi))
			break;
		memcpy(&vi, v, sizeof(vi));
		vi.flags = htole16(le16toh(vi.flags) & (uint16_t)~flags);
		memcpy(v, &vi, sizeof(vi));
		return 0;
	}
	return -ENOENT;
}

int ntfs_rec_set_pairs(uint8_t *rec, uint32_t size, uint32_t aoff,
		       const uint8_t *mp, uint32_t len)
{
	struct ntfs_attr_nonresident n;
	struct ntfs_mft_record m;
	uint32_t alen, mpo, used, nlen;

	memcpy(&m, rec, sizeof(m));
	memcpy(&n, rec + aoff, sizeof(n));
	alen = le32toh(n.h.length);
	mpo = le16toh(n.mapping_pairs_offset);
	used = le32toh(m.bytes_in_use);
	if (mpo >= alen || used > size || aoff + alen > used)
		return -1;
	nlen = mpo + len > alen ? (mpo + len + 7) & ~7u : alen;
	if (used + (nlen - alen) > size ||
	    used + (nlen - alen) > le32toh(m.bytes_allocated))
		return -1;
	memmove(rec + aoff + nlen, rec + aoff + alen, used - aoff - alen);
	memset(rec + aoff + mpo, 0, nlen - mpo);
	memcpy(rec + aoff + mpo, mp, len);
	n.h.length = htole32(nlen);
	memcpy(rec + aoff, &n, sizeof(n));
	m.bytes_in_use = htole32(used + nlen - alen);
	memcpy(rec, &m, sizeof(m));
	return 0;
}
