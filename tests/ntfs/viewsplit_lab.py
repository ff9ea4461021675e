#!/usr/bin/env python3
"""A view index whose $INDEX_ALLOCATION and $BITMAP are both split over
extension records (named by an $ATTRIBUTE_LIST), and damage to its later
part, for tests/ntfs/viewsplit.bats.  The format is handled here from the
format documentation (ntfs_patch.py's record I/O), not libntfs.

  viewsplit_lab.py make IMG MKFS     populate through ntfs-3g: o/f000..
                                     each with a 16-byte object id, so
                                     that $ObjId:$O has several blocks,
                                     and a security descriptor of its own
                                     ($SII, $SDH); r/p000.. each with a
                                     reparse point ($R)
  viewsplit_lab.py split IMG         $O's allocation and bitmap moved out
                                     of $ObjId's record: extent 1 of each
                                     in one new extension record, extent 2
                                     in another (the bitmap made
                                     non-resident, two clusters); prints
                                     "RECORD EXT1 EXT2 BLOCKS"
  viewsplit_lab.py split3 IMG        the same in three extents: block 0 and
                                     the bitmap's first in one record,
                                     block 1 alone in a second, the rest
                                     and the bitmap's second in a third
  viewsplit_lab.py split3shared IMG  three extents, blocks 1 and 2.. both
                                     in the second record (with the
                                     bitmap's second extent)
  viewsplit_lab.py splitbits IMG     as split, the bitmap in three extents
                                     (a cluster each): the first with the
                                     allocation's first, the two later
                                     with its second
  viewsplit_lab.py splitbitslast IMG as splitbits, the bitmap's three
                                     extents all with the allocation's
                                     second (its first extent alone)
  viewsplit_lab.py quota IMG N       $Quota's $Q and $O grown by N owners
                                     (ids 0x101..): a root of one entry
                                     over two blocks each
  viewsplit_lab.py qkeys IMG         $Quota's views walked: "Q ID FLAGS
                                     THRESHOLD LIMIT SID", "O SID ID"
  viewsplit_lab.py layout IMG        "ALLOC-EXTENTS BITMAP-EXTENTS RECORDS"
                                     from $ObjId's list
  viewsplit_lab.py damage IMG CASE   key: an entry of the first block of
                                     the second allocation extent gets a
                                     key out of order; vcn: that block's
                                     VCN field wrong; bit: its bit in the
                                     index bitmap cleared
  split, layout and damage take "dir" last to work on the directory o/'s
  $I30 (its 200 names) instead of $O; "sii", "sdh", "r", "q" or "qo" for
  $Secure's $SII or $SDH, $Reparse's $R, $Quota's $Q or $O.  A list too long for its record is made
  non-resident (in free clusters), as Windows does.
  viewsplit_lab.py ids MNT           "NAME HEX" of each o/ file's
                                     system.ntfs_object_id (ntfs-3g reads
                                     the birth ids from $O's entry)
  viewsplit_lab.py sec MNT           "NAME HEX" of the system.ntfs_acl of
                                     every 7th o/ file (ntfs-3g finds it
                                     through $SII) and the reparse point
                                     of every 7th r/ file
"""
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "lab"))
import base as B  # noqa: E402
from crosslink_damage import encode  # noqa: E402
from ntfs_patch import Volume, attrs, refix, runs_of, unfix  # noqa: E402

FILES = 200
AT_SI, AT_LIST, AT_ALLOC, AT_BITMAP = 0x10, 0x20, 0xA0, 0xB0
END = 0xFFFFFFFF
NAME = "$O"
DIR = False                        # "dir" last: o/'s $I30 instead
# the other views a last argument names: (parent record, file name, index)
TARGETS = {"sii": (None, "$Secure", "$SII"), "sdh": (None, "$Secure", "$SDH"),
           "r": (11, "$Reparse", "$R"), "q": (11, "$Quota", "$Q"),
           "qo": (11, "$Quota", "$O")}
TARGET = None
SECURE = 9
MIDDLE = False                     # split3: a middle extent of its own
SHARED = False                     # split3shared: the middle extent in the
                                   # last extent's record
BITS3 = False                      # splitbits: the bitmap in three extents
BITSLAST = False                   # splitbitslast: all three in the record
                                   # of the allocation's second extent


def aligned(n):
    return (n + 7) & ~7


