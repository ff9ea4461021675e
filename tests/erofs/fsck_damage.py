#!/usr/bin/env python3
"""fsck_damage.py SIDROOT IMG OURS N < REGIONS: damage IMG (a path inside
SIDROOT) one byte at a time, at up to N offsets spread over each region of
REGIONS (lines "NAME START END", from fsck_regions.py), and run on each
copy erofs-utils' fsck.erofs (--extract --xattr-inode-digest: every extent
decoded, every digest recomputed) and OURS (fsck.erofs
--xattr-inode-digest), both with --no-sbcrc outside the superblock (the
checksum covers the whole first block, which would hide every other
check there).  erofs-utils has caught a damage when it exits non-zero or
prints an error ("<E>": 1.9.4 exits 0 after a bad superblock checksum).  Prints per region: damaged, caught by erofs-utils,
caught by ours; then one line per damage erofs-utils caught and ours did
not ("MISSED") and per run of ours that crashed ("CRASH": an exit status
other than 0 or 1, or a sanitizer report).  Exit 1 on any of those."""
import os
import subprocess
import sys

root, img, ours, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
orig = open(root + img, "rb").read()
work = img + ".damaged"
bad = 0
for line in sys.stdin:
    name, start, end = line.split()
    start, end = int(start), int(end)
    step = max(1, (end - start) // n)
    tried = theirs = mine = 0
    for off in range(start, end, step):
        buf = bytearray(orig)
        buf[off] = (buf[off] + 1 + (off * 7) % 255) % 256
        open(root + work, "wb").write(buf)
        crc = [] if name == "super" else ["--no-sbcrc"]
        p = subprocess.run(["chroot", root, "fsck.erofs", "--extract",
                            "--xattr-inode-digest", *crc, work],
                           capture_output=True, text=True, errors="replace")
        ref = p.returncode or ("<E>" in p.stdout + p.stderr)
        r = subprocess.run([ours, "--xattr-inode-digest", *crc, root + work],
                           capture_output=True, text=True, errors="replace")
        tried += 1
        theirs += ref != 0
        mine += r.returncode != 0
        if r.returncode not in (0, 1) or "Sanitizer" in r.stderr or \
                "runtime error" in r.stderr:
            print(f"CRASH {name} byte {off}: exit {r.returncode}\n{r.stderr[-2000:]}")
            bad += 1
        elif ref != 0 and r.returncode == 0:
            print(f"MISSED {name} byte {off}: erofs-utils: {(p.stdout + p.stderr).strip()[-300:]}")
            bad += 1
    print(f"{name}: {tried} damaged, erofs-utils caught {theirs}, ours {mine}")
os.unlink(root + work)
sys.exit(1 if bad else 0)
