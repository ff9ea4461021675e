"""ntfsparse: the little of the NTFS on-disk format the damage lab needs,
read here from the format documentation (not from libntfs, so that the lab
judges fsck.ntfs with an independent view of the volume): the boot sector,
MFT records with their update sequence fixups, attribute headers,
runlists, $FILE_NAME values, index roots and INDX blocks."""
import struct

END = 0xFFFFFFFF


class Geometry:
    def __init__(self, img):
        self.bps, = struct.unpack_from("<H", img, 11)
        spc = img[13]
        if spc > 0x80:
            spc = 1 << (256 - spc)
        self.cs = self.bps * spc
        self.sectors, mft, mirr = struct.unpack_from("<qqq", img, 0x28)
        cpr = struct.unpack_from("<b", img, 0x40)[0]
        self.rs = cpr * self.cs if cpr > 0 else 1 << -cpr
        cpi = struct.unpack_from("<b", img, 0x44)[0]
        self.ibs = cpi * self.cs if cpi > 0 else 1 << -cpi
        self.mft_lcn, self.mirr_lcn = mft, mirr
        self.backup = self.sectors * self.bps       # backup boot sector
        self.clusters = self.sectors * self.bps // self.cs
        # byte offset of each MFT record, through $MFT's own runlist
        rec0 = unfix(img[mft * self.cs:mft * self.cs + self.rs])
        runs = []
        for off, t, name, nr in attrs(rec0):
            if t == 0x80 and name == "" and nr:
                runs = runlist(rec0, off)
        self.mft_runs = runs
        self.nrecords = sum(ln for _, ln in runs) * self.cs // self.rs
        try:
            self._mft_extents(img, rec0)
        except (struct.error, IndexError, ValueError):
            pass  # a damaged list: the first extent only

    def _mft_extents(self, img, rec0):
        """$MFT's $DATA extents in extension records named by record 0's
        attribute list (a fragmented $MFT): their runs follow the first
        extent's, in VCN order (each extension record lies in the runs
        known before it)."""
        want = [(vcn, ref & 0xFFFFFFFFFFFF)
                for t, nm, vcn, ref in list_entries(list_value(img, self, rec0))
                if t == 0x80 and nm == "" and vcn > 0]
        for vcn, x in sorted(want):
            if vcn != sum(n for _, n in self.mft_runs):
                return  # a gap: the rest is not trusted
            at = self.rec_off(x)
            if at is None:
                return
            xr = unfix(img[at:at + self.rs])
            for aoff, at_, an, nr in attrs(xr):
                if at_ == 0x80 and an == "" and nr and \
                        struct.unpack_from("<q", xr, aoff + 0x10)[0] == vcn:
                    self.mft_runs = self.mft_runs + runlist(xr, aoff)
            self.nrecords = sum(n for _, n in self.mft_runs) * self.cs // self.rs

    def rec_off(self, n):
        """Byte offset of MFT record N in the image (None: past $MFT)."""
        byte = n * self.rs
        vcn_bytes = 0
        for lcn, ln in self.mft_runs:
            if byte < vcn_bytes + ln * self.cs:
                if lcn is None:
                    return None
                return lcn * self.cs + byte - vcn_bytes
            vcn_bytes += ln * self.cs
        return None


def unfix(rec):
    """A copy of a multi-sector block with its fixups undone (stride ends
    restored from the update sequence array)."""
    rec = bytearray(rec)
    ofs, cnt = struct.unpack_from("<HH", rec, 4)
    for i in range(1, cnt):
        if i * 512 > len(rec) or ofs + 2 * i + 2 > len(rec):
            break
        rec[i * 512 - 2:i * 512] = rec[ofs + 2 * i:ofs + 2 * i + 2]
    return rec


def refix(plain):
    """The on-disk form of a fixed-up view: stride ends saved into the
    update sequence array and replaced by the update sequence number."""
    rec = bytearray(plain)
    ofs, cnt = struct.unpack_from("<HH", rec, 4)
    usn = rec[ofs:ofs + 2]
    for i in range(1, cnt):
        if i * 512 > len(rec) or ofs + 2 * i + 2 > len(rec):
            break
        rec[ofs + 2 * i:ofs + 2 * i + 2] = rec[i * 512 - 2:i * 512]
        rec[i * 512 - 2:i * 512] = usn
    return rec


def fixups_ok(raw):
    ofs, cnt = struct.unpack_from("<HH", raw, 4)
    if ofs + 2 * cnt > len(raw) or cnt == 0:
        return False
    usn = raw[ofs:ofs + 2]
    return all(raw[i * 512 - 2:i * 512] == usn for i in range(1, cnt)
               if i * 512 <= len(raw))


def attrs(rec):
    """(offset, type, name, non-resident) of each attribute of a fixed-up
    record; stops quietly at anything malformed."""
    off, = struct.unpack_from("<H", rec, 0x14)
    while off + 16 <= len(rec):
        t, ln = struct.unpack_from("<II", rec, off)
        if t == END or ln < 16 or off + ln > len(rec):
            return
        nlen, noff = rec[off + 9], struct.unpack_from("<H", rec, off + 10)[0]
        name = rec[off + noff:off + noff + 2 * nlen].decode("utf-16-le", "replace")
        yield off, t, name, rec[off + 8]
        off += ln


