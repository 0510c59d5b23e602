/* bankapi: the client of a merchant's bank (API Pix over mutual TLS, with
 * OAuth2 client-credentials tokens), on curl's multi interface driven by
 * the loop (curlev.c). A call waits for its connection's token when there
 * is none (one fetch for every call that waits), then goes out with it; a
 * 401 sends it once more with a fresh token. What the calls are for
 * (charges created at the bank, refunds, the webhook's registration, the
 * reconciliation) is their callers'. */
#include "pixrelay/relay/bankapi.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/relay/curlev.h"

#include <curl/curl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TOKEN_MAX 4096	/* characters of an access token */
#define EXCERPT_MAX 160 /* of a bank's answer quoted in an error */
#define KEEP_CONNECTIONS 16

enum kind { CALL_API, CALL_TOKEN };

/* What the client knows of one connection. */
struct conn {
	struct conn *next;
	char id[40];
	char *token;
	unsigned char creds[32]; /* the SHA-256 of the credentials the token was got with */
	long long expires_ms;
	int fetching;	      /* a token fetch is in flight */
	struct call *waiting; /* calls waiting for it */
	long long token_ms, call_ms, error_ms;
	char error[400];
	long long told_ms, told_error_ms; /* what the health hook was last told */
	int told_call;			  /* ... a call among it */
};

struct call {
	struct call *next;		    /* among the waiting calls of a connection */
	struct call *live_prev, *live_next; /* among the calls in flight */
	struct bankapi *b;
	enum kind kind;
	struct bank_creds c;
	char *method, *path, *body;
	char *extra; /* one more header of this call ("Name: value"), or NULL */
	bankapi_fn cb;
	void *ud;
	int retried;
	int token_only; /* bankapi_check: answered once a token is at hand */
	CURL *easy;
	struct curl_slist *headers;
	char *resp;
	size_t len, cap;
	int too_large;
};

struct bankapi {
	bankapi_health_fn health;
	void *health_ud;
	struct curlev *pool;
	long timeout_ms;
	struct conn *conns;
	struct call *live; /* in the multi handle */
};

static struct conn *conn_of(struct bankapi *b, const char *id)
{
	struct conn *c;

	for (c = b->conns; c; c = c->next)
		if (strcmp(c->id, id) == 0)
			return c;
	c = mem_new(struct conn);
	snprintf(c->id, sizeof(c->id), "%s", id);
	c->next = b->conns;
	b->conns = c;
	return c;
}

#define HEALTH_EVERY_MS 60000 /* the hook is told at most this often, but of a new error */

/* Tell the health hook what c is now, when it is news. */
static void tell(struct bankapi *b, struct conn *c)
{
	long long now = (long long)ids_now_ms();
	struct bankapi_state st;

	if (!b->health || (c->error_ms <= c->told_error_ms && now - c->told_ms < HEALTH_EVERY_MS &&
			   (c->told_call || !c->call_ms)))
		return;
	c->told_ms = now;
	c->told_call = c->call_ms != 0;
	c->told_error_ms = c->error_ms;
	st = (struct bankapi_state){c->token_ms, c->call_ms, c->error_ms, c->error};
	b->health(b->health_ud, c->id, &st);
}

static void note_error(struct conn *c, const char *err)
{
	c->error_ms = (long long)ids_now_ms();
	snprintf(c->error, sizeof(c->error), "%s", err);
}

void bankapi_on_health(struct bankapi *b, bankapi_health_fn fn, void *ud)
{
	b->health = fn;
	b->health_ud = ud;
}

static void call_free(struct call *k)
{
	if (k->headers) {
		/* the Authorization header held a token */
		for (struct curl_slist *h = k->headers; h; h = h->next)
			mem_wipe(h->data, strlen(h->data));
		curl_slist_free_all(k->headers);
	}
	if (k->easy)
		curlev_release(k->b ? k->b->pool : NULL, k->easy);
	bank_creds_wipe(&k->c);
	free(k->method);
	free(k->path);
	free(k->extra);
	mem_free_wiped(k->body);
	free(k->resp);
	free(k);
}

static void finish(struct call *k, long status, const char *body, const char *err)
{
	k->cb(k->ud, status, body, err);
	call_free(k);
}

