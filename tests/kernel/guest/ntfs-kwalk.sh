#!/bin/sh
# Runs in the sid guest (Linux 7.x): the lab's "kernel walk" oracle.
# /host/imgs/*.img are volumes fsck.ntfs -a repaired.  Each is copied to
# tmpfs, mounted read-write by the kernel's ntfs driver, walked (every
# directory listed, every file read), written (a file created, then
# deleted), unmounted, then checked by ntfsprogs-plus ntfsck -n.  What the
# driver logged at warning level or worse while it did so is counted.
# One line per image in /host/kwalk.result:
#   NAME STATUS ntfsck=RC klog=N
# STATUS is ok, mount-failed, ls-failed, read-failed, write-failed,
# delete-failed or umount-failed.
set -u
# mount IMAGE on /mnt/v with the kernel's driver (-i: not /sbin/mount.ntfs,
# which is ntfs-3g in this tree; /proc/mounts proves which driver it was)
kmount() {
	mount -i -t ntfs -o iocharset=utf8,loop "$1" /mnt/v || return 1
	grep -q " /mnt/v ntfs " /proc/mounts || { echo "not the kernel ntfs driver" >&2; umount /mnt/v; return 1; }
}
mkdir -p /mnt/v /tmp/v
: > /host/kwalk.result
: > /host/kwalk.log
for img in /host/imgs/*.img; do
	[ -f "$img" ] || continue
	n=$(basename "$img" .img)
	cp "$img" /tmp/v/v.img
	dmesg -C
	st=ok
	if ! kmount /tmp/v/v.img 2>/tmp/v/err; then
		st=mount-failed
	else
		ls -laR /mnt/v > /dev/null 2>>/tmp/v/err || st=ls-failed
		find /mnt/v -type f -exec cat {} + > /dev/null 2>>/tmp/v/err || st=read-failed
		if ! echo "written by the kernel" > /mnt/v/fsforge-kwalk; then
			st=write-failed
		elif ! rm /mnt/v/fsforge-kwalk; then
			st=delete-failed
		fi
		umount /mnt/v || st=umount-failed
	fi
	# kernel messages of priority warning (4) or worse naming ntfs
	dmesg -r | grep -iE '^<[0-4]>.*ntfs' > /tmp/v/klog || true
	rc=0
	ntfsck -n /tmp/v/v.img > /tmp/v/ntfsck.log 2>&1 || rc=$?
	echo "$n $st ntfsck=$rc klog=$(wc -l < /tmp/v/klog)" >> /host/kwalk.result
	{
		echo "== $n: $st ntfsck=$rc"
		head -c 2000 /tmp/v/err
		head -20 /tmp/v/klog
		[ "$rc" -eq 0 ] || tail -15 /tmp/v/ntfsck.log
	} >> /host/kwalk.log
	rm -f /tmp/v/v.img
done
exit 0
