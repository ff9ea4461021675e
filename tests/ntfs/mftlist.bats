#!/usr/bin/env bats
# $MFT with an attribute list (its $DATA in 2 extents, the second in an
# extension record, as ntfs-3g leaves it on fragmented free space;
# tests/ntfs/mftlist_lab.py over splitidx_lab.py's make-mft), then 400
# more files: the MFT grows past what the records saved before them map.
# A saved record written back makes the tail lost:
#  - ext: the extension record holding the last extent (a lost write):
#    its last run ends before the records the MFT grew into; they are
#    FILE records numbered in sequence after it: the run grows over
#    them in that record (before, the repair was reported failed);
#  - base: record 0 and its $MFTMirr copy: the extents (up to date in
#    their record) map the records, record 0's sizes and $BITMAP size
#    are too small: they grow to what the runs and bits hold.
# And an $MFT without a list whose next extent went elsewhere (the
# clusters after its last run held in $Bitmap while ntfs-3g wrote 100
# files): record 0 and its mirror copy written back from before:
#  - moved: the one FILE record numbered where the runs end, in clusters
#    in use that no record claims, and those in sequence after it: a
#    run is added for them;
#  - one: 3 files only, the first record of the new extent alone in use;
#  - twin: a copy of that cluster elsewhere (two candidates): nothing is
#    written, exit 4, both named (-a would otherwise drop the 100 files).
#  - ghost, logtwin: a record not in use naming that run (a deleted
#    file), the copy inside $LogFile's clusters (a file's data): neither
#    holds the tail back;
#  - the tail declined (-r): record 0's sizes do not grow past its runs;
#  - 2 MiB clusters with two bits past the allocation: read without
#    overflow.
# Expectations: every file as ntfs-3g read it before the damage (the
# attrlist_lab.py manifest), ntfsck -n (sid) clean after one -a, a second
# -a changes nothing (repair_converged).
load ../lib/common
load ntfs_helpers

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
LAB=$FSFORGE_TOP/tests/ntfs/mftlist_lab.py
ALLAB=$FSFORGE_TOP/tests/ntfs/attrlist_lab.py

setup_file() {
	need_ntfs3g
	command -v python3 > /dev/null || return 0
	export VOL=$BATS_FILE_TMPDIR/v.img
	MFT_FILES=1000 python3 "$LAB" make "$VOL" "$MKFS_NTFS" 400 || die "making the volume failed"
	mkdir -p "$BATS_FILE_TMPDIR/mnt"
	ntfs-3g -o ro "$VOL" "$BATS_FILE_TMPDIR/mnt"
	python3 "$ALLAB" manifest "$BATS_FILE_TMPDIR/mnt" > "$BATS_FILE_TMPDIR/manifest.0"
	umount "$BATS_FILE_TMPDIR/mnt"
	export RVOL=$BATS_FILE_TMPDIR/r.img
	python3 "$LAB" make-reparse "$RVOL" "$MKFS_NTFS" 700 || die "making the reparse volume failed"
	ntfs-3g -o ro "$RVOL" "$BATS_FILE_TMPDIR/mnt"
	python3 "$LAB" reparse-manifest "$BATS_FILE_TMPDIR/mnt" > "$BATS_FILE_TMPDIR/rmanifest.0"
	umount "$BATS_FILE_TMPDIR/mnt"
	export MVOL=$BATS_FILE_TMPDIR/m.img
	python3 "$LAB" make-moved "$MVOL" "$MKFS_NTFS" 100 || die "making the moved volume failed"
	ntfs-3g -o ro "$MVOL" "$BATS_FILE_TMPDIR/mnt"
	python3 "$ALLAB" manifest "$BATS_FILE_TMPDIR/mnt" > "$BATS_FILE_TMPDIR/mmanifest.0"
	umount "$BATS_FILE_TMPDIR/mnt"
}

setup() {
	cd_tmp
	need_ntfs3g
	command -v python3 > /dev/null || skip "no python3"
}
teardown() { mountpoint -q mnt 2>/dev/null && umount mnt; return 0; }

