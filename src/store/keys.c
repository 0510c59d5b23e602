/* keys: API keys and accounts as the operator manages them, and the API's
 * key management. The blocking half (rds_open's client: the commands of
 * src/cli/ and start-up): the key layout check, the platform account of an
 * environment, keys created, listed and revoked, an account's secrets,
 * signing-secret rotation, postbackUrl and record. The asynchronous half,
 * for /v1/keys: a page of keys, a key made or revoked (with the
 * invalidation every cache hears). Checking a request's key is auth.c. */
#include "pixrelay/store/keys.h"

#include "pixrelay/redis/cache.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/pix/keyspace.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/pix/sign.h"
#include "pixrelay/core/timefmt.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* One command, blocking: its arguments as NUL-terminated strings, the last
 * one followed by NULL. The reply, or NULL with the reason in *why. */
static redisReply *cmd(struct rds *c, char why[256], ...)
{
	const char *argv[8];
	int argc = 0;
	va_list ap;

	va_start(ap, why);
	while (argc < 8 && (argv[argc] = va_arg(ap, const char *)) != NULL)
		argc++;
	va_end(ap);
	return rds_call(c, argc, argv, NULL, why, 256);
}

static redisReply *script(struct rds *c, char why[256], enum script_id id, int nkeys, int argc,
			  const char **argv)
{
	return rds_call_script(c, id, nkeys, argc, argv, why, 256);
}

static void reply_error(const char *why, redisReply *r, char *err, size_t errlen)
{
	if (!r)
		snprintf(err, errlen, "redis: %s", why[0] ? why : "connection lost");
	else if (r->type == REDIS_REPLY_ERROR)
		snprintf(err, errlen, "redis: %s", r->str);
	else
		snprintf(err, errlen, "redis: unexpected reply type %d", r->type);
}

/* This version's key layout is 2 (docs/storage.md). Refuse a Redis holding
 * the layout of 0.1, which it does not read; mark an empty one as layout 2. */
static int layout_check(struct rds *c, const char *prefix, char *err, size_t errlen)
{
	char k[256], why[256] = "";
	redisReply *r;
	int rc = -1;

	ks_meta_layout_key(k, sizeof(k), prefix);
	r = cmd(c, why, "GET", k, NULL);

	if (!r || r->type == REDIS_REPLY_ERROR) {
		reply_error(why, r, err, errlen);
		goto done;
	}
	if (r->type == REDIS_REPLY_STRING) {
		if (strcmp(r->str, "2") == 0)
			rc = 0;
		else
			snprintf(err, errlen,
				 "this Redis holds pixrelay data of key layout %s, which this "
				 "version does not read",
				 r->str);
		goto done;
	}
	/* one EXISTS per environment: their keys live in two slots */
	for (int i = 0; i < 2; i++) {
		char acc[256];
		ks_env_accounts_key(acc, sizeof(acc), prefix, i ? ENV_PRODUCTION : ENV_SANDBOX);
		freeReplyObject(r);
		r = cmd(c, why, "EXISTS", acc, NULL);
		if (!r || r->type != REDIS_REPLY_INTEGER) {
			reply_error(why, r, err, errlen);
			goto done;
		}
		if (r->integer > 0)
			break;
	}
	if (r->integer > 0) {
		snprintf(err, errlen,
			 "this Redis holds pixrelay 0.1 data (key layout 1), which this version "
			 "does not read: use an empty Redis or another prefix (docs/storage.md, "
			 "Upgrading from 0.1)");
		goto done;
	}
	freeReplyObject(r);
	r = cmd(c, why, "SET", k, "2", "NX", NULL);
	if (!r || r->type == REDIS_REPLY_ERROR) {
		reply_error(why, r, err, errlen);
		goto done;
	}
	rc = 0;
done:
	freeReplyObject(r);
	return rc;
}

