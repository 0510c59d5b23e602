/* Fuzz a page of Asaas's GET /v3/payments ({"object": "list", "hasMore",
 * "data": [...]}) as the reconciliation reads it. asaas_payments_parse must
 * accept or refuse with a message, never crash, leak or read out of
 * bounds; a page accepted has at most ASAAS_PAGE_MAX items and refusals,
 * each item an "as:" id, its cents in Asaas's range, its JSON and at most
 * BANKPIX_REFUNDS_MAX refunds each with an id and a known status, each
 * refusal a reason naming its payment and an id; a page refused leaves
 * the batch and has_more untouched. */
#include "pixrelay/pix/asaas.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bankpix_batch b, untouched;
	char err[256] = "";
	bool more = false;
	int rc;

	memset(&b, 0x5a, sizeof(b));
	untouched = b;
	rc = asaas_payments_parse((const char *)data, size, &b, &more, err, sizeof(err));
	if (rc != ASAAS_OK) {
		if (err[0] == '\0' || (rc != ASAAS_MALFORMED && rc != ASAAS_TOO_MANY) || more ||
		    memcmp(&b, &untouched, sizeof(b)) != 0)
			__builtin_trap();
		return 0;
	}
	if (b.n + b.nrefused > ASAAS_PAGE_MAX)
		__builtin_trap();
	for (size_t i = 0; i < b.n; i++) {
		const struct bankpix *p = &b.items[i];

		if (strncmp(p->id, ASAAS_ID_PREFIX, 3) != 0 || !p->json || p->cents < 1 ||
		    p->cents > ASAAS_VALUE_MAX || p->nrefunds > BANKPIX_REFUNDS_MAX)
			__builtin_trap();
		for (size_t j = 0; j < p->nrefunds; j++)
			if (!p->refunds[j].id[0] || !p->refunds[j].json ||
			    p->refunds[j].cents < 1 || p->refunds[j].status > BANKPIX_NAO_REALIZADO)
				__builtin_trap();
	}
	for (size_t i = 0; i < b.nrefused; i++)
		if (strncmp(b.refused[i].err, "data[", 5) != 0 || !b.refused[i].id[0])
			__builtin_trap();
	bankpix_batch_deinit(&b);
	return 0;
}
