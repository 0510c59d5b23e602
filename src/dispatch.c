#include "pixrelay/dispatch.h"

#include "pixrelay/auth.h"
#include "pixrelay/backoff.h"
#include "pixrelay/charges.h"
#include "pixrelay/events.h"
#include "pixrelay/ids.h"
#include "pixrelay/json.h"
#include "pixrelay/log.h"
#include "pixrelay/mem.h"
#include "pixrelay/netaddr.h"
#include "pixrelay/sign.h"
#include "pixrelay/timefmt.h"
#include "pixrelay/validate.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>

#define TICK_MS 200
#define EXPIRY_EVERY_MS 1000
#define LEASE_MARGIN_MS 20000
#define RESPONSE_KEEP 1024
#define HOST_BUSY_DELAY_MS 1000
#define MAX_HOSTS 256
#define SATURATED_MS 5000 /* claim one at a time this long after a host overflowed */

struct host_count {
	char *host;
	unsigned n;
};

/* One curl multi handle, with its connection cache, per environment: a
 * connection opened for a sandbox postback (which may reach any address) is
 * never reused for a production one. */
struct pool {
	struct dispatch *d;
	CURLM *multi;
	struct event *timer;
};

struct dispatch {
	struct event_base *base;
	struct rds *r;
	const struct config *cfg;
	struct pool pools[2]; /* by enum auth_env */
	struct event *tick;   /* every TICK_MS */
	struct event *kick;   /* zero-delay: something was written, look now */
	struct netaddr_list allow;
	struct backoff_policy policy;
	char token[IDS_ULID_LEN + 1]; /* this process's id, the stem of claim tokens */
	unsigned long claims;	      /* claims made, to make each claim's token unique */
	unsigned inflight;	      /* leased and not yet completed */
	uint64_t saturated_until_ms;  /* a host was at its limit with its waiting list full */

	unsigned claiming; /* capacity reserved by claims under way */
	int pumping[2];
	int expiring[2];
	uint64_t last_expiry_ms;
	int next_shard;
	int stopped;
	struct host_count hosts[MAX_HOSTS];
	size_t nhosts;
	/* leased deliveries whose host is at its limit, oldest first; they start
	 * when a slot of their host frees, or go back to the queue (without
	 * spending an attempt) before their lease could run out */
	struct delivery *waiting, *waiting_tail;
	struct delivery *active; /* in curl now (freed by dispatch_free if still there) */
};

struct delivery {
	struct dispatch *d;
	int shard;
	char token[IDS_ULID_LEN + 24]; /* the claim's token: only its holder may complete it */
	struct delivery *prev_active, *next_active; /* in curl now */
	char id[EVENTS_ID_MAX];
	char *url, *body, *account;
	char env[16];
	int attempts, budget_base;
	long long created_ms;
	char *host;
	struct pool *pool;
	CURL *easy;
	struct curl_slist *headers;
	char response[RESPONSE_KEEP + 1];
	size_t response_len;
	long long retry_after_ms;
	int refused_address;
	char refused_ip[64];
	uint64_t start_ms;
	uint64_t waiting_since_ms;
	int released; /* completed as "release": no attempt was made */
	struct delivery *next_waiting;
	char errbuf[CURL_ERROR_SIZE];
};

/* One claim call on one shard. */
struct claim {
	struct dispatch *d;
	int shard;
	unsigned reserved;
	char token[IDS_ULID_LEN + 24];
};

enum claim_reason { CLAIM_DONE, CLAIM_TICK, CLAIM_NEWS };
static void claim_all(struct dispatch *d, enum claim_reason why);
static void start_delivery(struct delivery *dl, struct host_count *hc);

enum dispatch_verdict dispatch_judge(long http_status, int curl_ok)
{
	if (!curl_ok || http_status == 0)
		return DISPATCH_RETRY;
	if (http_status >= 200 && http_status < 300)
		return DISPATCH_OK;
	if (http_status == 410)
		return DISPATCH_STOP;
	return DISPATCH_RETRY;
}

static void delivery_free(struct delivery *dl)
{
	if (dl->easy)
		curl_easy_cleanup(dl->easy);
	curl_slist_free_all(dl->headers);
	free(dl->url);
	free(dl->body);
	free(dl->account);
	free(dl->host);
	free(dl);
}

/* ---- per-host bound ---- */

