/* post: one signed POST of an event's body on a curl easy handle (see
 * post_int.h): the headers and Standard Webhooks signatures, the options,
 * the answer's first KiB and Retry-After, and the address checks of
 * production requests. Which request to send and what its end means are
 * the callers' (delivery.c for postbacks, ping.c for endpoints' tests).
 */
#include "post_int.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/validate.h"
#include "pixrelay/pix/backoff.h"
#include "pixrelay/pix/sign.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct post *p = userdata;
	size_t n = size * nmemb, room = POST_RESPONSE_KEEP - p->response_len;

	if (!p->response && n)
		p->response = mem_alloc(POST_RESPONSE_KEEP + 1);
	memcpy(p->response + p->response_len, ptr, n < room ? n : room);
	p->response_len += n < room ? n : room;
	return n; /* the rest is read and dropped */
}

static size_t on_header(char *buf, size_t size, size_t nitems, void *userdata)
{
	struct post *p = userdata;
	size_t n = size * nitems;

	if (n > 12 && strncasecmp(buf, "Retry-After:", 12) == 0) {
		char value[128];
		size_t vl = n - 12 < sizeof(value) - 1 ? n - 12 : sizeof(value) - 1;
		long long ms;
		memcpy(value, buf + 12, vl);
		value[vl] = '\0';
		value[strcspn(value, "\r\n")] = '\0';
		if (backoff_parse_retry_after(value, (long long)(ids_now_ms() / 1000), &ms) == 0)
			p->retry_after_ms = ms;
	}
	return n;
}

/* Production requests may only reach public addresses (or those of
 * destination-allow). Checked twice: on the address curl is about to connect
 * to, after DNS, so that a refused address is never even connected to; and
 * on the connection that is about to carry the request (below), whether new
 * or reused, so that no connection can carry a production request to an
 * address that is not allowed, however it was opened. */
static curl_socket_t on_open_socket(void *clientp, curlsocktype purpose,
				    struct curl_sockaddr *address)
{
	struct post *p = clientp;
	const struct sockaddr *sa = &address->addr;

	if (p->env == ENV_PRODUCTION && !netaddr_is_public(sa) &&
	    !netaddr_list_contains_sa(p->allow, sa)) {
		p->refused_address = 1;
		if (sa->sa_family == AF_INET)
			inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr,
				  p->refused_ip, sizeof(p->refused_ip));
		else if (sa->sa_family == AF_INET6)
			inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr,
				  p->refused_ip, sizeof(p->refused_ip));
		return CURL_SOCKET_BAD;
	}
	return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

static int on_prereq(void *clientp, char *primary_ip, char *local_ip, int primary_port,
		     int local_port)
{
	struct post *p = clientp;

	if (p->env != ENV_PRODUCTION || netaddr_ip_is_public(primary_ip) ||
	    netaddr_list_contains_port(p->allow, primary_ip, primary_port))
		return CURL_PREREQFUNC_OK;
	p->refused_address = 1;
	snprintf(p->refused_ip, sizeof(p->refused_ip), "%s", primary_ip);
	return CURL_PREREQFUNC_ABORT;
}

static void add_line(struct post *p, const char *line)
{
	struct curl_slist *l = curl_slist_append(p->headers, line);

	if (!l)
		mem_oom(__FILE__, __LINE__);
	p->headers = l;
}

static void add_header(struct post *p, const char *name, const char *value)
{
	char h[1024];

	snprintf(h, sizeof(h), "%s: %s", name, value);
	add_line(p, h);
}

/* Trust the CA bundle libcurl was built with, alone, when it has one: curl
 * then keeps the certificates it loaded in the pool (its multi handle) for
 * the next connections, where with a CA directory beside (Debian's libcurl
 * names both, the same certificates) it read the whole bundle again at
 * each TLS connection, about 30 ms of the loop. Without a bundle, curl's
 * defaults stay. */
static void post_trust_bundle(CURL *easy)
{
#if LIBCURL_VERSION_NUM >= 0x075400 /* 7.84: CURLINFO_CAINFO */
	char *bundle = NULL;

	if (curl_easy_getinfo(easy, CURLINFO_CAINFO, &bundle) == CURLE_OK && bundle && *bundle)
		curl_easy_setopt(easy, CURLOPT_CAPATH, NULL);
#else
	(void)easy;
#endif
}

