#!/usr/bin/env bats
# mkfs.erofs --chunksize: chunk-based files with holes and deduplicated
# chunks.  The expectations come from the source tree (tests/lib/manifest,
# tests/erofs/sparse_map.py over SEEK_DATA and 64 KiB piece digests) and
# from erofs-utils 1.9.4's fsck.erofs and dump.erofs (sid tree).
load ../lib/common
load erofs_helpers

FSCK_EROFS=$FSFORGE_BUILDDIR/fsck/fsck.erofs
SPARSE_MAP=$FSFORGE_TOP/tests/erofs/sparse_map.py

# FILE SIZE OFFSET:LEN...: a sparse file with random data at each island
islands() {
	local f=$1 size=$2 i
	shift 2
	truncate -s "$size" "$f"
	for i in "$@"; do
		head -c "${i#*:}" /dev/urandom |
			dd of="$f" bs=65536 seek="$((${i%%:*} / 65536))" conv=notrunc status=none
	done
}

setup_file() {
	export SRC=$BATS_FILE_TMPDIR/src BIG=$BATS_FILE_TMPDIR/big
	"$LIB/mktree" "$SRC"
	mkdir -p "$SRC/c" "$BIG"
	head -c 65536 /dev/urandom > "$BATS_FILE_TMPDIR/block"
	for _ in 1 2 3 4 5 6 7 8; do cat "$BATS_FILE_TMPDIR/block"; done > "$SRC/c/dup"
	ln "$SRC/c/dup" "$SRC/c/dup.link"
	head -c 262144 /dev/zero > "$SRC/c/zeros"
	head -c 100001 /dev/urandom > "$SRC/c/odd"
	printf 'hello' > "$SRC/c/small"
	: > "$SRC/c/empty"
	islands "$SRC/c/sparse" $((16 << 20)) 0:65536 $((10 << 20)):131072 $(((16 << 20) - 65536)):65536
	# chunks larger than mkfs.erofs' 1 MiB read buffer, one a copy
	head -c 2700000 /dev/urandom > "$SRC/c/big1"
	cp "$SRC/c/big1" "$SRC/c/big2"
	islands "$BIG/island" $((1 << 30)) 0:131072 $((300 << 20)):65536 $(((1 << 30) - 196608)):196608
	"$LIB/manifest" "$SRC" > "$BATS_FILE_TMPDIR/src.manifest"
	(cd "$SRC" && find . -type f -exec sha256sum {} + | sort -k2) > "$BATS_FILE_TMPDIR/src.sha256"
	python3 "$SPARSE_MAP" --segments "$BIG/island" > "$BATS_FILE_TMPDIR/big.map"
}

setup() { cd_tmp; }
teardown() {
	if [ -n "${SIDTMP:-}" ]; then rm -rf "$SIDTMP"; fi
}

@test "mkfs.erofs --chunksize: both fsck.erofs --extract give the source's manifest, fingerprints verified by both" {
	need_sid_erofs
	for opts in "-b1024 --chunksize=1024" "--chunksize=2097152 -Eforce-inode-extended" \
		    "-zlz4hc --chunksize=16384"; do
		rm -rf x "$SIDTMP/x"
		# shellcheck disable=SC2086
		run "$MKFS_EROFS" --quiet $opts --xattr-inode-digest=trusted.erofs.fingerprint \
			"$SIDTMP/o.img" "$SRC"
		[ "$status" -eq 0 ] || die "mkfs.erofs $opts: $output"
		run "$FSCK_EROFS" --extract=x --xattrs --xattr-inode-digest "$SIDTMP/o.img"
		[ "$status" -eq 0 ] || die "ours, $opts: $output"
		"$LIB/manifest" x --drop-xattr trusted.erofs.fingerprint |
			diff "$BATS_FILE_TMPDIR/src.manifest" - || die "our extraction, $opts"
		run chroot "$SID_ROOT" fsck.erofs --extract="$SIDREL/x" --xattr-inode-digest "$SIDREL/o.img"
		[ "$status" -eq 0 ] || die "erofs-utils fsck.erofs, $opts: $output"
		[[ $output != *"<E>"* ]] || die "erofs-utils fsck.erofs reports, $opts: $output"
		# contents (erofs-utils restores its own way the rest)
		(cd "$SIDTMP/x" && find . -type f -exec sha256sum {} + | sort -k2) > theirs
		diff "$BATS_FILE_TMPDIR/src.sha256" theirs || die "erofs-utils' extraction, $opts"
	done
	# the layout erofs-utils' dump.erofs sees: chunk-based, dup's chunks
	# all at one address, the zero chunks and the sparse file's holes
	# at none
	"$MKFS_EROFS" --quiet --chunksize=65536 "$SIDTMP/o.img" "$SRC"
	run chroot "$SID_ROOT" dump.erofs -e --path=/c/dup "$SIDREL/o.img"
	[[ $output == *"Layout: 4"* ]] || die "$output"
	[ "$(grep -cE '^ +[0-9]+: ' <<< "$output")" -eq 8 ] || die "$output"
	[ "$(grep -E '^ +[0-9]+: ' <<< "$output" | awk '{print $6}' | sort -u | wc -l)" -eq 1 ] || die "$output"
	run chroot "$SID_ROOT" dump.erofs -e --path=/c/zeros "$SIDREL/o.img"
	[[ $output == *"17592186040320.."* ]] || die "zero chunks stored: $output"
}

