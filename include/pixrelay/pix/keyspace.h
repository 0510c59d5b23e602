/* keyspace: where data lives in Redis (no I/O).
 *
 * Everything of one account lives under the hash tag of one shard, {s<k>}:
 * the account record, its charges and their externalID map, its balance and
 * ledger, its upstream notification ids, and its events with their delivery
 * queue. A state change and the event it produces are then one script on
 * one slot, and a Redis Cluster spreads accounts over its primaries.
 *
 * A shard is named by the identifiers themselves: the last two Crockford
 * base32 characters of an account id (a ULID), of its charges' ids and of
 * its events' ids ("evt_" + ULID) encode the shard k (0 .. 1023). So any id
 * leads straight to its keys, in any process, whatever its settings; the
 * `shards` setting only says among how many shards new accounts are spread
 * (and which shards a dispatcher watches).
 *
 * Data shared by the accounts of an environment (taxID and Pix key
 * indexes, group members, the list of accounts, the platform account) lives
 * under {<env>}; API keys under {keys}; what the processes say about
 * themselves under {meta}.
 *
 * Every name pixrelay gives a Redis key or channel is spelled in this
 * module, one function per kind, grouped below by the hash tag the key lives
 * under; docs/storage.md lists the same names, and tests/unit/test-keyspace.c
 * holds the two together. The Lua scripts (src/store/lua/) build a few more
 * names themselves, from the prefix of a tag they are given (ks_shard_prefix,
 * ks_env_prefix, ks_keys_prefix): those are listed here too, under "in the
 * scripts".
 *
 * Every function writes a NUL-terminated name into `out` (`size` bytes,
 * KS_KEY_MAX for a key, KS_PREFIX_MAX for a prefix), cut short like
 * snprintf when it does not fit. `prefix` is the `prefix` setting
 * ("pixrelay:" by default), borrowed.
 */
#ifndef PIXRELAY_KEYSPACE_H
#define PIXRELAY_KEYSPACE_H

#include "pixrelay/pix/env.h"
#include "pixrelay/core/ids.h"

#include <stddef.h>
#include <stdint.h>

#define KS_SHARDS_MAX 1024
#define KS_PREFIX_MAX 160 /* a shard prefix "<prefix>{s1023}:" fits, for any prefix setting */
#define KS_KEY_MAX 320	  /* a key name built by this module fits */
#define KS_EVENT_ID_MAX 32

/* ---- ids and shards ---- */

/* The shard an id names (a ULID, or a ULID after a 4-character type prefix
 * such as "evt_" or "trf_"), or -1 when it is neither. */
int ks_shard_of(const char *id);

/* A new ULID for now (or `ms`) naming `shard` (0 .. KS_SHARDS_MAX-1). */
void ks_ulid(int shard, char out[IDS_ULID_LEN + 1]);
void ks_ulid_at(int shard, uint64_t ms, char out[IDS_ULID_LEN + 1]);
/* A new event id, "evt_" + ks_ulid. */
void ks_event_id(int shard, char out[KS_EVENT_ID_MAX]);

/* A shard for a new account, at random among `nshards`. */
int ks_random_shard(long nshards);

/* ---- {s<k>}: one shard ----
 *
 * Each function below takes the shard k the key lives in (for an id,
 * ks_shard_of(id)) and returns 0, or -1 with out = "" when k is not a shard
 * (0 .. KS_SHARDS_MAX-1; ks_shard_of answers -1 for an id that names none).
 *
 * In the scripts: "o:<order key>" (events of one charge not yet settled),
 * "due:<queue>" (due events of one delivery queue), an event's delivery to a
 * webhook endpoint "e:<event id>/<endpoint id>" with its attempt log
 * "log:<event id>/<endpoint id>" (the lane "o:<endpoint id>:<order key>"),
 * the overview's counters per minute and hour "ovm:<minute>", "ovh:<hour>"
 * and what failed per scope "ovf:<hour>:<env>[:<account>]", and what bank
 * connections heard (bank_pix): "bown:<env>:<account>:<endToEndId>",
 * "brefused:<env>:<account>:<endToEndId or SHA-256>",
 * "bdev:<connection>:<endToEndId>:<refund id>:<status>",
 * "bday:<connection>:<day>", "brec:<connection>:<day>" and
 * "bels:<connection>:<day>"; "bpix:<connection>:<endToEndId>" is the
 * previous layout's, read only.
 */

/* "<prefix>{s<k>}:", the shard prefix the scripts get (their `p`). Writes
 * any `shard` as it is. */
void ks_shard_prefix(char *out, size_t size, const char *prefix, int shard);

/* "<prefix>{s<k>}:acct:<env>:<id>", the record of account `id` of `env`, in
 * the shard of `id`. Returns 0, or -1 (out = "") when id names no shard. */
