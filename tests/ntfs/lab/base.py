"""Base volumes of the damage lab: made by our mkfs.ntfs or by mkntfs
(ntfsprogs-plus, Debian sid tree), filled through ntfs-3g with a realistic
tree, then described independently of fsck.ntfs: a content manifest read
back through ntfs-3g, and a map of each file's MFT records and clusters
read by ntfsparse."""
import errno
import hashlib
import json
import mmap
import os
import random
import shutil
import struct
import subprocess
import time

import ntfsparse as P
import winshape as W

# name: (maker, cluster size, volume size in MiB)
BASES = {
    "ours4k": ("ours", 4096, 48),
    "ours1k": ("ours", 1024, 40),
    "sid4k": ("sid", 4096, 48),
    "sid64k": ("sid", 65536, 128),
    # the kernel power cuts' CI base: its image and write log are fixtures
    # (kfixture/, made by `kpowercut.py fixture`), its data low-entropy
    "kern4k": ("ours", 4096, 24),
    # the same tree plus what Windows volumes have and ntfs-3g writes only
    # through its special xattrs (populate_rich): compression, DOS names,
    # reparse points, object ids, many security descriptors, EAs and
    # attribute lists
    "rich4k": ("ours", 4096, 64),
    "rich1k": ("ours", 1024, 64),
    # the same tree with 110 more characters in big/'s names (its index a
    # B+tree of depth >= 3: root, INDX nodes, INDX leaves) grown while
    # every other free cluster was held: $MFT in one-cluster runs (record
    # 0 gets an attribute list), the files' data fragmented (hold_every_other)
    "deep4k": ("ours", 4096, 48),
    # the rich tree, then used for a while through ntfs-3g (age(): create,
    # delete, rename, relink, rewrite in two mounts): MFT records reused
    # with sequence numbers > 1, freed records holding stale contents,
    # big/'s index shrunk and grown again; early.img is the volume after
    # the first mount's work (the lost kind's older blocks)
    "aged4k": ("ours", 4096, 64),
    # 4Kn: the rich tree (s4k) and the aged one (s4kaged, with early.img)
    # on a volume of 4096-byte sectors and 4096-byte MFT records (Windows
    # on 4Kn drives, NVMe and cloud disks): fixups still every 512 bytes,
    # 8 update-sequence entries
    "s4k": ("ours", 4096, 64),
    "s4kaged": ("ours", 4096, 64),
    # the rich tree given what Windows' format and a Windows 10/11
    # installation put on a volume (winshape.py): $Extend/$RmMetadata,
    # $Deleted, $UsnJrnl, $TXF_DATA streams, System Volume Information,
    # $Recycle.Bin, Program Files with DOS names
    "win4k": ("ours", 4096, 64),
}
# bases made with a sector size other than 512
SECTOR = {"s4k": 4096, "s4kaged": 4096}
# the geometry matrix (bench/ntfs-lab geometry): the plain tree on every
# cluster size Windows formats (512 B to 2 MiB; above 64 KiB the boot
# sector's sectors-per-cluster byte is a negative power of two), 512-byte
# and 4096-byte sectors (4Kn, clusters of 4 KiB and more), made by both
# formatters: g + o (ours) or s (sid) + cluster size + 4kn.  1 KiB MFT
# records and 4 KiB INDX blocks are then smaller than the cluster from
# 8 KiB up (their VCNs count 512-byte units), larger below 4 KiB
GEO_CLUSTERS = (512, 1024, 2048, 8192, 16384, 32768, 65536, 131072, 262144, 2097152)


def _geo_label(cs):
    return "%dm" % (cs >> 20) if cs >= 1 << 20 else "%dk" % (cs >> 10) if cs >= 1024 else str(cs)


