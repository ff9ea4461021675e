#!/bin/sh
# Runs in the sid guest (Linux 7.x, the read-write "ntfs" driver).
# Arguments: volume names in disk order (vda, vdb, ...), each with optional
# flags: "+repair" adds the repair check below, "+many" a directory of
# 20,000 small files (many/).  Each small fresh volume is mounted by the
# kernel's ntfs driver and filled with every kind of object it can write:
# a directory of 300 entries (a non-resident index of two levels), a file
# with 16 long hard links (an attribute list), sparse and fragmented files,
# symbolic links (relative, absolute, to a directory, dangling, long,
# non-ASCII), a FIFO, a socket, character and block devices, owners and
# modes, user xattrs (small and 3000 bytes), chattr flags.  Then it is
# unmounted, remounted and the manifest taken again (the driver reads back
# what it wrote), and ntfsck -n runs.
# Repair check: a copy of the volume gets five single-point damages
# (/host/special_damage.py: a reparse data length, a reparse flag, an $R
# key, an $EA_INFORMATION, an $EA_INFORMATION removed), /host/fsck.ntfs -a
# repairs it, -n and ntfsck -n must be clean and the driver must read the
# same tree back.  Results: /host/out/NAME.* (manifest.before/after, rc,
# ntfsck.log/rc; repair.log/rc, repair.manifest).
set -u
kmount() {
	mount -i -t ntfs -o iocharset=utf8 "$@" || return 1
	eval "last=\${$#}"
	grep -q " $last ntfs " /proc/mounts || { echo "not the kernel ntfs driver" >&2; umount "$last"; return 1; }
}
out=/host/out
mkdir -p "$out" /mnt/v
letters=abcdefghijklmnop
i=0

fill() {
	m=/mnt/v
	echo hello > $m/hello.txt || return 1
	mkdir $m/big || return 2
	n=1
	while [ $n -le 300 ]; do : > "$m/big/entry-with-a-longer-name-$n"; n=$((n + 1)); done
	mkdir $m/links && echo linked > $m/links/target || return 3
	n=1
	while [ $n -le 16 ]; do
		ln $m/links/target "$m/links/hard-link-with-a-name-long-enough-to-fill-the-record-quickly-number-$n" || return 4
		n=$((n + 1))
	done
	truncate -s 5M $m/sparse && printf 'in the middle' | dd of=$m/sparse bs=1 seek=1048576 conv=notrunc status=none &&
		printf 'near the end' | dd of=$m/sparse bs=1 seek=4194304 conv=notrunc status=none || return 5
	n=0
	while [ $n -lt 8 ]; do
		seq -f "frag1 line %g" 400 >> $m/frag1 && seq -f "frag2 line %g" 400 >> $m/frag2 || return 6
		sync
		n=$((n + 1))
	done
	ln -s hello.txt $m/sym-rel && ln -s /etc/hostname $m/sym-abs && ln -s big $m/sym-dir &&
		ln -s does/not/exist $m/sym-dangling || return 7
	ln -s "$(printf 'long/%.0s' $(seq 1 50))end" $m/sym-long && ln -s "Ünïcödé/ファイル" $m/sym-utf8 || return 8
	mkfifo $m/fifo && mknod $m/chr c 1 3 && mknod $m/blk b 7 0 || return 9
	python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' $m/sock || return 10
	echo owned > $m/owned && chown 1234:5678 $m/owned && chmod 4750 $m/owned || return 11
	mkdir $m/sticky && chmod 1777 $m/sticky && chown 42:43 $m/sticky || return 12
	echo x > $m/xattrs && setfattr -n user.small -v hello $m/xattrs &&
		setfattr -n user.big -v "$(head -c 1500 /dev/zero | tr '\0' 'a')" $m/xattrs || return 13
	setfattr -n user.on-dir -v 1 $m/big || return 14
	echo flags > $m/nodump && chattr +d $m/nodump || echo "chattr not supported" >&2
	return 0
}

# many: 20,000 small files in one directory, names of 12 to 16 characters
many() {
	mkdir /mnt/v/many || return 30
	n=1
	while [ $n -le 20000 ]; do
		echo "$n" > "/mnt/v/many/file-$n.txt" || return 31
		n=$((n + 1))
	done
	return 0
}

# repair NAME DEV: the repair check on a copy of DEV
repair() {
	cp "$2" /tmp/d.img || return 40
	kmount -o loop,ro /tmp/d.img /mnt/v || return 41
	inos=
	for f in sym-long fifo chr xattrs sock; do
		inos="$inos $(stat -c %i /mnt/v/$f)"
	done
	umount /mnt/v
	set -- $inos
	python3 /host/special_damage.py /tmp/d.img rplen "$1" &&
		python3 /host/special_damage.py /tmp/d.img rpflag "$2" &&
		python3 /host/special_damage.py /tmp/d.img rkey "$3" &&
		python3 /host/special_damage.py /tmp/d.img eainfo "$4" &&
		python3 /host/special_damage.py /tmp/d.img eanoinfo "$5" || return 42
	/host/fsck.ntfs -n /tmp/d.img > "$out/$name.repair.log" 2>&1
	[ $? -eq 4 ] || return 43
	/host/fsck.ntfs -a /tmp/d.img >> "$out/$name.repair.log" 2>&1
	[ $? -eq 1 ] || return 44
	/host/fsck.ntfs -n /tmp/d.img >> "$out/$name.repair.log" 2>&1 || return 45
	ntfsck -n /tmp/d.img >> "$out/$name.repair.log" 2>&1 || return 46
	kmount -o loop,ro /tmp/d.img /mnt/v || return 47
	bash /host/manifest /mnt/v > "$out/$name.repair.manifest"
	umount /mnt/v
	rm -f /tmp/d.img
	return 0
}

for spec in "$@"; do
	name=${spec%%+*}
	dev=/dev/vd$(echo $letters | cut -c$((i + 1)))
	i=$((i + 1))
	rc=0
	t0=$(date +%s)
	kmount "$dev" /mnt/v || rc=20
	[ $rc -eq 0 ] && { fill || rc=$?; }
	case $spec in *+many*) [ $rc -eq 0 ] && { many || rc=$?; } ;; esac
	t1=$(date +%s)
	[ $rc -eq 0 ] && bash /host/manifest /mnt/v > "$out/$name.manifest.before"
	umount /mnt/v 2>/dev/null
	if [ $rc -eq 0 ]; then
		kmount -o ro "$dev" /mnt/v || rc=21
		[ $rc -eq 0 ] && bash /host/manifest /mnt/v > "$out/$name.manifest.after"
		umount /mnt/v 2>/dev/null
	fi
	t2=$(date +%s)
	echo $rc > "$out/$name.rc"
	ntfsck -n "$dev" > "$out/$name.ntfsck.log" 2>&1
	echo $? > "$out/$name.ntfsck.rc"
	t3=$(date +%s)
	echo "$name: filled in $((t1 - t0)) s, manifests $((t2 - t1)) s, ntfsck $((t3 - t2)) s"
	if [ "${spec#*+repair}" != "$spec" ] && [ $rc -eq 0 ]; then
		repair "$name" "$dev"
		echo $? > "$out/$name.repair.rc"
	fi
	echo "$name done: $rc"
done
exit 0