def make(img, mkfs):
    subprocess.run(["truncate", "-s", "0", img], check=True)
    subprocess.run(["truncate", "-s", "8M", img], check=True)
    subprocess.run([mkfs, "-q", "-F", "-c", "512", img], check=True,
                   stdout=subprocess.DEVNULL)
    m = img + ".mnt"
    if not B.mount(img, m):
        sys.exit("ntfs-3g cannot mount " + img)
    try:
        os.makedirs(m + "/o")
        for i in range(FILES):
            p = m + "/o/f%03d" % i
            with open(p, "wb") as f:
                f.write(b"%d\n" % i)
            oid = struct.pack("<IIQ", 0x9e3779b9 * (i + 1) & 0xffffffff, i, 0x0123456789abcdef)
            os.setxattr(p, "system.ntfs_object_id", oid)
            # a descriptor of its own ($Secure's $SII and $SDH of
            # several blocks each)
            os.setxattr(p, "system.ntfs_acl", B.security_descriptor(3000 + i, 0x1F01FF))
        # r/: 200 empty files with a reparse point each ($Reparse's $R
        # of several blocks)
        os.makedirs(m + "/r")
        for i in range(FILES):
            p = m + "/r/p%03d" % i
            open(p, "wb").close()
            os.setxattr(p, "system.ntfs_reparse_data",
                        struct.pack("<IHH", 0x8000000A, 4, 0) + struct.pack("<I", i))
    finally:
        B.umount(m)
        os.rmdir(m)


def ids(m):
    for n in sorted(os.listdir(m + "/o")):
        print(n, os.getxattr(m + "/o/" + n, "system.ntfs_object_id").hex())


def sec(m):
    """"NAME HEX" of the descriptor (system.ntfs_acl) of every 7th o/
    file and the reparse point of every 7th r/ file (ntfs-3g finds a
    descriptor through $SII)."""
    for n in sorted(os.listdir(m + "/o"))[::7]:
        print(n, os.getxattr(m + "/o/" + n, "system.ntfs_acl").hex())
    for n in sorted(os.listdir(m + "/r"))[::7]:
        print(n, os.getxattr(m + "/r/" + n, "system.ntfs_reparse_data",
                             follow_symlinks=False).hex())


def bitmap_of(v, recno):
    """(runs, bytes) of the $BITMAP of $MFT (RECNO 0) or $Bitmap (6)."""
    r = v.read(recno)
    off = [o for o, t, n in attrs(r) if t == (AT_BITMAP if recno == 0 else 0x80) and not n][0]
    runs = runs_of(r, off)
    size, = struct.unpack_from("<q", r, off + 0x30)
    return runs, bytearray(b"".join(v.pread(l * v.cs, n * v.cs) for l, n in runs)[:size])


def put_bitmap(v, runs, bits):
    pos = 0
    for l, n in runs:
        v.pwrite(l * v.cs, bytes(bits[pos:pos + n * v.cs]))
        pos += n * v.cs


def objid_record(v):
    """$ObjId's record: the one in use naming $Extend (11) as parent
    (with "dir" given: the directory o/, parent 5, its $I30)."""
    if DIR:
        return named_record(v, 5, "o")
    if TARGET:
        parent, name, _ = TARGETS[TARGET]
        return SECURE if parent is None else named_record(v, parent, name)
    return named_record(v, 11, "$ObjId")


