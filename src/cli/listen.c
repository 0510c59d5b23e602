/* listen: the client side of `pixrelay listen` and `pixrelay trigger`, with
 * blocking libcurl on the command's own thread (no event loop). The SSE
 * parser, fed whatever the server sends and bounded by LISTEN_SSE_MAX;
 * listen_api, one request to a pixrelay API; and the listener: one stream
 * connection at a time, reconnecting with backoff and Last-Event-ID, each
 * event POSTed to --forward-to with its checked headers (re-signed with
 * --signing-secret); the reason of a stream the server ends (a last
 * ": end: " comment) is shown. The arguments are cli_listen.c and cli_trigger.c; the
 * server's side is api/evstream.c. */
#include "pixrelay/cli/listen.h"

#include "pixrelay/pix/event.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/pix/backoff.h"
#include "pixrelay/pix/sign.h"
#include "pixrelay/core/timefmt.h"

#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define SEEN_MAX 1024		/* ids of forwarded events remembered (resume overlap) */
#define ERRBODY_MAX 65536	/* of an answer other than the stream */
#define API_BODY_MAX (16 << 20) /* of an API answer */
#define BACKOFF_MAX_MS 30000	/* between reconnections */
#define STALL_S 60		/* no byte for this long (heartbeats come every 15 s): reconnect */
#define QUEUE_MAX 10000		/* events read, not yet forwarded */

/* ---- Server-Sent Events ---- */

void sse_init(struct sse *p, sse_event_fn on_event, sse_comment_fn on_comment, void *ud)
{
	memset(p, 0, sizeof(*p));
	p->on_event = on_event;
	p->on_comment = on_comment;
	p->ud = ud;
	p->retry_ms = -1;
}

void sse_deinit(struct sse *p)
{
	free(p->line);
	free(p->data);
	p->line = p->data = NULL;
}

static int grow(char **buf, size_t *cap, size_t need)
{
	if (need > LISTEN_SSE_MAX)
		return -1;
	if (need > *cap) {
		size_t c = *cap ? *cap : 256;
		while (c < need)
			c *= 2;
		*buf = mem_realloc(*buf, c);
		*cap = c;
	}
	return 0;
}

/* One line without its end. Returns 0, SSE_STOPPED or -1. */
static int sse_line(struct sse *p, const char *l, size_t n)
{
	const char *colon, *value;
	size_t flen, vlen;

	if (n == 0) {
		int rc = 0;
		if (p->has_data) {
			/* the data's last line feed is not part of it */
			if (p->data_len)
				p->data_len--;
			p->data[p->data_len] = '\0';
			rc = p->on_event(p->ud, p->last_id, p->event, p->data, p->data_len)
				 ? SSE_STOPPED
				 : 0;
		}
		p->has_data = 0;
		p->data_len = 0;
		p->event[0] = '\0';
		return rc;
	}
	if (l[0] == ':') {
		if (p->on_comment) {
			char text[256];
			size_t k = n - 1;
			const char *t = l + 1;
			if (k && *t == ' ') {
				t++;
				k--;
			}
			if (k >= sizeof(text))
				k = sizeof(text) - 1;
			memcpy(text, t, k);
			text[k] = '\0';
			p->on_comment(p->ud, text);
		}
		return 0;
	}
	colon = memchr(l, ':', n);
	flen = colon ? (size_t)(colon - l) : n;
	value = colon ? colon + 1 : l + n;
	vlen = colon ? n - flen - 1 : 0;
	if (vlen && *value == ' ') {
		value++;
		vlen--;
	}
	if (flen == 4 && memcmp(l, "data", 4) == 0) {
		if (grow(&p->data, &p->data_cap, p->data_len + vlen + 2) < 0)
			return -1;
		memcpy(p->data + p->data_len, value, vlen);
		p->data_len += vlen;
		p->data[p->data_len++] = '\n';
		p->has_data = 1;
	} else if (flen == 5 && memcmp(l, "event", 5) == 0) {
		if (vlen >= sizeof(p->event))
			vlen = sizeof(p->event) - 1;
		memcpy(p->event, value, vlen);
		p->event[vlen] = '\0';
	} else if (flen == 2 && memcmp(l, "id", 2) == 0) {
		if (!memchr(value, '\0', vlen) && vlen < sizeof(p->last_id)) {
			memcpy(p->last_id, value, vlen);
			p->last_id[vlen] = '\0';
			snprintf(p->id, sizeof(p->id), "%s", p->last_id);
		}
	} else if (flen == 5 && memcmp(l, "retry", 5) == 0) {
		long v = 0;
		size_t i;
		for (i = 0; i < vlen && value[i] >= '0' && value[i] <= '9' && v < 100000000; i++)
			v = v * 10 + (value[i] - '0');
		if (i == vlen && vlen)
			p->retry_ms = v;
	}
	return 0;
}

