// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Repairs known to crash given kernel releases.  xfs_healer skips such a
 * repair (the object is left to a full re-check, and the message names
 * the hazard) unless --allow-risky-repairs.  Each row is a range of
 * upstream releases (the leading "X.Y.Z" of uname -r) where the crash was
 * seen; widen a range only with a reproduction.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "healer.h"

static const struct hm_hazard hazards[] = {
	/* seen with Debian sid's 7.2.13 in QEMU (tests/kernel/guest/
	 * xfs-healer.sh keeps its inode-core damage off the repair disk for
	 * this reason): asking for an inode-core repair oopses, NULL
	 * dereference in xrep_dinode_count_rtgroup_rmaps.  Other 7.2.x
	 * releases are untested. */
	{ { 7, 2, 13 }, { 7, 2, 13 }, XFS_SCRUB_TYPE_INODE,
	  "inode-core repair oopses the kernel (NULL dereference in "
	  "xrep_dinode_count_rtgroup_rmaps)" },
};

/* "7.2.13-amd64" -> 7, 2, 13; missing parts are 0; false if no digits */
static bool parse_release(const char *rel, unsigned int v[3])
{
	unsigned int n = 0;

	v[0] = v[1] = v[2] = 0;
	for (int i = 0; i < 3; i++) {
		int len = 0;

		if (sscanf(rel, "%u%n", &v[i], &len) != 1)
			break;
		n++;
		rel += len;
		if (*rel != '.')
			break;
		rel++;
	}
	return n > 0;
}

static int cmp(const unsigned int a[3], const unsigned int b[3])
{
	for (int i = 0; i < 3; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

const struct hm_hazard *hm_hazard_find(const char *release,
				       uint32_t scrub_type)
{
	unsigned int v[3];

	if (!release || !parse_release(release, v))
		return NULL;
	for (size_t i = 0; i < sizeof(hazards) / sizeof(*hazards); i++)
		if (hazards[i].scrub_type == scrub_type &&
		    cmp(v, hazards[i].first) >= 0 &&
		    cmp(v, hazards[i].last) <= 0)
			return &hazards[i];
	return NULL;
}
