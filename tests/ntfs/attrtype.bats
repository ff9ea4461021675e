#!/usr/bin/env bats
# Attribute types the volume's $AttrDef does not define (issue 11, the
# rich lab base's t-rich4k-ea-attr-type-big): a multiple of 0x10 in the
# user range is no longer taken as fine.  What the record shows decides:
# an $EA whose type bit 30 was set (0x400000e0) or whose type became
# 0x1000 is an EA list next to the file's $EA_INFORMATION, so it gets its
# type back and the file keeps its EAs; a named stream whose type became
# 0x1230 shows nothing of what it was, so it is removed, the file named
# and its data kept.  A type the volume's own $AttrDef adds is kept.
# Expectations: ntfs-3g's views before the damage (system.ntfs_ea, the
# user.* streams, the data), the type values from the format (0xe0),
# ntfsck -n (sid) on the result.  In a file with an attribute list, the
# list's entry for the attribute says its type (a hard link's name and a
# stream in extension records): ntfs-3g's names and streams before the
# damage are the expectation.
load ../lib/common
load ntfs_helpers

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
LAB=$FSFORGE_TOP/tests/ntfs/lab
# two EAs, "N" = "val" and "M" = "xy", each next offset its own length
EA=0x10000000000103004e0076616c0000000c000000000102004d007879

# attr IMG RECORD TYPE [NEW]: the types of RECORD's attributes, one a
# line (hex); with NEW, the last attribute of TYPE (hex) set to NEW first
attr() {
	python3 - "$LAB" "$@" <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[1])
import ntfsparse as P
img = bytearray(open(sys.argv[2], "rb").read())
g, n = P.Geometry(img), int(sys.argv[3])
at = g.rec_off(n)
rec = P.unfix(img[at:at + g.rs])
if len(sys.argv) > 5:
    t, new = int(sys.argv[4], 16), int(sys.argv[5], 16)
    off = [o for o, ty, _, _ in P.attrs(rec) if ty == t][-1]
    struct.pack_into("<I", rec, off, new)
    img[at:at + g.rs] = P.refix(rec)
    open(sys.argv[2], "r+b").write(img)
print(" ".join("%x" % ty for _, ty, _, _ in P.attrs(rec)))
PY
}

# adddef IMG TYPE: an entry "$X" of TYPE appended to $AttrDef's table
adddef() {
	python3 - "$LAB" "$@" <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[1])
import ntfsparse as P
img = bytearray(open(sys.argv[2], "rb").read())
g = P.Geometry(img)
at = g.rec_off(4)
rec = P.unfix(img[at:at + g.rs])
off = next(o for o, ty, _, nr in P.attrs(rec) if ty == 0x80 and nr)
lcn, _ = P.runlist(rec, off)[0]
tab = lcn * g.cs
i = next(i for i in range(16) if struct.unpack_from("<I", img, tab + i * 160 + 128)[0] == 0)
e = bytearray(160)
e[0:4] = "$X".encode("utf-16-le")
struct.pack_into("<I", e, 128, int(sys.argv[3], 16))
struct.pack_into("<qq", e, 144, 0, -1)
img[tab + i * 160:tab + i * 160 + 160] = e
open(sys.argv[2], "r+b").write(img)
PY
}

# ext IMG BASE TYPE NEW [last]: in the first extension record of BASE
# holding an attribute of TYPE (hex), the first (with "last": the last)
# such attribute made NEW; prints the record's number
ext() {
	python3 - "$LAB" "$@" <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[1])
import ntfsparse as P
img = bytearray(open(sys.argv[2], "rb").read())
g, base, t, new = P.Geometry(img), int(sys.argv[3]), int(sys.argv[4], 16), int(sys.argv[5], 16)
for n in range(base + 1, g.nrecords):
    at = g.rec_off(n)
    rec = P.unfix(img[at:at + g.rs])
    if rec[:4] != b"FILE" or struct.unpack_from("<Q", rec, 0x20)[0] & 0xffffffffffff != base:
        continue
    offs = [o for o, ty, _, _ in P.attrs(rec) if ty == t]
    if offs:
        struct.pack_into("<I", rec, offs[-1 if sys.argv[6:] == ["last"] else 0], new)
        img[at:at + g.rs] = P.refix(rec)
        open(sys.argv[2], "r+b").write(img)
        print(n)
        break
PY
}