@test "MFT list: \$MFT's data in 2 extents in as many records, files in use past the saved records' reach; -n clean" {
	local old
	run python3 "$LAB" info "$VOL"
	[ "$status" -eq 0 ]
	read -r extents _ top <<< "$output"
	[ "$extents" -ge 2 ] || die "only $extents extents: $output"
	cp "$VOL" old.img
	cp "$VOL.old" old.img.old
	python3 "$LAB" stale old.img ext > /dev/null
	run python3 "$LAB" info old.img
	read -r _ old _ <<< "$output"
	[ "$top" -gt "$old" ] || die "highest file record $top within the old $old records"
	run "$FSCK" -n "$VOL"
	[ "$status" -eq 0 ] || die "-n exit $status: $output"
	[[ "$output" == *"problems: 0 found"* ]] || die "$output"
}

# ntfs-3g moved $MFT's $FILE_NAME into an extension record, whose base
# reference is record 0 (sequence 1): the root's index rebuilt named it
# under that extension record's number, not record 0 ("$MFT has no entry"
# after -a, a second -a changed it again; lab t-deep4k-iroot-root-blocksize).
@test "MFT list: the root's index rebuilt: \$MFT's name, held in an extension record of record 0, indexed under record 0" {
	need_sid
	cp --sparse=always "$VOL" d.img
	run python3 "$LAB" root-blocksize d.img
	[ "$status" -eq 0 ] || die "damage failed: $output"
	read -r holder base <<< "$output"
	[ "$holder" -gt 0 ] || die "\$MFT's name in record $holder: not in an extension record"
	[ "$base" -eq 0 ] || die "\$MFT's name in record $holder of base $base"
	run "$FSCK" -a d.img
	echo "$output"
	[ "$status" -eq 1 ] || die "-a exit $status"
	[[ "$output" == *"MFT record 5 (/): directory index is corrupt"*"REBUILT"* ]] || die "not rebuilt"
	repair_converged "$FSCK" d.img -a
	mkdir -p mnt
	ntfs-3g -o ro d.img mnt || die "ntfs-3g cannot mount the repaired volume"
	python3 "$ALLAB" manifest mnt > manifest.1
	umount mnt
	cmp "$BATS_FILE_TMPDIR/manifest.0" manifest.1 || die "content differs"
}

# A bad cluster ($BadClus:$Bad lists it, tests/ntfs/lab/fielduse.py) under
# $MFT's second extent, whose runs an extension record (number > 8) holds:
# pass 1B met $Bad before that record, $Bad kept the cluster and $MFT
# "cannot move" (exit 4 at every boot).  The fixed-place files' records
# come first now: $MFT keeps it and $Bad lists it no longer.
@test "MFT list: a bad cluster under \$MFT's extent held in an extension record: unlisted from \$Bad, exit 1, no file lost" {
	need_sid
	cp --sparse=always "$VOL" d.img
	run python3 - <<'PY'
import os, sys
sys.path.insert(0, os.environ["FSFORGE_TOP"] + "/tests/ntfs/lab")
sys.path.insert(0, os.environ["FSFORGE_TOP"] + "/tests/ntfs")
import splitidx_lab as S
_, rec, runs = S.mft_extents(S.Vol("d.img"))[1]
print(rec, runs[0][0])
PY
	read -r holder lcn <<< "$output"
	[ "$holder" -gt 8 ] || die "\$MFT's second extent in record $holder: $output"
	python3 "$FSFORGE_TOP/tests/ntfs/lab/fielduse.py" d.img bad "$lcn" > /dev/null || die "marking $lcn bad"
	run "$FSCK" -a d.img
	echo "$output"
	[ "$status" -eq 1 ] || die "-a exit $status"
	[[ "$output" == *"\$Bad lists 1 clusters ($lcn-$lcn) that system files hold (the first: file MFT record $holder"* ]] || die "not unlisted"
	repair_converged "$FSCK" d.img -a
	mkdir -p mnt
	ntfs-3g -o ro d.img mnt || die "ntfs-3g cannot mount the repaired volume"
	python3 "$ALLAB" manifest mnt > manifest.1
	umount mnt
	cmp "$BATS_FILE_TMPDIR/manifest.0" manifest.1 || die "content differs"
}

