// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: the liberofs read side (superblock, prefix table,
 * inodes, xattrs, directories, full and compact lcluster indexes, every
 * decompressor) over an arbitrary image, walked from the root the way
 * fsck.erofs walks it: breadth-first over at most 512 inodes, each
 * directory's entries queued once.  The superblock checksum is skipped
 * (EROFS_OPEN_NO_SBCRC) so that mutations reach the rest.  The input is
 * read as fsck.erofs reads an image, with pread (from a memfd), through
 * the reader's cache.  Built and run by scripts/fuzz with ASan+UBSan.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_INODES 512
#define MAX_BYTES (64u << 20)	/* decoded per input: keeps runs short */

struct state {
	uint64_t queue[MAX_INODES];
	size_t n;
	uint64_t decoded;
	volatile uint8_t sum;
};

static int data_fn(void *ctx, const uint8_t *buf, size_t len)
{
	struct state *s = ctx;

	if (len && buf) {
		s->sum ^= buf[0] ^ buf[len - 1];	/* inside what was handed */
	}
	s->decoded += len;
	return s->decoded > MAX_BYTES ? -1 : 0;
}

static int xattr_fn(void *ctx, const char *name, size_t name_len,
		    const uint8_t *value, size_t value_len, unsigned int index)
{
	struct state *s = ctx;

	(void)index;
	if (name_len)
		s->sum ^= (uint8_t)name[name_len - 1];
	if (value_len)
		s->sum ^= value[value_len - 1];
	return 0;
}

static int dirent_fn(void *ctx, const char *name, size_t len, uint64_t nid,
		     unsigned int file_type)
{
	struct state *s = ctx;

	(void)file_type;
	s->sum ^= (uint8_t)name[len - 1];
	if ((len == 1 && name[0] == '.') || (len == 2 && !memcmp(name, "..", 2)))
		return 0;
	for (size_t i = 0; i < s->n; i++)
		if (s->queue[i] == nid)
			return 0;
	if (s->n < MAX_INODES)
		s->queue[s->n++] = nid;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct state s;
	struct erofs_img img;

	static int fd = -1;

	memset(&s, 0, sizeof(s));
	if (fd < 0)
		fd = memfd_create("fuzz_erofs_image", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 0) ||
	    pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	if (erofs_img_open(&img, fd, size, EROFS_OPEN_NO_SBCRC))
		return 0;
	/* extra devices: the input itself stands for each (the attach
	 * refuses one shorter than its slot says; chunks on it are then
	 * reported as on a device not given) */
	for (uint32_t d = 1; d <= img.ndevices; d++)
		erofs_img_attach(&img, d, fd, size);
	s.queue[s.n++] = img.root_nid;
	for (size_t i = 0; i < s.n; i++) {
		struct erofs_rinode ino;
		uint8_t *buf;

		if (erofs_read_inode(&img, s.queue[i], &ino))
			continue;
		erofs_read_xattrs(&img, &ino, xattr_fn, &s);
		if (S_ISDIR(ino.mode)) {
			if (erofs_read_all(&img, &ino, 1u << 20, &buf))
				continue;
			erofs_read_dir(&img, &ino, buf, ino.size, dirent_fn, &s);
			free(buf);
		} else {
			erofs_read_data(&img, &ino, data_fn, &s, NULL);
		}
	}
	erofs_img_close(&img);
	return 0;
}
