#!/usr/bin/env python3
"""runsbad.py IMAGE RECORD STREAM DAMAGE [TYPE]: the runlist of the
attribute of TYPE (hex, $DATA 80 when left out) named STREAM ("" for the
unnamed one) of MFT record RECORD is made bad at its
second run holding clusters (another when that one's LCN delta cannot
hold the damage), the record's
fixups kept valid.  Parsed from the format documentation with the helpers
of cases/damage.py, independently of libntfs.

Prints "VCN SIZE UNIT": the first VCN the damaged run mapped, the stream's
data size and its compression unit in clusters (1 when not compressed),
read before the damage, so that a test can state what the file reads
after a repair that keeps the runs before the bad one.

DAMAGE:
  past      the run's LCN delta made to put it 16 clusters past the end
            of the volume (every later run, decoded from it, follows)
  negative  the run's LCN delta the most negative value of its width:
            its LCN falls below 0 (below -1, which no run may have)
  length    the run's LCN delta made to put it at the volume's last
            cluster: a run of 2 or more clusters runs off the volume
  truncated the attribute ends inside the run: its header byte and the
            bytes after it up to the attribute's end are set to 0x44
            (4 length and 4 LCN bytes each time: no end marker fits)
  overflow  the run rewritten with an 8-byte LCN delta of 2^63 - 1 and
            the array ended after it: the LCN, the one before it plus
            the delta, overflows past 2^63 - 1
  DAMAGE+alloc  DAMAGE, and the header's allocated size one cluster
            more than its highest VCN says (it no longer says how many
            VCNs the runs mapped)
  free      nothing damaged: prints the record's free bytes (its
            allocated minus its used size) and exits
"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases"))
import damage  # noqa: E402


def main():
    path, n, stream, what = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    atype = int(sys.argv[5], 16) if len(sys.argv) > 5 else 0x80
    what, _, extra = what.partition("+")
    with open(path, "r+b") as f:
        img = bytearray(f.read())
        g = damage.boot(img)
        bps, cs, rs, sectors, mft, mirr = g
        rec = damage.unfix(damage.record(img, mft, rs, n))
        assert rec[:4] == b"FILE", "not a FILE record"
        if what == "free":
            used, allocated = struct.unpack_from("<II", rec, 0x18)
            print(allocated - used)
            return
        off = [o for o, t, name in damage.attrs(rec) if t == atype and name == stream][0]
        assert rec[off + 8] == 1, "the attribute is resident"
        alen, = struct.unpack_from("<I", rec, off + 4)
        mpo, cu = struct.unpack_from("<HB", rec, off + 0x20)
        size, = struct.unpack_from("<q", rec, off + 0x30)
        nr = sectors * bps // cs
        p, vcn, lcn, cands = off + mpo, 0, 0, []
        while rec[p]:
            lb, ob = rec[p] & 15, rec[p] >> 4
            ln = int.from_bytes(rec[p + 1:p + 1 + lb], "little")
            if ob:
                cands.append((p, vcn, lb, ob, ln, lcn))
                lcn += int.from_bytes(rec[p + 1 + lb:p + 1 + lb + ob], "little", signed=True)
            vcn += ln
            p += 1 + lb + ob
        # the second run holding clusters first, then the others, the
        # first whose LCN delta can hold the damage
        cands = cands[1:] + cands[:1]
        for p, vcn, lb, ob, ln, prev in cands:
            lim = 1 << (8 * ob - 1)
            if what == "past":
                delta = nr + 16 - prev
            elif what == "negative":
                delta = -lim
                if prev + delta >= -1:
                    continue
            elif what == "length":
                delta = nr - 1 - prev
                if ln < 2:
                    continue
            elif what == "overflow":
                if prev <= 0 or p + 1 + lb + 8 + 1 > off + alen:
                    continue
                data = (bytes([0x80 | lb]) + rec[p + 1:p + 1 + lb] +
                        ((1 << 63) - 1).to_bytes(8, "little"))
                data += bytes(off + alen - p - len(data))
                at = p
                break
            elif what == "truncated":
                data = b"\x44" * (off + alen - p)
                at = p
                break
            else:
                raise KeyError(what)
            if -lim <= delta < lim:
                data = delta.to_bytes(ob, "little", signed=True)
                at = p + 1 + lb
                break
        else:
            raise SystemExit("no run can hold the damage " + what)
        damage.set_record_bytes(img, g, n, at, data)
        if extra == "alloc":
            alloc, = struct.unpack_from("<q", rec, off + 0x28)
            damage.set_record_bytes(img, g, n, off + 0x28, struct.pack("<q", alloc + cs))
        f.seek(0)
        f.write(img)
        print(vcn, size, 1 << cu if cu else 1)


if __name__ == "__main__":
    main()
