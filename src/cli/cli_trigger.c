/* cli_trigger: `pixrelay trigger charge.paid|...`, which creates a sandbox
 * charge through the API of a running pixrelay (local or remote, with
 * listen_api of listen.c) and drives it to a state, so that its events reach
 * the account's postbackUrl and every `pixrelay listen` (cli_listen.c); and
 * `pixrelay trigger pix`, which sends a bank's standard Pix notification
 * through the bank receiver's own path (simulate-pix of a sandbox bank
 * connection, made when the account has none).
 */
#include "cli_int.h"

#include "pixrelay/cli/listen.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/timefmt.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/validate.h"
#include "pixrelay/pix/bankpix.h"
#include "pixrelay/pix/chargedue.h"
#include "pixrelay/pix/event.h"
#include "pixrelay/store/charges.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_trigger[] =
    "usage: pixrelay trigger charge.paid|charge.expired|charge.refunded|charge.failed\n"
    "                        [--postback-url URL] [--amount CENTS] [--api-key KEY]\n"
    "                        [--account ID] [--json]\n"
    "       pixrelay trigger cobv.paid [--date YYYY-MM-DD] [--amount CENTS]\n"
    "                        [--postback-url URL] [--connection ID] [--api-key KEY]\n"
    "                        [--account ID] [--json]\n"
    "       pixrelay trigger pix [--txid TXID] [--amount CENTS] [--e2e ID] [--payer TEXT]\n"
    "                        [--connection ID] [--api-key KEY] [--account ID] [--json]\n"
    "       pixrelay trigger rec.approved|rec.rejected|rec.cancelled [--recurrence ID]\n"
    "                        [--api-key KEY] [--account ID] [--json]\n"
    "       pixrelay trigger cobr.paid|cobr.failed|cobr.retry [--charge ID]\n"
    "                        [--date YYYY-MM-DD] [--api-key KEY] [--account ID] [--json]\n"
    "       pixrelay trigger woovi.paid|asaas.paid [--charge ID] [--amount CENTS]\n"
    "                        [--connection ID]\n"
    "                        [--api-key KEY] [--account ID] [--json]\n\n"
    "Create a sandbox charge through the API of --base-url (local or remote) and\n"
    "drive it to that state, printing the event it made:\n"
    "  charge.paid      simulate-payment            EVENT:CHARGE_PAID\n"
    "  charge.expired   simulate-expiry (at once)   EVENT:CHARGE_EXPIRED\n"
    "  charge.refunded  simulate-payment, refund    EVENT:CHARGE_PAID, EVENT:CHARGE_REFUND\n"
    "  charge.failed    simulate-failure            no event (FAILED is not notified)\n"
    "The events go to --postback-url (else the account's postbackUrl) and to every\n"
    "'pixrelay listen' of the account.\n"
    "  pix              a bank's Pix notification ({\"pix\": [...]}, the Central Bank's\n"
    "                   API Pix) through the bank receiver's path: with --txid of a\n"
    "                   PENDING charge and its --amount, EVENT:CHARGE_PAID; otherwise\n"
    "                   EVENT:PIX_UNMATCHED with the reason (docs/banks.md). The same\n"
    "                   --e2e again is a duplicate. Uses the account's first bank\n"
    "                   connection (--connection to choose), making a sandbox one\n"
    "                   when it has none.\n"
    "  cobv.paid        a charge with a due date (due today, 30 days after it, fine\n"
    "                   2.00 %, interest 1.00 % a month, 5 % off today) paid on\n"
    "                   --date (default today) by a bank's Pix of the amount due\n"
    "                   that day with its parts, through the path of trigger pix:\n"
    "                   EVENT:CHARGE_PAID (docs/due-dates.md).\n"
    "  rec.approved     the bank's /rec callback of a recurrence (Pix Automático,\n"
    "  rec.rejected     docs/recurrences.md) through the same path, from its\n"
    "  rec.cancelled    connection: EVENT:RECURRENCE_APPROVED, _REJECTED or\n"
    "                   _CANCELLED; --recurrence (else the newest of the account).\n"
    "  cobr.paid        the bank's /cobr callback of a recurring charge (--charge,\n"
    "  cobr.failed      else the account's newest) through the same path: CONCLUIDA\n"
    "  cobr.retry       with its Pix, EVENT:CHARGE_PAID; its first attempt rejected,\n"
    "                   EVENT:CHARGE_FAILED; a retry scheduled on --date (default\n"
    "                   two days after its due date), EVENT:CHARGE_RETRY_SCHEDULED.\n"
    "  woovi.paid       Woovi's OPENPIX:CHARGE_COMPLETED of a charge (--charge, else\n"
    "                   a new one of --amount) signed with the sandbox key of the\n"
    "                   account's Woovi connection (--connection to choose) and\n"
    "                   POSTed to its webhook URL: EVENT:CHARGE_PAID\n"
    "                   (docs/providers.md).\n"
    "  asaas.paid       Asaas's PAYMENT_RECEIVED of such a charge with the webhook\n"
    "                   token of the account's sandbox Asaas connection without an\n"
    "                   API key: EVENT:CHARGE_PAID.\n"
    "Needs a sandbox key (--api-key or $PIXRELAY_API_KEY).\n";

