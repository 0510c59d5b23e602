/* cli_bank: `pixrelay bank connect|update|list|show|disconnect|notifications|
 * credentials|register-webhook`, the operator's view of the bank
 * connections through which banks report Pix (docs/banks.md). It runs the
 * bank store (store/banks.c) on a private loop (cli_call), as the API's
 * handlers (api/api_banks.c) do in the server. The API credentials' files
 * are read by cli_bank_api.c; the webhook at the bank (registering it, and
 * what show says the bank holds) is cli_bank_webhook.c's.
 */
#include "cli_int.h"

#include "pixrelay/core/certcheck.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/seal.h"
#include "pixrelay/pix/bankcreds.h"
#include "pixrelay/store/banks.h"
#include "pixrelay/store/banks_door.h"
#include "pixrelay/store/banks_webhook.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_bank[] =
    "usage: pixrelay bank connect --env ENV [--account ID] --chave KEY\n"
    "                             (--client-ca FILE [PINS] | --url-token) [--default]\n"
    "                             [RECEBEDOR] [--json] [API options of credentials\n"
    "                             [--register-webhook]]\n"
    "       pixrelay bank connect --provider woovi|asaas|mercadopago --env ENV\n"
    "                             [--account ID]\n"
    "                             [--api-token-file FILE] [--api-url URL] [--api-ca FILE]\n"
    "                             [--webhook-public-key FILE | --webhook-secret-file FILE]\n"
    "                             [--chave KEY] [--default] [--no-check] [--json]\n"
    "       pixrelay bank update ID [--client-ca FILE] [PINS] [--default | --no-default]\n"
    "                             [RECEBEDOR] [--scope SCOPES] [EXTRAS] [--no-check]\n"
    "                             [--json]\n"
    "       pixrelay bank list --env ENV [--account ID] [--json]\n"
    "       pixrelay bank show ID [--json]\n"
    "       pixrelay bank disconnect ID [--json]\n"
    "       pixrelay bank notifications ID [--limit N] [--json]\n"
    "       pixrelay bank credentials ID --api-url URL --token-url URL\n"
    "                             --client-id ID --client-secret-file FILE --cert FILE\n"
    "                             --key FILE [--bank-ca FILE] [--scope SCOPES] [EXTRAS]\n"
    "                             [--no-check] [--json]\n"
    "       pixrelay bank reconcile ID [--since DURATION] [--json]\n"
    "       pixrelay bank report ID [--date YYYY-MM-DD] [--json]\n"
    "       pixrelay bank register-webhook ID [--email ADDRESS] [--json]\n"
    "PINS: [--client-cert-subject DN] [--client-cert-pin PIN]...\n"
    "EXTRAS: [--api-header 'NAME: VALUE']... [--api-query KEY=VALUE]...\n"
    "RECEBEDOR: --conta DIGITS --tipo-conta CORRENTE|POUPANCA|PAGAMENTO [--agencia DIGITS]\n"
    "A connection ID names its environment: --env is not needed with one (a\n"
    "contradicting --env is refused).\n\n"
    "connect        connects the bank of Pix key KEY (the chave its payers pay)\n"
    "               to the account (default: the environment's platform account)\n"
    "               and prints the webhookUrl to register at the bank.\n"
    "               --client-ca FILE: the PEM of the CA that\n"
    "               signs the bank's client certificates (mutual TLS through the\n"
    "               proxy and the bank door: needs bank-listen); --url-token: a\n"
    "               random token in the URL instead, for\n"
    "               banks without mTLS, printed this once. With the bank's API\n"
    "               options, --register-webhook registers that URL at the bank.\n"
    "               --client-cert-subject DN (RFC 4514, the most specific first:\n"
    "               CN=webhook.bank.example,O=Bank,C=BR) and --client-cert-pin\n"
    "               sha256/BASE64 (the SHA-256 of the certificate's public key,\n"
    "               repeatable, any one matching) pin the bank's own certificate:\n"
    "               without them, in production, any certificate for TLS clients\n"
    "               that the CA issued is taken as the bank's. --default: the\n"
    "               account's default charging connection. The account's charges go\n"
    "               to its only connection in ENV, or to the one marked default: its\n"
    "               Pix key on their BR Code, or its bank's API when it has\n"
    "               credentials. RECEBEDOR: the receiving account at the bank that\n"
    "               recurring charges of Pix Automatico name (PUT /cobr's recebedor).\n"
    "               --provider woovi|asaas|mercadopago connects a payment provider\n"
    "               instead of a bank (default api-pix; docs/providers.md): its API\n"
    "               token (Woovi's AppID, Asaas's key, Mercado Pago's access token;\n"
    "               required in production, and always for Mercado Pago) read from\n"
    "               --api-token-file, sealed and tried at the provider unless\n"
    "               --no-check; --api-url (default Woovi's for ENV), --api-ca\n"
    "               (the CA of its server), --webhook-public-key (its PEM keys;\n"
    "               default: read from its API). The sandbox gets a key pair of\n"
    "               pixrelay's own too (pixrelay trigger woovi.paid signs with it).\n"
    "               Asaas: --webhook-secret-file, the token its notifications carry\n"
    "               (32 to 255 characters; made and shown once in the sandbox).\n"
    "               Mercado Pago: --webhook-secret-file, the secret key of its\n"
    "               webhooks (none: unsigned, QR-code integrations); every\n"
    "               notification is read back with the token.\n"
    "update         changes a connection without reconnecting: its trust list,\n"
    "               its pins (--client-cert-pin replaces them all; an empty\n"
    "               --client-cert-subject or --client-cert-pin removes them),\n"
    "               --default / --no-default, and of its API credentials the\n"
    "               scopes and extras (--api-header replaces them all, an empty\n"
    "               one removes them; likewise --api-query), tried at the bank\n"
    "               first unless --no-check; the RECEBEDOR (an empty --conta\n"
    "               removes it). The next call is judged by it.\n"
    "list           the connections of the account, or of the environment.\n"
    "show           one connection (never a secret); with API credentials, what\n"
    "               the bank holds as its webhook; its last call from the bank.\n"
    "disconnect     its webhook URL is refused from then on.\n"
    "notifications  what the bank reported, newest first (default 20, at most\n"
    "               1000): each Pix with its outcome, each refused item.\n"
    "credentials    the bank's API (OAuth2 client credentials over mutual TLS with\n"
    "               the merchant's certificate and key) for charges created at the\n"
    "               bank, refunds and the reconciliation; connect takes the same\n"
    "               options. They replace the connection's earlier ones, and are\n"
    "               kept only once the bank gave a token for them (--no-check: kept\n"
    "               untried). --scope: the OAuth2 scopes asked for (default \"cob.write\n"
    "               cobv.write pix.read pix.write webhook.read webhook.write\"; \"\"\n"
    "               asks none);\n"
    "               --api-header, --api-query (each up to 8 times): sent on every\n"
    "               call of the bank's API, not the token's (an application key).\n"
    "               The client secret, the key and the extras are sealed with the\n"
    "               credentials key (credentials-key-file, made when missing).\n"
    "reconcile      asks the bank now for the Pix it received since the last\n"
    "               reconciliation and takes those its webhook missed; --since 30d\n"
    "               reads back a day at a time, as far as the bank answers.\n"
    "report         what the connection heard on a day (Brasilia time): by webhook,\n"
    "               recovered by reconciliation, the spans of the bank's list read,\n"
    "               and whether they cover the day (complete), or why not.\n"
    "register-webhook  registers the connection's webhookUrl at the bank through its\n"
    "               API (PUT /webhook/{chave}, and for Pix Automatico PUT\n"
    "               /webhookrec and /webhookcobr); it must be https (set\n"
    "               bank-webhook-base-url). A URL-token connection's URL gets a new\n"
    "               token, printed this once; the old one is refused once the bank\n"
    "               took the new URL. A provider's connection: through its API\n"
    "               (Woovi: a webhook per event; Asaas: one webhook with the\n"
    "               token, and --email, who Asaas warns when it pauses the queue).\n";

