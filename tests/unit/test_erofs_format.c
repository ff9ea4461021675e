// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the pure EROFS format helpers against values computed
 * independently: published CRC-32C check values, a reference xxh32 written
 * here from the algorithm's definition, hand-computed byte layouts, and
 * (when given as argv[1]) a superblock produced by erofs-utils.
 */
#include "config.h"

#include <endian.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "erofs/erofs_fs.h"
#include "erofs/format.h"
#include "tap.h"

/* xxh32 straight from the specification, for cross-checking libxxhash */
static uint32_t rotl(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }
static uint32_t rd32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static uint32_t ref_xxh32(const void *in, size_t len, uint32_t seed)
{
	const uint32_t P1 = 2654435761u, P2 = 2246822519u, P3 = 3266489917u,
		       P4 = 668265263u, P5 = 374761393u;
	const uint8_t *p = in, *end = p + len;
	uint32_t h;

	if (len >= 16) {
		uint32_t v[4] = { seed + P1 + P2, seed + P2, seed, seed - P1 };

		while (end - p >= 16) {
			for (int i = 0; i < 4; i++, p += 4)
				v[i] = rotl(v[i] + rd32(p) * P2, 13) * P1;
		}
		h = rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18);
	} else {
		h = seed + P5;
	}
	h += (uint32_t)len;
	for (; end - p >= 4; p += 4)
		h = rotl(h + rd32(p) * P3, 17) * P4;
	for (; p < end; p++)
		h = rotl(h + *p * P5, 11) * P1;
	h ^= h >> 15; h *= P2; h ^= h >> 13; h *= P3; h ^= h >> 16;
	return h;
}

static void test_crc(void)
{
	/* CRC-32C check value of "123456789" is 0xE3069283 (RFC 3720);
	 * EROFS keeps the value before the final inversion */
	ok(erofs_crc32c(~0u, "123456789", 9) == ~0xE3069283u,
	   "crc32c matches the iSCSI check value");
	ok(erofs_crc32c(~0u, "", 0) == ~0u, "crc32c of nothing is the seed");
}

static void test_sb_checksum(void)
{
	uint8_t blk[3072] = { 0 };
	struct erofs_super_block *sb = (void *)blk;
	uint32_t stored, again;

	sb->magic = htole32(EROFS_SUPER_MAGIC);
	sb->blkszbits = 12;
	blk[2000] = 0x5a;	/* bytes after the superblock are covered */
	erofs_sb_set_checksum(blk, 4096);
	stored = le32toh(sb->checksum);
	sb->checksum = 0;
	again = erofs_crc32c(~0u, blk, sizeof(blk));
	ok(stored == again, "checksum covers block size - 1024 bytes");
	blk[3071] ^= 1;
	ok(erofs_crc32c(~0u, blk, sizeof(blk)) != stored,
	   "a flipped byte at the end of the block changes it");
}

/* A superblock written by erofs-utils must verify with our function. */
static void test_reference_image(const char *path)
{
	uint8_t blk[65536];
	int fd = open(path, O_RDONLY);
	struct erofs_super_block *sb = (void *)blk;
	ssize_t n = fd >= 0 ? pread(fd, blk, sizeof(blk), 1024) : -1;
	uint32_t want;
	unsigned int bs;

	ok(n >= 3072, "read reference image %s", path);
	if (fd >= 0)
		close(fd);
	if (n < 3072)
		return;
	bs = 1u << sb->blkszbits;
	want = le32toh(sb->checksum);
	erofs_sb_set_checksum(blk, bs);
	ok(le32toh(sb->checksum) == want,
	   "erofs-utils' superblock checksum reproduced (0x%08x)", want);
}

static void test_filter(void)
{
	const char *names[] = { "", "selinux", "erofs.fingerprint",
				"a-much-longer-attribute-name-over-16", "overlay.opaque" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		for (uint8_t base = 0; base <= 6; base += 2) {
			unsigned int bit = erofs_xattr_filter_bit(base, names[i],
								 strlen(names[i]));
			uint32_t want = ref_xxh32(names[i], strlen(names[i]),
						  EROFS_XATTR_FILTER_SEED + base) & 31;

			if (bit != want) {
				ok(0, "filter bit of '%s' base %u: %u != %u",
				   names[i], base, bit, want);
				return;
			}
		}
	}
	ok(ref_xxh32("", 0, 0) == 0x02CC5D05u, "reference xxh32 test vector");
	ok(1, "filter bits agree with the reference xxh32");
}

