// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mkfs.erofs --oci over a local OCI image layout (what skopeo copy ...
 * oci:DIR writes): oci-layout names the layout version, index.json lists
 * manifests or image indexes (followed, nested, up to OCI_MAX_NESTING),
 * the first image manifest for the platform (descriptors without a
 * platform match any) gives the layers in order.  Each JSON blob is
 * read whole (at most OCI_JSON_MAX bytes) and checked against its
 * descriptor's size and SHA-256 before it is parsed; layers are checked
 * while they are read (tar_stream_verify).  The source is a directory:
 * a registry reference is refused, never resolved.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsforge/json.h"
#include "oci.h"

#define MT_OCI_INDEX "application/vnd.oci.image.index.v1+json"
#define MT_OCI_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define MT_DOCKER_LIST "application/vnd.docker.distribution.manifest.list.v2+json"
#define MT_DOCKER_MANIFEST "application/vnd.docker.distribution.manifest.v2+json"

struct oci_ctx {
	const struct erofs_mkfs_opts *o;
	const struct fsf_log *log;
	const char *dir;
	const char *os, *arch, *variant;	/* the platform wanted */
	char platbuf[128];
};

struct desc {
	const char *media_type;		/* NULL when absent */
	char digest[72];
	uint8_t sha[32];
	uint64_t size;
};

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* "sha256:" and 64 lowercase hex digits into D */
static int parse_digest(struct oci_ctx *c, const char *s, const char *where,
			struct desc *d)
{
	const char *colon = s ? strchr(s, ':') : NULL;

	if (!s || !colon) {
		fsf_err(c->log, "%s: %s has no digest (algorithm:hex)", c->dir, where);
		return -EINVAL;
	}
	if (colon - s != 6 || memcmp(s, "sha256", 6)) {
		fsf_err(c->log, "%s: %s: digest %.80s uses an algorithm other than sha256 (not supported)",
			c->dir, where, s);
		return -EINVAL;
	}
	if (strlen(colon + 1) != 64) {
		fsf_err(c->log, "%s: %s: digest %.80s is not 64 hex digits", c->dir, where, s);
		return -EINVAL;
	}
	for (int i = 0; i < 32; i++) {
		int hi = hexval(colon[1 + 2 * i]), lo = hexval(colon[2 + 2 * i]);

		if (hi < 0 || lo < 0) {
			fsf_err(c->log, "%s: %s: digest %.80s is not lowercase hex",
				c->dir, where, s);
			return -EINVAL;
		}
		d->sha[i] = (uint8_t)(hi << 4 | lo);
	}
	snprintf(d->digest, sizeof(d->digest), "%s", s);
	return 0;
}

static int parse_desc(struct oci_ctx *c, const struct json_value *v,
		      const char *where, struct desc *d)
{
	if (!v || v->type != JSON_OBJECT) {
		fsf_err(c->log, "%s: %s is not a descriptor object", c->dir, where);
		return -EINVAL;
	}
	d->media_type = json_get_str(v, "mediaType");
	if (parse_digest(c, json_get_str(v, "digest"), where, d))
		return -EINVAL;
	if (json_uint(json_get(v, "size"), &d->size)) {
		fsf_err(c->log, "%s: %s (%s) has no size, or not a whole number",
			c->dir, where, d->digest);
		return -EINVAL;
	}
	return 0;
}

static char *blob_path(struct oci_ctx *c, const char *digest)
{
	size_t len = strlen(c->dir) + strlen(digest) + 16;
	char *p = malloc(len);

	if (p)
		snprintf(p, len, "%s/blobs/sha256/%s", c->dir, digest + 7);
	return p;
}

/* the whole file PATH (at most OCI_JSON_MAX bytes) into *BUF */
static int read_file(struct oci_ctx *c, const char *path, const char *what,
		     char **buf, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	size_t got = 0;
	char *b;

	if (fd < 0) {
		int e = errno;

		fsf_err(c->log, "%s: cannot open %s (%s): %s", c->dir, what, path,
			strerror(e));
		return -e;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > OCI_JSON_MAX) {
		fsf_err(c->log, "%s: %s (%s) is not a regular file of at most %u bytes",
			c->dir, what, path, OCI_JSON_MAX);
		close(fd);
		return -EINVAL;
	}
	b = malloc((size_t)st.st_size + 1);
	if (!b) {
		close(fd);
		return -ENOMEM;
	}
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, b + got, (size_t)st.st_size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			int e = r < 0 ? errno : EIO;

			fsf_err(c->log, "%s: cannot read %s (%s): %s", c->dir, what,
				path, r < 0 ? strerror(e) : "the file shrank");
			free(b);
			close(fd);
			return -e;
		}
		got += (size_t)r;
	}
	close(fd);
	b[got] = '\0';
	*buf = b;
	*len = got;
	return 0;
}

