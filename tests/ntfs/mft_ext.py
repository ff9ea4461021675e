#!/usr/bin/env python3
"""mft_ext.py IMAGE [FLIP]: give $MFT the layout Linux 7.2's ntfs driver leaves
when $MFT's $DATA grows: record 0 keeps $STANDARD_INFORMATION and $DATA and
gets an $ATTRIBUTE_LIST; $FILE_NAME and $BITMAP move to an extension
record (the first free record from 16 on, which becomes in use).  Record 0
is written to $MFTMirr too.  Prints the extension record's number.  FLIP:
a record number whose bit in the moved $BITMAP is then inverted (damage).  MFT_EXT_SPLIT=1 in the environment: the $BITMAP in two
extents in two extension records (its first cluster, the rest; a free
cluster is added to its allocation when it has one), the second record
printed after the first.

From the format documentation (MFT record header, attribute list entries),
independent of libntfs; uses ntfs_patch.py's record I/O.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ntfs_patch import Volume, attrs, refix, runs_of  # noqa: E402
from crosslink_damage import encode  # noqa: E402

AT_ATTRIBUTE_LIST, AT_FILE_NAME, AT_BITMAP = 0x20, 0x30, 0xB0
END = 0xFFFFFFFF


def aligned(n):
    return (n + 7) & ~7


def list_entry(t, instance, recno, seq, vcn=0):
    # type, length, name length/offset, lowest VCN, reference, instance
    return struct.pack("<IHBBqQH", t, 0x20, 0, 0x1A, vcn, recno | seq << 48,
                       instance) + b"\0" * 6


def extent(a, lo, hi, runs, sizes):
    """Non-resident unnamed attribute A (its header) as the extent LO-HI
    with RUNS; SIZES (allocated, data, initialized) or zeros."""
    mp = encode(runs)
    n = aligned(0x40 + len(mp))
    x = bytearray(n)
    x[0:0x10] = a[0:0x10]
    struct.pack_into("<IB", x, 4, n, 1)
    struct.pack_into("<BH", x, 9, 0, 0x40)      # no name
    struct.pack_into("<qqH", x, 0x10, lo, hi, 0x40)
    struct.pack_into("<qqq", x, 0x28, *sizes)
    x[0x40:0x40 + len(mp)] = mp
    return bytes(x)


def free_cluster(v):
    """A free cluster from the end of the volume, marked in use."""
    b6 = v.read(6)
    off = [o for o, t, name in attrs(b6) if t == 0x80 and not name][0]
    runs = runs_of(b6, off)
    nclusters = struct.unpack_from("<q", v.pread(0, 512), 0x28)[0] * 512 // v.cs
    for c in range(nclusters - 1, 0, -1):
        at = v.offset(runs, c // 8)
        byte = v.pread(at, 1)[0]
        if not byte >> (c % 8) & 1:
            v.pwrite(at, bytes([byte | 1 << (c % 8)]))
            return c
    sys.exit("no free cluster")


def main():
    v = Volume(sys.argv[1])
    rs = v.rs
    rec0 = v.read(0)
    seq0, = struct.unpack_from("<H", rec0, 0x10)
    moving = [(off, t) for off, t, name in attrs(rec0)
              if t in (AT_FILE_NAME, AT_BITMAP) and not name]
    assert len(moving) == 2, "record 0 lacks $FILE_NAME or $BITMAP"

    # the MFT bitmap and the first free record from 16 on
    boff = [off for off, t, name in attrs(rec0) if t == AT_BITMAP and not name][0]
    assert rec0[boff + 8], "a resident MFT bitmap"
    bruns = runs_of(rec0, boff)
    blen, = struct.unpack_from("<Q", rec0, boff + 0x30)
    bmp = bytearray(b"".join(v.pread(lcn * v.cs, n * v.cs) for lcn, n in bruns)[:blen])
    ext = next(i for i in range(16, blen * 8) if not bmp[i // 8] >> (i % 8) & 1)
    bmp[ext // 8] |= 1 << (ext % 8)
    if len(sys.argv) > 2:
        flip = int(sys.argv[2])
        bmp[flip // 8] ^= 1 << (flip % 8)

    split = os.environ.get("MFT_EXT_SPLIT") == "1"
    ext2 = None
    if split:
        ext2 = next(i for i in range(ext + 1, blen * 8) if not bmp[i // 8] >> (i % 8) & 1)
        bmp[ext2 // 8] |= 1 << (ext2 % 8)
        alloc, = struct.unpack_from("<q", rec0, boff + 0x28)
        if sum(n for _, n in bruns) < 2:
            bruns = bruns + [(free_cluster(v), 1)]
            alloc += v.cs
        nclus = sum(n for _, n in bruns)
        first_lcn, first_len = bruns[0]
        rest = ([(first_lcn + 1, first_len - 1)] if first_len > 1 else []) + bruns[1:]
        ba = rec0[boff:boff + 0x40]
        sizes = (alloc,) + struct.unpack_from("<qq", rec0, boff + 0x30)
        split_a = extent(ba, 0, 0, [(first_lcn, 1)], sizes)
        split_b = extent(ba, 1, nclus - 1, rest, (0, 0, 0))

    def ext_record(recno, parts):
        usa_cnt = rs // 512 + 1
        first = aligned(0x30 + 2 * usa_cnt)
        body, inst = b"", 0
        for t, a, vcn in parts:
            a = bytearray(a)
            struct.pack_into("<H", a, 0x0E, inst)
            body += a
            entries.append((t, inst, recno, 1, vcn))
            inst += 1
        used = first + len(body) + 8
        r = bytearray(rs)
        r[0:4] = b"FILE"
        struct.pack_into("<HHQHHHHII", r, 4, 0x30, usa_cnt, 0, 1, 0, first, 1,
                         used, rs)
        struct.pack_into("<QHHI", r, 0x20, 0 | seq0 << 48, inst, 0, recno)
        struct.pack_into("<H", r, 0x30, 1)		# update sequence number
        r[first:first + len(body)] = body
        struct.pack_into("<II", r, first + len(body), END, 0)
        return r

    # the extension record(s): fresh FILE records holding the two
    entries = []
    parts = []
    for off, t in moving:
        ln, = struct.unpack_from("<I", rec0, off + 4)
        if split and t == AT_BITMAP:
            parts.append((t, split_a, 0))
        else:
            parts.append((t, rec0[off:off + ln], 0))
    r = ext_record(ext, parts)
    if split:
        r2 = ext_record(ext2, [(AT_BITMAP, split_b, 1)])

    # record 0: without the two, with an $ATTRIBUTE_LIST after $STANDARD_INFORMATION
    out, instance = bytearray(), struct.unpack_from("<H", rec0, 0x28)[0]
    kept = []
    for off, t, name in attrs(rec0):
        ln, = struct.unpack_from("<I", rec0, off + 4)
        if (off, t) in moving:
            continue
        kept.append((t, rec0[off:off + ln]))
    for t, a in kept:
        entries.append((t, struct.unpack_from("<H", a, 0x0E)[0], 0, seq0, 0))
    entries.sort(key=lambda e: (e[0], e[4]))
    value = b"".join(list_entry(t, i, recno, s, vcn) for t, i, recno, s, vcn in entries)
    al = bytearray(aligned(0x18 + len(value)))
    struct.pack_into("<IIBBHHHIHBB", al, 0, AT_ATTRIBUTE_LIST, len(al), 0, 0,
                     0x18, 0, instance, len(value), 0x18, 0, 0)
    al[0x18:0x18 + len(value)] = value
    first0, = struct.unpack_from("<H", rec0, 0x14)
    for t, a in kept:
        out += a
        if t == 0x10:
            out += al
    assert first0 + len(out) + 8 <= rs
    new0 = bytearray(rec0)
    new0[first0:] = bytes(rs - first0)
    new0[first0:first0 + len(out)] = out
    struct.pack_into("<II", new0, first0 + len(out), END, 0)
    struct.pack_into("<I", new0, 0x18, first0 + len(out) + 8)
    struct.pack_into("<H", new0, 0x28, instance + 1)

    pos = 0
    for lcn, n in bruns:
        v.pwrite(lcn * v.cs, bytes(bmp[pos:pos + n * v.cs]))
        pos += n * v.cs
    v.write(ext, r)
    if split:
        v.write(ext2, r2)
    v.write(0, new0)
    b = v.pread(0, 512)
    mirr, = struct.unpack_from("<q", b, 0x38)
    v.pwrite(mirr * v.cs, refix(new0))
    v.f.close()
    print(ext, ext2) if split else print(ext)


if __name__ == "__main__":
    main()
