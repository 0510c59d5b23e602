/* cmd.c: a command as data. A command is formatted into RESP once, into the
 * same block as its bookkeeping (struct cmd), and that text is what every
 * retry sends; here are that formatting, the migration guard's EXISTS, the
 * lists commands wait in, answering a command's caller exactly once, and
 * the public helpers on replies (rds_reply_copy, rds_hash_field). No I/O and
 * no event loop. Where a command goes is redis.c (rds_route); how it is
 * sent and answered, send.c. */
#include "redis_int.h"

#include "pixrelay/core/mem.h"
#include "pixrelay/redis/rslot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD_SUFFIX ":rds-migration-guard"

size_t rds_digits(size_t v)
{
	size_t n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

/* "<mark><v>\r\n" at p; returns the end. */
static char *put_count(char *p, char mark, size_t v)
{
	char d[24];
	int n = 0;

	*p++ = mark;
	do {
		d[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = d[--n];
	*p++ = '\r';
	*p++ = '\n';
	return p;
}

/* A command of `nhead` fixed arguments then argc given ones, formatted into
 * one block with its bookkeeping; `key` is the index (over both) of the
 * argument it is routed by, or -1. */
struct cmd *rds_cmd_new(struct rds *r, rds_reply_fn cb, void *ud, int nhead, const char **head,
			int argc, const char **argv, const size_t *lens, int key)
{
	size_t total = 1 + rds_digits((size_t)(nhead + argc)) + 2, hl[4];
	struct cmd *c;
	char *p;

	for (int i = 0; i < nhead; i++) {
		hl[i] = strlen(head[i]);
		total += 1 + rds_digits(hl[i]) + 2 + hl[i] + 2;
	}
	for (int i = 0; i < argc; i++) {
		size_t n = lens ? lens[i] : strlen(argv[i]);
		total += 1 + rds_digits(n) + 2 + n + 2;
	}
	c = mem_alloc(sizeof(*c) + total + 1);
	memset(c, 0, sizeof(*c));
	c->r = r;
	c->cb = cb;
	c->ud = ud;
	c->slot = -1;
	c->len = total;
	p = put_count(c->buf, '*', (size_t)(nhead + argc));
	for (int i = 0; i < nhead + argc; i++) {
		const char *s = i < nhead ? head[i] : argv[i - nhead];
		size_t n = i < nhead ? hl[i] : lens ? lens[i - nhead] : strlen(s);
		p = put_count(p, '$', n);
		if (i == key) {
			c->keyoff = (size_t)(p - c->buf);
			c->keylen = n;
			c->slot = rslot_of(s, n);
		}
		memcpy(p, s, n);
		p += n;
		*p++ = '\r';
		*p++ = '\n';
	}
	*p = '\0';
	return c;
}

void rds_cmd_free(struct cmd *c)
{
	if (c->held)
		freeReplyObject(c->held);
	free(c);
}

/* Answer the caller (or the layer, for its own commands), once. */
void rds_complete(struct cmd *c, redisReply *reply, const char *err)
{
	if (c->done)
		return;
	c->done = 1;
	if (c->icb) {
		if (!c->r->closing)
			c->icb(c, reply, err);
	} else if (c->cb) {
		c->cb(c->ud, reply, err);
	}
}

void rds_list_append(struct cmd **head, struct cmd **tail, struct cmd *c)
{
	c->next = NULL;
	c->prev = *tail;
	if (*tail)
		(*tail)->next = c;
	else
		*head = c;
	*tail = c;
}

void rds_list_remove(struct cmd **head, struct cmd **tail, struct cmd *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		*head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else if (tail)
		*tail = c->prev;
	c->prev = c->next = NULL;
}

/* "EXISTS <key> {<its hash tag>}:rds-migration-guard" into out: 0, or -1
 * when the key has no usable tag or is too long. */
int rds_guard_format(const struct cmd *c, char *out, size_t outlen, size_t *len)
{
	const char *key = c->buf + c->keyoff, *part;
	size_t plen;
	int n;

	rslot_hashed_part(key, c->keylen, &part, &plen);
	if (memchr(part, '}', plen) || c->keylen + plen + 80 > outlen)
		return -1;
	n = snprintf(out, outlen, "*3\r\n$6\r\nEXISTS\r\n$%zu\r\n%.*s\r\n$%zu\r\n{%.*s}%s\r\n",
		     c->keylen, (int)c->keylen, key, plen + 2 + strlen(GUARD_SUFFIX), (int)plen,
		     part, GUARD_SUFFIX);
	*len = (size_t)n;
	return 0;
}

redisReply *rds_reply_copy(const redisReply *src)
{
	redisReply *d = mem_new(redisReply);

	d->type = src->type;
	d->integer = src->integer;
	if (src->str) {
		d->len = src->len;
		d->str = mem_strndup(src->str, src->len);
	}
	if (src->elements) {
		d->elements = src->elements;
		d->element = mem_calloc(src->elements, sizeof(redisReply *));
		for (size_t i = 0; i < src->elements; i++)
			d->element[i] = rds_reply_copy(src->element[i]);
	}
	return d;
}

const char *rds_hash_field(const redisReply *h, const char *name)
{
	if (!h || h->type != REDIS_REPLY_ARRAY)
		return NULL;
	for (size_t i = 0; i + 1 < h->elements; i += 2)
		if (h->element[i]->type == REDIS_REPLY_STRING &&
		    strcmp(h->element[i]->str, name) == 0)
			return h->element[i + 1]->type == REDIS_REPLY_STRING
				   ? h->element[i + 1]->str
				   : "";
	return NULL;
}
