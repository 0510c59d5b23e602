/* recurrences: Pix Automático's recurrences as pixrelay keeps them
 * (docs/recurrences.md, docs/storage.md: rec:, recs:, recx:, recopen:).
 *
 * A recurrence is made at the account's bank first (relay/bankrec.c) and
 * stored here once the bank made it (rec_create.lua), CREATED. What the
 * bank says of it later (its /rec callback, the reconciliation's GET
 * /rec/{idRec}, its answer to a cancel) is one write with its event
 * (rec_status.lua): a recurrence only moves forward, so each status makes
 * one event, in the order of the recurrence's own lane. Reads assemble its
 * JSON from the stored parts (pix/recurrence.h).
 */
#ifndef PIXRELAY_STORE_RECURRENCES_H
#define PIXRELAY_STORE_RECURRENCES_H

#include "pixrelay/core/config.h"
#include "pixrelay/pix/env.h"
#include "pixrelay/pix/page.h"
#include "pixrelay/pix/recurrence.h"
#include "pixrelay/redis/redis.h"
#include "pixrelay/store/store.h"

#include <stdbool.h>
#include <stdint.h>

#define RECURRENCES_LIST_MAX 100
#define RECURRENCES_SCAN_CAP 5000
#define RECURRENCES_OPEN_MAX 16 /* asked of the bank per reconciliation run */

enum recurrences_result {
	RECURRENCES_NOT_FOUND = 1, /* no such recurrence of the account */
	RECURRENCES_DUPLICATE = 2, /* a status it holds already, or one behind it */
	RECURRENCES_UNKNOWN = 3,   /* the bank named an idRec no recurrence of the account has */
};

/* True when `id` is a recurrence's id: "rec_" + a ULID. */
bool recurrences_valid_id(const char *id);

/* A new recurrence id of `account`'s shard into out (RECURRENCE_ID_MAX
 * bytes); -1 when the account names no shard. */
int recurrences_new_id(const char *account, char *out);

/* What creating one stores. Borrowed for the call. */
struct recurrences_new {
	const char *id, *connection, *idrec, *br_code;
	const struct recurrence_input *in;
};

/* Store recurrence n of `account` in `env` as the bank made it, CREATED;
 * cb gets 0 with its JSON, or -1 with err (the bank's idRec already names
 * another recurrence is an error too). */
void recurrences_create(struct rds *r, const struct config *cfg, enum env env, const char *account,
			const struct recurrences_new *n, store_fn cb, void *ud);

/* Recurrence `id` of `account` in `env`: cb gets 0 with its JSON, or
 * RECURRENCES_NOT_FOUND. */
void recurrences_get(struct rds *r, const struct config *cfg, enum env env, const char *account,
		     const char *id, store_fn cb, void *ud);

/* What a cancel needs of a recurrence. Borrowed for the callback. */
struct recurrences_record {
	const char *id, *idrec, *connection, *status, *json;
};
/* result 0 with rec, RECURRENCES_NOT_FOUND, or -1 with err. */
typedef void (*recurrences_fn)(void *ud, int result, const struct recurrences_record *rec,
			       const char *err);

/* Recurrence `id` of `account` in `env`, its record. */
void recurrences_read(struct rds *r, const struct config *cfg, enum env env, const char *account,
		      const char *id, recurrences_fn cb, void *ud);

/* A page of the account's recurrences, newest first ({"recurrences": [...],
 * "nextCursor"}); status "" any. */
void recurrences_list(struct rds *r, const struct config *cfg, enum env env, const char *account,
		      const char *status, int limit, const struct page_cursor *from, store_fn cb,
		      void *ud);

/* Where what the bank said comes from. */
enum recurrences_source {
	RECURRENCES_WEBHOOK,
	RECURRENCES_RECONCILIATION,
	RECURRENCES_REQUEST,
};

/* What the bank said of a recurrence of `account` in `env` (h borrowed):
 * its status taken when it is ahead of the recurrence's, with its event
 * (source in the event's data); with RECURRENCES_RECONCILIATION, the
 * recurrence is marked asked now. cb gets 0 (json: the recurrence, the
 * event written), RECURRENCES_DUPLICATE (json: the recurrence as it stands),
 * RECURRENCES_UNKNOWN (json NULL), or -1 with err. */
void recurrences_heard(struct rds *r, const struct config *cfg, enum env env, const char *account,
		       const struct recurrence_heard *h, enum recurrences_source source,
		       store_fn cb, void *ud);

/* The BR Code of recurrence `id` (for its QR image): cb gets 0 with it as
 * json, or RECURRENCES_NOT_FOUND. */
void recurrences_find_brcode(struct rds *r, const struct config *cfg, const char *id, store_fn cb,
			     void *ud);

/* The idRecs of connection `conn`'s recurrences not final, those the
 * reconciliation asked about longest ago first, at most `max`: cb gets 0
 * with them in json, separated by spaces ("" none), or -1 with err.
 * `account` is the connection's (its shard). */
void recurrences_open(struct rds *r, const struct config *cfg, const char *account,
		      const char *conn, int max, store_fn cb, void *ud);

#endif
