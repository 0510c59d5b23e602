/* json: request bodies parsed, and replies written through yajl's
 * generator. Every body is hostile: a first pass refuses NUL bytes, \u0000,
 * lone surrogates and deep nesting; then yajl's event parser feeds our own
 * tree builder, which bounds the number of values, grows arrays by doubling
 * and finds duplicate keys by sorting (yajl_tree_parse does none of it).
 * The tree is yajl's yajl_val, freed with yajl_tree_free. The fields a body
 * must hold are the pix floor's (charge.c, account.c, reqbody.c, bankpix.c). */
#include "pixrelay/core/json.h"

#include "pixrelay/core/mem.h"
#include "pixrelay/core/timefmt.h"
#include "pixrelay/core/validate.h"

#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <yajl/yajl_parse.h>

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
	const char *quote = NULL; /* the next '"' at or after i (s + len: none), once looked for */

	for (size_t i = 0; i < len; i++) {
		char c;

		if (in_str) {
			/* a string's plain run, up to its next quote or backslash, at
			 * memchr's speed: each byte is looked at a bounded number of
			 * times (the next quote is looked for again only once i has
			 * passed it), so the pass stays linear */
			const char *bs, *nul;
			size_t stop;

			if (!quote || quote < s + i) {
				quote = memchr(s + i, '"', len - i);
				/* none: the end stands for it, not looked for again
				 * (an unclosed string of escapes would be quadratic) */
				if (!quote)
					quote = s + len;
			}
			stop = (size_t)(quote - s);
			bs = memchr(s + i, '\\', stop - i);
			if (bs)
				stop = (size_t)(bs - s);
			/* a NUL in the run: refused below, as one outside a string */
			nul = memchr(s + i, '\0', stop - i);
			if (nul)
				stop = (size_t)(nul - s);
			if (stop == len)
				break;
			i = stop;
		}
		c = s[i];
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

/* ---- building the tree ----
 *
 * yajl's own tree builder grows every object and array by one slot per
 * member (realloc each time) and yajl_tree_parse needs a NUL-terminated
 * copy of the body. The builder below makes the same yajl_val tree (so
 * yajl_tree_free frees it) from yajl's event parser: arrays grow by
 * doubling, nesting and the number of values are bounded as they arrive,
 * and an object's keys are checked for duplicates once it is closed by
 * sorting them (n log n comparisons), never pair by pair. */

struct frame {
	yajl_val v; /* the object or array being filled, already in its parent */
	size_t cap; /* slots allocated in its keys/values */
	char *key;  /* object: the key read, whose value has not come yet */
};

struct build {
	struct frame stack[JSON_MAX_DEPTH];
	int depth;
	yajl_val root;
	size_t values;
	size_t max_values;
	int array_root; /* an array may be the root too */
	char *err;
	size_t errlen;
	int failed; /* err holds our own message (the parse was cancelled) */
	/* json_parse_object_span: the root member whose container's bytes are
	 * wanted, and where they are (the offsets yajl has consumed when its
	 * first and last token are read) */
	yajl_handle h;
	const char *span_key;
	int span_depth; /* the container's depth while it is open, else 0 */
	size_t span_at, span_end;
};

static int fail(struct build *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct build *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b->err, b->errlen, fmt, ap);
	va_end(ap);
	b->failed = 1;
	return 0; /* yajl: cancel the parse */
}

/* The path of the value being added, e.g. "a.b[3]" (cut to `size`), for a
 * message; keys as json_echo quotes them. */
static void current_path(const struct build *b, char *out, size_t size)
{
	size_t n = 0;

	out[0] = '\0';
	for (int i = 0; i < b->depth && n + 1 < size; i++) {
		const struct frame *f = &b->stack[i];
		int top = i == b->depth - 1;
		char echo[JSON_ECHO_MAX + 1];
		int w;

		if (YAJL_IS_OBJECT(f->v)) {
			/* an open child is its parent's last member */
			const char *k = top ? f->key : f->v->u.object.keys[f->v->u.object.len - 1];
			w = snprintf(out + n, size - n, "%s%s", i ? "." : "",
				     json_echo(echo, k ? k : ""));
		} else {
			w = snprintf(out + n, size - n, "[%zu]",
				     top ? f->v->u.array.len : f->v->u.array.len - 1);
		}
		if (w < 0 || (size_t)w >= size - n) {
			/* cut: drop a partial character at the end */
			out[n] = '\0';
			break;
		}
		n += (size_t)w;
	}
}

static yajl_val node_new(yajl_type type)
{
	yajl_val v = mem_calloc(1, sizeof(*v));

	v->type = type;
	return v;
}

