#!/usr/bin/env python3
"""hostile.py IMAGE SHAPE DIR [ARGS]: one hostile structure in an NTFS
volume, valid-looking metadata (fixups written) that a checker must walk
without hanging, recursing without bound or allocating without bound.
Independent of libntfs: built on tests/ntfs/ntfs_patch.py's parser.
DIR is the record number of a directory whose $I30 is a B+tree of depth
3 or more (bench/ntfs-lab hostile and tests/ntfs/hostile.bats make one
with 2,000 names); FILE a non-resident file; A, B two directories.

Shapes (B+tree):
  selfvcn DIR      a node's child VCN names the node's own block
  ancestor DIR     a grandchild's child VCN names its parent's block
  shared DIR       a node's first two entries name one child
  entlen0 DIR      an entry of a leaf block has length 0
  entlen8 DIR      an entry of a leaf block has length 8
  nolast DIR       a leaf block's end entry loses its last-entry flag
  allsame DIR      every entry of the tree names the first entry's record
  dupnames DIR     every key of the tree says the first key's name
Shapes (attribute lists; LIST: a record with an attribute list):
  alzero LIST      every entry of the list has length 0
  alpast LIST      the first entry's length points past the list's end
  extself LIST     LIST's first extension record's base reference names
                   that extension record itself
  extother LIST F  LIST's first extension record's base reference names
                   F, a record with no list
  twobase LIST L2  L2's list names LIST's first extension record wherever
                   it named its own first one: two bases claim one record
  listbase LIST    every entry of LIST's list names LIST itself
Shapes ($Secure, record 9; bench/ntfs-lab hostile gives it 100,000
descriptors, ntfs-3g -o permissions):
  siidup           the first leaf of $SII with three entries or more: its
                   second entry becomes a copy of its first (a duplicate key)
  siiorder         that leaf's second and third entries swap places
  sdhdup, sdhorder the same in $SDH
  sdsmany N [MIB]  $SDS written directly (seconds, not ntfs-3g's minutes)
                   with N more descriptors (each unique, hashed,
                   mirrored) after the volume's own, in one new run of
                   free clusters (at least MIB MiB; past the descriptors
                   left as they are), the old run freed; $SII and $SDH
                   left as they were (they miss the N: a checker
                   rebuilds them from $SDS)
  sdssize          $SDS's sizes say 2^40 bytes (its runs unchanged)
  sdssplit [TIB]   $SDS in two extents, each in a new extension record
                   named by a new $ATTRIBUTE_LIST (resident, after
                   $STANDARD_INFORMATION) in record 9; TIB=1: the first
                   extent's sizes say 2^40 bytes too
  datasplit FILE [K]  the same for FILE's unnamed $DATA, in K (1 or 2,
                   the default) extents (a sparse or compressed one
                   keeps its flags; a compressed one is cut between
                   compression units)
Shapes (directory chains; TOP..BOTTOM a chain of directories, each the
only child of the one above; bench/ntfs-lab hostile makes 10,000):
  idxanc D ANC     D's index entries name ANC, an ancestor, instead of
                   their child
  cycle TOP BOT    TOP leaves the root's index for BOT's: a loop of the
                   whole chain, cut off from the root
Shapes (records and runs):
  baseself FILE    FILE's base reference names FILE itself
  ploop A B        A's parent is B, B's parent is A (no path to root)
  bigsize FILE     FILE's $DATA sizes say 2^62 bytes
  sparse40 FILE    FILE's runlist gains a sparse run of 2^40 clusters
  mftsize          $MFT's $DATA sizes claim 2^32 records
  mftbitmap        every bit of $MFT's $BITMAP set
"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from ntfs_patch import Volume, attrs, runs_of  # noqa: E402

AT_DATA, AT_BITMAP = 0x80, 0xB0


def _nodes(vol, d):
    """The root and every block of D's tree: (kind, where, buf, ih, vcn,
    depth), parents before children (breadth first, each block once)."""
    h, rec, v, bs, runs = vol.index(d)
    out, seen = [("root", h, rec, v + 16, None, 0)], set()
    i = 0
    while i < len(out):
        _, _, buf, ih, _, dp = out[i]
        i += 1
        for off, ln, fl, _ in Volume.entries(buf, ih):
            if fl & 1:
                vcn, = struct.unpack_from("<q", buf, off + ln - 8)
                if vcn in seen:
                    continue
                seen.add(vcn)
                at, b = vol.block_at(runs, bs, vcn)
                out.append(("block", at, b, 0x18, vcn, dp + 1))
    return out


def _child_of(buf, ih, n=0):
    """offset of the child VCN of the Nth entry of a node with children"""
    ents = [e for e in Volume.entries(buf, ih) if e[2] & 1]
    off, ln, _, _ = ents[n]
    return off + ln - 8


def _with_children(nodes):
    return [n for n in nodes if n[0] == "block" and any(
        e[2] & 1 for e in Volume.entries(n[2], n[3]))]


def _leaf(nodes):
    return [n for n in nodes if n[0] == "block" and len(
        Volume.entries(n[2], n[3])) > 3 and not any(
        e[2] & 1 for e in Volume.entries(n[2], n[3]))][0]


def selfvcn(vol, d):
    kind, at, buf, ih, vcn, _ = _with_children(_nodes(vol, d))[0]
    struct.pack_into("<q", buf, _child_of(buf, ih), vcn)
    vol.store(d, kind, at, buf)


def ancestor(vol, d):
    nodes = _nodes(vol, d)
    parent = _with_children(nodes)[0]
    pbuf, pih = parent[2], parent[3]
    child_vcn, = struct.unpack_from("<q", pbuf, _child_of(pbuf, pih))
    for kind, at, buf, ih, vcn, _ in nodes:
        if vcn == child_vcn:
            if not any(e[2] & 1 for e in Volume.entries(buf, ih)):
                sys.exit("ancestor: the child is a leaf (tree too shallow)")
            struct.pack_into("<q", buf, _child_of(buf, ih), parent[4])
            vol.store(d, kind, at, buf)
            return


def shared(vol, d):
    kind, at, buf, ih, _, _ = [n for n in _nodes(vol, d) if sum(
        e[2] & 1 for e in Volume.entries(n[2], n[3])) >= 2][0]
    first, = struct.unpack_from("<q", buf, _child_of(buf, ih, 0))
    struct.pack_into("<q", buf, _child_of(buf, ih, 1), first)
    vol.store(d, kind, at, buf)


def _entlen(vol, d, ln):
    kind, at, buf, ih, _, _ = _leaf(_nodes(vol, d))
    off = Volume.entries(buf, ih)[1][0]
    struct.pack_into("<H", buf, off + 8, ln)
    vol.store(d, kind, at, buf)


def entlen0(vol, d):
    _entlen(vol, d, 0)


def entlen8(vol, d):
    _entlen(vol, d, 8)


def nolast(vol, d):
    kind, at, buf, ih, _, _ = _leaf(_nodes(vol, d))
    off, ln, fl, _ = Volume.entries(buf, ih)[-1]
    struct.pack_into("<I", buf, off + 12, fl & ~2)
    vol.store(d, kind, at, buf)


def _tree_entries(vol, d):
    for kind, at, buf, ih, _, _ in _nodes(vol, d):
        yield kind, at, buf, [e for e in Volume.entries(buf, ih) if not e[2] & 2]


def allsame(vol, d):
    ref = None
    for kind, at, buf, ents in _tree_entries(vol, d):
        for off, _, _, _ in ents:
            if ref is None:
                ref = buf[off:off + 8]
            buf[off:off + 8] = ref
        vol.store(d, kind, at, buf)


def dupnames(vol, d):
    name = None
    for kind, at, buf, ents in _tree_entries(vol, d):
        for off, _, _, _ in ents:
            n = buf[off + 16 + 0x40]
            key = buf[off + 16 + 0x42:off + 16 + 0x42 + 2 * n]
            if name is None:
                name = key
            if len(key) == len(name):
                buf[off + 16 + 0x42:off + 16 + 0x42 + 2 * n] = name
        vol.store(d, kind, at, buf)


def _list(vol, r):
    """(list bytes, store(list bytes)) of R's attribute list"""
    rec = vol.read(r)
    for off, t, _ in attrs(rec):
        if t != 0x20:
            continue
        if rec[off + 8]:
            ln, = struct.unpack_from("<Q", rec, off + 0x30)
            runs = runs_of(rec, off)
            lst = bytearray(b"".join(vol.pread(lcn * vol.cs, n * vol.cs)
                                     for lcn, n in runs)[:ln])

            def put(b):
                pos = 0
                for lcn, n in runs:
                    vol.pwrite(lcn * vol.cs, bytes(b[pos:pos + n * vol.cs]))
                    pos += n * vol.cs
            return lst, put
        v = off + struct.unpack_from("<H", rec, off + 0x14)[0]
        ln, = struct.unpack_from("<I", rec, off + 0x10)

        def put_res(b):
            rec[v:v + ln] = b
            vol.write(r, rec)
        return bytearray(rec[v:v + ln]), put_res
    sys.exit("no attribute list")


