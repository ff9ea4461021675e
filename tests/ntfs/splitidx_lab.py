#!/usr/bin/env python3
"""Volumes whose large directory keeps its $I30 $INDEX_ALLOCATION in
several extents (one per extension record, named by the directory's
$ATTRIBUTE_LIST), and damage to an index block of a later extent, for
tests/ntfs/splitidx.bats.  The format is read with the lab's own parser
(tests/ntfs/lab/ntfsparse.py), not libntfs.

  splitidx_lab.py make IMG MKFS       populate through ntfs-3g
  splitidx_lab.py layout IMG          "EXTENTS RECORDS BLOCKS" of big/'s
                                      $I30 allocation, from the list
  splitidx_lab.py damage IMG CASE     damage an INDX block of the 2nd extent
  splitidx_lab.py make-mft IMG MKFS   a volume whose $MFT's $DATA has extents
                                      in several records (record 0's list);
                                      MKFS sid:ROOT: mkntfs of that tree
  splitidx_lab.py mft-layout IMG      "EXTENTS RECORDS NRECORDS FIRST USED":
                                      NRECORDS those $DATA's size holds,
                                      FIRST the first record of the last
                                      extent, USED records in use past it
  splitidx_lab.py damage-mft IMG CASE damage a user file record past the
                                      first extent; prints "RECORD PATH"
                                      (CASE ext: the record holding the
                                      last extent, list: record 0's list
                                      entry for it; PATH -)

Free space is fragmented the way deleted files leave it: before ntfs-3g
mounts the volume, every other free cluster is marked in
use in $Bitmap (as if a file held it); ntfs-3g then has only one-cluster
holes to grow the directory's index into (an INDX block of 4096 bytes in
eight runs of 512-byte clusters), so the runlist overflows one record and
ntfs-3g splits it into extents.  After the unmount the marks are taken
back: the clusters are free and owned by nobody, as after the deletes.
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lab"))
import base as B  # noqa: E402
import ntfsparse as P  # noqa: E402

NAME = "-" + "x" * 180
FILES = 700
MFT_FILES = int(os.environ.get("MFT_FILES", "1500"))
STEP = int(os.environ.get("STEP", "4"))


class Vol:
    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            self.img = bytearray(f.read())
        self.g = P.Geometry(self.img)

    def rec(self, n):
        at = self.g.rec_off(n)
        return P.unfix(self.img[at:at + self.g.rs])

    def save(self):
        with open(self.path, "r+b") as f:
            f.write(self.img)

    def bitmap_runs(self):
        rec = self.rec(6)
        for off, t, name, nr in P.attrs(rec):
            if t == 0x80 and name == "" and nr:
                return P.runlist(rec, off)
        sys.exit("no $Bitmap data")

    def bit_offset(self, lcn):
        byte, pos = lcn // 8, 0
        for l, ln in self.bitmap_runs():
            if byte < pos + ln * self.g.cs:
                return l * self.g.cs + byte - pos, 1 << (lcn % 8)
            pos += ln * self.g.cs
        sys.exit("cluster %d past $Bitmap" % lcn)

    def lookup_dir(self, name):
        for n, at, rec in P.records(self.img, self.g):
            for parent, _, nm, _ in P.file_names(rec):
                if nm == name and parent == 5:
                    return n
        sys.exit("no directory " + name)

    def alloc_extents(self, d):
        """[(lowest vcn, record, runs)] of D's $I30 allocation, through
        its attribute list (resident here)."""
        out = []
        for t, nm, vcn, ref in P.list_entries(P.list_value(self.img, self.g, self.rec(d))):
            if t == 0xa0 and nm == "$I30":
                x = ref & 0xFFFFFFFFFFFF
                xr = self.rec(x)
                for aoff, at, an, nr in P.attrs(xr):
                    lv, = struct.unpack_from("<q", xr, aoff + 0x10) if nr else (None,)
                    if at == 0xa0 and an == "$I30" and nr and lv == vcn:
                        out.append((vcn, x, P.runlist(xr, aoff)))
        return sorted(out)


def make(img, mkfs):
    subprocess.run(["truncate", "-s", "0", img], check=True)
    subprocess.run(["truncate", "-s", "24M", img], check=True)
    subprocess.run([mkfs, "-q", "-F", "-c", "512", img], check=True,
                   stdout=subprocess.DEVNULL)
    m = img + ".mnt"
    # the MFT grows first (deleted files leave their records free), so
    # that its growth does not meet the holes
    if not B.mount(img, m):
        sys.exit("ntfs-3g cannot mount " + img)
    try:
        os.makedirs(m + "/pre")
        for i in range(FILES + 40):
            open(m + "/pre/%d" % i, "wb").close()
        for i in range(FILES + 40):
            os.unlink(m + "/pre/%d" % i)
        os.rmdir(m + "/pre")
    finally:
        B.umount(m)
    v = Vol(img)
    marked = []
    for lcn in range(0, v.g.clusters, STEP):
        at, bit = v.bit_offset(lcn)
        if not v.img[at] & bit:
            v.img[at] |= bit
            marked.append(lcn)
    v.save()
    m = img + ".mnt"
    if not B.mount(img, m):
        sys.exit("ntfs-3g cannot mount " + img)
    try:
        os.makedirs(m + "/big")
        for i in range(FILES):
            with open(m + "/big/f%04d%s" % (i, NAME), "wb") as f:
                f.write(b"%d\n" % i)
        os.makedirs(m + "/small")
        with open(m + "/small/a", "wb") as f:
            f.write(b"a\n")
    finally:
        B.umount(m)
        os.rmdir(m)
    v = Vol(img)
    for lcn in marked:
        at, bit = v.bit_offset(lcn)
        v.img[at] &= ~bit
    v.save()


def mft_extents(v):
    """[(lowest vcn, record, runs)] of $MFT's $DATA, through record 0's
    attribute list; V.g's record offsets then cover every extent."""
    lst = P.list_value(v.img, v.g, v.rec(0))
    if lst is None:
        return [(0, 0, v.g.mft_runs)]
    want = [(vcn, ref & 0xFFFFFFFFFFFF) for t, nm, vcn, ref in P.list_entries(lst)
            if t == 0x80 and nm == ""]
    out = []
    for vcn, x in sorted(want):
        xr = v.rec(x)      # records of the extents already known
        for aoff, at, an, nr in P.attrs(xr):
            if at == 0x80 and an == "" and nr and \
                    struct.unpack_from("<q", xr, aoff + 0x10)[0] == vcn:
                out.append((vcn, x, P.runlist(xr, aoff)))
                v.g.mft_runs = [r for _, _, rr in out for r in rr]
    v.g.nrecords = sum(n for _, n in v.g.mft_runs) * v.g.cs // v.g.rs
    return out


