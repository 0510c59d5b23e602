/* dashboard: the web dashboard at /dashboard/, served from the binary.
 *
 * Its files (dashboard/ in the source tree: plain HTML, CSS and JavaScript
 * modules, no build step) are compiled in by tools/embed_assets.py, so the
 * binary alone serves them, offline. The pages call the public API with the
 * key the user signs in with; this module only serves files, each with the
 * security headers below (a strict Content-Security-Policy: nothing inline,
 * nothing from elsewhere, no framing) and an ETag, so a browser revalidates
 * with a 304 instead of downloading again.
 */
#ifndef PIXRELAY_DASHBOARD_H
#define PIXRELAY_DASHBOARD_H

#include <stddef.h>

struct http_req;

/* One file, as tools/embed_assets.py writes it. All static. */
struct dashboard_asset {
	const char *name; /* "app.js" */
	const char *type; /* its Content-Type */
	const unsigned char *data;
	size_t len;
	const char *etag; /* quoted, from the bytes' SHA-256 */
};

extern const struct dashboard_asset dashboard_assets[];
extern const size_t dashboard_nassets;

/* The Content-Security-Policy of every dashboard answer. */
#define DASHBOARD_CSP                                                                              \
	"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "                \
	"connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; "           \
	"frame-ancestors 'none'; require-trusted-types-for 'script'; trusted-types 'none'"

/* The file called `name`, or NULL. */
const struct dashboard_asset *dashboard_find(const char *name);

/* GET /dashboard: a redirect to /dashboard/ (308). */
void dashboard_redirect(struct http_req *req);

/* GET /dashboard/: the page (index.html). */
void dashboard_index(struct http_req *req);

/* GET /dashboard/{file}: one file, or 404. */
void dashboard_file(struct http_req *req);

#endif
