/* ping: one test request to a webhook endpoint (ping.h) on a curl pool of
 * its own, freed after its answer (from the loop: never inside curl's
 * callback). The request itself is post.c's, as every delivery's. */
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

struct ping {
	struct event_base *base;
	struct curlev *pool;
	CURL *easy;
	struct post post;
	struct netaddr_list allow;
	char id[KS_EVENT_ID_MAX];
	char *body;
	uint64_t start_ms;
	ping_fn cb;
	void *ud;
	CURLcode result;
	char error[512];
	int failed; /* it could not be sent: error says why */
};

static void ping_free(struct ping *p)
{
	if (p->easy)
		curlev_release(p->pool, p->easy);
	curlev_free(p->pool);
	post_deinit(&p->post);
	netaddr_list_deinit(&p->allow);
	free(p->body);
	free(p);
}

/* From the loop, after curl is done with the pool: answer, then free. */
static void on_answer(evutil_socket_t fd, short kind, void *arg)
{
	struct ping *p = arg;
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

static void on_done(void *ud, CURL *easy, CURLcode result)
{
	struct ping *p = ud;
	struct timeval zero = {0, 0};

	p->result = result;
	event_base_once(p->base, -1, EV_TIMEOUT, on_answer, p, &zero);
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

void ping_send(struct event_base *base, const struct config *cfg, const struct endpoint_target *t,
	       const char *account, ping_fn cb, void *ud)
{
	struct ping *p = mem_new(struct ping);
	struct timeval zero = {0, 0};
	char err[256];

	p->base = base;
	p->cb = cb;
	p->ud = ud;
	p->start_ms = ids_now_ms();
	ks_event_id(ks_shard_of(t->id) < 0 ? 0 : ks_shard_of(t->id), p->id);
	p->body = test_body(p->id, t, account);
	p->pool = curlev_new_pool(base, 1, on_done, p);
	if (netaddr_list_parse(&p->allow, cfg->destination_allow, err, sizeof(err)) < 0) {
		snprintf(p->error, sizeof(p->error), "destination-allow: %s", err);
		p->failed = 1;
	} else {
		struct post_msg m = {t->url,	      p->id, p->body,	t->signing,
				     t->signing_prev, "",    t->headers};
		p->easy = curlev_easy(p->pool);
		p->post.env = t->env;
		p->post.allow = &p->allow;
		post_setup(&p->post, p->easy, cfg, &m);
		if (curlev_add(p->pool, p->easy) == 0)
			return;
		snprintf(p->error, sizeof(p->error), "cannot start the request");
		p->failed = 1;
	}
	log_warn("endpoint %s: test not sent: %s", t->id, p->error);
	event_base_once(base, -1, EV_TIMEOUT, on_answer, p, &zero);
}
