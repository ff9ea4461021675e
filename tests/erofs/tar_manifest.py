#!/usr/bin/env python3
"""tar_manifest.py TAR: the manifest (tests/lib/manifest's format) of the
tree a tar archive describes, read with Python's tarfile, an independent
tar reader.  The root is left out (its line starts with a tab).

The tree follows the archive in order: a later entry replaces an earlier
one of the same path (a directory over a directory only takes the new
attributes; anything else drops the old entry and what was under it); a
hard link shares the inode of the entry it names at that point; a missing
parent directory is made 0755 plus the group/other write bits of its
parent, with its parent's owner and time (the root: 0777, owner 0, time
ROOT_MTIME, argument 2, default 0).
"""
import base64
import hashlib
import stat
import sys
import tarfile
import urllib.parse


class Inode:
    def __init__(self, kind, mode, uid, gid, mtime, size=0, data=b"",
                 link="", rdev=None, xattrs=None):
        self.kind, self.mode, self.uid, self.gid = kind, mode, uid, gid
        self.mtime, self.size, self.data, self.link = mtime, size, data, link
        self.rdev, self.xattrs = rdev, xattrs or {}


def mtime_of(m):
    """(seconds, nanoseconds), exact from the pax record when there is one"""
    v = m.pax_headers.get("mtime")
    if v is None:
        return int(m.mtime), 0
    whole, _, frac = v.partition(".")
    sec = int(whole)
    ns = int((frac + "000000000")[:9]) if frac else 0
    if whole.startswith("-") and ns:
        sec, ns = sec - 1, 1000000000 - ns
    return sec, ns


def xattrs_of(m):
    """SCHILY.xattr.NAME=raw (GNU tar, Python) and LIBARCHIVE.xattr.NAME
    with NAME %-encoded and a base64 value (bsdtar)"""
    out = {}
    for k, v in m.pax_headers.items():
        raw = v.encode("utf-8", "surrogateescape") if isinstance(v, str) else v
        if k.startswith("SCHILY.xattr."):
            out[k[len("SCHILY.xattr."):]] = raw
        elif k.startswith("LIBARCHIVE.xattr."):
            name = urllib.parse.unquote(k[len("LIBARCHIVE.xattr."):])
            out[name] = base64.b64decode(raw)
    return out


def main():
    tar = sys.argv[1]
    root_mtime = (int(sys.argv[2]), 0) if len(sys.argv) > 2 else (0, 0)
    root = Inode("d", 0o777, 0, 0, root_mtime)
    tree = {"": root}

    def parent_dir(path):
        if "/" not in path:
            return ""
        par = path.rsplit("/", 1)[0]
        if par not in tree:
            gp = tree[parent_dir(par)]
            tree[par] = Inode("d", 0o755 | (gp.mode & 0o022), gp.uid, gp.gid,
                              gp.mtime)
        return par

    def walk(name, make=True):
        """the path NAME stands for, component by component: a name
        before another component is a directory (made when missing, even
        if a ".." comes next), ".." goes up, never above the root"""
        parts, pending = [], None
        for p in name.split("/"):
            if p in ("", "."):
                continue
            if pending is not None:
                parts.append(pending)
                path = "/".join(parts)
                if path not in tree and make:
                    parent_dir(path)
                    gp = tree["/".join(parts[:-1])]
                    tree[path] = Inode("d", 0o755 | (gp.mode & 0o022),
                                       gp.uid, gp.gid, gp.mtime)
                pending = None
            if p == "..":
                if parts:
                    parts.pop()
            else:
                pending = p
        if pending is not None:
            parts.append(pending)
        return "/".join(parts)

    def drop(path):
        for k in [k for k in tree if k == path or k.startswith(path + "/")]:
            del tree[k]

    with tarfile.open(tar) as tf:
        for m in tf:
            path = walk(m.name)
            old = tree.get(path)
            if m.islnk():
                target = tree[walk(m.linkname, False)]
                if path in tree:
                    drop(path)
                parent_dir(path)
                tree[path] = target
                continue
            kind = ("d" if m.isdir() else "l" if m.issym() else
                    "c" if m.ischr() else "b" if m.isblk() else
                    "p" if m.isfifo() else "f")
            node = Inode(kind, m.mode & 0o7777, m.uid, m.gid, mtime_of(m),
                         xattrs=xattrs_of(m))
            if kind == "f":
                node.data = tf.extractfile(m).read()
                node.size = len(node.data)
            elif kind == "l":
                node.link, node.size = m.linkname, len(m.linkname)
            elif kind in "cb":
                node.rdev = (m.devmajor, m.devminor)
            if path == "":
                root.mode, root.uid, root.gid = node.mode, node.uid, node.gid
                root.mtime, root.xattrs = node.mtime, node.xattrs
                continue
            if old is not None and not (old.kind == "d" and kind == "d"):
                drop(path)
            if old is not None and old.kind == "d" and kind == "d":
                old.mode, old.uid, old.gid = node.mode, node.uid, node.gid
                old.mtime, old.xattrs = node.mtime, node.xattrs
                continue
            parent_dir(path)
            tree[path] = node

    links = {}
    for p, n in tree.items():
        links[id(n)] = links.get(id(n), 0) + 1
    subdirs = {}
    for p, n in tree.items():
        if p and n.kind == "d":
            par = p.rsplit("/", 1)[0] if "/" in p else ""
            subdirs[par] = subdirs.get(par, 0) + 1
    lines = []
    for p, n in tree.items():
        if p == "":
            continue
        nlink = 2 + subdirs.get(p, 0) if n.kind == "d" else links[id(n)]
        mode = "0%o" % n.mode if n.mode else "0"
        size = "-" if n.kind == "d" else str(n.size)
        t = "%d.%09d0" % n.mtime
        lines.append(f"{p}\tmeta\t{n.kind} {mode} {n.uid} {n.gid} {nlink} {t} {size} {n.link}")
        if n.rdev is not None:
            lines.append(f"{p}\trdev\t{n.rdev[0]:x}:{n.rdev[1]:x}")
        if n.kind == "f":
            lines.append(f"{p}\tsha256\t{hashlib.sha256(n.data).hexdigest()}")
        for k, v in n.xattrs.items():
            lines.append(f"{p}\txattr\t{k}=0x{v.hex()}")
    for line in sorted(lines, key=lambda s: s.encode()):
        print(line)


main()
