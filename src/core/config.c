/* config: the table of every setting (name, type, default, bounds, help)
 * and a struct config filled from it: flags, then PIXRELAY_* variables, then
 * the --config file, then the defaults, each setting from the first that
 * has it. Unknown flags are left to the command (cli/cli.c); an integer out
 * of bounds or a bad line of the file is refused on stderr. What else a
 * value must be is checked where it is used (addresses by netaddr.c, in
 * http/server.c). tests/docs/check_config_doc.py compares the table with
 * docs/configuration.md. */
#include "pixrelay/core/config.h"

#include "pixrelay/core/mem.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum opt_type { OPT_STR, OPT_LONG };

struct opt {
	const char *name; /* flag --name, variable PIXRELAY_NAME, file key name */
	enum opt_type type;
	size_t offset;
	const char *def;
	long min, max;
	const char *help;
};

#define S(field) OPT_STR, offsetof(struct config, field)
#define L(field) OPT_LONG, offsetof(struct config, field)

static const struct opt opts[] = {
    {"listen", S(listen), "127.0.0.1:8080", 0, 0, "address:port the HTTP server listens on"},
    {"metrics-listen", S(metrics_listen), "", 0, 0,
     "address:port of a second listener that serves only /metrics, /healthz and /readyz; "
     "when set, the main listener answers 404 for /metrics (empty: /metrics is on the main "
     "listener)"},
    {"bank-listen", S(bank_listen), "", 0, 0,
     "unix:PATH: the bank door, a Unix socket (mode 0660) that serves only the bank "
     "webhooks, where the proxy's X-Client-Cert is believed from root and bank-proxy-uids "
     "(empty: none; the API listener never believes X-Client-Cert, so mutual-TLS bank "
     "connections need it)"},
    {"bank-listen-group", S(bank_listen_group), "", 0, 0,
     "group of the bank-listen socket, the proxy's (a name or a number; this process's user "
     "must be a member); empty: this process's group"},
    {"bank-proxy-uids", S(bank_proxy_uids), "", 0, 0,
     "comma-separated uids or user names (the proxy's workers: www-data) whose X-Client-Cert "
     "is believed on bank-listen; root always is"},
    {"base-url", S(base_url), "", 0, 0,
     "public base URL ending in /v1, used in links such as brCodeImageUrl "
     "(default http://<listen>/v1)"},
    {"bank-webhook-base-url", S(bank_webhook_base_url), "", 0, 0,
     "public base URL ending in /v1 of the server that takes banks' webhooks (the "
     "webhook name of deploy/nginx.conf, which asks for the bank's client "
     "certificate); a bank connection's webhookUrl starts with it (default base-url)"},
    {"credentials-key-file", S(credentials_key_file), "", 0, 0,
     "file of the key that seals bank connections' API credentials in Redis: 32 bytes or "
     "64 hex digits, mode 0600, the same on every host of a deployment (default "
     "<data-dir>/credentials.key; `pixrelay bank credentials` makes it when missing)"},
    {"redis", S(redis), "", 0, 0,
     "Redis to use: redis://host:port[/db] (one Redis or any node of a Redis Cluster), "
     "redis-sentinel://host:port[,host:port...]/master[/db], unix:///path/redis.sock or a "
     "socket path; empty starts an embedded redis-server in data-dir"},
    {"data-dir", S(data_dir), "", 0, 0,
     "directory of the embedded Redis (default $XDG_DATA_HOME/pixrelay or "
     "~/.local/share/pixrelay)"},
    {"redis-server", S(redis_server), "redis-server", 0, 0,
     "redis-server binary started for the embedded Redis"},
    {"prefix", S(prefix), "pixrelay:", 0, 0, "prefix of every Redis key"},
    {"trusted-proxies", S(trusted_proxies), "", 0, 0,
     "comma-separated IPs or CIDRs whose X-Forwarded-For/-Proto headers are believed"},
    {"log-level", S(log_level), "", 0, 0,
     "debug, info, warn or error (default: info for serve, warn for the other commands)"},
    {"max-body", L(max_body), "1048576", 64, 64L << 20, "largest JSON request body, in bytes"},
    {"max-upload", L(max_upload), "16777216", 1024, 256L << 20,
     "largest body of a request that carries files (account creation), in bytes"},
    {"max-file", L(max_file), "5242880", 1024, 64L << 20,
     "largest decoded size of one uploaded file (PDF, JPG, PNG), in bytes"},
    {"http-timeout", L(http_timeout), "30", 1, 3600,
     "seconds a client may stay silent while sending a request or reading a reply, and an "
     "idle keep-alive connection is kept"},
    {"http-header-timeout", L(http_header_timeout), "10", 1, 3600,
     "seconds a client has to send a whole request head (from the connection's start, or "
     "from the first byte of a later request)"},
    {"http-body-timeout", L(http_body_timeout), "60", 1, 86400,
     "seconds a client has to send a whole request body, from the end of its head"},
    {"http-send-timeout", L(http_send_timeout), "60", 1, 86400,
     "seconds a client has to receive a whole response"},
    {"max-body-memory", L(max_body_memory), "268435456", 1048576, 64L << 30,
     "bytes of request bodies held at once over all connections; a body that does not fit "
     "gets 503"},
    {"redis-timeout-ms", L(redis_timeout_ms), "5000", 50, 600000,
     "milliseconds before a Redis command without reply fails (and the connection is reset)"},
    {"redis-sentinel-password", S(redis_sentinel_password), "", 0, 0,
     "password the sentinels of a redis-sentinel:// address require (the master's goes in "
     "the address); empty: they are asked without one"},
    {"redis-wait-replicas", L(redis_wait_replicas), "0", 0, 16,
     "acknowledge a change only once WAIT confirms that this many replicas of its Redis "
     "primary have it (0: once the primary has it)"},
    {"shutdown-grace", L(shutdown_grace), "10", 0, 600,
     "seconds to finish requests in flight after SIGTERM/SIGINT"},
    {"max-connections", L(max_connections), "1024", 1, 1000000,
     "client connections served at once; more are answered 503 and closed"},
    {"bootstrap", L(bootstrap), "1", 0, 1,
     "1: with the embedded Redis, create the sandbox platform account and print a sandbox "
     "key on first start"},
    {"pix-key", S(pix_key), "", 0, 0,
     "Pix key that receives payments, written into every BR Code (empty: each account's "
     "own random key, fine for the sandbox)"},
    {"merchant-name", S(merchant_name), "PIXRELAY", 0, 0,
     "merchant name in BR Codes (folded to ASCII, at most 25 characters)"},
    {"merchant-city", S(merchant_city), "SAO PAULO", 0, 0,
     "merchant city in BR Codes (folded to ASCII, at most 15 characters)"},
    {"fee-fixed", L(fee_fixed), "0", 0, 100000000, "fixed part of each charge's fee, in cents"},
    {"fee-bps", L(fee_bps), "80", 0, 10000,
     "proportional part of each charge's fee in basis points (80 = 0.80 %), rounded half up"},
    {"default-expiration", L(default_expiration), "86400", 300, 31536000,
     "expiration of a charge that gives none, in seconds"},
    {"max-expiration", L(max_expiration), "2592000", 300, 31536000,
     "largest charge expiration accepted, in seconds"},
    {"shards", L(shards), "16", 1, 1024,
     "shards (Redis hash tags) that new accounts are spread over, each holding its accounts' "
     "data and delivery queue; every process must use the same value, which may grow but never "
     "shrink"},
    {"delivery-concurrency", L(delivery_concurrency), "512", 1, 10000,
     "postback deliveries leased at once by this process (in flight or waiting for a slot of "
     "their host)"},
    {"delivery-per-host", L(delivery_per_host), "8", 1, 10000,
     "postback deliveries in flight at once to one destination host at first; the limit adapts "
     "to how the host answers"},
    {"delivery-per-account", L(delivery_per_account), "128", 1, 10000,
     "postback deliveries of one account leased at once by this process: a tenant with "
     "slow destinations holds no more"},
    {"delivery-sandbox-share", L(delivery_sandbox_share), "50", 1, 100,
     "percent of delivery-concurrency that sandbox postbacks may hold at once (production "
     "may use all of it)"},
    {"delivery-per-host-max", L(delivery_per_host_max), "64", 1, 10000,
     "the most postback deliveries in flight at once to one destination host that answers "
     "fast"},
    {"bank-timeout-ms", L(bank_timeout_ms), "10000", 100, 600000,
     "time a bank's API has to answer one call (a token, a charge, a refund, a page of "
     "Pix), in milliseconds; connecting takes at most 5000 of it"},
    {"bank-reconcile-interval", L(bank_reconcile_interval), "300", 5, 86400,
     "seconds between two reconciliations of a bank connection that has API credentials "
     "(GET /pix since the last one): what its webhook missed is taken then"},
    {"delivery-timeout-ms", L(delivery_timeout_ms), "10000", 100, 600000,
     "time a destination has to answer a postback, in milliseconds"},
    {"delivery-connect-timeout-ms", L(delivery_connect_timeout_ms), "3000", 100, 600000,
     "time to connect to a destination, in milliseconds"},
    {"retry-base-ms", L(retry_base_ms), "5000", 0, 86400000,
     "delay before the first retry, in milliseconds"},
    {"retry-factor-pct", L(retry_factor_pct), "300", 100, 10000,
     "growth of each retry delay, in percent of the one before (300 = x3)"},
    {"retry-cap-ms", L(retry_cap_ms), "36000000", 0, 604800000,
     "largest delay between two attempts (before jitter), in milliseconds"},
    {"retry-max-attempts", L(retry_max_attempts), "15", 1, 1000,
     "attempts of one delivery in all (the first included) before it is dead"},
    {"retry-max-age-s", L(retry_max_age_s), "259200", 1, 31536000,
     "no attempt is made later than this many seconds after the event was created"},
    {"attempt-log-cap", L(attempt_log_cap), "50", 1, 1000,
     "attempts kept in each event's attempt log (oldest dropped first)"},
    {"event-retention-days", L(event_retention_days), "30", 1, 3650,
     "days a delivered or dead event (and its attempt log) is kept after its last change"},
    {"endpoint-disable-after", L(endpoint_disable_after), "432000", 1, 31536000,
     "seconds a webhook endpoint must have failed every attempt (and at least "
     "endpoint-disable-min-failures in a row) to be disabled; its deliveries are kept until it "
     "is enabled again"},
    {"endpoint-disable-min-failures", L(endpoint_disable_min_failures), "10", 1, 100000,
     "attempts in a row a webhook endpoint must have failed (for endpoint-disable-after) to be "
     "disabled"},
    {"destination-allow", S(destination_allow), "", 0, 0,
     "comma-separated addresses or CIDRs, each with an optional port (10.0.0.5:8080, "
     "[fd00::/8]:443), that production postbacks may reach although they are not public "
     "(sandbox postbacks may reach any address)"},
    {"dispatch", L(dispatch), "1", 0, 1,
     "1: this process delivers postbacks and runs the expiry scheduler; 0: API only"},
    {"stream-max", L(stream_max), "1000", 0, 100000,
     "live event streams (GET /v1/events/stream) this process serves at once (0: none)"},
    {"stream-max-per-account", L(stream_max_per_account), "10", 1, 100000,
     "live event streams one account may hold open on this process"},
    {"stream-heartbeat", L(stream_heartbeat), "15", 1, 3600,
     "seconds of silence after which a live stream gets a keep-alive comment (proxies close "
     "idle connections)"},
    {"stream-max-pending", L(stream_max_pending), "262144", 4096, 1048576,
     "bytes a live stream's client may leave unread before it is dropped (it reconnects and "
     "resumes)"},
    {"stream-max-lifetime", L(stream_max_lifetime), "3600", 1, 604800,
     "seconds after which a live stream ends (up to a tenth earlier), so that no stream holds "
     "its connection forever; the client resumes with Last-Event-ID"},
    {"max-account-files", L(max_account_files), "30", 1, 1000,
     "files (documents and pictures, each counted once) that one account may keep"},
    {"max-account-bytes", L(max_account_bytes), "12582912", 1024, 1L << 30,
     "decoded bytes of the files that one account may keep"},
    {"max-accounts-per-key-hour", L(max_accounts_per_key_hour), "20", 0, 1000000,
     "accounts one account key may create in any hour, counting creations refused for a taxID "
     "already registered (0: no limit; master keys have none)"},
    {"max-accounts", L(max_accounts), "0", 0, 1000000000,
     "business accounts each environment may hold (0: no limit)"},
    {"max-stored-file-bytes", L(max_stored_file_bytes), "2147483648", 0, 1L << 40,
     "decoded bytes of account files each environment may keep in Redis (0: no limit)"},
    {"sandbox-review", L(sandbox_review), "0", 0, 1,
     "1: sandbox accounts wait for the operator's KYC review like production ones; 0: they "
     "are approved when created"},
};

