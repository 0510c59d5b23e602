/* provfetch: what a payment provider holds of a payment, read with the
 * connection's own API token (docs/providers.md). A provider's notification
 * is believed only once this read agrees: a signature proves the provider,
 * not the merchant (Woovi signs every merchant's notifications with one
 * key), so a payment another account of the provider holds is not found
 * with this connection's token and moves nothing. Asaas's token is the
 * merchant's own; its notification's payment is read back all the same,
 * so that what moves is what Asaas holds now.
 */
#ifndef PIXRELAY_PROVFETCH_H
#define PIXRELAY_PROVFETCH_H

#include "pixrelay/pix/bankpix.h"
#include "pixrelay/relay/bankcharges.h"

/* Outcomes besides 0 and -1. */
enum provfetch_result {
	PROVFETCH_NO_API = 1,	  /* the connection has no API token (sandbox): nothing read */
	PROVFETCH_NOT_THEIRS = 2, /* the provider does not know it for this connection */
};

/* result 0 with the Pix read (cb may take them: bankpix_batch's items
 * moved out and the batch emptied), PROVFETCH_NO_API, PROVFETCH_NOT_THEIRS,
 * or -1 with err (the provider down, slow or answering nonsense: the
 * notification is to be sent again). */
typedef void (*provfetch_fn)(void *ud, int result, struct bankpix_batch *b, const char *err);

/* Woovi, with connection `conn`'s AppID: the payment `transaction` (GET
 * /api/v1/transaction/{id}) when `charge` is NULL, else every transaction
 * of charge `charge` (GET /api/v1/transaction?charge=: the payment and its
 * refunds). cb runs once, later. */
void provfetch_woovi(const struct bankcharges *b, const char *conn, const char *transaction,
		     const char *charge, provfetch_fn cb, void *ud);

/* Asaas, with connection `conn`'s API key: payment `payment` (GET
 * /v3/payments/{id}; a batch of one Pix when it is money received, else
 * none). cb runs once, later. */
void provfetch_asaas(const struct bankcharges *b, const char *conn, const char *payment,
		     provfetch_fn cb, void *ud);

/* Mercado Pago, with connection `conn`'s access token: payment `payment`
 * (GET /v1/payments/{id}: its notification is only this pointer). cb runs
 * once, later. */
void provfetch_mp(const struct bankcharges *b, const char *conn, const char *payment,
		  provfetch_fn cb, void *ud);

#endif
