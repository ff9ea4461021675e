// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fsck.ntfs: a file's attributes wherever they are -- its base record and
 * the extension records its $ATTRIBUTE_LIST names -- read on demand, so
 * that the index pass can check an entry against the file it names
 * without pass 1 keeping every name in memory.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/attrlist.h"
#include "ntfs_check.h"

static int visit(const uint8_t *rec, ntfs_attr_visit fn, void *arg)
{
	struct ntfs_attr_cursor cur;
	const struct ntfs_attr_header *a;
	char why[NTFS_WHY];
	int r;

	ntfs_attr_cursor_init(&cur, rec);
	while (ntfs_attr_next(&cur, &a, why) == 1)
		if ((r = fn(a, arg)))
			return r;
	return 0;
}

int ntfs_file_foreach(struct ntfs_check *c, uint64_t base, uint8_t *buf,
		      ntfs_attr_visit fn, void *arg)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint64_t *ext = NULL, len = 0;
	struct ntfs_run *runs = NULL;
	uint8_t *list = NULL;
	char why[NTFS_WHY];
	size_t n = 0, cap = 0;
	int r;
	long nruns;

	if (base >= c->vol.mft_records || ntfs_vol_read_record(&c->vol, base, buf) ||
	    ntfs_record_check(buf, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		return -1;
	if ((r = visit(buf, fn, arg)) || !ntfs_attr_find(buf, NTFS_AT_ATTRIBUTE_LIST))
		return r;
	if (ntfs_vol_read_attr(&c->vol, buf, NTFS_AT_ATTRIBUTE_LIST, &list, &len,
			       &runs, &nruns)) {
		free(list);
		free(runs);
		return 0;
	}
	/* every record the list names, once (a file with thousands of
	 * names has hundreds of extension records) */
	for (uint64_t off = 0, e; n < c->vol.mft_records;) {
		uint32_t type;
		bool seen = false;

		if (!ntfs_list_next(list, len, &off, &type, &e))
			break;
		for (size_t i = n; i-- > 0 && !seen;)
			seen = ext[i] == e;
		if (e == base || seen)
			continue;
		if (n == cap) {
			uint64_t *g = realloc(ext, (cap = cap ? 2 * cap : 16) * sizeof(*g));

			if (!g)
				break;
			ext = g;
		}
		ext[n++] = e;
	}
	free(list);
	free(runs);
	r = 0;
	for (size_t i = 0; i < n && !r; i++) {
		struct ntfs_mft_record m;

		if (ext[i] >= c->vol.mft_records || !cset_get(&c->record_used, ext[i]) ||
		    ntfs_vol_read_record(&c->vol, ext[i], buf) ||
		    ntfs_record_check(buf, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
			continue;
		memcpy(&m, buf, sizeof(m));
		if ((le64toh(m.base_mft_record) & 0xffffffffffffULL) != base)
			continue;
		r = visit(buf, fn, arg);
	}
	free(ext);
	return r;
}

int ntfs_file_attr_holder(struct ntfs_check *c, uint8_t *rec, uint64_t base,
			  uint32_t type, uint8_t *ext, uint8_t **holder,
			  uint64_t *where)
{
	uint32_t rs = c->vol.boot.g.mft_record_size, off = 0;
	struct ntfs_run *runs = NULL;
	struct ntfs_al_entry e;
	struct ntfs_mft_record m;
	uint8_t *list = NULL;
	uint64_t len, found = 0;
	bool have = false, split = false;
	char why[NTFS_WHY];
	long nruns;
	int r;

	/* the base, unless its list names an extension record: reading it
	 * then says what is wrong, as it did before lists were followed */
	*holder = rec;
	*where = base;
	if (ntfs_attr_named(rec, type, "") ||
	    !ntfs_attr_named(rec, NTFS_AT_ATTRIBUTE_LIST, ""))
		return 0;
	if (ntfs_vol_read_attr(&c->vol, rec, NTFS_AT_ATTRIBUTE_LIST, &list, &len,
				 &runs, &nruns) || len > UINT32_MAX) {
		r = -EUCLEAN;
		goto out;
	}
	while ((r = ntfs_al_next(list, (uint32_t)len, &off, &e, why)) == 1) {
		if (e.type != type || e.name_len)
			continue;
		if (e.lowest_vcn)
			split = true;
		else if (!have)
			found = e.mref & 0xffffffffffffULL, have = true;
	}
	if (r < 0 || split) {
		r = -EUCLEAN;
		goto out;
	}
	if (!have) {
		r = 0;
		goto out;
	}
	r = -EUCLEAN;
	if (found == base || found >= c->vol.mft_records ||
	    ntfs_vol_read_record(&c->vol, found, ext) ||
	    ntfs_record_check(ext, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		goto out;
	memcpy(&m, ext, sizeof(m));
	if (!(le16toh(m.flags) & NTFS_MFT_IN_USE) ||
	    (le64toh(m.base_mft_record) & 0xffffffffffffULL) != base ||
	    !ntfs_attr_named(ext, type, ""))
		goto out;
	*holder = ext;
	*where = found;
	r = 0;
out:
	free(list);
	free(runs);
	return r;
}

bool ntfs_data_sizes_of(const struct ntfs_attr_header *a,
			struct ntfs_data_sizes *d)
{
	if (le32toh(a->type) != NTFS_AT_DATA || a->name_length)
		return false;
	if (!a->non_resident) {
		uint32_t len;

		ntfs_attr_value(a, &len);
		d->size = len;
		d->alloc = ntfs_align(len, 8);
	} else {
		struct ntfs_attr_nonresident n;

		memcpy(&n, a, sizeof(n));
		if (n.lowest_vcn)
			return false;
		d->size = le64toh((uint64_t)n.data_size);
		d->alloc = le64toh((uint64_t)n.allocated_size);
		/* neither, but with a compression unit: its content flag
		 * may be lost (pass 2), what it allocates is not known */
		if (!(le16toh(a->flags) & (NTFS_ATTR_COMPRESSION_MASK | NTFS_ATTR_SPARSE)) &&
		    n.compression_unit)
			return false;
		/* compressed or sparse: the clusters really allocated */
		if (le16toh(a->flags) & (NTFS_ATTR_COMPRESSION_MASK | NTFS_ATTR_SPARSE)) {
			uint64_t csize;

			if (le16toh(n.mapping_pairs_offset) < sizeof(n) + 8)
				return false;
			memcpy(&csize, (const uint8_t *)a + sizeof(n), 8);
			d->alloc = le64toh(csize);
		}
	}
	d->known = true;
	return true;
}

const uint8_t *ntfs_file_name_of(const struct ntfs_attr_header *a,
				 struct ntfs_file_name *fn)
{
	const uint8_t *v;
	uint32_t len;

	if (le32toh(a->type) != NTFS_AT_FILE_NAME || a->non_resident)
		return NULL;
	v = ntfs_attr_value(a, &len);
	if (len < sizeof(*fn))
		return NULL;
	memcpy(fn, v, sizeof(*fn));
	return sizeof(*fn) + 2u * fn->name_length <= len ? v : NULL;
}
