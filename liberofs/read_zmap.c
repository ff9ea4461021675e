// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Read side: the lcluster index of a compressed inode (full 8-byte entries
 * or compact 4-byte and 2-byte packs, as Linux reads them) turned into a
 * checked list of extents.  Every lcluster is decoded; a head starts an
 * extent, a NONHEAD must look back to the last head (delta[0]) and ahead
 * to the next one (delta[1]), big pclusters take their block count from
 * the CBLKCNT lcluster after the head.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "erofs/erofs_fs.h"
#include "erofs/read.h"

#define ADVISE_COMPACTED_2B	0x0001u
/* raw pclusters rotated: the extent's first byte at its offset in a block */
#define ADVISE_INTERLACED	0x0010u
#define ADVISE_KNOWN		(ADVISE_COMPACTED_2B | Z_EROFS_ADVISE_BIG_PCLUSTER_1 | \
				 Z_EROFS_ADVISE_BIG_PCLUSTER_2 | \
				 Z_EROFS_ADVISE_INLINE_PCLUSTER | \
				 Z_EROFS_ADVISE_FRAGMENT_PCLUSTER | \
				 ADVISE_INTERLACED)

/* one per lcluster of the file (16 bytes: the 76 MB file of the bench
 * image has 18,600): a head's fields share room with a NONHEAD's */
struct lcl {
	uint8_t type;
	bool partial;		/* HEAD of a full index: PARTIAL_REF */
	uint16_t ofs;		/* HEAD: clusterofs */
	union {
		uint32_t pblk;	/* HEAD */
		uint32_t d0;	/* NONHEAD */
	};
	uint32_t d1;		/* NONHEAD */
	uint32_t cblks;		/* NONHEAD with CBLKCNT */
};

struct zmap {
	struct erofs_img *img;
	const struct erofs_rinode *ino;
	uint64_t ebase;		/* first index byte */
	uint64_t total;		/* lclusters */
	unsigned int lbits;
	unsigned int lobits;	/* compact entries: at least 12 bits of lo */
	uint16_t advise;
	bool compact;
};

