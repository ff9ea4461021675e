#!/usr/bin/env bats
# Issue 11's proof: volumes made by mkntfs (sid) and by our mkfs.ntfs,
# populated by the Linux 7.2 ntfs driver (one QEMU boot for both, shared
# with ntfs_special.bats: 3.5 to 5.5 minutes under TCG on 2 cores at load
# 10-18; the host checks about 50 s with the ASan build) with every kind of object it writes
# (guest/ntfs-fill.sh: regular, sparse and fragmented files, symlinks, a
# FIFO, a socket, device nodes, 16 hard links, owners, modes, user xattrs)
# and a directory of 20,000 files, check clean with fsck.ntfs -n and are
# left byte for byte alone by -a; ntfsck -n agrees.  Then ntfs-3g writes
# more (files, a hard link, a symlink, a user xattr (a named stream),
# renames across directories, 4,000 of the 20,000 deleted) and the same
# holds again.  This found fsck.ntfs's refusal of $MFT's $BITMAP in an
# extension record (tests/ntfs/attrlist.bats has the small case).
load ../lib/common
load ../ntfs/ntfs_helpers
load ntfs_fill

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
VOLUMES="mkntfs+many ours+many"

# the boot is shared with ntfs_special.bats (ntfs_fill.bash)
setup_file() {
	[ -d "$SID_ROOT/tmp" ] || return 0
	ntfs_fill_boot
}

teardown() { umount_all; }

o() { cat "$W/share/out/$1"; }

# fsck.ntfs -n on IMG: exit 0, one line, no problem found
fsck_clean() {
	run "$FSCK" -n "$1"
	echo "$output"
	[ "$status" -eq 0 ] || return 1
	[ "$(wc -l <<<"$output")" -eq 1 ] || return 1
	[[ "$output" == *"problems: 0 found, 0 fixed, 0 left" ]]
}

# fsck.ntfs -a on a copy of IMG: exit 0 and not one byte changed
fsck_a_untouched() {
	cp --sparse=always "$1" "$BATS_TEST_TMPDIR/a.img"
	run "$FSCK" -a "$BATS_TEST_TMPDIR/a.img"
	echo "$output"
	[ "$status" -eq 0 ] || return 1
	cmp "$1" "$BATS_TEST_TMPDIR/a.img"
}

@test "kernel: the guest filled both volumes, 20,000 files in one directory, clean ntfs kernel log" {
	need_sid
	# the guest's time for each phase (shown when the test fails)
	sed -n 's/^.*: filled in .*/# &/p' "$W/vm.log"
	[ "$(cat "$W/vm.rc")" -eq 0 ] || { tail -40 "$W/vm.log"; false; }
	for v in $VOLUMES; do
		n=${v%%+*}
		echo "# $n: $(o "$n.rc")"
		[ "$(o "$n.rc")" -eq 0 ]
		run grep -c $'^many/file-[0-9]*\.txt\tmeta\tf ' "$W/share/out/$n.manifest.after"
		[ "$output" -eq 20000 ]
	done
}

@test "kernel: the driver reads back what it wrote after a remount" {
	need_sid
	for v in $VOLUMES; do
		n=${v%%+*}
		# the root line differs (mounted read-only the second time)
		diff <(grep -v '^	' "$W/share/out/$n.manifest.before") \
			<(grep -v '^	' "$W/share/out/$n.manifest.after")
		grep -q $'^sock\tmeta\ts ' "$W/share/out/$n.manifest.after"
		grep -q $'^chr\trdev\t1:3$' "$W/share/out/$n.manifest.after"
		grep -q $'^xattrs\txattr\tuser.small=0x68656c6c6f$' "$W/share/out/$n.manifest.after"
	done
}

@test "fsck.ntfs -n: both kernel-written volumes clean, nothing reported; -a changes no byte" {
	need_sid
	for v in $VOLUMES; do
		fsck_clean "$W/${v%%+*}.img"
		fsck_a_untouched "$W/${v%%+*}.img"
	done
}

@test "reference: ntfsck -n (sid, in the guest) finds both kernel-written volumes clean" {
	need_sid
	for v in $VOLUMES; do
		n=${v%%+*}
		echo "# $n: $(o "$n.ntfsck.rc")"
		[ "$(o "$n.ntfsck.rc")" -eq 0 ] || { tail -5 "$W/share/out/$n.ntfsck.log"; false; }
	done
}

@test "ntfs-3g (bookworm) writes more on both; fsck.ntfs -n still clean, -a changes nothing, ntfsck -n agrees" {
	need_sid
	need_ntfs3g
	for v in $VOLUMES; do
		n=${v%%+*}
		img=$BATS_TEST_TMPDIR/$n.3g.img
		cp --sparse=always "$W/$n.img" "$img"
		m=$(mount_ntfs3g "$img")
		mkdir "$m/by-3g"
		for i in $(seq 1 500); do echo "3g $i" > "$m/by-3g/new-$i"; done
		ln "$m/by-3g/new-1" "$m/links/from-3g"
		ln -s ../hello.txt "$m/by-3g/sym"
		setfattr -n user.from-3g -v stream "$m/by-3g/new-2"
		mv "$m/many/file-1.txt" "$m/by-3g/moved.txt"
		mv "$m/big" "$m/by-3g/big-moved"
		rm "$m"/many/file-*3.txt "$m"/many/file-*7.txt
		umount "$m"
		m=$(mount_ntfs3g "$img")
		[ "$(ls "$m/many" | wc -l)" -eq 15999 ]
		[ "$(ls "$m/by-3g/big-moved" | wc -l)" -eq 300 ]
		[ "$(cat "$m/by-3g/moved.txt")" = 1 ]
		[ "$(cat "$m/links/from-3g")" = "3g 1" ]
		[ "$(getfattr --only-values -n user.from-3g "$m/by-3g/new-2")" = stream ]
		umount "$m"
		fsck_clean "$img"
		fsck_a_untouched "$img"
		run sid_ntfsck "$img"
		[ "$status" -eq 0 ] || { tail -5 <<<"$output"; false; }
	done
}
