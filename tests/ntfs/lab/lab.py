#!/usr/bin/env python3
"""The NTFS damage lab: makes damaged volumes and judges fsck.ntfs on them
with oracles that are not fsck.ntfs (ntfsck -n from ntfsprogs-plus,
ntfs-3g mount + content manifest against the manifest taken before the
damage, the bytes of the image), side by side with ntfsck -a.

  lab.py run   [--cases N] [--seed S] [--kinds K,..] [--jobs J] [--out DIR]
               [--bases B,..] [--random N] [--cuts N] [--kcuts N] [--krecord]
               [--kwalk N] [--stale N] [--adverse N] [--compound N] [--lost N]
               [--misdirect N]
  lab.py table DIR            summary table of a finished run
  lab.py check DIR INVARIANT  exit 1 naming every case that breaks it
                              (nwrite crash exit converge control undo
                              keeps nothing-lost kwalk)

FSCK_NTFS names the fsck.ntfs to judge (default
$FSFORGE_BUILDDIR/fsck/fsck.ntfs); MKFS_NTFS the mkfs.ntfs of the bases.
See README.md."""
import argparse
import bisect
import concurrent.futures as cf
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import zlib
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import base as B  # noqa: E402
import damages as D  # noqa: E402
import powercut as PC  # noqa: E402
import kpowercut as KP  # noqa: E402
import stale as ST  # noqa: E402
import adverse as AD  # noqa: E402
import compound as CM  # noqa: E402
import eio as EI  # noqa: E402
import truncate as TR  # noqa: E402
import lost as LO  # noqa: E402
import misdirect as MD  # noqa: E402
import use as US  # noqa: E402
import realdev as RD  # noqa: E402
import fielduse as FU  # noqa: E402

TOP = os.path.abspath(os.path.join(HERE, "../../.."))
BUILD = os.environ.get("FSFORGE_BUILDDIR", os.path.join(TOP, "build"))
FSCK = os.environ.get("FSCK_NTFS", os.path.join(BUILD, "fsck/fsck.ntfs"))
MKFS = os.environ.get("MKFS_NTFS", os.path.join(BUILD, "mkfs/mkfs.ntfs"))
CACHE = os.environ.get("FSFORGE_CACHE") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "fsforge")
SID = os.path.join(CACHE, "sid-root")
TIMEOUT = int(os.environ.get("LAB_TIMEOUT", "120"))
SAN = ("AddressSanitizer", "LeakSanitizer", "runtime error:", "UndefinedBehaviorSanitizer")
HANG = -1000


def have_sid():
    try:
        return subprocess.run(["chroot", SID, "sh", "-c", "command -v ntfsck && command -v mkntfs"],
                              capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def run(cmd, timeout=TIMEOUT, env=None):
    try:
        r = subprocess.run(cmd, capture_output=True, timeout=timeout, env=env)
        return r.returncode, (r.stdout + r.stderr).decode("utf-8", "replace")
    except subprocess.TimeoutExpired as e:
        return HANG, ((e.stdout or b"") + (e.stderr or b"")).decode("utf-8", "replace")


def digest(path):
    """A digest of the image's content that does not depend on which zero
    ranges are holes (tmpfs keeps the copies sparse; fsck may write zeros):
    the non-zero 1 MiB chunks with their index, and the size."""
    h = hashlib.sha256()
    zero = bytes(1 << 20)
    with open(path, "rb") as f:
        fd, size = f.fileno(), os.fstat(f.fileno()).st_size
        h.update(str(size).encode())
        pos = 0
        while pos < size:
            try:
                pos = os.lseek(fd, pos, os.SEEK_DATA)
            except OSError:
                break
            end = os.lseek(fd, pos, os.SEEK_HOLE)
            pos -= pos % (1 << 20)
            while pos < end:
                b = os.pread(fd, 1 << 20, pos)
                if b != zero[:len(b)]:
                    h.update(b"%d:" % pos + b)
                pos += 1 << 20
    return h.hexdigest()


def ntfsck(mode, img, tag, eio=None):
    """ntfsck MODE on IMG inside the sid tree (a copy goes in, comes back).
    EIO: (shim, ranges, mode, hits) to read the copy through the failing
    disk of eio.py; HITS, a dict, gets the reads the shim failed."""
    t = os.path.join(SID, "tmp", "fsforge-lab-%d-%s" % (os.getpid(), tag))
    os.makedirs(t, exist_ok=True)
    try:
        subprocess.run(["cp", "--sparse=always", img, t + "/v.img"], check=True)
        inner = "/tmp/%s" % os.path.basename(t)
        pre = []
        if eio:
            shutil.copy(eio[0], t + "/eio.so")
            pre = EI.env_args(inner + "/eio.so", inner + "/v.img", eio[1], eio[2], inner + "/hits")
        rc, out = run(["chroot", SID] + pre + ["ntfsck", mode, inner + "/v.img"])
        if eio:
            eio[3]["hits"] = EI.hits(t + "/hits")
        if mode != "-n":
            subprocess.run(["cp", "--sparse=always", t + "/v.img", img], check=True)
        return rc, out
    finally:
        shutil.rmtree(t, ignore_errors=True)


# --- cases --------------------------------------------------------------------

_KLOGS = {}
_KLOCK = threading.Lock()
# the bases --krecord records under the kernel driver (kern4k's recording
# is a fixture).  Not the 4Kn ones: the 7.2 driver writes their 4096-byte
# MFT records at 512-byte offsets (EIO on a 4Kn disk; on a 512-byte disk
# overlapping writes whose log does not replay to the driver's result)
KRECORD = ("ours4k", "sid4k", "rich4k", "aged4k")
KWALK = set()  # the kernel cuts whose repaired volume the kernel walks (--kwalk)


def klog(bdir):
    """The kernel recording of base BDIR (parsed once per process)."""
    with _KLOCK:
        if bdir not in _KLOGS:
            _KLOGS[bdir] = KP.load(os.path.join(bdir, "klog.xz"))
        return _KLOGS[bdir]


_WRITES = {}


def stale_writes(bdir):
    """The recorded writes the stale kind replays on BDIR: ntfs-3g's
    (powercut.py) or else the Linux driver's (kpowercut.py), as (offset,
    bytes); None when the base has neither."""
    with _KLOCK:
        if bdir not in _WRITES:
            if os.path.exists(os.path.join(bdir, "writes")):
                _WRITES[bdir] = PC.load(os.path.join(bdir, "writes"))
            elif os.path.exists(os.path.join(bdir, "klog.xz")):
                _WRITES[bdir] = [(e.off, e.data) for e in KP.load(os.path.join(bdir, "klog.xz"))
                                 if e.data is not None]
            else:
                _WRITES[bdir] = None
        return _WRITES[bdir]


def stale_reference(bdir):
    """BDIR/stale/final.img, the volume the recorded writes end in, and
    its manifest (ntfs-3g) and map (ntfsparse) in BDIR/stale/final.json:
    the reference of the stale kind (made once per base)."""
    d = os.path.join(bdir, "stale")
    js = os.path.join(d, "final.json")
    if os.path.exists(js):
        return
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(bdir, "image"), "rb") as f:
        img = bytearray(f.read())
    ST.final(img, stale_writes(bdir))
    p = os.path.join(d, "final.img")
    with open(p, "wb") as f:
        f.write(img)
    m = os.path.join(d, "mnt")
    if not B.mount(p, m, ro=True):
        raise RuntimeError("ntfs-3g cannot mount the final volume of %s's recording" % bdir)
    try:
        man = B.manifest(m)
    finally:
        B.umount(m)
    shutil.rmtree(m, ignore_errors=True)
    fmap, geo = B.file_map(p, man)
    with open(js + ".tmp", "w") as f:
        json.dump({"manifest": man, "map": {"files": fmap, "geo": geo}}, f)
    os.rename(js + ".tmp", js)


def kcases(bases, kinds, seed, nkcuts):
    """Kernel power-cut cases: NKCUTS per base that has a recording."""
    out = []
    if "kpowercut" not in kinds:
        return out
    for b in bases:
        d = bases[b]
        if os.path.exists(os.path.join(d, "klog.xz")):
            bseed = seed * 1000 + zlib.crc32(b.encode()) % 1000
            out += ["k-%s-e%d-%s" % (b, k, "t%d" % t if t >= 0 else "r%d" % -t)
                    for k, t in KP.cut_points(klog(d), nkcuts, bseed, B.SECTOR.get(b, 512))]
    return out


