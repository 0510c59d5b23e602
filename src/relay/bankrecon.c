/* bankrecon: one process's share of the reconciliation of bank
 * connections: a timer claims, shard after shard, the connections that are
 * due (the schedule and each run's end are store/banks_recon.c's), and
 * each claimed one is a run, given with its claim all it needs of its
 * connection: its credentials opened, GET /pix of its window page by page
 * through bankapi.c, each page written by banks_receive as the webhook's
 * Pix are, then its pending refunds asked about, then its end recorded in
 * one write: its result, the span it read, the refunds settled, its next
 * run. A run asked for with a start (`bank reconcile --since`) reads back
 * from now in windows of a day, the newest first, as far as the bank
 * answers.
 *
 * A run of one window of one page with no pending refund is three round
 * trips to Redis (its share of the claim, the page's write, the end) and
 * four calls into the store (claim, the credentials opened, receive,
 * finish); docs/performance.md, "A reconciliation run".
 */
#include "pixrelay/relay/bankrecon.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/log.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/metrics.h"
#include "pixrelay/core/timefmt.h"
#include "pixrelay/pix/backoff.h"
#include "pixrelay/pix/bankcreds.h"
#include "pixrelay/pix/bankday.h"
#include "pixrelay/pix/bankpix.h"
#include "pixrelay/pix/asaas.h"
#include "pixrelay/pix/mercadopago.h"
#include "pixrelay/pix/woovi.h"
#include "pixrelay/relay/bankcobr.h"
#include "pixrelay/relay/bankrec.h"
#include "pixrelay/store/banks_recon.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TICK_MS 1000		      /* how often due connections are claimed */
#define RUNS_MAX 4		      /* runs of one process at once */
#define PAGE_ITEMS 1000		      /* Pix per page asked of the bank (the most it must give) */
#define PAGES_MAX 1000		      /* pages of one window: a million Pix */
#define WOOVI_PAGE_ITEMS 100	      /* transactions per page asked of Woovi (its size) */
#define ASAAS_PAGE_ITEMS 100	      /* payments per page asked of Asaas (its most) */
#define MP_PAGE_ITEMS 100	      /* payments per page asked of Mercado Pago */
#define WINDOW_MAX_MS BANKDAY_MS      /* one window at most */
#define OVERLAP_MS BANKDAY_OVERLAP_MS /* each window starts this long before the last end */
#define FIRST_BEFORE_MS BANKDAY_FIRST_BEFORE_MS /* the first, before the credentials */
#define BACKOFF_MAX_MS (3600LL * 1000)		/* the longest delay after failures */
#define REFUNDS_PER_RUN BANKS_RECON_REFUNDS_MAX /* pending refunds asked about per run */
#define CLAIMS_PER_TICK 32 /* shards claimed per tick: a walk over more takes several */

/* How long a claim, or a renewal, keeps other processes off a connection:
 * what a live run may spend between two renewals. That is at most four
 * calls to the bank (a token and the call, and after a 401 a token and the
 * call again), each ended by bank-timeout-ms, and as many calls to Redis
 * (the claim's answer or the renewal, the page's write, the next renewal,
 * and one to spare), each ended by redis-timeout-ms: a minute by default.
 * A process that dies mid-run is taken over that long after its last
 * renewal; a lease that runs out under a live run only lets a second run
 * start (every write is taken once), never a second event. */
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
	struct bankcharges recs; /* what asking about recurrences needs (bankrec.h) */
	struct event *tick;
	int stopped, freed;
	unsigned running;
	/* the tick's walk over the shards, one claim at a time, each with the
	 * room left: a claim is out, of which shard, the next shard, how many
	 * are left to claim, and where the next walk starts */
	int claiming, claim_shard, walk_next, walk_left, walk_start;
	int nshards;
	long long (*oldest_ok_ms)[2]; /* per shard and env: what its last claim saw (0: none) */
};

