#!/usr/bin/env bats
# The B+tree walker and the index builder (libntfs/btree.c, index_build.c)
# through fsck.ntfs: every index damage, in $I30 directories of 1 to 5,000
# entries (4 levels, made by ntfs-3g), in the root directory, in $Secure
# ($SII, $SDH, $SDS, security ids) and in the view indexes of $Extend ($Q,
# $O, $R), is repaired by one -a.  Damage: tests/ntfs/btree_damage.py
# (independent of libntfs).  Oracles that are not ours: ntfsprogs-plus
# ntfsck -n (sid) finds the repaired volume clean; ntfs-3g shows the
# manifest taken before the damage (every name in its directory, same
# content); and for ownership, ntfs-3g -o permissions still shows each
# file's owner and mode.  Ours must converge: after -a, -n exits 0 and a
# second -a changes no byte.  ntfsck -a runs on the same damage side by
# side; its result is logged (not judged).
load ../lib/common

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
source "$FSFORGE_TOP/tests/ntfs/ntfs_helpers.bash"
DAMAGE="python3 $FSFORGE_TOP/tests/ntfs/btree_damage.py"

# base.img: /d with 5,000 names (4 index levels), /e1, /e2, /e40, /e300
# with that many files; perm.img: 120 files of distinct owners (ntfs-3g
# -o permissions: as many descriptors, $SII/$SDH with INDX blocks);
# del.img: base.img with 3,000 names of /d deleted (free index blocks);
# uuid.img: -U, object ids on the root and a file; rp.img: 60 reparse
# points.
setup_file() {
	local m=$BATS_FILE_TMPDIR/mnt
	cd "$BATS_FILE_TMPDIR" || return 1
	mkdir -p "$m"
	truncate -s 32M base.img
	"$MKFS_NTFS" -q -F base.img
	ntfs-3g base.img "$m"
	mkdir "$m/d" "$m/e1" "$m/e2" "$m/e40" "$m/e300"
	(cd "$m/d" && seq -f "f%05g" 1 5000 | xargs touch)
	for n in 1 2 40 300; do
		for i in $(seq 1 $n); do echo "$n $i" > "$m/e$n/file$i"; done
	done
	umount "$m"
	ntfs-3g -o ro base.img "$m"
	find "$m" -mindepth 1 -printf '%P\n' | sort > base.names
	contents "$m" > base.manifest
	umount "$m"
	cp base.img del.img
	ntfs-3g del.img "$m"
	(cd "$m/d" && seq -f "f%05g" 1 3000 | xargs rm)
	umount "$m"
	truncate -s 32M perm.img
	"$MKFS_NTFS" -q -F perm.img
	ntfs-3g -o permissions perm.img "$m"
	mkdir "$m/p"
	for i in $(seq 1 120); do
		echo "$i" > "$m/p/f$i"
		chown $((1000 + i)) "$m/p/f$i"
		chmod $((i % 2 ? 644 : 600)) "$m/p/f$i"
	done
	stat -c '%n %u %a' "$m"/p/* | sed "s|$m/||" | sort > perm.owners
	umount "$m"
	truncate -s 32M uuid.img
	"$MKFS_NTFS" -q -F -U uuid.img
	ntfs-3g uuid.img "$m"
	echo hi > "$m/f"
	setfattr -n system.ntfs_object_id -v 0x0102030405060708090a0b0c0d0e0f10 "$m"
	setfattr -n system.ntfs_object_id -v 0x1102030405060708090a0b0c0d0e0f10 "$m/f"
	umount "$m"
	# rp.img: 60 files with a reparse point (tag 0x8000000a, 4 bytes of
	# data): $R too large for its root
	truncate -s 32M rp.img
	"$MKFS_NTFS" -q -F rp.img
	ntfs-3g rp.img "$m"
	for i in $(seq 1 60); do
		touch "$m/r$i"
		setfattr -n system.ntfs_reparse_data -v 0x0a00008004000000deadbeef "$m/r$i"
	done
	umount "$m"
}

setup() { cd_tmp; mkdir -p mnt; }

# the manifest (names, metadata, SHA-256) of the directories with data;
# /d's 5,000 empty files are judged by name (a FUSE walk of them costs
# seconds)
contents() {
	local x
	for x in e1 e2 e40 e300; do
		echo "== $x"
		"$LIB/manifest" "$1/$x" --no-xattrs
	done
}
teardown() { mountpoint -q mnt 2>/dev/null && umount mnt; return 0; }

ino() { # record of PATH in IMAGE
	ntfs-3g -o ro "$1" mnt || return 1
	stat -c %i "mnt/$2"
	umount mnt
}

# ntfsck -a (sid) on a copy of the damaged image: logged, not judged
ntfsck_a_side() {
	local t rc=0
	t=$(mktemp -d "$SID_ROOT/tmp/fsforge-btree.XXXXXX")
	cp --sparse=always damaged.img "$t/v.img"
	chroot "$SID_ROOT" ntfsck -a "/tmp/${t##*/}/v.img" > ntfsck_a.log 2>&1 || rc=$?
	rm -rf "$t"
	echo "# side by side: ntfsck -a exit $rc; fsck.ntfs -a exit $1" >&3
}

