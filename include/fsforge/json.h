/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A small strict JSON parser (RFC 8259) for documents read from disk
 * that are not trusted: OCI image layouts' index.json and manifests.
 * Strict: no comments, no trailing commas, no leading zeros, no control
 * characters or invalid UTF-8 in strings, no lone surrogates, no
 * duplicate keys in an object, nothing but whitespace after the value.
 * Bounded: nesting depth, document size and value count are limited, so
 * a hostile document costs at most a few times its own size.
 */
#ifndef FSFORGE_JSON_H
#define FSFORGE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_MAX_DEPTH 64		/* arrays and objects nested */
#define JSON_MAX_DOC (16u << 20)	/* bytes of one document */
#define JSON_MAX_VALUES (1u << 20)	/* values of one document */

enum json_type {
	JSON_NULL, JSON_FALSE, JSON_TRUE, JSON_NUMBER, JSON_STRING,
	JSON_ARRAY, JSON_OBJECT
};

struct json_value {
	enum json_type type;
	/* JSON_STRING: the decoded UTF-8 (NUL-terminated; LEN bytes, which
	 * may hold a NUL from "\u0000"); JSON_NUMBER: its text */
	char *str;
	size_t len;
	/* JSON_ARRAY and JSON_OBJECT: N items (and, for objects, keys[i]
	 * names items[i]; keys are NUL-terminated, without NULs) */
	struct json_value *items;
	char **keys;
	size_t n;
};

/* BUF (LEN bytes) into *OUT; -EINVAL with a message in WHY (WHYLEN
 * bytes, naming the byte offset) when it is not one strict JSON value,
 * -E2BIG when a bound is passed, -ENOMEM */
int json_parse(const char *buf, size_t len, struct json_value **out,
	       char *why, size_t whylen);
void json_free(struct json_value *v);

/* the member KEY of object OBJ, or NULL (also when OBJ is no object) */
const struct json_value *json_get(const struct json_value *obj,
				  const char *key);
/* the string member KEY, or NULL when missing, not a string or holding
 * a NUL */
const char *json_get_str(const struct json_value *obj, const char *key);
/* a number that is an integer in [0, INT64_MAX] (no fraction or
 * exponent): 0 and *OUT, else -EINVAL */
int json_uint(const struct json_value *v, uint64_t *out);

#endif
