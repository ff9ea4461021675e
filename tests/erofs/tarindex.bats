#!/usr/bin/env bats
# mkfs.erofs --tar=i (index mode: metadata only, file data mapped to the
# tar as extra device 1), --tar=headerball and --chunksize --blobdev, and
# fsck.erofs --device: tars from GNU tar and Python's tarfile give index
# images whose trees, extracted by erofs-utils 1.9.4's fsck.erofs and by
# ours with the tar as device, have the manifest Python's tarfile reads
# from the archive (tests/erofs/tar_manifest.py); erofs-utils' own index
# and blobdev images are read by ours; a missing, short or surplus device
# is refused.
load ../lib/common
load erofs_helpers

FSCK_EROFS=$FSFORGE_BUILDDIR/fsck/fsck.erofs
TARMAN=$FSFORGE_TOP/tests/erofs/tar_manifest.py

setup_file() {
	export TARS=$BATS_FILE_TMPDIR/tars
	mkdir -p "$TARS"
	python3 "$FSFORGE_TOP/tests/erofs/mktars.py" "$TARS"
	# a tree for GNU tar: file sizes on and off the 512-byte grid, a
	# hard link, a symlink, devices, xattrs, an empty file
	local s=$BATS_FILE_TMPDIR/gsrc
	export GSRC=$s
	mkdir -p "$s/etc/deep" "$s/var"
	seq 1 40000 > "$s/etc/numbers"
	head -c 123457 /dev/urandom > "$s/etc/random"
	head -c 8192 /dev/urandom > "$s/etc/aligned"
	cp "$s/etc/aligned" "$s/var/same"
	printf 'conf\n' > "$s/etc/deep/conf"
	: > "$s/etc/empty"
	ln "$s/etc/numbers" "$s/var/numbers.hard"
	ln -s ../etc/deep/conf "$s/var/sym"
	mknod "$s/var/tty" c 5 0
	mkfifo "$s/var/fifo"
	chown 1234:5678 "$s/etc/random"
	setfattr -n user.note -v "a note" "$s/etc/deep/conf"
	touch -h -d '2021-02-03 04:05:06.789012345' "$s/etc/deep/conf" "$s/var/sym"
	local fmt xattrs
	for fmt in ustar gnu posix; do
		xattrs=()
		[ $fmt != posix ] || xattrs=(--xattrs --xattrs-include='*')
		tar --format=$fmt "${xattrs[@]}" -C "$s" -cf "$TARS/gnutar-$fmt.tar" .
	done
}

setup() { cd_tmp; }
teardown() {
	if [ -n "${SIDTMP:-}" ]; then rm -rf "$SIDTMP"; fi
}

tree_manifest() {
	"$LIB/manifest" "$1" --drop-xattr trusted.erofs.fingerprint | grep -v '^	'
}

# extract IMG (in SIDTMP) with DEV (in SIDTMP) as device 1 by erofs-utils'
# fsck.erofs and by ours; both trees must have manifest want.manifest
check_both() {
	local img=$1 dev=$2 what=$3
	rm -rf "$SIDTMP/x" ours
	run chroot "$SID_ROOT" fsck.erofs --device="$SIDREL/$dev" --extract="$SIDREL/x" --xattrs "$SIDREL/$img"
	[ "$status" -eq 0 ] || die "erofs-utils fsck.erofs on $what: $output"
	tree_manifest "$SIDTMP/x" | diff want.manifest - || die "erofs-utils' extraction of $what"
	run "$FSCK_EROFS" --device="$SIDTMP/$dev" --extract=ours --xattrs "$SIDTMP/$img"
	[ "$status" -eq 0 ] || die "our fsck.erofs on $what: $output"
	tree_manifest ours | diff want.manifest - || die "our extraction of $what"
}

