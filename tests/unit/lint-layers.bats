#!/usr/bin/env bats
# tests/lib/lint-layers: the libraries never include a tool's headers
# (fsck/, mkfs/) nor each other's, common/ includes neither library and
# healer/ neither NTFS nor EROFS code: on-disk code lives in the library,
# the tool directories hold mains, passes and problem tables.
load ../lib/common

LINT=$FSFORGE_TOP/tests/lib/lint-layers

setup() { cd_tmp; }

@test "the tree keeps its layers: no library includes a tool's or the other library's header" {
	run "$LINT" "$FSFORGE_TOP"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "each kind of crossing planted in a scratch tree is found, on its line" {
	mkdir -p t/libntfs t/liberofs t/common t/healer t/fsck t/include/ntfs \
		t/include/erofs t/include/fsforge t/include/xfs
	touch t/fsck/ntfs_check.h t/include/ntfs/read.h t/include/erofs/read.h \
		t/include/fsforge/log.h t/include/xfs/healthmon.h t/libntfs/internal.h
	printf '#include "config.h"\n#include "internal.h"\n#include "ntfs/read.h"\n#include "ntfs_check.h"\n' > t/libntfs/a.c
	printf '#include "fsforge/log.h"\n#include "../fsck/ntfs_check.h"\n#include "erofs/read.h"\n' > t/libntfs/b.c
	printf '#include "erofs/read.h"\n#include <ntfs/read.h>\n' > t/liberofs/c.c
	printf '#include "fsforge/log.h"\n#include "ntfs/read.h"\n' > t/common/d.c
	printf '#include "xfs/healthmon.h"\n#include "erofs/read.h"\n' > t/healer/e.c
	printf '#include "ntfs/read.h"\n#include "fsck/ntfs_check.h"\n' > t/include/ntfs/f.h
	run "$LINT" t
	echo "$output"
	[ "$status" -eq 1 ]
	[ "$(printf '%s\n' "$output" | wc -l)" -eq 7 ]
	[[ "$output" == *'libntfs/a.c:4: libntfs includes "ntfs_check.h", not a file of libntfs/'* ]]
	[[ "$output" == *'libntfs/b.c:2: libntfs includes ../fsck/ntfs_check.h'* ]]
	[[ "$output" == *'libntfs/b.c:3: libntfs includes "erofs/read.h"'* ]]
	[[ "$output" == *'liberofs/c.c:2: liberofs includes <ntfs/read.h>'* ]]
	[[ "$output" == *'common/d.c:2: common includes "ntfs/read.h"'* ]]
	[[ "$output" == *'healer/e.c:2: healer includes "erofs/read.h"'* ]]
	[[ "$output" == *'include/ntfs/f.h:2: libntfs includes "fsck/ntfs_check.h"'* ]]
}
