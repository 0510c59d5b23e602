/* provfetch: a provider's payment read with the connection's API token
 * (provfetch.h). */
#include "pixrelay/relay/provfetch.h"

#include "pixrelay/core/log.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/seal.h"
#include "pixrelay/pix/asaas.h"
#include "pixrelay/pix/mercadopago.h"
#include "pixrelay/pix/woovi.h"
#include "pixrelay/relay/bankapi.h"
#include "pixrelay/store/banks_conn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fetch {
	const struct bankcharges *b;
	enum provider provider;
	char *transaction, *charge;
	struct bank_creds creds;
	provfetch_fn cb;
	void *ud;
};

static void fetch_done(struct fetch *f, int result, struct bankpix_batch *batch, const char *err)
{
	f->cb(f->ud, result, batch, err);
	free(f->transaction);
	free(f->charge);
	bank_creds_wipe(&f->creds);
	free(f);
}

static void on_answer(void *ud, long status, const char *body, const char *err)
{
	struct fetch *f = ud;
	struct bankpix_batch batch = {0};
	char why[400];
	bool more = false;
	int rc;

	if (status == 404) {
		fetch_done(f, PROVFETCH_NOT_THEIRS, NULL, NULL);
		return;
	}
	if (status != 200 || !body) {
		if (status)
			bankapi_problem(why, sizeof(why), status, body);
		else
			snprintf(why, sizeof(why), "%s", err ? err : "no answer");
		fetch_done(f, -1, NULL, why);
		return;
	}
	if (f->provider == PROVIDER_ASAAS)
		rc = asaas_payment_parse(body, strlen(body), &batch, why, sizeof(why));
	else if (f->provider == PROVIDER_MERCADOPAGO)
		rc = mp_payment_parse(body, strlen(body), &batch, why, sizeof(why));
	else if (f->charge)
		rc = woovi_transactions_parse(body, strlen(body), &batch, &more, why, sizeof(why));
	else
		rc = woovi_transaction_parse(body, strlen(body), &batch, why, sizeof(why));
	if (rc < 0) {
		fetch_done(f, -1, NULL, why);
		return;
	}
	fetch_done(f, 0, &batch, NULL);
	bankpix_batch_deinit(&batch);
}

static void on_conn(void *ud, int result, const struct banks_conn *c, const char *err)
{
	struct fetch *f = ud;
	char why[256], *path, *esc;
	int rc;

	if (result != 0) {
		fetch_done(f, result < 0 ? -1 : PROVFETCH_NOT_THEIRS, NULL,
			   err ? err : "no such connection");
		return;
	}
	rc = banks_open_credentials(c->id, &c->api, seal_keyfile_get(f->b->keys), &f->creds, why,
				    sizeof(why));
	if (rc == BANKS_NO_API) {
		fetch_done(f, PROVFETCH_NO_API, NULL, NULL);
		return;
	}
	if (rc != 0) {
		log_error("bank connection %s: %s", c->id, why);
		fetch_done(f, -1, NULL, why);
		return;
	}
	esc = bank_creds_escape(f->charge ? f->charge : f->transaction);
	if (f->provider == PROVIDER_ASAAS)
		path = mem_printf("/payments/%s", esc);
	else if (f->provider == PROVIDER_MERCADOPAGO)
		path = mem_printf("/v1/payments/%s", esc);
	else if (f->charge)
		path = mem_printf("/api/v1/transaction?charge=%s&skip=0&limit=100", esc);
	else
		path = mem_printf("/api/v1/transaction/%s", esc);
	bankapi_call(f->b->bankapi, &f->creds, "GET", path, NULL, on_answer, f);
	free(path);
	free(esc);
}

static void fetch(const struct bankcharges *b, enum provider p, const char *conn,
		  const char *transaction, const char *charge, provfetch_fn cb, void *ud)
{
	struct fetch *f = mem_new(struct fetch);

	f->b = b;
	f->provider = p;
	f->transaction = mem_strdup_or_null(transaction);
	f->charge = mem_strdup_or_null(charge);
	f->cb = cb;
	f->ud = ud;
	banks_get(b->r, b->cfg, conn, on_conn, f);
}

void provfetch_woovi(const struct bankcharges *b, const char *conn, const char *transaction,
		     const char *charge, provfetch_fn cb, void *ud)
{
	fetch(b, PROVIDER_WOOVI, conn, transaction, charge, cb, ud);
}

void provfetch_asaas(const struct bankcharges *b, const char *conn, const char *payment,
		     provfetch_fn cb, void *ud)
{
	fetch(b, PROVIDER_ASAAS, conn, payment, NULL, cb, ud);
}

void provfetch_mp(const struct bankcharges *b, const char *conn, const char *payment,
		  provfetch_fn cb, void *ud)
{
	fetch(b, PROVIDER_MERCADOPAGO, conn, payment, NULL, cb, ud);
}
