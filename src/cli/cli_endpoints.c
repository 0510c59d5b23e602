/* cli_endpoints: `pixrelay endpoints create|list|show|update|delete|
 * rotate-secret|test`, an account's webhook endpoints from the command line:
 * the options become the body the API takes (pix/endpoint.c reads it, so
 * both refuse the same things in the same words), and the same store calls
 * as the API's run on a private loop (store/endpoints.c, cli_call of
 * cli_redis.c); a test is sent from here (relay/ping.c).
 */
#include "cli_int.h"

#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/netaddr.h"
#include "pixrelay/pix/endpoint.h"
#include "pixrelay/relay/ping.h"
#include "pixrelay/store/endpoints.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_endpoints[] =
    "usage: pixrelay endpoints create --url URL [--description TEXT] [--event-type TYPE]...\n"
    "                                 [--header 'Name: value']... [--disabled] [--json]\n"
    "       pixrelay endpoints list [--json]\n"
    "       pixrelay endpoints show ENDPOINT_ID [--json]\n"
    "       pixrelay endpoints update ENDPOINT_ID [--url URL] [--description TEXT]\n"
    "                                 [--event-type TYPE... | --all-event-types]\n"
    "                                 [--header 'Name: value'... | --no-headers]\n"
    "                                 [--enable | --disable] [--json]\n"
    "       pixrelay endpoints delete ENDPOINT_ID [--json]\n"
    "       pixrelay endpoints rotate-secret ENDPOINT_ID [--grace SECONDS] [--json]\n"
    "       pixrelay endpoints test ENDPOINT_ID [--json]\n\n"
    "The webhook endpoints of an account (--account ID, default: the platform\n"
    "account of --env, default sandbox): besides its postbackUrl, each event goes\n"
    "to every enabled endpoint whose event types take it, signed with the\n"
    "endpoint's secret (docs/postbacks.md, \"Webhook endpoints\").\n\n"
    "create         a new endpoint; its signing secret is printed this once.\n"
    "               --event-type takes an exact type (EVENT:CHARGE_PAID) or a prefix\n"
    "               ending in * (EVENT:CHARGE_*), as often as needed; none: every\n"
    "               type but the operational ones (EVENT:OPERATIONAL_*), which an\n"
    "               endpoint gets only when it names them.\n"
    "list, show     the endpoints, or one, and how they fare.\n"
    "update         change what is given; --enable sends what a disabled endpoint\n"
    "               kept, in order; --disable keeps what it holds.\n"
    "delete         no event goes to it any more; its deliveries not yet made die.\n"
    "rotate-secret  a new secret, printed this once; the previous one signs beside it\n"
    "               for --grace seconds (default 86400, at most 604800; 0: not at all).\n"
    "test           send it a signed EVENT:ENDPOINT_TEST now and print what it answered\n"
    "               (exit status 1 when it did not answer 2xx).\n\n"
    "  --env sandbox|production   the environment (default sandbox)\n"
    "  --account ID               the account (default the environment's platform account)\n";

#define CLI_EP_MAX 40 /* --event-type and --header kept, past the most taken */

/* The options of a create or an update, as given. */
struct ep_opts {
	const char *url, *description;
	const char *types[CLI_EP_MAX], *headers[CLI_EP_MAX];
	size_t ntypes, nheaders;
	int all_types, no_headers;
	int enabled; /* -1: not given */
	long grace;  /* -1: not given */
};

/* The body the API would take for these options, as JSON text (the caller
 * frees it); NULL with the problem printed. */
