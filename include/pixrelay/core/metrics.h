/* metrics: what the process counts and measures, in the Prometheus text
 * exposition format (GET /metrics).
 *
 * One registry per process (module state, like the log): counters and
 * histograms keyed by their labels, updated from the event loop (no locks;
 * one thread). Label values come from bounded sets only (route patterns,
 * methods, statuses, outcomes, environments): never from clients' input.
 * Rendering writes every family with its HELP and TYPE, histograms with
 * cumulative `_bucket{le=...}`, `_sum` and `_count`.
 */
#ifndef PIXRELAY_METRICS_H
#define PIXRELAY_METRICS_H

#include <stddef.h>

/* An HTTP request answered: its route pattern ("" when none matched), method,
 * status and duration. */
void metrics_http(const char *route, const char *method, int status, double seconds);

/* A delivery attempt ended: environment ("sandbox"/"production"),
 * destination ("postback": a postbackUrl, "endpoint": a webhook endpoint),
 * outcome ("delivered", "retry", "dead", "release") and duration. */
void metrics_delivery(const char *env, const char *destination, const char *outcome,
		      double seconds);

/* An upstream notification acknowledged (or not): "accepted", "relayed",
 * "duplicate", "ignored", "failed". */
void metrics_ingest(const char *result);

/* A Pix a bank reported, or an item it sent that was refused: its source
 * ("webhook", "reconciliation") and outcome ("paid", "duplicate",
 * "amount_mismatch", ..., "refused"; docs/banks.md). */
void metrics_bank_pix(const char *source, const char *outcome);
/* A call to the bank webhook answered: "accepted", "unauthenticated",
 * "malformed", "unavailable". */
void metrics_bank_call(const char *result);
/* A charge put at a bank (PUT /cob) answered: "created", "refused" (the
 * bank refused it), "unavailable" (no answer, 5xx, or pixrelay's
 * credentials refused), "mismatch" (an answer that is not the charge). */
void metrics_bank_charge(const char *result);
/* A reconciliation of a bank connection over: "ok" or "failed". */
void metrics_bank_reconciliation(const char *result);

/* A Redis command answered after `seconds`, or a reconnection. */
void metrics_redis(double seconds);
void metrics_redis_reconnect(void);

/* A value read when rendering. */
struct metrics_gauge {
	const char *name; /* family name, e.g. "pixrelay_http_connections" */
	const char *help;
	const char *labels; /* "" or e.g. "shard=\"3\",state=\"pending\"" */
	double value;
};

/* Render every family, then `n` gauges (grouped by name in the order given),
 * as a malloc'd NUL-terminated text; *len gets its length. */
char *metrics_render(const struct metrics_gauge *gauges, size_t n, size_t *len);

/* Forget everything counted (tests). */
void metrics_reset(void);

#endif
