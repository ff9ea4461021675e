#!/bin/sh
# Runs inside the sid guest (Linux 7.x, --sid mode).  Disks vda, vdb, vdc
# (blank, same size).  /host/xfs_healer is the build under test,
# /host/xfs_healer.plain a plain build when there is one (RSS figure).
# Results go to /host/result for the host-side assertions.  What the
# kernel said is recorded apart from what the healer printed: the exit
# status and errors of the commands that met the faults, the device-mapper
# table (which sectors fail), and the kernel log lines, counted.
#
#   vda  under a device-mapper device whose table fails the sectors of one
#        file (the "error" target of dm-mod): buffered and direct reads of
#        it, a media verification of the data device over that range (the
#        kernel's XFS_IOC_VERIFY_MEDIA, xfs_io verifymedia -R), then, with
#        --repair, a shutdown (xfs_io -x -c shutdown) and touches after it
#   vdb  damaged offline (a directory data block, an inode core), mounted
#        read-only, watched with --repair: the damage is reported, nothing
#        is repaired, the read-only message comes once
#   vdc  200 inode cores damaged, all found at once (ls -l) while a hook
#        that sleeps stalls the worker: once with the default queue (no
#        loss), once with --queue-events 8 (the loss is reported and the
#        re-check starts); peak RSS of the daemon
set -u
R=/host/result
mkdir -p "$R" /mnt/x
H=/host/xfs_healer
HP=$H
[ -x /host/xfs_healer.plain ] && HP=/host/xfs_healer.plain
# the corruption reports of the storm go to the kernel log only, not to
# the serial console (hundreds of hex dumps slow a TCG guest down)
dmesg -n 1
# one line per corruption report, not eleven (no "Unmount and run
# xfs_repair", no hex dump): the storm's log stays short to check
echo 0 > /proc/sys/fs/xfs/error_level
# kernel log lines since the last mark, for counting
mark() { dmesg | wc -l > /tmp/dmesg.mark; }
klog() { dmesg | tail -n +"$(($(cat /tmp/dmesg.mark) + 1))"; }

# start NAME DEV-MOUNTED ARGS...: the healer on /mnt/x in the background
start() {
	name=$1; shift
	"$@" /mnt/x > "$R/$name.out" 2> "$R/$name.err" &
	pid=$!
	n=0
	until cat "$R/$name.out" "$R/$name.err" 2>/dev/null | grep -q 'started\|running' ||
		[ $n -ge 30 ]; do sleep 1; n=$((n+1)); done
}
# finish NAME: peak RSS, unmount, the daemon's own end and status
finish() {
	awk '/VmHWM/ { print $2 }' /proc/$pid/status > "$R/$1.hwm"
	umount /mnt/x; echo $? > "$R/$1.umount"
	n=0; while kill -0 $pid 2>/dev/null && [ $n -lt 60 ]; do sleep 1; n=$((n+1)); done
	kill -0 $pid 2>/dev/null && { echo "still running" >> "$R/$1.err"; kill $pid; }
	wait $pid; echo $? > "$R/$1.rc"
}

