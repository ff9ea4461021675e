#!/usr/bin/env bats
# mkfs.erofs images under Linux 7.x (Debian sid kernel in QEMU): the tree
# read back by the real driver, fingerprints, erofs-utils 1.9's fsck, and
# page-cache sharing between two fingerprinted images (inode_share).
# One boot for the whole file.
load ../lib/common

setup_file() {
	export W=$BATS_FILE_TMPDIR
	mkdir -p "$W/share"
	"$LIB/mktree" "$W/tree"
	"$LIB/manifest" "$W/tree" > "$W/tree.manifest"
	"$MKFS_EROFS" --quiet --xattr-inode-digest=trusted.erofs.fingerprint "$W/tree.img" "$W/tree"
	# two versions of an application: 160 files of 256 KiB, 16 of them
	# changed and 8 added in version B
	mkdir -p "$W/a/lib" "$W/b/lib"
	for i in $(seq 1 160); do
		head -c 262144 /dev/urandom > "$W/a/lib/f$i"
		cp "$W/a/lib/f$i" "$W/b/lib/f$i"
	done
	for i in $(seq 1 16); do head -c 262144 /dev/urandom > "$W/b/lib/f$i"; done
	for i in $(seq 161 168); do head -c 262144 /dev/urandom > "$W/b/lib/f$i"; done
	"$MKFS_EROFS" --quiet --xattr-inode-digest=trusted.erofs.fingerprint "$W/a.img" "$W/a"
	"$MKFS_EROFS" --quiet --xattr-inode-digest=trusted.erofs.fingerprint "$W/b.img" "$W/b"
	# one flipped byte in the middle of file data must fail fsck's digests
	cp "$W/a.img" "$W/corrupt.img"
	size=$(stat -c %s "$W/corrupt.img")
	printf '\x5a' | dd of="$W/corrupt.img" bs=1 seek=$((size - 100000)) conv=notrunc status=none
	# compressed (lz4hc, big pclusters): the rich tree plus compressible
	# and incompressible files; two versions of an application whose
	# files compress (base64 text), 8 of 80 changed and 4 added in B
	cp -a "$W/tree" "$W/ztree"
	mkdir -p "$W/ztree/z"
	head -c 3000000 /dev/zero > "$W/ztree/z/zeros"
	seq 1 300000 > "$W/ztree/z/numbers"
	{ head -c 70000 /dev/urandom; seq 1 30000; head -c 5001 /dev/urandom; } > "$W/ztree/z/mixed"
	# identical files for -E dedupe and fragments
	cp "$W/ztree/z/numbers" "$W/ztree/z/numbers.copy"
	cp "$W/ztree/z/mixed" "$W/ztree/z/mixed.copy"
	# the first MB of numbers, then other text: the pcluster of numbers
	# that the MB ends in is shared in part (PARTIAL_REF, in frag.img)
	{ head -c 1000000 "$W/ztree/z/numbers"; seq 5000001 5020000; } > "$W/ztree/z/numbers.prefix"
	# incompressible, and the same bytes with another end (one .gz from two
	# builds): under -E fragments,dedupe both are raw pclusters, the
	# second's shared with the first's, their tails packed (frag.img)
	head -c 200000 /dev/urandom > "$W/ztree/z/random"
	{ cat "$W/ztree/z/random"; printf 'another end'; } > "$W/ztree/z/random.v2"
	# a shared middle behind different heads: -E dedupe points the second
	# file's extents at the first's pclusters (full indexes)
	seq 700001 800000 > "$W/mid"
	{ head -c 5000 /dev/urandom; cat "$W/mid"; head -c 3000 /dev/urandom; } > "$W/ztree/z/mid-a"
	{ head -c 7777 /dev/urandom; cat "$W/mid"; seq 1 500; } > "$W/ztree/z/mid-b"
	"$LIB/manifest" "$W/ztree" > "$W/ztree.manifest"
	"$MKFS_EROFS" --quiet -zlz4hc -C65536 --xattr-inode-digest=trusted.erofs.fingerprint "$W/ztree.img" "$W/ztree"
	# the same tree with each other algorithm (one image each, varied
	# pcluster sizes and index forms)
	"$MKFS_EROFS" --quiet -zzstd -C65536 "$W/zstd.img" "$W/ztree"
	"$MKFS_EROFS" --quiet -zdeflate,level=9 "$W/deflate.img" "$W/ztree"
	"$MKFS_EROFS" --quiet -zlzma -C16384 -Elegacy-compress "$W/lzma.img" "$W/ztree"
	# -E ztailpacking, fragments, all-fragments, dedupe (issue 14)
	"$MKFS_EROFS" --quiet -zlz4hc -Eztailpacking,dedupe "$W/ztail.img" "$W/ztree"
	"$MKFS_EROFS" --quiet -zlz4hc -C16384 -Efragments,dedupe -Elegacy-compress "$W/frag.img" "$W/ztree"
	"$MKFS_EROFS" --quiet -zlzma -C65536 -Eall-fragments,dedupe "$W/allfrag.img" "$W/ztree"
	# two algorithms chosen per file by --compress-hints (issue 14): lzma
	# in 64 KiB pclusters (above -C) for numbers and the shared middles,
	# zeros left uncompressed, the rest lz4hc in 16 KiB pclusters; the
	# copies of numbers (lz4hc) cannot share its lzma pclusters
	printf '# size [index] regex\n0 ^z/zeros$\n65536 1 ^z/(numbers|mid-a|mid-b)$\n' > "$W/hints"
	"$MKFS_EROFS" --quiet -zlz4hc:lzma -C16384 --compress-hints="$W/hints" -Eztailpacking,dedupe "$W/zhints.img" "$W/ztree"
	mkdir -p "$W/za/lib" "$W/zb/lib"
	for i in $(seq 1 80); do
		head -c 196608 /dev/urandom | base64 -w 76 > "$W/za/lib/f$i"
		cp "$W/za/lib/f$i" "$W/zb/lib/f$i"
	done
	for i in $(seq 1 8) $(seq 81 84); do head -c 196608 /dev/urandom | base64 -w 76 > "$W/zb/lib/f$i"; done
	"$MKFS_EROFS" --quiet -zlz4hc --xattr-inode-digest=trusted.erofs.fingerprint "$W/za.img" "$W/za"
	"$MKFS_EROFS" --quiet -zlz4hc --xattr-inode-digest=trusted.erofs.fingerprint "$W/zb.img" "$W/zb"
	# the same two versions as shipped with fragments and dedupe
	"$MKFS_EROFS" --quiet -zlz4hc -Efragments,dedupe --xattr-inode-digest=trusted.erofs.fingerprint "$W/zfa.img" "$W/za"
	"$MKFS_EROFS" --quiet -zlz4hc -Efragments,dedupe --xattr-inode-digest=trusted.erofs.fingerprint "$W/zfb.img" "$W/zb"
	cp "$LIB/manifest" "$W/share/manifest"
	run "$FSFORGE_TOP/tests/kernel/vm-run" --sid --drivers erofs --timeout 1500 \
		--share "$W/share" --disk "$W/tree.img,ro" --disk "$W/a.img,ro" \
		--disk "$W/b.img,ro" --disk "$W/corrupt.img,ro" \
		--disk "$W/ztree.img,ro" --disk "$W/za.img,ro" --disk "$W/zb.img,ro" \
		--disk "$W/zstd.img,ro" --disk "$W/deflate.img,ro" --disk "$W/lzma.img,ro" \
		--disk "$W/ztail.img,ro" --disk "$W/frag.img,ro" --disk "$W/allfrag.img,ro" \
		--disk "$W/zfa.img,ro" --disk "$W/zfb.img,ro" --disk "$W/zhints.img,ro" \
		"$FSFORGE_TOP/tests/kernel/guest/erofs-check.sh"
	echo "$output" > "$W/vm.log"
	echo "$status" > "$W/vm.rc"
}

