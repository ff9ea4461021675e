// SPDX-License-Identifier: GPL-2.0-or-later
/* Undo file format helpers: CRC-32C, little-endian fields, whole I/O. */
#include "config.h"

#include <errno.h>
#include <unistd.h>

#include "undo_format.h"

/* ---- CRC-32C (Castagnoli), reflected, as in iSCSI and ext4 ---------- */
static uint32_t crc_table[256];

uint32_t undo_crc32c(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	if (!crc_table[1])
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;

			for (int k = 0; k < 8; k++)
				c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
			crc_table[i] = c;
		}
	crc = ~crc;
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

void undo_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

void undo_put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

uint32_t undo_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

uint64_t undo_get64(const uint8_t *p)
{
	return (uint64_t)undo_get32(p) | (uint64_t)undo_get32(p + 4) << 32;
}

int undo_pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const char *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

int undo_pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	char *p = buf;

	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

uint32_t undo_blk_len(uint64_t blk, uint32_t bs, uint64_t size)
{
	uint64_t at = blk * bs;

	if (at >= size)
		return 0;
	return size - at < bs ? (uint32_t)(size - at) : bs;
}

/* CRC of NSAMPLE blocks spread over the device (first and last among
 * them): who the device is, beyond the blocks the run changed. */
int undo_sample_crc(struct fsf_dev *dev, uint32_t bs, uint64_t size,
		    uint8_t *buf, uint32_t *crc)
{
	uint64_t nb = (size + bs - 1) / bs;

	*crc = 0;
	for (uint64_t i = 0; nb && i < NSAMPLE; i++) {
		uint64_t blk = NSAMPLE > 1 ? i * (nb - 1) / (NSAMPLE - 1) : 0;
		uint32_t l = undo_blk_len(blk, bs, size);
		int ret = fsf_dev_pread(dev, buf, l, blk * bs);

		if (ret)
			return ret;
		*crc = undo_crc32c(*crc, buf, l);
	}
	return 0;
}
