/* server: `pixrelay serve` put together. The embedded Redis (locked,
 * started, and on first start given a sandbox key) or the given one; then,
 * on one event loop, the Redis clients (the API's, the dispatcher's own),
 * the cache, the ingest and bank queues, live streams, dispatcher and
 * janitor, the HTTP listeners with api.c's routes (the API, metrics-listen,
 * the bank door of bank-listen), the log's flush timer
 * and the signals: SIGTERM or SIGINT drains requests and deliveries for
 * shutdown-grace, then all is freed, Redis first. cli/cli_serve.c checks
 * the arguments before. */
#include "pixrelay/api/server.h"

#include "pixrelay/api/api.h"
#include "pixrelay/store/auth.h"
#include "pixrelay/redis/cache.h"
#include "pixrelay/api/evstream.h"
#include "pixrelay/http/http.h"
#include "pixrelay/store/ingest.h"
#include "pixrelay/store/banks_door.h"
#include "pixrelay/store/banks_receive.h"
#include "pixrelay/store/banks_recon.h"
#include "pixrelay/core/seal.h"
#include "pixrelay/relay/bankapi.h"
#include "pixrelay/relay/ping.h"
#include "pixrelay/store/keys.h"
#include "pixrelay/pix/keyspace.h"
#include "pixrelay/core/log.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/metrics.h"
#include "pixrelay/core/netaddr.h"
#include "pixrelay/core/unixid.h"
#include "pixrelay/redis/redis.h"
#include "pixrelay/redis/redisd.h"
#include "pixrelay/relay/bankrecon.h"
#include "pixrelay/relay/janitor.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/time.h>

struct server {
	struct app app;
	struct event *log_timer;  /* flushes the buffered log */
	struct rds *dispatch_rds; /* the dispatcher's own connection */
	struct janitor *janitor;  /* expiry and transfer recovery, next to the dispatcher */
	struct event *sigterm, *sigint, *drain_timer;
	struct timeval drain_start;
	struct http_route *public_routes;    /* with metrics-listen: the API without /metrics */
	struct seal_keyfile credentials_key; /* opens banks' API credentials */
	int exit_code;
};

/* The credentials key (docs/bank-api.md): none is fine (no bank connection has
 * API credentials yet, or this host is not trusted with them: their calls
 * then fail, said in `pixrelay bank show`); one made after the start (the
 * first `pixrelay bank credentials`) is taken when a call needs it
 * (seal_keyfile_get). But a key file that is there and unusable (readable
 * by others, malformed) stops the start. */
static int load_credentials_key(const struct config *cfg, struct seal_keyfile *k)
{
	char path[1024], err[512];

	if (cfg->credentials_key_file[0])
		snprintf(path, sizeof(path), "%s", cfg->credentials_key_file);
	else
		snprintf(path, sizeof(path), "%s/credentials.key", cfg->data_dir);
	seal_keyfile_init(k, path);
	if (seal_keyfile_load(k, err, sizeof(err)) < 0) {
		log_error("%s", err);
		return -1;
	}
	if (!k->loaded)
		log_info("no credentials key at %s: bank connections' API calls are off until it "
			 "is made",
			 k->path);
	return 0;
}

/* What the bank client saw of a connection, kept with the connection. */
static void on_bank_health(void *ud, const char *conn, const struct bankapi_state *st)
{
	struct server *s = ud;

	banks_note_api(s->app.rds, s->app.cfg, conn, st->token_ms, st->call_ms,
		       st->error[0] ? st->error : NULL, st->error_ms);
}

/* First start on a laptop: make the sandbox platform account and, when no key
 * exists yet, a sandbox key, printed once on stdout. */
