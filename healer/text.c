// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Growing strings and the one escaping rule for outside text (mount point
 * paths, labels) placed in a log line, the journal, a hook's environment
 * or a JSON value: valid UTF-8 printable characters are kept; a backslash
 * becomes "\\", newline and tab "\n" and "\t", any other control byte and
 * every byte of an invalid UTF-8 sequence "\xHH".  The result is one line
 * of valid UTF-8, and reversible (printf '%b' undoes it).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "healer.h"

static bool grow(struct hm_str *s, size_t more)
{
	size_t want = s->len + more + 1, cap = s->cap ? s->cap : 128;
	char *p;

	if (s->oom)
		return false;
	if (want <= s->cap)
		return true;
	while (cap < want)
		cap *= 2;
	p = realloc(s->p, cap);
	if (!p) {
		s->oom = true;
		return false;
	}
	s->p = p;
	s->cap = cap;
	return true;
}

void hm_str_add(struct hm_str *s, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !grow(s, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(s->p + s->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	s->len += (size_t)n;
}

const char *hm_str_get(const struct hm_str *s)
{
	return s->p && !s->oom ? s->p : "";
}

void hm_str_free(struct hm_str *s)
{
	free(s->p);
	memset(s, 0, sizeof(*s));
}

/* length of the valid UTF-8 sequence at p (1..4), 0 if invalid */
static size_t utf8_len(const unsigned char *p)
{
	unsigned char c = p[0];
	size_t n, i;
	unsigned int cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	/* overlong, surrogates, beyond U+10FFFF; C1 controls are escaped */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff ||
	    (cp >= 0x80 && cp < 0xa0))
		return 0;
	return n;
}

void hm_str_escape(struct hm_str *s, const char *raw)
{
	const unsigned char *p = (const unsigned char *)raw;

	while (*p) {
		size_t n = utf8_len(p);

		if (*p == '\\')
			hm_str_add(s, "\\\\");
		else if (*p == '\n')
			hm_str_add(s, "\\n");
		else if (*p == '\t')
			hm_str_add(s, "\\t");
		else if (n == 0 || *p < 0x20 || *p == 0x7f)
			hm_str_add(s, "\\x%02x", *p);
		else {
			hm_str_add(s, "%.*s", (int)n, (const char *)p);
			p += n;
			continue;
		}
		p++;
	}
}

char *hm_escape_dup(const char *raw)
{
	struct hm_str s = { 0 };

	hm_str_escape(&s, raw);
	if (s.oom || !s.p) {
		hm_str_free(&s);
		return strdup("?");
	}
	return s.p;
}
