/* delivery: one postback in flight, from the slot it takes at its host to
 * what its end means. The request (headers, Standard Webhooks signatures,
 * no proxy, no redirect, the first KiB of the answer, Retry-After), the
 * address checks that keep production postbacks on public addresses
 * (destination-allow), the verdict of an attempt (dispatch_judge), what it
 * teaches the host's budget, and when to try again (backoff). Leasing,
 * queueing outcomes and settling them are dispatch.c's; the curl multi
 * handle on libevent is curlev.c's; the budgets are budget.c's.
 */
#include "dispatch_int.h"

#include "pixrelay/core/mem.h"
#include "pixrelay/pix/sign.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

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

enum env delivery_env(const struct delivery *dl)
{
	return strcmp(dl->env, "production") == 0 ? ENV_PRODUCTION : ENV_SANDBOX;
}

void delivery_free(struct delivery *dl)
{
	if (dl->easy)
		curlev_release(dl->pool, dl->easy);
	curl_slist_free_all(dl->headers);
	free(dl->url);
	free(dl->body);
	free(dl->account);
	free(dl->order);
	free(dl->queue);
	free(dl->response);
	if (dl->signing)
		mem_wipe(dl->signing, strlen(dl->signing));
	if (dl->signing_prev)
		mem_wipe(dl->signing_prev, strlen(dl->signing_prev));
	if (dl->compat)
		mem_wipe(dl->compat, strlen(dl->compat));
	free(dl->signing);
	free(dl->signing_prev);
	free(dl->compat);
	free(dl);
}

void delivery_start_waiting(struct budget_host *h)
{
	struct delivery *dl = h->waiting;

	if (!dl || !budget_host_may_start(h))
		return;
	h->waiting = dl->next_waiting;
	if (!h->waiting)
		h->waiting_tail = NULL;
	h->nwaiting--;
	dl->next_waiting = NULL;
	delivery_start(dl);
}

static void finish(struct delivery *dl, CURLcode result)
{
	struct dispatch *d = dl->d;
	struct budget_host *h = dl->host;
	long status = 0;
	char error[512] = "";
	long long next_ms = 0;
	uint32_t rnd;
	uint64_t now = ids_now_ms();

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

	/* a refused address says nothing about the host; an answer in time is
	 * healthy unless it asks to slow down (429, 5xx: the limit halves, as on
	 * a failed connection); only a timeout, which held a slot for long,
	 * counts towards opening the circuit */
	budget_done(&d->budget, h, dl->tenant, delivery_env(dl));
	if (dl->refused_address)
		budget_learn(&d->budget, h, BUDGET_FINE, 1, now);
	else if (result == CURLE_OPERATION_TIMEDOUT)
		budget_learn(&d->budget, h, BUDGET_UNREACHABLE, 0, now);
	else if (result != CURLE_OK)
		budget_learn(&d->budget, h, BUDGET_STRAINED, 0, now);
	else if (status == 429 || status >= 500)
		budget_learn(&d->budget, h, BUDGET_STRAINED, 0, now);
	else
		budget_learn(&d->budget, h, BUDGET_FINE, now - dl->start_ms < BUDGET_SLOW_MS, now);

	switch (dispatch_judge(status, result == CURLE_OK)) {
	case DISPATCH_OK:
		dispatch_complete(dl, "delivered", 0, status, NULL);
		break;
	case DISPATCH_STOP:
		dispatch_complete(dl, "dead", 0, status, "410 Gone: the destination asked to stop");
		break;
	case DISPATCH_RETRY:
		ids_random(&rnd, sizeof(rnd));
		if (backoff_next(&d->policy, dl->attempts - dl->budget_base, dl->created_ms,
				 (long long)now,
				 (status == 429 || status == 503) ? dl->retry_after_ms : -1, rnd,
				 &next_ms) == BACKOFF_RETRY)
			dispatch_complete(dl, "retry", next_ms, status, error);
		else
			dispatch_complete(dl, "dead", 0, status, error);
		break;
	}
	delivery_start_waiting(h);
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

void delivery_abandon(struct delivery *dl)
{
	curlev_remove(dl->pool, dl->easy);
	active_remove(dl);
	delivery_free(dl);
}

void delivery_done(void *ud, CURL *easy, CURLcode result)
{
	struct delivery *dl = NULL;

	curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&dl);
	active_remove(dl);
	finish(dl, result);
}

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct delivery *dl = userdata;
	size_t n = size * nmemb, room = RESPONSE_KEEP - dl->response_len;

	if (!dl->response && n)
		dl->response = mem_alloc(RESPONSE_KEEP + 1);
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
	char h[1024];
	struct curl_slist *l;

	snprintf(h, sizeof(h), "%s: %s", name, value);
	l = curl_slist_append(dl->headers, h);
	if (!l)
		mem_oom(__FILE__, __LINE__);
	dl->headers = l;
}

void delivery_start(struct delivery *dl)
{
	struct dispatch *d = dl->d;
	char ts[32], sig[64], sig2[64], sigs[140];
	long long now_s;

	budget_host_started(dl->host);
	dl->start_ms = ids_now_ms();
	now_s = (long long)(dl->start_ms / 1000);
	dl->pool = d->pools[delivery_env(dl)];
	dl->easy = curlev_easy(dl->pool);
	snprintf(ts, sizeof(ts), "%lld", now_s);
	add_header(dl, "Content-Type", "application/json");
	add_header(dl, "User-Agent", "pixrelay/" PIXRELAY_VERSION);
	add_header(dl, "webhook-id", dl->id);
	add_header(dl, "webhook-timestamp", ts);
	sig[0] = sig2[0] = '\0';
	if (*dl->signing)
		sign_signature(dl->signing, dl->id, now_s, dl->body, strlen(dl->body), sig,
			       sizeof(sig));
	if (*dl->signing_prev)
		sign_signature(dl->signing_prev, dl->id, now_s, dl->body, strlen(dl->body), sig2,
			       sizeof(sig2));
	snprintf(sigs, sizeof(sigs), "%s%s%s", sig, sig[0] && sig2[0] ? " " : "", sig2);
	if (*sigs)
		add_header(dl, "webhook-signature", sigs);
	if (*dl->compat)
		add_header(dl, "signature", dl->compat);
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
	/* an answer is read only to keep its first KiB: the smallest read
	 * buffer curl takes (its default is 16 KiB per request in flight) */
	curl_easy_setopt(dl->easy, CURLOPT_BUFFERSIZE, 1024L);
	/* an https destination may offer HTTP/2 (negotiated): then many
	 * postbacks share one connection. Not for http: there, waiting to learn
	 * whether a connection multiplexes would queue them behind one answer */
	if (strncasecmp(dl->url, "https:", 6) == 0)
		curl_easy_setopt(dl->easy, CURLOPT_PIPEWAIT, 1L);
	if (curlev_add(dl->pool, dl->easy) < 0) {
		struct budget_host *h = dl->host;
		budget_host_unstarted(h);
		dispatch_complete(dl, "retry", (long long)ids_now_ms() + d->cfg->retry_base_ms, 0,
				  "cannot start the request");
		delivery_start_waiting(h);
		return;
	}
	active_add(dl);
}
