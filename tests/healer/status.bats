#!/usr/bin/env bats
# xfs_healer's status file (--state-dir, --status): captures written here
# with tests/healer/mkcap hold known numbers of events of each type; the
# counters in the JSON must match those numbers, which are stated by hand
# below from the descriptions, not taken from xfs_healer's output.
load ../lib/common
bats_require_minimum_version 1.5.0

HEALER=$FSFORGE_BUILDDIR/healer/xfs_healer
MKCAP=$FSFORGE_TOP/tests/healer/mkcap

setup() {
	cd_tmp
	unset XFS_HEALER_STATE_DIR
}

# 1 running, 3 sick (inode directory: 1 repair; ag sb+agf: 2 repairs;
# fs counters: 1 repair), 2 corrupt (never repaired), 2 lost (3 + 5
# events) 10 minutes apart, 1 shutdown-free unmount: 9 events
known_capture() {
	"$MKCAP" k.cap <<-'EOF'
	@ autofsck=repair
	mount running time=1000000000000
	inode sick mask=0x10 ino=128 gen=1 time=1000000000000
	ag sick mask=0x3 gno=1 time=1000000000000
	fs sick mask=0x1 time=1000000000000
	ag corrupt mask=0x1 gno=2 time=1000000000000
	inode corrupt mask=0x1 ino=130 gen=2 time=1000000000000
	mount lost count=3 time=1000000000000
	mount lost count=5 time=1600000000000
	mount unmount time=1600000000001
	EOF
}

@test "a replay's status file counts the capture's events, repairs and losses" {
	known_capture
	run "$HEALER" --state-dir st --replay k.cap /mnt/a
	[ "$status" -eq 0 ]
	[ -f st/mnt-a.json ]
	run jq -e . st/mnt-a.json
	[ "$status" -eq 0 ]
	j() { jq -r "$1" st/mnt-a.json; }
	[ "$(j .mount)" = /mnt/a ]
	[ "$(j .state)" = stopped ]
	[ "$(j .mode)" = repair ]
	[ "$(j .events)" -eq 9 ]
	[ "$(j '.events_by_type.running')" -eq 1 ]
	[ "$(j '.events_by_type.sick')" -eq 3 ]
	[ "$(j '.events_by_type.corrupt')" -eq 2 ]
	[ "$(j '.events_by_type.lost')" -eq 2 ]
	[ "$(j '.events_by_type.unmount')" -eq 1 ]
	[ "$(j '.events_by_type | length')" -eq 5 ]
	[ "$(j .lost_events)" -eq 8 ]
	[ "$(j .lost_in_queue)" -eq 0 ]
	[ "$(j .repairs_requested)" -eq 4 ]
	# a replay repairs nothing
	[ "$(j .repairs_done)" -eq 0 ]
	[ "$(j .repairs_failed)" -eq 0 ]
	# the losses are 600 s apart: two starts, none held by the rate limit
	[ "$(j .rechecks_started)" -eq 2 ]
	[ "$(j .rechecks_suppressed)" -eq 0 ]
	[ "$(j .last_event_time_ns)" = 1600000000001 ]
	[ "$(j .shut_down)" = false ]
	[[ $(j .last_event_seen) =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$ ]]
}

@test "rate-limited re-checks, a shutdown and an unknown type are counted" {
	"$MKCAP" r.cap <<-'EOF'
	@ autofsck=check
	mount lost count=1
	mount lost count=1
	mount lost count=1
	mount shutdown reasons=0x2
	fs 77
	mount unmount
	EOF
	run "$HEALER" --state-dir st --replay r.cap /r
	[ "$status" -eq 0 ]
	j() { jq -r "$1" st/r.json; }
	[ "$(j .mode)" = report ]
	[ "$(j .events)" -eq 6 ]
	[ "$(j .lost_events)" -eq 3 ]
	[ "$(j .events_by_type.unknown)" -eq 1 ]
	[ "$(j .events_by_type.shutdown)" -eq 1 ]
	# same time stamp: the first loss starts one, the others are held
	[ "$(j .rechecks_started)" -eq 1 ]
	[ "$(j .rechecks_suppressed)" -eq 2 ]
	[ "$(j .shut_down)" = true ]
}

@test "events dropped by a full queue: handled + dropped = the capture's 501" {
	{
		echo '@ autofsck=check'
		for i in $(seq 1 500); do echo "ag sick mask=0x1 gno=$i"; done
		echo 'mount unmount'
	} | "$MKCAP" q.cap
	run "$HEALER" --quiet --replay-nowait --queue-events 2 --state-dir st \
		--replay q.cap /q
	[ "$status" -eq 0 ]
	j() { jq -r "$1" st/q.json; }
	[ "$(j .lost_in_queue)" -gt 0 ]
	[ "$(j .lost_events)" -eq "$(j .lost_in_queue)" ]
	[ $(( $(j .events) + $(j .lost_in_queue) )) -eq 501 ]
	# the unmount is never dropped
	[ "$(j .events_by_type.unmount)" -eq 1 ]
}

