// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The in-memory tree, whatever built it (the directory scan or the tar
 * reader): attributes after the uid/gid/time options, xattrs, child order,
 * the breadth-first node order, hard-link masters, and freeing it.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "erofs/erofs_fs.h"
#include "internal.h"

/* --exclude-path and --exclude-regex, against a path relative to the source */
bool erofs_path_excluded(const struct erofs_build *b, const char *rel)
{
	const struct erofs_mkfs_opts *o = b->opts;

	for (size_t i = 0; i < o->n_exclude_paths; i++) {
		const char *pat = o->exclude_paths[i];

		while (*pat == '/')
			pat++;
		if (strcmp(pat, rel) == 0)
			return true;
	}
	for (size_t i = 0; i < o->n_exclude_regexes; i++)
		if (regexec(&o->exclude_regexes[i], rel, 0, NULL, 0) == 0)
			return true;
	return false;
}

static int apply_id(const struct erofs_build *b, const char *what,
		    int64_t forced, int64_t offset, uint64_t id, uint32_t *out)
{
	int64_t v;

	if (b->opts->all_root) {
		*out = 0;
		return 0;
	}
	v = forced >= 0 ? forced : (int64_t)id + offset;
	if (v < 0 || v > (int64_t)UINT32_MAX) {
		fsf_err(b->log, "%s out of range after offset: %lld", what,
			(long long)v);
		return -ERANGE;
	}
	*out = (uint32_t)v;
	return 0;
}


int erofs_node_set_ids(struct erofs_build *b, struct erofs_node *n,
		       uint64_t uid, uint64_t gid)
{
	const struct erofs_mkfs_opts *o = b->opts;
	int ret = apply_id(b, "uid", o->force_uid, o->uid_offset, uid, &n->uid);

	return ret ? ret : apply_id(b, "gid", o->force_gid, o->gid_offset, gid,
				    &n->gid);
}

void erofs_node_set_mtime(struct erofs_build *b, struct erofs_node *n,
			  int64_t sec, uint32_t nsec)
{
	const struct erofs_mkfs_opts *o = b->opts;

	if (o->all_time || (o->clamp_time && sec >= o->build_time)) {
		n->mtime = o->build_time;
		n->mtime_nsec = 0;
	} else {
		n->mtime = sec;
		n->mtime_nsec = nsec;
	}
}

/* Append one raw xattr, resolved to a namespace, to node N. */
int erofs_node_add_xattr(struct erofs_build *b, struct erofs_node *n,
		     const char *path, const char *name, const void *value,
		     size_t value_len)
{
	struct erofs_xattr *x, **grown;
	uint8_t index;
	size_t suffix;

	if (erofs_xattr_std_prefix(name, &index, &suffix) != 0) {
		fsf_warn(b->log, "%s: xattr %s has a namespace EROFS cannot store; skipped",
			 path, name);
		return 0;
	}
	if (value_len > EROFS_XATTR_MAX_VALUE) {
		fsf_err(b->log, "%s: xattr %s value is %zu bytes, more than EROFS can store (%u)",
			path, name, value_len, EROFS_XATTR_MAX_VALUE);
		return -E2BIG;
	}
	for (uint16_t i = 0; i < n->nxattrs; i++) {
		void *v;

		if (strcmp(n->xattrs[i]->name, name))
			continue;
		/* set again (tar input): the later value wins */
		v = malloc(value_len ? value_len : 1);
		if (!v)
			return -ENOMEM;
		memcpy(v, value, value_len);
		free(n->xattrs[i]->value);
		n->xattrs[i]->value = v;
		n->xattrs[i]->value_len = (uint16_t)value_len;
		return 0;
	}
	x = calloc(1, sizeof(*x));
	grown = realloc(n->xattrs, (n->nxattrs + 1u) * sizeof(*grown));
	if (!x || !grown) {
		free(x);
		if (grown)
			n->xattrs = grown;
		return -ENOMEM;
	}
	n->xattrs = grown;
	x->name = strdup(name);
	x->value = malloc(value_len ? value_len : 1);
	if (!x->name || !x->value) {
		free(x->name);
		free(x->value);
		free(x);
		return -ENOMEM;
	}
	memcpy(x->value, value, value_len);
	x->name_len = (uint16_t)strlen(name);
	x->value_len = (uint16_t)value_len;
	x->index = index;
	x->base_index = index;
	x->suffix_off = (uint16_t)suffix;
	x->filter_off = (uint16_t)suffix;
	x->shared_id = -1;
	n->xattrs[n->nxattrs++] = x;
	return 0;
}


int erofs_cmp_child(const void *a, const void *c)
{
	const struct erofs_node *x = *(struct erofs_node *const *)a;
	const struct erofs_node *y = *(struct erofs_node *const *)c;
	size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
	int r = memcmp(x->name, y->name, n);

	return r ? r : (int)x->name_len - (int)y->name_len;
}


