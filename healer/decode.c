// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Health events as text: one line per event in the style of the reference
 * (`/mnt agno 0x5 bnobt, rmapbt: sick`) and one JSON object per event.
 * Unknown domains, types and mask bits are printed raw, never rejected.
 */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "healer.h"

static const char *const domain_names[XFS_HM_DOMAIN_NR] = {
	"mount", "fs", "ag", "inode", "rtgroup", "datadev", "rtdev", "logdev",
	"filerange",
};

static const char *const type_names[XFS_HM_TYPE_NR] = {
	"running", "lost", "unmount", "sick", "corrupt", "healthy", "shutdown",
	"media_error", "bufread", "bufwrite", "dioread", "diowrite", "datalost",
};

const char *hm_domain_name(uint32_t domain)
{
	return domain < XFS_HM_DOMAIN_NR ? domain_names[domain] : NULL;
}

const char *hm_type_name(uint32_t type)
{
	return type < XFS_HM_TYPE_NR ? type_names[type] : NULL;
}

static bool is_health(uint32_t t)
{
	return t == XFS_HM_TYPE_SICK || t == XFS_HM_TYPE_CORRUPT ||
	       t == XFS_HM_TYPE_HEALTHY;
}

bool hm_event_known(const struct xfs_health_monitor_event *ev)
{
	uint32_t t = ev->type;

	switch (ev->domain) {
	case XFS_HM_DOMAIN_MOUNT:
		return t == XFS_HM_TYPE_RUNNING || t == XFS_HM_TYPE_LOST ||
		       t == XFS_HM_TYPE_UNMOUNT || t == XFS_HM_TYPE_SHUTDOWN;
	case XFS_HM_DOMAIN_FS:
	case XFS_HM_DOMAIN_AG:
	case XFS_HM_DOMAIN_INODE:
	case XFS_HM_DOMAIN_RTGROUP:
		return is_health(t);
	case XFS_HM_DOMAIN_DATADEV:
	case XFS_HM_DOMAIN_RTDEV:
	case XFS_HM_DOMAIN_LOGDEV:
		return t == XFS_HM_TYPE_MEDIA_ERROR;
	case XFS_HM_DOMAIN_FILERANGE:
		return t >= XFS_HM_TYPE_BUFREAD && t <= XFS_HM_TYPE_DATALOST;
	}
	return false;
}

struct bitname { uint32_t bit; const char *name; };

static const struct bitname fs_bits[] = {
	{ XFS_FSOP_GEOM_SICK_COUNTERS, "fscounters" },
	{ XFS_FSOP_GEOM_SICK_UQUOTA, "usrquota" },
	{ XFS_FSOP_GEOM_SICK_GQUOTA, "grpquota" },
	{ XFS_FSOP_GEOM_SICK_PQUOTA, "prjquota" },
	{ XFS_FSOP_GEOM_SICK_RT_BITMAP, "rtbitmap" },
	{ XFS_FSOP_GEOM_SICK_RT_SUMMARY, "rtsummary" },
	{ XFS_FSOP_GEOM_SICK_QUOTACHECK, "quotacheck" },
	{ XFS_FSOP_GEOM_SICK_NLINKS, "nlinks" },
	{ XFS_FSOP_GEOM_SICK_METADIR, "metadir" },
	{ XFS_FSOP_GEOM_SICK_METAPATH, "metapath" },
	{ 0, NULL },
};

static const struct bitname ag_bits[] = {
	{ XFS_AG_GEOM_SICK_SB, "sb" },
	{ XFS_AG_GEOM_SICK_AGF, "agf" },
	{ XFS_AG_GEOM_SICK_AGFL, "agfl" },
	{ XFS_AG_GEOM_SICK_AGI, "agi" },
	{ XFS_AG_GEOM_SICK_BNOBT, "bnobt" },
	{ XFS_AG_GEOM_SICK_CNTBT, "cntbt" },
	{ XFS_AG_GEOM_SICK_INOBT, "inobt" },
	{ XFS_AG_GEOM_SICK_FINOBT, "finobt" },
	{ XFS_AG_GEOM_SICK_RMAPBT, "rmapbt" },
	{ XFS_AG_GEOM_SICK_REFCNTBT, "refcountbt" },
	{ XFS_AG_GEOM_SICK_INODES, "inodes" },
	{ 0, NULL },
};

