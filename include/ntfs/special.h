/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libntfs read side for the attributes that carry special files and POSIX
 * metadata: $REPARSE_POINT values (symbolic links, junctions, the WSL and
 * Linux driver tags for special files) and extended attributes
 * ($EA_INFORMATION and the $EA entry chain).  Bounded parsers over
 * untrusted bytes, no I/O (libntfs/reparse.c, libntfs/ea.c; fuzzed).
 */
#ifndef NTFS_SPECIAL_H
#define NTFS_SPECIAL_H

#include <stdbool.h>
#include <stdint.h>

/* reparse tags (bit 31: Microsoft's; bit 29: name surrogate) */
#define NTFS_RT_MOUNT_POINT	0xa0000003u	/* junction or volume mount point */
#define NTFS_RT_SYMLINK		0xa000000cu
#define NTFS_RT_LX_SYMLINK	0xa000001du	/* WSL: UTF-8 target */
#define NTFS_RT_AF_UNIX		0x80000023u	/* WSL socket */
#define NTFS_RT_LX_FIFO		0x80000024u
#define NTFS_RT_LX_CHR		0x80000025u
#define NTFS_RT_LX_BLK		0x80000026u
#define NTFS_RT_MICROSOFT	0x80000000u

#define NTFS_REPARSE_MAX	16384u	/* largest value ($AttrDef) */
#define NTFS_FA_REPARSE_POINT	0x0400u	/* file attribute flag */
#define NTFS_SYMLINK_RELATIVE	0x00000001u

/* A parsed $REPARSE_POINT value (pointers into it). */
struct ntfs_reparse_view {
	uint32_t tag;
	uint16_t data_len;		/* the header's reparse data length */
	uint32_t header_len;		/* 8, or 24 with a GUID (third-party tags) */
	const uint8_t *data;		/* data_len bytes after the header */
	/* symbolic link and mount point: UTF-16LE names (unaligned) */
	const uint8_t *subst, *print;
	uint16_t subst_len, print_len;	/* in bytes */
	uint32_t flags;			/* symbolic link: NTFS_SYMLINK_RELATIVE */
	/* LX_SYMLINK: the target in UTF-8 */
	const uint8_t *target;
	uint32_t target_len;
};

/* Parse VAL (LEN bytes, the whole attribute value): 0, or -1 with WHY.
 * A tag the parser does not know is accepted when its header is sound. */
int ntfs_reparse_parse(const uint8_t *val, uint32_t len,
		       struct ntfs_reparse_view *rp, char *why);
/* A value whose header says another data length than LEN: the length the
 * value really has, if the tag's own content is whole with it (the header
 * length is then the one thing wrong).  0 when it cannot be told. */
uint32_t ntfs_reparse_fixable_len(const uint8_t *val, uint32_t len);
/* "symlink", "junction", "LX_FIFO", ..., or "tag 0x%08x" in BUF */
const char *ntfs_reparse_tag_name(uint32_t tag, char *buf, unsigned int size);

/* ---- extended attributes ---- */
#define NTFS_EA_NEED_EA		0x80u
#define NTFS_EA_INFO_LEN	8u

/* $EA_INFORMATION */
struct ntfs_ea_info {
	uint16_t packed_size;		/* sum of 5 + name + value lengths */
	uint16_t need_ea;		/* entries flagged NTFS_EA_NEED_EA */
	uint32_t unpacked_size;		/* bytes of the $EA value */
};

/* One $EA entry (pointers into the value). */
struct ntfs_ea_view {
	uint32_t off, size;		/* where it is, bytes it takes */
	uint8_t flags, name_len;
	uint16_t value_len;
	const uint8_t *name, *value;
};

/* The next entry of an $EA value V of LEN bytes at *OFF: 1 (and *OFF
 * advanced), 0 at the end, -1 corrupt (WHY). */
int ntfs_ea_next(const uint8_t *v, uint32_t len, uint32_t *off,
		 struct ntfs_ea_view *e, char *why);

/* What a chain of entries adds up to. */
struct ntfs_ea_sum {
	uint32_t count;			/* entries that parse */
	uint32_t valid_len;		/* bytes they take (the valid prefix) */
	uint32_t packed;		/* their packed size */
	uint16_t need_ea;
	bool whole;			/* the whole value parses */
	bool duplicate;			/* two entries with one name */
};
/* Walk V: 0 when whole, -1 with WHY when it breaks (S then describes the
 * entries before the break). */
int ntfs_ea_sum(const uint8_t *v, uint32_t len, struct ntfs_ea_sum *s,
		char *why);
/* Mend the chain of V in place: every entry that is whole (header, name,
 * value, a name no entry before has) is kept, up to the first that is
 * not; an entry that is not whole but whose next-entry offset leads to
 * one that is is taken out (the value shrinks by it) and the walk goes
 * on there; a next-entry offset that does not hold is set to where its entry
 * ends when an entry is there, else to 0 (the last).  The entries kept;
 * *NEWLEN: the bytes they take (the value is to be cut there). */
uint32_t ntfs_ea_mend(uint8_t *v, uint32_t len, uint32_t *newlen);
/* Parse an $EA_INFORMATION value: 0, or -1 with WHY. */
int ntfs_ea_info_parse(const uint8_t *v, uint32_t len, struct ntfs_ea_info *i,
		       char *why);
/* The $EA_INFORMATION value that describes S (8 bytes into OUT). */
void ntfs_ea_info_make(const struct ntfs_ea_sum *s, uint8_t *out);

#endif
