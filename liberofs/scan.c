// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 1: read the source directory into memory.  Each directory is read
 * completely and closed before its subdirectories are visited, so the scan
 * holds one directory descriptor at a time whatever the depth.  Children are
 * sorted bytewise, the order EROFS directories need, which also makes the
 * whole build independent of readdir order.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "erofs/erofs_fs.h"
#include "internal.h"

/*
 * A directory's entries, read with getdents64 into a buffer of the scan's
 * own: each directory costs its open, reads and close, without the
 * fstat and two fcntl calls fdopendir adds (15,000 system calls on the
 * 5,100 directories of /usr/share, on the serial scan).  One buffer
 * serves the whole scan: a directory is read through before the next.
 */
struct dents {
	int fd;
	size_t pos, len;
	_Alignas(struct dirent64) char buf[32768];
};

struct scan_path {
	char buf[PATH_MAX];	/* "<source>/<rel>" */
	size_t src_len;		/* length of "<source>/" */
	size_t len;
	struct dents dents;
};

/* The next entry of D, or NULL at the end (*ERR 0) or on an error (*ERR
 * the negative errno). */
static const struct dirent64 *dents_next(struct dents *d, int *err)
{
	const struct dirent64 *de;

	*err = 0;
	if (d->pos >= d->len) {
		ssize_t r = getdents64(d->fd, d->buf, sizeof(d->buf));

		if (r <= 0) {
			*err = r < 0 ? -errno : 0;
			return NULL;
		}
		d->len = (size_t)r;
		d->pos = 0;
	}
	de = (const struct dirent64 *)(d->buf + d->pos);
	d->pos += de->d_reclen;
	return de;
}

static const char *rel_of(const struct scan_path *p)
{
	return p->len > p->src_len ? p->buf + p->src_len : ".";
}

static int read_xattrs(struct erofs_build *b, struct erofs_node *n,
		       const char *path)
{
	char *names = NULL, *value = NULL;
	ssize_t len, vlen;
	int ret = 0;

	if (b->opts->xattr_tolerance < 0)
		return 0;
	len = llistxattr(path, NULL, 0);
	if (len < 0) {
		if (errno == ENOTSUP || errno == ENOSYS)
			return 0;
		ret = -errno;
		fsf_err(b->log, "cannot list xattrs of %s: %s", path,
			strerror(errno));
		return ret;
	}
	if (len == 0)
		return 0;
	names = malloc((size_t)len);
	value = malloc(EROFS_XATTR_MAX_VALUE + 1);
	if (!names || !value) {
		ret = -ENOMEM;
		goto out;
	}
	len = llistxattr(path, names, (size_t)len);
	if (len < 0) {
		ret = -errno;
		fsf_err(b->log, "cannot list xattrs of %s: %s", path,
			strerror(errno));
		goto out;
	}
	for (char *k = names; k < names + len; k += strlen(k) + 1) {
		/* the fingerprint is computed here, never copied */
		if (b->opts->digest_name && !strcmp(k, b->opts->digest_name))
			continue;
		vlen = lgetxattr(path, k, value, EROFS_XATTR_MAX_VALUE + 1);
		if (vlen < 0) {
			ret = -errno;
			fsf_err(b->log, "cannot read xattr %s of %s: %s", k,
				path, strerror(errno));
			goto out;
		}
		ret = erofs_node_add_xattr(b, n, path, k, value, (size_t)vlen);
		if (ret)
			goto out;
	}
out:
	free(names);
	free(value);
	return ret;
}

static uint32_t encode_dev(dev_t d)
{
	unsigned int ma = major(d), mi = minor(d);

	return (mi & 0xffu) | (ma << 8) | ((mi & ~0xffu) << 12);
}

/* Fill node N from its lstat result and the file itself. */
static int fill_node(struct erofs_build *b, struct erofs_node *n,
		     const struct stat *st, int dirfd, const char *name,
		     const char *path)
{
	int ret;

	n->mode = st->st_mode;
	n->src_dev = st->st_dev;
	n->src_ino = st->st_ino;
	n->src_nlink = (uint32_t)st->st_nlink;
	n->nlink = 1;
	ret = erofs_node_set_ids(b, n, st->st_uid, st->st_gid);
	if (ret)
		return ret;
	erofs_node_set_mtime(b, n, st->st_mtim.tv_sec,
			     (uint32_t)st->st_mtim.tv_nsec);

	switch (st->st_mode & S_IFMT) {
	case S_IFREG:
		n->size = (uint64_t)st->st_size;
		break;
	case S_IFDIR:
		break;
	case S_IFLNK: {
		char target[PATH_MAX + 1];
		ssize_t l = readlinkat(dirfd, name, target, sizeof(target));

		if (l < 0 || (size_t)l > PATH_MAX) {
			fsf_err(b->log, "cannot read symlink %s: %s", path,
				l < 0 ? strerror(errno) : "target too long");
			return l < 0 ? -errno : -ENAMETOOLONG;
		}
		n->symlink = malloc((size_t)l + 1);
		if (!n->symlink)
			return -ENOMEM;
		memcpy(n->symlink, target, (size_t)l);
		n->symlink[l] = '\0';
		n->size = (uint64_t)l;
		break;
	}
	case S_IFCHR:
	case S_IFBLK:
		if (major(st->st_rdev) > 0xfffu || minor(st->st_rdev) > 0xfffffu) {
			fsf_err(b->log, "%s: device number %u:%u cannot be stored",
				path, major(st->st_rdev), minor(st->st_rdev));
			return -EOVERFLOW;
		}
		n->rdev = encode_dev(st->st_rdev);
		break;
	case S_IFIFO:
	case S_IFSOCK:
		break;
	default:
		fsf_err(b->log, "%s: file type %o cannot be stored in EROFS",
			path, (unsigned int)(st->st_mode & S_IFMT));
		return -EINVAL;
	}
	return read_xattrs(b, n, path);
}

