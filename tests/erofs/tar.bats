#!/usr/bin/env bats
# mkfs.erofs --tar=f: archives written by GNU tar and by Python's tarfile
# (ustar, gnu, pax; long names and targets, xattrs, hard links, devices,
# sparse files, duplicates, implied directories) give images whose
# extracted tree (by erofs-utils 1.9.4's fsck.erofs from the sid tree, and
# by ours) has the manifest of the archive as Python's tarfile reads it
# (tests/erofs/tar_manifest.py, which models erofs-utils' rules for
# duplicates and implied directories); erofs-utils' own mkfs.erofs --tar=f
# builds the same tree; compressed and piped input give the same image;
# damaged archives are refused with one line naming the entry.
load ../lib/common
load erofs_helpers

FSCK_EROFS=$FSFORGE_BUILDDIR/fsck/fsck.erofs
TARMAN=$FSFORGE_TOP/tests/erofs/tar_manifest.py

setup_file() {
	export TARS=$BATS_FILE_TMPDIR/tars
	mkdir -p "$TARS"
	python3 "$FSFORGE_TOP/tests/erofs/mktars.py" "$TARS"
	# a tree for GNU tar: every file type, xattrs, a hard link, holes
	local s=$BATS_FILE_TMPDIR/gsrc
	mkdir -p "$s/etc/deep" "$s/var"
	seq 1 40000 > "$s/etc/numbers"
	head -c 123457 /dev/urandom > "$s/etc/random"
	printf 'conf\n' > "$s/etc/deep/conf"
	ln "$s/etc/numbers" "$s/var/numbers.hard"
	ln -s ../etc/deep/conf "$s/var/sym"
	mknod "$s/var/tty" c 5 0
	mknod "$s/var/sda" b 8 0
	mkfifo "$s/var/fifo"
	chmod 4711 "$s/etc/deep/conf"
	chown 1234:5678 "$s/etc/random"
	setfattr -n user.note -v "a note" "$s/etc/deep/conf"
	setfattr -n trusted.overlay.origin -v 0x00fb "$s/etc/numbers"
	touch -h -d '2021-02-03 04:05:06.789012345' "$s/etc/deep/conf" "$s/var/sym"
	local fmt xattrs
	for fmt in ustar gnu posix; do
		# only pax holds xattrs
		xattrs=()
		[ $fmt != posix ] || xattrs=(--xattrs --xattrs-include='*')
		tar --format=$fmt "${xattrs[@]}" -C "$s" -cf "$TARS/gnutar-$fmt.tar" .
	done
	# sparse files (erofs-utils 1.9.4 reads none: a separate archive)
	s=$BATS_FILE_TMPDIR/ssrc
	mkdir -p "$s"
	truncate -s 3M "$s/sparse"
	printf 'data in a hole' | dd of="$s/sparse" bs=1 seek=1500000 conv=notrunc status=none
	for i in $(seq 1 25); do
		printf 'x%s' "$i" | dd of="$s/islands" bs=1 seek=$((i * 50000)) conv=notrunc status=none
	done
	truncate -s 1M "$s/hole"
	printf 'plain' > "$s/plain"
	for fmt in gnu posix; do
		tar --format=$fmt --sparse -C "$s" -cf "$TARS/gnutar-sparse-$fmt.tar" .
	done
}

setup() { cd_tmp; }
teardown() {
	if [ -n "${SIDTMP:-}" ]; then rm -rf "$SIDTMP"; fi
}

# the manifest of an extracted tree, without its root (and the digest)
tree_manifest() {
	"$LIB/manifest" "$1" --drop-xattr trusted.erofs.fingerprint | grep -v '^	'
}

# TAR's image (mkfs.erofs --tar=f --mkfs-time -T 1000 OPTS...) extracted
# by erofs-utils' fsck.erofs and by ours: both manifests equal tarfile's
check_tar() {
	local tar=$1; shift
	rm -rf "$SIDTMP/x" ours
	run "$MKFS_EROFS" --quiet --tar=f --mkfs-time -T 1000 "$@" "$SIDTMP/t.img" "$tar"
	[ "$status" -eq 0 ] || die "mkfs.erofs $*: $output"
	python3 "$TARMAN" "$tar" 1000 > want.manifest
	local digest=
	[[ " $* " != *" --xattr-inode-digest"* ]] || digest=--xattr-inode-digest
	run chroot "$SID_ROOT" fsck.erofs --extract="$SIDREL/x" --xattrs $digest "$SIDREL/t.img"
	[ "$status" -eq 0 ] || die "erofs-utils fsck.erofs on the image of ${tar##*/} $*: $output"
	tree_manifest "$SIDTMP/x" | diff want.manifest - || die "erofs-utils' extraction of ${tar##*/} $*"
	run "$FSCK_EROFS" --extract=ours --xattrs "$SIDTMP/t.img"
	[ "$status" -eq 0 ] || die "our fsck.erofs on ${tar##*/} $*: $output"
	tree_manifest ours | diff want.manifest - || die "our extraction of ${tar##*/} $*"
}

