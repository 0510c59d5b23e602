/* bankrec: a recurrence created at the account's bank (POST /locrec, POST
 * /rec, GET /rec/{idRec} for its QR) and cancelled there (PATCH
 * /rec/{idRec}); include/pixrelay/relay/bankrec.h says what each step
 * checks. The values are pix/recurrence.c's, the store
 * store/recurrences.c's, the HTTP shape api/api_recurrences.c's. */
#include "pixrelay/relay/bankrec.h"

#include "pixrelay/core/json.h"
#include "pixrelay/core/log.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/seal.h"
#include "pixrelay/pix/bankcreds.h"
#include "pixrelay/relay/bankapi.h"
#include "pixrelay/store/accounts.h"
#include "pixrelay/store/banks_charging.h"
#include "pixrelay/store/banks_conn.h"
#include "pixrelay/store/recurrences.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One creation or cancel, from the account's lookup to the answer. */
struct job {
	const struct bankcharges *b;
	enum env env;
	char account[32];
	struct recurrence_input in;
	store_fn cb;
	void *ud;
	struct bank_creds creds;
	char conn[BANKS_ID_MAX];
	char id[RECURRENCE_ID_MAX];
	char idrec[RECURRENCE_IDREC_LEN + 1];
	char location[RECURRENCE_LOCATION_MAX + 1];
	int64_t loc_id;
	int cancel;
};

static void job_free(struct job *j)
{
	recurrence_input_deinit(&j->in);
	bank_creds_wipe(&j->creds);
	free(j);
}

static void answer(struct job *j, int result, const char *json, const char *err)
{
	j->cb(j->ud, result, json, err);
	job_free(j);
}

/* The bank's answer `status` to `step`: 0 when it is a success, else the
 * job is answered (and freed) and -1 returned. */
static int bank_failed(struct job *j, const char *step, long status, const char *body,
		       const char *err)
{
	char why[1024];
	size_t n;

	if (status == 200 || status == 201)
		return 0;
	if (status == 0 || status >= 500 || status == 429) {
		log_warn("recurrence %s at the bank of %s: %s: %s", j->id, j->conn, step,
			 err ? err : "the bank is unavailable");
		snprintf(why, sizeof(why),
			 "the bank did not answer (%s): nothing was stored; retry", step);
		answer(j, BANKREC_UNAVAILABLE, why, NULL);
		return -1;
	}
	bankapi_refusal(why, sizeof(why), "recurrence", status, body);
	if (status == 401 || status == 403) {
		log_error("recurrence %s at the bank of %s: %s: %s", j->id, j->conn, step, why);
		n = strlen(why);
		snprintf(why + n, sizeof(why) - n,
			 "; the bank does not accept pixrelay's credentials for bank connection %s "
			 "(they need the scopes of Pix Automático: payloadlocationrec.write, "
			 "rec.write, rec.read): nothing was stored; see pixrelay bank show %s",
			 j->conn, j->conn);
		answer(j, BANKREC_UNAVAILABLE, why, NULL);
		return -1;
	}
	answer(j, BANKREC_REFUSED, why, NULL);
	return -1;
}

/* The bank's answer did not match what was asked: nothing is stored. */
static void mismatch(struct job *j, const char *step, const char *why)
{
	char msg[1024];

	log_error("recurrence %s at the bank of %s: %s: %s", j->id, j->conn, step, why);
	snprintf(msg, sizeof(msg),
		 "the bank's answer does not match the recurrence (%s): %s; nothing was stored",
		 step, why);
	answer(j, BANKREC_UNAVAILABLE, msg, NULL);
}

static void on_stored(void *ud, int result, const char *json, const char *err)
{
	answer(ud, result, json, err);
}

static void on_get_rec(void *ud, long status, const char *body, const char *err)
{
	struct job *j = ud;
	struct recurrences_new n;
	char why[512], *code = NULL;

	if (bank_failed(j, "GET /rec", status, body, err) < 0)
		return;
	if (recurrence_read_qr(body, body ? strlen(body) : 0, j->idrec, j->location, &code, why,
			       sizeof(why)) != 0) {
		mismatch(j, "GET /rec", why);
		return;
	}
	n.id = j->id;
	n.connection = j->conn;
	n.idrec = j->idrec;
	n.br_code = code;
	n.in = &j->in;
	recurrences_create(j->b->r, j->b->cfg, j->env, j->account, &n, on_stored, j);
	free(code);
}

