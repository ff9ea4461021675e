// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fsck.erofs: walk the tree from the root directory (an explicit stack,
 * so no image can make it recurse deeply) and check every inode reached:
 * its record, its xattrs, its content (every compressed extent decoded),
 * directories' entries ('.' and '..', types against the inodes), link
 * counts against the directory entries, and with --xattr-inode-digest the
 * SHA-256 fingerprint of every regular file.  A problem is reported as one
 * line naming the path and the library's reason (inode and byte offset);
 * the walk goes on with the next object.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "erofs/erofs_fs.h"
#include "erofs_check.h"
#include "erofs_files.h"

#define DIGEST_PREFIX	"sha256:"
#define DIGEST_LEN	(7u + 32u)
#define MAX_DIR_BYTES	(256u << 20)

struct ient {
	uint64_t nid;
	uint32_t refs;		/* directory entries naming it ('.'/'..' aside) */
	uint32_t nlink;
	uint32_t subdirs;
	bool used, isdir;
	char *path;		/* first path (messages, hard links) */
};

struct dirwork {
	uint64_t nid, parent;
	char *path;
};

struct dent {
	const char *name;	/* in the directory's data (not NUL-ended) */
	size_t len;
	uint64_t nid;
	uint8_t ftype;
};

/* Single-link non-directories reached once need no table entry: a bit
 * per nid (leaves of 32768 bits allocated on first use) records that
 * they were reached, and only a second reach puts one in the table. */
#define NIDSET_LEAF_BITS	15u

struct nidset {
	uint8_t **leaf;
	size_t nleaves;
};

struct walk {
	struct erofs_img *img;
	const struct erofs_check_opts *o;
	const struct fsf_log *log;
	struct erofs_check_stats *st;
	struct erofs_extract *ex;
	struct ient *tab;
	size_t tabcap, tabused;
	struct nidset once;	/* single-link non-directories reached */
	struct dirwork *stack;
	size_t nstack, stackcap;
	char *digest_name;	/* full name of the fingerprint xattr */
	struct erofs_fpool *pool;	/* regular files' content */
	/* per-file state */
	const char *path;
	bool have_digest, digest_bad, xattr_extract;
	uint8_t digest[32];
};

/* whether NID was in the set (it is now); -ENOMEM */
static int nidset_test_set(struct nidset *s, uint64_t nid)
{
	size_t li = (size_t)(nid >> NIDSET_LEAF_BITS);
	uint32_t bit = (uint32_t)(nid & ((1u << NIDSET_LEAF_BITS) - 1));
	uint8_t *leaf;
	int was;

	if (li >= s->nleaves) {
		size_t n = li + 1 > s->nleaves * 2 ? li + 1 : s->nleaves * 2;
		uint8_t **l = realloc(s->leaf, n * sizeof(*l));

		if (!l)
			return -ENOMEM;
		memset(l + s->nleaves, 0, (n - s->nleaves) * sizeof(*l));
		s->leaf = l;
		s->nleaves = n;
	}
	leaf = s->leaf[li];
	if (!leaf) {
		leaf = calloc(1, (1u << NIDSET_LEAF_BITS) / 8);
		if (!leaf)
			return -ENOMEM;
		s->leaf[li] = leaf;
	}
	was = !!(leaf[bit >> 3] & (1u << (bit & 7)));
	leaf[bit >> 3] |= (uint8_t)(1u << (bit & 7));
	return was;
}

static void nidset_free(struct nidset *s)
{
	for (size_t i = 0; i < s->nleaves; i++)
		free(s->leaf[i]);
	free(s->leaf);
}

static void problem(struct walk *w, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void problem(struct walk *w, const char *path, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* after the problems of the files queued before */
	erofs_fpool_drain(w->pool);
	fsf_err(w->log, "%s: %s", path, msg);
	w->st->errors++;
}

static uint64_t hash64(uint64_t v)
{
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdull;
	v ^= v >> 33;
	return v;
}

static int tab_grow(struct walk *w)
{
	size_t cap = w->tabcap ? w->tabcap * 2 : 1024;
	struct ient *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < w->tabcap; i++) {
		size_t k;

		if (!w->tab[i].used)
			continue;
		for (k = hash64(w->tab[i].nid) & (cap - 1); t[k].used; k = (k + 1) & (cap - 1))
			;
		t[k] = w->tab[i];
	}
	free(w->tab);
	w->tab = t;
	w->tabcap = cap;
	return 0;
}

