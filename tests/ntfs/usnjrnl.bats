#!/usr/bin/env bats
# $Extend/$UsnJrnl, the change journal (issue 11 item 2).  mkfs.ntfs and
# ntfs-3g make none, so tests/ntfs/usnjrnl_lab.py makes one as Windows
# keeps it: ntfs-3g writes the file (a resident $Max, a $J written only
# past a 64 KiB hole) and the lab moves it into $Extend as $UsnJrnl, fills
# $J's tail with nine USN_RECORD_V2 records (three per file, the third
# followed by a page's padding), $Max (32 MiB, 8 MiB, journal id
# 0x01DB0E0A12345678, lowest valid USN 0x10F38 = 69432) and each file's
# $STANDARD_INFORMATION USN; 60 older records fill $J from the hole to
# the first valid one.  The expectations are written by hand from
# that layout: the next USN (the end of $J) is 69432 + 3 * 64 + 8
# (padding) + 6 * 64 = 70016.  ntfsck -n (sid) must accept the volume
# before, and after a repair of each kind.  About 12 seconds.
load ../lib/common
load ntfs_helpers

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
LAB=$FSFORGE_TOP/tests/ntfs/usnjrnl_lab.py
JID=133716050355443320

setup_file() {
	need_ntfs3g
	local d=$BATS_FILE_TMPDIR m=$BATS_FILE_TMPDIR/mnt
	truncate -s 16M "$d/base.img"
	"$FSFORGE_BUILDDIR/mkfs/mkfs.ntfs" -q -F "$d/base.img"
	mkdir -p "$m"
	ntfs-3g -o streams_interface=windows "$d/base.img" "$m"
	echo a > "$m/a"
	mkdir "$m/d"
	echo bb > "$m/d/b"
	touch "$m/UsnJrnlX"
	head -c 32 /dev/zero > "$m/UsnJrnlX:\$Max"
	head -c 4608 /dev/zero | tr '\0' '\377' |
		dd of="$m/UsnJrnlX:\$J" bs=4096 seek=16 status=none
	stat -c %i "$m/UsnJrnlX" "$m/a" "$m/d/b" "$m/d" > "$d/recs"
	umount "$m"
	python3 "$LAB" "$d/base.img" make $(cat "$d/recs") > "$d/made"
	cut -d' ' -f1 "$d/made" > "$d/next"
	cut -d' ' -f2 "$d/made" > "$d/jsum"
}

