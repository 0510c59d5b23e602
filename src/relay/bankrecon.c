/* bankrecon: one process's share of the reconciliation of bank
 * connections: a timer claims the connections that are due (the schedule
 * and each run's record are store/banks_recon.c's), and each claimed one
 * is a run: its connection read, its credentials opened, GET /pix of its
 * window page by page through bankapi.c, each page written by
 * banks_receive as the webhook's Pix are, the window recorded as read once
 * its last page is written, then its pending refunds asked about, then its
 * result recorded and its next run scheduled. A run asked for with a start
 * (`bank reconcile --since`) reads back from now in windows of a day, the
 * newest first, as far as the bank answers.
 */
#include "pixrelay/relay/bankrecon.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/log.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/metrics.h"
#include "pixrelay/core/timefmt.h"
#include "pixrelay/pix/bankcreds.h"
#include "pixrelay/pix/bankday.h"
#include "pixrelay/pix/bankpix.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TICK_MS 1000		      /* how often due connections are claimed */
#define RUNS_MAX 4		      /* runs of one process at once */
#define PAGE_ITEMS 1000		      /* Pix per page asked of the bank (the most it must give) */
#define PAGES_MAX 1000		      /* pages of one window: a million Pix */
#define WINDOW_MAX_MS BANKDAY_MS      /* one window at most */
#define OVERLAP_MS BANKDAY_OVERLAP_MS /* each window starts this long before the last end */
#define FIRST_BEFORE_MS BANKDAY_FIRST_BEFORE_MS /* the first, before the credentials */
#define BACKOFF_MAX_MS (3600LL * 1000)		/* the longest delay after failures */
#define REFUNDS_PER_RUN 16			/* pending refunds asked about per run */

/* How long a claim, or a renewal, keeps other processes off a connection:
 * what a live run may spend between two renewals. That is at most four
 * calls to the bank (a token and the call, and after a 401 a token and the
 * call again), each ended by bank-timeout-ms, and four calls to Redis (the
 * claim's answer or the renewal, the connection or the list of refunds,
 * the page's write, the next renewal), each ended by redis-timeout-ms: a
 * minute by default. A process that dies mid-run is taken over that long
 * after its last renewal; a lease that runs out under a live run only lets
 * a second run start (every write is taken once), never a second event. */
static long lease_ms(const struct config *cfg)
{
	return 4 * cfg->bank_timeout_ms + 4 * cfg->redis_timeout_ms;
}

struct bankrecon {
	struct event_base *base;
	struct rds *r;
	const struct config *cfg;
	struct bankapi *api;
	struct seal_keyfile *keys;
	struct banks_queue *q;
	struct dispatch *d;
	struct event *tick;
	int stopped, freed;
	int once; /* only bankrecon_run: no timer, no claims */
	unsigned running;
	int claiming[2];
	int known[2];		   /* a claim answered with connections */
	long long oldest_ok_ms[2]; /* what the last claim of each env saw */
};

/* One connection's reconciliation. */
struct run {
	struct bankrecon *rc;
	enum env env;
	char id[BANKS_ID_MAX];
	struct banks_conn conn; /* id, account, env, key: what banks_receive needs */
	struct bank_creds creds;
	long long from_ms, to_ms, lease_ms; /* the span asked for */
	long long win_from, win_to;	    /* the window being read */
	long long base_ms;		    /* the reconciled instant it may move on from */
	long long read_from;		    /* windows read so far reach back to here (0: none) */
	long windows;			    /* windows read whole */
	int reading;			    /* reading windows (not refunds) */
	long page, pages;
	struct banks_recon_stats stats;
	/* pending refunds: "<e2e> <refund id>" */
	char (*refunds)[96];
	size_t nrefunds, refund;
	int refund_final; /* the one asked about is settled at the bank */
	/* a run asked for (bankrecon_run): its window, and who waits */
	long long since_ms;
	store_fn done_cb;
	void *done_ud;
	char why[512];
	char stopped[512]; /* a run asked for that stopped short of its start: why */
};

static void run_free(struct run *u)
{
	struct bankrecon *rc = u->rc;

	bank_creds_wipe(&u->creds);
	banks_conn_deinit(&u->conn);
	free(u->refunds);
	free(u);
	rc->running--;
	if (rc->freed && rc->running == 0) {
		event_free(rc->tick);
		free(rc);
	}
}

/* The run is over (its record written, or abandoned): "ok", "failed" or
 * NULL (abandoned: its lease runs out). */
