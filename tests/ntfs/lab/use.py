"""Damage of volumes damaged in real use: the classes ntfsprogs-plus lists
for its collection `ntfs_corrupted_images/generated_during_use/` (its
README names each image's damage, often several at once), made
synthetically on a lab base.  A case `g-BASE-CLASS-SEED` lays the
components of CLASS over the base, SEED choosing among the structures
each component may hit (which file, which INDX block, which field).

A component is either a regular expression over the targeted damages of
the base (damages.targeted: `t-BASE-NAME`), the adverse kind's torn
writes (`a-BASE-tornrec-S`, `a-BASE-tornindx-S`: a device unplugged
during writes), or one of the damages below that no other kind makes
(`@name`): a `$FILE_NAME` or `$INDEX_ROOT` removed from its record, the
`$DATA` sizes made smaller than allocated, an index entry's duplicated
allocated size or length changed, the index `$BITMAP`'s length changed,
a `$FILE_NAME` in an extension record given a wrong parent, two files
of the same name orphaned.  A class whose component has nothing to hit
on a base (an attribute list on ours1k) is not made there.

As compound.py does, each component is made on its own copy of the base
and the bytes it changed are laid over the image in order.  The
reference is the base; "names kept" is the lab's survival count.  Not
modelled: orphans deeper than 20 levels (the bases nest 6 deep), a
corrupted lost+found (no base has one), a Windows-formatted volume
(control of the winshape base)."""
import random
import re
import struct

import adverse as AD
import damages as D
import ntfsparse as P

ORPHAN = r"indx-(big|root)-b\d+-e-ref|iroot-(nested|big)-e0-ref"
SEQ = r"rec-(small|hardlink|xattr|frag)-seq-plus1|indx-(big|root)-b\d+-e-refseq|iroot-(big|root|nested)-e0-refseq"
ALENTRY = r"alist-\w+-entry-\w+"
ALLEN = r"alist-\w+-entry-len"
DELETED = r"rec-(small|hardlink|xattr)-flags-zero"
MAGIC = r"rec-(small|frag|hardlink|xattr)-magic"
DUP = r"runs-(frag|sparse|dir)-crosslink"
BITMAP = r"bitmap-(used-cleared|free-set)"
RUN = r"runs-(frag|sparse|bigfile)-r\d+-(lcn-plus1|len-plus1)"

