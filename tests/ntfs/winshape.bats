#!/usr/bin/env bats
# A volume in the shape Windows' format and a Windows 10/11 installation
# leave (tests/ntfs/lab/winshape.py, the lab's win4k base in small):
# $Extend/$RmMetadata ($Repair with $Config/$Verify/$Corrupt, $TxfLog with
# $Tops:$T, $TxfLog.blf and two containers, $Txf), $Extend/$Deleted,
# $Extend/$UsnJrnl with records, $TXF_DATA logged utility streams on the
# root and on files, System Volume Information, $Recycle.Bin, Program
# Files with PROGRA~n DOS names, hidden/system/archive flags, a root
# object id.  ntfsck -n (sid) and ntfs-3g are the independent judges:
# both must accept the volume; then our -n must find nothing and -a must
# change no byte.  About 15 seconds.
load ../lib/common
load ntfs_helpers

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
WIN=$FSFORGE_TOP/tests/ntfs/lab/winshape.py

setup_file() {
	need_ntfs3g
	local d=$BATS_FILE_TMPDIR
	truncate -s 16M "$d/win.img"
	"$FSFORGE_BUILDDIR/mkfs/mkfs.ntfs" -q -F -c 4096 "$d/win.img"
	python3 "$WIN" "$d/win.img" > /dev/null
}

teardown() {
	if mountpoint -q "$BATS_TEST_TMPDIR/mnt"; then umount "$BATS_TEST_TMPDIR/mnt"; fi
}

@test "winshape: ntfsck -n and ntfs-3g accept the Windows-shaped volume" {
	need_sid
	run sid_ntfsck "$BATS_FILE_TMPDIR/win.img"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	local m=$BATS_TEST_TMPDIR/mnt
	mkdir -p "$m"
	ntfs-3g -o ro,show_sys_files "$BATS_FILE_TMPDIR/win.img" "$m"
	run ls -a "$m/\$Extend" "$m/\$Extend/\$RmMetadata" "$m/\$Extend/\$RmMetadata/\$TxfLog"
	local dos
	dos=$(getfattr --only-values -n system.ntfs_dos_name "$m/Program Files (x86)")
	umount "$m"
	[ "$status" -eq 0 ]
	for n in '$Deleted' '$ObjId' '$Quota' '$Reparse' '$RmMetadata' '$UsnJrnl' '$Repair' \
		'$Txf' '$TxfLog' '$Tops' '$TxfLog.blf' '$TxfLogContainer00000000000000000002'; do
		[[ $output == *"$n"* ]] || die "$n not listed"
	done
	[ "$dos" = PROGRA~2 ]
}

@test "winshape: -n finds nothing and -a changes no byte" {
	local img=$BATS_TEST_TMPDIR/v.img before
	cp --sparse=always "$BATS_FILE_TMPDIR/win.img" "$img"
	before=$(sha256sum < "$img")
	run "$FSCK" -n "$img"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	run "$FSCK" -a "$img"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(sha256sum < "$img")" = "$before" ] || die "-a changed the Windows-shaped volume"
}
