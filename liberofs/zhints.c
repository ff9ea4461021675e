// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * --compress-hints=FILE: a per-file pcluster size and compression
 * configuration, with erofs-utils 1.9's grammar and matching.  Each line
 *
 *	PCLUSTER_SIZE [ZCFG_INDEX] REGEX
 *
 * (fields separated by spaces or tabs; REGEX is the rest of the line, an
 * extended regular expression) gives the files whose path in the image,
 * without a leading '/' ("dir/file"), REGEX matches (anywhere in it,
 * unless anchored) a pcluster of PCLUSTER_SIZE bytes and the compression
 * configuration ZCFG_INDEX of -z (0, the primary, when left out).  The
 * first matching line wins; a file no line matches takes -C and the
 * primary.  A PCLUSTER_SIZE of 0 leaves the files it matches
 * uncompressed; one that is not a multiple of the block size makes the
 * line ignored, with a warning (as erofs-utils).  A hint's size above -C
 * raises the image's largest pcluster.  Lines starting with '#' and empty
 * lines are skipped.  Unlike erofs-utils, a size or index that is not a
 * decimal number, or a REGEX that does not compile, is an error.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/erofs_fs.h"
#include "internal.h"

struct erofs_zhint {
	regex_t re;
	uint32_t pclblks;	/* 0: not compressed */
	uint8_t zcfg;
};

/* the next field of *P (spaces and tabs around it skipped), or NULL */
static char *field(char **p)
{
	char *s = *p, *e;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return NULL;
	for (e = s; *e && *e != ' ' && *e != '\t'; e++)
		;
	*p = *e ? e + 1 : e;
	*e = '\0';
	return s;
}

static bool decimal(const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return !*end && !errno && *v <= max;
}

/* parse line LINE (NUL-terminated, no newline) of the file into *H;
 * 1: a hint, 0: skipped, -EINVAL: reported */
static int parse_line(struct erofs_build *b, char *buf, unsigned int line,
		      struct erofs_zhint *h)
{
	const char *file = b->opts->compress_hints;
	char *p = buf, *size, *second, *rest;
	unsigned long pcl, idx = 0;
	int e;

	if (*buf == '#' || !*buf)
		return 0;
	size = field(&p);
	if (!size)
		return 0;	/* blanks only */
	second = field(&p);
	while (*p == ' ' || *p == '\t')
		p++;
	rest = *p ? p : NULL;
	if (!second) {
		fsf_err(b->log, "%s:%u: no match pattern (PCLUSTER_SIZE [INDEX] REGEX)",
			file, line);
		return -EINVAL;
	}
	if (!decimal(size, UINT32_MAX, &pcl)) {
		fsf_err(b->log, "%s:%u: invalid pcluster size '%s' (bytes, a decimal number)",
			file, line, size);
		return -EINVAL;
	}
	if (rest) {	/* three fields: the second is the index */
		if (!decimal(second, EROFS_MKFS_MAX_ZCFGS, &idx) ||
		    idx >= b->opts->nzcfgs) {
			fsf_err(b->log, "%s:%u: invalid compression configuration index '%s' (0 to %u, the place of the algorithm in -z)",
				file, line, second, b->opts->nzcfgs - 1);
			return -EINVAL;
		}
	} else {
		rest = second;
	}
	if (pcl % b->blksz) {
		fsf_warn(b->log, "%s:%u: pcluster size %lu is not a multiple of the block size %u: line ignored",
			 file, line, pcl, b->blksz);
		return 0;
	}
	if (pcl > Z_EROFS_PCLUSTER_MAX_SIZE || pcl / b->blksz > 1024) {
		fsf_err(b->log, "%s:%u: pcluster size %lu is larger than %u bytes or 1024 blocks",
			file, line, pcl, Z_EROFS_PCLUSTER_MAX_SIZE);
		return -EINVAL;
	}
	e = regcomp(&h->re, rest, REG_EXTENDED | REG_NOSUB);
	if (e) {
		char msg[128];

		regerror(e, &h->re, msg, sizeof(msg));
		fsf_err(b->log, "%s:%u: invalid regular expression '%s': %s",
			file, line, rest, msg);
		return -EINVAL;
	}
	h->pclblks = (uint32_t)(pcl / b->blksz);
	h->zcfg = (uint8_t)idx;
	return 1;
}

int erofs_zhints_load(struct erofs_build *b)
{
	const char *file = b->opts->compress_hints;
	char *buf = NULL;
	size_t cap = 0;
	ssize_t len;
	unsigned int line = 0;
	FILE *f;
	int ret = 0;

	if (!file)
		return 0;
	f = fopen(file, "re");
	if (!f) {
		ret = -errno;
		fsf_err(b->log, "cannot open compress hints %s: %s", file,
			strerror(-ret));
		return ret;
	}
	while ((len = getline(&buf, &cap, f)) >= 0) {
		struct erofs_zhint h, *g;
		int r;

		line++;
		if (len && buf[len - 1] == '\n')
			buf[--len] = '\0';
		if (len && buf[len - 1] == '\r')
			buf[--len] = '\0';
		if (strlen(buf) != (size_t)len) {
			fsf_err(b->log, "%s:%u: NUL byte in the line", file, line);
			ret = -EINVAL;
			break;
		}
		r = parse_line(b, buf, line, &h);
		if (r < 0) {
			ret = r;
			break;
		}
		if (!r)
			continue;
		g = realloc(b->zhints, (b->nzhints + 1) * sizeof(*g));
		if (!g) {
			regfree(&h.re);
			ret = -ENOMEM;
			break;
		}
		b->zhints = g;
		b->zhints[b->nzhints++] = h;
	}
	if (!ret && ferror(f)) {
		ret = -EIO;
		fsf_err(b->log, "cannot read compress hints %s", file);
	}
	free(buf);
	fclose(f);
	return ret;
}

void erofs_zhint_apply(const struct erofs_build *b, struct erofs_node *n,
		       const char *path)
{
	n->zpcl = b->pcl_def;
	n->zcfg = 0;
	for (size_t i = 0; i < b->nzhints; i++) {
		if (!regexec(&b->zhints[i].re, path, 0, NULL, 0)) {
			n->zpcl = b->zhints[i].pclblks;
			n->zcfg = b->zhints[i].zcfg;
			return;
		}
	}
}

uint32_t erofs_zhints_max_pcl(const struct erofs_build *b)
{
	uint32_t m = 0;

	for (size_t i = 0; i < b->nzhints; i++)
		if (b->zhints[i].pclblks > m)
			m = b->zhints[i].pclblks;
	return m;
}

void erofs_zhints_free(struct erofs_build *b)
{
	for (size_t i = 0; i < b->nzhints; i++)
		regfree(&b->zhints[i].re);
	free(b->zhints);
	b->zhints = NULL;
	b->nzhints = 0;
}
