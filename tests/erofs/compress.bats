#!/usr/bin/env bats
# mkfs.erofs -z lz4|lz4hc|lzma|deflate|zstd: compressed images checked by
# independent readers:
# the host kernel mounts them and the tree matches the source manifest;
# erofs-utils 1.9 (sid tree) fsck.erofs verifies every digest and extracts
# content whose SHA-256 list equals the source's.
load ../lib/common
load erofs_helpers
FSCK_EROFS=$FSFORGE_BUILDDIR/fsck/fsck.erofs

setup_file() {
	export SRC=$BATS_FILE_TMPDIR/src
	"$LIB/mktree" "$SRC"
	# compressible and incompressible data, of sizes around block and
	# pcluster boundaries, and a mix of both in one file
	mkdir -p "$SRC/z"
	head -c 3000000 /dev/zero > "$SRC/z/zeros"
	head -c 300000 /dev/urandom > "$SRC/z/random"
	seq 1 200000 > "$SRC/z/numbers"
	{ head -c 70000 /dev/urandom; seq 1 30000; head -c 5000 /dev/urandom; head -c 9000 /dev/zero; } > "$SRC/z/mixed"
	for n in 4095 4096 4097 8191 8193 65536 65537 131073; do
		yes "line $n of text" | head -c "$n" > "$SRC/z/t$n"
	done
	cp -r "$FSFORGE_TOP/liberofs" "$SRC/z/code"
	"$LIB/manifest" "$SRC" > "$BATS_FILE_TMPDIR/src.manifest"
	(cd "$SRC" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) > "$BATS_FILE_TMPDIR/src.sha256"
}

setup() { cd_tmp; }
teardown() {
	umount_all
	if [ -n "${SIDTMP:-}" ]; then rm -rf "$SIDTMP"; fi
}

# erofs-utils 1.9 fsck.erofs on IMG: digests checked, tree extracted; the
# SHA-256 list of the extracted files must equal the source's
sid_check() {
	local img=$1 name=${2:-i}
	cp "$img" "$SIDTMP/$name.img"
	chroot "$SID_ROOT" fsck.erofs --xattr-inode-digest --extract="/tmp/${SIDTMP##*/}/$name.x" "/tmp/${SIDTMP##*/}/$name.img" ||
		die "fsck.erofs failed on $img"
	(cd "$SIDTMP/$name.x" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) |
		diff "$BATS_FILE_TMPDIR/src.sha256" - || die "extracted content of $img differs"
	rm -rf "$SIDTMP/$name.x" "$SIDTMP/$name.img"
}

@test "-z lz4 and lz4hc, levels and -C: fsck.erofs 1.9 extracts the tree, digests pass" {
	need_sid_erofs
	for opts in "-zlz4" "-zlz4hc" "-zlz4hc,level=12 -C65536" "-zlz4hc,3 -C16384" \
		    "-zlz4 -C1048576" "-zlz4hc -b1024 -C8192" "-zlz4 -b512" \
		    "-zlz4hc -C32768 --max-extent-bytes=20000" "-zlz4hc -Elegacy-compress" \
		    "-zlz4 -C65536 -Elegacy-compress"; do
		# shellcheck disable=SC2086
		run "$MKFS_EROFS" --quiet $opts --xattr-inode-digest=trusted.erofs.fingerprint \
			--exclude-path=types/socket x.img "$SRC"
		[ "$status" -eq 0 ] || die "mkfs.erofs $opts: $output"
		sid_check x.img || die "options $opts"
	done
}

@test "-z zstd, deflate, libdeflate and lzma, levels and -C: fsck.erofs 1.9 extracts the tree, digests pass" {
	need_sid_erofs
	for opts in "-zzstd" "-zzstd,level=19 -C65536" "-zzstd,1 -b1024 -C8192" \
		    "-zzstd -C32768 --max-extent-bytes=20000" "-zdeflate" \
		    "-zdeflate,level=9 -C16384" "-zlibdeflate,12 -C1048576" \
		    "-zdeflate -Elegacy-compress -b512" "-zlzma" "-zlzma,level=109 -C65536" \
		    "-zlzma,0 -b1024 -C8192" "-zlzma -C16384 -Elegacy-compress"; do
		# shellcheck disable=SC2086
		run "$MKFS_EROFS" --quiet $opts --xattr-inode-digest=trusted.erofs.fingerprint \
			--exclude-path=types/socket x.img "$SRC"
		[ "$status" -eq 0 ] || die "mkfs.erofs $opts: $output"
		sid_check x.img || die "options $opts"
	done
}

# the superblock's algorithm bitmap (0x454) and the first settings record
# after the superblock (0x480: le16 length, then the record), as the
# format defines them for each algorithm
@test "zstd, deflate, lzma: COMPR_CFGS, one algorithm bit and its settings record" {
	for a in "zstd 8 6 0" "deflate 4 6 15" "lzma 2 14 0"; do
		set -- $a
		"$MKFS_EROFS" --quiet -z"$1" x.img "$SRC/z"
		incompat=$(od -An -tu4 -j $((0x450)) -N4 x.img | tr -d ' ')
		[ $((incompat & 3)) -eq 3 ] || die "$1: incompat $incompat"
		[ "$(od -An -tu2 -j $((0x454)) -N2 x.img | tr -d ' ')" -eq "$2" ] || die "$1: algs"
		[ "$(od -An -tu2 -j $((0x480)) -N2 x.img | tr -d ' ')" -eq "$3" ] || die "$1: length"
		[ "$(od -An -tu1 -j $((0x482)) -N1 x.img | tr -d ' ')" -eq "$4" ] || die "$1: first byte"
	done
	# lzma: dictionary 32 KiB (4 one-block pclusters, at least 32 KiB)
	# and 256 KiB with 64 KiB pclusters; zstd: window log 20 - 10
	"$MKFS_EROFS" --quiet -zlzma -C65536 x.img "$SRC/z"
	[ "$(od -An -tu4 -j $((0x482)) -N4 x.img | tr -d ' ')" -eq 262144 ]
	"$MKFS_EROFS" --quiet -zzstd x.img "$SRC/z"
	[ "$(od -An -tu1 -j $((0x483)) -N1 x.img | tr -d ' ')" -eq 10 ]
}

# dictsize=: the settings record (0x480: le16 length, then the record)
# equals the one erofs-utils 1.9.4 writes with the same options
# (lzma: dict_size as given, not rounded; zstd: window log - 10), and both
# fsck.erofs extract the source's content
@test "-z lzma,dictsize= and zstd,dictsize=: settings record as erofs-utils writes it, both fsck.erofs extract the tree" {
	need_sid_erofs
	cp -a "$SRC/z" "$SIDTMP/src"
	for z in lzma,level=3,dictsize=100000 lzma,dictsize=4k \
		 "lzma,dictsize=8M -C262144" zstd,dictsize=1024,level=5; do
		# shellcheck disable=SC2086
		run "$MKFS_EROFS" --quiet -z$z --exclude-path=types/socket x.img "$SRC"
		[ "$status" -eq 0 ] || die "mkfs.erofs -z$z: $output"
		# shellcheck disable=SC2086
		run chroot "$SID_ROOT" mkfs.erofs -z$z "$SIDREL/r.img" "$SIDREL/src"
		[ "$status" -eq 0 ] || die "erofs-utils mkfs.erofs -z$z: $output"
		[ "$(od -An -tx1 -j $((0x480)) -N16 x.img)" = "$(od -An -tx1 -j $((0x480)) -N16 "$SIDTMP/r.img")" ] ||
			die "-z$z: settings record $(od -An -tx1 -j $((0x480)) -N16 x.img) vs erofs-utils $(od -An -tx1 -j $((0x480)) -N16 "$SIDTMP/r.img")"
		sid_check x.img || die "-z$z"
		rm -rf xx
		run "$FSCK_EROFS" --extract=xx x.img
		[ "$status" -eq 0 ] || die "our fsck.erofs -z$z: $output"
		(cd xx && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) |
			diff "$BATS_FILE_TMPDIR/src.sha256" - || die "-z$z: our extraction differs"
	done
}

