#!/usr/bin/env bats
# Bad clusters listed in $BadClus:$Bad, as chkdsk /r or a full format
# leave a disk with remapped sectors (tests/ntfs/lab/fielduse.py, kind
# `field`, writes them from the format documentation, independently of
# libntfs).  In free space they are no problem.  Under a user file (a
# chkdsk /r interrupted before its copy) the file gets a copy and $Bad
# keeps them.  Under a system file whose place is fixed ($MFT, $MFTMirr,
# $Boot) fsck.ntfs used to leave the cross-link ("cannot move", exit 4 at
# every boot): the file keeps them and $Bad lists them no longer.  Every
# other system file ($LogFile, the root's index, $Bitmap, $UpCase...) gets
# a copy like a user file and $Bad keeps them.  Oracles: ntfsck -n of the
# sid tree, $Bad's runs read back by ntfsparse, the files' contents
# through ntfs-3g.
load ../lib/common

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
FIELD=$FSFORGE_TOP/tests/ntfs/lab/fielduse.py
source "$FSFORGE_TOP/tests/ntfs/ntfs_helpers.bash"

setup() { cd_tmp; }
teardown() { if mountpoint -q mnt 2>/dev/null; then umount mnt; fi; }

# a volume of our mkfs.ntfs with files in its root (an INDX block) and one
# of several clusters (f1); their digests in sums
volume() {
	truncate -s 32M image
	"$FSFORGE_BUILDDIR/mkfs/mkfs.ntfs" -q -F image
	mkdir -p mnt
	ntfs-3g image mnt
	mkdir mnt/frag
	head -c 200000 /dev/urandom > mnt/frag/f1
	for i in $(seq 1 40); do echo "file $i" > "mnt/file-with-a-long-name-$i"; done
	(cd mnt && find . -type f | sort | xargs sha256sum) > sums
	umount mnt
}

# the clusters $Bad maps, read back by ntfsparse
bad_lcns() {
	python3 - "$1" <<'EOF'
import sys
sys.path.insert(0, __import__("os").environ["FSFORGE_TOP"] + "/tests/ntfs/lab")
import ntfsparse as P
img = open(sys.argv[1], "rb").read()
g = P.Geometry(img)
rec = P.unfix(P.read_record(img, g, 8)[1])
for off, t, name, nr in P.attrs(rec):
    if t == 0x80 and name == "$Bad":
        print(" ".join("%d+%d" % r for r in P.runlist(rec, off) if r[0] is not None))
EOF
}

# the first cluster of each system file named (LOGFILE, BITMAP, UPCASE,
# ROOT for its first INDX block, MFT2 for $MFT's second cluster), by
# fielduse.py's reading of the format; one a line
sys_lcns() {
	python3 - "$@" <<'EOF'
import os, sys
sys.path.insert(0, os.environ["FSFORGE_TOP"] + "/tests/ntfs/lab")
import damages as D
import fielduse as F
v = D.Vol(bytearray(open("image", "rb").read()), {})
for name in sys.argv[1:]:
    if name == "ROOT":
        print(F._block_lcn(v, F.ROOT))
    elif name == "MFT2":
        print(v.g.mft_runs[0][0] + 1)
    else:
        print(F._runs(v, {"LOGFILE": 2, "BITMAP": 6, "UPCASE": 10}[name])[0][0])
EOF
}

# "L+1 L+1 ..." for the clusters given, in order
runs_of() {
	printf '%s\n' "$@" | sort -n | sed 's/$/+1/' | paste -sd' '
}

files_intact() {
	ntfs-3g -o ro image mnt
	(cd mnt && sha256sum -c --quiet ../sums)
	local rc=$?
	umount mnt
	return $rc
}

@test "badclus: bad clusters in free space are no problem; -a writes nothing" {
	volume
	python3 "$FIELD" image badfree
	run "$FSCK" -n image
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	sum=$(sha256sum < image)
	run "$FSCK" -a image
	[ "$status" -eq 0 ]
	[ "$(sha256sum < image)" = "$sum" ]
	need_sid
	run sid_ntfsck image
	[ "$status" -eq 0 ]
}

