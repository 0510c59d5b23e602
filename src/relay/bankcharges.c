/* bankcharges: a charge created at the account's bank: the account's
 * connection looked up (cached), the id reserved, PUT /cob/{txid} through
 * bankapi.c, the bank's answer checked against the charge (pix/cobcheck.c),
 * the charge stored with it. The store parts are charges.c's; the HTTP shape is
 * api_charges.c's. */
#include "pixrelay/relay/bankcharges.h"

#include "pixrelay/core/json.h"
#include "pixrelay/core/log.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/metrics.h"
#include "pixrelay/core/seal.h"
#include "pixrelay/pix/bankcreds.h"
#include "pixrelay/pix/bankpix.h"
#include "pixrelay/pix/brcode.h"
#include "pixrelay/pix/cobcheck.h"
#include "pixrelay/pix/provider.h"
#include "pixrelay/relay/bankapi.h"
#include "pixrelay/relay/provcharges.h"
#include "pixrelay/store/accounts.h"
#include "pixrelay/store/banks_charging.h"
#include "pixrelay/store/banks_conn.h"
#include "pixrelay/store/banks_recon.h"
#include "pixrelay/store/charges.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One creation, from the account's lookup to the answer. */
struct job {
	const struct bankcharges *b;
	enum env env;
	char account[32];
	struct charge_input in;
	store_fn cb;
	void *ud;
	struct bank_creds creds;
	char pix_key[80];
	char id[32];
	int platform;		/* the environment's platform account */
	char own_key[80];	/* the account's own (random) key */
	enum provider provider; /* the charging connection's */
};

static void job_free(struct job *j)
{
	charge_input_deinit(&j->in);
	bank_creds_wipe(&j->creds);
	free(j);
}

static void answer(struct job *j, int result, const char *json, const char *err)
{
	j->cb(j->ud, result, json, err);
	job_free(j);
}

char *bankcharges_cob_body(const struct charge_input *in, const char *pix_key)
{
	yajl_gen g = json_gen_new();
	char valor[32];

	snprintf(valor, sizeof(valor), "%lld.%02lld", (long long)(in->amount / 100),
		 (long long)(in->amount % 100));
	json_open(g);
	json_str(g, "calendario");
	json_open(g);
	json_str(g, "expiracao");
	json_int(g, in->expiration);
	json_close(g);
	if (in->document && in->name) {
		json_str(g, "devedor");
		json_open(g);
		json_str(g, strlen(in->document) == 11 ? "cpf" : "cnpj");
		json_str(g, in->document);
		json_str(g, "nome");
		json_str(g, in->name);
		json_close(g);
	}
	json_str(g, "valor");
	json_open(g);
	json_str(g, "original");
	json_str(g, valor);
	json_close(g);
	json_str(g, "chave");
	json_str(g, pix_key);
	if (in->comment) {
		json_str(g, "solicitacaoPagador");
		json_str(g, in->comment);
	}
	json_close(g);
	return json_take(g);
}

/* valor's percentage object {"modalidade": m, "valorPerc": "x.yy"}. */
static void perc_object(yajl_gen g, const char *name, int modalidade, int64_t hundredths)
{
	char pct[32];

	chargedue_percent_text(pct, hundredths);
	json_str(g, name);
	json_open(g);
	json_str(g, "modalidade");
	json_int(g, modalidade);
	json_str(g, "valorPerc");
	json_str(g, pct);
	json_close(g);
}

