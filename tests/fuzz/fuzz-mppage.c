/* Fuzz a page of Mercado Pago's GET /v1/payments/search ({"paging":
 * {"total", "limit", "offset"}, "results": [...]}) as the reconciliation
 * reads it, and the same bytes as GET /v1/payments/{id}'s answer and as a
 * notification. mp_search_parse must accept or refuse with a message,
 * never crash, leak or read out of bounds; a page accepted has at most
 * MP_PAGE_MAX items and refusals, each item an "mp:" id of digits, its
 * cents from 1 to BANKPIX_CENTS_MAX, no e2e, its JSON and at most
 * BANKPIX_REFUNDS_MAX refunds, each refusal a reason naming its result and
 * an id; a page refused leaves the batch and has_more untouched. A notice
 * read has a payment id of digits or none. */
#include "pixrelay/pix/mercadopago.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whether s is "mp:" and 1 to 20 digits. */
static bool mp_id(const char *s)
{
	size_t n = 0;

	if (strncmp(s, MP_ID_PREFIX, 3) != 0)
		return false;
	for (s += 3; s[n]; n++)
		if (s[n] < '0' || s[n] > '9')
			return false;
	return n >= 1 && n <= MP_PAYMENT_ID_MAX;
}

static void check_items(const struct bankpix_batch *b)
{
	for (size_t i = 0; i < b->n; i++)
		if (!mp_id(b->items[i].id) || b->items[i].e2e[0] || !b->items[i].json ||
		    b->items[i].cents < 1 || b->items[i].cents > BANKPIX_CENTS_MAX ||
		    b->items[i].nrefunds > BANKPIX_REFUNDS_MAX)
			__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bankpix_batch b, untouched;
	struct mp_notice n;
	char err[256] = "";
	bool more = false;
	int rc;

	memset(&b, 0x5a, sizeof(b));
	untouched = b;
	rc = mp_search_parse((const char *)data, size, &b, &more, err, sizeof(err));
	if (rc != MP_OK) {
		if (err[0] == '\0' || (rc != MP_MALFORMED && rc != MP_TOO_MANY) || more ||
		    memcmp(&b, &untouched, sizeof(b)) != 0)
			__builtin_trap();
	} else {
		if (b.n + b.nrefused > MP_PAGE_MAX)
			__builtin_trap();
		check_items(&b);
		for (size_t i = 0; i < b.nrefused; i++)
			if (strncmp(b.refused[i].err, "results[", 8) != 0 || !b.refused[i].id[0])
				__builtin_trap();
		bankpix_batch_deinit(&b);
	}

	err[0] = '\0';
	rc = mp_payment_parse((const char *)data, size, &b, err, sizeof(err));
	if (rc == MP_OK) {
		if (b.n + b.nrefused > 1)
			__builtin_trap();
		check_items(&b);
		bankpix_batch_deinit(&b);
	} else if (rc != MP_MALFORMED || err[0] == '\0') {
		__builtin_trap();
	}

	err[0] = '\0';
	rc = mp_notice_parse((const char *)data, size, NULL, &n, err, sizeof(err));
	if (rc == MP_OK) {
		for (size_t i = 0; n.payment[i]; i++)
			if (n.payment[i] < '0' || n.payment[i] > '9')
				__builtin_trap();
	} else if (rc != MP_MALFORMED || err[0] == '\0') {
		__builtin_trap();
	}
	return 0;
}