# repaired IMG [SID]: -n sees the damage and writes nothing, one -a
# repairs (exit 1), -n is then clean, $J's bytes are as they were after
# the damage ($j, what the lab's damage printed); with SID, ntfsck
# agrees.  $state: $Max's fields and $J's size after it.
repaired() {
	local img=$1 sum
	sum=$(sha256sum < "$img")
	run "$FSCK" -n "$img"
	echo "$output"
	[ "$status" -eq 4 ]
	[ "$(sha256sum < "$img")" = "$sum" ]
	run "$FSCK" -a "$img"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"history is gone"* ]]
	run "$FSCK" -n "$img"
	echo "$output"
	[ "$status" -eq 0 ]
	state=$(python3 "$LAB" "$img" state)
	[ "${state##* }" = "$j" ]
	state=${state% *}
	[ -n "${2:-}" ] || return 0
	need_sid
	run sid_ntfsck "$img"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "the journal as made: its records, \$Max and the files' USNs; clean, -a writes nothing, ntfsck agrees" {
	local d=$BATS_FILE_TMPDIR img=$BATS_TEST_TMPDIR/v.img a b dir
	a=$(sed -n 2p "$d/recs") b=$(sed -n 3p "$d/recs") dir=$(sed -n 4p "$d/recs")
	[ "$(cat "$d/next")" = 70016 ]
	run python3 "$LAB" "$d/base.img" max
	[ "$output" = "33554432 8388608 $JID 69432 70016" ]
	run python3 "$LAB" "$d/base.img" records
	[ "$output" = "69432 $a 5 0x100 a
69496 $b $dir 0x100 b
69560 $dir 5 0x100 d
69632 $a 5 0x102 a
69696 $b $dir 0x102 b
69760 $dir 5 0x102 d
69824 $a 5 0x80000102 a
69888 $b $dir 0x80000102 b
69952 $dir 5 0x80000102 d" ]
	run python3 "$LAB" "$d/base.img" siusn "$b"
	[ "$output" = 69888 ]
	cp "$d/base.img" "$img"
	run "$FSCK" -n "$img"
	echo "$output"
	[ "$status" -eq 0 ]
	run "$FSCK" -a "$img"
	[ "$status" -eq 0 ]
	run cmp "$d/base.img" "$img"
	[ "$status" -eq 0 ]
	need_sid
	run sid_ntfsck "$img"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "a lowest valid USN in the sparse head (0) or at the first old record: clean, the scan starts after the hole" {
	local img=$BATS_TEST_TMPDIR/v.img low
	for low in 0 65536; do
		cp "$BATS_FILE_TMPDIR/base.img" "$img"
		python3 "$LAB" "$img" maxfield 3 "$low"
		run "$FSCK" -n "$img"
		echo "$output"
		[ "$status" -eq 0 ]
	done
}

@test "a damaged \$Max: rewritten, sizes kept, a new journal id, the lowest valid USN at \$J's end" {
	local img=$BATS_TEST_TMPDIR/v.img damage max delta id low size sid=sid j state
	for damage in "maxlen 24" "maxfield 3 69433" "maxfield 3 70024" "maxfield 0 0"; do
		cp "$BATS_FILE_TMPDIR/base.img" "$img"
		j=$(python3 "$LAB" "$img" $damage)
		repaired "$img" $sid
		sid=
		# $Max alone was written: $J as the lab made it
		[ "$j" = "$(cat "$BATS_FILE_TMPDIR/jsum")" ]
		echo "$damage: $state"
		read -r max delta id low size <<< "$state"
		[ "$max $delta $low $size" = "33554432 8388608 70016 70016" ]
		[ "$id" != "$JID" ]
	done
}

@test "a damaged record at \$J's end: the lowest valid USN moves past it, the journal id and \$J kept" {
	local img=$BATS_TEST_TMPDIR/v.img damage sid=sid j state
	for damage in "tail 0x18 1" "tail 0 12" "tail 4 9"; do
		cp "$BATS_FILE_TMPDIR/base.img" "$img"
		j=$(python3 "$LAB" "$img" $damage)
		repaired "$img" $sid
		sid=
		[ "$state" = "33554432 8388608 $JID 70016 70016" ]
	done
}

@test "no \$Max stream: reported, exit 4, nothing written" {
	local img=$BATS_TEST_TMPDIR/v.img sum
	cp "$BATS_FILE_TMPDIR/base.img" "$img"
	python3 "$LAB" "$img" maxname '$Mbx'
	sum=$(sha256sum < "$img")
	run "$FSCK" -a "$img"
	echo "$output"
	[ "$status" -eq 4 ]
	[[ "$output" == *'$UsnJrnl'*"cannot be repaired (it has no \$Max stream)"* ]]
	[ "$(sha256sum < "$img")" = "$sum" ]
}

# The journal with an attribute list, as Windows leaves one when $J has
# many runs (the lab's listed: $J's sparse head in the base record, its
# allocated rest and $Max in an extension record; before: not judged,
# -n exit 0 whatever the damage).  Clean as made (ntfsck -n agrees); a
# damaged $Max and a damaged record at $J's end found through the list
# and repaired in the extension record as above.
@test "a journal with an attribute list: clean; \$Max and \$J's tail judged and repaired through it" {
	local img=$BATS_TEST_TMPDIR/v.img listed=$BATS_TEST_TMPDIR/l.img damage sid=sid j state
	local max delta id low size
	cp "$BATS_FILE_TMPDIR/base.img" "$listed"
	python3 "$LAB" "$listed" listed
	# the lab's own walker reads the same journal through the list
	run python3 "$LAB" "$listed" state
	[ "$output" = "33554432 8388608 $JID 69432 70016 $(cat "$BATS_FILE_TMPDIR/jsum")" ]
	run "$FSCK" -n "$listed"
	echo "$output"
	[ "$status" -eq 0 ]
	for damage in "maxfield 3 69433" "maxlen 24"; do
		cp "$listed" "$img"
		j=$(python3 "$LAB" "$img" $damage)
		repaired "$img" $sid
		sid=
		[ "$j" = "$(cat "$BATS_FILE_TMPDIR/jsum")" ]
		read -r max delta id low size <<< "$state"
		[ "$max $delta $low $size" = "33554432 8388608 70016 70016" ]
		[ "$id" != "$JID" ]
	done
	cp "$listed" "$img"
	j=$(python3 "$LAB" "$img" tail 0x18 1)
	repaired "$img"
	[ "$state" = "33554432 8388608 $JID 70016 70016" ]
	need_sid
	run sid_ntfsck "$listed"
	echo "$output"
	[ "$status" -eq 0 ]
}

# The list names the extension record holding $Max and $J's tail with a
# sequence number the record no longer has (its header's bumped by one, as
# after the record was freed and used again): the record is not taken for
# the journal's through that entry (-n names the stale sequence; it used
# to be read as the journal's all the same), the list is rebuilt by -a
# from the records that point back at the file, and ntfsck -n agrees.
@test "a journal list entry naming its extension record with a stale sequence number: not followed; -a rebuilds the list, converged" {
	local img=$BATS_TEST_TMPDIR/v.img sum x seq
	need_sid
	cp "$BATS_FILE_TMPDIR/base.img" "$img"
	python3 "$LAB" "$img" listed
	read -r x seq < <(python3 - "$img" "$FSFORGE_TOP/tests/ntfs/lab" "$(head -1 "$BATS_FILE_TMPDIR/recs")" <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[2])
import ntfsparse as P
img = bytearray(open(sys.argv[1], "rb").read())
g = P.Geometry(img)
for n, at, rec in P.records(img, g):
    if struct.unpack_from("<Q", rec, 0x20)[0] & 0xFFFFFFFFFFFF == int(sys.argv[3]):
        seq = struct.unpack_from("<H", img, at + 0x10)[0] + 1
        struct.pack_into("<H", img, at + 0x10, seq)
        print(n, seq)
open(sys.argv[1], "r+b").write(img)
PY
)
	[ -n "$x" ] || die "no extension record"
	sum=$(sha256sum < "$img")
	run "$FSCK" -n "$img"
	echo "$output"
	[ "$status" -eq 4 ]
	[[ "$output" == *"MFT record $x has sequence number $seq, not $((seq - 1))"* ]] || die "stale sequence not seen"
	# one problem, the list, as -a then fixes: the journal behind it
	# is not a second one
	[[ "$output" == *"problems: 1 found, 0 fixed, 1 left"* ]] || die "-n's count"
	[ "$(sha256sum < "$img")" = "$sum" ] || die "-n wrote"
	run "$FSCK" -a "$img"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"attribute list is wrong"*REBUILT* ]]
	[[ "$output" == *"problems: 1 found, 1 fixed, 0 left"* ]] || die "-a's count"
	repair_converged "$FSCK" "$img" -a
	run python3 "$LAB" "$img" state
	[ "$output" = "33554432 8388608 $JID 69432 70016 $(cat "$BATS_FILE_TMPDIR/jsum")" ]
}
