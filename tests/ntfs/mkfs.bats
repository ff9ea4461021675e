#!/usr/bin/env bats
# mkfs.ntfs volumes checked by independent implementations on the host:
# bookworm's ntfs-3g (FUSE mount read-write, ntfsfix -n, ntfsinfo) and,
# when the sid tree is cached, ntfsprogs-plus' ntfsck -n.
load ../lib/common
load ntfs_helpers

setup() {
	cd_tmp
	need_ntfs3g
}

teardown() { umount_all; }

# format, check with ntfsfix, write/read through ntfs-3g, check again
variant() {
	local size=$1; shift
	truncate -s "$size" v.img
	"$MKFS_NTFS" -q "$@" v.img
	ntfsfix_clean v.img
	write_and_verify v.img
	ntfsfix_clean v.img
}

@test "default volume (4 KiB clusters): ntfsfix, ntfs-3g read-write round trip" { variant 256M; }
@test "512-byte clusters" { variant 128M -c 512; }
@test "1 KiB clusters" { variant 128M -c 1024; }
@test "2 KiB clusters" { variant 128M -c 2048; }
@test "8 KiB clusters" { variant 256M -c 8192; }
@test "64 KiB clusters" { variant 512M -c 65536; }
@test "2 MiB clusters" { variant 1G -c 2097152; }
@test "4096-byte sectors (4 KiB MFT records)" { variant 256M -s 4096; }
@test "4096-byte sectors with 64 KiB clusters" { variant 512M -s 4096 -c 64k; }
@test "tiny volume (1 MiB)" {
	truncate -s 1M v.img
	"$MKFS_NTFS" -q v.img
	ntfsfix_clean v.img
	m=$(mount_ntfs3g v.img)
	echo tiny > "$m/t"
	umount "$m"
	m=$(mount_ntfs3g v.img)
	[ "$(cat "$m/t")" = tiny ]
}

@test "2 TiB sparse image: fast, small, mountable" {
	truncate -s 2T v.img
	start=$(date +%s%N)
	"$MKFS_NTFS" -q v.img
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	echo "# ${ms} ms, $(du -k v.img | cut -f1) KiB allocated"
	[ "$ms" -lt 5000 ]
	[ "$(du -k v.img | cut -f1)" -lt $((80 * 1024)) ]
	ntfsfix_clean v.img
	[ "$(ntfsinfo -m v.img | sed -n 's/.*Volume Size in Clusters: //p')" -eq 536870911 ]
}

@test "256 TiB sparse image (tmpfs): 64 KiB clusters chosen, 2^32-1 clusters" {
	d=$(mktemp -d /dev/shm/fsforge-ntfs.XXXXXX)
	truncate -s 256T "$d/v.img"
	run "$MKFS_NTFS" -v "$d/v.img"
	echo "$output"
	ntfsfix -n "$d/v.img" | tail -1
	info=$(ntfsinfo -m "$d/v.img")
	rm -rf "$d"
	[ "$status" -eq 0 ]
	grep -q 'Cluster Size: 65536' <<<"$info"
	grep -q 'Volume Size in Clusters: 4294967295' <<<"$info"
}

@test "ntfsinfo reads label, version, geometry and the MFT mirror" {
	truncate -s 64M v.img
	"$MKFS_NTFS" -q -L "Données ★" -c 8192 v.img
	info=$(ntfsinfo -m v.img)
	echo "$info"
	grep -q 'Volume Name: Données ★' <<<"$info"
	grep -q 'Volume Version: 3.1' <<<"$info"
	grep -q 'Cluster Size: 8192' <<<"$info"
	grep -q 'FILE_MFTMirr Size: 8' <<<"$info"	# one 8 KiB cluster of 1 KiB records
	[ "$(ntfslabel v.img)" = "Données ★" ]
}

@test "backup boot sector in the last sector equals the primary" {
	truncate -s 100M v.img
	"$MKFS_NTFS" -q v.img
	cmp <(head -c 512 v.img) <(tail -c 512 v.img)
}

@test "reference: ntfsprogs-plus ntfsck -n (sid) reports fresh volumes clean" {
	need_sid
	for opts in "" "-c 512" "-c 65536" "-s 4096" "-c 2M" "-L vol -U -C -I"; do
		rm -f v.img
		truncate -s 256M v.img
		# shellcheck disable=SC2086
		"$MKFS_NTFS" -q $opts v.img
		run sid_ntfsck v.img
		echo "[$opts] $output" | tail -3
		[ "$status" -eq 0 ]
		[[ $output == *"Clean, No errors found"* ]]
	done
}

@test "reference: ntfsck -n (sid) reports a volume written by ntfs-3g clean" {
	need_sid
	truncate -s 256M v.img
	"$MKFS_NTFS" -q v.img
	write_and_verify v.img
	run sid_ntfsck v.img
	echo "$output" | tail -3
	[ "$status" -eq 0 ]
}
