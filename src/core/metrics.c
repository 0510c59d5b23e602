/* metrics: the process's one registry: a hash table of series, one per
 * family and label set, made on first use; histograms share one set of
 * bounds (0.5 ms to 10 s). Only the event loop's thread touches it, so
 * there are no locks. Rendering writes the Prometheus text format: the
 * families, then the gauges the caller read (api/api_metrics.c, from Redis
 * and the HTTP server). Label values are escaped but must come from bounded
 * sets, never from a client. */
#include "pixrelay/core/metrics.h"
#include "pixrelay/core/hash.h"

#include "pixrelay/core/mem.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum family {
	F_HTTP_REQUESTS,
	F_HTTP_DURATION,
	F_DELIVERIES,
	F_DELIVERY_DURATION,
	F_INGEST,
	F_BANK_PIX,
	F_BANK_CALLS,
	F_BANK_CHARGES,
	F_BANK_RECONCILIATIONS,
	F_REDIS_DURATION,
	F_REDIS_RECONNECTS,
	F_COUNT
};

static const struct {
	const char *name, *help;
	int histogram;
} families[F_COUNT] = {
    [F_HTTP_REQUESTS] = {"pixrelay_http_requests_total",
			 "HTTP requests answered, by route pattern, method and status.", 0},
    [F_HTTP_DURATION] = {"pixrelay_http_request_duration_seconds",
			 "Time from reading an HTTP request to answering it.", 1},
    [F_DELIVERIES] = {"pixrelay_deliveries_total",
		      "Delivery attempts, by environment, destination (postback, endpoint) "
		      "and outcome (a release made no attempt: its destination was busy).",
		      0},
    [F_DELIVERY_DURATION] = {"pixrelay_delivery_duration_seconds", "Duration of delivery attempts.",
			     1},
    [F_INGEST] = {"pixrelay_ingest_total", "Upstream notifications answered, by result.", 0},
    [F_BANK_PIX] = {"pixrelay_bank_pix_total",
		    "Pix and refused items that banks reported, by source and outcome "
		    "(docs/banks.md).",
		    0},
    [F_BANK_CALLS] = {"pixrelay_bank_calls_total",
		      "Calls to the bank webhook, by result (accepted, unauthenticated, "
		      "malformed, unavailable).",
		      0},
    [F_BANK_CHARGES] = {"pixrelay_bank_charges_total",
			"Charges put at banks (PUT /cob), by result (created, refused, "
			"unavailable, mismatch).",
			0},
    [F_BANK_RECONCILIATIONS] = {"pixrelay_bank_reconciliations_total",
				"Reconciliations of bank connections run by this process, by "
				"result (ok, failed).",
				0},
    [F_REDIS_DURATION] = {"pixrelay_redis_command_duration_seconds",
			  "Round trip of Redis commands and scripts.", 1},
    [F_REDIS_RECONNECTS] = {"pixrelay_redis_reconnects_total",
			    "Connections to Redis made again after one was lost.", 0},
};

static const double bounds[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
				0.1,	0.25,  0.5,    1,     2.5,  5,	   10};
#define NBOUNDS (sizeof(bounds) / sizeof(bounds[0]))
#define BUCKETS 512

struct series {
	struct series *next;
	enum family f;
	char *labels;
	double count, sum;
	double buckets[NBOUNDS]; /* not cumulative; summed when rendered */
};

static struct series *table[BUCKETS];

static unsigned hash(enum family f, const char *labels)
{
	return hash_fnv1a(labels, HASH_FNV1A_INIT ^ (uint32_t)f) % BUCKETS;
}

static struct series *series_of(enum family f, const char *labels)
{
	unsigned b = hash(f, labels);
	struct series *s;

	for (s = table[b]; s; s = s->next)
		if (s->f == f && strcmp(s->labels, labels) == 0)
			return s;
	s = mem_new(struct series);
	s->f = f;
	s->labels = mem_strdup(labels);
	s->next = table[b];
	table[b] = s;
	return s;
}

static void observe(enum family f, const char *labels, double v)
{
	struct series *s = series_of(f, labels);

	s->count += 1;
	s->sum += v;
	for (size_t i = 0; i < NBOUNDS; i++)
		if (v <= bounds[i]) {
			s->buckets[i] += 1;
			break;
		}
}

/* Append `v` to buf escaped as a label value (\\, \" and \n). */
static void label(char *buf, size_t size, const char *name, const char *v, int more)
{
	size_t n = strlen(buf);

	n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "%s=\"", name);
	for (; *v && n + 3 < size; v++) {
		if (*v == '\\' || *v == '"') {
			buf[n++] = '\\';
			buf[n++] = *v;
		} else if (*v == '\n') {
			buf[n++] = '\\';
			buf[n++] = 'n';
		} else {
			buf[n++] = *v;
		}
	}
	if (n + 2 < size) {
		buf[n++] = '"';
		if (more)
			buf[n++] = ',';
	}
	buf[n < size ? n : size - 1] = '\0';
}

/* One more of family f's series {result="<result>"}. */
static void count_result(enum family f, const char *result)
{
	char l[64] = "";

	label(l, sizeof(l), "result", result, 0);
	series_of(f, l)->count += 1;
}