static char *body_of(const char *verb, const struct ep_opts *o)
{
	yajl_gen g = json_gen_new();

	json_open(g);
	if (o->url) {
		json_str(g, "url");
		json_str(g, o->url);
	}
	if (o->description) {
		json_str(g, "description");
		json_str(g, o->description);
	}
	if (o->ntypes || o->all_types) {
		json_str(g, "eventTypes");
		json_open_array(g);
		for (size_t i = 0; i < o->ntypes; i++)
			json_str(g, o->types[i]);
		json_close_array(g);
	}
	if (o->nheaders || o->no_headers) {
		json_str(g, "headers");
		json_open(g);
		for (size_t i = 0; i < o->nheaders; i++) {
			const char *colon = strchr(o->headers[i], ':'), *v;
			if (!colon) {
				fprintf(stderr,
					"pixrelay endpoints %s: --header: write it 'Name: value'\n",
					verb);
				yajl_gen_free(g);
				return NULL;
			}
			for (v = colon + 1; *v == ' '; v++)
				;
			json_strn(g, o->headers[i], (size_t)(colon - o->headers[i]));
			json_str(g, v);
		}
		json_close(g);
	}
	if (o->enabled >= 0) {
		json_str(g, "enabled");
		json_bool(g, o->enabled);
	}
	json_close(g);
	return json_take(g);
}

/* Read the options into a spec as the API reads a body: 0, or -1 with the
 * problem printed. */
static int spec_of(const char *verb, const struct config *cfg, enum env env,
		   const struct ep_opts *o, int create, struct endpoint_spec *spec)
{
	char *text = body_of(verb, o), err[512];
	yajl_val body = NULL;
	struct netaddr_list allow = {0, NULL};
	int rc = -1;

	if (!text)
		return -1;
	if (json_parse_object(text, strlen(text), &body, err, sizeof(err)) < 0 ||
	    endpoint_parse(body, create, spec, err, sizeof(err)) < 0) {
		fprintf(stderr, "pixrelay endpoints %s: %s\n", verb, err);
		goto done;
	}
	if ((spec->given & ENDPOINT_URL) &&
	    (netaddr_list_parse(&allow, cfg->destination_allow, err, sizeof(err)) < 0 ||
	     endpoint_check_destination(spec->url, env, &allow, err, sizeof(err)) < 0)) {
		fprintf(stderr, "pixrelay endpoints %s: %s\n", verb, err);
		endpoint_spec_free(spec);
		goto done;
	}
	rc = 0;
done:
	netaddr_list_deinit(&allow);
	yajl_tree_free(body);
	free(text);
	return rc;
}

/* A JSON time or "-" */
static const char *when(yajl_val v)
{
	return YAJL_IS_STRING(v) ? v->u.string : "-";
}

/* One endpoint for a person, in a few lines. */
static void print_endpoint(yajl_val e)
{
	yajl_val types = json_get(e, "eventTypes"), headers = json_get(e, "headers");
	yajl_val stats = json_get(e, "stats"), reason = json_get(e, "disabledReason");

	printf("endpoint %s  %s  %s\n", when(json_get(e, "id")), when(json_get(e, "url")),
	       YAJL_IS_TRUE(json_get(e, "enabled")) ? "enabled" : "disabled");
	if (YAJL_IS_STRING(reason))
		printf("  disabled      %s: %s\n", when(json_get(e, "disabledAt")),
		       reason->u.string);
	if (YAJL_IS_STRING(json_get(e, "description")) &&
	    *YAJL_GET_STRING(json_get(e, "description")))
		printf("  description   %s\n", YAJL_GET_STRING(json_get(e, "description")));
	printf("  event types   ");
	for (size_t i = 0; YAJL_IS_ARRAY(types) && i < types->u.array.len; i++)
		printf("%s%s", i ? " " : "", when(types->u.array.values[i]));
	printf("%s\n", YAJL_IS_ARRAY(types) && types->u.array.len
			   ? ""
			   : "every type but the operational ones");
	for (size_t i = 0; YAJL_IS_OBJECT(headers) && i < headers->u.object.len; i++)
		printf("  header        %s: %s\n", headers->u.object.keys[i],
		       when(headers->u.object.values[i]));
	printf("  created       %s\n", when(json_get(e, "createdAt")));
	if (YAJL_IS_STRING(json_get(e, "previousSecretUntil")))
		printf("  rotating      the previous secret signs too until %s\n",
		       when(json_get(e, "previousSecretUntil")));
	if (YAJL_IS_STRING(json_get(e, "failingSince")))
		printf("  failing       since %s, %lld attempts in a row\n",
		       when(json_get(e, "failingSince")),
		       (long long)YAJL_GET_INTEGER(json_get(e, "failuresInARow")));
	if (YAJL_IS_OBJECT(stats))
		printf("  deliveries    %lld delivered, %lld failed attempts, %lld dead; last "
		       "%s%s%s\n",
		       (long long)YAJL_GET_INTEGER(json_get(stats, "delivered")),
		       (long long)YAJL_GET_INTEGER(json_get(stats, "failedAttempts")),
		       (long long)YAJL_GET_INTEGER(json_get(stats, "dead")),
		       when(json_get(stats, "lastAttemptAt")),
		       YAJL_IS_STRING(json_get(stats, "lastError")) ? ": " : "",
		       YAJL_IS_STRING(json_get(stats, "lastError"))
			   ? YAJL_GET_STRING(json_get(stats, "lastError"))
			   : "");
}

