/* charge: a Pix charge as values. The create request's body read field by
 * field in the spec's order (unknown fields refused; text checked for
 * UTF-8, control characters and length; tax ids by taxid.c, the rest by
 * validate.c), the fee, the fingerprint that makes a retry with the same
 * externalID safe, and the charge's JSON, rendered once as the parts around
 * status and updatedAt that the Lua scripts restate after each transition.
 * Storing and moving charges is store/charges.c; the BR Code is brcode.c. */
#include "pixrelay/pix/charge.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/pix/taxid.h"
#include "pixrelay/core/timefmt.h"
#include "pixrelay/core/validate.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const known_fields[] = {
    "amount",	"externalID",  "expiration", "comment",	     "name", "email",	 "phone",
    "document", "postbackUrl", "dueDate",    "daysAfterDue", "fine", "interest", "discount"};

#define NKNOWN (sizeof(known_fields) / sizeof(known_fields[0]))

int charge_parse_create(yajl_val body, const struct charge_limits *lim, struct charge_input *out,
			char *err, size_t errlen)
{
	struct charge_input in;
	yajl_val v;
	char *document = NULL;

	memset(&in, 0, sizeof(in));
	for (size_t i = 0; i < body->u.object.len; i++) {
		size_t k;
		for (k = 0; k < NKNOWN; k++)
			if (strcmp(body->u.object.keys[i], known_fields[k]) == 0)
				break;
		if (k == NKNOWN) {
			char echo[JSON_ECHO_MAX + 1];
			snprintf(err, errlen,
				 "unknown field '%s'; allowed: amount, externalID, "
				 "expiration, comment, name, email, phone, document, postbackUrl, "
				 "dueDate, daysAfterDue, fine, interest, discount",
				 json_echo(echo, body->u.object.keys[i]));
			goto fail;
		}
	}
	v = json_get(body, "amount");
	if (!v || YAJL_IS_NULL(v)) {
		snprintf(err, errlen, "amount: is required (an integer number of cents)");
		goto fail;
	}
	if (!YAJL_IS_NUMBER(v)) {
		snprintf(err, errlen, "amount: must be a number (an integer number of cents)");
		goto fail;
	}
	if (!json_is_int64(v, &in.amount)) {
		snprintf(err, errlen, "amount: must be an integer number of cents");
		goto fail;
	}
	if (in.amount < CHARGE_MIN_AMOUNT) {
		snprintf(err, errlen, "amount: must be at least %d (cents)", CHARGE_MIN_AMOUNT);
		goto fail;
	}
	if (in.amount > CHARGE_MAX_AMOUNT) {
		snprintf(err, errlen, "amount: must be at most %lld (cents)", CHARGE_MAX_AMOUNT);
		goto fail;
	}
	if (json_opt_text(json_get(body, "externalID"), "externalID", CHARGE_EXTERNAL_ID_MAX,
			  &in.external_id, err, errlen) < 0)
		goto fail;
	if (in.external_id && validate_is_blank(in.external_id)) {
		snprintf(err, errlen, "externalID: must not be empty");
		goto fail;
	}
	v = json_get(body, "expiration");
	in.expiration = lim->default_expiration;
	if (v && !YAJL_IS_NULL(v)) {
		if (!YAJL_IS_NUMBER(v)) {
			snprintf(err, errlen, "expiration: must be a number (seconds)");
			goto fail;
		}
		if (!json_is_int64(v, &in.expiration)) {
			snprintf(err, errlen, "expiration: must be an integer number of seconds");
			goto fail;
		}
		if (in.expiration < CHARGE_MIN_EXPIRATION) {
			snprintf(err, errlen, "expiration: must be at least %d (seconds)",
				 CHARGE_MIN_EXPIRATION);
			goto fail;
		}
		if (in.expiration > lim->max_expiration) {
			snprintf(err, errlen, "expiration: must be at most %ld (seconds)",
				 lim->max_expiration);
			goto fail;
		}
	}
	if (json_opt_text(json_get(body, "comment"), "comment", CHARGE_COMMENT_MAX, &in.comment,
			  err, errlen) < 0)
		goto fail;
	if (json_opt_text(json_get(body, "name"), "name", CHARGE_NAME_MAX, &in.name, err, errlen) <
	    0)
		goto fail;
	if (json_opt_text(json_get(body, "email"), "email", VALIDATE_EMAIL_MAX, &in.email, err,
			  errlen) < 0)
		goto fail;
	if (in.email && !validate_is_email(in.email)) {
		snprintf(err, errlen, "email: not a valid e-mail address");
		goto fail;
	}
	if (json_opt_text(json_get(body, "phone"), "phone", CHARGE_PHONE_MAX, &in.phone, err,
			  errlen) < 0)
		goto fail;
	if (in.phone && !validate_is_phone(in.phone)) {
		snprintf(err, errlen,
			 "phone: not a valid phone number (8 to 15 digits, optional +)");
		goto fail;
	}
	if (json_opt_text(json_get(body, "document"), "document", 32, &document, err, errlen) < 0)
		goto fail;
	if (document) {
		char norm[15];
		if (taxid_normalize(document, norm, NULL) < 0) {
			snprintf(err, errlen, "document: not a valid CPF or CNPJ");
			goto fail;
		}
		in.document = mem_strdup(norm);
	}
	if (json_opt_text(json_get(body, "postbackUrl"), "postbackUrl", VALIDATE_URL_MAX,
			  &in.postback_url, err, errlen) < 0)
		goto fail;
	if (in.postback_url && !validate_is_http_url(in.postback_url)) {
		snprintf(err, errlen, "postbackUrl: must be an absolute http or https URL");
		goto fail;
	}
	if (chargedue_parse(body, in.amount, lim->today, &in.due, err, errlen) < 0)
		goto fail;
	if (charge_has_due(&in) && (v = json_get(body, "expiration")) && !YAJL_IS_NULL(v)) {
		snprintf(err, errlen,
			 "expiration: not with dueDate (a charge with a due date is payable until "
			 "dueDate + daysAfterDue)");
		goto fail;
	}
	if (charge_has_due(&in) && (!in.name || validate_is_blank(in.name))) {
		snprintf(err, errlen, "name: is required with dueDate (the payer's name)");
		goto fail;
	}
	if (charge_has_due(&in) && !in.document) {
		snprintf(err, errlen,
			 "document: is required with dueDate (the payer's CPF or CNPJ)");
		goto fail;
	}
	if (charge_has_due(&in))
		in.expiration = 0;
	free(document);
	*out = in;
	return 0;
fail:
	free(document);
	charge_input_deinit(&in);
	return -1;
}

