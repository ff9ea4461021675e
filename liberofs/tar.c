// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 1 for tar input (mkfs.erofs --tar=f): read the archive once, in
 * order, into the same tree the directory scan builds.  Regular files keep
 * no data in memory: a seekable plain tar is read again at each file's
 * offset by the data pass; a pipe, a compressed stream or a sparse entry is
 * copied to an unlinked spool file (sparse entries keep their holes there).
 * Index mode (--tar=i) notes where each file's data starts in the stream
 * and reads it only for a fingerprint; headerball has no data to read.
 *
 * Semantics of erofs-utils: later entries replace earlier ones (a
 * directory over a directory only updates its attributes); missing parent
 * directories are made 0755 (plus the parent's group/other write bits)
 * with the parent's owner and time; the root is 0777, owned by the caller,
 * with the build time, unless the archive has an entry for it ("./");
 * "." components are dropped and ".." goes up (never above the root); a
 * hard link shares the inode of the entry it names, as it is then.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/erofs_fs.h"
#include "internal.h"
#include "oci.h"
#include "tar.h"

#define COPY_BUF (1u << 20)

struct tar_ctx {
	struct erofs_build *b;
	struct tar_stream *ts;
	const char *name;		/* the archive, for messages */
	struct tar_pax global;

	struct tar_tree *tree;
	uint64_t next_ino;		/* inode keys of hard-linked files */
	uint64_t next_seq;		/* regular files in archive order */

	int spool_fd;
	uint64_t spool_end;
	uint8_t *buf;			/* COPY_BUF */
	uint64_t hdr_at;		/* offset of the current header */
	const char *entry;		/* its path, for messages */

	bool aufs;			/* .wh. entries are whiteouts */
	bool merge;			/* OCI layers applied in order */
	size_t layer_start;		/* first node of the current layer */
};

static int bad(struct tar_ctx *t, const char *why)
{
	fsf_err(t->b->log, "%s: tar entry '%s' at byte %llu: %s", t->name,
		t->entry ? t->entry : "?", (unsigned long long)t->hdr_at, why);
	return -EINVAL;
}

static int walk(struct tar_ctx *t, const char *path, bool make,
		struct erofs_node **parent, const char **last, size_t *len)
{
	const char *why = NULL;
	int ret = tar_tree_walk(t->tree, path, make, parent, last, len, &why);

	return ret == -EINVAL ? bad(t, why) : ret;
}

static int set_xattrs(struct tar_ctx *t, struct erofs_node *n,
		      const struct tar_pax *pax, const char *path)
{
	const struct erofs_mkfs_opts *o = t->b->opts;

	tar_node_clear_xattrs(n);
	if (o->xattr_tolerance < 0)
		return 0;
	for (size_t i = 0; i < pax->nxattrs; i++) {
		const struct tar_xattr *x = &pax->xattrs[i];
		int ret;

		/* the fingerprint is computed here, never copied */
		if (o->digest_name && !strcmp(x->name, o->digest_name))
			continue;
		ret = erofs_node_add_xattr(t->b, n, path, x->name, x->value,
					   x->len);
		if (ret)
			return ret;
	}
	return 0;
}

static int copy_xattrs(struct tar_ctx *t, struct erofs_node *dst,
		       const struct erofs_node *src, const char *path)
{
	for (uint16_t i = 0; i < src->nxattrs; i++) {
		const struct erofs_xattr *x = src->xattrs[i];
		int ret = erofs_node_add_xattr(t->b, dst, path, x->name,
					       x->value, x->value_len);

		if (ret)
			return ret;
	}
	return 0;
}

static int spool_open(struct tar_ctx *t)
{
	int fd;

	if (t->spool_fd >= 0)
		return 0;
	fd = erofs_spool_open(t->b, "tar", "the tar data");
	if (fd < 0)
		return fd;	/* reported */
	t->spool_fd = fd;
	t->b->data_fd[1] = fd;
	return 0;
}

static int spool_write(struct tar_ctx *t, const uint8_t *p, size_t len,
		       uint64_t at)
{
	while (len) {
		ssize_t w = pwrite(t->spool_fd, p, len, (off_t)at);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int e = w < 0 ? errno : ENOSPC;

			fsf_err(t->b->log, "cannot write the tar spool file: %s",
				strerror(e));
			return -e;
		}
		p += w;
		at += (uint64_t)w;
		len -= (size_t)w;
	}
	return 0;
}

