"""Lost writes on a volume in use: a block the file system rewrote that
the disk never stored (a drive acknowledging from its cache, a write
that went elsewhere), so it reads back as an older version while
everything around it is newer.  The older versions come from a real
earlier state of the same volume: the aged base's `early.img`, the
volume after the first of its two mounts of use (base.age), the base
itself after the second.  A case `l-BASE-SEED` gives the base 1-3
blocks back as they were in `early.img`, of one class by the seed's
turn (several from any class one time in three, a cache losing what it
held):

  mft     an MFT record (a file's older incarnation: another sequence
          number, names that moved or were deleted, runs since freed,
          or a record free then and in use now);
  indx    an INDX block (entries of deleted files that point at records
          reused since, entries of new files missing);
  bitmap  a cluster of `$Bitmap` or of the `$MFT` bitmap (clusters and
          records in use now marked free, freed ones marked in use).

Only blocks that differ are taken.  Every fixup, magic and length of
such a block is valid: only the cross-references (sequence numbers,
the bitmaps against the records, an index against the records it names)
can tell.  The reference is the base (the newer volume): "nothing lost"
requires every file none of whose records and clusters holds a sector
given back."""
import random
import struct

import ntfsparse as P

CLASSES = ("mft", "indx", "bitmap")


def _data_runs(img, g, n, atype):
    rec = P.unfix(img[g.rec_off(n):g.rec_off(n) + g.rs])
    for off, t, name, nr in P.attrs(rec):
        if t == atype and name == "" and nr:
            return [r for r in P.runlist(rec, off) if r[0] is not None]
    return []


def blocks(early, final, g):
    """{class: [(offset, size), ...]}: the blocks of FINAL (the base)
    that EARLY holds in another version."""
    out = {c: [] for c in CLASSES}
    mft = set()
    for n in range(g.nrecords):
        at = g.rec_off(n)
        if at is None:
            continue
        mft.add(at // g.cs)
        if early[at:at + g.rs] != final[at:at + g.rs]:
            out["mft"].append((at, g.rs))
    for at in range(0, len(final) - g.ibs + 1, g.ibs):
        if at // g.cs in mft:
            continue
        if b"INDX" in (early[at:at + 4], final[at:at + 4]) and early[at:at + g.ibs] != final[at:at + g.ibs]:
            out["indx"].append((at, g.ibs))
    for n, t in ((6, 0x80), (0, 0xB0)):
        for lcn, ln in _data_runs(final, g, n, t):
            for c in range(lcn, lcn + ln):
                at = c * g.cs
                if early[at:at + g.cs] != final[at:at + g.cs]:
                    out["bitmap"].append((at, g.cs))
    return out


def _life(img, at):
    """(sequence number, in use) of the MFT record at AT."""
    seq, flags = struct.unpack_from("<HH", img, at + 0x10)
    return seq, flags & 1


def case_ids(base, seed, count):
    return ["l-%s-%d" % (base, seed * 100000 + i) for i in range(count)]


def apply(img, early, seed):
    """IMG (the base, bytearray) with 1-3 blocks from EARLY (case SEED)."""
    g = P.Geometry(img)
    rnd = random.Random("lost%d" % seed)
    pool = blocks(early, img, g)
    if rnd.random() < 1 / 3:
        full = [c for c in CLASSES if pool[c]]
        cs = rnd.sample(full, min(len(full), rnd.randint(2, 3)))
    else:
        cs = [CLASSES[seed % len(CLASSES)]]
    pick = []
    for c in cs:
        got = pool[c]
        if c == "mft" and rnd.random() < 0.5:
            # half the time a record that another incarnation of a file
            # held: its sequence number or in-use flag differs
            got = [b for b in got if _life(early, b[0]) != _life(img, b[0])] or got
        if got:
            pick.append(rnd.choice(got))
    for at, n in pick:
        img[at:at + n] = early[at:at + n]
    return ["%s@%d" % (next(c for c in CLASSES if (at, n) in pool[c]), at) for at, n in pick]