#define NOPTS (sizeof(opts) / sizeof(opts[0]))

static void env_var_name(char *buf, size_t size, const char *name)
{
	size_t n = (size_t)snprintf(buf, size, "PIXRELAY_");
	for (; *name && n + 1 < size; name++)
		buf[n++] = *name == '-' ? '_' : (char)toupper((unsigned char)*name);
	buf[n] = '\0';
}

static const struct opt *find_opt(const char *name, size_t len)
{
	for (size_t i = 0; i < NOPTS; i++)
		if (strlen(opts[i].name) == len && strncmp(opts[i].name, name, len) == 0)
			return &opts[i];
	return NULL;
}

static int set_value(struct config *cfg, const struct opt *o, const char *v, const char *from)
{
	char *end = NULL;
	long n;

	if (o->type == OPT_STR) {
		char **slot = (char **)((char *)cfg + o->offset);
		free(*slot);
		*slot = mem_strdup(v);
		return 0;
	}
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || end == v || *end || n < o->min || n > o->max) {
		fprintf(stderr, "pixrelay: %s: %s must be an integer from %ld to %ld, got '%s'\n",
			from, o->name, o->min, o->max, v);
		return -1;
	}
	*(long *)((char *)cfg + o->offset) = n;
	return 0;
}

/* The prefix of every Redis key: at most CONFIG_PREFIX_MAX bytes, so that
 * every name built from it fits (keyspace.h), and printable without spaces
 * or braces (a brace would become the key's Redis Cluster hash tag). */
