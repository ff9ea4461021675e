#!/usr/bin/env bats
# A directory index rebuild (pass 3) that fails: the fixes answered
# earlier that the rebuild was to make count as failed (left), not as
# fixed, whatever their prompt ("Fix", "Reconnect") or the object they
# name; the failure itself is said once and is no problem more.  The
# failure is a write error injected by strace (-e inject=pwrite64:
# error=EIO) into the one pwrite(2) that writes the directory's record,
# found in a trace of the same repair on a copy.  Expectations are the
# counts the damage calls for (hand-written), -n afterwards finding the
# damage still there, and a repair without the error converging (ntfsck
# -n of the sid tree clean).
load ../lib/common
load ntfs_helpers

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
PATCH="python3 $FSFORGE_TOP/tests/ntfs/ntfs_patch.py"
LAB=$FSFORGE_TOP/tests/ntfs/lab

setup() {
	cd_tmp
	need_ntfs3g
	need_sid
	command -v strace >/dev/null || need_or_skip "strace missing"
	mkdir -p mnt
	truncate -s 16M image
	"$MKFS_NTFS" -q -F image
	ntfs-3g image mnt
	mkdir mnt/d
	for i in 1 2 3 4 5; do echo "$i" > "mnt/d/f$i"; done
	D=$(stat -c %i mnt/d) F2=$(stat -c %i mnt/d/f2)
	umount mnt
}
teardown() { mountpoint -q mnt 2>/dev/null && umount mnt; return 0; }

# LeakSanitizer cannot run under ptrace: an ASan build under strace
# checks everything but leaks
traced() { ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace "$@"; }

# rec_off IMG RECORD: the byte offset of MFT record RECORD
rec_off() {
	python3 - "$LAB" "$@" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import ntfsparse as P
print(P.Geometry(open(sys.argv[2], "rb").read()).rec_off(int(sys.argv[3])))
PY
}

# write_number IMG OFFSET NTH: which pwrite(2) of -a on a copy of IMG is
# the NTH one at OFFSET (1-based)
write_number() {
	cp "$1" traced.img
	traced -o trace.log -e trace=pwrite64 "$FSCK" -a traced.img >/dev/null
	awk -v off="$2" -v nth="$3" '/^pwrite64/ { n++; sub(/\).*/, ""); if ($NF == off && ++k == nth) { print n; exit } }' trace.log
}

@test "a rebuild that fails: the \"Fix\" it was to make is left, exit 4 not 5, not a byte written" {
	local k sum
	# the key of f3's entry names /d with another sequence number: the
	# fix is the rebuild of /d (prompt Fix, not Rebuild)
	$PATCH image keyseq "$D" f3 7
	k=$(write_number image "$(rec_off image "$D")" 1)
	[ -n "$k" ] || die "no write of record $D"
	sum=$(sha256sum < image)
	run traced -o /dev/null -e trace=pwrite64 -e inject=pwrite64:error=EIO:when="$k" "$FSCK" -a image
	[ "$status" -eq 4 ] || die "-a with the write failing: exit $status: $output"
	[[ $output == *"(/d): directory index cannot be rebuilt (writing the record failed)"* ]] || die "$output"
	[[ $output == *"problems: 1 found, 0 fixed, 1 left"* ]] || die "$output"
	[ "$(sha256sum < image)" = "$sum" ] || die "bytes written"
	run "$FSCK" -n image
	[ "$status" -eq 4 ] || die "-n after: exit $status: $output"
	[[ $output == *'"f3": its index entry names the directory with sequence number 7'* ]] || die "$output"
	run "$FSCK" -a image
	[ "$status" -eq 1 ] || die "-a: exit $status: $output"
	run "$FSCK" -n image
	[ "$status" -eq 0 ] || die "-n after -a: exit $status: $output"
}

@test "a /lost+found rebuild that fails: the orphan's reconnection counts failed, the other fixes stay fixed" {
	local k lf
	# f2 in no directory: its name's parent is a record not in use and
	# /d's entry for it is gone; it goes to a new /lost+found
	$PATCH image rmentry "$D" f2
	$PATCH image parent "$F2" 40
	cp image traced0.img
	"$FSCK" -a traced0.img >/dev/null || true
	ntfs-3g -o ro traced0.img mnt
	lf=$(stat -c %i mnt/lost+found)
	umount mnt
	# /lost+found's record: written when it is made, then by its rebuild
	k=$(write_number image "$(rec_off image "$lf")" 2)
	[ -n "$k" ] || die "no second write of record $lf"
	run traced -o /dev/null -e trace=pwrite64 -e inject=pwrite64:error=EIO:when="$k" "$FSCK" -a --json image
	# the orphan's name was written, /d's and the root's indexes and the
	# $MFT bitmap were: 1 (fixed) | 4 (left)
	[ "$status" -eq 5 ] || die "-a with the write failing: exit $status: $output"
	python3 - "$output" <<'PY' || die "$output"
import json, sys
r = json.loads(sys.argv[1][sys.argv[1].index("{"):])
acts = {(p["id"], p["action"]) for p in r["problems"]}
assert ("file_orphaned", "fix failed") in acts, acts
assert ("index_rebuild_failed_fixes_left", "info") in acts, acts
assert not any(a == "fixed" and i in ("file_orphaned", "index_rebuild_failed") for i, a in acts), acts
assert r["left"] == 1 and r["found"] == r["fixed"] + r["left"], r
PY
	run "$FSCK" -n image
	[ "$status" -eq 4 ] || die "-n after: exit $status: $output"
	[[ $output == *"(/lost+found): \"#$F2\" (MFT record $F2) has no entry"* ]] || die "$output"
	run "$FSCK" -a image
	[ "$status" -eq 1 ] || die "-a: exit $status: $output"
	repair_converged "$FSCK" image -a
	ntfs-3g -o ro image mnt
	[ "$(cat "mnt/lost+found/#$F2")" = 2 ] || die "f2 not in /lost+found"
	umount mnt
}

@test "a view index rebuild that fails: its REBUILT taken back once, 1 found 0 fixed 1 left, exit 4, not a byte written" {
	local sum damage="python3 $FSFORGE_TOP/tests/ntfs/emptyleaf_damage.py"
	# $ObjId:$O of 100 ids (ntfs-3g) given an empty leaf: its rebuild
	# is the one repair, so -a's first pwrite(2) is the rebuild's
	ntfs-3g image mnt
	$damage ids "$PWD/mnt" || die "setting the object ids failed"
	umount mnt
	run $damage image '$ObjId' mid '$O'
	[ "$status" -eq 0 ] || die "damage: $output"
	sum=$(sha256sum < image)
	run traced -o /dev/null -e trace=pwrite64 -e inject=pwrite64:error=EIO:when=1 "$FSCK" -a image
	[ "$status" -eq 4 ] || die "-a with the write failing: exit $status: $output"
	[[ $output == *'$ObjId:$O: index cannot be rebuilt (writing the index blocks failed): the fixes above that it was to make are left'* ]] || die "$output"
	[[ $output == *"problems: 1 found, 0 fixed, 1 left"* ]] || die "$output"
	[ "$(sha256sum < image)" = "$sum" ] || die "bytes written"
	run "$FSCK" -n image
	[ "$status" -eq 4 ] || die "-n after: exit $status: $output"
	[[ $output == *"leaf with no entry"* ]] || die "$output"
	run "$FSCK" -a image
	[ "$status" -eq 1 ] || die "-a: exit $status: $output"
	repair_converged "$FSCK" image -a
}