@test "fsck.erofs: erofs-utils 1.9.4's chunk-based images (block map, 8-byte chunk indexes, merged chunks, -z with chunks) are read, contents equal the source's" {
	need_sid_erofs
	cp -a "$SRC" "$SIDTMP/src"
	for opts in "--chunksize=4096" "-Eforce-chunk-indexes --chunksize=65536" \
		    "-zlz4hc --chunksize=16384"; do
		rm -rf x
		# shellcheck disable=SC2086
		run chroot "$SID_ROOT" mkfs.erofs --quiet $opts \
			--xattr-inode-digest=trusted.erofs.fingerprint "$SIDREL/s.img" "$SIDREL/src"
		[ "$status" -eq 0 ] || die "erofs-utils mkfs.erofs $opts: $output"
		run "$FSCK_EROFS" --extract=x --xattr-inode-digest "$SIDTMP/s.img"
		[ "$status" -eq 0 ] || die "ours, $opts: $output"
		(cd x && find . -type f -exec sha256sum {} + | sort -k2) |
			diff "$BATS_FILE_TMPDIR/src.sha256" - || die "contents, $opts"
		# the sparse file's holes stay holes (with -z it is compressed)
		if [[ $opts != -z* ]]; then
			[ "$(du -k x/c/sparse | cut -f1)" -lt 2048 ] || die "$(du -k x/c/sparse), $opts"
		fi
	done
}

@test "mkfs.erofs --chunksize: a 1 GiB file with 3 data islands gives an image under 1 MiB, extracted sparse and equal" {
	need_sid_erofs
	run "$MKFS_EROFS" --chunksize=65536 --xattr-inode-digest "$SIDTMP/b.img" "$BIG"
	[ "$status" -eq 0 ] || die "$output"
	size=$(stat -c %s "$SIDTMP/b.img")
	echo "# image: $size bytes for 384 KiB of data" >&3
	[ "$size" -lt 1048576 ] || die "image of $size bytes"
	run chroot "$SID_ROOT" fsck.erofs "$SIDREL/b.img"
	[ "$status" -eq 0 ] || die "erofs-utils fsck.erofs: $output"
	run "$FSCK_EROFS" --xattr-inode-digest --extract=x "$SIDTMP/b.img"
	[ "$status" -eq 0 ] || die "$output"
	python3 "$SPARSE_MAP" --segments x/island | diff "$BATS_FILE_TMPDIR/big.map" -
	# the extracted file is sparse too
	[ "$(du -k x/island | cut -f1)" -lt 1024 ] || die "$(du -k x/island)"
}

