#!/usr/bin/env bats
# Bad input and unsafe outputs: a clear one-line error naming the object,
# exit status 1, and never a partial image under the requested name.
load ../lib/common

setup() {
	cd_tmp
	SRC=$BATS_TEST_TMPDIR/src
	mkdir -p "$SRC/d"
	echo data > "$SRC/d/file"
}

teardown() {
	umount_all
	if [ -n "${LOOPDEV:-}" ]; then losetup -d "$LOOPDEV" 2>/dev/null || true; fi
}

no_leftovers() {
	[ ! -e "$1" ] || die "$1 exists"
	! compgen -G "$1.tmp*" >/dev/null || die "temporary file left: $(compgen -G "$1.tmp*")"
}

@test "missing source directory is named" {
	run "$MKFS_EROFS" out.img "$BATS_TEST_TMPDIR/nope"
	[ "$status" -eq 1 ]
	[[ $output == *"cannot open source directory $BATS_TEST_TMPDIR/nope"* ]]
	no_leftovers out.img
}

# run mkfs.erofs as nobody in the world-reachable scratch tree $w; the
# binary is copied there (the build tree may be under a home nobody cannot
# enter, such as /root on a fresh machine)
as_nobody() {
	cp "$MKFS_EROFS" "$w/mkfs.erofs"
	chmod 755 "$w/mkfs.erofs"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$w/mkfs.erofs" "$@"
}

@test "an unreadable file fails the build, names the file and leaves no image" {
	w=$(world_tmpdir)
	cp -a "$SRC" "$w/src"
	chmod 777 "$w"
	chmod 000 "$w/src/d/file"
	run as_nobody "$w/out.img" "$w/src"
	[ "$status" -eq 1 ]
	[[ $output == *"cannot open $w/src/d/file: Permission denied"* ]]
	no_leftovers "$w/out.img"
	rm -rf "$w"
}

@test "an unreadable directory fails the build and names it" {
	w=$(world_tmpdir)
	cp -a "$SRC" "$w/src"
	chmod 777 "$w"
	chmod 000 "$w/src/d"
	run as_nobody "$w/out.img" "$w/src"
	[ "$status" -eq 1 ]
	[[ $output == *"cannot open directory $w/src/d: Permission denied"* ]]
	no_leftovers "$w/out.img"
	rm -rf "$w"
}

@test "an existing image is replaced only when the new one is complete" {
	w=$(world_tmpdir)
	cp -a "$SRC" "$w/src"
	chmod 777 "$w"
	chmod 000 "$w/src/d/file"
	echo old > "$w/out.img"
	chown 65534 "$w/out.img"
	run as_nobody "$w/out.img" "$w/src"
	[ "$status" -eq 1 ]
	[ "$(cat "$w/out.img")" = old ]
	no_leftovers "$w/out.img.none"
	chmod 644 "$w/src/d/file"
	"$MKFS_EROFS" --quiet "$w/out.img" "$w/src"
	mnt=$(mount_erofs "$w/out.img")
	[ "$(cat "$mnt/d/file")" = data ]
	umount "$mnt"
	rm -rf "$w"
}

@test "the image file inside the source tree is not packed into itself" {
	"$MKFS_EROFS" --quiet "$SRC/self.img" "$SRC"
	mnt=$(mount_erofs "$SRC/self.img")
	[ ! -e "$mnt/self.img" ]
	[ -e "$mnt/d/file" ]
	[ -z "$(ls "$mnt" | grep tmp)" ]
}

@test "--dry-run lays the image out and writes nothing" {
	run "$MKFS_EROFS" --dry-run out.img "$SRC"
	[ "$status" -eq 0 ]
	[[ $output == "(dry run) out.img: "* ]]
	no_leftovers out.img
}

@test "a block device with a filesystem is refused unless --force" {
	truncate -s 16M disk.img
	mkfs.ext4 -q disk.img
	LOOPDEV=$(losetup -f --show disk.img)
	run "$MKFS_EROFS" "$LOOPDEV" "$SRC"
	[ "$status" -eq 1 ]
	[[ $output == *"$LOOPDEV contains a ext4 filesystem; use --force"* ]]
	blkid -p "$LOOPDEV" | grep -q ext4
	run "$MKFS_EROFS" --force "$LOOPDEV" "$SRC"
	[ "$status" -eq 0 ]
	[ "$(blkid -p -o value -s TYPE "$LOOPDEV")" = erofs ]
	mnt=$(mount_erofs "$LOOPDEV")
	[ "$(cat "$mnt/d/file")" = data ]
}

@test "a mounted block device is refused even with --force" {
	truncate -s 16M disk.img
	"$MKFS_EROFS" --quiet disk.img "$SRC"
	LOOPDEV=$(losetup -f --show disk.img)
	mnt=$(mount_erofs "$LOOPDEV")
	before=$(sha256sum < disk.img)
	run "$MKFS_EROFS" --force "$LOOPDEV" "$SRC"
	[ "$status" -eq 1 ]
	[[ $output == *"$LOOPDEV is mounted or in use"* ]]
	[ "$(sha256sum < disk.img)" = "$before" ]
}

