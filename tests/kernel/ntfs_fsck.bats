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
		tar -xJf "$t" -C "$W/x"
		mv "$W/x/ntfs.img" "$W/share/imgs/$n.img"
	done
	# every exit status of -a is kept: the test below requires 0 or 1
	: > "$W/a.rc"
	for img in "$W"/share/imgs/*.img; do
		rc=0
		"$FSCK" -a -q "$img" > "$W/x/a.log" 2>&1 || rc=$?
		echo "$(basename "$img" .img) $rc" >> "$W/a.rc"
		if [ "$rc" -gt 1 ]; then cat "$W/x/a.log" >> "$W/a.unrepaired.log"; fi
	done
	ls "$W"/share/imgs | wc -l > "$W/count"
	cp "$FSCK" "$W/share/fsck.ntfs"
	run "$FSFORGE_TOP/tests/kernel/vm-run" --sid --drivers ntfs --mem 1536 \
		--timeout 1200 --share "$W/share" \
		"$FSFORGE_TOP/tests/kernel/guest/ntfs-fsck.sh"
	echo "$output" > "$W/vm.log"
	echo "$status" > "$W/vm.rc"
}

@test "fsck.ntfs -a repaired every volume before the boot (exit 0 or 1)" {
	cat "$W/a.rc"
	[ "$(wc -l < "$W/a.rc")" -eq "$(cat "$W/count")" ]
	run awk '$2 != 0 && $2 != 1' "$W/a.rc"
	[ "$status" -eq 0 ]
	[ -z "$output" ] || { cat "$W/a.unrepaired.log"; false; }
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
