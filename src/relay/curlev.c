/* curlev: the curl multi interface driven by libevent (curl's hiperfifo
 * example): the socket and timer callbacks that curl calls to say what to
 * watch, the libevent callbacks that hand the sockets' readiness back to
 * curl, the drain of finished transfers after every action, and the pools
 * (one multi handle per environment, its connection limit, its spare easy
 * handles). What a request carries and what its answer means is the
 * dispatcher's (dispatch.c, delivery.c).
 */
#include "pixrelay/relay/curlev.h"

#include "pixrelay/core/mem.h"

#include <event2/event_struct.h>
#include <stdlib.h>
#include <sys/time.h>

#define SPARE_MAX 64

struct curlev {
	struct event_base *base;
	CURLM *multi;
	struct event *timer;
	curlev_done_fn done;
	void *ud;
	CURL *spare[SPARE_MAX]; /* finished easy handles, reset, for the next requests */
	unsigned nspare;
};

/* What libevent watches for one of curl's sockets: allocated when curl
 * first reports the socket, changed in place after (no allocation per
 * request on a kept-alive connection). */
struct sockwatch {
	struct event ev;
	int what;
};

/* Hand every finished transfer to its owner. */
static void check_multi(struct curlev *p)
{
	CURLMsg *msg;
	int left;

	while ((msg = curl_multi_info_read(p->multi, &left))) {
		CURL *easy;
		CURLcode result;
		if (msg->msg != CURLMSG_DONE)
			continue;
		/* msg does not outlive the removal */
		easy = msg->easy_handle;
		result = msg->data.result;
		curl_multi_remove_handle(p->multi, easy);
		p->done(p->ud, easy, result);
	}
}

static void on_socket_event(evutil_socket_t fd, short kind, void *arg)
{
	struct curlev *p = arg;
	int running = 0;
	int action =
	    ((kind & EV_READ) ? CURL_CSELECT_IN : 0) | ((kind & EV_WRITE) ? CURL_CSELECT_OUT : 0);

	curl_multi_socket_action(p->multi, fd, action, &running);
	check_multi(p);
}

static void on_curl_timer(evutil_socket_t fd, short kind, void *arg)
{
	struct curlev *p = arg;
	int running = 0;

	curl_multi_socket_action(p->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	check_multi(p);
}

static int socket_cb(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
	struct curlev *p = userp;
	struct sockwatch *w = socketp;

	if (what == CURL_POLL_REMOVE) {
		if (w) {
			event_del(&w->ev);
			free(w);
		}
		curl_multi_assign(p->multi, s, NULL);
		return 0;
	}
	if (w && w->what == what)
		return 0;
	if (w) {
		event_del(&w->ev);
	} else {
		w = mem_new(struct sockwatch);
		curl_multi_assign(p->multi, s, w);
	}
	w->what = what;
	event_assign(&w->ev, p->base, s,
		     ((what & CURL_POLL_IN) ? EV_READ : 0) |
			 ((what & CURL_POLL_OUT) ? EV_WRITE : 0) | EV_PERSIST,
		     on_socket_event, p);
	event_add(&w->ev, NULL);
	return 0;
}

static int timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
	struct curlev *p = userp;
	struct timeval tv;

	if (timeout_ms < 0) {
		evtimer_del(p->timer);
		return 0;
	}
	tv.tv_sec = timeout_ms / 1000;
	tv.tv_usec = (timeout_ms % 1000) * 1000;
	evtimer_add(p->timer, &tv);
	return 0;
}

struct curlev *curlev_new_pool(struct event_base *base, long keep, curlev_done_fn done, void *ud)
{
	struct curlev *p = mem_new(struct curlev);

	p->base = base;
	p->done = done;
	p->ud = ud;
	p->multi = curl_multi_init();
	if (!p->multi)
		mem_oom(__FILE__, __LINE__);
	curl_multi_setopt(p->multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
	curl_multi_setopt(p->multi, CURLMOPT_SOCKETDATA, p);
	curl_multi_setopt(p->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
	curl_multi_setopt(p->multi, CURLMOPT_TIMERDATA, p);
	curl_multi_setopt(p->multi, CURLMOPT_MAXCONNECTS, keep > 0 ? keep : 1L);
	p->timer = evtimer_new(base, on_curl_timer, p);
	return p;
}

struct curlev *curlev_new(struct event_base *base, const struct config *cfg, enum env env,
			  curlev_done_fn done, void *ud)
{
	/* keep every connection the busiest moment used: curl's default
	 * cache is 4 per transfer in the multi at the time, so each lull
	 * between leases closed connections that the next burst opened
	 * again (2.6 % of postbacks paid a new connection). Each pool
	 * keeps what it may have in flight: the sandbox its share. */
	long keep = cfg->delivery_concurrency;

	if (env == ENV_SANDBOX)
		keep = keep * cfg->delivery_sandbox_share / 100;
	return curlev_new_pool(base, keep, done, ud);
}

CURL *curlev_easy(struct curlev *p)
{
	CURL *easy = p->nspare ? p->spare[--p->nspare] : curl_easy_init();

	if (!easy)
		mem_oom(__FILE__, __LINE__);
	return easy;
}

int curlev_add(struct curlev *p, CURL *easy)
{
	return curl_multi_add_handle(p->multi, easy) == CURLM_OK ? 0 : -1;
}

void curlev_remove(struct curlev *p, CURL *easy)
{
	curl_multi_remove_handle(p->multi, easy);
}

void curlev_release(struct curlev *p, CURL *easy)
{
	if (p && p->nspare < SPARE_MAX) {
		curl_easy_reset(easy);
		p->spare[p->nspare++] = easy;
	} else {
		curl_easy_cleanup(easy);
	}
}

void curlev_free(struct curlev *p)
{
	if (!p)
		return;
	while (p->nspare)
		curl_easy_cleanup(p->spare[--p->nspare]);
	curl_multi_cleanup(p->multi);
	event_free(p->timer);
	free(p);
}