def runlist(rec, off):
    """[(lcn or None for sparse, length)] of the non-resident attribute at
    OFF of a fixed-up record."""
    mpo, = struct.unpack_from("<H", rec, off + 0x20)
    ln, = struct.unpack_from("<I", rec, off + 4)
    p, end, lcn, runs = off + mpo, off + ln, 0, []
    while p < end and rec[p]:
        h = rec[p]
        lb, ob = h & 15, h >> 4
        if lb == 0 or p + 1 + lb + ob > end:
            break
        length = int.from_bytes(rec[p + 1:p + 1 + lb], "little", signed=True)
        if ob:
            lcn += int.from_bytes(rec[p + 1 + lb:p + 1 + lb + ob], "little", signed=True)
            runs.append((lcn, length))
        else:
            runs.append((None, length))
        p += 1 + lb + ob
    return runs


def runlist_fields(rec, off):
    """[(offset of header byte, length bytes, offset bytes)] of each run."""
    mpo, = struct.unpack_from("<H", rec, off + 0x20)
    ln, = struct.unpack_from("<I", rec, off + 4)
    p, end, out = off + mpo, off + ln, []
    while p < end and rec[p]:
        lb, ob = rec[p] & 15, rec[p] >> 4
        out.append((p, lb, ob))
        p += 1 + lb + ob
    return out


def value(rec, off):
    """(offset, length) of a resident attribute's value."""
    vlen, voff = struct.unpack_from("<IH", rec, off + 0x10)
    return off + voff, vlen


def file_names(rec):
    """[(parent record, parent seq, name, offset of value)]."""
    out = []
    for off, t, _, nr in attrs(rec):
        if t == 0x30 and not nr:
            v, _ = value(rec, off)
            pref, = struct.unpack_from("<Q", rec, v)
            ln = rec[v + 0x40]
            name = rec[v + 0x42:v + 0x42 + 2 * ln].decode("utf-16-le", "replace")
            out.append((pref & 0xFFFFFFFFFFFF, pref >> 48, name, v))
    return out


def read_record(img, g, n):
    at = g.rec_off(n)
    if at is None:
        return None, None
    return at, bytes(img[at:at + g.rs])


def records(img, g):
    """(number, offset, fixed-up copy) of every FILE record in use."""
    for n in range(g.nrecords):
        at, raw = read_record(img, g, n)
        if raw is None or raw[:4] != b"FILE":
            continue
        if struct.unpack_from("<H", raw, 0x16)[0] & 1:
            yield n, at, unfix(raw)


def index_entries(buf, hdr):
    """(offset, file ref, length, key length, flags) of each entry of an
    index header at HDR in BUF (fixed-up)."""
    eofs, ilen = struct.unpack_from("<II", buf, hdr)
    p, end = hdr + eofs, hdr + ilen
    while p + 16 <= min(end, len(buf)):
        ref, ln, kl, fl = struct.unpack_from("<QHHH", buf, p)
        yield p, ref, ln, kl, fl
        if fl & 2 or ln < 16:
            return
        p += ln


def named_record(img, g, name):
    """The number of the record in use whose $FILE_NAME is NAME."""
    for n, at, rec in records(img, g):
        if any(nm == name for _, _, nm, _ in file_names(rec)):
            return n
    raise KeyError(name)


def index_blocks(img, g, rec, off):
    """Byte offsets of the INDX blocks of the $INDEX_ALLOCATION at OFF."""
    out = []
    for lcn, ln in runlist(rec, off):
        if lcn is None:
            continue
        for b in range(0, ln * g.cs, g.ibs):
            o = lcn * g.cs + b
            if img[o:o + 4] == b"INDX":
                out.append(o)
    return out


def index_all(img, g, n, iname):
    """Every entry (not the end entries) of index INAME of record N:
    [(where, offset in the fixed-up buffer, buffer)], WHERE "root" or the
    byte offset of the INDX block."""
    rec = unfix(read_record(img, g, n)[1])
    out = []
    for off, t, name, nr in attrs(rec):
        if t == 0x90 and name == iname:
            vo, _ = value(rec, off)
            out += [("root", e[0], rec) for e in index_entries(rec, vo + 0x10) if not e[4] & 2]
        if t == 0xA0 and name == iname:
            for b in index_blocks(img, g, rec, off):
                blk = unfix(img[b:b + g.ibs])
                out += [(b, e[0], blk) for e in index_entries(blk, 0x18) if not e[4] & 2]
    return out


