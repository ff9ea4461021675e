#!/usr/bin/env bats
# fsck.ntfs -a (unattended, at boot) repairs a bad runlist in a file's
# $DATA without stopping: a run past the end of the volume, an LCN that
# overflows, a length that runs off the volume, a mapping-pairs array cut
# short.  The runs before the bad one are kept and the VCNs after them
# become a hole (the attribute made sparse), so the file keeps its size
# and every good byte at its offset.  Volumes of 1 KiB and 4 KiB clusters
# are filled through ntfs-3g (a fragmented file, a file with a named
# stream of 60000 bytes, a file compressed by ntfs-3g); runsbad.py
# damages them and says, from the runs before the damage, the first VCN
# the bad run mapped.  Oracles that are not ours: ntfs-3g reads the
# pre-damage content manifest except the damaged stream, which reads its
# bytes up to that VCN (a compressed file's down to its compression
# unit) and zeros after, at its size; ntfsprogs-plus ntfsck -n (sid) is
# clean; -z's undo file gives the damaged image back byte for byte.
#
# Where the hole cannot be made the runs are cut (0x010046, -a too):
# frag's record filled to its last byte by a resident stream (no room
# for a sparse header's 8 bytes), and a file's non-resident $EA (written
# as system.ntfs_ea, in two runs on a volume whose free space is holes
# of one cluster), and frag's header saying one cluster more allocated
# than its highest VCN (what the runs mapped is unknown).  The stream
# then reads its bytes before the bad run's VCN at that size; the $EA
# keeps its whole entries before it.
#
# A file's own non-resident $SECURITY_DESCRIPTOR with a bad run is not cut
# to a hole: removed beside a security id, else made the default one, or,
# with no room for that or in a file with an attribute list, removed and
# the file given the root's security id.  Nor is a non-resident $EA,
# $REPARSE_POINT, $LOGGED_UTILITY_STREAM or $OBJECT_ID: the allocated runs before the
# first hole are kept, or with none the attribute is removed and the
# structures that depend on it ($EA_INFORMATION, the reparse flag,
# $Extend/$Reparse) follow.
load ../lib/common

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
HELPER=$FSFORGE_TOP/tests/ntfs/runsbad.py
source "$FSFORGE_TOP/tests/ntfs/ntfs_helpers.bash"