# the host kernel's erofs decompressor for ALG (CONFIG_EROFS_FS_ZIP_*), when
# the kernel says which it has
host_has() {
	local sym=$1
	[ -r /proc/config.gz ] || return 0
	! zcat /proc/config.gz | grep -q "^# CONFIG_EROFS_FS_ZIP_$sym is not set"
}

@test "compressed images mount in the host kernel and match the source manifest" {
	local n=0
	for opts in "-zlz4hc" "-zlz4 -C65536" "-zlz4hc -C16384 -Elegacy-compress" \
		    "-zzstd" "-zzstd -C65536 -Elegacy-compress" "-zdeflate -C16384" \
		    "-zlibdeflate,level=12" "-zlzma" "-zlzma,level=9 -C65536"; do
		# a new image each time: the kernel detaches the loop device of the
		# last mount asynchronously, and mkfs.erofs rightly refuses an
		# image that is still attached (seen in the fresh root under load)
		n=$((n + 1))
		# shellcheck disable=SC2086
		"$MKFS_EROFS" --quiet $opts --xattr-inode-digest=trusted.erofs.fingerprint k$n.img "$SRC"
		sym=${opts%% *}
		case $sym in -zzstd*) sym=ZSTD ;; -zlzma*) sym=LZMA ;; -z*deflate*) sym=DEFLATE ;; *) sym= ;; esac
		if [ -n "$sym" ] && ! host_has "$sym"; then
			# no decompressor here: erofs-utils' extraction is the
			# reader instead
			need_sid_erofs
			sid_check k$n.img || die "options $opts"
			continue
		fi
		mnt=$(mount_erofs k$n.img)
		"$LIB/manifest" "$mnt" --drop-xattr trusted.erofs.fingerprint |
			diff "$BATS_FILE_TMPDIR/src.manifest" - || die "options $opts"
		umount "$mnt"
	done
}

@test "compression pays where it can and stores raw blocks where it cannot" {
	"$MKFS_EROFS" --quiet -zlz4hc z.img "$SRC/z"
	"$MKFS_EROFS" --quiet p.img "$SRC/z"
	mnt=$(mount_erofs z.img)
	# 3 MB of zeros: lz4 reaches ~250:1, a few blocks
	[ "$(stat -c %b "$mnt/zeros")" -le 48 ]
	# random data cannot shrink: about its own size, never much more
	blocks=$(stat -c %b "$mnt/random")
	[ "$blocks" -ge $((300000 / 512)) ]
	[ "$blocks" -le $((300000 / 512 + 16)) ]
	cmp "$mnt/random" "$SRC/z/random"
	cmp "$mnt/mixed" "$SRC/z/mixed"
	# an incompressible file costs what it costs uncompressed (kept flat)
	pm=$(mount_erofs p.img)
	[ "$(stat -c %b "$mnt/random")" = "$(stat -c %b "$pm/random")" ]
	# a file mixing random and text data is compressed, its random
	# extents stored raw: smaller than the file, larger than its text
	[ "$(stat -c %b "$mnt/mixed")" -lt $((204999 / 512)) ]
	[ "$(stat -c %b "$mnt/mixed")" -ge $((75001 / 512)) ]
	[ "$(stat -c %s z.img)" -lt $(($(stat -c %s p.img) / 2)) ]
}

@test "zstd, deflate, lzma pay where they can and store raw blocks where they cannot" {
	"$MKFS_EROFS" --quiet p.img "$SRC/z"
	pm=$(mount_erofs p.img)
	for a in zstd deflate lzma; do
		"$MKFS_EROFS" --quiet -z$a z.img "$SRC/z"
		mnt=$(mount_erofs z.img)
		[ "$(stat -c %b "$mnt/zeros")" -le 48 ] || die "$a: zeros"
		[ "$(stat -c %b "$mnt/random")" = "$(stat -c %b "$pm/random")" ] || die "$a: random"
		cmp "$mnt/random" "$SRC/z/random"
		cmp "$mnt/mixed" "$SRC/z/mixed"
		[ "$(stat -c %b "$mnt/mixed")" -lt $((204999 / 512)) ] || die "$a: mixed"
		[ "$(stat -c %b "$mnt/mixed")" -ge $((75001 / 512)) ] || die "$a: mixed"
		# more than lz4hc's 1/2 on this text
		[ "$(stat -c %s z.img)" -lt $(($(stat -c %s p.img) * 2 / 5)) ] || die "$a: size"
		umount "$mnt"
	done
}

@test "fingerprints of compressed files equal erofs-utils' (same options)" {
	need_sid_erofs
	cp -a "$SRC/z" "$SIDTMP/tree"
	chroot "$SID_ROOT" mkfs.erofs -zlz4hc --xattr-inode-digest=trusted.erofs.fingerprint \
		"/tmp/${SIDTMP##*/}/ref.img" "/tmp/${SIDTMP##*/}/tree" >/dev/null
	"$MKFS_EROFS" --quiet -zlz4hc --xattr-inode-digest=trusted.erofs.fingerprint ours.img "$SRC/z"
	ref=$(mount_erofs "$SIDTMP/ref.img")
	ours=$(mount_erofs ours.img)
	# every non-empty regular file carries one (getfattr fails otherwise)
	(cd "$ref" && find . -type f -size +0 -print0 | LC_ALL=C sort -z |
		xargs -0 getfattr -e hex -n trusted.erofs.fingerprint) > ref.fp
	(cd "$ours" && find . -type f -size +0 -print0 | LC_ALL=C sort -z |
		xargs -0 getfattr -e hex -n trusted.erofs.fingerprint) > ours.fp
	[ "$(grep -c '^trusted.erofs.fingerprint=0x7368613235363a' ours.fp)" -ge 10 ]
	diff ref.fp ours.fp
	# and each is sha256: + SHA-256 of the content
	want=7368613235363a$(sha256sum < "$SRC/z/numbers" | cut -c1-64)
	[ "$(getfattr --absolute-names -e hex -n trusted.erofs.fingerprint "$ours/numbers" | sed -n 's/^trusted.erofs.fingerprint=0x//p')" = "$want" ]
}

@test "compressed: same tree, -T and -U give byte-identical images for any --workers" {
	u=3f0c3a53-8f1e-4a3b-9d7e-0123456789ab
	for z in "-zlz4hc -C65536" "-zzstd" "-zdeflate -C16384" "-zlzma -C65536"; do
		# shellcheck disable=SC2086
		"$MKFS_EROFS" --quiet $z -T 1700000000 -U $u --workers=1 --xattr-inode-digest a.img "$SRC"
		# shellcheck disable=SC2086
		"$MKFS_EROFS" --quiet $z -T 1700000000 -U $u --workers=4 --xattr-inode-digest b.img "$SRC"
		# shellcheck disable=SC2086
		"$MKFS_EROFS" --quiet $z -T 1700000000 -U $u --workers=16 --xattr-inode-digest c.img "$SRC"
		cmp a.img b.img || die "$z: 1 and 4 workers"
		cmp a.img c.img || die "$z: 1 and 16 workers"
	done
}

