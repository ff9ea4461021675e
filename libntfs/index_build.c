// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * An index (a directory's $I30 or a view index) built bottom up.  A level is a run of entries, each
 * with the child node holding the keys below it (none on the leaf level),
 * plus the end entry's child.  While a level is too big for the index
 * root it is packed into INDX blocks: entries fill a block in order; the
 * first entry that does not fit is promoted to the level above, pointing
 * at the block just closed, whose end entry takes the promoted entry's
 * old child.  Every level is smaller than the one below, so this stops.
 * A large index can be asked for even when the entries would fit the
 * root (at least one leaf block, possibly holding only its end entry).
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/format.h"
#include "ntfs/index_build.h"

struct item {
	size_t e;			/* index into the entries */
	int64_t child;			/* block number, -1 on the leaf level */
};

struct builder {
	const struct ntfs_ib_entry *ents;
	const struct ntfs_ib_spec *spec;
	uint32_t bs, cs;
	uint8_t *blocks;
	uint32_t nblocks, cap_blocks;
	uint8_t *scratch;		/* one node's entries */
};

static bool is_view(const struct builder *b)
{
	return b->spec->type != NTFS_AT_FILE_NAME;
}

static size_t entry_size(const struct builder *b, size_t e, bool node)
{
	return ntfs_align(sizeof(struct ntfs_index_entry) + b->ents[e].key_len +
			  (is_view(b) ? b->ents[e].data_len : 0), 8) +
	       (node ? 8 : 0);
}

/* One entry without its sub-node pointer.  $SDH entries pad their data
 * with "II" (as Windows writes them). */
static size_t emit_one(const struct builder *b, uint8_t *out,
		       const struct ntfs_ib_entry *e)
{
	size_t n, used;

	if (!is_view(b))
		return ntfs_ie_file_name(out, e->mref, e->key, e->key_len);
	n = ntfs_ie_view(out, e->key, e->key_len, e->data, e->data_len);
	used = sizeof(struct ntfs_index_entry) + e->key_len + e->data_len;
	if (b->spec->collation == NTFS_COLLATION_NTOFS_SECURITY_HASH && n - used == 4)
		memcpy(out + used, "I\0I\0", 4);
	return n;
}

static size_t end_size(bool node)
{
	return sizeof(struct ntfs_index_entry) + (node ? 8 : 0);
}

static int64_t vcn_of(const struct builder *b, int64_t child)
{
	return ntfs_index_block_vcn((uint32_t)child, b->bs, b->cs);
}

/* Entries FROM..TO of a level, then the end entry with child END_CHILD. */
static size_t emit_entries(const struct builder *b, uint8_t *out,
			   const struct item *it, size_t from, size_t to,
			   bool node, int64_t end_child)
{
	size_t len = 0;

	for (size_t i = from; i < to; i++) {
		const struct ntfs_ib_entry *e = &b->ents[it[i].e];
		size_t n = emit_one(b, out + len, e);

		if (node) {
			struct ntfs_index_entry h;
			uint64_t v = htole64((uint64_t)vcn_of(b, it[i].child));

			memcpy(&h, out + len, sizeof(h));
			h.flags = htole16(le16toh(h.flags) | NTFS_IE_NODE);
			h.length = htole16((uint16_t)(n + 8));
			memcpy(out + len, &h, sizeof(h));
			memcpy(out + len + n, &v, 8);
			n += 8;
		}
		len += n;
	}
	return len + ntfs_ie_end(out + len, node, node ? vcn_of(b, end_child) : 0);
}

static int64_t emit_block(struct builder *b, const struct item *it,
			  size_t from, size_t to, bool node, int64_t end_child)
{
	size_t elen;

	if (b->nblocks == b->cap_blocks) {
		uint32_t cap = b->cap_blocks ? b->cap_blocks * 2 : 16;
		uint8_t *g;

		if (cap > (UINT32_MAX >> 1) / b->bs)
			return -ENOMEM;
		g = realloc(b->blocks, (size_t)cap * b->bs);
		if (!g)
			return -ENOMEM;
		b->blocks = g;
		b->cap_blocks = cap;
	}
	elen = emit_entries(b, b->scratch, it, from, to, node, end_child);
	if (ntfs_index_block(b->blocks + (size_t)b->nblocks * b->bs, b->bs,
			     vcn_of(b, b->nblocks), b->scratch, elen, 1, node))
		return -EINVAL;
	return b->nblocks++;
}

/* Pack level IT (M items, end child *LAST) into blocks; the promoted
 * entries replace it (count in *M). */
