#!/usr/bin/env bats
# mkfs.erofs -E ztailpacking, fragments, all-fragments, dedupe: the images
# are read by two independent checkers: our fsck.erofs --extract --xattrs
# (the restored tree's manifest must equal the source's) and erofs-utils
# 1.9 fsck.erofs (digests verified, extracted SHA-256 list equal to the
# source's).  Sizes are checked against hand-computed expectations.
load ../lib/common
load erofs_helpers

FSCK_EROFS=$FSFORGE_BUILDDIR/fsck/fsck.erofs

setup_file() {
	export SRC=$BATS_FILE_TMPDIR/src
	"$LIB/mktree" "$SRC"
	mkdir -p "$SRC/z/dup"
	seq 1 150000 > "$SRC/z/numbers"
	head -c 100000 /dev/urandom > "$SRC/z/random"
	{ head -c 30000 /dev/urandom; seq 1 20000; head -c 9000 /dev/zero; } > "$SRC/z/mixed"
	for n in 1 100 4095 4096 4097 5000 8193 65537; do
		yes "line $n of text" | head -c "$n" > "$SRC/z/t$n"
	done
	cp "$FSFORGE_TOP"/liberofs/*.c "$SRC/z/"
	# identical files and identical tails
	cp "$SRC/z/numbers" "$SRC/z/dup/numbers"
	cp "$SRC/z/t5000" "$SRC/z/dup/t5000"
	cp "$SRC/z/t100" "$SRC/z/dup/t100"
	"$LIB/manifest" "$SRC" > "$BATS_FILE_TMPDIR/src.manifest"
	(cd "$SRC" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) > "$BATS_FILE_TMPDIR/src.sha256"
}

setup() { cd_tmp; }
teardown() {
	if [ -n "${SIDTMP:-}" ]; then rm -rf "$SIDTMP"; fi
}

# both checkers on IMG (built with fingerprints)
both_read() {
	local img=$1
	rm -rf x
	run "$FSCK_EROFS" --extract=x --xattrs --xattr-inode-digest "$img"
	[ "$status" -eq 0 ] || die "our fsck.erofs: $output"
	"$LIB/manifest" x --drop-xattr trusted.erofs.fingerprint |
		diff "$BATS_FILE_TMPDIR/src.manifest" - || die "our extraction differs"
	cp "$img" "$SIDTMP/i.img"
	run chroot "$SID_ROOT" fsck.erofs --xattr-inode-digest --extract="$SIDREL/i.x" "$SIDREL/i.img"
	[ "$status" -eq 0 ] || die "erofs-utils fsck.erofs: $output"
	(cd "$SIDTMP/i.x" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) |
		diff "$BATS_FILE_TMPDIR/src.sha256" - || die "erofs-utils' extraction differs"
	rm -rf "$SIDTMP/i.x" "$SIDTMP/i.img"
}

# both fsck.erofs extract IMG (in this directory): s/a and s/b come back
# byte-exact
both_extract_ab() {
	local img=$1
	rm -rf x
	run "$FSCK_EROFS" --extract=x "$img"
	[ "$status" -eq 0 ] || die "our fsck.erofs: $output"
	cmp s/a x/a || die "our fsck: a differs"
	cmp s/b x/b || die "our fsck: b differs"
	cp "$img" "$SIDTMP/$img"
	run chroot "$SID_ROOT" fsck.erofs --extract="$SIDREL/x" "$SIDREL/$img"
	[ "$status" -eq 0 ] || die "erofs-utils fsck.erofs: $output"
	cmp s/a "$SIDTMP/x/a" || die "erofs-utils: a differs"
	cmp s/b "$SIDTMP/x/b" || die "erofs-utils: b differs"
}

@test "-E ztailpacking, fragments, all-fragments, dedupe: both fsck.erofs extract the tree, digests pass, same image for 1 and 2 workers" {
	need_sid_erofs
	u=3f0c3a53-8f1e-4a3b-9d7e-0123456789ab
	for opts in "-zlz4hc -Eztailpacking" "-zlz4hc -C16384 -Efragments,dedupe -Elegacy-compress" \
		    "-zlz4hc -C65536 -Efragments=8k,dedupe" \
		    "-zlz4hc -Eall-fragments" "-zlzma -C65536 -Eztailpacking,dedupe"; do
		# shellcheck disable=SC2086
		run "$MKFS_EROFS" --quiet $opts -T 1700000000 -U $u --workers=1 \
			--xattr-inode-digest=trusted.erofs.fingerprint a.img "$SRC"
		[ "$status" -eq 0 ] || die "mkfs.erofs $opts: $output"
		# shellcheck disable=SC2086
		"$MKFS_EROFS" --quiet $opts -T 1700000000 -U $u --workers=2 \
			--xattr-inode-digest=trusted.erofs.fingerprint b.img "$SRC"
		cmp a.img b.img || die "$opts: 1 and 2 workers differ"
		both_read a.img || die "options $opts"
	done
}

# -z lzma stores a run of incompressible data (256 KiB or more, as fast lz4
# finds it) raw without an lzma attempt: the extent before it ends where
# it starts, compression resumes after it.  In a file and, with
# all-fragments, across files in the packed inode; with big and small
# pclusters.  Random data cannot shrink and 1.4 MB of seq text packs to
# well under a tenth with lzma, so the image holds the random bytes and
# little more.
@test "-z lzma: runs of incompressible data between text, raw: both fsck.erofs extract the tree, same image for 1 and 2 workers, about the random bytes' size" {
	need_sid_erofs
	u=3f0c3a53-8f1e-4a3b-9d7e-0123456789ab
	mkdir -p r/src
	seq 1 100000 | head -c 700000 > r/text
	head -c 1048576 /dev/urandom > r/random
	cat r/text r/random r/text > r/src/run
	head -c 600000 /dev/urandom > r/src/b-random
	cp r/text r/src/c-text
	(cd r/src && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) > r.sha256
	for opts in "-zlzma -C1048576 -Eall-fragments,dedupe,ztailpacking" \
		    "-zlzma -C1048576" "-zlzma -C65536 -Eztailpacking"; do
		# shellcheck disable=SC2086
		run "$MKFS_EROFS" --quiet $opts -T 1700000000 -U $u --workers=1 \
			--xattr-inode-digest=trusted.erofs.fingerprint a.img r/src
		[ "$status" -eq 0 ] || die "mkfs.erofs $opts: $output"
		# shellcheck disable=SC2086
		"$MKFS_EROFS" --quiet $opts -T 1700000000 -U $u --workers=2 \
			--xattr-inode-digest=trusted.erofs.fingerprint b.img r/src
		cmp a.img b.img || die "$opts: 1 and 2 workers differ"
		size=$(stat -c %s a.img)
		[ "$size" -ge $((1048576 + 600000)) ] || die "$opts: $size bytes"
		[ "$size" -le $((1048576 + 600000 + 2100000 / 10 + 65536)) ] || die "$opts: $size bytes"
		rm -rf x
		run "$FSCK_EROFS" --extract=x --xattr-inode-digest a.img
		[ "$status" -eq 0 ] || die "our fsck.erofs: $output"
		(cd x && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) |
			diff r.sha256 - || die "$opts: our extraction differs"
		cp a.img "$SIDTMP/i.img"
		run chroot "$SID_ROOT" fsck.erofs --xattr-inode-digest --extract="$SIDREL/i.x" "$SIDREL/i.img"
		[ "$status" -eq 0 ] || die "erofs-utils fsck.erofs: $output"
		(cd "$SIDTMP/i.x" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) |
			diff r.sha256 - || die "$opts: erofs-utils' extraction differs"
		rm -rf "$SIDTMP/i.x" "$SIDTMP/i.img"
	done
}

@test "erofs-utils 1.9 images with ztailpacking, fragments and dedupe: our fsck.erofs extracts the tree" {
	need_sid_erofs
	cp -a "$SRC" "$SIDTMP/src"
	for opts in "-zlz4hc -Eztailpacking" \
		    "-zlz4hc -C65536 -Eztailpacking,fragments,dedupe -Elegacy-compress"; do
		# shellcheck disable=SC2086
		run chroot "$SID_ROOT" mkfs.erofs --quiet $opts \
			--xattr-inode-digest=trusted.erofs.fingerprint "$SIDREL/r.img" "$SIDREL/src"
		[ "$status" -eq 0 ] || die "erofs-utils mkfs.erofs $opts: $output"
		rm -rf x
		run "$FSCK_EROFS" --extract=x --xattrs --xattr-inode-digest "$SIDTMP/r.img"
		[ "$status" -eq 0 ] || die "$opts: $output"
		"$LIB/manifest" x --drop-xattr trusted.erofs.fingerprint |
			diff "$BATS_FILE_TMPDIR/src.manifest" - || die "options $opts"
	done
}

# a 1 MB file whose lz4hc form takes blocks of its own, copied: -E dedupe
# stores the copy's blocks once, so the image grows by less than a block
# (the copy's inode) over the image without the copy; without dedupe it
# grows by the compressed size again.  The same for an incompressible
# (random) file, which alone would stay uncompressed: its twin is shared
@test "-E dedupe: an identical file adds no data blocks; fragments: an identical tail is stored once" {
	mkdir s1 s2
	seq 1 200000 > s1/a
	cp s1/a s2/a
	cp s1/a s2/b
	"$MKFS_EROFS" --quiet -zlz4hc -T0 one.img s1
	"$MKFS_EROFS" --quiet -zlz4hc -T0 two.img s2
	"$MKFS_EROFS" --quiet -zlz4hc -T0 -Ededupe two-dd.img s2
	one=$(stat -c %s one.img) two=$(stat -c %s two.img) dd=$(stat -c %s two-dd.img)
	[ "$two" -gt $((one + 100000)) ] || die "without dedupe: $one then $two"
	[ "$dd" -le $((one + 4096)) ] || die "with dedupe: $one then $dd"
	# incompressible (left uncompressed without a twin): the copy too
	mkdir r1 r2
	head -c 300000 /dev/urandom > r1/a
	cp r1/a r2/a
	cp r1/a r2/b
	"$MKFS_EROFS" --quiet -zlz4hc -T0 -Ededupe r1.img r1
	"$MKFS_EROFS" --quiet -zlz4hc -T0 -Ededupe r2.img r2
	r1=$(stat -c %s r1.img) r2=$(stat -c %s r2.img)
	[ "$r2" -le $((r1 + 8192)) ] || die "incompressible copy with dedupe: $r1 then $r2"
	run "$FSCK_EROFS" --extract=xr r2.img
	[ "$status" -eq 0 ] || die "$output"
	cmp r1/a xr/a || die "a differs"
	cmp r1/a xr/b || die "b differs"
	# fragments: 200 different files with one 3000-byte tail each, packed;
	# then the same with identical 3000-byte contents: the packed inode
	# (compressed) holds one copy
	python3 -c '
import os
os.mkdir("f1"); os.mkdir("f2")
same = os.urandom(3000)
for i in range(200):
    open("f1/%d" % i, "wb").write(os.urandom(3000))
    open("f2/%d" % i, "wb").write(same)'
	"$MKFS_EROFS" --quiet -zlz4hc -T0 -Efragments p1.img f1
	"$MKFS_EROFS" --quiet -zlz4hc -T0 -Efragments p2.img f2
	p1=$(stat -c %s p1.img) p2=$(stat -c %s p2.img)
	[ "$p1" -gt 600000 ] || die "200 random fragments in $p1 bytes"
	[ "$p2" -lt 40000 ] || die "one shared fragment: $p2 bytes"
	run "$FSCK_EROFS" --extract=x2 p2.img
	[ "$status" -eq 0 ] || die "$output"
	diff -r f2 x2 || die "extracted f2 differs"
}

# two files that share a 1.3 MB middle (seq output) behind different heads
# (5000 and 7777 random bytes) and before different tails: -E dedupe finds
# the middle of the second in the first's pclusters, so the image is
# smaller than without dedupe by about the middle's compressed size (taken
# from an image of the middle alone, less one of an empty file), give or
# take the two pclusters cut across each edge of the middle; both files
# read back byte-exact through both fsck.erofs, for 1 and 2 workers alike
@test "-E dedupe: two files sharing a large middle segment share its pclusters" {
	need_sid_erofs
	u=3f0c3a53-8f1e-4a3b-9d7e-0123456789ab
	mkdir s m e
	seq 300001 500000 > mid
	{ head -c 5000 /dev/urandom; cat mid; yes "tail of a" | head -c 4000; } > s/a
	{ head -c 7777 /dev/urandom; cat mid; head -c 3000 /dev/urandom; } > s/b
	cp mid m/mid
	: > e/mid
	for d in m e; do "$MKFS_EROFS" --quiet -zlz4hc -Elegacy-compress -T0 $d.img $d; done
	mid=$(( $(stat -c %s m.img) - $(stat -c %s e.img) ))
	"$MKFS_EROFS" --quiet -zlz4hc -Elegacy-compress -T0 plain.img s
	"$MKFS_EROFS" --quiet -zlz4hc -Ededupe -T0 -U $u --workers=1 dd.img s
	"$MKFS_EROFS" --quiet -zlz4hc -Ededupe -T0 -U $u --workers=2 dd2.img s
	cmp dd.img dd2.img || die "1 and 2 workers differ"
	plain=$(stat -c %s plain.img) dd=$(stat -c %s dd.img)
	saved=$((plain - dd))
	[ "$mid" -gt 200000 ] || die "the middle alone: $mid bytes"
	[ "$saved" -ge $((mid - 16384)) ] || die "saved $saved of $mid bytes ($plain then $dd)"
	[ "$saved" -le $((mid + 16384)) ] || die "saved $saved, more than $mid bytes ($plain then $dd)"
	both_extract_ab dd.img
}

# file b holds the first bytes of file a up to 3/4 into a's second
# pcluster (its extents as erofs-utils' dump.erofs lists them), then other
# text: -E dedupe points b's first extent at a's first pcluster and its
# second, a partial reference (PARTIAL_REF), at a prefix of a's second, so
# the image is no larger than one of a and b's other text alone (give or
# take a block; sharing whole pclusters only would cost the 16 KiB
# pcluster again); both fsck.erofs extract both files byte-exact, and 1
# and 2 workers write the same image
@test "-E dedupe: a prefix of an earlier pcluster's content is a partial reference" {
	need_sid_erofs
	u=0b8d52a4-6c1e-4f0a-8e3b-5a1c2d3e4f50
	mkdir a c s
	seq 1 60000 > a/a
	"$MKFS_EROFS" --quiet -zlz4hc -C16384 -Ededupe -T0 a.img a
	cp a.img "$SIDTMP/a.img"
	run chroot "$SID_ROOT" dump.erofs --path=/a -e "$SIDREL/a.img"
	[ "$status" -eq 0 ] || die "dump.erofs: $output"
	# extent 1: "   1:   START..   END |  LEN : ..."
	read -r start len < <(printf '%s\n' "$output" |
		awk -F'[ :.|]+' '$2 == "1" { print $3, $5; exit }')
	[ "${len:-0}" -ge 20000 ] || die "a's second extent: $output"
	cut=$((start + len * 3 / 4))
	seq 900001 910000 > c/b
	cp a/a s/a
	cp a/a c/a
	{ head -c "$cut" a/a; cat c/b; } > s/b
	"$MKFS_EROFS" --quiet -zlz4hc -C16384 -Ededupe -T0 c.img c
	"$MKFS_EROFS" --quiet -zlz4hc -C16384 -Ededupe -T0 -U $u --workers=1 dd.img s
	"$MKFS_EROFS" --quiet -zlz4hc -C16384 -Ededupe -T0 -U $u --workers=2 dd2.img s
	cmp dd.img dd2.img || die "1 and 2 workers differ"
	c=$(stat -c %s c.img) dd=$(stat -c %s dd.img)
	[ "$dd" -le $((c + 4096)) ] || die "b's shared prefix cost $((dd - c)) bytes ($c then $dd)"
	both_extract_ab dd.img
}

# two incompressible files that begin with the same 400000 random bytes
# and end differently (gzip files of one changelog from two builds of a
# package): the plan leaves such files uncompressed, where no block can
# be shared, but with -E fragments,dedupe they are compressed (raw
# blocks), so the second's blocks are found among the first's: the image
# of both is at most two blocks (the second's inode and its last block)
# over the image of the first alone, where without -E dedupe it grows by
# nearly the 400000 bytes again; both fsck.erofs extract both files
# byte-exact, and 1 and 2 workers write the same image
@test "-E fragments,dedupe: incompressible files with a common prefix share raw blocks" {
	need_sid_erofs
	u=6d1f0a2e-3b4c-4d5e-8f60-718293a4b5c6
	mkdir one s
	head -c 400000 /dev/urandom > body
	{ cat body; printf 'end a'; } > one/a
	cp one/a s/a
	{ cat body; printf 'the end of b'; } > s/b
	"$MKFS_EROFS" --quiet -zlz4hc -Efragments,dedupe -T0 one.img one
	"$MKFS_EROFS" --quiet -zlz4hc -Efragments -T0 nodd.img s
	"$MKFS_EROFS" --quiet -zlz4hc -Efragments,dedupe -T0 -U $u --workers=1 dd.img s
	"$MKFS_EROFS" --quiet -zlz4hc -Efragments,dedupe -T0 -U $u --workers=2 dd2.img s
	cmp dd.img dd2.img || die "1 and 2 workers differ"
	one=$(stat -c %s one.img) nodd=$(stat -c %s nodd.img) dd=$(stat -c %s dd.img)
	[ "$nodd" -ge $((one + 380000)) ] || die "without dedupe: $one then $nodd"
	[ "$dd" -le $((one + 8192)) ] || die "with dedupe: $one then $dd"
	both_extract_ab dd.img
}

# 100 directories each with a text file (one 2,500-byte text of seeded
# random words, its first line naming the directory) and 2,500 random
# bytes: in file order the packed inode would alternate them, and each
# 4 KiB pcluster would hold a text with no earlier one to match; tails of
# one kind (extension) are packed next to each other, so the texts cost
# about one text: the image is at most the text-only and random-only
# images' sizes together (plus two blocks)
@test "-E fragments: tails of one kind are packed together; both fsck.erofs read the reordered image" {
	need_sid_erofs
	u=0b7c2d4e-5f60-4718-92a3-b4c5d6e7f809
	python3 -c '
import os, random
random.seed(7)
words = ["licence", "software", "warranty", "copyright", "permission",
	 "notice", "holder", "granted", "distribute", "modify", "source"]
text = " ".join(random.choice(words) + str(random.randrange(1000))
		for _ in range(400))[:2480] + "\n"
for d in ("mixed", "txt", "bin"):
    os.mkdir(d)
for i in range(100):
    blob = os.urandom(2500)
    for d in ("mixed", "txt", "bin"):
        os.mkdir("%s/d%03d" % (d, i))
    for d in ("mixed", "txt"):
        open("%s/d%03d/a.txt" % (d, i), "w").write("package %03d\n" % i + text)
    for d in ("mixed", "bin"):
        open("%s/d%03d/b.bin" % (d, i), "wb").write(blob)'
	for d in mixed txt bin; do
		"$MKFS_EROFS" --quiet -zlz4hc -Efragments -T0 -U $u --workers=1 $d.img $d
	done
	"$MKFS_EROFS" --quiet -zlz4hc -Efragments -T0 -U $u --workers=2 mixed2.img mixed
	cmp mixed.img mixed2.img || die "1 and 2 workers differ"
	m=$(stat -c %s mixed.img) t=$(stat -c %s txt.img) b=$(stat -c %s bin.img)
	[ "$m" -le $((t + b + 8192)) ] || die "mixed $m bytes, text only $t, random only $b"
	rm -rf x
	run "$FSCK_EROFS" --extract=x mixed.img
	[ "$status" -eq 0 ] || die "our fsck.erofs: $output"
	diff -r mixed x || die "our fsck: the tree differs"
	cp mixed.img "$SIDTMP/m.img"
	run chroot "$SID_ROOT" fsck.erofs --extract="$SIDREL/x" "$SIDREL/m.img"
	[ "$status" -eq 0 ] || die "erofs-utils fsck.erofs: $output"
	diff -r mixed "$SIDTMP/x" || die "erofs-utils: the tree differs"
}

# the packed inode's pcluster: the same arguments accepted and refused as
# by erofs-utils 1.9.4; a smaller one packs the same text larger
@test "-E fragments=SIZE: erofs-utils' grammar; the packed inode's pcluster" {
	need_sid_erofs
	mkdir s
	cp "$FSFORGE_TOP"/liberofs/*.c s/
	cp -r s "$SIDTMP/s"
	for e in fragments=0 fragments=4096 fragments=8k fragments=0x4000 fragments=16K \
		 all-fragments=8192 fragments=65536 fragments=131072 fragments=1M \
		 fragments=6000 fragments=2048 fragments= fragments=-4096 fragments=16384x; do
		run chroot "$SID_ROOT" mkfs.erofs --quiet -zlz4hc -C65536 -E"$e" \
			"$SIDREL/r.img" "$SIDREL/s"
		ref=$status
		run "$MKFS_EROFS" --quiet -zlz4hc -C65536 -E"$e" o.img s
		if [ "$ref" -eq 0 ]; then
			[ "$status" -eq 0 ] || die "-E$e: erofs-utils takes it, ours: $output"
		else
			[ "$status" -ne 0 ] || die "-E$e: erofs-utils refuses it, ours took it"
			[ -n "$output" ] || die "-E$e: refused without a message"
		fi
	done
	"$MKFS_EROFS" --quiet -zlz4hc -C65536 -T0 -Eall-fragments=4096 small.img s
	"$MKFS_EROFS" --quiet -zlz4hc -C65536 -T0 -Eall-fragments big.img s
	small=$(stat -c %s small.img) big=$(stat -c %s big.img)
	[ "$big" -lt "$small" ] || die "64 KiB pclusters $big bytes, 4 KiB $small"
	rm -rf x
	run "$FSCK_EROFS" --extract=x small.img
	[ "$status" -eq 0 ] || die "our fsck.erofs: $output"
	diff -r s x || die "our fsck: the tree differs"
}

@test "-E ztailpacking, fragments, dedupe without -z: a usage error" {
	for e in ztailpacking fragments all-fragments dedupe; do
		run "$MKFS_EROFS" -E$e x.img "$SRC"
		[ "$status" -ne 0 ] || die "-E$e accepted without -z"
		[[ $output == *"need -z"* ]] || die "-E$e: $output"
	done
}

@test "-E ztailpacking: the plan's tails wait in a spool file in TMPDIR, gone after the run; no room there is a clear error" {
	mkdir t small
	run env TMPDIR="$PWD/t" "$MKFS_EROFS" --quiet -zlz4hc -Eztailpacking spooled.img "$SRC"
	[ "$status" -eq 0 ] || die "mkfs.erofs: $output"
	run ls -A t
	[ -z "$output" ] || die "left in TMPDIR: $output"
	run "$FSCK_EROFS" --extract=x --xattrs spooled.img
	[ "$status" -eq 0 ] || die "our fsck.erofs: $output"
	"$LIB/manifest" x | diff "$BATS_FILE_TMPDIR/src.manifest" - || die "our extraction differs"
	# one page: the tails of the liberofs sources alone need more
	mount -t tmpfs -o size=4k tmpfs small
	run env TMPDIR="$PWD/small" "$MKFS_EROFS" --quiet -zlz4hc -Eztailpacking full.img "$SRC"
	umount small
	[ "$status" -eq 1 ] || die "status $status: $output"
	[ "$output" = "mkfs.erofs: error: cannot write the spool file of inline tails (in $PWD/small): No space left on device" ] ||
		die "$output"
	run compgen -G "full.img*"
	[ "$status" -ne 0 ] || die "left: $output"
	run env TMPDIR=/nonexistent "$MKFS_EROFS" --quiet -zlz4hc -Eztailpacking none.img "$SRC"
	[ "$status" -eq 1 ] || die "status $status: $output"
	[ "$output" = "mkfs.erofs: error: cannot make the spool file of inline tails in /nonexistent: No such file or directory" ] ||
		die "$output"
}

# the ro tmpfs is a TMPDIR no one may write, root included; on a full one
# the packed content (the fragments of the liberofs sources) needs more
# than its one page
@test "-E fragments: the packed inode waits in a spool file in TMPDIR, gone after the run; a read-only or full TMPDIR is a clear error naming it, no image left" {
	mkdir t ro small
	run env TMPDIR="$PWD/t" "$MKFS_EROFS" --quiet -zlz4hc -Efragments spooled.img "$SRC"
	[ "$status" -eq 0 ] || die "mkfs.erofs: $output"
	run ls -A t
	[ -z "$output" ] || die "left in TMPDIR: $output"
	run "$FSCK_EROFS" --extract=x --xattrs spooled.img
	[ "$status" -eq 0 ] || die "our fsck.erofs: $output"
	"$LIB/manifest" x | diff "$BATS_FILE_TMPDIR/src.manifest" - || die "our extraction differs"
	mount -t tmpfs -o ro,size=4k tmpfs ro
	run env TMPDIR="$PWD/ro" "$MKFS_EROFS" --quiet -zlz4hc -Efragments ro.img "$SRC"
	umount ro
	[ "$status" -eq 1 ] || die "status $status: $output"
	[ "$output" = "mkfs.erofs: error: cannot make the spool file of the packed inode in $PWD/ro: Read-only file system" ] ||
		die "$output"
	run compgen -G "ro.img*"
	[ "$status" -ne 0 ] || die "left: $output"
	mount -t tmpfs -o size=4k tmpfs small
	run env TMPDIR="$PWD/small" "$MKFS_EROFS" --quiet -zlz4hc -Efragments full.img "$SRC"
	umount small
	[ "$status" -eq 1 ] || die "status $status: $output"
	[ "$output" = "mkfs.erofs: error: cannot write the spool file of the packed inode (in $PWD/small): No space left on device" ] ||
		die "$output"
	run compgen -G "full.img*"
	[ "$status" -ne 0 ] || die "left: $output"
}
