#!/usr/bin/env python3
"""fsck_regions.py SIDROOT IMG PATH...: byte ranges of an EROFS image to
damage, found by erofs-utils' dump.erofs (in the sid tree), not by fsforge:
one line per region, "NAME START END" (END exclusive).

  super           the superblock (1024..1152)
  inode:P         the inode record of P
  xattr:P         its inline xattr body (when it has one)
  digest:P        the 32 digest bytes of its fingerprint value ("sha256:" + 32)
  dirent:P        a directory's entries and names (its data)
  zindex:P        a compressed file's map header and the first bytes of its
                  lcluster index (2 bytes per lcluster: the least any index
                  takes)
  zdata:P         its first pcluster
IMG is a path inside SIDROOT.
"""
import re
import subprocess
import sys

root, img, paths = sys.argv[1], sys.argv[2], sys.argv[3:]


def dump(*args):
    return subprocess.run(["chroot", root, "dump.erofs", *args, img],
                          check=True, capture_output=True, text=True).stdout


sb = dump("-s")
bs = int(re.search(r"blocksize:\s+(\d+)", sb).group(1))
meta = int(re.search(r"inode metadata start block:\s+(\d+)", sb).group(1))
data = open(root + img, "rb").read()
print("super", 1024, 1152)
for p in paths:
    out = dump("-e", "--path=" + p)
    nid = int(re.search(r"NID: (\d+)", out).group(1))
    size = int(re.search(r"Size: (\d+)", out).group(1))
    layout = int(re.search(r"Layout: (\d+)", out).group(1))
    isize = int(re.search(r"Inode size: (\d+)", out).group(1))
    xsize = int(re.search(r"Xattr size: (\d+)", out).group(1))
    pos = meta * bs + nid * 32
    print(f"inode:{p}", pos, pos + isize)
    if xsize:
        print(f"xattr:{p}", pos + isize, pos + isize + xsize)
        at = data.find(b"sha256:", pos + isize, pos + isize + xsize)
        if at >= 0:
            print(f"digest:{p}", at + 7, at + 39)
    ext = re.findall(r"^\s*\d+:\s+(\d+)\.\.\s*(\d+)\s*\|\s*(\d+)\s*:\s*(\d+)\.\.\s*(\d+)", out, re.M)
    if "directory" in out and ext:
        for _, _, _, ps, pe in ext:
            print(f"dirent:{p}", int(ps), int(pe))
    if layout in (1, 3) and ext:
        end = (pos + isize + xsize + 7) // 8 * 8
        nlc = (size + bs - 1) // bs
        print(f"zindex:{p}", end, end + 8 + 2 * nlc)
        _, _, _, ps, pe = ext[0]
        print(f"zdata:{p}", int(ps), int(pe))
