// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The problem table of fsck.ntfs: code (0xPPNNNN, PP = pass), stable id,
 * message, prompt and flags.  PREEN_OK marks what `fsck.ntfs -a` repairs
 * unattended at boot: every repair here either restores a copy the volume
 * keeps for that purpose (boot sector backup, $MFTMirr) or recomputes
 * derived data (bitmaps), except clearing an unreadable record, which
 * loses only what was already lost.
 */
#include "config.h"

#include "ntfs_problems.h"

#define ROW(name, code, id, msg, prompt, flags) \
	const struct fsf_problem name = { code, id, msg, prompt, flags }

/* pass 0: boot sector */
ROW(PR_BOOT_BOTH_BAD, 0x000001, "boot_sector_unusable",
    "no valid NTFS boot sector (primary: %s; backup: %s)",
    FSF_PROMPT_NONE, FSF_PR_FATAL);
ROW(PR_BOOT_PRIMARY_BAD, 0x000002, "boot_sector_bad",
    "boot sector is invalid (%s); the backup is valid",
    FSF_PROMPT_REPAIR, FSF_PR_PREEN_OK);
ROW(PR_BOOT_BACKUP_BAD, 0x000003, "boot_backup_bad",
    "backup boot sector is invalid (%s)",
    FSF_PROMPT_REPAIR, FSF_PR_PREEN_OK);
ROW(PR_BOOT_BACKUP_DIFFERS, 0x000004, "boot_backup_differs",
    "backup boot sector differs from the boot sector",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_GEOMETRY_UNCONFIRMED, 0x000005, "mft_location_unconfirmed",
    "location is not confirmed by the records there (boot sector: %s; backup: %s); nothing was written",
    FSF_PROMPT_NONE, FSF_PR_FATAL);
ROW(PR_MFT_LOCATION, 0x000008, "boot_mft_location",
    "boot sector puts $MFT at cluster %lld, its records are at cluster %lld",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_BOOT_RESERVED, 0x000009, "boot_reserved_nonzero",
    "byte 0x%02x is 0x%02x in both copies, not the zero NTFS leaves there (ntfs-3g and Windows refuse the volume)",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_VOLUME_TRUNCATED, 0x000006, "volume_truncated",
    "volume is %llu bytes but the device holds %llu: the last %llu bytes are missing and are checked as unreadable",
    FSF_PROMPT_NONE, FSF_PR_NO_FIX);
ROW(PR_MIRROR_UNVERIFIED, 0x000007, "mftmirr_location_unverified",
    "location is not verified (no mirror records at the boot sector's cluster %lld or where its own runlist says); the mirror is neither used nor written",
    FSF_PROMPT_NONE, FSF_PR_NO_FIX);

/* pass 1: $MFT and its records */
ROW(PR_MFT_UNREADABLE, 0x010001, "mft_unreadable",
    "$MFT record 0 is unusable (%s) and so is its mirror (%s)",
    FSF_PROMPT_NONE, FSF_PR_FATAL);
ROW(PR_MFT_FROM_MIRROR, 0x010002, "mft_record_from_mirror",
    "record is unusable (%s); $MFTMirr holds a valid copy",
    FSF_PROMPT_REPAIR, FSF_PR_PREEN_OK);
/* record 0 older than its mirror copy (an old copy written back over
 * the MFT's first records, a partial restore): the mirror's runs extend
 * its runs and map records in use past them */
ROW(PR_MFT_MIRROR_NEWER, 0x010072, "mft_record_older_than_mirror",
    "record is older than its $MFTMirr copy (%s); the copy is used",
    FSF_PROMPT_REPAIR, FSF_PR_PREEN_OK);
ROW(PR_MIRROR_DIFFERS, 0x010003, "mftmirr_differs",
    "$MFTMirr copy differs from $MFT",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_MFT_DATA_BAD, 0x010004, "mft_data_bad",
    "$MFT's data attribute is unusable (%s)",
    FSF_PROMPT_NONE, FSF_PR_FATAL);
/* Records the $MFT bitmap has in use, FILE records in use, past $MFT's
 * data size but inside its allocation: the size grows to hold them (a
 * driver that grew the MFT was cut off before it wrote the size). */
