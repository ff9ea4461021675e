#!/bin/sh
# Runs inside the sid guest (Linux 7.x, --sid mode).  Disks: vda, vdb, vdc
# (blank, same size).  /host/xfs_healer is our build; results go to
# /host/result for the host-side assertions.
#
# One damaged filesystem (rmapbt + parent pointers) is made on vda and
# copied to vdb (first damage only) and vdc, then:
#   vda  our healer reporting only (--no-autofsck), with --record and --json
#   vdb  our healer with --repair, then xfs_scrub -n
#   vdc  the reference xfs_healer (xfsprogs 7.2) reporting only, same touches
set -u
R=/host/result
mkdir -p "$R" /mnt/x
H=/host/xfs_healer
REF=/usr/libexec/xfsprogs/xfs_healer

xfs_db -V > "$R/xfsprogs.version" 2>&1
mkfs.xfs -f -m rmapbt=1 -n parent=1 -d agcount=4 /dev/vda > "$R/mkfs.log" 2>&1 || exit 10
mount /dev/vda /mnt/x || exit 11
# a directory big enough for block/leaf format, a small file, and a
# directory whose AG gets a damaged free-space btree
mkdir /mnt/x/d
i=0; while [ $i -lt 300 ]; do echo $i > /mnt/x/d/a_rather_long_file_name_$i; i=$((i+1)); done
echo victim > /mnt/x/victim
mkdir /mnt/x/ag
for f in 1 2 3 4 5 6 7 8; do
	xfs_io -f -c "pwrite 0 64k" /mnt/x/ag/seed$f > /dev/null
done
DINO=$(stat -c %i /mnt/x/d); VINO=$(stat -c %i /mnt/x/victim)
AINO=$(stat -c %i /mnt/x/ag)
umount /mnt/x
AG=$(xfs_db -c "convert inode $AINO agno" /dev/vda | sed 's/^0x\([0-9a-f]*\).*/\1/')
AG=$((0x$AG))
echo "dir=$DINO victim=$VINO agdir=$AINO ag=$AG" > "$R/objects"

# offline damage (xfs_db -x).  vdb, the repair disk, gets only the
# by-block free-space btree root of the AG of /ag (a btree block): Linux
# 7.2.13 oopses (NULL dereference in xrep_dinode_count_rtgroup_rmaps) when
# asked to repair an inode core, fails to repair a directory data block,
# and a damaged AGFL shuts the filesystem down during writeback, so those
# three are only reported (vda, vdc).
xfs_db -x -c "agf $AG" -c "addr bnoroot" -c "write -d magic 0" /dev/vda > "$R/damage.log" 2>&1
dd if=/dev/vda of=/dev/vdb bs=1M status=none
{
	xfs_db -x -c "inode $VINO" -c "write core.nextents 1000" /dev/vda
	xfs_db -x -c "inode $DINO" -c "dblock 0" -c "write -d dhdr.hdr.magic 0" /dev/vda
	xfs_db -x -c "agfl $AG" -c "write -d magicnum 0" /dev/vda
} >> "$R/damage.log" 2>&1
dd if=/dev/vda of=/dev/vdc bs=1M status=none

touch_damage() {
	ls -l /mnt/x/d > /dev/null 2>&1
	stat /mnt/x/victim > /dev/null 2>&1
	cat /mnt/x/victim > /dev/null 2>&1
	xfs_io -f -c "pwrite 0 4m" -c fsync /mnt/x/ag/new > /dev/null 2>&1
	# a repairing run: let the repair land before freeing extents through
	# the damaged btree, or a loaded machine may lose the race and see
	# the filesystem shut down first
	case $name in *repair*)
		n=0
		until grep -q 'Repairs successful' "$R/$name.out" 2>/dev/null ||
			[ $n -ge 60 ]; do sleep 1; n=$((n+1)); done
		echo "$n" > "$R/$name.repair-wait" ;;
	esac
	rm -f /mnt/x/ag/seed1 /mnt/x/ag/seed3 /mnt/x/ag/seed5; sync
	xfs_io -f -c "pwrite 0 2m" -c fsync /mnt/x/ag/new2 > /dev/null 2>&1
}

# run DEV NAME CMD...: mount, start the healer, touch, unmount, wait
run() {
	dev=$1 name=$2; shift 2
	mount /dev/$dev /mnt/x || { echo "mount $dev failed" > "$R/$name.out"; return; }
	"$@" /mnt/x > "$R/$name.out" 2> "$R/$name.err" &
	pid=$!
	sleep 2
	# start-up over: its CPU time unchanged over a second (on a loaded
	# host the guest's start-up can outlast the 2 s; at most 20 s more)
	t0=$(awk '{ print $14 + $15 }' /proc/$pid/stat)
	n=0
	while [ $n -lt 20 ]; do
		sleep 1
		t1=$(awk '{ print $14 + $15 }' /proc/$pid/stat)
		[ "$t1" = "$t0" ] && break
		t0=$t1 n=$((n+1))
	done
	echo "$n" > "$R/$name.settle"
	# idle CPU (clock ticks) over 5 s with no events, then peak RSS
	t0=$(awk '{ print $14 + $15 }' /proc/$pid/stat)
	sleep 5
	t1=$(awk '{ print $14 + $15 }' /proc/$pid/stat)
	echo "$((t1 - t0)) $(getconf CLK_TCK)" > "$R/$name.idle"
	touch_damage
	sleep 8
	awk '/VmHWM/ { print $2 }' /proc/$pid/status > "$R/$name.hwm"
	umount /mnt/x; echo $? > "$R/$name.umount"
	# the daemon must end by itself after the unmount
	n=0; while kill -0 $pid 2>/dev/null && [ $n -lt 20 ]; do sleep 1; n=$((n+1)); done
	kill -0 $pid 2>/dev/null && { echo "still running" >> "$R/$name.err"; kill $pid; }
	wait $pid; echo $? > "$R/$name.rc"
	dmesg | grep -c 'XFS (' > "$R/$name.klines"
}

run vda ours-log $H --no-autofsck --everything --record "$R/ours.cap"
run vdb ours-repair $H --repair
run vdc ref-log $REF --no-autofsck --everything
# the JSON view of the recorded stream
$H --json --replay "$R/ours.cap" /mnt/x > "$R/ours.json" 2> /dev/null

# after our repairs: xfs_scrub -n must find nothing
mount /dev/vdb /mnt/x && {
	ls /mnt/x/d | wc -l > "$R/after.dirents"
	xfs_scrub -n /mnt/x > "$R/scrub-after.out" 2>&1; echo $? > "$R/scrub-after.rc"
	umount /mnt/x
}
exit 0