@test "kernel: the guest ran to the end with a clean erofs log" {
	[ "$(cat "$W/vm.rc")" -eq 0 ] || { tail -40 "$W/vm.log"; false; }
}

@test "kernel: every file, type, mode, owner, time, link count and xattr matches the source" {
	diff "$W/tree.manifest" "$W/share/result/tree.manifest"
}

@test "kernel: fingerprint xattr is sha256: + SHA-256 of each file" {
	[ -s "$W/share/result/fingerprints" ]
	! grep -v '^ok$' "$W/share/result/fingerprints" || false
	[ "$(wc -l < "$W/share/result/fingerprints")" -gt 30 ]
}

@test "reference: erofs-utils 1.9 fsck.erofs --xattr-inode-digest passes" {
	cat "$W/share/result/fsck.version" "$W/share/result/fsck.log"
	grep -q '1\.9' "$W/share/result/fsck.version"
	[ "$(cat "$W/share/result/fsck.rc")" -eq 0 ]
}

@test "reference: the same fsck.erofs rejects an image whose file data changed" {
	cat "$W/share/result/fsck-corrupt.log"
	[ "$(cat "$W/share/result/fsck-corrupt.rc")" -ne 0 ]
}

# page-cache growth while reading image A, then B's files identical to
# A's, then the rest of B: "A B-shared B-rest" in kB (guest step 3/6).
# Issue 14's measure: with inode_share the second image's shared files
# add <= 5% of what they add without it.
# share_check NAME MIN_SHARED_KB
share_check() {
	read -r pa ps pr < "$W/share/result/$1.plain"
	read -r sa ss sr < "$W/share/result/$1.shared"
	echo "# $1: plain A ${pa} B-shared ${ps} B-rest ${pr} kB; inode_share A ${sa} B-shared ${ss} B-rest ${sr} kB" >&3
	[ "$ps" -gt "$2" ] || die "$1: B's shared files added only ${ps} kB without inode_share"
	[ "$ss" -le $((ps * 5 / 100)) ] || die "$1: B's shared files added ${ss} kB with inode_share (> 5% of ${ps})"
	# B's own files are cached as usual
	[ "$sr" -gt $((pr * 80 / 100)) ] || die "$1: B's changed files added ${sr} kB, ${pr} without sharing"
}