@test "tarindex: --tar=i of GNU tar's and tarfile's archives, extracted with the tar as device by both fscks, equals tarfile's manifest" {
	need_sid_erofs
	local t
	for t in gnutar-gnu gnutar-posix py-pax py-edge; do
		cp "$TARS/$t.tar" "$SIDTMP/t.tar"
		run "$MKFS_EROFS" --quiet --tar=i --mkfs-time -T 1000 "$SIDTMP/t.img" "$SIDTMP/t.tar"
		[ "$status" -eq 0 ] || die "mkfs.erofs --tar=i $t: $output"
		python3 "$TARMAN" "$TARS/$t.tar" 1000 > want.manifest
		check_both t.img t.tar "$t" || return 1
		# metadata only: the image is a small part of the archive
		run stat -c %s "$SIDTMP/t.img"
		[ "$output" -lt $(($(stat -c %s "$TARS/$t.tar") / 2)) ] || die "$t: image of $output bytes"
	done
	# the image's superblock by hand: 512-byte blocks, DEVICE_TABLE,
	# one extra device whose slot counts the tar's blocks
	python3 - "$SIDTMP/t.img" "$SIDTMP/t.tar" <<'EOF'
import struct, sys, os
d = open(sys.argv[1], "rb").read()
sb = d[1024:1152]
assert sb[0x0c] == 9, sb[0x0c]
assert struct.unpack_from("<I", sb, 0x50)[0] & 0x08
ndev, slotoff = struct.unpack_from("<HH", sb, 0x56)
assert ndev == 1, ndev
blocks = struct.unpack_from("<I", d, slotoff * 128 + 64)[0]
assert 0 < blocks <= os.path.getsize(sys.argv[2]) // 512, blocks
EOF
	# a fingerprinted index image from a pipe: both fscks verify it
	run sh -c "cat '$TARS/gnutar-posix.tar' | '$MKFS_EROFS' --quiet --tar=i --xattr-inode-digest=trusted.erofs.fingerprint --mkfs-time -T 1000 '$SIDTMP/d.img' -"
	[ "$status" -eq 0 ] || die "piped digest: $output"
	cp "$TARS/gnutar-posix.tar" "$SIDTMP/t.tar"
	python3 "$TARMAN" "$TARS/gnutar-posix.tar" 1000 > want.manifest
	check_both d.img t.tar "the piped image with fingerprints"
	run chroot "$SID_ROOT" fsck.erofs --device="$SIDREL/t.tar" --xattr-inode-digest "$SIDREL/d.img"
	[ "$status" -eq 0 ] || die "erofs-utils digest check: $output"
	run "$FSCK_EROFS" --device="$SIDTMP/t.tar" --xattr-inode-digest "$SIDTMP/d.img"
	[ "$status" -eq 0 ] || die "our digest check: $output"
	# a gzip stream: offsets are the decompressed tar's, as erofs-utils
	gzip -c "$TARS/py-pax.tar" > t.tar.gz
	"$MKFS_EROFS" --quiet --tar=i --ungzip --mkfs-time -T 1000 "$SIDTMP/z.img" t.tar.gz
	cp "$TARS/py-pax.tar" "$SIDTMP/t.tar"
	python3 "$TARMAN" "$TARS/py-pax.tar" 1000 > want.manifest
	check_both z.img t.tar "the gzip stream's index image"
	# --unxz=FILE from a pipe: FILE is the decompressed archive, byte for
	# byte, and serves as the index image's device
	xz -c "$TARS/py-pax.tar" > t.tar.xz
	run sh -c "cat t.tar.xz | '$MKFS_EROFS' --quiet --tar=i --unxz='$SIDTMP/raw.tar' --mkfs-time -T 1000 '$SIDTMP/r.img'"
	[ "$status" -eq 0 ] || die "--unxz=FILE: $output"
	cmp "$SIDTMP/raw.tar" "$TARS/py-pax.tar" || die "the copy is not the decompressed archive"
	check_both r.img raw.tar "the image of --unxz=FILE"
	# a truncated stream: an error, and neither the copy nor the image
	head -c 3000 t.tar.gz > cut.gz
	run "$MKFS_EROFS" --quiet --tar=f --ungzip=cut.tar cut.img cut.gz
	[ "$status" -eq 1 ] || die "truncated stream: status $status: $output"
	[ ! -e cut.tar ] || die "a partial copy was left"
	[ ! -e cut.img ] || die "an image was left"
	# the copy never replaces the archive it is made from
	run "$MKFS_EROFS" --quiet --tar=f --ungzip=t.tar.gz same.img t.tar.gz
	[ "$status" -ne 0 ] || die "--ungzip=FILE over its own archive was accepted"
	cmp t.tar.gz <(gzip -c "$TARS/py-pax.tar") || die "the archive was changed"
}