/* What a call answered (call->json), for a person or as JSON. */
static void print_answer(const char *verb, const char *json, int as_json)
{
	yajl_val root = NULL, list;
	char err[128];

	if (as_json || json_parse_object(json, strlen(json), &root, err, sizeof(err)) < 0) {
		printf("%s\n", json);
		return;
	}
	if (strcmp(verb, "list") == 0) {
		list = json_get(root, "endpoints");
		if (!YAJL_IS_ARRAY(list) || !list->u.array.len)
			printf("no webhook endpoints\n");
		for (size_t i = 0; YAJL_IS_ARRAY(list) && i < list->u.array.len; i++)
			print_endpoint(list->u.array.values[i]);
	} else if (strcmp(verb, "delete") == 0) {
		printf("endpoint %s deleted\n", when(json_get(root, "id")));
	} else if (strcmp(verb, "rotate-secret") == 0) {
		printf("endpoint %s: new signing secret (shown this once)\n%s\n",
		       when(json_get(root, "id")), when(json_get(root, "secret")));
		if (YAJL_IS_STRING(json_get(root, "previousSecretUntil")))
			printf("the previous one signs beside it until %s\n",
			       when(json_get(root, "previousSecretUntil")));
	} else {
		print_endpoint(root);
		if (YAJL_IS_STRING(json_get(root, "secret")))
			printf("signing secret (shown this once): %s\n",
			       when(json_get(root, "secret")));
	}
	yajl_tree_free(root);
}

/* ---- test ---- */

struct test_run {
	struct cli_call *k;
	const struct config *cfg;
	const char *account;
	int as_json, delivered;
	struct ping_pool *pings; /* made for the test */
};

static void on_pinged(void *ud, const struct ping_result *r)
{
	struct test_run *t = ud;
	yajl_gen g;
	size_t len;
	const char *s;

	t->delivered = r->delivered;
	if (t->as_json) {
		g = json_gen_new();
		json_open(g);
		json_str(g, "id");
		json_str(g, r->id);
		json_str(g, "delivered");
		json_bool(g, r->delivered);
		json_str(g, "status");
		if (r->status > 0)
			json_int(g, r->status);
		else
			json_null(g);
		json_str(g, "durationMs");
		json_int(g, r->duration_ms);
		json_str(g, "error");
		json_str_or_null(g, r->error);
		json_str(g, "response");
		json_str_or_null(g, r->response);
		json_close(g);
		s = json_buf(g, &len);
		printf("%.*s\n", (int)len, s);
		yajl_gen_free(g);
	} else if (r->delivered) {
		printf("test %s delivered: HTTP %ld in %lld ms\n", r->id, r->status,
		       r->duration_ms);
	} else {
		printf("test %s not delivered: %s (%lld ms)\n", r->id, r->error ? r->error : "?",
		       r->duration_ms);
	}
	t->k->done = 1;
	event_base_loopbreak(t->k->base);
}

