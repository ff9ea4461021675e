#!/usr/bin/env bats
# make dist ships an explicit list of files (dist-files.am, written by
# scripts/dist-files from git ls-files): a test file, data file or script
# added to the tree without regenerating the list would be missing from
# the release tarball.
load ../lib/common

@test "dist-files.am is up to date with the files git tracks" {
	top=$(cd "$FSFORGE_TOP" && pwd -P)
	# (a tarball unpacked inside a checkout, as make distcheck does, is no
	# checkout of its own)
	if [ "$(git -C "$top" rev-parse --show-toplevel 2>/dev/null)" != "$top" ]; then
		skip "not a git checkout (a release tarball has no history to compare)"
	fi
	"$FSFORGE_TOP/scripts/dist-files" "$BATS_TEST_TMPDIR/dist-files.am"
	diff -u "$FSFORGE_TOP/dist-files.am" "$BATS_TEST_TMPDIR/dist-files.am"
}

@test "dist-files.am ships the tests, their data and the scripts, never a directory" {
	grep -qE '^[[:space:]]tests/run( \\)?$' "$FSFORGE_TOP/dist-files.am"
	grep -q 'tests/ntfs/corpus/LICENSE' "$FSFORGE_TOP/dist-files.am"
	grep -q 'tests/ntfs/cases/f_orphans/image.xz' "$FSFORGE_TOP/dist-files.am"
	run grep -E '^\s*(tests|bench|scripts)/?\s*\\?$' "$FSFORGE_TOP/dist-files.am"
	[ "$status" -eq 1 ]
}