static void on_post_rec(void *ud, long status, const char *body, const char *err)
{
	struct job *j = ud;
	char why[512], *path;

	if (bank_failed(j, "POST /rec", status, body, err) < 0)
		return;
	if (recurrence_read_rec(body, body ? strlen(body) : 0, &j->in, j->loc_id, j->idrec, why,
				sizeof(why)) != 0) {
		mismatch(j, "POST /rec", why);
		return;
	}
	path = mem_printf("/rec/%s", j->idrec);
	bankapi_call(j->b->bankapi, &j->creds, "GET", path, NULL, on_get_rec, j);
	free(path);
}

static void on_locrec(void *ud, long status, const char *body, const char *err)
{
	struct job *j = ud;
	char why[512], *rec;

	if (bank_failed(j, "POST /locrec", status, body, err) < 0)
		return;
	if (recurrence_read_locrec(body, body ? strlen(body) : 0, &j->loc_id, j->location, why,
				   sizeof(why)) != 0) {
		mismatch(j, "POST /locrec", why);
		return;
	}
	rec = recurrence_rec_body(&j->in, j->loc_id);
	bankapi_call(j->b->bankapi, &j->creds, "POST", "/rec", rec, on_post_rec, j);
	free(rec);
}

static void on_patch(void *ud, long status, const char *body, const char *err)
{
	struct job *j = ud;
	struct recurrence_heard h;
	const char *st = NULL;
	yajl_val v = NULL;
	char perr[64];

	if (bank_failed(j, "PATCH /rec", status, body, err) < 0)
		return;
	if (body && json_parse_object(body, strlen(body), &v, perr, sizeof(perr)) == 0)
		st = YAJL_GET_STRING(json_get(v, "status"));
	if (!st || strcmp(st, "CANCELADA") != 0) {
		yajl_tree_free(v);
		mismatch(j, "PATCH /rec", "status: not CANCELADA");
		return;
	}
	yajl_tree_free(v);
	memset(&h, 0, sizeof(h));
	snprintf(h.idrec, sizeof(h.idrec), "%s", j->idrec);
	h.status = RECURRENCE_CANCELLED;
	snprintf(h.code, sizeof(h.code), "SLCR");
	snprintf(h.by, sizeof(h.by), "USUARIO_RECEBEDOR");
	recurrences_heard(j->b->r, j->b->cfg, j->env, j->account, &h, RECURRENCES_REQUEST,
			  on_stored, j);
}

static void on_connection(void *ud, int result, const struct banks_conn *c, const char *err)
{
	struct job *j = ud;
	char why[256];

	if (result < 0) {
		answer(j, -1, NULL, err);
		return;
	}
	if (result != 0 || c->env != j->env || strcmp(c->account, j->account) != 0 ||
	    !c->api.api_url ||
	    banks_open_credentials(c->id, &c->api, seal_keyfile_get(j->b->keys), &j->creds, why,
				   sizeof(why)) != 0) {
		if (result != 0 || c->env != j->env || strcmp(c->account, j->account) != 0)
			snprintf(why, sizeof(why), "no such connection");
		else if (!c->api.api_url)
			snprintf(why, sizeof(why), "no API credentials");
		log_error("recurrences of account %s: bank connection %s: %s", j->account, j->conn,
			  why);
		answer(j, BANKREC_UNAVAILABLE,
		       "the recurrence's bank connection cannot be used now (see pixrelay bank "
		       "show)",
		       NULL);
		return;
	}
	if (j->cancel) {
		char *path = mem_printf("/rec/%s", j->idrec);
		bankapi_call(j->b->bankapi, &j->creds, "PATCH", path, "{\"status\":\"CANCELADA\"}",
			     on_patch, j);
		free(path);
		return;
	}
	bankapi_call(j->b->bankapi, &j->creds, "POST", "/locrec", "{\"tipo\":\"rec\"}", on_locrec,
		     j);
}

/* Where the recurrence goes, once the account's charging connection is
 * known: its bank, which must have API credentials. */
