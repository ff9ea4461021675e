// SPDX-License-Identifier: GPL-2.0-or-later
/* Directory blocks: sorted 12-byte dirents at the front, names behind them,
 * no entry or name crossing a block boundary. */
#include "config.h"

#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/erofs_fs.h"
#include "erofs/format.h"

static int cmp_dirent(const void *a, const void *b)
{
	const struct erofs_dirent_in *x = a, *y = b;
	size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
	int c = memcmp(x->name, y->name, n);

	if (c)
		return c;
	return (int)x->name_len - (int)y->name_len;
}

void erofs_dirents_sort(struct erofs_dirent_in *e, size_t n)
{
	qsort(e, n, sizeof(*e), cmp_dirent);
}

/* How many entries from E[i] fit in one block; *used gets the bytes used. */
static size_t block_fill(const struct erofs_dirent_in *e, size_t n, size_t i,
			 unsigned int blksz, unsigned int *used)
{
	size_t k = 0, bytes = 0;

	while (i + k < n) {
		size_t need = bytes + sizeof(struct erofs_dirent) +
			      e[i + k].name_len;

		if (need > blksz)
			break;
		bytes = need;
		k++;
	}
	*used = (unsigned int)bytes;
	return k;
}

uint64_t erofs_dir_size(const struct erofs_dirent_in *e, size_t n,
			unsigned int blksz)
{
	uint64_t size = 0;
	size_t i = 0;

	while (i < n) {
		unsigned int used;
		size_t k = block_fill(e, n, i, blksz, &used);

		i += k;
		size += i < n ? blksz : used;
	}
	return size;
}

void erofs_dir_encode(const struct erofs_dirent_in *e, size_t n,
		      unsigned int blksz, uint8_t *out)
{
	size_t i = 0;

	while (i < n) {
		unsigned int used;
		size_t k = block_fill(e, n, i, blksz, &used);
		size_t nameoff = k * sizeof(struct erofs_dirent);

		for (size_t j = 0; j < k; j++) {
			struct erofs_dirent d = {
				.nid = htole64(e[i + j].nid),
				.nameoff = htole16((uint16_t)nameoff),
				.file_type = e[i + j].file_type,
			};

			memcpy(out + j * sizeof(d), &d, sizeof(d));
			memcpy(out + nameoff, e[i + j].name, e[i + j].name_len);
			nameoff += e[i + j].name_len;
		}
		i += k;
		out += blksz;
	}
}
