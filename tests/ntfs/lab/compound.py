"""Compound damage: two or three damages of different kinds or targets on
one volume, as a disk that has been failing for a while, or a power cut on
a volume that already had a problem, leaves it.  A case `m-BASE-SEED` is
seeded and reproducible: SEED picks 2-3 distinct families (below), then
one damage of each, from the lists the other kinds make for BASE:

  indx      a targeted INDX block damage (`t-BASE-indx-*`)
  iroot     a targeted `$INDEX_ROOT` or index `$BITMAP` damage
  rec       a targeted user record header or attribute damage
            (`t-BASE-rec-*`, `t-BASE-attr-*` of user files)
  runs      a user file's runlist damaged (`t-BASE-runs-*` of user files,
            not the cross-link)
  crosslink a run cross-linked into another file
  fname     a `$FILE_NAME` damaged (parent, self, sequence, name, cycle)
  bitmap    `$Bitmap` or the `$MFT` bitmap damaged
  alist     an attribute list entry or extension record (rich bases)
  rich      compression, DOS names, reparse points, object ids, `$Secure`,
            EAs (rich bases)
  tornrec, tornindx, misrec, misindx   an adverse write (adverse.py)
  random    the random kind's 1-8 byte changes
  sectors   the sectors kind's run of remapped sectors

Boot sectors and system records 0-11 are left out: their damage alone
decides most cases (lab README, "Measured").  Each damage is made on its
own copy of the base, and the bytes it changed are laid over the image in
order (a later damage wins where two overlap), so no damage is computed
from a volume another one already broke.  The reference is the base, as
for targeted damage."""
import random

import damages as D
import adverse as AD

FAMILIES = ("indx", "iroot", "rec", "runs", "crosslink", "fname", "bitmap", "alist", "rich",
            "tornrec", "tornindx", "misrec", "misindx", "random", "sectors")
RICH = ("comp-", "dos-", "rp-", "oid-", "sec-", "ea-")
USER = ("small", "frag", "dir", "hardlink", "xattr", "bigfile", "sparse")


def family(name):
    """The family of a targeted case NAME, or None (left out)."""
    head, _, rest = name.partition("-")
    who = rest.split("-")[0]
    if head == "indx":
        return "indx"
    if head in ("iroot", "ibitmap"):
        return "iroot"
    if head == "rec" or head == "attr" and who in USER:
        return "rec"
    if head == "runs" and who in USER:
        return "crosslink" if name.endswith("-crosslink") else "runs"
    if head == "fname":
        return "fname"
    if head in ("bitmap", "mftbitmap"):
        return "bitmap"
    if head == "alist":
        return "alist"
    if name.startswith(RICH):
        return "rich"
    return None


def components(v, base, seed):
    """The damages of case m-BASE-SEED on the base volume V: a list of
    lab case ids (t-/a-/r-/s-) of BASE."""
    names = {}
    for n, _ in D.targeted(v):
        f = family(n)
        if f:
            names.setdefault(f, []).append(n)
    fams = [f for f in FAMILIES if f in names or f in AD.SUBKINDS or f in ("random", "sectors")]
    rnd = random.Random("compound-%s-%d" % (base, seed))
    out = []
    for f in rnd.sample(fams, rnd.choice((2, 2, 3))):
        if f in names:
            out.append("t-%s-%s" % (base, rnd.choice(names[f])))
        elif f in AD.SUBKINDS:
            out.append("a-%s-%s-%d" % (base, f, rnd.randrange(10 ** 6)))
        else:
            out.append("%s-%s-%d" % (f[0], base, rnd.randrange(10 ** 6)))
    return out


def apply_one(v, cid):
    kind, _, rest = cid.split("-", 2)
    if kind == "t":
        dict(D.targeted(v))[rest](v)
    elif kind == "a":
        AD.apply(v, rest)
    elif kind == "r":
        D.random_damage(v, int(rest))
    else:
        D.sector_damage(v, int(rest))


def apply(img, man, base, seed):
    """Damage IMG (a bytearray of the base) in place; return the components."""
    pristine = bytes(img)
    comps = components(D.Vol(bytearray(pristine), man), base, seed)
    for cid in comps:
        v = D.Vol(bytearray(pristine), man)
        apply_one(v, cid)
        new = v.img
        # lay the bytes this damage changed over the image (4 KiB steps:
        # the images are mostly untouched)
        for o in range(0, len(pristine), 4096):
            a, b = pristine[o:o + 4096], new[o:o + 4096]
            if a != b:
                for i in range(len(a)):
                    if a[i] != b[i]:
                        img[o + i] = b[i]
    return comps


def case_ids(base, seed, count):
    return ["m-%s-%d" % (base, seed * 100000 + i) for i in range(count)]
