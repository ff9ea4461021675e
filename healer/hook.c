// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * --exec HOOK: run an executable for each event, zedlet style, with the
 * event in its environment (XFS_HEALER_MOUNT, _DOMAIN, _TYPE, _TIME_NS,
 * _OBJECT, _MESSAGE, _JSON).  Hooks are started by the workers, never by
 * the reader: at most HM_HOOK_MAX run at a time, in the background, each in
 * its own process group; a worker that finds every slot taken waits for
 * one (the event queue absorbs the delay; nothing is skipped).  The main
 * thread reaps them (SIGCHLD) and kills the group of one that passes its
 * time limit.  The environment is built before fork(): the child of a
 * threaded process may only make async-signal-safe calls.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "healer.h"

extern char **environ;

uint64_t hm_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void hm_hook_init(struct hm_hooks *h, int wakefd)
{
	h->wakefd = wakefd;
	pthread_mutex_init(&h->mu, NULL);
	pthread_cond_init(&h->slot, NULL);
}

enum { NVARS = 8 };

/* environ without our variables, then ours; NULL on no memory */
static char **build_env(const struct xfs_health_monitor_event *ev,
			const char *label, const char *path)
{
	char obj[64], num[32];
	struct hm_str text = { 0 }, json = { 0 };
	const char *dom = hm_domain_name(ev->domain);
	const char *typ = hm_type_name(ev->type);
	size_t n = 0, i = 0;
	char **env;
	int bad = 0;

	while (environ[n])
		n++;
	env = calloc(n + NVARS + 1, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t k = 0; k < n; k++)
		if (strncmp(environ[k], "XFS_HEALER_", 11))
			env[i++] = environ[k];
	snprintf(num, sizeof(num), "%" PRIu64, ev->time_ns);
	bad |= asprintf(&env[i++], "XFS_HEALER_MOUNT=%s", label) < 0;
	bad |= asprintf(&env[i++], "XFS_HEALER_DOMAIN=%s", dom ? dom : "unknown") < 0;
	bad |= asprintf(&env[i++], "XFS_HEALER_TYPE=%s", typ ? typ : "unknown") < 0;
	bad |= asprintf(&env[i++], "XFS_HEALER_TIME_NS=%s", num) < 0;
	bad |= asprintf(&env[i++], "XFS_HEALER_OBJECT=%s",
			hm_object_text(ev, obj, sizeof(obj))) < 0;
	/* empty when unknown (replay, no parent pointers, not an inode) */
	bad |= asprintf(&env[i++], "XFS_HEALER_PATH=%s", path ? path : "") < 0;
	hm_format_text(ev, label, path, &text);
	bad |= asprintf(&env[i++], "XFS_HEALER_MESSAGE=%s", hm_str_get(&text)) < 0;
	hm_format_json(ev, label, path, &json);
	bad |= asprintf(&env[i++], "XFS_HEALER_JSON=%s", hm_str_get(&json)) < 0;
	bad |= text.oom || json.oom;
	hm_str_free(&text);
	hm_str_free(&json);
	env[i] = NULL;
	if (bad) {
		/* asprintf leaves its pointer undefined on failure */
		for (size_t k = i - NVARS; k < i; k++)
			env[k] = NULL;
		free(env);
		return NULL;
	}
	return env;
}

static void free_env(char **env)
{
	size_t n = 0;

	while (env[n])
		n++;
	for (size_t k = n - NVARS; k < n; k++)
		free(env[k]);
	free(env);
}

/*
 * After fork(): async-signal-safe calls only.  The hook is sealed off from
 * the daemon: default signal dispositions and an empty mask, its own
 * process group, stdin from /dev/null, stdout joined to stderr (the
 * journal under systemd; never the event stream on stdout, which --json
 * consumers parse), and no other descriptor (the monitor, a --record
 * capture, sockets, whatever the daemon inherited).
 */
static void child(const char *path, char **env, const char *err, size_t errlen,
		  int maxfd)
{
	char *const argv[] = { (char *)path, NULL };
	struct sigaction dfl;
	sigset_t none;
	int fd;

	/* the daemon's blocked and ignored signals are not the hook's: a
	 * hook with SIGTERM blocked could not be stopped */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &dfl, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setpgid(0, 0);
	fd = open("/dev/null", O_RDONLY);
	if (fd >= 0 && fd != 0) {
		dup2(fd, 0);
		close(fd);
	}
	dup2(2, 1);
	if (syscall(SYS_close_range, 3U, ~0U, 0U) < 0)
		for (fd = 3; fd < maxfd; fd++)
			close(fd);
	execve(path, argv, env);
	if (write(2, err, errlen) < 0)
		_exit(127);
	_exit(127);
}

