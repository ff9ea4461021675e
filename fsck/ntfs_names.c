// SPDX-License-Identifier: GPL-2.0-or-later
/* fsck.ntfs: file names as messages print them. */
#include "config.h"

#include "ntfs_check.h"

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
