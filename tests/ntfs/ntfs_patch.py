#!/usr/bin/env python3
"""ntfs_patch.py IMAGE COMMAND ARGS...: targeted damage to the directory
structure of an NTFS volume, for the connectivity tests.  Records are
named by MFT record number (what ntfs-3g shows as the inode number).
Independent of libntfs: the few structures needed are parsed here from
the format documentation (boot sector, FILE/INDX records and their update
sequence arrays, $FILE_NAME, $INDEX_ROOT, index entries).

Commands:
  parent REC NEWPARENT [NAME]   every $FILE_NAME of REC (or the one called
                                NAME) names NEWPARENT
  rmentry DIR NAME              remove NAME's entry from DIR's index
  addentry DIR REC              add an entry for REC's $FILE_NAME to DIR's
                                index (its key's parent reference: DIR)
  rename REC OLD NEW            $FILE_NAME OLD of REC becomes NEW (same
                                length), and so does its entry in the index
                                of its directory
  renamefn REC OLD NEW          only the $FILE_NAME (same length)
  parentseq REC SEQ             every $FILE_NAME of REC names its parent
                                with sequence number SEQ
  keyseq DIR NAME SEQ           the same in NAME's index entry key in DIR
  keyflags DIR NAME XOR         flip bits XOR of the file attributes in
                                NAME's index entry key in DIR
  info REC                      print REC's sequence number, security id
                                and names (parent record, parent sequence,
                                name, namespace) as JSON
  holders REC                   print the records holding REC's attributes
  levels DIR                    print the depth of DIR's index tree (1: the
                                root alone)
"""
import json
import struct
import sys

AT_ATTRIBUTE_LIST, AT_FILE_NAME, AT_DATA = 0x20, 0x30, 0x80
AT_INDEX_ROOT, AT_INDEX_ALLOCATION = 0x90, 0xA0
END = 0xFFFFFFFF


def unfix(buf):
    buf = bytearray(buf)
    ofs, cnt = struct.unpack_from("<HH", buf, 4)
    usn = buf[ofs:ofs + 2]
    for i in range(1, cnt):
        assert buf[i * 512 - 2:i * 512] == usn, "torn record"
        buf[i * 512 - 2:i * 512] = buf[ofs + 2 * i:ofs + 2 * i + 2]
    return buf


def refix(buf):
    buf = bytearray(buf)
    ofs, cnt = struct.unpack_from("<HH", buf, 4)
    usn = buf[ofs:ofs + 2]
    for i in range(1, cnt):
        buf[ofs + 2 * i:ofs + 2 * i + 2] = buf[i * 512 - 2:i * 512]
        buf[i * 512 - 2:i * 512] = usn
    return buf


def runs_of(rec, off):
    """[(lcn, len)] of the non-resident attribute at OFF."""
    mpo, = struct.unpack_from("<H", rec, off + 0x20)
    p, lcn, out = off + mpo, 0, []
    while rec[p]:
        lb, ob = rec[p] & 15, rec[p] >> 4
        ln = int.from_bytes(rec[p + 1:p + 1 + lb], "little")
        d = int.from_bytes(rec[p + 1 + lb:p + 1 + lb + ob], "little", signed=True)
        lcn += d
        out.append((lcn if ob else None, ln))
        p += 1 + lb + ob
    return out


def attrs(rec):
    """(offset, type, name) of each attribute of a fixed-up record."""
    off, = struct.unpack_from("<H", rec, 0x14)
    while True:
        t, ln = struct.unpack_from("<II", rec, off)
        if t == END:
            return
        if ln < 16 or off + ln > len(rec):
            raise ValueError("bad attribute at %d" % off)
        nlen, noff = rec[off + 9], struct.unpack_from("<H", rec, off + 10)[0]
        yield off, t, rec[off + noff:off + noff + 2 * nlen].decode("utf-16-le")
        off += ln


def upkey(name):
    return (name.upper(), name)