static void run_end(struct run *u, const char *result)
{
	if (result)
		metrics_bank_reconciliation(result);
	run_free(u);
}

static int gone(struct run *u)
{
	if (!u->rc->stopped)
		return 0;
	run_end(u, NULL);
	return 1;
}

/* ---- the end of a run ---- */

static void on_rescheduled(void *ud, int result, const char *json, const char *err)
{
	struct run *u = ud;

	(void)json;
	if (result < 0)
		log_warn("bank connection %s: reconciliation: could not schedule the next one: %s",
			 u->id, err ? err : "redis");
	run_end(u, u->stats.upto_ms ? "ok" : "failed");
}

static void on_done_failed(void *ud, int result, const char *json, const char *err)
{
	struct run *u = ud;
	long long delay, base = u->rc->cfg->bank_reconcile_interval * 1000LL;

	(void)json;
	if (gone(u))
		return;
	if (result < 0) {
		if (err)
			log_warn("bank connection %s: reconciliation: %s", u->id, err);
		if (!err) /* the connection is gone */
			banks_recon_drop(u->rc->r, u->rc->cfg, u->env, u->id, NULL, NULL);
		run_end(u, "failed");
		return;
	}
	if (u->done_cb) {
		u->done_cb(u->done_ud, -1, NULL, u->why);
		run_end(u, "failed");
		return;
	}
	/* 30 s (the interval when shorter) x 2^(failures-1), at most an hour,
	 * less a random tenth: a bank down briefly, or a host that had no key
	 * yet, is asked again soon */
	delay = base < 5000 ? 5000 : base > 30000 ? 30000 : base;
	for (int i = 1; i < result && delay < BACKOFF_MAX_MS; i++)
		delay *= 2;
	if (delay > BACKOFF_MAX_MS)
		delay = BACKOFF_MAX_MS;
	{
		uint32_t rnd;

		ids_random(&rnd, sizeof(rnd));
		delay -= (long long)(rnd % (uint32_t)(delay / 10 + 1));
	}
	banks_recon_next(u->rc->r, u->rc->cfg, u->env, u->id, (long long)ids_now_ms() + delay, 0,
			 on_rescheduled, u);
}

static void succeed(struct run *u);

/* The run failed: why, in the connection's record (never a secret), and
 * the next one later. A run asked for that read windows already stops
 * there instead, and succeeds with what it read. */
static void fail(struct run *u, const char *why)
{
	if (u->since_ms && u->reading && u->windows > 0) {
		/* a bank that refuses an older range (or fails on one) stops the
		 * backfill where it got: what was read is kept and said */
		snprintf(u->stopped, sizeof(u->stopped), "%s", why);
		log_warn("bank connection %s: reconciliation stopped reading back at %lld: %s",
			 u->id, u->read_from, why);
		u->reading = 0;
		succeed(u);
		return;
	}
	u->stats.upto_ms = 0;
	snprintf(u->why, sizeof(u->why), "%s", why);
	log_warn("bank connection %s: reconciliation failed: %s", u->id, why);
	banks_recon_done(u->rc->r, u->rc->cfg, u->id, NULL, why, on_done_failed, u);
}

/* What a run asked for found (bankrecon_run's answer). */
static char *run_json(const struct run *u)
{
	yajl_gen g = json_gen_new();
	char from[32], to[32], back[32], *out;
	const char *buf;
	size_t len;

	timefmt_rfc3339(from, (uint64_t)u->from_ms);
	timefmt_rfc3339(to, (uint64_t)u->to_ms);
	timefmt_rfc3339(back, (uint64_t)u->read_from);
	json_open(g);
	json_str(g, "connection");
	json_str(g, u->id);
	json_str(g, "from");
	json_str(g, from);
	json_str(g, "to");
	json_str(g, to);
	json_str(g, "readFrom");
	json_str_or_null(g, u->windows ? back : NULL);
	json_str(g, "windows");
	json_int(g, u->windows);
	json_str(g, "stopped");
	json_str_or_null(g, u->stopped[0] ? u->stopped : NULL);
	json_str(g, "pages");
	json_int(g, u->stats.pages);
	json_str(g, "listed");
	json_int(g, u->stats.listed);
	json_str(g, "new");
	json_int(g, u->stats.fresh);
	json_str(g, "refused");
	json_int(g, u->stats.refused);
	json_str(g, "refundsAsked");
	json_int(g, u->stats.refunds);
	json_str(g, "reconciledUntil");
	json_str_or_null(g, u->stats.upto_ms ? to : NULL);
	json_close(g);
	buf = json_buf(g, &len);
	out = mem_strndup(buf, len);
	yajl_gen_free(g);
	return out;
}

