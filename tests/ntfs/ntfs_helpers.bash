# Helpers of the ntfs host tier.
# shellcheck shell=bash
MKFS_NTFS=$FSFORGE_BUILDDIR/mkfs/mkfs.ntfs
SID_ROOT=${FSFORGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fsforge}/sid-root

need_ntfs3g() {
	command -v ntfs-3g >/dev/null && command -v ntfsfix >/dev/null ||
		die "ntfs-3g missing: apt-get install ntfs-3g"
}

# ntfsfix -n (bookworm) must find nothing to fix
ntfsfix_clean() {
	local out
	out=$(ntfsfix -n "$1" 2>&1) || { echo "$out"; return 1; }
	grep -q 'was processed successfully' <<<"$out" || { echo "$out"; return 1; }
}

# mount IMG with ntfs-3g (FUSE) read-write; print the mount point
mount_ntfs3g() {
	local mnt
	mnt=$(mktemp -d "${BATS_TEST_TMPDIR:-/tmp}/mnt.XXXXXX")
	ntfs-3g "$1" "$mnt" || return 1
	echo "$mnt"
}

# write a small tree with long and non-ASCII names, check it after remount
write_and_verify() {
	local img=$1 m
	m=$(mount_ntfs3g "$img") || return 1
	mkdir "$m/dir" "$m/Ünïcödé ディレクトリ"
	for i in $(seq 1 200); do echo "file $i" > "$m/dir/f$i"; done
	printf 'x%.0s' $(seq 1 250) > /dev/null
	echo long > "$m/$(printf 'L%.0s' $(seq 1 200))"
	echo grüße > "$m/Ünïcödé ディレクトリ/ファイル.txt"
	head -c 3000000 /dev/urandom > "$BATS_TEST_TMPDIR/big"
	cp "$BATS_TEST_TMPDIR/big" "$m/big"
	umount "$m"
	m=$(mount_ntfs3g "$img") || return 1
	[ "$(ls "$m/dir" | wc -l)" -eq 200 ] || die "dir has $(ls "$m/dir" | wc -l) entries"
	[ "$(cat "$m/dir/f77")" = "file 77" ] || die "f77 content"
	[ "$(cat "$m/Ünïcödé ディレクトリ/ファイル.txt")" = grüße ] || die "non-ASCII file"
	cmp "$BATS_TEST_TMPDIR/big" "$m/big" || die "big file differs"
	[ -f "$m/$(printf 'L%.0s' $(seq 1 200))" ] || die "long name"
	umount "$m"
}

# the sid tree with ntfsprogs-plus' ntfsck (tests/kernel/setup --sid)
need_sid() {
	if [ ! -d "$SID_ROOT/tmp" ] || ! chroot "$SID_ROOT" sh -c 'command -v ntfsck' >/dev/null 2>&1; then
		need_or_skip "sid tree not cached (tests/kernel/setup --sid)"
	fi
}

# ntfsprogs-plus ntfsck -n from the sid tree (chroot), on a temporary copy
# of the image inside the tree (no bind mounts are left behind)
sid_ntfsck() {
	local img=$1 t rc
	[ -d "$SID_ROOT/tmp" ] && chroot "$SID_ROOT" sh -c 'command -v ntfsck' >/dev/null 2>&1 ||
		{ echo "no sid tree"; return 2; }
	t=$(mktemp -d "$SID_ROOT/tmp/fsforge-ntfs.XXXXXX")
	cp --sparse=always "$img" "$t/v.img"
	chroot "$SID_ROOT" ntfsck -n "/tmp/${t##*/}/v.img"
	rc=$?
	rm -rf "$t"
	return $rc
}

# After a repair by MODE (-a or -y) of IMAGE with fsck.ntfs FSCK: -n is
# clean and writes nothing, a second -a exits 0 and changes nothing, and
# ntfsck -n of the sid tree (an independent checker) is clean.  Fails
# the test (die) naming the first of these that does not hold.
repair_converged() {
	local fsck=$1 img=$2 mode=$3 after
	after=$(sha256sum < "$img")
	run "$fsck" -n "$img"
	[ "$status" -eq 0 ] || { echo "$output"; die "-n after $mode: exit $status"; }
	[ "$(sha256sum < "$img")" = "$after" ] || die "-n after $mode wrote"
	run "$fsck" -a "$img"
	[ "$status" -eq 0 ] || { echo "$output"; die "second -a: exit $status"; }
	[ "$(sha256sum < "$img")" = "$after" ] || die "second -a changed the image"
	run sid_ntfsck "$img"
	[ "$status" -eq 0 ] || { echo "$output"; die "ntfsck -n: exit $status"; }
}
