#!/usr/bin/env bats
# A stale $MFT record 0 (the lab's kind stale, o-rich4k-s4999: the write
# of record 0 after ntfs-3g grew the MFT lost, or an old copy written back
# over it): its runlist ends before the clusters the MFT grew into, so the
# newest files' records are past its allocation.  They are FILE records
# numbered in sequence right after its last run: the run grows over them
# and the files stay; when record 0 is older than the MFT bitmap's
# growth too (o-rich4k-s1981), the bitmap's size grows with it.  That is
# when the old copy is in both $MFT and $MFTMirr; when only $MFT's is old,
# the newer mirror copy is taken (0x010072).
# Expectations: every file as ntfs-3g read it before
# the damage (sha256), ntfsck -n (sid) clean, -n clean after one -a.
load ../lib/common
load ntfs_helpers

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
LAB=$FSFORGE_TOP/tests/ntfs/lab

# rec0 CMD IMG [FILE]: info (records $MFT's $DATA allocates, bits of its
# $BITMAP), save record 0's raw bytes to FILE (and the first cluster of
# its $BITMAP to FILE.bm), or restore them from FILE (restore: $MFT's copy
# only, the mirror keeps the newer one; restore-both: $MFT's and
# $MFTMirr's, an old copy of both written back; restore-bm: $MFT's copy
# and the $MFT bitmap's cluster, a region of both restored from a backup)
rec0() {
	python3 - "$LAB" "$@" <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[1])
import ntfsparse as P
cmd, path = sys.argv[2], sys.argv[3]
img = bytearray(open(path, "rb").read())
g = P.Geometry(img)
at = g.mft_lcn * g.cs
rec = P.unfix(img[at:at + g.rs])
bm = [P.runlist(rec, o)[0][0] * g.cs for o, t, name, nr in P.attrs(rec) if nr and t == 0xB0][0]
if cmd == "save":
    open(sys.argv[4], "wb").write(img[at:at + g.rs])
    open(sys.argv[4] + ".bm", "wb").write(img[bm:bm + g.cs])
elif cmd in ("restore", "restore-both", "restore-bm"):
    old = open(sys.argv[4], "rb").read()
    img[at:at + g.rs] = old
    if cmd == "restore-bm":
        img[bm:bm + g.cs] = open(sys.argv[4] + ".bm", "rb").read()
    if cmd == "restore-both":
        mat = g.mirr_lcn * g.cs
        img[mat:mat + g.rs] = old
    open(path, "r+b").write(img)
else:
    sz = {t: struct.unpack_from("<QQ", rec, o + 0x28)
          for o, t, name, nr in P.attrs(rec) if nr and t in (0x80, 0xB0) and name == ""}
    print(sz[0x80][0] // g.rs, sz[0xB0][1] * 8)
PY
}

