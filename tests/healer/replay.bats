#!/usr/bin/env bats
# xfs_healer without a kernel: recorded event streams (captures written by
# tests/healer/mkcap, an encoder independent of xfs_healer's) are decoded
# and run through the policy with --replay, and compared with golden output.
load ../lib/common
bats_require_minimum_version 1.5.0

HEALER=$FSFORGE_BUILDDIR/healer/xfs_healer
DATA=$FSFORGE_TOP/tests/healer/data
MKCAP=$FSFORGE_TOP/tests/healer/mkcap

setup() { cd_tmp; }

cap() { "$MKCAP" "$1"; }

@test "every domain and type decodes to the golden lines; unknown ones raw" {
	cap all.cap < "$DATA/all-domains.txt"
	run "$HEALER" --replay all.cap /mnt
	[ "$status" -eq 0 ]
	diff -u "$DATA/all-domains.out" <(echo "$output")
}

@test "--repair: SICK objects repaired one by one, CORRUPT only logged, LOST starts xfs_scrub@" {
	cap all.cap < "$DATA/all-domains.txt"
	run "$HEALER" --repair --replay all.cap /mnt
	[ "$status" -eq 0 ]
	diff -u "$DATA/all-domains.repair.out" <(echo "$output")
	# corrupt (found by scrub) is never repaired here
	! grep -q 'agno 0x2 .*would repair' <<<"$output"
}

@test "--json: one valid JSON object per event, golden" {
	cap all.cap < "$DATA/all-domains.txt"
	run --separate-stderr "$HEALER" --json --replay all.cap /mnt
	[ "$status" -eq 0 ]
	diff -u "$DATA/all-domains.json" <(echo "$output")
	[ "$(echo "$output" | jq -c . | wc -l)" -eq 12 ]
	[ "$(echo "$output" | jq -r 'select(.domain=="ag" and .type=="sick") | .mask | join(",")')" = bnobt,rmapbt ]
}

mode_of() {
	printf '@ %s\nmount running\ninode sick mask=0x10 ino=128 gen=1\nmount lost count=3\n' "$1" > d.txt
	cap m.cap < d.txt
	shift
	run "$HEALER" "$@" --replay m.cap /mnt
	[ "$status" -eq 0 ]
}

@test "autofsck=repair repairs; check and optimize only report" {
	mode_of "autofsck=repair"
	[[ ${lines[0]} == "/mnt: repairing sick metadata (autofsck=repair)" ]]
	[[ $output == *"ino 128 gen 0x1 directory: would repair (scrub type directory)"* ]]
	[[ $output == *"events were lost: would start xfs_scrub@mnt.service"* ]]
	for v in check optimize; do
		mode_of "autofsck=$v"
		[[ ${lines[0]} == "/mnt: reporting events (autofsck=$v)" ]]
		! grep -q 'would repair' <<<"$output" || false
		[[ $output == *"/mnt: 3 events lost"* ]]
		# lost events are re-checked in report-only mode too
		[[ $output == *"events were lost: would start xfs_scrub@mnt.service"* ]]
	done
}

@test "autofsck=none and unset-without-backrefs exit at once; unset with backrefs reports" {
	mode_of "autofsck=none"
	[ "$output" = "/mnt: not monitoring (autofsck=none)" ]
	mode_of "backrefs=0"
	[ "$output" = "/mnt: not monitoring (autofsck unset, no back-reference metadata)" ]
	mode_of "backrefs=1"
	[[ ${lines[0]} == "/mnt: reporting events (autofsck unset, back-reference metadata present)" ]]
}

@test "--no-autofsck ignores autofsck=repair; --repair overrides everything" {
	mode_of "autofsck=repair" --no-autofsck
	[[ ${lines[0]} == "/mnt: reporting events (--no-autofsck)" ]]
	! grep -q 'would repair' <<<"$output" || false
	mode_of "autofsck=none backrefs=0" --repair
	[[ ${lines[0]} == "/mnt: repairing sick metadata (--repair)" ]]
	grep -q 'would repair' <<<"$output"
}

