# One QEMU boot of guest/ntfs-fill.sh for ntfs_special.bats and
# ntfs_populate.bats (each had a boot of its own): the volumes of both
# files are made and filled in it, in disk order
#   vda m512 (mkntfs, 512-byte clusters), vdb f4096 (+repair),
#   vdc f65536 (ours), vdd mkntfs (+many), vde ours (+many).
# The first of the two files in a bats run boots; the other finds the
# results in $BATS_RUN_TMPDIR/ntfs-fill (a file run alone boots for both).
# Without the sid tree the mkntfs volumes are left out.
# shellcheck shell=bash

NTFS_FILL_VOLUMES="m512 f4096+repair f65536 mkntfs+many ours+many"

# ntfs_fill_boot: make the volumes and boot once per bats run; sets W to
# the shared directory (volumes NAME.img, share/out/NAME.*, vm.log, vm.rc)
ntfs_fill_boot() {
	W=$BATS_RUN_TMPDIR/ntfs-fill
	export W
	(
		flock 9
		[ -f "$W/vm.rc" ] && exit 0
		rm -rf "$W"
		mkdir -p "$W/share/out"
		disks=() specs=()
		for v in $NTFS_FILL_VOLUMES; do
			name=${v%%+*}
			case $name in
			m512 | mkntfs)
				[ -d "$SID_ROOT/tmp" ] || continue
				case $name in m512) size=24M cs=(-c 512) ;; *) size=128M cs=() ;; esac
				t=$(mktemp -d "$SID_ROOT/tmp/fsforge-fill.XXXXXX")
				truncate -s "$size" "$t/v.img"
				chroot "$SID_ROOT" /opt/ntfsprogs-plus/usr/sbin/mkntfs -F -f -q "${cs[@]}" \
					"/tmp/${t##*/}/v.img" > /dev/null 2>&1
				mv "$t/v.img" "$W/$name.img"
				rm -rf "$t"
				;;
			f4096 | f65536)
				truncate -s 24M "$W/$name.img"
				"$MKFS_NTFS" -q -c "${name#f}" "$W/$name.img"
				;;
			ours)
				truncate -s 128M "$W/$name.img"
				"$MKFS_NTFS" -q "$W/$name.img"
				;;
			esac
			disks+=(--disk "$W/$name.img")
			specs+=("$v")
		done
		cp "$FSFORGE_TOP/tests/lib/manifest" "$FSFORGE_TOP/tests/ntfs/special_damage.py" \
			"$FSFORGE_TOP/tests/ntfs/ntfs_patch.py" "$FSFORGE_BUILDDIR/fsck/fsck.ntfs" "$W/share/"
		# Linux 7.2 leaves the 512-byte-cluster volume marked dirty at its
		# first unmount ("Volume has errors"; vda, mkntfs here, mkfs.ntfs too
		# in a trial run), while fsck.ntfs -n and ntfsck -n find it consistent:
		# that one line is the driver's and is let through
		rc=0
		"$FSFORGE_TOP/tests/kernel/vm-run" --sid --drivers ntfs --timeout 1800 \
			--klog-allow '\(device vda\): ntfs_put_super\(\): Volume has errors' \
			--share "$W/share" "${disks[@]}" \
			"$FSFORGE_TOP/tests/kernel/guest/ntfs-fill.sh" "${specs[@]}" > "$W/vm.log" 2>&1 || rc=$?
		echo "$rc" > "$W/vm.rc"
	) 9> "$BATS_RUN_TMPDIR/ntfs-fill.lock"
}