static void bootstrap(const struct config *cfg, struct rds *c)
{
	char err[256], account[32], secret[AUTH_KEY_MAX], kall[256];
	struct auth_key key;
	redisReply *r = NULL;
	int created = 0;

	if (keys_platform_init(c, cfg->prefix, cfg->shards, ENV_SANDBOX, account, &created, err,
			       sizeof(err)) < 0) {
		log_error("bootstrap: %s", err);
		goto done;
	}
	ks_keys_all_key(kall, sizeof(kall), cfg->prefix);
	{
		const char *argv[] = {"ZCARD", kall};
		r = rds_call(c, 2, argv, NULL, err, sizeof(err));
	}
	if (!r || r->type != REDIS_REPLY_INTEGER || r->integer > 0)
		goto done;
	if (keys_create(c, cfg->prefix, ENV_SANDBOX, AUTH_ACCOUNT_KEY, account,
			"created at first start", secret, &key, err, sizeof(err)) != 0) {
		log_error("bootstrap: %s", err);
		goto done;
	}
	{
		char signing[128] = "", compat[128] = "", ingest[128] = "";
		keys_account_secrets(c, cfg->prefix, ENV_SANDBOX, account, signing, sizeof(signing),
				     compat, sizeof(compat), ingest, sizeof(ingest), err,
				     sizeof(err));
		mem_wipe(ingest, sizeof(ingest));
		printf("\npixrelay: first start. A sandbox API key was created for the sandbox "
		       "platform\naccount %s. It is shown only this once; keep it:\n\n    %s\n\n"
		       "Postbacks to your postbackUrl are signed (Standard Webhooks) with\n"
		       "    webhook signing secret: %s\n"
		       "and carry the header 'signature: %s'.\n"
		       "(pixrelay secrets --env sandbox shows them again.)\n\n"
		       "Try:  curl -H 'Authorization: Bearer %s' %s/me\n"
		       "More keys: pixrelay keys create --env sandbox --description TEXT\n\n",
		       account, secret, signing, compat, secret, cfg->base_url);
		mem_wipe(signing, sizeof(signing));
		mem_wipe(compat, sizeof(compat));
	}
	fflush(stdout);
	mem_wipe(secret, sizeof(secret));
done:
	freeReplyObject(r);
}

/* Without bank-listen, a connection whose bank authenticates by mutual TLS
 * would have every webhook refused (its certificate is believed only on the
 * bank door): -1, said, stops the start. A Redis that does not answer is
 * not checked (as the layout). */
static int check_bank_door(const struct config *cfg, struct rds *c)
{
	char err[512], id[BANKS_ID_MAX];
	enum env env;
	int rc;

	if (cfg->bank_listen[0])
		return 0;
	rc = banks_find_mtls(c, cfg->prefix, id, &env, err, sizeof(err));
	if (rc < 0)
		log_warn("bank connections not checked: %s", err);
	if (rc != 0)
		return 0;
	log_error("bank connection %s (%s) authenticates its bank by mutual TLS, and bank-listen "
		  "is not set: " BANKS_DOOR_HINT,
		  id, env_name(env));
	return -1;
}

/* The key layout of the Redis (keys_layout_check): a Redis holding data this
 * version does not read stops the start (-1); one that does not answer now is
 * checked by the next start or `pixrelay init` that reaches it, and meanwhile
 * read safely (the lease finds the previous layout's order lists by itself).
 * Then check_bank_door, the bank reconciliation's schedule of an earlier
 * version moved into the shards (banks_recon_move), and with `boot` the
 * first start's bootstrap, on the same connection. */
static int check_layout(const struct config *cfg, const struct rds_addr *addr, int boot)
{
	char err[512];
	struct rds *c = rds_open(addr, cfg->redis_timeout_ms, err, sizeof(err));
	int rc;

	if (!c) {
		if (boot)
			log_error("bootstrap: %s", err);
		log_warn("key layout not checked: %s", err);
		return 0;
	}
	rc = keys_layout_check(c, cfg->prefix, err, sizeof(err));
	if (rc == KEYS_REFUSED) {
		log_error("%s", err);
		rds_free(c);
		return -1;
	}
	if (rc != 0)
		log_warn("key layout not checked: %s", err);
	if (check_bank_door(cfg, c) < 0) {
		rds_free(c);
		return -1;
	}
	if (banks_recon_move(c, cfg->prefix, err, sizeof(err)) < 0)
		log_warn("bank reconciliation schedule not moved: %s", err);
	if (boot)
		bootstrap(cfg, c);
	rds_free(c);
	return 0;
}

