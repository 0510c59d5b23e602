#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"

#include "check.h"

#include <stdarg.h>

#include <stdlib.h>
#include <time.h>

/* A growing text buffer for the large bodies below. */
struct text {
	char *s;
	size_t len, cap;
};

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (t->len + (size_t)n + 1 > t->cap) {
		t->cap = (t->len + (size_t)n + 1) * 2;
		t->s = realloc(t->s, t->cap);
		if (!t->s)
			abort();
	}
	va_start(ap, fmt);
	vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
}

/* {"k0":0,"k1":1,...} with `n` keys, key `dup_at` repeating key `dup_of`
 * (no repeat when dup_at < 0). */
static char *object_of(int n, int dup_at, int dup_of)
{
	struct text t = {0};

	put(&t, "{");
	for (int i = 0; i < n; i++)
		put(&t, "%s\"k%d\":%d", i ? "," : "", i == dup_at ? dup_of : i, i);
	put(&t, "}");
	return t.s;
}

/* {"a":[0,0,...]} with `n` items. */
static char *array_of(int n)
{
	struct text t = {0};

	put(&t, "{\"a\":[");
	for (int i = 0; i < n; i++)
		put(&t, "%s0", i ? "," : "");
	put(&t, "]}");
	return t.s;
}

/* The bytes json_parse_object_span finds for root member `key` of `s`, in
 * out ("" when none); -1 when `s` does not parse. */
static int span_of(const char *s, const char *key, char *out, size_t size)
{
	char err[256];
	yajl_val v = NULL;
	size_t at = 99, len = 99;
	int rc = json_parse_object_span(s, strlen(s), key, &at, &len, &v, err, sizeof(err));

	yajl_tree_free(v);
	if (rc < 0)
		return -1;
	if (len >= size || at + len > strlen(s))
		return -1;
	memcpy(out, s + at, len);
	out[len] = '\0';
	return 0;
}

static int parses(const char *s, char *err)
{
	yajl_val v = NULL;
	int rc = json_parse_object(s, strlen(s), &v, err, 256);
	yajl_tree_free(v);
	return rc;
}

/* One canonical text for one value, whatever the order of its members. */
static void test_canonical(void)
{
	const char *a = "{\"b\":[{\"y\":1,\"x\":2.50}],\"a\":\"\\u00e9\",\"c\":null}";
	const char *b = "{\"c\":null,\"a\":\"\xc3\xa9\",\"b\":[{\"x\":2.50,\"y\":1}]}";
	char err[128], *ta, *tb;
	yajl_val va = NULL, vb = NULL;
	yajl_gen g;
	const char *buf;
	size_t len;

	CHECK_INT(json_parse_object(a, strlen(a), &va, err, sizeof(err)), 0);
	CHECK_INT(json_parse_object(b, strlen(b), &vb, err, sizeof(err)), 0);
	g = json_gen_new();
	json_write_canonical(g, va);
	buf = json_buf(g, &len);
	ta = mem_strndup(buf, len);
	yajl_gen_free(g);
	g = json_gen_new();
	json_write_canonical(g, vb);
	buf = json_buf(g, &len);
	tb = mem_strndup(buf, len);
	yajl_gen_free(g);
	CHECK_STR(ta, "{\"a\":\"\xc3\xa9\",\"b\":[{\"x\":2.50,\"y\":1}],\"c\":null}");
	CHECK_STR(ta, tb);
	free(ta);
	free(tb);
	yajl_tree_free(va);
	yajl_tree_free(vb);
}

