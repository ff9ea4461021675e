#!/usr/bin/env bats
# fsck.ntfs repairs the smallest thing: one inconsistent field of an MFT
# record (sizes, an attribute flag, a torn stride, a corrupt attribute
# header) is repaired where it is, and the file keeps its data and its name.
# A volume made by our mkfs.ntfs is filled through ntfs-3g (a 12 MiB file,
# a directory of 700 files, a directory of one file, small files, one with
# a named stream, a file compressed by ntfs-3g in a compressed directory --
# units of text, of random bytes stored whole, of zeros left as a hole --
# and a sparse file with holes); the
# content manifest (sha256 per path) is taken before the damage.  Oracles
# that are not ours: ntfsprogs-plus ntfsck -n (sid) on the repaired volume,
# ntfs-3g mounting it with the manifest unchanged.
load ../lib/common

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
HELPER=$FSFORGE_TOP/tests/ntfs/minrepair.py
source "$FSFORGE_TOP/tests/ntfs/ntfs_helpers.bash"

# manifest of the volume mounted at $1: "sha256  ./path" per file, sorted
manifest() {
	(cd "$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
}

setup_file() {
	need_ntfs3g
	local d=$BATS_FILE_TMPDIR m
	truncate -s 32M "$d/base.img"
	"$FSFORGE_BUILDDIR/mkfs/mkfs.ntfs" -q -F "$d/base.img"
	m=$d/mnt
	mkdir -p "$m"
	ntfs-3g "$d/base.img" "$m"
	head -c 12582912 /dev/urandom > "$m/big"
	mkdir "$m/dir"
	for i in $(seq 1 700); do echo "child $i" > "$m/dir/c$i"; done
	echo one > "$m/s1"
	echo two > "$m/s2"
	echo noted > "$m/noted"
	# a directory whose index is its root alone
	mkdir "$m/small"
	echo x > "$m/small/x"
	setfattr -n user.note -v "a named stream" "$m/noted"
	# 40 named streams: an attribute list and extension records
	echo listed > "$m/listed"
	for i in $(seq 1 40); do
		setfattr -n "user.attr$i" -v "$(printf 'v%.0s' $(seq 1 60))" "$m/listed"
	done
	getfattr -d "$m/listed" | grep "^user\." > "$d/listed.xattrs"
	# compressed (LZNT1, units of 16 clusters of 4 KiB): 64 KiB of text,
	# 192 KiB of random bytes (stored whole), 64 KiB of text, 64 KiB of
	# zeros (a hole), a last unit of random bytes and text
	mkdir "$m/packed"
	setfattr -h -v 0x00000800 -n system.ntfs_attrib_be "$m/packed"
	python3 -c '
import random, sys
r = random.Random(11)
text = b"".join(b"compressible line %d of the packed file\n" % i for i in range(8000))
noise = bytes(r.getrandbits(8) for _ in range(3 * 65536 + 12345))
sys.stdout.buffer.write(text[:65536] + noise[:3 * 65536] + text[65536:131072] +
                        bytes(65536) + noise[3 * 65536:] + text[131072:170000])' > "$m/packed/mixed"
	# sparse: 3 MiB, data at 300000 and 100000 bytes at 800 KiB
	truncate -s 3M "$m/holes"
	printf middle | dd of="$m/holes" bs=1 seek=300000 conv=notrunc status=none
	head -c 100000 /dev/urandom | dd of="$m/holes" bs=4096 seek=200 conv=notrunc status=none
	getfattr -h -e hex -n system.ntfs_attrib_be "$m/packed/mixed" "$m/holes" > "$d/content.attrib"
	# ntfs-3g's inode number is the MFT record number
	stat -c %i "$m/big" > "$d/big.rec"
	stat -c %i "$m/dir" > "$d/dir.rec"
	stat -c %i "$m/noted" > "$d/noted.rec"
	stat -c %i "$m/s1" > "$d/s1.rec"
	stat -c %i "$m/s2" > "$d/s2.rec"
	stat -c %i "$m/listed" > "$d/listed.rec"
	stat -c %i "$m/packed/mixed" > "$d/mixed.rec"
	stat -c %i "$m/holes" > "$d/holes.rec"
	stat -c %i "$m/small" > "$d/small.rec"
	manifest "$m" > "$d/manifest"
	umount "$m"
	[ "$(wc -l < "$d/manifest")" -eq 708 ]
	[ "$(grep -c '^user.attr' "$d/listed.xattrs")" -eq 40 ]
	# ntfs-3g made them compressed (0x800) and sparse (0x200)
	grep -q '^system.ntfs_attrib_be=0x00000820$' <(sed -n 2p "$d/content.attrib")
	grep -q '^system.ntfs_attrib_be=0x00000220$' <(sed -n 5p "$d/content.attrib")
}

setup() { cd_tmp; }
teardown() { mountpoint -q mnt 2>/dev/null && umount mnt; return 0; }

# After one -a repaired image: -n is clean and writes nothing, a second
# -a changes nothing, ntfsck -n agrees, and ntfs-3g reads back the
# pre-damage manifest with the 700 names of /dir.
repaired_oracles() {
	repair_converged "$FSCK" image -a
	mkdir -p mnt
	ntfs-3g -o ro image mnt
	manifest mnt > manifest
	ls mnt/dir > names
	getfattr -d mnt/listed | grep "^user\." > xattrs
	umount mnt
	diff -u "$BATS_FILE_TMPDIR/manifest" manifest || die "manifest differs"
	[ "$(wc -l < names)" -eq 700 ] || die "dir has $(wc -l < names) names"
}

# after a repair by MODE (-a or -y) that changed PATH on purpose: -n clean
# and writes nothing, ntfsck -n clean, the ntfs-3g manifest equal beyond
# PATH, and PATH still there
oracles_beyond() {
	local path=$1 mode=$2 after
	after=$(sha256sum < image)
	run "$FSCK" -n image
	[ "$status" -eq 0 ] || { echo "$output"; die "-n after $mode: exit $status"; }
	[ "$(sha256sum < image)" = "$after" ] || die "-n after $mode wrote"
	run sid_ntfsck image
	[ "$status" -eq 0 ] || { echo "$output"; die "ntfsck -n: exit $status"; }
	mkdir -p mnt
	ntfs-3g -o ro image mnt
	manifest mnt > manifest
	umount mnt
	grep -v "  ./$path\$" "$BATS_FILE_TMPDIR/manifest" > want
	grep -v "  ./$path\$" manifest > got
	diff -u want got || die "manifest differs beyond $path"
	grep -q "  ./$path\$" manifest || die "$path is gone"
}

# DAMAGE applied to the record of FILE (big, dir or noted); then every
# oracle.  EXPECT: words the -a report must hold for this damage.
# NSTORY: why -n may report more than that one damage (default: it may not).
repair_case() {
	local file=$1 damage=$2 expect=$3 nstory=${4:-} rec before
	rec=$(cat "$BATS_FILE_TMPDIR/$file.rec")
	# (base.img itself is clean: the first test below; checked once, not
	# on each of its identical copies)
	cp --sparse=always "$BATS_FILE_TMPDIR/base.img" image
	python3 "$HELPER" image "$rec" "$damage" > damaged
	before=$(sha256sum < image)
	run "$FSCK" -n image
	echo "$output"
	[ "$status" -eq 4 ] || die "-n on the damage: exit $status"
	[ "$(sha256sum < image)" = "$before" ] || die "-n wrote to the image"
	# -n tells what -a does: the one damaged field, not the file dropped
	# from its directory and the bitmaps that a declined repair implies
	[[ $output == *"MFT record "*"$expect"* ]] || die "-n did not report: $expect"
	[ -n "$nstory" ] || [[ $output == *"problems: 1 found, 0 fixed, 1 left"* ]] ||
		die "-n reports more than the one damage -a repairs"
	run "$FSCK" -a image
	echo "$output"
	[ "$status" -le 1 ] || die "-a exit $status"
	[[ $output == *"MFT record "*"$expect"* ]] || die "-a did not report: $expect"
	# the record was repaired, not cleared, and nothing else was needed
	[[ $output != *"is lost"* ]] || die "-a cleared the record"
	[[ $output != *"no directory"* ]] || die "-a orphaned files"
	[[ $output == *"problems: 1 found, 1 fixed, 0 left"* ]] || die "-a did more than one repair"
	repaired_oracles
}

@test "the undamaged volume every case starts from: fsck.ntfs -n exits 0" {
	cp --sparse=always "$BATS_FILE_TMPDIR/base.img" image
	run "$FSCK" -n image
	[ "$status" -eq 0 ] || die "clean volume: -n exit $status"
}

# one byte makes a file's base reference 1: the record still holds its
# $STANDARD_INFORMATION, names and data and its parent's index names it
# (ntfs-3g reads it whole); ntfsck -a clears it, fsck.ntfs must keep it
@test "a base record whose base reference is 1 (one byte): the reference set back to 0, the 12 MiB file kept" {
	repair_case big baseref_plus1 "claims to extend MFT record 1, which does not list it"
}

@test "a small file's base reference 1 (one byte): set back to 0, the file and its name kept" {
	repair_case s1 baseref_plus1 "claims to extend MFT record 1, which does not list it"
}

# one byte makes a file's base reference name a free record (the first
# free slot, below 256): a free record lists nothing, and neither does the
# base a stale copy of a file's record names (the control below); the
# file's directory entry names this record with its sequence number, so
# it is the file and keeps it (ntfsck -a clears it, and so did we)
@test "a 12 MiB file's base reference naming a free record (one byte): set back to 0, the file kept" {
	repair_case big baseref_free "claims to extend MFT record"
}

@test "a small file's base reference naming a free record: -n and -a name that record, the file and its name kept" {
	local s1 free
	s1=$(cat "$BATS_FILE_TMPDIR/s1.rec")
	cp --sparse=always "$BATS_FILE_TMPDIR/base.img" image
	free=$(python3 "$HELPER" image "$s1" baseref_free)
	run "$FSCK" -n image
	echo "$output"
	[ "$status" -eq 4 ] || die "-n exit $status"
	[[ $output == *"MFT record $s1: "*"claims to extend MFT record $free, which does not list it"* ]] ||
		die "-n did not report the base reference"
	[[ $output == *"problems: 1 found, 0 fixed, 1 left"* ]] || die "-n reports more than the reference"
	run "$FSCK" -a image
	echo "$output"
	[ "$status" -eq 1 ] || die "-a exit $status"
	[[ $output == *"MFT record $s1: "*"claims to extend MFT record $free, which does not list it"* ]] ||
		die "-a did not set the reference back"
	[[ $output == *"problems: 1 found, 1 fixed, 0 left"* ]] || die "-a did more than that"
	repaired_oracles
}

# The control: a stale copy of s1's record in a free slot (in use, saying
# it is that slot, holding s1's $STANDARD_INFORMATION and name) claiming
# another free slot as its base.  s1's directory entry names s1's record,
# not the copy: the copy is debris and is freed as before, s1 is kept.
@test "a stale copy of a file's record in a free slot claiming a free base: still freed, the file kept" {
	local s1 out slot base
	s1=$(cat "$BATS_FILE_TMPDIR/s1.rec")
	cp --sparse=always "$BATS_FILE_TMPDIR/base.img" image
	out=$(python3 "$HELPER" image "$s1" stale_free_base)
	read -r slot base <<<"$out"
	for mode in -n -a; do
		run "$FSCK" "$mode" image
		echo "$output"
		[ "$status" -eq "$([ $mode = -n ] && echo 4 || echo 1)" ] || die "$mode exit $status"
		[[ $output == *"MFT record $slot: extension record of MFT record $base, which is not in use"* ]] ||
			die "$mode: the copy not freed"
		[[ $output != *"claims to extend"* ]] || die "$mode: the copy made a file"
	done
	repaired_oracles
}

# the second reader's case: an extension record numbered below its base
# that looks like a base (its first attribute's type made 0x10), and the
# base torn (pass 1 reaches it later and repairs it): the base must be
# judged as repaired, which lists the extension; nothing split off
@test "a torn base numbered above its extension: judged as pass 1 repairs it, the extension not split off as a file" {
	truncate -s 16M v.img
	"$FSFORGE_BUILDDIR/mkfs/mkfs.ntfs" -q -F v.img
	mkdir -p mnt
	ntfs-3g v.img mnt
	for i in $(seq 1 10); do echo "$i" > "mnt/f$i"; done
	echo t > mnt/t
	rm mnt/f*
	for i in $(seq 1 40); do
		setfattr -n "user.attr$i" -v "$(printf 'v%.0s' $(seq 1 60))" mnt/t
	done
	getfattr -d mnt/t | grep '^user\.' > want
	stat -c %i mnt/t > base.rec
	umount mnt
	run python3 - v.img "$(cat base.rec)" <<'PY'
import os, struct, sys
sys.path.insert(0, os.environ["FSFORGE_TOP"] + "/tests/ntfs")
from ntfs_patch import Volume, attrs
vol = Volume(sys.argv[1])
base = int(sys.argv[2])
ext = [n for n in range(16, base)
       if struct.unpack_from("<Q", vol.read(n), 0x20)[0] & 0xffffffffffff == base]
assert ext, "no extension record below the base"
rec = vol.read(ext[0])
off = next(iter(attrs(rec)))[0]
assert struct.unpack_from("<I", rec, off)[0] == 0x80, "first attribute not $DATA"
struct.pack_into("<I", rec, off, 0x10)
vol.write(ext[0], rec)
raw = bytearray(vol.pread(vol.offset(vol.mft_runs, base * vol.rs), vol.rs))
raw[510:512] = b"\xad\xde"
vol.pwrite(vol.offset(vol.mft_runs, base * vol.rs), raw)
vol.f.close()
print(ext[0])
PY
	echo "$output"
	[ "$status" -eq 0 ]
	cp v.img image
	run "$FSCK" -a image
	echo "$output"
	[ "$status" -le 1 ]
	[[ $output != *"claims to extend"* ]] || die "the extension was split off as a file"
	repair_converged "$FSCK" image -a
	mkdir -p mnt
	ntfs-3g -o ro image mnt
	getfattr -d mnt/t | grep '^user\.' > got
	umount mnt
	# the stream whose type was damaged may go; every other one stays
	# (39: what the repair keeps without the base-reference check)
	[ -z "$(comm -13 <(sort want) <(sort got))" ] || die "a stream changed"
	[ "$(wc -l < got)" -ge 39 ] || die "$(wc -l < got) of 40 streams kept"
}

@test "initialized size > data size: clamped, the 12 MiB file keeps its data" {
	repair_case big init_gt_data "sizes are inconsistent"
}

@test "data size > allocated size: clamped to the runs, the 12 MiB file keeps its data" {
	repair_case big data_gt_alloc "sizes are inconsistent"
}

@test "an attribute flag bit that does not exist: cleared, not the record" {
	repair_case big flag_bit "unknown flags 0x100"
}

@test "torn stride 1 of the 12 MiB file's record (past its attributes): restored" {
	repair_case big torn:1 "torn write) in stride 1, past the attributes"
}

@test "torn stride 0 of the 700-children directory's record: restored, all names kept" {
	repair_case dir torn:0 "torn write) in stride 0, inside the attributes"
}

@test "torn stride 1 of the 700-children directory's record: restored, all names kept" {
	repair_case dir torn:1 "torn write) in stride 1"
}

@test "a corrupt header of a named stream: that attribute is removed, the file kept" {
	repair_case noted stream_header "name outside the attribute); it is removed"
}

@test "attribute list: a flag bit in an extension record is cleared in place, all 40 streams kept" {
	repair_case listed ext_stream_flag_bit "unknown flags 0x100"
	diff -u "$BATS_FILE_TMPDIR/listed.xattrs" xattrs
}

@test "attribute list: a corrupt stream in an extension record goes with its list entry, 39 streams kept" {
	# -n reported the list entry -a removes with the stream and the
	# record's bit in the \$MFT bitmap (sessions 19-20): the one now
	repair_case listed ext_stream_header "name outside the attribute); it is removed"
	# exactly the damaged stream is gone, every other one reads as before
	grep -v "^user.$(cat damaged)=" "$BATS_FILE_TMPDIR/listed.xattrs" > want
	[ "$(grep -c '^user.attr' want)" -eq 39 ]
	diff -u want xattrs
}

@test "a length that breaks the walk (named stream): the record ends there, the file keeps its data" {
	repair_case noted stream_length "the 4 attributes before it are kept"
}

# Repairs that are not certain: -a must stop and ask (exit 4, nothing
# written); -y repairs; then the usual oracles, the damaged file excepted
# from the manifest (FILE: its path in it).
asked_case() {
	local file=$1 damage=$2 expect=$3 path=$4 rec before
	rec=$(cat "$BATS_FILE_TMPDIR/$file.rec")
	cp --sparse=always "$BATS_FILE_TMPDIR/base.img" image
	python3 "$HELPER" image "$rec" "$damage"
	before=$(sha256sum < image)
	run "$FSCK" -a image
	[ "$status" -eq 4 ] || die "-a on an uncertain repair: exit $status"
	[[ $output == *"$expect"*"RUN fsck MANUALLY"* ]] || die "-a did not stop at: $expect"
	[ "$(sha256sum < image)" = "$before" ] || die "-a wrote before stopping"
	run "$FSCK" -y image
	echo "$output"
	[ "$status" -eq 1 ] || die "-y exit $status"
	[[ $output != *"is lost"* ]] || die "-y cleared the record"
	oracles_beyond "$path" -y
}

@test "a resident value longer than its attribute: asked, then cut to the bytes there" {
	asked_case s1 value_length "value of 512 bytes runs past the attribute; only 8 are there" s1
}

@test "a resident value length one bit off (bit 30): the length the attribute ends, the file's bytes as before" {
	# r-rich1k-910100011: ntfsck -a drops the file, we had left it (exit 4)
	repair_case s1 value_length_bit "value of 1073741828 bytes runs past the attribute; one bit off it is 4"
}

@test "an index root's allocated size past its value (bit 20): the index rebuilt, all 700 names kept" {
	# r-sid64k-910100010: -n saw nothing, ntfsck -n "corrupt index root",
	# ntfs-3g could not list the directory
	repair_case dir iroot_alloc "directory index is corrupt (index root allocated size"
}

@test "an INDX block whose header allocates 8 bytes less than the block: the index rebuilt, all 700 names kept" {
	# r-rich1k-910100002: -n saw nothing, ntfs-3g and ntfsck refuse the
	# block ("size (4088) differing from the index specified size")
	repair_case dir indx_alloc "directory index is corrupt (index block allocated size"
}

# -a stopped here (exit 4, the volume left).  The one run of /big lies
# past the end: nothing before it to keep, its 12 MiB become a hole (the
# attribute made sparse), the size and the name kept; ntfs-3g reads zeros.
@test "a runlist that leaves the volume: -a makes the VCNs of the bad run a hole, the size and the name kept" {
	local rec
	rec=$(cat "$BATS_FILE_TMPDIR/big.rec")
	cp --sparse=always "$BATS_FILE_TMPDIR/base.img" image
	python3 "$HELPER" image "$rec" runs_outside
	run "$FSCK" -a image
	echo "$output"
	[ "$status" -eq 1 ] || die "-a exit $status"
	[[ $output == *"MFT record $rec: attribute 0x80 has a bad runlist"*"the 0 runs before the bad one (0 clusters) are kept, VCNs 0-3071 become a hole (zeros) and the size (12582912 bytes) is kept"*FIXED* ]] ||
		die "not made a hole"
	[[ $output != *"is lost"* ]] || die "-a cleared the record"
	repair_converged "$FSCK" image -a
	oracles_beyond big -a
	mkdir -p mnt
	ntfs-3g -o ro image mnt
	run cmp mnt/big <(head -c 12582912 /dev/zero)
	umount mnt
	[ "$status" -eq 0 ] || die "big is not 12 MiB of zeros: $output"
}

# m-deep4k-1500010: a sparse file's runs all past the end of the volume
# (one LCN delta damaged, the rest decoded from it) hold nothing to read;
# -a asked (exit 4).  Now -a makes them a hole without asking: the file
# keeps its name and its 3 MiB (zeros), ntfsck -n agrees.
@test "a sparse file whose runs all lie past the volume: -a makes them a hole, the size and the name kept" {
	local rec
	rec=$(cat "$BATS_FILE_TMPDIR/holes.rec")
	cp --sparse=always "$BATS_FILE_TMPDIR/base.img" image
	python3 "$HELPER" image "$rec" sparse_runs_outside
	run "$FSCK" -a image
	echo "$output"
	[ "$status" -eq 1 ] || die "-a exit $status"
	[[ $output == *"MFT record $rec: attribute 0x80 has 2 runs outside the volume from VCN "*"become a hole of 26 clusters"*FIXED* ]] ||
		die "not made a hole"
	[[ $output != *"is lost"* ]] || die "-a cleared the record"
	repair_converged "$FSCK" image -a
	oracles_beyond holes -a
	mkdir -p mnt
	ntfs-3g -o ro image mnt
	run cmp mnt/holes <(head -c 3145728 /dev/zero)
	umount mnt
	[ "$status" -eq 0 ] || die "holes is not 3 MiB of zeros: $output"
}

# A directory's index runs cut lose no name (they are in the children's
# records): -a repairs without asking, the index is rebuilt.
@test "a directory index runlist that leaves the volume: cut and the index rebuilt by -a, all 700 names kept" {
	local rec
	rec=$(cat "$BATS_FILE_TMPDIR/dir.rec")
	cp --sparse=always "$BATS_FILE_TMPDIR/base.img" image
	python3 "$HELPER" image "$rec" index_runs_outside
	run "$FSCK" -a image
	echo "$output"
	[ "$status" -eq 1 ] || die "-a exit $status"
	[[ $output == *"directory index attribute 0xa0 has a bad runlist"*FIXED* ]] || die "not cut"
	[[ $output == *"(/dir): directory index is corrupt"*REBUILT* ]] || die "not rebuilt"
	[[ $output != *"no directory"* ]] || die "-a orphaned files"
	repair_converged "$FSCK" image -a
	mkdir -p mnt
	ntfs-3g -o ro image mnt
	manifest mnt > manifest
	umount mnt
	diff -u "$BATS_FILE_TMPDIR/manifest" manifest || die "manifest differs"
}

@test "a directory record beyond use: cleared, made again from its parent's entry, all 700 names kept" {
	local rec
	rec=$(cat "$BATS_FILE_TMPDIR/dir.rec")
	cp --sparse=always "$BATS_FILE_TMPDIR/base.img" image
	python3 "$HELPER" image "$rec" magic
	run "$FSCK" -a image
	echo "$output"
	[ "$status" -eq 1 ] || die "-a exit $status"
	[[ $output == *"MFT record $rec: record is in use but corrupt"* ]] || die "not cleared"
	[[ $output == *"names directory MFT record $rec, which was unusable and cleared; it is made again"* ]] ||
		die "not made again"
	[[ $output != *"no directory"* ]] || die "-a orphaned files"
	repair_converged "$FSCK" image -a
	mkdir -p mnt
	ntfs-3g -o ro image mnt
	manifest mnt > manifest
	ls mnt/dir > names
	umount mnt
	diff -u "$BATS_FILE_TMPDIR/manifest" manifest || die "manifest differs"
	[ "$(wc -l < names)" -eq 700 ] || die "dir has $(wc -l < names) names"
}

# -n on the same damage reports what -a does: the directory made again,
# not its 700 files as orphans ("file is in no directory" each, that -a
# never has: they are in it once it is made).  Before, -n reported 700
# such lines.
@test "a directory record beyond use: -n reports it made again, not its 700 files as orphans" {
	local rec before na
	rec=$(cat "$BATS_FILE_TMPDIR/dir.rec")
	cp --sparse=always "$BATS_FILE_TMPDIR/base.img" image
	python3 "$HELPER" image "$rec" magic
	before=$(sha256sum < image)
	run "$FSCK" -n image
	[ "$status" -eq 4 ] || die "-n exit $status: $output"
	[ "$(sha256sum < image)" = "$before" ] || die "-n wrote"
	[[ $output == *"names directory MFT record $rec, which was unusable and cleared; it is made again"* ]] ||
		die "-n does not report it made again: $output"
	[[ $output != *"no directory"* ]] || die "-n reports orphans -a never has: $(grep -c "no directory" <<<"$output")"
	na=$(grep -c "? no$" <<<"$output")
	run "$FSCK" -a image
	[ "$status" -eq 1 ] || die "-a exit $status: $output"
	[ "$na" -le "$(grep -c "\. \(FIXED\|CLEARED\|REBUILT\|RECONNECTED\)\.\?$" <<<"$output")" ] ||
		die "-n reports $na problems, -a: $output"
}

@test "a record written also over another's slot (a misdirected write): that slot freed, no second copy of the file" {
	local s1 s2
	s1=$(cat "$BATS_FILE_TMPDIR/s1.rec")
	s2=$(cat "$BATS_FILE_TMPDIR/s2.rec")
	cp --sparse=always "$BATS_FILE_TMPDIR/base.img" image
	python3 "$HELPER" image "$s1" "copy_to:$s2"
	run "$FSCK" -a image
	echo "$output"
	[ "$status" -eq 1 ] || die "-a exit $status"
	[[ $output == *"MFT record $s2: record is a copy of MFT record $s1 written in the wrong place"* ]] ||
		die "not taken for a copy"
	repair_converged "$FSCK" image -a
	run sid_ntfsck image
	[ "$status" -eq 0 ] || { echo "$output"; die "ntfsck -n: exit $status"; }
	# ntfs-3g: s1 once, with its content; s2 (its record overwritten)
	# gone; nothing else changed, no renamed duplicate of s1
	mkdir -p mnt
	ntfs-3g -o ro image mnt
	manifest mnt > manifest
	umount mnt
	grep -v "  ./s2\$" "$BATS_FILE_TMPDIR/manifest" > want
	diff -u want manifest || die "manifest differs beyond s2"
}

# The same, of a record with a fault of its own (big's non-resident
# $DATA with an attribute flag that does not exist): -a repairs big at
# its slot before it reaches the copy, which must still be taken for one
# (both slots compared as read), not renumbered into a second big
# (big.fsck-N, given a copy of its clusters).  -n and -a both report the
# one copy.
@test "a record with a fault of its own written also over another's slot: the copy found whatever -a repaired first" {
	local big s2 n a
	big=$(cat "$BATS_FILE_TMPDIR/big.rec")
	s2=$(cat "$BATS_FILE_TMPDIR/s2.rec")
	[ "$big" -lt "$s2" ] || die "big ($big) comes after s2 ($s2)"
	cp --sparse=always "$BATS_FILE_TMPDIR/base.img" image
	python3 "$HELPER" image "$big" flag_bit
	python3 "$HELPER" image "$big" "copy_to:$s2"
	run "$FSCK" -n image
	echo "$output"
	[ "$status" -eq 4 ] || die "-n exit $status"
	n=$(grep -c "written in the wrong place" <<< "$output")
	run "$FSCK" -a image
	echo "$output"
	[ "$status" -eq 1 ] || die "-a exit $status"
	[[ $output == *"MFT record $s2: record is a copy of MFT record $big written in the wrong place"* ]] ||
		die "not taken for a copy"
	[[ $output != *"record says it is number"* ]] || die "the copy renumbered"
	a=$(grep -c "written in the wrong place" <<< "$output")
	[ "$n" -eq 1 ] && [ "$a" -eq 1 ] || die "copies: $n under -n, $a under -a"
	repair_converged "$FSCK" image -a
	run sid_ntfsck image
	[ "$status" -eq 0 ] || { echo "$output"; die "ntfsck -n: exit $status"; }
	mkdir -p mnt
	ntfs-3g -o ro image mnt
	manifest mnt > manifest
	umount mnt
	if grep "\.fsck-" manifest; then die "a renamed duplicate of big"; fi
	grep -v "  ./s2\$" "$BATS_FILE_TMPDIR/manifest" > want
	diff -u want manifest || die "manifest differs beyond s2"
}

# Mode l of the lab's misdirect (d-BASE-rec-l-SEED): the record's newer
# version went to another slot only, its own slot keeps the older one (not
# in use).  Renumbering the copy or freeing it loses s1 (its entry names
# the newer sequence number); the copy is written back to s1's slot, then
# freed where it landed (s2's file, overwritten there, is lost).
@test "a record's newer version written over another's slot only: put back at its own slot, the copy freed" {
	local s1 s2
	s1=$(cat "$BATS_FILE_TMPDIR/s1.rec")
	s2=$(cat "$BATS_FILE_TMPDIR/s2.rec")
	cp --sparse=always "$BATS_FILE_TMPDIR/base.img" image
	python3 "$HELPER" image "$s1" "move_to:$s2"
	run "$FSCK" -a image
	echo "$output"
	[ "$status" -eq 1 ] || die "-a exit $status"
	[[ $output == *"MFT record $s1: its own slot holds an older version; the newer one, written to MFT record $s2 by mistake, is put back"* ]] ||
		die "not put back"
	[[ $output == *"MFT record $s2: record is a copy of MFT record $s1 written in the wrong place"* ]] ||
		die "the copy not freed"
	repair_converged "$FSCK" image -a
	run sid_ntfsck image
	[ "$status" -eq 0 ] || { echo "$output"; die "ntfsck -n: exit $status"; }
	mkdir -p mnt
	ntfs-3g -o ro image mnt
	manifest mnt > manifest
	umount mnt
	grep -v "  ./s2\$" "$BATS_FILE_TMPDIR/manifest" > want
	diff -u want manifest || die "manifest differs beyond s2"
}

# The same into a free slot: nothing was lost there, every file is kept,
# and the free slot does not become a second, live-looking s1.
@test "a record's newer version written over a free slot only: put back, the free slot freed, every file kept" {
	local s1 y
	s1=$(cat "$BATS_FILE_TMPDIR/s1.rec")
	cp --sparse=always "$BATS_FILE_TMPDIR/base.img" image
	y=$(python3 "$HELPER" image "$s1" move_to:free)
	run "$FSCK" -n image
	echo "$output"
	[ "$status" -eq 4 ] || die "-n exit $status"
	[[ $output == *"MFT record $y: free record is a copy of MFT record $s1 written in the wrong place"* ]] ||
		die "-n: the copy in the free slot not found"
	run "$FSCK" -a image
	echo "$output"
	[ "$status" -eq 1 ] || die "-a exit $status"
	[[ $output == *"MFT record $s1: its own slot holds an older version; the newer one, written to MFT record $y by mistake, is put back"* ]] ||
		die "not put back"
	repair_converged "$FSCK" image -a
	run sid_ntfsck image
	[ "$status" -eq 0 ] || { echo "$output"; die "ntfsck -n: exit $status"; }
	mkdir -p mnt
	ntfs-3g -o ro image mnt
	manifest mnt > manifest
	umount mnt
	diff -u "$BATS_FILE_TMPDIR/manifest" manifest || die "manifest differs"
}

@test "bytes in use one bit short, inside an attribute: set back where the end marker is, the file and its name kept" {
	# m-deep4k-1500009: the record was cleared and its name lost; ntfsck
	# -a keeps it ("MFT byte-in-use field is corrupted")
	repair_case big used_bit "record header is invalid (bytes in use "
}

@test "bytes in use 32 past the end marker: set back to it (ntfsck -n objects to the slack)" {
	# m-deep4k-1500009's record 937: its torn stride of 0xff read as an
	# end marker, bytes in use left past it; ntfsck -n objected after -a
	local rec
	rec=$(cat "$BATS_FILE_TMPDIR/s1.rec")
	cp --sparse=always "$BATS_FILE_TMPDIR/base.img" image
	python3 "$HELPER" image "$rec" used_slack
	run sid_ntfsck image
	[ "$status" -ne 0 ] || die "ntfsck -n finds nothing wrong with the slack"
	repair_case s1 used_slack "record header is invalid (bytes in use "
}

@test "bytes in use past the record's allocated size, the attributes inside it: set back to the end marker, the file and its name kept" {
	# splitidx.bats' used layout: the record was cleared and its file
	# lost; ntfsck -a keeps it ("MFT byte-in-use field is corrupted")
	repair_case big used_past "record header is invalid (bytes in use "
}

@test "update sequence array count wrong in the directory's record: put back where the strides say" {
	repair_case dir usa_count "the strides say at 48 with 3"
}

@test "one bit of \$STANDARD_INFORMATION's type flipped (0x14): put back by place and form, the 12 MiB file kept" {
	repair_case big si_type_bit "has type 0x14, which NTFS does not define; by its place and form it is 0x10"
}

@test "\$STANDARD_INFORMATION's value offset off the 8-byte grid: put back, the directory keeps its 700 names" {
	repair_case dir si_value_offset "value offset 28 is not a multiple of 8; the value starts at 24"
}

@test "\$MFT's data size cut short, hiding records in use: grown back, every file kept" {
	# a data size below the records the \$MFT bitmap has in use (a power
	# cut while a driver grew the MFT) must not make them, and the names
	# in every index, look lost: the size grows to hold them
	cp --sparse=always "$BATS_FILE_TMPDIR/base.img" image
	run python3 "$HELPER" image 0 mft_size_short
	[ "$status" -eq 0 ] || die "damage: $output"
	run sid_ntfsck image
	[ "$status" -ne 0 ] || die "ntfsck -n does not see the damage"
	run "$FSCK" -a image
	echo "$output"
	[ "$status" -eq 1 ] || die "-a exit $status"
	[[ $output == *"data size of 16 records hides"*"records in use past it; it becomes"* ]] || die "not reported"
	[[ $output == *"problems: 1 found, 1 fixed, 0 left"* ]] || die "-a did more than one repair"
	repaired_oracles
}

@test "lowest VCN 1 on the one extent of a file's \$DATA (no attribute list): back to 0, the 12 MiB file reads as before" {
	# a repair that kept VCN 1 and fitted the upper end to the runs would
	# shift every byte of the file by a cluster (the manifest catches it)
	repair_case big lowest_vcn "its header says VCNs 1-"
}

@test "an unknown bit in \$FILE_NAME's resident flags: cleared, the indexed bit kept, ntfsck agrees" {
	repair_case dir fn_resident_flags "has unknown resident flags 0x3 (0x1 kept)"
}

@test "a file's \$STANDARD_INFORMATION says sparse, its \$DATA is not: the file attributes follow the data" {
	repair_case big si_sparse_bit "say sparse, its data is plain"
}

@test "\$Volume's record differs from its \$MFTMirr copy only in the update sequence number: the mirror rewritten" {
	# ntfs-3g compares the two copies with the USN and refuses to mount
	echo 3 > "$BATS_FILE_TMPDIR/volume.rec"
	repair_case volume usn_bump "\$MFTMirr copy differs from \$MFT"
}

@test "the 12 MiB file's header claims twice its runs (VCNs and sizes): cut back, -n judges its entry by the cut sizes" {
	# m-ours4k-1900004: -n declined the cut and judged the file's index
	# entry against the claimed sizes, a problem -a never has
	repair_case big extent_double "its runs hold 3072 clusters, its header says VCNs 0-6143"
}

@test "allocated size of the 12 MiB file's record one byte short: set back, the file kept" {
	repair_case big alloc_field "allocated size 1023, not 1024"
}

@test "a file's \$FILE_NAME names its directory with sequence number 0: set to the directory's, ntfsck agrees" {
	repair_case s1 fn_parent_seq0 "the file's name names the directory with sequence number 0, the directory's is 5"
}

@test "an index entry names its file with sequence number 0: the index rebuilt, all 700 names kept" {
	repair_case dir ie_ref_seq0 "which has sequence number 1; the entry says 0"
}

@test "a directory's index entry says 4096 bytes: the root index rebuilt with 0, ntfsck agrees" {
	echo 5 > "$BATS_FILE_TMPDIR/root.rec"
	repair_case root ie_size:dir "index entry \"dir\" says 4096 bytes (0 allocated), the file has 0 (0)"
}

@test "the compressed flag on a plain \$DATA (no unit, no compressed size): cleared, the 12 MiB file reads again" {
	repair_case big compressed_bit "says compressed but has no compression unit and no compressed size; the flag is cleared"
}

# Sparse and compressed data: a lost flag or compression unit is put back
# only when the file attributes, the runs and the data agree (ntfs-3g then
# reads every byte as before: the manifest).  ntfsck -n reports each
# damage (the lost flags, the unit); ntfs-3g reads the compressed file
# wrong without its flag and fails on it without its unit.
@test "a sparse file's lost sparse flag (unit 4 and holes kept): set back, ntfsck agrees" {
	repair_case holes flags_lost "the file attributes, runs and data say sparse, the flag is set"
}

@test "a compressed file's lost compressed flag: set back, ntfs-3g reads it as before" {
	repair_case mixed flags_lost "the file attributes, runs and data say compressed, the flag is set"
}

@test "a compressed file's compression unit 0: set to 4, ntfs-3g reads it as before" {
	repair_case mixed cu:0 "compression unit 0; the file attributes, runs and data say units of 16 clusters, it is set to 4"
}

@test "a compressed file's compression unit 5: set to 4" {
	repair_case mixed cu:5 "compression unit 5; the file attributes, runs and data say units of 16 clusters, it is set to 4"
}

@test "a compressed file's compressed size one cluster too large: recomputed from its runs" {
	# -n judged the index entry by the declined size (session 19)
	repair_case mixed csize_grow "attribute 0x80: compressed size"
}

@test "a compression unit on the plain 12 MiB file: cleared" {
	repair_case big cu_plain "is neither sparse nor compressed and has no holes, but compression unit 4; it is cleared"
}

# When the evidence does not agree, -a changes nothing (not the file
# attributes, not the directory's entry) and exits 4 with the reason.
left_case() {
	local file=$1 damage=$2 expect=$3 rec before
	rec=$(cat "$BATS_FILE_TMPDIR/$file.rec")
	cp --sparse=always "$BATS_FILE_TMPDIR/base.img" image
	python3 "$HELPER" image "$rec" "$damage"
	before=$(sha256sum < image)
	run "$FSCK" -a image
	echo "$output"
	[ "$status" -eq 4 ] || die "-a exit $status"
	[[ $output == *"MFT record $rec "*"left: $expect"* ]] || die "-a did not report: $expect"
	[[ $output == *"problems: 1 found, 0 fixed, 1 left"* ]] || die "-a did more than report"
	[ "$(sha256sum < image)" = "$before" ] || die "-a wrote"
}

@test "flags lost, file attributes say compressed, the runs are not units of 16: left" {
	left_case holes flags_lost_si:800 "the file attributes say compressed, but the compression unit at VCN 64 has clusters after a hole"
}

@test "flags lost, \$STANDARD_INFORMATION says sparse, \$FILE_NAME compressed: left" {
	left_case mixed flags_lost_si:200 "\$FILE_NAME says compressed, \$STANDARD_INFORMATION sparse"
}

@test "flags lost, every file attribute says sparse, the data is LZNT1 units: left" {
	left_case mixed flags_lost_fa:200 "the file attributes say sparse, but its 3 partly allocated units of 16 clusters all hold LZNT1 data"
}

@test "compression unit 0, the file attributes say plain: left" {
	left_case mixed cu_si:0:0 "\$FILE_NAME says compressed, \$STANDARD_INFORMATION plain"
}

@test "compression unit 0, the first compressed unit has no LZNT1 chunk header: left" {
	left_case mixed cu_chunk:0 "the file attributes say compressed, but the unit at VCN 0 does not hold LZNT1 data (no LZNT1 chunk)"
}

# What every file has and a record lacks is added, not the file dropped:
# ntfsck -n sees each of these (FILE_HAVE_IR; an inode it cannot open).

# seen_damage FILE DAMAGE: a fresh copy of the base volume with FILE's
# record damaged by DAMAGE, which the reference (ntfsck -n) must see; sets
# the caller's rec to FILE's record number
seen_damage() {
	rec=$(cat "$BATS_FILE_TMPDIR/$1.rec")
	cp --sparse=always "$BATS_FILE_TMPDIR/base.img" image
	python3 "$HELPER" image "$rec" "$2"
	run sid_ntfsck image
	[ "$status" -ne 0 ] || die "ntfsck -n does not see the damage"
}

@test "a directory's record without its directory flag: the flag set back, the 700 names kept (not reconnected)" {
	# taking the record for a file would rebuild the root without the
	# directory and send its 700 files to /lost+found
	local rec
	seen_damage dir dir_flag_off
	# -n, declining the flag, reported the entry and the 700 names in
	# no directory (session 19): the one flag now
	repair_case dir dir_flag_off "(/dir): record is not marked as a directory but holds a file-name index and no unnamed data; it is marked as one"
}

@test "a file's record without \$STANDARD_INFORMATION: one made from its \$FILE_NAME, the file kept" {
	local rec
	seen_damage s1 si_missing
	repair_case s1 si_missing "(/s1): record has no \$STANDARD_INFORMATION; one is made from its \$FILE_NAME's times and attributes"
}

@test "a file's record without an unnamed \$DATA: an empty one added, the file kept with 0 bytes" {
	local rec
	seen_damage s1 data_missing
	run "$FSCK" -a image
	echo "$output"
	[ "$status" -eq 1 ] || die "-a exit $status"
	[[ $output == *"MFT record $rec (/s1): file has no unnamed \$DATA; an empty one is added"* ]] || die "not added"
	# the root's entry follows the file's new size, nothing else
	[[ $output == *"problems: 2 found, 2 fixed, 0 left"* ]] || die "-a did more than two repairs"
	[[ $output != *"is lost"* ]] || die "-a cleared the record"
	oracles_beyond s1 -a
	# sha256 of nothing: s1 is there, empty
	grep -q '^e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  ./s1$' manifest || die "s1 not an empty file"
}

@test "a directory with a resident \$I30 \$INDEX_ALLOCATION: its index rebuilt by -a, one repair, its file kept" {
	local rec
	seen_damage small resident_ia
	run "$FSCK" -a image
	echo "$output"
	[ "$status" -eq 1 ] || die "-a exit $status"
	[[ $output == *"MFT record $rec (/small): directory index is corrupt (resident index allocation)"*REBUILT* ]] || die "not rebuilt"
	[[ $output == *"problems: 1 found, 1 fixed, 0 left"* ]] || die "-a did more than one repair"
	repaired_oracles
}

@test "the 12 MiB file's \$DATA at 0 bytes, its runs and clusters kept: the size comes back from its index entry, nothing freed" {
	local rec
	seen_damage big empty_runs
	# one repair, in the file (the index entry is the evidence, kept)
	repair_case big empty_runs "(/big): unnamed \$DATA says 0 bytes, its runs still map 12582912; index entry \"big\" in directory MFT record 5 (/) says 12582912 bytes of that allocation and \$Bitmap holds the clusters: the size is taken back"
	run python3 "$HELPER" image "$rec" runs_marked
	[ "$output" = 3072/3072 ] || die "clusters of big marked in \$Bitmap: $output"
}

@test "the same with the clusters freed in \$Bitmap (a cut truncate?): the clusters stay the file's, 0 bytes, nothing freed" {
	local rec blocks after
	rec=$(cat "$BATS_FILE_TMPDIR/big.rec")
	cp --sparse=always "$BATS_FILE_TMPDIR/base.img" image
	python3 "$HELPER" image "$rec" empty_runs_freed
	run python3 "$HELPER" image "$rec" runs_marked
	[ "$output" = 0/3072 ] || die "damage: $output"
	run "$FSCK" -a image
	echo "$output"
	[ "$status" -eq 1 ] || die "-a exit $status"
	[[ $output == *"MFT record $rec (/big): unnamed \$DATA says 0 bytes, its runs still map 12582912; index entry \"big\" says 12582912 bytes, not evidence enough (\$Bitmap has freed some of its clusters): the clusters stay the file's"* ]] || die "not said"
	# the root's entry follows the file's size; \$Bitmap marks the runs again
	[[ $output == *"problems: 2 found, 2 fixed, 0 left"* ]] || die "-a did more than two repairs"
	after=$(sha256sum < image)
	run "$FSCK" -a image
	[ "$status" -eq 0 ] || die "second -a: exit $status"
	[ "$(sha256sum < image)" = "$after" ] || die "second -a changed the image"
	oracles_beyond big -a
	grep -q '^e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  ./big$' manifest || die "big not 0 bytes"
	run python3 "$HELPER" image "$rec" runs_marked
	[ "$output" = 3072/3072 ] || die "clusters of big marked in \$Bitmap: $output"
	# ntfs-3g: 0 bytes, 12 MiB allocated (24576 blocks of 512)
	mkdir -p mnt
	ntfs-3g -o ro image mnt
	blocks=$(stat -c %b mnt/big)
	umount mnt
	[ "$blocks" -eq 24576 ] || die "big has $blocks blocks allocated"
}

# (issue 11) the same on a file with three names: -a takes the size
# back once, at the first entry it meets; -n reported it once per name
# (three problems where -a finds one).  Once per file now: -n and -a
# find the same count, and the file reads as before under every name.
@test "a 0-byte \$DATA with its runs on a file with three hard links: reported once, not once per name" {
	local m nfound
	truncate -s 16M image
	"$FSFORGE_BUILDDIR/mkfs/mkfs.ntfs" -q -F image
	m=$(mount_ntfs3g image)
	head -c 100000 /dev/urandom > data
	cp data "$m/f"
	mkdir "$m/d"
	ln "$m/f" "$m/d/g"
	ln "$m/f" "$m/h"
	stat -c %i "$m/f" > ino
	umount "$m"
	python3 "$HELPER" image "$(cat ino)" empty_runs
	run "$FSCK" -n image
	echo "$output"
	[ "$status" -eq 4 ] || die "-n exit $status"
	nfound=$(grep -c "unnamed \$DATA says 0 bytes" <<< "$output")
	[ "$nfound" -eq 1 ] || die "-n reported it $nfound times"
	[[ $output == *"problems: 1 found, 0 fixed, 1 left"* ]] || die "-n found more"
	run "$FSCK" -a image
	echo "$output"
	[ "$status" -eq 1 ] || die "-a exit $status"
	[[ $output == *"problems: 1 found, 1 fixed, 0 left"* ]] || die "-a: not one repair"
	repair_converged "$FSCK" image -a
	m=$(mount_ntfs3g image)
	cmp data "$m/f" && cmp data "$m/d/g" && cmp data "$m/h" || { umount "$m"; die "content"; }
	umount "$m"
}