def case_list(bases, kinds, seed, nrandom, ncuts, nstale=0, nadverse=0, ncompound=0, nlost=0, nmis=0):
    """Every case id, in a stable order: targeted cases of each base, then
    NRANDOM random and NCUTS power-cut cases per base, NSTALE stale ones
    per base with a recording."""
    out = []
    for b in bases:
        d = bases[b]
        if "stale" in kinds and stale_writes(d):
            bseed = seed * 1000 + zlib.crc32(b.encode()) % 1000
            with open(d + "/image", "rb") as f:
                out += ["o-%s-%s" % (b, x) for x in ST.points(stale_writes(d), f.read(), nstale, bseed)]
        if b == "kern4k":
            continue  # the kernel power cuts' base only (kcases)
        if "targeted" in kinds:
            v = D.Vol(B.image(d + "/image"), load(d + "/manifest.json"))
            out += ["t-%s-%s" % (b, name) for name, _ in D.targeted(v)]
        if "random" in kinds:
            out += ["r-%s-%d" % (b, seed * 100000 + i) for i in range(nrandom)]
        if "sectors" in kinds:
            out += ["s-%s-%d" % (b, seed * 100000 + i) for i in range(nrandom)]
        if "adverse" in kinds:
            out += AD.case_ids(b, seed, nadverse or nrandom)
        if "compound" in kinds:
            out += CM.case_ids(b, seed, ncompound or nrandom)
        if "eio" in kinds:
            out += EI.case_ids(b)
        if "truncated" in kinds:
            out += TR.case_ids(b)
        if "lost" in kinds and os.path.exists(d + "/early.img"):
            out += LO.case_ids(b, seed, nlost or nrandom)
        if "misdirect" in kinds:
            out += MD.case_ids(b, seed, nmis or nrandom)
        if "crossmeta" in kinds:
            out += MD.cross_ids(b)
        if "use" in kinds:
            v = D.Vol(bytearray(open(d + "/image", "rb").read()), load(d + "/manifest.json"))
            out += US.case_ids(v, b, seed)
        if "realdev" in kinds:
            v = D.Vol(bytearray(open(d + "/image", "rb").read()), load(d + "/manifest.json"))
            out += RD.case_ids(v, b)
        if "field" in kinds:
            v = D.Vol(bytearray(open(d + "/image", "rb").read()), load(d + "/manifest.json"))
            out += FU.case_ids(v, b)
        if "powercut" in kinds and os.path.exists(d + "/writes"):
            w = PC.load(d + "/writes")
            # a different set of cut points for each base
            bseed = seed * 1000 + zlib.crc32(b.encode()) % 1000
            out += ["p-%s-w%d-t%d" % (b, k, t) for k, t in PC.cut_points(len(w), ncuts, bseed)]
    return out


def pick(ids, n, seed, kinds):
    """N cases spread over the kinds and, within a kind, over the bases and
    structures (a seeded sample of each kind's list)."""
    if not n or n >= len(ids):
        return ids
    rnd = random.Random(seed)
    groups = {}
    for i in ids:
        groups.setdefault(i[0], []).append(i)
    share = {k: 0 for k in groups}
    left, ks = n, sorted(groups, key=lambda k: "tprsoaemuldjgvf".index(k))
    while left:
        for k in ks:
            if left and share[k] < len(groups[k]):
                share[k] += 1
                left -= 1
    out = []
    for k in ks:
        g = groups[k]
        # one per structure group first, so that small samples still cover
        # the boot sector, system records, attributes, runs, indexes, bitmaps
        bystruct = {}
        for i in g:
            bystruct.setdefault("-".join(i.split("-")[1:4]), []).append(i)
        order = []
        pools = [rnd.sample(v, len(v)) for _, v in sorted(bystruct.items())]
        rnd.shuffle(pools)
        while any(pools):
            for p in pools:
                if p:
                    order.append(p.pop())
        out += order[:share[k]]
    return out


def materialize(cid, bases, out):
    """Write CASEDIR/damaged for case CID; return (casedir, base dir)."""
    kind, b, rest = cid.split("-", 2)
    d = bases[b]
    cdir = os.path.join(out, "cases", cid)
    os.makedirs(cdir, exist_ok=True)
    man = load(d + "/manifest.json")
    if os.path.getsize(d + "/image") >= B.BIG:
        # a BIG image is damaged in place in a sparse copy, through mmap
        if kind not in "trc":
            raise ValueError("kind %s is not made on a %s image" % (kind, b))
        subprocess.run(["cp", "--sparse=always", d + "/image", cdir + "/damaged"], check=True)
        v = D.Vol(B.image(cdir + "/damaged", write=True), man)
        if kind == "t":
            dict(D.targeted(v))[rest](v)
        elif kind == "r":
            D.random_damage(v, int(rest))
        v.img.flush()
        v.img.close()
        return cdir, d
    img = B.image(d + "/image")
    v = D.Vol(img, man)
    if kind == "t":
        fn = dict(D.targeted(v))[rest]
        fn(v)
    elif kind == "c":
        pass
    elif kind == "x":
        # an image damaged elsewhere (e.g. the kernel tier's power cut of
        # the Linux driver writing to this base): OUT/external/BASE-NAME.img
        with open(os.path.join(out, "external", "%s-%s.img" % (b, rest)), "rb") as f:
            img = bytearray(f.read())
        v.img = img
    elif kind == "r":
        D.random_damage(v, int(rest))
    elif kind == "s":
        D.sector_damage(v, int(rest))
    elif kind == "o":
        ST.apply(img, stale_writes(d), rest)
    elif kind == "a":
        AD.apply(v, rest)
    elif kind == "m":
        save(cdir + "/components", " ".join(CM.apply(v.img, man, b, int(rest))))
    elif kind == "u":
        v.img = TR.apply(img, rest)
    elif kind == "l":
        with open(d + "/early.img", "rb") as f:
            save(cdir + "/components", " ".join(LO.apply(img, f.read(), int(rest))))
    elif kind == "d":
        early = None
        if os.path.exists(d + "/early.img"):
            with open(d + "/early.img", "rb") as f:
                early = f.read()
        save(cdir + "/components", MD.apply(v, early, rest))
    elif kind == "j":
        save(cdir + "/components", MD.apply_cross(v, rest))
    elif kind == "g":
        save(cdir + "/components", " ".join(US.apply(img, man, b, rest)))
    elif kind == "v":
        save(cdir + "/components", RD.apply(v, rest))
    elif kind == "f":
        save(cdir + "/components", FU.apply(v, rest))
    elif kind == "i":
        # fsck.ntfs -a killed as it enters its K-th write to the image
        # of the case INNER (README, "interrupted"): the image it leaves
        k, inner = rest.split("-", 1)
        # made under this case's directory: INNER may be judged beside it
        idir, _ = materialize(inner, bases, cdir)
        shutil.move(idir + "/damaged", cdir + "/inner")
        shutil.rmtree(cdir + "/cases", ignore_errors=True)
        shutil.copy(cdir + "/inner", cdir + "/killed")
        save(cdir + "/killed_rc", "%d" % killed_at(cdir + "/killed", int(k)))
        with open(cdir + "/killed", "rb") as f:
            v.img = bytearray(f.read())
        os.unlink(cdir + "/killed")
    elif kind == "k":
        e, t = rest.split("-")
        if t[0] == "r":
            KP.apply_reordered(img, klog(d), int(e[1:]), int(t[1:]))
        else:
            KP.apply(img, klog(d), int(e[1:]), int(t[1:]), B.SECTOR.get(b, 512))
    else:
        w, t = rest.split("-")
        PC.apply_cut(img, PC.load(d + "/writes"), int(w[1:]), int(t[1:]))
    with open(cdir + "/damaged", "wb") as f:
        f.write(v.img)
    subprocess.run(["fallocate", "-d", cdir + "/damaged"], capture_output=True)
    return cdir, d


