/* Unit tests of a connection's webhook as its bank holds it
 * (store/banks_webhook.c): the https rule naming its setting, the bank's
 * answer to GET /webhook/{chave} judged for an mTLS and a URL-token
 * connection, hostile answers included; and the bank's error answers as a
 * person reads them (bankapi_problem). */
#include "check.h"

#include "pixrelay/core/config.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/relay/bankapi.h"
#include "pixrelay/store/banks_webhook.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ID "bnk_01M8C0C563ET99G3XMMMT3BH0C"
#define OTHER "bnk_01M8C0C563ET99G3XMMMT3BH0D"
#define BASE "https://pix-webhook.loja.example/v1"
#define TOKEN "T0k3nT0k3nT0k3nT0k3nT0k3nT0k3nT0k3nT0k3nabc"

static struct config cfg;

static void judge(const struct banks_conn *c, const char *body, struct banks_hook_seen *out)
{
	banks_webhook_judge(c, &cfg, body, strlen(body), out);
}

static char *answer(const char *url)
{
	char *s;

	if (asprintf(&s,
		     "{\"webhookUrl\":\"%s\",\"chave\":\"pix@loja.example\","
		     "\"criacao\":\"2026-11-26T12:00:00.123Z\"}",
		     url) < 0)
		abort();
	return s;
}

static void test_https(void)
{
	char err[512];

	cfg.base_url = "http://127.0.0.1:8080/v1";
	cfg.bank_webhook_base_url = BASE;
	CHECK_INT(banks_webhook_https(&cfg, err, sizeof(err)), 0);
	cfg.bank_webhook_base_url = "http://pix-webhook.loja.example/v1";
	CHECK_INT(banks_webhook_https(&cfg, err, sizeof(err)), -1);
	CHECK_STR(err, "the webhook URL must be https (the standard demands it), and "
		       "bank-webhook-base-url is http://pix-webhook.loja.example/v1: set it to the "
		       "https name of the server that takes the banks' webhooks");
	cfg.bank_webhook_base_url = "";
	CHECK_INT(banks_webhook_https(&cfg, err, sizeof(err)), -1);
	CHECK(strstr(err, "and base-url is http://127.0.0.1:8080/v1 (bank-webhook-base-url is not "
			  "set): set bank-webhook-base-url to") != NULL);
	cfg.base_url = "HTTPS://api.loja.example/v1";
	CHECK_INT(banks_webhook_https(&cfg, err, sizeof(err)), 0);
	cfg.base_url = "https://";
	CHECK_INT(banks_webhook_https(&cfg, err, sizeof(err)), -1);
	cfg.base_url = "http://127.0.0.1:8080/v1";
	cfg.bank_webhook_base_url = BASE;
}

static void test_mtls(void)
{
	struct banks_conn c = {.id = ID, .auth = BANKS_MTLS, .pix_key = "pix@loja.example"};
	struct banks_hook_seen s;
	char *body;

	body = answer(BASE "/webhooks/bank/" ID);
	judge(&c, body, &s);
	CHECK_INT(s.hook, BANKS_HOOK_THIS);
	CHECK_INT(s.since_ms, 1795694400123LL);
	free(body);
	/* the URL of another connection of ours, another host, user info */
	body = answer(BASE "/webhooks/bank/" OTHER);
	judge(&c, body, &s);
	CHECK_INT(s.hook, BANKS_HOOK_OTHER);
	CHECK_STR(s.conn, OTHER);
	CHECK_STR(s.host, "pix-webhook.loja.example");
	free(body);
	body = answer("https://me:s3cret@evil.example:8443/hook?t=secret");
	judge(&c, body, &s);
	CHECK_INT(s.hook, BANKS_HOOK_OTHER);
	CHECK_STR(s.host, "evil.example");
	CHECK_STR(s.conn, "");
	free(body);
	body = answer("https://[::1]:8443/x");
	judge(&c, body, &s);
	CHECK_STR(s.host, "[::1]");
	free(body);
	body = answer("https://ho\\u001b[31mst.example/x");
	judge(&c, body, &s);
	CHECK_STR(s.host, "ho?[31mst.example");
	free(body);
	body = answer("not a url");
	judge(&c, body, &s);
	CHECK_INT(s.hook, BANKS_HOOK_OTHER);
	CHECK_STR(s.host, "");
	free(body);
	/* the URL plus anything is not the URL */
	body = answer(BASE "/webhooks/bank/" ID "/pix");
	judge(&c, body, &s);
	CHECK_INT(s.hook, BANKS_HOOK_OTHER);
	CHECK_STR(s.conn, "");
	free(body);
	/* no criacao, or one that is no time: none */
	judge(&c, "{\"webhookUrl\":\"" BASE "/webhooks/bank/" ID "\"}", &s);
	CHECK_INT(s.hook, BANKS_HOOK_THIS);
	CHECK_INT(s.since_ms, 0);
	judge(&c, "{\"webhookUrl\":\"" BASE "/webhooks/bank/" ID "\",\"criacao\":12}", &s);
	CHECK_INT(s.since_ms, 0);
	judge(&c, "{\"webhookUrl\":\"" BASE "/webhooks/bank/" ID "\",\"criacao\":\"1795406400\"}",
	      &s);
	CHECK_INT(s.since_ms, 0);
}