int ks_account_key(char *out, size_t size, const char *prefix, enum env env, const char *id);

/* "<prefix>{s<k>}:ch:<id>", a charge (hash). */
int ks_charge_key(char *out, size_t size, const char *prefix, int shard, const char *id);
/* "<prefix>{s<k>}:ch:", ks_charge_key without the id (charge_create and
 * charge_list append it). */
int ks_charge_key_prefix(char *out, size_t size, const char *prefix, int shard);
/* "<prefix>{s<k>}:ext:<account>", externalID -> "<charge id> <fingerprint>"
 * (hash). */
int ks_external_ids_key(char *out, size_t size, const char *prefix, int shard, const char *account);
/* "<prefix>{s<k>}:cres:<account>", charges of the account being created at
 * its bank (hash externalID -> "<id> <fingerprint> <until ms>"), so that a
 * retry puts the same txid. */
int ks_charge_reservations_key(char *out, size_t size, const char *prefix, int shard,
			       const char *account);
/* "<prefix>{s<k>}:charges:<account>", the account's charges by creation time
 * (zset). */
int ks_charge_index_key(char *out, size_t size, const char *prefix, int shard, const char *account);
/* "<prefix>{s<k>}:expiry", pending charges of the shard by expires_ms
 * (zset). */
int ks_expiry_key(char *out, size_t size, const char *prefix, int shard);
/* "<prefix>{s<k>}:ledger:<account>", balance changes, newest first (list). */
int ks_ledger_key(char *out, size_t size, const char *prefix, int shard, const char *account);
/* "<prefix>{s<k>}:files:<account>", the account's KYC files: SHA-256 ->
 * bytes (hash). */
int ks_files_key(char *out, size_t size, const char *prefix, int shard, const char *account);

/* "<prefix>{s<k>}:idem:<caller>:<sha256>", a transfer's Idempotency-Key, by
 * the SHA-256 (hex) of its text (string). */
int ks_idempotency_key(char *out, size_t size, const char *prefix, int shard, const char *caller,
		       const char *sha256_hex);
/* "<prefix>{s<k>}:xfer:<transfer id>", a transfer across shards not yet
 * finished (hash, in the source's shard). */
int ks_transfer_key(char *out, size_t size, const char *prefix, int shard, const char *id);
/* "<prefix>{s<k>}:xout", the shard's transfers not yet finished (zset). */
int ks_transfers_out_key(char *out, size_t size, const char *prefix, int shard);
/* "<prefix>{s<k>}:xin:<transfer id>", a transfer credited here, once
 * (string, in the destination's shard). */
int ks_transfer_in_key(char *out, size_t size, const char *prefix, int shard, const char *id);

/* "<prefix>{s<k>}:e:<event id>", an event (hash). */
int ks_event_key(char *out, size_t size, const char *prefix, int shard, const char *id);
/* "<prefix>{s<k>}:log:<event id>", an event's attempt log (list). */
int ks_event_log_key(char *out, size_t size, const char *prefix, int shard, const char *id);
/* "<prefix>{s<k>}:a:<account>", the account's events by creation time
 * (zset). */
int ks_event_index_key(char *out, size_t size, const char *prefix, int shard, const char *account);
/* "<prefix>{s<k>}:hosts", the delivery queues of the shard -> when their
 * earliest due event may go (zset). */
int ks_hosts_key(char *out, size_t size, const char *prefix, int shard);
/* "<prefix>{s<k>}:lease", events being delivered -> when their lease runs
 * out (zset). */
int ks_lease_key(char *out, size_t size, const char *prefix, int shard);
/* "<prefix>{s<k>}:s", the shard's stream of events (layout 3). */
int ks_stream_key(char *out, size_t size, const char *prefix, int shard);
/* "<prefix>{s<k>}:dead", dead events (zset). */
int ks_dead_key(char *out, size_t size, const char *prefix, int shard);
/* "<prefix>{s<k>}:up:<account>:<upstream id>", an ingested notification's
 * id -> its event (string, expires with the retention). */
int ks_upstream_key(char *out, size_t size, const char *prefix, int shard, const char *account,
		    const char *id);
/* "<prefix>{s<k>}:ingest", the key the ingest script is called with: it
 * names the shard and is never written. */
int ks_ingest_key(char *out, size_t size, const char *prefix, int shard);
/* "<prefix>{s<k>}:live", set while a process serves a live event stream for
 * an account of the shard: the channel to publish new events on (string). */
int ks_live_key(char *out, size_t size, const char *prefix, int shard);

/* "<prefix>{s<k>}:ep:<endpoint id>", a webhook endpoint (hash), in the
 * shard of its account. */
int ks_endpoint_key(char *out, size_t size, const char *prefix, int shard, const char *id);
/* "<prefix>{s<k>}:eps:<env>:<account>", the account's endpoints in env by
 * creation time (zset). */
