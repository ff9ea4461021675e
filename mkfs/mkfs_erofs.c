// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mkfs.erofs: parse the command line, call erofs_mkfs(), report.
 * Option names follow erofs-utils' mkfs.erofs for everything implemented.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uuid.h>

#include "erofs/mkfs.h"
#include "fsforge/log.h"

/* --oci[=f][,platform=X][,layer=N][,blob=sha256:HEX]: erofs-utils' names;
 * its registry options are refused (only local layouts are read) */
static int parse_oci(struct erofs_mkfs_opts *o, char *arg)
{
	char *save = NULL;
	bool first = true;

	o->oci = true;
	o->tar_mode = EROFS_TAR_FULL;
	for (char *t = arg ? strtok_r(arg, ",", &save) : NULL; t;
	     t = strtok_r(NULL, ",", &save), first = false) {
		char *v = strchr(t, '=');

		if (first && !strcmp(t, "f"))
			continue;
		if (first && !strcmp(t, "i")) {
			fprintf(stderr, "mkfs.erofs: --oci=i (index mode) is not supported; use --oci=f\n");
			return -1;
		}
		if (v)
			*v++ = '\0';
		if (!strcmp(t, "platform") && v && *v) {
			o->oci_platform = v;
		} else if (!strcmp(t, "layer") && v) {
			char *end;
			long long n;

			errno = 0;
			n = strtoll(v, &end, 10);
			if (!*v || *end || errno || n < 0) {
				fprintf(stderr, "mkfs.erofs: --oci: invalid layer '%s' (a 0-based index)\n", v);
				return -1;
			}
			o->oci_layer = n;
		} else if (!strcmp(t, "blob") && v && *v) {
			o->oci_blob = v;
		} else if (!strcmp(t, "username") || !strcmp(t, "password") ||
			   !strcmp(t, "insecure")) {
			fprintf(stderr, "mkfs.erofs: --oci: '%s' is a registry option; this mkfs.erofs reads local OCI image layouts only and never contacts a registry\n", t);
			return -1;
		} else {
			fprintf(stderr, "mkfs.erofs: --oci: unknown option '%s' (f, platform=, layer=, blob=)\n", t);
			return -1;
		}
	}
	if (o->oci_layer >= 0 && o->oci_blob) {
		fprintf(stderr, "mkfs.erofs: --oci: layer= and blob= both select a layer; give one\n");
		return -1;
	}
	return 0;
}

enum {
	OPT_ALL_ROOT = 256, OPT_ALL_TIME, OPT_MKFS_TIME, OPT_FORCE_UID,
	OPT_FORCE_GID, OPT_UID_OFFSET, OPT_GID_OFFSET, OPT_IGNORE_MTIME,
	OPT_PRESERVE_MTIME, OPT_EXCLUDE_PATH, OPT_EXCLUDE_REGEX,
	OPT_XATTR_PREFIX, OPT_DIGEST, OPT_WORKERS, OPT_QUIET, OPT_FORCE,
	OPT_DRY_RUN, OPT_IN_PLACE, OPT_MAX_EXTENT,
	OPT_CHUNKSIZE, OPT_BLOBDEV,
	/* tar input */
	OPT_TAR, OPT_UNGZIP, OPT_UNXZ, OPT_UNZSTD, OPT_AUFS, OPT_OVLFS_STRIP,
	OPT_SORT,
	OPT_OCI, OPT_COMPRESS_HINTS,
};

