#!/usr/bin/env bats
# What the Linux 7.x ntfs driver writes, checked by fsck.ntfs (one QEMU
# boot, about 3 minutes under TCG, shared with ntfs_populate.bats).  Three small fresh volumes -- 512-byte
# clusters by mkntfs (sid), 4 KiB and 64 KiB clusters by our mkfs.ntfs --
# are filled by the kernel with every kind of object it writes: a 300-entry
# directory, a file with 16 hard links (an attribute list), sparse and
# fragmented files, symlinks (LX_SYMLINK reparse points), a FIFO, a
# socket, device nodes (LX_FIFO, AF_UNIX, LX_CHR, LX_BLK), owners and modes
# ($LXUID/$LXGID/$LXMOD/$LXDEV extended attributes), user xattrs (EAs).
# The driver reads everything back after a remount; fsck.ntfs -n must exit
# 0 on each volume and ntfsck -n agree; ntfs-3g must show the same
# symlink targets and contents.  On a copy of the 4 KiB volume, five
# single-point damages of reparse points and EAs are repaired by one
# fsck.ntfs -a and the driver reads the same tree back.
load ../lib/common
load ../ntfs/ntfs_helpers
load ntfs_fill

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
VOLUMES="m512 f4096+repair f65536"

# the boot is shared with ntfs_populate.bats (ntfs_fill.bash)
setup_file() {
	ntfs_fill_boot
}

teardown() { umount_all; }

o() { cat "$W/share/out/$1"; }

@test "kernel: the guest filled every volume with a clean ntfs kernel log" {
	need_sid
	[ "$(cat "$W/vm.rc")" -eq 0 ] || { tail -40 "$W/vm.log"; false; }
	for v in $VOLUMES; do
		echo "# ${v%+repair}: $(o "${v%+repair}.rc")"
		[ "$(o "${v%+repair}.rc")" -eq 0 ]
	done
}

@test "kernel: the driver reads back what it wrote (special files, owners, modes, xattrs)" {
	need_sid
	for v in $VOLUMES; do
		n=${v%+repair}
		# the root line differs (mounted read-only the second time)
		diff <(grep -v '^	' "$W/share/out/$n.manifest.before") \
			<(grep -v '^	' "$W/share/out/$n.manifest.after")
		grep -q $'^sym-long\tmeta\tl .* long/long/' "$W/share/out/$n.manifest.after"
		grep -q $'^chr\trdev\t1:3$' "$W/share/out/$n.manifest.after"
		grep -q $'^sock\tmeta\ts ' "$W/share/out/$n.manifest.after"
		grep -q $'^owned\tmeta\tf 04750 1234 5678 ' "$W/share/out/$n.manifest.after"
		grep -q $'^xattrs\txattr\tuser.small=0x68656c6c6f$' "$W/share/out/$n.manifest.after"
	done
}

@test "fsck.ntfs -n exits 0 on every kernel-written volume" {
	need_sid
	for v in $VOLUMES; do
		run "$FSCK" -n "$W/${v%+repair}.img"
		echo "$output"
		[ "$status" -eq 0 ]
	done
}

@test "reference: ntfsck -n (sid, in the guest) finds every kernel-written volume clean" {
	need_sid
	for v in $VOLUMES; do
		echo "# ${v%+repair}: $(o "${v%+repair}.ntfsck.rc")"
		[ "$(o "${v%+repair}.ntfsck.rc")" -eq 0 ] || { tail -5 "$W/share/out/${v%+repair}.ntfsck.log"; false; }
	done
}

@test "ntfs-3g (bookworm) reads the kernel's symlinks and files as the kernel does" {
	need_sid
	need_ntfs3g
	for v in $VOLUMES; do
		n=${v%+repair}
		m=$(mount_ntfs3g "$W/$n.img")
		for l in sym-rel sym-abs sym-dir sym-dangling sym-long sym-utf8; do
			want=$(awk -F'\t' -v f="$l" '$1 == f && $2 == "meta" { split($3, a, " "); print a[8] }' \
				"$W/share/out/$n.manifest.after")
			[ -n "$want" ]
			[ "$(readlink "$m/$l")" = "$want" ]
		done
		for f in hello.txt frag1 frag2 sparse owned xattrs links/target; do
			want=$(awk -F'\t' -v f="$f" '$1 == f && $2 == "sha256" { print $3 }' \
				"$W/share/out/$n.manifest.after")
			[ "$(sha256sum < "$m/$f" | cut -c1-64)" = "$want" ]
		done
		[ -p "$m/fifo" ]
		[ -S "$m/sock" ]
		umount "$m"
	done
}

@test "repair: five damages of reparse points and EAs on a kernel-written volume, one -a, the driver reads the same tree" {
	need_sid
	cat "$W/share/out/f4096.repair.log"
	[ "$(o f4096.repair.rc)" -eq 0 ]
	# every damage was found and fixed
	for id in 'reparse point says' 'reparse-point flag' 'has no entry for the' \
		'\$EA_INFORMATION says' 'has \$EA but no \$EA_INFORMATION'; do
		grep -qE "$id.*(FIXED|REBUILT)" "$W/share/out/f4096.repair.log"
	done
	diff <(grep -v '^	' "$W/share/out/f4096.manifest.before") \
		<(grep -v '^	' "$W/share/out/f4096.repair.manifest")
}