int keys_platform_init(struct rds *c, const char *prefix, long shards, enum env env,
		       char *account_id, int *created, char *err, size_t errlen)
{
	char id[IDS_ULID_LEN + 1], key[KS_KEY_MAX], sp[KS_PREFIX_MAX], fp[KS_PREFIX_MAX + 8];
	char gp[KS_PREFIX_MAX], taxids[KS_KEY_MAX], now[32];
	char evp[IDS_UUID_LEN + 1], signing[SIGN_SECRET_LEN + 1], compat[41];
	char ingest[SIGN_SECRET_LEN + 1], why[256] = "";
	const char *name = env == ENV_PRODUCTION ? "Platform (production)" : "Platform (sandbox)";
	int shard = ks_random_shard(shards), rc = -1;
	redisReply *r = NULL;

	if (layout_check(c, prefix, err, errlen) < 0)
		return -1;
	rc = keys_platform_id(c, prefix, env, account_id, err, errlen);
	if (rc != KEYS_NOT_FOUND) {
		*created = 0;
		return rc;
	}
	rc = -1;
	ks_ulid(shard, id);
	ks_account_key(key, sizeof(key), prefix, env, id);
	ks_shard_prefix(sp, sizeof(sp), prefix, shard);
	/* account_put's ARGV[1], the key of the account's files: the platform
	 * account has none, so it is never written. This is the file key prefix
	 * of an older layout, not ks_files_key; kept as it was sent. */
	snprintf(fp, sizeof(fp), "%sfile:", sp);
	ks_env_prefix(gp, sizeof(gp), prefix, env);
	ks_env_taxids_key(taxids, sizeof(taxids), prefix, env);
	ids_uuid4(evp);
	sign_secret_new(signing, sizeof(signing));
	sign_secret_new(ingest, sizeof(ingest));
	memcpy(compat, "pxrwh_", 6);
	ids_base62(compat + 6, 32);
	snprintf(now, sizeof(now), "%llu", (unsigned long long)ids_now_ms());
	{
		const char *argv[] = {key,
				      fp,
				      "15",
				      "id",
				      id,
				      "env",
				      env_name(env),
				      "kind",
				      "platform",
				      "officialName",
				      name,
				      "tradeName",
				      name,
				      "status",
				      "ACTIVE",
				      "created_at",
				      now,
				      "owner",
				      "",
				      "pix_key",
				      evp,
				      "signing_secret",
				      signing,
				      "signing_secret_prev",
				      "",
				      "webhook_secret",
				      compat,
				      "postback_url",
				      "",
				      "ingest_secret",
				      ingest,
				      "balance",
				      "0"};
		r = script(c, why, SCRIPT_ACCOUNT_PUT, 1, (int)(sizeof(argv) / sizeof(argv[0])),
			   argv);
	}
	if (!r || r->type != REDIS_REPLY_INTEGER) {
		reply_error(why, r, err, errlen);
		goto done;
	}
	freeReplyObject(r);
	{
		const char *argv[] = {taxids, gp, id, "", now, "1", "1", evp};
		r = script(c, why, SCRIPT_ACCOUNT_INDEX, 1, 8, argv);
	}
	if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
	    r->element[0]->type != REDIS_REPLY_STRING ||
	    r->element[1]->type != REDIS_REPLY_STRING) {
		reply_error(why, r, err, errlen);
		goto done;
	}
	*created = strcmp(r->element[0]->str, "created") == 0;
	if (!*created)
		/* another process made it first: this record is not needed */
		freeReplyObject(cmd(c, why, "DEL", key, NULL));
	snprintf(account_id, IDS_ULID_LEN + 1, "%s", r->element[1]->str);
	rc = 0;
done:
	mem_wipe(signing, sizeof(signing));
	mem_wipe(compat, sizeof(compat));
	mem_wipe(ingest, sizeof(ingest));
	freeReplyObject(r);
	return rc;
}

int keys_account_exists(struct rds *c, const char *prefix, enum env env, const char *id)
{
	char k[KS_KEY_MAX], why[256] = "";
	redisReply *r;
	int rc;

	ks_account_key(k, sizeof(k), prefix, env, id);
	r = cmd(c, why, "EXISTS", k, NULL);
	rc = r && r->type == REDIS_REPLY_INTEGER ? (int)r->integer : -1;
	freeReplyObject(r);
	return rc;
}

int keys_platform_id(struct rds *c, const char *prefix, enum env env, char *out, char *err,
		     size_t errlen)
{
	char k[256], why[256] = "";
	redisReply *r;
	int rc = -1;

	ks_env_platform_key(k, sizeof(k), prefix, env);
	r = cmd(c, why, "GET", k, NULL);

	if (!r || r->type == REDIS_REPLY_ERROR) {
		reply_error(why, r, err, errlen);
	} else if (r->type == REDIS_REPLY_NIL) {
		rc = KEYS_NOT_FOUND;
	} else if (r->type == REDIS_REPLY_STRING) {
		snprintf(out, IDS_ULID_LEN + 1, "%s", r->str);
		rc = 0;
	}
	freeReplyObject(r);
	return rc;
}

