#!/usr/bin/env python3
"""logfile_pages.py IMAGE STATE: write the two restart pages of $LogFile
(record 2) by hand, laid out from the public NTFS documentation (the
Linux ntfs driver's logfile.h), independently of libntfs:

  restart page header: "RSTR" 0, update sequence array offset 4 and
  count 6 (1 + page size / 512), chkdsk LSN 8, system page size 0x10,
  log page size 0x14, restart area offset 0x18, minor 0x1a, major 0x1c;
  restart area: current LSN 0, log clients 8, free list 0xa, in-use list
  0xc, flags 0xe (0x0002: volume is clean), sequence number bits 0x10,
  restart area length 0x14, client array offset 0x16, file size 0x18,
  last LSN data length 0x20, log record header length 0x24, log page data
  offset 0x26; one 0xa0-byte client record named "NTFS" (previous 0x10,
  next 0x12).  The sequence number bits are 67 minus the bits of the file
  size, as the Linux driver and ntfs-3g require.

STATE: clean  (log open, clean flag set: how Windows leaves a volume it
              unmounted), dirty (log open, flag clear: changes not
              checkpointed), torn (clean, but the second sector of both
              pages does not carry the update sequence number).
The rest of the journal is left as it is (0xff on a fresh volume).

logfile_pages.py IMAGE check: read the journal back, independently of
libntfs, and check it holds what chkdsk leaves after a repair: both
restart pages (offset 0 and 4096) "RSTR" with chkdsk LSN 0, the update
sequence array right after the header with 1 + 4096 / 512 entries, every
512-byte stride ending in the update sequence number (then restored),
system and log page sizes 4096, version 1.1, restart area at 0x30 with one
client, free list 0, nothing in use (a closed log), the clean flag, file
size = $LogFile's data size in whole 4096-byte pages, sequence number bits
67 less the bits of that size, lengths and offsets that fit the first
sector, client record "NTFS" (name length 8, no previous or next client),
the same current LSN in both pages; every byte after them 0xff.  Prints
"clean LSN <n>" or the first fact that does not hold (exit 1).

logfile_pages.py IMAGE unmark: damage for the repair tests: clear the
$Bitmap bit of cluster 0 (the boot sector's, always in use).
"""
import struct
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from ntfs_patch import AT_DATA, Volume, attrs, runs_of  # noqa: E402

PAGE = 4096