@test "tar: Python tarfile's ustar, gnu and pax archives (long names, xattrs, hard links, devices, ids, times), the edge-case and the global-header archives" {
	need_sid_erofs
	for t in ustar gnu pax edge global; do
		check_tar "$TARS/py-$t.tar" || return 1
	done
	# global pax keywords reach the first entry after them too, and
	# bsdtar's base64 with padding decodes (erofs-utils 1.9.4 misses both)
	python3 "$TARMAN" "$TARS/py-global.tar" 1000 > want.manifest
	grep -q $'^a\tmeta\tf 0644 4242 100 1 1600000000.2500000000 ' want.manifest
	grep -q $'^c\txattr\tsecurity.capability=0x01000002' want.manifest
	# what the edge archive decides, by hand: the later duplicate, a
	# hard link keeping the replaced file's old content, implied parents
	python3 "$TARMAN" "$TARS/py-edge.tar" 1000 > want.manifest
	grep -q $'^dup\tsha256\t'"$(printf 'second, longer\n' | sha256sum | cut -d' ' -f1)" want.manifest
	grep -q $'^hard\tsha256\t'"$(printf 'original\n' | sha256sum | cut -d' ' -f1)" want.manifest
	grep -q $'^hard\tmeta\tf 0644 1000 100 2 ' want.manifest
	grep -q $'^implied/a\tmeta\td 0755 5 6 3 1700000000.0000000000' want.manifest
	run grep -c $'^gone/child' want.manifest
	[ "$output" = 0 ]
}

@test "tar: GNU tar's ustar, gnu and posix archives (xattrs, sparse files, devices, hard links) with fingerprints and -z" {
	need_sid_erofs
	for t in ustar gnu posix sparse-gnu sparse-posix; do
		check_tar "$TARS/gnutar-$t.tar" --xattr-inode-digest=trusted.erofs.fingerprint ||
			return 1
	done
	# what went through: holes, xattrs of the posix archive
	grep -q $'^islands\tmeta\tf 0644 0 0 1 [0-9.]* 1250003 ' want.manifest
	check_tar "$TARS/gnutar-posix.tar" -zlz4hc --xattr-inode-digest=trusted.erofs.fingerprint || return 1
	grep -q $'^etc/deep/conf\txattr\tuser.note=0x61206e6f7465' want.manifest
	grep -q $'^etc/numbers\txattr\ttrusted.overlay.origin=0x00fb' want.manifest
	check_tar "$TARS/py-pax.tar" -zzstd -C16384 -b1024 || return 1
	check_tar "$TARS/gnutar-sparse-gnu.tar" -zlzma || return 1
}

@test "tar: --chunksize stores the holes of sparse entries as holes, both extractions as the archive" {
	need_sid_erofs
	local t
	for t in sparse-gnu sparse-posix; do
		check_tar "$TARS/gnutar-$t.tar" --chunksize=4096 \
			--xattr-inode-digest=trusted.erofs.fingerprint || return 1
		# 5.25 MiB of files, 25 islands of 4 KiB chunks and 2 more:
		# without holes the image would hold every zero
		run stat -c %s "$SIDTMP/t.img"
		[ "$status" -eq 0 ] && [ "$output" -lt 262144 ] ||
			die "${t}: image of $output bytes"
	done
}

