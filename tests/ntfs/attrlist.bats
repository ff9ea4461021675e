#!/usr/bin/env bats
# fsck.ntfs on files whose attributes live in extension records
# ($ATTRIBUTE_LIST): volumes populated by ntfs-3g (a file with 150 hard
# links: non-resident list; one with 14: resident list; 80 named streams;
# a directory whose index root and allocation moved to extension records)
# check clean for every cluster size, and damage to a list or to an
# extension record is repaired in one -a.  Oracles that are not ours:
# ntfsprogs-plus ntfsck -n (sid tree), ntfs-3g reading every file, name
# and stream against the manifest taken before the damage (the lab's own
# parser, tests/ntfs/lab/ntfsparse.py, says which names a destroyed record
# held).  ntfsck -a runs on the same damage, side by side (reported in
# attrlist-ntfsck.txt, not judged).  $MFT's own $BITMAP and $FILE_NAME
# moved to an extension record (tests/ntfs/mft_ext.py: the layout Linux
# 7.2's ntfs driver leaves once $MFT grows) check clean, and a wrong bit
# in that bitmap is repaired.
load ../lib/common

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
source "$FSFORGE_TOP/tests/ntfs/ntfs_helpers.bash"
LAB=$FSFORGE_TOP/tests/ntfs/attrlist_lab.py

setup_file() {
	need_ntfs3g
	command -v python3 > /dev/null || return 0
	export VOL=$BATS_FILE_TMPDIR/v4k.img
	python3 "$LAB" make "$VOL" "$MKFS_NTFS" 4096 ||
		die "making the volume failed"
	mkdir -p "$BATS_FILE_TMPDIR/mnt"
	ntfs-3g -o ro "$VOL" "$BATS_FILE_TMPDIR/mnt"
	python3 "$LAB" manifest "$BATS_FILE_TMPDIR/mnt" > "$BATS_FILE_TMPDIR/manifest.0"
	umount "$BATS_FILE_TMPDIR/mnt"
}

setup() {
	cd_tmp
	need_ntfs3g
	command -v python3 > /dev/null || skip "no python3"
}
teardown() { mountpoint -q mnt 2>/dev/null && umount mnt; return 0; }

have_sid() { chroot "$SID_ROOT" sh -c 'command -v ntfsck' > /dev/null 2>&1; }

# manifest of IMG read through ntfs-3g (read-only)
manifest_of() {
	mkdir -p mnt
	ntfs-3g -o ro "$1" mnt || return 1
	python3 "$LAB" manifest mnt
	umount mnt
}

# ntfsck -a of the sid tree on a copy of $1, the result left in $2;
# prints its exit status
sid_ntfsck_a() {
	local t rc
	t=$(mktemp -d "$SID_ROOT/tmp/fsforge-al.XXXXXX")
	cp --sparse=always "$1" "$t/v.img"
	chroot "$SID_ROOT" ntfsck -a "/tmp/${t##*/}/v.img" > /dev/null 2>&1
	rc=$?
	cp --sparse=always "$t/v.img" "$2"
	rm -rf "$t"
	echo "$rc"
}

@test "attribute lists: clean volumes of every cluster size check clean (-n exit 0, ntfsck agrees)" {
	for cs in 512 4096 65536; do
		python3 "$LAB" make "v$cs.img" "$MKFS_NTFS" "$cs"
		run "$FSCK" -n "v$cs.img"
		[ "$status" -eq 0 ] || die "cluster size $cs: -n exit $status: $output"
		[[ "$output" == *"problems: 0 found"* ]] || die "cluster size $cs: $output"
		if have_sid; then
			run sid_ntfsck "v$cs.img"
			[ "$status" -eq 0 ] || die "cluster size $cs: ntfsck -n exit $status: $(tail -5 <<<"$output")"
		fi
	done
	# the volume holds what the test is about: lists in 4 files, the
	# directory's index in extension records (read by the lab's parser)
	run python3 -c "
import sys, struct
sys.path.insert(0, '$FSFORGE_TOP/tests/ntfs/lab')
import ntfsparse as P
img = open('$VOL', 'rb').read()
g = P.Geometry(img)
lists = 0; ext_index = 0
for n, at, rec in P.records(img, g):
    a = list(P.attrs(rec))
    base, = struct.unpack_from('<Q', rec, 0x20)
    lists += any(t == 0x20 for _, t, _, _ in a) and not base
    ext_index += bool(base) and any(t in (0x90, 0xa0) for _, t, _, _ in a)
print(lists, ext_index)"
	[ "$status" -eq 0 ]
	[ "${output%% *}" -ge 4 ] || die "only ${output%% *} files with lists"
	[ "${output##* }" -ge 1 ] || die "no index attribute in an extension record"
}