/* One connection's reconciliation. */
struct run {
	struct bankrecon *rc;
	struct banks_run *conn; /* what the claim (or the read) gave */
	const char *id;		/* conn's */
	struct bank_creds creds;
	long long from_ms, to_ms, lease_ms; /* the span asked for */
	long long win_from, win_to;	    /* the window being read */
	long long base_ms;		    /* the reconciled instant it may move on from */
	long long read_from;		    /* windows read so far reach back to here (0: none) */
	long windows;			    /* windows read whole */
	int reading;			    /* reading windows (not refunds) */
	long page, pages;
	struct banks_recon_stats stats;
	size_t refund;			      /* the pending refund asked about (conn's) */
	int refund_final;		      /* it is settled at the bank */
	const char *settled[REFUNDS_PER_RUN]; /* those heard settled (conn's) */
	size_t nsettled;
	int recs_asked, recs_recovered;	  /* recurrences asked about, changed at the bank */
	int cobrs_asked, cobrs_recovered; /* recurring charges asked about, changed there */
	/* a run asked for (bankrecon_run): its environment and window, and
	 * who waits */
	enum env env;
	long long since_ms;
	store_fn done_cb;
	void *done_ud;
	char why[512];
	char stopped[512]; /* a run asked for that stopped short of its start: why */
};

/* rc goes once nothing of it is out any more (bankrecon_free). */
static void maybe_free(struct bankrecon *rc)
{
	if (rc->freed && rc->running == 0 && !rc->claiming) {
		event_free(rc->tick);
		free(rc->oldest_ok_ms);
		free(rc);
	}
}

static void run_free(struct run *u)
{
	struct bankrecon *rc = u->rc;

	bank_creds_wipe(&u->creds);
	banks_run_free(u->conn);
	free(u);
	rc->running--;
	maybe_free(rc);
}

/* The run is over (its end written, or abandoned): "ok", "failed" or
 * NULL (abandoned: its lease runs out). */
static void run_end(struct run *u, const char *result)
{
	if (result)
		metrics_bank_reconciliation(result);
	run_free(u);
}

/* True when the reconciler stopped: the run is then abandoned (ended). */
static bool gone(struct run *u)
{
	if (!u->rc->stopped)
		return false;
	run_end(u, NULL);
	return true;
}

/* ---- the end of a run ---- */

/* How long after its `failures`-th failure in a row a connection is tried
 * again: 30 s (the interval when shorter, 5 s at least) x 2^(failures-1),
 * at most an hour, less up to a tenth (drawn from the jitter's lower half:
 * never later): a bank down briefly, or a host that had no key yet, is
 * asked again soon. */
static long long retry_delay(const struct config *cfg, int failures)
{
	long long interval = cfg->bank_reconcile_interval * 1000LL;
	struct backoff_policy p = {
	    .base_ms = interval < 5000	  ? 5000
		       : interval > 30000 ? 30000
					  : interval,
	    .factor = 2,
	    .cap_ms = BACKOFF_MAX_MS,
	    .jitter_pct = 10,
	};
	uint32_t rnd;

	ids_random(&rnd, sizeof(rnd));
	return backoff_delay_ms(&p, failures, rnd >> 1);
}

/* What a run asked for found (bankrecon_run's answer). */
static char *run_json(const struct run *u)
{
	yajl_gen g = json_gen_new();
	char from[32], to[32], back[32];

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
	json_str(g, "recurrencesAsked");
	json_int(g, u->recs_asked);
	json_str(g, "recurrencesRecovered");
	json_int(g, u->recs_recovered);
	json_str(g, "recurringChargesAsked");
	json_int(g, u->cobrs_asked);
	json_str(g, "recurringChargesRecovered");
	json_int(g, u->cobrs_recovered);
	json_str(g, "reconciledUntil");
	json_str_or_null(g, u->stats.upto_ms ? to : NULL);
	json_close(g);
	return json_take(g);
}

