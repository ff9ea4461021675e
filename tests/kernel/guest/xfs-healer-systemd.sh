#!/bin/sh
# Runs as fsforge-test.service in the sid guest booted with systemd
# (--systemd mode).  /host holds our build (xfs_healer, xfs_healer_start)
# and units; vda is a blank disk.  Installs our units over xfsprogs' own,
# makes an XFS filesystem (mkfs.xfs 7.2 sets autofsck=repair with rmapbt),
# damages its bnobt, mounts it, and checks that xfs_healer_start started
# xfs_healer@mnt-x.service, that the service repaired the damage, that the
# journal has the events, and that unmounting stops the service cleanly.
# Then: vdb with autofsck=none (the unit ends inactive, not failed), vdc
# with a stalled hook (SIGKILL restarts the unit, SIGTERM stops it within
# a second; the status file and --status).
set -u
R=/host/result
mkdir -p "$R" /mnt/x
# the harness's --systemd mode (tests/kernel/harness.bats had a boot of
# its own for this): systemd is PID 1 and this script runs from its unit
cat /proc/1/comm > "$R/harness-pid1"
systemctl show -P ActiveState fsforge-test.service > "$R/harness-unit" 2>&1
install -m 755 /host/xfs_healer /host/xfs_healer_start /usr/local/sbin/
cp /host/units/* /etc/systemd/system/
sed -i 's|^\(Exec[A-Za-z]*=\)[^ ]*/\(xfs_healer[a-z_]*\)|\1/usr/local/sbin/\2|' \
	/etc/systemd/system/xfs_healer*
systemctl daemon-reload
systemctl restart xfs_healer_start.service
sleep 2
systemctl show -p ActiveState,MainPID,ExecStart xfs_healer_start.service > "$R/start.show"

mkfs.xfs -f -m rmapbt=1 -n parent=1 -d agcount=4 /dev/vda > "$R/mkfs.log" 2>&1 || exit 10
mount /dev/vda /mnt/x || exit 11
mkdir /mnt/x/ag
for f in 1 2 3 4 5 6 7 8; do xfs_io -f -c "pwrite 0 64k" /mnt/x/ag/seed$f > /dev/null; done
AINO=$(stat -c %i /mnt/x/ag)
# mkfs.xfs 7.2 should have set autofsck=repair (rmapbt); record what is
# there, then make sure of it
{
	xfs_io -c 'getfsprops autofsck' /mnt/x
	getfattr -n trusted.xfs:autofsck /mnt/x
	xfs_io -c 'setfsprops autofsck=repair' /mnt/x
	getfattr -n trusted.xfs:autofsck /mnt/x
} > "$R/fsprops" 2>&1
umount /mnt/x
AG=$(xfs_db -c "convert inode $AINO agno" /dev/vda | sed 's/^0x\([0-9a-f]*\).*/\1/')
echo "ag=$((0x$AG))" > "$R/objects"
xfs_db -x -c "agf $((0x$AG))" -c "addr bnoroot" -c "write -d magic 0" /dev/vda > "$R/damage.log" 2>&1

mount /dev/vda /mnt/x || exit 12
n=0
until systemctl -q is-active xfs_healer@mnt-x.service || [ $n -ge 30 ]; do sleep 1; n=$((n+1)); done
systemctl show -p ActiveState,SubState,Type,ExecMainPID xfs_healer@mnt-x.service > "$R/healer.show"
xfs_io -f -c "pwrite 0 4m" -c fsync /mnt/x/ag/new > /dev/null 2>&1
# the write found the damage; let the repair land before freeing extents
# through the same btree, or the filesystem may shut down first (a race
# that a loaded machine loses)
n=0
until journalctl -b --no-pager -o cat -u xfs_healer@mnt-x.service 2>/dev/null |
	grep -q 'Repairs successful' || [ $n -ge 90 ]; do sleep 1; n=$((n+1)); done
