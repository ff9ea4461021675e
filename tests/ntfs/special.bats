#!/usr/bin/env bats
# Special files, reparse points, extended attributes and data attributes
# (fsck.ntfs pass 2), judged by tools that are not ours.  About 2-3
# minutes, most of it ntfs-3g filling 16 volumes.
#
# No false positives: for every cluster size from 512 bytes to 64 KiB, a
# volume made by mkntfs (ntfsprogs-plus, sid tree) and one made by our
# mkfs.ntfs are filled by ntfs-3g (a 600-entry directory, 3000 at 64 KiB,
# a file with 16 long hard links and so an attribute list, sparse,
# fragmented and compressed files, symlinks, FIFOs, sockets, device
# nodes -- as WSL reparse points with $LX* extended attributes on half of
# them, Interix files on the other half --, a Windows symlink and
# junction, owners and modes, xattrs as named streams).
# fsck.ntfs -n must exit 0 on every one, and ntfsck -n agrees.
#
# Repairs: a reparse point or EA damaged in one place is repaired by one
# -a (the next -n is clean, ntfsck -n is clean) and ntfs-3g shows the same
# tree as before the damage (contents, symlink targets, special files):
# the file's data and everything that was readable stays.
load ../lib/common
load ntfs_helpers

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
DAMAGE=$FSFORGE_TOP/tests/ntfs/special_damage.py
SIZES="512 1024 2048 4096 8192 16384 32768 65536"
# symlink to "hello.txt" (relative), junction to \??\C:\Windows
WINLINK=0x0c0000a030000000000012001200120001000000680065006c006c006f002e00740078007400680065006c006c006f002e00740078007400
WINJUNC=0x030000a03c00000000001c001e0014005c003f003f005c0043003a005c00570069006e0064006f0077007300000043003a005c00570069006e0064006f00770073000000

# fill IMG MODE N: the tree above, written by ntfs-3g (MODE: wsl|interix;
# N entries in the big directory)
fill() {
	local m i
	m=$(mktemp -d "$W/mnt.XXXXXX")
	ntfs-3g -o "permissions,special_files=$2" "$1" "$m" || return 1
	(
		set -e
		cd "$m"
		echo hello > hello.txt
		mkdir big && (cd big && seq -f 'an-entry-with-a-longer-name-%g' "$3" | xargs touch)
		mkdir links && echo linked > links/target
		for i in $(seq 1 16); do
			ln links/target "links/hard-link-with-a-name-long-enough-to-fill-the-record-quickly-$i"
		done
		truncate -s 3M sparse
		printf middle | dd of=sparse bs=1 seek=1048576 conv=notrunc status=none
		for i in $(seq 1 12); do
			seq -f "frag1 line %g" 400 >> frag1
			seq -f "frag2 line %g" 400 >> frag2
		done
		ln -s hello.txt sym-rel && ln -s /etc/hostname sym-abs && ln -s big sym-dir
		ln -s "$(printf 'long/%.0s' $(seq 1 50))end" sym-long
		ln -s "Ünïcödé/ファイル" sym-utf8
		mkfifo fifo && mknod chr c 1 3 && mknod blk b 7 0
		python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' sock
		# a Windows relative symlink and a junction, as Windows writes
		# them (MS-FSCC 2.1.2.4, 2.1.2.5), set raw through ntfs-3g
		touch winlink && setfattr -n system.ntfs_reparse_data -v "$WINLINK" winlink
		mkdir winjunc && setfattr -n system.ntfs_reparse_data -v "$WINJUNC" winjunc
		echo owned > owned && chown 1234:5678 owned && chmod 4750 owned
		echo x > xattrs && setfattr -n user.small -v hello xattrs
		setfattr -n user.big -v "$(head -c 3000 /dev/zero | tr '\0' a)" xattrs
		# compression: clusters of at most 4 KiB
		if [ "$(stat -f -c %S .)" -le 4096 ]; then
			mkdir packed && setfattr -h -v 0x00000800 -n system.ntfs_attrib_be packed
			seq -f "compressible line %g" 6000 > packed/text
			head -c 50000 /dev/urandom > packed/random
		fi
	) || { umount "$m"; return 1; }
	umount "$m"
}

# what ntfs-3g shows of IMG: types, sizes, contents, symlink targets
# (owners, modes and times are ntfs-3g's mapping, not the volume's alone)
view() {
	local m
	m=$(mktemp -d "$W/mnt.XXXXXX")
	ntfs-3g -o ro "$1" "$m" || return 1
	(cd "$m" && find . -path ./.NTFS-3G -prune -o -printf '%p %y %s %l\n' | LC_ALL=C sort &&
		find . -type f -exec sha256sum {} + | LC_ALL=C sort -k2) |
		sed "s|$m|MNT|g"	# ntfs-3g puts junction targets under it
	umount "$m"
}