@test "kernel: inode_share caches identical files once (page cache growth)" {
	# 144 of B's 168 files of 256 KiB (36 MiB) are A's
	share_check cache 30000
	run grep -q 'Turning off inode_share' "$W/share/result/dmesg"
	[ "$status" -eq 1 ]
}

@test "kernel: a compressed image (lz4hc, 64 KiB pclusters) reads back as the source" {
	diff "$W/ztree.manifest" "$W/share/result/ztree.manifest"
}

@test "kernel: zstd, deflate and lzma images read back as the source" {
	for alg in zstd deflate lzma; do
		diff "$W/ztree.manifest" "$W/share/result/$alg.manifest" || die "$alg"
	done
}

@test "kernel: -E ztailpacking, fragments, all-fragments and dedupe images read back as the source" {
	for img in ztail frag allfrag; do
		diff "$W/ztree.manifest" "$W/share/result/$img.manifest" || die "$img"
	done
}

@test "kernel: an lz4hc:lzma image with --compress-hints reads back as the source; fsck.erofs 1.9 passes" {
	diff "$W/ztree.manifest" "$W/share/result/zhints.manifest"
	cat "$W/share/result/zhints-fsck.log"
	[ "$(cat "$W/share/result/zhints-fsck.rc")" -eq 0 ]
}

@test "reference: fsck.erofs 1.9 --xattr-inode-digest passes on the compressed image" {
	cat "$W/share/result/zfsck.log"
	[ "$(cat "$W/share/result/zfsck.rc")" -eq 0 ]
}

@test "kernel: inode_share caches identical compressed files once" {
	# 72 of B's 84 files of 260 KiB of text (18 MiB) are A's
	share_check zcache 15000
}

@test "kernel: inode_share caches identical files once in -Efragments,dedupe images" {
	share_check fcache 15000
}
