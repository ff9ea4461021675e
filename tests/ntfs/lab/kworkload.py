#!/usr/bin/env python3
"""The workload of the lab's kernel power cuts (kpowercut.py), run inside
the QEMU guest on a lab base volume mounted by the Linux 7.x ntfs driver
over dm-log-writes (tests/kernel/guest/ntfs-logwrites.sh):

    kworkload.py MOUNTPOINT SEED DM-NAME

Four phases; after each of the first three every write is made durable
(sync(2), then fsync of the dm device, which sends a FLUSH) and a mark
"pN" is put into the write log (dmsetup message DM-NAME 0 mark pN), so
that the host knows which state of the volume was durable at any point
of the log.  The fourth phase is not synced; the unmount writes it.
Data are low-entropy (a seeded 32-byte chunk repeated) so that a
recording of a small volume compresses to a small fixture.

On the rich tree (rich4k, aged4k, s4k, s4kaged: base.populate_rich) p3
and p4 also touch what a volume in real use holds: compressed files
written into and truncated, DOS-named files renamed, files with reparse
points, object ids and $EA deleted, hard links added to and removed
from the file whose names need an attribute list, appends to the file
of 800 runs.  An operation the driver refuses is logged, not fatal
(the recording is of what the driver does)."""
import os
import random
import subprocess
import sys

m, seed, dm = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rnd = random.Random(seed)


def data(n):
    c = rnd.randbytes(32)
    return (c * (n // 32 + 1))[:n]


def p(*a):
    return os.path.join(m, *a)


def put(path, b, fsync=False):
    with open(p(path), "wb") as f:
        f.write(b)
        if fsync:
            f.flush()
            os.fsync(f.fileno())


def durable(mark):
    os.sync()
    fd = os.open("/dev/mapper/" + dm, os.O_RDONLY)
    try:
        os.fsync(fd)  # an empty REQ_PREFLUSH bio: everything before it is on disk
    finally:
        os.close(fd)
    subprocess.run(["dmsetup", "message", dm, "0", "mark", mark], check=True)
    print("mark", mark, flush=True)


def attempt(what, fn, *a):
    try:
        fn(*a)
    except OSError as e:
        print("%s: %s" % (what, e), flush=True)


def write_at(path, off, b, size=None):
    with open(p(path), "r+b") as f:
        f.seek(off)
        f.write(b)
        if size is not None:
            f.truncate(size)


def rich_synced():
    """p3's part on the rich tree (made durable by the mark)."""
    attempt("write into packed/text.txt", write_at, os.path.join("packed", "text.txt"), 70000,
            data(40000))
    attempt("truncate packed/mixed", os.truncate, p("packed", "mixed"), 150000)
    for i in range(0, 10, 3):
        old = "Long File Name Number %02d.document" % i
        attempt("rename dos " + old, os.rename, p("dos", old), p("dos", "Renamed Long Name %02d.txt" % i))
    attempt("rename dos across", os.rename, p("dos", "Long File Name Number 11.document"),
            p("kn", "dos-moved-here.document"))
    for n in ("ws2", "ws3", "abs", "dedup"):
        attempt("unlink reparse/" + n, os.unlink, p("reparse", n))
    for i in range(4, 12):
        attempt("unlink oid/o%02d" % i, os.unlink, p("oid", "o%02d" % i))
    for n in ("e1", "e2", "bigea"):
        attempt("unlink ea/" + n, os.unlink, p("ea", n))
    for i in range(120, 160):
        attempt("link alist %d" % i, os.link, p("alist", "linked"),
                p("alist", "hard-link-%03d-of-the-linked-file" % i))
    attempt("link alist into big", os.link, p("alist", "linked"), p("big", "alist-link-in-big"))


def rich_unsynced():
    """p4's part on the rich tree (the unmount writes it)."""
    attempt("write into packed/sub/c03", write_at, os.path.join("packed", "sub", "c03"), 2000,
            data(6000))
    attempt("truncate packed/sub/c07", os.truncate, p("packed", "sub", "c07"), 5000)
    attempt("new packed/knew", put, os.path.join("packed", "knew"), data(70000))
    attempt("rename dos 20", os.rename, p("dos", "Long File Name Number 20.document"),
            p("dos", "Long File Name Number 20 again.document"))
    for i in range(0, 40, 5):
        attempt("unlink alist %d" % i, os.unlink, p("alist", "hard-link-%03d-of-the-linked-file" % i))
    # 24 more runs at the end of the 800-run file (one cluster every other)
    cs = os.statvfs(m).f_bsize
    try:
        with open(p("alist", "shredded"), "r+b") as f:
            for i in range(24):
                f.seek((800 + 2 * i) * cs)
                f.write(data(cs))
    except OSError as e:
        print("append alist/shredded: %s" % e, flush=True)
    attempt("unlink oid/o20", os.unlink, p("oid", "o20"))
    attempt("unlink reparse/ws5", os.unlink, p("reparse", "ws5"))


rich = os.path.isdir(p("packed")) and os.path.isdir(p("alist"))


def try_xattr(path, name, value):
    try:
        os.setxattr(p(path), name, value)
    except OSError as e:
        print("setxattr %s %s: %s" % (path, name, e), flush=True)


# p1: a new directory of 120 files (resident and not), hard links into
# existing directories (one into the big one), one file fsync'ed
os.makedirs(p("kn", "sub"))
for i in range(120):
    put(os.path.join("kn", "n%03d-made-by-the-kernel" % i), data(300 if i % 3 else 9000),
        fsync=(i == 5))
os.link(p("kn", "n000-made-by-the-kernel"), p("links", "kn-link"))
os.link(p("kn", "n001-made-by-the-kernel"), p("big", "kn-link-in-big"))
durable("p1")

# p2: fragmented appends, a sparse file, a 1 MiB file, xattrs
fs = [open(p("frag", "f%d" % i), "ab") for i in range(2)]
for _ in range(12):
    for f in fs:
        f.write(data(4096))
        f.flush()
        os.fsync(f.fileno())
for f in fs:
    f.close()
with open(p("kn", "sparse"), "wb") as f:
    f.write(data(5000))
    f.seek(5 << 20)
    f.write(data(4096))
put(os.path.join("kn", "large"), data(1 << 20))
try_xattr(os.path.join("kn", "large"), "user.tag", b"k" * 300)
try_xattr("kn", "user.dir", b"on a directory")
durable("p2")

# p3: renames across directories, deletes in the big directory, 150 new
# entries in it
os.rename(p("big", "entry-0001-with-a-fairly-long-name.txt"), p("kn", "sub", "renamed"))
os.rename(p("kn", "n010-made-by-the-kernel"), p("docs", "a", "b", "moved-here"))
for i in range(2, 40):
    # (the aged tree lost the even ones before)
    n = p("big", "entry-%04d-with-a-fairly-long-name.txt" % i)
    if os.path.exists(n):
        os.unlink(n)
for i in range(150):
    put(os.path.join("big", "later-%04d" % i), b"%d\n" % i)
if rich:
    rich_synced()
durable("p3")

# p4 (not synced; the unmount writes it): more files, an overwrite in
# place, a truncation, an unlink of a hard link, a directory removed
os.makedirs(p("kn2"))
for i in range(60):
    put(os.path.join("kn2", "late-%02d" % i), data(700 if i % 2 else 5000))
with open(p("bigfile"), "r+b") as f:
    f.seek(1 << 20)
    f.write(data(65536))
os.truncate(p("frag", "f2"), 100000)
os.unlink(p("links", "second"))
os.rmdir(p("empty dir"))
if rich:
    rich_unsynced()
print("end", flush=True)