# CASE: which saved record is written back; WANT: what -n must say;
# [SRC MANIFEST]: the volume (default $VOL) and its manifest; PREP: a lab command
# run on the copy before the damage
judge() {
	local c=$1 want=$2 src=${3:-$VOL} man=${4:-manifest.0} before
	cp --sparse=always "$src" d.img
	cp "$src.old" d.img.old
	[ -z "${PREP:-}" ] || python3 "$LAB" "$PREP" d.img > /dev/null || die "$c: $PREP failed"
	python3 "$LAB" stale d.img "$c" > /dev/null || die "$c: damage failed"
	before=$(sha256sum < d.img)
	run "$FSCK" -n d.img
	echo "$output"
	[ "$status" -eq 4 ] || die "$c: -n exit $status"
	[[ "$output" == *"$want"* ]] || die "$c: -n does not say \"$want\""
	[[ "$src" != "$VOL" || "$output" == *"problems: 1 found"* ]] || die "$c: -n finds more than the tail"
	[ "$(sha256sum < d.img)" = "$before" ] || die "$c: -n wrote"
	run "$FSCK" -a d.img
	echo "$output"
	[ "$status" -eq 1 ] || die "$c: -a exit $status"
	[[ "$output" != *"FAILED"* ]] || die "$c: a repair failed"
	need_sid
	repair_converged "$FSCK" d.img -a
	mkdir -p mnt
	ntfs-3g -o ro d.img mnt || die "$c: ntfs-3g cannot mount the repaired volume"
	python3 "$ALLAB" manifest mnt > manifest.1
	umount mnt
	cmp "$BATS_FILE_TMPDIR/$man" manifest.1 || die "$c: content differs"
}

@test "MFT list: the extension record holding the last extent stale: its last run grows over the tail, no file lost" {
	judge ext "more records follow them in sequence; its last run grows"
}

@test "MFT list: record 0 and its mirror copy stale: its sizes grow to what the extents and the bitmap hold, no file lost" {
	judge base "hides 401 records in use past it"
}

@test "MFT elsewhere: \$MFT's data in 2 runs, the second not after the first; -n clean" {
	run python3 "$LAB" info "$MVOL"
	[ "$status" -eq 0 ]
	run "$FSCK" -n "$MVOL"
	[ "$status" -eq 0 ] || die "-n exit $status: $output"
	[[ "$output" == *"problems: 0 found"* ]] || die "$output"
	run python3 - "$FSFORGE_TOP/tests/ntfs" "$MVOL" <<-'EOF'
	import sys
	sys.path.insert(0, sys.argv[1])
	import splitidx_lab as S
	runs = S.mft_extents(S.Vol(sys.argv[2]))[0][2]
	print(len(runs), runs[0][0] + runs[0][1], runs[1][0])
	EOF
	read -r n end next <<< "$output"
	[ "$n" -eq 2 ] || die "runs: $output"
	[ "$next" -gt "$end" ] || die "runs: $output"
}

@test "MFT elsewhere: record 0 and its mirror copy stale: the records found in sequence at another cluster become a run, no file lost" {
	judge base "follow in sequence at cluster" "$MVOL" mmanifest.0
}

# Record 0 alone written back from before the MFT grew, and the $MFT
# bitmap's bits past its runs cleared (a partial restore of the volume's
# first clusters from a backup, issue 11 adversary2's lab kind
# o-BASE-gK): its $MFTMirr copy is the newer one (its runs extend record
# 0's and map records in use past them): record 0 is taken from it;
# before, with no bit past the runs there was no tail to look for, the
# mirror was overwritten with the old record 0 and the 100 files dropped.
@test "MFT elsewhere: record 0 and the MFT bitmap stale, the mirror copy newer: record 0 from the mirror, no file lost" {
	judge base0bits "older than its \$MFTMirr copy" "$MVOL" mmanifest.0
}

@test "MFT elsewhere: two FILE records numbered where the runs end: nothing written, exit 4, both named" {
	local before
	cp --sparse=always "$MVOL" d.img
	cp "$MVOL.old" d.img.old
	run python3 "$LAB" twin d.img
	read -r a b <<< "$output"
	python3 "$LAB" stale d.img base > /dev/null
	before=$(sha256sum < d.img)
	run "$FSCK" -a d.img
	echo "$output"
	[ "$status" -eq 4 ] || die "-a exit $status"
	[[ "$output" == *"at clusters $a and $b"* ]] || die "clusters $a and $b not named"
	[ "$(sha256sum < d.img)" = "$before" ] || die "-a wrote"
}

# The same with 3 files written while the clusters after $MFT were held:
# the first record of the MFT's new extent alone is in use (the lowest
# free record a driver takes); before, only two bits in use past the
# allocation were looked at, so the one file there was dropped
# (issue 11, adversary2: a single-record moved tail).
@test "MFT elsewhere: one record in use in the moved extent: found, its file kept" {
	python3 "$LAB" make-moved one.img "$MKFS_NTFS" 3 || die "making the volume failed"
	mkdir -p mnt
	ntfs-3g -o ro one.img mnt || die "ntfs-3g cannot mount the volume"
	python3 "$ALLAB" manifest mnt > "$BATS_FILE_TMPDIR/onemanifest.0"
	umount mnt
	judge base "1 records follow in sequence at cluster" "$PWD/one.img" onemanifest.0
}