@test "-zlz4hc: big files compressed past the files before them (more than 4 MiB of output before their turn) give the same image for 1 and 2 workers; fsck.erofs 1.9 extracts it" {
	need_sid_erofs
	big=$BATS_TEST_TMPDIR/big
	mkdir -p "$big/t"
	# two tables of about 12 MB that lz4hc leaves at 5-6 MB each, then
	# small files: with several workers the second table and the files
	# after it are compressed while the first is
	for seed in 1 2; do
		awk -v seed=$seed 'BEGIN { srand(seed); split("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon", w, " ");
			for (i = 0; i < 450000; i++) printf "%s\t%d\t%s-%x\t%s\n", w[int(rand() * 20) + 1], int(rand() * 1000000), w[int(rand() * 20) + 1], int(rand() * 65536), w[int(rand() * 20) + 1] }' > "$big/t/table$seed"
	done
	for n in 1 2 3 4 5 6 7 8; do seq "$n" 3 90000 > "$big/t/u$n"; done
	(cd "$big" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) > big.sha256
	for w in 1 2; do
		run "$MKFS_EROFS" --quiet -zlz4hc -T 0 -U clear --workers=$w --xattr-inode-digest "w$w.img" "$big"
		[ "$status" -eq 0 ] || die "$w workers: $output"
	done
	cmp w1.img w2.img || die "1 and 2 workers differ"
	cp w2.img "$SIDTMP/w2.img"
	run chroot "$SID_ROOT" fsck.erofs --xattr-inode-digest --extract="$SIDREL/x" "$SIDREL/w2.img"
	[ "$status" -eq 0 ] || die "fsck.erofs: $output"
	(cd "$SIDTMP/x" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) | diff big.sha256 - ||
		die "extracted content differs"
}

@test "-z and -C usage errors" {
	# erofs-utils 1.9 has no "xz" name either
	run "$MKFS_EROFS" -z xz x.img "$SRC"
	[ "$status" -eq 16 ]
	[[ $output == *"compressor 'xz' is not supported"* ]]
	# alternatives after ':' (erofs-utils' syntax), each one checked
	run "$MKFS_EROFS" -z zstd:xz x.img "$SRC"
	[ "$status" -eq 16 ]
	[[ $output == *"compressor 'xz' is not supported"* ]]
	run "$MKFS_EROFS" -z zstd: x.img "$SRC"
	[ "$status" -eq 16 ]
	[[ $output == *"empty compressor"* ]]
	run "$MKFS_EROFS" -z lz4::zstd x.img "$SRC"
	[ "$status" -eq 16 ]
	run "$MKFS_EROFS" -z lz4:lz4:lz4:lz4:lz4:lz4:lz4:lz4:lz4 x.img "$SRC"
	[ "$status" -eq 16 ]
	[[ $output == *"at most 8 compressors"* ]]
	run "$MKFS_EROFS" -z lz4:zstd,level=23 x.img "$SRC"
	[ "$status" -eq 16 ]
	run "$MKFS_EROFS" -z zstd,level=23 x.img "$SRC"
	[ "$status" -eq 16 ]
	run "$MKFS_EROFS" -z deflate,10 x.img "$SRC"
	[ "$status" -eq 16 ]
	run "$MKFS_EROFS" -z lzma,level=50 x.img "$SRC"
	[ "$status" -eq 16 ]
	[[ $output == *"lzma level (0-9, 100-109)"* ]]
	run "$MKFS_EROFS" -z lzma,level=110 x.img "$SRC"
	[ "$status" -eq 16 ]
	# dictsize= ranges of erofs-utils 1.9.4: lzma 4 KiB to 8 MiB, zstd a
	# power of two from 1 KiB to 1 MiB, none for the others
	run "$MKFS_EROFS" -z lzma,dictsize=16M x.img "$SRC"
	[ "$status" -eq 16 ]
	[[ $output == *"invalid lzma dictsize"* ]]
	run "$MKFS_EROFS" -z lzma,dictsize=4095 x.img "$SRC"
	[ "$status" -eq 16 ]
	run "$MKFS_EROFS" -z zstd,dictsize=100000 x.img "$SRC"
	[ "$status" -eq 16 ]
	[[ $output == *"invalid zstd dictsize"* ]]
	run "$MKFS_EROFS" -z lz4hc,dictsize=65536 x.img "$SRC"
	[ "$status" -eq 16 ]
	[[ $output == *"lz4hc takes no dictsize"* ]]
	run "$MKFS_EROFS" -z lzma,dictsize=64x x.img "$SRC"
	[ "$status" -eq 16 ]
	run "$MKFS_EROFS" -z lzma,lc=3 x.img "$SRC"
	[ "$status" -eq 16 ]
	[[ $output == *"unknown compressor option 'lc=3'"* ]]
	run "$MKFS_EROFS" -z lz4,5 x.img "$SRC"
	[ "$status" -eq 16 ]
	run "$MKFS_EROFS" -z lz4hc,level=13 x.img "$SRC"
	[ "$status" -eq 16 ]
	run "$MKFS_EROFS" -z lz4hc --max-extent-bytes=100 x.img "$SRC"
	[ "$status" -eq 16 ]
	run "$MKFS_EROFS" -z lz4hc -C 6000 x.img "$SRC"
	[ "$status" -eq 1 ]
	[[ $output == *"multiple of the block size"* ]]
	[ ! -e x.img ]
}

# the extents of PATH in IMG as erofs-utils' dump.erofs decodes them:
# logical start and length, physical length (not the address)
exts() {
	chroot "$SID_ROOT" dump.erofs --path="$2" -e "$1" |
		awk -F'[|:]' '/^ *[0-9]+:/ { print $2, $3, $5 }'
}

# PATH in IMG (under SIDREL) has a compact index (layout 3) with the
# advise bits MASK set (1: COMPACTED_2B, 8: INLINE_PCLUSTER)
compact_with() {
	local line adv
	line=$(zmap "$1" "$2")
	[[ $line == *" layout=3 "* ]] || die "$2: not a compact index: $line"
	adv=$(sed 's/.*advise=\(0x[0-9a-f]*\).*/\1/' <<< "$line")
	[ $((adv & $3)) -eq "$3" ] || die "$2: advise bits $3 not all set: $line"
}

# erofs-utils' fsck.erofs extracts IMG (a name in SIDTMP) and the SHA-256
# list of the files it wrote equals the file SUMS
sid_extracts() {
	local img=$1 want=$2
	rm -rf "$SIDTMP/x"
	run chroot "$SID_ROOT" fsck.erofs --extract="$SIDREL/x" "$SIDREL/$img"
	[ "$status" -eq 0 ] || die "erofs-utils fsck.erofs on $img: $output"
	sums "$SIDTMP/x" | diff "$want" - || die "erofs-utils' extraction of $img differs"
	rm -rf "$SIDTMP/x"
}

