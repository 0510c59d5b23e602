/* Benchmark of the parsers of outside input (docs/performance.md, "Parsers
 * of outside input"):
 *
 *   build/tests/bench-parsers [seconds per case, default 0.3]
 *
 * For each parser, on a typical input and on inputs built to be its worst
 * case at the largest size the service accepts (max-body 1 MiB, max-upload
 * 16 MiB, or the parser's own bound), it prints the time of one parse, the
 * time per MiB of input and the result (ok, or the start of the refusal). It
 * is a measurement, not a test: it exits 0 however slow a parser is. What
 * matters is that no line is far above the others per MiB: every parser is
 * linear (or bounded) in its input.
 */
#include "pixrelay/pix/account.h"
#include "pixrelay/pix/backoff.h"
#include "pixrelay/core/base64.h"
#include "pixrelay/pix/brcode.h"
#include "pixrelay/pix/charge.h"
#include "pixrelay/store/ingest.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/netaddr.h"
#include "pixrelay/pix/reqbody.h"
#include "pixrelay/core/timefmt.h"
#include "pixrelay/core/validate.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MIB (1024.0 * 1024.0)
#define MAX_BODY (1024 * 1024)
#define MAX_UPLOAD (16 * 1024 * 1024)
#define TODAY 20527LL /* 2026-03-15 */

static double budget_s = 0.3;

/* ---- building inputs ---- */

struct text {
	char *s;
	size_t len, cap;
};

static void grow(struct text *t, size_t n)
{
	if (t->len + n + 1 > t->cap) {
		t->cap = (t->len + n + 1) * 2;
		t->s = realloc(t->s, t->cap);
		if (!t->s)
			abort();
	}
}

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	grow(t, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
}

/* `piece` repeated while the text stays within `limit` bytes minus `reserve`. */
static void fill(struct text *t, const char *piece, size_t limit, size_t reserve)
{
	size_t n = strlen(piece);

	while (t->len + n + reserve <= limit)
		put(t, "%s", piece);
}

/* ---- timing ---- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One parse of `in` (len bytes); writes "ok" or the refusal into out. */
typedef void (*parse_fn)(const char *in, size_t len, char *out, size_t outlen);

static void row(const char *parser, const char *what, parse_fn fn, const char *in, size_t len)
{
	char result[512] = "";
	double t0 = now_s(), t, per;
	long runs = 0;

	do {
		fn(in, len, result, sizeof(result));
		runs++;
		t = now_s() - t0;
	} while (t < budget_s);
	per = t / (double)runs;
	printf("%-10s %-52s %10zu %11.3f %11.2f  %.60s\n", parser, what, len, per * 1e3,
	       per * 1e3 * MIB / (double)(len ? len : 1), result);
}

/* ---- the parsers, as the handlers call them ---- */

static void p_json(const char *in, size_t len, char *out, size_t outlen)
{
	yajl_val v = NULL;

	if (json_parse_object(in, len, &v, out, outlen) == 0)
		snprintf(out, outlen, "ok");
	yajl_tree_free(v);
}

static void p_charge(const char *in, size_t len, char *out, size_t outlen)
{
	struct charge_limits lim = {86400, 2592000, 0};
	struct charge_input ci;
	yajl_val v = NULL;

	if (json_parse_object(in, len, &v, out, outlen) < 0)
		return;
	if (charge_parse_create(v, &lim, &ci, out, outlen) == 0) {
		snprintf(out, outlen, "ok");
		charge_input_deinit(&ci);
	}
	yajl_tree_free(v);
}

static void p_account(const char *in, size_t len, char *out, size_t outlen)
{
	struct account_limits lim = {5u * 1024 * 1024};
	struct account_input ai;
	yajl_val v = NULL;

	if (json_parse_object(in, len, &v, out, outlen) < 0)
		return;
	if (account_parse_create(v, &lim, TODAY, &ai, out, outlen) == 0) {
		snprintf(out, outlen, "ok");
		account_input_deinit(&ai);
	}
	yajl_tree_free(v);
}

