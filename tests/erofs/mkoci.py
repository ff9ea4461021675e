#!/usr/bin/env python3
"""mkoci.py DIR [VARIANT]: an OCI image layout in DIR, written with
tarfile, gzip, hashlib and json (the zstd layer through the zstd command),
no network: oci-layout, index.json naming an image index (nested) with a
linux/amd64 manifest of three layers and a linux/arm64 manifest of one.

amd64 layers: 0 tar+gzip (a tree with a hard link, a symlink, a device,
an xattr); 1 tar (aufs whiteouts: a file, a directory, an opaque
directory; a replaced file; a new file); 2 tar+zstd (one more file).
Each layer's tar is also left as DIR/../layerN.tar (the digests of the
layer blobs and the amd64 manifest in DIR/../digests), and the layers
applied in order (whiteouts hide what lower layers put there, as the OCI
image spec says) as DIR/../merged.tar, for tests/erofs/tar_manifest.py.

VARIANT: good (default); flat: index.json names the amd64 manifest
directly, with no platform (as skopeo writes); badsize: layer 1's
descriptor gives one byte more than the blob; badtype: layer 1's media
type is tar+bzip2.
"""
import gzip
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile

MT_INDEX = "application/vnd.oci.image.index.v1+json"
MT_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
MT_CONFIG = "application/vnd.oci.image.config.v1+json"
MT_TAR = "application/vnd.oci.image.layer.v1.tar"


def blob(root, data):
    d = hashlib.sha256(data).hexdigest()
    with open(os.path.join(root, "blobs", "sha256", d), "wb") as f:
        f.write(data)
    return "sha256:" + d


def desc(root, mt, data, **extra):
    out = {"mediaType": mt, "digest": blob(root, data), "size": len(data)}
    out.update(extra)
    return out


class Layer:
    def __init__(self):
        self.buf = io.BytesIO()
        self.tf = tarfile.open(fileobj=self.buf, mode="w",
                               format=tarfile.PAX_FORMAT)

    def add(self, name, kind="f", data=b"", mode=0o644, mtime=1600000000,
            uid=0, gid=0, link="", dev=(0, 0), pax=None):
        ti = tarfile.TarInfo(name)
        ti.mode, ti.mtime, ti.uid, ti.gid = mode, mtime, uid, gid
        ti.type = {"f": tarfile.REGTYPE, "d": tarfile.DIRTYPE,
                   "l": tarfile.SYMTYPE, "h": tarfile.LNKTYPE,
                   "c": tarfile.CHRTYPE}[kind]
        if kind in "lh":
            ti.linkname = link
        if kind == "c":
            ti.devmajor, ti.devminor = dev
        if pax:
            ti.pax_headers = pax
        ti.size = len(data) if kind == "f" else 0
        self.tf.addfile(ti, io.BytesIO(data) if kind == "f" else None)

    def bytes(self):
        self.tf.close()
        return self.buf.getvalue()


def amd64_layers():
    l0 = Layer()
    for d in ("etc", "usr", "usr/bin", "var", "var/lib", "var/cache",
              "var/cache/apt", "opq", "opq/sub", "dev"):
        l0.add(d, "d", mode=0o755)
    l0.add("etc/hostname", data=b"lower\n")
    l0.add("etc/passwd", data=b"root:x:0:0::/root:/bin/sh\n" * 40,
           pax={"SCHILY.xattr.user.origin": "layer0"})
    l0.add("usr/bin/tool", data=bytes(range(256)) * 300, mode=0o755,
           uid=1000, gid=1000)
    l0.add("usr/bin/tool-link", "h", link="usr/bin/tool")
    l0.add("usr/bin/sym", "l", link="tool", mode=0o777)
    l0.add("dev/null", "c", mode=0o666, dev=(1, 3))
    l0.add("var/lib/gone.txt", data=b"deleted by layer 1\n")
    l0.add("var/lib/kept.txt", data=b"kept\n")
    l0.add("var/cache/apt/pkgcache.bin", data=b"\0" * 5000 + b"cache")
    l0.add("opq/old", data=b"hidden by the opaque marker\n")
    l0.add("opq/sub/older", data=b"hidden too\n")

    l1 = Layer()
    l1.add("var", "d", mode=0o755)
    l1.add("var/lib", "d", mode=0o755)
    l1.add("var/lib/.wh.gone.txt")
    l1.add("var/.wh.cache")
    l1.add("opq", "d", mode=0o750)
    l1.add("opq/.wh..wh..opq")
    l1.add("opq/new", data=b"the only file of opq now\n")
    l1.add("etc", "d", mode=0o755)
    l1.add("etc/hostname", data=b"upper\n", mtime=1700000000)
    l1.add("usr", "d", mode=0o755)
    l1.add("usr/bin", "d", mode=0o755)
    l1.add("usr/bin/tool2", data=b"#!/bin/sh\necho 2\n", mode=0o755)

    l2 = Layer()
    l2.add("etc", "d", mode=0o755)
    l2.add("etc/motd", data=b"zstd layer\n" * 100)
    return [l0.bytes(), l1.bytes(), l2.bytes()]