static void test_std_prefix(void)
{
	uint8_t idx = 0;
	size_t off = 0;

	ok(!erofs_xattr_std_prefix("security.selinux", &idx, &off) &&
	   idx == EROFS_XATTR_INDEX_SECURITY && off == 9, "security. prefix");
	ok(!erofs_xattr_std_prefix("system.posix_acl_access", &idx, &off) &&
	   idx == EROFS_XATTR_INDEX_POSIX_ACL_ACCESS && off == 23,
	   "ACL name is the whole prefix");
	ok(erofs_xattr_std_prefix("system.posix_acl_accessX", &idx, &off),
	   "ACL prefix must match the whole name");
	ok(erofs_xattr_std_prefix("system.nfs4_acl", &idx, &off),
	   "unknown namespace is refused");
}

static void test_prefix_table(void)
{
	struct erofs_long_prefix p[2] = {
		{ 4, "erofs.fingerprint", 17 },
		{ 1, "x", 1 },
	};
	uint8_t out[64];
	static const uint8_t want0[] = { 18, 0, 4, 'e', 'r', 'o', 'f', 's', '.' };

	memset(out, 0xee, sizeof(out));
	ok(erofs_prefix_table_encode(p, 2, NULL) == 20 + 4,
	   "two records take 20 + 4 bytes (4-byte aligned)");
	erofs_prefix_table_encode(p, 2, out);
	ok(!memcmp(out, want0, sizeof(want0)), "first record bytes");
	ok(out[20] == 2 && out[21] == 0 && out[22] == 1 && out[23] == 'x',
	   "second record starts aligned at 20");
}

static void test_dirents(void)
{
	enum { N = 40 };
	struct erofs_dirent_in e[N];
	char names[N][32];
	uint8_t *buf;
	uint64_t size;
	size_t seen = 0;
	int bad = 0;

	/* 20-byte names: 32 bytes per entry, 16 per 512-byte block */
	for (int i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "name-%015d", N - i);
		e[i] = (struct erofs_dirent_in){ names[i], 20, 1, 100u + i };
	}
	erofs_dirents_sort(e, N);
	ok(!strcmp(e[0].name, "name-000000000000001"), "sorted bytewise");
	size = erofs_dir_size(e, N, 512);
	ok(size == 512 * 2 + 8 * 32, "40 entries: two full blocks + 256 bytes (%llu)",
	   (unsigned long long)size);
	buf = calloc(1, 512 * 3);
	erofs_dir_encode(e, N, 512, buf);
	for (int b = 0; b < 3; b++) {
		const uint8_t *blk = buf + b * 512;
		struct erofs_dirent d0;
		unsigned int cnt;

		memcpy(&d0, blk, sizeof(d0));
		cnt = le16toh(d0.nameoff) / 12;
		for (unsigned int k = 0; k < cnt; k++) {
			struct erofs_dirent d;
			unsigned int end;

			memcpy(&d, blk + 12 * k, sizeof(d));
			if (k + 1 < cnt) {
				struct erofs_dirent nx;

				memcpy(&nx, blk + 12 * (k + 1), sizeof(nx));
				end = le16toh(nx.nameoff);
			} else {
				end = le16toh(d.nameoff) + 20;
			}
			if (end > 512 || end - le16toh(d.nameoff) != 20 ||
			    memcmp(blk + le16toh(d.nameoff), e[seen].name, 20) ||
			    le64toh(d.nid) != e[seen].nid)
				bad++;
			seen++;
		}
	}
	ok(seen == N && !bad, "every entry decodes in order, none crosses a block");
	free(buf);

	/* a 255-byte name still fits a 512-byte block with its dirent */
	{
		char longname[256];
		struct erofs_dirent_in one[3] = {
			{ ".", 1, 2, 1 }, { "..", 2, 2, 1 }, { longname, 255, 1, 2 } };

		memset(longname, 'z', 255);
		ok(erofs_dir_size(one, 3, 512) == 36 + 3 + 255,
		   "one-block directory size is entries plus names");
	}
}

int main(int argc, char **argv)
{
	test_crc();
	test_sb_checksum();
	test_filter();
	test_std_prefix();
	test_prefix_table();
	test_dirents();
	if (argc > 1)
		test_reference_image(argv[1]);
	return tap_done();
}