int cli_trigger_step(const char *base, const char *key, const char *account, const char *method,
		     const char *path, const char *body, char *event_id, yajl_val *data)
{
	char err[512], perr[128], *out = NULL;
	long status = listen_api(base, key, account, method, path, body, 30000, &out, event_id, err,
				 sizeof(err));
	yajl_val v = NULL;
	int rc = -1;

	if (status == 0) {
		fprintf(stderr, "pixrelay trigger: %s\n", err);
		free(out);
		return -1;
	}
	if (out && json_parse_object(out, strlen(out), &v, perr, sizeof(perr)) < 0)
		v = NULL;
	if (status != 200) {
		const char *msg = YAJL_GET_STRING(json_get(v, "error"));
		fprintf(stderr, "pixrelay trigger: %s %s%s answered %ld: %s\n", method, base, path,
			status, msg ? msg : "(no message)");
	} else {
		rc = 0;
		if (data) {
			yajl_val d = json_get(v, "data");
			yajl_gen g = json_gen_new();
			size_t len;
			const char *s;
			json_write_value(g, d);
			s = json_buf(g, &len);
			if (json_parse_object(s, len, data, perr, sizeof(perr)) < 0)
				*data = NULL;
			yajl_gen_free(g);
		}
	}
	yajl_tree_free(v);
	free(out);
	return rc;
}

/* A new endToEndId as the standard makes them: E, an ISPB (8 digits), the
 * minute (YYYYMMDDHHMM, UTC) and 11 letters or digits. */
static void new_e2e(char out[BANKPIX_E2E_LEN + 1])
{
	char t[TIMEFMT_LEN + 1];

	timefmt_format(t, ids_now_ms());
	snprintf(out, BANKPIX_E2E_LEN + 1, "E00000000%.4s%.2s%.2s%.2s%.2s", t, t + 5, t + 8, t + 11,
		 t + 14);
	ids_base62(out + 21, 11);
	out[BANKPIX_E2E_LEN] = '\0';
}

/* The bank connection a simulated Pix goes through: --connection, else the
 * account's first, else a new sandbox one (URL token) for it. */
