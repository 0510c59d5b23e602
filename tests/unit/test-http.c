/* The HTTP server in process, on 127.0.0.1:0, with routes of its own:
 * streamed replies (chunked, HEAD, HTTP/1.0, a client that leaves, a client
 * that does not read, the server freed under an open stream), a reply that
 * comes after its client left, and the observer. A client thread speaks raw
 * HTTP over blocking sockets; the event loop runs in the main thread. */
#include "check.h"
#include "pixrelay/core/config.h"
#include "pixrelay/http/http.h"
#include "pixrelay/core/log.h"

#include <arpa/inet.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static struct event_base *base;
static struct http_server *srv;
static int port;
static atomic_int client_done, gone_count, flood_gone;
static struct http_req *stream_req;
static struct event *stream_timer, *slow_timer;
static struct http_req *slow_req;

#define MAX_OBS 64
static struct http_observation obs[MAX_OBS];
static int nobs;

static void observe(void *arg, const struct http_observation *o)
{
	if (nobs < MAX_OBS)
		obs[nobs++] = *o;
}

static void on_gone(struct http_req *req, void *arg)
{
	gone_count++;
	if (arg)
		flood_gone = 1;
	http_stream_end(req);
}

static void stream_tick(evutil_socket_t fd, short what, void *arg)
{
	http_stream_write(stream_req, "b", 1);
	http_stream_end(stream_req);
	stream_req = NULL;
}

static void h_stream(struct http_req *req)
{
	struct timeval tv = {0, 30000};

	CHECK_INT(http_stream_begin(req, 200, "text/event-stream", NULL, NULL), 0);
	CHECK(http_stream_write(req, "a", 1) >= 0);
	stream_req = req;
	evtimer_add(stream_timer, &tv);
}

static void h_forever(struct http_req *req)
{
	http_add_header(req, "X-Stream", "yes");
	http_stream_begin(req, 200, "text/event-stream", on_gone, NULL);
	http_stream_write(req, "data: hello\n\n", 13);
}

static void h_flood(struct http_req *req)
{
	static char block[65536];
	long r = 0;

	memset(block, 'x', sizeof(block));
	http_stream_begin(req, 200, "application/octet-stream", on_gone, (void *)1);
	/* nobody reads: the kernel's buffers fill, then the stream's own */
	for (int i = 0; i < 4096 && r >= 0; i++)
		r = http_stream_write(req, block, sizeof(block));
	CHECK_INT(r, -1);
	CHECK_INT(http_stream_write(req, "x", 1), -1);
}

static void slow_tick(evutil_socket_t fd, short what, void *arg)
{
	http_reply_raw(slow_req, 200, "{}", 2);
	slow_req = NULL;
}

static void h_slow(struct http_req *req)
{
	struct timeval tv = {0, 200000};

	slow_req = req;
	evtimer_add(slow_timer, &tv);
}

static void h_echo(struct http_req *req)
{
	http_reply_raw(req, 200, req->body, req->body_len);
}

static const struct http_route routes[] = {
    {HTTP_GET, "/stream", h_stream, 0}, {HTTP_GET, "/forever", h_forever, 0},
    {HTTP_GET, "/flood", h_flood, 0},	{HTTP_GET, "/slow", h_slow, 0},
    {HTTP_POST, "/echo", h_echo, 0},
};

static void no_auth(struct http_req *req)
{
	http_next(req);
}

/* ---- the client thread ---- */

static char r_stream[4096], r_head[4096], r_http10[4096], r_forever[4096], r_bad[4096];

static int dial(int rcvbuf)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (rcvbuf)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	{
		struct timeval tv = {5, 0};
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	return fd;
}

/* Send `req` and read until the server closes (or `until` shows up). */
static void talk(const char *req, char *out, size_t size, const char *until)
{
	int fd = dial(0);
	size_t n = 0;

	if (fd < 0)
		return;
	if (write(fd, req, strlen(req)) < 0)
		goto done;
	while (n + 1 < size) {
		ssize_t k = read(fd, out + n, size - n - 1);
		if (k <= 0)
			break;
		n += (size_t)k;
		out[n] = '\0';
		if (until && strstr(out, until))
			break;
	}
done:
	out[n] = '\0';
	close(fd);
}

static void *client(void *arg)
{
	talk("GET /stream HTTP/1.1\r\nHost: t\r\n\r\n"
	     "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 7\r\nContent-Type: application/json"
	     "\r\nConnection: close\r\n\r\n{\"a\":1}",
	     r_stream, sizeof(r_stream), NULL);
	talk("HEAD /stream HTTP/1.1\r\nHost: t\r\n\r\n"
	     "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\nContent-Type: application/json"
	     "\r\nConnection: close\r\n\r\n{}",
	     r_head, sizeof(r_head), NULL);
	talk("GET /stream HTTP/1.0\r\n\r\n", r_http10, sizeof(r_http10), NULL);
	/* a client that leaves a stream */
	talk("GET /forever HTTP/1.1\r\nHost: t\r\n\r\n", r_forever, sizeof(r_forever), "hello");
	for (int i = 0; i < 200 && gone_count < 1; i++)
		usleep(10000);
	/* a client that does not read its stream */
	{
		int fd = dial(4096);
		const char *req = "GET /flood HTTP/1.1\r\nHost: t\r\n\r\n";
		if (fd >= 0 && write(fd, req, strlen(req)) > 0)
			for (int i = 0; i < 500 && !flood_gone; i++)
				usleep(10000);
		if (fd >= 0)
			close(fd);
	}
	/* a client that leaves before its answer */
	{
		int fd = dial(0);
		const char *req = "GET /slow HTTP/1.1\r\nHost: t\r\n\r\n";
		if (fd >= 0) {
			if (write(fd, req, strlen(req)) < 0)
				perror("write");
			close(fd);
		}
		usleep(400000);
	}
	talk("BREW / HTTP/1.1\r\nHost: t\r\n\r\n", r_bad, sizeof(r_bad), NULL);
	/* a stream left open when the server is freed */
	{
		char buf[512];
		int fd = dial(0);
		const char *req = "GET /forever HTTP/1.1\r\nHost: t\r\n\r\n";
		if (fd >= 0 && write(fd, req, strlen(req)) > 0 && read(fd, buf, sizeof(buf)) > 0)
			client_done = 1;
		client_done = 2;
		/* the socket stays open until the process ends */
	}
	return NULL;
}

