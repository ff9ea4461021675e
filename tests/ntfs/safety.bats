#!/usr/bin/env bats
# Unsafe targets on real block devices (loop devices): mounted or busy
# devices are refused even with -F (only -F -F overrides, as mke2fs does),
# a filesystem or partition table needs -F, and -n never writes.
load ../lib/common
load ntfs_helpers

setup() { cd_tmp; LOOPDEV=; }

teardown() {
	umount_all
	if [ -n "${LOOPDEV:-}" ]; then losetup -d "$LOOPDEV" 2>/dev/null || true; fi
}

loop() { truncate -s "${2:-64M}" "$1" && LOOPDEV=$(losetup -f --show "$1"); }

@test "a mounted device is refused, even with -F; -F -F overrides" {
	truncate -s 64M e.img
	mkfs.ext4 -q e.img
	loop e.img
	m=$(mktemp -d "$BATS_TEST_TMPDIR/mnt.XXXXXX")
	mount -o ro "$LOOPDEV" "$m"
	run "$MKFS_NTFS" "$LOOPDEV"
	[ "$status" -eq 1 ]; [[ $output == *"$LOOPDEV is mounted or in use"* ]]
	run "$MKFS_NTFS" -F "$LOOPDEV"
	[ "$status" -eq 1 ]; [[ $output == *"mounted or in use"* ]]
	run "$MKFS_NTFS" -q -F -F "$LOOPDEV"
	[ "$status" -eq 0 ]
	umount "$m"
	ntfsfix_clean "$LOOPDEV"
}

@test "a device holding a filesystem is refused without -F, formatted with -F" {
	truncate -s 64M e.img
	mkfs.ext4 -q e.img
	loop e.img
	run "$MKFS_NTFS" "$LOOPDEV" </dev/null
	[ "$status" -eq 1 ]; [[ $output == *"contains a ext4 filesystem; use --force"* ]]
	run sh -c "echo n | '$MKFS_NTFS' '$LOOPDEV'"
	[ "$status" -eq 1 ]; [[ $output == *"Proceed anyway? (y,N) n"* ]]
	[ "$(blkid -o value -s TYPE "$LOOPDEV")" = ext4 ]
	run "$MKFS_NTFS" -q -F "$LOOPDEV"
	[ "$status" -eq 0 ]
	[ "$(blkid -o value -s TYPE "$LOOPDEV")" = ntfs ]
	need_ntfs3g
	ntfsfix_clean "$LOOPDEV"
}

@test "a device holding a partition table is refused without -F" {
	loop p.img
	# an MBR with one Linux partition at sector 2048 (written by hand:
	# sfdisk may be missing)
	printf '\x00\x20\x21\x00\x83\x00\x00\x00\x00\x08\x00\x00\x00\x10\x00\x00' |
		dd of="$LOOPDEV" bs=1 seek=446 conv=notrunc status=none
	printf '\x55\xaa' | dd of="$LOOPDEV" bs=1 seek=510 conv=notrunc status=none
	blkid -p "$LOOPDEV" || true
	run "$MKFS_NTFS" "$LOOPDEV" </dev/null
	[ "$status" -eq 1 ]; [[ $output == *"partition table"* ]]
}

@test "yes | mkfs.ntfs overwrites a filesystem (mke2fs-style question, as fstests formats)" {
	truncate -s 64M e.img
	mkfs.ext4 -q e.img
	loop e.img
	run sh -c "yes | '$MKFS_NTFS' '$LOOPDEV'"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"Proceed anyway? (y,N) y"* ]]
	[ "$(blkid -o value -s TYPE "$LOOPDEV")" = ntfs ]
}

@test "yes | mkfs.ntfs still refuses a mounted device" {
	truncate -s 64M e.img
	mkfs.ext4 -q e.img
	loop e.img
	m=$(mktemp -d "$BATS_TEST_TMPDIR/mnt.XXXXXX")
	mount -o ro "$LOOPDEV" "$m"
	run sh -c "yes | '$MKFS_NTFS' -F '$LOOPDEV'"
	[ "$status" -eq 1 ]; [[ $output == *"mounted or in use"* ]]
}

@test "an image attached to a loop device needs -F -F" {
	truncate -s 64M i.img
	loop i.img
	run "$MKFS_NTFS" -F i.img </dev/null
	[ "$status" -eq 1 ]; [[ $output == *"attached to $LOOPDEV; detach it or use --force twice"* ]]
	run "$MKFS_NTFS" -q -F -F i.img
	[ "$status" -eq 0 ]
}

@test "NUMBER-OF-SECTORS larger than the device is refused with the value" {
	loop b.img 32M
	run "$MKFS_NTFS" -F "$LOOPDEV" 100000
	[ "$status" -eq 1 ]; [[ $output == *"number of sectors 100000 is larger than the device (65536 sectors"* ]]
}