int sse_feed(struct sse *p, const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		char c = buf[i];
		int rc;
		if (p->skip_lf) {
			p->skip_lf = 0;
			if (c == '\n')
				continue;
		}
		if (c == '\r' || c == '\n') {
			p->skip_lf = c == '\r';
			rc = sse_line(p, p->line ? p->line : "", p->line_len);
			p->line_len = 0;
			if (rc)
				return rc;
			continue;
		}
		if (grow(&p->line, &p->line_cap, p->line_len + 1) < 0)
			return -1;
		p->line[p->line_len++] = c;
	}
	return 0;
}

/* ---- blocking requests ---- */

struct body {
	char *buf;
	size_t len, cap, max;
	int over;
};

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *ud)
{
	struct body *b = ud;
	size_t n = size * nmemb;

	if (b->len + n + 1 > b->max) {
		b->over = 1;
		return n; /* the rest is dropped */
	}
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->buf = mem_realloc(b->buf, b->cap);
	}
	memcpy(b->buf + b->len, ptr, n);
	b->len += n;
	b->buf[b->len] = '\0';
	return n;
}

struct head_grab {
	char *event_id;
};

static size_t on_head(char *buf, size_t size, size_t nitems, void *ud)
{
	struct head_grab *h = ud;
	size_t n = size * nitems, k = strlen("X-Event-Id:");

	if (h->event_id && n > k && strncasecmp(buf, "X-Event-Id:", k) == 0) {
		const char *v = buf + k;
		size_t vl = n - k;
		while (vl && (*v == ' ' || *v == '\t')) {
			v++;
			vl--;
		}
		while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' '))
			vl--;
		if (vl < EVENT_ID_MAX) {
			memcpy(h->event_id, v, vl);
			h->event_id[vl] = '\0';
		}
	}
	return n;
}

static struct curl_slist *add_header(struct curl_slist *l, const char *name, const char *value)
{
	char *line = mem_printf("%s: %s", name, value);
	struct curl_slist *n = curl_slist_append(l, line);

	free(line);
	if (!n)
		mem_oom(__FILE__, __LINE__);
	return n;
}

static struct curl_slist *auth_headers(struct curl_slist *l, const char *key, const char *account)
{
	char *v = mem_printf("Bearer %s", key);

	l = add_header(l, "Authorization", v);
	mem_wipe(v, strlen(v));
	free(v);
	if (account && *account)
		l = add_header(l, "X-Account-ID", account);
	return l;
}

