#!/usr/bin/env bats
# xfs_healer under Linux 7.2 (Debian sid kernel in QEMU, sid userland for
# mkfs.xfs/xfs_db/xfs_io/xfs_scrub and the reference xfs_healer).  One boot
# (tests/kernel/guest/xfs-healer.sh): an XFS filesystem with rmapbt and
# parent pointers damaged offline with xfs_db -x in four places (AGFL
# header, bnobt root block, an inode core, a directory data block), mounted,
# the damaged objects touched.  Our healer must report what the kernel
# reports (the reference xfs_healer watching an identical copy sees the
# same objects), repair the btree with --repair so that xfs_scrub -n is
# clean, and end with status 0 when the filesystem is unmounted.
load ../lib/common

setup_file() {
	export W=$BATS_FILE_TMPDIR
	mkdir -p "$W/share"
	cp "$FSFORGE_BUILDDIR/healer/xfs_healer" "$W/share/"
	for d in a b c; do truncate -s 320M "$W/$d.img"; done
	# The damage is deliberate, so the kernel's corruption reports for it
	# are expected; each allowed family is named, nothing broader.
	# Shutdown lines come only from the AGFL damage on vda/vdc.
	local dev='^XFS \(vd[abc]\): '
	run "$FSFORGE_TOP/tests/kernel/vm-run" --sid --drivers xfs --timeout 900 \
		--klog-allow "${dev}Metadata (corruption|CRC error) detected at (xfs_dir3_data_reada?_verify|xfs_dinode_verify|xfs_agfl_verify|xfs_allocbt_verify)" \
		--klog-allow "${dev}Unmount and run xfs_repair\$" \
		--klog-allow "${dev}First [0-9]+ bytes of corrupted metadata buffer:\$" \
		--klog-allow "${dev}metadata I/O error in \"(xfs_alloc_read_agfl|xfs_btree_read_buf_block|xfs_da_read_buf)\+" \
		--klog-allow "${dev}page discard on page [0-9a-f]+, inode 0x[0-9a-f]+, pos [0-9]+\.\$" \
		--klog-allow '^XFS \(vd[ac]\): Metadata I/O Error \(0x1\) detected at xfs_trans_read_buf_map\+.*Shutting down filesystem\.$' \
		--klog-allow '^XFS \(vd[ac]\): Please unmount the filesystem and rectify the problem\(s\)$' \
		--share "$W/share" --disk "$W/a.img" --disk "$W/b.img" --disk "$W/c.img" \
		"$FSFORGE_TOP/tests/kernel/guest/xfs-healer.sh"
	echo "$output" > "$W/vm.log"
	echo "$status" > "$W/vm.rc"
}

R() { cat "$W/share/result/$1"; }
obj() { sed -n "s/.*\\b$1=\\([0-9]*\\).*/\\1/p" "$W/share/result/objects"; }

@test "kernel: the guest ran to the end; no kernel warning beyond the reports of the deliberate damage" {
	[ "$(cat "$W/vm.rc")" -eq 0 ] || { grep -v '^\[' "$W/vm.log" | tail -40; false; }
	grep -q 'rmapbt=1' "$W/share/result/mkfs.log"
	grep -q 'parent=1' "$W/share/result/mkfs.log"
}

