#!/usr/bin/env bats
# Crash consistency: the Linux 7.x ntfs driver writes to a volume made by
# our mkfs.ntfs and the power is cut mid-write (sysrq "b" in the guest:
# the machine resets with writes still in its page cache).  Then, on the
# host, fsck.ntfs -a must repair it to a volume our -n, ntfsprogs-plus
# ntfsck -n and ntfs-3g accept, and in a second boot the kernel must mount
# it read-write, walk and read everything and write to it with no ntfs
# warning in its log (guest/ntfs-fsck.sh).
load ../lib/common
load ../ntfs/ntfs_helpers

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs

teardown() { if mountpoint -q mnt 2>/dev/null; then umount mnt; fi; }

setup_file() {
	export W=$BATS_FILE_TMPDIR
	mkdir -p "$W/cut" "$W/share/imgs"
	truncate -s 256M "$W/v.img"
	"$FSFORGE_BUILDDIR/mkfs/mkfs.ntfs" -q -F "$W/v.img"
	run "$FSFORGE_TOP/tests/kernel/vm-run" --sid --drivers ntfs --mem 1024 \
		--timeout 600 --share "$W/cut" --disk "$W/v.img" \
		"$FSFORGE_TOP/tests/kernel/guest/ntfs-crash.sh"
	echo "$output" > "$W/vm1.log"
	echo "$status" > "$W/vm1.rc"
}

@test "crash: the kernel was writing when the power was cut" {
	cat "$W/cut/phase"
	# 97: no result marker -- the guest was reset, as intended
	[ "$(cat "$W/vm1.rc")" -eq 97 ] || { tail -30 "$W/vm1.log"; false; }
	[ "$(cat "$W/cut/phase")" = cut ]
}

@test "crash: fsck.ntfs -a leaves a volume -n, ntfsck and ntfs-3g find clean; a second -a changes nothing" {
	cp --sparse=always "$W/v.img" "$W/crashed.img"
	rc=0; "$FSCK" -a "$W/v.img" > "$W/a.log" 2>&1 || rc=$?
	cat "$W/a.log"
	[ "$rc" -le 1 ]
	# the driver marks the volume dirty while mounted: proof that the cut
	# came before any unmount
	grep -q 'volume is marked dirty' "$W/a.log"
	run "$FSCK" -n "$W/v.img"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	sum=$(sha256sum < "$W/v.img")
	run "$FSCK" -a "$W/v.img"
	[ "$status" -eq 0 ]
	[ "$(sha256sum < "$W/v.img")" = "$sum" ]
	cd_tmp
	cp --sparse=always "$W/v.img" image
	run sid_ntfsck image
	[ "$status" -eq 0 ] || { echo "$output" | tail -20; false; }
	mkdir -p mnt
	ntfs-3g -o ro image mnt
	rc=0
	find mnt -type f -exec cat {} + > /dev/null 2> walk.err || rc=$?
	[ "$(ls mnt | wc -l)" -ge 1 ] || rc=1
	umount mnt
	[ "$rc" -eq 0 ] || { cat walk.err; false; }
}

@test "crash: the kernel mounts the repaired volume read-write, walks and writes it" {
	cp --sparse=always "$W/v.img" "$W/share/imgs/crashed.img"
	cp "$FSCK" "$W/share/fsck.ntfs"
	run "$FSFORGE_TOP/tests/kernel/vm-run" --sid --drivers ntfs --mem 1024 \
		--timeout 600 --share "$W/share" \
		"$FSFORGE_TOP/tests/kernel/guest/ntfs-fsck.sh"
	echo "$output" | tail -20
	[ "$status" -eq 0 ]
	cat "$W/share/result"
	grep -q '^crashed ok fsck=0$' "$W/share/result"
}
