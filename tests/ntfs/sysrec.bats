#!/usr/bin/env bats
# fsck.ntfs makes damaged system records again instead of giving up
# (issue 11 item 2): $MFTMirr, $LogFile, $Volume, $AttrDef, $Bitmap, $Boot,
# $BadClus, $UpCase, $Extend, each destroyed in $MFT and (when mirrored)
# in $MFTMirr too, on volumes made by our mkfs.ntfs and by ntfsprogs-plus
# mkntfs (4 KiB and 64 KiB clusters) and filled through ntfs-3g.  Also
# the value lengths every reader needs ($STANDARD_INFORMATION, $FILE_NAME)
# and a file whose only $FILE_NAME is beyond repair (its name comes back
# from its directory entry).  Damage: sysrec_damage.py (the lab's
# independent parser).  Oracles that are not ours: ntfsprogs-plus
# ntfsck -n (sid) on the result, ntfs-3g mounting it with the content
# manifest taken before the damage; and -n after -a exits 0, a second -a
# changes no byte.
load ../lib/common

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
DAMAGE=$FSFORGE_TOP/tests/ntfs/sysrec_damage.py
source "$FSFORGE_TOP/tests/ntfs/ntfs_helpers.bash"

# manifest of the volume mounted at $1: "sha256  ./path" per file, the
# directories, and the one stream
manifest() {
	(cd "$1" && find . -type d | LC_ALL=C sort &&
	 find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum &&
	 getfattr -n user.k --only-values hello.txt && echo)
}

# fill image $1 through ntfs-3g; its manifest and blob's record number
# go next to it
fill() {
	local img=$1 m=$1.mnt
	mkdir -p "$m"
	ntfs-3g "$img" "$m"
	mkdir -p "$m/d/e" "$m/big"
	for i in $(seq 1 300); do echo "entry $i" > "$m/big/f$i"; done
	head -c 200000 /dev/urandom > "$m/d/e/blob"
	echo hello > "$m/hello.txt"
	ln "$m/hello.txt" "$m/d/hard"
	setfattr -n user.k -v value "$m/hello.txt"
	stat -c %i "$m/d/e/blob" > "$img.blob"
	stat -c %i "$m/d/e" > "$img.dir"
	manifest "$m" > "$img.manifest"
	umount "$m"
	[ "$(grep -c '  ./' "$img.manifest")" -eq 303 ]
}

setup_file() {
	need_ntfs3g
	local d=$BATS_FILE_TMPDIR t cs
	truncate -s 64M "$d/ours4k.img"
	"$FSFORGE_BUILDDIR/mkfs/mkfs.ntfs" -q -F -L sysrec "$d/ours4k.img"
	fill "$d/ours4k.img"
	if [ -d "$SID_ROOT/tmp" ] && chroot "$SID_ROOT" sh -c 'command -v mkntfs' >/dev/null 2>&1; then
		for cs in 4 64; do
			t=$(mktemp -d "$SID_ROOT/tmp/fsforge-sysrec.XXXXXX")
			truncate -s 64M "$t/v.img"
			chroot "$SID_ROOT" mkntfs -q -F -f -c $((cs * 1024)) -L sysrec \
				"/tmp/${t##*/}/v.img" >/dev/null 2>&1
			mv "$t/v.img" "$d/sid${cs}k.img"
			rm -rf "$t"
			fill "$d/sid${cs}k.img"
		done
	fi
}

setup() { cd_tmp; }
teardown() { mountpoint -q mnt 2>/dev/null && umount mnt; return 0; }

