#!/usr/bin/env python3
"""Volumes whose $MFT keeps its $DATA in several extents (record 0's
$ATTRIBUTE_LIST names extension records), made stale the way a lost write
or an old copy written back leaves them, for tests/ntfs/mftlist.bats.  The
format is read with the lab's own parser (tests/ntfs/lab/ntfsparse.py,
through splitidx_lab.py), not libntfs.

  mftlist_lab.py make IMG MKFS N      splitidx_lab.py's make-mft volume;
                                      the records holding $MFT's extents
                                      saved to IMG.old, then N more files
                                      written through ntfs-3g (the MFT
                                      grows past what the saved records map)
  mftlist_lab.py make-moved IMG MKFS N
                                      40 files, record 0 saved to IMG.old,
                                      the clusters after $MFT's last run
                                      held in $Bitmap while N more files
                                      are written (the MFT's next extent
                                      goes elsewhere), then let go
  mftlist_lab.py twin IMG             a copy of the first cluster of $MFT's
                                      last run in a free cluster, marked in
                                      use in $Bitmap (two candidates)
  mftlist_lab.py logtwin IMG          that copy inside $LogFile's data
                                      instead (a FILE record in a file's
                                      clusters, as an image kept on the
                                      volume has them); prints both
  mftlist_lab.py ghost IMG            record 0 as it is now copied into a
                                      free record of the first run, not in
                                      use (a deleted file whose runs name
                                      the clusters the MFT grew into)
  mftlist_lab.py root-blocksize IMG   the root directory's $INDEX_ROOT
                                      block size + 1 (its index rebuilt;
                                      prints where $MFT's $FILE_NAME is:
                                      "RECORD BASE")
  mftlist_lab.py bits2 IMG            the $MFT bitmap's bits of the two
                                      records past its allocation set (in
                                      the bitmap's allocation)
  mftlist_lab.py make-reparse IMG MKFS N
                                      N files with a reparse point each
                                      (LX_SYMLINK, through ntfs-3g's
                                      system.ntfs_reparse_data): a large
                                      $Extend/$Reparse:$R
  mftlist_lab.py reparse-manifest MNT sha256 of every file's reparse data
  mftlist_lab.py r-shape IMG          "BLOCKS LEVELS" of $R
  mftlist_lab.py r-sorted IMG         "N sorted" when $R's N keys are in
                                      key order in an in-order walk
  mftlist_lab.py r-damage IMG CASE    an INDX leaf of $R: magic (bad
                                      magic) or entry (an entry's file
                                      reference made record 5's); key
                                      order: swap (a leaf's first two
                                      keys exchanged) or sep (a node
                                      block's first separator exchanged
                                      with the last key of its leaf)
  mftlist_lab.py info IMG             "EXTENTS RECORDS LASTREC": records the
                                      extents map, the highest file record
  mftlist_lab.py stale IMG CASE       write back a saved record: CASE ext,
                                      the one holding the last extent;
                                      base, record 0 (and its $MFTMirr
                                      copy); base0, record 0 alone (its
                                      mirror copy newer); base0bits, that and
                                      the $MFT bitmap's bits past record 0's
                                      runs cleared; prints its number
"""
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import splitidx_lab as S  # noqa: E402
import base as B  # noqa: E402
import ntfsparse as P  # noqa: E402


def make(img, mkfs, n):
    S.make_mft(img, mkfs)
    v = S.Vol(img)
    x = S.mft_extents(v)
    if len(x) < 2:
        sys.exit("one extent only")
    keep = {}
    for rec in {0, x[-1][1]}:
        at = v.g.rec_off(rec)
        keep[rec] = bytes(v.img[at:at + v.g.rs]).hex()
    with open(img + ".old", "w") as f:
        json.dump({"last": x[-1][1], "recs": keep}, f)
    m = img + ".mnt"
    if not B.mount(img, m):
        sys.exit("ntfs-3g cannot mount " + img)
    try:
        os.makedirs(m + "/new")
        for i in range(n):
            with open(m + "/new/g%04d" % i, "wb") as f:
                f.write(b"new %d\n" % i)
    finally:
        B.umount(m)
        os.rmdir(m)


def populate(img, d, n, text):
    m = img + ".mnt"
    if not B.mount(img, m):
        sys.exit("ntfs-3g cannot mount " + img)
    try:
        os.makedirs(m + "/" + d)
        for i in range(n):
            with open(m + "/%s/g%04d" % (d, i), "wb") as f:
                f.write(text % i)
    finally:
        B.umount(m)
        os.rmdir(m)


