#!/usr/bin/env bats
# fsck.ntfs on populated volumes (mkfs.ntfs, then ntfs-3g writes the
# files): cross-linked clusters resolved by copies (pass 1B), bitmaps
# rebuilt as ntfsck wants them, and no false positive on clean volumes of
# every cluster size with big directories.  Oracles that are not ours:
# ntfsprogs-plus ntfsck -n (sid tree), ntfs-3g reading every file against
# the sha256 manifest taken before the damage.
load ../lib/common

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
source "$FSFORGE_TOP/tests/ntfs/ntfs_helpers.bash"
DAMAGE=$FSFORGE_TOP/tests/ntfs/crosslink_damage.py

setup() {
	cd_tmp
	need_ntfs3g
	chroot "$SID_ROOT" sh -c 'command -v ntfsck' > /dev/null 2>&1 ||
		skip "no sid tree with ntfsck (tests/kernel/setup --sid)"
}
teardown() { mountpoint -q mnt 2>/dev/null && umount mnt; return 0; }

# sha256 of every file under mnt, by path
manifest() { (cd mnt && find . -type f -print0 | sort -z | xargs -0r sha256sum); }

# A volume of cluster size $1: /A, /B, /C (random data; A first, so that
# it has the lowest record), /d with 60 files of 1..60 KB, a sparse file.
populate() {
	truncate -s 48M image
	"$MKFS_NTFS" -q -F -c "$1" image
	mkdir -p mnt
	ntfs-3g image mnt
	head -c 65536 /dev/urandom > mnt/A
	head -c 200000 /dev/urandom > mnt/B
	head -c 100000 /dev/urandom > mnt/C
	mkdir mnt/d
	for i in $(seq 1 60); do head -c $((i * 1000)) /dev/urandom > "mnt/d/f$i"; done
	truncate -s 5M mnt/sparse
	printf 'middle' | dd of=mnt/sparse bs=1 seek=3000000 conv=notrunc status=none
	cp mnt/A mnt/B mnt/C .
	manifest > manifest.0
	umount mnt
}

# After -a: -n finds nothing, another -a changes no byte, ntfsck agrees.
converged() {
	run "$FSCK" -n image
	[ "$status" -eq 0 ] || die "-n after -a: exit $status: $output"
	before=$(sha256sum < image)
	"$FSCK" -a image > /dev/null || die "second -a: exit $?"
	[ "$(sha256sum < image)" = "$before" ] || die "second -a changed the image"
	run sid_ntfsck image
	[ "$status" -eq 0 ] || die "ntfsck -n: exit $status: $(grep -v percent <<<"$output" | tail -5)"
}

@test "cross-links: B and C redirected onto A's clusters; A keeps its data, B and C get copies" {
	for cs in 4096 1024; do
		populate "$cs"
		# B's and C's first clusters now are A's: A (lowest record)
		# keeps them; B and C must end up with a copy of what is in
		# them now (A's bytes) and their own data after that
		read -r lcn k csz < <(python3 "$DAMAGE" share image A B)
		python3 "$DAMAGE" share image A C > /dev/null
		[ "$csz" -eq "$cs" ]
		shared=$((k * cs))
		run "$FSCK" -n image
		[ "$status" -eq 4 ] || die "cs $cs: -n before: exit $status"
		[[ $output == *"(/B): attribute 0x80 shares $k clusters ($lcn-"* ]] || die "cs $cs: B not named: $output"
		[[ $output == *"(/C): attribute 0x80 shares $k clusters"*"(/A)"* ]] || die "cs $cs: C not named: $output"
		run "$FSCK" -a image
		[ "$status" -eq 1 ] || die "cs $cs: -a: exit $status: $output"
		converged || return 1
		ntfs-3g -o ro image mnt
		manifest > manifest.1
		cmp mnt/A A || die "cs $cs: A changed"
		{ head -c "$shared" A; tail -c +$((shared + 1)) B; } > B.want
		{ head -c "$shared" A; tail -c +$((shared + 1)) C; } > C.want
		cmp mnt/B B.want || die "cs $cs: B is not A's shared clusters + its own tail"
		cmp mnt/C C.want || die "cs $cs: C is not A's shared clusters + its own tail"
		umount mnt
		# every other file as before the damage
		diff <(grep -v -e ' ./B$' -e ' ./C$' manifest.0) \
		     <(grep -v -e ' ./B$' -e ' ./C$' manifest.1) || die "cs $cs: files differ"
	done
}