/* The file at `path`, a trust list in PEM (at most CERTCHECK_PEM_MAX bytes,
 * 1 to CERTCHECK_CERTS_MAX certificates): NULL with the problem printed. */
static char *read_trust_list(const char *verb, const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf, err[256];
	size_t n;
	struct certcheck *cc;

	if (!f) {
		fprintf(stderr, "pixrelay bank %s: --client-ca %s: %s\n", verb, path,
			strerror(errno));
		return NULL;
	}
	buf = mem_alloc(CERTCHECK_PEM_MAX + 2);
	n = fread(buf, 1, CERTCHECK_PEM_MAX + 1, f);
	fclose(f);
	buf[n > CERTCHECK_PEM_MAX ? 0 : n] = '\0';
	if (n > CERTCHECK_PEM_MAX) {
		fprintf(stderr, "pixrelay bank %s: --client-ca %s: larger than %d bytes\n", verb,
			path, CERTCHECK_PEM_MAX);
	} else if (!(cc = certcheck_new(buf, n, err, sizeof(err)))) {
		fprintf(stderr, "pixrelay bank %s: --client-ca %s: %s\n", verb, path, err);
	} else {
		certcheck_free(cc);
		return buf;
	}
	free(buf);
	return NULL;
}

static const char *str(yajl_val v, const char *key)
{
	const char *s = YAJL_GET_STRING(json_get(v, key));

	return s ? s : "-";
}

/* A line of `label` and the names of `list`, when it has any (their
 * values are secrets: never shown). */
static void print_names(const char *label, yajl_val list)
{
	if (!YAJL_IS_ARRAY(list) || list->u.array.len == 0)
		return;
	printf("%s", label);
	for (size_t i = 0; i < list->u.array.len; i++) {
		const char *n = YAJL_GET_STRING(list->u.array.values[i]);
		printf("%s%s", i ? ", " : "", n ? n : "-");
	}
	printf(" (values sealed)\n");
}

/* What an mTLS connection takes of its bank's certificate beyond its CA
 * ("trust"), and the warning when nothing pins it. */
static void print_trust(yajl_val c)
{
	yajl_val trust = json_get(c, "trust"), pins = json_get(trust, "pins");
	const char *subject = YAJL_GET_STRING(json_get(trust, "subject"));
	const char *warning = YAJL_GET_STRING(json_get(trust, "warning"));

	if (!YAJL_IS_OBJECT(trust))
		return;
	if (subject)
		printf("  pinned       subject %s\n", subject);
	for (size_t i = 0; YAJL_IS_ARRAY(pins) && i < pins->u.array.len; i++)
		if (YAJL_GET_STRING(pins->u.array.values[i]))
			printf("  pinned       key %s\n", YAJL_GET_STRING(pins->u.array.values[i]));
	if (!subject && !(YAJL_IS_ARRAY(pins) && pins->u.array.len))
		printf("  pinned       nothing: the client CA alone decides\n");
	if (warning)
		printf("  WARNING      %s\n", warning);
}

/* How a connection's caller is authenticated, in words. */
static const char *auth_text(const char *auth)
{
	if (strcmp(auth, "mtls") == 0)
		return "mutual TLS";
	if (strcmp(auth, "url-token") == 0)
		return "URL token";
	if (strcmp(auth, "asaas-token") == 0)
		return "Asaas (webhook token)";
	if (strcmp(auth, "mp-signature") == 0)
		return "Mercado Pago (x-signature, read back)";
	if (strcmp(auth, "mp-fetch") == 0)
		return "Mercado Pago (unsigned, read back)";
	return "Woovi (RSA signature)";
}

