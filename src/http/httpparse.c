/* httpparse: an HTTP/1.1 request's bytes, read strictly and with no I/O:
 * the head line by line as it arrives (each byte scanned once, limits
 * checked before a line ends, offsets kept until the head is whole, then
 * NULs written into the caller's buffer), its framing headers, a chunked
 * body as a state machine, and query strings. Every byte is the client's;
 * a refusal carries its status and never echoes them. The server feeding it
 * is conn.c, request.c and body.c; tests/fuzz/fuzz-http.c drives it. */
#include "pixrelay/http/httpparse.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/mem.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const struct httpp_limits httpp_default_limits = {8192, 16384, HTTPP_MAX_HEADERS};

/* Character classes, one bit each. */
enum {
	C_TCHAR = 1 << 0,  /* token: ALPHA DIGIT !#$%&'*+-.^_`|~ */
	C_TARGET = 1 << 1, /* allowed in a request target */
	C_VALUE = 1 << 2,  /* allowed in a field value: HTAB SP VCHAR obs-text */
	C_HEX = 1 << 3,
};

static unsigned char cls[256];

static void classes_init(void)
{
	static int done;

	if (done)
		return;
	for (int c = 0; c < 256; c++) {
		unsigned char k = 0;
		int alnum =
		    (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
		if (alnum || (c && strchr("!#$%&'*+-.^_`|~", c)))
			k |= C_TCHAR;
		/* visible ASCII except what must never appear raw: '#' (a fragment
		 * is not sent), '\' (some proxies read it as '/'), '"', '<', '>'
		 * and '`'; '{', '}', '|', '^', '[' and ']' are tolerated because
		 * common clients send them unescaped in queries */
		if (c > 0x20 && c < 0x7f && !strchr("#\\\"<>`", c))
			k |= C_TARGET;
		if (c == '\t' || (c >= 0x20 && c != 0x7f))
			k |= C_VALUE;
		if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))
			k |= C_HEX;
		cls[c] = k;
	}
	done = 1;
}

#define IS(c, k) (cls[(unsigned char)(c)] & (k))

void httpp_init(struct httpp *p, const struct httpp_limits *lim)
{
	classes_init();
	/* the per-header offsets are written before they are read */
	memset(p, 0, offsetof(struct httpp, name));
	p->lim = lim ? *lim : httpp_default_limits;
	if (p->lim.headers > HTTPP_MAX_HEADERS)
		p->lim.headers = HTTPP_MAX_HEADERS;
}

static int fail(struct httpp *p, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct httpp *p, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->error, sizeof(p->error), fmt, ap);
	va_end(ap);
	p->status = status;
	return HTTPP_ERROR;
}

static const struct {
	const char *name;
	size_t len;
	enum httpp_method m;
} methods[] = {
    {"GET", 3, HTTPP_GET},     {"HEAD", 4, HTTPP_HEAD},	      {"POST", 4, HTTPP_POST},
    {"PUT", 3, HTTPP_PUT},     {"DELETE", 6, HTTPP_DELETE},   {"OPTIONS", 7, HTTPP_OPTIONS},
    {"TRACE", 5, HTTPP_TRACE}, {"CONNECT", 7, HTTPP_CONNECT}, {"PATCH", 5, HTTPP_PATCH},
};

const char *httpp_method_name(enum httpp_method m)
{
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (methods[i].m == m)
			return methods[i].name;
	return "-";
}