@test "compact indexes (2-byte packs between 4-byte ones, COMPACTED_2B) by default with 4 KiB blocks, as erofs-utils 1.9.4 writes them; full ones with -E legacy-compress; the same extents decoded from both" {
	need_sid_erofs
	sums "$SRC/z" > z.sha256
	for c in "" "-C65536"; do
		# shellcheck disable=SC2086
		"$MKFS_EROFS" --quiet -zlz4hc $c -b 4096 "$SIDTMP/c.img" "$SRC/z"
		# shellcheck disable=SC2086
		"$MKFS_EROFS" --quiet -zlz4hc $c -b 4096 -Elegacy-compress "$SIDTMP/l.img" "$SRC/z"
		for p in /numbers /mixed /t65537 /t8193; do
			compact_with "$SIDREL/c.img" "$p" 1
			[[ $(zmap "$SIDREL/l.img" "$p") == *" layout=1 "* ]] || die "$c $p: not full"
			[ -n "$(exts "$SIDREL/c.img" "$p")" ] || die "$c $p: no extents"
			[ "$(exts "$SIDREL/c.img" "$p")" = "$(exts "$SIDREL/l.img" "$p")" ] ||
				die "$c $p: the compact index decodes to other extents"
		done
		[ "$(stat -c %s "$SIDTMP/c.img")" -le "$(stat -c %s "$SIDTMP/l.img")" ]
		sid_extracts c.img z.sha256
		run "$FSCK_EROFS" "$SIDTMP/c.img"
		[ "$status" -eq 0 ] || die "$c: our fsck.erofs: $output"
	done
	# the same tree with erofs-utils: 2-byte packs too
	cp -a "$SRC/z" "$SIDTMP/src"
	run chroot "$SID_ROOT" mkfs.erofs -zlz4hc "$SIDREL/r.img" "$SIDREL/src"
	[ "$status" -eq 0 ] || die "erofs-utils: $output"
	[[ $(zmap "$SIDREL/r.img" /numbers) == *" advise=0x1 "* ]]
}

# The 4-byte packs before the 2-byte ones run to the first 32-byte
# boundary after the map header, which follows the inode and its xattrs
# (8-byte aligned): with a 32- or 64-byte inode (both whole slots) only
# the xattr size moves it.  The xattr body is 12 bytes and one entry of
# 4 + 1 + V bytes (user.a = V bytes) rounded to 4, so no xattr, V=3, 19,
# 27 and 11 start the 2-byte packs after 6, 0, 4, 2 and 6 4-byte entries;
# uid 70000 gives the same files 64-byte inodes.  Judged by erofs-utils
# 1.9.4: its fsck.erofs extracts every file with its digest, and dump.erofs
# decodes the same extents from the compact and the full index
@test "compact indexes with 2-byte packs after 0, 2, 4 or 6 4-byte entries (xattrs of several sizes, 32- and 64-byte inodes): erofs-utils 1.9.4 extracts every file, the same extents as the full index" {
	need_sid_erofs
	mkdir "$SIDTMP/src"
	for v in none 3 19 27 11; do
		for u in 0 70000; do
			f=$SIDTMP/src/x$v.u$u
			{ seq 1 20000; head -c 30000 /dev/urandom; seq 5 9000; head -c 9000 /dev/zero; } > "$f"
			if [ "$v" != none ]; then setfattr -n user.a -v "$(head -c "$v" /dev/zero | tr '\0' v)" "$f"; fi
			chown "$u" "$f"
		done
	done
	sums "$SIDTMP/src" > src.sha256
	"$MKFS_EROFS" --quiet -zlz4hc -T0 "$SIDTMP/c.img" "$SIDTMP/src"
	"$MKFS_EROFS" --quiet -zlz4hc -T0 -Elegacy-compress "$SIDTMP/l.img" "$SIDTMP/src"
	seen=
	for f in "$SIDTMP"/src/*; do
		p=/${f##*/}
		compact_with "$SIDREL/c.img" "$p" 1
		line=$(zmap "$SIDREL/c.img" "$p")
		init=${line##*init4=}
		case $p in
		/xnone.* | /x11.*) want=6 ;; /x3.*) want=0 ;; /x19.*) want=4 ;; /x27.*) want=2 ;;
		esac
		[ "$init" = "$want" ] || die "$p: $init 4-byte entries first, meant $want: $line"
		seen="$seen $init"
		e=$(exts "$SIDREL/c.img" "$p")
		[ -n "$e" ] || die "$p: no extents"
		[ "$e" = "$(exts "$SIDREL/l.img" "$p")" ] ||
			die "$p: the compact index decodes to other extents"
	done
	for want in 0 2 4 6; do
		[[ " $seen " == *" $want "* ]] || die "no file with $want 4-byte entries first:$seen"
	done
	# 64-byte inodes among them (dump.erofs: the uid is kept)
	run chroot "$SID_ROOT" dump.erofs --path=/x3.u70000 "$SIDREL/c.img"
	[[ $output == *"70000"* ]] || die "/x3.u70000: $output"
	sid_extracts c.img src.sha256
}

# NAME with 4 user xattrs of random bytes: 3 of 65000 and one of LAST
# (the record: a 64-byte inode, 12 + 4 x 65008 bytes of xattrs at most)
big_xattrs() {
	local f=$1 last=$2 i len
	printf '%s\n' "${f##*/}" > "$f"
	for i in 0 1 2 3; do
		len=65000
		if [ "$i" = 3 ]; then len=$last; fi
		setfattr -n "user.a$i" -v "0s$(head -c "$len" /dev/urandom | base64 -w0)" "$f"
	done
}

# The metadata is written in 4 MiB chunks; a record crossing a chunk's end
# is written in two parts, the second before the next chunk is read back.
# Records larger than a block go first (largest first) into fresh blocks
# from block 1, so with 15 records of 64 blocks (four 65000-byte xattrs)
# and one of 62 (the last xattr 56800 bytes) the next, /z's (12 MiB of
# zeros: a compact index of 3072 lclusters, over 6 KiB, written by the
# data pass), starts in block 1023 and crosses 4 MiB; in the second tree
# the 16th record of 64 blocks starts in block 961 and crosses it
# (xattrs).  The test checks where the records landed.  The sources sit
# on a tmpfs: ext4 holds no 65000-byte xattr
@test "a compressed index and an inode's xattrs crossing the 4 MiB metadata chunk: erofs-utils 1.9.4 extracts the tree, the host kernel reads it as the source" {
	need_sid_erofs
	src=$BATS_TEST_TMPDIR/mnt.src
	mkdir "$src"
	mount -t tmpfs -o size=64m tmpfs "$src"
	mkdir "$src/s1" "$src/s2"
	for i in 00 01 02 03 04 05 06 07 08 09 10 11 12 13 14; do
		big_xattrs "$src/s1/a$i" 65000
		cp -a "$src/s1/a$i" "$src/s2/a$i"
	done
	big_xattrs "$src/s1/b" 56800
	big_xattrs "$src/s2/a15" 65000
	head -c 12582912 /dev/zero > "$src/s1/z"
	for t in s1 s2; do
		"$MKFS_EROFS" --quiet -zlz4hc "$SIDTMP/$t.img" "$src/$t"
		case $t in s1) p=/z lo=$(((4 << 20) - 4096)) hi=$(((4 << 20) - 72)) ;;
			   s2) p=/a15 lo=$(((4 << 20) - 260108)) hi=$((4 << 20)) ;;
		esac
		nid=$(chroot "$SID_ROOT" dump.erofs --path=$p "$SIDREL/$t.img" | sed -n 's/^NID: \([0-9]*\).*/\1/p')
		[ -n "$nid" ] || die "$t: no NID for $p"
		at=$((nid * 32))
		[ "$at" -ge "$lo" ] || die "$t: $p's record at $at, before $lo"
		[ "$at" -lt "$hi" ] || die "$t: $p's record at $at, not before $hi"
		sums "$src/$t" > $t.sha256
		run chroot "$SID_ROOT" fsck.erofs --extract="$SIDREL/$t.x" "$SIDREL/$t.img"
		[ "$status" -eq 0 ] || die "$t: erofs-utils fsck.erofs: $output"
		sums "$SIDTMP/$t.x" | diff $t.sha256 - || die "$t: erofs-utils' extraction differs"
		mnt=$(mount_erofs "$SIDTMP/$t.img")
		"$LIB/manifest" "$src/$t" > $t.manifest
		"$LIB/manifest" "$mnt" | diff $t.manifest - || die "$t: the kernel's tree differs"
		umount "$mnt"
	done
}