@test "tarindex: erofs-utils' --tar=i and --blobdev images read by our fsck.erofs --device; our --blobdev image read by both" {
	need_sid_erofs
	local t
	for t in gnutar-posix; do
		cp "$TARS/$t.tar" "$SIDTMP/t.tar"
		run chroot "$SID_ROOT" mkfs.erofs --quiet --tar=i --mkfs-time -T 1000 "$SIDREL/ref.img" "$SIDREL/t.tar"
		[ "$status" -eq 0 ] || die "erofs-utils --tar=i $t: $output"
		python3 "$TARMAN" "$TARS/$t.tar" 1000 > want.manifest
		rm -rf ours
		run "$FSCK_EROFS" --device="$SIDTMP/t.tar" --extract=ours --xattrs "$SIDTMP/ref.img"
		[ "$status" -eq 0 ] || die "our fsck.erofs on erofs-utils' index image of $t: $output"
		tree_manifest ours | diff want.manifest - || die "erofs-utils' index image of $t"
		# our image of the same tar: the same device slot (size in
		# blocks, up to the second end-of-archive block)
		"$MKFS_EROFS" --quiet --tar=i --mkfs-time -T 1000 "$SIDTMP/ours.img" "$SIDTMP/t.tar"
		run python3 - "$SIDTMP/ref.img" "$SIDTMP/ours.img" <<'EOF'
import struct, sys
for p in sys.argv[1:]:
    d = open(p, "rb").read()
    ndev, slotoff = struct.unpack_from("<HH", d, 1024 + 0x56)
    print(ndev, struct.unpack_from("<I", d, slotoff * 128 + 64)[0])
EOF
		[ "$status" -eq 0 ] || die "$output"
		[ "${lines[0]}" = "${lines[1]}" ] || die "device slots differ: $output"
	done
	# --blobdev: the source tree's manifest, from both images
	cp -a "$GSRC" "$SIDTMP/src"
	"$LIB/manifest" "$SIDTMP/src" | grep -v '^	' > want.manifest
	"$MKFS_EROFS" --quiet --chunksize=4096 --blobdev="$SIDTMP/blob" --mkfs-time -T 1000 "$SIDTMP/b.img" "$SIDTMP/src"
	check_both b.img blob "our --blobdev image"
	# the identical 8 KiB files share their chunks: 1 block in the image
	[ "$(stat -c %s "$SIDTMP/b.img")" -le 8192 ]
	run chroot "$SID_ROOT" mkfs.erofs --quiet --chunksize=4096 --blobdev="$SIDREL/rblob" --mkfs-time -T 1000 "$SIDREL/rb.img" "$SIDREL/src"
	[ "$status" -eq 0 ] || die "erofs-utils --blobdev: $output"
	rm -rf ours
	run "$FSCK_EROFS" --device="$SIDTMP/rblob" --extract=ours --xattrs "$SIDTMP/rb.img"
	[ "$status" -eq 0 ] || die "our fsck.erofs on erofs-utils' blobdev image: $output"
	tree_manifest ours | diff want.manifest - || die "erofs-utils' blobdev image"
}