static void on_done_ok(void *ud, int result, const char *json, const char *err)
{
	struct run *u = ud;
	long long now = (long long)ids_now_ms(), next;

	(void)json;
	if (gone(u))
		return;
	if (result < 0) {
		if (!err)
			banks_recon_drop(u->rc->r, u->rc->cfg, u->env, u->id, NULL, NULL);
		else
			log_warn("bank connection %s: reconciliation: %s", u->id, err);
		run_end(u, err ? "failed" : "ok");
		return;
	}
	if (u->done_cb) {
		char *out = run_json(u);

		u->done_cb(u->done_ud, 0, out, NULL);
		free(out);
		run_end(u, "ok");
		return;
	}
	/* a window that stopped short of now (a long absence): the next at once */
	next =
	    u->to_ms < now - OVERLAP_MS ? now : now + u->rc->cfg->bank_reconcile_interval * 1000LL;
	banks_recon_next(u->rc->r, u->rc->cfg, u->env, u->id, next, 1, on_rescheduled, u);
}

static void succeed(struct run *u)
{
	/* the windows read reach back to the reconciled instant: it moves */
	u->stats.upto_ms = u->read_from && u->read_from <= u->base_ms ? u->to_ms : 0;
	if (u->stats.fresh)
		log_info("bank connection %s: reconciliation took %ld Pix its webhook had not "
			 "brought",
			 u->id, u->stats.fresh);
	banks_recon_done(u->rc->r, u->rc->cfg, u->id, &u->stats, NULL, on_done_ok, u);
}

/* The lease again, for the calls to come: a live run renews it before each
 * step that asks the bank, so only a run whose process died loses it. */
static void renew(struct run *u)
{
	banks_recon_next(u->rc->r, u->rc->cfg, u->env, u->id, (long long)ids_now_ms() + u->lease_ms,
			 0, NULL, NULL);
}

/* ---- pending refunds ---- */

static void next_refund(struct run *u);

static void on_refund_settled(void *ud, int result, const char *json, const char *err)
{
	struct run *u = ud;

	(void)result, (void)json, (void)err;
	if (gone(u))
		return;
	u->refund++;
	next_refund(u);
}

/* "<e2e> <refund id>" of the refund being asked about, split. */
static void refund_parts(const struct run *u, char e2e[40], char rid[40])
{
	const char *s = u->refunds[u->refund], *sp = strchr(s, ' ');
	size_t n = sp ? (size_t)(sp - s) : strlen(s);

	snprintf(e2e, 40, "%.*s", (int)(n < 39 ? n : 39), s);
	snprintf(rid, 40, "%s", sp ? sp + 1 : "");
}

static void on_refund_taken(void *ud, int result, const char *json, const char *err)
{
	struct run *u = ud;
	char e2e[40], rid[40];

	(void)json;
	if (gone(u))
		return;
	if (result < 0) {
		fail(u, err ? err : "redis");
		return;
	}
	dispatch_kick(u->rc->d, u->conn.account);
	if (!u->refund_final) {
		u->refund++;
		next_refund(u);
		return;
	}
	refund_parts(u, e2e, rid);
	banks_refund_settled(u->rc->r, u->rc->cfg, u->id, e2e, rid, on_refund_settled, u);
}

static void on_refund_pix(void *ud, long status, const char *body, const char *err)
{
	struct run *u = ud;
	struct bankpix_batch b = {0};
	char e2e[40], rid[40], perr[BANKPIX_ERR_MAX], why[512];
	char *wrapped;

	if (gone(u))
		return;
	refund_parts(u, e2e, rid);
	if (status == 404) {
		/* the bank knows no such Pix: nothing will ever settle */
		log_warn("bank connection %s: the bank knows no Pix %s: its refund %s is no longer "
			 "asked about",
			 u->id, e2e, rid);
		u->refund_final = 1;
		on_refund_taken(u, 0, NULL, NULL);
		return;
	}
	if (status == 0 || status >= 500 || status == 429) {
		snprintf(why, sizeof(why), "GET /pix/%s: %s", e2e,
			 err ? err : "the bank is unavailable");
		fail(u, why);
		return;
	}
	if (status != 200 || !body) {
		bankapi_refusal(why, sizeof(why), "Pix query", status, body);
		fail(u, why);
		return;
	}
	wrapped = mem_printf("{\"pix\":[%s]}", body);
	if (bankpix_parse(wrapped, strlen(wrapped), &b, perr, sizeof(perr)) != BANKPIX_OK ||
	    b.n != 1 || strcmp(b.items[0].e2e, e2e) != 0) {
		free(wrapped);
		bankpix_batch_deinit(&b);
		snprintf(why, sizeof(why), "GET /pix/%s: the bank's answer is not that Pix", e2e);
		fail(u, why);
		return;
	}
	free(wrapped);
	u->refund_final = 0;
	for (size_t i = 0; i < b.items[0].nrefunds; i++)
		if (strcmp(b.items[0].refunds[i].id, rid) == 0 &&
		    b.items[0].refunds[i].status != BANKPIX_EM_PROCESSAMENTO)
			u->refund_final = 1;
	banks_receive(u->rc->q, &u->conn, "reconciliation", &b, on_refund_taken, u);
}

