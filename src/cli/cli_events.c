/* cli_events: `pixrelay events list|show|replay`, the stored postback
 * events of an account (events.c, the same calls the API makes, on a private
 * event loop: cli_call of cli_redis.c): a table of them, one with its
 * attempt log, one replayed, or every one a filter selects replayed page by
 * page. Deliveries as they happen are `pixrelay tail` (cli_tail.c).
 */
#include "cli_int.h"

#include "pixrelay/core/json.h"
#include "pixrelay/pix/endpoint.h"
#include "pixrelay/store/events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_events[] =
    "usage: pixrelay events list [FILTERS] [--limit N] [--json]\n"
    "       pixrelay events show EVENT_ID [--json]\n"
    "       pixrelay events replay EVENT_ID [--destination postback|ENDPOINT_ID] [--json]\n"
    "       pixrelay events replay FILTERS [--limit N] [--json]\n\n"
    "The postback events of an account (--account ID, default: the platform\n"
    "account of --env, default sandbox): list them newest first, show one with its\n"
    "attempt log, deliver one again, or every one a filter selects (bulk replay,\n"
    "with progress on standard error; --limit caps how many, default all). An event\n"
    "goes to its postbackUrl and to the webhook endpoints that take it (pixrelay\n"
    "endpoints): list and show say where it stands at each; a replay goes wherever\n"
    "it is dead (its postbackUrl when it is dead nowhere), or to --destination.\n\n"
    "FILTERS: --state pending|delivering|delivered|dead (bulk replay: default dead)\n"
    "         --type EVENT:CHARGE_PAID|EVENT:CHARGE_EXPIRED|EVENT:CHARGE_REFUND|\n"
    "                EVENT:PIX_UNMATCHED|EVENT:PIX_REFUND|EVENT:PIX_MED_REFUND|\n"
    "                EVENT:PIX_REFUSED|EVENT:TRANSFER_DONE|EVENT:RECURRENCE_APPROVED|\n"
    "                EVENT:RECURRENCE_REJECTED|EVENT:RECURRENCE_EXPIRED|\n"
    "                EVENT:RECURRENCE_CANCELLED\n"
    "         --since T, --until T: Unix seconds, 'YYYY-MM-DD HH:MM:SS' (UTC),\n"
    "         RFC 3339, or a duration ago (90s, 15m, 1h, 2d, 1w)\n";

/* Print an event list ({"events": [...]}) as a table, or its events as a
 * JSON array. */
static void print_event_list(const char *json, int as_json)
{
	char err[128];
	yajl_val root = NULL, events;

	if (json_parse_object(json, strlen(json), &root, err, sizeof(err)) < 0)
		return;
	events = json_get(root, "events");
	if (as_json) {
		yajl_gen g = json_gen_new();
		size_t len;
		const char *out;
		json_write_value(g, events);
		out = json_buf(g, &len);
		printf("%.*s\n", (int)len, out);
		yajl_gen_free(g);
		yajl_tree_free(root);
		return;
	}
	printf("%-30s %-22s %-10s %-8s %-24s %s\n", "EVENT", "TYPE", "STATE", "ATTEMPTS", "CREATED",
	       "DESTINATION / LAST ERROR");
	for (size_t i = 0; YAJL_IS_ARRAY(events) && i < events->u.array.len; i++) {
		yajl_val e = events->u.array.values[i];
		const char *dest = YAJL_GET_STRING(json_get(e, "destination"));
		const char *last = YAJL_GET_STRING(json_get(e, "lastError"));
		yajl_val attempts = json_get(e, "attempts");
		yajl_val eps = json_get(e, "endpoints");
		printf("%-30s %-22s %-10s %-8s %-24s %s%s%s\n", YAJL_GET_STRING(json_get(e, "id")),
		       YAJL_GET_STRING(json_get(e, "type")), YAJL_GET_STRING(json_get(e, "state")),
		       attempts && YAJL_IS_NUMBER(attempts) ? YAJL_GET_NUMBER(attempts) : "0",
		       YAJL_GET_STRING(json_get(e, "createdAt")), dest ? dest : "",
		       last ? " / " : "", last ? last : "");
		/* its deliveries to webhook endpoints, one line each under it */
		for (size_t j = 0; YAJL_IS_ARRAY(eps) && j < eps->u.array.len; j++) {
			yajl_val d = eps->u.array.values[j], n = json_get(d, "attempts");
			const char *why = YAJL_GET_STRING(json_get(d, "lastError"));
			printf("  -> %-26s %-22s %-10s %-8s %-24s %s\n",
			       YAJL_GET_STRING(json_get(d, "endpoint")), "",
			       YAJL_GET_STRING(json_get(d, "state")),
			       n && YAJL_IS_NUMBER(n) ? YAJL_GET_NUMBER(n) : "0", "",
			       why ? why : "");
		}
	}
	yajl_tree_free(root);
}