## vda: I/O errors and media errors through device-mapper's error target
mkfs.xfs -f -m rmapbt=1 -n parent=1 -d agcount=4 /dev/vda > "$R/mkfs-a.log" 2>&1 || exit 10
mount /dev/vda /mnt/x || exit 11
xfs_io -f -c "pwrite -S 0x5a 0 256k" -c fsync /mnt/x/bad > /dev/null
echo keep > /mnt/x/good
stat -c %i /mnt/x/bad > "$R/bad.ino"
# one extent: "0: [0..511]: FIRST..LAST" in 512-byte sectors
xfs_io -c fiemap /mnt/x/bad > "$R/bad.fiemap"
umount /mnt/x
ext=$(sed -n 's/^[[:space:]]*0: \[0\.\.[0-9]*\]: \([0-9]*\)\.\.\([0-9]*\)$/\1 \2/p' "$R/bad.fiemap")
set -- $ext
[ $# -eq 2 ] || exit 12
S0=$1 S1=$2
SZ=$(blockdev --getsz /dev/vda)
# no udev in the guest: dmsetup makes the node itself
printf '%s\n' "0 $S0 linear /dev/vda 0" "$S0 $((S1 - S0 + 1)) error" \
	"$((S1 + 1)) $((SZ - S1 - 1)) linear /dev/vda $((S1 + 1))" > "$R/dm.table"
DM_DISABLE_UDEV=1 dmsetup create fl < "$R/dm.table" || exit 13
[ -b /dev/mapper/fl ] || DM_DISABLE_UDEV=1 dmsetup mknodes fl
mount /dev/mapper/fl /mnt/x || exit 14
DMDEV=$(basename "$(readlink -f /dev/mapper/fl)")
echo "$DMDEV" > "$R/dm.dev"

mark
start io $H --no-autofsck --everything --json --record "$R/io.cap"
echo 3 > /proc/sys/vm/drop_caches
cat /mnt/x/bad > /dev/null 2> "$R/io-cat.err"; echo $? > "$R/io-cat.rc"
xfs_io -d -c "pread 0 64k" /mnt/x/bad > "$R/io-dio.out" 2>&1; echo $? > "$R/io-dio.rc"
cat /mnt/x/good > "$R/io-good.out" 2>&1
# the media of the data device from 64 KiB before the failing range to
# 64 KiB after it (byte offsets)
xfs_io -x -c "verifymedia -R $(((S0 - 128) * 512)) $(((S1 + 129) * 512))" /mnt/x \
	> "$R/io-verify.out" 2>&1; echo $? > "$R/io-verify.rc"
sleep 5
klog > "$R/io.klog"
finish io
"$H" --no-autofsck --replay "$R/io.cap" /mnt/x > "$R/io.text" 2> /dev/null

# a shutdown, with --repair: reported once, then nothing more attempted
mount /dev/mapper/fl /mnt/x || exit 15
mark
start shut $H --repair --everything
xfs_io -x -c shutdown /mnt/x > "$R/shut-io.out" 2>&1; echo $? > "$R/shut-io.rc"
sleep 2
# after the shutdown: reads (of the failing file too) and a write
cat /mnt/x/bad > /dev/null 2>&1
ls -l /mnt/x > /dev/null 2>&1
echo more > /mnt/x/new 2> "$R/shut-write.err"; echo $? > "$R/shut-write.rc"
sleep 5
klog > "$R/shut.klog"
finish shut
DM_DISABLE_UDEV=1 dmsetup remove fl

## vdb: damaged, mounted read-only, watched with --repair
mkfs.xfs -f -m rmapbt=1 -n parent=1 -d agcount=4 /dev/vdb > "$R/mkfs-b.log" 2>&1 || exit 20
mount /dev/vdb /mnt/x || exit 21
mkdir /mnt/x/d
i=0; while [ $i -lt 300 ]; do echo $i > /mnt/x/d/a_rather_long_file_name_$i; i=$((i+1)); done
echo victim > /mnt/x/victim
DINO=$(stat -c %i /mnt/x/d); VINO=$(stat -c %i /mnt/x/victim)
umount /mnt/x
echo "dir=$DINO victim=$VINO" > "$R/ro.objects"
{
	xfs_db -x -c "inode $VINO" -c "write core.nextents 1000" /dev/vdb
	xfs_db -x -c "inode $DINO" -c "dblock 0" -c "write -d dhdr.hdr.magic 0" /dev/vdb
} > "$R/ro-damage.log" 2>&1
mount -o ro /dev/vdb /mnt/x || exit 22
mark
start ro $H --repair --state-dir /tmp/st
ls -l /mnt/x/d > /dev/null 2> "$R/ro-ls.err"; echo $? > "$R/ro-ls.rc"
stat /mnt/x/victim > /dev/null 2> "$R/ro-stat.err"; echo $? > "$R/ro-stat.rc"
sleep 5
"$H" --status --json --state-dir /tmp/st /mnt/x > "$R/ro.status" 2>&1
klog > "$R/ro.klog"
finish ro

## vdc: a storm of sick inodes while hooks stall the worker
mkfs.xfs -f -m rmapbt=1 -n parent=1 -d agcount=4 /dev/vdc > "$R/mkfs-c.log" 2>&1 || exit 30
mount /dev/vdc /mnt/x || exit 31
mkdir /mnt/x/s
(cd /mnt/x/s && i=0 && while [ $i -lt 200 ]; do : > f$i; i=$((i+1)); done)
ls -i /mnt/x/s > "$R/storm.inos"
umount /mnt/x
awk '{ printf " -c \"inode %s\" -c \"write core.nextents 1000\"", $1 }' "$R/storm.inos" > /tmp/dbcmd
eval "xfs_db -x $(cat /tmp/dbcmd) /dev/vdc" > "$R/storm-damage.log" 2>&1
printf '#!/bin/sh\nsleep 2\n' > /tmp/slowhook
chmod 755 /tmp/slowhook

# storm NAME HEALER ARGS...: mount, watch, find every damaged inode at once
storm() {
	sname=$1; shift
	mount /dev/vdc /mnt/x || { echo "mount failed" > "$R/$sname.err"; return; }
	mark
	start "$sname" "$@" --no-autofsck --exec /tmp/slowhook --exec-timeout 60
	t0=$(date +%s)
	ls -l /mnt/x/s > /dev/null 2> "$R/$sname.ls.err"
	# when the kernel had refused them all, and how many the worker had
	# reported by then (the rest waited in the queue behind the hooks)
	echo "$(($(date +%s) - t0)) $(grep -c 'inode core: sick' "$R/$sname.out")" > "$R/$sname.ls-done"
	# until the worker has been through everything (hooks sleep 2 s, 16 at
	# a time: at least 25 s for 200 events), at most 3 minutes
	n=0 last=-1
	while [ $n -lt 180 ]; do
		c=$(wc -l < "$R/$sname.out")
		[ "$c" = "$last" ] && [ $n -ge 10 ] && break
		last=$c; sleep 3; n=$((n+3))
	done
	echo $(($(date +%s) - t0)) > "$R/$sname.seconds"
	klog > "$R/$sname.klog"
	finish "$sname"
}
storm storm-big $HP
storm storm-small $H --queue-events 8 --no-scrub-service
exit 0