int keys_create(struct rds *c, const char *prefix, enum env env, enum auth_kind kind,
		const char *account, const char *description, char secret[AUTH_KEY_MAX],
		struct auth_key *out, char *err, size_t errlen)
{
	char acct[IDS_ULID_LEN + 1], id[AUTH_ID_MAX], sha[65], text[AUTH_KEY_MAX];
	char k1[256], k2[256], k3[256], now[32], hint[24], why[256] = "";
	const char *argv[11];
	redisReply *r = NULL;
	int rc;

	if (kind == AUTH_MASTER_KEY || !account) {
		/* master keys belong to the platform account */
		rc = keys_platform_id(c, prefix, env, acct, err, errlen);
		if (rc != 0) {
			if (rc == KEYS_NOT_FOUND)
				snprintf(err, errlen,
					 "no %s platform account: run 'pixrelay init --env %s'",
					 env_name(env), env_name(env));
			return rc;
		}
		if (kind == AUTH_MASTER_KEY && account && strcmp(account, acct) != 0) {
			snprintf(err, errlen, "a master key belongs to the platform account %s",
				 acct);
			return -1;
		}
	} else {
		if (!ids_is_ulid(account)) {
			snprintf(err, errlen, "account id must be a ULID");
			return KEYS_NOT_FOUND;
		}
		rc = keys_account_exists(c, prefix, env, account);
		if (rc < 0) {
			snprintf(err, errlen, "redis: %s",
				 rds_last_error(c)[0] ? rds_last_error(c) : "error");
			return -1;
		}
		if (rc == 0) {
			snprintf(err, errlen, "no account %s in %s", account, env_name(env));
			return KEYS_NOT_FOUND;
		}
		snprintf(acct, sizeof(acct), "%s", account);
	}
	auth_key_generate(env, text);
	ids_sha256_hex(sha, text, strlen(text));
	memcpy(id, "key_", 4);
	ids_ulid(id + 4);
	snprintf(hint, sizeof(hint), "%.13s...", text);
	ks_keys_record_key(k1, sizeof(k1), prefix, sha);
	ks_keys_id_key(k2, sizeof(k2), prefix, id);
	ks_keys_all_key(k3, sizeof(k3), prefix);
	snprintf(now, sizeof(now), "%llu", (unsigned long long)ids_now_ms());
	argv[0] = k1;
	argv[1] = k2;
	argv[2] = k3;
	argv[3] = id;
	argv[4] = env_name(env);
	argv[5] = auth_kind_name(kind);
	argv[6] = acct;
	argv[7] = description ? description : "";
	argv[8] = now;
	argv[9] = hint;
	argv[10] = sha;
	r = script(c, why, SCRIPT_KEY_CREATE, 3, 11, argv);
	if (!r || r->type != REDIS_REPLY_INTEGER) {
		reply_error(why, r, err, errlen);
		freeReplyObject(r);
		mem_wipe(text, sizeof(text));
		return -1;
	}
	freeReplyObject(r);
	memcpy(secret, text, sizeof(text));
	mem_wipe(text, sizeof(text));
	memset(out, 0, sizeof(*out));
	snprintf(out->id, sizeof(out->id), "%s", id);
	out->env = env;
	out->kind = kind;
	snprintf(out->account, sizeof(out->account), "%s", acct);
	return 0;
}

/* An HGETALL field, "" when absent. */
static const char *field(const redisReply *h, const char *name)
{
	const char *v = rds_hash_field(h, name);

	return v ? v : "";
}

static void time_or_dash(char *out, const char *ms)
{
	if (!ms || !*ms) {
		strcpy(out, "-");
		return;
	}
	timefmt_format(out, strtoull(ms, NULL, 10));
}