static void print_connection(yajl_val c)
{
	yajl_val ca = json_get(c, "clientCa"), keys = json_get(c, "signatureKeys");
	const char *auth = str(c, "auth"), *provider = str(c, "provider");
	int bank = strcmp(provider, "api-pix") == 0 || strcmp(provider, "-") == 0;

	printf("%s  %s  %s  account %s  %s\n", str(c, "id"), str(c, "pixKey"), auth_text(auth),
	       str(c, "account"), str(c, "createdAt"));
	printf("  webhook URL  %s\n", str(c, "webhookUrl"));
	if (YAJL_IS_TRUE(json_get(c, "default")))
		printf("  default      the account's default charging connection\n");
	if (YAJL_IS_OBJECT(json_get(c, "recebedor"))) {
		yajl_val r = json_get(c, "recebedor");
		printf("  recebedor    conta %s (%s)", str(r, "conta"), str(r, "tipoConta"));
		if (YAJL_GET_STRING(json_get(r, "agencia")))
			printf(", agencia %s", str(r, "agencia"));
		putchar('\n');
	}
	for (size_t i = 0; YAJL_IS_ARRAY(keys) && i < keys->u.array.len; i++)
		printf("  signed by    key SHA-256 %s%s\n", str(keys->u.array.values[i], "sha256"),
		       YAJL_IS_TRUE(json_get(keys->u.array.values[i], "own"))
			   ? " (pixrelay's own, sandbox: trigger)"
			   : "");
	if (YAJL_IS_OBJECT(json_get(c, "api"))) {
		yajl_val api = json_get(c, "api"), cert = json_get(api, "certificate");
		if (bank)
			printf("  bank API     %s (client %s, token %s)\n", str(api, "apiUrl"),
			       str(api, "clientId"), str(api, "tokenUrl"));
		else
			printf("  %-12s %s (API token sealed)\n",
			       strcmp(provider, "asaas") == 0	      ? "Asaas API"
			       : strcmp(provider, "mercadopago") == 0 ? "MP API"
								      : "Woovi API",
			       str(api, "apiUrl"));
		yajl_val health = json_get(api, "health"), rec = json_get(api, "reconciliation");
		if (YAJL_IS_OBJECT(cert))
			printf("  certificate  %s, until %s\n", str(cert, "subject"),
			       str(cert, "notAfter"));
		if (YAJL_GET_STRING(json_get(api, "scope")))
			printf("  scope        %s\n", str(api, "scope"));
		print_names("  API headers  ", json_get(api, "extraHeaders"));
		print_names("  API query    ", json_get(api, "extraQuery"));
		if (YAJL_IS_OBJECT(health)) {
			if (bank)
				printf("  API health   last token %s, last call %s\n",
				       str(health, "lastTokenAt"), str(health, "lastCallAt"));
			else
				printf("  API health   last call %s\n", str(health, "lastCallAt"));
			if (YAJL_GET_STRING(json_get(health, "lastError")))
				printf("  API error    %s: %s\n", str(health, "lastErrorAt"),
				       str(health, "lastError"));
		}
		if (YAJL_IS_OBJECT(rec)) {
			int64_t fails = 0, total = 0;

			json_is_int64(json_get(rec, "failures"), &fails);
			json_is_int64(json_get(rec, "newTotal"), &total);
			printf("  reconciled   until %s (last success %s), %lld Pix recovered in "
			       "all\n",
			       str(rec, "reconciledUntil"), str(rec, "lastSuccessAt"),
			       (long long)total);
			if (fails)
				printf("  reconcile    %lld failure(s), the last at %s: %s\n",
				       (long long)fails, str(rec, "lastErrorAt"),
				       str(rec, "lastError"));
		}
	}
	if (YAJL_IS_OBJECT(ca))
		printf("  client CA    %lld certificate(s), SHA-256 %s\n",
		       YAJL_IS_INTEGER(json_get(ca, "certificates"))
			   ? (long long)YAJL_GET_INTEGER(json_get(ca, "certificates"))
			   : 0LL,
		       str(ca, "sha256"));
	print_trust(c);
}

void cli_bank_print(const char *verb, const char *json)
{
	yajl_val v = NULL, list;
	char err[128];

	if (json_parse_object(json, strlen(json), &v, err, sizeof(err)) < 0) {
		printf("%s\n", json);
		return;
	}
	if (strcmp(verb, "list") == 0) {
		list = json_get(v, "connections");
		if (!YAJL_IS_ARRAY(list) || list->u.array.len == 0)
			printf("no bank connections\n");
		for (size_t i = 0; YAJL_IS_ARRAY(list) && i < list->u.array.len; i++)
			print_connection(list->u.array.values[i]);
	} else if (strcmp(verb, "notifications") == 0) {
		list = json_get(v, "notifications");
		if (!YAJL_IS_ARRAY(list) || list->u.array.len == 0)
			printf("nothing reported yet\n");
		for (size_t i = 0; YAJL_IS_ARRAY(list) && i < list->u.array.len; i++) {
			yajl_val n = list->u.array.values[i];
			const char *why = YAJL_GET_STRING(json_get(n, "error"));
			if (!why)
				why = YAJL_GET_STRING(json_get(n, "reason"));
			const char *refund = YAJL_GET_STRING(json_get(n, "refund"));
			printf("%-10s %-9s %s", str(n, "source"), str(n, "outcome"),
			       str(n, "endToEndId"));
			if (refund)
				printf(" refund %s", refund);
			if (why && *why)
				printf(" (%s)", why);
			putchar('\n');
		}
	} else if (strcmp(verb, "disconnect") == 0) {
		printf("%s disconnected: its webhook URL is refused from now on\n", str(v, "id"));
	} else {
		print_connection(v);
	}
	yajl_tree_free(v);
}