static const struct option long_opts[] = {
	{ "all-root", no_argument, NULL, OPT_ALL_ROOT },
	{ "all-time", no_argument, NULL, OPT_ALL_TIME },
	{ "mkfs-time", no_argument, NULL, OPT_MKFS_TIME },
	{ "force-uid", required_argument, NULL, OPT_FORCE_UID },
	{ "force-gid", required_argument, NULL, OPT_FORCE_GID },
	{ "uid-offset", required_argument, NULL, OPT_UID_OFFSET },
	{ "gid-offset", required_argument, NULL, OPT_GID_OFFSET },
	{ "ignore-mtime", no_argument, NULL, OPT_IGNORE_MTIME },
	{ "preserve-mtime", no_argument, NULL, OPT_PRESERVE_MTIME },
	{ "exclude-path", required_argument, NULL, OPT_EXCLUDE_PATH },
	{ "exclude-regex", required_argument, NULL, OPT_EXCLUDE_REGEX },
	{ "xattr-prefix", required_argument, NULL, OPT_XATTR_PREFIX },
	{ "xattr-inode-digest", optional_argument, NULL, OPT_DIGEST },
	{ "workers", required_argument, NULL, OPT_WORKERS },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "in-place", no_argument, NULL, OPT_IN_PLACE },
	{ "max-extent-bytes", required_argument, NULL, OPT_MAX_EXTENT },
	{ "chunksize", required_argument, NULL, OPT_CHUNKSIZE },
	{ "blobdev", required_argument, NULL, OPT_BLOBDEV },
	{ "tar", required_argument, NULL, OPT_TAR },
	{ "ungzip", optional_argument, NULL, OPT_UNGZIP },
	{ "unxz", optional_argument, NULL, OPT_UNXZ },
	{ "unzstd", optional_argument, NULL, OPT_UNZSTD },
	{ "aufs", no_argument, NULL, OPT_AUFS },
	{ "ovlfs-strip", optional_argument, NULL, OPT_OVLFS_STRIP },
	{ "oci", optional_argument, NULL, OPT_OCI },
	{ "sort", required_argument, NULL, OPT_SORT },
	{ "compress-hints", required_argument, NULL, OPT_COMPRESS_HINTS },
	{ "version", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fputs(
"Usage: mkfs.erofs [OPTIONS] IMAGE SOURCEDIR\n"
"       mkfs.erofs [OPTIONS] --tar=f|i|headerball IMAGE [TARFILE|-]\n"
"       mkfs.erofs [OPTIONS] --oci[=f][,OPT...] IMAGE OCIDIR\n"
"Build an EROFS image in IMAGE (a file or block device) from the directory\n"
"SOURCEDIR, from a tar archive (standard input when TARFILE is - or\n"
"missing), or from the layers of a local OCI image layout OCIDIR.\n"
"\n"
"      --tar=f             the source is a tar archive (ustar, GNU, pax), its\n"
"                          file data copied into the image\n"
"      --tar=i             index mode: metadata only, every file's data\n"
"                          mapped to the (decompressed) tar itself, which is\n"
"                          the image's extra device 1 (mount -o device=TAR,\n"
"                          fsck.erofs --device=TAR); 512-byte blocks\n"
"      --tar=headerball    the archive holds headers only (no file data\n"
"                          follows them): every file is one hole\n"
"      --ungzip[=FILE]     the tar archive is gzip-compressed\n"
"      --unxz[=FILE]       the tar archive is xz- or lzma-compressed\n"
"      --unzstd[=FILE]     the tar archive is zstd-compressed\n"
"                          (=FILE: write the decompressed archive to FILE\n"
"                          too, the device a --tar=i image needs)\n"
"      --aufs              turn aufs whiteouts (.wh.*) of the tar into\n"
"                          overlayfs ones\n"
"      --ovlfs-strip[=0|1] leave out overlayfs whiteouts and opaque marks\n"
"      --sort=path|none    the blocks of uncompressed files in the image's\n"
"                          order (path, the default) or in the archive's\n"
"                          (none: a plain tar file is read straight through)\n"
"      --oci[=f][,platform=OS/ARCH[/VARIANT]][,layer=N][,blob=sha256:HEX]\n"
"                          the source is a local OCI image layout (what\n"
"                          skopeo copy ... oci:DIR writes; no registry is\n"
"                          contacted): the image for the platform (default\n"
"                          linux/amd64); layer N (0-based) or the layer blob\n"
"                          converted with --aufs, or all layers applied in\n"
"                          order (whiteouts applied); every blob's SHA-256\n"
"                          and size checked as it is read\n"
"  -b SIZE                 block size in bytes (512..65536, default: page size)\n"
"  -z ALG[,level=N][,dictsize=N][:ALG...]\n"
"                          compress files with ALG (alternatives after ':'\n"
"                          for --compress-hints, up to 8): lz4; lz4hc (level\n"
"                          0-12, default 9); lzma (MicroLZMA: 0-9, or\n"
"                          100-109 = extreme 0-9, default 6); deflate (0-9)\n"
"                          or libdeflate (0-12), both raw deflate with\n"
"                          libdeflate, default 1; zstd (0-22, default 3).\n"
"                          dictsize= (k/M suffixes): the lzma dictionary\n"
"                          (4 KiB-8 MiB) or the zstd window (a power of two,\n"
"                          1 KiB-1 MiB). Blocks that do not shrink stay raw\n"
"  -C SIZE                 largest physical cluster of compressed data in bytes\n"
"                          (a multiple of the block size up to 1 MiB;\n"
"                          default: one block)\n""      --compress-hints=FILE\n"
"                          per-file compression: lines PCLUSTER_SIZE [INDEX]\n"
"                          REGEX; the first REGEX matching a file's path\n"
"                          (dir/file, no leading /) gives its pcluster size\n"
"                          (0: uncompressed) and -z configuration (0: first)\n"
"      --max-extent-bytes=N largest decompressed extent (default 4 MiB, and\n"
"                          at most 1024 blocks)\n"
"      --chunksize=N       store every uncompressed regular file in chunks of\n"
"                          N bytes (a power of two, at least the block size):\n"
"                          holes and all-zero chunks stored as holes,\n"
"                          identical chunks stored once\n"
"      --blobdev=PATH      with --chunksize: the chunks go to PATH (extra\n"
"                          device 1, made or replaced), not into IMAGE\n"
"  -L LABEL                volume label (at most 15 bytes)\n"
"  -U UUID|clear|random    filesystem UUID (default: random)\n"
"  -T SECONDS              image build time; also every file's time unless\n"
"                          --mkfs-time (default: now, or $SOURCE_DATE_EPOCH,\n"
"                          which also clamps newer file times down to it)\n"
"      --mkfs-time         -T sets only the image build time\n"
"      --all-time          give every file the build time\n"
"      --ignore-mtime      use compact inodes even when that loses mtimes\n"
"      --preserve-mtime    keep every mtime exactly (default)\n"
"      --all-root          make every file owned by root\n"
"      --force-uid=UID     set every file's owner to UID\n"
"      --force-gid=GID     set every file's group to GID\n"
"      --uid-offset=N      add N to every owner\n"
"      --gid-offset=N      add N to every group\n"
"      --exclude-path=PATH leave out PATH (relative to SOURCEDIR); repeatable\n"
"      --exclude-regex=RE  leave out paths matching RE; repeatable\n"
"  -x N                    share an xattr used by more than N inodes\n"
"                          (default 2); N < 0 drops all xattrs\n"
"      --xattr-prefix=P    store names starting with P through a long\n"
"                          prefix (e.g. trusted.overlay.); repeatable\n"
"      --xattr-inode-digest[=NAME]\n"
"                          give every regular file a SHA-256 fingerprint\n"
"                          xattr NAME (default " EROFS_DEFAULT_DIGEST_NAME ")\n"
"                          for page-cache sharing (mount -o inode_share)\n"
"  -E OPT[,OPT]            extended options: noinline_data,\n"
"                          force-inode-extended, legacy-compress (full\n"
"                          8-byte indexes instead of compact ones);\n"
"                          with -z: ztailpacking (a compressed file's last\n"
"                          extent inline in its inode block),\n"
"                          fragments[=SIZE] (tails and files up to a\n"
"                          pcluster packed into one compressed packed\n"
"                          inode; SIZE: its pcluster in bytes, k/M/G\n"
"                          allowed, at most -C's, default -C's),\n"
"                          all-fragments[=SIZE] (whole files packed),\n"
"                          dedupe (extents equal to earlier files' pclusters,\n"
"                          or to a prefix of one, found by a rolling\n"
"                          hash, share them)\n"
"      --workers=N         threads reading, hashing and compressing files\n"
"                          (default: CPUs; with -z and N > 1, the uncompressed\n"
"                          files are written by N more beside compression)\n"
"      --force             overwrite a device holding a filesystem\n"
"      --in-place          write an image file directly instead of through a\n"
"                          temporary copy renamed over it (no second copy)\n"
"      --dry-run           scan and lay out, write nothing\n"
"  -d N                    message level (0 errors .. 9 debug)\n"
"      --quiet             print errors only\n"
"  -V, --version           print the version and exit\n"
"  -h, --help              print this help and exit\n"
"\n"
"Exit status: 0 success, 1 failure, 16 usage error.\n", f);
}