void charge_input_deinit(struct charge_input *in)
{
	free(in->external_id);
	free(in->comment);
	free(in->name);
	free(in->email);
	free(in->phone);
	free(in->document);
	free(in->postback_url);
	memset(in, 0, sizeof(*in));
}

uint64_t charge_expires_ms(const struct charge_input *in, uint64_t now_ms)
{
	if (charge_has_due(in))
		return (uint64_t)chargedue_end_ms(&in->due);
	return now_ms + (uint64_t)in->expiration * 1000u;
}

int64_t charge_fee(int64_t amount, long fixed, long bps)
{
	/* amount <= 1e11 and bps <= 1e4: the product fits in 64 bits */
	int64_t fee = fixed + (amount * bps + 5000) / 10000;

	return fee > amount ? amount : fee;
}

void charge_fingerprint(const struct charge_input *in, char out[65])
{
	yajl_gen g = json_gen_new();
	size_t len;
	const char *s;

	json_open_array(g);
	json_int(g, in->amount);
	json_int(g, in->expiration);
	json_str_or_null(g, in->external_id);
	json_str_or_null(g, in->comment);
	json_str_or_null(g, in->name);
	json_str_or_null(g, in->email);
	json_str_or_null(g, in->phone);
	json_str_or_null(g, in->document);
	json_str_or_null(g, in->postback_url);
	if (charge_has_due(in)) {
		/* the terms of a due-date charge; an immediate charge's
		 * fingerprint stays what it always was */
		json_str(g, in->due.date);
		json_int(g, in->due.days_after);
		json_int(g, in->due.fine);
		json_int(g, in->due.interest);
		json_int(g, in->due.discount);
		json_str(g, in->due.discount_until);
	}
	json_close_array(g);
	s = json_buf(g, &len);
	ids_sha256_hex(out, s, len);
	yajl_gen_free(g);
}

