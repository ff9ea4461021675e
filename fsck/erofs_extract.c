// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fsck.erofs --extract=DIR: the checked tree written under DIR: files,
 * directories, symlinks, devices, FIFOs, sockets, hard links, owners,
 * modes, nanosecond times and (with --xattrs) xattrs.  Directory modes
 * and times are applied at the end, deepest first, so that writing their
 * entries does not change them.  Names come from the checked directories
 * (no '/', never '.' or '..'), so no path leaves DIR.
 */
#include "config.h"

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

#include "erofs_check.h"

struct dirmeta {
	char *path;
	struct erofs_rinode ino;
};

struct erofs_extract {
	char *root;
	bool xattrs, overwrite, owner, perms;
	mode_t mask;		/* the umask, without --preserve-perms */
	const struct fsf_log *log;
	struct dirmeta *dirs;
	size_t ndirs, dircap;
	size_t unnamed;		/* xattrs in no Linux namespace, not restored */
	char buf[PATH_MAX * 2];
};

/* DIR + PATH in ex->buf, or NULL (errno ENAMETOOLONG) */
static const char *full(struct erofs_extract *ex, const char *path)
{
	int n = snprintf(ex->buf, sizeof(ex->buf), "%s%s", ex->root,
			 strcmp(path, "/") ? path : "");

	if (n < 0 || (size_t)n >= sizeof(ex->buf)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	return ex->buf;
}

static int fail(struct erofs_extract *ex, const char *what, const char *path)
{
	int e = errno;

	fsf_err(ex->log, "cannot %s %s: %s", what, path ? path : "(too long a path)",
		strerror(e));
	return -e;
}

int erofs_extract_begin(struct erofs_extract **exp,
			const struct erofs_check_opts *o,
			const struct fsf_log *log)
{
	const char *dir = o->extract_dir;
	struct erofs_extract *ex = calloc(1, sizeof(*ex));
	size_t len;

	if (!ex)
		return -ENOMEM;
	ex->root = strdup(dir);
	if (!ex->root) {
		free(ex);
		return -ENOMEM;
	}
	len = strlen(ex->root);
	while (len > 1 && ex->root[len - 1] == '/')
		ex->root[--len] = 0;
	if (!strcmp(ex->root, "/"))
		ex->root[0] = 0;
	ex->xattrs = o->extract_xattrs;
	ex->overwrite = o->overwrite;
	ex->owner = o->preserve_owner;
	ex->perms = o->preserve_perms;
	ex->mask = umask(022);
	umask(ex->mask);
	ex->log = log;
	*exp = ex;
	return 0;
}

/* ACLs a new object inherited from its parent's default ACL (or an
 * existing directory kept): the image's own are set afterwards */
static void drop_inherited(const char *p, bool dir)
{
	lremovexattr(p, "system.posix_acl_access");
	if (dir)
		lremovexattr(p, "system.posix_acl_default");
}

int erofs_extract_dir(struct erofs_extract *ex, const char *path)
{
	const char *p = full(ex, path);
	struct stat st;

	if (!p)
		return fail(ex, "create directory", p);
	if (!*p)
		return 0;
	if (mkdir(p, 0700) && (errno != EEXIST || lstat(p, &st) ||
			       !S_ISDIR(st.st_mode)))
		return fail(ex, "create directory", p);
	drop_inherited(p, true);
	return 0;
}

static int make_room(struct erofs_extract *ex, const char *p)
{
	struct stat st;

	if (lstat(p, &st))
		return 0;
	if (!ex->overwrite) {
		errno = EEXIST;
		return -1;
	}
	return S_ISDIR(st.st_mode) ? rmdir(p) : unlink(p);
}

int erofs_extract_file(struct erofs_extract *ex, const char *path)
{
	const char *p = full(ex, path);
	int fd;

	if (!p)
		return fail(ex, "create", p);
	if (make_room(ex, p))
		return fail(ex, "replace", p);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return fail(ex, "create", p);
	drop_inherited(p, false);
	return fd;
}

int erofs_extract_symlink(struct erofs_extract *ex, const char *path,
			  const char *target)
{
	const char *p = full(ex, path);

	if (!p || make_room(ex, p) || symlink(target, p))
		return fail(ex, "create symlink", p);
	return 0;
}

int erofs_extract_special(struct erofs_extract *ex, const char *path,
			  const struct erofs_rinode *ino)
{
	const char *p = full(ex, path);
	/* the kernel's new_encode_dev() layout */
	dev_t dev = makedev((ino->i_u & 0xfff00u) >> 8,
			    (ino->i_u & 0xffu) | ((ino->i_u >> 12) & 0xfff00u));

	if (S_ISFIFO(ino->mode) || S_ISSOCK(ino->mode))
		dev = 0;
	if (!p || make_room(ex, p) || mknod(p, (ino->mode & S_IFMT) | 0600, dev))
		return fail(ex, "create special file", p);
	drop_inherited(p, false);
	return 0;
}

int erofs_extract_link(struct erofs_extract *ex, const char *path,
		       const char *old)
{
	char o[PATH_MAX * 2];
	const char *p = full(ex, old);

	if (!p)
		return fail(ex, "create hard link", p);
	memcpy(o, p, strlen(p) + 1);
	p = full(ex, path);
	if (!p || make_room(ex, p) || link(o, p))
		return fail(ex, "create hard link", p);
	return 0;
}

int erofs_extract_xattr(struct erofs_extract *ex, const char *path,
			const char *name, size_t name_len,
			const uint8_t *value, size_t value_len)
{
	char n[512];

	if (!ex->xattrs)
		return 0;
	if (name_len >= sizeof(n)) {
		fsf_err(ex->log, "%s: xattr name of %zu bytes is too long to restore",
			path, name_len);
		return -ENAMETOOLONG;
	}
	memcpy(n, name, name_len);
	n[name_len] = 0;
	/* a name in no namespace (the default fingerprint name,
	 * erofs.fingerprint.v1) has no place in a Linux file: skipped and
	 * counted, as erofs-utils skips it */
	if (strncmp(n, "user.", 5) && strncmp(n, "trusted.", 8) &&
	    strncmp(n, "security.", 9) && strncmp(n, "system.", 7)) {
		ex->unnamed++;
		return 0;
	}
	if (!full(ex, path) || lsetxattr(ex->buf, n, value, value_len, 0))
		return fail(ex, "set an xattr on", ex->buf);
	return 0;
}

static int apply_meta(struct erofs_extract *ex, const char *path,
		      const struct erofs_rinode *ino)
{
	const char *p = full(ex, path);
	struct timespec ts[2] = {
		{ .tv_sec = ino->mtime, .tv_nsec = ino->mtime_nsec },
		{ .tv_sec = ino->mtime, .tv_nsec = ino->mtime_nsec },
	};

	if (!p)
		return fail(ex, "restore", p);
	if (!*p)
		return 0;
	if (ex->owner && lchown(p, ino->uid, ino->gid))
		return fail(ex, "set the owner of", p);
	if (!S_ISLNK(ino->mode) &&
	    chmod(p, ex->perms ? ino->mode & 07777 : ino->mode & 0777 & ~ex->mask))
		return fail(ex, "set the mode of", p);
	if (utimensat(AT_FDCWD, p, ts, AT_SYMLINK_NOFOLLOW))
		return fail(ex, "set the times of", p);
	return 0;
}

int erofs_extract_meta(struct erofs_extract *ex, const char *path,
		       const struct erofs_rinode *ino)
{
	if (!S_ISDIR(ino->mode))
		return apply_meta(ex, path, ino);
	if (ex->ndirs == ex->dircap) {
		size_t cap = ex->dircap ? ex->dircap * 2 : 64;
		struct dirmeta *d = realloc(ex->dirs, cap * sizeof(*d));

		if (!d)
			return -ENOMEM;
		ex->dirs = d;
		ex->dircap = cap;
	}
	ex->dirs[ex->ndirs].path = strdup(path);
	if (!ex->dirs[ex->ndirs].path)
		return -ENOMEM;
	ex->dirs[ex->ndirs++].ino = *ino;
	return 0;
}

int erofs_extract_end(struct erofs_extract *ex)
{
	int ret = 0;

	if (ex->unnamed)
		fsf_warn(ex->log, "%zu extended attribute%s in no Linux namespace (such as the default fingerprint name) not restored",
			 ex->unnamed, ex->unnamed == 1 ? "" : "s");
	/* the walk saw parents before children: undo in reverse */
	while (ex->ndirs) {
		struct dirmeta *d = &ex->dirs[--ex->ndirs];

		if (apply_meta(ex, d->path, &d->ino))
			ret = -EIO;
		free(d->path);
	}
	free(ex->dirs);
	free(ex->root);
	free(ex);
	return ret;
}
