// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The tree of a tar archive while it is read: nodes found by (parent,
 * name) in a hash table, every node kept in creation order (a parent
 * before its children).  An entry that replaces another makes a new node
 * and marks the old one dead; what was under a dead directory dies with
 * it when the tree is finished, and only then are the live nodes linked
 * into their parents' children and the dead ones freed.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "erofs/erofs_fs.h"
#include "internal.h"
#include "tar.h"

#define F_DEAD		1u
#define F_WHITEOUTS	2u	/* a directory holding aufs whiteouts */

struct slot {
	struct erofs_node *n;	/* NULL: empty */
	const struct erofs_node *parent;
	uint64_t hash;
};

struct tar_tree {
	struct erofs_build *b;
	struct slot *tab;
	size_t cap, used;
	struct erofs_node **all;	/* n->ino is the index until the end */
	uint8_t *flags;
	size_t nall, capall;
};

static uint64_t name_hash(const struct erofs_node *parent, const char *s,
			  size_t len)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)(uintptr_t)parent;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h ^ h >> 29;
}

static struct slot *find_slot(struct tar_tree *t, const struct erofs_node *parent,
			      const char *s, size_t len, uint64_t h)
{
	size_t mask = t->cap - 1;

	for (size_t i = h & mask;; i = (i + 1) & mask) {
		struct slot *sl = &t->tab[i];

		if (!sl->n)
			return sl;
		if (sl->hash == h && sl->parent == parent &&
		    sl->n->name_len == len && !memcmp(sl->n->name, s, len))
			return sl;
	}
}

static int grow_table(struct tar_tree *t)
{
	struct slot *old = t->tab;
	size_t oldcap = t->cap;

	t->cap = oldcap ? oldcap * 2 : 1024;
	t->tab = calloc(t->cap, sizeof(*t->tab));
	if (!t->tab) {
		t->tab = old;
		t->cap = oldcap;
		return -ENOMEM;
	}
	for (size_t i = 0; i < oldcap; i++) {
		struct slot *sl;

		if (!old[i].n)
			continue;
		sl = find_slot(t, old[i].parent, old[i].n->name,
			       old[i].n->name_len, old[i].hash);
		*sl = old[i];
	}
	free(old);
	return 0;
}

struct erofs_node *tar_tree_lookup(struct tar_tree *t, struct erofs_node *dir,
				   const char *s, size_t len)
{
	return find_slot(t, dir, s, len, name_hash(dir, s, len))->n;
}