# what ntfs-3g shows of the files with attribute lists: the names of the
# linked file, the streams and their values
lviews() {
	local m
	m=$(mount_ntfs3g "$1") || return 1
	(cd "$m/links" && ls -i | sort)
	getfattr -h -d "$m/streams" 2>/dev/null | sed -n '/^user\./p'
	umount "$m"
}

# what ntfs-3g shows of the two files: EAs, streams, data
views() {
	local m
	m=$(mount_ntfs3g "$1") || return 1
	getfattr -h -e hex -n system.ntfs_ea "$m/ea" 2>/dev/null | sed -n '2p'
	getfattr -h -d "$m/xs" 2>/dev/null | sed -n '/^user\./p'
	cat "$m/ea" "$m/xs"
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
	echo "ea data" > "$m/ea"
	echo "xs data" > "$m/xs"
	setfattr -n system.ntfs_ea -v "$EA" "$m/ea"
	setfattr -n user.note -v "a note" "$m/xs"
	# attribute lists: 30 long names, 30 streams, most of each held by
	# extension records
	mkdir "$m/links"
	echo linked > "$m/links/target"
	echo streams > "$m/streams"
	for i in $(seq -w 1 30); do
		ln "$m/links/target" "$m/links/a-hard-link-with-a-name-long-enough-to-fill-records-$i"
		setfattr -n "user.s$i" -v "stream $i $(printf 'v%.0s' $(seq 1 90))" "$m/streams"
	done
	for f in ea xs links/target streams; do
		echo "${f#links/} $(stat -c %i "$m/$f")"
	done > "$d/inos"
	umount "$m"
	views "$d/base.img" > "$d/views"
	lviews "$d/base.img" > "$d/lviews"
}

ino() {
	awk -v f="$1" '$1 == f { print $2 }' "$BATS_FILE_TMPDIR/inos"
}

# found_by_n: -n on $IMG finds a fault (exit 4) and writes no byte
found_by_n() {
	local sum
	sum=$(sha256sum < "$IMG")
	run "$FSCK" -n "$IMG"
	echo "$output"
	[ "$status" -eq 4 ]
	[ "$(sha256sum < "$IMG")" = "$sum" ]
}

# retype FILE TYPE NEW: a copy of the volume with FILE's TYPE made NEW,
# checked by -n (a fault, not a byte written)
retype() {
	IMG=$BATS_TEST_TMPDIR/v.img
	cp "$BATS_FILE_TMPDIR/base.img" "$IMG"
	run attr "$IMG" "$(ino "$1")" "$2" "$3"
	echo "$output"
	[ "$status" -eq 0 ]
	found_by_n
}

