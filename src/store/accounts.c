/* accounts.c: making a business account (accounts_create): the record and
 * its files, its two Pix keys (EVP and CNPJ), its members for groups and its
 * review status, admitted against the quotas and the taxIDs of the
 * environment, written into its shard, then made known to the environment.
 * Reading accounts (the hot paths' lookup, balances and the ledger, the
 * dashboard's views) is in accounts_read.c, internal transfers in
 * transfers.c, the operator's KYC review in review.c.
 */
#include "pixrelay/store/accounts.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/pix/keyspace.h"
#include "pixrelay/core/log.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/pix/sign.h"
#include "pixrelay/core/timefmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[] = {"", "pdf", "jpeg", "png"};

static void file_json(yajl_gen g, const char *name, const struct account_file *f)
{
	json_str(g, name);
	if (!f->len) {
		json_null(g);
		return;
	}
	json_open(g);
	json_str(g, "sha256");
	json_str(g, f->sha256);
	json_str(g, "type");
	json_str(g, kind_names[f->kind]);
	json_str(g, "bytes");
	json_int(g, (long long)f->len);
	json_close(g);
}

/* What is kept of the request besides the indexed fields: the address, the
 * representatives (files by SHA-256) and the documents. */
static char *details_json(const struct account_input *in)
{
	yajl_gen g = json_gen_new();

	json_open(g);
	json_str(g, "address");
	json_open(g);
	json_str(g, "zipcode");
	json_str(g, in->address.zipcode);
	json_str(g, "street");
	json_str(g, in->address.street);
	json_str(g, "number");
	json_str(g, in->address.number);
	json_str(g, "neighborhood");
	json_str(g, in->address.neighborhood);
	json_str(g, "city");
	json_str(g, in->address.city);
	json_str(g, "state");
	json_str(g, in->address.state);
	json_close(g);
	json_str(g, "documents");
	json_open_array(g);
	for (size_t i = 0; i < in->ndocuments; i++) {
		json_open(g);
		json_str(g, "sha256");
		json_str(g, in->documents[i].sha256);
		json_str(g, "bytes");
		json_int(g, (long long)in->documents[i].len);
		json_close(g);
	}
	json_close_array(g);
	json_str(g, "representatives");
	json_open_array(g);
	for (size_t i = 0; i < in->nrepresentatives; i++) {
		const struct account_representative *r = &in->representatives[i];
		json_open(g);
		json_str(g, "name");
		json_str(g, r->name);
		json_str(g, "birthDate");
		json_str(g, r->birth_date);
		json_str(g, "email");
		json_str(g, r->email);
		json_str(g, "taxID");
		json_str(g, r->tax_id);
		json_str(g, "phone");
		json_str(g, r->phone);
		json_str(g, "documents");
		json_open(g);
		file_json(g, "picture_face", &r->picture_face);
		file_json(g, "picture_identity_front", &r->picture_identity_front);
		file_json(g, "picture_identity_back", &r->picture_identity_back);
		json_str(g, "picture_identity_type");
		json_str(g, r->picture_identity_type);
		json_close(g);
		json_close(g);
	}
	json_close_array(g);
	json_close(g);
	return json_take(g);
}

/* ---- create ---- */

/* Creation is three scripts: account_admit checks the quotas and the taxID
 * in the environment before anything of the account is written (a taxID
 * already registered counts in the key's hour all the same, and names its
 * account only to a caller who may know it); account_put writes the
 * record and files into the account's shard, where nothing points to it
 * yet; account_index checks the same again, atomically, and makes the
 * account known to the environment (taxID, Pix keys, owner, review status,
 * members, listing, quota counters), once. If it refuses, the record and
 * files are deleted again; if this process dies in between, they stay
 * unreachable (no index names them). */