static int parse_i64(const char *s, const char *what, int64_t min,
		     int64_t max, int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno || end == s || *end || v < min || v > max) {
		fprintf(stderr, "mkfs.erofs: invalid %s '%s'\n", what, s);
		return -1;
	}
	*out = v;
	return 0;
}

struct cli {
	struct erofs_mkfs_opts o;
	const char **exclude_paths;
	regex_t *regexes;
	const char **prefixes;
	size_t nx, nr, np;
	int level;
};

static int push_str(const char ***arr, size_t *n, const char *s)
{
	const char **g = realloc(*arr, (*n + 1) * sizeof(*g));

	if (!g)
		return -1;
	g[(*n)++] = s;
	*arr = g;
	return 0;
}

/* -z ALG[,level=N|,N]: the names, level ranges and defaults of erofs-utils
 * 1.9 ("deflate" and "libdeflate" are both libdeflate here, with the level
 * range of each name) */
static const struct compr_name {
	const char *name;
	enum erofs_compr compr;
	int min, max, def;	/* levels; max < 0: none */
} compr_names[] = {
	{ "lz4", EROFS_COMPR_LZ4, 0, -1, -1 },
	{ "lz4hc", EROFS_COMPR_LZ4HC, 0, 12, 9 },
	{ "lzma", EROFS_COMPR_LZMA, 0, 109, 6 },
	{ "deflate", EROFS_COMPR_DEFLATE, 0, 9, 1 },
	{ "libdeflate", EROFS_COMPR_DEFLATE, 0, 12, 1 },
	{ "zstd", EROFS_COMPR_ZSTD, 0, 22, 3 },
};