static void on_finished(void *ud, int result, const char *json, const char *err)
{
	struct run *u = ud;
	int ok = u->why[0] == '\0';

	(void)json;
	if (gone(u))
		return;
	if (result < 0) {
		/* Redis (the lease runs out and the run is tried again), or the
		 * connection is gone (it left the schedule) */
		if (err)
			log_warn("bank connection %s: reconciliation: %s", u->id, err);
		if (u->done_cb)
			u->done_cb(u->done_ud, -1, NULL,
				   err ? err : "the connection was disconnected meanwhile");
		run_end(u, err || !ok ? "failed" : "ok");
		return;
	}
	if (u->done_cb && ok) {
		char *out = run_json(u);

		u->done_cb(u->done_ud, 0, out, NULL);
		free(out);
	} else if (u->done_cb) {
		u->done_cb(u->done_ud, -1, NULL, u->why);
	}
	run_end(u, ok ? "ok" : "failed");
}

/* The run's end, in one write: what it found (ok) or why it failed, the
 * span it read whole, the refunds heard settled, and, for a scheduled run,
 * when the next one is due. */
static void finish(struct run *u, const struct banks_recon_stats *ok)
{
	long long now = (long long)ids_now_ms();
	struct banks_recon_end e = {.ref = &u->conn->ref,
				    .ok = ok,
				    .error = ok ? NULL : u->why,
				    .settled = u->settled,
				    .nsettled = u->nsettled};

	if (u->windows > 0) {
		e.read_from = u->read_from;
		e.read_to = u->to_ms;
	}
	if (u->done_cb)
		e.next_ms = 0; /* asked for: the schedule stays */
	else if (!ok)
		e.next_ms = now + retry_delay(u->rc->cfg, u->conn->failures + 1);
	else if (u->to_ms < now - OVERLAP_MS)
		e.next_ms = now; /* a window that stopped short of now (a long absence) */
	else
		e.next_ms = now + u->rc->cfg->bank_reconcile_interval * 1000LL;
	banks_recon_finish(u->rc->r, u->rc->cfg, &e, on_finished, u);
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
	snprintf(u->why, sizeof(u->why), "%s", why[0] ? why : "failed");
	log_warn("bank connection %s: reconciliation failed: %s", u->id, why);
	finish(u, NULL);
}

static void succeed(struct run *u)
{
	/* the windows read reach back to the reconciled instant: it moves */
	u->stats.upto_ms = u->read_from && u->read_from <= u->base_ms ? u->to_ms : 0;
	if (u->stats.fresh)
		log_info("bank connection %s: reconciliation took %ld Pix its webhook had not "
			 "brought",
			 u->id, u->stats.fresh);
	finish(u, &u->stats);
}

/* The lease again, for the calls to come: a live run renews it before each
 * step that asks the bank, so only a run whose process died loses it. */
static void renew(struct run *u)
{
	banks_recon_renew(u->rc->r, u->rc->cfg, u->id, (long long)ids_now_ms() + u->lease_ms);
}

/* ---- pending refunds ---- */

static void next_refund(struct run *u);

/* "<e2e> <refund id>" of the refund being asked about, split. */
static void refund_parts(const struct run *u, char e2e[40], char rid[40])
{
	const char *s = u->conn->refunds[u->refund], *sp = strchr(s, ' ');
	size_t n = sp ? (size_t)(sp - s) : strlen(s);

	snprintf(e2e, 40, "%.*s", (int)(n < 39 ? n : 39), s);
	snprintf(rid, 40, "%s", sp ? sp + 1 : "");
}

static void on_refund_taken(void *ud, int result, const struct banks_received *got, const char *err)
{
	struct run *u = ud;

	(void)got;
	if (gone(u))
		return;
	if (result < 0) {
		fail(u, err ? err : "redis");
		return;
	}
	dispatch_kick(u->rc->d, u->conn->ref.account);
	/* settled at the bank: no longer asked about (the run's end says so) */
	if (u->refund_final)
		u->settled[u->nsettled++] = u->conn->refunds[u->refund];
	u->refund++;
	next_refund(u);
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
	banks_receive(u->rc->q, &u->conn->ref, BANKS_RECONCILIATION, &b, on_refund_taken, u);
}

/* ---- recurrences not final (Pix Automático) ---- */

static void on_recs_step(void *ud)
{
	renew(ud);
}

static void on_cobrs_asked(void *ud, int asked, int recovered, const char *err)
{
	struct run *u = ud;

	u->cobrs_asked = asked;
	u->cobrs_recovered = recovered;
	/* as the recurrences: the rest are asked at the next run */
	if (err)
		log_warn("bank connection %s: reconciliation: recurring charges: %s", u->id, err);
	succeed(u);
}

