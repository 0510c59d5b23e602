/* A fast postback sink for the benchmark (tests/bench/run.sh).
 *
 * Listens on 127.0.0.1 (port chosen by the system unless given), answers
 * every POST at once with 200 {"received":true} (keep-alive), and counts
 * deliveries: all of them, and distinct webhook-id values (a 64-bit hash set),
 * with the wall-clock time of the first and the last one.
 *
 *   GET /stats -> {"count":N,"unique":U,"first_ms":T0,"last_ms":T1}
 *
 * It prints "port <n>" on stdout once it listens. Single-threaded libevent:
 * tens of thousands of requests per second on one core, far above what the
 * relay delivers, so it is not the bottleneck.
 *
 * Build: cc -O2 -o sink sink.c $(pkg-config --cflags --libs libevent)
 */
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

static unsigned long long count, unique;
static long long first_ms = -1, last_ms = -1;
static uint64_t *set;
static size_t set_cap, set_len;

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t hash64(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h ? h : 1;
}

static int set_add(uint64_t h);

static void set_grow(void)
{
	uint64_t *old = set;
	size_t oldcap = set_cap;

	set_cap = set_cap ? set_cap * 2 : 1 << 16;
	set = calloc(set_cap, sizeof(uint64_t));
	if (!set) {
		perror("calloc");
		exit(1);
	}
	set_len = 0;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i])
			set_add(old[i]);
	free(old);
}

/* 1 when h was not in the set */
static int set_add(uint64_t h)
{
	size_t i;

	if ((set_len + 1) * 2 > set_cap)
		set_grow();
	for (i = h & (set_cap - 1); set[i]; i = (i + 1) & (set_cap - 1))
		if (set[i] == h)
			return 0;
	set[i] = h;
	set_len++;
	return 1;
}

static void on_request(struct evhttp_request *req, void *arg)
{
	struct evbuffer *out = evhttp_request_get_output_buffer(req);
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);
	const char *uri = evhttp_request_get_uri(req);

	(void)arg;
	if (evhttp_request_get_command(req) == EVHTTP_REQ_GET && strcmp(uri, "/stats") == 0) {
		evbuffer_add_printf(out,
				    "{\"count\":%llu,\"unique\":%llu,\"first_ms\":%lld,\"last_ms\":%lld}\n",
				    count, unique, first_ms, last_ms);
		evhttp_add_header(h, "Content-Type", "application/json");
		evhttp_send_reply(req, 200, "OK", out);
		return;
	}
	if (evhttp_request_get_command(req) == EVHTTP_REQ_POST) {
		const char *id = evhttp_find_header(evhttp_request_get_input_headers(req), "webhook-id");
		long long t = now_ms();
		count++;
		if (id && set_add(hash64(id)))
			unique++;
		if (first_ms < 0)
			first_ms = t;
		last_ms = t;
	}
	evbuffer_add(out, "{\"received\":true}", 17);
	evhttp_add_header(h, "Content-Type", "application/json");
	evhttp_send_reply(req, 200, "OK", out);
}

static void on_signal(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

int main(int argc, char **argv)
{
	int port = argc > 1 ? atoi(argv[1]) : 0;
	struct event_base *base;
	struct evhttp *http;
	struct evhttp_bound_socket *bound;
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	struct event *sigterm, *sigint;

	signal(SIGPIPE, SIG_IGN);
	set_grow();
	base = event_base_new();
	http = evhttp_new(base);
	if (!base || !http)
		return 1;
	evhttp_set_gencb(http, on_request, NULL);
	evhttp_set_timeout(http, 60);
	bound = evhttp_bind_socket_with_handle(http, "127.0.0.1", (ev_uint16_t)port);
	if (!bound) {
		fprintf(stderr, "sink: cannot listen on 127.0.0.1:%d\n", port);
		return 1;
	}
	if (getsockname(evhttp_bound_socket_get_fd(bound), (struct sockaddr *)&sa, &len) < 0) {
		perror("getsockname");
		return 1;
	}
	printf("port %d\n", ntohs(sa.sin_port));
	fflush(stdout);
	sigterm = evsignal_new(base, SIGTERM, on_signal, base);
	sigint = evsignal_new(base, SIGINT, on_signal, base);
	event_add(sigterm, NULL);
	event_add(sigint, NULL);
	event_base_dispatch(base);
	fprintf(stderr, "sink: %llu deliveries, %llu distinct webhook-ids\n", count, unique);
	event_free(sigterm);
	event_free(sigint);
	evhttp_free(http);
	event_base_free(base);
	free(set);
	return 0;
}
