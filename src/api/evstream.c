/* evstream: the live streams of this process, on its event loop. Streams
 * are grouped by account, with the account's signing secrets (read again
 * each minute); a stream opens (secrets, its key checked, subscriber, the
 * shard's live key), catches up (pages of events_after paced by what the
 * client reads, live messages buffered, duplicates dropped by id) and goes
 * live; one subscriber hands published events out; one timer per stream
 * beats, paces, ends a slow opening and a stream past its lifetime. The
 * header tells the protocol; the API key behind a stream is
 * evstream_key.c, the route api_events.c, the signing pix/sign.c. */
#include "evstream_int.h"

#include "pixrelay/store/accounts.h"
#include "pixrelay/store/events.h"
#include "pixrelay/core/hash.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/pix/keyspace.h"
#include "pixrelay/core/log.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/pix/sign.h"
#include "pixrelay/core/timefmt.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIVE_TTL_MS 30000    /* the shard's live key lives this long ... */
#define LIVE_RENEW_MS 10000  /* ... and is set again this often */
#define SECRETS_TTL_MS 60000 /* an account's signing secrets are read again after this */
#define BUFFER_MAX 1000	     /* live messages waiting while a stream catches up */
#define PAGE 100	     /* events read per page while catching up */
#define PACE_MS 50	     /* a stream's timer while it catches up */
#define REPLAY_LOW 65536     /* the next page is read when less than this is unread */
#define SEEN_SLOTS 2048	     /* per generation (two), ids of events sent while catching up */
#define SEEN_GEN 1024	     /* ids per generation */

/* A live event that waits while its stream catches up. */
struct msg {
	struct msg *next;
	char *id, *type, *url, *body;
	long long ms;
};

/* The streams of one account in this process, and its signing secrets. */
struct acct {
	struct acct *next; /* in its bucket */
	enum env env;
	char id[32];
	struct stream *streams;
	unsigned n;
	char signing[128], signing_prev[128];
	uint64_t secrets_ms; /* when they were read (0: never) */
	int loading;
	unsigned refs; /* streams, and a read of the secrets under way */
	struct evstream *h;
};

/* Ids seen while catching up (64-bit hashes, two generations). */
struct seen {
	uint64_t slot[2][SEEN_SLOTS];
	unsigned count, cur;
};

static void stream_go_live(struct stream *s);
static void stream_fetch(struct stream *s);
static void on_gone(struct http_req *req, void *arg);

/* ---- small pieces ---- */

long long evstream_id_ms(const char *id)
{
	long long ms = 0;

	if (!id || strncmp(id, "evt_", 4) != 0 || !ids_is_ulid(id + 4))
		return -1;
	/* a ULID's first 10 digits are its time */
	for (int i = 0; i < 10; i++)
		ms = ms * 32 + ids_crockval(id[4 + i]);
	return ms;
}

/* 0 marks an empty slot of a set of seen ids */
static uint64_t hash_id(const char *id)
{
	uint64_t h = hash_fnv1a64(id, HASH_FNV1A64_INIT);

	return h ? h : 1;
}

static bool seen_has_gen(const uint64_t *t, uint64_t v)
{
	for (unsigned i = (unsigned)(v % SEEN_SLOTS), n = 0; n < SEEN_SLOTS;
	     i = (i + 1) % SEEN_SLOTS, n++) {
		if (t[i] == v)
			return true;
		if (t[i] == 0)
			return false;
	}
	return false;
}

static bool seen_has(const struct seen *s, const char *id)
{
	uint64_t v = hash_id(id);

	return s && (seen_has_gen(s->slot[0], v) || seen_has_gen(s->slot[1], v));
}

static void seen_add(struct seen *s, const char *id)
{
	uint64_t v = hash_id(id), *t;

	if (!s || seen_has(s, id))
		return;
	if (s->count >= SEEN_GEN) {
		/* the older generation goes: the latest SEEN_GEN ids stay known */
		s->cur ^= 1;
		memset(s->slot[s->cur], 0, sizeof(s->slot[s->cur]));
		s->count = 0;
	}
	t = s->slot[s->cur];
	for (unsigned i = (unsigned)(v % SEEN_SLOTS);; i = (i + 1) % SEEN_SLOTS)
		if (t[i] == 0) {
			t[i] = v;
			break;
		}
	s->count++;
}

