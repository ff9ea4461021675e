#!/usr/bin/env python3
"""usnjrnl_lab.py IMAGE COMMAND ARGS...: a change journal ($Extend/$UsnJrnl)
as Windows keeps one, on a volume whose tools make none, and damage to
it, for tests/ntfs/usnjrnl.bats.  Independent of libntfs: the layout is
written from the format documentation over tests/ntfs/ntfs_patch.py.

ntfs-3g made the file (root directory, name UsnJrnlX) with a resident
$Max stream of 32 bytes and a $J stream written only from HEAD on (a
sparse head); this moves it into $Extend as $UsnJrnl and fills it in.

Commands:
  make REC FILE...   REC becomes $Extend/$UsnJrnl; $J's allocated tail
                     gets three USN_RECORD_V2 records per FILE (created,
                     data extended, closed), the first LOW bytes into the
                     tail's first page (older records before them), so
                     the rest of that page is padding; $Max: 32 MiB, 8 MiB, journal id JID, lowest
                     valid USN the first record's; each FILE's
                     $STANDARD_INFORMATION USN its last record's;
                     prints the next USN ($J's end) and what jsum prints
  max                print $Max: maximum size, allocation delta, journal
                     id, lowest valid USN (decimal), then $J's data size
  records            print each record from the lowest valid USN on:
                     USN, record, parent record, reason (hex), name
  jsum               print the SHA-256 of $J's allocated bytes
  state              print what max prints and then jsum, on one line
  siusn REC          print the USN field of REC's $STANDARD_INFORMATION
  maxfield I VALUE   $Max's 8-byte field I (0..3) becomes VALUE
  maxlen N           $Max's value length field becomes N
  maxname NAME       the $Max stream is called NAME (same length)
  tail OFF VALUE     the 4 bytes at OFF from the start of $J's last
                     record become VALUE
  listed             the journal given an attribute list, as Windows
                     leaves one when $J has many runs: $J's sparse head
                     (its first extent) stays in the base record, its
                     allocated rest (from VCN HEAD / cluster) and $Max
                     move to an extension record
The other commands find $Max and $J's extents through the list.
The commands that damage print what jsum prints afterwards.
"""
import hashlib
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from crosslink_damage import encode  # noqa: E402
from ntfs_patch import AT_DATA, Volume, attrs, runs_of  # noqa: E402
import viewsplit_lab as VS  # noqa: E402

AT_STANDARD_INFORMATION = 0x10
HEAD = 0x10000          # the sparse head: deallocated records
LOW = 0x10F38           # the first valid record, 200 bytes before a page ends
JID = 0x01DB0E0A12345678
TIME = 0x01DB0E0A00000000
EXTEND = 11


AT_LIST = 0x20


def records_of(vol, r):
    """[(record number, record)]: the base R, then the extension records
    its attribute list names."""
    rec = vol.read(r)
    out = [(r, rec)]
    lo = [o for o, t, _ in attrs(rec) if t == AT_LIST]
    if lo:
        vo, = struct.unpack_from("<H", rec, lo[0] + 0x14)
        vl, = struct.unpack_from("<I", rec, lo[0] + 0x10)
        lst, off, seen = rec[lo[0] + vo:lo[0] + vo + vl], 0, {r}
        while off + 0x1A <= len(lst):
            ln, = struct.unpack_from("<H", lst, off + 4)
            x = struct.unpack_from("<Q", lst, off + 0x10)[0] & ((1 << 48) - 1)
            if x not in seen:
                seen.add(x)
                out.append((x, vol.read(x)))
            off += ln
    return out


def extents_of(vol, r, name):
    """[(lowest VCN, record number, record, offset)] of $DATA NAME."""
    out = []
    for x, rec in records_of(vol, r):
        for off, t, n in attrs(rec):
            if t == AT_DATA and n == name:
                lo = struct.unpack_from("<q", rec, off + 0x10)[0] if rec[off + 8] else 0
                out.append((lo, x, rec, off))
    return sorted(out, key=lambda e: e[0])


def stream_at(vol, r, name):
    """(record number, record, offset) of $DATA NAME's first extent."""
    for lo, x, rec, off in extents_of(vol, r, name):
        if not lo:
            return x, rec, off
    raise KeyError(name)


