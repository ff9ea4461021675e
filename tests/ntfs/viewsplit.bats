#!/usr/bin/env bats
# fsck.ntfs on a view index whose $INDEX_ALLOCATION and $BITMAP are both
# split over extension records (issue 11): $Extend/$ObjId's $O of 200
# object ids (ntfs-3g), then its allocation and bitmap moved into two
# extension records, each holding one extent of both, and the same for
# the directory o/'s $I30, $Secure's $SII and $SDH (200 descriptors of
# the o/ files; $Secure's list made non-resident) and $Reparse's $R (200
# reparse points of r/) and $Quota's $Q and $O (62 owners, written by
# the lab: ntfs-3g keeps no quotas) (tests/ntfs/viewsplit_lab.py, from
# the format documentation, not libntfs); $O also in three extents, and
# the bitmaps of $O and o/ in three.  The clean volume checks clean (ntfsck -n
# of the sid tree agrees); a key, a VCN or a bitmap bit of the second
# extent damaged is found by -n and rebuilt by one -a in the extents
# where they were; the record of an extent zeroed, the index is rebuilt
# into the record left: a second -n finds nothing, ntfsck -n is clean,
# ntfs-3g reads every object id, a sample of descriptors and reparse
# points, and every file as before the damage.
load ../lib/common

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
source "$FSFORGE_TOP/tests/ntfs/ntfs_helpers.bash"
LAB=$FSFORGE_TOP/tests/ntfs/viewsplit_lab.py
ALLAB=$FSFORGE_TOP/tests/ntfs/attrlist_lab.py

setup_file() {
	need_ntfs3g
	command -v python3 > /dev/null || return 0
	export VOL=$BATS_FILE_TMPDIR/view.img
	python3 "$LAB" make "$VOL" "$MKFS_NTFS" || die "making the volume failed"
	python3 "$LAB" quota "$VOL" 60 > /dev/null || die "growing \$Quota failed"
	cp --sparse=always "$VOL" "$BATS_FILE_TMPDIR/plain.img"
	python3 "$LAB" split "$VOL" > /dev/null || die "splitting \$O failed"
	python3 "$LAB" split "$VOL" dir > /dev/null || die "splitting o/ failed"
	python3 "$LAB" split "$VOL" sii > /dev/null || die "splitting \$SII failed"
	python3 "$LAB" split "$VOL" sdh > /dev/null || die "splitting \$SDH failed"
	python3 "$LAB" split "$VOL" r > /dev/null || die "splitting \$R failed"
	python3 "$LAB" split "$VOL" q > /dev/null || die "splitting \$Q failed"
	python3 "$LAB" split "$VOL" qo > /dev/null || die "splitting \$Quota:\$O failed"
	python3 "$LAB" qkeys "$VOL" > "$BATS_FILE_TMPDIR/quota.0"
	mkdir -p "$BATS_FILE_TMPDIR/mnt"
	ntfs-3g -o ro "$VOL" "$BATS_FILE_TMPDIR/mnt"
	python3 "$LAB" ids "$BATS_FILE_TMPDIR/mnt" > "$BATS_FILE_TMPDIR/ids.0"
	python3 "$LAB" sec "$BATS_FILE_TMPDIR/mnt" > "$BATS_FILE_TMPDIR/sec.0"
	python3 "$ALLAB" manifest "$BATS_FILE_TMPDIR/mnt" > "$BATS_FILE_TMPDIR/manifest.0"
	umount "$BATS_FILE_TMPDIR/mnt"
}

setup() {
	cd_tmp
	need_ntfs3g
	command -v python3 > /dev/null || skip "no python3"
}
teardown() { mountpoint -q mnt 2>/dev/null && umount mnt; return 0; }

have_sid() { chroot "$SID_ROOT" sh -c 'command -v ntfsck' > /dev/null 2>&1; }

