#!/usr/bin/env bats
# A compressed file whose runs say one cluster more than its header: the
# hole after a compressed unit's clusters runs one cluster into the next
# unit (the lab's t-rich4k-comp-ctext-r1-len-plus1).  The header (VCNs
# and allocation, one multiple of the compression unit) is right; taking
# the runs instead would shift every unit after the hole by a cluster and
# leave the file unreadable (ntfsck -n then finds its sizes corrupt).
# The repair shortens that hole by the excess: every byte of the file
# back.  Expectations: the file's SHA-256 and runs as ntfs-3g wrote them
# before the damage (runs read by the lab's own parser, not libntfs);
# ntfsck -n (sid) clean.
load ../lib/common
load ntfs_helpers

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
LAB=$FSFORGE_TOP/tests/ntfs/lab

setup() {
	cd_tmp
	need_ntfs3g
	need_sid
	mkdir -p mnt
}
teardown() { mountpoint -q mnt 2>/dev/null && umount mnt; return 0; }

# runs IMG RECORD [RUN]: the runs of RECORD's unnamed $DATA as
# "lcn:length" (lcn "-" for a hole); with RUN, that run's length is made
# one more first (it must be a hole)
runs() {
	python3 - "$LAB" "$@" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import ntfsparse as P
img = bytearray(open(sys.argv[2], "rb").read())
g, n = P.Geometry(img), int(sys.argv[3])
at = g.rec_off(n)
rec = P.unfix(img[at:at + g.rs])
off = [o for o, t, name, nr in P.attrs(rec) if t == 0x80 and name == "" and nr][0]
if len(sys.argv) > 4:
    k = int(sys.argv[4])
    p, lb, ob = P.runlist_fields(rec, off)[k]
    assert ob == 0, "run %d is not a hole" % k
    v = int.from_bytes(rec[p + 1:p + 1 + lb], "little") + 1
    rec[p + 1:p + 1 + lb] = v.to_bytes(lb, "little")
    img[at:at + g.rs] = P.refix(rec)
    open(sys.argv[2], "r+b").write(img)
print(" ".join("%s:%d" % ("-" if l is None else l, n) for l, n in P.runlist(rec, off)))
PY
}

@test "a compressed file's hole one cluster too long: cut back to its unit, the file byte for byte" {
	local rec sum before after
	truncate -s 16M image
	"$MKFS_NTFS" -q -F -c 4096 image
	ntfs-3g -o compression image mnt
	mkdir mnt/packed
	setfattr -h -v 0x00000800 -n system.ntfs_attrib_be mnt/packed
	seq -f "compressible line %g" 12000 > mnt/packed/text
	rec=$(stat -c %i mnt/packed/text)
	sum=$(sha256sum < mnt/packed/text)
	umount mnt
	before=$(runs image "$rec")
	# compressed units: clusters then a hole to the unit's end, 2+ units
	[[ $before =~ ^[0-9]+:[0-9]+\ -:[0-9]+\ [0-9]+: ]] || die "runs: $before"
	runs image "$rec" 1 >/dev/null
	after=$(sha256sum < image)
	run "$FSCK" -n image
	[ "$status" -eq 4 ] || die "-n: exit $status: $output"
	[[ $output == *"MFT record $rec: attribute 0x80: "*"the hole of run 1 runs 1 cluster(s) past its compression unit"* ]] || die "$output"
	[ "$(sha256sum < image)" = "$after" ] || die "-n wrote"
	run "$FSCK" -a image
	[ "$status" -eq 1 ] || die "-a: exit $status: $output"
	[[ $output == *"1 found, 1 fixed, 0 left"* ]] || die "$output"
	[ "$(runs image "$rec")" = "$before" ] || die "runs after -a: $(runs image "$rec"), before: $before"
	repair_converged "$FSCK" image -a
	ntfs-3g -o ro image mnt
	[ "$(sha256sum < mnt/packed/text)" = "$sum" ] || die "the file's content changed"
	umount mnt
}