static void on_target(void *ud, int result, const struct endpoint_target *target, const char *err)
{
	struct test_run *t = ud;

	if (result != 0) {
		t->k->result = result;
		snprintf(t->k->err, sizeof(t->k->err), "%s", err ? err : "");
		t->k->done = 1;
		event_base_loopbreak(t->k->base);
		return;
	}
	t->pings = ping_pool_new(t->k->base, t->cfg);
	ping_send(t->pings, target, t->account, on_pinged, t);
}

/* ---- the command ---- */

/* Take one option of a create or an update into o: 0, or 2 (usage). */
static int take_option(int opt, struct ep_opts *o)
{
	char *end = NULL;

	switch (opt) {
	case 'u':
		o->url = optarg;
		break;
	case 'd':
		o->description = optarg;
		break;
	case 't':
	case 'H':
		if ((opt == 't' ? o->ntypes : o->nheaders) >= CLI_EP_MAX) {
			fprintf(stderr, "pixrelay endpoints: --%s: too many\n",
				opt == 't' ? "event-type" : "header");
			return 2;
		}
		if (opt == 't')
			o->types[o->ntypes++] = optarg;
		else
			o->headers[o->nheaders++] = optarg;
		break;
	case 'A':
		o->all_types = 1;
		break;
	case 'N':
		o->no_headers = 1;
		break;
	case 'E':
		o->enabled = 1;
		break;
	case 'D':
		o->enabled = 0;
		break;
	case 'g':
		o->grace = strtol(optarg, &end, 10);
		if (!*optarg || *end || o->grace < 0 || o->grace > ENDPOINT_GRACE_MAX) {
			fprintf(stderr,
				"pixrelay endpoints: --grace must be from 0 to %d seconds\n",
				ENDPOINT_GRACE_MAX);
			return 2;
		}
		break;
	}
	return 0;
}

/* Which options a verb takes (the others are usage errors). */
static int option_fits(const char *verb, const struct ep_opts *o)
{
	int create = strcmp(verb, "create") == 0, update = strcmp(verb, "update") == 0;
	int body = o->url || o->description || o->ntypes || o->nheaders || o->all_types ||
		   o->no_headers || o->enabled >= 0;

	if (body && !create && !update)
		return 0;
	if (create && (o->all_types || o->no_headers || o->enabled == 1))
		return 0;
	if ((o->all_types && o->ntypes) || (o->no_headers && o->nheaders))
		return 0;
	return o->grace < 0 || strcmp(verb, "rotate-secret") == 0;
}