char *bankcharges_cobv_body(const struct charge_input *in, const char *pix_key)
{
	const struct charge_due *d = &in->due;
	yajl_gen g = json_gen_new();
	char valor[32];

	json_open(g);
	json_str(g, "calendario");
	json_open(g);
	json_str(g, "dataDeVencimento");
	json_str(g, d->date);
	json_str(g, "validadeAposVencimento");
	json_int(g, d->days_after);
	json_close(g);
	json_str(g, "devedor");
	json_open(g);
	json_str(g, strlen(in->document) == 11 ? "cpf" : "cnpj");
	json_str(g, in->document);
	json_str(g, "nome");
	json_str(g, in->name);
	json_close(g);
	json_str(g, "valor");
	json_open(g);
	json_str(g, "original");
	snprintf(valor, sizeof(valor), "%lld.%02lld", (long long)(in->amount / 100),
		 (long long)(in->amount % 100));
	json_str(g, valor);
	if (d->fine)
		perc_object(g, "multa", COBV_MULTA_PERCENTUAL, d->fine);
	if (d->interest)
		perc_object(g, "juros", COBV_JUROS_PERCENTUAL_MES, d->interest);
	if (d->discount) {
		json_str(g, "desconto");
		json_open(g);
		json_str(g, "modalidade");
		json_int(g, COBV_DESCONTO_VALOR_FIXO);
		json_str(g, "descontoDataFixa");
		json_open_array(g);
		json_open(g);
		json_str(g, "data");
		json_str(g, d->discount_until);
		json_str(g, "valorPerc");
		snprintf(valor, sizeof(valor), "%lld.%02lld", (long long)(d->discount / 100),
			 (long long)(d->discount % 100));
		json_str(g, valor);
		json_close(g);
		json_close_array(g);
		json_close(g);
	}
	json_close(g);
	json_str(g, "chave");
	json_str(g, pix_key);
	if (in->comment) {
		json_str(g, "solicitacaoPagador");
		json_str(g, in->comment);
	}
	json_close(g);
	return json_take(g);
}

/* What the merchant reads when the bank refuses pixrelay's own credentials
 * (401 after a fresh token, or 403): `why` holds the bank's refusal and gets
 * what to do appended, cut to `size`. */
static void credentials_refused(char *why, size_t size, const char *conn, const char *then)
{
	size_t n = strlen(why);

	snprintf(why + n, size - n,
		 "; the bank does not accept pixrelay's credentials for bank connection %s: "
		 "nothing was done there; once an operator has fixed them (pixrelay bank show "
		 "%s), %s",
		 conn, conn, then);
}

static void on_stored(void *ud, int result, const char *json, const char *err)
{
	answer(ud, result, json, err);
}

static void on_cob(void *ud, long status, const char *body, const char *err)
{
	struct job *j = ud;
	const struct bankcharges *b = j->b;
	struct cobcheck_asked asked = {j->id, j->pix_key, j->in.amount, j->in.expiration,
				       charge_has_due(&j->in) ? &j->in.due : NULL};
	char why[1024], *code = NULL;
	size_t n;

	if (status == 0 || status >= 500 || status == 429) {
		log_warn("charge %s at the bank of %s: %s", j->id, j->creds.conn,
			 err ? err : "the bank is unavailable");
		metrics_bank_charge("unavailable");
		snprintf(why, sizeof(why),
			 "the bank did not answer: retry with the same externalID");
		answer(j, BANKCHARGES_UNAVAILABLE, why, NULL);
		return;
	}
	if (status == 401 || status == 403) {
		/* not the merchant's request: the bank refuses pixrelay's credentials
		 * (after one fresh token) or their scope; the id stays reserved */
		bankapi_refusal(why, sizeof(why), "charge", status, body);
		log_error("charge %s at the bank of %s: %s", j->id, j->creds.conn, why);
		metrics_bank_charge("unavailable");
		credentials_refused(why, sizeof(why), j->creds.conn,
				    "retry with the same externalID");
		answer(j, BANKCHARGES_UNAVAILABLE, why, NULL);
		return;
	}
	if (status != 200 && status != 201) {
		bankapi_refusal(why, sizeof(why), "charge", status, body);
		metrics_bank_charge("refused");
		charges_unreserve(b->r, b->cfg, j->account, j->in.external_id);
		answer(j, BANKCHARGES_REFUSED, why, NULL);
		return;
	}
	/* what the payer will pay must be what the merchant asked: a cob of
	 * another key, amount or txid is no answer (the id stays reserved: a
	 * retry puts the same cob again) */
	n = (size_t)snprintf(why, sizeof(why), "the bank's answer does not match the charge: ");
	if (cobcheck_answer(&asked, body, body ? strlen(body) : 0, &code, why + n,
			    sizeof(why) - n) != 0) {
		log_error("charge %s at the bank of %s: %s", j->id, j->creds.conn, why);
		metrics_bank_charge("mismatch");
		snprintf(why + strlen(why), sizeof(why) - strlen(why), "; nothing was stored");
		answer(j, BANKCHARGES_UNAVAILABLE, why, NULL);
		return;
	}
	metrics_bank_charge("created");
	charges_create_at(b->r, b->cfg, j->env, j->account, &j->in, j->id, code, on_stored, j);
	free(code);
}