void metrics_http(const char *route, const char *method, int status, double seconds)
{
	char l[400] = "", lt[440];

	label(l, sizeof(l), "route", route, 1);
	label(l, sizeof(l), "method", method, 0);
	observe(F_HTTP_DURATION, l, seconds);
	snprintf(lt, sizeof(lt), "%s,status=\"%d\"", l, status);
	series_of(F_HTTP_REQUESTS, lt)->count += 1;
}

void metrics_delivery(const char *env, const char *destination, const char *outcome, double seconds)
{
	char l[160] = "";

	label(l, sizeof(l), "env", env, 1);
	label(l, sizeof(l), "destination", destination, 1);
	label(l, sizeof(l), "outcome", outcome, 0);
	series_of(F_DELIVERIES, l)->count += 1;
	if (strcmp(outcome, "release") != 0)
		observe(F_DELIVERY_DURATION, l, seconds);
}

void metrics_ingest(const char *result)
{
	count_result(F_INGEST, result);
}

void metrics_bank_pix(const char *source, const char *outcome)
{
	char l[96] = "";

	label(l, sizeof(l), "source", source, 1);
	label(l, sizeof(l), "outcome", outcome, 0);
	series_of(F_BANK_PIX, l)->count += 1;
}

void metrics_bank_call(const char *result)
{
	count_result(F_BANK_CALLS, result);
}

void metrics_bank_charge(const char *result)
{
	count_result(F_BANK_CHARGES, result);
}

void metrics_bank_reconciliation(const char *result)
{
	count_result(F_BANK_RECONCILIATIONS, result);
}

void metrics_redis(double seconds)
{
	observe(F_REDIS_DURATION, "", seconds);
}

void metrics_redis_reconnect(void)
{
	series_of(F_REDIS_RECONNECTS, "")->count += 1;
}

struct out {
	char *buf;
	size_t len, cap;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n < o->cap - o->len)
			break;
		o->cap = o->cap * 2 + (size_t)(n > 0 ? n : 0) + 1;
		o->buf = mem_realloc(o->buf, o->cap);
	}
	o->len += (size_t)n;
}

static void put_series(struct out *o, const struct series *s)
{
	const char *name = families[s->f].name;
	const char *sep = s->labels[0] ? "," : "";
	double cum = 0;

	if (!families[s->f].histogram) {
		put(o, "%s%s%s%s %.17g\n", name, s->labels[0] ? "{" : "", s->labels,
		    s->labels[0] ? "}" : "", s->count);
		return;
	}
	for (size_t i = 0; i < NBOUNDS; i++) {
		cum += s->buckets[i];
		put(o, "%s_bucket{%s%sle=\"%g\"} %.17g\n", name, s->labels, sep, bounds[i], cum);
	}
	put(o, "%s_bucket{%s%sle=\"+Inf\"} %.17g\n", name, s->labels, sep, s->count);
	put(o, "%s_sum%s%s%s %.17g\n", name, s->labels[0] ? "{" : "", s->labels,
	    s->labels[0] ? "}" : "", s->sum);
	put(o, "%s_count%s%s%s %.17g\n", name, s->labels[0] ? "{" : "", s->labels,
	    s->labels[0] ? "}" : "", s->count);
}

char *metrics_render(const struct metrics_gauge *gauges, size_t n, size_t *len)
{
	struct out o = {mem_alloc(4096), 0, 4096};

	o.buf[0] = '\0';
	put(&o, "# HELP pixrelay_build_info The version of pixrelay running.\n");
	put(&o, "# TYPE pixrelay_build_info gauge\n");
	put(&o, "pixrelay_build_info{version=\"%s\"} 1\n", PIXRELAY_VERSION);
	for (int f = 0; f < F_COUNT; f++) {
		put(&o, "# HELP %s %s\n", families[f].name, families[f].help);
		put(&o, "# TYPE %s %s\n", families[f].name,
		    families[f].histogram ? "histogram" : "counter");
		if (f == F_REDIS_RECONNECTS)
			series_of(F_REDIS_RECONNECTS, ""); /* shown even when 0 */
		for (int b = 0; b < BUCKETS; b++)
			for (const struct series *s = table[b]; s; s = s->next)
				if (s->f == (enum family)f)
					put_series(&o, s);
	}
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || strcmp(gauges[i].name, gauges[i - 1].name) != 0) {
			put(&o, "# HELP %s %s\n", gauges[i].name, gauges[i].help);
			put(&o, "# TYPE %s gauge\n", gauges[i].name);
		}
		put(&o, "%s%s%s%s %.17g\n", gauges[i].name, gauges[i].labels[0] ? "{" : "",
		    gauges[i].labels, gauges[i].labels[0] ? "}" : "", gauges[i].value);
	}
	*len = o.len;
	return o.buf;
}

void metrics_reset(void)
{
	for (int b = 0; b < BUCKETS; b++)
		while (table[b]) {
			struct series *s = table[b];
			table[b] = s->next;
			free(s->labels);
			free(s);
		}
}