@test "tar: erofs-utils 1.9.4's mkfs.erofs --tar=f builds the same tree from every archive" {
	need_sid_erofs
	for t in "$TARS"/*.tar; do
		# erofs-utils 1.9.4 reads no sparse entries, applies a global
		# pax header from the second entry after it on, and drops
		# padded base64 xattr values (see the first test)
		[[ $t != *sparse* && $t != *global* && $t != *aufs* ]] || continue
		rm -rf "$SIDTMP/ref" "$SIDTMP/ours"
		cp "$t" "$SIDTMP/in.tar"
		run chroot "$SID_ROOT" mkfs.erofs --quiet --tar=f --mkfs-time -T 1000 \
			"$SIDREL/ref.img" "$SIDREL/in.tar"
		[ "$status" -eq 0 ] || die "erofs-utils mkfs.erofs on ${t##*/}: $output"
		"$MKFS_EROFS" --quiet --tar=f --mkfs-time -T 1000 "$SIDTMP/ours.img" "$t"
		chroot "$SID_ROOT" fsck.erofs --extract="$SIDREL/ref" --xattrs "$SIDREL/ref.img"
		chroot "$SID_ROOT" fsck.erofs --extract="$SIDREL/ours" --xattrs "$SIDREL/ours.img"
		diff <(tree_manifest "$SIDTMP/ref") <(tree_manifest "$SIDTMP/ours") ||
			die "${t##*/}: erofs-utils' tree and ours differ"
	done
}

@test "tar: --aufs whiteouts and opaque directories, --ovlfs-strip, as erofs-utils 1.9.4 converts them" {
	need_sid_erofs
	cp "$TARS/py-aufs.tar" "$SIDTMP/a.tar"
	for opts in "--aufs" "--aufs --ovlfs-strip" "--ovlfs-strip" ""; do
		rm -rf ours ref
		# shellcheck disable=SC2086
		"$MKFS_EROFS" --quiet --tar=f $opts --mkfs-time -T 1000 ours.img "$TARS/py-aufs.tar"
		# shellcheck disable=SC2086
		chroot "$SID_ROOT" mkfs.erofs --quiet --tar=f $opts --mkfs-time -T 1000 \
			"$SIDREL/ref.img" "$SIDREL/a.tar"
		# (erofs-utils' fsck cannot extract the empty overlay.origin
		# value: both images through ours)
		"$FSCK_EROFS" --extract=ours --xattrs ours.img
		"$FSCK_EROFS" --extract=ref --xattrs "$SIDTMP/ref.img"
		"$LIB/manifest" ours > "ours$opts.manifest"
		"$LIB/manifest" ref | diff "ours$opts.manifest" - || die "options '$opts'"
	done
	# by hand: a whiteout is a 0:0 character device without permissions,
	# with the entry's owner and time; its directory is marked copied up;
	# the opaque directory is marked; --ovlfs-strip drops all of them
	m="ours--aufs.manifest"
	grep -q $'^d/gone\tmeta\tc 0 7 8 1 1600000000.0000000000 0 $' "$m"
	grep -q $'^d/gone\trdev\t0:0$' "$m"
	grep -q $'^d\txattr\ttrusted.overlay.origin=0x$' "$m"
	grep -q $'^p/q\txattr\ttrusted.overlay.origin=0x$' "$m"
	grep -q $'^o\txattr\ttrusted.overlay.opaque=0x79$' "$m"
	grep -q $'^top\tmeta\tc 0 ' "$m"
	run grep -c $'gone\|deep\|^top\|^cd\|overlay' "ours--aufs --ovlfs-strip.manifest"
	[ "$output" = 0 ]
	grep -q $'^d/.wh.gone\tmeta\tf 0600 7 8 ' ours.manifest
}

@test "tar: --exclude-path and --exclude-regex leave entries and subtrees out; a hard link to a left-out file keeps its content" {
	long=$(printf 'd%.0s' $(seq 60))	# a directory the archive only implies
	"$MKFS_EROFS" --quiet --tar=f --mkfs-time -T 1000 --exclude-path=dir/sub \
		--exclude-regex='hello$' --exclude-path="$long" x.img "$TARS/py-gnu.tar"
	"$FSCK_EROFS" --extract=x x.img
	"$LIB/manifest" x > got.manifest
	run grep -c $'^dir/sub\|^dir/hello\|^dddd' got.manifest
	[ "$output" = 0 ]
	grep -q $'^dir/link\tsha256\t'"$(printf 'hello, world\n' | sha256sum | cut -d' ' -f1)" got.manifest
	grep -q $'^dir/link\tmeta\tf 0640 1000 100 1 ' got.manifest
	grep -q $'^dir/sym\tmeta\tl 0777 ' got.manifest
}

