// SPDX-License-Identifier: GPL-2.0-or-later
/* Undo files: the saved blocks put back, once the device is shown to be
 * the one the run left. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "undo_format.h"

struct apply_ent {
	uint64_t blk, off;
	uint32_t len, after_crc;
};

/* Read and check the record at OFF (for block BLK of LEN, or any when
 * BLK is UINT64_MAX): its data into DATA.  0, or -EBADMSG. */
static int read_record(int fd, uint64_t fsize, uint64_t off, uint32_t bs,
		       struct apply_ent *e, uint8_t *data)
{
	uint8_t r[REC_HDR];

	if (off > fsize || fsize - off < REC_HDR ||
	    undo_pread_all(fd, r, REC_HDR, off) || undo_get32(r) != REC_MAGIC ||
	    undo_get32(r + 28) != undo_crc32c(0, r, 28))
		return -EBADMSG;
	if (e->blk != UINT64_MAX && (undo_get64(r + 8) != e->blk || undo_get32(r + 4) != e->len))
		return -EBADMSG;
	e->blk = undo_get64(r + 8);
	e->len = undo_get32(r + 4);
	if (!e->len || e->len > bs || fsize - off - REC_HDR < e->len ||
	    undo_pread_all(fd, data, e->len, off + REC_HDR) ||
	    undo_crc32c(0, data, e->len) != undo_get32(r + 16))
		return -EBADMSG;
	e->off = off;
	return 0;
}

