/* cli_secrets: `pixrelay secrets [show|rotate|end-rotation]`, the webhook
 * secrets of an account (keys.c): the signing secret of its postbacks, the
 * compatibility signature header, and the secret its provider signs
 * ingested notifications with, with the ingest URL of the running serve
 * (cli_read_dispatchers of cli_redis.c). The account itself is `pixrelay
 * account` (cli_account.c), its API keys `pixrelay keys` (cli_keys.c).
 */
#include "cli_int.h"

#include "pixrelay/core/mem.h"
#include "pixrelay/store/keys.h"

#include <stdio.h>
#include <string.h>

static const char usage_secrets[] =
    "usage: pixrelay secrets [show|rotate|end-rotation] --env sandbox|production\n"
    "                        [--account ID] [--json]\n\n"
    "show          the webhook secrets of an account (default: the platform account):\n"
    "              the Standard Webhooks signing secret of its postbacks (whsec_...),\n"
    "              the value of the compatibility 'signature' header, and the secret\n"
    "              its upstream provider signs ingested notifications with.\n"
    "rotate        make a new signing secret; until end-rotation, postbacks carry\n"
    "              signatures with both the new and the previous secret.\n"
    "end-rotation  forget the previous signing secret.\n";

int cli_cmd_secrets(const struct config *cfg, int argc, char **argv)
{
	static const struct option lo[] = {CLI_OPT_ENV, CLI_OPT_ACCOUNT, CLI_OPT_JSON, CLI_OPT_END};
	struct cli_args a;
	const char *verb = "show";
	int rc = 1, verb_given = 0;
	enum env env;
	struct cli_redis cr;
	char id[32], signing[128], compat[128], ingest[128], err[256], base[512] = "";

	if (argc > 1 && argv[1][0] != '-') {
		verb = argv[1];
		verb_given = 1;
		argv++;
		argc--;
	}
	cli_args_init(&a, argc, argv, lo, usage_secrets, NULL);
	if (cli_args_next(&a) == CLI_ARGS_EXIT)
		return a.exit_code;
	/* the action after the options (secrets --env sandbox rotate) is the
	 * action still, never a word passed over: rotating must not show */
	if (optind < argc) {
		if (verb_given || optind + 1 < argc)
			return cli_unexpected("secrets", verb_given ? verb : NULL,
					      argv[verb_given ? optind : optind + 1]);
		verb = argv[optind];
	}
	if (!cli_verb_known("secrets", usage_secrets, verb,
			    (const char *const[]){"show", "rotate", "end-rotation", NULL}) ||
	    cli_env_required("secrets", a.env, &env) < 0)
		return 2;
	if (cli_open_account(cfg, env, a.account, &cr, id) < 0)
		return 1;
	if (strcmp(verb, "show") != 0) {
		int end = strcmp(verb, "end-rotation") == 0;
		if (keys_rotate_signing(cr.c, cfg->prefix, env, id, end, signing, sizeof(signing),
					err, sizeof(err)) != 0) {
			fprintf(stderr, "pixrelay secrets %s: %s\n", verb, err);
			goto done;
		}
		if (a.json)
			printf("{\"account\":\"%s\",\"signingSecret\":%s%s%s}\n", id,
			       end ? "" : "\"", end ? "null" : signing, end ? "" : "\"");
		else if (end)
			printf("account %s: the previous signing secret is forgotten\n", id);
		else
			printf(
			    "account %s: new postback signing secret %s\n"
			    "Postbacks now carry signatures with the new and the previous secret;\n"
			    "run 'pixrelay secrets end-rotation' once every receiver has the new "
			    "one.\n",
			    id, signing);
		mem_wipe(signing, sizeof(signing));
		rc = 0;
		goto done;
	}
	if (keys_account_secrets(cr.c, cfg->prefix, env, id, signing, sizeof(signing), compat,
				 sizeof(compat), ingest, sizeof(ingest), err, sizeof(err)) != 0) {
		fprintf(stderr, "pixrelay secrets: %s\n", err);
		goto done;
	}
	if (cfg->base_url_derived) {
		/* the base URL a running serve announces, rather than the default */
		int alive;
		long long age;
		cli_read_dispatchers(cr.c, cfg->prefix, &alive, base, sizeof(base), &age);
	}
	if (!*base)
		snprintf(base, sizeof(base), "%s", cfg->base_url);
	if (a.json)
		printf("{\"account\":\"%s\",\"signingSecret\":\"%s\",\"signature\":\"%s\","
		       "\"ingestSecret\":\"%s\",\"ingestUrl\":\"%s/webhooks/ingest/%s\"}\n",
		       id, signing, compat, ingest, base, id);
	else
		printf(
		    "account %s (%s)\n  postback signing secret: %s\n  postback signature header: "
		    "%s\n  ingest secret (for %s/webhooks/ingest/%s): %s\n",
		    id, env_name(env), signing, compat, base, id, ingest);
	rc = 0;
done:
	mem_wipe(signing, sizeof(signing));
	mem_wipe(compat, sizeof(compat));
	mem_wipe(ingest, sizeof(ingest));
	cli_redis_close(&cr);
	return rc;
}
