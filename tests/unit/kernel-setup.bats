#!/usr/bin/env bats
# tests/kernel/setup takes the Debian archive URI from apt's configured
# sources, whichever way apt is configured: classic one-line sources.list
# entries (as debootstrap leaves them), deb822 .sources files, or both.
# Each case is a scratch apt configuration (APT_CONFIG), never /etc/apt.
load ../lib/common

SETUP=$FSFORGE_TOP/tests/kernel/setup

setup() {
	cd_tmp
	mkdir -p parts lists
	: > sources.list
	cat > apt.conf <<EOF
Dir::Etc::sourcelist "$BATS_TEST_TMPDIR/sources.list";
Dir::Etc::sourceparts "$BATS_TEST_TMPDIR/parts";
Dir::State::Lists "$BATS_TEST_TMPDIR/lists";
EOF
	export APT_CONFIG=$BATS_TEST_TMPDIR/apt.conf
}

@test "classic sources.list only (debootstrap's way)" {
	cat > sources.list <<'EOF'
# deb http://commented.example/debian bookworm main
deb http://security.debian.org/debian-security bookworm-security main
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://mirror.example.org/debian/ bookworm main contrib
deb http://mirror.example.org/debian bookworm-updates main
deb-src http://src.example.org/debian bookworm main
EOF
	run "$SETUP" --print-uri
	[ "$status" -eq 0 ]
	[ "$output" = http://mirror.example.org/debian ]
}

@test "deb822 .sources file only (Debian 12's installer way)" {
	cat > parts/debian.sources <<'EOF'
Types: deb
URIs: http://deb822.example.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb822.example.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
	run "$SETUP" --print-uri
	[ "$status" -eq 0 ]
	[ "$output" = http://deb822.example.org/debian ]
}

@test "a third-party repository listed first does not win over the Debian archive" {
	cat > parts/a-vendor.sources <<'EOF'
Types: deb
URIs: https://vendor.example.com/node_20.x
Suites: nodistro
Components: main
EOF
	echo 'deb http://archive.example.org/debian bookworm main' > sources.list
	run "$SETUP" --print-uri
	[ "$status" -eq 0 ]
	[ "$output" = http://archive.example.org/debian ]
}

@test "no source at all: a clear error, status 1" {
	run "$SETUP" --print-uri
	[ "$status" -eq 1 ]
	[[ $output == *"apt has no Debian archive among its sources"* ]]
}