@test "split view: \$O's and o/'s allocation and bitmap in 2 extents each, in 2 extension records; 200 ids read by ntfs-3g" {
	run python3 "$LAB" layout "$VOL"
	[ "$status" -eq 0 ] || die "$output"
	[ "$output" = "2 2 2" ] || die "layout: $output"
	run python3 "$LAB" layout "$VOL" dir
	[ "$output" = "2 2 2" ] || die "o/'s layout: $output"
	[ "$(wc -l < "$BATS_FILE_TMPDIR/ids.0")" -eq 200 ] || die "ntfs-3g reads $(wc -l < "$BATS_FILE_TMPDIR/ids.0") ids"
}

@test "split views: \$Secure's \$SII and \$SDH and \$Reparse's \$R in 2 extents each, in extension records; descriptors and reparse points read by ntfs-3g" {
	local k
	for k in sii sdh r; do
		run python3 "$LAB" layout "$VOL" $k
		[ "$status" -eq 0 ] || die "$k: $output"
		[ "$output" = "2 2 2" ] || die "$k's layout: $output"
	done
	# 29 descriptors and 29 reparse points sampled, each its own
	[ "$(cut -d' ' -f2 "$BATS_FILE_TMPDIR/sec.0" | sort -u | wc -l)" -eq 58 ] ||
		die "ntfs-3g reads: $(head -3 "$BATS_FILE_TMPDIR/sec.0")"
}

@test "split view: the clean volume checks clean (-n exit 0, ntfsck -n agrees)" {
	run "$FSCK" -n "$VOL"
	[ "$status" -eq 0 ] || die "-n exit $status: $output"
	[[ "$output" == *"problems: 0 found"* ]] || die "$output"
	if have_sid; then
		run sid_ntfsck "$VOL"
		[ "$status" -eq 0 ] || die "ntfsck -n exit $status: $(tail -5 <<<"$output")"
	fi
}

# What -n says of the index of KIND ("" $ObjId:$O, dir o/, sii, sdh, r).
named() {
	case $1 in
	dir) echo "(/o): directory index is corrupt" ;;
	sii) echo "\$Secure:\$SII: security index is inconsistent" ;;
	sdh) echo "\$Secure:\$SDH: security index is inconsistent" ;;
	r) echo "): index \$R is corrupt" ;;
	q) echo "\$Quota:\$Q: index is corrupt" ;;
	qo) echo "\$Quota:\$O: index is corrupt" ;;
	*) echo "\$ObjId:\$O: index is corrupt" ;;
	esac
}

# ntfs-3g reads the object ids, descriptors, reparse points and files
# (names, contents) of the repaired d.img as it read them before
same_as_before() {
	mkdir -p mnt
	ntfs-3g -o ro d.img mnt || die "ntfs-3g cannot mount the repaired volume"
	python3 "$LAB" ids mnt > ids.1
	python3 "$LAB" sec mnt > sec.1
	python3 "$ALLAB" manifest mnt > manifest.1
	umount mnt
	cmp -s "$BATS_FILE_TMPDIR/ids.0" ids.1 || die "object ids differ: $(diff "$BATS_FILE_TMPDIR/ids.0" ids.1 | head -4)"
	cmp -s "$BATS_FILE_TMPDIR/sec.0" sec.1 || die "descriptors or reparse points differ: $(diff "$BATS_FILE_TMPDIR/sec.0" sec.1 | head -4 | cut -c1-100)"
	cmp -s "$BATS_FILE_TMPDIR/manifest.0" manifest.1 || die "content differs"
	# $Quota's views (read by the lab's own walker; ntfs-3g keeps no
	# quotas): every owner still in both, $O exactly as it was
	python3 "$LAB" qkeys d.img > quota.1 || die "\$Quota unreadable"
	cmp -s <(grep ^O "$BATS_FILE_TMPDIR/quota.0") <(grep ^O quota.1) ||
		die "\$Quota:\$O differs: $(diff <(grep ^O "$BATS_FILE_TMPDIR/quota.0") <(grep ^O quota.1) | head -4)"
	cmp -s <(cut -d' ' -f1,2,6 "$BATS_FILE_TMPDIR/quota.0") <(cut -d' ' -f1,2,6 quota.1) ||
		die "\$Quota:\$Q's owners differ: $(diff <(cut -d' ' -f1,2,6 "$BATS_FILE_TMPDIR/quota.0") <(cut -d' ' -f1,2,6 quota.1) | head -4)"
}

