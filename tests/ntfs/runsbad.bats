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
}

setup() { cd_tmp; }
teardown() { mountpoint -q mnt 2>/dev/null && umount mnt; return 0; }

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
	damaged=$(sha256sum < image)
	run "$FSCK" -n image
	[ "$status" -eq 4 ] || { echo "$output"; die "-n on the damage: exit $status"; }
	[ "$(sha256sum < image)" = "$damaged" ] || die "-n wrote"
	run "$FSCK" -a -z undo image
	echo "$output"
	[ "$status" -eq 1 ] || die "-a exit $status"
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
	run "$FSCK" --undo undo image
	[ "$status" -eq 0 ] || die "--undo exit $status: $output"
	[ "$(sha256sum < image)" = "$damaged" ] || die "--undo did not restore the damaged image"
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
