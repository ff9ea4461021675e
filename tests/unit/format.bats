#!/usr/bin/env bats
# C unit tests of the format libraries (TAP from the test programs).
load ../lib/common

@test "liberofs format helpers (crc32c, checksum, xattr names, prefix table, dirents)" {
	cd "$BATS_TEST_TMPDIR"
	# a superblock written by erofs-utils (bookworm 1.5) as independent input
	mkdir src && echo x > src/f
	mkfs.erofs ref.img src >/dev/null 2>&1
	run "$FSFORGE_BUILDDIR/tests/unit/test_erofs_format" ref.img
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"erofs-utils' superblock checksum reproduced"* ]]
	! grep -q '^not ok' <<<"$output"
}