@test "sick metadata with no targeted repair (metadir, AG inodes, unknown bits) asks for xfs_scrub" {
	printf 'fs sick mask=0x100\nag sick mask=0x400 gno=1\ninode sick mask=0x8000 ino=5\nag corrupt mask=0x10 gno=3\n' > d.txt
	cap s.cap < d.txt
	run "$HEALER" --repair --replay s.cap "/srv/my data"
	[ "$status" -eq 0 ]
	# three reasons, one start: at most one per minute of event time
	[ "$(grep -c 'would start xfs_scrub@srv-my\\x20data.service' <<<"$output")" -eq 1 ]
	# same escaping as systemd's own
	[ "$(systemd-escape --path '/srv/my data')" = 'srv-my\x20data' ]
	! grep -q 'agno 0x3.*would' <<<"$output"
}

@test "malformed captures: bad magic, short header, bad version, bad record size, missing file" {
	printf 'NOTACAPTURE-at-all-but-long-enough-for-a-header' > bad.cap
	run "$HEALER" --replay bad.cap
	[ "$status" -eq 1 ]
	[ "$output" = "xfs_healer: error: bad.cap: not an xfs_healer capture (bad magic)" ]
	printf 'XFSHMCAP\1\0' > short.cap
	run "$HEALER" --replay short.cap
	[ "$status" -eq 1 ]
	[[ $output == *"short.cap: truncated capture header (10 of 32 bytes)" ]]
	echo '@ version=2' | cap v2.cap
	run "$HEALER" --replay v2.cap
	[ "$status" -eq 1 ]
	[[ $output == *"v2.cap: unsupported capture version 2" ]]
	echo '@ recsize=16' | cap rs.cap
	run "$HEALER" --replay rs.cap
	[ "$status" -eq 1 ]
	[[ $output == *"rs.cap: bad record size 16 (64..4096)" ]]
	run "$HEALER" --replay nope.cap
	[ "$status" -eq 1 ]
	[[ $output == *"cannot open capture nope.cap: No such file or directory" ]]
}

@test "truncated record: the whole records are decoded, then a clear error and status 1" {
	printf '@ trailing=20\nmount running\nfs sick mask=1\n' | cap t.cap
	run "$HEALER" --replay t.cap /mnt
	[ "$status" -eq 1 ]
	[[ ${lines[1]} == "/mnt: health monitoring started" ]]
	[[ ${lines[2]} == "/mnt fscounters: sick" ]]
	[[ ${lines[3]} == "xfs_healer: error: t.cap: truncated record at byte 160 (20 of 64 bytes)" ]]
}

@test "larger records (a future format) are read, their tail ignored" {
	printf '@ recsize=96\nag sick mask=0x10 gno=7\n' | cap big.cap
	run "$HEALER" --replay big.cap /mnt
	[ "$status" -eq 0 ]
	[[ ${lines[1]} == "/mnt agno 0x7 bnobt: sick" ]]
}

@test "unknown types in known domains and random records never crash" {
	printf 'ag 12 mask=1\nmount sick\nfs 200\n4000000000 4000000000\n' | cap u.cap
	run "$HEALER" --repair --replay u.cap /mnt
	[ "$status" -eq 0 ]
	[ "$(grep -c 'unknown event domain' <<<"$output")" -eq 4 ]
	[[ $output == *"unknown event domain 2 type 12 payload 01000000"* ]]
	# 5000 random records (the unmount type avoided so all are read)
	{ printf 'XFSHMCAP\1\0\0\0\x40\0\0\0\1\0\0\0'; head -c 12 /dev/zero
	  head -c $((5000 * 64)) /dev/urandom; } > r.cap
	# (an unmount record needs domain 0 and type 2 in two random 32-bit
	# fields: it does not happen, so all 5000 records are read; a domain
	# below 9 is as rare, hence 4990 and not 5000 unknown ones)
	run "$HEALER" --repair --replay r.cap /mnt
	[ "$status" -eq 0 ]
	[ "$(grep -c 'unknown event domain' <<<"$output")" -ge 4990 ]
	run --separate-stderr "$HEALER" --json --replay r.cap /mnt
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq -c . | wc -l)" -eq 5000 ]
}