# class (the folder of generated_during_use/) -> components
CLASSES = {
    "attr_find_corrupt_inode": [r"rec-(small|frag|hardlink)-attrtype-unknown"],
    "attr_value_offset_corrupted": [r"rec-(small|frag|hardlink|xattr)-stdinfo-voff-\w+"],
    "attrlist_entry_corrupted": [ALENTRY, "@nofname", SEQ],
    "attrlist_length_corrupted": [ALLEN, "@nofname", "@nofname", SEQ],
    "cluster_duplication_a_lot": [DUP, DUP, DUP],
    "cluster_duplication_one": [DUP],
    "corrupted_attrlist_entry_and_cluster_run": [ALLEN, r"attr-(frag|sparse)-(allocsz|datasz)-\w+", ALENTRY,
                                                 BITMAP, RUN, r"attr-(bigfile|sparse)-(datasz|initsz)-big"],
    "data_size_init_size_bigger_than_alloc_size_DATA_attr": ["@databig"],
    "data_size_init_size_bigger_than_alloc_size_ia": ["@iabig"],
    "data_size_init_size_smaller_than_alloc_size_DATA_attr": ["@datasmall"],
    "deep_depth_orphaned_files": [r"iroot-nested-e0-ref|fname-nested-parent-missing", ORPHAN],
    "different_index_and_mft_flags": [ALENTRY, SEQ, "@nofname"],
    "entry_length_corrupted": [r"iroot-(root|big|nested)-e0-len"],
    "fsck_error_remain": [ALENTRY, MAGIC, BITMAP],
    "has_wrong_parent_dir_in_extent_mft": ["@extparent"],
    "highest_vcn_cluster_run": [r"attr-(frag|sparse|bigfile|dir)-highvcn-\w+", r"runs-(frag|sparse|bigfile)-r\d+-header-zero"],
    "ia_bitmap_unused_mark": [r"ibitmap-(big|root)-zero", DUP],
    "idx_fn_mft_data_allocated_size_mismatch": ["@ixalloc"],
    "incompleted_multi_sector_transfer_before": [r"rec-(small|frag|hardlink|xattr)-(torn|usn)", "@nofname", ORPHAN],
    "index_bitmap_size_mismatch": ["@ibmpsize"],
    "index_block_signature_and_size_corrupted": [r"indx-big-b0-magic", r"iroot-big-blocksize", ORPHAN],
    "index_block_signature_corrupted": [r"indx-(big|root)-b\d+-magic"],
    "index_block_size_corruption": [r"indx-big-b0-magic", r"iroot-big-blocksize"],
    "index_block_valid_but_index_bitmap_cleared": [r"ibitmap-(big|root)-zero"],
    "index_block_valid_but_index_bitmap_cleared2": [r"ibitmap-(big|root)-zero", ORPHAN],
    "index_block_vcn_corruption": [r"indx-(big|root)-b\d+-vcn", ORPHAN, ORPHAN],
    "infinite_loop_root_dir_in_orphaned_file": [RUN, ALENTRY, r"attr-(frag|sparse|dir)-allocsz-\w+"],
    "ir_missing_in_parent_orphaned_file": ["@noir"],
    "lcn_bitmap_clear_remain": [ALLEN, DELETED, SEQ, r"bitmap-used-cleared"],
    "memory_leak1": [r"indx-(big|root)-b\d+-e-(len|keylen)"],
    "mft_base_record_field_corrupted": [r"rec-(small|frag|xattr)-baseref-plus1", r"attr-(frag|sparse)-allocsz-\w+"],
    "mft_bitmap_corrupted": [r"mftbitmap-(file|dir)-cleared|mftbitmap-free-set"],
    "mft_mftmirr_mismatch": [r"mirror[0-3]-torn"],
    "mft_parent_reference_corrupted": [r"fname-(small|hardlink|xattr)-parent-(file|missing)", DUP, SEQ],
    "mft_table_entry_corruption": [r"sys0[0-3]-(torn|usn)"],
    "mismatch_index_filename": [r"indx-(big|root)-b\d+-e-namechar", SEQ],
    "mismatch_seqno_illegal_seek": [SEQ, DELETED],
    "mismatch_seqno_illegal_seek2": [ALENTRY, MAGIC, SEQ, DELETED],
    "missing_mft_filename_attr": ["@nofname", SEQ],
    "missing_mft_filename_attr2": ["@nofname", MAGIC],
    "missing_mft_filename_attr_a_lot": [ALENTRY, "@nofname", "@nofname", "@nofname", SEQ],
    "next_ie_entry_out_of_bound": ["@ielen", SEQ],
    "not_found_filename_tntfs_unplugged": ["@ixalloc", "@nofname", SEQ, "tornrec"],
    "orphaned_inode_cant_repair": [ORPHAN, ORPHAN],
    "orphaned_mft_repairing": [ORPHAN, r"rec-(small|frag|hardlink|xattr)-(recno|attroff)-\w+"],
    "paragon_ntfs_test": ["tornrec", "tornindx"],
    "remove_index_entry_twice": ["@nofname", SEQ, ORPHAN],
    "revive_orphan_mft_entry": [ORPHAN, SEQ],
    "root_attribute_missing_in_directory": ["@noir", r"attr-(frag|sparse)-allocsz-\w+"],
    "runlist_lcn_over_max_cluster": [r"runs-(frag|sparse|bigfile|dir)-r\d+-lcn-big"],
    "runlist_mapping_pair_corrupted": [r"attr-(frag|sparse|bigfile|dir)-mpoff-\w+|runs-(frag|bigfile)-r\d+-header-zero"],
    "same_name_entries_in_orphaned_file": ["@samename"],
    "usb_unplug_test": ["tornrec", "tornindx", "tornrec"],
}
NAMES = sorted(CLASSES)