# make_vol NAME N: a volume with 40 files, its record 0 saved, then N
# more files (the MFT grows past the old record 0's allocation)
make_vol() {
	local d=$BATS_FILE_TMPDIR/$1 m=$BATS_FILE_TMPDIR/mnt i
	mkdir -p "$d" "$m"
	truncate -s 32M "$d/v.img"
	"$FSFORGE_BUILDDIR/mkfs/mkfs.ntfs" -q -F "$d/v.img"
	ntfs-3g "$d/v.img" "$m"
	mkdir "$m/a"
	for i in $(seq 1 40); do echo "file $i" > "$m/a/f$i"; done
	umount "$m"
	rec0 save "$d/v.img" "$d/old0"
	rec0 info "$d/v.img" > "$d/old.info"
	ntfs-3g "$d/v.img" "$m"
	mkdir "$m/b"
	for i in $(seq 1 "$2"); do head -c $((i * 37 + 1)) /dev/urandom > "$m/b/g$i"; done
	stat -c %i "$m"/b/* | sort -n | tail -n 1 > "$d/maxino"
	(cd "$m" && find . -type f | sort | xargs sha256sum) > "$d/sums"
	umount "$m"
	rec0 info "$d/v.img" > "$d/new.info"
}

# codes JSON [ACTION]: the problem codes of a --json report, one a line
# in order, only those with ACTION when given
codes() {
	python3 -c 'import json, sys
for p in json.loads(sys.argv[1])["problems"]:
    if len(sys.argv) < 3 or p["action"] == sys.argv[2]:
        print(p["code"])' "$@"
}

setup_file() {
	need_ntfs3g
	make_vol near 22
	make_vol far 150
}

# stale_back NAME HOW WANT: the old record 0 written back on a copy of
# NAME (rec0 HOW), one -a that says WANT, then every file as before, -n
# clean, ntfsck -n clean
stale_back() {
	local d=$BATS_FILE_TMPDIR/$1 img=$BATS_TEST_TMPDIR/v.img m
	cp "$d/v.img" "$img"
	rec0 "$2" "$img" "$d/old0"
	run "$FSCK" -a "$img"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$3"* ]]
	run "$FSCK" -n "$img"
	echo "$output"
	[ "$status" -eq 0 ]
	m=$(mount_ntfs3g "$img")
	run sh -c "cd '$m' && sha256sum -c --quiet '$d/sums'"
	umount "$m"
	echo "$output"
	[ "$status" -eq 0 ]
	need_sid
	run sid_ntfsck "$img"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "the undamaged volumes check clean; the old record 0 allocates fewer records than are in use" {
	local v old oldbm new
	for v in near far; do
		run "$FSCK" -n "$BATS_FILE_TMPDIR/$v/v.img"
		[ "$status" -eq 0 ]
		read -r old oldbm < "$BATS_FILE_TMPDIR/$v/old.info"
		read -r new _ < "$BATS_FILE_TMPDIR/$v/new.info"
		echo "$v: old $old records ($oldbm bitmap bits), new $new, highest file record $(cat "$BATS_FILE_TMPDIR/$v/maxino")"
		[ "$old" -lt "$new" ]
		[ "$(cat "$BATS_FILE_TMPDIR/$v/maxino")" -ge "$old" ]
	done
	# near: the old $BITMAP still covers the records in use; far: not
	[ "$(cat "$BATS_FILE_TMPDIR/near/maxino")" -lt "$(cut -d' ' -f2 "$BATS_FILE_TMPDIR/near/old.info")" ]
	[ "$(cat "$BATS_FILE_TMPDIR/far/maxino")" -ge "$(cut -d' ' -f2 "$BATS_FILE_TMPDIR/far/old.info")" ]
}

@test "a stale record 0 written back to both copies: its last run grows over the records in sequence after it, no file lost" {
	stale_back near restore-both "more records follow them in sequence"
}

@test "a stale record 0 in both copies, older than the MFT bitmap's size: the bitmap's size grows with the run, no file lost" {
	stale_back far restore-both "more records follow them in sequence"
}

@test "a stale record 0 in \$MFT only: the newer \$MFTMirr copy is taken, no file lost" {
	stale_back far restore "older than its \$MFTMirr copy"
}

# o-rich4k-g0: record 0 and the $MFT bitmap restored from an older backup
# ($MFTMirr keeps the newer record 0).  -a takes the copy, then finds the
# newer records marked free; -n, declining the copy, went on comparing the
# old record 0 with it ("$MFTMirr copy differs", which -a never has) and
# did not see the bitmap.  -n must report what -a repairs, code for code.
@test "a stale record 0 and \$MFT bitmap in \$MFT only: -n reports what -a repairs (the copy taken, the bitmap), not the mirror differing" {
	local d=$BATS_FILE_TMPDIR/far img=$BATS_TEST_TMPDIR/v.img
	cd "$BATS_TEST_TMPDIR"
	cp "$d/v.img" "$img"
	rec0 restore-bm "$img" "$d/old0"
	run "$FSCK" -n --json "$img"
	[ "$status" -eq 4 ] || die "-n exit $status"
	codes "$(grep '^{"device"' <<< "$output")" > n.codes
	run "$FSCK" -a --json "$img"
	[ "$status" -eq 1 ] || die "-a exit $status"
	codes "$(grep '^{"device"' <<< "$output")" fixed > a.codes
	cat n.codes
	diff -u a.codes n.codes || die "-n and -a tell different stories"
	grep -qx 0x040002 a.codes || die "-a did not fix the \$MFT bitmap"
	run "$FSCK" -n "$img"
	[ "$status" -eq 0 ] || { echo "$output"; die "-n after -a: exit $status"; }
}

# Not a tail: a volume formatted again (quickly) over an older one with
# the same geometry has the old MFT's records right after its own,
# numbered in sequence and flagged in use; its fresh MFT bitmap has no
# bit for them (second reader's scenario, session 9).  Before the fix
# -n reported "637 more records follow them" and -a grew $MFT over them.
@test "a volume formatted again over an older one: the old MFT's records after the new one are not taken as its tail" {
	local m=$BATS_TEST_TMPDIR/mnt v=$BATS_TEST_TMPDIR/v.img i before
	mkdir -p "$m"
	truncate -s 32M "$v"
	"$FSFORGE_BUILDDIR/mkfs/mkfs.ntfs" -q -F "$v"
	ntfs-3g "$v" "$m"
	mkdir "$m/b"
	for i in $(seq 1 600); do echo "x $i" > "$m/b/g$i"; done
	umount "$m"
	"$FSFORGE_BUILDDIR/mkfs/mkfs.ntfs" -q -F "$v"
	before=$(sha256sum < "$v")
	run "$FSCK" -n "$v"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"problems: 0 found"* ]]
	run "$FSCK" -a "$v"
	[ "$status" -eq 0 ]
	[ "$(sha256sum < "$v")" = "$before" ]
	need_sid
	run sid_ntfsck "$v"
	echo "$output"
	[ "$status" -eq 0 ]
}
