// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mkfs.ntfs: parse the command line (compatible with ntfsprogs-plus'
 * mkntfs), call ntfs_mkfs(), report.  Never prompts, so
 * `yes | mkfs -t ntfs DEV` and scripts behave the same.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsforge/log.h"
#include "ntfs/mkfs.h"

enum { OPT_FULL = 256 };

static const struct option long_opts[] = {
	{ "sector-size", required_argument, NULL, 's' },
	{ "partition-start", required_argument, NULL, 'p' },
	{ "heads", required_argument, NULL, 'H' },
	{ "sectors-per-track", required_argument, NULL, 'S' },
	{ "cluster-size", required_argument, NULL, 'c' },
	{ "mft-zone-multiplier", required_argument, NULL, 'z' },
	{ "label", required_argument, NULL, 'L' },
	{ "enable-compression", no_argument, NULL, 'C' },
	{ "fast", no_argument, NULL, 'f' },
	{ "quick", no_argument, NULL, 'Q' },
	{ "full", no_argument, NULL, OPT_FULL },
	{ "no-indexing", no_argument, NULL, 'I' },
	{ "no-action", no_argument, NULL, 'n' },
	{ "zero-time", no_argument, NULL, 'T' },
	{ "with-uuid", no_argument, NULL, 'U' },
	{ "force", no_argument, NULL, 'F' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "version", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fputs(
"Usage: mkfs.ntfs [OPTIONS] DEVICE [NUMBER-OF-SECTORS]\n"
"Create an NTFS 3.1 volume on DEVICE (a block device or an image file).\n"
"A device holding a filesystem or partition table is only formatted with\n"
"-F or after a 'y' answer on standard input (as `yes | mkfs -t ntfs`).\n"
"NUMBER-OF-SECTORS defaults to the whole device; an image file is created\n"
"or resized (sparse) when it is given.\n"
"\n"
"Basic options:\n"
"  -f, --fast, -Q, --quick    quick format: do not zero the volume (default)\n"
"      --full                 zero the whole volume first\n"
"  -L, --label STRING         volume label (at most 128 UTF-16 units)\n"
"  -C, --enable-compression   compress new files (clusters up to 4096 bytes)\n"
"  -n, --no-action            check and plan everything, write nothing\n"
"\n"
"Advanced options:\n"
"  -c, --cluster-size BYTES   cluster size, a power of two from the sector\n"
"                             size to 2097152 (default 4096, larger for\n"
"                             volumes above 16 TiB)\n"
"  -s, --sector-size BYTES    sector size: 256..4096 (default: the device's)\n"
"  -p, --partition-start N    first sector of the partition (boot sector)\n"
"  -H, --heads N              number of heads (boot sector)\n"
"  -S, --sectors-per-track N  sectors per track (boot sector)\n"
"  -z, --mft-zone-multiplier N  MFT zone: N eighths of the volume (1..4)\n"
"  -T, --zero-time            use 1970-01-01 00:00 UTC for every time stamp\n"
"  -U, --with-uuid            give the volume an object id (GUID)\n"
"  -I, --no-indexing          mark the root as not content-indexed\n"
"  -F, --force                format a device holding a filesystem or a\n"
"                             partition table; twice (-F -F): even a busy\n"
"                             (mounted or opened exclusively) device\n"
"\n"
"Output options:\n"
"  -q, --quiet                errors only\n"
"  -v, --verbose              more detail\n"
"  -V, --version              print the version and exit\n"
"  -h, --help                 print this help and exit\n"
"\n"
"Exit status: 0 success, 1 error (bad usage included), as mkntfs.\n", f);
}

static int parse_u64(const char *s, const char *what, uint64_t min,
		     uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (*s == '-') {
		fprintf(stderr, "mkfs.ntfs: invalid %s '%s'\n", what, s);
		return -1;
	}
	v = strtoull(s, &end, 0);
	/* sizes may carry a k/K or m/M suffix */
	if (!errno && end != s && (*end == 'k' || *end == 'K') && !end[1]) {
		v <<= 10;
		end++;
	} else if (!errno && end != s && (*end == 'm' || *end == 'M') && !end[1]) {
		v <<= 20;
		end++;
	}
	if (errno || end == s || *end || v < min || v > max) {
		fprintf(stderr, "mkfs.ntfs: invalid %s '%s'\n", what, s);
		return -1;
	}
	*out = v;
	return 0;
}

/*
 * A device holding a filesystem, without -F: ask as mke2fs does.  From a
 * terminal the answer is awaited; otherwise (`yes | mkfs -t ntfs DEV`, as
 * fstests formats) a line already on its way is read, and silence for two
 * seconds or end of input means no, so nothing ever blocks for good.
 */
static bool ask_proceed(const char *question, void *arg)
{
	char buf[32];

	(void)arg;
	fprintf(stderr, "%s.\nProceed anyway? (y,N) ", question);
	fflush(stderr);
	if (!isatty(STDIN_FILENO)) {
		struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };

		if (poll(&p, 1, 2000) <= 0) {
			fputs("no answer\n", stderr);
			return false;
		}
	}
	if (!fgets(buf, sizeof(buf), stdin)) {
		fputs("no answer\n", stderr);
		return false;
	}
	if (!isatty(STDIN_FILENO))
		fputs(buf, stderr);
	return buf[0] == 'y' || buf[0] == 'Y';
}

