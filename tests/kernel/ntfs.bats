#!/usr/bin/env bats
# mkfs.ntfs volumes under Linux 7.x's read-write "ntfs" driver (Debian sid
# kernel in QEMU, one boot): every variant mounted read-write (4096-byte-
# sector volumes read-only), files created, renamed and deleted, a
# directory of 3000 entries, long and non-ASCII names, a 24 MiB file;
# unmounted, remounted and verified; ntfsprogs-plus ntfsck -n on the fresh
# and on the kernel-written volume; the kernel log must stay clean.  Then
# bookworm's ntfs-3g reads what the kernel wrote.
load ../lib/common
load ../ntfs/ntfs_helpers

VARIANTS=(
	"c4k:big::256M"
	"c512:big:-c 512:128M"
	"c64k:rw:-c 65536:512M"
	"c2m:rw:-c 2M:1G"
	"tiny:tiny::8M"
	"huge:rw::3T"
	"opts:rw:-L Étiquette -U -I -T:256M"
	"s4k:ro:-s 4096:256M"
)

setup_file() {
	export W=$BATS_FILE_TMPDIR
	mkdir -p "$W/share"
	disks=() specs=()
	for v in "${VARIANTS[@]}"; do
		IFS=: read -r name mode opts size <<<"$v"
		truncate -s "$size" "$W/$name.img"
		# shellcheck disable=SC2086
		"$MKFS_NTFS" -q $opts "$W/$name.img"
		if [ "$mode" = ro ]; then
			disks+=(--disk "$W/$name.img,ro,bs=4096")
		else
			disks+=(--disk "$W/$name.img")
		fi
		specs+=("$name:$mode")
	done
	run "$FSFORGE_TOP/tests/kernel/vm-run" --sid --drivers ntfs --timeout 1500 \
		--share "$W/share" "${disks[@]}" \
		"$FSFORGE_TOP/tests/kernel/guest/ntfs-check.sh" "${specs[@]}"
	echo "$output" > "$W/vm.log"
	echo "$status" > "$W/vm.rc"
}

teardown() { umount_all; }

r() { cat "$W/share/result/$1"; }

@test "kernel: the guest ran to the end with a clean ntfs kernel log" {
	[ "$(cat "$W/vm.rc")" -eq 0 ] || { tail -40 "$W/vm.log"; false; }
}

@test "kernel: every read-write variant survives create/rename/delete/3000 entries/big file and a remount" {
	for v in "${VARIANTS[@]}"; do
		IFS=: read -r name mode _ <<<"$v"
		[ "$mode" = ro ] && continue
		echo "# $name: $(r "$name.rc")"
		[ "$(r "$name.rc")" -eq 0 ]
	done
}

@test "kernel: 4096-byte-sector volume mounts read-only and lists its root" {
	[ "$(r s4k.rc)" -eq 0 ]
	grep -q . "$W/share/result/s4k.df"
}

@test "reference: ntfsck -n (sid) in the guest: fresh volumes clean" {
	for v in "${VARIANTS[@]}"; do
		IFS=: read -r name _ <<<"$v"
		echo "# $name.fresh: $(r "$name.fresh.rc")"
		[ "$(r "$name.fresh.rc")" -eq 0 ] || { tail -5 "$W/share/result/$name.fresh.log"; false; }
	done
}

@test "reference: ntfsck -n (sid) in the guest: kernel-written volumes clean" {
	for v in "${VARIANTS[@]}"; do
		IFS=: read -r name mode _ <<<"$v"
		[ "$mode" = ro ] && continue
		echo "# $name.after: $(r "$name.after.rc")"
		[ "$(r "$name.after.rc")" -eq 0 ] || { tail -5 "$W/share/result/$name.after.log"; false; }
	done
}

@test "ntfs-3g (bookworm) reads what the kernel wrote" {
	need_ntfs3g
	for name in c4k c512 c64k; do
		m=$(mount_ntfs3g "$W/$name.img")
		[ "$(cat "$m/hello.txt")" = hello ]
		[ "$(cat "$m/Ünïcödé/ディレクトリ/ファイル€.txt")" = grüße ]
		if [ "$name" != c64k ]; then
			[ "$(ls "$m/many" | wc -l)" -eq 3000 ]
		fi
		umount "$m"
	done
}
