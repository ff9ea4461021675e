#!/usr/bin/env bats
# $Extend/$ObjId's $O index against the files' $OBJECT_ID (issue 11).
# ntfs-3g writes the object id alone (16 bytes) into the file and keeps
# the birth ids only in the $O entry, so the entry's data must survive a
# repair.  The expectations are the volumes ntfs-3g itself leaves: $O's
# entries (parsed by tests/ntfs/objid_damage.py over the lab's parser, not
# libntfs) after ntfs-3g deleted a file, removed an object id or set one,
# and ntfs-3g's system.ntfs_object_id views (id + birth ids) before the
# damage; ntfsck -n (sid) on the result.  About 15 seconds.
load ../lib/common
load ntfs_helpers

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
OBJID=$FSFORGE_TOP/tests/ntfs/objid_damage.py
A=0x00112233445566778899aabbccddeeff
# an id with birth volume, birth object and domain ids
B=0x0102030405060708090a0b0c0d0e0f10a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0

views() {
	local m f
	m=$(mount_ntfs3g "$1") || return 1
	for f in a b c; do
		echo "$f $(getfattr -e hex -n system.ntfs_object_id "$m/$f" 2>/dev/null | sed -n '2s/^[^=]*=//p')"
	done
	umount "$m"
}

setup_file() {
	need_ntfs3g
	local d=$BATS_FILE_TMPDIR m f
	truncate -s 16M "$d/base.img"
	"$FSFORGE_BUILDDIR/mkfs/mkfs.ntfs" -q -F "$d/base.img"
	m=$d/mnt
	mkdir -p "$m"
	ntfs-3g "$d/base.img" "$m"
	for f in a b c; do echo "$f" > "$m/$f"; done
	stat -c %i "$m/b" > "$d/b.rec"
	stat -c %i "$m/c" > "$d/c.rec"
	setfattr -n system.ntfs_object_id -v "$A" "$m/a"
	setfattr -n system.ntfs_object_id -v "$B" "$m/b"
	umount "$m"
	views "$d/base.img" > "$d/base.views"
	# what ntfs-3g leaves: b deleted; b's object id removed; c given one
	cp "$d/base.img" "$d/del.img"
	ntfs-3g "$d/del.img" "$m"
	rm "$m/b"
	umount "$m"
	cp "$d/base.img" "$d/rmx.img"
	ntfs-3g "$d/rmx.img" "$m"
	setfattr -x system.ntfs_object_id "$m/b"
	umount "$m"
	cp "$d/base.img" "$d/add.img"
	ntfs-3g "$d/add.img" "$m"
	setfattr -n system.ntfs_object_id -v 0xfeedfacefeedfacefeedfacefeedface "$m/c"
	umount "$m"
	for f in base del rmx add; do
		python3 "$OBJID" entries "$d/$f.img" > "$d/$f.want"
	done
}

# repaired IMG WANT: -n sees the damage and writes nothing, one -a
# repairs, -n is then clean; $O holds the entries of WANT (ntfs-3g's
# volume); ntfsck -n (sid) agrees
repaired() {
	local img=$1 sum
	run python3 "$OBJID" entries "$img"
	[ "$output" != "$(cat "$BATS_FILE_TMPDIR/$2.want")" ]
	sum=$(sha256sum < "$img")
	run "$FSCK" -n "$img"
	echo "$output"
	[ "$status" -eq 4 ]
	[ "$(sha256sum < "$img")" = "$sum" ]
	run "$FSCK" -a "$img"
	echo "$output"
	[ "$status" -eq 1 ]
	run "$FSCK" -n "$img"
	[ "$status" -eq 0 ]
	run python3 "$OBJID" entries "$img"
	[ "$output" = "$(cat "$BATS_FILE_TMPDIR/$2.want")" ]
	need_sid
	run sid_ntfsck "$img"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "the volumes ntfs-3g left check clean; \$O holds b's birth ids, its attribute only the id" {
	local f
	for f in base del rmx add; do
		run "$FSCK" -n "$BATS_FILE_TMPDIR/$f.img"
		[ "$status" -eq 0 ]
	done
	run grep -c "^b $B\$" "$BATS_FILE_TMPDIR/base.views"
	[ "$output" = 1 ]
	run grep -c a1a2a3a4 "$BATS_FILE_TMPDIR/base.want"
	[ "$output" = 1 ]
}

@test "an entry's key changed: the file's id indexed again with the entry's birth ids, the stale key removed" {
	local img=$BATS_TEST_TMPDIR/v.img
	cp "$BATS_FILE_TMPDIR/base.img" "$img"
	python3 "$OBJID" key "$img" "$(cat "$BATS_FILE_TMPDIR/b.rec")"
	repaired "$img" base
	run views "$img"
	[ "$output" = "$(cat "$BATS_FILE_TMPDIR/base.views")" ]
}

@test "an entry naming another record: it names the file holding the id again, birth ids kept" {
	local img=$BATS_TEST_TMPDIR/v.img
	cp "$BATS_FILE_TMPDIR/base.img" "$img"
	python3 "$OBJID" ref "$img" "$(cat "$BATS_FILE_TMPDIR/b.rec")" "$(cat "$BATS_FILE_TMPDIR/c.rec")"
	repaired "$img" base
	run views "$img"
	[ "$output" = "$(cat "$BATS_FILE_TMPDIR/base.views")" ]
}

@test "an entry whose file is deleted (record not in use): removed, as ntfs-3g's delete leaves \$O" {
	local img=$BATS_TEST_TMPDIR/v.img
	cp "$BATS_FILE_TMPDIR/del.img" "$img"
	python3 "$OBJID" splice "$BATS_FILE_TMPDIR/base.img" "$img"
	repaired "$img" del
}

@test "an entry whose file has no object id: removed, as ntfs-3g's removal leaves \$O" {
	local img=$BATS_TEST_TMPDIR/v.img
	cp "$BATS_FILE_TMPDIR/rmx.img" "$img"
	python3 "$OBJID" splice "$BATS_FILE_TMPDIR/base.img" "$img"
	repaired "$img" rmx
}

@test "a file's object id without an entry: added, as ntfs-3g's setting leaves \$O" {
	local img=$BATS_TEST_TMPDIR/v.img
	cp "$BATS_FILE_TMPDIR/add.img" "$img"
	python3 "$OBJID" splice "$BATS_FILE_TMPDIR/base.img" "$img"
	repaired "$img" add
}
