#!/usr/bin/env python3
"""sparse_map.py [--segments] [--all] FILE...

What a sparse file holds, independently of how it is stored, one line each:
  file NAME SIZE
  seg START END      (with --segments: the data segments SEEK_DATA and
                      SEEK_HOLE report)
  piece OFFSET SHA256  every 64 KiB piece (on a 64 KiB grid) holding a
                      non-zero byte, with the SHA-256 of its bytes
Without --all only pieces touching a data segment are read (holes read as
zeros by definition); with --all the whole file is read, which proves that
the holes read back as zeros.
"""
import hashlib
import os
import sys

PIECE = 65536
ZERO = bytes(PIECE)


def segments(fd, size):
    segs, pos = [], 0
    while pos < size:
        try:
            start = os.lseek(fd, pos, os.SEEK_DATA)
        except OSError:
            break
        end = os.lseek(fd, start, os.SEEK_HOLE)
        segs.append((start, end))
        pos = end
    return segs


def pieces(fd, size, offsets):
    for off in offsets:
        buf = os.pread(fd, min(PIECE, size - off), off)
        if len(buf) != min(PIECE, size - off):
            sys.exit("short read at %d" % off)
        if buf != ZERO[:len(buf)]:
            print("piece %d %s" % (off, hashlib.sha256(buf).hexdigest()))


def main():
    args = sys.argv[1:]
    show_segs = "--segments" in args
    read_all = "--all" in args
    for name in [a for a in args if not a.startswith("--")]:
        fd = os.open(name, os.O_RDONLY)
        size = os.fstat(fd).st_size
        segs = segments(fd, size)
        print("file %s %d" % (os.path.basename(name), size))
        if show_segs:
            for s, e in segs:
                print("seg %d %d" % (s, e))
        if read_all:
            offs = range(0, size, PIECE)
        else:
            offs = sorted({o for s, e in segs
                           for o in range(s // PIECE * PIECE, e, PIECE)})
        pieces(fd, size, offs)
        os.close(fd)


main()
