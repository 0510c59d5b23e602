/* json: parsing request bodies into yajl trees, and shaping replies.
 *
 * Parsing treats the body as hostile and costs time linear in its length
 * (n log n in the keys of one object): it refuses NUL bytes, \u0000, lone
 * UTF-16 surrogates, invalid UTF-8, comments (strict RFC 8259), nesting
 * deeper than JSON_MAX_DEPTH (trees are freed recursively), more than
 * JSON_MAX_VALUES values (so memory stays a small multiple of the body) and
 * duplicate object keys, before any handler sees a value.
 */
#ifndef PIXRELAY_JSON_H
#define PIXRELAY_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#define JSON_MAX_DEPTH 32
/* Values of every kind (objects, arrays, members' values, items, scalars)
 * in one body; no request of the API comes near it. */
#define JSON_MAX_VALUES 10000

/* Parse `len` bytes (not NUL-terminated) into a tree whose root must be an
 * object. Returns 0 and sets *out (caller frees with yajl_tree_free), or -1
 * with a message for the client in `err`, e.g. "invalid JSON: duplicate
 * field 'amount'", "invalid JSON: nested deeper than 32 levels", "invalid
 * JSON: more than 10000 values in the body (at items[9998])". */
int json_parse_object(const char *body, size_t len, yajl_val *out, char *err, size_t errlen);
/* The same with another ceiling on values than JSON_MAX_VALUES, for a body
 * that may rightly hold more (a bank's batch of up to 1,000 Pix). */
int json_parse_object_max(const char *body, size_t len, size_t max_values, yajl_val *out, char *err,
			  size_t errlen);
/* json_parse_object_max with an array taken as the root too ("request body
 * must be a JSON object or array"): a bank that posts its list bare. */
int json_parse_container_max(const char *body, size_t len, size_t max_values, yajl_val *out,
			     char *err, size_t errlen);
/* json_parse_object, also telling where the value of the root's member `key`
 * lies in `body` when it is an object or an array: its `*span` bytes from
 * body + *at, exactly as received (*span = 0 when the member is absent or
 * of another type). So a caller passes a validated value on without writing
 * it out again (store/ingest.c: a notification's data). */
int json_parse_object_span(const char *body, size_t len, const char *key, size_t *at, size_t *span,
			   yajl_val *out, char *err, size_t errlen);

/* Find `key` in object `obj`; NULL when absent. Borrowed. A linear scan:
 * callers look up a fixed set of names, after refusing unknown keys. */
yajl_val json_get(yajl_val obj, const char *key);

/* Bytes of a key or value quoted back in a message. */
#define JSON_ECHO_MAX 64

/* Copy `s` into `out` for quoting it in a message: at most JSON_ECHO_MAX
 * bytes, cut at a UTF-8 character boundary (a cut character would make the
 * whole message invalid UTF-8), control characters as '?'. Returns out. */
char *json_echo(char out[JSON_ECHO_MAX + 1], const char *s);

/* True when `v` is a JSON number holding an integer (no fraction, no
 * exponent, within int64), written to *out; false leaves *out untouched. */
bool json_is_int64(yajl_val v, int64_t *out);

/* A yajl generator that writes compact JSON; aborts on allocation failure. */
yajl_gen json_gen_new(void);
void json_str(yajl_gen g, const char *s);
void json_strn(yajl_gen g, const char *s, size_t n);
/* NULL `s` writes null. */
void json_str_or_null(yajl_gen g, const char *s);
void json_int(yajl_gen g, long long v);
void json_null(yajl_gen g);
void json_bool(yajl_gen g, int v);
void json_open(yajl_gen g);  /* { */
void json_close(yajl_gen g); /* } */
void json_open_array(yajl_gen g);
void json_close_array(yajl_gen g);
/* Insert already-valid JSON text as one value. */
void json_raw(yajl_gen g, const char *text, size_t len);

/* Write a parsed value into g as it was (numbers keep their text). */
void json_write_value(yajl_gen g, yajl_val v);
/* The same with every object's members in the byte order of their names:
 * one text for one value, whatever order its members came in (what a
 * digest of a value is taken over). Numbers are written as received. */
void json_write_canonical(yajl_gen g, yajl_val v);

/* A time given as milliseconds since the epoch in text ("1795412399017") as
 * RFC 3339 UTC ("2026-11-23T05:39:59.017Z"); null when ms is NULL or "". */
void json_time_ms(yajl_gen g, const char *ms);

/* The generator's buffer, borrowed until the next call on `g`. */
const char *json_buf(yajl_gen g, size_t *len);
/* The generator's text as a new string (the caller frees it), and `g`
 * freed; its buffer is wiped first, as it may have held a secret. */
char *json_take(yajl_gen g);

/* An optional text field `v` (the value of `name`, NULL when absent):
 * absent or null leaves *out NULL and returns 0; a string of valid UTF-8
 * without control characters and of at most max_chars characters is
 * copied to *out (caller frees); anything else returns -1 with err saying
 * "name: rule". */
int json_opt_text(yajl_val v, const char *name, size_t max_chars, char **out, char *err,
		  size_t errlen);

#endif
