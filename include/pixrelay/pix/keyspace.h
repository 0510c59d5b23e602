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
 * under {<env>}; API keys under {keys}.
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

/* "<prefix>{s<k>}:" */
void ks_shard_prefix(char *out, size_t size, const char *prefix, int shard);
/* "<prefix>{<env>}:" */
void ks_env_prefix(char *out, size_t size, const char *prefix, enum env env);

/* "<prefix>{s<k>}:<what><id>" where k is the shard of `id`. Returns 0, or -1
 * (out = "") when id names no shard. */
int ks_key(char *out, size_t size, const char *prefix, const char *what, const char *id);
/* The record of account `id` of `env`: "<prefix>{s<k>}:acct:<env>:<id>". */
int ks_account_key(char *out, size_t size, const char *prefix, enum env env, const char *id);

/* The Redis pub/sub channel that tells every process to forget what it
 * cached ("<prefix>invalidate"; messages "k:<sha256 of an API key>",
 * "a:<account id>"). */
void ks_invalidation_channel(char *out, size_t size, const char *prefix);

#endif