def alzero(vol, r):
    lst, put = _list(vol, r)
    p = 0
    while p + 26 <= len(lst):
        el, = struct.unpack_from("<H", lst, p + 4)
        struct.pack_into("<H", lst, p + 4, 0)
        p += el or 32
    put(lst)


def alpast(vol, r):
    lst, put = _list(vol, r)
    struct.pack_into("<H", lst, 4, (len(lst) + 8 + 7) & ~7)
    put(lst)


def extself(vol, r):
    ext = [h for h in vol.holders(r) if h != r][0]
    rec = vol.read(ext)
    struct.pack_into("<Q", rec, 0x20, ext | vol.seq(ext) << 48)
    vol.write(ext, rec)


def extother(vol, r, f):
    ext = [h for h in vol.holders(r) if h != r][0]
    rec = vol.read(ext)
    struct.pack_into("<Q", rec, 0x20, f | vol.seq(f) << 48)
    vol.write(ext, rec)


def _list_refs(vol, r, to, only=None):
    """every entry of R's list naming record ONLY (any if None) names TO
    (with its sequence number)"""
    lst, put = _list(vol, r)
    ref, p = to | vol.seq(to) << 48, 0
    while p + 26 <= len(lst):
        el, = struct.unpack_from("<H", lst, p + 4)
        cur = struct.unpack_from("<Q", lst, p + 16)[0] & ((1 << 48) - 1)
        if only is None or cur == only:
            struct.pack_into("<Q", lst, p + 16, ref)
        if el == 0:
            break
        p += el
    put(lst)


