// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * systemd unit names for a mount point (the rules of `systemd-escape
 * --path`).  Starting units is in sd.c.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "healer.h"

static bool plain(char c, bool first)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == ':' || c == '_')
		return true;
	return c == '.' && !first;
}

int hm_escape_path(const char *path, char *buf, size_t len)
{
	size_t pos = 0;
	const char *p = path;
	bool first = true;

	while (*p == '/')
		p++;
	if (!*p) {
		if (len < 2)
			return -1;
		strcpy(buf, "-");
		return 0;
	}
	for (; *p; p++) {
		if (*p == '/') {
			/* collapse "//" and drop a trailing "/" */
			while (p[1] == '/')
				p++;
			if (!p[1])
				break;
			if (pos + 1 >= len)
				return -1;
			buf[pos++] = '-';
			first = false;
			continue;
		}
		if (plain(*p, first)) {
			if (pos + 1 >= len)
				return -1;
			buf[pos++] = *p;
		} else {
			if (pos + 4 >= len)
				return -1;
			snprintf(buf + pos, 5, "\\x%02x", (unsigned char)*p);
			pos += 4;
		}
		first = false;
	}
	buf[pos] = '\0';
	return 0;
}

int hm_unit_name(const char *tmpl, const char *path, char *buf, size_t len)
{
	char esc[1024];
	int n;

	if (hm_escape_path(path, esc, sizeof(esc)) < 0)
		return -1;
	n = snprintf(buf, len, "%s@%s.service", tmpl, esc);
	/* systemd refuses unit names over 255 bytes */
	return n < 0 || (size_t)n >= len || n > 255 ? -1 : 0;
}