/* request-line = method SP request-target SP HTTP-version, in buf[ls, le) */
static int request_line(struct httpp *p, const char *buf, size_t ls, size_t le)
{
	size_t i = ls, t0, t1, q = 0;

	while (i < le && IS(buf[i], C_TCHAR))
		i++;
	if (i == ls || i >= le || buf[i] != ' ')
		return fail(p, 400, "malformed request line: expected METHOD SP /path SP HTTP/1.1");
	p->method.off = (uint32_t)ls;
	p->method.len = (uint32_t)(i - ls);
	t0 = ++i;
	while (i < le && buf[i] != ' ')
		i++;
	t1 = i;
	if (t1 == t0 || i >= le)
		return fail(p, 400, "malformed request line: expected METHOD SP /path SP HTTP/1.1");
	i++;
	if (le - i != 8 || memcmp(buf + i, "HTTP/", 5) != 0 || buf[i + 5] < '0' ||
	    buf[i + 5] > '9' || buf[i + 6] != '.' || buf[i + 7] < '0' || buf[i + 7] > '9')
		return fail(p, 400, "malformed request line: expected METHOD SP /path SP HTTP/1.1");
	if (buf[i + 5] != '1')
		return fail(p, 505, "HTTP version not supported: use HTTP/1.1");
	p->minor = buf[i + 7] == '0' ? 0 : 1;

	p->m = HTTPP_UNKNOWN;
	for (size_t k = 0; k < sizeof(methods) / sizeof(methods[0]); k++)
		if (methods[k].len == p->method.len &&
		    memcmp(buf + ls, methods[k].name, methods[k].len) == 0)
			p->m = methods[k].m;
	if (p->m == HTTPP_UNKNOWN || p->m == HTTPP_CONNECT)
		return fail(p, 501, "method %.*s is not implemented",
			    p->method.len > 32 ? 32 : (int)p->method.len, buf + ls);

	/* the target: visible ASCII, valid percent-escapes, never %00 */
	for (size_t k = t0; k < t1; k++) {
		if (!IS(buf[k], C_TARGET))
			return fail(p, 400,
				    "invalid character in the request target (byte %zu); escape it "
				    "as %%XX",
				    k - t0 + 1);
		if (buf[k] == '%') {
			if (k + 2 >= t1 || !IS(buf[k + 1], C_HEX) || !IS(buf[k + 2], C_HEX))
				return fail(
				    p, 400,
				    "invalid percent-escape in the request target (byte %zu)",
				    k - t0 + 1);
			if (buf[k + 1] == '0' && buf[k + 2] == '0')
				return fail(p, 400, "%%00 (NUL) in the request target");
		}
		if (buf[k] == '?' && !q)
			q = k;
	}
	if (buf[t0] != '/') {
		/* absolute-form: http(s)://authority[/path][?query] */
		size_t s = t0;
		if (t1 - t0 > 7 && strncasecmp(buf + t0, "http://", 7) == 0)
			s = t0 + 7;
		else if (t1 - t0 > 8 && strncasecmp(buf + t0, "https://", 8) == 0)
			s = t0 + 8;
		else
			return fail(p, 400, "the request target must be a path such as /v1/me");
		while (s < t1 && buf[s] != '/' && buf[s] != '?')
			s++;
		if (s >= t1 || buf[s] != '/')
			return fail(p, 400, "the request target must be a path such as /v1/me");
		t0 = s;
		if (q && q < t0)
			return fail(p, 400, "the request target must be a path such as /v1/me");
	}
	p->path.off = (uint32_t)t0;
	p->path.len = (uint32_t)((q ? q : t1) - t0);
	p->has_query = q != 0;
	if (q) {
		p->query.off = (uint32_t)(q + 1);
		p->query.len = (uint32_t)(t1 - q - 1);
	}
	return HTTPP_OK;
}

