/* A fast postback sink for the benchmark (tests/bench/bench.py).
 *
 *   sink [--ports N] [--delay-ms D] [--lat 1]
 *
 * Listens on N ports of 127.0.0.1 (chosen by the system) and answers every
 * POST with 200 {"received":true} (keep-alive), at once or after D ms. It
 * records each delivery's webhook-id with a 64-bit hash (FNV-1a) of its
 * body, and counts deliveries, distinct webhook-ids, and bodies that differ
 * from an earlier delivery of the same id. A delivery to a path that begins
 * with /ep (the benchmark's webhook endpoints, which get the webhook-id of
 * the event's postback) is recorded as "<webhook-id>@<path>": one id per
 * destination.
 *
 *   GET /stats -> {"count":N,"unique":U,"mismatch":M,"inflight":I,
 *                  "first_ms":T0,"last_ms":T1}
 *   GET /dump  -> one line per distinct webhook-id: "<id> <body hash hex>"
 *   GET /lat   -> with --lat 1, one line per distinct webhook-id whose body
 *                 holds "lat":"<mark>" (the latency phase's notifications,
 *                 tests/bench/latgen.c): "<mark> <ns>", the moment its first
 *                 delivery was read, on CLOCK_MONOTONIC
 *
 * It prints "ports <p1> <p2> ..." on stdout once it listens. Single-threaded
 * libevent: tens of thousands of requests per second on one core.
 *
 * Build: cc -O2 -o sink sink.c $(pkg-config --cflags --libs libevent)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem (meson defines it already) */
#endif
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include <arpa/inet.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

struct entry {
	uint64_t key; /* hash of the webhook-id; 0 = empty slot */
	uint64_t body;
	char id[64];
};

struct mark {
	char mark[40];
	long long ns;
};

static unsigned long long count, unique, mismatch, inflight;
static struct mark *marks;
static size_t marks_len, marks_cap;
static int lat;
static long long first_ms = -1, last_ms = -1;
static struct entry *set;
static size_t set_cap, set_len;
static long delay_ms;
static struct event_base *base;

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t fnv(const unsigned char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 1099511628211ull;
	}
	return h ? h : 1;
}

static struct entry *set_find(uint64_t key);

static void set_grow(void)
{
	struct entry *old = set;
	size_t oldcap = set_cap;

	set_cap = set_cap ? set_cap * 2 : 1 << 16;
	set = calloc(set_cap, sizeof(*set));
	if (!set) {
		perror("calloc");
		exit(1);
	}
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].key)
			*set_find(old[i].key) = old[i];
	free(old);
}

/* The slot of key: its entry, or the empty slot where it goes. */
static struct entry *set_find(uint64_t key)
{
	size_t i;

	for (i = key & (set_cap - 1); set[i].key; i = (i + 1) & (set_cap - 1))
		if (set[i].key == key)
			break;
	return &set[i];
}

/* The latency mark of a first delivery: the token after "lat":" in its body. */
static void record_mark(const unsigned char *body, size_t len, long long ns)
{
	static const char key[] = "\"lat\":\"";
	const unsigned char *p = memmem(body, len, key, sizeof(key) - 1), *end;
	struct mark *m;

	if (!p)
		return;
	p += sizeof(key) - 1;
	end = memchr(p, '"', len - (size_t)(p - body));
	if (!end || end - p >= (long)sizeof(m->mark))
		return;
	if (marks_len == marks_cap) {
		marks_cap = marks_cap ? marks_cap * 2 : 4096;
		marks = realloc(marks, marks_cap * sizeof(*marks));
		if (!marks) {
			perror("realloc");
			exit(1);
		}
	}
	m = &marks[marks_len++];
	memcpy(m->mark, p, (size_t)(end - p));
	m->mark[end - p] = 0;
	m->ns = ns;
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* Counts a delivery; a first one of its id is remembered (and its mark). */
static void record(const char *id, const unsigned char *body, size_t len)
{
	uint64_t key = fnv((const unsigned char *)id, strlen(id)), bh = fnv(body, len);
	struct entry *e;

	if ((set_len + 1) * 2 > set_cap)
		set_grow();
	e = set_find(key);
	if (!e->key) {
		e->key = key;
		e->body = bh;
		snprintf(e->id, sizeof(e->id), "%s", id);
		set_len++;
		unique++;
		if (lat)
			record_mark(body, len, now_ns());
	} else if (e->body != bh) {
		mismatch++;
	}
}

static void answer(struct evhttp_request *req)
{
	struct evbuffer *out = evhttp_request_get_output_buffer(req);

	evbuffer_add(out, "{\"received\":true}", 17);
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
			  "application/json");
	evhttp_send_reply(req, 200, "OK", out);
}