static void on_recs_asked(void *ud, int asked, int recovered, const char *err)
{
	struct run *u = ud;

	if (gone(u))
		return; /* stopping: the recurrences not asked wait for the next run */
	u->recs_asked = asked;
	u->recs_recovered = recovered;
	/* the Pix were read whole: a recurrence the bank did not answer about
	 * is asked again at the next run (the oldest asked first), and fails
	 * nothing of this one's */
	if (err)
		log_warn("bank connection %s: reconciliation: recurrences: %s", u->id, err);
	/* then its recurring charges not final (Pix Automático) */
	bankcobr_reconcile(&u->rc->recs, u->rc->q, &u->creds, &u->conn->ref, on_recs_step,
			   on_cobrs_asked, u);
}

static void next_refund(struct run *u)
{
	char e2e[40], rid[40], *path;

	if (u->conn->api.provider != PROVIDER_API_PIX) {
		/* a provider's list carries its refunds too; no recurrences */
		succeed(u);
		return;
	}
	if (u->refund >= u->conn->nrefunds) {
		bankrec_reconcile(&u->rc->recs, &u->creds, &u->conn->ref, &u->rc->stopped,
				  on_recs_step, on_recs_asked, u);
		return;
	}
	u->stats.refunds++;
	renew(u);
	refund_parts(u, e2e, rid);
	path = mem_printf("/pix/%s", e2e);
	bankapi_call(u->rc->api, &u->creds, "GET", path, NULL, on_refund_pix, u);
	free(path);
}

/* ---- the window, page by page ---- */

static void ask_page(struct run *u);

/* The window was read whole: the next one back (a run asked for with a
 * start), or the pending refunds. What was read is recorded with the
 * run's end. */
static void window_read(struct run *u)
{
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
	next_refund(u);
}

