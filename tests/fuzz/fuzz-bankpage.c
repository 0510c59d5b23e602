/* Fuzz a page of the bank's GET /pix ({"parametros": {..., "paginacao":
 * {"quantidadeDePaginas", ...}}, "pix": [...]}, API Pix 2.9.0) as the
 * reconciliation reads it. bankpix_parse_page must accept or refuse with a
 * message, never crash, leak or read out of bounds; a page accepted has a
 * count of pages from 1 to a million, each of its Pix as bankpix_parse would
 * have it; a page refused leaves the count and the batch untouched. */
#include "pixrelay/pix/bankpix.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bankpix_batch b, untouched;
	char err[256] = "";
	long pages = -7;
	int rc;

	memset(&b, 0x5a, sizeof(b));
	untouched = b;
	rc = bankpix_parse_page((const char *)data, size, &b, &pages, err, sizeof(err));
	if (rc != BANKPIX_OK) {
		if (err[0] == '\0' || (rc != BANKPIX_MALFORMED && rc != BANKPIX_TOO_MANY) ||
		    pages != -7 || memcmp(&b, &untouched, sizeof(b)) != 0)
			__builtin_trap();
		return 0;
	}
	if (pages < 1 || pages > 1000000 || b.n + b.nrefused > BANKPIX_ITEMS_MAX)
		__builtin_trap();
	for (size_t i = 0; i < b.n; i++)
		if (strlen(b.items[i].e2e) != BANKPIX_E2E_LEN || !b.items[i].json ||
		    b.items[i].cents < 0 || b.items[i].nrefunds > BANKPIX_REFUNDS_MAX)
			__builtin_trap();
	for (size_t i = 0; i < b.nrefused; i++)
		if (strncmp(b.refused[i].err, "pix[", 4) != 0 ||
		    b.refused[i].index >= b.n + b.nrefused)
			__builtin_trap();
	bankpix_batch_deinit(&b);
	return 0;
}
