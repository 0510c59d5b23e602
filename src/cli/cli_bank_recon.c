/* cli_bank_recon: `pixrelay bank reconcile|report`, the operator's side of
 * the reconciliation (docs/bank-api.md, "Reconciliation"): one run of a
 * connection now, in this process, with the same code a server runs on
 * its schedule (relay/bankrecon.c), and the day's report of what the
 * connection heard (store/banks_recon.c). The other bank verbs are
 * cli_bank.c's.
 */
#include "cli_int.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/seal.h"
#include "pixrelay/relay/bankapi.h"
#include "pixrelay/relay/bankrecon.h"
#include "pixrelay/store/banks_receive.h"
#include "pixrelay/store/banks_report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_recon[] =
    "usage: pixrelay bank reconcile ID [--since DURATION] [--json]\n"
    "       pixrelay bank report ID [--date YYYY-MM-DD] [--json]\n\n"
    "reconcile  asks the connection's bank now for the Pix it received (GET /pix)\n"
    "           since its last reconciliation and takes those its webhook missed,\n"
    "           as a running server does every bank-reconcile-interval seconds;\n"
    "           prints what it found. --since 2h, 30d (at most event-retention-days\n"
    "           ago) reads back from now a day at a time, as far as the bank\n"
    "           answers: a bank that refuses an older range stops it there (exit 1).\n"
    "report     what the connection heard on a day (default today, Brasilia time):\n"
    "           Pix by webhook, recovered by reconciliation (their endToEndIds),\n"
    "           outcomes, refunds, the spans of the bank's list the reconciliation\n"
    "           read, and whether they cover the day (complete), or why not.\n";

/* The numbers of a JSON object's field, 0 when absent. */
static long long num(yajl_val v, const char *a, const char *b)
{
	int64_t n = 0;

	json_is_int64(json_get(b ? json_get(v, a) : v, b ? b : a), &n);
	return (long long)n;
}

/* The run's figures; 1 when it stopped short of its start (said on
 * stderr), else 0. */
static int print_run(const char *json, int as_json)
{
	yajl_val v = NULL;
	char err[64];
	const char *until, *stopped, *back;
	int rc = 0;

	if (json_parse_object(json, strlen(json), &v, err, sizeof(err)) < 0)
		return 1;
	until = YAJL_GET_STRING(json_get(v, "reconciledUntil"));
	stopped = YAJL_GET_STRING(json_get(v, "stopped"));
	back = YAJL_GET_STRING(json_get(v, "readFrom"));
	if (stopped) {
		fprintf(stderr,
			"pixrelay bank reconcile: stopped reading back at %s, short of %s: %s\n",
			back ? back : "(nothing read)", YAJL_GET_STRING(json_get(v, "from")),
			stopped);
		rc = 1;
	}
	if (as_json) {
		printf("%s\n", json);
		yajl_tree_free(v);
		return rc;
	}
	printf("%s  %s .. %s  %lld Pix listed in %lld page(s): %lld new (missed by the "
	       "webhook), %lld refused by the standard's schema; %lld refund(s) asked about; "
	       "%lld recurrence(s) asked about, %lld recovered\n",
	       YAJL_GET_STRING(json_get(v, "connection")), YAJL_GET_STRING(json_get(v, "from")),
	       YAJL_GET_STRING(json_get(v, "to")), num(v, "listed", NULL), num(v, "pages", NULL),
	       num(v, "new", NULL), num(v, "refused", NULL), num(v, "refundsAsked", NULL),
	       num(v, "recurrencesAsked", NULL), num(v, "recurrencesRecovered", NULL));
	if (num(v, "windows", NULL) > 1 || stopped)
		printf("read back to %s in %lld window(s) of at most a day\n", back ? back : "-",
		       num(v, "windows", NULL));
	if (until)
		printf("reconciled until %s\n", until);
	else
		printf("(a window apart from the reconciled one: the reconciled instant stays)\n");
	yajl_tree_free(v);
	return rc;
}