static void p_ingest(const char *in, size_t len, char *out, size_t outlen)
{
	struct ingest_note n;

	if (ingest_parse(in, len, &n, out, outlen) == 0) {
		snprintf(out, outlen, "ok");
		ingest_note_deinit(&n);
	}
}

static void p_refund(const char *in, size_t len, char *out, size_t outlen)
{
	yajl_val v = NULL;
	int64_t amount;

	if (json_parse_object(in, len, &v, out, outlen) < 0)
		return;
	if (reqbody_refund(v, &amount, out, outlen) == 0)
		snprintf(out, outlen, "ok");
	yajl_tree_free(v);
}

static void p_transfer(const char *in, size_t len, char *out, size_t outlen)
{
	struct reqbody_transfer t;
	yajl_val v = NULL;

	if (json_parse_object(in, len, &v, out, outlen) < 0)
		return;
	if (reqbody_transfer(v, &t, out, outlen) == 0)
		snprintf(out, outlen, "ok");
	yajl_tree_free(v);
}

static void p_replay(const char *in, size_t len, char *out, size_t outlen)
{
	struct event_filter f = {.state = "dead", .limit = 100};
	yajl_val v = NULL;

	if (json_parse_object(in, len, &v, out, outlen) < 0)
		return;
	if (reqbody_replay(v, &f, out, outlen) == 0)
		snprintf(out, outlen, "ok");
	yajl_tree_free(v);
}

static void p_file(const char *in, size_t len, char *out, size_t outlen)
{
	struct account_file f;

	if (account_decode_file(in, ACCOUNT_KINDS_PDF | ACCOUNT_KINDS_IMAGE, 16u << 20, &f, out,
				outlen) == 0) {
		snprintf(out, outlen, "ok");
		account_file_deinit(&f);
	}
}

/* The small parsers: `in` holds NUL-separated items, each parsed in turn. */
static void each_item(const char *in, size_t len, char *out, size_t outlen,
		      int (*one)(const char *))
{
	long ok = 0, n = 0;

	for (const char *p = in; p < in + len; p += strlen(p) + 1, n++)
		ok += one(p);
	snprintf(out, outlen, "%ld of %ld accepted", ok, n);
}

static int one_brcode(const char *s)
{
	static struct brcode_decoded d;
	char err[256];

	return brcode_decode(s, &d, err, sizeof(err)) == 0;
}

static int one_retry_after(const char *s)
{
	long long ms;

	return backoff_parse_retry_after(s, 1795307992LL, &ms) == 0;
}

static int one_timefmt(const char *s)
{
	long long ms;

	return timefmt_parse(s, &ms) == 0;
}

static int one_url(const char *s)
{
	return validate_is_http_url(s);
}

static int one_cidrs(const char *s)
{
	struct netaddr_list l;
	char err[256];
	int ok = netaddr_list_parse(&l, s, err, sizeof(err)) == 0;

	if (ok)
		netaddr_list_deinit(&l);
	return ok;
}

static void p_brcode(const char *in, size_t len, char *out, size_t outlen)
{
	each_item(in, len, out, outlen, one_brcode);
}

static void p_retry_after(const char *in, size_t len, char *out, size_t outlen)
{
	each_item(in, len, out, outlen, one_retry_after);
}

static void p_timefmt(const char *in, size_t len, char *out, size_t outlen)
{
	each_item(in, len, out, outlen, one_timefmt);
}

static void p_url(const char *in, size_t len, char *out, size_t outlen)
{
	each_item(in, len, out, outlen, one_url);
}

static void p_cidrs(const char *in, size_t len, char *out, size_t outlen)
{
	each_item(in, len, out, outlen, one_cidrs);
}

/* 1 MiB of `item` repeated, NUL-separated. */
static struct text items(const char *item)
{
	struct text t = {0};
	size_t n = strlen(item) + 1;

	while (t.len + n <= MAX_BODY) {
		grow(&t, n);
		memcpy(t.s + t.len, item, n);
		t.len += n;
	}
	return t;
}

/* ---- cases ---- */

