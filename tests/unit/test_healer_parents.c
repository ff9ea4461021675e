// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * xfs_healer's path assembly (healer/parents.c) over a fake parent-pointer
 * lookup: a small tree described here, plus loops, over-deep chains, bad
 * names and lookup errors, which must all fail (the caller then prints
 * "ino N gen G"); and which events may be looked up at all.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../healer/healer.h"
#include "tap.h"

/* ino 128 is the root: 128 <- 131 "dir" <- 140 "sub dir" <- 150 "f\nx" */
struct node { uint64_t ino; uint32_t gen; uint64_t parent; const char *name; };
static const struct node tree[] = {
	{ 128, 0, 0, NULL },
	{ 131, 1, 128, "dir" },
	{ 140, 7, 131, "sub dir" },
	{ 150, 2, 140, "f\nx" },
	{ 160, 1, 160, "self" },		/* its own parent */
	{ 170, 1, 171, "a" },			/* 170 <-> 171: a loop */
	{ 171, 1, 170, "b" },
	{ 180, 1, 128, "" },			/* empty name */
	{ 181, 1, 128, "a/b" },			/* a '/' in a name */
};

static int calls;

static int fake(void *ctx, uint64_t ino, uint32_t gen, struct hm_parent *p)
{
	(void)ctx;
	calls++;
	for (size_t i = 0; i < sizeof(tree) / sizeof(tree[0]); i++) {
		if (tree[i].ino != ino)
			continue;
		if (tree[i].gen != gen)
			return -ESTALE;
		if (!tree[i].name) {
			p->root = true;
			return 0;
		}
		p->ino = tree[i].parent;
		for (size_t k = 0; k < sizeof(tree) / sizeof(tree[0]); k++)
			if (tree[k].ino == p->ino)
				p->gen = tree[k].gen;
		strcpy(p->name, tree[i].name);
		return 0;
	}
	return -ENOENT;
}

/* a chain of n directories named "d" under the root: ino 1000+n .. 1001 */
static int chain(void *ctx, uint64_t ino, uint32_t gen, struct hm_parent *p)
{
	(void)gen;
	if (ino == 1000) {
		p->root = true;
		return 0;
	}
	p->ino = ino - 1;
	strcpy(p->name, ctx ? (const char *)ctx : "d");
	return 0;
}

static void expect(uint64_t ino, uint32_t gen, int err, const char *path,
		   const char *what)
{
	char *out = (char *)"unset";
	int r = hm_parent_path(fake, NULL, ino, gen, &out);

	if (err)
		ok(r == err && out == NULL, "%s: error %d (got %d)", what, err, r);
	else
		ok(r == 0 && out && !strcmp(out, path), "%s (%zu bytes)", what,
		   strlen(path));
	if (!r)
		free(out);
}

int main(void)
{
	char *out = NULL, name[300];
	int r;

	expect(128, 0, 0, "/", "the root");
	expect(131, 1, 0, "/dir", "one level");
	expect(140, 7, 0, "/dir/sub dir", "two levels, a space");
	/* raw bytes here; the caller escapes */
	expect(150, 2, 0, "/dir/sub dir/f\nx", "a newline in a name is kept");
	expect(150, 3, -ESTALE, NULL, "a stale generation");
	expect(999, 1, -ENOENT, NULL, "no such inode");
	expect(160, 1, -EUCLEAN, NULL, "its own parent");
	calls = 0;
	expect(170, 1, -ELOOP, NULL, "a loop of two");
	ok(calls == HM_PATH_DEPTH + 1, "the loop ends after %d lookups (%d)",
	   HM_PATH_DEPTH + 1, calls);
	expect(180, 1, -EUCLEAN, NULL, "an empty name");
	expect(181, 1, -EUCLEAN, NULL, "a name with a slash");

	/* depth: 400 levels fit (800 bytes), 600 do not */
	r = hm_parent_path(chain, NULL, 1400, 0, &out);
	ok(r == 0 && out && strlen(out) == 800 && !strncmp(out, "/d/d/", 5),
	   "400 levels: 800 bytes");
	free(out);
	out = NULL;
	r = hm_parent_path(chain, NULL, 1600, 0, &out);
	ok(r == -ELOOP && !out, "600 levels: -ELOOP (%d)", r);
	/* length: 20 levels of 250-byte names (5020 bytes) > 4096 */
	memset(name, 'n', 250);
	name[250] = '\0';
	r = hm_parent_path(chain, name, 1020, 0, &out);
	ok(r == -ENAMETOOLONG && !out, "5020 bytes: -ENAMETOOLONG (%d)", r);
	r = hm_parent_path(chain, name, 1016, 0, &out);
	ok(r == 0 && out && strlen(out) == 16 * 251, "16 levels of 250: %d bytes",
	   16 * 251);
	free(out);

	/* no lookup that reads what the event says is damaged */
	struct xfs_health_monitor_event ev;
	static const struct { uint32_t domain, type, mask; bool safe;
			      const char *what; } evs[] = {
		{ XFS_HM_DOMAIN_INODE, XFS_HM_TYPE_SICK, XFS_BS_SICK_DIR, true,
		  "a sick directory: looked up" },
		{ XFS_HM_DOMAIN_INODE, XFS_HM_TYPE_SICK, XFS_BS_SICK_INODE, false,
		  "a sick inode core: not looked up" },
		{ XFS_HM_DOMAIN_INODE, XFS_HM_TYPE_CORRUPT,
		  XFS_BS_SICK_DIR | XFS_BS_SICK_PARENT, false,
		  "corrupt parent pointers: not looked up" },
		{ XFS_HM_DOMAIN_INODE, XFS_HM_TYPE_SICK, XFS_BS_SICK_XATTR, false,
		  "a sick xattr fork: not looked up" },
		{ XFS_HM_DOMAIN_INODE, XFS_HM_TYPE_SICK, XFS_BS_SICK_BMBTA, false,
		  "a sick attr fork mapping: not looked up" },
		{ XFS_HM_DOMAIN_INODE, XFS_HM_TYPE_HEALTHY, XFS_BS_SICK_INODE, true,
		  "a healthy inode core: looked up" },
		{ XFS_HM_DOMAIN_FILERANGE, XFS_HM_TYPE_BUFREAD, 0, true,
		  "a file I/O error: looked up" },
		{ XFS_HM_DOMAIN_AG, XFS_HM_TYPE_SICK, 1, false,
		  "an AG event: no inode" },
	};
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
		memset(&ev, 0, sizeof(ev));
		ev.domain = evs[i].domain;
		ev.type = evs[i].type;
		if (ev.domain == XFS_HM_DOMAIN_INODE)
			ev.e.inode.mask = evs[i].mask;
		else if (ev.domain == XFS_HM_DOMAIN_AG)
			ev.e.group.mask = evs[i].mask;
		ok(hm_event_path_safe(&ev) == evs[i].safe, "%s", evs[i].what);
	}
	return tap_done();
}