static void on_delay(evutil_socket_t fd, short what, void *arg)
{
	inflight--;
	answer(arg);
}

static void on_request(struct evhttp_request *req, void *arg)
{
	struct evbuffer *out = evhttp_request_get_output_buffer(req);
	const char *uri = evhttp_request_get_uri(req);

	if (evhttp_request_get_command(req) == EVHTTP_REQ_GET && strcmp(uri, "/stats") == 0) {
		evbuffer_add_printf(out,
				    "{\"count\":%llu,\"unique\":%llu,\"mismatch\":%llu,"
				    "\"inflight\":%llu,\"first_ms\":%lld,\"last_ms\":%lld}\n",
				    count, unique, mismatch, inflight, first_ms, last_ms);
		evhttp_send_reply(req, 200, "OK", out);
		return;
	}
	if (evhttp_request_get_command(req) == EVHTTP_REQ_GET && strcmp(uri, "/dump") == 0) {
		for (size_t i = 0; i < set_cap; i++)
			if (set[i].key)
				evbuffer_add_printf(out, "%s %016llx\n", set[i].id,
						    (unsigned long long)set[i].body);
		evhttp_send_reply(req, 200, "OK", out);
		return;
	}
	if (evhttp_request_get_command(req) == EVHTTP_REQ_GET && strcmp(uri, "/lat") == 0) {
		for (size_t i = 0; i < marks_len; i++)
			evbuffer_add_printf(out, "%s %lld\n", marks[i].mark, marks[i].ns);
		evhttp_send_reply(req, 200, "OK", out);
		return;
	}
	if (evhttp_request_get_command(req) == EVHTTP_REQ_POST) {
		const char *id =
		    evhttp_find_header(evhttp_request_get_input_headers(req), "webhook-id");
		struct evbuffer *in = evhttp_request_get_input_buffer(req);
		size_t len = evbuffer_get_length(in);
		long long t = now_ms();
		char key[64];

		count++;
		if (id && strncmp(uri, "/ep", 3) == 0) {
			snprintf(key, sizeof(key), "%s@%s", id, uri);
			id = key;
		}
		if (id)
			record(id, evbuffer_pullup(in, (ssize_t)len), len);
		if (first_ms < 0)
			first_ms = t;
		last_ms = t;
		if (delay_ms > 0) {
			struct timeval tv = {delay_ms / 1000, (delay_ms % 1000) * 1000};
			inflight++;
			event_base_once(base, -1, EV_TIMEOUT, on_delay, req, &tv);
			return;
		}
	}
	answer(req);
}

static void on_signal(evutil_socket_t fd, short what, void *arg)
{
	event_base_loopbreak(arg);
}

int main(int argc, char **argv)
{
	struct evhttp *http;
	struct event *sigterm, *sigint;
	int nports = 1;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--ports") == 0)
			nports = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--delay-ms") == 0)
			delay_ms = atol(argv[i + 1]);
		else if (strcmp(argv[i], "--lat") == 0)
			lat = atoi(argv[i + 1]);
	}
	signal(SIGPIPE, SIG_IGN);
	set_grow();
	base = event_base_new();
	http = evhttp_new(base);
	if (!base || !http)
		return 1;
	evhttp_set_gencb(http, on_request, NULL);
	evhttp_set_timeout(http, 120);
	printf("ports");
	for (int i = 0; i < nports; i++) {
		struct evhttp_bound_socket *bound =
		    evhttp_bind_socket_with_handle(http, "127.0.0.1", 0);
		struct sockaddr_in sa;
		socklen_t len = sizeof(sa);
		if (!bound || getsockname(evhttp_bound_socket_get_fd(bound), (struct sockaddr *)&sa,
					  &len) < 0) {
			fprintf(stderr, "sink: cannot listen\n");
			return 1;
		}
		printf(" %d", ntohs(sa.sin_port));
	}
	printf("\n");
	fflush(stdout);
	sigterm = evsignal_new(base, SIGTERM, on_signal, base);
	sigint = evsignal_new(base, SIGINT, on_signal, base);
	event_add(sigterm, NULL);
	event_add(sigint, NULL);
	event_base_dispatch(base);
	fprintf(stderr, "sink: %llu deliveries, %llu distinct webhook-ids, %llu mismatches\n",
		count, unique, mismatch);
	event_free(sigterm);
	event_free(sigint);
	evhttp_free(http);
	event_base_free(base);
	free(set);
	free(marks);
	return 0;
}
