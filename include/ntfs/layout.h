/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * NTFS 3.1 on-disk definitions used by libntfs, written for fsforge from the
 * published format documentation.  Every multi-byte field is little-endian;
 * the structures are packed and always accessed through le*toh/htole*.
 */
#ifndef NTFS_LAYOUT_H
#define NTFS_LAYOUT_H

#include <stdint.h>

#define NTFS_PACKED __attribute__((packed))

/* update sequence arrays protect every 512-byte stride of a record */
#define NTFS_USA_STRIDE 512

/* ---- boot sector (first sector of $Boot; a copy in the last sector) ---- */
struct ntfs_boot_sector {
	uint8_t jump[3];		/* EB 52 90 */
	char oem_id[8];			/* "NTFS    " */
	uint16_t bytes_per_sector;
	uint8_t sectors_per_cluster;	/* > 0x80: 2^(256 - value) */
	uint16_t reserved_sectors;	/* 0 */
	uint8_t fats;			/* 0 */
	uint16_t root_entries;		/* 0 */
	uint16_t sectors16;		/* 0 */
	uint8_t media_type;		/* 0xF8: hard disk */
	uint16_t sectors_per_fat;	/* 0 */
	uint16_t sectors_per_track;
	uint16_t heads;
	uint32_t hidden_sectors;	/* partition start */
	uint32_t sectors32;		/* 0 */
	uint8_t drive_number;		/* 0x80 */
	uint8_t current_head;		/* 0 */
	uint8_t ext_boot_signature;	/* 0x80 */
	uint8_t reserved2;
	int64_t number_of_sectors;	/* volume size minus the backup sector */
	int64_t mft_lcn;
	int64_t mftmirr_lcn;
	int8_t clusters_per_mft_record;	/* < 0: 2^-value bytes */
	uint8_t reserved3[3];
	int8_t clusters_per_index_record;
	uint8_t reserved4[3];
	uint64_t volume_serial;
	uint32_t checksum;		/* 0 */
	uint8_t bootstrap[426];
	uint16_t end_marker;		/* 0xAA55 */
} NTFS_PACKED;

/* ---- MFT records ($FILE) ---- */
#define NTFS_MAGIC_FILE 0x454c4946u	/* "FILE" */
#define NTFS_MAGIC_INDX 0x58444e49u	/* "INDX" */

enum {
	NTFS_MFT_IN_USE = 0x0001,
	NTFS_MFT_IS_DIRECTORY = 0x0002,
	NTFS_MFT_IS_4 = 0x0004,		/* set on $Extend's view-index files */
	NTFS_MFT_IS_VIEW_INDEX = 0x0008,
};

struct ntfs_record_header {		/* common head of FILE and INDX */
	uint32_t magic;
	uint16_t usa_ofs;
	uint16_t usa_count;		/* strides + 1 */
	uint64_t lsn;
} NTFS_PACKED;

struct ntfs_mft_record {
	struct ntfs_record_header h;
	uint16_t sequence_number;
	uint16_t link_count;
	uint16_t attrs_offset;
	uint16_t flags;
	uint32_t bytes_in_use;
	uint32_t bytes_allocated;
	uint64_t base_mft_record;
	uint16_t next_attr_instance;
	uint16_t reserved;
	uint32_t mft_record_number;
	/* update sequence array at 0x30 */
} NTFS_PACKED;

/* system files */
enum {
	NTFS_FILE_MFT = 0, NTFS_FILE_MFTMIRR = 1, NTFS_FILE_LOGFILE = 2,
	NTFS_FILE_VOLUME = 3, NTFS_FILE_ATTRDEF = 4, NTFS_FILE_ROOT = 5,
	NTFS_FILE_BITMAP = 6, NTFS_FILE_BOOT = 7, NTFS_FILE_BADCLUS = 8,
	NTFS_FILE_SECURE = 9, NTFS_FILE_UPCASE = 10, NTFS_FILE_EXTEND = 11,
	NTFS_FILE_FIRST_USER = 16,
	NTFS_FILE_QUOTA = 24, NTFS_FILE_OBJID = 25, NTFS_FILE_REPARSE = 26,
	NTFS_FILE_COUNT_MIN = 27,
};

