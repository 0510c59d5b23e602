/* api_accounts: banking as a service.
 *
 * Creating business accounts (with their quotas), internal transfers between
 * accounts of one group, the acting account's balance, and listing, reading
 * and revealing the secrets of accounts in the caller's view. An account's
 * keys are in api_keys.c, its charges in api_charges.c.
 */
#include "api_int.h"

#include "pixrelay/store/accounts.h"
#include "pixrelay/store/transfers.h"
#include "pixrelay/pix/account.h"
#include "pixrelay/pix/keyspace.h"
#include "pixrelay/pix/reqbody.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/log.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/timefmt.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static void on_account_created(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;
	const struct config *cfg = app_of(req)->cfg;
	char wait[24];

	switch (result) {
	case 0:
		http_reply_data(req, 200, json, strlen(json));
		break;
	case ACCOUNTS_DUPLICATE:
		/* the account holding it is named only to a caller who may know it */
		if (json && *json)
			http_reply_error(
			    req, 400, "taxID: already registered in this environment (account %s)",
			    json);
		else
			http_reply_error(req, 400,
					 "taxID: already registered in this environment, to an "
					 "account the caller's account does not own");
		break;
	case ACCOUNTS_RATE:
		/* whole seconds, rounded up: a retry after Retry-After succeeds */
		snprintf(wait, sizeof(wait), "%lld", (strtoll(json, NULL, 10) + 999) / 1000);
		http_add_header(req, "Retry-After", wait);
		http_reply_error(req, 429,
				 "too many accounts created with this account's API keys: at most "
				 "%ld in an hour (max-accounts-per-key-hour); retry in %s s",
				 cfg->max_accounts_per_key_hour, wait);
		break;
	case ACCOUNTS_FULL:
		http_reply_error(req, 403,
				 "this environment holds the most business accounts it may "
				 "(max-accounts = %s); the operator must raise the limit",
				 json);
		break;
	case ACCOUNTS_STORAGE:
		http_reply_error(req, 403,
				 "this environment keeps the most account files it may "
				 "(max-stored-file-bytes = %ld, %s bytes kept); the operator must "
				 "raise the limit",
				 cfg->max_stored_file_bytes, json);
		break;
	default:
		api_reply_failure(req, err ? err : "account creation failed");
	}
}

/* POST /v1/baas/account/create */
void api_handle_account_create(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	struct account_limits lim = {(size_t)app->cfg->max_file};
	struct account_input in;
	yajl_val body = NULL;
	char err[512];
	time_t now = time(NULL);
	struct tm tm;
	size_t files = 0, bytes = 0;

	if (json_parse_object(req->body, req->body_len, &body, err, sizeof(err)) < 0) {
		http_reply_error(req, 400, "%s", err);
		return;
	}
	gmtime_r(&now, &tm);
	if (account_parse_create(
		body, &lim, timefmt_days_from_civil(tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday),
		&in, err, sizeof(err)) < 0) {
		yajl_tree_free(body);
		http_reply_error(req, 400, "%s", err);
		return;
	}
	yajl_tree_free(body);
	/* what the account would keep, against the per-account quotas: sizes,
	 * 413 like a body over max-upload, before anything is stored */
	account_files_usage(&in, &files, &bytes);
	if (files > (size_t)app->cfg->max_account_files) {
		http_reply_error(req, 413,
				 "documents and pictures: %zu different files, more than the %ld "
				 "an account may keep (max-account-files)",
				 files, app->cfg->max_account_files);
	} else if (bytes > (size_t)app->cfg->max_account_bytes) {
		http_reply_error(req, 413,
				 "documents and pictures: %zu bytes in all, more than the %ld an "
				 "account may keep (max-account-bytes)",
				 bytes, app->cfg->max_account_bytes);
	} else {
		accounts_create(app->rds, app->cfg, c->key.env, c->account,
				c->key.kind == AUTH_MASTER_KEY ? NULL : c->key.id, &in,
				on_account_created, req);
	}
	account_input_deinit(&in);
}

