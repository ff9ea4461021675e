#!/usr/bin/env python3
"""Power cuts under the Linux 7.x ntfs driver (kernel tier, QEMU).

Recording (once per base, QEMU): the base image is the guest's /dev/vda;
dm-log-writes (tests/kernel/guest/ntfs-logwrites.sh) passes the driver's
I/O to it and logs every write, in the order it became durable, with its
FLUSH/FUA flags, to /dev/vdb, while kworkload.py runs on the mounted
volume and puts a mark in the log after each of its sync points.  The log
must replay on the host to exactly the image the guest left.  It is kept
xz-compressed as BASE/klog.xz (for the CI base kern4k: kfixture/).

Cuts (deterministic, on the host): the base plus the first K entries of
the log, entry K torn after S of the volume's sectors (S = 0: not at
all; a disk writes one logical sector atomically, so on a 4Kn base the
tear falls on a 4096-byte boundary).  K is
chosen at flush/FUA boundaries (everything before is durable) and between
them (a prefix of what the disk's cache took since the last flush).

Expectations (not from fsck.ntfs): for a cut after mark pN, the volume
of mark pN (the log replayed up to it) read through ntfs-3g is the
"before" manifest and its map (ntfsparse) says which records and clusters
each file has; a file none of whose records and clusters the writes after
the mark touched must survive the repair ("nothing lost").  Before the
first mark, the base itself is the reference.

    kpowercut.py parse LOG[.xz]           # one line per entry
    kpowercut.py fixture                  # remake kfixture/ (root, QEMU)

See README.md ("kernel power cuts")."""
import json
import lzma
import os
import random
import shutil
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import base as B  # noqa: E402

TOP = os.path.abspath(os.path.join(HERE, "../../.."))
CACHE = os.environ.get("FSFORGE_CACHE") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "fsforge")

# Documentation/admin-guide/device-mapper/log-writes.rst and
# drivers/md/dm-log-writes.c: a super block in log sector 0, then entries;
# each entry is one log sector (struct log_write_entry, a mark's text
# inline after it) followed by nr_sectors sectors of data (none for a
# flush, a mark or a discard).
MAGIC, VERSION = 0x6a736677736872, 1
FLUSH, FUA, DISCARD, MARK, META = 1, 2, 4, 8, 16


class Entry:
    __slots__ = ("flags", "off", "data", "mark", "length")

    def __init__(self, flags, off, data, mark, length):
        self.flags, self.off, self.data, self.mark, self.length = flags, off, data, mark, length


def parse(log):
    """The entries of a dm-log-writes log (bytes), and the bytes it uses."""
    magic, version, nr, ss = struct.unpack_from("<QQQI", log, 0)
    if magic != MAGIC or version != VERSION:
        raise ValueError("not a dm-log-writes log (magic %#x version %d)" % (magic, version))
    pos, out = ss, []
    for i in range(nr):
        if pos + ss > len(log):
            raise ValueError("log truncated at entry %d of %d" % (i, nr))
        sector, nsec, flags, dlen = struct.unpack_from("<QQQQ", log, pos)
        head = pos
        pos += ss
        mark, data = None, None
        if flags & MARK:
            mark = log[head + 32:head + 32 + dlen].decode("utf-8", "replace")
        elif not flags & DISCARD and nsec:
            data = log[pos:pos + nsec * ss]
            if len(data) != nsec * ss:
                raise ValueError("log truncated in the data of entry %d" % i)
            pos += nsec * ss
        out.append(Entry(flags, sector * ss, data, mark, nsec * ss))
    return out, pos


def load(path):
    with open(path, "rb") as f:
        b = f.read()
    if path.endswith(".xz"):
        b = lzma.decompress(b)
    return parse(b)[0]


def describe(e):
    fl = "|".join(n for n, b in (("FLUSH", FLUSH), ("FUA", FUA), ("DISCARD", DISCARD),
                                 ("MARK", MARK), ("META", META)) if e.flags & b) or "-"
    if e.mark is not None:
        return "mark %s" % e.mark
    return "%-12s off %10d len %7d" % (fl, e.off, e.length)


