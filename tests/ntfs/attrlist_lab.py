#!/usr/bin/env python3
"""Volumes whose files keep attributes in extension records, and damage to
their $ATTRIBUTE_LISTs, for tests/ntfs/attrlist.bats.  The format is read
with the lab's own parser (tests/ntfs/lab/ntfsparse.py), not libntfs.

  attrlist_lab.py make IMG MKFS CLUSTER     populate through ntfs-3g
  attrlist_lab.py manifest MNT              JSON manifest of a mounted volume
  attrlist_lab.py damage IMG CASE FILE      damage the list of FILE (a name),
                                            or its names (fn-parent, fn-orphan,
                                            fn-stray; root-other: a
                                            directory's index root holder
                                            names "few" as its base)
  attrlist_lab.py names IMG FILE            the names FILE's extension record
                                            that "ext-zero" destroys holds

The files: "links/target" (151 names: a non-resident list), "few" (14
names: a resident list), "streams" (80 user.* xattrs, i.e. named $DATA),
"xdir" (a directory with 60 xattrs: its $INDEX_ROOT and $INDEX_ALLOCATION
move to extension records).
"""
import hashlib
import json
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lab"))
import base as B  # noqa: E402
import ntfsparse as P  # noqa: E402

LONG = "-a-name-long-enough-to-fill-a-record-soon"


def make(img, mkfs, cs):
    subprocess.run(["truncate", "-s", "0", img], check=True)
    subprocess.run(["truncate", "-s", "32M" if cs < 65536 else "96M", img], check=True)
    subprocess.run([mkfs, "-q", "-F", "-c", str(cs), img], check=True,
                   stdout=subprocess.DEVNULL)
    m = img + ".mnt"
    if not B.mount(img, m):
        sys.exit("ntfs-3g cannot mount " + img)
    try:
        os.makedirs(m + "/links")
        with open(m + "/links/target", "wb") as f:
            f.write(b"linked content\n" * 700)
        for i in range(150):
            os.link(m + "/links/target", m + "/links/n%03d%s" % (i, LONG))
        with open(m + "/few", "wb") as f:
            f.write(b"few links\n")
        for i in range(14):
            os.link(m + "/few", m + "/links/few%02d%s" % (i, LONG))
        with open(m + "/streams", "wb") as f:
            f.write(b"streams\n")
        for i in range(80):
            os.setxattr(m + "/streams", "user.s%03d" % i, b"value %d " % i * 8)
        os.makedirs(m + "/xdir")
        for i in range(60):
            os.setxattr(m + "/xdir", "user.d%03d" % i, b"dir value %d " % i * 8)
        for i in range(120):
            with open(m + "/xdir/f%04d-some-longer-name" % i, "wb") as f:
                f.write(b"%d\n" % i)
    finally:
        B.umount(m)
        os.rmdir(m)


def manifest(m):
    """path -> {t, size, sha, xa} (as the lab's manifest, without record
    numbers, which lost+found changes); the content and streams of a file
    with many names are read once."""
    out, seen = {}, {}
    for root, dirs, files in os.walk(m):
        dirs.sort()
        for name in dirs + sorted(files):
            p = os.path.join(root, name)
            st = os.lstat(p)
            if st.st_ino not in seen:
                e = {"t": "d" if os.path.isdir(p) else "f"}
                if e["t"] == "f":
                    e["size"] = st.st_size
                    try:
                        e["sha"] = B.sha(p)
                    except OSError:
                        e["sha"] = "EIO"
                try:
                    h = hashlib.sha256()
                    for k in sorted(os.listxattr(p)):
                        if k.startswith("user."):
                            h.update(k.encode() + b"=" + os.getxattr(p, k) + b";")
                    e["xa"] = h.hexdigest()[:16]
                except OSError:
                    e["xa"] = "EIO"
                seen[st.st_ino] = e
            out[os.path.relpath(p, m)] = seen[st.st_ino]
    json.dump(out, sys.stdout, indent=0, sort_keys=True)