@test "badclus: a bad cluster under \$MFTMirr: -n names it and writes nothing; -a unlists it (exit 1), the mirror stays" {
	volume
	mirr=$(python3 "$FIELD" image badmirr | sed 's/.* //')
	[ "$(bad_lcns image)" = "$mirr+1" ]
	sum=$(sha256sum < image)
	run "$FSCK" -n image
	[ "$status" -eq 4 ]
	[[ "$output" == *"\$Bad lists 1 clusters ($mirr-$mirr) that system files hold (the first: file MFT record 1 (/\$MFTMirr))"* ]]
	[ "$(sha256sum < image)" = "$sum" ]
	run "$FSCK" -a image
	[ "$status" -eq 1 ] || { echo "$output"; false; }
	[ "$(bad_lcns image)" = "" ]
	need_sid
	repair_converged "$FSCK" image -a
	files_intact
}

@test "badclus: bad clusters under \$MFT, the root's index and \$LogFile: \$MFT's unlisted, the others copied and kept in \$Bad, every file kept" {
	local mft root log
	volume
	read -r mft root log <<< "$(sys_lcns MFT2 ROOT LOGFILE | paste -sd' ')"
	python3 "$FIELD" image bad "$mft,$root,$log"
	run "$FSCK" -a image
	[ "$status" -eq 1 ] || { echo "$output"; false; }
	[[ "$output" == *"\$Bad lists 1 clusters ($mft-$mft) that system files hold (the first: file MFT record 0 (/\$MFT))"* ]]
	[[ "$output" == *"(/\$LogFile): attribute 0x80 shares 1 clusters ($log-$log) with file MFT record 8 (/\$BadClus); it gets a copy"* ]]
	[[ "$output" == *"MFT record 5 (/): attribute 0xa0 shares 1 clusters ($root-$root) with file MFT record 8 (/\$BadClus); it gets a copy"* ]]
	[ "$(bad_lcns image)" = "$(runs_of "$root" "$log")" ]
	need_sid
	repair_converged "$FSCK" image -a
	files_intact
}

# The second reader's case: $LogFile, $Bitmap and $UpCase each on a
# cluster $Bad lists.  $LogFile and $Bitmap (records below $BadClus's)
# were left on them and the clusters unlisted; now all three get copies
# and $Bad keeps all three.
@test "badclus: bad clusters under \$LogFile, \$Bitmap and \$UpCase: each file copied, \$Bad keeps all three" {
	local log bmp up
	volume
	read -r log bmp up <<< "$(sys_lcns LOGFILE BITMAP UPCASE | paste -sd' ')"
	python3 "$FIELD" image bad "$log,$bmp,$up"
	run "$FSCK" -a image
	[ "$status" -eq 1 ] || { echo "$output"; false; }
	[[ "$output" != *"no longer listed"* ]]
	for f in LogFile Bitmap UpCase; do
		[[ "$output" == *"(/\$$f): attribute 0x80 shares 1 clusters"*"with file MFT record 8 (/\$BadClus); it gets a copy"* ]] ||
			{ echo "$output"; false; }
	done
	[ "$(bad_lcns image)" = "$(runs_of "$log" "$bmp" "$up")" ]
	need_sid
	repair_converged "$FSCK" image -a
	files_intact
}

@test "badclus: a bad cluster inside a file: the file gets a copy, \$Bad keeps it" {
	volume
	lcn=$(python3 - <<'EOF'
import os, sys
sys.path.insert(0, os.environ["FSFORGE_TOP"] + "/tests/ntfs/lab")
import ntfsparse as P
img = open("image", "rb").read()
g = P.Geometry(img)
n = P.named_record(img, g, "f1")
rec = P.unfix(P.read_record(img, g, n)[1])
for off, t, name, nr in P.attrs(rec):
    if t == 0x80 and not name and nr:
        lcn, ln = P.runlist(rec, off)[0]
        print(lcn + ln // 2)
EOF
)
	python3 "$FIELD" image bad "$lcn"
	run "$FSCK" -a image
	[ "$status" -eq 1 ] || { echo "$output"; false; }
	[[ "$output" == *"shares 1 clusters ($lcn-$lcn) with file MFT record 8 (/\$BadClus); it gets a copy"* ]]
	[ "$(bad_lcns image)" = "$lcn+1" ]
	need_sid
	repair_converged "$FSCK" image -a
	files_intact
}
