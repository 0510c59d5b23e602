/* The raw HTTP baseline of the benchmark (tests/bench/bench.py): what libcurl's
 * multi interface on a libevent loop (pixrelay's own stack, nothing else)
 * delivers to the sink on this machine.
 *
 *   rawpost URL CONCURRENCY COUNT
 *
 * POSTs COUNT bodies of 1 KB to URL, CONCURRENCY at a time, on kept-alive
 * connections, and prints "rate=<requests/s> mean_ms=<mean latency>".
 *
 * Build: cc -O2 -o rawpost rawpost.c $(pkg-config --cflags --libs libevent libcurl)
 */
#include <curl/curl.h>
#include <event2/event.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static struct event_base *base;
static CURLM *multi;
static struct event *timer;
static const char *url;
static char body[1025];
static long started, finished, count, failed;
static double latency_sum;

struct transfer {
	CURL *easy;
	double t0;
};

static double now(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static size_t discard(char *p, size_t size, size_t n, void *ud)
{
	return size * n;
}

static void start(void)
{
	struct transfer *t = calloc(1, sizeof(*t));

	if (!t)
		abort();
	t->easy = curl_easy_init();
	curl_easy_setopt(t->easy, CURLOPT_URL, url);
	curl_easy_setopt(t->easy, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(t->easy, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(t->easy, CURLOPT_PRIVATE, t);
	t->t0 = now();
	started++;
	curl_multi_add_handle(multi, t->easy);
}

static void check(void)
{
	CURLMsg *m;
	int left;

	while ((m = curl_multi_info_read(multi, &left))) {
		struct transfer *t;
		if (m->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&t);
		failed += m->data.result != CURLE_OK;
		latency_sum += now() - t->t0;
		curl_multi_remove_handle(multi, m->easy_handle);
		curl_easy_cleanup(m->easy_handle);
		free(t);
		finished++;
		if (started < count)
			start();
	}
}

static void on_socket(evutil_socket_t fd, short kind, void *arg)
{
	int running;

	curl_multi_socket_action(multi, fd,
				 ((kind & EV_READ) ? CURL_CSELECT_IN : 0) |
				     ((kind & EV_WRITE) ? CURL_CSELECT_OUT : 0),
				 &running);
	check();
}

static void on_timer(evutil_socket_t fd, short kind, void *arg)
{
	int running;

	curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
	check();
}

static int socket_cb(CURL *e, curl_socket_t s, int what, void *u, void *sp)
{
	struct event *ev = sp;

	if (ev)
		event_free(ev);
	if (what == CURL_POLL_REMOVE) {
		curl_multi_assign(multi, s, NULL);
		return 0;
	}
	ev = event_new(base, s,
		       ((what & CURL_POLL_IN) ? EV_READ : 0) | ((what & CURL_POLL_OUT) ? EV_WRITE : 0) |
			   EV_PERSIST,
		       on_socket, NULL);
	event_add(ev, NULL);
	curl_multi_assign(multi, s, ev);
	return 0;
}

static int timer_cb(CURLM *m, long ms, void *u)
{
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};

	if (ms < 0)
		evtimer_del(timer);
	else
		evtimer_add(timer, &tv);
	return 0;
}

int main(int argc, char **argv)
{
	long conc;
	double t0;

	if (argc != 4) {
		fprintf(stderr, "usage: rawpost URL CONCURRENCY COUNT\n");
		return 2;
	}
	url = argv[1];
	conc = atol(argv[2]);
	count = atol(argv[3]);
	memset(body, 'x', sizeof(body) - 1);
	curl_global_init(CURL_GLOBAL_ALL);
	base = event_base_new();
	multi = curl_multi_init();
	curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
	curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, timer_cb);
	timer = evtimer_new(base, on_timer, NULL);
	t0 = now();
	while (started < conc && started < count)
		start();
	event_base_dispatch(base);
	printf("rate=%.1f mean_ms=%.3f failed=%ld\n", (double)finished / (now() - t0),
	       finished ? latency_sum / (double)finished * 1000 : 0, failed);
	return 0;
}