static void on_transfer(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;
	char *amount = req->state;
	char *body;

	req->state = NULL;
	switch (result) {
	case 0:
	case ACCOUNTS_REPLAYED:
		if (result == 0)
			dispatch_kick(app_of(req)->dispatch, NULL);
		/* spec 4.3: exactly two fields, no envelope */
		body = mem_printf("{\"amount\":%s,\"status\":\"DONE\"}", amount);
		http_reply_raw(req, 200, body, strlen(body));
		free(body);
		break;
	case ACCOUNTS_NOT_FOUND:
		http_reply_error(req, 404, "%s: no account has this Pix key", json);
		break;
	case ACCOUNTS_FORBIDDEN:
		/* only the caller's own review status is said, never another's */
		if (json && strcmp(json, "pending") == 0)
			http_reply_error(
			    req, 403,
			    "the accounts of from_key and to_key must both belong to the caller's "
			    "group, and the caller's account is waiting for the operator's KYC "
			    "review: until it is approved, its group is itself alone");
		else if (json && strcmp(json, "rejected") == 0)
			http_reply_error(
			    req, 403,
			    "the accounts of from_key and to_key must both belong to the caller's "
			    "group, and the caller's account was rejected in the operator's KYC "
			    "review: its group is itself alone");
		else
			http_reply_error(
			    req, 403,
			    "the accounts of from_key and to_key must both belong to the caller's "
			    "group: the caller's account, or an account of the same owner sharing "
			    "a member with it, both approved in the operator's KYC review");
		break;
	case ACCOUNTS_SAME:
		http_reply_error(req, 400, "from_key and to_key belong to the same account");
		break;
	case ACCOUNTS_INSUFFICIENT:
		http_reply_error(req, 400, "insufficient balance: the source account has %s cents",
				 json);
		break;
	case ACCOUNTS_IDEM_CONFLICT:
		http_reply_error(req, 400,
				 "Idempotency-Key: already used with a different request");
		break;
	case ACCOUNTS_PENDING:
		/* the money left the source; its credit waits for Redis and the
		 * recovery makes it: a retry is safe only with the same key */
		if (http_header(req, "Idempotency-Key")) {
			http_add_header(req, "Retry-After", "5");
			http_reply_error(
			    req, 503,
			    "the transfer was debited and pixrelay will credit it once "
			    "Redis answers again: send the same request with the same "
			    "Idempotency-Key to get it DONE");
		} else {
			http_reply_error(
			    req, 503,
			    "the transfer was debited and pixrelay will credit it once "
			    "Redis answers again: do not send it again (with an "
			    "Idempotency-Key a retry would be safe)");
		}
		break;
	default:
		api_reply_failure(req, err ? err : "transfer failed");
	}
	free(amount);
}

/* POST /v1/baas/internal-transfer {"amount", "from_key", "to_key"} */
void api_handle_transfer(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	const char *idem = http_header(req, "Idempotency-Key");
	const char *from, *to;
	struct reqbody_transfer t;
	yajl_val body = NULL;
	char err[512], fp[65];
	int64_t amount = 0;

	if (json_parse_object(req->body, req->body_len, &body, err, sizeof(err)) < 0) {
		http_reply_error(req, 400, "%s", err);
		return;
	}
	if (reqbody_transfer(body, &t, err, sizeof(err)) < 0) {
		http_reply_error(req, 400, "%s", err);
		goto done;
	}
	amount = t.amount;
	from = t.from_key;
	to = t.to_key;
	if (idem && (!*idem || strlen(idem) > 255)) {
		http_reply_error(req, 400, "Idempotency-Key: must be 1 to 255 characters");
		goto done;
	}
	{
		char *canon = mem_printf("%lld\n%s\n%s", (long long)amount, from, to);
		ids_sha256_hex(fp, canon, strlen(canon));
		free(canon);
	}
	req->state = mem_printf("%lld", (long long)amount);
	transfers_create(app->rds, app->cfg, c->key.env, c->account, from, to, amount, idem, fp,
			 on_transfer, req);
done:
	yajl_tree_free(body);
}

