#!/bin/sh
# Runs inside the sid guest (Linux 7.x, the read-write "ntfs" driver).
# Arguments: NAME:MODE pairs in disk order (vda, vdb, ...); MODE is
#   big  read-write exercise plus a directory of 3000 entries
#   rw   read-write exercise
#   tiny read-write exercise with a 1 MiB file instead of 24 MiB
#   ro   read-only mount (4096-byte-sector volumes, see validation.md)
# For every disk: ntfsck -n on the fresh volume, mount, work, unmount,
# remount and verify, ntfsck -n again.  Results go to /host/result/NAME.*
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
out=/host/result
mkdir -p "$out" /mnt/v
letters=abcdefghijklmnop
i=0
dd if=/dev/urandom of=/tmp/big.bin bs=1M count=24 status=none
dd if=/tmp/big.bin of=/tmp/small.bin bs=1M count=1 status=none

check() {	# NAME: run ntfsck -n, keep its status
	ntfsck -n "$dev" > "$out/$1.log" 2>&1
	echo $? > "$out/$1.rc"
}

exercise() {	# NAME MODE
	name=$1 mode=$2
	big=/tmp/big.bin
	[ "$mode" = tiny ] && big=/tmp/small.bin
	bigsum=$(sha256sum < $big | cut -c1-64)
	kmount "$dev" /mnt/v || return 11
	echo hello > /mnt/v/hello.txt || return 12
	echo gone > /mnt/v/deleted.txt && rm /mnt/v/deleted.txt || return 13
	echo moved > /mnt/v/before.txt && mv /mnt/v/before.txt /mnt/v/after.txt || return 14
	mkdir -p "/mnt/v/Ünïcödé/ディレクトリ" || return 15
	echo grüße > "/mnt/v/Ünïcödé/ディレクトリ/ファイル€.txt" || return 16
	long=$(printf 'N%.0s' $(seq 1 250))
	echo long > "/mnt/v/$long" || return 17
	cp $big /mnt/v/big.bin || return 18
	if [ "$mode" = big ]; then
		mkdir /mnt/v/many
		n=1
		while [ $n -le 3000 ]; do
			: > "/mnt/v/many/entry-$n"
			n=$((n + 1))
		done
		n=1
		while [ $n -le 3000 ]; do
			[ $((n % 3)) -eq 0 ] && mv "/mnt/v/many/entry-$n" "/mnt/v/many/renamed-$n"
			n=$((n + 1))
		done
	fi
	umount /mnt/v || return 19
	kmount "$dev" /mnt/v || return 20
	[ "$(cat /mnt/v/hello.txt)" = hello ] || return 21
	[ ! -e /mnt/v/deleted.txt ] && [ ! -e /mnt/v/before.txt ] || return 22
	[ "$(cat /mnt/v/after.txt)" = moved ] || return 23
	[ "$(cat "/mnt/v/Ünïcödé/ディレクトリ/ファイル€.txt")" = grüße ] || return 24
	[ "$(cat "/mnt/v/$long")" = long ] || return 25
	[ "$(sha256sum < /mnt/v/big.bin | cut -c1-64)" = "$bigsum" ] || return 26
	if [ "$mode" = big ]; then
		[ "$(ls /mnt/v/many | wc -l)" -eq 3000 ] || return 27
		[ "$(ls /mnt/v/many | grep -c '^renamed-')" -eq 1000 ] || return 28
	fi
	df -k /mnt/v | tail -1 > "$out/$name.df"
	umount /mnt/v || return 29
	return 0
}

readonly_check() {
	kmount -o ro "$dev" /mnt/v || return 31
	ls -la /mnt/v > "$out/$1.ls" 2>&1 || return 32
	df -k /mnt/v | tail -1 > "$out/$1.df"
	umount /mnt/v || return 33
}

for spec in "$@"; do
	name=${spec%%:*} mode=${spec#*:}
	dev=/dev/vd$(echo $letters | cut -c$((i + 1)))
	i=$((i + 1))
	check "$name.fresh"
	if [ "$mode" = ro ]; then
		readonly_check "$name"
	else
		exercise "$name" "$mode"
	fi
	echo $? > "$out/$name.rc"
	# a failed step may leave the volume mounted: ntfsck needs it free
	umount /mnt/v 2>/dev/null
	[ "$mode" = ro ] || check "$name.after"
	echo "$name done: $(cat "$out/$name.rc")"
done
exit 0
