/* bankcharges: charges created at the account's bank (docs/bank-api.md).
 *
 * When an account's charges go to a connected bank (its bank_api
 * connection, with API credentials), creating a charge is: its id reserved
 * (charges_reserve: a retry with the same externalID puts the same txid),
 * PUT {api}/cob/{id} at the bank (the charge's expiration, amount, the
 * connection's Pix key, the comment, the payer when named), and the charge
 * stored with the bank's pixCopiaECola as its BR Code. The bank then
 * enforces the amount and the expiry for the payer. Nothing is half made:
 * a refusal forgets the reservation and stores nothing; a bank that is down
 * or slow stores nothing and keeps the reservation for the retry. Accounts
 * whose charging connection has no API credentials get a static BR Code of
 * its Pix key (charges_create).
 */
#ifndef PIXRELAY_BANKCHARGES_H
#define PIXRELAY_BANKCHARGES_H

#include "pixrelay/core/config.h"
#include "pixrelay/pix/charge.h"
#include "pixrelay/pix/env.h"
#include "pixrelay/redis/redis.h"
#include "pixrelay/store/store.h"

#include <stdint.h>

/* Outcomes besides those of charges_create (0, CHARGES_EXISTING,
 * CHARGES_CONFLICT, -1). */
enum bankcharges_result {
	BANKCHARGES_REFUSED = 20,      /* the bank refused the charge: json is its detail (400) */
	BANKCHARGES_UNAVAILABLE = 21,  /* the bank is down, slow or answered nonsense: json
					* says what; retry with the same externalID (503) */
	BANKCHARGES_REQUESTED = 22,    /* a refund asked of the bank (202) */
	BANKCHARGES_AT_BANK_ONLY = 23, /* paid at a bank pixrelay cannot call (409) */
	BANKCHARGES_NO_CHARGING = 24,  /* no connection the charge would go to: several none
					* of which is the default, or none in production;
					* json says which and what to run (409) */
};

struct cache;
struct bankapi;
struct seal_keyfile;

/* What creating a charge needs; borrowed for the process's life. */
struct bankcharges {
	struct rds *r;
	struct cache *cache;
	const struct config *cfg;
	struct bankapi *bankapi;
	struct seal_keyfile *keys; /* opens the connections' credentials (looked for at need) */
};

/* Create a charge for `account` from a validated request, through its
 * charging connection (store/banks_charging.h): at its bank when it has API
 * credentials, else with its Pix key on the static BR Code; or
 * BANKCHARGES_NO_CHARGING. The request is copied; cb runs once, later. */
void bankcharges_create(const struct bankcharges *b, enum env env, const char *account,
			const struct charge_input *in, store_fn cb, void *ud);

/* Refund charge `id` of `account` whole (`amount`, cents, must be its
 * amount; 0: its amount). A charge paid through a bank connection with API
 * credentials is refunded at the bank: PUT /pix/{e2eid}/devolucao/{D+id}
 * (the same refund id on every retry); cb gets BANKCHARGES_REQUESTED with
 * json {"charge": ..., "refund": {"id", "status", "valor"}} and the charge
 * stays PAID until the bank reports the refund DEVOLVIDO (webhook or
 * reconciliation: then REFUNDED with its one event). A charge paid through
 * a connection without API credentials: BANKCHARGES_AT_BANK_ONLY (json is
 * the connection's id): pixrelay cannot give back money the bank holds.
 * Any other charge: charges_transition (event_out as there). */
void bankcharges_refund(const struct bankcharges *b, enum env env, const char *account,
			const char *id, int64_t amount, char *event_out, store_fn cb, void *ud);

/* The modalidades of a cobv's valor that pixrelay sends (the standard's
 * tables): the fine a percentage, the interest a percentage a month in
 * calendar days, the discount a fixed value until a date. */
enum {
	COBV_MULTA_PERCENTUAL = 2,
	COBV_JUROS_PERCENTUAL_MES = 3,
	COBV_DESCONTO_VALOR_FIXO = 1,
};

/* The body of PUT /cobv/{txid} for a due-date charge (CobVSolicitada):
 * calendario (dataDeVencimento, validadeAposVencimento, always sent),
 * devedor, valor (original, multa, juros, desconto) and chave: malloc'd
 * JSON. */
char *bankcharges_cobv_body(const struct charge_input *in, const char *pix_key);

/* The body of PUT /cob/{txid} for a charge (CobSolicitada): malloc'd JSON. */
char *bankcharges_cob_body(const struct charge_input *in, const char *pix_key);

#endif
