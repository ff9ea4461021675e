// SPDX-License-Identifier: GPL-2.0-or-later
/* libntfs: MFT records assumed in memory, never written: a checker run
 * read-only (fsck -n) goes on with a record as its declined repair would
 * have left it, and every later read of that record returns that version,
 * so that the rest of the check tells what the repair run would find.
 * Held in an open-addressing hash by record number (pass 1 reads every
 * record: a read of one not assumed must cost nothing measurable), within
 * a byte budget. */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/format.h"
#include "ntfs/volume_io.h"

/* RECNO's slot in a table of CAP slots (a power of two): its own, or the
 * empty one where it would go */
static struct ntfs_assumed_slot *find(const struct ntfs_assumed *t,
				      uint64_t recno)
{
	size_t mask = t->cap - 1;
	/* Fibonacci hashing: neighbouring records land apart */
	size_t i = (size_t)((recno * 0x9e3779b97f4a7c15ULL) >> 32) & mask;

	while (t->slot[i].raw && t->slot[i].recno != recno)
		i = (i + 1) & mask;
	return &t->slot[i];
}

/* the table at CAP slots, every record moved over: 0 or -ENOMEM */
static int grow(struct ntfs_assumed *t, size_t cap)
{
	struct ntfs_assumed old = *t;

	t->slot = calloc(cap, sizeof(*t->slot));
	if (!t->slot) {
		t->slot = old.slot;
		return -ENOMEM;
	}
	t->cap = cap;
	for (size_t i = 0; i < old.cap; i++)
		if (old.slot[i].raw)
			*find(t, old.slot[i].recno) = old.slot[i];
	free(old.slot);
	t->bytes += (uint64_t)(cap - old.cap) * sizeof(*t->slot);
	return 0;
}

/* RECNO's copy in the table, a new one when not held: its bytes, or NULL
 * (*ERR: -ENOSPC past the budget, -ENOMEM) */
static uint8_t *slot_for(struct ntfs_vol *v, uint64_t recno, int *err)
{
	struct ntfs_assumed *t = &v->assumed;
	uint64_t budget = t->budget ? t->budget : NTFS_ASSUMED_BUDGET;
	uint32_t rs = v->boot.g.mft_record_size;
	struct ntfs_assumed_slot *s = NULL;
	uint8_t *raw;

	if (t->cap)
		s = find(t, recno);
	if (!s || !s->raw) {
		/* a new record: kept under half full, within the budget */
		size_t cap = t->cap;
		uint64_t more = rs;

		if (2 * (t->count + 1) > cap) {
			cap = cap ? 2 * cap : 64;
			more += (uint64_t)(cap - t->cap) * sizeof(*t->slot);
		}
		if (t->bytes + more > budget) {
			t->refused++;
			*err = -ENOSPC;
			return NULL;
		}
		*err = -ENOMEM;
		raw = malloc(rs);
		if (!raw)
			return NULL;
		if (cap != t->cap && grow(t, cap)) {
			free(raw);
			return NULL;
		}
		s = find(t, recno);
		s->recno = recno;
		s->raw = raw;
		t->count++;
		t->bytes += rs;
	}
	return s->raw;
}

int ntfs_vol_assume_record(struct ntfs_vol *v, uint64_t recno, const uint8_t *buf)
{
	uint32_t rs = v->boot.g.mft_record_size;
	struct ntfs_record_header h;
	uint16_t usn;
	int err;
	uint8_t *raw = slot_for(v, recno, &err);

	if (!raw)
		return err;
	/* as on disk, as ntfs_vol_write_record would put it there */
	memcpy(raw, buf, rs);
	memcpy(&h, raw, sizeof(h));
	memcpy(&usn, raw + le16toh(h.usa_ofs), 2);
	ntfs_fixup_apply(raw, rs, (uint16_t)(le16toh(usn) + 1));
	return 0;
}

int ntfs_vol_assume_record_raw(struct ntfs_vol *v, uint64_t recno, const uint8_t *raw)
{
	int err;
	uint8_t *held = slot_for(v, recno, &err);

	if (!held)
		return err;
	memcpy(held, raw, v->boot.g.mft_record_size);
	return 0;
}

const uint8_t *ntfs_vol_assumed(const struct ntfs_vol *v, uint64_t recno)
{
	if (!v->assumed.count)
		return NULL;
	return find(&v->assumed, recno)->raw;
}

void ntfs_vol_assumed_free(struct ntfs_vol *v)
{
	struct ntfs_assumed *t = &v->assumed;

	for (size_t i = 0; i < t->cap; i++)
		free(t->slot[i].raw);
	free(t->slot);
	t->slot = NULL;
	t->cap = t->count = 0;
	t->bytes = t->refused = 0;
}