int keys_list(struct rds *c, const char *prefix, FILE *out, int json, char *err, size_t errlen)
{
	char kall[256], why[256] = "";
	redisReply *ids;
	yajl_gen g = json ? json_gen_new() : NULL;

	ks_keys_all_key(kall, sizeof(kall), prefix);
	ids = cmd(c, why, "ZRANGE", kall, "0", "-1", NULL);
	if (!ids || ids->type != REDIS_REPLY_ARRAY) {
		reply_error(why, ids, err, errlen);
		freeReplyObject(ids);
		if (g)
			yajl_gen_free(g);
		return -1;
	}
	if (g)
		json_open_array(g);
	else
		fprintf(out, "%-30s %-10s %-7s %-26s %-19s %-19s %-19s %-16s %s\n", "ID", "ENV",
			"KIND", "ACCOUNT", "CREATED", "LAST USED", "REVOKED", "KEY", "DESCRIPTION");
	for (size_t i = 0; i < ids->elements; i++) {
		char kid[256], rec[256];
		redisReply *sha, *h;
		char created[20], used[20], revoked[20];
		if (ids->element[i]->type != REDIS_REPLY_STRING)
			continue;
		ks_keys_id_key(kid, sizeof(kid), prefix, ids->element[i]->str);
		sha = cmd(c, why, "GET", kid, NULL);
		if (!sha || sha->type != REDIS_REPLY_STRING) {
			freeReplyObject(sha);
			continue;
		}
		ks_keys_record_key(rec, sizeof(rec), prefix, sha->str);
		h = cmd(c, why, "HGETALL", rec, NULL);
		freeReplyObject(sha);
		time_or_dash(created, field(h, "created_at"));
		time_or_dash(used, field(h, "last_used_at"));
		time_or_dash(revoked, field(h, "revoked_at"));
		if (g) {
			json_open(g);
			json_str(g, "id");
			json_str(g, field(h, "id"));
			json_str(g, "env");
			json_str(g, field(h, "env"));
			json_str(g, "kind");
			json_str(g, field(h, "kind"));
			json_str(g, "account");
			json_str(g, field(h, "account"));
			json_str(g, "description");
			json_str(g, field(h, "description"));
			json_str(g, "hint");
			json_str(g, field(h, "hint"));
			json_str(g, "createdAt");
			json_str(g, created);
			json_str(g, "lastUsedAt");
			json_str_or_null(g, *field(h, "last_used_at") ? used : NULL);
			json_str(g, "revokedAt");
			json_str_or_null(g, *field(h, "revoked_at") ? revoked : NULL);
			json_close(g);
		} else {
			fprintf(out, "%-30s %-10s %-7s %-26s %-19s %-19s %-19s %-16s %s\n",
				field(h, "id"), field(h, "env"), field(h, "kind"),
				field(h, "account"), created, used, revoked, field(h, "hint"),
				field(h, "description"));
		}
		freeReplyObject(h);
	}
	if (g) {
		size_t len;
		const char *s;
		json_close_array(g);
		s = json_buf(g, &len);
		fwrite(s, 1, len, out);
		fputc('\n', out);
		yajl_gen_free(g);
	}
	freeReplyObject(ids);
	return 0;
}

int keys_revoke(struct rds *c, const char *prefix, const char *key_id, char *err, size_t errlen)
{
	char kid[256], rec[256], now[32], chan[256], msg[80], why[256] = "";
	const char *argv[4];
	redisReply *sha, *r;
	int rc = -1;

	ks_keys_id_key(kid, sizeof(kid), prefix, key_id);
	sha = cmd(c, why, "GET", kid, NULL);
	if (!sha || sha->type == REDIS_REPLY_ERROR) {
		reply_error(why, sha, err, errlen);
		freeReplyObject(sha);
		return -1;
	}
	if (sha->type != REDIS_REPLY_STRING) {
		freeReplyObject(sha);
		snprintf(err, errlen, "no key %s", key_id);
		return KEYS_NOT_FOUND;
	}
	ks_keys_record_key(rec, sizeof(rec), prefix, sha->str);
	ks_invalidation_channel(chan, sizeof(chan), prefix);
	ks_invalidation_key_message(msg, sizeof(msg), sha->str);
	freeReplyObject(sha);
	snprintf(now, sizeof(now), "%llu", (unsigned long long)ids_now_ms());
	argv[0] = rec;
	argv[1] = now;
	argv[2] = chan;
	argv[3] = msg;
	r = script(c, why, SCRIPT_KEY_REVOKE, 1, 4, argv);
	if (!r || r->type != REDIS_REPLY_INTEGER) {
		reply_error(why, r, err, errlen);
	} else if (r->integer == 1) {
		rc = 0;
	} else if (r->integer == 2) {
		rc = KEYS_ALREADY_REVOKED;
	} else {
		snprintf(err, errlen, "no key %s", key_id);
		rc = KEYS_NOT_FOUND;
	}
	freeReplyObject(r);
	return rc;
}

