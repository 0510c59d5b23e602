/* rargs: a growing list of the arguments of one Redis call, so that call
 * sites append what they send in order rather than fill argv by index.
 * Borrowed strings and slices are only pointed to; numbers are formatted
 * into blocks owned by the list that never move, so every argv pointer
 * stays valid while more is appended. Sending is redis.c's (rds_script,
 * rds_cmd_argv); what the arguments of each script mean is written next to
 * its caller (e.g. relay/lease.h for event_settle).
 */
#include "pixrelay/redis/rargs.h"

#include "pixrelay/core/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEXT_BLOCK 512 /* bytes of number text per block */
#define NUMBER_MAX 24  /* "-9223372036854775808" and its NUL, rounded up */

/* A block of the numbers' text: filled, then another one is chained. */
struct rargs_text {
	struct rargs_text *next;
	size_t used;
	char buf[TEXT_BLOCK];
};

void rargs_init(struct rargs *a)
{
	memset(a, 0, sizeof(*a));
}

void rargs_deinit(struct rargs *a)
{
	while (a->texts) {
		struct rargs_text *t = a->texts;
		a->texts = t->next;
		free(t);
	}
	free(a->argv);
	free(a->lens);
	memset(a, 0, sizeof(*a));
}

void rargs_bytes(struct rargs *a, const char *p, size_t n)
{
	if (a->argc == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 16;
		a->argv = mem_realloc(a->argv, (size_t)a->cap * sizeof(*a->argv));
		a->lens = mem_realloc(a->lens, (size_t)a->cap * sizeof(*a->lens));
	}
	a->argv[a->argc] = p;
	a->lens[a->argc] = n;
	a->argc++;
}

void rargs_str(struct rargs *a, const char *s)
{
	rargs_bytes(a, s, strlen(s));
}

void rargs_ll(struct rargs *a, long long v)
{
	struct rargs_text *t = a->texts;
	char *p;
	int n;

	if (!t || TEXT_BLOCK - t->used < NUMBER_MAX) {
		t = mem_new(struct rargs_text);
		t->next = a->texts;
		a->texts = t;
	}
	p = t->buf + t->used;
	n = snprintf(p, NUMBER_MAX, "%lld", v);
	t->used += (size_t)n + 1;
	rargs_bytes(a, p, (size_t)n);
}