def twobase(vol, r, r2):
    ext = [h for h in vol.holders(r) if h != r][0]
    ext2 = [h for h in vol.holders(r2) if h != r2][0]
    _list_refs(vol, r2, ext, ext2)


def listbase(vol, r):
    _list_refs(vol, r, r)


def idxanc(vol, d, anc):
    h, rec, v, _, _ = vol.index(d)
    ref = anc | vol.seq(anc) << 48
    for off, _, fl, _ in Volume.entries(rec, v + 16):
        if not fl & 2:
            struct.pack_into("<Q", rec, off, ref)
    vol.write(h, rec)


def cycle(vol, top, bottom):
    name = next(vol.file_names(vol.read(top)))[2]
    vol.rmentry(5, name)
    vol.parent(top, bottom)
    vol.addentry(bottom, top)


def _view_entries(buf, ih):
    """(offset, length, flags) of a view index node's entries (no names)"""
    eo, il = struct.unpack_from("<II", buf, ih)
    off, out = ih + eo, []
    while off + 16 <= ih + il:
        ln, _, fl = struct.unpack_from("<HHI", buf, off + 8)
        out.append((off, ln, fl))
        if fl & 2 or ln < 16:
            break
        off += ln
    return out


def _view_leaf(vol, index):
    """(kind, where, buf, entries) of the first leaf of $Secure's INDEX
    with three entries or more, breadth first"""
    h, rec, v, bs, runs = vol.index(9, index)
    todo, seen = [("root", h, rec, v + 16)], set()
    while todo:
        kind, at, buf, ih = todo.pop(0)
        ents = _view_entries(buf, ih)
        kids = [e for e in ents if e[2] & 1]
        if not kids and len(ents) > 3:
            return kind, at, buf, ents
        for off, ln, _ in kids:
            vcn, = struct.unpack_from("<q", buf, off + ln - 8)
            if vcn not in seen:
                seen.add(vcn)
                at2, b = vol.block_at(runs, bs, vcn)
                todo.append(("block", at2, b, 0x18))
    sys.exit(index + ": no leaf of three entries")


