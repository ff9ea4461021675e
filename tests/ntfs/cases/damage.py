#!/usr/bin/env python3
"""damage.py CASE IMAGE: apply one scripted damage to an NTFS volume made by
mkfs.ntfs; damage.py --list names the cases.  Independent of libntfs: the
few structures needed are parsed here from the format documentation."""
import struct
import sys


def boot(img):
    bps, = struct.unpack_from("<H", img, 11)
    spc = img[13]
    if spc > 0x80:
        spc = 1 << (256 - spc)
    sectors, mft, mirr = struct.unpack_from("<qqq", img, 0x28)
    cpr = struct.unpack_from("<b", img, 0x40)[0]
    cs = bps * spc
    rs = cpr * cs if cpr > 0 else 1 << -cpr
    return bps, cs, rs, sectors, mft * cs, mirr * cs


def unfix(rec):
    """Remove the update sequence fixups of a record copy."""
    rec = bytearray(rec)
    ofs, cnt = struct.unpack_from("<HH", rec, 4)
    for i in range(1, cnt):
        rec[i * 512 - 2:i * 512] = rec[ofs + 2 * i:ofs + 2 * i + 2]
    return rec


def attr(rec, atype):
    """(offset, header bytes) of the first unnamed attribute ATYPE."""
    rec = unfix(rec)
    off, = struct.unpack_from("<H", rec, 0x14)
    while True:
        t, ln = struct.unpack_from("<II", rec, off)
        if t == 0xFFFFFFFF:
            raise KeyError(hex(atype))
        if t == atype and rec[off + 9] == 0:
            return off, rec
        off += ln


def first_lcn(rec, atype):
    off, rec = attr(rec, atype)
    mpo, = struct.unpack_from("<H", rec, off + 0x20)
    p = off + mpo
    h = rec[p]
    lb, ob = h & 15, h >> 4
    return int.from_bytes(rec[p + 1 + lb:p + 1 + lb + ob], "little", signed=True)


def record(img, base, rs, n):
    return img[base + n * rs:base + (n + 1) * rs]


def patch_value(img, base, rs, n, atype, vofs, data):
    """Write DATA into resident attribute ATYPE of record N, at VOFS bytes
    into its value, keeping fixups valid (the bytes must not be a stride
    end)."""
    rec = record(img, base, rs, n)
    off, plain = attr(rec, atype)
    voff, = struct.unpack_from("<H", plain, off + 0x14)
    at = base + n * rs + off + voff + vofs
    assert (at - base - n * rs + len(data) - 1) % 512 < 510
    img[at:at + len(data)] = data


def records(img, g):
    """(number, fixed-up copy) of every FILE record in use."""
    bps, cs, rs, sectors, mft, mirr = g
    n = 0
    while True:
        rec = record(img, mft, rs, n)
        if rec[:4] != b"FILE":
            if n > 64:
                return
        elif struct.unpack_from("<H", rec, 0x16)[0] & 1:
            yield n, unfix(rec)
        n += 1


def attrs(rec):
    """(offset, type, name) of each attribute of a fixed-up record."""
    off, = struct.unpack_from("<H", rec, 0x14)
    while True:
        t, ln = struct.unpack_from("<II", rec, off)
        if t == 0xFFFFFFFF:
            return
        nlen, noff = rec[off + 9], struct.unpack_from("<H", rec, off + 10)[0]
        yield off, t, rec[off + noff:off + noff + 2 * nlen].decode("utf-16-le")
        off += ln


def find_file(img, g, name):
    """Record number of the file called NAME (a $FILE_NAME)."""
    for n, rec in records(img, g):
        for off, t, _ in attrs(rec):
            if t == 0x30:
                voff, = struct.unpack_from("<H", rec, off + 0x14)
                ln = rec[off + voff + 0x40]
                fn = rec[off + voff + 0x42:off + voff + 0x42 + 2 * ln]
                if fn.decode("utf-16-le") == name:
                    return n
    raise KeyError(name)


def set_record_bytes(img, g, n, at, data):
    """Change bytes AT.. of record N (fixed-up view), keeping its fixups."""
    bps, cs, rs, sectors, mft, mirr = g
    base = mft + n * rs
    rec = unfix(record(img, mft, rs, n))
    rec[at:at + len(data)] = data
    ofs, cnt = struct.unpack_from("<HH", rec, 4)
    usn = rec[ofs:ofs + 2]
    for i in range(1, cnt):
        rec[ofs + 2 * i:ofs + 2 * i + 2] = rec[i * 512 - 2:i * 512]
        rec[i * 512 - 2:i * 512] = usn
    img[base:base + rs] = rec


CASES = {}
# cases whose volume is first populated through ntfs-3g (make-cases):
# /small/{aa,bb,cc}, /big/f000..f299 (a multi-block index), /data (3 clusters)
NEEDS_FILES = set()


def case(f):
    CASES[f.__name__] = f
    return f


def with_files(f):
    NEEDS_FILES.add(f.__name__)
    return f


@case
def boot_primary(img, g):
    img[3:11] = b"XXXXXXXX"            # no NTFS signature


@case
def boot_backup(img, g):
    bps, cs, rs, sectors, mft, mirr = g
    img[sectors * bps + 510] = 0       # backup loses its 0xAA55 marker