static int parse_json(struct oci_ctx *c, const char *buf, size_t len,
		      const char *what, struct json_value **out)
{
	char why[160];
	int ret = json_parse(buf, len, out, why, sizeof(why));

	if (ret == -ENOMEM)
		return ret;
	if (ret) {
		fsf_err(c->log, "%s: %s is not valid JSON: %s", c->dir, what, why);
		return -EINVAL;
	}
	if ((*out)->type != JSON_OBJECT) {
		fsf_err(c->log, "%s: %s is not a JSON object", c->dir, what);
		json_free(*out);
		*out = NULL;
		return -EINVAL;
	}
	return 0;
}

/* the JSON blob D, its size and digest checked, parsed */
static int read_json_blob(struct oci_ctx *c, const struct desc *d,
			  const char *what, struct json_value **out)
{
	char *path, *buf = NULL, name[120], hex[65];
	uint8_t got[32];
	unsigned int glen = 0;
	size_t len = 0;
	int ret;

	snprintf(name, sizeof(name), "%s %s", what, d->digest);
	if (d->size > OCI_JSON_MAX) {
		fsf_err(c->log, "%s: %s: its descriptor gives %llu bytes, more than the %u read",
			c->dir, name, (unsigned long long)d->size, OCI_JSON_MAX);
		return -EINVAL;
	}
	path = blob_path(c, d->digest);
	if (!path)
		return -ENOMEM;
	ret = read_file(c, path, name, &buf, &len);
	free(path);
	if (ret)
		return ret;
	if (len != d->size) {
		fsf_err(c->log, "%s: blob %s (%s) is %zu bytes, its descriptor gives %llu",
			c->dir, d->digest, what, len, (unsigned long long)d->size);
		free(buf);
		return -EIO;
	}
	if (EVP_Digest(buf, len, got, &glen, EVP_sha256(), NULL) != 1) {
		free(buf);
		return -ENOMEM;
	}
	if (memcmp(got, d->sha, 32)) {
		for (int i = 0; i < 32; i++)
			snprintf(hex + 2 * i, 3, "%02x", got[i]);
		fsf_err(c->log, "%s: blob %s (%s) does not match its digest: its content hashes to sha256:%s",
			c->dir, d->digest, what, hex);
		free(buf);
		return -EIO;
	}
	ret = parse_json(c, buf, len, name, out);
	free(buf);
	return ret;
}

static bool is_index(const char *mt)
{
	return mt && (!strcmp(mt, MT_OCI_INDEX) || !strcmp(mt, MT_DOCKER_LIST));
}

static bool is_manifest(const char *mt)
{
	return mt && (!strcmp(mt, MT_OCI_MANIFEST) || !strcmp(mt, MT_DOCKER_MANIFEST));
}

/* a descriptor's platform against the one wanted; none matches any */
static bool platform_matches(struct oci_ctx *c, const struct json_value *m)
{
	const struct json_value *p = json_get(m, "platform");
	const char *os, *arch, *variant;

	if (!p)
		return true;
	os = json_get_str(p, "os");
	arch = json_get_str(p, "architecture");
	variant = json_get_str(p, "variant");
	if (!os || !arch || strcmp(os, c->os) || strcmp(arch, c->arch))
		return false;
	return !c->variant || (variant && !strcmp(variant, c->variant));
}

/* the first image manifest for the platform under index DOC (WHAT, for
 * messages) into *FOUND; 1: none there */
