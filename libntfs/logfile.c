// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * $LogFile: sized by the volume like Windows does, and written as an empty
 * journal (every byte 0xFF): no restart area, nothing to replay, so every
 * driver treats the volume as cleanly unmounted and Windows initialises the
 * journal on first mount.
 */
#include "config.h"

#include "internal.h"

uint64_t ntfs_logfile_size(uint64_t volume_bytes, uint32_t cluster_size)
{
	uint64_t size;

	if (volume_bytes < (2ULL << 20))
		size = 256ULL << 10;
	else if (volume_bytes < 4000000ULL)
		size = 512ULL << 10;
	else if (volume_bytes <= (200ULL << 20))
		size = 2ULL << 20;
	else if (volume_bytes >= (12ULL << 30))
		size = 64ULL << 20;
	else
		size = volume_bytes / 100;
	return ntfs_align(size, cluster_size);
}