int keys_account_secrets(struct rds *c, const char *prefix, enum env env, const char *id,
			 char *signing, size_t slen, char *compat, size_t clen, char *ingest,
			 size_t ilen, char *err, size_t errlen)
{
	char k[KS_KEY_MAX], why[256] = "";
	redisReply *r;
	int rc = -1;

	ks_account_key(k, sizeof(k), prefix, env, id);
	r = cmd(c, why, "HMGET", k, "signing_secret", "webhook_secret", "ingest_secret", NULL);
	if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 3) {
		reply_error(why, r, err, errlen);
	} else if (r->element[0]->type != REDIS_REPLY_STRING) {
		snprintf(err, errlen, "no account %s in %s", id, env_name(env));
		rc = KEYS_NOT_FOUND;
	} else {
		snprintf(signing, slen, "%s", r->element[0]->str);
		snprintf(compat, clen, "%s",
			 r->element[1]->type == REDIS_REPLY_STRING ? r->element[1]->str : "");
		snprintf(ingest, ilen, "%s",
			 r->element[2]->type == REDIS_REPLY_STRING ? r->element[2]->str : "");
		rc = 0;
	}
	freeReplyObject(r);
	return rc;
}

int keys_rotate_signing(struct rds *c, const char *prefix, enum env env, const char *id,
			int end_rotation, char *out, size_t outlen, char *err, size_t errlen)
{
	char k[KS_KEY_MAX], secret[SIGN_SECRET_LEN + 1] = "", why[256] = "";
	const char *argv[2];
	redisReply *r;
	int rc = -1;

	ks_account_key(k, sizeof(k), prefix, env, id);
	if (!end_rotation)
		sign_secret_new(secret, sizeof(secret));
	argv[0] = k;
	argv[1] = secret;
	r = script(c, why, SCRIPT_SECRET_ROTATE, 1, 2, argv);
	if (!r || r->type != REDIS_REPLY_INTEGER) {
		reply_error(why, r, err, errlen);
	} else if (r->integer == 0) {
		snprintf(err, errlen, "no account %s in %s", id, env_name(env));
		rc = KEYS_NOT_FOUND;
	} else {
		snprintf(out, outlen, "%s", secret);
		rc = 0;
	}
	freeReplyObject(r);
	mem_wipe(secret, sizeof(secret));
	return rc;
}

int keys_set_postback(struct rds *c, const char *prefix, enum env env, const char *id,
		      const char *url, char *err, size_t errlen)
{
	char k[KS_KEY_MAX], why[256] = "";
	redisReply *r;
	int rc;

	rc = keys_account_exists(c, prefix, env, id);
	if (rc <= 0) {
		if (rc == 0)
			snprintf(err, errlen, "no account %s in %s", id, env_name(env));
		else
			snprintf(err, errlen, "redis: %s",
				 rds_last_error(c)[0] ? rds_last_error(c) : "error");
		return rc == 0 ? KEYS_NOT_FOUND : -1;
	}
	ks_account_key(k, sizeof(k), prefix, env, id);
	r = cmd(c, why, "HSET", k, "postback_url", url, NULL);
	rc = r && r->type == REDIS_REPLY_INTEGER ? 0 : -1;
	if (rc < 0)
		reply_error(why, r, err, errlen);
	freeReplyObject(r);
	return rc;
}

void keys_write_fields(yajl_gen g, const redisReply *h, const struct keys_shown *shown, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *v = rds_hash_field(h, shown[i].field);
		char t[TIMEFMT_LEN + 1];
		json_str(g, shown[i].name);
		if (!v || !*v) {
			json_null(g);
		} else if (shown[i].type == 'i') {
			json_int(g, strtoll(v, NULL, 10));
		} else if (shown[i].type == 't') {
			timefmt_format(t, strtoull(v, NULL, 10));
			json_str(g, t);
		} else {
			json_str(g, v);
		}
	}
}

