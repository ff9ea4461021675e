#!/usr/bin/env python3
"""winshape: turn a lab base into the shape Windows' format and a Windows
10/11 installation leave on a volume (base win4k), independently of
libntfs: the tree goes in through ntfs-3g, what ntfs-3g will not write
is patched in with ntfs_patch (tests/ntfs/) from the format
documentation.

What it adds (facts from Microsoft's MS-FSCC file-system names, libyal's
and flatcap's NTFS notes):
  - $Extend children beyond $ObjId/$Quota/$Reparse: $RmMetadata (a
    directory, hidden and system) holding $Repair (named streams
    $Config, $Verify, $Corrupt), $TxfLog (a directory: $Tops with its $T
    stream, $TxfLog.blf, two $TxfLogContainer files with DOS names) and
    $Txf (a directory); $Deleted (Windows 10 1709+).  ntfs-3g will not
    create in $Extend, so they are made in a staging directory and
    moved (their $FILE_NAMEs name $Extend, $Extend's index gets their
    entries, the staging directory's loses them);
  - $LOGGED_UTILITY_STREAM (0x100) attributes named $TXF_DATA (56-byte
    resident value naming $RmMetadata) on files Windows' own setup
    wrote, and on the root directory;
  - System Volume Information (hidden, system, not content indexed,
    DOS name SYSTEM~1: IndexerVolumeGuid, WPSettings.dat, tracking.log),
    $Recycle.Bin with a user's SID directory and desktop.ini, Program
    Files / Program Files (x86) / ProgramData with their PROGRA~n DOS
    names, Users, Windows\\System32 files, pagefile.sys, swapfile.sys;
    files with FILE_ATTRIBUTE_ARCHIVE;
  - object ids on the root directory and on $Volume;
  - $Extend/$UsnJrnl with a sparse $J head and USN_RECORD_V2 records
    for files of the Windows tree (tests/ntfs/usnjrnl_lab.py);
  - $LogFile as Windows 8 and later leave it after a clean shutdown:
    both restart pages of log version 2.0 with the clean flag
    (tests/ntfs/logfile_pages.py's layout, the version and the file
    size set)."""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import ntfs_patch as NP  # noqa: E402
import usnjrnl_lab as UJ  # noqa: E402
import logfile_pages as LP  # noqa: E402

HIDDEN, SYSTEM, ARCHIVE, NOT_INDEXED = 0x2, 0x4, 0x20, 0x2000
AT_LOGGED_UTILITY_STREAM, AT_END = 0x100, 0xFFFFFFFF
EXTEND = 11
STAGE = "wstage"
CONTAINER = "$TxfLogContainer%020d"


def attrib(p, add):
    a, = struct.unpack(">I", os.getxattr(p, "system.ntfs_attrib_be"))
    os.setxattr(p, "system.ntfs_attrib_be", struct.pack(">I", a | add))


def put(p, b, add=ARCHIVE, dos=None):
    with open(p, "wb") as f:
        f.write(b)
    if dos:
        os.setxattr(p, "system.ntfs_dos_name", dos)
    attrib(p, add)


def mkdir(p, add=0, dos=None):
    os.makedirs(p)
    if dos:
        os.setxattr(p, "system.ntfs_dos_name", dos)
    if add:
        attrib(p, add)


def guid(rnd):
    b = rnd.randbytes(16)
    return "{%08x-%04x-%04x-%s-%s}" % (struct.unpack_from("<IHH", b) + (b[8:10].hex(), b[10:].hex()))