static unsigned acct_bucket(enum env env, const char *id)
{
	return (unsigned)(hash_id(id) + (uint64_t)env) % EVSTREAM_ACCT_BUCKETS;
}

static struct acct *acct_find(struct evstream *h, enum env env, const char *id)
{
	for (struct acct *a = h->buckets[acct_bucket(env, id)]; a; a = a->next)
		if (a->env == env && strcmp(a->id, id) == 0)
			return a;
	return NULL;
}

static void acct_unref(struct acct *a)
{
	struct acct **pp;

	if (--a->refs)
		return;
	if (a->h) {
		pp = &a->h->buckets[acct_bucket(a->env, a->id)];
		while (*pp != a)
			pp = &(*pp)->next;
		*pp = a->next;
	}
	mem_wipe(a->signing, sizeof(a->signing));
	mem_wipe(a->signing_prev, sizeof(a->signing_prev));
	free(a);
}

static void msg_free(struct msg *m)
{
	free(m->id);
	free(m->type);
	free(m->url);
	free(m->body);
	free(m);
}

/* ---- the account's signing secrets ---- */

static void on_secrets(void *ud, int result, const char *json, const char *err)
{
	struct acct *a = ud;
	yajl_val v = NULL;
	char perr[128];

	a->loading = 0;
	if (result == 0 && json_parse_object(json, strlen(json), &v, perr, sizeof(perr)) == 0) {
		const char *cur = YAJL_GET_STRING(json_get(v, "postbackSigningSecret"));
		const char *prev = YAJL_GET_STRING(json_get(v, "postbackSigningSecretPrevious"));
		snprintf(a->signing, sizeof(a->signing), "%s", cur ? cur : "");
		snprintf(a->signing_prev, sizeof(a->signing_prev), "%s", prev ? prev : "");
		a->secrets_ms = ids_now_ms();
		yajl_tree_free(v);
	} else if (result > 0) {
		/* the account is gone: no secret, its streams end */
		a->signing[0] = a->signing_prev[0] = '\0';
		a->secrets_ms = ids_now_ms();
	} else if (err) {
		log_warn("live stream: cannot read the signing secrets of account %s: %s", a->id,
			 err);
	}
	if (a->h) {
		struct stream *next;
		for (struct stream *s = a->streams; s; s = next) {
			next = s->next;
			if (s->state == S_OPENING)
				evstream_advance(s);
		}
	}
	acct_unref(a);
}

static void acct_load(struct acct *a)
{
	if (a->loading || !a->h)
		return;
	a->loading = 1;
	a->refs++;
	accounts_secrets(a->h->r, a->h->cfg, a->env, a->id, on_secrets, a);
}

/* ---- writing to a client ---- */

/* Write SSE text, unless the client has more than stream-max-pending bytes
 * unread already: then it is dropped (returns -1). An event larger than the
 * limit still goes to a client that keeps up. */
static int stream_write(struct stream *s, const char *data, size_t len)
{
	long pending = http_stream_write(s->req, NULL, 0);

	if (pending > s->h->cfg->stream_max_pending) {
		log_info("live stream of request %s: %ld bytes unread; dropping the client (it "
			 "may reconnect and resume)",
			 s->req->request_id, pending);
		evstream_close(s, NULL);
		return -1;
	}
	if (pending >= 0)
		pending = http_stream_write(s->req, data, len);
	if (pending < 0) {
		evstream_close(s, NULL);
		return -1;
	}
	s->last_write_ms = ids_now_ms();
	return 0;
}