static void sort_children(struct erofs_node *n);

/* Breadth-first order: a directory's children sit together, root first;
 * with SORT each directory's children are sorted by name first (tar
 * input, whose entries come in the archive's order). */
static int order_nodes(struct erofs_build *b, bool sort)
{
	size_t head = 0, tail = 0;

	b->order = malloc(b->count * sizeof(*b->order));
	if (!b->order)
		return -ENOMEM;
	b->order[tail++] = b->root;
	while (head < tail) {
		struct erofs_node *n = b->order[head++];

		if (sort)
			sort_children(n);
		for (uint32_t i = 0; i < n->nchildren; i++)
			b->order[tail++] = n->children[i];
	}
	return 0;
}

struct link_key {
	dev_t dev;
	ino_t ino;
	size_t pos;
};

static int cmp_link(const void *a, const void *c)
{
	const struct link_key *x = a, *y = c;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Hard links: the first link in layout order owns the inode. */
static int resolve_hardlinks(struct erofs_build *b)
{
	struct link_key *keys;
	size_t n = 0;

	keys = malloc(b->count * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	for (size_t i = 0; i < b->count; i++) {
		struct erofs_node *x = b->order[i];

		if (!S_ISDIR(x->mode) && x->src_nlink > 1)
			keys[n++] = (struct link_key){ x->src_dev, x->src_ino, i };
	}
	if (n > 1)
		qsort(keys, n, sizeof(*keys), cmp_link);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		struct erofs_node *m = b->order[keys[i].pos];

		while (j < n && keys[j].dev == keys[i].dev &&
		       keys[j].ino == keys[i].ino) {
			b->order[keys[j].pos]->master = m;
			j++;
		}
		m->nlink = (uint32_t)(j - i);
		i = j;
	}
	free(keys);

	b->ninodes = 0;
	for (size_t i = 0; i < b->count; i++) {
		struct erofs_node *x = b->order[i];

		if (S_ISDIR(x->mode)) {
			x->nlink = 2;
			for (uint32_t c = 0; c < x->nchildren; c++)
				if (S_ISDIR(x->children[c]->mode))
					x->nlink++;
		}
		if (!x->master)
			b->ninodes++;
	}
	return 0;
}


static int cmp_archive(const void *pa, const void *pb)
{
	const struct erofs_node *a = *(struct erofs_node *const *)pa;
	const struct erofs_node *b = *(struct erofs_node *const *)pb;

	if (a->src_seq != b->src_seq)
		return a->src_seq < b->src_seq ? -1 : 1;
	return a->ino < b->ino ? -1 : a->ino > b->ino;
}

void erofs_data_order(const struct erofs_build *b, struct erofs_node **v,
		      size_t n)
{
	if (b->opts->sort_none && b->from_tar && n > 1)
		qsort(v, n, sizeof(*v), cmp_archive);
}

/* Children sorted, then the node order and hard-link masters. */
static void sort_children(struct erofs_node *n)
{
	if (n->nchildren > 1)
		qsort(n->children, n->nchildren, sizeof(*n->children),
		      erofs_cmp_child);
}

int erofs_tree_finish(struct erofs_build *b, bool sort)
{
	int ret = order_nodes(b, sort);

	return ret ? ret : resolve_hardlinks(b);
}

static void free_xattr_item(struct erofs_xattr *x)
{
	free(x->name);
	free(x->value);
	free(x);
}

void erofs_zkept_free(struct erofs_node *n)
{
	if (!n->zkept)
		return;
	free(n->zkept->out);
	free(n->zkept->ext);
	free(n->zkept);
	n->zkept = NULL;
}

/* Depth-first; the depth is bounded by PATH_MAX, as in the scan. */
static void free_subtree(struct erofs_node *n, bool own_xattrs)
{
	for (uint32_t i = 0; i < n->nchildren; i++)
		free_subtree(n->children[i], own_xattrs);
	if (own_xattrs)
		for (uint16_t x = 0; x < n->nxattrs; x++)
			free_xattr_item(n->xattrs[x]);
	free(n->name);
	free(n->children);
	free(n->symlink);
	free(n->xattrs);
	free(n->tail);
	free(n->zindex);
	erofs_zkept_free(n);
	free(n);
}

void erofs_tree_free(struct erofs_build *b)
{
	/* before interning every node owns its xattr items; after it, the
	 * distinct items in b->xattrs are the only owners */
	if (b->root)
		free_subtree(b->root, !b->xattrs);
	for (size_t i = 0; i < b->nxattrs; i++)
		free_xattr_item(b->xattrs[i]);
	free(b->xattrs);
	free(b->order);
	free(b->prefixes);
}
