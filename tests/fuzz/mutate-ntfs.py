#!/usr/bin/env python3
"""mutate-ntfs.py IMAGE SEED: damage an NTFS volume at random but
reproducibly (SEED): a few bytes flipped, zeroed or set to extremes inside
MFT records (record headers, attributes, names, runlists) and inside the
INDX blocks of directories, where the parsers of fsck.ntfs work hardest."""
import random
import struct
import sys

path, seed = sys.argv[1], int(sys.argv[2])
rnd = random.Random(seed)
with open(path, "r+b") as f:
    img = bytearray(f.read())
    bps, = struct.unpack_from("<H", img, 11)
    cs = bps * img[13]
    mft, = struct.unpack_from("<q", img, 0x30)
    mft *= cs
    # the INDX blocks: every 4 KiB-aligned block that starts with INDX
    indx = [o for o in range(0, len(img), 4096) if img[o:o + 4] == b"INDX"]
    for _ in range(rnd.randint(1, 6)):
        if indx and rnd.random() < 0.35:
            at = rnd.choice(indx) + rnd.randrange(4096)
        else:
            # records 0..15 mostly keep their mirror; user records too
            at = mft + rnd.randrange(80) * 1024 + rnd.randrange(1024)
        how = rnd.random()
        if how < 0.4:
            img[at] ^= 1 << rnd.randrange(8)
        elif how < 0.6:
            img[at] = 0
        elif how < 0.8:
            img[at] = 0xFF
        else:
            img[at:at + 4] = struct.pack("<I", rnd.choice([0, 1, 0x7FFFFFFF, 0xFFFFFFFF, 0x10000]))
    f.seek(0)
    f.write(img)
