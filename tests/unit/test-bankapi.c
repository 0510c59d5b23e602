/* Unit tests of the pure part of bankapi: the OAuth2 token endpoint's
 * answer as the bank client reads it (bankapi_parse_token), hostile bodies
 * included. The bank's Problema line (bankapi_problem) is tested with the
 * webhook's judge, in test-banks_webhook.c. */
#include "check.h"

#include "pixrelay/relay/bankapi.h"

#include <stdlib.h>
#include <string.h>

static char err[256];

/* bankapi_parse_token of `body`: its result, the token (or "(none)") in
 * tok, the lifetime (or -7) in *ttl. */
static int token(const char *body, char *tok, size_t toklen, long long *ttl)
{
	char *t = NULL;
	int rc;

	*ttl = -7;
	err[0] = '\0';
	rc = bankapi_parse_token(body, strlen(body), &t, ttl, err, sizeof(err));
	snprintf(tok, toklen, "%s", t ? t : "(none)");
	free(t);
	return rc;
}

/* expires_in that is no whole number of seconds from 1 to 30 days */
static const char *const bad_expiry[] = {
    "0", "-5", "2592001", "\"3600\"", "3600.5", "1e3", "99999999999999999999", "null", "{}",
};

static void test_token(void)
{
	char tok[64];
	long long ttl;

	CHECK_INT(token("{\"access_token\":\"abc.DEF-123\",\"token_type\":\"Bearer\","
			"\"expires_in\":3600,\"scope\":\"cob.write pix.read\"}",
			tok, sizeof(tok), &ttl),
		  0);
	CHECK_STR(tok, "abc.DEF-123");
	CHECK_INT(ttl, 3600000);
	/* the type in any case, or absent; no expires_in: five minutes */
	CHECK_INT(
	    token("{\"access_token\":\"t\",\"token_type\":\"bearer\"}", tok, sizeof(tok), &ttl), 0);
	CHECK_INT(ttl, 300000);
	CHECK_INT(token("{\"access_token\":\"t\",\"expires_in\":1}", tok, sizeof(tok), &ttl), 0);
	CHECK_INT(ttl, 1000);
	CHECK_INT(token("{\"access_token\":\"t\",\"expires_in\":2592000}", tok, sizeof(tok), &ttl),
		  0);
	CHECK_INT(ttl, 2592000000LL);

	/* refused: why, never the token; nothing written */
	CHECK_INT(token("{\"token_type\":\"Bearer\"}", tok, sizeof(tok), &ttl), -1);
	CHECK_STR(err, "the token answer has no usable access_token");
	CHECK_STR(tok, "(none)");
	CHECK_INT(ttl, -7);
	CHECK_INT(token("{\"access_token\":\"\"}", tok, sizeof(tok), &ttl), -1);
	CHECK_STR(err, "the token answer has no usable access_token");
	CHECK_INT(token("{\"access_token\":42}", tok, sizeof(tok), &ttl), -1);
	CHECK_STR(err, "the token answer has no usable access_token");
	/* a token that would break the Authorization header */
	CHECK_INT(token("{\"access_token\":\"abc\\r\\nX-Evil: 1\"}", tok, sizeof(tok), &ttl), -1);
	CHECK_STR(err, "the token answer has no usable access_token");
	CHECK_INT(token("{\"access_token\":\"a b\"}", tok, sizeof(tok), &ttl), -1);
	CHECK_INT(token("{\"access_token\":\"a\\\"b\"}", tok, sizeof(tok), &ttl), -1);
	CHECK_INT(token("{\"access_token\":\"t\",\"token_type\":\"mac\"}", tok, sizeof(tok), &ttl),
		  -1);
	CHECK_STR(err, "the token is not a Bearer token");
	CHECK_INT(token("{\"access_token\":\"t\",\"token_type\":null}", tok, sizeof(tok), &ttl),
		  -1);
	CHECK_STR(err, "the token is not a Bearer token");
	for (size_t i = 0; i < sizeof(bad_expiry) / sizeof(*bad_expiry); i++) {
		char body[128];

		snprintf(body, sizeof(body), "{\"access_token\":\"t\",\"expires_in\":%s}",
			 bad_expiry[i]);
		CHECK_INT(token(body, tok, sizeof(tok), &ttl), -1);
		CHECK_STR(err, "the token answer's expires_in is not 1 to 2592000 seconds");
		CHECK_STR(tok, "(none)");
	}
	CHECK_INT(token("", tok, sizeof(tok), &ttl), -1);
	CHECK(err[0] != '\0');
	CHECK_INT(token("[\"access_token\"]", tok, sizeof(tok), &ttl), -1);
	CHECK(err[0] != '\0');
	CHECK_INT(ttl, -7);
}

/* A token as long as the client takes, and one character more. */
static void test_token_length(void)
{
	static char body[4200];
	char tok[8];
	long long ttl;
	size_t n = (size_t)snprintf(body, sizeof(body), "{\"access_token\":\"");

	memset(body + n, 'a', 4096);
	snprintf(body + n + 4096, sizeof(body) - n - 4096, "\"}");
	CHECK_INT(token(body, tok, sizeof(tok), &ttl), 0);
	memset(body + n, 'a', 4097);
	snprintf(body + n + 4097, sizeof(body) - n - 4097, "\"}");
	CHECK_INT(token(body, tok, sizeof(tok), &ttl), -1);
	CHECK_STR(err, "the token answer has no usable access_token");
}

int main(void)
{
	test_token();
	test_token_length();
	return check_finish("bankapi");
}
