#!/usr/bin/env python3
"""mktars.py OUTDIR: tar archives written by Python's tarfile for
tests/erofs/tar.bats, one per format (py-ustar.tar, py-gnu.tar,
py-pax.tar) with the same entries where the format can hold them, and
py-edge.tar with what only the order of entries decides: duplicates,
implied parent directories, a "./" root entry, "." and ".." components,
a hard link whose target is replaced afterwards; py-global.tar with a
global pax header (owner, time, an xattr for every entry) and bsdtar's
LIBARCHIVE.xattr records (%-encoded names, base64 values); py-aufs.tar
with aufs whiteouts (.wh.NAME, .wh..wh..opq) for --aufs."""
import io
import os
import sys
import tarfile

out = sys.argv[1]
T0 = 1700000000


def info(name, kind=tarfile.REGTYPE, mode=0o644, uid=1000, gid=100, mtime=T0,
         **kw):
    ti = tarfile.TarInfo(name)
    ti.type, ti.mode, ti.uid, ti.gid, ti.mtime = kind, mode, uid, gid, mtime
    for k, v in kw.items():
        setattr(ti, k, v)
    return ti


def add(tf, ti, data=None):
    if data is not None:
        ti.size = len(data)
        tf.addfile(ti, io.BytesIO(data))
    else:
        tf.addfile(ti)


def common(tf, fmt):
    add(tf, info("dir", tarfile.DIRTYPE, 0o755))
    add(tf, info("dir/sub", tarfile.DIRTYPE, 0o2775, uid=0, gid=0))
    add(tf, info("dir/hello", mode=0o640), b"hello, world\n")
    add(tf, info("dir/empty", mode=0o600), b"")
    add(tf, info("dir/sub/numbers", mode=0o4755),
        "".join(f"{i}\n" for i in range(30000)).encode())
    add(tf, info("dir/sub/random", mode=0o644), os.urandom(70000))
    add(tf, info("dir/block4k", mode=0o644), b"\xa5" * 4096)
    add(tf, info("dir/link", tarfile.LNKTYPE, linkname="dir/hello"))
    add(tf, info("dir/sym", tarfile.SYMTYPE, 0o777, linkname="hello"))
    add(tf, info("dir/null", tarfile.CHRTYPE, 0o666, devmajor=1, devminor=3))
    add(tf, info("dir/loop9", tarfile.BLKTYPE, 0o660, devmajor=7, devminor=9))
    add(tf, info("dir/bigdev", tarfile.CHRTYPE, 0o600, devmajor=250,
                 devminor=70000))
    add(tf, info("dir/fifo", tarfile.FIFOTYPE, 0o644))
    add(tf, info("sticky", tarfile.DIRTYPE, 0o1777))
    # a name of 100 bytes exactly, and a long one that ustar splits into
    # prefix and name
    add(tf, info("dir/" + "n" * 96), b"100\n")
    long_dir = "/".join(["d" * 60] * 2)
    add(tf, info(long_dir, tarfile.DIRTYPE, 0o755))
    add(tf, info(long_dir + "/" + "f" * 80), b"split by ustar\n")
    if fmt == tarfile.USTAR_FORMAT:
        return
    # beyond ustar: names and targets over 255 bytes, big ids, old times
    deep = "/".join(["x" * 200] * 3)
    add(tf, info(deep.rsplit("/", 1)[0], tarfile.DIRTYPE, 0o755))
    add(tf, info(deep, tarfile.DIRTYPE, 0o755))
    add(tf, info(deep + "/" + "y" * 250), b"a long path\n")
    add(tf, info("dir/longsym", tarfile.SYMTYPE, 0o777, linkname="t" * 300))
    add(tf, info("dir/longlink", tarfile.LNKTYPE, linkname=deep + "/" + "y" * 250))
    add(tf, info("dir/bigids", uid=3000000000, gid=2**32 - 2), b"ids\n")
    add(tf, info("dir/old", mtime=-86400 * 365), b"1969\n")


