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

static void raw_hex(const struct xfs_health_monitor_event *ev,
		    struct hm_str *out)
{
	for (size_t i = 0; i < sizeof(ev->e.raw); i++)
		hm_str_add(out, "%02x", ev->e.raw[i]);
}

void hm_format_text(const struct xfs_health_monitor_event *ev,
		    const char *label, const char *path, struct hm_str *out)
{
	char m[512], obj[64];

	if (!hm_event_known(ev)) {
		hm_str_add(out, "%s: unknown event domain %" PRIu32
		    " type %" PRIu32 " payload ", label, ev->domain, ev->type);
		raw_hex(ev, out);
		return;
	}
	switch (ev->domain) {
	case XFS_HM_DOMAIN_MOUNT:
		switch (ev->type) {
		case XFS_HM_TYPE_RUNNING:
			hm_str_add(out, "%s: health monitoring started",
			    label);
			break;
		case XFS_HM_TYPE_LOST:
			hm_str_add(out, "%s: %" PRIu64 " %s lost", label,
			    ev->e.lost.count,
			    ev->e.lost.count == 1 ? "event" : "events");
			break;
		case XFS_HM_TYPE_UNMOUNT:
			hm_str_add(out, "%s: filesystem unmounted", label);
			break;
		case XFS_HM_TYPE_SHUTDOWN:
			hm_str_add(out, "%s: filesystem shut down: %s",
			    label, hm_shutdown_text(ev->e.shutdown.reasons,
						    m, sizeof(m)));
			break;
		}
		break;
	case XFS_HM_DOMAIN_FS:
		hm_str_add(out, "%s %s: %s", label,
		    hm_mask_text(ev->domain, ev->e.fs.mask, m, sizeof(m)),
		    status_word(ev->type));
		break;
	case XFS_HM_DOMAIN_AG:
	case XFS_HM_DOMAIN_RTGROUP:
		hm_str_add(out, "%s %s %s: %s", label,
		    hm_object_text(ev, obj, sizeof(obj)),
		    hm_mask_text(ev->domain, ev->e.group.mask, m, sizeof(m)),
		    status_word(ev->type));
		break;
	case XFS_HM_DOMAIN_INODE:
		hm_str_add(out, path ? "%s (%s) %s: %s" : "%s %s %s: %s",
		    path ? path : label, hm_object_text(ev, obj, sizeof(obj)),
		    hm_mask_text(ev->domain, ev->e.inode.mask, m, sizeof(m)),
		    status_word(ev->type));
		break;
	case XFS_HM_DOMAIN_DATADEV:
	case XFS_HM_DOMAIN_RTDEV:
	case XFS_HM_DOMAIN_LOGDEV:
		hm_str_add(out, "%s %s daddr 0x%" PRIx64 " bbcount 0x%"
		    PRIx64 ": media error", label, hm_domain_name(ev->domain),
		    ev->e.media.daddr, ev->e.media.bbcount);
		break;
	case XFS_HM_DOMAIN_FILERANGE:
		hm_str_add(out, path ? "%s (ino %" PRIu64 " gen 0x%" PRIx32
		    ") pos %" PRIu64 " len %" PRIu64 ": %s" : "%s ino %" PRIu64
		    " gen 0x%" PRIx32 " pos %" PRIu64 " len %" PRIu64 ": %s",
		    path ? path : label,
		    ev->e.filerange.ino, ev->e.filerange.gen,
		    ev->e.filerange.pos, ev->e.filerange.len,
		    io_word(ev->type));
		if (ev->e.filerange.error && ev->e.filerange.error < 4096)
			hm_str_add(out, ": %s",
			    strerror((int)ev->e.filerange.error));
		else if (ev->e.filerange.error)
			hm_str_add(out, ": error %" PRIu32,
			    ev->e.filerange.error);
		break;
	}
	return;
}