@test "mkfs.erofs --chunksize: identical chunks are stored once (16 copies of a 1 MiB file, 4 of a 3 MB one with 2 MiB chunks, cost what one costs)" {
	mkdir -p one many
	head -c 1048576 /dev/urandom > one/f
	for i in $(seq 1 16); do cp one/f "many/f$i"; done
	"$MKFS_EROFS" --quiet --chunksize=65536 -T0 -Uclear one.img one
	"$MKFS_EROFS" --quiet --chunksize=65536 -T0 -Uclear many.img many
	"$MKFS_EROFS" --quiet -T0 -Uclear flat.img many
	one=$(stat -c %s one.img) many=$(stat -c %s many.img) flat=$(stat -c %s flat.img)
	echo "# one copy $one, 16 copies $many bytes chunked, $flat flat" >&3
	# 15 more inodes and their block maps fit in a few blocks
	[ "$many" -le $((one + 4 * 4096)) ] || die "16 copies: $many bytes, one: $one"
	[ "$flat" -ge $((16 * 1048576)) ] || die "flat: $flat"
	run "$FSCK_EROFS" --extract=x many.img
	[ "$status" -eq 0 ] || die "$output"
	for i in $(seq 1 16); do cmp one/f "x/f$i"; done
	# chunks larger than the 1 MiB read buffer (compared in the image)
	mkdir -p big
	head -c 3000000 /dev/urandom > big/f1
	for i in 2 3 4; do cp big/f1 "big/f$i"; done
	"$MKFS_EROFS" --quiet --chunksize=2097152 -T0 -Uclear big.img big
	size=$(stat -c %s big.img)
	[ "$size" -le $((3000000 + 8 * 4096)) ] || die "4 copies of 3 MB: $size bytes"
	run "$FSCK_EROFS" --extract=xb big.img
	[ "$status" -eq 0 ] || die "$output"
	for i in 2 3 4; do cmp big/f1 "xb/f$i"; done
}

@test "mkfs.erofs --chunksize: the same tree, -T and -U give a byte-identical image for any --workers" {
	"$MKFS_EROFS" --quiet --chunksize=4096 -zlz4 --workers=1 -T 7 -U clear a.img "$SRC"
	"$MKFS_EROFS" --quiet --chunksize=4096 -zlz4 --workers=2 -T 7 -U clear b.img "$SRC"
	cmp a.img b.img
}

@test "mkfs.erofs --chunksize: sizes that are not a power of two or below the block size are usage errors" {
	for bad in 1000 2048 0x3000 abc; do
		run "$MKFS_EROFS" --quiet -b4096 --chunksize="$bad" o.img "$SRC/c"
		[ "$status" -eq 16 ] || die "--chunksize=$bad: $status $output"
	done
	run "$MKFS_EROFS" --quiet -b1024 --chunksize=1024 o.img "$SRC/c"
	[ "$status" -eq 0 ] || die "$output"
	run "$MKFS_EROFS" --help
	[[ $output == *--chunksize=N* ]]
}

@test "fsck.erofs: a chunk address beyond the image end is reported (erofs-utils' dump.erofs shows where it points)" {
	need_sid_erofs
	"$MKFS_EROFS" --quiet --chunksize=4096 -T0 -x-1 "$SIDTMP/o.img" "$SRC/c"
	run chroot "$SID_ROOT" dump.erofs --path=/odd "$SIDREL/o.img"
	nid=$(sed -n 's/^NID: \([0-9]*\).*/\1/p' <<< "$output")
	[ -n "$nid" ] || die "$output"
	# compact inode (-T0), no xattrs (-x-1): the block map follows at +32;
	# chunk 1 to block 0x00ffffff (the superblock's checksum, which covers
	# the inodes of its block, is left aside)
	printf '\xff\xff\xff\x00' | dd of="$SIDTMP/o.img" bs=1 seek=$((nid * 32 + 36)) conv=notrunc status=none
	run chroot "$SID_ROOT" dump.erofs -e --path=/odd "$SIDREL/o.img"
	[[ $output == *" 4096..    8192 |    4096 : $((16777215 * 4096)).."* ]] || die "$output"
	# (erofs-utils 1.9.4's fsck.erofs passes this image, reading zeros)
	run "$FSCK_EROFS" --no-sbcrc "$SIDTMP/o.img"
	[ "$status" -eq 1 ] || die "$output"
	[[ $output == *"inode $nid: chunk 1 at block 16777215"*"beyond the image end"* ]] || die "$output"
}