@test "kernel: our healer reports every damaged object the kernel reports, as the reference does" {
	R ours-log.err
	ag=$(printf '0x%x' "$(obj ag)")
	out=$(R ours-log.out)
	grep -qx "/mnt/x agno $ag agfl: sick" <<<"$out"
	# paths through parent pointers, as the reference; the inode with the
	# damaged core may have none to give (then "ino N gen G")
	grep -qxE "(/mnt/x ino $(obj victim) gen 0x0|/mnt/x/victim \(ino $(obj victim) gen 0x0\)) inode core: sick" <<<"$out"
	# the directory's path through parent pointers (the line is printed
	# for the record)
	grep -E "ino $(obj dir) gen .*directory: sick" <<<"$out" | sed 's/^/# directory line: /' >&3
	grep -qE "^/mnt/x/d \(ino $(obj dir) gen 0x[0-9a-f]+\) directory: sick\$" <<<"$out"
	grep -qx "/mnt/x: filesystem shut down: metadata I/O error" <<<"$out"
	# the reference (xfsprogs 7.2) on an identical copy: the same objects
	ref=$(R ref-log.out)
	grep -qx "/mnt/x agno $ag agfl: sick" <<<"$ref"
	grep -qx "/mnt/x ino $(obj victim) gen 0x0 core: sick" <<<"$ref"
	grep -qx "/mnt/x/d directory: sick" <<<"$ref"
	grep -q "shut down due to metadata I/O error" <<<"$ref"
	# and nothing either saw that the other did not (kinds of events)
	kinds() { sed -E 's/ \(ino [0-9]+ gen 0x[0-9a-f]+\)//; s|/mnt/x/victim |/mnt/x |; s/ gen 0x[0-9a-f]+//; s/ino [0-9]+ //; s|/mnt/x/d |/mnt/x |; s/inode core|core/core/; s/: (monitoring|health monitoring) started/: started/; s/filesystem shut down.*/shutdown/' | grep -v 'reporting events' | sort -u; }
	diff <(kinds <<<"$out") <(kinds <<<"$ref")
}

@test "kernel: the recorded stream replays to one JSON object per event" {
	events=$(R ours-log.out | grep -vc 'reporting events')
	[ "$(R ours.json | jq -c . | wc -l)" -eq "$events" ]
	R ours.json | jq -se '[.[] | select(.domain=="ag" and .type=="sick")] |
		length > 0 and all(.mask == ["agfl"] and .group == 1)' > /dev/null
}

@test "kernel: unmounting ends the daemon (ours and the reference) with status 0" {
	for n in ours-log ours-repair ref-log; do
		[ "$(R $n.umount)" -eq 0 ]
		[ "$(R $n.rc)" -eq 0 ] || { R $n.err; false; }
		! grep -q 'still running' "$W/share/result/$n.err" || false
	done
	[ "$(R ours-log.out | tail -1)" = "/mnt/x: filesystem unmounted" ]
	[ "$(R ours-repair.out | tail -1)" = "/mnt/x: filesystem unmounted" ]
}

@test "kernel: --repair repairs the damaged bnobt, and xfs_scrub -n is clean afterwards" {
	R ours-repair.out
	ag=$(printf '0x%x' "$(obj ag)")
	grep -A1 -x "/mnt/x agno $ag bnobt: sick" <<<"$(R ours-repair.out)" |
		grep -qx "/mnt/x agno $ag bnobt: Repairs successful."
	! grep -q 'error' "$W/share/result/ours-repair.err" || false
	R scrub-after.out
	[ "$(R scrub-after.rc)" -eq 0 ]
	! grep -qiE 'corrupt|error|repairs? (needed|required)' "$W/share/result/scrub-after.out" || false
	[ "$(R after.dirents)" -eq 300 ]
}

@test "kernel: no CPU while idle; peak RSS of ours and the reference (printed)" {
	for n in ours-log ref-log; do
		read -r ticks hz < "$W/share/result/$n.idle"
		echo "# $n: idle CPU $ticks ticks (1/$hz s) over 5 s, peak RSS $(R $n.hwm) KiB" >&3
	done
	read -r ticks hz < "$W/share/result/ours-log.idle"
	# an idle daemon must not poll: no CPU at all while nothing happens
	[ "$ticks" -eq 0 ]
	# peak RSS: both were measured; a sanitizer build (shadow memory and
	# quarantine: about 15 MiB for a replay on the host, 1.5 MiB plain) is
	# only held to a bound that catches runaway growth; a plain build uses
	# at most what the reference daemon uses, give or take 4 MiB
	ours=$(R ours-log.hwm)
	ref=$(R ref-log.hwm)
	[ "$ours" -gt 0 ]
	[ "$ref" -gt 0 ]
	if grep -q __asan_init "$FSFORGE_BUILDDIR/healer/xfs_healer"; then
		[ "$ours" -lt 65536 ]
	else
		[ "$ours" -le $((ref + 4096)) ]
	fi
}