/* GET /v1/baas/balance: the acting account's balance and latest ledger entries. */
void api_handle_balance(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;

	accounts_balance(app->rds, app->cfg, c->key.env, c->account, 50, api_on_json, req);
}

/* GET /v1/baas/accounts?limit=&cursor= : the environment's accounts (a master
 * key without X-Account-ID), else the acting account alone. */
void api_handle_accounts_list(struct http_req *req)
{
	static const char *const names[] = {"limit", "cursor"};
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	struct page_cursor from;
	char *v[2];
	int limit;

	if (api_query_params(req, names, 2, v) < 0)
		return;
	if (api_query_limit(req, v[0], API_LIST_DEFAULT, ACCOUNTS_LIST_MAX, &limit) == 0 &&
	    api_query_cursor(req, v[1], "", &from) == 0)
		accounts_list(app->rds, app->cfg, c->key.env,
			      api_env_scope(req) ? NULL : c->account, &from, limit, api_on_json,
			      req);
	api_query_free(v, 2);
}

/* True when the path's account is in the caller's view; else 404 answered. */
static bool account_in_view(struct http_req *req)
{
	struct api_caller *c = req->auth;
	const char *id = req->params[0];

	if (!ids_is_ulid(id) || ks_shard_of(id) < 0) {
		http_reply_error(req, 404, "account not found: %.40s", id);
		return false;
	}
	if (!api_env_scope(req) && strcmp(id, c->account) != 0) {
		http_reply_error(req, 404, "account not found: %s", id);
		return false;
	}
	return true;
}

static void on_account_read(void *ud, int result, const char *json, const char *err)
{
	api_reply_read(ud, result, ACCOUNTS_NO_ACCOUNT, "account", json, err);
}

/* GET /v1/baas/accounts/{id}?limit=&cursor= : an account with its balance,
 * postbackUrl and a page of its ledger (limit and cursor page the ledger). */
void api_handle_account_get(struct http_req *req)
{
	static const char *const names[] = {"limit", "cursor"};
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	char *v[2], pos[16] = "", fp[PAGE_FP_LEN + 1] = "";
	int limit;

	if (api_query_params(req, names, 2, v) < 0)
		return;
	if (api_query_limit(req, v[0], API_LIST_DEFAULT, ACCOUNTS_LEDGER_MAX, &limit) < 0)
		goto done;
	if (v[1] && page_parse_ledger_cursor(v[1], pos, fp) < 0) {
		http_reply_error(req, 400, "cursor: not a cursor this endpoint returned");
		goto done;
	}
	if (!account_in_view(req))
		goto done;
	accounts_show(app->rds, app->cfg, c->key.env, req->params[0], limit, pos, fp,
		      on_account_read, req);
done:
	api_query_free(v, 2);
}

static void on_secrets_read(void *ud, int result, const char *json, const char *err)
{
	struct http_req *req = ud;
	struct api_caller *c = req->auth;

	if (result == 0)
		log_info("request %s: key %s revealed the secrets of account %s", req->request_id,
			 c->key.id, req->params[0]);
	api_reply_read(req, result, ACCOUNTS_NO_ACCOUNT, "account", json, err);
}

/* POST /v1/baas/accounts/{id}/secrets/reveal: the account's webhook secrets,
 * for master keys only (the ingest secret can mark charges paid). */
void api_handle_account_secrets(struct http_req *req)
{
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;

	if (c->key.kind != AUTH_MASTER_KEY) {
		http_reply_error(req, 403,
				 "revealing an account's secrets needs a master key; an account "
				 "key cannot see them");
		return;
	}
	if (!account_in_view(req))
		return;
	accounts_secrets(app->rds, app->cfg, c->key.env, req->params[0], on_secrets_read, req);
}