static int read_data(struct tar_ctx *t, void *buf, size_t len)
{
	int ret = tar_stream_read(t->ts, buf, len);

	if (ret == -ENODATA)
		return bad(t, "the archive ends inside this entry");
	return ret;
}

/* LEN bytes of the stream to the spool file at AT */
static int spool_copy(struct tar_ctx *t, uint64_t len, uint64_t at)
{
	while (len) {
		size_t n = len < COPY_BUF ? (size_t)len : COPY_BUF;
		int ret = read_data(t, t->buf, n);

		if (!ret)
			ret = spool_write(t, t->buf, n, at);
		if (ret)
			return ret;
		len -= n;
		at += n;
	}
	return 0;
}

/* a regular file's SIZE bytes of data: where the data pass finds them */
static int place_data(struct tar_ctx *t, struct erofs_node *n, uint64_t size)
{
	const enum erofs_tar_mode mode = t->b->opts->tar_mode;
	int ret;

	n->tar_off = tar_stream_pos(t->ts);
	if (mode == EROFS_TAR_HEADERBALL)	/* no data follows */
		return 0;
	if (tar_stream_seekable(t->ts) ||
	    (mode == EROFS_TAR_INDEX && !t->b->opts->digest_name)) {
		/* index mode reads the data only for a fingerprint */
		n->data_src = 0;
		n->data_off = tar_stream_pos(t->ts);
		ret = tar_stream_skip(t->ts, size);
		return ret == -ENODATA ? bad(t, "the archive ends inside this entry") : ret;
	}
	ret = spool_open(t);
	if (ret)
		return ret;
	n->data_src = 1;
	n->data_off = t->spool_end;
	ret = spool_copy(t, size, t->spool_end);
	t->spool_end += size;
	return ret;
}

/* a sparse file: its extents at their offsets in the spool, holes left */
static int place_sparse(struct tar_ctx *t, struct erofs_node *n,
			const struct tar_extent *sp, size_t nsp,
			uint64_t realsize, uint64_t stored)
{
	uint64_t end = 0, sum = 0;
	int ret = spool_open(t);

	if (ret)
		return ret;
	for (size_t i = 0; i < nsp; i++) {
		if (sp[i].off < end || sp[i].len > realsize ||
		    sp[i].off > realsize - sp[i].len)
			return bad(t, "sparse map out of order or beyond the file size");
		end = sp[i].off + sp[i].len;
		sum += sp[i].len;
	}
	if (sum != stored)
		return bad(t, "sparse map does not add up to the stored data");
	n->data_src = 1;
	n->data_off = t->spool_end;
	for (size_t i = 0; i < nsp && !ret; i++)
		ret = spool_copy(t, sp[i].len, t->spool_end + sp[i].off);
	/* the holes up to the real size read as zeros */
	t->spool_end += realsize;
	if (!ret && ftruncate(t->spool_fd, (off_t)t->spool_end)) {
		ret = -errno;
		fsf_err(t->b->log, "cannot extend the tar spool file: %s",
			strerror(errno));
	}
	n->size = realsize;
	return ret;
}

/* skip to the next 512-byte boundary */
static int align(struct tar_ctx *t)
{
	uint64_t rem = tar_stream_pos(t->ts) % TAR_BLOCK;
	int ret;

	if (!rem)
		return 0;
	ret = tar_stream_skip(t->ts, TAR_BLOCK - rem);
	return ret == -ENODATA ? bad(t, "the archive ends inside this entry") : ret;
}

static int skip_data(struct tar_ctx *t, uint64_t size)
{
	int ret = tar_stream_skip(t->ts, size);

	return ret == -ENODATA ? bad(t, "the archive ends inside this entry") : ret;
}

/* a whole 'L', 'K', 'x' or 'g' payload, NUL-terminated */
static int read_meta(struct tar_ctx *t, uint64_t size, uint8_t **out)
{
	uint8_t *p;
	int ret;

	if (size > TAR_META_MAX)
		return bad(t, "long name or pax header larger than 1 MiB");
	p = malloc((size_t)size + 1);
	if (!p)
		return -ENOMEM;
	ret = read_data(t, p, (size_t)size);
	if (ret) {
		free(p);
		return ret;
	}
	p[size] = '\0';
	*out = p;
	return 0;
}