int keys_account_show(struct rds *c, const char *prefix, enum env env, const char *id, FILE *out,
		      char *err, size_t errlen)
{
	static const struct keys_shown shown[] = {{"id", "id", 's'},
						  {"kind", "kind", 's'},
						  {"officialName", "officialName", 's'},
						  {"tradeName", "tradeName", 's'},
						  {"taxID", "taxID", 's'},
						  {"status", "status", 's'},
						  {"owner", "owner", 's'},
						  {"pix_key", "pixKey", 's'},
						  {"postback_url", "postbackUrl", 's'},
						  {"balance", "balance", 'i'},
						  {"created_at", "createdAt", 't'}};
	char k[KS_KEY_MAX], why[256] = "";
	redisReply *h;
	yajl_gen g;
	const char *s;
	size_t len;

	ks_account_key(k, sizeof(k), prefix, env, id);
	h = cmd(c, why, "HGETALL", k, NULL);
	if (!h || h->type != REDIS_REPLY_ARRAY) {
		reply_error(why, h, err, errlen);
		freeReplyObject(h);
		return -1;
	}
	if (h->elements == 0) {
		snprintf(err, errlen, "no account %s in %s", id, env_name(env));
		freeReplyObject(h);
		return KEYS_NOT_FOUND;
	}
	g = json_gen_new();
	yajl_gen_config(g, yajl_gen_beautify, 1);
	json_open(g);
	json_str(g, "environment");
	json_str(g, env_name(env));
	keys_write_fields(g, h, shown, sizeof(shown) / sizeof(shown[0]));
	json_close(g);
	s = json_buf(g, &len);
	fwrite(s, 1, len, out);
	yajl_gen_free(g);
	freeReplyObject(h);
	return 0;
}

/* ---- asynchronous, for the server ---- */

/* The fields of a key record as key_list returns them, and as keys_render reads them. */
enum {
	KF_ID,
	KF_ENV,
	KF_KIND,
	KF_ACCOUNT,
	KF_DESCRIPTION,
	KF_HINT,
	KF_CREATED,
	KF_USED,
	KF_REVOKED,
	KF_COUNT
};

static const char *const key_fields[KF_COUNT] = {"id",	       "env",	       "kind",
						 "account",    "description",  "hint",
						 "created_at", "last_used_at", "revoked_at"};

static void json_ms(yajl_gen g, const char *name, const char *ms)
{
	json_str(g, name);
	json_time_ms(g, ms);
}

/* One key as the API shows it; `secret` (NULL = none) is its text. */
static void keys_render(yajl_gen g, const char *const f[KF_COUNT], const char *secret)
{
	json_open(g);
	json_str(g, "id");
	json_str(g, f[KF_ID]);
	if (secret) {
		json_str(g, "key");
		json_str(g, secret);
	}
	json_str(g, "environment");
	json_str(g, f[KF_ENV]);
	json_str(g, "kind");
	json_str(g, f[KF_KIND]);
	json_str(g, "account");
	json_str(g, f[KF_ACCOUNT]);
	json_str(g, "description");
	json_str(g, f[KF_DESCRIPTION]);
	json_str(g, "hint");
	json_str(g, f[KF_HINT]);
	json_ms(g, "createdAt", f[KF_CREATED]);
	json_ms(g, "lastUsedAt", f[KF_USED]);
	json_ms(g, "revokedAt", f[KF_REVOKED]);
	json_close(g);
}

int keys_valid_id(const char *id)
{
	return strncmp(id, "key_", 4) == 0 && ids_is_ulid(id + 4);
}

struct keys_call {
	struct rds *r;
	struct cache *cache;
	store_fn cb;
	void *ud;
	enum env env;
	char account[32]; /* "" = any of env */
	char prefix[KS_PREFIX_MAX];
	char id[AUTH_ID_MAX];
	char rec[256];
	char sha[65];
	char now[32];
	char *json;
};

static struct keys_call *call_new(struct rds *r, const char *prefix, enum env env,
				  const char *account, store_fn cb, void *ud)
{
	struct keys_call *k = mem_new(struct keys_call);

	k->r = r;
	snprintf(k->prefix, sizeof(k->prefix), "%s", prefix);
	k->env = env;
	k->cb = cb;
	k->ud = ud;
	snprintf(k->account, sizeof(k->account), "%s", account ? account : "");
	return k;
}

static void call_free(struct keys_call *k)
{
	if (k->json) {
		mem_wipe(k->json, strlen(k->json));
		free(k->json);
	}
	free(k);
}

/* A redis string element as a C string ("" for anything else). */
static const char *str_of(const redisReply *e)
{
	return e && e->type == REDIS_REPLY_STRING ? e->str : "";
}