# Damage image (copied from $1.img) with the rest of the arguments; -n
# finds it (exit 4) and writes nothing; -a repairs it (exit 1); -n then
# exits 0, a second -a changes no byte, ntfsck -n (sid) is clean.
damage_repair() {
	local base=$1 sum rc=0
	shift
	need_sid
	cp "$BATS_FILE_TMPDIR/$base.img" image
	$DAMAGE image "$@"
	sum=$(sha256sum < image)
	rc=0; "$FSCK" -n image > n.log 2>&1 || rc=$?
	[ "$rc" -eq 4 ] || { cat n.log; die "-n before repair exit $rc"; }
	[ "$(sha256sum < image)" = "$sum" ] || die "-n wrote"
	cp image damaged.img
	rc=0; "$FSCK" -a image > a.log 2>&1 || rc=$?
	cat a.log
	ntfsck_a_side "$rc"
	[ "$rc" -eq 1 ] || die "-a exit $rc"
	rc=0; "$FSCK" -n image > n2.log 2>&1 || rc=$?
	[ "$rc" -eq 0 ] || { cat n2.log; die "-n after -a exit $rc"; }
	sum=$(sha256sum < image)
	rc=0; "$FSCK" -a image > a2.log 2>&1 || rc=$?
	[ "$rc" -eq 0 ] || { cat a2.log; die "second -a exit $rc"; }
	[ "$(sha256sum < image)" = "$sum" ] || die "second -a changed the image"
	sid_ntfsck image > ntfsck.log 2>&1 || { cat ntfsck.log; die "ntfsck -n after our repair"; }
}

# the repaired base volume shows every name and content of before (with
# "new-root": but the root directory's own times, made anew)
same_as_base() {
	local skip='^$'
	[ "${1:-}" != new-root ] || skip=$'^\tmeta\t'
	ntfs-3g -o ro image mnt || die "ntfs-3g cannot mount the repaired volume"
	find mnt -mindepth 1 -printf '%P\n' | sort > names
	contents mnt | grep -v "$skip" > manifest
	umount mnt
	diff -u "$BATS_FILE_TMPDIR/base.names" names || die "names differ"
	grep -v "$skip" "$BATS_FILE_TMPDIR/base.manifest" | diff -u - manifest ||
		die "content differs"
}

@test "clean: directories of 1 to 5,000 entries (4 levels), their volumes check clean" {
	run $DAMAGE "$BATS_FILE_TMPDIR/base.img" levels "$(ino "$BATS_FILE_TMPDIR/base.img" d)"
	[ "$status" -eq 0 ]
	[ "$output" -ge 3 ]
	for v in base del perm uuid; do
		run "$FSCK" -n "$BATS_FILE_TMPDIR/$v.img"
		[ "$status" -eq 0 ] || die "$v: $output"
	done
}

@test "\$I30: two entries of a leaf block swapped" {
	damage_repair base swap "$(ino "$BATS_FILE_TMPDIR/base.img" d)"
	grep -q 'out of order. REBUILT' a.log
	same_as_base
}

@test "\$I30: a separator exchanged with the last key below it" {
	damage_repair base separator "$(ino "$BATS_FILE_TMPDIR/base.img" d)"
	grep -q 'out of order. REBUILT' a.log
	same_as_base
}

@test "\$I30: leaves at different depths (an entry points at a grandchild)" {
	damage_repair base depth "$(ino "$BATS_FILE_TMPDIR/base.img" d)"
	grep -q 'directory index is corrupt' a.log
	same_as_base
}