/* Print one event (events_get's JSON) for a person. */
static void print_event(const char *json)
{
	char err[128];
	yajl_val e = NULL, log, payload;

	if (json_parse_object(json, strlen(json), &e, err, sizeof(err)) < 0) {
		printf("%s\n", json);
		return;
	}
#define S(name) (YAJL_GET_STRING(json_get(e, name)) ? YAJL_GET_STRING(json_get(e, name)) : "-")
	printf("event %s  %s  %s\n", S("id"), S("type"), S("state"));
	printf("  destination   %s\n", S("destination"));
	printf("  created       %s\n", S("createdAt"));
	printf("  updated       %s\n", S("updatedAt"));
	if (YAJL_GET_STRING(json_get(e, "nextAttemptAt")))
		printf("  next attempt  %s\n", S("nextAttemptAt"));
	if (YAJL_GET_STRING(json_get(e, "deliveredAt")))
		printf("  delivered     %s\n", S("deliveredAt"));
	if (YAJL_GET_STRING(json_get(e, "deadAt")))
		printf("  dead          %s\n", S("deadAt"));
	printf("  attempts      %lld\n", (long long)YAJL_GET_INTEGER(json_get(e, "attempts")));
	if (YAJL_IS_INTEGER(json_get(e, "lastStatus")))
		printf("  last status   HTTP %lld\n",
		       (long long)YAJL_GET_INTEGER(json_get(e, "lastStatus")));
	if (YAJL_GET_STRING(json_get(e, "lastError")))
		printf("  last error    %s\n", S("lastError"));
#undef S
	log = json_get(e, "attemptLog");
	if (YAJL_IS_ARRAY(log) && log->u.array.len) {
		printf("attempts:\n");
		for (size_t i = 0; i < log->u.array.len; i++) {
			yajl_val a = log->u.array.values[i], st = json_get(a, "status");
			const char *at = YAJL_GET_STRING(json_get(a, "at"));
			const char *er = YAJL_GET_STRING(json_get(a, "error"));
			const char *out = YAJL_GET_STRING(json_get(a, "outcome"));
			printf("  #%-3lld %s  %-9s %s%s  %lld ms%s%s\n",
			       (long long)YAJL_GET_INTEGER(json_get(a, "attempt")), at ? at : "-",
			       out ? out : "-", YAJL_IS_INTEGER(st) ? "HTTP " : "",
			       YAJL_IS_INTEGER(st) ? st->u.number.r : "no answer",
			       (long long)YAJL_GET_INTEGER(json_get(a, "durationMs")),
			       er ? "  " : "", er ? er : "");
		}
	}
	log = json_get(e, "endpoints");
	for (size_t i = 0; YAJL_IS_ARRAY(log) && i < log->u.array.len; i++) {
		yajl_val d = log->u.array.values[i], tries = json_get(d, "attemptLog");
		const char *url = YAJL_GET_STRING(json_get(d, "url"));
		const char *why = YAJL_GET_STRING(json_get(d, "lastError"));
		printf("endpoint %s  %s  %s, %lld attempt%s%s%s\n",
		       YAJL_GET_STRING(json_get(d, "endpoint")), url ? url : "(deleted)",
		       YAJL_GET_STRING(json_get(d, "state")),
		       (long long)YAJL_GET_INTEGER(json_get(d, "attempts")),
		       YAJL_GET_INTEGER(json_get(d, "attempts")) == 1 ? "" : "s", why ? ": " : "",
		       why ? why : "");
		for (size_t j = 0; YAJL_IS_ARRAY(tries) && j < tries->u.array.len; j++) {
			yajl_val a = tries->u.array.values[j], st = json_get(a, "status");
			const char *at = YAJL_GET_STRING(json_get(a, "at"));
			printf("  #%-3lld %s  %s%s\n",
			       (long long)YAJL_GET_INTEGER(json_get(a, "attempt")), at ? at : "-",
			       YAJL_IS_INTEGER(st) ? "HTTP " : "",
			       YAJL_IS_INTEGER(st) ? st->u.number.r : "no answer");
		}
	}
	payload = json_get(e, "payload");
	if (payload && !YAJL_IS_NULL(payload)) {
		yajl_gen g = json_gen_new();
		size_t len;
		const char *out;
		yajl_gen_config(g, yajl_gen_beautify, 1);
		json_write_value(g, payload);
		out = json_buf(g, &len);
		printf("payload:\n%.*s", (int)len, out);
		if (len && out[len - 1] != '\n')
			putchar('\n');
		yajl_gen_free(g);
	}
	yajl_tree_free(e);
}

