/* body.c: request bodies of the HTTP server: their memory (large ones in a
 * mapping of their own, returned at once when the request ends), the budget
 * of max-body-memory over all connections, and taking a body's bytes, with
 * Content-Length or chunked, from the connection's input. The caps (max-body,
 * max-upload) are set when the head is in, in request.c; reading the socket
 * is conn.c.
 */
#include "http_int.h"

#include "pixrelay/core/mem.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Bodies from this size live in their own mapping (returned at once). */
#define BODY_MMAP_MIN (64 * 1024)

static size_t page_round(size_t n)
{
	return (n + 4095) & ~(size_t)4095;
}

/* Make room for `cap` bytes of body, contents kept. Large bodies get a
 * mapping of their own so that their memory goes back to the system when the
 * request ends, whatever the allocator does. */
void http_body_grow(struct req *r, size_t cap)
{
	void *p;

	if (cap <= r->body_cap)
		return;
	if (r->body_mapped) {
		p = mremap(r->body, page_round(r->body_cap), page_round(cap), MREMAP_MAYMOVE);
		if (p == MAP_FAILED)
			mem_oom(__FILE__, __LINE__);
	} else if (cap < BODY_MMAP_MIN) {
		p = mem_realloc(r->body, cap);
	} else {
		p = mmap(NULL, page_round(cap), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
		if (p == MAP_FAILED)
			mem_oom(__FILE__, __LINE__);
		if (r->pub.body_len)
			memcpy(p, r->body, r->pub.body_len);
		free(r->body);
		r->body_mapped = 1;
	}
	r->body = p;
	r->body_cap = cap;
}

void http_body_release(struct req *r)
{
	struct http_server *srv = r->pub.srv;

	if (r->body_mapped)
		munmap(r->body, page_round(r->body_cap));
	else
		free(r->body);
	r->body = NULL;
	r->body_cap = 0;
	r->body_mapped = 0;
	srv->body_bytes -= r->reserved;
	r->reserved = 0;
}

/* Count `n` more bytes of body against max-body-memory. Returns -1 when they
 * do not fit while other bodies are held (one body alone always fits). */
int http_body_budget(struct req *r, size_t n)
{
	struct http_server *srv = r->pub.srv;
	size_t others = srv->body_bytes - r->reserved;

	if (others > 0 && srv->body_bytes + n > (size_t)srv->cfg->max_body_memory)
		return -1;
	srv->body_bytes += n;
	r->reserved += n;
	return 0;
}

int http_body_reserve(struct conn *c, size_t n)
{
	if (http_body_budget(c->req, n) == 0)
		return 0;
	http_reply_early_error(c, 503, "too many request bodies in progress; retry shortly");
	return -1;
}

/* Take body bytes from the input buffer. Returns 1 when more are needed. */
bool http_body_take(struct conn *c)
{
	struct req *r = c->req;
	const struct httpp_head *h = &c->head;

	if (!h->chunked) {
		size_t want = (size_t)h->content_length - r->pub.body_len;
		size_t n = c->ilen - c->pos < want ? c->ilen - c->pos : want;
		memcpy(r->body + r->pub.body_len, c->ibuf + c->pos, n);
		r->pub.body_len += n;
		r->bytes_in += n;
		c->pos += n;
		if (r->pub.body_len == (size_t)h->content_length) {
			http_req_dispatch(c);
			return false;
		}
		return true;
	}
	while (c->pos < c->ilen) {
		size_t used, dlen;
		const char *data;
		int rc = httpp_chunked_feed(&c->chunk, c->ibuf + c->pos, c->ilen - c->pos, &used,
					    &data, &dlen);
		c->pos += used;
		r->bytes_in += used;
		if (rc == HTTPP_ERROR) {
			if (c->chunk.status == 413)
				http_reply_early_error(
				    c, 413, "request body too large: the limit is %llu bytes",
				    (unsigned long long)c->chunk.max);
			else
				http_reply_early_error(c, c->chunk.status, "%s", c->chunk.error);
			return false;
		}
		if (dlen) {
			size_t need = r->pub.body_len + dlen + 1;
			if (need > r->body_cap) {
				size_t cap = r->body_cap * 2 > need ? r->body_cap * 2 : need;
				if (cap > c->chunk.max + 1)
					cap = (size_t)c->chunk.max + 1;
				if (http_body_reserve(c, cap - r->body_cap) < 0)
					return false;
				http_body_grow(r, cap);
			}
			memcpy(r->body + r->pub.body_len, data, dlen);
			r->pub.body_len += dlen;
		}
		if (rc == HTTPP_OK) {
			http_req_dispatch(c);
			return false;
		}
	}
	/* all consumed: the next read may reuse the space after the head */
	c->ilen = c->pos = c->req_off + h->head_len;
	return true;
}
