// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The little of systemd that xfs_healer needs, without linking libsystemd
 * (it and its dependencies would be most of the daemon's memory):
 *  - readiness: one datagram to $NOTIFY_SOCKET (the sd_notify protocol);
 *  - the journal: one datagram of KEY=value lines to journald's native
 *    socket (values containing a newline use the length-prefixed form);
 *  - starting a unit: libsystemd's sd-bus, loaded with dlopen() only when a
 *    unit is started, which is rare.
 */
#include "config.h"

#include <dlfcn.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "healer.h"

static int send_dgram(const char *path, const struct iovec *iov, int iovcnt)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct msghdr mh = { 0 };
	size_t len = strlen(path);
	int fd, ret;

	if (len == 0 || len >= sizeof(sa.sun_path))
		return -EINVAL;
	memcpy(sa.sun_path, path, len);
	if (sa.sun_path[0] == '@')	/* abstract namespace */
		sa.sun_path[0] = '\0';
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	mh.msg_name = &sa;
	mh.msg_namelen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
	mh.msg_iov = (struct iovec *)iov;
	mh.msg_iovlen = (size_t)iovcnt;
	ret = sendmsg(fd, &mh, MSG_NOSIGNAL) < 0 ? -errno : 0;
	close(fd);
	return ret;
}

int hm_notify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct iovec iov = { (void *)state, strlen(state) };

	if (!path)
		return 0;
	return send_dgram(path, &iov, 1);
}

/*
 * sd_notify_barrier(): hand systemd the write end of a pipe with
 * BARRIER=1 and wait until it closes it, which it does once it has
 * processed every message before.  A daemon that sends READY=1 and exits
 * at once is then never taken for one that exited before being ready.
 */
int hm_notify_barrier(int timeout_ms)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} c;
	struct iovec iov = { (void *)"BARRIER=1", 9 };
	struct msghdr mh = { 0 };
	struct cmsghdr *cm;
	struct pollfd p;
	int fds[2], sock, ret;
	size_t len;

	if (!path)
		return 0;
	len = strlen(path);
	if (len == 0 || len >= sizeof(sa.sun_path))
		return -EINVAL;
	memcpy(sa.sun_path, path, len);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0';
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sock < 0) {
		ret = -errno;
		close(fds[0]);
		close(fds[1]);
		return ret;
	}
	memset(&c, 0, sizeof(c));
	mh.msg_name = &sa;
	mh.msg_namelen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = c.buf;
	mh.msg_controllen = sizeof(c.buf);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fds[1], sizeof(int));
	ret = sendmsg(sock, &mh, MSG_NOSIGNAL) < 0 ? -errno : 0;
	close(sock);
	close(fds[1]);
	if (ret == 0) {
		p = (struct pollfd){ .fd = fds[0], .events = POLLIN };
		ret = poll(&p, 1, timeout_ms);
		ret = ret > 0 ? 0 : ret == 0 ? -ETIMEDOUT : -errno;
	}
	close(fds[0]);
	return ret;
}

/* "KEY=value\n", or the binary form when value has a newline */
static size_t field_size(const char *key, const char *val)
{
	return strlen(key) + strlen(val) + 10;
}

static void field(char *buf, size_t *pos, const char *key, const char *val)
{
	size_t kl = strlen(key), vl = strlen(val);

	memcpy(buf + *pos, key, kl);
	*pos += kl;
	if (!strchr(val, '\n')) {
		buf[(*pos)++] = '=';
	} else {
		uint64_t le = htole64(vl);

		buf[(*pos)++] = '\n';
		memcpy(buf + *pos, &le, 8);
		*pos += 8;
	}
	memcpy(buf + *pos, val, vl);
	*pos += vl;
	buf[(*pos)++] = '\n';
}

int hm_journal(int prio, const char *msg, const char *const *kv)
{
	const char *ident = program_invocation_short_name;
	char *buf, p[4];
	size_t pos = 0, size;
	struct iovec iov;
	int ret;

	snprintf(p, sizeof(p), "%d", prio & 7);
	size = field_size("MESSAGE", msg) + field_size("PRIORITY", p) +
	       field_size("SYSLOG_IDENTIFIER", ident);
	for (const char *const *k = kv; k && k[0]; k += 2)
		size += field_size(k[0], k[1]);
	/* sized to the entry: a long mount point never drops a field */
	buf = malloc(size);
	if (!buf)
		return -ENOMEM;
	field(buf, &pos, "MESSAGE", msg);
	field(buf, &pos, "PRIORITY", p);
	field(buf, &pos, "SYSLOG_IDENTIFIER", ident);
	for (; kv && kv[0]; kv += 2)
		field(buf, &pos, kv[0], kv[1]);
	iov.iov_base = buf;
	iov.iov_len = pos;
	ret = send_dgram("/run/systemd/journal/socket", &iov, 1);
	free(buf);
	return ret;
}