static void on_page_taken(void *ud, int result, const struct banks_received *got, const char *err)
{
	struct run *u = ud;

	if (gone(u))
		return;
	if (result < 0) {
		fail(u, err ? err : "redis");
		return;
	}
	u->stats.fresh += (long)got->accepted;
	if (got->accepted)
		dispatch_kick(u->rc->d, u->conn->ref.account);
	u->stats.pages++;
	if (++u->page < u->pages) {
		renew(u);
		ask_page(u);
		return;
	}
	window_read(u);
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
	if (u->conn->api.provider == PROVIDER_WOOVI) {
		bool more = false;

		if (woovi_transactions_parse(body, strlen(body), &b, &more, perr, sizeof(perr)) <
		    0) {
			snprintf(why, sizeof(why), "Woovi's list of transactions: %s", perr);
			fail(u, why);
			return;
		}
		pages = u->page + (more ? 2 : 1);
	} else if (u->conn->api.provider == PROVIDER_MERCADOPAGO) {
		bool more = false;

		if (mp_search_parse(body, strlen(body), &b, &more, perr, sizeof(perr)) < 0) {
			snprintf(why, sizeof(why), "Mercado Pago's search of payments: %s", perr);
			fail(u, why);
			return;
		}
		pages = u->page + (more ? 2 : 1);
	} else if (u->conn->api.provider == PROVIDER_ASAAS) {
		bool more = false;

		if (asaas_payments_parse(body, strlen(body), &b, &more, perr, sizeof(perr)) < 0) {
			snprintf(why, sizeof(why), "Asaas's list of payments: %s", perr);
			fail(u, why);
			return;
		}
		pages = u->page + (more ? 2 : 1);
	} else if (bankpix_parse_page(body, strlen(body), &b, &pages, perr, sizeof(perr)) !=
		   BANKPIX_OK) {
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
	if (u->conn->api.provider == PROVIDER_API_PIX)
		bankpix_batch_keep_chave(&b, u->conn->pix_key);
	u->stats.listed += (long)(b.n + b.nrefused);
	u->stats.refused += (long)b.nrefused;
	banks_receive(u->rc->q, &u->conn->ref, BANKS_RECONCILIATION, &b, on_page_taken, u);
}

static void ask_page(struct run *u)
{
	char from[32], to[32], *path;

	timefmt_rfc3339(from, (uint64_t)u->win_from);
	timefmt_rfc3339(to, (uint64_t)u->win_to);
	if (u->conn->api.provider == PROVIDER_WOOVI) {
		/* every transaction of the window, payments and refunds, 100 a
		 * page (openpix-developers: transaction-how-to-paginate-api.md) */
		path = mem_printf("/api/v1/transaction?start=%s&end=%s&skip=%ld&limit=%d", from, to,
				  u->page * WOOVI_PAGE_ITEMS, WOOVI_PAGE_ITEMS);
	} else if (u->conn->api.provider == PROVIDER_MERCADOPAGO) {
		/* every payment updated in the window (a refund after it too),
		 * oldest first, by offset (MP-SDK search; dates as
		 * yyyy-MM-dd'T'HH:mm:ss.SSSZ) */
		path = mem_printf("/v1/payments/search?sort=date_created&criteria=asc"
				  "&range=date_last_updated&begin_date=%s&end_date=%s"
				  "&limit=%d&offset=%ld",
				  from, to, MP_PAGE_ITEMS, u->page * MP_PAGE_ITEMS);
	} else if (u->conn->api.provider == PROVIDER_ASAAS) {
		/* Asaas filters by whole dates: the Brasilia days the window
		 * touches, read whole (100 a page, its most) */
		char d1[11], d2[11];

		bankday_date(d1, u->win_from);
		bankday_date(d2, u->win_to);
		path = mem_printf("/payments?billingType=PIX&paymentDate%%5Bge%%5D=%s"
				  "&paymentDate%%5Ble%%5D=%s&offset=%ld&limit=%d",
				  d1, d2, u->page * ASAAS_PAGE_ITEMS, ASAAS_PAGE_ITEMS);
	} else
		path = mem_printf("/pix?inicio=%s&fim=%s&paginacao.paginaAtual=%ld"
				  "&paginacao.itensPorPagina=%d",
				  from, to, u->page, PAGE_ITEMS);
	bankapi_call(u->rc->api, &u->creds, "GET", path, NULL, on_page, u);
	free(path);
}

/* ---- the start of a run ---- */

/* A run of `conn` (taken), and of it only what the claim gave: its
 * credentials opened, its window, its first page asked for. */
static void start(struct run *u, struct banks_run *conn)
{
	long long now = (long long)ids_now_ms(), base;
	const struct seal_key *key;
	char why[256];

	u->conn = conn;
	u->id = conn->ref.id;
	u->lease_ms = lease_ms(u->rc->cfg);
	if (!(key = seal_keyfile_get(u->rc->keys))) {
		fail(u, "no credentials key on this host: set credentials-key-file");
		return;
	}
	if (banks_open_credentials(conn->ref.id, &conn->api, key, &u->creds, why, sizeof(why)) !=
	    0) {
		fail(u, why);
		return;
	}
	/* from a little before the last end (or the first credentials), at
	 * most a day at a time */
	base = conn->rec_at_ms
		   ? conn->rec_at_ms
		   : (conn->api_at_ms ? conn->api_at_ms : conn->created_ms) - FIRST_BEFORE_MS;
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
		u->from_ms = base - (conn->rec_at_ms ? OVERLAP_MS : 0);
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

static struct run *run_new(struct bankrecon *rc)
{
	struct run *u = mem_new(struct run);

	u->rc = rc;
	rc->running++;
	return u;
}

/* A run asked for: the connection as bank_recon reads it. */
static void on_read(void *ud, const char *err, struct banks_claim *c)
{
	struct run *u = ud;
	struct banks_run *conn = c && c->n ? c->runs[0] : NULL;

	if (gone(u)) {
		banks_run_free(conn);
		return;
	}
	if (err) {
		log_warn("bank connection: reconciliation: %s", err);
		u->done_cb(u->done_ud, -1, NULL, err);
		run_end(u, NULL);
		return;
	}
	if (!conn || conn->ref.env != u->env || !conn->api.api_url) {
		/* disconnected, or its credentials gone: nothing to reconcile */
		u->done_cb(u->done_ud,
			   !conn || conn->ref.env != u->env ? BANKS_NOT_FOUND : BANKS_NO_API, NULL,
			   NULL);
		banks_run_free(conn);
		run_end(u, NULL);
		return;
	}
	start(u, conn);
}

void bankrecon_run(struct bankrecon *rc, enum env env, const char *id, long long since_ms,
		   store_fn cb, void *ud)
{
	struct run *u = run_new(rc);

	u->env = env;
	u->since_ms = since_ms;
	u->done_cb = cb;
	u->done_ud = ud;
	banks_recon_read(rc->r, rc->cfg, id, REFUNDS_PER_RUN, on_read, u);
}

/* ---- the timer: a walk over the shards ---- */

static void claim_next(struct bankrecon *rc);

static void on_claimed(void *ud, const char *err, struct banks_claim *c)
{
	struct bankrecon *rc = ud;
	size_t i = 0;

	if (err) {
		/* Redis failed: the walk ends there, the next tick walks again */
		log_warn("bank reconciliation: %s", err);
		rc->walk_left = 0;
	} else {
		memcpy(rc->oldest_ok_ms[rc->claim_shard], c->oldest_ok_ms, sizeof(c->oldest_ok_ms));
		/* stopped: leased but not run, their leases run out */
		for (; i < c->n && !rc->stopped; i++)
			start(run_new(rc), c->runs[i]);
		for (; i < c->n; i++)
			banks_run_free(c->runs[i]);
	}
	claim_next(rc);
}

/* Claim the walk's next shard, with the room left (none: the claim still
 * reads the oldest successes), or end the walk. */
static void claim_next(struct bankrecon *rc)
{
	unsigned most = rc->running < RUNS_MAX ? RUNS_MAX - rc->running : 0;

	if (rc->walk_left == 0 || rc->stopped || !rds_ready(rc->r)) {
		rc->claiming = 0;
		maybe_free(rc);
		return;
	}
	rc->walk_left--;
	rc->claim_shard = rc->walk_next;
	rc->walk_next = (rc->walk_next + 1) % rc->nshards;
	banks_recon_claim(rc->r, rc->cfg, rc->claim_shard, most, lease_ms(rc->cfg), REFUNDS_PER_RUN,
			  on_claimed, rc);
}

static void on_tick(evutil_socket_t fd, short kind, void *arg)
{
	struct bankrecon *rc = arg;

	(void)fd, (void)kind;
	if (rc->claiming || rc->stopped || !rds_ready(rc->r))
		return;
	rc->claiming = 1;
	rc->walk_left = rc->nshards < CLAIMS_PER_TICK ? rc->nshards : CLAIMS_PER_TICK;
	/* each walk begins one shard further than the last one began (or, with
	 * more shards than a tick claims, where it ended), so that no shard is
	 * always the first to get the room */
	rc->walk_next = rc->walk_start;
	rc->walk_start =
	    (rc->walk_start + rc->walk_left + (rc->walk_left == rc->nshards)) % rc->nshards;
	claim_next(rc);
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
	rc->recs.r = r;
	rc->recs.cfg = cfg;
	rc->recs.bankapi = api;
	rc->recs.keys = keys;
	rc->nshards = (int)cfg->shards;
	rc->oldest_ok_ms = mem_calloc((size_t)rc->nshards, sizeof(*rc->oldest_ok_ms));
	rc->tick = event_new(base, -1, EV_PERSIST, on_tick, rc);
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
	maybe_free(rc);
}

bool bankrecon_age(const struct bankrecon *rc, enum env env, double *seconds)
{
	long long now = (long long)ids_now_ms(), oldest = 0;

	for (int i = 0; rc && i < rc->nshards; i++)
		if (rc->oldest_ok_ms[i][env] && (!oldest || rc->oldest_ok_ms[i][env] < oldest))
			oldest = rc->oldest_ok_ms[i][env];
	if (!oldest)
		return false;
	*seconds = oldest < now ? (double)(now - oldest) / 1000.0 : 0;
	return true;
}