# after one -a (exit 1): -n clean, ntfsck -n clean
repaired() {
	run "$FSCK" -a "$IMG"
	echo "$output"
	[ "$status" -eq 1 ]
	A_OUT=$output
	run "$FSCK" -n "$IMG"
	echo "$output"
	[ "$status" -eq 0 ]
	need_sid
	run sid_ntfsck "$IMG"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "the undamaged volume checks clean; ntfs-3g shows the EAs and the stream" {
	run "$FSCK" -n "$BATS_FILE_TMPDIR/base.img"
	[ "$status" -eq 0 ]
	run attr "$BATS_FILE_TMPDIR/base.img" "$(ino ea)"
	[[ "$output" == *" 80 d0 e0" ]]
	run attr "$BATS_FILE_TMPDIR/base.img" "$(ino xs)"
	[[ "$output" == *" 80 80" ]]
	grep -q "^system.ntfs_ea=${EA}\$" "$BATS_FILE_TMPDIR/views"
	grep -q '^user.note="a note"$' "$BATS_FILE_TMPDIR/views"
}

@test "\$EA made 0x400000e0 (one bit): its type set back, both EAs kept" {
	retype ea e0 400000e0
	repaired
	run attr "$IMG" "$(ino ea)"
	[ "$output" = "$(attr "$BATS_FILE_TMPDIR/base.img" "$(ino ea)")" ]
	run views "$IMG"
	[ "$output" = "$(cat "$BATS_FILE_TMPDIR/views")" ]
}

@test "\$EA made 0x1000 (not one bit away): an EA list next to \$EA_INFORMATION, so \$EA again" {
	retype ea e0 1000
	repaired
	[[ "$A_OUT" == *"type 0x1000, which \$AttrDef does not define; it holds the EA list"* ]]
	run attr "$IMG" "$(ino ea)"
	[ "$output" = "$(attr "$BATS_FILE_TMPDIR/base.img" "$(ino ea)")" ]
	run views "$IMG"
	[ "$output" = "$(cat "$BATS_FILE_TMPDIR/views")" ]
}

@test "a named stream made 0x1230: removed, the file named, its data and the rest kept" {
	retype xs 80 1230
	repaired
	[[ "$A_OUT" == *"file MFT record $(ino xs) (/xs): attribute at "*" has type 0x1230, which \$AttrDef does not define"* ]]
	run attr "$IMG" "$(ino xs)"
	# the types before the damage, the last one (the stream) gone
	[ "$output" = "$(attr "$BATS_FILE_TMPDIR/base.img" "$(ino xs)" | sed 's/ 80$//')" ]
	run views "$IMG"
	echo "$output"
	[ "$output" = "$(grep -v '^user.note=' "$BATS_FILE_TMPDIR/views")" ]
}

# noff IMG RECORD TYPE [NEW]: the name offset of RECORD's first attribute
# of TYPE (hex); with NEW, set to NEW first
noff() {
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
    struct.pack_into("<H", rec, off + 0x0A, int(sys.argv[5], 0))
    img[at:at + g.rs] = P.refix(rec)
    open(sys.argv[2], "r+b").write(img)
print(struct.unpack_from("<H", rec, off + 0x0A)[0])
PY
}

# the lab's m-ours4k-500003 (compound: $Bitmap zeroed plus random damage):
# one bit of an unnamed $DATA's name offset flipped, 0 -> 2, inside the
# header; ntfsck -n objects ("Name offset is corrupted"), we did not
@test "an unnamed \$DATA whose name offset points into its header: set to where the header ends, the data kept" {
	IMG=$BATS_TEST_TMPDIR/v.img
	cp "$BATS_FILE_TMPDIR/base.img" "$IMG"
	run noff "$IMG" "$(ino ea)" 80 2
	[ "$status" -eq 0 ]
	need_sid
	run sid_ntfsck "$IMG"
	echo "$output"
	[ "$status" -ne 0 ]
	found_by_n
	repaired
	[[ "$A_OUT" == *"attribute 0x80 has no name but a name offset of 2, inside its header; set to 24"* ]]
	# 24 (0x18): the size of a resident attribute's header (the format)
	run noff "$IMG" "$(ino ea)" 80
	[ "$output" = 24 ]
	run views "$IMG"
	[ "$output" = "$(cat "$BATS_FILE_TMPDIR/views")" ]
}

# fnlen IMG RECORD [NEW]: the name length of RECORD's first $FILE_NAME;
# with NEW, set to NEW first
fnlen() {
	python3 - "$LAB" "$@" <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[1])
import ntfsparse as P
img = bytearray(open(sys.argv[2], "rb").read())
g, n = P.Geometry(img), int(sys.argv[3])
at = g.rec_off(n)
rec = P.unfix(img[at:at + g.rs])
off = next(o for o, ty, _, _ in P.attrs(rec) if ty == 0x30)
vo = off + struct.unpack_from("<H", rec, off + 0x14)[0]
if len(sys.argv) > 4:
    rec[vo + 0x40] = int(sys.argv[4])
    img[at:at + g.rs] = P.refix(rec)
    open(sys.argv[2], "r+b").write(img)
print(rec[vo + 0x40])
PY
}

# the lab's t-rich4k-fname-hardlink-namelen-zero (also in the compound
# m-rich4k-500007): -a rebuilt the directory's index without the name and
# left the empty $FILE_NAME, which ntfsck -n calls corrupt
@test "a \$FILE_NAME whose name length was zeroed: the length its value gives, the name kept" {
	IMG=$BATS_TEST_TMPDIR/v.img
	cp "$BATS_FILE_TMPDIR/base.img" "$IMG"
	run fnlen "$IMG" "$(ino xs)" 0
	[ "$status" -eq 0 ]
	need_sid
	run sid_ntfsck "$IMG"
	echo "$output"
	[ "$status" -ne 0 ]
	found_by_n
	repaired
	[[ "$A_OUT" == *"the value holds a name of 2 characters"* ]]
	# "xs": two characters
	run fnlen "$IMG" "$(ino xs)"
	[ "$output" = 2 ]
	run views "$IMG"
	[ "$output" = "$(cat "$BATS_FILE_TMPDIR/views")" ]
}

