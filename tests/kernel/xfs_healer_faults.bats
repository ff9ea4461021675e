#!/usr/bin/env bats
# xfs_healer under faults the kernel produces, Linux 7.2 (Debian sid kernel
# in QEMU, sid userland).  One boot (tests/kernel/guest/xfs-healer-faults.sh):
# boot+test 408 s with TCG on 2 cores at load 13-16 (other guests running),
# of which the storms take about 3 minutes:
#   - device-mapper's error target under the sectors of one file: buffered
#     and direct reads fail, a media verification (xfs_io verifymedia -R)
#     fails; the healer must report each as the kernel delivers it
#   - xfs_io -x -c shutdown under --repair: reported once, nothing after
#   - a damaged filesystem mounted read-only under --repair: the damage is
#     reported, nothing is repaired, the read-only message comes once
#   - 200 damaged inode cores found at once while a sleeping hook stalls the
#     worker: nothing the kernel delivered is lost (default queue), or the
#     loss is reported and the re-check started (--queue-events 8); peak RSS
# What the kernel said is taken from the commands that met the faults
# (exit status, errno text, xfs_io's own verify report), the device-mapper
# table and the kernel log, never from the healer's output.
load ../lib/common

setup_file() {
	export W=$BATS_FILE_TMPDIR
	mkdir -p "$W/share"
	cp "$FSFORGE_BUILDDIR/healer/xfs_healer" "$W/share/"
	# a plain build, when there is one, gives the storm's RSS figure
	local p=$FSFORGE_TOP/build/healer/xfs_healer
	if [ -x "$p" ] && ! grep -q __asan_init "$p"; then
		cp "$p" "$W/share/xfs_healer.plain"
	fi
	for d in a b c; do truncate -s 320M "$W/$d.img"; done
	# the deliberate damage and the shutdown are reported by the kernel;
	# each expected family is named, nothing broader
	local dm='^XFS \(dm-[0-9]+\): ' vd='^XFS \(vd[bc]\): '
	run "$FSFORGE_TOP/tests/kernel/vm-run" --sid --drivers xfs --timeout 1500 \
		--klog-allow "${dm}User initiated shutdown received\.\$" \
		--klog-allow "${dm}Log I/O Error \(0x6\) detected at xfs_fs_goingdown\+.*Shutting down filesystem\.\$" \
		--klog-allow "${dm}Please unmount the filesystem and rectify the problem\(s\)\$" \
		--klog-allow "${vd}Metadata (corruption|CRC error) detected at (xfs_dir3_data_reada?_verify|xfs_dinode_verify)" \
		--klog-allow "${vd}Unmount and run xfs_repair\$" \
		--klog-allow "${vd}First [0-9]+ bytes of corrupted metadata buffer:\$" \
		--klog-allow "${vd}metadata I/O error in \"xfs_da_read_buf\+" \
		--share "$W/share" --disk "$W/a.img" --disk "$W/b.img" --disk "$W/c.img" \
		"$FSFORGE_TOP/tests/kernel/guest/xfs-healer-faults.sh"
	echo "$output" > "$W/vm.log"
	echo "$status" > "$W/vm.rc"
}

R() { cat "$W/share/result/$1"; }
F() { echo "$W/share/result/$1"; }

@test "faults: the guest ran to the end; no kernel warning beyond the expected reports" {
	grep 'boot+test' "$W/vm.log" | sed 's/^/# /' >&3
	[ "$(cat "$W/vm.rc")" -eq 0 ] || { grep -v '^\[' "$W/vm.log" | tail -40; false; }
	grep -q 'rmapbt=1' "$(F mkfs-a.log)"
}

@test "faults: a read through the error target: buffered and direct read errors of that file" {
	R dm.table; R io.out
	# the kernel failed both reads (EIO)
	[ "$(R io-cat.rc)" -ne 0 ]
	grep -q 'Input/output error' "$(F io-cat.err)"
	[ "$(R io-dio.rc)" -ne 0 ]
	grep -q 'Input/output error' "$(F io-dio.out)"
	ino=$(R bad.ino)
	run jq -c "select(.domain == \"filerange\" and .type == \"bufread\" and .ino == $ino and .error == 5 and .path == \"/mnt/x/bad\")" "$(F io.out)"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -ge 1 ]
	run jq -c "select(.domain == \"filerange\" and .type == \"dioread\" and .ino == $ino and .error == 5 and .pos == 0)" "$(F io.out)"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -ge 1 ]
	# the text form of the same stream (replayed capture)
	grep -qE "^/mnt/x ino $ino gen 0x[0-9a-f]+ pos 0 len [0-9]+: direct read error: Input/output error\$" "$(F io.text)"
	[ "$(R io.rc)" -eq 0 ]
	[ "$(R io.umount)" -eq 0 ]
}