# A small volume: /A, /B, /C, then /d/f1..f8 of 5..40 KB, each where
# ntfs-3g's allocator puts it (some right after another file's last
# cluster, some before free space)
small_files() {
	truncate -s 48M image
	"$MKFS_NTFS" -q -F -c 4096 image
	mkdir -p mnt
	ntfs-3g image mnt
	head -c 65536 /dev/urandom > mnt/A
	head -c 200000 /dev/urandom > mnt/B
	head -c 100000 /dev/urandom > mnt/C
	mkdir mnt/d
	for i in $(seq 1 8); do head -c $((i * 5000)) /dev/urandom > "mnt/d/f$i"; done
	manifest > manifest.0
	umount mnt
}

# the first of files $2... whose last run, one cluster longer, would
# end on a file's first cluster ($1 = file) or on free space ($1 = free)
overhang_target() {
	local want=$1 f o
	shift
	for f in "$@"; do
		cp image probe
		o=$(python3 "$DAMAGE" owner probe "$(python3 "$DAMAGE" overhang probe "$f")")
		rm -f probe
		if [ "$want" = free ] && [ "$o" = free ]; then echo "$f"; return; fi
		if [ "$want" = file ] && [ "$o" != free ] && [ "$o" != "?" ]; then echo "$f"; return; fi
	done
	return 1
}

@test "a last run one cluster too long, onto the next file or free space, is cut back: nothing copied, every file kept" {
	# file:header = its highest VCN and allocated size grown with it
	# (pass 1B's cut: the shared cluster is past the file's data size)
	for want in file free file:header; do
		small_files
		f=$(overhang_target "${want%:*}" A B C f1 f2 f3 f4 f5 f6 f7 f8) ||
			die "no file is followed by ${want%:*} (the allocator changed)"
		hdr=()
		[ "$want" = file:header ] && hdr=(header)
		lcn=$(python3 "$DAMAGE" overhang image "$f" "${hdr[@]}")
		owner=$(python3 "$DAMAGE" owner image "$lcn")
		case="$want: $f onto $lcn ($owner)"
		before=$(sha256sum < image)
		run "$FSCK" -n image
		[ "$status" -eq 4 ] || die "$case: -n before: exit $status: $output"
		if [ "$want" = file:header ]; then
			[[ $output == *"shares its last 1 clusters ($lcn-$lcn), past its"*"its last run is cut back"* ]] || die "$case: $output"
			[[ $output != *"gets a copy"* ]] || die "$case: a copy under -n: $output"
		else
			[[ $output == *"its last run is cut back by 1 cluster(s)"* ]] || die "$case: $output"
			[[ $output != *shares* ]] || die "$case: a cross-link under -n: $output"
		fi
		[ "$(sha256sum < image)" = "$before" ] || die "$case: -n wrote"
		run "$FSCK" -a image
		[ "$status" -eq 1 ] || die "$case: -a: exit $status: $output"
		[[ $output != *"gets a copy"* ]] || die "$case: a copy was made: $output"
		converged || return 1
		# the other file still starts on that cluster, nothing moved
		[ "$(python3 "$DAMAGE" owner image "$lcn")" = "$owner" ] || die "$case: $lcn changed hands"
		ntfs-3g -o ro image mnt
		manifest > manifest.1
		umount mnt
		diff manifest.0 manifest.1 || die "$case: files differ"
	done
}

@test "a first run one cluster too long (the file has several) is not taken for a last run too long: the file's last cluster stays its own" {
	# the length off by one is the first run's: every later VCN is
	# shifted, the excess shows at the end, and cutting the last run
	# would free the cluster holding the file's real last bytes
	small_files
	last=$(python3 "$DAMAGE" overhang_first image B)
	run "$FSCK" -n image
	[ "$status" -eq 4 ] || die "-n before: exit $status: $output"
	[[ $output != *"its last run is cut back"* ]] || die "the last run cut: $output"
	run "$FSCK" -a image
	[ "$status" -eq 1 ] || die "-a: exit $status: $output"
	[ "$(python3 "$DAMAGE" owner image "$last")" != free ] || die "B's last cluster $last freed"
	converged
}

@test "cross-links: -n reports, writes nothing; clean populated volumes have none" {
	populate 4096
	run "$FSCK" -n image
	[ "$status" -eq 0 ] || die "clean populated volume: $output"
	python3 "$DAMAGE" share image A B > /dev/null
	before=$(sha256sum < image)
	run "$FSCK" -n image
	[ "$status" -eq 4 ]
	[ "$(sha256sum < image)" = "$before" ] || die "-n wrote"
}

