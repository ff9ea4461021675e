#!/usr/bin/env python3
"""$Extend/$ObjId's $O index of a small volume (its entries in the index
root of $ObjId's record), read and damaged with the lab's parser
(tests/ntfs/lab/ntfsparse.py, not libntfs), for tests/ntfs/objid.bats.

    objid_damage.py entries IMG          every entry: "KEY DATA" (hex), sorted
    objid_damage.py key IMG REC          +1 to the first key byte of REC's entry
    objid_damage.py ref IMG REC NEW      REC's entry names MFT record NEW
    objid_damage.py splice SRC DST       $ObjId's record of SRC copied into DST
"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lab"))
import ntfsparse as P  # noqa: E402


def load(path):
    img = bytearray(open(path, "rb").read())
    g = P.Geometry(img)
    return img, g, P.named_record(img, g, "$ObjId")


def entries(img, g, ro):
    """(where, offset, buffer) of each entry, with its key and data."""
    out = []
    for w, o, buf in P.index_all(img, g, ro, "$O"):
        doff, dlen = struct.unpack_from("<HH", buf, o)
        klen = struct.unpack_from("<H", buf, o + 10)[0]
        out.append((w, o, bytes(buf[o + 16:o + 16 + klen]), bytes(buf[o + doff:o + doff + dlen])))
    return out


def edit(path, rec_of_entry, fn):
    img, g, ro = load(path)
    hits = [(w, o) for w, o, k, d in entries(img, g, ro)
            if struct.unpack_from("<Q", d, 0)[0] & 0xFFFFFFFFFFFF == rec_of_entry]
    if not hits or hits[0][0] != "root":
        sys.exit("no root entry names record %d" % rec_of_entry)
    at, raw = P.read_record(img, g, ro)
    rec = P.unfix(raw)
    roff = next(off for off, ty, name, _ in P.attrs(rec) if ty == 0x90 and name == "$O")
    voff = P.value(rec, roff)[0]
    # the index root's entries: 16 bytes of root header, then the index header
    o = voff + 16 + struct.unpack_from("<I", rec, voff + 16)[0]
    while True:
        doff, dlen, elen, klen, flags = struct.unpack_from("<HHxxxxHHH", rec, o)
        if flags & 2:
            sys.exit("entry not found in the root")
        ref = struct.unpack_from("<Q", rec, o + doff)[0] & 0xFFFFFFFFFFFF
        if ref == rec_of_entry:
            fn(rec, o, doff)
            break
        o += elen
    img[at:at + g.rs] = P.refix(rec)
    open(path, "r+b").write(img)


def main():
    cmd = sys.argv[1]
    if cmd == "entries":
        img, g, ro = load(sys.argv[2])
        for line in sorted("%s %s" % (k.hex(), d.hex()) for _, _, k, d in entries(img, g, ro)):
            print(line)
    elif cmd == "key":
        def bump(rec, o, doff):
            rec[o + 16] = (rec[o + 16] + 1) & 0xFF
        edit(sys.argv[2], int(sys.argv[3]), bump)
    elif cmd == "ref":
        new = int(sys.argv[4])

        def point(rec, o, doff):
            old = struct.unpack_from("<Q", rec, o + doff)[0]
            struct.pack_into("<Q", rec, o + doff, (old & ~0xFFFFFFFFFFFF) | new)
        edit(sys.argv[2], int(sys.argv[3]), point)
    elif cmd == "splice":
        src, g, ro = load(sys.argv[2])
        dst, g2, ro2 = load(sys.argv[3])
        if ro != ro2 or g.rs != g2.rs:
            sys.exit("$ObjId is not the same record in both images")
        at = g.rec_off(ro)
        dst[at:at + g.rs] = src[at:at + g.rs]
        open(sys.argv[3], "r+b").write(dst)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
