/* banks_render: a bank connection as the API and the CLI show it (docs/
 * banks.md): its trust list and pins, its webhook URL, the certificates of
 * its API credentials (never a secret), what its reconciliations found and
 * what the processes saw of its bank's API. JSON shaping only; the reads
 * are banks.c's. */
#include "banks_int.h"

#include "pixrelay/core/certcheck.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/timefmt.h"
#include "pixrelay/store/banks_webhook.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void banks_fields_of(const redisReply *h, struct banks_fields *f)
{
	f->id = banks_or_empty(rds_hash_field(h, "id"));
	f->account = banks_or_empty(rds_hash_field(h, "account"));
	f->env = banks_or_empty(rds_hash_field(h, "env"));
	f->provider = banks_or_empty(rds_hash_field(h, "provider"));
	if (!f->provider[0])
		f->provider = "api-pix";
	f->prov_keys = banks_or_empty(rds_hash_field(h, "prov_keys"));
	f->prov_own = banks_or_empty(rds_hash_field(h, "prov_own"));
	f->pix_key = banks_or_empty(rds_hash_field(h, "pix_key"));
	f->auth = banks_or_empty(rds_hash_field(h, "auth"));
	f->client_ca = banks_or_empty(rds_hash_field(h, "client_ca"));
	f->client_subject = banks_or_empty(rds_hash_field(h, "client_subject"));
	f->client_pins = banks_or_empty(rds_hash_field(h, "client_pins"));
	f->is_default = banks_or_empty(rds_hash_field(h, "default"));
	f->created_ms = banks_or_empty(rds_hash_field(h, "created_ms"));
	f->last_call_ms = banks_or_empty(rds_hash_field(h, "last_call_ms"));
	f->api_url = banks_or_empty(rds_hash_field(h, "api_url"));
	f->token_url = banks_or_empty(rds_hash_field(h, "token_url"));
	f->client_id = banks_or_empty(rds_hash_field(h, "client_id"));
	f->cert = banks_or_empty(rds_hash_field(h, "cert"));
	f->bank_ca = banks_or_empty(rds_hash_field(h, "bank_ca"));
	f->api_scope = rds_hash_field(h, "api_scope");
	f->api_header_names = banks_or_empty(rds_hash_field(h, "api_header_names"));
	f->api_query_names = banks_or_empty(rds_hash_field(h, "api_query_names"));
	f->rec_at = banks_or_empty(rds_hash_field(h, "rec_at"));
	f->rec_ok_ms = banks_or_empty(rds_hash_field(h, "rec_ok_ms"));
	f->rec_fail = banks_or_empty(rds_hash_field(h, "rec_fail"));
	f->rec_error = banks_or_empty(rds_hash_field(h, "rec_error"));
	f->rec_error_ms = banks_or_empty(rds_hash_field(h, "rec_error_ms"));
	f->rec_listed = banks_or_empty(rds_hash_field(h, "rec_listed"));
	f->rec_new = banks_or_empty(rds_hash_field(h, "rec_new"));
	f->rec_new_total = banks_or_empty(rds_hash_field(h, "rec_new_total"));
	f->api_token_ms = banks_or_empty(rds_hash_field(h, "api_token_ms"));
	f->api_call_ms = banks_or_empty(rds_hash_field(h, "api_call_ms"));
	f->api_error = banks_or_empty(rds_hash_field(h, "api_error"));
	f->api_error_ms = banks_or_empty(rds_hash_field(h, "api_error_ms"));
	f->rcv_agencia = banks_or_empty(rds_hash_field(h, "rcv_agencia"));
	f->rcv_conta = banks_or_empty(rds_hash_field(h, "rcv_conta"));
	f->rcv_tipo = banks_or_empty(rds_hash_field(h, "rcv_tipo"));
}

void banks_fields_blank(struct banks_fields *f)
{
	const char **p = (const char **)f;

	for (size_t i = 0; i < sizeof(*f) / sizeof(*p); i++)
		if (!p[i])
			p[i] = "";
}

/* "reconciliation": what its runs found ({} fields null before the first). */
static void render_reconciliation(yajl_gen g, const struct config *cfg,
				  const struct banks_fields *f)
{
	json_open(g);
	json_str(g, "intervalSeconds");
	json_int(g, cfg->bank_reconcile_interval);
	json_str(g, "reconciledUntil");
	json_time_ms(g, f->rec_at);
	json_str(g, "lastSuccessAt");
	json_time_ms(g, f->rec_ok_ms);
	json_str(g, "lastListed");
	json_int(g, strtoll(f->rec_listed, NULL, 10));
	json_str(g, "lastNew");
	json_int(g, strtoll(f->rec_new, NULL, 10));
	json_str(g, "newTotal");
	json_int(g, strtoll(f->rec_new_total, NULL, 10));
	json_str(g, "failures");
	json_int(g, strtoll(f->rec_fail, NULL, 10));
	json_str(g, "lastError");
	json_str_or_null(g, f->rec_error[0] ? f->rec_error : NULL);
	json_str(g, "lastErrorAt");
	json_time_ms(g, f->rec_error[0] ? f->rec_error_ms : "");
	json_close(g);
}