# The same stale record 0 with, in a free record of the first run, a
# copy of record 0 as it is now (not in use: a deleted file whose runs
# name the clusters the MFT grew into, as drivers reuse them): before,
# that record's runs counted and the tail was left (exit 4, fatal).
@test "MFT elsewhere: a record not in use naming the run's clusters does not hold the tail back, no file lost" {
	PREP=ghost judge base "follow in sequence at cluster" "$MVOL" mmanifest.0
}

# A copy of the record numbered where the runs end inside $LogFile's data
# (a FILE record in a file's clusters, as an image kept on the volume has
# them): a record in use owns it, so it is no candidate; before, it made
# two candidates (exit 4, fatal).
@test "MFT elsewhere: a FILE record inside a file's clusters is not a candidate, no file lost" {
	PREP=logtwin judge base "follow in sequence at cluster" "$MVOL" mmanifest.0
}

# Answered one by one (-r): no to the moved tail, yes to the data size.
# The run was never written, so record 0's sizes may not grow over it;
# before, record 0 got sizes its runs do not map (a worse volume).
@test "MFT elsewhere: the tail declined, the data size not grown past the runs on disk" {
	local before
	cp --sparse=always "$MVOL" d.img
	cp "$MVOL.old" d.img.old
	python3 "$LAB" stale d.img base > /dev/null
	before=$(sha256sum < d.img)
	run bash -c '{ printf "n\ny\n"; yes n | head -200; } | "$0" -r d.img' "$FSCK"
	echo "$output"
	[ $((status & 4)) -eq 4 ] || die "-r exit $status"
	[[ "$output" == *"hides 101 records in use"* ]] || die "the data size was not asked about"
	[ "$(sha256sum < d.img)" = "$before" ] || die "-r wrote record 0"
}

# 2 MiB clusters (mkfs.ntfs -c 2M) and the bits of the two records past
# $MFT's allocation set in its bitmap's allocation: the volume is read for
# a moved tail in chunks of at least a cluster (before, 2 MiB were read
# into 1 MiB: a heap overflow under ASan).  Nothing is there: nothing to
# fix, ntfsck -n agrees.
@test "MFT elsewhere: 2 MiB clusters, records past the allocation in the bitmap: looked for without overflow" {
	truncate -s 128M c.img
	"$MKFS_NTFS" -q -c 2M c.img
	python3 "$LAB" bits2 c.img > /dev/null
	run "$FSCK" -a c.img
	echo "$output"
	[ "$status" -le 1 ] || die "-a exit $status"
	need_sid
	repair_converged "$FSCK" c.img -a
}

# $MFT's $BITMAP in two extents in two extension records (record 0's list
# names both; tests/ntfs/mft_ext.py with MFT_EXT_SPLIT=1): before, the
# bitmap was not followed (exit 4).  Clean: -n clean, ntfsck -n agrees;
# a free record's bit set: found, repaired to the undamaged image's bytes.
@test "MFT bitmap in two extents in two extension records: checks clean; a wrong bit is repaired" {
	local cs ext
	for cs in 512 4096; do
		truncate -s 64M "m$cs.img"
		"$MKFS_NTFS" -q -c "$cs" "m$cs.img"
		cp "m$cs.img" "d$cs.img"
		ext=$(MFT_EXT_SPLIT=1 python3 "$FSFORGE_TOP/tests/ntfs/mft_ext.py" "m$cs.img")
		read -r ext _ <<< "$ext"
		run "$FSCK" -n "m$cs.img"
		[ "$status" -eq 0 ] || die "cluster size $cs: -n exit $status: $output"
		[[ "$output" == *"problems: 0 found"* ]] || die "cluster size $cs: $output"
		need_sid
		run sid_ntfsck "m$cs.img"
		[ "$status" -eq 0 ] || die "cluster size $cs: ntfsck -n exit $status: $(tail -5 <<<"$output")"
		MFT_EXT_SPLIT=1 python3 "$FSFORGE_TOP/tests/ntfs/mft_ext.py" "d$cs.img" $((ext + 3)) > /dev/null
		run "$FSCK" -n "d$cs.img"
		[ "$status" -eq 4 ] || die "cluster size $cs: damaged -n exit $status: $output"
		[[ "$output" == *'$MFT bitmap differs'*"0 in use but marked free, 1 free but marked in use"* ]] ||
			die "cluster size $cs: $output"
		run "$FSCK" -a "d$cs.img"
		[ "$status" -eq 1 ] || die "cluster size $cs: -a exit $status: $output"
		cmp "m$cs.img" "d$cs.img" || die "cluster size $cs: the repair differs from the undamaged volume"
		repair_converged "$FSCK" "d$cs.img" -a
	done
}

