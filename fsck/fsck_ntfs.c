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

#include "fsforge/undo.h"
#include "ntfs/hiberfile.h"
#include "ntfs_check.h"
#include "ntfs_problems.h"

enum { OPT_JSON = 256, OPT_UNDO, OPT_FORCE };

static const struct option long_opts[] = {
	{ "repair-auto", no_argument, NULL, 'a' },
	{ "repair-no", no_argument, NULL, 'n' },
	{ "repair-yes", no_argument, NULL, 'y' },
	{ "repair", no_argument, NULL, 'r' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "undo-file", required_argument, NULL, 'z' },
	{ "undo", required_argument, NULL, OPT_UNDO },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "version", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fputs(
"Usage: fsck.ntfs [-a|-p|-n|-y|-r] [-C] [-f] [-q] [-v] [--json] [-z UNDO] DEVICE\n"
"       fsck.ntfs --undo UNDO [-n] [--force] DEVICE\n"
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
"  -z, --undo-file UNDO   save every block before its first overwrite in\n"
"                         the file UNDO (not on DEVICE); see --undo\n"
"      --undo UNDO        put back on DEVICE the blocks saved in UNDO;\n"
"                         refused when DEVICE is not as the run left it\n"
"                         (with -n: only verify); a warning when Windows\n"
"                         is hibernated on DEVICE\n"
"      --force            with --undo: restore despite a mismatch\n"
"  -q, --quiet            no progress and no summary\n"
"  -v, --verbose          more detail\n"
"  -V, --version          print the version\n"
"  -h, --help             print this help\n"
"\n"
"Verifies where $MFT and $MFTMirr are before writing anything, then\n"
"checks and repairs the boot sector and its backup, MFT records and\n"
"$MFTMirr, runlists, attribute lists (rebuilt from the extension\n"
"records), cross-linked clusters (copied), link counts,\n"
"reparse points and extended attributes, compressed and sparse data,\n"
"directory indexes (rebuilt when damaged), directories unreachable from\n"
"the root and orphans (to /lost+found), duplicate names, the cluster and\n"
"MFT bitmaps, the journal and the dirty flag; see fsck.ntfs(8).  A repair\n"
"refuses a device or image that is mounted (ntfs-3g included) or open\n"
"for writing elsewhere; -n checks an image in use, with a warning.\n"
"A volume Windows left hibernated (Fast Startup: the root's hiberfil.sys\n"
"starts with \"hibr\", any case) is checked as with -n in every mode and\n"
"nothing is written: Windows writes its cached metadata back on resume.\n"
"Shut Windows down fully (shutdown /s /t 0) and check again.\n\n"
"Exit status (fsck(8)): 0 clean, 1 errors corrected, 4 errors left,\n"
"8 operational error, 16 usage error, 32 cancelled; sums combine.\n", f);
}

struct cli {
	enum fsf_fix_mode mode;
	int modes;
	bool dirty_only, json, quiet, verbose, force;
	const char *device, *undo_file, *undo_apply;
};

