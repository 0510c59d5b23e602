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
    "  endpoints create|list|show|update|delete|rotate-secret|test\n"
    "                        an account's webhook endpoints: more destinations for its\n"
    "                        events, each with its event types, secret and headers\n"
    "  tail                  print postback delivery attempts as they happen\n"
    "  listen --forward-to URL\n"
    "                        forward an account's events, live, to a local URL (no tunnel)\n"
    "  trigger charge.paid|charge.expired|charge.refunded|charge.failed|pix\n"
    "                        make a sandbox charge paid, expired, refunded or failed, or\n"
    "                        send a bank's Pix notification\n"
    "  bank connect|update|list|show|disconnect|notifications|credentials\n"
    "       |register-webhook|reconcile|report\n"
    "                        the bank connections through which banks report Pix,\n"
    "                        their webhooks registered at the banks, their\n"
    "                        reconciliation and the day's report\n"
    "  brcode decode CODE    check a Pix copy-and-paste code and print its fields\n"
    "  version               print the version\n"
    "  help                  this text and every setting\n"
    "\n"
    "Every command takes --help. Settings may come before or after the command.\n"
    "Commands other than serve print only what went wrong on standard error;\n"
    "--verbose (or log-level) shows their info lines too.\n";

/* The commands that read the settings without changing them (serve hands
 * them on to server_run), by name. */
static const struct cli_command {
	const char *name;
	int (*run)(const struct config *cfg, int argc, char **argv);
} cli_commands[] = {
    {"init", cli_cmd_init},	  {"account", cli_cmd_account}, {"review", cli_cmd_review},
    {"events", cli_cmd_events},	  {"tail", cli_cmd_tail},	{"listen", cli_cmd_listen},
    {"trigger", cli_cmd_trigger}, {"brcode", cli_cmd_brcode},	{"secrets", cli_cmd_secrets},
    {"keys", cli_cmd_keys},	  {"bank", cli_cmd_bank},	{"endpoints", cli_cmd_endpoints},
};

static const struct cli_command *cli_command_find(const char *name)
{
	for (size_t i = 0; i < sizeof(cli_commands) / sizeof(cli_commands[0]); i++)
		if (strcmp(name, cli_commands[i].name) == 0)
			return &cli_commands[i];
	return NULL;
}

int cli_main(int argc, char **argv)
{
	struct config cfg;
	char **rest = NULL;
	int nrest = 0, rc = 2, verbose = 0;
	enum log_level level;
	const char *cmd;
	const struct cli_command *c;

	if (config_load(&cfg, argc - 1, argv + 1, &rest, &nrest) < 0)
		return 2;
	/* --verbose, anywhere before a "--": the commands' info lines too */
	for (int i = 0; i < nrest && strcmp(rest[i], "--") != 0; i++)
		if (strcmp(rest[i], "--verbose") == 0) {
			memmove(rest + i, rest + i + 1, (size_t)(nrest - i) * sizeof(*rest));
			nrest--;
			i--;
			verbose = 1;
		}
	cmd = nrest > 0 ? rest[0] : NULL;
	/* a command is quiet unless something is wrong; serve says what it
	 * does (log-level, when set, decides for both) */
	if (!cfg.log_level[0])
		level = verbose || (cmd && strcmp(cmd, "serve") == 0) ? LOG_INFO : LOG_WARN;
	else if (log_parse_level(cfg.log_level, &level) < 0) {
		fprintf(stderr, "pixrelay: log-level must be debug, info, warn or error\n");
		goto done;
	}
	if (verbose && level > LOG_INFO)
		level = LOG_INFO;
	log_set_level(level);
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
	} else if ((c = cli_command_find(cmd)) != NULL) {
		rc = c->run(&cfg, nrest, rest);
	} else {
		fprintf(stderr, "pixrelay: unknown command '%s'\n\n%s", cmd, usage_main);
	}
done:
	free(rest);
	config_deinit(&cfg);
	return rc;
}