int main(void)
{
	char err[256];
	yajl_val v = NULL;
	int64_t n = 0;
	char deep[200];

	CHECK_INT(json_parse_object("{\"amount\":200,\"s\":\"x\"}",
				    strlen("{\"amount\":200,\"s\":\"x\"}"), &v, err, sizeof(err)),
		  0);
	CHECK(json_is_int64(json_get(v, "amount"), &n));
	CHECK_INT(n, 200);
	CHECK(json_get(v, "missing") == NULL);
	CHECK(!json_is_int64(json_get(v, "s"), &n));
	yajl_tree_free(v);

	/* fractions, exponents and overflow are not integers */
	CHECK_INT(json_parse_object("{\"a\":1.0,\"b\":1e3,\"c\":99999999999999999999}", 42, &v, err,
				    sizeof(err)),
		  0);
	CHECK(!json_is_int64(json_get(v, "a"), &n));
	CHECK(!json_is_int64(json_get(v, "b"), &n));
	CHECK(!json_is_int64(json_get(v, "c"), &n));
	yajl_tree_free(v);
	CHECK_INT(json_parse_object("{\"a\":-5}", 8, &v, err, sizeof(err)), 0);
	CHECK(json_is_int64(json_get(v, "a"), &n));
	CHECK_INT(n, -5);
	yajl_tree_free(v);

	/* a member's container as received: its bytes, spaces and escapes kept;
	 * only the root's member, objects and arrays, not scalars */
	{
		char got[256];
		CHECK_INT(
		    span_of("{\"id\":\"x\",\"data\":{\"id\":\"c\", \"n\" : [1, {\"a\":\"}\"}],"
			    "\"e\":\"\\u00e9\"} ,\"z\":1}",
			    "data", got, sizeof(got)),
		    0);
		CHECK_STR(got, "{\"id\":\"c\", \"n\" : [1, {\"a\":\"}\"}],\"e\":\"\\u00e9\"}");
		CHECK_INT(span_of("{\"data\":[ {\"data\":{}} ]}", "data", got, sizeof(got)), 0);
		CHECK_STR(got, "[ {\"data\":{}} ]");
		CHECK_INT(
		    span_of("{\"o\":{\"data\":{\"a\":1}},\"data\":{}}", "data", got, sizeof(got)),
		    0);
		CHECK_STR(got, "{}");
		CHECK_INT(span_of("{\"o\":{\"data\":{\"a\":1}}}", "data", got, sizeof(got)), 0);
		CHECK_STR(got, "");
		CHECK_INT(span_of("{\"data\":\"{}\",\"x\":{}}", "data", got, sizeof(got)), 0);
		CHECK_STR(got, "");
		CHECK_INT(span_of("{\"data\":null}", "data", got, sizeof(got)), 0);
		CHECK_STR(got, "");
		CHECK_INT(span_of("{\"data\":{\"a\":1},\"data\":{}}", "data", got, sizeof(got)),
			  -1);
		CHECK_INT(span_of("{\"data\":{\"a\":1}", "data", got, sizeof(got)), -1);
	}

	CHECK_INT(parses("", err), -1);
	CHECK_STR(err, "request body is empty; a JSON object is expected");
	CHECK_INT(parses("[1,2]", err), -1);
	CHECK_STR(err, "request body must be a JSON object");
	CHECK_INT(parses("\"str\"", err), -1);
	CHECK_STR(err, "request body must be a JSON object");
	CHECK_INT(parses("{\"a\":1,\"a\":2}", err), -1);
	CHECK_STR(err, "invalid JSON: duplicate field 'a'");
	CHECK_INT(parses("{\"o\":{\"k\":1,\"k\":1}}", err), -1);
	CHECK_STR(err, "invalid JSON: duplicate field 'k'");
	CHECK_INT(parses("{\"a\":", err), -1);
	CHECK(strncmp(err, "invalid JSON: ", 14) == 0);
	CHECK(strchr(err, '\n') == NULL);
	CHECK_INT(parses("{\"a\":\"\xff\"}", err), -1);
	CHECK(strncmp(err, "invalid JSON: ", 14) == 0);
	CHECK_INT(json_parse_object("{\"a\":1}\0x", 9, &v, err, sizeof(err)), -1);
	CHECK_STR(err, "invalid JSON: NUL byte in body");
	/* a NUL inside a string, before and after escapes, and in one that is
	 * never closed */
	CHECK_INT(json_parse_object("{\"a\":\"xy\0z\"}", 11, &v, err, sizeof(err)), -1);
	CHECK_STR(err, "invalid JSON: NUL byte in body");
	CHECK_INT(json_parse_object("{\"a\":\"\\\"\\n\0\"}", 13, &v, err, sizeof(err)), -1);
	CHECK_STR(err, "invalid JSON: NUL byte in body");
	CHECK_INT(json_parse_object("{\"a\":\"x\0", 8, &v, err, sizeof(err)), -1);
	CHECK_STR(err, "invalid JSON: NUL byte in body");
	/* a string never closed, of escapes only: refused, and the first pass
	 * over it stays linear (each escape once looked for the next quote
	 * again over the whole rest: 2 MiB took 17 s, 16 MiB would take
	 * minutes; linear, it is milliseconds) */
	{
		size_t size = 16u << 20;
		char *big = malloc(size);
		struct timespec t0, t1;
		double secs;

		if (!big)
			abort();
		memcpy(big, "{\"a\":\"", 6);
		for (size_t i = 6; i + 1 < size; i += 2)
			memcpy(big + i, "\\n", 2);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		CHECK_INT(json_parse_object(big, size, &v, err, sizeof(err)), -1);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		CHECK(strncmp(err, "invalid JSON: ", 14) == 0);
		CHECK(secs < 5.0);
		free(big);
	}
	/* an escaped quote does not close a string: the brackets after it are
	 * still inside it, and a \u0000 after it is still seen */
	CHECK_INT(parses("{\"a\":\"\\\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"}", err), 0);
	CHECK_INT(parses("{\"a\":\"\\\"x\\u0000\"}", err), -1);
	CHECK_STR(err, "invalid JSON: \\u0000 is not allowed in strings");

	/* nesting is bounded before yajl builds (and recursively frees) a tree */
	memset(deep, 0, sizeof(deep));
	deep[0] = '{';
	strcat(deep, "\"a\":");
	for (int i = 0; i < 40; i++)
		strcat(deep, "[");
	CHECK_INT(parses(deep, err), -1);
	CHECK_STR(err, "invalid JSON: nested deeper than 32 levels");
	/* brackets inside strings do not count */
	CHECK_INT(parses("{\"a\":\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\\\"[[[\"}", err), 0);

	/* exactly JSON_MAX_DEPTH levels are fine, one more is not */
	{
		struct text t = {0};
		for (int i = 0; i < JSON_MAX_DEPTH; i++)
			put(&t, "%s", i == 0 ? "{\"a\":" : i % 2 ? "[" : "{\"b\":");
		put(&t, "1");
		for (int i = JSON_MAX_DEPTH - 1; i >= 0; i--)
			put(&t, "%s", i % 2 ? "]" : "}");
		CHECK_INT(parses(t.s, err), 0);
		free(t.s);
	}

	/* comments are not JSON (yajl_tree_parse allowed them) */
	CHECK_INT(parses("{\"a\":1 /* c */}", err), -1);
	CHECK(strncmp(err, "invalid JSON: ", 14) == 0);
	CHECK_INT(parses("{\"a\":1} // c", err), -1);
	CHECK(strncmp(err, "invalid JSON: ", 14) == 0);
	/* one value only: trailing text is refused */
	CHECK_INT(parses("{\"a\":1} {}", err), -1);
	CHECK(strncmp(err, "invalid JSON: ", 14) == 0);
	CHECK_INT(parses("{} 1", err), -1);
	CHECK(strncmp(err, "invalid JSON: ", 14) == 0);
	/* a value that is not an object is refused at once, even unfinished */
	CHECK_INT(parses("[1,2,", err), -1);
	CHECK_STR(err, "request body must be a JSON object");

	/* numbers keep their text; integers only within int64 */
	{
		const char *s = "{\"a\":9223372036854775807,\"b\":-9223372036854775808,"
				"\"c\":9223372036854775808,\"d\":-0,\"e\":1E+2}";
		CHECK_INT(json_parse_object(s, strlen(s), &v, err, sizeof(err)), 0);
	}
	CHECK(json_is_int64(json_get(v, "a"), &n));
	CHECK_INT(n, INT64_MAX);
	CHECK(json_is_int64(json_get(v, "b"), &n));
	CHECK_INT(n, INT64_MIN);
	CHECK(!json_is_int64(json_get(v, "c"), &n));
	CHECK(json_is_int64(json_get(v, "d"), &n));
	CHECK_INT(n, 0);
	CHECK(!json_is_int64(json_get(v, "e"), &n));
	CHECK(YAJL_IS_DOUBLE(json_get(v, "e")));
	CHECK_STR(json_get(v, "e")->u.number.r, "1E+2");
	CHECK_STR(json_get(v, "c")->u.number.r, "9223372036854775808");
	yajl_tree_free(v);

	/* escapes and UTF-8 are decoded; keys too */
	{
		const char *s = "{\"k\\u00e9\":\"a\\n\\ud83d\\ude00\"}";
		CHECK_INT(json_parse_object(s, strlen(s), &v, err, sizeof(err)), 0);
	}
	CHECK_STR(v->u.object.keys[0], "k\xc3\xa9");
	CHECK_STR(v->u.object.values[0]->u.string, "a\n\xf0\x9f\x98\x80");
	yajl_tree_free(v);

	/* large objects: every key kept in order, a repeat found wherever it is,
	 * and the message names the first repeat in the body's order */
	{
		char *s = object_of(5000, -1, 0);
		CHECK_INT(json_parse_object(s, strlen(s), &v, err, sizeof(err)), 0);
		CHECK_INT(v->u.object.len, 5000);
		CHECK_STR(v->u.object.keys[4321], "k4321");
		CHECK_INT(v->u.object.values[4321]->u.number.i, 4321);
		yajl_tree_free(v);
		free(s);
		s = object_of(5000, 4999, 0);
		CHECK_INT(parses(s, err), -1);
		CHECK_STR(err, "invalid JSON: duplicate field 'k0'");
		free(s);
		s = object_of(5000, 17, 3000);
		CHECK_INT(parses(s, err), -1);
		CHECK_STR(err, "invalid JSON: duplicate field 'k3000'");
		free(s);
	}
	/* every key the same: the second one is the first repeat */
	{
		struct text t = {0};
		put(&t, "{\"x\":{");
		for (int i = 0; i < 3000; i++)
			put(&t, "%s\"same\":%d", i ? "," : "", i);
		put(&t, "}}");
		CHECK_INT(parses(t.s, err), -1);
		CHECK_STR(err, "invalid JSON: duplicate field 'same'");
		free(t.s);
	}
	/* keys differing only in their last byte, and a prefix of another */
	CHECK_INT(parses("{\"ab\":1,\"a\":2,\"abc\":3,\"b\":4,\"ba\":5,\"abd\":6,\"\":7,"
			 "\"a\\u0001\":8,\"ab \":9}",
			 err),
		  0);

	/* a key quoted back is cut at a character boundary, controls as '?' */
	{
		char key[200] = "", body[300], want[300];
		for (int i = 0; i < 40; i++)
			strcat(key, "\xc3\xa9"); /* 80 bytes of é */
		snprintf(body, sizeof(body), "{\"%s\":1,\"%s\":2}", key, key);
		CHECK_INT(parses(body, err), -1);
		snprintf(want, sizeof(want), "invalid JSON: duplicate field '%.64s'", key);
		CHECK_STR(err, want);
		strcpy(key, "x");
		for (int i = 0; i < 21; i++)
			strcat(key, "\xe2\x82\xac"); /* 1 + 63 bytes of € */
		snprintf(body, sizeof(body), "{\"%sz\":1,\"%sz\":2}", key, key);
		CHECK_INT(parses(body, err), -1);
		snprintf(want, sizeof(want), "invalid JSON: duplicate field '%s'", key);
		CHECK_STR(err, want);
		strcpy(key, "x");
		for (int i = 0; i < 22; i++)
			strcat(key, "\xe2\x82\xac"); /* 1 + 66 bytes: the 22nd is left out */
		snprintf(body, sizeof(body), "{\"%s\":1,\"%s\":2}", key, key);
		CHECK_INT(parses(body, err), -1);
		snprintf(want, sizeof(want), "invalid JSON: duplicate field '%.64s'", key);
		CHECK_STR(err, want);
		CHECK_INT(parses("{\"a\\u0001\\t\":1,\"a\\u0001\\t\":1}", err), -1);
		CHECK_STR(err, "invalid JSON: duplicate field 'a?"
			       "?'");
	}
	{
		char out[JSON_ECHO_MAX + 1];
		CHECK_STR(json_echo(out, ""), "");
		CHECK_STR(json_echo(out, "abc\x7f"), "abc?");
	}

	/* at most JSON_MAX_VALUES values: the root and its array count too */
	{
		char *s = array_of(JSON_MAX_VALUES - 2);
		CHECK_INT(json_parse_object(s, strlen(s), &v, err, sizeof(err)), 0);
		CHECK_INT(json_get(v, "a")->u.array.len, JSON_MAX_VALUES - 2);
		yajl_tree_free(v);
		free(s);
		s = array_of(JSON_MAX_VALUES - 1);
		CHECK_INT(parses(s, err), -1);
		CHECK_STR(err, "invalid JSON: more than 10000 values in the body (at a[9998])");
		free(s);
		s = object_of(JSON_MAX_VALUES + 5, -1, 0);
		CHECK_INT(parses(s, err), -1);
		CHECK_STR(err, "invalid JSON: more than 10000 values in the body (at k9999)");
		free(s);
	}
	{
		struct text t = {0};
		put(&t, "{\"o\":{\"list\":[{\"x\\u0001y\":[");
		for (int i = 0; i < JSON_MAX_VALUES; i++)
			put(&t, "%snull", i ? "," : "");
		put(&t, "]}]}}");
		CHECK_INT(parses(t.s, err), -1);
		CHECK_STR(
		    err,
		    "invalid JSON: more than 10000 values in the body (at o.list[0].x?y[9995])");
		free(t.s);
	}

	{
		yajl_gen g = json_gen_new();
		size_t len;
		const char *s;
		json_open(g);
		json_str(g, "a");
		json_str_or_null(g, NULL);
		json_str(g, "b");
		json_raw(g, "{\"x\":1}", 7);
		json_str(g, "c");
		json_strn(g, "\xff", 1);
		json_close(g);
		s = json_buf(g, &len);
		CHECK_INT(len, strlen("{\"a\":null,\"b\":{\"x\":1},\"c\":\"\xef\xbf\xbd\"}"));
		CHECK(memcmp(s, "{\"a\":null,\"b\":{\"x\":1},\"c\":\"\xef\xbf\xbd\"}", len) == 0);
		yajl_gen_free(g);
	}
	test_canonical();
	return check_finish("json");
}
