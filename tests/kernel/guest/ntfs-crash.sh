#!/bin/sh
# Runs in the sid guest (Linux 7.x).  /dev/vda is a fresh mkfs.ntfs volume.
# It is mounted read-write by the kernel's ntfs driver and written to from
# several writers (new directories and files, appends, overwrites of a big
# file, renames and deletes); midway a sync makes part of it durable, then
# writing goes on and the power is cut: sysrq "b" resets the machine at
# once, without syncing or unmounting, so whatever the guest had not yet
# written to the virtual disk is lost.  Writeback runs every 50 ms, so the
# cut falls in the middle of it.  /host/phase says how far it got.
set -u
kmount() {
	mount -i -t ntfs -o iocharset=utf8 "$@" || return 1
	eval "last=\${$#}"
	grep -q " $last ntfs " /proc/mounts || { echo "not the kernel ntfs driver" >&2; umount "$last"; return 1; }
}
mkdir -p /mnt/v
kmount /dev/vda /mnt/v || { echo mount-failed > /host/phase; exit 1; }
echo 1 > /proc/sys/kernel/sysrq
# write back all the time, so that the cut falls in the middle of it
echo 1 > /proc/sys/vm/dirty_expire_centisecs
echo 5 > /proc/sys/vm/dirty_writeback_centisecs
echo writing > /host/phase
writer() {
	i=0
	while :; do
		d=/mnt/v/w$1/d$((i / 40))
		mkdir -p "$d"
		echo "writer $1 file $i" > "$d/f$i"
		[ $((i % 7)) -eq 0 ] && mv "$d/f$i" "$d/renamed-$i"
		[ $((i % 11)) -eq 0 ] && [ $i -gt 0 ] && rm -f "$d/f$((i - 1))"
		head -c 65536 /dev/urandom >> "/mnt/v/w$1/log"
		i=$((i + 1))
	done
}
writer 1 & writer 2 & writer 3 &
dd if=/dev/urandom of=/mnt/v/big bs=1M count=8 conv=notrunc 2>/dev/null &
sleep 6
sync
echo synced > /host/phase
sleep 6
echo cut > /host/phase
echo b > /proc/sysrq-trigger
sleep 30
echo not-cut > /host/phase