static int parse(struct cli *cl, int argc, char **argv)
{
	int opt;

	cl->mode = isatty(STDIN_FILENO) ? FSF_MODE_INTERACTIVE : FSF_MODE_NO;
	while ((opt = getopt_long(argc, argv, "apnyrCfqvVhz:", long_opts, NULL)) != -1) {
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
		case 'z': cl->undo_file = optarg; break;
		case OPT_UNDO: cl->undo_apply = optarg; break;
		case OPT_FORCE: cl->force = true; break;
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
	if (cl->undo_apply && (cl->undo_file || cl->dirty_only || cl->json ||
			       (cl->modes && cl->mode != FSF_MODE_NO))) {
		fputs("fsck.ntfs: --undo takes only -n, --force, -q and -v\n", stderr);
		return -1;
	}
	if (cl->force && !cl->undo_apply) {
		fputs("fsck.ntfs: --force goes with --undo\n", stderr);
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
	cset_free(&c->cluster_used);
	cset_free(&c->record_used);
	rset_free(&c->record_dir);
	ntfs_vol_cache_free(&c->vol);
	ntfs_vol_assumed_free(&c->vol);
	free(c->fn_pending);
	free(c->fnp_big);
	rset_free(&c->early_named);
	free(c->nbuckets);
	rset_free(&c->uncounted);
	rset_free(&c->size_told);
	ntfs_rare_map_free(c->ext_bad);
	ntfs_dir_refs_free(&c->dir_refs);
	ntfs_rare_map_free(c->record_lost);
	ntfs_rare_map_free(c->nameless);
	ntfs_rare_map_free(c->list_left);
	ntfs_rare_map_free(c->salvage_left);
	ntfs_rare_map_free(c->names_lost);
	free(c->lost_names);
	free(c->unlisted);
	rset_free(&c->not_plain);
	rset_free(&c->has_objid);
	free(c->secids);
	for (size_t i = 0; i < c->nnames; i++)
		free(c->names[i].name);
	free(c->names);
	ntfs_rare_map_free(c->rebuild);
	ntfs_rare_map_free(c->mend);
	free(c->promises);
	free(c->exts);
	free(c->rp_keys);
	ntfs_sysrec_free(c);
	free(c->lbases);
	fsf_fix_free(&c->fix);
	fsf_dev_close(&c->dev);
}

/*
 * Windows hibernated on the volume (Fast Startup included) writes its
 * cached view of the metadata back on resume, over any repair made
 * meanwhile: the volume is then checked as with -n, opened read-only
 * again before anything could be written.  Returns *FLAGS with
 * FSF_DEV_DRY_RUN when it was so, and -1 when the read-only open fails.
 */
static int hibernation_guard(struct ntfs_check *c, const struct cli *cl,
			     unsigned int *flags, const struct fsf_log *log)
{
	struct ntfs_hiber h;

	if (cl->dirty_only || !ntfs_hibernated(&c->dev, &h))
		return 0;
	if (*flags & FSF_DEV_DRY_RUN) {
		fsf_warn(log, "%s: Windows is hibernated (Fast Startup; hiberfil.sys, record %llu, holds an image): a repair would write nothing until Windows is shut down fully",
			 cl->device, (unsigned long long)h.recno);
		return 0;
	}
	fsf_err(log, "%s: Windows is hibernated (Fast Startup; hiberfil.sys, record %llu, holds an image): checked only, nothing written; boot Windows and shut it down fully (shutdown /s /t 0, or turn Fast Startup off), then check again",
		cl->device, (unsigned long long)h.recno);
	fsf_dev_close(&c->dev);
	*flags |= FSF_DEV_DRY_RUN;
	c->fix.mode = FSF_MODE_NO;
	return fsf_dev_open_check(&c->dev, cl->device, *flags, log) ? -1 : 0;
}

/*
 * --undo on a volume Windows left hibernated: the user asked for it, so it
 * is done, with a warning (Windows' resume writes its cached metadata
 * over the restored blocks as over a repair).  The device is opened
 * read-only for the probe alone and silently: fsf_undo_apply reports why
 * it cannot be opened.
 */
static void undo_hibernation_warn(const struct cli *cl, const struct fsf_log *log)
{
	const struct fsf_log silent = { log->prog, -1 };
	struct fsf_dev dev = { .fd = -1 };
	struct ntfs_hiber h;

	if (fsf_dev_open_check(&dev, cl->device, FSF_DEV_DRY_RUN, &silent))
		return;
	if (ntfs_hibernated(&dev, &h))
		fsf_warn(log, "%s: Windows is hibernated (Fast Startup; hiberfil.sys, record %llu, holds an image): its resume writes its cached metadata over the blocks --undo puts back%s",
			 cl->device, (unsigned long long)h.recno,
			 cl->modes ? "" : "; restoring them as asked");
	fsf_dev_close(&dev);
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
	if (cl.undo_apply) {
		undo_hibernation_warn(&cl, &log);
		return fsf_undo_apply(cl.undo_apply, cl.device,
				      (cl.force ? FSF_UNDO_FORCE : 0) |
				      (cl.modes ? FSF_UNDO_DRY_RUN : 0), &log) ?
		       FSF_EXIT_ERROR : 0;
	}
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
	c.fix.read_errors = &c.dev.read_errors;
	if (fsf_dev_open_check(&c.dev, cl.device, flags, &log)) {
		fsf_fix_free(&c.fix);
		return FSF_EXIT_ERROR;
	}
	if (hibernation_guard(&c, &cl, &flags, &log)) {
		fsf_fix_free(&c.fix);
		return FSF_EXIT_ERROR;
	}
	if (cl.undo_file && (flags & FSF_DEV_DRY_RUN)) {
		fsf_warn(&log, "nothing is written in this mode: no undo file %s",
			 cl.undo_file);
	} else if (cl.undo_file &&
		   fsf_undo_start(&c.dev, cl.undo_file, "fsck.ntfs")) {
		check_free(&c);
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
		ret = ntfs_pass1b_crosslinks(&c);
	if (!ret)
		ntfs_check_system_tables(&c);
	if (!ret)
		ret = ntfs_pass2_data(&c);
	if (!ret)
		ret = ntfs_pass2_special(&c);
	if (!ret)
		ret = ntfs_pass3_indexes(&c);
	if (!ret)
		ret = ntfs_pass3_secure(&c);
	if (!ret)
		ret = ntfs_pass3_views(&c);
	if (!ret)
		ret = ntfs_pass3_usnjrnl(&c);
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
	else if (fsf_undo_blocks(&c.dev))
		(cl.json ? fsf_info : fsf_out)(&log, "%s: %llu blocks saved; undo with: fsck.ntfs --undo %s %s",
			 cl.device, (unsigned long long)fsf_undo_blocks(&c.dev),
			 cl.undo_file, cl.device);
	/* -n: the declined repairs it went on with, past the budget */
	if (c.vol.assumed.refused)
		fsf_warn(&log, "-n stopped carrying declined repairs in memory past %zu records (%llu MiB): some problems reported after that may be consequences a repair run would not find",
			 c.vol.assumed.count,
			 (unsigned long long)(NTFS_ASSUMED_BUDGET >> 20));
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