/* field-line = field-name ":" OWS field-value OWS, in buf[ls, le) */
static int header_line(struct httpp *p, const char *buf, size_t ls, size_t le)
{
	size_t i = ls, vs, ve;

	if (buf[ls] == ' ' || buf[ls] == '\t')
		return fail(p, 400,
			    "obsolete line folding (a header line starting with a blank) is "
			    "not accepted");
	while (i < le && IS(buf[i], C_TCHAR))
		i++;
	if (i >= le)
		return fail(p, 400, "header line without a colon");
	if (buf[i] != ':') {
		if (buf[i] == ' ' || buf[i] == '\t')
			return fail(p, 400, "whitespace between a header name and its colon");
		return fail(p, 400, "invalid character in a header name");
	}
	if (i == ls)
		return fail(p, 400, "empty header name");
	if (p->nheaders >= p->lim.headers)
		return fail(p, 431, "too many header fields (at most %u)", p->lim.headers);
	vs = i + 1;
	while (vs < le && (buf[vs] == ' ' || buf[vs] == '\t'))
		vs++;
	ve = le;
	while (ve > vs && (buf[ve - 1] == ' ' || buf[ve - 1] == '\t'))
		ve--;
	for (size_t k = vs; k < ve; k++)
		if (!IS(buf[k], C_VALUE))
			return fail(p, 400, "invalid character (control or NUL) in header %.*s",
				    i - ls > 64 ? 64 : (int)(i - ls), buf + ls);
	p->name[p->nheaders].off = (uint32_t)ls;
	p->name[p->nheaders].len = (uint32_t)(i - ls);
	p->value[p->nheaders].off = (uint32_t)vs;
	p->value[p->nheaders].len = (uint32_t)(ve - vs);
	p->nheaders++;
	return HTTPP_OK;
}

static bool name_is(const struct httpp_header *h, const char *name, size_t len)
{
	return h->name_len == len && strncasecmp(h->name, name, len) == 0;
}

/* Does the comma-separated list `v` hold `token` (any case)? */
static bool list_has(const char *v, const char *token)
{
	size_t n = strlen(token);

	while (*v) {
		const char *e;
		while (*v == ' ' || *v == '\t' || *v == ',')
			v++;
		e = v;
		while (*e && *e != ',')
			e++;
		{
			const char *t = e;
			while (t > v && (t[-1] == ' ' || t[-1] == '\t'))
				t--;
			if ((size_t)(t - v) == n && strncasecmp(v, token, n) == 0)
				return true;
		}
		v = e;
	}
	return false;
}

/* The head is complete: write the NULs, fill `head`, check framing headers. */
static int finish_head(struct httpp *p, char *buf, size_t head_len, struct httpp_head *head)
{
	unsigned ncl = 0, nte = 0, nhost = 0;
	const char *cl = NULL, *te = NULL, *conn = NULL, *expect = NULL;

	head->method = p->m;
	head->method_name = buf + p->method.off;
	buf[p->method.off + p->method.len] = '\0';
	head->path = buf + p->path.off;
	head->path_len = p->path.len;
	buf[p->path.off + p->path.len] = '\0';
	head->query = NULL;
	if (p->has_query) {
		head->query = buf + p->query.off;
		buf[p->query.off + p->query.len] = '\0';
	}
	head->minor = p->minor;
	head->nheaders = p->nheaders;
	for (unsigned i = 0; i < p->nheaders; i++) {
		struct httpp_header *h = &head->headers[i];
		h->name = buf + p->name[i].off;
		h->name_len = p->name[i].len;
		buf[p->name[i].off + p->name[i].len] = '\0';
		h->value = buf + p->value[i].off;
		h->value_len = p->value[i].len;
		buf[p->value[i].off + p->value[i].len] = '\0';
		if (name_is(h, "content-length", 14))
			ncl++, cl = h->value;
		else if (name_is(h, "transfer-encoding", 17))
			nte++, te = h->value;
		else if (name_is(h, "host", 4))
			nhost++;
		else if (name_is(h, "connection", 10))
			conn = conn ? "close" : h->value; /* two Connection fields: play safe */
		else if (name_is(h, "expect", 6))
			expect = h->value;
	}
	head->head_len = head_len;
	head->content_length = -1;
	head->chunked = 0;
	head->expect_continue = 0;
	if (nhost > 1)
		return fail(p, 400, "more than one Host header");
	if (p->minor >= 1 && nhost == 0)
		return fail(p, 400, "Host header missing (required in HTTP/1.1)");
	if (ncl > 1)
		return fail(p, 400, "more than one Content-Length header");
	if (nte > 1)
		return fail(p, 400, "more than one Transfer-Encoding header");
	if (nte && ncl)
		return fail(p, 400, "both Transfer-Encoding and Content-Length: send only one");
	if (nte && p->minor == 0)
		return fail(p, 400, "Transfer-Encoding in an HTTP/1.0 request");
	if (te) {
		if (strcasecmp(te, "chunked") != 0)
			return fail(p, 501, "Transfer-Encoding: only chunked is supported");
		head->chunked = 1;
	}
	if (cl) {
		int64_t v = 0;
		size_t n = strlen(cl);
		if (n == 0 || n > 18)
			return fail(p, 400, "invalid Content-Length: expected 0 to 18 digits");
		for (size_t i = 0; i < n; i++) {
			if (cl[i] < '0' || cl[i] > '9')
				return fail(p, 400,
					    "invalid Content-Length: expected 0 to 18 digits");
			v = v * 10 + (cl[i] - '0');
		}
		head->content_length = v;
	}
	if (expect && p->minor >= 1) {
		if (strcasecmp(expect, "100-continue") != 0)
			return fail(p, 417, "Expect: only 100-continue is supported");
		head->expect_continue = 1;
	}
	head->keep_alive = p->minor >= 1;
	if (conn) {
		if (list_has(conn, "close"))
			head->keep_alive = 0;
		else if (p->minor == 0 && list_has(conn, "keep-alive"))
			head->keep_alive = 1;
	}
	return HTTPP_OK;
}

