#!/usr/bin/env bats
# C unit tests of the format libraries (TAP from the test programs).
load ../lib/common

@test "liberofs format helpers (crc32c, checksum, xattr names, prefix table, dirents)" {
	cd "$BATS_TEST_TMPDIR"
	# a superblock written by erofs-utils (bookworm 1.5) as independent input
	mkdir src
	echo x > src/f
	mkfs.erofs ref.img src >/dev/null 2>&1
	run "$FSFORGE_BUILDDIR/tests/unit/test_erofs_format" ref.img
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"erofs-utils' superblock checksum reproduced"* ]]
	! grep -q '^not ok' <<<"$output"
}

@test "problem table: -n/-y/-p/interactive answers, exit codes, JSON report" {
	cd "$BATS_TEST_TMPDIR"
	run "$FSFORGE_BUILDDIR/tests/unit/test_problem" report.json
	echo "$output"
	[ "$status" -eq 0 ]
	! grep -q '^not ok' <<<"$output" || false
	# the JSON must parse with an independent parser and keep the details
	python3 - report.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["mode"] == "yes" and r["found"] == 1, r
p = r["problems"][1]
assert p["id"] == "index_order" and p["action"] == "fixed", p
assert p["object"] == 'dir "q\\""' and p["message"] == 'index entry "tab\there" out of order', p
PY
}

@test "undo files: CRC-32C check value, save and restore byte for byte" {
	run "$FSFORGE_BUILDDIR/tests/unit/test_undo"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"ok 2 - crc32c of nothing"* ]]
	[[ $output == *"the image is back byte for byte"* ]]
	run grep -c '^not ok' <<<"$output"
	[ "$output" -eq 0 ]
}

@test "xfs_healer: inode paths through a fake parent-pointer lookup (depth, length, loops; which events)" {
	run "$FSFORGE_BUILDDIR/tests/unit/test_healer_parents"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"ok 3 - two levels, a space (12 bytes)"* ]]
	[[ $output == *"ok 17 - a sick inode core: not looked up"* ]]
	[[ $output == *"1..23"* ]]
	! grep -q '^not ok' <<<"$output"
}

@test "liberofs: extents without a repeated 4-byte group, stored raw by liblz4's lz4hc at every level" {
	run "$FSFORGE_BUILDDIR/tests/unit/test_zliterals"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"lz4hc levels 1-12 store all of them raw (480 of 480)"* ]]
	[[ $output == *"1..11"* ]]
	run grep -c '^not ok' <<<"$output"
	[ "$output" -eq 0 ]
}

@test "liberofs: lz4_destsize.c's blocks decode through liblz4, keep the closing rules, take what fits, as much as lz4hc 9" {
	run "$FSFORGE_BUILDDIR/tests/unit/test_lz4_destsize"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"ok 2 - 3000 of 3000 blocks decoded by liblz4"* ]]
	[[ $output == *"1..8"* ]]
	run grep -c '^not ok' <<<"$output"
	[ "$output" -eq 0 ]
}
