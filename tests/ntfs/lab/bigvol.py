"""Sparse volumes of terabytes for tests/ntfs/hostile.bats, never read
whole (base.image maps them; lab.digest and lab.changed_sectors skip the
holes):
    bigvol.py setbit IMAGE CLUSTER   set CLUSTER's bit in $Bitmap
    bigvol.py digest IMAGE           a digest of the content, holes or zeros alike
    bigvol.py changed A B            how many 512-byte sectors differ"""
import sys

import base as B
import lab as L
import ntfsparse as P


def main(argv):
    if argv[0] == "setbit":
        img = B.image(argv[1], write=True)
        at, b = B.bitmap_bits(img, P.Geometry(img))(int(argv[2]))
        img[at] |= b
        img.flush()
    elif argv[0] == "digest":
        print(L.digest(argv[1]))
    elif argv[0] == "changed":
        print(len(L.changed_sectors(argv[1], argv[2])))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