/* `made` (a connection's JSON, freed and wiped) with the "api" of `kept`
 * (the same connection after its credentials were set): malloc'd. */
static char *with_api(char *made, const char *kept)
{
	yajl_val m = NULL, c = NULL;
	yajl_gen g;
	char err[64], *out = made;

	if (json_parse_object(made, strlen(made), &m, err, sizeof(err)) < 0 ||
	    json_parse_object(kept, strlen(kept), &c, err, sizeof(err)) < 0)
		goto done;
	g = json_gen_new();
	json_open(g);
	for (size_t i = 0; i < m->u.object.len; i++) {
		const char *name = m->u.object.keys[i];
		yajl_val v = m->u.object.values[i];

		json_str(g, name);
		json_write_value(
		    g, strcmp(name, "api") == 0 && json_get(c, "api") ? json_get(c, "api") : v);
	}
	json_close(g);
	out = json_take(g);
	mem_wipe(made, strlen(made));
	free(made);
done:
	yajl_tree_free(m);
	yajl_tree_free(c);
	return out;
}

/* After `bank connect` with the bank's API options: give the connection
 * just made (its JSON in k->json, kept) the credentials. 0, or -1 with the
 * problem printed. */
static int keep_credentials(struct cli_call *k, const struct config *cfg,
			    const struct seal_key *skey, enum env env, struct bank_creds *creds)
{
	yajl_val v = NULL;
	char err[128], id[BANKS_ID_MAX] = "", *made = k->json;
	int rc = -1;

	if (json_parse_object(made, strlen(made), &v, err, sizeof(err)) == 0 &&
	    YAJL_GET_STRING(json_get(v, "id")))
		snprintf(id, sizeof(id), "%s", YAJL_GET_STRING(json_get(v, "id")));
	yajl_tree_free(v);
	k->json = NULL;
	k->done = 0;
	banks_set_credentials(k->r, cfg, skey, env, id, creds, cli_call_done, k);
	cli_call_wait(k);
	if (k->result != 0)
		fprintf(stderr,
			"pixrelay bank connect: connected as %s, but its API credentials were not "
			"kept: %s (pixrelay bank credentials %s ... to try again)\n",
			id, k->result < 0 ? k->err : "no such connection", id);
	else
		rc = 0;
	/* what connect made is what it prints (its webhookUrl may hold the
	 * token), with the API credentials as now kept */
	if (rc == 0 && k->json)
		made = with_api(made, k->json);
	if (k->json) {
		mem_wipe(k->json, strlen(k->json));
		free(k->json);
	}
	k->json = made;
	return rc;
}

/* After `bank connect` or `update`: when the connection's account (k->json
 * is the connection, kept) now has several connections in env and none is
 * its default, say that its charges are refused until one is (docs/
 * banks.md, "The key on the QR"). */
static void say_charging(struct cli_call *k, const struct config *cfg, enum env env)
{
	struct cli_call l = *k;
	yajl_val v = NULL, list;
	char err[128], account[32] = "";
	size_t n = 0, marked = 0;

	if (json_parse_object(k->json, strlen(k->json), &v, err, sizeof(err)) == 0 &&
	    YAJL_GET_STRING(json_get(v, "account")))
		snprintf(account, sizeof(account), "%s", YAJL_GET_STRING(json_get(v, "account")));
	yajl_tree_free(v);
	v = NULL;
	if (!account[0])
		return;
	l.json = NULL;
	l.done = 0;
	banks_list(l.r, cfg, env, account, cli_call_done, &l);
	cli_call_wait(&l);
	if (l.result == 0 && l.json &&
	    json_parse_object(l.json, strlen(l.json), &v, err, sizeof(err)) == 0) {
		list = json_get(v, "connections");
		for (size_t i = 0; YAJL_IS_ARRAY(list) && i < list->u.array.len; i++) {
			n++;
			marked += YAJL_IS_TRUE(json_get(list->u.array.values[i], "default"));
		}
	}
	if (n > 1 && marked == 0)
		fprintf(stderr,
			"pixrelay bank: the account has %zu bank connections in %s and none is its "
			"default: its charges are refused (409) until one is (pixrelay bank update "
			"ID --default)\n",
			n, env_name(env));
	yajl_tree_free(v);
	free(l.json);
}

/* After `bank connect --register-webhook`: register the webhookUrl of the
 * connection just made (its JSON in k->json, kept) at the bank. 1 when the
 * bank took it; 0 with the problem printed. */
static int register_made(struct cli_call *k, const struct config *cfg, enum env env)
{
	yajl_val v = NULL;
	char err[128];
	const char *id, *url;
	int ok = 0;

	if (json_parse_object(k->json, strlen(k->json), &v, err, sizeof(err)) < 0 ||
	    !(id = YAJL_GET_STRING(json_get(v, "id"))) ||
	    !(url = YAJL_GET_STRING(json_get(v, "webhookUrl")))) {
		fprintf(stderr, "pixrelay bank connect: unexpected connection JSON\n");
		goto done;
	}
	ok = cli_bank_register_url(k, cfg, env, id, url) == 0;
	if (!ok)
		fprintf(stderr,
			"pixrelay bank connect: connected as %s, but its webhook is not registered "
			"at the bank: pixrelay bank register-webhook %s to try again\n",
			id, id);
done:
	yajl_tree_free(v);
	return ok;
}

/* Replace the extras of one kind (`add` of them, from the options `given`)
 * in *slot: an empty one alone removes them all. 0, or -1 with why. */
