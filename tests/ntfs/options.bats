#!/usr/bin/env bats
# mkfs.ntfs command line: help, version, mkntfs-compatible options and
# exit codes, -n writing nothing, impossible geometry named in the error,
# and `yes | mkfs -t ntfs` (as fstests formats) never blocking.
load ../lib/common
load ntfs_helpers

setup() { cd_tmp; }
teardown() {
	umount_all
	! mountpoint -q "$BATS_TEST_TMPDIR/root/proc" || umount "$BATS_TEST_TMPDIR/root/proc"
}

@test "--help names every option and exits 0; -V prints the version" {
	run "$MKFS_NTFS" --help
	[ "$status" -eq 0 ]
	for o in --fast --quick --full --label --enable-compression --no-action \
		--cluster-size --sector-size --partition-start --heads \
		--sectors-per-track --mft-zone-multiplier --zero-time --with-uuid \
		--no-indexing --force --quiet --verbose --version --help; do
		[[ $output == *"$o"* ]] || die "help lacks $o"
	done
	run "$MKFS_NTFS" -V
	[ "$status" -eq 0 ]
	[[ $output == *"mkfs.ntfs (fsforge)"* ]]
}

@test "usage errors exit 1 like mkntfs" {
	run "$MKFS_NTFS" --bogus v.img
	[ "$status" -eq 1 ]
	run "$MKFS_NTFS"
	[ "$status" -eq 1 ]
	[[ $output == *"no device given"* ]]
	run "$MKFS_NTFS" a b c
	[ "$status" -eq 1 ]
	run "$MKFS_NTFS" -z 5 v.img 1000
	[ "$status" -eq 1 ]
	[[ $output == *"'5'"* ]]
}

@test "-n writes nothing: existing image unchanged, missing image not created" {
	head -c 4M /dev/urandom > v.img
	before=$(sha256sum < v.img)
	run "$MKFS_NTFS" -n v.img
	[ "$status" -eq 0 ]
	[[ $output == *"nothing written"* ]]
	[ "$(sha256sum < v.img)" = "$before" ]
	run "$MKFS_NTFS" -n new.img 100000
	[ "$status" -eq 0 ]
	[ ! -e new.img ]
}

@test "impossible geometry is rejected with the value named" {
	truncate -s 64M v.img
	run "$MKFS_NTFS" -c 3000 v.img
	[ "$status" -eq 1 ]; [[ $output == *"cluster size 3000"* ]]
	run "$MKFS_NTFS" -c 4M v.img
	[ "$status" -eq 1 ]; [[ $output == *"cluster size 4194304"* ]]
	run "$MKFS_NTFS" -s 4096 -c 1024 v.img
	[ "$status" -eq 1 ]; [[ $output == *"cluster size 1024 is smaller than the sector size 4096"* ]]
	run "$MKFS_NTFS" -s 300 v.img
	[ "$status" -eq 1 ]; [[ $output == *"sector size 300"* ]]
	truncate -s 256K small.img
	run "$MKFS_NTFS" small.img
	[ "$status" -eq 1 ]; [[ $output == *"262144 bytes is too small"* ]]
	run "$MKFS_NTFS" -c 512 big.img $((4 * 1024 * 1024 * 1024 * 2))
	[ "$status" -eq 1 ]; [[ $output == *"cluster size 512 gives"* ]]
	: > empty.img
	run "$MKFS_NTFS" empty.img
	[ "$status" -eq 1 ]; [[ $output == *"empty.img is empty or missing: give the NUMBER-OF-SECTORS"* ]]
}

@test "NUMBER-OF-SECTORS creates or sizes a sparse image" {
	"$MKFS_NTFS" -q new.img 204800
	[ "$(stat -c %s new.img)" -eq $((204800 * 512)) ]
	need_ntfs3g
	ntfsfix_clean new.img
}

@test "-T: every time stamp is 1970-01-01; -U: the volume has an object id" {
	need_ntfs3g
	truncate -s 64M v.img
	"$MKFS_NTFS" -q -T -U v.img
	run ntfsinfo -i 5 v.img
	echo "$output" | grep -i time | head -4
	grep -qi 'Thu Jan  1 00:00:00 1970' <<<"$output"
	run ntfsinfo -i 3 v.img
	[[ $output == *"OBJECT_ID"* || $output == *"Object ID"* ]]
	ntfsfix_clean v.img
}

