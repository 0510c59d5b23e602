/* cli_int: what the files of src/cli/ share, and nothing outside it sees.
 *
 * cli.c dispatches on the command name to one cli_cmd_* function per
 * command (cli_serve.c, cli_init.c, cli_keys.c, cli_account.c, cli_secrets.c,
 * cli_events.c, cli_endpoints.c, cli_tail.c, cli_listen.c, cli_trigger.c, cli_brcode.c,
 * cli_bank.c with cli_bank_api.c and cli_bank_webhook.c). They
 * read their arguments with cli_args.c and reach Redis with cli_redis.c.
 * Every cli_cmd_* returns the process exit code: 0 ok, 1 failure, 2 usage
 * error, having printed what went wrong.
 */
#ifndef PIXRELAY_CLI_INT_H
#define PIXRELAY_CLI_INT_H

#include "pixrelay/core/config.h"
#include "pixrelay/pix/bankcreds.h"
#include "pixrelay/pix/bankpix.h"
#include "pixrelay/pix/env.h"
#include "pixrelay/redis/redis.h"
#include "pixrelay/store/banks_conn.h"

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_tree.h>

/* ---- arguments (cli_args.c) ---- */

/* The options several commands share, for their getopt_long tables; the
 * short names are the same in every command, so cli_args_next can store
 * them. CLI_OPT_END closes a table with --help. */
/* clang-format off */
#define CLI_OPT_ENV {"env", required_argument, NULL, 'e'}
#define CLI_OPT_ACCOUNT {"account", required_argument, NULL, 'a'}
#define CLI_OPT_API_KEY {"api-key", required_argument, NULL, 'k'}
#define CLI_OPT_JSON {"json", no_argument, NULL, 'j'}
#define CLI_OPT_END {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}
/* clang-format on */

/* cli_args_next: the command is to return args->exit_code now. */
#define CLI_ARGS_EXIT (-2)

/* The options of one command as getopt_long reads them. Set env, account
 * or api_key before reading to give a default; all strings are borrowed
 * from argv. help NULL makes --help a bad option: the commands that answer
 * it in cli_action first, where getopt sees only an abbreviation (--he). */
struct cli_args {
	int argc;
	char **argv;
	const struct option *lo;
	const char *help;    /* printed on stdout for --help (exit code 0), or NULL */
	const char *usage;   /* printed on stderr after a bad option (exit code 2), or NULL */
	const char *env;     /* --env */
	const char *account; /* --account */
	const char *api_key; /* --api-key */
	int json;	     /* --json */
	int exit_code;
};

/* Start reading the options of argv (argv[0] is the command or its action)
 * with the table lo: getopt reset, the shared options unset. */
void cli_args_init(struct cli_args *a, int argc, char **argv, const struct option *lo,
		   const char *help, const char *usage);
/* The next option: the shared ones (CLI_OPT_*) are stored in a and passed
 * over; returns the short name of one of the command's own (its value in
 * optarg), -1 when every option is read (optind then indexes the first
 * operand), or CLI_ARGS_EXIT after --help (help printed, exit code 0) or a
 * bad option (usage printed, exit code 2). */
int cli_args_next(struct cli_args *a);

/* True when one of the arguments is --help or -h. */
bool cli_want_help(int argc, char **argv);
/* The start of an "ACTION [options]" command: the usage on --help (exit 0)
 * or without an action (exit 2), else the action in *verb, getopt reset to
 * read the options after it, and -1. */
int cli_action(int argc, char **argv, const char *usage, const char **verb);
/* True when verb is one of the NULL-terminated verbs of command cmd; else
 * false with "pixrelay CMD: unknown action 'VERB'" and the usage on stderr. */
bool cli_verb_known(const char *cmd, const char *usage, const char *verb,
		    const char *const verbs[]);
/* Parse the --env that command cmd requires into *env: 0, or -1 with
 * "pixrelay CMD: --env sandbox|production is required" on stderr. */
int cli_env_required(const char *cmd, const char *envs, enum env *env);
/* Print "pixrelay CMD[ VERB]: unexpected argument 'ARG'" (verb may be NULL)
 * and return 2, the exit code of a usage error. */
int cli_unexpected(const char *cmd, const char *verb, const char *arg);
/* The API key of listen and trigger: given (--api-key), else
 * PIXRELAY_API_KEY; NULL, with "pixrelay CMD: an API key is required..." on
 * stderr, when there is none. Borrowed. */