int httpp_parse_head(struct httpp *p, char *buf, size_t len, struct httpp_head *head)
{
	while (p->scanned < len) {
		const char *lf = memchr(buf + p->scanned, '\n', len - p->scanned);
		size_t i, ls = p->line_start, le;
		int rc;

		if (!lf) {
			p->scanned = len;
			break;
		}
		i = (size_t)(lf - buf);
		p->scanned = i + 1;
		/* the limits first, exactly as for an incomplete line, so that the
		 * answer does not depend on how the bytes were split */
		if (p->stage == 0 && i - ls > p->lim.request_line + 1)
			return fail(p, 414, "request line too long (at most %zu bytes)",
				    p->lim.request_line);
		if (i > p->lim.head)
			return fail(p, 431, "request head too large (at most %zu bytes)",
				    p->lim.head);
		if (i == ls || buf[i - 1] != '\r')
			return fail(p, 400,
				    "bare LF in the request head: lines must end with CRLF");
		le = i - 1;
		p->line_start = i + 1;
		if (i + 1 > p->lim.head)
			return fail(p, 431, "request head too large (at most %zu bytes)",
				    p->lim.head);
		if (p->stage == 0) {
			if (le == ls)
				continue; /* blank lines before a request are ignored */
			rc = request_line(p, buf, ls, le);
			if (rc != HTTPP_OK)
				return rc;
			p->stage = 1;
			continue;
		}
		if (le == ls)
			return finish_head(p, buf, i + 1, head);
		rc = header_line(p, buf, ls, le);
		if (rc != HTTPP_OK)
			return rc;
	}
	/* incomplete: refuse as soon as a limit is passed */
	if (p->stage == 0 && len - p->line_start > p->lim.request_line + 1)
		return fail(p, 414, "request line too long (at most %zu bytes)",
			    p->lim.request_line);
	if (len > p->lim.head)
		return fail(p, 431, "request head too large (at most %zu bytes)", p->lim.head);
	return HTTPP_AGAIN;
}

const struct httpp_header *httpp_header(const struct httpp_head *head, const char *name,
					unsigned *count)
{
	const struct httpp_header *first = NULL;
	size_t n = strlen(name);
	unsigned k = 0;

	for (unsigned i = 0; i < head->nheaders; i++) {
		if (!name_is(&head->headers[i], name, n))
			continue;
		if (!first)
			first = &head->headers[i];
		k++;
	}
	if (count)
		*count = k;
	return first;
}

/* ---- chunked bodies ---- */

