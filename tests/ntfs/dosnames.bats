#!/usr/bin/env bats
# DOS 8.3 names: a file named "Long File Name.document" on a Windows volume
# also has a DOS name (LONGFI~1.DOC) in a second $FILE_NAME with its own
# index entry, and its record's link count counts both (the directory
# entries that reference the record; ntfs-3g's system.ntfs_dos_name writes
# it the same way).  fsck.ntfs must not call that a wrong link count, nor
# the count that leaves the DOS half out (some writers do); a count that is
# neither is set to the number of names.  Oracles: the record read by the
# lab's independent parser (tests/ntfs/lab/ntfsparse.py), ntfs-3g (which
# deletes the file by either count), ntfsck -n (sid) when present.
load ../lib/common
load ntfs_helpers

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
LAB=$FSFORGE_TOP/tests/ntfs/lab

# the link count and the $FILE_NAME namespaces of record $2 of image $1
# ("2 1,2": link count 2, a Win32 and a DOS name); with $3, set the link
# count to $3 first
links() {
	python3 - "$LAB" "$@" <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[1])
import ntfsparse as P
img = bytearray(open(sys.argv[2], "rb").read())
g, n = P.Geometry(img), int(sys.argv[3])
at = g.rec_off(n)
rec = P.unfix(img[at:at + g.rs])
if len(sys.argv) > 4:
    struct.pack_into("<H", rec, 0x12, int(sys.argv[4]))
    img[at:at + g.rs] = P.refix(rec)
    open(sys.argv[2], "r+b").write(img)
ns = sorted(rec[v + 0x41] for _, _, _, v in P.file_names(rec))
print(struct.unpack_from("<H", rec, 0x12)[0], ",".join(map(str, ns)))
PY
}

# set record $2's $FILE_NAME of namespace $3 to namespace $4 (image $1),
# as the lab's dos-fname damages do
setns() {
	python3 - "$LAB" "$@" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import ntfsparse as P
img = bytearray(open(sys.argv[2], "rb").read())
g, n = P.Geometry(img), int(sys.argv[3])
at = g.rec_off(n)
rec = P.unfix(img[at:at + g.rs])
o = [v for _, _, _, v in P.file_names(rec) if rec[v + 0x41] == int(sys.argv[4])][0]
rec[o + 0x41] = int(sys.argv[5])
img[at:at + g.rs] = P.refix(rec)
open(sys.argv[2], "r+b").write(img)
PY
}

# set the namespace byte of the root's index entry that names record $2
# in namespace $3 to $4 (image $1), as the lab's dos-ientry-ns does
entryns() {
	python3 - "$LAB" "$@" <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[1])
import ntfsparse as P
img = bytearray(open(sys.argv[2], "rb").read())
g, n, old, new = P.Geometry(img), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
for where, o, buf in P.index_all(img, g, 5, "$I30"):
    if struct.unpack_from("<Q", buf, o)[0] & 0xFFFFFFFFFFFF == n and buf[o + 0x10 + 0x41] == old:
        buf[o + 0x10 + 0x41] = new
        at, size = (g.rec_off(5), g.rs) if where == "root" else (where, g.ibs)
        img[at:at + size] = P.refix(buf)
        break
else:
    sys.exit("no such entry")
open(sys.argv[2], "r+b").write(img)
PY
}

