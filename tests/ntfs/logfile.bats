#!/usr/bin/env bats
# fsck.ntfs reads $LogFile's restart pages: a volume of our mkfs.ntfs gets
# two restart pages written by tests/ntfs/logfile_pages.py (laid out from
# the documentation, independently of libntfs), in a clean, a dirty
# (changes not checkpointed) and a torn variant.  -n names a dirty or
# corrupt journal, writes nothing and keeps exit 0 (nothing is wrong with
# the file system itself).  The independent oracle is ntfs-3g with
# -o norecover: it mounts the clean variant read-write and falls back to
# read-only on the dirty and the torn ones.
#
# After a repair, -a resets the journal to what chkdsk leaves: two restart
# pages of a clean, closed log, the rest 0xff.  That is read back by the
# independent reader of logfile_pages.py (check), mounted read-write by
# ntfs-3g -o norecover, and a second run finds nothing to do.
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

# damage that -a repairs (a $Bitmap bit of cluster 0 cleared), then -a
repair() {
	python3 "$PAGES" image unmark
	run "$FSCK" -a image
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *'$LogFile: journal is reset after the repair'* ]]
}

@test "logfile: after a repair an open journal becomes a clean, closed one; ntfs-3g mounts it read-write" {
	need_ntfs3g
	volume clean
	repair
	run python3 "$PAGES" image check
	echo "$output"
	[ "$status" -eq 0 ]
	# the newer of the two pages written by hand holds LSN 0x4001; the
	# records of a fresh mkfs.ntfs volume all hold LSN 0
	[ "$output" = "clean LSN 16385" ]
	run ntfs3g_verdict
	[ "$output" = rw ]
}

@test "logfile: the reset converges: a second -n and -a find nothing, write nothing" {
	volume dirty
	repair
	before=$(sha256sum < image)
	run "$FSCK" -n image
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output != *LogFile* ]]
	[[ $output == *'0 found, 0 fixed, 0 left'* ]]
	run "$FSCK" -a image
	[ "$status" -eq 0 ]
	[ "$(sha256sum < image)" = "$before" ]
}

@test "logfile: a torn journal is reset too; the restart LSN is above every record's LSN" {
	need_ntfs3g
	volume torn
	# $Volume's record (3) gets LSN 0x123456789: the LSN field lies in
	# the first sector, before any protected word
	python3 - image <<'PY'
import os, struct, sys
sys.path.insert(0, os.environ["FSFORGE_TOP"] + "/tests/ntfs")
from ntfs_patch import Volume
vol = Volume(sys.argv[1])
rec = vol.read(3)
struct.pack_into("<q", rec, 8, 0x123456789)
vol.write(3, rec)
vol.f.close()
PY
	repair
	run python3 "$PAGES" image check
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "clean LSN $((0x123456789))" ]
	run ntfs3g_verdict
	[ "$output" = rw ]
}

@test "logfile: an all-0xff journal is left as it is after a repair" {
	truncate -s 32M image
	"$FSFORGE_BUILDDIR/mkfs/mkfs.ntfs" -q -F image
	python3 "$PAGES" image unmark
	run "$FSCK" -a image
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output != *LogFile* ]]
	run python3 "$PAGES" image check
	[ "$status" -eq 1 ]
	[ "$output" = "page 0: magic b'\\xff\\xff\\xff\\xff'" ]
}

@test "logfile: ntfsck -n (ntfsprogs-plus) finds a reset volume clean" {
	need_sid
	volume clean
	repair
	run sid_ntfsck image
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *'Clean, No errors found or left'* ]]
}
