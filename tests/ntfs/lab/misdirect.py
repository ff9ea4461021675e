"""Misdirected writes and cross-links with metadata.

Misdirected writes (kind `misdirect`, case ids `d-BASE-SUB-MODE-SEED`):
a disk, a controller or a driver puts a whole block, internally valid
(good fixups, its own magic, its own record number or VCN), at the wrong
address.  What was at that address is gone; the place the block was
meant for keeps what it held before.  Two modes:

  w   the copy landed at the wrong place and at the right one too
      (a write issued twice, once misaddressed): the right place is
      current;
  l   the copy landed at the wrong place only: the right place keeps its
      older version.  On a base with an earlier state (aged4k's
      `early.img`) that is the block's real earlier version (a record
      of another incarnation, an index without the names added since, a
      bitmap before the second mount); elsewhere an older version is
      made from the current one: an MFT record free (its file not yet
      created), an INDX block without its last entry, a data cluster of
      zeros, a bitmap cluster without its last bits set.

Subkinds (the block written, where it landed):
  rec       an MFT record in use over another record in use, a free
            one or its neighbour (the self-number at 0x2c, the base
            reference and the `$FILE_NAME` parents say another record);
  indx      an INDX block of one directory over a block of another, or
            of the same directory's other VCN;
  rec2indx  an MFT record over (the head of) an INDX block;
  indx2rec  an INDX block over the MFT records its size covers;
  data2rec  a file's data cluster over the cluster of MFT records;
  data2indx a file's data cluster over an INDX block;
  mftbmp    a cluster of `$MFT:$BITMAP` one cluster off;
  volbmp    a cluster of `$Bitmap` one cluster off.

Cross-links with metadata (kind `crossmeta`, case ids `j-BASE-SUB`): a
file's first run pointed into metadata: a directory's INDX block
(`xindx`), `$MFT`'s data past the system records (`xmft`), `$LogFile`
(`xlog`), `$Bitmap` (`xbitmap`); and two directories'
`$INDEX_ALLOCATION` sharing a cluster (`xdirs`: a small directory's
first run pointed at big/'s first INDX block).  The right answer keeps
the metadata and gives the file a copy or a hole.

The reference is the base, as for targeted damage: a file none of whose
records and clusters the case changed must survive."""
import random
import struct

import ntfsparse as P
from adverse import _dirs_with_blocks, _user_records  # the same walk as adverse writes

SUBKINDS = ("rec", "indx", "rec2indx", "indx2rec", "data2rec", "data2indx", "mftbmp", "volbmp")
MODES = ("w", "l")
CROSS = ("xindx", "xmft", "xlog", "xbitmap", "xdirs")


class _Ctx:
    def __init__(self, v, early, rnd, mode):
        self.v, self.g, self.img, self.early, self.rnd, self.mode = v, v.g, v.img, early, rnd, mode


def _data_clusters(v):
    """[(record, lcn)]: the first cluster of each user file's unnamed
    non-resident $DATA."""
    out = []
    for n, at, rec in P.records(v.img, v.g):
        if n < 24:
            continue
        for off, t, name, nr in P.attrs(rec):
            if t == 0x80 and name == "" and nr:
                runs = [r for r in P.runlist(rec, off) if r[0] is not None]
                if runs:
                    out.append((n, runs[0][0]))
    return out


def _older_made(c, at, n):
    """An older version of the block at AT (N bytes), made from it."""
    cur = bytes(c.img[at:at + n])
    if cur[:4] == b"FILE":
        plain = P.unfix(cur)
        flags, = struct.unpack_from("<H", plain, 0x16)
        struct.pack_into("<H", plain, 0x16, flags & ~1)
        seq, = struct.unpack_from("<H", plain, 0x10)
        struct.pack_into("<H", plain, 0x10, seq - 1 if seq > 1 else seq)
        return bytes(P.refix(plain))
    if cur[:4] == b"INDX":
        plain = P.unfix(cur)
        ents = list(P.index_entries(plain, 0x18))
        if len(ents) < 2:
            return cur
        p, _, ln, _, _ = ents[-2]          # the last entry before the end one
        eofs, ilen, alen = struct.unpack_from("<III", plain, 0x18)
        end = 0x18 + ilen
        new = bytearray(plain)
        new[p:end - ln] = plain[p + ln:end]
        new[end - ln:end] = bytes(ln)
        struct.pack_into("<I", new, 0x1C, ilen - ln)
        return bytes(P.refix(new))
    return None