#define NTFS_MREF(rec, seq) ((uint64_t)(rec) | ((uint64_t)(seq) << 48))

/* ---- attributes ---- */
enum {
	NTFS_AT_STANDARD_INFORMATION = 0x10,
	NTFS_AT_ATTRIBUTE_LIST = 0x20,
	NTFS_AT_FILE_NAME = 0x30,
	NTFS_AT_OBJECT_ID = 0x40,
	NTFS_AT_SECURITY_DESCRIPTOR = 0x50,
	NTFS_AT_VOLUME_NAME = 0x60,
	NTFS_AT_VOLUME_INFORMATION = 0x70,
	NTFS_AT_DATA = 0x80,
	NTFS_AT_INDEX_ROOT = 0x90,
	NTFS_AT_INDEX_ALLOCATION = 0xa0,
	NTFS_AT_BITMAP = 0xb0,
	NTFS_AT_REPARSE_POINT = 0xc0,
	NTFS_AT_EA_INFORMATION = 0xd0,
	NTFS_AT_EA = 0xe0,
	NTFS_AT_LOGGED_UTILITY_STREAM = 0x100,
	NTFS_AT_END = 0xffffffffu,
};

struct ntfs_attr_header {
	uint32_t type;
	uint32_t length;
	uint8_t non_resident;
	uint8_t name_length;		/* in UTF-16 units */
	uint16_t name_offset;
	uint16_t flags;
	uint16_t instance;
} NTFS_PACKED;

struct ntfs_attr_resident {
	struct ntfs_attr_header h;
	uint32_t value_length;
	uint16_t value_offset;
	uint8_t resident_flags;		/* NTFS_RESIDENT_INDEXED or 0 */
	uint8_t reserved;
} NTFS_PACKED;

/* resident_flags: the value is a key of an index ($FILE_NAME); no other
 * bit exists */
#define NTFS_RESIDENT_INDEXED 0x01

/* attribute record flags */
enum {
	NTFS_ATTR_COMPRESSION_MASK = 0x00ff, NTFS_ATTR_ENCRYPTED = 0x4000,
	NTFS_ATTR_SPARSE = 0x8000,
};

struct ntfs_attr_nonresident {
	struct ntfs_attr_header h;
	int64_t lowest_vcn;
	int64_t highest_vcn;
	uint16_t mapping_pairs_offset;
	uint8_t compression_unit;
	uint8_t reserved[5];
	int64_t allocated_size;
	int64_t data_size;
	int64_t initialized_size;
} NTFS_PACKED;

/* file attribute flags ($STANDARD_INFORMATION, $FILE_NAME) */
enum {
	NTFS_FA_READONLY = 0x0001, NTFS_FA_HIDDEN = 0x0002,
	NTFS_FA_SYSTEM = 0x0004, NTFS_FA_ARCHIVE = 0x0020,
	NTFS_FA_SPARSE_FILE = 0x0200,
	NTFS_FA_COMPRESSED = 0x0800, NTFS_FA_ENCRYPTED = 0x4000, NTFS_FA_NOT_CONTENT_INDEXED = 0x2000,
	NTFS_FA_DUP_FILE_NAME_INDEX_PRESENT = 0x10000000,
	NTFS_FA_DUP_VIEW_INDEX_PRESENT = 0x20000000,
};

struct ntfs_standard_information {	/* NTFS 3.x form, 72 bytes */
	int64_t creation_time;
	int64_t last_data_change_time;
	int64_t last_mft_change_time;
	int64_t last_access_time;
	uint32_t file_attributes;
	uint32_t maximum_versions;
	uint32_t version_number;
	uint32_t class_id;
	uint32_t owner_id;
	uint32_t security_id;
	uint64_t quota_charged;
	uint64_t usn;
} NTFS_PACKED;

enum { NTFS_NS_POSIX = 0, NTFS_NS_WIN32 = 1, NTFS_NS_DOS = 2,
       NTFS_NS_WIN32_AND_DOS = 3 };