@test "-C and -I set the root directory's compressed / not-indexed flags" {
	need_ntfs3g
	truncate -s 64M v.img
	"$MKFS_NTFS" -q -C -I v.img
	run ntfsinfo -i 5 v.img
	echo "$output" | grep -i 'attributes' | head -3
	[[ $output == *COMPRESSED* ]]
	[[ $output == *NOT_CONTENT_INDEXED* ]]
	run "$MKFS_NTFS" -C -c 8192 v.img
	[ "$status" -eq 1 ]
}

@test "--full zeroes the volume; quick keeps the image sparse" {
	head -c 8M /dev/urandom > v.img
	"$MKFS_NTFS" -q --full v.img
	# past the metadata, the random bytes are gone
	[ "$(dd if=v.img bs=1M skip=1 count=1 status=none | tr -d '\0' | wc -c)" -eq 0 ]
	truncate -s 1G q.img
	"$MKFS_NTFS" -q -Q q.img
	# $LogFile (10 MiB here, all 0xFF) is the only large allocation
	[ "$(du -k q.img | cut -f1)" -lt $((16 * 1024)) ]
}

# A root tree of our own in which /sbin/mkfs.ntfs is ours: util-linux's mkfs
# looks in /sbin before $PATH, and on the host /sbin/mkfs.ntfs is ntfs-3g's
# mkntfs.  chroot needs no mount namespace, so the test does not depend on how
# / is mounted (unshare -m cannot make / private where / is no mount point,
# as in a chroot); only /proc is mounted, for the sanitizer runtime.
mkfs_root() {
	local r=$1 b lib blkid
	mkdir -p "$r/bin" "$r/sbin" "$r/proc"
	for b in mkfs sh yes; do
		cp "$(command -v "$b")" "$r/bin/"
	done
	cp "$MKFS_NTFS" "$r/sbin/mkfs.ntfs"
	# libblkid is loaded at run time (dlopen) to probe for signatures
	blkid=$(ldconfig -p | awk '$1 == "libblkid.so.1" && $NF ~ /^\// { print $NF; exit }')
	[ -n "$blkid" ] || die "libblkid.so.1 not found by ldconfig"
	mkdir -p "$r$(dirname "$blkid")"
	cp -L "$blkid" "$r$blkid"
	for lib in $(ldd "$r"/bin/* "$r/sbin/mkfs.ntfs" "$blkid" |
		awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// && $1 !~ /:$/ { print $1 }' | sort -u); do
		mkdir -p "$r$(dirname "$lib")"
		cp -L "$lib" "$r$lib"
	done
	mount -t proc proc "$r/proc"
}

@test "yes | mkfs -t ntfs DEV runs our mkfs.ntfs without blocking" {
	mkfs_root root
	truncate -s 64M root/v.img
	run timeout 60 chroot root /bin/sh -c 'yes | mkfs -t ntfs -Q /v.img'
	umount root/proc
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"NTFS volume of"* ]]
	need_ntfs3g
	ntfsfix_clean root/v.img
}

@test "a missing path without NUMBER-OF-SECTORS creates nothing; a failed run removes the file it created" {
	run "$MKFS_NTFS" nope.img
	[ "$status" -eq 1 ]; [[ $output == *"cannot open nope.img: No such file or directory"* ]]
	[ ! -e nope.img ]
	run "$MKFS_NTFS" -c 3000 new.img 100000
	[ "$status" -eq 1 ]
	[ ! -e new.img ]
}

@test "-p, -H and -S are stored in the boot sector and its backup" {
	truncate -s 64M v.img
	"$MKFS_NTFS" -q -p 2048 -H 16 -S 32 v.img
	# sectors per track at 0x18, heads at 0x1a, hidden sectors at 0x1c
	[ "$(od -An -tu2 -j24 -N4 v.img | xargs)" = "32 16" ]
	[ "$(od -An -tu4 -j28 -N4 v.img | xargs)" = 2048 ]
	cmp <(head -c 512 v.img) <(tail -c 512 v.img)
}

@test "-L: 128 UTF-16 units at most, valid UTF-8 only" {
	truncate -s 64M v.img
	run "$MKFS_NTFS" -L "$(printf 'x%.0s' $(seq 1 129))" v.img
	[ "$status" -eq 1 ]; [[ $output == *"is too long: at most 128 UTF-16 units"* ]]
	run "$MKFS_NTFS" -L "$(printf 'bad\xff')" v.img
	[ "$status" -eq 1 ]; [[ $output == *"is not valid UTF-8"* ]]
	"$MKFS_NTFS" -q -L "$(printf 'y%.0s' $(seq 1 128))" v.img
	need_ntfs3g
	[ "$(ntfslabel v.img)" = "$(printf 'y%.0s' $(seq 1 128))" ]
}