/* Send one event as its postback would carry it, signed now. */
static int stream_send(struct stream *s, const char *id, const char *type, const char *url,
		       const char *body, long long ms)
{
	struct acct *a = s->a;
	yajl_gen g = json_gen_new();
	char ts[32], sig[64], sig2[64], sigs[140], at[25];
	long long now_s = (long long)(ids_now_ms() / 1000);
	size_t blen = strlen(body), len;
	const char *out;
	char *frame;
	int rc;

	if (s->seen)
		seen_add(s->seen, id);
	if (ids_now_ms() - a->secrets_ms > SECRETS_TTL_MS)
		acct_load(a); /* these serve until the new ones come */
	snprintf(ts, sizeof(ts), "%lld", now_s);
	sig[0] = sig2[0] = '\0';
	if (*a->signing)
		sign_signature(a->signing, id, now_s, body, blen, sig, sizeof(sig));
	if (*a->signing_prev)
		sign_signature(a->signing_prev, id, now_s, body, blen, sig2, sizeof(sig2));
	snprintf(sigs, sizeof(sigs), "%s%s%s", sig, sig[0] && sig2[0] ? " " : "", sig2);
	timefmt_rfc3339(at, (uint64_t)ms);
	json_open(g);
	json_str(g, "id");
	json_str(g, id);
	json_str(g, "type");
	json_str(g, type);
	json_str(g, "createdAt");
	json_str(g, at);
	json_str(g, "destination");
	json_str_or_null(g, *url ? url : NULL);
	json_str(g, "headers");
	json_open(g);
	json_str(g, "Content-Type");
	json_str(g, "application/json");
	json_str(g, "User-Agent");
	json_str(g, "pixrelay/" PIXRELAY_VERSION);
	json_str(g, "webhook-id");
	json_str(g, id);
	json_str(g, "webhook-timestamp");
	json_str(g, ts);
	if (*sigs) {
		json_str(g, "webhook-signature");
		json_str(g, sigs);
	}
	json_close(g);
	json_str(g, "body");
	json_str(g, body);
	json_close(g);
	out = json_buf(g, &len);
	/* compact JSON holds no raw newline: one data line */
	frame = mem_printf("id: %s\ndata: %.*s\n\n", id, (int)len, out);
	yajl_gen_free(g);
	rc = stream_write(s, frame, strlen(frame));
	free(frame);
	return rc;
}

/* ---- catching up ---- */

static void on_page(void *ud, int result, const struct events_item *items, size_t n, int more,
		    const char *err)
{
	struct stream *s = ud;

	s->ops--;
	s->fetching = 0;
	if (s->state == S_DEAD) {
		if (s->ops == 0)
			evstream_close(s, NULL);
		return;
	}
	if (result < 0) {
		log_warn("live stream of request %s: cannot read missed events: %s",
			 s->req->request_id, err);
		evstream_close(s, NULL);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct msg *m;
		if (items[i].created_ms == s->from_ms) {
			s->offset++;
		} else {
			s->from_ms = items[i].created_ms;
			s->offset = 1;
		}
		if (strcmp(items[i].id, s->skip) == 0)
			continue;
		m = mem_new(struct msg);
		m->id = mem_strdup(items[i].id);
		m->type = mem_strdup(items[i].type);
		m->url = mem_strdup(items[i].url);
		m->body = mem_strdup(items[i].body);
		m->ms = items[i].created_ms;
		if (s->page_tail)
			s->page_tail->next = m;
		else
			s->page = m;
		s->page_tail = m;
	}
	s->page_more = more;
	evstream_advance(s);
}

/* Send what the last page read while the client keeps up; then the next
 * page, or live. */
static void stream_replay(struct stream *s)
{
	long pending = http_stream_write(s->req, NULL, 0);

	while (pending >= 0 && pending < REPLAY_LOW && s->page) {
		struct msg *m = s->page;
		int rc = 0;
		s->page = m->next;
		if (!s->page)
			s->page_tail = NULL;
		if (!seen_has(s->seen, m->id))
			rc = stream_send(s, m->id, m->type, m->url, m->body, m->ms);
		msg_free(m);
		if (rc < 0)
			return;
		pending = http_stream_write(s->req, NULL, 0);
	}
	if (pending < 0) {
		evstream_close(s, NULL);
		return;
	}
	if (s->page || pending >= REPLAY_LOW)
		return; /* the timer comes back */
	if (s->page_more || (s->from_ms > 0 && !s->fetched))
		stream_fetch(s);
	else
		stream_go_live(s);
}

