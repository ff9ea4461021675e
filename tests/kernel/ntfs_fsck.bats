#!/usr/bin/env bats
# fsck.ntfs against the Linux 7.x ntfs driver (one QEMU boot): every
# volume it repaired -- the f_ cases and the public corpus images it fully
# repairs -- must mount read-write, be walked and written by the kernel
# with no ntfs warning in the kernel log, and check clean afterwards.
# Every corpus image is included: since index rebuilding landed, fsck.ntfs
# repairs all of them.
load ../lib/common

CASES=$FSFORGE_TOP/tests/ntfs/cases
FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs

setup_file() {
	export W=$BATS_FILE_TMPDIR
	local corpus=$FSFORGE_TOP/tests/ntfs/corpus
	mkdir -p "$W/share/imgs" "$W/x"
	for d in "$CASES"/f_*/; do
		xz -dc "$d/image.xz" > "$W/share/imgs/$(basename "$d").img"
	done
	for t in "$corpus"/created_manually/*/ntfs.img.tar.xz; do
		n=$(basename "$(dirname "$t")")
		tar -xJf "$t" -C "$W/x" && mv "$W/x/ntfs.img" "$W/share/imgs/$n.img"
	done
	for img in "$W"/share/imgs/*.img; do
		"$FSCK" -a -q "$img" > /dev/null 2>&1 || true
	done
	ls "$W"/share/imgs | wc -l > "$W/count"
	cp "$FSCK" "$W/share/fsck.ntfs"
	run "$FSFORGE_TOP/tests/kernel/vm-run" --sid --drivers ntfs --mem 1536 \
		--timeout 1200 --share "$W/share" \
		"$FSFORGE_TOP/tests/kernel/guest/ntfs-fsck.sh"
	echo "$output" > "$W/vm.log"
	echo "$status" > "$W/vm.rc"
}

@test "kernel: repaired volumes were used with no ntfs warning in the kernel log" {
	[ "$(cat "$W/vm.rc")" -eq 0 ] || { tail -40 "$W/vm.log"; false; }
	[ "$(wc -l < "$W/share/result")" -eq "$(cat "$W/count")" ]
	[ "$(cat "$W/count")" -ge 32 ]
}

@test "kernel: every repaired volume mounts read-write, is walked and written" {
	cat "$W/share/result"
	! grep -v ' ok fsck=' "$W/share/result"
}

@test "kernel: after the kernel wrote to them, fsck.ntfs -n finds them clean" {
	cat "$W/share/result.fsck" 2>/dev/null || true
	! grep -v 'fsck=0$' "$W/share/result"
}
