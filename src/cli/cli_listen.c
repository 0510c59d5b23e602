/* cli_listen: the arguments of `pixrelay listen --forward-to URL`, checked
 * before listen_run (listen.c) reads the account's event stream and forwards
 * it. Its companion for testing a local webhook receiver, `pixrelay
 * trigger`, is in cli_trigger.c.
 */
#include "cli_int.h"

#include "pixrelay/cli/listen.h"
#include "pixrelay/core/validate.h"
#include "pixrelay/pix/sign.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_listen[] =
    "usage: pixrelay listen --forward-to URL [--api-key KEY] [--account ID]\n"
    "                       [--signing-secret whsec_...] [--signature VALUE]\n"
    "                       [--since TIME|EVENT_ID] [--max-events N] [--json]\n\n"
    "Forward an account's postback events, live, to a local URL: no tunnel, the\n"
    "events come over GET /v1/events/stream of the pixrelay at --base-url (default:\n"
    "the one this machine's 'pixrelay serve' announces, else http://<listen>/v1),\n"
    "local or remote. Each is POSTed to URL with the body and headers its postback\n"
    "carries, signed with the account's signing secret when the server sent it, so\n"
    "your verification code passes; one line per event shows what URL answered and\n"
    "how fast. If the stream breaks, listen reconnects and resumes after the last\n"
    "event it got.\n\n"
    "  --api-key KEY         the account's API key (else $PIXRELAY_API_KEY)\n"
    "  --account ID          with a master key: the account whose events to take\n"
    "  --signing-secret S    sign again with this secret instead (else\n"
    "                        $PIXRELAY_SIGNING_SECRET)\n"
    "  --signature VALUE     also send the compatibility header 'signature: VALUE'\n"
    "                        (pixrelay secrets shows it)\n"
    "  --since T             first the events since T (Unix seconds, 'YYYY-MM-DD\n"
    "                        HH:MM:SS', RFC 3339, a duration such as 1h, or an event id)\n"
    "  --max-events N        stop after forwarding N events\n"
    "  --json                one JSON object per event on standard output\n";

int cli_cmd_listen(const struct config *cfg, int argc, char **argv)
{
	static const struct option lo[] = {{"forward-to", required_argument, NULL, 'f'},
					   CLI_OPT_API_KEY,
					   CLI_OPT_ACCOUNT,
					   {"signing-secret", required_argument, NULL, 's'},
					   {"signature", required_argument, NULL, 'S'},
					   {"since", required_argument, NULL, 'i'},
					   {"max-events", required_argument, NULL, 'm'},
					   CLI_OPT_JSON,
					   CLI_OPT_END};
	struct cli_args a;
	struct listen_opts o;
	const char *since = NULL;
	char base[512], since_txt[32], *end = NULL;
	int opt;

	memset(&o, 0, sizeof(o));
	o.timeout_ms = cfg->delivery_timeout_ms;
	o.signing_secret = getenv("PIXRELAY_SIGNING_SECRET");
	cli_args_init(&a, argc, argv, lo, usage_listen, usage_listen);
	while ((opt = cli_args_next(&a)) >= 0) {
		switch (opt) {
		case 'f':
			o.forward_to = optarg;
			break;
		case 's':
			o.signing_secret = optarg;
			break;
		case 'S':
			o.signature = optarg;
			break;
		case 'i':
			since = optarg;
			break;
		case 'm':
			o.max_events = strtol(optarg, &end, 10);
			if (!*optarg || *end || o.max_events < 1) {
				fprintf(stderr, "pixrelay listen: --max-events must be a positive "
						"integer\n");
				return 2;
			}
			break;
		}
	}
	if (opt == CLI_ARGS_EXIT)
		return a.exit_code;
	o.account = a.account;
	o.json = a.json;
	if (optind < argc)
		return cli_unexpected("listen", NULL, argv[optind]);
	if (!o.forward_to || !validate_is_http_url(o.forward_to)) {
		fprintf(stderr, "pixrelay listen: --forward-to must be an absolute http or https "
				"URL (e.g. http://localhost:3000/webhooks)\n");
		return 2;
	}
	o.api_key = cli_api_key("listen", a.api_key);
	if (!o.api_key)
		return 2;
	if (o.signing_secret && !*o.signing_secret)
		o.signing_secret = NULL;
	if (o.signing_secret) {
		char sig[64];
		if (sign_signature(o.signing_secret, "x", 0, "", 0, sig, sizeof(sig)) != 0) {
			fprintf(stderr, "pixrelay listen: --signing-secret must be a whsec_... "
					"secret (pixrelay secrets shows it)\n");
			return 2;
		}
	}
	if (since) {
		long long ms;
		if (strncmp(since, "evt_", 4) == 0) {
			o.since = since;
		} else if (cli_parse_since(since, &ms) == 0) {
			snprintf(since_txt, sizeof(since_txt), "%lld", ms / 1000);
			o.since = since_txt;
		} else {
			fprintf(stderr,
				"pixrelay listen: --since must be a duration (1h), Unix seconds, "
				"'YYYY-MM-DD HH:MM:SS', RFC 3339 or an event id\n");
			return 2;
		}
	}
	cli_base_url(cfg, base, sizeof(base));
	o.base_url = base;
	return listen_run(&o);
}