enum {
	CH_SIZE0,   /* first hex digit of a chunk size */
	CH_SIZE,    /* more hex digits */
	CH_SIZE_WS, /* blanks after the size: only before ';' */
	CH_EXT,	    /* chunk extension, ignored */
	CH_SIZE_LF,
	CH_DATA,
	CH_DATA_CR,
	CH_DATA_LF,
	CH_TR_START, /* start of a trailer line (or of the final CRLF) */
	CH_TR_NAME,
	CH_TR_VALUE,
	CH_TR_LF,
	CH_END_LF,
	CH_DONE,
};

#define CHUNK_LINE_MAX 1024
#define TRAILER_MAX 4096

void httpp_chunked_init(struct httpp_chunked *c, uint64_t max)
{
	classes_init();
	memset(c, 0, sizeof(*c));
	c->state = CH_SIZE0;
	c->max = max;
}

static int chunk_fail(struct httpp_chunked *c, int status, const char *msg)
{
	c->status = status;
	snprintf(c->error, sizeof(c->error), "%s", msg);
	return HTTPP_ERROR;
}

int httpp_chunked_feed(struct httpp_chunked *c, const char *in, size_t len, size_t *used,
		       const char **data, size_t *data_len)
{
	size_t i = 0;

	*data = in;
	*data_len = 0;
	*used = 0;
	while (i < len) {
		char ch = in[i];

		if (c->state == CH_DATA) {
			size_t n = len - i;
			if ((uint64_t)n > c->left)
				n = (size_t)c->left;
			*data = in + i;
			*data_len = n;
			c->left -= n;
			if (c->left == 0)
				c->state = CH_DATA_CR;
			*used = i + n;
			return HTTPP_AGAIN;
		}
		if (c->state <= CH_SIZE_LF && ++c->line > CHUNK_LINE_MAX)
			return chunk_fail(c, 400, "chunk size line too long");
		if (c->state >= CH_TR_START && c->state <= CH_END_LF &&
		    ++c->trailer_bytes > TRAILER_MAX)
			return chunk_fail(c, 431, "trailer section too large");
		switch (c->state) {
		case CH_SIZE0:
		case CH_SIZE:
			if (IS(ch, C_HEX)) {
				if (++c->digits > 16)
					return chunk_fail(c, 400, "chunk size too long");
				c->left = (c->left << 4) | (uint64_t)ids_hexval(ch);
				c->state = CH_SIZE;
				break;
			}
			if (c->state == CH_SIZE0)
				return chunk_fail(c, 400,
						  "invalid chunk size: expected hex digits");
			if (ch == '\r')
				c->state = CH_SIZE_LF;
			else if (ch == ';')
				c->state = CH_EXT;
			else if (ch == ' ' || ch == '\t')
				c->state = CH_SIZE_WS;
			else
				return chunk_fail(c, 400,
						  "invalid chunk size: expected hex digits");
			break;
		case CH_SIZE_WS:
			if (ch == ';')
				c->state = CH_EXT;
			else if (ch != ' ' && ch != '\t')
				return chunk_fail(c, 400, "invalid chunk size line");
			break;
		case CH_EXT:
			if (ch == '\r')
				c->state = CH_SIZE_LF;
			else if (!IS(ch, C_VALUE))
				return chunk_fail(c, 400, "invalid character in a chunk extension");
			break;
		case CH_SIZE_LF:
			if (ch != '\n')
				return chunk_fail(c, 400, "chunk size line not ended by CRLF");
			if (c->left > c->max || c->total + c->left > c->max)
				return chunk_fail(c, 413, "request body too large");
			c->total += c->left;
			c->line = 0;
			c->digits = 0;
			c->state = c->left ? CH_DATA : CH_TR_START;
			break;
		case CH_DATA_CR:
			if (ch != '\r')
				return chunk_fail(c, 400, "chunk data not followed by CRLF");
			c->state = CH_DATA_LF;
			break;
		case CH_DATA_LF:
			if (ch != '\n')
				return chunk_fail(c, 400, "chunk data not followed by CRLF");
			c->state = CH_SIZE0;
			break;
		case CH_TR_START:
			if (ch == '\r')
				c->state = CH_END_LF;
			else if (IS(ch, C_TCHAR))
				c->state = CH_TR_NAME;
			else
				return chunk_fail(c, 400, "invalid trailer line");
			break;
		case CH_TR_NAME:
			if (ch == ':')
				c->state = CH_TR_VALUE;
			else if (!IS(ch, C_TCHAR))
				return chunk_fail(c, 400, "invalid trailer line");
			break;
		case CH_TR_VALUE:
			if (ch == '\r')
				c->state = CH_TR_LF;
			else if (!IS(ch, C_VALUE))
				return chunk_fail(c, 400, "invalid character in a trailer field");
			break;
		case CH_TR_LF:
			if (ch != '\n')
				return chunk_fail(c, 400, "trailer line not ended by CRLF");
			c->state = CH_TR_START;
			break;
		case CH_END_LF:
			if (ch != '\n')
				return chunk_fail(c, 400, "chunked body not ended by CRLF");
			c->state = CH_DONE;
			*used = i + 1;
			return HTTPP_OK;
		case CH_DONE:
			*used = i;
			return HTTPP_OK;
		}
		i++;
	}
	*used = i;
	return c->state == CH_DONE ? HTTPP_OK : HTTPP_AGAIN;
}

