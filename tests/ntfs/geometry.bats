#!/usr/bin/env bats
# fsck.ntfs establishes where $MFT and $MFTMirr are before it writes
# anything (issue 10): a boot sector or runlist that points a few clusters
# off is repaired from what the records confirm, never followed; a volume
# larger than its device is checked, not refused; fresh volumes of every
# cluster size are clean.  Judged by things that are not fsck.ntfs: the
# volume as it was before the damage (bytes and a content manifest read
# through ntfs-3g), ntfsprogs-plus ntfsck -n (sid), ntfs-3g mounting it.
load ../lib/common

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
source "$FSFORGE_TOP/tests/ntfs/ntfs_helpers.bash"
DAMAGE=$FSFORGE_TOP/tests/ntfs/geometry-damage.py

# One populated 16 MiB volume for every damage: mkfs.ntfs, then ntfs-3g
# writes a directory of 50 files, a 2 MB file and one that fills the
# volume to within 1 MiB (so that data lies in the last 10%).
setup_file() {
	local m=$BATS_FILE_TMPDIR/mnt free
	cd "$BATS_FILE_TMPDIR" || return 1
	truncate -s 16M base.img
	"$MKFS_NTFS" -q -F base.img
	mkdir -p "$m"
	ntfs-3g base.img "$m"
	mkdir "$m/d"
	for i in $(seq 1 50); do head -c $((i * 997)) /dev/urandom > "$m/d/f$i"; done
	head -c 2000000 /dev/urandom > "$m/big"
	free=$(df -B1 --output=avail "$m" | tail -1)
	head -c $((free - 1048576)) /dev/urandom > "$m/fill"
	umount "$m"
	ntfs-3g -o ro base.img "$m"
	"$LIB/manifest" "$m" --no-xattrs > base.manifest
	umount "$m"
}

setup() { cd_tmp; }
teardown() { mountpoint -q mnt 2>/dev/null && umount mnt; return 0; }

need_sid() {
	chroot "$SID_ROOT" sh -c 'command -v ntfsck' >/dev/null 2>&1 ||
		die "sid tree with ntfsck missing: run tests/kernel/setup --sid"
}

# the volume's content through ntfs-3g, read-only
manifest_of() {
	mkdir -p mnt
	ntfs-3g -o ro "$1" mnt || return 1
	"$LIB/manifest" mnt --no-xattrs
	umount mnt
}

# Damage CASE; -n must find it and write nothing; -a must repair it (exit
# 1); then -n exits 0, a second -a changes no byte, ntfsck -n accepts the
# volume, and it is the volume from before the damage, byte for byte and
# file for file.  $repaired: what -a said.
damage_repair() {
	local case=$1 sum
	need_sid
	cp "$BATS_FILE_TMPDIR/base.img" image
	python3 "$DAMAGE" "$case" image
	sum=$(sha256sum < image)
	run "$FSCK" -n image
	[ "$status" -eq 4 ] || die "$case: -n exit $status: $output"
	[ "$(sha256sum < image)" = "$sum" ] || die "$case: -n wrote"
	run "$FSCK" -a image
	repaired=$output
	echo "$output"
	[ "$status" -eq 1 ] || die "$case: -a exit $status"
	run "$FSCK" -n image
	[ "$status" -eq 0 ] || die "$case: -n after -a exit $status: $output"
	sum=$(sha256sum < image)
	run "$FSCK" -a image
	[ "$status" -eq 0 ] || die "$case: second -a exit $status: $output"
	[ "$(sha256sum < image)" = "$sum" ] || die "$case: second -a wrote"
	sid_ntfsck image > ntfsck.log 2>&1 || { cat ntfsck.log; die "$case: ntfsck -n"; }
	manifest_of image > after.manifest || die "$case: ntfs-3g cannot mount it"
	diff -u "$BATS_FILE_TMPDIR/base.manifest" after.manifest || die "$case: content differs"
	cmp image "$BATS_FILE_TMPDIR/base.img" || die "$case: not the volume from before the damage"
}

@test "primary boot sector with its \$MFT cluster one off: rewritten from the backup, nothing else touched" {
	damage_repair mft-lcn-primary
	[[ $repaired == *"boot sector: boot sector is invalid"* ]]
}