def apply(img, entries, k, torn=0, sector=512):
    """IMG (bytearray) plus the first K entries, entry K torn after TORN
    sectors of SECTOR bytes (the disk's logical sector: written whole)."""
    for e in entries[:k]:
        if e.data is not None:
            img[e.off:e.off + len(e.data)] = e.data
    if torn and k < len(entries) and entries[k].data is not None:
        e = entries[k]
        # up to the end of a whole sector (the write need not start on one)
        n = min(len(e.data), (e.off // sector + torn) * sector - e.off)
        if n < len(e.data):
            img[e.off:e.off + n] = e.data[:n]


def apply_reordered(img, entries, k, seed):
    """IMG plus the log up to the last FLUSH/FUA boundary at or before K,
    then a seeded half of the writes between that boundary and K: a disk
    with a volatile cache may persist any subset of what it took since the
    last flush, in any order."""
    b = max(x for x in boundaries(entries) if x <= k)
    apply(img, entries, b)
    rnd = random.Random(seed)
    for e in entries[b:k]:
        if e.data is not None and rnd.random() < 0.5:
            img[e.off:e.off + len(e.data)] = e.data


def marks(entries):
    """[(name, number of entries before it)] of the workload's marks."""
    return [(e.mark, i) for i, e in enumerate(entries) if e.mark is not None and e.mark[:1] == "p"]


def boundaries(entries):
    """Prefix lengths after which everything logged is durable: after a
    FLUSH (an empty flush or a write with PREFLUSH) or a FUA write."""
    return sorted({0} | {i + 1 for i, e in enumerate(entries) if e.flags & (FLUSH | FUA)})


def cut_points(entries, count, seed, sector=512):
    """COUNT (k, torn) pairs: about a third at flush/FUA boundaries, the
    rest between them (torn writes among those, after a whole number of
    SECTOR-byte sectors), each group spread over
    the log.  A negative torn -S means "reordered with seed S"
    (apply_reordered): one in three of the cuts between boundaries."""
    rnd = random.Random(seed)
    writes = [i for i, e in enumerate(entries) if e.data is not None]
    if not writes or not count:
        return []
    bnd = [b for b in boundaries(entries) if b <= writes[-1]]
    nb = max(1, count // 3)
    # the boundary nearest to each of NB points spread over the log (the
    # flushes themselves crowd where the workload fsyncs)
    at = set()
    for i in range(nb):
        want = (writes[-1] * (2 * i + 1)) // (2 * nb) + rnd.randrange(-3, 4)
        left = [x for x in bnd if x not in at]
        if left:
            at.add(min(left, key=lambda x: abs(x - want)))
    out = {(k, 0) for k in at}
    nw = count - len(out)
    for j in range(max(0, nw)):
        lo = len(writes) * j // nw
        hi = max(lo + 1, len(writes) * (j + 1) // nw)
        k = writes[rnd.randrange(lo, hi)]
        n = len(entries[k].data) // sector
        torn = rnd.choice([t for t in (0, 1, 3, 7) if t < n] or [0])
        if j % 3 == 2:
            torn = -(1 + rnd.randrange(999))
        out.add((k, torn))
    return sorted(out)


def mark_of(entries, k):
    """The last mark at or before prefix K: (name, index) or None (base)."""
    best = None
    for name, i in marks(entries):
        if i <= k:
            best = (name, i)
    return best


# --- recording (QEMU) ---------------------------------------------------------

def module():
    """dm-log-writes.ko of the cached sid kernel, xz-compressed."""
    kver = open(os.path.join(CACHE, "kernel", "current")).read().strip()
    p = os.path.join(CACHE, "kernel", kver, "root/usr/lib/modules", kver,
                     "kernel/drivers/md/dm-log-writes.ko.xz")
    if not os.path.exists(p):
        raise RuntimeError("%s missing (tests/kernel/setup)" % p)
    return p


def record(bdir, seed=1, log=print):
    """Record the kernel workload on BDIR/image into BDIR/klog.xz (once).
    A 4Kn base is recorded on QEMU's default disk (512-byte logical
    sectors): on 4Kn disks (vm-run --disk FILE,bs=4096) the 7.2 driver
    fails its MFT record writes with EIO ("I/O error while writing mft
    record"), so the recording would hold no workload; the cuts of such a
    base still tear only between its 4096-byte sectors (apply)."""
    out = os.path.join(bdir, "klog.xz")
    if os.path.exists(out):
        return out
    share = os.path.join(bdir, "kshare")
    shutil.rmtree(share, ignore_errors=True)
    os.makedirs(share)
    img, lg = os.path.join(share, "v.img"), os.path.join(share, "log.img")
    subprocess.run(["cp", "--sparse=always", os.path.join(bdir, "image"), img], check=True)
    subprocess.run(["truncate", "-s", "512M", lg], check=True)
    with open(os.path.join(share, "dm-log-writes.ko"), "wb") as f:
        subprocess.run(["xz", "-dc", module()], stdout=f, check=True)
    shutil.copy(os.path.join(HERE, "kworkload.py"), share)
    log("kpowercut: recording the kernel workload on %s in QEMU (a few minutes)" % bdir)
    r = subprocess.run([os.path.join(TOP, "tests/kernel/vm-run"), "--sid", "--mem", "1024",
                        "--timeout", "1200", "--share", share, "--disk", img, "--disk", lg,
                        os.path.join(TOP, "tests/kernel/guest/ntfs-logwrites.sh"), str(seed)],
                       capture_output=True, text=True)
    phase = open(os.path.join(share, "phase")).read().strip() if os.path.exists(
        os.path.join(share, "phase")) else "?"
    if r.returncode != 0 or phase != "done":
        raise RuntimeError("kernel recording failed: vm-run exit %d, phase %s\n%s" % (
            r.returncode, phase, r.stderr[-3000:]))
    with open(lg, "rb") as f:
        raw = f.read()
    entries, used = parse(raw)
    with open(os.path.join(bdir, "image"), "rb") as f:
        a = bytearray(f.read())
    apply(a, entries, len(entries))
    with open(img, "rb") as f:
        if f.read() != a:
            raise RuntimeError("the dm-log-writes log does not replay to the kernel's result")
    with open(out + ".tmp", "wb") as f:
        f.write(lzma.compress(raw[:used], preset=9 | lzma.PRESET_EXTREME))
    os.rename(out + ".tmp", out)
    shutil.copy(os.path.join(share, "workload.log"), os.path.join(bdir, "kworkload.log"))
    shutil.rmtree(share, ignore_errors=True)
    return out


# --- reference states at the marks --------------------------------------------

def prepare(bdir):
    """BDIR/kmarks/NAME.json ({"at", "manifest", "map"}) for every mark of
    the recording, read through ntfs-3g from the log replayed up to it.
    Also checks that the recording holds the workload (what kworkload.py
    made is there at its marks)."""
    entries = load(os.path.join(bdir, "klog.xz"))
    d = os.path.join(bdir, "kmarks")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(bdir, "image"), "rb") as f:
        base = f.read()
    want = {"p1": ["kn/n119-made-by-the-kernel", "big/kn-link-in-big"],
            "p2": ["kn/large", "kn/sparse"],
            "p3": ["kn/sub/renamed", "big/later-0149"]}
    for name, at in marks(entries) + [("end", len(entries))]:
        js = os.path.join(d, name + ".json")
        if os.path.exists(js):
            continue
        img = bytearray(base)
        apply(img, entries, at)
        p = os.path.join(d, name + ".img")
        with open(p, "wb") as f:
            f.write(img)
        m = os.path.join(d, "mnt")
        if not B.mount(p, m, ro=True):
            raise RuntimeError("ntfs-3g cannot mount the volume at mark %s" % name)
        try:
            man = B.manifest(m)
        finally:
            B.umount(m)
        # (not fatal: a bind of /dev/shm elsewhere may hold a propagated copy)
        shutil.rmtree(m, ignore_errors=True)
        miss = [x for x in want.get(name, []) if x not in man]
        if miss:
            raise RuntimeError("mark %s: the workload's %s missing" % (name, ", ".join(miss)))
        fmap, geo = B.file_map(p, man)
        os.unlink(p)
        with open(js + ".tmp", "w") as f:
            json.dump({"at": at, "manifest": man, "map": {"files": fmap, "geo": geo}}, f)
        os.rename(js + ".tmp", js)
    return entries


def reference(bdir, entries, k, path):
    """(manifest, map) of the durable state before cut K; writes its image
    to PATH (the base when no mark precedes K)."""
    mk = mark_of(entries, k)
    with open(os.path.join(bdir, "image"), "rb") as f:
        img = bytearray(f.read())
    if mk is None:
        with open(os.path.join(bdir, "manifest.json")) as f:
            man = json.load(f)
        with open(os.path.join(bdir, "map.json")) as f:
            fmap = json.load(f)
    else:
        with open(os.path.join(bdir, "kmarks", mk[0] + ".json")) as f:
            j = json.load(f)
        man, fmap = j["manifest"], j["map"]
        apply(img, entries, mk[1])
    with open(path, "wb") as f:
        f.write(img)
    return man, fmap


# --- CI fixture -------------------------------------------------------------------

def fixture():
    """Remake kfixture/kern4k.image.xz and kern4k.klog.xz: the kern4k base
    (our mkfs.ntfs, filled by ntfs-3g with low-entropy data) and its
    recording.  Root; QEMU (several minutes)."""
    build = os.environ.get("FSFORGE_BUILDDIR", os.path.join(TOP, "build"))
    mkfs = os.environ.get("MKFS_NTFS", os.path.join(build, "mkfs/mkfs.ntfs"))
    out = "/dev/shm/fsforge-kfixture-%d" % os.getpid()
    os.environ["LAB_NEW_FIXTURE"] = "1"
    try:
        d = B.make("kern4k", out, mkfs, None, 1)
        record(d, 1)
        os.makedirs(B.FIXTURE, exist_ok=True)
        with open(os.path.join(B.FIXTURE, "kern4k.image.xz"), "wb") as f:
            subprocess.run(["xz", "-9e", "-c", os.path.join(d, "image")], stdout=f, check=True)
        shutil.copy(os.path.join(d, "klog.xz"), os.path.join(B.FIXTURE, "kern4k.klog.xz"))
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "parse":
        es = load(sys.argv[2])
        for i, e in enumerate(es):
            print("%6d %s" % (i, describe(e)))
        return 0
    if len(sys.argv) == 2 and sys.argv[1] == "fixture":
        fixture()
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
