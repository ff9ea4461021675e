// SPDX-License-Identifier: GPL-2.0-or-later
/* xattr names: standard namespaces, long prefixes and the bloom filter. */
#include "config.h"

#include <endian.h>
#include <string.h>
#include <xxhash.h>

#include "erofs/erofs_fs.h"
#include "erofs/format.h"

static const struct {
	const char *prefix;
	uint8_t index;
	int whole;	/* the prefix is the whole name (POSIX ACLs) */
} std_prefixes[] = {
	{ "user.", EROFS_XATTR_INDEX_USER, 0 },
	{ "system.posix_acl_access", EROFS_XATTR_INDEX_POSIX_ACL_ACCESS, 1 },
	{ "system.posix_acl_default", EROFS_XATTR_INDEX_POSIX_ACL_DEFAULT, 1 },
	{ "trusted.", EROFS_XATTR_INDEX_TRUSTED, 0 },
	{ "lustre.", EROFS_XATTR_INDEX_LUSTRE, 0 },
	{ "security.", EROFS_XATTR_INDEX_SECURITY, 0 },
};

int erofs_xattr_std_prefix(const char *name, uint8_t *index,
			   size_t *suffix_off)
{
	for (size_t i = 0; i < sizeof(std_prefixes) / sizeof(std_prefixes[0]);
	     i++) {
		size_t n = strlen(std_prefixes[i].prefix);

		if (strncmp(name, std_prefixes[i].prefix, n) != 0)
			continue;
		if (std_prefixes[i].whole && name[n] != '\0')
			continue;
		*index = std_prefixes[i].index;
		*suffix_off = n;
		return 0;
	}
	return -1;
}

unsigned int erofs_xattr_filter_bit(uint8_t base_index, const char *name,
				    size_t len)
{
	return XXH32(name, len, EROFS_XATTR_FILTER_SEED + base_index) &
	       (EROFS_XATTR_FILTER_BITS - 1);
}

size_t erofs_prefix_table_encode(const struct erofs_long_prefix *p, size_t n,
				 uint8_t *out)
{
	size_t pos = 0;

	for (size_t i = 0; i < n; i++) {
		/* record: le16 size (1 + infix), base_index, infix; each
		 * record starts 4-byte aligned */
		uint16_t sz = (uint16_t)(1 + p[i].infix_len);

		if (out) {
			uint16_t le = htole16(sz);

			memcpy(out + pos, &le, 2);
			out[pos + 2] = p[i].base_index;
			memcpy(out + pos + 3, p[i].infix, p[i].infix_len);
		}
		pos = (pos + 2 + sz + 3) & ~(size_t)3;
	}
	return pos;
}