setup_file() {
	export W=$BATS_FILE_TMPDIR
	command -v ntfs-3g >/dev/null || return 0
	local cs mode t n
	: > "$W/volumes"
	for cs in $SIZES; do
		case $cs in 512 | 4096 | 8192 | 65536) mode=wsl ;; *) mode=interix ;; esac
		# 3000 entries at 64 KiB (fresh volumes of 16-64 KiB clusters
		# with such a directory once failed), 600 (an index of two
		# levels) elsewhere, to keep the file within a few minutes
		n=600
		[ "$cs" -eq 65536 ] && n=3000
		# ours and mkntfs's filled side by side (FUSE waits more than
		# it computes)
		(
			truncate -s 24M "$W/f$cs.img"
			"$MKFS_NTFS" -q -c "$cs" "$W/f$cs.img"
			fill "$W/f$cs.img" $mode $n && echo "f$cs $mode" >> "$W/volumes"
		) &
		if [ -d "$SID_ROOT/tmp" ]; then
			t=$(mktemp -d "$SID_ROOT/tmp/fsforge-special.XXXXXX")
			truncate -s 24M "$t/v.img"
			if chroot "$SID_ROOT" /opt/ntfsprogs-plus/usr/sbin/mkntfs -F -f -q -c "$cs" \
				"/tmp/${t##*/}/v.img" > /dev/null 2>&1; then
				mv "$t/v.img" "$W/m$cs.img"
			fi
			rm -rf "$t"
			# a volume missing from the list fails the matrix test
			if [ -f "$W/m$cs.img" ] && fill "$W/m$cs.img" $mode $n; then
				echo "m$cs $mode" >> "$W/volumes"
			fi
		fi
		wait
	done
	# the pristine volume of the repair tests and what ntfs-3g shows of it
	[ -f "$W/f4096.img" ] && view "$W/f4096.img" > "$W/f4096.view"
	true
}

teardown() { umount_all; }

@test "matrix: every volume was made and filled (16 with the sid tree, 8 without)" {
	need_ntfs3g
	cat "$W/volumes"
	run grep -c '^f' "$W/volumes"
	[ "$output" -eq 8 ]
	if [ -d "$SID_ROOT/tmp" ]; then
		run grep -c '^m' "$W/volumes"
		[ "$output" -eq 8 ]
	fi
}

@test "matrix: fsck.ntfs -n exits 0 on every volume, 512 B to 64 KiB clusters, mkntfs and mkfs.ntfs" {
	need_ntfs3g
	local bad=0 name mode
	while read -r name mode; do
		run "$FSCK" -n "$W/$name.img"
		echo "# $name ($mode): exit $status"
		[ "$status" -eq 0 ] || { echo "$output"; bad=$((bad + 1)); }
	done < "$W/volumes"
	[ "$bad" -eq 0 ]
}

@test "matrix: ntfsck -n (sid) finds every volume clean too" {
	need_ntfs3g
	need_sid
	local bad=0 name mode
	while read -r name mode; do
		run sid_ntfsck "$W/$name.img"
		[ "$status" -eq 0 ] || { echo "# $name: ntfsck exit $status"; echo "$output" | tail -5; bad=$((bad + 1)); }
	done < "$W/volumes"
	[ "$bad" -eq 0 ]
}

@test "matrix: fsck.ntfs -a changes no byte of a clean volume" {
	need_ntfs3g
	local name
	for name in f512 f65536; do
		before=$(sha256sum < "$W/$name.img")
		run "$FSCK" -a "$W/$name.img"
		[ "$status" -eq 0 ]
		[ "$(sha256sum < "$W/$name.img")" = "$before" ]
	done
}

# damage CMD FILE [PROBLEM-ID]: damage FILE of a copy of f4096 (WSL
# special files); -n must report PROBLEM-ID and exit 4; -a must exit 1;
# then -n 0, ntfsck -n 0.  Leaves the repaired image in $W/d.img.
damage() {
	local cmd=$1 file=$2 id=$3 ino m
	cp "$W/f4096.img" "$W/d.img"
	m=$(mktemp -d "$W/mnt.XXXXXX")
	ntfs-3g -o ro "$W/d.img" "$m"
	ino=$(stat -c %i "$m/$file")
	umount "$m"
	python3 "$DAMAGE" "$W/d.img" "$cmd" "$ino"
	run "$FSCK" -n --json "$W/d.img"
	echo "$output"
	[ "$status" -eq 4 ]
	[[ $output == *"\"$id\""* ]]
	run "$FSCK" -a "$W/d.img"
	echo "$output"
	[ "$status" -eq 1 ]
	run "$FSCK" -n "$W/d.img"
	echo "$output"
	[ "$status" -eq 0 ]
	if [ -d "$SID_ROOT/tmp" ]; then
		run sid_ntfsck "$W/d.img"
		echo "$output" | tail -3
		[ "$status" -eq 0 ]
	fi
}

@test "repair: a reparse data length that is wrong is recomputed; the symlink reads as before" {
	need_ntfs3g
	damage rplen sym-long reparse_point_length
	run view "$W/d.img"
	[ "$output" = "$(cat "$W/f4096.view")" ]
}