# CASE FILE: damage, -a, and the judges
judge() {
	local c=$1 f=$2 rc before nrc
	cp --sparse=always "$VOL" d.img
	python3 "$LAB" damage d.img "$c" "$f" || die "$c $f: damage failed"
	cp --sparse=always d.img damaged.img
	run "$FSCK" -a d.img
	[ "$status" -eq 1 ] || die "$c $f: -a exit $status: $output"
	run "$FSCK" -n d.img
	[ "$status" -eq 0 ] || die "$c $f: -n after -a: exit $status: $output"
	before=$(sha256sum < d.img)
	"$FSCK" -a d.img > /dev/null || die "$c $f: second -a exit $?"
	[ "$(sha256sum < d.img)" = "$before" ] || die "$c $f: second -a changed the image"
	if have_sid; then
		run sid_ntfsck d.img
		[ "$status" -eq 0 ] || die "$c $f: ntfsck -n after our -a: exit $status: $(grep -v percent <<<"$output" | tail -5)"
	fi
	manifest_of d.img > manifest.1 || die "$c $f: ntfs-3g cannot mount the repaired volume"
	python3 - "$BATS_FILE_TMPDIR/manifest.0" manifest.1 "${3:-}" <<-'EOF' || die "$c $f: content differs"
	import json, sys
	want = json.load(open(sys.argv[1]))
	got = json.load(open(sys.argv[2]))
	for p in filter(None, sys.argv[3].split("\n")):
	    want.pop(p)		# names the destroyed record held
	bad = sorted(p for p in set(want) | set(got) if want.get(p) != got.get(p))
	if bad:
	    print("differs:", bad[:10], len(bad))
	    sys.exit(1)
	EOF
	# ntfsck -a on the same damage, side by side
	if have_sid; then
		rc=$(sid_ntfsck_a damaged.img theirs.img)
		nrc=$(sid_ntfsck theirs.img > /dev/null 2>&1; echo $?)
		echo "$c $f: fsck.ntfs -a 1, then -n 0, content kept; ntfsck -a $rc, then ntfsck -n $nrc" \
			>> "$BATS_RUN_TMPDIR/attrlist-ntfsck.txt"
	fi
}

@test "attribute list entries damaged (type, length, name length, VCN, record, instance, zeroed): rebuilt, nothing lost" {
	judge type target
	judge len few
	judge nlen streams
	judge vcn xdir
	judge mref target
	judge inst streams
	judge zero-entry few
}

# The list's rebuild is the one repair; its first write fails (EIO
# injected by strace into -a's first pwrite(2)): the one problem is found
# once and left, not counted again by the line saying the rebuild failed.
@test "attribute list rebuild whose write fails: 1 found, 0 fixed, 1 left, exit 4, not a byte written" {
	local sum
	command -v strace >/dev/null || need_or_skip "strace missing"
	cp --sparse=always "$VOL" d.img
	python3 "$LAB" damage d.img inst few || die "damage failed"
	sum=$(sha256sum < d.img)
	# LeakSanitizer cannot run under ptrace
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		run strace -o /dev/null -e trace=pwrite64 -e inject=pwrite64:error=EIO:when=1 "$FSCK" -a d.img
	echo "$output"
	[ "$status" -eq 4 ] || die "-a with the write failing: exit $status"
	[[ $output == *"attribute list cannot be rebuilt ("*"): the fix above is left"* ]] || die "failure not said"
	[[ $output == *"problems: 1 found, 0 fixed, 1 left"* ]] || die "counts"
	[ "$(sha256sum < d.img)" = "$sum" ] || die "bytes written"
	run "$FSCK" -a d.img
	[ "$status" -eq 1 ] || die "-a: exit $status: $output"
	repair_converged "$FSCK" d.img -a
}

@test "attribute list value cut short (resident and non-resident): rebuilt from the extension records" {
	judge size few
	judge size streams
}

@test "extension record lost its base reference, or points at another base: given back, nothing lost" {
	judge ext-base0 few
	judge ext-base target
	judge ext-base xdir
}

