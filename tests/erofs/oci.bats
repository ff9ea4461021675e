#!/usr/bin/env bats
# mkfs.erofs --oci over local OCI image layouts written by
# tests/erofs/mkoci.py (tarfile, gzip, zstd, hashlib; no network): a
# nested image index with a linux/arm64 and a linux/amd64 manifest, the
# latter of three layers (tar+gzip, tar with aufs whiteouts, tar+zstd).
# Each layer's image, and the image of all layers applied, extracted by
# erofs-utils 1.9.4's fsck.erofs and by ours, has the manifest Python's
# tarfile reads from the layer's tar (tests/erofs/tar_manifest.py; for
# the merged image, from the tar mkoci.py merges by the OCI rules); one
# layer gives the tree erofs-utils' mkfs.erofs --tar=f --aufs gives its
# tar (erofs-utils' own --oci reads registries only, so it cannot be run
# here); damaged layouts are refused with one line naming the blob.
load ../lib/common
load erofs_helpers

FSCK_EROFS=$FSFORGE_BUILDDIR/fsck/fsck.erofs
TARMAN=$FSFORGE_TOP/tests/erofs/tar_manifest.py

setup_file() {
	local v
	for v in good flat badsize badtype; do
		mkdir -p "$BATS_FILE_TMPDIR/$v"
		python3 "$FSFORGE_TOP/tests/erofs/mkoci.py" "$BATS_FILE_TMPDIR/$v/lay" $v
	done
	export G=$BATS_FILE_TMPDIR/good
}

setup() {
	command -v zstd >/dev/null || skip "zstd (the tar+zstd layer) not installed"
	cd_tmp
}
teardown() {
	if [ -n "${SIDTMP:-}" ]; then rm -rf "$SIDTMP"; fi
}

# the manifest of an extracted tree, without its root
tree_manifest() {
	"$LIB/manifest" "$1" | grep -v '^	'
}

digest_of() { awk -v k="$2" '$1 == k { print $2 }' "$1/digests"; }

# IMAGE extracted by erofs-utils' fsck.erofs and by ours: both manifests
# equal WANT
check_both() {
	local img=$1 want=$2
	rm -rf "$SIDTMP/x" ours
	cp "$img" "$SIDTMP/t.img"
	run chroot "$SID_ROOT" fsck.erofs --extract="$SIDREL/x" --xattrs "$SIDREL/t.img"
	[ "$status" -eq 0 ] || die "erofs-utils fsck.erofs on $img: $output"
	tree_manifest "$SIDTMP/x" | diff "$want" - || die "erofs-utils' extraction of $img"
	run "$FSCK_EROFS" --extract=ours --xattrs "$img"
	[ "$status" -eq 0 ] || die "our fsck.erofs on $img: $output"
	tree_manifest ours | diff "$want" - || die "our extraction of $img"
}

@test "oci: each layer (tar+gzip, tar with whiteouts, tar+zstd) by layer= (and blob=) has its tar's manifest, both fscks extracting" {
	need_sid_erofs
	local i opts
	for i in 0 1 2; do
		opts=(--quiet --mkfs-time -T 1000 -U clear)
		# whiteouts left out: the layer's tar without its .wh. entries
		[ $i != 1 ] || opts+=(--ovlfs-strip)
		run "$MKFS_EROFS" "${opts[@]}" --oci=f,layer=$i l$i.img "$G/lay"
		[ "$status" -eq 0 ] || die "layer $i: $output"
		python3 "$TARMAN" "$G/layer$i.tar" 1000 | grep -v '\.wh\.' > want$i.manifest
		check_both l$i.img want$i.manifest
	done
	"$MKFS_EROFS" --quiet --mkfs-time -T 1000 -U clear --ovlfs-strip \
		--oci=blob="$(digest_of "$G" layer1)" b1.img "$G/lay"
	cmp l1.img b1.img
	# the opaque directory of layer 1 lost its old files only in the
	# merged image; here it holds what layer 1 has
	grep -q $'^opq/new\t' want1.manifest
	run grep -c '^opq/old\|^var/lib/gone' want1.manifest
	[ "$output" = 0 ]
}