class Volume:
    def __init__(self, path):
        self.f = open(path, "r+b")
        b = self.f.read(512)
        bps, = struct.unpack_from("<H", b, 11)
        spc = b[13]
        if spc > 0x80:
            spc = 1 << (256 - spc)
        self.cs = bps * spc
        mft, = struct.unpack_from("<q", b, 0x30)
        cpr = struct.unpack_from("<b", b, 0x40)[0]
        self.rs = cpr * self.cs if cpr > 0 else 1 << -cpr
        self.mft_runs = [(mft, 1 << 40)]
        rec0 = self.read(0)
        for off, t, name in attrs(rec0):
            if t == AT_DATA and not name:
                self.mft_runs = runs_of(rec0, off)

    def offset(self, runs, byte):
        pos = 0
        for lcn, ln in runs:
            if byte < pos + ln * self.cs:
                return lcn * self.cs + byte - pos
            pos += ln * self.cs
        raise IndexError(byte)

    def pread(self, at, n):
        self.f.seek(at)
        return self.f.read(n)

    def pwrite(self, at, data):
        self.f.seek(at)
        self.f.write(data)

    def read(self, n):
        return unfix(self.pread(self.offset(self.mft_runs, n * self.rs), self.rs))

    def write(self, n, rec):
        self.pwrite(self.offset(self.mft_runs, n * self.rs), refix(rec))

    def seq(self, n):
        return struct.unpack_from("<H", self.read(n), 0x10)[0]

    def file_names(self, rec):
        """(value offset, parent, name, type) of each $FILE_NAME."""
        for off, t, _ in attrs(rec):
            if t == AT_FILE_NAME:
                v = off + struct.unpack_from("<H", rec, off + 0x14)[0]
                ln = rec[v + 0x40]
                name = rec[v + 0x42:v + 0x42 + 2 * ln].decode("utf-16-le")
                parent = struct.unpack_from("<Q", rec, v)[0] & ((1 << 48) - 1)
                yield v, parent, name, rec[v + 0x41]

    # --- indexes -------------------------------------------------------
    def holders(self, d):
        """The records holding D's attributes (its $ATTRIBUTE_LIST)."""
        rec, out = self.read(d), [d]
        for off, t, _ in attrs(rec):
            if t == AT_ATTRIBUTE_LIST:
                if rec[off + 8]:
                    ln, = struct.unpack_from("<Q", rec, off + 0x30)
                    lst = b"".join(self.pread(lcn * self.cs, n * self.cs)
                                   for lcn, n in runs_of(rec, off))[:ln]
                else:
                    v = off + struct.unpack_from("<H", rec, off + 0x14)[0]
                    ln, = struct.unpack_from("<I", rec, off + 0x10)
                    lst = rec[v:v + ln]
                p = 0
                while p + 26 <= len(lst):
                    el, = struct.unpack_from("<H", lst, p + 4)
                    r = struct.unpack_from("<Q", lst, p + 16)[0] & ((1 << 48) - 1)
                    if r not in out:
                        out.append(r)
                    p += el
        return out

    def index(self, d, index="$I30"):
        """(record holding the root, its contents, root value offset,
        block size, allocation runs) of D's index named INDEX"""
        root = runs = None
        for h in self.holders(d):
            rec = self.read(h)
            for off, t, name in attrs(rec):
                if t == AT_INDEX_ROOT and name == index:
                    root = h, rec, off + struct.unpack_from("<H", rec, off + 0x14)[0]
                if t == AT_INDEX_ALLOCATION and name == index:
                    runs = runs_of(rec, off)
        h, rec, v = root
        bs, = struct.unpack_from("<I", rec, v + 8)
        return h, rec, v, bs, runs

    def block_at(self, runs, bs, vcn):
        unit = self.cs if bs >= self.cs else 512
        at = self.offset(runs, vcn * unit)
        return at, unfix(self.pread(at, bs))

    @staticmethod
    def entries(buf, ih):
        """(offset, length, flags, name) of each entry of the node whose
        index header is at IH, end entry included (name None)."""
        eo, il = struct.unpack_from("<II", buf, ih)
        off, out = ih + eo, []
        while off < ih + il:
            ln, kl, fl = struct.unpack_from("<HHI", buf, off + 8)
            name = None
            if not fl & 2:
                n = buf[off + 16 + 0x40]
                name = buf[off + 16 + 0x42:off + 16 + 0x42 + 2 * n].decode("utf-16-le")
            out.append((off, ln, fl, name))
            if fl & 2:
                break
            off += ln
        return out

    def find_leaf(self, d, name, want):
        """Walk DIR's tree towards NAME.  WANT='entry': the node holding
        NAME's entry; WANT='leaf': the leaf where NAME would go.  Returns
        (kind, where, buf, ih, entry offset or insertion offset)."""
        h, rec, v, bs, runs = self.index(d)
        kind, where, buf, ih = "root", h, rec, v + 16
        while True:
            child = None
            for off, ln, fl, n in self.entries(buf, ih):
                if n is not None and n == name and want == "entry":
                    return kind, where, buf, ih, off
                if n is None or upkey(n) > upkey(name):
                    if fl & 1:
                        child = struct.unpack_from("<q", buf, off + ln - 8)[0]
                    elif want == "leaf":
                        return kind, where, buf, ih, off
                    break
            if child is None:
                raise KeyError(name)
            where, buf = self.block_at(runs, bs, child)
            kind, ih = "block", 0x18

    def store(self, d, kind, where, buf):
        if kind == "root":
            self.write(where, buf)
        else:
            self.pwrite(where, refix(buf))

    def resize_node(self, kind, buf, ih, at, delta, index="$I30"):
        """Open (DELTA > 0) or close a gap of DELTA bytes at AT in the
        node whose index header is at IH (of the index named INDEX)."""
        eo, il, alloc = struct.unpack_from("<III", buf, ih)
        if kind == "root":
            used, = struct.unpack_from("<I", buf, 0x18)
            assert used + delta <= len(buf), "record full"
            src = at if delta > 0 else at - delta
            tail = bytes(buf[src:used])
            buf[src + delta:src + delta + len(tail)] = tail
            if delta < 0:
                buf[used + delta:used] = bytes(-delta)
            struct.pack_into("<I", buf, 0x18, used + delta)
            # the $INDEX_ROOT attribute holding IH
            for off, t, name in attrs(buf):
                if t == AT_INDEX_ROOT and name == index:
                    ln, = struct.unpack_from("<I", buf, off + 4)
                    vl, = struct.unpack_from("<I", buf, off + 0x10)
                    struct.pack_into("<I", buf, off + 4, ln + delta)
                    struct.pack_into("<I", buf, off + 0x10, vl + delta)
                    break
            struct.pack_into("<II", buf, ih + 4, il + delta, alloc + delta)
        else:
            assert il + delta <= alloc, "index block full"
            src = at if delta > 0 else at - delta
            tail = bytes(buf[src:ih + il])
            buf[src + delta:src + delta + len(tail)] = tail
            if delta < 0:
                buf[ih + il + delta:ih + il] = bytes(-delta)
            struct.pack_into("<I", buf, ih + 4, il + delta)

    def rmentry(self, d, name):
        kind, where, buf, ih, off = self.find_leaf(d, name, "entry")
        ln, _, fl = struct.unpack_from("<HHI", buf, off + 8)
        assert not fl & 1, "entry with a sub-node"
        self.resize_node(kind, buf, ih, off, -ln)
        self.store(d, kind, where, buf)

    def addentry(self, d, r):
        rec = self.read(r)
        v, _, name, _ = next(self.file_names(rec))
        key = bytearray(rec[v:v + 0x42 + 2 * rec[v + 0x40]])
        struct.pack_into("<Q", key, 0, d | self.seq(d) << 48)
        ln = (16 + len(key) + 7) // 8 * 8
        ent = bytearray(ln)
        struct.pack_into("<QHHI", ent, 0, r | self.seq(r) << 48, ln, len(key), 0)
        ent[16:16 + len(key)] = key
        kind, where, buf, ih, off = self.find_leaf(d, name, "leaf")
        self.resize_node(kind, buf, ih, off, ln)
        buf[off:off + ln] = ent
        self.store(d, kind, where, buf)

    def renamefn(self, r, old, new):
        assert len(old) == len(new)
        rec = self.read(r)
        for v, parent, name, _ in self.file_names(rec):
            if name == old:
                rec[v + 0x42:v + 0x42 + 2 * len(new)] = new.encode("utf-16-le")
                self.write(r, rec)
                return parent
        raise KeyError(old)

    def rename(self, r, old, new):
        parent = self.renamefn(r, old, new)
        kind, where, buf, ih, off = self.find_leaf(parent, old, "entry")
        at = off + 16 + 0x42
        buf[at:at + 2 * len(new)] = new.encode("utf-16-le")
        self.store(parent, kind, where, buf)

    def parentseq(self, r, seq):
        rec = self.read(r)
        for v, p, _, _ in list(self.file_names(rec)):
            struct.pack_into("<Q", rec, v, p | seq << 48)
        self.write(r, rec)

    def keyseq(self, d, name, seq):
        kind, where, buf, ih, off = self.find_leaf(d, name, "entry")
        p = struct.unpack_from("<Q", buf, off + 16)[0] & ((1 << 48) - 1)
        struct.pack_into("<Q", buf, off + 16, p | seq << 48)
        self.store(d, kind, where, buf)

    def keyflags(self, d, name, xor):
        kind, where, buf, ih, off = self.find_leaf(d, name, "entry")
        fa, = struct.unpack_from("<I", buf, off + 16 + 0x38)
        struct.pack_into("<I", buf, off + 16 + 0x38, fa ^ xor)
        self.store(d, kind, where, buf)

    def parent(self, r, p, only=None):
        """every name of R (or only the name ONLY) says its parent is P"""
        rec = self.read(r)
        for v, _, name, _ in list(self.file_names(rec)):
            if only is None or name == only:
                struct.pack_into("<Q", rec, v, p | self.seq(p) << 48)
        self.write(r, rec)


