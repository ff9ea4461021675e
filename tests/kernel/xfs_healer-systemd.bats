#!/usr/bin/env bats
# xfs_healer as systemd runs it: the sid root tree booted with systemd in
# QEMU (Linux 7.2), our units installed over xfsprogs' own.  Mounting a
# damaged XFS filesystem must make xfs_healer_start start
# xfs_healer@mnt-x.service (Type=notify, under the hardened unit), which
# repairs by the filesystem's autofsck=repair property and logs the events
# to the journal; unmounting stops it cleanly; xfs_scrub -n is clean.
load ../lib/common

setup_file() {
	export W=$BATS_FILE_TMPDIR
	mkdir -p "$W/share/units"
	# the units' sandbox (MemoryDenyWriteExecute, the syscall filter,
	# ProtectProc) is no place for a sanitizer runtime: a sanitizer
	# build's daemons are replaced by the plain build's
	local b=$FSFORGE_BUILDDIR
	if grep -q __asan_init "$b/healer/xfs_healer"; then
		b=$FSFORGE_TOP/build
		[ -x "$b/healer/xfs_healer" ] && ! grep -q __asan_init "$b/healer/xfs_healer" ||
			{ echo "need a plain build in $b (scripts/build)" >&2; return 1; }
	fi
	cp "$b/healer/xfs_healer" "$b/healer/xfs_healer_start" "$W/share/"
	cp "$b/healer/xfs_healer@.service" "$b/healer/xfs_healer_start.service" \
		"$FSFORGE_TOP/healer/system-xfs_healer.slice" "$W/share/units/"
	truncate -s 320M "$W/a.img"
	local dev='^XFS \(vda\): '
	run "$FSFORGE_TOP/tests/kernel/vm-run" --systemd --drivers xfs --timeout 900 \
		--klog-allow "${dev}Metadata corruption detected at xfs_allocbt_verify" \
		--klog-allow "${dev}Unmount and run xfs_repair\$" \
		--klog-allow "${dev}First [0-9]+ bytes of corrupted metadata buffer:\$" \
		--klog-allow "${dev}metadata I/O error in \"xfs_btree_read_buf_block\+" \
		--klog-allow "${dev}page discard on page [0-9a-f]+, inode 0x[0-9a-f]+, pos [0-9]+\.\$" \
		--share "$W/share" --disk "$W/a.img" "$FSFORGE_TOP/tests/kernel/guest/xfs-healer-systemd.sh"
	echo "$output" > "$W/vm.log"
	echo "$status" > "$W/vm.rc"
}

R() { cat "$W/share/result/$1"; }

@test "systemd: the guest ran to the end with a clean xfs log (apart from the deliberate damage)" {
	[ "$(cat "$W/vm.rc")" -eq 0 ] || { grep -v '^\[' "$W/vm.log" | tail -40; false; }
}

@test "systemd: our xfs_healer_start runs and started xfs_healer@mnt-x.service for the mount" {
	R start.show; R healer.show
	grep -qx 'ActiveState=active' "$W/share/result/start.show"
	grep -q '/usr/local/sbin/xfs_healer_start' "$W/share/result/start.show"
	grep -qx 'ActiveState=active' "$W/share/result/healer.show"
	grep -qx 'Type=notify' "$W/share/result/healer.show"
	grep -q 'started xfs_healer@mnt-x.service' "$W/share/result/journal-start.txt"
}

@test "systemd: the journal has the events and the repair (autofsck=repair)" {
	R fsprops; R journal.txt
	ag=$(printf '0x%x' "$(sed -n 's/^ag=//p' "$W/share/result/objects")")
	grep -qx '/mnt/x: repairing sick metadata (autofsck=repair)' "$W/share/result/journal.txt"
	grep -qx "/mnt/x agno $ag bnobt: sick" "$W/share/result/journal.txt"
	grep -qx "/mnt/x agno $ag bnobt: Repairs successful." "$W/share/result/journal.txt"
	grep -qx '/mnt/x: filesystem unmounted' "$W/share/result/journal.txt"
	# structured fields for filtering
	grep -q '"XFS_HEALER_DOMAIN" *: *"2"' "$W/share/result/journal.json"
}

@test "systemd: unmount stops the service cleanly; xfs_scrub -n is clean after the repair" {
	R healer.after
	[ "$(R umount.rc)" -eq 0 ]
	grep -qx 'ActiveState=inactive' "$W/share/result/healer.after"
	grep -qx 'Result=success' "$W/share/result/healer.after"
	R scrub-after.out
	[ "$(R scrub-after.rc)" -eq 0 ]
}
