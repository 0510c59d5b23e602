/* httpparse: a strict, incremental HTTP/1.1 request parser (no I/O).
 *
 * The request head is parsed as its bytes arrive: the caller keeps every byte
 * of the request from its first one in a buffer and calls httpp_parse_head
 * with the whole buffer after each read. Each byte is scanned once for the end
 * of its line and each complete line is validated once, so the work is linear
 * in the input however it is split; limits are checked as the bytes arrive
 * (a long line is refused before its end is seen). The head is accepted only
 * when it follows RFC 9110/9112 strictly: CRLF line endings, single spaces in
 * the request line, token methods, a target of visible ASCII with valid
 * percent-escapes, no obsolete line folding, no space before a colon, no
 * control characters (NUL included) in values, at most one Content-Length,
 * Transfer-Encoding or Host, never both Content-Length and
 * Transfer-Encoding, and Host present in HTTP/1.1.
 *
 * Refusals carry the HTTP status to answer (400, 414, 431, 417, 501, 505) and
 * a message in plain ASCII that never echoes the client's bytes beyond
 * validated tokens.
 *
 * A chunked body is decoded by httpp_chunked_feed, also incrementally and in
 * linear time, with the body cap checked from each chunk's announced size
 * before its data arrives.
 */
#ifndef PIXRELAY_HTTPPARSE_H
#define PIXRELAY_HTTPPARSE_H

#include <stddef.h>
#include <stdint.h>

enum httpp_result {
	HTTPP_OK = 0,	 /* complete */
	HTTPP_AGAIN = 1, /* more bytes are needed */
	HTTPP_ERROR = -1 /* refused: see the parser's status and error */
};

enum httpp_method {
	HTTPP_UNKNOWN = 0, /* a syntactically valid method that pixrelay does not know */
	HTTPP_GET,
	HTTPP_HEAD,
	HTTPP_POST,
	HTTPP_PUT,
	HTTPP_DELETE,
	HTTPP_OPTIONS,
	HTTPP_TRACE,
	HTTPP_CONNECT,
	HTTPP_PATCH,
};

/* The hard ceiling of header fields; httpp_limits.headers may be lower. */
#define HTTPP_MAX_HEADERS 100

struct httpp_limits {
	size_t request_line; /* bytes of the request line, CRLF excluded: longer is 414 */
	size_t head;	     /* bytes of the whole head: more is 431 */
	unsigned headers;    /* header fields: more is 431 (at most HTTPP_MAX_HEADERS) */
};

/* The defaults: 8 KiB request line, 16 KiB head, 100 fields. */
extern const struct httpp_limits httpp_default_limits;

struct httpp_header {
	const char *name;  /* as sent (case kept), NUL-terminated */
	const char *value; /* surrounding blanks removed, NUL-terminated */
	size_t name_len, value_len;
};

/* A parsed request head. Every pointer points into the caller's buffer, where
 * the parser wrote a NUL after each element; valid while that buffer is. */
struct httpp_head {
	enum httpp_method method;
	const char *method_name; /* the method as sent */
	const char *path;	 /* "/..." (from an absolute-form target: its path) */
	size_t path_len;
	const char *query; /* after '?' (without it), or NULL */
	int minor;	   /* HTTP/1.<minor>: 0 or 1 (1.2 and later count as 1) */
	struct httpp_header headers[HTTPP_MAX_HEADERS];
	unsigned nheaders;
	int64_t content_length; /* -1 when absent */
	int chunked;		/* Transfer-Encoding: chunked */
	int keep_alive;		/* the connection may carry another request afterwards */
	int expect_continue;	/* Expect: 100-continue (HTTP/1.1) */
	size_t head_len;	/* bytes of the head, final blank line included */
};

/* Per-line offsets kept while the head is incomplete. */
struct httpp_span {
	uint32_t off, len;
};

struct httpp {
	struct httpp_limits lim;
	size_t scanned;	   /* bytes already searched for a line end */
	size_t line_start; /* offset of the current line */
	int stage;	   /* 0: before the request line, 1: headers */
	struct httpp_span method, path, query;
	int has_query;
	enum httpp_method m;
	int minor;
	unsigned nheaders;
	int status;	 /* on HTTPP_ERROR: the HTTP status to answer */
	char error[160]; /* on HTTPP_ERROR: why, in ASCII */
	struct httpp_span name[HTTPP_MAX_HEADERS], value[HTTPP_MAX_HEADERS];
};

/* Start a new request. `lim` NULL means httpp_default_limits. */
void httpp_init(struct httpp *p, const struct httpp_limits *lim);

/* Parse the head in buf[0, len), the bytes of this request received so far
 * (the buffer may move between calls; the bytes given before must not
 * change). Returns HTTPP_AGAIN while the head is incomplete, HTTPP_OK with
 * `head` filled (NULs written into buf), or HTTPP_ERROR with p->status and
 * p->error set. `head` is written only on HTTPP_OK. Bytes after
 * head->head_len (a body, a pipelined request) are not looked at. */
int httpp_parse_head(struct httpp *p, char *buf, size_t len, struct httpp_head *head);

/* The first header called `name` (any case), or NULL; `count` (may be NULL)
 * gets how many fields have that name. */
const struct httpp_header *httpp_header(const struct httpp_head *head, const char *name,
					unsigned *count);

/* "GET", "POST", ... ; "-" for HTTPP_UNKNOWN. */
const char *httpp_method_name(enum httpp_method m);

/* A chunked request body being decoded. */
struct httpp_chunked {
	int state;
	uint64_t left;	/* data bytes of the current chunk still to come */
	uint64_t total; /* data bytes announced so far */
	uint64_t max;	/* largest body accepted */
	unsigned digits;
	size_t line;	      /* bytes of the current chunk-size or trailer line */
	size_t trailer_bytes; /* bytes of the trailer section so far */
	int status;	      /* on HTTPP_ERROR: 400, 413 or 431 */
	char error[128];
};

/* Start decoding a body of at most `max` data bytes. */
void httpp_chunked_init(struct httpp_chunked *c, uint64_t max);

/* Decode from in[0, len). On return *used bytes of `in` were consumed; when
 * *data_len > 0, the body bytes *data .. *data + *data_len (inside `in`, among
 * the used bytes) are the next part of the body. Returns HTTPP_AGAIN (call
 * again with the rest, or with more bytes once *used == len), HTTPP_OK when
 * the last chunk and the trailer section are complete (*used ends the
 * message; trailers are validated and dropped), or HTTPP_ERROR with c->status
 * (413 as soon as a chunk size would take the body over `max`) and c->error.
 * Outputs are written on every return. */
int httpp_chunked_feed(struct httpp_chunked *c, const char *in, size_t len, size_t *used,
		       const char **data, size_t *data_len);

/* The value of the first parameter called `name` in the query string `query`
 * ("a=1&b=x%20y"; a parameter without '=' has the value ""), percent-decoded
 * with '+' as a space; NULL when absent. The caller owns the result. */
char *httpp_query_value(const char *query, const char *name);

/* Call fn(ud, key, value) for each parameter of `query` (NULL: none), in
 * order, decoded like httpp_query_value (borrowed for the call); an empty
 * item ("a=1&&b=2") is skipped. Stops at the first nonzero return of fn and
 * returns it; 0 when every parameter was seen. Linear in the query. */
int httpp_query_each(const char *query, int (*fn)(void *ud, const char *key, const char *value),
		     void *ud);

#endif
