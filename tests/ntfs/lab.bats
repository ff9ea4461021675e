#!/usr/bin/env bats
# The damage lab (tests/ntfs/lab, issue 10) at CI size: LAB_CASES (default
# 48) damaged volumes sampled from the targeted, random, bad-sector and
# power-cut lists
# (seed 1), LAB_KCUTS (default 6) power cuts under the Linux 7.2 ntfs driver
# (kind kpowercut: cut from the recorded block writes in
# tests/ntfs/lab/kfixture, no QEMU here), 6 targeted cases on the rich4k
# base (compression, DOS names, reparse points, object ids, $Secure, EAs,
# attribute lists; its census checked), 3 stale-block cases on kern4k
# (kind stale: a lost write, old copies written back, a partial restore),
# 2 adverse writes on ours4k (kind adverse: torn records, a misdirected
# INDX block), 1 interrupted repair (fsck.ntfs -a killed mid-repair),
# 1 compound and 1 truncated case on ours4k (kinds compound, truncated),
# plus one undamaged control per
# base volume, judged by oracles
# that are not fsck.ntfs (image bytes, exit codes, ntfsck -n from the sid
# tree, ntfs-3g mount + content manifest against the one taken before the
# damage).  Each invariant is its own test; `lab.py check` names every case
# that breaks it.  Cases listed in tests/ntfs/lab/known-bad are printed; they
# excuse nothing for "-n never writes", "no crash" and "undo", and are left out of
# the quality invariants only.  FSCK_NTFS selects the fsck.ntfs judged.
load ../lib/common

LAB=$FSFORGE_TOP/tests/ntfs/lab
# cases on the rich base's structures (tests/ntfs/lab/damages.py rich_targeted)
RICH_CASES=t-rich4k-rp-attr-vlen-big,t-rich4k-oid-attr-vlen-zero,t-rich4k-sec-sdh-blk-zeroed,t-rich4k-comp-ctext-csize-plus1,t-rich4k-alist-streams-entry-ref,t-rich4k-rp-rentry-ref
# stale blocks on kern4k's recorded kernel writes (tests/ntfs/lab/stale.py):
# an INDX block's write lost, an MFT record's old copy written back
# over the newer one, the first 128 KiB (boot sector, $MFT's bitmap and
# first records) restored from before the recording (record 0 older than
# its mirror copy: 262 files were dropped)
STALE_CASES=o-kern4k-l594,o-kern4k-s454,o-kern4k-g1
# adverse writes (tests/ntfs/lab/adverse.py): MFT records torn across
# sectors, an INDX block misdirected into another directory's index
ADVERSE_CASES=a-ours4k-tornrec-1100000,a-ours4k-misindx-1100003
# an interrupted repair (kind interrupted): fsck.ntfs -a on the torn
# records above killed as it enters its 3rd (last) write, then judged
# like any case: the next -a must finish the job and keep every file
INTERRUPTED_CASES=i-ours4k-3-a-ours4k-tornrec-1100000
# several damages on one volume (tests/ntfs/lab/compound.py) and the last
# tenth of the device gone (tests/ntfs/lab/truncate.py): ~4 s of CPU each
# on the sanitizer build
COMPOUND_CASES=m-ours4k-100000
TRUNCATED_CASES=u-ours4k-end10