/* Caught up: what waited meanwhile, then live. */
static void stream_go_live(struct stream *s)
{
	while (s->buf) {
		struct msg *m = s->buf;
		int rc = 0;
		s->buf = m->next;
		s->nbuf--;
		if (!seen_has(s->seen, m->id))
			rc = stream_send(s, m->id, m->type, m->url, m->body, m->ms);
		msg_free(m);
		if (rc < 0)
			return;
	}
	s->buf_tail = NULL;
	s->state = S_LIVE;
	s->live_since_ms = ids_now_ms();
}

static void stream_fetch(struct stream *s)
{
	s->fetching = 1;
	s->fetched = 1;
	s->ops++;
	events_after(s->h->r, s->h->cfg, s->a->env, s->a->id, s->from_ms, s->offset, PAGE, on_page,
		     s);
}

/* ---- opening ---- */

static void on_flag(void *ud, redisReply *reply, const char *err)
{
	struct stream *s = ud;

	s->ops--;
	if (s->state == S_DEAD) {
		if (s->ops == 0)
			evstream_close(s, NULL);
		return;
	}
	if (err) {
		log_warn("live stream: cannot set the live key of shard %d: %s", s->shard, err);
		evstream_close(s, "storage is unreachable");
		return;
	}
	s->flag_set = 1;
	evstream_advance(s);
}

static void set_flag(struct evstream *h, int shard, struct stream *s)
{
	char key[KS_KEY_MAX], ttl[16];
	const char *argv[] = {"SET", key, h->channel, "PX", ttl};

	ks_live_key(key, sizeof(key), h->cfg->prefix, shard);
	snprintf(ttl, sizeof(ttl), "%d", LIVE_TTL_MS);
	if (s)
		s->ops++;
	rds_cmd_argv(h->r, s ? on_flag : NULL, s, 5, argv, NULL);
}

static void on_renewed(void *ud, redisReply *reply, const char *err)
{
}

static void on_renew(evutil_socket_t fd, short what, void *arg)
{
	struct evstream *h = arg;
	char key[KS_KEY_MAX], ttl[16];

	if (!rds_ready(h->r))
		return;
	snprintf(ttl, sizeof(ttl), "%d", LIVE_TTL_MS);
	for (int k = 0; k < KS_SHARDS_MAX; k++) {
		if (!h->shard_open[k])
			continue;
		ks_live_key(key, sizeof(key), h->cfg->prefix, k);
		{
			const char *argv[] = {"SET", key, h->channel, "PX", ttl};
			rds_cmd_argv(h->r, on_renewed, NULL, 5, argv, NULL);
		}
	}
}

/* Move a stream on as far as it can go now. */
void evstream_advance(struct stream *s)
{
	struct evstream *h = s->h;
	struct acct *a = s->a;
	uint64_t now = ids_now_ms();

	if (s->state == S_OPENING) {
		if (!a->secrets_ms || now - a->secrets_ms > SECRETS_TTL_MS) {
			if (!a->loading && a->secrets_ms == 0 && now > s->deadline_ms) {
				evstream_close(s, "storage is unreachable");
				return;
			}
			acct_load(a);
			if (!a->secrets_ms)
				return;
		}
		if (!*a->signing) {
			evstream_close(s, "the account has no signing secret");
			return;
		}
		if (!s->key_ok || !h->sub_ready)
			return;
		if (!s->flag_set) {
			if (s->ops == 0)
				set_flag(h, s->shard, s);
			return;
		}
		http_add_header(s->req, "X-Accel-Buffering", "no");
		if (http_stream_begin(s->req, 200, "text/event-stream", on_gone, s) < 0) {
			s->begun = -1; /* answered already (a bug, logged): nothing to end */
			evstream_close(s, NULL);
			return;
		}
		s->begun = 1;
		s->state = S_REPLAY;
		if (s->req->method == HTTP_HEAD) {
			/* the head is all a HEAD gets */
			evstream_close(s, NULL);
			return;
		}
		{
			char hello[160];
			int n =
			    snprintf(hello, sizeof(hello),
				     "retry: 2000\n: pixrelay live events of account %s (%s)\n\n",
				     a->id, env_name(a->env));
			if (stream_write(s, hello, (size_t)n) < 0)
				return;
		}
		if (s->from_ms <= 0) {
			/* nothing to catch up with: what came while opening, then live */
			free(s->seen);
			s->seen = NULL;
			stream_go_live(s);
			return;
		}
	}
	if (s->state == S_REPLAY && !s->fetching)
		stream_replay(s);
}

