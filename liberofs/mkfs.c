// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * erofs_mkfs(): the passes in order.  Nothing is written before the whole
 * tree has been read and laid out, the superblock is written last, and a
 * regular-file image is only renamed into place once it is complete.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uuid.h>

#include "erofs/erofs_fs.h"
#include "internal.h"

void erofs_mkfs_opts_init(struct erofs_mkfs_opts *o)
{
	long page = sysconf(_SC_PAGESIZE);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int bits = 12;

	memset(o, 0, sizeof(*o));
	while (page > 0 && (1L << bits) < page && bits < 16)
		bits++;
	o->blkszbits = bits;
	o->build_time = (int64_t)time(NULL);
	o->force_uid = o->force_gid = -1;
	o->xattr_tolerance = 2;
	o->workers = cpus > 0 ? (unsigned int)cpus : 1;
}

static void free_xattr_item(struct erofs_xattr *x)
{
	free(x->name);
	free(x->value);
	free(x);
}

/* Depth-first; the depth is bounded by PATH_MAX, as in the scan. */
static void free_subtree(struct erofs_node *n, bool own_xattrs)
{
	for (uint32_t i = 0; i < n->nchildren; i++)
		free_subtree(n->children[i], own_xattrs);
	if (own_xattrs)
		for (uint16_t x = 0; x < n->nxattrs; x++)
			free_xattr_item(n->xattrs[x]);
	free(n->name);
	free(n->children);
	free(n->symlink);
	free(n->xattrs);
	free(n->tail);
	free(n);
}

void erofs_tree_free(struct erofs_build *b)
{
	/* before interning every node owns its xattr items; after it, the
	 * distinct items in b->xattrs are the only owners */
	if (b->root)
		free_subtree(b->root, !b->xattrs);
	for (size_t i = 0; i < b->nxattrs; i++)
		free_xattr_item(b->xattrs[i]);
	free(b->xattrs);
	free(b->order);
	free(b->prefixes);
}

/* Block devices keep old bytes: zero the metadata range before filling it
 * so that the gaps between inodes read as zero, as in an image file. */
static int zero_range(struct erofs_build *b, uint64_t from, uint64_t to)
{
	static const size_t chunk = 1u << 20;
	uint8_t *z;
	int ret = 0;

	if (!b->dev.is_blkdev || from >= to)
		return 0;
	z = calloc(1, chunk);
	if (!z)
		return -ENOMEM;
	while (!ret && from < to) {
		size_t n = to - from < chunk ? (size_t)(to - from) : chunk;

		ret = fsf_dev_pwrite(&b->dev, z, n, from);
		from += n;
	}
	free(z);
	return ret;
}

static int write_metadata(struct erofs_build *b)
{
	uint8_t *buf = malloc(64 + 12 + 4u * 65535u + b->blksz);
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < b->count && !ret; i++) {
		struct erofs_node *n = b->order[i];
		size_t len;

		if (n->master)
			continue;
		erofs_inode_encode(b, n, buf);
		len = (n->extended ? 64u : 32u) + n->xattr_isize +
		      (n->tail ? n->inline_size : 0);
		ret = fsf_dev_pwrite(&b->dev, buf, len,
				     n->nid * EROFS_SLOT_SIZE);
	}
	free(buf);
	if (ret)
		return ret;

	if (b->nprefixes) {
		size_t len = erofs_prefix_table_encode(b->prefixes,
						       b->nprefixes, NULL);
		uint8_t *t = calloc(1, len);

		if (!t)
			return -ENOMEM;
		erofs_prefix_table_encode(b->prefixes, b->nprefixes, t);
		ret = fsf_dev_pwrite(&b->dev, t, len, b->prefix_start);
		free(t);
		if (ret)
			return ret;
	}
	if (b->shared_size) {
		uint64_t len = erofs_round_up(b->shared_size, b->blksz);
		uint8_t *s = calloc(1, len);

		if (!s)
			return -ENOMEM;
		erofs_shared_xattrs_encode(b, s);
		ret = fsf_dev_pwrite(&b->dev, s, len,
				     b->xattr_blkaddr * b->blksz);
		free(s);
	}
	return ret;
}