def _view_edit(vol, index, swap):
    kind, at, buf, ents = _view_leaf(vol, index)
    (o0, l0, _), (o1, l1, _), (o2, l2, _) = ents[:3]
    assert l0 == l1 == l2, "entries of different lengths"
    if swap:
        buf[o1:o1 + l1], buf[o2:o2 + l2] = buf[o2:o2 + l2], buf[o1:o1 + l1]
    else:
        buf[o1:o1 + l1] = buf[o0:o0 + l0]
    vol.store(9, kind, at, buf)


def siidup(vol):
    _view_edit(vol, "$SII", False)


def siiorder(vol):
    _view_edit(vol, "$SII", True)


def sdhdup(vol):
    _view_edit(vol, "$SDH", False)


def sdhorder(vol):
    _view_edit(vol, "$SDH", True)


def _sid(rid):
    """S-1-5-21-1-2-3-RID"""
    return struct.pack("<BB6sIIIII", 1, 5, b"\0\0\0\0\0\5", 21, 1, 2, 3, rid)


def _sd(i):
    """a self-relative descriptor: owner user 1000+I, group 513, a DACL
    granting everyone all"""
    everyone = struct.pack("<BB6sI", 1, 1, b"\0\0\0\0\0\1", 0)
    ace = struct.pack("<BBHI", 0, 0, 8 + len(everyone), 0x1F01FF) + everyone
    acl = struct.pack("<BBHHH", 2, 0, 8 + len(ace), 1, 0) + ace
    own, grp = _sid(1000 + i), _sid(513)
    return struct.pack("<BBHIIII", 1, 0, 0x8004, 20, 20 + len(own), 0,
                       20 + len(own) + len(grp)) + own + grp + acl


def _sd_hash(b):
    h = 0
    for k in range(0, len(b) - 3, 4):
        h = (((h >> 29) | (h << 3)) + struct.unpack_from("<I", b, k)[0]) & 0xFFFFFFFF
    return h