/* the entry of NID, or NULL */
static struct ient *tab_find(struct walk *w, uint64_t nid)
{
	if (!w->tabcap)
		return NULL;
	for (size_t k = hash64(nid) & (w->tabcap - 1); w->tab[k].used;
	     k = (k + 1) & (w->tabcap - 1))
		if (w->tab[k].nid == nid)
			return &w->tab[k];
	return NULL;
}

/* the entry of NID; *fresh when it was not there.  Only an insertion
 * may move the table (pointers to existing entries stay valid across a
 * lookup of an existing nid). */
static struct ient *tab_get(struct walk *w, uint64_t nid, bool *fresh)
{
	size_t k;

	*fresh = false;
	if (w->tabcap) {
		for (k = hash64(nid) & (w->tabcap - 1); w->tab[k].used;
		     k = (k + 1) & (w->tabcap - 1))
			if (w->tab[k].nid == nid)
				return &w->tab[k];
	}
	if ((w->tabused + 1) * 2 > w->tabcap && tab_grow(w))
		return NULL;
	for (k = hash64(nid) & (w->tabcap - 1); w->tab[k].used;
	     k = (k + 1) & (w->tabcap - 1))
		;
	w->tab[k].used = true;
	w->tab[k].nid = nid;
	w->tabused++;
	*fresh = true;
	return &w->tab[k];
}

static uint8_t ftype_of(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return EROFS_FT_REG_FILE;
	case S_IFDIR: return EROFS_FT_DIR;
	case S_IFCHR: return EROFS_FT_CHRDEV;
	case S_IFBLK: return EROFS_FT_BLKDEV;
	case S_IFIFO: return EROFS_FT_FIFO;
	case S_IFSOCK: return EROFS_FT_SOCK;
	default: return EROFS_FT_SYMLINK;
	}
}

static char *join(const char *dir, const char *name, size_t len)
{
	size_t dl = strlen(dir);
	char *p = malloc(dl + len + 2);

	if (!p)
		return NULL;
	memcpy(p, dir, dl);
	if (!dl || dir[dl - 1] != '/')
		p[dl++] = '/';
	memcpy(p + dl, name, len);
	p[dl + len] = 0;
	return p;
}

/* ---- xattrs ------------------------------------------------------------ */

static int xattr_fn(void *ctx, const char *name, size_t name_len,
		    const uint8_t *value, size_t value_len, unsigned int index)
{
	struct walk *w = ctx;

	(void)index;
	if (w->xattr_extract) {
		if (erofs_extract_xattr(w->ex, w->path, name, name_len, value,
					value_len))
			w->st->errors++;
		return 0;
	}
	if (w->o->digest && w->digest_name &&
	    name_len == strlen(w->digest_name) &&
	    !memcmp(name, w->digest_name, name_len)) {
		if (w->have_digest || value_len != DIGEST_LEN ||
		    memcmp(value, DIGEST_PREFIX, 7))
			w->digest_bad = true;
		else
			memcpy(w->digest, value + 7, 32);
		w->have_digest = true;
	}
	return 0;
}

static bool check_xattrs(struct walk *w, const struct erofs_rinode *ino,
			 const char *path)
{
	w->have_digest = w->digest_bad = false;
	w->xattr_extract = false;
	w->path = path;
	if (erofs_read_xattrs(w->img, ino, xattr_fn, w)) {
		problem(w, path, "%s", w->img->err);
		return false;
	}
	return true;
}

/* --extract --xattrs: once the object exists (after its owner is set,
 * which would drop security.capability) */
static void extract_xattrs(struct walk *w, const struct erofs_rinode *ino,
			   const char *path)
{
	if (!w->ex || !w->o->extract_xattrs)
		return;
	w->xattr_extract = true;
	w->path = path;
	erofs_read_xattrs(w->img, ino, xattr_fn, w);	/* checked before */
	w->xattr_extract = false;
}

/* ---- file content -------------------------------------------------------- */

/* the content is checked by the pool (erofs_files.c) */
static void check_regular(struct walk *w, const struct erofs_rinode *ino,
			  const char *path)
{
	struct erofs_fjob j = {
		.ino = *ino, .path = (char *)path, .fd = -1,
		.want = w->o->digest && ino->size > 0,
		.have_digest = w->have_digest, .digest_bad = w->digest_bad,
		.digest_name = w->digest_name,
	};

	memcpy(j.digest, w->digest, sizeof(j.digest));
	if (w->ex) {
		j.fd = erofs_extract_file(w->ex, path);
		if (j.fd < 0)
			w->st->errors++;
	}
	if (!ino->size && j.fd < 0)
		return;		/* nothing to read, nothing to find */
	if (erofs_fpool_submit(w->pool, &j))
		problem(w, path, "out of memory");
}

