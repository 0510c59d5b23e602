/* banks_webhook: a connection's webhook as its bank holds it. Whether the
 * URL pixrelay would register is https (the standard will have no other),
 * and what a bank's answer to GET /webhook/{chave} says of a connection:
 * its own URL, its URL with a token it no longer takes, another URL, or no
 * webhook answer at all. Pure: the calls to the bank are the CLI's
 * (cli_bank_webhook.c, through relay/bankapi.c); the new token is stored by
 * banks_set_token (banks.c). */
#include "pixrelay/store/banks_webhook.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/timefmt.h"

#include <openssl/crypto.h>

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define URL_MAX 2048 /* a webhook URL longer than this is no webhook of ours */

void banks_webhook_url(char *out, size_t size, const struct config *cfg, const char *id,
		       const char *token)
{
	/* the banks' webhook server, when it has a name of its own */
	const char *base =
	    cfg->bank_webhook_base_url[0] ? cfg->bank_webhook_base_url : cfg->base_url;

	if (token)
		snprintf(out, size, "%s/webhooks/bank/%s?hmac=%s&ignorar=", base, id, token);
	else
		snprintf(out, size, "%s/webhooks/bank/%s", base, id);
}

int banks_webhook_https(const struct config *cfg, char *err, size_t errlen)
{
	int own = cfg->bank_webhook_base_url[0] != '\0';
	const char *base = own ? cfg->bank_webhook_base_url : cfg->base_url;

	if (strncasecmp(base, "https://", 8) == 0 && base[8])
		return 0;
	if (own)
		snprintf(err, errlen,
			 "the webhook URL must be https (the standard demands it), and "
			 "bank-webhook-base-url is %.200s: set it to the https name of the server "
			 "that takes the banks' webhooks",
			 base);
	else
		snprintf(
		    err, errlen,
		    "the webhook URL must be https (the standard demands it), and base-url is "
		    "%.200s (bank-webhook-base-url is not set): set bank-webhook-base-url to the "
		    "https name of the server that takes the banks' webhooks",
		    base);
	return -1;
}

/* The host of `url` (scheme://[userinfo@]host[:port]/...) into out, each
 * character outside a host name's as '?'; "" when there is none. */