def _bitmap_set(vol, lcn, n, val):
    rec = vol.read(6)
    for off, t, name in attrs(rec):
        if t == AT_DATA and not name:
            runs = runs_of(rec, off)
    first, last = lcn // 8, (lcn + n - 1) // 8
    at = vol.offset(runs, first)
    b = bytearray(vol.pread(at, last - first + 1))
    for c in range(lcn, lcn + n):
        if val:
            b[c // 8 - first] |= 1 << (c % 8)
        else:
            b[c // 8 - first] &= ~(1 << (c % 8)) & 0xFF
    vol.pwrite(at, bytes(b))
    return runs


def _free_run(vol, n):
    """the first run of N free clusters (by $Bitmap)"""
    rec = vol.read(6)
    for off, t, name in attrs(rec):
        if t == AT_DATA and not name:
            runs, size = runs_of(rec, off), struct.unpack_from("<Q", rec, off + 0x30)[0]
    bm = b"".join(vol.pread(lcn * vol.cs, ln * vol.cs) for lcn, ln in runs)[:size]
    boot = vol.pread(0, 512)
    total = struct.unpack_from("<Q", boot, 0x28)[0] * struct.unpack_from("<H", boot, 11)[0] // vol.cs
    run = 0
    for c in range(total):
        run = 0 if bm[c // 8] >> (c % 8) & 1 else run + 1
        if run == n:
            return c + 1 - n
    sys.exit("no %d free clusters" % n)


def sdsmany(vol, n, mib=0):
    """N more descriptors in $SDS: blocks of 256 KiB, each followed by
    its mirror; the volume's own entries kept at their offsets"""
    blk = 256 << 10
    rec = vol.read(9)
    for off, t, name in attrs(rec):
        if t == AT_DATA and name == "$SDS":
            sa = off
    old = runs_of(rec, sa)
    size, = struct.unpack_from("<Q", rec, sa + 0x30)
    data = bytearray(b"".join(vol.pread(lcn * vol.cs, ln * vol.cs) for lcn, ln in old)[:size])
    # the volume's own entries: the last one's id and end
    pos, last_id = 0, 0
    while pos + 20 <= min(len(data), blk):
        _, sid, o, ln = struct.unpack_from("<IIQI", data, pos)
        if ln < 20 or o != pos:
            break
        last_id, pos = max(last_id, sid), (pos + ln + 15) & ~15
    out = bytearray(data[:blk].ljust(blk, b"\0"))
    cur = bytearray(out)       # the block being filled
    base, blocks = 0, []
    for i in range(n):
        sd = _sd(i)
        ln = 20 + len(sd)
        if pos - base + ln > blk:
            blocks.append(cur)
            base += 2 * blk
            pos, cur = base, bytearray(blk)
        e = struct.pack("<IIQI", _sd_hash(sd), last_id + 1 + i, pos, ln) + sd
        cur[pos - base:pos - base + ln] = e
        pos = (pos + ln + 15) & ~15
    blocks.append(cur)
    body = b"".join(bytes(b) + bytes(b) for b in blocks)
    total = max(len(body), mib << 20)
    total = (total + 2 * blk - 1) // (2 * blk) * (2 * blk)
    ncl = total // vol.cs
    lcn = _free_run(vol, ncl)
    # past the descriptors: left as they are (a fresh volume's free
    # clusters, zero in its sparse image; the scan skips what is invalid)
    vol.pwrite(lcn * vol.cs, body)
    for l0, ln in old:
        _bitmap_set(vol, l0, ln, False)
    _bitmap_set(vol, lcn, ncl, True)
    # the mapping pairs: one run (lengths and offsets of 4 bytes)
    mp, = struct.unpack_from("<H", rec, sa + 0x20)
    alen, = struct.unpack_from("<I", rec, sa + 4)
    pairs = bytes([0x44]) + ncl.to_bytes(4, "little") + lcn.to_bytes(4, "little") + b"\0"
    room = alen - mp
    if len(pairs) > room:
        grow = (len(pairs) - room + 7) & ~7
        used, = struct.unpack_from("<I", rec, 0x18)
        rec[sa + alen + grow:used + grow] = rec[sa + alen:used]
        struct.pack_into("<I", rec, sa + 4, alen + grow)
        struct.pack_into("<I", rec, 0x18, used + grow)
        alen += grow
    rec[sa + mp:sa + alen] = pairs.ljust(alen - mp, b"\0")
    struct.pack_into("<qq", rec, sa + 0x10, 0, ncl - 1)
    struct.pack_into("<QQQ", rec, sa + 0x28, total, total, total)
    vol.write(9, rec)


def sdssize(vol):
    rec = vol.read(9)
    for off, t, name in attrs(rec):
        if t == AT_DATA and name == "$SDS":
            struct.pack_into("<QQQ", rec, off + 0x28, 1 << 40, 1 << 40, 1 << 40)
    vol.write(9, rec)


def sdssplit(vol, tib=0):
    _split(vol, 9, "$SDS", 2, tib)


def datasplit(vol, f, k=2):
    _split(vol, f, "", k)


def _split(vol, d, name, k, tib=0):
    """D's non-resident $DATA NAME moved out of D into K (1 or 2) extents,
    each in a new extension record, named by a new resident list"""
    from viewsplit_lab import (aligned, bitmap_of, cut_runs, ext_record,
                               list_entry, nonresident, put_bitmap)
    rec = vol.read(d)
    seq, = struct.unpack_from("<H", rec, 0x10)
    so = next(o for o, t, n in attrs(rec) if t == AT_DATA and n == name and rec[o + 8])
    if any(t == 0x20 for _, t, _ in attrs(rec)):
        sys.exit("a list already")
    runs = runs_of(rec, so)
    sizes = struct.unpack_from("<qqq", rec, so + 0x28)
    nclus = sum(n for _, n in runs)
    cut = nclus // 2 if k == 2 else nclus
    # a compressed one is cut between compression units
    if rec[so + 0x0C] & 0xFF and k == 2:
        cut -= cut % (1 << rec[so + 0x22])
    if not cut:
        sys.exit("too short to split")
    first, rest = cut_runs(runs, cut)
    if tib:
        sizes = (1 << 40,) * 3
    # K free records from 24 on, marked in use
    mruns, mbits = bitmap_of(vol, 0)
    nrec = sum(n for _, n in vol.mft_runs) * vol.cs // vol.rs
    x = [n for n in range(24, min(nrec, len(mbits) * 8)) if not mbits[n // 8] >> (n % 8) & 1][:k]
    if len(x) < k:
        sys.exit("no free records")
    base_ref = d | seq << 48
    # a sparse or compressed one keeps its flags, unit and compressed size
    flags, cu = struct.unpack_from("<HB", rec, so + 0x0C)[0], rec[so + 0x22]
    cz = {}
    if flags & 0x8001:
        cz = dict(flags=flags, cu=cu, csize=struct.unpack_from("<q", rec, so + 0x40)[0])
    xr = [ext_record(vol, x[0], base_ref, [nonresident(AT_DATA, name, 0, cut - 1, first, sizes, 0, **cz)])]
    if k == 2:
        if cz:
            cz["csize"] = 0
        xr.append(ext_record(vol, x[1], base_ref, [nonresident(AT_DATA, name, cut, nclus - 1, rest, (0, 0, 0), 0, **cz)]))
    kept, entries = [], []
    for off, t, n in attrs(rec):
        if off == so:
            continue
        ln, = struct.unpack_from("<I", rec, off + 4)
        kept.append((t, rec[off:off + ln]))
        entries.append((t, n, 0, base_ref, struct.unpack_from("<H", rec, off + 0x0E)[0]))
    entries += [(AT_DATA, name, (0, cut)[i], x[i] | xr[i][1] << 48, 0) for i in range(k)]
    entries.sort(key=lambda e: (e[0], e[1], e[2]))
    value = b"".join(list_entry(*e) for e in entries)
    instance, = struct.unpack_from("<H", rec, 0x28)
    al = bytearray(aligned(0x18 + len(value)))
    struct.pack_into("<IIBBHHHIHBB", al, 0, 0x20, len(al), 0, 0, 0x18, 0, instance,
                     len(value), 0x18, 0, 0)
    al[0x18:0x18 + len(value)] = value
    out = b"".join(bytes(a) + (bytes(al) if t == 0x10 else b"") for t, a in kept)
    f0, = struct.unpack_from("<H", rec, 0x14)
    if f0 + len(out) + 8 > vol.rs:
        sys.exit("the list does not fit")
    new = bytearray(rec)
    new[f0:] = bytes(vol.rs - f0)
    new[f0:f0 + len(out)] = out
    struct.pack_into("<II", new, f0 + len(out), 0xFFFFFFFF, 0)
    struct.pack_into("<I", new, 0x18, f0 + len(out) + 8)
    struct.pack_into("<H", new, 0x28, instance + 1)
    for n in x:
        mbits[n // 8] |= 1 << (n % 8)
    put_bitmap(vol, mruns, mbits)
    for i in range(k):
        vol.write(x[i], xr[i][0])
    vol.write(d, new)
    print(*x)


def baseself(vol, f):
    rec = vol.read(f)
    struct.pack_into("<Q", rec, 0x20, f | vol.seq(f) << 48)
    vol.write(f, rec)


def ploop(vol, a, b):
    vol.parent(a, b)
    vol.parent(b, a)


def _data(rec):
    for off, t, name in attrs(rec):
        if t == AT_DATA and not name and rec[off + 8]:
            return off
    sys.exit("no non-resident unnamed $DATA")


def bigsize(vol, f):
    rec = vol.read(f)
    off = _data(rec)
    struct.pack_into("<QQQ", rec, off + 0x28, 1 << 62, 1 << 62, 1 << 62)
    vol.write(f, rec)


def sparse40(vol, f):
    """one more run after the last: a sparse run of 2^40 clusters (the
    mapping pairs header 0x06: six length bytes, no offset), the last VCN
    and the sizes moved on; the attribute grows by 8 bytes if needed."""
    rec = vol.read(f)
    off = _data(rec)
    alen, = struct.unpack_from("<I", rec, off + 4)
    mp, = struct.unpack_from("<H", rec, off + 0x20)
    p = off + mp
    while rec[p]:
        h = rec[p]
        p += 1 + (h & 15) + (h >> 4)
    if p + 8 > off + alen:  # grow the attribute by 8 bytes
        used, = struct.unpack_from("<I", rec, 0x18)
        rec[off + alen + 8:used + 8] = rec[off + alen:used]
        rec[off + alen:off + alen + 8] = bytes(8)
        struct.pack_into("<I", rec, off + 4, alen + 8)
        struct.pack_into("<I", rec, 0x18, used + 8)
    rec[p:p + 7] = bytes([0x06]) + (1 << 40).to_bytes(6, "little")
    rec[p + 7] = 0
    last, = struct.unpack_from("<q", rec, off + 0x18)
    struct.pack_into("<q", rec, off + 0x18, last + (1 << 40))
    add = (1 << 40) * vol.cs
    for o in (0x28, 0x30):
        v, = struct.unpack_from("<Q", rec, off + o)
        struct.pack_into("<Q", rec, off + o, v + add)
    vol.write(f, rec)


def mftsize(vol):
    rec = vol.read(0)
    off = _data(rec)
    n = (1 << 32) * vol.rs
    struct.pack_into("<QQQ", rec, off + 0x28, n, n, n)
    vol.write(0, rec)


def mftbitmap(vol):
    rec = vol.read(0)
    for off, t, name in attrs(rec):
        if t == AT_BITMAP and not name:
            if rec[off + 8]:
                ln, = struct.unpack_from("<Q", rec, off + 0x30)
                pos = 0
                for lcn, n in runs_of(rec, off):
                    k = min(ln - pos, n * vol.cs)
                    if k > 0:
                        vol.pwrite(lcn * vol.cs, b"\xff" * k)
                    pos += n * vol.cs
            else:
                v = off + struct.unpack_from("<H", rec, off + 0x14)[0]
                ln, = struct.unpack_from("<I", rec, off + 0x10)
                rec[v:v + ln] = b"\xff" * ln
                vol.write(0, rec)
            return


SHAPES = ("selfvcn", "ancestor", "shared", "entlen0", "entlen8", "nolast",
          "allsame", "dupnames", "alzero", "alpast", "extself", "extother", "twobase", "listbase",
          "idxanc", "cycle", "siidup", "siiorder", "sdhdup", "sdhorder", "sdsmany", "sdssize",
          "sdssplit", "datasplit",
          "baseself", "ploop", "bigsize", "sparse40", "mftsize", "mftbitmap")


def main():
    vol = Volume(sys.argv[1])
    shape, args = sys.argv[2], [int(a) for a in sys.argv[3:]]
    if shape not in SHAPES:
        sys.exit("unknown shape " + shape)
    globals()[shape](vol, *args)


if __name__ == "__main__":
    main()
