#!/usr/bin/env bats
# A volume Windows left hibernated (Fast Startup): the root's hiberfil.sys
# starts with "hibr" (any case).  Windows writes its cached metadata back
# on resume, so fsck.ntfs -a/-p/-y check it as -n does and write nothing
# (sha256 before and after), exit 0 when it is clean and 4 when damage is
# left, and say why; a hiberfil.sys whose header is used up ("wake",
# zeroed) or too short to hold one is no hibernation and is repaired as
# usual.  Independent oracle: ntfs-3g refuses a read-write mount of the
# volumes whose header is "hibr" and mounts the others.
load ../lib/common

FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
source "$FSFORGE_TOP/tests/ntfs/ntfs_helpers.bash"
PATCH=$FSFORGE_TOP/tests/ntfs/ntfs_patch.py

setup() { cd_tmp; need_ntfs3g; }
teardown() { umount_all; }

MSG="Windows is hibernated (Fast Startup"

# v.img with a root hiberfil.sys of HEAD followed by PAD zero bytes (a few
# bytes stay resident, 4096 do not) and a file "victim"; DAMAGE=1 removes
# victim's entry from the root index (an orphan fsck.ntfs -a reconnects)
mkvol() {
	local head=$1 pad=$2 m
	"$MKFS_NTFS" -q -F v.img 32768 > /dev/null
	m=$(mount_ntfs3g v.img)
	{ printf '%s' "$head"; head -c "$pad" /dev/zero; } > "$m/hiberfil.sys"
	echo victim > "$m/victim"
	HIBREC=$(stat -c %i "$m/hiberfil.sys")	# its MFT record (ntfs-3g)
	umount "$m"
	if [ "${DAMAGE:-0}" = 1 ]; then python3 "$PATCH" v.img rmentry 5 victim; fi
}

# ntfs-3g -o rw on a copy of v.img: 0 when it is mounted read-write; 1
# when the mount fails or ntfs-3g falls back to read-only (2022.10.3 does,
# exit 0)
ntfs3g_rw() {
	local m opts
	m=$(mktemp -d "$BATS_TEST_TMPDIR/mnt.XXXXXX")
	cp --sparse=always v.img w.img
	ntfs-3g -o rw w.img "$m" 2>&1 || return 1
	opts=$(findmnt -n -o OPTIONS "$m")
	umount "$m"
	[[ ,$opts, == *,rw,* ]]
}

# fsck.ntfs MODE changes no byte, exits WANT and names the hibernation
refused() {
	local mode=$1 want=$2 before
	before=$(sha256sum < v.img)
	run "$FSCK" "$mode" v.img
	[ "$status" -eq "$want" ] || { echo "$output"; die "$mode: exit $status, not $want"; }
	[[ $output == *"v.img: $MSG"* ]] || { echo "$output"; die "$mode: no message"; }
	[ "$(sha256sum < v.img)" = "$before" ] || die "$mode wrote"
}

@test "hibernated ('hibr', non-resident), clean: -a, -p, -y write nothing and exit 0" {
	mkvol hibr 4092
	run ntfs3g_rw
	[ "$status" -ne 0 ] || die "ntfs-3g mounted it read-write"
	[[ $output == *hibernated* ]]
	refused -a 0
	refused -p 0
	refused -y 0
	run "$FSCK" -n v.img
	[ "$status" -eq 0 ]
	[[ $output == *"$MSG"*"a repair would write nothing"* ]]
}

@test "hibernated ('hibr', non-resident), damaged: -a and -y leave it, exit 4, write nothing" {
	DAMAGE=1 mkvol hibr 4092
	# the damage is real for an independent checker (ntfsprogs-plus'
	# ntfsck, which does not look for hibernation: its -a repairs it)
	run sid_ntfsck v.img
	[ "$status" -ne 0 ] || die "ntfsck -n finds no damage"
	refused -a 4
	refused -y 4
	run "$FSCK" -a -z v.undo v.img
	[ "$status" -eq 4 ]
	[[ $output == *"no undo file v.undo"* ]]
}