/* The provider's answer to a charge created there (provcharges.c). */
static void on_provider_charge(void *ud, int result, const char *text)
{
	struct job *j = ud;

	if (result != 0) {
		if (result == BANKCHARGES_REFUSED)
			charges_unreserve(j->b->r, j->b->cfg, j->account, j->in.external_id);
		answer(j, result, text, NULL);
		return;
	}
	charges_create_at(j->b->r, j->b->cfg, j->env, j->account, &j->in, j->id, text, on_stored,
			  j);
}

static void on_reserved(void *ud, int result, const char *json, const char *err)
{
	struct job *j = ud;
	char *body, *path;

	if (result != 0) {
		answer(j, result, json, err);
		return;
	}
	snprintf(j->id, sizeof(j->id), "%s", json);
	if (j->provider != PROVIDER_API_PIX) {
		provcharges_create(j->b->bankapi, &j->creds, j->provider, j->id, &j->in,
				   on_provider_charge, j);
		return;
	}
	if (charge_has_due(&j->in)) {
		/* a charge with a due date: the standard's cobv */
		body = bankcharges_cobv_body(&j->in, j->pix_key);
		path = mem_printf("/cobv/%s", j->id);
	} else {
		body = bankcharges_cob_body(&j->in, j->pix_key);
		path = mem_printf("/cob/%s", j->id);
	}
	bankapi_call(j->b->bankapi, &j->creds, "PUT", path, body, on_cob, j);
	free(path);
	free(body);
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
	    banks_open_credentials(c->id, &c->api, seal_keyfile_get(j->b->keys), &j->creds, why,
				   sizeof(why)) != 0) {
		/* named by the account but unusable: say so, create nothing */
		if (result != 0 || c->env != j->env || strcmp(c->account, j->account) != 0)
			snprintf(why, sizeof(why), "no such connection");
		log_error("charges of account %s: bank connection: %s", j->account, why);
		answer(j, BANKCHARGES_UNAVAILABLE,
		       "the account's bank connection cannot be used now (see pixrelay bank show)",
		       NULL);
		return;
	}
	snprintf(j->pix_key, sizeof(j->pix_key), "%s", c->pix_key);
	j->provider = c->provider;
	if (j->provider != PROVIDER_API_PIX && charge_has_due(&j->in)) {
		snprintf(why, sizeof(why),
			 "the account's charges go to %s, which pixrelay creates charges without a "
			 "due date at; a charge with a due date needs a bank connection "
			 "(docs/providers.md)",
			 provider_name(j->provider));
		answer(j, BANKCHARGES_REFUSED, why, NULL);
		return;
	}
	charges_reserve(j->b->r, j->b->cfg, j->env, j->account, &j->in, on_reserved, j);
}

/* The charge made here, its static BR Code for `pix_key`. */
static void create_here(struct job *j, const char *pix_key)
{
	charges_create(j->b->r, j->b->cfg, j->env, j->account, &j->in, pix_key, j->cb, j->ud);
	job_free(j);
}

/* Where the charge goes, once the account's charging connection is known
 * (docs/banks.md, "The key on the QR"): its bank when it has API
 * credentials; else a static BR Code of its Pix key. Without one: 409 when
 * it has several none of which is the default; in production, only the
 * platform account may use the pix-key setting, and no other charge is
 * made that no bank would receive; the sandbox keeps pix-key, or the
 * account's own key. */