@test "oci: the whiteout layer is the tree erofs-utils 1.9.4's mkfs.erofs --tar=f --aufs builds from its tar (whiteouts kept, and --ovlfs-strip)" {
	need_sid_erofs
	local i=1 s
	cp "$G/layer$i.tar" "$SIDTMP/l.tar"
	for s in "" --ovlfs-strip; do
		rm -rf ours ref
		# shellcheck disable=SC2086
		"$MKFS_EROFS" --quiet --mkfs-time -T 1000 $s --oci=layer=$i ours.img "$G/lay"
		# shellcheck disable=SC2086
		chroot "$SID_ROOT" mkfs.erofs --quiet --tar=f --aufs $s --mkfs-time -T 1000 \
			"$SIDREL/ref.img" "$SIDREL/l.tar"
		# (erofs-utils' fsck cannot extract the empty overlay.origin
		# value: both images through ours)
		"$FSCK_EROFS" --extract=ours --xattrs ours.img
		"$FSCK_EROFS" --extract=ref --xattrs "$SIDTMP/ref.img"
		"$LIB/manifest" ours > "ours$i$s.manifest"
		"$LIB/manifest" ref | diff "ours$i$s.manifest" - || die "layer $i '$s'"
	done
	# by hand: whiteouts are 0:0 character devices, the opaque directory
	# is marked, directories holding whiteouts are marked copied up
	m=ours1.manifest
	grep -q $'^var/lib/gone.txt\trdev\t0:0$' "$m"
	grep -q $'^var/cache\tmeta\tc 0 ' "$m"
	grep -q $'^opq\txattr\ttrusted.overlay.opaque=0x79$' "$m"
	grep -q $'^var\txattr\ttrusted.overlay.origin=0x$' "$m"
}

@test "oci: all layers applied (whiteouts, opaque directory, replaced file) as tarfile merges them; flat and nested layouts alike; platform= picks the image" {
	need_sid_erofs
	opts=(--quiet --mkfs-time -T 1000 -U clear)
	"$MKFS_EROFS" "${opts[@]}" --oci all.img "$G/lay"
	python3 "$TARMAN" "$G/merged.tar" 1000 > want.manifest
	check_both all.img want.manifest
	# by hand: what layer 1 deleted is gone, what it replaced is its own
	run grep -c '^var/cache\|^var/lib/gone\|^opq/old\|^opq/sub\|\.wh\.\|overlay' want.manifest
	[ "$output" = 0 ]
	grep -q $'^etc/hostname\tsha256\t'"$(printf 'upper\n' | sha256sum | cut -d' ' -f1)" want.manifest
	grep -q $'^etc/motd\t' want.manifest
	# index.json naming the manifest directly (skopeo's form), and the
	# explicit default platform, give the same image
	"$MKFS_EROFS" "${opts[@]}" --oci "flat.img" "$BATS_FILE_TMPDIR/flat/lay"
	cmp all.img flat.img
	"$MKFS_EROFS" "${opts[@]}" --oci=f,platform=linux/amd64 amd.img "$G/lay"
	cmp all.img amd.img
	# the arm64 image (listed first in the nested index), with its variant
	"$MKFS_EROFS" "${opts[@]}" --oci=platform=linux/arm64 arm.img "$G/lay"
	python3 "$TARMAN" "$G/arm64.tar" 1000 > arm.manifest
	"$FSCK_EROFS" --extract=arm arm.img
	tree_manifest arm | diff arm.manifest -
	"$MKFS_EROFS" "${opts[@]}" --oci=platform=linux/arm64/v8 v8.img "$G/lay"
	cmp arm.img v8.img
	run "$MKFS_EROFS" --quiet --oci=platform=linux/s390x no.img "$G/lay"
	[ "$status" -eq 1 ]
	[[ $output == *"no image manifest for platform linux/s390x"* ]]
	run "$MKFS_EROFS" --quiet --oci=layer=3 no.img "$G/lay"
	[ "$status" -eq 1 ]
	[[ $output == *"layer 3 does not exist"*"3 layers"* ]]
	[ ! -e no.img ]
}