void charge_customer_id(const char *env, const char *account, const char *document, char out[41])
{
	unsigned char b[32];
	unsigned int n = 0;
	char *in;

	if (!document) {
		memcpy(out, "cus_", 4);
		ids_uuid4(out + 4);
		return;
	}
	in = mem_printf("pixrelay-customer|%s|%s|%s", env, account, document);
	if (EVP_Digest(in, strlen(in), b, &n, EVP_sha256(), NULL) != 1)
		abort();
	free(in);
	/* an RFC 9562 version 8 (custom) UUID from the digest */
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x80);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	snprintf(out, 41,
		 "cus_%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
		 b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
		 b[14], b[15]);
}

/* The generator's object text without its closing brace, copied. */
static char *open_copy(yajl_gen g, size_t skip_front, const char *tail)
{
	size_t len;
	const char *s = json_buf(g, &len);

	return mem_printf("%.*s%s", (int)(len - 1 - skip_front), s + skip_front, tail);
}

/* A due-date charge's terms, after expiresAt. */
static void due_render(yajl_gen g, const struct charge_due *d)
{
	char pct[32];

	json_str(g, "dueDate");
	json_str(g, d->date);
	json_str(g, "daysAfterDue");
	json_int(g, d->days_after);
	json_str(g, "fine");
	chargedue_percent_text(pct, d->fine);
	json_str_or_null(g, d->fine ? pct : NULL);
	json_str(g, "interest");
	chargedue_percent_text(pct, d->interest);
	json_str_or_null(g, d->interest ? pct : NULL);
	json_str(g, "discount");
	if (d->discount) {
		json_open(g);
		json_str(g, "amount");
		json_int(g, d->discount);
		json_str(g, "until");
		json_str(g, d->discount_until);
		json_close(g);
	} else {
		json_null(g);
	}
}

void charge_render_parts(const struct charge_view *v, char **head, char **mid)
{
	yajl_gen g = json_gen_new();
	char t[TIMEFMT_LEN + 1];

	json_open(g);
	json_str(g, "id");
	json_str(g, v->id);
	json_str(g, "externalID");
	json_str_or_null(g, v->external_id);
	/* a recurring charge has no code: its payer's bank pays it */
	json_str(g, "brCode");
	json_str_or_null(g, v->recurrence ? NULL : v->br_code);
	json_str(g, "brCodeImageUrl");
	json_str_or_null(g, v->recurrence ? NULL : v->image_url);
	json_str(g, "amount");
	json_int(g, v->amount);
	json_str(g, "comment");
	json_str_or_null(g, v->comment);
	json_str(g, "expiration");
	json_int(g, v->expiration);
	json_str(g, "fee");
	json_int(g, v->fee);
	json_str(g, "expiresAt");
	timefmt_format(t, v->expires_ms);
	json_str(g, t);
	if (v->due)
		due_render(g, v->due);
	if (v->recurrence) {
		json_str(g, "recurrence");
		json_str(g, v->recurrence);
	}
	json_close(g);
	*head = open_copy(g, 0, ",\"status\":\"");
	yajl_gen_free(g);

	g = json_gen_new();
	json_open(g);
	json_str(g, "customer");
	if (v->customer_id) {
		json_open(g);
		json_str(g, "id");
		json_str(g, v->customer_id);
		json_str(g, "name");
		json_str_or_null(g, v->name);
		json_str(g, "document");
		json_str_or_null(g, v->document);
		json_str(g, "email");
		json_str_or_null(g, v->email);
		json_str(g, "phone");
		json_str_or_null(g, v->phone);
		json_close(g);
	} else {
		json_null(g);
	}
	json_str(g, "createdAt");
	timefmt_format(t, v->created_ms);
	json_str(g, t);
	json_close(g);
	{
		char *inner = open_copy(g, 1, "");
		*mid = mem_printf("\",%s,\"updatedAt\":\"", inner);
		free(inner);
	}
	yajl_gen_free(g);
}

char *charge_assemble(const char *head, const char *status, const char *mid, const char *updated_at,
		      const char *pix)
{
	if (pix && pix[0])
		return mem_printf("%s%s%s%s\",\"pix\":%s}", head, status, mid, updated_at, pix);
	return mem_printf("%s%s%s%s\"}", head, status, mid, updated_at);
}
