/* api_overview: GET /v1/overview, the dashboard's first page as data: how
 * the deliveries of the key's environment stand (a master key without
 * X-Account-ID), or of the acting account: what waits and how late, what
 * was delivered, failed and died per minute, in the last hour and day, the
 * hosts and endpoints that failed, the disabled endpoints
 * (store/overview.c; docs/dashboard.md).
 */
#include "api_int.h"

#include "pixrelay/pix/page.h"
#include "pixrelay/store/overview.h"

/* GET /v1/overview?minutes= (1 .. 180, 180 by default: the per-minute
 * series' length) */
void api_handle_overview(struct http_req *req)
{
	static const char *const names[] = {"minutes"};
	struct app *app = app_of(req);
	struct api_caller *c = req->auth;
	char *v[1];
	int minutes = OVERVIEW_MINUTES;

	if (api_query_params(req, names, 1, v) < 0)
		return;
	if (v[0] && page_parse_limit(v[0], OVERVIEW_MINUTES, &minutes) < 0)
		http_reply_error(req, 400, "minutes: must be an integer from 1 to %d",
				 OVERVIEW_MINUTES);
	else
		overview_read(app->rds, app->cfg, c->key.env,
			      api_env_scope(req) ? NULL : c->account, minutes, api_on_json, req);
	api_query_free(v, 1);
}
