/* lease: the arguments and the answer of event_settle, the dispatcher's one
 * script, in the order lease.h (and the head of event_settle.lua) gives
 * them. What to put in them (budgets, outcomes) is dispatch.c's; sending is
 * redis.c's.
 */
#include "pixrelay/relay/lease.h"

#include "pixrelay/core/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void lease_args(struct rargs *a, const struct lease_call *c)
{
	rargs_str(a, c->hosts_key);
	rargs_str(a, c->lease_key);
	rargs_str(a, c->dead_key);
	rargs_str(a, c->shard_prefix);
	rargs_ll(a, (long long)c->now_ms);
	rargs_ll(a, c->lease_ms);
	rargs_ll(a, c->most);
	rargs_str(a, c->token);
	rargs_ll(a, c->log_cap);
	rargs_ll(a, c->retention_s);
	rargs_ll(a, c->host_most);
	rargs_ll(a, c->nhosts);
	rargs_ll(a, c->noutcomes);
	rargs_ll(a, c->account_most);
	rargs_ll(a, c->naccounts);
	rargs_ll(a, c->sandbox_most);
	rargs_ll(a, c->production_most);
	rargs_ll(a, c->ndone);
}

void lease_args_host(struct rargs *a, const char *host, unsigned most)
{
	rargs_str(a, host);
	rargs_ll(a, most);
}

void lease_args_account(struct rargs *a, const char *account, unsigned most)
{
	rargs_str(a, account);
	rargs_ll(a, most);
}

void lease_args_outcome(struct rargs *a, const struct lease_outcome *o)
{
	rargs_str(a, o->id);
	rargs_str(a, o->token);
	rargs_str(a, o->what);
	rargs_ll(a, o->next_ms);
	if (o->status > 0)
		rargs_ll(a, o->status);
	else
		rargs_str(a, "");
	rargs_str(a, o->error);
	rargs_str(a, o->entry);
	rargs_ll(a, o->attempts);
	rargs_str(a, o->order);
	rargs_str(a, o->queue);
	rargs_str(a, o->sid ? o->sid : "");
}

void lease_args_done(struct rargs *a, const char *sid, const char *token, const char *id,
		     const char *order, const char *record, const char *queue)
{
	rargs_str(a, sid);
	rargs_str(a, token);
	rargs_str(a, id);
	rargs_str(a, order);
	rargs_str(a, record);
	rargs_str(a, queue);
}

void lease_args_endpoints(struct rargs *a, long long disable_after_ms, long disable_min)
{
	rargs_str(a, "endpoints");
	rargs_ll(a, disable_after_ms);
	rargs_ll(a, disable_min);
}

void lease_args_given(struct rargs *a, const char *from, unsigned n)
{
	rargs_str(a, from);
	rargs_ll(a, n);
}

/* The first three newlines of a meta (its head's ends): 0, or -1 when fewer. */
static int meta_head(const char *meta, const char *nl[3])
{
	const char *at = meta;

	for (int i = 0; i < 3; i++) {
		nl[i] = strchr(at, '\n');
		if (!nl[i])
			return -1;
		at = nl[i] + 1;
	}
	return 0;
}

bool lease_meta_has_head(const char *meta)
{
	const char *nl[3];

	return meta_head(meta, nl) == 0;
}

int lease_args_entry(struct rargs *a, const char *sid, const char *meta)
{
	const char *nl[3];

	if (meta_head(meta, nl) < 0)
		return -1;
	rargs_str(a, sid);
	rargs_bytes(a, meta, (size_t)(nl[0] - meta));
	rargs_bytes(a, nl[0] + 1, (size_t)(nl[1] - nl[0] - 1));
	rargs_bytes(a, nl[1] + 1, (size_t)(nl[2] - nl[1] - 1));
	return 0;
}