static void rec_by(struct job *j, const char *via, const char *bank_api)
{
	char why[640];

	if (bank_api[0]) {
		snprintf(j->conn, sizeof(j->conn), "%s", bank_api);
		banks_get(j->b->r, j->b->cfg, bank_api, on_connection, j);
		return;
	}
	if (strcmp(via, BANKS_VIA_MANY) == 0)
		snprintf(why, sizeof(why),
			 "the account has several bank connections in %s and none is its default: "
			 "mark the one its recurrences go to (pixrelay bank update ID --default; "
			 "pixrelay bank list --env %s --account %s lists them)",
			 env_name(j->env), env_name(j->env), j->account);
	else if (strcmp(via, BANKS_VIA_NONE) == 0)
		snprintf(why, sizeof(why),
			 "a recurrence is made at the account's bank, and the account has no bank "
			 "connection in %s: connect its bank (pixrelay bank connect --env %s "
			 "--account %s --chave KEY ...) and give it the bank's API credentials "
			 "(pixrelay bank credentials ID ...; docs/recurrences.md)",
			 env_name(j->env), env_name(j->env), j->account);
	else
		snprintf(why, sizeof(why),
			 "a recurrence is made at the account's bank, and its bank connection %s "
			 "has no API credentials: give them (pixrelay bank credentials %s "
			 "--api-url ... --token-url ... --client-id ...; docs/recurrences.md)",
			 via, via);
	answer(j, BANKREC_NO_BANK, why, NULL);
}

static void on_charging(void *ud, int result, const struct banks_charging *ch, const char *err)
{
	struct job *j = ud;

	if (result != 0) {
		answer(j, -1, NULL, err);
		return;
	}
	rec_by(j, ch->via, ch->bank_api);
}

static void on_account(void *ud, int result, const struct accounts_info *info, const char *err)
{
	struct job *j = ud;

	if (result < 0) {
		answer(j, -1, NULL, err);
		return;
	}
	if (result != 0 || info->env != j->env) {
		answer(j, -1, NULL, "the account is not of this environment");
		return;
	}
	if (!info->charge_via[0]) {
		/* a record of a version before the charging connection */
		banks_charging(j->b->r, j->b->cfg, j->env, j->account, on_charging, j);
		return;
	}
	rec_by(j, info->charge_via, info->bank_api);
}

void bankrec_create(const struct bankcharges *b, enum env env, const char *account,
		    const struct recurrence_input *in, store_fn cb, void *ud)
{
	struct job *j = mem_new(struct job);

	j->b = b;
	j->env = env;
	snprintf(j->account, sizeof(j->account), "%s", account);
	j->in = *in;
	j->in.name = mem_strdup(in->name);
	j->in.contract = mem_strdup(in->contract);
	j->in.object = mem_strdup(in->object);
	j->in.postback_url = mem_strdup_or_null(in->postback_url);
	j->cb = cb;
	j->ud = ud;
	if (recurrences_new_id(account, j->id) < 0) {
		answer(j, -1, NULL, "the account id names no shard");
		return;
	}
	accounts_lookup(b->r, b->cache, b->cfg, account, on_account, j);
}

static void on_record(void *ud, int result, const struct recurrences_record *rec, const char *err)
{
	struct job *j = ud;
	int status = -1;

	if (result != 0) {
		answer(j, result, NULL, err);
		return;
	}
	for (int s = RECURRENCE_CREATED; s <= RECURRENCE_CANCELLED; s++)
		if (strcmp(rec->status, recurrence_status_name(s)) == 0)
			status = s;
	if (recurrence_is_final(status)) {
		answer(j, BANKREC_FINAL, rec->json, NULL);
		return;
	}
	snprintf(j->id, sizeof(j->id), "%s", rec->id);
	snprintf(j->idrec, sizeof(j->idrec), "%s", rec->idrec);
	snprintf(j->conn, sizeof(j->conn), "%s", rec->connection);
	banks_get(j->b->r, j->b->cfg, j->conn, on_connection, j);
}