const char *cli_api_key(const char *cmd, const char *given);
/* Parse a --since value: a duration ago (90s, 15m, 1h, 2d, 1w) or a time;
 * event ids are left to the caller. 0 (*ms written) or -1. */
int cli_parse_since(const char *s, long long *ms);

/* ---- Redis (cli_redis.c) ---- */

/* The Redis that a command-line tool uses: the one given with --redis, else
 * the embedded one of data-dir (used through its socket when `serve` runs,
 * else started for the duration of the command). */
struct cli_redis {
	struct rds *c; /* blocking (rds_open) */
	struct redisd *own;
	struct rds_addr addr; /* for an asynchronous client (cli_call) */
};

/* Open the Redis of cfg into cr. 0 (close it with cli_redis_close), or -1
 * with the problem printed and nothing left open. */
int cli_redis_open(const struct config *cfg, struct cli_redis *cr);
void cli_redis_close(struct cli_redis *cr);
/* Open the Redis of cfg and name the account a command is about: --account,
 * else the platform account of env. Returns 0 (close cr after), or -1 with
 * the problem printed and nothing left open. */
int cli_open_account(const struct config *cfg, enum env env, const char *account,
		     struct cli_redis *cr, char out[32]);

/* One asynchronous call of a domain module (the same code the server runs),
 * made from the command line on a private event loop. */
struct cli_call {
	struct event_base *base;
	struct rds *r;
	int done, result;
	char *json;
	char err[256];
};

/* Connect to the Redis of cr and wait until it is ready. Returns 0, or -1
 * with the problem printed (call cli_call_close either way). */
int cli_call_open(struct cli_call *k, const struct config *cfg, const struct cli_redis *cr);
/* The callback to give a domain call: keeps its result, JSON (copied) and
 * error in k and stops the loop. */
void cli_call_done(void *ud, int result, const char *json, const char *err);
/* Run the loop until the call made with cli_call_done answers. */
void cli_call_wait(struct cli_call *k);
void cli_call_close(struct cli_call *k);

/* ---- the running server (cli_redis.c) ---- */

#define CLI_SERVED_FRESH_MS 15000 /* a dispatcher heartbeat younger than this is alive */

/* Count the dispatchers of an HGETALL of <prefix>{meta}:dispatchers
 * (dispatch.c's heartbeats, "MS URL") that are alive at now, and the time of
 * the newest heartbeat (0 when none); with url, the URL of the newest that
 * gives one (url left as it is when none does). */
void cli_dispatchers_scan(const redisReply *r, uint64_t now, int *alive, uint64_t *newest,
			  char *url, size_t size);
/* Read <prefix>{meta}:dispatchers: how many processes dispatch now, the base
 * URL of the freshest (into url, "" when none) and the age of the newest
 * heartbeat (-1 when none). 0, or -1 when Redis could not be read. */
int cli_read_dispatchers(struct rds *c, const char *prefix, int *alive, char *url, size_t size,
			 long long *age_ms);
/* The base URL a command talks to: base-url when it was set, else the one a
 * running `serve` of these settings announces (its heartbeat), else the
 * default from listen. Never starts the embedded Redis for this. */
void cli_base_url(const struct config *cfg, char *out, size_t size);

/* ---- the bank's API credentials (cli_bank_api.c) ---- */

#define CLI_BANK_EXTRA 9 /* --api-header, --api-query kept: one past the most taken */

/* The options that give a connection the bank's API credentials. */
struct cli_bank_api {
	const char *api_url, *token_url, *client_id;
	const char *secret_file, *cert_file, *key_file, *bank_ca_file;
	const char *scope; /* --scope; NULL: the standard's scopes pixrelay uses */
	const char *headers[CLI_BANK_EXTRA], *query[CLI_BANK_EXTRA];
	size_t nheaders, nquery;
	int no_check; /* --no-check: keep them without asking the bank for a token */
};
struct seal_key;
/* True when any of them was given. */
bool cli_bank_api_given(const struct cli_bank_api *o);
/* Take one of the API options (a long option's name and its argument) into
 * o. True when it was one of them, false when not. */
bool cli_bank_api_option(struct cli_bank_api *o, const char *name, const char *arg);
/* Read and check them into out (wipe it with bank_creds_wipe): 0, or -1
 * with the problem printed as "pixrelay CMD: ...". */
