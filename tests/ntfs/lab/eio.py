"""Read errors: a failing disk that returns EIO for some sectors (not
zeros: the `sectors` kind models remapped sectors that read back wrong).
The image is the base, unchanged; the checkers read it through
tests/lib/eio-shim.c (LD_PRELOAD), which fails reads of the listed byte
ranges.  Case ids `e-BASE-TARGET-MODE`:

  TARGET  rec       the first sector of a fragmented file's MFT record
          span      4 KiB from the second sector of a record: the tail of
                    one record, three whole ones, the head of the next
          bigindx   a sector of the middle INDX block of the big directory
          rootindx  the first sector of the root's first INDX block
          mft0      the first sector of record 0 ($MFT; $MFTMirr has it)
          mirr      the first sector of $MFTMirr
          bitmap    the first cluster of $Bitmap
          mftbitmap the first cluster of $MFT:$BITMAP
          bootbak   the backup boot sector
          logfile   the first cluster of $LogFile (its restart page)
          sds       the first cluster of $Secure:$SDS
          data      a cluster in the middle of the 3 MiB file
  MODE    eio       every read touching the range fails (EIO)
          short     the bytes before the range come back (a short read),
                    a read starting in it fails: the kernel's buffered
                    reads of a medium error
          once      each range fails once, then reads fine (a retry cures)

What the judge expects (lab.py, judge and verdict): nothing the checker
writes may change the volume as read without the shim (its manifest
through ntfs-3g, ntfsck -n), -n never writes, no crash; a persistent
error on metadata the checker reads is reported (exit 4 or 8); a
transient one is not an error (exit 0, nothing written)."""
import os
import subprocess

import damages as D
import ntfsparse as P

HERE = os.path.dirname(os.path.abspath(__file__))
SHIM_SRC = os.path.abspath(os.path.join(HERE, "../../lib/eio-shim.c"))
TARGETS = ("rec", "span", "bigindx", "rootindx", "mft0", "mirr", "bitmap",
           "mftbitmap", "bootbak", "logfile", "sds", "data")
MODES = ("eio", "short", "once")


def case_ids(base):
    return ["e-%s-%s-%s" % (base, t, m) for t in TARGETS for m in MODES]


def _first_cluster(v, n, name=""):
    at, rec = v.rec(n)
    off = v.attr(n, 0x80, name)
    return next(lcn for lcn, _ in P.runlist(rec, off) if lcn is not None) * v.g.cs


def ranges(v, target):
    """[(start, length)] in bytes of the unreadable ranges of TARGET."""
    g, s = v.g, v.g.bps
    if target == "rec":
        return [(g.rec_off(v.ino("frag/f1")), s)]
    if target == "span":
        return [(g.rec_off(v.ino("frag/f2")) + s, 4096)]
    if target == "bigindx":
        b = v.index_blocks(v.ino("big"))
        return [(b[len(b) // 2] + s, s)]
    if target == "rootindx":
        return [(v.index_blocks(5)[0], s)]
    if target == "mft0":
        return [(g.rec_off(0), s)]
    if target == "mirr":
        return [(g.mirr_lcn * g.cs, s)]
    if target == "bitmap":
        return [(_first_cluster(v, 6), g.cs)]
    if target == "mftbitmap":
        at, rec = v.rec(0)
        off = next(o for o, t, nm, nr in P.attrs(rec) if t == 0xB0)
        if not rec[off + 8]:
            return [(g.rec_off(0), s)]  # resident: record 0 itself
        return [(P.runlist(rec, off)[0][0] * g.cs, g.cs)]
    if target == "bootbak":
        return [(g.backup, s)]
    if target == "logfile":
        return [(_first_cluster(v, 2), g.cs)]
    if target == "sds":
        return [(_first_cluster(v, 9, "$SDS"), g.cs)]
    if target == "data":
        at, rec = v.rec(v.ino("bigfile"))
        runs = [(lcn, n) for lcn, n in P.runlist(rec, v.attr(v.ino("bigfile"), 0x80)) if lcn is not None]
        lcn, n = runs[len(runs) // 2]
        return [((lcn + n // 2) * g.cs, g.cs)]
    raise KeyError(target)


def case_ranges(img, man, rest):
    """(ranges, mode) of case `e-BASE-REST` on the base image IMG."""
    target, mode = rest.rsplit("-", 1)
    if mode not in MODES:
        raise KeyError(mode)
    return ranges(D.Vol(img, man), target), mode


def sectors(rngs):
    out = set()
    for at, n in rngs:
        out.update(range(at // 512, (at + n + 511) // 512))
    return sorted(out)


def shim(outdir):
    """The shim, built once into OUTDIR (cc, as the C toolchain is there
    for the build anyway)."""
    so = os.path.join(outdir, "eio-shim.so")
    if not os.path.exists(so) or os.path.getmtime(so) < os.path.getmtime(SHIM_SRC):
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", so + ".tmp", SHIM_SRC, "-ldl"],
                       check=True)
        os.rename(so + ".tmp", so)
    return so


def env(so, img, rngs, mode, log=None, base=None):
    """The environment that makes reads of IMG fail (BASE: to extend)."""
    e = dict(base if base is not None else os.environ)
    e["LD_PRELOAD"] = so
    e["FSFORGE_EIO_FILE"] = img
    e["FSFORGE_EIO"] = ",".join("%d+%d" % r for r in rngs)
    e["FSFORGE_EIO_MODE"] = mode
    # a sanitizer build: its runtime is then not first in the list
    e["ASAN_OPTIONS"] = e.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0"
    if log:
        e["FSFORGE_EIO_LOG"] = log
    return e


def env_args(so, img, rngs, mode, log=None):
    """The same as `env NAME=VALUE ...` arguments (for a chroot)."""
    a = ["env", "LD_PRELOAD=" + so, "FSFORGE_EIO_FILE=" + img,
         "FSFORGE_EIO=" + ",".join("%d+%d" % r for r in rngs), "FSFORGE_EIO_MODE=" + mode]
    if log:
        a.append("FSFORGE_EIO_LOG=" + log)
    return a


def hits(log):
    """How many reads the shim failed or cut short (its log)."""
    try:
        with open(log) as f:
            return sum(1 for _ in f)
    except OSError:
        return 0
