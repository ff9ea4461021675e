#!/usr/bin/env bats
# A resident value length that runs past its attribute, on the attributes
# Windows volumes carry and ntfs-3g writes through its special xattrs:
# $REPARSE_POINT (a Windows symlink; a third-party tag, with its GUID),
# $OBJECT_ID (ntfs-3g writes the 16-byte form) and $EA_INFORMATION.
# Their content says how long the value is, so -a (preen) sets it back and
# the file keeps its reparse data, object id and EAs; so does an object id
# value shorter than its 16-byte id.  Expectations come
# from ntfs-3g before the damage (its system.ntfs_* views), the lengths
# from the format (8 + data length [+ 16 for a GUID]; 16; 8);
# ntfsck -n (sid) on the result when the tree is there.
load ../lib/common
load ntfs_helpers

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
LAB=$FSFORGE_TOP/tests/ntfs/lab
# symlink to "hello.txt" (relative), as Windows writes it
WINLINK=0x0c0000a030000000000012001200120001000000680065006c006c006f002e00740078007400680065006c006c006f002e00740078007400
# a third-party tag (bit 31 clear): 16-byte GUID, then 6 bytes of data
OTHER=0x3412000006000000000102030405060708090a0b0c0d0e0f616263646566
# an $EA of one entry "N" = "val" (next offset 16, its aligned length)
EA=0x10000000000103004e0076616c000000

# the value length of attribute $3 (type, hex) of the file $2 (record) in
# image $1; with $4, set it to $4 first
vlen() {
	python3 - "$LAB" "$@" <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[1])
import ntfsparse as P
img = bytearray(open(sys.argv[2], "rb").read())
g, n, t = P.Geometry(img), int(sys.argv[3]), int(sys.argv[4], 16)
at = g.rec_off(n)
rec = P.unfix(img[at:at + g.rs])
off = next(o for o, ty, _, _ in P.attrs(rec) if ty == t)
if len(sys.argv) > 5:
    struct.pack_into("<I", rec, off + 0x10, int(sys.argv[5], 0))
    img[at:at + g.rs] = P.refix(rec)
    open(sys.argv[2], "r+b").write(img)
print(struct.unpack_from("<I", rec, off + 0x10)[0])
PY
}

# the views ntfs-3g gives of the files, one line each
views() {
	local m f
	m=$(mount_ntfs3g "$1") || return 1
	for f in link other oid16 ea; do
		printf '%s ' "$f"
		getfattr -h -e hex -n system.ntfs_reparse_data "$m/$f" 2>/dev/null | sed -n '2s/^[^=]*=//p' | tr '\n' ' '
		getfattr -h -e hex -n system.ntfs_object_id "$m/$f" 2>/dev/null | sed -n '2s/^[^=]*=//p' | tr '\n' ' '
		getfattr -h -e hex -n system.ntfs_ea "$m/$f" 2>/dev/null | sed -n '2s/^[^=]*=//p' | tr '\n' ' '
		echo
	done
	readlink "$m/link"
	umount "$m"
}

setup_file() {
	need_ntfs3g
	local d=$BATS_FILE_TMPDIR m f
	truncate -s 16M "$d/base.img"
	"$FSFORGE_BUILDDIR/mkfs/mkfs.ntfs" -q -F "$d/base.img"
	m=$d/mnt
	mkdir -p "$m"
	ntfs-3g "$d/base.img" "$m"
	echo hello > "$m/hello.txt"
	touch "$m/link" "$m/other" "$m/oid16" "$m/ea"
	# (a reparse point just set is not stat-able until the next mount)
	for f in link other oid16 ea; do
		echo "$f $(stat -c %i "$m/$f")"
	done > "$d/inos"
	setfattr -n system.ntfs_reparse_data -v "$WINLINK" "$m/link"
	setfattr -n system.ntfs_reparse_data -v "$OTHER" "$m/other"
	setfattr -n system.ntfs_object_id -v 0x00112233445566778899aabbccddeeff "$m/oid16"
	setfattr -n system.ntfs_ea -v "$EA" "$m/ea"
	umount "$m"
	views "$d/base.img" > "$d/views"
}

# damage FILE TYPE WANT [LEN]: the value length of TYPE set past the
# attribute (or to LEN); -a fixes it, back to WANT, and nothing else
# changes
damage() {
	local img=$BATS_TEST_TMPDIR/v.img ino
	ino=$(awk -v f="$1" '$1 == f { print $2 }' "$BATS_FILE_TMPDIR/inos")
	cp "$BATS_FILE_TMPDIR/base.img" "$img"
	run vlen "$img" "$ino" "$2"
	[ "$output" = "$3" ]
	run vlen "$img" "$ino" "$2" "${4:-0x40000010}"
	run "$FSCK" -a "$img"
	echo "$output"
	[ "$status" -eq 1 ]
	run vlen "$img" "$ino" "$2"
	[ "$output" = "$3" ]
	run "$FSCK" -n "$img"
	[ "$status" -eq 0 ]
	run views "$img"
	[ "$output" = "$(cat "$BATS_FILE_TMPDIR/views")" ]
	need_sid
	run sid_ntfsck "$img"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "the undamaged volume checks clean, and ntfs-3g shows what was set" {
	run "$FSCK" -n "$BATS_FILE_TMPDIR/base.img"
	[ "$status" -eq 0 ]
	grep -q '^link 0x0c0000a0' "$BATS_FILE_TMPDIR/views"
	grep -q '^other 0x34120000' "$BATS_FILE_TMPDIR/views"
	grep -q '^oid16 0x00112233445566778899aabbccddeeff' "$BATS_FILE_TMPDIR/views"
	grep -q '^ea 0x10000000000103004e0076616c000000' "$BATS_FILE_TMPDIR/views"
	[ "$(tail -n 1 "$BATS_FILE_TMPDIR/views")" = hello.txt ]
}

@test "\$REPARSE_POINT of a Windows symlink: value length past the attribute, set back to 8 + 48" {
	damage link c0 56
}

@test "\$REPARSE_POINT of a third-party tag: value length past the attribute, set back to 8 + 16 + 6" {
	damage other c0 30
}

@test "\$OBJECT_ID of 16 bytes: value length past the attribute, set back to 16" {
	damage oid16 40 16
}

@test "\$OBJECT_ID of 0 bytes (ntfsck: corrupt object id): set back to 16, the id kept" {
	damage oid16 40 16 0
}

@test "\$EA_INFORMATION: value length past the attribute, set back to 8" {
	damage ea d0 8
}

# ntfs-3g gives each file its own self-relative descriptor: header 20,
# owner and group S-1-5-32-544/545 (8 + 2 x 4 each), a DACL of 28 bytes
# at 52 (lab r-deep4k-1500011: -a asked, exit 4, while ntfsck -a fixed it)
@test "\$SECURITY_DESCRIPTOR: value length past the attribute, set back to where its DACL ends (52 + 28)" {
	damage oid16 50 80
}
