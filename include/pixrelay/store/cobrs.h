/* cobrs: Pix Automático's recurring charges as the store keeps what their
 * bank says (docs/recurrences.md, "Recurring charges"). A recurring charge
 * is a charge (store/charges.h) with its recurrence, idRec and bank
 * connection; what its bank reports (its /cobr callback, the
 * reconciliation's GET /cobr/{txid}) is written by cobr_heard.lua: each
 * attempt rejected and each retry scheduled an event once, a final status
 * the charge's (EXPIRED, FAILED) with its event, in the charge's lane. The
 * Pix that pays it is bank_pix's, as a /pix callback's (banks_receive.h).
 */
#ifndef PIXRELAY_COBRS_H
#define PIXRELAY_COBRS_H

#include "pixrelay/core/config.h"
#include "pixrelay/pix/cobr.h"
#include "pixrelay/pix/env.h"
#include "pixrelay/redis/redis.h"
#include "pixrelay/store/store.h"

/* Expected outcomes besides 0 and -1. */
enum cobrs_result {
	COBRS_DUPLICATE = 1, /* nothing new: json is the charge's status */
	COBRS_UNKNOWN = 2,   /* no recurring charge of the account has that txid and idRec */
};

/* Where what the bank said comes from. */
enum cobrs_source {
	COBRS_WEBHOOK,
	COBRS_RECONCILIATION,
	COBRS_REQUEST, /* the bank's answer to the merchant's retry or cancel */
};

/* What the bank said of recurring charge h->txid of `account` in `env` (h
 * borrowed): written with its events (cobr_heard.lua); with
 * COBRS_RECONCILIATION the charge is marked asked now. cb gets 0 (json: the
 * charge's status), COBRS_DUPLICATE, COBRS_UNKNOWN, or -1 with err. */
void cobrs_heard(struct rds *r, const struct config *cfg, enum env env, const char *account,
		 const struct cobr_heard *h, enum cobrs_source source, store_fn cb, void *ud);

#define COBRS_OPEN_MAX 16 /* recurring charges a reconciliation run asks about */

/* The txids of connection `conn`'s recurring charges not final (of
 * `account`'s shard), those the reconciliation asked about longest ago
 * first, at most `max`: cb gets 0 with them space-separated ("" none), or
 * -1 with err. */
void cobrs_open(struct rds *r, const struct config *cfg, const char *account, const char *conn,
		int max, store_fn cb, void *ud);

#endif