static void stream_arm(struct stream *s)
{
	struct timeval tv = {0, PACE_MS * 1000};

	if (s->state == S_LIVE && !s->seen) {
		tv.tv_sec = 1;
		tv.tv_usec = 0;
	}
	evtimer_add(s->timer, &tv);
}

/* What the timer does: the opening deadline, pacing of a catch-up, the
 * lifetime, the key's check, heartbeats. May end the stream. */
static void stream_tick(struct stream *s, uint64_t now)
{
	if (s->state == S_OPENING) {
		if (now > s->deadline_ms && s->ops == 0) {
			evstream_close(s, "storage is unreachable");
			return;
		}
		evstream_advance(s);
		return;
	}
	if (now >= s->end_ms) {
		char why[160];
		log_info("live stream of request %s: open for stream-max-lifetime (%ld s); ending "
			 "it (the client resumes with Last-Event-ID)",
			 s->req->request_id, s->h->cfg->stream_max_lifetime);
		snprintf(why, sizeof(why),
			 "this stream reached its lifetime (stream-max-lifetime, %ld s); "
			 "reconnect with Last-Event-ID to resume",
			 s->h->cfg->stream_max_lifetime);
		evstream_end(s, why);
		return;
	}
	if (s->state == S_REPLAY)
		evstream_advance(s);
	if (s->state == S_LIVE && s->seen && now - s->live_since_ms > 2000) {
		/* a published event that the last page read has come by now */
		free(s->seen);
		s->seen = NULL;
	}
	if (s->state != S_DEAD)
		evstream_key_tick(s, now);
	if (s->state != S_DEAD &&
	    now - s->last_write_ms >= (uint64_t)s->h->cfg->stream_heartbeat * 1000)
		stream_write(s, ": keep-alive\n\n", 14);
}

/* The stream's one timer; what it runs may end the stream, which is freed
 * here then, not in there. */
static void on_stream_timer(evutil_socket_t fd, short what, void *arg)
{
	struct stream *s = arg;

	if (s->state == S_DEAD)
		return;
	s->in_timer = 1;
	stream_tick(s, ids_now_ms());
	s->in_timer = 0;
	if (s->state == S_DEAD)
		evstream_close(s, NULL);
	else
		stream_arm(s);
}

static void on_gone(struct http_req *req, void *arg)
{
	evstream_close(arg, NULL);
}

/* End a stream (answering 503 `why` if it had not begun) and free it once
 * no Redis call holds it. */
void evstream_close(struct stream *s, const char *why)
{
	struct evstream *h = s->h;

	if (s->state != S_DEAD) {
		s->state = S_DEAD;
		if (s->prev)
			s->prev->next = s->next;
		else
			s->a->streams = s->next;
		if (s->next)
			s->next->prev = s->prev;
		s->a->n--;
		if (s->all_prev)
			s->all_prev->all_next = s->all_next;
		else
			h->all = s->all_next;
		if (s->all_next)
			s->all_next->all_prev = s->all_prev;
		h->nstreams--;
		h->shard_open[s->shard]--;
		event_del(s->timer);
		if (s->begun > 0) {
			http_stream_end(s->req);
		} else if (s->begun == 0) {
			http_add_header(s->req, "Retry-After", "1");
			http_reply_error(s->req, 503, "service unavailable: %s; retry later",
					 why ? why : "the stream could not start");
		}
		s->req = NULL;
	}
	if (s->ops > 0 || s->in_timer)
		return;
	while (s->buf) {
		struct msg *m = s->buf;
		s->buf = m->next;
		msg_free(m);
	}
	while (s->page) {
		struct msg *m = s->page;
		s->page = m->next;
		msg_free(m);
	}
	free(s->seen);
	event_free(s->timer);
	acct_unref(s->a);
	free(s);
}

void evstream_end(struct stream *s, const char *why)
{
	if (s->state != S_DEAD && s->begun > 0) {
		/* the last words: past stream-max-pending or not, a client gets them
		 * if it reads */
		char *line = mem_printf(": end: %s\n\n", why);
		http_stream_write(s->req, line, strlen(line));
		free(line);
	}
	evstream_close(s, why);
}