struct erofs_node *tar_tree_add(struct tar_tree *t, struct erofs_node *dir,
				const char *s, size_t len)
{
	uint64_t h = name_hash(dir, s, len);
	struct erofs_node *n;
	struct slot *sl;

	if ((t->used + 1) * 2 > t->cap && grow_table(t))
		return NULL;
	if (t->nall == t->capall) {
		size_t cap = t->capall ? t->capall * 2 : 1024;
		struct erofs_node **a = realloc(t->all, cap * sizeof(*a));
		uint8_t *f;

		if (!a)
			return NULL;
		t->all = a;
		f = realloc(t->flags, cap);
		if (!f)
			return NULL;
		t->flags = f;
		t->capall = cap;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->name = malloc(len + 1);
	if (!n->name) {
		free(n);
		return NULL;
	}
	memcpy(n->name, s, len);
	n->name[len] = '\0';
	n->name_len = (uint16_t)len;
	n->parent = dir ? dir : n;
	n->nlink = 1;
	n->ino = (uint32_t)t->nall;
	t->all[t->nall] = n;
	t->flags[t->nall++] = 0;

	sl = find_slot(t, dir, s, len, h);
	if (sl->n)
		t->flags[sl->n->ino] |= F_DEAD;
	else
		t->used++;
	*sl = (struct slot){ n, dir, h };
	return n;
}

void tar_tree_drop(struct tar_tree *t, struct erofs_node *n)
{
	if (n != t->b->root)
		t->flags[n->ino] |= F_DEAD;
}

void tar_tree_mark_whiteouts(struct tar_tree *t, struct erofs_node *dir)
{
	t->flags[dir->ino] |= F_WHITEOUTS;
}

size_t tar_tree_count(const struct tar_tree *t)
{
	return t->nall;
}

int tar_tree_hide_below(struct tar_tree *t, struct erofs_node *dir,
			size_t before)
{
	/* a parent precedes its children: they sit after dir in t->all */
	for (size_t i = (size_t)dir->ino + 1; i < before && i < t->nall; i++) {
		struct erofs_node *n = t->all[i], *w;

		if (n->parent != dir || (t->flags[i] & F_DEAD))
			continue;
		w = tar_tree_add(t, dir, n->name, n->name_len);
		if (!w)
			return -ENOMEM;
		w->mode = S_IFCHR;
		w->rdev = 0;
	}
	t->flags[dir->ino] |= F_WHITEOUTS;
	return 0;
}

int tar_tree_new(struct tar_tree **out, struct erofs_build *b)
{
	struct tar_tree *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->b = b;
	/* the root: keyed by a NULL parent, found by no lookup */
	b->root = tar_tree_add(t, NULL, "", 0);
	if (!b->root) {
		tar_tree_free(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

/* a directory made for a path that names none (erofs-utils' rules) */
static struct erofs_node *implied_dir(struct tar_tree *t, struct erofs_node *p,
				      const char *s, size_t len)
{
	struct erofs_node *n = tar_tree_add(t, p, s, len);

	if (!n)
		return NULL;
	n->mode = S_IFDIR | 0755 | (p->mode & (S_IWGRP | S_IWOTH));
	n->uid = p->uid;
	n->gid = p->gid;
	n->mtime = p->mtime;
	n->mtime_nsec = p->mtime_nsec;
	return n;
}

int tar_tree_walk(struct tar_tree *t, const char *path, bool make,
		  struct erofs_node **parent, const char **last, size_t *len,
		  const char **why)
{
	struct erofs_node *dir = t->b->root;
	const char *s = path, *comp = NULL;
	size_t clen = 0;

	if (strlen(path) >= PATH_MAX) {
		*why = "path longer than PATH_MAX";
		return -EINVAL;
	}
	for (;;) {
		const char *e;
		size_t l;

		while (*s == '/')
			s++;
		if (!*s)
			break;
		e = strchr(s, '/');
		l = e ? (size_t)(e - s) : strlen(s);
		if (comp) {	/* the previous component is a directory */
			struct erofs_node *d = tar_tree_lookup(t, dir, comp, clen);

			if (!d && !make)
				return -ENOENT;
			if (!d)
				d = implied_dir(t, dir, comp, clen);
			if (!d)
				return -ENOMEM;
			if (!S_ISDIR(d->mode)) {
				*why = "a component of the path is not a directory";
				return -EINVAL;
			}
			dir = d;
			comp = NULL;
		}
		if (l == 1 && s[0] == '.') {
			/* nothing */
		} else if (l == 2 && s[0] == '.' && s[1] == '.') {
			dir = dir->parent;
		} else {
			if (l > EROFS_NAME_LEN) {
				*why = "a path component is longer than 255 bytes";
				return -EINVAL;
			}
			comp = s;
			clen = l;
		}
		s += l;
	}
	*parent = dir;
	*last = comp;
	*len = comp ? clen : 0;
	return 0;
}

void tar_node_clear_xattrs(struct erofs_node *n)
{
	for (uint16_t i = 0; i < n->nxattrs; i++) {
		free(n->xattrs[i]->name);
		free(n->xattrs[i]->value);
		free(n->xattrs[i]);
	}
	free(n->xattrs);
	n->xattrs = NULL;
	n->nxattrs = 0;
}

static void free_node(struct erofs_node *n)
{
	tar_node_clear_xattrs(n);
	free(n->symlink);
	free(n->name);
	free(n->children);
	free(n);
}

static void drop_xattr(struct erofs_node *n, const char *name)
{
	for (uint16_t i = 0; i < n->nxattrs; i++) {
		if (strcmp(n->xattrs[i]->name, name))
			continue;
		free(n->xattrs[i]->name);
		free(n->xattrs[i]->value);
		free(n->xattrs[i]);
		memmove(&n->xattrs[i], &n->xattrs[i + 1],
			(size_t)(n->nxattrs - i - 1) * sizeof(*n->xattrs));
		n->nxattrs--;
		return;
	}
}

static bool has_xattr(const struct erofs_node *n, const char *name)
{
	for (uint16_t i = 0; i < n->nxattrs; i++)
		if (!strcmp(n->xattrs[i]->name, name))
			return true;
	return false;
}

/* overlayfs metadata, as erofs-utils leaves it: with --ovlfs-strip no
 * opaque marks, and no whiteouts (character devices 0:0) in directories
 * that received aufs whiteouts; without, such directories are marked as
 * copied up (trusted.overlay.origin, no value) so that overlayfs does not
 * show the whiteouts */
static int ovl_metadata(struct tar_tree *t, bool strip)
{
	for (size_t i = 0; i < t->nall; i++) {
		struct erofs_node *n = t->all[i];
		int ret;

		if (t->flags[i] & F_DEAD)
			continue;
		if (strip) {
			if (i && S_ISCHR(n->mode) && n->rdev == 0 &&
			    (t->flags[n->parent->ino] & F_WHITEOUTS))
				t->flags[i] |= F_DEAD;
			else
				drop_xattr(n, "trusted.overlay.opaque");
			continue;
		}
		if (!(t->flags[i] & F_WHITEOUTS) ||
		    has_xattr(n, "trusted.overlay.origin"))
			continue;
		ret = erofs_node_add_xattr(t->b, n, i ? n->name : "/",
					   "trusted.overlay.origin", "", 0);
		if (ret)
			return ret;
	}
	return 0;
}

int tar_tree_finish(struct tar_tree *t, bool ovlfs_strip)
{
	struct erofs_build *b = t->b;
	uint32_t *nchild;
	int ret = ovl_metadata(t, ovlfs_strip);

	if (ret)
		return ret;
	nchild = calloc(t->nall, sizeof(*nchild));
	if (!nchild)
		return -ENOMEM;
	b->count = 0;
	for (size_t i = 0; i < t->nall; i++) {
		struct erofs_node *n = t->all[i];

		/* a parent precedes its children in t->all */
		if (i && (t->flags[n->parent->ino] & F_DEAD))
			t->flags[i] |= F_DEAD;
		if (t->flags[i] & F_DEAD)
			continue;
		b->count++;
		if (i)
			nchild[n->parent->ino]++;
	}
	for (size_t i = 0; i < t->nall; i++) {
		struct erofs_node *n = t->all[i];

		if ((t->flags[i] & F_DEAD) || !nchild[i])
			continue;
		n->children = malloc(nchild[i] * sizeof(*n->children));
		if (!n->children) {
			free(nchild);
			return -ENOMEM;
		}
	}
	for (size_t i = 1; i < t->nall; i++) {
		struct erofs_node *n = t->all[i];

		if (!(t->flags[i] & F_DEAD))
			n->parent->children[n->parent->nchildren++] = n;
	}
	free(nchild);
	for (size_t i = 0; i < t->nall; i++) {
		if (t->flags[i] & F_DEAD)
			free_node(t->all[i]);
		else
			t->all[i]->ino = 0;
	}
	t->nall = 0;	/* the live nodes belong to b->root now */
	return 0;
}

void tar_tree_free(struct tar_tree *t)
{
	if (!t)
		return;
	if (t->nall) {	/* not finished: nothing is linked yet */
		for (size_t i = 0; i < t->nall; i++)
			free_node(t->all[i]);
		t->b->root = NULL;
	}
	free(t->tab);
	free(t->all);
	free(t->flags);
	free(t);
}