static int replace_extras(struct bank_creds *c, char **slot, const char *const *given, size_t n,
			  int (*add)(struct bank_creds *, const char *, char *, size_t),
			  const char *opt, char *err, size_t errlen)
{
	if (!n)
		return 0;
	if (*slot) {
		mem_wipe(*slot, strlen(*slot));
		free(*slot);
		*slot = NULL;
	}
	for (size_t i = 0; i < n; i++) {
		if (!*given[i]) {
			if (n == 1)
				return 0;
			snprintf(err, errlen, "an empty --%s removes them: give it alone", opt);
			return -1;
		}
		if (add(c, given[i], err, errlen) < 0)
			return -1;
	}
	return 0;
}

/* `bank update ID` with --scope, --api-header or --api-query: the
 * connection's API credentials, opened with this host's credentials key,
 * get those parts anew (an --api-header '' or --api-query '' alone removes
 * them all), are tried at the bank (unless --no-check) and kept sealed
 * again. 0, or the exit status with the problem printed. */
static int update_api(struct cli_call *k, const struct config *cfg, enum env env, const char *id,
		      const struct cli_bank_api *o)
{
	static const char cmd[] = "bank update";
	struct seal_key key;
	struct cli_bank_conn c;
	char err[256];
	int rc = 1;

	if (cli_credentials_key(cmd, cfg, 0, &key) < 0)
		return 1;
	cli_bank_read(k, cfg, id, &key, &c);
	if (c.result != 0 || !c.has_api || !c.opened) {
		fprintf(stderr, "pixrelay %s: %s\n", cmd,
			c.result > 0 ? "no such connection"
			: !c.has_api ? "the connection has no API credentials (pixrelay bank "
				       "credentials gives them)"
				     : c.why);
		goto done;
	}
	if (o->scope) {
		free(c.creds.scope);
		c.creds.scope = mem_strdup(o->scope);
	}
	if (replace_extras(&c.creds, &c.creds.headers, o->headers, o->nheaders,
			   bank_creds_add_header, "api-header", err, sizeof(err)) < 0 ||
	    replace_extras(&c.creds, &c.creds.query, o->query, o->nquery, bank_creds_add_query,
			   "api-query", err, sizeof(err)) < 0 ||
	    bank_creds_check(&c.creds, err, sizeof(err)) < 0) {
		fprintf(stderr, "pixrelay %s: %s\n", cmd, err);
		rc = 2;
		goto done;
	}
	if (cli_bank_api_try(cmd, cfg, o, &c.creds, "nothing was changed") < 0)
		goto done;
	k->done = 0;
	banks_set_credentials(k->r, cfg, &key, env, id, &c.creds, cli_call_done, k);
	cli_call_wait(k);
	if (k->result != 0) {
		fprintf(stderr, "pixrelay %s: %s\n", cmd,
			k->result < 0 ? k->err : "no such connection");
		goto done;
	}
	rc = 0;
done:
	if (k->json) {
		mem_wipe(k->json, strlen(k->json));
		free(k->json);
		k->json = NULL;
	}
	k->done = 0; /* k makes the command's own call next */
	bank_creds_wipe(&c.creds);
	seal_key_wipe(&key);
	return rc;
}

/* True when argv names a provider other than api-pix (--provider NAME or
 * --provider=NAME): its connect is cli_bank_provider.c's. */
static bool provider_given(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *v = NULL;

		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--provider") == 0 && i + 1 < argc)
			v = argv[i + 1];
		else if (strncmp(argv[i], "--provider=", 11) == 0)
			v = argv[i] + 11;
		if (v && strcmp(v, "api-pix") != 0)
			return true;
	}
	return false;
}

