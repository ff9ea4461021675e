#!/usr/bin/env bats
# fsck.ntfs -z UNDO saves every block before its first overwrite and
# fsck.ntfs --undo UNDO DEVICE puts them back (issue 10 item 10).  The
# proof is independent of the tool: sha256 of the damaged image before the
# repair and after the undo.
load ../lib/common

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
CASES=$FSFORGE_TOP/tests/ntfs/cases

setup() { cd_tmp; }

unpack() { xz -dc "$CASES/$1/image.xz" > "$2"; }

@test "-a -z then --undo restores every f_ case byte for byte" {
	n=0
	for d in "$CASES"/f_*/; do
		name=$(basename "$d")
		unpack "$name" v.img
		before=$(sha256sum < v.img)
		rm -f v.undo
		run "$FSCK" -a -z v.undo v.img
		# 0: only the dirty flag (housekeeping), 1: errors corrected
		[ "$status" -le 1 ] || die "$name: -a exit $status"
		[[ $output == *"undo with: fsck.ntfs --undo v.undo v.img"* ]] || die "$name: no hint"
		[ "$(sha256sum < v.img)" != "$before" ] || die "$name: -a changed nothing"
		run "$FSCK" --undo v.undo v.img
		[ "$status" -eq 0 ] || die "$name: --undo exit $status: $output"
		[ "$(sha256sum < v.img)" = "$before" ] || die "$name: not restored"
		# applied twice: the image is no longer what the run left
		run "$FSCK" --undo v.undo v.img
		[ "$status" -eq 8 ] || die "$name: second --undo exit $status"
		[[ $output == *"does not match undo file v.undo"* ]] || die "$name: $output"
		[ "$(sha256sum < v.img)" = "$before" ] || die "$name: second --undo wrote"
		n=$((n + 1))
	done
	[ "$n" -ge 8 ]
}

@test "-a -z on a clean volume (nothing written): --undo accepts the undo file and changes nothing" {
	"$FSFORGE_BUILDDIR/mkfs/mkfs.ntfs" -q -F v.img 32768 > /dev/null
	before=$(sha256sum < v.img)
	run "$FSCK" -a -z v.undo v.img
	[ "$status" -eq 0 ]
	[ "$(sha256sum < v.img)" = "$before" ]
	run "$FSCK" --undo v.undo v.img
	[ "$status" -eq 0 ]
	[[ $output == *"restored 0 blocks from undo file v.undo"* ]]
	[ "$(sha256sum < v.img)" = "$before" ]
}

