/* Fuzz a bank's answers about a connection's webhook as `pixrelay bank
 * show` and `register-webhook` read them: the answer to GET
 * /webhook/{chave} judged for an mTLS and a URL-token connection
 * (banks_webhook_judge), and any answer as an error line
 * (bankapi_problem). Neither may crash, leak or read out of bounds; the
 * judgement is one of its kinds with a printable host of at most
 * BANKS_HOOK_HOST_MAX characters (no path, query or user info) and an
 * error that never quotes the URL's token; the
 * error line is NUL-terminated, valid UTF-8 and free of control
 * characters. */
#include "pixrelay/core/config.h"
#include "pixrelay/core/ids.h"
#include "pixrelay/relay/bankapi.h"
#include "pixrelay/store/banks_webhook.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TOKEN "T0k3nT0k3nT0k3nT0k3nT0k3nT0k3nT0k3nT0k3nabc"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_seen(const struct banks_hook_seen *s)
{
	size_t n = strnlen(s->host, sizeof(s->host));

	if (s->hook < BANKS_HOOK_THIS || s->hook > BANKS_HOOK_BAD || n > BANKS_HOOK_HOST_MAX ||
	    strnlen(s->err, sizeof(s->err)) == sizeof(s->err) || s->since_ms < 0 ||
	    strnlen(s->conn, sizeof(s->conn)) == sizeof(s->conn))
		__builtin_trap();
	if (s->hook == BANKS_HOOK_BAD && !s->err[0])
		__builtin_trap();
	/* a host, never a path, fragment or user info (a character no host
	 * name has reads as ?) */
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s->host[i] <= ' ' || (unsigned char)s->host[i] >= 0x7f ||
		    strchr("/#@", s->host[i]))
			__builtin_trap();
	if (strstr(s->err, TOKEN))
		__builtin_trap();
}

/* Valid UTF-8 without C0, DEL or C1 control characters. */
static void check_line(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t len = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3 : 4;
		if (*p < ' ' || *p == 0x7f || (*p >= 0x80 && *p < 0xc2) || *p > 0xf4)
			__builtin_trap();
		for (size_t i = 1; i < len; i++)
			if ((p[i] & 0xc0) != 0x80)
				__builtin_trap();
		if (*p == 0xc2 && p[1] < 0xa0)
			__builtin_trap();
		p += len;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config cfg = {0};
	struct banks_conn c = {.id = "bnk_01M8C0C563ET99G3XMMMT3BH0C",
			       .pix_key = "pix@loja.example"};
	struct banks_hook_seen s;
	char *body = malloc(size + 1), line[512];

	cfg.base_url = "https://pix.loja.example/v1";
	cfg.bank_webhook_base_url = "";
	memcpy(body, data, size);
	body[size] = '\0';
	c.auth = BANKS_MTLS;
	banks_webhook_judge(&c, &cfg, body, size, &s);
	check_seen(&s);
	c.auth = BANKS_URL_TOKEN;
	ids_sha256_hex(c.token_sha, TOKEN, strlen(TOKEN));
	banks_webhook_judge(&c, &cfg, body, size, &s);
	check_seen(&s);
	/* the error line reads the body up to its first NUL, as curl's is */
	bankapi_problem(line, sizeof(line), 400, body);
	if (strnlen(line, sizeof(line)) == sizeof(line))
		__builtin_trap();
	check_line(line);
	bankapi_problem(line, 16, 503, body);
	check_line(line);
	free(body);
	return 0;
}