static void charge_by(struct job *j, const char *via, const char *key, const char *bank_api)
{
	const struct config *cfg = j->b->cfg;
	char why[512];

	if (bank_api[0]) {
		banks_get(j->b->r, cfg, bank_api, on_connection, j);
		return;
	}
	if (strcmp(via, BANKS_VIA_MANY) == 0) {
		snprintf(why, sizeof(why),
			 "the account has several bank connections in %s and none is its "
			 "default: mark the one its charges go to (pixrelay bank update ID "
			 "--default; pixrelay bank list --env %s --account %s lists them)",
			 env_name(j->env), env_name(j->env), j->account);
		answer(j, BANKCHARGES_NO_CHARGING, why, NULL);
		return;
	}
	if (j->env == ENV_PRODUCTION && charge_has_due(&j->in)) {
		snprintf(why, sizeof(why),
			 "a charge with a due date is created at the bank (PUT /cobv), and the "
			 "account's charging connection has no API credentials: a static BR Code "
			 "carries no due date; give the connection the bank's API credentials "
			 "(pixrelay bank credentials ID ...; docs/due-dates.md)");
		answer(j, BANKCHARGES_NO_CHARGING, why, NULL);
		return;
	}
	if (strcmp(via, BANKS_VIA_NONE) != 0) {
		create_here(j, key);
		return;
	}
	if (j->env == ENV_PRODUCTION && !(j->platform && cfg->pix_key[0])) {
		snprintf(why, sizeof(why),
			 "no bank would receive this charge's Pix: the account has no bank "
			 "connection in production; connect the bank of its Pix key first "
			 "(pixrelay bank connect --env production --account %s --chave KEY ..., or "
			 "POST /v1/bank/connections; docs/banks.md)%s",
			 j->account, j->platform ? " or set pix-key" : "");
		answer(j, BANKCHARGES_NO_CHARGING, why, NULL);
		return;
	}
	if (!cfg->pix_key[0] && !j->own_key[0]) {
		answer(j, -1, NULL, "the account has no Pix key");
		return;
	}
	create_here(j, cfg->pix_key[0] ? cfg->pix_key : j->own_key);
}

static void on_charging(void *ud, int result, const struct banks_charging *ch, const char *err)
{
	struct job *j = ud;

	if (result != 0) {
		answer(j, -1, NULL, err);
		return;
	}
	charge_by(j, ch->via, ch->key, ch->bank_api);
}

static void on_account(void *ud, int result, const struct accounts_info *info, const char *err)
{
	struct job *j = ud;

	if (result < 0) {
		answer(j, -1, NULL, err);
		return;
	}
	if (result != 0 || info->env != j->env) {
		answer(j, -1, NULL, "the account has no Pix key");
		return;
	}
	j->platform = info->platform;
	snprintf(j->own_key, sizeof(j->own_key), "%s", info->pix_key);
	if (!info->charge_via[0]) {
		/* a record of a version before the charging connection */
		banks_charging(j->b->r, j->b->cfg, j->env, j->account, on_charging, j);
		return;
	}
	charge_by(j, info->charge_via, info->charge_key, info->bank_api);
}

void bankcharges_create(const struct bankcharges *b, enum env env, const char *account,
			const struct charge_input *in, store_fn cb, void *ud)
{
	struct job *j = mem_new(struct job);

	j->b = b;
	j->env = env;
	snprintf(j->account, sizeof(j->account), "%s", account);
	j->in.amount = in->amount;
	j->in.expiration = in->expiration;
	j->in.external_id = mem_strdup_or_null(in->external_id);
	j->in.comment = mem_strdup_or_null(in->comment);
	j->in.name = mem_strdup_or_null(in->name);
	j->in.email = mem_strdup_or_null(in->email);
	j->in.phone = mem_strdup_or_null(in->phone);
	j->in.document = mem_strdup_or_null(in->document);
	j->in.postback_url = mem_strdup_or_null(in->postback_url);
	j->in.due = in->due;
	j->cb = cb;
	j->ud = ud;
	accounts_lookup(b->r, b->cache, b->cfg, account, on_account, j);
}

/* ---- refunds at the bank ---- */

struct refund {
	const struct bankcharges *b;
	enum env env;
	char account[32];
	char id[32];
	int64_t amount;
	char *event_out;
	store_fn cb;
	void *ud;
	char *charge; /* the charge's JSON */
	char e2e[40];
	char conn[40];
	char valor[32];
	int64_t cents;		/* what goes back */
	enum provider provider; /* the connection's */
	char payment[72];	/* a provider's payment id ("" none) */
	struct bank_creds creds;
};