@test "\$I30: an index block says another VCN" {
	damage_repair base vcn "$(ino "$BATS_FILE_TMPDIR/base.img" d)"
	grep -q 'says VCN' a.log
	same_as_base
}

@test "\$I30: an index block marked BAAD" {
	damage_repair base baad "$(ino "$BATS_FILE_TMPDIR/base.img" d)"
	grep -q 'BAAD' a.log
	same_as_base
}

@test "\$I30: a sub-node pointer past the allocation" {
	damage_repair base subnode "$(ino "$BATS_FILE_TMPDIR/base.img" d)"
	grep -q 'outside the allocation' a.log
	same_as_base
}

@test "\$I30: a \$BITMAP bit cleared (block in use)" {
	damage_repair base bitmap "$(ino "$BATS_FILE_TMPDIR/base.img" d)" 0 0
	grep -q 'index bitmap says block 0 is free' a.log
	same_as_base
}

@test "\$I30: a \$BITMAP bit set (block free)" {
	damage_repair del bitmap "$(ino "$BATS_FILE_TMPDIR/base.img" d)" 0 1
	grep -q 'index bitmap says block 0 is used' a.log
	ntfs-3g -o ro image mnt
	run sh -c 'ls mnt/d | wc -l'
	umount mnt
	[ "$output" -eq 2000 ]
}

@test "\$I30: small indexes (2 and 40 entries, in the root) swapped; 300 entries: root entry cut" {
	damage_repair base swap "$(ino "$BATS_FILE_TMPDIR/base.img" e40)"
	same_as_base
	damage_repair base vswap "$(ino "$BATS_FILE_TMPDIR/base.img" e2)"
	same_as_base
	damage_repair base rootlen "$(ino "$BATS_FILE_TMPDIR/base.img" e300)"
	same_as_base
}

# the lab's t-rich4k-iroot-big-e0-keylen (in the compound m-rich4k-500020):
# the key length of an end entry (which has no key) past the entry; ntfsck
# -n refuses the index ("no vcn space in index node"), we took no notice
@test "\$I30: the root's end entry with a key length past the entry: the index rebuilt, every name kept" {
	damage_repair base endkey "$(ino "$BATS_FILE_TMPDIR/base.img" d)"
	grep -q 'end entry at .*: key of 16384 bytes in .*REBUILT' a.log
	same_as_base
}

@test "root directory: its index root damaged, rebuilt from its children's names" {
	damage_repair base rootlen 5
	grep -q 'MFT record 5 (/): directory index is corrupt' a.log
	same_as_base
}

@test "root directory: its record BAAD: made again, its index from its children's names" {
	damage_repair base recbaad 5
	grep -q "root directory's record is beyond use (marked bad (BAAD)); it is made again" a.log
	same_as_base new-root
}