/* ---- the subscriber ---- */

/* A published event: "<id>\n<env>\n<account>\n<ms>\n<type>\n<url>\n<body>". */
static void on_published(struct evstream *h, const char *msg, size_t len)
{
	const char *f[7], *p = msg, *end = msg + len;
	size_t flen[7];
	char env_s[16], account[32];
	enum env env;
	struct acct *a;
	struct stream *next;
	struct msg m;

	for (int i = 0; i < 6; i++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			return;
		f[i] = p;
		flen[i] = (size_t)(nl - p);
		p = nl + 1;
	}
	f[6] = p;
	flen[6] = (size_t)(end - p);
	if (flen[1] >= sizeof(env_s) || flen[2] >= sizeof(account) || flen[0] >= KS_EVENT_ID_MAX)
		return;
	memcpy(env_s, f[1], flen[1]);
	env_s[flen[1]] = '\0';
	memcpy(account, f[2], flen[2]);
	account[flen[2]] = '\0';
	if (env_parse(env_s, &env) < 0 || !(a = acct_find(h, env, account)))
		return;
	m.next = NULL;
	m.id = mem_strndup(f[0], flen[0]);
	m.ms = strtoll(f[3], NULL, 10);
	m.type = mem_strndup(f[4], flen[4]);
	m.url = mem_strndup(f[5], flen[5]);
	m.body = mem_strndup(f[6], flen[6]);
	for (struct stream *s = a->streams; s; s = next) {
		next = s->next;
		if (s->state == S_LIVE) {
			if (!seen_has(s->seen, m.id))
				stream_send(s, m.id, m.type, m.url, m.body, m.ms);
		} else if (s->nbuf >= BUFFER_MAX) {
			log_info(
			    "live stream of request %s: %u events waiting while it catches up; "
			    "ending it (the client may reconnect and resume)",
			    s->req->request_id, s->nbuf);
			evstream_close(s, "too many events while the stream starts");
		} else {
			struct msg *c = mem_new(struct msg);
			*c = m;
			c->id = mem_strdup(m.id);
			c->type = mem_strdup(m.type);
			c->url = mem_strdup(m.url);
			c->body = mem_strdup(m.body);
			if (s->buf_tail)
				s->buf_tail->next = c;
			else
				s->buf = c;
			s->buf_tail = c;
			s->nbuf++;
		}
	}
	free(m.id);
	free(m.type);
	free(m.url);
	free(m.body);
}

static void on_sub(void *ud, enum rds_sub_event what, const char *msg, size_t len)
{
	struct evstream *h = ud;
	struct stream *next;

	switch (what) {
	case RDS_SUB_MESSAGE:
		on_published(h, msg, len);
		break;
	case RDS_SUB_READY:
		h->sub_ready = 1;
		for (struct stream *s = h->all; s; s = next) {
			next = s->all_next;
			if (s->state == S_OPENING)
				evstream_advance(s);
		}
		break;
	case RDS_SUB_LOST:
		h->sub_ready = 0;
		if (h->nstreams)
			log_warn(
			    "live streams: the subscriber connection to Redis was lost; ending "
			    "%u streams (clients resume from their last event)",
			    h->nstreams);
		for (struct stream *s = h->all; s; s = next) {
			next = s->all_next;
			if (s->state == S_OPENING)
				s->flag_set = 0;
			else
				evstream_close(s, NULL);
		}
		break;
	}
}

/* ---- the module ---- */

struct evstream *evstream_new(struct event_base *base, struct rds *r, const struct rds_addr *addr,
			      const struct config *cfg)
{
	struct evstream *h = mem_new(struct evstream);
	struct timeval tv = {LIVE_RENEW_MS / 1000, 0};

	h->base = base;
	h->r = r;
	h->addr = *addr;
	h->cfg = cfg;
	ks_live_channel(h->channel, sizeof(h->channel), cfg->prefix);
	h->renew = event_new(base, -1, EV_PERSIST, on_renew, h);
	event_add(h->renew, &tv);
	return h;
}

