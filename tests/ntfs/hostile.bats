#!/usr/bin/env bats
# fsck.ntfs on hostile structures: valid-looking metadata (fixups right)
# that must not make it hang, recurse or allocate without bound
# (tests/ntfs/lab/hostile.py, independent of libntfs; the full set with
# CPU and RSS side by side with ntfsck -a: bench/ntfs-lab hostile).
# `timeout` is only a hang guard; the oracles: -n finds the damage and
# writes nothing, -a repairs it, -n is then clean, a second -a changes no
# byte, ntfsprogs-plus ntfsck -n (sid) finds the repaired volume clean.
load ../lib/common

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
source "$FSFORGE_TOP/tests/ntfs/ntfs_helpers.bash"
HOSTILE="python3 $FSFORGE_TOP/tests/ntfs/lab/hostile.py"

# base.img: a few files, a directory
setup_file() {
	local m=$BATS_FILE_TMPDIR/mnt
	need_ntfs3g
	cd "$BATS_FILE_TMPDIR" || return 1
	mkdir -p "$m"
	truncate -s 16M base.img
	"$MKFS_NTFS" -q -F base.img
	ntfs-3g base.img "$m"
	mkdir "$m/a"
	for i in $(seq 1 20); do echo "x $i" > "$m/a/f$i"; done
	umount "$m"
}

setup() { cd_tmp; }

# -n (exit 4, no write), -a (exit 1), then converged and ntfsck -n clean
hostile_repair() {
	local sum rc
	need_sid
	cp "$BATS_FILE_TMPDIR/base.img" image
	$HOSTILE image "$@" || die "hostile.py $*"
	sum=$(sha256sum < image)
	rc=0; timeout 120 "$FSCK" -n image > n.log 2>&1 || rc=$?
	cat n.log
	[ "$rc" -eq 4 ] || die "-n exit $rc"
	[ "$(sha256sum < image)" = "$sum" ] || die "-n wrote"
	rc=0; timeout 120 "$FSCK" -a image > a.log 2>&1 || rc=$?
	cat a.log
	[ "$rc" -eq 1 ] || die "-a exit $rc"
	repair_converged "$FSCK" image -a
}

# $MFT's $DATA sizes claim 2^32 records in its few clusters: every pass
# walked 2^32 record numbers (a hang); the count stops at its runs and
# record 0's sizes are repaired
@test "MFT data size of 2^32 records: no hang, record 0's sizes repaired" {
	hostile_repair mftsize
	grep -q "MFT record 0: attribute 0x80: its runs hold" a.log || die "record 0's sizes not reported"
}

# The same on a 256 GiB volume (sparse): the count stopping at the volume
# still walked 268 million record numbers (23 s of CPU per -n); it stops
# at what $MFT's runs map or its bitmap covers, the more of the two (64
# records here: the summary line counts what was walked)
@test "MFT data size of 2^32 records on 256 GiB: only the records the runs or the bitmap hold are walked" {
	local rc
	truncate -s 256G big.img
	"$MKFS_NTFS" -q -F big.img
	$HOSTILE big.img mftsize || die "hostile.py"
	rc=0; timeout 120 "$FSCK" -n big.img > n.log 2>&1 || rc=$?
	cat n.log
	[ "$rc" -eq 4 ] || die "-n exit $rc"
	grep -Eq "^big.img: [0-9]{1,4} MFT records; problems" n.log || die "records walked: $(tail -1 n.log)"
	rc=0; timeout 120 "$FSCK" -a big.img > a.log 2>&1 || rc=$?
	cat a.log
	[ "$rc" -eq 1 ] || die "-a exit $rc"
	run timeout 120 "$FSCK" -n big.img
	[ "$status" -eq 0 ] || die "-n after -a: exit $status: $output"
}
