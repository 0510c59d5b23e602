/* cli_args: reading the arguments of a command. One getopt_long loop for
 * the options several commands share (--env, --account, --api-key, --json)
 * and for --help and bad options, the "ACTION [options]" start of keys,
 * account, review, events and trigger, and the checks and messages every
 * command gives the same way (unknown action, --env required, unexpected
 * argument, the API key, a --since time). The commands themselves are in
 * cli_<command>.c, the Redis they use in cli_redis.c.
 */
#include "cli_int.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/timefmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_args_init(struct cli_args *a, int argc, char **argv, const struct option *lo,
		   const char *help, const char *usage)
{
	memset(a, 0, sizeof(*a));
	a->argc = argc;
	a->argv = argv;
	a->lo = lo;
	a->help = help;
	a->usage = usage;
	optind = 1;
}

/* A bad option: the usage on stderr, exit code 2. */
static int bad_option(struct cli_args *a)
{
	if (a->usage)
		fputs(a->usage, stderr);
	a->exit_code = 2;
	return CLI_ARGS_EXIT;
}

int cli_args_next(struct cli_args *a)
{
	int opt;

	while ((opt = getopt_long(a->argc, a->argv, "h", a->lo, NULL)) != -1) {
		switch (opt) {
		case 'e':
			a->env = optarg;
			break;
		case 'a':
			a->account = optarg;
			break;
		case 'k':
			a->api_key = optarg;
			break;
		case 'j':
			a->json = 1;
			break;
		case 'h':
			if (a->help) {
				fputs(a->help, stdout);
				a->exit_code = 0;
				return CLI_ARGS_EXIT;
			}
			/* --help where it is not an option: a bad option */
			return bad_option(a);
		case '?':
			return bad_option(a);
		default:
			return opt;
		}
	}
	return -1;
}

bool cli_want_help(int argc, char **argv)
{
	for (int i = 0; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return true;
	return false;
}

int cli_action(int argc, char **argv, const char *usage, const char **verb)
{
	if (argc < 2 || cli_want_help(argc, argv)) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	*verb = argv[1];
	optind = 1;
	return -1;
}

bool cli_verb_known(const char *cmd, const char *usage, const char *verb, const char *const verbs[])
{
	for (size_t i = 0; verbs[i]; i++)
		if (strcmp(verb, verbs[i]) == 0)
			return true;
	fprintf(stderr, "pixrelay %s: unknown action '%s'\n\n%s", cmd, verb, usage);
	return false;
}

int cli_env_required(const char *cmd, const char *envs, enum env *env)
{
	if (!envs || env_parse(envs, env) < 0) {
		fprintf(stderr, "pixrelay %s: --env sandbox|production is required\n", cmd);
		return -1;
	}
	return 0;
}

int cli_unexpected(const char *cmd, const char *verb, const char *arg)
{
	fprintf(stderr, "pixrelay %s%s%s: unexpected argument '%s'\n", cmd, verb ? " " : "",
		verb ? verb : "", arg);
	return 2;
}

const char *cli_api_key(const char *cmd, const char *given)
{
	const char *k = given && *given ? given : getenv("PIXRELAY_API_KEY");

	if (k && *k)
		return k;
	fprintf(stderr, "pixrelay %s: an API key is required: --api-key KEY or PIXRELAY_API_KEY\n",
		cmd);
	return NULL;
}

int cli_parse_since(const char *s, long long *ms)
{
	char *end = NULL;
	long long n = strtoll(s, &end, 10), unit = 0;

	if (end != s && n >= 0 && end[0] && !end[1]) {
		switch (end[0]) {
		case 's':
			unit = 1000;
			break;
		case 'm':
			unit = 60000;
			break;
		case 'h':
			unit = 3600000;
			break;
		case 'd':
			unit = 86400000;
			break;
		case 'w':
			unit = 7 * 86400000LL;
			break;
		default:
			break;
		}
		if (unit && n <= 3650LL * 86400000 / unit) {
			*ms = (long long)ids_now_ms() - n * unit;
			if (*ms < 1)
				*ms = 1;
			return 0;
		}
	}
	return timefmt_parse(s, ms);
}