static void next_refund(struct run *u)
{
	char e2e[40], rid[40], *path;

	if (u->refund >= u->nrefunds) {
		succeed(u);
		return;
	}
	u->stats.refunds++;
	renew(u);
	refund_parts(u, e2e, rid);
	path = mem_printf("/pix/%s", e2e);
	bankapi_call(u->rc->api, &u->creds, "GET", path, NULL, on_refund_pix, u);
	free(path);
}

static void on_pending(void *ud, const char *err, long long oldest, const char *const *ids,
		       size_t n)
{
	struct run *u = ud;

	(void)oldest;
	if (gone(u))
		return;
	if (err) {
		fail(u, err);
		return;
	}
	u->refunds = n ? mem_calloc(n, sizeof(*u->refunds)) : NULL;
	for (size_t i = 0; i < n; i++)
		snprintf(u->refunds[u->nrefunds++], sizeof(*u->refunds), "%s", ids[i]);
	next_refund(u);
}

/* ---- the window, page by page ---- */

static void ask_page(struct run *u);

/* The window was read whole and recorded: the next one back (a run asked
 * for with a start), or the pending refunds. */
static void on_window_read(void *ud, int result, const char *json, const char *err)
{
	struct run *u = ud;

	(void)json;
	if (gone(u))
		return;
	if (result < 0 && err) {
		fail(u, err);
		return;
	}
	/* result -1 without err: the connection is gone; its record says so */
	u->windows++;
	u->read_from = u->win_from;
	if (u->since_ms && u->win_from > u->from_ms) {
		u->win_to = u->win_from;
		u->win_from =
		    u->win_to - WINDOW_MAX_MS > u->from_ms ? u->win_to - WINDOW_MAX_MS : u->from_ms;
		u->page = u->pages = 0;
		renew(u);
		ask_page(u);
		return;
	}
	u->reading = 0;
	banks_refunds_pending(u->rc->r, u->rc->cfg, u->id, REFUNDS_PER_RUN, on_pending, u);
}

static void on_page_taken(void *ud, int result, const char *json, const char *err)
{
	struct run *u = ud;
	yajl_val v = NULL;
	int64_t accepted = 0;
	char perr[64];

	if (gone(u))
		return;
	if (result < 0) {
		fail(u, err ? err : "redis");
		return;
	}
	if (json && json_parse_object(json, strlen(json), &v, perr, sizeof(perr)) == 0)
		json_is_int64(json_get(v, "accepted"), &accepted);
	yajl_tree_free(v);
	u->stats.fresh += (long)accepted;
	if (accepted)
		dispatch_kick(u->rc->d, u->conn.account);
	u->stats.pages++;
	if (++u->page < u->pages) {
		renew(u);
		ask_page(u);
		return;
	}
	banks_recon_read(u->rc->r, u->rc->cfg, u->id, u->win_from, u->win_to, on_window_read, u);
}