@test "a type the volume's \$AttrDef adds is no fault" {
	IMG=$BATS_TEST_TMPDIR/v.img
	cp "$BATS_FILE_TMPDIR/base.img" "$IMG"
	run adddef "$IMG" 1230
	[ "$status" -eq 0 ]
	run "$FSCK" -n "$IMG"
	echo "$output"
	[ "$status" -eq 0 ]
	run attr "$IMG" "$(ino xs)" 80 1230
	[ "$status" -eq 0 ]
	run "$FSCK" -n "$IMG"
	echo "$output"
	[ "$status" -eq 0 ]
}

# (issue 11) in an extension record the file's attribute list names each
# attribute by record and instance: its entry says the type, not a guess
# by bits (0 is one bit from 0x20, 0x10, 0x40 ... ; 0x30 was taken for
# 0x20 and the name lost with the list entry)
@test "a \$FILE_NAME in an extension record made 0: the list's entry says 0x30, every name kept" {
	IMG=$BATS_TEST_TMPDIR/v.img
	cp "$BATS_FILE_TMPDIR/base.img" "$IMG"
	run ext "$IMG" "$(ino target)" 30 0
	[ -n "$output" ]
	run "$FSCK" -n "$IMG"
	[ "$status" -eq 4 ]
	repaired
	[[ "$A_OUT" == *"has type 0x0, which \$AttrDef does not define; the file's attribute list says it is 0x30"* ]]
	run lviews "$IMG"
	[ "$output" = "$(cat "$BATS_FILE_TMPDIR/lviews")" ]
}

@test "a named stream in an extension record made 0x7f: the list's entry says 0x80, the stream kept" {
	IMG=$BATS_TEST_TMPDIR/v.img
	cp "$BATS_FILE_TMPDIR/base.img" "$IMG"
	run ext "$IMG" "$(ino streams)" 80 7f
	[ -n "$output" ]
	run "$FSCK" -n "$IMG"
	[ "$status" -eq 4 ]
	repaired
	[[ "$A_OUT" == *"has type 0x7f, which \$AttrDef does not define; the file's attribute list says it is 0x80"* ]]
	run lviews "$IMG"
	[ "$output" = "$(cat "$BATS_FILE_TMPDIR/lviews")" ]
}

# (issue 11) a type NTFS defines (0xb0, $BITMAP) where the list's entry
# says $FILE_NAME: out of order before the next name, which cost the
# whole extension record (four names); the value parses as a $FILE_NAME,
# so the list's type is put back and every name is kept
@test "a \$FILE_NAME in an extension record made 0xb0 (\$BITMAP): the list's entry and the value say 0x30, every name kept" {
	IMG=$BATS_TEST_TMPDIR/v.img
	cp "$BATS_FILE_TMPDIR/base.img" "$IMG"
	run ext "$IMG" "$(ino target)" 30 b0
	[ -n "$output" ]
	run "$FSCK" -n "$IMG"
	[ "$status" -eq 4 ]
	repaired
	[[ "$A_OUT" == *"has type 0xb0; the file's attribute list says it is \$FILE_NAME (0x30) and its value is one; the type is put back"* ]]
	run lviews "$IMG"
	[ "$output" = "$(cat "$BATS_FILE_TMPDIR/lviews")" ]
	repair_converged "$FSCK" "$IMG" -a
}

# the last name of the record made 0xb0: nothing is out of order then
# (the record parses), the list's entry alone named it; kept the same way
@test "the last \$FILE_NAME of an extension record made 0xb0: its type put back, every name kept" {
	IMG=$BATS_TEST_TMPDIR/v.img
	cp "$BATS_FILE_TMPDIR/base.img" "$IMG"
	run ext "$IMG" "$(ino target)" 30 b0 last
	[ -n "$output" ]
	repaired
	[[ "$A_OUT" == *"has type 0xb0; the file's attribute list says it is \$FILE_NAME (0x30) and its value is one; the type is put back"* ]]
	[[ "$A_OUT" == *"problems: 1 found, 1 fixed, 0 left"* ]]
	run lviews "$IMG"
	[ "$output" = "$(cat "$BATS_FILE_TMPDIR/lviews")" ]
}
