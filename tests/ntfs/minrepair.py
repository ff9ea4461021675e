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
  usa_count      the update sequence array's count 2 (one stride too few)
  alloc_field    the record's allocated size one byte short
  magic          the record's magic "XXXX": nothing in it can be used
  stream_length  the first named $DATA: length that breaks the walk
  value_length   resident unnamed $DATA: value length 512 (past the record's room)
  runs_outside   unnamed $DATA: first run's LCN past the end of the volume
  index_runs_outside  $INDEX_ALLOCATION ($I30): the same
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
  usn_bump       the update sequence number one higher, its copies at the
                 stride ends too (a valid record that differs from its
                 $MFTMirr copy only there)
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
  used           print bytes in use of the record (nothing changed)
"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases"))
import damage  # noqa: E402


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
        elif what == "fn_parent_seq0":
            off, _ = damage.attr(damage.record(img, mft, rs, n), 0x30)
            vofs, = struct.unpack_from("<H", rec, off + 0x14)
            assert struct.unpack_from("<H", rec, off + vofs + 6)[0], "sequence already 0"
            damage.set_record_bytes(img, g, n, off + vofs + 6, b"\0\0")
        elif what == "ie_ref_seq0" or what.startswith("ie_size:"):
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
                while blk[e + 16 + 66:e + 16 + 66 + 2 * blk[e + 16 + 64]].decode("utf-16-le") != what[8:]:
                    assert not blk[e + 12] & 2, "no entry " + what[8:]
                    e += struct.unpack_from("<H", blk, e + 8)[0]
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
        elif what == "usa_count":
            img[mft + n * rs + 6:mft + n * rs + 8] = struct.pack("<H", 2)
        elif what == "alloc_field":
            damage.set_record_bytes(img, g, n, 0x1C, struct.pack("<I", rs - 1))
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
