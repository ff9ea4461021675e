// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * systemd unit names for a mount point (the rules of `systemd-escape
 * --path`) and starting a unit over the system bus with sd-bus.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-bus.h>

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
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/*
 * The system bus when there is one; otherwise (minimal systems without a
 * D-Bus daemon) systemd's own private socket, which root may use, as
 * systemctl does.
 */
#define SYSTEMD_PRIVATE "/run/systemd/private"

static int open_manager_bus(sd_bus **bus)
{
	int r = sd_bus_open_system(bus);

	if (r >= 0)
		return r;
	r = sd_bus_new(bus);
	if (r < 0)
		return r;
	r = sd_bus_set_address(*bus, "unix:path=" SYSTEMD_PRIVATE);
	if (r >= 0)
		r = sd_bus_start(*bus);
	if (r < 0) {
		*bus = sd_bus_unref(*bus);
		return r;
	}
	return 0;
}

int hm_start_unit(const char *unit, char *msg, size_t msglen)
{
	sd_bus *bus = NULL;
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	int r;

	r = open_manager_bus(&bus);
	if (r < 0) {
		snprintf(msg, msglen, "cannot reach systemd (system bus or "
			 "%s): %s", SYSTEMD_PRIVATE, strerror(-r));
		return r;
	}
	r = sd_bus_call_method(bus, "org.freedesktop.systemd1",
			       "/org/freedesktop/systemd1",
			       "org.freedesktop.systemd1.Manager", "StartUnit",
			       &err, &reply, "ss", unit, "replace");
	if (r < 0)
		snprintf(msg, msglen, "cannot start %s: %s", unit,
			 err.message ? err.message : strerror(-r));
	else
		snprintf(msg, msglen, "started %s", unit);
	sd_bus_error_free(&err);
	sd_bus_message_unref(reply);
	sd_bus_flush_close_unref(bus);
	return r < 0 ? r : 0;
}