static int find_manifest(struct oci_ctx *c, const struct json_value *doc,
			 const char *what, int depth, struct desc *found)
{
	const struct json_value *ms = json_get(doc, "manifests");
	char where[200];

	if (!ms || ms->type != JSON_ARRAY) {
		fsf_err(c->log, "%s: %s has no \"manifests\" array", c->dir, what);
		return -EINVAL;
	}
	for (size_t i = 0; i < ms->n; i++) {
		const struct json_value *m = &ms->items[i];
		struct desc d;
		int ret;

		snprintf(where, sizeof(where), "%s manifests[%zu]", what, i);
		ret = parse_desc(c, m, where, &d);
		if (ret)
			return ret;
		if (!platform_matches(c, m))
			continue;
		if (is_manifest(d.media_type)) {
			*found = d;
			/* it points into a document freed after this */
			found->media_type = NULL;
			return 0;
		}
		if (is_index(d.media_type)) {
			struct json_value *sub;

			if (depth >= OCI_MAX_NESTING) {
				fsf_err(c->log, "%s: image indexes nested deeper than %d (%s)",
					c->dir, OCI_MAX_NESTING, d.digest);
				return -EINVAL;
			}
			ret = read_json_blob(c, &d, "image index", &sub);
			if (ret)
				return ret;
			snprintf(where, sizeof(where), "image index %s", d.digest);
			ret = find_manifest(c, sub, where, depth + 1, found);
			json_free(sub);
			if (ret <= 0)
				return ret;
		}
		/* other artifacts (signatures, attestations) are passed */
	}
	return 1;
}

static int layer_codec(const char *mt, enum tar_codec *codec)
{
	static const struct { const char *mt; enum tar_codec codec; } known[] = {
		{ "application/vnd.oci.image.layer.v1.tar", TAR_PLAIN },
		{ "application/vnd.oci.image.layer.v1.tar+gzip", TAR_GZIP },
		{ "application/vnd.oci.image.layer.v1.tar+zstd", TAR_ZSTD },
		{ "application/vnd.docker.image.rootfs.diff.tar", TAR_PLAIN },
		{ "application/vnd.docker.image.rootfs.diff.tar.gzip", TAR_GZIP },
		{ "application/vnd.docker.image.rootfs.diff.tar.zstd", TAR_ZSTD },
	};

	for (size_t i = 0; mt && i < sizeof(known) / sizeof(known[0]); i++) {
		if (!strcmp(mt, known[i].mt)) {
			*codec = known[i].codec;
			return 0;
		}
	}
	return -EINVAL;
}

static int add_layer(struct oci_ctx *c, const struct json_value *l, size_t i,
		     struct oci_layer *out)
{
	char where[64];
	struct desc d;
	int ret;

	snprintf(where, sizeof(where), "layer %zu", i);
	ret = parse_desc(c, l, where, &d);
	if (ret)
		return ret;
	if (layer_codec(d.media_type, &out->codec)) {
		fsf_err(c->log, "%s: layer %zu (%s) has media type '%.120s': only tar, tar+gzip and tar+zstd layers are read",
			c->dir, i, d.digest, d.media_type ? d.media_type : "(none)");
		return -EINVAL;
	}
	memcpy(out->digest, d.digest, sizeof(out->digest));
	memcpy(out->sha, d.sha, sizeof(out->sha));
	out->size = d.size;
	out->index = i;
	out->path = blob_path(c, d.digest);
	return out->path ? 0 : -ENOMEM;
}

static int pick_layers(struct oci_ctx *c, const struct json_value *man,
		       const char *mdigest, struct oci_layer **out, size_t *n)
{
	const struct json_value *ls = json_get(man, "layers");
	const struct erofs_mkfs_opts *o = c->o;
	struct oci_layer *l;
	size_t first = 0, count;
	int ret = 0;

	if (!ls || ls->type != JSON_ARRAY) {
		fsf_err(c->log, "%s: image manifest %s has no \"layers\" array", c->dir, mdigest);
		return -EINVAL;
	}
	count = ls->n;
	if (o->oci_blob) {
		for (first = 0; first < ls->n; first++)
			if (!strcmp(json_get_str(&ls->items[first], "digest") ?
				    json_get_str(&ls->items[first], "digest") : "",
				    o->oci_blob))
				break;
		if (first == ls->n) {
			fsf_err(c->log, "%s: blob %s is not a layer of image manifest %s",
				c->dir, o->oci_blob, mdigest);
			return -ENOENT;
		}
		count = 1;
	} else if (o->oci_layer >= 0) {
		if ((uint64_t)o->oci_layer >= ls->n) {
			fsf_err(c->log, "%s: layer %lld does not exist: image manifest %s has %zu layers (0 to %zu)",
				c->dir, (long long)o->oci_layer, mdigest, ls->n,
				ls->n ? ls->n - 1 : 0);
			return -ENOENT;
		}
		first = (size_t)o->oci_layer;
		count = 1;
	}
	if (!count) {
		fsf_err(c->log, "%s: image manifest %s has no layers", c->dir, mdigest);
		return -EINVAL;
	}
	l = calloc(count, sizeof(*l));
	if (!l)
		return -ENOMEM;
	for (size_t i = 0; i < count && !ret; i++)
		ret = add_layer(c, &ls->items[first + i], first + i, &l[i]);
	if (ret) {
		oci_layers_free(l, count);
		return ret;
	}
	*out = l;
	*n = count;
	return 0;
}

