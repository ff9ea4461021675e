#!/usr/bin/env bats
# The libntfs parsers, liberofs' image reader, tar reader and LZ4 encoder, and the JSON parser under libFuzzer with
# ASan+UBSan, briefly (FSFORGE_FUZZ_SECONDS, default 20 per target; the
# targets run side by side, one per core: scripts/fuzz).

@test "fuzz: NTFS boot sector, record, attribute and runlist parsers, the EROFS image reader, the tar reader, the JSON parser and the LZ4 encoder survive" {
	run "$FSFORGE_TOP/scripts/fuzz" "${FSFORGE_FUZZ_SECONDS:-20}"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *number_of_executed_units* ]]
}

# Whole-program fuzzing of fsck.ntfs on damaged volumes: a populated
# volume (f_index_block_torn's, repaired first) damaged at random in its
# MFT records and INDX blocks, FSFORGE_FSCK_MUTANTS times (default 150).
# On every mutant: -n never writes and never crashes (the sanitizer build
# aborts on any memory error); -a never crashes; when -a says all was
# repaired (exit 0 or 1) the next -n must find nothing and the next -a
# must change no byte.  The seeds are dealt out to one worker per core.

# mutant SEED: those checks on mutant SEED of ../base.img, in the current
# directory; prints "repaired" or "left", or why it failed (status 1)
mutant() {
	local seed=$1 sum rc
	cp ../base.img m.img || return 1
	python3 "$FSFORGE_TOP/tests/fuzz/mutate-ntfs.py" m.img "$seed" || { echo "seed $seed: mutate failed"; return 1; }
	sum=$(sha256sum < m.img)
	rc=0; "$FSCK" -n m.img > n.log 2>&1 || rc=$?
	if [ "$rc" -gt 8 ] || grep -q 'AddressSanitizer\|runtime error' n.log; then
		cat n.log; echo "seed $seed: -n exit $rc"; return 1
	fi
	[ "$(sha256sum < m.img)" = "$sum" ] || { echo "seed $seed: -n wrote"; return 1; }
	rc=0; "$FSCK" -a m.img > a.log 2>&1 || rc=$?
	if grep -q 'AddressSanitizer\|runtime error' a.log; then cat a.log; return 1; fi
	[ "$rc" -le 8 ] || { cat a.log; echo "seed $seed: -a exit $rc"; return 1; }
	if [ "$rc" -le 1 ]; then
		rc=0; "$FSCK" -n m.img > n2.log 2>&1 || rc=$?
		[ "$rc" -eq 0 ] || { cat a.log n2.log; echo "seed $seed: -n after -a exit $rc"; return 1; }
		sum=$(sha256sum < m.img)
		rc=0; "$FSCK" -a m.img > a2.log 2>&1 || rc=$?
		if [ "$rc" -ne 0 ] || [ "$(sha256sum < m.img)" != "$sum" ]; then
			cat a.log a2.log; echo "seed $seed: second -a exit $rc or wrote"; return 1
		fi
		echo repaired
	else
		echo left
	fi
}

@test "fuzz: fsck.ntfs on randomly damaged volumes: no crash, repairs are final" {
	cd "$BATS_TEST_TMPDIR"
	FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
	xz -dc "$FSFORGE_TOP/tests/ntfs/cases/f_index_block_torn/image.xz" > base.img
	"$FSCK" -a -q base.img > /dev/null || true
	"$FSCK" -n base.img
	local n=${FSFORGE_FSCK_MUTANTS:-150} jobs k pids=() failed=0
	jobs=$(nproc)
	for k in $(seq 1 "$jobs"); do
		mkdir "w$k"
		( cd "w$k" && for seed in $(seq "$k" "$jobs" "$n"); do mutant "$seed" || exit 1; done ) > "w$k.log" 2>&1 &
		pids+=($!)
	done
	for k in "${!pids[@]}"; do
		wait "${pids[$k]}" || { failed=1; grep -v '^repaired$\|^left$' "w$((k + 1)).log"; }
	done
	[ "$failed" -eq 0 ]
	repaired=$(cat w*.log | grep -c '^repaired$' || true)
	left=$(cat w*.log | grep -c '^left$' || true)
	echo "$repaired mutants repaired, $left left with errors"
	[ $((repaired + left)) -eq "$n" ]
	[ "$repaired" -gt 0 ]
}
