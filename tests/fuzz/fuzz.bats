#!/usr/bin/env bats
# The libntfs parsers, liberofs' image reader and tar reader, and the JSON parser under libFuzzer with
# ASan+UBSan, briefly (FSFORGE_FUZZ_SECONDS, default 20 per target).

@test "fuzz: NTFS boot sector, record, attribute and runlist parsers, the EROFS image reader, the tar reader and the JSON parser survive" {
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
# must change no byte.
@test "fuzz: fsck.ntfs on randomly damaged volumes: no crash, repairs are final" {
	cd "$BATS_TEST_TMPDIR"
	FSCK=$FSFORGE_BUILDDIR/fsck/fsck.ntfs
	xz -dc "$FSFORGE_TOP/tests/ntfs/cases/f_index_block_torn/image.xz" > base.img
	"$FSCK" -a -q base.img > /dev/null || true
	"$FSCK" -n base.img
	repaired=0 left=0
	for seed in $(seq 1 "${FSFORGE_FSCK_MUTANTS:-150}"); do
		cp base.img m.img
		python3 "$FSFORGE_TOP/tests/fuzz/mutate-ntfs.py" m.img "$seed"
		sum=$(sha256sum < m.img)
		rc=0; "$FSCK" -n m.img > n.log 2>&1 || rc=$?
		[ "$rc" -lt 8 ] || [ "$rc" -eq 8 ] && ! grep -q 'AddressSanitizer\|runtime error' n.log ||
			{ cat n.log; echo "seed $seed: -n exit $rc"; false; }
		[ "$(sha256sum < m.img)" = "$sum" ] || { echo "seed $seed: -n wrote"; false; }
		rc=0; "$FSCK" -a m.img > a.log 2>&1 || rc=$?
		! grep -q 'AddressSanitizer\|runtime error' a.log || { cat a.log; false; }
		[ "$rc" -le 8 ] || { cat a.log; echo "seed $seed: -a exit $rc"; false; }
		if [ "$rc" -le 1 ]; then
			repaired=$((repaired + 1))
			rc=0; "$FSCK" -n m.img > n2.log 2>&1 || rc=$?
			[ "$rc" -eq 0 ] || { cat a.log n2.log; echo "seed $seed: -n after -a exit $rc"; false; }
			sum=$(sha256sum < m.img)
			rc=0; "$FSCK" -a m.img > a2.log 2>&1 || rc=$?
			[ "$rc" -eq 0 ] && [ "$(sha256sum < m.img)" = "$sum" ] ||
				{ cat a.log a2.log; echo "seed $seed: second -a exit $rc or wrote"; false; }
		else
			left=$((left + 1))
		fi
	done
	echo "$repaired mutants repaired, $left left with errors"
	[ "$repaired" -gt 0 ]
}