static const char *charge_typical =
    "{\"amount\":12345,\"externalID\":\"order-2026-000123\",\"expiration\":3600,"
    "\"comment\":\"Pedido 123\",\"name\":\"Fulano de Tal\",\"email\":\"fulano@example.com\","
    "\"phone\":\"+55 (11) 94321-4321\",\"document\":\"529.982.247-25\","
    "\"postbackUrl\":\"https://shop.example.com/hooks/pix?order=123\"}";

static void json_cases(void)
{
	struct text t = {0};

	row("json", "typical charge body", p_json, charge_typical, strlen(charge_typical));

	/* the issue's body: 90,000 distinct short keys in 1 MiB */
	put(&t, "{");
	for (int i = 0; t.len < MAX_BODY - 40; i++)
		put(&t, "%s\"k%d\":1", i ? "," : "", i);
	put(&t, "}");
	row("json", "1 MiB, ~90,000 keys (refused at 10,000 values)", p_json, t.s, t.len);
	free(t.s);

	/* just under the value limit: 9,998 keys of 100 bytes sharing a
	 * 94-byte prefix, the worst for the sort of the duplicate check */
	t = (struct text){0};
	put(&t, "{");
	for (int i = 0; i < JSON_MAX_VALUES - 2; i++)
		put(&t, "%s\"%094d%06d\":0", i ? "," : "", 0, (i * 7919) % 1000000);
	put(&t, "}");
	row("json", "9,998 distinct 100-byte keys, common prefix", p_json, t.s, t.len);
	free(t.s);

	/* every key the same (the duplicate is reported) */
	t = (struct text){0};
	put(&t, "{");
	for (int i = 0; i < JSON_MAX_VALUES - 2; i++)
		put(&t, "%s\"%0100d\":0", i ? "," : "", 0);
	put(&t, "}");
	row("json", "9,998 equal 100-byte keys", p_json, t.s, t.len);
	free(t.s);

	/* 1 MiB of nesting 32 deep, repeated under the value limit */
	t = (struct text){0};
	put(&t, "{\"a\":[");
	for (int i = 0; i < 300; i++) {
		put(&t, "%s", i ? "," : "");
		for (int d = 0; d < JSON_MAX_DEPTH - 2; d++)
			put(&t, "[");
		for (int d = 0; d < JSON_MAX_DEPTH - 2; d++)
			put(&t, "]");
	}
	put(&t, "]}");
	row("json", "9,000 arrays 32 deep (values are the bound)", p_json, t.s, t.len);
	free(t.s);
	t = (struct text){0};
	put(&t, "{\"a\":");
	fill(&t, "[", MAX_BODY / 2, 0);
	row("json", "512 KiB of '[' (refused at depth 33)", p_json, t.s, t.len);
	free(t.s);

	/* long strings full of escapes */
	t = (struct text){0};
	put(&t, "{\"a\":\"");
	fill(&t, "\\ud83d\\ude00", MAX_BODY, 2);
	put(&t, "\"}");
	row("json", "1 MiB string of \\ud83d\\ude00 escapes", p_json, t.s, t.len);
	free(t.s);
	t = (struct text){0};
	put(&t, "{\"a\":\"");
	fill(&t, "\\\"\\\\\\n\\u00e9\xc3\xa9", MAX_BODY, 2);
	put(&t, "\"}");
	row("json", "1 MiB string of mixed escapes and UTF-8", p_json, t.s, t.len);
	free(t.s);

	/* huge arrays: refused once the 10,000th value arrives */
	t = (struct text){0};
	put(&t, "{\"a\":[");
	fill(&t, "0,", MAX_BODY, 3);
	put(&t, "0]}");
	row("json", "1 MiB array of 0 (refused at 10,000 values)", p_json, t.s, t.len);
	free(t.s);
	t = (struct text){0};
	put(&t, "{\"a\":[");
	for (int i = 0; i < JSON_MAX_VALUES - 3; i++)
		put(&t, "%s\"%098d\"", i ? "," : "", i);
	put(&t, "]}");
	row("json", "9,997 strings of 98 bytes", p_json, t.s, t.len);
	free(t.s);

	/* one 1 MiB number */
	t = (struct text){0};
	put(&t, "{\"a\":0.");
	fill(&t, "1", MAX_BODY, 1);
	put(&t, "}");
	row("json", "a number of 1 MiB digits", p_json, t.s, t.len);
	free(t.s);
}

