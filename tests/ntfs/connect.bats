#!/usr/bin/env bats
# fsck.ntfs connectivity and convergence (as e2fsck's pass 3): directory
# loops, subtrees cut off from the root, names claimed twice in one
# directory, /lost+found made whatever the shape of the root's index.
# Volumes are made by mkfs.ntfs and filled by ntfs-3g; the damage is a few
# bytes patched by tests/ntfs/ntfs_patch.py (records named by the inode
# numbers ntfs-3g shows, which are MFT record numbers).  Oracles, none of
# them ours: ntfsprogs-plus ntfsck -n (sid) finds the repaired volume
# clean, and ntfs-3g shows every file of the manifest taken before the
# damage (same record, same SHA-256), in its place or under /lost+found.
# Ours must converge: after -a, -n exits 0 and a second -a changes no byte.
load ../lib/common

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
source "$FSFORGE_TOP/tests/ntfs/ntfs_helpers.bash"
PATCH="python3 $FSFORGE_TOP/tests/ntfs/ntfs_patch.py"

setup() {
	cd_tmp
	need_ntfs3g
	mkdir -p mnt
}
teardown() { mountpoint -q mnt 2>/dev/null && umount mnt; return 0; }

# a fresh volume (SIZE, extra mkfs options) mounted read-write on mnt
new_volume() {
	local size=$1; shift
	truncate -s "$size" image
	"$MKFS_NTFS" -q -F "$@" image
	ntfs-3g image mnt
}

ino() { stat -c %i "mnt/$1"; }

# unmount and keep "record<TAB>sha256<TAB>path" of every file
take_manifest() {
	python3 - mnt > manifest <<'PY'
import hashlib, os, sys
root = sys.argv[1]
for d, _, files in os.walk(root):
    for f in files:
        p = os.path.join(d, f)
        h = hashlib.sha256(open(p, "rb").read()).hexdigest()
        print("%d\t%s\t%s" % (os.stat(p).st_ino, h, os.path.relpath(p, root)))
PY
	umount mnt
	[ "$(wc -l < manifest)" -gt 0 ]
}

# every file of the manifest through ntfs-3g: same record, same content,
# at its place, under lost+found/, or renamed NAME.fsck-RECORD beside it;
# prints how many were found where
check_manifest() {
	ntfs-3g -o ro image mnt
	python3 - mnt manifest <<'PY'
import hashlib, os, re, sys
root, man = sys.argv[1], sys.argv[2]
now = {}
for d, _, files in os.walk(root):
    for f in files:
        p = os.path.join(d, f)
        h = hashlib.sha256(open(p, "rb").read()).hexdigest()
        now[os.stat(p).st_ino] = (h, os.path.relpath(p, root))
place = lost = renamed = 0
bad = []
for line in open(man):
    ino, h, path = line.rstrip("\n").split("\t")
    ino = int(ino)
    if ino not in now:
        bad.append("missing: %s (record %d)" % (path, ino))
        continue
    h2, p2 = now[ino]
    if h2 != h:
        bad.append("content differs: %s" % path)
    elif p2 == path:
        place += 1
    elif p2.startswith("lost+found/"):
        lost += 1
    elif os.path.dirname(p2) == os.path.dirname(path) and \
            re.fullmatch(r".+\.fsck-%d(-\d+)?" % ino, os.path.basename(p2)):
        renamed += 1
    else:
        bad.append("moved: %s -> %s" % (path, p2))
print("place=%d lost=%d renamed=%d" % (place, lost, renamed))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
	local rc=$?
	umount mnt
	return $rc
}

# -a repairs (exit 1), -n then finds nothing, a second -a changes no byte,
# ntfsck -n (sid) agrees
repair_converges() {
	local rc=0 sum
	"$FSCK" -a image > a.log 2>&1 || rc=$?
	cat a.log
	[ "$rc" -eq 1 ] || die "-a exit $rc"
	rc=0; "$FSCK" -n image > n.log 2>&1 || rc=$?
	[ "$rc" -eq 0 ] || { cat n.log; die "-n after -a exit $rc"; }
	sum=$(sha256sum < image)
	rc=0; "$FSCK" -a image > a2.log 2>&1 || rc=$?
	[ "$rc" -eq 0 ] || { cat a2.log; die "second -a exit $rc"; }
	[ "$(sha256sum < image)" = "$sum" ] || die "second -a changed the image"
	sid_ntfsck image > ntfsck.log 2>&1 || { cat ntfsck.log; die "ntfsck -n after our repair"; }
}