# CASE: damage the second extent of KIND's index; -n finds it, one -a
# rebuilds it
judge() {
	local c=$1 kind=$2 before
	cp --sparse=always "$VOL" d.img
	run python3 "$LAB" damage d.img "$c" $kind
	[ "$status" -eq 0 ] || die "$c: damage failed: $output"
	before=$(sha256sum < d.img)
	run "$FSCK" -n d.img
	[ "$status" -eq 4 ] || die "$c: -n exit $status: $output"
	[[ "$output" == *"$(named "$kind")"* ]] || die "$c: -n does not name the index: $output"
	[ "$(sha256sum < d.img)" = "$before" ] || die "$c: -n wrote"
	run "$FSCK" -a d.img
	[ "$status" -eq 1 ] || die "$c: -a exit $status: $output"
	run "$FSCK" -n d.img
	[ "$status" -eq 0 ] || die "$c: -n after -a: exit $status: $output"
	# the extents are where they were
	run python3 "$LAB" layout d.img $kind
	[ "$output" = "2 2 2" ] || die "$c: layout after -a: $output"
	if have_sid; then
		run sid_ntfsck d.img
		[ "$status" -eq 0 ] || die "$c: ntfsck -n after our -a: exit $status: $(grep -v percent <<<"$output" | tail -5)"
	fi
	same_as_before
}

@test "split view: a key of the second extent out of order: found, rebuilt in place, ids kept" {
	judge key
}

@test "split view: a block of the second extent naming a wrong VCN: found, rebuilt in place, ids kept" {
	judge vcn
}

@test "split view: the bitmap bit of a block of the second extent cleared: found, rebuilt in place, ids kept" {
	judge bit
}

# The extension record holding extent WHICH (0, 1) of both the allocation
# and the bitmap of KIND ("" for $O, "dir" for o/'s $I30) zeroed: the
# index's root is there but its allocation cannot be read whole (before:
# $O not judged and left short of most of its blocks; the first extent
# lost: the rebuild refused, "lacks index attributes", exit 4/5).  -n
# names the index; one -a rebuilds it (from the files' $OBJECT_IDs, the
# children's $FILE_NAMEs) into the surviving extent's record (exit 1);
# a second -n finds nothing, a second -a changes no byte, ntfsck -n is
# clean, ntfs-3g reads all 200 object ids and the files (names and
# contents) as before the damage.
lose() {
	local which=$1 kind=$2 before
	cp --sparse=always "${3:-$VOL}" d.img
	run python3 - "$FSFORGE_TOP/tests/ntfs" d.img "$which" "$kind" <<-'PY'
	import sys
	sys.path.insert(0, sys.argv[1])
	sys.path.insert(0, sys.argv[1] + "/lab")
	import viewsplit_lab as L
	if sys.argv[4] == "dir":
	    L.DIR, L.NAME = True, "$I30"
	elif sys.argv[4]:
	    L.TARGET, L.NAME = sys.argv[4], L.TARGETS[sys.argv[4]][2]
	v = L.Volume(sys.argv[2])
	_, rec, _ = sorted(L.extents(v, L.objid_record(v))[L.AT_ALLOC])[int(sys.argv[3])]
	v.pwrite(v.offset(v.mft_runs, rec * v.rs), bytes(v.rs))
	PY
	[ "$status" -eq 0 ] || die "damage failed: $output"
	run "$FSCK" -n d.img
	[ "$status" -eq 4 ] || die "-n exit $status: $output"
	[[ "$output" == *"$(named "$kind")"* ]] || die "-n does not name the index: $output"
	run "$FSCK" -a d.img
	[ "$status" -eq 1 ] || die "-a exit $status: $output"
	run "$FSCK" -n d.img
	[ "$status" -eq 0 ] || die "-n after -a: exit $status: $output"
	before=$(sha256sum < d.img)
	"$FSCK" -a d.img > /dev/null || die "second -a exit $?"
	[ "$(sha256sum < d.img)" = "$before" ] || die "second -a changed the image"
	if have_sid; then
		run sid_ntfsck d.img
		[ "$status" -eq 0 ] || die "ntfsck -n after our -a: exit $status: $(grep -v percent <<<"$output" | tail -5)"
	fi
	same_as_before
}

