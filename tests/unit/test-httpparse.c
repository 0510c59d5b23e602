/* Unit tests of the HTTP/1.1 request parser: heads, their refusals, chunked
 * bodies and query strings, fed at once and byte by byte. */
#include "check.h"
#include "pixrelay/http/httpparse.h"

#include <stdlib.h>

/* Parse `raw` at once; returns the result and fills p/head. */
static int parse_all(const char *raw, struct httpp *p, struct httpp_head *head, char **keep)
{
	size_t n = strlen(raw);
	char *buf = malloc(n + 1);

	memcpy(buf, raw, n + 1);
	httpp_init(p, NULL);
	*keep = buf;
	return httpp_parse_head(p, buf, n, head);
}

/* Parse `raw` one byte more at a time; the result must be the same as at
 * once, and AGAIN until the last byte of the head. */
static int parse_bytewise(const char *raw, struct httpp *p, struct httpp_head *head)
{
	size_t n = strlen(raw);
	char *buf = malloc(n + 1);
	int rc = HTTPP_AGAIN;

	httpp_init(p, NULL);
	for (size_t i = 1; i <= n && rc == HTTPP_AGAIN; i++) {
		memcpy(buf, raw, i);
		rc = httpp_parse_head(p, buf, i, head);
	}
	free(buf);
	return rc;
}

/* The status of refusing `raw` (0 when accepted, 1 when incomplete), same
 * at once and byte by byte; `msg` receives the message. */
static int refusal(const char *raw, char *msg, size_t size)
{
	struct httpp p, q;
	static struct httpp_head h;
	char *buf;
	int rc = parse_all(raw, &p, &h, &buf), rc2 = parse_bytewise(raw, &q, &h);

	free(buf);
	CHECK_INT(rc2, rc);
	snprintf(msg, size, "%s", rc == HTTPP_ERROR ? p.error : "");
	if (rc == HTTPP_ERROR) {
		CHECK_INT(q.status, p.status);
		CHECK_STR(q.error, p.error);
		return p.status;
	}
	return rc == HTTPP_OK ? 0 : 1;
}

static void test_simple(void)
{
	static struct httpp_head h;
	struct httpp p;
	char *buf;
	const char *raw = "POST /v1/charge/pix/create?x=1&y=%20z HTTP/1.1\r\n"
			  "Host: example\r\n"
			  "Content-Type:application/json \r\n"
			  "Content-Length: 2\r\n"
			  "X-Empty:\r\n"
			  "\r\n{}GET /next";

	CHECK_INT(parse_all(raw, &p, &h, &buf), HTTPP_OK);
	CHECK_INT(h.method, HTTPP_POST);
	CHECK_STR(h.method_name, "POST");
	CHECK_STR(h.path, "/v1/charge/pix/create");
	CHECK_INT(h.path_len, 21);
	CHECK_STR(h.query, "x=1&y=%20z");
	CHECK_INT(h.minor, 1);
	CHECK_INT(h.nheaders, 4);
	CHECK_STR(h.headers[0].name, "Host");
	CHECK_STR(h.headers[1].value, "application/json");
	CHECK_STR(h.headers[3].name, "X-Empty");
	CHECK_STR(h.headers[3].value, "");
	CHECK_INT(h.content_length, 2);
	CHECK_INT(h.chunked, 0);
	CHECK_INT(h.keep_alive, 1);
	CHECK_INT(h.head_len, strlen(raw) - strlen("{}GET /next"));
	CHECK(httpp_header(&h, "content-TYPE", NULL) == &h.headers[1]);
	CHECK(httpp_header(&h, "Content-Typ", NULL) == NULL);
	free(buf);

	/* the same, byte by byte */
	CHECK_INT(parse_bytewise(raw, &p, &h), HTTPP_OK);

	/* HTTP/1.0: no Host needed, close unless keep-alive; blank lines before
	 * the request line are skipped */
	CHECK_INT(parse_all("\r\n\r\nGET / HTTP/1.0\r\n\r\n", &p, &h, &buf), HTTPP_OK);
	CHECK_INT(h.minor, 0);
	CHECK_INT(h.keep_alive, 0);
	CHECK(h.query == NULL);
	free(buf);
	CHECK_INT(parse_all("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", &p, &h, &buf),
		  HTTPP_OK);
	CHECK_INT(h.keep_alive, 1);
	free(buf);
	CHECK_INT(
	    parse_all("GET / HTTP/1.1\r\nHost: a\r\nConnection: foo, close\r\n\r\n", &p, &h, &buf),
	    HTTPP_OK);
	CHECK_INT(h.keep_alive, 0);
	free(buf);
	/* HTTP/1.2 counts as 1.1 */
	CHECK_INT(parse_all("GET / HTTP/1.2\r\nHost: a\r\n\r\n", &p, &h, &buf), HTTPP_OK);
	CHECK_INT(h.minor, 1);
	free(buf);
	/* absolute-form */
	CHECK_INT(parse_all("GET http://example.com:8080/v1/me?a=b HTTP/1.1\r\nHost: a\r\n\r\n", &p,
			    &h, &buf),
		  HTTPP_OK);
	CHECK_STR(h.path, "/v1/me");
	CHECK_STR(h.query, "a=b");
	free(buf);
	/* chunked, Expect, duplicate ordinary fields, obs-text in a value */
	CHECK_INT(parse_all("PUT /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked\r\n"
			    "Expect: 100-continue\r\nX-A: 1\r\nx-a: 2\r\nX-U: \xc3\xa9\r\n\r\n",
			    &p, &h, &buf),
		  HTTPP_OK);
	CHECK_INT(h.chunked, 1);
	CHECK_INT(h.expect_continue, 1);
	CHECK_INT(h.content_length, -1);
	{
		unsigned n = 0;
		CHECK_STR(httpp_header(&h, "X-A", &n)->value, "1");
		CHECK_INT(n, 2);
	}
	free(buf);
	/* incomplete */
	CHECK_INT(parse_all("GET / HTTP/1.1\r\nHost: a\r\n", &p, &h, &buf), HTTPP_AGAIN);
	free(buf);
	CHECK_INT(parse_all("GET / HTTP/1.1\r\nHost: a\r\n\r", &p, &h, &buf), HTTPP_AGAIN);
	free(buf);
}

