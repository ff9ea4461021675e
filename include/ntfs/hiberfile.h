/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libntfs: is Windows hibernated on a volume?  Windows 8 and later shut
 * down with Fast Startup by default, which hibernates the kernel session:
 * the root's hiberfil.sys then starts with the signature "HIBR" ("hibr"
 * before Windows 8), and Windows' cached view of the volume's metadata is
 * written back on resume, over anything written meanwhile.  After a resume
 * the header says "wake"/"WAKE" or is zeroed: no image waits.
 *
 * The probe reads only what it needs through the fsforge device layer,
 * from a boot sector's geometry alone (no checker pass has run): $MFT's
 * record 0 for its runs, the root (record 5), its $I30 index for the name
 * hiberfil.sys, that file's record and the first 4 bytes of its unnamed
 * $DATA (resident or not; an $ATTRIBUTE_LIST naming the record that holds
 * its first extent is followed, whatever extents follow it: a large
 * hiberfil.sys is fragmented).  It never writes.  Those records are
 * read as the checker's pass 1 reads them, repaired in the probe's own
 * buffers only: a torn stride gets back the bytes its update sequence
 * array saved, an array out of place is found where the strides say, and
 * $MFT's record 0, when unusable, is taken from $MFTMirr (the boot
 * sector's mirror cluster); one torn record must not hide a hibernation,
 * since a repair would then write.  When the root's record or index
 * cannot be read whole, $MFT is read from record 16 on for the first base
 * record named hiberfil.sys (any case) in the root (a cost linear in the
 * records before it, paid on such a damaged volume only).  Anything it
 * cannot still read or that does not parse -- no such file, a record
 * beyond that repair, a $DATA shorter than 4 bytes or whose first cluster
 * is a hole -- is "not hibernated": the state only a whole, readable
 * header can prove.
 */
#ifndef NTFS_HIBERFILE_H
#define NTFS_HIBERFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "fsforge/dev.h"
#include "ntfs/read.h"

enum ntfs_hiber_state {
	NTFS_HIBER_NO_FILE,	/* no usable hiberfil.sys in the root */
	NTFS_HIBER_UNREADABLE,	/* found, but its header cannot be read */
	NTFS_HIBER_CLEAR,	/* header read: no image waits */
	NTFS_HIBER_HIBERNATED,	/* header "hibr", any case */
};

struct ntfs_hiber {
	enum ntfs_hiber_state state;
	uint64_t recno;		/* hiberfil.sys's record (from NTFS_HIBER_
				 * UNREADABLE on) */
	uint8_t head[4];	/* its first bytes (CLEAR, HIBERNATED) */
};

/* Probe the volume on DEV (DEV->size bytes) from its primary boot sector
 * and, when that is not valid or its geometry does not lead to
 * hiberfil.sys, from a backup in the device's last sector (512 or 4096
 * bytes).  Fills H (the furthest a geometry got); true only for
 * NTFS_HIBER_HIBERNATED.  Never writes; $MFT's record 0 (and its
 * $MFTMirr copy when it is unusable), the root's record and index (with
 * them damaged, the records up to the first named hiberfil.sys in the
 * root), one record and 4 bytes are read. */
bool ntfs_hibernated(struct fsf_dev *dev, struct ntfs_hiber *h);

#endif
