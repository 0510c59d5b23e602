/* cli_trigger_cobr: `pixrelay trigger cobr.paid|cobr.failed|cobr.retry`
 * (docs/recurrences.md): a recurring charge of the account (--charge, else
 * its newest) and its recurrence read through the API, then the bank's
 * standard /cobr callback sent through the bank receiver's own path
 * (simulate-pix of the recurrence's sandbox connection, which reads the
 * body's top key), so that its events reach the postbackUrl and every
 * `pixrelay listen`. The rest of `trigger` is cli_trigger.c. */
#include "cli_int.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/timefmt.h"
#include "pixrelay/core/validate.h"
#include "pixrelay/pix/chargedue.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PAID, FAILED, RETRY };

static const struct {
	const char *what, *events;
} kinds[] = {
    {"paid", "EVENT:CHARGE_PAID"},
    {"failed", "EVENT:CHARGE_FAILED"},
    {"retry", "EVENT:CHARGE_RETRY_SCHEDULED"},
};

/* A date `days` after `date` (YYYY-MM-DD), into out. */
static void date_after(char out[11], const char *date, int days)
{
	char t[32];

	/* noon of that day, UTC: its Brasilia day too */
	timefmt_rfc3339(t, (uint64_t)(chargedue_day(date) + days) * 86400000ULL + 43200000ULL);
	snprintf(out, 11, "%.10s", t);
}

/* The charge to trigger: `id`, else the newest recurring charge of the
 * account's last 100. 0 with *out (yajl_tree_free it and *holder), or -1. */
static int find_charge(const char *base, const char *key, const char *account, const char *id,
		       yajl_val *holder, yajl_val *out)
{
	yajl_val data = NULL, list;
	char *path = id ? mem_printf("/charge/pix/%s", id) : mem_strdup("/charges?limit=100");
	int rc = cli_trigger_step(base, key, account, "GET", path, NULL, NULL, &data);

	free(path);
	if (rc < 0)
		return -1;
	*out = NULL;
	if (id) {
		*out = data;
	} else {
		list = json_get(data, "charges");
		for (size_t i = 0; YAJL_IS_ARRAY(list) && i < list->u.array.len && !*out; i++)
			if (YAJL_GET_STRING(json_get(list->u.array.values[i], "recurrence")))
				*out = list->u.array.values[i];
	}
	if (!*out || !YAJL_GET_STRING(json_get(*out, "recurrence")) ||
	    !YAJL_GET_STRING(json_get(*out, "dueDate"))) {
		fprintf(stderr,
			"pixrelay trigger: %s: create one first (POST "
			"/v1/recurrences/{id}/charges, docs/recurrences.md)\n",
			id ? "the charge is not a recurring charge"
			   : "the account has no recurring "
			     "charge");
		yajl_tree_free(data);
		return -1;
	}
	*holder = data;
	return 0;
}

/* The /cobr callback body of `k` for charge txid of idRec, amount cents,
 * due date `due`, retry on `retry`: malloc'd. */
static char *callback_body(int k, const char *txid, const char *idrec, long long amount,
			   const char *due, const char *retry)
{
	char at[32], e2e[40], stamp[16];
	const char *alnum = "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char r[11];

	timefmt_rfc3339(at, ids_now_ms());
	/* an endToEndId: E, the payer's ISPB, yyyyMMddHHmm, 11 characters */
	ids_random(r, sizeof(r));
	snprintf(stamp, sizeof(stamp), "%.4s%.2s%.2s%.2s%.2s", at, at + 5, at + 8, at + 11,
		 at + 14);
	snprintf(e2e, sizeof(e2e), "E12345678%s", stamp);
	for (size_t i = 0; i < sizeof(r); i++)
		e2e[21 + i] = alnum[r[i] % 36];
	e2e[32] = '\0';
	if (k == PAID)
		return mem_printf(
		    "{\"cobsr\":[{\"idRec\":\"%s\",\"txid\":\"%s\",\"status\":\"CONCLUIDA\","
		    "\"atualizacao\":[{\"status\":\"CONCLUIDA\",\"data\":\"%s\"}],"
		    "\"pix\":[{\"endToEndId\":\"%s\",\"txid\":\"%s\",\"valor\":\"%lld.%02lld\","
		    "\"horario\":\"%s\"}]}]}",
		    idrec, txid, at, e2e, txid, amount / 100, amount % 100, at);
	if (k == FAILED)
		return mem_printf(
		    "{\"cobsr\":[{\"idRec\":\"%s\",\"txid\":\"%s\",\"status\":\"ATIVA\","
		    "\"atualizacao\":[{\"status\":\"ATIVA\",\"data\":\"%s\"}],"
		    "\"tentativas\":[{\"dataLiquidacao\":\"%s\",\"tipo\":\"AGND\",\"endToEndId\":"
		    "\"%s\",\"status\":\"REJEITADA\",\"atualizacao\":[{\"status\":\"REJEITADA\","
		    "\"data\":\"%s\"}],\"rejeicao\":{\"codigo\":\"AM02\",\"descricao\":\"pixrelay "
		    "trigger: failed\"}}]}]}",
		    idrec, txid, at, due, e2e, at);
	return mem_printf("{\"cobsr\":[{\"idRec\":\"%s\",\"txid\":\"%s\",\"status\":\"ATIVA\","
			  "\"atualizacao\":[{\"status\":\"ATIVA\",\"data\":\"%s\"}],"
			  "\"tentativas\":[{\"dataLiquidacao\":\"%s\",\"tipo\":\"NTAG\","
			  "\"endToEndId\":\"%s\",\"status\":\"AGENDADA\",\"atualizacao\":[{"
			  "\"status\":\"AGENDADA\",\"data\":\"%s\"}]}]}]}",
			  idrec, txid, at, retry, e2e, at);
}

