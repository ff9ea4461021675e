"""Base volumes of the damage lab: made by our mkfs.ntfs or by mkntfs
(ntfsprogs-plus, Debian sid tree), filled through ntfs-3g with a realistic
tree, then described independently of fsck.ntfs: a content manifest read
back through ntfs-3g, and a map of each file's MFT records and clusters
read by ntfsparse."""
import hashlib
import json
import os
import random
import shutil
import subprocess
import time

import ntfsparse as P

# name: (maker, cluster size, volume size in MiB)
BASES = {
    "ours4k": ("ours", 4096, 48),
    "ours1k": ("ours", 1024, 40),
    "sid4k": ("sid", 4096, 48),
    "sid64k": ("sid", 65536, 128),
    # the kernel power cuts' CI base: its image and write log are fixtures
    # (kfixture/, made by `kpowercut.py fixture`), its data low-entropy
    "kern4k": ("ours", 4096, 24),
}
FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kfixture")


def sh(*cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def mount(img, mnt, ro=False, opts=""):
    os.makedirs(mnt, exist_ok=True)
    o = "ro" if ro else "noatime"
    if opts:
        o += "," + opts
    r = subprocess.run(["timeout", "60", "ntfs-3g", "-o", o, img, mnt],
                       capture_output=True, text=True)
    return r.returncode == 0


def umount(mnt):
    for _ in range(50):
        if subprocess.run(["umount", mnt], capture_output=True).returncode == 0:
            return
        if not os.path.ismount(mnt):
            return
        time.sleep(0.1)
    subprocess.run(["umount", "-l", mnt], capture_output=True)


def populate(m, seed, lowent=False):
    """The tree written through ntfs-3g (deterministic from SEED); LOWENT:
    file data is a seeded 32-byte chunk repeated (compresses well)."""
    rnd = random.Random(seed)

    def data(n):
        if lowent:
            return (rnd.randbytes(32) * (n // 32 + 1))[:n]
        return rnd.randbytes(n)

    def put(path, b):
        with open(os.path.join(m, path), "wb") as f:
            f.write(b)

    # nested directories with small (resident) and larger files
    d = "docs"
    for lvl in "abcdef":
        d = os.path.join(d, lvl)
        os.makedirs(os.path.join(m, d))
        put(os.path.join(d, "note.txt"), b"level %s\n" % lvl.encode())
        put(os.path.join(d, "blob.bin"), data(5000 + 700 * len(d)))
    os.makedirs(os.path.join(m, "empty dir"))
    put("Ünïcödé ファイル.txt", "grüße\n".encode())
    put("empty", b"")
    # a big directory: more entries than an index root holds, several levels
    os.makedirs(os.path.join(m, "big"))
    for i in range(1200):
        name = "entry-%04d-with-a-fairly-long-name.txt" % i
        put(os.path.join("big", name),
            data(6000) if i % 97 == 0 else b"%d\n" % i)
    # hard links (one name in another directory too)
    os.makedirs(os.path.join(m, "links"))
    put("links/target", data(9000))
    os.link(os.path.join(m, "links/target"), os.path.join(m, "links/second"))
    os.link(os.path.join(m, "links/target"), os.path.join(m, "docs/a/third"))
    put("links/small", b"tiny linked\n")
    os.link(os.path.join(m, "links/small"), os.path.join(m, "links/small2"))
    os.symlink("docs/a/note.txt", os.path.join(m, "symlink"))
    # xattrs (user.* are named $DATA streams for ntfs-3g's default
    # streams_interface=xattr, i.e. alternate data streams)
    os.makedirs(os.path.join(m, "xattr"))
    for i in range(4):
        p = os.path.join(m, "xattr", "x%d" % i)
        put(p, b"has xattrs %d\n" % i)
        os.setxattr(p, "user.small", b"v%d" % i)
        if i % 2:
            os.setxattr(p, "user.large", data(3000))
    os.setxattr(os.path.join(m, "docs/a"), "user.dirattr", b"on a directory")
    # fragmented files: appends to several files interleaved
    os.makedirs(os.path.join(m, "frag"))
    fs = [open(os.path.join(m, "frag", "f%d" % i), "wb") for i in range(4)]
    for _ in range(40):
        for f in fs:
            f.write(data(8192))
            f.flush()
    for f in fs:
        f.close()
    # sparse files
    with open(os.path.join(m, "sparse1"), "wb") as f:
        f.seek(8 << 20)
        f.write(data(4096))
    with open(os.path.join(m, "sparse2"), "wb") as f:
        f.write(data(100000))
        f.seek(3 << 20)
        f.write(data(70000))
        f.truncate(6 << 20)
    # a few MiB
    put("bigfile", data(3 << 20))


def sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            b = f.read(1 << 20)
            if not b:
                return h.hexdigest()
            h.update(b)


def manifest(m):
    """path -> {t, size, sha, link, xa, ino} of everything under M (a
    mounted ntfs-3g volume); unreadable files get sha "EIO"."""
    out = {}
    for root, dirs, files in os.walk(m):
        dirs.sort()
        for name in dirs + sorted(files):
            p = os.path.join(root, name)
            rel = os.path.relpath(p, m)
            try:
                st = os.lstat(p)
            except OSError:
                out[rel] = {"t": "?", "ino": 0}
                continue
            e = {"ino": st.st_ino}
            if os.path.islink(p):
                e["t"], e["link"] = "l", os.readlink(p)
            elif os.path.isdir(p):
                e["t"] = "d"
            else:
                e["t"], e["size"] = "f", st.st_size
                try:
                    e["sha"] = sha(p)
                except OSError:
                    e["sha"] = "EIO"
            if e["t"] != "l":
                try:
                    xa = sorted(os.listxattr(p, follow_symlinks=False))
                    h = hashlib.sha256()
                    for k in xa:
                        if k.startswith("user."):
                            h.update(k.encode() + b"=" + os.getxattr(p, k) + b";")
                    e["xa"] = h.hexdigest()[:16]
                except OSError:
                    e["xa"] = "EIO"
            out[rel] = e
    return out


def file_map(img_path, man):
    """ino -> {"recs": [[offset, size]...], "clusters": [[lcn, n]...]}
    for every inode of the manifest: the bytes of its base and extension
    records and the clusters of all its non-resident attributes."""
    with open(img_path, "rb") as f:
        img = f.read()
    g = P.Geometry(img)
    want = {e["ino"] for e in man.values()}
    recs, clus = {}, {}
    for n, at, rec in P.records(img, g):
        base, = __import__("struct").unpack_from("<Q", rec, 0x20)
        owner = (base & 0xFFFFFFFFFFFF) or n
        if owner not in want:
            continue
        recs.setdefault(owner, []).append([at, g.rs])
        for off, t, name, nr in P.attrs(rec):
            if nr:
                for lcn, ln in P.runlist(rec, off):
                    if lcn is not None:
                        clus.setdefault(owner, []).append([lcn, ln])
    return {str(i): {"recs": recs.get(i, []), "clusters": clus.get(i, [])}
            for i in want}, {"cs": g.cs, "rs": g.rs}


def make(name, out, mkfs, sid_root, seed):
    """Build base NAME in OUT/NAME (image, manifest.json, map.json)."""
    maker, cs, mib = BASES[name]
    d = os.path.join(out, name)
    if os.path.exists(os.path.join(d, "map.json")):
        return d
    os.makedirs(d, exist_ok=True)
    img = os.path.join(d, "image")
    fixed = os.path.join(FIXTURE, name + ".image.xz")
    if name == "kern4k" and os.path.exists(fixed) and not os.environ.get("LAB_NEW_FIXTURE"):
        with open(img, "wb") as f:
            sh("xz", "-dc", fixed, stdout=f)
        return describe(d, img, name)
    if maker == "ours":
        sh("truncate", "-s", "%dM" % mib, img)
        sh(mkfs, "-q", "-F", "-c", str(cs), img, stdout=subprocess.DEVNULL)
    else:
        t = os.path.join(sid_root, "tmp", "fsforge-lab-%d-%s" % (os.getpid(), name))
        os.makedirs(t, exist_ok=True)
        try:
            sh("truncate", "-s", "%dM" % mib, t + "/v.img")
            sh("chroot", sid_root, "mkntfs", "-q", "-F", "-Q", "-c", str(cs),
               "/tmp/%s/v.img" % os.path.basename(t), stdout=subprocess.DEVNULL,
               stderr=subprocess.DEVNULL)
            sh("cp", "--sparse=always", t + "/v.img", img)
        finally:
            shutil.rmtree(t, ignore_errors=True)
    m = os.path.join(d, "mnt")
    if not mount(img, m):
        raise RuntimeError("ntfs-3g cannot mount the fresh %s volume" % name)
    try:
        populate(m, seed, lowent=(name == "kern4k"))
    finally:
        umount(m)
    return describe(d, img, name)


def describe(d, img, name):
    """OUT/NAME/manifest.json and map.json of the volume IMG."""
    m = os.path.join(d, "mnt")
    if not mount(img, m, ro=True):
        raise RuntimeError("ntfs-3g cannot mount the populated %s volume" % name)
    try:
        man = manifest(m)
    finally:
        umount(m)
    os.rmdir(m)
    fmap, geo = file_map(img, man)
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump(man, f, indent=0, sort_keys=True)
    with open(os.path.join(d, "map.json"), "w") as f:
        json.dump({"files": fmap, "geo": geo}, f)
    return d
