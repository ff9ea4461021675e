// SPDX-License-Identifier: GPL-2.0-or-later
/* The NTFS boot sector ($Boot's first sector, copied to the last sector). */
#include "config.h"

#include <endian.h>
#include <string.h>

#include "ntfs/format.h"

static int log2u(uint32_t v)
{
	int n = 0;

	while (v > 1) {
		v >>= 1;
		n++;
	}
	return n;
}

int8_t ntfs_clusters_per(uint32_t bytes, uint32_t cluster_size)
{
	if (bytes >= cluster_size)
		return (int8_t)(bytes / cluster_size);
	return (int8_t)-log2u(bytes);
}

/* a boot stub that halts: the volume is not bootable */
static const uint8_t stub[] = { 0xfa, 0xf4, 0xeb, 0xfd };

void ntfs_boot_build(struct ntfs_boot_sector *bs,
		     const struct ntfs_geometry *g, int64_t mft_lcn,
		     int64_t mftmirr_lcn, uint64_t serial, uint32_t hidden,
		     uint16_t heads, uint16_t spt)
{
	uint32_t spc = g->cluster_size / g->sector_size;

	memset(bs, 0, sizeof(*bs));
	bs->jump[0] = 0xeb;
	bs->jump[1] = 0x52;
	bs->jump[2] = 0x90;
	memcpy(bs->oem_id, "NTFS    ", 8);
	bs->bytes_per_sector = htole16((uint16_t)g->sector_size);
	/* above 128 sectors per cluster the field holds 256 - log2 */
	bs->sectors_per_cluster = spc <= 128 ? (uint8_t)spc :
				  (uint8_t)(256 - log2u(spc));
	bs->media_type = 0xf8;
	bs->sectors_per_track = htole16(spt);
	bs->heads = htole16(heads);
	bs->hidden_sectors = htole32(hidden);
	bs->drive_number = 0x80;
	bs->ext_boot_signature = 0x80;
	bs->number_of_sectors = (int64_t)htole64(g->volume_sectors - 1);
	bs->mft_lcn = (int64_t)htole64((uint64_t)mft_lcn);
	bs->mftmirr_lcn = (int64_t)htole64((uint64_t)mftmirr_lcn);
	bs->clusters_per_mft_record = ntfs_clusters_per(g->mft_record_size,
							g->cluster_size);
	bs->clusters_per_index_record = ntfs_clusters_per(g->index_block_size,
							  g->cluster_size);
	bs->volume_serial = htole64(serial);
	memcpy(bs->bootstrap, stub, sizeof(stub));
	bs->end_marker = htole16(0xaa55);
}