/* A short, printable excerpt of an answer, for an error message. */
static void excerpt(char *out, size_t size, const char *body)
{
	size_t n = 0;

	for (const char *p = body ? body : ""; *p && n + 1 < size && n < EXCERPT_MAX; p++)
		out[n++] = (*p >= ' ' && *p < 0x7f) ? *p : ' ';
	out[n] = '\0';
}

/* Append at most `max` bytes of `s` (UTF-8 from a parsed JSON string) to
 * out at *n, cut at a character, control characters as spaces. */
static void append_text(char *out, size_t size, size_t *n, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t used = 0;

	while (*p && used < max) {
		size_t len = *p < 0x80 ? 1 : *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : 2;
		int control = *p < ' ' || *p == 0x7f || (*p == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0);

		if (used + len > max || *n + len + 1 > size)
			break;
		if (control) {
			out[(*n)++] = ' ';
		} else {
			for (size_t i = 0; i < len && p[i]; i++)
				out[(*n)++] = (char)p[i];
		}
		used += len;
		for (size_t i = 0; i < len && *p; i++)
			p++;
	}
	out[*n] = '\0';
}

void bankapi_problem(char *out, size_t size, long status, const char *body)
{
	yajl_val v = NULL, viol;
	char err[64];
	const char *detail = NULL;
	size_t n = 0, shown = 0;

	if (size == 0)
		return;
	snprintf(out, size, "HTTP %ld", status);
	n = strlen(out);
	if (!body || json_parse_object(body, strlen(body), &v, err, sizeof(err)) < 0) {
		char ex[EXCERPT_MAX + 1];

		excerpt(ex, sizeof(ex), body);
		if (ex[0]) {
			append_text(out, size, &n, " ", 1);
			append_text(out, size, &n, ex, EXCERPT_MAX);
		}
		return;
	}
	detail = YAJL_GET_STRING(json_get(v, "detail"));
	if (!detail || !*detail)
		detail = YAJL_GET_STRING(json_get(v, "title"));
	if (detail && *detail) {
		append_text(out, size, &n, " ", 1);
		append_text(out, size, &n, detail, 200);
	}
	viol = json_get(v, "violacoes");
	for (size_t i = 0; YAJL_IS_ARRAY(viol) && i < viol->u.array.len && shown < 3; i++) {
		yajl_val e = viol->u.array.values[i];
		const char *why = YAJL_GET_STRING(json_get(e, "razao"));
		const char *where = YAJL_GET_STRING(json_get(e, "propriedade"));

		int again = why && detail && strcmp(why, detail) == 0; /* only where, then */

		if (!why || !*why || (again && (!where || !*where)))
			continue;
		append_text(out, size, &n, shown ? "; " : " (", 2);
		if (where && *where)
			append_text(out, size, &n, where, 60);
		if (where && *where && !again)
			append_text(out, size, &n, ": ", 2);
		if (!again)
			append_text(out, size, &n, why, 120);
		shown++;
	}
	if (shown)
		append_text(out, size, &n, ")", 1);
	yajl_tree_free(v);
}

/* The token endpoint's refusal in one line: "token: HTTP 401
 * invalid_client: <error_description>" of RFC 6749's error answer, else
 * "token: HTTP 401 <a printable excerpt of the body>". */
static void token_problem(char *out, size_t size, long status, const char *body)
{
	yajl_val v = NULL;
	const char *error = NULL, *desc = NULL;
	char perr[64];
	size_t n;

	snprintf(out, size, "token: HTTP %ld", status);
	n = strlen(out);
	if (body && json_parse_object(body, strlen(body), &v, perr, sizeof(perr)) == 0) {
		error = YAJL_GET_STRING(json_get(v, "error"));
		desc = YAJL_GET_STRING(json_get(v, "error_description"));
	}
	if (error && *error) {
		append_text(out, size, &n, " ", 1);
		append_text(out, size, &n, error, 60);
		if (desc && *desc) {
			append_text(out, size, &n, ": ", 2);
			append_text(out, size, &n, desc, 200);
		}
	} else {
		char ex[EXCERPT_MAX + 1];

		excerpt(ex, sizeof(ex), body);
		if (ex[0]) {
			append_text(out, size, &n, " ", 1);
			append_text(out, size, &n, ex, EXCERPT_MAX);
		}
	}
	yajl_tree_free(v);
}

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct call *k = userdata;
	size_t n = size * nmemb;

	if (k->len + n > (size_t)BANKAPI_BODY_MAX) {
		k->too_large = 1;
		return 0;
	}
	if (k->len + n + 1 > k->cap) {
		k->cap = (k->len + n + 1) * 2;
		k->resp = mem_realloc(k->resp, k->cap);
	}
	memcpy(k->resp + k->len, ptr, n);
	k->len += n;
	k->resp[k->len] = '\0';
	return n;
}