GEOMETRY = []
for _maker in ("ours", "sid"):
    for _cs in GEO_CLUSTERS:
        for _ss in (512, 4096):
            if _cs < _ss:
                continue
            _n = "g%s%s%s" % (_maker[0], _geo_label(_cs), "4kn" if _ss == 4096 else "")
            # room for the tree: every non-resident stream takes a cluster
            # (mkntfs wants 512 MiB for 2 MiB clusters)
            BASES[_n] = (_maker, _cs, 512 if _cs >= 1 << 20 else 256 if _cs >= 131072
                         else 128 if _cs >= 32768 else 48)
            if _ss != 512:
                SECTOR[_n] = _ss
            GEOMETRY.append(_n)
# geometry at the edges (session 20): 4 KiB clusters and 4 KiB records
# (4Kn) on a 2 MiB volume holding a scaled-down tree (TINY: the same
# paths, a few clusters each), and a 3 TiB sparse volume (4 KiB clusters:
# sector numbers above 2^32, byte offsets far above 2^32; its image is
# read through mmap, BIG)
TINY = ("gotiny4kn", "gstiny4kn")
for _n in TINY:
    BASES[_n] = ("ours" if _n[1] == "o" else "sid", 4096, 2)
    SECTOR[_n] = 4096
    GEOMETRY.append(_n)
BASES["go3t"] = ("ours", 4096, 3 << 20)
GEOMETRY.append("go3t")
# an image this large is mapped, never read whole (image())
BIG = 1 << 32


def image(path, write=False):
    """The bytes of the image at PATH: a bytearray, or for a BIG one an
    mmap (shared when WRITE: changes go to the file)."""
    with open(path, "r+b" if write else "rb") as f:
        if os.fstat(f.fileno()).st_size < BIG:
            return bytearray(f.read())
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_WRITE if write else mmap.ACCESS_READ)
RICH = ("rich4k", "rich1k", "aged4k", "s4k", "s4kaged", "win4k")
AGED = ("aged4k", "s4kaged")
DEEP_NAME = "entry-%04d-" + "deep-" * 22 + "name.txt"
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