# Both sectors lead to the same records; only the primary's jump is not
# NTFS's (ntfsck refuses such a volume: "Bad jump"), so the backup wins.
@test "primary boot sector with a jump instruction that is not NTFS's: rewritten from the backup" {
	damage_repair jump-primary
	[[ $repaired == *"boot sector is invalid (its jump instruction is EC 52 90)"* ]]
}

# The primary's reserved sector count (a field NTFS leaves zero) is 0xff:
# our check took it and copied it over the backup; ntfs-3g and ntfsck
# refuse it ("Reserved fields aren't zero"), so every file was lost
# (lab r-deep4k-1500013).  The backup, equally confirmed, wins.
@test "primary boot sector with a reserved field that is not zero: rewritten from the backup" {
	damage_repair reserved-primary
	[[ $repaired == *"boot sector is invalid (its byte 0x0e is 0xff, not the zero NTFS leaves there)"* ]]
}

# Both copies carry fields NTFS leaves zero (reserved sectors 0xff, and
# the backup's large sector count too): neither can win, so the chosen
# one's fields are set back to zero and written to both places; the
# volume is then the one from before, byte for byte.
@test "both boot sectors with reserved fields that are not zero: the fields set back to zero" {
	damage_repair reserved-both
	[[ $repaired == *"boot sector: byte 0x0e is 0xff in both copies"* ]]
}

@test "backup boot sector with its \$MFT cluster one off: rewritten from the primary" {
	damage_repair mft-lcn-backup
	[[ $repaired == *"backup boot sector is invalid"* ]]
}

# The primary claims 65536 more sectors than the device holds: that is
# not a truncated volume (the backup at the device's end fits and the
# records confirm it), so the primary is what is wrong.
@test "primary boot sector claiming a volume larger than the device: rewritten from the backup" {
	damage_repair size-primary
	[[ $repaired == *"boot sector: boot sector is invalid (its volume of 50331648 bytes is larger than the device)"* ]]
}

@test "primary boot sector with its \$MFTMirr cluster changed: rewritten from the backup" {
	damage_repair mirr-lcn-primary
	[[ $repaired == *"boot sector: boot sector is invalid"* ]]
}

@test "both boot sectors with the same wrong \$MFTMirr cluster: fixed to where \$MFTMirr's data is" {
	damage_repair mirr-lcn-both
	[[ $repaired == *"puts \$MFTMirr at cluster"* ]]
}

@test "record 0's \$DATA run moved 3 clusters: record 0 restored from \$MFTMirr, no mirror write elsewhere" {
	damage_repair mft-run-moved
	[[ $repaired == *"\$MFT record 0: record is unusable"* ]]
}

@test "record 0's self-reference changed: the boot sectors still confirmed, record 0 restored from \$MFTMirr" {
	damage_repair selfref-0
	[[ $repaired == *"\$MFT record 0: record is unusable (holds MFT record 4, not 0)"* ]]
}

@test "record 3's self-reference changed: geometry still confirmed, record 3 restored from \$MFTMirr" {
	damage_repair selfref-3
	[[ $repaired == *"MFT record 3: record is unusable (says it is MFT record 7)"* ]]
}

@test "\$MFT's first cluster overwritten by a misdirected write: confirmed by \$MFTMirr alone, records 0-3 restored" {
	damage_repair mft-head-misdirected
	[[ $repaired == *"MFT record 3: record is unusable"* ]]
}

# All of $MFT's first run zeroed, $MFTMirr intact: the mirror's records
# 0-3 are whole, but no record after them is at $MFT either, so nothing
# confirms that $MFT is there at all.  Rebuilding from the mirror alone
# would write records 0-3, a new root without children and a bitmap
# with every user cluster free: exit 4, not a byte written.
@test "\$MFT's whole first run zeroed, \$MFTMirr intact: refused, exit 4, not a byte written" {
	cp "$BATS_FILE_TMPDIR/base.img" image
	python3 "$DAMAGE" mft-zeroed image
	sum=$(sha256sum < image)
	run "$FSCK" -n image
	echo "$output"
	[ "$status" -eq 4 ] || die "-n exit $status"
	[[ $output == *"records 1-3 are not at \$MFT cluster"* ]] || die "-n: not refused"
	[ "$(sha256sum < image)" = "$sum" ] || die "-n wrote"
	run "$FSCK" -a image
	echo "$output"
	[ "$status" -eq 4 ] || die "-a exit $status"
	[[ $output == *"nothing was written"* ]] || die "-a: not refused"
	[ "$(sha256sum < image)" = "$sum" ] || die "-a wrote"
}

