/* api: the route tables of the public API and of the other listeners
 * (metrics-listen, the bank door), in one place.
 *
 * Each route names its handler and its flags; the handlers live in one file
 * per resource (api_int.h lists them, api_common.c holds what they share).
 * tests/docs/check_openapi.py and tests/e2e/test_http.py read api_routes[]
 * from this file. GET /v1/openapi.yaml is answered here, with the
 * description of these routes built into the binary.
 */
#include "pixrelay/api/api.h"

#include "api_int.h"
#include "pixrelay/api/dashboard.h"

/* docs/openapi.yaml, built in by tools/embed_file.py (meson.build) */
extern const char api_openapi_yaml[];
extern const size_t api_openapi_yaml_len;

/* GET /v1/openapi.yaml: the description of this API, as built into the
 * binary, so that it always matches the server answering. */
static void handle_openapi(struct http_req *req)
{
	http_reply_bytes(req, 200, "application/yaml", "no-cache", api_openapi_yaml,
			 api_openapi_yaml_len);
}

const struct http_route api_routes[] = {
    {HTTP_GET, "/healthz", api_handle_healthz, 0},
    {HTTP_GET, "/readyz", api_handle_readyz, 0},
    {HTTP_GET, "/metrics", api_handle_metrics, 0},
    {HTTP_GET, "/v1/openapi.yaml", handle_openapi, HTTP_ENVELOPE},
    {HTTP_GET, "/dashboard", dashboard_redirect, 0},
    {HTTP_GET, "/dashboard/", dashboard_index, 0},
    {HTTP_GET, "/dashboard/{file}", dashboard_file, 0},
    {HTTP_GET, "/v1/me", api_handle_me, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/charge/pix/create", api_handle_charge_create,
     HTTP_AUTH | HTTP_JSON_BODY | HTTP_ENVELOPE},
    {HTTP_GET, "/v1/charge/pix/{id}", api_handle_charge_get, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_GET, "/v1/qrcode/{id}", api_handle_qrcode, HTTP_ENVELOPE},
    {HTTP_POST, "/v1/charge/pix/{id}/retry", api_handle_charge_retry,
     HTTP_AUTH | HTTP_JSON_BODY | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/charge/pix/{id}/cancel", api_handle_charge_cancel, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/charge/pix/{id}/simulate-payment", api_handle_simulate_payment,
     HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/charge/pix/{id}/simulate-expiry", api_handle_simulate_expiry,
     HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/charge/pix/{id}/simulate-failure", api_handle_simulate_failure,
     HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/charge/{id}/refund", api_handle_refund, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_GET, "/v1/events", api_handle_events_list, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_GET, "/v1/events/stream", api_handle_events_stream, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/events/replay", api_handle_events_replay, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_GET, "/v1/events/{id}", api_handle_event_get, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/events/{id}/replay", api_handle_event_replay, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_GET, "/v1/webhook-endpoints", api_handle_endpoints_list, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/webhook-endpoints", api_handle_endpoint_create,
     HTTP_AUTH | HTTP_JSON_BODY | HTTP_ENVELOPE},
    {HTTP_GET, "/v1/webhook-endpoints/{id}", api_handle_endpoint_get, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_PATCH, "/v1/webhook-endpoints/{id}", api_handle_endpoint_update,
     HTTP_AUTH | HTTP_JSON_BODY | HTTP_ENVELOPE},
    {HTTP_DELETE, "/v1/webhook-endpoints/{id}", api_handle_endpoint_delete,
     HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/webhook-endpoints/{id}/rotate-secret", api_handle_endpoint_rotate,
     HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/webhook-endpoints/{id}/test", api_handle_endpoint_test,
     HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_GET, "/v1/overview", api_handle_overview, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/webhooks/ingest/{id}", api_handle_ingest, HTTP_JSON_BODY | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/webhooks/bank/{id}", api_handle_bank_webhook, HTTP_ENVELOPE},
    {HTTP_POST, "/v1/webhooks/bank/{id}/pix", api_handle_bank_webhook, HTTP_ENVELOPE},
    {HTTP_POST, "/v1/webhooks/bank/{id}/rec", api_handle_bank_webhook, HTTP_ENVELOPE},
    {HTTP_POST, "/v1/webhooks/bank/{id}/cobr", api_handle_bank_webhook, HTTP_ENVELOPE},
    {HTTP_GET, "/v1/recurrences", api_handle_recurrences_list, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/recurrences", api_handle_recurrence_create,
     HTTP_AUTH | HTTP_JSON_BODY | HTTP_ENVELOPE},
    {HTTP_GET, "/v1/recurrences/{id}", api_handle_recurrence_get, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/recurrences/{id}/cancel", api_handle_recurrence_cancel,
     HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/recurrences/{id}/charges", api_handle_recurrence_charge,
     HTTP_AUTH | HTTP_JSON_BODY | HTTP_ENVELOPE},
    {HTTP_GET, "/v1/bank/connections", api_handle_banks_list, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/bank/connections", api_handle_bank_connect,
     HTTP_AUTH | HTTP_ACTS_AS | HTTP_JSON_BODY | HTTP_ENVELOPE},
    {HTTP_GET, "/v1/bank/connections/{id}", api_handle_bank_get, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_PATCH, "/v1/bank/connections/{id}", api_handle_bank_update,
     HTTP_AUTH | HTTP_JSON_BODY | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/bank/connections/{id}/disconnect", api_handle_bank_disconnect,
     HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_GET, "/v1/bank/connections/{id}/notifications", api_handle_bank_notifications,
     HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/bank/connections/{id}/simulate-pix", api_handle_bank_simulate,
     HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/bank/connections/{id}/reconcile", api_handle_bank_reconcile,
     HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_GET, "/v1/bank/reconciliation", api_handle_bank_report, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/baas/account/create", api_handle_account_create,
     HTTP_AUTH | HTTP_ACTS_AS | HTTP_JSON_BODY | HTTP_ENVELOPE | HTTP_UPLOAD},
    {HTTP_POST, "/v1/baas/internal-transfer", api_handle_transfer,
     HTTP_AUTH | HTTP_ACTS_AS | HTTP_JSON_BODY | HTTP_ENVELOPE},
    {HTTP_GET, "/v1/baas/balance", api_handle_balance, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_GET, "/v1/keys", api_handle_keys_list, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/keys", api_handle_keys_create, HTTP_AUTH | HTTP_JSON_BODY | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/keys/{id}/revoke", api_handle_key_revoke, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_GET, "/v1/charges", api_handle_charges_list, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_GET, "/v1/baas/accounts", api_handle_accounts_list, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_GET, "/v1/baas/accounts/{id}", api_handle_account_get, HTTP_AUTH | HTTP_ENVELOPE},
    {HTTP_POST, "/v1/baas/accounts/{id}/secrets/reveal", api_handle_account_secrets,
     HTTP_AUTH | HTTP_ENVELOPE},
};

const size_t api_nroutes = sizeof(api_routes) / sizeof(api_routes[0]);

const struct http_route api_metrics_routes[] = {
    {HTTP_GET, "/healthz", api_handle_healthz, 0},
    {HTTP_GET, "/readyz", api_handle_readyz, 0},
    {HTTP_GET, "/metrics", api_handle_metrics, 0},
};
const size_t api_metrics_nroutes = sizeof(api_metrics_routes) / sizeof(api_metrics_routes[0]);

/* The bank door (bank-listen): the banks' webhooks and nothing else, so a
 * process that may reach the socket reaches no other route through it. */
const struct http_route api_bank_routes[] = {
    {HTTP_POST, "/v1/webhooks/bank/{id}", api_handle_bank_webhook, HTTP_ENVELOPE},
    {HTTP_POST, "/v1/webhooks/bank/{id}/pix", api_handle_bank_webhook, HTTP_ENVELOPE},
    {HTTP_POST, "/v1/webhooks/bank/{id}/rec", api_handle_bank_webhook, HTTP_ENVELOPE},
};
const size_t api_bank_nroutes = sizeof(api_bank_routes) / sizeof(api_bank_routes[0]);