int fsf_undo_apply(const char *path, const char *device, unsigned flags,
		   const struct fsf_log *log)
{
	bool force = flags & FSF_UNDO_FORCE, dry = flags & FSF_UNDO_DRY_RUN;
	struct fsf_dev dev = { .fd = -1 };
	struct apply_ent *ents = NULL;
	uint8_t h[HDR_BYTES], *buf = NULL, *idx = NULL;
	struct stat ust, dst;
	uint64_t before, after, n = 0, index_off, fsize, bad = 0, differ = 0;
	uint32_t bs, scrc;
	bool finished;
	int fd, ret = -EINVAL;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		fsf_err(log, "cannot open undo file %s: %s", path, strerror(-ret));
		return ret;
	}
	if (fstat(fd, &ust) != 0 || !S_ISREG(ust.st_mode)) {
		fsf_err(log, "undo file %s is not a regular file", path);
		goto out;
	}
	if (stat(device, &dst) == 0 && dst.st_dev == ust.st_dev &&
	    dst.st_ino == ust.st_ino) {
		fsf_err(log, "undo file %s is the device %s itself", path, device);
		goto out;
	}
	fsize = (uint64_t)ust.st_size;
	if (undo_pread_all(fd, h, HDR_BYTES, 0) || memcmp(h, MAGIC, 8) != 0) {
		fsf_err(log, "%s is not an undo file", path);
		goto out;
	}
	bs = undo_get32(h + 12);
	if (undo_get32(h + 124) != undo_crc32c(0, h, 124) || undo_get32(h + 8) != UNDO_VERSION ||
	    bs < 512 || bs > (1u << 20) || (bs & (bs - 1)) ||
	    undo_get32(h + 60) != NSAMPLE) {
		fsf_err(log, "undo file %s: header is damaged or of an unknown version",
			path);
		goto out;
	}
	before = undo_get64(h + 16);
	after = undo_get64(h + 24);
	index_off = undo_get64(h + 40);
	scrc = undo_get32(h + 52);
	finished = undo_get32(h + 48) & STATE_FINISHED;
	if (!finished && !force) {
		fsf_err(log, "undo file %s is unfinished (the run that wrote it stopped); --force restores the blocks it saved",
			path);
		goto out;
	}
	if (fsf_dev_open_check(&dev, device, dry ? FSF_DEV_DRY_RUN : 0, log)) {
		ret = -EBUSY;
		goto out;
	}
	if (finished && dev.size != after) {
		fsf_err(log, "undo file %s is for a device of %llu bytes; %s has %llu%s",
			path, (unsigned long long)after, device,
			(unsigned long long)dev.size, force ? "" : "; not restoring");
		if (!force)
			goto out;
	}
	buf = malloc(bs);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	if (finished) {
		n = undo_get64(h + 32);
		if (index_off < bs || index_off > fsize ||
		    n > (fsize - index_off) / IDX_ENTRY ||
		    n > (index_off - bs) / REC_HDR ||
		    !(idx = malloc(n * IDX_ENTRY + 1)) ||
		    undo_pread_all(fd, idx, n * IDX_ENTRY, index_off) ||
		    undo_crc32c(0, idx, n * IDX_ENTRY) != undo_get32(h + 56)) {
			fsf_err(log, "undo file %s is truncated or its index is damaged%s",
				path, force ? "; restoring the records it holds (--force)" : "");
			if (!force)
				goto out;
			finished = false;	/* as if the run had stopped */
			n = 0;
		}
	}
	if (finished) {
		ents = calloc(n + 1, sizeof(*ents));
		if (!ents) {
			ret = -ENOMEM;
			goto out;
		}
		for (uint64_t i = 0; i < n; i++) {
			const uint8_t *p = idx + i * IDX_ENTRY;
			struct apply_ent *e = &ents[i];

			e->blk = undo_get64(p);
			e->len = undo_get32(p + 16);
			e->after_crc = undo_get32(p + 20);
			if (e->blk >= (before + bs - 1) / bs ||
			    read_record(fd, index_off, undo_get64(p + 8), bs, e, buf)) {
				fsf_err(log, "undo file %s: saved block %llu is damaged",
					path, (unsigned long long)e->blk);
				if (!force)
					goto out;
				e->len = 0;	/* never written back */
				bad++;
			}
		}
	} else {
		/* unfinished: the records up to the first damaged one */
		uint64_t off = bs;

		while (off < fsize) {
			struct apply_ent e = { .blk = UINT64_MAX };
			struct apply_ent *m;

			if (read_record(fd, fsize, off, bs, &e, buf) ||
			    e.blk >= (before + bs - 1) / bs)
				break;
			if ((n & (n - 1)) == 0) {	/* 0, 1, 2, 4...: double */
				m = realloc(ents, (n ? 2 * n : 1) * sizeof(*ents));
				if (!m) {
					ret = -ENOMEM;
					goto out;
				}
				ents = m;
			}
			ents[n++] = e;
			off += REC_HDR + e.len;
		}
		fsf_warn(log, "undo file %s: %llu saved blocks found; the device cannot be verified",
			 path, (unsigned long long)n);
	}
	/* the device must be the one the run left: every block it changed
	 * still holds what it wrote, and the sample agrees */
	if (finished) {
		uint32_t now;

		for (uint64_t i = 0; i < n; i++) {
			uint32_t l = undo_blk_len(ents[i].blk, bs, dev.size);

			if (l > ents[i].len)
				l = ents[i].len;
			if (!ents[i].len)
				continue;
			if (fsf_dev_pread(&dev, buf, l, ents[i].blk * bs) ||
			    undo_crc32c(0, buf, l) != ents[i].after_crc)
				differ++;
		}
		if (undo_sample_crc(&dev, bs, dev.size, buf, &now) || now != scrc)
			differ++;
		if (differ) {
			fsf_err(log, "%s does not match undo file %s (%llu of %llu checks differ: another device, or changed since the run)%s",
				device, path, (unsigned long long)differ,
				(unsigned long long)n + 1,
				force ? "; restoring anyway (--force)" : "; nothing written");
			if (!force)
				goto out;
		}
	}
	if (dry) {
		fsf_out(log, "%s: undo file %s matches; %llu blocks would be restored",
			device, path, (unsigned long long)(n - bad));
		ret = 0;
		goto out;
	}
	if (!dev.is_blkdev && before != dev.size) {
		/* the run changed the image's size: put it back first */
		if (ftruncate(dev.fd, (off_t)before) != 0) {
			ret = -errno;
			fsf_err(log, "cannot resize %s: %s", device, strerror(-ret));
			goto out;
		}
		dev.size = before;
	}
	for (uint64_t i = 0; i < n; i++) {
		struct apply_ent *e = &ents[i];

		if (!e->len)
			continue;
		if (read_record(fd, fsize, e->off, bs, e, buf)) {
			fsf_err(log, "undo file %s: saved block %llu changed while restoring",
				path, (unsigned long long)e->blk);
			ret = -EIO;
			goto out;
		}
		ret = fsf_dev_pwrite(&dev, buf, e->len, e->blk * bs);
		if (ret)
			goto out;
	}
	ret = fsf_dev_commit(&dev);
	if (!ret)
		fsf_out(log, "%s: restored %llu blocks from undo file %s",
			device, (unsigned long long)(n - bad), path);
out:
	if (dev.path)
		fsf_dev_close(&dev);
	free(ents);
	free(idx);
	free(buf);
	close(fd);
	return ret < 0 ? ret : 0;
}
