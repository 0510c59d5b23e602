/* cli_redis: the Redis a command uses and the server it talks to. Opening
 * the Redis of the settings (--redis, else the embedded one of data-dir,
 * started for the command when no serve runs), naming the account a command
 * is about, running one asynchronous call of a domain module on a private
 * event loop, and reading the dispatchers' heartbeats for the base URL of a
 * running serve. The commands are in cli_<command>.c, their arguments in
 * cli_args.c.
 */
#include "cli_int.h"

#include "pixrelay/pix/keyspace.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/redis/redisd.h"
#include "pixrelay/store/keys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int cli_redis_open(const struct config *cfg, struct cli_redis *cr)
{
	struct rds_addr addr;
	char err[512];
	int lock_fd = -1, rc;

	memset(cr, 0, sizeof(*cr));
	memset(&addr, 0, sizeof(addr));
	if (*cfg->redis) {
		if (rds_parse_addr(cfg->redis, &addr) < 0) {
			fprintf(stderr,
				"pixrelay: cannot parse the redis setting (expected "
				"redis://[:password@]host[:port][/db], unix:///path or /path)\n");
			return -1;
		}
		if (rds_addr_set_sentinel_password(&addr, cfg->redis_sentinel_password) < 0) {
			fprintf(stderr,
				"pixrelay: redis-sentinel-password: longer than 255 bytes\n");
			return -1;
		}
	} else {
		rc = redisd_lock(cfg->data_dir, &lock_fd, err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "pixrelay: %s\n", err);
			return -1;
		}
		if (rc == 0) {
			cr->own = redisd_start(cfg->redis_server, cfg->data_dir, lock_fd, 10000,
					       err, sizeof(err));
			if (!cr->own) {
				fprintf(stderr, "pixrelay: embedded redis: %s\n", err);
				return -1;
			}
		}
		redisd_socket_path(cfg->data_dir, addr.path, sizeof(addr.path));
	}
	cr->addr = addr;
	cr->c = rds_open(&addr, cfg->redis_timeout_ms, err, sizeof(err));
	if (!cr->c) {
		fprintf(stderr, "pixrelay: %s\n", err);
		redisd_stop(cr->own);
		cr->own = NULL;
		return -1;
	}
	return 0;
}

void cli_redis_close(struct cli_redis *cr)
{
	rds_free(cr->c);
	redisd_stop(cr->own);
}

int cli_open_account(const struct config *cfg, enum env env, const char *account,
		     struct cli_redis *cr, char out[32])
{
	char err[256];
	int created = 0;

	if (cli_redis_open(cfg, cr) < 0)
		return -1;
	if (account) {
		snprintf(out, 32, "%s", account);
		return 0;
	}
	if (keys_platform_init(cr->c, cfg->prefix, cfg->shards, env, out, &created, err,
			       sizeof(err)) < 0) {
		fprintf(stderr, "pixrelay: %s\n", err);
		cli_redis_close(cr);
		return -1;
	}
	return 0;
}

static void on_cli_wait(evutil_socket_t fd, short what, void *arg)
{
	struct cli_call *k = arg;

	if (rds_ready(k->r))
		event_base_loopbreak(k->base);
}

int cli_call_open(struct cli_call *k, const struct config *cfg, const struct cli_redis *cr)
{
	struct event *ev;
	struct timeval tick = {0, 10000};
	uint64_t until = ids_now_ms() + (uint64_t)cfg->redis_timeout_ms;

	memset(k, 0, sizeof(*k));
	k->base = event_base_new();
	if (!k->base)
		mem_oom(__FILE__, __LINE__);
	k->r = rds_new(k->base, &cr->addr, cfg->redis_timeout_ms);
	ev = event_new(k->base, -1, EV_PERSIST, on_cli_wait, k);
	event_add(ev, &tick);
	while (!rds_ready(k->r) && ids_now_ms() < until)
		event_base_dispatch(k->base);
	event_free(ev);
	if (!rds_ready(k->r)) {
		fprintf(stderr, "pixrelay: redis: %s\n", rds_last_error(k->r));
		return -1;
	}
	return 0;
}

void cli_call_done(void *ud, int result, const char *json, const char *err)
{
	struct cli_call *k = ud;

	k->done = 1;
	k->result = result;
	k->json = json ? mem_strdup(json) : NULL;
	snprintf(k->err, sizeof(k->err), "%s", err ? err : "");
	event_base_loopbreak(k->base);
}

void cli_call_wait(struct cli_call *k)
{
	while (!k->done)
		event_base_dispatch(k->base);
}

void cli_call_close(struct cli_call *k)
{
	rds_free(k->r);
	if (k->base)
		event_base_free(k->base);
	free(k->json);
}

void cli_dispatchers_scan(const redisReply *r, uint64_t now, int *alive, uint64_t *newest,
			  char *url, size_t size)
{
	*alive = 0;
	*newest = 0;
	for (size_t i = 0; r->type == REDIS_REPLY_ARRAY && i + 1 < r->elements; i += 2) {
		const char *v = r->element[i + 1]->str, *sp;
		uint64_t ms;
		if (!v)
			continue;
		ms = strtoull(v, NULL, 10);
		sp = strchr(v, ' ');
		if (ms + CLI_SERVED_FRESH_MS >= now)
			(*alive)++;
		if (ms > *newest) {
			*newest = ms;
			if (url && sp)
				snprintf(url, size, "%s", sp + 1);
		}
	}
}

int cli_read_dispatchers(struct rds *c, const char *prefix, int *alive, char *url, size_t size,
			 long long *age_ms)
{
	char k[256], err[256];
	const char *argv[] = {"HGETALL", k};
	redisReply *r;
	uint64_t now = ids_now_ms(), best = 0;

	ks_meta_dispatchers_key(k, sizeof(k), prefix);
	r = rds_call(c, 2, argv, NULL, err, sizeof(err));

	*alive = 0;
	*age_ms = -1;
	if (url)
		url[0] = '\0';
	if (!r || r->type != REDIS_REPLY_ARRAY) {
		freeReplyObject(r);
		return -1;
	}
	cli_dispatchers_scan(r, now, alive, &best, url, size);
	if (best)
		*age_ms = now > best ? (long long)(now - best) : 0;
	if (url && (!best || best + CLI_SERVED_FRESH_MS < now))
		url[0] = '\0';
	freeReplyObject(r);
	return 0;
}

void cli_base_url(const struct config *cfg, char *out, size_t size)
{
	struct rds_addr addr;
	struct rds *c = NULL;
	char err[256], url[512] = "";
	int alive;
	long long age;
	struct stat st;

	snprintf(out, size, "%s", cfg->base_url);
	if (!cfg->base_url_derived)
		return;
	memset(&addr, 0, sizeof(addr));
	if (*cfg->redis) {
		if (rds_parse_addr(cfg->redis, &addr) < 0 ||
		    rds_addr_set_sentinel_password(&addr, cfg->redis_sentinel_password) < 0)
			return;
	} else {
		redisd_socket_path(cfg->data_dir, addr.path, sizeof(addr.path));
		if (stat(addr.path, &st) < 0)
			return; /* no serve runs on this data directory */
	}
	c = rds_open(&addr, 1000, err, sizeof(err));
	if (!c)
		return;
	if (cli_read_dispatchers(c, cfg->prefix, &alive, url, sizeof(url), &age) == 0 && *url)
		snprintf(out, size, "%s", url);
	rds_free(c);
}
