#!/usr/bin/env bats
# An extension record holding a middle extent of a file's $DATA lost
# (zeroed), as in the rich lab base's t-rich4k-alist-runs-ext-zeroed: the
# attribute list is rebuilt without it, and the lost VCNs become a hole at
# the head of the next extent, so the rest of the file stays at its
# offsets with its size kept (ntfsck then finds the highest VCN right).
# Expectations: the file as ntfs-3g read it before the damage, the lost
# range (the zeroed extent's VCNs, read by the lab's own parser before
# the damage) reading as zeros, everything else byte for byte; ntfsck -n
# (sid) clean.
load ../lib/common
load ntfs_helpers

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
LAB=$FSFORGE_TOP/tests/ntfs/lab

# extents IMG RECORD: "record lowest highest" of each $DATA extent held
# by an extension record of base RECORD; with ZERO, that record zeroed
extents() {
	python3 - "$LAB" "$@" <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[1])
import ntfsparse as P
img = bytearray(open(sys.argv[2], "rb").read())
g, base = P.Geometry(img), int(sys.argv[3])
for n in range(base + 1, g.nrecords):
    at = g.rec_off(n)
    rec = P.unfix(img[at:at + g.rs])
    if rec[:4] != b"FILE" or struct.unpack_from("<Q", rec, 0x20)[0] & 0xffffffffffff != base:
        continue
    for o, t, name, nr in P.attrs(rec):
        if t == 0x80 and name == "" and nr:
            print(n, *struct.unpack_from("<qq", rec, o + 0x10))
    if len(sys.argv) > 4 and n == int(sys.argv[4]):
        img[at:at + g.rs] = bytes(g.rs)
        open(sys.argv[2], "r+b").write(img)
PY
}

setup_file() {
	need_ntfs3g
	local d=$BATS_FILE_TMPDIR m
	truncate -s 16M "$d/base.img"
	"$FSFORGE_BUILDDIR/mkfs/mkfs.ntfs" -q -F "$d/base.img"
	m=$d/mnt
	mkdir -p "$m"
	ntfs-3g "$d/base.img" "$m"
	echo hello > "$m/hello.txt"
	# 800 clusters, one of data every other one: 800 runs, the runlist in
	# several extents in extension records
	python3 - "$m/shredded" <<'PY'
import os, sys
cs = os.statvfs(os.path.dirname(sys.argv[1])).f_bsize
with open(sys.argv[1], "wb") as f:
    for i in range(400):
        f.seek(2 * i * cs)
        f.write(bytes([i % 251 + 1]) * cs)
    f.truncate(800 * cs)
PY
	stat -c %i "$m/shredded" > "$d/ino"
	cp "$m/shredded" "$d/shredded"
	sha256sum < "$m/hello.txt" > "$d/hello.sum"
	umount "$m"
}

@test "the undamaged volume checks clean; the file has at least 3 extents" {
	run "$FSCK" -n "$BATS_FILE_TMPDIR/base.img"
	[ "$status" -eq 0 ]
	run extents "$BATS_FILE_TMPDIR/base.img" "$(cat "$BATS_FILE_TMPDIR/ino")"
	echo "$output"
	[ "${#lines[@]}" -ge 2 ]
}

@test "a middle extent's record zeroed: the lost VCNs become a hole, the rest of the file at its offsets" {
	local img=$BATS_TEST_TMPDIR/v.img ino rec lo hi cs m
	ino=$(cat "$BATS_FILE_TMPDIR/ino")
	cp "$BATS_FILE_TMPDIR/base.img" "$img"
	run extents "$img" "$ino"
	# the first extension extent: the base record holds VCN 0 on, a later
	# extent follows it
	[ "${#lines[@]}" -ge 2 ]
	read -r rec lo hi <<< "${lines[0]}"
	[ "$lo" -gt 0 ]
	run extents "$img" "$ino" "$rec"
	run "$FSCK" -a "$img"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"(/shredded): attribute 0x80: clusters $lo-$hi (VCNs) were in a lost extent; they become a hole"* ]]
	run "$FSCK" -n "$img"
	echo "$output"
	[ "$status" -eq 0 ]
	m=$(mount_ntfs3g "$img")
	cs=$(stat -f -c %S "$m")
	cp "$m/shredded" "$BATS_TEST_TMPDIR/after"
	sha256sum < "$m/hello.txt" > "$BATS_TEST_TMPDIR/hello.sum"
	umount "$m"
	cmp "$BATS_FILE_TMPDIR/hello.sum" "$BATS_TEST_TMPDIR/hello.sum"
	# size kept; before and after the lost range byte for byte; zeros in it
	[ "$(stat -c %s "$BATS_TEST_TMPDIR/after")" = "$(stat -c %s "$BATS_FILE_TMPDIR/shredded")" ]
	cmp -n $((lo * cs)) "$BATS_FILE_TMPDIR/shredded" "$BATS_TEST_TMPDIR/after"
	cmp -i $(((hi + 1) * cs)) "$BATS_FILE_TMPDIR/shredded" "$BATS_TEST_TMPDIR/after"
	cmp -n $(((hi + 1 - lo) * cs)) <(tail -c +$((lo * cs + 1)) "$BATS_TEST_TMPDIR/after") /dev/zero
	need_sid
	run sid_ntfsck "$img"
	echo "$output"
	[ "$status" -eq 0 ]
}