class Vol:
    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            self.img = bytearray(f.read())
        self.g = P.Geometry(self.img)

    def rec(self, n):
        at = self.g.rec_off(n)
        return at, P.unfix(self.img[at:at + self.g.rs])

    def put(self, n, plain):
        at = self.g.rec_off(n)
        self.img[at:at + self.g.rs] = P.refix(plain)

    def save(self):
        with open(self.path, "r+b") as f:
            f.write(self.img)

    def base_of(self, name):
        for n, at, rec in P.records(self.img, self.g):
            if struct.unpack_from("<Q", rec, 0x20)[0]:
                continue
            if not any(t == 0x20 for _, t, _, _ in P.attrs(rec)):
                continue
            for _, _, nm, _ in P.file_names(rec):
                if nm == name:
                    return n
        # names may all be in extension records: follow them to the base
        for n, at, rec in P.records(self.img, self.g):
            b = struct.unpack_from("<Q", rec, 0x20)[0] & 0xFFFFFFFFFFFF
            if b and any(nm == name for _, _, nm, _ in P.file_names(rec)):
                return b
        sys.exit("no file with a list is called %s" % name)

    def list_attr(self, n):
        """(plain record, attribute offset, value bytes, where): WHERE is
        ("res", value offset) or ("nonres", [(lcn, len)...])."""
        _, rec = self.rec(n)
        for off, t, _, nr in P.attrs(rec):
            if t != 0x20:
                continue
            if not nr:
                v, ln = P.value(rec, off)
                return rec, off, bytes(rec[v:v + ln]), ("res", v)
            size, = struct.unpack_from("<q", rec, off + 0x30)
            data = b"".join(bytes(self.img[lcn * self.g.cs:(lcn + ln) * self.g.cs])
                            for lcn, ln in P.runlist(rec, off))
            return rec, off, data[:size], ("nonres", P.runlist(rec, off))
        sys.exit("record %d has no list" % n)

    def write_list(self, n, rec, where, value):
        if where[0] == "res":
            rec[where[1]:where[1] + len(value)] = value
            self.put(n, rec)
            return
        pos = 0
        for lcn, ln in where[1]:
            k = min(ln * self.g.cs, len(value) - pos)
            self.img[lcn * self.g.cs:lcn * self.g.cs + k] = value[pos:pos + k]
            pos += k


def entries(value):
    out, off = [], 0
    while off + 26 <= len(value):
        t, ln = struct.unpack_from("<IH", value, off)
        if ln < 26:
            break
        ref, = struct.unpack_from("<Q", value, off + 16)
        out.append((off, t, ref & 0xFFFFFFFFFFFF))
        off += ln
    return out