@test "tar: gzip, xz, lzma and zstd streams and standard input give the image of the plain file" {
	src=$TARS/py-pax.tar
	opts=(--quiet --tar=f -T 1000 -U clear)
	"$MKFS_EROFS" "${opts[@]}" plain.img "$src"
	gzip -c "$src" > a.tar.gz
	xz -c "$src" > a.tar.xz
	xz --format=lzma -c "$src" > a.tar.lzma
	cat a.tar.gz a.tar.gz > /dev/null
	"$MKFS_EROFS" "${opts[@]}" --ungzip gz.img a.tar.gz
	"$MKFS_EROFS" "${opts[@]}" --unxz xz.img a.tar.xz
	"$MKFS_EROFS" "${opts[@]}" --unxz lzma.img a.tar.lzma
	"$MKFS_EROFS" "${opts[@]}" stdin.img - < "$src"
	cat "$src" | "$MKFS_EROFS" "${opts[@]}" pipe.img
	gzip -c "$src" | "$MKFS_EROFS" "${opts[@]}" --ungzip gzpipe.img -
	imgs=(gz xz lzma stdin pipe gzpipe)
	if command -v zstd >/dev/null; then
		zstd -q -c "$src" > a.tar.zst
		"$MKFS_EROFS" "${opts[@]}" --unzstd zst.img a.tar.zst
		imgs+=(zst)
	fi
	for i in "${imgs[@]}"; do
		cmp plain.img "$i.img" || die "$i.img differs from the plain tar's image"
	done
	# compressed files and fingerprints from a spooled stream
	gzip -c "$src" | "$MKFS_EROFS" --quiet --tar=f --ungzip -zlz4hc --mkfs-time -T 1000 \
		--xattr-inode-digest=trusted.erofs.fingerprint z.img
	"$FSCK_EROFS" --xattr-inode-digest --extract=zx --xattrs z.img
	python3 "$TARMAN" "$src" 1000 > want.manifest
	tree_manifest zx | diff want.manifest -
	# a damaged gzip stream is refused, naming the stream
	head -c 3000 a.tar.gz > cut.tar.gz
	run "$MKFS_EROFS" --tar=f --ungzip cut.img cut.tar.gz
	[ "$status" -eq 1 ]
	[[ $output == *cut.tar.gz* ]]
	[ ! -e cut.img ]
}

@test "tar: --sort=none lays file blocks out in the archive's order, --sort=path (default) in the tree's; both extract as the archive" {
	need_sid_erofs
	# three files and a hard link archived against name order
	mkdir s
	local f
	for f in zeta mid alpha; do head -c 20000 /dev/urandom > s/$f; done
	ln s/mid s/beta
	tar --format=gnu -C s -cf "$SIDTMP/o.tar" zeta mid alpha beta
	check_tar "$SIDTMP/o.tar" --sort=none || return 1
	check_tar "$SIDTMP/o.tar" --sort=none --workers=2 -zlz4hc || return 1
	# the first physical block of each file, read by erofs-utils' dump.erofs
	first_block() {
		chroot "$SID_ROOT" dump.erofs -e --path="/$2" "$SIDREL/$1" |
			awk '$1 == "0:" { sub(/\.\..*/, "", $7); print $7 }'
	}
	local order mode b
	for mode in none path; do
		run "$MKFS_EROFS" --quiet --tar=f --sort=$mode -T 0 -U clear "$SIDTMP/$mode.img" "$SIDTMP/o.tar"
		[ "$status" -eq 0 ] || die "--sort=$mode: $output"
		: > blocks
		for f in zeta mid alpha; do
			b=$(first_block $mode.img $f)
			[[ $b =~ ^[0-9]+$ ]] || die "dump.erofs gave no block of $f: '$b'"
			echo "$b $f" >> blocks
		done
		order=$(sort -n blocks | cut -d' ' -f2 | tr '\n' ' ')
		case $mode in
		none) [ "$order" = "zeta mid alpha " ] || die "--sort=none: blocks in the order $order" ;;
		path) [ "$order" = "alpha mid zeta " ] || die "--sort=path: blocks in the order $order" ;;
		esac
	done
	run "$MKFS_EROFS" --quiet --tar=f -T 0 -U clear "$SIDTMP/default.img" "$SIDTMP/o.tar"
	cmp "$SIDTMP/default.img" "$SIDTMP/path.img" || die "the default is not --sort=path"
	run "$MKFS_EROFS" --quiet --sort=none x.img s
	[ "$status" -eq 16 ] || die "--sort=none of a directory: status $status"
	run "$MKFS_EROFS" --quiet --tar=f --sort=size x.img "$SIDTMP/o.tar"
	[ "$status" -eq 16 ] || die "--sort=size: status $status"
}