@test "split view: the record of \$O's last extent zeroed: \$O rebuilt from the files' object ids, ids kept" {
	lose 1 ""
}

@test "split view: the record of \$O's first extent zeroed: rebuilt in the surviving extent's record, ids kept" {
	lose 0 ""
}

@test "split dir: the record of o/'s first \$I30 extent zeroed: rebuilt in the surviving extent's record, every child kept" {
	lose 0 dir
}

# $Secure with an attribute list (issue 11): its $SII and $SDH each in
# two extension records, the list non-resident (as a volume with
# thousands of descriptors has it; before: $Secure not judged at all).
# ntfs-3g finds each file's descriptor through $SII: the sampled ones
# read the same after the repair.
@test "split \$Secure: a key of \$SII's second extent damaged: found, rebuilt in place, descriptors kept" {
	judge key sii
}

@test "split \$Secure: the record of \$SII's first extent zeroed: rebuilt from \$SDS in the surviving extent's record, descriptors kept" {
	lose 0 sii
}

@test "split \$Secure: the record of \$SDH's last extent zeroed: rebuilt from \$SDS, descriptors kept" {
	lose 1 sdh
}

# $Reparse's $R split the same way (the layout had no test): rebuilt from
# the files' reparse points
@test "split \$R: the bitmap bit of a block of its second extent cleared: found, rebuilt in place, reparse points kept" {
	judge bit r
}

@test "split \$R: the record of its last extent zeroed: rebuilt from the files' reparse points, kept" {
	lose 1 r
}

# $O's allocation in three extents, each in a record of its own, its
# bitmap in two (in the first and the last record); the record of the
# middle extent zeroed: the allocation's extents do not join while the
# bitmap's do (before: the rebuild refused, "its extent at VCN 16 should
# start at VCN 8", exit 5).  The index is rebuilt in new clusters into
# the first extents' records, the later extents of both dropped, the
# clusters of all of them freed.
@test "split view: \$O's middle allocation extent lost, its bitmap in two extents: rebuilt, ids kept" {
	cp --sparse=always "$BATS_FILE_TMPDIR/plain.img" three.img
	run python3 "$LAB" split3 three.img
	[ "$status" -eq 0 ] || die "split3: $output"
	run python3 "$LAB" layout three.img
	[ "$output" = "3 2 3" ] || die "layout: $output"
	lose 1 "" three.img
}

# o/'s $I30 allocation in three extents: block 0 (and the bitmap's first
# extent) in one record, block 1 and the rest in a second record that
# also holds the bitmap's second extent; the first record zeroed.  The
# second extent takes the first's place, and its record holds a later
# extent as well (before: the rebuild refused, "MFT record N holds its
# first and a later index extent", exit 5, then 4): the index is rebuilt
# into a new allocation in that record, its later extents dropped from
# it and their clusters freed; judged as above (ntfsck -n clean, every
# child and content read by ntfs-3g as before).
@test "split dir: o/'s first \$I30 extent lost, the record taking its place holding a later one too: rebuilt, every child kept" {
	cp --sparse=always "$BATS_FILE_TMPDIR/plain.img" shared.img
	run python3 "$LAB" split3shared shared.img dir
	[ "$status" -eq 0 ] || die "split3shared: $output"
	run python3 "$LAB" layout shared.img dir
	[ "$output" = "3 2 2" ] || die "layout: $output"
	# the layout itself is sound (ntfsck -n agrees)
	run "$FSCK" -n shared.img
	[ "$status" -eq 0 ] || die "-n on the undamaged layout: exit $status: $output"
	if have_sid; then
		run sid_ntfsck shared.img
		[ "$status" -eq 0 ] || die "ntfsck -n on the undamaged layout: exit $status: $(tail -3 <<<"$output")"
	fi
	lose 0 dir shared.img
}

