#!/usr/bin/env python3
"""crosslink_damage.py: damage for tests/ntfs/crosslink.bats, independent of
libntfs (the few structures needed are parsed here from the format
documentation).

  share IMAGE A B     the first clusters of file B (its first run, up to
                      the length of A's first run) are redirected onto A's
                      first clusters; prints "LCN COUNT CLUSTER_SIZE"
  flip IMAGE bitmap N SEED     flip N bits of $Bitmap (clusters in range)
  flip IMAGE mftbitmap N SEED  flip N bits of $MFT's bitmap (records >= 27)
  ghost IMAGE A       a copy of A's record in a free record slot, in use,
                      as an extension record of a record that is not in
                      use (the clusters of A claimed a second time by a
                      record that owns nothing); prints the slot
  setbits IMAGE bitmap|mftbitmap FROM TO VALUE
                      bits FROM..TO-1 set to VALUE; FROM/TO may be "end"
                      (the last cluster or record + 1) or "len" (the
                      bitmap's last bit + 1)
  overhang IMAGE A [header]
                      the last run of A's $DATA one cluster longer (with
                      "header", its highest VCN and allocated size too);
                      prints the LCN of the extra cluster
  overhang_first IMAGE A
                      A's one run split in two (the second half moved to
                      free clusters), then the first run one cluster
                      longer (the header as it was); prints the LCN of
                      A's last cluster
  owner IMAGE LCN     the name of the file whose $DATA holds cluster LCN
                      (first run of a file in the root), or "free" when
                      $Bitmap says it is free
A and B are file names (a $FILE_NAME) in the root or anywhere."""
import random
import struct
import sys


def geometry(img):
    bps, = struct.unpack_from("<H", img, 11)
    spc = img[13]
    if spc > 0x80:
        spc = 1 << (256 - spc)
    sectors, mft = struct.unpack_from("<qq", img, 0x28)
    cpr = struct.unpack_from("<b", img, 0x40)[0]
    cs = bps * spc
    rs = cpr * cs if cpr > 0 else 1 << -cpr
    return cs, rs, sectors // spc, mft * cs


def unfix(rec):
    rec = bytearray(rec)
    ofs, cnt = struct.unpack_from("<HH", rec, 4)
    for i in range(1, cnt):
        rec[i * 512 - 2:i * 512] = rec[ofs + 2 * i:ofs + 2 * i + 2]
    return rec


def fix(rec):
    rec = bytearray(rec)
    ofs, cnt = struct.unpack_from("<HH", rec, 4)
    usn = (struct.unpack_from("<H", rec, ofs)[0] + 1) & 0xffff or 1
    struct.pack_into("<H", rec, ofs, usn)
    for i in range(1, cnt):
        rec[ofs + 2 * i:ofs + 2 * i + 2] = rec[i * 512 - 2:i * 512]
        struct.pack_into("<H", rec, i * 512 - 2, usn)
    return rec


def decode(mp):
    runs, lcn, p = [], 0, 0
    while mp[p]:
        lb, ob = mp[p] & 15, mp[p] >> 4
        ln = int.from_bytes(mp[p + 1:p + 1 + lb], "little", signed=True)
        if ob:
            lcn += int.from_bytes(mp[p + 1 + lb:p + 1 + lb + ob], "little", signed=True)
            runs.append((lcn, ln))
        else:
            runs.append((None, ln))
        p += 1 + lb + ob
    return runs


def sbytes(v):
    n = 1
    while not -(1 << (8 * n - 1)) <= v < (1 << (8 * n - 1)):
        n += 1
    return n


def encode(runs):
    out, prev = bytearray(), 0
    for lcn, ln in runs:
        lb = sbytes(ln)
        if lcn is None:
            out += bytes([lb]) + ln.to_bytes(lb, "little", signed=True)
            continue
        d = lcn - prev
        ob = sbytes(d)
        out += bytes([ob << 4 | lb]) + ln.to_bytes(lb, "little", signed=True)
        out += d.to_bytes(ob, "little", signed=True)
        prev = lcn
    return out + b"\0"