static void refund_free(struct refund *f)
{
	free(f->charge);
	bank_creds_wipe(&f->creds);
	free(f);
}

static void refund_answer(struct refund *f, int result, const char *json, const char *err)
{
	f->cb(f->ud, result, json, err);
	refund_free(f);
}

/* The answer to a refund asked: {"charge", "refund": {"id", "status",
 * "valor"}} (status: the bank's, or EM_PROCESSAMENTO). */
static void refund_requested(struct refund *f, const char *st)
{
	yajl_gen g = json_gen_new();
	char rid[40], *out;

	snprintf(rid, sizeof(rid), "D%s", f->id);
	json_open(g);
	json_str(g, "charge");
	json_raw(g, f->charge, strlen(f->charge));
	json_str(g, "refund");
	json_open(g);
	json_str(g, "id");
	json_str(g, rid);
	json_str(g, "status");
	json_str(g, st ? st : "EM_PROCESSAMENTO");
	json_str(g, "valor");
	json_str(g, f->valor);
	json_close(g);
	json_close(g);
	out = json_take(g);
	refund_answer(f, BANKCHARGES_REQUESTED, out, NULL);
	free(out);
}

static void on_devolucao(void *ud, long status, const char *body, const char *err)
{
	struct refund *f = ud;
	yajl_val v = NULL;
	char why[1024], perr[64], rid[40];
	const char *st = NULL;

	if (status == 0 || status >= 500 || status == 429) {
		log_warn("refund of charge %s at the bank of %s: %s", f->id, f->conn,
			 err ? err : "the bank is unavailable");
		refund_answer(f, BANKCHARGES_UNAVAILABLE,
			      "the bank did not answer: ask for the refund again (the same refund "
			      "id is sent)",
			      NULL);
		return;
	}
	if (status == 401 || status == 403) {
		bankapi_refusal(why, sizeof(why), "refund", status, body);
		log_error("refund of charge %s at the bank of %s: %s", f->id, f->conn, why);
		credentials_refused(why, sizeof(why), f->conn,
				    "ask for the refund again (the same refund id is sent)");
		refund_answer(f, BANKCHARGES_UNAVAILABLE, why, NULL);
		return;
	}
	if (status != 200 && status != 201) {
		bankapi_refusal(why, sizeof(why), "refund", status, body);
		refund_answer(f, BANKCHARGES_REFUSED, why, NULL);
		return;
	}
	if (body && json_parse_object(body, strlen(body), &v, perr, sizeof(perr)) == 0)
		st = YAJL_GET_STRING(json_get(v, "status"));
	snprintf(rid, sizeof(rid), "D%s", f->id);
	/* until the bank reports it settled, the reconciliation asks about it */
	if (!st || strcmp(st, "EM_PROCESSAMENTO") == 0)
		banks_refund_asked(f->b->r, f->b->cfg, f->conn, f->e2e, rid, NULL, NULL);
	refund_requested(f, st);
	yajl_tree_free(v);
}

/* A provider took the refund (provcharges.c): in process until its
 * notification or the reconciliation's list says it went back. */
static void on_provider_refund(void *ud, int result, const char *text)
{
	struct refund *f = ud;

	if (result != 0) {
		refund_answer(f, result, text, NULL);
		return;
	}
	refund_requested(f, NULL);
}

static void on_refund_connection(void *ud, int result, const struct banks_conn *c, const char *err)
{
	struct refund *f = ud;
	char why[256], *path, *body;

	if (result < 0) {
		refund_answer(f, -1, NULL, err);
		return;
	}
	if (result != 0 || !c->api.api_url || (c->provider == PROVIDER_API_PIX && !f->e2e[0])) {
		/* paid at a bank pixrelay has no API credentials for (or a
		 * connection gone): the money is at the bank */
		refund_answer(f, BANKCHARGES_AT_BANK_ONLY, f->conn, NULL);
		return;
	}
	if (banks_open_credentials(c->id, &c->api, seal_keyfile_get(f->b->keys), &f->creds, why,
				   sizeof(why)) != 0) {
		log_error("refund of charge %s: bank connection %s: %s", f->id, f->conn, why);
		refund_answer(f, BANKCHARGES_UNAVAILABLE,
			      "the charge's bank connection cannot be used now (see pixrelay bank "
			      "show)",
			      NULL);
		return;
	}
	if (c->provider != PROVIDER_API_PIX) {
		f->provider = c->provider;
		provcharges_refund(f->b->bankapi, &f->creds, c->provider, f->id, f->payment,
				   f->cents, on_provider_refund, f);
		return;
	}
	body = mem_printf("{\"valor\":\"%s\"}", f->valor);
	path = mem_printf("/pix/%s/devolucao/D%s", f->e2e, f->id);
	bankapi_call(f->b->bankapi, &f->creds, "PUT", path, body, on_devolucao, f);
	free(path);
	free(body);
}