/* ---- sd-bus through dlopen ------------------------------------------------ */
typedef struct sd_bus sd_bus;
typedef struct sd_bus_message sd_bus_message;
typedef struct {
	const char *name;
	const char *message;
	int _need_free;
} sd_bus_error;

struct sdbus_api {
	void *lib;
	int (*open_system)(sd_bus **);
	int (*bus_new)(sd_bus **);
	int (*set_address)(sd_bus *, const char *);
	int (*start)(sd_bus *);
	int (*call_method)(sd_bus *, const char *, const char *, const char *,
			   const char *, sd_bus_error *, sd_bus_message **,
			   const char *, ...);
	void (*error_free)(sd_bus_error *);
	sd_bus_message *(*message_unref)(sd_bus_message *);
	sd_bus *(*flush_close_unref)(sd_bus *);
};

#define SYSTEMD_PRIVATE "/run/systemd/private"

static int load(struct sdbus_api *a, char *msg, size_t msglen)
{
	memset(a, 0, sizeof(*a));
	a->lib = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
	if (!a->lib) {
		snprintf(msg, msglen, "cannot load libsystemd.so.0: %s",
			 dlerror());
		return -ENOENT;
	}
#define SYM(f, n) (*(void **)&a->f = dlsym(a->lib, n))
	if (!SYM(open_system, "sd_bus_open_system") ||
	    !SYM(bus_new, "sd_bus_new") ||
	    !SYM(set_address, "sd_bus_set_address") ||
	    !SYM(start, "sd_bus_start") ||
	    !SYM(call_method, "sd_bus_call_method") ||
	    !SYM(error_free, "sd_bus_error_free") ||
	    !SYM(message_unref, "sd_bus_message_unref") ||
	    !SYM(flush_close_unref, "sd_bus_flush_close_unref")) {
		snprintf(msg, msglen, "libsystemd.so.0 lacks sd-bus");
		dlclose(a->lib);
		return -ENOSYS;
	}
#undef SYM
	return 0;
}

/*
 * The system bus when there is one; otherwise (minimal systems without a
 * D-Bus daemon) systemd's own private socket, which root may use, as
 * systemctl does.
 */
static int open_manager_bus(const struct sdbus_api *a, sd_bus **bus)
{
	int r = a->open_system(bus);

	if (r >= 0)
		return r;
	r = a->bus_new(bus);
	if (r < 0)
		return r;
	r = a->set_address(*bus, "unix:path=" SYSTEMD_PRIVATE);
	if (r >= 0)
		r = a->start(*bus);
	if (r < 0) {
		a->flush_close_unref(*bus);
		*bus = NULL;
		return r;
	}
	return 0;
}

int hm_start_unit(const char *unit, char *msg, size_t msglen)
{
	struct sdbus_api a;
	sd_bus *bus = NULL;
	sd_bus_error err = { NULL, NULL, 0 };
	sd_bus_message *reply = NULL;
	int r;

	r = load(&a, msg, msglen);
	if (r < 0)
		return r;
	r = open_manager_bus(&a, &bus);
	if (r < 0) {
		snprintf(msg, msglen, "cannot reach systemd (system bus or "
			 "%s): %s", SYSTEMD_PRIVATE, strerror(-r));
		dlclose(a.lib);
		return r;
	}
	/* a busy or reloading manager is retried twice, 1 s then 2 s later */
	for (unsigned int i = 0;; i++) {
		r = a.call_method(bus, "org.freedesktop.systemd1",
				  "/org/freedesktop/systemd1",
				  "org.freedesktop.systemd1.Manager", "StartUnit",
				  &err, &reply, "ss", unit, "replace");
		if (r >= 0 || i == 2 || (r != -EINTR && r != -EAGAIN &&
					 r != -EBUSY && r != -ETIMEDOUT))
			break;
		a.error_free(&err);
		err = (sd_bus_error){ NULL, NULL, 0 };
		sleep(1U << i);
	}
	if (r < 0)
		snprintf(msg, msglen, "cannot start %s: %s", unit,
			 err.message ? err.message : strerror(-r));
	else
		snprintf(msg, msglen, "started %s", unit);
	a.error_free(&err);
	a.message_unref(reply);
	a.flush_close_unref(bus);
	dlclose(a.lib);
	return r < 0 ? r : 0;
}