int cli_cmd_endpoints(const struct config *cfg, int argc, char **argv)
{
	static const struct option lo[] = {CLI_OPT_ENV,
					   CLI_OPT_ACCOUNT,
					   {"url", required_argument, NULL, 'u'},
					   {"description", required_argument, NULL, 'd'},
					   {"event-type", required_argument, NULL, 't'},
					   {"all-event-types", no_argument, NULL, 'A'},
					   {"header", required_argument, NULL, 'H'},
					   {"no-headers", no_argument, NULL, 'N'},
					   {"enable", no_argument, NULL, 'E'},
					   {"disable", no_argument, NULL, 'D'},
					   {"disabled", no_argument, NULL, 'D'},
					   {"grace", required_argument, NULL, 'g'},
					   CLI_OPT_JSON,
					   CLI_OPT_END};
	struct cli_args a;
	const char *verb, *id = NULL;
	struct ep_opts o;
	struct endpoint_spec spec;
	int opt, rc, has_spec = 0;
	enum env env;
	struct cli_redis cr;
	struct cli_call call;
	char acct[32];

	if ((rc = cli_action(argc, argv, usage_endpoints, &verb)) >= 0)
		return rc;
	memset(&o, 0, sizeof(o));
	o.enabled = -1;
	o.grace = -1;
	cli_args_init(&a, argc - 1, argv + 1, lo, NULL, usage_endpoints);
	a.env = "sandbox";
	while ((opt = cli_args_next(&a)) >= 0)
		if (take_option(opt, &o) != 0)
			return 2;
	if (opt == CLI_ARGS_EXIT)
		return a.exit_code;
	if (!cli_verb_known("endpoints", usage_endpoints, verb,
			    (const char *const[]){"create", "list", "show", "update", "delete",
						  "rotate-secret", "test", NULL}))
		return 2;
	if (env_parse(a.env, &env) < 0) {
		fprintf(stderr, "pixrelay endpoints: --env must be sandbox or production\n");
		return 2;
	}
	if (!option_fits(verb, &o)) {
		fprintf(stderr, "pixrelay endpoints %s: options that do not go together here\n%s",
			verb, usage_endpoints);
		return 2;
	}
	if (optind + 1 < argc)
		id = argv[optind + 1];
	if (strcmp(verb, "create") == 0 || strcmp(verb, "list") == 0) {
		if (id)
			return cli_unexpected("endpoints", verb, id);
	} else if (!id) {
		fprintf(stderr, "pixrelay endpoints %s: ENDPOINT_ID is required\n", verb);
		return 2;
	} else if (optind + 2 < argc) {
		return cli_unexpected("endpoints", verb, argv[optind + 2]);
	}
	if (strcmp(verb, "create") == 0 || strcmp(verb, "update") == 0) {
		if (spec_of(verb, cfg, env, &o, strcmp(verb, "create") == 0, &spec) < 0)
			return 2;
		has_spec = 1;
	}
	rc = 1;
	if (cli_open_account(cfg, env, a.account, &cr, acct) < 0)
		goto out;
	if (cli_call_open(&call, cfg, &cr) == 0) {
		struct test_run t = {&call, cfg, acct, a.json, 0, NULL};
		if (strcmp(verb, "create") == 0)
			endpoints_create(call.r, cfg, env, acct, &spec, cli_call_done, &call);
		else if (strcmp(verb, "list") == 0)
			endpoints_list(call.r, cfg, env, acct, cli_call_done, &call);
		else if (strcmp(verb, "show") == 0)
			endpoints_get(call.r, cfg, env, acct, id, cli_call_done, &call);
		else if (strcmp(verb, "update") == 0)
			endpoints_update(call.r, cfg, env, acct, id, &spec, cli_call_done, &call);
		else if (strcmp(verb, "delete") == 0)
			endpoints_delete(call.r, cfg, env, acct, id, cli_call_done, &call);
		else if (strcmp(verb, "rotate-secret") == 0)
			endpoints_rotate(call.r, cfg, env, acct, id,
					 o.grace >= 0 ? o.grace : ENDPOINT_GRACE_DEFAULT,
					 cli_call_done, &call);
		else
			endpoints_target(call.r, cfg, env, acct, id, on_target, &t);
		cli_call_wait(&call);
		ping_pool_free(t.pings);
		if (call.result < 0)
			fprintf(stderr, "pixrelay endpoints %s: %s\n", verb, call.err);
		else if (call.result == ENDPOINTS_NOT_FOUND)
			fprintf(
			    stderr,
			    "pixrelay endpoints %s: no webhook endpoint %s of account %s (%s)\n",
			    verb, id, acct, env_name(env));
		else if (call.result == ENDPOINTS_TOO_MANY)
			fprintf(
			    stderr,
			    "pixrelay endpoints create: account %s has %d webhook endpoints in %s, "
			    "the most it may have; delete one first\n",
			    acct, ENDPOINT_MAX, env_name(env));
		else if (call.result == ENDPOINTS_NO_ACCOUNT)
			fprintf(stderr, "pixrelay endpoints %s: no account %s in %s\n", verb, acct,
				env_name(env));
		else if (strcmp(verb, "test") != 0)
			print_answer(verb, call.json, a.json);
		rc = call.result != 0 || (strcmp(verb, "test") == 0 && !t.delivered) ? 1 : 0;
	}
	cli_call_close(&call);
	cli_redis_close(&cr);
out:
	if (has_spec)
		endpoint_spec_free(&spec);
	return rc;
}
