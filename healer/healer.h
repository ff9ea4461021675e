/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xfs_healer's library: everything below the two tool mains, one file per
 * concern.  No global mutable state: the tool's context travels by pointer.
 *
 *   decode.c   event -> one text line / one JSON object (names of masks)
 *   capture.c  the capture file format (record and --replay)
 *   policy.c   autofsck rules, what to do with each event
 *   mount.c    mount point checks, file handle, fs properties, monitor open
 *   repair.c   XFS_IOC_SCRUB_METADATA with the repair flag
 *   service.c  unit name escaping
 *   sd.c       sd_notify, journal, StartUnit (libsystemd only via dlopen)
 *   hook.c     --exec hooks: spawn with the event in the environment,
 *              reap, kill on time limit; never waits
 *   output.c   where lines go: stdout, stderr, or the journal
 *   queue.c    the bounded event queue between the reader and the workers
 *   recheck.c  the full re-check in-process, when no xfs_scrub@ can start
 *   text.c     growing strings, escaping of outside text
 *   hazard.c   repairs known to crash given kernel releases
 *   status.c   the status file for operators (--status)
 *   parents.c  paths of inodes through parent pointers
 */
#ifndef FSFORGE_HEALER_H
#define FSFORGE_HEALER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "fsforge/log.h"
#include "xfs/healthmon.h"

/* ---- text.c -------------------------------------------------------------- */
/* a growing string: never truncated; on no memory it stays "" */
struct hm_str {
	char *p;
	size_t len, cap;
	bool oom;
};
void hm_str_add(struct hm_str *s, const char *fmt, ...) FSF_PRINTF(2, 3);
const char *hm_str_get(const struct hm_str *s);
void hm_str_free(struct hm_str *s);
/* append raw text escaped: one line of valid UTF-8 (see text.c) */
void hm_str_escape(struct hm_str *s, const char *raw);
/* the escaped copy (malloc) */
char *hm_escape_dup(const char *raw);

/* ---- decode.c ------------------------------------------------------------ */
const char *hm_domain_name(uint32_t domain);	/* NULL when unknown */
const char *hm_type_name(uint32_t type);	/* NULL when unknown */
/* is (domain, type) a combination this program knows how to decode? */
bool hm_event_known(const struct xfs_health_monitor_event *ev);
/* "bnobt, rmapbt, 0x8000" for the mask of a domain; returns buf */
char *hm_mask_text(uint32_t domain, uint32_t mask, char *buf, size_t len);
char *hm_shutdown_text(uint32_t reasons, char *buf, size_t len);
/* the object an event is about: "agno 0x5", "ino 131 gen 0x2", "" (fs) */
char *hm_object_text(const struct xfs_health_monitor_event *ev, char *buf,
		     size_t len);
/* one line without trailing newline, prefixed by the mount point label
 * (already escaped: hm_escape_dup), appended to out; path: the file of an
 * inode or file range event (escaped, hm_inode_path) or NULL */
void hm_format_text(const struct xfs_health_monitor_event *ev,
		    const char *label, const char *path, struct hm_str *out);
void hm_format_json(const struct xfs_health_monitor_event *ev,
		    const char *label, const char *path, struct hm_str *out);
/* a JSON string of text already escaped by hm_str_escape */
void hm_json_str(struct hm_str *out, const char *s);

/* ---- capture.c ----------------------------------------------------------- */
/*
 * Capture file: a 32-byte header then 64-byte little-endian event records
 * exactly as the kernel's read(2) returns them.
 *   0  8  magic "XFSHMCAP"
 *   8  4  version (1)
 *  12  4  record size (64; larger sizes are read, the tail ignored)
 *  16  4  flags: bit 0 back-reference metadata, bit 1 autofsck recorded,
 *              bit 2 mounted read-only
 *  20 12  autofsck property value, NUL-padded
 */
#define HM_CAPTURE_MAGIC "XFSHMCAP"
#define HM_CAPTURE_HDR 32
#define HM_CAP_BACKREFS (1U << 0)
#define HM_CAP_AUTOFSCK (1U << 1)
#define HM_CAP_READONLY (1U << 2)

struct hm_fsinfo {
	bool backrefs;		/* rmapbt or parent pointers */
	bool has_autofsck;	/* the autofsck property is set */
	bool readonly;		/* mounted read-only */
	char autofsck[12];
};

struct hm_capture {
	FILE *f;
	const char *path;
	uint32_t recsize;
	uint64_t offset;	/* of the next record */
	struct hm_fsinfo info;
	char *err;		/* hm_capture_next's message on -1 (malloc) */
};