ino_of_lost_found() {
	ntfs-3g -o ro image mnt
	stat -c %i mnt/lost+found
	umount mnt
}

@test "a loop of two directories with 18 files below goes to /lost+found whole" {
	new_volume 32M
	mkdir -p mnt/a/b mnt/keep
	for i in $(seq 1 9); do
		echo "a $i" > "mnt/a/f$i"
		head -c $((i * 1000)) /dev/urandom > "mnt/a/b/g$i"
	done
	echo keep > mnt/keep/k
	a=$(ino a) b=$(ino a/b)
	take_manifest
	# a's parent becomes b, and the index entries agree: the root loses
	# "a", b gains it; nothing reaches a or b from the root any more
	$PATCH image parent "$a" "$b"
	$PATCH image rmentry 5 a
	$PATCH image addentry "$b" "$a"
	run "$FSCK" -n image
	[ "$status" -eq 4 ]
	[[ $output == *"not reachable from the root (its parents form a loop: $a -> $b -> $a)"* ]]
	repair_converges
	run check_manifest
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"place=1 lost=18 renamed=0"* ]]
	# one entry for the subtree: b keeps its name and place below #a
	ntfs-3g -o ro image mnt
	run ls mnt/lost+found
	umount mnt
	[ "$output" = "#$a" ]
	run $PATCH image info "$a"
	lf=$(ino_of_lost_found)
	[[ $output == *"[[$lf, "*", \"#$a\", 0]]"* ]]
}

@test "a subtree cut off from the root: back in place, or to /lost+found by its top directory" {
	new_volume 32M
	mkdir -p mnt/p/sub1/deep mnt/p/sub2/deep
	for i in 1 2 3; do
		echo "1 $i" > "mnt/p/sub1/x$i"; echo "1d $i" > "mnt/p/sub1/deep/y$i"
		echo "2 $i" > "mnt/p/sub2/x$i"; echo "2d $i" > "mnt/p/sub2/deep/y$i"
	done
	echo plain > mnt/plain
	p=$(ino p) s1=$(ino p/sub1) s2=$(ino p/sub2) plain=$(ino plain)
	take_manifest
	# sub1: only its index entry is gone (its name still says p);
	# sub2: its entry is gone and its parent reference names a file
	$PATCH image rmentry "$p" sub1
	$PATCH image rmentry "$p" sub2
	$PATCH image parent "$s2" "$plain"
	run "$FSCK" -n image
	[ "$status" -eq 4 ]
	repair_converges
	grep -q "\"sub1\" (MFT record $s1) has no entry" a.log
	grep -q "MFT record $s2 .*in no directory. RECONNECTED" a.log
	run check_manifest
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"place=7 lost=6 renamed=0"* ]]
	ntfs-3g -o ro image mnt
	run ls mnt/lost+found "mnt/lost+found/#$s2/deep"
	umount mnt
	[[ $output == *"#$s2"* ]]
	[[ $output == *"y1"*"y2"*"y3"* ]]
}

@test "a name claimed twice in one directory is renamed once; the run converges" {
	new_volume 16M
	mkdir mnt/d
	for f in dup1 dup2 dup3 dup4 other; do echo "$f" > "mnt/d/$f"; done
	d=$(ino d) x2=$(ino d/dup2) x4=$(ino d/dup4)
	take_manifest
	# dup2 becomes dup1 in its record and in its index entry (two entries
	# with one name); dup4 becomes dup3 in its record only (its entry is
	# stale, its name missing)
	$PATCH image rename "$x2" dup2 dup1
	$PATCH image renamefn "$x4" dup4 dup3
	run "$FSCK" -n image
	[ "$status" -eq 4 ]
	[[ $output == *"index entries \"dup1\" for MFT records"*"have the same name"* ]]
	repair_converges
	[ "$(grep -c 'file_name_duplicate\|the second becomes' a.log)" -eq 2 ]
	run check_manifest
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"place=3 lost=0 renamed=2"* ]]
	ntfs-3g -o ro image mnt
	run cat mnt/d/dup1 "mnt/d/dup1.fsck-$x2" mnt/d/dup3 "mnt/d/dup3.fsck-$x4"
	umount mnt
	[ "$output" = "$(printf 'dup1\ndup2\ndup3\ndup4')" ]
}

