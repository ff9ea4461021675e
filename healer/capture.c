// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Capture files: recorded health event streams for --replay (tests, bench,
 * post-mortems).  Layout in healer.h.  Records are little-endian on disk and
 * converted field by field, so a capture reads the same on any host.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "healer.h"

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return le32toh(v);
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return le64toh(v);
}

static void set32(unsigned char *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, 4);
}

static void set64(unsigned char *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, 8);
}

/*
 * The union is decoded by its layout for the domain/type; for unknown
 * events the payload bytes are kept as they are (printed raw).
 */
void hm_event_from_le(struct xfs_health_monitor_event *ev,
		      const unsigned char *rec)
{
	const unsigned char *p = rec + 16;

	memset(ev, 0, sizeof(*ev));
	ev->domain = get32(rec);
	ev->type = get32(rec + 4);
	ev->time_ns = get64(rec + 8);
	memcpy(ev->e.raw, p, sizeof(ev->e.raw));
	if (!hm_event_known(ev))
		return;
	switch (ev->domain) {
	case XFS_HM_DOMAIN_MOUNT:
		if (ev->type == XFS_HM_TYPE_LOST)
			ev->e.lost.count = get64(p);
		else if (ev->type == XFS_HM_TYPE_SHUTDOWN)
			ev->e.shutdown.reasons = get32(p);
		break;
	case XFS_HM_DOMAIN_FS:
		ev->e.fs.mask = get32(p);
		break;
	case XFS_HM_DOMAIN_AG:
	case XFS_HM_DOMAIN_RTGROUP:
		ev->e.group.mask = get32(p);
		ev->e.group.gno = get32(p + 4);
		break;
	case XFS_HM_DOMAIN_INODE:
		ev->e.inode.mask = get32(p);
		ev->e.inode.gen = get32(p + 4);
		ev->e.inode.ino = get64(p + 8);
		break;
	case XFS_HM_DOMAIN_DATADEV:
	case XFS_HM_DOMAIN_RTDEV:
	case XFS_HM_DOMAIN_LOGDEV:
		ev->e.media.daddr = get64(p);
		ev->e.media.bbcount = get64(p + 8);
		break;
	case XFS_HM_DOMAIN_FILERANGE:
		ev->e.filerange.pos = get64(p);
		ev->e.filerange.len = get64(p + 8);
		ev->e.filerange.ino = get64(p + 16);
		ev->e.filerange.gen = get32(p + 24);
		ev->e.filerange.error = get32(p + 28);
		break;
	}
}

void hm_event_to_le(unsigned char *rec,
		    const struct xfs_health_monitor_event *ev)
{
	unsigned char *p = rec + 16;

	memset(rec, 0, XFS_HM_EVENT_SIZE);
	set32(rec, ev->domain);
	set32(rec + 4, ev->type);
	set64(rec + 8, ev->time_ns);
	memcpy(p, ev->e.raw, sizeof(ev->e.raw));
	if (!hm_event_known(ev))
		return;
	switch (ev->domain) {
	case XFS_HM_DOMAIN_MOUNT:
		if (ev->type == XFS_HM_TYPE_LOST)
			set64(p, ev->e.lost.count);
		else if (ev->type == XFS_HM_TYPE_SHUTDOWN)
			set32(p, ev->e.shutdown.reasons);
		break;
	case XFS_HM_DOMAIN_FS:
		set32(p, ev->e.fs.mask);
		break;
	case XFS_HM_DOMAIN_AG:
	case XFS_HM_DOMAIN_RTGROUP:
		set32(p, ev->e.group.mask);
		set32(p + 4, ev->e.group.gno);
		break;
	case XFS_HM_DOMAIN_INODE:
		set32(p, ev->e.inode.mask);
		set32(p + 4, ev->e.inode.gen);
		set64(p + 8, ev->e.inode.ino);
		break;
	case XFS_HM_DOMAIN_DATADEV:
	case XFS_HM_DOMAIN_RTDEV:
	case XFS_HM_DOMAIN_LOGDEV:
		set64(p, ev->e.media.daddr);
		set64(p + 8, ev->e.media.bbcount);
		break;
	case XFS_HM_DOMAIN_FILERANGE:
		set64(p, ev->e.filerange.pos);
		set64(p + 8, ev->e.filerange.len);
		set64(p + 16, ev->e.filerange.ino);
		set32(p + 24, ev->e.filerange.gen);
		set32(p + 28, ev->e.filerange.error);
		break;
	}
}