int cli_bank_api_read(const char *cmd, const struct cli_bank_api *o, struct bank_creds *out);
/* Ask the bank for a token with `creds` (unless o->no_check): 0 when it
 * gave one; -1 with the bank's answer printed in one line as "pixrelay
 * CMD: ...; <then>". */
int cli_bank_api_try(const char *cmd, const struct config *cfg, const struct cli_bank_api *o,
		     const struct bank_creds *creds, const char *then);
/* The credentials key's file: the credentials-key-file setting, else
 * <data-dir>/credentials.key. */
/* The whole file at `path`, at most `max` bytes, NUL-terminated, trailing
 * newlines removed when `trim`; NULL with the problem printed ("pixrelay
 * <cmd>: --<opt> <path>: ..."). The caller frees it (wiped: it may be a
 * secret). */
char *cli_read_file(const char *cmd, const char *opt, const char *path, size_t max, int trim);

/* GET `path` of a connection's API with `creds` on a loop of its own: the
 * HTTP status with *body (malloc'd, NULL when none), or 0 with why in err. */
long cli_bank_api_get(const struct config *cfg, const struct bank_creds *creds, const char *path,
		      char **body, char *err, size_t errlen);
/* The same with any method and a JSON body `req` (NULL: none). */
long cli_bank_api_call(const struct config *cfg, const struct bank_creds *creds, const char *method,
		       const char *path, const char *req, char **body, char *err, size_t errlen);
/* bank register-webhook of a payment provider's connection (its creds
 * opened in t): the webhook URL registered for each event pixrelay takes
 * (cli_bank_provider.c). The exit code. */
struct cli_bank_conn;
int cli_bank_provider_register(const struct config *cfg, const char *id,
			       const struct cli_bank_conn *t, const char *url, const char *email,
			       int json);

/* The bank connect of a payment provider (`--provider`, not api-pix):
 * cli_bank_provider.c. argv starts at "connect". */
int cli_bank_provider_connect(const struct config *cfg, int argc, char **argv);

void cli_credentials_key_path(const struct config *cfg, char *out, size_t size);
/* Load the credentials key; with create, make it first when the file does
 * not exist (and say so). 0, or -1 with the problem printed. */
int cli_credentials_key(const char *cmd, const struct config *cfg, int create,
			struct seal_key *key);
/* For `bank show`: when connection `id` has API credentials that this
 * host's credentials key does not open (no key, another key, a key file
 * others may read), say why on stderr, as serve's 503 for it would mean.
 * Reads the connection on k's loop. */
void cli_bank_api_explain(struct cli_call *k, const struct config *cfg, const char *id);

/* What the CLI reads of a bank connection. */
struct cli_bank_conn {
	int result; /* 0, BANKS_NOT_FOUND, or -1 (why says it) */
	enum env env;
	enum banks_auth auth;
	char pix_key[BANKPIX_CHAVE_MAX + 1];
	char token_sha[65];	 /* a URL token's SHA-256 (hex; "" for mTLS) */
	int has_api;		 /* it has API credentials */
	int opened;		 /* ... and key opened them into creds (wipe it) */
	struct bank_creds creds; /* zeroed when not opened */
	char why[512];		 /* why not (Redis, or the credentials not opening) */
	enum provider provider;
	char *own_key;	  /* cli_bank_read_own: a sandbox provider connection's own
			   * private key, opened with `key` (NULL: none, or not
			   * opened); freed wiped by the caller */
	char *own_secret; /* cli_bank_read_own: the webhook token a provider's
			   * notifications carry (Asaas's), opened likewise */
};
/* Read connection `id` on k's loop into out; with `key` (NULL: not), its
 * API credentials opened too. */
void cli_bank_read(struct cli_call *k, const struct config *cfg, const char *id,
		   const struct seal_key *key, struct cli_bank_conn *out);
/* cli_bank_read, and a sandbox provider connection's own private key (the
 * one `trigger` signs with) opened with `key` into out->own_key. */
void cli_bank_read_own(struct cli_call *k, const struct config *cfg, const char *id,
		       const struct seal_key *key, struct cli_bank_conn *out);
/* The environment of connection `id` into *env: a connection id names one,
 * so --env (`given`, NULL when not given) is not needed; one that says
 * another is refused. 0; 1 (no such connection, or Redis: said on stderr
 * as "pixrelay CMD: ..."); 2 when --env contradicts it (said). */
int cli_bank_env(struct cli_call *k, const struct config *cfg, const char *cmd, const char *id,
		 const char *given, enum env *env);

