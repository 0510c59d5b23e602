#include "pixrelay/cli.h"

#include "pixrelay/accounts.h"
#include "pixrelay/auth.h"
#include "pixrelay/base64.h"
#include "pixrelay/brcode.h"
#include "pixrelay/config.h"
#include "pixrelay/events.h"
#include "pixrelay/timefmt.h"
#include "pixrelay/validate.h"
#include "pixrelay/ids.h"
#include "pixrelay/json.h"
#include "pixrelay/keys.h"
#include "pixrelay/log.h"
#include "pixrelay/mem.h"
#include "pixrelay/netaddr.h"
#include "pixrelay/redis.h"
#include "pixrelay/redisd.h"
#include "pixrelay/server.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

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
    "                        postback events: list them, show one with its attempts, replay\n"
    "  tail                  print postback delivery attempts as they happen\n"
    "  brcode decode CODE    check a Pix copy-and-paste code and print its fields\n"
    "  version               print the version\n"
    "  help                  this text and every setting\n"
    "\n"
    "Every command takes --help. Settings may come before or after the command.\n";

/* The Redis that a command-line tool uses: the one given with --redis, else
 * the embedded one of data-dir (used through its socket when `serve` runs,
 * else started for the duration of the command). */
struct cli_redis {
	redisContext *c;
	struct redisd *own;
	struct rds_addr addr; /* for an asynchronous client (cli_call) */
};

static int cli_redis_open(const struct config *cfg, struct cli_redis *cr)
{
	struct rds_addr addr;
	char err[512];
	int lock_fd = -1, rc;

	memset(cr, 0, sizeof(*cr));
	memset(&addr, 0, sizeof(addr));
	if (*cfg->redis) {
		if (rds_parse_addr(cfg->redis, &addr) < 0) {
			fprintf(stderr,
				"pixrelay: cannot parse the redis setting (expected "
				"redis://[:password@]host[:port][/db], unix:///path or /path)\n");
			return -1;
		}
	} else {
		rc = redisd_lock(cfg->data_dir, &lock_fd, err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "pixrelay: %s\n", err);
			return -1;
		}
		if (rc == 0) {
			cr->own = redisd_start(cfg->redis_server, cfg->data_dir, lock_fd, 10000,
					       err, sizeof(err));
			if (!cr->own) {
				fprintf(stderr, "pixrelay: embedded redis: %s\n", err);
				return -1;
			}
		}
		redisd_socket_path(cfg->data_dir, addr.path, sizeof(addr.path));
	}
	cr->addr = addr;
	cr->c = rds_sync_connect(&addr, cfg->redis_timeout_ms, err, sizeof(err));
	if (!cr->c) {
		fprintf(stderr, "pixrelay: %s\n", err);
		redisd_stop(cr->own);
		cr->own = NULL;
		return -1;
	}
	return 0;
}

static void cli_redis_close(struct cli_redis *cr)
{
	if (cr->c)
		redisFree(cr->c);
	redisd_stop(cr->own);
}

static int want_help(int argc, char **argv)
{
	for (int i = 0; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return 1;
	return 0;
}

/* The start of an "ACTION [options]" command: the usage on --help (exit 0)
 * or without an action (exit 2), else the action in *verb, getopt reset to
 * read the options after it, and -1. */
static int cli_action(int argc, char **argv, const char *usage, const char **verb)
{
	if (argc < 2 || want_help(argc, argv)) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	*verb = argv[1];
	optind = 1;
	return -1;
}

/* Refuse a listen address that cannot work before serve creates anything
 * (data directory, embedded Redis): malformed (2), or a host that does not
 * resolve or an address that cannot be bound now (1; the trial socket is
 * closed again). 0 when it looks fine. */
static int cli_check_listen(const char *listen)
{
	struct addrinfo hints, *res = NULL;
	char host[256], port_s[8];
	int port = 0, fd = -1, one = 1, rc = 1, gai;

	if (netaddr_split_hostport(listen, host, sizeof(host), &port) < 0) {
		fprintf(stderr,
			"pixrelay: listen: expected host:port, [IPv6]:port or :port with a port "
			"from 0 to 65535, got '%s'\n",
			listen);
		return 2;
	}
	snprintf(port_s, sizeof(port_s), "%d", port);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	gai = getaddrinfo(host, port_s, &hints, &res);
	if (gai != 0) {
		fprintf(stderr, "pixrelay: listen: cannot resolve '%s': %s\n", host,
			gai_strerror(gai));
		return 2;
	}
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, res->ai_addr, res->ai_addrlen) < 0) {
		fprintf(stderr, "pixrelay: listen: cannot listen on %s: %s\n", listen,
			strerror(errno));
		goto done;
	}
	rc = 0;
done:
	if (fd >= 0)
		close(fd);
	freeaddrinfo(res);
	return rc;
}

