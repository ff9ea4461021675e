"""Truncated volumes: the image cut short, as an interrupted dd or a
partition shrunk under the file system leaves it.  A case `u-BASE-WHERE`
keeps the first bytes of the base up to a cut; every byte past it is
gone (the device is shorter than the boot sector says):

  end1      the last 1% cut (at a 512-byte sector)
  end10     the last 10%
  half      the second half
  mfttail   inside the last MFT record in use (half of it kept): the
            records after it and everything past them missing
  bootbak   inside the backup boot sector only (its last 256 bytes)
  bootsec   the backup boot sector exactly (its 512 bytes)

The judge (lab.py) requires: the truncation reported by -n and after
-a (exit 4 or 8), the image's size unchanged by -a (nothing written past
the end), the boot sector's volume size unchanged (the volume is not
"repaired" into a smaller one), a second -a changing nothing; the names
are counted on a copy of the result grown back to the base's size with
zeros (the disk made whole again), where every file none of whose
records and clusters was cut must be found intact."""
import os
import struct

import ntfsparse as P

WHERE = ("end1", "end10", "half", "mfttail", "bootbak", "bootsec")


def case_ids(base):
    return ["u-%s-%s" % (base, w) for w in WHERE]


def cut_at(img, where):
    """The length the image is cut to."""
    size = len(img)
    if where == "end1":
        return (size - size // 100) // 512 * 512
    if where == "end10":
        return (size - size // 10) // 512 * 512
    if where == "half":
        return size // 2 // 512 * 512
    if where == "bootbak":
        return size - 256
    if where == "bootsec":
        return size - 512
    if where == "mfttail":
        g = P.Geometry(img)
        last = max(at for _, at, _ in P.records(img, g))
        return last + g.rs // 2
    raise KeyError(where)


def apply(img, where):
    """The image cut short (a new bytearray)."""
    return bytearray(img[:cut_at(img, where)])


def volume_bytes(path):
    """The volume size the boot sector at PATH states (sectors x sector
    size), or None."""
    with open(path, "rb") as f:
        b = f.read(512)
    if len(b) < 0x30:
        return None
    bps, = struct.unpack_from("<H", b, 11)
    sectors, = struct.unpack_from("<q", b, 0x28)
    return bps * sectors


if __name__ == "__main__":
    # truncate.py cut IMG WHERE: cut IMG in place; prints its new size
    import sys
    if len(sys.argv) != 4 or sys.argv[1] != "cut":
        sys.exit("usage: truncate.py cut IMG WHERE (%s)" % " ".join(WHERE))
    with open(sys.argv[2], "rb") as f:
        n = cut_at(bytearray(f.read()), sys.argv[3])
    os.truncate(sys.argv[2], n)
    print(n)
