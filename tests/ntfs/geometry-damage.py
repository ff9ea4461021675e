#!/usr/bin/env python3
"""geometry-damage.py CASE IMAGE: one damage to where an NTFS volume says
its $MFT and $MFTMirr are (tests/ntfs/geometry.bats).  The structures are
parsed here from the format documentation (through damage.py), not by
libntfs.
geometry-damage.py past-end IMAGE BYTES: the names of the files that have
data at or past byte BYTES."""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "cases"))
import damage  # noqa: E402


def bump_lcn(img, sector_off, field, delta):
    """Change the low byte of boot sector field FIELD (0x30 $MFT LCN, 0x38
    $MFTMirr LCN) of the sector at SECTOR_OFF."""
    at = sector_off + field
    img[at] = (img[at] + delta) & 0xFF


def move_run(img, recno, delta):
    """Record RECNO's $DATA: its first run's LCN moved DELTA clusters."""
    bps, cs, rs, sectors, mft, mirr = damage.boot(img)
    base = mft + recno * rs
    rec = damage.record(img, mft, rs, recno)
    off, plain = damage.attr(rec, 0x80)
    mpo, = struct.unpack_from("<H", plain, off + 0x20)
    p = off + mpo
    lb, ob = plain[p] & 15, plain[p] >> 4
    at = p + 1 + lb
    lcn = int.from_bytes(plain[at:at + ob], "little", signed=True)
    new = (lcn + delta).to_bytes(ob, "little", signed=True)
    assert all((at + i) % 512 < 510 for i in range(ob)), "stride end"
    img[base + at:base + at + ob] = new


def past_end(img, end):
    """Names of the files with a cluster at or past byte END."""
    g = damage.boot(img)
    cs = g[1]
    names = set()
    for n, rec in damage.records(img, g):
        name, over = None, False
        off, = struct.unpack_from("<H", rec, 0x14)
        while True:
            t, ln = struct.unpack_from("<II", rec, off)
            if t == 0xFFFFFFFF:
                break
            if t == 0x30 and not rec[off + 8]:
                v, = struct.unpack_from("<H", rec, off + 0x14)
                nl = rec[off + v + 0x40]
                name = rec[off + v + 0x42:off + v + 0x42 + 2 * nl].decode("utf-16-le")
            elif rec[off + 8]:
                mpo, = struct.unpack_from("<H", rec, off + 0x20)
                p, lcn = off + mpo, 0
                while rec[p]:
                    lb, ob = rec[p] & 15, rec[p] >> 4
                    ln_ = int.from_bytes(rec[p + 1:p + 1 + lb], "little")
                    if ob:
                        lcn += int.from_bytes(rec[p + 1 + lb:p + 1 + lb + ob],
                                              "little", signed=True)
                        over |= (lcn + ln_) * cs > end
                    p += 1 + lb + ob
            off += ln
        if over and name and n >= 16:
            names.add(name)
    return sorted(names)


def set_selfref(img, recno, value):
    """Record RECNO's self-reference (header offset 0x2c) set to VALUE."""
    bps, cs, rs, sectors, mft, mirr = damage.boot(img)
    struct.pack_into("<I", img, mft + recno * rs + 0x2c, value)


def main():
    if sys.argv[1] == "past-end":
        with open(sys.argv[2], "rb") as f:
            print("\n".join(past_end(f.read(), int(sys.argv[3]))))
        return
    case, path = sys.argv[1], sys.argv[2]
    with open(path, "r+b") as f:
        img = bytearray(f.read())
        bps, cs, rs, sectors, mft, mirr = damage.boot(img)
        backup = sectors * bps
        if case == "mft-lcn-primary":
            bump_lcn(img, 0, 0x30, 1)
        elif case == "mft-lcn-backup":
            bump_lcn(img, backup, 0x30, 1)
        elif case == "jump-primary":
            img[0] = (img[0] + 1) & 0xFF  # EB 52 90 -> EC 52 90
        elif case == "reserved-primary":
            img[0x0e] = 0xFF  # reserved sectors, which NTFS leaves zero
        elif case == "reserved-both":
            img[0x0e] = 0xFF  # reserved sectors, in both copies
            img[backup + 0x0e] = 0xFF
            img[backup + 0x21] = 0x01  # and the backup's large sector count
        elif case == "size-primary":
            img[0x2a] = (img[0x2a] + 1) & 0xFF  # +65536 sectors
        elif case == "mirr-lcn-primary":
            bump_lcn(img, 0, 0x38, 1)
        elif case == "mft-lcn-both":
            bump_lcn(img, 0, 0x30, 1)
            bump_lcn(img, backup, 0x30, 1)
        elif case == "mft-lcn-both-no-mirror":
            bump_lcn(img, 0, 0x30, 1)
            bump_lcn(img, backup, 0x30, 1)
            img[mirr:mirr + rs] = bytes(rs)
        elif case == "mirr-lcn-both":
            bump_lcn(img, 0, 0x38, 1)
            bump_lcn(img, backup, 0x38, 1)
        elif case == "selfref-0":
            set_selfref(img, 0, 4)
        elif case == "selfref-3":
            set_selfref(img, 3, 7)
        elif case == "mft-run-moved":
            move_run(img, 0, 3)
        elif case == "mirr-run-moved":
            move_run(img, 1, 3)
        elif case == "mft-head-misdirected":
            # a misdirected write: the cluster before $MFT (its bitmap)
            # written again over $MFT's first records 0-3
            n = max(cs, 4 * rs)
            img[mft:mft + n] = img[mft - cs:mft - cs + n]
            assert img[mft:mft + 4] != b"FILE"
        elif case == "mft-zeroed":
            # the whole of $MFT's first run zeroed ($MFTMirr intact):
            # the mirror alone must not rebuild a volume from nothing
            rec = damage.record(img, mft, rs, 0)
            off, plain = damage.attr(rec, 0x80)
            mpo, = struct.unpack_from("<H", plain, off + 0x20)
            p = off + mpo
            lb = plain[p] & 15
            n = int.from_bytes(plain[p + 1:p + 1 + lb], "little") * cs
            assert n >= 8 * rs and not (mft < mirr < mft + n)
            img[mft:mft + n] = bytes(n)
        elif case == "truncated":
            del img[len(img) - len(img) // 10:]
            f.truncate(len(img))
        else:
            sys.exit("unknown case " + case)
        f.seek(0)
        f.write(img)


if __name__ == "__main__":
    main()