def stream(vol, r, name):
    _, rec, off = stream_at(vol, r, name)
    return rec, off


def max_value(vol, r):
    rec, off = stream(vol, r, "$Max")
    vo, = struct.unpack_from("<H", rec, off + 0x14)
    return rec, off + vo


def j_layout(vol, r):
    rec, off = stream(vol, r, "$J")
    assert rec[off + 8], "$J is resident"
    size, = struct.unpack_from("<q", rec, off + 0x30)
    return [x for _, _, e, o in extents_of(vol, r, "$J") for x in runs_of(e, o)], size


def extent(rec, off, lo, hi, runs, first, instance):
    """The non-resident attribute at OFF of REC as the extent LO..HI of
    RUNS (its header kept, the sizes zero unless FIRST)."""
    mpo, = struct.unpack_from("<H", rec, off + 0x20)
    mp = encode(runs)
    a = bytearray(rec[off:off + mpo]) + mp
    a += bytes(-len(a) % 8)
    struct.pack_into("<I", a, 4, len(a))
    struct.pack_into("<H", a, 0x0E, instance)
    struct.pack_into("<qq", a, 0x10, lo, hi)
    if not first:
        # allocated, data, initialized (and compressed) sizes: before
        # the name
        end = min(mpo, struct.unpack_from("<H", rec, off + 0x0A)[0] if rec[off + 9] else mpo, 0x48)
        a[0x28:end] = bytes(end - 0x28)
    return bytes(a)