@test "record 1's \$DATA run moved 3 clusters: record 1 restored, boot sectors untouched" {
	damage_repair mirr-run-moved
	[[ $repaired == *"MFT record 1: record is unusable"* ]]
}

@test "both boot sectors with the same wrong \$MFT cluster: fixed to where \$MFTMirr's record 0 and the records agree" {
	damage_repair mft-lcn-both
	[[ $repaired == *"puts \$MFT at cluster 4, its records are at cluster 3"* ]]
}

# Both boot sectors put $MFT on record 4 and the mirror's record 0 is
# gone: nothing confirms where $MFT is, so the geometry is unknown and
# nothing may be written: exit 4, the image unchanged by -n and by -a.
@test "both boot sectors wrong about \$MFT and no mirror copy of record 0: reported, exit 4, not a byte written" {
	cp "$BATS_FILE_TMPDIR/base.img" image
	python3 "$DAMAGE" mft-lcn-both-no-mirror image
	sum=$(sha256sum < image)
	run "$FSCK" -n image
	[ "$status" -eq 4 ]
	[[ $output == *"\$MFT: location is not confirmed"* ]]
	run "$FSCK" -a image
	[ "$status" -eq 4 ]
	[[ $output == *"nothing was written"* ]]
	[ "$(sha256sum < image)" = "$sum" ]
}

# The last 10% cut off: the backup boot sector and the tail of "fill" are
# gone.  That cannot be repaired (exit 4) and nothing else is wrong, so
# neither -n nor -a writes a byte or grows the image; every file whose
# clusters all lie on what is left reads back as before (ntfs-3g mounts
# such a volume read-only).
@test "truncated image (last 10% cut): checked, the missing tail reported, nothing written" {
	cp "$BATS_FILE_TMPDIR/base.img" image
	python3 "$DAMAGE" truncated image
	size=$(stat -c %s image)
	sum=$(sha256sum < image)
	run "$FSCK" -n image
	[ "$status" -eq 4 ]
	[[ $output == *"bytes are missing"* ]]
	[ "$(sha256sum < image)" = "$sum" ]
	run "$FSCK" -a image
	[ "$status" -eq 4 ]
	[[ $output == *"bytes are missing"* ]]
	[ "$(stat -c %s image)" -eq "$size" ]
	[ "$(sha256sum < image)" = "$sum" ]
	# the files with data past the cut, found by an independent parser
	python3 "$DAMAGE" past-end "$BATS_FILE_TMPDIR/base.img" "$size" > lost
	[ "$(cat lost)" = fill ]
	grep -v -e '^fill	' "$BATS_FILE_TMPDIR/base.manifest" > want
	manifest_of image | grep -v -e '^fill	' > got
	diff -u want got
	[ "$(wc -l < got)" -ge 100 ]
}

# Cut inside the last MFT record in use (the lab's truncate.py, case
# mfttail): a file of 121 names keeps most of them in extension records
# and its attribute list out of its record, both past the cut.  They are
# unknown, not wrong: -a rebuilt the list, counted 118 links, cleared 19
# extension records, and wrote $Secure's default descriptors (a write
# past the end); now it writes no byte, the truncation and what it hides
# reported (exit 4), as in lab u-deep4k-mfttail.
@test "truncated inside the MFT: an attribute list, extension records and \$SDS past the end are left as they are, nothing written" {
	local m=mnt
	truncate -s 16M image
	"$MKFS_NTFS" -q -F image
	mkdir -p $m
	ntfs-3g image $m
	mkdir $m/d $m/alist
	for i in $(seq 1 40); do echo "$i" > "$m/d/f$i"; done
	head -c 20000 /dev/urandom > $m/alist/linked
	for i in $(seq 1 120); do ln $m/alist/linked "$m/alist/hard-link-$i-of-the-linked-file"; done
	umount $m
	run python3 "$FSFORGE_TOP/tests/ntfs/lab/truncate.py" cut image mfttail
	[ "$status" -eq 0 ]
	size=$(stat -c %s image)
	sum=$(sha256sum < image)
	run "$FSCK" -n image
	[ "$status" -eq 4 ]
	[[ $output == *"bytes are missing"* ]]
	run "$FSCK" -a image
	echo "$output"
	[ "$status" -eq 4 ]
	[[ $output == *"bytes are missing"* ]]
	[[ $output != *"attribute list"* ]]
	[[ $output != *"link count"* ]]
	[ "$(stat -c %s image)" -eq "$size" ]
	[ "$(sha256sum < image)" = "$sum" ]
}

