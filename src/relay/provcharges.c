/* provcharges: charges and refunds at a payment provider (provcharges.h). */
#include "pixrelay/relay/provcharges.h"

#include "pixrelay/core/log.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/metrics.h"
#include "pixrelay/pix/brcode.h"
#include "pixrelay/pix/woovi.h"
#include "pixrelay/relay/bankapi.h"
#include "pixrelay/relay/bankcharges.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One charge or refund at a provider, from the first call to cb. */
struct job {
	struct bankapi *api;
	struct bank_creds creds;
	enum provider provider;
	char id[32];
	int64_t cents;
	provcharges_fn cb;
	void *ud;
};

static struct job *job_new(struct bankapi *api, const struct bank_creds *creds, enum provider p,
			   const char *id, int64_t cents, provcharges_fn cb, void *ud)
{
	struct job *j = mem_new(struct job);

	j->api = api;
	bank_creds_copy(&j->creds, creds);
	j->provider = p;
	snprintf(j->id, sizeof(j->id), "%s", id);
	j->cents = cents;
	j->cb = cb;
	j->ud = ud;
	return j;
}

static void done(struct job *j, int result, const char *text)
{
	j->cb(j->ud, result, text);
	bank_creds_wipe(&j->creds);
	free(j);
}

/* An answer that is no answer (none, 5xx, 429) or refuses pixrelay's own
 * token (401, 403): 1 with the job done (UNAVAILABLE); 0 otherwise. */
static int unavailable(struct job *j, const char *what, long status, const char *body,
		       const char *err)
{
	char why[1024];
	const char *name = provider_name(j->provider);

	if (status != 0 && status < 500 && status != 429 && status != 401 && status != 403)
		return 0;
	if (status)
		bankapi_refusal(why, sizeof(why), what, status, body);
	log_warn("%s of charge %s at %s for %s: %s", what, j->id, name, j->creds.conn,
		 status ? why
		 : err	? err
			: "no answer");
	if (strcmp(what, "charge") == 0)
		metrics_bank_charge("unavailable");
	snprintf(why, sizeof(why),
		 status == 401 || status == 403
		     ? "%s refuses the connection's API token: nothing was done; once an operator "
		       "has fixed it (pixrelay bank show), ask again"
		     : "%s did not answer: ask again (the same request is sent)",
		 name);
	done(j, BANKCHARGES_UNAVAILABLE, why);
	return 1;
}

/* ---- create ---- */

/* The provider's code held against the charge: 0, or -1 with why. */
static int code_matches(const char *code, int64_t cents, char *why, size_t size)
{
	struct brcode_decoded d;

	if (brcode_decode(code, &d, why, size) < 0)
		return -1;
	if (d.amount_cents != cents) {
		snprintf(why, size, "its BR Code carries another amount");
		return -1;
	}
	return 0;
}

/* A create's answer that does not do: logged, UNAVAILABLE (nothing stored). */
static void mismatch(struct job *j, const char *why)
{
	char out[1100];

	snprintf(out, sizeof(out), "%s's answer does not match the charge: %s; nothing was stored",
		 provider_name(j->provider), why);
	log_error("charge %s at %s for %s: %s", j->id, provider_name(j->provider), j->creds.conn,
		  out);
	metrics_bank_charge("mismatch");
	done(j, BANKCHARGES_UNAVAILABLE, out);
}

/* Woovi's answer to POST /api/v1/charge: the charge it made (or had made
 * for this correlationID). */
static void on_woovi_charge(void *ud, long status, const char *body, const char *err)
{
	struct job *j = ud;
	struct woovi_created made = {0};
	char why[1024] = "";

	if (unavailable(j, "charge", status, body, err))
		return;
	if (status != 200 && status != 201) {
		bankapi_refusal(why, sizeof(why), "charge", status, body);
		metrics_bank_charge("refused");
		done(j, BANKCHARGES_REFUSED, why);
		return;
	}
	if (woovi_charge_created(body, body ? strlen(body) : 0, &made, why, sizeof(why)) < 0) {
		mismatch(j, why);
		return;
	}
	if (strcmp(made.correlation, j->id) != 0 || made.cents != j->cents) {
		snprintf(why, sizeof(why), "another correlationID or value than %s, %lld", j->id,
			 (long long)j->cents);
		woovi_created_deinit(&made);
		mismatch(j, why);
		return;
	}
	if (code_matches(made.br_code, j->cents, why, sizeof(why)) < 0) {
		woovi_created_deinit(&made);
		mismatch(j, why);
		return;
	}
	metrics_bank_charge("created");
	j->cb(j->ud, 0, made.br_code);
	woovi_created_deinit(&made);
	bank_creds_wipe(&j->creds);
	free(j);
}

void provcharges_create(struct bankapi *api, const struct bank_creds *creds, enum provider p,
			const char *id, const struct charge_input *in, provcharges_fn cb, void *ud)
{
	struct job *j = job_new(api, creds, p, id, in->amount, cb, ud);
	char *body;

	switch (p) {
	case PROVIDER_WOOVI:
		/* idempotent on the correlationID: a retry gets the same charge */
		body = woovi_charge_body(id, in->amount, in->expiration, in->comment);
		bankapi_call(api, &j->creds, "POST", "/api/v1/charge?return_existing=true", body,
			     on_woovi_charge, j);
		free(body);
		return;
	default:
		done(j, BANKCHARGES_UNAVAILABLE, "no charges are made at this provider");
	}
}

/* ---- refund ---- */

static void on_refund(void *ud, long status, const char *body, const char *err)
{
	struct job *j = ud;
	char why[1024];

	if (unavailable(j, "refund", status, body, err))
		return;
	if (status != 200 && status != 201) {
		bankapi_refusal(why, sizeof(why), "refund", status, body);
		done(j, BANKCHARGES_REFUSED, why);
		return;
	}
	done(j, 0, NULL);
}

void provcharges_refund(struct bankapi *api, const struct bank_creds *creds, enum provider p,
			const char *id, const char *payment, int64_t cents, provcharges_fn cb,
			void *ud)
{
	struct job *j = job_new(api, creds, p, id, cents, cb, ud);
	char rid[40], *body, *path;

	(void)payment;
	switch (p) {
	case PROVIDER_WOOVI:
		/* idempotent on the refund's own correlationID, D + the charge's id */
		snprintf(rid, sizeof(rid), "D%s", id);
		body = woovi_refund_body(rid, cents);
		path = mem_printf("/api/v1/charge/%s/refund", id);
		bankapi_call(api, &j->creds, "POST", path, body, on_refund, j);
		free(path);
		free(body);
		return;
	default:
		done(j, BANKCHARGES_UNAVAILABLE, "no refunds are asked of this provider");
	}
}