int hm_capture_open(struct hm_capture *c, const char *path,
		    const struct fsf_log *log)
{
	unsigned char h[HM_CAPTURE_HDR];
	size_t n;
	uint32_t flags;

	memset(c, 0, sizeof(*c));
	c->path = path;
	c->f = fopen(path, "rbe");
	if (!c->f) {
		fsf_err(log, "cannot open capture %s: %s", path,
			strerror(errno));
		return -1;
	}
	n = fread(h, 1, sizeof(h), c->f);
	if (n < 8 || memcmp(h, HM_CAPTURE_MAGIC, 8) != 0) {
		fsf_err(log, "%s: not an xfs_healer capture (bad magic)", path);
		goto fail;
	}
	if (n < sizeof(h)) {
		fsf_err(log, "%s: truncated capture header (%zu of %d bytes)",
			path, n, HM_CAPTURE_HDR);
		goto fail;
	}
	if (get32(h + 8) != 1) {
		fsf_err(log, "%s: unsupported capture version %" PRIu32, path,
			get32(h + 8));
		goto fail;
	}
	c->recsize = get32(h + 12);
	if (c->recsize < XFS_HM_EVENT_SIZE || c->recsize > 4096) {
		fsf_err(log, "%s: bad record size %" PRIu32 " (64..4096)", path,
			c->recsize);
		goto fail;
	}
	flags = get32(h + 16);
	c->info.backrefs = flags & HM_CAP_BACKREFS;
	c->info.has_autofsck = flags & HM_CAP_AUTOFSCK;
	c->info.readonly = flags & HM_CAP_READONLY;
	memcpy(c->info.autofsck, h + 20, sizeof(c->info.autofsck) - 1);
	c->info.autofsck[sizeof(c->info.autofsck) - 1] = '\0';
	c->offset = HM_CAPTURE_HDR;
	return 0;
fail:
	fclose(c->f);
	c->f = NULL;
	return -1;
}

int hm_capture_next(struct hm_capture *c, struct xfs_health_monitor_event *ev)
{
	unsigned char rec[4096];
	size_t n = fread(rec, 1, c->recsize, c->f);
	int r;

	if (n == c->recsize) {
		hm_event_from_le(ev, rec);
		c->offset += n;
		return 1;
	}
	if (ferror(c->f))
		r = asprintf(&c->err, "%s: read error at byte %" PRIu64 ": %s",
			     c->path, c->offset, strerror(errno));
	else if (n == 0)
		return 0;
	else
		r = asprintf(&c->err, "%s: truncated record at byte %" PRIu64
			     " (%zu of %" PRIu32 " bytes)", c->path, c->offset,
			     n, c->recsize);
	if (r < 0)
		c->err = NULL;
	return -1;
}

void hm_capture_close(struct hm_capture *c)
{
	if (c->f)
		fclose(c->f);
	c->f = NULL;
	free(c->err);
	c->err = NULL;
}

int hm_capture_create(struct hm_capture *c, const char *path,
		      const struct hm_fsinfo *info, const struct fsf_log *log)
{
	unsigned char h[HM_CAPTURE_HDR] = { 0 };
	uint32_t flags = 0;

	memset(c, 0, sizeof(*c));
	c->path = path;
	c->recsize = XFS_HM_EVENT_SIZE;
	c->f = fopen(path, "wbxe");
	if (!c->f) {
		fsf_err(log, "cannot create capture %s: %s", path,
			strerror(errno));
		return -1;
	}
	memcpy(h, HM_CAPTURE_MAGIC, 8);
	set32(h + 8, 1);
	set32(h + 12, XFS_HM_EVENT_SIZE);
	if (info->backrefs)
		flags |= HM_CAP_BACKREFS;
	if (info->readonly)
		flags |= HM_CAP_READONLY;
	if (info->has_autofsck) {
		flags |= HM_CAP_AUTOFSCK;
		memcpy(h + 20, info->autofsck,
		       strnlen(info->autofsck, sizeof(info->autofsck) - 1));
	}
	set32(h + 16, flags);
	if (fwrite(h, 1, sizeof(h), c->f) != sizeof(h))
		return hm_capture_write(c, NULL, log);
	return 0;
}

/* ev == NULL only reports a write failure of the header */
int hm_capture_write(struct hm_capture *c,
		     const struct xfs_health_monitor_event *ev,
		     const struct fsf_log *log)
{
	unsigned char rec[XFS_HM_EVENT_SIZE];

	if (ev) {
		hm_event_to_le(rec, ev);
		if (fwrite(rec, 1, sizeof(rec), c->f) == sizeof(rec) &&
		    fflush(c->f) == 0)
			return 0;
	}
	fsf_err(log, "cannot write capture %s: %s", c->path, strerror(errno));
	return -1;
}