static void on_page(void *ud, long status, const char *body, const char *err)
{
	struct run *u = ud;
	struct bankpix_batch b = {0};
	char why[512], perr[BANKPIX_ERR_MAX];
	long pages = 0;

	if (gone(u))
		return;
	if (status == 0 || status >= 500 || status == 429) {
		snprintf(why, sizeof(why), "GET /pix: %s",
			 err	  ? err
			 : status ? "the bank is unavailable"
				  : "no answer");
		if (status >= 500 || status == 429)
			snprintf(why, sizeof(why), "GET /pix: the bank answered HTTP %ld", status);
		fail(u, why);
		return;
	}
	if (status != 200 || !body) {
		bankapi_refusal(why, sizeof(why), "list of Pix", status, body);
		fail(u, why);
		return;
	}
	if (bankpix_parse_page(body, strlen(body), &b, &pages, perr, sizeof(perr)) != BANKPIX_OK) {
		snprintf(why, sizeof(why), "GET /pix: the bank's answer: %s", perr);
		fail(u, why);
		return;
	}
	/* a list that grows while it is paged has more pages than its first
	 * said: every page's count is believed, the largest kept */
	if (u->page == 0 || pages > u->pages)
		u->pages = pages;
	if (u->pages > PAGES_MAX) {
		bankpix_batch_deinit(&b);
		snprintf(why, sizeof(why), "GET /pix: %ld pages in one window, more than %d",
			 u->pages, PAGES_MAX);
		fail(u, why);
		return;
	}
	bankpix_batch_keep_chave(&b, u->conn.pix_key);
	u->stats.listed += (long)(b.n + b.nrefused);
	u->stats.refused += (long)b.nrefused;
	banks_receive(u->rc->q, &u->conn, "reconciliation", &b, on_page_taken, u);
}

static void ask_page(struct run *u)
{
	char from[32], to[32], *path;

	timefmt_rfc3339(from, (uint64_t)u->win_from);
	timefmt_rfc3339(to, (uint64_t)u->win_to);
	path = mem_printf("/pix?inicio=%s&fim=%s&paginacao.paginaAtual=%ld"
			  "&paginacao.itensPorPagina=%d",
			  from, to, u->page, PAGE_ITEMS);
	bankapi_call(u->rc->api, &u->creds, "GET", path, NULL, on_page, u);
	free(path);
}

/* ---- the start of a run ---- */

static void on_conn(void *ud, int result, const struct banks_conn *c, const char *err)
{
	struct run *u = ud;
	long long now = (long long)ids_now_ms(), base;
	const struct seal_key *key;
	char why[256];

	if (gone(u))
		return;
	if (result < 0) {
		/* Redis: the lease runs out and the run is tried again */
		log_warn("bank connection %s: reconciliation: %s", u->id, err ? err : "redis");
		if (u->done_cb)
			u->done_cb(u->done_ud, -1, NULL, err ? err : "redis");
		run_end(u, NULL);
		return;
	}
	if (result != 0 || c->env != u->env || !c->api.api_url) {
		/* disconnected, or its credentials gone: nothing to reconcile */
		if (u->done_cb)
			u->done_cb(u->done_ud,
				   result != 0 || c->env != u->env ? BANKS_NOT_FOUND
								   : BANKRECON_NO_API,
				   NULL, NULL);
		else
			banks_recon_drop(u->rc->r, u->rc->cfg, u->env, u->id, NULL, NULL);
		run_end(u, NULL);
		return;
	}
	if (!(key = seal_keyfile_get(u->rc->keys))) {
		fail(u, "no credentials key on this host: set credentials-key-file");
		return;
	}
	if (banks_open_credentials(c, key, &u->creds, why, sizeof(why)) != 0) {
		fail(u, why);
		return;
	}
	snprintf(u->conn.id, sizeof(u->conn.id), "%s", c->id);
	snprintf(u->conn.account, sizeof(u->conn.account), "%s", c->account);
	u->conn.env = c->env;
	u->conn.auth = c->auth;
	u->conn.pix_key = mem_strdup(c->pix_key);
	/* from a little before the last end (or the first credentials), at
	 * most a day at a time */
	base = c->rec_at_ms ? c->rec_at_ms
			    : (c->api_at_ms ? c->api_at_ms : c->created_ms) - FIRST_BEFORE_MS;
	if (u->since_ms) {
		/* asked for: from then to now, whatever was reconciled, the
		 * newest day first; no further back than the Pix are
		 * remembered (older ones would be taken again) */
		long long oldest = now - u->rc->cfg->event_retention_days * 86400000LL;

		u->from_ms = u->since_ms > oldest ? u->since_ms : oldest;
		u->to_ms = now;
		u->base_ms = base;
		u->win_to = now;
		u->win_from = now - WINDOW_MAX_MS > u->from_ms ? now - WINDOW_MAX_MS : u->from_ms;
	} else {
		u->from_ms = base - (c->rec_at_ms ? OVERLAP_MS : 0);
		u->to_ms = base + WINDOW_MAX_MS < now ? base + WINDOW_MAX_MS : now;
		if (u->to_ms <= u->from_ms)
			u->from_ms = u->to_ms - OVERLAP_MS;
		u->base_ms = u->from_ms;
		u->win_from = u->from_ms;
		u->win_to = u->to_ms;
	}
	if (u->win_to <= u->win_from)
		u->win_from = u->from_ms = u->win_to - OVERLAP_MS;
	u->reading = 1;
	ask_page(u);
}

