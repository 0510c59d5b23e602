/* The open-loop load generator of the benchmark's latency phase
 * (tests/bench/latency.py): notifications at a fixed rate, whatever the
 * answers do, each with its own id, and the moment each was acknowledged.
 *
 *   latgen PORT PATH SECRET RATE SECONDS CONNECTIONS TAG OUT
 *
 * POSTs RATE notifications a second for SECONDS to http://127.0.0.1:PORT PATH
 * with the header `signature: SECRET`, over up to CONNECTIONS kept-alive
 * connections (each new request goes to the connection with the fewest
 * unanswered; one that has as many as the others waits its turn). A 1 ms timer
 * sends what the schedule owes, so a slow answer never delays the next send.
 * Each notification is about 1 KB, as wrk's (tests/bench/ingest.lua), with the
 * upstream id up-TAG-N, the charge id ch-TAG-N and the field "lat":"TAG-N",
 * which the sink (sink.c) finds in the postback whether pixrelay or the BullMQ
 * relay delivers it.
 *
 * OUT receives one line per notification: "TAG-N <ack ns> <status>", the ack
 * time on CLOCK_MONOTONIC (the sink's clock) when the answer was read, status
 * 0 when none came. stdout: "sent=S ok=K lag_ms=L secs=T", L the most a send
 * ran behind its schedule.
 *
 * Build: cc -O2 -o latgen latgen.c $(pkg-config --cflags --libs libevent)
 */
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct conn {
	struct evhttp_connection *http;
	long waiting; /* requests sent on it and not answered yet */
};

struct sent {
	struct conn *conn;
	long long ack_ns;
	int status;
};

static struct event_base *base;
static struct conn *conns;
static struct sent *sends;
static long nconns, total, nsent, nanswered, nok;
static double rate;
static long long t0_ns, max_lag_ns;
static const char *path, *secret, *tag;
static char host[32];
static char pad[800];

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void on_answer(struct evhttp_request *req, void *arg)
{
	struct sent *s = arg;

	s->ack_ns = now_ns();
	s->status = req ? evhttp_request_get_response_code(req) : 0;
	s->conn->waiting--;
	nanswered++;
	nok += s->status == 200;
	if (nanswered == total)
		event_base_loopbreak(base);
}

static void send_one(void)
{
	struct conn *c = &conns[0];
	struct evhttp_request *req;
	struct evkeyvalq *h;
	long n = nsent++;

	for (long i = 1; i < nconns; i++)
		if (conns[i].waiting < c->waiting)
			c = &conns[i];
	sends[n].conn = c;
	req = evhttp_request_new(on_answer, &sends[n]);
	if (!req)
		abort();
	h = evhttp_request_get_output_headers(req);
	evhttp_add_header(h, "Host", host);
	evhttp_add_header(h, "Content-Type", "application/json");
	evhttp_add_header(h, "signature", secret);
	evbuffer_add_printf(
	    evhttp_request_get_output_buffer(req),
	    "{\"id\":\"up-%s-%ld\",\"event\":\"EVENT:CHARGE_PAID\",\"data\":{\"id\":"
	    "\"ch-%s-%ld\",\"value\":1990,\"status\":\"PAID\",\"paidAt\":"
	    "\"2026-01-01T00:00:00Z\",\"customer\":{\"name\":\"Bench Customer\","
	    "\"email\":\"bench@example.com\"},\"lat\":\"%s-%ld\",\"note\":\"%s\"}}",
	    tag, n, tag, n, tag, n, pad);
	c->waiting++;
	if (evhttp_make_request(c->http, req, EVHTTP_REQ_POST, path) < 0) {
		/* evhttp freed the request; count it as unanswered */
		c->waiting--;
		nanswered++;
		if (nanswered == total)
			event_base_loopbreak(base);
	}
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	long long now = now_ns();
	long due = (long)((double)(now - t0_ns) * rate / 1e9) + 1;

	if (due > total)
		due = total;
	while (nsent < due) {
		/* how late this send is against its place in the schedule */
		long long lag = now - (t0_ns + (long long)((double)nsent * 1e9 / rate));
		if (lag > max_lag_ns)
			max_lag_ns = lag;
		send_one();
	}
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
	event_base_loopbreak(base);
}

int main(int argc, char **argv)
{
	struct event *tick, *deadline;
	struct timeval ms = {0, 1000}, grace;
	double secs;
	int port;
	FILE *out;

	if (argc != 9) {
		fprintf(stderr,
			"usage: latgen PORT PATH SECRET RATE SECONDS CONNECTIONS TAG OUT\n");
		return 2;
	}
	port = atoi(argv[1]);
	path = argv[2];
	secret = argv[3];
	rate = atof(argv[4]);
	secs = atof(argv[5]);
	nconns = atol(argv[6]);
	tag = argv[7];
	total = (long)(rate * secs);
	if (port <= 0 || rate <= 0 || total <= 0 || nconns <= 0) {
		fprintf(stderr, "latgen: bad arguments\n");
		return 2;
	}
	memset(pad, 'x', sizeof(pad) - 1);
	snprintf(host, sizeof(host), "127.0.0.1:%d", port);
	base = event_base_new();
	conns = calloc((size_t)nconns, sizeof(*conns));
	sends = calloc((size_t)total, sizeof(*sends));
	if (!base || !conns || !sends)
		abort();
	for (long i = 0; i < nconns; i++) {
		conns[i].http =
		    evhttp_connection_base_new(base, NULL, "127.0.0.1", (unsigned short)port);
		if (!conns[i].http)
			abort();
		evhttp_connection_set_timeout(conns[i].http, 30);
	}
	tick = event_new(base, -1, EV_PERSIST, on_tick, NULL);
	/* the answers of the last sends get 30 s */
	grace.tv_sec = (long)secs + 30;
	grace.tv_usec = 0;
	deadline = evtimer_new(base, on_deadline, NULL);
	t0_ns = now_ns();
	event_add(tick, &ms);
	event_add(deadline, &grace);
	event_base_dispatch(base);
	out = fopen(argv[8], "w");
	if (!out) {
		perror(argv[8]);
		return 1;
	}
	for (long i = 0; i < nsent; i++)
		fprintf(out, "%s-%ld %lld %d\n", tag, i, sends[i].ack_ns, sends[i].status);
	fclose(out);
	printf("sent=%ld ok=%ld lag_ms=%.3f secs=%.3f\n", nsent, nok, (double)max_lag_ns / 1e6,
	       (double)(now_ns() - t0_ns) / 1e9);
	event_free(tick);
	event_free(deadline);
	for (long i = 0; i < nconns; i++)
		evhttp_connection_free(conns[i].http);
	event_base_free(base);
	free(conns);
	free(sends);
	return 0;
}
