/* rdsbench: what pixrelay's Redis layer (src/redis/redis.c) costs its process per
 * command, apart from Redis: N commands (HSET of 6 fields, 1 KB in all, over
 * keys of 16 hash tags), 64 in flight, and the CPU time of this process per
 * command. Not built by meson; see docs/performance.md:
 *
 *   cc -O2 -Iinclude tests/bench/rdsbench.c build-bench/libpixrelay.a \
 *       $(pkg-config --libs libevent hiredis yajl libcurl openssl libqrencode libpng) \
 *       -lm -lpthread -o rdsbench
 *   ./rdsbench unix:///path/redis.sock 1000000
 */
#include "pixrelay/redis/redis.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>

static struct rds *r;
static struct event_base *base;
static long left, answered, total;
static char value[1024];

static void on_reply(void *ud, redisReply *reply, const char *err);

static void send_one(void)
{
	char k[48];
	const char *argv[] = {"HSET", k,    "f1", "v1", "f2", "v2",   "f3",
			      "v3",   "f4", "v4", "f5", "v5", "body", value};

	snprintf(k, sizeof(k), "rdsbench:{s%ld}:k%ld", left % 16, left % 1000);
	left--;
	rds_cmd_argv(r, on_reply, NULL, 14, argv, NULL);
}

static void on_reply(void *ud, redisReply *reply, const char *err)
{
	if (err) {
		fprintf(stderr, "rdsbench: %s\n", err);
		exit(1);
	}
	answered++;
	if (left > 0)
		send_one();
	else if (answered == total)
		event_base_loopbreak(base);
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	if (rds_ready(r))
		event_base_loopbreak(base);
}

static double seconds(const struct timeval *a, const struct timeval *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_usec - a->tv_usec) / 1e6;
}

int main(int argc, char **argv)
{
	struct rds_addr addr;
	struct rusage u0, u1;
	struct timeval t0, t1, tick = {0, 10000};
	struct event *ev;
	double cpu;

	if (argc != 3 || rds_parse_addr(argv[1], &addr) < 0 || atol(argv[2]) < 64) {
		fprintf(stderr, "usage: rdsbench REDIS-ADDRESS COMMANDS(>= 64)\n");
		return 2;
	}
	total = left = atol(argv[2]);
	memset(value, 'x', sizeof(value) - 1);
	base = event_base_new();
	r = rds_new(base, &addr, 5000);
	ev = event_new(base, -1, EV_PERSIST, on_tick, NULL);
	event_add(ev, &tick);
	event_base_dispatch(base);
	event_free(ev);
	getrusage(RUSAGE_SELF, &u0);
	gettimeofday(&t0, NULL);
	for (int i = 0; i < 64; i++)
		send_one();
	event_base_dispatch(base);
	getrusage(RUSAGE_SELF, &u1);
	gettimeofday(&t1, NULL);
	cpu = seconds(&u0.ru_utime, &u1.ru_utime) + seconds(&u0.ru_stime, &u1.ru_stime);
	printf("%ld commands: %.0f/s, client CPU %.2f us/command\n", total,
	       (double)total / seconds(&t0, &t1), cpu / (double)total * 1e6);
	rds_free(r);
	event_base_free(base);
	return 0;
}