static void test_refusals(void)
{
	char m[200];
	char *big;

	CHECK_INT(refusal("GET / HTTP/1.1\nHost: a\r\n\r\n", m, sizeof(m)), 400);
	CHECK_STR(m, "bare LF in the request head: lines must end with CRLF");
	CHECK_INT(refusal("GET / HTTP/1.1\r\nHost: a\n\r\n", m, sizeof(m)), 400);
	CHECK_INT(refusal("\nGET / HTTP/1.1\r\n", m, sizeof(m)), 400);
	CHECK_INT(refusal("GET  / HTTP/1.1\r\nHost: a\r\n\r\n", m, sizeof(m)), 400);
	CHECK_STR(m, "malformed request line: expected METHOD SP /path SP HTTP/1.1");
	CHECK_INT(refusal("GET / HTTP/1.1 \r\nHost: a\r\n\r\n", m, sizeof(m)), 400);
	CHECK_INT(refusal("GET /\r\n\r\n", m, sizeof(m)), 400);
	CHECK_INT(refusal("GET / HTTP/1.1\rX\r\nHost: a\r\n\r\n", m, sizeof(m)), 400);
	CHECK_INT(refusal("GET / HTTX/1.1\r\nHost: a\r\n\r\n", m, sizeof(m)), 400);
	CHECK_INT(refusal("GET / HTTP/1.10\r\nHost: a\r\n\r\n", m, sizeof(m)), 400);
	CHECK_INT(refusal("GET / http/1.1\r\nHost: a\r\n\r\n", m, sizeof(m)), 400);
	CHECK_INT(refusal("GET / HTTP/2.0\r\nHost: a\r\n\r\n", m, sizeof(m)), 505);
	CHECK_STR(m, "HTTP version not supported: use HTTP/1.1");
	CHECK_INT(refusal("GET / HTTP/0.9\r\n\r\n", m, sizeof(m)), 505);
	CHECK_INT(refusal("BREW /pot HTTP/1.1\r\nHost: a\r\n\r\n", m, sizeof(m)), 501);
	CHECK_STR(m, "method BREW is not implemented");
	CHECK_INT(refusal("get / HTTP/1.1\r\nHost: a\r\n\r\n", m, sizeof(m)), 501);
	CHECK_INT(refusal("CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\n", m, sizeof(m)), 501);
	CHECK_INT(refusal("G(T / HTTP/1.1\r\nHost: a\r\n\r\n", m, sizeof(m)), 400);
	CHECK_INT(refusal("GET /\xff HTTP/1.1\r\nHost: a\r\n\r\n", m, sizeof(m)), 400);
	CHECK_STR(m, "invalid character in the request target (byte 2); escape it as %XX");
	CHECK_INT(refusal("GET /a#b HTTP/1.1\r\nHost: a\r\n\r\n", m, sizeof(m)), 400);
	CHECK_INT(refusal("GET /a\\b HTTP/1.1\r\nHost: a\r\n\r\n", m, sizeof(m)), 400);
	CHECK_INT(refusal("GET /a\x01 HTTP/1.1\r\nHost: a\r\n\r\n", m, sizeof(m)), 400);
	CHECK_INT(refusal("GET /a%zz HTTP/1.1\r\nHost: a\r\n\r\n", m, sizeof(m)), 400);
	CHECK_STR(m, "invalid percent-escape in the request target (byte 3)");
	CHECK_INT(refusal("GET /a%4 HTTP/1.1\r\nHost: a\r\n\r\n", m, sizeof(m)), 400);
	CHECK_INT(refusal("GET /a?b=%00 HTTP/1.1\r\nHost: a\r\n\r\n", m, sizeof(m)), 400);
	CHECK_STR(m, "%00 (NUL) in the request target");
	CHECK_INT(refusal("GET * HTTP/1.1\r\nHost: a\r\n\r\n", m, sizeof(m)), 400);
	CHECK_STR(m, "the request target must be a path such as /v1/me");
	CHECK_INT(refusal("GET http://a HTTP/1.1\r\nHost: a\r\n\r\n", m, sizeof(m)), 400);
	CHECK_INT(refusal("GET ftp://a/b HTTP/1.1\r\nHost: a\r\n\r\n", m, sizeof(m)), 400);
	CHECK_INT(refusal("GET / HTTP/1.1\r\n\r\n", m, sizeof(m)), 400);
	CHECK_STR(m, "Host header missing (required in HTTP/1.1)");
	CHECK_INT(refusal("GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", m, sizeof(m)), 400);
	CHECK_STR(m, "more than one Host header");
	CHECK_INT(refusal("GET / HTTP/1.1\r\nHost: a\r\n X: folded\r\n\r\n", m, sizeof(m)), 400);
	CHECK_INT(refusal("GET / HTTP/1.1\r\nHost : a\r\n\r\n", m, sizeof(m)), 400);
	CHECK_STR(m, "whitespace between a header name and its colon");
	CHECK_INT(refusal("GET / HTTP/1.1\r\nHost: a\r\n: x\r\n\r\n", m, sizeof(m)), 400);
	CHECK_STR(m, "empty header name");
	CHECK_INT(refusal("GET / HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n", m, sizeof(m)), 400);
	CHECK_INT(refusal("GET / HTTP/1.1\r\nHost: a\r\nX(: 1\r\n\r\n", m, sizeof(m)), 400);
	CHECK_INT(refusal("GET / HTTP/1.1\r\nHost: a\r\nX: a\x7f\r\n\r\n", m, sizeof(m)), 400);
	{
		/* a NUL inside a value: "Bearer key\0junk" */
		static const char raw[] =
		    "GET / HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer k\0junk"
		    "\r\n\r\n";
		struct httpp p;
		static struct httpp_head h;
		char buf[sizeof(raw)];
		memcpy(buf, raw, sizeof(raw));
		httpp_init(&p, NULL);
		CHECK_INT(httpp_parse_head(&p, buf, sizeof(raw) - 1, &h), HTTPP_ERROR);
		CHECK_INT(p.status, 400);
		CHECK_STR(p.error, "invalid character (control or NUL) in header Authorization");
	}
	CHECK_INT(refusal("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n"
			  "\r\n",
			  m, sizeof(m)),
		  400);
	CHECK_STR(m, "more than one Content-Length header");
	CHECK_INT(refusal("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 1\r\n"
			  "\r\n",
			  m, sizeof(m)),
		  400);
	CHECK_INT(
	    refusal("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1, 1\r\n\r\n", m, sizeof(m)),
	    400);
	CHECK_STR(m, "invalid Content-Length: expected 0 to 18 digits");
	CHECK_INT(refusal("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", m, sizeof(m)),
		  400);
	CHECK_INT(refusal("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +1\r\n\r\n", m, sizeof(m)),
		  400);
	CHECK_INT(
	    refusal("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0x10\r\n\r\n", m, sizeof(m)),
	    400);
	CHECK_INT(refusal("POST / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n", m, sizeof(m)),
		  400);
	CHECK_INT(
	    refusal("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 9999999999999999999\r\n\r\n", m,
		    sizeof(m)),
	    400);
	CHECK_INT(refusal("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n"
			  "Transfer-Encoding: chunked\r\n\r\n",
			  m, sizeof(m)),
		  400);
	CHECK_STR(m, "both Transfer-Encoding and Content-Length: send only one");
	CHECK_INT(refusal("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
			  m, sizeof(m)),
		  501);
	CHECK_STR(m, "Transfer-Encoding: only chunked is supported");
	CHECK_INT(refusal("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n"
			  "Transfer-Encoding: chunked\r\n\r\n",
			  m, sizeof(m)),
		  400);
	CHECK_INT(refusal("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", m, sizeof(m)),
		  400);
	CHECK_INT(refusal("POST / HTTP/1.1\r\nHost: a\r\nExpect: 200-ok\r\n\r\n", m, sizeof(m)),
		  417);
	/* HTTP/1.0 ignores Expect */
	CHECK_INT(refusal("POST / HTTP/1.0\r\nExpect: 200-ok\r\n\r\n", m, sizeof(m)), 0);

	/* limits, refused before the line ends */
	big = malloc(40000);
	memset(big, 'a', 39999);
	big[39999] = '\0';
	memcpy(big, "GET /", 5);
	CHECK_INT(refusal(big, m, sizeof(m)), 414);
	CHECK_STR(m, "request line too long (at most 8192 bytes)");
	{
		/* exactly at the limit is fine */
		char *ok = malloc(8192 + 64);
		memset(ok, 'a', 8192);
		memcpy(ok, "GET /", 5);
		memcpy(ok + 8192 - 9, " HTTP/1.1\r\nHost: a\r\n\r\n", 23);
		CHECK_INT(refusal(ok, m, sizeof(m)), 0);
		ok[8192 - 9] = 'a';
		memcpy(ok + 8192 - 8, " HTTP/1.1\r\nHost: a\r\n\r\n", 23);
		CHECK_INT(refusal(ok, m, sizeof(m)), 414);
		free(ok);
	}
	memcpy(big, "GET / HTTP/1.1\r\nHost: a\r\nX: ", 28);
	CHECK_INT(refusal(big, m, sizeof(m)), 431);
	CHECK_STR(m, "request head too large (at most 16384 bytes)");
	{
		char *many = malloc(200 * 12 + 64), *w = many;
		w += sprintf(w, "GET / HTTP/1.1\r\nHost: a\r\n");
		for (int i = 0; i < 100; i++)
			w += sprintf(w, "X-%d: 1\r\n", i);
		strcpy(w, "\r\n");
		CHECK_INT(refusal(many, m, sizeof(m)), 431);
		CHECK_STR(m, "too many header fields (at most 100)");
		free(many);
	}
	free(big);
}