@test "no false cross-link: an extension record of a record not in use claiming a file's clusters" {
	populate 4096
	# a copy of /A's record as an in-use extension record of a free
	# record: its runs are A's, but it owns nothing
	slot=$(python3 "$DAMAGE" ghost image A)
	run "$FSCK" -n image
	[ "$status" -eq 4 ]
	[[ $output == *"MFT record $slot: extension record of MFT record"*"not in use"* ]] || die "$output"
	[[ $output != *shares* ]] || die "false cross-link: $output"
	run "$FSCK" -a image
	[ "$status" -eq 1 ] || die "-a: exit $status: $output"
	[[ $output != *shares* ]] || die "false cross-link: $output"
	converged || return 1
	ntfs-3g -o ro image mnt
	manifest > manifest.1
	umount mnt
	diff manifest.0 manifest.1
}

@test "cross-links: a runlist that would not fit its record is reported and left (exit 4); the rest is repaired" {
	truncate -s 24M image
	"$MKFS_NTFS" -q -F -c 1024 image
	mkdir -p mnt
	ntfs-3g image mnt
	head -c 65536 /dev/urandom > mnt/A
	head -c 65536 /dev/urandom > mnt/B
	# a record nearly full of names: two long hard links
	long=$(printf 'L%.0s' $(seq 1 250))
	head -c 65536 /dev/urandom > "mnt/$long"
	ln "mnt/$long" "mnt/${long:0:150}"
	# free space only in single clusters: copies need many runs
	mkdir mnt/fill
	avail=$(df -B1 --output=avail mnt | tail -1)
	head -c $((avail - 1024 * 1024)) /dev/zero > mnt/filler
	head -c 500000 /dev/zero | split -b 1000 - mnt/fill/ 2> /dev/null || true
	rm -f mnt/fill/*[acegikmoqsuwy]
	cp mnt/A A
	umount mnt
	python3 "$DAMAGE" share image A B > /dev/null
	python3 "$DAMAGE" share image A "$long" > /dev/null
	run "$FSCK" -a image
	# B is repaired (1), the long-named file is left (4)
	[ "$status" -eq 5 ] || die "-a: exit $status: $output"
	[[ $output == *"(/B): attribute 0x80 shares 64 clusters"*RELOCATED* ]] || die "B: $output"
	[[ $output == *"(/$long): shared clusters cannot be copied: its new runlist would not fit"* ]] ||
		die "long: $output"
	[[ $output != *"(/$long): attribute 0x80"* ]] || die "long was asked: $output"
	run "$FSCK" -n image
	[ "$status" -eq 4 ] || die "-n after: exit $status"
	[[ $output == *"problems: 1 found"* ]] || die "-n after: $output"
	ntfs-3g -o ro image mnt
	cmp mnt/A A || die "A changed"
	cmp mnt/B A || die "B is not a copy of A's clusters"
	umount mnt
}

@test "cross-links on a volume whose \$MFT has an attribute list: only the copy changes" {
	truncate -s 40M image
	"$MKFS_NTFS" -q -F -c 2048 image
	mkdir -p mnt
	ntfs-3g image mnt
	head -c 65536 /dev/urandom > mnt/A
	head -c 65536 /dev/urandom > mnt/B
	# a nearly full volume: $MFT grows in pieces and record 0 gets an
	# attribute list (its $FILE_NAME moves to an extension record)
	mkdir mnt/fill mnt/big
	avail=$(df -B1 --output=avail mnt | tail -1)
	head -c $((avail - 2 * 1024 * 1024)) /dev/zero > mnt/filler
	head -c 400000 /dev/zero | split -b 1000 - mnt/fill/ 2> /dev/null || true
	rm -f mnt/fill/*[acegikmoqsuwy]
	(cd mnt/big && touch $(seq -f 'entry with a long name number %g' 1 1200 | tr ' ' _)) 2> /dev/null || true
	cp mnt/A A
	manifest | grep -v ' ./B$' > manifest.0
	umount mnt
	python3 -c '
import struct, sys
sys.path.insert(0, sys.argv[1])
from crosslink_damage import Vol
v = Vol(sys.argv[2])
r = v.read_record(0)
off, = struct.unpack_from("<H", r, 0x14)
while struct.unpack_from("<I", r, off)[0] not in (0x20, 0xFFFFFFFF):
    off += struct.unpack_from("<I", r, off + 4)[0]
sys.exit(struct.unpack_from("<I", r, off)[0] != 0x20)' "$FSFORGE_TOP/tests/ntfs" image ||
		die "record 0 has no attribute list: the volume does not test what it should"
	run "$FSCK" -n image
	[ "$status" -eq 0 ] || die "clean: $output"
	python3 "$DAMAGE" share image A B > /dev/null
	run "$FSCK" -a image
	[ "$status" -eq 1 ] || die "-a: exit $status: $output"
	converged || return 1
	ntfs-3g -o ro image mnt
	cmp mnt/B A || die "B is not a copy of A's clusters"
	manifest | grep -v ' ./B$' > manifest.1
	umount mnt
	diff manifest.0 manifest.1
}

@test "\$Bitmap with 300 bits flipped and its tail cleared: rebuilt as ntfsck wants, files intact" {
	populate 4096
	python3 "$DAMAGE" flip image bitmap 300 7
	python3 "$DAMAGE" setbits image bitmap end len 0 > /dev/null
	run "$FSCK" -a image
	[ "$status" -eq 1 ] || die "-a: exit $status: $output"
	[[ $output == *"\$Bitmap differs"* ]]
	converged || return 1
	ntfs-3g -o ro image mnt
	manifest > manifest.1
	umount mnt
	diff manifest.0 manifest.1
}

@test "\$MFT bitmap with bits flipped, records 12-23 inverted, tail set: rebuilt as ntfsck wants" {
	populate 4096
	python3 "$DAMAGE" flip image mftbitmap 30 11
	python3 "$DAMAGE" setbits image mftbitmap 12 16 0 > /dev/null
	python3 "$DAMAGE" setbits image mftbitmap 16 24 1 > /dev/null
	python3 "$DAMAGE" setbits image mftbitmap end len 1 > /dev/null
	run sid_ntfsck image
	[ "$status" -ne 0 ] || die "ntfsck accepted the damaged bitmap"
	run "$FSCK" -a image
	[ "$status" -eq 1 ] || die "-a: exit $status: $output"
	[[ $output == *"\$MFT bitmap differs"* ]]
	converged || return 1
	ntfs-3g -o ro image mnt
	manifest > manifest.1
	umount mnt
	diff manifest.0 manifest.1
}

# A 1,200-entry directory written on fragmented free space (so that an
# index block of 4 KiB may straddle two runs when clusters are smaller).
big_dir_volume() {
	local mkfs=$1 cs=$2 avail
	truncate -s 24M image
	if [ "$mkfs" = sid ]; then
		t=$(mktemp -d "$SID_ROOT/tmp/fsforge-mk.XXXXXX")
		truncate -s 24M "$t/v.img"
		chroot "$SID_ROOT" /opt/ntfsprogs-plus/usr/sbin/mkntfs -q -F -f -c "$cs" "/tmp/${t##*/}/v.img" > /dev/null
		mv "$t/v.img" image
		rmdir "$t"
	else
		"$MKFS_NTFS" -q -F -c "$cs" image
	fi
	mkdir -p mnt
	ntfs-3g image mnt
	mkdir mnt/fill mnt/big
	# free space left in pieces: a 3 MiB hole, half of it in single
	# clusters between small files (only where clusters are small)
	avail=$(df -B1 --output=avail mnt | tail -1)
	head -c $((avail - 3 * 1024 * 1024)) /dev/zero > mnt/filler
	if [ "$cs" -le 4096 ]; then
		head -c 300000 /dev/zero | split -b 1000 - mnt/fill/
		rm -f mnt/fill/*[acegikmoqsuwy]
	fi
	(cd mnt/big && touch $(seq -f 'entry with a long name number %g' 1 1200 | tr ' ' _))
	n=$(ls mnt/big | wc -l)
	umount mnt
	[ "$n" -eq 1200 ] || { die "$mkfs $cs: only $n entries written"; return 1; }
}

@test "clean volumes of every cluster size with a 1,200-entry directory: -n exits 0, ntfsck agrees" {
	for v in ours:512 ours:1024 ours:2048 ours:4096 ours:8192 ours:16384 \
		 ours:32768 ours:65536 sid:1024 sid:65536; do
		big_dir_volume "${v%%:*}" "${v#*:}" || return 1
		run "$FSCK" -n image
		[ "$status" -eq 0 ] || die "$v: fsck.ntfs -n: exit $status: $output"
		run sid_ntfsck image
		[ "$status" -eq 0 ] || die "$v: ntfsck -n: exit $status"
	done
}