/* Hang `v` (taken) under the open container, or make it the root. 0 when
 * the parse is cancelled (v is then freed). */
static int add(struct build *b, yajl_val v)
{
	struct frame *f;

	if (++b->values > b->max_values) {
		char path[160];

		current_path(b, path, sizeof(path));
		yajl_tree_free(v);
		return fail(b, "invalid JSON: more than %zu values in the body (at %s)",
			    b->max_values, path[0] ? path : "the top");
	}
	if (b->depth == 0) {
		if (b->root || !(YAJL_IS_OBJECT(v) || (b->array_root && YAJL_IS_ARRAY(v)))) {
			yajl_tree_free(v);
			return fail(b, b->array_root ? "request body must be a JSON object or array"
						     : "request body must be a JSON object");
		}
		b->root = v;
		return 1;
	}
	f = &b->stack[b->depth - 1];
	if (YAJL_IS_OBJECT(f->v)) {
		struct yajl_val_s *o = f->v;

		if (o->u.object.len == f->cap) {
			f->cap = f->cap ? f->cap * 2 : 4;
			o->u.object.keys = mem_realloc((void *)o->u.object.keys,
						       f->cap * sizeof(*o->u.object.keys));
			o->u.object.values =
			    mem_realloc(o->u.object.values, f->cap * sizeof(*o->u.object.values));
		}
		o->u.object.keys[o->u.object.len] = f->key;
		o->u.object.values[o->u.object.len++] = v;
		f->key = NULL;
	} else {
		struct yajl_val_s *a = f->v;

		if (a->u.array.len == f->cap) {
			f->cap = f->cap ? f->cap * 2 : 4;
			a->u.array.values =
			    mem_realloc(a->u.array.values, f->cap * sizeof(*a->u.array.values));
		}
		a->u.array.values[a->u.array.len++] = v;
	}
	return 1;
}

static int on_null(void *ctx)
{
	return add(ctx, node_new(yajl_t_null));
}

static int on_boolean(void *ctx, int value)
{
	return add(ctx, node_new(value ? yajl_t_true : yajl_t_false));
}

static int on_number(void *ctx, const char *s, size_t len)
{
	yajl_val v = node_new(yajl_t_number);
	char *end = NULL;

	v->u.number.r = mem_strndup(s, len);
	/* an integer only when strtoll takes the whole text without overflow:
	 * "1e3" and "1.0" are doubles */
	errno = 0;
	v->u.number.i = strtoll(v->u.number.r, &end, 10);
	if (errno == 0 && end && *end == '\0')
		v->u.number.flags |= YAJL_NUMBER_INT_VALID;
	errno = 0;
	v->u.number.d = strtod(v->u.number.r, &end);
	if (errno == 0 && end && *end == '\0')
		v->u.number.flags |= YAJL_NUMBER_DOUBLE_VALID;
	return add(ctx, v);
}

static int on_string(void *ctx, const unsigned char *s, size_t len)
{
	yajl_val v = node_new(yajl_t_string);

	v->u.string = mem_strndup((const char *)s, len);
	return add(ctx, v);
}

static int on_key(void *ctx, const unsigned char *s, size_t len)
{
	struct build *b = ctx;
	struct frame *f = &b->stack[b->depth - 1];

	/* yajl calls this only inside an object, once per value */
	free(f->key);
	f->key = mem_strndup((const char *)s, len);
	return 1;
}

static int open_container(struct build *b, yajl_type type)
{
	yajl_val v = node_new(type);
	/* the root's member span_key opens (asked before add takes the key):
	 * its first byte is the token just read (the body is parsed in one
	 * piece, so yajl's offsets are the body's) */
	int spans = b->span_key && b->depth == 1 && b->stack[0].key &&
		    strcmp(b->stack[0].key, b->span_key) == 0;

	if (b->depth == JSON_MAX_DEPTH) {
		yajl_tree_free(v);
		return fail(b, "invalid JSON: nested deeper than %d levels", JSON_MAX_DEPTH);
	}
	if (!add(b, v))
		return 0;
	if (spans) {
		b->span_depth = 2;
		b->span_at = yajl_get_bytes_consumed(b->h) - 1;
	}
	b->stack[b->depth++] = (struct frame){.v = v};
	return 1;
}

/* A container closes (its last token just read): the end of the span. */
static void close_container(struct build *b)
{
	if (b->span_depth && b->depth == b->span_depth) {
		b->span_end = yajl_get_bytes_consumed(b->h);
		b->span_depth = 0;
	}
	b->depth--;
}

static int on_start_map(void *ctx)
{
	return open_container(ctx, yajl_t_object);
}

static int on_start_array(void *ctx)
{
	return open_container(ctx, yajl_t_array);
}