/* 0 or -1 with a message naming the file */
int hm_capture_open(struct hm_capture *c, const char *path,
		    const struct fsf_log *log);
/* 1 = one event, 0 = end of file, -1 = malformed (message in c->err, for
 * the caller to print once the events before it are out) */
int hm_capture_next(struct hm_capture *c, struct xfs_health_monitor_event *ev);
void hm_capture_close(struct hm_capture *c);
int hm_capture_create(struct hm_capture *c, const char *path,
		      const struct hm_fsinfo *info, const struct fsf_log *log);
int hm_capture_write(struct hm_capture *c,
		     const struct xfs_health_monitor_event *ev,
		     const struct fsf_log *log);
/* byte order of records: little-endian on disk, native in memory */
void hm_event_from_le(struct xfs_health_monitor_event *ev,
		      const unsigned char *rec);
void hm_event_to_le(unsigned char *rec,
		    const struct xfs_health_monitor_event *ev);

/* ---- policy.c ------------------------------------------------------------ */
enum hm_mode {
	HM_MODE_EXIT,		/* nothing to do on this filesystem */
	HM_MODE_LOG,		/* report only */
	HM_MODE_REPAIR,		/* repair what the kernel reports as sick */
};

struct hm_policy_in {
	bool opt_repair;	/* --repair */
	bool opt_no_autofsck;	/* --no-autofsck */
	const struct hm_fsinfo *fs;
};

/* the mode for a filesystem and a short reason for the log */
enum hm_mode hm_policy_mode(const struct hm_policy_in *in, const char **why);

struct hm_repair {
	uint32_t scrub_type;
	uint32_t agno;
	uint64_t ino;
	uint32_t gen;
	const char *what;	/* "bnobt", "directory", ... */
};

#define HM_MAX_REPAIRS 32
struct hm_plan {
	unsigned int nr;
	struct hm_repair r[HM_MAX_REPAIRS];
	bool full_scrub;	/* start the xfs_scrub service */
	const char *full_scrub_why;
	bool stop;		/* the stream ended (unmount) */
};

void hm_plan_event(const struct xfs_health_monitor_event *ev,
		   enum hm_mode mode, struct hm_plan *plan);
const char *hm_scrub_type_name(uint32_t type);

/* ---- service.c ----------------------------------------------------------- */
/* systemd-escape --path: "/mnt/a b" -> "mnt-a\x20b"; returns -1 if too long */
int hm_escape_path(const char *path, char *buf, size_t len);
/* "xfs_scrub@<escaped>.service" */
int hm_unit_name(const char *tmpl, const char *path, char *buf, size_t len);

/* ---- sd.c ------------------------------------------------------------------ */
/* StartUnit(name, "replace") over the system bus or systemd's private
 * socket; 0 or -errno, msg filled */
int hm_start_unit(const char *unit, char *msg, size_t msglen);
/* sd_notify protocol; 0 when not run by systemd */
int hm_notify(const char *state);
/* wait (bounded) until systemd has processed our earlier messages */
int hm_notify_barrier(int timeout_ms);
/* one journal entry; kv: NULL-terminated KEY, value pairs */
int hm_journal(int prio, const char *msg, const char *const *kv);

/* ---- output.c ------------------------------------------------------------ */
enum hm_prio { HM_ERR = 3, HM_WARNING = 4, HM_NOTICE = 5, HM_INFO = 6 };
struct hm_out {
	const struct fsf_log *log;
	bool journal;		/* stderr is the journal: structured entries */
	bool json;		/* events as JSON objects on stdout */
	bool quiet;		/* no per-event lines */
};
/* is stderr connected to the journal (JOURNAL_STREAM matches)? */
bool hm_stderr_is_journal(void);
/* a message line: journal entry or "prog: line" on stderr/stdout */
void hm_say(const struct hm_out *o, enum hm_prio prio, const char *fmt, ...)
	FSF_PRINTF(3, 4);
/* the decoded event (text or JSON) */
void hm_emit_event(const struct hm_out *o,
		   const struct xfs_health_monitor_event *ev, const char *label,
		   const char *path);

/* ---- hook.c -------------------------------------------------------------- */
#define HM_HOOK_MAX 16
struct hm_hooks {
	const char *path;		/* NULL: no hooks */
	unsigned int timeout_s;		/* kill after this long */
	int wakefd;			/* written when a deadline is added */
	pthread_mutex_t mu;
	pthread_cond_t slot;		/* a hook ended */
	bool stopping;			/* no more hooks; waiters return */
	unsigned int nr;
	pid_t pid[HM_HOOK_MAX];
	uint64_t deadline_ms[HM_HOOK_MAX];
};
void hm_hook_init(struct hm_hooks *h, int wakefd);
/* run the hook for one event (a worker): waits for a free slot when
 * HM_HOOK_MAX hooks are running, never for the hook itself */