# the record of the last of three extents zeroed (both the allocation's
# and the bitmap's last extents): the two left join but pass 1 cut the
# size to them and the index no longer fits in them (before: refused,
# "the index needs 5 blocks, its allocation in several extents holds 2",
# exit 5): rebuilt into a new allocation the same way
@test "split view: \$O's last of three allocation extents lost, the rest too small for it: rebuilt, ids kept" {
	cp --sparse=always "$BATS_FILE_TMPDIR/plain.img" three.img
	python3 "$LAB" split3 three.img > /dev/null || die "split3 failed"
	lose 2 "" three.img
}

# $Quota's $Q and $O of 62 owners each (the lab writes them: ntfs-3g
# keeps no quotas), each split over two extension records.  An extent
# lost with its record: before, not judged (-n clean, the entries of the
# lost block gone for good).  Now the view is rebuilt from what its root
# and the blocks left hold, and what the other view knows: $O from $Q's
# SIDs exactly; $Q's lost owners from $O, with the default entry's limits
# and no usage, the default entry (made again when lost) marked out of
# date so that Windows counts the usage again.
@test "split \$Quota: the record of \$Q's first extent zeroed (the default entry with it): rebuilt, every owner kept" {
	lose 0 q
	run python3 "$LAB" qkeys d.img
	[[ "${lines[0]}" == "Q 1 201 -1 -1 " ]] || die "default entry: ${lines[0]}"
}

@test "split \$Quota: the record of \$O's last extent zeroed: rebuilt from \$Q, the same entries" {
	lose 1 qo
}

# The bitmap in three extents (a cluster each, attribute-list entries at
# VCN 0, 1, 2) and the allocation's first extent lost with its record
# (before: the promotion of the allocation's second extent refused, "its
# attribute list lacks index attributes", -a exit 5): the index is
# rebuilt into a new allocation in the surviving record, every later
# extent of the bitmap dropped and its cluster freed.  o/'s bitmap's
# first extent lost with the allocation's (its two later ones promoted
# and dropped); $O's bitmap whole in the surviving record (its first
# extent kept, the two later dropped).  Judged as above.
@test "split dir: o/'s first \$I30 extent lost, its bitmap in three extents: rebuilt, every child kept" {
	cp --sparse=always "$BATS_FILE_TMPDIR/plain.img" bits.img
	run python3 "$LAB" splitbits bits.img dir
	[ "$status" -eq 0 ] || die "splitbits: $output"
	run python3 "$LAB" layout bits.img dir
	[ "$output" = "2 3 2" ] || die "layout: $output"
	# the layout itself is sound (ntfsck -n agrees)
	run "$FSCK" -n bits.img
	[ "$status" -eq 0 ] || die "-n on the undamaged layout: exit $status: $output"
	if have_sid; then
		run sid_ntfsck bits.img
		[ "$status" -eq 0 ] || die "ntfsck -n on the undamaged layout: exit $status: $(tail -3 <<<"$output")"
	fi
	lose 0 dir bits.img
}

@test "split view: \$O's first extent lost, its bitmap's three extents in the surviving record: rebuilt, ids kept" {
	cp --sparse=always "$BATS_FILE_TMPDIR/plain.img" bits.img
	run python3 "$LAB" splitbitslast bits.img
	[ "$status" -eq 0 ] || die "splitbitslast: $output"
	run python3 "$LAB" layout bits.img
	[ "$output" = "2 3 2" ] || die "layout: $output"
	lose 0 "" bits.img
}
