#include "pixrelay/cli/cli.h"

#include "pixrelay/store/accounts.h"
#include "pixrelay/store/review.h"
#include "pixrelay/store/auth.h"
#include "pixrelay/core/base64.h"
#include "pixrelay/pix/brcode.h"
#include "pixrelay/store/charges.h"
#include "pixrelay/core/config.h"
#include "pixrelay/store/events.h"
#include "pixrelay/core/timefmt.h"
#include "pixrelay/core/validate.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/store/keys.h"
#include "pixrelay/cli/listen.h"
#include "pixrelay/core/log.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/netaddr.h"
#include "pixrelay/redis/redis.h"
#include "pixrelay/redis/redisd.h"
#include "pixrelay/api/server.h"
#include "pixrelay/pix/sign.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <signal.h>
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

/* The Redis that a command-line tool uses: the one given with --redis, else
 * the embedded one of data-dir (used through its socket when `serve` runs,
 * else started for the duration of the command). */
struct cli_redis {
	struct rds *c; /* blocking (rds_open) */
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
		if (rds_addr_set_sentinel_password(&addr, cfg->redis_sentinel_password) < 0) {
			fprintf(stderr,
				"pixrelay: redis-sentinel-password: longer than 255 bytes\n");
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
	cr->c = rds_open(&addr, cfg->redis_timeout_ms, err, sizeof(err));
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
	rds_free(cr->c);
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

/* Nonzero when verb is one of the NULL-terminated verbs of command cmd; else
 * 0 with "pixrelay CMD: unknown action 'VERB'" and the usage on stderr. */
static int cli_verb_known(const char *cmd, const char *usage, const char *verb,
			  const char *const verbs[])
{
	for (size_t i = 0; verbs[i]; i++)
		if (strcmp(verb, verbs[i]) == 0)
			return 1;
	fprintf(stderr, "pixrelay %s: unknown action '%s'\n\n%s", cmd, verb, usage);
	return 0;
}

/* Parse the --env that command cmd requires into *env: 0, or -1 with
 * "pixrelay CMD: --env sandbox|production is required" on stderr. */
static int cli_env_required(const char *cmd, const char *envs, enum env *env)
{
	if (!envs || env_parse(envs, env) < 0) {
		fprintf(stderr, "pixrelay %s: --env sandbox|production is required\n", cmd);
		return -1;
	}
	return 0;
}

/* Refuse a listen address that cannot work before serve creates anything
 * (data directory, embedded Redis): malformed (2), or a host that does not
 * resolve or an address that cannot be bound now (1). 0 when it looks fine.
 * The trial socket is closed again, unless `keep` is given: then it is left
 * listening in *keep, so that a second address cannot be the same one. */
static int cli_check_listen(const char *setting, const char *addr, int *keep)
{
	struct addrinfo hints, *res = NULL;
	char host[256], port_s[8];
	int port = 0, fd = -1, one = 1, rc = 1, gai;

	if (netaddr_split_hostport(addr, host, sizeof(host), &port) < 0) {
		fprintf(stderr,
			"pixrelay: %s: expected host:port, [IPv6]:port or :port with a port "
			"from 0 to 65535, got '%s'\n",
			setting, addr);
		return 2;
	}
	snprintf(port_s, sizeof(port_s), "%d", port);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	gai = getaddrinfo(host, port_s, &hints, &res);
	if (gai != 0) {
		fprintf(stderr, "pixrelay: %s: cannot resolve '%s': %s\n", setting, host,
			gai_strerror(gai));
		return 2;
	}
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, res->ai_addr, res->ai_addrlen) < 0 || (keep && listen(fd, 1) < 0)) {
		fprintf(stderr, "pixrelay: %s: cannot listen on %s: %s\n", setting, addr,
			strerror(errno));
		goto done;
	}
	rc = 0;
	if (keep) {
		*keep = fd;
		fd = -1;
	}
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
	{
		int held = -1;
		rc = cli_check_listen("listen", cfg->listen, cfg->metrics_listen[0] ? &held : NULL);
		if (rc == 0 && cfg->metrics_listen[0])
			rc = cli_check_listen("metrics-listen", cfg->metrics_listen, NULL);
		if (held >= 0)
			close(held);
		if (rc != 0)
			return rc;
	}
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
		enum env e;
		if (env_parse(envs, &e) < 0) {
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
		enum env env = i ? ENV_PRODUCTION : ENV_SANDBOX;
		char id[32], err[256];
		int created = 0;
		if (strcmp(envs, "all") != 0 && strcmp(envs, env_name(env)) != 0 &&
		    !(env == ENV_SANDBOX && strcmp(envs, "test") == 0) &&
		    !(env == ENV_PRODUCTION && strcmp(envs, "live") == 0))
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
		enum env env;
		char secret[AUTH_KEY_MAX];
		struct auth_key key;
		if (cli_env_required("keys create", envs, &env) < 0)
			return 2;
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

/* Open the Redis of cfg and name the account a command is about: --account,
 * else the platform account of env. Returns 0 (close cr after), or -1 with
 * the problem printed and nothing left open. */
static int cli_open_account(const struct config *cfg, enum env env, const char *account,
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

/* ---- the base URL of the running server ---- */

#define SERVED_FRESH_MS 15000 /* a dispatcher heartbeat younger than this is alive */

/* Read <prefix>{meta}:dispatchers (dispatch.c's heartbeats): how many
 * processes dispatch now, the base URL of the freshest (into url, "" when
 * none) and the age of the newest heartbeat (-1 when none). 0, or -1 when
 * Redis could not be read. */
static int cli_read_dispatchers(struct rds *c, const char *prefix, int *alive, char *url,
				size_t size, long long *age_ms)
{
	char k[256], err[256];
	const char *argv[] = {"HGETALL", k};
	redisReply *r;
	uint64_t now = ids_now_ms(), best = 0;

	snprintf(k, sizeof(k), "%s{meta}:dispatchers", prefix);
	r = rds_call(c, 2, argv, NULL, err, sizeof(err));

	*alive = 0;
	*age_ms = -1;
	if (url)
		url[0] = '\0';
	if (!r || r->type != REDIS_REPLY_ARRAY) {
		freeReplyObject(r);
		return -1;
	}
	for (size_t i = 0; i + 1 < r->elements; i += 2) {
		const char *v = r->element[i + 1]->str, *sp;
		uint64_t ms;
		if (!v)
			continue;
		ms = strtoull(v, NULL, 10);
		sp = strchr(v, ' ');
		if (ms + SERVED_FRESH_MS >= now)
			(*alive)++;
		if (ms > best) {
			best = ms;
			if (url && sp)
				snprintf(url, size, "%s", sp + 1);
		}
	}
	if (best)
		*age_ms = now > best ? (long long)(now - best) : 0;
	if (url && (!best || best + SERVED_FRESH_MS < now))
		url[0] = '\0';
	freeReplyObject(r);
	return 0;
}

/* The base URL a command talks to: base-url when it was set, else the one a
 * running `serve` of these settings announces (its heartbeat), else the
 * default from listen. Never starts the embedded Redis for this. */
static void cli_base_url(const struct config *cfg, char *out, size_t size)
{
	struct rds_addr addr;
	struct rds *c = NULL;
	char err[256], url[512] = "";
	int alive;
	long long age;
	struct stat st;

	snprintf(out, size, "%s", cfg->base_url);
	if (!cfg->base_url_derived)
		return;
	memset(&addr, 0, sizeof(addr));
	if (*cfg->redis) {
		if (rds_parse_addr(cfg->redis, &addr) < 0 ||
		    rds_addr_set_sentinel_password(&addr, cfg->redis_sentinel_password) < 0)
			return;
	} else {
		redisd_socket_path(cfg->data_dir, addr.path, sizeof(addr.path));
		if (stat(addr.path, &st) < 0)
			return; /* no serve runs on this data directory */
	}
	c = rds_open(&addr, 1000, err, sizeof(err));
	if (!c)
		return;
	if (cli_read_dispatchers(c, cfg->prefix, &alive, url, sizeof(url), &age) == 0 && *url)
		snprintf(out, size, "%s", url);
	rds_free(c);
}

/* The API key of listen and trigger: --api-key, else PIXRELAY_API_KEY. */
static const char *cli_api_key(const char *given)
{
	const char *k = given && *given ? given : getenv("PIXRELAY_API_KEY");

	return k && *k ? k : NULL;
}

/* ---- pixrelay listen ---- */

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

/* Parse a --since value: a duration ago (90s, 15m, 1h, 2d, 1w) or a time;
 * event ids are left to the caller. 0 or -1. */
static int cli_parse_since(const char *s, long long *ms)
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

static int cmd_listen(const struct config *cfg, int argc, char **argv)
{
	static const struct option lo[] = {{"forward-to", required_argument, NULL, 'f'},
					   {"api-key", required_argument, NULL, 'k'},
					   {"account", required_argument, NULL, 'a'},
					   {"signing-secret", required_argument, NULL, 's'},
					   {"signature", required_argument, NULL, 'S'},
					   {"since", required_argument, NULL, 'i'},
					   {"max-events", required_argument, NULL, 'm'},
					   {"json", no_argument, NULL, 'j'},
					   {"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	struct listen_opts o;
	const char *key = NULL, *since = NULL;
	char base[512], since_txt[32], *end = NULL;
	int opt;

	memset(&o, 0, sizeof(o));
	o.timeout_ms = cfg->delivery_timeout_ms;
	o.signing_secret = getenv("PIXRELAY_SIGNING_SECRET");
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (opt) {
		case 'f':
			o.forward_to = optarg;
			break;
		case 'k':
			key = optarg;
			break;
		case 'a':
			o.account = optarg;
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
		case 'j':
			o.json = 1;
			break;
		case 'h':
			fputs(usage_listen, stdout);
			return 0;
		default:
			fputs(usage_listen, stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "pixrelay listen: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!o.forward_to || !validate_http_url(o.forward_to)) {
		fprintf(stderr, "pixrelay listen: --forward-to must be an absolute http or https "
				"URL (e.g. http://localhost:3000/webhooks)\n");
		return 2;
	}
	o.api_key = cli_api_key(key);
	if (!o.api_key) {
		fprintf(stderr, "pixrelay listen: an API key is required: --api-key KEY or "
				"PIXRELAY_API_KEY\n");
		return 2;
	}
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

/* ---- pixrelay trigger ---- */

static const char usage_trigger[] =
    "usage: pixrelay trigger charge.paid|charge.expired|charge.refunded|charge.failed\n"
    "                        [--postback-url URL] [--amount CENTS] [--api-key KEY]\n"
    "                        [--account ID] [--json]\n\n"
    "Create a sandbox charge through the API of --base-url (local or remote) and\n"
    "drive it to that state, printing the event it made:\n"
    "  charge.paid      simulate-payment            EVENT:CHARGE_PAID\n"
    "  charge.expired   simulate-expiry (at once)   EVENT:CHARGE_EXPIRED\n"
    "  charge.refunded  simulate-payment, refund    EVENT:CHARGE_PAID, EVENT:CHARGE_REFUND\n"
    "  charge.failed    simulate-failure            no event (FAILED is not notified)\n"
    "The events go to --postback-url (else the account's postbackUrl) and to every\n"
    "'pixrelay listen' of the account. Needs a sandbox key (--api-key or\n"
    "$PIXRELAY_API_KEY).\n";

/* One step of trigger: `method path` with body; prints the server's message
 * and returns -1 unless it answered 200. data (the envelope's) is written
 * when asked (caller frees with yajl_tree_free). */
static int trigger_step(const char *base, const char *key, const char *account, const char *method,
			const char *path, const char *body, char *event_id, yajl_val *data)
{
	char err[512], perr[128], *out = NULL;
	long status = listen_api(base, key, account, method, path, body, 30000, &out, event_id, err,
				 sizeof(err));
	yajl_val v = NULL;
	int rc = -1;

	if (status == 0) {
		fprintf(stderr, "pixrelay trigger: %s\n", err);
		free(out);
		return -1;
	}
	if (out && json_parse_object(out, strlen(out), &v, perr, sizeof(perr)) < 0)
		v = NULL;
	if (status != 200) {
		const char *msg = YAJL_GET_STRING(json_get(v, "error"));
		fprintf(stderr, "pixrelay trigger: %s %s%s answered %ld: %s\n", method, base, path,
			status, msg ? msg : "(no message)");
	} else {
		rc = 0;
		if (data) {
			yajl_val d = json_get(v, "data");
			yajl_gen g = json_gen_new();
			size_t len;
			const char *s;
			json_write_value(g, d);
			s = json_buf(g, &len);
			if (json_parse_object(s, len, data, perr, sizeof(perr)) < 0)
				*data = NULL;
			yajl_gen_free(g);
		}
	}
	yajl_tree_free(v);
	free(out);
	return rc;
}

static int cmd_trigger(const struct config *cfg, int argc, char **argv)
{
	static const struct option lo[] = {{"postback-url", required_argument, NULL, 'p'},
					   {"amount", required_argument, NULL, 'm'},
					   {"api-key", required_argument, NULL, 'k'},
					   {"account", required_argument, NULL, 'a'},
					   {"json", no_argument, NULL, 'j'},
					   {"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	static const char *const kinds[] = {"charge.paid", "charge.expired", "charge.refunded",
					    "charge.failed"};
	const char *what = NULL, *url = NULL, *account = NULL, *key = NULL;
	long amount = 1000;
	int json = 0, opt, kind = -1, rc = 1;
	char base[512], *end = NULL, *body, *path = NULL, charge[64] = "";
	char ev1[EVENT_ID_MAX] = "", ev2[EVENT_ID_MAX] = "", status[16] = "";
	yajl_val data = NULL;

	if (argc < 2 || want_help(argc, argv)) {
		fputs(usage_trigger, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	what = argv[1];
	optind = 1;
	while ((opt = getopt_long(argc - 1, argv + 1, "h", lo, NULL)) != -1) {
		switch (opt) {
		case 'p':
			url = optarg;
			break;
		case 'm':
			amount = strtol(optarg, &end, 10);
			if (!*optarg || *end || amount < 1 || amount > 100000000) {
				fprintf(stderr,
					"pixrelay trigger: --amount must be cents from 1 to "
					"100000000\n");
				return 2;
			}
			break;
		case 'k':
			key = optarg;
			break;
		case 'a':
			account = optarg;
			break;
		case 'j':
			json = 1;
			break;
		default:
			fputs(usage_trigger, stderr);
			return 2;
		}
	}
	for (int i = 0; i < 4; i++)
		if (strcmp(what, kinds[i]) == 0)
			kind = i;
	if (kind < 0) {
		fprintf(stderr,
			"pixrelay trigger: unknown event '%s': charge.paid, charge.expired, "
			"charge.refunded or charge.failed\n",
			what);
		return 2;
	}
	if (optind + 1 < argc) {
		fprintf(stderr, "pixrelay trigger: unexpected argument '%s'\n", argv[optind + 1]);
		return 2;
	}
	if (url && !validate_http_url(url)) {
		fprintf(stderr,
			"pixrelay trigger: --postback-url must be an absolute http or https URL\n");
		return 2;
	}
	key = cli_api_key(key);
	if (!key) {
		fprintf(stderr, "pixrelay trigger: an API key is required: --api-key KEY or "
				"PIXRELAY_API_KEY\n");
		return 2;
	}
	cli_base_url(cfg, base, sizeof(base));
	{
		yajl_gen g = json_gen_new();
		size_t len;
		const char *s;
		char comment[64];
		json_open(g);
		json_str(g, "amount");
		json_int(g, amount);
		json_str(g, "comment");
		snprintf(comment, sizeof(comment), "pixrelay trigger %s", what);
		json_str(g, comment);
		if (url) {
			json_str(g, "postbackUrl");
			json_str(g, url);
		}
		json_close(g);
		s = json_buf(g, &len);
		body = mem_strndup(s, len);
		yajl_gen_free(g);
	}
	if (trigger_step(base, key, account, "POST", "/charge/pix/create", body, NULL, &data) < 0)
		goto done;
	snprintf(charge, sizeof(charge), "%s",
		 YAJL_GET_STRING(json_get(data, "id")) ? YAJL_GET_STRING(json_get(data, "id"))
						       : "");
	yajl_tree_free(data);
	data = NULL;
	if (!charges_valid_id(charge)) {
		fprintf(stderr, "pixrelay trigger: the server made no charge id\n");
		goto done;
	}
	{
		static const char *const steps[] = {"simulate-payment", "simulate-expiry",
						    "simulate-payment", "simulate-failure"};
		path = mem_printf("/charge/pix/%s/%s", charge, steps[kind]);
		if (trigger_step(base, key, account, "POST", path, NULL, ev1, &data) < 0)
			goto done;
		free(path);
		path = NULL;
	}
	if (kind == 2) {
		yajl_tree_free(data);
		data = NULL;
		path = mem_printf("/charge/%s/refund", charge);
		if (trigger_step(base, key, account, "POST", path, NULL, ev2, &data) < 0)
			goto done;
	}
	snprintf(status, sizeof(status), "%s",
		 YAJL_GET_STRING(json_get(data, "status"))
		     ? YAJL_GET_STRING(json_get(data, "status"))
		     : "?");
	if (json) {
		printf("{\"charge\":\"%s\",\"status\":\"%s\",\"events\":[", charge, status);
		if (*ev1)
			printf("\"%s\"", ev1);
		if (*ev2)
			printf(",\"%s\"", ev2);
		printf("],\"event\":%s%s%s}\n", *ev2 || *ev1 ? "\"" : "",
		       *ev2 ? ev2 : (*ev1 ? ev1 : "null"), *ev2 || *ev1 ? "\"" : "");
	} else {
		printf("charge %s (%ld cents) is %s\n", charge, amount, status);
		if (*ev1)
			printf("event %s (%s)\n", ev1,
			       kind == 1 ? "EVENT:CHARGE_EXPIRED" : "EVENT:CHARGE_PAID");
		if (*ev2)
			printf("event %s (EVENT:CHARGE_REFUND)\n", ev2);
		if (kind == 3)
			printf("no event: a FAILED charge is not notified (postbacks are sent for "
			       "paid, expired and refunded charges)\n");
	}
	rc = 0;
done:
	yajl_tree_free(data);
	free(path);
	free(body);
	return rc;
}

/* ---- pixrelay tail ---- */

struct tailer {
	struct cli_call *k;
	struct rds *sub;
	struct event *timer, *sigint, *sigterm;
	int json;
	int dispatching; /* processes dispatching at the last look; -1 before the first */
	int asking;
	int exit_code;
	char key[256];
};

static void tail_print(struct tailer *t, const char *msg, size_t len)
{
	yajl_val v = NULL;
	char err[64];

	if (t->json) {
		printf("%.*s\n", (int)len, msg);
	} else if (json_parse_object(msg, len, &v, err, sizeof(err)) == 0) {
		yajl_val st = json_get(v, "status"), er = json_get(v, "error");
		printf("%s %s %-10s %-30s -> %s  %s%s %lld ms%s%s\n",
		       YAJL_GET_STRING(json_get(v, "at")), YAJL_GET_STRING(json_get(v, "env")),
		       YAJL_GET_STRING(json_get(v, "state")), YAJL_GET_STRING(json_get(v, "event")),
		       YAJL_GET_STRING(json_get(v, "destination")),
		       YAJL_IS_INTEGER(st) ? "HTTP " : "",
		       YAJL_IS_INTEGER(st) ? st->u.number.r : "no answer",
		       (long long)YAJL_GET_INTEGER(json_get(v, "durationMs")),
		       YAJL_IS_STRING(er) ? "  " : "", YAJL_IS_STRING(er) ? er->u.string : "");
		yajl_tree_free(v);
	}
	fflush(stdout);
}

static void tail_quit(struct tailer *t, int code)
{
	t->exit_code = code;
	t->k->done = 1;
	event_base_loopbreak(t->k->base);
}

static void on_tail_message(void *ud, enum rds_sub_event what, const char *msg, size_t len)
{
	struct tailer *t = ud;

	if (what == RDS_SUB_MESSAGE) {
		tail_print(t, msg, len);
	} else if (what == RDS_SUB_LOST) {
		fprintf(stderr,
			"pixrelay tail: lost the connection to Redis (%s): the server or its Redis "
			"stopped\n",
			rds_last_error(t->sub)[0] ? rds_last_error(t->sub) : "closed");
		tail_quit(t, 1);
	}
}

static void on_tail_dispatchers(void *ud, redisReply *reply, const char *err)
{
	struct tailer *t = ud;
	uint64_t now = ids_now_ms(), newest = 0;
	int alive = 0;

	t->asking = 0;
	if (t->k->done)
		return; /* closing: the call was cut short */
	if (err) {
		fprintf(stderr,
			"pixrelay tail: Redis does not answer (%s): the server or its "
			"Redis stopped\n",
			err);
		tail_quit(t, 1);
		return;
	}
	for (size_t i = 0; reply->type == REDIS_REPLY_ARRAY && i + 1 < reply->elements; i += 2) {
		uint64_t ms =
		    reply->element[i + 1]->str ? strtoull(reply->element[i + 1]->str, NULL, 10) : 0;
		if (ms + SERVED_FRESH_MS >= now)
			alive++;
		if (ms > newest)
			newest = ms;
	}
	if (alive == 0 && t->dispatching > 0) {
		fprintf(stderr,
			"pixrelay tail: no process is dispatching any more (the last heartbeat "
			"was %llu s ago): the server stopped\n",
			(unsigned long long)((now - newest) / 1000));
		tail_quit(t, 1);
		return;
	}
	if (alive == 0 && t->dispatching < 0)
		fprintf(stderr, "pixrelay tail: no process is dispatching: postbacks wait until a "
				"'pixrelay serve' (with dispatch = 1) runs on this Redis\n");
	else if (alive > 0 && t->dispatching <= 0)
		fprintf(stderr,
			"pixrelay tail: %d process%s dispatching; waiting for deliveries "
			"(Ctrl-C to stop)...\n",
			alive, alive == 1 ? " is" : "es are");
	t->dispatching = alive;
}

static void on_tail_timer(evutil_socket_t fd, short what, void *arg)
{
	struct tailer *t = arg;
	struct timeval tv = {2, 0};

	if (!t->asking) {
		const char *argv[] = {"HGETALL", t->key};
		t->asking = 1;
		rds_cmd_argv(t->k->r, on_tail_dispatchers, t, 2, argv, NULL);
	}
	evtimer_add(t->timer, &tv);
}

static void on_tail_signal(evutil_socket_t fd, short what, void *arg)
{
	tail_quit(arg, 0);
}

/* pixrelay tail: every delivery attempt as it happens. */
static int cmd_tail(const struct config *cfg, int argc, char **argv)
{
	struct cli_redis cr;
	struct cli_call call;
	struct tailer t;
	char channel[256];
	struct timeval now = {0, 0};

	memset(&t, 0, sizeof(t));
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			t.json = 1;
		} else {
			fputs(
			    "usage: pixrelay tail [--json]\n\n"
			    "Print every postback delivery attempt as it happens (event, "
			    "destination,\n"
			    "status, outcome, latency) until interrupted. Says when no process is\n"
			    "dispatching; exits with status 1 when the server or its Redis goes "
			    "away.\n",
			    want_help(argc, argv) ? stdout : stderr);
			return want_help(argc, argv) ? 0 : 2;
		}
	}
	/* its own words, not the Redis client's info lines */
	if (strcmp(cfg->log_level, "info") == 0)
		log_set_level(LOG_WARN);
	if (cli_redis_open(cfg, &cr) < 0)
		return 1;
	t.exit_code = 1;
	if (cli_call_open(&call, cfg, &cr) == 0) {
		t.k = &call;
		t.dispatching = -1;
		snprintf(t.key, sizeof(t.key), "%s{meta}:dispatchers", cfg->prefix);
		snprintf(channel, sizeof(channel), "%sdeliveries", cfg->prefix);
		t.sub = rds_new_subscriber(call.base, &cr.addr, cfg->redis_timeout_ms, channel,
					   on_tail_message, &t);
		t.timer = evtimer_new(call.base, on_tail_timer, &t);
		t.sigint = evsignal_new(call.base, SIGINT, on_tail_signal, &t);
		t.sigterm = evsignal_new(call.base, SIGTERM, on_tail_signal, &t);
		evsignal_add(t.sigint, NULL);
		evsignal_add(t.sigterm, NULL);
		evtimer_add(t.timer, &now);
		if (!t.json)
			fprintf(stderr, "pixrelay tail: watching postback deliveries (Ctrl-C to "
					"stop)\n");
		cli_call_wait(&call);
		rds_free(t.sub);
		event_free(t.timer);
		event_free(t.sigint);
		event_free(t.sigterm);
	}
	cli_call_close(&call);
	cli_redis_close(&cr);
	return t.exit_code;
}

/* ---- pixrelay events ---- */

static const char usage_events[] =
    "usage: pixrelay events list [FILTERS] [--limit N] [--json]\n"
    "       pixrelay events show EVENT_ID [--json]\n"
    "       pixrelay events replay EVENT_ID [--json]\n"
    "       pixrelay events replay FILTERS [--limit N] [--json]\n\n"
    "The postback events of an account (--account ID, default: the platform\n"
    "account of --env, default sandbox): list them newest first, show one with its\n"
    "attempt log, deliver one again, or every one a filter selects (bulk replay,\n"
    "with progress on standard error; --limit caps how many, default all).\n\n"
    "FILTERS: --state pending|delivering|delivered|dead (bulk replay: default dead)\n"
    "         --type EVENT:CHARGE_PAID|EVENT:CHARGE_EXPIRED|EVENT:CHARGE_REFUND\n"
    "         --since T, --until T: Unix seconds, 'YYYY-MM-DD HH:MM:SS' (UTC),\n"
    "         RFC 3339, or a duration ago (90s, 15m, 1h, 2d, 1w)\n";

/* Print one event (events_get's JSON) for a person. */
static void print_event(const char *json)
{
	char err[128];
	yajl_val e = NULL, log, payload;

	if (json_parse_object(json, strlen(json), &e, err, sizeof(err)) < 0) {
		printf("%s\n", json);
		return;
	}
#define S(name) (YAJL_GET_STRING(json_get(e, name)) ? YAJL_GET_STRING(json_get(e, name)) : "-")
	printf("event %s  %s  %s\n", S("id"), S("type"), S("state"));
	printf("  destination   %s\n", S("destination"));
	printf("  created       %s\n", S("createdAt"));
	printf("  updated       %s\n", S("updatedAt"));
	if (YAJL_GET_STRING(json_get(e, "nextAttemptAt")))
		printf("  next attempt  %s\n", S("nextAttemptAt"));
	if (YAJL_GET_STRING(json_get(e, "deliveredAt")))
		printf("  delivered     %s\n", S("deliveredAt"));
	if (YAJL_GET_STRING(json_get(e, "deadAt")))
		printf("  dead          %s\n", S("deadAt"));
	printf("  attempts      %lld\n", (long long)YAJL_GET_INTEGER(json_get(e, "attempts")));
	if (YAJL_IS_INTEGER(json_get(e, "lastStatus")))
		printf("  last status   HTTP %lld\n",
		       (long long)YAJL_GET_INTEGER(json_get(e, "lastStatus")));
	if (YAJL_GET_STRING(json_get(e, "lastError")))
		printf("  last error    %s\n", S("lastError"));
#undef S
	log = json_get(e, "attemptLog");
	if (YAJL_IS_ARRAY(log) && log->u.array.len) {
		printf("attempts:\n");
		for (size_t i = 0; i < log->u.array.len; i++) {
			yajl_val a = log->u.array.values[i], st = json_get(a, "status");
			const char *at = YAJL_GET_STRING(json_get(a, "at"));
			const char *er = YAJL_GET_STRING(json_get(a, "error"));
			const char *out = YAJL_GET_STRING(json_get(a, "outcome"));
			printf("  #%-3lld %s  %-9s %s%s  %lld ms%s%s\n",
			       (long long)YAJL_GET_INTEGER(json_get(a, "attempt")), at ? at : "-",
			       out ? out : "-", YAJL_IS_INTEGER(st) ? "HTTP " : "",
			       YAJL_IS_INTEGER(st) ? st->u.number.r : "no answer",
			       (long long)YAJL_GET_INTEGER(json_get(a, "durationMs")),
			       er ? "  " : "", er ? er : "");
		}
	}
	payload = json_get(e, "payload");
	if (payload && !YAJL_IS_NULL(payload)) {
		yajl_gen g = json_gen_new();
		size_t len;
		const char *out;
		yajl_gen_config(g, yajl_gen_beautify, 1);
		json_write_value(g, payload);
		out = json_buf(g, &len);
		printf("payload:\n%.*s", (int)len, out);
		if (len && out[len - 1] != '\n')
			putchar('\n');
		yajl_gen_free(g);
	}
	yajl_tree_free(e);
}

/* Bulk replay on the call's loop: page through the filter, replay each. */
struct bulk {
	struct cli_call *k;
	const struct config *cfg;
	enum env env;
	const char *account;
	struct event_filter f;
	long cap; /* at most this many (0: all) */
	long matched, requeued, busy, left;
	int pages, failed, json;
	char cursor[96];
};

static void bulk_next(struct bulk *b);

static void on_bulk_one(void *ud, int result, const char *json, const char *err)
{
	struct bulk *b = ud;

	if (result == 0)
		b->requeued++;
	else if (result == EVENTS_BUSY)
		b->busy++;
	else if (result < 0 && !b->failed) {
		b->failed = 1;
		snprintf(b->k->err, sizeof(b->k->err), "%s", err);
	}
	if (--b->left == 0)
		bulk_next(b);
}

static void on_bulk_page(void *ud, int result, const char *json, const char *err)
{
	struct bulk *b = ud;
	yajl_val root = NULL, events, next;
	char perr[128];

	if (result < 0 || json_parse_object(json, strlen(json), &root, perr, sizeof(perr)) < 0) {
		b->failed = 1;
		snprintf(b->k->err, sizeof(b->k->err), "%s", result < 0 ? err : perr);
		b->k->done = 1;
		event_base_loopbreak(b->k->base);
		return;
	}
	events = json_get(root, "events");
	next = json_get(root, "nextCursor");
	b->cursor[0] = '\0';
	if (YAJL_IS_STRING(next) && strlen(next->u.string) < sizeof(b->cursor))
		snprintf(b->cursor, sizeof(b->cursor), "%s", next->u.string);
	b->pages++;
	b->left = 1; /* this loop's own count */
	for (size_t i = 0; YAJL_IS_ARRAY(events) && i < events->u.array.len; i++) {
		const char *id = YAJL_GET_STRING(json_get(events->u.array.values[i], "id"));
		if (!id || (b->cap && b->matched >= b->cap))
			continue;
		b->matched++;
		b->left++;
		events_replay(b->k->r, b->cfg, b->env, b->account, id, on_bulk_one, b);
	}
	if (b->cap && b->matched >= b->cap)
		b->cursor[0] = '\0';
	yajl_tree_free(root);
	on_bulk_one(b, 1, NULL, NULL);
}

static void bulk_next(struct bulk *b)
{
	if (b->pages > 0 && (b->cursor[0] || b->pages > 1) && !b->json)
		fprintf(stderr, "replaying: %ld matched, %ld queued again, %ld already waiting%s\n",
			b->matched, b->requeued, b->busy, b->cursor[0] ? "..." : "");
	if (b->failed || (b->pages > 0 && !b->cursor[0])) {
		b->k->done = 1;
		event_base_loopbreak(b->k->base);
		return;
	}
	if (b->cursor[0] && event_parse_cursor(b->cursor, &b->f.cursor_ms, &b->f.cursor_id) < 0) {
		b->k->done = 1;
		event_base_loopbreak(b->k->base);
		return;
	}
	b->f.limit = EVENT_LIST_MAX;
	if (b->cap && b->cap - b->matched < EVENT_LIST_MAX)
		b->f.limit = (int)(b->cap - b->matched);
	events_list(b->k->r, b->cfg, b->env, b->account, &b->f, 0, on_bulk_page, b);
}

static int cmd_events(const struct config *cfg, int argc, char **argv)
{
	static const struct option lo[] = {
	    {"env", required_argument, NULL, 'e'},   {"account", required_argument, NULL, 'a'},
	    {"state", required_argument, NULL, 's'}, {"type", required_argument, NULL, 't'},
	    {"since", required_argument, NULL, 'S'}, {"until", required_argument, NULL, 'U'},
	    {"limit", required_argument, NULL, 'l'}, {"json", no_argument, NULL, 'j'},
	    {"help", no_argument, NULL, 'h'},	     {NULL, 0, NULL, 0}};
	const char *verb, *envs = "sandbox", *account = NULL, *state = NULL, *type = NULL;
	long limit = -1;
	long long since_ms = 0, until_ms = 0;
	int json = 0, opt, rc = 1, filtered = 0;
	enum env env;
	struct cli_redis cr;
	struct cli_call call;
	char acct[32], *end = NULL;
	const char *id;

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
			filtered = 1;
			break;
		case 't':
			type = optarg;
			filtered = 1;
			break;
		case 'S':
		case 'U':
			if (cli_parse_since(optarg, opt == 'S' ? &since_ms : &until_ms) < 0) {
				fprintf(
				    stderr,
				    "pixrelay events: --%s must be a duration (1h), Unix seconds, "
				    "'YYYY-MM-DD HH:MM:SS' or RFC 3339\n",
				    opt == 'S' ? "since" : "until");
				return 2;
			}
			filtered = 1;
			break;
		case 'l':
			limit = strtol(optarg, &end, 10);
			if (!*optarg || *end || limit < 1) {
				fprintf(stderr,
					"pixrelay events: --limit must be a positive integer\n");
				return 2;
			}
			break;
		case 'j':
			json = 1;
			break;
		default:
			fputs(usage_events, stderr);
			return 2;
		}
	}
	if (!cli_verb_known("events", usage_events, verb,
			    (const char *const[]){"list", "show", "replay", NULL}))
		return 2;
	if (env_parse(envs, &env) < 0) {
		fprintf(stderr, "pixrelay events: --env must be sandbox or production\n");
		return 2;
	}
	if (state && strcmp(state, "pending") != 0 && strcmp(state, "delivering") != 0 &&
	    strcmp(state, "delivered") != 0 && strcmp(state, "dead") != 0) {
		fprintf(stderr,
			"pixrelay events: --state must be pending, delivering, delivered or "
			"dead\n");
		return 2;
	}
	if (type && strcmp(type, "EVENT:CHARGE_PAID") != 0 &&
	    strcmp(type, "EVENT:CHARGE_EXPIRED") != 0 && strcmp(type, "EVENT:CHARGE_REFUND") != 0) {
		fprintf(stderr, "pixrelay events: --type must be EVENT:CHARGE_PAID, "
				"EVENT:CHARGE_EXPIRED or EVENT:CHARGE_REFUND\n");
		return 2;
	}
	id = optind + 1 < argc ? argv[optind + 1] : NULL;
	if (id && optind + 2 < argc) {
		fprintf(stderr, "pixrelay events %s: unexpected argument '%s'\n", verb,
			argv[optind + 2]);
		return 2;
	}
	if (strcmp(verb, "list") == 0 && id) {
		fprintf(stderr, "pixrelay events list: unexpected argument '%s'\n", id);
		return 2;
	}
	if (strcmp(verb, "list") == 0 && limit > EVENT_LIST_MAX) {
		fprintf(stderr, "pixrelay events list: --limit must be from 1 to %d\n",
			EVENT_LIST_MAX);
		return 2;
	}
	if (strcmp(verb, "show") == 0 && !id) {
		fprintf(stderr, "pixrelay events show: EVENT_ID is required\n");
		return 2;
	}
	if (strcmp(verb, "replay") == 0 && !id && !filtered) {
		fprintf(stderr, "pixrelay events replay: EVENT_ID, or a filter (--state, --type, "
				"--since, --until) for a bulk replay, is required\n");
		return 2;
	}
	if (strcmp(verb, "replay") == 0 && id && filtered) {
		fprintf(stderr, "pixrelay events replay: give EVENT_ID or filters, not both\n");
		return 2;
	}
	if (cli_open_account(cfg, env, account, &cr, acct) < 0)
		return 1;
	if (cli_call_open(&call, cfg, &cr) == 0) {
		if (strcmp(verb, "replay") == 0 && !id) {
			struct bulk b;
			memset(&b, 0, sizeof(b));
			b.k = &call;
			b.cfg = cfg;
			b.env = env;
			b.account = acct;
			b.f.state = state ? state : "dead";
			b.f.type = type;
			b.f.since_ms = since_ms;
			b.f.until_ms = until_ms;
			b.cap = limit > 0 ? limit : 0;
			b.json = json;
			bulk_next(&b);
			cli_call_wait(&call);
			if (b.failed) {
				fprintf(stderr,
					"pixrelay events replay: %s (%ld queued again before)\n",
					call.err, b.requeued);
			} else {
				if (json)
					printf("{\"matched\":%ld,\"requeued\":%ld,"
					       "\"alreadyWaiting\":%ld}\n",
					       b.matched, b.requeued, b.busy);
				else
					printf("%ld %s event%s matched; %ld queued for delivery "
					       "again, %ld "
					       "already waiting or in flight\n",
					       b.matched, b.f.state, b.matched == 1 ? "" : "s",
					       b.requeued, b.busy);
				rc = 0;
			}
			cli_call_close(&call);
			cli_redis_close(&cr);
			return rc;
		}
		if (strcmp(verb, "list") == 0) {
			struct event_filter f;
			memset(&f, 0, sizeof(f));
			f.state = state;
			f.type = type;
			f.since_ms = since_ms;
			f.until_ms = until_ms;
			f.limit = limit > 0 ? (int)limit : 20;
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
			fprintf(stderr, "pixrelay events %s: no event %s for account %s (%s)\n",
				verb, id, acct, env_name(env));
		else if (strcmp(verb, "list") == 0)
			print_event_list(call.json, json);
		else if (strcmp(verb, "show") == 0 && json)
			printf("%s\n", call.json);
		else if (strcmp(verb, "show") == 0)
			print_event(call.json);
		else if (json)
			printf("{\"id\":\"%s\",\"requeued\":%s}\n", id,
			       call.result == 0 ? "true" : "false");
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
	enum env env;
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
	if (!cli_verb_known("account", usage_account, verb,
			    (const char *const[]){"show", "set", NULL}) ||
	    cli_env_required("account", envs, &env) < 0)
		return 2;
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
	enum env env;
	struct cli_redis cr;
	char id[32], signing[128], compat[128], ingest[128], err[256], base[512] = "";

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
	if (!cli_verb_known("secrets", usage_secrets, verb,
			    (const char *const[]){"show", "rotate", "end-rotation", NULL}) ||
	    cli_env_required("secrets", envs, &env) < 0)
		return 2;
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
	if (cfg->base_url_derived) {
		/* the base URL a running serve announces, rather than the default */
		int alive;
		long long age;
		cli_read_dispatchers(cr.c, cfg->prefix, &alive, base, sizeof(base), &age);
	}
	if (!*base)
		snprintf(base, sizeof(base), "%s", cfg->base_url);
	if (json)
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
	enum env env;
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
	if (!cli_verb_known("review", usage_review, verb,
			    (const char *const[]){"list", "show", "approve", "reject", NULL}) ||
	    cli_env_required("review", envs, &env) < 0)
		return 2;
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
			review_list(call.r, cfg, env, (int)limit, cli_call_done, &call);
		else if (strcmp(verb, "show") == 0)
			review_show(call.r, cfg, env, id, dir != NULL, cli_call_done, &call);
		else
			review_decide(call.r, cfg, env, id, strcmp(verb, "approve") == 0, reason,
				      cli_call_done, &call);
		cli_call_wait(&call);
		if (call.result < 0) {
			fprintf(stderr, "pixrelay review %s: %s\n", verb, call.err);
		} else if (call.result == ACCOUNTS_NOT_FOUND) {
			fprintf(stderr, "pixrelay review %s: no account %s in %s\n", verb, id,
				env_name(env));
		} else if (call.result == ACCOUNTS_PLATFORM) {
			fprintf(
			    stderr,
			    "pixrelay review %s: %s is the platform account of %s, which has no "
			    "KYC review\n",
			    verb, id, env_name(env));
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
	} else if (strcmp(cmd, "listen") == 0) {
		rc = cmd_listen(&cfg, nrest, rest);
	} else if (strcmp(cmd, "trigger") == 0) {
		rc = cmd_trigger(&cfg, nrest, rest);
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