@test "tarindex: --tar=headerball builds the tree of erofs-utils' headerball, files as holes" {
	need_sid_erofs
	# headers only: tarfile's header blocks without the data
	python3 - "$SIDTMP/hb.tar" <<'EOF'
import sys, tarfile
out = open(sys.argv[1], "wb")
for name, size, typ in (("dir", 0, tarfile.DIRTYPE), ("dir/f", 5000, tarfile.REGTYPE),
                        ("g", 3, tarfile.REGTYPE), ("e", 0, tarfile.REGTYPE),
                        ("s", 0, tarfile.SYMTYPE), ("big", 1 << 26, tarfile.REGTYPE)):
    ti = tarfile.TarInfo(name)
    ti.size, ti.type, ti.mtime, ti.uid, ti.mode = size, typ, 1600000000, 7, 0o640
    ti.linkname = "g" if typ == tarfile.SYMTYPE else ""
    out.write(ti.tobuf(format=tarfile.GNU_FORMAT))
out.write(b"\0" * 1024)
EOF
	"$MKFS_EROFS" --quiet --tar=headerball --mkfs-time -T 1000 "$SIDTMP/hb.img" "$SIDTMP/hb.tar"
	run chroot "$SID_ROOT" mkfs.erofs --quiet --tar=headerball --mkfs-time -T 1000 "$SIDREL/ref.img" "$SIDREL/hb.tar"
	[ "$status" -eq 0 ] || die "erofs-utils headerball: $output"
	chroot "$SID_ROOT" fsck.erofs --extract="$SIDREL/ref" "$SIDREL/ref.img"
	chroot "$SID_ROOT" fsck.erofs --extract="$SIDREL/x" "$SIDREL/hb.img"
	"$FSCK_EROFS" --extract=ours "$SIDTMP/hb.img"
	tree_manifest "$SIDTMP/ref" > want.manifest
	tree_manifest "$SIDTMP/x" | diff want.manifest - || die "erofs-utils' extraction of ours"
	tree_manifest ours | diff want.manifest - || die "our extraction of ours"
	# by hand: the 64 MiB file is a hole of its size in a one-block image
	grep -q $'^big\tsha256\t'"$(head -c 67108864 /dev/zero | sha256sum | cut -d' ' -f1)" want.manifest
	[ "$(stat -c %s "$SIDTMP/hb.img")" -le 8192 ]
}

@test "tarindex: a missing, short, surplus or out-of-range device is refused with one line" {
	"$MKFS_EROFS" --quiet --tar=i -T 1000 t.img "$TARS/gnutar-gnu.tar"
	run "$FSCK_EROFS" t.img
	[ "$status" -eq 1 ]
	[[ $output == *"t.img: extra device 1 ("*" blocks of 512 bytes"*") is missing: give it with --device=PATH" ]] || die "$output"
	[ "${#lines[@]}" -eq 1 ] || die "$output"
	head -c 10000 "$TARS/gnutar-gnu.tar" > short.tar
	run "$FSCK_EROFS" --device=short.tar t.img
	[ "$status" -eq 1 ]
	[[ $output == *"short.tar: extra device 1 holds 10000 bytes, its slot says "* ]] || die "$output"
	run "$FSCK_EROFS" --device="$TARS/gnutar-gnu.tar" --device="$TARS/gnutar-gnu.tar" t.img
	[ "$status" -eq 1 ]
	[[ $output == *"2 --device given, the image has 1 extra device"* ]] || die "$output"
	# a chunk index pointing past the tar's end: named, exit 1
	python3 - t.img <<'EOF'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
# the first chunk index naming device 1: its block far beyond the tar
for off in range(1152, len(d) - 8, 8):
    hi, dev, lo = struct.unpack_from("<HHI", d, off)
    if hi == 0 and dev == 1 and 0 < lo < 1000:
        struct.pack_into("<I", d, off + 4, 0x00fffff0)
        break
else:
    sys.exit("no chunk index found")
open(sys.argv[1], "wb").write(d)
EOF
	run "$FSCK_EROFS" --no-sbcrc --device="$TARS/gnutar-gnu.tar" t.img
	[ "$status" -eq 1 ]
	[[ $output == *"of extra device 1"*"lies beyond its end"* ]] || die "$output"
	# usage and unmappable input
	run "$MKFS_EROFS" --tar=i -zlz4 x.img "$TARS/gnutar-gnu.tar"
	[ "$status" -eq 16 ]
	run "$MKFS_EROFS" --blobdev=b x.img "$GSRC"
	[ "$status" -eq 16 ]
	truncate -s 1M sp
	printf x >> sp
	tar --sparse --format=gnu -cf sp.tar sp
	run "$MKFS_EROFS" --tar=i x.img sp.tar
	[ "$status" -eq 1 ]
	[[ $output == *"'sp'"*"sparse file cannot be mapped in index or headerball mode"* ]] || die "$output"
	[ ! -e x.img ]
}