class Vol:
    def __init__(self, path):
        self.path = path
        self.f = open(path, "r+b")
        self.f.seek(0)
        self.cs, self.rs, self.nr, self.mft = geometry(self.f.read(512))
        r0 = self.read_record(0)
        off = self.attr(r0, 0x80)
        self.mft_runs = decode(r0[off + struct.unpack_from("<H", r0, off + 0x20)[0]:])

    def rec_offset(self, n):
        byte, v = n * self.rs, 0
        for lcn, ln in getattr(self, "mft_runs", [(self.mft // self.cs, 1 << 40)]):
            if byte < (v + ln) * self.cs:
                return lcn * self.cs + byte - v * self.cs
            v += ln
        raise IndexError(n)

    def read_record(self, n):
        self.f.seek(self.rec_offset(n))
        return unfix(self.f.read(self.rs))

    def write_record(self, n, rec):
        self.f.seek(self.rec_offset(n))
        self.f.write(fix(rec))

    @staticmethod
    def attr(rec, atype, name=""):
        off, = struct.unpack_from("<H", rec, 0x14)
        while True:
            t, ln = struct.unpack_from("<II", rec, off)
            if t == 0xFFFFFFFF:
                raise KeyError(hex(atype))
            nlen, noff = rec[off + 9], struct.unpack_from("<H", rec, off + 10)[0]
            if t == atype and rec[off + noff:off + noff + 2 * nlen].decode("utf-16-le") == name:
                return off
            off += ln

    def find(self, name):
        nrec = sum(ln for _, ln in self.mft_runs) * self.cs // self.rs
        for n in range(16, nrec):
            rec = self.read_record(n)
            if rec[:4] != b"FILE" or not struct.unpack_from("<H", rec, 0x16)[0] & 1:
                continue
            off, = struct.unpack_from("<H", rec, 0x14)
            while True:
                t, ln = struct.unpack_from("<II", rec, off)
                if t == 0xFFFFFFFF:
                    break
                if t == 0x30:
                    v = off + struct.unpack_from("<H", rec, off + 0x14)[0]
                    fl = rec[v + 0x40]
                    if rec[v + 0x42:v + 0x42 + 2 * fl].decode("utf-16-le") == name:
                        return n
                off += ln
        raise KeyError(name)

    def data_runs(self, n, rec=None):
        rec = rec or self.read_record(n)
        off = self.attr(rec, 0x80)
        assert rec[off + 8] == 1, "resident data"
        mpo, = struct.unpack_from("<H", rec, off + 0x20)
        return rec, off, mpo, decode(rec[off + mpo:])

    def set_runs(self, n, rec, off, mpo, runs):
        mp = encode(runs)
        alen, = struct.unpack_from("<I", rec, off + 4)
        used, alloc = struct.unpack_from("<II", rec, 0x18)
        room = alen - mpo
        if len(mp) > room:
            grow = (len(mp) - room + 7) & ~7
            assert used + grow <= alloc, "runlist does not fit"
            rec[off + alen + grow:used + grow] = rec[off + alen:used]
            struct.pack_into("<I", rec, off + 4, alen + grow)
            struct.pack_into("<I", rec, 0x18, used + grow)
            alen += grow
        rec[off + mpo:off + alen] = mp + bytes(alen - mpo - len(mp))
        self.write_record(n, rec)

    def attr_data(self, n, atype):
        rec = self.read_record(n)
        off = self.attr(rec, atype)
        if not rec[off + 8]:
            vl, vo = struct.unpack_from("<IH", rec, off + 0x10)
            return [("res", n, off + vo, vl)]
        mpo, = struct.unpack_from("<H", rec, off + 0x20)
        size, = struct.unpack_from("<q", rec, off + 0x30)
        return [("runs", decode(rec[off + mpo:]), size)]


def share(v, a, b):
    ra, rb = v.find(a), v.find(b)
    _, _, _, runs_a = v.data_runs(ra)
    rec, off, mpo, runs_b = v.data_runs(rb)
    la, na = runs_a[0]
    lb, nb = runs_b[0]
    k = min(na, nb)
    new = [(la, k)] + ([(lb + k, nb - k)] if nb > k else []) + runs_b[1:]
    v.set_runs(rb, rec, off, mpo, new)
    print(la, k, v.cs)


def overhang(v, a, header):
    ra = v.find(a)
    rec, off, mpo, runs = v.data_runs(ra)
    lcn, ln = runs[-1]
    runs[-1] = (lcn, ln + 1)
    if header:
        hi, = struct.unpack_from("<q", rec, off + 0x18)
        alloc, = struct.unpack_from("<q", rec, off + 0x28)
        struct.pack_into("<q", rec, off + 0x18, hi + 1)
        struct.pack_into("<q", rec, off + 0x28, alloc + v.cs)
    v.set_runs(ra, rec, off, mpo, runs)
    print(lcn + ln)


def is_free(v, lcn):
    res, runs, _, _ = bitmap_of(v, "bitmap")
    byte, vcn = lcn // 8, 0
    for l, ln in runs:
        if byte < (vcn + ln) * v.cs:
            v.f.seek(l * v.cs + byte - vcn * v.cs)
            break
        vcn += ln
    return not v.f.read(1)[0] & (1 << (lcn % 8))


def overhang_first(v, a):
    """A's one run split in two (its second half moved to free clusters
    near the volume's end, $Bitmap kept right), then the FIRST run one
    cluster longer, onto the cluster the move freed (header as it was);
    prints the LCN of A's last cluster"""
    ra = v.find(a)
    rec, off, mpo, runs = v.data_runs(ra)
    assert len(runs) == 1 and runs[0][1] >= 2, "%s: want one run of 2+" % a
    lcn, ln = runs[0]
    k = ln // 2
    n = ln - k
    to = v.nr - n - 16
    while not all(is_free(v, to + i) for i in range(n)):
        to -= 1
    v.f.seek((lcn + k) * v.cs)
    data = v.f.read(n * v.cs)
    v.f.seek(to * v.cs)
    v.f.write(data)
    set_bits(v, "bitmap", range(to, to + n), 1)
    set_bits(v, "bitmap", range(lcn + k, lcn + ln), 0)
    runs = [(lcn, k + 1), (to, n)]
    v.set_runs(ra, rec, off, mpo, runs)
    print(to + n - 1)


def owner(v, lcn):
    res, runs, _, _ = bitmap_of(v, "bitmap")
    byte, vcn = lcn // 8, 0
    for l, ln in runs:
        if byte < (vcn + ln) * v.cs:
            v.f.seek(l * v.cs + byte - vcn * v.cs)
            break
        vcn += ln
    if not v.f.read(1)[0] & (1 << (lcn % 8)):
        print("free")
        return
    nrec = sum(ln for _, ln in v.mft_runs) * v.cs // v.rs
    for n in range(27, nrec):
        rec = v.read_record(n)
        if rec[:4] != b"FILE" or not struct.unpack_from("<H", rec, 0x16)[0] & 1:
            continue
        try:
            _, _, _, rs = v.data_runs(n, rec)
            off = v.attr(rec, 0x30)
        except (KeyError, AssertionError):
            continue
        if rs and rs[0][0] == lcn:
            val = off + struct.unpack_from("<H", rec, off + 0x14)[0]
            fl = rec[val + 0x40]
            print(rec[val + 0x42:val + 0x42 + 2 * fl].decode("utf-16-le"))
            return
    print("?")


def bitmap_of(v, what):
    """(resident (record, offset) or None, runs, length in bytes, items)"""
    if what == "bitmap":
        rec = v.read_record(6)
        off = v.attr(rec, 0x80)
        items = v.nr
    else:
        rec = v.read_record(0)
        off = v.attr(rec, 0xB0)
        items = sum(ln for _, ln in v.mft_runs) * v.cs // v.rs
    if not rec[off + 8]:
        vl, vo = struct.unpack_from("<IH", rec, off + 0x10)
        return (rec, off + vo), None, vl, items
    mpo, = struct.unpack_from("<H", rec, off + 0x20)
    size, = struct.unpack_from("<q", rec, off + 0x30)
    return None, decode(rec[off + mpo:]), size, items


def set_bits(v, what, bits, value=None):
    """Flip BITS of bitmap WHAT, or set them to VALUE."""
    res, runs, _, _ = bitmap_of(v, what)
    for bit in bits:
        mask = 1 << (bit % 8)
        if res:
            rec, at = res
            old = rec[at + bit // 8]
        else:
            byte, vcn = bit // 8, 0
            for lcn, ln in runs:
                if byte < (vcn + ln) * v.cs:
                    at = lcn * v.cs + byte - vcn * v.cs
                    break
                vcn += ln
            v.f.seek(at)
            old = v.f.read(1)[0]
        new = old ^ mask if value is None else (old | mask if value else old & ~mask)
        if res:
            rec[at + bit // 8] = new
        else:
            v.f.seek(at)
            v.f.write(bytes([new]))
    if res:
        v.write_record(6 if what == "bitmap" else 0, res[0])


def flip(v, what, count, seed):
    rnd = random.Random(seed)
    _, _, _, items = bitmap_of(v, what)
    lo = 0 if what == "bitmap" else 27
    set_bits(v, what, rnd.sample(range(lo, items), count))


def setbits(v, what, lo, hi, value):
    _, _, size, items = bitmap_of(v, what)
    pos = {"end": items, "len": size * 8}
    lo, hi = pos.get(lo) or int(lo), pos.get(hi) or int(hi)
    set_bits(v, what, range(lo, hi), value)
    print(hi - lo)


def ghost(v, a):
    ra = v.find(a)
    rec = v.read_record(ra)
    nrec = sum(ln for _, ln in v.mft_runs) * v.cs // v.rs
    free = [n for n in range(27, nrec)
            if not struct.unpack_from("<H", v.read_record(n), 0x16)[0] & 1]
    slot, base = free[0], free[1]
    struct.pack_into("<Q", rec, 0x20, base | 1 << 48)
    struct.pack_into("<I", rec, 0x2C, slot)
    v.write_record(slot, rec)
    print(slot)


def main():
    op, path = sys.argv[1], sys.argv[2]
    v = Vol(path)
    if op == "share":
        share(v, sys.argv[3], sys.argv[4])
    elif op == "flip":
        flip(v, sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    elif op == "ghost":
        ghost(v, sys.argv[3])
    elif op == "overhang":
        overhang(v, sys.argv[3], sys.argv[4:] == ["header"])
    elif op == "overhang_first":
        overhang_first(v, sys.argv[3])
    elif op == "owner":
        owner(v, int(sys.argv[3]))
    elif op == "setbits":
        setbits(v, sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6]))
    else:
        sys.exit("unknown operation " + op)
    v.f.close()


if __name__ == "__main__":
    main()
