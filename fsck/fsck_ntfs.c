// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fsck.ntfs: parse the command line (ntfsck and fsck(8) compatible), run
 * the passes, turn what happened into an fsck(8) exit status.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ntfs_check.h"
#include "ntfs_problems.h"

enum { OPT_JSON = 256 };

static const struct option long_opts[] = {
	{ "repair-auto", no_argument, NULL, 'a' },
	{ "repair-no", no_argument, NULL, 'n' },
	{ "repair-yes", no_argument, NULL, 'y' },
	{ "repair", no_argument, NULL, 'r' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "version", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fputs(
"Usage: fsck.ntfs [-a|-p|-n|-y|-r] [-C] [-f] [-q] [-v] [--json] DEVICE\n"
"Check an NTFS volume (block device or image file) and repair it.\n"
"\n"
"  -a, -p, --repair-auto  repair automatically (for boot: fsck -a)\n"
"  -n, --repair-no        open read-only, change nothing, answer no\n"
"  -y, --repair-yes       answer yes to every question\n"
"  -r, --repair           ask before each repair (default on a terminal)\n"
"  -C                     only report whether the volume is dirty\n"
"                         (exit 0 clean, 1 dirty)\n"
"  -f                     accepted for fsck(8); the check is always full\n"
"      --json             print a JSON report of every problem on stdout\n"
"  -q, --quiet            no progress and no summary\n"
"  -v, --verbose          more detail\n"
"  -V, --version          print the version\n"
"  -h, --help             print this help\n"
"\n"
"Checks and repairs the boot sector and its backup, MFT records and\n"
"$MFTMirr, runlists, link counts, directory indexes (rebuilt when damaged),\n"
"directories unreachable from the root and orphans (to /lost+found),\n"
"duplicate names, the cluster and MFT bitmaps, the journal and the dirty\n"
"flag; see fsck.ntfs(8).\n\n"
"Exit status (fsck(8)): 0 clean, 1 errors corrected, 4 errors left,\n"
"8 operational error, 16 usage error, 32 cancelled; sums combine.\n", f);
}

struct cli {
	enum fsf_fix_mode mode;
	int modes;
	bool dirty_only, json, quiet, verbose;
	const char *device;
};

static int parse(struct cli *cl, int argc, char **argv)
{
	int opt;

	cl->mode = isatty(STDIN_FILENO) ? FSF_MODE_INTERACTIVE : FSF_MODE_NO;
	while ((opt = getopt_long(argc, argv, "apnyrCfqvVh", long_opts, NULL)) != -1) {
		switch (opt) {
		case 'a': case 'p': cl->mode = FSF_MODE_PREEN; cl->modes++; break;
		case 'n': cl->mode = FSF_MODE_NO; cl->modes++; break;
		case 'y': cl->mode = FSF_MODE_YES; cl->modes++; break;
		case 'r': cl->mode = FSF_MODE_INTERACTIVE; cl->modes++; break;
		case 'C': cl->dirty_only = true; break;
		case 'f': break;
		case 'q': cl->quiet = true; break;
		case 'v': cl->verbose = true; break;
		case OPT_JSON: cl->json = true; break;
		case 'V':
			printf("fsck.ntfs (fsforge) %s\n", PACKAGE_VERSION);
			exit(0);
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (cl->modes > 1) {
		fputs("fsck.ntfs: -a/-p, -n, -y and -r are mutually exclusive\n", stderr);
		return -1;
	}
	if (argc - optind != 1) {
		fputs("fsck.ntfs: expected one DEVICE\n", stderr);
		usage(stderr);
		return -1;
	}
	cl->device = argv[optind];
	return 0;
}

static void check_free(struct ntfs_check *c)
{
	free(c->vol.mft_runs);
	free(c->cluster_used);
	free(c->record_used);
	free(c->record_dir);
	free(c->cache.mem);
	free(c->fn_pending);
	free(c->ext_bad);
	for (size_t i = 0; i < c->nnames; i++)
		free(c->names[i].name);
	free(c->names);
	free(c->rebuild);
	free(c->exts);
	fsf_fix_free(&c->fix);
	fsf_dev_close(&c->dev);
}

int main(int argc, char **argv)
{
	struct cli cl = { 0 };
	struct fsf_log log = { "fsck.ntfs", FSF_NORMAL };
	struct ntfs_check c;
	unsigned int flags;
	int ret, code;

	if (parse(&cl, argc, argv))
		return FSF_EXIT_USAGE;
	if (cl.quiet)
		log.level = FSF_QUIET;
	else if (cl.verbose)
		log.level = FSF_VERBOSE;
	memset(&c, 0, sizeof(c));
	c.log = &log;
	c.verbose = cl.verbose;
	c.progress = !cl.quiet && !cl.json;
	flags = (cl.mode == FSF_MODE_NO || cl.dirty_only) ? FSF_DEV_DRY_RUN : 0;
	fsf_fix_init(&c.fix, &log, cl.dirty_only ? FSF_MODE_NO : cl.mode,
		     cl.device);
	if (cl.json)
		c.fix.out = stderr;	/* stdout carries the report */
	c.vol.dev = &c.dev;
	if (fsf_dev_open_check(&c.dev, cl.device, flags, &log)) {
		fsf_fix_free(&c.fix);
		return FSF_EXIT_ERROR;
	}

	ret = ntfs_pass0_boot(&c);
	if (!ret)
		ret = ntfs_pass1_mft(&c);
	if (cl.dirty_only) {
		bool dirty = c.volume_flags & 0x0001;

		if (!cl.quiet)
			printf("%s: %s\n", cl.device, ret ? "not checkable" :
			       dirty ? "dirty" : "clean");
		check_free(&c);
		return ret ? FSF_EXIT_ERROR : dirty ? 1 : 0;
	}
	if (!ret)
		ret = ntfs_pass3_indexes(&c);
	if (!ret)
		ret = ntfs_pass3_secure(&c);
	if (!ret)
		ret = ntfs_pass4_bitmaps(&c);
	if (!ret)
		ret = ntfs_pass5_volume(&c);
	/* -EUCLEAN: damage the checker could not get past (a fatal row
	 * was reported); anything else is an operational failure */
	if (ret && ret != -EUCLEAN)
		c.fix.operational_error = true;
	if (fsf_dev_commit(&c.dev) != 0)
		c.fix.operational_error = true;
	code = fsf_fix_exit_code(&c.fix);
	if (ret == -EINVAL)	/* not an NTFS volume: nothing was checked */
		code = FSF_EXIT_ERROR;
	if (cl.json)
		fsf_fix_json(&c.fix, stdout);
	else if (!cl.quiet && ret != -EINVAL)
		printf("%s: %llu MFT records; problems: %u found, %u fixed, %u left%s\n",
		       cl.device, (unsigned long long)c.vol.mft_records,
		       c.fix.found, c.fix.fixed + c.fix.housekeeping, c.fix.left,
		       c.crosslinked ? " (cross-linked clusters need manual repair)" : "");
	check_free(&c);
	return code;
}