@test "faults: a media verification over the error target: the media error the kernel found, and the file data lost" {
	R io-verify.out
	# the failing sectors, from the table; the failed range, from xfs_io
	read -r s0 len < <(awk '$3 == "error" { print $1, $2 }' "$(F dm.table)")
	[ -n "$len" ]
	[ "$(R io-verify.rc)" -ne 0 ]
	read -r off vlen < <(sed -n 's/^datadev: verify error at offset \([0-9]*\) length \([0-9]*\):.*/\1 \2/p' "$(F io-verify.out)")
	[ -n "$vlen" ]
	# the range xfs_io was told failed covers the table's error sectors
	[ $((off / 512)) -le "$s0" ]
	[ $(((off + vlen) / 512)) -ge $((s0 + len)) ]
	# the healer reports that very range as a media error of the data device
	run jq -c "select(.domain == \"datadev\" and .type == \"media_error\" and .daddr == $((off / 512)) and .bbcount == $((vlen / 512)))" "$(F io.out)"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
	# and the file whose blocks are there as data lost (reverse mapping)
	run jq -c "select(.domain == \"filerange\" and .type == \"datalost\" and .ino == $(R bad.ino))" "$(F io.out)"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -ge 1 ]
	grep -qE "^/mnt/x datadev daddr 0x$(printf '%x' $((off / 512))) bbcount 0x$(printf '%x' $((vlen / 512))): media error\$" "$(F io.text)"
}

@test "faults: a shutdown under --repair is reported once; no repair or re-check after it" {
	R shut.out; R shut.err; R shut.klog
	# the kernel: one user-initiated shutdown, as a log I/O error
	[ "$(grep -c 'User initiated shutdown received' "$(F shut.klog)")" -eq 1 ]
	grep -q 'Log I/O Error .*Shutting down filesystem' "$(F shut.klog)"
	[ "$(R shut-io.rc)" -eq 0 ]
	# a write after it failed
	[ "$(R shut-write.rc)" -ne 0 ]
	# the healer: one shutdown line naming the log I/O error, one message
	[ "$(grep -c 'filesystem shut down' "$(F shut.out)")" -eq 1 ]
	grep -qx '/mnt/x: filesystem shut down: log I/O error, forced unmount' "$(F shut.out)"
	[ "$(grep -c 'the filesystem is shut down; no more repairs: unmount it and run xfs_repair' "$(F shut.err)")" -eq 1 ]
	# after the shutdown line only the unmount; nothing repaired or re-checked
	[ "$(sed -n '/filesystem shut down/,$p' "$(F shut.out)" | sed 1d)" = "/mnt/x: filesystem unmounted" ]
	run grep -iE 'repair(s successful| failed)|re-check|xfs_scrub@' "$(F shut.out)" "$(F shut.err)"
	[ "$status" -eq 1 ]
	[ "$(R shut.rc)" -eq 0 ]
}

@test "faults: a damaged filesystem mounted read-only: damage reported, nothing repaired, one read-only message" {
	R ro.out; R ro.err; R ro.status
	read -r dir victim < <(sed 's/dir=\([0-9]*\) victim=\([0-9]*\)/\1 \2/' "$(F ro.objects)")
	# the kernel refused both (EUCLEAN)
	grep -q 'Structure needs cleaning' "$(F ro-ls.err)"
	grep -q 'Structure needs cleaning' "$(F ro-stat.err)"
	kcore=$(grep -c "xfs_dinode_verify.*inode 0x$(printf '%x' "$victim") dinode" "$(F ro.klog)")
	echo "# kernel: $kcore dinode verifier reports of the victim" >&3
	[ "$kcore" -ge 1 ]
	grep -qE "^/mnt/x/d \(ino $dir gen 0x[0-9a-f]+\) directory: sick\$" "$(F ro.out)"
	hcore=$(grep -c "^/mnt/x ino $victim gen 0x0 inode core: sick\$" "$(F ro.out)")
	[ "$hcore" -ge 1 ]
	# no more reports than the kernel made (a path lookup of an inode whose
	# core is damaged made the kernel report it again, without end)
	[ "$hcore" -le "$kcore" ]
	[ "$kcore" -le 10 ]
	[ "$(grep -c 'mounted read-only: no repairs while it stays so' "$(F ro.err)")" -eq 1 ]
	run grep -E 'Repairs successful|Repair failed|still corrupt after repair|[1-9][0-9]* repaired' "$(F ro.out)" "$(F ro.err)"
	[ "$status" -eq 1 ]
	jq -e '.mode == "repair" and .repairs_done == 0 and .repairs_failed == 0 and .repairs_skipped >= 1' "$(F ro.status)"
	[ "$(R ro.rc)" -eq 0 ]
}