/* GNU sparse 1.0 in pax: the map opens the data, in 512-byte blocks */
static int read_pax_sparse_map(struct tar_ctx *t, uint64_t *size,
			       struct tar_extent **sp, size_t *nsp)
{
	char line[32];
	size_t ll = 0, nums = 0;
	uint64_t want = UINT64_MAX, consumed = 0, v = 0;

	for (;;) {
		char c;
		int ret;

		if (consumed >= *size)
			return bad(t, "GNU sparse 1.0 map runs past the data");
		ret = read_data(t, &c, 1);
		if (ret)
			return ret;
		consumed++;
		if (c != '\n') {
			if (c < '0' || c > '9' || ll >= 20)
				return bad(t, "invalid GNU sparse 1.0 map");
			line[ll++] = c;
			continue;
		}
		if (!ll)
			return bad(t, "invalid GNU sparse 1.0 map");
		v = 0;
		for (size_t i = 0; i < ll; i++) {
			if (v > (TAR_SIZE_MAX - (uint64_t)(line[i] - '0')) / 10)
				return bad(t, "GNU sparse 1.0 map number out of range");
			v = v * 10 + (uint64_t)(line[i] - '0');
		}
		ll = 0;
		if (want == UINT64_MAX) {
			if (v > (1u << 20))
				return bad(t, "GNU sparse 1.0 map of more than 1048576 extents");
			want = v;
			*sp = calloc(want ? want : 1, sizeof(**sp));
			if (!*sp)
				return -ENOMEM;
		} else if (nums % 2 == 0) {
			(*sp)[nums / 2].off = v;
			nums++;
		} else {
			(*sp)[nums / 2].len = v;
			nums++;
		}
		if (want != UINT64_MAX && nums == want * 2)
			break;
	}
	*nsp = (size_t)want;
	/* the map is padded to a block */
	if (consumed % TAR_BLOCK) {
		uint64_t pad = TAR_BLOCK - consumed % TAR_BLOCK;

		if (pad > *size - consumed)
			return bad(t, "GNU sparse 1.0 map runs past the data");
		consumed += pad;
		if (skip_data(t, pad))
			return -EINVAL;
	}
	*size -= consumed;
	return 0;
}

static uint32_t encode_dev(uint32_t ma, uint32_t mi)
{
	return (mi & 0xffu) | (ma << 8) | ((mi & ~0xffu) << 12);
}

struct entry {
	struct tar_hdr h;
	struct tar_pax pax;
	char *longname, *longlink;
	struct tar_extent *sp;		/* GNU sparse: the whole map */
	size_t nsp;
};

static int hard_link(struct tar_ctx *t, struct erofs_node *parent,
		     const char *last, size_t len, const char *target,
		     const char *path)
{
	struct erofs_node *tp, *src, *n;
	const char *tl;
	size_t tlen;
	int ret = walk(t, target, false, &tp, &tl, &tlen);

	if (ret == -ENOENT || (!ret && !tlen) ||
	    (!ret && !(src = tar_tree_lookup(t->tree, tp, tl, tlen))))
		return bad(t, "hard link to an entry not in the archive before it");
	if (ret)
		return ret;
	if (S_ISDIR(src->mode))
		return bad(t, "hard link to a directory");
	if (!len)
		return bad(t, "hard link in place of the root");
	if (!src->src_ino)
		src->src_ino = ++t->next_ino;
	n = tar_tree_add(t->tree, parent, last, len);
	if (!n)
		return -ENOMEM;
	n->mode = src->mode;
	n->uid = src->uid;
	n->gid = src->gid;
	n->mtime = src->mtime;
	n->mtime_nsec = src->mtime_nsec;
	n->size = src->size;
	n->rdev = src->rdev;
	n->data_src = src->data_src;
	n->data_off = src->data_off;
	n->tar_off = src->tar_off;
	n->src_seq = src->src_seq;
	n->src_ino = src->src_ino;
	n->src_nlink = src->src_nlink = 2;
	if (src->symlink) {
		n->symlink = strdup(src->symlink);
		if (!n->symlink)
			return -ENOMEM;
	}
	return copy_xattrs(t, n, src, path);
}

/*
 * --aufs: ".wh..wh..opq" makes its directory opaque (trusted.overlay.opaque
 * "y"); ".wh.NAME" is a whiteout, NAME as a character device 0:0 with no
 * permission bits and the entry's owner, time and xattrs, and its
 * directory is marked to hold whiteouts (erofs-utils' conversion).
 */