static int set_platform(struct oci_ctx *c)
{
	const char *p = c->o->oci_platform ? c->o->oci_platform : "linux/amd64";
	char *s1, *s2;

	snprintf(c->platbuf, sizeof(c->platbuf), "%s", p);
	s1 = strchr(c->platbuf, '/');
	if (!s1 || s1 == c->platbuf || !s1[1] || strlen(p) >= sizeof(c->platbuf)) {
		fsf_err(c->log, "--oci: platform '%s' is not OS/ARCH[/VARIANT]", p);
		return -EINVAL;
	}
	*s1++ = '\0';
	s2 = strchr(s1, '/');
	if (s2) {
		*s2++ = '\0';
		if (!*s2 || strchr(s2, '/')) {
			fsf_err(c->log, "--oci: platform '%s' is not OS/ARCH[/VARIANT]", p);
			return -EINVAL;
		}
	}
	c->os = c->platbuf;
	c->arch = s1;
	c->variant = s2;
	return 0;
}

/* the source is a layout directory with a version 1 oci-layout */
static int check_layout(struct oci_ctx *c)
{
	struct json_value *v = NULL;
	struct stat st;
	char *path, *buf = NULL;
	const char *ver;
	size_t len;
	int ret;

	if (stat(c->dir, &st) || !S_ISDIR(st.st_mode)) {
		fsf_err(c->log, "--oci: %s is not a local OCI image layout directory; no registry is ever contacted (copy the image first, e.g. skopeo copy docker://REF oci:DIR)",
			c->dir);
		return -ENOENT;
	}
	len = strlen(c->dir) + 16;
	path = malloc(len);
	if (!path)
		return -ENOMEM;
	snprintf(path, len, "%s/oci-layout", c->dir);
	ret = read_file(c, path, "oci-layout", &buf, &len);
	free(path);
	if (!ret)
		ret = parse_json(c, buf, len, "oci-layout", &v);
	free(buf);
	if (ret)
		return ret;
	ver = json_get_str(v, "imageLayoutVersion");
	if (!ver || strncmp(ver, "1.", 2)) {
		fsf_err(c->log, "%s: oci-layout gives imageLayoutVersion '%.40s', not 1.x",
			c->dir, ver ? ver : "(none)");
		ret = -EINVAL;
	}
	json_free(v);
	return ret;
}

int oci_select_layers(const struct erofs_mkfs_opts *o,
		      const struct fsf_log *log, struct oci_layer **out,
		      size_t *n)
{
	struct oci_ctx c = { .o = o, .log = log, .dir = o->source };
	struct json_value *index = NULL, *man = NULL;
	struct desc md;
	char *path, *buf = NULL;
	size_t len;
	int ret;

	*out = NULL;
	*n = 0;
	if (!c.dir) {
		fsf_err(log, "--oci needs SOURCE, an OCI image layout directory");
		return -EINVAL;
	}
	ret = set_platform(&c);
	if (!ret)
		ret = check_layout(&c);
	if (ret)
		return ret;
	len = strlen(c.dir) + 16;
	path = malloc(len);
	if (!path)
		return -ENOMEM;
	snprintf(path, len, "%s/index.json", c.dir);
	ret = read_file(&c, path, "index.json", &buf, &len);
	free(path);
	if (!ret)
		ret = parse_json(&c, buf, len, "index.json", &index);
	free(buf);
	if (!ret)
		ret = find_manifest(&c, index, "index.json", 0, &md);
	if (ret == 1) {
		fsf_err(log, "%s: no image manifest for platform %s", c.dir,
			o->oci_platform ? o->oci_platform : "linux/amd64");
		ret = -ENOENT;
	}
	if (!ret)
		ret = read_json_blob(&c, &md, "image manifest", &man);
	if (!ret) {
		const char *mt = json_get_str(man, "mediaType");

		if (mt && !is_manifest(mt)) {
			fsf_err(log, "%s: image manifest %s has media type '%.120s'",
				c.dir, md.digest, mt);
			ret = -EINVAL;
		}
	}
	if (!ret)
		ret = pick_layers(&c, man, md.digest, out, n);
	json_free(index);
	json_free(man);
	return ret;
}

void oci_layers_free(struct oci_layer *l, size_t n)
{
	for (size_t i = 0; l && i < n; i++)
		free(l[i].path);
	free(l);
}