int main(int argc, char **argv)
{
	struct fsf_log log = { "mkfs.ntfs", FSF_NORMAL };
	struct ntfs_mkfs_opts o;
	uint64_t v;
	int c;

	memset(&o, 0, sizeof(o));
	o.log = &log;
	o.zone_multiplier = 1;
	o.confirm = ask_proceed;
	while ((c = getopt_long(argc, argv, "s:p:H:S:c:z:L:CfQInTUFqvVh",
				long_opts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (parse_u64(optarg, "sector size", 1, 1u << 16, &v))
				return 1;
			o.sector_size = (uint32_t)v;
			break;
		case 'p':
			if (parse_u64(optarg, "partition start", 0, 0xffffffffULL, &v))
				return 1;
			o.part_start = v;
			o.part_start_set = true;
			break;
		case 'H':
			if (parse_u64(optarg, "number of heads", 0, 0xffff, &v))
				return 1;
			o.heads = (uint32_t)v;
			break;
		case 'S':
			if (parse_u64(optarg, "sectors per track", 0, 0xffff, &v))
				return 1;
			o.sectors_per_track = (uint32_t)v;
			break;
		case 'c':
			if (parse_u64(optarg, "cluster size", 1, 1u << 30, &v))
				return 1;
			o.cluster_size = (uint32_t)v;
			break;
		case 'z':
			if (parse_u64(optarg, "MFT zone multiplier (1..4)", 1, 4, &v))
				return 1;
			o.zone_multiplier = (int)v;
			break;
		case 'L':
			o.label = optarg;
			break;
		case 'C':
			o.enable_compression = true;
			break;
		case 'f':
		case 'Q':
			o.full = false;
			break;
		case OPT_FULL:
			o.full = true;
			break;
		case 'I':
			o.no_indexing = true;
			break;
		case 'n':
			o.no_action = true;
			break;
		case 'T':
			o.zero_time = true;
			break;
		case 'U':
			o.with_uuid = true;
			break;
		case 'F':
			o.force++;
			break;
		case 'q':
			log.level = FSF_QUIET;
			break;
		case 'v':
			log.level = FSF_VERBOSE;
			break;
		case 'V':
			printf("mkfs.ntfs (fsforge) %s\n", PACKAGE_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (optind >= argc || argc - optind > 2) {
		fprintf(stderr, "mkfs.ntfs: %s\n", optind >= argc ?
			"no device given" : "too many arguments");
		usage(stderr);
		return 1;
	}
	o.device = argv[optind];
	if (argc - optind == 2 &&
	    parse_u64(argv[optind + 1], "number of sectors", 2, INT64_MAX,
		      &o.num_sectors))
		return 1;
	if (o.enable_compression && o.cluster_size > 4096) {
		fprintf(stderr, "mkfs.ntfs: compression needs a cluster size of at most 4096, not %u\n",
			o.cluster_size);
		return 1;
	}
	return ntfs_mkfs(&o) ? 1 : 0;
}
