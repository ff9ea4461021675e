# Helpers of the erofs host tier.
# shellcheck shell=bash
SID_ROOT=${FSFORGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fsforge}/sid-root

# erofs-utils 1.9.4 from the sid tree (tests/kernel/setup --sid), with a
# scratch directory inside the tree: SIDTMP on the host, SIDREL as the
# chroot sees it (the test's teardown removes SIDTMP)
need_sid_erofs() {
	if [ ! -d "$SID_ROOT/tmp" ] || ! chroot "$SID_ROOT" sh -c 'command -v fsck.erofs' >/dev/null 2>&1; then
		need_or_skip "sid tree not cached (tests/kernel/setup --sid)"
	fi
	local name=${BATS_TEST_FILENAME##*/}
	SIDTMP=$(mktemp -d "$SID_ROOT/tmp/fsforge-${name%.bats}.XXXXXX")
	SIDREL=/tmp/${SIDTMP##*/}
}