static void on_key_page(void *ud, redisReply *reply, const char *err)
{
	struct keys_call *k = ud;
	size_t n;
	yajl_gen g;
	const char *s, *score, *id;
	size_t len;

	if (err) {
		k->cb(k->ud, -1, NULL, err);
		goto done;
	}
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 2 ||
	    (reply->elements - 2) % KF_COUNT != 0) {
		k->cb(k->ud, -1, NULL, "unexpected reply from key_list");
		goto done;
	}
	n = (reply->elements - 2) / KF_COUNT;
	g = json_gen_new();
	json_open(g);
	json_str(g, "keys");
	json_open_array(g);
	for (size_t i = 0; i < n; i++) {
		const char *f[KF_COUNT];
		for (int j = 0; j < KF_COUNT; j++)
			f[j] = str_of(reply->element[i * KF_COUNT + (size_t)j]);
		keys_render(g, f, NULL);
	}
	json_close_array(g);
	score = str_of(reply->element[reply->elements - 2]);
	id = str_of(reply->element[reply->elements - 1]);
	page_write_next(g, score, id);
	json_close(g);
	s = json_buf(g, &len);
	k->cb(k->ud, 0, s, NULL);
	yajl_gen_free(g);
done:
	call_free(k);
}

void keys_page(struct rds *r, const char *prefix, enum env env, const char *account,
	       const struct page_cursor *from, int limit, store_fn cb, void *ud)
{
	struct keys_call *k = call_new(r, prefix, env, account, cb, ud);
	char all[256], kp[256], lim[16];
	const char *argv[7];

	ks_keys_all_key(all, sizeof(all), prefix);
	ks_keys_prefix(kp, sizeof(kp), prefix);
	snprintf(lim, sizeof(lim), "%d", limit);
	argv[0] = all;
	argv[1] = kp;
	argv[2] = env_name(env);
	argv[3] = k->account;
	argv[4] = from->score;
	argv[5] = from->id;
	argv[6] = lim;
	rds_script(r, on_key_page, k, SCRIPT_KEY_LIST, 1, 7, argv, NULL);
}

static void on_key_created(void *ud, redisReply *reply, const char *err)
{
	struct keys_call *k = ud;

	if (err)
		k->cb(k->ud, -1, NULL, err);
	else if (reply->type != REDIS_REPLY_INTEGER)
		k->cb(k->ud, -1, NULL, "unexpected reply from key_create");
	else
		k->cb(k->ud, 0, k->json, NULL);
	call_free(k);
}

void keys_create_async(struct rds *r, const char *prefix, enum env env, const char *account,
		       const char *description, store_fn cb, void *ud)
{
	struct keys_call *k = call_new(r, prefix, env, account, cb, ud);
	char text[AUTH_KEY_MAX], hint[24], k2[256], k3[256];
	const char *argv[11];
	const char *f[KF_COUNT];
	yajl_gen g = json_gen_new();
	size_t len;
	const char *s;

	auth_key_generate(env, text);
	ids_sha256_hex(k->sha, text, strlen(text));
	memcpy(k->id, "key_", 4);
	ids_ulid(k->id + 4);
	snprintf(hint, sizeof(hint), "%.13s...", text);
	snprintf(k->now, sizeof(k->now), "%llu", (unsigned long long)ids_now_ms());
	ks_keys_record_key(k->rec, sizeof(k->rec), prefix, k->sha);
	ks_keys_id_key(k2, sizeof(k2), prefix, k->id);
	ks_keys_all_key(k3, sizeof(k3), prefix);
	f[KF_ID] = k->id;
	f[KF_ENV] = env_name(env);
	f[KF_KIND] = auth_kind_name(AUTH_ACCOUNT_KEY);
	f[KF_ACCOUNT] = k->account;
	f[KF_DESCRIPTION] = description;
	f[KF_HINT] = hint;
	f[KF_CREATED] = k->now;
	f[KF_USED] = "";
	f[KF_REVOKED] = "";
	keys_render(g, f, text);
	s = json_buf(g, &len);
	k->json = mem_strndup(s, len);
	/* yajl's buffer held the text too */
	mem_wipe((char *)s, len);
	yajl_gen_free(g);
	mem_wipe(text, sizeof(text));
	argv[0] = k->rec;
	argv[1] = k2;
	argv[2] = k3;
	argv[3] = k->id;
	argv[4] = env_name(env);
	argv[5] = auth_kind_name(AUTH_ACCOUNT_KEY);
	argv[6] = k->account;
	argv[7] = description;
	argv[8] = k->now;
	argv[9] = hint;
	argv[10] = k->sha;
	rds_script(r, on_key_created, k, SCRIPT_KEY_CREATE, 3, 11, argv, NULL);
}

