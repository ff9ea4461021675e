# Shared helpers for fsforge's bats tests.
# shellcheck shell=bash
: "${FSFORGE_TOP:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${FSFORGE_BUILDDIR:=$FSFORGE_TOP/build}"
MKFS_EROFS=$FSFORGE_BUILDDIR/mkfs/mkfs.erofs
LIB=$FSFORGE_TOP/tests/lib

# Fail the test with a message.
die() { echo "# $*" >&2; return 1; }

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
		mountpoint -q "$m" 2>/dev/null && umount "$m"
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
