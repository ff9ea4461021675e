// SPDX-License-Identifier: GPL-2.0-or-later
/* Directory contents ("." and ".." included) and symlink targets. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "erofs/erofs_fs.h"
#include "internal.h"

uint8_t erofs_file_type(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return EROFS_FT_REG_FILE;
	case S_IFDIR: return EROFS_FT_DIR;
	case S_IFCHR: return EROFS_FT_CHRDEV;
	case S_IFBLK: return EROFS_FT_BLKDEV;
	case S_IFIFO: return EROFS_FT_FIFO;
	case S_IFSOCK: return EROFS_FT_SOCK;
	case S_IFLNK: return EROFS_FT_SYMLINK;
	}
	return EROFS_FT_UNKNOWN;
}

static uint64_t nid_of(const struct erofs_node *n)
{
	return n->master ? n->master->nid : n->nid;
}

/* The sorted entries of directory D; the caller frees the array. */
static struct erofs_dirent_in *dir_entries(const struct erofs_node *d,
					   size_t *count)
{
	size_t n = d->nchildren + 2u;
	struct erofs_dirent_in *e = malloc(n * sizeof(*e));

	if (!e)
		return NULL;
	e[0] = (struct erofs_dirent_in){ ".", 1, EROFS_FT_DIR, d->nid };
	e[1] = (struct erofs_dirent_in){ "..", 2, EROFS_FT_DIR,
					 d->parent->nid };
	for (uint32_t i = 0; i < d->nchildren; i++) {
		const struct erofs_node *c = d->children[i];

		e[i + 2] = (struct erofs_dirent_in){
			c->name, c->name_len, erofs_file_type(c->mode),
			nid_of(c) };
	}
	erofs_dirents_sort(e, n);
	*count = n;
	return e;
}

uint64_t erofs_node_dir_size(const struct erofs_build *b,
			     const struct erofs_node *n)
{
	size_t count;
	struct erofs_dirent_in *e = dir_entries(n, &count);
	uint64_t size;

	if (!e)
		return UINT64_MAX;
	size = erofs_dir_size(e, count, b->blksz);
	free(e);
	return size;
}

/* Write the block part of CONTENT (SIZE bytes, buffer padded to whole
 * blocks) and the inline tail at its place after the inode. */
static int place_content(struct erofs_build *b, struct erofs_node *n,
			 uint8_t *content)
{
	int ret = 0;

	if (n->nblocks)
		ret = fsf_dev_pwrite(&b->dev, content, n->nblocks * b->blksz,
				     n->blkaddr * b->blksz);
	if (!ret)
		ret = erofs_place_tail(b, n, content + n->nblocks * b->blksz);
	return ret;
}

int erofs_write_dirs_and_symlinks(struct erofs_build *b)
{
	for (size_t i = 0; i < b->count; i++) {
		struct erofs_node *n = b->order[i];
		uint64_t padded = erofs_round_up(n->size, b->blksz);
		struct erofs_dirent_in *e = NULL;
		uint8_t *buf;
		size_t count;
		int ret;

		if (n->master || !(S_ISDIR(n->mode) || S_ISLNK(n->mode)))
			continue;
		buf = calloc(1, padded ? padded : 1);
		if (!buf)
			return -ENOMEM;
		if (S_ISDIR(n->mode)) {
			e = dir_entries(n, &count);
			if (!e) {
				free(buf);
				return -ENOMEM;
			}
			erofs_dir_encode(e, count, b->blksz, buf);
			free(e);
		} else {
			memcpy(buf, n->symlink, n->size);
		}
		ret = place_content(b, n, buf);
		free(buf);
		if (ret)
			return ret;
	}
	return 0;
}