/* ---- query strings ---- */

/* Decode [s, e) into out (at least e - s + 1 bytes); returns the length. */
static size_t form_decode(const char *s, const char *e, char *out)
{
	size_t n = 0;

	while (s < e) {
		if (*s == '%' && e - s >= 3 && IS(s[1], C_HEX) && IS(s[2], C_HEX)) {
			out[n++] = (char)(ids_hexval(s[1]) << 4 | ids_hexval(s[2]));
			s += 3;
			continue;
		}
		out[n++] = *s == '+' ? ' ' : *s;
		s++;
	}
	out[n] = '\0';
	return n;
}

char *httpp_query_value(const char *query, const char *name)
{
	size_t nlen = strlen(name);
	const char *s = query;

	classes_init();
	if (!query)
		return NULL;
	while (*s) {
		const char *e = strchr(s, '&'), *eq;
		if (!e)
			e = s + strlen(s);
		eq = memchr(s, '=', (size_t)(e - s));
		{
			const char *kend = eq ? eq : e;
			/* a decoded key is never longer than the raw one */
			if ((size_t)(kend - s) >= nlen && (size_t)(kend - s) <= 3 * nlen) {
				char *key = mem_alloc((size_t)(kend - s) + 1);
				size_t klen = form_decode(s, kend, key);
				int same = klen == nlen && memcmp(key, name, nlen) == 0;
				free(key);
				if (same) {
					char *v = mem_alloc(eq ? (size_t)(e - eq) : 1);
					if (eq)
						form_decode(eq + 1, e, v);
					else
						v[0] = '\0';
					return v;
				}
			}
		}
		s = *e ? e + 1 : e;
	}
	return NULL;
}

int httpp_query_each(const char *query, int (*fn)(void *ud, const char *key, const char *value),
		     void *ud)
{
	const char *s = query;
	int rc = 0;

	classes_init();
	while (s && *s && rc == 0) {
		const char *e = strchr(s, '&'), *eq;
		char *key, *value;
		if (!e)
			e = s + strlen(s);
		eq = memchr(s, '=', (size_t)(e - s));
		key = mem_alloc((size_t)((eq ? eq : e) - s) + 1);
		form_decode(s, eq ? eq : e, key);
		value = mem_alloc(eq ? (size_t)(e - eq) : 1);
		if (eq)
			form_decode(eq + 1, e, value);
		else
			value[0] = '\0';
		if (*key || eq)
			rc = fn(ud, key, value);
		free(key);
		free(value);
		s = *e ? e + 1 : e;
	}
	return rc;
}
