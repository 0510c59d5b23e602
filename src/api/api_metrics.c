/* api_metrics: the operational endpoints, /healthz, /readyz and /metrics.
 *
 * They need no key and are also served on the metrics-listen listener
 * (api_metrics_routes in api.c). /metrics renders the Prometheus text format
 * from this process's counters, what the Redis client knows (the slots of
 * the keyspace it serves, the replicas of each primary), and one
 * events_shard_stats call per shard (the shards of a missing cluster primary
 * are left out). /readyz says the same of Redis in JSON. /v1/openapi.yaml
 * stays in api.c beside the route table it describes.
 */
#include "api_int.h"

#include "pixrelay/redis/cache.h"
#include "pixrelay/redis/rslot.h"
#include "pixrelay/store/events.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/metrics.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void api_handle_healthz(struct http_req *req)
{
	static const char body[] = "{\"status\":\"ok\"}";

	http_reply_raw(req, 200, body, sizeof(body) - 1);
}

/* The figures of /metrics that come from Redis: one shard_stats call per
 * shard, answered together. */
struct scrape {
	struct http_req *req;
	int left, failed; /* failed: some shard did not answer */
	int nshards;
	struct events_stats *stats;
	unsigned char *answered; /* per shard */
};

/* The primaries the client knows, into a malloc'd array (*out; freed by the
 * caller); returns how many. */
static int primaries_of(const struct rds *r, struct rds_primary **out)
{
	int n = rds_primaries(r, NULL, 0);

	*out = mem_calloc((size_t)n + 1, sizeof(**out));
	n = rds_primaries(r, *out, n);
	return n;
}

/* `primary="<name>"` with the name escaped as a label value. */
static void primary_label(char *out, size_t size, const char *name)
{
	size_t o = (size_t)snprintf(out, size, "primary=\"");

	for (const char *p = name; *p && o + 4 < size; p++) {
		if (*p == '\\' || *p == '"' || *p == '\n')
			out[o++] = '\\';
		out[o++] = *p == '\n' ? 'n' : *p;
	}
	snprintf(out + o, size - o, "\"");
}

#define GAUGE(g, n, h, l, v)                                                                       \
	do {                                                                                       \
		(g)->name = (n);                                                                   \
		(g)->help = (h);                                                                   \
		(g)->labels = (l);                                                                 \
		(g)->value = (v);                                                                  \
		(g)++;                                                                             \
	} while (0)

/* The figures of the shards that answered summed by environment, into g
 * (10 at most); returns the next free gauge. None when no shard answered. */
static struct metrics_gauge *env_gauges(const struct scrape *sc, struct metrics_gauge *g)
{
	static const char *const pb[] = {"env=\"sandbox\",destination=\"postback\"",
					 "env=\"production\",destination=\"postback\""};
	static const char *const ep[] = {"env=\"sandbox\",destination=\"endpoint\"",
					 "env=\"production\",destination=\"endpoint\""};
	static const char *const en[] = {"env=\"sandbox\"", "env=\"production\""};
	static const char *const bp[] = {"env=\"sandbox\",by=\"pixrelay\"",
					 "env=\"production\",by=\"pixrelay\""};
	static const char *const br[] = {"env=\"sandbox\",by=\"request\"",
					 "env=\"production\",by=\"request\""};
	struct events_stats sum;
	int any = 0;

	memset(&sum, 0, sizeof(sum));
	for (int i = 0; i < sc->nshards; i++) {
		const struct events_stats *e = &sc->stats[i];
		if (!sc->answered[i])
			continue;
		any = 1;
		for (int env = 0; env < 2; env++) {
			sum.to_postback[env] += e->to_postback[env];
			sum.to_endpoint[env] += e->to_endpoint[env];
			sum.held[env] += e->held[env];
			sum.disabled[env] += e->disabled[env];
			sum.disabled_by_req[env] += e->disabled_by_req[env];
		}
	}
	if (!any)
		return g;
	for (int env = 0; env < 2; env++) {
		static const char pending[] =
		    "Deliveries due or waiting for their next attempt, by environment and "
		    "destination (postback URL or webhook endpoint; one waiting behind an earlier "
		    "one of its lane is not counted).";
		GAUGE(g, "pixrelay_deliveries_pending", pending, pb[env],
		      (double)sum.to_postback[env]);
		GAUGE(g, "pixrelay_deliveries_pending", pending, ep[env],
		      (double)sum.to_endpoint[env]);
	}
	for (int env = 0; env < 2; env++)
		GAUGE(g, "pixrelay_deliveries_held",
		      "Deliveries kept for disabled webhook endpoints, by environment (sent when "
		      "the endpoint is enabled again).",
		      en[env], (double)sum.held[env]);
	for (int env = 0; env < 2; env++) {
		static const char disabled[] =
		    "Webhook endpoints disabled, by environment and by whom (pixrelay: failing "
		    "or gone; request: the merchant).";
		GAUGE(g, "pixrelay_endpoints_disabled", disabled, bp[env],
		      (double)sum.disabled[env]);
		GAUGE(g, "pixrelay_endpoints_disabled", disabled, br[env],
		      (double)sum.disabled_by_req[env]);
	}
	return g;
}