@test "public corpus: -a -z then --undo restores every image byte for byte" {
	corpus=$FSFORGE_TOP/tests/ntfs/corpus
	[ -d "$corpus/created_manually" ] || die "public corpus missing from the tree"
	n=0
	for t in "$corpus"/created_manually/*/ntfs.img.tar.xz; do
		name=$(basename "$(dirname "$t")")
		rm -f ntfs.img v.undo
		tar -xJf "$t"
		before=$(sha256sum < ntfs.img)
		rc=0; "$FSCK" -a -q -z v.undo ntfs.img > /dev/null 2>&1 || rc=$?
		[ "$rc" -le 1 ] || die "$name: -a exit $rc"
		[ "$(sha256sum < ntfs.img)" != "$before" ] || die "$name: -a changed nothing"
		run "$FSCK" --undo v.undo ntfs.img
		[ "$status" -eq 0 ] || die "$name: --undo exit $status: $output"
		[ "$(sha256sum < ntfs.img)" = "$before" ] || die "$name: not restored"
		n=$((n + 1))
	done
	[ "$n" -ge 20 ]
}

@test "an undo file applied to another image is refused and that image is unchanged" {
	unpack f_orphans a.img
	unpack f_logfile_dirty b.img
	run "$FSCK" -a -z a.undo a.img
	[ "$status" -eq 1 ]
	# same size, other content (damaged, not repaired)
	other=$(sha256sum < b.img)
	run "$FSCK" --undo a.undo b.img
	[ "$status" -eq 8 ]
	[[ $output == *"b.img does not match undo file a.undo"* ]]
	[[ $output == *"nothing written"* ]]
	[ "$(sha256sum < b.img)" = "$other" ]
	# the same volume repaired too: the blocks agree less, still refused
	run "$FSCK" -a b.img
	[ "$status" -le 1 ]
	other=$(sha256sum < b.img)
	run "$FSCK" --undo a.undo b.img
	[ "$status" -eq 8 ]
	[ "$(sha256sum < b.img)" = "$other" ]
	# another size
	head -c 8M a.img > c.img
	other=$(sha256sum < c.img)
	run "$FSCK" --undo a.undo c.img
	[ "$status" -eq 8 ]
	[[ $output == *"is for a device of 16777216 bytes; c.img has 8388608"* ]]
	[ "$(sha256sum < c.img)" = "$other" ]
	# -n verifies only
	repaired=$(sha256sum < a.img)
	run "$FSCK" --undo a.undo -n a.img
	[ "$status" -eq 0 ]
	[[ $output == *"matches"* ]]
	[ "$(sha256sum < a.img)" = "$repaired" ]
}

@test "a truncated or damaged undo file is refused and the image is unchanged" {
	unpack f_orphans v.img
	orig=$(sha256sum < v.img)
	run "$FSCK" -a -z v.undo v.img
	[ "$status" -eq 1 ]
	repaired=$(sha256sum < v.img)
	size=$(stat -c %s v.undo)
	# truncated: the index at the end is gone
	head -c $((size - 100)) v.undo > t.undo
	run "$FSCK" --undo t.undo v.img
	[ "$status" -eq 8 ]
	[[ $output == *"t.undo is truncated or its index is damaged"* ]]
	[ "$(sha256sum < v.img)" = "$repaired" ]
	# one byte of saved data flipped (in the first record, after its header)
	cp v.undo d.undo
	printf '\x5a' | dd of=d.undo bs=1 seek=$((4096 + 32 + 100)) conv=notrunc status=none
	cmp -s v.undo d.undo && die "the byte was already 0x5a"
	run "$FSCK" --undo d.undo v.img
	[ "$status" -eq 8 ]
	[[ $output == *"d.undo: saved block"*"is damaged"* ]]
	[ "$(sha256sum < v.img)" = "$repaired" ]
	# header damaged; not an undo file at all
	cp v.undo h.undo
	printf '\x00' | dd of=h.undo bs=1 seek=19 conv=notrunc status=none
	cmp -s v.undo h.undo && die "the byte was already 0"
	run "$FSCK" --undo h.undo v.img
	[ "$status" -eq 8 ]
	[[ $output == *"header is damaged"* ]]
	run "$FSCK" --undo v.img v.undo
	[ "$status" -eq 8 ]
	[[ $output == *"v.img is not an undo file"* ]]
	[ "$(sha256sum < v.img)" = "$repaired" ]
	# with --force the truncated file still gives back what it holds
	run "$FSCK" --undo t.undo --force v.img
	[ "$status" -eq 0 ]
	[ "$(sha256sum < v.img)" = "$orig" ]
}

@test "-n -z writes nothing and creates no undo file; -z on the image itself is refused" {
	unpack f_orphans v.img
	before=$(sha256sum < v.img)
	run "$FSCK" -n -z v.undo v.img
	[ "$status" -eq 4 ]
	[ ! -e v.undo ]
	[ "$(sha256sum < v.img)" = "$before" ]
	run "$FSCK" -a -z v.img v.img
	[ "$status" -eq 8 ]
	[[ $output == *"undo file v.img is the device being repaired"* ]]
	ln v.img hard.img
	run "$FSCK" -a -z hard.img v.img
	[ "$status" -eq 8 ]
	[ "$(sha256sum < v.img)" = "$before" ]
	run "$FSCK" --undo v.img v.img
	[ "$status" -eq 8 ]
	[ "$(sha256sum < v.img)" = "$before" ]
	run "$FSCK" --force -a v.img
	[ "$status" -eq 16 ]
}