/* The superblock goes last: read its block back (inodes live there too),
 * encode it and checksum the lot. */
static int write_superblock(struct erofs_build *b)
{
	unsigned int len = b->blksz > EROFS_SUPER_OFFSET ?
			   b->blksz - EROFS_SUPER_OFFSET : b->blksz;
	uint8_t *blk = calloc(1, len);
	int ret;

	if (!blk)
		return -ENOMEM;
	ret = fsf_dev_pread(&b->dev, blk, len, EROFS_SUPER_OFFSET);
	if (!ret) {
		erofs_super_encode(b, blk);
		erofs_sb_set_checksum(blk, b->blksz);
		ret = fsf_dev_pwrite(&b->dev, blk, 128, EROFS_SUPER_OFFSET);
	}
	free(blk);
	return ret;
}

static int check_opts(const struct erofs_mkfs_opts *o, const struct fsf_log *log)
{
	if (o->blkszbits < 9 || o->blkszbits > 16) {
		fsf_err(log, "invalid block size %u: must be a power of two from 512 to 65536",
			1u << (o->blkszbits & 31));
		return -EINVAL;
	}
	if (strlen(o->label) > 16) {
		fsf_err(log, "volume label '%s' is longer than 16 bytes", o->label);
		return -EINVAL;
	}
	if (o->build_time < 0) {
		fsf_err(log, "build time %lld is before 1970", (long long)o->build_time);
		return -EINVAL;
	}
	return 0;
}

int erofs_mkfs(const struct erofs_mkfs_opts *o, const struct fsf_log *log,
	       struct erofs_mkfs_stats *stats)
{
	struct erofs_build b = { .opts = o, .log = log, .src_fd = -1 };
	unsigned int flags = FSF_DEV_REPLACE;
	int ret = check_opts(o, log);

	if (ret)
		return ret;
	b.blksz = 1u << o->blkszbits;
	b.epoch = o->build_time;
	b.dev.fd = -1;
	if (o->uuid_mode == EROFS_UUID_GIVEN)
		memcpy(b.uuid, o->uuid, 16);
	else
		uuid_generate(b.uuid);

	b.src_fd = open(o->source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (b.src_fd < 0) {
		ret = -errno;
		fsf_err(log, "cannot open source directory %s: %s", o->source,
			strerror(errno));
		return ret;
	}
	if (o->force)
		flags |= FSF_DEV_FORCE;
	if (o->dry_run)
		flags |= FSF_DEV_DRY_RUN;
	ret = fsf_dev_open_output(&b.dev, o->image, flags, log);
	if (ret)
		goto out_src;

	ret = erofs_scan(&b);
	if (!ret)
		ret = erofs_xattrs_prepare(&b);
	if (!ret)
		ret = erofs_layout(&b);
	if (ret || o->dry_run)
		goto out;

	ret = fsf_dev_set_size(&b.dev, b.total_blocks * b.blksz);
	if (!ret)
		ret = zero_range(&b, 0, erofs_round_up(b.meta_end, b.blksz));
	if (!ret)
		ret = erofs_write_file_data(&b);
	if (!ret)
		ret = erofs_write_dirs_and_symlinks(&b);
	if (!ret)
		ret = write_metadata(&b);
	if (!ret)
		ret = write_superblock(&b);
	if (!ret)
		ret = fsf_dev_commit(&b.dev);
out:
	if (!ret && stats) {
		memset(stats, 0, sizeof(*stats));
		stats->blocks = b.total_blocks;
		stats->inodes = b.ninodes;
		stats->meta_bytes = b.meta_end;
		stats->data_bytes = (b.total_blocks - b.data_blkaddr) * b.blksz;
		for (size_t i = 0; i < b.count; i++)
			stats->fingerprints += b.order[i]->has_digest;
		memcpy(stats->uuid, b.uuid, 16);
	}
	fsf_dev_close(&b.dev);
	erofs_tree_free(&b);
out_src:
	close(b.src_fd);
	return ret;
}