@case
def cluster_bitmap(img, g):
    bps, cs, rs, sectors, mft, mirr = g
    lcn = first_lcn(record(img, mft, rs, 6), 0x80)
    at = lcn * cs
    img[at] &= 0xFE                    # cluster 0 ($Boot) marked free
    last = (sectors // (cs // bps)) - 1
    img[at + last // 8] |= 1 << (last % 8)  # last cluster marked used


@case
def mft_bitmap(img, g):
    bps, cs, rs, sectors, mft, mirr = g
    rec0 = record(img, mft, rs, 0)
    off, plain = attr(rec0, 0xB0)
    if plain[off + 8]:                 # non-resident
        lcn = first_lcn(rec0, 0xB0)
        img[lcn * cs] &= ~(1 << 5) & 0xFF
    else:
        byte = record(img, mft, rs, 0)
        voff, = struct.unpack_from("<H", plain, off + 0x14)
        at = mft + off + voff
        img[at] &= ~(1 << 5) & 0xFF    # root directory marked free


@case
def mirror_differs(img, g):
    bps, cs, rs, sectors, mft, mirr = g
    img[mirr + 2 * rs + 8] ^= 0xFF     # $LogFile's mirror copy: LSN changed


@case
def mft_record_torn(img, g):
    bps, cs, rs, sectors, mft, mirr = g
    img[mft + 1 * rs + 510] ^= 0x55    # $MFTMirr's record: torn write


@case
def mft_record0_bad(img, g):
    bps, cs, rs, sectors, mft, mirr = g
    img[mft:mft + 4] = b"BAAD"         # $MFT's own record marked bad


@case
def volume_dirty(img, g):
    bps, cs, rs, sectors, mft, mirr = g
    for base in (mft, mirr):           # $Volume is mirrored: both copies
        patch_value(img, base, rs, 3, 0x70, 10, b"\x01")


@case
def logfile_dirty(img, g):
    """A crash with the journal in use: dirty flag set, restart area in
    $LogFile (its content is not parsed by fsck.ntfs)."""
    bps, cs, rs, sectors, mft, mirr = g
    volume_dirty(img, g)
    lcn = first_lcn(record(img, mft, rs, 2), 0x80)
    img[lcn * cs:lcn * cs + 8] = b"RSTR\x1e\x00\x09\x00"


@case
@with_files
def index_entry_stale(img, g):
    n = find_file(img, g, "bb")
    set_record_bytes(img, g, n, 0x16, b"\x00\x00")  # "bb" deleted, entry kept


@case
@with_files
def orphans(img, g):
    n = find_file(img, g, "small")
    set_record_bytes(img, g, n, 0x16, b"\x00\x00")  # /small lost: aa bb cc orphaned


@case
@with_files
def index_order(img, g):
    n = find_file(img, g, "small")
    rec = unfix(record(img, g[4], g[2], n))
    for off, t, name in attrs(rec):
        if t == 0x90 and name == "$I30":
            voff, = struct.unpack_from("<H", rec, off + 0x14)
            ents = off + voff + 0x10 + struct.unpack_from("<I", rec, off + voff + 0x10)[0]
            ln, = struct.unpack_from("<H", rec, ents + 8)
            a, b = bytes(rec[ents:ents + ln]), bytes(rec[ents + ln:ents + 2 * ln])
            set_record_bytes(img, g, n, ents, b + a)  # "bb" before "aa"
            return
    raise KeyError("small's index root")


@case
@with_files
def index_block_torn(img, g):
    bps, cs, rs, sectors, mft, mirr = g
    n = find_file(img, g, "big")
    rec = unfix(record(img, mft, rs, n))
    for off, t, name in attrs(rec):
        if t == 0xA0 and name == "$I30":
            mpo, = struct.unpack_from("<H", rec, off + 0x20)
            p = off + mpo
            lb, ob = rec[p] & 15, rec[p] >> 4
            lcn = int.from_bytes(rec[p + 1 + lb:p + 1 + lb + ob], "little")
            img[lcn * cs + 1022] ^= 0x5A  # first INDX block: torn sector
            return
    raise KeyError("big's index allocation")


@case
@with_files
def index_bitmap(img, g):
    n = find_file(img, g, "big")
    rec = unfix(record(img, g[4], g[2], n))
    for off, t, name in attrs(rec):
        if t == 0xB0 and name == "$I30":
            voff, = struct.unpack_from("<H", rec, off + 0x14)
            set_record_bytes(img, g, n, off + voff, bytes([rec[off + voff] ^ 0x02]))
            return                     # block 1 marked free, still in the tree
    raise KeyError("big's index bitmap")


@case
@with_files
def attr_extent(img, g):
    n = find_file(img, g, "data")
    rec = unfix(record(img, g[4], g[2], n))
    off, _ = attr(record(img, g[4], g[2], n), 0x80)
    hv, = struct.unpack_from("<q", rec, off + 0x18)
    set_record_bytes(img, g, n, off + 0x18, struct.pack("<q", hv + 5))


@case
@with_files
def record_flags(img, g):
    n = find_file(img, g, "cc")
    set_record_bytes(img, g, n, 0x16, b"\x83\x00")  # unknown bit + directory


if __name__ == "__main__":
    if sys.argv[1] == "--list":
        print("\n".join(CASES))
        sys.exit(0)
    if sys.argv[1] == "--needs-files":
        sys.exit(0 if sys.argv[2] in NEEDS_FILES else 1)
    with open(sys.argv[2], "r+b") as f:
        data = bytearray(f.read())
        CASES[sys.argv[1]](data, boot(data))
        f.seek(0)
        f.write(data)
