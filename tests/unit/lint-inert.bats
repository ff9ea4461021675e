#!/usr/bin/env bats
# tests/lib/lint-inert: every check in the test suite can fail.  bats runs
# tests under set -e, which ignores `! cmd`, all but the last command of
# `a && b`, and anything followed by `|| true`, unless it ends the test.
load ../lib/common

LINT=$FSFORGE_TOP/tests/lib/lint-inert

setup() { cd_tmp; }

all_test_files() {
	find "$FSFORGE_TOP/tests" \( -name '*.bats' -o -name '*.bash' \) -type f | LC_ALL=C sort
}

@test "no test file of the tree has an inert assertion" {
	mapfile -t files < <(all_test_files)
	[ "${#files[@]}" -gt 10 ]
	run "$LINT" "${files[@]}"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "each kind planted in a scratch test file is found, on its line" {
	cat > t.bats <<'EOF'
#!/usr/bin/env bats
%test "planted" {
	run true
	! grep -q x /dev/null
	[ "$status" -eq 0 ] && [ -n "$output" ]
	cp a b && chmod 600 b
	[ -e nowhere ] || true
	grep -q x /dev/null || :
	[ "$rc" -eq 1 ] && grep -q REBUILT a.log
	[ "$status" -eq 0 ]
}

helper() {
	! test -e /nonexistent
	echo done
}
EOF
	sed -i 's/^%test/@test/' t.bats	# (bats itself would take them as tests)
	run "$LINT" t.bats
	echo "$output"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 7 ]
	[[ ${lines[0]} == "t.bats:4: negated: "* ]]
	[[ ${lines[1]} == "t.bats:5: and-list: "* ]]
	[[ ${lines[2]} == "t.bats:6: and-list: "* ]]
	[[ ${lines[3]} == "t.bats:7: or-true: "* ]]
	[[ ${lines[4]} == "t.bats:8: or-true: "* ]]
	[[ ${lines[5]} == "t.bats:9: and-list: "* ]]
	[[ ${lines[6]} == "t.bats:14: negated: "* ]]
}

@test "checks that can fail are not reported" {
	cat > ok.bats <<'EOF'
#!/usr/bin/env bats
setup() { cd "$BATS_TEST_TMPDIR" || return 1; }
teardown() { if mountpoint -q mnt; then umount mnt; fi; }

%test "fine" {
	run ! grep -q x /dev/null
	! grep -q x /dev/null || false
	[ -e a ] && [ -e b ] || { echo missing; false; }
	[ "$status" -eq 0 ] || [[ $output == *unmounted* ]]
	rc=0; false || rc=$?
	if ! grep -q x /dev/null; then echo absent; fi
	while ! true; do sleep 1; done
	for f in a b; do
		[ "$f" = a ] && continue
		[ -n "$f" ] || break
	done
	python3 - <<'PY'
! this && is || true python, not shell
PY
	cmd="a && b"
	mountpoint -q mnt 2>/dev/null && umount mnt
	cmp -s a.img b.img && die "the images should differ"
	grep -v '^#' known | sed 's/^/# /' >&3 || true
	losetup -d /dev/loop9 2>/dev/null || true
	echo "! not a command" && true || false
	[ 1 -eq 1 ] && [ 2 -eq 2 ]
}

%test "last statement: its status is the test's" {
	! grep -q x /dev/null
}
EOF
	sed -i 's/^%test/@test/' ok.bats
	run "$LINT" ok.bats
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "an inert check planted in a scratch copy of every test file of the tree is found" {
	n=0
	while IFS= read -r f; do
		# after the first line of the first @test body
		line=$(grep -n '^@test .*{$' "$f" | head -1 | cut -d: -f1)
		[ -n "$line" ] || continue
		copy=$BATS_TEST_TMPDIR/$(basename "$f")
		sed "${line}a\\	[ 1 -eq 2 ] \\&\\& [ 3 -eq 3 ]" "$f" > "$copy"
		run "$LINT" "$copy"
		[ "$status" -eq 1 ] || die "$f: planted line not found: $output"
		[[ $output == *"$copy:$((line + 1)): and-list"* ]] || die "$f: $output"
		n=$((n + 1))
	done < <(all_test_files)
	[ "$n" -gt 10 ]
}

@test "usage: no file is an error (2)" {
	run "$LINT"
	[ "$status" -eq 2 ]
}