static void scrape_done(struct scrape *sc)
{
	struct app *app = app_of(sc->req);
	struct dispatch_stats ds;
	unsigned long long hits, misses;
	struct rds_primary *prim = NULL;
	int nprim = primaries_of(app->rds, &prim);
	size_t n = 25 + (size_t)sc->nshards * 5 + (size_t)nprim * 2, len;
	struct metrics_gauge *gauges = mem_calloc(n, sizeof(*gauges)), *g = gauges;
	char(*labels)[48] = mem_calloc((size_t)sc->nshards * 4 + 1, sizeof(*labels));
	char(*plabels)[320] = mem_calloc((size_t)nprim + 1, sizeof(*plabels));
	uint64_t now = ids_now_ms();
	char *text;

	dispatch_stats(app->dispatch, &ds);
	cache_counts(app->cache, &hits, &misses);
	GAUGE(g, "pixrelay_http_connections", "Client connections open.", "",
	      http_connections(app->http));
	GAUGE(g, "pixrelay_http_requests_in_flight", "Requests read and not yet answered.", "",
	      http_inflight(app->http));
	GAUGE(g, "pixrelay_deliveries_in_flight", "Postback requests in flight in this process.",
	      "", ds.active);
	GAUGE(g, "pixrelay_deliveries_waiting",
	      "Postbacks leased by this process, waiting for a slot of their destination.", "",
	      ds.waiting);
	GAUGE(g, "pixrelay_destinations_paused",
	      "Destination hosts whose circuit is open (paused after timeouts).", "", ds.open);
	GAUGE(g, "pixrelay_cache_hits", "Keys and accounts found in the process's cache.", "",
	      (double)hits);
	GAUGE(g, "pixrelay_cache_misses", "Keys and accounts read from Redis.", "", (double)misses);
	for (int env = 0; env < 2; env++) {
		double age;
		if (bankrecon_age(app->bankrecon, (enum env)env, &age))
			GAUGE(g, "pixrelay_bank_reconciliation_age_seconds",
			      "Seconds since the last successful reconciliation of the bank "
			      "connection that waited longest, by environment (as this process's "
			      "last look saw it).",
			      env ? "env=\"production\"" : "env=\"sandbox\"", age);
	}
	GAUGE(g, "pixrelay_redis_up",
	      "1 when Redis answered this scrape for every shard, 0 when it did not.", "",
	      sc->failed ? 0 : 1);
	GAUGE(g, "pixrelay_redis_slots_served",
	      "Slots of the keyspace (of 16384) whose Redis primary is connected.", "",
	      rds_slots_served(app->rds));
	for (int i = 0; i < nprim; i++)
		primary_label(plabels[i], sizeof(plabels[i]), prim[i].name);
	for (int i = 0; i < nprim; i++)
		if (prim[i].replicas >= 0)
			GAUGE(g, "pixrelay_redis_replicas",
			      "Replicas connected to each Redis primary, as ROLE says (asked with "
			      "redis-wait-replicas set).",
			      plabels[i], prim[i].replicas);
	for (int i = 0; i < nprim; i++)
		if (prim[i].replicas >= 0)
			GAUGE(g, "pixrelay_redis_below_wait_replicas",
			      "1 when a Redis primary has fewer replicas than redis-wait-replicas: "
			      "writes to it are refused.",
			      plabels[i], prim[i].below);
	for (int st = 0; st < 3; st++)
		for (int i = 0; i < sc->nshards; i++) {
			static const char *const names[] = {"pending", "delivering", "dead"};
			const struct events_stats *e = &sc->stats[i];
			char *l = labels[st * sc->nshards + i];
			if (!sc->answered[i])
				continue;
			snprintf(l, 48, "shard=\"%d\",state=\"%s\"", i, names[st]);
			GAUGE(g, "pixrelay_events",
			      "Events in the delivery queues, by shard and state (delivered ones "
			      "are not counted).",
			      l,
			      (double)(st == 0	 ? e->pending
				       : st == 1 ? e->delivering
						 : e->dead));
		}
	for (int i = 0; i < sc->nshards; i++) {
		const struct events_stats *e = &sc->stats[i];
		char *l = labels[3 * sc->nshards + i];
		if (!sc->answered[i])
			continue;
		snprintf(l, 48, "shard=\"%d\"", i);
		GAUGE(g, "pixrelay_delivery_lag_seconds",
		      "How long the most overdue pending event of a shard has waited past its due "
		      "time (0 when none is overdue).",
		      l,
		      e->earliest_due_ms && (uint64_t)e->earliest_due_ms < now
			  ? (double)(now - (uint64_t)e->earliest_due_ms) / 1000.0
			  : 0);
	}
	g = env_gauges(sc, g);
	text = metrics_render(gauges, (size_t)(g - gauges), &len);
	http_reply_bytes(sc->req, 200, "text/plain; version=0.0.4; charset=utf-8", "no-store", text,
			 len);
	free(text);
	free(plabels);
	free(prim);
	free(labels);
	free(gauges);
	free(sc->answered);
	free(sc->stats);
	free(sc);
}