struct create {
	struct rds *r;
	const struct config *cfg;
	enum env env;
	store_fn cb;
	void *ud;
	char id[IDS_ULID_LEN + 1];
	char key[KS_KEY_MAX];
	char files_key[KS_KEY_MAX];
	char *json;
	/* account_put's arguments: the record's fields (secrets among them),
	 * then from put_files on the files, taken from the request */
	int put_argc, put_files;
	char **put_argv;
	size_t *put_lens;
	/* account_index's arguments */
	int argc;
	char **argv;
};

static void create_free(struct create *c)
{
	if (c->json) {
		mem_wipe(c->json, strlen(c->json));
		free(c->json);
	}
	for (int i = 0; i < c->put_argc; i++) {
		if (i < c->put_files)
			mem_wipe(c->put_argv[i], c->put_lens[i]);
		free(c->put_argv[i]);
	}
	free(c->put_argv);
	free(c->put_lens);
	for (int i = 0; i < c->argc; i++)
		free(c->argv[i]);
	free(c->argv);
	free(c);
}

static void on_ignored(void *ud, redisReply *reply, const char *err)
{
	if (err)
		log_warn("cleanup: %s", err);
}

/* A refusal of account_admit or account_index: {'duplicate' | 'rate' |
 * 'accounts' | 'bytes', detail} as a result code, or -1. */
static int create_refusal(const redisReply *reply)
{
	static const struct {
		const char *what;
		int result;
	} map[] = {{"duplicate", ACCOUNTS_DUPLICATE},
		   {"rate", ACCOUNTS_RATE},
		   {"accounts", ACCOUNTS_FULL},
		   {"bytes", ACCOUNTS_STORAGE}};

	if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
	    reply->element[0]->type != REDIS_REPLY_STRING ||
	    reply->element[1]->type != REDIS_REPLY_STRING)
		return -1;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(reply->element[0]->str, map[i].what) == 0)
			return map[i].result;
	return -1;
}

static void on_indexed(void *ud, redisReply *reply, const char *err)
{
	struct create *c = ud;
	int refused = err ? -1 : create_refusal(reply);

	if (err) {
		c->cb(c->ud, -1, NULL, err);
	} else if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 2 &&
		   reply->element[0]->type == REDIS_REPLY_STRING &&
		   strcmp(reply->element[0]->str, "created") == 0) {
		c->cb(c->ud, 0, c->json, NULL);
	} else if (refused > 0) {
		/* refused after all (another creation got there first): the
		 * record and files are nobody's */
		const char *argv[] = {"DEL", c->key, c->files_key};
		log_info("account %s: refused when made known (%s), removed again", c->id,
			 reply->element[0]->str);
		rds_cmd_argv(c->r, on_ignored, NULL, 3, argv, NULL);
		c->cb(c->ud, refused, reply->element[1]->str, NULL);
	} else {
		c->cb(c->ud, -1, NULL, "unexpected reply from account_index");
	}
	create_free(c);
}

static void on_put(void *ud, redisReply *reply, const char *err)
{
	struct create *c = ud;

	if (err) {
		c->cb(c->ud, -1, NULL, err);
		create_free(c);
		return;
	}
	if (reply->type != REDIS_REPLY_INTEGER || reply->integer != 1) {
		c->cb(c->ud, -1, NULL, "unexpected reply from account_put");
		create_free(c);
		return;
	}
	rds_script(c->r, on_indexed, c, SCRIPT_ACCOUNT_INDEX, 1, c->argc, (const char **)c->argv,
		   NULL);
}

static void on_admitted(void *ud, redisReply *reply, const char *err)
{
	struct create *c = ud;
	int refused = err ? -1 : create_refusal(reply);

	if (err) {
		c->cb(c->ud, -1, NULL, err);
	} else if (refused > 0) {
		c->cb(c->ud, refused, reply->element[1]->str, NULL);
	} else if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 1 &&
		   reply->element[0]->type == REDIS_REPLY_STRING &&
		   strcmp(reply->element[0]->str, "ok") == 0) {
		rds_script(c->r, on_put, c, SCRIPT_ACCOUNT_PUT, 1, c->put_argc,
			   (const char **)c->put_argv, c->put_lens);
		return;
	} else {
		c->cb(c->ud, -1, NULL, "unexpected reply from account_admit");
	}
	create_free(c);
}