# a namespace byte of file 3's names damaged ($1 -> $2): fsck.ntfs -n
# reports it, -a sets it back (Win32 and DOS again), ntfsck -n and a
# second -n find nothing, ntfs-3g lists the long name only and gives the
# DOS name back through system.ntfs_dos_name
namespace_repaired() {
	local img=$BATS_TEST_TMPDIR/v.img m ino
	ino=$(cat "$BATS_FILE_TMPDIR/ino")
	cp "$BATS_FILE_TMPDIR/base.img" "$img"
	"${3:-setns}" "$img" "$ino" "$1" "$2"
	run "$FSCK" -n "$img"
	echo "$output"
	[ "$status" -eq 4 ]
	[[ "$output" == *"Long File Name 3.document"*"MFT record $ino"* ||
	   "$output" == *"LONGFI~3.DOC"*"MFT record $ino"* ]]
	run md5sum <"$img"
	local sum=$output
	run "$FSCK" -n "$img"
	run md5sum <"$img"
	[ "$output" = "$sum" ]	# -n wrote nothing
	run "$FSCK" -a "$img"
	echo "$output"
	[ "$status" -eq 1 ]
	run links "$img" "$ino"
	[ "$output" = "2 1,2" ]
	run "$FSCK" -n "$img"
	echo "$output"
	[ "$status" -eq 0 ]
	m=$(mount_ntfs3g "$img")
	run ls "$m"
	local listing=$output
	run getfattr --absolute-names --only-values -n system.ntfs_dos_name "$m/Long File Name 3.document"
	local dos=$output
	run cat "$m/Long File Name 3.document"
	umount "$m"
	echo "$listing"; echo "dos: $dos"
	[ "$output" = "file 3" ]
	[ "$dos" = "LONGFI~3.DOC" ]
	[ "$(grep -c 'Long File Name' <<<"$listing")" -eq 5 ]
	run grep -c LONGFI <<<"$listing"
	[ "$output" = 0 ]
	need_sid
	run sid_ntfsck "$img"
	echo "$output"
	[ "$status" -eq 0 ]
}

setup_file() {
	need_ntfs3g
	local d=$BATS_FILE_TMPDIR m i
	truncate -s 16M "$d/base.img"
	"$FSFORGE_BUILDDIR/mkfs/mkfs.ntfs" -q -F "$d/base.img"
	m=$d/mnt
	mkdir -p "$m"
	ntfs-3g "$d/base.img" "$m"
	for i in 1 2 3 4 5; do
		echo "file $i" > "$m/Long File Name $i.document"
		setfattr -n system.ntfs_dos_name -v "LONGFI~$i.DOC" "$m/Long File Name $i.document"
	done
	mkdir "$m/Program Files Directory"
	setfattr -n system.ntfs_dos_name -v PROGRA~1 "$m/Program Files Directory"
	stat -c %i "$m/Long File Name 3.document" > "$d/ino"
	umount "$m"
}