static const struct bitname rtg_bits[] = {
	{ XFS_RTGROUP_GEOM_SICK_SUPER, "rgsuper" },
	{ XFS_RTGROUP_GEOM_SICK_BITMAP, "rtbitmap" },
	{ XFS_RTGROUP_GEOM_SICK_SUMMARY, "rtsummary" },
	{ XFS_RTGROUP_GEOM_SICK_RMAPBT, "rtrmapbt" },
	{ XFS_RTGROUP_GEOM_SICK_REFCNTBT, "rtrefcountbt" },
	{ 0, NULL },
};

static const struct bitname ino_bits[] = {
	{ XFS_BS_SICK_INODE, "inode core" },
	{ XFS_BS_SICK_BMBTD, "data fork" },
	{ XFS_BS_SICK_BMBTA, "attr fork" },
	{ XFS_BS_SICK_BMBTC, "cow fork" },
	{ XFS_BS_SICK_DIR, "directory" },
	{ XFS_BS_SICK_XATTR, "extended attributes" },
	{ XFS_BS_SICK_SYMLINK, "symbolic link" },
	{ XFS_BS_SICK_PARENT, "parent pointers" },
	{ XFS_BS_SICK_DIRTREE, "directory tree" },
	{ 0, NULL },
};

static const struct bitname shutdown_bits[] = {
	{ XFS_HM_SHUTDOWN_META_IO_ERROR, "metadata I/O error" },
	{ XFS_HM_SHUTDOWN_LOG_IO_ERROR, "log I/O error" },
	{ XFS_HM_SHUTDOWN_FORCE_UMOUNT, "forced unmount" },
	{ XFS_HM_SHUTDOWN_CORRUPT_INCORE, "in-memory corruption" },
	{ XFS_HM_SHUTDOWN_CORRUPT_ONDISK, "on-disk corruption" },
	{ XFS_HM_SHUTDOWN_DEVICE_REMOVED, "device removed" },
	{ 0, NULL },
};

static const struct bitname *mask_table(uint32_t domain)
{
	switch (domain) {
	case XFS_HM_DOMAIN_FS: return fs_bits;
	case XFS_HM_DOMAIN_AG: return ag_bits;
	case XFS_HM_DOMAIN_RTGROUP: return rtg_bits;
	case XFS_HM_DOMAIN_INODE: return ino_bits;
	}
	return NULL;
}

/* append to buf at *pos, never overflowing; output truncated if too long */
FSF_PRINTF(4, 5)
static void put(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*pos >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *pos, len - *pos, fmt, ap);
	va_end(ap);
	if (n > 0)
		*pos = *pos + (size_t)n < len ? *pos + (size_t)n : len - 1;
}

static char *bits_text(const struct bitname *t, uint32_t mask, char *buf,
		       size_t len)
{
	size_t pos = 0;
	uint32_t left = mask;

	buf[0] = '\0';
	for (; t && t->name; t++) {
		if (!(mask & t->bit))
			continue;
		put(buf, len, &pos, "%s%s", pos ? ", " : "", t->name);
		left &= ~t->bit;
	}
	if (left)
		put(buf, len, &pos, "%s0x%" PRIx32, pos ? ", " : "", left);
	if (!mask)
		put(buf, len, &pos, "nothing");
	return buf;
}

char *hm_mask_text(uint32_t domain, uint32_t mask, char *buf, size_t len)
{
	return bits_text(mask_table(domain), mask, buf, len);
}

char *hm_shutdown_text(uint32_t reasons, char *buf, size_t len)
{
	return bits_text(shutdown_bits, reasons, buf, len);
}

char *hm_object_text(const struct xfs_health_monitor_event *ev, char *buf,
		     size_t len)
{
	switch (ev->domain) {
	case XFS_HM_DOMAIN_AG:
		snprintf(buf, len, "agno 0x%" PRIx32, ev->e.group.gno);
		break;
	case XFS_HM_DOMAIN_RTGROUP:
		snprintf(buf, len, "rgno 0x%" PRIx32, ev->e.group.gno);
		break;
	case XFS_HM_DOMAIN_INODE:
		snprintf(buf, len, "ino %" PRIu64 " gen 0x%" PRIx32,
			 ev->e.inode.ino, ev->e.inode.gen);
		break;
	default:
		buf[0] = '\0';
	}
	return buf;
}