void post_setup(struct post *p, CURL *easy, const struct config *cfg, const struct post_msg *m)
{
	char ts[32], sig[64], sig2[64], sigs[140];
	long long now_s = (long long)(ids_now_ms() / 1000);
	size_t body_len = strlen(m->body);

	p->headers = NULL;
	p->response = NULL;
	p->response_len = 0;
	p->retry_after_ms = -1;
	p->refused_address = 0;
	p->refused_ip[0] = '\0';
	p->errbuf[0] = '\0';
	snprintf(ts, sizeof(ts), "%lld", now_s);
	add_header(p, "Content-Type", "application/json");
	add_header(p, "User-Agent", "pixrelay/" PIXRELAY_VERSION);
	add_header(p, "webhook-id", m->id);
	add_header(p, "webhook-timestamp", ts);
	sig[0] = sig2[0] = '\0';
	if (*m->signing)
		sign_signature(m->signing, m->id, now_s, m->body, body_len, sig, sizeof(sig));
	if (*m->signing_prev)
		sign_signature(m->signing_prev, m->id, now_s, m->body, body_len, sig2,
			       sizeof(sig2));
	snprintf(sigs, sizeof(sigs), "%s%s%s", sig, sig[0] && sig2[0] ? " " : "", sig2);
	if (*sigs)
		add_header(p, "webhook-signature", sigs);
	if (*m->compat)
		add_header(p, "signature", m->compat);
	/* an endpoint's static headers, checked when they were set (pix/endpoint.c) */
	for (const char *at = m->headers; at && *at;) {
		size_t n = strcspn(at, "\n");
		char line[1024];
		if (n > 0 && n < sizeof(line) && validate_printable(at, n)) {
			memcpy(line, at, n);
			line[n] = '\0';
			add_line(p, line);
		}
		at += n + (at[n] == '\n');
	}
	/* no "Expect: 100-continue" round trip before the body */
	add_line(p, "Expect:");

	curl_easy_setopt(easy, CURLOPT_URL, m->url);
	curl_easy_setopt(easy, CURLOPT_POST, 1L);
	curl_easy_setopt(easy, CURLOPT_POSTFIELDS, m->body);
	curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE, (long)body_len);
	curl_easy_setopt(easy, CURLOPT_HTTPHEADER, p->headers);
	curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
	post_trust_bundle(easy);
	curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, cfg->delivery_connect_timeout_ms);
	curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, cfg->delivery_timeout_ms);
	curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(easy, CURLOPT_WRITEDATA, p);
	curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(easy, CURLOPT_HEADERDATA, p);
	curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, on_open_socket);
	curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, p);
	curl_easy_setopt(easy, CURLOPT_PREREQFUNCTION, on_prereq);
	curl_easy_setopt(easy, CURLOPT_PREREQDATA, p);
	/* never through a proxy from the environment (http_proxy, ...): the
	 * address checks above must see the destination itself */
	curl_easy_setopt(easy, CURLOPT_PROXY, "");
	curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, p->errbuf);
	/* an answer is read only to keep its first KiB: the smallest read
	 * buffer curl takes (its default is 16 KiB per request in flight) */
	curl_easy_setopt(easy, CURLOPT_BUFFERSIZE, 1024L);
	/* an https destination may offer HTTP/2 (negotiated): then many
	 * postbacks share one connection. Not for http: there, waiting to learn
	 * whether a connection multiplexes would queue them behind one answer */
	if (strncasecmp(m->url, "https:", 6) == 0)
		curl_easy_setopt(easy, CURLOPT_PIPEWAIT, 1L);
}

void post_error(const struct post *p, CURLcode result, long status, char *out, size_t size)
{
	out[0] = '\0';
	if (p->refused_address)
		snprintf(out, size,
			 "destination address %s is not public; production postbacks may only "
			 "reach public addresses (see destination-allow)",
			 p->refused_ip);
	else if (result != CURLE_OK)
		snprintf(out, size, "%s", p->errbuf[0] ? p->errbuf : curl_easy_strerror(result));
	else if (status < 200 || status >= 300)
		snprintf(out, size, "HTTP %ld", status);
}

const char *post_response(struct post *p)
{
	if (!p->response || !p->response_len)
		return NULL;
	p->response[p->response_len] = '\0';
	if (validate_utf8_chars(p->response, strlen(p->response)) < 0)
		for (char *s = p->response; *s; s++)
			if ((unsigned char)*s >= 0x80)
				*s = '?';
	return p->response;
}

void post_deinit(struct post *p)
{
	curl_slist_free_all(p->headers);
	p->headers = NULL;
	free(p->response);
	p->response = NULL;
}
