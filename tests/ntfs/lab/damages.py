"""Damage generators of the lab.  Each case is a name and a function that
changes a bytearray holding a populated base volume:
  targeted  one case per (structure, field, kind of corruption), the same
            list for the same base every time;
  random    N seeded byte/bit changes in metadata (MFT records, INDX
            blocks, boot sectors), fixups kept valid or not;
  powercut  the writes ntfs-3g issued for a workload (recorded once per
            base by strace), cut after write k, the last one possibly torn
            at a 512-byte sector (see powercut.py)."""
import random
import struct

import ntfsparse as P

KINDS3 = ("zero", "ones", "plus1")


def newval(old, size, kind):
    mask = (1 << (8 * size)) - 1
    return {"zero": 0, "ones": mask, "plus1": (old + 1) & mask,
            "minus1": (old - 1) & mask, "flip7": old ^ 0x80,
            "big": (old + (1 << (8 * size - 2))) & mask}[kind]


def set_int(buf, at, size, kind):
    old = int.from_bytes(buf[at:at + size], "little")
    buf[at:at + size] = newval(old, size, kind).to_bytes(size, "little")


class Vol:
    """A damaged-to-be image with the lookups the generators need."""

    def __init__(self, img, man):
        self.img, self.g, self.man = img, P.Geometry(img), man

    def ino(self, path):
        return self.man[path]["ino"]

    def rec(self, n):
        at, raw = P.read_record(self.img, self.g, n)
        return at, P.unfix(raw)

    def put_rec(self, n, plain, raw=False):
        at = self.g.rec_off(n)
        self.img[at:at + self.g.rs] = plain if raw else P.refix(plain)

    def attr(self, n, atype, name=""):
        at, rec = self.rec(n)
        for off, t, nm, nr in P.attrs(rec):
            if t == atype and nm == name:
                return off
        raise KeyError("record %d has no attribute 0x%x" % (n, atype))

    def edit(self, n, fn, raw=False):
        """Change record N through FN(fixed-up copy), then refix."""
        at, rec = self.rec(n)
        fn(rec)
        self.put_rec(n, rec, raw)

    def holder(self, n, atype, name=""):
        """(record, offset) of file N's attribute ATYPE NAME (its first
        extent): in the base record or, through the attribute list, in
        an extension record (a deep base's directory)."""
        for x, rec, off, t, nm, nr in P.all_attrs(self.img, self.g, n, numbers=True):
            if t == atype and nm == name and (not nr or struct.unpack_from("<q", rec, off + 0x10)[0] == 0):
                return x, off
        raise KeyError("file %d has no attribute 0x%x" % (n, atype))

    def index_blocks(self, n):
        """Byte offsets of the INDX blocks of directory N (every extent
        of its allocation, in VCN order)."""
        runs = sorted((struct.unpack_from("<q", rec, off + 0x10)[0], P.runlist(rec, off))
                      for rec, off, t, nm, nr in P.all_attrs(self.img, self.g, n)
                      if t == 0xA0 and nm == "$I30" and nr)
        if not runs:
            raise KeyError("file %d has no $INDEX_ALLOCATION" % n)
        out, cs, ibs = [], self.g.cs, self.g.ibs
        for lcn, ln in [r for _, rr in runs for r in rr]:
            if lcn is None:
                continue
            for b in range(0, ln * cs, ibs):
                o = lcn * cs + b
                if self.img[o:o + 4] == b"INDX":
                    out.append(o)
        return out

    def edit_block(self, at, fn, raw=False):
        ibs = self.g.ibs
        blk = P.unfix(self.img[at:at + ibs])
        fn(blk)
        self.img[at:at + ibs] = blk if raw else P.refix(blk)


# --- targeted ---------------------------------------------------------------

BOOT_FIELDS = [("jump", 0, 3), ("oem", 3, 8), ("bps", 11, 2), ("spc", 13, 1),
               ("reserved", 14, 2), ("media", 21, 1), ("sectors", 0x28, 8),
               ("mftlcn", 0x30, 8), ("mirrlcn", 0x38, 8), ("cpr", 0x40, 1),
               ("cpi", 0x44, 1), ("serial", 0x48, 8), ("marker", 0x1FE, 2)]

# record header fields: (name, offset, size, kinds)
HDR_FIELDS = [("seq", 0x10, 2, ("plus1", "zero")),
              ("links", 0x12, 2, ("plus1", "zero")),
              ("attroff", 0x14, 2, ("ones", "plus1")),
              ("flags", 0x16, 2, ("zero", "plus1", "flip7")),
              ("inuse", 0x18, 4, ("big", "minus1")),
              ("alloc", 0x1C, 4, ("zero",)),
              ("baseref", 0x20, 8, ("plus1",)),
              ("recno", 0x2C, 4, ("plus1",))]

