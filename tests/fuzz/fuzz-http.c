/* Fuzz the HTTP request parser: any bytes are a request head (and, when it
 * says chunked, a chunked body after it). Parsed at once and in pieces (the
 * first input byte picks the piece size), both must give the same answer,
 * byte for byte; a refusal always carries an HTTP status and an ASCII
 * message; nothing may crash, leak or read out of bounds. */
#include "pixrelay/http/httpparse.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_error(int status, const char *msg)
{
	if (status != 400 && status != 413 && status != 414 && status != 417 && status != 431 &&
	    status != 501 && status != 505)
		__builtin_trap();
	if (!msg[0])
		__builtin_trap();
	for (const char *p = msg; *p; p++)
		if (*p < 32 || *p > 126)
			__builtin_trap();
}

/* Parse buf[0, n) giving it `step` more bytes at a time. */
static int parse_pieces(char *buf, size_t n, size_t step, struct httpp *p, struct httpp_head *h)
{
	int rc = HTTPP_AGAIN;

	httpp_init(p, NULL);
	for (size_t len = step < n ? step : n; rc == HTTPP_AGAIN; len += step) {
		if (len > n)
			len = n;
		rc = httpp_parse_head(p, buf, len, h);
		if (len == n)
			break;
	}
	return rc;
}

static int same_head(const struct httpp_head *a, const char *abuf, const struct httpp_head *b,
		     const char *bbuf)
{
	if (a->method != b->method || a->minor != b->minor || a->nheaders != b->nheaders ||
	    a->content_length != b->content_length || a->chunked != b->chunked ||
	    a->keep_alive != b->keep_alive || a->expect_continue != b->expect_continue ||
	    a->head_len != b->head_len || a->path - abuf != b->path - bbuf ||
	    strcmp(a->path, b->path) != 0 || (a->query == NULL) != (b->query == NULL) ||
	    (a->query && strcmp(a->query, b->query) != 0))
		return 0;
	for (unsigned i = 0; i < a->nheaders; i++)
		if (strcmp(a->headers[i].name, b->headers[i].name) != 0 ||
		    strcmp(a->headers[i].value, b->headers[i].value) != 0 ||
		    a->headers[i].value_len != strlen(a->headers[i].value))
			return 0;
	return 1;
}

/* Decode a chunked body fed `step` bytes at a time; returns the result, the
 * body in out (of at least n bytes) and the bytes used. */
static int dechunk(const char *in, size_t n, size_t step, char *out, size_t *outlen, size_t *used,
		   int *status)
{
	struct httpp_chunked c;
	size_t pos = 0, avail = 0, k = 0;
	int rc = HTTPP_AGAIN;

	httpp_chunked_init(&c, 4096);
	while (rc == HTTPP_AGAIN) {
		size_t u, dl;
		const char *d;
		if (pos == avail) {
			if (avail == n)
				break;
			avail = avail + step > n ? n : avail + step;
		}
		rc = httpp_chunked_feed(&c, in + pos, avail - pos, &u, &d, &dl);
		if (u > avail - pos || (dl && (d < in + pos || d + dl > in + pos + u)))
			__builtin_trap();
		memcpy(out + k, d, dl);
		k += dl;
		pos += u;
	}
	if (rc == HTTPP_ERROR)
		check_error(c.status, c.error);
	if (k > 4096 || k > n)
		__builtin_trap();
	*outlen = k;
	*used = pos;
	*status = rc == HTTPP_ERROR ? c.status : 0;
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct httpp p1, p2;
	static struct httpp_head h1, h2;
	char *a, *b;
	size_t step, n;
	int rc1, rc2;

	if (size < 1)
		return 0;
	step = (size_t)(data[0] % 16) + 1;
	data++;
	n = size - 1;
	a = malloc(n + 1);
	b = malloc(n + 1);
	memcpy(a, data, n);
	memcpy(b, data, n);
	httpp_init(&p1, NULL);
	rc1 = httpp_parse_head(&p1, a, n, &h1);
	rc2 = parse_pieces(b, n, step, &p2, &h2);
	if (rc1 != rc2)
		__builtin_trap();
	if (rc1 == HTTPP_ERROR) {
		check_error(p1.status, p1.error);
		if (p1.status != p2.status || strcmp(p1.error, p2.error) != 0)
			__builtin_trap();
	}
	if (rc1 == HTTPP_OK) {
		if (!same_head(&h1, a, &h2, b) || h1.head_len > n)
			__builtin_trap();
		if (h1.query) {
			char *v = httpp_query_value(h1.query, "a");
			free(v);
		}
		if (h1.chunked) {
			size_t rest = n - h1.head_len, l1, l2, u1, u2;
			int s1, s2;
			char *o1 = malloc(rest + 1), *o2 = malloc(rest + 1);
			int c1 = dechunk(a + h1.head_len, rest, rest ? rest : 1, o1, &l1, &u1, &s1);
			int c2 = dechunk(a + h1.head_len, rest, step, o2, &l2, &u2, &s2);
			if (c1 != c2 || l1 != l2 || memcmp(o1, o2, l1) != 0 || s1 != s2 ||
			    (c1 == HTTPP_OK && u1 != u2))
				__builtin_trap();
			free(o1);
			free(o2);
		}
	}
	free(a);
	free(b);
	return 0;
}