# 4096-byte sectors and MFT records (the lab's u-s4k-half): $SDS's first
# run (its first 256 KiB block and the start of the mirror) lies in the
# missing tail, the mirror's later part, grown by ntfs-3g for 60 security
# descriptors, on the device.  The descriptors past the end are unknown,
# not damaged: -a restored 34 entries from their mirror (writes past the
# end, exit 5), rebuilt $SII and $SDH without the rest and gave 46 files
# another security id; now $Secure is not judged and no byte is written.
# $SDS's runs are found by the lab's independent parser.
@test "truncated 4Kn volume with \$SDS partly past the end: no descriptor restored, no security id replaced, nothing written" {
	local m=mnt lcn
	truncate -s 16M image
	"$MKFS_NTFS" -q -F -s 4096 image
	mkdir -p $m
	ntfs-3g image $m
	mkdir $m/acl
	python3 - "$m/acl" <<PY
import os, sys
sys.path.insert(0, "$FSFORGE_TOP/tests/ntfs/lab")
import base
for i in range(60):
    p = os.path.join(sys.argv[1], "s%02d" % i)
    open(p, "w").write("acl %d\\n" % i)
    os.setxattr(p, "system.ntfs_acl", base.security_descriptor(2000 + i, 0x1F01FF))
PY
	umount $m
	lcn=$(python3 - image <<PY
import sys
sys.path.insert(0, "$FSFORGE_TOP/tests/ntfs/lab")
import ntfsparse as P
img = open(sys.argv[1], "rb").read()
g = P.Geometry(img)
rec = P.unfix(P.read_record(img, g, 9)[1])
runs = [P.runlist(rec, o) for o, t, n, nr in P.attrs(rec) if t == 0x80 and n == "\$SDS"][0]
# the first run holds the first block; a later one, before it, the mirror's tail
assert g.bps == 4096 and g.rs == 4096 and any(l < runs[0][0] for l, _ in runs[1:]), runs
print(runs[0][0] * g.cs)
PY
)
	truncate -s "$lcn" image
	sum=$(sha256sum < image)
	run "$FSCK" -n image
	[ "$status" -eq 4 ]
	[[ $output == *"bytes are missing"* ]]
	run "$FSCK" -a image
	echo "$output"
	[ "$status" -eq 4 ]
	[[ $output != *"security id"* ]]
	[[ $output != *"beyond the end"* ]]
	[ "$(sha256sum < image)" = "$sum" ]
}

