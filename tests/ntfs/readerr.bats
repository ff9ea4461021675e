#!/usr/bin/env bats
# A failing disk: reads of some sectors fail with EIO (not zeros), or come
# back short, as the kernel returns a medium error.  No root device or
# device-mapper: tests/lib/eio-shim.c (LD_PRELOAD) fails the reads of the
# listed byte ranges of the image.  A volume made by our mkfs.ntfs is
# filled through ntfs-3g (a directory of 150 files: INDX blocks; a 1 MiB
# file); where its structures are is read by the lab's own parser
# (tests/ntfs/lab/ntfsparse.py, not libntfs).  Expectations written here:
# a persistent read error is reported with its byte offset, -a writes
# nothing (the record or block that could not be read is not cleared or
# rebuilt) and exits 4; a transient one is retried and is no error; a
# file whose data cluster fails is not touched (fsck reads no file data).
# The image is judged afterwards without the shim: unchanged bytes,
# ntfs-3g lists every name, ntfsprogs-plus ntfsck -n is clean.
load ../lib/common
source "$FSFORGE_TOP/tests/ntfs/ntfs_helpers.bash"

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs

setup_file() {
	need_ntfs3g
	local d=$BATS_FILE_TMPDIR m
	cc -O2 -shared -fPIC -o "$d/eio.so" "$LIB/eio-shim.c" -ldl
	truncate -s 16M "$d/base.img"
	"$MKFS_NTFS" -q -F "$d/base.img"
	m=$d/mnt
	mkdir -p "$m"
	ntfs-3g "$d/base.img" "$m"
	mkdir "$m/dir"
	for i in $(seq 1 150); do echo "file $i" > "$m/dir/file-$i"; done
	head -c 1048576 /dev/urandom > "$m/data"
	umount "$m"
	# byte offsets: the record of dir/file-7, the middle INDX block of
	# dir, $MFTMirr, a cluster in the middle of /data
	PYTHONPATH=$FSFORGE_TOP/tests/ntfs/lab python3 - "$d/base.img" > "$d/where" <<'EOF'
import sys, ntfsparse as P
img = open(sys.argv[1], "rb").read()
g = P.Geometry(img)
rec = P.named_record(img, g, "file-7")
d = P.named_record(img, g, "dir")
drec = P.unfix(P.read_record(img, g, d)[1])
ia = next(o for o, t, nm, nr in P.attrs(drec) if t == 0xA0)
blocks = P.index_blocks(img, g, drec, ia)
f = P.unfix(P.read_record(img, g, P.named_record(img, g, "data"))[1])
da = next(o for o, t, nm, nr in P.attrs(f) if t == 0x80 and nm == "")
lcn, n = next(r for r in P.runlist(f, da) if r[0] is not None)
print(g.rec_off(rec), blocks[len(blocks) // 2], g.mirr_lcn * g.cs,
      (lcn + n // 2) * g.cs, len(blocks))
EOF
}

setup() { cd_tmp; cp --sparse=always "$BATS_FILE_TMPDIR/base.img" v.img; read -r REC INDX MIRR DATA NBLK < "$BATS_FILE_TMPDIR/where"; }

teardown() { umount_all; }

# fsck.ntfs ARGS... with reads of bytes RANGES (START+LEN,...) of v.img
# failing in MODE (eio, short, once)
failing() {
	local ranges=$1 mode=$2
	shift 2
	FSFORGE_EIO_FILE=$PWD/v.img FSFORGE_EIO=$ranges FSFORGE_EIO_MODE=$mode \
		FSFORGE_EIO_LOG=$PWD/hits LD_PRELOAD=$BATS_FILE_TMPDIR/eio.so \
		ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 "$FSCK" "$@"
}

# the image as the disk holds it: its bytes those of the base, ntfs-3g
# lists all 150 names of dir and reads /data, ntfsck -n is clean
intact() {
	local m
	cmp v.img "$BATS_FILE_TMPDIR/base.img" || die "the image changed"
	m=$(mount_ntfs3g v.img) || die "ntfs-3g cannot mount"
	[ "$(ls "$m/dir" | wc -l)" -eq 150 ] || die "dir lists $(ls "$m/dir" | wc -l) names"
	[ "$(cat "$m/dir/file-7")" = "file 7" ] || die "dir/file-7"
	[ "$(stat -c %s "$m/data")" -eq 1048576 ] || die "/data size"
	umount "$m"
	run sid_ntfsck v.img
	[ "$status" -eq 0 ] || { echo "$output"; die "ntfsck -n: exit $status"; }
}

@test "the shim fails the reads it is given (and only those)" {
	[ "$NBLK" -ge 3 ]
	run env FSFORGE_EIO_FILE=$PWD/v.img FSFORGE_EIO=$((REC + 512))+512 \
		LD_PRELOAD=$BATS_FILE_TMPDIR/eio.so dd if=v.img bs=512 skip=$((REC / 512)) count=2 of=/dev/null
	[ "$status" -ne 0 ]; [[ $output == *"Input/output error"* ]]
	run env FSFORGE_EIO_FILE=$PWD/v.img FSFORGE_EIO=$((REC + 512))+512 \
		LD_PRELOAD=$BATS_FILE_TMPDIR/eio.so dd if=v.img bs=512 skip=$((REC / 512)) count=1 of=/dev/null
	[ "$status" -eq 0 ]
}

@test "an MFT record in use that fails reads: reported by offset, -a writes nothing, exit 4" {
	need_sid
	run failing $((REC + 512))+512 eio -n v.img
	[ "$status" -eq 4 ]
	[[ $output == *"read error at byte $REC "* ]]
	run failing $((REC + 512))+512 eio -a v.img
	[ "$status" -eq 4 ]
	[[ $output == *"read error at byte $REC "* ]]
	[[ $output == *"the device fails reads: nothing more is repaired"* ]]
	[[ $output != *"Clear? yes"* ]]
	[ -s hits ]
	intact
}

@test "a short read into the record: the error is where the readable bytes end" {
	need_sid
	run failing $((REC + 512))+512 short -a v.img
	[ "$status" -eq 4 ]
	[[ $output == *"read error at byte $((REC + 512)) "* ]]
	intact
}

@test "the record failing once: retried, no error, nothing written" {
	need_sid
	run failing $((REC + 512))+512 once -a v.img
	[ "$status" -eq 0 ]
	[[ $output != *"read error"* ]]
	[ -s hits ]
	intact
}

@test "an INDX block of a directory that fails reads: no entry is dropped, exit 4" {
	need_sid
	run failing $((INDX + 1024))+512 short -n v.img
	[ "$status" -eq 4 ]
	[[ $output == *"read error at byte $((INDX + 1024)) "* ]]
	run failing $((INDX + 1024))+512 eio -a v.img
	[ "$status" -eq 4 ]
	[[ $output == *"read error at byte "* ]]
	intact
}

@test "\$MFTMirr that fails reads: reported, not rewritten, exit 4" {
	need_sid
	run failing "$MIRR+512" eio -a v.img
	[ "$status" -eq 4 ]
	[[ $output == *"read error at byte $MIRR "* ]]
	intact
}

@test "a file whose data cluster fails reads is not touched: exit 0" {
	need_sid
	run failing "$DATA+4096" eio -a v.img
	[ "$status" -eq 0 ]
	[ ! -s hits ]
	intact
}