@test "-n on a block device writes nothing" {
	loop b.img 32M
	head -c 32M /dev/urandom > "$LOOPDEV"
	before=$(sha256sum < "$LOOPDEV")
	run "$MKFS_NTFS" -n -F "$LOOPDEV"
	[ "$status" -eq 0 ]
	[ "$(sha256sum < "$LOOPDEV")" = "$before" ]
}

@test "a block device is formatted whole and checked by ntfs-3g" {
	need_ntfs3g
	loop b.img 96M
	"$MKFS_NTFS" -q "$LOOPDEV"
	ntfsfix_clean "$LOOPDEV"
	m=$(mount_ntfs3g "$LOOPDEV")
	echo ok > "$m/f" && umount "$m"
}

@test "--full on a block device zeroes it (zero-range request or written zeros)" {
	need_ntfs3g
	loop b.img 32M
	head -c 32M /dev/urandom > "$LOOPDEV"
	"$MKFS_NTFS" -q -F --full "$LOOPDEV"
	# a stretch of free space past the MFT zone holds no random bytes now
	[ "$(dd if="$LOOPDEV" bs=1M skip=6 count=2 status=none | tr -d '\0' | wc -c)" -eq 0 ]
	ntfsfix_clean "$LOOPDEV"
}

# An image file has no O_EXCL: fsck.ntfs and mkfs.ntfs look for its users
# themselves (issue 10 item 9).
FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs

@test "fsck.ntfs refuses -a/-y on an image mounted by ntfs-3g, -n warns and checks" {
	need_ntfs3g
	xz -dc "$FSFORGE_TOP/tests/ntfs/cases/f_orphans/image.xz" > v.img
	m=$(mount_ntfs3g v.img)
	before=$(sha256sum < v.img)
	run "$FSCK" -a v.img
	[ "$status" -eq 8 ]
	[[ $output == *"v.img is mounted on $m (fuse"* ]]
	run "$FSCK" -y v.img
	[ "$status" -eq 8 ]
	[[ $output == *"mounted on $m"* ]]
	run "$MKFS_NTFS" -q -F v.img
	[ "$status" -eq 1 ]
	[[ $output == *"mounted on $m"* ]]
	umount "$m"
	[ "$(sha256sum < v.img)" = "$before" ]
	# read-only FUSE mount: the image is not open for writing, still refused
	m=$(mktemp -d "$BATS_TEST_TMPDIR/mnt.XXXXXX")
	ntfs-3g -o ro v.img "$m"
	run "$FSCK" -a v.img
	[ "$status" -eq 8 ]
	[[ $output == *"mounted on $m"* ]]
	run "$FSCK" -n v.img
	[ "$status" -eq 4 ]
	[[ $output == *"warning: v.img is mounted on $m"* ]]
	[[ $output == *"problems:"* ]]
	umount "$m"
	[ "$(sha256sum < v.img)" = "$before" ]
}

@test "fsck.ntfs refuses an image another process holds open for writing" {
	xz -dc "$FSFORGE_TOP/tests/ntfs/cases/f_orphans/image.xz" > v.img
	before=$(sha256sum < v.img)
	mkfifo go
	# the holder opens read-write, says so, and waits for us
	( exec 3<>v.img; echo held > held; read -r _ < go ) &
	holder=$!
	while [ ! -s held ]; do sleep 0.05; done
	run "$FSCK" -a v.img
	[ "$status" -eq 8 ]
	[[ $output == *"v.img is open for writing by pid "* ]]
	run "$FSCK" -n v.img
	[ "$status" -eq 4 ]
	[[ $output == *"warning: v.img is open for writing"* ]]
	echo > go
	wait "$holder"
	[ "$(sha256sum < v.img)" = "$before" ]
	# a reader alone does not block a repair
	( exec 3<v.img; echo held > held2; read -r _ < go ) &
	holder=$!
	while [ ! -s held2 ]; do sleep 0.05; done
	run "$FSCK" -a v.img
	echo > go
	wait "$holder"
	[ "$status" -eq 1 ]
}

@test "a writer fsck.ntfs may not inspect (another user's process) is found by a lease" {
	command -v setpriv >/dev/null || skip "setpriv missing"
	d=$(world_tmpdir)
	xz -dc "$FSFORGE_TOP/tests/ntfs/cases/f_orphans/image.xz" > "$d/v.img"
	chown 65534 "$d/v.img"
	before=$(sha256sum < "$d/v.img")
	mkfifo go
	( exec 3<>"$d/v.img"; echo held > held; read -r _ < go ) &
	holder=$!
	while [ ! -s held ]; do sleep 0.05; done
	# a copy nobody can run (the build tree may be under /root)
	cp "$FSCK" "$d/fsck.ntfs"
	chmod 755 "$d/fsck.ntfs"
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$d/fsck.ntfs" -a "$d/v.img"
	echo > go
	wait "$holder"
	after=$(sha256sum < "$d/v.img")
	rm -rf "$d"
	[ "$status" -eq 8 ]
	[[ $output == *"v.img is open for writing by another process"* ]]
	[ "$after" = "$before" ]
}