static void live_add(struct bankapi *b, struct call *k)
{
	k->live_prev = NULL;
	k->live_next = b->live;
	if (b->live)
		b->live->live_prev = k;
	b->live = k;
}

static void live_remove(struct bankapi *b, struct call *k)
{
	if (k->live_prev)
		k->live_prev->live_next = k->live_next;
	else
		b->live = k->live_next;
	if (k->live_next)
		k->live_next->live_prev = k->live_prev;
	k->live_prev = k->live_next = NULL;
}

static void start(struct call *k);
static void fetch_token(struct bankapi *b, struct conn *c, struct call *first);

/* What a token is got with and for, as one SHA-256: credentials given
 * again with another API URL, client, secret, scope or certificate
 * (`pixrelay bank credentials`) get a token of their own at their next
 * call. */
static void creds_print(const struct bank_creds *c, unsigned char out[32])
{
	const char *const parts[] = {c->api_url, c->token_url, c->client_id, c->client_secret,
				     c->scope,	 c->cert_pem,  c->key_pem};
	EVP_MD_CTX *x = EVP_MD_CTX_new();

	if (!x)
		mem_oom(__FILE__, __LINE__);
	EVP_DigestInit_ex(x, EVP_sha256(), NULL);
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		const char *s = parts[i] ? parts[i] : "";

		/* with its NUL: ("ab", "c") is not ("a", "bc") */
		EVP_DigestUpdate(x, s, strlen(s) + 1);
	}
	EVP_DigestFinal_ex(x, out, NULL);
	EVP_MD_CTX_free(x);
}

