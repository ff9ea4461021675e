#!/bin/sh
# Runs in the sid guest (Linux 7.x).  /host/imgs/*.img are volumes that
# fsck.ntfs has repaired.  Each is copied to tmpfs, mounted read-write by the
# kernel's ntfs driver, walked (list everything, read every file), written
# (a new directory and file), unmounted, and checked again with fsck.ntfs -n.
# One line per image in /host/result.
set -u
# mount with the kernel's ntfs driver: -i keeps mount(8) from running
# /sbin/mount.ntfs, which in this tree is ntfs-3g (FUSE); the type in
# /proc/mounts proves which driver it was.  Names are UTF-8 (nls_utf8): the
# driver's default character set would store other UTF-16 than ntfs-3g reads
kmount() {
	mount -i -t ntfs -o iocharset=utf8 "$@" || return 1
	eval "last=\${$#}"
	grep -q " $last ntfs " /proc/mounts || { echo "not the kernel ntfs driver: $(grep " $last " /proc/mounts)" >&2; umount "$last"; return 1; }
}
mkdir -p /mnt/v /tmp/v
: > /host/result
for img in /host/imgs/*.img; do
	n=$(basename "$img" .img)
	cp "$img" /tmp/v/v.img
	st=ok
	if ! kmount -o loop /tmp/v/v.img /mnt/v 2>/tmp/v/err; then
		st="mount-failed:$(head -c 200 /tmp/v/err | tr '\n' ' ')"
	else
		ls -lR /mnt/v > /dev/null 2>/tmp/v/err || st="ls-failed"
		find /mnt/v -type f -exec cat {} + > /dev/null 2>>/tmp/v/err || st="read-failed"
		mkdir /mnt/v/fsforge-after-fsck && echo written > /mnt/v/fsforge-after-fsck/f ||
			st="write-failed"
		umount /mnt/v || st="umount-failed"
	fi
	rc=0
	/host/fsck.ntfs -n -q /tmp/v/v.img > /tmp/v/fsck.log 2>&1 || rc=$?
	echo "$n $st fsck=$rc" >> /host/result
	[ "$rc" -eq 0 ] || sed "s/^/$n: /" /tmp/v/fsck.log >> /host/result.fsck
	rm -f /tmp/v/v.img
done
exit 0
