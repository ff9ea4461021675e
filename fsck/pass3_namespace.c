// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pass 3, a name's namespace: each index entry that names one of a
 * file's names (pass3_index.c) has the namespace byte of that
 * $FILE_NAME in its key.  Two things are judged:
 *
 *  - a name marked DOS or WIN32_AND_DOS must be one that may stand
 *    there.  The file's only DOS-type name in the directory may be
 *    anything some writer stores (libntfs: ntfs_name_may_be_dos, 1 to
 *    12 units none of which Win32 refuses: ntfs-3g stores what
 *    system.ntfs_dos_name is given, marking the long name Win32&DOS when
 *    they differ in case only; Windows keeps lower-case 8.3 names as
 *    Win32&DOS); beside another DOS-type name, only an 8.3 name
 *    (ntfs_name_is_8dot3) may, the long half of the pair is Win32.  One
 *    that may not goes back to the namespace its entry says when that is
 *    Win32 or POSIX, else to Win32;
 *  - the record and the entry disagree on the byte only: the record is
 *    the evidence when its namespace fits the file's other names in the
 *    directory, else the entry when its namespace does; a DOS claim that
 *    fits (a name that may be DOS-type, the only DOS-type name there,
 *    beside a Win32 one for DOS) beats a Win32 or POSIX one.
 *
 * One problem code; the name is edited in whichever of the file's
 * records holds it (libntfs), the index follows through the rebuild
 * (pass3_rebuild.c).  No name is dropped, and the link count stays
 * (it counts the file's names either way).
 */
#include "config.h"

#include <endian.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ntfs/file_attrs.h"
#include "ntfs/name_edit.h"
#include "ntfs_check.h"
#include "ntfs_problems.h"

static const char *const ns_name[] = { "POSIX", "Win32", "DOS", "Win32&DOS" };

static bool dos_class(uint8_t ns)
{
	return ns == NTFS_NS_DOS || ns == NTFS_NS_WIN32_AND_DOS;
}

/* Does namespace NS fit the name (DOSFIT: may it be DOS-type) beside the
 * file's other names in the directory (OTHER: how many of each
 * namespace)? */
static bool fits(uint8_t ns, bool dosfit, const unsigned int other[4])
{
	bool no_dos = !other[NTFS_NS_DOS] && !other[NTFS_NS_WIN32_AND_DOS];

	if (ns == NTFS_NS_DOS)
		return dosfit && no_dos && other[NTFS_NS_WIN32];
	if (ns == NTFS_NS_WIN32_AND_DOS)
		return dosfit && no_dos;
	return ns <= NTFS_NS_WIN32;
}

/* The name of value OLD (LEN bytes) of file R given namespace NS in the
 * record that holds it.  0, or -1 with WHY. */
static int set_namespace(struct ntfs_check *c, uint64_t r, const uint8_t *old,
			 uint32_t len, uint8_t ns, char *why)
{
	uint32_t rs = c->vol.boot.g.mft_record_size;
	uint8_t *rec = malloc(rs), *out = malloc(rs);
	uint8_t fnv[sizeof(struct ntfs_file_name) + 2 * 255];
	bool was_dos;
	int ret = -1;

	snprintf(why, NTFS_WHY, "out of memory");
	if (!rec || !out)
		goto out;
	memcpy(fnv, old, len);
	fnv[offsetof(struct ntfs_file_name, name_type)] = ns;
	if (ntfs_name_rewrite(c, r, old, fnv, len, rec, out, &was_dos, why))
		goto out;
	ret = 0;
out:
	free(rec);
	free(out);
	return ret;
}

bool ntfs_check_namespace(struct ntfs_check *c, const char *dirobj,
			  uint64_t recno, const uint8_t *fn, uint32_t len,
			  uint8_t ent_ns, const unsigned int other[4])
{
	struct ntfs_file_name h;
	uint8_t want;
	bool dosfit;
	char n8[1024], why[NTFS_WHY];
	uint16_t u[255];

	if (len < sizeof(h))
		return false;
	memcpy(&h, fn, sizeof(h));
	if (h.name_type > NTFS_NS_WIN32_AND_DOS || sizeof(h) + 2u * h.name_length > len)
		return false;
	/* may the name stand in the DOS namespace?  The file's only
	 * DOS-type name there: unless no writer makes it (ntfs-3g stores what
	 * system.ntfs_dos_name is given, Windows keeps lower-case 8.3 names as
	 * Win32&DOS).  Beside another DOS-type name: only an 8.3 name, so that
	 * the long half of a pair goes back to Win32 */
	if (!other[NTFS_NS_DOS] && !other[NTFS_NS_WIN32_AND_DOS])
		dosfit = ntfs_name_may_be_dos(fn + sizeof(h), h.name_length);
	else
		dosfit = ntfs_name_is_8dot3(fn + sizeof(h), h.name_length);
	want = h.name_type;
	if (dos_class(h.name_type) && !dosfit)
		want = other[NTFS_NS_DOS] || ent_ns > NTFS_NS_WIN32 ?
			NTFS_NS_WIN32 : ent_ns;
	else if (ent_ns <= NTFS_NS_WIN32_AND_DOS && ent_ns != h.name_type &&
		 fits(ent_ns, dosfit, other) &&
		 (!fits(h.name_type, dosfit, other) ||
		  (dos_class(ent_ns) && !dos_class(h.name_type))))
		want = ent_ns;
	/* no key to read the byte from: the index is judged otherwise */
	if (want == h.name_type && (want == ent_ns || ent_ns > NTFS_NS_WIN32_AND_DOS))
		return false;
	for (unsigned int i = 0; i < h.name_length; i++)
		u[i] = (uint16_t)(fn[sizeof(h) + 2 * i] | fn[sizeof(h) + 2 * i + 1] << 8);
	ntfs_name_to_utf8(u, h.name_length, n8, sizeof(n8));
	if (!fsf_fix_ask(&c->fix, &PR_NAME_NAMESPACE, dirobj, n8,
			 (unsigned long long)recno, ns_name[h.name_type],
			 ent_ns <= NTFS_NS_WIN32_AND_DOS ? ns_name[ent_ns] : "none",
			 ns_name[want]))
		return false;
	if (want != h.name_type && set_namespace(c, recno, fn, len, want, why)) {
		fsf_warn(c->log, "MFT record %llu: %s", (unsigned long long)recno, why);
		fsf_fix_failed(&c->fix);
		return false;
	}
	return want != ent_ns;
}
