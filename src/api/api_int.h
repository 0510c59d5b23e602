/* api_int: what the files of the public API share, private to src/api/.
 *
 * The route table is in api.c; the handlers it names live in one file per
 * resource (api_charges.c, api_accounts.c, api_keys.c, api_events.c,
 * api_endpoints.c, api_ingest.c, api_banks.c, api_metrics.c), and what they have in common (the
 * error replies, the query parameters of listings, the authentication glue) is in api_common.c.
 * Every handler is an http_handler_fn: it answers the request itself, at once or from a callback of
 * the domain module it calls.
 */
#ifndef PIXRELAY_API_INT_H
#define PIXRELAY_API_INT_H

#include "pixrelay/api/api.h"
#include "pixrelay/pix/page.h"

#include <stdbool.h>
#include <stddef.h>

/* The page size of a listing when the query gives no limit. */
#define API_LIST_DEFAULT 20

/* The application a request belongs to (borrowed, see struct app). */
static inline struct app *app_of(struct http_req *req)
{
	return req->app;
}

/* ---- replies (api_common.c) ---- */

/* 503 with Retry-After: 1, for storage that cannot be reached now. */
void api_reply_unavailable(struct http_req *req);

/* The reply to a failure `err` of a domain module (not NULL). Storage trouble
 * (the connection, or Redis refusing for now) is a 503 the client may retry;
 * anything else is a 500. Logs it either way. */
void api_reply_failure(struct http_req *req, const char *err);

/* The answer to a read of one thing named by the path's first parameter:
 * the data, 404 when `result` is the module's not-found code, or the failure. */
void api_reply_read(struct http_req *req, int result, int not_found, const char *what,
		    const char *json, const char *err);

/* A domain module's callback (`ud` is the request) that answers 200 with the
 * JSON it was given, or the failure when `result` < 0. */
void api_on_json(void *ud, int result, const char *json, const char *err);

/* ---- query parameters of listings (api_common.c) ---- */

/* Read the query parameters of a listing. Each must be one of `names` and
 * given once; values[i] gets the decoded value of names[i] (owned, NULL when
 * absent; free them with api_query_free). Returns 0, or -1 after answering
 * 400 (values all NULL then). */
int api_query_params(struct http_req *req, const char *const *names, size_t n, char **values);

/* Free the `n` values api_query_params read. */
void api_query_free(char **values, size_t n);

/* `limit` (NULL: `def`) as a page size from 1 to `max` into *out; 0, or -1
 * after answering 400. */
int api_query_limit(struct http_req *req, const char *value, int def, int max, int *out);

/* `cursor` (NULL: from the newest) for ids of `id_prefix` into *out; 0, or -1
 * after answering 400. */
int api_query_cursor(struct http_req *req, const char *value, const char *id_prefix,
		     struct page_cursor *out);

/* True when the whole environment is in view: a master key acting for no
 * particular account (no X-Account-ID). Otherwise the acting account is. */
bool api_env_scope(struct http_req *req);

/* ---- the handlers of the route table (api.c) ---- */

/* api_metrics.c: /healthz, /readyz, /metrics (also on the metrics-listen listener) */
void api_handle_healthz(struct http_req *req);
void api_handle_readyz(struct http_req *req);
void api_handle_metrics(struct http_req *req);

/* api_keys.c: who the caller is, and its API keys */
void api_handle_me(struct http_req *req);
void api_handle_keys_list(struct http_req *req);
void api_handle_keys_create(struct http_req *req);
void api_handle_key_revoke(struct http_req *req);

/* api_charges.c: charges, their QR image, sandbox simulations, refunds */
void api_handle_charge_create(struct http_req *req);
void api_handle_charge_get(struct http_req *req);
void api_handle_qrcode(struct http_req *req);
void api_handle_simulate_payment(struct http_req *req);
void api_handle_simulate_expiry(struct http_req *req);
void api_handle_simulate_failure(struct http_req *req);
void api_handle_refund(struct http_req *req);
void api_handle_charges_list(struct http_req *req);

/* api_events.c: events, their replay, the live stream's entry */
void api_handle_events_list(struct http_req *req);
void api_handle_events_stream(struct http_req *req);
void api_handle_events_replay(struct http_req *req);
void api_handle_event_get(struct http_req *req);
void api_handle_event_replay(struct http_req *req);

/* api_endpoints.c: webhook endpoints */
void api_handle_endpoints_list(struct http_req *req);
void api_handle_endpoint_create(struct http_req *req);
void api_handle_endpoint_get(struct http_req *req);
void api_handle_endpoint_update(struct http_req *req);
void api_handle_endpoint_delete(struct http_req *req);
void api_handle_endpoint_rotate(struct http_req *req);
void api_handle_endpoint_test(struct http_req *req);
void api_handle_overview(struct http_req *req);

/* api_ingest.c: a payment provider's notifications */
void api_handle_ingest(struct http_req *req);

/* api_banks.c: bank connections, the bank's webhook, sandbox Pix */
void api_handle_bank_webhook(struct http_req *req);
void api_handle_bank_simulate(struct http_req *req);
void api_handle_bank_reconcile(struct http_req *req);
void api_handle_bank_report(struct http_req *req);
void api_handle_banks_list(struct http_req *req);
void api_handle_bank_connect(struct http_req *req);
void api_handle_bank_get(struct http_req *req);
void api_handle_bank_disconnect(struct http_req *req);
void api_handle_bank_update(struct http_req *req);
void api_handle_bank_notifications(struct http_req *req);

/* api_recurrences.c: Pix Automático's recurrences, and the bank's /rec
 * callback once api_banks.c authenticated the bank of connection `c`
 * (simulated: it came by simulate-pix, not counted as a bank call) */
void api_handle_recurrence_create(struct http_req *req);
void api_handle_recurrence_get(struct http_req *req);
void api_handle_recurrence_cancel(struct http_req *req);
void api_handle_recurrence_charge(struct http_req *req);
void api_handle_charge_retry(struct http_req *req);
void api_handle_charge_cancel(struct http_req *req);
void api_handle_recurrences_list(struct http_req *req);
struct banks_ref;
/* A payment provider's notification on connection v's webhook URL
 * (api_provhook.c): authenticated, read at the provider, written, answered. */
struct banks_view;
void api_provider_hook(struct http_req *req, const struct banks_view *v);
void api_bank_rec_receive(struct http_req *req, const struct banks_ref *c, int simulated);
/* ... and its /cobr callback ({"cobsr": [...]}: recurring charges) */
void api_bank_cobr_receive(struct http_req *req, const struct banks_ref *c, int simulated);

/* api_accounts.c: banking as a service: accounts, transfers, balances */
void api_handle_account_create(struct http_req *req);
void api_handle_transfer(struct http_req *req);
void api_handle_balance(struct http_req *req);
void api_handle_accounts_list(struct http_req *req);
void api_handle_account_get(struct http_req *req);
void api_handle_account_secrets(struct http_req *req);

#endif