# an orphan (its parent reference names a file, its entry is gone) makes
# /lost+found; it must be in the root's index, a directory named
# lost+found in the root with the root's security id
orphan_makes_lost_found() {
	local victim other lf root_sid renamed=${1:-0}
	victim=$(ino victim) other=$(ino other)
	take_manifest
	$PATCH image parent "$victim" "$other"
	$PATCH image rmentry 5 victim
	repair_converges
	run check_manifest
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"lost=1 renamed=$renamed"* ]]
	ntfs-3g -o ro image mnt
	[ -d mnt/lost+found ] || die "no lost+found"
	ls mnt | grep -qx lost+found || die "lost+found not listed in the root"
	[ "$(cat "mnt/lost+found/#$victim")" = x ] || die "orphan content"
	lf=$(stat -c %i mnt/lost+found)
	umount mnt
	root_sid=$($PATCH image info 5 | python3 -c 'import json,sys; print(json.load(sys.stdin)["security_id"])')
	run $PATCH image info "$lf"
	echo "$output"
	[[ $output == *"\"security_id\": $root_sid,"* ]]
	[[ $output == *"\"names\": [[5, 5, \"lost+found\", 0]]"* ]]
}

@test "/lost+found made in an almost empty root" {
	new_volume 16M
	echo x > mnt/victim; echo y > mnt/other
	orphan_makes_lost_found
}

@test "/lost+found made when a file has its name: the file is renamed, not lost" {
	new_volume 16M
	echo squat > mnt/lost+found
	echo x > mnt/victim; echo y > mnt/other
	squat=$(ino lost+found)
	orphan_makes_lost_found 1
	grep -q "is called /lost+found but is no directory; it becomes \"lost+found.fsck-$squat\"" a.log
}

@test "/lost+found made in a root of 1,200 entries (several index levels)" {
	new_volume 32M
	for i in $(seq -w 1 1200); do echo "$i" > "mnt/a_longish_file_name_$i"; done
	echo x > mnt/victim; echo y > mnt/other
	umount mnt
	[ "$($PATCH image levels 5)" -ge 3 ]
	ntfs-3g image mnt
	orphan_makes_lost_found
}

@test "/lost+found made in a root whose index attributes are in an extension record" {
	# 4 KiB sectors and records: ntfs-3g moves the root's \$INDEX_ROOT of
	# 1,200 entries to an extension record (\$ATTRIBUTE_LIST)
	new_volume 64M -s 4096
	for i in $(seq -w 1 1200); do echo "$i" > "mnt/file_with_a_longish_name_$i"; done
	echo x > mnt/victim; echo y > mnt/other
	umount mnt
	[ "$($PATCH image holders 5 | wc -w)" -ge 2 ]
	ntfs-3g image mnt
	orphan_makes_lost_found
}

