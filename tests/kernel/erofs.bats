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
	cp "$LIB/manifest" "$W/share/manifest"
	run "$FSFORGE_TOP/tests/kernel/vm-run" --sid --drivers erofs --timeout 900 \
		--share "$W/share" --disk "$W/tree.img,ro" --disk "$W/a.img,ro" \
		--disk "$W/b.img,ro" --disk "$W/corrupt.img,ro" "$FSFORGE_TOP/tests/kernel/guest/erofs-check.sh"
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

@test "kernel: inode_share caches identical files once (page cache growth)" {
	plain=$(cat "$W/share/result/cache.plain")
	shared=$(cat "$W/share/result/cache.shared")
	echo "# page cache growth: plain ${plain} kB, inode_share ${shared} kB" >&3
	# 40 MiB + 40 MiB read; 144 of the 168 files of B are shared with A
	[ "$plain" -gt 70000 ]
	[ "$shared" -lt $((plain * 70 / 100)) ]
	! grep -q 'Turning off inode_share' "$W/share/result/dmesg"
}