/* The destinations of a replay ("postback wep_..."), joined as JSON
 * strings' insides ("postback\",\"wep_...") in a static buffer: ids and
 * "postback" need no escaping. */
static const char *dests_json(const char *dests)
{
	static char out[600];
	size_t o = 0;

	for (const char *p = dests; *p && o + 4 < sizeof(out); p++) {
		if (*p == ' ') {
			memcpy(out + o, "\",\"", 3);
			o += 3;
		} else {
			out[o++] = *p;
		}
	}
	out[o] = '\0';
	return out;
}

/* Bulk replay on the call's loop: page through the filter, replay each. */
struct bulk {
	struct cli_call *k;
	const struct config *cfg;
	enum env env;
	const char *account;
	struct event_filter f;
	long cap; /* at most this many (0: all) */
	long matched, requeued, busy, left;
	int pages, failed, json;
	char cursor[96];
};

static void bulk_next(struct bulk *b);

static void on_bulk_one(void *ud, int result, const char *json, const char *err)
{
	struct bulk *b = ud;

	if (result == 0)
		b->requeued++;
	else if (result == EVENTS_BUSY)
		b->busy++;
	else if (result < 0 && !b->failed) {
		b->failed = 1;
		snprintf(b->k->err, sizeof(b->k->err), "%s", err);
	}
	if (--b->left == 0)
		bulk_next(b);
}

static void on_bulk_page(void *ud, int result, const char *json, const char *err)
{
	struct bulk *b = ud;
	yajl_val root = NULL, events, next;
	char perr[128];

	if (result < 0 || json_parse_object(json, strlen(json), &root, perr, sizeof(perr)) < 0) {
		b->failed = 1;
		snprintf(b->k->err, sizeof(b->k->err), "%s", result < 0 ? err : perr);
		b->k->done = 1;
		event_base_loopbreak(b->k->base);
		return;
	}
	events = json_get(root, "events");
	next = json_get(root, "nextCursor");
	b->cursor[0] = '\0';
	if (YAJL_IS_STRING(next) && strlen(next->u.string) < sizeof(b->cursor))
		snprintf(b->cursor, sizeof(b->cursor), "%s", next->u.string);
	b->pages++;
	b->left = 1; /* this loop's own count */
	for (size_t i = 0; YAJL_IS_ARRAY(events) && i < events->u.array.len; i++) {
		const char *id = YAJL_GET_STRING(json_get(events->u.array.values[i], "id"));
		if (!id || (b->cap && b->matched >= b->cap))
			continue;
		b->matched++;
		b->left++;
		events_replay(b->k->r, b->cfg, b->env, b->account, id, NULL, on_bulk_one, b);
	}
	if (b->cap && b->matched >= b->cap)
		b->cursor[0] = '\0';
	yajl_tree_free(root);
	on_bulk_one(b, 1, NULL, NULL);
}

static void bulk_next(struct bulk *b)
{
	if (b->pages > 0 && (b->cursor[0] || b->pages > 1) && !b->json)
		fprintf(stderr, "replaying: %ld matched, %ld queued again, %ld already waiting%s\n",
			b->matched, b->requeued, b->busy, b->cursor[0] ? "..." : "");
	if (b->failed || (b->pages > 0 && !b->cursor[0])) {
		b->k->done = 1;
		event_base_loopbreak(b->k->base);
		return;
	}
	if (b->cursor[0] && event_parse_cursor(b->cursor, &b->f.cursor_ms, &b->f.cursor_id) < 0) {
		b->k->done = 1;
		event_base_loopbreak(b->k->base);
		return;
	}
	b->f.limit = EVENT_LIST_MAX;
	if (b->cap && b->cap - b->matched < EVENT_LIST_MAX)
		b->f.limit = (int)(b->cap - b->matched);
	events_list(b->k->r, b->cfg, b->env, b->account, &b->f, 0, on_bulk_page, b);
}