/* `pixrelay bank reconcile|report` (cli_bank_recon.c); argv[0] is the verb. */
int cli_bank_recon(const struct config *cfg, int argc, char **argv);

/* ---- bank connections (cli_bank.c, cli_bank_webhook.c) ---- */

/* Print the bank store's JSON for people: "list" a list of connections,
 * "notifications" a log, "disconnect" its answer, else one connection. */
void cli_bank_print(const char *verb, const char *json);
/* `pixrelay bank register-webhook ID`: PUT {api}/webhook/{chave} at the
 * bank of connection `id` of env with its webhookUrl (https only, checked
 * first); a URL-token connection's URL carries a new token, kept once the
 * bank accepted it. Prints what was registered (json: as JSON) or what went
 * wrong; returns the exit code. */
int cli_bank_register_webhook(struct cli_call *k, const struct config *cfg, enum env env,
			      const char *id, const char *email, int json);
/* After `bank connect --register-webhook`: register `url` (the webhookUrl
 * connect made, its token in it) at the bank of the connection `id` just
 * made. 0, or -1 with the problem printed as "pixrelay bank connect: ...". */
int cli_bank_register_url(struct cli_call *k, const struct config *cfg, enum env env,
			  const char *id, const char *url);
/* The JSON object `json` with member `name`: `value` (JSON text) added at
 * its end; malloc'd (a copy of json when it is no object). */
char *cli_json_with(const char *json, const char *name, const char *value);
/* `pixrelay bank show ID`, k->json being the connection as banks_show gave
 * it (taken): printed (json: as JSON, with "bankWebhook"), with what its
 * bank holds as its webhook when it has API credentials (GET {api}/webhook/
 * {chave}), and its last call. Returns the exit code. */
int cli_bank_show(struct cli_call *k, const struct config *cfg, enum env env, const char *id,
		  int json);

/* ---- the commands, one file each (account and review share one) ---- */

int cli_cmd_serve(struct config *cfg, int argc, char **argv);
int cli_cmd_init(const struct config *cfg, int argc, char **argv);
int cli_cmd_keys(const struct config *cfg, int argc, char **argv);
int cli_cmd_account(const struct config *cfg, int argc, char **argv);
int cli_cmd_review(const struct config *cfg, int argc, char **argv);
int cli_cmd_secrets(const struct config *cfg, int argc, char **argv);
int cli_cmd_events(const struct config *cfg, int argc, char **argv);
int cli_cmd_endpoints(const struct config *cfg, int argc, char **argv);
int cli_cmd_tail(const struct config *cfg, int argc, char **argv);
int cli_cmd_listen(const struct config *cfg, int argc, char **argv);
int cli_cmd_trigger(const struct config *cfg, int argc, char **argv);
/* One step of trigger: `method path` (under the API's base URL `base`)
 * with body; prints the server's message and returns -1 unless it answered
 * 200, else 0. event_id (may be NULL) gets the event the answer names; data
 * (the envelope's, may be NULL) is written when asked (the caller frees it
 * with yajl_tree_free). */
int cli_trigger_step(const char *base, const char *key, const char *account, const char *method,
		     const char *path, const char *body, char *event_id, yajl_val *data);
/* cli_trigger_rec.c: trigger rec.<what> (approved, rejected, cancelled) of
 * recurrence `id` (NULL: the account's newest): the exit code. */
int cli_trigger_rec(const struct config *cfg, const struct cli_args *a, const char *key,
		    const char *what, const char *id);
/* cli_trigger_cobr.c: trigger cobr.<what> (paid, failed, retry) of
 * recurring charge `id` (NULL: the account's newest), a retry on `date`
 * (NULL: two days after its due date): the exit code. */
/* cli_trigger_prov.c: trigger woovi.paid or asaas.paid of charge
 * `charge_id` (NULL: a new one of `amount` cents) through a connection to
 * `prov` (`connection`, NULL: the account's first): the exit code. */
int cli_trigger_provider(const struct config *cfg, const struct cli_args *a, const char *key,
			 enum provider prov, const char *charge_id, long amount,
			 const char *connection);
int cli_trigger_cobr(const struct config *cfg, const struct cli_args *a, const char *key,
		     const char *what, const char *id, const char *date);
int cli_cmd_brcode(const struct config *cfg, int argc, char **argv);
int cli_cmd_bank(const struct config *cfg, int argc, char **argv);

#endif