static struct host_count *host_slot(struct dispatch *d, const char *host)
{
	for (size_t i = 0; i < d->nhosts; i++)
		if (strcmp(d->hosts[i].host, host) == 0)
			return &d->hosts[i];
	if (d->nhosts == MAX_HOSTS)
		return NULL;
	d->hosts[d->nhosts].host = mem_strdup(host);
	d->hosts[d->nhosts].n = 0;
	return &d->hosts[d->nhosts++];
}

static void host_release(struct dispatch *d, const char *host)
{
	for (size_t i = 0; i < d->nhosts; i++) {
		if (strcmp(d->hosts[i].host, host) != 0)
			continue;
		if (--d->hosts[i].n == 0) {
			free(d->hosts[i].host);
			d->hosts[i] = d->hosts[--d->nhosts];
		}
		return;
	}
}

static char *url_host(const char *url)
{
	CURLU *u = curl_url();
	char *host = NULL, *out = NULL;

	if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK)
		out = mem_strdup(host);
	curl_free(host);
	curl_url_cleanup(u);
	return out ? out : mem_strdup("?");
}

/* ---- completion ---- */

static void on_published(void *ud, redisReply *reply, const char *err)
{
}

/* Tell `pixrelay tail` watchers (fire and forget; nobody may be listening). */
static void publish(struct delivery *dl, const char *outcome, long status, const char *error,
		    uint64_t now)
{
	struct dispatch *d = dl->d;
	yajl_gen g = json_gen_new();
	char channel[256], at[25];
	const char *s;
	size_t len;

	timefmt_rfc3339(at, now);
	json_open(g);
	json_str(g, "at");
	json_str(g, at);
	json_str(g, "event");
	json_str(g, dl->id);
	json_str(g, "env");
	json_str(g, dl->env);
	json_str(g, "account");
	json_str(g, dl->account);
	json_str(g, "destination");
	json_str(g, dl->url);
	json_str(g, "attempt");
	json_int(g, dl->attempts);
	json_str(g, "status");
	if (status > 0)
		json_int(g, status);
	else
		json_null(g);
	json_str(g, "outcome");
	json_str(g, outcome);
	json_str(g, "durationMs");
	json_int(g, (long long)(now - dl->start_ms));
	json_str(g, "error");
	json_str_or_null(g, error);
	json_close(g);
	s = json_buf(g, &len);
	snprintf(channel, sizeof(channel), "%sdeliveries", d->cfg->prefix);
	{
		const char *argv[] = {"PUBLISH", channel, s};
		size_t lens[] = {7, strlen(channel), len};
		rds_cmd_argv(d->r, on_published, NULL, 3, argv, lens);
	}
	yajl_gen_free(g);
}

static void on_completed(void *ud, redisReply *reply, const char *err)
{
	struct delivery *dl = ud;

	if (err)
		log_warn("event %s: cannot record the attempt: %s (its lease will run out and it "
			 "will be delivered again)",
			 dl->id, err);
	else if (reply->type == REDIS_REPLY_INTEGER && reply->integer == 0)
		log_warn("event %s: lease lost before the attempt was recorded", dl->id);
	dl->d->inflight--;
	{
		struct dispatch *d = dl->d;
		int released = dl->released;
		delivery_free(dl);
		/* keep the pipeline full while there is work; a release made no
		 * room, and claiming for it would walk a busy host's backlog */
		if (!released)
			claim_all(d, CLAIM_DONE);
	}
}

static void sanitize(char *s)
{
	if (validate_utf8_chars(s, strlen(s)) >= 0)
		return;
	for (; *s; s++)
		if ((unsigned char)*s >= 0x80)
			*s = '?';
}