void hm_hook_spawn(struct hm_hooks *h, const struct hm_out *o,
		   const struct xfs_health_monitor_event *ev, const char *label,
		   const char *path);
/* reap finished hooks, kill overdue ones; ms until the next deadline or -1 */
int hm_hook_reap(struct hm_hooks *h, const struct hm_out *o);
/* wait for all hooks (bounded by their deadlines) at exit */
void hm_hook_drain(struct hm_hooks *h, const struct hm_out *o);
/* stop: waiting workers return, running hooks get SIGTERM (their group) */
void hm_hook_stop(struct hm_hooks *h);
uint64_t hm_now_ms(void);

/* ---- mount.c ------------------------------------------------------------- */
#define HM_HANDLE_MAX 128
struct hm_handle {
	int mount_id;			/* 31-bit, reused after unmount */
	uint64_t mnt_unique;		/* STATX_MNT_ID_UNIQUE; 0: unknown */
	unsigned int len;
	int type;
	unsigned char bytes[HM_HANDLE_MAX];
};
/* open the mount point root of an XFS filesystem; -1 with one clear line */
int hm_open_mountpoint(const char *path, const struct hm_out *o);
int hm_get_handle(int fd, struct hm_handle *h);
bool hm_handle_equal(const struct hm_handle *a, const struct hm_handle *b);
/* the 64-bit never-reused id of the mount at path (Linux 6.8+) when path
 * resolves to the mount with mountinfo id mi_id; else mi_id with bit 63
 * set (the 31-bit id, which a new mount may reuse) */
uint64_t hm_mount_key(const char *path, uint64_t mi_id);
void hm_read_fsinfo(int fd, struct hm_fsinfo *info);
/* XFS_IOC_HEALTH_MONITOR; the new fd or -1 with errno and a message */
int hm_open_monitor(int fd, bool verbose, const char *path,
		    const struct hm_out *o);

/* ---- repair.c ------------------------------------------------------------ */
enum hm_repair_result {
	HM_REPAIR_DONE,		/* repaired */
	HM_REPAIR_CLEAN,	/* nothing needed */
	HM_REPAIR_FAILED,	/* still corrupt or error: needs xfs_scrub */
	HM_REPAIR_UNSUPPORTED,	/* the kernel cannot repair */
	HM_REPAIR_MOVED,	/* mount point no longer this filesystem */
	HM_REPAIR_READONLY,	/* mounted read-only: nothing attempted */
};
/* ioctl(2), retried on EINTR and (with a short back-off) EAGAIN */
int hm_ioctl_retry(int fd, unsigned long req, void *arg);
enum hm_repair_result hm_repair_one(const char *mountpoint,
				    const struct hm_handle *expect,
				    const struct hm_repair *r, char *msg,
				    size_t msglen);

/* ---- queue.c ------------------------------------------------------------- */
#define HM_QUEUE_DEFAULT (1024 * 1024 / XFS_HM_EVENT_SIZE)	/* 1 MiB */
#define HM_QF_QUEUE (1U << 0)	/* a LOST event for our own queue's drops */
#define HM_QF_RECHECK (1U << 1)	/* not an event: the deferred re-check */
struct hm_qent {
	struct xfs_health_monitor_event ev;
	unsigned int flags;
};
struct hm_queue {
	pthread_mutex_t mu;
	pthread_cond_t nonempty, nonfull;
	struct xfs_health_monitor_event *ring;	/* 64 bytes each */
	unsigned char *flags;			/* HM_QF_* of each */
	size_t cap, head, n, peak;
	uint64_t queued;		/* entries ever queued */
	uint64_t lost_pending;		/* dropped, notice not queued yet */
	uint64_t lost_total;		/* dropped since the start */
	bool closed;			/* no more events: drain and end */
	bool stopping;			/* end now */
};
int hm_queue_init(struct hm_queue *q, size_t cap);
void hm_queue_destroy(struct hm_queue *q);
/* queue one event; wait=false never blocks (a full queue counts a loss and
 * returns false), wait=true waits for room (false when stopped) */
bool hm_queue_push(struct hm_queue *q,
		   const struct xfs_health_monitor_event *ev, bool wait);
