#include "pixrelay/ingest.h"

#include "pixrelay/events.h"
#include "pixrelay/ids.h"
#include "pixrelay/json.h"
#include "pixrelay/keys.h"
#include "pixrelay/keyspace.h"
#include "pixrelay/mem.h"
#include "pixrelay/sign.h"
#include "pixrelay/timefmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOLERANCE_S 300

static const char *const event_names[] = {"EVENT:CHARGE_PAID", "EVENT:CHARGE_EXPIRED",
					  "EVENT:CHARGE_REFUND"};

enum charges_action ingest_action(const char *event)
{
	if (strcmp(event, event_names[0]) == 0)
		return CHARGES_PAY;
	if (strcmp(event, event_names[1]) == 0)
		return CHARGES_EXPIRE;
	return CHARGES_REFUND;
}

/* A non-empty printable ASCII string of at most INGEST_ID_MAX chars, or NULL. */
static const char *id_string(yajl_val v)
{
	const char *s = YAJL_IS_STRING(v) ? v->u.string : NULL;

	if (!s || !*s || strlen(s) > INGEST_ID_MAX)
		return NULL;
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x21 || (unsigned char)*p > 0x7e)
			return NULL;
	return s;
}

int ingest_parse(const char *body, size_t len, struct ingest_note *out, char *err, size_t errlen)
{
	yajl_val root = NULL, v, data;
	struct ingest_note n;
	const char *s;
	int rc = -1;

	memset(&n, 0, sizeof(n));
	if (json_parse_object(body, len, &root, err, errlen) < 0)
		return -1;
	s = id_string(json_get(root, "id"));
	if (!s) {
		snprintf(err, errlen,
			 "id: must be the notification's id, 1 to %d printable characters",
			 INGEST_ID_MAX);
		goto done;
	}
	n.id = mem_strdup(s);
	v = json_get(root, "event");
	s = YAJL_IS_STRING(v) ? v->u.string : NULL;
	if (!s) {
		snprintf(err, errlen, "event: must be a string");
		goto done;
	}
	for (size_t i = 0; i < 3; i++)
		if (strcmp(s, event_names[i]) == 0)
			n.event = mem_strdup(event_names[i]);
	if (!n.event) {
		snprintf(err, errlen,
			 "event: must be EVENT:CHARGE_PAID, EVENT:CHARGE_EXPIRED or "
			 "EVENT:CHARGE_REFUND");
		goto done;
	}
	data = json_get(root, "data");
	if (!YAJL_IS_OBJECT(data)) {
		snprintf(err, errlen, "data: must be the charge, an object");
		goto done;
	}
	s = id_string(json_get(data, "id"));
	if (!s) {
		snprintf(err, errlen,
			 "data.id: must be the charge id, 1 to %d printable characters",
			 INGEST_ID_MAX);
		goto done;
	}
	n.charge_id = mem_strdup(s);
	{
		yajl_gen g = json_gen_new();
		size_t l;
		const char *text;
		json_write_value(g, data);
		text = json_buf(g, &l);
		n.data_json = mem_strndup(text, l);
		yajl_gen_free(g);
	}
	*out = n;
	memset(&n, 0, sizeof(n));
	rc = 0;
done:
	ingest_note_deinit(&n);
	yajl_tree_free(root);
	return rc;
}

void ingest_note_deinit(struct ingest_note *n)
{
	free(n->id);
	free(n->event);
	free(n->charge_id);
	free(n->data_json);
	memset(n, 0, sizeof(*n));
}

