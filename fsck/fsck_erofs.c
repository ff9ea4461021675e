// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fsck.erofs: parse the command line (erofs-utils' fsck.erofs options),
 * open the image, check it, report.  Exit status as erofs-utils' fsck.erofs:
 * 0 when no problem was found, 1 for a damaged image and for every other
 * failure (usage included).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/erofs_fs.h"
#include "erofs/read.h"
#include "erofs_check.h"

enum {
	OPT_EXTRACT = 256, OPT_DIGEST, OPT_NO_SBCRC, OPT_XATTRS, OPT_NO_XATTRS,
	OPT_OVERWRITE, OPT_IGNORED, OPT_DEVICE, OPT_RATIO, OPT_PRESERVE,
	OPT_NO_PRESERVE, OPT_PRESERVE_OWNER, OPT_NO_PRESERVE_OWNER,
	OPT_PRESERVE_PERMS, OPT_NO_PRESERVE_PERMS, OPT_FORCE, OPT_WORKERS,
};

static const struct option long_opts[] = {
	{ "extract", optional_argument, NULL, OPT_EXTRACT },
	{ "xattr-inode-digest", optional_argument, NULL, OPT_DIGEST },
	{ "no-sbcrc", no_argument, NULL, OPT_NO_SBCRC },
	{ "xattrs", no_argument, NULL, OPT_XATTRS },
	{ "no-xattrs", no_argument, NULL, OPT_NO_XATTRS },
	{ "overwrite", no_argument, NULL, OPT_OVERWRITE },
	{ "print-comp-ratio", no_argument, NULL, OPT_RATIO },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "preserve", no_argument, NULL, OPT_PRESERVE },
	{ "no-preserve", no_argument, NULL, OPT_NO_PRESERVE },
	{ "preserve-owner", no_argument, NULL, OPT_PRESERVE_OWNER },
	{ "no-preserve-owner", no_argument, NULL, OPT_NO_PRESERVE_OWNER },
	{ "preserve-perms", no_argument, NULL, OPT_PRESERVE_PERMS },
	{ "no-preserve-perms", no_argument, NULL, OPT_NO_PRESERVE_PERMS },
	{ "device", required_argument, NULL, OPT_DEVICE },
	{ "workers", required_argument, NULL, OPT_WORKERS },
	{ "version", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fputs(
"Usage: fsck.erofs [OPTIONS] IMAGE\n"
"Check the EROFS filesystem in IMAGE (a file or block device): the\n"
"superblock and its checksum, every inode reached from the root, directory\n"
"entries, xattrs, link counts, compressed indexes, and every extent of\n"
"every file decoded (lz4, lzma, deflate, zstd).\n"
"\n"
"  --xattr-inode-digest[=NAME]  recompute the SHA-256 fingerprint of every\n"
"                         regular file and compare it with its xattr NAME\n"
"                         (default: the superblock's fingerprint prefix;\n"
"                         an image without one is refused)\n"
"  --extract[=DIR]        check, and restore the tree under DIR: types,\n"
"                         contents, hard links, owners, modes, ns times\n"
"  --xattrs, --no-xattrs  with --extract: restore xattrs too (default off)\n"
"  --overwrite            with --extract: replace what DIR already holds\n"
"  --force                with --extract: allow DIR to be /\n"
"  --[no-]preserve-owner  with --extract: restore owners (default for root)\n"
"  --[no-]preserve-perms  with --extract: restore modes as they are, else\n"
"                         less the umask (default for root: as they are)\n"
"  --[no-]preserve        both of the above\n"
"  --device=PATH          an extra device of the image (the tar of\n"
"                         mkfs.erofs --tar=i, the --blobdev file);\n"
"                         repeatable, in device-table order; every one\n"
"                         the image names is needed\n"
"  --workers=N            threads reading, decoding and hashing files\n"
"                         (default: online CPUs, at most 4; 1: none;\n"
"                         --extract uses none); messages and exit status\n"
"                         are the same for any N\n"
"  --no-sbcrc             do not verify the superblock checksum\n"
"  -p, --print-comp-ratio print the compression ratio of all files\n"
"  -d N                   message level (0 errors only .. 9)\n"
"  -a, -A, -y             accepted for fsck(8); nothing is ever repaired\n"
"  -V, --version          print the version\n"
"  -h, --help             print this help\n"
"\n"
"Exit status: 0 no problem found, 1 problems found or any failure (as\n"
"erofs-utils' fsck.erofs).\n", f);
}

