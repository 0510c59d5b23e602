/* Fuzz an ingest notification (POST /v1/webhooks/ingest/{accountId}) as the
 * handler sees it: the four signature headers and the body. The input is
 * four lines, webhook-id, webhook-timestamp, webhook-signature and signature
 * ("-" for a header that is absent; a webhook-signature of "*" is replaced
 * by the right one for the rest, so that the fuzzer gets past the HMAC),
 * then the body. ingest_verify and ingest_parse must accept or refuse with a
 * message, never crash, leak or read out of bounds; a parsed notification
 * has its three strings, re-serialised data that parses again, and, when
 * given, data.amount as found there and data.status one of the five. */
#include "pixrelay/store/ingest.h"
#include "pixrelay/core/json.h"
#include "pixrelay/pix/sign.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NOW 1795307992LL
#define SECRET "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The next line of [*p, end) as a new string; NULL for "-" or when there is
 * no line left (the caller frees). */
static char *line(const char **p, const char *end, int *missing)
{
	const char *nl = memchr(*p, '\n', (size_t)(end - *p));
	char *s;

	if (!nl) {
		*missing = 1;
		return NULL;
	}
	s = malloc((size_t)(nl - *p) + 1);
	if (!s)
		abort();
	memcpy(s, *p, (size_t)(nl - *p));
	s[nl - *p] = '\0';
	*p = nl + 1;
	if (strcmp(s, "-") == 0) {
		free(s);
		return NULL;
	}
	return s;
}

static void check_parse(const char *body, size_t len)
{
	struct ingest_note n;
	char err[256] = "";
	yajl_val v = NULL;

	if (ingest_parse(body, len, &n, err, sizeof(err)) != 0) {
		if (err[0] == '\0')
			__builtin_trap();
		return;
	}
	if (!n.id || !n.event || !n.charge_id || !n.data_json || strlen(n.id) > INGEST_ID_MAX ||
	    strlen(n.charge_id) > INGEST_ID_MAX)
		__builtin_trap();
	(void)ingest_action(n.event);
	if (!ingest_event_status(n.event))
		__builtin_trap();
	if (n.status && strcmp(n.status, "PENDING") != 0 && strcmp(n.status, "PAID") != 0 &&
	    strcmp(n.status, "EXPIRED") != 0 && strcmp(n.status, "REFUNDED") != 0 &&
	    strcmp(n.status, "FAILED") != 0)
		__builtin_trap();
	if (json_parse_object(n.data_json, strlen(n.data_json), &v, err, sizeof(err)) != 0)
		__builtin_trap();
	/* the amount checked is the one relayed */
	if (n.has_amount) {
		int64_t a;
		if (!json_is_int64(json_get(v, "amount"), &a) || a != n.amount)
			__builtin_trap();
	}
	yajl_tree_free(v);
	ingest_note_deinit(&n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;
	char *hdr[4], err[256] = "";
	int missing = 0;

	for (int i = 0; i < 4; i++)
		hdr[i] = line(&p, end, &missing);
	if (!missing) {
		const char *body = p;
		size_t len = (size_t)(end - p);

		if (hdr[0] && hdr[1] && hdr[2] && strcmp(hdr[2], "*") == 0) {
			char *e = NULL;
			long long ts = strtoll(hdr[1], &e, 10);
			free(hdr[2]);
			hdr[2] = malloc(SIGN_SIGNATURE_LEN + 1);
			if (!hdr[2] || sign_signature(SECRET, hdr[0], ts, body, len, hdr[2],
						      SIGN_SIGNATURE_LEN + 1) != 0)
				abort();
		}
		if (ingest_verify(SECRET, hdr[0], hdr[1], hdr[2], hdr[3], body, len, NOW, err,
				  sizeof(err)) != 0 &&
		    err[0] == '\0')
			__builtin_trap();
		check_parse(body, len);
	} else {
		check_parse((const char *)data, size);
	}
	for (int i = 0; i < 4; i++)
		free(hdr[i]);
	return 0;
}
