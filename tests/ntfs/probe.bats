#!/usr/bin/env bats
# mkfs.ntfs probes an image file with libblkid exactly as a block device
# (as mkfs.xfs does): an existing filesystem or partition table needs -F or
# a "y" at the prompt, and a refusal changes no byte.  The images are made
# by the filesystems' own tools (mke2fs, mkfs.xfs, mkfs.vfat, mkfs.erofs,
# sfdisk) and blkid (util-linux) says what the file holds afterwards.
# mkfs.erofs keeps replacing image files (a new file is renamed over the
# old one, as erofs-utils does), so it needs no --force for them.
load ../lib/common
load ntfs_helpers

setup() { cd_tmp; }
teardown() { umount_all; }

type_of() { blkid -p -o value -s TYPE "$1"; }
pttype_of() { blkid -p -o value -s PTTYPE "$1"; }

# refused without -F (no answer, "n"), the file unchanged; then "y" formats
refused_then_formatted() {
	local img=$1 what=$2 before
	before=$(sha256sum < "$img")
	run "$MKFS_NTFS" "$img" < /dev/null
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"$img contains a $what; use --force to overwrite it"* ]]
	[ "$(sha256sum < "$img")" = "$before" ]
	run sh -c "echo n | '$MKFS_NTFS' '$img'"
	[ "$status" -eq 1 ]
	[[ $output == *"Proceed anyway? (y,N) n"* ]]
	[ "$(sha256sum < "$img")" = "$before" ]
	run sh -c "yes | '$MKFS_NTFS' -q '$img'"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"Proceed anyway? (y,N) y"* ]]
	[ "$(type_of "$img")" = ntfs ]
	need_ntfs3g
	ntfsfix_clean "$img"
}

@test "an ext4 image file: refused without -F, formatted after a y" {
	truncate -s 64M e.img
	mkfs.ext4 -q e.img
	[ "$(type_of e.img)" = ext4 ]
	refused_then_formatted e.img "ext4 filesystem"
}

@test "an xfs image file: refused without -F, formatted with -F" {
	command -v mkfs.xfs > /dev/null || need_or_skip "mkfs.xfs (xfsprogs) not installed"
	truncate -s 300M x.img
	mkfs.xfs -q x.img
	[ "$(type_of x.img)" = xfs ]
	run "$MKFS_NTFS" x.img < /dev/null
	[ "$status" -eq 1 ]
	[[ $output == *"x.img contains a xfs filesystem; use --force to overwrite it"* ]]
	[ "$(type_of x.img)" = xfs ]
	run "$MKFS_NTFS" -q -F x.img
	[ "$status" -eq 0 ]
	[ "$(type_of x.img)" = ntfs ]
}

@test "a vfat image file: refused without -F, formatted after a y" {
	command -v mkfs.vfat > /dev/null || need_or_skip "mkfs.vfat (dosfstools) not installed"
	truncate -s 64M v.img
	mkfs.vfat v.img > /dev/null
	[ "$(type_of v.img)" = vfat ]
	refused_then_formatted v.img "vfat filesystem"
}

@test "an erofs image file: refused without -F" {
	mkdir src
	echo data > src/f
	"$MKFS_EROFS" --quiet r.img src
	truncate -s 32M r.img
	[ "$(type_of r.img)" = erofs ]
	refused_then_formatted r.img "erofs filesystem"
}

@test "an image with an MBR (sfdisk): refused without -F, formatted with -F" {
	command -v sfdisk > /dev/null || need_or_skip "sfdisk (fdisk) not installed"
	truncate -s 64M m.img
	printf 'label: dos\n,,83\n' | sfdisk -q m.img
	[ "$(pttype_of m.img)" = dos ]
	before=$(sha256sum < m.img)
	run "$MKFS_NTFS" m.img < /dev/null
	[ "$status" -eq 1 ]
	[[ $output == *"m.img contains a dos partition table; use --force to overwrite it"* ]]
	[ "$(sha256sum < m.img)" = "$before" ]
	run "$MKFS_NTFS" -q -F m.img
	[ "$status" -eq 0 ]
	[ "$(type_of m.img)" = ntfs ]
}

@test "an image with a GPT (sfdisk): refused without -F, formatted after a y" {
	command -v sfdisk > /dev/null || need_or_skip "sfdisk (fdisk) not installed"
	truncate -s 64M g.img
	printf 'label: gpt\n,,L\n' | sfdisk -q g.img
	[ "$(pttype_of g.img)" = gpt ]
	refused_then_formatted g.img "gpt partition table"
}

@test "an NTFS image is not reformatted without -F either; an empty or zeroed file needs nothing" {
	truncate -s 32M n.img
	"$MKFS_NTFS" -q n.img
	run "$MKFS_NTFS" -q n.img < /dev/null
	[ "$status" -eq 1 ]
	[[ $output == *"n.img contains a ntfs filesystem; use --force to overwrite it"* ]]
	run "$MKFS_NTFS" -q z.img 65536
	[ "$status" -eq 0 ]
	[ "$(type_of z.img)" = ntfs ]
}

@test "-n on an ext4 image file: refused without -F, and with -F writes nothing" {
	truncate -s 64M e.img
	mkfs.ext4 -q e.img
	before=$(sha256sum < e.img)
	run "$MKFS_NTFS" -n e.img < /dev/null
	[ "$status" -eq 1 ]
	[[ $output == *"contains a ext4 filesystem"* ]]
	run "$MKFS_NTFS" -n -F e.img
	[ "$status" -eq 0 ]
	[ "$(sha256sum < e.img)" = "$before" ]
}

@test "mkfs.erofs replaces an ext4 image file without --force (as erofs-utils does)" {
	mkdir src
	echo data > src/f
	truncate -s 16M e.img
	mkfs.ext4 -q e.img
	run "$MKFS_EROFS" e.img src
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(type_of e.img)" = erofs ]
	mnt=$(mount_erofs e.img)
	[ "$(cat "$mnt/f")" = data ]
}