static void check_done(evutil_socket_t fd, short what, void *arg)
{
	if (client_done == 2)
		event_base_loopbreak(base);
}

static const struct http_observation *find_obs(const char *route, int status)
{
	for (int i = 0; i < nobs; i++)
		if (obs[i].status == status &&
		    ((!route && !obs[i].route) ||
		     (route && obs[i].route && !strcmp(route, obs[i].route))))
			return &obs[i];
	return NULL;
}

int main(void)
{
	struct config cfg;
	char **rest = NULL;
	int nrest = 0;
	char *argv[] = {"serve", "--listen", "127.0.0.1:0", "--http-timeout", "2", NULL};
	pthread_t th;
	struct event *tick;
	struct timeval tv = {0, 10000};
	const struct http_observation *o;

	log_set_level(LOG_ERROR);
	CHECK_INT(config_load(&cfg, 5, argv, &rest, &nrest), 0);
	free(rest);
	base = event_base_new();
	srv = http_new(base, &cfg, cfg.listen, routes, sizeof(routes) / sizeof(routes[0]), no_auth,
		       NULL);
	CHECK(srv != NULL);
	if (!srv)
		return check_finish("http");
	http_set_observer(srv, observe, NULL);
	port = http_port(srv);
	CHECK(port > 0);
	stream_timer = evtimer_new(base, stream_tick, NULL);
	slow_timer = evtimer_new(base, slow_tick, NULL);
	tick = event_new(base, -1, EV_PERSIST, check_done, NULL);
	event_add(tick, &tv);
	pthread_create(&th, NULL, client, NULL);
	event_base_dispatch(base);
	pthread_join(th, NULL);
	http_free(srv);
	CHECK_INT(gone_count, 3); /* left, flooded, freed */
	CHECK_INT(flood_gone, 1);

	/* chunked stream, then the pipelined request on the same connection */
	CHECK(strstr(r_stream, "HTTP/1.1 200 OK\r\n") == r_stream);
	CHECK(strstr(r_stream, "Content-Type: text/event-stream\r\n") != NULL);
	CHECK(strstr(r_stream, "Transfer-Encoding: chunked\r\n") != NULL);
	CHECK(strstr(r_stream, "Content-Length") == strstr(r_stream, "Content-Length: 7\r\n"));
	CHECK(strstr(r_stream, "\r\n\r\n1\r\na\r\n1\r\nb\r\n0\r\n\r\nHTTP/1.1 200 OK\r\n") != NULL);
	CHECK(strstr(r_stream, "\r\n\r\n{\"a\":1}") != NULL);
	/* HEAD: the head of a stream and nothing else */
	CHECK(strstr(r_head, "Transfer-Encoding: chunked\r\n") != NULL);
	CHECK(strstr(r_head, "no-store\r\n\r\nHTTP/1.1 200 OK\r\n") != NULL);
	CHECK(strstr(r_head, "\r\n\r\n{}") != NULL);
	/* HTTP/1.0: no chunks, the end is the close */
	CHECK(strstr(r_http10, "Connection: close\r\n") != NULL);
	CHECK(strstr(r_http10, "Transfer-Encoding") == NULL);
	{
		const char *body = strstr(r_http10, "\r\n\r\n");
		CHECK_STR(body ? body + 4 : "", "ab");
	}
	CHECK(strstr(r_forever, "X-Stream: yes\r\n") != NULL);
	CHECK(strstr(r_forever, "d\r\ndata: hello\n\n\r\n") != NULL);
	CHECK(strstr(r_bad, "HTTP/1.1 501 Not Implemented\r\n") == r_bad);
	CHECK(strstr(r_bad, "{\"error\":\"method BREW is not implemented\",\"status\":501,"
			    "\"data\":[]}") != NULL);

	/* observations: every answer once, with its route, method and bytes */
	o = find_obs("/stream", 200);
	CHECK(o != NULL);
	if (o) {
		CHECK_INT(o->method, HTTP_GET);
		CHECK(o->response_bytes > 100);
		CHECK(o->request_bytes == strlen("GET /stream HTTP/1.1\r\nHost: t\r\n\r\n"));
		CHECK(o->duration_us >= 25000);
	}
	o = find_obs("/echo", 200);
	CHECK(o != NULL && o->method == HTTP_POST && o->request_bytes > 7);
	CHECK(find_obs("/slow", 200) != NULL);
	o = find_obs(NULL, 501);
	CHECK(o != NULL && (int)o->method == 0);
	CHECK(find_obs("/flood", 200) != NULL);
	/* stream, echo, HEAD stream, echo, HTTP/1.0 stream, the stream left,
	 * the flood, the late answer, BREW, the stream open at the end */
	CHECK_INT(nobs, 10);

	event_free(stream_timer);
	event_free(slow_timer);
	event_free(tick);
	event_base_free(base);
	config_deinit(&cfg);
	return check_finish("http");
}
