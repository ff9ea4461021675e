#!/usr/bin/env bats
# xfs_healer's command line and bad input on the host kernel (which has no
# XFS health monitor): one clear line and a non-zero status each.
load ../lib/common

HEALER=$FSFORGE_BUILDDIR/healer/xfs_healer

setup() { cd_tmp; }
teardown() { umount_all; }

@test "--help lists every option; -V prints the version" {
	run "$HEALER" --help
	[ "$status" -eq 0 ]
	for o in --everything --foreground --no-autofsck --quiet --repair \
		 --supported --json --exec --exec-timeout --record --replay \
		 --status --state-dir; do
		[[ $output == *"$o"* ]] || die "$o missing from --help"
	done
	run "$HEALER" -V
	[ "$status" -eq 0 ]
	[[ $output == "xfs_healer (fsforge) "* ]]
}

@test "usage errors exit 16" {
	run "$HEALER"
	[ "$status" -eq 16 ]
	[[ ${lines[0]} == "xfs_healer: error: missing MOUNTPOINT" ]]
	run "$HEALER" /a /b
	[ "$status" -eq 16 ]
	run "$HEALER" --bogus /mnt
	[ "$status" -eq 16 ]
	run "$HEALER" --exec-timeout 0 /mnt
	[ "$status" -eq 16 ]
	[[ $output == *"--exec-timeout: expected 1..86400 seconds, got '0'"* ]]
}

@test "a missing path, a non-XFS path" {
	run "$HEALER" /nonexistent
	[ "$status" -eq 1 ]
	[ "$output" = "xfs_healer: error: cannot open /nonexistent: No such file or directory" ]
	run "$HEALER" "$BATS_TEST_TMPDIR"
	[ "$status" -eq 1 ]
	[ "$output" = "xfs_healer: error: $BATS_TEST_TMPDIR: not an XFS filesystem" ]
	run "$HEALER" --supported /proc
	[ "$status" -eq 1 ]
	[ "$output" = "xfs_healer: error: /proc: not an XFS filesystem" ]
}

xfs_mount() {
	command -v mkfs.xfs >/dev/null || need_or_skip "mkfs.xfs (xfsprogs) not installed"
	[ "$(id -u)" -eq 0 ] || need_or_skip "needs root"
	truncate -s 300M x.img
	mkfs.xfs -q x.img
	mkdir -p mnt.xfs
	mount -o loop x.img mnt.xfs || skip "host kernel cannot mount XFS"
	mkdir mnt.xfs/sub
	touch mnt.xfs/file
}

@test "a directory or file inside an XFS mount is not a mount point" {
	xfs_mount
	run "$HEALER" mnt.xfs/sub
	[ "$status" -eq 1 ]
	[ "$output" = "xfs_healer: error: mnt.xfs/sub: not a mount point (give the directory where the XFS filesystem is mounted)" ]
	run "$HEALER" mnt.xfs/file
	[ "$status" -eq 1 ]
	[[ $output == *"mnt.xfs/file: not a mount point"* ]]
	umount mnt.xfs
}

@test "a kernel without the health monitor: --supported and the daemon say so, status 1" {
	xfs_mount
	[ -z "$(uname -r | grep -E '^(7|[89])\.')" ] || skip "host kernel may have the monitor"
	run "$HEALER" --supported mnt.xfs
	[ "$status" -eq 1 ]
	[[ $output == "xfs_healer: error: mnt.xfs: this kernel has no XFS health monitor (Linux 7.0 or later needed): "* ]]
	run "$HEALER" --repair mnt.xfs
	[ "$status" -eq 1 ]
	[[ $output == *"mnt.xfs: this kernel has no XFS health monitor"* || $output == *"the kernel cannot repair"* ]]
	# the daemon did not keep the mount busy
	umount mnt.xfs
}
