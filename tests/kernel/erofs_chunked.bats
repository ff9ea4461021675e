#!/usr/bin/env bats
# Chunk-based files of mkfs.erofs --chunksize under Linux 7.x (Debian sid
# kernel in QEMU): a tree with holes, all-zero and duplicate chunks read
# back as the source (manifest, fingerprints), and a 1 GiB file with three
# data islands read back byte for byte, its SEEK_DATA/SEEK_HOLE segments
# those of the source; the index-mode image of a tar of the tree
# (mkfs.erofs --tar=i) mounted with the tar as its device reads back what
# Python's tarfile reads from the archive, and a --blobdev image with its
# blob device reads back the tree.  One boot for the whole file.
load ../lib/common

setup_file() {
	export W=$BATS_FILE_TMPDIR
	mkdir -p "$W/share" "$W/tree/c" "$W/big"
	head -c 65536 /dev/urandom > "$W/block"
	for _ in 1 2 3 4; do cat "$W/block"; done > "$W/tree/c/dup"
	head -c 131072 /dev/zero > "$W/tree/c/zeros"
	head -c 100001 /dev/urandom > "$W/tree/c/odd"
	ln "$W/tree/c/odd" "$W/tree/odd.link"
	printf hello > "$W/tree/small"
	setfattr -n user.note -v chunked "$W/tree/c/dup"
	truncate -s $((8 << 20)) "$W/tree/c/sparse"
	head -c 65536 /dev/urandom | dd of="$W/tree/c/sparse" bs=65536 seek=40 conv=notrunc status=none
	truncate -s $((1 << 30)) "$W/big/island"
	head -c 131072 /dev/urandom | dd of="$W/big/island" bs=65536 seek=0 conv=notrunc status=none
	head -c 65536 /dev/urandom | dd of="$W/big/island" bs=65536 seek=4800 conv=notrunc status=none
	head -c 196608 /dev/urandom | dd of="$W/big/island" bs=65536 seek=16381 conv=notrunc status=none
	"$LIB/manifest" "$W/tree" > "$W/tree.manifest"
	python3 "$FSFORGE_TOP/tests/erofs/sparse_map.py" --segments "$W/big/island" > "$W/big.map"
	"$MKFS_EROFS" --quiet --chunksize=65536 --xattr-inode-digest=trusted.erofs.fingerprint \
		"$W/tree.img" "$W/tree"
	"$MKFS_EROFS" --quiet --chunksize=65536 "$W/big.img" "$W/big"
	tar --format=gnu -C "$W/tree" -cf "$W/tree.tar" .
	python3 "$FSFORGE_TOP/tests/erofs/tar_manifest.py" "$W/tree.tar" > "$W/tar.manifest"
	"$MKFS_EROFS" --quiet --tar=i "$W/index.img" "$W/tree.tar"
	"$MKFS_EROFS" --quiet --chunksize=65536 --blobdev="$W/blob" "$W/blob.img" "$W/tree"
	cp "$LIB/manifest" "$FSFORGE_TOP/tests/erofs/sparse_map.py" "$W/share/"
	run "$FSFORGE_TOP/tests/kernel/vm-run" --sid --drivers erofs --timeout 600 \
		--share "$W/share" --disk "$W/tree.img,ro" --disk "$W/big.img,ro" \
		--disk "$W/tree.tar,ro" --disk "$W/index.img,ro" \
		--disk "$W/blob,ro" --disk "$W/blob.img,ro" \
		"$FSFORGE_TOP/tests/kernel/guest/erofs-chunked.sh"
	echo "$output" > "$W/vm.log"
	echo "$status" > "$W/vm.rc"
}

@test "kernel: the guest ran to the end with a clean erofs log" {
	[ "$(cat "$W/vm.rc")" -eq 0 ] || die "$(tail -40 "$W/vm.log")"
}

# the harness's --sid mode, on this boot (tests/kernel/harness.bats)
@test "harness --sid: the script passes (exit 0) and sid tools run in the chroot, whose tree is writable" {
	cat "$W/share/result/sid-tools"
	[ "$(cat "$W/vm.rc")" -eq 0 ]
	[ "$(cat "$W/share/result/sid-ok")" = ok ]
	grep -q '^getfattr ' "$W/share/result/sid-tools"
	grep -q '^fsck.erofs (erofs-utils) 1\.' "$W/share/result/sid-tools"
}

@test "kernel: a tree of chunk-based files (holes, zero and duplicate chunks) matches the source, fingerprints included" {
	diff "$W/tree.manifest" "$W/share/result/tree.manifest"
	[ -s "$W/share/result/fingerprints" ]
	run grep -v '^ok$' "$W/share/result/fingerprints"
	[ "$status" -eq 1 ] || die "$output"
}

@test "kernel: the 1 GiB file with 3 islands reads back byte for byte, SEEK_DATA segments equal the source's" {
	[ "$(cat "$W/share/result/big.rc")" -eq 0 ]
	grep -c '^seg ' "$W/big.map"
	[ "$(grep -c '^seg ' "$W/big.map")" -eq 3 ]
	diff "$W/big.map" "$W/share/result/big.map"
}

@test "kernel: the --tar=i image mounted with -o device=TAR reads back tarfile's manifest of the archive" {
	[ -s "$W/share/result/index.manifest" ] || die "no manifest: $(tail -20 "$W/vm.log")"
	grep -v '^	' "$W/share/result/index.manifest" | diff "$W/tar.manifest" -
}

@test "kernel: the --blobdev image mounted with -o device=BLOB reads back the tree" {
	[ -s "$W/share/result/blob.manifest" ] || die "no manifest: $(tail -20 "$W/vm.log")"
	diff "$W/tree.manifest" "$W/share/result/blob.manifest"
}