static int cmd_serve(struct config *cfg, int argc, char **argv)
{
	int rc;

	if (want_help(argc, argv)) {
		printf("usage: pixrelay serve [SETTINGS]\n\n"
		       "Serve the v1 API on --listen. Without --redis, a private redis-server is\n"
		       "started in --data-dir (unix socket only, every write fsynced).\n\n");
		config_usage(stdout);
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr, "pixrelay serve: unexpected argument '%s' (see --help)\n", argv[1]);
		return 2;
	}
	if ((rc = cli_check_listen(cfg->listen)) != 0)
		return rc;
	return server_run(cfg);
}

static int cmd_init(const struct config *cfg, int argc, char **argv)
{
	static const struct option lo[] = {{"env", required_argument, NULL, 'e'},
					   {"json", no_argument, NULL, 'j'},
					   {"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	const char *envs = "all";
	int json = 0, opt, rc = 1;
	struct cli_redis cr;
	yajl_gen g = NULL;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (opt) {
		case 'e':
			envs = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			printf("usage: pixrelay init [--env sandbox|production|all] [--json]\n\n"
			       "Create the platform account of each environment unless it exists,\n"
			       "and print its id. Running it again changes nothing.\n");
			return 0;
		default:
			return 2;
		}
	}
	if (strcmp(envs, "all") != 0) {
		enum auth_env e;
		if (auth_env_parse(envs, &e) < 0) {
			fprintf(stderr,
				"pixrelay init: --env must be sandbox, production or all\n");
			return 2;
		}
	}
	if (cli_redis_open(cfg, &cr) < 0)
		return 1;
	if (json) {
		g = json_gen_new();
		json_open(g);
	}
	for (int i = 0; i < 2; i++) {
		enum auth_env env = i ? AUTH_PRODUCTION : AUTH_SANDBOX;
		char id[32], err[256];
		int created = 0;
		if (strcmp(envs, "all") != 0 && strcmp(envs, auth_env_name(env)) != 0 &&
		    !(env == AUTH_SANDBOX && strcmp(envs, "test") == 0) &&
		    !(env == AUTH_PRODUCTION && strcmp(envs, "live") == 0))
			continue;
		if (keys_platform_init(cr.c, cfg->prefix, cfg->shards, env, id, &created, err,
				       sizeof(err)) < 0) {
			fprintf(stderr, "pixrelay init: %s\n", err);
			goto done;
		}
		if (g) {
			json_str(g, auth_env_name(env));
			json_open(g);
			json_str(g, "account");
			json_str(g, id);
			json_str(g, "created");
			json_bool(g, created);
			json_close(g);
		} else {
			printf("%s platform account: %s (%s)\n", auth_env_name(env), id,
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

static int cmd_keys(const struct config *cfg, int argc, char **argv)
{
	static const struct option lo[] = {{"env", required_argument, NULL, 'e'},
					   {"master", no_argument, NULL, 'm'},
					   {"account", required_argument, NULL, 'a'},
					   {"description", required_argument, NULL, 'd'},
					   {"json", no_argument, NULL, 'j'},
					   {"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	const char *verb, *envs = NULL, *account = NULL, *description = "";
	int master = 0, json = 0, opt, rc = 1;
	struct cli_redis cr;
	char err[256];

	if ((rc = cli_action(argc, argv, usage_keys, &verb)) >= 0)
		return rc;
	rc = 1;
	while ((opt = getopt_long(argc - 1, argv + 1, "h", lo, NULL)) != -1) {
		switch (opt) {
		case 'e':
			envs = optarg;
			break;
		case 'm':
			master = 1;
			break;
		case 'a':
			account = optarg;
			break;
		case 'd':
			description = optarg;
			break;
		case 'j':
			json = 1;
			break;
		default:
			fputs(usage_keys, stderr);
			return 2;
		}
	}
	if (strcmp(verb, "create") == 0) {
		enum auth_env env;
		char secret[AUTH_KEY_MAX];
		struct auth_key key;
		if (!envs || auth_env_parse(envs, &env) < 0) {
			fprintf(stderr,
				"pixrelay keys create: --env sandbox|production is required\n");
			return 2;
		}
		if (master && account) {
			fprintf(stderr, "pixrelay keys create: --master and --account exclude each "
					"other (master keys belong to the platform account)\n");
			return 2;
		}
		if (strlen(description) > 200) {
			fprintf(stderr, "pixrelay keys create: --description is limited to 200 "
					"characters\n");
			return 2;
		}
		if (optind + 1 < argc) {
			fprintf(stderr, "pixrelay keys create: unexpected argument '%s'\n",
				argv[optind + 1]);
			return 2;
		}
		if (cli_redis_open(cfg, &cr) < 0)
			return 1;
		rc =
		    keys_create(cr.c, cfg->prefix, env, master ? AUTH_MASTER_KEY : AUTH_ACCOUNT_KEY,
				account, description, secret, &key, err, sizeof(err));
		if (rc != 0) {
			fprintf(stderr, "pixrelay keys create: %s\n", err);
			rc = 1;
		} else if (json) {
			printf("{\"id\":\"%s\",\"key\":\"%s\",\"env\":\"%s\",\"kind\":\"%s\","
			       "\"account\":\"%s\"}\n",
			       key.id, secret, auth_env_name(env), auth_kind_name(key.kind),
			       key.account);
		} else {
			printf("created %s key %s for account %s (%s)\n\n    %s\n\n"
			       "This is the only time the key is shown.\n",
			       auth_kind_name(key.kind), key.id, key.account, auth_env_name(env),
			       secret);
		}
		mem_wipe(secret, sizeof(secret));
		cli_redis_close(&cr);
		return rc;
	}
	if (strcmp(verb, "list") == 0) {
		if (cli_redis_open(cfg, &cr) < 0)
			return 1;
		rc = keys_list(cr.c, cfg->prefix, stdout, json, err, sizeof(err)) == 0 ? 0 : 1;
		if (rc)
			fprintf(stderr, "pixrelay keys list: %s\n", err);
		cli_redis_close(&cr);
		return rc;
	}
	if (strcmp(verb, "revoke") == 0) {
		const char *id = optind + 1 < argc ? argv[optind + 1] : NULL;
		if (!id) {
			fprintf(stderr, "pixrelay keys revoke: KEY_ID is required\n");
			return 2;
		}
		if (cli_redis_open(cfg, &cr) < 0)
			return 1;
		rc = keys_revoke(cr.c, cfg->prefix, id, err, sizeof(err));
		if (rc == 0 || rc == KEYS_ALREADY_REVOKED) {
			if (json)
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
	fprintf(stderr, "pixrelay keys: unknown action '%s'\n\n%s", verb, usage_keys);
	return 2;
}

static int cmd_brcode(int argc, char **argv)
{
	char err[256];
	yajl_gen g;
	size_t len;
	const char *s;
	int rc;

	if (argc < 2 || want_help(argc, argv) || strcmp(argv[1], "decode") != 0 || argc != 3) {
		fputs("usage: pixrelay brcode decode CODE\n\n"
		      "Check a Pix copy-and-paste code (TLV lengths, CRC16, required fields) and\n"
		      "print its fields as JSON. Exit status 1 when the code is invalid.\n",
		      want_help(argc, argv) ? stdout : stderr);
		return want_help(argc, argv) ? 0 : 2;
	}
	g = json_gen_new();
	yajl_gen_config(g, yajl_gen_beautify, 1);
	rc = brcode_decode_json(argv[2], g, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "pixrelay brcode decode: invalid BR Code: %s\n", err);
	} else {
		s = json_buf(g, &len);
		fwrite(s, 1, len, stdout);
		if (len && s[len - 1] != '\n')
			putchar('\n');
	}
	yajl_gen_free(g);
	return rc < 0 ? 1 : 0;
}

static const char usage_events[] =
    "usage: pixrelay events list [--env E] [--account ID] [--state S] [--limit N] [--json]\n"
    "       pixrelay events show EVENT_ID [--env E] [--account ID]\n"
    "       pixrelay events replay EVENT_ID [--env E] [--account ID]\n\n"
    "The postback events of an account (default: the platform account of the\n"
    "sandbox), newest first; one event with its attempt log; deliver one again.\n";

/* Open the Redis of cfg and name the account a command is about: --account,
 * else the platform account of env. Returns 0 (close cr after), or -1 with
 * the problem printed and nothing left open. */
static int cli_open_account(const struct config *cfg, enum auth_env env, const char *account,
			    struct cli_redis *cr, char out[32])
{
	char err[256];
	int created = 0;

	if (cli_redis_open(cfg, cr) < 0)
		return -1;
	if (account) {
		snprintf(out, 32, "%s", account);
		return 0;
	}
	if (keys_platform_init(cr->c, cfg->prefix, cfg->shards, env, out, &created, err,
			       sizeof(err)) < 0) {
		fprintf(stderr, "pixrelay: %s\n", err);
		cli_redis_close(cr);
		return -1;
	}
	return 0;
}

/* One asynchronous call of a domain module (the same code the server runs),
 * made from the command line on a private event loop. */
struct cli_call {
	struct event_base *base;
	struct rds *r;
	int done, result;
	char *json;
	char err[256];
};

static void on_cli_wait(evutil_socket_t fd, short what, void *arg)
{
	struct cli_call *k = arg;

	if (rds_ready(k->r))
		event_base_loopbreak(k->base);
}

/* Connect to the Redis of cr and wait until it is ready. Returns 0, or -1
 * with the problem printed (call cli_call_close either way). */
static int cli_call_open(struct cli_call *k, const struct config *cfg, const struct cli_redis *cr)
{
	struct event *ev;
	struct timeval tick = {0, 10000};
	uint64_t until = ids_now_ms() + (uint64_t)cfg->redis_timeout_ms;

	memset(k, 0, sizeof(*k));
	k->base = event_base_new();
	if (!k->base)
		mem_oom(__FILE__, __LINE__);
	k->r = rds_new(k->base, &cr->addr, cfg->redis_timeout_ms);
	ev = event_new(k->base, -1, EV_PERSIST, on_cli_wait, k);
	event_add(ev, &tick);
	while (!rds_ready(k->r) && ids_now_ms() < until)
		event_base_dispatch(k->base);
	event_free(ev);
	if (!rds_ready(k->r)) {
		fprintf(stderr, "pixrelay: redis: %s\n", rds_last_error(k->r));
		return -1;
	}
	return 0;
}

static void cli_call_done(void *ud, int result, const char *json, const char *err)
{
	struct cli_call *k = ud;

	k->done = 1;
	k->result = result;
	k->json = json ? mem_strdup(json) : NULL;
	snprintf(k->err, sizeof(k->err), "%s", err ? err : "");
	event_base_loopbreak(k->base);
}

/* Run the loop until the call made with cli_call_done answers. */
static void cli_call_wait(struct cli_call *k)
{
	while (!k->done)
		event_base_dispatch(k->base);
}

static void cli_call_close(struct cli_call *k)
{
	rds_free(k->r);
	if (k->base)
		event_base_free(k->base);
	free(k->json);
}

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
		printf("%-30s %-22s %-10s %-8s %-24s %s%s%s\n", YAJL_GET_STRING(json_get(e, "id")),
		       YAJL_GET_STRING(json_get(e, "type")), YAJL_GET_STRING(json_get(e, "state")),
		       attempts && YAJL_IS_NUMBER(attempts) ? YAJL_GET_NUMBER(attempts) : "0",
		       YAJL_GET_STRING(json_get(e, "createdAt")), dest ? dest : "",
		       last ? " / " : "", last ? last : "");
	}
	yajl_tree_free(root);
}

/* Print JSON text indented. */
static void print_pretty(const char *json)
{
	char err[128];
	yajl_val root = NULL;
	yajl_gen g;
	size_t len;
	const char *out;

	if (json_parse_object(json, strlen(json), &root, err, sizeof(err)) < 0) {
		printf("%s\n", json);
		return;
	}
	g = json_gen_new();
	yajl_gen_config(g, yajl_gen_beautify, 1);
	json_write_value(g, root);
	out = json_buf(g, &len);
	fwrite(out, 1, len, stdout);
	yajl_gen_free(g);
	yajl_tree_free(root);
}

static int cmd_events(const struct config *cfg, int argc, char **argv)
{
	static const struct option lo[] = {{"env", required_argument, NULL, 'e'},
					   {"account", required_argument, NULL, 'a'},
					   {"state", required_argument, NULL, 's'},
					   {"limit", required_argument, NULL, 'l'},
					   {"json", no_argument, NULL, 'j'},
					   {"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	const char *verb, *envs = "sandbox", *account = NULL, *state = NULL;
	long limit = 20;
	int json = 0, opt, rc = 1;
	enum auth_env env;
	struct cli_redis cr;
	struct cli_call call;
	char acct[32];

	if ((rc = cli_action(argc, argv, usage_events, &verb)) >= 0)
		return rc;
	rc = 1;
	while ((opt = getopt_long(argc - 1, argv + 1, "h", lo, NULL)) != -1) {
		switch (opt) {
		case 'e':
			envs = optarg;
			break;
		case 'a':
			account = optarg;
			break;
		case 's':
			state = optarg;
			break;
		case 'l':
			limit = strtol(optarg, NULL, 10);
			break;
		case 'j':
			json = 1;
			break;
		default:
			fputs(usage_events, stderr);
			return 2;
		}
	}
	if (auth_env_parse(envs, &env) < 0 || limit < 1 || limit > 1000) {
		fputs(usage_events, stderr);
		return 2;
	}
	if ((strcmp(verb, "show") == 0 || strcmp(verb, "replay") == 0) && optind + 1 >= argc) {
		fprintf(stderr, "pixrelay events %s: EVENT_ID is required\n", verb);
		return 2;
	}
	if (strcmp(verb, "list") != 0 && strcmp(verb, "show") != 0 && strcmp(verb, "replay") != 0) {
		fprintf(stderr, "pixrelay events: unknown action '%s'\n\n%s", verb, usage_events);
		return 2;
	}
	if (state && strcmp(state, "pending") != 0 && strcmp(state, "delivering") != 0 &&
	    strcmp(state, "delivered") != 0 && strcmp(state, "dead") != 0) {
		fprintf(stderr,
			"pixrelay events: --state must be pending, delivering, delivered or "
			"dead\n");
		return 2;
	}
	if (cli_open_account(cfg, env, account, &cr, acct) < 0)
		return 1;
	if (cli_call_open(&call, cfg, &cr) == 0) {
		const char *id = optind + 1 < argc ? argv[optind + 1] : "";
		if (strcmp(verb, "list") == 0) {
			struct events_filter f;
			memset(&f, 0, sizeof(f));
			f.state = state;
			f.limit = (int)limit;
			events_list(call.r, cfg, env, acct, &f, 0, cli_call_done, &call);
		} else if (strcmp(verb, "show") == 0) {
			events_get(call.r, cfg, env, acct, id, cli_call_done, &call);
		} else {
			events_replay(call.r, cfg, env, acct, id, cli_call_done, &call);
		}
		cli_call_wait(&call);
		if (call.result < 0)
			fprintf(stderr, "pixrelay events %s: %s\n", verb, call.err);
		else if (call.result == EVENTS_NOT_FOUND)
			fprintf(stderr, "pixrelay events %s: no event %s for this account\n", verb,
				id);
		else if (strcmp(verb, "list") == 0)
			print_event_list(call.json, json);
		else if (strcmp(verb, "show") == 0)
			print_pretty(call.json);
		else
			printf("%s %s\n", id,
			       call.result == 0 ? "queued for delivery again"
						: "is already waiting or in flight");
		rc = call.result < 0 || call.result == EVENTS_NOT_FOUND ? 1 : 0;
	}
	cli_call_close(&call);
	cli_redis_close(&cr);
	return rc;
}

/* pixrelay tail: every delivery attempt as it happens. */
static int cmd_tail(const struct config *cfg, int argc, char **argv)
{
	struct cli_redis cr;
	redisReply *r;
	char channel[256];
	int json = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			json = 1;
		} else {
			fputs("usage: pixrelay tail [--json]\n\n"
			      "Print every postback delivery attempt as it happens (event, "
			      "destination,\n"
			      "status, outcome, latency) until interrupted.\n",
			      want_help(argc, argv) ? stdout : stderr);
			return want_help(argc, argv) ? 0 : 2;
		}
	}
	if (cli_redis_open(cfg, &cr) < 0)
		return 1;
	snprintf(channel, sizeof(channel), "%sdeliveries", cfg->prefix);
	r = redisCommand(cr.c, "SUBSCRIBE %s", channel);
	freeReplyObject(r);
	{
		struct timeval forever = {0, 0};
		redisSetTimeout(cr.c, forever);
	}
	if (!json)
		fprintf(stderr, "waiting for deliveries (Ctrl-C to stop)...\n");
	fflush(stdout);
	while (redisGetReply(cr.c, (void **)&r) == REDIS_OK) {
		if (r->type == REDIS_REPLY_ARRAY && r->elements == 3 && r->element[2]->str) {
			if (json) {
				printf("%s\n", r->element[2]->str);
			} else {
				yajl_val v = NULL;
				char err[64];
				if (json_parse_object(r->element[2]->str, r->element[2]->len, &v,
						      err, sizeof(err)) == 0) {
					yajl_val st = json_get(v, "status"),
						 er = json_get(v, "error");
					printf(
					    "%s %s %-10s %-30s -> %s  %s%s %lld ms%s%s\n",
					    YAJL_GET_STRING(json_get(v, "at")),
					    YAJL_GET_STRING(json_get(v, "env")),
					    YAJL_GET_STRING(json_get(v, "outcome")),
					    YAJL_GET_STRING(json_get(v, "event")),
					    YAJL_GET_STRING(json_get(v, "destination")),
					    YAJL_IS_INTEGER(st) ? "HTTP " : "",
					    YAJL_IS_INTEGER(st) ? st->u.number.r : "no answer",
					    (long long)YAJL_GET_INTEGER(json_get(v, "durationMs")),
					    YAJL_IS_STRING(er) ? "  " : "",
					    YAJL_IS_STRING(er) ? er->u.string : "");
					yajl_tree_free(v);
				}
			}
			fflush(stdout);
		}
		freeReplyObject(r);
	}
	cli_redis_close(&cr);
	return 0;
}

static const char usage_account[] =
    "usage: pixrelay account show --env sandbox|production [--account ID]\n"
    "       pixrelay account set --env sandbox|production [--account ID] --postback-url URL\n\n"
    "show  an account (default: the platform account), without its secrets.\n"
    "set   its postbackUrl: where the events of its charges that name none go, and\n"
    "      the upstream notifications about charges pixrelay does not know\n"
    "      (\"\" clears it).\n";

static int cmd_account(const struct config *cfg, int argc, char **argv)
{
	static const struct option lo[] = {{"env", required_argument, NULL, 'e'},
					   {"account", required_argument, NULL, 'a'},
					   {"postback-url", required_argument, NULL, 'p'},
					   {"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	const char *verb, *envs = NULL, *account = NULL, *url = NULL;
	int opt, rc = 1;
	enum auth_env env;
	struct cli_redis cr;
	char id[32], err[256];

	if ((rc = cli_action(argc, argv, usage_account, &verb)) >= 0)
		return rc;
	rc = 1;
	while ((opt = getopt_long(argc - 1, argv + 1, "h", lo, NULL)) != -1) {
		switch (opt) {
		case 'e':
			envs = optarg;
			break;
		case 'a':
			account = optarg;
			break;
		case 'p':
			url = optarg;
			break;
		default:
			fputs(usage_account, stderr);
			return 2;
		}
	}
	if (strcmp(verb, "show") != 0 && strcmp(verb, "set") != 0) {
		fprintf(stderr, "pixrelay account: unknown action '%s'\n\n%s", verb, usage_account);
		return 2;
	}
	if (!envs || auth_env_parse(envs, &env) < 0) {
		fprintf(stderr, "pixrelay account: --env sandbox|production is required\n");
		return 2;
	}
	if (strcmp(verb, "set") == 0) {
		if (!url) {
			fprintf(stderr, "pixrelay account set: --postback-url is required\n");
			return 2;
		}
		if (*url && !validate_http_url(url)) {
			fprintf(stderr,
				"pixrelay account set: --postback-url must be an absolute http "
				"or https URL\n");
			return 2;
		}
	}
	if (cli_open_account(cfg, env, account, &cr, id) < 0)
		return 1;
	if (strcmp(verb, "show") == 0) {
		rc = keys_account_show(cr.c, cfg->prefix, env, id, stdout, err, sizeof(err));
		if (rc == 0)
			putchar('\n');
	} else {
		rc = keys_set_postback(cr.c, cfg->prefix, env, id, url, err, sizeof(err));
		if (rc == 0)
			printf("account %s: postbackUrl %s\n", id, *url ? url : "cleared");
	}
	if (rc != 0) {
		fprintf(stderr, "pixrelay account %s: %s\n", verb, err);
		rc = 1;
	}
	cli_redis_close(&cr);
	return rc;
}

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

static int cmd_secrets(const struct config *cfg, int argc, char **argv)
{
	static const struct option lo[] = {{"env", required_argument, NULL, 'e'},
					   {"account", required_argument, NULL, 'a'},
					   {"json", no_argument, NULL, 'j'},
					   {"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	const char *envs = NULL, *account = NULL, *verb = "show";
	int json = 0, opt, rc = 1;
	enum auth_env env;
	struct cli_redis cr;
	char id[32], signing[128], compat[128], ingest[128], err[256];

	if (argc > 1 && argv[1][0] != '-') {
		verb = argv[1];
		argv++;
		argc--;
	}
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (opt) {
		case 'e':
			envs = optarg;
			break;
		case 'a':
			account = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			fputs(usage_secrets, stdout);
			return 0;
		default:
			return 2;
		}
	}
	if (strcmp(verb, "show") && strcmp(verb, "rotate") && strcmp(verb, "end-rotation")) {
		fprintf(stderr, "pixrelay secrets: unknown action '%s'\n\n%s", verb, usage_secrets);
		return 2;
	}
	if (!envs || auth_env_parse(envs, &env) < 0) {
		fprintf(stderr, "pixrelay secrets: --env sandbox|production is required\n");
		return 2;
	}
	if (cli_open_account(cfg, env, account, &cr, id) < 0)
		return 1;
	if (strcmp(verb, "show") != 0) {
		int end = strcmp(verb, "end-rotation") == 0;
		if (keys_rotate_signing(cr.c, cfg->prefix, env, id, end, signing, sizeof(signing),
					err, sizeof(err)) != 0) {
			fprintf(stderr, "pixrelay secrets %s: %s\n", verb, err);
			goto done;
		}
		if (json)
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
	if (json)
		printf("{\"account\":\"%s\",\"signingSecret\":\"%s\",\"signature\":\"%s\","
		       "\"ingestSecret\":\"%s\"}\n",
		       id, signing, compat, ingest);
	else
		printf(
		    "account %s (%s)\n  postback signing secret: %s\n  postback signature header: "
		    "%s\n  ingest secret (for %s/webhooks/ingest/%s): %s\n",
		    id, auth_env_name(env), signing, compat, cfg->base_url, id, ingest);
	rc = 0;
done:
	mem_wipe(signing, sizeof(signing));
	mem_wipe(compat, sizeof(compat));
	mem_wipe(ingest, sizeof(ingest));
	cli_redis_close(&cr);
	return rc;
}

static const char usage_review[] =
    "usage: pixrelay review list --env sandbox|production [--limit N] [--json]\n"
    "       pixrelay review show ACCOUNT_ID --env sandbox|production [--files DIR]\n"
    "       pixrelay review approve ACCOUNT_ID --env sandbox|production [--json]\n"
    "       pixrelay review reject ACCOUNT_ID --env sandbox|production [--reason TEXT]\n"
    "                              [--json]\n\n"
    "The operator's KYC review of business accounts. A new account waits for it\n"
    "(in production; in the sandbox too with sandbox-review = 1): until it is\n"
    "approved, its representatives make no group, so no other account's money can\n"
    "be moved through it (internal transfers).\n\n"
    "list     the accounts waiting, oldest first (default --limit 50).\n"
    "show     one account with its KYC data, and the other accounts that name the\n"
    "         same representatives, with their status and owner; --files DIR also\n"
    "         writes its documents and pictures into DIR (<sha256>.pdf|jpg|png).\n"
    "approve  its representatives count for groups from now on.\n"
    "reject   they do not, also when it was approved before (--reason is kept).\n";

/* The extension of a file by its magic bytes (account.h). */
static const char *review_file_ext(const unsigned char *d, size_t n)
{
	if (n >= 5 && memcmp(d, "%PDF-", 5) == 0)
		return "pdf";
	if (n >= 3 && d[0] == 0xff && d[1] == 0xd8 && d[2] == 0xff)
		return "jpg";
	if (n >= 8 && memcmp(d, "\x89PNG\r\n\x1a\n", 8) == 0)
		return "png";
	return "bin";
}

/* Write the files of a `review show` answer ("files": {sha256: base64})
 * into dir, readable by the operator alone. Returns 0 or -1 (printed). */
static int review_write_files(yajl_val files, const char *dir)
{
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		fprintf(stderr, "pixrelay review show: cannot create %s: %s\n", dir,
			strerror(errno));
		return -1;
	}
	for (size_t i = 0; YAJL_IS_OBJECT(files) && i < files->u.object.len; i++) {
		const char *sha = files->u.object.keys[i];
		const char *b64 = YAJL_GET_STRING(files->u.object.values[i]);
		unsigned char *data;
		size_t n = 0;
		char *path;
		int fd;
		if (!b64 || strspn(sha, "0123456789abcdef") != 64 || sha[64])
			continue;
		data = base64_decode(b64, strlen(b64), &n);
		if (!data)
			continue;
		path = mem_printf("%s/%s.%s", dir, sha, review_file_ext(data, n));
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || write(fd, data, n) != (ssize_t)n) {
			fprintf(stderr, "pixrelay review show: cannot write %s: %s\n", path,
				strerror(errno));
			if (fd >= 0)
				close(fd);
			free(path);
			free(data);
			return -1;
		}
		close(fd);
		printf("wrote %s (%zu bytes)\n", path, n);
		free(path);
		free(data);
	}
	return 0;
}

/* Print the accounts waiting for review as a table. */
static void review_print_list(const char *json)
{
	char err[128];
	yajl_val root = NULL, list;

	if (json_parse_object(json, strlen(json), &root, err, sizeof(err)) < 0)
		return;
	list = json_get(root, "accounts");
	printf("%s accounts waiting for review\n",
	       YAJL_IS_NUMBER(json_get(root, "total")) ? json_get(root, "total")->u.number.r : "0");
	if (YAJL_IS_ARRAY(list) && list->u.array.len) {
		printf("%-26s %-19s %-14s %-30s %-5s %s\n", "ACCOUNT", "CREATED", "TAXID", "NAME",
		       "REPS", "ALSO CLAIMED BY");
		for (size_t i = 0; i < list->u.array.len; i++) {
			yajl_val a = list->u.array.values[i], reps = json_get(a, "representatives");
			const char *name = YAJL_GET_STRING(json_get(a, "officialName"));
			const char *taxid = YAJL_GET_STRING(json_get(a, "taxID"));
			printf("%-26s %-19s %-14s %-30.30s %-5zu %s\n",
			       YAJL_GET_STRING(json_get(a, "id")),
			       YAJL_GET_STRING(json_get(a, "createdAt")), taxid ? taxid : "-",
			       name ? name : "-", YAJL_IS_ARRAY(reps) ? reps->u.array.len : 0,
			       YAJL_IS_NUMBER(json_get(a, "alsoClaimedBy"))
				   ? json_get(a, "alsoClaimedBy")->u.number.r
				   : "0");
		}
	}
	yajl_tree_free(root);
}

/* Print a `review show` answer indented, its files (if any) written into dir
 * instead. Returns 0 or -1. */
static int review_print_show(const char *json, const char *dir)
{
	char err[128];
	yajl_val root = NULL;
	yajl_gen g;
	size_t len;
	const char *out;
	int rc = 0;

	if (json_parse_object(json, strlen(json), &root, err, sizeof(err)) < 0) {
		fprintf(stderr, "pixrelay review show: %s\n", err);
		return -1;
	}
	g = json_gen_new();
	yajl_gen_config(g, yajl_gen_beautify, 1);
	json_open(g);
	for (size_t i = 0; i < root->u.object.len; i++) {
		if (strcmp(root->u.object.keys[i], "files") == 0)
			continue;
		json_str(g, root->u.object.keys[i]);
		json_write_value(g, root->u.object.values[i]);
	}
	json_close(g);
	out = json_buf(g, &len);
	fwrite(out, 1, len, stdout);
	yajl_gen_free(g);
	if (dir)
		rc = review_write_files(json_get(root, "files"), dir);
	yajl_tree_free(root);
	return rc;
}

static int cmd_review(const struct config *cfg, int argc, char **argv)
{
	static const struct option lo[] = {{"env", required_argument, NULL, 'e'},
					   {"limit", required_argument, NULL, 'l'},
					   {"files", required_argument, NULL, 'f'},
					   {"reason", required_argument, NULL, 'r'},
					   {"json", no_argument, NULL, 'j'},
					   {"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	const char *verb, *envs = NULL, *dir = NULL, *reason = NULL, *id = NULL;
	long limit = 50;
	int json = 0, opt, rc;
	enum auth_env env;
	struct cli_redis cr;
	struct cli_call call;
	char *end = NULL;

	if ((rc = cli_action(argc, argv, usage_review, &verb)) >= 0)
		return rc;
	while ((opt = getopt_long(argc - 1, argv + 1, "h", lo, NULL)) != -1) {
		switch (opt) {
		case 'e':
			envs = optarg;
			break;
		case 'l':
			limit = strtol(optarg, &end, 10);
			if (!*optarg || *end)
				limit = 0;
			break;
		case 'f':
			dir = optarg;
			break;
		case 'r':
			reason = optarg;
			break;
		case 'j':
			json = 1;
			break;
		default:
			fputs(usage_review, stderr);
			return 2;
		}
	}
	if (strcmp(verb, "list") && strcmp(verb, "show") && strcmp(verb, "approve") &&
	    strcmp(verb, "reject")) {
		fprintf(stderr, "pixrelay review: unknown action '%s'\n\n%s", verb, usage_review);
		return 2;
	}
	if (!envs || auth_env_parse(envs, &env) < 0) {
		fprintf(stderr, "pixrelay review: --env sandbox|production is required\n");
		return 2;
	}
	if (strcmp(verb, "list") == 0) {
		if (limit < 1 || limit > 1000) {
			fprintf(stderr, "pixrelay review list: --limit must be from 1 to 1000\n");
			return 2;
		}
	} else {
		id = optind + 1 < argc ? argv[optind + 1] : NULL;
		if (!id) {
			fprintf(stderr, "pixrelay review %s: ACCOUNT_ID is required\n", verb);
			return 2;
		}
		if (optind + 2 < argc) {
			fprintf(stderr, "pixrelay review %s: unexpected argument '%s'\n", verb,
				argv[optind + 2]);
			return 2;
		}
	}
	if (reason && (strlen(reason) > 500 || validate_has_control(reason))) {
		fprintf(stderr, "pixrelay review reject: --reason must be at most 500 characters, "
				"without control characters\n");
		return 2;
	}
	if (reason && strcmp(verb, "reject") != 0) {
		fprintf(stderr, "pixrelay review %s: --reason goes with reject\n", verb);
		return 2;
	}
	if (cli_redis_open(cfg, &cr) < 0)
		return 1;
	rc = 1;
	if (cli_call_open(&call, cfg, &cr) == 0) {
		if (strcmp(verb, "list") == 0)
			accounts_review_list(call.r, cfg, env, (int)limit, cli_call_done, &call);
		else if (strcmp(verb, "show") == 0)
			accounts_review_show(call.r, cfg, env, id, dir != NULL, cli_call_done,
					     &call);
		else
			accounts_review_decide(call.r, cfg, env, id, strcmp(verb, "approve") == 0,
					       reason, cli_call_done, &call);
		cli_call_wait(&call);
		if (call.result < 0) {
			fprintf(stderr, "pixrelay review %s: %s\n", verb, call.err);
		} else if (call.result == ACCOUNTS_NOT_FOUND) {
			fprintf(stderr, "pixrelay review %s: no account %s in %s\n", verb, id,
				auth_env_name(env));
		} else if (call.result == ACCOUNTS_PLATFORM) {
			fprintf(
			    stderr,
			    "pixrelay review %s: %s is the platform account of %s, which has no "
			    "KYC review\n",
			    verb, id, auth_env_name(env));
		} else if (strcmp(verb, "list") == 0) {
			if (json)
				printf("%s\n", call.json);
			else
				review_print_list(call.json);
			rc = 0;
		} else if (strcmp(verb, "show") == 0) {
			rc = review_print_show(call.json, dir) < 0 ? 1 : 0;
		} else {
			char err[128];
			yajl_val v = NULL;
			if (json) {
				printf("%s\n", call.json);
			} else if (json_parse_object(call.json, strlen(call.json), &v, err,
						     sizeof(err)) == 0) {
				const char *before = YAJL_GET_STRING(json_get(v, "previous"));
				printf("account %s: KYC %s (it was %s)\n", id,
				       strcmp(verb, "approve") == 0 ? "approved" : "rejected",
				       before ? before : "never reviewed");
				yajl_tree_free(v);
			}
			rc = 0;
		}
	}
	cli_call_close(&call);
	cli_redis_close(&cr);
	return rc;
}

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
		rc = cmd_serve(&cfg, nrest, rest);
	} else if (strcmp(cmd, "init") == 0) {
		rc = cmd_init(&cfg, nrest, rest);
	} else if (strcmp(cmd, "account") == 0) {
		rc = cmd_account(&cfg, nrest, rest);
	} else if (strcmp(cmd, "review") == 0) {
		rc = cmd_review(&cfg, nrest, rest);
	} else if (strcmp(cmd, "events") == 0) {
		rc = cmd_events(&cfg, nrest, rest);
	} else if (strcmp(cmd, "tail") == 0) {
		rc = cmd_tail(&cfg, nrest, rest);
	} else if (strcmp(cmd, "brcode") == 0) {
		rc = cmd_brcode(nrest, rest);
	} else if (strcmp(cmd, "secrets") == 0) {
		rc = cmd_secrets(&cfg, nrest, rest);
	} else if (strcmp(cmd, "keys") == 0) {
		rc = cmd_keys(&cfg, nrest, rest);
	} else {
		fprintf(stderr, "pixrelay: unknown command '%s'\n\n%s", cmd, usage_main);
	}
done:
	free(rest);
	config_deinit(&cfg);
	return rc;
}