setup_file() {
	export FSCK_NTFS=${FSCK_NTFS:-$FSFORGE_BUILDDIR/fsck/fsck.ntfs}
	export OUT=/dev/shm/fsforge-lab-bats.$$
	rm -rf "$OUT"
	mkdir -p "$OUT"
	"$LAB/run-lab" --cases "${LAB_CASES:-48}" --seed 1 --jobs 2 --out "$OUT" \
		--bases ours4k,ours1k,sid4k,sid64k,kern4k --random 40 --cuts 20 \
		--kinds targeted,random,sectors,powercut,kpowercut --kcuts "${LAB_KCUTS:-6}" \
		> "$OUT/run.log" 2>&1 || echo "run-lab exit $?" >> "$OUT/run.log"
	# the rich base (compression, DOS names, reparse points, object ids,
	# $Secure, EAs, attribute lists): its control and RICH_CASES
	"$LAB/run-lab" --seed 1 --jobs 2 --out "$OUT" --bases rich4k --kinds targeted \
		--only "c-rich4k-clean,$RICH_CASES" \
		>> "$OUT/run.log" 2>&1 || echo "run-lab exit $?" >> "$OUT/run.log"
	"$LAB/run-lab" --seed 1 --jobs 2 --out "$OUT" --bases kern4k --kinds stale \
		--only "$STALE_CASES" \
		>> "$OUT/run.log" 2>&1 || echo "run-lab exit $?" >> "$OUT/run.log"
	"$LAB/run-lab" --seed 11 --jobs 2 --out "$OUT" --bases ours4k --kinds adverse \
		--only "$ADVERSE_CASES,$INTERRUPTED_CASES" \
		>> "$OUT/run.log" 2>&1 || echo "run-lab exit $?" >> "$OUT/run.log"
	"$LAB/run-lab" --seed 1 --jobs 2 --out "$OUT" --bases ours4k --kinds compound,truncated \
		--only "$COMPOUND_CASES,$TRUNCATED_CASES" \
		>> "$OUT/run.log" 2>&1 || echo "run-lab exit $?" >> "$OUT/run.log"
	"$LAB/run-lab" table "$OUT" > "$OUT/table.txt" 2>&1 || true
}

teardown_file() {
	local m
	# a mount left by an interrupted case (ntfs-3g on a case's mnt/)
	for m in $(awk -v d="$OUT" 'index($2, d "/") == 1 { print $2 }' /proc/mounts | sort -r); do
		umount -l "$m" 2>/dev/null || true
	done
	rm -rf --one-file-system "$OUT" || true
}

check() {
	run python3 "$LAB/lab.py" check "$OUT" "$1"
	echo "$output" | sed 's/^/# /' >&3
}

@test "lab: every case was made and judged" {
	sed 's/^/# /' "$OUT/table.txt" >&3
	run grep -c -e 'LAB ERROR' -e '^run-lab exit' "$OUT/run.log"
	[ "$output" = 0 ] || { grep -e 'LAB ERROR' -e 'run-lab exit' "$OUT/run.log"; false; }
	n=$(ls "$OUT/results" | wc -l)
	[ "$n" -ge "${LAB_CASES:-48}" ]
}

@test "lab: the interrupted repair was killed before its last write" {
	run python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["killed_rc"])' \
		"$OUT/results/$INTERRUPTED_CASES.json"
	[ "$status" -eq 0 ]
	[ "$output" = -9 ]
}

