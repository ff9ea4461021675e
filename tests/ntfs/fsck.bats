#!/usr/bin/env bats
# fsck.ntfs on the host: the damaged-volume cases tests/ntfs/cases/f_*
# found by -n (their repair is judged in cases.bats, against hand-written
# expectations), the public corpus protocol, bad input, -C, --json.
# Repaired volumes must also be accepted by an independent implementation
# (ntfs-3g mounts and walks them read-only).
load ../lib/common

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
source "$FSFORGE_TOP/tests/ntfs/ntfs_helpers.bash"
CASES=$FSFORGE_TOP/tests/ntfs/cases
# the public damaged-volume corpus (GPL-2.0, see its README) is in the tree
CORPUS=$FSFORGE_TOP/tests/ntfs/corpus

setup() { cd_tmp; }
teardown() { if mountpoint -q mnt 2>/dev/null; then umount mnt; fi; }

run_fsck() {
	local rc=0
	"$FSCK" "$1" image 2>&1 || rc=$?
	echo "Exit status is $rc"
}

# mount with ntfs-3g read-only, list and read everything
walk_ntfs3g() {
	mkdir -p mnt
	ntfs-3g -o ro "$1" mnt
	ls -lR mnt > /dev/null
	find mnt -type f -exec cat {} + > /dev/null
	umount mnt
}

@test "every f_ case is found by -n before repair (exit 4) and -n changes nothing" {
	for d in "$CASES"/f_*/; do
		name=$(basename "$d")
		xz -dc "$d/image.xz" > image
		before=$(sha256sum < image)
		run "$FSCK" -n image
		# the dirty flag alone is housekeeping: nothing is wrong yet
		if [ "$name" = f_volume_dirty ] || [ "$name" = f_logfile_dirty ]; then
			[ "$status" -eq 0 ] || die "$name: -n exit $status"
		else
			[ "$status" -eq 4 ] || die "$name: -n exit $status"
			[[ $output == *"? no"* ]] || die "$name: -n did not report"
		fi
		[ "$(sha256sum < image)" = "$before" ] || die "$name: -n wrote"
	done
}

# run ntfsck from the sid tree on a copy of IMAGE inside the tree; the copy
# comes back over IMAGE (so that -a repairs are kept)
sid_ntfsck_rw() {
	local mode=$1 img=$2 t rc=0
	t=$(mktemp -d "$SID_ROOT/tmp/fsforge-fsck.XXXXXX")
	cp --sparse=always "$img" "$t/v.img"
	chroot "$SID_ROOT" ntfsck "$mode" "/tmp/${t##*/}/v.img" > ntfsck.log 2>&1 || rc=$?
	cp --sparse=always "$t/v.img" "$img"
	rm -rf "$t"
	return $rc
}