static void test_url_token(void)
{
	struct banks_conn c = {.id = ID, .auth = BANKS_URL_TOKEN, .pix_key = "pix@loja.example"};
	struct banks_hook_seen s;
	char *body;

	ids_sha256_hex(c.token_sha, TOKEN, strlen(TOKEN));
	body = answer(BASE "/webhooks/bank/" ID "?hmac=" TOKEN "&ignorar=");
	judge(&c, body, &s);
	CHECK_INT(s.hook, BANKS_HOOK_THIS);
	free(body);
	/* the token anywhere in the query, /pix kept in the path */
	body = answer(BASE "/webhooks/bank/" ID "/pix?ignorar=&hmac=" TOKEN);
	judge(&c, body, &s);
	CHECK_INT(s.hook, BANKS_HOOK_THIS);
	free(body);
	/* another token, none, a prefix of it, an empty one */
	body = answer(BASE "/webhooks/bank/" ID "?hmac=abc&ignorar=");
	judge(&c, body, &s);
	CHECK_INT(s.hook, BANKS_HOOK_OLD_TOKEN);
	free(body);
	body = answer(BASE "/webhooks/bank/" ID);
	judge(&c, body, &s);
	CHECK_INT(s.hook, BANKS_HOOK_OLD_TOKEN);
	free(body);
	body = answer(BASE "/webhooks/bank/" ID "?xhmac=" TOKEN);
	judge(&c, body, &s);
	CHECK_INT(s.hook, BANKS_HOOK_OLD_TOKEN);
	free(body);
	body = answer(BASE "/webhooks/bank/" ID "?hmac=&x=" TOKEN);
	judge(&c, body, &s);
	CHECK_INT(s.hook, BANKS_HOOK_OLD_TOKEN);
	free(body);
	/* a longer id is another connection's URL, not ours */
	body = answer(BASE "/webhooks/bank/" ID "0?hmac=" TOKEN);
	judge(&c, body, &s);
	CHECK_INT(s.hook, BANKS_HOOK_OTHER);
	CHECK_STR(s.conn, "");
	free(body);
	/* no stored token: never ours */
	c.token_sha[0] = '\0';
	body = answer(BASE "/webhooks/bank/" ID "?hmac=" TOKEN);
	judge(&c, body, &s);
	CHECK_INT(s.hook, BANKS_HOOK_OLD_TOKEN);
	free(body);
}