@test "DOS names from ntfs-3g: two names, link count 2, and fsck.ntfs -n finds nothing" {
	local img=$BATS_TEST_TMPDIR/v.img m i sum
	cp "$BATS_FILE_TMPDIR/base.img" "$img"
	# DOS names equal to the long name but for case: ntfs-3g marks the
	# long name Win32&DOS in its own case, whatever its shape (lower case,
	# + , ; = [ ], spaces, a leading dot, no dot and over 8, non-ASCII)
	m=$(mount_ntfs3g "$img")
	for i in readme.txt/README.TXT Readme3.txt/readme3.txt noext/NOEXT \
		 abcdefghij/ABCDEFGHIJ a+b.txt/A+B.TXT "c d.txt/C D.TXT" \
		 "x[1].txt/X[1].TXT" e=f/E=F "g;h/G;H" .profile/.PROFILE \
		 été.txt/ÉTÉ.TXT; do
		echo "$i" > "$m/${i%/*}"
		setfattr -n system.ntfs_dos_name -v "${i#*/}" "$m/${i%/*}"
	done
	run getfattr --absolute-names --only-values -n system.ntfs_dos_name "$m/readme.txt"
	umount "$m"
	[ "$output" = "README.TXT" ]
	run links "$img" "$(cat "$BATS_FILE_TMPDIR/ino")"
	[ "$output" = "2 1,2" ]
	run "$FSCK" -n "$img"
	echo "$output"
	[ "$status" -eq 0 ]
	run md5sum <"$img"
	sum=$output
	run "$FSCK" -a "$img"
	echo "$output"
	[ "$status" -eq 0 ]
	run md5sum <"$img"
	[ "$output" = "$sum" ]	# -a changed no byte
	need_sid
	run sid_ntfsck "$img"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "a link count that leaves the DOS name out (1) is accepted as well" {
	local img=$BATS_TEST_TMPDIR/v.img
	cp "$BATS_FILE_TMPDIR/base.img" "$img"
	run links "$img" "$(cat "$BATS_FILE_TMPDIR/ino")" 1
	[ "$output" = "1 1,2" ]
	run "$FSCK" -n "$img"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "a wrong link count (7) with a DOS name is set to 2, and ntfs-3g then deletes the file cleanly" {
	local img=$BATS_TEST_TMPDIR/v.img m ino
	ino=$(cat "$BATS_FILE_TMPDIR/ino")
	cp "$BATS_FILE_TMPDIR/base.img" "$img"
	run links "$img" "$ino" 7
	[ "$output" = "7 1,2" ]
	run "$FSCK" -a "$img"
	echo "$output"
	[ "$status" -eq 1 ]
	run links "$img" "$ino"
	[ "$output" = "2 1,2" ]
	run "$FSCK" -n "$img"
	[ "$status" -eq 0 ]
	m=$(mount_ntfs3g "$img")
	rm "$m/Long File Name 3.document"
	run ls "$m"
	umount "$m"
	echo "$output"
	[ "$(grep -c 'Long File Name' <<<"$output")" -eq 4 ]
	run "$FSCK" -n "$img"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "a long name marked Win32&DOS beside its DOS name goes back to Win32 (lab: dos-fname-win32-as-both)" {
	namespace_repaired 1 3
}

@test "a long name marked DOS beside its DOS name goes back to Win32 (lab: dos-fname-win32-as-dos)" {
	namespace_repaired 1 2
}

@test "a DOS name marked Win32, its entry DOS, goes back to DOS (lab: dos-fname-dos-as-win32)" {
	namespace_repaired 2 1
}

@test "a DOS name marked POSIX, its entry DOS, goes back to DOS (lab: dos-fname-dos-as-posix)" {
	namespace_repaired 2 0
}

@test "the DOS name's index entry marked POSIX is set back from the record (lab: dos-ientry-ns)" {
	namespace_repaired 2 0 entryns
}

@test "a DOS name ntfs-3g stored too long (LONGFI~55.DO), its entry DOS too, beside its Win32 name is left alone" {
	local img=$BATS_TEST_TMPDIR/v.img m
	cp "$BATS_FILE_TMPDIR/base.img" "$img"
	m=$(mount_ntfs3g "$img")
	setfattr -n system.ntfs_dos_name -v "LONGFI~55.DOC" "$m/Long File Name 5.document"
	umount "$m"
	run "$FSCK" -n "$img"
	echo "$output"
	[ "$status" -eq 0 ]
	need_sid
	run sid_ntfsck "$img"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "ntfs-3g's Win32&DOS \"readme.txt\" whose index entry says Win32 keeps its DOS name: the entry is set back" {
	local img=$BATS_TEST_TMPDIR/v.img m ino dos
	cp "$BATS_FILE_TMPDIR/base.img" "$img"
	m=$(mount_ntfs3g "$img")
	echo readme > "$m/readme.txt"
	setfattr -n system.ntfs_dos_name -v README.TXT "$m/readme.txt"
	ino=$(stat -c %i "$m/readme.txt")
	umount "$m"
	run entryns "$img" "$ino" 3 1
	[ "$status" -eq 0 ]
	run "$FSCK" -n "$img"
	echo "$output"
	[ "$status" -eq 4 ]
	run "$FSCK" -a "$img"
	echo "$output"
	[ "$status" -eq 1 ]
	run "$FSCK" -n "$img"
	echo "$output"
	[ "$status" -eq 0 ]
	m=$(mount_ntfs3g "$img")
	run getfattr --absolute-names --only-values -n system.ntfs_dos_name "$m/readme.txt"
	dos=$output
	run cat "$m/readme.txt"
	umount "$m"
	[ "$output" = readme ]
	[ "$dos" = README.TXT ]
	need_sid
	run sid_ntfsck "$img"
	echo "$output"
	[ "$status" -eq 0 ]
}