static int path_push(struct erofs_build *b, struct scan_path *p,
		     const char *name, size_t *saved)
{
	size_t nl = strlen(name);
	size_t sep = p->len > p->src_len ? 1 : 0;

	*saved = p->len;
	if (p->len + sep + nl + 1 > sizeof(p->buf)) {
		p->buf[p->len] = '\0';
		fsf_err(b->log, "%s/%s: path too long", p->buf, name);
		return -ENAMETOOLONG;
	}
	if (sep)
		p->buf[p->len++] = '/';
	memcpy(p->buf + p->len, name, nl + 1);
	p->len += nl;
	return 0;
}

static int scan_dir(struct erofs_build *b, struct erofs_node *dir,
		    struct scan_path *p)
{
	const char *rel = rel_of(p);
	int fd = openat(b->src_fd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			O_CLOEXEC);
	struct dents *d = &p->dents;
	const struct dirent64 *de;
	int ret = 0, err = 0;
	size_t cap = 0;

	if (fd < 0) {
		fsf_err(b->log, "cannot open directory %s: %s", p->buf,
			strerror(errno));
		return -errno;
	}
	d->fd = fd;
	d->pos = d->len = 0;
	while ((de = dents_next(d, &err)) != NULL) {
		struct erofs_node *c, **grown;
		struct stat st;
		size_t saved, nl;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		nl = strlen(de->d_name);
		ret = path_push(b, p, de->d_name, &saved);
		if (ret)
			break;
		if (nl > EROFS_NAME_LEN) {
			fsf_err(b->log, "%s: name longer than %u bytes", p->buf,
				EROFS_NAME_LEN);
			ret = -ENAMETOOLONG;
			break;
		}
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW)) {
			ret = -errno;
			fsf_err(b->log, "cannot stat %s: %s", p->buf,
				strerror(errno));
			break;
		}
		if (erofs_path_excluded(b, rel_of(p)) ||
		    fsf_dev_is_same_file(&b->dev, st.st_dev, st.st_ino)) {
			p->len = saved;
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			ret = -ENOMEM;
			break;
		}
		c->name = strdup(de->d_name);
		c->name_len = (uint16_t)nl;
		c->parent = dir;
		if (dir->nchildren == cap) {
			cap = cap ? cap * 2 : 16;
			grown = realloc(dir->children, cap * sizeof(*grown));
			if (!grown) {
				free(c->name);
				free(c);
				ret = -ENOMEM;
				break;
			}
			dir->children = grown;
		}
		dir->children[dir->nchildren++] = c;
		if (!c->name) {
			ret = -ENOMEM;
			break;
		}
		ret = fill_node(b, c, &st, fd, de->d_name, p->buf);
		if (ret)
			break;
		erofs_plan_early_add(b, c);
		p->len = saved;
		p->buf[p->len] = '\0';
		b->count++;
	}
	if (!ret && err) {
		ret = err;
		fsf_err(b->log, "cannot read directory %s: %s", p->buf,
			strerror(-err));
	}
	close(fd);
	if (ret)
		return ret;

	if (dir->nchildren > 1)
		qsort(dir->children, dir->nchildren, sizeof(*dir->children),
		      erofs_cmp_child);
	for (uint32_t i = 0; i < dir->nchildren; i++) {
		struct erofs_node *c = dir->children[i];
		size_t saved;

		if (!S_ISDIR(c->mode))
			continue;
		ret = path_push(b, p, c->name, &saved);
		if (!ret)
			ret = scan_dir(b, c, p);
		p->len = saved;
		p->buf[p->len] = '\0';
		if (ret)
			return ret;
	}
	return 0;
}

int erofs_scan(struct erofs_build *b)
{
	struct scan_path *p;
	struct stat st;
	int ret, early;

	if (fstat(b->src_fd, &st) != 0)
		return -errno;
	p = malloc(sizeof(*p));
	b->root = calloc(1, sizeof(*b->root));
	if (!p || !b->root) {
		free(p);
		return -ENOMEM;
	}
	b->root->name = strdup("");
	b->root->parent = b->root;
	b->count = 1;
	snprintf(p->buf, sizeof(p->buf), "%s", b->opts->source);
	p->len = strlen(p->buf);
	while (p->len > 1 && p->buf[p->len - 1] == '/')
		p->len--;
	p->buf[p->len] = '\0';
	ret = fill_node(b, b->root, &st, b->src_fd, ".", p->buf);
	if (!ret)
		ret = erofs_plan_early_start(b);
	if (!ret) {
		p->buf[p->len++] = '/';
		p->buf[p->len] = '\0';
		p->src_len = p->len;
		ret = scan_dir(b, b->root, p);
	}
	free(p);
	/* always: its threads may not outlive the scan */
	early = erofs_plan_early_end(b, ret);
	if (!ret)
		ret = early;
	return ret ? ret : erofs_tree_finish(b, false);
}