echo "$n" > "$R/repair-wait-seconds"
rm -f /mnt/x/ag/seed1 /mnt/x/ag/seed3; sync
sleep 3
umount /mnt/x; echo $? > "$R/umount.rc"
n=0
while systemctl -q is-active xfs_healer@mnt-x.service && [ $n -lt 20 ]; do sleep 1; n=$((n+1)); done
systemctl show -p ActiveState,Result,ExecMainStatus xfs_healer@mnt-x.service > "$R/healer.after"
journalctl -b --no-pager -o cat -u xfs_healer@mnt-x.service > "$R/journal.txt" 2>&1
journalctl -b --no-pager -u xfs_healer@mnt-x.service > "$R/journal-full.txt" 2>&1
journalctl -b --no-pager -o cat -u xfs_healer_start.service > "$R/journal-start.txt" 2>&1
journalctl -b --no-pager -o json -u xfs_healer@mnt-x.service > "$R/journal.json" 2>&1
mount /dev/vda /mnt/x && {
	xfs_scrub -n /mnt/x > "$R/scrub-after.out" 2>&1; echo $? > "$R/scrub-after.rc"
	umount /mnt/x
}
## autofsck=none (vdb at /mnt/y): the unit starts, finds nothing to watch
## and ends inactive, not failed.  Setting the property needs a mount,
## which starts a first (monitoring) instance; the second mount's instance
## is the one judged.  An inactive unit is unloaded at once (systemctl
## show then gives defaults), so systemd's journal records its end; a
## failed unit would stay loaded and show "failed".
mkdir -p /mnt/y /mnt/z
mkfs.xfs -f -m rmapbt=1 -n parent=1 -d agcount=4 /dev/vdb > "$R/mkfs-b.log" 2>&1 || exit 20
mount /dev/vdb /mnt/y || exit 21
xfs_io -c 'setfsprops autofsck=none' /mnt/y > "$R/none.props" 2>&1
getfattr -n trusted.xfs:autofsck /mnt/y >> "$R/none.props" 2>&1
# the first instance must have opened the monitor before the unmount (a
# daemon that finds the mount already gone fails: not judged here)
n=0
until systemctl -q is-active xfs_healer@mnt-y.service || [ $n -ge 60 ]; do sleep 1; n=$((n+1)); done
umount /mnt/y
n=0
while systemctl -q is-active xfs_healer@mnt-y.service && [ $n -lt 30 ]; do sleep 1; n=$((n+1)); done
mount /dev/vdb /mnt/y || exit 22
n=0
until [ "$(journalctl -b --no-pager -o cat -u xfs_healer@mnt-y.service | grep -c '^Starting ')" -ge 2 ] &&
	journalctl -b --no-pager -o cat -u xfs_healer@mnt-y.service | tail -n 1 |
	grep -qE 'Deactivated successfully|Failed|Consumed' || [ $n -ge 60 ]; do sleep 1; n=$((n+1)); done
sleep 1
systemctl show -p ActiveState,SubState,Result,NRestarts xfs_healer@mnt-y.service > "$R/none.show"
systemctl is-failed xfs_healer@mnt-y.service > "$R/none.is-failed" 2>&1
journalctl -b --no-pager -o cat -u xfs_healer@mnt-y.service > "$R/none.journal" 2>&1
umount /mnt/y

## /mnt/z (vdc): a hook that sleeps 60 s for every event (a drop-in adds
## --exec); SIGKILL brings the unit back (Restart=on-failure), SIGTERM
## (systemctl stop) ends it within a second although the hook is stalled;
## the status file is where --status looks
printf '#!/bin/sh\nsleep 60\n' > /usr/local/sbin/slowhook
chmod 755 /usr/local/sbin/slowhook
mkdir -p /etc/systemd/system/xfs_healer@mnt-z.service.d
printf '[Service]\nExecStart=\nExecStart=/usr/local/sbin/xfs_healer --exec /usr/local/sbin/slowhook %%f\n' \
	> /etc/systemd/system/xfs_healer@mnt-z.service.d/hook.conf
systemctl daemon-reload
mkfs.xfs -f -m rmapbt=1 -n parent=1 -d agcount=4 /dev/vdc > "$R/mkfs-c.log" 2>&1 || exit 30
mount /dev/vdc /mnt/z || exit 31
U=xfs_healer@mnt-z.service
n=0
until systemctl -q is-active $U || [ $n -ge 30 ]; do sleep 1; n=$((n+1)); done
systemctl show -p ActiveState,MainPID,NRestarts,ExecStart $U > "$R/kill.before"
ls -l /run/xfs_healer/ > "$R/status.ls" 2>&1
cat /run/xfs_healer/mnt-z.json > "$R/status.file" 2>&1
xfs_healer --status /mnt/z > "$R/status.out" 2>&1; echo $? > "$R/status.rc"
systemctl kill -s SIGKILL $U
sleep 1
# the daemon is gone, its status file stays (state running): --status says so
xfs_healer --status /mnt/z > "$R/status.killed" 2>&1
n=0
until [ "$(systemctl show -P NRestarts $U)" -ge 1 ] 2>/dev/null &&
	systemctl -q is-active $U || [ $n -ge 40 ]; do sleep 1; n=$((n+1)); done
echo "$n" > "$R/kill.seconds"
systemctl show -p ActiveState,SubState,MainPID,NRestarts $U > "$R/kill.after"
xfs_healer --status /mnt/z > "$R/status.after-restart" 2>&1
# the restarted daemon's first event (monitoring started) runs the hook:
# wait until a sleep of the hook is in the unit's control group
cg=/sys/fs/cgroup$(systemctl show -P ControlGroup $U)
n=0
until grep -q 'sleep' $(sed 's|^|/proc/|; s|$|/comm|' "$cg/cgroup.procs") 2>/dev/null ||
	[ $n -ge 30 ]; do sleep 1; n=$((n+1)); done
for p in $(cat "$cg/cgroup.procs"); do cat /proc/$p/comm; done > "$R/stop.procs" 2>&1
t0=$(date +%s%N)
systemctl stop $U
t1=$(date +%s%N)
echo $(((t1 - t0) / 1000000)) > "$R/stop.ms"
systemctl is-failed $U > "$R/stop.is-failed" 2>&1
journalctl -b --no-pager -o cat -u $U > "$R/z.journal" 2>&1
# systemd's own times of the stop: [seconds since boot] per line
journalctl -b --no-pager -o short-monotonic -u $U > "$R/z.journal-mono" 2>&1
umount /mnt/z
exit 0