def index_depth(img, g, n, iname="$I30"):
    """Levels of index INAME of record N: 1 for a root alone, + 1 per
    level of INDX blocks below it (walked from the root through each
    entry's subnode VCN)."""
    root, alloc = None, []
    for rec, off, t, name, nr in all_attrs(img, g, n):
        if t == 0x90 and name == iname:
            root = (rec, off)
        if t == 0xA0 and name == iname and nr:
            alloc.append((struct.unpack_from("<q", rec, off + 0x10)[0], runlist(rec, off)))
    alloc = [r for _, rr in sorted(alloc) for r in rr]

    def block(vcn):
        byte = vcn * (g.cs if g.ibs >= g.cs else 512)
        pos = 0
        for lcn, ln in alloc or []:
            if byte < pos + ln * g.cs:
                o = lcn * g.cs + byte - pos
                return unfix(img[o:o + g.ibs])
            pos += ln * g.cs
        return None

    def depth(buf, hdr, seen):
        deepest = 0
        for p, _, ln, _, fl in index_entries(buf, hdr):
            if fl & 1:
                vcn, = struct.unpack_from("<q", buf, p + ln - 8)
                b = block(vcn)
                if b is not None and b[:4] == b"INDX" and vcn not in seen:
                    seen.add(vcn)
                    deepest = max(deepest, depth(b, 0x18, seen))
        return deepest + 1

    if root is None:
        return 0
    vo, _ = value(*root)
    return depth(root[0], vo + 0x10, set())


def list_value(img, g, rec):
    """The $ATTRIBUTE_LIST value of fixed-up record REC (resident, or read
    from its clusters up to its data size), or None without one."""
    lst = None
    for off, t, name, nr in attrs(rec):
        if t == 0x20 and nr:
            size, = struct.unpack_from("<q", rec, off + 0x30)
            lst = b"".join(bytes(img[lcn * g.cs:(lcn + k) * g.cs])
                           for lcn, k in runlist(rec, off) if lcn is not None)[:size]
        elif t == 0x20:
            vo, ln = value(rec, off)
            lst = bytes(rec[vo:vo + ln])
    return lst


def list_entries(lst):
    """(type, name, lowest VCN, reference) of each entry of list value
    LST, up to the end or an entry shorter than its header."""
    p = 0
    while lst and p + 26 <= len(lst):
        t, ln, nl, no = struct.unpack_from("<IHBB", lst, p)
        if ln < 26:
            return
        vcn, ref = struct.unpack_from("<qQ", lst, p + 8)
        yield t, lst[p + no:p + no + 2 * nl].decode("utf-16-le", "replace"), vcn, ref
        p += ln


def all_attrs(img, g, n, numbers=False):
    """(fixed-up record, offset, type, name, non-resident) of every
    attribute of file N: its base record's and, through its attribute
    list, its extension records' (NUMBERS: the record's number first)."""
    rec = unfix(read_record(img, g, n)[1])
    out = [(n, rec, off, t, name, nr) for off, t, name, nr in attrs(rec)]
    seen = {n}
    for _, _, _, ref in list_entries(list_value(img, g, rec)):
        x = ref & 0xFFFFFFFFFFFF
        if x in seen or read_record(img, g, x)[1] is None:
            continue
        seen.add(x)
        xr = unfix(read_record(img, g, x)[1])
        out += [(x, xr, off, t, name, nr) for off, t, name, nr in attrs(xr)]
    return out if numbers else [a[1:] for a in out]


def census(img):
    """Counts of what a Windows-like volume has, read from the image:
    compressed data attributes, DOS names, reparse points and $Reparse
    entries, object ids and $ObjId entries, $EA/$EA_INFORMATION, attribute
    lists and extension records, $Secure's $SDS bytes and the $SII/$SDH
    entries and INDX blocks."""
    g = Geometry(img)
    c = dict.fromkeys(("compressed", "dosnames", "reparse", "objid", "ea", "eainfo",
                       "attrlist", "extrecs"), 0)
    for n, at, rec in records(img, g):
        if struct.unpack_from("<Q", rec, 0x20)[0]:
            c["extrecs"] += 1
        for off, t, name, nr in attrs(rec):
            if t == 0x80 and nr and rec[off + 0x22] and struct.unpack_from("<H", rec, off + 0xC)[0] & 1:
                c["compressed"] += 1
            key = {0xC0: "reparse", 0x40: "objid", 0xE0: "ea", 0xD0: "eainfo", 0x20: "attrlist"}.get(t)
            if key:
                c[key] += 1
        c["dosnames"] += sum(1 for _, _, _, v in file_names(rec) if rec[v + 0x41] == 2)
    ext = {"$Reparse": "$R", "$ObjId": "$O"}
    for fname, iname in ext.items():
        c[fname] = len(index_all(img, g, named_record(img, g, fname), iname))
    rec = unfix(read_record(img, g, 9)[1])
    for off, t, name, nr in attrs(rec):
        if t == 0x80 and name == "$SDS":
            c["$SDS bytes"] = struct.unpack_from("<Q", rec, off + 0x30)[0] if nr else value(rec, off)[1]
        if t == 0xA0:
            c[name + " blocks"] = len(index_blocks(img, g, rec, off))
    for iname in ("$SII", "$SDH"):
        c[iname] = len(index_all(img, g, 9, iname))
    return c
