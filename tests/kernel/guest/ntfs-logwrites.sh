#!/bin/sh
# Runs in the sid guest (Linux 7.x): records every block write the kernel's
# ntfs driver issues while a workload runs, for the lab's kernel power cuts
# (tests/ntfs/lab/kpowercut.py).  /dev/vda is the volume, /dev/vdb the log
# device.  dm-log-writes sits between them: it passes all I/O to /dev/vda
# and appends each write (sector, data, FLUSH/FUA flags) to /dev/vdb in the
# order it became durable (writes are logged at the flush that covers them),
# plus the marks the workload sets after each of its sync points.
#   sh ntfs-logwrites.sh SEED
# Needs in /host: dm-log-writes.ko (the module of this kernel, uncompressed;
# it is not in the initramfs's module set), kworkload.py.  /host/phase says
# how far it got ("done" at the end).
set -u
seed=${1:-1}
fail() { echo "$*" > /host/phase; exit 1; }
echo start > /host/phase
grep -q '^dm_log_writes ' /proc/modules || insmod /host/dm-log-writes.ko || fail insmod
sectors=$(blockdev --getsz /dev/vda) || fail blockdev
# no udev in the guest: dmsetup makes the node itself
DM_DISABLE_UDEV=1 dmsetup create lw --table "0 $sectors log-writes /dev/vda /dev/vdb" || fail dmsetup-create
[ -b /dev/mapper/lw ] || DM_DISABLE_UDEV=1 dmsetup mknodes lw
mkdir -p /mnt/v
# -i: the kernel driver, not /sbin/mount.ntfs (ntfs-3g in this tree)
mount -i -t ntfs -o iocharset=utf8 /dev/mapper/lw /mnt/v || fail mount
grep -q ' /mnt/v ntfs ' /proc/mounts || fail "not the kernel ntfs driver"
echo workload > /host/phase
python3 /host/kworkload.py /mnt/v "$seed" lw > /host/workload.log 2>&1 || fail "workload: $(tail -1 /host/workload.log)"
umount /mnt/v || fail umount
DM_DISABLE_UDEV=1 dmsetup remove lw || fail dmsetup-remove
echo "done" > /host/phase