@test "the file name is the mount point as systemd-escape --path writes it" {
	command -v systemd-escape >/dev/null || skip "no systemd-escape"
	known_capture
	for m in "/mnt/a b" / "/srv//data/" "/x/ü-.y"; do
		rm -rf st
		run "$HEALER" --quiet --state-dir st --replay k.cap "$m"
		[ "$status" -eq 0 ]
		f=st/$(systemd-escape --path "$m").json
		[ -f "$f" ] || die "$f missing for '$m': $(ls st)"
		[ "$(ls st | wc -l)" -eq 1 ]
	done
}

@test "written atomically: no temporary file left, readable (0644) under any umask" {
	known_capture
	umask 077
	run "$HEALER" --quiet --state-dir st --replay k.cap /mnt/a
	[ "$status" -eq 0 ]
	[ "$(ls -A st)" = mnt-a.json ]
	[ "$(stat -c %a st/mnt-a.json)" = 644 ]
	# a second run replaces it (the pid changes, the file stays one)
	old=$(jq .pid st/mnt-a.json)
	run "$HEALER" --quiet --state-dir st --replay k.cap /mnt/a
	[ "$(ls -A st)" = mnt-a.json ]
	[ "$(jq .pid st/mnt-a.json)" != "$old" ]
}

@test "XFS_HEALER_STATE_DIR sets the directory; a replay without either writes none" {
	known_capture
	XFS_HEALER_STATE_DIR=$PWD/env run "$HEALER" --quiet --replay k.cap /e
	[ "$status" -eq 0 ]
	[ -f env/e.json ]
	label=/fsforge-test-$$-$RANDOM
	run "$HEALER" --quiet --replay k.cap "$label"
	[ "$status" -eq 0 ]
	[ ! -e "/run/xfs_healer/${label#/}.json" ]
}

@test "--status prints the counters readably; --json prints the file as is" {
	known_capture
	run "$HEALER" --quiet --state-dir st --replay k.cap /mnt/a
	run "$HEALER" --status --state-dir st /mnt/a
	[ "$status" -eq 0 ]
	[[ $output == *"mount point"*"/mnt/a"* ]]
	grep -Eq '^events +9$' <<<"$output"
	grep -Eq '^lost events +8$' <<<"$output"
	grep -Eq '^repairs requested +4$' <<<"$output"
	grep -Eq '^by type +.*sick 3' <<<"$output"
	grep -Eq '^state +stopped$' <<<"$output"
	run "$HEALER" --status --json --state-dir st /mnt/a
	[ "$status" -eq 0 ]
	diff st/mnt-a.json <(echo "$output")
	XFS_HEALER_STATE_DIR=$PWD/st run "$HEALER" --status /mnt/a
	[ "$status" -eq 0 ]
}

@test "--status: a running state whose process is gone says so" {
	known_capture
	run "$HEALER" --quiet --state-dir st --replay k.cap /mnt/a
	# as a daemon killed by SIGKILL leaves it: a pid that no longer runs
	sh -c 'exit 0' & dead=$!
	wait "$dead"
	jq --argjson p "$dead" '.state = "running" | .pid = $p' st/mnt-a.json > st/x
	mv st/x st/mnt-a.json
	run "$HEALER" --status --state-dir st /mnt/a
	[ "$status" -eq 0 ]
	grep -Eq '^state +running \(but the process is gone' <<<"$output"
}

@test "--status: no file, usage errors" {
	run "$HEALER" --status --state-dir st /nowhere
	[ "$status" -eq 1 ]
	[[ $output == *"/nowhere: no status (st/nowhere.json)"* ]]
	run "$HEALER" --status
	[ "$status" -eq 16 ]
	run "$HEALER" --status /a /b
	[ "$status" -eq 16 ]
}

@test "a burst of events reaches the file within about a second, with no later event (a stream left open)" {
	"$MKCAP" b.cap <<-'EOF2'
	mount running
	ag sick mask=0x10 gno=1
	inode sick mask=0x10 ino=128 gen=1
	EOF2
	mkfifo in.fifo
	# the stream stays open 4 s after its three events, as a live monitor
	( cat b.cap; sleep 4 ) > in.fifo &
	wpid=$!
	"$HEALER" --state-dir st --replay in.fifo /mnt/b > out 2> err &
	pid=$!
	sleep 2.5
	# while the stream is still open
	kill -0 $wpid
	run jq -r .events st/mnt-b.json
	kill $wpid
	wait $pid
	echo "events in the file after 2.5 s: $output"
	[ "$output" = 3 ]
	[ "$(jq -r .events st/mnt-b.json)" = 3 ]
}