/* dictsize=N[k|K|m|M]: bytes, with erofs-utils' suffixes */
static int parse_dictsize(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	if (errno || end == s || *end || *s == '-' || v > UINT32_MAX)
		return -1;
	*out = v;
	return 0;
}

/* dictsize= of lzma (4 KiB to 8 MiB) or zstd (a power of two from 1 KiB to
 * 1 MiB), the ranges erofs-utils 1.9 accepts */
static int check_dictsize(const struct compr_name *c, uint64_t d,
			  const char *arg)
{
	if (c->compr == EROFS_COMPR_LZMA && d >= 4096 && d <= 8u << 20)
		return 0;
	if (c->compr == EROFS_COMPR_ZSTD && d >= 1024 && d <= 1u << 20 &&
	    !(d & (d - 1)))
		return 0;
	if (c->compr == EROFS_COMPR_LZMA || c->compr == EROFS_COMPR_ZSTD)
		fprintf(stderr, "mkfs.erofs: '%s': invalid %s dictsize (%s)\n",
			arg, c->name, c->compr == EROFS_COMPR_LZMA ?
			"4096 to 8 MiB" : "a power of two from 1 KiB to 1 MiB");
	else
		fprintf(stderr, "mkfs.erofs: '%s': %s takes no dictsize (lzma and zstd do)\n",
			arg, c->name);
	return -1;
}

/* one configuration of -z: ALG[,level=N|,N][,dictsize=N] */
static int parse_zcfg(struct erofs_zcfg *z, const char *arg)
{
	const char *comma = strchr(arg, ',');
	size_t len = comma ? (size_t)(comma - arg) : strlen(arg);
	const struct compr_name *c = NULL;
	char what[48], *copy, *save = NULL;
	int64_t v;
	uint64_t d;
	int ret = 0;

	for (size_t i = 0; i < sizeof(compr_names) / sizeof(*compr_names); i++)
		if (strlen(compr_names[i].name) == len &&
		    !strncmp(arg, compr_names[i].name, len))
			c = &compr_names[i];
	if (!c) {
		fprintf(stderr, "mkfs.erofs: compressor '%.*s' is not supported (lz4, lz4hc, lzma, deflate, libdeflate, zstd)\n",
			(int)len, arg);
		return -1;
	}
	z->compr = c->compr;
	z->level = c->def;
	z->dictsize = 0;
	if (!comma)
		return 0;
	copy = strdup(comma + 1);
	if (!copy)
		return -1;
	snprintf(what, sizeof(what), "%s level (%d-%d%s)", c->name, c->min,
		 c->compr == EROFS_COMPR_LZMA ? 9 : c->max,
		 c->compr == EROFS_COMPR_LZMA ? ", 100-109" : "");
	for (char *t = strtok_r(copy, ",", &save); t && !ret;
	     t = strtok_r(NULL, ",", &save)) {
		if (!strncmp(t, "dictsize=", 9)) {
			if (parse_dictsize(t + 9, &d)) {
				fprintf(stderr, "mkfs.erofs: '%s': invalid dictsize '%s'\n",
					arg, t + 9);
				ret = -1;
			} else if (check_dictsize(c, d, arg)) {
				ret = -1;
			} else {
				z->dictsize = (uint32_t)d;
			}
			continue;
		}
		if (!strncmp(t, "level=", 6))
			t += 6;
		else if (!isdigit((unsigned char)*t)) {
			fprintf(stderr, "mkfs.erofs: '%s': unknown compressor option '%s' (level=N, dictsize=N)\n",
				arg, t);
			ret = -1;
			continue;
		}
		if (c->max < 0) {
			fprintf(stderr, "mkfs.erofs: %s takes no level\n", c->name);
			ret = -1;
		} else if (parse_i64(t, what, c->min, c->max, &v)) {
			ret = -1;
		} else if (c->compr == EROFS_COMPR_LZMA && v > 9 && v < 100) {
			fprintf(stderr, "mkfs.erofs: invalid %s '%s'\n", what, t);
			ret = -1;
		} else {
			z->level = (int)v;
		}
	}
	free(copy);
	return ret;
}