static int aufs_entry(struct tar_ctx *t, struct entry *e,
		      struct erofs_node *parent, const char *last, size_t len,
		      uint64_t size, const char *path)
{
	struct erofs_node *n;
	int ret;

	if (len == 12 && !memcmp(last, ".wh..wh..opq", 12) && t->merge) {
		/* applied: what lower layers put here is hidden */
		ret = tar_tree_hide_below(t->tree, parent, t->layer_start);
		return ret ? ret : skip_data(t, size);
	}
	if (len == 12 && !memcmp(last, ".wh..wh..opq", 12)) {
		ret = erofs_node_add_xattr(t->b, parent, path,
					   "trusted.overlay.opaque", "y", 1);
		return ret ? ret : skip_data(t, size);
	}
	if (len == 4)
		return bad(t, "an aufs whiteout without a name");
	n = tar_tree_add(t->tree, parent, last + 4, len - 4);
	if (!n)
		return -ENOMEM;
	n->mode = S_IFCHR;
	ret = erofs_node_set_ids(t->b, n, e->pax.has_uid ? e->pax.uid : e->h.uid,
				 e->pax.has_gid ? e->pax.gid : e->h.gid);
	if (ret)
		return bad(t, "uid or gid out of range after the offset");
	if (e->pax.has_mtime)
		erofs_node_set_mtime(t->b, n, e->pax.mtime, e->pax.mtime_nsec);
	else
		erofs_node_set_mtime(t->b, n, e->h.mtime, 0);
	ret = set_xattrs(t, n, &e->pax, path);
	if (ret)
		return ret;
	tar_tree_mark_whiteouts(t->tree, parent);
	return skip_data(t, size);
}

/* one entry, its header and extended headers read, its data next */
static int add_entry_body(struct tar_ctx *t, struct entry *e, const char *path)
{
	struct tar_hdr *h = &e->h;
	const char *link = e->pax.linkpath ? e->pax.linkpath :
			   e->longlink ? e->longlink : h->linkname;
	uint64_t size = e->pax.has_size ? e->pax.size : h->size;
	struct erofs_node *parent, *n, *old;
	const char *last;
	size_t len;
	uint32_t type;
	int ret;

	switch (h->type) {
	case '0': case '7': case 'S': type = S_IFREG; break;
	case '1': type = S_IFREG; break;
	case '2': type = S_IFLNK; break;
	case '3': type = S_IFCHR; break;
	case '4': type = S_IFBLK; break;
	case '5': type = S_IFDIR; break;
	case '6': type = S_IFIFO; break;
	default:
		fsf_info(t->b->log, "%s: tar entry '%s' at byte %llu: type '%c' ignored",
			 t->name, path, (unsigned long long)t->hdr_at, h->type);
		return skip_data(t, size);
	}
	if (!*path)
		return bad(t, "empty path");
	ret = walk(t, path, true, &parent, &last, &len);
	if (ret)
		return ret;
	if (t->aufs && len >= 4 && !memcmp(last, ".wh.", 4))
		return aufs_entry(t, e, parent, last, len, size, path);
	if (h->type == '1') {
		ret = hard_link(t, parent, last, len, link, path);
		return ret ? ret : skip_data(t, size);
	}
	old = len ? tar_tree_lookup(t->tree, parent, last, len) : t->b->root;
	if (!len && type != S_IFDIR)
		return bad(t, "only a directory can stand for the root");
	if (old && S_ISDIR(old->mode) && type == S_IFDIR) {
		n = old;	/* a directory again: new attributes only */
	} else {
		n = tar_tree_add(t->tree, parent, last, len);
		if (!n)
			return -ENOMEM;
	}
	n->mode = type | h->mode;
	ret = erofs_node_set_ids(t->b, n, e->pax.has_uid ? e->pax.uid : h->uid,
				 e->pax.has_gid ? e->pax.gid : h->gid);
	if (ret)
		return bad(t, "uid or gid out of range after the offset");
	if (e->pax.has_mtime)
		erofs_node_set_mtime(t->b, n, e->pax.mtime, e->pax.mtime_nsec);
	else
		erofs_node_set_mtime(t->b, n, h->mtime, 0);
	ret = set_xattrs(t, n, &e->pax, path);
	if (ret)
		return ret;

	switch (type) {
	case S_IFLNK: {
		size_t l = strlen(link);

		if (!l || l >= PATH_MAX)
			return bad(t, "symlink target empty or longer than PATH_MAX");
		n->symlink = strdup(link);
		if (!n->symlink)
			return -ENOMEM;
		n->size = l;
		return skip_data(t, size);
	}
	case S_IFCHR:
	case S_IFBLK:
		if (h->devmajor > 0xfffu || h->devminor > 0xfffffu)
			return bad(t, "device number too large for EROFS");
		n->rdev = encode_dev(h->devmajor, h->devminor);
		return skip_data(t, size);
	case S_IFREG:
		break;
	default:
		return skip_data(t, size);
	}
	n->src_seq = ++t->next_seq;
	if ((h->type == 'S' || e->pax.sparse_major >= 0) &&
	    t->b->opts->tar_mode != EROFS_TAR_FULL)
		return bad(t, "a sparse file cannot be mapped in index or headerball mode (use --tar=f)");
	if (h->type == 'S')
		return place_sparse(t, n, e->sp, e->nsp, h->realsize, size);
	if (e->pax.sparse_major == 1) {
		struct tar_extent *sp = NULL;
		size_t nsp = 0;

		if (!e->pax.has_realsize) {
			ret = bad(t, "GNU sparse 1.0 without GNU.sparse.realsize");
		} else {
			ret = read_pax_sparse_map(t, &size, &sp, &nsp);
			if (!ret)
				ret = place_sparse(t, n, sp, nsp,
						   e->pax.realsize, size);
		}
		free(sp);
		return ret;
	}
	if (e->pax.sparse_major >= 0)
		return bad(t, "GNU sparse format 0.x is not supported");
	n->size = size;
	return size ? place_data(t, n, size) : 0;
}