static void complete(struct delivery *dl, const char *outcome, long long next_ms, long status,
		     const char *error)
{
	struct dispatch *d = dl->d;

	dl->released = strcmp(outcome, "release") == 0;
	char prefix[256], due[300], lease[300], dead[300], next[32], now_s[32], st[24] = "";
	char cap[24], at[25], ttl[24];
	uint64_t now = ids_now_ms();
	yajl_gen g = json_gen_new();
	size_t len;
	const char *entry;

	dl->response[dl->response_len] = '\0';
	sanitize(dl->response);
	json_open(g);
	json_str(g, "at");
	timefmt_rfc3339(at, dl->start_ms);
	json_str(g, at);
	json_str(g, "attempt");
	json_int(g, dl->attempts);
	json_str(g, "durationMs");
	json_int(g, (long long)(now - dl->start_ms));
	json_str(g, "status");
	if (status > 0)
		json_int(g, status);
	else
		json_null(g);
	json_str(g, "error");
	json_str_or_null(g, error);
	json_str(g, "response");
	json_str_or_null(g, dl->response_len ? dl->response : NULL);
	json_str(g, "outcome");
	json_str(g, outcome);
	json_close(g);
	entry = json_buf(g, &len);

	events_shard_prefix(prefix, sizeof(prefix), d->cfg->prefix, dl->shard);
	snprintf(due, sizeof(due), "%sdue", prefix);
	snprintf(lease, sizeof(lease), "%slease", prefix);
	snprintf(dead, sizeof(dead), "%sdead", prefix);
	snprintf(next, sizeof(next), "%lld", next_ms);
	snprintf(now_s, sizeof(now_s), "%llu", (unsigned long long)now);
	if (status > 0)
		snprintf(st, sizeof(st), "%ld", status);
	snprintf(cap, sizeof(cap), "%ld", d->cfg->attempt_log_cap);
	snprintf(ttl, sizeof(ttl), "%ld", d->cfg->event_retention_days * 86400);
	/* before the script: its callback may run at once (at shutdown) and
	 * free dl */
	if (strcmp(outcome, "release") != 0)
		publish(dl, outcome, status, error, now);
	log_info(
	    "delivery event=%s url_host=%s attempt=%d status=%ld outcome=%s duration_ms=%llu%s%s",
	    dl->id, dl->host, dl->attempts, status, outcome,
	    (unsigned long long)(now - dl->start_ms), error ? " error=" : "", error ? error : "");
	{
		const char *argv[] = {due,
				      lease,
				      dead,
				      prefix,
				      dl->id,
				      dl->token,
				      outcome,
				      next,
				      now_s,
				      st,
				      error ? error : "",
				      entry,
				      cap,
				      ttl};
		size_t lens[14];
		for (int i = 0; i < 14; i++)
			lens[i] = strlen(argv[i]);
		lens[11] = len;
		/* the arguments are copied: dl may be gone once this returns */
		rds_script(d->r, on_completed, dl, SCRIPT_EVENT_COMPLETE, 3, 14, argv, lens);
	}
	yajl_gen_free(g);
}

/* A slot of `host` is free: start the oldest delivery waiting for it. */
static void start_waiting(struct dispatch *d, const char *host)
{
	struct delivery **pp = &d->waiting, *prev = NULL;

	for (; *pp; prev = *pp, pp = &(*pp)->next_waiting) {
		struct delivery *dl = *pp;
		struct host_count *hc;
		if (strcmp(dl->host, host) != 0)
			continue;
		hc = host_slot(d, dl->host);
		if (!hc || hc->n >= (unsigned)d->cfg->delivery_per_host)
			return;
		*pp = dl->next_waiting;
		if (d->waiting_tail == dl)
			d->waiting_tail = prev;
		dl->next_waiting = NULL;
		start_delivery(dl, hc);
		return;
	}
}

/* Waiting deliveries that could outlive their lease go back to the queue
 * (all of them when `all`, at shutdown: due at once, for another process). */
static void expire_waiting(struct dispatch *d, int all)
{
	uint64_t now = ids_now_ms();

	while (d->waiting && (all || now - d->waiting->waiting_since_ms >= LEASE_MARGIN_MS / 2)) {
		struct delivery *dl = d->waiting;
		d->waiting = dl->next_waiting;
		if (!d->waiting)
			d->waiting_tail = NULL;
		dl->next_waiting = NULL;
		complete(dl, "release", (long long)now + (all ? 0 : HOST_BUSY_DELAY_MS), 0, NULL);
	}
}

static void finish(struct delivery *dl, CURLcode result)
{
	struct dispatch *d = dl->d;
	long status = 0;
	char error[512] = "";
	long long next_ms = 0;
	uint32_t rnd;

	host_release(d, dl->host);
	start_waiting(d, dl->host);
	curl_easy_getinfo(dl->easy, CURLINFO_RESPONSE_CODE, &status);
	if (dl->refused_address)
		snprintf(error, sizeof(error),
			 "destination address %s is not public; production postbacks may only "
			 "reach public addresses (see destination-allow)",
			 dl->refused_ip);
	else if (result != CURLE_OK)
		snprintf(error, sizeof(error), "%s",
			 dl->errbuf[0] ? dl->errbuf : curl_easy_strerror(result));
	else if (status < 200 || status >= 300)
		snprintf(error, sizeof(error), "HTTP %ld", status);

	switch (dispatch_judge(status, result == CURLE_OK)) {
	case DISPATCH_OK:
		complete(dl, "delivered", 0, status, NULL);
		return;
	case DISPATCH_STOP:
		complete(dl, "dead", 0, status, "410 Gone: the destination asked to stop");
		return;
	case DISPATCH_RETRY:
		break;
	}
	ids_random(&rnd, sizeof(rnd));
	if (backoff_next(&d->policy, dl->attempts - dl->budget_base, dl->created_ms,
			 (long long)ids_now_ms(),
			 (status == 429 || status == 503) ? dl->retry_after_ms : -1, rnd,
			 &next_ms) == BACKOFF_RETRY)
		complete(dl, "retry", next_ms, status, error);
	else
		complete(dl, "dead", 0, status, error);
}