/* One request with the headers h (taken: freed here). */
static long perform(const char *url, struct curl_slist *h, const char *method, const char *body,
		    long timeout_ms, char **out, char *event_id, char *err, size_t errlen)
{
	CURL *c = curl_easy_init();
	struct body b = {NULL, 0, 0, API_BODY_MAX, 0};
	struct head_grab hg = {event_id};
	char cerr[CURL_ERROR_SIZE] = "";
	long status = 0;
	CURLcode rc;

	if (!c)
		mem_oom(__FILE__, __LINE__);
	if (event_id)
		event_id[0] = '\0';
	*out = NULL;
	if (body) {
		h = add_header(h, "Content-Type", "application/json");
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	}
	h = curl_slist_append(h, "Expect:");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	if (strcmp(method, "POST") == 0 && !body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, 0L);
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "pixrelay-cli/" PIXRELAY_VERSION);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms < 10000 ? timeout_ms : 10000);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_head);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &hg);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	rc = curl_easy_perform(c);
	if (rc != CURLE_OK) {
		snprintf(err, errlen, "%s: %s", url, cerr[0] ? cerr : curl_easy_strerror(rc));
		free(b.buf);
	} else {
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
		*out = b.buf;
	}
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	return status;
}

long listen_api(const char *base_url, const char *api_key, const char *account, const char *method,
		const char *path, const char *body, long timeout_ms, char **out, char *event_id,
		char *err, size_t errlen)
{
	char *url = mem_printf("%s%s", base_url, path);
	long status = perform(url, auth_headers(NULL, api_key, account), method, body, timeout_ms,
			      out, event_id, err, errlen);

	free(url);
	return status;
}

long listen_post_signed(const char *url, const char *body, const char *name, const char *value,
			long timeout_ms, char **out, char *err, size_t errlen)
{
	return perform(url, add_header(NULL, name, value), "POST", body, timeout_ms, out, NULL, err,
		       errlen);
}

/* ---- listen ---- */

struct queued {
	char *data;
	size_t len;
};

struct listener {
	const struct listen_opts *o;
	struct sse sse;
	CURL *stream, *fwd;
	struct queued *queue;
	size_t nqueue, capqueue;
	int overflow;
	long status;  /* of the stream's answer */
	int got_body; /* its first bytes (the greeting) came */
	struct body errbody;
	char hello[256];
	char ended[256]; /* why the server ended the stream (its ": end: " comment) */
	char seen[SEEN_MAX][EVENT_ID_MAX];
	unsigned nseen, seen_at;
	unsigned long forwarded;
};

static volatile sig_atomic_t stop_flag;

static void on_stop_signal(int sig)
{
	stop_flag = 1;
}

static int on_sse_event(void *ud, const char *id, const char *event, const char *data, size_t len)
{
	struct listener *L = ud;

	if (*event && strcmp(event, "message") != 0)
		return 0;
	if (L->nqueue >= QUEUE_MAX) {
		L->overflow = 1;
		return 1;
	}
	if (L->nqueue == L->capqueue) {
		L->capqueue = L->capqueue ? L->capqueue * 2 : 16;
		L->queue = mem_realloc(L->queue, L->capqueue * sizeof(*L->queue));
	}
	L->queue[L->nqueue].data = mem_strndup(data, len);
	L->queue[L->nqueue].len = len;
	L->nqueue++;
	return 0;
}

static void on_sse_comment(void *ud, const char *text)
{
	struct listener *L = ud;

	if (!L->hello[0] && strncmp(text, "pixrelay live events of ", 24) == 0)
		snprintf(L->hello, sizeof(L->hello), "%s", text + 24);
	else if (strncmp(text, "end: ", 5) == 0)
		snprintf(L->ended, sizeof(L->ended), "%s", text + 5);
}

static size_t on_stream_body(char *ptr, size_t size, size_t nmemb, void *ud)
{
	struct listener *L = ud;
	size_t n = size * nmemb;

	if (L->status == 0)
		curl_easy_getinfo(L->stream, CURLINFO_RESPONSE_CODE, &L->status);
	if (L->status != 200)
		return on_body(ptr, size, nmemb, &L->errbody);
	L->got_body = 1;
	return sse_feed(&L->sse, ptr, n) < 0 ? 0 : n;
}

static bool seen_has(const struct listener *L, const char *id)
{
	for (unsigned i = 0; i < L->nseen; i++)
		if (strcmp(L->seen[i], id) == 0)
			return true;
	return false;
}

