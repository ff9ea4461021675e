#!/usr/bin/env bats
# The systemd units and xfs_healer_start: `make install` puts the units in
# systemd's unit directory with our sbindir; Debian sid's systemd (in the
# cached sid root tree, through a throw-away overlay) verifies them with no
# message and scores them at least as well as xfsprogs 7.2's own units.
load ../lib/common

START=$FSFORGE_BUILDDIR/healer/xfs_healer_start
SID=${FSFORGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fsforge}/sid-root

setup_file() {
	export INST=$BATS_FILE_TMPDIR/inst
	make -s -C "$FSFORGE_BUILDDIR" install DESTDIR="$INST" > "$BATS_FILE_TMPDIR/install.log" 2>&1
	echo $? > "$BATS_FILE_TMPDIR/install.rc"
}

unitdir() { dirname "$(find "$INST" -name system-xfs_healer.slice)"; }

@test "make install: the three units in the systemd unit directory, sbindir substituted" {
	[ "$(cat "$BATS_FILE_TMPDIR/install.rc")" -eq 0 ] || cat "$BATS_FILE_TMPDIR/install.log"
	d=$(unitdir)
	[ -n "$d" ]
	prefix=$(sed -n 's/^prefix = //p' "$FSFORGE_BUILDDIR/Makefile")
	# systemd.pc's directory, or one under the prefix (no systemd.pc, or
	# --with-systemdsystemunitdir='${prefix}/...' as make distcheck gives)
	want=$(sed -n 's/^systemdsystemunitdir = //p' "$FSFORGE_BUILDDIR/Makefile")
	want=${want//\$\{prefix\}/$prefix}
	[ "$d" = "$INST$want" ]
	for u in 'xfs_healer@.service' xfs_healer_start.service system-xfs_healer.slice; do
		[ -f "$d/$u" ]
		! grep -q '@sbindir@' "$d/$u" || false
	done
	sbindir=$(sed -n 's/^sbindir = //p' "$FSFORGE_BUILDDIR/Makefile")
	sbindir=${sbindir//\$\{exec_prefix\}/$prefix}
	grep -qx "ExecStart=$sbindir/xfs_healer %f" "$d/xfs_healer@.service"
	[ -x "$INST$sbindir/xfs_healer" ]
	[ -x "$INST$sbindir/xfs_healer_start" ]
	! grep -q '^CPUAccounting' "$d"/* || false
	grep -qx 'CPUQuota=200%' "$d/system-xfs_healer.slice"
}

@test "every hardening directive of the reference unit is present" {
	d=$(unitdir)
	for k in 'ConditionCapability=CAP_SYS_ADMIN' 'ConditionCapability=CAP_DAC_OVERRIDE' \
		 'ConditionPathIsMountPoint=%f' 'RequiresMountsFor=%f' \
		 'Slice=system-xfs_healer.slice' 'PrivateNetwork=true' \
		 'RestrictAddressFamilies=AF_UNIX' 'ProtectKernelTunables=true' \
		 'ProtectKernelModules=true' 'ProtectKernelLogs=true' \
		 'ProtectControlGroups=true' 'ProtectProc=invisible' 'ProcSubset=pid' \
		 'MemoryDenyWriteExecute=true' 'SystemCallFilter=@system-service' \
		 'SystemCallFilter=~@privileged @resources @mount' \
		 'CapabilityBoundingSet=CAP_SYS_ADMIN CAP_DAC_OVERRIDE' \
		 'NoNewPrivileges=true' 'UMask=7777' 'DevicePolicy=closed' \
		 'DefaultInstance=-' 'WantedBy=multi-user.target'; do
		grep -qxF "$k" "$d/xfs_healer@.service" || die "missing $k"
	done
	! grep -qE '^(ProtectSystem=(yes|true|full|strict)|DynamicUser=(yes|true))' "$d/xfs_healer@.service"
}

# run systemd-analyze of Debian sid on our units, in an overlay of the tree
sid_analyze() {
	[ -d "$SID/usr/lib/systemd" ] || need_or_skip "sid root tree not cached (tests/kernel/setup --sid)"
	[ "$(id -u)" -eq 0 ] || need_or_skip "needs root"
	local ov=$BATS_TEST_TMPDIR/ov
	mkdir -p "$ov/up" "$ov/work" "$ov/root"
	mount -t overlay overlay -o "lowerdir=$SID,upperdir=$ov/up,workdir=$ov/work" "$ov/root"
	OV=$ov/root
	d=$(unitdir)
	cp "$INST"/usr/local/sbin/xfs_healer "$INST"/usr/local/sbin/xfs_healer_start "$OV/usr/local/sbin/" 2>/dev/null ||
		cp "$(find "$INST" -name xfs_healer -type f | head -1)" "$(find "$INST" -name xfs_healer_start -type f | head -1)" "$OV/usr/local/sbin/"
	mkdir -p "$OV/tmp/ours" "$OV/tmp/ref"
	cp "$d"/* "$OV/tmp/ours/"
	cp "$d/xfs_healer@.service" "$OV/tmp/ours/xfs_healer@mnt.service"
	cp "$SID/usr/lib/systemd/system/xfs_healer@.service" "$OV/tmp/ref/xfs_healer@mnt.service"
	cp "$SID/usr/lib/systemd/system/xfs_healer_start.service" "$OV/tmp/ref/"
	# our units replace the packaged ones
	rm -f "$OV"/usr/lib/systemd/system/xfs_healer* "$OV/usr/lib/systemd/system/system-xfs_healer.slice"
	cp "$d"/* "$OV/etc/systemd/system/"
	sed -i "s|^\(Exec[A-Za-z]*=\)[^ ]*/xfs_healer|\1/usr/local/sbin/xfs_healer|" "$OV"/etc/systemd/system/xfs_healer* "$OV"/tmp/ours/xfs_healer*
}

sid_cleanup() { if [ -n "${OV:-}" ]; then umount "$OV" 2>/dev/null || true; fi; }
teardown() { sid_cleanup; }

@test "sid's systemd-analyze verify: no message for any of our units" {
	sid_analyze
	for u in /tmp/ours/xfs_healer@mnt.service /etc/systemd/system/xfs_healer_start.service \
		 /etc/systemd/system/system-xfs_healer.slice; do
		run chroot "$OV" systemd-analyze verify --man=no "$u"
		echo "$output"
		[ "$status" -eq 0 ]
		# xfsprogs' own xfs_scrub units, still in the tree, may complain
		! grep -v 'xfs_scrub' <<<"$output" | grep -q . || false
	done
}

@test "sid's systemd-analyze security: our units score no worse than xfsprogs 7.2's" {
	sid_analyze
	score() { chroot "$OV" systemd-analyze security --offline=true "$1" 2>&1 |
		sed -n 's/.*Overall exposure level for .*: \([0-9.]*\) .*/\1/p'; }
	ours=$(score /tmp/ours/xfs_healer@mnt.service)
	ref=$(score /tmp/ref/xfs_healer@mnt.service)
	ours_start=$(score /etc/systemd/system/xfs_healer_start.service)
	ref_start=$(score /tmp/ref/xfs_healer_start.service)
	echo "# xfs_healer@: ours $ours, xfsprogs $ref; xfs_healer_start: ours $ours_start, xfsprogs $ref_start" >&3
	[ -n "$ours" ]
	[ -n "$ref" ]
	awk -v a="$ours" -v b="$ref" 'BEGIN { exit !(a <= b) }'
	awk -v a="$ours_start" -v b="$ref_start" 'BEGIN { exit !(a <= b) }'
}

@test "xfs_healer_start: --help, -V, usage errors" {
	run "$START" --help
	[ "$status" -eq 0 ]
	[[ $output == *--supported* && $output == *--mountns* ]]
	run "$START" -V
	[[ $output == "xfs_healer_start (fsforge) "* ]]
	run "$START" extra
	[ "$status" -eq 16 ]
	run "$START" --bogus
	[ "$status" -eq 16 ]
}

@test "xfs_healer_start on a kernel without mount notifications: one line, status 1" {
	if [ "$(id -u)" -ne 0 ]; then need_or_skip "needs root"; fi
	run "$START" --supported
	if [ "$status" -eq 0 ]; then skip "this kernel has fanotify mount events"; fi
	[ "$status" -eq 1 ]
	[[ $output == "xfs_healer_start: error: this kernel cannot report mount events (fanotify FAN_REPORT_MNT, Linux 6.15+): "* ]]
}

@test "xfs_healer_start --dry-run: existing and new XFS mounts, escaped; other filesystems ignored" {
	[ "$(id -u)" -eq 0 ] || need_or_skip "needs root"
	command -v mkfs.xfs >/dev/null || need_or_skip "mkfs.xfs (xfsprogs) not installed"
	"$START" --supported 2>/dev/null || skip "no fanotify mount events on this kernel"
	cd "$BATS_TEST_TMPDIR"
	truncate -s 300M a.img b.img
	mkfs.xfs -q a.img
	mkfs.xfs -q b.img
	mkdir -p "mnt.a" "mnt.b with space" mnt.tmpfs
	mount -o loop a.img mnt.a
	"$START" --dry-run > out 2> err &
	pid=$!
	sleep 1
	mount -o loop b.img "mnt.b with space"
	mount -t tmpfs none mnt.tmpfs
	sleep 1
	umount "mnt.b with space"
	mount -o loop b.img "mnt.b with space"
	sleep 1
	kill $pid; wait $pid || true
	umount mnt.a "mnt.b with space" mnt.tmpfs
	cat out err
	a=$(systemd-escape --path "$BATS_TEST_TMPDIR/mnt.a")
	b=$(systemd-escape --path "$BATS_TEST_TMPDIR/mnt.b with space")
	[ "$(grep -cxF "xfs_healer@$a.service" out)" -eq 1 ]
	# mounted, unmounted and mounted again: started twice
	[ "$(grep -cxF "xfs_healer@$b.service" out)" -eq 2 ]
	! grep -q tmpfs out
}

@test "xfs_healer_start: a quick unmount and mount that reuses the mount id starts a fresh healer" {
	[ "$(id -u)" -eq 0 ] || need_or_skip "needs root"
	command -v mkfs.xfs >/dev/null || need_or_skip "mkfs.xfs (xfsprogs) not installed"
	"$START" --supported 2>/dev/null || skip "no fanotify mount events on this kernel"
	cd "$BATS_TEST_TMPDIR"
	truncate -s 300M q.img
	mkfs.xfs -q q.img
	mkdir -p mnt.q
	mount -o loop q.img mnt.q
	id1=$(awk -v m="$BATS_TEST_TMPDIR/mnt.q" '$5 == m { print $1 }' /proc/self/mountinfo)
	"$START" --dry-run > out 2> err &
	pid=$!
	sleep 1
	# both changes in one rescan: the starter is stopped meanwhile (the
	# main branch's build, keyed by mountinfo's id, started one healer)
	kill -STOP $pid
	umount mnt.q
	mount -o loop q.img mnt.q
	kill -CONT $pid
	id2=$(awk -v m="$BATS_TEST_TMPDIR/mnt.q" '$5 == m { print $1 }' /proc/self/mountinfo)
	sleep 1
	kill $pid; wait $pid || true
	umount mnt.q
	cat out err
	echo "# mountinfo ids: $id1 then $id2" >&3
	q=$(systemd-escape --path "$BATS_TEST_TMPDIR/mnt.q")
	[ "$(grep -cxF "xfs_healer@$q.service" out)" -eq 2 ]
}

@test "xfs_healer_start --mountns: another namespace is refused with the reason; our own is accepted" {
	[ "$(id -u)" -eq 0 ] || need_or_skip "needs root"
	command -v unshare >/dev/null || need_or_skip "unshare (util-linux) missing"
	# --propagation unchanged: a private / is not needed here, and making it
	# private fails where / is no mount point (a chroot: tests/fresh)
	unshare -m --propagation unchanged sleep 30 &
	ns=$!
	sleep 0.3
	run "$START" --dry-run --mountns /proc/$ns/ns/mnt
	kill $ns; wait $ns || true
	[ "$status" -eq 1 ]
	[[ $output == *"--mountns /proc/$ns/ns/mnt: another mount namespace is not supported: xfs_healer@ units run in this one, where its mounts are not visible"* ]]
	run timeout 2 "$START" --dry-run --mountns /proc/self/ns/mnt
	[[ $output != *"another mount namespace"* ]] || die "own namespace refused: $output"
	# it ran until timeout killed it (124), or stopped on a kernel without
	# mount events (1, with that reason)
	[ "$status" -eq 124 ] || [[ $output == *"cannot report mount events"* ]]
}