@test "-zlz4hc, a metadata area of several 4 MiB chunks: the chunks written beside the compressed files (2 workers) give the image 1 worker writes at the end; fsck.erofs 1.9 extracts it" {
	need_sid_erofs
	src=$BATS_TEST_TMPDIR/meta
	mkdir -p "$src/r" "$src/t"
	# 1,600 incompressible files of 3,500 bytes, their tails inline (a
	# metadata area of about 6 MB), and 290 compressible ones whose
	# compressed records lie among them
	head -c 5600000 /dev/urandom | (cd "$src/r" && split -b 3500 -a 4 -)
	seq 1 400000 | (cd "$src/t" && split -b 10000 -a 3 -)
	sums "$src" > meta.sha256
	run "$MKFS_EROFS" --quiet -zlz4hc -T 0 -U clear --workers=1 --xattr-inode-digest w1.img "$src"
	[ "$status" -eq 0 ] || die "1 worker: $output"
	run "$MKFS_EROFS" -d 9 -zlz4hc -T 0 -U clear --workers=2 --xattr-inode-digest w2.img "$src"
	[ "$status" -eq 0 ] || die "2 workers: $output"
	[[ "$output" =~ metadata:\ [1-9][0-9]*\ of\ [0-9]+\ chunks\ written\ early ]] ||
		die "no chunk written early: $output"
	cmp w1.img w2.img || die "1 and 2 workers differ"
	cp w2.img "$SIDTMP/w2.img"
	run chroot "$SID_ROOT" fsck.erofs --xattr-inode-digest --extract="$SIDREL/x" "$SIDREL/w2.img"
	[ "$status" -eq 0 ] || die "fsck.erofs: $output"
	sums "$SIDTMP/x" | diff meta.sha256 - || die "extracted content differs"
}

@test "a flipped byte in compressed data is caught by fsck.erofs 1.9 (digests)" {
	need_sid_erofs
	"$MKFS_EROFS" --quiet -zlz4hc --xattr-inode-digest=trusted.erofs.fingerprint "$SIDTMP/ok.img" "$SRC/z/code"
	run chroot "$SID_ROOT" fsck.erofs --xattr-inode-digest "/tmp/${SIDTMP##*/}/ok.img"
	[ "$status" -eq 0 ]
	# compressed data is the last data of the image: flip a byte in it
	cp "$SIDTMP/ok.img" "$SIDTMP/bad.img"
	size=$(stat -c %s "$SIDTMP/bad.img")
	off=$((size - 3000))
	orig=$(od -An -tu1 -j "$off" -N1 "$SIDTMP/bad.img" | tr -d ' ')
	printf "\\$(printf '%03o' $(((orig ^ 0x5a) & 255)))" |
		dd of="$SIDTMP/bad.img" bs=1 seek="$off" conv=notrunc status=none
	! cmp -s "$SIDTMP/ok.img" "$SIDTMP/bad.img" || die "byte not flipped"
	run chroot "$SID_ROOT" fsck.erofs --xattr-inode-digest "/tmp/${SIDTMP##*/}/bad.img"
	echo "$output"
	[ "$status" -ne 0 ]
}

# --compress-hints: a tree whose files each take a different line (or
# none); the hints file of erofs-utils' grammar, "PCLUSTER_SIZE [INDEX]
# REGEX", with a comment, an empty line, a size that is not a multiple of
# the block size (the line ignored), an anchor on a leading '/' (paths have
# none), and a pcluster larger than -C
zh_tree() {
	mkdir -p "$1/d/e" "$1/bin" "$1/keep" "$1/s"
	seq 1 300000 > "$1/d/e/a.txt"
	seq 7 70000 > "$1/d/b.log"
	seq 3 50000 > "$1/d/nomatch.dat"
	seq 2 40000 > "$1/odd.txt"
	seq 1 60000 > "$1/bin/tool"
	seq 9 60000 > "$1/plain.dat"
	cp "$1/d/e/a.txt" "$1/keep/a.copy"
	# the same content three times: lz4hc, lz4hc, lzma (-E dedupe)
	seq 5 90000 > "$1/s/a"
	cp "$1/s/a" "$1/s/b"
	cp "$1/s/a" "$1/s/c"
}

zh_hints() {
	cat > "$1" <<'HINTS'
# PCLUSTER_SIZE [INDEX] REGEX: the first matching line wins
0 ^bin/

8192 1 \.txt$
6000 ^d/nomatch
16384 2 ^d/
12288 1 ^/keep
65536 1 keep/
4096 1 ^s/c$
HINTS
}

# the largest physical extent of PATH in IMG (a path in the sid tree), from
# erofs-utils' dump.erofs
max_phys() {
	chroot "$SID_ROOT" dump.erofs --path="$2" -e "$1" |
		awk -F'|' '/^ *[0-9]+:/ { v = $3 + 0; if (v > m) m = v } END { print m + 0 }'
}

# the "NID layout= [alg1= ...]" line of PATH in IMG (zmap_header.py)
zmap() {
	local nid
	nid=$(chroot "$SID_ROOT" dump.erofs --path="$2" "$1" | sed -n 's/^NID: \([0-9]*\).*/\1/p')
	[ -n "$nid" ] || die "no NID for $2"
	python3 "$BATS_TEST_DIRNAME/zmap_header.py" "$SID_ROOT$1" "$nid"
}