/* Set up the easy handle of k (mTLS, timeouts, the body) and add it. */
static void send_call(struct call *k, const char *url, const char *token)
{
	struct bankapi *b = k->b;
	struct curl_blob cert = {k->c.cert_pem, k->c.cert_pem ? strlen(k->c.cert_pem) : 0,
				 CURL_BLOB_COPY};
	struct curl_blob key = {k->c.key_pem, k->c.key_pem ? strlen(k->c.key_pem) : 0,
				CURL_BLOB_COPY};
	struct curl_blob ca = {k->c.bank_ca_pem, k->c.bank_ca_pem ? strlen(k->c.bank_ca_pem) : 0,
			       CURL_BLOB_COPY};
	CURL *e = curlev_easy(b->pool);

	k->easy = e;
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "https");
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, b->timeout_ms);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
			 b->timeout_ms < 5000 ? b->timeout_ms : 5000L);
	curl_easy_setopt(e, CURLOPT_PRIVATE, k);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, k);
	curl_easy_setopt(e, CURLOPT_USERAGENT, "pixrelay/" PIXRELAY_VERSION);
	if (k->c.cert_pem && k->c.key_pem) {
		curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &cert);
		curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
		curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &key);
		curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
	}
	if (k->c.bank_ca_pem)
		curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &ca);
	k->headers = curl_slist_append(NULL, "Accept: application/json");
	if (k->kind == CALL_TOKEN) {
		/* the standard's OAuth2 call: the scopes asked for, never the
		 * extras of the API's calls */
		char *scope = k->c.scope && *k->c.scope ? bank_creds_escape(k->c.scope) : NULL;
		char *form = scope ? mem_printf("grant_type=client_credentials&scope=%s", scope)
				   : mem_strdup("grant_type=client_credentials");

		k->headers = curl_slist_append(k->headers,
					       "Content-Type: application/x-www-form-urlencoded");
		curl_easy_setopt(e, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(e, CURLOPT_USERNAME, k->c.client_id ? k->c.client_id : "");
		curl_easy_setopt(e, CURLOPT_PASSWORD, k->c.client_secret ? k->c.client_secret : "");
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)strlen(form));
		curl_easy_setopt(e, CURLOPT_COPYPOSTFIELDS, form);
		free(form);
		free(scope);
	} else {
		/* a provider's fixed header, or the bank's OAuth2 token */
		char *auth = k->c.key_header ? mem_strdup(k->c.key_header)
					     : mem_printf("Authorization: Bearer %s", token);
		k->headers = curl_slist_append(k->headers, auth);
		mem_wipe(auth, strlen(auth));
		free(auth);
		/* the bank's own extras (an application key...), on every call */
		for (const char *h = k->c.headers; h && *h;) {
			const char *end = strchr(h, '\n');
			char *one = mem_strndup(h, end ? (size_t)(end - h) : strlen(h));

			k->headers = curl_slist_append(k->headers, one);
			mem_wipe(one, strlen(one));
			free(one);
			h = end ? end + 1 : h + strlen(h);
		}
		if (k->extra)
			k->headers = curl_slist_append(k->headers, k->extra);
		if (k->body) {
			k->headers =
			    curl_slist_append(k->headers, "Content-Type: application/json");
			curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)strlen(k->body));
			curl_easy_setopt(e, CURLOPT_COPYPOSTFIELDS, k->body);
		}
		if (strcmp(k->method, "GET") == 0)
			curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
		else
			curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, k->method);
	}
	if (!k->headers)
		mem_oom(__FILE__, __LINE__);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, k->headers);
	k->len = 0;
	k->too_large = 0;
	if (curlev_add(b->pool, e) < 0) {
		k->easy = NULL;
		curlev_release(b->pool, e);
		if (k->kind == CALL_TOKEN) {
			/* fail the waiters through the token path */
			struct conn *c = conn_of(b, k->c.conn);
			struct call *w = c->waiting;
			c->fetching = 0;
			c->waiting = NULL;
			note_error(c, "the HTTP client refused the request");
			while (w) {
				struct call *nx = w->next;
				finish(w, 0, NULL, "bank: the HTTP client refused the request");
				w = nx;
			}
			call_free(k);
			return;
		}
		finish(k, 0, NULL, "bank: the HTTP client refused the request");
		return;
	}
	live_add(b, k);
}

int bankapi_parse_token(const char *body, size_t len, char **token, long long *ttl_ms, char *err,
			size_t errlen)
{
	yajl_val v = NULL, t, type, exp;
	int64_t secs = 300;
	int rc = -1;

	if (json_parse_object(body, len, &v, err, errlen) < 0)
		return -1;
	t = json_get(v, "access_token");
	type = json_get(v, "token_type");
	exp = json_get(v, "expires_in");
	if (!t || !YAJL_IS_STRING(t) || !*t->u.string || strlen(t->u.string) > TOKEN_MAX ||
	    strcspn(t->u.string, " \t\r\n\"") != strlen(t->u.string)) {
		snprintf(err, errlen, "the token answer has no usable access_token");
		goto done;
	}
	if (type && (!YAJL_IS_STRING(type) || strcasecmp(type->u.string, "bearer") != 0)) {
		snprintf(err, errlen, "the token is not a Bearer token");
		goto done;
	}
	if (exp && (!json_is_int64(exp, &secs) || secs < 1 || secs > 86400 * 30)) {
		snprintf(err, errlen, "the token answer's expires_in is not 1 to 2592000 seconds");
		goto done;
	}
	*token = mem_strdup(t->u.string);
	*ttl_ms = secs * 1000;
	rc = 0;
done:
	yajl_tree_free(v);
	return rc;
}