# non-resident attribute header fields
NR_FIELDS = [("length", 4, 4, ("zero", "plus1", "big")),
             ("nameoff", 0xA, 2, ("ones",)),
             ("aflags", 0xC, 2, ("big",)),
             ("nonres", 8, 1, ("zero",)),
             ("lowvcn", 0x10, 8, ("plus1",)),
             ("highvcn", 0x18, 8, ("plus1", "minus1")),
             ("mpoff", 0x20, 2, ("plus1", "ones")),
             ("allocsz", 0x28, 8, ("minus1", "zero")),
             ("datasz", 0x30, 8, ("big", "plus1")),
             ("initsz", 0x38, 8, ("big",))]

RES_FIELDS = [("length", 4, 4, ("zero", "big")),
              ("vlen", 0x10, 4, ("zero", "big")),
              ("voff", 0x14, 2, ("ones", "plus1"))]


def targeted(v):
    """[(case name, function(Vol))] for volume V."""
    cases = []

    def add(name, fn):
        cases.append((name, fn))

    # boot sector fields, primary only and backup only
    for where, base in (("primary", 0), ("backup", v.g.backup)):
        for f, at, size in BOOT_FIELDS:
            for k in KINDS3:
                add("boot-%s-%s-%s" % (where, f, k),
                    lambda v, a=base + at, s=size, k=k: set_int(v.img, a, s, k))

    # $MFT and $MFTMirr runlists, $MFT's bitmap and $Bitmap's runlist
    for n, what, atype in ((0, "mft", 0x80), (1, "mftmirr", 0x80),
                           (0, "mftbitmap", 0xB0), (6, "bitmap", 0x80)):
        try:
            off = v.attr(n, atype)
        except KeyError:
            continue
        if not v.rec(n)[1][off + 8]:
            continue
        runs = P.runlist_fields(v.rec(n)[1], off)
        if not runs:
            continue
        p, lb, ob = runs[0]
        for k in ("plus1", "minus1", "big"):
            add("runs-%s-lcn-%s" % (what, k),
                lambda v, n=n, a=p + 1 + lb, s=ob, k=k:
                v.edit(n, lambda r: set_int(r, a, s, k)))
        for k in ("plus1", "minus1"):
            add("runs-%s-len-%s" % (what, k),
                lambda v, n=n, a=p + 1, s=lb, k=k:
                v.edit(n, lambda r: set_int(r, a, s, k)))
        add("runs-%s-header-zero" % what,
            lambda v, n=n, a=p: v.edit(n, lambda r: set_int(r, a, 1, "zero")))
        for f, at, size, kinds in NR_FIELDS:
            if f in ("allocsz", "datasz", "initsz", "highvcn"):
                for k in kinds:
                    add("attr-%s-%s-%s" % (what, f, k),
                        lambda v, n=n, a=off + at, s=size, k=k:
                        v.edit(n, lambda r: set_int(r, a, s, k)))

    # every system file record 0-11; the mirror copies of 0-3
    for n in range(12):
        add("sys%02d-magic" % n, lambda v, n=n: v.edit(n, lambda r: r.__setitem__(slice(0, 4), b"BAAD")))
        add("sys%02d-zeroed" % n, lambda v, n=n: v.put_rec(n, bytearray(v.g.rs), raw=True))
        add("sys%02d-torn" % n, lambda v, n=n: torn(v, n))
        add("sys%02d-usn" % n, lambda v, n=n: v.edit(n, lambda r: set_int(r, struct.unpack_from("<H", r, 4)[0], 2, "plus1")))
        for f, at, size, kinds in HDR_FIELDS:
            if f in ("seq", "flags", "attroff", "recno"):
                add("sys%02d-%s-%s" % (n, f, kinds[0]),
                    lambda v, n=n, a=at, s=size, k=kinds[0]:
                    v.edit(n, lambda r: set_int(r, a, s, k)))
        for t, tn in ((0x10, "stdinfo"), (0x30, "filename")):
            add("sys%02d-%s-vlen-zero" % (n, tn),
                lambda v, n=n, t=t: v.edit(n, lambda r: set_int(r, v.attr(n, t) + 0x10, 4, "zero")))
    for n in range(4):
        m = v.g.mirr_lcn * v.g.cs + n * v.g.rs
        add("mirror%d-zeroed" % n, lambda v, m=m: v.img.__setitem__(slice(m, m + v.g.rs), bytearray(v.g.rs)))
        add("mirror%d-torn" % n, lambda v, m=m: set_int(v.img, m + 510, 1, "flip7"))

    # user files: record headers, fixups, attributes, runlists, names
    tgt = {"small": "links/small", "frag": "frag/f1", "bigfile": "bigfile",
           "sparse": "sparse2", "dir": "big", "nested": "docs/a/b",
           "xattr": "xattr/x1", "hardlink": "links/target"}
    ino = {k: v.ino(p) for k, p in tgt.items()}
    for t in ("small", "frag", "dir", "hardlink", "xattr"):
        n = ino[t]
        for f, at, size, kinds in HDR_FIELDS:
            for k in kinds:
                add("rec-%s-%s-%s" % (t, f, k),
                    lambda v, n=n, a=at, s=size, k=k: v.edit(n, lambda r: set_int(r, a, s, k)))
        add("rec-%s-torn" % t, lambda v, n=n: torn(v, n))
        add("rec-%s-usn" % t, lambda v, n=n: v.edit(n, lambda r: set_int(r, struct.unpack_from("<H", r, 4)[0], 2, "plus1")))
        add("rec-%s-usacount" % t, lambda v, n=n: v.edit(n, lambda r: set_int(r, 6, 2, "big"), raw=True))
        add("rec-%s-magic" % t, lambda v, n=n: v.edit(n, lambda r: r.__setitem__(slice(0, 4), b"BAAD")))
        add("rec-%s-zeroed" % t, lambda v, n=n: v.put_rec(n, bytearray(v.g.rs), raw=True))
        add("rec-%s-attrtype-unknown" % t,
            lambda v, n=n: v.edit(n, lambda r: set_int(r, v.attr(n, 0x10), 4, "big")))
        for f, at, size, kinds in RES_FIELDS:
            for k in kinds:
                add("rec-%s-stdinfo-%s-%s" % (t, f, k),
                    lambda v, n=n, a=at, s=size, k=k: v.edit(n, lambda r: set_int(r, v.attr(n, 0x10) + a, s, k)))
    for t in ("frag", "bigfile", "sparse", "dir"):
        n = ino[t]
        atype, aname = (0xA0, "$I30") if t == "dir" else (0x80, "")
        off = v.attr(n, atype, aname)
        for f, at, size, kinds in NR_FIELDS:
            for k in kinds:
                add("attr-%s-%s-%s" % (t, f, k),
                    lambda v, n=n, a=off + at, s=size, k=k: v.edit(n, lambda r: set_int(r, a, s, k)))
        runs = P.runlist_fields(v.rec(n)[1], off)
        for i in sorted({0, len(runs) // 2, len(runs) - 1}):
            p, lb, ob = runs[i]
            if ob == 0:
                continue
            for k in ("plus1", "minus1", "big"):
                add("runs-%s-r%d-lcn-%s" % (t, i, k),
                    lambda v, n=n, a=p + 1 + lb, s=ob, k=k: v.edit(n, lambda r: set_int(r, a, s, k)))
            add("runs-%s-r%d-len-plus1" % (t, i),
                lambda v, n=n, a=p + 1, s=lb: v.edit(n, lambda r: set_int(r, a, s, "plus1")))
            add("runs-%s-r%d-header-zero" % (t, i),
                lambda v, n=n, a=p: v.edit(n, lambda r: set_int(r, a, 1, "zero")))
        # cross-link: the first run pointed at the first cluster of bigfile
        if t != "bigfile":
            add("runs-%s-crosslink" % t, lambda v, n=n, off=off: crosslink(v, n, off, ino["bigfile"]))
    # $FILE_NAME: parent references, names, sizes
    for t in ("small", "hardlink", "nested", "dir", "xattr"):
        n = ino[t]
        for what, fn in (("parent-missing", lambda r, v_: struct.pack_into("<Q", r, v_, 0x7FFFFF | (1 << 48))),
                         ("parent-self", lambda r, v_, n=n: struct.pack_into("<Q", r, v_, n | (1 << 48))),
                         ("parent-file", lambda r, v_: struct.pack_into("<Q", r, v_, ino["bigfile"] | (1 << 48))),
                         ("parent-seq", lambda r, v_: set_int(r, v_ + 6, 2, "plus1")),
                         ("namelen-zero", lambda r, v_: set_int(r, v_ + 0x40, 1, "zero")),
                         ("namelen-big", lambda r, v_: set_int(r, v_ + 0x40, 1, "ones")),
                         ("name-char", lambda r, v_: set_int(r, v_ + 0x42, 1, "plus1")),
                         ("flags", lambda r, v_: set_int(r, v_ + 0x38, 4, "big"))):
            add("fname-%s-%s" % (t, what), lambda v, n=n, fn=fn: v.edit(n, lambda r: fn(r, P.file_names(r)[0][3])))
    # a directory cycle: docs/a/b's parent becomes docs/a/b/c/d
    cyc = v.ino("docs/a/b/c/d")
    add("fname-cycle", lambda v: v.edit(ino["nested"], lambda r: struct.pack_into(
        "<Q", r, P.file_names(r)[0][3], cyc | (v.rec(cyc)[1][0x10] << 48))))

    # indexes: the big directory's $INDEX_ROOT and INDX blocks, the root's
    for t, n in (("big", ino["dir"]), ("root", 5), ("nested", ino["nested"])):
        n, off = v.holder(n, 0x90, "$I30")
        vo, _ = P.value(v.rec(n)[1], off)
        ents = list(P.index_entries(v.rec(n)[1], vo + 0x10))
        e0 = ents[0][0]
        for what, at, size, k in (("blocksize", vo + 8, 4, "plus1"), ("entriesoff", vo + 0x10, 4, "big"),
                                  ("indexlen", vo + 0x14, 4, "big"), ("hdrflags", vo + 0x1C, 1, "ones"),
                                  ("e0-len", e0 + 8, 2, "zero"), ("e0-keylen", e0 + 10, 2, "big"),
                                  ("e0-flags", e0 + 12, 2, "ones"), ("e0-ref", e0, 6, "big"),
                                  ("e0-refseq", e0 + 6, 2, "plus1")):
            add("iroot-%s-%s" % (t, what), lambda v, n=n, a=at, s=size, k=k: v.edit(n, lambda r: set_int(r, a, s, k)))
    for t, n in (("big", ino["dir"]), ("root", 5)):
        try:
            blocks = v.index_blocks(n)
        except KeyError:
            continue
        for bi in sorted({0, len(blocks) // 2, len(blocks) - 1}):
            b = blocks[bi]
            blk = P.unfix(v.img[b:b + v.g.ibs])
            ents = list(P.index_entries(blk, 0x18))
            e = ents[len(ents) // 2][0]
            add("indx-%s-b%d-magic" % (t, bi), lambda v, b=b: v.img.__setitem__(slice(b, b + 4), b"BAAD"))
            add("indx-%s-b%d-zeroed" % (t, bi), lambda v, b=b: v.img.__setitem__(slice(b, b + v.g.ibs), bytearray(v.g.ibs)))
            add("indx-%s-b%d-torn" % (t, bi), lambda v, b=b: set_int(v.img, b + 1022, 1, "flip7"))
            for what, at, size, k in (("vcn", 0x10, 8, "plus1"), ("entriesoff", 0x18, 4, "big"),
                                      ("indexlen", 0x1C, 4, "big"), ("e-len", e + 8, 2, "zero"),
                                      ("e-keylen", e + 10, 2, "plus1"), ("e-ref", e, 6, "big"),
                                      ("e-refseq", e + 6, 2, "plus1"), ("e-namechar", e + 0x10 + 0x42, 1, "plus1"),
                                      ("e-parent", e + 0x10, 6, "plus1"), ("e-flags", e + 12, 2, "ones")):
                add("indx-%s-b%d-%s" % (t, bi, what),
                    lambda v, b=b, a=at, s=size, k=k: v.edit_block(b, lambda r: set_int(r, a, s, k)))
        # the directory's $BITMAP of index blocks
        try:
            n, off = v.holder(n, 0xB0, "$I30")
            vo, _ = P.value(v.rec(n)[1], off)
            add("ibitmap-%s-zero" % t, lambda v, n=n, a=vo: v.edit(n, lambda r: set_int(r, a, 1, "zero")))
            add("ibitmap-%s-ones" % t, lambda v, n=n, a=vo: v.edit(n, lambda r: set_int(r, a, 4, "ones")))
        except KeyError:
            pass

    if "packed/text.txt" in v.man:
        rich_targeted(v, add)

    # $Bitmap and $MFT's bitmap
    bm = cluster_of(v, 6, 0x80)
    big_lcn = first_run(v, ino["bigfile"])[0]
    add("bitmap-used-cleared", lambda v: clear_bits(v, bm, big_lcn, 64))
    add("bitmap-boot-cleared", lambda v: clear_bits(v, bm, 0, 1))
    add("bitmap-free-set", lambda v: set_free_bits(v, bm))
    add("bitmap-zeroed", lambda v: v.img.__setitem__(slice(bm, bm + 512), bytearray(512)))
    try:
        mb = cluster_of(v, 0, 0xB0)
        add("mftbitmap-file-cleared", lambda v: clear_bits(v, mb, ino["small"], 1))
        add("mftbitmap-dir-cleared", lambda v: clear_bits(v, mb, ino["dir"], 1))
        add("mftbitmap-sys-cleared", lambda v: clear_bits(v, mb, 0, 8))
        add("mftbitmap-free-set", lambda v: v.img.__setitem__(slice(mb + v.g.nrecords // 8 - 2, mb + v.g.nrecords // 8), b"\xff\xff"))
    except (KeyError, ValueError):
        pass
    return cases


def torn(v, n):
    """A torn write: the last bytes of the record's second stride differ
    from the update sequence number."""
    at = v.g.rec_off(n)
    set_int(v.img, at + 1022 if v.g.rs >= 1024 else at + 510, 1, "flip7")


def cluster_of(v, n, atype):
    at, rec = v.rec(n)
    off = v.attr(n, atype)
    if not rec[off + 8]:
        raise ValueError("resident")
    return P.runlist(rec, off)[0][0] * v.g.cs


def first_run(v, n):
    at, rec = v.rec(n)
    return next(r for r in P.runlist(rec, v.attr(n, 0x80)) if r[0] is not None)


def clear_bits(v, bm, first, count):
    for b in range(first, first + count):
        v.img[bm + b // 8] &= ~(1 << (b % 8)) & 0xFF


def set_free_bits(v, bm):
    last = v.g.clusters - 9
    for b in range(last, last + 8):
        v.img[bm + b // 8] |= 1 << (b % 8)


def crosslink(v, n, off, other):
    lcn = first_run(v, other)[0]
    at, rec = v.rec(n)
    p, lb, ob = P.runlist_fields(rec, off)[0]
    runs = P.runlist(rec, off)
    # rewrite the first run's LCN (absolute for the first run); keep the
    # following deltas valid by adjusting the second run's delta
    if ob == 0 or ob > 8:
        return
    new = lcn
    if not -(1 << (8 * ob - 1)) <= new < (1 << (8 * ob - 1)):
        return
    rec[p + 1 + lb:p + 1 + lb + ob] = new.to_bytes(ob, "little", signed=True)
    if len(runs) > 1 and runs[1][0] is not None:
        p2, lb2, ob2 = P.runlist_fields(rec, off)[1]
        d = runs[1][0] - new
        if -(1 << (8 * ob2 - 1)) <= d < (1 << (8 * ob2 - 1)):
            rec[p2 + 1 + lb2:p2 + 1 + lb2 + ob2] = d.to_bytes(ob2, "little", signed=True)
    v.put_rec(n, rec)


# --- random -----------------------------------------------------------------

def random_damage(v, seed):
    """N seeded changes in metadata: MFT records in use, INDX blocks of
    the directories, the boot sectors."""
    rnd = random.Random(seed)
    recs = [n for n, at, rec in P.records(v.img, v.g)]
    dirs = [n for n in recs if n == 5 or n >= 16]
    indx = []
    for n in dirs:
        try:
            indx += v.index_blocks(n)
        except (KeyError, IndexError, struct.error):
            pass
    for _ in range(rnd.randint(1, 8)):
        r = rnd.random()
        if r < 0.08:
            at = rnd.choice((0, v.g.backup)) + rnd.randrange(0x54)
            span = v.g.bps
        elif indx and r < 0.4:
            at = rnd.choice(indx)
            span = v.g.ibs
        else:
            at = v.g.rec_off(rnd.choice(recs))
            span = v.g.rs
        keep_fixups = span != v.g.bps and rnd.random() < 0.6
        base = at
        buf = P.unfix(v.img[base:base + span]) if keep_fixups else bytearray(v.img[base:base + span])
        if keep_fixups:
            hdr = struct.unpack_from("<H", buf, 0x14)[0] if span == v.g.rs else 0x18
            lo = min(hdr, span - 8) if rnd.random() < 0.7 else 0
        else:
            lo = 0
        o = rnd.randrange(lo, span - 4)
        how = rnd.random()
        if how < 0.4:
            buf[o] ^= 1 << rnd.randrange(8)
        elif how < 0.55:
            buf[o] = 0
        elif how < 0.7:
            buf[o] = 0xFF
        elif how < 0.8:
            buf[o] = rnd.randrange(256)
        else:
            buf[o:o + 4] = struct.pack("<I", rnd.choice([0, 1, 0x7FFFFFFF, 0xFFFFFFFF, 0x10000]))
        v.img[base:base + span] = P.refix(buf) if keep_fixups else buf


# --- sectors ----------------------------------------------------------------

def sector_damage(v, seed):
    """A run of 1-16 unreadable-then-remapped sectors, as a failing disk
    leaves them: zeros (most drives), 0xff or garbage, starting at a random
    sector of metadata (MFT records in use, INDX blocks, $MFTMirr,
    $Bitmap's first cluster, the boot sectors).  Unlike the random kind it
    ignores record boundaries: one run may take out several records, or
    the tail of one and the head of the next."""
    rnd = random.Random(seed)
    bps = v.g.bps
    recs = [n for n, at, rec in P.records(v.img, v.g)]
    spots = [("mft", v.g.rec_off(n)) for n in recs]
    for n in [n for n in recs if n == 5 or n >= 16]:
        try:
            spots += [("indx", b) for b in v.index_blocks(n)]
        except (KeyError, IndexError, struct.error):
            pass
    spots.append(("mirr", v.g.mirr_lcn * v.g.cs))
    try:
        spots.append(("bitmap", cluster_of(v, 6, 0x80)))
    except (KeyError, ValueError):
        pass
    spots += [("boot", 0), ("boot", v.g.backup)]
    what, at = rnd.choice(spots)
    at += rnd.randrange(0, max(1, v.g.rs // bps)) * bps if what == "mft" else 0
    count = rnd.choice((1, 1, 2, 2, 4, 8, 16))
    fill = rnd.random()
    end = min(len(v.img), at + count * bps)
    if fill < 0.7:
        v.img[at:end] = bytes(end - at)
    elif fill < 0.85:
        v.img[at:end] = b"\xff" * (end - at)
    else:
        v.img[at:end] = bytes(rnd.randrange(256) for _ in range(end - at))


# --- the rich bases' structures (base.populate_rich) -------------------------

def rich_targeted(v, add):
    """Cases on compression, DOS names, reparse points and $Reparse, object
    ids and $ObjId, $Secure ($SDS, $SII, $SDH), EAs and attribute lists."""
    def field(tag, n, atype, a, size, kinds, name=""):
        for k in kinds:
            add("%s-%s" % (tag, k), lambda v, n=n, t=atype, a=a, s=size, k=k, nm=name:
                v.edit(n, lambda r: set_int(r, v.attr(n, t, nm) + a, s, k)))

    def vfield(tag, n, atype, a, size, kinds, name=""):
        """A field at A in the resident value of the attribute."""
        for k in kinds:
            add("%s-%s" % (tag, k), lambda v, n=n, t=atype, a=a, s=size, k=k, nm=name:
                v.edit(n, lambda r: set_int(r, P.value(r, v.attr(n, t, nm))[0] + a, s, k)))

    # compression: the attribute header's unit and compressed size, its
    # flag, the first chunk header of the first unit, a run of the mixed
    # file (compressed units, a sparse one, stored ones); the directory's
    # compressed flag
    for t, path in (("ctext", "packed/text.txt"), ("cmixed", "packed/mixed")):
        n = v.ino(path)
        field("comp-%s-unit" % t, n, 0x80, 0x22, 1, ("zero", "plus1", "ones"))
        field("comp-%s-csize" % t, n, 0x80, 0x40, 8, ("zero", "big", "plus1"))
        field("comp-%s-flag" % t, n, 0x80, 0xC, 2, ("zero",))
        lcn = first_run(v, n)[0]
        c0 = lcn * v.g.cs
        add("comp-%s-chunkhdr-zero" % t, lambda v, c=c0: set_int(v.img, c, 2, "zero"))
        add("comp-%s-chunkhdr-ones" % t, lambda v, c=c0: set_int(v.img, c, 2, "ones"))
        add("comp-%s-chunkhdr-len" % t, lambda v, c=c0: set_int(v.img, c, 2, "plus1"))
        runs = P.runlist_fields(v.rec(n)[1], v.attr(n, 0x80))
        if len(runs) > 2:
            p, lb, ob = runs[1]
            add("comp-%s-r1-len-plus1" % t,
                lambda v, n=n, a=p + 1, s=lb: v.edit(n, lambda r: set_int(r, a, s, "plus1")))
    n = v.ino("packed")
    vfield("comp-dir-siflags", n, 0x10, 0x20, 4, ("zero",))
    # DOS names: the pair's namespaces, the DOS name, the DOS entry of the
    # directory's index
    n = v.ino("dos/Long File Name Number 03.document")
    rec = v.rec(n)[1]
    fns = {rec[o + 0x41]: o for _, _, _, o in P.file_names(rec)}
    for what, ns, newns in (("dos-as-win32", 2, 1), ("dos-as-posix", 2, 0), ("win32-as-both", 1, 3),
                            ("win32-as-dos", 1, 2)):
        add("dos-fname-%s" % what, lambda v, n=n, o=fns[ns] + 0x41, x=newns:
            v.edit(n, lambda r: r.__setitem__(o, x)))
    add("dos-fname-dosname-char", lambda v, n=n, o=fns[2] + 0x42: v.edit(n, lambda r: set_int(r, o, 1, "plus1")))
    add("dos-fname-dosname-long", lambda v, n=n, o=fns[2] + 0x40: v.edit(n, lambda r: set_int(r, o, 1, "plus1")))
    add("dos-links-zero", lambda v, n=n: v.edit(n, lambda r: set_int(r, 0x12, 2, "zero")))
    d = v.ino("dos")
    ents = P.index_all(v.img, v.g, d, "$I30")
    dosent = [(w, o) for w, o, buf in ents if buf[o + 0x10 + 0x41] == 2 and (struct.unpack_from("<Q", buf, o)[0] & 0xFFFFFFFFFFFF) == n]
    if dosent:
        w, o = dosent[0]
        for what, a, size, k in (("ns", 0x10 + 0x41, 1, "zero"), ("ref", 0, 6, "plus1"),
                                 ("name", 0x10 + 0x42, 1, "plus1")):
            add("dos-ientry-%s" % what, lambda v, w=w, o=o, a=a, size=size, k=k, d=d: edit_entry(v, d, w, o + a, size, k))
    # reparse points: the value (tag, data length, value length), the
    # file's reparse flag, the $Reparse entry (tag, record)
    n = v.ino("reparse/ws1")
    vfield("rp-value-tag", n, 0xC0, 0, 4, ("plus1", "zero"))
    vfield("rp-value-dlen", n, 0xC0, 4, 2, ("big", "zero"))
    field("rp-attr-vlen", n, 0xC0, 0x10, 4, ("zero", "big"))
    vfield("rp-siflags", n, 0x10, 0x20, 4, ("zero",))
    add("rp-attr-type-big", lambda v, n=n: v.edit(n, lambda r: set_int(r, v.attr(n, 0xC0), 4, "big")))
    rr = P.named_record(v.img, v.g, "$Reparse")
    ents = [(w, o) for w, o, buf in P.index_all(v.img, v.g, rr, "$R")
            if struct.unpack_from("<Q", buf, o + 0x10 + 4)[0] & 0xFFFFFFFFFFFF == n]
    if ents:
        w, o = ents[0]
        for what, a, size, k in (("tag", 0x10, 4, "plus1"), ("ref", 0x14, 6, "plus1"),
                                 ("ref-free", 0x14, 6, "big"), ("len", 8, 2, "zero")):
            add("rp-rentry-%s" % what, lambda v, w=w, o=o, a=a, size=size, k=k: edit_entry(v, rr, w, o + a, size, k))
    jn = v.ino("reparse/junction")
    vfield("rp-junction-offs", jn, 0xC0, 8, 2, ("big",))
    # object ids: the value, the $ObjId entry (GUID key, data's record)
    n = v.ino("oid/o04")
    vfield("oid-value-byte", n, 0x40, 0, 1, ("plus1",))
    field("oid-attr-vlen", n, 0x40, 0x10, 4, ("zero", "big"))
    ro = P.named_record(v.img, v.g, "$ObjId")
    ents = [(w, o) for w, o, buf in P.index_all(v.img, v.g, ro, "$O")
            if struct.unpack_from("<Q", buf, o + struct.unpack_from("<H", buf, o)[0])[0] & 0xFFFFFFFFFFFF == n]
    if ents:
        w, o = ents[0]
        add("oid-oentry-key", lambda v, w=w, o=o: edit_entry(v, ro, w, o + 0x10, 1, "plus1"))
        add("oid-oentry-dataoff", lambda v, w=w, o=o: edit_entry(v, ro, w, o, 2, "big"))
        add("oid-oentry-ref", lambda v, w=w, o=o: edit_entry_at_data(v, ro, w, o, 0, 6, "plus1"))
    # $Secure: a file's security id, $SDS entries (hash, id, length, the
    # mirror copy), $SII and $SDH entries and blocks
    n = v.ino("acl/s077")
    vfield("sec-file-secid", n, 0x10, 0x34, 4, ("big", "plus1"))
    sds = v.attr(9, 0x80, "$SDS")
    lcn = P.runlist(v.rec(9)[1], sds)[0][0]
    first = lcn * v.g.cs
    # the entries are 16-aligned: walk to one in the middle
    o, i = first, 0
    while i < 150:
        ln = struct.unpack_from("<I", v.img, o + 0x10)[0]
        if not ln:
            break
        o += (ln + 15) & ~15
        i += 1
    for what, a, size, k in (("hash", 0, 4, "plus1"), ("id", 4, 4, "plus1"), ("len", 0x10, 4, "big"),
                             ("len-zero", 0x10, 4, "zero"), ("sd-rev", 0x14, 1, "ones")):
        add("sec-sds-%s" % what, lambda v, a=o + a, size=size, k=k: set_int(v.img, a, size, k))
    add("sec-sds-mirror-zeroed", lambda v, a=o + 0x40000: v.img.__setitem__(slice(a, a + 0x100), bytes(0x100)))
    for iname in ("$SII", "$SDH"):
        ents = P.index_all(v.img, v.g, 9, iname)
        w, e, buf = ents[len(ents) // 2]
        key = "sii" if iname == "$SII" else "sdh"
        for what, a, size, k in (("key", 0x10, 4, "plus1"), ("dataoff", 0, 2, "big"),
                                 ("len", 8, 2, "zero"), ("secid", 0x10 + (0 if key == "sii" else 4), 4, "big")):
            add("sec-%s-%s" % (key, what), lambda v, w=w, e=e, a=a, size=size, k=k: edit_entry(v, 9, w, e + a, size, k))
        blocks = [b for b in {w2 for w2, _, _ in ents} if b != "root"]
        if blocks:
            b = sorted(blocks)[0]
            add("sec-%s-blk-magic" % key, lambda v, b=b: v.img.__setitem__(slice(b, b + 4), b"BAAD"))
            add("sec-%s-blk-zeroed" % key, lambda v, b=b: v.img.__setitem__(slice(b, b + v.g.ibs), bytes(v.g.ibs)))
    # EAs: $EA_INFORMATION's sizes and count, the first $EA entry's offset,
    # name and value lengths; the non-resident $EA's size and run
    n = v.ino("ea/e3")
    vfield("ea-info-packed", n, 0xD0, 0, 2, ("plus1", "zero"))
    vfield("ea-info-needea", n, 0xD0, 2, 2, ("plus1",))
    vfield("ea-info-unpacked", n, 0xD0, 4, 4, ("big", "plus1"))
    vfield("ea-e0-next", n, 0xE0, 0, 4, ("zero", "big", "plus1"))
    vfield("ea-e0-namelen", n, 0xE0, 5, 1, ("ones",))
    vfield("ea-e0-valuelen", n, 0xE0, 6, 2, ("big",))
    field("ea-attr-vlen", n, 0xE0, 0x10, 4, ("zero",))
    add("ea-attr-type-big", lambda v, n=n: v.edit(n, lambda r: set_int(r, v.attr(n, 0xE0), 4, "big")))
    n = v.ino("ea/bigea")
    field("ea-big-datasz", n, 0xE0, 0x30, 8, ("big", "plus1"))
    off = v.attr(n, 0xE0)
    if v.rec(n)[1][off + 8]:
        p, lb, ob = P.runlist_fields(v.rec(n)[1], off)[0]
        add("ea-big-run-lcn-plus1", lambda v, n=n, a=p + 1 + lb, s=ob: v.edit(n, lambda r: set_int(r, a, s, "plus1")))
    # attribute lists: an entry's length, type, record, lowest VCN and
    # name length; an extension record zeroed, BAAD, its base reference,
    # the type of its first attribute
    for t, path in (("links", "alist/linked"), ("streams", "alist/streams"), ("runs", "alist/shredded")):
        n = v.ino(path)
        if not any(t == 0x20 for _, t, _, _ in P.attrs(v.rec(n)[1])):
            continue  # alist/shredded's 400 runs fit one 4096-byte record
        al = al_entries(v, n)
        exts = sorted({r for _, _, r in al if r != n})
        mid = al[len(al) // 2][0]
        for what, a, size, k in (("len", 4, 2, "zero"), ("type", 0, 4, "plus1"), ("ref", 0x10, 6, "plus1"),
                                 ("lowvcn", 8, 8, "plus1"), ("namelen", 6, 1, "ones")):
            add("alist-%s-entry-%s" % (t, what), lambda v, n=n, a=a, size=size, k=k, mid=mid: edit_al(v, n, mid + a, size, k))
        if exts:
            x = exts[len(exts) // 2]
            add("alist-%s-ext-zeroed" % t, lambda v, x=x: v.put_rec(x, bytearray(v.g.rs), raw=True))
            add("alist-%s-ext-magic" % t, lambda v, x=x: v.edit(x, lambda r: r.__setitem__(slice(0, 4), b"BAAD")))
            add("alist-%s-ext-baseref" % t, lambda v, x=x: v.edit(x, lambda r: set_int(r, 0x20, 6, "plus1")))
            add("alist-%s-ext-inuse" % t, lambda v, x=x: v.edit(x, lambda r: set_int(r, 0x16, 2, "zero")))
            add("alist-%s-ext-torn" % t, lambda v, x=x: torn(v, x))
            # the type of the extension record's first attribute
            for k in ("zero", "flip7"):
                add("alist-%s-ext-attrtype-%s" % (t, k), lambda v, x=x, k=k: v.edit(
                    x, lambda r: set_int(r, next(P.attrs(r))[0], 4, k)))


def edit_entry(v, n, where, at, size, kind):
    """Change SIZE bytes at AT of an index entry of record N: in the
    record's index root (WHERE "root") or in the INDX block at WHERE."""
    if where == "root":
        v.edit(n, lambda r: set_int(r, at, size, kind))
    else:
        v.edit_block(where, lambda r: set_int(r, at, size, kind))


def edit_entry_at_data(v, n, where, e, a, size, kind):
    """Like edit_entry, at A in the entry's data (its offset at E+0)."""
    if where == "root":
        v.edit(n, lambda r: set_int(r, e + struct.unpack_from("<H", r, e)[0] + a, size, kind))
    else:
        v.edit_block(where, lambda r: set_int(r, e + struct.unpack_from("<H", r, e)[0] + a, size, kind))


def al_value(v, n):
    """(bytes of record N's $ATTRIBUTE_LIST value, resident: offset in the
    fixed-up record, or None and the byte offset in the image)."""
    rec = v.rec(n)[1]
    off = v.attr(n, 0x20)
    if not rec[off + 8]:
        vo, ln = P.value(rec, off)
        return bytes(rec[vo:vo + ln]), vo, None
    ln = struct.unpack_from("<Q", rec, off + 0x30)[0]
    lcn = P.runlist(rec, off)[0][0]
    return bytes(v.img[lcn * v.g.cs:lcn * v.g.cs + ln]), None, lcn * v.g.cs


def al_entries(v, n):
    """[(offset in the value, type, record)] of N's attribute list."""
    val, _, _ = al_value(v, n)
    out, p = [], 0
    while p + 26 <= len(val):
        t, ln = struct.unpack_from("<IH", val, p)
        if ln < 26:
            break
        out.append((p, t, struct.unpack_from("<Q", val, p + 0x10)[0] & 0xFFFFFFFFFFFF))
        p += ln
    return out


def edit_al(v, n, a, size, kind):
    _, vo, img_at = al_value(v, n)
    if vo is not None:
        v.edit(n, lambda r: set_int(r, vo + a, size, kind))
    else:
        set_int(v.img, img_at + a, size, kind)