/* --exclude-path/--exclude-regex: the entry's path or a directory above
 * it (its relative form in REL) is left out */
static bool excluded(struct tar_ctx *t, const char *path, char *rel)
{
	const struct erofs_mkfs_opts *o = t->b->opts;
	const char *s = path;
	size_t l = 0;

	if (!o->n_exclude_paths && !o->n_exclude_regexes)
		return false;
	while (*s && l < PATH_MAX - 1) {
		while (*s == '/' || (s[0] == '.' && s[1] == '/'))
			s++;
		while (*s && *s != '/' && l < PATH_MAX - 1)
			rel[l++] = *s++;
		rel[l] = '\0';
		if (l && erofs_path_excluded(t->b, rel))
			return true;
		if (*s && l < PATH_MAX - 1)
			rel[l++] = '/';
	}
	return false;
}

/*
 * An excluded entry is still read into the tree, so that a hard link to
 * it keeps its content, and dropped at the end with the directory that
 * made it excluded (also when that directory was only implied).
 */
static int add_entry(struct tar_ctx *t, struct entry *e)
{
	const char *path = e->pax.sparse_name ? e->pax.sparse_name :
			   e->pax.path ? e->pax.path :
			   e->longname ? e->longname : e->h.name;
	char rel[PATH_MAX];
	struct erofs_node *parent, *n;
	const char *last;
	size_t len;
	bool excl;
	int ret;

	t->entry = path;
	excl = excluded(t, path, rel);
	ret = add_entry_body(t, e, path);
	if (ret || !excl)
		return ret;
	ret = walk(t, rel, true, &parent, &last, &len);
	if (ret)
		return ret;
	n = len ? tar_tree_lookup(t->tree, parent, last, len) : NULL;
	if (n)
		tar_tree_drop(t->tree, n);
	return 0;
}

static void entry_reset(struct entry *e)
{
	tar_pax_free(&e->pax);
	free(e->longname);
	free(e->longlink);
	free(e->sp);
	memset(e, 0, sizeof(*e));
	tar_pax_init(&e->pax);
}

/* 'L', 'K', 'x', 'g' and 'V': what they say about the next entry */
static int read_meta_header(struct tar_ctx *t, struct entry *e)
{
	const char *why = NULL;
	uint8_t *meta = NULL;
	int ret;

	if (e->h.type == 'V')	/* a volume label: nothing for EROFS */
		return skip_data(t, e->h.size);
	ret = read_meta(t, e->h.size, &meta);
	if (ret)
		return ret;
	if (e->h.type == 'L') {
		free(e->longname);
		e->longname = (char *)meta;
		return 0;
	}
	if (e->h.type == 'K') {
		free(e->longlink);
		e->longlink = (char *)meta;
		return 0;
	}
	ret = tar_pax_parse(meta, (size_t)e->h.size,
			    e->h.type == 'x' ? &e->pax : &t->global, &why);
	free(meta);
	return ret == -EINVAL ? bad(t, why) : ret;
}