def make_moved(img, mkfs, n, held=256):
    import subprocess
    subprocess.run(["truncate", "-s", "0", img], check=True)
    subprocess.run(["truncate", "-s", "32M", img], check=True)
    subprocess.run([mkfs, "-q", "-F", img], check=True, stdout=subprocess.DEVNULL)
    populate(img, "a", 40, b"file %d\n")
    v = S.Vol(img)
    at = v.g.rec_off(0)
    with open(img + ".old", "w") as f:
        json.dump({"last": 0, "recs": {"0": bytes(v.img[at:at + v.g.rs]).hex()}}, f)
    lcn, ln = v.g.mft_runs[-1]
    marked = []
    for c in range(lcn + ln, lcn + ln + held):
        byte, bit = v.bit_offset(c)
        if not v.img[byte] & bit:
            v.img[byte] |= bit
            marked.append(c)
    v.save()
    populate(img, "new", n, b"new %d\n")
    v = S.Vol(img)
    for c in marked:
        byte, bit = v.bit_offset(c)
        v.img[byte] &= ~bit
    v.save()


def twin(img):
    v = S.Vol(img)
    lcn, _ = v.g.mft_runs[-1]
    for c in range(v.g.clusters - 1, 0, -1):
        byte, bit = v.bit_offset(c)
        if not v.img[byte] & bit:
            break
    v.img[byte] |= bit
    v.img[c * v.g.cs:(c + 1) * v.g.cs] = v.img[lcn * v.g.cs:(lcn + 1) * v.g.cs]
    v.save()
    print(lcn, c)


def data_runs(v, n):
    rec = v.rec(n)
    for off, t, name, nr in P.attrs(rec):
        if t == 0x80 and name == "" and nr:
            return P.runlist(rec, off)
    sys.exit("record %d: no non-resident $DATA" % n)


def logtwin(img):
    v = S.Vol(img)
    lcn, _ = v.g.mft_runs[-1]
    l, ln = data_runs(v, 2)[0]
    c = l + ln // 2
    v.img[c * v.g.cs:(c + 1) * v.g.cs] = v.img[lcn * v.g.cs:(lcn + 1) * v.g.cs]
    v.save()
    print(lcn, c)


def ghost(img):
    v = S.Vol(img)
    first = v.g.mft_runs[0][1] * v.g.cs // v.g.rs
    raw = bytes(v.img[v.g.rec_off(0):v.g.rec_off(0) + v.g.rs])
    for n in range(first - 1, 23, -1):
        at = v.g.rec_off(n)
        flags, = struct.unpack_from("<H", v.img, at + 0x16)
        if v.img[at:at + 4] in (b"FILE", b"\0\0\0\0") and not flags & 1:
            v.img[at:at + v.g.rs] = raw
            struct.pack_into("<H", v.img, at + 0x16, flags & ~1 & 0xffff)
            struct.pack_into("<I", v.img, at + 0x2c, n)
            v.save()
            print(n)
            return
    sys.exit("no free record in the first run")


def bits2(img):
    v = S.Vol(img)
    top = sum(ln for _, ln in v.g.mft_runs) * v.g.cs // v.g.rs
    rec = v.rec(0)
    for off, t, name, nr in P.attrs(rec):
        if t == 0xb0 and name == "" and nr:
            runs = P.runlist(rec, off)
            break
    else:
        sys.exit("no non-resident $MFT bitmap")
    pos = 0
    for bit in (top, top + 1):
        byte, pos = bit // 8, 0
        for l, ln in runs:
            if byte < pos + ln * v.g.cs:
                v.img[l * v.g.cs + byte - pos] |= 1 << (bit % 8)
                break
            pos += ln * v.g.cs
        else:
            sys.exit("bit %d past the bitmap's allocation" % bit)
    v.save()
    print(top)


def make_reparse(img, mkfs, n):
    import subprocess
    subprocess.run(["truncate", "-s", "0", img], check=True)
    subprocess.run(["truncate", "-s", "32M", img], check=True)
    subprocess.run([mkfs, "-q", "-F", img], check=True, stdout=subprocess.DEVNULL)
    m = img + ".mnt"
    if not B.mount(img, m):
        sys.exit("ntfs-3g cannot mount " + img)
    try:
        os.makedirs(m + "/r")
        for i in range(n):
            p = m + "/r/s%04d" % i
            open(p, "w").close()
            body = struct.pack("<I", 2) + b"target%d" % i
            os.setxattr(p, "system.ntfs_reparse_data",
                        struct.pack("<IHH", 0xA000001D, len(body), 0) + body)
    finally:
        B.umount(m)
        os.rmdir(m)