/* {"subject", "notAfter", "sha256"} of the first certificate of `pem`, or
 * null. */
static void render_cert(yajl_gen g, const char *pem)
{
	BIO *b = pem[0] ? BIO_new_mem_buf(pem, (int)strlen(pem)) : NULL;
	X509 *x = b ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;
	unsigned char md[32];
	unsigned int mdlen = 0;
	char subject[256] = "", hex[65], after[40] = "";
	struct tm tm;

	if (!x) {
		json_null(g);
		goto done;
	}
	/* as RFC 4514 writes it, as a pinned subject is written */
	if (certcheck_subject_text(x, subject, sizeof(subject)) < 0)
		X509_NAME_oneline(X509_get_subject_name(x), subject, sizeof(subject));
	X509_digest(x, EVP_sha256(), md, &mdlen);
	ids_hex(hex, md, sizeof(md));
	if (ASN1_TIME_to_tm(X509_get0_notAfter(x), &tm) == 1)
		strftime(after, sizeof(after), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_open(g);
	json_str(g, "subject");
	json_str(g, subject);
	json_str(g, "notAfter");
	json_str_or_null(g, after[0] ? after : NULL);
	json_str(g, "sha256");
	json_str(g, hex);
	json_close(g);
done:
	X509_free(x);
	BIO_free(b);
	ERR_clear_error();
}

/* ["a", "b"] of the comma-separated names "a,b" ("": []). */
static void render_names(yajl_gen g, const char *names)
{
	json_open_array(g);
	for (const char *p = names; *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		json_strn(g, p, n);
		p += n + (end ? 1 : 0);
	}
	json_close_array(g);
}

/* {"sha256", "own"} of each PEM public key in `pem` (the SHA-256 of its
 * DER, as Woovi's key_identifier is). */
static void render_key_list(yajl_gen g, const char *pem, int own)
{
	BIO *b;
	EVP_PKEY *k;
	int n = 0;

	if (!pem[0])
		return;
	b = BIO_new_mem_buf(pem, (int)strlen(pem));
	if (!b)
		mem_oom(__FILE__, __LINE__);
	while (n < 16 && (k = PEM_read_bio_PUBKEY(b, NULL, NULL, NULL))) {
		unsigned char *der = NULL, md[32];
		int len = i2d_PUBKEY(k, &der);
		char hex[65];

		if (len > 0) {
			SHA256(der, (size_t)len, md);
			ids_hex(hex, md, sizeof(md));
			json_open(g);
			json_str(g, "sha256");
			json_str(g, hex);
			json_str(g, "own");
			json_bool(g, own);
			json_close(g);
		}
		OPENSSL_free(der);
		EVP_PKEY_free(k);
		n++;
	}
	BIO_free(b);
	ERR_clear_error();
}

/* "signatureKeys": the provider's keys, then pixrelay's own sandbox key
 * ("own": true), or null when the connection has none (a bank's). */
static void render_keys(yajl_gen g, const char *provider, const char *own)
{
	if (!provider[0] && !own[0]) {
		json_null(g);
		return;
	}
	json_open_array(g);
	render_key_list(g, provider, 0);
	render_key_list(g, own, 1);
	json_close_array(g);
}

/* "trust": what an mTLS connection takes of its bank's certificate beyond
 * its trust list (null for a URL token): the pinned subject, the key pins,
 * and in production, while neither pins it, a warning that says what the
 * trust list alone lets in. */
static void render_trust(yajl_gen g, const struct banks_fields *f)
{
	char warning[640];

	if (strcmp(f->auth, "mtls") != 0) {
		json_null(g);
		return;
	}
	json_open(g);
	json_str(g, "subject");
	json_str_or_null(g, f->client_subject[0] ? f->client_subject : NULL);
	json_str(g, "pins");
	json_open_array(g);
	for (const char *p = f->client_pins; *p;) {
		size_t n = strcspn(p, " ");

		if (n)
			json_strn(g, p, n);
		p += n + (p[n] == ' ');
	}
	json_close_array(g);
	json_str(g, "warning");
	if (!f->client_subject[0] && !f->client_pins[0] &&
	    strcmp(f->env, env_name(ENV_PRODUCTION)) == 0) {
		snprintf(warning, sizeof(warning),
			 "not pinned: any certificate for TLS clients that a CA of the trust list "
			 "issued is taken as this connection's bank, so anyone who holds one can "
			 "report Pix for it; pin the bank's own certificate with pixrelay bank "
			 "update %s --client-cert-subject DN or --client-cert-pin "
			 "sha256/..., or PATCH /v1/bank/connections/%s with clientCertSubject or "
			 "clientCertPins",
			 f->id, f->id);
		json_str(g, warning);
	} else {
		json_null(g);
	}
	json_close(g);
}

/* A connection as JSON, never with a secret: `token`, only when the
 * connection is made, goes into its webhookUrl that once. */
void banks_render(yajl_gen g, const struct config *cfg, const struct banks_fields *f,
		  const char *token)
{
	char url[2048], at[32];
	struct certcheck *cc = NULL;
	char err[128];

	banks_webhook_url(url, sizeof(url), cfg, f->id, token);
	json_open(g);
	json_str(g, "id");
	json_str(g, f->id);
	json_str(g, "account");
	json_str(g, f->account);
	json_str(g, "environment");
	json_str(g, f->env);
	json_str(g, "provider");
	json_str(g, f->provider);
	json_str(g, "pixKey");
	json_str_or_null(g, f->pix_key[0] ? f->pix_key : NULL);
	json_str(g, "default");
	json_bool(g, strcmp(f->is_default, "1") == 0);
	json_str(g, "auth");
	json_str(g, f->auth);
	json_str(g, "webhookUrl");
	json_str(g, url);
	json_str(g, "clientCa");
	if (f->client_ca[0] &&
	    (cc = certcheck_new(f->client_ca, strlen(f->client_ca), err, sizeof(err)))) {
		char fp[65];

		certcheck_fingerprint(cc, fp);
		json_open(g);
		json_str(g, "certificates");
		json_int(g, (long long)certcheck_count(cc));
		json_str(g, "sha256");
		json_str(g, fp);
		json_close(g);
		certcheck_free(cc);
	} else {
		json_null(g);
	}
	json_str(g, "trust");
	render_trust(g, f);
	/* a provider's connection: the keys its notifications are checked with */
	json_str(g, "signatureKeys");
	render_keys(g, f->prov_keys, f->prov_own);
	/* the receiving account of its recurring charges (PUT /cobr) */
	json_str(g, "recebedor");
	if (f->rcv_conta && f->rcv_conta[0]) {
		json_open(g);
		json_str(g, "agencia");
		json_str_or_null(g, f->rcv_agencia[0] ? f->rcv_agencia : NULL);
		json_str(g, "conta");
		json_str(g, f->rcv_conta);
		json_str(g, "tipoConta");
		json_str(g, f->rcv_tipo);
		json_close(g);
	} else {
		json_null(g);
	}
	json_str(g, "createdAt");
	timefmt_rfc3339(at, strtoull(f->created_ms, NULL, 10));
	json_str(g, at);
	/* the bank's last webhook call answered 200 (banks_receive.c) */
	json_str(g, "lastCallAt");
	json_time_ms(g, f->last_call_ms);
	/* the bank's API: never the client secret nor the key */
	json_str(g, "api");
	if (f->api_url && f->api_url[0]) {
		json_open(g);
		json_str(g, "apiUrl");
		json_str(g, f->api_url);
		if (strcmp(f->provider, "api-pix") == 0) {
			json_str(g, "tokenUrl");
			json_str(g, f->token_url);
			json_str(g, "clientId");
			json_str(g, f->client_id);
			json_str(g, "certificate");
			render_cert(g, f->cert);
		}
		json_str(g, "bankCa");
		render_cert(g, f->bank_ca);
		if (strcmp(f->provider, "api-pix") == 0) {
			/* what is asked and added, never the extras' values */
			json_str(g, "scope");
			json_str_or_null(g, f->api_scope && f->api_scope[0] ? f->api_scope : NULL);
			json_str(g, "extraHeaders");
			render_names(g, f->api_header_names);
			json_str(g, "extraQuery");
			render_names(g, f->api_query_names);
		}
		json_str(g, "health");
		json_open(g);
		json_str(g, "lastTokenAt");
		json_time_ms(g, f->api_token_ms);
		json_str(g, "lastCallAt");
		json_time_ms(g, f->api_call_ms);
		json_str(g, "lastError");
		json_str_or_null(g, f->api_error[0] ? f->api_error : NULL);
		json_str(g, "lastErrorAt");
		json_time_ms(g, f->api_error[0] ? f->api_error_ms : "");
		json_close(g);
		json_str(g, "reconciliation");
		render_reconciliation(g, cfg, f);
		json_close(g);
	} else {
		json_null(g);
	}
	json_close(g);
	mem_wipe(url, strlen(url));
}