static struct run *start_run(struct bankrecon *rc, enum env env, const char *id)
{
	struct run *u = mem_new(struct run);

	u->rc = rc;
	u->env = env;
	snprintf(u->id, sizeof(u->id), "%s", id);
	u->lease_ms = lease_ms(rc->cfg);
	rc->running++;
	return u;
}

static void go(struct run *u)
{
	banks_get(u->rc->r, u->rc->cfg, u->id, on_conn, u);
}

void bankrecon_run(struct bankrecon *rc, enum env env, const char *id, long long since_ms,
		   store_fn cb, void *ud)
{
	struct run *u = start_run(rc, env, id);

	u->since_ms = since_ms;
	u->done_cb = cb;
	u->done_ud = ud;
	go(u);
}

/* ---- the timer ---- */

struct claim {
	struct bankrecon *rc;
	enum env env;
};

static void on_claimed(void *ud, const char *err, long long oldest, const char *const *ids,
		       size_t n)
{
	struct claim *c = ud;
	struct bankrecon *rc = c->rc;
	enum env env = c->env;

	free(c);
	rc->claiming[env] = 0;
	rc->running--; /* the claim counted as a run while it was out */
	if (err) {
		log_warn("bank reconciliation: %s", err);
	} else {
		rc->known[env] = oldest > 0;
		rc->oldest_ok_ms[env] = oldest;
		for (size_t i = 0; i < n; i++) {
			if (rc->stopped) {
				/* leased but not run: their leases run out */
				break;
			}
			go(start_run(rc, env, ids[i]));
		}
	}
	if (rc->freed && rc->running == 0) {
		event_free(rc->tick);
		free(rc);
	}
}

static void on_tick(evutil_socket_t fd, short kind, void *arg)
{
	struct bankrecon *rc = arg;

	(void)fd, (void)kind;
	if (rc->stopped || !rds_ready(rc->r))
		return;
	for (int env = 0; env < 2; env++) {
		struct claim *c;
		unsigned most;

		if (rc->claiming[env])
			continue;
		most = rc->running < RUNS_MAX ? RUNS_MAX - rc->running : 0;
		c = mem_new(struct claim);
		c->rc = rc;
		c->env = (enum env)env;
		rc->claiming[env] = 1;
		rc->running++;
		/* with no room, the claim still reads the oldest success */
		banks_recon_claim(rc->r, rc->cfg, (enum env)env, most, lease_ms(rc->cfg),
				  on_claimed, c);
	}
}

struct bankrecon *bankrecon_new(struct event_base *base, struct rds *r, const struct config *cfg,
				struct bankapi *api, struct seal_keyfile *keys,
				struct banks_queue *q, struct dispatch *d, int claims)
{
	struct bankrecon *rc = mem_new(struct bankrecon);
	struct timeval tv = {TICK_MS / 1000, (TICK_MS % 1000) * 1000};

	rc->base = base;
	rc->r = r;
	rc->cfg = cfg;
	rc->api = api;
	rc->keys = keys;
	rc->q = q;
	rc->d = d;
	rc->tick = event_new(base, -1, EV_PERSIST, on_tick, rc);
	rc->once = !claims;
	if (claims)
		event_add(rc->tick, &tv);
	return rc;
}

void bankrecon_stop(struct bankrecon *rc)
{
	if (rc) {
		rc->stopped = 1;
		event_del(rc->tick);
	}
}

void bankrecon_free(struct bankrecon *rc)
{
	if (!rc)
		return;
	rc->stopped = 1;
	event_del(rc->tick);
	rc->freed = 1;
	if (rc->running == 0) {
		event_free(rc->tick);
		free(rc);
	}
}

bool bankrecon_age(const struct bankrecon *rc, enum env env, double *seconds)
{
	long long now = (long long)ids_now_ms();

	if (!rc || !rc->known[env])
		return 0;
	*seconds = rc->oldest_ok_ms[env] < now ? (double)(now - rc->oldest_ok_ms[env]) / 1000.0 : 0;
	return 1;
}