def populate_windows(m, rnd):
    """The tree a Windows installation leaves, written under M (ntfs-3g,
    mounted), and the staging directory of $Extend's new children.
    Returns {"moved": {name: MFT record} of what moves to $Extend,
    "stage": the staging directory's record, "txf": the records that
    get a $TXF_DATA}."""
    j = lambda *a: os.path.join(m, *a)  # noqa: E731
    svi = j("System Volume Information")
    mkdir(svi, HIDDEN | SYSTEM | NOT_INDEXED, b"SYSTEM~1")
    put(os.path.join(svi, "IndexerVolumeGuid"), guid(rnd).upper().encode("utf-16-le"),
        HIDDEN | SYSTEM | ARCHIVE, b"INDEXE~1")
    put(os.path.join(svi, "WPSettings.dat"), struct.pack("<III", 12, 0, 1),
        HIDDEN | SYSTEM | ARCHIVE, b"WPSETT~1.DAT")
    put(os.path.join(svi, "tracking.log"), rnd.randbytes(20480), HIDDEN | SYSTEM | ARCHIVE)
    bin_ = j("$Recycle.Bin")
    mkdir(bin_, HIDDEN | SYSTEM, b"$RECYC~1.BIN")
    user = os.path.join(bin_, "S-1-5-21-1004336348-1177238915-682003330-1001")
    mkdir(user, HIDDEN | SYSTEM, b"S-1-5-~1")
    put(os.path.join(user, "desktop.ini"),
        b"\xff\xfe" + "[.ShellClassInfo]\r\nCLSID={645FF040-5081-101B-9F08-00AA002F954E}\r\n"
        .encode("utf-16-le"), HIDDEN | SYSTEM | ARCHIVE)
    put(os.path.join(user, "$R0Q4V7Z.txt"), rnd.randbytes(3000))
    for name, dos, add in (("Program Files", b"PROGRA~1", 0),
                           ("Program Files (x86)", b"PROGRA~2", 0),
                           ("ProgramData", b"PROGRA~3", HIDDEN | NOT_INDEXED)):
        mkdir(j(name), add, dos)
    mkdir(j("Program Files", "Common Files"), 0, b"COMMON~1")
    mkdir(j("Program Files", "Windows Defender"), 0, b"WINDOW~1")
    put(j("Program Files", "Windows Defender", "MpCmdRun.exe"), rnd.randbytes(40000))
    mkdir(j("Program Files (x86)", "Microsoft"), 0, b"MICROS~1")
    mkdir(j("ProgramData", "Microsoft", "Windows", "Start Menu"), 0, b"STARTM~1")
    mkdir(j("Users", "Public", "Desktop"), 0, None)
    put(j("Users", "Public", "Desktop", "desktop.ini"), b"\xff\xfe" + "[.ShellClassInfo]\r\n"
        .encode("utf-16-le"), HIDDEN | SYSTEM | ARCHIVE)
    mkdir(j("Users", "Default User Profile Data"), HIDDEN, b"DEFAUL~1")
    sysdir = j("Windows", "System32", "drivers", "etc")
    os.makedirs(sysdir)
    put(os.path.join(sysdir, "hosts"), b"# localhost name resolution\r\n")
    for i in range(20):
        put(j("Windows", "System32", "component%02d.dll" % i), rnd.randbytes(700 + 900 * i),
            ARCHIVE, b"COMPON~%d.DLL" % (i + 1) if i < 4 else None)
    for name in ("pagefile.sys", "swapfile.sys"):
        put(j(name), bytes(1 << 20), HIDDEN | SYSTEM | ARCHIVE)
    # $Extend's new children, staged
    st = j(STAGE)
    os.makedirs(st)
    rm = os.path.join(st, "$RmMetadata")
    mkdir(rm, HIDDEN | SYSTEM)
    rep = os.path.join(rm, "$Repair")
    put(rep, b"", HIDDEN | SYSTEM | ARCHIVE)
    os.setxattr(rep, "user.$Config", struct.pack("<II", 1, 0))
    os.setxattr(rep, "user.$Verify", bytes(16))
    os.setxattr(rep, "user.$Corrupt", bytes(0x1000))
    log = os.path.join(rm, "$TxfLog")
    mkdir(log, HIDDEN | SYSTEM)
    tops = os.path.join(log, "$Tops")
    put(tops, struct.pack("<IIQ", 0x2C, 1, 0), HIDDEN | SYSTEM | ARCHIVE)
    os.setxattr(tops, "user.$T", bytes(0x10000))
    put(os.path.join(log, "$TxfLog.blf"), b"\x15\x00\x00\x00" + bytes(0xfffc),
        HIDDEN | SYSTEM | ARCHIVE)
    for i in (1, 2):
        put(os.path.join(log, CONTAINER % i), bytes(0x40000), HIDDEN | SYSTEM | ARCHIVE,
            b"$TXFLO~%d" % i)
    mkdir(os.path.join(rm, "$Txf"), HIDDEN | SYSTEM)
    mkdir(os.path.join(st, "$Deleted"), HIDDEN | SYSTEM)
    # an object id on the root
    os.setxattr(m, "system.ntfs_object_id", rnd.randbytes(16))
    moved = {n: os.stat(os.path.join(st, n)).st_ino for n in ("$RmMetadata", "$Deleted")}
    txf = [os.stat(m).st_ino] + [os.stat(j("Windows", "System32", "component%02d.dll" % i)).st_ino
                                 for i in range(20)] + \
        [os.stat(j("Program Files", "Windows Defender", "MpCmdRun.exe")).st_ino,
         os.stat(os.path.join(sysdir, "hosts")).st_ino]
    return {"moved": moved, "stage": os.stat(st).st_ino, "txf": txf}


def insert_attr(vol, r, t, name, value):
    """Add a resident attribute (type T, NAME, VALUE) to record R, after
    the attributes of lower type; False when the record has no room."""
    rec = vol.read(r)
    nm = name.encode("utf-16-le")
    voff = (0x18 + len(nm) + 7) // 8 * 8
    ln = (voff + len(value) + 7) // 8 * 8
    used, alloc = struct.unpack_from("<II", rec, 0x18)
    if used + ln > alloc:
        return False
    at = next(off for off, ty, _ in list(NP.attrs(rec)) + [(used - 8, AT_END, "")] if ty > t)
    inst, = struct.unpack_from("<H", rec, 0x28)
    a = bytearray(ln)
    struct.pack_into("<IIBBHHHIHBB", a, 0, t, ln, 0, len(name), 0x18, 0, inst, len(value), voff, 0, 0)
    a[0x18:0x18 + len(nm)] = nm
    a[voff:voff + len(value)] = value
    tail = bytes(rec[at:used])
    rec[at:at + ln] = a
    rec[at + ln:at + ln + len(tail)] = tail
    struct.pack_into("<I", rec, 0x18, used + ln)
    struct.pack_into("<H", rec, 0x28, inst + 1)
    vol.write(r, rec)
    return True