def make_mft(img, mkfs):
    """A volume whose $MFT grew into one-cluster holes: its $DATA in
    several extents (record 0 gets an attribute list)."""
    subprocess.run(["truncate", "-s", "0", img], check=True)
    subprocess.run(["truncate", "-s", "48M", img], check=True)
    if mkfs.startswith("sid:"):      # mkntfs of the sid tree
        root = mkfs[4:]
        t = tempfile.mkdtemp(dir=os.path.join(root, "tmp"))
        try:
            shutil.copyfile(img, t + "/v.img")
            subprocess.run(["chroot", root, "mkntfs", "-q", "-F", "-Q", "-c", "4096",
                            "/tmp/" + os.path.basename(t) + "/v.img"], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            shutil.copyfile(t + "/v.img", img)
        finally:
            shutil.rmtree(t)
    else:
        subprocess.run([mkfs, "-q", "-F", "-c", "4096", img], check=True,
                       stdout=subprocess.DEVNULL)
    v = Vol(img)
    marked = []
    for lcn in range(0, v.g.clusters, 2):
        at, bit = v.bit_offset(lcn)
        if not v.img[at] & bit:
            v.img[at] |= bit
            marked.append(lcn)
    v.save()
    m = img + ".mnt"
    if not B.mount(img, m):
        sys.exit("ntfs-3g cannot mount " + img)
    try:
        for d in range(MFT_FILES // 100):
            os.makedirs(m + "/d%02d" % d)
            for i in range(100):
                with open(m + "/d%02d/file%03d" % (d, i), "wb") as f:
                    f.write(b"%d %d\n" % (d, i))
    finally:
        B.umount(m)
        os.rmdir(m)
    v = Vol(img)
    for lcn in marked:
        at, bit = v.bit_offset(lcn)
        v.img[at] &= ~bit
    v.save()


def mft_layout(img):
    v = Vol(img)
    x = mft_extents(v)
    last = x[-1][0] * v.g.cs // v.g.rs
    used = sum(1 for n, _, _ in P.records(v.img, v.g) if n >= x[1][0] * v.g.cs // v.g.rs) \
        if len(x) > 1 else 0
    rec0 = v.rec(0)
    size = [struct.unpack_from("<q", rec0, off + 0x30)[0]
            for off, t, name, nr in P.attrs(rec0) if t == 0x80 and name == "" and nr][0]
    print(len(x), len({r for _, r, _ in x}), size // v.g.rs, last, used)


def damage_mft(img, case):
    """Damage an in-use user file record past $MFT's first extent."""
    v = Vol(img)
    x = mft_extents(v)
    if len(x) < 2:
        sys.exit("one extent only")
    if case == "ext":        # the record holding the last extent
        at = v.g.rec_off(x[-1][1])
        v.img[at:at + 4] = b"XXXX"
        v.save()
        print(x[-1][1], "-")
        return
    if case == "list":       # record 0's list: the entry of the last
        import attrlist_lab as A    # extent malformed (length 27)
        al = A.Vol(img)
        rec, _, value, where = al.list_attr(0)
        value = bytearray(value)
        for off, t, _ in A.entries(value):
            if t == 0x80 and struct.unpack_from("<q", value, off + 8)[0] == x[-1][0]:
                struct.pack_into("<H", value, off + 4, 0x1b)
        al.write_list(0, rec, where, bytes(value))
        al.save()
        print(0, "-")
        return
    first = x[-1][0] * v.g.cs // v.g.rs
    for n, at, rec in P.records(v.img, v.g):
        if n < first or struct.unpack_from("<Q", rec, 0x20)[0]:
            continue
        names = P.file_names(rec)
        if not names or not names[0][2].startswith("file"):
            continue
        if case == "torn":
            v.img[at + 510] ^= 0xff
        elif case == "used":     # header: bytes in use past the record
            plain = P.unfix(v.img[at:at + v.g.rs])
            struct.pack_into("<I", plain, 0x18, v.g.rs + 8)
            v.img[at:at + v.g.rs] = P.refix(plain)
        else:
            sys.exit("unknown case " + case)
        v.save()
        parent = P.file_names(v.rec(names[0][0]))[0][2]
        print(n, parent + "/" + names[0][2])
        return
    sys.exit("no user file record past VCN %d" % x[-1][0])


def layout(img):
    v = Vol(img)
    x = v.alloc_extents(v.lookup_dir("big"))
    blocks = sum(n for _, _, runs in x for _, n in runs) * v.g.cs // v.g.ibs
    print(len(x), len({r for _, r, _ in x}), blocks)


def damage(img, case):
    v = Vol(img)
    x = v.alloc_extents(v.lookup_dir("big"))
    if len(x) < 2:
        sys.exit("one extent only")
    vcn, _, runs = x[1]
    # the first whole INDX block of the second extent: the block at the
    # first VCN of the extent that is a multiple of a block
    per = v.g.ibs // v.g.cs
    first = -(-vcn // per) * per
    pos = vcn
    clusters = []
    for lcn, n in runs:
        for k in range(n):
            if first <= pos + k < first + per:
                clusters.append(lcn + k)
        pos += n
    if len(clusters) != per:
        sys.exit("block at VCN %d not in the extent" % first)
    blk = bytearray(b"".join(bytes(v.img[c * v.g.cs:(c + 1) * v.g.cs]) for c in clusters))
    if blk[:4] != b"INDX":
        sys.exit("no INDX block at VCN %d" % first)
    if case == "magic":
        blk[:4] = b"XXXX"
    elif case == "torn":
        blk[1024 - 2] ^= 0xff        # a stride end no longer matches
    elif case == "key":
        # the first entry's file reference: a record not in use
        plain = P.unfix(blk)
        hdr = 0x18
        eofs, = struct.unpack_from("<I", plain, hdr)
        struct.pack_into("<Q", plain, hdr + eofs, 0x7fff | 1 << 48)
        blk = P.refix(plain)
    else:
        sys.exit("unknown case " + case)
    for i, c in enumerate(clusters):
        v.img[c * v.g.cs:(c + 1) * v.g.cs] = blk[i * v.g.cs:(i + 1) * v.g.cs]
    v.save()
    print(first)


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "make":
        make(sys.argv[2], sys.argv[3])
    elif cmd == "layout":
        layout(sys.argv[2])
    elif cmd == "damage":
        damage(sys.argv[2], sys.argv[3])
    elif cmd == "make-mft":
        make_mft(sys.argv[2], sys.argv[3])
    elif cmd == "mft-layout":
        mft_layout(sys.argv[2])
    elif cmd == "damage-mft":
        damage_mft(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
