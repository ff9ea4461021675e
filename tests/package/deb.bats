#!/usr/bin/env bats
# The Debian packages: scripts/build-deb builds them with dpkg-buildpackage
# in a clean copy and runs lintian (no error, no warning); their contents
# are what each package promises; the autopkgtests (debian/tests) pass on
# the packaged files, unpacked with dpkg-deb into a scratch root; and an
# autopkgtest fails when the program it judges does nothing.
# (Installing them with dpkg into a fresh Debian 12 root: tests/fresh/run
# --deb, out of CI.)
load ../lib/common
bats_require_minimum_version 1.5.0

setup_file() {
	export DEBOUT=$BATS_FILE_TMPDIR/deb
	local c
	for c in dpkg-buildpackage lintian dh; do
		command -v "$c" > /dev/null || return 0 # setup() names what is missing
	done
	"$FSFORGE_TOP/scripts/build-deb" "$DEBOUT" > "$BATS_FILE_TMPDIR/build-deb.out" 2>&1 ||
		echo "$?" > "$BATS_FILE_TMPDIR/build-deb.rc"
	local d
	mkdir -p "$BATS_FILE_TMPDIR/root"
	for d in "$DEBOUT"/fsforge-erofs_*.deb "$DEBOUT"/fsforge-ntfs_*.deb "$DEBOUT"/fsforge-xfs-healer_*.deb; do
		[ -f "$d" ] && dpkg-deb -x "$d" "$BATS_FILE_TMPDIR/root"
	done
	return 0
}

setup() {
	command -v dpkg-buildpackage > /dev/null || need_or_skip "dpkg-dev missing (scripts/install-deps)"
	command -v lintian > /dev/null || need_or_skip "lintian missing (scripts/install-deps)"
	command -v dh > /dev/null || need_or_skip "debhelper missing (scripts/install-deps)"
	cd_tmp
}

@test "dpkg-buildpackage builds the three packages and lintian reports no error or warning" {
	run cat "$BATS_FILE_TMPDIR/build-deb.out"
	echo "$output"
	[ ! -e "$BATS_FILE_TMPDIR/build-deb.rc" ]
	run ls "$DEBOUT"
	[[ $output == *fsforge-erofs_*_amd64.deb* ]]
	[[ $output == *fsforge-ntfs_*_amd64.deb* ]]
	[[ $output == *fsforge-xfs-healer_*_amd64.deb* ]]
	run grep -E '^[EW]: ' "$DEBOUT/lintian.txt"
	[ "$status" -eq 1 ]
}

@test "package contents: programs in /usr/sbin, man pages, units, copyright" {
	contents() { dpkg-deb -c "$DEBOUT"/"$1"_*_amd64.deb | awk '{ print $6 }'; }
	run contents fsforge-ntfs
	[[ $output == *"./usr/sbin/mkfs.ntfs"* ]]
	[[ $output == *"./usr/sbin/fsck.ntfs"* ]]
	[[ $output == *"./usr/share/man/man8/mkfs.ntfs.8.gz"* ]]
	[[ $output == *"./usr/share/man/man8/fsck.ntfs.8.gz"* ]]
	[[ $output == *"./usr/share/doc/fsforge-ntfs/copyright"* ]]
	[[ $output != *mkfs.erofs* ]]
	run contents fsforge-erofs
	[[ $output == *"./usr/sbin/mkfs.erofs"* ]]
	[[ $output == *"./usr/share/man/man8/mkfs.erofs.8.gz"* ]]
	[[ $output == *"./usr/sbin/fsck.erofs"* ]]
	[[ $output == *"./usr/share/man/man8/fsck.erofs.8.gz"* ]]
	[[ $output != *ntfs* ]]
	run contents fsforge-xfs-healer
	[[ $output == *"./usr/sbin/xfs_healer"* ]]
	[[ $output == *"./usr/sbin/xfs_healer_start"* ]]
	[[ $output == *"./lib/systemd/system/xfs_healer@.service"* ]]
	[[ $output == *"./lib/systemd/system/xfs_healer_start.service"* ]]
	[[ $output == *"./lib/systemd/system/system-xfs_healer.slice"* ]]
	[[ $output == *"./usr/share/man/man8/xfs_healer.8.gz"* ]]
}