static void print_report(const char *json)
{
	yajl_val v = NULL, list;
	char err[64];
	const char *until;
	long long cents;

	if (json_parse_object(json, strlen(json), &v, err, sizeof(err)) < 0)
		return;
	until = YAJL_GET_STRING(json_get(v, "reconciledUntil"));
	cents = num(v, "cents", "received");
	printf("%s  %s (Brasilia time)  %s\n", YAJL_GET_STRING(json_get(v, "connection")),
	       YAJL_GET_STRING(json_get(v, "date")),
	       YAJL_IS_TRUE(json_get(v, "complete"))
		   ? "complete: the bank's list was read for all of the day and 10 minutes past it"
		   : "not complete:");
	list = json_get(v, "whyNotComplete");
	for (size_t i = 0; YAJL_IS_ARRAY(list) && i < list->u.array.len; i++)
		printf("  - %s\n", YAJL_GET_STRING(list->u.array.values[i]));
	list = json_get(v, "read");
	printf("read          %s\n",
	       YAJL_IS_ARRAY(list) && list->u.array.len ? "" : "nothing of this day");
	for (size_t i = 0; YAJL_IS_ARRAY(list) && i < list->u.array.len; i++)
		printf("  %s .. %s\n", YAJL_GET_STRING(json_get(list->u.array.values[i], "from")),
		       YAJL_GET_STRING(json_get(list->u.array.values[i], "to")));
	printf("Pix received  %lld (R$ %lld.%02lld): %lld by webhook, %lld recovered by "
	       "reconciliation\n",
	       num(v, "pix", "received"), cents / 100, cents % 100, num(v, "pix", "byWebhook"),
	       num(v, "pix", "recovered"));
	printf("paid %lld, amount mismatch %lld, no txid %lld, unknown txid %lld, duplicates "
	       "%lld, refused %lld\n",
	       num(v, "outcomes", "paid") + num(v, "outcomes", "heard_late"),
	       num(v, "outcomes", "amount_mismatch"), num(v, "outcomes", "no_txid"),
	       num(v, "outcomes", "unknown_txid"), num(v, "pix", "duplicates"),
	       num(v, "pix", "refused"));
	if (num(v, "pix", "heldElsewhere"))
		printf("held by another connection of the account: %lld (moved nothing here)\n",
		       num(v, "pix", "heldElsewhere"));
	printf("refunds: %lld DEVOLVIDO, %lld EM_PROCESSAMENTO, %lld NAO_REALIZADO\n",
	       num(v, "refunds", "DEVOLVIDO"), num(v, "refunds", "EM_PROCESSAMENTO"),
	       num(v, "refunds", "NAO_REALIZADO"));
	{
		yajl_val med = json_get(json_get(v, "refunds"), "med");
		long long mc = num(med, "cents", NULL);

		if (num(med, "DEVOLVIDO", NULL) + num(med, "EM_PROCESSAMENTO", NULL) +
		    num(med, "NAO_REALIZADO", NULL))
			printf("  of the MED (clawed back under a dispute): %lld DEVOLVIDO "
			       "(R$ %lld.%02lld), %lld EM_PROCESSAMENTO, %lld NAO_REALIZADO\n",
			       num(med, "DEVOLVIDO", NULL), mc / 100, mc % 100,
			       num(med, "EM_PROCESSAMENTO", NULL), num(med, "NAO_REALIZADO", NULL));
	}
	printf("reconciled until %s\n", until ? until : "(never)");
	list = json_get(v, "recoveredEndToEndIds");
	if (YAJL_IS_ARRAY(list) && list->u.array.len) {
		printf("recovered:\n");
		for (size_t i = 0; i < list->u.array.len; i++)
			printf("  %s\n", YAJL_GET_STRING(list->u.array.values[i]));
	}
	yajl_tree_free(v);
}

