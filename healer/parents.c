// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The path of an inode, through the filesystem's directory parent pointers
 * (XFS_IOC_GETPARENTS_BY_HANDLE, Linux 6.10+, filesystems made with
 * parent pointers), as xfsprogs' healer reports inode events: from the
 * inode up to the root, one parent at each level (the first the kernel
 * returns: a file with several hard links gets one of its paths), bounded
 * in depth and length.  Callers fall back to "ino N gen G" whenever this
 * fails.  The walk takes the lookup as a callback so that the assembly can
 * be tested without a filesystem (tests/unit/test_healer_parents.c).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "healer.h"

int hm_parent_path(hm_parent_fn fn, void *ctx, uint64_t ino, uint32_t gen,
		   char **out)
{
	/* the names from the inode upwards; joined in reverse at the end */
	char *names[HM_PATH_DEPTH];
	unsigned int depth = 0;
	size_t total = 0;
	int err = 0;

	*out = NULL;
	for (;;) {
		struct hm_parent p;
		size_t len;

		memset(&p, 0, sizeof(p));
		err = fn(ctx, ino, gen, &p);
		if (err)
			goto out;
		if (p.root)
			break;
		len = strnlen(p.name, sizeof(p.name));
		if (!len || len == sizeof(p.name) || memchr(p.name, '/', len) ||
		    (p.ino == ino && p.gen == gen)) {
			err = -EUCLEAN;		/* no name, or its own parent */
			goto out;
		}
		if (depth == HM_PATH_DEPTH) {
			err = -ELOOP;
			goto out;
		}
		total += len + 1;
		if (total > HM_PATH_MAX) {
			err = -ENAMETOOLONG;
			goto out;
		}
		names[depth] = strndup(p.name, len);
		if (!names[depth]) {
			err = -ENOMEM;
			goto out;
		}
		depth++;
		ino = p.ino;
		gen = p.gen;
	}
	*out = malloc(total + 2);
	if (!*out) {
		err = -ENOMEM;
		goto out;
	}
	if (!depth) {
		strcpy(*out, "/");
	} else {
		char *d = *out;

		for (unsigned int i = depth; i-- > 0;) {
			size_t len = strlen(names[i]);

			*d++ = '/';
			memcpy(d, names[i], len);
			d += len;
		}
		*d = '\0';
	}
out:
	while (depth)
		free(names[--depth]);
	return err;
}

/* ---- XFS_IOC_GETPARENTS_BY_HANDLE (Linux 6.10 UAPI, not in bookworm's
 * xfslibs-dev 6.1, so defined here from the kernel's xfs_fs.h layout) --- */
struct hm_xfs_fid {
	uint16_t fid_len;	/* bytes after this field: 14 */
	uint16_t fid_pad;
	uint32_t fid_gen;
	uint64_t fid_ino;
};
struct hm_xfs_handle {
	unsigned char fsid[8];
	struct hm_xfs_fid fid;
};
struct hm_getparents_rec {
	struct hm_xfs_handle parent;
	uint32_t reclen;
	uint32_t reserved;
	char name[];
};
struct hm_getparents {
	uint32_t cursor[4];
	uint16_t iflags;
	uint16_t oflags;
	uint32_t bufsize;
	uint64_t reserved;
	uint64_t buffer;
};
struct hm_getparents_by_handle {
	struct hm_xfs_handle handle;
	struct hm_getparents req;
};
#define HM_GETPARENTS_OFLAG_ROOT (1U << 0)
#define HM_IOC_GETPARENTS_BY_HANDLE \
	_IOWR('X', 63, struct hm_getparents_by_handle)

/* XFS_IOC_FD_TO_HANDLE: the filesystem id for the handles above */
struct hm_fsop_handlereq {
	uint32_t fd;
	void *path;
	uint32_t oflags;
	void *ihandle;
	uint32_t ihandlen;
	void *ohandle;
	uint32_t *ohandlen;
};
#define HM_IOC_FD_TO_HANDLE _IOWR('X', 106, struct hm_fsop_handlereq)

_Static_assert(sizeof(struct hm_xfs_handle) == 24, "xfs_handle");
_Static_assert(sizeof(struct hm_getparents) == 40, "xfs_getparents");
_Static_assert(sizeof(struct hm_getparents_by_handle) == 64,
	       "xfs_getparents_by_handle");

struct ioctl_ctx {
	int fd;				/* any file of the filesystem */
	unsigned char fsid[8];
};

