/* evstream_key: a live stream lives no longer than the API key that opened
 * it. The stream keeps the SHA-256 of the key's text; revocation
 * (key_revoke.lua, from the API or the CLI) announces "k:<sha256>" on
 * <prefix>invalidate, the channel the process cache listens on, and the
 * cache hands every announcement on to evstream_announcement: the streams
 * of that key end at once, in every process, with a last comment saying
 * why. Announcements are missed while that subscription is down, and one
 * can come before a stream is registered (its request was authenticated
 * just before the revocation), so the key is also read from Redis (never
 * the cache): once the stream is registered, before it begins; for every
 * stream whenever the subscription is (re)established; and every
 * KEY_RECHECK_MS as a backstop. Cost: one HMGET per stream when it opens and
 * per minute. The streams themselves are evstream.c. */
#include "evstream_int.h"

#include "pixrelay/store/auth.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/log.h"

#include <string.h>

#define KEY_RECHECK_MS 60000 /* a stream's key is read again this often */
#define KEY_RETRY_MS 5000    /* ... or this soon after a read that failed */

#define WHY_REVOKED "the API key of this stream was revoked"
#define WHY_GONE "the API key of this stream no longer exists"

/* End a stream whose key does not work (AUTH_REVOKED or AUTH_INVALID):
 * 401 as authentication would answer if it had not begun, else the last
 * comment. */
static void end_for_key(struct stream *s, int status)
{
	if (s->begun == 0) {
		http_add_header(s->req, "WWW-Authenticate", "Bearer");
		http_reply_error(s->req, 401, "%s",
				 status == AUTH_REVOKED ? "API key revoked" : "invalid API key");
		s->begun = -1; /* answered */
		evstream_close(s, NULL);
		return;
	}
	log_info("live stream of request %s: %s; ending it", s->req->request_id,
		 status == AUTH_REVOKED ? WHY_REVOKED : WHY_GONE);
	evstream_end(s, status == AUTH_REVOKED ? WHY_REVOKED : WHY_GONE);
}

static void on_key_checked(void *ud, int status, const char *err)
{
	struct stream *s = ud;

	s->ops--;
	s->key_checking = 0;
	if (s->state == S_DEAD) {
		if (s->ops == 0)
			evstream_close(s, NULL);
		return;
	}
	if (status < 0) {
		log_warn("live stream of request %s: cannot check its API key: %s",
			 s->req->request_id, err);
		if (s->state == S_OPENING) {
			evstream_close(s, "storage is unreachable");
			return;
		}
		s->key_checked_ms = ids_now_ms() - KEY_RECHECK_MS + KEY_RETRY_MS;
		return;
	}
	if (status != AUTH_OK) {
		end_for_key(s, status);
		return;
	}
	s->key_checked_ms = ids_now_ms();
	if (s->key_again) {
		/* the subscription came back while this read was under way: it may
		 * have been made before an announcement that was missed */
		evstream_key_check(s);
		return;
	}
	if (!s->key_ok) {
		s->key_ok = 1;
		if (s->state == S_OPENING)
			evstream_advance(s);
	}
}

void evstream_key_check(struct stream *s)
{
	if (s->key_checking) {
		s->key_again = 1;
		return;
	}
	s->key_checking = 1;
	s->key_again = 0;
	s->ops++;
	auth_check(s->h->r, s->h->cfg->prefix, s->key_sha, on_key_checked, s);
}

void evstream_key_tick(struct stream *s, uint64_t now_ms)
{
	if (!s->key_checking && now_ms - s->key_checked_ms >= KEY_RECHECK_MS)
		evstream_key_check(s);
}

void evstream_announcement(void *ud, enum rds_sub_event what, const char *msg, size_t len)
{
	struct evstream *h = ud;
	struct stream *next;
	char announced[80];
	unsigned ended = 0;

	if (!h)
		return;
	if (what == RDS_SUB_READY) {
		/* what was announced while the subscription was down is lost */
		for (struct stream *s = h->all; s; s = s->all_next)
			evstream_key_check(s);
		return;
	}
	if (what != RDS_SUB_MESSAGE || len >= sizeof(announced))
		return;
	for (struct stream *s = h->all; s; s = next) {
		next = s->all_next;
		/* only a revocation announces a key */
		ks_invalidation_key_message(announced, sizeof(announced), s->key_sha);
		if (strlen(announced) != len || memcmp(announced, msg, len) != 0)
			continue;
		if (s->begun == 0) {
			end_for_key(s, AUTH_REVOKED);
		} else {
			ended++;
			evstream_end(s, WHY_REVOKED);
		}
	}
	if (ended)
		log_info("live streams: an API key was revoked; %u streams opened with it ended",
			 ended);
}