int cli_trigger_cobr(const struct config *cfg, const struct cli_args *a, const char *key,
		     const char *what, const char *id, const char *date)
{
	char base[512], txid[40] = "", idrec[40] = "", conn[64] = "", due[11] = "", retry[11] = "";
	char *path = NULL, *body = NULL;
	yajl_val data = NULL, holder = NULL, one, list;
	const char *outcome = NULL;
	int64_t amount = 0;
	int k = -1, rc = 1;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(what, kinds[i].what) == 0)
			k = (int)i;
	if (k < 0) {
		fprintf(stderr,
			"pixrelay trigger: unknown event 'cobr.%s': cobr.paid, cobr.failed "
			"or cobr.retry\n",
			what);
		return 2;
	}
	if (date &&
	    (k != RETRY || strlen(date) != 10 || validate_date(date, NULL, NULL, NULL) < 0)) {
		fprintf(stderr, "pixrelay trigger: --date is cobr.retry's day, YYYY-MM-DD\n");
		return 2;
	}
	cli_base_url(cfg, base, sizeof(base));
	if (find_charge(base, key, a->account, id, &holder, &one) < 0)
		return 1;
	snprintf(txid, sizeof(txid), "%s", YAJL_GET_STRING(json_get(one, "id")));
	snprintf(due, sizeof(due), "%s", YAJL_GET_STRING(json_get(one, "dueDate")));
	json_is_int64(json_get(one, "amount"), &amount);
	path = mem_printf("/recurrences/%s", YAJL_GET_STRING(json_get(one, "recurrence")));
	yajl_tree_free(holder);
	if (cli_trigger_step(base, key, a->account, "GET", path, NULL, NULL, &data) < 0)
		goto done;
	if (!YAJL_GET_STRING(json_get(data, "idRec")) ||
	    !YAJL_GET_STRING(json_get(data, "connection"))) {
		fprintf(stderr, "pixrelay trigger: the charge's recurrence does not read\n");
		goto done;
	}
	snprintf(idrec, sizeof(idrec), "%s", YAJL_GET_STRING(json_get(data, "idRec")));
	snprintf(conn, sizeof(conn), "%s", YAJL_GET_STRING(json_get(data, "connection")));
	yajl_tree_free(data);
	data = NULL;
	if (date)
		snprintf(retry, sizeof(retry), "%s", date);
	else
		date_after(retry, due, 2);
	body = callback_body(k, txid, idrec, (long long)amount, due, retry);
	free(path);
	path = mem_printf("/bank/connections/%s/simulate-pix", conn);
	if (cli_trigger_step(base, key, a->account, "POST", path, body, NULL, &data) < 0)
		goto done;
	list = json_get(data, "cobsr");
	one = YAJL_IS_ARRAY(list) && list->u.array.len == 1 ? list->u.array.values[0] : NULL;
	outcome = one ? YAJL_GET_STRING(json_get(one, "outcome")) : NULL;
	if (k == PAID && outcome && strcmp(outcome, "duplicate") == 0)
		outcome = "taken"; /* its Pix pays it: the status alone said nothing new */
	if (a->json)
		printf("{\"charge\":\"%s\",\"idRec\":\"%s\",\"connection\":\"%s\",\"outcome\":"
		       "\"%s\",\"event\":%s%s%s}\n",
		       txid, idrec, conn, outcome ? outcome : "?",
		       outcome && strcmp(outcome, "taken") == 0 ? "\"" : "",
		       outcome && strcmp(outcome, "taken") == 0 ? kinds[k].events : "null",
		       outcome && strcmp(outcome, "taken") == 0 ? "\"" : "");
	else if (outcome && strcmp(outcome, "taken") == 0)
		printf("recurring charge %s (%s) through %s: %s\nevent %s\n", txid, idrec, conn,
		       what, kinds[k].events);
	else
		printf("recurring charge %s (%s) through %s: %s, no event (the bank said it "
		       "already)\n",
		       txid, idrec, conn, outcome ? outcome : "?");
	rc = 0;
done:
	yajl_tree_free(data);
	free(path);
	free(body);
	return rc;
}
