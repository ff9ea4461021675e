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


def main():
    img, state = sys.argv[1], sys.argv[2]
    vol = Volume(img)
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