static uint32_t le32_at(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static int load_full(struct zmap *z, uint64_t lcn, struct lcl *l)
{
	uint64_t at = z->ebase + lcn * 8u;
	const uint8_t *p = erofs_img_at(z->img, at, 8, "lcluster index");
	uint16_t adv, d0;

	if (!p)
		return -EUCLEAN;
	adv = (uint16_t)(p[0] | p[1] << 8);
	l->type = adv & 3u;
	l->ofs = (uint16_t)(p[2] | p[3] << 8);
	if (l->type == Z_EROFS_LCLUSTER_TYPE_NONHEAD) {
		d0 = (uint16_t)(p[4] | p[5] << 8);
		l->d1 = (uint16_t)(p[6] | p[7] << 8);
		if (d0 & Z_EROFS_LI_D0_CBLKCNT) {
			l->cblks = d0 & ~Z_EROFS_LI_D0_CBLKCNT;
			l->d0 = 1;
		} else {
			l->d0 = d0;
		}
	} else {
		l->pblk = le32_at(p + 4);
		l->partial = adv & Z_EROFS_LI_PARTIAL_REF;
	}
	return 0;
}

/* entry I of a compact pack at IN: lo bits and type */
static uint32_t cbits(const struct zmap *z, const uint8_t *in,
		      unsigned int bitpos, uint8_t *type)
{
	uint32_t v = le32_at(in + bitpos / 8) >> (bitpos & 7);

	*type = (uint8_t)((v >> z->lobits) & 3u);
	return v & ((1u << z->lobits) - 1);
}

/* byte of compact entry LCN and its size's log2 (*SHIFT) */
static uint64_t compact_pos(const struct zmap *z, uint64_t lcn,
			    unsigned int *shift)
{
	uint64_t init4 = ((32u - z->ebase % 32u) / 4u) & 7u, n2b = 0, pos;

	if ((z->advise & ADVISE_COMPACTED_2B) && init4 < z->total)
		n2b = (z->total - init4) / 16u * 16u;
	pos = z->ebase;
	if (lcn < init4) {
		*shift = 2;
	} else {
		pos += init4 * 4u;
		lcn -= init4;
		if (lcn < n2b) {
			*shift = 1;
		} else {
			pos += n2b * 2u;
			lcn -= n2b;
			*shift = 2;
		}
	}
	return pos + (lcn << *shift);
}

static int load_compact(struct zmap *z, uint64_t lcn, struct lcl *l)
{
	const bool big = z->advise & Z_EROFS_ADVISE_BIG_PCLUSTER_1;
	unsigned int shift, vcnt, enc, i;
	uint64_t pos = compact_pos(z, lcn, &shift);
	const uint8_t *in;
	uint32_t lo, nblk;
	uint8_t type;

	if (shift == 2 && z->lobits <= 14)
		vcnt = 2;
	else if (shift == 1 && z->lobits <= 12)
		vcnt = 16;
	else
		return erofs_unsupported(z->img, "inode %" PRIu64 ": compact index with %u-bit lclusters",
					 z->ino->nid, z->lbits);
	enc = ((vcnt << shift) - 4u) * 8u / vcnt;
	/* packs are aligned to their size (the 2-byte run starts 32-byte
	 * aligned, ebase is 8-byte aligned) */
	{
		uint64_t packsz = vcnt << shift, base = pos & ~(packsz - 1);

		in = erofs_img_at(z->img, base, packsz, "compact lcluster index");
		if (!in)
			return -EUCLEAN;
		i = (unsigned int)((pos - base) >> shift);
	}
	lo = cbits(z, in, enc * i, &type);
	l->type = type;
	if (type == Z_EROFS_LCLUSTER_TYPE_NONHEAD) {
		uint32_t d1 = 0, lo2 = 0;
		unsigned int j = i;
		uint8_t t2;

		do {
			lo2 = cbits(z, in, enc * j, &t2);
			if (t2 != Z_EROFS_LCLUSTER_TYPE_NONHEAD)
				break;
			++d1;
		} while (++j < vcnt);
		if (j == vcnt && !(lo2 & Z_EROFS_LI_D0_CBLKCNT))
			d1 += lo2 - 1;
		l->d1 = d1;
		if (lo & Z_EROFS_LI_D0_CBLKCNT) {
			if (!big)
				return erofs_corrupt(z->img, "inode %" PRIu64 ": block count in lcluster %" PRIu64 " without big pclusters",
						     z->ino->nid, lcn);
			l->cblks = lo & ~Z_EROFS_LI_D0_CBLKCNT;
			l->d0 = 1;
		} else if (i + 1 != vcnt) {
			l->d0 = lo;
		} else {
			lo = i ? cbits(z, in, enc * (i - 1), &t2) : 0;
			if (!i || t2 != Z_EROFS_LCLUSTER_TYPE_NONHEAD)
				lo = 0;
			else if (lo & Z_EROFS_LI_D0_CBLKCNT)
				lo = 1;
			l->d0 = lo + 1;
		}
		return 0;
	}
	l->ofs = (uint16_t)lo;
	nblk = big ? 0 : 1;
	while (i > 0) {
		--i;
		lo = cbits(z, in, enc * i, &type);
		if (type != Z_EROFS_LCLUSTER_TYPE_NONHEAD) {
			++nblk;
		} else if (!big) {
			if (lo > i) {
				i = 0;
				continue;
			}
			i -= lo;
			++nblk;
			if (!i)
				continue;
		} else if (lo & Z_EROFS_LI_D0_CBLKCNT) {
			nblk += lo & ~Z_EROFS_LI_D0_CBLKCNT;
			if (!i)
				break;
			--i;
		} else {
			if (lo <= 1)
				return erofs_corrupt(z->img, "inode %" PRIu64 ": bogus delta %u in compact index pack",
						     z->ino->nid, lo);
			if (lo - 2 > i)
				i = 0;
			else
				i -= lo - 2;
		}
	}
	l->pblk = le32_at(in + (vcnt << shift) - 4u) + nblk;
	return 0;
}

static int bad(struct zmap *z, uint64_t lcn, const char *what)
{
	return erofs_corrupt(z->img, "inode %" PRIu64 ": lcluster %" PRIu64 " of its index (from byte %" PRIu64 "): %s",
			     z->ino->nid, lcn, z->ebase, what);
}

int erofs_read_zmap(struct erofs_img *img, const struct erofs_rinode *ino,
		    erofs_extent_fn fn, void *ctx)
{
	struct zmap z = { .img = img, .ino = ino };
	struct z_erofs_map_header h;
	uint64_t hpos = (erofs_inode_end(ino) + 7u) & ~(uint64_t)7u, lc;
	const uint8_t *p;
	struct lcl *l = NULL;
	int ret = 0;

	z.compact = ino->layout == EROFS_LAYOUT_COMPRESSED_COMPACT;
	p = erofs_img_at(img, hpos, sizeof(h), "compression map header");
	if (!p)
		return -EUCLEAN;
	memcpy(&h, p, sizeof(h));
	if (h.h_clusterbits >> Z_EROFS_FRAGMENT_INODE_BIT) {
		/* the whole file in the packed inode, at the offset the other
		 * 63 bits of the header hold */
		uint64_t v;

		memcpy(&v, &h, 8);
		if (!img->packed_nid)
			return erofs_corrupt(img, "inode %" PRIu64 ": whole file in the packed inode (map header at byte %" PRIu64 ") but the image has none",
					     ino->nid, hpos);
		if (!ino->size)
			return 0;
		return fn(ctx, &(struct erofs_rextent){
			.llen = ino->size, .frag = true,
			.fragoff = le64toh(v) ^ (1ull << 63) });
	}
	z.advise = le16toh(h.h_advise);
	if (z.advise & ~ADVISE_KNOWN)
		return erofs_unsupported(img, "inode %" PRIu64 ": compression features 0x%x (ztailpacking, fragments, interlaced) are not supported",
					 ino->nid, z.advise & ~ADVISE_KNOWN);
	if ((z.advise & Z_EROFS_ADVISE_FRAGMENT_PCLUSTER) &&
	    (z.advise & Z_EROFS_ADVISE_INLINE_PCLUSTER))
		return erofs_corrupt(img, "inode %" PRIu64 ": map header at byte %" PRIu64 " asks for both an inline and a fragment tail",
				     ino->nid, hpos);
	if ((z.advise & Z_EROFS_ADVISE_FRAGMENT_PCLUSTER) && !img->packed_nid)
		return erofs_corrupt(img, "inode %" PRIu64 ": tail in the packed inode (map header at byte %" PRIu64 ") but the image has none",
				     ino->nid, hpos);
	if (h.h_clusterbits & ~7u)
		return erofs_unsupported(img, "inode %" PRIu64 ": map header cluster bits 0x%x are not supported",
					 ino->nid, h.h_clusterbits);
	if ((z.advise & (Z_EROFS_ADVISE_BIG_PCLUSTER_1 | Z_EROFS_ADVISE_BIG_PCLUSTER_2)) &&
	    !(img->feature_incompat & EROFS_INCOMPAT_BIG_PCLUSTER))
		return erofs_corrupt(img, "inode %" PRIu64 ": big pclusters at byte %" PRIu64 " without the superblock feature",
				     ino->nid, hpos + 4);
	if (z.compact && !!(z.advise & Z_EROFS_ADVISE_BIG_PCLUSTER_1) !=
			 !!(z.advise & Z_EROFS_ADVISE_BIG_PCLUSTER_2))
		return erofs_corrupt(img, "inode %" PRIu64 ": compact index with inconsistent big pcluster bits at byte %" PRIu64,
				     ino->nid, hpos + 4);
	z.lbits = img->blkszbits + (h.h_clusterbits & 7u);
	z.lobits = z.lbits < 12 ? 12 : z.lbits;
	lc = 1ull << z.lbits;
	z.total = ino->size / lc + !!(ino->size % lc);
	if (z.total > img->size / 2u)
		return erofs_corrupt(img, "inode %" PRIu64 ": size %" PRIu64 " needs an index larger than the image",
				     ino->nid, ino->size);
	z.ebase = hpos + sizeof(h) + (z.compact ? 0u : 8u);
	if (!z.total)
		return 0;
	l = calloc(z.total, sizeof(*l));
	if (!l) {
		ret = -ENOMEM;
		snprintf(img->err, sizeof(img->err), "out of memory");
		goto out;
	}
	for (uint64_t i = 0; i < z.total; i++) {
		ret = z.compact ? load_compact(&z, i, &l[i]) : load_full(&z, i, &l[i]);
		if (ret)
			goto out;
		if (l[i].type == Z_EROFS_LCLUSTER_TYPE_NONHEAD)
			continue;
		if (l[i].type == 3) {
			ret = bad(&z, i, "reserved lcluster type 3");
			goto out;
		}
		if (l[i].ofs >= lc) {
			ret = bad(&z, i, "cluster offset beyond the lcluster");
			goto out;
		}
	}
	if (l[0].type == Z_EROFS_LCLUSTER_TYPE_NONHEAD || l[0].ofs) {
		ret = bad(&z, 0, "the file does not start with an extent head");
		goto out;
	}
	{
		uint64_t last = 0, next;

		for (uint64_t i = 0; i < z.total; i++) {
			if (l[i].type != Z_EROFS_LCLUSTER_TYPE_NONHEAD) {
				last = i;
				continue;
			}
			for (next = i + 1; next < z.total &&
			     l[next].type == Z_EROFS_LCLUSTER_TYPE_NONHEAD; next++)
				;
			if (!l[i].d0 || l[i].d0 > i - last) {
				ret = bad(&z, i, "look-back distance (delta[0]) misses the extent head");
				goto out;
			}
			if (l[i].cblks && i != last + 1) {
				ret = bad(&z, i, "block count (CBLKCNT) not right after the head");
				goto out;
			}
			if (!l[i].d1 || l[i].d1 > next - i) {
				ret = bad(&z, i, "look-ahead distance (delta[1]) misses the next head");
				goto out;
			}
		}
	}
	for (uint64_t i = 0; i < z.total; i++) {
		struct erofs_rextent ebuf = { 0 }, *e = &ebuf;
		uint64_t j, end, cblks = lc >> img->blkszbits;
		bool big;

		if (l[i].type == Z_EROFS_LCLUSTER_TYPE_NONHEAD)
			continue;
		e->la = i * lc + l[i].ofs;
		if (e->la >= ino->size)
			break;
		for (j = i + 1; j < z.total &&
		     l[j].type == Z_EROFS_LCLUSTER_TYPE_NONHEAD; j++)
			;
		end = j < z.total ? j * lc + l[j].ofs : ino->size;
		if (end > ino->size)
			end = ino->size;
		e->llen = end - e->la;
		e->plain = l[i].type == Z_EROFS_LCLUSTER_TYPE_PLAIN;
		/* a raw head's bytes are its extent already */
		e->partial = l[i].partial && !e->plain;
		e->interlaced = e->plain && (z.advise & ADVISE_INTERLACED);
		if (end == ino->size &&
		    (z.advise & Z_EROFS_ADVISE_FRAGMENT_PCLUSTER)) {
			/* the tail extent: in the packed inode; a full index
			 * keeps the offset's high bits in its block */
			uint32_t lo;

			/* from the header's copy: P, the cache's window of
			 * the header, may be gone after the index's reads */
			memcpy(&lo, &h, 4);
			e->frag = true;
			e->plain = false;
			e->partial = false;
			e->fragoff = le32toh(lo) |
				     (z.compact ? 0 : (uint64_t)l[i].pblk << 32);
			ret = fn(ctx, e);
			if (ret)
				goto out;
			continue;
		}
		if (end == ino->size &&
		    (z.advise & Z_EROFS_ADVISE_INLINE_PCLUSTER)) {
			/* the tail extent: inline right after the index */
			unsigned int sh;
			uint64_t last = (ino->size - 1) >> z.lbits;

			if (z.compact) {
				uint64_t pos = compact_pos(&z, last, &sh);
				uint64_t pack = sh == 2 ? 8u : 32u;

				e->pa = pos / pack * pack + pack;
			} else {
				e->pa = z.ebase + (last + 1) * 8u;
			}
			e->plen = le16toh(h.h_idata_size);
			if (!e->plen || (e->pa & (img->blksz - 1)) + e->plen > img->blksz) {
				ret = bad(&z, i, "inline tail pcluster empty or crossing a block boundary");
				goto out;
			}
			if (!erofs_img_has(img, e->pa, e->plen, "inline pcluster")) {
				ret = bad(&z, i, "inline pcluster beyond the image end");
				goto out;
			}
			if (e->plain && e->llen > e->plen) {
				ret = bad(&z, i, "raw inline extent longer than its bytes");
				goto out;
			}
			if (!e->plain) {
				e->alg = l[i].type == Z_EROFS_LCLUSTER_TYPE_HEAD1 ?
					 h.h_algorithmtype & 15u : h.h_algorithmtype >> 4;
				if (!(img->compr_algs & (1u << e->alg))) {
					ret = bad(&z, i, "compression algorithm not enabled in the superblock");
					goto out;
				}
			}
			ret = fn(ctx, e);
			if (ret)
				goto out;
			continue;
		}
		big = l[i].type == Z_EROFS_LCLUSTER_TYPE_HEAD1 ?
		      z.advise & Z_EROFS_ADVISE_BIG_PCLUSTER_1 :
		      z.advise & Z_EROFS_ADVISE_BIG_PCLUSTER_2;
		if (big && (i + 1) * lc < ino->size) {
			if (i + 1 >= z.total ||
			    l[i + 1].type != Z_EROFS_LCLUSTER_TYPE_NONHEAD)
				cblks = 1;
			else if (l[i + 1].cblks)
				cblks = l[i + 1].cblks;
			else {
				ret = bad(&z, i + 1, "no block count (CBLKCNT) after a big pcluster head");
				goto out;
			}
		}
		e->pa = (uint64_t)l[i].pblk << img->blkszbits;
		e->plen = (uint32_t)(cblks << img->blkszbits);
		if (cblks << img->blkszbits > Z_EROFS_PCLUSTER_MAX_SIZE) {
			ret = bad(&z, i, "pcluster larger than 1 MiB");
			goto out;
		}
		if (!erofs_img_has(img, e->pa, e->plen, "pcluster")) {
			ret = bad(&z, i, "pcluster beyond the image end");
			goto out;
		}
		if (e->llen > EROFS_READ_MAX_EXTENT) {
			ret = bad(&z, i, "extent longer than 16 MiB");
			goto out;
		}
		if (e->plain) {
			if (e->llen > e->plen) {
				ret = bad(&z, i, "raw extent longer than its pcluster");
				goto out;
			}
		} else {
			e->alg = l[i].type == Z_EROFS_LCLUSTER_TYPE_HEAD1 ?
				 h.h_algorithmtype & 15u : h.h_algorithmtype >> 4;
			if (!(img->compr_algs & (1u << e->alg))) {
				ret = bad(&z, i, "compression algorithm not enabled in the superblock");
				goto out;
			}
		}
		ret = fn(ctx, e);
		if (ret)
			goto out;
	}
out:
	free(l);
	return ret;
}