# The same root, the extension record holding its $INDEX_ROOT zeroed: the
# base record has room, so one -a puts a new root there and an entry for
# it in the list (before, the rebuild refused: "its attribute list lacks
# index attributes", exit 5).  Judged by ntfsck -n, a second -n and
# ntfs-3g's manifest (names and contents) against the one before.
@test "the root's \$INDEX_ROOT in an extension record lost: a new root in the base record, all 1,200 names kept" {
	new_volume 64M -s 4096
	for i in $(seq -w 1 1200); do echo "$i" > "mnt/file_with_a_longish_name_$i"; done
	python3 "$FSFORGE_TOP/tests/ntfs/attrlist_lab.py" manifest mnt > manifest.0
	umount mnt
	run python3 - "$FSFORGE_TOP/tests/ntfs" "$FSFORGE_TOP/tests/ntfs/lab" image <<-'PY'
	import sys
	sys.path.insert(0, sys.argv[1])
	sys.path.insert(0, sys.argv[2])
	import splitidx_lab as S
	import ntfsparse as P
	v = S.Vol(sys.argv[3])
	rec = [ref & 0xFFFFFFFFFFFF for t, nm, vcn, ref in P.list_entries(P.list_value(v.img, v.g, v.rec(5)))
	       if t == 0x90 and nm == "$I30"]
	if len(rec) != 1 or rec[0] == 5:
	    sys.exit("the root's index root is not in an extension record: %s" % rec)
	at = v.g.rec_off(rec[0])
	v.img[at:at + v.g.rs] = bytes(v.g.rs)
	v.save()
	PY
	[ "$status" -eq 0 ] || die "damage failed: $output"
	run "$FSCK" -n image
	[ "$status" -eq 4 ] || die "-n exit $status: $output"
	run "$FSCK" -a image
	[ "$status" -eq 1 ] || die "-a exit $status: $output"
	repair_converged "$FSCK" image -a
	ntfs-3g -o ro image mnt
	python3 "$FSFORGE_TOP/tests/ntfs/attrlist_lab.py" manifest mnt > manifest.1
	umount mnt
	cmp -s manifest.0 manifest.1 || die "content differs"
}

@test "index keys refreshed from the file (parent sequence number, directory flag) once" {
	new_volume 16M
	mkdir mnt/d
	for f in k1 k2 k3; do echo "$f" > "mnt/d/$f"; done
	d=$(ino d) k1=$(ino d/k1)
	take_manifest
	# k1's own name and k2's index key name d with a wrong sequence number;
	# k3's key says it is a directory
	$PATCH image parentseq "$k1" 77
	$PATCH image keyseq "$d" k2 78
	$PATCH image keyflags "$d" k3 0x10000000
	run "$FSCK" -n image
	[ "$status" -eq 4 ]
	[[ $output == *"\"k1\": the file's name names the directory with sequence number 77"* ]]
	[[ $output == *"\"k2\": its index entry names the directory with sequence number 78"* ]]
	[[ $output == *"index entry \"k3\" says a directory, the file is a file"* ]]
	repair_converges
	run check_manifest
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"place=3 lost=0 renamed=0"* ]]
	dseq=$($PATCH image info "$d" | python3 -c 'import json,sys; print(json.load(sys.stdin)["seq"])')
	run $PATCH image info "$k1"
	[[ $output == *"\"names\": [[$d, $dseq, \"k1\", 0]]"* ]]
}

# The names check proves a clean volume by a digest (pass 1's names
# against pass 3's entries) and counts every file's names only when they
# differ: hard links, a DOS/Win32 pair and names spread over directories
# must add up on both sides; removed entries (the known damage: a hard
# link's and a DOS name's, which ntfs-3g no longer lists) must make them
# differ and be found, those two only, by the count.
@test "names against entries: links and a DOS pair pass the digest; removed entries are counted and found" {
	need_sid
	new_volume 16M
	mkdir mnt/a mnt/b
	echo long > mnt/a/Long-File-Name.txt
	setfattr -n system.ntfs_dos_name -v LONG-F~1.TXT mnt/a/Long-File-Name.txt
	echo linked > mnt/a/linked
	ln mnt/a/linked mnt/b/link2
	ln mnt/a/linked mnt/a/link3
	for i in $(seq 1 40); do echo "$i" > "mnt/b/f$i"; done
	a=$(ino a) b=$(ino b) l=$(ino a/linked) n=$(ino a/Long-File-Name.txt)
	(cd mnt && find . -printf '%i %p\n' | sort) > listing
	take_manifest
	# ntfs-3g counts the DOS name as a link (link count 2), as Windows
	# does; so does fsck.ntfs: the volume is clean as ntfs-3g left it
	run "$FSCK" -n -v image
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output != *"names counted"* ]]
	run sid_ntfsck image
	[ "$status" -eq 0 ]
	$PATCH image rmentry "$b" link2
	$PATCH image rmentry "$a" LONG-F~1.TXT
	# ntfsck walks names from the root (a file reached by another name
	# is fine to it); ntfs-3g shows the entries gone
	ntfs-3g -o ro image mnt
	run ls mnt/a mnt/b
	umount mnt
	[[ $output != *link2* ]]
	[[ $output == *linked* ]]
	run "$FSCK" -n -v image
	echo "$output"
	[ "$status" -eq 4 ]
	[[ $output == *"names counted"* ]]
	[ "$(echo "$output" | grep -c 'has no entry')" -eq 2 ]
	[[ $output == *"\"link2\" (MFT record $l) has no entry"* ]]
	[[ $output == *"\"LONG-F~1.TXT\" (MFT record $n) has no entry"* ]]
	repair_converges
	# every name back where it was, as ntfs-3g lists them
	ntfs-3g -o ro image mnt
	(cd mnt && find . -printf '%i %p\n' | sort) > listing.after
	umount mnt
	diff listing listing.after
}

