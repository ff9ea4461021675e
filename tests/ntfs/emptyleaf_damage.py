#!/usr/bin/env python3
"""emptyleaf_damage.py IMAGE DIR [mid|end|root|chain|tree [INDEX]]: give
directory DIR's $I30 an empty leaf, for tests/ntfs/emptyleaf.bats (tree:
print the tree, each entry in key order with its node).  INDEX: a view
index of record DIR instead ($O, $SDH ...; its root, allocation and bitmap
in that record; "$ObjId" as DIR: $Extend/$ObjId's record; tree prints
each key in hex).  emptyleaf_damage.py ids MNT: through ntfs-3g mounted at
MNT, o/f100..f259 each with an object id (least key first), f140..f199
deleted again: $ObjId:$O has a few leaves and free blocks.  Independent of libntfs: built on
ntfs_patch.py's parser (format documentation).  P is the first node (down
the first entries from the root) whose entries point at leaves.  The tree
stays whole and ordered, every name keeps its entry: the first entry X of
the leaf below P's second entry moves up into P, just before that entry,
with a sub-node pointer to a
block of the allocation that was free ($BITMAP bit clear), written as a
leaf holding its end entry alone; the block's bit is set.  X's old leaf
keeps the keys above X; the new leaf stands for the keys between P's
first entry and X, of which there are none (mid, the default).  end: X
is the last entry of the leaf below P's end entry; it goes up before
that end entry, pointing at that leaf, and the end entry points at the
new leaf (keys above X: none).  root: an empty directory's small root
(its end entry alone) is made large, its end entry pointing at the new
leaf.  chain: as mid, but in the root: X, the first entry of the first
leaf (the least key), goes up into the root before the root's first
entry, pointing at a chain of free blocks, one a level, each node
holding its end entry alone (pointing at the next), the last an empty
leaf at the leaves' depth.  Prints the new leaf's VCN."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ntfs_patch import Volume, attrs, refix, runs_of  # noqa: E402

AT_ROOT, AT_ALLOC, AT_BITMAP = 0x90, 0xA0, 0xB0
INDEX = "$I30"


def attr_of(rec, want):
    for off, t, name in attrs(rec):
        if t == want and name == INDEX:
            return off
    sys.exit("no %s attribute %#x" % (INDEX, want))


class View:
    """Volume V seen through the view index INDEX: entries keyed by
    bytes (their hex as the name), the root in the record itself"""

    def __init__(self, v):
        self.v = v

    def __getattr__(self, a):
        return getattr(self.v, a)

    def index(self, d):
        rec = self.v.read(d)
        r = attr_of(rec, AT_ROOT)
        vroot = r + struct.unpack_from("<H", rec, r + 0x14)[0]
        bs, = struct.unpack_from("<I", rec, vroot + 8)
        return d, rec, vroot, bs, runs_of(rec, attr_of(rec, AT_ALLOC))

    def resize_node(self, kind, buf, ih, at, delta):
        self.v.resize_node(kind, buf, ih, at, delta, INDEX)

    @staticmethod
    def entries(buf, ih):
        eo, il = struct.unpack_from("<II", buf, ih)
        off, out = ih + eo, []
        while off < ih + il:
            ln, kl, fl = struct.unpack_from("<HHI", buf, off + 8)
            name = None if fl & 2 else buf[off + 16:off + 16 + kl].hex()
            out.append((off, ln, fl, name))
            if fl & 2:
                break
            off += ln
        return out


def find_extend(v, name):
    """the record in use whose $FILE_NAME is NAME in $Extend (11)"""
    for n in range(16, 4096):
        rec = v.read(n)
        if rec[0:4] != b"FILE" or not rec[0x16] & 1:
            continue
        if any(p == 11 and nm == name for _, p, nm, _ in v.file_names(rec)):
            return n
    sys.exit("no %s" % name)


def new_leaf(v, runs, bs, unit, template, nvcn):
    """write an empty leaf at NVCN, the header of TEMPLATE (a block)"""
    nleaf = bytearray(template)
    struct.pack_into("<q", nleaf, 0x10, nvcn)
    eo, = struct.unpack_from("<I", nleaf, 0x18)
    struct.pack_into("<I", nleaf, 0x1C, eo + 16)
    nleaf[0x24] = 0                              # a leaf
    nleaf[0x18 + eo:] = bytes(len(nleaf) - 0x18 - eo)
    struct.pack_into("<QHHI", nleaf, 0x18 + eo, 0, 16, 0, 2)
    v.pwrite(v.offset(runs, nvcn * unit), refix(nleaf))


def new_node(v, runs, bs, unit, template, nvcn, child):
    """write a node at NVCN holding its end entry alone, pointing at
    CHILD, the header of TEMPLATE (a block)"""
    node = bytearray(template)
    struct.pack_into("<q", node, 0x10, nvcn)
    eo, = struct.unpack_from("<I", node, 0x18)
    struct.pack_into("<I", node, 0x1C, eo + 24)
    node[0x24] = 1                               # a node
    node[0x18 + eo:] = bytes(len(node) - 0x18 - eo)
    struct.pack_into("<QHHIq", node, 0x18 + eo, 0, 24, 0, 3, child)
    v.pwrite(v.offset(runs, nvcn * unit), refix(node))


def chain(v, rec, vroot, runs, bs, unit, free):
    """the chain mode: returns the blocks used (indexes in FREE) and the
    new leaf's VCN"""
    ih = vroot + 16
    pe = v.entries(rec, ih)
    assert pe[0][2] & 1, "the root is a leaf"
    e = pe[0]
    # X: the first entry of the first leaf below E; the blocks down
    # there give the chain's templates, one a level
    tmpl, vcn = [], struct.unpack_from("<q", rec, e[0] + e[1] - 8)[0]
    while True:
        at, blk = v.block_at(runs, bs, vcn)
        tmpl.append(blk)
        be = v.entries(blk, 0x18)
        if not be[0][2] & 1:
            break
        vcn = struct.unpack_from("<q", blk, be[0][0] + be[0][1] - 8)[0]
    assert len(tmpl) >= 2, "the leaves hang from the root"
    assert len(free) >= len(tmpl), "too few free blocks"
    assert len(be) >= 3, "the leaf has fewer than 2 entries"
    xo, xl, _, _ = be[0]
    x = bytearray(blk[xo:xo + xl])
    v.resize_node("block", blk, 0x18, xo, -xl)
    v.pwrite(at, refix(blk))
    vcns = [f * bs // unit for f in free[:len(tmpl)]]
    new_leaf(v, runs, bs, unit, tmpl[-1], vcns[-1])
    for lvl in range(len(tmpl) - 2, -1, -1):
        new_node(v, runs, bs, unit, tmpl[lvl], vcns[lvl], vcns[lvl + 1])
    v.resize_node("root", rec, ih, e[0], xl + 8)
    rec[e[0]:e[0] + xl + 8] = as_node(x, vcns[0])
    return free[:len(tmpl)], vcns[-1]


def as_node(x, vcn):
    """leaf entry X as a node entry pointing at VCN"""
    xl = len(x)
    ent = x + bytes(8)
    struct.pack_into("<HHI", ent, 8, xl + 8, struct.unpack_from("<H", x, 10)[0],
                     struct.unpack_from("<I", x, 12)[0] | 1)
    struct.pack_into("<q", ent, xl, vcn)
    return ent


def dump(v, runs, bs, buf, ih, where):
    """one line per entry in key order: the node (root or block VCN) and
    the name ("-": end entry)"""
    for off, ln, fl, name in v.entries(buf, ih):
        if fl & 1:
            vcn, = struct.unpack_from("<q", buf, off + ln - 8)
            dump(v, runs, bs, v.block_at(runs, bs, vcn)[1], 0x18, vcn)
        print(where, name or "-")


def ids(m):
    os.mkdir(m + "/o")
    for i in range(100, 260):
        p = "%s/o/f%d" % (m, i)
        with open(p, "w") as f:
            f.write(str(i))
        os.setxattr(p, "system.ntfs_object_id",
                    struct.pack("<I", i) + bytes(range(1, 13)))
    for i in range(140, 200):
        os.unlink("%s/o/f%d" % (m, i))


def main():
    global INDEX
    if sys.argv[1] == "ids":
        return ids(sys.argv[2])
    v = Volume(sys.argv[1])
    mode = sys.argv[3] if len(sys.argv) > 3 else "mid"
    if len(sys.argv) > 4:
        INDEX = sys.argv[4]
        v = View(v)
    d = (find_extend(v, sys.argv[2]) if sys.argv[2].startswith("$")
         else int(sys.argv[2]))
    h, rec, vroot, bs, runs = v.index(d)
    assert h == d, "the root is in an extension record"
    unit = v.cs if bs >= v.cs else 512
    if mode == "tree":
        return dump(v, runs, bs, rec, vroot + 16, "root")
    # a free block of the allocation
    a = attr_of(rec, AT_ALLOC)
    size, = struct.unpack_from("<Q", rec, a + 0x30)
    b = attr_of(rec, AT_BITMAP)
    bv = b + struct.unpack_from("<H", rec, b + 0x14)[0]
    free = [i for i in range(size // bs) if not rec[bv + i // 8] >> (i % 8) & 1]
    if not free:
        sys.exit("no free block in the allocation")
    nvcn = free[0] * bs // unit
    used = free[:1]
    if mode == "chain":
        used, nvcn = chain(v, rec, vroot, runs, bs, unit, free)
    elif mode == "root":
        # a small root (its end entry alone) made large, its end entry
        # pointing at the new leaf (the block's old header its template)
        pe = v.entries(rec, vroot + 16)
        assert len(pe) == 1 and not pe[0][2] & 1, "the root is not empty and small"
        at, tmpl = v.block_at(runs, bs, nvcn)
        assert tmpl[0:4] == b"INDX", "the free block was never an index block"
        new_leaf(v, runs, bs, unit, tmpl, nvcn)
        e = pe[0][0]
        v.resize_node("root", rec, vroot + 16, e + 16, 8)
        struct.pack_into("<HHI", rec, e + 8, 24, 0, 3)
        struct.pack_into("<q", rec, e + 16, nvcn)
        rec[vroot + 16 + 12] |= 1
    else:
        # the node P whose children are leaves, down the first entries
        pat, node, ih = None, rec, vroot + 16
        while True:
            pe = v.entries(node, ih)
            assert pe[0][2] & 1, "the root is a leaf"
            kvcn = struct.unpack_from("<q", node, pe[0][0] + pe[0][1] - 8)[0]
            at, leaf = v.block_at(runs, bs, kvcn)
            if not v.entries(leaf, 0x18)[0][2] & 1:
                break
            pat, node, ih = at, leaf, 0x18
        assert len(pe) >= 3, "the node above the leaves has fewer than 2 entries"
        e = pe[1] if mode == "mid" else pe[-1]
        kvcn = struct.unpack_from("<q", node, e[0] + e[1] - 8)[0]
        at, leaf = v.block_at(runs, bs, kvcn)
        le = v.entries(leaf, 0x18)
        assert len(le) >= 3, "the leaf has fewer than 2 entries"
        # mid: the leaf's first entry X goes up, before E, pointing at
        # the new leaf; end: its last entry X goes up before the end
        # entry E, pointing at the leaf, and E points at the new leaf
        xo, xl, xf, _ = le[0] if mode == "mid" else le[-2]
        x = bytearray(leaf[xo:xo + xl])
        v.resize_node("block", leaf, 0x18, xo, -xl)
        v.pwrite(at, refix(leaf))
        new_leaf(v, runs, bs, unit, leaf, nvcn)
        ent = as_node(x, nvcn if mode == "mid" else kvcn)
        v.resize_node("root" if pat is None else "block", node, ih, e[0], xl + 8)
        node[e[0]:e[0] + xl + 8] = ent
        if mode == "end":
            struct.pack_into("<q", node, e[0] + xl + 8 + e[1] - 8, nvcn)
        if pat is not None:
            v.pwrite(pat, refix(node))
    b = attr_of(rec, AT_BITMAP)
    bv = b + struct.unpack_from("<H", rec, b + 0x14)[0]
    for f in used:
        rec[bv + f // 8] |= 1 << (f % 8)
    v.write(d, rec)
    print(nvcn)


if __name__ == "__main__":
    main()