@test "tar: damaged archives are refused with one line naming the entry, exit 1, no image" {
	src=$TARS/py-gnu.tar
	python3 - "$src" <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
def put(name, b):
    open(name, "wb").write(bytes(b))
import tarfile
with tarfile.open(sys.argv[1]) as tf:
    at = tf.getmember("dir/sub/numbers").offset_data
put("trunc-data.tar", data[:at + 1000])
put("trunc-header.tar", data[:1024 + 100])
put("no-end.tar", data[:1536])
b = bytearray(data); b[600] ^= 0x40; put("checksum.tar", b)
# a size field that is not octal, with a checksum that matches
def fix(b, off):
    b[off + 148:off + 156] = b" " * 8
    s = sum(b[off:off + 512])
    b[off + 148:off + 156] = b"%06o\0 " % s
b = bytearray(data); b[124:136] = b"9999999999x\0"; fix(b, 0); put("badsize.tar", b)
b = bytearray(data); b[124:136] = b"77777777777\0"; fix(b, 0); put("hugesize.tar", b)
b = bytearray(data); b[257:263] = b"xxxxx\0"; fix(b, 0); put("nomagic.tar", b)
# a pax header with a broken record, a hard link to nothing
import io, tarfile
def one(name, **kw):
    with tarfile.open(name, "w", format=tarfile.PAX_FORMAT) as tf:
        ti = tarfile.TarInfo(kw.pop("path", "f"))
        for k, v in kw.items():
            setattr(ti, k, v)
        tf.addfile(ti, io.BytesIO(b""))
one("hardlink.tar", type=tarfile.LNKTYPE, linkname="nowhere", path="h")
one("notdir.tar", path="f")
with tarfile.open("notdir.tar", "a") as tf:
    tf.addfile(tarfile.TarInfo("f/under"), io.BytesIO(b""))
one("pax.tar", path="p", pax_headers={"mtime": "12x"})
one("longname.tar", path="a/" + "n" * 300)
PY
	for t in trunc-data trunc-header no-end checksum badsize hugesize nomagic \
		 hardlink notdir pax longname; do
		run "$MKFS_EROFS" --tar=f "$t.img" "$t.tar"
		[ "$status" -eq 1 ] || die "$t.tar: exit $status: $output"
		[ "${#lines[@]}" -eq 1 ] || die "$t.tar: not one line: $output"
		[[ ${lines[0]} == "mkfs.erofs: error: $t.tar: "* ]] || die "$t.tar: $output"
		[[ $output != *AddressSanitizer* && $output != *"runtime error"* ]] || die "$output"
		[ ! -e "$t.img" ] || die "$t.tar left an image"
	done
	# an .lzma header asking for a 4 GiB dictionary (the fuzz tier's
	# out-of-memory): refused before anything that size is allocated
	python3 -c '
import lzma, struct, sys
b = bytearray(lzma.compress(b"x" * 100, format=lzma.FORMAT_ALONE))
b[1:5] = struct.pack("<I", 0xFFFFFFFF)
open("bigdict.lzma", "wb").write(b)'
	run "$MKFS_EROFS" --tar=f --unxz bigdict.img bigdict.lzma
	[ "$status" -eq 1 ] || die "bigdict: exit $status: $output"
	[[ $output == *"bigdict.lzma: the xz/lzma stream needs 4096 MiB to decode, more than the 256 MiB allowed"* ]] ||
		die "bigdict: $output"
	[ ! -e bigdict.img ] || die "bigdict left an image"
	# the entry is named
	run "$MKFS_EROFS" --tar=f x.img hardlink.tar
	[[ $output == *"'h'"*"hard link"* ]]
	run "$MKFS_EROFS" --tar=f x.img trunc-data.tar
	[[ $output == *"'dir/sub/numbers'"*"ends inside this entry"* ]]
	# usage: an unknown mode, the filters need --tar
	run "$MKFS_EROFS" --tar=x x.img "$src"
	[ "$status" -eq 16 ]
	run "$MKFS_EROFS" --ungzip x.img "$src"
	[ "$status" -eq 16 ]
	run "$MKFS_EROFS" --aufs x.img "$src"
	[ "$status" -eq 16 ]
	run "$MKFS_EROFS" --tar=f --ovlfs-strip=2 x.img "$src"
	[ "$status" -eq 16 ]
}