def named_record(v, parent_no, name):
    runs, bits = bitmap_of(v, 0)
    for n in range(24, len(bits) * 8):
        if not bits[n // 8] >> (n % 8) & 1:
            continue
        try:
            r = v.read(n)
        except (AssertionError, IndexError):
            continue
        if r[:4] != b"FILE":
            continue
        for off, t, _ in attrs(r):
            if t == 0x30:
                vo, = struct.unpack_from("<H", r, off + 0x14)
                parent, = struct.unpack_from("<Q", r, off + vo)
                nl = r[off + vo + 0x40]
                nm = r[off + vo + 0x42:off + vo + 0x42 + 2 * nl].decode("utf-16-le")
                if parent & 0xFFFFFFFFFFFF == parent_no and nm == name:
                    return n
    sys.exit("no " + name)


def nonresident(t, name, lo, hi, runs, sizes, instance, flags=0, cu=0, csize=None):
    """CSIZE given (a sparse or compressed attribute, FLAGS, compression
    unit CU): the 0x48-byte header with the compressed size"""
    nm = name.encode("utf-16-le")
    ho = 0x40 if csize is None else 0x48
    mpo = aligned(ho + len(nm))
    mp = encode(runs)
    ln = aligned(mpo + len(mp))
    a = bytearray(ln)
    struct.pack_into("<IIBBHHH", a, 0, t, ln, 1, len(name), ho, flags, instance)
    struct.pack_into("<qqHB", a, 0x10, lo, hi, mpo, cu)
    struct.pack_into("<qqq", a, 0x28, *sizes)
    if csize is not None:
        struct.pack_into("<q", a, 0x40, csize)
    a[ho:ho + len(nm)] = nm
    a[mpo:mpo + len(mp)] = mp
    return bytes(a)


def list_entry(t, name, vcn, ref, instance):
    nm = name.encode("utf-16-le")
    ln = aligned(0x1A + len(nm))
    e = bytearray(ln)
    struct.pack_into("<IHBBqQH", e, 0, t, ln, len(name), 0x1A, vcn, ref, instance)
    e[0x1A:0x1A + len(nm)] = nm
    return bytes(e)


def ext_record(v, recno, base_ref, parts):
    """A fresh FILE record RECNO extending BASE_REF holding PARTS (each
    (attribute bytes)); instances 0.. in order."""
    old = v.pread(v.offset(v.mft_runs, recno * v.rs), v.rs)
    seq = struct.unpack_from("<H", old, 0x10)[0] if old[:4] == b"FILE" else 0
    seq = seq or 1
    usa_cnt = v.rs // 512 + 1
    first = aligned(0x30 + 2 * usa_cnt)
    body = b"".join(parts)
    r = bytearray(v.rs)
    r[0:4] = b"FILE"
    struct.pack_into("<HHQHHHHII", r, 4, 0x30, usa_cnt, 0, seq, 0, first, 1,
                     first + len(body) + 8, v.rs)
    struct.pack_into("<QHHI", r, 0x20, base_ref, len(parts), 0, recno)
    struct.pack_into("<H", r, 0x30, 1)
    r[first:first + len(body)] = body
    struct.pack_into("<II", r, first + len(body), END, 0)
    return r, seq


def cut_runs(runs, cut):
    """RUNS (clusters) cut at cluster CUT: (before, after)."""
    first, rest, pos = [], [], 0
    for l, n in runs:
        if pos + n <= cut:
            first.append((l, n))
        elif pos >= cut:
            rest.append((l, n))
        else:
            first.append((l, cut - pos))
            rest.append((None if l is None else l + cut - pos, n - (cut - pos)))
        pos += n
    return first, rest


def split(img):
    v = Volume(img)
    d = objid_record(v)
    rec = v.read(d)
    dseq, = struct.unpack_from("<H", rec, 0x10)
    base_ref = d | dseq << 48
    alloc = [o for o, t, n in attrs(rec) if t == AT_ALLOC and n == NAME]
    bmp = [o for o, t, n in attrs(rec) if t == AT_BITMAP and n == NAME]
    if not alloc or not bmp:
        sys.exit("$O has no allocation")
    ao, bo = alloc[0], bmp[0]
    if rec[bo + 8]:
        sys.exit("$O's bitmap already non-resident")
    aruns = runs_of(rec, ao)
    asizes = struct.unpack_from("<qqq", rec, ao + 0x28)
    nclus = sum(n for _, n in aruns)
    per = 4096 // v.cs
    if nclus < 2 * per:
        sys.exit("$O has one block only")
    cut = per                      # the second extent from block 1 on
    first, rest = cut_runs(aruns, cut)
    middle = []
    if MIDDLE:
        # three extents: block 0, block 1 (a record of its own), the rest
        if nclus < 3 * per:
            sys.exit("$O has two blocks only")
        middle, rest = cut_runs(rest, per)
    vo, = struct.unpack_from("<H", rec, bo + 0x14)
    vl, = struct.unpack_from("<I", rec, bo + 0x10)
    bits = bytes(rec[bo + vo:bo + vo + vl])
    # free clusters: two for the bitmap (its bytes over both), then
    # those a list too long for the record takes; all taken at the end
    cruns, cbits = bitmap_of(v, 6)
    nclusters = struct.unpack_from("<q", v.pread(0, 512), 0x28)[0] * 512 // v.cs
    nb = 3 if BITS3 else 2         # the bitmap's extents, a cluster each
    free = [c for c in range(nclusters - 1, 0, -1) if not cbits[c // 8] >> (c % 8) & 1][:nb + 6]
    taken = free[:nb]
    bsz = nb * v.cs
    # two free records from 24 on
    mruns, mbits = bitmap_of(v, 0)
    nrec = sum(n for _, n in v.mft_runs) * v.cs // v.rs
    nx = 3 if MIDDLE and not SHARED else 2
    x = [n for n in range(24, min(nrec, len(mbits) * 8)) if not mbits[n // 8] >> (n % 8) & 1][:nx]
    if len(x) < nx:
        sys.exit("no free records")
    a1 = nonresident(AT_ALLOC, NAME, 0, cut - 1, first, asizes, 0)
    b1 = nonresident(AT_BITMAP, NAME, 0, 0, [(free[0], 1)], (bsz, bsz, bsz), 1)
    last = cut + (per if MIDDLE else 0)
    ia = 1 if SHARED else 0        # the instances in the last record
    a2 = nonresident(AT_ALLOC, NAME, last, nclus - 1, rest, (0, 0, 0), ia)
    b2 = nonresident(AT_BITMAP, NAME, 1, 1, [(free[1], 1)], (0, 0, 0), ia + 1)
    b3 = nonresident(AT_BITMAP, NAME, 2, 2, [(free[2], 1)], (0, 0, 0), ia + 2)
    if BITSLAST:
        # a2 instance 0, then the bitmap's three extents 1, 2, 3
        b1 = nonresident(AT_BITMAP, NAME, 0, 0, [(free[0], 1)], (bsz, bsz, bsz), 1)
        b2 = nonresident(AT_BITMAP, NAME, 1, 1, [(free[1], 1)], (0, 0, 0), 2)
        b3 = nonresident(AT_BITMAP, NAME, 2, 2, [(free[2], 1)], (0, 0, 0), 3)
    r1, s1 = ext_record(v, x[0], base_ref, [a1] if BITSLAST else [a1, b1])
    if SHARED:
        am = nonresident(AT_ALLOC, NAME, cut, last - 1, middle, (0, 0, 0), 0)
        r2, s2 = ext_record(v, x[-1], base_ref, [am, a2, b2])
    else:
        r2, s2 = ext_record(v, x[-1], base_ref, [a2] + ([b1] if BITSLAST else []) + [b2] +
                            ([b3] if BITS3 else []))
    if MIDDLE and not SHARED:
        am = nonresident(AT_ALLOC, NAME, cut, last - 1, middle, (0, 0, 0), 0)
        rm, sm = ext_record(v, x[1], base_ref, [am])
    # the base: without the two, with a list after $STANDARD_INFORMATION
    # (a list it has already: its entries kept, but those of the two)
    entries = []
    kept = []
    old_list = None
    for off, t, n in attrs(rec):
        ln, = struct.unpack_from("<I", rec, off + 4)
        if off in (ao, bo):
            continue
        if t == AT_LIST:
            old_list = off
            continue
        kept.append((t, rec[off:off + ln]))
        entries.append((t, n, 0, base_ref, struct.unpack_from("<H", rec, off + 0x0E)[0]))
    if old_list is not None:
        entries = [e for e in list_entries(v, rec, old_list)
                   if e[3] & 0xFFFFFFFFFFFF != d or (e[0], e[1]) not in
                   ((AT_ALLOC, NAME), (AT_BITMAP, NAME))]
    bref = (x[-1] | s2 << 48, 1) if BITSLAST else (x[0] | s1 << 48, 1)
    bi = 1 if BITSLAST else 0      # the later bitmap extents' instances
    for t, vcn, ref, inst in ((AT_ALLOC, 0, x[0] | s1 << 48, 0), (AT_BITMAP, 0) + bref,
                              (AT_ALLOC, last, x[-1] | s2 << 48, ia),
                              (AT_BITMAP, 1, x[-1] | s2 << 48, ia + 1 + bi)):
        entries.append((t, NAME, vcn, ref, inst))
    if BITS3:
        entries.append((AT_BITMAP, NAME, 2, x[-1] | s2 << 48, ia + 2 + bi))
    if SHARED:
        entries.append((AT_ALLOC, NAME, cut, x[-1] | s2 << 48, 0))
    elif MIDDLE:
        entries.append((AT_ALLOC, NAME, cut, x[1] | sm << 48, 0))
    entries.sort(key=lambda e: (e[0], e[1], e[2]))
    value = b"".join(list_entry(*e) for e in entries)
    instance, = struct.unpack_from("<H", rec, 0x28)
    if old_list is not None:
        instance, = struct.unpack_from("<H", rec, old_list + 0x0E)
    al = bytearray(aligned(0x18 + len(value)))
    struct.pack_into("<IIBBHHHIHBB", al, 0, AT_LIST, len(al), 0, 0, 0x18, 0, instance,
                     len(value), 0x18, 0, 0)
    al[0x18:0x18 + len(value)] = value
    f0, = struct.unpack_from("<H", rec, 0x14)
    if f0 + sum(len(a) for _, a in kept) + len(al) + 8 > v.rs:
        # too long for the record: the list non-resident, in free
        # clusters of its own (as Windows makes a long list)
        k = (len(value) + v.cs - 1) // v.cs
        lruns = free[nb:nb + k]
        assert lruns == list(range(lruns[0], lruns[0] - k, -1))
        lruns = [(lruns[-1], k)]
        taken = free[:nb + k]
        v.pwrite(lruns[0][0] * v.cs, value + bytes(k * v.cs - len(value)))
        al = bytearray(nonresident(AT_LIST, "", 0, k - 1, lruns,
                                   (k * v.cs, len(value), len(value)), instance))
    out = b""
    for t, a in kept:
        out += bytes(a)
        if t == AT_SI:
            out += bytes(al)
    if f0 + len(out) + 8 > v.rs:
        sys.exit("the list does not fit")
    new = bytearray(rec)
    new[f0:] = bytes(v.rs - f0)
    new[f0:f0 + len(out)] = out
    struct.pack_into("<II", new, f0 + len(out), END, 0)
    struct.pack_into("<I", new, 0x18, f0 + len(out) + 8)
    if old_list is None:
        struct.pack_into("<H", new, 0x28, instance + 1)
    for c in taken:
        cbits[c // 8] |= 1 << (c % 8)
    if old_list is not None and rec[old_list + 8]:
        for l, n in runs_of(rec, old_list):   # the old list's clusters
            for c in range(l, l + n):
                cbits[c // 8] &= ~(1 << (c % 8))
    put_bitmap(v, cruns, cbits)
    v.pwrite(free[0] * v.cs, bits + bytes(v.cs - len(bits)))
    for c in free[1:nb]:
        v.pwrite(c * v.cs, bytes(v.cs))
    for n in x:
        mbits[n // 8] |= 1 << (n % 8)
    put_bitmap(v, mruns, mbits)
    v.write(x[0], r1)
    v.write(x[-1], r2)
    if MIDDLE and not SHARED:
        v.write(x[1], rm)
    v.write(d, new)
    print(d, *x, nclus // per)


def list_value(v, rec, lo):
    """The value of the list at LO (resident or not)."""
    if rec[lo + 8]:
        size, = struct.unpack_from("<q", rec, lo + 0x30)
        return b"".join(v.pread(l * v.cs, n * v.cs) for l, n in runs_of(rec, lo))[:size]
    vo, = struct.unpack_from("<H", rec, lo + 0x14)
    vl, = struct.unpack_from("<I", rec, lo + 0x10)
    return rec[lo + vo:lo + vo + vl]


def list_entries(v, rec, lo):
    """[(type, name, vcn, ref, instance)] of the list at LO."""
    lst, off, out = list_value(v, rec, lo), 0, []
    while off + 0x1A <= len(lst):
        t, ln, nl, no, vcn, ref, inst = struct.unpack_from("<IHBBqQH", lst, off)
        if ln < 0x1A:
            break
        out.append((t, lst[off + no:off + no + 2 * nl].decode("utf-16-le"), vcn, ref, inst))
        off += ln
    return out


def extents(v, d):
    """{type: [(vcn, record, runs)]} of $O, through $ObjId's list."""
    rec = v.read(d)
    lo = [o for o, t, _ in attrs(rec) if t == AT_LIST][0]
    lst, off, out = list_value(v, rec, lo), 0, {}
    while off + 0x1A <= len(lst):
        t, ln, nl, no, vcn, ref = struct.unpack_from("<IHBBqQ", lst, off)
        if ln < 0x1A:
            break
        if lst[off + no:off + no + 2 * nl].decode("utf-16-le") == NAME and t in (AT_ALLOC, AT_BITMAP):
            x = v.read(ref & 0xFFFFFFFFFFFF)
            for ao, at, an in attrs(x):
                if at == t and an == NAME and x[ao + 8] and struct.unpack_from("<q", x, ao + 0x10)[0] == vcn:
                    out.setdefault(t, []).append((vcn, ref & 0xFFFFFFFFFFFF, runs_of(x, ao)))
        off += ln
    return out


def layout(img):
    v = Volume(img)
    x = extents(v, objid_record(v))
    recs = {r for e in x.values() for _, r, _ in e}
    print(len(x.get(AT_ALLOC, [])), len(x.get(AT_BITMAP, [])), len(recs))


def damage(img, case):
    v = Volume(img)
    x = extents(v, objid_record(v))
    vcn, _, runs = sorted(x[AT_ALLOC])[1]
    block = vcn * v.cs // 4096
    if case == "bit":
        _, _, bruns = sorted(x[AT_BITMAP])[0]
        at = bruns[0][0] * v.cs + block // 8
        b = v.pread(at, 1)[0]
        v.pwrite(at, bytes([b & ~(1 << (block % 8))]))
        print(block)
        return
    at = runs[0][0] * v.cs          # the extent's first block (its run
    assert runs[0][1] * v.cs >= 4096  # holds it whole)
    blk = unfix(v.pread(at, 4096))
    assert blk[:4] == b"INDX", "no INDX block at VCN %d" % vcn
    if case == "vcn":
        struct.pack_into("<q", blk, 0x10, vcn + 1000)
    elif case == "key":
        eo, = struct.unpack_from("<I", blk, 0x18)
        e = 0x18 + eo
        ko = 0x10
        blk[e + ko:e + ko + 16] = b"\xff" * 16
    else:
        sys.exit("unknown case " + case)
    v.pwrite(at, refix(blk))
    print(block)


# $Quota's views grown (our own writer, from the format documentation):
# ntfs-3g keeps no quotas, so their entries are written here.
AT_ROOT = 0x90
BLOCK = 4096


def ie(key, data, vcn=None, last=False):
    """An index entry: KEY then DATA; VCN: a node entry's child."""
    klen = 0 if last else len(key)
    ln = aligned(0x10 + klen + len(data)) + (8 if vcn is not None else 0)
    e = bytearray(ln)
    doff = 0x10 + klen if data else 0
    struct.pack_into("<HHIHHH", e, 0, doff, len(data), 0, ln, klen,
                     (1 if vcn is not None else 0) | (2 if last else 0))
    e[0x10:0x10 + klen] = key
    e[doff:doff + len(data)] = data
    if vcn is not None:
        struct.pack_into("<q", e, ln - 8, vcn)
    return bytes(e)


def indx(v, vcn, entries):
    """An INDX block at VCN holding ENTRIES (leaf), fixups applied."""
    usa = BLOCK // 512 + 1
    eoff = aligned(0x28 + 2 * usa)
    body = b"".join(entries) + ie(b"", b"", last=True)
    b = bytearray(BLOCK)
    b[0:4] = b"INDX"
    struct.pack_into("<HHqq", b, 4, 0x28, usa, 0, vcn)
    struct.pack_into("<IIII", b, 0x18, eoff - 0x18, eoff - 0x18 + len(body), BLOCK - 0x18, 0)
    assert eoff + len(body) <= BLOCK, "block overflows"
    b[eoff:eoff + len(body)] = body
    struct.pack_into("<H", b, 0x28, 1)
    return refix(b)


def resident(t, name, value, instance, flags=0):
    nm = name.encode("utf-16-le")
    vo = aligned(0x18 + len(nm))
    ln = aligned(vo + len(value))
    a = bytearray(ln)
    struct.pack_into("<IIBBHHHIHBB", a, 0, t, ln, 0, len(name), 0x18, flags, instance,
                     len(value), vo, 0, 0)
    a[0x18:0x18 + len(nm)] = nm
    a[vo:vo + len(value)] = value
    return bytes(a)


def owner_sid(rid):
    return struct.pack("<BB6sIIIII", 1, 5, (5).to_bytes(6, "big"), 21, 1004336348,
                       1177238915, 3000, rid)


def quota(img, n):
    """$Quota's $Q and $O each of N more owners (ids 0x101..), a root
    of one entry over two blocks, in free clusters."""
    v = Volume(img)
    d = named_record(v, 11, "$Quota")
    rec = v.read(d)
    ents = {"$Q": [], "$O": []}
    for off, t, nm in attrs(rec):
        if t != AT_ROOT:
            continue
        vo, = struct.unpack_from("<H", rec, off + 0x14)
        val = rec[off + vo:]
        eo = 0x10 + struct.unpack_from("<I", val, 0x10)[0]
        while True:
            doff, dlen, _, ln, kl, fl = struct.unpack_from("<HHIHHH", val, eo)
            if fl & 2:
                break
            ents[nm].append((bytes(val[eo + 0x10:eo + 0x10 + kl]),
                             bytes(val[eo + doff:eo + doff + dlen])))
            eo += ln
    for i in range(n):
        oid, sid = 0x101 + i, owner_sid(4000 + i)
        ents["$Q"].append((struct.pack("<I", oid),
                           struct.pack("<IIqqqqq", 2, 0, 4096 * i, 0, -1, -1, 0) + sid))
        ents["$O"].append((sid, struct.pack("<I", oid)))
    ents["$Q"].sort(key=lambda e: struct.unpack("<I", e[0])[0])
    ents["$O"].sort(key=lambda e: e[0])
    cruns, cbits = bitmap_of(v, 6)
    nclusters = struct.unpack_from("<q", v.pread(0, 512), 0x28)[0] * 512 // v.cs
    free = [c for c in range(1, nclusters) if not cbits[c // 8] >> (c % 8) & 1]
    per = BLOCK // v.cs
    inst, = struct.unpack_from("<H", rec, 0x28)
    new = {}
    for nm, coll in (("$O", 0x11), ("$Q", 0x10)):
        e = ents[nm]
        mid = len(e) // 2
        # two blocks of consecutive free clusters
        run = next(c for c in free if all(c + k in free for k in range(2 * per)))
        free = [c for c in free if not run <= c < run + 2 * per]
        for c in range(run, run + 2 * per):
            cbits[c // 8] |= 1 << (c % 8)
        v.pwrite(run * v.cs, bytes(indx(v, 0, [ie(k, x) for k, x in e[:mid]])))
        v.pwrite((run + per) * v.cs, bytes(indx(v, per, [ie(k, x) for k, x in e[mid + 1:]])))
        body = ie(*e[mid], vcn=0) + ie(b"", b"", vcn=per, last=True)
        root = struct.pack("<IIIB3x", 0, coll, BLOCK, per) + \
            struct.pack("<IIII", 0x10, 0x10 + len(body), 0x10 + len(body), 1) + body
        new[(AT_ROOT, nm)] = resident(AT_ROOT, nm, root, 0)
        sz = 2 * BLOCK
        new[(AT_ALLOC, nm)] = nonresident(AT_ALLOC, nm, 0, 2 * per - 1, [(run, 2 * per)],
                                          (sz, sz, sz), 0)
        new[(AT_BITMAP, nm)] = resident(AT_BITMAP, nm, b"\x03" + bytes(7), 0)
    out = []
    for off, t, nm in attrs(rec):
        ln, = struct.unpack_from("<I", rec, off + 4)
        a = bytearray(new.pop((t, nm), None) or rec[off:off + ln])
        if t == AT_ROOT:
            struct.pack_into("<H", a, 0x0E, struct.unpack_from("<H", rec, off + 0x0E)[0])
        out.append((t, nm, a))
    for (t, nm), a in new.items():
        a = bytearray(a)
        struct.pack_into("<H", a, 0x0E, inst)
        inst += 1
        out.append((t, nm, a))
    out.sort(key=lambda x: (x[0], x[1]))
    body = b"".join(bytes(a) for _, _, a in out)
    f0, = struct.unpack_from("<H", rec, 0x14)
    assert f0 + len(body) + 8 <= v.rs, "$Quota's record overflows"
    r = bytearray(rec)
    r[f0:] = bytes(v.rs - f0)
    r[f0:f0 + len(body)] = body
    struct.pack_into("<II", r, f0 + len(body), END, 0)
    struct.pack_into("<I", r, 0x18, f0 + len(body) + 8)
    struct.pack_into("<H", r, 0x28, inst)
    r[0x16] |= 0  # flags stay
    put_bitmap(v, cruns, cbits)
    v.write(d, r)
    print(d, len(ents["$Q"]), len(ents["$O"]))


def view_entries(v, d, name):
    """[(key, data)] of view index NAME of file D, walked from its root
    through the blocks its allocation's extents map (any record)."""
    rec = v.read(d)
    recs = [rec]
    if any(t == AT_LIST for _, t, _ in attrs(rec)):
        lo = [o for o, t, _ in attrs(rec) if t == AT_LIST][0]
        for x in sorted({ref & 0xFFFFFFFFFFFF for _, nm, _, ref, _ in list_entries(v, rec, lo)
                         if nm == name} - {d}):
            recs.append(v.read(x))
    root, ext = None, []
    for r in recs:
        for off, t, nm in attrs(r):
            if nm != name:
                continue
            if t == AT_ROOT:
                vo, = struct.unpack_from("<H", r, off + 0x14)
                root = bytes(r[off + vo:off + vo + struct.unpack_from("<I", r, off + 0x10)[0]])
            elif t == AT_ALLOC and r[off + 8]:
                ext.append((struct.unpack_from("<q", r, off + 0x10)[0], runs_of(r, off)))
    clusters = [c for _, runs in sorted(ext) for l, n in runs for c in range(l, l + n)]
    out = []

    def node(buf, ih):
        eo = ih + struct.unpack_from("<I", buf, ih)[0]
        while True:
            doff, dlen, _, ln, kl, fl = struct.unpack_from("<HHIHHH", buf, eo)
            if fl & 1:
                vcn, = struct.unpack_from("<q", buf, eo + ln - 8)
                blk = b"".join(v.pread(c * v.cs, v.cs) for c in clusters[vcn:vcn + BLOCK // v.cs])
                node(unfix(blk), 0x18)
            if fl & 2:
                return
            out.append((bytes(buf[eo + 0x10:eo + 0x10 + kl]), bytes(buf[eo + doff:eo + doff + dlen])))
            eo += ln
    node(root, 0x10)
    return out


def qkeys(img):
    """$Quota's views: "Q ID FLAGS THRESHOLD LIMIT SID" and "O SID ID"."""
    v = Volume(img)
    d = named_record(v, 11, "$Quota")
    for k, x in view_entries(v, d, "$Q"):
        print("Q %d %x %d %d %s" % (struct.unpack("<I", k)[0], struct.unpack_from("<I", x, 4)[0],
                                    *struct.unpack_from("<qq", x, 24), x[48:].hex()))
    for k, x in view_entries(v, d, "$O"):
        print("O %s %d" % (k.hex(), struct.unpack("<I", x)[0]))


if __name__ == "__main__":
    cmd = sys.argv[1]
    if sys.argv[-1] == "dir":
        DIR, NAME = True, "$I30"
        sys.argv.pop()
    elif sys.argv[-1] in TARGETS:
        TARGET = sys.argv.pop()
        NAME = TARGETS[TARGET][2]
    if cmd == "make":
        make(sys.argv[2], sys.argv[3])
    elif cmd == "split":
        split(sys.argv[2])
    elif cmd == "qkeys":
        qkeys(sys.argv[2])
    elif cmd == "quota":
        quota(sys.argv[2], int(sys.argv[3]))
    elif cmd in ("split3", "split3shared"):
        MIDDLE = True
        SHARED = cmd == "split3shared"
        split(sys.argv[2])
    elif cmd in ("splitbits", "splitbitslast"):
        BITS3 = True
        BITSLAST = cmd == "splitbitslast"
        split(sys.argv[2])
    elif cmd == "layout":
        layout(sys.argv[2])
    elif cmd == "damage":
        damage(sys.argv[2], sys.argv[3])
    elif cmd == "ids":
        ids(sys.argv[2])
    elif cmd == "sec":
        sec(sys.argv[2])
    else:
        sys.exit(__doc__)
