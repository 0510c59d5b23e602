/* keyspace: the names of pixrelay's Redis keys and channels, and the ids
 * that name their shard. Each name is spelled once, in the one function of
 * its kind below (its format after the tag's prefix); the tags' prefixes are
 * spelled in ks_shard_prefix, ks_env_prefix, ks_keys_prefix and meta_prefix.
 * docs/storage.md lists the same names, and tests/unit/test-keyspace.c
 * checks both. What the keys hold, and which script changes them, is in
 * docs/storage.md and src/store/lua/.
 */
#include "pixrelay/pix/keyspace.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char crockford[] = IDS_CROCKFORD;

int ks_shard_of(const char *id)
{
	const char *u = id;

	if (strlen(id) == IDS_ULID_LEN + 4 && id[3] == '_')
		u = id + 4;
	if (!ids_is_ulid(u))
		return -1;
	return ids_crockval(u[IDS_ULID_LEN - 2]) * 32 + ids_crockval(u[IDS_ULID_LEN - 1]);
}

/* The last two characters of a ULID name its shard. */
static void ulid_stamp(int shard, char out[IDS_ULID_LEN + 1])
{
	out[IDS_ULID_LEN - 2] = crockford[(shard >> 5) & 31];
	out[IDS_ULID_LEN - 1] = crockford[shard & 31];
}

void ks_ulid_at(int shard, uint64_t ms, char out[IDS_ULID_LEN + 1])
{
	ids_ulid_at(out, ms);
	ulid_stamp(shard, out);
}

void ks_ulid(int shard, char out[IDS_ULID_LEN + 1])
{
	ks_ulid_at(shard, ids_now_ms(), out);
}

void ks_event_id(int shard, char out[KS_EVENT_ID_MAX])
{
	memcpy(out, "evt_", 4);
	ids_pooled_ulid_at(out + 4, ids_now_ms());
	ulid_stamp(shard, out + 4);
}

void ks_endpoint_id(int shard, char out[KS_EVENT_ID_MAX])
{
	memcpy(out, "wep_", 4);
	ks_ulid(shard, out + 4);
}

int ks_random_shard(long nshards)
{
	uint32_t r;

	if (nshards <= 1)
		return 0;
	ids_random(&r, sizeof(r));
	return (int)(r % (uint32_t)(nshards > KS_SHARDS_MAX ? KS_SHARDS_MAX : nshards));
}

/* ---- tags ---- */

void ks_shard_prefix(char *out, size_t size, const char *prefix, int shard)
{
	snprintf(out, size, "%s{s%d}:", prefix, shard);
}

void ks_env_prefix(char *out, size_t size, const char *prefix, enum env env)
{
	snprintf(out, size, "%s{%s}:", prefix, env_name(env));
}

void ks_keys_prefix(char *out, size_t size, const char *prefix)
{
	snprintf(out, size, "%s{keys}:", prefix);
}

static void meta_prefix(char *out, size_t size, const char *prefix)
{
	snprintf(out, size, "%s{meta}:", prefix);
}

/* Append `fmt` to the tag's prefix already in out, as one snprintf of the
 * whole name would (cut short the same way). */