# the inode numbers the kernel refused to ls -l (EUCLEAN)
refused() {
	sed -n "s|^ls: cannot access '/mnt/x/s/\\(.*\\)': Structure needs cleaning\$|\\1|p" "$(F "$1.ls.err")" |
		while read -r n; do awk -v n="$n" '$2 == n { print $1 }' "$(F storm.inos)"; done | sort -u
}
# the inode numbers the healer reported sick
reported() {
	sed -n 's|^/mnt/x ino \([0-9]*\) gen 0x0 inode core: sick$|\1|p' "$(F "$1.out")" | sort -u
}

@test "faults: a storm of 200 sick inodes with a stalled worker: every one the kernel refused is reported" {
	[ "$(wc -l < "$(F storm.inos)")" -eq 200 ]
	refused storm-big > "$W/big.refused"
	reported storm-big > "$W/big.reported"
	nref=$(wc -l < "$W/big.refused")
	echo "# kernel refused $nref inodes; the healer reported $(wc -l < "$W/big.reported") in $(R storm-big.seconds) s; $(grep -c xfs_dinode_verify "$(F storm-big.klog)") kernel log reports" >&3
	[ "$nref" -eq 200 ]
	# the hooks held the worker back: when ls had met every damaged inode,
	# fewer had been reported (the rest waited in the queue)
	read -r lsdone atls < "$(F storm-big.ls-done)"
	echo "# ls done after $lsdone s, $atls reported by then" >&3
	[ "$atls" -lt "$nref" ]
	# default queue: nothing dropped by the daemon
	[ "$(grep -c 'events dropped' "$(F storm-big.err)")" -eq 0 ]
	if grep -qE 'events? lost' "$(F storm-big.out)"; then
		# the kernel's own queue overflowed: reported, and the re-check ran
		grep -q 're-check done' "$(F storm-big.out)" "$(F storm-big.err)"
	else
		run comm -23 "$W/big.refused" "$W/big.reported"
		[ -z "$output" ]
	fi
	[ "$(R storm-big.rc)" -eq 0 ]
}

@test "faults: the same storm through an 8-event queue: the loss is reported and the re-check started" {
	refused storm-small > "$W/small.refused"
	reported storm-small > "$W/small.reported"
	nref=$(wc -l < "$W/small.refused")
	nrep=$(wc -l < "$W/small.reported")
	dropped=$(sed -n 's/.*: \([0-9]*\) events dropped: .*/\1/p' "$(F storm-small.err)" | awk '{ s += $1 } END { print s + 0 }')
	lost=$(sed -n 's|^/mnt/x: \([0-9]*\) events\{0,1\} lost$|\1|p' "$(F storm-small.out)" | awk '{ s += $1 } END { print s + 0 }')
	echo "# kernel refused $nref inodes; the healer reported $nrep, dropped $dropped from its queue, $lost lost in all" >&3
	[ "$nref" -eq 200 ]
	[ "$dropped" -gt 0 ]
	grep -q "events dropped: xfs_healer's event queue (8 events) was full" "$(F storm-small.err)"
	# every refused inode was either reported or counted as lost
	[ $((nrep + lost)) -ge "$nref" ]
	# and the loss started the full re-check (in-process: no systemd)
	cat "$(F storm-small.out)" "$(F storm-small.err)" | grep -q 'events were lost: checking every AG and filesystem-wide object in-process'
	cat "$(F storm-small.out)" "$(F storm-small.err)" | grep -q 're-check done: [0-9]* objects checked'
	[ "$(R storm-small.rc)" -eq 0 ]
}

@test "faults: peak RSS of the daemon through the storms (printed)" {
	big=$(R storm-big.hwm)
	small=$(R storm-small.hwm)
	kind=sanitizer
	if [ -f "$W/share/xfs_healer.plain" ]; then kind=plain; fi
	echo "# peak RSS: $big KiB (200-event storm, $kind build), $small KiB (8-event queue, build under test)" >&3
	[ "$big" -gt 0 ]
	[ "$small" -gt 0 ]
	# the queue is 1 MiB; a plain daemon stays far below 16 MiB, a
	# sanitizer build (shadow memory, quarantine) below 64 MiB
	if [ "$kind" = plain ]; then
		[ "$big" -lt 16384 ]
	fi
	[ "$small" -lt 65536 ]
}
