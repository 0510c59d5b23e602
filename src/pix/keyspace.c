#include "pixrelay/pix/keyspace.h"

#include <stdio.h>
#include <string.h>

static const char crockford[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

static int crock_value(char c)
{
	const char *p = c ? strchr(crockford, c) : NULL;

	return p ? (int)(p - crockford) : -1;
}

int ks_shard_of(const char *id)
{
	const char *u = id;

	if (strlen(id) == IDS_ULID_LEN + 4 && id[3] == '_')
		u = id + 4;
	if (!ids_is_ulid(u))
		return -1;
	return crock_value(u[IDS_ULID_LEN - 2]) * 32 + crock_value(u[IDS_ULID_LEN - 1]);
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

int ks_random_shard(long nshards)
{
	uint32_t r;

	if (nshards <= 1)
		return 0;
	ids_random(&r, sizeof(r));
	return (int)(r % (uint32_t)(nshards > KS_SHARDS_MAX ? KS_SHARDS_MAX : nshards));
}

void ks_shard_prefix(char *out, size_t size, const char *prefix, int shard)
{
	snprintf(out, size, "%s{s%d}:", prefix, shard);
}

void ks_env_prefix(char *out, size_t size, const char *prefix, enum env env)
{
	snprintf(out, size, "%s{%s}:", prefix, env_name(env));
}

int ks_key(char *out, size_t size, const char *prefix, const char *what, const char *id)
{
	int shard = ks_shard_of(id);

	if (shard < 0) {
		if (size)
			out[0] = '\0';
		return -1;
	}
	snprintf(out, size, "%s{s%d}:%s%s", prefix, shard, what, id);
	return 0;
}

int ks_account_key(char *out, size_t size, const char *prefix, enum env env, const char *id)
{
	char what[32];

	snprintf(what, sizeof(what), "acct:%s:", env_name(env));
	return ks_key(out, size, prefix, what, id);
}

void ks_invalidation_channel(char *out, size_t size, const char *prefix)
{
	snprintf(out, size, "%sinvalidate", prefix);
}
