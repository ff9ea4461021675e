#!/usr/bin/env bats
# fsck.ntfs on the damaged-volume cases tests/ntfs/cases/f_*.  Each case
# has image.xz (made by make-cases: a fresh mkfs.ntfs volume, some populated
# through ntfs-3g, then one damage from damage.py) and expect, written by
# hand from the damage, never from fsck.ntfs's output:
#   damage: what was broken (the damage.py function, in words)
#   exit:   fsck.ntfs -a's exit status (fsck(8): 0 nothing to correct, 1 corrected)
#   report: an extended regex (case-insensitive) that some line of -a's
#           report must match: the problem kinds the damage implies
#   files: populated   every file make-cases wrote through ntfs-3g must read
#           back through ntfs-3g with its content, except:
#   gone:   a path that must no longer exist (its record was not in use)
#   moved:  a path whose content must be found at that path or in a file
#           under /lost+found
# and for every case: after -a, fsck.ntfs -n exits 0 and writes nothing, a
# second -a changes no byte, ntfsprogs-plus ntfsck -n (Debian sid) exits 0,
# and ntfs-3g mounts the volume and reads every file.
load ../lib/common

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
source "$FSFORGE_TOP/tests/ntfs/ntfs_helpers.bash"
CASES=$FSFORGE_TOP/tests/ntfs/cases

setup() { cd_tmp; }
teardown() { if mountpoint -q mnt 2>/dev/null; then umount mnt; fi; }

# What make-cases' populate() writes through ntfs-3g: "PATH CONTENT-SHA256"
populated() {
	local f i
	for f in aa bb cc; do echo "/small/$f $(echo "$f" | sha256sum | cut -c1-64)"; done
	for i in $(seq -w 0 299); do echo "/big/f$i $(echo "$i" | sha256sum | cut -c1-64)"; done
	echo "/data $(head -c 10000 /dev/zero | tr '\0' d | sha256sum | cut -c1-64)"
}

# the values of KEY in an expect file, one per line
field() { sed -n "s/^$2: //p" "$1"; }

# check one case; print one line per broken expectation
check_case() {
	local d=$1 name want rc out re before p sum got
	name=$(basename "$d")
	xz -dc "$d/image.xz" > image
	want=$(field "$d/expect" exit)
	[ -n "$want" ] || { echo "$name: expect has no exit: line"; return; }
	[ -n "$(field "$d/expect" damage)" ] || echo "$name: expect has no damage: line"
	rc=0
	out=$("$FSCK" -a image 2>&1) || rc=$?
	[ "$rc" = "$want" ] || echo "$name: -a exited $rc, want $want"
	while IFS= read -r re; do
		grep -Eiq -- "$re" <<<"$out" || echo "$name: -a reported nothing matching /$re/"
	done < <(field "$d/expect" report)
	before=$(sha256sum < image)
	rc=0
	"$FSCK" -n image > /dev/null 2>&1 || rc=$?
	[ "$rc" = 0 ] || echo "$name: -n after -a exited $rc"
	[ "$(sha256sum < image)" = "$before" ] || echo "$name: -n wrote to the image"
	"$FSCK" -a image > /dev/null 2>&1 || true
	[ "$(sha256sum < image)" = "$before" ] || echo "$name: a second -a changed the image"
	sid_ntfsck image > ntfsck.out 2>&1 || echo "$name: ntfsck -n after -a: $(tail -3 ntfsck.out | tr '\n' ' ')"
	mkdir -p mnt
	if ! ntfs-3g -o ro image mnt 2> mount.err; then
		echo "$name: ntfs-3g cannot mount the repaired volume: $(cat mount.err)"
		return
	fi
	ls -lR mnt > /dev/null 2>&1 || echo "$name: ntfs-3g cannot list the volume"
	find mnt -type f -exec cat {} + > /dev/null 2>&1 || echo "$name: ntfs-3g cannot read every file"
	if [ "$(field "$d/expect" files)" = populated ]; then
		# one pass over the mounted volume: "sha256 /path" of every file
		(cd mnt && find . -type f -print0 | xargs -0 -r sha256sum) |
			awk '{ p = substr($0, 67); sub(/^\.\//, "/", p); print $1, p }' > have
		local -A hash=()
		while read -r sum p; do hash[$p]=$sum; done < have
		field "$d/expect" gone > gone
		field "$d/expect" moved > moved
		awk '$2 ~ /^\/lost\+found\// { print $1 }' have > lost
		while read -r p sum; do
			got=${hash[$p]:-}
			if grep -qxF -- "$p" gone; then
				[ -z "$got" ] || echo "$name: $p still exists"
			elif grep -qxF -- "$p" moved; then
				[ "$got" = "$sum" ] || grep -qxF -- "$sum" lost ||
					echo "$name: the content of $p is neither there nor in /lost+found"
			else
				[ "$got" = "$sum" ] || echo "$name: $p is missing or its content changed"
			fi
		done < <(populated)
	fi
	umount mnt
}

@test "f_ cases: what each damage implies is found, repaired as stated, and judged clean by ntfsck and ntfs-3g" {
	need_sid
	local n=0 d errs=
	for d in "$CASES"/f_*/; do
		errs+=$(check_case "${d%/}")
		echo "# $(basename "$d") checked" >&3
		n=$((n + 1))
	done
	echo "$errs"
	[ -z "$errs" ]
	[ "$n" -ge 16 ]
}

@test "f_ cases: every expect file is hand-written: a damage, an exit status and at least one report" {
	local d n=0
	for d in "$CASES"/f_*/; do
		[ -f "$d/expect" ] || die "$d: no expect file"
		[ -n "$(field "$d/expect" damage)" ] || die "$d: no damage: line"
		[[ $(field "$d/expect" exit) =~ ^(0|1)$ ]] || die "$d: exit must be 0 or 1"
		[ -n "$(field "$d/expect" report)" ] || die "$d: no report: line"
		[ ! -e "$d/expect.1" ] || die "$d: a recorded output (expect.1) is back"
		n=$((n + 1))
	done
	[ "$n" -ge 16 ]
}

@test "the f_ runner fails a case whose expectation is wrong" {
	need_sid
	mkdir -p fake/f_x
	cp "$CASES/f_orphans/image.xz" fake/f_x/
	sed -e 's/^exit: 1$/exit: 0/' -e 's/^gone: .*//' "$CASES/f_orphans/expect" > fake/f_x/expect
	echo 'report: no such problem kind' >> fake/f_x/expect
	echo 'gone: /data' >> fake/f_x/expect
	run check_case fake/f_x
	echo "$output"
	[[ $output == *"-a exited 1, want 0"* ]]
	[[ $output == *"/no such problem kind/"* ]]
	[[ $output == *"/data still exists"* ]]
}
