/* cli_tail: `pixrelay tail`, every postback delivery attempt as it happens.
 * On a private event loop (cli_call of cli_redis.c) it subscribes to the
 * deliveries channel that dispatch.c publishes to, and every two seconds
 * reads the dispatchers' heartbeats to say when no process dispatches or the
 * server went away. The stored events, and their attempts, are shown by
 * `pixrelay events` (cli_events.c).
 */
#include "cli_int.h"

#include "pixrelay/pix/keyspace.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/log.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

struct tailer {
	struct cli_call *k;
	struct rds *sub;
	struct event *timer, *sigint, *sigterm;
	int json;
	int dispatching; /* processes dispatching at the last look; -1 before the first */
	int asking;
	int exit_code;
	char key[256];
};

static void tail_print(struct tailer *t, const char *msg, size_t len)
{
	yajl_val v = NULL;
	char err[64];

	if (t->json) {
		printf("%.*s\n", (int)len, msg);
	} else if (json_parse_object(msg, len, &v, err, sizeof(err)) == 0) {
		yajl_val st = json_get(v, "status"), er = json_get(v, "error");
		printf("%s %s %-10s %-30s -> %s  %s%s %lld ms%s%s\n",
		       YAJL_GET_STRING(json_get(v, "at")), YAJL_GET_STRING(json_get(v, "env")),
		       YAJL_GET_STRING(json_get(v, "state")), YAJL_GET_STRING(json_get(v, "event")),
		       YAJL_GET_STRING(json_get(v, "destination")),
		       YAJL_IS_INTEGER(st) ? "HTTP " : "",
		       YAJL_IS_INTEGER(st) ? st->u.number.r : "no answer",
		       (long long)YAJL_GET_INTEGER(json_get(v, "durationMs")),
		       YAJL_IS_STRING(er) ? "  " : "", YAJL_IS_STRING(er) ? er->u.string : "");
		yajl_tree_free(v);
	}
	fflush(stdout);
}

static void tail_quit(struct tailer *t, int code)
{
	t->exit_code = code;
	t->k->done = 1;
	event_base_loopbreak(t->k->base);
}

static void on_tail_message(void *ud, enum rds_sub_event what, const char *msg, size_t len)
{
	struct tailer *t = ud;

	if (what == RDS_SUB_MESSAGE) {
		tail_print(t, msg, len);
	} else if (what == RDS_SUB_LOST) {
		fprintf(stderr,
			"pixrelay tail: lost the connection to Redis (%s): the server or its Redis "
			"stopped\n",
			rds_last_error(t->sub)[0] ? rds_last_error(t->sub) : "closed");
		tail_quit(t, 1);
	}
}

static void on_tail_dispatchers(void *ud, redisReply *reply, const char *err)
{
	struct tailer *t = ud;
	uint64_t now = ids_now_ms(), newest;
	int alive;

	t->asking = 0;
	if (t->k->done)
		return; /* closing: the call was cut short */
	if (err) {
		fprintf(stderr,
			"pixrelay tail: Redis does not answer (%s): the server or its "
			"Redis stopped\n",
			err);
		tail_quit(t, 1);
		return;
	}
	cli_dispatchers_scan(reply, now, &alive, &newest, NULL, 0);
	if (alive == 0 && t->dispatching > 0) {
		fprintf(stderr,
			"pixrelay tail: no process is dispatching any more (the last heartbeat "
			"was %llu s ago): the server stopped\n",
			(unsigned long long)((now - newest) / 1000));
		tail_quit(t, 1);
		return;
	}
	if (alive == 0 && t->dispatching < 0)
		fprintf(stderr, "pixrelay tail: no process is dispatching: postbacks wait until a "
				"'pixrelay serve' (with dispatch = 1) runs on this Redis\n");
	else if (alive > 0 && t->dispatching <= 0)
		fprintf(stderr,
			"pixrelay tail: %d process%s dispatching; waiting for deliveries "
			"(Ctrl-C to stop)...\n",
			alive, alive == 1 ? " is" : "es are");
	t->dispatching = alive;
}

static void on_tail_timer(evutil_socket_t fd, short what, void *arg)
{
	struct tailer *t = arg;
	struct timeval tv = {2, 0};

	if (!t->asking) {
		const char *argv[] = {"HGETALL", t->key};
		t->asking = 1;
		rds_cmd_argv(t->k->r, on_tail_dispatchers, t, 2, argv, NULL);
	}
	evtimer_add(t->timer, &tv);
}

static void on_tail_signal(evutil_socket_t fd, short what, void *arg)
{
	tail_quit(arg, 0);
}

/* pixrelay tail: every delivery attempt as it happens. */
int cli_cmd_tail(const struct config *cfg, int argc, char **argv)
{
	struct cli_redis cr;
	struct cli_call call;
	struct tailer t;
	char channel[256];
	struct timeval now = {0, 0};

	memset(&t, 0, sizeof(t));
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			t.json = 1;
		} else {
			fputs(
			    "usage: pixrelay tail [--json]\n\n"
			    "Print every postback delivery attempt as it happens (event, "
			    "destination,\n"
			    "status, outcome, latency) until interrupted. Says when no process is\n"
			    "dispatching; exits with status 1 when the server or its Redis goes "
			    "away.\n",
			    cli_want_help(argc, argv) ? stdout : stderr);
			return cli_want_help(argc, argv) ? 0 : 2;
		}
	}
	if (cli_redis_open(cfg, &cr) < 0)
		return 1;
	t.exit_code = 1;
	if (cli_call_open(&call, cfg, &cr) == 0) {
		t.k = &call;
		t.dispatching = -1;
		ks_meta_dispatchers_key(t.key, sizeof(t.key), cfg->prefix);
		ks_deliveries_channel(channel, sizeof(channel), cfg->prefix);
		t.sub = rds_new_subscriber(call.base, &cr.addr, cfg->redis_timeout_ms, channel,
					   on_tail_message, &t);
		t.timer = evtimer_new(call.base, on_tail_timer, &t);
		t.sigint = evsignal_new(call.base, SIGINT, on_tail_signal, &t);
		t.sigterm = evsignal_new(call.base, SIGTERM, on_tail_signal, &t);
		evsignal_add(t.sigint, NULL);
		evsignal_add(t.sigterm, NULL);
		evtimer_add(t.timer, &now);
		if (!t.json)
			fprintf(stderr, "pixrelay tail: watching postback deliveries (Ctrl-C to "
					"stop)\n");
		cli_call_wait(&call);
		rds_free(t.sub);
		event_free(t.timer);
		event_free(t.sigint);
		event_free(t.sigterm);
	}
	cli_call_close(&call);
	cli_redis_close(&cr);
	return t.exit_code;
}
