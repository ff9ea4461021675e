// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 3, connectivity (as e2fsck's pass 3): every directory must be
 * reachable from the root.  A directory's parent is the directory its
 * $FILE_NAME names (the index entries are rebuilt from those names, so
 * after the index checks both say the same).  Each directory's chain of
 * parents is followed up to the root, or to a directory already known to
 * reach it; a chain that comes back to itself is a loop cut off from the
 * root.  The loop is broken by moving one of its directories (the lowest
 * record number) to /lost+found as "#<record>": everything below it keeps
 * its place and its name, so the whole detached subtree hangs under that
 * one entry.  A directory whose parent is no directory at all is an
 * orphan, reconnected the same way by the orphan check (pass3_orphans.c).
 * A directory whose name took its entry's parent back in the index check
 * (pass3_strays.c; under -n not written) is taken as placed there.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs_check.h"
#include "ntfs_problems.h"

#define MASK48 0xffffffffffffULL
#define NO_PARENT UINT64_MAX

/* What the walk knows of a directory: on the chain being followed, or
 * done (reaches the root, or was judged); neither: unseen.  Both are
 * sets of directories (record_set.c): a few bytes a directory, where a
 * state per record touched a page of memory for every 16,384 records
 * of the volume. */
struct walk {
	struct ntfs_rset on_path, done;
	uint64_t *path;			/* the chain, in order */
	size_t cap;
};

static int walk_push(struct walk *w, size_t n, uint64_t r)
{
	if (n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 64;
		uint64_t *g = realloc(w->path, cap * sizeof(*g));

		if (!g)
			return -1;
		w->path = g;
		w->cap = cap;
	}
	if (rset_set(&w->on_path, r))
		return -1;
	w->path[n] = r;
	return 0;
}

struct parent_of {
	uint64_t parent;
	bool found;
};

/* the parent of a directory: that of its first name not in the DOS
 * namespace (a DOS name always has a long twin in the same directory) */
static int take_parent(const struct ntfs_attr_header *a, void *arg)
{
	struct parent_of *p = arg;
	struct ntfs_file_name fn;

	if (!ntfs_file_name_of(a, &fn))
		return 0;
	if (p->found && fn.name_type == NTFS_NS_DOS)
		return 0;
	p->parent = le64toh(fn.parent_directory) & MASK48;
	p->found = true;
	return fn.name_type != NTFS_NS_DOS;
}

static bool is_dir(const struct ntfs_check *c, uint64_t r)
{
	return r < c->vol.mft_records && rset_get(&c->record_dir, r) &&
	       cset_get(&c->record_used, r);
}

static uint64_t parent_of(struct ntfs_check *c, uint64_t d, uint8_t *buf)
{
	struct parent_of p = { NO_PARENT, false };

	if (ntfs_file_foreach(c, d, buf, take_parent, &p) < 0 || !p.found)
		return NO_PARENT;
	return p.parent;
}

static void move(struct ntfs_check *c, uint64_t pick, const char *reason)
{
	char obj[1200], why[NTFS_WHY];

	ntfs_object_name(c, "directory", pick, obj, sizeof(obj));
	if (!fsf_fix_ask(&c->fix, &PR_DIR_UNREACHABLE, obj, reason))
		return;
	if (ntfs_move_to_lost_found(c, pick, why)) {
		fsf_fix_failed(&c->fix);
		fsf_fix_ask(&c->fix, &PR_ORPHAN_FAILED, obj, why);
	}
}

/* The loop PATH[FROM..N-1]: one of its directories goes to /lost+found. */
static void break_loop(struct ntfs_check *c, const uint64_t *path, size_t from,
		       size_t n)
{
	uint64_t pick = path[from];
	char chain[256];
	size_t len;

	for (size_t i = from; i < n; i++)
		if (path[i] < pick)
			pick = path[i];
	/* "its parents form a loop: 64 -> 65 -> 64", shortened when long */
	len = (size_t)snprintf(chain, sizeof(chain), "its parents form a loop: ");
	for (size_t i = from; i <= n && len + 48 < sizeof(chain); i++)
		len += (size_t)snprintf(chain + len, sizeof(chain) - len, "%s%llu",
					i > from ? " -> " : "",
					(unsigned long long)path[i < n ? i : from]);
	if (len + 48 >= sizeof(chain))
		snprintf(chain + len, sizeof(chain) - len, " ...");
	move(c, pick, chain);
}

int ntfs_pass3_connect(struct ntfs_check *c)
{
	uint64_t nrec = c->vol.mft_records;
	struct walk w = { 0 };
	uint8_t *buf = malloc(c->vol.boot.g.mft_record_size);
	int ret = 0;

	rset_init(&w.on_path, nrec);
	rset_init(&w.done, nrec);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	for (uint64_t d = 0; d < nrec; d++) {
		size_t n = 0;
		uint64_t r = d;

		/* the root, and the system directories ($Extend) whose
		 * place is not ours to change: never moved, taken as
		 * reached */
		if (d < NTFS_FILE_FIRST_USER || !is_dir(c, d) ||
		    rset_get(&w.done, d))
			continue;
		/* up the parents until the root, a known directory, a
		 * parent that is no directory (an orphan: not ours), a
		 * directory already on this path (a loop) or one whose name
		 * takes a parent back not written (-n): taken as placed */
		while (r >= NTFS_FILE_FIRST_USER && is_dir(c, r) &&
		       !rset_get(&w.done, r) && !rset_get(&w.on_path, r) &&
		       !ntfs_name_given_unwritten(c, r)) {
			if (walk_push(&w, n, r)) {
				ret = -ENOMEM;
				goto out;
			}
			n++;
			r = parent_of(c, r, buf);
		}
		if (r >= NTFS_FILE_FIRST_USER && r < nrec &&
		    rset_get(&w.on_path, r)) {
			size_t from = 0;

			while (w.path[from] != r)
				from++;
			break_loop(c, w.path, from, n);
		} else if (n && r == NO_PARENT &&
			   w.path[n - 1] >= NTFS_FILE_FIRST_USER) {
			move(c, w.path[n - 1], "it has no name");
		}
		for (size_t i = 0; i < n; i++) {
			rset_clear(&w.on_path, w.path[i]);
			if (rset_set(&w.done, w.path[i])) {
				ret = -ENOMEM;
				goto out;
			}
		}
	}
out:
	rset_free(&w.on_path);
	rset_free(&w.done);
	free(w.path);
	free(buf);
	return ret;
}
