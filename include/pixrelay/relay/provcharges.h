/* provcharges: charges and refunds at a payment provider
 * (docs/providers.md), for relay/bankcharges.c, which reserves the
 * charge's id, stores the charge and answers the merchant.
 *
 * Woovi: POST /api/v1/charge?return_existing=true with the charge's id as
 * its correlationID (a retry gets the same charge); POST
 * /api/v1/charge/{id}/refund with the refund's own correlationID
 * D<charge id> (asked again, Woovi keeps one). The provider's code is held
 * against the charge (it decodes as a BR Code, it carries the amount)
 * before anything is stored.
 */
#ifndef PIXRELAY_PROVCHARGES_H
#define PIXRELAY_PROVCHARGES_H

#include "pixrelay/pix/bankcreds.h"
#include "pixrelay/pix/charge.h"
#include "pixrelay/pix/provider.h"

#include <stdint.h>

struct bankapi;

/* result 0 with `text` the BR Code the payer scans (create) or NULL
 * (refund); BANKCHARGES_REFUSED with the provider's refusal (the merchant's
 * request: 400); BANKCHARGES_UNAVAILABLE with why (the provider down, slow,
 * refusing pixrelay's token or answering something else: retry). text is
 * borrowed for the call. */
typedef void (*provcharges_fn)(void *ud, int result, const char *text);

/* Create charge `id` of `in` at provider `p` with `creds` (copied). cb
 * runs once, later. */
void provcharges_create(struct bankapi *api, const struct bank_creds *creds, enum provider p,
			const char *id, const struct charge_input *in, provcharges_fn cb, void *ud);

/* Ask provider `p` to give back `cents` of charge `id` (its payment
 * `payment` there, "" when the provider needs none). cb runs once, later:
 * 0 once the provider took the request (the money goes back when it says
 * so: its notification or the reconciliation). */
void provcharges_refund(struct bankapi *api, const struct bank_creds *creds, enum provider p,
			const char *id, const char *payment, int64_t cents, provcharges_fn cb,
			void *ud);

#endif