# a hard link's $FILE_NAME whose parent reference was damaged (it names a
# file) while its directory's entry is intact: the name is kept by giving
# it back the entry's parent (lab case t-rich4k-fname-hardlink-parent-
# missing lost the name: the entry was dropped and the $FILE_NAME left
# naming no directory, issue 11)
@test "a hard link's name whose parent reference names a file gets its entry's parent back" {
	new_volume 16M
	mkdir mnt/a mnt/b
	echo linked > mnt/a/f
	ln mnt/a/f mnt/b/g
	echo other > mnt/b/plain
	f=$(ino a/f) b=$(ino b) plain=$(ino b/plain)
	umount mnt
	$PATCH image parent "$f" "$plain" g
	run "$FSCK" -n image
	[ "$status" -eq 4 ]
	[[ $output == *'entry "g" names MFT record '"$f"', whose name of that spelling names record '"$plain"' (no directory) as its parent'* ]]
	[[ $output != *"file_orphaned"* && $output != *"in no directory"* ]]
	repair_converges
	ntfs-3g -o ro image mnt
	run cat mnt/a/f mnt/b/g
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'linked\nlinked')" ]
	run ls mnt/b
	umount mnt
	[ "$output" = "$(printf 'g\nplain')" ]
	run $PATCH image info "$f"
	[[ $output == *"[$b, "[0-9]*", \"g\""* ]]
}

# the only name of a file names the file itself as its parent, its entry
# intact: it keeps its name in place (it was an orphan: /lost+found/#N)
@test "a file's only name naming itself as its parent gets its entry's parent back, not /lost+found" {
	new_volume 16M
	mkdir mnt/a
	echo alone > mnt/a/f
	f=$(ino a/f)
	umount mnt
	$PATCH image parent "$f" "$f"
	run "$FSCK" -n image
	[ "$status" -eq 4 ]
	[[ $output == *'entry "f" names MFT record '"$f"', whose name of that spelling names the file itself as its parent'* ]]
	[[ $output != *"in no directory"* ]]
	repair_converges
	ntfs-3g -o ro image mnt
	run cat mnt/a/f
	[ "$output" = alone ] || die "a/f: $status $output"
	run ls -A mnt
	[[ $output != *lost+found* ]] || die "/lost+found made: $output"
}

# the silent case: a hard link's name names a file as its parent and no
# index holds it (its entry gone too): reported and reconnected to
# /lost+found under its own spelling, the other name untouched (before:
# neither -n nor ntfsck -n said a word, the name invisible)
@test "a hard link's name naming a file as its parent, in no index: reconnected to /lost+found" {
	new_volume 16M
	mkdir mnt/a mnt/b
	echo linked > mnt/a/f
	ln mnt/a/f mnt/b/g
	echo other > mnt/b/plain
	f=$(ino a/f) b=$(ino b) plain=$(ino b/plain)
	umount mnt
	$PATCH image parent "$f" "$plain" g
	$PATCH image rmentry "$b" g
	run "$FSCK" -n image
	[ "$status" -eq 4 ]
	[[ $output == *'name "g" names MFT record '"$plain"', which is no directory, as its parent, and no index holds it'* ]]
	repair_converges
	ntfs-3g -o ro image mnt
	run cat mnt/a/f mnt/lost+found/g
	[ "$output" = "$(printf 'linked\nlinked')" ] || die "$output"
	[ "$(stat -c %i mnt/lost+found/g)" = "$f" ] || die "lost+found/g is not record $f"
	run ls mnt/b
	[ "$output" = plain ] || die "b: $output"
}
