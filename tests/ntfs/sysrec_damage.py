#!/usr/bin/env python3
"""sysrec_damage.py IMAGE CASE: damage one system file record of an NTFS
volume for tests/ntfs/sysrec.bats.  The few structures needed are parsed
by the damage lab's ntfsparse (independent of libntfs).  A record that
$MFTMirr covers is damaged in both copies, so that only a repair that
makes it again (or in place) can bring it back.

CASE:
  zero-N         record N zeroed
  baad-N         record N's magic "BAAD"
  attroff-N      record N's attribute offset all ones
  notinuse-N     record N's in-use flag cleared
  flags0-N       record N's flags zeroed (in use and directory)
  sivlen-N       record N's $STANDARD_INFORMATION value length 0
  fnvlen-N       record N's $FILE_NAME value length 0
  nodata-N       record N's unnamed $DATA attribute type changed to an
                 unknown type placed last (0xFFFFFF00): the file has no
                 content stream
  fnname-N       record N's $FILE_NAME name length 255 (its value cannot
                 hold it: the attribute is beyond repair)
  fnslash-N      record N's $FILE_NAME name with a '/' for its third unit
                 (no namespace allows it; ntfs-3g cannot list the
                 directory holding it)
  upcase         eight entries of $UpCase's table changed (a -> b ...)
  attrdef        $AttrDef's first cluster zeroed (the whole table of a
                 volume of 4 KiB clusters or more: an SSD's trimmed block)
  attrdefsum     print the sha256 of $AttrDef's data (nothing changed)
  attrdefxlink-N $AttrDef's run moved onto record N's first data cluster
  attrdefhole    $AttrDef's runs made one sparse hole
  ver30          $Volume's $VOLUME_INFORMATION says NTFS 3.0 (a volume
                 Windows 2000 made; valid)
  volinfo        print $Volume's "MAJOR.MINOR FLAGS LABEL" (record 3 in
                 $MFT; nothing changed)
"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lab"))
import ntfsparse as P  # noqa: E402


def main():
    path, case = sys.argv[1], sys.argv[2]
    with open(path, "r+b") as f:
        img = bytearray(f.read())
    g = P.Geometry(img)
    mirr = max(4, g.cs // g.rs)
    what, _, n = case.partition("-")
    n = int(n) if n else -1

    def places(n):
        out = [g.rec_off(n)]
        if n < mirr:
            out.append(g.mirr_lcn * g.cs + n * g.rs)
        return out

    def edit(n, fn, raw=False):
        for at in places(n):
            rec = P.unfix(img[at:at + g.rs])
            fn(rec)
            img[at:at + g.rs] = rec if raw else P.refix(rec)

    def attr(rec, t):
        for off, at, name, nr in P.attrs(rec):
            if at == t and name == "":
                return off
        sys.exit("record %d has no attribute 0x%x" % (n, t))

    if what == "zero":
        edit(n, lambda r: r.__setitem__(slice(0, len(r)), bytes(len(r))), raw=True)
    elif what == "baad":
        edit(n, lambda r: r.__setitem__(slice(0, 4), b"BAAD"))
    elif what == "attroff":
        edit(n, lambda r: struct.pack_into("<H", r, 0x14, 0xFFFF))
    elif what == "notinuse":
        edit(n, lambda r: struct.pack_into("<H", r, 0x16,
                                           struct.unpack_from("<H", r, 0x16)[0] & ~1))
    elif what == "flags0":
        edit(n, lambda r: struct.pack_into("<H", r, 0x16, 0))
    elif what in ("sivlen", "fnvlen"):
        t = 0x10 if what == "sivlen" else 0x30
        edit(n, lambda r: struct.pack_into("<I", r, attr(r, t) + 0x10, 0))
    elif what == "fnname":
        edit(n, lambda r: r.__setitem__(attr(r, 0x30) + struct.unpack_from(
            "<H", r, attr(r, 0x30) + 0x14)[0] + 0x40, 255))
    elif what == "fnslash":
        # the name's third unit made '/' (0x2f), as a changed byte does
        edit(n, lambda r: struct.pack_into("<H", r, attr(r, 0x30) + struct.unpack_from(
            "<H", r, attr(r, 0x30) + 0x14)[0] + 0x42 + 4, 0x2F))
    elif what == "nodata":
        def nodata(r):
            off = attr(r, 0x80)
            ln, = struct.unpack_from("<I", r, off + 4)
            a = bytes(r[off:off + ln])
            used, = struct.unpack_from("<I", r, 0x18)
            # move it to the end, as an unknown type (order kept)
            r[off:used - ln] = r[off + ln:used]
            end = used - ln - 8
            r[end:end + ln] = a
            struct.pack_into("<I", r, end, 0xFFFFFF00)
            struct.pack_into("<I", r, end + ln, 0xFFFFFFFF)
        edit(n, nodata)
    elif what == "ver30":
        def ver30(r):
            v = attr(r, 0x70)
            vofs, = struct.unpack_from("<H", r, v + 0x14)
            r[v + vofs + 8:v + vofs + 10] = bytes([3, 0])
        n = 3
        edit(n, ver30)
    elif what == "volinfo":
        rec = P.unfix(img[g.rec_off(3):g.rec_off(3) + g.rs])
        n = 3
        out = []
        for t in (0x70, 0x60):
            v = attr(rec, t)
            vlen, vofs = struct.unpack_from("<IH", rec, v + 0x10)
            val = rec[v + vofs:v + vofs + vlen]
            out.append("%d.%d 0x%04x" % (val[8], val[9], struct.unpack_from("<H", val, 10)[0])
                       if t == 0x70 else val.decode("utf-16-le"))
        print(" ".join(out))
        return
    elif what == "slack":
        # one byte past the bytes in use changed in $MFT's copy only (the
        # lab's m-ours4k-500019: random damage at 0x345 of record 2)
        at = g.rec_off(n)
        rec = P.unfix(img[at:at + g.rs])
        used, = struct.unpack_from("<I", rec, 0x18)
        assert used < 0x345 < g.rs - 2, "record %d uses %d bytes" % (n, used)
        rec[0x345] ^= 2
        img[at:at + g.rs] = P.refix(rec)
    elif what == "upcase":
        at = g.rec_off(10)
        rec = P.unfix(img[at:at + g.rs])
        runs = P.runlist(rec, attr(rec, 0x80))
        base = runs[0][0] * g.cs
        for k, ch in enumerate("abcdefgh"):
            struct.pack_into("<H", img, base + 2 * ord(ch), ord("b") + k)
    elif what in ("attrdef", "attrdefsum"):
        import hashlib
        at = g.rec_off(4)
        rec = P.unfix(img[at:at + g.rs])
        a = attr(rec, 0x80)
        base = P.runlist(rec, a)[0][0] * g.cs
        if what == "attrdef":
            img[base:base + g.cs] = bytes(g.cs)
        else:
            size, = struct.unpack_from("<q", rec, a + 0x30)
            print(hashlib.sha256(bytes(img[base:base + size])).hexdigest())
            return
    elif what == "attrdefxlink":
        # $AttrDef's first run moved onto the first cluster of record N's
        # unnamed $DATA (both copies of record 4): a cross-link whose
        # other owner holds a user's data
        at = g.rec_off(n)
        rec = P.unfix(img[at:at + g.rs])
        lcn = P.runlist(rec, attr(rec, 0x80))[0][0]

        def relink(r):
            a = attr(r, 0x80)
            p = a + struct.unpack_from("<H", r, a + 0x20)[0]
            ls, os_ = r[p] & 15, r[p] >> 4
            assert -(1 << (8 * os_ - 1)) <= lcn < 1 << (8 * os_ - 1), "LCN %d does not fit" % lcn
            r[p + 1 + ls:p + 1 + ls + os_] = lcn.to_bytes(os_, "little", signed=True)
        n = 4
        edit(4, relink)
    elif what == "attrdefhole":
        # $AttrDef's runs one hole of the same length (the sparse flag
        # set): the table reads as zeros and has nowhere to be written
        def hole(r):
            a = attr(r, 0x80)
            p = a + struct.unpack_from("<H", r, a + 0x20)[0]
            ln, = struct.unpack_from("<I", r, a + 4)
            clusters = sum(c for _, c in P.runlist(r, a))
            assert clusters < 256
            r[p:a + ln] = bytes([0x01, clusters]) + bytes(a + ln - p - 2)
            struct.pack_into("<H", r, a + 0x0c, struct.unpack_from("<H", r, a + 0x0c)[0] | 0x8000)
        edit(4, hole)
    else:
        sys.exit("unknown case " + case)
    with open(path, "r+b") as f:
        f.write(img)


if __name__ == "__main__":
    main()
