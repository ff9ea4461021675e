#!/usr/bin/env bats
# xfs_healer as systemd runs it: the sid root tree booted with systemd in
# QEMU (Linux 7.2), our units installed over xfsprogs' own.  Mounting a
# damaged XFS filesystem must make xfs_healer_start start
# xfs_healer@mnt-x.service (Type=notify, under the hardened unit), which
# repairs by the filesystem's autofsck=repair property and logs the events
# to the journal; unmounting stops it cleanly; xfs_scrub -n is clean.
# Then, judged by systemd's own state: a filesystem whose autofsck=none
# leaves the unit inactive, not failed; SIGKILL brings the unit back
# (Restart=on-failure); SIGTERM (systemctl stop) ends it without waiting
# while a hook (a drop-in adds --exec) sleeps; the status file is in
# /run/xfs_healer under the unit's sandbox and --status reads it.
# One boot: boot+test 622 s with TCG on 2 cores at load 13-16 (689 s in an
# earlier run); the checks added to the first part took about 4 minutes
# of it (systemctl is slow under TCG), hence --timeout 1800.
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
	for d in a b c; do truncate -s 320M "$W/$d.img"; done
	local dev='^XFS \(vda\): '
	run "$FSFORGE_TOP/tests/kernel/vm-run" --systemd --drivers xfs --timeout 1800 \
		--klog-allow "${dev}Metadata corruption detected at xfs_allocbt_verify" \
		--klog-allow "${dev}Unmount and run xfs_repair\$" \
		--klog-allow "${dev}First [0-9]+ bytes of corrupted metadata buffer:\$" \
		--klog-allow "${dev}metadata I/O error in \"xfs_btree_read_buf_block\+" \
		--klog-allow "${dev}page discard on page [0-9a-f]+, inode 0x[0-9a-f]+, pos [0-9]+\.\$" \
		--share "$W/share" \
		--disk "$W/a.img" --disk "$W/b.img" --disk "$W/c.img" "$FSFORGE_TOP/tests/kernel/guest/xfs-healer-systemd.sh"
	echo "$output" > "$W/vm.log"
	echo "$status" > "$W/vm.rc"
}

R() { cat "$W/share/result/$1"; }

@test "systemd: the guest ran to the end with a clean xfs log (apart from the deliberate damage)" {
	grep 'boot+test' "$W/vm.log" | sed 's/^/# /' >&3
	[ "$(cat "$W/vm.rc")" -eq 0 ] || { tail -60 "$W/vm.log"; false; }
}

# the harness's --systemd mode, on this boot (tests/kernel/harness.bats)
@test "harness --systemd: the script runs from its unit under systemd as PID 1" {
	[ "$(cat "$W/vm.rc")" -eq 0 ]
	[ "$(R harness-pid1)" = systemd ]
	[ "$(R harness-unit)" = activating ]
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
	# These two also hold for a unit that systemd has unloaded once it
	# stopped (it forgets the run: ExecMainCode=0).  The journal keeps the
	# run's end: systemd logs "Deactivated successfully." for a clean stop
	# and "Failed with result" otherwise.
	R journal-full.txt
	grep -q 'xfs_healer@mnt-x.service: Deactivated successfully' "$W/share/result/journal-full.txt"
	run grep -E 'xfs_healer@mnt-x.service: (Failed with result|Main process exited, code=(killed|dumped))' "$W/share/result/journal-full.txt"
	[ "$status" -eq 1 ]
	R scrub-after.out
	[ "$(R scrub-after.rc)" -eq 0 ]
}

# systemctl show output: the value of one property
P() { sed -n "s/^$2=//p" "$W/share/result/$1"; }

# the journal of a unit from its last "Starting" line on (its last run)
last_run() { tac "$W/share/result/$1" | sed '/^Starting /q' | tac; }

