"""Damage from devices, tools and hands in real use that no other kind
makes (kind `realdev`, case ids `v-BASE-SUB`, one case per subkind and
base).  Whole regions, not single blocks or fields:

  ffmft      an SSD returning an erased block: the 128 KiB (erase-block
             aligned) region holding the median user MFT record reads
             back as 0xff;
  ffindx     the same over big/'s middle INDX block;
  ffbitmap   the same over `$Bitmap`'s first cluster;
  swapmft    a USB bridge swapping 4 KiB sectors pairwise (8 KiB
             aligned) over 64 KiB of user MFT records;
  swapindx   the same over 64 KiB of big/'s INDX blocks;
  shift3s    a partition move to the right interrupted half-way: from
             the middle of the volume (1 MiB aligned) on, every byte is
             the one 3 sectors before it (the tool had copied the end
             down to there; the partition table still names the old
             start);
  shift1m    the same, 1 MiB further (a MiB-aligned move);
  vfat1m     `dd` of a FAT32 file system's first MiB over the volume's
             start (boot sector, and whatever of $MFT and $MFTMirr lies
             there), the backup boot sector intact;
  ext41m     the same with an ext4 file system's first MiB;
  fdisk      a DOS label written on the partition instead of the disk:
             sector 0 zeros but a disk id, one partition entry and 0x55aa;
  upcasezero `$UpCase`'s first cluster zeros (2,048 entries of a 4 KiB
             cluster);
  upcaseone  one `$UpCase` entry wrong ('a' maps to itself);
  attrdefzero `$AttrDef`'s first cluster zeros;
  voldirty   `$Volume`'s flags: dirty;
  volchkdsk  dirty and modified-by-chkdsk (0x8001), a half-done chkdsk;
  volver     `$Volume`'s version 9.9;
  quotaq     `$Extend/$Quota`'s `$Q` index emptied (its root's entries
             gone, the end entry kept);
  quotao     `$Quota`'s `$O` index emptied;
  reparse    `$Extend/$Reparse`'s `$R` index emptied (rich bases);
  objid      `$Extend/$ObjId`'s `$O` index emptied (rich bases; its
             entries in INDX blocks there: the first block zeros).

Not modelled: an erase block of an old generation (kind `stale`'s region
restore `o-BASE-gK` is one), a defragmenter interrupted (its states are
`$Bitmap` bits set for free clusters: targeted), `$MFT` grown under the
kernel driver and the power cut (kind `kpowercut`).  The reference is
the base: every file none of whose records and clusters the case changed
must survive."""
import os
import struct
import subprocess
import tempfile

import ntfsparse as P

SUBKINDS = ("ffmft", "ffindx", "ffbitmap", "swapmft", "swapindx", "shift3s", "shift1m",
            "vfat1m", "ext41m", "fdisk", "upcasezero", "upcaseone", "attrdefzero",
            "voldirty", "volchkdsk", "volver", "quotaq", "quotao", "reparse", "objid")
ERASE = 128 << 10


def case_ids(v, base):
    out = []
    for s in SUBKINDS:
        try:
            _target(v, s)
        except (KeyError, IndexError, ValueError):
            continue  # nothing to hit on this base
        out.append("v-%s-%s" % (base, s))
    return out


def _user_recs(v):
    return [at for n, at, _ in P.records(v.img, v.g) if n >= 24]


def _big_blocks(v):
    n = v.ino("big")
    rec = P.unfix(P.read_record(v.img, v.g, n)[1])
    for off, t, name, nr in P.attrs(rec):
        if t == 0xA0 and name == "$I30":
            return P.index_blocks(v.img, v.g, rec, off)
    raise KeyError("big has no INDX blocks")


def _data_lcn(v, n):
    rec = P.unfix(P.read_record(v.img, v.g, n)[1])
    for off, t, name, nr in P.attrs(rec):
        if t == 0x80 and name == "" and nr:
            return P.runlist(rec, off)[0][0]
    raise KeyError("record %d has no non-resident $DATA" % n)


def _index_root(v, recname, iname):
    """(record number, offset of the index header in the fixed-up record)
    of the $INDEX_ROOT INAME of the record named RECNAME, if it holds
    entries."""
    n = P.named_record(v.img, v.g, recname)
    rec = P.unfix(P.read_record(v.img, v.g, n)[1])
    for off, t, name, nr in P.attrs(rec):
        if t == 0x90 and name == iname:
            vo, _ = P.value(rec, off)
            ents = [e for e in P.index_entries(rec, vo + 0x10) if not e[4] & 2]
            if ents:
                return n, vo + 0x10
            for off2, t2, name2, nr2 in P.attrs(rec):
                if t2 == 0xA0 and name2 == iname and nr2:
                    blocks = P.index_blocks(v.img, v.g, rec, off2)
                    if blocks:
                        return blocks[0]  # the entries are in INDX blocks
            raise ValueError("%s:%s is empty" % (recname, iname))
    raise KeyError("%s has no %s" % (recname, iname))


