// SPDX-License-Identifier: GPL-2.0-or-later
/* Undo files: every block saved before its first overwrite. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "undo_format.h"

#define BATCH 256u		/* records per write to the undo file */
#define AHEAD_MAX 1024u		/* blocks saved ahead of a sequential stream */

struct undo_ent {
	uint64_t blk;
	uint64_t off;		/* of its record in the undo file */
	uint32_t len;
};

struct fsf_undo {
	int fd;
	char *path;
	uint32_t bs;
	uint64_t size_before;
	uint64_t tail;		/* where the next record goes */
	struct undo_ent *ents;
	size_t n, cap;
	uint64_t *set;		/* open addressing, block + 1; 0 is empty */
	size_t set_cap;
	uint64_t seq_end;	/* end of the previous write */
	uint32_t ahead;		/* blocks to save ahead of a stream */
	bool finished, failed;
	char tool[32];
};

/* ---- the set of saved blocks ---------------------------------------- */
static size_t slot(uint64_t key, size_t cap)
{
	key *= 0x9e3779b97f4a7c15ull;
	return (size_t)(key >> 32) & (cap - 1);
}

static bool set_has(const struct fsf_undo *u, uint64_t blk)
{
	if (!u->set_cap)
		return false;
	for (size_t i = slot(blk + 1, u->set_cap);; i = (i + 1) & (u->set_cap - 1)) {
		if (u->set[i] == blk + 1)
			return true;
		if (!u->set[i])
			return false;
	}
}

static int set_add(struct fsf_undo *u, uint64_t blk)
{
	if ((u->n + 1) * 2 > u->set_cap) {
		size_t cap = u->set_cap ? u->set_cap * 2 : 1024;
		uint64_t *s = calloc(cap, sizeof(*s));

		if (!s)
			return -ENOMEM;
		for (size_t i = 0; i < u->set_cap; i++) {
			size_t j;

			if (!u->set[i])
				continue;
			for (j = slot(u->set[i], cap); s[j]; j = (j + 1) & (cap - 1))
				;
			s[j] = u->set[i];
		}
		free(u->set);
		u->set = s;
		u->set_cap = cap;
	}
	size_t i;

	for (i = slot(blk + 1, u->set_cap); u->set[i]; i = (i + 1) & (u->set_cap - 1))
		;
	u->set[i] = blk + 1;
	return 0;
}

/* ---- writing --------------------------------------------------------- */
static void header_encode(uint8_t *h, uint32_t bs, uint64_t before,
			  uint64_t after, uint64_t n, uint64_t index_off,
			  uint32_t state, uint32_t undo_sample_crc, uint32_t index_crc,
			  const char *tool)
{
	memset(h, 0, HDR_BYTES);
	memcpy(h, MAGIC, 8);
	undo_put32(h + 8, UNDO_VERSION);
	undo_put32(h + 12, bs);
	undo_put64(h + 16, before);
	undo_put64(h + 24, after);
	undo_put64(h + 32, n);
	undo_put64(h + 40, index_off);
	undo_put32(h + 48, state);
	undo_put32(h + 52, undo_sample_crc);
	undo_put32(h + 56, index_crc);
	undo_put32(h + 60, NSAMPLE);
	strncpy((char *)h + 64, tool, 31);
	undo_put64(h + 96, (uint64_t)time(NULL));
	undo_put32(h + 124, undo_crc32c(0, h, 124));
}

/* Bytes of block BLK that exist on a device of SIZE bytes. */
static uint64_t current_size(const struct fsf_dev *dev)
{
	struct stat st;

	if (dev->is_blkdev || fstat(dev->fd, &st) != 0)
		return dev->size;
	return (uint64_t)st.st_size;
}

/* Does the filesystem holding the undo file (ST_DEV) live on the device? */
static bool on_device(const struct fsf_dev *dev, dev_t fs_dev)
{
	struct stat dst;
	char p[128], backing[4096];
	FILE *f;
	bool same = false;

	if (fstat(dev->fd, &dst) != 0)
		return false;
	if (S_ISBLK(dst.st_mode))
		return dst.st_rdev == fs_dev;
	/* an image: is the undo file's filesystem a loop device over it? */
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/loop/backing_file",
		 major(fs_dev), minor(fs_dev));
	f = fopen(p, "re");
	if (!f)
		return false;
	if (fgets(backing, sizeof(backing), f)) {
		struct stat bst;

		backing[strcspn(backing, "\n")] = '\0';
		same = stat(backing, &bst) == 0 && bst.st_dev == dst.st_dev &&
		       bst.st_ino == dst.st_ino;
	}
	fclose(f);
	return same;
}