int evstream_open(struct evstream *h, struct http_req *req, enum env env, const char *account,
		  const char *key_sha, long long from_ms, const char *skip_id)
{
	struct acct *a;
	struct stream *s;
	int shard = ks_shard_of(account);
	uint64_t now = ids_now_ms(), life = (uint64_t)h->cfg->stream_max_lifetime * 1000, cut;

	if (h->stopped || shard < 0) {
		http_add_header(req, "Retry-After", "1");
		http_reply_error(req, 503, "service unavailable: this process is stopping; retry");
		return EVSTREAM_STOPPED;
	}
	if (h->nstreams >= (unsigned)h->cfg->stream_max) {
		http_add_header(req, "Retry-After", "5");
		http_reply_error(req, 503,
				 "service unavailable: this process serves %u live streams, its "
				 "limit (stream-max); retry later",
				 h->nstreams);
		return EVSTREAM_TOO_MANY;
	}
	if (h->nstreams >= (unsigned long)h->cfg->max_connections / EVSTREAM_CONNECTION_SHARE) {
		/* the rest of the connections stay for the API */
		http_add_header(req, "Retry-After", "5");
		http_reply_error(req, 503,
				 "service unavailable: this process serves %u live streams, its "
				 "limit (1/%d of max-connections %ld); retry later",
				 h->nstreams, EVSTREAM_CONNECTION_SHARE, h->cfg->max_connections);
		return EVSTREAM_TOO_MANY;
	}
	a = acct_find(h, env, account);
	if (a && a->n >= (unsigned)h->cfg->stream_max_per_account) {
		http_add_header(req, "Retry-After", "5");
		http_reply_error(req, 429,
				 "too many live streams for this account: %u are open (limit "
				 "%ld per process, stream-max-per-account); close one",
				 a->n, h->cfg->stream_max_per_account);
		return EVSTREAM_TOO_MANY;
	}
	if (!a) {
		unsigned b = acct_bucket(env, account);
		a = mem_new(struct acct);
		a->env = env;
		snprintf(a->id, sizeof(a->id), "%s", account);
		a->h = h;
		a->next = h->buckets[b];
		h->buckets[b] = a;
	}
	s = mem_new(struct stream);
	s->h = h;
	s->a = a;
	a->refs++;
	s->req = req;
	s->shard = shard;
	s->from_ms = from_ms;
	s->seen = mem_new(struct seen);
	snprintf(s->skip, sizeof(s->skip), "%s", skip_id ? skip_id : "");
	snprintf(s->key_sha, sizeof(s->key_sha), "%s", key_sha ? key_sha : "");
	s->next = a->streams;
	if (a->streams)
		a->streams->prev = s;
	a->streams = s;
	a->n++;
	s->all_next = h->all;
	if (h->all)
		h->all->all_prev = s;
	h->all = s;
	h->nstreams++;
	h->shard_open[shard]++;
	s->deadline_ms = now + (uint64_t)h->cfg->redis_timeout_ms;
	s->last_write_ms = now;
	/* up to a tenth earlier, drawn per stream: streams opened together (after
	 * a restart) do not all end together */
	ids_random(&cut, sizeof(cut));
	s->end_ms = now + life - cut % (life / EVSTREAM_LIFETIME_JITTER + 1);
	s->timer = evtimer_new(h->base, on_stream_timer, s);
	if (!h->sub)
		h->sub = rds_new_subscriber(h->base, &h->addr, h->cfg->redis_timeout_ms, h->channel,
					    on_sub, h);
	stream_arm(s);
	/* registered: a revocation announced from now on ends it; one before is
	 * what this check finds */
	evstream_key_check(s);
	evstream_advance(s);
	return EVSTREAM_OK;
}

unsigned evstream_count(const struct evstream *h)
{
	return h ? h->nstreams : 0;
}

void evstream_stop(struct evstream *h)
{
	if (!h)
		return;
	h->stopped = 1;
	while (h->all)
		evstream_close(h->all, "this process is stopping");
}

void evstream_free(struct evstream *h)
{
	if (!h)
		return;
	evstream_stop(h);
	for (int b = 0; b < EVSTREAM_ACCT_BUCKETS; b++)
		for (struct acct *a = h->buckets[b]; a; a = a->next)
			a->h = NULL; /* held by a call that has not answered */
	rds_free(h->sub);
	event_free(h->renew);
	free(h);
}
