"""Shapes that real Windows use leaves and no other kind makes (kind
`field`, case ids `f-BASE-SUB`, one case per subkind and base):

  badfree    three free clusters listed in `$BadClus:$Bad` and set in
             `$Bitmap`, as `chkdsk /r` or a full format leave a disk with
             remapped sectors (a volume that must stay clean);
  badbitmap  the same with their `$Bitmap` bits cleared (a bitmap
             rebuilt by a tool that ignores `$Bad`);
  badmirr    `$MFTMirr`'s cluster listed in `$Bad` (a bad sector under
             the mirror, a `chkdsk /r` interrupted before moving it);
  badmft     `$MFT`'s second cluster listed in `$Bad`;
  badsys     the root's first INDX cluster and `$LogFile`'s first one
             listed in `$Bad`;
  baduser    a data cluster of `frag/f1` listed in `$Bad` (the file still
             maps it: `chkdsk /r` interrupted before the copy);
  swapindx   two neighbouring entries of `big/`'s middle INDX block in
             the wrong order (a buggy driver's insert: out of collation
             order, every byte of each entry valid);
  swaproot   the same in the root's first INDX block;
  si48       up to 20 user records' `$STANDARD_INFORMATION` in the 48-byte
             form of NTFS 1.2 (no owner, security id, quota or USN), as
             files of an NT4 volume upgraded in place keep it (ntfs-3g
             writes that form on files it gives no security id: the
             others are shrunk, those of the rich bases' ACLs);
  ntfs30     `si48` on a `$Volume` of version 3.0 (Windows 2000).

`$Bad` is rewritten as holes around the listed clusters (its runlist
grows in place: the attribute is its record's last).  The reference is
the base: every file none of whose records and clusters the case changed
must survive.  Not modelled: bad clusters that read back as garbage (kind
`sectors`), a `$UsnJrnl` or a dirty `$LogFile` (ntfs-3g writes neither;
base `win4k` has a clean one)."""
import struct

import ntfsparse as P

SUBKINDS = ("badfree", "badbitmap", "badmirr", "badmft", "badsys", "baduser",
            "swapindx", "swaproot", "si48", "ntfs30")
BADCLUS, BITMAP, LOGFILE, ROOT, VOLUME = 8, 6, 2, 5, 3


def case_ids(v, base):
    out = []
    for s in SUBKINDS:
        try:
            _target(v, s)
        except (KeyError, IndexError, ValueError):
            continue  # nothing to hit on this base
        out.append("f-%s-%s" % (base, s))
    return out


def _runs(v, n, atype=0x80, aname=""):
    rec = P.unfix(P.read_record(v.img, v.g, n)[1])
    for off, t, name, nr in P.attrs(rec):
        if t == atype and name == aname and nr:
            return P.runlist(rec, off)
    raise KeyError("record %d has no non-resident 0x%x %s" % (n, atype, aname))


def _bit_at(v, lcn):
    """Byte offset in the image of LCN's byte of $Bitmap."""
    pos = 0
    for lcn0, ln in _runs(v, BITMAP):
        if lcn // 8 < pos + ln * v.g.cs:
            return lcn0 * v.g.cs + lcn // 8 - pos
        pos += ln * v.g.cs
    raise IndexError(lcn)


def _free(v, n):
    """N free clusters from the middle of the volume on."""
    out, c = [], v.g.clusters // 2
    while len(out) < n and c < v.g.clusters:
        if not v.img[_bit_at(v, c)] >> (c % 8) & 1:
            out.append(c)
        c += 7
    if len(out) < n:
        raise ValueError("no free clusters")
    return out


def _si_len(rec):
    off, t, _, _ = next(P.attrs(rec))
    return struct.unpack_from("<I", rec, off + 0x10)[0] if t == 0x10 else 0


def _block_lcn(v, n):
    return _runs(v, n, 0xA0, "$I30")[0][0]