static int sync_dir_of(const char *path)
{
	char *copy = strdup(path);
	int fd, ret = 0;

	if (!copy)
		return -ENOMEM;
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		if (fsync(fd) != 0 && errno != EINVAL)
			ret = -errno;
		close(fd);
	}
	free(copy);
	return ret;
}

int fsf_undo_start(struct fsf_dev *dev, const char *path, const char *tool)
{
	struct fsf_undo *u;
	struct stat st, dst;
	uint8_t h[HDR_BYTES];
	bool existed;
	int fd, ret;

	if (dev->dry_run || dev->fd < 0 || fstat(dev->fd, &dst) != 0)
		return -EROFS;
	if (dev->tmp_path) {
		fsf_err(dev->log, "undo file %s: %s is written as a new file, there is nothing to undo",
			path, dev->path);
		return -EINVAL;
	}
	existed = stat(path, &st) == 0;
	if (existed && (!S_ISREG(st.st_mode) ||
			(st.st_dev == dst.st_dev && st.st_ino == dst.st_ino))) {
		fsf_err(dev->log, "undo file %s %s", path, S_ISREG(st.st_mode) ?
			"is the device being repaired" : "is not a regular file");
		return -EINVAL;
	}
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
		fsf_err(dev->log, "cannot create undo file %s: %s", path,
			strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (st.st_dev == dst.st_dev && st.st_ino == dst.st_ino) ||
	    on_device(dev, st.st_dev)) {
		fsf_err(dev->log, "undo file %s is on %s itself; put it on another device",
			path, dev->path);
		ret = -EINVAL;
		goto fail;
	}
	u = calloc(1, sizeof(*u));
	if (!u || !(u->path = strdup(path))) {
		free(u);
		ret = -ENOMEM;
		goto fail;
	}
	u->fd = fd;
	u->bs = FSF_UNDO_BLOCK;
	u->size_before = current_size(dev);
	u->tail = u->bs;
	snprintf(u->tool, sizeof(u->tool), "%s", tool ? tool : "");
	header_encode(h, u->bs, u->size_before, u->size_before, 0, 0, 0, 0, 0,
		      u->tool);
	/* an empty, unfinished undo file is on disk before any write; its
	 * header block is whole, since the records (and, for a run that
	 * wrote nothing, the index) start after it */
	ret = ftruncate(fd, 0) != 0 || ftruncate(fd, u->bs) != 0 ? -errno : 0;
	if (!ret)
		ret = undo_pwrite_all(fd, h, sizeof(h), 0);
	if (!ret && fsync(fd) != 0)
		ret = -errno;
	if (!ret)
		ret = sync_dir_of(path);
	if (ret) {
		fsf_err(dev->log, "cannot write undo file %s: %s", path,
			strerror(-ret));
		free(u->path);
		free(u);
		goto fail;
	}
	dev->undo = u;
	return 0;
fail:
	close(fd);
	if (!existed)
		unlink(path);
	return ret;
}

static int undo_failed(struct fsf_dev *dev, const char *what, int ret)
{
	struct fsf_undo *u = dev->undo;

	u->failed = true;
	fsf_err(dev->log, "undo file %s: %s: %s; not writing to %s", u->path,
		what, strerror(-ret), dev->path);
	return ret;
}

/* Save blocks [B, B + N) that are not saved yet, at most BATCH, into BUF. */
static int save_batch(struct fsf_dev *dev, uint64_t b, uint64_t n,
		      uint8_t *buf)
{
	struct fsf_undo *u = dev->undo;
	size_t used = 0;
	uint64_t start = u->tail;
	int ret;

	for (uint64_t blk = b; blk < b + n; blk++) {
		uint32_t l = undo_blk_len(blk, u->bs, u->size_before);
		uint8_t *r = buf + used;

		if (!l || set_has(u, blk))
			continue;
		ret = fsf_dev_pread(dev, r + REC_HDR, l, blk * u->bs);
		if (ret)
			return undo_failed(dev, "cannot read the old block", ret);
		memset(r, 0, REC_HDR);
		undo_put32(r, REC_MAGIC);
		undo_put32(r + 4, l);
		undo_put64(r + 8, blk);
		undo_put32(r + 16, undo_crc32c(0, r + REC_HDR, l));
		undo_put32(r + 28, undo_crc32c(0, r, 28));
		if (u->n == u->cap) {
			size_t cap = u->cap ? u->cap * 2 : 256;
			struct undo_ent *e = realloc(u->ents, cap * sizeof(*e));

			if (!e)
				return undo_failed(dev, "out of memory", -ENOMEM);
			u->ents = e;
			u->cap = cap;
		}
		if ((ret = set_add(u, blk)))
			return undo_failed(dev, "out of memory", ret);
		u->ents[u->n++] = (struct undo_ent){ blk, start + used, l };
		used += REC_HDR + l;
	}
	if (used && (ret = undo_pwrite_all(u->fd, buf, used, start)))
		return undo_failed(dev, "write failed", ret);
	u->tail += used;
	return used ? 1 : 0;
}