static const char *status_word(uint32_t type)
{
	switch (type) {
	case XFS_HM_TYPE_SICK: return "sick";
	case XFS_HM_TYPE_CORRUPT: return "corrupt";
	case XFS_HM_TYPE_HEALTHY: return "healthy";
	}
	return "?";
}

static const char *io_word(uint32_t type)
{
	switch (type) {
	case XFS_HM_TYPE_BUFREAD: return "buffered read error";
	case XFS_HM_TYPE_BUFWRITE: return "buffered write error";
	case XFS_HM_TYPE_DIOREAD: return "direct read error";
	case XFS_HM_TYPE_DIOWRITE: return "direct write error";
	case XFS_HM_TYPE_DATALOST: return "file data lost";
	}
	return "?";
}

static void raw_hex(const struct xfs_health_monitor_event *ev, char *buf,
		    size_t len, size_t *pos)
{
	for (size_t i = 0; i < sizeof(ev->e.raw); i++)
		put(buf, len, pos, "%02x", ev->e.raw[i]);
}

int hm_format_text(const struct xfs_health_monitor_event *ev,
		   const char *label, char *buf, size_t len)
{
	char m[512], obj[64];
	size_t pos = 0;

	if (!hm_event_known(ev)) {
		put(buf, len, &pos, "%s: unknown event domain %" PRIu32
		    " type %" PRIu32 " payload ", label, ev->domain, ev->type);
		raw_hex(ev, buf, len, &pos);
		return (int)pos;
	}
	switch (ev->domain) {
	case XFS_HM_DOMAIN_MOUNT:
		switch (ev->type) {
		case XFS_HM_TYPE_RUNNING:
			put(buf, len, &pos, "%s: health monitoring started",
			    label);
			break;
		case XFS_HM_TYPE_LOST:
			put(buf, len, &pos, "%s: %" PRIu64 " events lost",
			    label, ev->e.lost.count);
			break;
		case XFS_HM_TYPE_UNMOUNT:
			put(buf, len, &pos, "%s: filesystem unmounted", label);
			break;
		case XFS_HM_TYPE_SHUTDOWN:
			put(buf, len, &pos, "%s: filesystem shut down: %s",
			    label, hm_shutdown_text(ev->e.shutdown.reasons,
						    m, sizeof(m)));
			break;
		}
		break;
	case XFS_HM_DOMAIN_FS:
		put(buf, len, &pos, "%s %s: %s", label,
		    hm_mask_text(ev->domain, ev->e.fs.mask, m, sizeof(m)),
		    status_word(ev->type));
		break;
	case XFS_HM_DOMAIN_AG:
	case XFS_HM_DOMAIN_RTGROUP:
		put(buf, len, &pos, "%s %s %s: %s", label,
		    hm_object_text(ev, obj, sizeof(obj)),
		    hm_mask_text(ev->domain, ev->e.group.mask, m, sizeof(m)),
		    status_word(ev->type));
		break;
	case XFS_HM_DOMAIN_INODE:
		put(buf, len, &pos, "%s %s %s: %s", label,
		    hm_object_text(ev, obj, sizeof(obj)),
		    hm_mask_text(ev->domain, ev->e.inode.mask, m, sizeof(m)),
		    status_word(ev->type));
		break;
	case XFS_HM_DOMAIN_DATADEV:
	case XFS_HM_DOMAIN_RTDEV:
	case XFS_HM_DOMAIN_LOGDEV:
		put(buf, len, &pos, "%s %s daddr 0x%" PRIx64 " bbcount 0x%"
		    PRIx64 ": media error", label, hm_domain_name(ev->domain),
		    ev->e.media.daddr, ev->e.media.bbcount);
		break;
	case XFS_HM_DOMAIN_FILERANGE:
		put(buf, len, &pos, "%s ino %" PRIu64 " gen 0x%" PRIx32
		    " pos %" PRIu64 " len %" PRIu64 ": %s", label,
		    ev->e.filerange.ino, ev->e.filerange.gen,
		    ev->e.filerange.pos, ev->e.filerange.len,
		    io_word(ev->type));
		if (ev->e.filerange.error && ev->e.filerange.error < 4096)
			put(buf, len, &pos, ": %s",
			    strerror((int)ev->e.filerange.error));
		else if (ev->e.filerange.error)
			put(buf, len, &pos, ": error %" PRIu32,
			    ev->e.filerange.error);
		break;
	}
	return (int)pos;
}