@test "\$Secure: a \$SII block marked BAAD, a \$SDH block with another VCN, \$SII bitmap" {
	for dmg in 'baad 9:$SII' 'vcn 9:$SDH' 'bitmap 9:$SII 0 0' 'swap 9:$SDH'; do
		damage_repair perm $dmg
		grep -q 'security index is inconsistent' a.log
		ntfs-3g -o ro,permissions image mnt
		stat -c '%n %u %a' mnt/p/* | sed 's|mnt/||' | sort > owners
		umount mnt
		diff -u "$BATS_FILE_TMPDIR/perm.owners" owners || die "$dmg: owners differ"
	done
}

@test "\$Secure: \$SII key and \$SDH order on a fresh volume" {
	damage_repair base sii
	grep -q 'SII: security index is inconsistent' a.log
	same_as_base
	damage_repair base sdh
	grep -q 'SDH: security index is inconsistent' a.log
	same_as_base
}

@test "\$Secure: an \$SDS entry lost in both copies; its users get a valid id" {
	damage_repair base sds 0x101
	grep -q 'security id 257 is not in \$Secure; the file gets security id 256. FIXED' a.log
	same_as_base
}

@test "\$Secure: no descriptor left: the defaults are written, every file gets one" {
	damage_repair perm sdszero
	grep -q 'default descriptors are written. FIXED' a.log
	grep -q 'p/f120): security id [0-9]* is not in \$Secure; the file gets security id 258. FIXED' a.log
	ntfs-3g -o ro,permissions image mnt
	run cat mnt/p/f7
	umount mnt
	[ "$output" = 7 ]
}

@test "\$Secure: a security id not in \$SII" {
	damage_repair base secid 5 0x7777
	grep -q 'security id 30583 is not in \$Secure' a.log
	same_as_base
}

@test "\$Extend: \$Quota:\$Q, \$Quota:\$O, \$Reparse:\$R rebuilt; \$ObjId:\$O from the files' object ids" {
	damage_repair uuid vswap 24:\$Q
	grep -q 'Quota:\$Q: index is corrupt' a.log
	damage_repair uuid rootlen 26:\$R
	# pass 2 (reparse points) meets the damaged \$R before pass 3 walks it
	grep -Eq 'Reparse(:| \(MFT record 26\): index )\$R(:)? (index )?is corrupt' a.log
	damage_repair uuid rootlen 25:\$O
	grep -q 'ObjId:\$O: index is corrupt' a.log
	ntfs-3g -o ro image mnt
	run getfattr -e hex -n system.ntfs_object_id mnt/f
	umount mnt
	[[ $output == *0x1102030405060708090a0b0c0d0e0f10* ]]
}

# $Quota's views of a fresh volume (mkntfs of the sid tree, independent
# of ours, and our mkfs.ntfs): $Q's keys (owner ids) with the SID that
# ends each entry's data, $O's keys (SIDs) with their owner ids, from the
# roots (tests/ntfs/lab/ntfsparse.py, not libntfs)
quota_views() {
	python3 - "$1" <<'PY'
import struct, sys
sys.path.insert(0, __import__("os").environ["FSFORGE_TOP"] + "/tests/ntfs/lab")
import ntfsparse as P
img = open(sys.argv[1], "rb").read()
g = P.Geometry(img)
rec = P.unfix(P.read_record(img, g, P.named_record(img, g, "$Quota"))[1])
for off, t, name, nr in P.attrs(rec):
    if t != 0x90:
        continue
    vo, _ = P.value(rec, off)
    for p, ref, ln, kl, fl in P.index_entries(rec, vo + 0x10):
        if fl & 2:
            continue
        do, dl = ref & 0xffff, ref >> 16 & 0xffff
        key, data = rec[p + 16:p + 16 + kl], rec[p + do:p + do + dl]
        print(name, key.hex(), (data[48:] if name == "$Q" else data).hex())
PY
}

# lab realdev's quotaq and quotao ($Q or $O emptied, the end entry kept)
# went unnoticed (ours, ntfsck -n, ntfs-3g): every volume's $Q holds the
# default entry (owner id 1) and each owner $O names, $O each owner $Q
# names with a SID.  -n finds it (exit 4, no write), -a rebuilds the
# view from the other (0x03006d), converged, ntfsck -n clean, and both
# views hold again what the fresh volume's did
@test "\$Extend: an emptied \$Quota:\$Q or \$O gets back the entries a fresh volume holds" {
	local t mk sub
	need_sid
	t=$(mktemp -d "$SID_ROOT/tmp/fsforge-quota.XXXXXX")
	truncate -s 16M "$t/v.img"
	chroot "$SID_ROOT" mkntfs -q -F -f "/tmp/${t##*/}/v.img" > /dev/null 2>&1 ||
		{ rm -rf "$t"; die "mkntfs"; }
	mv "$t/v.img" sid.img
	rm -rf "$t"
	truncate -s 16M ours.img
	"$MKFS_NTFS" -q -F ours.img
	for mk in sid ours; do
		quota_views $mk.img > fresh.txt || die "reading $mk.img's views"
		grep -q '^\$Q 01000000 $' fresh.txt || die "$mk: no default entry: $(cat fresh.txt)"
		for sub in quotaq quotao; do
			cp $mk.img image
			python3 "$FSFORGE_TOP/tests/ntfs/lab/realdev.py" image $sub > /dev/null ||
				die "realdev.py $sub"
			run "$FSCK" -n image
			[ "$status" -eq 4 ] || { echo "$output"; die "$mk $sub: -n exit $status"; }
			[[ $output == *'index is missing'* ]] || die "$mk $sub: $output"
			run "$FSCK" -a image
			[ "$status" -eq 1 ] || { echo "$output"; die "$mk $sub: -a exit $status"; }
			repair_converged "$FSCK" image -a
			[ "$(quota_views image | cut -d' ' -f1,2 | sort)" = \
			  "$(cut -d' ' -f1,2 fresh.txt | sort)" ] ||
				die "$mk $sub: keys $(quota_views image) against $(cat fresh.txt)"
			[ "$(quota_views image | grep -v '^\$Q 01000000' | sort)" = \
			  "$(grep -v '^\$Q 01000000' fresh.txt | sort)" ] ||
				die "$mk $sub: owners $(quota_views image) against $(cat fresh.txt)"
		done
	done
}