/* the map of an old GNU sparse entry: its header's, then extension blocks */
static int read_gnu_sparse_map(struct tar_ctx *t, struct entry *e,
			       uint8_t *blk)
{
	const char *why = NULL;
	int ret = 0;

	free(e->sp);
	e->sp = NULL;
	e->nsp = e->h.nsp;
	if (e->nsp) {
		e->sp = malloc(e->nsp * sizeof(*e->sp));
		if (!e->sp)
			return -ENOMEM;
		memcpy(e->sp, e->h.sp, e->nsp * sizeof(*e->sp));
	}
	for (bool more = e->h.sp_more; more && !ret;) {
		ret = read_data(t, blk, TAR_BLOCK);
		if (!ret)
			ret = tar_sparse_ext_parse(blk, &e->sp, &e->nsp, &more,
						   &why);
		if (ret == -EINVAL && why)
			ret = bad(t, why);
	}
	return ret;
}

/* Read headers up to the end of the archive. */
static int read_archive(struct tar_ctx *t)
{
	struct entry e;
	uint8_t blk[TAR_BLOCK];
	int ret = 0;

	memset(&e, 0, sizeof(e));
	tar_pax_init(&e.pax);
	for (;;) {
		const char *why = NULL;

		t->entry = e.pax.path ? e.pax.path : e.longname;
		t->hdr_at = tar_stream_pos(t->ts);
		ret = tar_stream_read(t->ts, blk, TAR_BLOCK);
		if (ret == -ENODATA) {
			ret = bad(t, tar_stream_pos(t->ts) == t->hdr_at ?
				  "the archive ends without its end-of-archive blocks" :
				  "the archive ends inside a header block");
			break;
		}
		if (ret)
			break;
		ret = tar_header_parse(blk, &e.h, &why);
		if (ret == 1) {	/* end of archive; what follows is ignored */
			ret = 0;
			break;
		}
		if (ret) {
			ret = bad(t, why);
			break;
		}
		if (!t->entry)
			t->entry = e.h.name;
		if (e.h.type == 'L' || e.h.type == 'K' || e.h.type == 'x' ||
		    e.h.type == 'g' || e.h.type == 'V') {
			/* headers about the next entry */
			ret = read_meta_header(t, &e);
			if (!ret)
				ret = align(t);
			if (ret)
				break;
			continue;
		}
		if (e.h.type == 'S') {
			ret = read_gnu_sparse_map(t, &e, blk);
			if (ret)
				break;
		}
		ret = tar_pax_inherit(&e.pax, &t->global);
		if (!ret)
			ret = add_entry(t, &e);
		if (!ret)
			ret = align(t);
		if (ret)
			break;
		entry_reset(&e);
	}
	entry_reset(&e);
	tar_pax_free(&e.pax);
	return ret;
}

/* --ungzip=FILE: the decoded stream, as it is decoded */
static int copy_decoded(void *arg, const void *buf, size_t len)
{
	struct erofs_build *b = arg;

	return b->tar_copy(b, buf, len);
}

