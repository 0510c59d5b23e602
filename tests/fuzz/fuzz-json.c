/* Fuzz the request-body parser: any bytes must be accepted or refused with a
 * message, never crash, leak or read out of bounds. What is accepted must
 * keep the promises of json.h, checked here the slow, obvious way: an object
 * at the root, no object with two equal keys, at most JSON_MAX_DEPTH levels
 * and JSON_MAX_VALUES values; and written out again, it must parse again to
 * the same text. */
#include "pixrelay/core/json.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Values in `v` (itself included); traps on a broken promise. */
static size_t check_tree(yajl_val v, int depth)
{
	size_t n = 1;

	if (!v)
		__builtin_trap();
	if (YAJL_IS_OBJECT(v) || YAJL_IS_ARRAY(v)) {
		if (depth > JSON_MAX_DEPTH)
			__builtin_trap();
	}
	if (YAJL_IS_OBJECT(v)) {
		for (size_t i = 0; i < v->u.object.len; i++) {
			for (size_t j = 0; j < i; j++)
				if (strcmp(v->u.object.keys[i], v->u.object.keys[j]) == 0)
					__builtin_trap();
			n += check_tree(v->u.object.values[i], depth + 1);
		}
	} else if (YAJL_IS_ARRAY(v)) {
		for (size_t i = 0; i < v->u.array.len; i++)
			n += check_tree(v->u.array.values[i], depth + 1);
	} else if (YAJL_IS_STRING(v)) {
		if (!v->u.string)
			__builtin_trap();
	} else if (YAJL_IS_NUMBER(v)) {
		if (!v->u.number.r || !v->u.number.r[0])
			__builtin_trap();
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256] = "";
	yajl_val v = NULL, again = NULL;
	yajl_gen g1, g2;
	const char *t1, *t2;
	size_t l1, l2;

	if (json_parse_object((const char *)data, size, &v, err, sizeof(err)) != 0) {
		if (err[0] == '\0' || v)
			__builtin_trap(); /* a refusal always says why, and gives nothing */
		return 0;
	}
	if (!YAJL_IS_OBJECT(v) || check_tree(v, 1) > JSON_MAX_VALUES)
		__builtin_trap();
	g1 = json_gen_new();
	json_write_value(g1, v);
	t1 = json_buf(g1, &l1);
	if (json_parse_object(t1, l1, &again, err, sizeof(err)) != 0)
		__builtin_trap();
	g2 = json_gen_new();
	json_write_value(g2, again);
	t2 = json_buf(g2, &l2);
	if (l1 != l2 || memcmp(t1, t2, l1) != 0)
		__builtin_trap();
	yajl_gen_free(g1);
	yajl_gen_free(g2);
	yajl_tree_free(again);
	yajl_tree_free(v);
	return 0;
}
