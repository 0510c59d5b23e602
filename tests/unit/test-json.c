#include "pixrelay/json.h"

#include "check.h"

#include <stdlib.h>

static int parses(const char *s, char *err)
{
	yajl_val v = NULL;
	int rc = json_parse_object(s, strlen(s), &v, err, 256);
	yajl_tree_free(v);
	return rc;
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
	CHECK(json_as_int64(json_get(v, "amount"), &n));
	CHECK_INT(n, 200);
	CHECK(json_get(v, "missing") == NULL);
	CHECK(!json_as_int64(json_get(v, "s"), &n));
	yajl_tree_free(v);

	/* fractions, exponents and overflow are not integers */
	CHECK_INT(json_parse_object("{\"a\":1.0,\"b\":1e3,\"c\":99999999999999999999}", 42, &v, err,
				    sizeof(err)),
		  0);
	CHECK(!json_as_int64(json_get(v, "a"), &n));
	CHECK(!json_as_int64(json_get(v, "b"), &n));
	CHECK(!json_as_int64(json_get(v, "c"), &n));
	yajl_tree_free(v);
	CHECK_INT(json_parse_object("{\"a\":-5}", 8, &v, err, sizeof(err)), 0);
	CHECK(json_as_int64(json_get(v, "a"), &n));
	CHECK_INT(n, -5);
	yajl_tree_free(v);

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
	return check_finish("json");
}