void hm_json_str(struct hm_str *out, const char *s)
{
	hm_str_add(out, "\"");
	while (*s) {
		unsigned char c = (unsigned char)*s;
		size_t plain = strcspn(s, "\"\\\x01\x02\x03\x04\x05\x06\x07"
				       "\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10"
				       "\x11\x12\x13\x14\x15\x16\x17\x18\x19"
				       "\x1a\x1b\x1c\x1d\x1e\x1f");

		if (plain) {
			hm_str_add(out, "%.*s", (int)plain, s);
			s += plain;
		} else {
			if (c == '"' || c == '\\')
				hm_str_add(out, "\\%c", c);
			else
				hm_str_add(out, "\\u%04x", c);
			s++;
		}
	}
	hm_str_add(out, "\"");
}

static void json_mask(struct hm_str *out, const char *key,
		      const struct bitname *t, uint32_t mask)
{
	uint32_t left = mask;
	bool first = true;

	hm_str_add(out, ",\"%s\":[", key);
	for (; t->name; t++) {
		if (!(mask & t->bit))
			continue;
		hm_str_add(out, "%s", first ? "" : ",");
		hm_json_str(out, t->name);
		left &= ~t->bit;
		first = false;
	}
	hm_str_add(out, "],\"%s_raw\":%" PRIu32, key, mask);
	if (left)
		hm_str_add(out, ",\"%s_unknown\":%" PRIu32, key, left);
}

void hm_format_json(const struct xfs_health_monitor_event *ev,
		    const char *label, const char *path, struct hm_str *out)
{
	hm_str_add(out, "{\"time_ns\":%" PRIu64 ",\"mount\":", ev->time_ns);
	hm_json_str(out, label);
	if (path) {
		hm_str_add(out, ",\"path\":");
		hm_json_str(out, path);
	}
	if (!hm_event_known(ev)) {
		hm_str_add(out, ",\"domain\":%" PRIu32 ",\"type\":%" PRIu32
		    ",\"known\":false,\"payload\":\"", ev->domain, ev->type);
		raw_hex(ev, out);
		hm_str_add(out, "\"}");
		return;
	}
	hm_str_add(out, ",\"domain\":\"%s\",\"type\":\"%s\"",
	    hm_domain_name(ev->domain), hm_type_name(ev->type));
	switch (ev->domain) {
	case XFS_HM_DOMAIN_MOUNT:
		if (ev->type == XFS_HM_TYPE_LOST)
			hm_str_add(out, ",\"count\":%" PRIu64,
			    ev->e.lost.count);
		else if (ev->type == XFS_HM_TYPE_SHUTDOWN)
			json_mask(out, "reasons", shutdown_bits,
				  ev->e.shutdown.reasons);
		break;
	case XFS_HM_DOMAIN_FS:
		json_mask(out, "mask", fs_bits, ev->e.fs.mask);
		break;
	case XFS_HM_DOMAIN_AG:
	case XFS_HM_DOMAIN_RTGROUP:
		hm_str_add(out, ",\"group\":%" PRIu32, ev->e.group.gno);
		json_mask(out, "mask", mask_table(ev->domain),
			  ev->e.group.mask);
		break;
	case XFS_HM_DOMAIN_INODE:
		hm_str_add(out, ",\"ino\":%" PRIu64 ",\"gen\":%" PRIu32,
		    ev->e.inode.ino, ev->e.inode.gen);
		json_mask(out, "mask", ino_bits, ev->e.inode.mask);
		break;
	case XFS_HM_DOMAIN_DATADEV:
	case XFS_HM_DOMAIN_RTDEV:
	case XFS_HM_DOMAIN_LOGDEV:
		hm_str_add(out, ",\"daddr\":%" PRIu64 ",\"bbcount\":%" PRIu64,
		    ev->e.media.daddr, ev->e.media.bbcount);
		break;
	case XFS_HM_DOMAIN_FILERANGE:
		hm_str_add(out, ",\"ino\":%" PRIu64 ",\"gen\":%" PRIu32
		    ",\"pos\":%" PRIu64 ",\"len\":%" PRIu64 ",\"error\":%" PRIu32,
		    ev->e.filerange.ino, ev->e.filerange.gen,
		    ev->e.filerange.pos, ev->e.filerange.len,
		    ev->e.filerange.error);
		break;
	}
	hm_str_add(out, "}");
	return;
}