manifest() {
	(cd "$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
}

setup_file() {
	need_ntfs3g
	local d=$BATS_FILE_TMPDIR m cs i
	for cs in 1024 4096; do
		truncate -s 16M "$d/base$cs.img"
		"$FSFORGE_BUILDDIR/mkfs/mkfs.ntfs" -q -F -c "$cs" "$d/base$cs.img"
		m=$d/mnt
		mkdir -p "$m"
		ntfs-3g "$d/base$cs.img" "$m"
		echo one > "$m/s1"
		# frag written 30000 bytes at a time, other between: several runs
		head -c 300000 /dev/urandom > "$d/frag$cs"
		for i in $(seq 0 9); do
			dd if="$d/frag$cs" of="$m/frag" bs=30000 skip="$i" seek="$i" count=1 \
				conv=notrunc status=none
			head -c 30000 /dev/urandom >> "$m/other"
		done
		echo streamed > "$m/streamed"
		head -c 60000 /dev/urandom > "$d/stream$cs"
		python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.big", open(sys.argv[2], "rb").read())' \
			"$m/streamed" "$d/stream$cs"
		# compressed (units of 16 clusters): text, random bytes, text
		mkdir "$m/packed"
		setfattr -h -v 0x00000800 -n system.ntfs_attrib_be "$m/packed"
		python3 -c '
import random, sys
r = random.Random(7)
text = b"".join(b"compressible line %d of the packed file\n" % i for i in range(4000))
noise = bytes(r.getrandbits(8) for _ in range(70000))
sys.stdout.buffer.write(text[:40000] + noise + text[40000:120000])' > "$d/mixed$cs"
		cp "$d/mixed$cs" "$m/packed/mixed"
		for i in frag streamed packed/mixed; do
			stat -c %i "$m/$i" > "$d/${i#packed/}$cs.rec"
		done
		manifest "$m" > "$d/manifest$cs"
		umount "$m"
	done
	full_base
	ea_base
	rp_base
}

# rp1024.img: a file "rp" whose $REPARSE_POINT (tag 0x8000000a, 3000
# bytes of data: more than a 1 KiB record holds) is non-resident, and a
# file "al" with an attribute list whose non-resident $EA is in an
# extension record (its number in al1024.rec)
rp_base() {
	local d=$BATS_FILE_TMPDIR m=$BATS_FILE_TMPDIR/mnt al
	truncate -s 16M "$d/rp1024.img"
	"$FSFORGE_BUILDDIR/mkfs/mkfs.ntfs" -q -F -c 1024 "$d/rp1024.img"
	ntfs-3g "$d/rp1024.img" "$m"
	echo kept > "$m/s1"
	touch "$m/rp"
	stat -c %i "$m/rp" > "$d/rp1024.rec"
	# al: 30 named streams (an attribute list), then an $EA of 4532
	# bytes, which ntfs-3g puts non-resident in an extension record
	echo al > "$m/al"
	for i in $(seq 1 30); do
		setfattr -n "user.s$i" -v "0x$(printf '%040d' "$i")" "$m/al"
	done
	setfattr -n system.ntfs_ea -v "0x$(od -An -v -tx1 "$d/ea" | tr -d ' \n')" "$m/al"
	al=$(stat -c %i "$m/al")
	echo "$al" > "$d/albase1024.rec"
	setfattr -n system.ntfs_reparse_data \
		-v "0x0a000080b80b0000$(head -c 3000 /dev/zero | tr '\0' 'r' | od -An -v -tx1 | tr -d ' \n')" "$m/rp"
	manifest "$m" 2>/dev/null | grep -v '  ./rp$' > "$d/rpmanifest1024"
	umount "$m"
	python3 - "$d/rp1024.img" "$al" > "$d/al1024.rec" <<'PY'
import os, struct, sys
sys.path.insert(0, os.environ["FSFORGE_TOP"] + "/tests/ntfs")
import ntfs_patch as P
vol, base = P.Volume(sys.argv[1]), int(sys.argv[2])
for n in map(int, vol.holders(base)):
    rec = vol.read(n)
    if any(t == 0xe0 and rec[o + 8] for o, t, _ in P.attrs(rec)) and n != base:
        print(n)
        break
else:
    raise SystemExit("no non-resident $EA in an extension record")
PY
}

# full4096.img: base4096 with frag's record filled to its last byte by a
# resident stream user.pad (its value after a 32-byte header)
full_base() {
	local d=$BATS_FILE_TMPDIR rec free
	rec=$(cat "$d/frag4096.rec")
	cp --sparse=always "$d/base4096.img" "$d/full4096.img"
	free=$(python3 "$HELPER" "$d/full4096.img" "$rec" "" free)
	head -c $((free - 32)) /dev/urandom > "$d/pad"
	ntfs-3g "$d/full4096.img" "$d/mnt"
	python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.pad", open(sys.argv[2], "rb").read())' \
		"$d/mnt/frag" "$d/pad"
	umount "$d/mnt"
	free=$(python3 "$HELPER" "$d/full4096.img" "$rec" "" free)
	[ "$free" -eq 0 ] || die "frag's record keeps $free bytes free"
}

# ea1024.img: a file "ea" whose $EA (two entries, 4532 bytes) is
# non-resident in two runs: the volume filled, then every other
# one-cluster file deleted
ea_base() {
	local d=$BATS_FILE_TMPDIR m=$BATS_FILE_TMPDIR/mnt i
	truncate -s 16M "$d/ea1024.img"
	"$FSFORGE_BUILDDIR/mkfs/mkfs.ntfs" -q -F -c 1024 "$d/ea1024.img"
	ntfs-3g "$d/ea1024.img" "$m"
	echo ea > "$m/ea"
	for i in $(seq 1 40); do
		head -c 1000 /dev/urandom > "$m/g$i"
	done
	dd if=/dev/zero of="$m/fill" bs=64k status=none 2>/dev/null || true
	for i in $(seq 1 2 40); do
		rm "$m/g$i"
	done
	# FILE_FULL_EA_INFORMATION entries, each's next offset its 4-aligned size
	python3 -c '
import random, struct, sys
r = random.Random(5)
out = b""
for name, n in ((b"ALPHA", 1500), (b"BETA", 3000)):
    val = bytes(r.getrandbits(8) for _ in range(n))
    e = struct.pack("<BBH", 0, len(name), n) + name + b"\0" + val
    size = (4 + len(e) + 3) // 4 * 4
    out += (struct.pack("<I", size) + e).ljust(size, b"\0")
sys.stdout.buffer.write(out)' > "$d/ea"
	setfattr -n system.ntfs_ea -v "0x$(od -An -v -tx1 "$d/ea" | tr -d ' \n')" "$m/ea"
	stat -c %i "$m/ea" > "$d/ea1024.rec"
	manifest "$m" > "$d/eamanifest1024"
	umount "$m"
}

setup() { cd_tmp; }
teardown() { mountpoint -q mnt 2>/dev/null && umount mnt; return 0; }

# damaged_then_repaired: -n on the damaged image exits 4 and writes
# nothing; -a -z undo exits 1 ($output is its output, NOUTPUT -n's;
# DAMAGED the damaged image's digest, for undo_restores)
damaged_then_repaired() {
	damaged=$(sha256sum < image)
	run "$FSCK" -n image
	noutput=$output
	[ "$status" -eq 4 ] || { echo "$output"; die "-n on the damage: exit $status"; }
	[ "$(sha256sum < image)" = "$damaged" ] || die "-n wrote"
	run "$FSCK" -a -z undo image
	echo "$output"
	[ "$status" -eq 1 ] || die "-a exit $status"
}

# undo_restores: --undo gives back the damaged image byte for byte
undo_restores() {
	run "$FSCK" --undo undo image
	[ "$status" -eq 0 ] || die "--undo exit $status: $output"
	[ "$(sha256sum < image)" = "$damaged" ] || die "--undo did not restore the damaged image"
}

# runs_case CS FILE STREAM DAMAGE: FILE's $DATA STREAM ("" unnamed) of the
# CS-byte-cluster volume damaged by runsbad.py; -n finds it and writes
# nothing; -a -z repairs it (exit 1) and the oracles above hold.
runs_case() {
	local cs=$1 file=$2 stream=$3 what=$4 rec vcn size unit damaged keep want got
	local d=$BATS_FILE_TMPDIR path=$file
	[ "$file" = mixed ] && path=packed/mixed
	rec=$(cat "$d/$file$cs.rec")
	cp --sparse=always "$d/base$cs.img" image
	read -r vcn size unit < <(python3 "$HELPER" image "$rec" "$stream" "$what")
	echo "bad run from VCN $vcn of $size bytes, units of $unit clusters"
	# frag and mixed keep runs before the bad one (ntfs-3g wrote the
	# stream in one run)
	[ "$file" = streamed ] || [ "$vcn" -gt 0 ] || die "the first run was damaged"
	damaged_then_repaired
	[[ $output == *"MFT record $rec"*"has a bad runlist"*"runs before the bad one"*"become a hole (zeros) and the size ($size bytes) is kept"*FIXED* ]] ||
		die "not made a hole"
	[[ $output != *"is lost"* ]] || die "-a cleared the record"
	repair_converged "$FSCK" image -a
	# what the stream reads: its bytes before the bad run's VCN (a whole
	# compression unit's), zeros after, at its size
	keep=$(( (vcn - vcn % unit) * cs ))
	[ "$stream" ] && src=$d/stream$cs || src=$d/$file$cs
	want=$(python3 -c 'import sys, hashlib
data = open(sys.argv[1], "rb").read()
k = min(int(sys.argv[2]), len(data))
print(hashlib.sha256(data[:k] + bytes(len(data) - k)).hexdigest())' "$src" "$keep")
	mkdir -p mnt
	ntfs-3g -o ro image mnt
	manifest mnt > manifest
	if [ "$stream" ]; then
		got=$(getfattr --only-values -n "user.$stream" mnt/"$path" | sha256sum)
	else
		got=$(sha256sum < mnt/"$path")
	fi
	umount mnt
	[ "${got%% *}" = "$want" ] || die "$path${stream:+:$stream} does not read its $keep bytes then zeros"
	if [ "$stream" ]; then
		diff -u "$d/manifest$cs" manifest || die "manifest differs"
	else
		diff -u <(grep -v "  ./$path\$" "$d/manifest$cs") <(grep -v "  ./$path\$" manifest) ||
			die "manifest differs beyond $path"
	fi
	undo_restores
}

@test "4k clusters, a run past the end of the volume: the runs before it kept, the rest a hole, the size kept" {
	runs_case 4096 frag "" past
}

@test "4k clusters, an LCN below 0: the runs before it kept, the rest a hole" {
	runs_case 4096 frag "" negative
}

@test "4k clusters, a length that runs off the volume: the runs before it kept, the rest a hole" {
	runs_case 4096 frag "" length
}

@test "4k clusters, a mapping-pairs array cut short: the runs before it kept, the rest a hole" {
	runs_case 4096 frag "" truncated
}

@test "1k clusters, a run past the end in a named stream: the stream keeps its size" {
	runs_case 1024 streamed big past
}

@test "4k clusters, a compressed file's array cut short at its second unit: the first unit kept, the rest a hole" {
	runs_case 4096 mixed "" truncated
}

@test "1k clusters, a compressed file's array cut short at its second unit: the first unit kept, the rest a hole" {
	runs_case 1024 mixed "" truncated
}

# cut_case BASE FILE STREAM DAMAGE TYPE WANT: FILE's attribute TYPE (hex)
# named STREAM in BASE.img damaged by runsbad.py; -a -z cuts the runs
# (exit 1) instead of making the hole; the stream, read by ntfs-3g, is
# the bytes WANT prints (from the stream before the damage and the bad
# run's first byte); ntfs-3g's manifest, ntfsck -n, a second -n and the
# undo as in runs_case.
cut_case() {
	local base=$1 file=$2 stream=$3 what=$4 type=$5 want=$6 rec vcn size unit cs damaged got
	local d=$BATS_FILE_TMPDIR
	rec=$(cat "$d/$file${base//[a-z]/}.rec")
	cs=${base//[a-z]/}
	cp --sparse=always "$d/$base.img" image
	read -r vcn size unit < <(python3 "$HELPER" image "$rec" "$stream" "$what" "$type")
	echo "bad run from VCN $vcn of $size bytes"
	[ "$vcn" -gt 0 ] || die "the first run was damaged"
	damaged_then_repaired
	[[ $output == *"MFT record $rec: attribute 0x$type has a bad runlist"*"runs before the bad one"*"are kept and the sizes cut to them"*FIXED* ]] ||
		die "not cut"
	[[ $output != *"is lost"* ]] || die "-a cleared the record"
	repair_converged "$FSCK" image -a
	mkdir -p mnt
	ntfs-3g -o ro image mnt
	manifest mnt > manifest
	if [ "$type" = e0 ]; then
		got=$(getfattr --only-values -n system.ntfs_ea mnt/"$file" | sha256sum)
	elif [ "$stream" ]; then
		got=$(getfattr --only-values -n "user.$stream" mnt/"$file" | sha256sum)
	else
		got=$(sha256sum < mnt/"$file")
	fi
	[ "$base" != full4096 ] || pad=$(getfattr --only-values -n user.pad mnt/"$file" | sha256sum)
	umount mnt
	[ "${got%% *}" = "$($want "$((vcn * cs))" | sha256sum | cut -d' ' -f1)" ] ||
		die "$file does not read what it held before the bad run"
	if [ "$base" = full4096 ]; then
		[ "${pad%% *}" = "$(sha256sum < "$d/pad" | cut -d' ' -f1)" ] || die "user.pad changed"
	fi
	if [ "$type" = 80 ]; then
		diff -u <(grep -v "  ./$file\$" "$d/manifest$cs") <(grep -v "  ./$file\$" manifest) ||
			die "manifest differs beyond $file"
	else
		diff -u "$d/eamanifest$cs" manifest || die "manifest differs"
	fi
	undo_restores
}

# frag's bytes before offset $1, the size cut there
frag_before() { head -c "$1" "$BATS_FILE_TMPDIR/frag4096"; }

# the $EA entries that end at or before offset $1, whole
ea_before() {
	python3 -c 'import struct, sys
ea = open(sys.argv[1], "rb").read()
p = 0
while p < len(ea):
    nxt, = struct.unpack_from("<I", ea, p)
    if p + nxt > int(sys.argv[2]):
        break
    p += nxt
sys.stdout.buffer.write(ea[:p])' "$BATS_FILE_TMPDIR/ea" "$1"
}

@test "4k clusters, an 8-byte LCN delta that overflows past 2^63: the runs before it kept, the rest a hole" {
	runs_case 4096 frag "" overflow
}

@test "a record with no room for the sparse header, a run past the end: the runs cut, the size cut to them, the record's other stream kept" {
	cut_case full4096 frag "" past 80 frag_before
}

@test "a record with no room for the sparse header, an LCN below 0: the runs cut, the size cut to them" {
	cut_case full4096 frag "" negative 80 frag_before
}

@test "4k clusters, a run past the end, the allocated size a cluster more than the runs: the runs cut, the size cut to them" {
	cut_case base4096 frag "" past+alloc 80 frag_before
}

@test "1k clusters, a non-resident \$EA cut short at its second run: cut, its whole first entry kept" {
	cut_case ea1024 ea "" truncated e0 ea_before
}

# sd_case SECID EXPECT [IMAGE [whole]]: frag's own resident
# $SECURITY_DESCRIPTOR (ntfs-3g writes one beside a 48-byte
# $STANDARD_INFORMATION: no security id; SECID > 0: the
# $STANDARD_INFORMATION grown to 72 bytes naming security id SECID, one of
# mkfs.ntfs's) rewritten non-resident: a 1-cluster hole, then a run far
# past the end of the volume (r-win4k-100009, /alist's); with "whole", a
# run of one free cluster holding the descriptor's bytes first (a bad
# terminator after a good run, one bit from a good runlist).  The cut
# kept the hole, which no reader takes for a descriptor, and left it (-a
# exit 5, -n 4 after it).  IMAGE (default base4096.img) is the volume
# damaged.  -n finds it and writes nothing, -a -z repairs it (exit 1),
# converges (ntfsck -n clean), ntfs-3g reads the pre-damage manifest and
# a self-relative descriptor for frag (with "whole": frag's own, byte for
# byte); --undo restores (the repaired image kept as repaired.img).
sd_case() {
	local d=$BATS_FILE_TMPDIR rec
	rec=$(cat "$d/frag4096.rec")
	cp --sparse=always "$d/${3:-base4096.img}" image
	mkdir -p mnt
	ntfs-3g -o ro image mnt
	getfattr --only-values -n system.ntfs_acl mnt/frag > acl.0
	umount mnt
	python3 - image "$rec" "$1" "${4:-hole}" <<'PY'
import os, struct, sys
sys.path.insert(0, os.environ["FSFORGE_TOP"] + "/tests/ntfs")
import ntfs_patch as P
vol, n, secid = P.Volume(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3], 0)
rec = bytearray(vol.read(n))
used, = struct.unpack_from("<I", rec, 0x18)
si = next(P.attrs(rec))[0]
assert struct.unpack_from("<I", rec, si + 16)[0] == 48, "frag has a security id"
if secid:
    # owner id, security id, quota charged, USN after the 48 bytes
    ext = struct.pack("<IIQQ", 0, secid, 0, 0)
    at = si + struct.unpack_from("<I", rec, si + 4)[0]
    rec[at:used + 24] = ext + rec[at:used]
    struct.pack_into("<I", rec, si + 4, struct.unpack_from("<I", rec, si + 4)[0] + 24)
    struct.pack_into("<I", rec, si + 16, 72)
    used += 24
off = [o for o, t, _ in P.attrs(rec) if t == 0x50][0]
ln, = struct.unpack_from("<I", rec, off + 4)
inst, = struct.unpack_from("<H", rec, off + 14)
vo, = struct.unpack_from("<H", rec, off + 20)
vl, = struct.unpack_from("<I", rec, off + 16)
sd = bytes(rec[off + vo:off + vo + vl])
a = bytearray(0x40 + 8)
struct.pack_into("<IIBBHHH", a, 0, 0x50, len(a), 1, 0, 0x40, 0, inst)
struct.pack_into("<qqHBxxxxxqqq", a, 16, 0, 1, 0x40, 0, 8192, vl, vl)
a[0x40:] = bytes([0x01, 0x01, 0x31, 0x01, 0xff, 0xff, 0x7f, 0x00])
if sys.argv[4] == "whole":
    # a free cluster of $Bitmap's (record 6), taken, holds the descriptor
    b6 = vol.read(6)
    do = [o for o, t, nm in P.attrs(b6) if t == 0x80 and not nm][0]
    bruns = P.runs_of(b6, do)
    bm = bytearray(b"".join(vol.pread(l * vol.cs, ln * vol.cs) for l, ln in bruns))
    lcn = next(i for i in range(len(bm) * 8 - 1, 0, -1)
               if not bm[i // 8] >> (i % 8) & 1 and
               vol.pread(i * vol.cs, 1) != b"")
    bm[lcn // 8] |= 1 << (lcn % 8)
    vol.pwrite(vol.offset(bruns, lcn // 8), bytes([bm[lcn // 8]]))
    vol.pwrite(lcn * vol.cs, sd + bytes(vol.cs - len(sd)))
    a[0x40:] = bytes([0x31, 0x01]) + lcn.to_bytes(3, "little") + bytes([0x31, 0x01, 0xff])
rec[off:used + len(a) - ln] = bytes(a) + rec[off + ln:used]
struct.pack_into("<I", rec, 0x18, used + len(a) - ln)
vol.write(n, rec)
PY
	damaged_then_repaired
	local says="its \$SECURITY_DESCRIPTOR (0x50) has a bad runlist"
	[ "${4:-}" != whole ] || says="attribute 0x50 has a bad runlist"
	[[ $output == *"MFT record $rec: $says"*"$2"* ]] || die "not: $2"
	repair_converged "$FSCK" image -a
	cp --sparse=always image repaired.img
	mkdir -p mnt
	ntfs-3g -o ro image mnt
	manifest mnt > manifest
	getfattr --only-values -n system.ntfs_acl mnt/frag > acl
	umount mnt
	diff -u "$d/manifest4096" manifest || die "manifest differs"
	[ "$(head -c 4 acl | od -An -tx1 | tr -d ' \n')" = 01000480 ] ||
		die "frag's descriptor does not read: $(od -An -tx1 acl | head -2)"
	if [ "${4:-}" = whole ]; then
		cmp acl.0 acl || die "frag's own descriptor not kept"
	fi
	undo_restores
}

@test "4k clusters, a non-resident \$SECURITY_DESCRIPTOR with a bad run and no security id: it becomes the default descriptor, the file kept" {
	sd_case 0 "no security id stands for it: it becomes the volume's default descriptor (124 bytes, resident). FIXED"
}

@test "4k clusters, a non-resident \$SECURITY_DESCRIPTOR with a bad run beside security id 0x101: removed, the file kept" {
	sd_case 0x101 "the file's security is its security id 257: the attribute is removed, the rest of the file kept. CLEARED"
}

@test "4k clusters, a non-resident \$SECURITY_DESCRIPTOR whose good first run holds it, then a bad run: cut, frag's own descriptor kept byte for byte" {
	sd_case 0 "the 1 runs before the bad one (1 clusters) are kept and the sizes cut to them" base4096.img whole
}

@test "4k clusters, the same with no room for a default descriptor in frag's full record: the runs cut, the file and its streams never cleared" {
	sd_case 0 "the 1 runs before the bad one (1 clusters) are kept and the sizes cut to them" full4096.img whole
}

@test "4k clusters, a non-resident \$SECURITY_DESCRIPTOR with a bad run, no security id and no room for the default descriptor: removed, frag given the root's security id" {
	local id root
	sd_case 0 "no security id stands for it: the attribute is removed and the file given the root directory's security id" full4096.img
	# what the root's \$STANDARD_INFORMATION names, frag's now 72 bytes naming it
	read -r id root < <(python3 - repaired.img "$(cat "$BATS_FILE_TMPDIR/frag4096.rec")" <<'PY'
import os, struct, sys
sys.path.insert(0, os.environ["FSFORGE_TOP"] + "/tests/ntfs")
import ntfs_patch as P
vol = P.Volume(sys.argv[1])
def secid(n):
    rec = vol.read(n)
    si = next(P.attrs(rec))[0]
    vo, = struct.unpack_from("<H", rec, si + 20)
    assert struct.unpack_from("<I", rec, si + 16)[0] == 72, "a 48-byte \$STANDARD_INFORMATION"
    return struct.unpack_from("<I", rec, si + vo + 52)[0]
print(secid(int(sys.argv[2])), secid(5))
PY
)
	[ "$id" ] && [ "$id" = "$root" ] || die "frag's security id $id, the root's $root"
}

# problems_of: the problems a report (stdin) holds, -n's questions
# ("...  Fix? no") and -a's repairs ("image: ... FIXED.") alike
problems_of() {
	sed -nE -e 's/^image: (.*) FIXED\.$/\1/p' \
		-e 's/^(.*)  [A-Z][a-z]+\? no$/\1/p'
}

# listed_sd_case WHERE: al's (an attribute list, a 48-byte
# $STANDARD_INFORMATION: no security id) own resident
# $SECURITY_DESCRIPTOR rewritten non-resident as in sd_case (a hole, then
# a run past the end) in its base record (WHERE=base) or moved into the
# extension record holding its $EA, its list entry following (ext).
# Before, the cut kept the hole (base: -a exit 5) or the extension record
# was cleared.  As in a base record in no list with no room: removed with
# its list entry, al given the root's security id; the oracles of sd_case.
# ROOT=si48: the root's $STANDARD_INFORMATION made the 48-byte form too
# (no security id to give): before, the cut kept the hole (-a exit 5, a
# second run found it again); now al is given the lowest id $Secure holds.
# ROOT=nosds: as si48, and $Secure's $SDS zeroed (no id to give at all):
# the default descriptor takes the attribute's place, resident, its
# instance kept (the list entry stays true); pass 3 writes $SDS's
# defaults.  In the base case al's base record has no room for it: before,
# the cut kept the hole (-a exit 5); now the attribute is removed and al
# given the root's default descriptor's id, 258, the same descriptor (0x0100c9).
# FULL=full (third argument): a resident named stream of al's base record
# grown until fewer than 24 bytes are free (no room for a security id in
# its $STANDARD_INFORMATION): before, -a exit 5 (the cut kept the hole);
# now the default descriptor takes the attribute's place in the extension
# record, as when $Secure holds no id.
listed_sd_case() {
	local d=$BATS_FILE_TMPDIR base ext
	local want="no security id stands for it: the attribute is removed and the file given the root directory's security id"
	base=$(cat "$d/albase1024.rec")
	ext=$(cat "$d/al1024.rec")
	cp --sparse=always "$d/rp1024.img" image
	[ "${2:-}" != nosds ] || {
		want="no security id stands for it: it becomes the volume's default descriptor"
		[ "$1" = ext ] ||
			want="\$SDS holds no descriptor and the default one does not fit: the attribute is removed and the file given security id 258"
		python3 - image <<'PY'
import os, struct, sys
sys.path.insert(0, os.environ["FSFORGE_TOP"] + "/tests/ntfs")
import ntfs_patch as P
vol = P.Volume(sys.argv[1])
rec = bytearray(vol.read(9))
off = next(o for o, t, n in P.attrs(rec) if t == 0x80 and n == "$SDS")
for lcn, n in P.runs_of(rec, off):
    vol.pwrite(lcn * vol.cs, bytes(n * vol.cs))
PY
	}
	[ -z "${2:-}" ] || python3 - image <<'PY'
import os, struct, sys
sys.path.insert(0, os.environ["FSFORGE_TOP"] + "/tests/ntfs")
import ntfs_patch as P
vol = P.Volume(sys.argv[1])
rec = bytearray(vol.read(5))
si, t, _ = next(P.attrs(rec))
assert t == 0x10 and struct.unpack_from("<I", rec, si + 16)[0] == 72
ln, = struct.unpack_from("<I", rec, si + 4)
used, = struct.unpack_from("<I", rec, 0x18)
voff, = struct.unpack_from("<H", rec, si + 20)
assert ln == voff + 72
# value 48 bytes, the attribute 24 shorter, what follows moved down
rec[si + voff + 48:used - 24] = rec[si + ln:used]
rec[used - 24:used] = bytes(24)
struct.pack_into("<I", rec, si + 4, ln - 24)
struct.pack_into("<I", rec, si + 16, 48)
struct.pack_into("<I", rec, 0x18, used - 24)
vol.write(5, rec)
PY
	python3 - image "$base" "$ext" "$1" <<'PY'
import os, struct, sys
sys.path.insert(0, os.environ["FSFORGE_TOP"] + "/tests/ntfs")
import ntfs_patch as P
vol, base, ext, where = P.Volume(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
rec = bytearray(vol.read(base))
si = next(P.attrs(rec))[0]
assert struct.unpack_from("<I", rec, si + 16)[0] == 48, "al has a security id"
off = [o for o, t, _ in P.attrs(rec) if t == 0x50][0]
ln, = struct.unpack_from("<I", rec, off + 4)
inst, = struct.unpack_from("<H", rec, off + 14)
# its length (ntfs-3g wrote it non-resident beside the list)
vl, = struct.unpack_from("<q", rec, off + 0x30) if rec[off + 8] else struct.unpack_from("<I", rec, off + 16)
a = bytearray(0x40 + 8)
struct.pack_into("<IIBBHHH", a, 0, 0x50, len(a), 1, 0, 0x40, 0, inst)
struct.pack_into("<qqHBxxxxxqqq", a, 16, 0, 1, 0x40, 0, 2 * vol.cs, vl, vl)
a[0x40:] = bytes([0x01, 0x01, 0x31, 0x01, 0xff, 0xff, 0x7f, 0x00])
used, = struct.unpack_from("<I", rec, 0x18)
if where == "base":
    rec[off:used + len(a) - ln] = bytes(a) + rec[off + ln:used]
    struct.pack_into("<I", rec, 0x18, used + len(a) - ln)
else:
    # out of the base, into EXT (before its attributes of higher types)
    rec[off:used - ln] = rec[off + ln:used]
    rec[used - ln:used] = bytes(ln)
    struct.pack_into("<I", rec, 0x18, used - ln)
    x = bytearray(vol.read(ext))
    xused, = struct.unpack_from("<I", x, 0x18)
    xinst, = struct.unpack_from("<H", x, 0x28)
    struct.pack_into("<H", a, 14, xinst)
    struct.pack_into("<H", x, 0x28, xinst + 1)
    at = next(o for o, t, _ in P.attrs(x) if t > 0x50)
    x[at:xused + len(a)] = bytes(a) + x[at:xused]
    struct.pack_into("<I", x, 0x18, xused + len(a))
    vol.write(ext, x)
    # the list entry: the extension record and the new instance
    lo = [o for o, t, _ in P.attrs(rec) if t == 0x20][0]
    assert rec[lo + 8], "a resident list"
    lruns = P.runs_of(rec, lo)
    lst = bytearray(b"".join(vol.pread(l * vol.cs, n * vol.cs) for l, n in lruns))
    p = 0
    while struct.unpack_from("<I", lst, p)[0] != 0x50:
        p += struct.unpack_from("<H", lst, p + 4)[0]
    vol.pwrite(vol.offset(lruns, p + 16), struct.pack("<QH", ext | vol.seq(ext) << 48, xinst))
vol.write(base, rec)
PY
	[ "${3:-}" != full ] || {
		want="no security id stands for it: it becomes the volume's default descriptor"
		python3 - image "$base" <<'PY'
import os, struct, sys
sys.path.insert(0, os.environ["FSFORGE_TOP"] + "/tests/ntfs")
import ntfs_patch as P
vol, base = P.Volume(sys.argv[1]), int(sys.argv[2])
rec = bytearray(vol.read(base))
# a resident named stream of the base grown (zeros appended) until fewer
# than 24 bytes are free: no room for a security id
off = next(o for o, t, n in P.attrs(rec) if t == 0x80 and n and not rec[o + 8])
ln, = struct.unpack_from("<I", rec, off + 4)
vl, = struct.unpack_from("<I", rec, off + 16)
used, alloc = struct.unpack_from("<II", rec, 0x18)
grow = (alloc - used - 16) & ~7
rec[off + ln + grow:used + grow] = rec[off + ln:used]
rec[off + ln:off + ln + grow] = bytes(grow)
struct.pack_into("<I", rec, off + 4, ln + grow)
struct.pack_into("<I", rec, off + 16, vl + grow)
struct.pack_into("<I", rec, 0x18, used + grow)
vol.write(base, rec)
PY
	}
	[ -z "${SDS_HOLE:-}" ] || {
		# $SDS's runs made one hole of its length: pass 3 cannot write
		# the defaults there, so no file may be given their id
		python3 - image <<'PY'
import os, struct, sys
sys.path.insert(0, os.environ["FSFORGE_TOP"] + "/tests/ntfs")
import ntfs_patch as P
vol = P.Volume(sys.argv[1])
rec = bytearray(vol.read(9))
off = next(o for o, t, n in P.attrs(rec) if t == 0x80 and n == "$SDS")
total = sum(n for _, n in P.runs_of(rec, off))
mp, = struct.unpack_from("<H", rec, off + 0x20)
ln, = struct.unpack_from("<I", rec, off + 4)
rl = bytes([0x02]) + struct.pack("<H", total) + b"\0"
assert mp + len(rl) <= ln
rec[off + mp:off + ln] = rl + bytes(ln - mp - len(rl))
vol.write(9, rec)
PY
		run "$FSCK" -a image
		echo "$output"
		[ "$status" -ne 8 ] && [ "$status" -lt 16 ] || die "-a exit $status"
		[[ $output != *"security id 258"* ]] || die "given an id \$SDS cannot hold"
		[[ $output != *"default descriptors are written"* ]] ||
			die "claimed the defaults written into a hole"
		local sum
		sum=$(sha256sum < image)
		run "$FSCK" -a image
		echo "$output"
		[ "$(sha256sum < image)" = "$sum" ] || die "a second -a wrote"
		return 0
	}
	if [ "$1" = base ]; then
		# -r, every question answered no: the base record declined is
		# left as read, and so are its file's extension records (before:
		# 19 offered to be cleared, the file's data with them)
		cp --sparse=always image r.img
		run bash -c 'yes n | head -200 | "$0" -r r.img' "$FSCK"
		echo "$output"
		[[ $output != *"extension record of MFT record"* ]] ||
			die "-r offered to clear the file's extension records"
		cmp -s image r.img || die "-r answered no wrote"
	fi
	damaged_then_repaired
	[[ $output == *"its \$SECURITY_DESCRIPTOR (0x50) has a bad runlist"*"$want"*FIXED* ]] ||
		die "not repaired as wanted: $want"
	[[ $output != *"is lost"* ]] || die "-a cleared a record"
	# in the base record, -n tells what -a does: the same problems,
	# none that only the declined repair implies (before: the file's
	# 19 extension records, its index entry and the $MFT bitmap)
	if [ "$1" = base ]; then
		problems_of <<< "$noutput" > n.problems
		problems_of <<< "$output" > a.problems
		[ -s a.problems ] || die "no problem read from -a's report"
		diff -u a.problems n.problems || die "-n reports other problems than -a fixes"
	fi
	repair_converged "$FSCK" image -a
	mkdir -p mnt
	ntfs-3g -o ro image mnt
	manifest mnt 2>/dev/null | grep -v '  ./rp$' > manifest
	getfattr --only-values -n system.ntfs_acl mnt/al > acl
	umount mnt
	diff -u "$d/rpmanifest1024" manifest || die "manifest differs"
	[ "$(head -c 4 acl | od -An -tx1 | tr -d ' \n')" = 01000480 ] ||
		die "al's descriptor does not read: $(od -An -tx1 acl | head -2)"
	undo_restores
}

@test "1k clusters, the same in a full base record with \$SDS one hole: no file given the defaults' id, which cannot be written; a second -a writes nothing" {
	SDS_HOLE=1 listed_sd_case base nosds
}

@test "1k clusters, a listed file's non-resident \$SECURITY_DESCRIPTOR in its base record, a hole then a bad run: removed with its list entry, the file given the root's security id" {
	listed_sd_case base
}

@test "1k clusters, a listed file's non-resident \$SECURITY_DESCRIPTOR in an extension record, a hole then a bad run: removed with its list entry, the record and the file kept" {
	listed_sd_case ext
}

@test "1k clusters, a listed file's non-resident \$SECURITY_DESCRIPTOR in its base record, a hole then a bad run, the root with no security id: removed, the file given \$Secure's lowest id" {
	listed_sd_case base si48
}

@test "1k clusters, a listed file's non-resident \$SECURITY_DESCRIPTOR in an extension record, a hole then a bad run, the root with no security id: removed, the file given \$Secure's lowest id" {
	listed_sd_case ext si48
}

@test "1k clusters, a listed file's non-resident \$SECURITY_DESCRIPTOR in an extension record, a hole then a bad run, no root security id and \$SDS empty: the default descriptor in its place" {
	listed_sd_case ext nosds
}

@test "1k clusters, a listed file's non-resident \$SECURITY_DESCRIPTOR in an extension record, its base record full (no room for a security id): the default descriptor in its place" {
	listed_sd_case ext "" full
}

@test "1k clusters, a listed file's non-resident \$SECURITY_DESCRIPTOR in its full base record, a hole then a bad run, no root security id and \$SDS empty: removed, the file given the default root descriptor's id" {
	listed_sd_case base nosds
}

# nonres_case TYPE NAME: s1's (record in s1.rec) attribute TYPE (hex)
# named NAME in image, a copy of base4096.img (its resident one, or a new one when s1 has none) made
# non-resident, 100 bytes in runs that are a hole then a run past the
# end (as sd_case's).  Before: the cut kept the hole (-a exit 5).  -n
# finds it and writes nothing; -a -z removes it (0x0100c7, exit 1),
# converges (ntfsck -n clean), ntfs-3g reads the pre-damage manifest;
# --undo restores.  REPAIRED is -a's output.
nonres_case() {
	local d=$BATS_FILE_TMPDIR
	python3 - image "$(cat s1.rec)" "$1" "$2" <<'PY'
import os, struct, sys
sys.path.insert(0, os.environ["FSFORGE_TOP"] + "/tests/ntfs")
import ntfs_patch as P
vol, n, t, name = P.Volume(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3], 16), sys.argv[4]
rec = bytearray(vol.read(n))
used, = struct.unpack_from("<I", rec, 0x18)
old = [o for o, ty, nm in P.attrs(rec) if ty == t and nm == name]
if old:
    off = old[0]
    ln, = struct.unpack_from("<I", rec, off + 4)
    inst, = struct.unpack_from("<H", rec, off + 14)
else:
    off = next(o for o, ty, _ in P.attrs(rec) if ty > t) if any(ty > t for _, ty, _ in P.attrs(rec)) else used - 8
    ln = 0
    inst, = struct.unpack_from("<H", rec, 0x28)
    struct.pack_into("<H", rec, 0x28, inst + 1)
nm = name.encode("utf-16-le")
mpo = (0x40 + len(nm) + 7) // 8 * 8
a = bytearray(mpo + 8)
struct.pack_into("<IIBBHHH", a, 0, t, len(a), 1, len(name), 0x40, 0, inst)
struct.pack_into("<qqHBxxxxxqqq", a, 16, 0, 1, mpo, 0, 2 * vol.cs, 100, 100)
a[0x40:0x40 + len(nm)] = nm
a[mpo:] = bytes([0x01, 0x01, 0x31, 0x01, 0xff, 0xff, 0x7f, 0x00])
rec[off:used + len(a) - ln] = bytes(a) + rec[off + ln:used]
struct.pack_into("<I", rec, 0x18, used + len(a) - ln)
vol.write(n, rec)
PY
	damaged_then_repaired
	repaired=$output
	[[ $output == *"attribute 0x$1 has a bad runlist"*"the attribute is removed, the rest of the file kept. CLEARED"* ]] ||
		die "not removed"
	[[ $output != *"is lost"* ]] || die "-a cleared the record"
	repair_converged "$FSCK" image -a
	mkdir -p mnt
	ntfs-3g -o ro image mnt
	manifest mnt > manifest
	umount mnt
	diff -u "$d/manifest4096" manifest || die "manifest differs"
	undo_restores
}

@test "4k clusters, a non-resident \$LOGGED_UTILITY_STREAM \$TXF_DATA whose runs are a hole then a bad run: removed, the file kept" {
	cp --sparse=always "$BATS_FILE_TMPDIR/base4096.img" image
	mkdir -p mnt
	ntfs-3g -o ro image mnt
	stat -c %i mnt/s1 > s1.rec
	umount mnt
	nonres_case 100 '$TXF_DATA'
}

@test "4k clusters, a non-resident \$OBJECT_ID whose runs are a hole then a bad run: removed with its \$ObjId entry, the file kept" {
	cp --sparse=always "$BATS_FILE_TMPDIR/base4096.img" image
	mkdir -p mnt
	ntfs-3g image mnt
	setfattr -n system.ntfs_object_id -v 0x00112233445566778899aabbccddeeff mnt/s1
	stat -c %i mnt/s1 > s1.rec
	umount mnt
	nonres_case 40 ''
	[[ $repaired == *"\$ObjId"* ]] || die "the \$ObjId entry not judged"
}

# holed_case BASE FILE TYPE FIRST: the mapping pairs of FILE's
# non-resident attribute TYPE (hex) in BASE.img rewritten in place, the
# header's VCNs and sizes kept: FIRST=keep keeps its first run, then a
# one-cluster hole, then a run 32767 clusters on (past the end of the
# 16 MiB volume) for the rest; FIRST=hole starts with the hole.  The cut kept the hole and pass 2
# left it (-a exit 5, -n 4 after it): a hole is no part of an $EA or a
# reparse point.  -n finds it and writes nothing, -a -z repairs it (exit
# 1), converges (ntfsck -n clean); REPAIRED is -a's output, the
# file "first" the first run's clusters (0 for FIRST=hole).  The test then
# reads the volume through ntfs-3g and checks that --undo restores.
holed_case() {
	local d=$BATS_FILE_TMPDIR rec
	rec=$(cat "$d/$2${1//[a-z]/}.rec")
	cp --sparse=always "$d/$1.img" image
	python3 - image "$rec" "$3" "$4" <<'PY' > first
import os, struct, sys
sys.path.insert(0, os.environ["FSFORGE_TOP"] + "/tests/ntfs")
import ntfs_patch as P
vol, n, t, first = P.Volume(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3], 16), sys.argv[4]
rec = bytearray(vol.read(n))
off = [o for o, ty, _ in P.attrs(rec) if ty == t][0]
assert rec[off + 8] == 1, "resident"
ln, = struct.unpack_from("<I", rec, off + 4)
mpo, = struct.unpack_from("<H", rec, off + 0x20)
hi, = struct.unpack_from("<q", rec, off + 0x18)
mp, keep = bytes(), 0
if first == "keep":
    p = off + mpo
    h = rec[p]
    mp = bytes(rec[p:p + 1 + (h & 15) + (h >> 4)])
    keep = int.from_bytes(mp[1:1 + (h & 15)], "little")
rest = hi + 1 - keep - 1
assert 0 < rest < 128, rest
mp += bytes([0x01, 0x01, 0x21, rest, 0xff, 0x7f, 0x00])
# the attribute grown to hold them (the record's bytes after it moved)
nl = max(ln, (mpo + len(mp) + 7) // 8 * 8)
used, alloc = struct.unpack_from("<II", rec, 0x18)
assert used + nl - ln <= alloc, "no room"
rec[off + nl:used + nl - ln] = rec[off + ln:used]
rec[off + mpo:off + nl] = mp + bytes(nl - mpo - len(mp))
struct.pack_into("<I", rec, off + 4, nl)
struct.pack_into("<I", rec, 0x18, used + nl - ln)
vol.write(n, rec)
print(keep)
PY
	damaged_then_repaired
	repaired=$output
	[[ $output == *"MFT record $rec: attribute 0x$3 has a bad runlist"* ]] || die "not found"
	[[ $output != *"is lost"* ]] || die "-a cleared the record"
	repair_converged "$FSCK" image -a
}

@test "1k clusters, a non-resident \$EA whose runs are a hole then a bad run: removed with its \$EA_INFORMATION, the file kept" {
	holed_case ea1024 ea e0 hole
	[[ $repaired == *"attribute 0xe0 has a bad runlist"*"the attribute is removed"*CLEARED* ]] ||
		die "not removed"
	[[ $repaired == *"has \$EA_INFORMATION but no \$EA; it is removed"* ]] || die "\$EA_INFORMATION kept"
	mkdir -p mnt
	ntfs-3g -o ro image mnt
	manifest mnt > manifest
	run getfattr --only-values -n system.ntfs_ea mnt/ea
	umount mnt
	[ "$status" -ne 0 ] || [ -z "$output" ] || die "ea keeps an \$EA: $output"
	diff -u "$BATS_FILE_TMPDIR/eamanifest1024" manifest || die "manifest differs"
	undo_restores
}

@test "1k clusters, a non-resident \$EA whose runs are its first, a hole, then a bad run: cut at the hole, its whole first entry kept" {
	local got
	holed_case ea1024 ea e0 keep
	[[ $repaired == *"attribute 0xe0 has a bad runlist"*"the 1 runs before the bad one"*"are kept and the sizes cut to them"*FIXED* ]] ||
		die "not cut at the hole"
	mkdir -p mnt
	ntfs-3g -o ro image mnt
	manifest mnt > manifest
	got=$(getfattr --only-values -n system.ntfs_ea mnt/ea | sha256sum)
	umount mnt
	[ "${got%% *}" = "$(ea_before "$(($(cat first) * 1024))" | sha256sum | cut -d' ' -f1)" ] ||
		die "ea does not read its entries before the hole"
	diff -u "$BATS_FILE_TMPDIR/eamanifest1024" manifest || die "manifest differs"
	undo_restores
}

@test "1k clusters, a non-resident \$REPARSE_POINT whose runs are a hole then a bad run: removed with the reparse flag and its \$Reparse entry, the file kept" {
	holed_case rp1024 rp c0 hole
	[[ $repaired == *"attribute 0xc0 has a bad runlist"*"the attribute is removed"*CLEARED* ]] ||
		die "not removed"
	[[ $repaired == *"the reparse-point flag; the file has none. FIXED"*"\$Extend/\$Reparse"*"has an entry"*"for MFT record"* ]] ||
		die "the reparse flag or \$Reparse entry kept"
	mkdir -p mnt
	ntfs-3g -o ro image mnt
	manifest mnt | grep -v '  ./rp$' > manifest
	run getfattr --only-values -n system.ntfs_reparse_data mnt/rp
	[ -f mnt/rp ] || { umount mnt; die "rp is gone"; }
	umount mnt
	[ "$status" -ne 0 ] || [ -z "$output" ] || die "rp keeps a reparse point"
	diff -u "$BATS_FILE_TMPDIR/rpmanifest1024" manifest || die "manifest differs"
	undo_restores
}

@test "1k clusters, a listed file's non-resident \$EA in an extension record, a hole then a bad run: removed with its list entry and \$EA_INFORMATION, the file kept" {
	holed_case rp1024 al e0 hole
	[[ $repaired == *"attribute 0xe0 has a bad runlist"*"the attribute is removed"*CLEARED* ]] ||
		die "not removed"
	[[ $repaired == *"has \$EA_INFORMATION but no \$EA; it is removed"* ]] || die "\$EA_INFORMATION kept"
	mkdir -p mnt
	ntfs-3g -o ro image mnt
	manifest mnt 2>/dev/null | grep -v '  ./rp$' > manifest
	run getfattr --only-values -n system.ntfs_ea mnt/al
	umount mnt
	[ "$status" -ne 0 ] || [ -z "$output" ] || die "al keeps an \$EA: $output"
	diff -u "$BATS_FILE_TMPDIR/rpmanifest1024" manifest || die "manifest differs"
	undo_restores
}