# --- the damages no other kind makes -------------------------------------------

def drop_attr(v, n, atype, name=""):
    """Remove attribute ATYPE NAME from record N, the ones after it moved
    down (a record rewritten without it)."""
    def fn(r):
        off = v.attr(n, atype, name)
        ln, = struct.unpack_from("<I", r, off + 4)
        used, = struct.unpack_from("<I", r, 0x18)
        r[off:used - ln] = r[off + ln:used]
        r[used - ln:used] = bytes(ln)
        struct.pack_into("<I", r, 0x18, used - ln)
    v.edit(n, fn)


def user_file(v, rnd):
    return v.ino(rnd.choice(["links/small", "frag/f1", "xattr/x1", "bigfile", "sparse2"]))


def nofname(v, rnd):
    drop_attr(v, user_file(v, rnd), 0x30)


def noir(v, rnd):
    n = v.ino(rnd.choice(["docs/a/b", "docs/a", "xattr"]))
    drop_attr(v, n, 0x90, "$I30")


def nr_sizes(v, n, atype, name, fn):
    def edit(r):
        off = v.attr(n, atype, name)
        al, ds, ins = struct.unpack_from("<qqq", r, off + 0x28)
        struct.pack_into("<qqq", r, off + 0x28, al, *fn(al, ds, ins))
    v.edit(n, edit)


def databig(v, rnd):
    n = v.ino(rnd.choice(["frag/f1", "bigfile", "sparse2"]))
    nr_sizes(v, n, 0x80, "", lambda al, ds, ins: (al + rnd.randrange(1, 4) * v.g.cs,) * 2)


def iabig(v, rnd):
    n, _ = v.holder(v.ino("big"), 0xA0, "$I30")
    nr_sizes(v, n, 0xA0, "$I30", lambda al, ds, ins: (al + v.g.ibs,) * 2)


def datasmall(v, rnd):
    n = v.ino(rnd.choice(["frag/f1", "bigfile"]))
    nr_sizes(v, n, 0x80, "", lambda al, ds, ins: (max(0, ds - rnd.randrange(1, 3) * v.g.cs - 7),) * 2)


def big_entry(v, rnd):
    """(block offset, entry offset) of a seeded entry of big/'s index."""
    blocks = v.index_blocks(v.ino("big"))
    b = rnd.choice(blocks)
    ents = [e for e in P.index_entries(P.unfix(v.img[b:b + v.g.ibs]), 0x18) if not e[4] & 2]
    return b, rnd.choice(ents)[0]


def ixalloc(v, rnd):
    b, e = big_entry(v, rnd)
    v.edit_block(b, lambda r: D.set_int(r, e + 0x10 + 0x28, 8, "plus1"))


def ielen(v, rnd):
    b, e = big_entry(v, rnd)
    v.edit_block(b, lambda r: struct.pack_into("<H", r, e + 8, 0xFF8))


def ibmpsize(v, rnd):
    n, off = v.holder(v.ino("big"), 0xB0, "$I30")
    v.edit(n, lambda r: struct.pack_into("<I", r, off + 0x10, rnd.choice((1, 2, 4))))


def extparent(v, rnd):
    n = v.ino("alist/linked")
    exts = [x for _, _, x in D.al_entries(v, n) if x != n]
    if not exts:
        raise KeyError("no extension record")
    x = rnd.choice(sorted(set(exts)))
    fns = P.file_names(v.rec(x)[1])
    if not fns:
        raise KeyError("no $FILE_NAME in an extension record")
    vo = rnd.choice(fns)[3]
    other = v.ino(rnd.choice(["docs", "frag", "big"]))
    v.edit(x, lambda r: struct.pack_into("<Q", r, vo, other | (v.rec(other)[1][0x10] << 48)))