void bankrec_cancel(const struct bankcharges *b, enum env env, const char *account, const char *id,
		    store_fn cb, void *ud)
{
	struct job *j = mem_new(struct job);

	j->b = b;
	j->env = env;
	snprintf(j->account, sizeof(j->account), "%s", account);
	j->cb = cb;
	j->ud = ud;
	j->cancel = 1;
	recurrences_read(b->r, b->cfg, env, account, id, on_record, j);
}

/* ---- reconciliation ---- */

/* One connection's recurrences asked about, one after the other. */
struct recon {
	const struct bankcharges *b;
	const struct bank_creds *creds;
	struct banks_ref conn;
	const int *stopped; /* the caller's: nonzero once its process stops */
	void (*step)(void *ud);
	bankrec_recon_fn cb;
	void *ud;
	char *idrecs; /* space-separated, from recurrences_open */
	char *next;
	int asked, recovered;
};

static void recon_done(struct recon *r, const char *err)
{
	r->cb(r->ud, r->asked, r->recovered, err);
	free(r->idrecs);
	free(r);
}

static void recon_next(struct recon *r);

static void on_recon_heard(void *ud, int result, const char *json, const char *err)
{
	struct recon *r = ud;

	(void)json;
	if (result < 0) {
		recon_done(r, err ? err : "writing what the bank said failed");
		return;
	}
	if (result == 0) {
		r->recovered++;
		log_info(
		    "bank connection %s: a recurrence's change the bank's callback never brought, "
		    "taken by the reconciliation",
		    r->conn.id);
	}
	recon_next(r);
}

static void on_recon_rec(void *ud, long status, const char *body, const char *err)
{
	struct recon *r = ud;
	struct recurrence_heard h;
	char idrec[RECURRENCE_IDREC_LEN + 1], why[256];
	size_t n = strcspn(r->next, " ");

	snprintf(idrec, sizeof(idrec), "%.*s", (int)n, r->next);
	r->next += n;
	while (*r->next == ' ')
		r->next++;
	if (*r->stopped) {
		/* as a refund's answer is: dropped, asked again at the next run */
		recon_done(r, "stopped");
		return;
	}
	if (status != 200) {
		char msg[512];
		if (status == 0)
			snprintf(msg, sizeof(msg), "GET /rec/%s: %s", idrec,
				 err ? err : "no answer");
		else
			bankapi_problem(msg, sizeof(msg), status, body);
		recon_done(r, msg);
		return;
	}
	if (recurrence_read_one(body, body ? strlen(body) : 0, idrec, &h, why, sizeof(why)) != 0) {
		log_warn("bank connection %s: GET /rec/%s: the answer is no recurrence: %s",
			 r->conn.id, idrec, why);
		recon_next(r);
		return;
	}
	recurrences_heard(r->b->r, r->b->cfg, r->conn.env, r->conn.account, &h,
			  RECURRENCES_RECONCILIATION, on_recon_heard, r);
}

static void recon_next(struct recon *r)
{
	char *path;
	size_t n;

	if (!*r->next || *r->stopped) {
		recon_done(r, *r->stopped ? "stopped" : NULL);
		return;
	}
	n = strcspn(r->next, " ");
	r->asked++;
	if (r->step)
		r->step(r->ud);
	path = mem_printf("/rec/%.*s", (int)n, r->next);
	bankapi_call(r->b->bankapi, r->creds, "GET", path, NULL, on_recon_rec, r);
	free(path);
}

static void on_open(void *ud, int result, const char *json, const char *err)
{
	struct recon *r = ud;

	if (result != 0) {
		recon_done(r, err ? err : "reading the recurrences not final failed");
		return;
	}
	r->idrecs = mem_strdup(json);
	r->next = r->idrecs;
	recon_next(r);
}

void bankrec_reconcile(const struct bankcharges *b, const struct bank_creds *creds,
		       const struct banks_ref *conn, const int *stopped, void (*step)(void *ud),
		       bankrec_recon_fn cb, void *ud)
{
	struct recon *r = mem_new(struct recon);

	r->b = b;
	r->creds = creds;
	r->conn = *conn;
	r->stopped = stopped;
	r->step = step;
	r->cb = cb;
	r->ud = ud;
	recurrences_open(b->r, b->cfg, conn->account, conn->id, RECURRENCES_OPEN_MAX, on_open, r);
}