# SHA-256 list of the files under DIR
sums() { (cd "$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum); }

@test "-z lz4hc:lzma:zstd --compress-hints: each file's algorithm and pcluster as its first matching line says; both fsck.erofs extract the tree" {
	need_sid_erofs
	zh_tree "$SIDTMP/src"
	zh_hints "$SIDTMP/hints"
	run "$MKFS_EROFS" -zlz4hc:lzma:zstd --compress-hints="$SIDTMP/hints" "$SIDTMP/h.img" "$SIDTMP/src"
	[ "$status" -eq 0 ] || die "$output"
	[[ $output == *"hints:5: pcluster size 6000 is not a multiple of the block size 4096: line ignored"* ]]
	# 65536 above the default -C (one block): warned, as erofs-utils does
	[[ $output == *"hints: a hint's pcluster of 65536 bytes raises the image's largest pcluster above -C's 4096 bytes"* ]] ||
		die "no warning of the raised pcluster: $output"
	run "$MKFS_EROFS" -zlz4hc:lzma:zstd -C65536 --compress-hints="$SIDTMP/hints" "$SIDTMP/h64.img" "$SIDTMP/src"
	[ "$status" -eq 0 ] || die "$output"
	[[ $output != *"raises"* ]] || die "-C65536: $output"
	img=$SIDREL/h.img
	# superblock: lz4, lzma and zstd (bits 0, 1, 3), their records;
	# lz4's names the largest pcluster, 65536 bytes (16 blocks)
	[ "$(od -An -tu2 -j $((0x454)) -N2 "$SIDTMP/h.img" | tr -d ' ')" -eq 11 ]
	[ "$(od -An -tu2 -j $((0x480)) -N2 "$SIDTMP/h.img" | tr -d ' ')" -eq 14 ]
	[ "$(od -An -tu2 -j $((0x484)) -N2 "$SIDTMP/h.img" | tr -d ' ')" -eq 16 ]
	[ "$(od -An -tu2 -j $((0x490)) -N2 "$SIDTMP/h.img" | tr -d ' ')" -eq 14 ]
	[ "$(od -An -tu2 -j $((0x4a0)) -N2 "$SIDTMP/h.img" | tr -d ' ')" -eq 6 ]
	# PATH ALG PCLUSTER: the map header's HEAD1 algorithm (lz4 0, lzma 1,
	# zstd 3) and the largest pcluster of the file's extents
	for want in "/d/e/a.txt 1 8192" "/odd.txt 1 8192" "/d/b.log 3 16384" \
		    "/d/nomatch.dat 3 16384" "/keep/a.copy 1 65536" \
		    "/plain.dat 0 4096" "/s/a 0 4096" "/s/c 1 4096"; do
		set -- $want
		line=$(zmap "$img" "$1")
		[[ $line == *" alg1=$2 "* ]] || die "$1: $line, want algorithm $2"
		[ "$(max_phys "$img" "$1")" -eq "$3" ] || die "$1: largest pcluster $(max_phys "$img" "$1"), want $3"
	done
	# a size of 0: stored uncompressed (flat, layout 0 or 2)
	line=$(zmap "$img" /bin/tool)
	[[ $line == *" layout=2"* || $line == *" layout=0"* ]] || die "/bin/tool: $line"
	sums "$SIDTMP/src" > src.sha256
	run chroot "$SID_ROOT" fsck.erofs --extract="$SIDREL/x" "$img"
	[ "$status" -eq 0 ] || die "erofs-utils fsck.erofs: $output"
	sums "$SIDTMP/x" | diff src.sha256 -
	run "$FSCK_EROFS" --extract=ours "$SIDTMP/h.img"
	[ "$status" -eq 0 ] || die "our fsck.erofs: $output"
	sums ours | diff src.sha256 -
	if host_has LZMA && host_has ZSTD; then
		mnt=$(mount_erofs "$SIDTMP/h.img")
		sums "$mnt" | diff src.sha256 -
	fi
}

# erofs-utils 1.9.4 crashes (SIGSEGV) on any hint line with an algorithm
# index; lines of two fields it reads.  With those, it and we compress the
# same files, with the same largest pclusters
@test "--compress-hints without indexes: the same files compressed, with the same pclusters, as erofs-utils 1.9.4" {
	need_sid_erofs
	zh_tree "$SIDTMP/src"
	printf '0 ^bin/\n8192 \\.txt$\n6000 ^d/nomatch\n16384 ^d/\n65536 keep/\n' > "$SIDTMP/hints"
	"$MKFS_EROFS" --quiet -zlz4hc --compress-hints="$SIDTMP/hints" "$SIDTMP/o.img" "$SIDTMP/src" 2>/dev/null
	run chroot "$SID_ROOT" mkfs.erofs -zlz4hc --compress-hints="$SIDREL/hints" "$SIDREL/r.img" "$SIDREL/src"
	[ "$status" -eq 0 ] || die "erofs-utils: $output"
	for p in /d/e/a.txt /odd.txt /d/b.log /d/nomatch.dat /keep/a.copy /plain.dat /bin/tool /s/a; do
		# layout and algorithm
		o=$(zmap "$SIDREL/o.img" "$p" | grep -o 'layout=[0-9]*\( alg1=[0-9]*\)*')
		r=$(zmap "$SIDREL/r.img" "$p" | grep -o 'layout=[0-9]*\( alg1=[0-9]*\)*')
		[ "$o" = "$r" ] || die "$p: ours '$o', erofs-utils '$r'"
		[ "$(max_phys "$SIDREL/o.img" "$p")" -eq "$(max_phys "$SIDREL/r.img" "$p")" ] ||
			die "$p: largest pcluster $(max_phys "$SIDREL/o.img" "$p") vs $(max_phys "$SIDREL/r.img" "$p")"
	done
	[ "$(od -An -tx1 -j $((0x450)) -N8 "$SIDTMP/o.img")" = "$(od -An -tx1 -j $((0x450)) -N8 "$SIDTMP/r.img")" ]
	[ "$(od -An -tx1 -j $((0x480)) -N16 "$SIDTMP/o.img")" = "$(od -An -tx1 -j $((0x480)) -N16 "$SIDTMP/r.img")" ]
}

# files around the plan's bounds: text that fits one block less than it
# spans (4097..8191 bytes into one block, 12 KiB into two), text that does
# not, gzip streams (a few compressible bytes, no block saved) below and
# above the 64 KiB probe, random data
plan_tree() {
	mkdir -p "$1"
	for n in 4200 4500 6000 8000 12000; do
		yes "line $n of text" | head -c "$n" > "$1/t$n"
	done
	seq 1 1500 | head -c 6900 > "$1/seq6900"
	seq 1 5000 | gzip -n9 > "$1/small.gz"
	seq 1 60000 | gzip -n1 > "$1/big.gz"
	head -c 5000 /dev/urandom > "$1/r5000"
	{ head -c 3900 /dev/urandom; yes ab | head -c 3000; } > "$1/half"
}

@test "-zlz4hc: a file is compressed where erofs-utils 1.9.4 compresses it (a block saved) and flat where it is not; none larger than erofs-utils'" {
	need_sid_erofs
	plan_tree "$SIDTMP/src"
	"$MKFS_EROFS" --quiet -zlz4hc -T0 "$SIDTMP/o.img" "$SIDTMP/src"
	run chroot "$SID_ROOT" mkfs.erofs -zlz4hc -T0 "$SIDREL/r.img" "$SIDREL/src"
	[ "$status" -eq 0 ] || die "erofs-utils: $output"
	for f in "$SIDTMP"/src/*; do
		p=/${f##*/}
		o=$(zmap "$SIDREL/o.img" "$p" | grep -o 'layout=[0-9]*')
		r=$(zmap "$SIDREL/r.img" "$p" | grep -o 'layout=[0-9]*')
		# compressed: 1 (full) or 3 (compact); flat: 0 or 2
		[ "$(( ${o#layout=} & 1 ))" = "$(( ${r#layout=} & 1 ))" ] ||
			die "$p: ours $o, erofs-utils $r"
	done
	[ "$(stat -c %s "$SIDTMP/o.img")" -le "$(stat -c %s "$SIDTMP/r.img")" ]
	sums "$SIDTMP/src" > src.sha256
	sid_extracts o.img src.sha256
	run "$FSCK_EROFS" --extract=ours "$SIDTMP/o.img"
	[ "$status" -eq 0 ] || die "our fsck.erofs: $output"
	sums ours | diff src.sha256 -
}

@test "-zlz4hc -Eztailpacking: a file of a block or less is compressed into its inode where erofs-utils 1.9.4 does so; none larger than erofs-utils'" {
	need_sid_erofs
	plan_tree "$SIDTMP/src"
	for n in 1 40 100 3000 4095 4096; do
		yes "line $n of text" | head -c "$n" > "$SIDTMP/src/s$n"
	done
	seq 1 900 | head -c 3500 > "$SIDTMP/src/seq3500"
	head -c 2000 /dev/urandom > "$SIDTMP/src/r2000"
	"$MKFS_EROFS" --quiet -zlz4hc -Eztailpacking -T0 "$SIDTMP/o.img" "$SIDTMP/src"
	run chroot "$SID_ROOT" mkfs.erofs -zlz4hc -Eztailpacking -T0 "$SIDREL/r.img" "$SIDREL/src"
	[ "$status" -eq 0 ] || die "erofs-utils: $output"
	for f in "$SIDTMP"/src/s* "$SIDTMP"/src/r2000; do
		p=/${f##*/}
		o=$(zmap "$SIDREL/o.img" "$p" | grep -o 'layout=[0-9]*')
		r=$(zmap "$SIDREL/r.img" "$p" | grep -o 'layout=[0-9]*')
		[ "$(( ${o#layout=} & 1 ))" = "$(( ${r#layout=} & 1 ))" ] ||
			die "$p: ours $o, erofs-utils $r"
	done
	# s100 compressed, with its data inline (advise bit 3) and no block
	compact_with "$SIDREL/o.img" /s100 8
	[ "$(stat -c %s "$SIDTMP/o.img")" -le "$(stat -c %s "$SIDTMP/r.img")" ]
	sums "$SIDTMP/src" > src.sha256
	sid_extracts o.img src.sha256
	run "$FSCK_EROFS" --extract=ours "$SIDTMP/o.img"
	[ "$status" -eq 0 ] || die "our fsck.erofs: $output"
	sums ours | diff src.sha256 -
	mnt=$(mount_erofs "$SIDTMP/o.img")
	sums "$mnt" | diff src.sha256 -
}

# Text of words (seeded: the same bytes every run) whose lz4hc extents
# leave a last one of 4299 bytes compressed to 4063: with -E ztailpacking
# the inode, its index and that tail pass a block.  The kernel
# (fs/erofs/zmap.c) wants only the tail in one block, so the record starts
# late in a block and the tail lies in the next; erofs-utils' dump.erofs
# decodes the tail extent there, and its fsck.erofs, the host kernel and
# our fsck.erofs read the file back
@test "-zlz4hc -Eztailpacking: an inode and index crossing into the next block, the tail whole in it; erofs-utils 1.9.4 and the host kernel read the file" {
	need_sid_erofs
	mkdir "$SIDTMP/src"
	python3 -c '
import random, sys
r = random.Random(14)
vocab = ["".join(r.choice("abcdefghijklmnopqrstuvwxyz_") for _ in range(r.randint(3, 12))) for _ in range(3000)]
rr = random.Random(100)
out, size = [], 0
while size < 17300:
    w = rr.choice(vocab) + (" " if rr.random() < 0.85 else "\n")
    out.append(w)
    size += len(w)
open(sys.argv[1], "w").write("".join(out)[:17300])' "$SIDTMP/src/w"
	cp -r "$FSFORGE_TOP/liberofs" "$SIDTMP/src/code"
	"$MKFS_EROFS" --quiet -zlz4hc -Eztailpacking -T0 "$SIDTMP/o.img" "$SIDTMP/src"
	compact_with "$SIDREL/o.img" /w 8
	nid=$(chroot "$SID_ROOT" dump.erofs --path=/w "$SIDREL/o.img" | sed -n 's/^NID: \([0-9]*\).*/\1/p')
	# the last extent: "   3:   13001..   17300 |    4299 :    PA..   END |  4063"
	read -r pa plen < <(chroot "$SID_ROOT" dump.erofs --path=/w -e "$SIDREL/o.img" |
		awk -F'[ :.|]+' '/^ *[0-9]+:/ { pa = $6; len = $8 } END { print pa, len }')
	[ "$plen" -lt 4096 ] || die "the tail extent: $pa, $plen bytes"
	[ $((pa / 4096)) -eq $((nid * 32 / 4096 + 1)) ] ||
		die "the tail at $pa, not in the block after the inode's (nid $nid)"
	[ $((pa % 4096 + plen)) -le 4096 ] || die "the tail at $pa crosses a block"
	sums "$SIDTMP/src" > src.sha256
	sid_extracts o.img src.sha256
	run "$FSCK_EROFS" "$SIDTMP/o.img"
	[ "$status" -eq 0 ] || die "our fsck.erofs: $output"
	mnt=$(mount_erofs "$SIDTMP/o.img")
	sums "$mnt" | diff src.sha256 - || die "the host kernel's contents differ"
}

@test "-z with alternatives and no hints: every file takes the first; superblock as erofs-utils 1.9.4 writes it; each fsck.erofs extracts the other's image" {
	need_sid_erofs
	cp -a "$SRC/z" "$SIDTMP/src"
	sums "$SIDTMP/src" > src.sha256
	for z in "lz4hc:lzma 0" "lzma:lz4 -C16384 1" "lz4hc:lzma,dictsize=65536:lzma 0" \
		 "zstd:deflate:lzma -Elegacy-compress 3"; do
		set -- $z
		alg=${!#}
		opts=${z% *}
		# shellcheck disable=SC2086
		run "$MKFS_EROFS" --quiet -z$opts "$SIDTMP/o.img" "$SIDTMP/src"
		[ "$status" -eq 0 ] || die "-z$opts: $output"
		# shellcheck disable=SC2086
		run chroot "$SID_ROOT" mkfs.erofs -z$opts "$SIDREL/r.img" "$SIDREL/src"
		[ "$status" -eq 0 ] || die "erofs-utils -z$opts: $output"
		[ "$(od -An -tx1 -j $((0x454)) -N2 "$SIDTMP/o.img")" = "$(od -An -tx1 -j $((0x454)) -N2 "$SIDTMP/r.img")" ] ||
			die "-z$opts: algorithm bitmap"
		case $1 in zstd*) ;; *)	# zstd's window: ours fits the extent
			[ "$(od -An -tx1 -j $((0x480)) -N48 "$SIDTMP/o.img")" = "$(od -An -tx1 -j $((0x480)) -N48 "$SIDTMP/r.img")" ] ||
				die "-z$opts: records $(od -An -tx1 -j $((0x480)) -N48 "$SIDTMP/o.img") vs $(od -An -tx1 -j $((0x480)) -N48 "$SIDTMP/r.img")"
		esac
		line=$(zmap "$SIDREL/o.img" /numbers)
		[[ $line == *" alg1=$alg "* ]] || die "-z$opts: $line"
		rm -rf "$SIDTMP/x" ours
		run chroot "$SID_ROOT" fsck.erofs --extract="$SIDREL/x" "$SIDREL/o.img"
		[ "$status" -eq 0 ] || die "erofs-utils fsck.erofs -z$opts: $output"
		sums "$SIDTMP/x" | diff src.sha256 - || die "-z$opts: erofs-utils' extraction"
		run "$FSCK_EROFS" --extract=ours "$SIDTMP/r.img"
		[ "$status" -eq 0 ] || die "our fsck.erofs on erofs-utils' -z$opts: $output"
		sums ours | diff src.sha256 - || die "-z$opts: our extraction of erofs-utils' image"
	done
}

@test "multiple algorithms with -E dedupe, fragments, ztailpacking: same image for 1 and 2 workers, both fsck.erofs extract it; a pcluster is shared only within one algorithm" {
	need_sid_erofs
	zh_tree "$SIDTMP/src"
	zh_hints "$SIDTMP/hints"
	sums "$SIDTMP/src" > src.sha256
	for e in ztailpacking,dedupe fragments,dedupe all-fragments \
		 legacy-compress,dedupe; do
		for w in 1 2; do
			run "$MKFS_EROFS" --quiet -U clear -T 0 --workers=$w -zlz4hc:lzma:zstd -E$e \
				--compress-hints="$SIDTMP/hints" "$SIDTMP/w$w.img" "$SIDTMP/src"
			[ "$status" -eq 0 ] || die "-E$e: $output"
		done
		cmp "$SIDTMP/w1.img" "$SIDTMP/w2.img" || die "-E$e: 1 and 2 workers differ"
		rm -rf "$SIDTMP/x" ours
		run chroot "$SID_ROOT" fsck.erofs --extract="$SIDREL/x" "$SIDREL/w1.img"
		[ "$status" -eq 0 ] || die "erofs-utils fsck.erofs -E$e: $output"
		sums "$SIDTMP/x" | diff src.sha256 - || die "-E$e: erofs-utils' extraction"
		run "$FSCK_EROFS" --extract=ours "$SIDTMP/w1.img"
		[ "$status" -eq 0 ] || die "our fsck.erofs -E$e: $output"
		sums ours | diff src.sha256 - || die "-E$e: our extraction"
	done
	# -E dedupe: s/b (lz4hc, as s/a) points at s/a's pclusters; s/c
	# (lzma by its hint) has its own
	"$MKFS_EROFS" --quiet -zlz4hc:lzma:zstd -Ededupe --compress-hints="$SIDTMP/hints" "$SIDTMP/d.img" "$SIDTMP/src"
	first() {
		chroot "$SID_ROOT" dump.erofs --path="$1" -e "$SIDREL/d.img" |
			awk -F'[|:]' '/^ *0:/ { split($4, a, "\\."); print a[1] + 0; exit }'
	}
	[ "$(first /s/a)" -gt 0 ]
	[ "$(first /s/b)" -eq "$(first /s/a)" ] || die "s/b does not share s/a's pclusters"
	[ "$(first /s/c)" -ne "$(first /s/a)" ] || die "s/c (lzma) points at s/a's lz4 pclusters"
	[[ $(zmap "$SIDREL/d.img" /s/c) == *" alg1=1 "* ]]
}

@test "--compress-hints errors: a bad line is named, nothing is written" {
	mkdir src
	seq 1 10000 > src/f
	printf '4096 1 f\n' > h
	run "$MKFS_EROFS" --compress-hints=h x.img src
	[ "$status" -eq 1 ]
	[[ $output == *"--compress-hints needs -z"* ]]
	run "$MKFS_EROFS" -zlz4hc --compress-hints=h x.img src
	[ "$status" -eq 1 ]
	[[ $output == *"h:1: invalid compression configuration index '1' (0 to 0"* ]]
	printf '# c\n4096 0 f\n8192 x f\n' > h
	run "$MKFS_EROFS" -zlz4hc:lzma --compress-hints=h x.img src
	[ "$status" -eq 1 ]
	[[ $output == *"h:3: invalid compression configuration index 'x'"* ]]
	printf '4k f\n' > h
	run "$MKFS_EROFS" -zlz4hc --compress-hints=h x.img src
	[ "$status" -eq 1 ]
	[[ $output == *"h:1: invalid pcluster size '4k'"* ]]
	printf '4096\n' > h
	run "$MKFS_EROFS" -zlz4hc --compress-hints=h x.img src
	[ "$status" -eq 1 ]
	[[ $output == *"h:1: no match pattern"* ]]
	printf '4096 (\n' > h
	run "$MKFS_EROFS" -zlz4hc --compress-hints=h x.img src
	[ "$status" -eq 1 ]
	[[ $output == *"h:1: invalid regular expression '('"* ]]
	printf '2097152 f\n' > h
	run "$MKFS_EROFS" -zlz4hc --compress-hints=h x.img src
	[ "$status" -eq 1 ]
	[[ $output == *"h:1: pcluster size 2097152 is larger"* ]]
	run "$MKFS_EROFS" -zlz4hc --compress-hints=missing x.img src
	[ "$status" -eq 1 ]
	[[ $output == *"cannot open compress hints missing"* ]]
	[ ! -e x.img ]
}

@test "-zlz4hc: files of the same content are compressed once, the image as with each compressed (1, 2, 4 workers); fsck.erofs 1.9 extracts it" {
	need_sid_erofs
	dup=$BATS_TEST_TMPDIR/dup
	mkdir -p "$dup/a" "$dup/b" "$dup/c/d"
	seq 1 120000 > "$dup/a/numbers"
	yes "a line of text" | head -c 20000 > "$dup/a/text"
	for d in b c c/d; do
		cp "$dup/a/numbers" "$dup/$d/numbers"
		cp "$dup/a/text" "$dup/$d/text.copy"
	done
	# same size and first block, other content: compressed on its own
	{ head -c 4096 "$dup/a/numbers"; seq 5 200000 | head -c $(($(stat -c %s "$dup/a/numbers") - 4096)); } > "$dup/c/decoy"
	# same content, another pcluster size (a hint): compressed on its own
	cp "$dup/a/numbers" "$dup/c/d/numbers.big"
	echo "16384 numbers\.big\$" > "$BATS_TEST_TMPDIR/hints"
	(cd "$dup" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) > dup.sha256
	opts=(-zlz4hc --compress-hints="$BATS_TEST_TMPDIR/hints" -T 0 -U clear --xattr-inode-digest=trusted.erofs.fingerprint)
	FSFORGE_EROFS_ZREUSE=0 "$MKFS_EROFS" --quiet "${opts[@]}" --workers=1 each.img "$dup"
	for w in 1 2 4; do
		run "$MKFS_EROFS" -d 6 "${opts[@]}" --workers=$w "w$w.img" "$dup"
		[ "$status" -eq 0 ] || die "$w workers: $output"
		cmp each.img "w$w.img" || die "$w workers: not the image with each file compressed"
		if [ "$w" -eq 1 ]; then
			# one worker: every copy after the first of each
			# content (3 + 3), not the decoy nor the hinted one
			[[ "$output" == *"compressed files: 6 of the same content as an earlier one"* ]] ||
				die "1 worker: $output"
		fi
	done
	cp w1.img "$SIDTMP/w1.img"
	run chroot "$SID_ROOT" fsck.erofs --xattr-inode-digest --extract="$SIDREL/x" "$SIDREL/w1.img"
	[ "$status" -eq 0 ] || die "fsck.erofs: $output"
	(cd "$SIDTMP/x" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) | diff dup.sha256 - ||
		die "extracted content differs"
}
