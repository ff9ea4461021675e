#!/usr/bin/env bats
# The libntfs parsers under libFuzzer with ASan+UBSan, briefly
# (FSFORGE_FUZZ_SECONDS, default 20 per target).

@test "fuzz: NTFS boot sector, record, attribute and runlist parsers survive" {
	run "$FSFORGE_TOP/scripts/fuzz" "${FSFORGE_FUZZ_SECONDS:-20}"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *number_of_executed_units* ]]
}