static double elapsed_s(const struct timeval *since)
{
	struct timeval now;

	gettimeofday(&now, NULL);
	return (double)(now.tv_sec - since->tv_sec) + (double)(now.tv_usec - since->tv_usec) / 1e6;
}

static void on_drain_tick(evutil_socket_t fd, short what, void *arg)
{
	struct server *s = arg;
	unsigned left = http_inflight(s->app.http) + dispatch_inflight(s->app.dispatch) +
			(s->app.bank_http ? http_inflight(s->app.bank_http) : 0);

	if (left == 0 || elapsed_s(&s->drain_start) >= (double)s->app.cfg->shutdown_grace) {
		if (left)
			log_warn("shutdown: %u requests or deliveries still in flight after %ld s; "
				 "stopping anyway (their leases will run out)",
				 left, s->app.cfg->shutdown_grace);
		event_base_loopbreak(s->app.base);
		return;
	}
	{
		struct timeval tv = {0, 20000};
		evtimer_add(s->drain_timer, &tv);
	}
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct server *s = arg;
	struct timeval tv = {0, 0};

	if (s->app.draining) {
		log_warn("second signal: stopping now");
		event_base_loopbreak(s->app.base);
		return;
	}
	log_info("%s received: no new connections; finishing %u requests in flight",
		 sig == SIGTERM ? "SIGTERM" : "SIGINT", http_inflight(s->app.http));
	s->app.draining = 1;
	http_stop_accepting(s->app.http);
	if (s->app.bank_http)
		http_stop_accepting(s->app.bank_http);
	dispatch_stop(s->app.dispatch);
	janitor_stop(s->janitor);
	bankrecon_stop(s->app.bankrecon);
	evstream_stop(s->app.streams); /* their clients resume on another process */
	gettimeofday(&s->drain_start, NULL);
	evtimer_add(s->drain_timer, &tv);
}

/* Every answered request, for /metrics. */
static void on_observed(void *arg, const struct http_observation *o)
{
	metrics_http(o->route ? o->route : "", http_method_name(o->method), o->status,
		     (double)o->duration_us / 1e6);
}

/* The bank door (bank-listen, "unix:PATH" as cli_serve checked): the bank
 * webhook routes on a Unix socket whose peers are known by uid. -1 after
 * logging why it cannot be opened. */
static int open_bank_door(struct app *app)
{
	const struct config *cfg = app->cfg;
	struct unixid_uids proxies;
	struct http_unix_opts opts = {cfg->bank_listen_group, &proxies};
	char err[512];

	if (strncmp(cfg->bank_listen, "unix:", 5) != 0) {
		log_error("bank-listen: expected unix:PATH, got '%s'", cfg->bank_listen);
		return -1;
	}
	if (unixid_parse_uids(cfg->bank_proxy_uids, &proxies, err, sizeof(err)) < 0) {
		log_error("bank-proxy-uids: %s", err);
		return -1;
	}
	app->bank_http = http_new_unix(app->base, cfg, cfg->bank_listen + 5, &opts, api_bank_routes,
				       api_bank_nroutes, api_authenticate, app, err, sizeof(err));
	if (!app->bank_http) {
		log_error("bank-listen: %s", err);
		return -1;
	}
	http_set_observer(app->bank_http, on_observed, NULL);
	log_info("bank webhooks on %s (mode 0660, group %s; X-Client-Cert believed from root%s%s)",
		 cfg->bank_listen,
		 cfg->bank_listen_group[0] ? cfg->bank_listen_group : "of this process",
		 cfg->bank_proxy_uids[0] ? " and " : "", cfg->bank_proxy_uids);
	return 0;
}

static void on_log_timer(evutil_socket_t fd, short what, void *arg)
{
	log_flush();
}