# LeakSanitizer cannot run under ptrace
TRACED = dict(os.environ, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")


def killed_at(img, k):
    """fsck.ntfs -a on IMG killed (SIGKILL) as it enters its K-th
    pwrite(2): writes 1..K-1 landed, the rest never happen (strace's
    fault injection: deterministic, unlike a timer)."""
    r = subprocess.run(["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=pwrite64",
                        "-e", "inject=pwrite64:signal=KILL:when=%d" % k, FSCK, "-a", img],
                       capture_output=True, timeout=TIMEOUT, env=TRACED)
    return r.returncode


def data_chunks(f):
    """The 1 MiB chunks of file F holding data (not wholly in a hole)."""
    fd, size, pos = f.fileno(), os.fstat(f.fileno()).st_size, 0
    out = set()
    while pos < size:
        try:
            pos = os.lseek(fd, pos, os.SEEK_DATA)
        except OSError:
            break
        end = os.lseek(fd, pos, os.SEEK_HOLE)
        out.update(range(pos >> 20, (end + (1 << 20) - 1) >> 20))
        pos = end
    return out


def changed_sectors(a_path, b_path):
    """Sorted 512-byte sector numbers where two images differ (chunks that
    are holes in both are equal: a sparse 3 TiB image is not read whole)."""
    out = []
    with open(a_path, "rb") as fa, open(b_path, "rb") as fb:
        ends = {os.fstat(fa.fileno()).st_size, os.fstat(fb.fileno()).st_size}
        chunks = data_chunks(fa) | data_chunks(fb)
        # a size that differs: the tail of the longer one reads as zeros
        # against nothing, as before
        if len(ends) > 1:
            chunks.update(range(min(ends) >> 20, (max(ends) + (1 << 20) - 1) >> 20))
        for c in sorted(chunks):
            pos = c << 20
            a, b = os.pread(fa.fileno(), 1 << 20, pos), os.pread(fb.fileno(), 1 << 20, pos)
            if a != b:
                for s in range(0, max(len(a), len(b)), 512):
                    if a[s:s + 512] != b[s:s + 512]:
                        out.append((pos + s) // 512)
    return out


def untouched(man, fmap, secs):
    """Paths of files (not directories) none of whose MFT records and data
    clusters (nor the index entries their manifest reads: the map's
    "deps", an object id's birth ids) contain a changed sector; a relative symbolic link also needs
    its target untouched (ntfs-3g shows a Windows symlink whose target is
    gone as "unsupported reparse tag", its reparse data unchanged)."""
    cs = fmap["geo"]["cs"]

    def hit(start, end):
        i = bisect.bisect_left(secs, start // 512)
        return i < len(secs) and secs[i] * 512 < end

    out = []
    for p, e in man.items():
        if e["t"] not in "fl":
            continue
        f = fmap["files"].get(str(e["ino"]))
        if f is None or not f["recs"]:
            continue
        if any(hit(at, at + n) for at, n in f["recs"]):
            continue
        if any(hit(lcn * cs, (lcn + n) * cs) for lcn, n in f["clusters"]):
            continue
        if any(hit(at, at + n) for at, n in f.get("deps", [])):
            continue
        out.append(p)
    safe = set(out)

    def target(p):
        t = man[p].get("link", "")
        return None if not t or t.startswith(("/", "<mnt>")) else \
            os.path.normpath(os.path.join(os.path.dirname(p), t))
    return sorted(p for p in out if man.get(target(p), {}).get("t", "d") not in "fl"
                  or target(p) in safe)


# --- the oracles ----------------------------------------------------------------

def key(e, dos=True):
    """What must be the same for a file to count as kept: type, size,
    content, link target, streams, and the rich bases' reparse data,
    object id, EAs and (DOS=False: not for a file reconnected under a new
    name in lost+found) DOS name."""
    return (e.get("t"), e.get("size"), e.get("sha"), e.get("link"), e.get("xa"),
            e.get("rp"), e.get("oid"), e.get("ea"), e.get("dos") if dos else None)


def survivors_any_name(before, after):
    """(The judge before names were counted, for comparison: a file
    counts as kept when any one of its names does.)  Paths of BEFORE's files present in AFTER with identical content and
    streams, at their path (or where the power-cut workload renamed it),
    under lost+found (by record number or name), or as the same MFT record
    anywhere (a damaged directory name moves its whole subtree: the files
    in it are still there)."""
    lf, byino = {}, set()
    for p, e in after.items():
        if p.startswith("lost+found/"):
            lf.setdefault(key(e, False), []).append((os.path.basename(p), e["ino"]))
        byino.add((e["ino"], key(e)))
    out = []
    for p, e in before.items():
        if e["t"] not in "fl" or e.get("sha") == "EIO":
            continue
        a = after.get(p)
        if a is not None and key(a) == key(e):
            out.append(p)
            continue
        a = after.get(PC.RENAMES.get(p, ""))
        if a is not None and key(a) == key(e) and a["ino"] == e["ino"]:
            out.append(p)
            continue
        name, ino = os.path.basename(p), e["ino"]
        if (ino, key(e)) in byino:
            out.append(p)
            continue
        for n, i in lf.get(key(e, False), []):
            if i == ino or n == name or str(ino) in n:
                out.append(p)
                break
    return out


def survivors(before, after):
    """Paths (names) of BEFORE's files present in AFTER with identical
    content and streams, at their path (or where the power-cut workload
    renamed it), as the same MFT record elsewhere (a damaged directory
    name moves its whole subtree: the files in it are still there), or
    under lost+found (by record number or name).  Each name of AFTER
    stands for one name of BEFORE: a file with two hard links of which
    one survives keeps one name, the other counts as lost."""
    used, byino, lf = set(), {}, []
    for p, e in sorted(after.items()):
        if p.startswith("lost+found/"):
            lf.append((p, key(e, False), os.path.basename(p), e["ino"]))
        byino.setdefault((e["ino"], key(e)), []).append(p)
    out, rest = [], []
    for p, e in before.items():
        if e["t"] not in "fl" or e.get("sha") == "EIO":
            continue
        a = after.get(p)
        if a is not None and key(a) == key(e):
            out.append(p)
            used.add(p)
            continue
        q = PC.RENAMES.get(p, "")
        a = after.get(q)
        if a is not None and key(a) == key(e) and a["ino"] == e["ino"] and q not in used:
            out.append(p)
            used.add(q)
            continue
        rest.append(p)
    for p in sorted(rest):
        e = before[p]
        q = next((q for q in byino.get((e["ino"], key(e)), []) if q not in used), None)
        if q is None:
            name, ino, k = os.path.basename(p), e["ino"], key(e, False)
            q = next((q for q, kq, n, i in lf if q not in used and kq == k and
                      (i == ino or n == name or str(ino) in n)), None)
        if q is not None:
            out.append(p)
            used.add(q)
    return sorted(out)


def mount_manifest(img, mnt):
    """The manifest of IMG through ntfs-3g (read-only), or None."""
    if not B.mount(img, mnt, ro=True):
        return None
    try:
        rc, out = run([sys.executable, os.path.join(HERE, "lab.py"), "manifest", mnt], timeout=300)
        return json.loads(out) if rc == 0 else None
    finally:
        B.umount(mnt)


def sanitizer(out):
    return any(s in out for s in SAN)


def grown(img, full):
    """IMG itself, or (FULL: a truncated case) a copy grown back to FULL
    bytes with zeros, the disk made whole again, for the oracles."""
    if not full:
        return img
    g = img + ".grown"
    subprocess.run(["cp", "--sparse=always", img, g], check=True)
    os.truncate(g, full)
    return g


def shape(o, img, dmg):
    """Into O: whether IMG kept DMG's size (nothing written past the end)
    and the volume size its boot sector states."""
    o["size_same"] = os.path.getsize(img) == os.path.getsize(dmg)
    o["boot_same"] = TR.volume_bytes(img) == TR.volume_bytes(dmg)


def problem_codes(txt):
    """The problems of fsck.ntfs --json's report in TXT: [[code, action]]
    in the order found (action: info, fixed, not fixed, fix failed), or
    None when there is no report (a crash, a hang)."""
    for ln in txt.splitlines():
        if ln.startswith('{"device":'):
            try:
                j = json.loads(ln)
            except ValueError:
                return None
            return [[p["code"], p["action"]] for p in j["problems"]]
    return None


# Problems -a may fix that its -n did not report, each the consequence of
# an earlier repair of the same run (cause code, consequence code), not
# damage -n missed (README, judge step 8).  Keep it short: every entry
# hides a class of divergence.
CONSEQUENCE = {
    ("0x010070", "0x040001"): "the root directory made again (pass1_root.c, an empty "
    "index): the clusters of its old INDX blocks are owned by nobody and pass 4 frees "
    "them; -n declines to make the root and stops there (system_record_corrupt is fatal)",
    ("0x010028", "0x030004"): "an extension record whose base is not in use cleared: the index "
    "entries naming it now name a free record (r-rich4k-1900002: the damage is in the base "
    "reference of a file's own record, which is cleared; see RESULTS, session 19)",
    ("0x010028", "0x040002"): "an extension record cleared: its bit in the $MFT bitmap is freed",
    ("0x010028", "0x040001"): "an extension record cleared: the clusters only it mapped are freed",
    ("0x010060", "0x040001"): "$Bitmap made again (pass1_system.c): its cluster map is written "
    "empty and filled by the bitmap pass; -n declines the remake and has no $Bitmap to compare "
    "(t-gstiny4kn-runs-bitmap-header-zero)",
    ("0x010030", "0x040001"): "a cross-link resolved (pass1b_crosslinks.c): the second owner's copy "
    "goes to clusters pass 4 then marks in $Bitmap; -n declines the copy, and when every shared "
    "cluster was already marked it has nothing to report (t-go64k4kn-runs-frag-r4-len-plus1)",
}
# ... and the housekeeping that follows any repair of the run (cause "*")
CONSEQUENCE[("*", "0x050002")] = (
    "the journal reset after a repair (pass5_volume.c: only when -a fixed something and "
    "left nothing, which -n cannot know); a no-op where the journal is already the clean "
    "log fsck.ntfs writes, so seen only on win4k's Windows 8 log (r-win4k-2100001)")


def agree(o):
    """Do -n and -a tell the same story (O: our results of a case)?  The
    list of divergences: (a) -n clean, -a not (exit or bytes); (b) -n found
    errors, -a neither repaired (exit 1) nor said what it left (a problem
    not fixed); (c) -a fixed a problem -n did not report, not in
    CONSEQUENCE.  [] when they agree; None when not judged (an older
    result, a crash)."""
    n, a = o.get("n1_codes"), o.get("a1_codes")
    if n is None or a is None or "a1_wrote" not in o:
        return None
    why = []
    if o["n1"] == 0 and (o["a1"] != 0 or o["a1_wrote"]):
        why.append("-n clean, -a exit %d%s" % (o["a1"], ", wrote" if o["a1_wrote"] else ""))
    if o["n1"] & 4 and not o["a1"] & 1 and not any(x[1] in ("not fixed", "fix failed") for x in a):
        why.append("-n exit %d, -a exit %d with no reason" % (o["n1"], o["a1"]))
    seen, fixed, new = {c for c, _ in n}, set(), set()
    anyfix = {c for c, act in a if act == "fixed"}
    for c, act in a:
        if act != "fixed":
            continue
        if ("*", c) in CONSEQUENCE and anyfix - {c}:
            continue
        if c not in seen and not any((f, c) in CONSEQUENCE for f in fixed):
            new.add(c)
        fixed.add(c)
    new = sorted(new)
    if new:
        why.append("-a fixed what -n did not report: " + " ".join(new))
    return why


def judge_after(o, img, cid, cdir, man, sid, full=None):
    """The oracles on OUR result IMG: ntfsck -n (with SID), the ntfs-3g
    manifest against MAN, the files that survived; into O.  FULL: a
    truncated case, judged on a copy grown back to FULL bytes."""
    img = grown(img, full)
    if sid:
        rc, txt = ntfsck("-n", img, cid + "-o")
        o["ntfsck_n"] = rc
        save(cdir + "/ours.ntfsck.log", txt)
    after = mount_manifest(img, cdir + "/mnt")
    o["mounts"] = after is not None
    o["surv"] = survivors(man, after or {})
    o["surv_any"] = len(survivors_any_name(man, after or {}))
    if full:
        os.unlink(img)


def judge(cid, bases, out, sid):
    if cid[0] == "e":
        return judge_eio(cid, bases, out, sid)
    t0 = time.time()
    cdir, bdir = materialize(cid, bases, out)
    kind = cid[0]
    dmg = cdir + "/damaged"
    if kind == "k":
        # the reference is the durable state at the last mark before the
        # cut (the base before the first): its manifest, map and image
        k = int(cid.split("-")[2][1:])
        man, fmap = KP.reference(bdir, klog(bdir), k, cdir + "/reference")
        secs = changed_sectors(cdir + "/reference", dmg)
        os.unlink(cdir + "/reference")
    elif kind == "o":
        j = load(bdir + "/stale/final.json")
        man, fmap = j["manifest"], j["map"]
        secs = changed_sectors(bdir + "/stale/final.img", dmg)
    else:
        man = load(bdir + "/manifest.json")
        fmap = load(bdir + "/map.json")
        # an interrupted repair: the damage is the inner case's, not what
        # the killed fsck.ntfs wrote before it died
        secs = changed_sectors(bdir + "/image", cdir + "/inner" if kind == "i" else dmg)
    safe = untouched(man, fmap, secs)
    nfiles = sum(1 for e in man.values() if e["t"] in "fl")
    r = {"id": cid, "changed_sectors": len(secs), "files": nfiles, "untouched": len(safe)}
    if kind in "mldjvf":
        r["components"] = open(cdir + "/components").read().split()
    if kind == "i":
        # -9: killed; anything else: the repair had fewer than K writes
        r["killed_rc"] = int(open(cdir + "/killed_rc").read())
    if not secs and kind not in "ck":
        r["noop"] = True
        return r
    # ours
    img = cdir + "/ours.img"
    subprocess.run(["cp", "--sparse=always", dmg, img], check=True)
    o, crash, notes = {}, [], []
    h0 = digest(img)
    rc, txt = run([FSCK, "-n", "--json", img])
    o["n1"], o["n1_wrote"] = rc, digest(img) != h0
    o["n1_codes"] = problem_codes(txt)
    if rc == HANG or rc < 0 or sanitizer(txt):
        crash.append("-n: %s" % ("hang" if rc == HANG else "signal %d" % -rc if rc < 0 else "sanitizer"))
    save(cdir + "/ours.n1.log", txt)
    rc, txt = run([FSCK, "-a", "--json", img])
    o["a1"] = rc
    o["a1_codes"] = problem_codes(txt)
    if rc == HANG or rc < 0 or sanitizer(txt):
        crash.append("-a: %s" % ("hang" if rc == HANG else "signal %d" % -rc if rc < 0 else "sanitizer"))
    save(cdir + "/ours.a1.log", txt)
    h1 = digest(img)
    o["a1_wrote"] = h1 != h0
    rc, txt = run([FSCK, "-n", img])
    o["n2"], o["n2_wrote"] = rc, digest(img) != h1
    if rc == HANG or rc < 0 or sanitizer(txt):
        crash.append("-n after -a: %s" % ("hang" if rc == HANG else "signal/sanitizer"))
    save(cdir + "/ours.n2.log", txt)
    rc, txt = run([FSCK, "-a", img])
    o["a2"], o["a2_same"] = rc, digest(img) == h1
    if rc == HANG or rc < 0 or sanitizer(txt):
        crash.append("second -a: %s" % ("hang" if rc == HANG else "signal/sanitizer"))
    save(cdir + "/ours.a2.log", txt)
    # -a -z on a copy of the damaged image, then --undo: the original
    # bytes must come back (issue 10: "-z then --undo restores the
    # original checksum in every lab case")
    u = cdir + "/undo.img"
    subprocess.run(["cp", "--sparse=always", dmg, u], check=True)
    rc, txt = run([FSCK, "-a", "-z", cdir + "/undo", u])
    o["az"] = rc
    if rc == HANG or rc < 0 or sanitizer(txt):
        crash.append("-a -z: %s" % ("hang" if rc == HANG else "signal/sanitizer"))
    rc, txt2 = run([FSCK, "--undo", cdir + "/undo", u])
    o["undo"], o["undo_same"] = rc, digest(u) == h0
    if rc == HANG or rc < 0 or sanitizer(txt2):
        crash.append("--undo: %s" % ("hang" if rc == HANG else "signal/sanitizer"))
    save(cdir + "/ours.undo.log", txt + txt2)
    for f in (u, cdir + "/undo"):
        if os.path.exists(f):
            os.unlink(f)
    o["crash"] = crash
    r["ours"] = o
    full = os.path.getsize(bdir + "/image") if kind == "u" else None
    shape(o, img, dmg)
    judge_after(o, img, cid, cdir, man, sid, full)
    # ntfsck -a on its own copy, judged the same way
    if sid:
        ref = cdir + "/ref.img"
        subprocess.run(["cp", "--sparse=always", dmg, ref], check=True)
        x = {}
        rc, txt = ntfsck("-a", ref, cid + "-r")
        x["a1"] = rc
        save(cdir + "/ref.a1.log", txt)
        shape(x, ref, dmg)
        rg = grown(ref, full)
        rc, txt = ntfsck("-n", rg, cid + "-r")
        x["ntfsck_n"] = rc
        after = mount_manifest(rg, cdir + "/mnt")
        x["mounts"] = after is not None
        x["surv"] = survivors(man, after or {})
        x["surv_any"] = len(survivors_any_name(man, after or {}))
        r["ref"] = x
        os.unlink(ref)
        if rg != ref:
            os.unlink(rg)
    r["untouched_lost"] = sorted(set(safe) - set(o["surv"]))
    if sid:
        r["ref_untouched_lost"] = sorted(set(safe) - set(r["ref"]["surv"]))
    if sid:
        r["lost_vs_ref"] = sorted(set(r["ref"]["surv"]) - set(o["surv"]))
    r["seconds"] = round(time.time() - t0, 1)
    if cid in KWALK and o["a1"] in (0, 1):
        # kept for the kernel walk (--kwalk)
        os.makedirs(os.path.join(out, "kwalk", "all"), exist_ok=True)
        os.rename(img, os.path.join(out, "kwalk", "all", cid + ".img"))
    else:
        os.unlink(img)
    return r


def judge_eio(cid, bases, out, sid):
    """A read-error case (eio.py): the base image read through the shim.
    Every run of a checker reads through it (the disk keeps failing); the
    oracles (ntfsck -n, the ntfs-3g manifest, the bytes) read without."""
    t0 = time.time()
    _, b, rest = cid.split("-", 2)
    bdir = bases[b]
    cdir = os.path.join(out, "cases", cid)
    os.makedirs(cdir, exist_ok=True)
    man, fmap = load(bdir + "/manifest.json"), load(bdir + "/map.json")
    with open(bdir + "/image", "rb") as f:
        rngs, mode = EI.case_ranges(bytearray(f.read()), man, rest)
    so = EI.shim(out)
    secs = EI.sectors(rngs)
    safe = untouched(man, fmap, secs)
    nfiles = sum(1 for e in man.values() if e["t"] in "fl")
    r = {"id": cid, "changed_sectors": len(secs), "files": nfiles, "untouched": len(safe),
         "eio": {"ranges": rngs, "mode": mode}}
    img = cdir + "/ours.img"
    subprocess.run(["cp", "--sparse=always", bdir + "/image", img], check=True)
    o, crash = {}, []

    def fsck(args, tag, dev=img):
        log = "%s/hits.%s" % (cdir, tag)
        rc, txt = run([FSCK] + args + [dev], env=EI.env(so, dev, rngs, mode, log))
        save("%s/ours.%s.log" % (cdir, tag), txt)
        if rc == HANG or rc < 0 or sanitizer(txt):
            crash.append("%s: %s" % (tag, "hang" if rc == HANG else "signal %d" % -rc if rc < 0 else "sanitizer"))
        return rc, EI.hits(log)

    h0 = digest(img)
    o["n1"], o["hits"] = fsck(["-n"], "n1")
    o["n1_wrote"] = digest(img) != h0
    o["a1"], _ = fsck(["-a"], "a1")
    h1 = digest(img)
    wrote = changed_sectors(bdir + "/image", img)
    o["wrote"], o["wrote_out"] = len(wrote), len(set(wrote) - set(secs))
    o["n2"], _ = fsck(["-n"], "n2")
    o["n2_wrote"] = digest(img) != h1
    o["a2"], _ = fsck(["-a"], "a2")
    o["a2_same"] = digest(img) == h1
    u = cdir + "/undo.img"
    subprocess.run(["cp", "--sparse=always", bdir + "/image", u], check=True)
    o["az"], _ = fsck(["-a", "-z", cdir + "/undo"], "az", u)
    rc, txt = run([FSCK, "--undo", cdir + "/undo", u])
    o["undo"], o["undo_same"] = rc, digest(u) == h0
    for f in (u, cdir + "/undo"):
        if os.path.exists(f):
            os.unlink(f)
    o["crash"] = crash
    r["ours"] = o
    judge_after(o, img, cid, cdir, man, sid)
    if sid:
        ref = cdir + "/ref.img"
        subprocess.run(["cp", "--sparse=always", bdir + "/image", ref], check=True)
        x, hx = {}, {}
        rc, txt = ntfsck("-n", ref, cid + "-rn", (so, rngs, mode, hx))
        x["n1"], x["hits"] = rc, hx.get("hits", 0)
        save(cdir + "/ref.n1.log", txt)
        rc, txt = ntfsck("-a", ref, cid + "-r", (so, rngs, mode, hx))
        x["a1"] = rc
        save(cdir + "/ref.a1.log", txt)
        wrote = changed_sectors(bdir + "/image", ref)
        x["wrote"], x["wrote_out"] = len(wrote), len(set(wrote) - set(secs))
        rc, txt = ntfsck("-n", ref, cid + "-r")
        x["ntfsck_n"] = rc
        after = mount_manifest(ref, cdir + "/mnt")
        x["mounts"] = after is not None
        x["surv"] = survivors(man, after or {})
        x["surv_any"] = len(survivors_any_name(man, after or {}))
        r["ref"] = x
        os.unlink(ref)
    # every file is still on the disk: any loss is the checker's doing
    allf = [p for p, e in man.items() if e["t"] in "fl" and e.get("sha") != "EIO"]
    r["lost"] = sorted(set(allf) - set(o["surv"]))
    r["untouched_lost"] = sorted(set(safe) - set(o["surv"]))
    if sid:
        r["ref_lost"] = sorted(set(allf) - set(r["ref"]["surv"]))
        r["ref_untouched_lost"] = sorted(set(safe) - set(r["ref"]["surv"]))
        r["lost_vs_ref"] = sorted(set(r["ref"]["surv"]) - set(o["surv"]))
    r["seconds"] = round(time.time() - t0, 1)
    os.unlink(img)
    return r


def verdict_eio(r):
    """The verdict of a read-error case: nothing written may change the
    volume as read without the failing disk; a persistent error on what
    the checker read is reported; a transient one is no error."""
    o, mode = r["ours"], r["eio"]["mode"]
    why = []
    if o["n1_wrote"] or o["n2_wrote"]:
        why.append("-n wrote")
    if o["crash"]:
        why.append("crash(" + "; ".join(o["crash"]) + ")")
    # fsck(8)'s codes add up: 12 is errors left and a check cut short
    if o["n1"] not in (0, 4, 8, 12) or o["a1"] not in (0, 1, 2, 4, 8, 12):
        why.append("exit -n %d -a %d" % (o["n1"], o["a1"]))
    if mode == "once" and o["n1"] != 0:
        why.append("a transient error not retried (-n exit %d)" % o["n1"])
    if mode != "once" and o["hits"] and o["n1"] == 0:
        why.append("a read error not reported (-n exit 0)")
    if mode == "once" and o["wrote"]:
        why.append("-a wrote %d sectors after a transient error" % o["wrote"])
    if o["wrote_out"]:
        why.append("-a wrote %d sectors outside the unreadable ones" % o["wrote_out"])
    if not o["a2_same"]:
        why.append("second -a changed bytes")
    # an undo file cannot record a device it cannot read back (-a then
    # writes nothing and --undo refuses the unfinished file): the bytes
    # must be the original's
    if not o["undo_same"]:
        why.append("--undo exit %d, original NOT restored" % o["undo"])
    if o.get("ntfsck_n", 0) != 0:
        why.append("ntfsck -n exit %d" % o["ntfsck_n"])
    if not o["mounts"]:
        why.append("ntfs-3g cannot mount")
    if r["lost"]:
        why.append("lost %d files" % len(r["lost"]))
    ours_clean = not why
    x = r.get("ref")
    ref_clean, worse = None, False
    if x:
        ref_clean = (x["a1"] in (0, 1, 2, 4, 8) and x["ntfsck_n"] == 0 and x["mounts"]
                     and not r["ref_lost"] and not x["wrote_out"]
                     and not (mode == "once" and x["wrote"]))
        worse = bool(r["lost_vs_ref"]) or (ref_clean and not ours_clean)
        if r["lost_vs_ref"]:
            why.append("loses %d files ntfsck -a keeps" % len(r["lost_vs_ref"]))
    return ours_clean, ref_clean, worse, why


def verdict_truncated(r):
    """The verdict of a truncated case (truncate.py): the truncation
    reported before and after -a, nothing written past the end, the
    volume not shrunk, one run converging, every name that was not cut
    kept (on the result grown back to full size)."""
    o = r["ours"]
    why = []
    if o["n1_wrote"] or o["n2_wrote"]:
        why.append("-n wrote")
    if o["crash"]:
        why.append("crash(" + "; ".join(o["crash"]) + ")")
    if o["n1"] not in (4, 8):
        why.append("-n exit %d (the truncation not reported)" % o["n1"])
    if o["a1"] not in (0, 1, 2, 4):
        why.append("-a exit %d" % o["a1"])
    if o["n2"] not in (4, 8):
        why.append("-n after -a exit %d" % o["n2"])
    if not o["size_same"]:
        why.append("-a changed the image size")
    if not o["boot_same"]:
        why.append("-a changed the volume size")
    if not o["a2_same"]:
        why.append("second -a changed bytes")
    if not o.get("undo_same", True) or o.get("undo", 0):
        why.append("--undo exit %d, original %s" % (o["undo"], "restored" if o["undo_same"] else "NOT restored"))
    if not o["mounts"]:
        why.append("ntfs-3g cannot mount (grown back)")
    if r["untouched_lost"]:
        why.append("lost %d untouched files" % len(r["untouched_lost"]))
    ours_clean = not why
    x = r.get("ref")
    ref_clean, worse = None, False
    if x:
        ref_clean = (x["size_same"] and x["boot_same"] and x["mounts"]
                     and not r["ref_untouched_lost"])
        worse = bool(r["lost_vs_ref"]) or (ref_clean and not ours_clean)
        if r["lost_vs_ref"]:
            why.append("loses %d files ntfsck -a keeps" % len(r["lost_vs_ref"]))
    return ours_clean, ref_clean, worse, why


def verdict(r):
    """(ours clean, ntfsck clean, ours worse, failure reasons) of a result."""
    if r["id"][0] == "e":
        return verdict_eio(r)
    if r["id"][0] == "u":
        return verdict_truncated(r)
    o = r["ours"]
    why = []
    if o["n1_wrote"] or o["n2_wrote"]:
        why.append("-n wrote")
    if o["crash"]:
        why.append("crash(" + "; ".join(o["crash"]) + ")")
    if o["n1"] not in (0, 1, 4, 8):
        why.append("-n exit %d" % o["n1"])
    if o["a1"] not in (0, 1, 2, 4):
        why.append("-a exit %d" % o["a1"])
    if o["a1"] not in (0, 1):
        why.append("-a left errors")
    if o["n2"] != 0:
        why.append("-n after -a exit %d" % o["n2"])
    if not o["a2_same"]:
        why.append("second -a changed bytes")
    if not o.get("size_same", True):
        why.append("-a changed the image size")
    if "undo" in o and (o["undo"] != 0 or not o["undo_same"]):
        why.append("--undo exit %d, %s" % (o["undo"], "original restored" if o["undo_same"]
                                           else "original NOT restored"))
    if o.get("ntfsck_n", 0) != 0:
        why.append("ntfsck -n exit %d" % o["ntfsck_n"])
    if not o["mounts"]:
        why.append("ntfs-3g cannot mount")
    if r["untouched_lost"]:
        why.append("lost %d untouched files" % len(r["untouched_lost"]))
    ours_clean = not why
    x = r.get("ref")
    ref_clean = None
    worse = False
    if x:
        ref_clean = (x["a1"] in (0, 1) and x["ntfsck_n"] == 0 and x["mounts"]
                     and not r["ref_untouched_lost"])
        worse = bool(r["lost_vs_ref"]) or (ref_clean and not ours_clean)
        if r["lost_vs_ref"]:
            why.append("loses %d files ntfsck -a keeps" % len(r["lost_vs_ref"]))
    if kwalk_bad(r):
        why.append("kernel walk: %s" % r["kwalk"])
        ours_clean = False
    return ours_clean, ref_clean, worse, why


def kwalk_bad(r):
    """The kernel walk of the repaired volume failed (or None: not walked)."""
    w = r.get("kwalk")
    return w is not None and w != "ok ntfsck=0 klog=0"


def line(r):
    if r.get("noop"):
        return "%-48s skipped: the damage changed nothing" % r["id"]
    o, x = r["ours"], r.get("ref")
    oc, rc, worse, why = verdict(r)
    s = "%-48s ours -n %d -a %d -n %d %s files %4d/%d" % (
        r["id"], o["n1"], o["a1"], o["n2"], "same" if o["a2_same"] else "DIFF",
        len(o["surv"]), r["files"])
    if r["id"][0] == "e":
        s += " wrote %d/%d" % (o["wrote_out"], o["wrote"])
    if x and r["id"][0] == "e":
        s += " | ntfsck -n %d -a %d wrote %d/%d, -n %d files %4d" % (
            x["n1"], x["a1"], x["wrote_out"], x["wrote"], x["ntfsck_n"], len(x["surv"]))
    elif x:
        s += " | ntfsck -a %d -n %d files %4d" % (x["a1"], x["ntfsck_n"], len(x["surv"]))
    s += "  %s" % ("ok" if oc else "FAIL: " + ", ".join(why))
    dv = agree(o)
    if dv:
        s += " [-n/-a diverge: %s]" % "; ".join(dv)
    if worse:
        s += " [worse than ntfsck]"
    return s


# --- runs and tables ----------------------------------------------------------

def load(p):
    with open(p) as f:
        return json.load(f)


def save(p, txt):
    with open(p, "w") as f:
        f.write(txt)


def results(out):
    d = os.path.join(out, "results")
    return [load(os.path.join(d, f)) for f in sorted(os.listdir(d)) if f.endswith(".json")]


def table(out, fh=sys.stdout, by_base=True):
    rs = [r for r in results(out) if not r.get("noop")]
    rows = {}
    kinds = ("control", "targeted", "random", "sectors", "powercut", "kpowercut", "stale", "adverse", "compound",
             "interrupted", "eio", "truncated", "lost", "misdirect", "crossmeta", "use", "realdev", "field", "external")
    for r in rs:
        k = {"c": "control", "t": "targeted", "r": "random", "p": "powercut",
             "k": "kpowercut", "x": "external", "s": "sectors", "o": "stale", "a": "adverse", "i": "interrupted",
             "e": "eio", "m": "compound", "u": "truncated", "l": "lost", "d": "misdirect",
             "j": "crossmeta", "g": "use", "v": "realdev", "f": "field"}[r["id"][0]]
        for g in ("all", k, "%s/%s" % (k, r["id"].split("-")[1])):
            rows.setdefault(g, []).append(r)
    p = lambda *a: print(*a, file=fh)  # noqa: E731
    p("%-16s %6s %7s %8s %13s %13s %6s %8s %7s %9s %7s" % (
        "kind", "cases", "ours ok", "ntfsck ok", "files ours", "files ntfsck",
        "worse", "-n wrote", "crashes", "lost untch", "diverge"))
    order = [k for k in kinds] + ["all"] + sorted(g for g in rows if "/" in g and by_base)
    for k in order:
        if k not in rows:
            continue
        g = rows[k]
        v = [verdict(r) for r in g]
        hasref = any(r.get("ref") for r in g)
        p("%-16s %6d %7d %8s %13s %13s %6s %8d %7d %9d %7s" % (
            k, len(g), sum(1 for x in v if x[0]),
            sum(1 for x in v if x[1]) if hasref else "n/a",
            "%d/%d" % (sum(len(r["ours"]["surv"]) for r in g), sum(r["files"] for r in g)),
            "%d" % sum(len(r["ref"]["surv"]) for r in g if r.get("ref")) if hasref else "n/a",
            sum(1 for x in v if x[2]) if hasref else "n/a",
            sum(1 for r in g if r["ours"]["n1_wrote"] or r["ours"]["n2_wrote"]),
            sum(1 for r in g if r["ours"]["crash"]),
            sum(1 for r in g if r["untouched_lost"]),
            "%d" % sum(1 for r in g if agree(r["ours"])) if any(
                agree(r["ours"]) is not None for r in g) else "n/a"))
    kw = [r for r in rs if r.get("kwalk") is not None]
    if kw:
        p("kernel walk (Linux ntfs driver read-write after our -a): %d walked, %d ok%s" % (
            len(kw), sum(1 for r in kw if not kwalk_bad(r)),
            "".join("\n  %s: %s" % (r["id"], r["kwalk"]) for r in kw if kwalk_bad(r))))
    ag = [r for r in rs if agree(r["ours"]) is not None]
    if ag:
        # (d) of "-n and -a agree": how many problems each reports, not judged
        nn = sum(len(r["ours"]["n1_codes"]) for r in ag)
        na = sum(len(r["ours"]["a1_codes"]) for r in ag)
        far = [r["id"] for r in ag if not (len(r["ours"]["n1_codes"]) + 1) / 3
               <= len(r["ours"]["a1_codes"]) + 1 <= 3 * (len(r["ours"]["n1_codes"]) + 1)]
        p("-n/-a agreement: %d cases judged, %d diverge; problems reported: -n %d, -a %d (ratio %.2f); "
          "%d cases with -a's count over 3x apart from -n's%s" % (
              len(ag), sum(1 for r in ag if agree(r["ours"])), nn, na, na / nn if nn else 0,
              len(far), (": " + " ".join(far[:12]) + (" ..." if len(far) > 12 else "")) if far else ""))
        div = [r["id"] for r in ag if agree(r["ours"])]
        if div:
            p("-n and -a diverge (%d): %s" % (len(div), " ".join(div)))
    worse = [r["id"] for r in rs if verdict(r)[2]]
    if worse:
        p("ours worse than ntfsck -a (%d): %s" % (len(worse), " ".join(worse)))
    for name, sel in (("-n wrote", lambda r: r["ours"]["n1_wrote"] or r["ours"]["n2_wrote"]),
                      ("crashed or hung", lambda r: r["ours"]["crash"]),
                      ("-z then --undo did not restore the damaged image",
                       lambda r: "undo" in r["ours"] and (r["ours"]["undo"] or not r["ours"]["undo_same"]))):
        bad = [r["id"] for r in rs if sel(r)]
        if bad:
            p("%s (%d): %s" % (name, len(bad), " ".join(bad)))


def known_bad():
    out = {}
    try:
        with open(os.path.join(HERE, "known-bad")) as f:
            for ln in f:
                ln = ln.split("#", 1)[0].strip()
                if ln:
                    cid, _, why = ln.partition(" ")
                    out[cid] = why.strip()
    except FileNotFoundError:
        pass
    return out


INVARIANTS = {
    "nwrite": (False, lambda r: ["-n wrote"] if r["ours"]["n1_wrote"] or r["ours"]["n2_wrote"] else []),
    "crash": (False, lambda r: r["ours"]["crash"]),
    "exit": (True, lambda r: [w for w in ("-n exit %d" % r["ours"]["n1"],) if r["ours"]["n1"] not in (0, 1, 4, 8)]
             + [w for w in ("-a exit %d" % r["ours"]["a1"],) if r["ours"]["a1"] not in (0, 1, 2, 4)]),
    "converge": (True, lambda r: ([] if r["ours"]["a1"] not in (0, 1) else
                                  (["-n after -a exit %d" % r["ours"]["n2"]] if r["ours"]["n2"] else [])
                                  + ([] if r["ours"]["a2_same"] else ["second -a changed bytes"]))),
    "control": (True, lambda r: [] if r["id"][0] != "c" or verdict(r)[0] else
                ["undamaged volume: " + ", ".join(verdict(r)[3])]),
    "undo": (False, lambda r: ["not judged (a result of an older lab)"] if "undo" not in r["ours"] else
        [] if r["ours"]["undo"] == 0 and r["ours"]["undo_same"] else
        ["-a -z exit %d, --undo exit %d, %s" % (r["ours"]["az"], r["ours"]["undo"],
                                                "original restored" if r["ours"]["undo_same"]
                                                else "original NOT restored")]),
    "keeps": (True, lambda r: ["loses %s" % ", ".join(r["lost_vs_ref"][:5])] if r.get("lost_vs_ref") else []),
    "nothing-lost": (True, lambda r: ["lost %s" % ", ".join(r["untouched_lost"][:5])] if r["untouched_lost"] else []),
    "kwalk": (True, lambda r: ["kernel walk: %s" % r["kwalk"]] if kwalk_bad(r) else []),
    "agree": (True, lambda r: [] if r["id"][0] == "e" else ["not judged (a crash or a result of an older lab)"]
              if "ours" not in r or agree(r["ours"]) is None else agree(r["ours"])),
}


def check(out, inv):
    excl, fn = INVARIANTS[inv]
    kb = known_bad()
    rs = [r for r in results(out) if not r.get("noop")]
    if inv == "keeps" and not any(r.get("ref") for r in rs):
        print("no ntfsck results (no sid tree)")
        return 77
    if inv == "kwalk" and not any(r.get("kwalk") for r in rs):
        print("no kernel walk in this run")
        return 77
    fails, listed = [], []
    for r in rs:
        why = fn(r)
        if why and excl and r["id"] in kb:
            listed.append("%s: %s (known-bad: %s)" % (r["id"], "; ".join(why), kb[r["id"]]))
        elif why:
            fails.append("%s: %s%s" % (r["id"], "; ".join(why),
                                       " (known-bad: %s)" % kb[r["id"]] if r["id"] in kb else ""))
    for ln in listed:
        print("# excluded, listed in known-bad: " + ln)
    for ln in fails:
        print(ln)
    print("%s: %d cases, %d fail, %d listed in known-bad" % (inv, len(rs), len(fails), len(listed)))
    return 1 if fails else 0


def main():
    ap = argparse.ArgumentParser(prog="run-lab")
    sub = ap.add_subparsers(dest="cmd", required=True)
    rp = sub.add_parser("run")
    rp.add_argument("--cases", type=int, default=0, help="sample N cases (0: all)")
    rp.add_argument("--seed", type=int, default=1)
    rp.add_argument("--kinds", default="targeted,random,powercut")
    rp.add_argument("--jobs", type=int, default=2)
    rp.add_argument("--out", default="")
    rp.add_argument("--bases", default="ours4k,ours1k,sid4k,sid64k",
                    help="also kern4k, rich4k, rich1k, deep4k, aged4k, s4k, s4kaged, win4k, "
                    "the geometry matrix's g* bases (geometry: all of them)")
    rp.add_argument("--random", type=int, default=100, help="random cases per base")
    rp.add_argument("--cuts", type=int, default=40, help="power cuts per base")
    rp.add_argument("--adverse", type=int, default=0,
                    help="adverse-write cases per base (kind adverse; default --random)")
    rp.add_argument("--compound", type=int, default=0,
                    help="compound-damage cases per base (kind compound; default --random)")
    rp.add_argument("--lost", type=int, default=0,
                    help="lost-write cases per base with an earlier state (kind lost; default --random)")
    rp.add_argument("--misdirect", type=int, default=0,
                    help="misdirected-write cases per base (kind misdirect; default --random)")
    rp.add_argument("--stale", type=int, default=40,
                    help="stale-block cases per base with a recording (kind stale)")
    rp.add_argument("--kcuts", type=int, default=12,
                    help="kernel power cuts per base with a recording (kind kpowercut)")
    rp.add_argument("--krecord", action="store_true",
                    help="record the kernel workload on ours4k, sid4k, rich4k and aged4k in QEMU (kpowercut)")
    rp.add_argument("--kwalk", type=int, default=0,
                    help="walk N kernel-cut volumes after our -a with the Linux driver (QEMU)")
    rp.add_argument("--only", default="", help="comma-separated case ids")
    rp.add_argument("--no-ntfsck", action="store_true",
                    help="judge ours only: no ntfsck oracles, no sid bases (a quicker campaign, e.g. of -n/-a agreement)")
    sub.add_parser("table").add_argument("out")
    c = sub.add_parser("check")
    c.add_argument("out")
    c.add_argument("invariant", choices=sorted(INVARIANTS))
    sub.add_parser("manifest").add_argument("mnt")
    a = ap.parse_args()
    if a.cmd == "manifest":
        json.dump(B.manifest(a.mnt), sys.stdout)
        return 0
    if a.cmd == "table":
        table(a.out)
        return 0
    if a.cmd == "check":
        return check(a.out, a.invariant)
    return run_lab(a)


def run_lab(a):
    for p in (FSCK, MKFS):
        if not os.access(p, os.X_OK):
            sys.exit("lab: %s is missing (build first, or set FSCK_NTFS / MKFS_NTFS)" % p)
    out = a.out or "/dev/shm/fsforge-lab-%d" % os.getpid()
    os.makedirs(os.path.join(out, "results"), exist_ok=True)
    kinds = set(a.kinds.split(","))
    sid = not a.no_ntfsck and have_sid()
    print("lab: judging %s; ntfsck (sid tree): %s; output in %s" % (
        FSCK, "yes" if sid else "NO (ntfsck oracles and sid bases skipped)", out), flush=True)
    bases = {}
    names = [n for b in a.bases.split(",") for n in (B.GEOMETRY if b == "geometry" else [b])]
    for b in names:
        if B.BASES[b][0] == "sid" and not sid:
            continue
        t = time.time()
        bases[b] = B.make(b, os.path.join(out, "bases"), MKFS, SID, 1)
        if ("powercut" in kinds and b in ("ours4k", "sid4k")
                or "stale" in kinds and b in ("ours4k", "sid4k", "rich4k", "rich1k")):
            PC.record(bases[b], 1)
        if "kpowercut" in kinds or "stale" in kinds and b == "kern4k":
            # kern4k's recording is a fixture; the others are recorded in
            # QEMU only when asked (--krecord: a few minutes each)
            kl = os.path.join(bases[b], "klog.xz")
            if b == "kern4k" and not os.path.exists(kl):
                shutil.copy(os.path.join(B.FIXTURE, "kern4k.klog.xz"), kl)
            elif a.krecord and b in KRECORD:
                KP.record(bases[b], 1, log=lambda m: print(m, flush=True))
            if os.path.exists(kl) and "kpowercut" in kinds:
                KP.prepare(bases[b])
        if "stale" in kinds and stale_writes(bases[b]):
            stale_reference(bases[b])
        print("lab: base %s ready (%.0f s)" % (b, time.time() - t), flush=True)
    # one undamaged control per base: the oracles themselves (and fsck.ntfs's
    # false positives) are checked on a volume that needs no repair
    ids = a.only.split(",") if a.only else ["c-%s-clean" % b for b in bases] + pick(
        case_list(bases, kinds, a.seed, a.random, a.cuts, a.stale, a.adverse, a.compound, a.lost, a.misdirect), a.cases, a.seed, kinds) + kcases(
        bases, kinds, a.seed, a.kcuts)
    ext = os.path.join(out, "external")
    if not a.only and os.path.isdir(ext):
        ids += ["x-" + f[:-4] for f in sorted(os.listdir(ext))
                if f.endswith(".img") and f.split("-")[0] in bases]
    print("lab: %d cases" % len(ids), flush=True)
    kids = [i for i in ids if i[0] == "k"]
    n = min(a.kwalk, len(kids))
    KWALK.update(kids[len(kids) * i // n] for i in range(n))
    lock = threading.Lock()

    def one(cid):
        rf = os.path.join(out, "results", cid + ".json")
        if os.path.exists(rf):
            r = load(rf)
        else:
            try:
                r = judge(cid, bases, out, sid)
            except Exception as e:  # a lab bug must not pass as a case
                r = {"id": cid, "error": repr(e)}
                with lock:
                    print("%-48s LAB ERROR %r" % (cid, e), flush=True)
                return
            with open(rf + ".tmp", "w") as f:
                json.dump(r, f)
            os.rename(rf + ".tmp", rf)
            if r.get("noop") or verdict(r)[0]:
                # a passing case keeps only its result; a failing one keeps
                # its damaged image and logs under OUT/cases/ID
                shutil.rmtree(os.path.join(out, "cases", cid), ignore_errors=True)
        with lock:
            print(line(r), flush=True)

    with cf.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        list(ex.map(one, ids))
    if a.kwalk:
        kernel_walk(out, sorted(KWALK))
    print()
    table(out)
    with open(os.path.join(out, "table.txt"), "w") as f:
        table(out, f)
    return 0


def kernel_walk(out, kids):
    """The fourth oracle: the kernel-cut cases KIDS that our -a repaired
    (exit 0/1) are mounted read-write by the Linux
    ntfs driver in one QEMU boot (tests/kernel/guest/ntfs-kwalk.sh): every
    file read, a file created and deleted, unmounted, then ntfsck -n.  The
    outcome is stored in each case's result ("kwalk")."""
    rdir = os.path.join(out, "results")
    todo = []
    for cid in kids:
        rf = os.path.join(rdir, cid + ".json")
        if not os.path.exists(rf):
            continue
        r = load(rf)
        if r.get("kwalk") is None and os.path.exists(os.path.join(out, "kwalk", "all", cid + ".img")):
            todo.append(cid)
    sel = todo
    if not sel:
        return
    share = os.path.join(out, "kwalk", "share")
    shutil.rmtree(share, ignore_errors=True)
    os.makedirs(os.path.join(share, "imgs"))
    for cid in sel:
        shutil.copy(os.path.join(out, "kwalk", "all", cid + ".img"), os.path.join(share, "imgs", cid + ".img"))
    print("lab: kernel walk of %d repaired volumes in QEMU" % len(sel), flush=True)
    rc, txt = run([os.path.join(TOP, "tests/kernel/vm-run"), "--sid", "--mem", "1536",
                   "--timeout", str(300 + 120 * len(sel)), "--share", share,
                   os.path.join(TOP, "tests/kernel/guest/ntfs-kwalk.sh")], timeout=600 + 120 * len(sel))
    res = {}
    try:
        with open(os.path.join(share, "kwalk.result")) as f:
            for ln in f:
                cid, _, st = ln.strip().partition(" ")
                res[cid] = st
    except FileNotFoundError:
        pass
    for cid in sel:
        rf = os.path.join(rdir, cid + ".json")
        r = load(rf)
        r["kwalk"] = res.get(cid, "no result (vm-run exit %d)" % rc)
        if rc != 0 and cid in res:
            r["kwalk"] += " vm-run=%d" % rc
        with open(rf + ".tmp", "w") as f:
            json.dump(r, f)
        os.rename(rf + ".tmp", rf)
        print(line(r), flush=True)
    if rc != 0:
        print("lab: kernel walk: vm-run exit %d\n%s" % (rc, txt[-2000:]), flush=True)
    shutil.copy(os.path.join(share, "kwalk.log"), os.path.join(out, "kwalk", "kwalk.log")) \
        if os.path.exists(os.path.join(share, "kwalk.log")) else None


if __name__ == "__main__":
    sys.exit(main())