int cli_bank_recon(const struct config *cfg, int argc, char **argv)
{
	static const struct option lo[] = {CLI_OPT_ENV,
					   {"since", required_argument, NULL, 's'},
					   {"date", required_argument, NULL, 'd'},
					   CLI_OPT_JSON,
					   CLI_OPT_END};
	struct cli_args a;
	const char *verb = argv[0], *id, *since = NULL, *date = NULL;
	long long since_ms = 0, end_ms;
	char day[11];
	enum env env;
	int opt, rc = 1, report;
	struct cli_redis cr;
	struct cli_call call = {0};
	struct seal_key key;
	int have_key = 0;

	report = strcmp(verb, "report") == 0;
	cli_args_init(&a, argc, argv, lo, NULL, usage_recon);
	while ((opt = cli_args_next(&a)) >= 0) {
		if (opt == 's')
			since = optarg;
		else if (opt == 'd')
			date = optarg;
	}
	if (opt == CLI_ARGS_EXIT)
		return a.exit_code;
	/* the connection names its environment: --env may only agree */
	if (a.env && env_parse(a.env, &env) < 0) {
		fprintf(stderr, "pixrelay bank: --env must be sandbox or production\n");
		return 2;
	}
	id = optind < argc ? argv[optind] : NULL;
	if (!id) {
		fprintf(stderr, "pixrelay bank %s: the connection ID is required\n", verb);
		return 2;
	}
	if (optind + 1 < argc)
		return cli_unexpected("bank", verb, argv[optind + 1]);
	if ((report && since) || (!report && date)) {
		fprintf(stderr, "pixrelay bank %s: %s is for %s\n", verb,
			report ? "--since" : "--date", report ? "reconcile" : "report");
		return 2;
	}
	if (since) {
		/* no further back than the Pix are remembered: older ones would
		 * be taken again */
		long long ago = 0, most = cfg->event_retention_days * 86400000LL;

		if (cli_parse_since(since, &since_ms) < 0 ||
		    (ago = (long long)ids_now_ms() - since_ms) < 0 || ago > most + 60000) {
			fprintf(stderr,
				"pixrelay bank reconcile: --since must be a duration (90s, 15m, "
				"2h, 30d) or a time, at most %ld days ago (event-retention-days)\n",
				cfg->event_retention_days);
			return 2;
		}
	}
	if (date && banks_report_day(date, day, &end_ms) < 0) {
		fprintf(stderr, "pixrelay bank report: --date must be a day, YYYY-MM-DD\n");
		return 2;
	}
	if (!report) {
		/* the same key every process of the deployment has: none is made */
		if (cli_credentials_key("bank reconcile", cfg, 0, &key) < 0)
			return 1;
		have_key = 1;
	}
	if (cli_redis_open(cfg, &cr) < 0)
		goto done;
	if (cli_call_open(&call, cfg, &cr) == 0) {
		char cmd[32];

		snprintf(cmd, sizeof(cmd), "bank %s", verb);
		if ((rc = cli_bank_env(&call, cfg, cmd, id, a.env, &env)) != 0)
			goto closed;
		rc = 1;
		if (report) {
			banks_report(call.r, cfg, env, "", id, date, cli_call_done, &call);
			cli_call_wait(&call);
		} else {
			struct bankapi *api = bankapi_new(call.base, cfg->bank_timeout_ms);
			struct banks_queue *q = banks_queue_new(call.base, call.r, cfg);
			struct seal_keyfile keys;
			struct bankrecon *rc2;

			seal_keyfile_init(&keys, "");
			seal_keyfile_hold(&keys, &key);
			rc2 = bankrecon_new(call.base, call.r, cfg, api, &keys, q, NULL, 0);

			bankrecon_run(rc2, env, id, since_ms, cli_call_done, &call);
			cli_call_wait(&call);
			bankrecon_free(rc2);
			banks_queue_free(q);
			bankapi_free(api);
			seal_keyfile_wipe(&keys);
		}
		switch (call.result) {
		case 0:
			if (!report)
				rc = print_run(call.json, a.json);
			else if (a.json)
				printf("%s\n", call.json);
			else
				print_report(call.json);
			if (report)
				rc = 0;
			break;
		case BANKS_NOT_FOUND:
			fprintf(stderr, "pixrelay bank %s: no connection %s in %s\n", verb, id,
				env_name(env));
			break;
		case BANKS_NO_API:
			fprintf(stderr,
				"pixrelay bank reconcile: connection %s has no API credentials "
				"(pixrelay bank credentials gives them)\n",
				id);
			break;
		default:
			fprintf(stderr, "pixrelay bank %s: %s\n", verb, call.err);
		}
	}
closed:
	cli_call_close(&call);
	cli_redis_close(&cr);
done:
	if (have_key)
		seal_key_wipe(&key);
	return rc;
}