static void on_key_revoked(void *ud, redisReply *reply, const char *err)
{
	struct keys_call *k = ud;
	char ckey[80];

	/* whatever the answer, this process asks Redis about the key next time */
	ks_invalidation_key_message(ckey, sizeof(ckey), k->sha);
	cache_forget(k->cache, ckey);
	if (err)
		k->cb(k->ud, -1, NULL, err);
	else if (reply->type != REDIS_REPLY_INTEGER)
		k->cb(k->ud, -1, NULL, "unexpected reply from key_revoke");
	else if (reply->integer == 0)
		k->cb(k->ud, KEYS_NOT_FOUND, NULL, NULL);
	else
		k->cb(k->ud, reply->integer == 1 ? 0 : KEYS_ALREADY_REVOKED, k->json, NULL);
	call_free(k);
}

static void on_key_record(void *ud, redisReply *reply, const char *err)
{
	struct keys_call *k = ud;
	const char *f[KF_COUNT];
	char chan[256], msg[80];
	const char *argv[4];
	yajl_gen g;
	const char *s;
	size_t len;
	int revoked;

	if (err) {
		k->cb(k->ud, -1, NULL, err);
		call_free(k);
		return;
	}
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements != KF_COUNT) {
		k->cb(k->ud, -1, NULL, "unexpected reply to HMGET");
		call_free(k);
		return;
	}
	for (int j = 0; j < KF_COUNT; j++)
		f[j] = str_of(reply->element[j]);
	/* a key of another environment or account is not found for this caller */
	if (strcmp(f[KF_ID], k->id) != 0 || strcmp(f[KF_ENV], env_name(k->env)) != 0 ||
	    (*k->account && strcmp(f[KF_ACCOUNT], k->account) != 0)) {
		k->cb(k->ud, KEYS_NOT_FOUND, NULL, NULL);
		call_free(k);
		return;
	}
	revoked = *f[KF_REVOKED] != '\0';
	if (!revoked)
		f[KF_REVOKED] = k->now;
	g = json_gen_new();
	keys_render(g, f, NULL);
	s = json_buf(g, &len);
	k->json = mem_strndup(s, len);
	yajl_gen_free(g);
	if (revoked) {
		ks_invalidation_key_message(msg, sizeof(msg), k->sha);
		cache_forget(k->cache, msg);
		k->cb(k->ud, KEYS_ALREADY_REVOKED, k->json, NULL);
		call_free(k);
		return;
	}
	/* exactly what keys_revoke sends */
	ks_invalidation_channel(chan, sizeof(chan), k->prefix);
	ks_invalidation_key_message(msg, sizeof(msg), k->sha);
	argv[0] = k->rec;
	argv[1] = k->now;
	argv[2] = chan;
	argv[3] = msg;
	rds_script(k->r, on_key_revoked, k, SCRIPT_KEY_REVOKE, 1, 4, argv, NULL);
}

static void on_key_sha(void *ud, redisReply *reply, const char *err)
{
	struct keys_call *k = ud;
	const char *argv[2 + KF_COUNT];

	if (err) {
		k->cb(k->ud, -1, NULL, err);
		call_free(k);
		return;
	}
	if (reply->type != REDIS_REPLY_STRING || reply->len != 64) {
		k->cb(k->ud, KEYS_NOT_FOUND, NULL, NULL);
		call_free(k);
		return;
	}
	snprintf(k->sha, sizeof(k->sha), "%s", reply->str);
	ks_keys_record_key(k->rec, sizeof(k->rec), k->prefix, k->sha);
	argv[0] = "HMGET";
	argv[1] = k->rec;
	for (int j = 0; j < KF_COUNT; j++)
		argv[2 + j] = key_fields[j];
	rds_cmd_argv(k->r, on_key_record, k, 2 + KF_COUNT, argv, NULL);
}

void keys_revoke_async(struct rds *r, struct cache *c, const char *prefix, enum env env,
		       const char *account, const char *key_id, store_fn cb, void *ud)
{
	struct keys_call *k = call_new(r, prefix, env, account, cb, ud);
	char kid[256];
	const char *argv[2];

	k->cache = c;
	snprintf(k->id, sizeof(k->id), "%s", key_id);
	snprintf(k->now, sizeof(k->now), "%llu", (unsigned long long)ids_now_ms());
	ks_keys_id_key(kid, sizeof(kid), prefix, k->id);
	argv[0] = "GET";
	argv[1] = kid;
	rds_cmd_argv(r, on_key_sha, k, 2, argv, NULL);
}