def samename(v, rnd):
    """Two files of one name in two directories, both orphaned (their
    parent references point at a record not in use)."""
    byname = {}
    for p, e in v.man.items():
        if "/" in p and e.get("t") == "f":
            byname.setdefault(p.rsplit("/", 1)[1], []).append(p)
    pairs = sorted(k for k, ps in byname.items() if len({x.rsplit("/", 1)[0] for x in ps}) >= 2)
    if not pairs:
        raise KeyError("no name in two directories")
    ps = sorted(byname[rnd.choice(pairs)])[:2]
    for p in ps:
        n = v.ino(p)
        v.edit(n, lambda r: struct.pack_into("<Q", r, P.file_names(r)[0][3], 0x7FFFFF | (1 << 48)))


NEEDS = {"extparent": ("alist/linked",)}  # what a bespoke damage needs in the base
BESPOKE = {"nofname": nofname, "noir": noir, "databig": databig, "iabig": iabig,
           "datasmall": datasmall, "ixalloc": ixalloc, "ielen": ielen, "ibmpsize": ibmpsize,
           "extparent": extparent, "samename": samename}


# --- cases -------------------------------------------------------------------

def components(v, base, cls, seed, names=None):
    """The components of case g-BASE-CLASS-SEED: targeted damage names
    (t-...), adverse ids (a-...) or bespoke ones (@name); None when one
    of them has nothing to hit on BASE."""
    names = names or [n for n, _ in D.targeted(v)]
    rnd = random.Random("use-%s-%s-%d" % (base, cls, seed))
    out = []
    for c in CLASSES[cls]:
        if c.startswith("@"):
            if not all(x in v.man for x in NEEDS.get(c[1:], ())):
                return None
            out.append("%s:%d" % (c, rnd.randrange(10 ** 6)))
        elif c in AD.SUBKINDS:
            out.append("a-%s-%s-%d" % (base, c, rnd.randrange(10 ** 6)))
        else:
            hit = sorted(set(n for n in names if re.fullmatch(c, n)) - {x[len(base) + 3:] for x in out})
            if not hit:
                return None
            out.append("t-%s-%s" % (base, rnd.choice(hit)))
    return out


def apply_one(v, cid, tdict):
    if cid.startswith("@"):
        name, seed = cid[1:].split(":")
        BESPOKE[name](v, random.Random(int(seed)))
    elif cid.startswith("t-"):
        tdict[cid.split("-", 2)[2]](v)
    else:
        AD.apply(v, cid.split("-", 2)[2])


def apply(img, man, base, rest):
    """Damage IMG (a bytearray of the base) in place for case
    g-BASE-REST (REST = CLASS-SEED); return the components."""
    cls, seed = rest.rsplit("-", 1)
    pristine = bytes(img)
    v = D.Vol(bytearray(pristine), man)
    tdict = dict(D.targeted(v))
    comps = components(v, base, cls, int(seed))
    if comps is None:
        raise KeyError("class %s has nothing to hit on %s" % (cls, base))
    for cid in comps:
        v = D.Vol(bytearray(pristine), man)
        apply_one(v, cid, tdict)
        for o in range(0, len(pristine), 4096):
            a, b = pristine[o:o + 4096], v.img[o:o + 4096]
            if a != b:
                for i in range(len(a)):
                    if a[i] != b[i]:
                        img[o + i] = b[i]
    return comps


def case_ids(v, base, seed, per_class=1):
    """PER_CLASS cases of every class that can be made on BASE (volume V)."""
    out, names = [], [n for n, _ in D.targeted(v)]
    for cls in NAMES:
        for i in range(per_class):
            s = seed * 100 + i
            try:
                if components(v, base, cls, s, names) is not None:
                    out.append("g-%s-%s-%d" % (base, cls, s))
            except KeyError:
                pass
    return out
