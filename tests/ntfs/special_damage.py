#!/usr/bin/env python3
"""special_damage.py IMAGE COMMAND REC: targeted damage to the reparse
point, extended attributes or data attribute of MFT record REC (what
ntfs-3g shows as the inode number), for tests/ntfs/special.bats.  The
structures are parsed here from the format documentation (through
ntfs_patch.py's Volume), not by libntfs.

Commands:
  rplen REC       the reparse data length in the header is 1 too large
  rpbad REC       the reparse value becomes unusable (LX_SYMLINK version
                  7, or a symlink's substitute name outside the value)
  rpflag REC      the reparse-point bit of $STANDARD_INFORMATION cleared
  eainfo REC      $EA_INFORMATION's packed size is 3 too large
  eachain REC     the second $EA entry's next-entry offset becomes 3
  eanext REC      the first $EA entry's next-entry offset points 64 bytes
                  past the value (its name and value intact)
  eafirst REC     the first $EA entry's name length 0xff (its next-entry
                  offset kept): that entry cannot be read
  eanames REC     print the names of the $EA entries, one a line, as the
                  chain links them (nothing changed; "BROKEN" where a link
                  leaves the value)
  eanoinfo REC    $EA_INFORMATION is removed from the record
  rkey REC        $R's entry for REC names another reparse tag
  csize REC       the compressed size of the sparse unnamed $DATA grows
                  by one cluster
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ntfs_patch import Volume, attrs  # noqa: E402

AT_SI, AT_DATA, AT_IROOT, AT_RP, AT_EAI, AT_EA = 0x10, 0x80, 0x90, 0xC0, 0xD0, 0xE0


def value_at(rec, off):
    vlen, voff = struct.unpack_from("<IH", rec, off + 16)
    return off + voff, vlen


def find(rec, typ, name=""):
    for off, t, n in attrs(rec):
        if t == typ and n == name:
            return off
    sys.exit("record has no attribute 0x%x" % typ)


def remove(rec, off):
    alen, = struct.unpack_from("<I", rec, off + 4)
    used, = struct.unpack_from("<I", rec, 0x18)
    rec[off:used - alen] = rec[off + alen:used]
    rec[used - alen:used] = bytes(alen)
    struct.pack_into("<I", rec, 0x18, used - alen)


def main():
    vol = Volume(sys.argv[1])
    cmd, r = sys.argv[2], int(sys.argv[3])
    rec = vol.read(r)
    if cmd in ("rplen", "rpbad"):
        v, vlen = value_at(rec, find(rec, AT_RP))
        tag, dlen = struct.unpack_from("<IH", rec, v)
        if cmd == "rplen":
            struct.pack_into("<H", rec, v + 4, dlen + 1)
        elif tag == 0xA000001D:
            struct.pack_into("<I", rec, v + 8, 7)
        else:
            struct.pack_into("<H", rec, v + 8, 0xFFF0)
    elif cmd == "rpflag":
        v, _ = value_at(rec, find(rec, AT_SI))
        fa, = struct.unpack_from("<I", rec, v + 32)
        struct.pack_into("<I", rec, v + 32, fa & ~0x400)
    elif cmd == "eainfo":
        v, _ = value_at(rec, find(rec, AT_EAI))
        p, = struct.unpack_from("<H", rec, v)
        struct.pack_into("<H", rec, v, p + 3)
    elif cmd == "eachain":
        v, _ = value_at(rec, find(rec, AT_EA))
        first, = struct.unpack_from("<I", rec, v)
        struct.pack_into("<I", rec, v + first, 3)
    elif cmd == "eanext":
        v, vlen = value_at(rec, find(rec, AT_EA))
        struct.pack_into("<I", rec, v, vlen + 64)
    elif cmd == "eafirst":
        v, vlen = value_at(rec, find(rec, AT_EA))
        rec[v + 5] = 0xff
    elif cmd == "eanames":
        v, vlen = value_at(rec, find(rec, AT_EA))
        o = 0
        while o < vlen:
            nxt, nlen = struct.unpack_from("<I", rec, v + o)[0], rec[v + o + 5]
            print(rec[v + o + 8:v + o + 8 + nlen].decode("latin-1"))
            if not nxt:
                break
            if nxt % 4 or o + nxt > vlen:
                print("BROKEN")
                break
            o += nxt
        return
    elif cmd == "eanoinfo":
        remove(rec, find(rec, AT_EAI))
    elif cmd == "csize":
        off = find(rec, AT_DATA)
        assert rec[off + 8] and struct.unpack_from("<H", rec, off + 12)[0] & 0x8000, "not sparse"
        c, = struct.unpack_from("<Q", rec, off + 0x40)
        struct.pack_into("<Q", rec, off + 0x40, c + vol.cs)
    elif cmd == "rkey":
        rr = vol.read(26)
        v, vlen = value_at(rr, find(rr, AT_IROOT, "$R"))
        eo, = struct.unpack_from("<I", rr, v + 16)
        p = v + 16 + eo
        while True:
            elen, klen, fl = struct.unpack_from("<HHH", rr, p + 8)
            if fl & 2:
                sys.exit("no $R entry in the root for record %d" % r)
            tag, mref = struct.unpack_from("<IQ", rr, p + 16)
            if mref & 0xFFFFFFFFFFFF == r:
                struct.pack_into("<I", rr, p + 16, tag ^ 0x10)
                break
            p += elen
        vol.write(26, rr)
        return
    else:
        sys.exit("unknown command " + cmd)
    vol.write(r, rec)


if __name__ == "__main__":
    main()
