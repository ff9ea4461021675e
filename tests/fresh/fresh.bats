#!/usr/bin/env bats
# The fresh tier: a never-seen Debian 12 machine.  tests/fresh/run makes a
# bookworm minbase root with debootstrap (classic one-line sources.list),
# clones the committed HEAD into it and runs tests/fresh/in-root there:
# the README's first command (scripts/demo: install-deps, the build, the
# EROFS demo), the unit tier, one host-tier file (tests/erofs/safety.bats),
# tests/kernel/setup --print-uri on the classic sources, and one QEMU boot
# of the kernel tier (the five tests of tests/kernel/harness.bats that share
# its busybox boot).  A package missing from scripts/install-deps fails here
# whatever the developer's machine has.
#
# The kernel test boots from the host's kernel-tier cache, bind-mounted
# read-only (tests/fresh/run --kernel-cache): fetching the sid kernel and
# building the initramfs and sid tree again inside the root would add a
# second debootstrap (minutes) to prove nothing the kernel tier does not;
# what the root proves is that its install-deps brings QEMU and what
# vm-run needs, and that the tier runs from a clone.  The harness's boot,
# not tests/kernel/erofs.bats: on the loaded 2-core machine erofs.bats took
# 529 s, the harness's boot 47 s, and the tier's budget in the hour of CI
# is about 12 minutes (already overrun on the loaded machine: README).
#
# One run of the root (setup_file), one test per step.  Cost on the 2-core
# machine (see the README): cold (no ~/.cache/fsforge/fresh-*), all of it
# downloaded, and warm (minbase tarball and apt archives cached).
#
# FSFORGE_FRESH_DROP=PKG takes PKG out of the clone's install-deps: the
# tier must then fail.  Measured with FSFORGE_FRESH_DROP=strace: the host
# step fails in tests/erofs/safety.bats, see the README.
# Inside a fresh root (FSFORGE_FRESH_ROOT=1, set by tests/fresh/run: the
# whole suite run there) the tier is skipped rather than nested.

setup_file() {
	[ "${FSFORGE_FRESH_ROOT:-0}" != 1 ] || return 0
	export FRESH_LOG=$BATS_FILE_TMPDIR/fresh.log
	local drop=()
	[ -z "${FSFORGE_FRESH_DROP:-}" ] || drop=(--drop="$FSFORGE_FRESH_DROP")
	rc=0
	"$BATS_TEST_DIRNAME/run" --kernel-cache "${drop[@]}" -- tests/fresh/in-root \
		>"$FRESH_LOG" 2>&1 3>&- || rc=$?
	echo "$rc" >"$BATS_FILE_TMPDIR/fresh.rc"
}

setup() {
	if [ "${FSFORGE_FRESH_ROOT:-0}" = 1 ]; then
		skip "already inside a fresh root (tests/fresh/run): not nested"
	fi
	L=$BATS_FILE_TMPDIR/fresh.log
}

# show the step's own output when its test fails
step_ok() { # step_ok NAME
	if ! grep -q "^fresh-step $1: ok" "$L"; then
		sed -n "/^=== fresh-step $1:/,/^fresh-step $1:/p" "$L" | tail -n 60
		grep "^fresh" "$L" | tail -n 20
		return 1
	fi
}

@test "fresh root: debootstrap'd bookworm with a classic sources.list, HEAD cloned in it" {
	grep -E "^fresh: (unpacking|cloned|running)" "$L"
	run grep -c -E "^fresh: (unpacking a pristine root|cloned [0-9a-f]+ into|running: tests/fresh/in-root)" "$L"
	[ "$output" = 3 ]
}

@test "fresh root: the README's first command (scripts/demo) ends 'demo OK'" {
	step_ok demo
	grep -q "^demo OK" "$L"
}

@test "fresh root: the unit tier passes (tests/run unit)" {
	step_ok unit
	run sed -n '/^=== fresh-step unit:/,/^fresh-step unit:/s/^\([0-9]*\) passed, 0 failed$/\1/p' "$L"
	[ "$output" -gt 0 ]
}

@test "fresh root: a host-tier file passes (tests/erofs/safety.bats)" {
	step_ok host
}

@test "fresh root: tests/kernel/setup --print-uri reads the classic sources.list" {
	step_ok uri
	grep -E "^sources.list: http.*; setup --print-uri: http" "$L"
}

@test "fresh root: one kernel-tier boot passes (tests/kernel/harness.bats, busybox)" {
	step_ok kernel
}

@test "fresh root: every step passed and the root is gone (no mounts, no loop devices)" {
	grep "^fresh: root ready" "$L"
	# the costs, in the TAP output (tests/run's log)
	grep -E "^fresh: (minbase root cached|root ready)|^fresh-step [a-z]*: " "$L" | sed 's/^/# /' >&3
	[ "$(cat "$BATS_FILE_TMPDIR/fresh.rc")" = 0 ]
	run grep -c " /var/tmp/fsforge-fresh\." /proc/mounts
	[ "$output" = 0 ]
	run bash -c "losetup -l -n -O BACK-FILE | grep -c '^/var/tmp/fsforge-fresh\.'"
	[ "$output" = 0 ]
}
