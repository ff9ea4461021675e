"""Stale blocks: the lost writes and write-backs of old copies that a disk
(or a hypervisor, a RAID layer, a cache) makes in real use.  Every block
left is one the file system itself wrote at some point, so every fixup,
magic and length is valid: only its age is wrong.

From a recording of the workload's writes (powercut.py's ntfs-3g strace
recording, or the Linux driver's dm-log-writes log of kpowercut.py) the
volume it ends in is the reference.  A case is that volume with one write
gone wrong:
  lost   (`o-BASE-lK`): write K never reached the disk (the drive
         acknowledged it from its cache and lost it, or wrote it
         elsewhere); its sectors that no later write covered hold what
         they held before it;
  stale  (`o-BASE-sK`): write K reached the disk after the later writes
         to the same sectors (a cache that reorders, a replayed
         write-back of an old copy); those sectors hold write K's older
         content.
  restore (`o-BASE-gK`): the final volume with the 128 KiB region around
         write K (aligned down) as it was before the whole recording: a
         partial restore from a backup taken minutes earlier (the region
         of `$MFT`, of an index or of `$Bitmap` older than the rest).
Only writes whose loss or replay changes the final volume are chosen,
spread over what they hold: MFT records ("FILE"), index blocks ("INDX")
and the rest (bitmaps, $LogFile, the boot sector, file data).

The expectation is the final volume (read through ntfs-3g, mapped by
ntfsparse): "nothing lost" requires every file of it none of whose
records and clusters holds a stale sector."""
import random

SECTOR = 512


def what(data):
    """The class of a write by what it holds."""
    if data[:4] == b"FILE":
        return "mft"
    if data[:4] == b"INDX":
        return "indx"
    return "other"


REGION = 128 << 10


def candidates(writes, base):
    """{(mode, class): [k, ...]}: the writes whose loss ("l") or late
    replay ("s") changes the final volume (BASE: the image before them,
    bytes).  Writes need not be sector-aligned (ntfs-3g updates a bitmap
    byte in place): a write is lost-relevant when it changed a sector
    that no later write touches."""
    img = bytearray(base)
    last, changed = {}, {}
    for k, (off, data) in enumerate(writes):
        secs = range(off // SECTOR, (off + len(data) - 1) // SECTOR + 1)
        if img[off:off + len(data)] != data:
            changed[k] = [s for s in secs
                          if img[max(off, s * SECTOR):min(off + len(data), (s + 1) * SECTOR)]
                          != data[max(0, s * SECTOR - off):min(len(data), (s + 1) * SECTOR - off)]]
        for s in secs:
            last[s] = k
        img[off:off + len(data)] = data
    out = {}
    for k, (off, data) in enumerate(writes):
        c = what(data)
        if any(last[s] == k for s in changed.get(k, ())):
            out.setdefault(("l", c), []).append(k)
        if img[off:off + len(data)] != data:
            out.setdefault(("s", c), []).append(k)
    seen = set()
    for k, (off, data) in enumerate(writes):
        r = off // REGION * REGION
        if r not in seen and base[r:r + REGION] != img[r:r + REGION]:
            seen.add(r)
            out.setdefault(("g", what(data)), []).append(k)
    return out


def points(writes, base, count, seed):
    """COUNT case suffixes ("l12", "s480"), seeded, taken round-robin over
    the (mode, class) groups and spread over each group."""
    rnd = random.Random(seed)
    groups = candidates(writes, base)
    keys = sorted(groups)
    rnd.shuffle(keys)
    pools = {g: rnd.sample(groups[g], len(groups[g])) for g in keys}
    out = []
    while len(out) < count and any(pools.values()):
        for g in keys:
            if pools[g] and len(out) < count:
                out.append("%s%d" % (g[0], pools[g].pop()))
    return out


def apply(img, writes, spec):
    """IMG (the base, bytearray) plus WRITES with case SPEC ("lK"/"sK"/"gK")."""
    mode, k = spec[0], int(spec[1:])
    if mode == "g":
        r = writes[k][0] // REGION * REGION
        old = bytes(img[r:r + REGION])
        final(img, writes)
        img[r:r + REGION] = old
        return
    for i, (off, data) in enumerate(writes):
        if mode == "l" and i == k:
            continue
        img[off:off + len(data)] = data
    if mode == "s":
        off, data = writes[k]
        img[off:off + len(data)] = data


def final(img, writes):
    """IMG plus every write: the reference volume."""
    for off, data in writes:
        img[off:off + len(data)] = data
