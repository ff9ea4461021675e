#!/usr/bin/env python3
"""free_comb.py IMG mark|unmark STATE: comb a volume's free space so the
next file written to it is fragmented one cluster per run (not sparse).

mark: every other free cluster of $Bitmap is marked in use and the list
of them written to STATE; unmark: those bits are cleared again (after a
driver wrote the file into the clusters between them), leaving a volume
whose $Bitmap matches its files again.
"""
import json
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lab"))
import ntfsparse as P  # noqa: E402


def bitmap_runs(img, g):
    rec = P.unfix(img[g.rec_off(6):g.rec_off(6) + g.rs])
    for off, t, name, nr in P.attrs(rec):
        if t == 0x80 and name == "" and nr:
            return P.runlist(rec, off)
    sys.exit("free_comb: $Bitmap has no non-resident $DATA")


def bit_byte(g, runs, cluster):
    """Image offset of the $Bitmap byte holding CLUSTER's bit."""
    byte = cluster // 8
    for lcn, ln in runs:
        if byte < ln * g.cs:
            return lcn * g.cs + byte
        byte -= ln * g.cs
    sys.exit("free_comb: cluster past $Bitmap")


def main():
    path, what, state = sys.argv[1:4]
    img = bytearray(open(path, "rb").read())
    g = P.Geometry(img)
    runs = bitmap_runs(img, g)
    if what == "mark":
        marked, free = [], 0
        for c in range(g.clusters):
            at = bit_byte(g, runs, c)
            if not img[at] >> (c % 8) & 1:
                if free % 2:
                    img[at] |= 1 << (c % 8)
                    marked.append(c)
                free += 1
        json.dump(marked, open(state, "w"))
    else:
        for c in json.load(open(state)):
            img[bit_byte(g, runs, c)] &= ~(1 << (c % 8)) & 0xFF
    open(path, "r+b").write(img)


if __name__ == "__main__":
    main()
