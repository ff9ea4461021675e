#!/usr/bin/env python3
"""minrepair.py IMAGE RECORD DAMAGE: one field of MFT record RECORD of an
NTFS image is made inconsistent, the record's fixups kept valid (unless the
damage is a torn stride).  Parsed from the format documentation with the
helpers of cases/damage.py, independently of libntfs.

DAMAGE:
  init_gt_data   unnamed $DATA: initialized size = data size + 8 KiB
  data_gt_alloc  unnamed $DATA: data size = allocated size + 4 KiB
  flag_bit       unnamed $DATA: attribute flag 0x0100 (no such flag)
  compressed_bit unnamed $DATA: the compressed flag (0x0001) on a plain
                 attribute (no compression unit, no compressed size field;
                 ntfsck -n: ATTR_DATA_FLAGS_CORRUPTED, ntfs-3g cannot read it)
  torn:STRIDE    the check value at the end of 512-byte stride STRIDE flipped
  stream_header  the first named $DATA: name offset beyond the attribute
  stream_flag_bit  the first named $DATA: attribute flag 0x0100
                 (both print the stream's name)
  ext_DAMAGE     DAMAGE in the first extension record of file RECORD
  baseref_plus1  the base record reference 0 -> 1 (one byte: it claims to
                 extend $MFTMirr, which lists nothing)
  baseref_free   the base record reference's low byte: the first free user
                 slot (one byte: it claims a record not in use; printed)
  stale_free_base  a stale copy of the record in the first free user slot
                 (in use, saying it is that slot), its base reference the
                 second free slot: an extension record of a record not in
                 use that its directory's entry does not name (the entry
                 names RECORD); prints "SLOT BASE"
  usa_count      the update sequence array's count 2 (one stride too few)
  alloc_field    the record's allocated size one byte short
  used_slack     the record's bytes in use 32 more (zeros after the end
                 marker; ntfsck -n: "MFT byte-in-use field is corrupted")
  used_past      the record's bytes in use = its allocated size + 8 (past
                 the record; the attributes and end marker inside it)
  magic          the record's magic "XXXX": nothing in it can be used
  used_bit       the record's bytes in use with its highest set bit cleared
                 (still 8-aligned and past the attribute offset, so the
                 header checks pass, but inside an attribute:
                 m-deep4k-1500009, 0x270 -> 0x70; ntfsck -a: "MFT
                 byte-in-use field is corrupted")
  stream_length  the first named $DATA: length that breaks the walk
  value_length   resident unnamed $DATA: value length 512 (past the record's room)
  value_length_bit  resident unnamed $DATA: bit 30 of its value length set
                 (one bit off the length the attribute's length ends)
  indx_alloc     the first INDX block of $I30: its index header's allocated
                 size 8 bytes short of the block
  iroot_alloc    $INDEX_ROOT ($I30): bit 20 of its index header's allocated
                 size set (past the root's value)
  runs_outside   unnamed $DATA: first run's LCN past the end of the volume
  index_runs_outside  $INDEX_ALLOCATION ($I30): the same
  sparse_runs_outside  sparse unnamed $DATA: the first run with clusters
                 gets 0x3f as the top byte of its LCN delta, so that it and
                 every later run (decoded from it) lie past the end of the
                 volume (m-deep4k-1500010; asserted here)
  si_type_bit    $STANDARD_INFORMATION's type 0x10 -> 0x14 (one bit)
  si_value_offset  $STANDARD_INFORMATION's value offset 24 -> 28 (off the
                 8-byte grid; the value now runs 4 bytes past the attribute)
  si_sparse_bit  $STANDARD_INFORMATION's file attributes: sparse (0x200)
                 set on a file whose $DATA is not sparse
  fn_resident_flags  the first $FILE_NAME's resident flags 0x01 -> 0x03
                 (bit 1 does not exist; ntfsck -n reports the record)
  mft_size_short  record RECORD (0, $MFT) and its $MFTMirr copy: $DATA's
                 data and initialized size cut to 16 records (the runs,
                 the allocated size and the $MFT bitmap unchanged)
  lowest_vcn     unnamed $DATA: lowest VCN 0 -> 1 (the record has no
                 attribute list: its one extent must start at 0)
  extent_double  unnamed $DATA: highest VCN, allocated, data and
                 initialized size as if its runs held twice their clusters
  usn_bump       the update sequence number one higher, its copies at the
                 stride ends too (a valid record that differs from its
                 $MFTMirr copy only there)
  copy_to:OTHER  a misdirected write: the record, valid and unchanged (it
                 says it is RECORD), written over the slot of record OTHER too
  move_to:OTHER  the same write over OTHER's slot only ("free": the first
                 free slot, printed): RECORD's own slot keeps its older
                 version (not in use, its sequence number one lower)
  fn_parent_seq0  the first $FILE_NAME's parent reference: sequence number 0
                 (ntfsck -n: FN_PARENT_SEQNO_ZERO)
  ie_ref_seq0    directory RECORD: the first entry of its first index block
                 names its file with sequence number 0 (the block's fixups
                 kept valid; ntfsck -n: IDX_SEQNO_ZERO)
  ie_size:NAME   directory RECORD: the entry NAME (a directory) of its first
                 index block says 4096 bytes (ntfsck -n: DIR_NONZERO_SIZE)
  flags_lost     unnamed $DATA: its sparse and compressed flags cleared
                 (the compression unit and compressed size field kept)
  flags_lost_si:FA  the same, and $STANDARD_INFORMATION's file attributes
                 say FA (hex) for sparse and compressed (0x200, 0x800)
  flags_lost_fa:FA  the same, and every $FILE_NAME's file attributes too
  cu:N           unnamed $DATA: compression unit N
  cu_si:N:FA     the same, and the file attributes say FA
  cu_chunk:N     compression unit N, and the first partly allocated
                 compression unit's first two bytes (its LZNT1 chunk
                 header) zeroed
  csize_grow     unnamed $DATA: compressed size + 1 cluster
  cu_plain       plain unnamed $DATA: compression unit 4 (flags 0)
  dir_flag_off   directory RECORD: the record's directory flag (0x0002)
                 cleared (its $INDEX_ROOT kept; ntfsck -n: FILE_HAVE_IR)
  file_iroot     file RECORD: an empty $I30 $INDEX_ROOT added before its
                 unnamed $DATA (a plain file with an index root)
  resident_ia    directory RECORD (resident index only): a resident $I30
                 $INDEX_ALLOCATION of 8 zero bytes added after its root
                 (ntfsck -n: DIR_HAVE_RESIDENT_IA)
  ibitmap_size   directory RECORD: its $I30 $BITMAP's value length 8 -> 0
                 (no bit for the index blocks it has)
  ea_chain       the first $EA entry's next offset past the value
  data_missing   file RECORD: its unnamed $DATA removed
                 (ntfsck -n: MFT_UNNAMED_DATA_MISSING)
  dir_data       directory RECORD: an empty resident unnamed $DATA added
                 (ntfsck -n: DIR_HAVE_UNNAMED_DATA)
  si_missing     $STANDARD_INFORMATION removed (ntfsck -n: MFT_SI_MISSING)
  empty_runs     unnamed non-resident $DATA: data and initialized size 0,
                 runs and allocated size kept (ntfsck -n:
                 ATTR_EMPTY_DATA_STALE_RUNS)
  empty_runs_freed  the same, and the clusters of the runs marked free in
                 $Bitmap (as a truncate whose record write was cut after
                 the allocator let the clusters go)
  runs_marked    print "MARKED/CLUSTERS": how many clusters of the unnamed
                 non-resident $DATA's runs $Bitmap marks in use (nothing
                 changed)
  ie_reparse:NAME  directory RECORD: the entry NAME (a file with a reparse
                 point) of its first index block: its reparse field 0
  ie_reparse_bit:NAME  the same entry's file attributes: reparse (0x400)
                 cleared
  si_reparse_bit  $STANDARD_INFORMATION's file attributes: the reparse bit
                 (0x400) cleared on a file with a reparse point
  si_security_id  $STANDARD_INFORMATION's security id 0x7777 (in no
                 $Secure index)
  si_usn         $STANDARD_INFORMATION's USN 2^40 (there is no $UsnJrnl)
  used           print bytes in use of the record (nothing changed)
"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases"))
import damage  # noqa: E402
from ntfs_patch import runs_of  # noqa: E402


def put_record(img, g, n, rec):
    """Write the fixed-up record REC as record N (its fixups redone)."""
    damage.set_record_bytes(img, g, n, 0, bytes(rec))


def remove_attr(rec, off):
    """REC without the attribute at OFF; bytes in use follow."""
    ln, = struct.unpack_from("<I", rec, off + 4)
    used, = struct.unpack_from("<I", rec, 0x18)
    rec[off:used] = rec[off + ln:used] + bytes(ln)
    struct.pack_into("<I", rec, 0x18, used - ln)


def insert_attr(rec, off, attr):
    """REC with the attribute ATTR (its instance the record's next) at OFF."""
    used, alloc = struct.unpack_from("<II", rec, 0x18)
    assert used + len(attr) <= alloc, "no room in the record"
    attr = bytearray(attr)
    nxt, = struct.unpack_from("<H", rec, 0x28)
    struct.pack_into("<H", attr, 14, nxt)
    struct.pack_into("<H", rec, 0x28, nxt + 1)
    rec[off:used + len(attr)] = attr + rec[off:used]
    struct.pack_into("<I", rec, 0x18, used + len(attr))


def resident(atype, value, name=""):
    """A resident attribute ATYPE named NAME holding VALUE."""
    nm = name.encode("utf-16-le")
    vofs = (24 + len(nm) + 7) & ~7
    ln = (vofs + len(value) + 7) & ~7
    a = bytearray(ln)
    struct.pack_into("<IIBBHHH", a, 0, atype, ln, 0, len(name), 24 if name else 0, 0, 0)
    struct.pack_into("<IH", a, 16, len(value), vofs)
    a[24:24 + len(nm)] = nm
    a[vofs:vofs + len(value)] = value
    return a


def empty_i30_root(cs):
    """The value of an empty $I30 $INDEX_ROOT (file names, 4 KiB blocks)."""
    return (struct.pack("<IIIB3x", 0x30, 1, 4096, 4096 // cs if cs <= 4096 else 1)
            + struct.pack("<IIIB3x", 16, 32, 32, 0)
            + struct.pack("<QHHB3x", 0, 16, 0, 2))


def type_offset(rec, atype):
    """Where an attribute of ATYPE goes: before the first of a higher type."""
    off, = struct.unpack_from("<H", rec, 0x14)
    while struct.unpack_from("<I", rec, off)[0] <= atype:
        off += struct.unpack_from("<I", rec, off + 4)[0]
    return off


def data_runs(rec):
    """[(lcn, len)] of the unnamed non-resident $DATA of fixed-up REC."""
    off, _ = damage.attr(bytes(rec), 0x80)
    assert rec[off + 8] == 1, "$DATA is resident"
    return runs_of(rec, off)


def free_slots(img, mft, rs):
    """The user slots (from 24) whose record is not in use, in order."""
    return (k for k in range(24, 4096)
            if not damage.unfix(damage.record(img, mft, rs, k))[0x16] & 1)


def bitmap_at(img, g):
    """Byte offset of $Bitmap's content (one run: the small test volumes)."""
    bps, cs, rs, sectors, mft, mirr = g
    brec = damage.unfix(damage.record(img, mft, rs, 6))
    runs = data_runs(brec)
    assert len(runs) == 1 and runs[0][1] * cs * 8 >= sectors * bps // cs, "$Bitmap in pieces"
    return runs[0][0] * cs


def main():
    path, n, what = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open(path, "r+b") as f:
        img = bytearray(f.read())
        g = damage.boot(img)
        bps, cs, rs, sectors, mft, mirr = g
        rec = damage.unfix(damage.record(img, mft, rs, n))
        assert rec[:4] == b"FILE", "not a FILE record"
        used, = struct.unpack_from("<I", rec, 0x18)
        if what == "used":
            print(used)
            return
        if what.startswith("torn:"):
            stride = int(what[5:])
            img[mft + n * rs + (stride + 1) * 512 - 2] ^= 0x5A
        elif what.startswith("ext_"):
            # the same damage in the first extension record of file N
            for e, erec in damage.records(img, g):
                base, = struct.unpack_from("<Q", erec, 0x20)
                if base & 0xFFFFFFFFFFFF == n:
                    f.seek(0)
                    f.write(img)
                    f.flush()
                    sys.argv[2:4] = [str(e), what[4:]]
                    return main()
            raise KeyError("no extension record")
        elif what in ("stream_header", "stream_flag_bit"):
            for off, t, name in damage.attrs(rec):
                if t == 0x80 and name:
                    if what == "stream_header":
                        data = struct.pack("<H", 0xFFF0)
                        at = off + 10
                    else:
                        fl, = struct.unpack_from("<H", rec, off + 12)
                        data = struct.pack("<H", fl | 0x0100)
                        at = off + 12
                    damage.set_record_bytes(img, g, n, at, data)
                    print(name)
                    break
            else:
                raise KeyError("no named $DATA")
        elif what == "si_sparse_bit":
            off, _ = damage.attr(damage.record(img, mft, rs, n), 0x10)
            vofs, = struct.unpack_from("<H", rec, off + 0x14)
            fa, = struct.unpack_from("<I", rec, off + vofs + 32)
            damage.set_record_bytes(img, g, n, off + vofs + 32, struct.pack("<I", fa | 0x200))
        elif what == "fn_resident_flags":
            off, _ = damage.attr(damage.record(img, mft, rs, n), 0x30)
            assert rec[off + 0x16] == 1, "resident flags 0x%x" % rec[off + 0x16]
            damage.set_record_bytes(img, g, n, off + 0x16, b"\x03")
        elif what == "baseref_plus1":
            # the base reference's low byte: 1 (it claims $MFTMirr)
            assert not struct.unpack_from("<Q", rec, 0x20)[0], "already an extension"
            damage.set_record_bytes(img, g, n, 0x20, b"\x01")
        elif what == "baseref_free":
            assert not struct.unpack_from("<Q", rec, 0x20)[0], "already an extension"
            o = next(free_slots(img, mft, rs))
            assert o < 256, "first free slot %d is past one byte" % o
            damage.set_record_bytes(img, g, n, 0x20, bytes([o]))
            print(o)
        elif what == "stale_free_base":
            slots = free_slots(img, mft, rs)
            o, b = next(slots), next(slots)
            img[mft + o * rs:mft + (o + 1) * rs] = img[mft + n * rs:mft + (n + 1) * rs]
            damage.set_record_bytes(img, g, o, 0x2C, struct.pack("<I", o))
            damage.set_record_bytes(img, g, o, 0x20, struct.pack("<Q", b))
            print(o, b)
        elif what == "fn_parent_seq0":
            off, _ = damage.attr(damage.record(img, mft, rs, n), 0x30)
            vofs, = struct.unpack_from("<H", rec, off + 0x14)
            assert struct.unpack_from("<H", rec, off + vofs + 6)[0], "sequence already 0"
            damage.set_record_bytes(img, g, n, off + vofs + 6, b"\0\0")
        elif what == "ie_ref_seq0" or what.startswith(("ie_size:", "ie_reparse:", "ie_reparse_bit:")):
            off = [o for o, t, _ in damage.attrs(rec) if t == 0xa0][0]
            mpo, = struct.unpack_from("<H", rec, off + 0x20)
            p = off + mpo
            lb, ob = rec[p] & 15, rec[p] >> 4
            at = cs * int.from_bytes(rec[p + 1 + lb:p + 1 + lb + ob], "little", signed=True)
            blk = damage.unfix(img[at:at + 4096])
            assert blk[:4] == b"INDX", "no index block"
            assert struct.unpack_from("<I", blk, 0x20)[0] + 0x18 == 4096, "blocks not 4 KiB"
            e = 0x18 + struct.unpack_from("<I", blk, 0x18)[0]
            if what == "ie_ref_seq0":
                assert struct.unpack_from("<H", blk, e + 6)[0], "sequence already 0"
                blk[e + 6:e + 8] = b"\0\0"
            else:
                name = what.split(":", 1)[1]
                while blk[e + 16 + 66:e + 16 + 66 + 2 * blk[e + 16 + 64]].decode("utf-16-le") != name:
                    assert not blk[e + 12] & 2, "no entry " + name
                    e += struct.unpack_from("<H", blk, e + 8)[0]
            if what.startswith("ie_reparse:"):
                assert struct.unpack_from("<I", blk, e + 16 + 0x3c)[0], "no reparse tag"
                blk[e + 16 + 0x3c:e + 16 + 0x40] = bytes(4)
            elif what.startswith("ie_reparse_bit:"):
                fa, = struct.unpack_from("<I", blk, e + 16 + 0x38)
                assert fa & 0x400, "no reparse bit"
                struct.pack_into("<I", blk, e + 16 + 0x38, fa & ~0x400)
            elif what.startswith("ie_size:"):
                assert struct.unpack_from("<q", blk, e + 16 + 48) == (0,), "size not 0"
                blk[e + 16 + 48:e + 16 + 56] = struct.pack("<q", 4096)
            # the fixups again: the stride ends back into the array
            ofs, cnt = struct.unpack_from("<HH", blk, 4)
            for i in range(1, cnt):
                blk[ofs + 2 * i:ofs + 2 * i + 2] = blk[i * 512 - 2:i * 512]
                blk[i * 512 - 2:i * 512] = blk[ofs:ofs + 2]
            img[at:at + 4096] = blk
            print(blk[e + 16 + 66:e + 16 + 66 + 2 * blk[e + 16 + 64]].decode("utf-16-le"))
        elif what == "mft_size_short":
            off, _ = damage.attr(damage.record(img, mft, rs, n), 0x80)
            assert rec[off + 8] == 1, "$MFT's $DATA is resident"
            short = struct.pack("<qq", 16 * rs, 16 * rs)
            damage.set_record_bytes(img, g, n, off + 0x30, short)
            # the same in the mirror's copy (the geometry with the
            # mirror's cluster as the MFT's)
            gm = (bps, cs, rs, sectors, mirr, mirr)
            damage.set_record_bytes(img, gm, n, off + 0x30, short)
        elif what == "lowest_vcn":
            off, _ = damage.attr(damage.record(img, mft, rs, n), 0x80)
            assert rec[off + 8] == 1, "$DATA is resident"
            damage.set_record_bytes(img, g, n, off + 0x10, struct.pack("<q", 1))
        elif what == "extent_double":
            off, _ = damage.attr(damage.record(img, mft, rs, n), 0x80)
            hv, al, ds, ins = struct.unpack_from("<q8xqqq", rec, off + 0x18)
            damage.set_record_bytes(img, g, n, off + 0x18, struct.pack("<q", 2 * hv + 1))
            damage.set_record_bytes(img, g, n, off + 0x28, struct.pack("<qqq", 2 * al, 2 * ds, 2 * ins))
        elif what == "usn_bump":
            ofs, = struct.unpack_from("<H", rec, 4)
            usn, = struct.unpack_from("<H", damage.record(img, mft, rs, n), ofs)
            damage.set_record_bytes(img, g, n, ofs, struct.pack("<H", (usn + 1) & 0xFFFF or 1))
        elif what in ("si_type_bit", "si_value_offset"):
            off, _ = damage.attr(damage.record(img, mft, rs, n), 0x10)
            if what == "si_type_bit":
                damage.set_record_bytes(img, g, n, off, struct.pack("<I", 0x14))
            else:
                vofs, = struct.unpack_from("<H", rec, off + 0x14)
                assert vofs == 24, "value offset %d" % vofs
                damage.set_record_bytes(img, g, n, off + 0x14, struct.pack("<H", 28))
        elif what.split(":")[0] in ("flags_lost", "flags_lost_si", "flags_lost_fa", "cu", "cu_si",
                                    "cu_chunk", "csize_grow"):
            w = what.split(":")
            off, _ = damage.attr(damage.record(img, mft, rs, n), 0x80)
            assert rec[off + 8] == 1, "$DATA is resident"
            fl, = struct.unpack_from("<H", rec, off + 12)
            mpo, = struct.unpack_from("<H", rec, off + 0x20)
            assert fl & 0x8001 and rec[off + 0x22] == 4 and mpo >= 0x48, \
                "not sparse or compressed: flags 0x%x unit %d" % (fl, rec[off + 0x22])
            if w[0].startswith("flags_lost"):
                damage.set_record_bytes(img, g, n, off + 12, struct.pack("<H", fl & ~0x8001))
            elif w[0].startswith("cu"):
                damage.set_record_bytes(img, g, n, off + 0x22, bytes([int(w[1])]))
            else:
                csize, = struct.unpack_from("<q", rec, off + 0x40)
                damage.set_record_bytes(img, g, n, off + 0x40, struct.pack("<q", csize + cs))
            if w[0].endswith("_si") or w[0].endswith("_fa"):
                # SI's file attributes at 32 in its value, FN's at 56
                for o, t, _ in damage.attrs(rec):
                    if t == 0x10 or (t == 0x30 and w[0].endswith("_fa")):
                        at = o + struct.unpack_from("<H", rec, o + 0x14)[0] + (32 if t == 0x10 else 56)
                        fa, = struct.unpack_from("<I", rec, at)
                        fa = fa & ~0xA00 | int(w[-1], 16)
                        damage.set_record_bytes(img, g, n, at, struct.pack("<I", fa))
            if w[0] == "cu_chunk":
                # the runs: the first unit of 16 clusters with a hole after clusters
                p, vcn, lcn, units = off + mpo, 0, 0, {}
                while rec[p]:
                    lb, ob = rec[p] & 15, rec[p] >> 4
                    ln = int.from_bytes(rec[p + 1:p + 1 + lb], "little")
                    if ob:
                        lcn += int.from_bytes(rec[p + 1 + lb:p + 1 + lb + ob], "little", signed=True)
                        for i in range(ln):
                            units.setdefault((vcn + i) // 16, []).append(lcn + i)
                    vcn += ln
                    p += 1 + lb + ob
                first = min(u for u, c in units.items() if len(c) < 16)
                img[units[first][0] * cs:units[first][0] * cs + 2] = b"\0\0"
        elif what in ("dir_flag_off", "file_iroot", "resident_ia", "ibitmap_size",
                      "data_missing", "dir_data", "si_missing", "ea_chain"):
            t = {"resident_ia": 0xa0, "ibitmap_size": 0xb0, "data_missing": 0x80,
                 "si_missing": 0x10, "ea_chain": 0xe0}.get(what)
            found = [o for o, ty, nm in damage.attrs(rec) if ty == t and
                     nm == ("$I30" if t in (0xa0, 0xb0) else "")]
            if what == "dir_flag_off":
                assert rec[0x16] & 2, "not a directory"
                rec[0x16] &= ~2
            elif what == "file_iroot":
                assert not rec[0x16] & 2, "a directory"
                insert_attr(rec, type_offset(rec, 0x90), resident(0x90, empty_i30_root(cs), "$I30"))
            elif what == "resident_ia":
                assert rec[0x16] & 2 and not found, "not a directory with a resident index"
                insert_attr(rec, type_offset(rec, 0xa0), resident(0xa0, bytes(8), "$I30"))
            elif what == "ibitmap_size":
                assert found and rec[found[0] + 8] == 0, "no resident index bitmap"
                struct.pack_into("<I", rec, found[0] + 16, 0)
            elif what == "ea_chain":
                assert found and rec[found[0] + 8] == 0, "no resident $EA"
                vofs, = struct.unpack_from("<H", rec, found[0] + 0x14)
                vlen, = struct.unpack_from("<I", rec, found[0] + 0x10)
                struct.pack_into("<I", rec, found[0] + vofs, vlen + 64)
            elif what == "dir_data":
                assert rec[0x16] & 2, "not a directory"
                insert_attr(rec, type_offset(rec, 0x80), resident(0x80, b""))
            else:
                assert found, "no attribute 0x%x" % t
                remove_attr(rec, found[0])
            put_record(img, g, n, rec)
        elif what == "runs_marked":
            at = bitmap_at(img, g)
            lcns = [lcn + k for lcn, ln in data_runs(rec) for k in range(ln)]
            print("%d/%d" % (sum(1 for x in lcns if img[at + x // 8] >> (x % 8) & 1), len(lcns)))
            return
        elif what in ("empty_runs", "empty_runs_freed", "si_reparse_bit", "si_security_id",
                      "si_usn"):
            if what == "empty_runs_freed":
                at = bitmap_at(img, g)
                for lcn, ln in data_runs(rec):
                    for x in range(lcn, lcn + ln):
                        img[at + x // 8] &= ~(1 << (x % 8)) & 0xFF
            if what.startswith("empty_runs"):
                off, _ = damage.attr(damage.record(img, mft, rs, n), 0x80)
                assert rec[off + 8] == 1, "$DATA is resident"
                struct.pack_into("<qq", rec, off + 0x30, 0, 0)
            else:
                off, _ = damage.attr(damage.record(img, mft, rs, n), 0x10)
                vofs, = struct.unpack_from("<H", rec, off + 0x14)
                vlen, = struct.unpack_from("<I", rec, off + 0x10)
                if what == "si_reparse_bit":
                    fa, = struct.unpack_from("<I", rec, off + vofs + 32)
                    assert fa & 0x400, "no reparse bit"
                    struct.pack_into("<I", rec, off + vofs + 32, fa & ~0x400)
                elif what == "si_security_id":
                    assert vlen == 72, "a short $STANDARD_INFORMATION"
                    struct.pack_into("<I", rec, off + vofs + 0x34, 0x7777)
                else:
                    assert vlen == 72, "a short $STANDARD_INFORMATION"
                    struct.pack_into("<Q", rec, off + vofs + 0x40, 1 << 40)
            put_record(img, g, n, rec)
        elif what.startswith("copy_to:"):
            # a misdirected write: record RECORD, unchanged, also over
            # the slot of record OTHER
            o = int(what[8:])
            img[mft + o * rs:mft + (o + 1) * rs] = img[mft + n * rs:mft + (n + 1) * rs]
        elif what.startswith("move_to:"):
            # a misdirected write that missed its place: record RECORD
            # written over the slot of record OTHER ("free": the first
            # free user slot, printed), its own slot left with its older
            # version (the lab's misdirect mode l: the file not yet in
            # use there, one sequence number before)
            o = what[8:]
            if o == "free":
                o = next(k for k in range(24, 4096)
                         if not damage.unfix(damage.record(img, mft, rs, k))[0x16] & 1)
                print(o)
            o = int(o)
            img[mft + o * rs:mft + (o + 1) * rs] = img[mft + n * rs:mft + (n + 1) * rs]
            seq, flags = struct.unpack_from("<H", rec, 0x10)[0], rec[0x16]
            struct.pack_into("<H", rec, 0x10, seq - 1)
            rec[0x16] = flags & ~1
            put_record(img, g, n, rec)
        elif what == "usa_count":
            img[mft + n * rs + 6:mft + n * rs + 8] = struct.pack("<H", 2)
        elif what == "alloc_field":
            damage.set_record_bytes(img, g, n, 0x1C, struct.pack("<I", rs - 1))
        elif what == "used_bit":
            used, = struct.unpack_from("<I", rec, 0x18)
            aofs, = struct.unpack_from("<H", rec, 0x14)
            cut = used & ~(1 << (used.bit_length() - 1))
            assert cut % 8 == 0 and aofs + 8 <= cut < used - 8, (used, cut)
            damage.set_record_bytes(img, g, n, 0x18, struct.pack("<I", cut))
        elif what == "used_slack":
            used, = struct.unpack_from("<I", rec, 0x18)
            assert used + 32 <= rs and not any(rec[used:used + 32])
            damage.set_record_bytes(img, g, n, 0x18, struct.pack("<I", used + 32))
        elif what == "used_past":
            damage.set_record_bytes(img, g, n, 0x18, struct.pack("<I", rs + 8))
        elif what == "magic":
            img[mft + n * rs:mft + n * rs + 4] = b"XXXX"
        elif what == "stream_length":
            for off, t, name in damage.attrs(rec):
                if t == 0x80 and name:
                    damage.set_record_bytes(img, g, n, off + 4, struct.pack("<I", 0x7FF8))
                    print(name)
                    break
            else:
                raise KeyError("no named $DATA")
        elif what == "value_length":
            off, _ = damage.attr(damage.record(img, mft, rs, n), 0x80)
            assert rec[off + 8] == 0, "$DATA is not resident"
            damage.set_record_bytes(img, g, n, off + 0x10, struct.pack("<I", 0x200))
        elif what == "value_length_bit":
            off, _ = damage.attr(damage.record(img, mft, rs, n), 0x80)
            assert rec[off + 8] == 0, "$DATA is not resident"
            vlen, = struct.unpack_from("<I", rec, off + 0x10)
            damage.set_record_bytes(img, g, n, off + 0x10, struct.pack("<I", vlen | 1 << 30))
        elif what == "indx_alloc":
            off = [o for o, t, _ in damage.attrs(rec) if t == 0xa0][0]
            at = runs_of(rec, off)[0][0] * cs + 0x18 + 8   # first block's allocated size
            alloc, = struct.unpack_from("<I", img, at)
            img[at:at + 4] = struct.pack("<I", alloc - 8)
        elif what == "iroot_alloc":
            off = [o for o, t, _ in damage.attrs(rec) if t == 0x90][0]
            voff, = struct.unpack_from("<H", rec, off + 0x14)
            at = off + voff + 16 + 8    # the index header's allocated size
            alloc, = struct.unpack_from("<I", rec, at)
            damage.set_record_bytes(img, g, n, at, struct.pack("<I", alloc | 1 << 20))
        elif what == "sparse_runs_outside":
            off, _ = damage.attr(damage.record(img, mft, rs, n), 0x80)
            flags, = struct.unpack_from("<H", rec, off + 12)
            assert rec[off + 8] == 1 and flags & 0x8000, "$DATA is not sparse"
            mpo, = struct.unpack_from("<H", rec, off + 0x20)
            p = off + mpo
            while rec[p] >> 4 == 0:
                p += 1 + (rec[p] & 15)
            lb, ob = rec[p] & 15, rec[p] >> 4
            damage.set_record_bytes(img, g, n, p + lb + ob, b"\x3f")
            rec = damage.unfix(damage.record(img, mft, rs, n))
            nr = sectors * bps // cs
            data = [lcn for lcn, _ in runs_of(rec, off) if lcn is not None]
            assert len(data) >= 2 and min(data) >= nr, (data, nr)
        elif what in ("runs_outside", "index_runs_outside"):
            if what == "runs_outside":
                off, _ = damage.attr(damage.record(img, mft, rs, n), 0x80)
            else:
                off = [o for o, t, _ in damage.attrs(rec) if t == 0xa0][0]
            mpo, = struct.unpack_from("<H", rec, off + 0x20)
            p = off + mpo
            lb, ob = rec[p] & 15, rec[p] >> 4
            # the first run's LCN far past the end of the volume
            damage.set_record_bytes(img, g, n, p + 1 + lb + ob - 1, b"\x7f")
        else:
            off, _ = damage.attr(damage.record(img, mft, rs, n), 0x80)
            assert rec[off + 8] == 1, "$DATA is resident"
            alloc, size, init = struct.unpack_from("<qqq", rec, off + 0x28)
            if what == "init_gt_data":
                damage.set_record_bytes(img, g, n, off + 0x38, struct.pack("<q", size + 8192))
            elif what == "data_gt_alloc":
                damage.set_record_bytes(img, g, n, off + 0x30, struct.pack("<q", alloc + 4096))
            elif what == "cu_plain":
                fl, = struct.unpack_from("<H", rec, off + 12)
                assert not fl and not rec[off + 0x22], "not a plain attribute"
                damage.set_record_bytes(img, g, n, off + 0x22, b"\x04")
            elif what == "compressed_bit":
                fl, = struct.unpack_from("<H", rec, off + 12)
                assert not fl and not rec[off + 0x22], "not a plain attribute"
                damage.set_record_bytes(img, g, n, off + 12, struct.pack("<H", 1))
            elif what == "flag_bit":
                fl, = struct.unpack_from("<H", rec, off + 12)
                damage.set_record_bytes(img, g, n, off + 12, struct.pack("<H", fl | 0x0100))
            else:
                raise SystemExit("unknown damage " + what)
        f.seek(0)
        f.write(img)


if __name__ == "__main__":
    main()
