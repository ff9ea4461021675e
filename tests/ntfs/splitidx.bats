#!/usr/bin/env bats
# fsck.ntfs on attributes split into extents in several extension records
# (named by an attribute list), as ntfs-3g leaves them on fragmented free
# space (tests/ntfs/splitidx_lab.py; the layouts are read by the lab's own
# parser, not libntfs):
#  - a large directory whose $I30 $INDEX_ALLOCATION has 3 extents: the
#    clean volume checks clean (ntfsck -n of the sid tree agrees); damage
#    to an INDX block of the second extent is found by -n and repaired by
#    one -a that keeps every extent where the list says: ntfs-3g then
#    reads the same names and contents as before the damage, ntfsck -n
#    finds nothing, a second -a changes no byte;
#  - the record of big/'s middle extent zeroed: one -a rebuilds the index
#    in new clusters (exit 1), every child kept;
#  - the record holding big/'s $INDEX_ROOT, or its $BITMAP, zeroed: one -a
#    gives big/ a new one and its list an entry for it, every child kept;
#  - an $MFT whose $DATA has 2 extents (record 0's list, the second in
#    reserved record 15): the records past the first extent are read:
#    the clean volume checks clean, a damaged record there is found.
load ../lib/common

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
source "$FSFORGE_TOP/tests/ntfs/ntfs_helpers.bash"
LAB=$FSFORGE_TOP/tests/ntfs/splitidx_lab.py
ALLAB=$FSFORGE_TOP/tests/ntfs/attrlist_lab.py

