#!/usr/bin/env python3
"""zmap_header.py IMAGE NID...: for each inode number (NID, as dump.erofs
prints it), its data layout and, for a compressed inode, the map header
after the inode and its xattrs (8-byte aligned): the HEAD1 and HEAD2
algorithms, the advise bits and the lcluster bits.  Written from the EROFS
on-disk format (erofs_fs.h of the kernel), independent of fsforge's reader.
One line per NID: "NID layout=L [alg1=A alg2=B advise=0xX clusterbits=C]",
and for a compact index (layout 3) " init4=K": the lclusters in 4-byte
packs before the first 32-byte boundary after the map header, as the
kernel's zmap.c computes them (the 2-byte packs start there).
"""
import struct
import sys

img = open(sys.argv[1], "rb").read()
sb = img[1024:1024 + 128]
blkszbits = sb[0x0C]
meta_blkaddr, = struct.unpack_from("<I", sb, 0x28)
base = meta_blkaddr << blkszbits
for arg in sys.argv[2:]:
    nid = int(arg)
    off = base + nid * 32
    i_format, xattr_icount = struct.unpack_from("<HH", img, off)
    extended = i_format & 1
    layout = (i_format >> 1) & 7
    isize = 64 if extended else 32
    xsize = 0 if xattr_icount == 0 else 12 + (xattr_icount - 1) * 4
    line = f"{nid} layout={layout}"
    if layout in (1, 3):  # COMPRESSED_FULL, COMPRESSED_COMPACT
        h = off + ((isize + xsize + 7) & ~7)
        _, _, advise, algtype, clusterbits = struct.unpack_from("<HHHBB", img, h)
        line += (f" alg1={algtype & 15} alg2={algtype >> 4}"
                 f" advise={advise:#x} clusterbits={clusterbits & 0x7f}")
        if layout == 3:
            ebase = h + 8
            line += f" init4={((32 - ebase % 32) // 4) & 7}"
    print(line)