int ks_endpoint_index_key(char *out, size_t size, const char *prefix, int shard, enum env env,
			  const char *account);
/* "<prefix>{s<k>}:held", the delivery queues of the shard's disabled
 * endpoints -> when each was disabled (zset): their deliveries wait there,
 * not leased, until the endpoint is enabled again or they are older than the
 * retention. */
int ks_held_key(char *out, size_t size, const char *prefix, int shard);
/* A new endpoint id, "wep_" + ks_ulid of `shard` (its account's). */
void ks_endpoint_id(int shard, char out[KS_EVENT_ID_MAX]);

/* "<prefix>{s<k>}:bank:<connection id>", a bank connection (hash). */
int ks_bank_key(char *out, size_t size, const char *prefix, int shard, const char *id);
/* "<prefix>{s<k>}:bank:", ks_bank_key without the id (bank_connect appends
 * it). */
int ks_bank_key_prefix(char *out, size_t size, const char *prefix, int shard);
/* "<prefix>{s<k>}:banks:<account>", the account's bank connections by
 * creation time (zset). */
int ks_bank_index_key(char *out, size_t size, const char *prefix, int shard, const char *account);
/* "<prefix>{s<k>}:blog:<connection id>", what a bank connection heard,
 * newest first (list). */
int ks_bank_log_key(char *out, size_t size, const char *prefix, int shard, const char *id);
/* "<prefix>{s<k>}:bank", the key the bank_pix script is called with: it
 * names the shard and is never written. */
int ks_bank_pix_key(char *out, size_t size, const char *prefix, int shard);
/* "<prefix>{s<k>}:bref:<connection id>", refunds pixrelay asked the
 * connection's bank for and has not heard settled: "<endToEndId> <refund
 * id>" -> when asked (ms) (zset; the reconciliation asks the bank). */
int ks_bank_refunds_key(char *out, size_t size, const char *prefix, int shard, const char *id);
/* "<prefix>{s<k>}:bread:<connection id>", the spans of the bank's list of
 * Pix (by horario) its reconciliation read whole: "<from ms>-<to ms>" ->
 * from (zset, merged, at most BANKDAY_READS_MAX; bank_recon_done). */
int ks_bank_read_key(char *out, size_t size, const char *prefix, int shard, const char *id);
/* "<prefix>{s<k>}:bankrec", the reconciliation's schedule of the shard's
 * connections with API credentials: id -> when the next one is due, or
 * while one runs, when its lease runs out (zset; bank_recon). */
int ks_bank_schedule_key(char *out, size_t size, const char *prefix, int shard);
/* "<prefix>{s<k>}:bankok:<env>", those of env by when their last
 * reconciliation succeeded (zset). */
int ks_bank_ok_key(char *out, size_t size, const char *prefix, int shard, enum env env);
/* "<prefix>{s<k>}:bday:<connection id>:<day>", what a connection heard on
 * one day (YYYY-MM-DD, Brasilia time), "<prefix>{s<k>}:brec:<connection
 * id>:<day>", the endToEndIds its reconciliation took first that day, and
 * "<prefix>{s<k>}:bels:<connection id>:<day>", the Pix it reported that
 * another connection of the account held ("<endToEndId> <connection>"). */
int ks_bank_day_key(char *out, size_t size, const char *prefix, int shard, const char *id,
		    const char *day);
int ks_bank_recovered_key(char *out, size_t size, const char *prefix, int shard, const char *id,
			  const char *day);
int ks_bank_elsewhere_key(char *out, size_t size, const char *prefix, int shard, const char *id,
			  const char *day);

/* Pix Automático (docs/recurrences.md): "<prefix>{s<k>}:rec:<id>", a
 * recurrence (hash; its id "rec_" + ULID of its account's shard). */
int ks_recurrence_key(char *out, size_t size, const char *prefix, int shard, const char *id);
/* "<prefix>{s<k>}:recs:<account>", the account's recurrences by creation
 * time (zset). */
int ks_recurrence_index_key(char *out, size_t size, const char *prefix, int shard,
			    const char *account);
/* "<prefix>{s<k>}:recx:<account>", the bank's idRec -> the recurrence's id
 * (hash). */
int ks_recurrence_idrec_key(char *out, size_t size, const char *prefix, int shard,
			    const char *account);
/* "<prefix>{s<k>}:recopen:<connection id>", the connection's recurrences
 * not final -> when the reconciliation last asked the bank of each (ms,
 * their creation at first; zset). */
int ks_recurrence_open_key(char *out, size_t size, const char *prefix, int shard,
			   const char *connection);
/* "<prefix>{s<k>}:cobropen:<connection id>", the connection's recurring
 * charges not final -> when the reconciliation last asked the bank of each
 * (ms, their creation at first; zset). */