void hm_hook_spawn(struct hm_hooks *h, const struct hm_out *o,
		   const struct xfs_health_monitor_event *ev, const char *label,
		   const char *fpath)
{
	char **env, *err;
	struct rlimit rl;
	int errlen, maxfd = 65536, fork_err = 0;
	pid_t pid;

	if (!h->path)
		return;
	/* for the fallback when close_range(2) is missing (before 5.9) */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < 1048576)
		maxfd = (int)rl.rlim_cur;
	env = build_env(ev, label, fpath);
	errlen = asprintf(&err, "%s: cannot run hook %s\n", o->log->prog,
			  h->path);
	if (!env || errlen < 0) {
		hm_say(o, HM_WARNING, "cannot run hook %s: out of memory",
		       h->path);
		if (env)
			free_env(env);
		if (errlen >= 0)
			free(err);
		return;
	}
	/* outside the lock: stdio may block (a stalled journal or pipe), and
	 * whoever stops the daemon takes the lock.  The child never flushes
	 * (execve or _exit), so buffered lines are not written twice. */
	fflush(stdout);
	fflush(stderr);
	pthread_mutex_lock(&h->mu);
	while (h->nr == HM_HOOK_MAX && !h->stopping)
		pthread_cond_wait(&h->slot, &h->mu);
	if (h->stopping)
		goto out;
	pid = fork();
	if (pid < 0) {
		fork_err = errno;
		goto out;
	}
	if (pid == 0)
		child(h->path, env, err, (size_t)errlen, maxfd);
	/* also in the parent, so that a kill never misses the group */
	setpgid(pid, pid);
	h->pid[h->nr] = pid;
	h->deadline_ms[h->nr] = hm_now_ms() + (uint64_t)h->timeout_s * 1000;
	h->nr++;
	if (h->wakefd >= 0) {
		uint64_t one = 1;

		/* the main thread's next deadline may have changed */
		if (write(h->wakefd, &one, sizeof(one)) < 0)
			(void)0;
	}
out:
	pthread_mutex_unlock(&h->mu);
	if (fork_err)
		hm_say(o, HM_WARNING, "cannot run hook %s: %s", h->path,
		       strerror(fork_err));
	free_env(env);
	free(err);
}

static void drop(struct hm_hooks *h, unsigned int i)
{
	h->nr--;
	h->pid[i] = h->pid[h->nr];
	h->deadline_ms[i] = h->deadline_ms[h->nr];
	pthread_cond_signal(&h->slot);
}

/* what hm_hook_reap says, once the lock is dropped */
struct reap_note {
	enum { NOTE_EXIT, NOTE_SIGNAL, NOTE_KILL } kind;
	int value;
};

int hm_hook_reap(struct hm_hooks *h, const struct hm_out *o)
{
	uint64_t now = hm_now_ms(), next = UINT64_MAX;
	struct reap_note notes[HM_HOOK_MAX];
	unsigned int i = 0, nn = 0;
	int st, ret;

	pthread_mutex_lock(&h->mu);
	while (i < h->nr) {
		pid_t r = waitpid(h->pid[i], &st, WNOHANG);

		if (r == h->pid[i] || (r < 0 && errno == ECHILD)) {
			if (r > 0 && WIFEXITED(st) && WEXITSTATUS(st))
				notes[nn++] = (struct reap_note){
					NOTE_EXIT, WEXITSTATUS(st) };
			else if (r > 0 && WIFSIGNALED(st))
				notes[nn++] = (struct reap_note){
					NOTE_SIGNAL, WTERMSIG(st) };
			drop(h, i);
			continue;
		}
		if (now >= h->deadline_ms[i]) {
			notes[nn++] = (struct reap_note){ NOTE_KILL, 0 };
			kill(-h->pid[i], SIGKILL);
			kill(h->pid[i], SIGKILL);
			/* reaped on the next pass, give it a moment */
			h->deadline_ms[i] = now + 1000;
		}
		if (h->deadline_ms[i] < next)
			next = h->deadline_ms[i];
		i++;
	}
	if (!h->nr)
		ret = -1;
	else
		ret = next > now ? (int)(next - now) : 0;
	pthread_mutex_unlock(&h->mu);
	/* no stdio under the lock: a blocked stdout must not block a stop */
	for (i = 0; i < nn; i++) {
		if (notes[i].kind == NOTE_EXIT)
			hm_say(o, HM_WARNING, "hook %s exited with status %d",
			       h->path, notes[i].value);
		else if (notes[i].kind == NOTE_SIGNAL)
			hm_say(o, HM_WARNING, "hook %s killed by signal %d",
			       h->path, notes[i].value);
		else
			hm_say(o, HM_WARNING, "hook %s ran over %u s; killing "
			       "it", h->path, h->timeout_s);
	}
	return ret;
}

void hm_hook_drain(struct hm_hooks *h, const struct hm_out *o)
{
	for (;;) {
		int wait_ms = hm_hook_reap(h, o);

		if (wait_ms < 0)
			break;
		/* poll children at 20 ms steps, bounded by their deadlines */
		struct timespec ts = { 0, 20 * 1000000L };
		nanosleep(&ts, NULL);
	}
}

void hm_hook_stop(struct hm_hooks *h)
{
	pthread_mutex_lock(&h->mu);
	h->stopping = true;
	for (unsigned int i = 0; i < h->nr; i++)
		kill(-h->pid[i], SIGTERM);
	pthread_cond_broadcast(&h->slot);
	pthread_mutex_unlock(&h->mu);
}