static void check_symlink(struct walk *w, const struct erofs_rinode *ino,
			  const char *path)
{
	uint8_t *t;

	if (!ino->size || ino->size >= PATH_MAX) {
		problem(w, path, "inode %" PRIu64 ": symlink of %" PRIu64 " bytes",
			ino->nid, ino->size);
		return;
	}
	if (erofs_read_all(w->img, ino, PATH_MAX, &t)) {
		problem(w, path, "%s", w->img->err);
		return;
	}
	if (memchr(t, 0, ino->size))
		problem(w, path, "inode %" PRIu64 ": symlink target holds a NUL byte",
			ino->nid);
	else if (w->ex && erofs_extract_symlink(w->ex, path, (char *)t))
		w->st->errors++;
	w->st->logical += ino->size;
	w->st->physical += ino->size;
	free(t);
}

/* a non-directory reached for the first time */
static void check_leaf(struct walk *w, const struct erofs_rinode *ino,
		       const char *path)
{
	if (S_ISLNK(ino->mode)) {
		check_symlink(w, ino, path);
	} else if (S_ISREG(ino->mode)) {
		check_regular(w, ino, path);
	} else {
		if (ino->size)
			problem(w, path, "inode %" PRIu64 ": special file with size %" PRIu64,
				ino->nid, ino->size);
		if (w->ex && erofs_extract_special(w->ex, path, ino))
			w->st->errors++;
	}
}

/* ---- directories ----------------------------------------------------------- */

/* A directory's entries are checked in a second pass over its data,
 * once the first found all of its blocks sound (nothing is checked in a
 * directory with a damaged block): no list of them is held. */
static int dirent_valid_fn(void *ctx, const char *name, size_t len,
			   uint64_t nid, unsigned int ftype)
{
	(void)ctx, (void)name, (void)len, (void)nid, (void)ftype;
	return 0;
}

struct dirpass {
	struct walk *w;
	const struct dirwork *dw;
	bool dot, dotdot;
};

static int check_entry(struct walk *w, uint64_t dirnid, const char *dpath,
		       const struct dent *d);

static int dirent_check_fn(void *ctx, const char *name, size_t len,
			   uint64_t nid, unsigned int ftype)
{
	struct dirpass *dp = ctx;
	struct walk *w = dp->w;
	const struct dirwork *dw = dp->dw;
	/* as far as a NUL */
	const struct dent d = { name, strnlen(name, len), nid, (uint8_t)ftype };

	if (d.len == 1 && d.name[0] == '.') {
		dp->dot = true;
		if (d.nid != dw->nid || d.ftype != EROFS_FT_DIR)
			problem(w, dw->path, "directory inode %" PRIu64 ": '.' names inode %" PRIu64 " (type %u)",
				dw->nid, d.nid, d.ftype);
		return 0;
	}
	if (d.len == 2 && !memcmp(d.name, "..", 2)) {
		dp->dotdot = true;
		if (d.nid != dw->parent || d.ftype != EROFS_FT_DIR)
			problem(w, dw->path, "directory inode %" PRIu64 ": '..' names inode %" PRIu64 ", its parent is %" PRIu64,
				dw->nid, d.nid, dw->parent);
		return 0;
	}
	return check_entry(w, dw->nid, dw->path, &d);
}

