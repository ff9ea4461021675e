#!/usr/bin/env bats
# C unit test of fsck.ntfs's set of clusters in use (fsck/cluster_set.c:
# extents that turn into a bitmap) against a plain bitmap kept beside it
# (TAP from tests/unit/test_cluster_set).
load ../lib/common

@test "fsck.ntfs cluster set: extents and bitmap answer as a plain bitmap does" {
	make -s -C "$FSFORGE_BUILDDIR" tests/unit/test_cluster_set
	run "$FSFORGE_BUILDDIR/tests/unit/test_cluster_set"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"1..10"* ]]
	run grep -c '^not ok' <<<"$output"
	[ "$output" -eq 0 ]
}