/* Sort the member indices `idx` by their keys, stably (equal keys keep the
 * body's order): a bottom-up merge sort through `tmp`, n log n comparisons
 * whatever the keys are. */
static void sort_keys(const char **keys, size_t *idx, size_t *tmp, size_t n)
{
	for (size_t width = 1; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = lo + width < n ? lo + width : n;
			size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
			size_t i = lo, j = mid, k = lo;

			while (i < mid && j < hi)
				/* stable: on equal keys the earlier run, i.e. the
				 * earlier member, comes first */
				tmp[k++] =
				    strcmp(keys[idx[j]], keys[idx[i]]) < 0 ? idx[j++] : idx[i++];
			while (i < mid)
				tmp[k++] = idx[i++];
			while (j < hi)
				tmp[k++] = idx[j++];
		}
		memcpy(idx, tmp, n * sizeof(*idx));
	}
}

/* The index of the first member (in the body's order) whose key an earlier
 * member already has, or `n` when the keys are all different. */
static size_t first_duplicate(const char **keys, size_t n)
{
	size_t *idx, *tmp, best = n;

	if (n < 2)
		return n;
	if (n <= 8) {
		for (size_t i = 1; i < n; i++)
			for (size_t j = 0; j < i; j++)
				if (strcmp(keys[i], keys[j]) == 0)
					return i;
		return n;
	}
	idx = mem_alloc(n * sizeof(*idx));
	tmp = mem_alloc(n * sizeof(*tmp));
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	sort_keys(keys, idx, tmp, n);
	/* in each run of equal keys the second member is the first repeat */
	for (size_t i = 1; i < n; i++)
		if (strcmp(keys[idx[i]], keys[idx[i - 1]]) == 0 &&
		    (i < 2 || strcmp(keys[idx[i - 1]], keys[idx[i - 2]]) != 0) && idx[i] < best)
			best = idx[i];
	free(idx);
	free(tmp);
	return best;
}

static int on_end_map(void *ctx)
{
	struct build *b = ctx;
	yajl_val o = b->stack[b->depth - 1].v;
	size_t d = first_duplicate(o->u.object.keys, o->u.object.len);
	char echo[JSON_ECHO_MAX + 1];

	if (d < o->u.object.len)
		return fail(b, "invalid JSON: duplicate field '%s'",
			    json_echo(echo, o->u.object.keys[d]));
	close_container(b);
	return 1;
}

static int on_end_array(void *ctx)
{
	close_container(ctx);
	return 1;
}

static const yajl_callbacks build_callbacks = {
    .yajl_null = on_null,
    .yajl_boolean = on_boolean,
    .yajl_number = on_number,
    .yajl_string = on_string,
    .yajl_start_map = on_start_map,
    .yajl_map_key = on_key,
    .yajl_end_map = on_end_map,
    .yajl_start_array = on_start_array,
    .yajl_end_array = on_end_array,
};

static void *yajl_malloc(void *ctx, size_t n)
{
	return mem_alloc(n);
}

static void *yajl_realloc(void *ctx, void *p, size_t n)
{
	return mem_realloc(p, n);
}

static void yajl_free_fn(void *ctx, void *p)
{
	free(p);
}

int json_parse_object(const char *body, size_t len, yajl_val *out, char *err, size_t errlen)
{
	return json_parse_object_max(body, len, JSON_MAX_VALUES, out, err, errlen);
}

static int parse(const char *body, size_t len, size_t max_values, int array_root,
		 const char *span_key, size_t *at, size_t *span, yajl_val *out, char *err,
		 size_t errlen)
{
	static yajl_alloc_funcs alloc = {yajl_malloc, yajl_realloc, yajl_free_fn, NULL};
	struct build b;
	yajl_handle h = NULL;
	yajl_status st;
	int rc = -1;

	memset(&b, 0, sizeof(b));
	b.max_values = max_values;
	b.array_root = array_root;
	b.err = err;
	b.errlen = errlen;
	b.span_key = span_key;
	if (len == 0) {
		snprintf(err, errlen, "request body is empty; a JSON object is expected");
		goto done;
	}
	if (check_shape(body, len, err, errlen) < 0)
		goto done;
	h = yajl_alloc(&build_callbacks, &alloc, &b);
	if (!h)
		mem_oom(__FILE__, __LINE__);
	b.h = h;
	st = yajl_parse(h, (const unsigned char *)body, len);
	if (st == yajl_status_ok)
		st = yajl_complete_parse(h);
	if (st != yajl_status_ok) {
		if (!b.failed) {
			/* yajl's message ends in a newline; keep its first line */
			unsigned char *m = yajl_get_error(h, 0, (const unsigned char *)body, len);
			const char *text = m ? (const char *)m : "parse error";

			snprintf(err, errlen, "invalid JSON: %.*s", (int)strcspn(text, "\n"), text);
			if (m)
				yajl_free_error(h, m);
		}
		goto done;
	}
	if (!b.root) {
		snprintf(err, errlen, "request body must be a JSON object");
		goto done;
	}
	*out = b.root;
	b.root = NULL;
	if (span) {
		*at = b.span_end > b.span_at ? b.span_at : 0;
		*span = b.span_end > b.span_at ? b.span_end - b.span_at : 0;
	}
	rc = 0;
done:
	for (int i = 0; i < JSON_MAX_DEPTH; i++)
		free(b.stack[i].key);
	yajl_tree_free(b.root);
	if (h)
		yajl_free(h);
	return rc;
}

