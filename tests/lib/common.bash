# Shared helpers for fsforge's bats tests.
# shellcheck shell=bash
: "${FSFORGE_TOP:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${FSFORGE_BUILDDIR:=$FSFORGE_TOP/build}"
# for the helper scripts the tests run (tests/run exports them too)
export FSFORGE_TOP FSFORGE_BUILDDIR
MKFS_EROFS=$FSFORGE_BUILDDIR/mkfs/mkfs.erofs
LIB=$FSFORGE_TOP/tests/lib

# Fail the test with a message.
die() { echo "# $*" >&2; return 1; }

# A prerequisite that the project's own set-up provides (install-deps,
# tests/kernel/setup --sid, root) is missing: skip the test, or fail it
# where the whole suite must run (FSFORGE_REQUIRE_ALL=1, set by
# scripts/test-all, which is what CI runs).
need_or_skip() {
	if [ "${FSFORGE_REQUIRE_ALL:-0}" = 1 ]; then
		die "missing prerequisite (FSFORGE_REQUIRE_ALL=1 makes this a failure): $*"
		return 1
	fi
	skip "$*"
}

# Mount an EROFS image read-only on a fresh directory; print the directory.
mount_erofs() {
	local img=$1 mnt
	mnt=$(mktemp -d "${BATS_TEST_TMPDIR:-/tmp}/mnt.XXXXXX")
	if [ -b "$img" ]; then
		mount -t erofs -o ro "$img" "$mnt" || return 1
	else
		mount -t erofs -o loop,ro "$img" "$mnt" || return 1
	fi
	echo "$mnt"
}

umount_all() {
	local m
	for m in "${BATS_TEST_TMPDIR:-/tmp}"/mnt.*; do
		if mountpoint -q "$m" 2>/dev/null; then umount "$m"; fi
	done
	return 0
}

# Every test works in its own directory.
cd_tmp() { cd "$BATS_TEST_TMPDIR" || return 1; }

# A scratch directory that an unprivileged user can reach.
world_tmpdir() {
	local d
	d=$(mktemp -d /tmp/fsforge-test.XXXXXX) && chmod 755 "$d" && echo "$d"
}
