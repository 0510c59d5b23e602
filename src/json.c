#include "pixrelay/json.h"

#include "pixrelay/mem.h"
#include "pixrelay/timefmt.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* The value of 4 hex digits, or -1. */
static long hex4(const char *p)
{
	long v = 0;

	for (int i = 0; i < 4; i++) {
		char c = p[i];
		int d = ('0' <= c && c <= '9')	 ? c - '0'
			: ('a' <= c && c <= 'f') ? c - 'a' + 10
			: ('A' <= c && c <= 'F') ? c - 'A' + 10
						 : -1;
		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/* One pass over the text to bound nesting and refuse NUL bytes before yajl
 * builds a tree (its free is recursive). Strings are skipped with their
 * escapes; yajl itself judges everything else. */
static int check_shape(const char *s, size_t len, char *err, size_t errlen)
{
	int depth = 0, in_str = 0;

	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (c == '\0') {
			snprintf(err, errlen, "invalid JSON: NUL byte in body");
			return -1;
		}
		if (in_str) {
			if (c == '"') {
				in_str = 0;
			} else if (c == '\\' && i + 1 < len && s[i + 1] == 'u') {
				/* yajl would turn \u0000 into a NUL that cuts the string short,
				 * and a lone surrogate into '?': refuse both */
				long cp = i + 5 < len ? hex4(s + i + 2) : -1;
				if (cp == 0) {
					snprintf(err, errlen,
						 "invalid JSON: \\u0000 is not allowed in strings");
					return -1;
				}
				if (cp >= 0xd800 && cp <= 0xdbff) {
					long lo =
					    i + 11 < len && s[i + 6] == '\\' && s[i + 7] == 'u'
						? hex4(s + i + 8)
						: -1;
					if (lo < 0xdc00 || lo > 0xdfff) {
						snprintf(err, errlen,
							 "invalid JSON: unpaired UTF-16 surrogate "
							 "in a string");
						return -1;
					}
					i += 6;
				} else if (cp >= 0xdc00 && cp <= 0xdfff) {
					snprintf(
					    err, errlen,
					    "invalid JSON: unpaired UTF-16 surrogate in a string");
					return -1;
				}
				i++;
			} else if (c == '\\') {
				i++;
			}
			continue;
		}
		if (c == '"') {
			in_str = 1;
		} else if (c == '{' || c == '[') {
			if (++depth > JSON_MAX_DEPTH) {
				snprintf(err, errlen, "invalid JSON: nested deeper than %d levels",
					 JSON_MAX_DEPTH);
				return -1;
			}
		} else if (c == '}' || c == ']') {
			depth--;
		}
	}
	return 0;
}

static int has_duplicate_keys(yajl_val v, char *err, size_t errlen)
{
	if (YAJL_IS_OBJECT(v)) {
		for (size_t i = 0; i < v->u.object.len; i++) {
			for (size_t j = 0; j < i; j++) {
				if (strcmp(v->u.object.keys[i], v->u.object.keys[j]) == 0) {
					snprintf(err, errlen,
						 "invalid JSON: duplicate field '%.64s'",
						 v->u.object.keys[i]);
					return 1;
				}
			}
			if (has_duplicate_keys(v->u.object.values[i], err, errlen))
				return 1;
		}
	} else if (YAJL_IS_ARRAY(v)) {
		for (size_t i = 0; i < v->u.array.len; i++)
			if (has_duplicate_keys(v->u.array.values[i], err, errlen))
				return 1;
	}
	return 0;
}

int json_parse_object(const char *body, size_t len, yajl_val *out, char *err, size_t errlen)
{
	char ybuf[256] = "";
	char *text = NULL;
	yajl_val root = NULL;
	int rc = -1;

	if (len == 0) {
		snprintf(err, errlen, "request body is empty; a JSON object is expected");
		goto done;
	}
	if (check_shape(body, len, err, errlen) < 0)
		goto done;
	text = mem_strndup(body, len);
	root = yajl_tree_parse(text, ybuf, sizeof(ybuf));
	if (!root) {
		/* yajl's message spans lines and quotes the input; keep its first line */
		ybuf[strcspn(ybuf, "\n")] = '\0';
		snprintf(err, errlen, "invalid JSON: %s", ybuf[0] ? ybuf : "parse error");
		goto done;
	}
	if (!YAJL_IS_OBJECT(root)) {
		snprintf(err, errlen, "request body must be a JSON object");
		goto done;
	}
	if (has_duplicate_keys(root, err, errlen))
		goto done;
	*out = root;
	root = NULL;
	rc = 0;
done:
	yajl_tree_free(root);
	free(text);
	return rc;
}

yajl_val json_get(yajl_val obj, const char *key)
{
	if (!YAJL_IS_OBJECT(obj))
		return NULL;
	for (size_t i = 0; i < obj->u.object.len; i++)
		if (strcmp(obj->u.object.keys[i], key) == 0)
			return obj->u.object.values[i];
	return NULL;
}

int json_as_int64(yajl_val v, int64_t *out)
{
	if (!YAJL_IS_NUMBER(v) || !YAJL_IS_INTEGER(v))
		return 0;
	/* yajl marks an integer only when strtoll took the whole text without
	 * overflow; "1e3" and "1.0" are doubles and so refused here */
	*out = (int64_t)YAJL_GET_INTEGER(v);
	return 1;
}

yajl_gen json_gen_new(void)
{
	yajl_gen g = yajl_gen_alloc(NULL);

	if (!g)
		mem_oom(__FILE__, __LINE__);
	yajl_gen_config(g, yajl_gen_validate_utf8, 1);
	return g;
}

void json_str(yajl_gen g, const char *s)
{
	json_strn(g, s, strlen(s));
}

void json_strn(yajl_gen g, const char *s, size_t n)
{
	if (yajl_gen_string(g, (const unsigned char *)s, n) == yajl_gen_invalid_string)
		yajl_gen_string(g, (const unsigned char *)"\xef\xbf\xbd", 3);
}

void json_str_or_null(yajl_gen g, const char *s)
{
	if (s)
		json_str(g, s);
	else
		yajl_gen_null(g);
}

void json_int(yajl_gen g, long long v)
{
	yajl_gen_integer(g, v);
}

void json_null(yajl_gen g)
{
	yajl_gen_null(g);
}

void json_bool(yajl_gen g, int v)
{
	yajl_gen_bool(g, v);
}

void json_open(yajl_gen g)
{
	yajl_gen_map_open(g);
}

void json_close(yajl_gen g)
{
	yajl_gen_map_close(g);
}

void json_open_array(yajl_gen g)
{
	yajl_gen_array_open(g);
}

void json_close_array(yajl_gen g)
{
	yajl_gen_array_close(g);
}

void json_raw(yajl_gen g, const char *text, size_t len)
{
	yajl_gen_number(g, text, len);
}

const char *json_buf(yajl_gen g, size_t *len)
{
	const unsigned char *buf = NULL;

	yajl_gen_get_buf(g, &buf, len);
	return (const char *)buf;
}

void json_write_value(yajl_gen g, yajl_val v)
{
	if (!v || YAJL_IS_NULL(v)) {
		yajl_gen_null(g);
	} else if (YAJL_IS_STRING(v)) {
		json_str(g, YAJL_GET_STRING(v));
	} else if (YAJL_IS_NUMBER(v)) {
		json_raw(g, v->u.number.r, strlen(v->u.number.r));
	} else if (YAJL_IS_TRUE(v)) {
		yajl_gen_bool(g, 1);
	} else if (YAJL_IS_FALSE(v)) {
		yajl_gen_bool(g, 0);
	} else if (YAJL_IS_OBJECT(v)) {
		yajl_gen_map_open(g);
		for (size_t i = 0; i < v->u.object.len; i++) {
			json_str(g, v->u.object.keys[i]);
			json_write_value(g, v->u.object.values[i]);
		}
		yajl_gen_map_close(g);
	} else if (YAJL_IS_ARRAY(v)) {
		yajl_gen_array_open(g);
		for (size_t i = 0; i < v->u.array.len; i++)
			json_write_value(g, v->u.array.values[i]);
		yajl_gen_array_close(g);
	}
}

void json_time_ms(yajl_gen g, const char *ms)
{
	char t[25];

	if (!ms || !*ms) {
		json_null(g);
		return;
	}
	timefmt_rfc3339(t, strtoull(ms, NULL, 10));
	json_str(g, t);
}
