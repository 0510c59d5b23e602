/* Fuzz a page of Woovi's GET /api/v1/transaction ({"transactions": [...],
 * "pageInfo": {"hasNextPage", ...}}) as the reconciliation reads it.
 * woovi_transactions_parse must accept or refuse with a message, never
 * crash, leak or read out of bounds; a page accepted has at most
 * WOOVI_PAGE_MAX items and refusals, each item a "wv:" id, its cents in
 * Woovi's range and its JSON, each refusal a reason naming its transaction;
 * a page refused leaves the batch and has_next untouched. */
#include "pixrelay/pix/woovi.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bankpix_batch b, untouched;
	char err[256] = "";
	bool next = false;
	int rc;

	memset(&b, 0x5a, sizeof(b));
	untouched = b;
	rc = woovi_transactions_parse((const char *)data, size, &b, &next, err, sizeof(err));
	if (rc != WOOVI_OK) {
		if (err[0] == '\0' || (rc != WOOVI_MALFORMED && rc != WOOVI_TOO_MANY) || next ||
		    memcmp(&b, &untouched, sizeof(b)) != 0)
			__builtin_trap();
		return 0;
	}
	if (b.n + b.nrefused > WOOVI_PAGE_MAX)
		__builtin_trap();
	for (size_t i = 0; i < b.n; i++)
		if (strncmp(b.items[i].id, WOOVI_ID_PREFIX, 3) != 0 || !b.items[i].json ||
		    b.items[i].cents < 1 || b.items[i].cents > WOOVI_VALUE_MAX ||
		    b.items[i].nrefunds > BANKPIX_REFUNDS_MAX)
			__builtin_trap();
	for (size_t i = 0; i < b.nrefused; i++)
		if (strncmp(b.refused[i].err, "transactions[", 13) != 0 || !b.refused[i].id[0])
			__builtin_trap();
	bankpix_batch_deinit(&b);
	return 0;
}