static void vappend(char *out, size_t size, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
static void vappend(char *out, size_t size, const char *fmt, va_list ap)
{
	size_t n = size ? strlen(out) : 0;

	if (n + 1 < size)
		vsnprintf(out + n, size - n, fmt, ap);
}

static void append(char *out, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void append(char *out, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vappend(out, size, fmt, ap);
	va_end(ap);
}

/* "<prefix>{s<shard>}:" + fmt; 0, or -1 with out = "" when shard is none. */
static int in_shard(char *out, size_t size, const char *prefix, int shard, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int in_shard(char *out, size_t size, const char *prefix, int shard, const char *fmt, ...)
{
	va_list ap;

	if (shard < 0 || shard >= KS_SHARDS_MAX) {
		if (size)
			out[0] = '\0';
		return -1;
	}
	ks_shard_prefix(out, size, prefix, shard);
	va_start(ap, fmt);
	vappend(out, size, fmt, ap);
	va_end(ap);
	return 0;
}

/* "<prefix>{<env>}:" + name */
static void in_env(char *out, size_t size, const char *prefix, enum env env, const char *name)
{
	ks_env_prefix(out, size, prefix, env);
	append(out, size, "%s", name);
}

/* "<prefix>{keys}:" + fmt */
static void in_keys(char *out, size_t size, const char *prefix, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void in_keys(char *out, size_t size, const char *prefix, const char *fmt, ...)
{
	va_list ap;

	ks_keys_prefix(out, size, prefix);
	va_start(ap, fmt);
	vappend(out, size, fmt, ap);
	va_end(ap);
}

/* "<prefix>{meta}:" + name */
static void in_meta(char *out, size_t size, const char *prefix, const char *name)
{
	meta_prefix(out, size, prefix);
	append(out, size, "%s", name);
}

/* "<prefix>" + name: channels have no tag */
static void channel(char *out, size_t size, const char *prefix, const char *name)
{
	snprintf(out, size, "%s%s", prefix, name);
}

/* ---- {s<k>}: one shard ---- */

int ks_account_key(char *out, size_t size, const char *prefix, enum env env, const char *id)
{
	return in_shard(out, size, prefix, ks_shard_of(id), "acct:%s:%s", env_name(env), id);
}

int ks_charge_key(char *out, size_t size, const char *prefix, int shard, const char *id)
{
	return in_shard(out, size, prefix, shard, "ch:%s", id);
}

int ks_charge_key_prefix(char *out, size_t size, const char *prefix, int shard)
{
	return ks_charge_key(out, size, prefix, shard, "");
}

int ks_external_ids_key(char *out, size_t size, const char *prefix, int shard, const char *account)
{
	return in_shard(out, size, prefix, shard, "ext:%s", account);
}

int ks_charge_reservations_key(char *out, size_t size, const char *prefix, int shard,
			       const char *account)
{
	return in_shard(out, size, prefix, shard, "cres:%s", account);
}

int ks_charge_index_key(char *out, size_t size, const char *prefix, int shard, const char *account)
{
	return in_shard(out, size, prefix, shard, "charges:%s", account);
}

int ks_expiry_key(char *out, size_t size, const char *prefix, int shard)
{
	return in_shard(out, size, prefix, shard, "expiry");
}

int ks_ledger_key(char *out, size_t size, const char *prefix, int shard, const char *account)
{
	return in_shard(out, size, prefix, shard, "ledger:%s", account);
}

int ks_files_key(char *out, size_t size, const char *prefix, int shard, const char *account)
{
	return in_shard(out, size, prefix, shard, "files:%s", account);
}

int ks_idempotency_key(char *out, size_t size, const char *prefix, int shard, const char *caller,
		       const char *sha256_hex)
{
	return in_shard(out, size, prefix, shard, "idem:%s:%s", caller, sha256_hex);
}

int ks_transfer_key(char *out, size_t size, const char *prefix, int shard, const char *id)
{
	return in_shard(out, size, prefix, shard, "xfer:%s", id);
}

int ks_transfers_out_key(char *out, size_t size, const char *prefix, int shard)
{
	return in_shard(out, size, prefix, shard, "xout");
}

int ks_transfer_in_key(char *out, size_t size, const char *prefix, int shard, const char *id)
{
	return in_shard(out, size, prefix, shard, "xin:%s", id);
}

int ks_event_key(char *out, size_t size, const char *prefix, int shard, const char *id)
{
	return in_shard(out, size, prefix, shard, "e:%s", id);
}

int ks_event_log_key(char *out, size_t size, const char *prefix, int shard, const char *id)
{
	return in_shard(out, size, prefix, shard, "log:%s", id);
}

int ks_event_index_key(char *out, size_t size, const char *prefix, int shard, const char *account)
{
	return in_shard(out, size, prefix, shard, "a:%s", account);
}

int ks_hosts_key(char *out, size_t size, const char *prefix, int shard)
{
	return in_shard(out, size, prefix, shard, "hosts");
}

int ks_lease_key(char *out, size_t size, const char *prefix, int shard)
{
	return in_shard(out, size, prefix, shard, "lease");
}

int ks_stream_key(char *out, size_t size, const char *prefix, int shard)
{
	return in_shard(out, size, prefix, shard, "s");
}

int ks_dead_key(char *out, size_t size, const char *prefix, int shard)
{
	return in_shard(out, size, prefix, shard, "dead");
}

int ks_upstream_key(char *out, size_t size, const char *prefix, int shard, const char *account,
		    const char *id)
{
	return in_shard(out, size, prefix, shard, "up:%s:%s", account, id);
}

int ks_ingest_key(char *out, size_t size, const char *prefix, int shard)
{
	return in_shard(out, size, prefix, shard, "ingest");
}

int ks_live_key(char *out, size_t size, const char *prefix, int shard)
{
	return in_shard(out, size, prefix, shard, "live");
}

int ks_endpoint_key(char *out, size_t size, const char *prefix, int shard, const char *id)
{
	return in_shard(out, size, prefix, shard, "ep:%s", id);
}

int ks_endpoint_index_key(char *out, size_t size, const char *prefix, int shard, enum env env,
			  const char *account)
{
	return in_shard(out, size, prefix, shard, "eps:%s:%s", env_name(env), account);
}

int ks_held_key(char *out, size_t size, const char *prefix, int shard)
{
	return in_shard(out, size, prefix, shard, "held");
}

int ks_bank_key(char *out, size_t size, const char *prefix, int shard, const char *id)
{
	return in_shard(out, size, prefix, shard, "bank:%s", id);
}

int ks_bank_key_prefix(char *out, size_t size, const char *prefix, int shard)
{
	return ks_bank_key(out, size, prefix, shard, "");
}

int ks_bank_index_key(char *out, size_t size, const char *prefix, int shard, const char *account)
{
	return in_shard(out, size, prefix, shard, "banks:%s", account);
}

int ks_bank_log_key(char *out, size_t size, const char *prefix, int shard, const char *id)
{
	return in_shard(out, size, prefix, shard, "blog:%s", id);
}

int ks_bank_pix_key(char *out, size_t size, const char *prefix, int shard)
{
	return in_shard(out, size, prefix, shard, "bank");
}

int ks_bank_refunds_key(char *out, size_t size, const char *prefix, int shard, const char *id)
{
	return in_shard(out, size, prefix, shard, "bref:%s", id);
}

int ks_bank_read_key(char *out, size_t size, const char *prefix, int shard, const char *id)
{
	return in_shard(out, size, prefix, shard, "bread:%s", id);
}

int ks_bank_schedule_key(char *out, size_t size, const char *prefix, int shard)
{
	return in_shard(out, size, prefix, shard, "bankrec");
}

int ks_bank_ok_key(char *out, size_t size, const char *prefix, int shard, enum env env)
{
	return in_shard(out, size, prefix, shard, "bankok:%s", env_name(env));
}

int ks_bank_day_key(char *out, size_t size, const char *prefix, int shard, const char *id,
		    const char *day)
{
	return in_shard(out, size, prefix, shard, "bday:%s:%s", id, day);
}

int ks_bank_recovered_key(char *out, size_t size, const char *prefix, int shard, const char *id,
			  const char *day)
{
	return in_shard(out, size, prefix, shard, "brec:%s:%s", id, day);
}

int ks_bank_elsewhere_key(char *out, size_t size, const char *prefix, int shard, const char *id,
			  const char *day)
{
	return in_shard(out, size, prefix, shard, "bels:%s:%s", id, day);
}

int ks_recurrence_key(char *out, size_t size, const char *prefix, int shard, const char *id)
{
	return in_shard(out, size, prefix, shard, "rec:%s", id);
}

int ks_recurrence_index_key(char *out, size_t size, const char *prefix, int shard,
			    const char *account)
{
	return in_shard(out, size, prefix, shard, "recs:%s", account);
}

int ks_recurrence_idrec_key(char *out, size_t size, const char *prefix, int shard,
			    const char *account)
{
	return in_shard(out, size, prefix, shard, "recx:%s", account);
}

int ks_recurrence_open_key(char *out, size_t size, const char *prefix, int shard,
			   const char *connection)
{
	return in_shard(out, size, prefix, shard, "recopen:%s", connection);
}

int ks_cobr_open_key(char *out, size_t size, const char *prefix, int shard, const char *connection)
{
	return in_shard(out, size, prefix, shard, "cobropen:%s", connection);
}

int ks_recurrence_charges_key(char *out, size_t size, const char *prefix, int shard,
			      const char *account, const char *id)
{
	return in_shard(out, size, prefix, shard, "recch:%s:%s", account, id);
}

/* ---- {<env>}: one environment ---- */

void ks_env_taxids_key(char *out, size_t size, const char *prefix, enum env env)
{
	in_env(out, size, prefix, env, "taxids");
}

void ks_env_pixkeys_key(char *out, size_t size, const char *prefix, enum env env)
{
	in_env(out, size, prefix, env, "pixkeys");
}

void ks_env_accounts_key(char *out, size_t size, const char *prefix, enum env env)
{
	in_env(out, size, prefix, env, "accounts");
}

void ks_env_platform_key(char *out, size_t size, const char *prefix, enum env env)
{
	in_env(out, size, prefix, env, "platform");
}

void ks_env_kyc_key(char *out, size_t size, const char *prefix, enum env env)
{
	in_env(out, size, prefix, env, "kyc");
}

void ks_env_review_key(char *out, size_t size, const char *prefix, enum env env)
{
	in_env(out, size, prefix, env, "review");
}

void ks_env_banks_key(char *out, size_t size, const char *prefix, enum env env)
{
	in_env(out, size, prefix, env, "banks");
}

void ks_env_bankrec_key(char *out, size_t size, const char *prefix, enum env env)
{
	in_env(out, size, prefix, env, "bankrec");
}

void ks_env_bankok_key(char *out, size_t size, const char *prefix, enum env env)
{
	in_env(out, size, prefix, env, "bankok");
}

/* ---- {keys}: API keys ---- */

void ks_keys_record_key(char *out, size_t size, const char *prefix, const char *sha256_hex)
{
	in_keys(out, size, prefix, "h:%s", sha256_hex);
}

void ks_keys_id_key(char *out, size_t size, const char *prefix, const char *key_id)
{
	in_keys(out, size, prefix, "id:%s", key_id);
}

void ks_keys_all_key(char *out, size_t size, const char *prefix)
{
	in_keys(out, size, prefix, "all");
}

/* ---- {meta} ---- */

void ks_meta_layout_key(char *out, size_t size, const char *prefix)
{
	in_meta(out, size, prefix, "layout");
}

void ks_meta_dispatchers_key(char *out, size_t size, const char *prefix)
{
	in_meta(out, size, prefix, "dispatchers");
}

/* ---- channels ---- */

void ks_invalidation_channel(char *out, size_t size, const char *prefix)
{
	channel(out, size, prefix, "invalidate");
}

void ks_invalidation_key_message(char *out, size_t size, const char *sha256_hex)
{
	snprintf(out, size, "k:%s", sha256_hex);
}

void ks_invalidation_account_message(char *out, size_t size, const char *account)
{
	snprintf(out, size, "a:%s", account);
}

void ks_invalidation_bank_message(char *out, size_t size, const char *id)
{
	snprintf(out, size, "b:%s", id);
}

void ks_live_channel(char *out, size_t size, const char *prefix)
{
	channel(out, size, prefix, "live");
}

void ks_deliveries_channel(char *out, size_t size, const char *prefix)
{
	channel(out, size, prefix, "deliveries");
}