static void charge_cases(void)
{
	struct text t = {0};

	row("charge", "typical body", p_charge, charge_typical, strlen(charge_typical));
	put(&t, "{\"amount\":500,\"comment\":\"");
	fill(&t, "\xf0\x9f\x98\x80", MAX_BODY, 2);
	put(&t, "\"}");
	row("charge", "1 MiB comment of 4-byte characters", p_charge, t.s, t.len);
	free(t.s);
	t = (struct text){0};
	put(&t, "{\"amount\":500,\"postbackUrl\":\"https://a.example.com/");
	fill(&t, "%41", MAX_BODY, 2);
	put(&t, "\"}");
	row("charge", "1 MiB postbackUrl", p_charge, t.s, t.len);
	free(t.s);
	t = (struct text){0};
	put(&t, "{\"amount\":500,\"email\":\"a@");
	fill(&t, "b.", MAX_BODY, 5);
	put(&t, "com\"}");
	row("charge", "1 MiB email", p_charge, t.s, t.len);
	free(t.s);
}

/* Representative `i` (a CPF of its own: an account names a person once)
 * with three pictures of `pic` (base64). */
static void rep(struct text *t, int i, const char *pic)
{
	static const char *const cpfs[ACCOUNT_MAX_REPRESENTATIVES] = {
	    "529.982.247-25", "12345678909", "98765432100", "11122233396", "44455566619",
	    "77788899941",    "13579246828", "24681357928", "31415926590", "27182818205"};

	put(t,
	    "%s{\"name\":\"Fulano %d\",\"birthDate\":\"1990-05-17\",\"email\":\"f%d@example.com\","
	    "\"taxID\":\"%s\",\"phone\":\"+55 11 94321-4321\",\"documents\":{"
	    "\"picture_face\":\"%s\",\"picture_identity_front\":\"%s\","
	    "\"picture_identity_back\":\"%s\",\"picture_identity_type\":\"RG\"}}",
	    i ? "," : "", i, i, cpfs[i], pic, pic, pic);
}

/* A base64 PDF or PNG of `n` decoded bytes. */
static char *file_b64(int png, size_t n)
{
	static const unsigned char png_magic[8] = {0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a};
	unsigned char *raw = malloc(n);
	char *b64;

	if (!raw)
		abort();
	for (size_t i = 0; i < n; i++)
		raw[i] = (unsigned char)(i * 131 + 7);
	if (png)
		memcpy(raw, png_magic, 8);
	else
		memcpy(raw, "%PDF-1.4\n", 9);
	b64 = malloc(base64_encoded_len(n) + 1);
	if (!b64)
		abort();
	base64_encode(raw, n, b64);
	free(raw);
	return b64;
}

