#!/usr/bin/env python3
"""btree_damage.py IMAGE COMMAND ARGS...: one damage to an NTFS index
B+tree ($I30 of a directory, or $Secure's $SII/$SDH/$SDS), for
tests/ntfs/btree.bats.  Independent of libntfs: built on ntfs_patch.py's
parser (format documentation).  Nodes: the root is depth 0; "the first
sub-node" is the child of the root's first entry.  DIR is a record
number, or RECORD:NAME for another index of a record (9:$SII).

Commands:
  levels DIR          print the depth of DIR's tree (1: the root alone)
  swap DIR            two neighbouring entries of a leaf block exchanged
  separator DIR       the first separator from the top exchanged with the
                      last key of the leaf before it (both keep their place)
  depth DIR           the root's first entry points at a grandchild
  vswap DIR           the root's first two entries exchanged whole
  vcn DIR             the first sub-node block says another VCN
  baad DIR            the first sub-node block marked BAAD
  subnode DIR         the root's first entry points past the allocation
  bitmap DIR BIT 0|1  bit BIT of DIR's $I30 $BITMAP cleared or set
  rootlen DIR         the first entry of DIR's root gets a bad length
  rootinfo DIR        print the root's type, collation, index block size
  rootword DIR OFF V  the 32-bit word at OFF of the root's value set to V
  rootname DIR        the second character of the root's name made 'X'
  roottype DIR        the root attribute's type field made 0xbf000090
  allocsize DIR SIZE  the allocation's allocated, data and initialized
                      sizes set
  recbaad REC         MFT record REC marked BAAD
  sii                 the key of $SII's second entry changed
  sdh                 $SDH's first two entries exchanged
  sds ID              both copies of security id ID in $SDS damaged
  sdszero             every byte of $SDS zeroed (no descriptor left)
  secid REC ID        REC's $STANDARD_INFORMATION names security id ID
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ntfs_patch import Volume, attrs, unfix, refix, runs_of  # noqa: E402

AT_SI, AT_DATA, AT_ROOT, AT_ALLOC, AT_BITMAP = 0x10, 0x80, 0x90, 0xA0, 0xB0


def entries(buf, ih):
    """(offset, length, flags) of each entry, end entry included."""
    eo, il = struct.unpack_from("<II", buf, ih)
    off, out = ih + eo, []
    while off < ih + il:
        ln, kl, fl = struct.unpack_from("<HHH", buf, off + 8)
        out.append((off, ln, fl))
        if fl & 2:
            break
        off += ln
    return out


class Tree:
    def __init__(self, vol, d, name="$I30", rec=None):
        self.v, self.d = vol, d
        self.rec = vol.read(d)
        self.runs = self.bmp = None
        for off, t, n in attrs(self.rec):
            if n != name:
                continue
            if t == AT_ROOT:
                self.root_attr = off
                self.root = off + struct.unpack_from("<H", self.rec, off + 0x14)[0]
            if t == AT_ALLOC:
                self.alloc_attr = off
                self.runs = runs_of(self.rec, off)
            if t == AT_BITMAP:
                self.bmp = off + struct.unpack_from("<H", self.rec, off + 0x14)[0]
        self.bs, = struct.unpack_from("<I", self.rec, self.root + 8)

    def block(self, vcn):
        return self.v.block_at(self.runs, self.bs, vcn)

    def child(self, buf, e):
        off, ln, fl = e
        return struct.unpack_from("<q", buf, off + ln - 8)[0]

    def set_child(self, buf, e, vcn):
        off, ln, fl = e
        struct.pack_into("<q", buf, off + ln - 8, vcn)

    def root_entries(self):
        return entries(self.rec, self.root + 16)

    def write_root(self):
        self.v.write(self.d, self.rec)

    def write_block(self, at, buf):
        self.v.pwrite(at, refix(buf))

    def levels(self):
        n, buf, ih = 1, self.rec, self.root + 16
        while entries(buf, ih)[0][2] & 1:
            at, buf = self.block(self.child(buf, entries(buf, ih)[0]))
            ih, n = 0x18, n + 1
        return n


def swap_entries(a, ea, b, eb):
    """exchange file reference and key of two entries of equal key length"""
    kla = struct.unpack_from("<H", a, ea[0] + 10)[0]
    klb = struct.unpack_from("<H", b, eb[0] + 10)[0]
    assert kla == klb, "keys of different lengths"
    x, y = bytes(a[ea[0]:ea[0] + 8]), bytes(a[ea[0] + 16:ea[0] + 16 + kla])
    a[ea[0]:ea[0] + 8] = b[eb[0]:eb[0] + 8]
    a[ea[0] + 16:ea[0] + 16 + kla] = b[eb[0] + 16:eb[0] + 16 + klb]
    b[eb[0]:eb[0] + 8] = x
    b[eb[0] + 16:eb[0] + 16 + klb] = y


def main():
    img, cmd, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    v = Volume(img)
    if cmd == "recbaad":
        at = v.offset(v.mft_runs, int(args[0]) * v.rs)
        raw = bytearray(v.pread(at, v.rs))
        raw[0:4] = b"BAAD"
        v.pwrite(at, raw)
        return
    if cmd in ("sii", "sdh", "sds", "sdszero", "secid"):
        return secure(v, cmd, args)
    d, _, name = args[0].partition(":")
    t = Tree(v, int(d), name or "$I30")
    re = t.root_entries()
    if cmd == "levels":
        print(t.levels())
    elif cmd == "swap":
        buf, ih, at = t.rec, t.root + 16, None
        while entries(buf, ih)[0][2] & 1:
            at, buf = t.block(t.child(buf, entries(buf, ih)[0]))
            ih = 0x18
        es = entries(buf, ih)
        swap_entries(buf, es[1], buf, es[2])
        t.write_block(at, buf) if at is not None else t.write_root()
    elif cmd == "separator":
        # the first node from the top with a separator (not only its end
        # entry): its first entry, and the last key of the leaf before it
        nat, node, ih = None, t.rec, t.root + 16
        while len(entries(node, ih)) < 2:
            nat, node = t.block(t.child(node, entries(node, ih)[0]))
            ih = 0x18
        e = entries(node, ih)[0]
        at, buf = t.block(t.child(node, e))
        while entries(buf, 0x18)[-1][2] & 1:     # rightmost leaf below
            at, buf = t.block(t.child(buf, entries(buf, 0x18)[-1]))
        last = entries(buf, 0x18)[-2]
        swap_entries(node, e, buf, last)
        t.write_root() if nat is None else t.write_block(nat, node)
        t.write_block(at, buf)
    elif cmd == "depth":
        at, buf = t.block(t.child(t.rec, re[0]))
        t.set_child(t.rec, re[0], t.child(buf, entries(buf, 0x18)[0]))
        t.write_root()
    elif cmd in ("vcn", "baad"):
        vcn = t.child(t.rec, re[0])
        at, buf = t.block(vcn)
        if cmd == "vcn":
            struct.pack_into("<q", buf, 0x10, vcn + 0x1000)
            t.write_block(at, buf)
        else:
            raw = bytearray(refix(buf))
            raw[0:4] = b"BAAD"
            v.pwrite(at, raw)
    elif cmd == "vswap":
        a, b = re[0], re[1]
        assert not (a[2] | b[2]) & 3, "the root's first two entries are not leaf entries"
        x = bytes(t.rec[a[0]:a[0] + a[1]])
        y = bytes(t.rec[b[0]:b[0] + b[1]])
        t.rec[a[0]:a[0] + a[1] + b[1]] = y + x
        t.write_root()
    elif cmd == "subnode":
        t.set_child(t.rec, re[0], 0x100000)
        t.write_root()
    elif cmd == "bitmap":
        bit, val = int(args[1]), int(args[2])
        p = t.bmp + bit // 8
        if val:
            t.rec[p] |= 1 << (bit % 8)
        else:
            t.rec[p] &= ~(1 << (bit % 8)) & 0xFF
        t.write_root()
    elif cmd == "rootinfo":
        print("%#x %#x %d" % struct.unpack_from("<III", t.rec, t.root))
    elif cmd == "rootword":
        struct.pack_into("<I", t.rec, t.root + int(args[1], 0), int(args[2], 0))
        t.write_root()
    elif cmd == "rootname":
        noff, = struct.unpack_from("<H", t.rec, t.root_attr + 10)
        struct.pack_into("<H", t.rec, t.root_attr + noff + 2, ord("X"))
        t.write_root()
    elif cmd == "roottype":
        struct.pack_into("<I", t.rec, t.root_attr, 0xBF000090)
        t.write_root()
    elif cmd == "allocsize":
        size = int(args[1], 0)
        struct.pack_into("<QQQ", t.rec, t.alloc_attr + 0x28, size, size, size)
        t.write_root()
    elif cmd == "rootlen":
        struct.pack_into("<H", t.rec, re[0][0] + 8, 0x7FF8)
        t.write_root()
    elif cmd == "endkey":
        # the root's end entry (no key) given a key length of 0x4000
        struct.pack_into("<H", t.rec, re[-1][0] + 10, 0x4000)
        t.write_root()
    else:
        sys.exit("unknown command " + cmd)


def secure(v, cmd, args):
    if cmd == "secid":
        r, sid = int(args[0]), int(args[1], 0)
        rec = v.read(r)
        for off, t, n in attrs(rec):
            if t == AT_SI:
                vl, vo = struct.unpack_from("<IH", rec, off + 0x10)
                assert vl >= 0x38, "no security id in this $STANDARD_INFORMATION"
                struct.pack_into("<I", rec, off + vo + 0x34, sid)
        v.write(r, rec)
        return
    if cmd in ("sii", "sdh"):
        t = Tree(v, 9, "$" + cmd.upper())
        es = t.root_entries()
        if cmd == "sii":
            struct.pack_into("<I", t.rec, es[1][0] + 16, 0xFFF0)
        else:
            swap_entries(t.rec, es[0], t.rec, es[1])
            # the data (descriptor header) moves with the key
            for a, b in ((es[0], es[1]),):
                da = a[0] + struct.unpack_from("<H", t.rec, a[0])[0]
                db = b[0] + struct.unpack_from("<H", t.rec, b[0])[0]
                x = bytes(t.rec[da:da + 20])
                t.rec[da:da + 20] = t.rec[db:db + 20]
                t.rec[db:db + 20] = x
        t.write_root()
        return
    rec = v.read(9)
    for off, t, n in attrs(rec):
        if t == AT_DATA and n == "$SDS":
            runs = runs_of(rec, off)
    if cmd == "sdszero":
        for lcn, ln in runs:
            v.pwrite(lcn * v.cs, bytes(ln * v.cs))
        return
    # sds ID: flip a byte of the descriptor in both copies
    sid = int(args[0], 0)
    for base in (0, 0x40000):
        o = 0
        while True:
            at = v.offset(runs, base + o)
            h, i, off, ln = struct.unpack("<IIQI", v.pread(at, 20))
            if ln == 0:
                sys.exit("security id %#x not found" % sid)
            if i == sid:
                b = bytearray(v.pread(at + 24, 1))
                b[0] ^= 0xFF
                v.pwrite(at + 24, b)
                break
            o += (ln + 15) & ~15


if __name__ == "__main__":
    main()