struct ntfs_file_name {			/* + name_length UTF-16 units */
	uint64_t parent_directory;
	int64_t creation_time;
	int64_t last_data_change_time;
	int64_t last_mft_change_time;
	int64_t last_access_time;
	int64_t allocated_size;
	int64_t data_size;
	uint32_t file_attributes;
	uint32_t ea_size_or_reparse;
	uint8_t name_length;
	uint8_t name_type;
} NTFS_PACKED;

struct ntfs_volume_information {
	uint64_t reserved;
	uint8_t major_ver;
	uint8_t minor_ver;
	uint16_t flags;
} NTFS_PACKED;

struct ntfs_attrdef {
	uint16_t name[64];
	uint32_t type;
	uint32_t display_rule;
	uint32_t collation_rule;
	uint32_t flags;
	int64_t min_size;
	int64_t max_size;
} NTFS_PACKED;

enum {					/* $AttrDef flags */
	NTFS_ATTRDEF_INDEXABLE = 0x02, NTFS_ATTRDEF_MULTIPLE = 0x04,
	NTFS_ATTRDEF_RESIDENT = 0x40, NTFS_ATTRDEF_LOG_NONRESIDENT = 0x80,
};

/* ---- indexes ---- */
enum {
	NTFS_COLLATION_BINARY = 0x00, NTFS_COLLATION_FILE_NAME = 0x01,
	NTFS_COLLATION_NTOFS_ULONG = 0x10, NTFS_COLLATION_NTOFS_SID = 0x11,
	NTFS_COLLATION_NTOFS_SECURITY_HASH = 0x12,
	NTFS_COLLATION_NTOFS_ULONGS = 0x13,
};

struct ntfs_index_header {
	uint32_t entries_offset;	/* from this header */
	uint32_t index_length;
	uint32_t allocated_size;
	uint8_t flags;			/* 1: has index allocation (large) */
	uint8_t reserved[3];
} NTFS_PACKED;

struct ntfs_index_root {
	uint32_t type;			/* indexed attribute type or 0 */
	uint32_t collation_rule;
	uint32_t index_block_size;
	int8_t clusters_per_index_block;
	uint8_t reserved[3];
	struct ntfs_index_header ih;
} NTFS_PACKED;

struct ntfs_index_block {		/* "INDX" */
	struct ntfs_record_header h;
	int64_t index_block_vcn;
	struct ntfs_index_header ih;
	/* update sequence array at 0x28 */
} NTFS_PACKED;

enum { NTFS_IE_NODE = 1, NTFS_IE_END = 2 };

struct ntfs_index_entry {
	union {
		uint64_t indexed_file;	/* directory indexes */
		struct {		/* view indexes */
			uint16_t data_offset;
			uint16_t data_length;
			uint32_t reserved;
		} NTFS_PACKED v;
	} NTFS_PACKED u;
	uint16_t length;
	uint16_t key_length;
	uint16_t flags;
	uint16_t reserved;
	/* key, then view data; a node entry ends with the child's VCN */
} NTFS_PACKED;

/* ---- $Secure ---- */
struct ntfs_sds_header {		/* header of each $SDS entry; also
					 * the data of $SII/$SDH entries */
	uint32_t hash;
	uint32_t security_id;
	uint64_t offset;
	uint32_t length;		/* header + descriptor */
} NTFS_PACKED;

#define NTFS_SDS_BLOCK 0x40000u		/* every block is mirrored once */
#define NTFS_SECURITY_ID_FIRST 0x100u

/* ---- $Quota ---- */
struct ntfs_quota_control {
	uint32_t version;		/* 2 */
	uint32_t flags;
	uint64_t bytes_used;
	int64_t change_time;
	int64_t threshold;
	int64_t limit;
	int64_t exceeded_time;
	/* then the owner's SID, except for the defaults entry */
} NTFS_PACKED;

enum { NTFS_QUOTA_DEFAULT_LIMITS = 0x1 };

/* ---- time ---- */
/* 100 ns intervals between 1601-01-01 and 1970-01-01 */
#define NTFS_TIME_OFFSET 116444736000000000LL

#endif