static void active_add(struct delivery *dl)
{
	struct dispatch *d = dl->d;

	dl->prev_active = NULL;
	dl->next_active = d->active;
	if (d->active)
		d->active->prev_active = dl;
	d->active = dl;
}

static void active_remove(struct delivery *dl)
{
	struct dispatch *d = dl->d;

	if (dl->prev_active)
		dl->prev_active->next_active = dl->next_active;
	else if (d->active == dl)
		d->active = dl->next_active;
	if (dl->next_active)
		dl->next_active->prev_active = dl->prev_active;
	dl->prev_active = dl->next_active = NULL;
}

static void check_multi(struct pool *pl)
{
	CURLMsg *msg;
	int left;

	while ((msg = curl_multi_info_read(pl->multi, &left))) {
		struct delivery *dl = NULL;
		if (msg->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&dl);
		curl_multi_remove_handle(pl->multi, msg->easy_handle);
		active_remove(dl);
		finish(dl, msg->data.result);
	}
}

/* ---- curl on libevent ---- */

static void on_socket_event(evutil_socket_t fd, short kind, void *arg)
{
	struct pool *pl = arg;
	int running = 0;
	int action =
	    ((kind & EV_READ) ? CURL_CSELECT_IN : 0) | ((kind & EV_WRITE) ? CURL_CSELECT_OUT : 0);

	curl_multi_socket_action(pl->multi, fd, action, &running);
	check_multi(pl);
}

static void on_curl_timer(evutil_socket_t fd, short kind, void *arg)
{
	struct pool *pl = arg;
	int running = 0;

	curl_multi_socket_action(pl->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	check_multi(pl);
}

static int socket_cb(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
	struct pool *pl = userp;
	struct event *ev = socketp;

	if (what == CURL_POLL_REMOVE) {
		if (ev)
			event_free(ev);
		curl_multi_assign(pl->multi, s, NULL);
		return 0;
	}
	if (ev)
		event_free(ev);
	ev = event_new(pl->d->base, s,
		       ((what & CURL_POLL_IN) ? EV_READ : 0) |
			   ((what & CURL_POLL_OUT) ? EV_WRITE : 0) | EV_PERSIST,
		       on_socket_event, pl);
	event_add(ev, NULL);
	curl_multi_assign(pl->multi, s, ev);
	return 0;
}

static int timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
	struct pool *pl = userp;
	struct timeval tv;

	if (timeout_ms < 0) {
		evtimer_del(pl->timer);
		return 0;
	}
	tv.tv_sec = timeout_ms / 1000;
	tv.tv_usec = (timeout_ms % 1000) * 1000;
	evtimer_add(pl->timer, &tv);
	return 0;
}

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct delivery *dl = userdata;
	size_t n = size * nmemb, room = RESPONSE_KEEP - dl->response_len;

	memcpy(dl->response + dl->response_len, ptr, n < room ? n : room);
	dl->response_len += n < room ? n : room;
	return n; /* the rest is read and dropped */
}

static size_t on_header(char *buf, size_t size, size_t nitems, void *userdata)
{
	struct delivery *dl = userdata;
	size_t n = size * nitems;

	if (n > 12 && strncasecmp(buf, "Retry-After:", 12) == 0) {
		char value[128];
		size_t vl = n - 12 < sizeof(value) - 1 ? n - 12 : sizeof(value) - 1;
		long long ms;
		memcpy(value, buf + 12, vl);
		value[vl] = '\0';
		value[strcspn(value, "\r\n")] = '\0';
		if (backoff_parse_retry_after(value, (long long)(ids_now_ms() / 1000), &ms) == 0)
			dl->retry_after_ms = ms;
	}
	return n;
}

/* Production postbacks may only reach public addresses (or those of
 * destination-allow). Checked twice: on the address curl is about to connect
 * to, after DNS, so that a refused address is never even connected to; and
 * on the connection that is about to carry the request (below), whether new
 * or reused, so that no connection can carry a production request to an
 * address that is not allowed, however it was opened. */