@test "systemd: autofsck=none: the unit ran, did not monitor, and is inactive, not failed" {
	R none.props; R none.show; R none.journal
	# the property, as the kernel stores it
	grep -qx 'trusted.xfs:autofsck="none"' "$W/share/result/none.props"
	# two runs (one per mount); neither failed
	[ "$(grep -c '^Starting ' "$W/share/result/none.journal")" -eq 2 ]
	run grep -E 'Failed|failed|code=' "$W/share/result/none.journal"
	[ "$status" -eq 1 ]
	# the last one: ready (Started), the daemon's reason, a clean end
	last_run none.journal > "$W/none.last"
	grep -q '^Started xfs_healer@mnt-y.service' "$W/none.last"
	grep -qx '/mnt/y: not monitoring (autofsck=none)' "$W/none.last"
	grep -qx 'xfs_healer@mnt-y.service: Deactivated successfully.' "$W/none.last"
	# systemd: not failed (a failed unit stays loaded and says so)
	[ "$(R none.is-failed)" = inactive ]
	[ "$(P none.show ActiveState)" = inactive ]
}

@test "systemd: SIGKILL: the unit comes back (Restart=on-failure), with a new process" {
	R kill.before; R kill.after; R kill.seconds
	[ "$(P kill.before ActiveState)" = active ]
	[ "$(P kill.before NRestarts)" = 0 ]
	grep -q 'slowhook' "$W/share/result/kill.before"
	[ "$(P kill.after ActiveState)" = active ]
	[ "$(P kill.after NRestarts)" = 1 ]
	old=$(P kill.before MainPID)
	new=$(P kill.after MainPID)
	[ "$old" -gt 0 ]
	[ "$new" -gt 0 ]
	[ "$new" -ne "$old" ]
}

@test "systemd: the status file is in /run/xfs_healer under the unit's sandbox; --status reads it" {
	R status.ls; R status.out; R status.killed; R status.after-restart
	grep -q ' mnt-z\.json$' "$W/share/result/status.ls"
	jq -e --argjson pid "$(P kill.before MainPID)" \
		'.pid == $pid and .state == "running" and .mode == "repair" and .mount == "/mnt/z"' \
		"$W/share/result/status.file"
	[ "$(R status.rc)" -eq 0 ]
	grep -qE "^process +$(P kill.before MainPID)\$" "$W/share/result/status.out"
	grep -qE '^state +running$' "$W/share/result/status.out"
	# killed: the file stays, --status says the process is gone
	grep -qE '^state +running \(but the process is gone: it was killed\)$' "$W/share/result/status.killed"
	# and the restarted daemon has replaced it
	grep -qE "^process +$(P kill.after MainPID)\$" "$W/share/result/status.after-restart"
}

@test "systemd: systemctl stop (SIGTERM) ends the unit while a hook sleeps, without waiting for it or a SIGKILL" {
	R stop.procs; R z.journal-mono; R stop.ms
	# at the stop, the hook's sleep was in the unit's control group
	grep -qx 'sleep' "$W/share/result/stop.procs"
	grep -qx 'xfs_healer' "$W/share/result/stop.procs"
	# systemd's own clock (journal, seconds since boot): Stopping .. Stopped
	t() { sed -n "s/^\[ *\([0-9.]*\)\] .*: $1 xfs_healer@mnt-z.service .*/\1/p" "$W/share/result/z.journal-mono" | tail -n 1; }
	t0=$(t Stopping)
	t1=$(t Stopped)
	[ -n "$t0" ]
	[ -n "$t1" ]
	ms=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%d", (b - a) * 1000 }')
	echo "# stop: $ms ms by systemd's journal, $(R stop.ms) ms for systemctl stop" >&3
	[ "$ms" -ge 0 ]
	# the hook sleeps 60 s: a daemon that waited for it would stop after
	# that, or be killed at the unit's stop timeout; the time itself is
	# only printed (about 1 s under TCG, more on a loaded machine)
	[ "$ms" -lt 60000 ]
	last_run z.journal > "$W/z.last"
	grep -qx 'xfs_healer@mnt-z.service: Deactivated successfully.' "$W/z.last"
	run grep -E "xfs_healer@mnt-z.service: (State 'stop-sigterm' timed out|Killing process [0-9]+ .* with signal SIGKILL)" "$W/z.last"
	[ "$status" -eq 1 ]
	[ "$(R stop.is-failed)" = inactive ]
}
