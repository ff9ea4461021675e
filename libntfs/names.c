// SPDX-License-Identifier: GPL-2.0-or-later
/* libntfs: file names and paths as messages print them. */
#include "config.h"

#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/file_attrs.h"

/* UTF-16 (host order) to printable UTF-8 for messages */
void ntfs_name_to_utf8(const uint16_t *u, unsigned int n, char *out,
		       size_t size)
{
	size_t o = 0;

	for (unsigned int i = 0; i < n && o + 5 < size; i++) {
		uint32_t cp = u[i];

		if (cp >= 0xd800 && cp < 0xdc00 && i + 1 < n &&
		    u[i + 1] >= 0xdc00 && u[i + 1] < 0xe000)
			cp = 0x10000 + ((cp - 0xd800) << 10) + (u[++i] - 0xdc00);
		else if (cp >= 0xd800 && cp < 0xe000)
			cp = 0xfffd;
		if (cp < 0x20)
			cp = '?';
		if (cp < 0x80) {
			out[o++] = (char)cp;
		} else if (cp < 0x800) {
			out[o++] = (char)(0xc0 | cp >> 6);
			out[o++] = (char)(0x80 | (cp & 0x3f));
		} else if (cp < 0x10000) {
			out[o++] = (char)(0xe0 | cp >> 12);
			out[o++] = (char)(0x80 | ((cp >> 6) & 0x3f));
			out[o++] = (char)(0x80 | (cp & 0x3f));
		} else {
			out[o++] = (char)(0xf0 | cp >> 18);
			out[o++] = (char)(0x80 | ((cp >> 12) & 0x3f));
			out[o++] = (char)(0x80 | ((cp >> 6) & 0x3f));
			out[o++] = (char)(0x80 | (cp & 0x3f));
		}
	}
	out[o] = '\0';
}

/* the name a path shows for a file: its first non-DOS $FILE_NAME */
struct first_name {
	uint64_t parent;
	uint16_t name[255];
	uint8_t len;
	bool found;
};

static int take_name(const struct ntfs_attr_header *a, void *arg)
{
	struct first_name *f = arg;
	struct ntfs_file_name fn;
	const uint8_t *v = ntfs_file_name_of(a, &fn);

	if (!v || fn.name_type == NTFS_NS_DOS)
		return 0;
	f->parent = le64toh(fn.parent_directory) & 0xffffffffffffULL;
	f->len = fn.name_length;
	for (unsigned int i = 0; i < fn.name_length; i++)
		f->name[i] = (uint16_t)(v[sizeof(fn) + 2 * i] | v[sizeof(fn) + 2 * i + 1] << 8);
	f->found = true;
	return 1;
}

void ntfs_vol_object_name(struct ntfs_vol *v, ntfs_rec_in_use in_use,
			  const void *in_use_arg, const char *what,
			  uint64_t recno, char *out, size_t size)
{
	uint8_t *buf = malloc(v->boot.g.mft_record_size);
	char path[1024] = "", tmp[1024], part[1024];
	uint64_t r = recno;

	/* up the parents to the root, at most 32 levels, never in a loop */
	for (int depth = 0; buf && r != NTFS_FILE_ROOT && depth < 32; depth++) {
		struct first_name f = { 0 };

		if (ntfs_vol_file_foreach(v, in_use, in_use_arg, r, buf, take_name,
					  &f) < 0 || !f.found ||
		    f.parent == r) {
			path[0] = '\0';
			break;
		}
		ntfs_name_to_utf8(f.name, f.len, part, sizeof(part));
		if (strlen(part) + strlen(path) + 2 > sizeof(path)) {
			path[0] = '\0';
			break;
		}
		tmp[0] = '/';
		strcpy(tmp + 1, part);
		strcat(tmp, path);
		strcpy(path, tmp);
		r = f.parent;
	}
	free(buf);
	if (recno == NTFS_FILE_ROOT)
		snprintf(out, size, "%s MFT record %llu (/)", what, (unsigned long long)recno);
	else if (r == NTFS_FILE_ROOT && path[0])
		snprintf(out, size, "%s MFT record %llu (%s)", what,
			 (unsigned long long)recno, path);
	else
		snprintf(out, size, "%s MFT record %llu", what, (unsigned long long)recno);
}

bool ntfs_vol_in_extend(struct ntfs_vol *v, ntfs_rec_in_use in_use,
			const void *in_use_arg, uint64_t dir, uint8_t *buf)
{
	uint64_t r = dir;

	for (int depth = 0; r != NTFS_FILE_ROOT && depth < 32; depth++) {
		struct first_name f = { 0 };

		if (r == NTFS_FILE_EXTEND)
			return true;
		if (ntfs_vol_file_foreach(v, in_use, in_use_arg, r, buf, take_name,
					  &f) < 0 || !f.found ||
		    f.parent == r)
			return false;
		r = f.parent;
	}
	return false;
}
