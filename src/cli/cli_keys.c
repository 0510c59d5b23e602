/* cli_keys: `pixrelay keys create|list|revoke`, the API keys of the
 * accounts (the store is keys.c). The secrets of an account are shown and
 * rotated by `pixrelay secrets` (cli_secrets.c).
 */
#include "cli_int.h"

#include "pixrelay/core/mem.h"
#include "pixrelay/store/auth.h"
#include "pixrelay/store/keys.h"

#include <stdio.h>
#include <string.h>

static const char usage_keys[] =
    "usage: pixrelay keys create --env sandbox|production [--master | --account ID]\n"
    "                            [--description TEXT] [--json]\n"
    "       pixrelay keys list [--json]\n"
    "       pixrelay keys revoke KEY_ID [--json]\n\n"
    "create  makes a key and prints it once; only its SHA-256 is stored. Without\n"
    "        --account the key belongs to the environment's platform account\n"
    "        (run 'pixrelay init' first); --master makes a master key, which may act\n"
    "        for any account of its environment with the header X-Account-ID.\n"
    "list    shows every key without its secret.\n"
    "revoke  stops a key at once, for every process sharing the Redis.\n";

int cli_cmd_keys(const struct config *cfg, int argc, char **argv)
{
	static const struct option lo[] = {
	    CLI_OPT_ENV,     {"master", no_argument, NULL, 'm'},
	    CLI_OPT_ACCOUNT, {"description", required_argument, NULL, 'd'},
	    CLI_OPT_JSON,    CLI_OPT_END};
	struct cli_args a;
	const char *verb, *description = "", *id;
	int master = 0, opt, rc = 1;
	struct cli_redis cr;
	char err[256];

	if ((rc = cli_action(argc, argv, usage_keys, &verb)) >= 0)
		return rc;
	rc = 1;
	cli_args_init(&a, argc - 1, argv + 1, lo, NULL, usage_keys);
	while ((opt = cli_args_next(&a)) >= 0) {
		switch (opt) {
		case 'm':
			master = 1;
			break;
		case 'd':
			description = optarg;
			break;
		}
	}
	if (opt == CLI_ARGS_EXIT)
		return a.exit_code;
	if (!cli_verb_known("keys", usage_keys, verb,
			    (const char *const[]){"create", "list", "revoke", NULL}))
		return 2;
	if (strcmp(verb, "create") == 0) {
		enum env env;
		char secret[AUTH_KEY_MAX];
		struct auth_key key;
		if (cli_env_required("keys create", a.env, &env) < 0)
			return 2;
		if (master && a.account) {
			fprintf(stderr, "pixrelay keys create: --master and --account exclude each "
					"other (master keys belong to the platform account)\n");
			return 2;
		}
		if (strlen(description) > 200) {
			fprintf(stderr, "pixrelay keys create: --description is limited to 200 "
					"characters\n");
			return 2;
		}
		if (optind + 1 < argc)
			return cli_unexpected("keys create", NULL, argv[optind + 1]);
		if (cli_redis_open(cfg, &cr) < 0)
			return 1;
		rc =
		    keys_create(cr.c, cfg->prefix, env, master ? AUTH_MASTER_KEY : AUTH_ACCOUNT_KEY,
				a.account, description, secret, &key, err, sizeof(err));
		if (rc != 0) {
			fprintf(stderr, "pixrelay keys create: %s\n", err);
			rc = 1;
		} else if (a.json) {
			printf("{\"id\":\"%s\",\"key\":\"%s\",\"env\":\"%s\",\"kind\":\"%s\","
			       "\"account\":\"%s\"}\n",
			       key.id, secret, env_name(env), auth_kind_name(key.kind),
			       key.account);
		} else {
			printf("created %s key %s for account %s (%s)\n\n    %s\n\n"
			       "This is the only time the key is shown.\n",
			       auth_kind_name(key.kind), key.id, key.account, env_name(env),
			       secret);
		}
		mem_wipe(secret, sizeof(secret));
		cli_redis_close(&cr);
		return rc;
	}
	if (strcmp(verb, "list") == 0) {
		if (cli_redis_open(cfg, &cr) < 0)
			return 1;
		rc = keys_list(cr.c, cfg->prefix, stdout, a.json, err, sizeof(err)) == 0 ? 0 : 1;
		if (rc)
			fprintf(stderr, "pixrelay keys list: %s\n", err);
		cli_redis_close(&cr);
		return rc;
	}
	/* revoke */
	id = optind + 1 < argc ? argv[optind + 1] : NULL;
	if (!id) {
		fprintf(stderr, "pixrelay keys revoke: KEY_ID is required\n");
		return 2;
	}
	if (cli_redis_open(cfg, &cr) < 0)
		return 1;
	rc = keys_revoke(cr.c, cfg->prefix, id, err, sizeof(err));
	if (rc == 0 || rc == KEYS_ALREADY_REVOKED) {
		if (a.json)
			printf("{\"id\":\"%s\",\"revoked\":true,\"already\":%s}\n", id,
			       rc ? "true" : "false");
		else
			printf("%s %s\n", id, rc ? "was already revoked" : "revoked");
		rc = 0;
	} else {
		fprintf(stderr, "pixrelay keys revoke: %s\n", err);
		rc = 1;
	}
	cli_redis_close(&cr);
	return rc;
}