static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int server_run(struct config *cfg)
{
	struct server s;
	struct rds_addr addr;
	struct redisd *redisd = NULL;
	char err[512];
	int lock_fd = -1, rc;

	memset(&s, 0, sizeof(s));
	s.exit_code = 1;
	s.app.cfg = cfg;
	signal(SIGPIPE, SIG_IGN);
	raise_fd_limit();

	if (!*cfg->redis) {
		rc = redisd_lock(cfg->data_dir, &lock_fd, err, sizeof(err));
		if (rc != 0) {
			if (rc == REDISD_IN_USE)
				log_error("data directory %s is in use by another pixrelay serve; "
					  "give this one another --data-dir, or share a Redis with "
					  "--redis",
					  cfg->data_dir);
			else
				log_error("%s", err);
			return 1;
		}
		redisd = redisd_start(cfg->redis_server, cfg->data_dir, lock_fd, 10000, err,
				      sizeof(err));
		if (!redisd) {
			log_error("embedded redis: %s", err);
			return 1;
		}
		memset(&addr, 0, sizeof(addr));
		redisd_socket_path(cfg->data_dir, addr.path, sizeof(addr.path));
		s.app.embedded_redis = 1;
		if (check_layout(cfg, &addr, cfg->bootstrap) < 0) {
			redisd_stop(redisd);
			return 1;
		}
	} else if (rds_parse_addr(cfg->redis, &addr) < 0) {
		/* the value is not echoed: it may hold a password */
		log_error("redis: cannot parse the setting (expected "
			  "redis://[:password@]host[:port][/db], "
			  "unix:///path[?db=N] or /path)");
		return 1;
	} else if (rds_addr_set_sentinel_password(&addr, cfg->redis_sentinel_password) < 0) {
		log_error("redis-sentinel-password: longer than 255 bytes");
		return 1;
	} else if (check_layout(cfg, &addr, 0) < 0) {
		return 1;
	}

	if (load_credentials_key(cfg, &s.credentials_key) < 0)
		return 1;
	s.app.credentials_key = &s.credentials_key;
	s.app.base = event_base_new();
	if (!s.app.base)
		mem_oom(__FILE__, __LINE__);
	/* two priorities: cache invalidations (0) before everything else (1) */
	event_base_priority_init(s.app.base, 2);
	if (redisd)
		redisd_supervise(redisd, s.app.base);
	s.app.rds = rds_new(s.app.base, &addr, cfg->redis_timeout_ms);
	rds_set_wait(s.app.rds, (int)cfg->redis_wait_replicas);
	rds_watch_replicas(s.app.rds); /* for /readyz, /metrics and the log */
	{
		char channel[256];
		ks_invalidation_channel(channel, sizeof(channel), cfg->prefix);
		s.app.cache = cache_new(s.app.base, &addr, cfg->redis_timeout_ms, channel);
	}
	s.app.ingest = ingest_queue_new(s.app.base, s.app.rds, cfg);
	s.app.banks = banks_queue_new(s.app.base, s.app.rds, cfg);
	s.app.bankapi = bankapi_new(s.app.base, cfg->bank_timeout_ms);
	s.app.pings = ping_pool_new(s.app.base, cfg);
	bankapi_on_health(s.app.bankapi, on_bank_health, &s);
	s.app.bankcharges =
	    (struct bankcharges){s.app.rds, s.app.cache, cfg, s.app.bankapi, s.app.credentials_key};
	s.app.streams = evstream_new(s.app.base, s.app.rds, &addr, cfg);
	/* a revoked key's streams end with it */
	cache_watch(s.app.cache, evstream_announcement, s.app.streams);
	if (cfg->dispatch) {
		/* its own connections: delivery bookkeeping never queues in front
		 * of the API's requests */
		s.dispatch_rds = rds_new(s.app.base, &addr, cfg->redis_timeout_ms);
		rds_set_wait(s.dispatch_rds, (int)cfg->redis_wait_replicas);
		s.app.dispatch = dispatch_new(s.app.base, s.dispatch_rds, cfg);
		if (!s.app.dispatch)
			goto done;
		s.janitor = janitor_new(s.app.base, s.dispatch_rds, cfg, s.app.dispatch);
		s.app.bankrecon =
		    bankrecon_new(s.app.base, s.dispatch_rds, cfg, s.app.bankapi,
				  s.app.credentials_key, s.app.banks, s.app.dispatch, 1);
	}
	{
		/* with a metrics listener, /metrics is unknown to the public one
		 * (404 for every method, as any path it does not serve) */
		const struct http_route *routes = api_routes;
		size_t n = api_nroutes;
		if (cfg->metrics_listen[0]) {
			s.public_routes = mem_calloc(api_nroutes, sizeof(*s.public_routes));
			n = 0;
			for (size_t i = 0; i < api_nroutes; i++)
				if (strcmp(api_routes[i].pattern, "/metrics") != 0)
					s.public_routes[n++] = api_routes[i];
			routes = s.public_routes;
		}
		s.app.http =
		    http_new(s.app.base, cfg, cfg->listen, routes, n, api_authenticate, &s.app);
	}
	if (!s.app.http)
		goto done;
	http_set_observer(s.app.http, on_observed, NULL);
	if (cfg->metrics_listen[0]) {
		s.app.metrics_http =
		    http_new(s.app.base, cfg, cfg->metrics_listen, api_metrics_routes,
			     api_metrics_nroutes, api_authenticate, &s.app);
		if (!s.app.metrics_http)
			goto done;
		http_set_observer(s.app.metrics_http, on_observed, NULL);
		log_info("metrics on %s (port %d)", cfg->metrics_listen,
			 http_port(s.app.metrics_http));
	}
	if (cfg->bank_listen[0] && open_bank_door(&s.app) < 0)
		goto done;
	if (cfg->base_url_derived) {
		char host[256];
		int port = 0;
		if (netaddr_split_hostport(cfg->listen, host, sizeof(host), &port) == 0 &&
		    port == 0) {
			free(cfg->base_url);
			cfg->base_url =
			    mem_printf(strchr(host, ':') ? "http://[%s]:%d/v1" : "http://%s:%d/v1",
				       host, http_port(s.app.http));
		}
	}
	{
		struct timeval tv = {0, 100000};
		log_buffered();
		s.log_timer = event_new(s.app.base, -1, EV_PERSIST, on_log_timer, NULL);
		event_add(s.log_timer, &tv);
	}
	s.sigterm = evsignal_new(s.app.base, SIGTERM, on_signal, &s);
	s.sigint = evsignal_new(s.app.base, SIGINT, on_signal, &s);
	s.drain_timer = evtimer_new(s.app.base, on_drain_tick, &s);
	evsignal_add(s.sigterm, NULL);
	evsignal_add(s.sigint, NULL);
	log_info("pixrelay %s listening on %s (port %d), base URL %s, redis %s", PIXRELAY_VERSION,
		 cfg->listen, http_port(s.app.http), cfg->base_url,
		 redisd		  ? "embedded"
		 : addr.master[0] ? addr.master
		 : addr.path[0]	  ? addr.path
				  : addr.host);
	event_base_dispatch(s.app.base);
	s.exit_code = 0;
	log_info("pixrelay stopped");
done:
	/* Redis first: callbacks still pending answer their requests (503) and
	 * record nothing for deliveries (their leases run out) while the HTTP
	 * server, the dispatcher and so every request still exist */
	bankrecon_free(s.app.bankrecon); /* it goes with its last run's answer */
	ingest_queue_free(s.app.ingest);
	banks_queue_free(s.app.banks);
	bankapi_free(s.app.bankapi);
	ping_pool_free(s.app.pings); /* its pings answer their requests */
	rds_free(s.app.rds);
	cache_watch(s.app.cache, NULL, NULL);
	evstream_free(s.app.streams);
	rds_free(s.dispatch_rds);
	cache_free(s.app.cache);
	janitor_free(s.janitor);
	dispatch_free(s.app.dispatch);
	http_free(s.app.http);
	http_free(s.app.metrics_http);
	http_free(s.app.bank_http);
	free(s.public_routes);
	if (s.sigterm)
		event_free(s.sigterm);
	if (s.sigint)
		event_free(s.sigint);
	if (s.drain_timer)
		event_free(s.drain_timer);
	if (s.log_timer)
		event_free(s.log_timer);
	log_flush();
	redisd_stop(redisd);
	event_base_free(s.app.base);
	seal_keyfile_wipe(&s.credentials_key);
	return s.exit_code;
}