int ks_cobr_open_key(char *out, size_t size, const char *prefix, int shard, const char *connection);
/* "<prefix>{s<k>}:recch:<account>:<recurrence id>", the recurring charges
 * of the account's recurrence by creation (ms; zset; charge_create adds). */
int ks_recurrence_charges_key(char *out, size_t size, const char *prefix, int shard,
			      const char *account, const char *id);

/* ---- {<env>}: one environment ----
 *
 * In the scripts: "members:<account>" and "member:<cpf>" (the CPFs each
 * account names, the accounts naming each CPF), "owners" (account -> owner),
 * "made:<key id>" (the accounts a key made in the last hour, and its
 * creations refused for a taxID already registered), "usage" (quota
 * counters).
 */

/* "<prefix>{<env>}:", the environment prefix the scripts get (their `g`). */
void ks_env_prefix(char *out, size_t size, const char *prefix, enum env env);
/* "<prefix>{<env>}:taxids", taxID -> account id (hash). */
void ks_env_taxids_key(char *out, size_t size, const char *prefix, enum env env);
/* "<prefix>{<env>}:pixkeys", Pix key -> account id (hash). */
void ks_env_pixkeys_key(char *out, size_t size, const char *prefix, enum env env);
/* "<prefix>{<env>}:accounts", the accounts by creation time (zset). */
void ks_env_accounts_key(char *out, size_t size, const char *prefix, enum env env);
/* "<prefix>{<env>}:platform", the platform account's id (string). */
void ks_env_platform_key(char *out, size_t size, const char *prefix, enum env env);
/* "<prefix>{<env>}:kyc", account id -> review status (hash). */
void ks_env_kyc_key(char *out, size_t size, const char *prefix, enum env env);
/* "<prefix>{<env>}:review", the accounts waiting for review, by creation
 * time (zset). */
void ks_env_review_key(char *out, size_t size, const char *prefix, enum env env);
/* "<prefix>{<env>}:banks", every bank connection of the environment by
 * creation time (zset). */
void ks_env_banks_key(char *out, size_t size, const char *prefix, enum env env);
/* "<prefix>{<env>}:bankrec" and "<prefix>{<env>}:bankok": where an earlier
 * version kept the schedule ks_bank_schedule_key and ks_bank_ok_key keep
 * per shard; read once at start and moved there (banks_recon_move). */
void ks_env_bankrec_key(char *out, size_t size, const char *prefix, enum env env);
void ks_env_bankok_key(char *out, size_t size, const char *prefix, enum env env);

/* ---- {keys}: API keys ----
 *
 * In the scripts: "env:<env>" and "acct:<env>:<account>", key ids by
 * creation time (zsets, like "all").
 */

/* "<prefix>{keys}:", the prefix key_list gets. */
void ks_keys_prefix(char *out, size_t size, const char *prefix);
/* "<prefix>{keys}:h:<sha256>", a key's record, by the SHA-256 (hex) of its
 * text (hash). */
void ks_keys_record_key(char *out, size_t size, const char *prefix, const char *sha256_hex);
/* "<prefix>{keys}:id:<key id>", key id -> SHA-256 (string). */
void ks_keys_id_key(char *out, size_t size, const char *prefix, const char *key_id);
/* "<prefix>{keys}:all", every key id by creation time (zset). key_create
 * finds the {keys} prefix by cutting "all" off this name. */
void ks_keys_all_key(char *out, size_t size, const char *prefix);

/* ---- {meta}: the data layout and the processes ---- */

/* "<prefix>{meta}:layout", the data layout's version (string). */
void ks_meta_layout_key(char *out, size_t size, const char *prefix);
/* "<prefix>{meta}:dispatchers", a dispatching process's id -> "<ms> <base
 * URL>", its heartbeat (hash). */
void ks_meta_dispatchers_key(char *out, size_t size, const char *prefix);

/* ---- pub/sub channels (no hash tag) ---- */

/* "<prefix>invalidate": tells every process to forget what it cached; the
 * messages are the names of the cache's entries, below. */
void ks_invalidation_channel(char *out, size_t size, const char *prefix);
/* "k:<sha256>", the cached lookup of the API key of that SHA-256 (hex). */
void ks_invalidation_key_message(char *out, size_t size, const char *sha256_hex);
/* "a:<account id>", the cached facts of an account. */
void ks_invalidation_account_message(char *out, size_t size, const char *account);
/* "b:<connection id>", the cached view of a bank connection. */
void ks_invalidation_bank_message(char *out, size_t size, const char *id);
/* "<prefix>live": new events, for the live event streams of this process
 * (the value of ks_live_key). */
void ks_live_channel(char *out, size_t size, const char *prefix);
/* "<prefix>deliveries": each delivery's outcome, for pixrelay tail. */
void ks_deliveries_channel(char *out, size_t size, const char *prefix);

#endif