int cli_cmd_bank(const struct config *cfg, int argc, char **argv)
{
	static const struct option lo[] = {CLI_OPT_ENV,
					   CLI_OPT_ACCOUNT,
					   {"chave", required_argument, NULL, 'p'},
					   {"client-ca", required_argument, NULL, 'c'},
					   {"url-token", no_argument, NULL, 't'},
					   {"limit", required_argument, NULL, 'l'},
					   {"api-url", required_argument, NULL, 'A'},
					   {"token-url", required_argument, NULL, 'T'},
					   {"client-id", required_argument, NULL, 'I'},
					   {"client-secret-file", required_argument, NULL, 'S'},
					   {"cert", required_argument, NULL, 'C'},
					   {"key", required_argument, NULL, 'K'},
					   {"bank-ca", required_argument, NULL, 'B'},
					   {"scope", required_argument, NULL, 'O'},
					   {"api-header", required_argument, NULL, 'H'},
					   {"api-query", required_argument, NULL, 'Q'},
					   {"no-check", no_argument, NULL, 'n'},
					   {"register-webhook", no_argument, NULL, 'R'},
					   {"client-cert-subject", required_argument, NULL, 's'},
					   {"client-cert-pin", required_argument, NULL, 'P'},
					   {"default", no_argument, NULL, 'D'},
					   {"no-default", no_argument, NULL, 'N'},
					   {"agencia", required_argument, NULL, 'g'},
					   {"conta", required_argument, NULL, 'o'},
					   {"tipo-conta", required_argument, NULL, 'y'},
					   {"provider", required_argument, NULL, 'v'},
					   {"email", required_argument, NULL, 'M'},
					   CLI_OPT_JSON,
					   CLI_OPT_END};
	struct cli_args a;
	const char *verb, *pix_key = NULL, *ca_path = NULL, *id, *subject_arg = NULL;
	const char *email = NULL;
	int opt, rc, url_token = 0, register_hook = 0, registered = 0, is_default = -1;
	int api_update = 0; /* update's --scope, --api-header, --api-query */
	int pins_given = 0, pins_none = 0;
	struct banks_recebedor rcv = {NULL, NULL, NULL};
	char pins[CERTCHECK_PINS_TEXT] = "", subject[CERTCHECK_DN_MAX + 1] = "";
	long limit = 20;
	char *end = NULL, *pem = NULL, acct[32] = "", err[256];
	enum env env;
	struct cli_redis cr;
	struct cli_call call;
	struct cli_bank_api api = {0};
	struct bank_creds creds = {0};
	struct seal_key skey;
	struct config here;
	char base[512];
	int with_api;

	if ((rc = cli_action(argc, argv, usage_bank, &verb)) >= 0)
		return rc;
	if (strcmp(verb, "reconcile") == 0 || strcmp(verb, "report") == 0)
		return cli_bank_recon(cfg, argc - 1, argv + 1);
	if (strcmp(verb, "connect") == 0 && provider_given(argc, argv))
		return cli_bank_provider_connect(cfg, argc - 1, argv + 1);
	cli_args_init(&a, argc - 1, argv + 1, lo, NULL, usage_bank);
	while ((opt = cli_args_next(&a)) >= 0) {
		switch (opt) {
		case 'p':
			pix_key = optarg;
			break;
		case 'c':
			ca_path = optarg;
			break;
		case 't':
			url_token = 1;
			break;
		case 'A':
		case 'T':
		case 'I':
		case 'S':
		case 'C':
		case 'K':
		case 'B':
		case 'O':
		case 'H':
		case 'Q':
		case 'n':
			/* the bank's API options, by their long name */
			for (const struct option *o = lo; o->name; o++)
				if (o->val == opt)
					cli_bank_api_option(&api, o->name, optarg);
			break;
		case 'R':
			register_hook = 1;
			break;
		case 's':
			subject_arg = optarg;
			break;
		case 'P':
			/* an empty one removes them all (update), so it comes alone */
			pins_given++;
			pins_none |= !*optarg;
			if (*optarg && certcheck_pins_add(pins, optarg, err, sizeof(err)) < 0) {
				fprintf(stderr, "pixrelay bank %s: --client-cert-pin %s: %s\n",
					verb, optarg, err);
				return 2;
			}
			break;
		case 'D':
		case 'N':
			if (is_default >= 0 && is_default != (opt == 'D')) {
				fprintf(
				    stderr,
				    "pixrelay bank %s: --default or --no-default, one of them\n",
				    verb);
				return 2;
			}
			is_default = opt == 'D';
			break;
		case 'g':
			rcv.agencia = optarg;
			break;
		case 'o':
			rcv.conta = optarg;
			break;
		case 'y':
			rcv.tipo_conta = optarg;
			break;
		case 'M':
			/* register-webhook of an Asaas connection: who Asaas warns */
			email = optarg;
			break;
		case 'v':
			/* another provider went to cli_bank_provider.c */
			if (strcmp(verb, "connect") != 0) {
				fprintf(stderr, "pixrelay bank %s: --provider is for connect\n",
					verb);
				return 2;
			}
			break;
		case 'l':
			limit = strtol(optarg, &end, 10);
			if (!*optarg || *end || limit < 1 || limit > BANKS_LOG_MAX) {
				fprintf(stderr, "pixrelay bank: --limit must be from 1 to %d\n",
					BANKS_LOG_MAX);
				return 2;
			}
			break;
		}
	}
	if (opt == CLI_ARGS_EXIT)
		return a.exit_code;
	if (!cli_verb_known("bank", usage_bank, verb,
			    (const char *const[]){"connect", "update", "list", "show", "disconnect",
						  "notifications", "credentials",
						  "register-webhook", NULL}))
		return 2;
	id = optind + 1 < argc ? argv[optind + 1] : NULL;
	if (strcmp(verb, "connect") == 0 || strcmp(verb, "list") == 0) {
		if (cli_env_required("bank", a.env, &env) < 0)
			return 2;
		if (id)
			return cli_unexpected("bank", verb, id);
	} else {
		/* the connection names its environment: --env may only agree */
		if (a.env && env_parse(a.env, &env) < 0) {
			fprintf(stderr, "pixrelay bank: --env must be sandbox or production\n");
			return 2;
		}
		if (!id) {
			fprintf(stderr, "pixrelay bank %s: the connection ID is required\n", verb);
			return 2;
		}
		if (optind + 2 < argc)
			return cli_unexpected("bank", verb, argv[optind + 2]);
	}
	if (pins_none && pins_given > 1) {
		fprintf(stderr,
			"pixrelay bank %s: an empty --client-cert-pin removes the pins: "
			"give it alone\n",
			verb);
		return 2;
	}
	if (strcmp(verb, "connect") != 0 && strcmp(verb, "update") != 0 &&
	    (ca_path || subject_arg || pins_given || is_default >= 0 || rcv.agencia || rcv.conta ||
	     rcv.tipo_conta)) {
		fprintf(stderr,
			"pixrelay bank %s: --client-ca, --client-cert-subject, --client-cert-pin, "
			"--default, --agencia, --conta and --tipo-conta are for connect and "
			"update\n",
			verb);
		return 2;
	}
	if ((rcv.agencia || rcv.tipo_conta) && !rcv.conta) {
		fprintf(stderr,
			"pixrelay bank %s: --agencia and --tipo-conta go with --conta "
			"(the receiving account of recurring charges)\n",
			verb);
		return 2;
	}
	if (rcv.conta && banks_check_recebedor(&rcv, err, sizeof(err)) < 0) {
		/* the standard's names, as the options write them */
		if (strncmp(err, "tipoConta", 9) == 0)
			fprintf(stderr, "pixrelay bank %s: --tipo-conta%s\n", verb, err + 9);
		else
			fprintf(stderr, "pixrelay bank %s: --%s\n", verb, err);
		return 2;
	}
	if (subject_arg && (*subject_arg || strcmp(verb, "connect") == 0) &&
	    certcheck_subject_normal(subject_arg, subject, sizeof(subject), err, sizeof(err)) < 0) {
		fprintf(stderr, "pixrelay bank %s: --client-cert-subject %s: %s\n", verb,
			subject_arg, err);
		return 2;
	}
	if (strcmp(verb, "update") == 0) {
		if (pix_key || url_token) {
			fprintf(stderr, "pixrelay bank update: --chave and --url-token are for "
					"connect (a connection's Pix key and way of authenticating "
					"stay)\n");
			return 2;
		}
		api_update = api.scope || api.nheaders || api.nquery;
		if (api.api_url || api.token_url || api.client_id || api.secret_file ||
		    api.cert_file || api.key_file || api.bank_ca_file) {
			fprintf(stderr,
				"pixrelay bank update: new credentials are given whole: pixrelay "
				"bank credentials ID ...; update changes --scope, --api-header and "
				"--api-query of those kept\n");
			return 2;
		}
		if (api.no_check && !api_update) {
			fprintf(stderr, "pixrelay bank update: --no-check goes with --scope, "
					"--api-header or --api-query\n");
			return 2;
		}
		if (!ca_path && !subject_arg && !pins_given && is_default < 0 && !api_update &&
		    !rcv.conta) {
			fprintf(stderr,
				"pixrelay bank update: nothing to change: give --client-ca FILE, "
				"--client-cert-subject DN, --client-cert-pin PIN, --default, "
				"--conta, --scope, --api-header or --api-query\n");
			return 2;
		}
		if (ca_path && !(pem = read_trust_list(verb, ca_path)))
			return 1;
	} else if (strcmp(verb, "connect") == 0) {
		if (!pix_key) {
			/* (--pix-key is the setting of that name, which settings may
			 * follow the command: the platform account's BR Codes' key) */
			fprintf(stderr,
				"pixrelay bank connect: the connection's Pix key is required: "
				"--chave KEY%s\n",
				cfg->pix_key[0]
				    ? " (the pix-key setting is the key of the platform "
				      "account's BR Codes, not a connection's)"
				    : "");
			return 2;
		}
		if (banks_check_pix_key(pix_key, err, sizeof(err)) < 0) {
			fprintf(stderr, "pixrelay bank connect: the Pix key %s\n", err);
			return 2;
		}
		if (!!ca_path == url_token) {
			fprintf(stderr, "pixrelay bank connect: give --client-ca FILE (mutual TLS) "
					"or --url-token, one of them\n");
			return 2;
		}
		if (ca_path && !cfg->bank_listen[0]) {
			fprintf(stderr,
				"pixrelay bank connect: --client-ca (mutual TLS) needs the "
				"bank door, and bank-listen is not set: " BANKS_DOOR_HINT "\n");
			return 2;
		}
		if (url_token && (subject_arg || pins_given)) {
			fprintf(stderr, "pixrelay bank connect: --client-cert-subject and "
					"--client-cert-pin pin a certificate: they go with "
					"--client-ca\n");
			return 2;
		}
		if (is_default == 0) {
			fprintf(stderr, "pixrelay bank connect: --no-default is for update\n");
			return 2;
		}
		if (ca_path && !(pem = read_trust_list(verb, ca_path)))
			return 1;
	} else if (pix_key || url_token) {
		fprintf(stderr, "pixrelay bank %s: --chave and --url-token are for connect\n",
			verb);
		return 2;
	}
	with_api = !api_update && (cli_bank_api_given(&api) || strcmp(verb, "credentials") == 0);
	if (register_hook && (strcmp(verb, "connect") != 0 || !with_api)) {
		fprintf(stderr,
			"pixrelay bank %s: --register-webhook is for connect with the bank's API "
			"options (--api-url ...); else pixrelay bank register-webhook ID\n",
			verb);
		free(pem);
		return 2;
	}
	/* the URLs it prints name the running serve when base-url is not set
	 * (cli_base_url), as the server itself would */
	cli_base_url(cfg, base, sizeof(base));
	here = *cfg;
	here.base_url = base;
	cfg = &here;
	/* the standard takes no other webhook: refused before anything is made */
	if (register_hook && banks_webhook_https(cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "pixrelay bank connect: %s\n", err);
		free(pem);
		return 1;
	}
	if (with_api) {
		char cmd[64];
		if (strcmp(verb, "connect") != 0 && strcmp(verb, "credentials") != 0) {
			fprintf(stderr,
				"pixrelay bank %s: the bank's API options are for connect "
				"and credentials\n",
				verb);
			free(pem);
			return 2;
		}
		snprintf(cmd, sizeof(cmd), "bank %s", verb);
		if (cli_bank_api_read(cmd, &api, &creds) < 0) {
			free(pem);
			return 2;
		}
		/* credentials the bank refuses are not kept (nor connected) */
		snprintf(creds.conn, sizeof(creds.conn), "%s", id ? id : "new");
		if (cli_bank_api_try(cmd, cfg, &api, &creds,
				     id ? "nothing was kept" : "nothing was connected") < 0) {
			bank_creds_wipe(&creds);
			free(pem);
			return 1;
		}
		if (cli_credentials_key(cmd, cfg, 1, &skey) < 0) {
			bank_creds_wipe(&creds);
			free(pem);
			return 1;
		}
	}
	rc = 1;
	if (strcmp(verb, "connect") == 0 || (strcmp(verb, "list") == 0 && a.account)) {
		if (cli_open_account(cfg, env, a.account, &cr, acct) < 0)
			goto done;
	} else if (cli_redis_open(cfg, &cr) < 0) {
		goto done;
	}
	if (cli_call_open(&call, cfg, &cr) == 0) {
		char cmd[32];

		snprintf(cmd, sizeof(cmd), "bank %s", verb);
		if (id && (rc = cli_bank_env(&call, cfg, cmd, id, a.env, &env)) != 0)
			goto closed;
		rc = 1;
		if (id && (api_update || strcmp(verb, "credentials") == 0)) {
			/* a bank's OAuth2 credentials: a provider's token is given
			 * at connect */
			struct cli_bank_conn c;

			cli_bank_read(&call, cfg, id, NULL, &c);
			if (c.result == 0 && c.provider != PROVIDER_API_PIX) {
				fprintf(
				    stderr,
				    "pixrelay bank %s: %s is a %s connection: its API token is "
				    "given at connect (disconnect it and connect again with the "
				    "new one; docs/providers.md)\n",
				    verb, id, provider_name(c.provider));
				rc = 2;
				goto closed;
			}
		}
		if (api_update && (rc = update_api(&call, cfg, env, id, &api)) != 0)
			goto closed;
		rc = 1;
		if (strcmp(verb, "register-webhook") == 0) {
			rc = cli_bank_register_webhook(&call, cfg, env, id, email, a.json);
			goto closed;
		}
		if (strcmp(verb, "connect") == 0) {
			struct banks_trust trust = {pem, subject, pins};

			banks_connect(call.r, cfg, env, acct, pix_key,
				      ca_path ? BANKS_MTLS : BANKS_URL_TOKEN, &trust,
				      rcv.conta ? &rcv : NULL, is_default == 1, NULL, cli_call_done,
				      &call);
		} else if (strcmp(verb, "update") == 0 &&
			   (pem || subject_arg || pins_given || is_default >= 0 || rcv.conta)) {
			struct banks_change change = {pem, subject_arg ? subject : NULL,
						      pins_given ? pins : NULL, is_default,
						      rcv.conta ? &rcv : NULL};

			banks_update(call.r, cfg, env, "", id, &change, cli_call_done, &call);
		} else if (strcmp(verb, "update") == 0) {
			/* its credentials changed: the connection as it stands */
			banks_show(call.r, cfg, env, "", id, cli_call_done, &call);
		} else if (strcmp(verb, "list") == 0)
			banks_list(call.r, cfg, env, acct, cli_call_done, &call);
		else if (strcmp(verb, "show") == 0)
			banks_show(call.r, cfg, env, "", id, cli_call_done, &call);
		else if (strcmp(verb, "disconnect") == 0)
			banks_disconnect(call.r, cfg, env, "", id, cli_call_done, &call);
		else if (strcmp(verb, "credentials") == 0)
			banks_set_credentials(call.r, cfg, &skey, env, id, &creds, cli_call_done,
					      &call);
		else
			banks_log(call.r, cfg, env, "", id, (int)limit, cli_call_done, &call);
		cli_call_wait(&call);
		if (call.result == 0 && strcmp(verb, "connect") == 0 && with_api &&
		    keep_credentials(&call, cfg, &skey, env, &creds) < 0) {
			rc = 1;
			goto closed;
		}
		if (call.result == 0 && strcmp(verb, "show") == 0) {
			rc = cli_bank_show(&call, cfg, env, id, a.json);
			goto closed;
		}
		if (call.result == 0 && register_hook)
			registered = register_made(&call, cfg, env);
		switch (call.result) {
		case 0:
			if (a.json && register_hook) {
				char *out = cli_json_with(call.json, "webhookRegistered",
							  registered ? "true" : "false");
				printf("%s\n", out);
				mem_wipe(out, strlen(out));
				free(out);
			} else if (a.json) {
				printf("%s\n", call.json);
			} else {
				cli_bank_print(verb, call.json);
			}
			if (strcmp(verb, "connect") == 0 && !a.json)
				printf("\n%s the webhook URL above at the bank for the Pix key "
				       "%s%s.\n",
				       registered ? "Registered" : "Register", pix_key,
				       url_token ? "; it carries the token, shown only this once"
						 : "");
			if (strcmp(verb, "connect") == 0 || strcmp(verb, "update") == 0)
				say_charging(&call, cfg, env);
			rc = register_hook && !registered ? 1 : 0;
			break;
		case BANKS_NOT_FOUND:
			fprintf(stderr, "pixrelay bank %s: no connection %s in %s\n", verb,
				id ? id : "", env_name(env));
			break;
		case BANKS_NO_ACCOUNT:
			fprintf(stderr, "pixrelay bank connect: no account %s in %s\n", acct,
				env_name(env));
			break;
		case BANKS_LIMIT:
			fprintf(stderr,
				"pixrelay bank connect: the account has %d connections "
				"already\n",
				BANKS_PER_ACCOUNT);
			break;
		case BANKS_KEY_TAKEN:
			fprintf(stderr,
				"pixrelay bank connect: the Pix key %s is connected already "
				"(%s)\n",
				pix_key, call.json ? call.json : "");
			break;
		case BANKS_NOT_MTLS:
			fprintf(stderr,
				"pixrelay bank update: connection %s authenticates its bank with a "
				"URL token: --client-ca, --client-cert-subject and "
				"--client-cert-pin are for mutual TLS\n",
				id);
			break;
		default:
			fprintf(stderr, "pixrelay bank %s: %s\n", verb, call.err);
		}
	closed:
		if (call.json)
			mem_wipe(call.json, strlen(call.json));
	}
	cli_call_close(&call);
	cli_redis_close(&cr);
done:
	if (with_api) {
		bank_creds_wipe(&creds);
		seal_key_wipe(&skey);
	}
	free(pem);
	return rc;
}
