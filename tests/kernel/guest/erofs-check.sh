#!/bin/sh
# Runs inside the sid guest (Linux 7.x).  Disks, in order:
#   vda  the rich test tree, with trusted.erofs.fingerprint
#   vdb  version A of an application tree, fingerprinted
#   vdc  version B of the same application (mostly identical files)
#   vdd  a copy of vdb with one byte of file data flipped
#   vde  the rich tree and more, compressed (lz4hc, 64 KiB pclusters)
#   vdf, vdg  versions A and B of a compressible application, lz4hc
#   vdh, vdi, vdj  the tree of vde with zstd, deflate and lzma
#   vdk, vdl, vdm  the tree of vde with -E ztailpacking, fragments,
#             all-fragments (and dedupe)
#   vdn, vdo  vdf and vdg's trees with -zlz4hc -Efragments,dedupe
#   vdp  the tree of vde with -zlz4hc:lzma and --compress-hints
# Results are written to /host for the host-side assertions.
set -u
out=/host/result
mkdir -p "$out" /mnt/a /mnt/b /mnt/c

# 1. the tree as the kernel sees it
mount -t erofs -o ro /dev/vda /mnt/a || exit 10
bash /host/manifest /mnt/a --drop-xattr trusted.erofs.fingerprint > "$out/tree.manifest"
# fingerprints: "sha256:" + digest for every non-empty regular file
find /mnt/a -type f -size +0 | while read -r f; do
	want=7368613235363a$(sha256sum < "$f" | cut -c1-64)
	got=$(getfattr -e hex -n trusted.erofs.fingerprint "$f" 2>/dev/null |
		sed -n 's/^trusted.erofs.fingerprint=0x//p')
	[ "$got" = "$want" ] && echo ok || echo "bad $f"
done > "$out/fingerprints"
umount /mnt/a

# 2. erofs-utils' own checker, digests included
fsck.erofs --version > "$out/fsck.version" 2>&1
fsck.erofs --xattr-inode-digest /dev/vda > "$out/fsck.log" 2>&1
echo $? > "$out/fsck.rc"
fsck.erofs --xattr-inode-digest /dev/vdd > "$out/fsck-corrupt.log" 2>&1
echo $? > "$out/fsck-corrupt.rc"

# 3. page-cache sharing: read every file of A, then the files of B that
#    are identical to A's, then the rest of B, with read(2), with and
#    without inode_share; record how much the page cache grew at each
#    step ("A B-shared B-rest", kB)
cached() { awk '/^Cached:/ { print $2 }' /proc/meminfo; }
# (one cat for many files: under TCG a process per file costs seconds)
read_all() { find "$1" -type f -exec cat {} + > /dev/null; }
read_range() { seq "$2" "$3" | sed "s|^|$1/lib/f|" | xargs cat > /dev/null; }
# measure DEV_A DEV_B FIRST_SHARED LAST_SHARED OPTIONS
measure() {
	sync; echo 3 > /proc/sys/vm/drop_caches
	mount -t erofs -o "ro$5" "/dev/$1" /mnt/b || exit 11
	mount -t erofs -o "ro$5" "/dev/$2" /mnt/c || exit 12
	c0=$(cached); read_all /mnt/b
	c1=$(cached); read_range /mnt/c "$3" "$4"
	c2=$(cached); read_all /mnt/c
	c3=$(cached)
	umount /mnt/b /mnt/c
	echo "$((c1 - c0)) $((c2 - c1)) $((c3 - c2))"
}
# files 17-160 of B are A's
measure vdb vdc 17 160 "" > "$out/cache.plain"
measure vdb vdc 17 160 ",inode_share,domain_id=fsforge" > "$out/cache.shared"

# 4. a compressed image: the tree as the kernel decompresses it, and
#    erofs-utils' checker with digests
mount -t erofs -o ro /dev/vde /mnt/a || exit 13
bash /host/manifest /mnt/a --drop-xattr trusted.erofs.fingerprint > "$out/ztree.manifest"
umount /mnt/a
fsck.erofs --xattr-inode-digest /dev/vde > "$out/zfsck.log" 2>&1
echo $? > "$out/zfsck.rc"

# 5. the other algorithms: the tree as the kernel decompresses it
for d in vdh:zstd vdi:deflate vdj:lzma; do
	mount -t erofs -o ro "/dev/${d%%:*}" /mnt/a || exit 16
	bash /host/manifest /mnt/a > "$out/${d#*:}.manifest"
	umount /mnt/a
done

# 5b. -E ztailpacking, fragments (the packed inode), all-fragments, dedupe
for d in vdk:ztail vdl:frag vdm:allfrag; do
	mount -t erofs -o ro "/dev/${d%%:*}" /mnt/a || exit 17
	bash /host/manifest /mnt/a > "$out/${d#*:}.manifest"
	umount /mnt/a
done

# 5c. two algorithms, per file by --compress-hints: the kernel's read and
#     erofs-utils' checker
mount -t erofs -o ro /dev/vdp /mnt/a || exit 18
bash /host/manifest /mnt/a > "$out/zhints.manifest"
umount /mnt/a
fsck.erofs /dev/vdp > "$out/zhints-fsck.log" 2>&1
echo $? > "$out/zhints-fsck.rc"

# 6. page-cache sharing between two compressed images (files 9-80 of B
#    are A's), with plain lz4hc extents and with -Efragments,dedupe
measure vdf vdg 9 80 "" > "$out/zcache.plain"
measure vdf vdg 9 80 ",inode_share,domain_id=fsforgez" > "$out/zcache.shared"
measure vdn vdo 9 80 "" > "$out/fcache.plain"
measure vdn vdo 9 80 ",inode_share,domain_id=fsforgef" > "$out/fcache.shared"
dmesg > "$out/dmesg"
exit 0