static curl_socket_t on_open_socket(void *clientp, curlsocktype purpose,
				    struct curl_sockaddr *address)
{
	struct delivery *dl = clientp;
	struct dispatch *d = dl->d;
	const struct sockaddr *sa = &address->addr;

	if (strcmp(dl->env, "production") == 0 && !netaddr_is_public(sa) &&
	    !netaddr_list_contains_sa(&d->allow, sa)) {
		dl->refused_address = 1;
		if (sa->sa_family == AF_INET)
			inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr,
				  dl->refused_ip, sizeof(dl->refused_ip));
		else if (sa->sa_family == AF_INET6)
			inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr,
				  dl->refused_ip, sizeof(dl->refused_ip));
		return CURL_SOCKET_BAD;
	}
	return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

static int on_prereq(void *clientp, char *primary_ip, char *local_ip, int primary_port,
		     int local_port)
{
	struct delivery *dl = clientp;

	if (strcmp(dl->env, "production") != 0 || netaddr_ip_is_public(primary_ip) ||
	    netaddr_list_contains_port(&dl->d->allow, primary_ip, primary_port))
		return CURL_PREREQFUNC_OK;
	dl->refused_address = 1;
	snprintf(dl->refused_ip, sizeof(dl->refused_ip), "%s", primary_ip);
	return CURL_PREREQFUNC_ABORT;
}

static void add_header(struct delivery *dl, const char *name, const char *value)
{
	char *h = mem_printf("%s: %s", name, value);
	struct curl_slist *l = curl_slist_append(dl->headers, h);

	if (!l)
		mem_oom(__FILE__, __LINE__);
	dl->headers = l;
	free(h);
}