static int pix_connection(const char *base, const char *key, const char *account, const char *given,
			  char out[64])
{
	yajl_val data = NULL, list, first;
	int rc = -1;

	if (given) {
		snprintf(out, 64, "%s", given);
		return 0;
	}
	if (cli_trigger_step(base, key, account, "GET", "/bank/connections", NULL, NULL, &data) < 0)
		return -1;
	list = json_get(data, "connections");
	first = YAJL_IS_ARRAY(list) && list->u.array.len ? list->u.array.values[0] : NULL;
	if (first && YAJL_GET_STRING(json_get(first, "id"))) {
		snprintf(out, 64, "%s", YAJL_GET_STRING(json_get(first, "id")));
		rc = 0;
		goto done;
	}
	yajl_tree_free(data);
	data = NULL;
	if (cli_trigger_step(base, key, account, "POST", "/bank/connections",
			     "{\"pixKey\":\"sandbox@pixrelay.invalid\",\"auth\":\"url-token\"}",
			     NULL, &data) < 0)
		goto done;
	if (YAJL_GET_STRING(json_get(data, "id"))) {
		snprintf(out, 64, "%s", YAJL_GET_STRING(json_get(data, "id")));
		fprintf(stderr, "pixrelay trigger: made the sandbox bank connection %s\n", out);
		rc = 0;
	}
done:
	yajl_tree_free(data);
	return rc;
}

/* trigger pix: one standard notification through simulate-pix. */
/* A part of componentesValor: "name": {"valor": "x.yy"}. */
static void part(yajl_gen g, const char *name, int64_t cents)
{
	char valor[32];

	snprintf(valor, sizeof(valor), "%lld.%02lld", (long long)(cents / 100),
		 (long long)(cents % 100));
	json_str(g, name);
	json_open(g);
	json_str(g, "valor");
	json_str(g, valor);
	json_close(g);
}

/* One standard notification through simulate-pix; at `at` (RFC 3339; NULL:
 * now), with componentesValor `parts` when not NULL. */
static int trigger_pix(const struct config *cfg, const struct cli_args *a, const char *key,
		       const char *txid, long amount, const char *e2e, const char *payer,
		       const char *connection, const char *when,
		       const struct chargedue_parts *parts)
{
	char base[512], conn[64], id[BANKPIX_E2E_LEN + 1], valor[32], at[32];
	char *path = NULL, *body = NULL;
	yajl_val data = NULL, pix, one;
	int rc = 1;

	cli_base_url(cfg, base, sizeof(base));
	if (pix_connection(base, key, a->account, connection, conn) < 0)
		return 1;
	if (e2e)
		snprintf(id, sizeof(id), "%s", e2e);
	else
		new_e2e(id);
	snprintf(valor, sizeof(valor), "%ld.%02ld", amount / 100, amount % 100);
	if (when)
		snprintf(at, sizeof(at), "%s", when);
	else
		timefmt_rfc3339(at, ids_now_ms());
	{
		yajl_gen g = json_gen_new();
		json_open(g);
		json_str(g, "pix");
		json_open_array(g);
		json_open(g);
		json_str(g, "endToEndId");
		json_str(g, id);
		if (txid) {
			json_str(g, "txid");
			json_str(g, txid);
		}
		json_str(g, "valor");
		json_str(g, valor);
		if (parts) {
			json_str(g, "componentesValor");
			json_open(g);
			part(g, "original", parts->original);
			if (parts->fine)
				part(g, "multa", parts->fine);
			if (parts->interest)
				part(g, "juros", parts->interest);
			if (parts->discount)
				part(g, "desconto", parts->discount);
			json_close(g);
		}
		json_str(g, "horario");
		json_str(g, at);
		if (payer) {
			json_str(g, "infoPagador");
			json_str(g, payer);
		}
		json_close(g);
		json_close_array(g);
		json_close(g);
		body = json_take(g);
	}
	path = mem_printf("/bank/connections/%s/simulate-pix", conn);
	if (cli_trigger_step(base, key, a->account, "POST", path, body, NULL, &data) < 0)
		goto done;
	pix = json_get(data, "pix");
	one = YAJL_IS_ARRAY(pix) && pix->u.array.len == 1 ? pix->u.array.values[0] : NULL;
	if (!one) {
		const char *err = NULL;
		yajl_val refused = json_get(data, "refused");
		if (YAJL_IS_ARRAY(refused) && refused->u.array.len)
			err = YAJL_GET_STRING(json_get(refused->u.array.values[0], "error"));
		fprintf(stderr, "pixrelay trigger: the Pix was refused: %s\n", err ? err : "?");
		goto done;
	}
	if (a->json) {
		yajl_gen g = json_gen_new();
		size_t len;
		json_open(g);
		json_str(g, "connection");
		json_str(g, conn);
		json_str(g, "endToEndId");
		json_str(g, id);
		for (int i = 0; i < 4; i++) {
			static const char *const f[] = {"outcome", "reason", "event", "charge"};
			json_str(g, f[i]);
			json_write_value(g, json_get(one, f[i]));
		}
		json_close(g);
		printf("%s\n", json_buf(g, &len));
		yajl_gen_free(g);
	} else {
		const char *outcome = YAJL_GET_STRING(json_get(one, "outcome"));
		const char *reason = YAJL_GET_STRING(json_get(one, "reason"));
		const char *event = YAJL_GET_STRING(json_get(one, "event"));
		const char *charge = YAJL_GET_STRING(json_get(one, "charge"));
		printf("Pix %s (%s) through %s: %s%s%s\n", id, valor, conn, outcome ? outcome : "?",
		       reason ? ", " : "", reason ? reason : "");
		if (charge)
			printf("charge %s\n", charge);
		if (event)
			printf("event %s (%s)\n", event,
			       outcome && strcmp(outcome, "paid") == 0 ? "EVENT:CHARGE_PAID"
			       : outcome && strcmp(outcome, "unmatched") == 0
				   ? "EVENT:PIX_UNMATCHED"
				   : "the first one's");
	}
	rc = 0;
done:
	yajl_tree_free(data);
	free(path);
	free(body);
	return rc;
}