static void token_done(struct call *k, long status, CURLcode result)
{
	struct bankapi *b = k->b;
	struct conn *c = conn_of(b, k->c.conn);
	struct call *w = c->waiting;
	char err[320] = "";
	char *token = NULL;
	long long ttl = 0;

	c->fetching = 0;
	c->waiting = NULL;
	if (result != CURLE_OK)
		snprintf(err, sizeof(err), "token: %s",
			 k->too_large ? "answer too large" : curl_easy_strerror(result));
	else if (status != 200)
		token_problem(err, sizeof(err), status, k->resp);
	else if (bankapi_parse_token(k->resp ? k->resp : "", k->len, &token, &ttl, err + 7,
				     sizeof(err) - 7) < 0)
		memcpy(err, "token: ", 7);
	if (err[0]) {
		note_error(c, err);
		tell(k->b, c);
		while (w) {
			struct call *nx = w->next;
			char msg[360];
			snprintf(msg, sizeof(msg), "bank %s", err);
			finish(w, 0, NULL, msg);
			w = nx;
		}
	} else {
		mem_free_wiped(c->token);
		c->token = token;
		creds_print(&k->c, c->creds);
		c->token_ms = (long long)ids_now_ms();
		c->expires_ms = c->token_ms + ttl - BANKAPI_TOKEN_MARGIN_MS;
		if (c->expires_ms < c->token_ms + ttl / 2)
			c->expires_ms = c->token_ms + ttl / 2;
		tell(k->b, c);
		while (w) {
			struct call *nx = w->next;
			w->next = NULL;
			start(w);
			w = nx;
		}
	}
	call_free(k);
}

static void api_done(struct call *k, long status, CURLcode result)
{
	struct bankapi *b = k->b;
	struct conn *c = conn_of(b, k->c.conn);
	char err[320];

	c->call_ms = (long long)ids_now_ms();
	if (result != CURLE_OK) {
		snprintf(err, sizeof(err), "bank: %s",
			 k->too_large ? "answer too large" : curl_easy_strerror(result));
		note_error(c, err);
		tell(b, c);
		finish(k, 0, NULL, err);
		return;
	}
	if (status == 401 && !k->retried && !k->c.key_header) {
		/* a token the bank dropped before its time: one more, once */
		k->retried = 1;
		mem_free_wiped(c->token);
		c->token = NULL;
		c->expires_ms = 0;
		curlev_release(b->pool, k->easy);
		k->easy = NULL;
		if (k->headers) {
			for (struct curl_slist *h = k->headers; h; h = h->next)
				mem_wipe(h->data, strlen(h->data));
			curl_slist_free_all(k->headers);
			k->headers = NULL;
		}
		start(k);
		return;
	}
	if (status >= 400) {
		char ex[EXCERPT_MAX + 1];
		excerpt(ex, sizeof(ex), k->resp);
		snprintf(err, sizeof(err), "bank: %s %s: HTTP %ld %s", k->method, k->path, status,
			 ex);
		note_error(c, err);
	}
	tell(b, c);
	finish(k, status, k->resp, NULL);
}

static void on_done(void *ud, CURL *easy, CURLcode result)
{
	struct bankapi *b = ud;
	struct call *k = NULL;
	long status = 0;

	curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&k);
	curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
	live_remove(b, k);
	if (k->kind == CALL_TOKEN)
		token_done(k, status, result);
	else
		api_done(k, status, result);
}

/* Send a call now when its connection has a token, else wait for one. */
static void start(struct call *k)
{
	struct conn *c = conn_of(k->b, k->c.conn);
	unsigned char print[32];
	char *url;

	if (k->c.key_header) {
		/* a provider's connection: no token to wait for */
		url = mem_printf("%s%s", k->c.api_url, k->path);
		send_call(k, url, NULL);
		free(url);
		return;
	}
	creds_print(&k->c, print);
	if (c->token && CRYPTO_memcmp(print, c->creds, sizeof(print)) != 0) {
		/* not the credentials its token was got with */
		mem_free_wiped(c->token);
		c->token = NULL;
		c->expires_ms = 0;
	}
	if (!c->token || (long long)ids_now_ms() >= c->expires_ms) {
		k->next = c->waiting;
		c->waiting = k;
		if (!c->fetching)
			fetch_token(k->b, c, k);
		return;
	}
	if (k->token_only) {
		finish(k, 200, NULL, NULL);
		return;
	}
	if (k->c.query && *k->c.query)
		url = mem_printf("%s%s%c%s", k->c.api_url, k->path,
				 strchr(k->path, '?') ? '&' : '?', k->c.query);
	else
		url = mem_printf("%s%s", k->c.api_url, k->path);
	send_call(k, url, c->token);
	mem_wipe(url, strlen(url));
	free(url);
}

