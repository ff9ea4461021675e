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
recording of a small volume compresses to a small fixture."""
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
    os.unlink(p("big", "entry-%04d-with-a-fairly-long-name.txt" % i))
for i in range(150):
    put(os.path.join("big", "later-%04d" % i), b"%d\n" % i)
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
print("end", flush=True)