struct scrape_shard {
	struct scrape *sc;
	int shard;
};

static void on_shard_scraped(void *ud, int result, const struct events_stats *st, const char *err)
{
	struct scrape_shard *ss = ud;
	struct scrape *sc = ss->sc;

	if (result < 0) {
		sc->failed = 1;
	} else {
		sc->stats[ss->shard] = *st;
		sc->answered[ss->shard] = 1;
	}
	free(ss);
	if (--sc->left == 0)
		scrape_done(sc);
}

/* GET /metrics: the Prometheus text format (no key: serve it where only the
 * scraper reaches, see docs/metrics.md). */
void api_handle_metrics(struct http_req *req)
{
	struct app *app = app_of(req);
	struct scrape *sc = mem_new(struct scrape);

	sc->req = req;
	sc->nshards = (int)app->cfg->shards;
	sc->stats = mem_calloc((size_t)sc->nshards, sizeof(*sc->stats));
	sc->answered = mem_calloc((size_t)sc->nshards, 1);
	if (!rds_serving(app->rds)) {
		sc->failed = 1;
		scrape_done(sc);
		return;
	}
	/* one count more, held by this loop: an answer may come at once */
	sc->left = sc->nshards + 1;
	for (int i = 0; i < sc->nshards; i++) {
		struct scrape_shard *ss = mem_new(struct scrape_shard);
		ss->sc = sc;
		ss->shard = i;
		events_shard_stats(app->rds, app->cfg, i, on_shard_scraped, ss);
	}
	if (--sc->left == 0)
		scrape_done(sc);
}

void api_handle_readyz(struct http_req *req)
{
	struct app *app = app_of(req);
	int redis_ok = rds_ready(app->rds);
	int ready = redis_ok && !app->draining;
	struct rds_primary *prim = NULL;
	int nprim = primaries_of(app->rds, &prim);
	yajl_gen g = json_gen_new();
	size_t len;
	const char *s;

	json_open(g);
	json_str(g, "ready");
	json_bool(g, ready);
	json_str(g, "redis");
	json_str(g, redis_ok ? "ok" : rds_last_error(app->rds));
	json_str(g, "draining");
	json_bool(g, app->draining);
	json_str(g, "connections");
	json_int(g, http_connections(app->http));
	json_str(g, "inflight");
	json_int(g, http_inflight(app->http));
	/* a cluster with a primary missing serves the rest of the keyspace */
	json_str(g, "slotsServed");
	json_int(g, rds_slots_served(app->rds));
	json_str(g, "slotsTotal");
	json_int(g, RSLOT_COUNT);
	/* readiness does not depend on these: reads and the other primaries'
	 * writes go on */
	json_str(g, "belowWaitReplicas");
	json_open_array(g);
	for (int i = 0; i < nprim; i++) {
		if (!prim[i].below)
			continue;
		json_open(g);
		json_str(g, "primary");
		json_str(g, prim[i].name);
		json_str(g, "replicas");
		json_int(g, prim[i].replicas);
		json_close(g);
	}
	json_close_array(g);
	json_close(g);
	s = json_buf(g, &len);
	http_reply_raw(req, ready ? 200 : 503, s, len);
	yajl_gen_free(g);
	free(prim);
}