static void fetch_token(struct bankapi *b, struct conn *c, struct call *first)
{
	struct call *t = mem_new(struct call);

	t->b = b;
	t->kind = CALL_TOKEN;
	bank_creds_copy(&t->c, &first->c);
	t->method = mem_strdup("POST");
	t->path = mem_strdup("");
	c->fetching = 1;
	send_call(t, t->c.token_url, NULL);
}

struct bankapi *bankapi_new(struct event_base *base, long timeout_ms)
{
	struct bankapi *b = mem_new(struct bankapi);

	b->timeout_ms = timeout_ms > 0 ? timeout_ms : 10000;
	b->pool = curlev_new_pool(base, KEEP_CONNECTIONS, on_done, b);
	return b;
}

void bankapi_free(struct bankapi *b)
{
	if (!b)
		return;
	while (b->live) {
		struct call *k = b->live;
		live_remove(b, k);
		curlev_remove(b->pool, k->easy);
		if (k->kind == CALL_TOKEN) {
			call_free(k);
			continue;
		}
		finish(k, 0, NULL, "bank client closed");
	}
	while (b->conns) {
		struct conn *c = b->conns;
		b->conns = c->next;
		while (c->waiting) {
			struct call *w = c->waiting;
			c->waiting = w->next;
			finish(w, 0, NULL, "bank client closed");
		}
		mem_free_wiped(c->token);
		free(c);
	}
	curlev_free(b->pool);
	free(b);
}

void bankapi_call(struct bankapi *b, const struct bank_creds *c, const char *method,
		  const char *path, const char *body, bankapi_fn cb, void *ud)
{
	bankapi_call_with(b, c, method, path, body, NULL, cb, ud);
}

void bankapi_call_with(struct bankapi *b, const struct bank_creds *c, const char *method,
		       const char *path, const char *body, const char *header, bankapi_fn cb,
		       void *ud)
{
	struct call *k = mem_new(struct call);

	k->extra = mem_strdup_or_null(header);
	k->b = b;
	k->kind = CALL_API;
	bank_creds_copy(&k->c, c);
	k->method = mem_strdup(method);
	k->path = mem_strdup(path);
	k->body = mem_strdup_or_null(body);
	k->cb = cb;
	k->ud = ud;
	if (!k->c.api_url || (!k->c.token_url && !k->c.key_header)) {
		finish(k, 0, NULL, "bank: the connection has no API credentials");
		return;
	}
	start(k);
}

void bankapi_check(struct bankapi *b, const struct bank_creds *c, bankapi_fn cb, void *ud)
{
	struct call *k = mem_new(struct call);

	k->b = b;
	k->kind = CALL_API;
	k->token_only = 1;
	bank_creds_copy(&k->c, c);
	k->method = mem_strdup("POST");
	k->path = mem_strdup("");
	k->cb = cb;
	k->ud = ud;
	if (!k->c.token_url) {
		finish(k, 0, NULL, "bank: the connection has no API credentials");
		return;
	}
	bankapi_forget(b, k->c.conn);
	start(k);
}

void bankapi_forget(struct bankapi *b, const char *conn)
{
	struct conn *c = conn_of(b, conn);

	mem_free_wiped(c->token);
	c->token = NULL;
	c->expires_ms = 0;
}

void bankapi_state(const struct bankapi *b, const char *conn, struct bankapi_state *out)
{
	const struct conn *c;

	memset(out, 0, sizeof(*out));
	out->error = "";
	for (c = b->conns; c; c = c->next)
		if (strcmp(c->id, conn) == 0) {
			out->token_ms = c->token_ms;
			out->call_ms = c->call_ms;
			out->error_ms = c->error_ms;
			out->error = c->error;
			return;
		}
}

/* The bank's refusal: bankapi_problem's line after what was refused. */
void bankapi_refusal(char *out, size_t size, const char *what, long status, const char *body)
{
	char line[512];

	bankapi_problem(line, sizeof(line), status, body);
	snprintf(out, size, "the bank refused the %s: %s", what, line);
}
