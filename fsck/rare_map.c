// SPDX-License-Identifier: GPL-2.0-or-later
/* fsck.ntfs: the maps of records seldom marked (a memory helper of the
 * passes, not on-disk code). */
#include "config.h"

#include <string.h>
#include <sys/mman.h>

#include "ntfs_check.h"

/* Maps of one bit per record that are seldom set are mapped (not taken
 * from the heap): a page of one counts in memory only once a bit in it
 * is set, where calloc() may clear (and so touch) the whole map.  The
 * mapping's length is kept in front of the map, and its last byte
 * before the map says whether a bit was ever set (rare_set): a map
 * never marked is not read (some kernels give a page of memory to a
 * page that is only read, too). */
#define RARE_HEAD NTFS_RARE_HEAD

uint8_t *ntfs_rare_map(uint64_t bits)
{
	size_t len = (size_t)(bits / 8 + 1) + RARE_HEAD;
	uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memcpy(p, &len, sizeof(len));
	return p + RARE_HEAD;
}

void ntfs_rare_map_free(uint8_t *map)
{
	size_t len;

	if (!map)
		return;
	memcpy(&len, map - RARE_HEAD, sizeof(len));
	munmap(map - RARE_HEAD, len);
}
