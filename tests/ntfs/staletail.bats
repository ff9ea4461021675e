#!/usr/bin/env bats
# A stale $MFT record 0 (the lab's kind stale, o-rich4k-s4999: the write
# of record 0 after ntfs-3g grew the MFT lost, or an old copy written back
# over it): its runlist ends before the clusters the MFT grew into, so the
# newest files' records are past its allocation.  They are FILE records
# numbered in sequence right after its last run: the run grows over them
# and the files stay.  Expectations: every file as ntfs-3g read it before
# the damage (sha256), ntfsck -n (sid) clean, -n clean after one -a.
load ../lib/common
load ntfs_helpers

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
LAB=$FSFORGE_TOP/tests/ntfs/lab

# rec0 CMD IMG [FILE]: info (records $MFT's $DATA allocates, bits of its
# $BITMAP), save record 0's raw bytes to FILE, or restore them from FILE
rec0() {
	python3 - "$LAB" "$@" <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[1])
import ntfsparse as P
cmd, path = sys.argv[2], sys.argv[3]
img = bytearray(open(path, "rb").read())
g = P.Geometry(img)
at = g.mft_lcn * g.cs
if cmd == "save":
    open(sys.argv[4], "wb").write(img[at:at + g.rs])
elif cmd == "restore":
    img[at:at + g.rs] = open(sys.argv[4], "rb").read()
    open(path, "r+b").write(img)
else:
    rec = P.unfix(img[at:at + g.rs])
    sz = {t: struct.unpack_from("<QQ", rec, o + 0x28)
          for o, t, name, nr in P.attrs(rec) if nr and t in (0x80, 0xB0) and name == ""}
    print(sz[0x80][0] // g.rs, sz[0xB0][1] * 8)
PY
}

setup_file() {
	need_ntfs3g
	local d=$BATS_FILE_TMPDIR m=$BATS_FILE_TMPDIR/mnt i
	truncate -s 32M "$d/v.img"
	"$FSFORGE_BUILDDIR/mkfs/mkfs.ntfs" -q -F "$d/v.img"
	mkdir -p "$m"
	ntfs-3g "$d/v.img" "$m"
	mkdir "$m/a"
	for i in $(seq 1 40); do echo "file $i" > "$m/a/f$i"; done
	umount "$m"
	rec0 save "$d/v.img" "$d/old0"
	rec0 info "$d/v.img" > "$d/old.info"
	# the MFT grows: the last files' records are past the old allocation
	ntfs-3g "$d/v.img" "$m"
	mkdir "$m/b"
	for i in $(seq 1 22); do head -c $((i * 37 + 1)) /dev/urandom > "$m/b/g$i"; done
	stat -c %i "$m"/b/* | sort -n | tail -n 1 > "$d/maxino"
	(cd "$m" && find . -type f | sort | xargs sha256sum) > "$d/sums"
	umount "$m"
	rec0 info "$d/v.img" > "$d/new.info"
}

@test "the undamaged volume checks clean; the old record 0 allocates fewer records than are in use" {
	local d=$BATS_FILE_TMPDIR old oldbm new
	run "$FSCK" -n "$d/v.img"
	[ "$status" -eq 0 ]
	read -r old oldbm < "$d/old.info"
	read -r new _ < "$d/new.info"
	echo "old $old records ($oldbm bitmap bits), new $new, highest file record $(cat "$d/maxino")"
	[ "$old" -lt "$new" ]
	[ "$(cat "$d/maxino")" -ge "$old" ]
	# (the old $BITMAP still covers them: its own size is not at stake here)
	[ "$(cat "$d/maxino")" -lt "$oldbm" ]
}

@test "a stale record 0 written back: its last run grows over the records in sequence after it, no file lost" {
	local d=$BATS_FILE_TMPDIR img=$BATS_TEST_TMPDIR/v.img m
	cp "$d/v.img" "$img"
	rec0 restore "$img" "$d/old0"
	run "$FSCK" -a "$img"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"more records follow them in sequence"* ]]
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