def victim(v, b, value):
    """An entry (offset, type, record) naming an extension record, from
    the middle of the list, and that record."""
    ext = [e for e in entries(value) if e[2] != b]
    if not ext:
        sys.exit("no extension entries")
    return ext[len(ext) // 2]


def fn_parent(v, b):
    """Every name of file B (base and extension records) names a free
    record as its directory; returns the (directory, name) they had."""
    free = next(r for r in range(24, v.g.nrecords)
                if v.img[v.g.rec_off(r):v.g.rec_off(r) + 4] != b"FILE" or
                not v.rec(r)[1][0x16] & 1)
    had = []
    for r in range(v.g.nrecords):
        at = v.g.rec_off(r)
        if at is None or v.img[at:at + 4] != b"FILE":
            continue
        _, rec = v.rec(r)
        owner = struct.unpack_from("<Q", rec, 0x20)[0] & 0xFFFFFFFFFFFF or r
        if owner != b:
            continue
        for parent, _, nm, off in P.file_names(rec):
            had.append((parent, nm))
            struct.pack_into("<Q", rec, off, free)
        v.put(r, rec)
    return had


def damage(path, case, name):
    v = Vol(path)
    b = v.base_of(name)
    if case == "fn-stray":
        # one name in an extension record names a file ("streams") as its
        # directory, and its entry is removed: no index holds it, the
        # file's other names are in place; prints the name's old path
        f = v.base_of("streams")
        for r in range(v.g.nrecords):
            at = v.g.rec_off(r)
            if at is None or v.img[at:at + 4] != b"FILE":
                continue
            _, rec = v.rec(r)
            if struct.unpack_from("<Q", rec, 0x20)[0] & 0xFFFFFFFFFFFF != b:
                continue
            fns = P.file_names(rec)
            if not fns:
                continue
            parent, _, nm, off = fns[0]
            struct.pack_into("<Q", rec, off, f | (v.rec(f)[1][0x10] << 48))
            v.put(r, rec)
            v.save()
            import ntfs_patch
            ntfs_patch.Volume(path).rmentry(parent, nm)
            print("links/" + nm if parent != 5 else nm)
            return
        sys.exit("no name of %s in an extension record" % name)
    if case in ("fn-parent", "fn-orphan"):
        # fn-parent: the names' parent references damaged, their index
        # entries intact; fn-orphan: the entries name another generation
        # of the record too (sequence number + 1), so that no index
        # holds any name of this file
        had = fn_parent(v, b)
        v.save()
        if case == "fn-orphan":
            import ntfs_patch
            vol = ntfs_patch.Volume(path)
            for d, nm in had:
                kind, where, buf, _, off = vol.find_leaf(d, nm, "entry")
                mref, = struct.unpack_from("<Q", buf, off)
                struct.pack_into("<Q", buf, off, (mref + (1 << 48)) % (1 << 64))
                vol.store(d, kind, where, buf)
        print(len(had))
        return
    if case == "root-other":
        # the extension record holding directory NAME's $I30 root names
        # "few" (whose list does not name it) as its base, and the
        # directory's first index block loses its magic
        import ntfs_patch
        vol = ntfs_patch.Volume(path)
        h, _, _, bs, runs = vol.index(b)
        if h == b:
            sys.exit("the root of %s is in its base record" % name)
        f = v.base_of("few")
        _, xr = v.rec(h)
        struct.pack_into("<Q", xr, 0x20, f | v.rec(f)[1][0x10] << 48)
        v.put(h, xr)
        v.save()
        vol = ntfs_patch.Volume(path)
        vol.pwrite(vol.offset(runs, 0), b"XXXX")
        return
    rec, aoff, value, where = v.list_attr(b)
    value = bytearray(value)
    off, t, x = victim(v, b, value)
    if case == "type":
        struct.pack_into("<I", value, off, 0x70 if t != 0x70 else 0x60)
    elif case == "len":
        struct.pack_into("<H", value, off + 4, 0x1b)
    elif case == "nlen":
        value[off + 6] = 200
    elif case == "vcn":
        struct.pack_into("<q", value, off + 8, 77)
    elif case == "mref":
        struct.pack_into("<Q", value, off + 16, (struct.unpack_from("<Q", value, off + 16)[0] + 1))
    elif case == "inst":
        struct.pack_into("<H", value, off + 24, 0x3fff)
    elif case == "zero-entry":
        ln, = struct.unpack_from("<H", value, off + 4)
        value[off:off + ln] = bytes(ln)
    elif case == "size":
        # the list's value cut short by its last entry
        last = entries(value)[-1][0]
        if where[0] == "res":
            struct.pack_into("<I", rec, aoff + 0x10, last)
        else:
            struct.pack_into("<qq", rec, aoff + 0x30, last, last)
        v.put(b, rec)
        v.save()
        return
    elif case.startswith("ext-"):
        _, xr = v.rec(x)
        at = v.g.rec_off(x)
        if case == "ext-zero":
            v.img[at:at + v.g.rs] = bytes(v.g.rs)
        elif case == "ext-baad":
            v.img[at:at + 4] = b"BAAD"
        elif case == "ext-base":      # base reference: another directory
            struct.pack_into("<Q", xr, 0x20, 5 | 5 << 48)
            v.put(x, xr)
        elif case == "ext-xdir":      # base reference: "xdir", whose
            d = v.base_of("xdir")     # list does not name it (checked after)
            struct.pack_into("<Q", xr, 0x20, d | v.rec(d)[1][0x10] << 48)
            v.put(x, xr)
        elif case == "ext-base0":     # base reference lost
            struct.pack_into("<Q", xr, 0x20, 0)
            v.put(x, xr)
        elif case == "ext-free":      # marked free (bitmap too)
            fl, = struct.unpack_from("<H", xr, 0x16)
            struct.pack_into("<H", xr, 0x16, fl & ~1)
            v.put(x, xr)
        else:
            sys.exit("unknown case " + case)
        v.save()
        return
    else:
        sys.exit("unknown case " + case)
    v.write_list(b, rec, where, bytes(value))
    v.save()


def names(path, name):
    """Paths (relative to the root: directory "links") of the names held in
    the record "ext-zero" destroys."""
    v = Vol(path)
    b = v.base_of(name)
    _, _, value, _ = v.list_attr(b)
    _, _, x = victim(v, b, value)
    _, xr = v.rec(x)
    for _, _, nm, _ in P.file_names(xr):
        print("links/" + nm if nm != name else nm)


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "make":
        make(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif cmd == "manifest":
        manifest(sys.argv[2])
    elif cmd == "damage":
        damage(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "names":
        names(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
