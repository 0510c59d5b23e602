/* Fuzz a bank's Pix notification (POST /v1/webhooks/bank/{id}/pix, API Pix
 * {"pix": [...]}, or the list alone) as the receiver sees its body.
 * bankpix_parse must accept or refuse with a message, never crash, leak or
 * read out of bounds; every accepted Pix has a 32-character endToEndId,
 * cents that print back as its valor, no more refunds than the cap, and a
 * canonical form that parses again into the same Pix; every refusal names
 * its item. */
#include "pixrelay/core/json.h"
#include "pixrelay/pix/bankpix.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_item(const struct bankpix *p)
{
	struct bankpix_batch again;
	char err[256] = "", *body;

	if (strlen(p->e2e) != BANKPIX_E2E_LEN || strlen(p->txid) > BANKPIX_TXID_MAX ||
	    p->cents < 0 || p->cents > 999999999999LL || p->nrefunds > BANKPIX_REFUNDS_MAX ||
	    !p->json)
		__builtin_trap();
	for (size_t j = 0; j < p->nrefunds; j++)
		if (strlen(p->refunds[j].rtr_id) != BANKPIX_E2E_LEN || p->refunds[j].cents < 0 ||
		    strcmp(bankpix_refund_status_name(p->refunds[j].status), "?") == 0)
			__builtin_trap();
	/* the canonical form is a Pix of its own, the same one */
	if (asprintf(&body, "{\"pix\":[%s]}", p->json) < 0)
		abort();
	if (bankpix_parse(body, strlen(body), &again, err, sizeof(err)) != BANKPIX_OK ||
	    again.n != 1 || strcmp(again.items[0].e2e, p->e2e) != 0 ||
	    again.items[0].cents != p->cents || again.items[0].horario_ms != p->horario_ms ||
	    again.items[0].nrefunds != p->nrefunds || strcmp(again.items[0].json, p->json) != 0)
		__builtin_trap();
	bankpix_batch_deinit(&again);
	free(body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bankpix_batch b;
	char err[256] = "", id[27];
	int rc = bankpix_parse((const char *)data, size, &b, err, sizeof(err));

	if (rc != BANKPIX_OK) {
		if (err[0] == '\0' || (rc != BANKPIX_MALFORMED && rc != BANKPIX_TOO_MANY))
			__builtin_trap();
		return 0;
	}
	if (b.n + b.nrefused > BANKPIX_ITEMS_MAX)
		__builtin_trap();
	for (size_t i = 0; i < b.n; i++) {
		check_item(&b.items[i]);
		if (b.items[i].txid[0] && bankpix_charge_of_txid(b.items[i].txid, id) == 0 &&
		    strlen(id) != 26)
			__builtin_trap();
	}
	for (size_t i = 0; i < b.nrefused; i++)
		if (strncmp(b.refused[i].err, "pix[", 4) != 0 ||
		    b.refused[i].index >= b.n + b.nrefused)
			__builtin_trap();
	bankpix_batch_deinit(&b);
	return 0;
}