# xdir's $I30 root lives in an extension record that xdir's list names
# (sequence matching); its base reference now names "few", whose list
# does not name it, and xdir's first index block lost its magic.  The
# record is xdir's (the list naming it is the evidence, its damaged base
# field is not): its base reference goes back, few keeps its list (few
# is checked first: it took the record and xdir's index could not be
# rebuilt, -a exit 5), and the block is rebuilt from the children.
# The same with the bases checked the other way round
@test "extension record naming a base whose list does not name it, another base's list does: given back to the list's base, not taken" {
	local few
	few=$(python3 -c "
import sys; sys.path.insert(0, '$FSFORGE_TOP/tests/ntfs')
import attrlist_lab as L; print(L.Vol('$VOL').base_of('few'))")
	cp --sparse=always "$VOL" d.img
	python3 "$LAB" damage d.img root-other xdir || die "damage failed"
	run "$FSCK" -n d.img
	[ "$status" -eq 4 ] || die "-n exit $status: $output"
	[[ "$output" == *"says its base is MFT record $few, but it holds the attributes"* ]] ||
		die "the record not given back to xdir: $output"
	judge root-other xdir
	# every write went through the undo layer
	cp --sparse=always damaged.img u.img
	run "$FSCK" -a -z undo u.img
	[ "$status" -eq 1 ] || die "-a -z exit $status: $output"
	run "$FSCK" --undo undo u.img
	[ "$status" -eq 0 ] || die "--undo exit $status: $output"
	cmp u.img damaged.img || die "--undo did not restore the damaged volume"
	# the other order: one of few's names records (few is checked
	# first, and gives it back) names xdir, which took it into its list
	# too (its link count 6, a second -n not clean)
	judge ext-xdir few
}

@test "extension record marked free while its base lists it: put back in use, nothing lost" {
	judge ext-free streams
	judge ext-free xdir
}

# the names the zeroed or BAAD record held go with it, but the index
# entries naming them hold full copies: each is given back (into a new
# extension record when the base has no room; the list names it, the
# link count counts it), so the manifest is the one before the damage,
# every name in place (they were dropped as stale entries before);
# few's (a resident list) go to the extension record with room and a
# new one
@test "extension record zeroed or BAAD: its names given back from their index entries, nothing lost" {
	local lost n c before
	lost=$(python3 "$LAB" names "$VOL" target)
	[ -n "$lost" ] || die "no names in the victim record"
	n=$(wc -l <<<"$lost")
	for c in ext-zero ext-baad; do
		cp --sparse=always "$VOL" d.img
		python3 "$LAB" damage d.img "$c" target || die "$c: damage failed"
		before=$(sha256sum < d.img)
		run "$FSCK" -n d.img
		[ "$status" -eq 4 ] || die "$c: -n exit $status: $output"
		[ "$(grep -c 'lost with one of its extension records: give it back' <<<"$output")" -eq "$n" ] ||
			die "$c: not $n names given back: $output"
		[ "$(sha256sum < d.img)" = "$before" ] || die "$c: -n wrote"
		judge "$c" target
	done
	# every write went through the undo layer
	cp --sparse=always damaged.img u.img
	run "$FSCK" -a -z undo u.img
	[ "$status" -eq 1 ] || die "-a -z exit $status: $output"
	run "$FSCK" --undo undo u.img
	[ "$status" -eq 0 ] || die "--undo exit $status: $output"
	cmp u.img damaged.img || die "--undo did not restore the damaged volume"
	judge ext-zero few
}

# its 15 names (base and extension records) name a free record as their
# directory, their index entries intact: each name takes back the parent
# its entry's key and directory agree on, where it lives (issue 11: the
# entries were dropped and the file went to /lost+found as #N); the
# manifest is the one before the damage, every name in place
@test "names in extension records naming a free record as their parent, entries intact: each takes its entry's parent back, nothing lost" {
	judge fn-parent few
	run "$FSCK" -n damaged.img
	[ "$status" -eq 4 ]
	[ "$(grep -c 'whose name of that spelling names record [0-9]* (not in use) as its parent: it takes this directory back' <<<"$output")" -eq 15 ] ||
		die "not 15 names given back: $output"
	[[ $output != *"in no directory"* ]] || die "an orphan: $output"
}

@test "orphan with an attribute list, names in several records: reconnected to /lost+found with its data" {
	cp --sparse=always "$VOL" d.img
	# every one of its 15 names (base and extension records) names a
	# free record as its directory, and their entries name another
	# generation of its record (sequence + 1): no index holds any of them
	python3 "$LAB" damage d.img fn-orphan few
	run "$FSCK" -a d.img
	[ "$status" -eq 1 ] || die "-a exit $status: $output"
	[[ "$output" == *"file is in no directory"*"RECONNECTED"* ]] || die "not reconnected: $output"
	run "$FSCK" -n d.img
	[ "$status" -eq 0 ] || die "-n after -a: exit $status: $output"
	before=$(sha256sum < d.img)
	"$FSCK" -a d.img > /dev/null
	[ "$(sha256sum < d.img)" = "$before" ] || die "second -a changed the image"
	if have_sid; then
		run sid_ntfsck d.img
		[ "$status" -eq 0 ] || die "ntfsck -n: exit $status: $(grep -v percent <<<"$output" | tail -5)"
	fi
	# its content, under its new name, is the target's
	manifest_of d.img > manifest.1
	run python3 - "$BATS_FILE_TMPDIR/manifest.0" manifest.1 <<-'EOF'
	import json, sys
	want = json.load(open(sys.argv[1]))["few"]
	got = json.load(open(sys.argv[2]))
	hits = [p for p, e in got.items() if p.startswith("lost+found/") and e == want]
	print(hits)
	sys.exit(0 if len(hits) == 1 else 1)
	EOF
	[ "$status" -eq 0 ] || die "target not in /lost+found: $output"
}

@test "attribute lists: \$MFT's \$BITMAP and \$FILE_NAME in an extension record (Linux 7.2 leaves a grown \$MFT so) check clean; a wrong bit there is repaired" {
	for cs in 512 4096; do
		truncate -s 64M "m$cs.img"
		"$MKFS_NTFS" -q -c "$cs" "m$cs.img"
		cp "m$cs.img" "d$cs.img"
		ext=$(python3 "$FSFORGE_TOP/tests/ntfs/mft_ext.py" "m$cs.img")
		echo "# cluster size $cs: extension record $ext"
		run "$FSCK" -n "m$cs.img"
		[ "$status" -eq 0 ] || die "cluster size $cs: -n exit $status: $output"
		[[ "$output" == *"problems: 0 found"* ]] || die "cluster size $cs: $output"
		if have_sid; then
			run sid_ntfsck "m$cs.img"
			[ "$status" -eq 0 ] || die "cluster size $cs: ntfsck -n exit $status: $(tail -5 <<<"$output")"
		fi
		# the bit of a free record set in the moved bitmap
		python3 "$FSFORGE_TOP/tests/ntfs/mft_ext.py" "d$cs.img" $((ext + 3))
		run "$FSCK" -n "d$cs.img"
		[ "$status" -eq 4 ] || die "cluster size $cs: damaged -n exit $status: $output"
		[[ "$output" == *'$MFT bitmap differs'*"0 in use but marked free, 1 free but marked in use"* ]] ||
			die "cluster size $cs: $output"
		run "$FSCK" -a "d$cs.img"
		[ "$status" -eq 1 ] || die "cluster size $cs: -a exit $status: $output"
		run "$FSCK" -n "d$cs.img"
		[ "$status" -eq 0 ] || die "cluster size $cs: -n after -a exit $status: $output"
		cmp "m$cs.img" "d$cs.img" || die "cluster size $cs: the repair differs from the undamaged volume"
		if have_sid; then
			run sid_ntfsck "d$cs.img"
			[ "$status" -eq 0 ] || die "cluster size $cs: ntfsck -n after -a exit $status: $(tail -5 <<<"$output")"
		fi
	done
}

# one of its names, in an extension record, names a file as its
# directory and no index holds it (its entry gone too): before, neither
# -n nor ntfsck -n said a word and the name was invisible; now it is
# reported and reconnected alone to /lost+found under its spelling, where
# it lives, every other name in place
@test "a name in an extension record naming a file as its parent, in no index: reconnected alone to /lost+found" {
	local moved rc
	cp --sparse=always "$VOL" d.img
	moved=$(python3 "$LAB" damage d.img fn-stray few) || die "damage failed"
	run "$FSCK" -n d.img
	[ "$status" -eq 4 ] || die "-n exit $status: $output"
	[[ $output == *"name \"${moved#links/}\" names MFT record "*", which is no directory, as its parent, and no index holds it"* ]] ||
		die "not reported: $output"
	run "$FSCK" -a d.img
	[ "$status" -eq 1 ] || die "-a exit $status: $output"
	run "$FSCK" -n d.img
	[ "$status" -eq 0 ] || die "-n after -a: exit $status: $output"
	before=$(sha256sum < d.img)
	rc=0; "$FSCK" -a d.img > /dev/null || rc=$?
	[ "$rc" -eq 0 ] || die "second -a exit $rc"
	[ "$(sha256sum < d.img)" = "$before" ] || die "second -a changed the image"
	if have_sid; then
		run sid_ntfsck d.img
		[ "$status" -eq 0 ] || die "ntfsck -n: exit $status: $(grep -v percent <<<"$output" | tail -5)"
	fi
	manifest_of d.img > manifest.1 || die "ntfs-3g cannot mount the repaired volume"
	run python3 - "$BATS_FILE_TMPDIR/manifest.0" manifest.1 "$moved" <<-'EOF'
	import json, sys
	want = json.load(open(sys.argv[1]))
	got = json.load(open(sys.argv[2]))
	moved = sys.argv[3]
	want["lost+found/" + moved.split("/")[-1]] = want.pop(moved)
	got.pop("lost+found", None)
	bad = sorted(p for p in set(want) | set(got) if want.get(p) != got.get(p))
	print("differs:", bad[:10], len(bad))
	sys.exit(1 if bad else 0)
	EOF
	[ "$status" -eq 0 ] || die "$output"
}

# A file of 300 hard links made by ntfs-3g (301 names: its list
# non-resident, the names in some 30 extension records), one link's index
# entry removed and its link count made 45 (301 cut to 8 bits).  Before,
# a file of more than 254 names was "too many to count": the lost entry
# was never reported (-n exit 0; ntfsck -n finds neither).  Now both are
# found (-n exit 4, no write), -a fixes them (exit 1), a second -n is
# clean, ntfsck -n clean, and ntfs-3g lists all 301 names, the file's
# count 301 and its content through the lost name.
@test "a file of 300 hard links (non-resident list), one entry lost and its link count wrong: found and repaired" {
	local m rec dir sum
	truncate -s 32M v.img
	"$MKFS_NTFS" -q -F v.img > /dev/null
	m=$(mount_ntfs3g v.img) || die "mount"
	mkdir "$m/d"
	echo data > "$m/d/x"
	python3 -c 'import os, sys
for i in range(300): os.link(sys.argv[1] + "/d/x", sys.argv[1] + "/d/link%03d" % i)' "$m"
	rec=$(stat -c %i "$m/d/x") dir=$(stat -c %i "$m/d")
	umount "$m"
	python3 "$FSFORGE_TOP/tests/ntfs/ntfs_patch.py" v.img rmentry "$dir" link150 ||
		die "rmentry"
	python3 - v.img "$rec" <<'PY'
import os, struct, sys
sys.path.insert(0, os.environ["FSFORGE_TOP"] + "/tests/ntfs")
from ntfs_patch import Volume, attrs
v, n = Volume(sys.argv[1]), int(sys.argv[2])
r = bytearray(v.read(n))
assert any(t == 0x20 and r[o + 8] for o, t, _ in attrs(r)), "a resident list"
assert struct.unpack_from("<H", r, 0x12)[0] == 301
struct.pack_into("<H", r, 0x12, 45)
v.write(n, r)
PY
	sum=$(sha256sum < v.img)
	run "$FSCK" -n v.img
	echo "$output"
	[ "$status" -eq 4 ] || die "-n exit $status"
	[ "$(sha256sum < v.img)" = "$sum" ] || die "-n wrote"
	[[ $output == *"\"link150\" (MFT record $rec) has no entry in its directory's index"* ]] ||
		die "the lost entry not found"
	[[ $output == *"MFT record $rec: link count is 45, the record has 301 names"* ]] ||
		die "the link count not judged"
	run "$FSCK" -a v.img
	echo "$output"
	[ "$status" -eq 1 ] || die "-a exit $status"
	repair_converged "$FSCK" v.img -a
	m=$(mount_ntfs3g v.img) || die "mount after"
	[ "$(ls "$m/d" | wc -l)" -eq 301 ] || { umount "$m"; die "not 301 names"; }
	[ "$(stat -c %h "$m/d/x")" -eq 301 ] || { umount "$m"; die "link count $(stat -c %h "$m/d/x")"; }
	[ "$(cat "$m/d/link150")" = data ] || { umount "$m"; die "link150 unread"; }
	umount "$m"
}