def merge(layers):
    """the layers applied in order: (TarInfo, data) kept by path"""
    state = {}

    def norm(n):
        return n.strip("/").removeprefix("./")

    for raw in layers:
        with tarfile.open(fileobj=io.BytesIO(raw)) as tf:
            members = [(m, tf.extractfile(m).read() if m.isfile() else b"")
                       for m in tf]
        lower = dict(state)
        for m, _ in members:
            path = norm(m.name)
            d, _, base = path.rpartition("/")
            pre = d + "/" if d else ""
            if base == ".wh..wh..opq":
                for k in [k for k in lower if k.startswith(pre) and k != d]:
                    state.pop(k, None)
            elif base.startswith(".wh."):
                gone = pre + base[4:]
                for k in [k for k in lower
                          if k == gone or k.startswith(gone + "/")]:
                    state.pop(k, None)
        for m, data in members:
            path = norm(m.name)
            if path.rpartition("/")[2].startswith(".wh."):
                continue
            old = state.get(path)
            if old is not None and not (old[0].isdir() and m.isdir()):
                for k in [k for k in state if k.startswith(path + "/")]:
                    del state[k]
            state.pop(path, None)
            state[path] = (m, data)
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for m, data in state.values():
            tf.addfile(m, io.BytesIO(data) if m.isfile() else None)
    return out.getvalue()


def main():
    root = sys.argv[1]
    variant = sys.argv[2] if len(sys.argv) > 2 else "good"
    os.makedirs(os.path.join(root, "blobs", "sha256"), exist_ok=True)
    with open(os.path.join(root, "oci-layout"), "w") as f:
        json.dump({"imageLayoutVersion": "1.0.0"}, f)
    up = os.path.dirname(os.path.abspath(root))

    raw = amd64_layers()
    for i, r in enumerate(raw):
        with open(os.path.join(up, f"layer{i}.tar"), "wb") as f:
            f.write(r)
    with open(os.path.join(up, "merged.tar"), "wb") as f:
        f.write(merge(raw))
    packed = [gzip.compress(raw[0], mtime=0), raw[1],
              subprocess.run(["zstd", "-q", "-c"], input=raw[2],
                             stdout=subprocess.PIPE, check=True).stdout]
    types = [MT_TAR + "+gzip", MT_TAR, MT_TAR + "+zstd"]
    if variant == "badtype":
        types[1] = MT_TAR + "+bzip2"
    layers = [desc(root, t, p) for t, p in zip(types, packed)]
    if variant == "badsize":
        layers[1]["size"] += 1
    config = json.dumps({"architecture": "amd64", "os": "linux",
                         "rootfs": {"type": "layers", "diff_ids": [
                             "sha256:" + hashlib.sha256(r).hexdigest()
                             for r in raw]}}).encode()
    amd = json.dumps({"schemaVersion": 2, "mediaType": MT_MANIFEST,
                      "config": desc(root, MT_CONFIG, config),
                      "layers": layers}, indent=1).encode()

    arm_layer = Layer()
    arm_layer.add("arch", data=b"arm64\n")
    arm_raw = arm_layer.bytes()
    arm_cfg = json.dumps({"architecture": "arm64", "os": "linux"}).encode()
    arm = json.dumps({"schemaVersion": 2, "mediaType": MT_MANIFEST,
                      "config": desc(root, MT_CONFIG, arm_cfg),
                      "layers": [desc(root, MT_TAR, arm_raw)]}).encode()
    with open(os.path.join(up, "arm64.tar"), "wb") as f:
        f.write(arm_raw)

    with open(os.path.join(up, "digests"), "w") as f:
        for i, l in enumerate(layers):
            f.write(f"layer{i} {l['digest']}\n")
        f.write(f"manifest sha256:{hashlib.sha256(amd).hexdigest()}\n")
    if variant == "flat":
        top = {"schemaVersion": 2, "manifests": [desc(root, MT_MANIFEST, amd)]}
    else:
        # arm64 first: the platform decides, not the order
        nested = json.dumps({"schemaVersion": 2, "mediaType": MT_INDEX,
                             "manifests": [
                                 desc(root, MT_MANIFEST, arm, platform={
                                     "os": "linux", "architecture": "arm64",
                                     "variant": "v8"}),
                                 desc(root, MT_MANIFEST, amd, platform={
                                     "os": "linux",
                                     "architecture": "amd64"})]}).encode()
        top = {"schemaVersion": 2, "mediaType": MT_INDEX, "manifests": [
            desc(root, MT_INDEX, nested, annotations={
                "org.opencontainers.image.ref.name": "latest"})]}
    with open(os.path.join(root, "index.json"), "w") as f:
        json.dump(top, f)


main()