static int ioctl_parent(void *arg, uint64_t ino, uint32_t gen,
			struct hm_parent *p)
{
	struct ioctl_ctx *c = arg;
	struct hm_getparents_by_handle gh;
	union {
		struct hm_getparents_rec rec;
		unsigned char b[sizeof(struct hm_getparents_rec) + 1024];
	} buf;
	const struct hm_getparents_rec *r = &buf.rec;
	size_t namelen;

	memset(&gh, 0, sizeof(gh));
	memset(&buf, 0, sizeof(buf));
	memcpy(gh.handle.fsid, c->fsid, sizeof(c->fsid));
	gh.handle.fid.fid_len = sizeof(struct hm_xfs_fid) - sizeof(uint16_t);
	gh.handle.fid.fid_gen = gen;
	gh.handle.fid.fid_ino = ino;
	gh.req.bufsize = sizeof(buf);
	gh.req.buffer = (uint64_t)(uintptr_t)&buf;
	if (hm_ioctl_retry(c->fd, HM_IOC_GETPARENTS_BY_HANDLE, &gh) < 0)
		return -errno;
	if (gh.req.oflags & HM_GETPARENTS_OFLAG_ROOT) {
		p->root = true;
		return 0;
	}
	/* no record: no parent pointer (unlinked, or not yet linked) */
	if (r->reclen < sizeof(*r) + 2 || r->reclen > sizeof(buf))
		return -ENOENT;
	namelen = strnlen(r->name, r->reclen - sizeof(*r));
	if (namelen >= sizeof(p->name))
		return -ENAMETOOLONG;
	memcpy(p->name, r->name, namelen);
	p->name[namelen] = '\0';
	p->ino = r->parent.fid.fid_ino;
	p->gen = r->parent.fid.fid_gen;
	return 0;
}

/*
 * Looking a path up loads the inode (its core) and reads its parent
 * pointers (extended attributes, through the attribute fork's mapping).
 * When the event says one of those is damaged, the lookup fails and the
 * kernel reports the same damage again: a new event, a new lookup, for as
 * long as the filesystem stays mounted (seen on Linux 7.2.13).  Such events
 * keep "ino N gen G".
 */
bool hm_event_path_safe(const struct xfs_health_monitor_event *ev)
{
	const uint32_t reads = XFS_BS_SICK_INODE | XFS_BS_SICK_BMBTA |
			       XFS_BS_SICK_XATTR | XFS_BS_SICK_PARENT;

	if (!hm_event_known(ev))
		return false;
	if (ev->domain == XFS_HM_DOMAIN_FILERANGE)
		return true;
	if (ev->domain != XFS_HM_DOMAIN_INODE)
		return false;
	return ev->type == XFS_HM_TYPE_HEALTHY || !(ev->e.inode.mask & reads);
}

char *hm_inode_path(const char *mountpoint, const struct hm_handle *expect,
		    const char *label, uint64_t ino, uint32_t gen)
{
	struct ioctl_ctx c;
	struct hm_xfs_handle root;
	uint32_t rootlen = sizeof(root);
	struct hm_fsop_handlereq req;
	struct hm_handle now;
	struct hm_str s = { 0 };
	char *rel = NULL;
	int err;

	/* the mount is not pinned: open it for this walk only, and only if
	 * it is still the filesystem the events come from */
	c.fd = open(mountpoint, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c.fd < 0)
		return NULL;
	if (hm_get_handle(c.fd, &now) < 0 || !hm_handle_equal(&now, expect))
		goto out;
	memset(&req, 0, sizeof(req));
	req.fd = (uint32_t)c.fd;
	req.ohandle = &root;
	req.ohandlen = &rootlen;
	if (hm_ioctl_retry(c.fd, HM_IOC_FD_TO_HANDLE, &req) < 0 ||
	    rootlen < sizeof(c.fsid))
		goto out;
	memcpy(c.fsid, root.fsid, sizeof(c.fsid));
	err = hm_parent_path(ioctl_parent, &c, ino, gen, &rel);
	if (err)
		goto out;
	/* "/mnt" + "/a/b"; the root filesystem: "/a/b" */
	if (strcmp(label, "/"))
		hm_str_add(&s, "%s", label);
	else if (!strcmp(rel, "/"))
		hm_str_add(&s, "/");
	if (strcmp(rel, "/") || strcmp(label, "/"))
		hm_str_escape(&s, strcmp(rel, "/") ? rel : "");
out:
	free(rel);
	close(c.fd);
	if (s.oom || !s.p) {
		hm_str_free(&s);
		return NULL;
	}
	return s.p;
}