static void host_of(const char *url, char out[BANKS_HOOK_HOST_MAX + 1])
{
	const char *p = strstr(url, "://"), *end, *at;
	size_t n = 0;

	out[0] = '\0';
	if (!p)
		return;
	p += 3;
	end = p + strcspn(p, "/?#");
	/* user info may hold a secret: the host starts after it */
	at = memchr(p, '@', (size_t)(end - p));
	while (at) {
		p = at + 1;
		at = memchr(p, '@', (size_t)(end - p));
	}
	if (*p == '[') { /* an IPv6 literal keeps its brackets, its port goes */
		const char *close = memchr(p, ']', (size_t)(end - p));
		if (close)
			end = close + 1;
	} else {
		const char *colon = memchr(p, ':', (size_t)(end - p));
		if (colon)
			end = colon;
	}
	for (; p < end && n < BANKS_HOOK_HOST_MAX; p++) {
		unsigned char ch = (unsigned char)*p;
		int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			 (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '_' ||
			 ch == '[' || ch == ']' || ch == ':';
		out[n++] = ok ? (char)ch : '?';
	}
	out[n] = '\0';
}

/* The value of query parameter `name` in `query` (after '?', before any
 * '#'): its first occurrence, not decoded, into out (size bytes); 0 when
 * found and it fits, else -1. */
static int query_param(const char *query, const char *name, char *out, size_t size)
{
	size_t nlen = strlen(name);
	const char *p = query;

	while (*p && *p != '#') {
		size_t n = strcspn(p, "&#");
		if (n > nlen && strncmp(p, name, nlen) == 0 && p[nlen] == '=') {
			if (n - nlen - 1 >= size)
				return -1;
			memcpy(out, p + nlen + 1, n - nlen - 1);
			out[n - nlen - 1] = '\0';
			return 0;
		}
		p += n;
		if (*p == '&')
			p++;
	}
	return -1;
}

/* The connection `url` names on our webhook server (`ours`, the URL of a
 * connection without its id: ".../webhooks/bank/"), into conn; "" when
 * none. */
static void conn_named(const char *url, const char *ours, char conn[BANKS_ID_MAX])
{
	size_t n = strlen(ours), id;

	conn[0] = '\0';
	if (strncmp(url, ours, n) != 0 || strncmp(url + n, "bnk_", 4) != 0)
		return;
	id = strcspn(url + n, "/?#");
	if (id != IDS_ULID_LEN + 4)
		return;
	for (size_t i = 4; i < id; i++)
		if (ids_crockval(url[n + i]) < 0)
			return;
	memcpy(conn, url + n, id);
	conn[id] = '\0';
}

void banks_webhook_judge(const struct banks_conn *c, const struct config *cfg, const char *body,
			 size_t len, struct banks_hook_seen *out)
{
	yajl_val v = NULL, url, chave, criacao;
	char err[128], mine[URL_MAX], base[URL_MAX];
	const char *u;
	size_t ulen, mlen;
	long long ms;

	memset(out, 0, sizeof(*out));
	out->hook = BANKS_HOOK_BAD;
	if (!body || json_parse_object(body, len, &v, err, sizeof(err)) < 0) {
		snprintf(out->err, sizeof(out->err),
			 "the bank's answer is not a JSON object (a WebhookCompleto)");
		goto done;
	}
	url = json_get(v, "webhookUrl");
	chave = json_get(v, "chave");
	criacao = json_get(v, "criacao");
	if (!YAJL_IS_STRING(url) || !url->u.string[0]) {
		snprintf(out->err, sizeof(out->err), "the bank's answer has no webhookUrl string");
		goto done;
	}
	/* the standard's schema names a chave; a bank may leave it out, but
	 * one that names another key answered for another webhook */
	if (chave && (!YAJL_IS_STRING(chave) || strcmp(chave->u.string, c->pix_key) != 0)) {
		snprintf(out->err, sizeof(out->err),
			 "the bank's answer is for another Pix key than %.80s", c->pix_key);
		goto done;
	}
	if (YAJL_IS_STRING(criacao) && strlen(criacao->u.string) < 40 &&
	    timefmt_parse(criacao->u.string, &ms) == 0 && strchr(criacao->u.string, 'T'))
		out->since_ms = ms;
	u = url->u.string;
	ulen = strlen(u);
	banks_webhook_url(mine, sizeof(mine), cfg, c->id, NULL);
	mlen = strlen(mine);
	if (ulen >= URL_MAX) {
		out->hook = BANKS_HOOK_OTHER;
	} else if (c->auth != BANKS_URL_TOKEN) {
		out->hook = strcmp(u, mine) == 0 ? BANKS_HOOK_THIS : BANKS_HOOK_OTHER;
	} else if (strncmp(u, mine, mlen) == 0 &&
		   (u[mlen] == '\0' || u[mlen] == '?' || u[mlen] == '/')) {
		/* ours (a bank may keep /pix in the path): the token decides,
		 * compared as its SHA-256 in constant time */
		const char *query = strchr(u + mlen, '?');
		char token[URL_MAX];
		int same = 0;

		if (query && query_param(query + 1, "hmac", token, sizeof(token)) == 0 &&
		    token[0]) {
			same = ids_sha256_matches(token, strlen(token), c->token_sha);
			OPENSSL_cleanse(token, sizeof(token));
		}
		out->hook = same ? BANKS_HOOK_THIS : BANKS_HOOK_OLD_TOKEN;
	} else {
		out->hook = BANKS_HOOK_OTHER;
	}
	if (out->hook == BANKS_HOOK_OTHER) {
		host_of(u, out->host);
		/* another connection of this pixrelay: the URL of one without its id */
		banks_webhook_url(base, sizeof(base), cfg, "", NULL);
		conn_named(u, base, out->conn);
		if (strcmp(out->conn, c->id) == 0)
			out->conn[0] = '\0';
	}
done:
	yajl_tree_free(v);
}