static void json_str(char *buf, size_t len, size_t *pos, const char *s)
{
	put(buf, len, pos, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			put(buf, len, pos, "\\%c", c);
		else if (c < 0x20)
			put(buf, len, pos, "\\u%04x", c);
		else
			put(buf, len, pos, "%c", c);
	}
	put(buf, len, pos, "\"");
}

static void json_mask(char *buf, size_t len, size_t *pos, const char *key,
		      const struct bitname *t, uint32_t mask)
{
	uint32_t left = mask;
	bool first = true;

	put(buf, len, pos, ",\"%s\":[", key);
	for (; t->name; t++) {
		if (!(mask & t->bit))
			continue;
		put(buf, len, pos, "%s", first ? "" : ",");
		json_str(buf, len, pos, t->name);
		left &= ~t->bit;
		first = false;
	}
	put(buf, len, pos, "],\"%s_raw\":%" PRIu32, key, mask);
	if (left)
		put(buf, len, pos, ",\"%s_unknown\":%" PRIu32, key, left);
}

int hm_format_json(const struct xfs_health_monitor_event *ev,
		   const char *label, char *buf, size_t len)
{
	size_t pos = 0;

	put(buf, len, &pos, "{\"time_ns\":%" PRIu64 ",\"mount\":", ev->time_ns);
	json_str(buf, len, &pos, label);
	if (!hm_event_known(ev)) {
		put(buf, len, &pos, ",\"domain\":%" PRIu32 ",\"type\":%" PRIu32
		    ",\"known\":false,\"payload\":\"", ev->domain, ev->type);
		raw_hex(ev, buf, len, &pos);
		put(buf, len, &pos, "\"}");
		return (int)pos;
	}
	put(buf, len, &pos, ",\"domain\":\"%s\",\"type\":\"%s\"",
	    hm_domain_name(ev->domain), hm_type_name(ev->type));
	switch (ev->domain) {
	case XFS_HM_DOMAIN_MOUNT:
		if (ev->type == XFS_HM_TYPE_LOST)
			put(buf, len, &pos, ",\"count\":%" PRIu64,
			    ev->e.lost.count);
		else if (ev->type == XFS_HM_TYPE_SHUTDOWN)
			json_mask(buf, len, &pos, "reasons", shutdown_bits,
				  ev->e.shutdown.reasons);
		break;
	case XFS_HM_DOMAIN_FS:
		json_mask(buf, len, &pos, "mask", fs_bits, ev->e.fs.mask);
		break;
	case XFS_HM_DOMAIN_AG:
	case XFS_HM_DOMAIN_RTGROUP:
		put(buf, len, &pos, ",\"group\":%" PRIu32, ev->e.group.gno);
		json_mask(buf, len, &pos, "mask", mask_table(ev->domain),
			  ev->e.group.mask);
		break;
	case XFS_HM_DOMAIN_INODE:
		put(buf, len, &pos, ",\"ino\":%" PRIu64 ",\"gen\":%" PRIu32,
		    ev->e.inode.ino, ev->e.inode.gen);
		json_mask(buf, len, &pos, "mask", ino_bits, ev->e.inode.mask);
		break;
	case XFS_HM_DOMAIN_DATADEV:
	case XFS_HM_DOMAIN_RTDEV:
	case XFS_HM_DOMAIN_LOGDEV:
		put(buf, len, &pos, ",\"daddr\":%" PRIu64 ",\"bbcount\":%" PRIu64,
		    ev->e.media.daddr, ev->e.media.bbcount);
		break;
	case XFS_HM_DOMAIN_FILERANGE:
		put(buf, len, &pos, ",\"ino\":%" PRIu64 ",\"gen\":%" PRIu32
		    ",\"pos\":%" PRIu64 ",\"len\":%" PRIu64 ",\"error\":%" PRIu32,
		    ev->e.filerange.ino, ev->e.filerange.gen,
		    ev->e.filerange.pos, ev->e.filerange.len,
		    ev->e.filerange.error);
		break;
	}
	put(buf, len, &pos, "}");
	return (int)pos;
}