static int check_prefix(const char *p)
{
	size_t n = strlen(p);

	if (n > CONFIG_PREFIX_MAX) {
		fprintf(stderr, "pixrelay: prefix: at most %d bytes, got %zu\n", CONFIG_PREFIX_MAX,
			n);
		return -1;
	}
	for (const char *c = p; *c; c++) {
		if (*c == '{' || *c == '}' || *c <= ' ' || *c == 0x7f) {
			fprintf(stderr,
				"pixrelay: prefix: printable characters without spaces or braces "
				"(braces would choose the Redis Cluster slot), got '%s'\n",
				p);
			return -1;
		}
	}
	return 0;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

#define CONFIG_LINE_MAX 4096

/* Apply `name = value` lines for settings not already set (seen[i] == 0).
 * A line longer than CONFIG_LINE_MAX bytes or holding a NUL byte is refused
 * (read in pieces, the end of a long comment would become a setting). */
static int load_file(struct config *cfg, const char *path, char *seen)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int lineno = 0, rc = -1;

	if (!f) {
		fprintf(stderr, "pixrelay: cannot open config file %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		char *eq, *key, *val, from[300];
		const struct opt *o;

		lineno++;
		if (len > CONFIG_LINE_MAX) {
			fprintf(stderr, "pixrelay: %s:%d: line longer than %d bytes\n", path,
				lineno, CONFIG_LINE_MAX);
			goto done;
		}
		if (strlen(line) != (size_t)len) {
			fprintf(stderr, "pixrelay: %s:%d: NUL byte in line\n", path, lineno);
			goto done;
		}
		key = trim(line);
		if (*key == '#' || *key == '\0')
			continue;
		eq = strchr(key, '=');
		if (!eq) {
			fprintf(stderr, "pixrelay: %s:%d: expected 'name = value'\n", path, lineno);
			goto done;
		}
		*eq = '\0';
		key = trim(key);
		val = trim(eq + 1);
		o = find_opt(key, strlen(key));
		if (!o) {
			fprintf(stderr, "pixrelay: %s:%d: unknown setting '%.64s'\n", path, lineno,
				key);
			goto done;
		}
		snprintf(from, sizeof(from), "%s:%d", path, lineno);
		if (!seen[o - opts] && set_value(cfg, o, val, from) < 0)
			goto done;
		seen[o - opts] = 1;
	}
	if (ferror(f)) {
		fprintf(stderr, "pixrelay: cannot read config file %s: %s\n", path,
			strerror(errno));
		goto done;
	}
	rc = 0;
done:
	free(line);
	fclose(f);
	return rc;
}

static char *default_data_dir(void)
{
	const char *xdg = getenv("XDG_DATA_HOME");
	const char *home = getenv("HOME");

	if (xdg && *xdg)
		return mem_printf("%s/pixrelay", xdg);
	if (home && *home)
		return mem_printf("%s/.local/share/pixrelay", home);
	return mem_strdup("./pixrelay-data");
}

int config_load(struct config *cfg, int argc, char **argv, char ***rest, int *nrest)
{
	char seen[NOPTS] = {0};
	const char *config_file = getenv("PIXRELAY_CONFIG");
	char **left = mem_calloc((size_t)argc + 1, sizeof(char *));
	int nleft = 0;

	memset(cfg, 0, sizeof(*cfg));
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *val = NULL, *name, *eq;
		const struct opt *o;
		size_t len;

		if (strcmp(a, "--") == 0) {
			while (i < argc)
				left[nleft++] = argv[i++];
			break;
		}
		if (strncmp(a, "--", 2) != 0) {
			left[nleft++] = argv[i];
			continue;
		}
		name = a + 2;
		eq = strchr(name, '=');
		len = eq ? (size_t)(eq - name) : strlen(name);
		if (len == 6 && strncmp(name, "config", 6) == 0) {
			if (!eq && i + 1 >= argc)
				goto missing;
			config_file = eq ? eq + 1 : argv[++i];
			continue;
		}
		o = find_opt(name, len);
		if (!o) {
			left[nleft++] = argv[i];
			continue;
		}
		if (eq) {
			val = eq + 1;
		} else {
			if (i + 1 >= argc)
				goto missing;
			val = argv[++i];
		}
		if (set_value(cfg, o, val, "command line") < 0)
			goto fail;
		seen[o - opts] = 1;
		continue;
	missing:
		fprintf(stderr, "pixrelay: %s needs a value\n", a);
		goto fail;
	}
	for (size_t i = 0; i < NOPTS; i++) {
		char var[80];
		const char *v;

		if (seen[i])
			continue;
		env_var_name(var, sizeof(var), opts[i].name);
		v = getenv(var);
		if (v) {
			if (set_value(cfg, &opts[i], v, var) < 0)
				goto fail;
			seen[i] = 1;
		}
	}
	if (config_file && *config_file && load_file(cfg, config_file, seen) < 0)
		goto fail;
	for (size_t i = 0; i < NOPTS; i++)
		if (!seen[i] && set_value(cfg, &opts[i], opts[i].def, "default") < 0)
			goto fail;
	if (!*cfg->data_dir) {
		free(cfg->data_dir);
		cfg->data_dir = default_data_dir();
	}
	if (cfg->default_expiration > cfg->max_expiration) {
		fprintf(stderr,
			"pixrelay: default-expiration (%ld) must not exceed max-expiration (%ld)\n",
			cfg->default_expiration, cfg->max_expiration);
		goto fail;
	}
	if (check_prefix(cfg->prefix) < 0)
		goto fail;
	if (!*cfg->base_url) {
		free(cfg->base_url);
		cfg->base_url = mem_printf("http://%s/v1", cfg->listen);
		cfg->base_url_derived = 1;
	}
	/* links are built as base_url + "/qrcode/..." */
	for (size_t n = strlen(cfg->base_url); n > 0 && cfg->base_url[n - 1] == '/'; n--)
		cfg->base_url[n - 1] = '\0';
	for (size_t n = strlen(cfg->bank_webhook_base_url);
	     n > 0 && cfg->bank_webhook_base_url[n - 1] == '/'; n--)
		cfg->bank_webhook_base_url[n - 1] = '\0';
	*rest = left;
	*nrest = nleft;
	return 0;
fail:
	free(left);
	config_deinit(cfg);
	return -1;
}

void config_deinit(struct config *cfg)
{
	for (size_t i = 0; i < NOPTS; i++) {
		if (opts[i].type == OPT_STR) {
			char **slot = (char **)((char *)cfg + opts[i].offset);
			free(*slot);
			*slot = NULL;
		}
	}
}

void config_usage(FILE *out)
{
	fprintf(out, "Settings (flag, or environment variable, or 'name = value' in the file given "
		     "by --config / PIXRELAY_CONFIG):\n");
	for (size_t i = 0; i < NOPTS; i++) {
		char var[80];
		env_var_name(var, sizeof(var), opts[i].name);
		fprintf(out, "  --%-18s %s\n  %-20s   env %s, default '%s'\n", opts[i].name,
			opts[i].help, "", var, opts[i].def);
	}
}