/* Decode a chunked body fed in pieces of `step` bytes; returns the result
 * and the decoded body in out. */
static int dechunk(const char *in, size_t len, size_t step, uint64_t max, char *out, size_t *outlen,
		   size_t *consumed, struct httpp_chunked *c)
{
	size_t pos = 0, avail = 0, n = 0;
	int rc = HTTPP_AGAIN;

	httpp_chunked_init(c, max);
	while (rc == HTTPP_AGAIN) {
		size_t used;
		const char *d;
		size_t dl;
		if (pos == avail) {
			if (avail == len)
				break;
			avail = avail + step > len ? len : avail + step;
		}
		rc = httpp_chunked_feed(c, in + pos, avail - pos, &used, &d, &dl);
		memcpy(out + n, d, dl);
		n += dl;
		pos += used;
	}
	*outlen = n;
	*consumed = pos;
	return rc;
}

static void test_chunked(void)
{
	static const char body[] = "5\r\nhello\r\n1;ext=\"x y\";a\r\n \r\n0000A\r\n0123456789\r\n"
				   "0\r\nX-Trailer: yes\r\n\r\nGET /next";
	char out[256];
	size_t n, used;
	struct httpp_chunked c;

	for (size_t step = 1; step <= sizeof(body); step++) {
		int rc = dechunk(body, sizeof(body) - 1, step, 1000, out, &n, &used, &c);
		CHECK_INT(rc, HTTPP_OK);
		CHECK_INT(n, 16);
		CHECK(memcmp(out, "hello 0123456789", 16) == 0);
		CHECK_INT(used, sizeof(body) - 1 - strlen("GET /next"));
	}
	CHECK_INT(dechunk("0\r\n\r\n", 5, 5, 0, out, &n, &used, &c), HTTPP_OK);
	CHECK_INT(n, 0);
	CHECK_INT(dechunk("5\r\nhel", 6, 6, 100, out, &n, &used, &c), HTTPP_AGAIN);
	CHECK_INT(n, 3);

	/* over the cap: refused from the size line, before the data */
	CHECK_INT(dechunk("10\r\n", 4, 4, 15, out, &n, &used, &c), HTTPP_ERROR);
	CHECK_INT(c.status, 413);
	CHECK_INT(dechunk("8\r\n12345678\r\n8\r\n", 16, 16, 15, out, &n, &used, &c), HTTPP_ERROR);
	CHECK_INT(c.status, 413);
	CHECK_INT(dechunk("fffffffffffffff\r\n", 17, 17, 15, out, &n, &used, &c), HTTPP_ERROR);
	CHECK_INT(c.status, 413);

	/* malformed: 400, never 413 */
	static const char *const bad[] = {
	    "zz\r\n",
	    "\r\n",
	    "-1\r\n",
	    "0x5\r\n",
	    "5 \r\nhello\r\n",
	    "5\nhello\r\n",
	    "5\r\nhelloX\r\n",
	    "5\r\nhello\r\r",
	    "5;a\x01\r\nhello\r\n",
	    "11111111111111111\r\n",
	    "0\r\nbad trailer\r\n\r\n",
	    "0\r\nX: a\x7f\r\n\r\n",
	    "0\r\nX: a\n\r\n",
	    "0\r\n\rX",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = dechunk(bad[i], strlen(bad[i]), 1, 1u << 30, out, &n, &used, &c);
		CHECK_INT(rc, HTTPP_ERROR);
		CHECK_INT(c.status, 400);
		if (rc != HTTPP_ERROR || c.status != 400)
			fprintf(stderr, "  case %zu\n", i);
	}
	CHECK_INT(dechunk("zz\r\n", 4, 4, 100, out, &n, &used, &c), HTTPP_ERROR);
	CHECK_STR(c.error, "invalid chunk size: expected hex digits");
	{
		/* long extensions and trailers are bounded */
		char *ext = malloc(3000);
		memset(ext, 'a', 3000);
		memcpy(ext, "1;", 2);
		CHECK_INT(dechunk(ext, 3000, 100, 100, out, &n, &used, &c), HTTPP_ERROR);
		CHECK_STR(c.error, "chunk size line too long");
		free(ext);
		char *tr = malloc(10000), *w = tr;
		w += sprintf(w, "0\r\n");
		while (w - tr < 9000)
			w += sprintf(w, "X-T: 1234567890\r\n");
		CHECK_INT(dechunk(tr, (size_t)(w - tr), 7, 100, out, &n, &used, &c), HTTPP_ERROR);
		CHECK_INT(c.status, 431);
		free(tr);
	}
}

static void test_query(void)
{
	char *v;

	v = httpp_query_value("a=1&size=12&b", "size");
	CHECK_STR(v, "12");
	free(v);
	v = httpp_query_value("a=1&size=12&b", "b");
	CHECK_STR(v, "");
	free(v);
	CHECK(httpp_query_value("a=1&size=12&b", "c") == NULL);
	CHECK(httpp_query_value("sizes=1", "size") == NULL);
	CHECK(httpp_query_value(NULL, "size") == NULL);
	v = httpp_query_value("until=2020-01-01%2000:00:00+Z&until=2", "until");
	CHECK_STR(v, "2020-01-01 00:00:00 Z");
	free(v);
	v = httpp_query_value("%73ize=3", "size");
	CHECK_STR(v, "3");
	free(v);
	v = httpp_query_value("&&x=%zz&", "x");
	CHECK_STR(v, "%zz");
	free(v);
}

int main(void)
{
	test_simple();
	test_refusals();
	test_chunked();
	test_query();
	CHECK_STR(httpp_method_name(HTTPP_PATCH), "PATCH");
	CHECK_STR(httpp_method_name(HTTPP_UNKNOWN), "-");
	return check_finish("httpparse");
}