@test "\$Reparse:\$R: a root of the wrong type or collation is rewritten as a view index" {
	# the root's header itself was kept by the rewrite before: -a never
	# converged.  Expected bytes: type 0, NTOFS_ULONGS (0x13), the
	# volume's 4,096-byte index blocks (format documentation)
	local dmg
	for dmg in 'uuid 4 0x10' 'uuid 0 0x30' 'rp 4 0x10'; do
		set -- $dmg
		damage_repair $1 rootword 26:\$R $2 $3
		grep -q 'Reparse.*corrupt' a.log || die "$dmg: not reported"
		run $DAMAGE image rootinfo 26:\$R
		[ "$output" = "0x0 0x13 4096" ] || die "$dmg: root now $output"
	done
}

@test "\$Reparse:\$R: a lost or misnamed root is made anew from the files" {
	# rootname: the root's name \$X (no \$R root: the misnamed one is
	# replaced); roottype: its type field damaged (pass 1 removes it)
	local img dmg
	for img in uuid rp; do
		for dmg in rootname roottype; do
			damage_repair $img $dmg 26:\$R
			run $DAMAGE image rootinfo 26:\$R
			[ "$output" = "0x0 0x13 4096" ] || die "$img $dmg: root now $output"
			grep -q 'Reparse.*REBUILT' a.log || die "$img $dmg: not rebuilt"
		done
	done
	# every reparse point still read by ntfs-3g
	ntfs-3g -o ro image mnt
	run getfattr -h -e hex -n system.ntfs_reparse_data mnt/r60
	umount mnt
	[[ $output == *0x0a00008004000000deadbeef* ]] || die "r60: $output"
}

@test "an index allocation's size of 2^45 bytes is a fault found at once (\$I30, \$R)" {
	# the walker counted (and allocated a bit for) every block of the
	# stated size: minutes of -n.  Its runs map 14 (/e300), 1 (\$R)
	# clusters
	local d x
	d=$(ino "$BATS_FILE_TMPDIR/base.img" e300)
	for x in "base $d" "rp 26:\$R"; do
		set -- $x
		cp "$BATS_FILE_TMPDIR/$1.img" image
		$DAMAGE image allocsize "$2" $((1 << 45))
		run timeout 20 "$FSCK" -n image
		[ "$status" -eq 4 ] || die "$x: -n exit $status: $output"
		# named by the first check that meets it: the attribute's
		# extent (-n goes on with it cut, as -a cuts it) or the index
		[[ $output == *"35184372088832 bytes allocated"* ||
			$output == *"index allocation of 35184372088832 bytes has"* ]] || die "$output"
		damage_repair $1 allocsize "$2" $((1 << 45))
	done
}

@test "mkfs.ntfs: indexes from the builder, -T reproducible (serial aside), valid with -U" {
	for o in "" "-c 512" "-U"; do
		rm -f a.img b.img
		truncate -s 32M a.img b.img
		"$MKFS_NTFS" -q -F -T $o a.img
		"$MKFS_NTFS" -q -F -T $o b.img
		run "$FSCK" -n a.img
		[ "$status" -eq 0 ]
		run ntfsfix_clean a.img
		[ "$status" -eq 0 ]
		if [ "$o" = -U ]; then continue; fi
		# the serial number (boot sector and its backup) is random
		python3 - a.img b.img <<'PY' || die "mkfs -T $o: images differ"
import sys
a = bytearray(open(sys.argv[1], "rb").read())
b = bytearray(open(sys.argv[2], "rb").read())
for off in (0, len(a) - 512):
    b[off + 72:off + 80] = a[off + 72:off + 80]
sys.exit(a != b)
PY
	done
}
