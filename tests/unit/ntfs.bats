#!/usr/bin/env bats
# C unit tests of libntfs (TAP from tests/unit/test_ntfs_format), with the
# $UpCase written by bookworm's mkntfs (ntfs-3g) as independent input.
load ../lib/common

@test "libntfs format helpers (upcase vs mkntfs, fixups, records, runlists, boot sector, collation, SD hash)" {
	command -v mkntfs >/dev/null || die "mkntfs missing: apt-get install ntfs-3g"
	make -s -C "$FSFORGE_BUILDDIR" tests/unit/test_ntfs_format
	cd "$BATS_TEST_TMPDIR"
	truncate -s 16M ref.img
	mkntfs -q -F -Q ref.img 2>/dev/null
	ntfscat ref.img '$UpCase' > upcase.ref
	run "$FSFORGE_BUILDDIR/tests/unit/test_ntfs_format" upcase.ref
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"identical to the \$UpCase written by ntfs-3g's mkntfs (131072 bytes, 0 differences"* ]]
	! grep -q '^not ok' <<<"$output"
}
