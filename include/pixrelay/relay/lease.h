/* lease: the contract of event_settle (src/store/lua/event_settle.lua), the
 * script a dispatcher calls on each shard to record the outcomes of its
 * attempts and lease the next due events in one round trip: what each
 * argument means, written here once and appended in that order by the
 * functions below, and the leases of its answer, decoded into struct lease.
 *
 * KEYS[1] = <prefix>{s<k>}:hosts   KEYS[2] = <prefix>{s<k>}:lease
 * KEYS[3] = <prefix>{s<k>}:dead
 * ARGV[1] = shard key prefix, [2] = now (ms), [3] = lease (ms), [4] = how many to lease at
 *   most, [5] = token of this lease (its end, [2] + [3]: the score its leases get in the
 *   lease set, as written), [6] = attempt log cap, [7] = retention (seconds), [8] = how many
 *   events of one host to lease at most, unless listed, [9] = number h of hosts listed,
 *   [10] = number n of outcomes, [11] = how many events of one account to lease at most,
 *   unless listed, [12] = number a of accounts listed, [13] = how many sandbox events to
 *   lease at most, [14] = how many production events, [15] = number k of stream events
 *   delivered at their first attempt, then h pairs (host, how many of its events to lease
 *   at most), a pairs (account, how many of its events), then n times 11:
 *   event id, token of its lease (its end; a stream event's: its batch), outcome
 *   (delivered | retry | dead | release), next attempt (ms), HTTP status ('' = none),
 *   error text, attempt log entry (JSON), and
 *   what its lease answered: the attempt's number, the order key, the queue, the stream
 *   entry ('' = an event with a hash of its own); then k times 6, the outcome of a stream
 *   event delivered at its first attempt: stream entry, its batch, event id, order key,
 *   its record ("<when>\t<attempts>\t<status>\t<attempt json>\t<error>") and its
 *   queue;
 *   then, optionally, the stream entries the dispatcher read itself
 *   (lease_args_given): the entry it read after ("" = the stream's start), e,
 *   and e times 4: entry, order key, queue, event id. The script takes them
 *   when they start at or before its cursor, else reads the stream itself.
 *   An outcome counts when its lease in the lease set has its token as score
 *   (a stream event's: while its batch is in the lease set): a lease is only
 *   that member (leasing writes nothing into the event), and
 *   a later lease of the same event starts after this one ended or was
 *   recorded, so it ends later (docs/event-layout.md).
 *   and, optionally, the settings of webhook endpoints (lease_args_endpoints):
 *   "endpoints", the ms an endpoint must have failed every attempt to be disabled, and
 *   the attempts in a row it must have failed at least.
 * Returns {outcomes recorded, when the next event is due ('' = none) when nothing was
 *   leased, then for each leased event LEASE_FIELDS fields: its stream entry ('' = none),
 *   its meta (order key, queue, id, env, account, type, url, joined by newlines: a stream
 *   entry's field m), body, then for an event with a hash of its own its attempt's
 *   number, budget_base and budget start (created_ms, or the last replay) joined by tabs,
 *   '' for a stream event (1, 0, the entry's ms), then the account's signing secret,
 *   previous signing secret and compat secret joined by newlines}
 *   A delivery to a webhook endpoint (src/store/lua/lib/endpoint.lua) is leased as an
 *   event with a hash of its own: its id "<event id>/<endpoint id>", its order key its
 *   lane, its queue the endpoint's, its url the endpoint's, its secrets the endpoint's
 *   (no compat secret) followed by a newline and its static headers ("Name: value"
 *   lines).
 *   A stream event of an entry given has "" as meta and body; with entries
 *   given (or the tail with e = 0) the answer ends with the cursor after the
 *   call (lease_cursor).
 *   A lease is a member of the lease set: the event's id for an event with a hash of
 *   its own; the stream events one call leased are one member together, their batch
 *   "@<first entry>/<last entry>", counted in <prefix>{s<k>}:lb.
 *
 * A call is: lease_args (the keys and ARGV[1..15]), then exactly h
 * lease_args_host, a lease_args_account, n lease_args_outcome and k
 * lease_args_done, in that order; then rds_script(..., SCRIPT_EVENT_SETTLE,
 * LEASE_NKEYS, ...).
 */
#ifndef PIXRELAY_LEASE_H
#define PIXRELAY_LEASE_H

#include "pixrelay/redis/rargs.h"
#include "pixrelay/redis/redis.h"

#include <stdbool.h>
#include <stdint.h>

#define LEASE_NKEYS 3	    /* KEYS[1..3] */
#define LEASE_REPLY_FIRST 2 /* the first leased event's first field in the answer */
#define LEASE_FIELDS 5	    /* fields of one leased event in the answer */
/* a lease's token: its end in ms, or a batch "@<first entry>/<last entry>" */
#define LEASE_TOKEN_MAX 100
/* what a lease delivers: an event "evt_<ULID>", or an event's delivery to a
 * webhook endpoint "evt_<ULID>/wep_<ULID>" */
#define LEASE_ID_MAX 72