def listed(vol, r):
    """$J's allocated rest and $Max into a new extension record, an
    attribute list in the base naming every attribute."""
    rec = vol.read(r)
    base_ref = ref_of(vol, r)
    _, joff = stream(vol, r, "$J")
    _, moff = stream(vol, r, "$Max")
    runs = runs_of(rec, joff)
    cut = HEAD // vol.cs
    head, rest = VS.cut_runs(runs, cut)
    hi, = struct.unpack_from("<q", rec, joff + 0x18)
    mbytes = bytes(rec[moff:moff + struct.unpack_from("<I", rec, moff + 4)[0]])
    mattr = bytearray(mbytes)
    struct.pack_into("<H", mattr, 0x0E, 1)
    j1 = extent(rec, joff, cut, hi, rest, False, 0)
    mruns, mbits = VS.bitmap_of(vol, 0)
    x = next(n for n in range(24, len(mbits) * 8) if not mbits[n // 8] >> (n % 8) & 1)
    xr, xseq = VS.ext_record(vol, x, base_ref, [j1, bytes(mattr)])
    entries = []
    kept = []
    for off, t, n in attrs(rec):
        ln, = struct.unpack_from("<I", rec, off + 4)
        inst, = struct.unpack_from("<H", rec, off + 0x0E)
        if off == moff:
            continue
        a = bytes(rec[off:off + ln])
        if off == joff:
            a = extent(rec, joff, 0, cut - 1, head, True, inst)
        kept.append((t, a))
        entries.append((t, n, 0, base_ref, inst))
    entries += [(AT_DATA, "$J", cut, x | xseq << 48, 0), (AT_DATA, "$Max", 0, x | xseq << 48, 1)]
    entries.sort(key=lambda e: (e[0], e[1], e[2]))
    value = b"".join(VS.list_entry(*e) for e in entries)
    instance, = struct.unpack_from("<H", rec, 0x28)
    al = VS.resident(AT_LIST, "", value, instance)
    out = b""
    for t, a in kept:
        out += a
        if t == AT_STANDARD_INFORMATION:
            out += al
    f0, = struct.unpack_from("<H", rec, 0x14)
    assert f0 + len(out) + 8 <= vol.rs, "the base record overflows"
    new = bytearray(rec)
    new[f0:] = bytes(vol.rs - f0)
    new[f0:f0 + len(out)] = out
    struct.pack_into("<II", new, f0 + len(out), 0xFFFFFFFF, 0)
    struct.pack_into("<I", new, 0x18, f0 + len(out) + 8)
    struct.pack_into("<H", new, 0x28, instance + 1)
    mbits[x // 8] |= 1 << (x % 8)
    VS.put_bitmap(vol, mruns, mbits)
    vol.write(x, xr)
    vol.write(r, new)


def j_write(vol, runs, at, data):
    pos = 0
    for lcn, ln in runs:
        end = pos + ln * vol.cs
        while pos <= at < end and data:
            n = min(len(data), end - at)
            assert lcn is not None, "writing into a hole"
            vol.pwrite(lcn * vol.cs + at - pos, data[:n])
            at, data = at + n, data[n:]
        pos = end
    assert not data


def j_read(vol, runs, at, n):
    out, pos = b"", 0
    for lcn, ln in runs:
        end = pos + ln * vol.cs
        while pos <= at < end and len(out) < n:
            k = min(n - len(out), end - at)
            out += bytes(k) if lcn is None else vol.pread(lcn * vol.cs + at - pos, k)
            at += k
        pos = end
    return out


def usn_record(usn, ref, parent, reason, name, attr):
    nm = name.encode("utf-16-le")
    ln = (0x3C + len(nm) + 7) // 8 * 8
    b = bytearray(ln)
    struct.pack_into("<IHHQQqqIIIIHH", b, 0, ln, 2, 0, ref, parent, usn,
                     TIME + usn, reason, 0, 0, attr, len(nm), 0x3C)
    b[0x3C:0x3C + len(nm)] = nm
    return bytes(b)


def si_usn(rec, off, usn):
    """The USN field of the $STANDARD_INFORMATION at OFF; ntfs-3g writes
    the 48-byte form of NTFS 1.2, grown here to NTFS 3's 72 bytes (owner
    id, security id, quota charged 0)."""
    vl, vo = struct.unpack_from("<IH", rec, off + 0x10)
    if vl < 0x48:
        grow = 0x48 - vl
        used, = struct.unpack_from("<I", rec, 0x18)
        assert used + grow <= len(rec), "record full"
        at = off + vo + vl
        rec[at + grow:used + grow] = rec[at:used]
        rec[at:at + grow] = bytes(grow)
        ln, = struct.unpack_from("<I", rec, off + 4)
        struct.pack_into("<I", rec, off + 4, ln + grow)
        struct.pack_into("<I", rec, off + 0x10, 0x48)
        struct.pack_into("<I", rec, 0x18, used + grow)
    struct.pack_into("<q", rec, off + vo + 0x40, usn)


def ref_of(vol, r):
    return r | vol.seq(r) << 48


def make(vol, r, files):
    vol.rmentry(5, "UsnJrnlX")
    vol.renamefn(r, "UsnJrnlX", "$UsnJrnl")
    vol.parent(r, EXTEND)
    vol.addentry(EXTEND, r)
    runs, size = j_layout(vol, r)
    recs, at, last = [], LOW, {}
    for step in (0x100, 0x102, 0x80000102):
        for f in files:
            rec = vol.read(f)
            _, parent, name, _ = next(vol.file_names(rec))
            u = usn_record(at, ref_of(vol, f), ref_of(vol, parent), step, name, 0x20)
            if at % 4096 + len(u) > 4096:        # never across a page
                recs.append(bytes(4096 - at % 4096))
                at += 4096 - at % 4096
                u = usn_record(at, ref_of(vol, f), ref_of(vol, parent), step, name, 0x20)
            recs.append(u)
            last[f] = at
            at += len(u)
    assert at <= size, "$J written by ntfs-3g is too short: %d < %d" % (size, at)
    body = b"".join(recs) + bytes(size - at)
    # what lies between the sparse head and the first valid record: the
    # records of the journal before it was stamped anew, 53 of 64 bytes
    # and 7 of 72 (names "o" and "old123"), which fill it exactly
    old, o = [], HEAD
    for i in range(60):
        name = "o" if i < 53 else "old123"
        old.append(usn_record(o, ref_of(vol, files[0]), ref_of(vol, 5), 0x100, name, 0x20))
        o += len(old[-1])
    assert o == LOW
    j_write(vol, runs, HEAD, b"".join(old) + body)
    rec, v = max_value(vol, r)
    struct.pack_into("<QQQq", rec, v, 32 << 20, 8 << 20, JID, LOW)
    # $J ends where the next record will go
    _, off = stream(vol, r, "$J")
    struct.pack_into("<qq", rec, off + 0x30, at, at)
    vol.write(r, rec)
    for f, usn in last.items():
        rec = vol.read(f)
        for off, t, _ in attrs(rec):
            if t == AT_STANDARD_INFORMATION:
                si_usn(rec, off, usn)
                break
        vol.write(f, rec)
    print(at, jsum(vol, r))


def jsum(vol, r):
    runs, _ = j_layout(vol, r)
    h = hashlib.sha256()
    for lcn, ln in runs:
        if lcn is not None:
            h.update(vol.pread(lcn * vol.cs, ln * vol.cs))
    return h.hexdigest()


def journal_rec(vol):
    _, _, buf, _, off = vol.find_leaf(EXTEND, "$UsnJrnl", "entry")
    return struct.unpack_from("<Q", buf, off)[0] & ((1 << 48) - 1)


def main():
    vol = Volume(sys.argv[1])
    cmd, args = sys.argv[2], sys.argv[3:]
    if cmd == "make":
        make(vol, int(args[0]), [int(a) for a in args[1:]])
        return
    r = journal_rec(vol)
    if cmd == "max":
        rec, v = max_value(vol, r)
        _, size = j_layout(vol, r)
        print(*struct.unpack_from("<QQQq", rec, v), size)
    elif cmd == "records":
        rec, v = max_value(vol, r)
        low, = struct.unpack_from("<q", rec, v + 24)
        runs, size = j_layout(vol, r)
        data, at = j_read(vol, runs, low, size - low), 0
        while at < len(data):
            ln, = struct.unpack_from("<I", data, at)
            if not ln:
                at += 4096 - (low + at) % 4096
                continue
            _, _, _, ref, parent, usn, _, reason = struct.unpack_from("<IHHQQqqI", data, at)
            nl, no = struct.unpack_from("<HH", data, at + 0x38)
            name = data[at + no:at + no + nl].decode("utf-16-le")
            print(usn, ref & ((1 << 48) - 1), parent & ((1 << 48) - 1), hex(reason), name)
            at += ln
    elif cmd == "jsum":
        print(jsum(vol, r))
    elif cmd == "state":
        rec, v = max_value(vol, r)
        _, size = j_layout(vol, r)
        print(*struct.unpack_from("<QQQq", rec, v), size, jsum(vol, r))
    elif cmd == "siusn":
        rec = vol.read(int(args[0]))
        for off, t, _ in attrs(rec):
            if t == AT_STANDARD_INFORMATION:
                vl, vo = struct.unpack_from("<IH", rec, off + 0x10)
                print(struct.unpack_from("<q", rec, off + vo + 0x40)[0] if vl >= 0x48 else "none")
    if cmd in ("max", "records", "jsum", "state", "siusn"):
        return
    if cmd == "maxfield":
        rec, v = max_value(vol, r)
        struct.pack_into("<Q", rec, v + 8 * int(args[0]), int(args[1], 0))
        vol.write(stream_at(vol, r, "$Max")[0], rec)
    elif cmd == "maxlen":
        rec, off = stream(vol, r, "$Max")
        struct.pack_into("<I", rec, off + 0x10, int(args[0]))
        vol.write(stream_at(vol, r, "$Max")[0], rec)
    elif cmd == "maxname":
        rec, off = stream(vol, r, "$Max")
        no, = struct.unpack_from("<H", rec, off + 10)
        rec[off + no:off + no + 2 * len(args[0])] = args[0].encode("utf-16-le")
        vol.write(stream_at(vol, r, "$Max")[0], rec)
    elif cmd == "tail":
        runs, size = j_layout(vol, r)
        rec, v = max_value(vol, r)
        low, = struct.unpack_from("<q", rec, v + 24)
        data, at, lastat = j_read(vol, runs, low, size - low), 0, None
        while at < len(data):
            ln, = struct.unpack_from("<I", data, at)
            if not ln:
                at += 4096 - (low + at) % 4096
                continue
            lastat, at = low + at, at + ln
        j_write(vol, runs, lastat + int(args[0], 0), struct.pack("<I", int(args[1], 0)))
    elif cmd == "listed":
        listed(vol, r)
    else:
        sys.exit("unknown command " + cmd)
    print(jsum(vol, r))


if __name__ == "__main__":
    main()