@test "--exec: the hook gets the event in its environment, and a slow hook is killed at the time limit" {
	cat > hook <<HOOK
#!/bin/sh
env | grep ^XFS_HEALER_ | sort >> "$BATS_TEST_TMPDIR/hook.env"
echo --- >> "$BATS_TEST_TMPDIR/hook.env"
HOOK
	chmod +x hook
	printf 'inode sick mask=0x10 ino=131 gen=2 time=5\n' | cap h.cap
	run "$HEALER" --exec ./hook --replay h.cap /mnt
	[ "$status" -eq 0 ]
	grep -qx 'XFS_HEALER_DOMAIN=inode' hook.env
	grep -qx 'XFS_HEALER_TYPE=sick' hook.env
	grep -qx 'XFS_HEALER_MOUNT=/mnt' hook.env
	grep -qx 'XFS_HEALER_TIME_NS=5' hook.env
	grep -qx 'XFS_HEALER_OBJECT=ino 131 gen 0x2' hook.env
	grep -qx 'XFS_HEALER_MESSAGE=/mnt ino 131 gen 0x2 directory: sick' hook.env
	# a replay has no filesystem to walk parent pointers in: no path
	grep -qx 'XFS_HEALER_PATH=' hook.env
	grep '^XFS_HEALER_JSON=' hook.env | cut -d= -f2- | jq -e '.ino == 131 and (has("path") | not)'
	printf '#!/bin/sh\nsleep 60\n' > slow
	chmod +x slow
	start=$(date +%s)
	run "$HEALER" --exec ./slow --exec-timeout 1 --replay h.cap /mnt
	[ $(($(date +%s) - start)) -lt 10 ]
	[[ $output == *"hook ./slow ran over 1 s; killing it"* ]]
	[[ $output == *"hook ./slow killed by signal 9"* ]]
}

@test "--exec: events are decoded while hooks run; at most 16 at once, the others wait for a slot" {
	printf '#!/bin/sh\necho start >> "%s/hooks.log"\nsleep 2\necho end >> "%s/hooks.log"\n' \
		"$BATS_TEST_TMPDIR" "$BATS_TEST_TMPDIR" > slow
	chmod +x slow
	for i in $(seq 1 40); do echo "ag sick mask=0x10 gno=$i"; done | cap many.cap
	start=$(date +%s)
	run "$HEALER" --exec ./slow --replay many.cap /mnt
	[ "$status" -eq 0 ]
	[ "$(grep -c 'bnobt: sick' <<<"$output")" -eq 40 ]
	# every event got its hook, never more than 16 at a time
	[ "$(grep -c start hooks.log)" -eq 40 ]
	[ "$(awk '/start/ { if (++n > m) m = n } /end/ { n-- } END { print m }' hooks.log)" -eq 16 ]
	[ $(($(date +%s) - start)) -lt 15 ]
}

@test "xfs_scrub@ is started at most once a minute of event time; a shutdown stops repairs" {
	printf 'mount lost count=1 time=1000000000\nmount lost count=2 time=30000000000\nmount lost count=3 time=62000000000\n' | cap l.cap
	run "$HEALER" --repair --replay l.cap /mnt
	[ "$(grep -c 'would start xfs_scrub@mnt.service' <<<"$output")" -eq 2 ]
	printf 'ag sick mask=0x10 gno=1\nmount shutdown reasons=1\nag sick mask=0x10 gno=2\n' | cap sd.cap
	run "$HEALER" --repair --replay sd.cap /mnt
	[ "$status" -eq 0 ]
	grep -q 'agno 0x1 bnobt: would repair' <<<"$output"
	grep -q 'the filesystem is shut down; no more repairs: unmount it and run xfs_repair' <<<"$output"
	grep -qx '/mnt agno 0x2 bnobt: sick' <<<"$output"
	! grep -q 'agno 0x2 bnobt: would repair' <<<"$output"
}
