/* charge: the Pix charge of spec 2.1, without I/O.
 *
 * It validates a create request (4.1 and section 8), computes the fee,
 * makes the request's fingerprint (for a safe retry with the same
 * externalID) and renders the PixQRCode JSON.
 *
 * The JSON is stored as two fixed parts around the two fields a transition
 * changes: head + status + mid + updatedAt + "\"}". A Lua script can so
 * produce the charge in its new state, byte for byte, in the same atomic step
 * that changes it.
 */
#ifndef PIXRELAY_CHARGE_H
#define PIXRELAY_CHARGE_H

#include "pixrelay/pix/chargedue.h"

#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_tree.h>

#define CHARGE_MIN_AMOUNT 200
#define CHARGE_MAX_AMOUNT 99999999999LL /* R$ 999,999,999.99: field 54 stays within 12 chars */
#define CHARGE_MIN_EXPIRATION 300
#define CHARGE_COMMENT_MAX 35
#define CHARGE_EXTERNAL_ID_MAX 100
#define CHARGE_NAME_MAX 120
#define CHARGE_PHONE_MAX 30

struct charge_limits {
	long default_expiration;
	long max_expiration;
	long long today; /* days since 1970-01-01 in Brasilia: due dates are not before it */
};

/* A validated create request. Strings are owned (NULL when not given). */
struct charge_input {
	int64_t amount;
	int64_t expiration;
	char *external_id;
	char *comment;
	char *name;
	char *email;
	char *phone;
	char *document; /* normalised CPF (11) or CNPJ (14) */
	char *postback_url;
	struct charge_due due; /* a due-date charge's terms (due.date[0] == '\0': none);
				* expiration is then 0 */
	char recurrence[40];   /* a recurring charge's recurrence (rec_...), "" none: it
				* has no BR Code (its payer's bank pays it) */
	char idrec[30];	       /* its idRec, and the bank connection of its cobr */
	char connection[32];
};

/* Validate `body` (a JSON object) against the rules of 4.1. Returns 0 and
 * fills *out (free with charge_input_deinit), or -1 with "field: rule" in err
 * (the first field at fault, in the spec's order). */
int charge_parse_create(yajl_val body, const struct charge_limits *lim, struct charge_input *out,
			char *err, size_t errlen);
void charge_input_deinit(struct charge_input *in);

/* Whether the request is a due-date charge's. */
#define charge_has_due(in) ((in)->due.date[0] != '\0')

/* The moment a charge of `in` created at `now_ms` stops being payable. */
uint64_t charge_expires_ms(const struct charge_input *in, uint64_t now_ms);

/* The fee: fixed + amount * bps / 10000 rounded half up, never above amount. */
int64_t charge_fee(int64_t amount, long fixed, long bps);

/* SHA-256 (hex) of the request's canonical form: two requests with the same
 * fingerprint ask for the same charge. */
void charge_fingerprint(const struct charge_input *in, char out[65]);

/* Customer id `cus_<uuid>`: derived from account and document when there is
 * a document (the same document in one account gives the same id), else
 * random. out has 41 bytes. */
void charge_customer_id(const char *env, const char *account, const char *document, char out[41]);

/* Everything the JSON shows. */
struct charge_view {
	const char *id;
	const char *external_id; /* NULL -> null */
	const char *br_code;
	const char *image_url;
	int64_t amount;
	const char *comment; /* NULL -> null */
	int64_t expiration;
	int64_t fee;
	uint64_t created_ms;
	uint64_t expires_ms;
	const char *customer_id; /* NULL: "customer": null */
	const char *name, *document, *email, *phone;
	const struct charge_due *due; /* NULL: an immediate charge */
	const char *recurrence;	      /* a recurring charge's recurrence; NULL: none */
};

/* Render the fixed parts; *head and *mid are malloc'ed (caller frees). */
void charge_render_parts(const struct charge_view *v, char **head, char **mid);

/* Assemble the full JSON from the parts (malloc'ed, NUL-terminated), with
 * the Pix a bank reported as `"pix": {...}` when `pix` is neither NULL nor
 * "" (stored with the charge when it was paid through a bank connection). */
char *charge_assemble(const char *head, const char *status, const char *mid, const char *updated_at,
		      const char *pix);

#endif