@test "lab: the rich base holds what it is made for (counted in the image by ntfsparse)" {
	run python3 - "$LAB" "$OUT/bases/rich4k/image" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import ntfsparse as P
c = P.census(bytearray(open(sys.argv[2], "rb").read()))
print(c)
# populate_rich: 15 compressed files, 41 DOS names, 9 reparse points,
# 31 object ids, 9 files with EAs, 3 attribute lists, 300 descriptors set
want = {"compressed": 15, "dosnames": 41, "reparse": 9, "$Reparse": 9, "objid": 31,
        "$ObjId": 31, "ea": 9, "eainfo": 9, "attrlist": 3}
bad = [k for k, n in want.items() if c[k] != n]
bad += [k for k in ("$SII", "$SDH") if c[k] < 300]
bad += [k for k in ("$SII blocks", "$SDH blocks", "extrecs") if c[k] < 2]
print("bad:", bad)
sys.exit(1 if bad else 0)
PY
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "lab: the known-bad list (diagnostic)" {
	grep -v '^#' "$LAB/known-bad" | sed 's/^/# known-bad: /' >&3 || true
	[ -f "$LAB/known-bad" ]
}

@test "lab: -n never writes a byte (before or after -a)" {
	check nwrite
	[ "$status" -eq 0 ]
}

@test "lab: no crash, hang or sanitizer report" {
	check crash
	[ "$status" -eq 0 ]
}

@test "lab: -n exits 0, 1, 4 or 8 and -a exits 0, 1, 2 or 4" {
	check exit
	[ "$status" -eq 0 ]
}

@test "lab: when -a exits 0 or 1, -n is then clean and a second -a changes no byte" {
	check converge
	[ "$status" -eq 0 ]
}

@test "lab: the undamaged control volumes pass every oracle (no false positive)" {
	check control
	[ "$status" -eq 0 ]
}

@test "lab: -a -z then --undo gives back the damaged image byte for byte" {
	check undo
	[ "$status" -eq 0 ]
}

@test "lab: fsck.ntfs -a never loses a file that ntfsck -a keeps" {
	check keeps
	[ "$status" -ne 77 ] || skip "no ntfsck (sid tree not built: tests/kernel/setup --sid)"
	[ "$status" -eq 0 ]
}

@test "lab: nothing lost: every file whose records and clusters were not damaged survives with its content" {
	check nothing-lost
	[ "$status" -eq 0 ]
}

@test "lab: the dm-log-writes parser of the kernel power cuts reads a log made here" {
	# a log written by hand after log-writes.rst: super block, a write of
	# two sectors at sector 3, an empty flush, a mark, a discard, a FUA
	# write of one sector at sector 0; replayed on a zeroed 4 KiB image
	run python3 - "$LAB" <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[1])
import kpowercut as K
ss = 512
def ent(sector, n, flags, dlen=0, extra=b""):
    h = struct.pack("<QQQQ", sector, n, flags, dlen) + extra
    return h + bytes(ss - len(h))
log = struct.pack("<QQQI", 0x6a736677736872, 1, 5, ss).ljust(ss, b"\0")
log += ent(3, 2, 0) + b"a" * 512 + b"b" * 512
log += ent(0, 0, 1)
log += ent(0, 0, 8, 2, b"p1")
log += ent(6, 1, 4)
log += ent(0, 1, 2) + b"c" * 512
es, used = K.parse(log)
assert used == len(log), used
assert [e.flags for e in es] == [0, 1, 8, 4, 2]
assert es[2].mark == "p1" and K.marks(es) == [("p1", 2)]
assert K.boundaries(es) == [0, 2, 5]
img = bytearray(4096)
K.apply(img, es, 5)
assert img[1536:2560] == b"a" * 512 + b"b" * 512 and img[:512] == b"c" * 512
assert img[3072:3584] == bytes(512)  # a discard writes nothing
img = bytearray(4096)
K.apply(img, es, 0, 1)  # first write torn after one sector
assert img[1536:2048] == b"a" * 512 and img[2048:2560] == bytes(512)
print("ok")
PY
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = ok ]
}

@test "lab: on a 4Kn volume the kernel power cuts tear a write only between 4096-byte sectors" {
	# a log of a 4Kn disk (log-writes.rst: sector size 4096, sectors
	# counted in it): a write of three sectors at sector 1; a tear keeps
	# whole 4096-byte sectors (a 4Kn disk writes one atomically), and
	# every torn cut the cut planner picks on it is a whole-sector prefix
	run python3 - "$LAB" <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[1])
import kpowercut as K
ss = 4096
def ent(sector, n, flags):
    return struct.pack("<QQQQ", sector, n, flags, 0).ljust(ss, b"\0")
log = struct.pack("<QQQI", 0x6a736677736872, 1, 2, ss).ljust(ss, b"\0")
log += ent(1, 3, 0) + b"a" * ss + b"b" * ss + b"c" * ss
log += ent(0, 0, 1)
es, used = K.parse(log)
assert used == len(log) and es[0].off == ss and es[0].length == 3 * ss
img = bytearray(5 * ss)
K.apply(img, es, 0, 1, sector=ss)
assert img[ss:2 * ss] == b"a" * ss and img[2 * ss:] == bytes(3 * ss), "torn inside a sector"
# forty such writes, each to its own three sectors, then a flush
es = [K.Entry(0, 3 * ss * i, b"d" * 3 * ss, None, 3 * ss) for i in range(40)] + es[1:]
torn = 0
for k, t in K.cut_points(es, 30, 7, sector=ss):
    if t > 0:
        torn += 1
        img = bytearray(120 * ss)
        K.apply(img, es, k, t, sector=ss)
        n = len(img[3 * ss * k:3 * ss * (k + 1)].rstrip(b"\0"))
        assert n % ss == 0 and 0 < n < 3 * ss, (k, t, n)
assert torn, "no torn cut"
print("ok")
PY
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = ok ]
}
