/* dashboard: the dashboard's files served from the binary (compiled in from
 * dashboard/ by tools/embed_assets.py): the redirect to /dashboard/,
 * index.html, or one file by name, each answer with the security headers
 * and an ETag, so that a browser's If-None-Match gets a 304. The pages in
 * dashboard/ call the public API like any client (docs/dashboard.md); their
 * routes are in api.c. */
#include "pixrelay/api/dashboard.h"

#include "pixrelay/http/http.h"
#include "pixrelay/core/json.h"

#include <string.h>

const struct dashboard_asset *dashboard_find(const char *name)
{
	for (size_t i = 0; i < dashboard_nassets; i++)
		if (strcmp(dashboard_assets[i].name, name) == 0)
			return &dashboard_assets[i];
	return NULL;
}

/* What every answer of the dashboard carries, errors included. */
static void security_headers(struct http_req *req)
{
	http_add_header(req, "Content-Security-Policy", DASHBOARD_CSP);
	http_add_header(req, "X-Frame-Options", "DENY");
	http_add_header(req, "X-Content-Type-Options", "nosniff");
	http_add_header(req, "Referrer-Policy", "no-referrer");
	http_add_header(req, "Cross-Origin-Opener-Policy", "same-origin");
	http_add_header(req, "Cross-Origin-Resource-Policy", "same-origin");
	http_add_header(req, "Permissions-Policy",
			"camera=(), microphone=(), geolocation=(), payment=(), usb=()");
}

/* True when the client's If-None-Match names `etag`. */
static bool not_modified(struct http_req *req, const char *etag)
{
	const char *inm = http_header(req, "If-None-Match");
	size_t n = strlen(etag);

	for (const char *p = inm; p && *p;) {
		p += strspn(p, " \t,");
		if (strncmp(p, "W/", 2) == 0)
			p += 2;
		if (strncmp(p, etag, n) == 0 && (p[n] == '\0' || p[n] == ',' || p[n] == ' '))
			return true;
		if (*p == '*')
			return true;
		p += strcspn(p, ",");
	}
	return false;
}

static void serve(struct http_req *req, const struct dashboard_asset *a)
{
	security_headers(req);
	if (!a) {
		char echo[JSON_ECHO_MAX + 1];

		http_reply_error(req, 404, "no such dashboard file: %s",
				 json_echo(echo, req->params[0]));
		return;
	}
	http_add_header(req, "ETag", a->etag);
	/* always revalidated (a new binary may serve new files), cheaply: 304 */
	if (not_modified(req, a->etag)) {
		http_reply_bytes(req, 304, a->type, "no-cache", "", 0);
		return;
	}
	http_reply_bytes(req, 200, a->type, "no-cache", a->data, a->len);
}

void dashboard_redirect(struct http_req *req)
{
	security_headers(req);
	/* relative, so that it holds behind a proxy that mounts pixrelay under a prefix */
	http_add_header(req, "Location", "dashboard/");
	http_reply_bytes(req, 308, "text/plain; charset=utf-8", NULL, "/dashboard/\n", 12);
}

void dashboard_index(struct http_req *req)
{
	serve(req, dashboard_find("index.html"));
}

void dashboard_file(struct http_req *req)
{
	serve(req, dashboard_find(req->params[0]));
}