static void test_hostile(void)
{
	struct banks_conn c = {.id = ID, .auth = BANKS_MTLS, .pix_key = "pix@loja.example"};
	struct banks_hook_seen s;
	static const char *const bad[] = {
	    "",
	    "null",
	    "[\"" BASE "\"]",
	    "{\"webhookUrl\":5}",
	    "{\"webhookUrl\":null}",
	    "{\"webhookUrl\":\"\"}",
	    "{\"webhookUrl\":[\"x\"]}",
	    "{\"url\":\"" BASE "\"}",
	    "{\"webhookUrl\":\"https://a\",\"webhookUrl\":\"https://b\"}",
	    "{\"webhookUrl\":\"https://a\"",
	    "<html>Service Unavailable</html>",
	};
	char *big;
	size_t n = 100000;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		judge(&c, bad[i], &s);
		CHECK_INT(s.hook, BANKS_HOOK_BAD);
		CHECK(s.err[0] != '\0');
	}
	banks_webhook_judge(&c, &cfg, NULL, 0, &s);
	CHECK_INT(s.hook, BANKS_HOOK_BAD);
	/* for another key, or a key of another type */
	judge(&c, "{\"webhookUrl\":\"" BASE "/webhooks/bank/" ID "\",\"chave\":\"x@y.example\"}",
	      &s);
	CHECK_INT(s.hook, BANKS_HOOK_BAD);
	CHECK_STR(s.err, "the bank's answer is for another Pix key than pix@loja.example");
	judge(&c, "{\"webhookUrl\":\"" BASE "/webhooks/bank/" ID "\",\"chave\":7}", &s);
	CHECK_INT(s.hook, BANKS_HOOK_BAD);
	/* a URL of 100,000 characters: another URL, its host bounded */
	big = malloc(n + 64);
	strcpy(big, "{\"webhookUrl\":\"https://");
	memset(big + strlen(big), 'a', n);
	strcpy(big + 23 + n, "\"}");
	judge(&c, big, &s);
	CHECK_INT(s.hook, BANKS_HOOK_OTHER);
	CHECK_INT(strlen(s.host), BANKS_HOOK_HOST_MAX);
	free(big);
}

static void test_problem(void)
{
	char out[512];

	bankapi_problem(
	    out, sizeof(out), 400,
	    "{\"type\":\"https://pix.bcb.gov.br/api/v2/error/WebhookOperacaoInvalida\","
	    "\"title\":\"Webhook inválido\",\"status\":400,\"detail\":\"A chave não "
	    "pertence ao usuário.\",\"violacoes\":[{\"razao\":\"A chave não pertence ao "
	    "usuário.\",\"propriedade\":\"chave\"},{\"razao\":\"deve ser https\","
	    "\"propriedade\":\"webhookUrl\",\"valor\":\"http://x\"}]}");
	CHECK_STR(out, "HTTP 400 A chave não pertence ao usuário. (chave; webhookUrl: deve ser "
		       "https)");
	bankapi_problem(out, sizeof(out), 403, "{\"title\":\"Acesso Negado\",\"status\":403}");
	CHECK_STR(out, "HTTP 403 Acesso Negado");
	bankapi_problem(out, sizeof(out), 502, "<html>\r\nBad Gateway\x1b[2J</html>");
	CHECK_STR(out, "HTTP 502 <html>  Bad Gateway [2J</html>");
	bankapi_problem(out, sizeof(out), 500, NULL);
	CHECK_STR(out, "HTTP 500");
	bankapi_problem(out, sizeof(out), 400, "{\"detail\":5,\"violacoes\":{\"razao\":\"x\"}}");
	CHECK_STR(out, "HTTP 400");
	/* control characters, C1 ones included, become spaces; a long detail is
	 * cut at a character; violations beyond three left out */
	bankapi_problem(out, sizeof(out), 400,
			"{\"detail\":\"a\\u001b[31mb\\u0085c\\u009bd\\u00e9\"}");
	CHECK_STR(out, "HTTP 400 a [31mb c d\xc3\xa9");
	{
		char body[1200], *p = body;
		p += sprintf(p, "{\"detail\":\"");
		for (int i = 0; i < 199; i++)
			*p++ = 'x';
		p += sprintf(p, "\xc3\xa9\",\"violacoes\":[");
		for (int i = 0; i < 5; i++)
			p += sprintf(p, "%s{\"razao\":\"r%d\"}", i ? "," : "", i);
		sprintf(p, "]}");
		bankapi_problem(out, sizeof(out), 400, body);
		CHECK(strstr(out, "xxx (r0; r1; r2)") != NULL);
		CHECK(strstr(out, "\xc3") == NULL);
	}
	/* a small buffer: cut, terminated */
	bankapi_problem(out, 12, 400, "{\"detail\":\"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\"}");
	CHECK_STR(out, "HTTP 400 \xc3\xa9");
}

int main(void)
{
	cfg.base_url = "http://127.0.0.1:8080/v1";
	cfg.bank_webhook_base_url = BASE;
	test_https();
	test_mtls();
	test_url_token();
	test_hostile();
	test_problem();
	return check_finish("banks_webhook");
}