/* KEYS[1..3] and ARGV[1..14]. Borrowed strings: alive until the call. */
struct lease_call {
	const char *hosts_key;	  /* KEYS[1] <prefix>{s<k>}:hosts */
	const char *lease_key;	  /* KEYS[2] <prefix>{s<k>}:lease */
	const char *dead_key;	  /* KEYS[3] <prefix>{s<k>}:dead */
	const char *shard_prefix; /* ARGV[1] <prefix>{s<k>}: */
	uint64_t now_ms;	  /* [2] */
	long lease_ms;		  /* [3] how long a lease lasts */
	unsigned most;		  /* [4] events to lease at most */
	const char *token;	  /* [5] the token of this call's leases */
	long log_cap;		  /* [6] attempt log cap */
	long retention_s;	  /* [7] */
	unsigned host_most;	  /* [8] events of a host not listed, at most */
	unsigned nhosts;	  /* [9] h: hosts listed (lease_args_host) */
	unsigned noutcomes;	  /* [10] n: outcomes (lease_args_outcome) */
	unsigned account_most;	  /* [11] events of an account not listed, at most */
	unsigned naccounts;	  /* [12] a: accounts listed (lease_args_account) */
	unsigned sandbox_most;	  /* [13] sandbox events, at most */
	unsigned production_most; /* [14] production events, at most */
	unsigned ndone;		  /* [15] k: stream events delivered (lease_args_done) */
};

/* Append the keys and ARGV[1..15] of c to a. */
void lease_args(struct rargs *a, const struct lease_call *c);
/* Append one of the h pairs: a host and how many of its events to lease at
 * most (borrowed). */
void lease_args_host(struct rargs *a, const char *host, unsigned most);
/* Append one of the a pairs: an account and how many of its events to lease
 * at most (borrowed). */
void lease_args_account(struct rargs *a, const char *account, unsigned most);
/* One of the n outcomes: the event, the token of its lease, what happened
 * (delivered | retry | dead | release), when to try again (ms), the HTTP
 * status (none when <= 0), the error text, the attempt log entry (JSON), and
 * what its lease gave: its attempt's number, order key, queue and stream
 * entry ("" = none). Strings borrowed. */
struct lease_outcome {
	const char *id, *token, *what;
	long long next_ms;
	long status;
	const char *error, *entry;
	int attempts;
	const char *order, *queue, *sid;
};

/* Append one of the n outcomes. */
void lease_args_outcome(struct rargs *a, const struct lease_outcome *o);
/* Append one of the k outcomes of a stream event delivered at its first
 * attempt: its stream entry, the token of its lease, its id, its order key,
 * its record (lease_done_record) and its queue (for the overview's counters,
 * lib/overview.lua). Strings borrowed. */
void lease_args_done(struct rargs *a, const char *sid, const char *token, const char *id,
		     const char *order, const char *record, const char *queue);
/* Append the settings of webhook endpoints: how long (ms) an endpoint must
 * have failed every attempt, and how many attempts in a row at least, to be
 * disabled. Last, after everything else. */
void lease_args_endpoints(struct rargs *a, long long disable_after_ms, long disable_min);
/* Append the stream entries the dispatcher read itself (XRANGE from `from`,
 * exclusive, "" = the stream's start: event_settle.lua's optional tail):
 * `from` and their number n, then n lease_args_entry. With them (n may be 0)
 * the answer ends with the cursor after the call (lease_cursor). */
void lease_args_given(struct rargs *a, const char *from, unsigned n);
/* True when a stream entry's meta has its head (three lines and more). */
bool lease_meta_has_head(const char *meta);
/* Append one given entry: its id and the head of its meta (order key, queue,
 * event id: the meta's first three lines). -1 (nothing appended) when the
 * meta has fewer. Borrowed. */
int lease_args_entry(struct rargs *a, const char *sid, const char *meta);
/* The cursor at the end of an answer to a call with given entries, or NULL
 * (borrowed from the answer). */
const char *lease_cursor(const redisReply *answer);

/* The record of a delivered stream event: "<when>\t<attempts>\t<status>\t<attempt
 * log entry>\t<error>", allocated (the caller frees it). */
char *lease_done_record(long long when_ms, int attempts, long status, const char *entry,
			const char *error);

/* One leased event, its strings borrowed from the reply (valid during the
 * reply's callback; lease_decode cuts the meta field into them in place). */
struct lease {
	const char *id;
	const char *url;
	const char *body;
	int attempts;	      /* this one included */
	int budget_base;      /* attempts made before the retry budget's start */
	long long created_ms; /* the retry budget's start: created, or last replayed */
	const char *account;
	const char *env; /* "sandbox" | "production" */
	const char *signing;
	const char *signing_prev;
	const char *compat;
	const char *order;    /* its order key (a charge): events of one go one after another */
	const char *queue;    /* its delivery queue "<env>:<account>:<host>" */
	const char *sid;      /* its entry in the shard's stream, "" when it has a hash */
	const char *endpoint; /* a delivery to a webhook endpoint: its id (in `id`, after '/');
				 "" for the postbackUrl */
	const char *headers;  /* the endpoint's static headers, "Name: value" lines, or "" */
};

/* Decode the leased event whose fields start at f (n fields left in the
 * answer from there), writing NULs into its meta, counts and secrets
 * fields. 0 with *out filled; -1 when fewer than LEASE_FIELDS are left, one
 * is not a string, or the meta has not its 7 parts, the counts (when given)
 * not their 3 or the secrets not their 3 (out untouched then, the fields
 * split so far). */
int lease_decode(redisReply *const *f, size_t n, struct lease *out);
/* The same for a leased event of an entry the dispatcher gave (its meta and
 * body '' in the answer): `meta` (written into) and `body` are the entry's. */
int lease_decode_given(redisReply *const *f, size_t n, char *meta, const char *body,
		       struct lease *out);

/* The batch of the stream events an answer leased, "@<first entry>/<last
 * entry>" (their token, in the outcomes sent back), into out; "" when it
 * leased none or an entry id is longer than an entry id can be. Call before
 * lease_decode (it reads the entry ids only). */
void lease_batch(const redisReply *answer, char *out, size_t size);

#endif