def _target(v, sub):
    """What SUB hits on V (raises when the base has none)."""
    if sub in ("ffmft", "swapmft"):
        recs = sorted(_user_recs(v))
        return recs[len(recs) // 2]
    if sub in ("ffindx", "swapindx"):
        b = _big_blocks(v)
        return b[len(b) // 2] if sub == "ffindx" else b[0]
    if sub == "ffbitmap":
        return _data_lcn(v, 6) * v.g.cs
    if sub in ("upcasezero", "upcaseone"):
        return _data_lcn(v, 10) * v.g.cs
    if sub == "attrdefzero":
        return _data_lcn(v, 4) * v.g.cs
    if sub == "quotaq":
        return _index_root(v, "$Quota", "$Q")
    if sub == "quotao":
        return _index_root(v, "$Quota", "$O")
    if sub == "reparse":
        return _index_root(v, "$Reparse", "$R")
    if sub == "objid":
        return _index_root(v, "$ObjId", "$O")
    return 0


def _foreign(kind, size):
    """The first MiB of a file system of KIND made on a file of SIZE."""
    with tempfile.TemporaryDirectory(prefix="realdev-") as d:
        f = os.path.join(d, "fs")
        with open(f, "wb") as h:
            h.truncate(size)
        cmd = {"vfat": ["mkfs.vfat", "-F", "32", "-i", "1234abcd", f],
               "ext4": ["mke2fs", "-q", "-F", "-t", "ext4", "-U", "4a0c3c2e-0b4c-4c55-9f1f-2d3e4f5a6b7c",
                        "-E", "lazy_itable_init=0,lazy_journal_init=0,hash_seed=4a0c3c2e-0b4c-4c55-9f1f-2d3e4f5a6b7c", "-O", "^has_journal", f]}[kind]
        subprocess.run(cmd, check=True, capture_output=True,
                       env=dict(os.environ, E2FSPROGS_FAKE_TIME="1700000000", SOURCE_DATE_EPOCH="1700000000"))
        with open(f, "rb") as h:
            return h.read(1 << 20)


def _empty_root(v, n, hdr):
    """The index root at HDR of record N left with its end entry only."""
    def fn(rec):
        eofs, = struct.unpack_from("<I", rec, hdr)
        struct.pack_into("<QHHI", rec, hdr + eofs, 0, 16, 0, 2)  # the end entry
        struct.pack_into("<I", rec, hdr + 4, eofs + 16)           # entries' length
        rec[hdr + 12] = 0                                         # small index
    v.edit(n, fn)


def _volinfo(v, fn):
    def edit(rec):
        for off, t, name, nr in P.attrs(rec):
            if t == 0x70:
                vo, _ = P.value(rec, off)
                fn(rec, vo)
                return
        raise KeyError("$Volume has no $VOLUME_INFORMATION")
    v.edit(3, edit)


def apply(v, sub):
    """Damage V's image with SUB; return what was hit (a short text)."""
    img, g = v.img, v.g
    at = _target(v, sub)
    if sub.startswith("ff"):
        start = at // ERASE * ERASE
        end = min(start + ERASE, g.backup)
        img[start:end] = b"\xff" * (end - start)
        return "0xff@%d+%d" % (start, end - start)
    if sub.startswith("swap"):
        start = at // 8192 * 8192
        end = min(start + (64 << 10), g.backup // 8192 * 8192)
        for p in range(start, end, 8192):
            a, b = bytes(img[p:p + 4096]), bytes(img[p + 4096:p + 8192])
            img[p:p + 4096], img[p + 4096:p + 8192] = b, a
        return "swap4k@%d+%d" % (start, end - start)
    if sub.startswith("shift"):
        d = 1536 if sub == "shift3s" else 1 << 20
        size = len(img)
        m = size // 2 // (1 << 20) * (1 << 20)
        img[m + d:size] = bytes(img[m:size - d])
        return "shift%d@%d" % (d, m)
    if sub in ("vfat1m", "ext41m"):
        head = _foreign(sub[:4], len(img))
        img[:len(head)] = head
        return "%s@0+%d" % (sub[:4], len(head))
    if sub == "fdisk":
        s = bytearray(512)
        struct.pack_into("<I", s, 0x1B8, 0x5EEDF00D)
        # one primary partition, type 0x07, from sector 2048 on
        s[0x1BE:0x1CE] = bytes([0, 0x20, 0x21, 0, 0x07, 0xFE, 0xFF, 0xFF]) + struct.pack(
            "<II", 2048, max(g.sectors - 2048, 1))
        s[510:512] = b"\x55\xaa"
        img[:512] = s
        return "mbr@0"
    if sub == "upcasezero":
        img[at:at + g.cs] = bytes(g.cs)
        return "upcase@%d+%d" % (at, g.cs)
    if sub == "upcaseone":
        struct.pack_into("<H", img, at + 2 * 0x61, 0x61)
        return "upcase[a]@%d" % (at + 2 * 0x61)
    if sub == "attrdefzero":
        img[at:at + g.cs] = bytes(g.cs)
        return "attrdef@%d+%d" % (at, g.cs)
    if sub == "voldirty":
        _volinfo(v, lambda rec, vo: struct.pack_into("<H", rec, vo + 10,
                                                     struct.unpack_from("<H", rec, vo + 10)[0] | 1))
        return "volflags|1"
    if sub == "volchkdsk":
        _volinfo(v, lambda rec, vo: struct.pack_into("<H", rec, vo + 10,
                                                     struct.unpack_from("<H", rec, vo + 10)[0] | 0x8001))
        return "volflags|0x8001"
    if sub == "volver":
        _volinfo(v, lambda rec, vo: rec.__setitem__(slice(vo + 8, vo + 10), b"\x09\x09"))
        return "volver 9.9"
    if isinstance(at, int):
        # the entries are in INDX blocks: the first one trimmed (zeros)
        img[at:at + g.ibs] = bytes(g.ibs)
        return "zeroed INDX block @%d" % at
    n, hdr = at
    _empty_root(v, n, hdr)
    return "emptied root of record %d" % n


if __name__ == "__main__":
    # realdev.py IMG SUB [OUT]: damage a copy of IMG (in place without OUT)
    import sys
    import damages as D
    with open(sys.argv[1], "rb") as f:
        vol = D.Vol(bytearray(f.read()), {})
    print(apply(vol, sys.argv[2]))
    with open(sys.argv[3] if len(sys.argv) > 3 else sys.argv[1], "wb") as f:
        f.write(vol.img)