# A directory whose index blocks lie in the missing tail: -a rebuilds its
# index in clusters on the device (never a write past its end) and says
# so (exit 5: the index fixed, the missing tail left); the $Bitmap then
# agrees with ntfsck -n, ntfs-3g lists every entry, a second -a changes
# nothing.  Cut deeper ($UpCase gone), the rebuild is impossible and -a
# claims no fix (exit 4).  The index's clusters are found by the lab's
# independent parser.
@test "truncated image with a directory index past the end: rebuilt on the device; no fix claimed when impossible" {
	need_sid
	local lcn sum
	truncate -s 24M v.img
	"$MKFS_NTFS" -q -F v.img
	mkdir -p mnt
	ntfs-3g v.img mnt
	# fill the clusters after the MFT, then those before it: the index
	# of "big" then goes near the volume's end
	head -c 8500000 /dev/urandom > mnt/data
	head -c 9400000 /dev/urandom > mnt/data2
	mkdir mnt/big
	(cd mnt/big && seq -f 'entry-%04g-with-a-long-name' 1 600 | xargs touch)
	echo small > mnt/small
	umount mnt
	lcn=$(python3 - v.img "$FSFORGE_TOP/tests/ntfs/lab" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
import ntfsparse as P
a = open(sys.argv[1], "rb").read()
g = P.Geometry(a)
for n, at, rec in P.records(a, g):
    for off, t, nm, nr in P.attrs(rec):
        if n >= 16 and t == 0xa0 and nr:
            print(min(l for l, _ in P.runlist(rec, off)) * g.cs)
PY
)
	[ "$lcn" -gt $((20 << 20)) ] || die "the index of big is at byte $lcn, not near the end"
	cp v.img deep.img
	truncate -s "$lcn" v.img
	run "$FSCK" -a v.img
	[ "$status" -eq 5 ] || die "-a: exit $status: $output"
	[[ $output == *"(/big): directory index is corrupt"*REBUILT* ]] || die "$output"
	[[ $output != *"cannot be rebuilt"* ]] || die "$output"
	[[ $output != *"write beyond the end"* ]] || die "$output"
	[ "$(stat -c %s v.img)" -eq "$lcn" ]
	run "$FSCK" -n v.img
	[ "$status" -eq 4 ]
	[[ $output == *"problems: 1 found"* ]] || die "-n after -a: $output"
	sum=$(sha256sum < v.img)
	run "$FSCK" -a v.img
	[ "$status" -eq 4 ]
	[ "$(sha256sum < v.img)" = "$sum" ] || die "second -a changed bytes"
	run sid_ntfsck v.img
	[ "$status" -eq 0 ] || die "ntfsck -n: $output"
	ntfs-3g -o ro v.img mnt
	[ "$(ls mnt/big | wc -l)" -eq 600 ]
	[ "$(cat mnt/small)" = small ]
	umount mnt
	# cut inside $UpCase: nothing can be rebuilt, nothing is claimed:
	# each index is said to be left, once (not REBUILT, then taken back)
	truncate -s $((lcn / 2)) deep.img
	run "$FSCK" -a deep.img
	[ "$status" -eq 4 ] || die "deep cut: exit $status: $output"
	[[ $output == *"(/big): directory index is corrupt"*"Not rebuilt (\$UpCase is unreadable)."* ]] || die "$output"
	[[ $output != *REBUILT* ]] || die "deep cut: REBUILT said: $output"
	[[ $output != *"cannot be rebuilt"* ]] || die "deep cut: said twice: $output"
	# and \$UpCase's own line says it once, in one clause
	[[ $output == *'$UpCase: cannot be read: index order is not checked'* ]] || die "deep cut: $output"
	[[ $output == *", 0 fixed,"* ]] || die "deep cut: $output"
}

# Fresh volumes of every cluster size from 512 B to 64 KiB, made by our
# mkfs.ntfs and by mkntfs (sid), with a 3,000-entry directory and a small
# file written by ntfs-3g: -n finds nothing and writes nothing.
@test "no false positive: every cluster size, mkfs.ntfs and mkntfs, 3,000-entry directory" {
	need_sid
	t=$(mktemp -d "$SID_ROOT/tmp/fsforge-geometry.XXXXXX")
	mkdir -p mnt
	fails=()
	for cs in 512 1024 2048 4096 8192 16384 32768 65536; do
		for tool in mkfs.ntfs mkntfs; do
			rm -f "$t/v.img"
			truncate -s 32M "$t/v.img"
			if [ "$tool" = mkfs.ntfs ]; then
				"$MKFS_NTFS" -q -F -c "$cs" "$t/v.img"
			else
				chroot "$SID_ROOT" mkntfs -q -F -f -c "$cs" "/tmp/${t##*/}/v.img" > /dev/null
			fi
			ntfs-3g "$t/v.img" mnt
			mkdir mnt/big
			(cd mnt/big && seq -f 'entry_%05g' 1 3000 | xargs touch)
			echo small > mnt/small
			umount mnt
			sum=$(sha256sum < "$t/v.img")
			rc=0
			"$FSCK" -n "$t/v.img" > out 2>&1 || rc=$?
			[ "$rc" -eq 0 ] || { cat out; fails+=("$tool -c $cs: exit $rc"); }
			[ "$(sha256sum < "$t/v.img")" = "$sum" ] || fails+=("$tool -c $cs: -n wrote")
		done
	done
	rm -rf "$t"
	printf '%s\n' "${fails[@]}"
	[ "${#fails[@]}" -eq 0 ]
}
