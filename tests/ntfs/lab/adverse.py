"""Adverse writes: damage a disk leaves from writes the file system made
correctly, that the lab's other kinds do not make.  Every block written
is a valid block of the format; what goes wrong is which of its sectors
land, or where it lands.  Case ids `a-BASE-SUB-SEED`:

  tornrec   2-5 MFT records in use, each rewritten (a new version: its
            `$STANDARD_INFORMATION` times moved on, the update sequence
            number + 1) by one multi-sector write of which only a seeded,
            proper, non-empty subset of the 512-byte sectors reached the
            disk (a drive's volatile cache persists any subset of a write
            at a power cut), so the sectors of one record carry two
            different update sequence numbers;
  tornindx  1-3 INDX blocks of any directories, each rewritten without
            its first entry (a deleted name: the entries after it move
            down) and torn the same way: old and new sectors mixed, the
            entries cut across sector boundaries;
  misrec    a misdirected write: an MFT record in use written, valid and
            unchanged (its own record number in its header), into the
            slot of another record in use or a free one, or its neighbour;
  misindx   a misdirected INDX write: a valid INDX block of one directory
            written over an INDX block of another directory (or of the
            same one: two blocks then claim the same VCN).

The expectation is the base volume before the damage, as for the
targeted kind: a file none of whose records and clusters the case
changed must survive."""
import random
import struct

import ntfsparse as P

SUBKINDS = ("tornrec", "tornindx", "misrec", "misindx")
SECTOR = 512


def _user_records(v):
    return [n for n, at, rec in P.records(v.img, v.g) if n == 5 or n >= 16
            and not struct.unpack_from("<Q", rec, 0x20)[0]]


def _dirs_with_blocks(v):
    out = {}
    for n in _user_records(v):
        try:
            b = v.index_blocks(n)
        except (KeyError, IndexError, struct.error):
            continue
        if b:
            out[n] = b
    return out


def _torn(rnd, old, new):
    """OLD with a seeded proper non-empty subset of NEW's sectors."""
    ns = len(old) // SECTOR
    k = rnd.randrange(1, ns)
    landed = set(rnd.sample(range(ns), k))
    out = bytearray(old)
    for s in landed:
        out[s * SECTOR:(s + 1) * SECTOR] = new[s * SECTOR:(s + 1) * SECTOR]
    return out


def _next_usn(plain):
    ofs, = struct.unpack_from("<H", plain, 4)
    usn, = struct.unpack_from("<H", plain, ofs)
    struct.pack_into("<H", plain, ofs, usn % 0xFFFF + 1)


def tornrec(v, rnd):
    recs = _user_records(v)
    for n in rnd.sample(recs, min(len(recs), rnd.randint(2, 5))):
        at = v.g.rec_off(n)
        old = bytes(v.img[at:at + v.g.rs])
        plain = P.unfix(old)
        try:
            si = v.attr(n, 0x10)
            vo = si + struct.unpack_from("<H", plain, si + 0x14)[0]
            for t in range(4):  # creation, modification, MFT change, access
                o = vo + 8 * t
                old_t, = struct.unpack_from("<Q", plain, o)
                struct.pack_into("<Q", plain, o, old_t + 10_000_000 * (t + 1))
        except (KeyError, struct.error):
            pass
        _next_usn(plain)
        # the LSN (0x08) moves on with every logged write
        struct.pack_into("<Q", plain, 8, struct.unpack_from("<Q", plain, 8)[0] + 4096)
        v.img[at:at + v.g.rs] = _torn(rnd, old, P.refix(plain))


def tornindx(v, rnd):
    blocks = [b for bs in _dirs_with_blocks(v).values() for b in bs]
    ibs = v.g.ibs
    for at in rnd.sample(blocks, min(len(blocks), rnd.randint(1, 3))):
        old = bytes(v.img[at:at + ibs])
        plain = P.unfix(old)
        ents = list(P.index_entries(plain, 0x18))
        if len(ents) < 2:
            continue
        p0, _, ln, _, _ = ents[0]
        eofs, ilen, alen = struct.unpack_from("<III", plain, 0x18)
        end = 0x18 + ilen
        new = bytearray(plain)
        new[p0:end - ln] = plain[p0 + ln:end]
        new[end - ln:end] = bytes(ln)
        struct.pack_into("<I", new, 0x1C, ilen - ln)
        _next_usn(new)
        struct.pack_into("<Q", new, 8, struct.unpack_from("<Q", new, 8)[0] + 4096)
        v.img[at:at + ibs] = _torn(rnd, old, P.refix(new))


def misrec(v, rnd):
    recs = _user_records(v)
    src = rnd.choice([n for n in recs if n >= 16])
    how = rnd.random()
    if how < 0.4:
        dst = rnd.choice([n for n in recs if n >= 16 and n != src])
    elif how < 0.7:
        free = [n for n in range(24, v.g.nrecords) if n not in recs]
        dst = rnd.choice(free) if free else src + 1
    else:
        dst = src + rnd.choice((-1, 1)) if src > 24 else src + 1
    if v.g.rec_off(dst) is None:
        dst = src + 1
    a, b = v.g.rec_off(src), v.g.rec_off(dst)
    v.img[b:b + v.g.rs] = v.img[a:a + v.g.rs]


def misindx(v, rnd):
    dirs = _dirs_with_blocks(v)
    blocks = [(d, b) for d, bs in dirs.items() for b in bs]
    d1, x = rnd.choice(blocks)
    others = [(d, b) for d, b in blocks if d != d1]
    same = [(d, b) for d, b in blocks if d == d1 and b != x]
    if others and (rnd.random() < 0.6 or not same):
        d2, y = rnd.choice(others)
    elif same:
        d2, y = rnd.choice(same)
    else:
        return
    v.img[y:y + v.g.ibs] = v.img[x:x + v.g.ibs]


def case_ids(base, seed, count):
    """COUNT ids for BASE, round-robin over the subkinds."""
    return ["a-%s-%s-%d" % (base, SUBKINDS[i % len(SUBKINDS)], seed * 100000 + i)
            for i in range(count)]


def apply(v, rest):
    sub, seed = rest.rsplit("-", 1)
    globals()[sub](v, random.Random(seed + sub))
