// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: common/json.c, the strict JSON parser mkfs.erofs --oci
 * reads index.json and manifests with, over arbitrary bytes.  A document
 * it accepts is walked (every member looked up by its key, every number
 * read as an integer), written back as JSON and parsed again: the second
 * tree must equal the first (escapes, surrogate pairs and UTF-8 decoded
 * and encoded consistently).  Built and run by scripts/fuzz with
 * ASan+UBSan.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsforge/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct out {
	char *p;
	size_t len, cap;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->len + n + 1 > o->cap) {
		size_t cap = (o->len + n + 1) * 2;
		char *p = realloc(o->p, cap);

		if (!p)
			abort();
		o->p = p;
		o->cap = cap;
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
}

static void put_string(struct out *o, const char *s, size_t n)
{
	put(o, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[8];

		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			put(o, esc, 2);
		} else if (c < 0x20) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			put(o, esc, 6);
		} else {
			put(o, (const char *)&s[i], 1);
		}
	}
	put(o, "\"", 1);
}

static void serialize(struct out *o, const struct json_value *v)
{
	switch (v->type) {
	case JSON_NULL: put(o, "null", 4); break;
	case JSON_FALSE: put(o, "false", 5); break;
	case JSON_TRUE: put(o, "true", 4); break;
	case JSON_NUMBER: put(o, v->str, v->len); break;
	case JSON_STRING: put_string(o, v->str, v->len); break;
	case JSON_ARRAY:
	case JSON_OBJECT:
		put(o, v->type == JSON_ARRAY ? "[" : "{", 1);
		for (size_t i = 0; i < v->n; i++) {
			if (i)
				put(o, ",", 1);
			if (v->type == JSON_OBJECT) {
				put_string(o, v->keys[i], strlen(v->keys[i]));
				put(o, ":", 1);
			}
			serialize(o, &v->items[i]);
		}
		put(o, v->type == JSON_ARRAY ? "]" : "}", 1);
		break;
	}
}

static void walk(const struct json_value *v)
{
	uint64_t n;

	if (v->type == JSON_NUMBER)
		(void)json_uint(v, &n);
	for (size_t i = 0; i < v->n; i++) {
		if (v->type == JSON_OBJECT &&
		    json_get(v, v->keys[i]) != &v->items[i])
			abort();
		if (v->type == JSON_OBJECT)
			(void)json_get_str(v, v->keys[i]);
		walk(&v->items[i]);
	}
}

static int same(const struct json_value *a, const struct json_value *b)
{
	if (a->type != b->type || a->n != b->n || a->len != b->len)
		return 0;
	if ((a->type == JSON_STRING || a->type == JSON_NUMBER) &&
	    memcmp(a->str, b->str, a->len))
		return 0;
	for (size_t i = 0; i < a->n; i++) {
		if (a->type == JSON_OBJECT && strcmp(a->keys[i], b->keys[i]))
			return 0;
		if (!same(&a->items[i], &b->items[i]))
			return 0;
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_value *v = NULL, *w = NULL;
	struct out o = { 0 };
	char why[160];

	if (json_parse((const char *)data, size, &v, why, sizeof(why)))
		return 0;
	walk(v);
	serialize(&o, v);
	if (json_parse(o.p, o.len, &w, why, sizeof(why)) || !same(v, w)) {
		fprintf(stderr, "re-parse of the written document: %s\n", why);
		abort();
	}
	json_free(v);
	json_free(w);
	free(o.p);
	return 0;
}
