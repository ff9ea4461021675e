// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Undo files (common/undo*.c): the CRC-32C against its published check
 * value, and a save/restore round trip on a file whose size is not a
 * multiple of the block size, with writes across block boundaries, a
 * sequential stream into the partial last block, a hole punched by
 * fsf_dev_zero; the restored bytes are compared with a copy kept here.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/undo_format.h"
#include "fsforge/undo.h"
#include "tap.h"

#define SIZE (5 * 4096 + 1000)

static int write_file(const char *path, const unsigned char *buf, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int ok = fd >= 0 && write(fd, buf, n) == (ssize_t)n;

	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

static int read_file(const char *path, unsigned char *buf, size_t n)
{
	int fd = open(path, O_RDONLY);
	int ok = fd >= 0 && read(fd, buf, n) == (ssize_t)n;

	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

int main(void)
{
	struct fsf_log log = { "test_undo", FSF_QUIET };
	static unsigned char orig[SIZE], now[SIZE], x[9000];
	char dir[] = "/tmp/test_undo.XXXXXX", img[64], undo[64];
	struct fsf_dev dev;

	/* the check value of CRC-32C (RFC 3720 B.4; "123456789") */
	ok(undo_crc32c(0, "123456789", 9) == 0xe3069283u, "crc32c check value");
	ok(undo_crc32c(0, "", 0) == 0, "crc32c of nothing");

	if (!mkdtemp(dir))
		return 1;
	snprintf(img, sizeof(img), "%s/v.img", dir);
	snprintf(undo, sizeof(undo), "%s/v.undo", dir);
	for (size_t i = 0; i < SIZE; i++)
		orig[i] = (unsigned char)(i * 7 + i / 4096);
	memset(x, 0xab, sizeof(x));
	ok(write_file(img, orig, SIZE) == 0, "image written");

	ok(fsf_dev_open_check(&dev, img, 0, &log) == 0, "image opened read-write");
	ok(fsf_undo_start(&dev, img, "t") != 0, "the image itself refused as undo file");
	ok(fsf_undo_start(&dev, undo, "t") == 0, "undo file started");
	ok(fsf_dev_pwrite(&dev, x, 100, 4000) == 0, "write across blocks 0-1");
	ok(fsf_dev_pwrite(&dev, x, 10, 4010) == 0, "rewrite inside saved blocks");
	ok(fsf_dev_pwrite(&dev, x, 4096, 3 * 4096) == 0, "stream: block 3");
	ok(fsf_dev_pwrite(&dev, x, 4096 + 1000, 4 * 4096) == 0,
	   "stream: block 4 and the partial last block");
	ok(fsf_dev_zero(&dev, 2 * 4096 + 5, 300) == 0, "zeroed range in block 2");
	ok(fsf_dev_pwrite(&dev, x, 1, SIZE) != 0, "write past the end refused");
	ok(fsf_undo_blocks(&dev) == 6, "6 blocks saved (%llu)",
	   (unsigned long long)fsf_undo_blocks(&dev));
	ok(fsf_dev_commit(&dev) == 0, "committed");
	fsf_dev_close(&dev);

	ok(read_file(img, now, SIZE) == 0 && memcmp(now, orig, SIZE) != 0,
	   "the image changed");
	ok(fsf_undo_apply(undo, img, FSF_UNDO_DRY_RUN, &log) == 0, "dry run verifies");
	ok(read_file(img, now, SIZE) == 0 && memcmp(now, orig, SIZE) != 0,
	   "the dry run wrote nothing");
	ok(fsf_undo_apply(undo, img, 0, &log) == 0, "undo applied");
	ok(read_file(img, now, SIZE) == 0 && memcmp(now, orig, SIZE) == 0,
	   "the image is back byte for byte");
	ok(fsf_undo_apply(undo, img, 0, &log) != 0, "a second undo refused");
	ok(read_file(img, now, SIZE) == 0 && memcmp(now, orig, SIZE) == 0,
	   "the refused undo wrote nothing");

	/* a run that dies between two writes: the undo file is unfinished,
	 * refused as such, and --force gives back what it holds */
	pid_t pid = fork();

	if (pid == 0) {
		if (fsf_dev_open_check(&dev, img, 0, &log) ||
		    fsf_undo_start(&dev, undo, "t") ||
		    fsf_dev_pwrite(&dev, x, 5000, 100) ||
		    fsf_dev_pwrite(&dev, x, 50, SIZE - 50))
			_exit(1);
		_exit(0);	/* no commit, no close: as if killed */
	}
	int st = -1;

	ok(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	   WEXITSTATUS(st) == 0, "killed run wrote");
	ok(read_file(img, now, SIZE) == 0 && memcmp(now, orig, SIZE) != 0,
	   "the image changed");
	ok(fsf_undo_apply(undo, img, 0, &log) != 0, "unfinished undo file refused");
	ok(fsf_undo_apply(undo, img, FSF_UNDO_FORCE, &log) == 0,
	   "unfinished undo file applied with force");
	ok(read_file(img, now, SIZE) == 0 && memcmp(now, orig, SIZE) == 0,
	   "the image is back byte for byte");

	/* -n: nothing to attach to */
	ok(fsf_dev_open_check(&dev, img, FSF_DEV_DRY_RUN, &log) == 0, "opened read-only");
	ok(fsf_undo_start(&dev, undo, "t") != 0, "no undo file on a read-only device");
	fsf_dev_close(&dev);

	unlink(img);
	unlink(undo);
	rmdir(dir);
	return tap_done();
}