static int push_dir(struct walk *w, uint64_t nid, uint64_t parent, char *path)
{
	if (w->nstack == w->stackcap) {
		size_t cap = w->stackcap ? w->stackcap * 2 : 64;
		struct dirwork *s = realloc(w->stack, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		w->stack = s;
		w->stackcap = cap;
	}
	w->stack[w->nstack++] = (struct dirwork){ nid, parent, path };
	return 0;
}

static int check_entry(struct walk *w, uint64_t dirnid, const char *dpath,
		       const struct dent *d)
{
	struct erofs_rinode ino;
	struct ient *e, *dir;
	bool fresh, f2;
	char *path = join(dpath, d->name, d->len);

	if (!path)
		return -ENOMEM;
	if (erofs_read_inode(w->img, d->nid, &ino)) {
		problem(w, path, "%s", w->img->err);
		free(path);
		return 0;
	}
	if (ftype_of(ino.mode) != d->ftype)
		problem(w, path, "directory entry type %u does not match inode %" PRIu64 " (mode 0%o)",
			d->ftype, d->nid, ino.mode);
	e = tab_find(w, d->nid);
	if (!e && !S_ISDIR(ino.mode) && ino.nlink == 1) {
		/* reached once so far: the bit only; twice: a table entry
		 * (its link count will be found wrong) */
		int was = nidset_test_set(&w->once, d->nid);

		if (was < 0) {
			free(path);
			return -ENOMEM;
		}
		if (was) {
			e = tab_get(w, d->nid, &fresh);
			if (!e) {
				free(path);
				return -ENOMEM;
			}
			e->nlink = 1;
			e->refs = 2;
			free(path);
			return 0;
		}
		w->st->inodes++;
		goto check;
	}
	e = tab_get(w, d->nid, &fresh);
	if (!e) {
		free(path);
		return -ENOMEM;
	}
	dir = tab_get(w, dirnid, &f2);	/* there already: does not move */
	if (S_ISDIR(ino.mode)) {
		dir->subdirs++;
		if (!fresh) {
			problem(w, path, "directory inode %" PRIu64 " is also reached as %s",
				d->nid, e->path ? e->path : "another entry");
			free(path);
			return 0;
		}
		e->isdir = true;
		e->nlink = ino.nlink;
		e->path = strdup(path);
		if (push_dir(w, d->nid, dirnid, path)) {
			free(path);
			return -ENOMEM;
		}
		return 0;
	}
	e->refs++;
	if (!fresh) {
		if (w->ex && e->path && erofs_extract_link(w->ex, path, e->path))
			w->st->errors++;
		free(path);
		return 0;
	}
	e->nlink = ino.nlink;
	w->st->inodes++;
check:
	if (!check_xattrs(w, &ino, path)) {
		free(path);
		return 0;
	}
	check_leaf(w, &ino, path);
	if (w->ex && erofs_extract_meta(w->ex, path, &ino))
		w->st->errors++;
	extract_xattrs(w, &ino, path);
	/* the path is kept for hard links only (RSS on large trees) */
	if (ino.nlink > 1 || S_ISDIR(ino.mode))
		e = tab_get(w, d->nid, &fresh), e->path = path;
	else
		free(path);
	return 0;
}

static int check_dir(struct walk *w, struct dirwork *dw)
{
	struct erofs_rinode ino;
	struct dirpass dp = { .w = w, .dw = dw };
	struct ient *self;
	uint8_t *data = NULL;
	bool fresh;
	int ret = 0;

	self = tab_get(w, dw->nid, &fresh);
	if (!self)
		return -ENOMEM;
	self->refs++;
	w->st->inodes++;
	if (erofs_read_inode(w->img, dw->nid, &ino)) {
		problem(w, dw->path, "%s", w->img->err);
		return 0;
	}
	if (!S_ISDIR(ino.mode)) {
		problem(w, dw->path, "inode %" PRIu64 " is not a directory (mode 0%o)",
			dw->nid, ino.mode);
		return 0;
	}
	self->isdir = true;
	self->nlink = ino.nlink;
	if (w->ex && erofs_extract_dir(w->ex, dw->path))
		w->st->errors++;
	if (!check_xattrs(w, &ino, dw->path))
		goto meta;
	if (ino.layout != EROFS_LAYOUT_FLAT_PLAIN &&
	    ino.layout != EROFS_LAYOUT_FLAT_INLINE) {
		problem(w, dw->path, "inode %" PRIu64 ": %s directory", dw->nid,
			ino.layout == EROFS_LAYOUT_CHUNK_BASED ? "chunk-based" :
			"compressed");
		goto meta;
	}
	if (erofs_read_all(w->img, &ino, MAX_DIR_BYTES, &data)) {
		problem(w, dw->path, "%s", w->img->err);
		goto meta;
	}
	w->st->logical += ino.size;
	w->st->physical += ino.size;
	ret = erofs_read_dir(w->img, &ino, data, ino.size, dirent_valid_fn, NULL);
	if (ret) {
		problem(w, dw->path, "%s", w->img->err);
		ret = 0;
		goto out;
	}
	ret = erofs_read_dir(w->img, &ino, data, ino.size, dirent_check_fn, &dp);
	if (ret)
		goto out;
	if (!dp.dot || !dp.dotdot)
		problem(w, dw->path, "directory inode %" PRIu64 ": no '%s' entry",
			dw->nid, dp.dot ? ".." : ".");
out:
	free(data);
meta:
	if (w->ex && erofs_extract_meta(w->ex, dw->path, &ino))
		w->st->errors++;
	return ret;
}

/* ---- link counts ------------------------------------------------------------ */

static void check_links(struct walk *w)
{
	for (size_t i = 0; i < w->tabcap; i++) {
		const struct ient *e = &w->tab[i];
		uint32_t want;

		if (!e->used)
			continue;
		want = e->isdir ? 2 + e->subdirs : e->refs;
		if (e->nlink != want) {
			char nid[40];

			snprintf(nid, sizeof(nid), "nid %" PRIu64, e->nid);
			problem(w, e->path ? e->path : nid,
				"inode %" PRIu64 ": link count %u, but %s %u",
				e->nid, e->nlink,
				e->isdir ? "2 + subdirectories make" :
					   "directory entries name it", want);
		}
	}
}

static char *fingerprint_name(struct erofs_img *img, const char *given)
{
	static const char *const ns[] = {
		"", "user.", "system.posix_acl_access", "system.posix_acl_default",
		"trusted.", "lustre.", "security.",
	};
	const struct erofs_rprefix *p;
	char *s;

	if (given)
		return strdup(given);	/* the caller checked ISHARE_XATTRS */
	p = &img->prefixes[img->ishare_prefix];
	s = malloc(strlen(ns[p->base_index]) + p->infix_len + 1);
	if (!s)
		return NULL;
	strcpy(s, ns[p->base_index]);
	memcpy(s + strlen(s), p->infix, p->infix_len);
	s[strlen(ns[p->base_index]) + p->infix_len] = 0;
	return s;
}

int erofs_check(struct erofs_img *img, const struct erofs_check_opts *o,
		const struct fsf_log *log, struct erofs_check_stats *st)
{
	struct walk w = { .img = img, .o = o, .log = log, .st = st };
	struct ient *root;
	bool fresh;
	int ret = -ENOMEM;

	memset(st, 0, sizeof(*st));
	if (o->digest) {
		w.digest_name = fingerprint_name(img, o->digest_name);
		if (!w.digest_name)
			goto out;
	}
	if (o->extract_dir) {
		ret = erofs_extract_begin(&w.ex, o, log);
		if (ret)
			goto out;
	}
	/* files are checked inline when extracting (each file's owner,
	 * mode and times are set after its content is written) */
	ret = erofs_fpool_start(&w.pool, img, o->extract_dir ? 1 : o->workers,
				log, st);
	if (ret)
		goto out;
	ret = -ENOMEM;
	root = tab_get(&w, img->root_nid, &fresh);
	if (!root)
		goto out;
	root->path = strdup("/");
	ret = push_dir(&w, img->root_nid, img->root_nid, strdup("/"));
	while (!ret && w.nstack) {
		struct dirwork dw = w.stack[--w.nstack];

		if (!dw.path) {
			ret = -ENOMEM;
			break;
		}
		ret = check_dir(&w, &dw);
		free(dw.path);
	}
	erofs_fpool_stop(w.pool);	/* every file reported */
	w.pool = NULL;
	if (!ret)
		check_links(&w);
	/* directories' xattrs last: a default ACL set earlier would be
	 * inherited by the entries extracted under it */
	for (size_t i = 0; w.ex && !ret && i < w.tabcap; i++) {
		struct erofs_rinode ino;

		if (w.tab[i].used && w.tab[i].isdir && w.tab[i].path &&
		    !erofs_read_inode(img, w.tab[i].nid, &ino))
			extract_xattrs(&w, &ino, w.tab[i].path);
	}
	if (w.ex) {
		int r = erofs_extract_end(w.ex);

		if (!ret && r)
			st->errors++;
	}
out:
	erofs_fpool_stop(w.pool);
	if (ret == -ENOMEM)
		fsf_err(log, "out of memory");
	while (w.nstack)
		free(w.stack[--w.nstack].path);
	free(w.stack);
	for (size_t i = 0; i < w.tabcap; i++)
		free(w.tab[i].path);
	free(w.tab);
	nidset_free(&w.once);
	free(w.digest_name);
	return ret;
}