def add_entry(vol, d, r, name):
    """ntfs_patch's addentry for R's $FILE_NAME NAME (a Win32 name and its
    DOS name each have an entry)."""
    rec = vol.read(r)
    v = next(v for v, _, n, _ in vol.file_names(rec) if n == name)
    key = bytearray(rec[v:v + 0x42 + 2 * rec[v + 0x40]])
    struct.pack_into("<Q", key, 0, d | vol.seq(d) << 48)
    ln = (16 + len(key) + 7) // 8 * 8
    ent = bytearray(ln)
    struct.pack_into("<QHHI", ent, 0, r | vol.seq(r) << 48, ln, len(key), 0)
    ent[16:16 + len(key)] = key
    kind, where, buf, ih, off = vol.find_leaf(d, name, "leaf")
    vol.resize_node(kind, buf, ih, off, ln)
    buf[off:off + ln] = ent
    vol.store(d, kind, where, buf)


def finish(img, made, mount, umount, mnt):
    """After populate_windows's mount: $Volume's object id and the change
    journal's file made through a second mount (named streams, a sparse
    $J head), the staged
    children moved into $Extend, the files Windows wrote given their
    $TXF_DATA, the staging directory removed through a third mount."""
    if not mount(img, mnt, opts="streams_interface=windows,show_sys_files"):
        raise RuntimeError("winshape: ntfs-3g cannot mount the volume")
    try:
        os.setxattr(os.path.join(mnt, "$Volume"), "system.ntfs_object_id",
                    bytes(range(0x40, 0x50)))
        j = os.path.join(mnt, "UsnJrnlX")
        open(j, "wb").close()
        with open(j + ":$Max", "wb") as f:
            f.write(bytes(32))
        with open(j + ":$J", "wb") as f:
            f.seek(UJ.HEAD)
            f.write(b"\xff" * 8192)
        usn = os.stat(j).st_ino
    finally:
        umount(mnt)
    vol = NP.Volume(img)
    UJ.make(vol, usn, made["txf"][1:7])
    for r in sorted(made["moved"].values()):
        names = [name for _, _, name, _ in vol.file_names(vol.read(r))]
        for name in names:
            vol.rmentry(made["stage"], name)
        vol.parent(r, EXTEND)
        for name in names:
            add_entry(vol, EXTEND, r, name)
    rm = made["moved"]["$RmMetadata"]
    for k, r in enumerate(made["txf"]):
        # RM root, USN index, TxF file id, LSNs (data, metadata,
        # directory), flags
        v = struct.pack("<QQQQQQQ", rm | vol.seq(rm) << 48, 0, 0x100 + k,
                        0x2000 + k * 0x48, 0x2000 + k * 0x48, 0, 0)
        if not insert_attr(vol, r, AT_LOGGED_UTILITY_STREAM, "$TXF_DATA", v):
            raise RuntimeError("winshape: no room for $TXF_DATA in record %d" % r)
    vol.f.close()
    if not mount(img, mnt):
        raise RuntimeError("winshape: ntfs-3g cannot mount the volume")
    try:
        os.rmdir(os.path.join(mnt, STAGE))
    finally:
        umount(mnt)
    clean_log_v2(img)


def clean_log_v2(img):
    """$LogFile's two restart pages as Windows 8+ leaves them after a
    clean shutdown: version 2.0, the clean flag, the journal's size."""
    vol = NP.Volume(img)
    runs, size = LP.journal(vol)
    for i in range(2):
        pg = NP.unfix(LP.page(0x0002, 0x4000 + i, False))
        struct.pack_into("<hh", pg, 0x1a, 0, 2)
        struct.pack_into("<I", pg, 0x30 + 0x10, 67 - size.bit_length())
        struct.pack_into("<q", pg, 0x30 + 0x18, size)
        vol.pwrite(vol.offset(runs, i * LP.PAGE), NP.refix(pg))
    vol.f.close()


def main():
    """winshape.py IMAGE [SEED]: give IMAGE (a fresh volume of our
    mkfs.ntfs or mkntfs, at least 16 MiB, not mounted) the Windows shape;
    tests/ntfs/winshape.bats runs it."""
    import random
    import subprocess
    import tempfile
    img = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1

    def mount(path, mnt, opts=""):
        os.makedirs(mnt, exist_ok=True)
        o = "noatime" + ("," + opts if opts else "")
        return subprocess.run(["ntfs-3g", "-o", o, path, mnt]).returncode == 0

    def umount(mnt):
        subprocess.run(["umount", mnt], check=True)

    with tempfile.TemporaryDirectory() as t:
        mnt = os.path.join(t, "mnt")
        if not mount(img, mnt):
            raise SystemExit("winshape: ntfs-3g cannot mount %s" % img)
        try:
            made = populate_windows(mnt, random.Random(seed))
        finally:
            umount(mnt)
        finish(img, made, mount, umount, mnt)


if __name__ == "__main__":
    main()
