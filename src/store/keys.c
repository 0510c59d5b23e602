/* keys: API keys and accounts as the operator manages them, blocking
 * (rds_open's client: the commands of src/cli/ and start-up): the key
 * layout check, the platform account of an environment, keys created,
 * listed and revoked, an account's secrets, signing-secret rotation,
 * postbackUrl and record. The asynchronous half, for /v1/keys, is
 * keys_async.c; checking a request's key is auth.c. */
#include "pixrelay/store/keys.h"

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

/* This version's key layout is 3 (docs/storage.md): 2 and a stream per shard
 * (docs/event-layout.md). A Redis of layout 2 is read as it is and marked 3
 * (the version before refuses it then: it does not read the streams); the
 * lease finds its order lists by itself until a shard has none (p v3,
 * lib/event.lua), so nothing here depends on which process checks first.
 * Refuse a Redis holding the layout of 0.1, which it does not read; mark an
 * empty one as layout 3. */
int keys_layout_check(struct rds *c, const char *prefix, char *err, size_t errlen)
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
		if (strcmp(r->str, "3") == 0) {
			rc = 0;
		} else if (strcmp(r->str, "2") == 0) {
			freeReplyObject(r);
			r = cmd(c, why, "SET", k, "3", NULL);
			if (!r || r->type == REDIS_REPLY_ERROR)
				reply_error(why, r, err, errlen);
			else
				rc = 0;
		} else {
			snprintf(err, errlen,
				 "this Redis holds pixrelay data of key layout %s, which this "
				 "version does not read",
				 r->str);
			rc = KEYS_REFUSED;
		}
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
		rc = KEYS_REFUSED;
		goto done;
	}
	freeReplyObject(r);
	r = cmd(c, why, "SET", k, "3", "NX", NULL);
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

	if (keys_layout_check(c, prefix, err, errlen) != 0)
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
		const char *argv[] = {key, fp, "16", "id", id, "env", env_name(env), "kind",
				      "platform", "officialName", name, "tradeName", name, "status",
				      "ACTIVE", "created_at", now, "owner", "", "pix_key", evp,
				      "signing_secret", signing, "signing_secret_prev", "",
				      "webhook_secret", compat, "postback_url", "", "ingest_secret",
				      ingest, "balance", "0",
				      /* no bank connection yet (store/banks_charging.h) */
				      "charge_via", "none"};
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

int keys_account_find(struct rds *c, const char *prefix, enum env env, const char *id)
{
	char k[KS_KEY_MAX], why[256] = "";
	redisReply *r;
	int rc = -1;

	ks_account_key(k, sizeof(k), prefix, env, id);
	r = cmd(c, why, "EXISTS", k, NULL);
	if (r && r->type == REDIS_REPLY_INTEGER)
		rc = r->integer ? 0 : KEYS_NOT_FOUND;
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
		rc = keys_account_find(c, prefix, env, account);
		if (rc < 0) {
			snprintf(err, errlen, "redis: %s",
				 rds_last_error(c)[0] ? rds_last_error(c) : "error");
			return -1;
		}
		if (rc == KEYS_NOT_FOUND) {
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
	snprintf(out->sha256, sizeof(out->sha256), "%s", sha);
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

	rc = keys_account_find(c, prefix, env, id);
	if (rc != 0) {
		if (rc == KEYS_NOT_FOUND)
			snprintf(err, errlen, "no account %s in %s", id, env_name(env));
		else
			snprintf(err, errlen, "redis: %s",
				 rds_last_error(c)[0] ? rds_last_error(c) : "error");
		return rc;
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