static void on_refund_charge(void *ud, int result, const char *json, const char *err)
{
	struct refund *f = ud;
	yajl_val v = NULL, pix;
	char perr[64], amount[32] = "";
	const char *status, *e2e, *conn, *valor;
	int64_t cents = 0, paid = 0;

	if (result != 0 || json_parse_object(json, strlen(json), &v, perr, sizeof(perr)) < 0) {
		if (result == 0)
			result = -1, err = "unexpected charge JSON";
		refund_answer(f, result, json, err);
		return;
	}
	pix = json_get(v, "pix");
	status = YAJL_GET_STRING(json_get(v, "status"));
	e2e = YAJL_GET_STRING(json_get(pix, "endToEndId"));
	conn = YAJL_GET_STRING(json_get(pix, "connection"));
	json_is_int64(json_get(v, "amount"), &cents);
	/* a provider's Pix may have no standard endToEndId: its connection
	 * refunds it by the charge */
	if (!e2e && YAJL_IS_OBJECT(json_get(pix, "provider")))
		e2e = "";
	if (!YAJL_IS_OBJECT(pix) || !e2e || !conn || !status || strcmp(status, "PAID") != 0 ||
	    (f->amount && f->amount != cents)) {
		/* not paid through a bank (or no longer PAID, or another amount):
		 * the state machine answers as it always did */
		yajl_tree_free(v);
		if (f->amount)
			snprintf(amount, sizeof(amount), "%lld", (long long)f->amount);
		charges_transition(f->b->r, f->b->cfg, f->env, f->account, f->id, CHARGES_REFUND,
				   amount[0] ? amount : NULL, f->event_out, f->cb, f->ud);
		refund_free(f);
		return;
	}
	snprintf(f->e2e, sizeof(f->e2e), "%s", e2e);
	snprintf(f->conn, sizeof(f->conn), "%s", conn);
	/* a provider's payment there (Asaas refunds by it) */
	if (YAJL_GET_STRING(json_get(json_get(pix, "provider"), "paymentId")))
		snprintf(f->payment, sizeof(f->payment), "%s",
			 YAJL_GET_STRING(json_get(json_get(pix, "provider"), "paymentId")));
	/* what the Pix carried goes back: a charge with a due date was paid
	 * its fine and interest, or less its discount */
	valor = YAJL_GET_STRING(json_get(pix, "valor"));
	if (!valor || bankpix_valor_cents(valor, &paid) < 0 || paid < 1)
		paid = cents;
	snprintf(f->valor, sizeof(f->valor), "%lld.%02lld", (long long)(paid / 100),
		 (long long)(paid % 100));
	f->cents = paid;
	f->charge = mem_strdup(json);
	yajl_tree_free(v);
	banks_get(f->b->r, f->b->cfg, f->conn, on_refund_connection, f);
}

void bankcharges_refund(const struct bankcharges *b, enum env env, const char *account,
			const char *id, int64_t amount, char *event_out, store_fn cb, void *ud)
{
	struct refund *f = mem_new(struct refund);

	f->b = b;
	f->env = env;
	snprintf(f->account, sizeof(f->account), "%s", account);
	snprintf(f->id, sizeof(f->id), "%s", id);
	f->amount = amount;
	f->event_out = event_out;
	f->cb = cb;
	f->ud = ud;
	charges_get(b->r, b->cfg, env, account, id, on_refund_charge, f);
}
