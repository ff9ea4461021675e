// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 3 repair: two names that collate equal in one directory (two
 * files claiming the same name, or one file claiming it twice).  An index
 * can hold only one of them, so the other would come back as "missing"
 * at every run.  The name that sorts first (lowest record number) keeps
 * it; the other is renamed in place to "<name>.fsck-<record>" (a further
 * "-<n>" if even that is taken; the name cut to fit 255 units), in the
 * POSIX namespace, in its own record.  The file stays in its directory
 * and keeps every byte of data; only the name changes, once.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/name_edit.h"
#include "ntfs_check.h"
#include "ntfs_problems.h"

#define SUFFIX_MAX 40

/* Is NAME (LEN units) taken by one of the N names V? */
static bool taken(const uint16_t *upcase, struct ntfs_fn_ref *const *v,
		  long n, const uint16_t *name, unsigned int len)
{
	for (long i = 0; i < n; i++)
		if (!ntfs_collate_file_name(upcase, v[i]->name, v[i]->name_len,
					    name, len))
			return true;
	return false;
}

/* A free name for ref X among the N names V: 0 with NAME/LEN, or -1. */
static int new_name(const uint16_t *upcase, struct ntfs_fn_ref *const *v,
		    long n, const struct ntfs_fn_ref *x, uint16_t *name,
		    unsigned int *len)
{
	for (unsigned int k = 1; k < 1000; k++) {
		char suffix[SUFFIX_MAX];
		int sl = k == 1 ?
			snprintf(suffix, sizeof(suffix), ".fsck-%llu",
				 (unsigned long long)x->recno) :
			snprintf(suffix, sizeof(suffix), ".fsck-%llu-%u",
				 (unsigned long long)x->recno, k);
		unsigned int keep = x->name_len;

		if (keep + (unsigned int)sl > 255)
			keep = 255 - (unsigned int)sl;
		/* never cut a surrogate pair in two */
		if (keep && keep < x->name_len && x->name[keep - 1] >= 0xd800 &&
		    x->name[keep - 1] < 0xdc00)
			keep--;
		memcpy(name, x->name, 2u * keep);
		for (int i = 0; i < sl; i++)
			name[keep + (unsigned int)i] = (uint16_t)(unsigned char)suffix[i];
		*len = keep + (unsigned int)sl;
		if (!taken(upcase, v, n, name, *len))
			return 0;
	}
	return -1;
}

/*
 * Rewrite the $FILE_NAME of X in its record as FN (FN_LEN bytes); the
 * attribute keeps its place and instance.  A DOS name becoming a POSIX
 * one counts as a link from now on.  0, or -1 with WHY.
 */
static int rewrite_name(struct ntfs_check *c, const struct ntfs_fn_ref *x,
			const uint8_t *fn, uint32_t fn_len, char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *rec = malloc(rs), *out = malloc(rs);
	bool was_dos = false;
	int ret = -1, r;

	if (!rec || !out) {
		snprintf(why, NTFS_WHY, "out of memory");
		goto out;
	}
	if (ntfs_vol_read_record(&c->vol, x->holder, rec) ||
	    ntfs_record_check(rec, rs, NTFS_MAGIC_FILE, why) != NTFS_REC_OK)
		goto out;
	r = ntfs_rec_replace_file_name(rec, rs, out, x->fn, x->fn_len, fn, fn_len,
				       &was_dos, why);
	if (r < 0)
		goto out;
	if (r > 0) {
		snprintf(why, NTFS_WHY, "the name is no longer in MFT record %llu",
			 (unsigned long long)x->holder);
		goto out;
	}
	if (was_dos && x->holder == x->recno) {
		struct ntfs_mft_record m;

		memcpy(&m, out, sizeof(m));
		m.link_count = htole16((uint16_t)(le16toh(m.link_count) + 1));
		memcpy(out, &m, sizeof(m));
	}
	if (ntfs_check_write_record(c, x->holder, out)) {
		snprintf(why, NTFS_WHY, "writing the record failed");
		goto out;
	}
	ret = 0;
out:
	free(rec);
	free(out);
	return ret;
}

int ntfs_rename_to(struct ntfs_check *c, struct ntfs_fn_ref *x,
		   const uint16_t *name, unsigned int len, char *why)
{
	uint16_t fn_len = (uint16_t)(sizeof(struct ntfs_file_name) + 2u * len);
	uint16_t *mem = malloc(2u * len + fn_len);
	uint8_t *fn;

	if (!mem) {
		snprintf(why, NTFS_WHY, "out of memory");
		return -1;
	}
	/* the new value: the old one with the new name, POSIX namespace */
	fn = (uint8_t *)(mem + len);
	memcpy(fn, x->fn, sizeof(struct ntfs_file_name));
	fn[offsetof(struct ntfs_file_name, name_length)] = (uint8_t)len;
	fn[offsetof(struct ntfs_file_name, name_type)] = NTFS_NS_POSIX;
	for (unsigned int k = 0; k < len; k++) {
		fn[sizeof(struct ntfs_file_name) + 2 * k] = (uint8_t)name[k];
		fn[sizeof(struct ntfs_file_name) + 2 * k + 1] = (uint8_t)(name[k] >> 8);
	}
	memcpy(mem, name, 2u * len);
	if (rewrite_name(c, x, fn, fn_len, why)) {
		free(mem);
		return -1;
	}
	free(x->name);
	x->name = mem;
	x->fn = fn;
	x->fn_len = fn_len;
	x->name_len = (uint8_t)len;
	return 0;
}

int ntfs_rename_duplicate(struct ntfs_check *c, uint64_t d,
			  const uint16_t *upcase, struct ntfs_fn_ref *const *v,
			  long n, const struct ntfs_fn_ref *keep,
			  struct ntfs_fn_ref *x)
{
	uint16_t name[255];
	unsigned int len;
	char old8[1024], new8[1024], obj[1200], why[NTFS_WHY];

	ntfs_name_to_utf8(x->name, x->name_len, old8, sizeof(old8));
	ntfs_object_name(c, "directory", d, obj, sizeof(obj));
	if (new_name(upcase, v, n, x, name, &len)) {
		snprintf(why, sizeof(why), "no free name for the second \"%.40s\"", old8);
		fsf_fix_ask(&c->fix, &PR_INDEX_REBUILD_FAILED, obj, why);
		return -1;
	}
	ntfs_name_to_utf8(name, len, new8, sizeof(new8));
	if (!fsf_fix_ask(&c->fix, &PR_NAME_DUPLICATE, obj, old8,
			 (unsigned long long)keep->recno,
			 (unsigned long long)x->recno, new8))
		return -1;
	if (ntfs_rename_to(c, x, name, len, why)) {
		char w2[NTFS_WHY];

		snprintf(w2, sizeof(w2), "\"%.40s\" cannot be renamed: %.60s", old8, why);
		fsf_fix_failed(&c->fix);
		fsf_fix_ask(&c->fix, &PR_NAME_NOT_RENAMED, obj, w2);
		return -1;
	}
	return 0;
}

int ntfs_free_name(const uint16_t *upcase, struct ntfs_fn_ref *const *v,
		   long n, const struct ntfs_fn_ref *x, uint16_t *name,
		   unsigned int *len)
{
	return new_name(upcase, v, n, x, name, len);
}
