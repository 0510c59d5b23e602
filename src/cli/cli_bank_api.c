/* cli_bank_api: the bank's API credentials of a connection as the operator
 * gives them to `pixrelay bank connect|credentials` (files for the secret,
 * the certificate and the key; the scopes; extra headers and query
 * parameters), checked (pix/bankcreds.c) and tried at the bank (a token
 * asked for, relay/bankapi.c), and the credentials key that seals them in
 * Redis (core/seal.c), made when the deployment has none yet. The command
 * itself is cli_bank.c. */
#include "cli_int.h"

#include "pixrelay/core/mem.h"
#include "pixrelay/core/seal.h"
#include "pixrelay/pix/bankcreds.h"
#include "pixrelay/relay/bankapi.h"
#include "pixrelay/store/banks_conn.h"

#include <event2/event.h>

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *cli_read_file(const char *cmd, const char *opt, const char *path, size_t max, int trim)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	size_t n;

	if (!f) {
		fprintf(stderr, "pixrelay %s: --%s %s: %s\n", cmd, opt, path, strerror(errno));
		return NULL;
	}
	buf = mem_alloc(max + 2);
	n = fread(buf, 1, max + 1, f);
	fclose(f);
	if (n > max) {
		fprintf(stderr, "pixrelay %s: --%s %s: larger than %zu bytes\n", cmd, opt, path,
			max);
		mem_wipe(buf, max + 2);
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	while (trim && n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	return buf;
}

bool cli_bank_api_given(const struct cli_bank_api *o)
{
	return o->api_url || o->token_url || o->client_id || o->secret_file || o->cert_file ||
	       o->key_file || o->bank_ca_file || o->scope || o->nheaders || o->nquery ||
	       o->no_check;
}

bool cli_bank_api_option(struct cli_bank_api *o, const char *name, const char *arg)
{
	static const struct {
		const char *name;
		size_t at;
	} one[] = {
	    {"api-url", offsetof(struct cli_bank_api, api_url)},
	    {"token-url", offsetof(struct cli_bank_api, token_url)},
	    {"client-id", offsetof(struct cli_bank_api, client_id)},
	    {"client-secret-file", offsetof(struct cli_bank_api, secret_file)},
	    {"cert", offsetof(struct cli_bank_api, cert_file)},
	    {"key", offsetof(struct cli_bank_api, key_file)},
	    {"bank-ca", offsetof(struct cli_bank_api, bank_ca_file)},
	    {"scope", offsetof(struct cli_bank_api, scope)},
	};

	for (size_t i = 0; i < sizeof(one) / sizeof(one[0]); i++)
		if (strcmp(name, one[i].name) == 0) {
			*(const char **)((char *)o + one[i].at) = arg;
			return 1;
		}
	/* one past the most is kept, for bank_creds_add_* to refuse */
	if (strcmp(name, "api-header") == 0) {
		if (o->nheaders < CLI_BANK_EXTRA)
			o->headers[o->nheaders++] = arg;
		return 1;
	}
	if (strcmp(name, "api-query") == 0) {
		if (o->nquery < CLI_BANK_EXTRA)
			o->query[o->nquery++] = arg;
		return 1;
	}
	if (strcmp(name, "no-check") == 0) {
		o->no_check = 1;
		return 1;
	}
	return 0;
}

int cli_bank_api_read(const char *cmd, const struct cli_bank_api *o, struct bank_creds *out)
{
	char err[256];

	memset(out, 0, sizeof(*out));
	if (!o->api_url || !o->token_url || !o->client_id || !o->secret_file || !o->cert_file ||
	    !o->key_file) {
		fprintf(stderr,
			"pixrelay %s: the bank's API needs --api-url, --token-url, "
			"--client-id, --client-secret-file, --cert and --key "
			"(--bank-ca, --scope, --api-header, --api-query and --no-check "
			"optional)\n",
			cmd);
		return -1;
	}
	out->api_url = mem_strdup(o->api_url);
	out->token_url = mem_strdup(o->token_url);
	out->client_id = mem_strdup(o->client_id);
	if (!(out->client_secret =
		  cli_read_file(cmd, "client-secret-file", o->secret_file, BANK_CREDS_ID_MAX, 1)) ||
	    !(out->cert_pem = cli_read_file(cmd, "cert", o->cert_file, BANK_CREDS_PEM_MAX, 0)) ||
	    !(out->key_pem = cli_read_file(cmd, "key", o->key_file, BANK_CREDS_PEM_MAX, 0)) ||
	    (o->bank_ca_file && !(out->bank_ca_pem = cli_read_file(cmd, "bank-ca", o->bank_ca_file,
								   BANK_CREDS_PEM_MAX, 0))))
		goto fail;
	/* the standard's scopes of pixrelay's calls, unless told otherwise
	 * (--scope "" asks for none: the bank's default) */
	out->scope = mem_strdup(o->scope ? o->scope : BANK_CREDS_SCOPES);
	for (size_t i = 0; i < o->nheaders; i++)
		if (bank_creds_add_header(out, o->headers[i], err, sizeof(err)) < 0)
			goto refused;
	for (size_t i = 0; i < o->nquery; i++)
		if (bank_creds_add_query(out, o->query[i], err, sizeof(err)) < 0)
			goto refused;
	if (bank_creds_check(out, err, sizeof(err)) < 0)
		goto refused;
	return 0;
refused:
	fprintf(stderr, "pixrelay %s: %s\n", cmd, err);
fail:
	bank_creds_wipe(out);
	return -1;
}

/* What the bank said to bankapi_check. */
struct tried {
	struct event_base *base;
	int done;
	long status;
	char err[400];
};

static void on_tried(void *ud, long status, const char *body, const char *err)
{
	struct tried *t = ud;

	(void)body;
	t->done = 1;
	t->status = status;
	snprintf(t->err, sizeof(t->err), "%s", err ? err : "no token");
	event_base_loopbreak(t->base);
}

int cli_bank_api_try(const char *cmd, const struct config *cfg, const struct cli_bank_api *o,
		     const struct bank_creds *creds, const char *then)
{
	struct tried t = {0};
	struct bankapi *b;

	if (o->no_check)
		return 0;
	t.base = event_base_new();
	if (!t.base)
		mem_oom(__FILE__, __LINE__);
	b = bankapi_new(t.base, cfg->bank_timeout_ms);
	bankapi_check(b, creds, on_tried, &t);
	while (!t.done)
		event_base_dispatch(t.base);
	bankapi_free(b);
	event_base_free(t.base);
	if (t.status == 200)
		return 0;
	fprintf(stderr,
		"pixrelay %s: the bank gave no token for these credentials: %s; %s (--no-check "
		"keeps them untried)\n",
		cmd, t.err, then);
	return -1;
}

/* What cli_bank_api_get learns on its loop. */
struct got {
	int done;
	long status;
	char *body;
	char err[320];
};

static void on_got(void *ud, long status, const char *body, const char *err)
{
	struct got *g = ud;

	g->done = 1;
	g->status = status;
	g->body = body ? mem_strdup(body) : NULL;
	if (err)
		snprintf(g->err, sizeof(g->err), "%s", err);
}

long cli_bank_api_get(const struct config *cfg, const struct bank_creds *creds, const char *path,
		      char **body, char *err, size_t errlen)
{
	return cli_bank_api_call(cfg, creds, "GET", path, NULL, body, err, errlen);
}

long cli_bank_api_call(const struct config *cfg, const struct bank_creds *creds, const char *method,
		       const char *path, const char *req, char **body, char *err, size_t errlen)
{
	struct got g = {0};
	struct event_base *base = event_base_new();
	struct bankapi *b;

	if (!base)
		mem_oom(__FILE__, __LINE__);
	b = bankapi_new(base, cfg->bank_timeout_ms);
	bankapi_call(b, creds, method, path, req, on_got, &g);
	while (!g.done)
		event_base_loop(base, EVLOOP_ONCE);
	bankapi_free(b);
	event_base_free(base);
	if (g.status == 0)
		snprintf(err, errlen, "%s", g.err);
	*body = g.body;
	return g.status;
}

void cli_credentials_key_path(const struct config *cfg, char *out, size_t size)
{
	if (cfg->credentials_key_file[0])
		snprintf(out, size, "%s", cfg->credentials_key_file);
	else
		snprintf(out, size, "%s/credentials.key", cfg->data_dir);
}

int cli_credentials_key(const char *cmd, const struct config *cfg, int create, struct seal_key *key)
{
	char path[1024], err[512];
	struct stat st;

	cli_credentials_key_path(cfg, path, sizeof(path));
	if (create && stat(path, &st) < 0 && errno == ENOENT) {
		if (seal_key_create(path, err, sizeof(err)) < 0) {
			fprintf(stderr, "pixrelay %s: %s\n", cmd, err);
			return -1;
		}
		fprintf(stderr,
			"pixrelay %s: made the credentials key %s (mode 0600); every host of "
			"this deployment needs the same file (setting credentials-key-file)\n",
			cmd, path);
	}
	if (seal_key_load(path, key, err, sizeof(err)) < 0) {
		fprintf(stderr, "pixrelay %s: %s\n", cmd, err);
		return -1;
	}
	return 0;
}

/* What cli_bank_read learns on the loop. */
struct probe {
	struct event_base *base;
	const struct seal_key *key;
	struct cli_bank_conn *out;
	int own; /* open a sandbox provider connection's own key too */
	int done;
};

static void on_probe(void *ud, int result, const struct banks_conn *c, const char *err)
{
	struct probe *p = ud;
	struct cli_bank_conn *out = p->out;

	out->result = result;
	if (result < 0) {
		snprintf(out->why, sizeof(out->why), "%s", err ? err : "redis");
	} else if (result == 0) {
		out->env = c->env;
		out->auth = c->auth;
		snprintf(out->pix_key, sizeof(out->pix_key), "%s", c->pix_key);
		snprintf(out->token_sha, sizeof(out->token_sha), "%s", c->token_sha);
		out->has_api = c->api.api_url != NULL;
		out->provider = c->provider;
		if (p->own && c->prov_priv && p->key) {
			size_t n;

			out->own_key =
			    (char *)banks_open_sealed(c->id, "prov_priv", c->prov_priv, p->key, &n);
		}
		if (p->own && c->webhook_secret && p->key) {
			size_t n;

			out->own_secret = (char *)banks_open_sealed(c->id, "webhook_secret",
								    c->webhook_secret, p->key, &n);
		}
		if (out->has_api && p->key)
			out->opened = banks_open_credentials(c->id, &c->api, p->key, &out->creds,
							     out->why, sizeof(out->why)) == 0;
	}
	p->done = 1;
	event_base_loopbreak(p->base);
}

/* cli_bank_read, with the own key opened when `own`. */
static void bank_read(struct cli_call *k, const struct config *cfg, const char *id,
		      const struct seal_key *key, int own, struct cli_bank_conn *out)
{
	struct probe p = {.base = k->base, .key = key, .out = out, .own = own};

	memset(out, 0, sizeof(*out));
	banks_get(k->r, cfg, id, on_probe, &p);
	while (!p.done)
		event_base_dispatch(k->base);
}

void cli_bank_read(struct cli_call *k, const struct config *cfg, const char *id,
		   const struct seal_key *key, struct cli_bank_conn *out)
{
	bank_read(k, cfg, id, key, 0, out);
}

void cli_bank_read_own(struct cli_call *k, const struct config *cfg, const char *id,
		       const struct seal_key *key, struct cli_bank_conn *out)
{
	bank_read(k, cfg, id, key, 1, out);
}

int cli_bank_env(struct cli_call *k, const struct config *cfg, const char *cmd, const char *id,
		 const char *given, enum env *env)
{
	struct cli_bank_conn c;
	enum env want;

	cli_bank_read(k, cfg, id, NULL, &c);
	if (c.result < 0) {
		fprintf(stderr, "pixrelay %s: %s\n", cmd, c.why);
		return 1;
	}
	if (c.result != 0) {
		fprintf(stderr, "pixrelay %s: no connection %s%s%s\n", cmd, id, given ? " in " : "",
			given ? given : "");
		return 1;
	}
	if (given && env_parse(given, &want) == 0 && want != c.env) {
		fprintf(stderr, "pixrelay %s: connection %s is of %s, not %s (--env)\n", cmd, id,
			env_name(c.env), env_name(want));
		return 2;
	}
	*env = c.env;
	return 0;
}

void cli_bank_api_explain(struct cli_call *k, const struct config *cfg, const char *id)
{
	struct cli_bank_conn c;
	struct seal_key key;
	char path[1024], err[1200] = "";
	int have = 0;

	cli_credentials_key_path(cfg, path, sizeof(path));
	if (access(path, F_OK) < 0)
		snprintf(err, sizeof(err), "no credentials key at %s (credentials-key-file)", path);
	else if (seal_key_load(path, &key, err, sizeof(err)) == 0)
		have = 1;
	cli_bank_read(k, cfg, id, have ? &key : NULL, &c);
	if (c.result == 0 && c.has_api && !c.opened)
		fprintf(stderr,
			"pixrelay bank show: %s: its API credentials cannot be used on this host: "
			"%s\n",
			id, have ? c.why : err);
	bank_creds_wipe(&c.creds);
	if (have)
		seal_key_wipe(&key);
}