@test "maintainer scripts: diversions of ntfs-3g's and erofs-utils' names, no template enabled" {
	run dpkg-deb -I "$DEBOUT"/fsforge-ntfs_*_amd64.deb preinst
	[[ $output == *"dpkg-divert --package fsforge-ntfs --add --rename"* ]]
	[[ $output == *"/sbin/mkfs.ntfs"* ]]
	run dpkg-deb -I "$DEBOUT"/fsforge-ntfs_*_amd64.deb postrm
	[[ $output == *"dpkg-divert --package fsforge-ntfs --remove --rename"* ]]
	run dpkg-deb -I "$DEBOUT"/fsforge-erofs_*_amd64.deb preinst
	[[ $output == *"/usr/bin/mkfs.erofs"* ]]
	[[ $output == *"/usr/bin/fsck.erofs"* ]]
	run dpkg-deb -I "$DEBOUT"/fsforge-erofs_*_amd64.deb postrm
	[[ $output == *"dpkg-divert --package fsforge-erofs --remove --rename"* ]]
	[[ $output == *"/usr/bin/fsck.erofs"* ]]
	run dpkg-deb -I "$DEBOUT"/fsforge-xfs-healer_*_amd64.deb postinst
	[[ $output == *"enable 'xfs_healer_start.service'"* ]]
	[[ $output != *"xfs_healer@"* ]]
	run dpkg-deb -f "$DEBOUT"/fsforge-xfs-healer_*_amd64.deb Conflicts
	[ "$output" = "xfsprogs (>= 7.0.0~)" ]
}

@test "autopkgtest ntfs on the packaged files (judged by ntfs-3g's tools)" {
	run env FSFORGE_SBIN="$BATS_FILE_TMPDIR/root/usr/sbin" "$FSFORGE_TOP/debian/tests/ntfs"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"ntfs: OK"* ]]
}

@test "autopkgtest erofs on the packaged files (judged by erofs-utils)" {
	run env FSFORGE_SBIN="$BATS_FILE_TMPDIR/root/usr/sbin" "$FSFORGE_TOP/debian/tests/erofs"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"erofs: OK"* ]]
}

@test "autopkgtest xfs-healer on the packaged files" {
	cd "$FSFORGE_TOP"
	run env FSFORGE_SBIN="$BATS_FILE_TMPDIR/root/usr/sbin" \
		FSFORGE_UNITDIR="$BATS_FILE_TMPDIR/root/lib/systemd/system" debian/tests/xfs-healer
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"xfs-healer: OK"* ]]
}

# the autopkgtest of TOOL (ntfs, erofs) with the packaged mkfs.TOOL and an
# fsck.TOOL that does nothing and exits 0: it must fail, saying FAIL
stub_fsck_fails() {
	local tool=$1
	mkdir sbin
	cp "$BATS_FILE_TMPDIR/root/usr/sbin/mkfs.$tool" sbin/
	printf '#!/bin/sh\nexit 0\n' > "sbin/fsck.$tool"
	chmod +x "sbin/fsck.$tool"
	run env FSFORGE_SBIN="$PWD/sbin" "$FSFORGE_TOP/debian/tests/$tool"
	echo "$output"
	[ "$status" -ne 0 ] || die "the $tool autopkgtest passed with a stub fsck.$tool"
	[[ $output == *FAIL:* ]] || die "the $tool autopkgtest did not say FAIL"
}

@test "the ntfs autopkgtest fails when fsck.ntfs repairs nothing and says all is well" {
	stub_fsck_fails ntfs
}

@test "the erofs autopkgtest fails when fsck.erofs checks nothing and says all is well" {
	stub_fsck_fails erofs
}