static void start_request(struct delivery *dl, const char *signing, const char *signing_prev,
			  const char *compat)
{
	struct dispatch *d = dl->d;
	char ts[32], sig[64], sig2[64], *sigs;
	long long now_s = (long long)(ids_now_ms() / 1000);

	dl->start_ms = ids_now_ms();
	dl->easy = curl_easy_init();
	if (!dl->easy)
		mem_oom(__FILE__, __LINE__);
	snprintf(ts, sizeof(ts), "%lld", now_s);
	add_header(dl, "Content-Type", "application/json");
	add_header(dl, "User-Agent", "pixrelay/" PIXRELAY_VERSION);
	add_header(dl, "webhook-id", dl->id);
	add_header(dl, "webhook-timestamp", ts);
	sig[0] = sig2[0] = '\0';
	if (signing && *signing)
		sign_signature(signing, dl->id, now_s, dl->body, strlen(dl->body), sig,
			       sizeof(sig));
	if (signing_prev && *signing_prev)
		sign_signature(signing_prev, dl->id, now_s, dl->body, strlen(dl->body), sig2,
			       sizeof(sig2));
	sigs = mem_printf("%s%s%s", sig, sig[0] && sig2[0] ? " " : "", sig2);
	if (*sigs)
		add_header(dl, "webhook-signature", sigs);
	free(sigs);
	if (compat && *compat)
		add_header(dl, "signature", compat);
	{
		/* no "Expect: 100-continue" round trip before the body */
		struct curl_slist *l = curl_slist_append(dl->headers, "Expect:");
		if (!l)
			mem_oom(__FILE__, __LINE__);
		dl->headers = l;
	}

	curl_easy_setopt(dl->easy, CURLOPT_URL, dl->url);
	curl_easy_setopt(dl->easy, CURLOPT_PRIVATE, dl);
	curl_easy_setopt(dl->easy, CURLOPT_POST, 1L);
	curl_easy_setopt(dl->easy, CURLOPT_POSTFIELDS, dl->body);
	curl_easy_setopt(dl->easy, CURLOPT_POSTFIELDSIZE, (long)strlen(dl->body));
	curl_easy_setopt(dl->easy, CURLOPT_HTTPHEADER, dl->headers);
	curl_easy_setopt(dl->easy, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(dl->easy, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(dl->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(dl->easy, CURLOPT_CONNECTTIMEOUT_MS, d->cfg->delivery_connect_timeout_ms);
	curl_easy_setopt(dl->easy, CURLOPT_TIMEOUT_MS, d->cfg->delivery_timeout_ms);
	curl_easy_setopt(dl->easy, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(dl->easy, CURLOPT_WRITEDATA, dl);
	curl_easy_setopt(dl->easy, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(dl->easy, CURLOPT_HEADERDATA, dl);
	curl_easy_setopt(dl->easy, CURLOPT_OPENSOCKETFUNCTION, on_open_socket);
	curl_easy_setopt(dl->easy, CURLOPT_OPENSOCKETDATA, dl);
	curl_easy_setopt(dl->easy, CURLOPT_PREREQFUNCTION, on_prereq);
	curl_easy_setopt(dl->easy, CURLOPT_PREREQDATA, dl);
	/* never through a proxy from the environment (http_proxy, ...): the
	 * address checks above must see the destination itself */
	curl_easy_setopt(dl->easy, CURLOPT_PROXY, "");
	curl_easy_setopt(dl->easy, CURLOPT_ERRORBUFFER, dl->errbuf);
	dl->pool = &d->pools[strcmp(dl->env, "production") == 0 ? AUTH_PRODUCTION : AUTH_SANDBOX];
	if (curl_multi_add_handle(dl->pool->multi, dl->easy) != CURLM_OK) {
		host_release(d, dl->host);
		start_waiting(d, dl->host);
		complete(dl, "retry", (long long)ids_now_ms() + d->cfg->retry_base_ms, 0,
			 "cannot start the request");
		return;
	}
	active_add(dl);
}

static void on_secrets(void *ud, redisReply *reply, const char *err)
{
	struct delivery *dl = ud;

	if (err) {
		struct dispatch *d = dl->d;
		char *host = mem_strdup(dl->host);
		host_release(d, host);
		complete(dl, "release", (long long)ids_now_ms() + HOST_BUSY_DELAY_MS, 0,
			 "storage unavailable");
		start_waiting(d, host);
		free(host);
		return;
	}
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 3) {
		start_request(dl, NULL, NULL, NULL);
		return;
	}
	start_request(dl, reply->element[0]->str, reply->element[1]->str, reply->element[2]->str);
}

static void begin(struct dispatch *d, const struct claim *c, redisReply **f)
{
	struct delivery *dl = mem_new(struct delivery);
	struct host_count *hc;

	dl->d = d;
	dl->shard = c->shard;
	snprintf(dl->token, sizeof(dl->token), "%s", c->token);
	snprintf(dl->id, sizeof(dl->id), "%s", f[0]->str);
	dl->url = mem_strdup(f[1]->str);
	dl->body = mem_strdup(f[2]->str);
	dl->attempts = atoi(f[3]->str);
	dl->budget_base = atoi(f[4]->str);
	dl->created_ms = strtoll(f[5]->str, NULL, 10);
	dl->account = mem_strdup(f[6]->str);
	snprintf(dl->env, sizeof(dl->env), "%s", f[7]->str);
	dl->retry_after_ms = -1;
	dl->host = url_host(dl->url);
	dl->start_ms = ids_now_ms();
	d->inflight++;
	hc = host_slot(d, dl->host);
	if (!hc) {
		/* too many distinct hosts at once: back in the queue shortly */
		complete(dl, "release", (long long)ids_now_ms() + HOST_BUSY_DELAY_MS, 0, NULL);
		return;
	}
	if (hc->n >= (unsigned)d->cfg->delivery_per_host) {
		/* at most as many waiting as in flight per host: one slow destination
		 * must not hold the capacity other destinations need */
		unsigned queued = 0;
		for (struct delivery *w = d->waiting; w; w = w->next_waiting)
			queued += strcmp(w->host, dl->host) == 0;
		if (queued >= (unsigned)d->cfg->delivery_per_host) {
			/* claims shrink for a while: most of what they bring now would
			 * come back the same way */
			d->saturated_until_ms = ids_now_ms() + SATURATED_MS;
			complete(dl, "release", (long long)ids_now_ms() + HOST_BUSY_DELAY_MS, 0,
				 NULL);
			return;
		}
		dl->waiting_since_ms = ids_now_ms();
		if (d->waiting_tail)
			d->waiting_tail->next_waiting = dl;
		else
			d->waiting = dl;
		d->waiting_tail = dl;
		return;
	}
	start_delivery(dl, hc);
}

/* Take a slot of the host and fetch the account's secrets, then send. */
static void start_delivery(struct delivery *dl, struct host_count *hc)
{
	struct dispatch *d = dl->d;
	char k[300];

	hc->n++;
	dl->start_ms = ids_now_ms();
	snprintf(k, sizeof(k), "%s{%s}:acct:%s", d->cfg->prefix, dl->env, dl->account);
	{
		const char *argv[] = {"HMGET", k, "signing_secret", "signing_secret_prev",
				      "webhook_secret"};
		rds_cmd_argv(d->r, on_secrets, dl, 5, argv, NULL);
	}
}

/* ---- claiming ---- */

static void on_claimed(void *ud, redisReply *reply, const char *err)
{
	struct claim *c = ud;
	struct dispatch *d = c->d;

	d->claiming -= c->reserved;
	if (err) {
		if (rds_ready(d->r))
			log_warn("claim on shard %d failed: %s", c->shard, err);
	} else if (reply->type == REDIS_REPLY_ARRAY) {
		if (reply->elements)
			log_debug("claimed %zu on shard %d", reply->elements / 8, c->shard);
		for (size_t i = 0; i + 8 <= reply->elements; i += 8) {
			int ok = 1;
			for (size_t j = 0; j < 8; j++)
				ok &= reply->element[i + j]->type == REDIS_REPLY_STRING;
			if (ok)
				begin(d, c, reply->element + i);
		}
	}
	free(c);
}

/* Ask every shard for due events, sharing the free capacity among them so
 * that no shard waits for its turn while capacity is left. */
static void claim_all(struct dispatch *d, enum claim_reason why)
{
	unsigned cap = (unsigned)d->cfg->delivery_concurrency;
	char now[32], lease_ms[32];
	long shards = d->cfg->queue_shards;
	unsigned used = d->inflight + d->claiming, share;

	if (d->stopped || !rds_ready(d->r) || used >= cap)
		return;
	/* while a destination is saturated, claim one event per round (each
	 * finished delivery starts a round): it refills the waiting list of the
	 * busy host, or finds work for another one, without a backlog to one
	 * host coming and going between Redis and this process */
	if (ids_now_ms() < d->saturated_until_ms) {
		/* a host is saturated: new events (kicks, pumps) wait; a finished
		 * delivery claims one (to refill the busy host's waiting list or
		 * find work elsewhere); the periodic tick claims in full, so that
		 * other destinations' events behind a busy host's backlog are found
		 * within a tick or two */
		if (why == CLAIM_NEWS)
			return;
		if (why == CLAIM_DONE)
			cap = used + 1;
	}
	share = (cap - used + (unsigned)shards - 1) / (unsigned)shards;
	if (share > 32)
		share = 32;
	snprintf(now, sizeof(now), "%llu", (unsigned long long)ids_now_ms());
	snprintf(lease_ms, sizeof(lease_ms), "%ld",
		 d->cfg->delivery_timeout_ms + d->cfg->delivery_connect_timeout_ms +
		     LEASE_MARGIN_MS);
	for (long i = 0; i < shards; i++) {
		int shard = (int)((d->next_shard + i) % shards);
		char prefix[256], due[300], lease[300], max[16];
		struct claim *c;
		used = d->inflight + d->claiming;
		if (used >= cap)
			break;
		c = mem_new(struct claim);
		c->d = d;
		c->shard = shard;
		c->reserved = share < cap - used ? share : cap - used;
		/* a token per claim: an answer to an older claim of the same event
		 * (this process paused past its lease, then claimed it again) is
		 * refused by event_complete */
		snprintf(c->token, sizeof(c->token), "%s.%lu", d->token, ++d->claims);
		d->claiming += c->reserved;
		events_shard_prefix(prefix, sizeof(prefix), d->cfg->prefix, shard);
		snprintf(due, sizeof(due), "%sdue", prefix);
		snprintf(lease, sizeof(lease), "%slease", prefix);
		snprintf(max, sizeof(max), "%u", c->reserved);
		{
			const char *argv[] = {due, lease, prefix, now, lease_ms, max, c->token};
			rds_script(d->r, on_claimed, c, SCRIPT_EVENT_CLAIM, 2, 7, argv, NULL);
		}
	}
	d->next_shard = (int)((d->next_shard + 1) % shards);
}

/* ---- the tick: outbox pump, expiry, claims ---- */

struct env_job {
	struct dispatch *d;
	int env;
};

static void on_pumped(void *ud, int moved)
{
	struct env_job *j = ud;
	struct dispatch *d = j->d;

	d->pumping[j->env] = 0;
	if (moved)
		log_debug("pump env=%d moved=%d", j->env, moved);
	free(j);
	if (moved > 0)
		claim_all(d, CLAIM_NEWS); /* new events may be due right now */
}

static void on_expired(void *ud, int n)
{
	struct env_job *j = ud;

	j->d->expiring[j->env] = 0;
	if (n > 0)
		dispatch_kick(j->d);
	free(j);
}

static void run_tick(struct dispatch *d, enum claim_reason why)
{
	uint64_t now = ids_now_ms();

	expire_waiting(d, 0);
	if (d->stopped || !rds_ready(d->r))
		return;
	for (int env = 0; env < 2; env++) {
		if (!d->pumping[env]) {
			struct env_job *j = mem_new(struct env_job);
			j->d = d;
			j->env = env;
			d->pumping[env] = 1;
			events_pump(d->r, d->cfg, (enum auth_env)env, on_pumped, j);
		}
		if (!d->expiring[env] && now - d->last_expiry_ms >= EXPIRY_EVERY_MS) {
			struct env_job *j = mem_new(struct env_job);
			j->d = d;
			j->env = env;
			d->expiring[env] = 1;
			charges_expire_due(d->r, d->cfg, (enum auth_env)env, on_expired, j);
		}
	}
	if (now - d->last_expiry_ms >= EXPIRY_EVERY_MS)
		d->last_expiry_ms = now;
	claim_all(d, why);
}

static void on_tick(evutil_socket_t fd, short kind, void *arg)
{
	run_tick(arg, CLAIM_TICK);
}

static void on_kick(evutil_socket_t fd, short kind, void *arg)
{
	run_tick(arg, CLAIM_NEWS);
}

/* A zero-delay timer of its own: activating the periodic tick would move
 * its next run later by one period at every kick. Kicks before it runs
 * coalesce into one tick. */
void dispatch_kick(struct dispatch *d)
{
	struct timeval zero = {0, 0};

	if (d && !d->stopped)
		evtimer_add(d->kick, &zero);
}

struct dispatch *dispatch_new(struct event_base *base, struct rds *r, const struct config *cfg)
{
	struct dispatch *d = mem_new(struct dispatch);
	struct timeval tv = {0, TICK_MS * 1000};
	char err[256];

	d->base = base;
	d->r = r;
	d->cfg = cfg;
	ids_ulid(d->token);
	if (netaddr_list_parse(&d->allow, cfg->destination_allow, err, sizeof(err)) < 0) {
		log_error("destination-allow: %s", err);
		free(d);
		return NULL;
	}
	backoff_policy_default(&d->policy);
	d->policy.base_ms = cfg->retry_base_ms;
	d->policy.factor = (double)cfg->retry_factor_pct / 100.0;
	d->policy.cap_ms = cfg->retry_cap_ms;
	d->policy.max_attempts = (int)cfg->retry_max_attempts;
	d->policy.max_age_ms = cfg->retry_max_age_s * 1000LL;
	for (int i = 0; i < 2; i++) {
		struct pool *pl = &d->pools[i];
		pl->d = d;
		pl->multi = curl_multi_init();
		if (!pl->multi)
			mem_oom(__FILE__, __LINE__);
		curl_multi_setopt(pl->multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
		curl_multi_setopt(pl->multi, CURLMOPT_SOCKETDATA, pl);
		curl_multi_setopt(pl->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
		curl_multi_setopt(pl->multi, CURLMOPT_TIMERDATA, pl);
		pl->timer = evtimer_new(base, on_curl_timer, pl);
	}
	d->tick = event_new(base, -1, EV_PERSIST, on_tick, d);
	d->kick = evtimer_new(base, on_kick, d);
	event_add(d->tick, &tv);
	return d;
}

void dispatch_stop(struct dispatch *d)
{
	if (d) {
		d->stopped = 1;
		event_del(d->tick);
		event_del(d->kick);
		/* those not started yet go back to the queue now */
		expire_waiting(d, 1);
	}
}

unsigned dispatch_inflight(const struct dispatch *d)
{
	/* a claim under way may already hold leases: wait for its answer too */
	return d ? d->inflight + d->claiming : 0;
}

void dispatch_free(struct dispatch *d)
{
	if (!d)
		return;
	/* deliveries still in curl are abandoned: their leases run out */
	while (d->active) {
		struct delivery *dl = d->active;
		curl_multi_remove_handle(dl->pool->multi, dl->easy);
		active_remove(dl);
		delivery_free(dl);
	}
	for (int i = 0; i < 2; i++) {
		curl_multi_cleanup(d->pools[i].multi);
		event_free(d->pools[i].timer);
	}
	event_free(d->tick);
	event_free(d->kick);
	while (d->waiting) {
		struct delivery *dl = d->waiting;
		d->waiting = dl->next_waiting;
		delivery_free(dl);
	}
	for (size_t i = 0; i < d->nhosts; i++)
		free(d->hosts[i].host);
	netaddr_list_deinit(&d->allow);
	free(d);
}