/* trigger cobv.paid: a sandbox charge with a due date (today, 30 days
 * after it, fine 2.00 %, interest 1.00 % a month, 5 % off today), paid by a
 * bank's Pix on `date` (default today) of the amount pixrelay computes as
 * due that day, with its parts (docs/due-dates.md). */
static int trigger_cobv(const struct config *cfg, const struct cli_args *a, const char *key,
			long amount, const char *date, const char *url, const char *connection)
{
	struct charge_due due = {"", 30, 200, 100, amount / 20, ""};
	struct chargedue_parts parts;
	long long today = chargedue_day_of_ms((int64_t)ids_now_ms()), day = today;
	char base[512], conn[64], at[40], t[TIMEFMT_LEN + 1], *body = NULL;
	char charge[64] = "";
	yajl_val data = NULL;
	int rc = 1;

	timefmt_format(t, (uint64_t)(today * 86400000LL));
	snprintf(due.date, sizeof(due.date), "%.10s", t);
	memcpy(due.discount_until, due.date, sizeof(due.date));
	if (date) {
		if (validate_date(date, NULL, NULL, NULL) < 0 ||
		    (day = chargedue_day(date)) < today || day > today + due.days_after) {
			fprintf(stderr,
				"pixrelay trigger: --date must be a day from today (%s, "
				"Brasilia) to 30 days after it, written YYYY-MM-DD\n",
				due.date);
			return 2;
		}
	}
	if (chargedue_amount_on(&due, amount, day, &parts) != 0)
		return 2;
	cli_base_url(cfg, base, sizeof(base));
	if (pix_connection(base, key, a->account, connection, conn) < 0)
		return 1;
	{
		yajl_gen g = json_gen_new();
		char pct[32];

		json_open(g);
		json_str(g, "amount");
		json_int(g, amount);
		json_str(g, "comment");
		json_str(g, "pixrelay trigger cobv.paid");
		json_str(g, "dueDate");
		json_str(g, due.date);
		json_str(g, "daysAfterDue");
		json_int(g, due.days_after);
		json_str(g, "fine");
		chargedue_percent_text(pct, due.fine);
		json_str(g, pct);
		json_str(g, "interest");
		chargedue_percent_text(pct, due.interest);
		json_str(g, pct);
		json_str(g, "discount");
		json_open(g);
		json_str(g, "amount");
		json_int(g, due.discount);
		json_str(g, "until");
		json_str(g, due.discount_until);
		json_close(g);
		json_str(g, "name");
		json_str(g, "Pagador Sandbox");
		json_str(g, "document");
		json_str(g, "52998224725");
		if (url) {
			json_str(g, "postbackUrl");
			json_str(g, url);
		}
		json_close(g);
		body = json_take(g);
	}
	if (cli_trigger_step(base, key, a->account, "POST", "/charge/pix/create", body, NULL,
			     &data) < 0)
		goto done;
	snprintf(charge, sizeof(charge), "%s",
		 YAJL_GET_STRING(json_get(data, "id")) ? YAJL_GET_STRING(json_get(data, "id"))
						       : "");
	if (!charges_valid_id(charge)) {
		fprintf(stderr, "pixrelay trigger: the server made no charge id\n");
		goto done;
	}
	if (!a->json)
		printf("charge %s (%ld cents) due %s; paid on %s: %lld cents (fine %lld, "
		       "interest %lld, discount %lld)\n",
		       charge, amount, due.date, date ? date : due.date, (long long)parts.total,
		       (long long)parts.fine, (long long)parts.interest, (long long)parts.discount);
	/* noon in Brasilia of that day, or now when it is today */
	if (day != today) {
		timefmt_format(t, (uint64_t)(day * 86400000LL));
		snprintf(at, sizeof(at), "%.10sT15:00:00.000Z", t);
	}
	rc = trigger_pix(cfg, a, key, charge, (long)parts.total, NULL, NULL, conn,
			 day != today ? at : NULL, &parts);
done:
	yajl_tree_free(data);
	free(body);
	return rc;
}

