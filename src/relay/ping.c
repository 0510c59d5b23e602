/* ping: test requests to webhook endpoints (ping.h) on the process's ping
 * pools, one per environment, kept for its life: a ping reuses their
 * connections and the CA store curl loaded once (a pool of its own per ping
 * loaded it again at each, about 30 ms of the loop for an https endpoint).
 * A ping is answered from the loop (never inside curl's callback). The
 * request itself is post.c's, as every delivery's. */
#include "pixrelay/relay/ping.h"

#include "post_int.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/log.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/timefmt.h"
#include "pixrelay/pix/keyspace.h"
#include "pixrelay/relay/curlev.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* connections a ping pool keeps for the next pings */
#define PING_KEEP 8

struct ping {
	struct ping_pool *pp;
	struct ping *prev, *next; /* in flight, in pp->live */
	struct curlev *pool;	  /* its environment's; NULL when it was not sent */
	CURL *easy;
	struct event *answer; /* the answer, from the loop */
	struct post post;
	struct netaddr_list allow;
	char id[KS_EVENT_ID_MAX];
	char *body;
	uint64_t start_ms;
	ping_fn cb;
	void *ud;
	CURLcode result;
	char error[512];
	int failed;   /* it could not be sent, or had no answer: error says why */
	int finished; /* curl is done with it; its answer is on the loop */
};

struct ping_pool {
	struct event_base *base;
	const struct config *cfg;
	struct curlev *pool[2]; /* by environment */
	struct ping *live;
};

static void ping_free(struct ping *p)
{
	if (p->prev)
		p->prev->next = p->next;
	else
		p->pp->live = p->next;
	if (p->next)
		p->next->prev = p->prev;
	if (p->easy)
		curlev_release(p->pool, p->easy);
	event_free(p->answer);
	post_deinit(&p->post);
	netaddr_list_deinit(&p->allow);
	free(p->body);
	free(p);
}

/* Answer p's caller, then free p. */
static void answer(struct ping *p)
{
	struct ping_result r = {p->id, 0, 0, (long long)(ids_now_ms() - p->start_ms), NULL, NULL};

	if (!p->failed) {
		curl_easy_getinfo(p->easy, CURLINFO_RESPONSE_CODE, &r.status);
		post_error(&p->post, p->result, r.status, p->error, sizeof(p->error));
		r.response = post_response(&p->post);
	}
	r.delivered = !p->failed && !p->error[0];
	r.error = p->error[0] ? p->error : NULL;
	p->cb(p->ud, &r);
	ping_free(p);
}

static void on_answer(evutil_socket_t fd, short kind, void *arg)
{
	answer(arg);
}

static void on_done(void *ud, CURL *easy, CURLcode result)
{
	struct ping *p = NULL;
	struct timeval zero = {0, 0};

	curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&p);
	p->result = result;
	p->finished = 1;
	event_add(p->answer, &zero);
}

struct ping_pool *ping_pool_new(struct event_base *base, const struct config *cfg)
{
	struct ping_pool *pp = mem_new(struct ping_pool);

	pp->base = base;
	pp->cfg = cfg;
	/* one per environment: a connection a sandbox ping opened (to any
	 * address) is never reused for a production one */
	pp->pool[ENV_SANDBOX] = curlev_new_pool(base, PING_KEEP, on_done, pp);
	pp->pool[ENV_PRODUCTION] = curlev_new_pool(base, PING_KEEP, on_done, pp);
	return pp;
}

void ping_pool_free(struct ping_pool *pp)
{
	if (!pp)
		return;
	while (pp->live) {
		struct ping *p = pp->live;
		if (!p->failed && !p->finished) {
			curlev_remove(p->pool, p->easy);
			snprintf(p->error, sizeof(p->error),
				 "pixrelay stopped before the endpoint answered");
			p->failed = 1;
		}
		answer(p);
	}
	curlev_free(pp->pool[ENV_SANDBOX]);
	curlev_free(pp->pool[ENV_PRODUCTION]);
	free(pp);
}

/* The test event's body. */
static char *test_body(const char *id, const struct endpoint_target *t, const char *account)
{
	yajl_gen g = json_gen_new();
	char at[25];
	char *out;

	timefmt_rfc3339(at, ids_now_ms());
	json_open(g);
	json_str(g, "id");
	json_str(g, id);
	json_str(g, "event");
	json_str(g, "EVENT:ENDPOINT_TEST");
	json_str(g, "data");
	json_open(g);
	json_str(g, "endpoint");
	json_str(g, t->id);
	json_str(g, "url");
	json_str(g, t->url);
	json_str(g, "environment");
	json_str(g, env_name(t->env));
	json_str(g, "account");
	json_str(g, account);
	json_str(g, "sentAt");
	json_str(g, at);
	json_close(g);
	json_close(g);
	out = json_take(g);
	return out;
}

void ping_send(struct ping_pool *pp, const struct endpoint_target *t, const char *account,
	       ping_fn cb, void *ud)
{
	struct ping *p = mem_new(struct ping);
	struct timeval zero = {0, 0};
	char err[256];

	p->pp = pp;
	p->next = pp->live;
	if (pp->live)
		pp->live->prev = p;
	pp->live = p;
	p->cb = cb;
	p->ud = ud;
	p->start_ms = ids_now_ms();
	p->answer = event_new(pp->base, -1, 0, on_answer, p);
	if (!p->answer)
		mem_oom(__FILE__, __LINE__);
	ks_event_id(ks_shard_of(t->id) < 0 ? 0 : ks_shard_of(t->id), p->id);
	p->body = test_body(p->id, t, account);
	if (netaddr_list_parse(&p->allow, pp->cfg->destination_allow, err, sizeof(err)) < 0) {
		snprintf(p->error, sizeof(p->error), "destination-allow: %s", err);
		p->failed = 1;
	} else {
		struct post_msg m = {t->url,	      p->id, p->body,	t->signing,
				     t->signing_prev, "",    t->headers};
		p->pool = pp->pool[t->env == ENV_PRODUCTION ? ENV_PRODUCTION : ENV_SANDBOX];
		p->easy = curlev_easy(p->pool);
		p->post.env = t->env;
		p->post.allow = &p->allow;
		post_setup(&p->post, p->easy, pp->cfg, &m);
		curl_easy_setopt(p->easy, CURLOPT_PRIVATE, p);
		if (curlev_add(p->pool, p->easy) == 0)
			return;
		snprintf(p->error, sizeof(p->error), "cannot start the request");
		p->failed = 1;
	}
	log_warn("endpoint %s: test not sent: %s", t->id, p->error);
	event_add(p->answer, &zero);
}