static int pack_level(struct builder *b, struct item *it, size_t *m,
		      int64_t *last, bool node)
{
	size_t cap = b->bs - ntfs_align(sizeof(struct ntfs_index_block) +
					2u * (b->bs / 512 + 1), 8);
	size_t start = 0, used = 0, out = 0, i = 0, n = *m;
	int64_t blk;

	while (i < n) {
		size_t sz = entry_size(b, it[i].e, node);
		size_t p;

		if (used + sz + end_size(node) <= cap) {
			used += sz;
			i++;
			continue;
		}
		if (i == start)
			return -EINVAL;		/* one entry bigger than a block */
		p = i;
		/* never leave the last block without entries */
		if (p == n - 1 && p - start >= 2)
			p--;
		blk = emit_block(b, it, start, p, node, it[p].child);
		if (blk < 0)
			return (int)blk;
		/* promoted: OUT <= START < P, so nothing unread is overwritten */
		it[out].e = it[p].e;
		it[out].child = blk;
		out++;
		start = i = p + 1;
		used = 0;
	}
	blk = emit_block(b, it, start, n, node, *last);
	if (blk < 0)
		return (int)blk;
	*last = blk;
	*m = out;
	return 0;
}

int ntfs_index_build(const struct ntfs_ib_entry *entries, size_t n,
		     uint32_t root_room, uint32_t block_size,
		     uint32_t cluster_size, struct ntfs_ib_result *out)
{
	return ntfs_index_build_shape(entries, n, root_room, block_size,
				      cluster_size, false, out);
}

int ntfs_index_build_shape(const struct ntfs_ib_entry *entries, size_t n,
			   uint32_t root_room, uint32_t block_size,
			   uint32_t cluster_size, bool large,
			   struct ntfs_ib_result *out)
{
	struct ntfs_ib_spec spec = {
		.type = NTFS_AT_FILE_NAME, .collation = NTFS_COLLATION_FILE_NAME,
		.root_room = root_room, .block_size = block_size,
		.cluster_size = cluster_size, .large = large,
	};

	return ntfs_index_build_spec(&spec, entries, n, out);
}

int ntfs_index_build_spec(const struct ntfs_ib_spec *spec,
			  const struct ntfs_ib_entry *entries, size_t n,
			  struct ntfs_ib_result *out)
{
	uint32_t block_size = spec->block_size, root_room = spec->root_room;
	struct builder b = { .ents = entries, .spec = spec, .bs = block_size,
			     .cs = spec->cluster_size };
	struct item *it;
	size_t m = n;
	int64_t last = -1;
	bool node = false;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	if (block_size < 512 || block_size > 65536 || block_size & (block_size - 1) ||
	    !b.cs || root_room < sizeof(struct ntfs_index_root) + end_size(true))
		return -EINVAL;
	it = malloc((n ? n : 1) * sizeof(*it));
	b.scratch = malloc(block_size > root_room ? block_size : root_room);
	out->root = malloc(root_room);
	if (!it || !b.scratch || !out->root) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		it[i].e = i;
		it[i].child = -1;
	}
	for (;;) {
		size_t len = sizeof(struct ntfs_index_root) + end_size(node);

		for (size_t i = 0; i < m; i++)
			len += entry_size(&b, it[i].e, node);
		if (len <= root_room && (node || !spec->large))
			break;
		ret = pack_level(&b, it, &m, &last, node);
		if (ret)
			goto out;
		node = true;
		out->depth++;
	}
	{
		size_t elen = emit_entries(&b, b.scratch, it, 0, m, node, last);

		out->root_len = (uint32_t)ntfs_index_root(out->root, spec->type,
							  spec->collation,
							  block_size, b.cs,
							  b.scratch, elen, node);
	}
	out->large = node;
	out->blocks = b.blocks;
	out->nblocks = b.nblocks;
	b.blocks = NULL;
out:
	free(it);
	free(b.scratch);
	free(b.blocks);
	if (ret) {
		free(out->root);
		out->root = NULL;
	}
	return ret;
}

static int cmp_entries(const void *x, const void *y, void *arg)
{
	const struct ntfs_ib_entry *a = x, *b = y;
	const struct ntfs_ib_spec *spec = arg;
	int c = ntfs_collate(spec->collation, spec->upcase, a->key, a->key_len,
			     b->key, b->key_len);

	if (c == NTFS_COLLATE_BAD)
		c = 0;
	/* equal keys: by file (stable for duplicate names) */
	return c ? c : (a->mref < b->mref ? -1 : a->mref > b->mref);
}

void ntfs_ib_sort(struct ntfs_ib_entry *entries, size_t n,
		  const struct ntfs_ib_spec *spec)
{
	if (n > 1)
		qsort_r(entries, n, sizeof(*entries), cmp_entries, (void *)spec);
}

void ntfs_index_build_free(struct ntfs_ib_result *r)
{
	free(r->root);
	free(r->blocks);
	memset(r, 0, sizeof(*r));
}