static void account_cases(void)
{
	struct text t = {0};
	char *pdf = file_b64(0, 64 * 1024), *png = file_b64(1, 48 * 1024);
	char *big_pdf, *big_png;
	const char *addr =
	    "\"address\":{\"zipcode\":\"01310-100\",\"street\":\"Av. Paulista\","
	    "\"number\":\"1000\",\"neighborhood\":\"Bela Vista\",\"city\":\"S\\u00e3o "
	    "Paulo\",\"state\":\"SP\"}";

	/* typical: one 64 KiB PDF, one representative with 48 KiB pictures */
	put(&t,
	    "{\"officialName\":\"Empresa Ltda\",\"tradeName\":\"Loja\",\"taxID\":\"11.222.333/"
	    "0001-81\",\"documents\":[\"%s\"],%s,\"representatives\":[",
	    pdf, addr);
	rep(&t, 0, png);
	put(&t, "]}");
	row("account", "typical: 1 PDF, 1 representative", p_account, t.s, t.len);
	free(t.s);

	/* the most files the body can hold: 10 documents and 10 representatives
	 * with 3 pictures each, 40 files sharing the 16 MiB upload */
	big_pdf = file_b64(0, (MAX_UPLOAD - 64 * 1024) / 40 / 4 * 3);
	big_png = file_b64(1, (MAX_UPLOAD - 64 * 1024) / 40 / 4 * 3);
	t = (struct text){0};
	put(&t, "{\"officialName\":\"Empresa Ltda\",\"tradeName\":\"Loja\",\"taxID\":\"11.222.333/"
		"0001-81\",\"documents\":[");
	for (int i = 0; i < ACCOUNT_MAX_DOCUMENTS; i++)
		put(&t, "%s\"data:application/pdf;base64,%s\"", i ? "," : "", big_pdf);
	put(&t, "],%s,\"representatives\":[", addr);
	for (int i = 0; i < ACCOUNT_MAX_REPRESENTATIVES; i++)
		rep(&t, i, big_png);
	put(&t, "]}");
	row("account", "16 MiB: 10 documents, 10 reps, 40 files", p_account, t.s, t.len);
	free(t.s);

	/* the last file is broken: everything before it is decoded in vain */
	t = (struct text){0};
	put(&t, "{\"officialName\":\"Empresa Ltda\",\"tradeName\":\"Loja\",\"taxID\":\"11.222.333/"
		"0001-81\",\"documents\":[");
	for (int i = 0; i < ACCOUNT_MAX_DOCUMENTS; i++)
		put(&t, "%s\"%s\"", i ? "," : "", big_pdf);
	put(&t, "],%s,\"representatives\":[", addr);
	for (int i = 0; i < ACCOUNT_MAX_REPRESENTATIVES - 1; i++)
		rep(&t, i, big_png);
	big_png[strlen(big_png) - 1] = '!';
	rep(&t, ACCOUNT_MAX_REPRESENTATIVES - 1, big_png);
	put(&t, "]}");
	row("account", "16 MiB, the last representative's pictures not base64", p_account, t.s,
	    t.len);
	free(t.s);

	row("file", "5 MiB PDF as base64", p_file, big_pdf, strlen(big_pdf));
	free(pdf);
	free(png);
	free(big_pdf);
	free(big_png);
	big_pdf = file_b64(0, 12 * 1024 * 1024);
	row("file", "12 MiB PDF as base64", p_file, big_pdf, strlen(big_pdf));
	free(big_pdf);
}

static void small_body_cases(void)
{
	static const char refund[] = "{\"amount\":1500,\"reason\":\"pedido cancelado\"}";
	static const char transfer[] =
	    "{\"amount\":150,\"from_key\":\"fulano@example.com\",\"to_key\":\"+5511943214321\"}";
	static const char replay[] = "{\"state\":\"dead\",\"type\":\"EVENT:CHARGE_PAID\","
				     "\"since\":\"2026-11-22T00:15:51Z\",\"limit\":1000}";
	struct text t = {0};

	row("refund", "typical body", p_refund, refund, strlen(refund));
	put(&t, "{\"amount\":1500,\"reason\":\"");
	fill(&t, "\xc3\xa9", MAX_BODY, 2);
	put(&t, "\"}");
	row("refund", "1 MiB reason", p_refund, t.s, t.len);
	free(t.s);
	row("transfer", "typical body", p_transfer, transfer, strlen(transfer));
	t = (struct text){0};
	put(&t, "{\"amount\":150,\"to_key\":\"k\",\"from_key\":\"");
	fill(&t, "k", MAX_BODY, 2);
	put(&t, "\"}");
	row("transfer", "1 MiB from_key", p_transfer, t.s, t.len);
	free(t.s);
	row("replay", "typical body", p_replay, replay, strlen(replay));
	t = (struct text){0};
	put(&t, "{\"limit\":1,\"since\":\"2026-11-22T00:15:51.");
	fill(&t, "1", MAX_BODY, 3);
	put(&t, "Z\"}");
	row("replay", "1 MiB since (fraction digits)", p_replay, t.s, t.len);
	free(t.s);
}

