#!/usr/bin/env bats
# Power cuts under the Linux 7.x ntfs driver, judged by the damage lab
# (tests/ntfs/lab, kind kpowercut; issue 10 proof (a)).  The driver's block
# writes were recorded once with dm-log-writes in QEMU while a workload ran
# (tests/ntfs/lab/kfixture/, remade by `kpowercut.py fixture`); KCUTS cut
# images are made from that log on the host (base + first k writes, the
# next one torn), repaired by fsck.ntfs -a and judged by oracles that are
# not fsck.ntfs: ntfsck -n, ntfs-3g mount + manifest of the durable state
# before the cut, second -a and -n.  Then, in one boot, the Linux driver
# mounts each repaired volume read-write, reads every file, creates and
# deletes one, unmounts, and ntfsck -n must find it clean (kernel walk).
load ../lib/common

LAB=$FSFORGE_TOP/tests/ntfs/lab

setup_file() {
	export FSCK_NTFS=${FSCK_NTFS:-$FSFORGE_BUILDDIR/fsck/fsck.ntfs}
	export OUT=/dev/shm/fsforge-kpowercut-bats.$$
	rm -rf "$OUT"
	mkdir -p "$OUT"
	"$LAB/run-lab" --seed 1 --jobs 2 --out "$OUT" --bases kern4k --kinds kpowercut \
		--kcuts "${KCUTS:-4}" --kwalk "${KCUTS:-4}" \
		> "$OUT/run.log" 2>&1 || echo "run-lab exit $?" >> "$OUT/run.log"
}

teardown_file() {
	rm -rf "$OUT"
}

check() {
	run python3 "$LAB/lab.py" check "$OUT" "$1"
	echo "$output" | sed 's/^/# /' >&3
}

@test "kpowercut: every cut was made from the recording and judged" {
	sed 's/^/# /' "$OUT/table.txt" >&3
	run grep -c -e 'LAB ERROR' -e '^run-lab exit' "$OUT/run.log"
	[ "$output" = 0 ] || { cat "$OUT/run.log"; false; }
	# the control and KCUTS cuts
	n=$(ls "$OUT/results" | wc -l)
	[ "$n" -eq $((${KCUTS:-4} + 1)) ]
}

@test "kpowercut: -n never writes a byte (before or after -a)" {
	check nwrite
	[ "$status" -eq 0 ]
}

@test "kpowercut: no crash, hang or sanitizer report" {
	check crash
	[ "$status" -eq 0 ]
}

@test "kpowercut: exit codes; after -a, -n is clean and a second -a changes no byte" {
	check exit
	[ "$status" -eq 0 ]
	check converge
	[ "$status" -eq 0 ]
}

@test "kpowercut: every file durable before the cut and not written after it survives" {
	check nothing-lost
	[ "$status" -eq 0 ]
}

@test "kpowercut: fsck.ntfs -a never loses a file that ntfsck -a keeps" {
	check keeps
	[ "$status" -ne 77 ] || skip "no ntfsck (sid tree not built)"
	[ "$status" -eq 0 ]
}

@test "kpowercut: the Linux driver walks and writes every repaired volume; ntfsck -n then clean" {
	check kwalk
	[ "$status" -eq 0 ]
	# every cut our -a repaired was walked
	run grep -c '"kwalk"' "$OUT"/results/k-*.json
	[ "$status" -eq 0 ]
}