def _target(v, sub):
    """The clusters SUB lists in $Bad, or what else it hits."""
    if sub in ("badfree", "badbitmap"):
        return _free(v, 3)
    if sub == "badmirr":
        return [v.g.mirr_lcn]
    if sub == "badmft":
        return [v.g.mft_runs[0][0] + 1]
    if sub == "badsys":
        return [_block_lcn(v, ROOT), _runs(v, LOGFILE)[0][0]]
    if sub == "baduser":
        lcn, ln = _runs(v, v.ino("frag/f1"))[0]
        return [lcn + ln // 2]
    if sub == "swapindx":
        b = v.index_blocks(v.ino("big"))
        return b[len(b) // 2]
    if sub == "swaproot":
        return v.index_blocks(ROOT)[0]
    if sub in ("si48", "ntfs30"):
        # ntfs-3g writes the 48-byte form already on the files it gives
        # no security id: only the others are shrunk
        recs = [n for n, _, rec in P.records(v.img, v.g)
                if n >= 24 and _si_len(rec) == 72 and
                all(p != 11 and not nm.startswith("$") for p, _, nm, _ in P.file_names(rec))]
        if sub == "si48" and not recs:
            raise ValueError("no user record with a 72-byte $STANDARD_INFORMATION")
        return recs[:20]
    raise KeyError(sub)


def _encode(runs):
    """Mapping pairs of RUNS [(lcn or None, length)]."""
    out, prev = bytearray(), 0
    for lcn, ln in runs:
        lb = (ln.bit_length() + 8) // 8
        if lcn is None:
            out += bytes([lb]) + ln.to_bytes(lb, "little")
            continue
        d, ob = lcn - prev, 1
        while not -(1 << (8 * ob - 1)) <= d < 1 << (8 * ob - 1):
            ob += 1
        out += bytes([ob << 4 | lb]) + ln.to_bytes(lb, "little") + d.to_bytes(ob, "little", signed=True)
        prev = lcn
    return out + b"\0"


def mark_bad(v, lcns, bitmap=True):
    """List clusters LCNS in $BadClus:$Bad (and set them in $Bitmap)."""
    def fn(rec):
        for off, t, name, nr in P.attrs(rec):
            if t == 0x80 and name == "$Bad" and nr:
                break
        else:
            raise KeyError("no $Bad")
        total = sum(ln for _, ln in P.runlist(rec, off))
        runs, pos = [], 0
        for c in sorted(set(lcns)):
            if c > pos:
                runs.append((None, c - pos))
            runs.append((c, 1))
            pos = c + 1
        if pos < total:
            runs.append((None, total - pos))
        mpo, = struct.unpack_from("<H", rec, off + 0x20)
        alen, used = struct.unpack_from("<I", rec, off + 4)[0], struct.unpack_from("<I", rec, 0x18)[0]
        if off + alen + 8 != used:
            raise ValueError("$Bad is not its record's last attribute")
        pairs = _encode(runs)
        nlen = (mpo + len(pairs) + 7) & ~7
        if off + nlen + 8 > len(rec):
            raise ValueError("$Bad's runlist does not fit")
        rec[off + mpo:off + max(nlen, alen)] = pairs + bytes(max(nlen, alen) - mpo - len(pairs))
        struct.pack_into("<I", rec, off + 4, nlen)
        struct.pack_into("<II", rec, off + nlen, 0xFFFFFFFF, 0)
        struct.pack_into("<I", rec, 0x18, off + nlen + 8)
    v.edit(BADCLUS, fn)
    for c in lcns:
        at = _bit_at(v, c)
        if bitmap:
            v.img[at] |= 1 << (c % 8)
        else:
            v.img[at] &= ~(1 << (c % 8)) & 0xFF


def _swap_at(blk, hdr):
    """Swap the two leaf entries in the middle of the node at HDR."""
    ents = [e for e in P.index_entries(blk, hdr) if not e[4] & 3]
    if len(ents) < 2:
        raise ValueError("no two leaf entries")
    i = len(ents) // 2 - 1
    a, b = ents[i], ents[i + 1]
    if a[0] + a[2] != b[0]:
        raise ValueError("entries not neighbours")
    ea, eb = bytes(blk[a[0]:a[0] + a[2]]), bytes(blk[b[0]:b[0] + b[2]])
    blk[a[0]:b[0] + b[2]] = eb + ea


def si48(v, recs):
    def fn(rec):
        off, t, _, _ = next(P.attrs(rec))
        alen, = struct.unpack_from("<I", rec, off + 4)
        vlen, = struct.unpack_from("<I", rec, off + 0x10)
        if t != 0x10 or vlen != 72:
            return
        used, = struct.unpack_from("<I", rec, 0x18)
        tail = bytes(rec[off + alen:used])
        rec[off + alen - 24:off + alen - 24 + len(tail)] = tail
        rec[used - 24:used] = bytes(24)
        struct.pack_into("<I", rec, off + 4, alen - 24)
        struct.pack_into("<I", rec, off + 0x10, 48)
        struct.pack_into("<I", rec, 0x18, used - 24)
    for n in recs:
        v.edit(n, fn)


def apply(v, sub):
    """Damage V's image with SUB; return what was hit (a short text)."""
    at = _target(v, sub)
    if sub.startswith("bad"):
        mark_bad(v, at, bitmap=sub != "badbitmap")
        return "$Bad lists %s" % ",".join(map(str, at))
    if sub.startswith("swap"):
        v.edit_block(at, lambda blk: _swap_at(blk, 0x18))
        return "entries swapped in INDX@%d" % at
    si48(v, at)
    if sub == "ntfs30":
        def ver(rec):
            for off, t, name, nr in P.attrs(rec):
                if t == 0x70:
                    vo, _ = P.value(rec, off)
                    rec[vo + 8:vo + 10] = b"\x03\x00"
        v.edit(VOLUME, ver)
        rat, rs = v.g.rec_off(VOLUME), v.g.rs
        mirr = v.g.mirr_lcn * v.g.cs + VOLUME * rs  # the mirror's copy too
        v.img[mirr:mirr + rs] = v.img[rat:rat + rs]
    return "48-byte $STANDARD_INFORMATION in records %s" % ",".join(map(str, at))


if __name__ == "__main__":
    # fielduse.py IMG SUB [OUT]: damage a copy of IMG (in place without OUT)
    # fielduse.py IMG bad LCN,... [OUT]: list clusters LCN... in $Bad
    import sys
    import damages as D
    with open(sys.argv[1], "rb") as f:
        vol = D.Vol(bytearray(f.read()), {})
    if sys.argv[2] == "bad":
        mark_bad(vol, [int(x) for x in sys.argv[3].split(",")])
        print("$Bad lists %s" % sys.argv[3])
        out = sys.argv[4] if len(sys.argv) > 4 else sys.argv[1]
    else:
        print(apply(vol, sys.argv[2]))
        out = sys.argv[3] if len(sys.argv) > 3 else sys.argv[1]
    with open(out, "wb") as f:
        f.write(vol.img)