/* a control entry (flags): queued if there is room beside the slot kept
 * for a loss notice, else false; never waits, never counts a loss */
bool hm_queue_push_ctl(struct hm_queue *q,
		       const struct xfs_health_monitor_event *ev,
		       unsigned int flags);
/* end of the stream: a pending loss notice is queued, workers drain */
void hm_queue_close(struct hm_queue *q, uint64_t time_ns);
/* stop now: every waiter returns */
void hm_queue_stop(struct hm_queue *q);
/* next entry; false when closed and empty, or stopped */
bool hm_queue_pop(struct hm_queue *q, struct hm_qent *out);
size_t hm_queue_len(struct hm_queue *q);

/* ---- hazard.c ------------------------------------------------------------ */
struct hm_hazard {
	unsigned int first[3], last[3];	/* upstream releases, inclusive */
	uint32_t scrub_type;		/* the repair that crashes */
	const char *what;
};
/* the hazard of asking for this repair on this release (uname -r), or NULL */
const struct hm_hazard *hm_hazard_find(const char *release,
				       uint32_t scrub_type);

/* ---- recheck.c ----------------------------------------------------------- */
/* check (repair=false) or repair every per-AG and filesystem-wide metadata
 * object in the kernel; 0 clean, 1 damage left, -1 could not run */
int hm_recheck(const char *mountpoint, const char *label,
	       const struct hm_handle *expect, bool repair,
	       const struct hm_out *o);

/* ---- parents.c ----------------------------------------------------------- */
#define HM_PATH_DEPTH 512	/* directory levels walked at most */
#define HM_PATH_MAX 4096	/* bytes of path at most (PATH_MAX) */
struct hm_parent {
	bool root;		/* the inode asked about is the root directory */
	uint64_t ino;		/* else: one parent directory ... */
	uint32_t gen;
	char name[256];		/* ... and the inode's name in it */
};
/* one parent of (ino, gen): 0 or -errno */
typedef int (*hm_parent_fn)(void *ctx, uint64_t ino, uint32_t gen,
			    struct hm_parent *p);
/* "/a/b" from the filesystem root ("/" for the root), one parent per level
 * (malloc in *out); 0, or -errno: the lookup's, -ELOOP beyond
 * HM_PATH_DEPTH levels, -ENAMETOOLONG beyond HM_PATH_MAX bytes, -EUCLEAN
 * for an empty name, a name with '/' or a directory that is its own parent */
int hm_parent_path(hm_parent_fn fn, void *ctx, uint64_t ino, uint32_t gen,
		   char **out);
/* may the path of this event's inode be looked up?  Not when the lookup
 * would read what the event says is damaged (the inode core, its parent
 * pointers): the kernel would report it again, and again */
bool hm_event_path_safe(const struct xfs_health_monitor_event *ev);
/* label + the escaped path of the inode on the filesystem mounted at
 * mountpoint (if still the one of expect), or NULL: use "ino N gen G" */
struct hm_handle;
char *hm_inode_path(const char *mountpoint, const struct hm_handle *expect,
		    const char *label, uint64_t ino, uint32_t gen);

/* ---- status.c ------------------------------------------------------------ */
#define HM_STATUS_DIR "/run/xfs_healer"
#define HM_STATUS_TYPES 13	/* event types 0..12; [13]: unknown ones */
struct hm_status {
	const char *label;		/* escaped mount point */
	const char *state;		/* "running", "stopped", ... */
	const char *mode;		/* "repair", "report", "none" */
	pid_t pid;
	time_t started;
	uint64_t events;		/* from the kernel (or the capture) */
	uint64_t by_type[HM_STATUS_TYPES + 1];
	uint64_t lost;			/* reported lost + dropped in queue */
	uint64_t lost_queue;		/* dropped by our own queue */
	uint64_t repairs_requested, repairs_done, repairs_clean;
	uint64_t repairs_failed, repairs_skipped;
	uint64_t rechecks, rechecks_suppressed;
	uint64_t last_event_ns;		/* the event's own time stamp */
	time_t last_event_seen;		/* our clock when it was handled */
	bool shut_down;
};
/* <dir>/<mount escaped as systemd-escape --path>.json (malloc), or NULL */
char *hm_status_path(const char *dir, const char *mount);
void hm_status_format(const struct hm_status *st, struct hm_str *s);
/* write to a temporary file beside path, rename over it; 0 or -errno */
int hm_status_write(const char *path, const struct hm_status *st);
/* the file as is (json) or one "name value" line per member; -errno */
int hm_status_show(const char *path, bool json, FILE *out);

#endif