def populate(m, seed, lowent=False, bigname="entry-%04d-with-a-fairly-long-name.txt", tiny=False):
    """The tree written through ntfs-3g (deterministic from SEED); LOWENT:
    file data is a seeded 32-byte chunk repeated (compresses well);
    BIGNAME: the names of big/'s entries (% their number); TINY: the
    same paths with small files (a 2 MiB volume: big/ of 60 entries, its
    index still in INDX blocks)."""
    rnd = random.Random(seed)
    k = 16 if tiny else 1       # sizes divided by K

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
        put(os.path.join(d, "blob.bin"), data((5000 + 700 * len(d)) // k))
    os.makedirs(os.path.join(m, "empty dir"))
    put("Ünïcödé ファイル.txt", "grüße\n".encode())
    put("empty", b"")
    # a big directory: more entries than an index root holds, several levels
    os.makedirs(os.path.join(m, "big"))
    for i in range(60 if tiny else 1200):
        name = bigname % i
        put(os.path.join("big", name),
            data(6000 // k) if i % 97 == 0 else b"%d\n" % i)
    # hard links (one name in another directory too)
    os.makedirs(os.path.join(m, "links"))
    put("links/target", data(9000 if not tiny else 5000))
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
            os.setxattr(p, "user.large", data(3000 // k))
    os.setxattr(os.path.join(m, "docs/a"), "user.dirattr", b"on a directory")
    # fragmented files: appends to several files interleaved
    os.makedirs(os.path.join(m, "frag"))
    fs = [open(os.path.join(m, "frag", "f%d" % i), "wb") for i in range(4)]
    for _ in range(3 if tiny else 40):
        for f in fs:
            f.write(data(8192 // (2 if tiny else 1)))
            f.flush()
    for f in fs:
        f.close()
    # sparse files
    with open(os.path.join(m, "sparse1"), "wb") as f:
        f.seek((8 << 20) // k)
        f.write(data(4096))
    with open(os.path.join(m, "sparse2"), "wb") as f:
        f.write(data(100000 // k))
        f.seek((3 << 20) // k)
        f.write(data(70000 // k))
        f.truncate((6 << 20) // k)
    # a few MiB
    put("bigfile", data((3 << 20) // k))


def ea_list(pairs):
    """A raw $EA value (system.ntfs_ea): each entry next-offset (its own
    length, 4-aligned, the last one's too), flags, name length, value
    length, name, NUL, value."""
    out = b""
    for name, val, flags in pairs:
        body = struct.pack("<BBH", flags, len(name), len(val)) + name + b"\0" + val
        n = 4 + len(body)
        n += -n % 4
        out += (struct.pack("<I", n) + body).ljust(n, b"\0")
    return out


def symlink_reparse(target, relative=True):
    """An IO_REPARSE_TAG_SYMLINK buffer (substitute and print name the same)."""
    t = target.encode("utf-16-le")
    body = struct.pack("<HHHHI", 0, len(t), len(t), len(t), 1 if relative else 0) + t + t
    return struct.pack("<IHH", 0xA000000C, len(body), 0) + body


def junction_reparse(target):
    """An IO_REPARSE_TAG_MOUNT_POINT buffer (a junction to TARGET, C:\\..)."""
    sub = ("\\??\\" + target).encode("utf-16-le") + b"\0\0"
    pr = target.encode("utf-16-le") + b"\0\0"
    body = struct.pack("<HHHH", 0, len(sub) - 2, len(sub), len(pr) - 2) + sub + pr
    return struct.pack("<IHH", 0xA0000003, len(body), 0) + body


def sid(*subs):
    """A binary SID S-1-5-SUBS."""
    return struct.pack("<BB6s", 1, len(subs), (5).to_bytes(6, "big")) + \
        b"".join(struct.pack("<I", x) for x in subs)


def security_descriptor(owner_rid, mask):
    """A self-relative security descriptor: owner S-1-5-21-..-RID, group
    S-1-5-32-545, a DACL of one allow ACE (MASK) for the owner and one for
    Everyone (read)."""
    own, grp, world = sid(21, 1004336348, 1177238915, owner_rid), sid(32, 545), \
        struct.pack("<BB6sI", 1, 1, (1).to_bytes(6, "big"), 0)
    aces = b""
    for m, s in ((mask, own), (0x120089, world)):
        aces += struct.pack("<BBHI", 0, 0, 8 + len(s), m) + s
    acl = struct.pack("<BBHHH", 2, 0, 8 + len(aces), 2, 0) + aces
    off = 20
    return struct.pack("<BBHIIII", 1, 0, 0x8004, off, off + len(own), 0,
                       off + len(own) + len(grp)) + own + grp + acl


def populate_rich(m, seed):
    """What a Windows volume has beyond populate()'s tree, written through
    ntfs-3g's special xattrs (the volume mounted with `compression`):
    a compressed directory tree, DOS 8.3 names, reparse points (symlinks,
    a junction, a foreign tag) indexed in $Extend/$Reparse, object ids
    ($Extend/$ObjId), some 300 distinct security descriptors ($Secure's
    $SDS, $SII and $SDH, several index blocks), $EA with $EA_INFORMATION,
    and files whose attributes need an $ATTRIBUTE_LIST (many hard links,
    many named streams, a file of 800 runs)."""
    rnd = random.Random(seed + 1)

    def put(path, b):
        with open(os.path.join(m, path), "wb") as f:
            f.write(b)

    def attrib(path, add):
        p = os.path.join(m, path)
        a, = struct.unpack(">I", os.getxattr(p, "system.ntfs_attrib_be"))
        os.setxattr(p, "system.ntfs_attrib_be", struct.pack(">I", a | add))

    # compression: the flag on a directory, files written in it compressed
    # (LZNT1, 16-cluster units): text (compresses), random (stored), zeros
    # (sparse units), a mix; a compressed subdirectory
    os.makedirs(os.path.join(m, "packed/sub"))
    attrib("packed", 0x800)
    text = b"".join(b"compressible line %d of a packed file\n" % i for i in range(6000))
    put("packed/text.txt", text)
    put("packed/random.bin", rnd.randbytes(150000))
    put("packed/small.txt", b"short compressed file\n")
    with open(os.path.join(m, "packed/mixed"), "wb") as f:
        f.write(text[:70000] + bytes(200000) + rnd.randbytes(40000) + text[:90000])
    attrib("packed/sub", 0x800)
    for i in range(12):
        put("packed/sub/c%02d" % i, text[i * 1000:i * 1000 + 9000 + 3000 * i])
    # DOS 8.3 names: a separate DOS $FILE_NAME next to the Win32 one
    os.makedirs(os.path.join(m, "dos"))
    for i in range(40):
        long = "Long File Name Number %02d.document" % i
        put("dos/" + long, b"dos %d\n" % i * (1 + 300 * (i % 5)))
        os.setxattr(os.path.join(m, "dos", long), "system.ntfs_dos_name", b"LONGFI~%d.DOC" % (i + 1))
    os.makedirs(os.path.join(m, "dos/Program Files Directory"))
    os.setxattr(os.path.join(m, "dos/Program Files Directory"), "system.ntfs_dos_name", b"PROGRA~1")
    # reparse points: symlinks (relative and absolute), a junction, a tag
    # ntfs-3g does not know (all indexed in $Extend/$Reparse)
    os.makedirs(os.path.join(m, "reparse"))
    for i in range(6):
        put("reparse/ws%d" % i, b"")
        os.setxattr(os.path.join(m, "reparse/ws%d" % i), "system.ntfs_reparse_data",
                    symlink_reparse("..\\dos\\Long File Name Number %02d.document" % i))
    put("reparse/abs", b"")
    os.setxattr(os.path.join(m, "reparse/abs"), "system.ntfs_reparse_data",
                symlink_reparse("C:\\Users\\Public\\file.txt", relative=False))
    os.makedirs(os.path.join(m, "reparse/junction"))
    os.setxattr(os.path.join(m, "reparse/junction"), "system.ntfs_reparse_data",
                junction_reparse("C:\\ProgramData\\Microsoft"))
    put("reparse/dedup", b"stub")
    os.setxattr(os.path.join(m, "reparse/dedup"), "system.ntfs_reparse_data",
                struct.pack("<IHH", 0x80000013, 24, 0) + rnd.randbytes(24))
    # object ids ($Extend/$ObjId): 16-byte and 64-byte (with birth ids)
    os.makedirs(os.path.join(m, "oid"))
    for i in range(30):
        put("oid/o%02d" % i, b"object %d\n" % i)
        os.setxattr(os.path.join(m, "oid/o%02d" % i), "system.ntfs_object_id",
                    rnd.randbytes(16 if i % 3 else 64))
    os.setxattr(os.path.join(m, "oid"), "system.ntfs_object_id", rnd.randbytes(16))
    # security descriptors: 150 files with one each, 150 more set and
    # replaced (ntfs-3g keeps every descriptor it was given in $SDS)
    os.makedirs(os.path.join(m, "acl"))
    for i in range(150):
        p = os.path.join(m, "acl/s%03d" % i)
        put("acl/s%03d" % i, b"acl %d\n" % i)
        os.setxattr(p, "system.ntfs_acl", security_descriptor(2000 + i, 0x1F01FF))
    for i in range(150):
        os.setxattr(os.path.join(m, "acl/s%03d" % (i % 10)), "system.ntfs_acl",
                    security_descriptor(5000 + i, 0x1200A9))
    # extended attributes ($EA, $EA_INFORMATION), one with a big value
    os.makedirs(os.path.join(m, "ea"))
    for i in range(8):
        put("ea/e%d" % i, b"has EAs %d\n" % i)
        os.setxattr(os.path.join(m, "ea/e%d" % i), "system.ntfs_ea", ea_list(
            [(b"FSFORGE.%d" % k, rnd.randbytes(8 + 40 * k), 0x80 if k == 1 else 0)
             for k in range(1 + i % 4)]))
    put("ea/bigea", b"a non-resident $EA\n")
    os.setxattr(os.path.join(m, "ea/bigea"), "system.ntfs_ea",
                ea_list([(b"BIG", rnd.randbytes(3000), 0), (b"SMALL", b"x", 0)]))
    # attribute lists: 120 hard links (their $FILE_NAMEs do not fit one
    # record), 40 named streams, a file of 800 runs
    os.makedirs(os.path.join(m, "alist"))
    put("alist/linked", rnd.randbytes(20000))
    for i in range(120):
        os.link(os.path.join(m, "alist/linked"),
                os.path.join(m, "alist", "hard-link-%03d-of-the-linked-file" % i))
    put("alist/streams", b"many named streams\n")
    for i in range(40):
        os.setxattr(os.path.join(m, "alist/streams"), "user.stream%02d" % i,
                    rnd.randbytes(60 + 10 * i))
    # a file of 800 runs: one cluster of data every other cluster (the
    # rest holes), its runlist in several extents in extension records
    cs = os.statvfs(m).f_bsize
    with open(os.path.join(m, "alist/shredded"), "wb") as f:
        for i in range(400):
            f.seek(2 * i * cs)
            f.write(rnd.randbytes(cs))
        f.truncate(800 * cs)


def age(m, seed, rnd_round):
    """Use the volume mounted at M for a while (ROUND 1 or 2 of it, one
    mount each): files created, deleted, renamed across directories,
    replaced under the same name, hard-linked and unlinked, rewritten
    shorter and longer, streams set and removed, symlinks, DOS names,
    compressed files, a sparse file; big/ loses half its entries in
    round 1 and gets new, longer names in round 2 (its index blocks
    emptied, merged and split).  Round 2's new files take the records
    round 1 freed (ntfs-3g starts each mount's search low in the $MFT
    bitmap), so their sequence numbers are > 1 and the index entries
    naming them must match.  The paths the targeted damage names are
    kept."""
    rnd = random.Random(seed * 10 + rnd_round)

    def put(path, b):
        with open(os.path.join(m, path), "wb") as f:
            f.write(b)

    def size():
        x = rnd.random()
        return rnd.randrange(0, 600) if x < 0.5 else rnd.randrange(2000, 30000) if x < 0.9 \
            else rnd.randrange(60000, 200000)

    def j(*a):
        return os.path.join(m, *a)

    if rnd_round == 1:
        for d in ("churn", "churn2", "archive"):
            os.makedirs(j(d))
        for i in range(320):
            put("churn/c%03d-%s.dat" % (i, "x" * rnd.randrange(1, 40)), rnd.randbytes(size()))
        # big/ loses every other entry of its first 1,000 (not those with
        # data): its leaves emptied, some blocks freed
        for i in range(0, 1000, 2):
            if i % 97:
                os.unlink(j("big", "entry-%04d-with-a-fairly-long-name.txt" % i))
        # a directory filled, renamed across, then half emptied
        os.makedirs(j("churn", "sub-old"))
        for i in range(60):
            put("churn/sub-old/s%02d" % i, rnd.randbytes(size()))
        os.rename(j("churn", "sub-old"), j("archive", "sub-new"))
        for i in range(0, 60, 2):
            os.unlink(j("archive", "sub-new", "s%02d" % i))
        # compressed files in the compressed directory, half deleted
        for i in range(12):
            put("packed/aged%02d" % i, b"aged compressible %d " % i * rnd.randrange(200, 3000))
        for i in range(0, 12, 2):
            os.unlink(j("packed", "aged%02d" % i))
    files = sorted(n for n in os.listdir(j("churn")) if os.path.isfile(j("churn", n)))
    rnd.shuffle(files)
    cut = [len(files) * p // 100 for p in (34, 53, 62, 72, 81, 90, 97)]
    # deleted (their records freed, contents left stale)
    for n in files[:cut[0]]:
        os.unlink(j("churn", n))
    # renamed across directories and in place
    for n in files[cut[0]:cut[1]]:
        os.rename(j("churn", n), j("churn2", "moved-%d-%s" % (rnd_round, n)))
    for n in files[cut[1]:cut[2]]:
        os.rename(j("churn", n), j("churn", "r%d-%s" % (rnd_round, n)))
    # replaced under the same name (a new record, the name reused)
    for n in files[cut[2]:cut[3]]:
        os.unlink(j("churn", n))
        put("churn/" + n, rnd.randbytes(size()))
    # hard links into other directories, some removed again
    for k, n in enumerate(files[cut[3]:cut[4]]):
        os.link(j("churn", n), j("links", "aged%d-%02d" % (rnd_round, k)))
        os.link(j("churn", n), j("big", "aged%d-link-%02d-%s" % (rnd_round, k, n)))
        if k % 3 == 0:
            os.unlink(j("churn", n))
    # rewritten shorter or longer (clusters freed and taken)
    for n in files[cut[4]:cut[5]]:
        with open(j("churn", n), "r+b") as f:
            f.truncate(rnd.randrange(0, 40000))
            f.seek(0, 2)
            f.write(rnd.randbytes(rnd.randrange(0, 50000)))
    # streams set and removed
    for k, n in enumerate(files[cut[5]:cut[6]]):
        os.setxattr(j("churn", n), "user.s%d" % rnd_round, rnd.randbytes(rnd.randrange(10, 3000)))
        if k % 2 and rnd_round == 2:
            try:
                os.removexattr(j("churn", n), "user.s1")
            except OSError:
                pass
    # symlinks and DOS names on new files
    for k in range(10):
        os.symlink("../churn/" + files[cut[6] + k % (len(files) - cut[6])],
                   j("churn2", "sym%d-%d" % (rnd_round, k)))
        long = "Aged Long Name %d %02d.document" % (rnd_round, k)
        put("churn2/" + long, b"dos %d\n" % k * rnd.randrange(1, 400))
        os.setxattr(j("churn2", long), "system.ntfs_dos_name", b"AGED%d~%d.DOC" % (rnd_round, k + 1))
    for k in range(0, 10, 3):
        os.unlink(j("churn2", "sym%d-%d" % (rnd_round, k)))
    # new files: in round 2 they take the records round 1 freed
    for i in range(150 if rnd_round == 1 else 260):
        put("churn/n%d-%03d" % (rnd_round, i), rnd.randbytes(size()))
    if rnd_round == 2:
        for i in range(400):
            put("big/aged-%04d-a-newer-and-much-longer-name-than-before.txt" % i,
                b"%d\n" % i)
        with open(j("churn2", "sparse-aged"), "wb") as f:
            f.write(rnd.randbytes(20000))
            f.seek(5 << 20)
            f.write(rnd.randbytes(9000))
        # the last work deletes: freed records keep their stale contents
        for i in range(0, 260, 3):
            os.unlink(j("churn", "n2-%03d" % i))
        for i in range(1, 60, 4):
            os.unlink(j("archive", "sub-new", "s%02d" % i))


def aged_shape(path):
    """(records in use with a sequence number > 1, free records still
    holding a FILE record): the aged base's promises, read by ntfsparse."""
    with open(path, "rb") as f:
        img = f.read()
    g = P.Geometry(img)
    reused = sum(1 for n, _, rec in P.records(img, g)
                 if n >= 24 and struct.unpack_from("<H", rec, 0x10)[0] > 1)
    stale = 0
    for n in range(24, g.nrecords):
        at, raw = P.read_record(img, g, n)
        if raw and raw[:4] == b"FILE" and not struct.unpack_from("<H", raw, 0x16)[0] & 1:
            stale += 1
    return reused, stale


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
                # a junction's target is shown under the mount point
                e["t"], e["link"] = "l", os.readlink(p).replace(os.path.abspath(m), "<mnt>")
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
            e.update(special(p))
            out[rel] = e
    return out


# ntfs-3g's views of the structures populate_rich() makes: manifest field
# -> xattr (a digest of the value; absent: the file has none)
SPECIAL = {"dos": "system.ntfs_dos_name", "rp": "system.ntfs_reparse_data",
           "oid": "system.ntfs_object_id", "ea": "system.ntfs_ea"}


def special(p):
    out = {}
    for k, x in SPECIAL.items():
        try:
            v = os.getxattr(p, x, follow_symlinks=False)
        except OSError as err:
            if err.errno in (errno.ENODATA, errno.EOPNOTSUPP, errno.EINVAL):
                continue
            v = b"EIO"
        out[k] = v.decode("ascii", "replace") if k == "dos" else hashlib.sha256(v).hexdigest()[:16]
    return out


def file_map(img_path, man):
    """ino -> {"recs": [[offset, size]...], "clusters": [[lcn, n]...]}
    for every inode of the manifest: the bytes of its base and extension
    records and the clusters of all its non-resident attributes."""
    img = image(img_path)
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
    deps = birth_id_deps(img, g, want)
    return {str(i): {"recs": recs.get(i, []), "clusters": clus.get(i, []), "deps": deps.get(i, [])}
            for i in want}, {"cs": g.cs, "rs": g.rs}


def birth_id_deps(img, g, want):
    """ino -> [[offset, size]]: bytes outside a file's own records and
    clusters that its manifest reads.  An object id's birth volume,
    object and domain ids live only in its $ObjId:$O entry (the file's
    $OBJECT_ID holds the 16-byte id; ntfs-3g's system.ntfs_object_id reads
    the other 48 bytes from the index), so such a file depends on the
    record or INDX block holding its entry."""
    try:
        n = P.named_record(img, g, "$ObjId")
    except KeyError:
        return {}
    out = {}
    for where, p, buf in P.index_all(img, g, n, "$O"):
        doff, dlen = struct.unpack_from("<HH", buf, p)
        data = bytes(buf[p + doff:p + doff + dlen])
        if len(data) < 56 or not any(data[8:56]):
            continue
        ino = struct.unpack_from("<Q", data, 0)[0] & 0xFFFFFFFFFFFF
        if ino in want:
            out.setdefault(ino, []).append([g.rec_off(n), g.rs] if where == "root" else [where, g.ibs])
    return out


def bitmap_bits(img, g):
    """(byte offset, bit) of each cluster's bit in $Bitmap (record 6)."""
    rec = P.unfix(img[g.rec_off(6):g.rec_off(6) + g.rs])
    runs = [P.runlist(rec, off) for off, t, name, nr in P.attrs(rec)
            if t == 0x80 and name == "" and nr][0]

    def bit(lcn):
        byte, pos = lcn // 8, 0
        for l, ln in runs:
            if byte < pos + ln * g.cs:
                return l * g.cs + byte - pos, 1 << (lcn % 8)
            pos += ln * g.cs
        raise ValueError("cluster %d past $Bitmap" % lcn)
    return bit


def hold_every_other(path, marked=None):
    """Mark every other free cluster of PATH in use in $Bitmap (as files
    since deleted held them), so ntfs-3g grows $MFT and the files into
    one-cluster holes; with MARKED (the list it returned): clear them
    again, free and owned by nobody."""
    with open(path, "rb") as f:
        img = bytearray(f.read())
    g = P.Geometry(img)
    bit = bitmap_bits(img, g)
    out = []
    for lcn in (marked if marked is not None else range(0, g.clusters, 2)):
        at, b = bit(lcn)
        if marked is not None:
            img[at] &= ~b
        elif not img[at] & b:
            img[at] |= b
            out.append(lcn)
    with open(path, "r+b") as f:
        f.write(img)
    return out


def deep_shape(path):
    """(depth of big/'s index, $MFT's extents beyond record 0's): the
    deep base's two promises, read by ntfsparse."""
    with open(path, "rb") as f:
        img = f.read()
    g = P.Geometry(img)
    rec0 = P.unfix(img[g.rec_off(0):g.rec_off(0) + g.rs])
    first = [P.runlist(rec0, off) for off, t, name, nr in P.attrs(rec0)
             if t == 0x80 and name == "" and nr][0]
    has_list = any(t == 0x20 for _, t, _, _ in P.attrs(rec0))
    big = next(n for n, _, rec in P.records(img, g)
               if any(nm == "big" and par == 5 for par, _, nm, _ in P.file_names(rec)))
    return P.index_depth(img, g, big), has_list and len(g.mft_runs) > len(first)


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
    # the geometry bases end three sectors short of a whole MiB: a partial
    # last cluster (from 2 KiB clusters), the backup boot sector in the
    # last sector, $Bitmap with bits past the last cluster
    size = "%d" % ((mib << 20) - 3 * SECTOR.get(name, 512)) if name in GEOMETRY else "%dM" % mib
    if maker == "ours":
        sh("truncate", "-s", size, img)
        ss = ["-s", str(SECTOR[name])] if name in SECTOR else []
        sh(mkfs, "-q", "-F", "-c", str(cs), *ss, img, stdout=subprocess.DEVNULL)
    else:
        t = os.path.join(sid_root, "tmp", "fsforge-lab-%d-%s" % (os.getpid(), name))
        os.makedirs(t, exist_ok=True)
        try:
            sh("truncate", "-s", size, t + "/v.img")
            ss = ["-s", str(SECTOR[name])] if name in SECTOR else []
            sh("chroot", sid_root, "mkntfs", "-q", "-F", "-Q", "-c", str(cs), *ss,
               "/tmp/%s/v.img" % os.path.basename(t), stdout=subprocess.DEVNULL,
               stderr=subprocess.DEVNULL)
            sh("cp", "--sparse=always", t + "/v.img", img)
        finally:
            shutil.rmtree(t, ignore_errors=True)
    m = os.path.join(d, "mnt")
    rich, deep, aged = name in RICH, name == "deep4k", name in AGED
    held = hold_every_other(img) if deep else None
    if not mount(img, m, opts="compression" if rich else ""):
        raise RuntimeError("ntfs-3g cannot mount the fresh %s volume" % name)
    try:
        if deep:
            populate(m, seed, bigname=DEEP_NAME)
        else:
            populate(m, seed, lowent=(name == "kern4k"), tiny=name in TINY)
        if rich:
            populate_rich(m, seed)
        if aged:
            age(m, seed, 1)
        if name == "win4k":
            made = W.populate_windows(m, random.Random(seed))
    finally:
        umount(m)
    if name == "win4k":
        W.finish(img, made, mount, umount, m)
    if aged:
        shutil.copy(img, os.path.join(d, "early.img"))
        if not mount(img, m, opts="compression"):
            raise RuntimeError("ntfs-3g cannot mount the aged volume again")
        try:
            age(m, seed, 2)
        finally:
            umount(m)
        reused, stale = aged_shape(img)
        print("lab: %s: %d records in use reused (sequence > 1), %d free records stale"
              % (name, reused, stale), flush=True)
        if reused < 100 or stale < 50:
            raise RuntimeError("%s: %d reused records, %d stale free ones" % (name, reused, stale))
    if deep:
        hold_every_other(img, held)
        depth, listed = deep_shape(img)
        if depth < 3 or not listed:
            raise RuntimeError("deep4k: big/'s index depth %d, $MFT extents in a list: %s"
                               % (depth, listed))
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
