// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: liberofs' tar reader (mkfs.erofs --tar=f) over an
 * arbitrary archive: header blocks, numbers, GNU long names and sparse
 * maps, pax records, paths (duplicates, "..", implied directories, hard
 * links) into the in-memory tree, which is then finished (sorted, ordered,
 * hard links resolved) and freed.  The first byte picks the stream filter
 * (plain, gzip, xz, zstd) so the decoders' error paths are reached too.
 * The archive is a memfd, read through /proc/self/fd like a tar file; no
 * image is written.  Built and run by scripts/fuzz with ASan+UBSan.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct erofs_mkfs_opts o;
	struct fsf_log log = { .prog = "fuzz", .level = FSF_QUIET };
	struct erofs_build b = { .opts = &o, .log = &log, .src_fd = -1,
				 .data_fd = { -1, -1 }, .from_tar = true };
	char path[64];
	int fd;

	if (!size || size > (4u << 20))
		return 0;
	fd = memfd_create("tar", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data + 1, size - 1) != (ssize_t)(size - 1)) {
		close(fd);
		return 0;
	}
	memset(&o, 0, sizeof(o));
	o.tar_mode = EROFS_TAR_FULL;
	o.tar_codec = (enum erofs_tar_codec)(data[0] & 3);
	o.aufs = data[0] & 4;
	o.ovlfs_strip = data[0] & 8;
	o.force_uid = o.force_gid = -1;
	o.xattr_tolerance = 2;
	o.build_time = 1000;
	o.digest_name = "trusted.erofs.fingerprint";
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	o.source = path;
	b.blksz = 4096;

	erofs_tar_scan(&b);
	erofs_tree_free(&b);
	for (int i = 0; i < 2; i++)
		if (b.data_fd[i] >= 0)
			close(b.data_fd[i]);
	close(fd);
	return 0;
}