/* -z A[,...][:B[,...]...]: the primary configuration, then the
 * alternatives a compress hint selects by index (erofs-utils' syntax); a
 * later -z replaces an earlier one */
static int parse_compressor(struct erofs_mkfs_opts *o, const char *arg)
{
	char *copy = strdup(arg), *save = NULL;
	int ret = 0;

	if (!copy)
		return -1;
	o->nzcfgs = 0;
	if (!*arg || arg[strlen(arg) - 1] == ':' || *arg == ':' ||
	    strstr(arg, "::")) {
		fprintf(stderr, "mkfs.erofs: '%s': empty compressor between ':'\n", arg);
		ret = -1;
	}
	for (char *t = strtok_r(copy, ":", &save); t && !ret;
	     t = strtok_r(NULL, ":", &save)) {
		if (o->nzcfgs == EROFS_MKFS_MAX_ZCFGS) {
			fprintf(stderr, "mkfs.erofs: '%s': at most %d compressors\n",
				arg, EROFS_MKFS_MAX_ZCFGS);
			ret = -1;
		} else {
			ret = parse_zcfg(&o->zcfgs[o->nzcfgs++], t);
		}
	}
	free(copy);
	return ret;
}

/* "=SIZE" after fragments / all-fragments (or nothing): the packed
 * inode's pcluster in bytes, with an optional k, M or G (x1024) as
 * erofs-utils takes it; 0 is -C's.  Checked against the block size and
 * the largest pcluster when the build starts. */
static int parse_packed_pcluster(struct erofs_mkfs_opts *o, const char *s)
{
	unsigned long long v;
	char *end;

	if (!*s)
		return 0;
	errno = 0;
	v = strtoull(s + 1, &end, 0);
	if (end != s + 1 && !errno && *end && !end[1]) {
		unsigned int sh = *end == 'k' || *end == 'K' ? 10 :
				  *end == 'm' || *end == 'M' ? 20 :
				  *end == 'g' || *end == 'G' ? 30 : 0;

		if (sh && v <= UINT32_MAX >> sh) {
			v <<= sh;
			end++;
		}
	}
	if (end == s + 1 || errno || *end || s[1] == '-' || v > UINT32_MAX) {
		fprintf(stderr, "mkfs.erofs: invalid pcluster size '%s' for the packed inode\n",
			s + 1);
		return -1;
	}
	o->packed_pcluster = (uint32_t)v;
	return 0;
}