int cli_cmd_events(const struct config *cfg, int argc, char **argv)
{
	static const struct option lo[] = {CLI_OPT_ENV,
					   CLI_OPT_ACCOUNT,
					   {"state", required_argument, NULL, 's'},
					   {"type", required_argument, NULL, 't'},
					   {"since", required_argument, NULL, 'S'},
					   {"until", required_argument, NULL, 'U'},
					   {"limit", required_argument, NULL, 'l'},
					   {"destination", required_argument, NULL, 'd'},
					   CLI_OPT_JSON,
					   CLI_OPT_END};
	struct cli_args a;
	const char *verb, *state = NULL, *type = NULL, *destination = NULL;
	long limit = -1;
	long long since_ms = 0, until_ms = 0;
	int opt, rc = 1, filtered = 0;
	enum env env;
	struct cli_redis cr;
	struct cli_call call;
	char acct[32], *end = NULL;
	const char *id;

	if ((rc = cli_action(argc, argv, usage_events, &verb)) >= 0)
		return rc;
	rc = 1;
	cli_args_init(&a, argc - 1, argv + 1, lo, NULL, usage_events);
	a.env = "sandbox";
	while ((opt = cli_args_next(&a)) >= 0) {
		switch (opt) {
		case 's':
			state = optarg;
			filtered = 1;
			break;
		case 't':
			type = optarg;
			filtered = 1;
			break;
		case 'S':
		case 'U':
			if (cli_parse_since(optarg, opt == 'S' ? &since_ms : &until_ms) < 0) {
				fprintf(
				    stderr,
				    "pixrelay events: --%s must be a duration (1h), Unix seconds, "
				    "'YYYY-MM-DD HH:MM:SS' or RFC 3339\n",
				    opt == 'S' ? "since" : "until");
				return 2;
			}
			filtered = 1;
			break;
		case 'd':
			destination = optarg;
			if (strcmp(destination, "postback") != 0 &&
			    !endpoint_valid_id(destination)) {
				fprintf(stderr,
					"pixrelay events: --destination must be postback or a "
					"webhook endpoint's id (wep_...)\n");
				return 2;
			}
			break;
		case 'l':
			limit = strtol(optarg, &end, 10);
			if (!*optarg || *end || limit < 1) {
				fprintf(stderr,
					"pixrelay events: --limit must be a positive integer\n");
				return 2;
			}
			break;
		}
	}
	if (opt == CLI_ARGS_EXIT)
		return a.exit_code;
	if (!cli_verb_known("events", usage_events, verb,
			    (const char *const[]){"list", "show", "replay", NULL}))
		return 2;
	if (env_parse(a.env, &env) < 0) {
		fprintf(stderr, "pixrelay events: --env must be sandbox or production\n");
		return 2;
	}
	if (state && strcmp(state, "pending") != 0 && strcmp(state, "delivering") != 0 &&
	    strcmp(state, "delivered") != 0 && strcmp(state, "dead") != 0) {
		fprintf(stderr,
			"pixrelay events: --state must be pending, delivering, delivered or "
			"dead\n");
		return 2;
	}
	if (type && !event_type_named(type)) {
		fprintf(stderr, "pixrelay events: --type must be " EVENT_TYPES_TEXT
				", or an operational one: " EVENT_OPERATIONAL_TYPES_TEXT "\n");
		return 2;
	}
	id = optind + 1 < argc ? argv[optind + 1] : NULL;
	if (id && optind + 2 < argc)
		return cli_unexpected("events", verb, argv[optind + 2]);
	if (strcmp(verb, "list") == 0 && id)
		return cli_unexpected("events", "list", id);
	if (strcmp(verb, "list") == 0 && limit > EVENT_LIST_MAX) {
		fprintf(stderr, "pixrelay events list: --limit must be from 1 to %d\n",
			EVENT_LIST_MAX);
		return 2;
	}
	if (strcmp(verb, "show") == 0 && !id) {
		fprintf(stderr, "pixrelay events show: EVENT_ID is required\n");
		return 2;
	}
	if (strcmp(verb, "replay") == 0 && !id && !filtered) {
		fprintf(stderr, "pixrelay events replay: EVENT_ID, or a filter (--state, --type, "
				"--since, --until) for a bulk replay, is required\n");
		return 2;
	}
	if (destination && (strcmp(verb, "replay") != 0 || !id)) {
		fprintf(stderr, "pixrelay events: --destination goes with replay EVENT_ID\n");
		return 2;
	}
	if (strcmp(verb, "replay") == 0 && id && filtered) {
		fprintf(stderr, "pixrelay events replay: give EVENT_ID or filters, not both\n");
		return 2;
	}
	if (cli_open_account(cfg, env, a.account, &cr, acct) < 0)
		return 1;
	if (cli_call_open(&call, cfg, &cr) == 0) {
		if (strcmp(verb, "replay") == 0 && !id) {
			struct bulk b;
			memset(&b, 0, sizeof(b));
			b.k = &call;
			b.cfg = cfg;
			b.env = env;
			b.account = acct;
			b.f.state = state ? state : "dead";
			b.f.type = type;
			b.f.since_ms = since_ms;
			b.f.until_ms = until_ms;
			b.cap = limit > 0 ? limit : 0;
			b.json = a.json;
			bulk_next(&b);
			cli_call_wait(&call);
			if (b.failed) {
				fprintf(stderr,
					"pixrelay events replay: %s (%ld queued again before)\n",
					call.err, b.requeued);
			} else {
				if (a.json)
					printf("{\"matched\":%ld,\"requeued\":%ld,"
					       "\"alreadyWaiting\":%ld}\n",
					       b.matched, b.requeued, b.busy);
				else
					printf("%ld %s event%s matched; %ld queued for delivery "
					       "again, %ld "
					       "already waiting or in flight\n",
					       b.matched, b.f.state, b.matched == 1 ? "" : "s",
					       b.requeued, b.busy);
				rc = 0;
			}
			cli_call_close(&call);
			cli_redis_close(&cr);
			return rc;
		}
		if (strcmp(verb, "list") == 0) {
			struct event_filter f;
			memset(&f, 0, sizeof(f));
			f.state = state;
			f.type = type;
			f.since_ms = since_ms;
			f.until_ms = until_ms;
			f.limit = limit > 0 ? (int)limit : 20;
			events_list(call.r, cfg, env, acct, &f, 0, cli_call_done, &call);
		} else if (strcmp(verb, "show") == 0) {
			events_get(call.r, cfg, env, acct, id, cli_call_done, &call);
		} else {
			events_replay(call.r, cfg, env, acct, id, destination, cli_call_done,
				      &call);
		}
		cli_call_wait(&call);
		if (call.result < 0)
			fprintf(stderr, "pixrelay events %s: %s\n", verb, call.err);
		else if (call.result == EVENTS_NOT_FOUND)
			fprintf(stderr, "pixrelay events %s: no event %s for account %s (%s)\n",
				verb, id, acct, env_name(env));
		else if (call.result == EVENTS_NO_DESTINATION)
			fprintf(stderr,
				"pixrelay events replay: event %s has no delivery to webhook "
				"endpoint %s\n",
				id, destination);
		else if (strcmp(verb, "list") == 0)
			print_event_list(call.json, a.json);
		else if (strcmp(verb, "show") == 0 && a.json)
			printf("%s\n", call.json);
		else if (strcmp(verb, "show") == 0)
			print_event(call.json);
		else if (a.json && call.result == 0 && (destination || strstr(call.json, "wep_")))
			printf("{\"id\":\"%s\",\"requeued\":true,\"destinations\":[\"%s\"]}\n", id,
			       dests_json(call.json));
		else if (a.json)
			printf("{\"id\":\"%s\",\"requeued\":%s}\n", id,
			       call.result == 0 ? "true" : "false");
		else if (call.result == 0 && (destination || strstr(call.json, "wep_")))
			printf("%s queued for delivery again: %s\n", id, call.json);
		else
			printf("%s %s\n", id,
			       call.result == 0 ? "queued for delivery again"
						: "is already waiting or in flight");
		rc = call.result < 0 || call.result == EVENTS_NOT_FOUND ||
			     call.result == EVENTS_NO_DESTINATION
			 ? 1
			 : 0;
	}
	cli_call_close(&call);
	cli_redis_close(&cr);
	return rc;
}