@test "hibernated ('HIBR', Windows 8 and later), non-resident and resident: -a writes nothing" {
	mkvol HIBR 4092
	run ntfs3g_rw
	[ "$status" -ne 0 ] || die "ntfs-3g mounted it read-write"
	refused -a 0
	DAMAGE=1 mkvol HIBR 60
	run ntfs3g_rw
	[ "$status" -ne 0 ] || die "ntfs-3g mounted it read-write"
	refused -a 4
	refused -y 4
}

@test "hibernated ('hibr' in a 4-byte resident file), damaged: -a exits 4, writes nothing" {
	DAMAGE=1 mkvol hibr 0
	refused -a 4
	run ntfs3g_rw
	[ "$status" -ne 0 ] || die "ntfs-3g mounted it read-write"
}

@test "header used up ('wake', zeroed): not hibernated, damage repaired as usual" {
	for head in wake WAKE ''; do
		DAMAGE=1 mkvol "$head" $((4096 - ${#head}))
		run ntfs3g_rw
		[ "$status" -eq 0 ] || die "'$head': ntfs-3g refused a read-write mount: $output"
		run "$FSCK" -a v.img
		[ "$status" -eq 1 ] || { echo "$output"; die "'$head': -a exit $status"; }
		[[ $output != *"$MSG"* ]] || die "'$head': called hibernated"
	done
	repair_converged "$FSCK" v.img -a
}

# ntfs-3g also refuses any hiberfil.sys shorter than 4096 bytes (its
# "hibernated non-system partition"); no image fits in 2 bytes, and a
# refusal no shutdown of Windows clears would leave the volume unrepairable
@test "hiberfil.sys too short for a header: not hibernated, repaired" {
	DAMAGE=1 mkvol hi 0
	run "$FSCK" -a v.img
	[ "$status" -eq 1 ] || { echo "$output"; die "-a exit $status"; }
	[[ $output != *"$MSG"* ]]
	repair_converged "$FSCK" v.img -a
}

# Byte offset of MFT record $2 of image $1 ($MFTMirr's copy with $3=mirr),
# from the boot sector (the fresh volume's $MFT is one run)
rec_off() {
	python3 - "$@" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read(512)
bps, = struct.unpack_from("<H", b, 11)
cs = bps * b[13]
mft, mirr = struct.unpack_from("<qq", b, 0x30)
c = struct.unpack_from("<b", b, 0x40)[0]
rs = cs * c if c > 0 else 1 << -c
lcn = mirr if len(sys.argv) > 3 else mft
print(lcn * cs + int(sys.argv[2]) * rs)
PY
}

# Tear record $1 of v.img: its first sector's update sequence slot (bytes
# 510-511) no longer holds the record's update sequence number, as after a
# write interrupted between sectors.  ntfsck -n (independent) sees it: it
# fails, or (the root's record) says so and exits 0 anyway
tear() {
	local off
	off=$(rec_off v.img "$1")
	printf '\x5a\xa5' | dd of=v.img bs=1 seek=$((off + 510)) conv=notrunc status=none
}

@test "hibernated, a torn record on the probe's way (\$MFT's 0, the root, hiberfil.sys's): -a and -y write nothing" {
	for r in 0 5 hib; do
		mkvol hibr 4092
		[ "$r" = hib ] && r=$HIBREC
		tear "$r"
		run sid_ntfsck v.img
		[ "$status" -ne 0 ] || [[ $output == *"Incomplete multi-sector transfer"* ]] ||
			{ echo "$output"; die "record $r: ntfsck -n finds no damage"; }
		refused -a 4
		refused -y 4
		run "$FSCK" -n v.img
		[ "$status" -eq 4 ] || { echo "$output"; die "record $r: -n exit $status"; }
		[[ $output == *"$MSG"* ]] || { echo "$output"; die "record $r: -n no message"; }
	done
}

@test "hibernated, \$MFT's record 0 unreadable (bad magic): its \$MFTMirr copy leads to hiberfil.sys" {
	mkvol HIBR 4092
	printf 'XXXX' | dd of=v.img bs=1 seek="$(rec_off v.img 0)" conv=notrunc status=none
	refused -a 4
	# not hibernated: the same damage is repaired from the mirror
	mkvol WAKE 4092
	printf 'XXXX' | dd of=v.img bs=1 seek="$(rec_off v.img 0)" conv=notrunc status=none
	run "$FSCK" -a v.img
	[ "$status" -eq 1 ] || { echo "$output"; die "-a exit $status"; }
	[[ $output != *"$MSG"* ]]
	repair_converged "$FSCK" v.img -a
}

@test "hibernated, the root's record beyond use (bad magic): hiberfil.sys found by its name, -a writes nothing" {
	mkvol hibr 4092
	printf 'XXXX' | dd of=v.img bs=1 seek="$(rec_off v.img 5)" conv=notrunc status=none
	run sid_ntfsck v.img
	[ "$status" -ne 0 ] || [[ $output == *"Couldn't open the root directory"* ]] ||
		{ echo "$output"; die "ntfsck -n finds no damage"; }
	refused -a 4
	refused -y 4
}

# hiberfil.sys's $DATA moved out of its record into extension records
# its new $ATTRIBUTE_LIST names (tests/ntfs/lab/hostile.py datasplit):
# in one extension record, torn (k=1t), or in two extents in two (a large
# hiberfil.sys is fragmented; k=2).  Before, the probe followed the
# list only to an attribute in one extent, in a record passing its check:
# the fragmented and the torn cases were "not hibernated" and -a wrote.
# ntfs-3g (independent) refuses each read-write.
@test "hibernated, hiberfil.sys's \$DATA in extension records (one, torn; two extents): -a and -y write nothing" {
	local k x1
	for k in 1t 2; do
		DAMAGE=1 mkvol hibr 12284
		read -r x1 _ < <(python3 "$FSFORGE_TOP/tests/ntfs/lab/hostile.py" v.img datasplit "$HIBREC" "${k%t}") ||
			die "$k: datasplit"
		[ "$k" = "${k%t}" ] || tear "$x1"
		run ntfs3g_rw
		[ "$status" -ne 0 ] || die "$k: ntfs-3g mounted it read-write"
		refused -a 4
		refused -y 4
	done
}

# --undo is what the user asked for: done on a hibernated volume, with a
# warning.  The undo file comes from a repair while the header said
# "WAKE"; then the header becomes "hibr" (as Windows' next hibernation
# leaves it), outside the blocks the repair changed.
@test "--undo on a hibernated volume: a warning, and the blocks are put back" {
	local off
	DAMAGE=1 mkvol WAKE 4092
	cp v.img damaged.img
	run "$FSCK" -a -z v.undo v.img
	[ "$status" -eq 1 ] || { echo "$output"; die "-a exit $status"; }
	off=$(grep -oba WAKE v.img | head -1 | cut -d: -f1)
	[ -n "$off" ] || die "no WAKE header"
	printf hibr | dd of=v.img bs=1 seek="$off" conv=notrunc status=none
	printf hibr | dd of=damaged.img bs=1 seek="$off" conv=notrunc status=none
	run "$FSCK" --undo v.undo -n v.img
	[ "$status" -eq 0 ] || { echo "$output"; die "--undo -n exit $status"; }
	[[ $output == *"v.img: $MSG"*"over the blocks --undo puts back"* ]] || { echo "$output"; die "--undo -n: no warning"; }
	run "$FSCK" --undo v.undo v.img
	[ "$status" -eq 0 ] || { echo "$output"; die "--undo exit $status"; }
	[[ $output == *"v.img: $MSG"*"restoring them as asked"* ]] || { echo "$output"; die "--undo: no warning"; }
	cmp v.img damaged.img || die "--undo did not put the damaged volume back"
}