# A large $Extend/$Reparse:$R (700 reparse points: 12 INDX blocks, 3
# levels).  Before, a damaged block was asked about twice (pass 2 and the
# view pass), the view pass rebuilt $R from the entries it could still
# read: the block's keys were lost, the second run found them missing.
# Now pass 2 asks once and the index builder rebuilds $R from the files'
# reparse points.  Expectations: ntfsck -n clean, a second -a changes
# nothing, every reparse point as ntfs-3g read it before.
rjudge() {
	local c=$1 want=$2
	cp --sparse=always "$RVOL" d.img
	python3 "$LAB" r-damage d.img "$c"
	run "$FSCK" -n d.img
	echo "$output"
	[ "$status" -eq 4 ] || die "$c: -n exit $status"
	[[ "$output" == *"$want"* ]] || die "$c: -n does not say \"$want\""
	[[ "$output" != *'$Reparse:$R: index is corrupt'* ]] || die "$c: asked twice"
	run "$FSCK" -a d.img
	echo "$output"
	[ "$status" -eq 1 ] || die "$c: -a exit $status"
	need_sid
	repair_converged "$FSCK" d.img -a
	mkdir -p mnt
	ntfs-3g -o ro d.img mnt || die "$c: ntfs-3g cannot mount the repaired volume"
	python3 "$LAB" reparse-manifest mnt > rmanifest.1
	umount mnt
	cmp "$BATS_FILE_TMPDIR/rmanifest.0" rmanifest.1 || die "$c: reparse points differ"
}

@test "large \$R: 700 reparse points in INDX blocks over 3 levels check clean" {
	run python3 "$LAB" r-shape "$RVOL"
	read -r blocks levels <<< "$output"
	[ "$blocks" -ge 10 ] || die "only $blocks blocks"
	[ "$levels" -ge 3 ] || die "only $levels levels"
	run "$FSCK" -n "$RVOL"
	[ "$status" -eq 0 ] || die "-n exit $status: $output"
	[[ "$output" == *"problems: 0 found"* ]] || die "$output"
	need_sid
	run sid_ntfsck "$RVOL"
	[ "$status" -eq 0 ] || die "ntfsck -n exit $status"
}

@test "large \$R: a leaf block with a bad magic: rebuilt from the files in one -a, no key lost" {
	rjudge magic "index \$R is corrupt (bad magic"
}

@test "large \$R: an entry naming a file without a reparse point: rebuilt from the files, no key lost" {
	rjudge entry "which has no such reparse point"
}

# Key order in the large $R, which only the B+tree walker judges (the set
# of keys is the files', so the comparison with them finds nothing, and
# ntfsck does not read $R): a node block's first separator exchanged with
# the last key of the leaf it points to (that key is no longer below the
# separator: -n only), and a leaf's first two keys exchanged (keys out of
# order in a node: repaired and judged as above).  By hand: pass 2's walk
# of $R names the fault; -a rebuilds $R from the files; the lab's own
# in-order walk finds its 700 keys unsorted after the damage, sorted
# after the repair.
@test "large \$R: keys out of order (a separator, two keys of a leaf): found by the walker, rebuilt in one -a" {
	cp --sparse=always "$RVOL" s.img
	python3 "$LAB" r-damage s.img sep
	run python3 "$LAB" r-sorted s.img
	[ "$output" = "700 unsorted" ] || die "sep: $output"
	run "$FSCK" -n s.img
	echo "$output"
	[ "$status" -eq 4 ] || die "sep: -n exit $status"
	[[ "$output" == *"index \$R is corrupt (a key is not between the separators of the node above)"* ]] ||
		die "sep: -n does not name the separator"
	rjudge swap "index \$R is corrupt (keys out of order in a node)"
	run python3 "$LAB" r-sorted d.img
	[ "$output" = "700 sorted" ] || die "after: $output"
}
