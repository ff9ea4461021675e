#!/bin/sh
# Runs inside the sid guest (Linux 7.x).  Disks:
#   vda  a tree with chunk-based files (--chunksize=65536, fingerprints)
#   vdb  one 1 GiB file with three data islands (--chunksize=65536)
#   vdc  a tar of vda's tree, vdd its --tar=i image (vdc is its device)
#   vde  a blob device, vdf the --chunksize --blobdev image of the tree
# /host holds manifest and sparse_map.py; results go to /host/result.
set -u
out=/host/result
mkdir -p "$out" /mnt/a /mnt/b
# the harness's --sid mode (tests/kernel/harness.bats had a boot of its
# own for this): sid's tools run in the chroot, the tree is writable
{
	getfattr --version && fsck.erofs --version && xfs_io -V &&
		grep -q '^ID=debian' /etc/os-release &&
		touch /usr/fsforge-overlay-write && echo ok > "$out/sid-ok"
} > "$out/sid-tools" 2>&1
mount -t erofs -o ro /dev/vda /mnt/a || exit 10
bash /host/manifest /mnt/a --drop-xattr trusted.erofs.fingerprint > "$out/tree.manifest"
find /mnt/a -type f -size +0 | while read -r f; do
	want=7368613235363a$(sha256sum < "$f" | cut -c1-64)
	got=$(getfattr -e hex -n trusted.erofs.fingerprint "$f" 2>/dev/null |
		sed -n 's/^trusted.erofs.fingerprint=0x//p')
	[ "$got" = "$want" ] && echo ok || echo "bad $f"
done > "$out/fingerprints"
umount /mnt/a
mount -t erofs -o ro /dev/vdb /mnt/b || exit 11
# every byte read (the holes must read as zeros) and SEEK_DATA's segments
python3 /host/sparse_map.py --segments --all /mnt/b/island > "$out/big.map"
echo $? > "$out/big.rc"
umount /mnt/b
mkdir -p /mnt/c /mnt/d
mount -t erofs -o ro,device=/dev/vdc /dev/vdd /mnt/c || exit 12
bash /host/manifest /mnt/c > "$out/index.manifest"
umount /mnt/c
mount -t erofs -o ro,device=/dev/vde /dev/vdf /mnt/d || exit 13
bash /host/manifest /mnt/d > "$out/blob.manifest"
umount /mnt/d
dmesg > "$out/dmesg"
exit 0
