/* cli: the command line of the pixrelay binary. Reads the settings, then
 * dispatches on the command name: help and version are answered here, every
 * other command runs in its own file (cli_<command>.c; account and review
 * share cli_account.c), with the argument helpers of cli_args.c and the
 * Redis glue of cli_redis.c (cli_int.h declares them all).
 */
#include "pixrelay/cli/cli.h"

#include "cli_int.h"

#include "pixrelay/core/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_main[] =
    "usage: pixrelay [SETTINGS] COMMAND [ARGS]\n"
    "\n"
    "Commands:\n"
    "  serve                 run the HTTP API (and its embedded Redis unless --redis is given)\n"
    "  init                  create the platform account of an environment (idempotent)\n"
    "  keys create|list|revoke\n"
    "                        manage API keys\n"
    "  account show|set      show an account, set its postbackUrl\n"
    "  review list|show|approve|reject\n"
    "                        the operator's KYC review of new business accounts\n"
    "  secrets [show|rotate|end-rotation]\n"
    "                        an account's postback signing and ingest secrets\n"
    "  events list|show|replay\n"
    "                        postback events: list them, show one with its attempts,\n"
    "                        replay one or all a filter selects\n"
    "  tail                  print postback delivery attempts as they happen\n"
    "  listen --forward-to URL\n"
    "                        forward an account's events, live, to a local URL (no tunnel)\n"
    "  trigger charge.paid|charge.expired|charge.refunded|charge.failed\n"
    "                        make a sandbox charge paid, expired, refunded or failed\n"
    "  brcode decode CODE    check a Pix copy-and-paste code and print its fields\n"
    "  version               print the version\n"
    "  help                  this text and every setting\n"
    "\n"
    "Every command takes --help. Settings may come before or after the command.\n";

int cli_main(int argc, char **argv)
{
	struct config cfg;
	char **rest = NULL;
	int nrest = 0, rc = 2;
	enum log_level level;
	const char *cmd;

	if (config_load(&cfg, argc - 1, argv + 1, &rest, &nrest) < 0)
		return 2;
	if (log_parse_level(cfg.log_level, &level) < 0) {
		fprintf(stderr, "pixrelay: log-level must be debug, info, warn or error\n");
		goto done;
	}
	log_set_level(level);
	cmd = nrest > 0 ? rest[0] : NULL;
	if (!cmd || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
	    strcmp(cmd, "help") == 0) {
		fputs(usage_main, cmd ? stdout : stderr);
		if (cmd) {
			putchar('\n');
			config_usage(stdout);
		}
		rc = cmd ? 0 : 2;
	} else if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
		printf("pixrelay %s\n", PIXRELAY_VERSION);
		rc = 0;
	} else if (strcmp(cmd, "serve") == 0) {
		rc = cli_cmd_serve(&cfg, nrest, rest);
	} else if (strcmp(cmd, "init") == 0) {
		rc = cli_cmd_init(&cfg, nrest, rest);
	} else if (strcmp(cmd, "account") == 0) {
		rc = cli_cmd_account(&cfg, nrest, rest);
	} else if (strcmp(cmd, "review") == 0) {
		rc = cli_cmd_review(&cfg, nrest, rest);
	} else if (strcmp(cmd, "events") == 0) {
		rc = cli_cmd_events(&cfg, nrest, rest);
	} else if (strcmp(cmd, "tail") == 0) {
		rc = cli_cmd_tail(&cfg, nrest, rest);
	} else if (strcmp(cmd, "listen") == 0) {
		rc = cli_cmd_listen(&cfg, nrest, rest);
	} else if (strcmp(cmd, "trigger") == 0) {
		rc = cli_cmd_trigger(&cfg, nrest, rest);
	} else if (strcmp(cmd, "brcode") == 0) {
		rc = cli_cmd_brcode(&cfg, nrest, rest);
	} else if (strcmp(cmd, "secrets") == 0) {
		rc = cli_cmd_secrets(&cfg, nrest, rest);
	} else if (strcmp(cmd, "keys") == 0) {
		rc = cli_cmd_keys(&cfg, nrest, rest);
	} else {
		fprintf(stderr, "pixrelay: unknown command '%s'\n\n%s", cmd, usage_main);
	}
done:
	free(rest);
	config_deinit(&cfg);
	return rc;
}