struct cli {
	struct erofs_check_opts o;
	bool ratio, no_sbcrc, force;
	int level;
	const char *image;
	const char *devices[EROFS_READ_MAX_DEVICES];	/* --device */
	unsigned int ndevices;
};

static int parse(int argc, char **argv, struct cli *c, const struct fsf_log *log)
{
	int opt;

	while ((opt = getopt_long(argc, argv, "Vhd:paAy", long_opts, NULL)) != -1) {
		switch (opt) {
		case 'V':
			printf("fsck.erofs (fsforge) %s\n", PACKAGE_VERSION);
			exit(0);
		case 'h':
			usage(stdout);
			exit(0);
		case 'd': {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (*end || v < 0 || v > 9) {
				fsf_err(log, "invalid message level '%s'", optarg);
				return -1;
			}
			c->level = v == 0 ? FSF_QUIET : v < 3 ? FSF_NORMAL :
				   v < 5 ? FSF_VERBOSE : FSF_DEBUG;
			break;
		}
		case 'p':
		case OPT_RATIO:
			c->ratio = true;
			break;
		case 'a': case 'A': case 'y': case OPT_IGNORED:
			break;
		case OPT_EXTRACT:
			if (optarg && !*optarg) {
				fsf_err(log, "--extract= needs a directory");
				return -1;
			}
			c->o.extract_dir = optarg;
			break;
		case OPT_DIGEST:
			if (optarg && !*optarg) {
				fsf_err(log, "--xattr-inode-digest= needs a name");
				return -1;
			}
			c->o.digest = true;
			c->o.digest_name = optarg;
			break;
		case OPT_NO_SBCRC:
			c->no_sbcrc = true;
			break;
		case OPT_XATTRS:
			c->o.extract_xattrs = true;
			break;
		case OPT_NO_XATTRS:
			c->o.extract_xattrs = false;
			break;
		case OPT_OVERWRITE:
			c->o.overwrite = true;
			break;
		case OPT_FORCE:
			c->force = true;
			break;
		case OPT_PRESERVE:
		case OPT_NO_PRESERVE:
			c->o.preserve_owner = c->o.preserve_perms = opt == OPT_PRESERVE;
			break;
		case OPT_PRESERVE_OWNER:
		case OPT_NO_PRESERVE_OWNER:
			c->o.preserve_owner = opt == OPT_PRESERVE_OWNER;
			break;
		case OPT_PRESERVE_PERMS:
		case OPT_NO_PRESERVE_PERMS:
			c->o.preserve_perms = opt == OPT_PRESERVE_PERMS;
			break;
		case OPT_WORKERS: {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (*end || end == optarg || v < 1 || v > 64) {
				fsf_err(log, "--workers: '%s' is not a number of threads (1..64)",
					optarg);
				return -1;
			}
			c->o.workers = (unsigned int)v;
			break;
		}
		case OPT_DEVICE:
			if (c->ndevices == EROFS_READ_MAX_DEVICES) {
				fsf_err(log, "--device: at most %u extra devices",
					EROFS_READ_MAX_DEVICES);
				return -1;
			}
			c->devices[c->ndevices++] = optarg;
			break;
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind != argc - 1) {
		fsf_err(log, optind < argc ? "too many arguments" : "missing argument: IMAGE");
		usage(stderr);
		return -1;
	}
	c->image = argv[optind];
	if (c->o.extract_dir && !c->force) {
		char *real = realpath(c->o.extract_dir, NULL);
		bool root = real && !strcmp(real, "/");

		free(real);
		if (root) {
			fsf_err(log, "refusing to extract to / without --force");
			return -1;
		}
	}
	return 0;
}

/* the image or an extra device, opened for reading; its size in *SIZE */
static int open_image(const char *path, uint64_t *size, bool device,
		      const struct fsf_log *log)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		fsf_err(log, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st)) {
		fsf_err(log, "cannot stat %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	*size = (uint64_t)st.st_size;
	if (S_ISBLK(st.st_mode) && ioctl(fd, BLKGETSIZE64, size)) {
		fsf_err(log, "cannot size %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode)) {
		fsf_err(log, "%s is neither a file nor a block device", path);
		close(fd);
		return -1;
	}
	if (*size == 0 && !device) {
		fsf_err(log, "%s: cannot find a valid EROFS superblock (empty)", path);
		close(fd);
		return -1;
	}
	/* read once, mostly in order */
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	return fd;
}

/* the --device files, in device-table order, one for each slot; open
 * for the life of the process */
static int attach_devices(struct cli *c, struct erofs_img *img,
			  const struct fsf_log *log)
{
	if (c->ndevices < img->ndevices) {
		fsf_err(log, "%s: extra device %u (%" PRIu64 " blocks of %u bytes: the tar of mkfs.erofs --tar=i or the --blobdev file) is missing: give it with --device=PATH",
			c->image, c->ndevices + 1,
			img->devices[c->ndevices].blocks, img->blksz);
		return -1;
	}
	if (c->ndevices > img->ndevices) {
		fsf_err(log, "%s: %u --device given, the image has %u extra device%s",
			c->image, c->ndevices, img->ndevices,
			img->ndevices == 1 ? "" : "s");
		return -1;
	}
	for (unsigned int i = 0; i < c->ndevices; i++) {
		uint64_t size;
		int fd = open_image(c->devices[i], &size, true, log);

		if (fd < 0)
			return -1;
		if (erofs_img_attach(img, i + 1, fd, size)) {
			fsf_err(log, "%s: %s: %s", c->image, c->devices[i], img->err);
			close(fd);
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct cli c = { .level = FSF_NORMAL };
	struct fsf_log log = { .prog = "fsck.erofs", .level = FSF_NORMAL };
	struct erofs_check_stats st;
	struct erofs_img img;
	uint64_t size;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int fd, ret;

	/* buffers of 128 KiB and more (a big file's extent list) are
	 * mapped and unmapped: glibc's default raises the threshold to the
	 * largest freed, after which such buffers stay in each thread's heap */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	/* one heap for all threads: a worker's arena keeps what it freed */
	mallopt(M_ARENA_MAX, 1);
	/* as erofs-utils: owners and full modes restored for root only */
	c.o.preserve_owner = c.o.preserve_perms = geteuid() == 0;
	c.o.workers = cpus < 1 ? 1 : cpus > 4 ? 4 : (unsigned int)cpus;
	if (parse(argc, argv, &c, &log))
		return 1;
	log.level = c.level;
	fd = open_image(c.image, &size, false, &log);
	if (fd < 0)
		return 1;
	ret = erofs_img_open(&img, fd, size, c.no_sbcrc ? EROFS_OPEN_NO_SBCRC : 0);
	if (ret) {
		fsf_err(&log, "%s: %s", c.image, img.err);
		return 1;
	}
	if (c.o.digest && !c.o.digest_name &&
	    !(img.feature_compat & EROFS_COMPAT_ISHARE_XATTRS)) {
		fsf_err(&log, "%s: no fingerprint prefix in the superblock (was the image built with --xattr-inode-digest?)",
			c.image);
		erofs_img_close(&img);
		return 1;
	}
	ret = attach_devices(&c, &img, &log);
	if (ret) {
		erofs_img_close(&img);
		return 1;
	}
	ret = erofs_check(&img, &c.o, &log, &st);
	erofs_img_close(&img);
	if (ret)
		return 1;
	if (c.ratio)
		fsf_out(&log, "Compression ratio: %.2f(%%)",
			st.logical ? (double)st.physical * 100.0 / (double)st.logical : 100.0);
	if (st.errors) {
		fsf_err(&log, "%s: %" PRIu64 " problem%s found", c.image, st.errors,
			st.errors == 1 ? "" : "s");
		return 1;
	}
	if (c.o.digest)
		fsf_out(&log, "%s: no errors found: %" PRIu64 " inodes, %" PRIu64 " fingerprints verified",
			c.image, st.inodes, st.digests);
	else
		fsf_out(&log, "%s: no errors found: %" PRIu64 " inodes", c.image, st.inodes);
	return 0;
}