/* account_put's next argument: `data` is taken (freed with c) */
static void put_arg(struct create *c, char *data, size_t len)
{
	c->put_argv[c->put_argc] = data;
	c->put_lens[c->put_argc++] = len;
}

static void index_arg(struct create *c, const char *s)
{
	c->argv[c->argc++] = mem_strdup(s);
}

void accounts_create(struct rds *r, const struct config *cfg, enum env env, const char *owner,
		     const char *key_id, struct account_input *in, store_fn cb, void *ud)
{
	struct create *c = mem_new(struct create);
	const char *envn = env_name(env);
	const char *review = env == ENV_SANDBOX && !cfg->sandbox_review ? "approved" : "pending";
	char evp[IDS_UUID_LEN + 1], signing[SIGN_SECRET_LEN + 1];
	char ingest[SIGN_SECRET_LEN + 1], compat[41], created[32], created_txt[TIMEFMT_LEN + 1];
	char gp[KS_PREFIX_MAX], taxids[KS_KEY_MAX];
	char nfields[16], nfiles_s[24], nbytes_s[24], per_hour[24], max_accounts[24],
	    max_stored[24];
	uint64_t now = ids_now_ms();
	char *details = details_json(in);
	size_t nslots = account_file_slots(in), nfiles = 0, nbytes = 0;
	yajl_gen g = json_gen_new();
	int shard = ks_random_shard(cfg->shards);

	c->r = r;
	c->cfg = cfg;
	c->env = env;
	c->cb = cb;
	c->ud = ud;
	if (!key_id)
		key_id = "";
	ks_ulid_at(shard, now, c->id);
	ids_uuid4(evp);
	sign_secret_new(signing, sizeof(signing));
	sign_secret_new(ingest, sizeof(ingest));
	memcpy(compat, "pxrwh_", 6);
	ids_base62(compat + 6, 32);
	snprintf(created, sizeof(created), "%llu", (unsigned long long)now);
	timefmt_format(created_txt, now);
	ks_account_key(c->key, sizeof(c->key), cfg->prefix, env, c->id);
	ks_files_key(c->files_key, sizeof(c->files_key), cfg->prefix, ks_shard_of(c->id), c->id);
	account_files_usage(in, &nfiles, &nbytes);
	snprintf(nfiles_s, sizeof(nfiles_s), "%zu", nfiles);
	snprintf(nbytes_s, sizeof(nbytes_s), "%zu", nbytes);
	snprintf(per_hour, sizeof(per_hour), "%ld", cfg->max_accounts_per_key_hour);
	snprintf(max_accounts, sizeof(max_accounts), "%ld", cfg->max_accounts);
	snprintf(max_stored, sizeof(max_stored), "%ld", cfg->max_stored_file_bytes);

	/* account_put: the record, then each distinct file once */
	{
		const char *fields[] = {
		    "id", c->id, "env", envn, "kind", "business", "owner", owner, "key_id", key_id,
		    "created_at", created, "officialName", in->official_name, "tradeName",
		    in->trade_name, "taxID", in->tax_id, "pix_key", evp, "signing_secret", signing,
		    "signing_secret_prev", "", "webhook_secret", compat, "ingest_secret", ingest,
		    "postback_url", in->postback_url ? in->postback_url : "", "details", details,
		    "status", "ACTIVE", "kyc", review, "files", nfiles_s, "file_bytes", nbytes_s,
		    "balance", "0",
		    /* no bank connection yet (store/banks_charging.h) */
		    "charge_via", "none"};
		size_t nf = sizeof(fields) / sizeof(fields[0]);
		c->put_argv = mem_calloc(3 + nf + 2 * nfiles, sizeof(char *));
		c->put_lens = mem_calloc(3 + nf + 2 * nfiles, sizeof(size_t));
		snprintf(nfields, sizeof(nfields), "%zu", nf / 2);
		put_arg(c, mem_strdup(c->key), strlen(c->key));
		put_arg(c, mem_strdup(c->files_key), strlen(c->files_key));
		put_arg(c, mem_strdup(nfields), strlen(nfields));
		for (size_t i = 0; i < nf; i++)
			put_arg(c, mem_strdup(fields[i]), strlen(fields[i]));
		c->put_files = c->put_argc;
	}
	for (size_t i = 0; i < nslots; i++) {
		struct account_file *f = account_file_slot(in, i);
		if (!account_file_is_first(in, i))
			continue;
		put_arg(c, mem_strdup(f->sha256), 64);
		put_arg(c, (char *)f->data, f->len);
		f->data = NULL; /* taken: the request's memory is not copied */
	}

	/* account_index: the environment's indexes */
	ks_env_prefix(gp, sizeof(gp), cfg->prefix, env);
	ks_env_taxids_key(taxids, sizeof(taxids), cfg->prefix, env);
	c->argv = mem_calloc(17 + in->nrepresentatives, sizeof(char *));
	index_arg(c, taxids);
	index_arg(c, gp);
	index_arg(c, c->id);
	index_arg(c, in->tax_id);
	index_arg(c, created);
	index_arg(c, "0"); /* a business account */
	index_arg(c, "2"); /* its two Pix keys: */
	index_arg(c, evp);
	index_arg(c, in->tax_id);
	index_arg(c, owner);
	index_arg(c, review);
	index_arg(c, *key_id ? owner : "");
	index_arg(c, per_hour);
	index_arg(c, max_accounts);
	index_arg(c, max_stored);
	index_arg(c, nbytes_s);
	for (size_t i = 0; i < in->nrepresentatives; i++)
		index_arg(c, in->representatives[i].tax_id);

	/* the answer, shown once: it carries the secrets */
	json_open(g);
	json_str(g, "id");
	json_str(g, c->id);
	json_str(g, "officialName");
	json_str(g, in->official_name);
	json_str(g, "tradeName");
	json_str(g, in->trade_name);
	json_str(g, "taxID");
	json_str(g, in->tax_id);
	json_str(g, "status");
	json_str(g, "ACTIVE");
	json_str(g, "kycStatus");
	json_str(g, strcmp(review, "approved") == 0 ? "APPROVED" : "PENDING");
	json_str(g, "owner");
	json_str(g, owner);
	json_str(g, "pixKeys");
	json_open_array(g);
	json_open(g);
	json_str(g, "type");
	json_str(g, "EVP");
	json_str(g, "key");
	json_str(g, evp);
	json_close(g);
	json_open(g);
	json_str(g, "type");
	json_str(g, "CNPJ");
	json_str(g, "key");
	json_str(g, in->tax_id);
	json_close(g);
	json_close_array(g);
	json_str(g, "postbackUrl");
	json_str_or_null(g, in->postback_url);
	json_str(g, "balance");
	json_int(g, 0);
	json_str(g, "createdAt");
	json_str(g, created_txt);
	json_str(g, "secrets");
	json_open(g);
	json_str(g, "postbackSigningSecret");
	json_str(g, signing);
	json_str(g, "postbackSignature");
	json_str(g, compat);
	json_str(g, "ingestSecret");
	json_str(g, ingest);
	json_close(g);
	json_close(g);
	c->json = json_take(g);

	{
		/* the hourly count is the account's, whichever of its keys made it */
		const char *argv[] = {taxids,	gp,	  in->tax_id,	*key_id ? owner : "",
				      created,	per_hour, max_accounts, max_stored,
				      nbytes_s, owner,	  c->id};
		rds_script(r, on_admitted, c, SCRIPT_ACCOUNT_ADMIT, 1, 11, argv, NULL);
	}
	mem_wipe(signing, sizeof(signing));
	mem_wipe(ingest, sizeof(ingest));
	mem_wipe(compat, sizeof(compat));
	free(details);
}
