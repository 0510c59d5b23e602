/* evio.c: a hiredis async context on libevent, as hiredis' own adapter
 * (hiredis/adapters/libevent.h) does it, except that a wakeup reads on
 * while the connection still has bytes waiting. hiredis reads 16 KiB per
 * redisAsyncHandleRead and its adapter calls it once per readable event,
 * so a reply of a few hundred KiB (the stream entries a dispatcher reads
 * for a lease: 256 of about 1.3 KiB) took some twenty turns of the loop,
 * each also running every delivery that finished meanwhile: 18-28 ms for a
 * reply Redis wrote in one, during which the destinations' slots emptied
 * (docs/performance.md). A wakeup now reads on through a reply under way,
 * EVIO_READS_MAX times at most. */
#include "redis_int.h"

#include "pixrelay/core/mem.h"

#include <stdlib.h>
#include <sys/ioctl.h>

#define EVIO_READS_MAX 64 /* reads of 16 KiB per wakeup: 1 MiB at most */

/* Whether the reader holds part of a reply (hiredis 0.14's redisReader:
 * bytes not parsed yet, or a nested reply begun). */
static bool reply_under_way(const redisReader *r)
{
	return r && (r->pos < r->len || r->ridx >= 0);
}

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
	struct rds_evio *e = arg;
	(void)what;

	/* hiredis may free the context from inside (an error, or a callback
	 * that frees it): cleanup then only marks e, freed here */
	e->reading = 1;
	for (int i = 0; i < EVIO_READS_MAX; i++) {
		int waiting = 0;

		redisAsyncHandleRead(e->ac);
		/* on only through a reply under way: between replies the loop
		 * gets its turn, so the subscription's connection (read first,
		 * node.c) is still heard before the next reply of another */
		if (e->gone || !reply_under_way(e->ac->c.reader) ||
		    ioctl(fd, FIONREAD, &waiting) < 0 || waiting <= 0)
			break;
	}
	e->reading = 0;
	if (e->gone)
		free(e);
}

static void on_writable(evutil_socket_t fd, short what, void *arg)
{
	struct rds_evio *e = arg;
	(void)fd;
	(void)what;

	redisAsyncHandleWrite(e->ac);
}

static void add_read(void *p)
{
	event_add(((struct rds_evio *)p)->rev, NULL);
}

static void del_read(void *p)
{
	event_del(((struct rds_evio *)p)->rev);
}

static void add_write(void *p)
{
	event_add(((struct rds_evio *)p)->wev, NULL);
}

static void del_write(void *p)
{
	event_del(((struct rds_evio *)p)->wev);
}

static void cleanup(void *p)
{
	struct rds_evio *e = p;

	event_free(e->rev);
	event_free(e->wev);
	e->rev = e->wev = NULL;
	if (e->reading)
		e->gone = 1;
	else
		free(e);
}

struct rds_evio *rds_evio_attach(redisAsyncContext *ac, struct event_base *base)
{
	struct rds_evio *e = mem_new(struct rds_evio);

	e->ac = ac;
	e->rev = event_new(base, ac->c.fd, EV_READ, on_readable, e);
	e->wev = event_new(base, ac->c.fd, EV_WRITE, on_writable, e);
	if (!e->rev || !e->wev)
		mem_oom(__FILE__, __LINE__);
	ac->ev.addRead = add_read;
	ac->ev.delRead = del_read;
	ac->ev.addWrite = add_write;
	ac->ev.delWrite = del_write;
	ac->ev.cleanup = cleanup;
	ac->ev.data = e;
	event_add(e->rev, NULL);
	event_add(e->wev, NULL);
	return e;
}