@test "repair: an unusable LX_SYMLINK is removed; the file stays (empty), the rest as before" {
	need_ntfs3g
	damage rpbad sym-rel reparse_point_corrupt
	run view "$W/d.img"
	diff <(grep -v '^./sym-rel ' "$W/f4096.view") <(echo "$output" | grep -v '^./sym-rel ')
	echo "$output" | grep -q '^./sym-rel f 0 $'
}

@test "repair: a reparse point without its file attribute flag gets it back" {
	need_ntfs3g
	damage rpflag fifo reparse_point_flag
	run view "$W/d.img"
	[ "$output" = "$(cat "$W/f4096.view")" ]
}

@test "repair: a missing and a stale \$R entry (\$Extend/\$Reparse) are put right" {
	need_ntfs3g
	damage rkey chr reparse_index_missing
	run "$FSCK" -n --json "$W/f4096.img"
	[[ $output != *reparse_index* ]]
	run view "$W/d.img"
	[ "$output" = "$(cat "$W/f4096.view")" ]
}

@test "repair: a wrong \$EA_INFORMATION is recomputed from the \$EA chain" {
	need_ntfs3g
	damage eainfo blk ea_information
	run view "$W/d.img"
	[ "$output" = "$(cat "$W/f4096.view")" ]
}

@test "repair: a broken \$EA chain (the second link 3) is mended, the file's data kept" {
	need_ntfs3g
	damage eachain chr ea_chain
	run view "$W/d.img"
	# the entry with the bad link is whole: its link is mended; chr is
	# still there, everything else as before
	diff <(grep -v '^./chr ' "$W/f4096.view") <(echo "$output" | grep -v '^./chr ')
	echo "$output" | grep -q '^./chr '
	grep -q '^./chr ' "$W/f4096.view"
}

@test "repair: the first \$EA entry's link leaves the value: mended, every entry kept (not all removed)" {
	need_ntfs3g
	local m ino names
	m=$(mktemp -d "$W/mnt.XXXXXX")
	ntfs-3g -o ro "$W/f4096.img" "$m"
	ino=$(stat -c %i "$m/chr")
	umount "$m"
	names=$(python3 "$DAMAGE" "$W/f4096.img" eanames "$ino")
	[ "$(echo "$names" | wc -l)" -ge 2 ] || die "chr has too few EAs: $names"
	damage eanext chr ea_chain
	# read back by the damage script's own parser: every name, linked
	run python3 "$DAMAGE" "$W/d.img" eanames "$ino"
	[ "$output" = "$names" ] || die "EAs after the repair: $output (before: $names)"
	run view "$W/d.img"
	[ "$output" = "$(cat "$W/f4096.view")" ]
}

@test "repair: the first \$EA entry unreadable (name length 0xff), its link good: only it is dropped, the others kept" {
	need_ntfs3g
	local m ino names
	m=$(mktemp -d "$W/mnt.XXXXXX")
	ntfs-3g -o ro "$W/f4096.img" "$m"
	ino=$(stat -c %i "$m/chr")
	umount "$m"
	names=$(python3 "$DAMAGE" "$W/f4096.img" eanames "$ino")
	[ "$(echo "$names" | wc -l)" -ge 2 ] || die "chr has too few EAs: $names"
	damage eafirst chr ea_chain
	# read back by the damage script's own parser: every name but the first
	run python3 "$DAMAGE" "$W/d.img" eanames "$ino"
	[ "$output" = "$(echo "$names" | tail -n +2)" ] || die "EAs after the repair: $output (before: $names)"
	# every other file as before
	run view "$W/d.img"
	diff <(grep -v '^./chr ' "$W/f4096.view") <(echo "$output" | grep -v '^./chr ')
}

@test "repair: an \$EA without \$EA_INFORMATION gets one made from its entries" {
	need_ntfs3g
	damage eanoinfo sock ea_information_missing
	run view "$W/d.img"
	[ "$output" = "$(cat "$W/f4096.view")" ]
}

@test "repair: a sparse file's compressed size is recomputed from its runs; contents as before" {
	need_ntfs3g
	damage csize sparse data_compressed_size
	run view "$W/d.img"
	[ "$output" = "$(cat "$W/f4096.view")" ]
}

@test "repair: a junction's data length that is wrong is recomputed; it points where it did" {
	need_ntfs3g
	damage rplen winjunc reparse_point_length
	run view "$W/d.img"
	[ "$output" = "$(cat "$W/f4096.view")" ]
	grep -q '^./winjunc l .*C:/Windows$' "$W/f4096.view"
}

@test "repair: a Windows symlink whose target lies outside its value is removed; the file stays" {
	need_ntfs3g
	damage rpbad winlink reparse_point_corrupt
	run view "$W/d.img"
	diff <(grep -v '^./winlink ' "$W/f4096.view") <(echo "$output" | grep -v '^./winlink ')
	echo "$output" | grep -q '^./winlink f 0 $'
}