def pax_only(tf):
    add(tf, info("dir/xattrs", mtime=T0, pax_headers={
        "mtime": "1700000000.123456789",
        "SCHILY.xattr.user.mime": "text/plain",
        "SCHILY.xattr.user.bin": "\udcff\x00\x01bin",
        "SCHILY.xattr.trusted.overlay.opaque": "y",
        "SCHILY.xattr.security.selinux": "system_u:object_r:etc_t:s0\x00",
    }), b"with xattrs\n")
    add(tf, info("dir/ns", pax_headers={"mtime": "1600000000.5"}), b"ns\n")
    add(tf, info("dir/\u00e9t\u00e9 \u2603"), b"utf-8 name\n")
    add(tf, info("shared1", pax_headers={"SCHILY.xattr.user.same": "v"}), b"1")
    add(tf, info("shared2", pax_headers={"SCHILY.xattr.user.same": "v"}), b"2")
    add(tf, info("shared3", pax_headers={"SCHILY.xattr.user.same": "v"}), b"3")


for name, fmt in (("ustar", tarfile.USTAR_FORMAT), ("gnu", tarfile.GNU_FORMAT),
                  ("pax", tarfile.PAX_FORMAT)):
    with tarfile.open(f"{out}/py-{name}.tar", "w", format=fmt,
                      encoding="utf-8", errors="surrogateescape") as tf:
        common(tf, fmt)
        if fmt == tarfile.PAX_FORMAT:
            pax_only(tf)

with tarfile.open(f"{out}/py-edge.tar", "w", format=tarfile.PAX_FORMAT) as tf:
    add(tf, info("./", tarfile.DIRTYPE, 0o750, uid=5, gid=6))
    # parents never named: made as erofs-utils makes them
    add(tf, info("implied/a/b/file"), b"deep\n")
    add(tf, info("./dot/./x/../y"), b"dot and dotdot\n")
    # duplicates: the later entry wins
    add(tf, info("dup"), b"first\n")
    add(tf, info("dup", mode=0o600), b"second, longer\n")
    add(tf, info("d2", tarfile.DIRTYPE, 0o700))
    add(tf, info("d2/child"), b"child\n")
    add(tf, info("d2", tarfile.DIRTYPE, 0o755, mtime=T0 + 5))
    add(tf, info("gone", tarfile.DIRTYPE, 0o755))
    add(tf, info("gone/child"), b"dropped with its directory\n")
    add(tf, info("gone", tarfile.SYMTYPE, 0o777, linkname="dup"))
    add(tf, info("wasfile"), b"file\n")
    add(tf, info("wasfile", tarfile.DIRTYPE, 0o755))
    add(tf, info("wasfile/inside"), b"inside\n")
    # a hard link keeps the inode its target had when it was made
    add(tf, info("orig"), b"original\n")
    add(tf, info("hard", tarfile.LNKTYPE, linkname="orig"))
    add(tf, info("orig"), b"replaced\n")
    add(tf, info("hard2", tarfile.LNKTYPE, linkname="hard"))

# global keywords apply to every entry after them; an entry's own win
glob = {"uid": "4242", "mtime": "1600000000.25",
        "SCHILY.xattr.user.everywhere": "g"}
with tarfile.open(f"{out}/py-global.tar", "w", format=tarfile.PAX_FORMAT,
                  pax_headers=glob) as tf:
    add(tf, info("a"), b"global owner and time\n")
    add(tf, info("b", pax_headers={"uid": "7", "SCHILY.xattr.user.everywhere": "own"}),
        b"own owner and xattr\n")
    add(tf, info("c", pax_headers={
        "LIBARCHIVE.xattr.user.pct%41%25x%": "YmFzZTY0IHZhbHVl",
        "LIBARCHIVE.xattr.user.bin": "AAH/",
        "LIBARCHIVE.xattr.security.capability": "AQAAAgAgAAAAAAAAAAAAAAAAAAA="}),
        b"bsdtar xattrs\n")

# aufs whiteouts, as container layers carry them
with tarfile.open(f"{out}/py-aufs.tar", "w", format=tarfile.PAX_FORMAT) as tf:
    add(tf, info("d", tarfile.DIRTYPE, 0o755))
    add(tf, info("d/keep"), b"kept\n")
    add(tf, info("d/.wh.gone", mode=0o600, uid=7, gid=8, mtime=1600000000), b"")
    add(tf, info("o", tarfile.DIRTYPE, 0o750))
    add(tf, info("o/.wh..wh..opq"), b"")
    add(tf, info("o/x"), b"x\n")
    add(tf, info(".wh.top"), b"")
    add(tf, info("p/q/.wh.deep"), b"")
    add(tf, info("cd", tarfile.CHRTYPE, 0o600))