static void ingest_cases(void)
{
	static const char typical[] =
	    "{\"id\":\"evt_01JD8N3\",\"event\":\"EVENT:CHARGE_PAID\",\"data\":{\"id\":\"chg_1\","
	    "\"status\":\"PAID\",\"value\":1500,\"fee\":12,\"paidAt\":\"2026-11-22 00:15:51\","
	    "\"customer\":{\"name\":\"Fulano\",\"taxID\":\"52998224725\"}}}";
	struct text t = {0};

	row("ingest", "typical notification", p_ingest, typical, strlen(typical));
	/* data re-serialised for the relay: as many values as allowed */
	put(&t, "{\"id\":\"e\",\"event\":\"EVENT:CHARGE_PAID\",\"data\":{\"id\":\"c\",\"x\":[");
	for (int i = 0; i < JSON_MAX_VALUES - 8; i++)
		put(&t, "%s\"\\u00e9%096d\"", i ? "," : "", i);
	put(&t, "]}}");
	row("ingest", "data of 9,992 escaped strings, re-serialised", p_ingest, t.s, t.len);
	free(t.s);
}

static void item_cases(void)
{
	struct text t;
	char code[BRCODE_ENCODE_BUF], err[256];
	struct brcode_input in = {.pix_key = "fulano@example.com",
				  .merchant_name = "PIXRELAY",
				  .merchant_city = "SAO PAULO",
				  .txid = "TX123",
				  .amount_cents = 12345};

	if (brcode_encode(&in, code, sizeof(code), err, sizeof(err)) != 0)
		abort();
	t = items(code);
	row("brcode", "1 MiB of valid BR Codes", p_brcode, t.s, t.len);
	free(t.s);
	{
		char longest[BRCODE_MAX_LEN + 1];
		memset(longest, '9', BRCODE_MAX_LEN);
		memcpy(longest, "000201", 6);
		longest[BRCODE_MAX_LEN] = '\0';
		t = items(longest);
		row("brcode", "1 MiB of 512-character non-codes", p_brcode, t.s, t.len);
		free(t.s);
	}
	t = items("Sun, 06 Nov 1994 08:49:37 GMT");
	row("retry-after", "1 MiB of HTTP dates", p_retry_after, t.s, t.len);
	free(t.s);
	{
		char digits[4097];
		memset(digits, '9', 4096);
		digits[4096] = '\0';
		t = items(digits);
		row("retry-after", "1 MiB of 4096-digit delays", p_retry_after, t.s, t.len);
		free(t.s);
	}
	t = items("2026-11-22T00:15:51.123+03:00");
	row("timefmt", "1 MiB of RFC 3339 moments", p_timefmt, t.s, t.len);
	free(t.s);
	t = items("https://shop.example.com:8443/hooks/pix?order=123&x=%20");
	row("url", "1 MiB of postback URLs", p_url, t.s, t.len);
	free(t.s);
	{
		char url[VALIDATE_URL_MAX + 1];
		size_t n = (size_t)snprintf(url, sizeof(url), "http://");
		while (n + 2 < VALIDATE_URL_MAX) {
			url[n++] = 'a';
			url[n++] = '.';
		}
		url[n++] = 'a';
		url[n] = '\0';
		t = items(url);
		row("url", "1 MiB of 2048-character hosts of 1-letter labels", p_url, t.s, t.len);
		free(t.s);
	}
	t = items("10.0.0.0/8, 192.168.0.1, ::1/128, fe80::/10, 2001:db8::/32");
	row("cidrs", "1 MiB of CIDR lists", p_cidrs, t.s, t.len);
	free(t.s);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		budget_s = atof(argv[1]);
	if (!(budget_s > 0 && budget_s < 60)) {
		fprintf(stderr, "usage: bench-parsers [seconds per case, default 0.3]\n");
		return 2;
	}
	printf("%-10s %-52s %10s %11s %11s  %s\n", "parser", "input", "bytes", "ms/parse", "ms/MiB",
	       "result");
	json_cases();
	charge_cases();
	account_cases();
	small_body_cases();
	ingest_cases();
	item_cases();
	return 0;
}
