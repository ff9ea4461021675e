#!/bin/sh
# Runs as fsforge-test.service in the sid guest booted with systemd
# (--systemd mode).  /host holds our build (xfs_healer, xfs_healer_start)
# and units; vda is a blank disk.  Installs our units over xfsprogs' own,
# makes an XFS filesystem (mkfs.xfs 7.2 sets autofsck=repair with rmapbt),
# damages its bnobt, mounts it, and checks that xfs_healer_start started
# xfs_healer@mnt-x.service, that the service repaired the damage, that the
# journal has the events, and that unmounting stops the service cleanly.
set -u
R=/host/result
mkdir -p "$R" /mnt/x
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
exit 0