# sysrec_case BASE CASE EXPECT: damage CASE (sysrec_damage.py; "@blob"
# stands for blob's record number; several joined by "+" are applied in
# turn) on a copy of BASE, then every oracle.
# EXPECT: words the -a report must hold.
sysrec_case() {
	local base=$BATS_FILE_TMPDIR/$1.img damage=$2 expect=$3 before d
	[[ $1 == sid* ]] && need_sid
	damage=${damage/@blob/$(cat "$base.blob")}
	cp --sparse=always "$base" image
	for d in ${damage//+/ }; do
		python3 "$DAMAGE" image "$d"
	done
	before=$(sha256sum < image)
	run "$FSCK" -n image
	[ "$status" -eq 4 ] || { echo "$output"; die "-n on the damage: exit $status"; }
	[ "$(sha256sum < image)" = "$before" ] || die "-n wrote to the image"
	run "$FSCK" -a image
	echo "$output" | tee a.log
	[ "$status" -le 1 ] || die "-a exit $status"
	[[ $output == *"$expect"* ]] || die "-a did not report: $expect"
	repair_converged "$FSCK" image -a
	mkdir -p mnt
	ntfs-3g -o ro image mnt
	manifest mnt > manifest
	umount mnt
	diff -u "$base.manifest" manifest || die "manifest differs"
}

REMADE="system file record is unusable"

@test "ours 4k: \$MFTMirr's record zeroed in both copies: made again at the verified mirror" {
	sysrec_case ours4k zero-1 "MFT record 1: $REMADE"
}

@test "ours 4k: \$LogFile's record zeroed in both copies: made again, an empty journal" {
	sysrec_case ours4k zero-2 "MFT record 2: $REMADE"
}

@test "ours 4k: \$Volume's record zeroed in both copies: made again" {
	sysrec_case ours4k zero-3 "MFT record 3: $REMADE"
}

@test "ours 4k: \$Volume's record BAAD in both copies on an NTFS 3.0 volume: made again with its version, name and flags" {
	sysrec_case ours4k ver30+baad-3 "MFT record 3: $REMADE"
	# read back by the damage script's own parser, not by fsck.ntfs
	run python3 "$DAMAGE" image volinfo
	[ "$output" = "3.0 0x0000 sysrec" ] || die "\$Volume says: $output"
}

@test "ours 4k: \$AttrDef's record BAAD: made again with the standard table" {
	sysrec_case ours4k baad-4 "MFT record 4: $REMADE"
}

@test "ours 4k: \$Bitmap's record BAAD: made again, the map written from the computed one" {
	sysrec_case ours4k baad-6 "MFT record 6: $REMADE"
}

@test "ours 4k: \$Bitmap's attribute offset all ones: put back in place" {
	sysrec_case ours4k attroff-6 "MFT record 6: record header is invalid (attribute offset 65535"
}

@test "ours 4k: \$Boot's record zeroed: made again over the boot sectors" {
	sysrec_case ours4k zero-7 "MFT record 7: $REMADE"
}

UNUSED="system file is marked not in use but its record is intact; marked in use"

@test "ours 4k: \$BadClus not in use, its record intact: marked in use again (was: made again)" {
	sysrec_case ours4k notinuse-8 "MFT record 8: $UNUSED"
	run grep -c "$REMADE" a.log
	[ "$output" = 0 ] || die "made again"
}

# the lab's t-aged4k-sys05-flags-zero: ours stopped (exit 4, "system file
# is not in use") where ntfsck -a repairs
@test "ours 4k: the root's flags zeroed (not in use, no directory): both set back, every file kept" {
	sysrec_case ours4k flags0-5 "MFT record 5: $UNUSED"
	run grep -c "beyond use" a.log
	[ "$output" = 0 ] || die "root made again"
}

@test "ours 4k: \$Secure's record zeroed: made again with mkfs.ntfs's descriptors" {
	sysrec_case ours4k zero-9 "MFT record 9: $REMADE"
}

@test "ours 4k: \$UpCase's record zeroed: made again with the standard table" {
	sysrec_case ours4k zero-10 "MFT record 10: $REMADE"
}

@test "ours 4k: \$Extend's record zeroed: made again, its index rebuilt from its files' names" {
	sysrec_case ours4k zero-11 "MFT record 11: $REMADE"
}

@test "ours 4k: \$Extend's record BAAD (the lab's t-ours4k-sys11-magic): made again, its three files back in its index" {
	sysrec_case ours4k baad-11 "MFT record 11: $REMADE"
	mkdir -p mnt
	ntfs-3g -o ro image mnt
	run ls -A 'mnt/$Extend'
	umount mnt
	[ "$(echo $output)" = '$ObjId $Quota $Reparse' ] || die "\$Extend holds: $output"
}

@test "ours 4k: \$LogFile without its journal stream: made again" {
	sysrec_case ours4k nodata-2 "no usable \$DATA attribute"
}

# ntfsck -n compares every byte of the mirrored records ("$MFT/$MFTMirr
# records do not match"), ntfs-3g and the Linux driver the bytes in use
@test "ours 4k: a byte past \$LogFile's bytes in use changed in \$MFT only: the mirror rewritten from \$MFT" {
	sysrec_case ours4k slack-2 "MFT record 2: \$MFTMirr copy differs from \$MFT. FIXED"
}

@test "ours 4k: \$UpCase's table damaged: the standard table written over it" {
	sysrec_case ours4k upcase "entries of the table are neither the character nor its upper case"
}

# lab realdev's upcasezero ($UpCase's first cluster zeros: an SSD's
# trimmed block): -n judged every directory index by the damaged table
# it declines to replace (54 problems on a 450-name volume, -a 1: the
# table, then clean), now it collates by the standard table -a writes:
# both report the same problems, and -a's repair converges (ntfsck -n)
@test "ours 4k: \$UpCase's first cluster zeroed: -n assumes the standard table, as many problems as -a" {
	local n sum
	need_sid
	cp --sparse=always "$BATS_FILE_TMPDIR/ours4k.img" image
	python3 "$FSFORGE_TOP/tests/ntfs/lab/realdev.py" image upcasezero > /dev/null ||
		die "realdev.py upcasezero"
	sum=$(sha256sum < image)
	run "$FSCK" -n image
	[ "$status" -eq 4 ] || { echo "$output"; die "-n exit $status"; }
	[ "$(sha256sum < image)" = "$sum" ] || die "-n wrote"
	n=$(grep -o "problems: [0-9]* found" <<< "$output")
	run "$FSCK" -a image
	[ "$status" -eq 1 ] || { echo "$output"; die "-a exit $status"; }
	[ "$(grep -o "problems: [0-9]* found" <<< "$output")" = "$n" ] ||
		{ echo "$output"; die "-n: $n"; }
	repair_converged "$FSCK" image -a
}

# an SSD's trimmed block over $AttrDef (the lab's v-ours4k-attrdefzero):
# ntfsck -n, ntfs-3g and -n all passed a volume whose table defines no
# type.  The table after -a must be the one mkfs.ntfs or mkntfs wrote.
@test "ours 4k: \$AttrDef's table zeroed: the standard table written over it" {
	local want
	want=$(python3 "$DAMAGE" "$BATS_FILE_TMPDIR/ours4k.img" attrdefsum)
	sysrec_case ours4k attrdef "table of 2560 bytes does not parse"
	[ "$(python3 "$DAMAGE" image attrdefsum)" = "$want" ] || die "\$AttrDef is not the table mkfs.ntfs wrote"
}

# a misdirected run: $AttrDef's table read from a user file's cluster
# (random data: no table).  The standard table must go to $AttrDef's own
# cluster after pass 1B has given the file its copy, never over the
# file's data (before: written in pass 1, the file's first 4 KiB lost).
@test "ours 4k: \$AttrDef's run on a user file's cluster: the file keeps its data, the table rewritten on its own cluster" {
	sysrec_case ours4k attrdefxlink-@blob "table of 2560 bytes does not parse"
	[ "$(python3 "$DAMAGE" image attrdefsum)" = "$(python3 "$DAMAGE" "$BATS_FILE_TMPDIR/ours4k.img" attrdefsum)" ] ||
		die "\$AttrDef is not the table mkfs.ntfs wrote"
}

# $AttrDef's data one hole: read as zeros, the table cannot be written
# there.  Left, said so (before: "fixed" by a write that skipped the hole,
# the same again on every run).
@test "ours 4k: \$AttrDef's data one hole: left, not claimed repaired; a second -a writes nothing" {
	local sum
	cp --sparse=always "$BATS_FILE_TMPDIR/ours4k.img" image
	python3 "$DAMAGE" image attrdefhole
	run "$FSCK" -a image
	echo "$output"
	[ $((status & 4)) -eq 4 ] || die "-a exit $status: the table is not repaired"
	[ "$status" -lt 8 ] || die "-a exit $status"
	[[ $output == *"standard table cannot be written over it (its data is a hole); left"* ]] ||
		die "-a does not say the table is left"
	sum=$(sha256sum < image)
	run "$FSCK" -a image
	echo "$output"
	[ $((status & 4)) -eq 4 ] && [ "$status" -lt 8 ] || die "second -a exit $status"
	[ "$(sha256sum < image)" = "$sum" ] || die "a second -a wrote"
}

@test "sid 4k: \$AttrDef's table zeroed: mkntfs's table written back" {
	local want
	need_sid
	want=$(python3 "$DAMAGE" "$BATS_FILE_TMPDIR/sid4k.img" attrdefsum)
	sysrec_case sid4k attrdef "table of 2560 bytes does not parse"
	[ "$(python3 "$DAMAGE" image attrdefsum)" = "$want" ] || die "\$AttrDef is not the table mkntfs wrote"
}

@test "ours 4k: \$Volume's \$FILE_NAME value length 0 in both copies: repaired in place" {
	sysrec_case ours4k fnvlen-3 "is too short for its content"
}

@test "ours 4k: the root's \$STANDARD_INFORMATION value length 0: detected and repaired" {
	sysrec_case ours4k sivlen-5 "is too short for its content"
}

@test "ours 4k: a file's only \$FILE_NAME beyond repair: its name comes back from its directory entry" {
	sysrec_case ours4k fnname-@blob "has lost its names: give it this one back"
}

# the lab's r-aged4k-1700004: a random byte made a unit of a name in big/
# '/'; the index was rebuilt from it and ntfs-3g then listed none of big/'s
# 1,158 other names (ntfsck -a the same)
@test "ours 4k: a '/' in a file's only name: the name comes back from its directory entry" {
	sysrec_case ours4k fnslash-@blob "has lost its names: give it this one back"
}

# a name holding a '/' (no namespace allows it; ntfs-3g then cannot list
# its directory) that no entry can give back: mended ('/' -> '_', as
# e2fsck mends a name) and big/ rebuilt from it.
# badname_case RENAMED REPORT DAMAGE...: DAMAGE are ntfs_patch.py
# commands ("@big": big/'s record; "@fN": big/fN's); REPORT, words -a
# must print; RENAMED, a sed script turning the manifest taken before the
# damage into the one ntfs-3g must list after -a (the same bytes under the
# mended names).  Also: -n reports and writes nothing, and after -a
# ntfsck -n and our -n are clean.
badname_case() {
	local base=$BATS_FILE_TMPDIR/ours4k.img renamed=$1 report=$2 c f
	local -A rec
	shift 2
	cp --sparse=always "$base" image
	mkdir -p mnt
	ntfs-3g -o ro image mnt
	rec[big]=$(stat -c %i mnt/big)
	for f in f90 f99 f150 f151; do rec[$f]=$(stat -c %i "mnt/big/$f"); done
	umount mnt
	for f in big f150 f151 f90 f99; do
		renamed=${renamed//@$f/${rec[$f]}}
		report=${report//@$f/${rec[$f]}}
	done
	for c in "$@"; do
		for f in big f150 f151 f90 f99; do c=${c//@$f /${rec[$f]} }; done
		python3 "$FSFORGE_TOP/tests/ntfs/ntfs_patch.py" image $c
	done
	before=$(sha256sum < image)
	run "$FSCK" -n image
	[ "$status" -eq 4 ] || { echo "$output"; die "-n on the damage: exit $status"; }
	[ "$(sha256sum < image)" = "$before" ] || die "-n wrote to the image"
	run "$FSCK" -a image
	echo "$output"
	[ "$status" -eq 1 ] || die "-a exit $status"
	[[ $output == *"$report"* ]] || die "-a did not report: $report"
	repair_converged "$FSCK" image -a
	ntfs-3g -o ro image mnt
	run manifest mnt
	umount mnt
	[ "$status" -eq 0 ] || { echo "$output"; die "ntfs-3g cannot list the volume"; }
	diff -u <(sed "$renamed" "$base.manifest" | LC_ALL=C sort) \
		<(echo "$output" | LC_ALL=C sort) || die "manifest differs"
}

MENDED="\"f15/\" (MFT record @f150) holds a NUL or a '/', which no namespace allows: it becomes \"f15_\""

@test "ours 4k: a '/' in a file's only name and no entry for it: the name mended, its directory rebuilt" {
	badname_case 's|\./big/f150$|./big/f15_|' "$MENDED" \
		"rmentry @big f150" "renamefn @f150 f150 f15/"
}

@test "ours 4k: a '/' in a file's only name and in its entry: the name mended, not given back" {
	badname_case 's|\./big/f150$|./big/f15_|' "$MENDED" \
		"rename @f150 f150 f15/" "rmentry @big f151"
}

@test "ours 4k: a '/' in a name and its entry alike (the digests agree): found, the name mended" {
	badname_case 's|\./big/f150$|./big/f15_|' "$MENDED" "rename @f150 f150 f15/"
}

# a NUL in a name (a unit zeroed) is mended as a '/' is
@test "ours 4k: a NUL in a name and its entry alike: found, the name mended" {
	badname_case 's|\./big/f150$|./big/f15_|' "(MFT record @f150) holds a NUL or a '/', which no namespace allows: it becomes \"f15_\"" \
		'rename @f150 f150 f15\0'
}

# a Win32 name with its DOS name (ntfs-3g's system.ntfs_dos_name): the
# Win32 half gets a '/' in its record and its entry; mended, it keeps
# its DOS name, which ntfs-3g still reads, and ntfsck -n finds the pair
# consistent
@test "ours 4k: a '/' in the Win32 name of a Win32+DOS pair: mended, the DOS name kept with it" {
	local r c
	cp --sparse=always "$BATS_FILE_TMPDIR/ours4k.img" image
	mkdir -p mnt
	ntfs-3g image mnt
	echo pair > "mnt/big/Long File Name.document"
	setfattr -n system.ntfs_dos_name -v "LONGFI~1.DOC" "mnt/big/Long File Name.document"
	r=$(stat -c %i "mnt/big/Long File Name.document")
	umount mnt
	python3 "$FSFORGE_TOP/tests/ntfs/ntfs_patch.py" image rename "$r" \
		"Long File Name.document" "Lo/g File Name.document"
	run "$FSCK" -n image
	[ "$status" -eq 4 ] || die "-n exit $status: $output"
	run "$FSCK" -a image
	[ "$status" -eq 1 ] || die "-a exit $status: $output"
	[[ $output == *"\"Lo/g File Name.document\" (MFT record $r) holds a NUL or a '/', which no namespace allows: it becomes \"Lo_g File Name.document\""* ]] || die "$output"
	repair_converged "$FSCK" image -a
	ntfs-3g -o ro image mnt
	run getfattr -h --only-values -n system.ntfs_dos_name "mnt/big/Lo_g File Name.document"
	c=$(cat "mnt/big/Lo_g File Name.document")
	umount mnt
	[ "$status" -eq 0 ] || die "no DOS name: $output"
	[ "$output" = "LONGFI~1.DOC" ] || die "DOS name: $output"
	[ "$c" = pair ] || die "content: $c"
}

# f99 is renamed f9_ (a valid name, the last key still), f90 f9/ (in
# order still): mended, f90's name is taken, and it is f90 (the mended
# one, though its record number is lower) that gets the unique suffix of
# pass3_dupnames.c
@test "ours 4k: a '/' in a name whose mended form is taken: the mended name made unique" {
	badname_case 's|\./big/f99$|./big/f9_|; s|\./big/f90$|./big/f9_.fsck-@f90|' \
		"becomes \"f9_.fsck-@f90\"" "rename @f99 f99 f9_" "rename @f90 f90 f9/"
}

@test "ours 4k: a file without any name whose entry holds a '/': the name given back mended" {
	local base=$BATS_FILE_TMPDIR/ours4k.img rec
	rec=$(cat "$base.blob")
	cp --sparse=always "$base" image
	python3 "$FSFORGE_TOP/tests/ntfs/ntfs_patch.py" image rename "$rec" blob bl/b
	python3 "$DAMAGE" image "fnname-$rec"
	run "$FSCK" -a image
	echo "$output"
	[ "$status" -eq 1 ] || die "-a exit $status"
	[[ $output == *"entry \"bl/b\" names MFT record $rec, which has lost its names: give it this one back. FIXED"* ]] ||
		die "not given back"
	repair_converged "$FSCK" image -a
	mkdir -p mnt
	ntfs-3g -o ro image mnt
	run manifest mnt
	umount mnt
	[ "$status" -eq 0 ] || { echo "$output"; die "ntfs-3g cannot list the volume"; }
	diff -u <(sed 's|\./d/e/blob$|./d/e/bl_b|' "$base.manifest" | LC_ALL=C sort) \
		<(echo "$output" | LC_ALL=C sort) || die "manifest differs"
}

@test "sid 4k: \$Volume's record zeroed in both copies: made again" {
	sysrec_case sid4k zero-3 "MFT record 3: $REMADE"
}

@test "sid 4k: \$AttrDef's record zeroed: made again" {
	sysrec_case sid4k zero-4 "MFT record 4: $REMADE"
}

@test "sid 4k: \$Bitmap's record zeroed: made again" {
	sysrec_case sid4k zero-6 "MFT record 6: $REMADE"
}

@test "sid 4k: \$Secure's record zeroed: made again, every file's security id held by it" {
	sysrec_case sid4k zero-9 "MFT record 9: $REMADE"
}

@test "sid 4k: \$UpCase without its table: made again" {
	sysrec_case sid4k nodata-10 "MFT record 10: $REMADE"
}

@test "sid 4k: \$Extend's record BAAD: made again, its index rebuilt" {
	sysrec_case sid4k baad-11 "MFT record 11: $REMADE"
}

@test "sid 64k: \$LogFile's record zeroed in both copies: made again" {
	sysrec_case sid64k zero-2 "MFT record 2: $REMADE"
}

@test "sid 64k: \$AttrDef's record zeroed in both copies: made again" {
	sysrec_case sid64k zero-4 "MFT record 4: $REMADE"
}

@test "sid 64k: \$Boot's record BAAD in both copies: made again" {
	sysrec_case sid64k baad-7 "MFT record 7: $REMADE"
}

@test "sid 64k: \$BadClus's record zeroed in both copies: made again" {
	sysrec_case sid64k zero-8 "MFT record 8: $REMADE"
}

@test "sid 64k: \$Extend's record zeroed in both copies: made again, its index rebuilt" {
	sysrec_case sid64k zero-11 "MFT record 11: $REMADE"
}

@test "sid 64k: \$Volume's \$STANDARD_INFORMATION value length 0 in both copies: repaired in place" {
	sysrec_case sid64k sivlen-3 "is too short for its content"
}

@test "-n on a destroyed \$AttrDef record reports it and writes nothing" {
	cp --sparse=always "$BATS_FILE_TMPDIR/ours4k.img" image
	python3 "$DAMAGE" image zero-4
	before=$(sha256sum < image)
	run "$FSCK" -n image
	[ "$status" -eq 4 ] || die "-n exit $status"
	[[ $output == *"MFT record 4: $REMADE"* ]] || die "not reported"
	[ "$(sha256sum < image)" = "$before" ] || die "-n wrote"
}

@test "ours 4k: a file without any name and without an entry: reconnected to /lost+found with its data" {
	local base=$BATS_FILE_TMPDIR/ours4k.img rec dir want
	rec=$(cat "$base.blob")
	cp --sparse=always "$base" image
	python3 "$DAMAGE" image "fnname-$rec"
	dir=$(cat "$base.dir")
	python3 "$FSFORGE_TOP/tests/ntfs/ntfs_patch.py" image rmentry "$dir" blob
	run "$FSCK" -a image
	echo "$output"
	[ "$status" -le 1 ] || die "-a exit $status"
	[[ $output == *"MFT record $rec: file is in no directory. RECONNECTED"* ]] || die "not reconnected"
	repair_converged "$FSCK" image -a
	want=$(grep '  ./d/e/blob$' "$base.manifest" | cut -d' ' -f1)
	mkdir -p mnt
	ntfs-3g -o ro image mnt
	run sha256sum "mnt/lost+found/#$rec"
	umount mnt
	[ "${output%% *}" = "$want" ] || die "lost+found/#$rec: $output, want $want"
}
