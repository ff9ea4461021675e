// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The strict JSON parser of fsforge/json.h: recursive descent over the
 * document, depth-limited, every value counted, every string validated
 * as UTF-8 and decoded (escapes, surrogate pairs) into its own buffer.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsforge/json.h"
#include "fsforge/log.h"

struct parser {
	const unsigned char *p, *start, *end;
	size_t values;
	char *why;
	size_t whylen;
	int err;		/* the first error */
};

static int fail(struct parser *ps, int err, const char *fmt, ...)
	FSF_PRINTF(3, 4);

static int fail(struct parser *ps, int err, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (ps->err)
		return ps->err;
	ps->err = err;
	if (!ps->why || !ps->whylen)
		return err;
	n = snprintf(ps->why, ps->whylen, "byte %zu: ",
		     (size_t)(ps->p - ps->start));
	if (n < 0 || (size_t)n >= ps->whylen)
		return err;
	va_start(ap, fmt);
	vsnprintf(ps->why + n, ps->whylen - (size_t)n, fmt, ap);
	va_end(ap);
	return err;
}

static void skip_ws(struct parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' ||
				   *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static int hex4(struct parser *ps, unsigned int *out)
{
	unsigned int v = 0;

	if (ps->end - ps->p < 4)
		return fail(ps, -EINVAL, "a \\u escape is cut short");
	for (int i = 0; i < 4; i++) {
		unsigned char c = *ps->p++;

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return fail(ps, -EINVAL, "a \\u escape has a non-hex digit");
	}
	*out = v;
	return 0;
}

static size_t put_utf8(char *d, unsigned int cp)
{
	if (cp < 0x80) {
		d[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		d[0] = (char)(0xc0 | cp >> 6);
		d[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		d[0] = (char)(0xe0 | cp >> 12);
		d[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		d[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	d[0] = (char)(0xf0 | cp >> 18);
	d[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	d[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	d[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* the length of the well-formed UTF-8 sequence at P (RFC 3629: no
 * overlongs, no surrogates, at most U+10FFFF), or 0 */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned char c = p[0];
	size_t n;
	unsigned int cp, min;

	if (c < 0x80)
		return 1;
	if ((c & 0xe0) == 0xc0) {
		n = 2; cp = c & 0x1f; min = 0x80;
	} else if ((c & 0xf0) == 0xe0) {
		n = 3; cp = c & 0x0f; min = 0x800;
	} else if ((c & 0xf8) == 0xf0) {
		n = 4; cp = c & 0x07; min = 0x10000;
	} else {
		return 0;
	}
	if ((size_t)(end - p) < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* a string at ps->p (its opening quote) into *OUT and *LEN */
static int parse_string(struct parser *ps, char **out, size_t *len)
{
	const unsigned char *q = ++ps->p;
	size_t cap = 0;
	char *d;
	size_t n = 0;

	/* the decoded string is never longer than its text */
	while (q < ps->end && *q != '"') {
		if (*q == '\\' && q + 1 < ps->end)
			q++;
		q++;
	}
	if (q >= ps->end)
		return fail(ps, -EINVAL, "a string has no closing quote");
	cap = (size_t)(q - ps->p) + 1;
	d = malloc(cap);
	if (!d)
		return fail(ps, -ENOMEM, "out of memory");
	for (;;) {
		unsigned char c = *ps->p;

		if (c == '"') {
			ps->p++;
			break;
		}
		if (c < 0x20) {
			free(d);
			return fail(ps, -EINVAL, "a control character (0x%02x) inside a string", c);
		}
		if (c == '\\') {
			unsigned int cp, lo;
			char e;

			ps->p++;
			e = (char)*ps->p++;
			switch (e) {
			case '"': d[n++] = '"'; continue;
			case '\\': d[n++] = '\\'; continue;
			case '/': d[n++] = '/'; continue;
			case 'b': d[n++] = '\b'; continue;
			case 'f': d[n++] = '\f'; continue;
			case 'n': d[n++] = '\n'; continue;
			case 'r': d[n++] = '\r'; continue;
			case 't': d[n++] = '\t'; continue;
			case 'u':
				break;
			default:
				free(d);
				ps->p--;
				return fail(ps, -EINVAL, "an unknown escape \\%c", e);
			}
			if (hex4(ps, &cp)) {
				free(d);
				return ps->err;
			}
			if (cp >= 0xdc00 && cp <= 0xdfff) {
				free(d);
				return fail(ps, -EINVAL, "a lone low surrogate");
			}
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (ps->end - ps->p < 2 || ps->p[0] != '\\' ||
				    ps->p[1] != 'u') {
					free(d);
					return fail(ps, -EINVAL, "a high surrogate without its low half");
				}
				ps->p += 2;
				if (hex4(ps, &lo)) {
					free(d);
					return ps->err;
				}
				if (lo < 0xdc00 || lo > 0xdfff) {
					free(d);
					return fail(ps, -EINVAL, "a high surrogate without its low half");
				}
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			}
			/* 6 (or 12) bytes of text make at most 3 (or 4) */
			n += put_utf8(d + n, cp);
			continue;
		}
		{
			size_t l = utf8_len(ps->p, ps->end);

			if (!l) {
				free(d);
				return fail(ps, -EINVAL, "invalid UTF-8 inside a string");
			}
			memcpy(d + n, ps->p, l);
			n += l;
			ps->p += l;
		}
	}
	d[n] = '\0';
	*out = d;
	*len = n;
	return 0;
}

/* a number's text: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int parse_number(struct parser *ps, struct json_value *v)
{
	const unsigned char *s = ps->p, *p = ps->p, *e = ps->end;

	if (p < e && *p == '-')
		p++;
	if (p < e && *p == '0') {
		p++;
		if (p < e && *p >= '0' && *p <= '9')
			return fail(ps, -EINVAL, "a number with a leading zero");
	} else if (p < e && *p >= '1' && *p <= '9') {
		while (p < e && *p >= '0' && *p <= '9')
			p++;
	} else {
		return fail(ps, -EINVAL, "a malformed number");
	}
	if (p < e && *p == '.') {
		p++;
		if (p >= e || *p < '0' || *p > '9')
			return fail(ps, -EINVAL, "a number without digits after its point");
		while (p < e && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < e && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < e && (*p == '+' || *p == '-'))
			p++;
		if (p >= e || *p < '0' || *p > '9')
			return fail(ps, -EINVAL, "a number without exponent digits");
		while (p < e && *p >= '0' && *p <= '9')
			p++;
	}
	v->type = JSON_NUMBER;
	v->len = (size_t)(p - s);
	v->str = malloc(v->len + 1);
	if (!v->str)
		return fail(ps, -ENOMEM, "out of memory");
	memcpy(v->str, s, v->len);
	v->str[v->len] = '\0';
	ps->p = p;
	return 0;
}

static int parse_value(struct parser *ps, struct json_value *v, int depth);

static int grow(struct parser *ps, struct json_value *v, size_t *cap,
		bool keys)
{
	size_t nc = *cap ? *cap * 2 : 4;
	struct json_value *items;

	if (v->n < *cap)
		return 0;
	items = realloc(v->items, nc * sizeof(*items));
	if (!items)
		return fail(ps, -ENOMEM, "out of memory");
	v->items = items;
	if (keys) {
		char **k = realloc(v->keys, nc * sizeof(*k));

		if (!k)
			return fail(ps, -ENOMEM, "out of memory");
		v->keys = k;
	}
	*cap = nc;
	return 0;
}

static int parse_array(struct parser *ps, struct json_value *v, int depth)
{
	size_t cap = 0;

	v->type = JSON_ARRAY;
	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == ']') {
		ps->p++;
		return 0;
	}
	for (;;) {
		if (grow(ps, v, &cap, false))
			return ps->err;
		memset(&v->items[v->n], 0, sizeof(v->items[0]));
		v->n++;
		if (parse_value(ps, &v->items[v->n - 1], depth + 1))
			return ps->err;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == ']') {
			ps->p++;
			return 0;
		}
		return fail(ps, -EINVAL, "an array item is followed by neither ',' nor ']'");
	}
}

static int parse_object(struct parser *ps, struct json_value *v, int depth)
{
	size_t cap = 0;

	v->type = JSON_OBJECT;
	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == '}') {
		ps->p++;
		return 0;
	}
	for (;;) {
		char *key;
		size_t klen;

		skip_ws(ps);
		if (ps->p >= ps->end || *ps->p != '"')
			return fail(ps, -EINVAL, "an object member has no string key");
		if (grow(ps, v, &cap, true))
			return ps->err;
		if (parse_string(ps, &key, &klen))
			return ps->err;
		if (strlen(key) != klen) {
			free(key);
			return fail(ps, -EINVAL, "an object key holds a NUL");
		}
		for (size_t i = 0; i < v->n; i++) {
			if (!strcmp(v->keys[i], key)) {
				fail(ps, -EINVAL, "the key \"%.64s\" appears twice in one object", key);
				free(key);
				return ps->err;
			}
		}
		v->keys[v->n] = key;
		memset(&v->items[v->n], 0, sizeof(v->items[0]));
		v->n++;
		skip_ws(ps);
		if (ps->p >= ps->end || *ps->p != ':')
			return fail(ps, -EINVAL, "an object key is not followed by ':'");
		ps->p++;
		if (parse_value(ps, &v->items[v->n - 1], depth + 1))
			return ps->err;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == '}') {
			ps->p++;
			return 0;
		}
		return fail(ps, -EINVAL, "an object member is followed by neither ',' nor '}'");
	}
}

static int literal(struct parser *ps, const char *word, enum json_type t,
		   struct json_value *v)
{
	size_t l = strlen(word);

	if ((size_t)(ps->end - ps->p) < l || memcmp(ps->p, word, l))
		return fail(ps, -EINVAL, "an unexpected character '%c'", *ps->p);
	ps->p += l;
	v->type = t;
	return 0;
}

static int parse_value(struct parser *ps, struct json_value *v, int depth)
{
	skip_ws(ps);
	if (ps->p >= ps->end)
		return fail(ps, -EINVAL, "the document ends where a value should be");
	if (++ps->values > JSON_MAX_VALUES)
		return fail(ps, -E2BIG, "more than %u values", JSON_MAX_VALUES);
	switch (*ps->p) {
	case '{':
	case '[':
		if (depth >= JSON_MAX_DEPTH)
			return fail(ps, -E2BIG, "nested deeper than %d levels", JSON_MAX_DEPTH);
		return *ps->p == '{' ? parse_object(ps, v, depth) :
				       parse_array(ps, v, depth);
	case '"':
		v->type = JSON_STRING;
		return parse_string(ps, &v->str, &v->len);
	case 't':
		return literal(ps, "true", JSON_TRUE, v);
	case 'f':
		return literal(ps, "false", JSON_FALSE, v);
	case 'n':
		return literal(ps, "null", JSON_NULL, v);
	default:
		return parse_number(ps, v);
	}
}

static void free_members(struct json_value *v)
{
	free(v->str);
	for (size_t i = 0; i < v->n; i++) {
		free_members(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
}

void json_free(struct json_value *v)
{
	if (!v)
		return;
	free_members(v);
	free(v);
}

int json_parse(const char *buf, size_t len, struct json_value **out,
	       char *why, size_t whylen)
{
	struct parser ps = {
		.p = (const unsigned char *)buf,
		.start = (const unsigned char *)buf,
		.end = (const unsigned char *)buf + len,
		.why = why, .whylen = whylen,
	};
	struct json_value *v;

	*out = NULL;
	if (why && whylen)
		why[0] = '\0';
	if (len > JSON_MAX_DOC)
		return fail(&ps, -E2BIG, "the document is larger than %u bytes", JSON_MAX_DOC);
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (!parse_value(&ps, v, 0)) {
		skip_ws(&ps);
		if (ps.p != ps.end)
			fail(&ps, -EINVAL, "something follows the value");
	}
	if (ps.err) {
		json_free(v);
		return ps.err;
	}
	*out = v;
	return 0;
}

const struct json_value *json_get(const struct json_value *obj,
				  const char *key)
{
	if (!obj || obj->type != JSON_OBJECT)
		return NULL;
	for (size_t i = 0; i < obj->n; i++)
		if (!strcmp(obj->keys[i], key))
			return &obj->items[i];
	return NULL;
}

const char *json_get_str(const struct json_value *obj, const char *key)
{
	const struct json_value *v = json_get(obj, key);

	if (!v || v->type != JSON_STRING || strlen(v->str) != v->len)
		return NULL;
	return v->str;
}

int json_uint(const struct json_value *v, uint64_t *out)
{
	uint64_t n = 0;

	if (!v || v->type != JSON_NUMBER || !v->len)
		return -EINVAL;
	for (size_t i = 0; i < v->len; i++) {
		unsigned int d;

		if (v->str[i] < '0' || v->str[i] > '9')
			return -EINVAL;	/* sign, fraction or exponent */
		d = (unsigned int)(v->str[i] - '0');
		if (n > ((uint64_t)INT64_MAX - d) / 10)
			return -EINVAL;
		n = n * 10 + d;
	}
	*out = n;
	return 0;
}
