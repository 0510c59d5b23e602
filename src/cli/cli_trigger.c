/* cli_trigger: `pixrelay trigger charge.paid|...`, which creates a sandbox
 * charge through the API of a running pixrelay (local or remote, with
 * listen_api of listen.c) and drives it to a state, so that its events reach
 * the account's postbackUrl and every `pixrelay listen` (cli_listen.c).
 */
#include "cli_int.h"

#include "pixrelay/cli/listen.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/validate.h"
#include "pixrelay/pix/event.h"
#include "pixrelay/store/charges.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_trigger[] =
    "usage: pixrelay trigger charge.paid|charge.expired|charge.refunded|charge.failed\n"
    "                        [--postback-url URL] [--amount CENTS] [--api-key KEY]\n"
    "                        [--account ID] [--json]\n\n"
    "Create a sandbox charge through the API of --base-url (local or remote) and\n"
    "drive it to that state, printing the event it made:\n"
    "  charge.paid      simulate-payment            EVENT:CHARGE_PAID\n"
    "  charge.expired   simulate-expiry (at once)   EVENT:CHARGE_EXPIRED\n"
    "  charge.refunded  simulate-payment, refund    EVENT:CHARGE_PAID, EVENT:CHARGE_REFUND\n"
    "  charge.failed    simulate-failure            no event (FAILED is not notified)\n"
    "The events go to --postback-url (else the account's postbackUrl) and to every\n"
    "'pixrelay listen' of the account. Needs a sandbox key (--api-key or\n"
    "$PIXRELAY_API_KEY).\n";

/* One step of trigger: `method path` with body; prints the server's message
 * and returns -1 unless it answered 200. data (the envelope's) is written
 * when asked (caller frees with yajl_tree_free). */
static int trigger_step(const char *base, const char *key, const char *account, const char *method,
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

int cli_cmd_trigger(const struct config *cfg, int argc, char **argv)
{
	static const struct option lo[] = {{"postback-url", required_argument, NULL, 'p'},
					   {"amount", required_argument, NULL, 'm'},
					   CLI_OPT_API_KEY,
					   CLI_OPT_ACCOUNT,
					   CLI_OPT_JSON,
					   CLI_OPT_END};
	static const char *const kinds[] = {"charge.paid", "charge.expired", "charge.refunded",
					    "charge.failed"};
	struct cli_args a;
	const char *what = NULL, *url = NULL, *key;
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
		}
	}
	if (opt == CLI_ARGS_EXIT)
		return a.exit_code;
	for (int i = 0; i < 4; i++)
		if (strcmp(what, kinds[i]) == 0)
			kind = i;
	if (kind < 0) {
		fprintf(stderr,
			"pixrelay trigger: unknown event '%s': charge.paid, charge.expired, "
			"charge.refunded or charge.failed\n",
			what);
		return 2;
	}
	if (optind + 1 < argc)
		return cli_unexpected("trigger", NULL, argv[optind + 1]);
	if (url && !validate_http_url(url)) {
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
		size_t len;
		const char *s;
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
		s = json_buf(g, &len);
		body = mem_strndup(s, len);
		yajl_gen_free(g);
	}
	if (trigger_step(base, key, a.account, "POST", "/charge/pix/create", body, NULL, &data) < 0)
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
		if (trigger_step(base, key, a.account, "POST", path, NULL, ev1, &data) < 0)
			goto done;
		free(path);
		path = NULL;
	}
	if (kind == 2) {
		yajl_tree_free(data);
		data = NULL;
		path = mem_printf("/charge/%s/refund", charge);
		if (trigger_step(base, key, a.account, "POST", path, NULL, ev2, &data) < 0)
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
