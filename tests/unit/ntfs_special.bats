#!/usr/bin/env bats
# C unit tests of the reparse point and EA parsers and the resident
# attribute resize/insert and the change journal's parsers (TAP from
# tests/unit/test_ntfs_special), against
# bytes the Linux 7.2 driver and ntfs-3g wrote and MS-FSCC layouts.
load ../lib/common

@test "libntfs reparse points, extended attributes, resident resize and insert" {
	make -s -C "$FSFORGE_BUILDDIR" tests/unit/test_ntfs_special
	run "$FSFORGE_BUILDDIR/tests/unit/test_ntfs_special"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"1..49"* ]]
	run grep -c '^not ok' <<<"$output"
	[ "$output" -eq 0 ]
}