def reparse_manifest(mnt):
    import hashlib
    h = hashlib.sha256()
    n = 0
    for name in sorted(os.listdir(mnt + "/r")):
        p = mnt + "/r/" + name
        h.update(name.encode() + os.getxattr(p, "system.ntfs_reparse_data",
                                             follow_symlinks=False) +
                 os.readlink(p).encode())
        n += 1
    print(n, h.hexdigest())


def r_index(v):
    """$Reparse's record, $R's runs and block size."""
    for n, at, rec in P.records(v.img, v.g):
        fn = P.file_names(rec)
        if not fn or fn[0][2] != "$Reparse":
            continue
        runs, bs = None, None
        for off, t, name, nr in P.attrs(rec):
            if t == 0xA0 and name == "$R" and nr:
                runs = P.runlist(rec, off)
            if t == 0x90 and name == "$R":
                vo, _ = P.value(rec, off)
                bs, = struct.unpack_from("<I", rec, vo + 8)
        return rec, runs, bs
    sys.exit("no $Reparse")


def r_blocks(v):
    _, runs, bs = r_index(v)
    out = []
    for lcn, ln in runs:
        for k in range(ln * v.g.cs // bs):
            at = lcn * v.g.cs + k * bs
            if bytes(v.img[at:at + 4]) == b"INDX":
                out.append(at)
    return out, bs


def r_shape(img):
    v = S.Vol(img)
    blocks, bs = r_blocks(v)
    # a block whose entries point to blocks (a node below the root)
    nodes = sum(1 for at in blocks if P.unfix(v.img[at:at + bs])[0x18 + 0x0C] & 1)
    print(len(blocks), 3 if nodes else 2)


def r_entries(b):
    """(offset, flags) of a block's entries, the end entry last."""
    p = 0x18 + struct.unpack_from("<I", b, 0x18)[0]
    out = []
    while True:
        elen, _, fl = struct.unpack_from("<HHH", b, p + 8)
        out.append((p, fl, elen))
        if fl & 2:
            return out
        p += elen


def r_swap_keys(b, p, c, q):
    """Exchange the 12-byte keys of the entries at P (in B) and Q (in C)."""
    kp, kq = bytes(b[p + 16:p + 28]), bytes(c[q + 16:q + 28])
    b[p + 16:p + 28] = kq
    c[q + 16:q + 28] = kp


def r_order(v, case, blocks, bs):
    """swap: a leaf's first two keys exchanged; sep: the first separator
    of a node block exchanged with the last key of the leaf it points to
    (key order broken, the set of keys unchanged)."""
    leaf = lambda at: not P.unfix(v.img[at:at + bs])[0x18 + 0x0C] & 1  # noqa: E731
    if case == "swap":
        at = [a for a in blocks if leaf(a)][1]
        b = P.unfix(v.img[at:at + bs])
        e = r_entries(b)
        r_swap_keys(b, e[0][0], b, e[1][0])
        v.img[at:at + bs] = P.refix(b)
        return
    node = [a for a in blocks if not leaf(a)][0]
    nb = P.unfix(v.img[node:node + bs])
    p, _, elen = r_entries(nb)[0]
    vcn, = struct.unpack_from("<Q", nb, p + elen - 8)
    at = [a for a in blocks if struct.unpack_from("<Q", v.img, a + 0x10)[0] == vcn][0]
    b = P.unfix(v.img[at:at + bs])
    r_swap_keys(nb, p, b, r_entries(b)[-2][0])
    v.img[node:node + bs] = P.refix(nb)
    v.img[at:at + bs] = P.refix(b)


def r_sorted(img):
    """"N sorted" when an in-order walk of $R (root, then INDX blocks by
    the VCN each says) meets its N keys in ascending order as 32-bit
    words (tag, reference low, reference high), else "unsorted"."""
    v = S.Vol(img)
    rec, _, bs = r_index(v)
    blocks, _ = r_blocks(v)
    by_vcn = {}
    for at in blocks:
        b = P.unfix(v.img[at:at + bs])
        by_vcn[struct.unpack_from("<Q", b, 0x10)[0]] = b
    for off, t, name, nr in P.attrs(rec):
        if t == 0x90 and name == "$R":
            vo, _ = P.value(rec, off)
            root = bytes(rec[vo + 0x10:])
    keys = []

    def walk(b, depth):
        for p, fl, elen in r_entries(b):
            if fl & 1:
                walk(by_vcn[struct.unpack_from("<Q", b, p + elen - 8)[0]], depth + 1)
            if fl & 2:
                return
            keys.append(struct.unpack_from("<III", b, p + 16))

    # the root's index header (0x10 into its value) where a block has it (0x18)
    walk(bytes(0x18) + root, 0)
    print(len(keys), "sorted" if keys == sorted(keys) else "unsorted")


def r_damage(img, case):
    v = S.Vol(img)
    blocks, bs = r_blocks(v)
    if case in ("swap", "sep"):
        r_order(v, case, blocks, bs)
        v.save()
        return
    at = [a for a in blocks if not P.unfix(v.img[a:a + bs])[0x18 + 0x0C] & 1][1]
    if case == "magic":
        v.img[at:at + 4] = b"XXXX"
    else:
        b = P.unfix(v.img[at:at + bs])
        eo = 0x18 + struct.unpack_from("<I", b, 0x18)[0]
        struct.pack_into("<Q", b, eo + 0x10 + 4, 5 | 5 << 48)
        v.img[at:at + bs] = P.refix(b)
    v.save()


def info(img):
    v = S.Vol(img)
    x = S.mft_extents(v)
    top = max(n for n, _, rec in P.records(v.img, v.g)
              if not struct.unpack_from("<Q", rec, 0x20)[0])
    print(len(x), v.g.nrecords, top)


def stale(img, case):
    with open(img + ".old") as f:
        old = json.load(f)
    rec = 0 if case.startswith("base") else old["last"]
    v = S.Vol(img)
    S.mft_extents(v)
    at = v.g.rec_off(rec)
    v.img[at:at + v.g.rs] = bytes.fromhex(old["recs"][str(rec)])
    if case == "base":     # and its $MFTMirr copy: no newer copy anywhere
        mirr, = struct.unpack_from("<q", v.img, 0x38)
        v.img[mirr * v.g.cs:mirr * v.g.cs + v.g.rs] = v.img[at:at + v.g.rs]
    v.save()
    if case == "base0bits":
        clear_bits_past(img)
    print(rec)


def clear_bits_past(img):
    """The $MFT bitmap's bits from the end of record 0's runs to the end
    of its allocation cleared (the bitmap as old as record 0)."""
    v = S.Vol(img)
    top = sum(ln for _, ln in v.g.mft_runs) * v.g.cs // v.g.rs
    rec = v.rec(0)
    for off, t, name, nr in P.attrs(rec):
        if t == 0xb0 and name == "" and nr:
            runs = P.runlist(rec, off)
            break
    else:
        sys.exit("no non-resident $MFT bitmap")
    pos = 0
    for l, ln in runs:
        for byte in range(pos, pos + ln * v.g.cs):
            at = l * v.g.cs + byte - pos
            for bit in range(8):
                if byte * 8 + bit >= top:
                    v.img[at] &= ~(1 << bit) & 0xFF
        pos += ln * v.g.cs
    v.save()


def root_blocksize(img):
    """The root's $INDEX_ROOT block size + 1; prints the record holding
    $MFT's $FILE_NAME and the base reference number it names."""
    v = S.Vol(img)
    rec = v.rec(5)
    for off, t, name, nr in P.attrs(rec):
        if t == 0x90 and name == "$I30":
            vo, _ = P.value(rec, off)
            struct.pack_into("<I", rec, vo + 8, struct.unpack_from("<I", rec, vo + 8)[0] + 1)
    at = v.g.rec_off(5)
    v.img[at:at + v.g.rs] = P.refix(rec)
    v.save()
    for x, xr, off, t, name, nr in P.all_attrs(v.img, v.g, 0, numbers=True):
        if t == 0x30:
            print(x, struct.unpack_from("<Q", xr, 0x20)[0] & 0xFFFFFFFFFFFF)


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "make":
        make(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif cmd == "make-moved":
        make_moved(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif cmd == "twin":
        twin(sys.argv[2])
    elif cmd == "logtwin":
        logtwin(sys.argv[2])
    elif cmd == "ghost":
        ghost(sys.argv[2])
    elif cmd == "root-blocksize":
        root_blocksize(sys.argv[2])
    elif cmd == "bits2":
        bits2(sys.argv[2])
    elif cmd == "make-reparse":
        make_reparse(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif cmd == "reparse-manifest":
        reparse_manifest(sys.argv[2])
    elif cmd == "r-shape":
        r_shape(sys.argv[2])
    elif cmd == "r-sorted":
        r_sorted(sys.argv[2])
    elif cmd == "r-damage":
        r_damage(sys.argv[2], sys.argv[3])
    elif cmd == "info":
        info(sys.argv[2])
    elif cmd == "stale":
        stale(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