int fsf_undo_save(struct fsf_dev *dev, uint64_t off, uint64_t len)
{
	struct fsf_undo *u = dev->undo;
	uint64_t first, last, nb;
	uint8_t *buf;
	bool wrote = false;
	int ret = 0;

	if (!u)
		return 0;
	if (u->failed || u->finished)
		return -EIO;
	/* a stream of writes, each starting where the last ended, has the
	 * blocks ahead of it saved too: fewer syncs for the same data */
	u->ahead = off == u->seq_end && off ? (u->ahead ? u->ahead * 2 : 16) : 0;
	if (u->ahead > AHEAD_MAX)
		u->ahead = AHEAD_MAX;
	u->seq_end = off + len;
	if (!len || off >= u->size_before)
		return 0;	/* past the old end: undone by truncation */
	nb = (u->size_before + u->bs - 1) / u->bs;
	first = off / u->bs;
	last = (off + len - 1) / u->bs;
	if (last >= nb)
		last = nb - 1;
	if (u->ahead && last + 1 < nb)
		last = last + u->ahead < nb ? last + u->ahead : nb - 1;
	/* nothing new to save: no allocation, no sync */
	for (uint64_t b = first; b <= last && !wrote; b++)
		wrote = !set_has(u, b);
	if (!wrote)
		return 0;
	buf = malloc((size_t)BATCH * (REC_HDR + u->bs));
	if (!buf)
		return undo_failed(dev, "out of memory", -ENOMEM);
	for (uint64_t b = first; b <= last; b += BATCH) {
		uint64_t n = last - b + 1 < BATCH ? last - b + 1 : BATCH;

		ret = save_batch(dev, b, n, buf);
		if (ret < 0)
			break;
	}
	free(buf);
	if (ret < 0)
		return ret;
	/* the old content is durable before the new one is written */
	if (fdatasync(u->fd) != 0)
		return undo_failed(dev, "sync failed", -errno);
	return 0;
}

int fsf_undo_finish(struct fsf_dev *dev)
{
	struct fsf_undo *u = dev->undo;
	uint8_t h[HDR_BYTES], *idx = NULL, *buf = NULL;
	uint32_t scrc = 0;
	uint64_t size;
	int ret = -ENOMEM;

	if (!u || u->finished)
		return 0;
	if (u->failed)
		return -EIO;
	size = current_size(dev);
	idx = malloc(u->n * IDX_ENTRY + 1);
	buf = malloc(u->bs);
	if (!idx || !buf)
		goto out;
	for (size_t i = 0; i < u->n; i++) {
		const struct undo_ent *e = &u->ents[i];
		uint32_t l = undo_blk_len(e->blk, u->bs, size);
		uint8_t *p = idx + i * IDX_ENTRY;

		if (l > e->len)
			l = e->len;
		ret = fsf_dev_pread(dev, buf, l, e->blk * u->bs);
		if (ret)
			goto out;
		undo_put64(p, e->blk);
		undo_put64(p + 8, e->off);
		undo_put32(p + 16, e->len);
		undo_put32(p + 20, undo_crc32c(0, buf, l));
	}
	ret = undo_sample_crc(dev, u->bs, size, buf, &scrc);
	if (ret)
		goto out;
	header_encode(h, u->bs, u->size_before, size, u->n, u->tail, STATE_FINISHED,
		      scrc, undo_crc32c(0, idx, u->n * IDX_ENTRY), u->tool);
	/* the index is durable before the header points to it */
	if ((ret = undo_pwrite_all(u->fd, idx, u->n * IDX_ENTRY, u->tail)) ||
	    (fdatasync(u->fd) != 0 && (ret = -errno)) ||
	    (ret = undo_pwrite_all(u->fd, h, sizeof(h), 0)) ||
	    (fsync(u->fd) != 0 && (ret = -errno)))
		goto out;
	u->finished = true;
out:
	if (ret)
		undo_failed(dev, "cannot record the state after the run", ret);
	free(idx);
	free(buf);
	return ret;
}

uint64_t fsf_undo_blocks(const struct fsf_dev *dev)
{
	return dev->undo ? dev->undo->n : 0;
}

void fsf_undo_free(struct fsf_dev *dev)
{
	struct fsf_undo *u = dev->undo;

	if (!u)
		return;
	close(u->fd);
	free(u->path);
	free(u->ents);
	free(u->set);
	free(u);
	dev->undo = NULL;
}