int ingest_verify(const char *secret, const char *wh_id, const char *wh_ts, const char *wh_sig,
		  const char *compat_sig, const char *body, size_t len, long long now_s, char *err,
		  size_t errlen)
{
	if (!secret || !*secret) {
		snprintf(err, errlen, "ingest is not set up for this account");
		return -1;
	}
	if (wh_sig) {
		char *end = NULL;
		long long ts;
		int rc;
		if (!wh_id || !wh_ts) {
			snprintf(err, errlen,
				 "webhook-signature needs webhook-id and webhook-timestamp");
			return -1;
		}
		ts = strtoll(wh_ts, &end, 10);
		if (end == wh_ts || *end) {
			snprintf(err, errlen, "webhook-timestamp must be Unix seconds");
			return -1;
		}
		rc = sign_verify(secret, wh_id, ts, body, len, wh_sig, now_s, TOLERANCE_S);
		if (rc == SIGN_BAD_TIMESTAMP) {
			snprintf(err, errlen, "webhook-timestamp is more than 5 minutes off");
			return -1;
		}
		if (rc != 0) {
			snprintf(err, errlen, "invalid webhook-signature");
			return -1;
		}
		return 0;
	}
	if (compat_sig) {
		if (sign_equal(compat_sig, secret))
			return 0;
		snprintf(err, errlen, "invalid signature");
		return -1;
	}
	snprintf(err, errlen,
		 "missing signature: send Standard Webhooks headers (webhook-id, "
		 "webhook-timestamp, webhook-signature) or the header signature");
	return -1;
}

struct submit {
	charges_fn cb;
	void *ud;
	char *event_out;
};

static void on_submitted(void *ud, redisReply *reply, const char *err)
{
	struct submit *x = ud;
	const char *json;
	int rc;

	if (err) {
		x->cb(x->ud, -1, NULL, err);
	} else if ((rc = charges_reply(reply, &json, x->event_out)) < 0) {
		x->cb(x->ud, -1, NULL, "unexpected reply from ingest");
	} else {
		/* the event of an expiry that came instead of a payment */
		if (rc == CHARGES_EXPIRED && x->event_out && reply->elements == 3)
			snprintf(x->event_out, EVENTS_ID_MAX, "%s", reply->element[2]->str);
		x->cb(x->ud, rc, json, NULL);
	}
	free(x);
}

void ingest_submit(struct rds *r, const struct config *cfg, enum auth_env env, const char *account,
		   const struct ingest_note *n, char *event_out, charges_fn cb, void *ud)
{
	struct submit *x;
	char sp[KS_PREFIX_MAX], k1[KS_KEY_MAX + INGEST_ID_MAX], evt[EVENTS_ID_MAX], now[32],
	    ttl[32];
	char now_txt[TIMEFMT_LEN + 1];
	const char *cid = "";
	char *order, *body;
	int shard = ks_shard_of(account);
	uint64_t ms = ids_now_ms();

	if (event_out)
		event_out[0] = '\0';
	if (shard < 0) {
		cb(ud, -1, NULL, "the account id names no shard");
		return;
	}
	x = mem_new(struct submit);
	x->cb = cb;
	x->ud = ud;
	x->event_out = event_out;
	/* a charge of this account lives in its shard; any other id is relayed */
	if (ids_is_ulid(n->charge_id) && ks_shard_of(n->charge_id) == shard)
		cid = n->charge_id;
	/* events about one upstream charge keep their order too */
	order = mem_printf("upstream:%s:%s", account, n->charge_id);
	ks_event_id(shard, evt);
	body =
	    mem_printf("{\"id\":\"%s\",\"event\":\"%s\",\"data\":%s}", evt, n->event, n->data_json);
	ks_shard_prefix(sp, sizeof(sp), cfg->prefix, shard);
	/* per account: one account's notification ids cannot shadow another's */
	snprintf(k1, sizeof(k1), "%sup:%s:%s", sp, account, n->id);
	snprintf(ttl, sizeof(ttl), "%ld", cfg->event_retention_days * 86400);
	snprintf(now, sizeof(now), "%llu", (unsigned long long)ms);
	timefmt_format(now_txt, ms);
	{
		static const char *const actions[] = {"pay", "expire", "refund", "fail"};
		const char *argv[] = {k1,	sp,
				      account,	auth_env_name(env),
				      cid,	actions[ingest_action(n->event)],
				      n->event, evt,
				      now,	now_txt,
				      ttl,	body,
				      order};
		rds_script(r, on_submitted, x, SCRIPT_INGEST, 1, 13, argv, NULL);
	}
	free(order);
	free(body);
}
