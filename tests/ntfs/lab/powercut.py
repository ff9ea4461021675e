"""Power cuts, emulated on the host: a workload writes through ntfs-3g on
a copy of the base volume while strace records every pwrite64 ntfs-3g
issues to the image (offset and bytes).  A cut after write k is the base
plus the first k writes; the k+1-th may be torn (only its first sectors
reach the disk).  The recording is made once per base; every cut is then
deterministic.  (ntfs-3g writes synchronously with no cache of its own,
so what it has passed to pwrite64 is what a disk with a write-through
cache would hold.)"""
import os
import random
import re
import struct
import subprocess
import time

import base as B

CALL = re.compile(r"^\d+\s+pwrite64\((\d+), .*, (\d+), (\d+)\)\s+=\s+(\d+)")
HEX = re.compile(r'^\d*\s*\| [0-9a-f]{5}  ((?:[0-9a-f]{2} {1,2}){1,16})')
# the workload's renames: old path -> new path (a file found at either
# one after a cut is where ntfs-3g left it)
RENAMES = {"big/entry-0001-with-a-fairly-long-name.txt": "new/sub/renamed"}


def workload(m, seed):
    rnd = random.Random(seed)
    os.makedirs(os.path.join(m, "new/sub"))
    for i in range(150):
        with open(os.path.join(m, "new", "n%03d-created-while-writing" % i), "wb") as f:
            f.write(rnd.randbytes(200 if i % 3 else 7000))
    for i in range(2):
        with open(os.path.join(m, "frag", "f%d" % i), "ab") as f:
            f.write(rnd.randbytes(50000))
    for old, new in RENAMES.items():
        os.rename(os.path.join(m, old), os.path.join(m, new))
    for i in range(2, 40):
        os.unlink(os.path.join(m, "big/entry-%04d-with-a-fairly-long-name.txt" % i))
    with open(os.path.join(m, "new/large"), "wb") as f:
        for _ in range(8):
            f.write(rnd.randbytes(128 << 10))
    os.setxattr(os.path.join(m, "new/large"), "user.tag", b"x" * 500)
    for i in range(150):
        with open(os.path.join(m, "big", "later-%04d" % i), "wb") as f:
            f.write(b"%d\n" % i)


def record(base_dir, seed):
    """Record the workload's writes on BASE_DIR/image into BASE_DIR/writes."""
    out = os.path.join(base_dir, "writes")
    if os.path.exists(out):
        return out
    img = os.path.join(base_dir, "pc.img")
    m = os.path.join(base_dir, "pcmnt")
    tr = os.path.join(base_dir, "trace")
    subprocess.run(["cp", "--sparse=always", os.path.join(base_dir, "image"), img], check=True)
    os.makedirs(m, exist_ok=True)
    st = subprocess.Popen(["strace", "-f", "-qq", "-e", "trace=pwrite64", "-e", "write=all",
                           "-s", "0", "-o", tr, "ntfs-3g", "-o", "noatime,no_detach", img, m],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            if os.path.ismount(m):
                break
            time.sleep(0.1)
        else:
            raise RuntimeError("ntfs-3g did not mount under strace")
        workload(m, seed)
    finally:
        B.umount(m)
        try:
            st.wait(timeout=120)
        except subprocess.TimeoutExpired:
            st.kill()
    writes = parse(tr)
    # the recording must replay to the volume ntfs-3g left
    with open(os.path.join(base_dir, "image"), "rb") as f:
        a = bytearray(f.read())
    for off, data in writes:
        a[off:off + len(data)] = data
    with open(img, "rb") as f:
        if f.read() != a:
            raise RuntimeError("the strace recording does not replay to ntfs-3g's result")
    with open(out + ".tmp", "wb") as f:
        for off, data in writes:
            f.write(struct.pack("<QI", off, len(data)) + data)
    os.rename(out + ".tmp", out)
    for p in (img, tr):
        os.unlink(p)
    os.rmdir(m)
    return out


def parse(tr):
    writes, cur = [], None
    with open(tr) as f:
        for line in f:
            c = CALL.match(line)
            if c:
                if cur:
                    writes.append(cur)
                cur = (int(c.group(3)), bytearray(), int(c.group(4)))
                continue
            h = HEX.match(line)
            if h and cur:
                cur[1].extend(bytes.fromhex(h.group(1).replace(" ", "")))
    if cur:
        writes.append(cur)
    out = []
    for off, data, ret in writes:
        if len(data) < ret:
            raise RuntimeError("strace dump shorter than the write at %d" % off)
        out.append((off, bytes(data[:ret])))
    return out


def load(path):
    with open(path, "rb") as f:
        b = f.read()
    out, p = [], 0
    while p < len(b):
        off, ln = struct.unpack_from("<QI", b, p)
        out.append((off, b[p + 12:p + 12 + ln]))
        p += 12 + ln
    return out


def cut_points(nwrites, count, seed):
    """COUNT (k, torn sectors) pairs spread over the recording."""
    rnd = random.Random(seed)
    out = []
    for i in range(count):
        lo = nwrites * i // count
        hi = max(lo + 1, nwrites * (i + 1) // count)
        out.append((rnd.randrange(lo, hi), rnd.choice((0, 0, 1, 3))))
    return out


def apply_cut(img, writes, k, torn):
    for off, data in writes[:k]:
        img[off:off + len(data)] = data
    if torn and k < len(writes):
        off, data = writes[k]
        n = min(len(data), 512 * torn)
        if n < len(data):
            img[off:off + n] = data[:n]