setup_file() {
	need_ntfs3g
	command -v python3 > /dev/null || return 0
	export VOL=$BATS_FILE_TMPDIR/split.img
	python3 "$LAB" make "$VOL" "$MKFS_NTFS" || die "making the volume failed"
	mkdir -p "$BATS_FILE_TMPDIR/mnt"
	ntfs-3g -o ro "$VOL" "$BATS_FILE_TMPDIR/mnt"
	python3 "$ALLAB" manifest "$BATS_FILE_TMPDIR/mnt" > "$BATS_FILE_TMPDIR/manifest.0"
	umount "$BATS_FILE_TMPDIR/mnt"
	export MVOL=$BATS_FILE_TMPDIR/mft.img
	python3 "$LAB" make-mft "$MVOL" "$MKFS_NTFS" || die "making the MFT volume failed"
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

have_sid() { chroot "$SID_ROOT" sh -c 'command -v ntfsck' > /dev/null 2>&1; }

@test "split index: big/'s allocation has 3 or more extents in as many records" {
	run python3 "$LAB" layout "$VOL"
	[ "$status" -eq 0 ]
	read -r extents records blocks <<< "$output"
	[ "$extents" -ge 3 ] || die "only $extents extents: $output"
	[ "$records" -eq "$extents" ] || die "extents in $records records: $output"
	[ "$blocks" -ge 100 ] || die "only $blocks blocks: $output"
}

@test "split index: the clean volume checks clean (-n exit 0, ntfsck -n agrees)" {
	run "$FSCK" -n "$VOL"
	[ "$status" -eq 0 ] || die "-n exit $status: $output"
	[[ "$output" == *"problems: 0 found"* ]] || die "$output"
	if have_sid; then
		run sid_ntfsck "$VOL"
		[ "$status" -eq 0 ] || die "ntfsck -n exit $status: $(tail -5 <<<"$output")"
	fi
}

# CASE: damage an INDX block of the second extent, -n finds it, -a
# repairs it; judged by ntfsck -n, ntfs-3g's manifest, a second -a
judge() {
	local c=$1 before
	cp --sparse=always "$VOL" d.img
	run python3 "$LAB" damage d.img "$c"
	[ "$status" -eq 0 ] || die "$c: damage failed: $output"
	python3 "$LAB" layout d.img > layout.0
	# the damage is real for a reader that is not ours: ntfs-3g no
	# longer lists the same names and contents
	mkdir -p mnt
	if ntfs-3g -o ro d.img mnt; then
		python3 "$ALLAB" manifest mnt > manifest.d 2>&1 || echo "ntfs-3g: error" >> manifest.d
		umount mnt
		if cmp -s "$BATS_FILE_TMPDIR/manifest.0" manifest.d; then
			die "$c: ntfs-3g sees no damage"
		fi
	fi
	before=$(sha256sum < d.img)
	run "$FSCK" -n d.img
	[ "$status" -eq 4 ] || die "$c: -n exit $status: $output"
	[[ "$output" == *"/big"* ]] || die "$c: -n does not name big/: $output"
	[ "$(sha256sum < d.img)" = "$before" ] || die "$c: -n wrote"
	run "$FSCK" -a d.img
	[ "$status" -eq 1 ] || die "$c: -a exit $status: $output"
	run "$FSCK" -n d.img
	[ "$status" -eq 0 ] || die "$c: -n after -a: exit $status: $output"
	before=$(sha256sum < d.img)
	"$FSCK" -a d.img > /dev/null || die "$c: second -a exit $?"
	[ "$(sha256sum < d.img)" = "$before" ] || die "$c: second -a changed the image"
	# the extents are where they were, as the list says
	python3 "$LAB" layout d.img > layout.1
	cmp -s layout.0 layout.1 || die "$c: layout $(cat layout.0) became $(cat layout.1)"
	if have_sid; then
		run sid_ntfsck d.img
		[ "$status" -eq 0 ] || die "$c: ntfsck -n after our -a: exit $status: $(grep -v percent <<<"$output" | tail -5)"
	fi
	mkdir -p mnt
	ntfs-3g -o ro d.img mnt || die "$c: ntfs-3g cannot mount the repaired volume"
	python3 "$ALLAB" manifest mnt > manifest.1
	umount mnt
	cmp -s "$BATS_FILE_TMPDIR/manifest.0" manifest.1 || die "$c: content differs"
}

@test "split index: an INDX block of the second extent with a bad magic: found, rebuilt, nothing lost" {
	judge magic
}

@test "split index: a torn INDX block of the second extent: found, rebuilt, nothing lost" {
	judge torn
}

@test "split index: an entry of the second extent naming a free record: found, rebuilt, nothing lost" {
	judge key
}

@test "split MFT: \$MFT's data has 2 or more extents in as many records, files in use past the first" {
	run python3 "$LAB" mft-layout "$MVOL"
	[ "$status" -eq 0 ]
	read -r extents records nrecords first used <<< "$output"
	[ "$extents" -ge 2 ] || die "only $extents extents: $output"
	[ "$records" -eq "$extents" ] || die "extents in $records records: $output"
	[ "$first" -gt 16 ] || die "last extent starts at record $first: $output"
	[ "$used" -ge 100 ] || die "only $used records in use past the first extent: $output"
	[ "$nrecords" -gt "$first" ] || die "$output"
}

@test "split MFT: the clean volume checks clean (-n exit 0, every record counted, ntfsck -n agrees)" {
	run python3 "$LAB" mft-layout "$MVOL"
	[ "$status" -eq 0 ]
	read -r _ _ nrecords _ _ <<< "$output"
	run "$FSCK" -n "$MVOL"
	[ "$status" -eq 0 ] || die "-n exit $status: $output"
	[[ "$output" == *"problems: 0 found"* ]] || die "$output"
	# as many records as $MFT's data size holds (read by the parser)
	[[ "$output" == *": $nrecords MFT records;"* ]] || die "not $nrecords records: $output"
	if have_sid; then
		run sid_ntfsck "$MVOL"
		[ "$status" -eq 0 ] || die "ntfsck -n exit $status: $(tail -5 <<<"$output")"
	fi
}

@test "split MFT: the same on a volume made by mkntfs (sid): -n clean, ntfsck -n agrees" {
	have_sid || skip "no sid tree"
	run python3 "$LAB" make-mft k.img "sid:$SID_ROOT"
	[ "$status" -eq 0 ] || die "making the volume failed: $output"
	run python3 "$LAB" mft-layout k.img
	[ "$status" -eq 0 ]
	read -r extents _ nrecords _ used <<< "$output"
	[ "$extents" -ge 2 ] || die "only $extents extents: $output"
	[ "$used" -ge 100 ] || die "only $used records in use past the first extent: $output"
	run "$FSCK" -n k.img
	[ "$status" -eq 0 ] || die "-n exit $status: $output"
	[[ "$output" == *": $nrecords MFT records;"* ]] || die "not $nrecords records: $output"
	run sid_ntfsck k.img
	[ "$status" -eq 0 ] || die "ntfsck -n exit $status: $(tail -5 <<<"$output")"
}

# CASE: damage a file record past $MFT's first extent; -n names it, -a
# repairs; LOST: whether the file may be lost (its path then left out)
mjudge() {
	local c=$1 lost=$2 rec path before
	cp --sparse=always "$MVOL" d.img
	run python3 "$LAB" damage-mft d.img "$c"
	[ "$status" -eq 0 ] || die "$c: damage failed: $output"
	read -r rec path <<< "$output"
	run "$FSCK" -n d.img
	[ "$status" -eq 4 ] || die "$c: -n exit $status: $output"
	[[ "$output" == *"MFT record $rec:"* ]] || die "$c: -n does not name record $rec: $output"
	run "$FSCK" -a d.img
	[ "$status" -eq 1 ] || die "$c: -a exit $status: $output"
	run "$FSCK" -n d.img
	[ "$status" -eq 0 ] || die "$c: -n after -a: exit $status: $output"
	before=$(sha256sum < d.img)
	"$FSCK" -a d.img > /dev/null || die "$c: second -a exit $?"
	[ "$(sha256sum < d.img)" = "$before" ] || die "$c: second -a changed the image"
	if have_sid; then
		run sid_ntfsck d.img
		[ "$status" -eq 0 ] || die "$c: ntfsck -n after our -a: exit $status: $(grep -v percent <<<"$output" | tail -5)"
	fi
	mkdir -p mnt
	ntfs-3g -o ro d.img mnt || die "$c: ntfs-3g cannot mount the repaired volume"
	python3 "$ALLAB" manifest mnt > manifest.1
	umount mnt
	python3 - "$BATS_FILE_TMPDIR/mmanifest.0" manifest.1 "$lost" "$path" <<-'EOF' || die "$c: content differs"
	import json, sys
	want = json.load(open(sys.argv[1]))
	got = json.load(open(sys.argv[2]))
	if sys.argv[3] == "lost":
	    want.pop(sys.argv[4])
	bad = sorted(p for p in set(want) | set(got) if want.get(p) != got.get(p))
	if bad:
	    print("differs:", bad[:10], len(bad))
	    sys.exit(1)
	EOF
}

@test "split MFT: a torn record past the first extent: found, its stride restored, nothing lost" {
	mjudge torn kept
}

@test "split MFT: a record past the first extent with bytes in use past its end: found, set back to the end marker, nothing lost" {
	mjudge used kept
}

@test "split MFT: record 0's list entry for the later extent malformed: the list rebuilt, every record read after" {
	mjudge list kept
	run python3 "$LAB" mft-layout d.img
	[ "$status" -eq 0 ]
	read -r extents _ nrecords _ _ <<< "$output"
	[ "$extents" -ge 2 ] || die "the list no longer names the extents: $output"
	run "$FSCK" -n d.img
	[[ "$output" == *": $nrecords MFT records;"* ]] || die "not $nrecords records: $output"
}

@test "split MFT: the record holding a later extent of \$MFT's data destroyed: named, nothing written (exit 4)" {
	local before
	cp --sparse=always "$MVOL" d.img
	run python3 "$LAB" damage-mft d.img ext
	[ "$status" -eq 0 ] || die "damage failed: $output"
	read -r rec _ <<< "$output"
	before=$(sha256sum < d.img)
	run "$FSCK" -a d.img
	[ "$status" -eq 4 ] || die "-a exit $status: $output"
	[[ "$output" == *"MFT record $rec holding its extent"* ]] || die "record $rec not named: $output"
	[ "$(sha256sum < d.img)" = "$before" ] || die "-a wrote"
}

# The record holding big/'s second $I30 extent (a middle one of 3)
# zeroed: its clusters are lost, the extents no longer join.  The gap is
# never made sparse (a hole in an index allocation is unreadable; only a
# user file's $DATA may be sparse); one -a rebuilds big/'s index from its
# children's $FILE_NAMEs in clusters free in the computed bitmap, the
# later extent dropped with the attribute list's entry for it (exit 1;
# before, the rebuild refused: exit 5).  Judged by ntfs-3g (the manifest,
# contents included, equals the one before the damage: every child
# listed, no file's clusters overwritten), ntfsck -n, a second -n, and
# the lab's own parser: no $I30 extent of big/ has the sparse flag.
@test "split index: the second extent's record zeroed: big/'s index rebuilt in new clusters, every child kept, not made sparse" {
	local before
	cp --sparse=always "$VOL" d.img
	run python3 - "$FSFORGE_TOP/tests/ntfs" d.img <<-'PY'
	import sys
	sys.path.insert(0, sys.argv[1])
	import splitidx_lab as S
	v = S.Vol(sys.argv[2])
	vcn, rec, _ = v.alloc_extents(v.lookup_dir("big"))[1]
	at = v.g.rec_off(rec)
	v.img[at:at + v.g.rs] = bytes(v.g.rs)
	v.save()
	PY
	[ "$status" -eq 0 ] || die "damage failed: $output"
	run "$FSCK" -n d.img
	[ "$status" -eq 4 ] || die "-n exit $status: $output"
	[[ "$output" == *"(/big): directory index is corrupt"* ]] || die "-n does not name big/: $output"
	run "$FSCK" -a d.img
	[ "$status" -eq 1 ] || die "-a exit $status: $output"
	[[ "$output" != *"attribute 0xa0"*"made sparse"* ]] || die "made sparse: $output"
	run "$FSCK" -n d.img
	[ "$status" -eq 0 ] || die "-n after -a: exit $status: $output"
	before=$(sha256sum < d.img)
	"$FSCK" -a d.img > /dev/null || die "second -a exit $?"
	[ "$(sha256sum < d.img)" = "$before" ] || die "second -a changed the image"
	if have_sid; then
		run sid_ntfsck d.img
		[ "$status" -eq 0 ] || die "ntfsck -n after our -a: exit $status: $(grep -v percent <<<"$output" | tail -5)"
	fi
	mkdir -p mnt
	ntfs-3g -o ro d.img mnt || die "ntfs-3g cannot mount the repaired volume"
	python3 "$ALLAB" manifest mnt > manifest.1
	umount mnt
	cmp -s "$BATS_FILE_TMPDIR/manifest.0" manifest.1 || die "content differs"
	run python3 - "$FSFORGE_TOP/tests/ntfs/lab" d.img <<-'PY'
	import struct, sys
	sys.path.insert(0, sys.argv[1])
	import ntfsparse as P
	img = bytearray(open(sys.argv[2], "rb").read())
	g = P.Geometry(img)
	n = 0
	for r in range(g.nrecords):
	    at = g.rec_off(r)
	    rec = P.unfix(img[at:at + g.rs])
	    if rec[:4] != b"FILE" or not struct.unpack_from("<H", rec, 0x16)[0] & 1:
	        continue
	    for o, t, name, nr in P.attrs(rec):
	        if t == 0xa0 and struct.unpack_from("<H", rec, o + 0x0c)[0] & 0x8000:
	            n += 1
	print(n)
	PY
	[ "$status" -eq 0 ] || die "parse failed: $output"
	[ "$output" = 0 ] || die "$output sparse index allocation extents"
}

# The extension record holding big/'s $INDEX_ROOT (or its $BITMAP) zeroed:
# the names are still known from the children's $FILE_NAMEs.  One -a
# gives big/ a new attribute in the record of its list with the most room
# and the list an entry for it, the dead record's entry dropped (exit 1;
# before, the rebuild refused: "its attribute list lacks index
# attributes", exit 5).  Judged by ntfs-3g (the manifest, contents
# included, equals the one before the damage), ntfsck -n, a second -n and
# a second -a that changes no byte.  (ntfsck -a of the sid tree aborts on
# the lost root: "realloc(): invalid next size".)
lost_holder_case() {
	local type=$1 before
	cp --sparse=always "$VOL" d.img
	run python3 - "$FSFORGE_TOP/tests/ntfs" "$FSFORGE_TOP/tests/ntfs/lab" d.img "$type" <<-'PY'
	import sys
	sys.path.insert(0, sys.argv[1])
	sys.path.insert(0, sys.argv[2])
	import splitidx_lab as S
	import ntfsparse as P
	v = S.Vol(sys.argv[3])
	d = v.lookup_dir("big")
	rec = [ref & 0xFFFFFFFFFFFF for t, nm, vcn, ref in P.list_entries(P.list_value(v.img, v.g, v.rec(d)))
	       if t == int(sys.argv[4], 0) and nm == "$I30" and vcn == 0]
	if len(rec) != 1 or rec[0] == d:
	    sys.exit("the attribute is not in an extension record: %s" % rec)
	at = v.g.rec_off(rec[0])
	v.img[at:at + v.g.rs] = bytes(v.g.rs)
	v.save()
	PY
	[ "$status" -eq 0 ] || die "damage failed: $output"
	run "$FSCK" -n d.img
	[ "$status" -eq 4 ] || die "-n exit $status: $output"
	[[ "$output" == *"(/big): directory index is corrupt"* ]] || die "-n does not name big/: $output"
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
	mkdir -p mnt
	ntfs-3g -o ro d.img mnt || die "ntfs-3g cannot mount the repaired volume"
	python3 "$ALLAB" manifest mnt > manifest.1
	umount mnt
	cmp -s "$BATS_FILE_TMPDIR/manifest.0" manifest.1 || die "content differs"
}

@test "split index: the record holding big/'s \$INDEX_ROOT zeroed: a new root, every child kept" {
	lost_holder_case 0x90
}

@test "split index: the record holding big/'s \$BITMAP zeroed: a new bitmap, every child kept" {
	lost_holder_case 0xb0
}