static int parse_extended(struct erofs_mkfs_opts *o, const char *arg)
{
	char *copy = strdup(arg), *save = NULL;
	int ret = 0;

	if (!copy)
		return -1;
	for (char *t = strtok_r(copy, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		if (!strcmp(t, "noinline_data")) {
			o->noinline_data = true;
		} else if (!strcmp(t, "force-inode-extended")) {
			o->force_extended = true;
		} else if (!strcmp(t, "legacy-compress")) {
			o->legacy_compress = true;
		} else if (!strcmp(t, "ztailpacking")) {
			o->ztailpacking = true;
		} else if (!strcmp(t, "fragments") ||
			   !strncmp(t, "fragments=", 10)) {
			o->fragments = true;
			ret = parse_packed_pcluster(o, t + 9);
		} else if (!strcmp(t, "all-fragments") ||
			   !strncmp(t, "all-fragments=", 14)) {
			o->fragments = o->all_fragments = true;
			ret = parse_packed_pcluster(o, t + 13);
		} else if (!strcmp(t, "dedupe")) {
			o->dedupe = true;
		} else {
			fprintf(stderr, "mkfs.erofs: unsupported extended option '%s'\n", t);
			ret = -1;
		}
	}
	free(copy);
	return ret;
}

/* --tar=MODE and the stream filters (erofs-utils' names) */
static int parse_tar_opt(struct erofs_mkfs_opts *o, int opt, const char *arg)
{
	switch (opt) {
	case OPT_TAR:
		if (!strcmp(arg, "f")) {
			o->tar_mode = EROFS_TAR_FULL;
			return 0;
		}
		if (!strcmp(arg, "i")) {
			o->tar_mode = EROFS_TAR_INDEX;
			return 0;
		}
		if (!strcmp(arg, "headerball")) {
			o->tar_mode = EROFS_TAR_HEADERBALL;
			return 0;
		}
		fprintf(stderr, "mkfs.erofs: invalid --tar mode '%s' (f, i or headerball)\n", arg);
		return -1;
	case OPT_AUFS:
		o->aufs = true;
		return 0;
	case OPT_OVLFS_STRIP:
		if (arg && strcmp(arg, "0") && strcmp(arg, "1")) {
			fprintf(stderr, "mkfs.erofs: invalid --ovlfs-strip '%s' (0 or 1)\n", arg);
			return -1;
		}
		o->ovlfs_strip = !arg || !strcmp(arg, "1");
		return 0;
	default:
		if (arg && !*arg) {
			fprintf(stderr, "mkfs.erofs: --%s= needs a file name\n",
				opt == OPT_UNGZIP ? "ungzip" :
				opt == OPT_UNXZ ? "unxz" : "unzstd");
			return -1;
		}
		if (arg)	/* a copy of the decompressed archive */
			o->tar_dump = arg;
		o->tar_codec = opt == OPT_UNGZIP ? EROFS_TAR_GZIP :
			       opt == OPT_UNXZ ? EROFS_TAR_XZ : EROFS_TAR_ZSTD;
		return 0;
	}
}

static int parse_args(struct cli *c, int argc, char **argv)
{
	bool saw_tar = false;
	struct erofs_mkfs_opts *o = &c->o;
	bool have_t = false, mkfs_time = false, all_time = false;
	const char *sde = getenv("SOURCE_DATE_EPOCH");
	int64_t v;
	int opt;

	while ((opt = getopt_long(argc, argv, "b:L:U:T:x:d:E:z:C:Vh", long_opts,
				  NULL)) != -1) {
		switch (opt) {
		case 'b':
			if (parse_i64(optarg, "block size", 512, 65536, &v) ||
			    (v & (v - 1))) {
				fprintf(stderr, "mkfs.erofs: block size must be a power of two from 512 to 65536\n");
				return -1;
			}
			o->blkszbits = 0;
			while ((1LL << o->blkszbits) < v)
				o->blkszbits++;
			break;
		case 'L':
			if (strlen(optarg) > 15) {
				fprintf(stderr, "mkfs.erofs: volume label '%s' is longer than 15 bytes\n", optarg);
				return -1;
			}
			snprintf(o->label, sizeof(o->label), "%s", optarg);
			break;
		case 'U':
			if (!strcmp(optarg, "clear")) {
				memset(o->uuid, 0, 16);
				o->uuid_mode = EROFS_UUID_GIVEN;
			} else if (!strcmp(optarg, "random")) {
				o->uuid_mode = EROFS_UUID_RANDOM;
			} else if (uuid_parse(optarg, o->uuid) == 0) {
				o->uuid_mode = EROFS_UUID_GIVEN;
			} else {
				fprintf(stderr, "mkfs.erofs: invalid UUID '%s'\n", optarg);
				return -1;
			}
			break;
		case 'T':
			if (parse_i64(optarg, "timestamp", 0, INT64_MAX / 2, &v))
				return -1;
			o->build_time = v;
			have_t = true;
			break;
		case 'x':
			if (parse_i64(optarg, "xattr tolerance", INT_MIN, INT_MAX, &v))
				return -1;
			o->xattr_tolerance = (int)v;
			break;
		case 'd':
			if (parse_i64(optarg, "message level", 0, 9, &v))
				return -1;
			c->level = v >= 5 ? FSF_DEBUG : v >= 3 ? FSF_VERBOSE :
				   v >= 1 ? FSF_NORMAL : FSF_QUIET;
			break;
		case 'E':
			if (parse_extended(o, optarg))
				return -1;
			break;
		case 'z':
			if (parse_compressor(o, optarg))
				return -1;
			break;
		case 'C':
			if (parse_i64(optarg, "physical cluster size", 512,
				      1 << 20, &v))
				return -1;
			o->pcluster_size = (uint32_t)v;
			break;
		case OPT_ALL_ROOT: o->all_root = true; break;
		case OPT_ALL_TIME: all_time = true; break;
		case OPT_MKFS_TIME: mkfs_time = true; break;
		case OPT_IGNORE_MTIME: o->ignore_mtime = true; break;
		case OPT_PRESERVE_MTIME: o->ignore_mtime = false; break;
		case OPT_FORCE: o->force = true; break;
		case OPT_DRY_RUN: o->dry_run = true; break;
		case OPT_IN_PLACE: o->in_place = true; break;
		case OPT_MAX_EXTENT:
			if (parse_i64(optarg, "maximum extent size", 512,
				      UINT32_MAX, &v))
				return -1;
			o->max_extent_bytes = (uint32_t)v;
			break;
		case OPT_CHUNKSIZE:	/* checked against -b below */
			if (parse_i64(optarg, "chunk size", 512, INT64_MAX, &v))
				return -1;
			o->chunk_size = (uint64_t)v;
			break;
		case OPT_BLOBDEV: o->blobdev = optarg; break;
		case OPT_COMPRESS_HINTS: o->compress_hints = optarg; break;
		case OPT_SORT:
			if (strcmp(optarg, "path") && strcmp(optarg, "none")) {
				fprintf(stderr, "mkfs.erofs: invalid --sort '%s' (path or none)\n", optarg);
				return -1;
			}
			o->sort_none = !strcmp(optarg, "none");
			break;
		case OPT_QUIET: c->level = FSF_QUIET; break;
		case OPT_OCI:
			if (parse_oci(o, optarg))
				return -1;
			break;
		case OPT_TAR:
			saw_tar = true;
			/* fall through */
		case OPT_UNGZIP:
		case OPT_UNXZ:
		case OPT_UNZSTD:
		case OPT_AUFS:
		case OPT_OVLFS_STRIP:
			if (parse_tar_opt(o, opt, optarg))
				return -1;
			break;
		case OPT_FORCE_UID:
			if (parse_i64(optarg, "uid", 0, UINT32_MAX, &o->force_uid))
				return -1;
			break;
		case OPT_FORCE_GID:
			if (parse_i64(optarg, "gid", 0, UINT32_MAX, &o->force_gid))
				return -1;
			break;
		case OPT_UID_OFFSET:
			if (parse_i64(optarg, "uid offset", -(int64_t)UINT32_MAX,
				      UINT32_MAX, &o->uid_offset))
				return -1;
			break;
		case OPT_GID_OFFSET:
			if (parse_i64(optarg, "gid offset", -(int64_t)UINT32_MAX,
				      UINT32_MAX, &o->gid_offset))
				return -1;
			break;
		case OPT_EXCLUDE_PATH:
			if (push_str(&c->exclude_paths, &c->nx, optarg))
				return -1;
			break;
		case OPT_EXCLUDE_REGEX: {
			regex_t *g = realloc(c->regexes, (c->nr + 1) * sizeof(*g));
			int e;

			if (!g)
				return -1;
			c->regexes = g;
			e = regcomp(&g[c->nr], optarg, REG_EXTENDED | REG_NOSUB);
			if (e) {
				char msg[256];

				regerror(e, &g[c->nr], msg, sizeof(msg));
				fprintf(stderr, "mkfs.erofs: invalid --exclude-regex '%s': %s\n", optarg, msg);
				return -1;
			}
			c->nr++;
			break;
		}
		case OPT_XATTR_PREFIX:
			if (push_str(&c->prefixes, &c->np, optarg))
				return -1;
			break;
		case OPT_DIGEST:
			o->digest_name = optarg && *optarg ? optarg :
					 EROFS_DEFAULT_DIGEST_NAME;
			break;
		case OPT_WORKERS:
			if (parse_i64(optarg, "worker count", 1, 1024, &v))
				return -1;
			o->workers = (unsigned int)v;
			break;
		case 'V':
			printf("mkfs.erofs (fsforge) %s\n", PACKAGE_VERSION);
			exit(0);
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (o->sort_none && o->tar_mode == EROFS_TAR_NONE) {
		fprintf(stderr, "mkfs.erofs: --sort=none needs --tar or --oci (a directory has no archive order)\n");
		return -1;
	}
	if ((o->tar_codec != EROFS_TAR_PLAIN || o->aufs || o->ovlfs_strip) &&
	    o->tar_mode == EROFS_TAR_NONE) {
		fprintf(stderr, "mkfs.erofs: --ungzip, --unxz, --unzstd, --aufs and --ovlfs-strip need --tar\n");
		return -1;
	}
	if (o->blobdev && !o->chunk_size) {
		fprintf(stderr, "mkfs.erofs: --blobdev needs --chunksize\n");
		return -1;
	}
	if ((o->tar_mode == EROFS_TAR_INDEX ||
	     o->tar_mode == EROFS_TAR_HEADERBALL) &&
	    (o->chunk_size || o->nzcfgs)) {
		fprintf(stderr, "mkfs.erofs: --tar=%s stores no file data: -z and --chunksize do not apply\n",
			o->tar_mode == EROFS_TAR_INDEX ? "i" : "headerball");
		return -1;
	}
	/* index mode maps 512-byte tar blocks: erofs-utils' block size,
	 * whatever -b says */
	if (o->tar_mode == EROFS_TAR_INDEX)
		o->blkszbits = 9;
	if (o->oci && (o->tar_codec != EROFS_TAR_PLAIN || saw_tar)) {
		fprintf(stderr, "mkfs.erofs: --oci takes no --tar, --ungzip, --unxz or --unzstd (each layer's media type says how it is compressed)\n");
		return -1;
	}
	if (o->oci && argc - optind != 2) {
		fprintf(stderr, "mkfs.erofs: expected IMAGE and OCIDIR, a local OCI image layout directory\n");
		usage(stderr);
		return -1;
	}
	/* with --tar, no TARFILE is standard input (argv[argc] is NULL) */
	if (argc - optind != 2 &&
	    (o->tar_mode == EROFS_TAR_NONE || argc - optind != 1)) {
		fprintf(stderr, "mkfs.erofs: expected IMAGE and %s\n",
			o->tar_mode != EROFS_TAR_NONE ? "TARFILE (or -)" : "SOURCEDIR");
		usage(stderr);
		return -1;
	}
	if (o->chunk_size && ((o->chunk_size & (o->chunk_size - 1)) ||
			      o->chunk_size < (1u << o->blkszbits) ||
			      o->chunk_size >> o->blkszbits > (1ull << 31))) {
		fprintf(stderr, "mkfs.erofs: chunk size %" PRIu64 " must be a power of two from the block size (%u) to 2^31 blocks\n",
			o->chunk_size, 1u << o->blkszbits);
		return -1;
	}
	/* erofs-utils semantics: -T also stamps every file unless
	 * --mkfs-time says it is only the image's time */
	o->all_time = all_time || (have_t && !mkfs_time);
	o->free_epoch = !have_t && !(sde && *sde);
	if (!have_t && sde && *sde) {
		/* SOURCE_DATE_EPOCH (without -T, which wins): the build
		 * time, and no file newer than it (erofs-utils 1.9) */
		if (parse_i64(sde, "SOURCE_DATE_EPOCH", 0, INT64_MAX / 2, &v))
			return -1;
		o->build_time = v;
		o->clamp_time = !all_time;
	}
	o->image = argv[optind];
	o->source = argv[optind + 1];
	o->exclude_paths = c->exclude_paths;
	o->n_exclude_paths = c->nx;
	o->exclude_regexes = c->regexes;
	o->n_exclude_regexes = c->nr;
	o->xattr_prefixes = c->prefixes;
	o->n_xattr_prefixes = c->np;
	return 0;
}

static void cli_free(struct cli *c)
{
	for (size_t i = 0; i < c->nr; i++)
		regfree(&c->regexes[i]);
	free(c->regexes);
	free(c->exclude_paths);
	free(c->prefixes);
}

int main(int argc, char **argv)
{
	struct cli c = { .level = FSF_NORMAL };
	struct erofs_mkfs_stats st;
	struct fsf_log log;
	char uuid[37];
	int ret;

	erofs_mkfs_opts_init(&c.o);
	if (parse_args(&c, argc, argv)) {
		cli_free(&c);
		return 16;
	}
	log.prog = "mkfs.erofs";
	log.level = c.level;
	c.o.progress = c.level >= FSF_NORMAL;

	ret = erofs_mkfs(&c.o, &log, &st);
	cli_free(&c);
	if (ret)
		return 1;
	uuid_unparse_lower(st.uuid, uuid);
	if (c.o.chunk_size && !c.o.dry_run)
		fsf_out(&log, "%s: %" PRIu64 " chunked files, %" PRIu64
			" hole chunks, %" PRIu64 " deduplicated chunks",
			c.o.image, st.chunked, st.hole_chunks, st.dedup_chunks);
	fsf_out(&log, "%s%s: %" PRIu64 " blocks of %u bytes, %" PRIu64
		" inodes, %" PRIu64 " fingerprints, %" PRIu64
		" compressed files, uuid %s",
		c.o.dry_run ? "(dry run) " : "", c.o.image, st.blocks,
		1u << c.o.blkszbits, st.inodes, st.fingerprints, st.compressed,
		uuid);
	if (st.dev_blocks && !c.o.dry_run)
		fsf_out(&log, "%s: extra device 1 (%s): %" PRIu64 " blocks, %" PRIu64 " files mapped to it",
			c.o.image, c.o.blobdev ? c.o.blobdev :
			c.o.source && strcmp(c.o.source, "-") ? c.o.source : "the tar read from standard input",
			st.dev_blocks, st.chunked);
	return 0;
}
