/* lease: the arguments and the answer of event_settle, the dispatcher's one
 * script, in the order lease.h (and the head of event_settle.lua) gives
 * them. What to put in them (budgets, outcomes) is dispatch.c's; sending is
 * redis.c's.
 */
#include "pixrelay/relay/lease.h"

#include <stdlib.h>

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

int lease_decode(redisReply *const *f, size_t n, struct lease *out)
{
	if (n < LEASE_FIELDS)
		return -1;
	for (size_t i = 0; i < LEASE_FIELDS; i++)
		if (f[i]->type != REDIS_REPLY_STRING)
			return -1;
	out->id = f[0]->str;
	out->url = f[1]->str;
	out->body = f[2]->str;
	out->attempts = atoi(f[3]->str);
	out->budget_base = atoi(f[4]->str);
	out->created_ms = strtoll(f[5]->str, NULL, 10);
	out->account = f[6]->str;
	out->env = f[7]->str;
	out->signing = f[8]->str;
	out->signing_prev = f[9]->str;
	out->compat = f[10]->str;
	out->order = f[11]->str;
	out->queue = f[12]->str;
	out->sid = f[13]->str;
	return 0;
}