static void seen_add(struct listener *L, const char *id)
{
	snprintf(L->seen[L->seen_at], EVENT_ID_MAX, "%s", id);
	L->seen_at = (L->seen_at + 1) % SEEN_MAX;
	if (L->nseen < SEEN_MAX)
		L->nseen++;
}

/* A header name the stream may give: a token; a value without CR, LF or NUL. */
static bool header_ok(const char *name, const char *value)
{
	if (!*name || strlen(name) > 64 || strlen(value) > 4096)
		return false;
	for (const char *p = name; *p; p++)
		if (!strchr("!#$%&'*+-.^_`|~", *p) && !(*p >= '0' && *p <= '9') &&
		    !(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z'))
			return false;
	return strpbrk(value, "\r\n") == NULL;
}

static void print_outcome(struct listener *L, const char *id, const char *type, long status,
			  long long ms, const char *error)
{
	char at[25];

	timefmt_rfc3339(at, ids_now_ms());
	if (L->o->json) {
		yajl_gen g = json_gen_new();
		size_t len;
		const char *s;
		json_open(g);
		json_str(g, "at");
		json_str(g, at);
		json_str(g, "event");
		json_str(g, id);
		json_str(g, "type");
		json_str(g, type);
		json_str(g, "url");
		json_str(g, L->o->forward_to);
		json_str(g, "status");
		if (status > 0)
			json_int(g, status);
		else
			json_null(g);
		json_str(g, "durationMs");
		json_int(g, ms);
		json_str(g, "error");
		json_str_or_null(g, error);
		json_close(g);
		s = json_buf(g, &len);
		printf("%.*s\n", (int)len, s);
		yajl_gen_free(g);
	} else if (status > 0) {
		printf("%s  %-21s %s  -> %ld (%lld ms)\n", at, type, id, status, ms);
	} else {
		printf("%s  %-21s %s  -> no answer: %s (%lld ms)\n", at, type, id, error, ms);
	}
	fflush(stdout);
}

/* POST one event (the JSON of its SSE data) to the local URL. */
static void forward(struct listener *L, const char *data, size_t len)
{
	const struct listen_opts *o = L->o;
	yajl_val v = NULL, headers;
	struct curl_slist *h = NULL;
	struct body b = {NULL, 0, 0, 4096, 0};
	const char *id, *type, *body;
	char perr[128], cerr[CURL_ERROR_SIZE] = "";
	uint64_t start;
	long status = 0;
	CURLcode rc;

	if (json_parse_object(data, len, &v, perr, sizeof(perr)) < 0) {
		fprintf(stderr, "pixrelay listen: an event that is not JSON was skipped: %s\n",
			perr);
		return;
	}
	id = YAJL_GET_STRING(json_get(v, "id"));
	type = YAJL_GET_STRING(json_get(v, "type"));
	body = YAJL_GET_STRING(json_get(v, "body"));
	headers = json_get(v, "headers");
	if (!id || !type || !body || !YAJL_IS_OBJECT(headers) || strlen(id) >= EVENT_ID_MAX) {
		fprintf(stderr, "pixrelay listen: an event without id, type, headers or body was "
				"skipped\n");
		goto done;
	}
	if (seen_has(L, id))
		goto done; /* seen before a reconnection */
	seen_add(L, id);
	for (size_t i = 0; i < headers->u.object.len; i++) {
		const char *name = headers->u.object.keys[i];
		const char *value = YAJL_GET_STRING(headers->u.object.values[i]);
		if (!value || !header_ok(name, value))
			continue;
		if (o->signing_secret && (strcasecmp(name, "webhook-timestamp") == 0 ||
					  strcasecmp(name, "webhook-signature") == 0))
			continue;
		h = add_header(h, name, value);
	}
	if (o->signing_secret) {
		long long now_s = (long long)(ids_now_ms() / 1000);
		char ts[32], sig[64];
		snprintf(ts, sizeof(ts), "%lld", now_s);
		h = add_header(h, "webhook-timestamp", ts);
		if (sign_signature(o->signing_secret, id, now_s, body, strlen(body), sig,
				   sizeof(sig)) == 0)
			h = add_header(h, "webhook-signature", sig);
	}
	if (o->signature)
		h = add_header(h, "signature", o->signature);
	h = curl_slist_append(h, "Expect:");
	curl_easy_reset(L->fwd);
	curl_easy_setopt(L->fwd, CURLOPT_URL, o->forward_to);
	curl_easy_setopt(L->fwd, CURLOPT_POST, 1L);
	curl_easy_setopt(L->fwd, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(L->fwd, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	curl_easy_setopt(L->fwd, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(L->fwd, CURLOPT_TIMEOUT_MS, o->timeout_ms);
	curl_easy_setopt(L->fwd, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(L->fwd, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(L->fwd, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(L->fwd, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(L->fwd, CURLOPT_PROTOCOLS_STR, "http,https");
	start = ids_now_ms();
	rc = curl_easy_perform(L->fwd);
	if (rc == CURLE_OK)
		curl_easy_getinfo(L->fwd, CURLINFO_RESPONSE_CODE, &status);
	print_outcome(L, id, type, status, (long long)(ids_now_ms() - start),
		      rc == CURLE_OK ? NULL : (cerr[0] ? cerr : curl_easy_strerror(rc)));
	L->forwarded++;
	free(b.buf);
	curl_slist_free_all(h);
done:
	yajl_tree_free(v);
}

static void drain(struct listener *L)
{
	for (size_t i = 0; i < L->nqueue; i++) {
		if (!stop_flag &&
		    (L->o->max_events <= 0 || L->forwarded < (unsigned long)L->o->max_events))
			forward(L, L->queue[i].data, L->queue[i].len);
		free(L->queue[i].data);
	}
	L->nqueue = 0;
}

/* The server's message from an error answer (the envelope's "error"). */
static void print_refusal(struct listener *L, const char *url)
{
	yajl_val v = NULL;
	char perr[64];
	const char *msg = NULL;

	if (L->errbody.buf &&
	    json_parse_object(L->errbody.buf, L->errbody.len, &v, perr, sizeof(perr)) == 0)
		msg = YAJL_GET_STRING(json_get(v, "error"));
	fprintf(stderr, "pixrelay listen: %s answered %ld: %s\n", url, L->status,
		msg ? msg : "(no message)");
	yajl_tree_free(v);
}

/* One connection to the stream, read until it ends. Returns 0 when it
 * ended (reconnect), 1 when the server refused in a way retrying cannot fix,
 * 2 when we were asked to stop. */
static int listen_once(struct listener *L, CURLM *multi, CURL *c, const char *url, int *connected)
{
	const struct listen_opts *o = L->o;
	struct curl_slist *h = NULL;
	char cerr[CURL_ERROR_SIZE] = "";
	int running = 1, rc = 0, announced = 0;
	CURLcode result = CURLE_OK;

	L->status = 0;
	L->got_body = 0;
	L->ended[0] = '\0';
	free(L->errbody.buf);
	memset(&L->errbody, 0, sizeof(L->errbody));
	L->errbody.max = ERRBODY_MAX;
	L->stream = c;
	h = auth_headers(h, o->api_key, o->account);
	h = add_header(h, "Accept", "text/event-stream");
	if (L->sse.last_id[0])
		h = add_header(h, "Last-Event-ID", L->sse.last_id);
	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "pixrelay-listen/" PIXRELAY_VERSION);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_stream_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, (long)STALL_S);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_multi_add_handle(multi, c);
	while (running && !stop_flag) {
		CURLMsg *m;
		int left;
		curl_multi_perform(multi, &running);
		if (L->status == 0)
			curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &L->status);
		if (L->status == 200 && L->got_body && !announced) {
			announced = 1;
			*connected = 1;
			fprintf(stderr,
				"pixrelay listen: connected to %s%s%s; forwarding to %s (Ctrl-C to "
				"stop)\n",
				url, L->hello[0] ? ": " : "", L->hello, o->forward_to);
		}
		drain(L);
		if (o->max_events > 0 && L->forwarded >= (unsigned long)o->max_events) {
			rc = 2;
			break;
		}
		while ((m = curl_multi_info_read(multi, &left)))
			if (m->msg == CURLMSG_DONE)
				result = m->data.result;
		if (running)
			curl_multi_poll(multi, NULL, 0, 200, NULL);
	}
	curl_multi_remove_handle(multi, c);
	curl_slist_free_all(h);
	drain(L);
	if (stop_flag || rc == 2)
		return 2;
	if (L->overflow) {
		fprintf(stderr, "pixrelay listen: more than %d events waiting; reconnecting\n",
			QUEUE_MAX);
		L->overflow = 0;
		return 0;
	}
	if (L->status && L->status != 200) {
		print_refusal(L, url);
		if (L->status == 400 || L->status == 401 || L->status == 403 || L->status == 404 ||
		    L->status == 405)
			return 1;
		return 0;
	}
	if (result != CURLE_OK && L->status != 200)
		fprintf(stderr, "pixrelay listen: cannot reach %s: %s\n", url,
			cerr[0] ? cerr : curl_easy_strerror(result));
	else if (result == CURLE_OK && L->ended[0])
		fprintf(stderr, "pixrelay listen: the stream ended (closed by the server: %s)\n",
			L->ended);
	else
		fprintf(stderr, "pixrelay listen: the stream ended (%s)\n",
			result == CURLE_OK ? "closed by the server"
					   : (cerr[0] ? cerr : curl_easy_strerror(result)));
	return 0;
}

int listen_run(const struct listen_opts *o)
{
	struct listener *L = mem_new(struct listener);
	struct sigaction sa;
	CURLM *multi = curl_multi_init();
	CURL *c = curl_easy_init();
	char *url;
	long backoff_ms = 500;
	int rc = 0;

	L->o = o;
	L->fwd = curl_easy_init();
	if (!multi || !c || !L->fwd)
		mem_oom(__FILE__, __LINE__);
	sse_init(&L->sse, on_sse_event, on_sse_comment, L);
	if (o->since && *o->since) {
		char *esc = curl_easy_escape(c, o->since, 0);
		url = mem_printf("%s/events/stream?since=%s", o->base_url, esc);
		curl_free(esc);
	} else {
		url = mem_printf("%s/events/stream", o->base_url);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	stop_flag = 0;
	for (;;) {
		int connected = 0, r = listen_once(L, multi, c, url, &connected);
		if (r == 2)
			break;
		if (r == 1) {
			rc = 1;
			break;
		}
		if (connected)
			backoff_ms = 500;
		fprintf(stderr, "pixrelay listen: reconnecting in %.1f s%s%s\n",
			(double)backoff_ms / 1000.0, L->sse.last_id[0] ? ", resuming after " : "",
			L->sse.last_id);
		for (long waited = 0; waited < backoff_ms && !stop_flag; waited += 50) {
			struct timespec ts = {0, 50 * 1000000L};
			nanosleep(&ts, NULL);
		}
		if (stop_flag)
			break;
		backoff_ms = backoff_double(backoff_ms, BACKOFF_MAX_MS);
	}
	if (!o->json)
		fprintf(stderr, "pixrelay listen: %lu events forwarded\n", L->forwarded);
	sse_deinit(&L->sse);
	free(L->queue);
	free(L->errbody.buf);
	curl_easy_cleanup(L->fwd);
	curl_easy_cleanup(c);
	curl_multi_cleanup(multi);
	free(url);
	free(L);
	return rc;
}