def info(vol, r):
    rec = vol.read(r)
    out = {"seq": vol.seq(r), "security_id": None, "names": []}
    for off, t, _ in attrs(rec):
        if t == 0x10:
            v = off + struct.unpack_from("<H", rec, off + 0x14)[0]
            ln, = struct.unpack_from("<I", rec, off + 0x10)
            if ln >= 0x38:
                out["security_id"], = struct.unpack_from("<I", rec, v + 0x34)
    for v, _, name, ns in vol.file_names(rec):
        pref, = struct.unpack_from("<Q", rec, v)
        out["names"].append([pref & ((1 << 48) - 1), pref >> 48, name, ns])
    print(json.dumps(out))


def levels(vol, d):
    h, rec, v, bs, runs = vol.index(d)

    def depth(buf, ih):
        sub = 0
        for off, ln, fl, _ in Volume.entries(buf, ih):
            if fl & 1:
                vcn, = struct.unpack_from("<q", buf, off + ln - 8)
                sub = max(sub, depth(vol.block_at(runs, bs, vcn)[1], 0x18))
        return 1 + sub
    print(depth(rec, v + 16))


def main():
    vol = Volume(sys.argv[1])
    cmd, args = sys.argv[2], sys.argv[3:]
    if cmd == "parent":
        vol.parent(int(args[0]), int(args[1]), *args[2:3])
    elif cmd == "rmentry":
        vol.rmentry(int(args[0]), args[1])
    elif cmd == "addentry":
        vol.addentry(int(args[0]), int(args[1]))
    elif cmd == "rename":  # in NEW, backslash-0 is a NUL unit
        vol.rename(int(args[0]), args[1], args[2].replace("\\0", "\0"))
    elif cmd == "renamefn":
        vol.renamefn(int(args[0]), args[1], args[2].replace("\\0", "\0"))
    elif cmd == "parentseq":
        vol.parentseq(int(args[0]), int(args[1]))
    elif cmd == "keyseq":
        vol.keyseq(int(args[0]), args[1], int(args[2]))
    elif cmd == "keyflags":
        vol.keyflags(int(args[0]), args[1], int(args[2], 0))
    elif cmd == "info":
        info(vol, int(args[0]))
    elif cmd == "holders":
        print(" ".join(str(h) for h in vol.holders(int(args[0]))))
    elif cmd == "levels":
        levels(vol, int(args[0]))
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