const char *lease_cursor(const redisReply *answer)
{
	const redisReply *c;

	if (answer->elements < LEASE_REPLY_FIRST + 1 ||
	    (answer->elements - LEASE_REPLY_FIRST) % LEASE_FIELDS != 1)
		return NULL;
	c = answer->element[answer->elements - 1];
	return c->type == REDIS_REPLY_STRING ? c->str : NULL;
}

char *lease_done_record(long long when_ms, int attempts, long status, const char *entry,
			const char *error)
{
	char st[24] = "";

	if (status > 0)
		snprintf(st, sizeof(st), "%ld", status);
	return mem_printf("%lld\t%d\t%s\t%s\t%s", when_ms, attempts, st, entry ? entry : "",
			  error ? error : "");
}

/* Split s at its first want-1 `sep` into part (in place, NULs written
 * only when all are found): 0, or -1 when fewer. */
static int split(char *s, char sep, char **part, int want)
{
	int k = 0;

	part[k++] = s;
	for (char *c = s; *c && k < want; c++)
		if (*c == sep)
			part[k++] = c + 1;
	if (k < want)
		return -1;
	for (int i = 1; i < want; i++)
		part[i][-1] = '\0';
	return 0;
}

void lease_batch(const redisReply *answer, char *out, size_t size)
{
	const char *first = NULL, *last = NULL;

	out[0] = '\0';
	for (size_t i = LEASE_REPLY_FIRST; i + LEASE_FIELDS <= answer->elements;
	     i += LEASE_FIELDS) {
		const redisReply *sid = answer->element[i];
		if (sid->type != REDIS_REPLY_STRING || !sid->len)
			continue;
		if (!first)
			first = sid->str;
		last = sid->str;
	}
	if (first && strlen(first) + strlen(last) + 3 <= size)
		snprintf(out, size, "@%s/%s", first, last);
}

int lease_decode(redisReply *const *f, size_t n, struct lease *out)
{
	if (n < LEASE_FIELDS || f[1]->type != REDIS_REPLY_STRING ||
	    f[2]->type != REDIS_REPLY_STRING)
		return -1;
	return lease_decode_given(f, n, f[1]->str, f[2]->str, out);
}

int lease_decode_given(redisReply *const *f, size_t n, char *meta, const char *body,
		       struct lease *out)
{
	char *part[7], *count[3] = {NULL, NULL, NULL}, *secret[3], *slash, *headers;

	if (n < LEASE_FIELDS)
		return -1;
	for (size_t i = 0; i < LEASE_FIELDS; i++)
		if (f[i]->type != REDIS_REPLY_STRING)
			return -1;
	/* order key, queue, id, env, account, type, url */
	if (split(meta, '\n', part, 7) < 0)
		return -1;
	/* attempt number, budget_base, budget start (an event of its own hash) */
	if (f[3]->str[0] && split(f[3]->str, '\t', count, 3) < 0)
		return -1;
	/* signing secret, the previous one, the compat secret (then an
	 * endpoint's static headers) */
	if (split(f[4]->str, '\n', secret, 3) < 0)
		return -1;
	headers = strchr(secret[2], '\n');
	if (headers)
		*headers++ = '\0';
	slash = strchr(part[2], '/');
	out->sid = f[0]->str;
	out->order = part[0];
	out->queue = part[1];
	out->id = part[2];
	out->env = part[3];
	out->account = part[4];
	out->url = part[6];
	out->body = body;
	if (out->sid[0]) {
		/* a first attempt, its budget from its creation: the entry's time */
		out->attempts = 1;
		out->budget_base = 0;
		out->created_ms = strtoll(out->sid, NULL, 10);
	} else {
		if (!count[0])
			return -1;
		out->attempts = atoi(count[0]);
		out->budget_base = atoi(count[1]);
		out->created_ms = strtoll(count[2], NULL, 10);
	}
	out->signing = secret[0];
	out->signing_prev = secret[1];
	out->compat = secret[2];
	out->endpoint = slash ? slash + 1 : "";
	out->headers = headers ? headers : "";
	return 0;
}