def page(flags, lsn, torn):
    pg = bytearray(PAGE)
    struct.pack_into("<4sHHqIIHhh", pg, 0, b"RSTR", 0x1e, 1 + PAGE // 512,
                     0, PAGE, PAGE, 0x30, 1, 1)
    struct.pack_into("<qHHHHIHHqIHH", pg, 0x30, lsn, 1, 0xffff, 0, flags,
                     67 - 0x1f0000.bit_length(), 0x30 + 0xa0, 0x30, 0x1f0000, 0x28, 0x30, 0x40)
    client = 0x30 + 0x30
    struct.pack_into("<qqHHH", pg, client, lsn, lsn, 0xffff, 0xffff, 1)
    struct.pack_into("<I8s", pg, client + 0x1c, 8, "NTFS".encode("utf-16-le"))
    usn = b"\x05\x00"
    pg[0x1e:0x20] = usn
    for i in range(1, PAGE // 512 + 1):
        pg[0x1e + 2 * i:0x20 + 2 * i] = pg[512 * i - 2:512 * i]
        pg[512 * i - 2:512 * i] = usn
    if torn:
        pg[1024 - 2:1024] = b"\x06\x00"
    return pg


def journal(vol):
    """The runs and data size of $LogFile's unnamed $DATA."""
    rec = vol.read(2)
    off = next(off for off, t, name in attrs(rec) if t == AT_DATA and not name)
    return runs_of(rec, off), struct.unpack_from("<q", rec, off + 0x30)[0]


def check(vol):
    runs, size = journal(vol)
    data = b"".join(vol.pread(lcn * vol.cs, ln * vol.cs) for lcn, ln in runs)[:size]
    usable = size & ~(PAGE - 1)
    lsns = []
    for i in range(2):
        pg = bytearray(data[i * PAGE:(i + 1) * PAGE])
        magic, usa_ofs, usa_cnt, chkd, sps, lps, ra, minor, major = \
            struct.unpack_from("<4sHHqIIHhh", pg, 0)
        facts = [(magic == b"RSTR", "magic %r" % magic),
                 (chkd == 0, "chkdsk LSN %d" % chkd),
                 ((usa_ofs, usa_cnt) == (0x1e, 1 + PAGE // 512),
                  "update sequence array at %#x, %d entries" % (usa_ofs, usa_cnt)),
                 ((sps, lps) == (PAGE, PAGE), "page sizes %d/%d" % (sps, lps)),
                 ((major, minor) == (1, 1), "version %d.%d" % (major, minor)),
                 (ra == 0x30, "restart area offset %#x" % ra)]
        for good, what in facts:
            if not good:
                return "page %d: %s" % (i, what)
        usn = pg[usa_ofs:usa_ofs + 2]
        for k in range(1, usa_cnt):
            if pg[512 * k - 2:512 * k] != usn:
                return "page %d: stride %d does not end in the update sequence number" % (i, k)
            pg[512 * k - 2:512 * k] = pg[usa_ofs + 2 * k:usa_ofs + 2 * k + 2]
        lsn, clients, free, used, flags, bits, ra_len, ca, fsize, _, rhl, pdo = \
            struct.unpack_from("<qHHHHIHHqIHH", pg, ra)
        facts = [(clients == 1, "%d log clients" % clients),
                 ((free, used) == (0, 0xffff),
                  "free list %#x, in-use list %#x (not a closed log)" % (free, used)),
                 (flags & 2, "clean flag not set (flags %#x)" % flags),
                 (fsize == usable, "file size %d, $LogFile holds %d" % (fsize, usable)),
                 (bits == 67 - fsize.bit_length(), "sequence number bits %d" % bits),
                 (ca % 8 == 0 and ra + ca <= 510 and ca + 0xa0 <= ra_len
                  and ra + ra_len <= PAGE, "client array %#x, length %#x" % (ca, ra_len)),
                 (rhl % 8 == 0 and pdo % 8 == 0 and 0 < pdo < lps,
                  "record header length %#x, page data offset %#x" % (rhl, pdo))]
        for good, what in facts:
            if not good:
                return "page %d: %s" % (i, what)
        cr = ra + ca
        prev, nxt = struct.unpack_from("<HH", pg, cr + 0x10)
        nlen, = struct.unpack_from("<I", pg, cr + 0x1c)
        name = pg[cr + 0x20:cr + 0x20 + nlen].decode("utf-16-le", "replace")
        if (prev, nxt, nlen, name) != (0xffff, 0xffff, 8, "NTFS"):
            return "page %d: client record %#x %#x %d %r" % (i, prev, nxt, nlen, name)
        lsns.append(lsn)
    if lsns[0] != lsns[1]:
        return "current LSNs differ: %d, %d" % tuple(lsns)
    rest = data[2 * PAGE:]
    if rest.count(0xff) != len(rest):
        return "byte %d of the journal is not 0xff" % (2 * PAGE + next(
            k for k, b in enumerate(rest) if b != 0xff))
    print("clean LSN %d" % lsns[0])
    return None


def unmark(vol):
    rec = vol.read(6)
    runs = next(runs_of(rec, off) for off, t, name in attrs(rec)
                if t == AT_DATA and not name)
    at = vol.offset(runs, 0)
    vol.pwrite(at, bytes([vol.pread(at, 1)[0] & 0xfe]))


def main():
    img, state = sys.argv[1], sys.argv[2]
    if state == "check":
        why = check(Volume(img))
        if why:
            print(why)
            sys.exit(1)
        return
    vol = Volume(img)
    if state == "unmark":
        unmark(vol)
        vol.f.close()
        return
    rec = vol.read(2)
    runs = next(runs_of(rec, off) for off, t, name in attrs(rec)
                if t == AT_DATA and not name)
    flags = 0 if state == "dirty" else 0x0002
    for i in range(2):
        vol.pwrite(vol.offset(runs, i * PAGE),
                   page(flags, 0x4000 + i, state == "torn"))
    vol.f.close()


if __name__ == "__main__":
    main()
