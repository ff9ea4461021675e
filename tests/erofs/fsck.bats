#!/usr/bin/env bats
# fsck.erofs against erofs-utils 1.9.4's (sid tree): on clean images built
# by our mkfs.erofs and by erofs-utils' both pass; --extract restores the
# tree (independent manifest of the source); single-byte damage that
# erofs-utils' fsck catches, ours catches too (offsets from dump.erofs,
# tests/erofs/fsck_regions.py), and ours never crashes.
load ../lib/common
load erofs_helpers

# (FSCK_EROFS from the environment: e.g. a wrapper adding --workers=N)
FSCK_EROFS=${FSCK_EROFS:-$FSFORGE_BUILDDIR/fsck/fsck.erofs}

setup_file() {
	export SRC=$BATS_FILE_TMPDIR/src
	"$LIB/mktree" "$SRC"
	mkdir -p "$SRC/z"
	seq 1 60000 > "$SRC/z/numbers"
	head -c 200000 /dev/urandom > "$SRC/z/random"
	{ head -c 30000 /dev/urandom; seq 1 20000; head -c 9000 /dev/zero; } > "$SRC/z/mixed"
	cp "$FSFORGE_TOP"/liberofs/*.c "$SRC/z/"
	ln "$SRC/z/numbers" "$SRC/z/numbers.link"
	"$LIB/manifest" "$SRC" > "$BATS_FILE_TMPDIR/src.manifest"
}

setup() { cd_tmp; }
teardown() {
	if [ -n "${SIDTMP:-}" ]; then rm -rf "$SIDTMP"; fi
}

# both checkers on IMG (inside SIDTMP), digests verified; both must pass
both_pass() {
	local img=$1
	run chroot "$SID_ROOT" fsck.erofs --extract --xattr-inode-digest "$SIDREL/$img"
	[ "$status" -eq 0 ] || die "erofs-utils fsck.erofs fails $img: $output"
	[[ $output != *"<E>"* ]] || die "erofs-utils fsck.erofs reports on $img: $output"
	run "$FSCK_EROFS" --xattr-inode-digest "$SIDTMP/$img"
	[ "$status" -eq 0 ] || die "our fsck.erofs fails $img: $output"
}

@test "fsck.erofs: images of our mkfs.erofs (plain, every -z, -C, full and compact indexes, xattrs, digests) pass both checkers" {
	need_sid_erofs
	for opts in "" "-b1024" "-b512 -Eforce-inode-extended" "-zlz4" "-zlz4hc" \
		    "-zlz4hc -C65536" "-zlz4 -Elegacy-compress" "-zlz4 -b1024" \
		    "-zlzma" "-zlzma -C65536" "-zdeflate" "-zdeflate -C16384 -Elegacy-compress" \
		    "-zzstd" "-zzstd -C32768" "-x-1"; do
		# shellcheck disable=SC2086
		run "$MKFS_EROFS" --quiet $opts --xattr-inode-digest=trusted.erofs.fingerprint \
			"$SIDTMP/o.img" "$SRC"
		[ "$status" -eq 0 ] || die "mkfs.erofs $opts: $output"
		both_pass o.img || die "options $opts"
	done
}

# A full index longer than fsck.erofs' metadata cache (a 3 MB file in
# 512-byte lclusters: 48 KiB of index) with its tail in the packed inode:
# the tail's offset is the map header's, read before the whole index.
@test "fsck.erofs: a long full index with a fragment tail (-b512 -Efragments,dedupe) passes both checkers and extracts equal" {
	need_sid_erofs
	mkdir -p "$SIDTMP/long"
	seq 1 450000 > "$SIDTMP/long/big"
	run "$MKFS_EROFS" --quiet -b512 -zlz4hc -Efragments,dedupe \
		--xattr-inode-digest=trusted.erofs.fingerprint "$SIDTMP/long.img" "$SIDTMP/long"
	[ "$status" -eq 0 ] || die "mkfs.erofs: $output"
	both_pass long.img
	run "$FSCK_EROFS" --extract="$SIDTMP/out" "$SIDTMP/long.img"
	[ "$status" -eq 0 ] || die "extract: $output"
	cmp "$SIDTMP/long/big" "$SIDTMP/out/big"
}

@test "fsck.erofs: images of erofs-utils 1.9.4 mkfs.erofs (compact 2-byte indexes, 1 KiB blocks, every algorithm) pass both checkers" {
	need_sid_erofs
	cp -a "$SRC" "$SIDTMP/src"
	for opts in "" "-zlz4" "-zlz4hc" "-zlz4hc -C65536" "-zlz4 -Elegacy-compress" \
		    "-b1024 -zlz4hc" "-b512" "-zlzma" "-zlzma,level=6 -C131072" "-zdeflate" \
		    "-zzstd -C16384" "-x-1"; do
		# shellcheck disable=SC2086
		run chroot "$SID_ROOT" mkfs.erofs --quiet $opts \
			--xattr-inode-digest=trusted.erofs.fingerprint "$SIDREL/s.img" "$SIDREL/src"
		[ "$status" -eq 0 ] || die "erofs-utils mkfs.erofs $opts: $output"
		both_pass s.img || die "options $opts"
	done
}

@test "fsck.erofs --extract --xattrs: the restored tree's manifest equals the source's" {
	for opts in "" "-zlz4hc -C16384" "-zlzma" "-b1024 -zzstd"; do
		rm -rf x
		# shellcheck disable=SC2086
		"$MKFS_EROFS" --quiet $opts --xattr-inode-digest=trusted.erofs.fingerprint o.img "$SRC"
		run "$FSCK_EROFS" --extract=x --xattrs --xattr-inode-digest o.img
		[ "$status" -eq 0 ] || die "$opts: $output"
		"$LIB/manifest" x --drop-xattr trusted.erofs.fingerprint |
			diff "$BATS_FILE_TMPDIR/src.manifest" - || die "options $opts"
	done
	# the root directory only with --force, as erofs-utils
	run "$FSCK_EROFS" --extract=/ o.img
	[ "$status" -eq 1 ]
	[[ $output == *"without --force"* ]]
	# the same tree again: refused without --overwrite, restored with it
	run "$FSCK_EROFS" --extract=x o.img
	[ "$status" -eq 1 ]
	run "$FSCK_EROFS" --extract=x --overwrite --xattrs o.img
	[ "$status" -eq 0 ]
	"$LIB/manifest" x --drop-xattr trusted.erofs.fingerprint | diff "$BATS_FILE_TMPDIR/src.manifest" -
}

@test "fsck.erofs --extract --xattrs: the default fingerprint name (no namespace) is skipped with one warning, the rest restored" {
	local nfiles
	"$MKFS_EROFS" --quiet --xattr-inode-digest o.img "$SRC"
	run "$FSCK_EROFS" --extract=x --xattrs --xattr-inode-digest o.img
	[ "$status" -eq 0 ] || die "$output"
	# one fingerprint per regular file of size > 0 (the format's rule)
	nfiles=$(find "$SRC" -type f -size +0 -links 1 | wc -l)
	nfiles=$((nfiles + $(find "$SRC" -type f -size +0 -links +1 -printf '%i\n' | sort -u | wc -l)))
	[[ $output == *"warning: $nfiles extended attributes in no Linux namespace"* ]] ||
		die "want $nfiles skipped: $output"
	"$LIB/manifest" x | diff "$BATS_FILE_TMPDIR/src.manifest" - || die "manifest"
}

@test "fsck.erofs: exit status as erofs-utils' (usage, missing image, not EROFS, digests asked of an image without, help)" {
	need_sid_erofs
	head -c 65536 /dev/zero > "$SIDTMP/zero.img"
	"$MKFS_EROFS" --quiet "$SIDTMP/nodigest.img" "$SRC/z"
	for args in "" "--bogus-option $SIDREL/zero.img" "$SIDREL/missing.img" \
		    "$SIDREL/zero.img" "$SIDREL/zero.img $SIDREL/zero.img" \
		    "$SIDREL/nodigest.img" "--xattr-inode-digest $SIDREL/nodigest.img"; do
		# shellcheck disable=SC2086
		run chroot "$SID_ROOT" fsck.erofs $args
		ref=$status
		# shellcheck disable=SC2086
		run "$FSCK_EROFS" ${args//$SIDREL/$SIDTMP}
		[ "$status" -eq "$ref" ] || die "'$args': ours $status, erofs-utils $ref"
	done
	run "$FSCK_EROFS" --help
	[ "$status" -eq 0 ]
	[[ $output == *--xattr-inode-digest* ]]
}

damage_run() {
	local img=$1 n=$2; shift 2
	python3 "$FSFORGE_TOP/tests/erofs/fsck_regions.py" "$SID_ROOT" "$SIDREL/$img" "$@" > regions
	grep -q '^zdata' regions || die "no compressed file among $*"
	grep -q '^digest' regions || die "no fingerprint among $*"
	run python3 "$FSFORGE_TOP/tests/erofs/fsck_damage.py" "$SID_ROOT" "$SIDREL/$img" \
		"$FSCK_EROFS" "$n" < regions
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "fsck.erofs: single-byte damage erofs-utils catches (superblock, inode, dirent, xattr, index, data, fingerprint), ours catches" {
	need_sid_erofs
	"$MKFS_EROFS" --quiet -zlz4hc --xattr-inode-digest=trusted.erofs.fingerprint \
		"$SIDTMP/o.img" "$SRC"
	damage_run o.img "${FSFORGE_DAMAGE_PER_REGION:-8}" / /z /z/numbers /z/compress.c /xattrs/many
	cp -a "$SRC" "$SIDTMP/src"
	chroot "$SID_ROOT" mkfs.erofs --quiet -zlzma --xattr-inode-digest=trusted.erofs.fingerprint \
		"$SIDREL/s.img" "$SIDREL/src"
	damage_run s.img "${FSFORGE_DAMAGE_PER_REGION:-6}" /z /z/numbers /xattrs/many
}

# damage IN at every STRIDE-th byte from FIRST into OUT
spray() {
	python3 - "$@" <<'PY'
import sys
src, dst, first, stride = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
b = bytearray(open(src, 'rb').read())
for off in range(first, len(b), stride):
    if off >= 4096:		# the superblock block aside: the walk must run
        b[off] ^= 0x5a
open(dst, 'wb').write(b)
PY
}

@test "fsck.erofs --workers: damaged images get the same messages, in the same order, and exit status with 1 and 3 workers" {
	"$MKFS_EROFS" --quiet -zlz4hc --xattr-inode-digest=trusted.erofs.fingerprint o.img "$SRC"
	"$MKFS_EROFS" --quiet --xattr-inode-digest=trusted.erofs.fingerprint p.img "$SRC"
	local many=0
	for case in "o.img 4000 3001" "o.img 9000 7919" "o.img 20000 1499" \
		    "p.img 4100 4096" "p.img 12000 2999" "p.img 30000 997"; do
		set -- $case
		spray "$1" d.img "$2" "$3"
		run "$FSCK_EROFS" --workers=1 --xattr-inode-digest d.img
		local s1=$status o1=$output
		run "$FSCK_EROFS" --workers=3 --xattr-inode-digest d.img
		[ "$status" -eq "$s1" ] || die "$case: exit $status with 3 workers, $s1 with 1"
		[ "$output" = "$o1" ] || die "$case: 1 worker: $o1 ... 3 workers: $output"
		# several files reported: the order is at stake
		if [ "$(grep -c 'fingerprint\|does not decode' <<< "$o1")" -ge 3 ]; then
			many=$((many + 1))
		fi
	done
	[ "$many" -ge 3 ] || die "only $many damaged images with several problems"
}
