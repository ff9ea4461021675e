#!/usr/bin/env bats
# fsck.ntfs on an $I30 index with an empty leaf: an INDX block below the
# root that holds nothing but its end entry.  ntfs-3g and the Linux
# driver never leave one (they free the block and drop its pointer);
# ntfsprogs-plus ntfsck reports it.  The damage (emptyleaf_damage.py,
# independent of libntfs) keeps the tree whole: every name keeps its
# entry.  Oracles that are not ours: ntfsck -n (sid) reports the damaged
# volume and finds the repaired one clean; ntfs-3g shows the manifest
# taken before the damage.  Ours must converge: after -a, -n exits 0 and
# a second -a changes no byte.
load ../lib/common

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
source "$FSFORGE_TOP/tests/ntfs/ntfs_helpers.bash"
DAMAGE="python3 $FSFORGE_TOP/tests/ntfs/emptyleaf_damage.py"

# base.img: /d with 300 small files of which 60 were deleted (blocks of
# its allocation freed by ntfs-3g; 3 levels), /e with 200 files, all
# deleted (a small root again, its allocation left); their record numbers
setup_file() {
	local m=$BATS_FILE_TMPDIR/mnt
	need_ntfs3g
	cd "$BATS_FILE_TMPDIR" || return 1
	mkdir -p "$m"
	truncate -s 16M base.img
	"$MKFS_NTFS" -q -F base.img
	ntfs-3g base.img "$m"
	mkdir "$m/d" "$m/e"
	for i in $(seq -f "%03g" 1 300); do echo "$i" > "$m/d/file$i"; done
	(cd "$m/d" && seq -f "file%03g" 100 159 | xargs rm)
	for i in $(seq -f "%03g" 1 200); do echo "$i" > "$m/e/file$i"; done
	rm "$m"/e/*
	umount "$m"
	ntfs-3g -o ro base.img "$m"
	"$LIB/manifest" "$m" --no-xattrs > base.manifest
	stat -c %i "$m/d" > d.ino
	stat -c %i "$m/e" > e.ino
	umount "$m"
	for x in d e; do
		$DAMAGE base.img "$(cat $x.ino)" tree > $x.tree || return 1
	done
}

setup() { cd_tmp; }

# Damage a copy of base.img, or of image $3 (DIR, the patcher's mode)
# and repair it with one -a -z (exit 1, the leaf named); -n then exits 0,
# a second -a changes no byte, ntfsck -n (sid) is clean, --undo gives the
# damaged volume back; ntfs-3g shows the manifest of before
damage_repair() {
	need_sid
	cp "${3:-$BATS_FILE_TMPDIR/base.img}" image
	run $DAMAGE image "$(cat "$BATS_FILE_TMPDIR/$1.ino")" "$2"
	[ "$status" -eq 0 ] || die "damage: $output"
	cp image damaged.img
	run "$FSCK" -a -z undo image
	[ "$status" -eq 1 ] || die "-a exit $status: $output"
	[[ $output == *"is a leaf with no entry: dropped from the tree. FIXED"* ]] || die "$output"
	repair_converged "$FSCK" image -a
	# every write went through the undo layer
	cp image repaired.img
	run "$FSCK" --undo undo repaired.img
	[ "$status" -eq 0 ] || die "--undo exit $status: $output"
	cmp repaired.img damaged.img || die "--undo did not restore the damaged volume"
	mkdir mnt
	ntfs-3g -o ro image mnt || die "ntfs-3g cannot mount the repaired volume"
	"$LIB/manifest" mnt --no-xattrs > manifest
	umount mnt
	diff -u "$BATS_FILE_TMPDIR/base.manifest" manifest || die "manifest differs"
}

# the tree of DIR as before the damage: every key in the node it was in
same_tree() {
	$DAMAGE image "$(cat "$BATS_FILE_TMPDIR/$1.ino")" tree > tree
	diff -u "$BATS_FILE_TMPDIR/$1.tree" tree || die "the tree differs"
}

@test "empty leaf: -n and ntfsck -n report it, -n writes nothing" {
	need_sid
	cp "$BATS_FILE_TMPDIR/base.img" image
	run "$FSCK" -n image
	[ "$status" -eq 0 ] || die "clean volume: -n exit $status: $output"
	run $DAMAGE image "$(cat "$BATS_FILE_TMPDIR/d.ino")"
	[ "$status" -eq 0 ] || die "damage: $output"
	vcn=$output
	run sid_ntfsck image
	[ "$status" -ne 0 ] || die "ntfsck -n finds the damaged volume clean: $output"
	echo "# ntfsck -n: $(grep -m1 'errors left' <<< "$output")" >&3
	sum=$(sha256sum < image)
	run "$FSCK" -n image
	[ "$status" -eq 4 ] || die "-n exit $status: $output"
	[[ $output == *"index block at VCN $vcn is a leaf with no entry"* ]] || die "$output"
	[ "$(sha256sum < image)" = "$sum" ] || die "-n wrote"
}

@test "empty leaf below an entry: dropped in place, its key back in the leaf above it" {
	damage_repair d mid
	same_tree d
}

@test "empty leaf below a node's end entry: the end entry takes the sub-node before it" {
	damage_repair d end
	same_tree d
}

@test "empty leaf below a block with no key: both dropped in place, not rebuilt" {
	damage_repair d chain
	same_tree d
}

@test "empty leaf below an empty root: the root made small again" {
	damage_repair e root
	same_tree e
}

@test "two empty leaves: the index rebuilt from the files' names, every name kept" {
	cp "$BATS_FILE_TMPDIR/base.img" one.img
	run $DAMAGE one.img "$(cat "$BATS_FILE_TMPDIR/d.ino")" mid
	[ "$status" -eq 0 ] || die "damage: $output"
	damage_repair d end one.img
}

# a view index: $ObjId:$O of 100 object ids (160 set by ntfs-3g, 60 of
# their files deleted, so that its allocation has free blocks); ntfs-3g
# reads every id as before the damage, ntfsck -n finds the result clean
@test "empty leaf in \$ObjId:\$O: found by -n, \$O rebuilt by -a, every id kept" {
	need_sid
	mkdir mnt
	truncate -s 16M base.img
	"$MKFS_NTFS" -q -F base.img
	ntfs-3g base.img mnt
	$DAMAGE ids "$PWD/mnt" || die "setting the object ids failed"
	umount mnt
	ntfs-3g -o ro base.img mnt
	ids() { for f in mnt/o/*; do echo "$f $(getfattr -e hex -n system.ntfs_object_id "$f" | sed -n '2s/^[^=]*=//p')"; done; }
	ids > ids.0
	umount mnt
	[ "$(wc -l < ids.0)" = 100 ] || die "$(cat ids.0)"
	cp base.img image
	run $DAMAGE image '$ObjId' mid '$O'
	[ "$status" -eq 0 ] || die "damage: $output"
	vcn=$output
	# (ntfsck -n does not look at a view's leaves: it finds this clean)
	cp image damaged.img
	run "$FSCK" -n image
	[ "$status" -eq 4 ] || die "-n exit $status: $output"
	[[ $output == *'$ObjId:$O: index is corrupt (index block at VCN '"$vcn is a leaf with no entry)"* ]] || die "$output"
	cmp image damaged.img || die "-n wrote"
	run "$FSCK" -a -z undo image
	[ "$status" -eq 1 ] || die "-a exit $status: $output"
	[[ $output == *"leaf with no entry). REBUILT"* ]] || die "$output"
	repair_converged "$FSCK" image -a
	cp image repaired.img
	run "$FSCK" --undo undo repaired.img
	[ "$status" -eq 0 ] || die "--undo exit $status: $output"
	cmp repaired.img damaged.img || die "--undo did not restore the damaged volume"
	ntfs-3g -o ro image mnt || die "ntfs-3g cannot mount the repaired volume"
	ids > ids.1
	umount mnt
	diff -u ids.0 ids.1 || die "object ids differ"
}