def _older(c, at, n, bitmap=False):
    """The block at AT as the right place keeps it when the write went
    elsewhere: its earlier version (early.img when it differs there)."""
    if c.early is not None and c.early[at:at + n] != c.img[at:at + n]:
        return bytes(c.early[at:at + n])
    made = _older_made(c, at, n)
    if made is not None:
        return made
    cur = bytearray(c.img[at:at + n])
    if bitmap:
        # the last up to 16 bits set cleared: allocations made since
        k = 0
        for i in range(len(cur) * 8 - 1, -1, -1):
            if cur[i // 8] >> (i % 8) & 1:
                cur[i // 8] &= ~(1 << (i % 8)) & 0xFF
                k += 1
                if k == 16:
                    break
        return bytes(cur)
    return bytes(n)


def _misdirect(c, src, dst, n, bitmap=False):
    """The N-byte block at SRC written at DST; in mode l the place SRC
    keeps its older version."""
    blk = bytes(c.img[src:src + n])
    old = _older(c, src, n, bitmap) if c.mode == "l" else None
    c.img[dst:dst + n] = blk
    if old is not None:
        c.img[src:src + n] = old
    return "%d->%d" % (src, dst)


def _prefer_changed(c, cands, size):
    """In mode l on a base with an earlier state, the candidates whose
    block differs there (a real older version)."""
    if c.mode != "l" or c.early is None:
        return cands
    got = [x for x in cands if c.early[x:x + size(x)] != c.img[x:x + size(x)]]
    return got or cands


def rec(c):
    recs = [n for n in _user_records(c.v) if n >= 16]
    offs = _prefer_changed(c, [c.g.rec_off(n) for n in recs], lambda x: c.g.rs)
    a = c.rnd.choice(offs)
    src = next(n for n in recs if c.g.rec_off(n) == a)
    how = c.rnd.random()
    if how < 0.4:
        dst = c.rnd.choice([n for n in recs if n != src])
    elif how < 0.7:
        free = [n for n in range(24, c.g.nrecords) if n not in set(recs)]
        dst = c.rnd.choice(free) if free else src + 1
    else:
        dst = src + c.rnd.choice((-1, 1)) if src > 24 else src + 1
    if c.g.rec_off(dst) is None:
        dst = src + 1
    return _misdirect(c, a, c.g.rec_off(dst), c.g.rs)


def _blocks(c):
    return [(d, b) for d, bs in _dirs_with_blocks(c.v).items() for b in bs]


def indx(c):
    blocks = _blocks(c)
    srcs = _prefer_changed(c, [b for _, b in blocks], lambda x: c.g.ibs)
    x = c.rnd.choice(srcs)
    d1 = next(d for d, b in blocks if b == x)
    others = [b for d, b in blocks if d != d1]
    same = [b for d, b in blocks if d == d1 and b != x]
    if same and (c.rnd.random() < 0.4 or not others):
        y = c.rnd.choice(same)
    else:
        y = c.rnd.choice(others)
    return _misdirect(c, x, y, c.g.ibs)


def rec2indx(c):
    recs = [n for n in _user_records(c.v) if n >= 16]
    a = c.rnd.choice(_prefer_changed(c, [c.g.rec_off(n) for n in recs], lambda x: c.g.rs))
    y = c.rnd.choice([b for _, b in _blocks(c)])
    return _misdirect(c, a, y, c.g.rs)


def _rec_span(c, n):
    """The byte offset of records N.. covering N bytes contiguously, or
    None."""
    k = max(1, n // c.g.rs)
    recs = [r for r in _user_records(c.v) if r >= 24]
    c.rnd.shuffle(recs)
    for r in recs:
        r0 = r - r % k
        at = c.g.rec_off(r0)
        if r0 >= 16 and at is not None and at % min(n, c.g.cs) == 0 and \
                all(c.g.rec_off(r0 + i) == at + i * c.g.rs for i in range(k)):
            return at
    return None


def indx2rec(c):
    x = c.rnd.choice(_prefer_changed(c, [b for _, b in _blocks(c)], lambda x: c.g.ibs))
    at = _rec_span(c, c.g.ibs)
    if at is None:
        return "none"
    return _misdirect(c, x, at, c.g.ibs)


def _data_src(c):
    cands = [lcn * c.g.cs for _, lcn in _data_clusters(c.v)]
    return c.rnd.choice(_prefer_changed(c, cands, lambda x: c.g.cs))


def data2rec(c):
    src = _data_src(c)
    at = _rec_span(c, c.g.cs)
    if at is None:
        return "none"
    return _misdirect(c, src, at, c.g.cs)


def data2indx(c):
    src = _data_src(c)
    y = c.rnd.choice([b for _, b in _blocks(c)])
    return _misdirect(c, src, y, c.g.cs)


def _bitmap_clusters(c, n, atype):
    at, rec = c.v.rec(n)
    for off, t, name, nr in P.attrs(rec):
        if t == atype and name == "" and nr:
            return [x for lcn, ln in P.runlist(rec, off) if lcn is not None for x in range(lcn, lcn + ln)]
    return []


def _one_off(c, n, atype):
    cl = _bitmap_clusters(c, n, atype)
    if not cl:
        return "none"
    x = c.rnd.choice(_prefer_changed(c, [k * c.g.cs for k in cl], lambda x: c.g.cs)) // c.g.cs
    y = x + c.rnd.choice((-1, 1))
    if y < 1 or y >= c.g.clusters:
        y = x + 1
    return _misdirect(c, x * c.g.cs, y * c.g.cs, c.g.cs, bitmap=True)


def mftbmp(c):
    return _one_off(c, 0, 0xB0)


def volbmp(c):
    return _one_off(c, 6, 0x80)


def case_ids(base, seed, count):
    """COUNT ids for BASE, round-robin over the subkinds and modes."""
    return ["d-%s-%s-%s-%d" % (base, SUBKINDS[i % len(SUBKINDS)], MODES[i // len(SUBKINDS) % 2],
                               seed * 100000 + i) for i in range(count)]


def apply(v, early, rest):
    """Misdirected write REST ("SUB-MODE-SEED") on V (EARLY: the base's
    earlier state or None); returns what was written where."""
    sub, mode, seed = rest.split("-")
    c = _Ctx(v, early, random.Random("misdirect%s%s%s" % (sub, mode, seed)), mode)
    return "%s %s" % (sub, globals()[sub](c))


# --- cross-links with metadata --------------------------------------------

def cross_ids(base):
    return ["j-%s-%s" % (base, s) for s in CROSS]


def _point_first_run(v, n, atype, name, lcn):
    """File N's ATYPE NAME first run pointed at LCN (the next run's delta
    kept valid), as damages.crosslink does for two files."""
    at, rec = v.rec(n)
    off = v.attr(n, atype, name)
    p, lb, ob = P.runlist_fields(rec, off)[0]
    runs = P.runlist(rec, off)
    nb = max(ob, (lcn.bit_length() + 8) // 8)
    if nb != ob:
        raise ValueError("LCN field too small")
    rec[p + 1 + lb:p + 1 + lb + ob] = lcn.to_bytes(ob, "little", signed=True)
    if len(runs) > 1 and runs[1][0] is not None:
        p2, lb2, ob2 = P.runlist_fields(rec, off)[1]
        d = runs[1][0] - lcn
        rec[p2 + 1 + lb2:p2 + 1 + lb2 + ob2] = d.to_bytes(ob2, "little", signed=True)
    v.put_rec(n, rec)


def _first_lcn(v, n, atype, name=""):
    at, rec = v.rec(n)
    return next(r for r in P.runlist(rec, v.attr(n, atype, name)) if r[0] is not None)[0]


def apply_cross(v, sub):
    big = v.ino("big")
    f = v.ino("frag/f1")
    if sub == "xindx":
        lcn = v.index_blocks(big)[len(v.index_blocks(big)) // 2] // v.g.cs
    elif sub == "xmft":
        lcn = v.g.rec_off(40) // v.g.cs
    elif sub == "xlog":
        lcn = _first_lcn(v, 2, 0x80) + 2
    elif sub == "xbitmap":
        lcn = _first_lcn(v, 6, 0x80)
    else:
        d = next(n for n in _dirs_with_blocks(v) if n not in (big, 5))
        lcn = v.index_blocks(big)[0] // v.g.cs
        _point_first_run(v, d, 0xA0, "$I30", lcn)
        return "dir %d -> %d" % (d, lcn)
    _point_first_run(v, f, 0x80, "", lcn)
    return "file %d -> %d" % (f, lcn)
