#!/usr/bin/env python3
"""fsck.ntfs -a killed during its own repair, then run again (a power
loss or a reset while the boot-time check repairs).

  interrupt.py --base DIR --out DIR [--points N] [--seed S] CASE ...

CASE is a lab case id of the base (t-/a-/r-/o-... as in lab.py), or two
joined by `+` (both damages on one image, the second applied to the
first's result: a power cut and a torn INDX block, a stale block and a
misdirected record).  For each case: fsck.ntfs -a on a copy, its
pwrite(2)s counted (strace), its survivors through ntfs-3g (the
expectation: an uninterrupted repair); then, for every write number K
from 2 (or N seeded ones when there are more than N+1), fsck.ntfs -a on a fresh copy is killed by SIGKILL as it enters its
K-th pwrite (strace -e inject=pwrite64:signal=KILL:when=K: the first
K-1 writes landed, the K-th and the rest not; deterministic), and
fsck.ntfs -a runs again.  Judged: the second run exits 0/1 with no
crash/hang, -n is clean after it, a third -a changes nothing, ntfsck -n
(sid) is clean, and every name the uninterrupted repair kept is kept
(ntfs-3g manifest against the base's).  One JSON line per run, then a
summary.  Root (ntfs-3g mounts)."""
import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import lab as L  # noqa: E402
import damages as D  # noqa: E402
import adverse as AD  # noqa: E402


def damage(cid, bdir, out):
    """The damaged image of CASE (one id or two joined by +)."""
    parts = cid.split("+")
    name = parts[0].split("-")[1]
    bases = {name: bdir}
    cdir, _ = L.materialize(parts[0], bases, out)
    img = cdir + "/damaged"
    for p in parts[1:]:
        kind, b, rest = p.split("-", 2)
        v = D.Vol(bytearray(open(img, "rb").read()), L.load(bdir + "/manifest.json"))
        if kind == "t":
            dict(D.targeted(v))[rest](v)
        elif kind == "a":
            AD.apply(v, rest)
        elif kind == "r":
            D.random_damage(v, int(rest))
        else:
            sys.exit("interrupt: cannot add %s to an image" % p)
        with open(img, "wb") as f:
            f.write(v.img)
    final = os.path.join(out, "cases", cid.replace("/", "_"))
    os.makedirs(final, exist_ok=True)
    shutil.move(img, final + "/damaged")
    if os.path.realpath(cdir) != os.path.realpath(final):
        shutil.rmtree(cdir, ignore_errors=True)
    return final


# LeakSanitizer cannot run under ptrace
TRACED = dict(os.environ, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")


def count_writes(img):
    r = subprocess.run(["strace", "-f", "-qq", "-c", "-e", "trace=pwrite64", "-o", img + ".st",
                        L.FSCK, "-a", img], capture_output=True, timeout=L.TIMEOUT, env=TRACED)
    txt = open(img + ".st").read()
    os.unlink(img + ".st")
    m = re.search(r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?pwrite64", txt, re.M)
    return r.returncode, (r.stdout + r.stderr).decode("utf-8", "replace"), int(m.group(1)) if m else 0


def killed_at(img, k):
    r = subprocess.run(["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=pwrite64",
                        "-e", "inject=pwrite64:signal=KILL:when=%d" % k, L.FSCK, "-a", img],
                       capture_output=True, timeout=L.TIMEOUT, env=TRACED)
    return r.returncode


def judge_after(img, man, cdir, sid):
    o = {}
    rc, txt = L.run([L.FSCK, "-a", img])
    o["a"] = rc
    o["crash"] = rc == L.HANG or rc < 0 or L.sanitizer(txt)
    L.save(cdir + "/last.a.log", txt)
    h = L.digest(img)
    rc, txt = L.run([L.FSCK, "-n", img])
    o["n"] = rc
    o["crash"] |= rc == L.HANG or rc < 0 or L.sanitizer(txt)
    L.save(cdir + "/last.n.log", txt)
    rc, txt = L.run([L.FSCK, "-a", img])
    o["a2_same"] = L.digest(img) == h
    o["crash"] |= rc == L.HANG or rc < 0 or L.sanitizer(txt)
    if sid:
        o["ntfsck_n"], txt = L.ntfsck("-n", img, "int%d" % os.getpid())
        L.save(cdir + "/last.ntfsck.log", txt)
    after = L.mount_manifest(img, cdir + "/mnt")
    o["mounts"] = after is not None
    o["surv"] = L.survivors(man, after or {})
    return o


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--points", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ntfsck", action="store_true", help="also judge ntfsck -a once per case")
    ap.add_argument("cases", nargs="+")
    a = ap.parse_args()
    sid = L.have_sid()
    man = L.load(a.base + "/manifest.json")
    nfiles = len(L.survivors(man, man))
    tot = {"runs": 0, "bad": 0, "lost": 0}
    for cid in a.cases:
        cdir = damage(cid, a.base, a.out)
        dmg = cdir + "/damaged"
        img = cdir + "/work.img"
        shutil.copy(dmg, img)
        rc, txt, w = count_writes(img)
        L.save(cdir + "/full.a.log", txt)
        ref = judge_after(img, man, cdir, sid)
        ref["a_first"], ref["writes"] = rc, w
        keep = set(ref.pop("surv"))
        print(json.dumps({"case": cid, "k": 0, "writes": w, "a_first": rc, "names": len(keep),
                          "of": nfiles, **ref}), flush=True)
        if a.ntfsck and sid:
            shutil.copy(dmg, img)
            L.ntfsck("-a", img, "inta%d" % os.getpid())
            x = L.mount_manifest(img, cdir + "/mnt")
            print(json.dumps({"case": cid, "ntfsck_a_names": len(L.survivors(man, x or {}))}), flush=True)
        rnd = random.Random("%s/%d" % (cid, a.seed))
        # K=1: killed before any write (the damaged image again); from
        # 2 on, K-1 writes landed: every one when there are few
        ks = (list(range(2, w + 1)) if w <= a.points + 1 else
              sorted(set([2, w] + [rnd.randint(2, w) for _ in range(a.points - 2)])))
        for k in ks:
            shutil.copy(dmg, img)
            krc = killed_at(img, k)
            o = judge_after(img, man, cdir, sid)
            lost = sorted(keep - set(o.pop("surv")))
            bad = (o["crash"] or o["a"] not in (0, 1) or o["n"] != 0 or not o["a2_same"]
                   or (sid and o["ntfsck_n"] != 0 and ref.get("ntfsck_n") == 0) or lost)
            tot["runs"] += 1
            tot["bad"] += bool(bad)
            tot["lost"] += len(lost)
            print(json.dumps({"case": cid, "k": k, "killed_rc": krc, **o, "lost": lost[:8],
                              "nlost": len(lost), "bad": bool(bad)}), flush=True)
            if bad:
                shutil.copy(dmg, "%s/damaged" % cdir)
        os.unlink(img)
    print(json.dumps({"summary": tot}), flush=True)


if __name__ == "__main__":
    main()