# mkfs.erofs --oci on DIR refused: exit 1, one line holding WANT, no image
refused() {
	local dir=$1 want=$2
	shift 2
	run "$MKFS_EROFS" --quiet -T 1000 "$@" r.img "$dir"
	[ "$status" -eq 1 ] || die "$dir: status $status: $output"
	[ "${#lines[@]}" -eq 1 ] || die "$dir: not one line: $output"
	[[ $output == *"$want"* ]] || die "$dir: '$want' not in: $output"
	[ ! -e r.img ] || die "$dir: an image was left"
}

@test "oci: a corrupted, resized or missing blob, bad JSON, an unknown layer type and a registry reference are refused with one line naming the blob" {
	local d1 d0 man
	d0=$(digest_of "$G" layer0)
	d1=$(digest_of "$G" layer1)
	man=$(digest_of "$G" manifest)
	# one byte of file data in the plain layer: the tar reads fine, the
	# digest does not match
	cp -r "$G/lay" c1
	python3 - "c1/blobs/sha256/${d1#sha256:}" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
i = b.index(b"the only file of opq now")
b[i] ^= 0x20
open(p, "wb").write(b)
PY
	refused c1 "blob $d1 does not match its digest" --oci
	refused c1 "blob $d1 does not match its digest" --oci=layer=1
	# the gzip layer damaged in its middle: the decoder or the digest
	# refuses it, naming the layer's digest either way
	cp -r "$G/lay" c0
	f=c0/blobs/sha256/${d0#sha256:}
	printf '\xff\xff\xff\xff' | dd of="$f" bs=1 seek=$(($(stat -c %s "$f") / 2)) conv=notrunc status=none
	refused c0 "$d0" --oci=layer=0
	# a byte appended, one cut off
	cp -r "$G/lay" long
	printf 'x' >> "long/blobs/sha256/${d1#sha256:}"
	refused long "blob $d1 (layer 1) is" --oci=layer=1
	cp -r "$G/lay" short
	truncate -s -1 "short/blobs/sha256/${d1#sha256:}"
	refused short "blob $d1 (layer 1) is" --oci
	# the descriptor gives a size one byte larger (the JSON consistent)
	refused "$BATS_FILE_TMPDIR/badsize/lay" "$(digest_of "$BATS_FILE_TMPDIR/badsize" layer1) (layer 1) is" --oci
	# a missing layer, a missing and a damaged manifest
	cp -r "$G/lay" miss
	rm "miss/blobs/sha256/${d1#sha256:}"
	refused miss "blob $d1 (layer 1) is missing" --oci
	cp -r "$G/lay" noman
	rm "noman/blobs/sha256/${man#sha256:}"
	refused noman "$man" --oci
	cp -r "$G/lay" badman
	sed -i 's/"layers"/"Layers"/' "badman/blobs/sha256/${man#sha256:}"
	refused badman "blob $man (image manifest) does not match its digest" --oci
	# index.json: a trailing comma, a duplicate key, nesting past the bound
	cp -r "$G/lay" j1
	sed -i 's/]}$/],}/' j1/index.json
	refused j1 "index.json is not valid JSON" --oci
	cp -r "$G/lay" j2
	sed -i 's/^{/{"schemaVersion": 2, /' j2/index.json
	refused j2 'the key "schemaVersion" appears twice' --oci
	cp -r "$G/lay" j3
	python3 -c 'print("[" * 100 + "]" * 100)' > j3/index.json
	refused j3 "nested deeper than 64 levels" --oci
	rm j3/oci-layout
	refused j3 "cannot open oci-layout" --oci
	# a layer of another media type, named; other layers still convert
	refused "$BATS_FILE_TMPDIR/badtype/lay" "media type 'application/vnd.oci.image.layer.v1.tar+bzip2'" --oci
	"$MKFS_EROFS" --quiet --oci=layer=2 ok.img "$BATS_FILE_TMPDIR/badtype/lay"
	# no registry: a reference, and erofs-utils' registry options
	refused docker.io/library/alpine:latest "not a local OCI image layout directory" --oci
	run "$MKFS_EROFS" --quiet --oci=f,username=u,password=p r.img "$G/lay"
	[ "$status" -eq 16 ]
	[[ $output == *"registry option"* ]]
	run "$MKFS_EROFS" --quiet --oci --tar=f r.img "$G/lay"
	[ "$status" -eq 16 ]
	[ ! -e r.img ]
	run "$MKFS_EROFS" --help
	[[ $output == *"--oci[=f][,platform="* ]]
}
