/* cli_init: `pixrelay init`, which creates the platform account of each
 * environment unless it exists (the same keys_platform_init the other
 * commands call when no --account is given). The keys of those accounts are
 * made with `pixrelay keys` (cli_keys.c).
 */
#include "cli_int.h"

#include "pixrelay/core/json.h"
#include "pixrelay/store/keys.h"

#include <stdio.h>
#include <string.h>

static const char usage_init[] =
    "usage: pixrelay init [--env sandbox|production|all] [--json]\n\n"
    "Create the platform account of each environment unless it exists,\n"
    "and print its id. Running it again changes nothing.\n";

int cli_cmd_init(const struct config *cfg, int argc, char **argv)
{
	static const struct option lo[] = {CLI_OPT_ENV, CLI_OPT_JSON, CLI_OPT_END};
	struct cli_args a;
	int rc = 1;
	struct cli_redis cr;
	yajl_gen g = NULL;

	cli_args_init(&a, argc, argv, lo, usage_init, NULL);
	a.env = "all";
	if (cli_args_next(&a) == CLI_ARGS_EXIT)
		return a.exit_code;
	if (strcmp(a.env, "all") != 0) {
		enum env e;
		if (env_parse(a.env, &e) < 0) {
			fprintf(stderr,
				"pixrelay init: --env must be sandbox, production or all\n");
			return 2;
		}
	}
	if (cli_redis_open(cfg, &cr) < 0)
		return 1;
	if (a.json) {
		g = json_gen_new();
		json_open(g);
	}
	for (int i = 0; i < 2; i++) {
		enum env env = i ? ENV_PRODUCTION : ENV_SANDBOX;
		char id[32], err[256];
		int created = 0;
		if (strcmp(a.env, "all") != 0 && strcmp(a.env, env_name(env)) != 0 &&
		    !(env == ENV_SANDBOX && strcmp(a.env, "test") == 0) &&
		    !(env == ENV_PRODUCTION && strcmp(a.env, "live") == 0))
			continue;
		if (keys_platform_init(cr.c, cfg->prefix, cfg->shards, env, id, &created, err,
				       sizeof(err)) < 0) {
			fprintf(stderr, "pixrelay init: %s\n", err);
			goto done;
		}
		if (g) {
			json_str(g, env_name(env));
			json_open(g);
			json_str(g, "account");
			json_str(g, id);
			json_str(g, "created");
			json_bool(g, created);
			json_close(g);
		} else {
			printf("%s platform account: %s (%s)\n", env_name(env), id,
			       created ? "created" : "already there");
		}
	}
	if (g) {
		size_t len;
		const char *s;
		json_close(g);
		s = json_buf(g, &len);
		printf("%.*s\n", (int)len, s);
	}
	rc = 0;
done:
	if (g)
		yajl_gen_free(g);
	cli_redis_close(&cr);
	return rc;
}
