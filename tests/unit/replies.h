/* replies.h: Redis answers made of string replies, for the unit tests of
 * the decoders of scripts' answers (test-banks_pix.c, test-banks_recon.c):
 * an array of copies of the strings given, each element also reachable by
 * itself (to make one another type). */
#ifndef PIXRELAY_TEST_REPLIES_H
#define PIXRELAY_TEST_REPLIES_H

#include "pixrelay/redis/redis.h"

#include <stdio.h>
#include <string.h>

#define REPLIES_MAX 64

struct replies {
	redisReply top; /* the array of the n elements */
	redisReply r[REPLIES_MAX];
	redisReply *p[REPLIES_MAX];
	char buf[REPLIES_MAX][128];
	size_t n;
};

static inline void replies_set(struct replies *a, const char *const *f, size_t n)
{
	memset(a, 0, sizeof(*a));
	for (size_t i = 0; i < n && i < REPLIES_MAX; i++) {
		snprintf(a->buf[i], sizeof(a->buf[i]), "%s", f[i]);
		a->r[i].type = REDIS_REPLY_STRING;
		a->r[i].str = a->buf[i];
		a->r[i].len = strlen(a->buf[i]);
		a->p[i] = &a->r[i];
	}
	a->n = n;
	a->top.type = REDIS_REPLY_ARRAY;
	a->top.element = a->p;
	a->top.elements = n;
}

#endif