@test "an image file attached to a loop device is refused unless --force" {
	"$MKFS_EROFS" --quiet disk.img "$SRC"
	LOOPDEV=$(losetup -f --show disk.img)
	run "$MKFS_EROFS" disk.img "$SRC"
	[ "$status" -eq 1 ]
	[[ $output == *"disk.img is attached to $LOOPDEV"* ]]
}

@test "a block device too small for the image is refused before writing" {
	head -c 1000000 /dev/urandom > "$SRC/big"
	truncate -s 512K small.img
	LOOPDEV=$(losetup -f --show small.img)
	run "$MKFS_EROFS" --force "$LOOPDEV" "$SRC"
	[ "$status" -eq 1 ]
	[[ $output == *"is too small"* ]]
}

@test "the image is fsynced before the rename and its directory after" {
	command -v strace >/dev/null || need_or_skip "strace is not installed"
	# -y names each descriptor's file: the calls in order, pids stripped
	# (LeakSanitizer cannot run under ptrace: leaks are checked elsewhere)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		run strace -f -y -e trace=fsync,rename -o trace "$MKFS_EROFS" --quiet out.img "$SRC"
	[ "$status" -eq 0 ]
	calls=$(grep -E "fsync\(|rename\(" trace | grep -v unfinished | sed -E 's/^[0-9]+ +//; s/ += .*//')
	echo "$calls"
	[ "$(echo "$calls" | wc -l)" -eq 3 ]
	[[ $(echo "$calls" | sed -n 1p) == "fsync("*"<$BATS_TEST_TMPDIR/out.img.tmp"*">)" ]]
	[[ $(echo "$calls" | sed -n 2p) == "rename(\"out.img.tmp"*"\", \"out.img\")" ]]
	[[ $(echo "$calls" | sed -n 3p) == "fsync("*"<$BATS_TEST_TMPDIR>)" ]]
}

@test "a symlinked output is written through; the link stays" {
	mkdir real
	ln -s real/disk.img link.img
	"$MKFS_EROFS" --quiet link.img "$SRC"
	[ -L link.img ]
	[ "$(readlink link.img)" = real/disk.img ]
	[ -f real/disk.img ]
	[ ! -L real/disk.img ]
	mnt=$(mount_erofs real/disk.img)
	[ "$(cat "$mnt/d/file")" = data ]
	umount "$mnt"
	# an existing target through the link is replaced, the link kept
	echo changed > "$SRC/d/file"
	"$MKFS_EROFS" --quiet link.img "$SRC"
	[ -L link.img ]
	mnt=$(mount_erofs real/disk.img)
	[ "$(cat "$mnt/d/file")" = changed ]
	run compgen -G "real/disk.img.tmp*"
	[ "$status" -ne 0 ]
	run compgen -G "link.img.tmp*"
	[ "$status" -ne 0 ]
}

@test "a new image gets 0666 & ~umask; a replaced one keeps mode and owner" {
	(umask 027 && "$MKFS_EROFS" --quiet new.img "$SRC")
	[ "$(stat -c %a new.img)" = 640 ]
	(umask 0 && "$MKFS_EROFS" --quiet new0.img "$SRC")
	[ "$(stat -c %a new0.img)" = 666 ]
	echo old > kept.img
	chmod 604 kept.img
	chown 65534:65533 kept.img
	(umask 077 && "$MKFS_EROFS" --quiet kept.img "$SRC")
	[ "$(stat -c %a kept.img)" = 604 ]
	[ "$(stat -c %u:%g kept.img)" = 65534:65533 ]
	[ "$(blkid -p -o value -s TYPE kept.img)" = erofs ]
}

@test "rebuilding into the source tree packs neither the old image nor the temporary file" {
	"$MKFS_EROFS" --quiet "$SRC/self.img" "$SRC"
	[ -s "$SRC/self.img" ]
	ln -s self.img "$SRC/via-link.img"
	"$MKFS_EROFS" --quiet "$SRC/via-link.img" "$SRC"
	mnt=$(mount_erofs "$SRC/self.img")
	run ls -A "$mnt"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'd\nvia-link.img')" ]
	[ -L "$mnt/via-link.img" ]
}

@test "no room for the temporary copy: clear message, old image intact; --in-place works" {
	mkdir small
	mount -t tmpfs -o size=1200k tmpfs small
	head -c 700000 /dev/urandom > "$SRC/big"
	"$MKFS_EROFS" --quiet small/img "$SRC"
	before=$(sha256sum < small/img)
	echo more > "$SRC/d/other"
	run "$MKFS_EROFS" --quiet small/img "$SRC"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"no room for the new image beside small/img"* ]]
	[[ $output == *"--in-place"* ]]
	[ "$(sha256sum < small/img)" = "$before" ]
	run compgen -G "small/img.tmp*"
	[ "$status" -ne 0 ]
	run "$MKFS_EROFS" --quiet --in-place small/img "$SRC"
	[ "$status" -eq 0 ]
	mnt=$(mount_erofs small/img)
	[ "$(cat "$mnt/d/other")" = more ]
	cmp "$mnt/big" "$SRC/big"
	umount "$mnt"
	umount small
}

@test "--in-place still refuses an image that is mounted" {
	"$MKFS_EROFS" --quiet disk.img "$SRC"
	mnt=$(mount_erofs disk.img)
	run "$MKFS_EROFS" --in-place disk.img "$SRC"
	[ "$status" -eq 1 ]
	[[ $output == *"disk.img is attached to"* ]]
}