ROW(PR_MFT_SIZE_SHORT, 0x010005, "mft_data_size_short",
    "$MFT's data size of %llu records hides %llu records in use past it; it becomes %llu records",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
/* FILE records numbered in sequence right after $MFT's last run, past
 * its allocation: a stale record 0 (lost write, old copy written back)
 * no longer maps the clusters the MFT grew into; its last run grows. */
ROW(PR_MFT_TAIL_LOST, 0x010006, "mft_tail_lost",
    "$MFT's runs end at record %llu, %llu more records follow them in sequence; its last run grows by %llu clusters",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
/* The same when the MFT's next extent was put elsewhere (the clusters
 * after its last run taken): the one FILE record numbered where its runs
 * end, in clusters $Bitmap has in use and no MFT record in use claims,
 * and the records in sequence after it; a run is added for them.  When
 * that is not certain (two such records, or clusters a record claims) the check
 * stops: going on would lose every file there. */
ROW(PR_MFT_TAIL_MOVED, 0x010007, "mft_tail_elsewhere",
    "$MFT's runs end at record %llu, the bitmap has records past them in use and %llu records follow in sequence at cluster %lld; a run of %llu clusters is added",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_MFT_TAIL_LEFT, 0x010008, "mft_tail_not_found",
    "$MFT's runs end at record %llu but the bitmap has records past them in use, and where they are is not certain (%s); nothing is checked",
    FSF_PROMPT_NONE, FSF_PR_FATAL);
ROW(PR_RECORD_CORRUPT, 0x010010, "record_corrupt",
    "record is in use but corrupt (%s); its file is lost",
    FSF_PROMPT_CLEAR, FSF_PR_PREEN_OK);
ROW(PR_RECORD_ATTR_CORRUPT, 0x010011, "record_attribute_corrupt",
    "attributes are corrupt (%s); the file is lost",
    FSF_PROMPT_CLEAR, FSF_PR_PREEN_OK);
ROW(PR_RECORD_RUNS_BAD, 0x010012, "record_runlist_bad",
    "attribute 0x%x has a bad runlist (%s); the file is lost",
    FSF_PROMPT_CLEAR, FSF_PR_PREEN_OK);
ROW(PR_RECORD_NUMBER, 0x010013, "record_number_wrong",
    "record says it is number %u",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
/* a misdirected write: the same block at its place and at this one */
ROW(PR_RECORD_MISPLACED, 0x01007d, "record_misplaced_copy",
    "record is a copy of MFT record %u written in the wrong place; the file it held is lost",
    FSF_PROMPT_CLEAR, FSF_PR_PREEN_OK);
/* the same in a slot the $MFT bitmap marks free: nothing was lost there */
ROW(PR_RECORD_MISPLACED_FREE, 0x01007f, "record_misplaced_copy_free_slot",
    "free record is a copy of MFT record %u written in the wrong place",
    FSF_PROMPT_CLEAR, FSF_PR_PREEN_OK);
/* the write missed its place, which kept its older version: written
 * back there (the copy is then cleared as one of the two above) */
ROW(PR_RECORD_NEWER_ELSEWHERE, 0x010080, "record_newer_copy_misplaced",
    "its own slot holds an older version; the newer one, written to MFT record %llu by mistake, is put back",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_SYSTEM_FILE_MISSING, 0x010020, "system_file_missing",
    "system file is not in use",
    FSF_PROMPT_NONE, FSF_PR_FATAL);
/* only the in-use flag lost: the record still names itself and its
 * place in the root; the flag is set back, nothing else changes */
ROW(PR_SYSTEM_FILE_UNUSED, 0x010075, "system_file_unused_flag",
    "system file is marked not in use but its record is intact; marked in use (a directory again if it has its index)",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_SYSTEM_RECORD_CORRUPT, 0x010021, "system_record_corrupt",
    "system file record is corrupt (%s) and has no valid mirror copy",
    FSF_PROMPT_NONE, FSF_PR_FATAL);
ROW(PR_SYSTEM_SEQUENCE, 0x010022, "system_record_sequence",
    "sequence number is %u, should be %u",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_MIRROR_LOCATION, 0x010023, "boot_mftmirr_location",
    "boot sector puts $MFTMirr at cluster %lld, its data is at cluster %lld",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_LINK_COUNT, 0x010024, "record_link_count",
    "link count is %u, the record has %u names",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_RECORD_FLAGS, 0x010025, "record_flags_unknown",
    "record flags 0x%x have bits that do not belong to this record",
    FSF_PROMPT_CLEAR, FSF_PR_PREEN_OK);
ROW(PR_RECORD_NOT_DIRECTORY, 0x010026, "record_directory_flag",
    "record is marked as a directory but has no index and its names are a file's",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
/* A base user record without what every file has: the smallest thing
 * that makes it whole is added (its names and data are never touched). */
ROW(PR_RECORD_IS_DIRECTORY, 0x01002a, "record_directory_flag_missing",
    "record is not marked as a directory but holds a file-name index and no unnamed data; it is marked as one",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_RECORD_SI_MISSING, 0x01002b, "standard_information_missing",
    "record has no $STANDARD_INFORMATION; one is made from its $FILE_NAME's times and attributes",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_RECORD_DATA_MISSING, 0x01002c, "unnamed_data_missing",
    "file has no unnamed $DATA; an empty one is added",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_ATTR_EXTENT, 0x010027, "attribute_extent_sizes",
    "attribute 0x%x: its runs hold %llu clusters, its header says VCNs %lld-%lld and %llu bytes allocated",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
/* a compressed attribute's runs longer than its header by a hole that
 * ends past its compression unit: the hole is cut back, the data stays */
ROW(PR_ATTR_HOLE_LONG, 0x010073, "attribute_hole_too_long",
    "attribute 0x%x: its runs hold %llu clusters, its header says VCNs %lld-%lld; the hole of run %ld runs %llu cluster(s) past its compression unit",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
/* a file's runs longer than its header, whose allocation and data size
 * need none of the clusters past its highest VCN: the last run is cut
 * back (a run length one too big, often onto another file's clusters) */
ROW(PR_ATTR_RUN_LONG, 0x010078, "attribute_run_too_long",
    "attribute 0x%x: its runs hold %llu clusters, its header says VCNs %lld-%lld and %llu bytes allocated, %llu of data; its last run is cut back by %llu cluster(s)",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_EXTENSION_ORPHAN, 0x010028, "extension_record_orphan",
    "extension record of MFT record %llu, which %s",
    FSF_PROMPT_CLEAR, FSF_PR_PREEN_OK);
ROW(PR_SYSTEM_BASE, 0x010029, "system_record_extension",
    "system file record claims to extend MFT record %llu",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
/* a file's record (it holds $STANDARD_INFORMATION) claims a base that
 * does not list it: the reference is the damage, the file is kept */
ROW(PR_BASE_REFERENCE, 0x0100e0, "base_record_reference",
    "holds $STANDARD_INFORMATION as a file's base record does, but claims to extend MFT record %llu, which does not list it",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
/* pass 1: system records beyond repair made again (pass1_system.c) */
ROW(PR_SYSTEM_RECORD_REMADE, 0x010060, "system_record_remade",
    "system file record is unusable (%s); make it again as mkfs.ntfs makes it%s",
    FSF_PROMPT_REPAIR, FSF_PR_PREEN_OK);
ROW(PR_SYSTEM_REMAKE_FAILED, 0x010061, "system_record_remake_failed",
    "system file record cannot be made again: %s",
    FSF_PROMPT_NONE, FSF_PR_FATAL);
ROW(PR_ATTR_VALUE_SHORT, 0x010063, "attribute_value_too_short",
    "attribute 0x%x: value of %u bytes is too short for its content, which says %u",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_UPCASE_CONTENT, 0x010062, "upcase_table_damaged",
    "%u entries of the table are neither the character nor its upper case (the first: U+%04X); write the standard table",
    FSF_PROMPT_REPAIR, FSF_PR_PREEN_OK);
ROW(PR_ATTRDEF_CONTENT, 0x010076, "attrdef_table_damaged",
    "table of %llu bytes does not parse or lacks the attribute types every NTFS defines; write the standard table",
    FSF_PROMPT_REPAIR, FSF_PR_PREEN_OK);
/* the same table with nowhere to write the standard one: smaller than
 * it, or its data a hole (reads as zeros, a write would skip it) */
ROW(PR_ATTRDEF_UNWRITABLE, 0x010077, "attrdef_table_unwritable",
    "table of %llu bytes does not parse or lacks the attribute types every NTFS defines, and the standard table cannot be written over it (%s); left as it is",
    FSF_PROMPT_NONE, FSF_PR_NO_FIX);
/* pass 1: attribute lists (pass1_attrlist.c).  The list is derived
 * data: the records that hold a file's attributes, and name it as their
 * base, say what it must be, so rebuilding it from them is PREEN_OK.  A
 * record the list names and whose attributes are exactly the ones listed
 * gets its lost base reference back (nothing else claims it). */
ROW(PR_ATTRLIST_BAD, 0x010064, "attribute_list_bad",
    "attribute list is wrong (%s); it is rebuilt from the records that point back at the file",
    FSF_PROMPT_REBUILD, FSF_PR_PREEN_OK);
/* said of the list rebuild just counted (now left, not fixed): not one
 * problem more */
ROW(PR_ATTRLIST_REBUILD_FAILED, 0x010065, "attribute_list_not_rebuilt",
    "attribute list cannot be rebuilt (%s): the fix above is left",
    FSF_PROMPT_NONE, 0);
ROW(PR_EXTENSION_BASE, 0x010066, "extension_record_base",
    "extension record says its base is MFT record %llu, but it holds the attributes %s lists for it",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_EXTENSION_FREED, 0x010067, "extension_record_freed",
    "extension record is marked free but holds the attributes %s lists for it; it is put back in use",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
/* An extent of a non-resident attribute lost with its record (zeroed,
 * BAAD): the extents after it would start past a gap, and readers refuse
 * the attribute.  The gap becomes a hole at the head of the next extent,
 * so the rest of the file stays where it was (sizes kept; the lost range
 * reads as zeros). */
ROW(PR_ATTR_HOLE, 0x010068, "attribute_extent_lost",
    "attribute 0x%x: clusters %llu-%llu (VCNs) were in a lost extent; they become a hole (zeros), the rest of the file kept at its offsets",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
/* The same gap in an attribute that is neither sparse nor compressed:
 * holes are allowed only in those, so it is made sparse first (each
 * extent's header 8 bytes longer, as writers lay sparse extents out),
 * when every record of it has room; otherwise it is left, reported. */
ROW(PR_ATTR_HOLE_SPARSE, 0x01006d, "attribute_extent_lost_sparse",
    "attribute 0x%x: clusters %llu-%llu (VCNs) were in a lost extent; the attribute is made sparse and they become a hole (zeros), the rest of the file kept at its offsets",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_ATTR_GAP_LEFT, 0x01006e, "attribute_extent_lost_no_room",
    "attribute 0x%x: clusters %llu-%llu (VCNs) were in a lost extent; the attribute is not sparse and its records have no room to make it so",
    FSF_PROMPT_NONE, FSF_PR_NO_FIX);
/* The same gap in an attribute that may not be sparse (anything but a
 * user file's $DATA: an index allocation with a hole is unreadable, the
 * metadata files' data is read whole): reported and left (a directory's
 * $I30 allocation, $ObjId's $O and $Reparse's $R are not reported:
 * pass 3 rebuilds them from the children's names, the files' object ids
 * and reparse points). */
ROW(PR_ATTR_GAP_NOT_SPARSE, 0x010071, "attribute_extent_lost_left",
    "attribute 0x%x: clusters %llu-%llu (VCNs) were in a lost extent; the attribute is not sparse and may not be made so (only a user file's $DATA may be)",
    FSF_PROMPT_NONE, FSF_PR_NO_FIX);
ROW(PR_ATTR_TAIL_HOLE, 0x01006a, "attribute_tail_lost",
    "attribute 0x%x: clusters %llu-%llu (VCNs) after its last extent are mapped by none (an extent lost); they become a hole (zeros), the size kept",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_ATTR_TAIL_CUT, 0x01006b, "attribute_tail_cut",
    "attribute 0x%x: its extents map %llu clusters, its sizes say %llu (an extent lost); the sizes are cut to what is mapped (%llu bytes of data), every mapped cluster kept",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
/* pass 1: repair the smallest thing (pass1_salvage.c).  A record's
 * damage is repaired in the attribute it hits; the rows that only restore
 * what the record's own bytes say (a stride end saved in the update
 * sequence array, sizes recomputed from the runs, flag bits that do not
 * exist) lose nothing and are PREEN_OK.  Removing an attribute or the
 * attributes after a broken length loses only bytes no reader can reach
 * (the whole record was cleared before): PREEN_OK as PR_RECORD_CORRUPT
 * is.  A torn stride that holds attribute bytes is restored as well when
 * every attribute still parses (the stride's other bytes may be older, but
 * what they say is checked like any record's: clusters by pass 1, names by
 * the index pass; clearing the record instead, as before, lost it all).
 * A runlist cut short and a value length guessed from the room it has are
 * not certain: asked, never done by -a. */
ROW(PR_RECORD_TORN_UNUSED, 0x010040, "record_torn_unused_stride",
    "update sequence mismatch (torn write) in stride %u, past the attributes; its saved bytes are restored",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_RECORD_TORN_ATTRS, 0x010041, "record_torn_stride",
    "update sequence mismatch (torn write) in stride %u, inside the attributes, which still parse; its saved bytes are restored",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_RECORD_HEADER, 0x010049, "record_header_fields",
    "record header is invalid (%s%s%s); the strides and attribute frames say where things are",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_ATTR_FLAGS, 0x010042, "attribute_flags_unknown",
    "attribute 0x%x at %u has unknown flags 0x%x (0x%x kept)",
    FSF_PROMPT_CLEAR, FSF_PR_PREEN_OK);
ROW(PR_ATTR_SIZES, 0x010043, "attribute_sizes",
    "attribute 0x%x sizes are inconsistent (allocated %llu, data %llu, initialized %llu; should be %llu, %llu, %llu)",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_ATTR_VALUE_LENGTH, 0x010044, "attribute_value_length",
    "attribute 0x%x: value of %u bytes runs past the attribute; its content says %u",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_ATTR_VALUE_CUT, 0x010045, "attribute_value_cut",
    "attribute 0x%x: value of %u bytes runs past the attribute; only %u are there",
    FSF_PROMPT_FIX, 0);
/* the value length one bit off: the one length a bit away that ends the
 * value where the attribute's length does */
ROW(PR_ATTR_VALUE_BIT, 0x010074, "attribute_value_length_bit",
    "attribute 0x%x: value of %u bytes runs past the attribute; one bit off it is %u, which the attribute's length ends",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
/* One bit of the type flipped: the only defined type one bit away that
 * fits the attribute's place in the record's order and its form is the
 * type it had (otherwise the attribute is dropped, PR_ATTR_DROPPED). */
ROW(PR_ATTR_TYPE, 0x01004b, "attribute_type_bit",
    "attribute at %u has type 0x%x, which NTFS does not define; by its place and form it is 0x%x",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
/* Writers put a resident value where its header and name end, on an
 * 8-byte boundary: a value offset that is not there is put back when the
 * value then fits. */
ROW(PR_ATTR_VALUE_OFFSET, 0x01004c, "attribute_value_offset",
    "attribute 0x%x: value offset %u is not a multiple of 8; the value starts at %u",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
/* A $FILE_NAME with an empty name (its length byte zeroed) whose value
 * holds the characters of a name after the fixed part: the name length
 * the value's length gives. */
ROW(PR_FILE_NAME_LENGTH, 0x01007b, "file_name_length_zero",
    "$FILE_NAME has an empty name in a value of %u bytes; the value holds a name of %u characters",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
/* An attribute without a name whose name offset points into its header
 * (a flipped bit; ntfsck rejects it): the offset writers give an unnamed
 * attribute, where its header ends (0x18 resident, 0x40 non-resident);
 * nothing else moves. */
ROW(PR_ATTR_NAME_OFFSET, 0x01007a, "attribute_name_offset",
    "attribute 0x%x has no name but a name offset of %u, inside its header; set to %u",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
/* The resident flags byte has one bit, "indexed" (set on $FILE_NAME):
 * any other bit is cleared, the indexed bit kept as it is. */
ROW(PR_ATTR_RESIDENT_FLAGS, 0x01004d, "attribute_resident_flags",
    "attribute 0x%x at %u has unknown resident flags 0x%x (0x%x kept)",
    FSF_PROMPT_CLEAR, FSF_PR_PREEN_OK);
/* A type $AttrDef does not define (the volume's table, or the standard
 * one when it is damaged), not one bit from a defined type that fits:
 * what the record shows it held decides.  An EA list (a resident value
 * whose entries parse, or a non-resident one of the size the file's
 * $EA_INFORMATION gives) in a file with $EA_INFORMATION and no $EA is
 * its $EA; anything else is removed, the file named. */
/* in a file with an attribute list, the list's entry for the attribute
 * (its record, instance, name and lowest VCN) says the type first */
ROW(PR_ATTR_TYPE_LISTED, 0x010069, "attribute_type_listed",
    "attribute at %u has type 0x%x, which $AttrDef does not define; the file's attribute list says it is 0x%x",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
/* A defined type where the list says $FILE_NAME and the value parses as
 * one (parent in the volume, name filling the value, namespace that
 * exists): a flipped type, put back, so the name is kept. */
ROW(PR_ATTR_TYPE_NAME_LISTED, 0x01006f, "attribute_type_file_name_listed",
    "attribute at %u has type 0x%x; the file's attribute list says it is $FILE_NAME (0x30) and its value is one; the type is put back",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_ATTR_TYPE_EA, 0x01004e, "attribute_type_ea",
    "attribute at %u has type 0x%x, which $AttrDef does not define; it holds the EA list of the file's $EA_INFORMATION: it is $EA (0xe0)",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_ATTR_TYPE_UNKNOWN, 0x01004f, "attribute_type_unknown",
    "attribute at %u has type 0x%x, which $AttrDef does not define, and nothing in the record shows what it was; it is removed, the rest of the file kept",
    FSF_PROMPT_CLEAR, FSF_PR_PREEN_OK);
/* Any other attribute (or a $DATA whose record has no room for the
 * sparse header, or whose header does not say how many VCNs it mapped):
 * the sizes follow the runs kept.  The clusters the bad runs gave are
 * unreadable, so -a makes it (it asked and exited 4, the volume left). */
ROW(PR_ATTR_RUNS_CUT, 0x010046, "attribute_runlist_cut",
    "attribute 0x%x has a bad runlist (%s); the %zu runs before the bad one (%llu clusters) are kept and the sizes cut to them",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
/* A user file's $DATA (one extent, in no list) with a bad run: the runs
 * before it are kept (a compressed file's down to a compression unit's
 * start) and the VCNs after them become a hole, the attribute made
 * sparse when it is not (the header's 8-byte compressed size, and the
 * sparse flag in $STANDARD_INFORMATION for the unnamed $DATA), so the
 * file keeps its size and every good byte at its offset; no room for
 * the larger header: the cut above. */
ROW(PR_ATTR_RUNS_BAD_HOLE, 0x01007e, "attribute_runlist_hole",
    "attribute 0x%x has a bad runlist (%s); the %zu runs before the bad one (%llu clusters) are kept, VCNs %llu-%llu become a hole (zeros) and the size (%llu bytes) is kept",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
/* A sparse attribute (one extent, not compressed) whose runs from one
 * on all point outside the volume: they hold no readable cluster, so
 * they become a hole and the file keeps its size and the runs before
 * them; -a makes it (m-deep4k-1500010: it asked and exited 4). */
ROW(PR_ATTR_RUNS_HOLE, 0x01007c, "attribute_runs_outside_hole",
    "attribute 0x%x has %zu runs outside the volume from VCN %llu on (%s); they hold no readable data and become a hole of %llu clusters, the size and the %zu runs before them kept",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
/* A later extent in an extension record (VCNs from above 0) with a bad
 * run: the runs before it are kept and the VCNs it no longer maps become
 * a hole or leave the sizes (PR_ATTR_HOLE, PR_ATTR_TAIL_HOLE,
 * PR_ATTR_TAIL_CUT).  The alternative, clearing the record, loses every
 * run of every attribute in it, so -a makes the cut as -y does: preen
 * never keeps less than a manual run. */
ROW(PR_EXTENT_RUNS_CUT, 0x01006c, "extent_runlist_cut",
    "attribute 0x%x has a bad runlist in a later extent (%s); the %zu runs before the bad one (%llu clusters) are kept",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
/* A file's own $SECURITY_DESCRIPTOR (non-resident) with a bad runlist:
 * the runs kept could hold no whole descriptor (a hole or a cut one is
 * none a reader takes), and its $STANDARD_INFORMATION names a security
 * id, which is what NTFS 3.x (and ntfs-3g) read; pass 3 makes that id one
 * $Secure holds.  The attribute goes, the file keeps its security
 * (r-win4k-100009: the cut kept a one-cluster hole, left unfixed). */
ROW(PR_SD_RUNS_DROPPED, 0x0100c5, "security_descriptor_runlist_bad",
    "its $SECURITY_DESCRIPTOR (0x50) has a bad runlist (%s); the file's security is its security id %u: the attribute is removed, the rest of the file kept",
    FSF_PROMPT_CLEAR, FSF_PR_PREEN_OK);
/* The same without a security id (the 48-byte $STANDARD_INFORMATION
 * ntfs-3g writes beside a descriptor of the file's own): the descriptor
 * is the file's only security, so it becomes a resident one, the one
 * mkfs.ntfs gives the root (full control to Everyone, SYSTEM and
 * Administrators, inherited), not a hole no reader takes.  Also where
 * the file would be given an id (the next row) but $Secure holds none, or
 * its base record has no room for one (a full base, the descriptor in an
 * extension record): in the attribute's place, its instance kept (a
 * list's entry names it). */
ROW(PR_SD_RUNS_DEFAULT, 0x0100c6, "security_descriptor_runlist_default",
    "its $SECURITY_DESCRIPTOR (0x50) has a bad runlist (%s) and no security id stands for it: it becomes the volume's default descriptor (%u bytes, resident)",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
/* The same where the default descriptor does not fit in the record, or
 * in a file with an attribute list (whose entry names the attribute): the
 * attribute goes, and the file's $STANDARD_INFORMATION names the root
 * directory's security id (the NTFS 1.x form of 48 bytes grown to 3.x's
 * 72, which the removed header's room always holds): one record changed,
 * what NTFS 3.x and ntfs-3g read, the id pass 3 gives an unknown one.
 * A new extension record for the descriptor would change the MFT bitmap,
 * a second record and the list for the same access. */
ROW(PR_SD_RUNS_SECID, 0x0100c8, "security_descriptor_runlist_root_id",
    "its $SECURITY_DESCRIPTOR (0x50) has a bad runlist (%s) and no security id stands for it: the attribute is removed and the file given the root directory's security id or, when $Secure does not hold that, the lowest it holds: %u",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
/* The same where $SDS holds no descriptor (pass 3 writes the default
 * ones, secure_no_descriptor) and the default descriptor does not fit in the
 * attribute's place (a full base record with an attribute list): the
 * attribute goes and the file is given the id of the root directory's
 * default descriptor, the one that would have taken the attribute's
 * place, not left a hole no reader takes (-a exit 5 before). */
ROW(PR_SD_RUNS_NEWID, 0x0100c9, "security_descriptor_runlist_default_id",
    "its $SECURITY_DESCRIPTOR (0x50) has a bad runlist (%s), no security id stands for it, $SDS holds no descriptor and the default one does not fit: the attribute is removed and the file given security id %u, of the default descriptors written to $SDS",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
/* A file's $EA, $LOGGED_UTILITY_STREAM, $REPARSE_POINT or $OBJECT_ID
 * (non-resident) with a bad runlist and no allocated run before the bad
 * one or a hole (or in an attribute list, where nothing is cut): no
 * value is left to keep (a hole is none a reader takes).  The attribute
 * goes, the file stays; pass 2 keeps $EA_INFORMATION, the reparse flag
 * and $Extend/$Reparse in step. */
ROW(PR_META_RUNS_DROPPED, 0x0100c7, "metadata_runlist_bad",
    "attribute 0x%x has a bad runlist (%s) and %zu readable runs before it or a hole: the attribute is removed, the rest of the file kept",
    FSF_PROMPT_CLEAR, FSF_PR_PREEN_OK);
ROW(PR_INDEX_RUNS_CUT, 0x01004a, "index_runlist_cut",
    "directory index attribute 0x%x has a bad runlist (%s); the %zu runs before the bad one (%llu clusters) are kept and the index is rebuilt from its files' names",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_ATTR_DROPPED, 0x010047, "attribute_corrupt",
    "attribute is corrupt (%s); it is removed, the rest of the record is kept",
    FSF_PROMPT_CLEAR, FSF_PR_PREEN_OK);
ROW(PR_ATTR_CHAIN_CUT, 0x010048, "attributes_cut",
    "the chain of attributes breaks (%s); the %u attributes before it are kept",
    FSF_PROMPT_CLEAR, FSF_PR_PREEN_OK);
ROW(PR_CROSSLINK, 0x010030, "clusters_crosslinked",
    "attribute 0x%x shares %llu clusters (%llu-%llu) with %s; it gets a copy of them",
    FSF_PROMPT_RELOCATE, FSF_PR_PREEN_OK);
/* shared clusters at the end of a user file's runs, past what its data
 * size needs: the run is cut back (the other owner keeps them, no copy) */
ROW(PR_CROSSLINK_TAIL, 0x010033, "clusters_crosslinked_past_data",
    "attribute 0x%x shares its last %llu clusters (%llu-%llu), past its %llu bytes of data, with another file; its last run is cut back",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_CROSSLINK_KEPT, 0x010031, "clusters_crosslinked_system",
    "attribute 0x%x shares %llu clusters (%llu-%llu) with %s; this system file's clusters cannot move",
    FSF_PROMPT_NONE, FSF_PR_NO_FIX);
/* a bad cluster under $MFT, $MFTMirr, $Boot or another system file that
 * keeps its place: the file keeps it, $Bad lists it no longer (a copy
 * of a bad cluster elsewhere would list a good one as bad) */
ROW(PR_BADCLUS_SHARED, 0x010034, "bad_clusters_held",
    "$Bad lists %llu clusters (%llu-%llu) that system files hold (the first: %s); they are no longer listed as bad",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_CROSSLINK_FAILED, 0x010032, "clusters_crosslinked_not_copied",
    "shared clusters cannot be copied: %s",
    FSF_PROMPT_NONE, FSF_PR_NO_FIX);

/* pass 2: reparse points, extended attributes, data attributes
 * (pass2_special.c, pass2_rindex.c, pass2_data.c).  What these repairs
 * change is derived (a length, a summary, an index entry) or unreadable
 * already (a value that does not parse); the file and its data stay. */
ROW(PR_REPARSE_CORRUPT, 0x020001, "reparse_point_corrupt",
    "reparse point is corrupt (%s); it is removed, the file and its data are kept",
    FSF_PROMPT_CLEAR, FSF_PR_PREEN_OK);
ROW(PR_REPARSE_LENGTH, 0x020002, "reparse_point_length",
    "reparse point says %u bytes of data, its value holds %u",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_REPARSE_FLAG, 0x020003, "reparse_point_flag",
    "file attributes %s the reparse-point flag; the file has %s",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_REPARSE_INDEX_MISSING, 0x020004, "reparse_index_missing",
    "has no entry for the %s reparse point of %s",
    FSF_PROMPT_REBUILD, FSF_PR_PREEN_OK);
ROW(PR_REPARSE_INDEX_STALE, 0x020005, "reparse_index_stale",
    "has an entry (%s) for MFT record %llu (sequence %u), which has no such reparse point",
    FSF_PROMPT_REBUILD, FSF_PR_PREEN_OK);
ROW(PR_REPARSE_INDEX_CORRUPT, 0x020006, "reparse_index_corrupt",
    "index $R is corrupt (%s)",
    FSF_PROMPT_REBUILD, FSF_PR_PREEN_OK);
ROW(PR_REPARSE_INDEX_NONE, 0x020007, "reparse_index_absent",
    "is not there; %llu reparse points have no index entry",
    FSF_PROMPT_NONE, FSF_PR_NO_FIX);
ROW(PR_EA_INFO, 0x020010, "ea_information",
    "$EA_INFORMATION says packed size %u, %u needing EA support, %u bytes; the %u entries of $EA say %u, %u, %u",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_EA_CHAIN, 0x020011, "ea_chain",
    "extended attributes are damaged (%s); the %u whole entries are kept, their chain mended, the rest cut",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_EA_CORRUPT, 0x020012, "ea_corrupt",
    "extended attributes are unusable (%s); they are removed, the file and its data are kept",
    FSF_PROMPT_CLEAR, FSF_PR_PREEN_OK);
ROW(PR_EA_INFO_ALONE, 0x020013, "ea_information_alone",
    "has $EA_INFORMATION but no $EA; it is removed",
    FSF_PROMPT_CLEAR, FSF_PR_PREEN_OK);
ROW(PR_EA_INFO_MISSING, 0x020014, "ea_information_missing",
    "has $EA but no $EA_INFORMATION; one is made from its %u entries",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_DATA_COMPRESSION, 0x020020, "data_compression_unit",
    "attribute 0x%x%s is compressed with compression unit %u (must be 4, clusters of at most 4096 bytes; here %u); left: %s",
    FSF_PROMPT_NONE, FSF_PR_NO_FIX);
ROW(PR_DATA_COMPRESSED_SIZE, 0x020021, "data_compressed_size",
    "attribute 0x%x%s: compressed size %llu, its runs hold %llu",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_DATA_HOLES, 0x020022, "data_holes_not_sparse",
    "attribute 0x%x%s has %llu clusters of holes but is neither sparse nor compressed; left: %s",
    FSF_PROMPT_NONE, FSF_PR_NO_FIX);
/* A compressed attribute has a compression unit and a compressed size
 * field: one with neither was written plain, its flag is wrong. */
ROW(PR_DATA_COMPRESSION_FLAG, 0x020080, "data_compression_flag",
    "attribute 0x%x%s says compressed but has no compression unit and no compressed size; the flag is cleared",
    FSF_PROMPT_CLEAR, FSF_PR_PREEN_OK);
/* A lost sparse or compressed flag, or compression unit, is put back
 * only when the file attributes, the runs (whole units of 16 clusters)
 * and the data (LZNT1 chunks in the partly allocated units) agree; the
 * unit alone on a plain attribute without holes reads the same either
 * way and is cleared. */
ROW(PR_DATA_FLAGS_LOST, 0x020081, "data_content_flag_lost",
    "attribute 0x%x%s has %llu clusters of holes and compression unit %u but is neither sparse nor compressed; the file attributes, runs and data say %s, the flag is set",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_DATA_UNIT_PLAIN, 0x020082, "data_compression_unit_plain",
    "attribute 0x%x%s is neither sparse nor compressed and has no holes, but compression unit %u; it is cleared",
    FSF_PROMPT_CLEAR, FSF_PR_PREEN_OK);
ROW(PR_DATA_UNIT_SET, 0x020083, "data_compression_unit_set",
    "attribute 0x%x%s is compressed with compression unit %u; the file attributes, runs and data say units of 16 clusters, it is set to 4",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_DATA_RESIDENCE, 0x020023, "attribute_residence",
    "attribute 0x%x%s is %s, it must be %s",
    FSF_PROMPT_NONE, FSF_PR_NO_FIX);
ROW(PR_DATA_STREAM_DUPLICATE, 0x020024, "data_stream_duplicate",
    "has two $DATA streams called \"%s\"",
    FSF_PROMPT_NONE, FSF_PR_NO_FIX);
/* The file's content flags are derived data: the unnamed $DATA says how
 * the content is stored, and ntfs-3g and the Linux driver refuse to open
 * a file whose $STANDARD_INFORMATION says otherwise ("corrupt attribute
 * flags"); the file attributes are set from the $DATA. */
ROW(PR_DATA_FILE_FLAGS, 0x020025, "data_file_attribute_flags",
    "file attributes 0x%x say %s, its data is %s",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);

/* pass 3: directory indexes ($I30).  Each problem asks to rebuild the
 * directory's index from the $FILE_NAME attributes of its files (the
 * index is derived data, so -a may); the rebuild follows the check. */
ROW(PR_UPCASE_BAD, 0x030001, "upcase_unreadable",
    "%s: index order is not checked",
    FSF_PROMPT_NONE, FSF_PR_NO_FIX);
ROW(PR_INDEX_CORRUPT, 0x030002, "index_corrupt",
    "directory index is corrupt (%s)",
    FSF_PROMPT_REBUILD, FSF_PR_PREEN_OK);
ROW(PR_INDEX_ORDER, 0x030003, "index_order",
    "index entries \"%s\" and \"%s\" are out of order",
    FSF_PROMPT_REBUILD, FSF_PR_PREEN_OK);
ROW(PR_INDEX_EMPTY_LEAF, 0x030066, "index_empty_leaf",
    "index block at VCN %lld is a leaf with no entry: dropped from the tree",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_INDEX_STALE, 0x030004, "index_entry_stale",
    "index entry \"%s\" points to MFT record %llu, which %s",
    FSF_PROMPT_REBUILD, FSF_PR_PREEN_OK);
ROW(PR_INDEX_MISSING, 0x030005, "index_entry_missing",
    "\"%s\" (MFT record %llu) has no entry in its directory's index",
    FSF_PROMPT_REBUILD, FSF_PR_PREEN_OK);
ROW(PR_INDEX_SIZES, 0x030007, "index_entry_sizes",
    "index entry \"%s\" says %llu bytes (%llu allocated), the file has %llu (%llu)",
    FSF_PROMPT_REBUILD, FSF_PR_PREEN_OK);
/* a file's unnamed $DATA at 0 bytes whose runs still map clusters
 * (pass3_datasize.c): its size comes back from its index entry only on
 * agreeing evidence; nothing is freed either way */
ROW(PR_DATA_SIZE_FROM_ENTRY, 0x030016, "data_size_from_index_entry",
    "unnamed $DATA says 0 bytes, its runs still map %llu; index entry \"%s\" in %s says %llu bytes of that allocation and $Bitmap holds the clusters: the size is taken back",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_DATA_SIZE_KEPT, 0x030017, "data_size_zero_clusters_kept",
    "unnamed $DATA says 0 bytes, its runs still map %llu; index entry \"%s\" says %llu bytes, not evidence enough (%s): the clusters stay the file's, the entry follows its size",
    FSF_PROMPT_NONE, 0);
ROW(PR_ORPHAN, 0x030008, "file_orphaned",
    "file is in no directory",
    FSF_PROMPT_RECONNECT, FSF_PR_PREEN_OK);
ROW(PR_ORPHAN_FAILED, 0x030009, "file_orphan_not_reconnected",
    "file cannot be reconnected to /lost+found (%s)",
    FSF_PROMPT_NONE, FSF_PR_NO_FIX);
ROW(PR_DIR_UNREACHABLE, 0x030010, "directory_unreachable",
    "directory is not reachable from the root (%s)",
    FSF_PROMPT_RECONNECT, FSF_PR_PREEN_OK);
ROW(PR_INDEX_DUPLICATE, 0x030011, "index_entry_duplicate",
    "index entries \"%s\" for MFT records %llu and %llu have the same name",
    FSF_PROMPT_REBUILD, FSF_PR_PREEN_OK);
ROW(PR_NAME_DUPLICATE, 0x030012, "file_name_duplicate",
    "\"%s\" is the name of MFT record %llu and of MFT record %llu; the second becomes \"%s\"",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
/* said of the rename just counted (now left, not fixed) */
ROW(PR_NAME_NOT_RENAMED, 0x03006a, "file_name_duplicate_not_renamed",
    "%s: the fix above is left, the second name stays out of the index",
    FSF_PROMPT_NONE, 0);
ROW(PR_NAME_PARENT_SEQ, 0x030013, "file_name_parent_sequence",
    "\"%s\": %s names the directory with sequence number %u, the directory's is %u",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_LOST_FOUND_TAKEN, 0x030014, "lost_found_not_directory",
    "is called /lost+found but is no directory; it becomes \"%s\"",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_INDEX_KEY_TYPE, 0x030015, "index_entry_type",
    "index entry \"%s\" says %s, the file is %s",
    FSF_PROMPT_REBUILD, FSF_PR_PREEN_OK);
/* $Secure: $SII and $SDH are derived from $SDS and rebuilt from it */
ROW(PR_SECURE_INDEX, 0x03000a, "secure_index_corrupt",
    "security index is inconsistent: %s",
    FSF_PROMPT_REBUILD, FSF_PR_PREEN_OK);
ROW(PR_SECURE_SDS_MIRROR, 0x030040, "secure_sds_entry_damaged",
    "the $SDS entry of security id %u at offset %llu is damaged; its mirror copy is intact",
    FSF_PROMPT_REPAIR, FSF_PR_PREEN_OK);
ROW(PR_SECURE_ID, 0x030041, "security_id_unknown",
    "security id %u is not in $Secure; the file gets security id %u",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_SECURE_DEFAULTS, 0x030042, "secure_no_descriptor",
    "$SDS holds no readable security descriptor; the default descriptors are written",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_ROOT_RECREATED, 0x010070, "root_directory_recreated",
    "the root directory's record is beyond use (%s); it is made again and its index rebuilt from its children's names",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_SECURE_FAILED, 0x030043, "secure_not_repaired",
    "$Secure cannot be repaired (%s)",
    FSF_PROMPT_NONE, FSF_PR_NO_FIX);
/* $SDS claiming more bytes than its runs map (or than the volume holds):
 * not scanned, so nothing of $Secure is judged; said, and counted left */
ROW(PR_SECURE_UNCHECKED, 0x03006c, "secure_not_checked",
    "$SDS says %llu bytes, its runs map %llu: $Secure is not checked",
    FSF_PROMPT_NONE, FSF_PR_NO_FIX);
/* view indexes of $Extend's files ($Quota:$O/$Q, $ObjId:$O, $Reparse:$R):
 * rebuilt from the entries that are still readable */
ROW(PR_VIEW_INDEX, 0x030044, "view_index_corrupt",
    "index is corrupt (%s)",
    FSF_PROMPT_REBUILD, FSF_PR_PREEN_OK);
ROW(PR_VIEW_INDEX_FAILED, 0x030045, "view_index_not_rebuilt",
    "index cannot be rebuilt (%s)",
    FSF_PROMPT_NONE, FSF_PR_NO_FIX);
/* the same, said of fixes already counted (each now left, not fixed) */
ROW(PR_VIEW_NOT_REBUILT, 0x030068, "view_index_rebuild_failed_fixes_left",
    "index cannot be rebuilt (%s): the fixes above that it was to make are left",
    FSF_PROMPT_NONE, 0);
/* $Quota's views, each sound, lack what the other holds or what every
 * volume's $Q has: an owner's SID -> id in $O for a $Q entry naming it
 * (or the reverse), or $Q's default entry (owner id 1, the volume's
 * default limits; an emptied $Q); rebuilt as for a corrupt one
 * (quota_fill), the new $Q entries out of date (Windows counts them) */
ROW(PR_QUOTA_VIEW_SHORT, 0x03006d, "quota_view_entries_missing",
    "index is missing %llu of its entries (%s)",
    FSF_PROMPT_REBUILD, FSF_PR_PREEN_OK);
/* $ObjId:$O against the files' $OBJECT_ID (pass3_objid.c): the file's
 * attribute is the truth; the index follows it, an entry's birth ids kept
 * where the attribute has none */
ROW(PR_OBJID_MISSING, 0x030046, "objid_index_missing",
    "has no entry for object id %s of %s: added",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_OBJID_STALE, 0x030047, "objid_index_stale",
    "entry for object id %s names MFT record %llu, which %s: removed",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_OBJID_WRONG, 0x030048, "objid_index_entry_wrong",
    "entry for object id %s says MFT record %llu (sequence %u)%s; %s holds that id",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
/* $Extend/$UsnJrnl, the change journal (pass3_usnjrnl.c): only $Max is
 * rewritten; the journal's records stay as they are */
ROW(PR_USN_MAX_BAD, 0x030063, "usnjrnl_max_bad",
    "$Max is damaged (%s): rewritten with a new journal id and the lowest valid USN at $J's end (%llu); the journal's history is gone, its readers (backup, indexing) re-scan the volume",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_USN_TAIL_BAD, 0x030064, "usnjrnl_tail_bad",
    "$J's record at USN %llu is damaged (%s): the lowest valid USN moves past $J's end (%llu); the journal's history is gone, its readers (backup, indexing) re-scan the volume",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_USN_UNUSABLE, 0x030065, "usnjrnl_unusable",
    "change journal cannot be repaired (%s); left as it is",
    FSF_PROMPT_NONE, FSF_PR_NO_FIX);
/* the same when its attribute list was found wrong and left: that
 * problem stands for it (not a problem more) */
ROW(PR_USN_LIST_LEFT, 0x030069, "usnjrnl_list_left",
    "change journal not judged (%s): its attribute list, reported above, is left",
    FSF_PROMPT_NONE, 0);
ROW(PR_NAME_FROM_INDEX, 0x030060, "file_name_from_index",
    "entry \"%s\" names MFT record %llu, which has lost its names: give it this one back",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
/* pass3_lostnames.c: a file whose list named $FILE_NAMEs in a record
 * found unusable (pass 1): the entries still naming it give them back */
ROW(PR_NAME_LOST_RECORD, 0x03006b, "file_name_lost_record",
    "entry \"%s\" holds a name of MFT record %llu lost with one of its extension records: give it back",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
/* pass3_strays.c: a name whose parent reference names no directory */
/* pass3_index.c, pass3_rebuild.c: a name no namespace allows */
ROW(PR_NAME_UNIT, 0x030067, "file_name_bad_unit",
    "name \"%s\" (MFT record %llu) holds a NUL or a '/', which no namespace allows: it becomes \"%s\"",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_NAME_PARENT_FROM_INDEX, 0x030061, "file_name_parent_from_index",
    "entry \"%s\" names MFT record %llu, whose name of that spelling names %s as its parent: it takes this directory back",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_NAME_NAMESPACE, 0x03006e, "file_name_namespace",
    "name \"%s\" (MFT record %llu) is marked %s, its index entry %s: both become %s",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_NAME_PARENT_STRAY, 0x030062, "file_name_parent_stray",
    "name \"%s\" names MFT record %llu, which is no directory, as its parent, and no index holds it: reconnected to /lost+found",
    FSF_PROMPT_RECONNECT, FSF_PR_PREEN_OK);
ROW(PR_DIR_RECREATED, 0x030020, "directory_recreated",
    "entry \"%s\" names directory MFT record %llu, which was unusable and cleared; it is made again from the entry, its files keep their names",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_INDEX_REBUILD_FAILED, 0x030006, "index_rebuild_failed",
    "directory index cannot be rebuilt (%s)",
    FSF_PROMPT_NONE, FSF_PR_NO_FIX);
/* the same, said of fixes already counted (each now left, not fixed) */
ROW(PR_INDEX_NOT_REBUILT, 0x03000b, "index_rebuild_failed_fixes_left",
    "directory index cannot be rebuilt (%s): the fixes above that it was to make are left",
    FSF_PROMPT_NONE, 0);

/* pass 4: bitmaps */
ROW(PR_CLUSTER_BITMAP, 0x040001, "cluster_bitmap_differs",
    "$Bitmap differs from the clusters in use (%llu used but marked free, %llu free but marked used)",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
ROW(PR_MFT_BITMAP, 0x040002, "mft_bitmap_differs",
    "$MFT bitmap differs from the records in use (%llu in use but marked free, %llu free but marked in use)",
    FSF_PROMPT_FIX, FSF_PR_PREEN_OK);
/* the device failed the read (EIO): nothing to compare, nothing written */
ROW(PR_BITMAP_READ_ERROR, 0x040003, "bitmap_read_error",
    "cannot be read (a read error: the device fails it); not compared with what is in use, left as it is",
    FSF_PROMPT_NONE, FSF_PR_NO_FIX);

/* pass 5: volume state */
ROW(PR_LOGFILE_RESET, 0x050002, "logfile_reset",
    "journal is reset after the repair (a clean, closed log: no driver may replay it now)",
    FSF_PROMPT_RESET, FSF_PR_PREEN_OK | FSF_PR_NOT_ERROR);
ROW(PR_LOGFILE_DIRTY, 0x050010, "logfile_dirty",
    "journal holds changes that were not checkpointed (restart area LSN %llu, clean flag not set): the volume was not cleanly unmounted by Windows",
    FSF_PROMPT_NONE, 0);
ROW(PR_LOGFILE_CORRUPT, 0x050011, "logfile_restart_corrupt",
    "journal is neither empty nor a valid restart page pair (%s)",
    FSF_PROMPT_NONE, 0);
ROW(PR_VOLUME_DIRTY, 0x050001, "volume_dirty",
    "volume is marked dirty",
    FSF_PROMPT_CLEAR, FSF_PR_PREEN_OK | FSF_PR_NOT_ERROR);
