#!/usr/bin/env bats
# C unit tests of the table of MFT records a read-only check assumes in
# memory (TAP from tests/unit/test_ntfs_assume): lookup, replace, many
# records, the byte budget; the bytes expected are stated by hand.
load ../lib/common

@test "libntfs assumed records: put in, found, replaced, refused past the budget" {
	make -s -C "$FSFORGE_BUILDDIR" tests/unit/test_ntfs_assume
	run "$FSFORGE_BUILDDIR/tests/unit/test_ntfs_assume"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"1..15"* ]]
	run grep -c '^not ok' <<<"$output"
	[ "$output" -eq 0 ]
}
