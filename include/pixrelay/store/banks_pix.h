/* banks_pix: the contract of bank_pix (src/store/lua/bank_pix.lua, whose
 * header lists the keys it derives), the script that writes what banks
 * report through the connections of one shard: what each argument means,
 * written here once and appended in that order by the functions below, and
 * what it answers of each item, decoded into struct banks_pix_heard.
 *
 * KEYS[1] = <prefix>{s<k>}:bank (names the shard; not written)
 * ARGV[1] = shard key prefix, [2] = now (ms), [3] = now as the charges write
 *   it, [4] = retention (seconds), [5] = number n of Pix, [6] = number m of
 *   refused items, then n Pix, each BANKS_PIX_ARGS + BANKS_PIX_REFUND_ARGS r:
 *   connection, account, env, source (webhook | reconciliation), day
 *   (Brasilia), endToEndId, txid ('' = none), charge id the txid names ('' =
 *   none), cents, horario (ms), Pix as JSON, what a charge it pays keeps
 *   (JSON), event id, cents refunded (DEVOLVIDO, all refunds of the Pix),
 *   number r of refunds, componentesValor ('' = none, '-' = its parts do not
 *   add up to valor, else its original in cents), then r times: refund id, status, cents, event id,
 *   refund as JSON, natureza ('' = none), MED (1 | 0), a second event id
 *   (the charge's refund, when a MED refund makes the Pix whole);
 *   then m refused items, each BANKS_PIX_REFUSAL_ARGS: connection, account,
 *   env, source, day, index, id, endToEndId ('' = not well-formed), cents
 *   ('' = unreadable), event id, reasons (JSON array), the item (JSON).
 * Returns, per Pix in order, BANKS_PIX_FIELDS + BANKS_PIX_REFUND_FIELDS r
 *   elements: outcome (paid | unmatched | duplicate), reason ('' or, for a
 *   duplicate, the first outcome's), event id ('' none), charge id ('' none),
 *   the connection that holds the Pix when another does (''); then per
 *   refund: outcome (refunded | included | reported | med | duplicate |
 *   elsewhere), event id (''), the charge's refund event id of a MED refund
 *   that made the Pix whole (''); then per refused item
 *   BANKS_PIX_REFUSAL_FIELDS: outcome (refused | duplicate), event id.
 *
 * A call is: banks_pix_args, then exactly n banks_pix_args_pix and m
 * banks_pix_args_refusal, in that order; then rds_script(...,
 * SCRIPT_BANK_PIX, BANKS_PIX_NKEYS, ...). Pure: no I/O.
 */
#ifndef PIXRELAY_BANKS_PIX_H
#define PIXRELAY_BANKS_PIX_H

#include "pixrelay/pix/bankpix.h"
#include "pixrelay/pix/event.h"
#include "pixrelay/redis/rargs.h"
#include "pixrelay/redis/redis.h"
#include "pixrelay/store/banks_conn.h"

#define BANKS_PIX_NKEYS 1
#define BANKS_PIX_ARGS 16	   /* arguments of a Pix, before its refunds' */
#define BANKS_PIX_REFUND_ARGS 8	   /* arguments of one refund */
#define BANKS_PIX_REFUSAL_ARGS 12  /* arguments of a refused item */
#define BANKS_PIX_FIELDS 5	   /* answer fields of a Pix, before its refunds' */
#define BANKS_PIX_REFUND_FIELDS 3  /* answer fields of one refund */
#define BANKS_PIX_REFUSAL_FIELDS 2 /* answer fields of a refused item */
#define BANKS_PIX_REASON_MAX 24	   /* "charge_refunded" and its NUL fit */
#define BANKS_PIX_CHARGE_MAX 32	   /* a charge id and its NUL */

/* KEYS[1] and ARGV[1..6]. Borrowed strings: alive until the call. */
struct banks_pix_call {
	const char *key;	  /* KEYS[1] <prefix>{s<k>}:bank */
	const char *shard_prefix; /* ARGV[1] <prefix>{s<k>}: */
	long long now_ms;	  /* [2] */
	const char *now_text;	  /* [3] now as timefmt_format writes it */
	long long retention_s;	  /* [4] */
	unsigned npix;		  /* [5] n: Pix (banks_pix_args_pix) */
	unsigned nrefused;	  /* [6] m: refused items (banks_pix_args_refusal) */
};

/* Append the key and ARGV[1..6] of c to a. */
void banks_pix_args(struct rargs *a, const struct banks_pix_call *c);

/* Who heard an item, and its day. Borrowed. */
struct banks_pix_who {
	const char *conn, *account, *env;
	const char *source; /* "webhook" | "reconciliation" */
	const char *day;    /* the item's day, Brasilia time (bankday_date) */
};

/* What the script is given of one Pix besides the Pix itself. Borrowed. */
struct banks_pix_item {
	const struct bankpix *pix;
	const char *charge; /* the charge its txid names in the account's shard ("" none) */
	const char *keep;   /* what a charge it pays keeps (JSON) */
	const char *event;  /* the id of the event it may make */
	long long refunded; /* cents of its DEVOLVIDO refunds */
	/* per refund of pix: its event id, and a second one (a MED refund
	 * that makes the Pix whole) */
	char (*refund_events)[2][EVENT_ID_MAX];
};

/* Append one of the n Pix. */
void banks_pix_args_pix(struct rargs *a, const struct banks_pix_who *w,
			const struct banks_pix_item *it);
/* Append one of the m refused items, `event` the id of the event it may
 * make. */
void banks_pix_args_refusal(struct rargs *a, const struct banks_pix_who *w,
			    const struct bankpix_refusal *f, const char *event);

/* What became of an item. */
enum banks_pix_outcome {
	BANKS_PIX_PAID = 0,	 /* it paid its charge */
	BANKS_PIX_UNMATCHED = 1, /* taken, and reported: reason says why it paid nothing */
	BANKS_PIX_DUPLICATE = 2, /* taken before: nothing moved */
	BANKS_PIX_REFUSED = 3,	 /* a refused item, reported (once) */
};
/* "paid", "unmatched", "duplicate", "refused". */
const char *banks_pix_outcome_name(enum banks_pix_outcome o);

/* What became of a Pix, or of a refused item (reason, charge and held_by
 * ""), copied out of the answer. */
struct banks_pix_heard {
	enum banks_pix_outcome outcome;
	char reason[BANKS_PIX_REASON_MAX]; /* "" or a word of bank_pix.lua (no_txid, ...) */
	char event[EVENT_ID_MAX];	   /* the event it made, or a duplicate's first; "" */
	char charge[BANKS_PIX_CHARGE_MAX]; /* the charge it names; "" */
	char held_by[BANKS_ID_MAX];	   /* the connection that holds it when another does */
};

/* The answer fields of a Pix with `nrefunds` refunds. */
size_t banks_pix_fields(size_t nrefunds);

/* Decode the Pix whose fields start at f (n fields left in the answer from
 * there) and that had `nrefunds` refunds. 0 with *out filled; -1 when fewer
 * than banks_pix_fields(nrefunds) are left, one is not a string, the outcome
 * is not paid | unmatched | duplicate, a refund's outcome not one of its
 * six, or a field is longer than it can be (out untouched then). */
int banks_pix_decode(redisReply *const *f, size_t n, size_t nrefunds, struct banks_pix_heard *out);
/* The same for a refused item (BANKS_PIX_REFUSAL_FIELDS fields; outcome
 * refused | duplicate). */
int banks_pix_decode_refusal(redisReply *const *f, size_t n, struct banks_pix_heard *out);

#endif