# Every corpus image: -n writes nothing; -a repairs (exit 0 or 1); then our
# -n finds nothing, a second -a changes no byte, ntfsprogs-plus ntfsck -n
# (sid) finds the volume clean, and ntfs-3g can walk and read all of it.
@test "public corpus: -a exits 0 or 1, then -n exits 0, ntfsck agrees, ntfs-3g reads all" {
	[ -d "$CORPUS/created_manually" ] || die "corpus not found at $CORPUS"
	chroot "$SID_ROOT" sh -c 'command -v ntfsck' >/dev/null ||
		die "sid tree with ntfsck missing: run tests/kernel/setup --sid"
	n=0
	mkdir -p mnt
	for t in "$CORPUS"/created_manually/*/ntfs.img.tar.xz; do
		name=$(basename "$(dirname "$t")")
		rm -f ntfs.img
		tar -xJf "$t"
		before=$(sha256sum < ntfs.img)
		# every image of the collection is damaged: -n must say so (4)
		rc=0; "$FSCK" -n -q ntfs.img > n0.log 2>&1 || rc=$?
		[ "$rc" -eq 4 ] || { cat n0.log; die "$name: -n before repair exit $rc"; }
		[ "$(sha256sum < ntfs.img)" = "$before" ] || die "$name: -n wrote"
		rc=0; "$FSCK" -a -q ntfs.img > a.log 2>&1 || rc=$?
		[ "$rc" -le 1 ] || { cat a.log; die "$name: -a exit $rc"; }
		rc=0; "$FSCK" -n ntfs.img > n.log 2>&1 || rc=$?
		[ "$rc" -eq 0 ] || { cat n.log; die "$name: -n after -a exit $rc"; }
		after=$(sha256sum < ntfs.img)
		rc=0; "$FSCK" -a ntfs.img > a2.log 2>&1 || rc=$?
		[ "$rc" -eq 0 ] || { cat a2.log; die "$name: second -a exit $rc"; }
		[ "$(sha256sum < ntfs.img)" = "$after" ] || die "$name: second -a wrote"
		sid_ntfsck_rw -n ntfs.img || { cat ntfsck.log; die "$name: ntfsck -n after our repair"; }
		ntfs-3g -o ro ntfs.img mnt || die "$name: ntfs-3g cannot mount the repaired volume"
		rc=0
		ls -lR mnt > /dev/null 2> walk.err || rc=$?
		find mnt -type f -exec cat {} + > /dev/null 2>> walk.err || rc=$?
		umount mnt
		[ "$rc" -eq 0 ] || { cat walk.err; die "$name: walking the repaired volume failed"; }
		n=$((n + 1))
	done
	[ "$n" -ge 24 ]
}

@test "index rebuild: a torn INDX block of a 300-entry directory; every name comes back" {
	xz -dc "$CASES/f_index_block_torn/image.xz" > image
	mkdir -p mnt
	rc=0; "$FSCK" -a image > a.log 2>&1 || rc=$?
	[ "$rc" -eq 1 ]
	grep -q 'REBUILT' a.log
	# an independent reader finds all 300 names, in order, with their data
	ntfs-3g -o ro image mnt
	ls mnt/big > names
	cat mnt/big/f000 mnt/big/f150 mnt/big/f299 > data
	umount mnt
	[ "$(wc -l < names)" -eq 300 ]
	[ "$(head -1 names)" = f000 ]
	[ "$(tail -1 names)" = f299 ]
	[ "$(tr '\n' ' ' < data)" = "000 150 299 " ]
	sid_ntfsck_rw -n image || { cat ntfsck.log; false; }
}

@test "orphans: files of a lost directory are reconnected to /lost+found with their data" {
	xz -dc "$CASES/f_orphans/image.xz" > image
	mkdir -p mnt
	rc=0; "$FSCK" -a image > a.log 2>&1 || rc=$?
	[ "$rc" -eq 1 ]
	[ "$(grep -c RECONNECTED a.log)" -eq 3 ]
	ntfs-3g -o ro image mnt
	ls mnt > top
	ls mnt/lost+found > lf
	cat mnt/lost+found/* > data
	umount mnt
	grep -qx 'lost+found' top
	! grep -qx small top || false
	[ "$(wc -l < lf)" -eq 3 ]
	[ "$(tr '\n' ' ' < data)" = "aa bb cc " ]
	sid_ntfsck_rw -n image || { cat ntfsck.log; false; }
}

@test "\$Secure: a descriptor changed in \$SDS is restored from its mirror copy" {
	truncate -s 16M image
	"$FSFORGE_BUILDDIR/mkfs/mkfs.ntfs" -q -F image
	run "$FSCK" -n image
	[ "$status" -eq 0 ]
	# one byte of the first descriptor in $SDS (record 9's stream)
	python3 - image <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[0] and __import__("os").environ["FSFORGE_TOP"] + "/tests/ntfs/cases")
import damage
f = open(sys.argv[1], "r+b"); img = bytearray(f.read())
g = damage.boot(img)
bps, cs, rs, sectors, mft, mirr = g
rec = damage.unfix(damage.record(img, mft, rs, 9))
for off, t, name in damage.attrs(rec):
    if t == 0x80 and name == "$SDS":
        mpo, = struct.unpack_from("<H", rec, off + 0x20)
        p = off + mpo
        lb, ob = rec[p] & 15, rec[p] >> 4
        lcn = int.from_bytes(rec[p + 1 + lb:p + 1 + lb + ob], "little")
        img[lcn * cs + 20 + 16] ^= 0xFF
f.seek(0); f.write(img)
PY
	run "$FSCK" -n image
	[ "$status" -eq 4 ]
	[[ $output == *"security id 256 at offset 0 is damaged; its mirror copy is intact"* ]]
	run "$FSCK" -a image
	[ "$status" -eq 1 ]
	run "$FSCK" -n image
	[ "$status" -eq 0 ]
	run ntfsfix_clean image
	[ "$status" -eq 0 ]
}

@test "a clean volume: exit 0, --json report, -C says clean" {
	truncate -s 16M image
	"$FSFORGE_BUILDDIR/mkfs/mkfs.ntfs" -q -F image
	run "$FSCK" -n image
	[ "$status" -eq 0 ]
	run "$FSCK" -C image
	[ "$status" -eq 0 ]
	[[ $output == *clean* ]]
	"$FSCK" -n --json image > r.json
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["found"]==0 and r["exit_code"]==0, r' r.json
	xz -dc "$CASES/f_volume_dirty/image.xz" > image
	run "$FSCK" -C image
	[ "$status" -eq 1 ] && [[ $output == *dirty* ]]
}

# Windows marked the volume dirty in $MFT and the power went before the
# $MFTMirr write (the lab's v-ours4k-voldirty): -a repairs the mirror, then
# clears the flag; -n reported the mirror only (the lab's "-n and -a agree")
@test "dirty in \$MFT, not yet in \$MFTMirr: -n reports both what -a fixes" {
	truncate -s 16M image
	"$FSFORGE_BUILDDIR/mkfs/mkfs.ntfs" -q -F image
	python3 "$FSFORGE_TOP/tests/ntfs/lab/realdev.py" image voldirty
	"$FSCK" -n --json image > n.json || true
	rc=0; "$FSCK" -a --json image > a.json || rc=$?
	[ "$rc" -eq 1 ] || die "-a exit $rc"
	python3 - n.json a.json <<'PY' || die "-n and -a disagree"
import json, sys
n, a = (json.load(open(f)) for f in sys.argv[1:])
told = {p["code"] for p in n["problems"]}
done = {p["code"] for p in a["problems"] if p["action"] == "fixed"}
assert done >= {"0x010003", "0x050001"} and done <= told, (told, done)
PY
	repair_converged "$FSCK" image -a
}

@test "--json lists each problem with code, id, object and action" {
	xz -dc "$CASES/f_cluster_bitmap/image.xz" > image
	rc=0; "$FSCK" -y --json image > r.json 2> msgs || rc=$?
	[ "$rc" -eq 1 ]
	python3 - r.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
p = r["problems"]
assert r["mode"] == "yes" and r["fixed"] == 1 and r["exit_code"] == 1, r
assert p[0]["id"] == "cluster_bitmap_differs" and p[0]["code"] == "0x040001", p
assert p[0]["object"] == "$Bitmap" and p[0]["action"] == "fixed", p
PY
}

@test "bad input: garbage, other filesystems, missing: exit 8, one clear line; truncated: exit 4" {
	head -c 4M /dev/zero > image
	run "$FSCK" -n image
	[ "$status" -eq 8 ]
	[[ $output == *"no valid NTFS boot sector"* ]]
	truncate -s 8M image
	mkfs.ext4 -q -F image
	run "$FSCK" -n image
	[ "$status" -eq 8 ]
	[[ $output == *"no NTFS signature"* ]]
	# a volume larger than its device is checked, not refused
	# (tests/ntfs/geometry.bats): its missing tail is an error left
	xz -dc "$CASES/f_boot_backup/image.xz" | head -c 1M > image
	run "$FSCK" -n image
	[ "$status" -eq 4 ] || die "truncated: exit $status"
	[[ $output == *"bytes are missing"* ]] || die "truncated: $output"
	run "$FSCK" -n nonexistent.img
	[ "$status" -eq 8 ]
	[[ $output == *"cannot open nonexistent.img"* ]]
	: > image
	run "$FSCK" -n image
	[ "$status" -eq 8 ]
}

@test "usage: exclusive modes and missing device are usage errors (16)" {
	run "$FSCK" -a -n image
	[ "$status" -eq 16 ]
	run "$FSCK"
	[ "$status" -eq 16 ]
	run "$FSCK" --help
	[ "$status" -eq 0 ]
	[[ $output == *"--repair-auto"* ]]
	run "$FSCK" -V
	[ "$status" -eq 0 ] && [[ $output == "fsck.ntfs (fsforge) "* ]]
}

@test "a mounted volume is refused for repair" {
	truncate -s 16M image
	"$FSFORGE_BUILDDIR/mkfs/mkfs.ntfs" -q -F image
	LOOP=$(losetup -f --show image)
	mkdir -p mnt
	ntfs-3g "$LOOP" mnt
	run "$FSCK" -a "$LOOP"
	umount mnt; losetup -d "$LOOP"
	[ "$status" -eq 8 ] && [[ $output == *"mounted"* ]]
}


@test "reference: ntfsck (ntfsprogs-plus) agrees with our repairs, and we with its" {
	chroot "$SID_ROOT" sh -c 'command -v ntfsck' >/dev/null ||
		die "sid tree with ntfsck missing: run tests/kernel/setup --sid"
	for d in "$CASES"/f_*/; do
		name=$(basename "$d")
		# ours repairs, ntfsck -n must find the volume clean
		xz -dc "$d/image.xz" > image
		rc=0; "$FSCK" -a -q image || rc=$?
		[ "$rc" -le 1 ] || die "$name: -a exit $rc"
		sid_ntfsck_rw -n image || { cat ntfsck.log; die "$name: ntfsck -n after our repair"; }
		# ntfsck repairs, our -n must agree -- except where ntfsck does
		# not look: it leaves a backup boot sector without its 0xAA55,
		# and index root entries out of collation order
		xz -dc "$d/image.xz" > image
		sid_ntfsck_rw -a image || true
		rc=0; "$FSCK" -n image > ours.log 2>&1 || rc=$?
		if [ "$name" = f_boot_backup ]; then
			[ "$rc" -eq 4 ]
			grep -q 'backup boot sector is invalid' ours.log
		elif [ "$name" = f_index_order ]; then
			[ "$rc" -eq 4 ]
			grep -q 'out of order' ours.log
		else
			[ "$rc" -eq 0 ] || { cat ours.log; die "$name: our -n after ntfsck -a exit $rc"; }
		fi
	done
}
