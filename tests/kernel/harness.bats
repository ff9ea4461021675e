#!/usr/bin/env bats
# Tests of the QEMU kernel-tier harness itself (vm-run + setup).
# Five boots in all: one default-mode boot whose results several tests
# inspect, one for the kernel-log check, three for the boot-oops retry.
# The --sid and --systemd modes are checked in boots that other files make
# anyway (erofs_chunked.bats, xfs_healer-systemd.bats: "harness --sid",
# "harness --systemd"), which saves a boot of each here.
# FSFORGE_SKIP_KERNEL=1 skips everything; otherwise a set-up that is missing
# and cannot be built makes the tests fail (vm-run builds it on demand).

KDIR=$BATS_TEST_DIRNAME

skip_if_asked() {
	if [ "${FSFORGE_SKIP_KERNEL:-0}" = 1 ]; then
		skip "FSFORGE_SKIP_KERNEL=1: kernel tier disabled"
	fi
}

# One boot of the busybox initramfs for the basic checks; its exit status,
# console and share are kept for the tests below.
setup_file() {
	[ "${FSFORGE_SKIP_KERNEL:-0}" != 1 ] || return 0
	local d=$BATS_FILE_TMPDIR/basic
	mkdir -p "$d/share"
	truncate -s 48M "$d/disk.img"
	cat >"$d/basic.sh" <<'EOF'
set -u
echo "args=$#:$1:$2" >/host/args.txt
pwd >/host/cwd.txt
cat /proc/filesystems >/host/filesystems.txt
blockdev --getsize64 /dev/vda >/host/vda-size.txt
echo "from-guest $(uname -r)" >/host/roundtrip.txt
cat /host/from-host.txt >/host/echo.txt
exit 3
EOF
	echo "host-payload-$$" >"$d/share/from-host.txt"
	local rc=0
	"$KDIR/vm-run" --share "$d/share" --disk "$d/disk.img" --drivers erofs,xfs,ntfs \
		--timeout 300 "$d/basic.sh" "one arg" "it's \$two" >"$d/out.txt" 2>&1 || rc=$?
	echo "$rc" >"$d/rc"
}

setup() {
	skip_if_asked
	B=$BATS_FILE_TMPDIR/basic
}

@test "a failing script's status (3) is vm-run's status" {
	cat "$B/out.txt"
	[ "$(cat "$B/rc")" = 3 ]
	grep -q 'FSFORGE-RESULT-[0-9a-f]* rc=3' "$B/share/console.log"
}

@test "arguments and cwd reach the guest script intact" {
	[ "$(cat "$B/share/args.txt")" = "args=2:one arg:it's \$two" ]
	[ "$(cat "$B/share/cwd.txt")" = /host ]
}

@test "share round-trip: host file read in guest, guest file read on host" {
	grep -q '^from-guest [0-9]' "$B/share/roundtrip.txt"
	[ "$(cat "$B/share/echo.txt")" = "$(cat "$B/share/from-host.txt")" ]
}

@test "virtio disk is /dev/vda with the right size" {
	[ "$(cat "$B/share/vda-size.txt")" = $((48 * 1024 * 1024)) ]
}

@test "erofs, xfs and ntfs are registered filesystems" {
	for fs in erofs xfs ntfs; do
		grep -qw "$fs" "$B/share/filesystems.txt"
	done
}

@test "dmesg check catches a driver warning (exit 98)" {
	cat >"$BATS_TEST_TMPDIR/warn.sh" <<'EOF'
echo '<4>erofs: test warning' >/dev/kmsg
exit 0
EOF
	run "$KDIR/vm-run" --drivers erofs --timeout 300 "$BATS_TEST_TMPDIR/warn.sh"
	echo "$output"
	[ "$status" = 98 ]
	[[ $output == *"erofs: test warning"* ]]
}

@test "an oops while booting, before the test, boots again; after 3 boots vm-run gives up (97)" {
	cat >"$BATS_TEST_TMPDIR/never.sh" <<'EOF'
echo ran >/host/ran.txt
EOF
	mkdir -p "$BATS_TEST_TMPDIR/share"
	run "$KDIR/vm-run" --share "$BATS_TEST_TMPDIR/share" --append fsforge.fakebootoops \
		--timeout 300 "$BATS_TEST_TMPDIR/never.sh"
	echo "$output"
	[ "$status" = 97 ]
	[ "$(grep -c 'oopsed while booting, before the test ran' <<<"$output")" = 3 ]
	[[ $output == *"fsforge fake boot oops"* ]]
	[[ $output == *"giving up after 3 boots"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/share/ran.txt" ]
}

@test "vm-run: a boot that has not started the test in time is killed and retried, three boots at most" {
	cat >"$BATS_TEST_TMPDIR/never.sh" <<'EOF'
echo ran >/host/ran.txt
EOF
	mkdir -p "$BATS_TEST_TMPDIR/share"
	# no boot reaches the test in 2 s under TCG (about 40 s here)
	FSFORGE_VM_BOOT_TIMEOUT=2 run "$KDIR/vm-run" --share "$BATS_TEST_TMPDIR/share" \
		--timeout 300 "$BATS_TEST_TMPDIR/never.sh"
	echo "$output"
	[ "$status" = 97 ]
	[ "$(grep -c 'had not started the test after 2 s' <<<"$output")" = 3 ]
	[[ $output == *"giving up after 3 boots"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/share/ran.txt" ]
	# every QEMU of the three boots is gone
	run pgrep -f "path=$BATS_TEST_TMPDIR/share,mount_tag=host"
	[ "$status" -eq 1 ]
}