/* the tar file (or standard input) of the options */
static int read_tar_file(struct tar_ctx *t)
{
	struct erofs_build *b = t->b;
	const struct erofs_mkfs_opts *o = b->opts;
	bool use_stdin = !o->source || !strcmp(o->source, "-");
	int fd = use_stdin ? STDIN_FILENO : -1, ret;

	t->name = use_stdin ? "(stdin)" : o->source;
	t->aufs = o->aufs;
	if (!use_stdin) {
		fd = open(o->source, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			ret = -errno;
			fsf_err(b->log, "cannot open tar file %s: %s", o->source,
				strerror(errno));
			return ret;
		}
	}
	ret = tar_stream_open(&t->ts, fd, (enum tar_codec)o->tar_codec,
			      b->log, t->name);
	if (!ret && b->tar_copy)
		tar_stream_tee(t->ts, copy_decoded, b);
	if (!ret && tar_stream_seekable(t->ts)) {
		b->data_fd[0] = use_stdin ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : fd;
		if (b->data_fd[0] < 0)
			ret = -errno;
	}
	if (!ret)
		ret = read_archive(t);
	if (t->ts)
		b->tar_end = tar_stream_pos(t->ts);
	if (!ret && o->tar_mode == EROFS_TAR_INDEX) {
		/* the device's size counts the second end-of-archive
		 * block too, when there is one (as erofs-utils) */
		static const uint8_t zero[TAR_BLOCK];
		uint8_t blk[TAR_BLOCK];

		if (!tar_stream_read(t->ts, blk, TAR_BLOCK) &&
		    !memcmp(blk, zero, TAR_BLOCK))
			b->tar_end += TAR_BLOCK;
	}
	if (!ret && b->tar_copy) {	/* the rest of the stream, then done */
		ret = tar_stream_drain(t->ts);
		if (!ret)
			ret = b->tar_copy_end(b);
	}
	tar_stream_close(t->ts);
	t->ts = NULL;
	if (!use_stdin && b->data_fd[0] != fd)
		close(fd);
	return ret;
}

/* one OCI layer: its blob read as a tar, hashed on the way */
static int read_layer(struct tar_ctx *t, const struct oci_layer *l)
{
	const struct fsf_log *log = t->b->log;
	char name[128];
	struct stat st;
	int fd, ret;

	snprintf(name, sizeof(name), "layer %zu (%s)", l->index, l->digest);
	t->name = name;
	fd = open(l->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		fsf_err(log, "%s: blob %s (layer %zu) is missing: %s",
			t->b->opts->source, l->digest, l->index, strerror(errno));
		return ret;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size != l->size) {
		fsf_err(log, "%s: blob %s (layer %zu) is %llu bytes, its descriptor gives %llu",
			t->b->opts->source, l->digest, l->index,
			(unsigned long long)st.st_size, (unsigned long long)l->size);
		close(fd);
		return -EIO;
	}
	ret = tar_stream_open(&t->ts, fd, l->codec, log, name);
	if (!ret)
		ret = tar_stream_verify(t->ts, l->sha, l->size, l->digest);
	t->layer_start = tar_tree_count(t->tree);
	tar_pax_free(&t->global);
	tar_pax_init(&t->global);
	if (!ret)
		ret = read_archive(t);
	/* a read that failed has said why, naming the layer's digest */
	if (!ret)
		ret = tar_stream_verify_end(t->ts);
	tar_stream_close(t->ts);
	t->ts = NULL;
	close(fd);
	t->name = NULL;
	return ret;
}

/* the selected layers of the OCI layout, in order: one converted as the
 * tar input converts an --aufs archive, or all applied in turn */
static int read_oci(struct tar_ctx *t)
{
	const struct erofs_mkfs_opts *o = t->b->opts;
	struct oci_layer *l;
	size_t n;
	int ret = oci_select_layers(o, t->b->log, &l, &n);

	if (ret)
		return ret;
	t->aufs = true;
	t->merge = o->oci_layer < 0 && !o->oci_blob;
	for (size_t i = 0; i < n && !ret; i++)
		ret = read_layer(t, &l[i]);
	oci_layers_free(l, n);
	return ret;
}

int erofs_tar_scan(struct erofs_build *b)
{
	const struct erofs_mkfs_opts *o = b->opts;
	struct tar_ctx t = { .b = b, .spool_fd = -1 };
	struct erofs_node *root;
	int ret;

	tar_pax_init(&t.global);
	t.buf = malloc(COPY_BUF);
	ret = t.buf ? tar_tree_new(&t.tree, b) : -ENOMEM;
	if (ret)
		goto out;
	root = b->root;
	root->mode = S_IFDIR | 0777;
	ret = erofs_node_set_ids(b, root, getuid(), getgid());
	if (ret)
		goto out;
	erofs_node_set_mtime(b, root, o->build_time, 0);
	ret = o->oci ? read_oci(&t) : read_tar_file(&t);
	/* merged layers: whiteouts have done their work */
	if (!ret)
		ret = tar_tree_finish(t.tree, o->ovlfs_strip || t.merge);
	if (!ret)
		ret = erofs_tree_finish(b, true);
out:
	tar_tree_free(t.tree);
	tar_pax_free(&t.global);
	free(t.buf);
	return ret;
}