int json_parse_object_max(const char *body, size_t len, size_t max_values, yajl_val *out, char *err,
			  size_t errlen)
{
	return parse(body, len, max_values, 0, NULL, NULL, NULL, out, err, errlen);
}

int json_parse_container_max(const char *body, size_t len, size_t max_values, yajl_val *out,
			     char *err, size_t errlen)
{
	return parse(body, len, max_values, 1, NULL, NULL, NULL, out, err, errlen);
}

int json_parse_object_span(const char *body, size_t len, const char *key, size_t *at, size_t *span,
			   yajl_val *out, char *err, size_t errlen)
{
	return parse(body, len, JSON_MAX_VALUES, 0, key, at, span, out, err, errlen);
}

char *json_echo(char out[JSON_ECHO_MAX + 1], const char *s)
{
	size_t n = strnlen(s, JSON_ECHO_MAX + 1);

	if (n > JSON_ECHO_MAX) {
		n = JSON_ECHO_MAX;
		/* s[n] is the first byte left out: back up to a character start */
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		out[i] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	out[n] = '\0';
	return out;
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

bool json_is_int64(yajl_val v, int64_t *out)
{
	if (!YAJL_IS_NUMBER(v) || !YAJL_IS_INTEGER(v))
		return false;
	/* yajl marks an integer only when strtoll took the whole text without
	 * overflow; "1e3" and "1.0" are doubles and so refused here */
	*out = (int64_t)YAJL_GET_INTEGER(v);
	return true;
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

char *json_take(yajl_gen g)
{
	size_t len;
	const char *buf = json_buf(g, &len);
	char *out = mem_strndup(buf, len);

	mem_wipe((char *)buf, len);
	yajl_gen_free(g);
	return out;
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

/* A member of an object, for sorting them by name. */
struct member {
	const char *key;
	yajl_val value;
};

static int member_cmp(const void *a, const void *b)
{
	return strcmp(((const struct member *)a)->key, ((const struct member *)b)->key);
}

void json_write_canonical(yajl_gen g, yajl_val v)
{
	if (YAJL_IS_OBJECT(v)) {
		size_t n = v->u.object.len;
		struct member *m = n ? mem_calloc(n, sizeof(*m)) : NULL;

		for (size_t i = 0; i < n; i++)
			m[i] = (struct member){v->u.object.keys[i], v->u.object.values[i]};
		if (n > 1)
			qsort(m, n, sizeof(*m), member_cmp);
		yajl_gen_map_open(g);
		for (size_t i = 0; i < n; i++) {
			json_str(g, m[i].key);
			json_write_canonical(g, m[i].value);
		}
		yajl_gen_map_close(g);
		free(m);
	} else if (YAJL_IS_ARRAY(v)) {
		yajl_gen_array_open(g);
		for (size_t i = 0; i < v->u.array.len; i++)
			json_write_canonical(g, v->u.array.values[i]);
		yajl_gen_array_close(g);
	} else {
		json_write_value(g, v);
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

int json_opt_text(yajl_val v, const char *name, size_t max_chars, char **out, char *err,
		  size_t errlen)
{
	const char *s;
	long chars;

	if (!v || YAJL_IS_NULL(v))
		return 0;
	if (!YAJL_IS_STRING(v)) {
		snprintf(err, errlen, "%s: must be a string", name);
		return -1;
	}
	s = YAJL_GET_STRING(v);
	chars = validate_utf8_chars(s, strlen(s));
	if (chars < 0) {
		snprintf(err, errlen, "%s: must be valid UTF-8", name);
		return -1;
	}
	if (validate_has_control(s)) {
		snprintf(err, errlen, "%s: must not contain control characters", name);
		return -1;
	}
	if ((size_t)chars > max_chars) {
		snprintf(err, errlen, "%s: must be at most %zu characters (got %ld)", name,
			 max_chars, chars);
		return -1;
	}
	*out = mem_strdup(s);
	return 0;
}
