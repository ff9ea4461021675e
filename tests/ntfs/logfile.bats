#!/usr/bin/env bats
# fsck.ntfs reads $LogFile's restart pages: a volume of our mkfs.ntfs gets
# two restart pages written by tests/ntfs/logfile_pages.py (laid out from
# the documentation, independently of libntfs), in a clean, a dirty
# (changes not checkpointed) and a torn variant.  -n names a dirty or
# corrupt journal, writes nothing and keeps exit 0 (nothing is wrong with
# the file system itself).  The independent oracle is ntfs-3g with
# -o norecover: it mounts the clean variant read-write and falls back to
# read-only on the dirty and the torn ones.
load ../lib/common

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
PAGES=$FSFORGE_TOP/tests/ntfs/logfile_pages.py
source "$FSFORGE_TOP/tests/ntfs/ntfs_helpers.bash"

setup() { cd_tmp; }
teardown() { if mountpoint -q mnt 2>/dev/null; then umount mnt; fi; }

# make image with restart pages in state $1
volume() {
	truncate -s 32M image
	"$FSFORGE_BUILDDIR/mkfs/mkfs.ntfs" -q -F image
	python3 "$PAGES" image "$1"
}

# ntfs-3g's verdict on a copy: "rw" or "ro" (its read-only fallback)
ntfs3g_verdict() {
	cp image copy.img
	mkdir -p mnt
	ntfs-3g -o norecover copy.img mnt > mount.log 2>&1
	if grep -q 'read-only' mount.log; then echo ro; else echo rw; fi
	umount mnt
}

@test "logfile: an all-0xff journal (mkfs.ntfs) is not mentioned" {
	truncate -s 32M image
	"$FSFORGE_BUILDDIR/mkfs/mkfs.ntfs" -q -F image
	run "$FSCK" -n image
	[ "$status" -eq 0 ]
	[[ $output != *LogFile* ]]
}

@test "logfile: a clean restart area is not mentioned; ntfs-3g mounts it read-write" {
	need_ntfs3g
	volume clean
	before=$(sha256sum < image)
	run "$FSCK" -n image
	[ "$status" -eq 0 ]
	[[ $output != *LogFile* ]]
	[ "$(sha256sum < image)" = "$before" ]
	run ntfs3g_verdict
	[ "$output" = rw ]
}

@test "logfile: changes not checkpointed are named by -n, nothing written" {
	need_ntfs3g
	volume dirty
	before=$(sha256sum < image)
	run "$FSCK" -n image
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *'$LogFile: journal holds changes that were not checkpointed'* ]]
	[[ $output == *'LSN 16385'* ]]
	[[ $output == *'not cleanly unmounted by Windows'* ]]
	[ "$(sha256sum < image)" = "$before" ]
	run "$FSCK" -n --json image
	[[ $output == *'"logfile_dirty"'* ]]
	run ntfs3g_verdict
	[ "$output" = ro ]
}

@test "logfile: a torn restart page is named as corrupt by -n, nothing written" {
	need_ntfs3g
	volume torn
	before=$(sha256sum < image)
	run "$FSCK" -n image
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *'$LogFile: journal is neither empty nor a valid restart page pair (restart page is torn'* ]]
	[ "$(sha256sum < image)" = "$before" ]
	run ntfs3g_verdict
	[ "$output" = ro ]
}