int cli_cmd_trigger(const struct config *cfg, int argc, char **argv)
{
	static const struct option lo[] = {{"postback-url", required_argument, NULL, 'p'},
					   {"amount", required_argument, NULL, 'm'},
					   {"txid", required_argument, NULL, 't'},
					   {"e2e", required_argument, NULL, 'E'},
					   {"payer", required_argument, NULL, 'P'},
					   {"connection", required_argument, NULL, 'c'},
					   {"date", required_argument, NULL, 'D'},
					   {"recurrence", required_argument, NULL, 'R'},
					   {"charge", required_argument, NULL, 'C'},
					   CLI_OPT_API_KEY,
					   CLI_OPT_ACCOUNT,
					   CLI_OPT_JSON,
					   CLI_OPT_END};
	static const char *const kinds[] = {"charge.paid", "charge.expired", "charge.refunded",
					    "charge.failed"};
	struct cli_args a;
	const char *what = NULL, *url = NULL, *key, *txid = NULL, *e2e = NULL, *payer = NULL;
	const char *connection = NULL, *date = NULL, *recurrence = NULL, *charge_id = NULL;
	long amount = 1000;
	int opt, kind = -1, rc = 1;
	char base[512], *end = NULL, *body, *path = NULL, charge[64] = "";
	char ev1[EVENT_ID_MAX] = "", ev2[EVENT_ID_MAX] = "", status[16] = "";
	yajl_val data = NULL;

	if ((rc = cli_action(argc, argv, usage_trigger, &what)) >= 0)
		return rc;
	rc = 1;
	cli_args_init(&a, argc - 1, argv + 1, lo, NULL, usage_trigger);
	while ((opt = cli_args_next(&a)) >= 0) {
		switch (opt) {
		case 'p':
			url = optarg;
			break;
		case 'm':
			amount = strtol(optarg, &end, 10);
			if (!*optarg || *end || amount < 1 || amount > 100000000) {
				fprintf(stderr,
					"pixrelay trigger: --amount must be cents from 1 to "
					"100000000\n");
				return 2;
			}
			break;
		case 't':
			txid = optarg;
			break;
		case 'E':
			e2e = optarg;
			break;
		case 'P':
			payer = optarg;
			break;
		case 'c':
			connection = optarg;
			break;
		case 'D':
			date = optarg;
			break;
		case 'R':
			recurrence = optarg;
			break;
		case 'C':
			charge_id = optarg;
			break;
		}
	}
	if (opt == CLI_ARGS_EXIT)
		return a.exit_code;
	if (strncmp(what, "cobr.", 5) == 0) {
		if (optind + 1 < argc)
			return cli_unexpected("trigger", NULL, argv[optind + 1]);
		if (url || txid || e2e || payer || connection || recurrence) {
			fprintf(stderr,
				"pixrelay trigger: %s takes --charge (and --date for "
				"cobr.retry)\n",
				what);
			return 2;
		}
		key = cli_api_key("trigger", a.api_key);
		if (!key)
			return 2;
		return cli_trigger_cobr(cfg, &a, key, what + 5, charge_id, date);
	}
	if (strcmp(what, "woovi.paid") == 0 || strcmp(what, "asaas.paid") == 0) {
		if (optind + 1 < argc)
			return cli_unexpected("trigger", NULL, argv[optind + 1]);
		if (url || txid || e2e || payer || date || recurrence) {
			fprintf(stderr,
				"pixrelay trigger: %s takes --charge, --amount and "
				"--connection\n",
				what);
			return 2;
		}
		key = cli_api_key("trigger", a.api_key);
		if (!key)
			return 2;
		return cli_trigger_provider(cfg, &a, key,
					    what[0] == 'a' ? PROVIDER_ASAAS : PROVIDER_WOOVI,
					    charge_id, amount, connection);
	}
	if (charge_id) {
		fprintf(stderr,
			"pixrelay trigger: --charge is for cobr.*, woovi.paid and asaas.paid\n");
		return 2;
	}
	if (strncmp(what, "rec.", 4) == 0) {
		if (optind + 1 < argc)
			return cli_unexpected("trigger", NULL, argv[optind + 1]);
		if (url || txid || e2e || payer || connection || date) {
			fprintf(stderr, "pixrelay trigger: %s takes --recurrence only\n", what);
			return 2;
		}
		key = cli_api_key("trigger", a.api_key);
		if (!key)
			return 2;
		return cli_trigger_rec(cfg, &a, key, what + 4, recurrence);
	}
	if (recurrence) {
		fprintf(stderr, "pixrelay trigger: --recurrence is for rec.*\n");
		return 2;
	}
	if (strcmp(what, "pix") == 0) {
		if (optind + 1 < argc)
			return cli_unexpected("trigger", NULL, argv[optind + 1]);
		if (url) {
			fprintf(stderr, "pixrelay trigger: --postback-url is for charge.*: a Pix's "
					"event goes where its charge's (or the account's) go\n");
			return 2;
		}
		if (e2e && (strlen(e2e) != BANKPIX_E2E_LEN ||
			    strspn(e2e, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRS"
					"TUVWXYZ") != BANKPIX_E2E_LEN)) {
			fprintf(stderr, "pixrelay trigger: --e2e must be 32 letters or digits\n");
			return 2;
		}
		key = cli_api_key("trigger", a.api_key);
		if (!key)
			return 2;
		return trigger_pix(cfg, &a, key, txid, amount, e2e, payer, connection, NULL, NULL);
	}
	if (strcmp(what, "cobv.paid") == 0) {
		if (optind + 1 < argc)
			return cli_unexpected("trigger", NULL, argv[optind + 1]);
		if (txid || e2e || payer || (url && !validate_is_http_url(url))) {
			fprintf(stderr, "pixrelay trigger: cobv.paid takes --date, --amount, "
					"--postback-url (an http or https URL) and --connection\n");
			return 2;
		}
		key = cli_api_key("trigger", a.api_key);
		if (!key)
			return 2;
		return trigger_cobv(cfg, &a, key, amount, date, url, connection);
	}
	if (date) {
		fprintf(stderr, "pixrelay trigger: --date is for trigger cobv.paid\n");
		return 2;
	}
	if (txid || e2e || payer || connection) {
		fprintf(stderr, "pixrelay trigger: --txid, --e2e, --payer and --connection are for "
				"trigger pix\n");
		return 2;
	}
	for (int i = 0; i < 4; i++)
		if (strcmp(what, kinds[i]) == 0)
			kind = i;
	if (kind < 0) {
		fprintf(
		    stderr,
		    "pixrelay trigger: unknown event '%s': charge.paid, charge.expired, "
		    "charge.refunded, charge.failed, cobv.paid, pix, rec.approved, rec.rejected, "
		    "rec.cancelled, cobr.paid, cobr.failed or cobr.retry\n",
		    what);
		return 2;
	}
	if (optind + 1 < argc)
		return cli_unexpected("trigger", NULL, argv[optind + 1]);
	if (url && !validate_is_http_url(url)) {
		fprintf(stderr,
			"pixrelay trigger: --postback-url must be an absolute http or https URL\n");
		return 2;
	}
	key = cli_api_key("trigger", a.api_key);
	if (!key)
		return 2;
	cli_base_url(cfg, base, sizeof(base));
	{
		yajl_gen g = json_gen_new();
		char comment[64];
		json_open(g);
		json_str(g, "amount");
		json_int(g, amount);
		json_str(g, "comment");
		snprintf(comment, sizeof(comment), "pixrelay trigger %s", what);
		json_str(g, comment);
		if (url) {
			json_str(g, "postbackUrl");
			json_str(g, url);
		}
		json_close(g);
		body = json_take(g);
	}
	if (cli_trigger_step(base, key, a.account, "POST", "/charge/pix/create", body, NULL,
			     &data) < 0)
		goto done;
	snprintf(charge, sizeof(charge), "%s",
		 YAJL_GET_STRING(json_get(data, "id")) ? YAJL_GET_STRING(json_get(data, "id"))
						       : "");
	yajl_tree_free(data);
	data = NULL;
	if (!charges_valid_id(charge)) {
		fprintf(stderr, "pixrelay trigger: the server made no charge id\n");
		goto done;
	}
	{
		static const char *const steps[] = {"simulate-payment", "simulate-expiry",
						    "simulate-payment", "simulate-failure"};
		path = mem_printf("/charge/pix/%s/%s", charge, steps[kind]);
		if (cli_trigger_step(base, key, a.account, "POST", path, NULL, ev1, &data) < 0)
			goto done;
		free(path);
		path = NULL;
	}
	if (kind == 2) {
		yajl_tree_free(data);
		data = NULL;
		path = mem_printf("/charge/%s/refund", charge);
		if (cli_trigger_step(base, key, a.account, "POST", path, NULL, ev2, &data) < 0)
			goto done;
	}
	snprintf(status, sizeof(status), "%s",
		 YAJL_GET_STRING(json_get(data, "status"))
		     ? YAJL_GET_STRING(json_get(data, "status"))
		     : "?");
	if (a.json) {
		printf("{\"charge\":\"%s\",\"status\":\"%s\",\"events\":[", charge, status);
		if (*ev1)
			printf("\"%s\"", ev1);
		if (*ev2)
			printf(",\"%s\"", ev2);
		printf("],\"event\":%s%s%s}\n", *ev2 || *ev1 ? "\"" : "",
		       *ev2 ? ev2 : (*ev1 ? ev1 : "null"), *ev2 || *ev1 ? "\"" : "");
	} else {
		printf("charge %s (%ld cents) is %s\n", charge, amount, status);
		if (*ev1)
			printf("event %s (%s)\n", ev1,
			       kind == 1 ? "EVENT:CHARGE_EXPIRED" : "EVENT:CHARGE_PAID");
		if (*ev2)
			printf("event %s (EVENT:CHARGE_REFUND)\n", ev2);
		if (kind == 3)
			printf("no event: a FAILED charge is not notified (postbacks are sent for "
			       "paid, expired and refunded charges)\n");
	}
	rc = 0;
done:
	yajl_tree_free(data);
	free(path);
	free(body);
	return rc;
}
