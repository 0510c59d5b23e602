/* Fuzz the charge create body (POST /v1/charge/pix/create): any bytes go
 * through json_parse_object and charge_parse_create, as the handler does.
 * Each must accept or refuse with a message, never crash, leak or read out
 * of bounds; what is accepted keeps the limits of charge.h. */
#include "pixrelay/pix/charge.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/validate.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Characters of an optional string: at most `max`, valid UTF-8, no control. */
static void check_text(const char *s, long max)
{
	long n;

	if (!s)
		return;
	n = validate_utf8_chars(s, strlen(s));
	if (n < 0 || n > max || validate_has_control(s))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct charge_limits lim = {86400, 2592000, 0};
	struct charge_input in;
	char err[512] = "", fp[65];
	yajl_val v = NULL;

	if (json_parse_object((const char *)data, size, &v, err, sizeof(err)) != 0)
		return 0;
	err[0] = '\0';
	if (charge_parse_create(v, &lim, &in, err, sizeof(err)) == 0) {
		if (in.amount < CHARGE_MIN_AMOUNT || in.amount > CHARGE_MAX_AMOUNT ||
		    in.expiration < CHARGE_MIN_EXPIRATION || in.expiration > lim.max_expiration)
			__builtin_trap();
		check_text(in.external_id, CHARGE_EXTERNAL_ID_MAX);
		check_text(in.comment, CHARGE_COMMENT_MAX);
		check_text(in.name, CHARGE_NAME_MAX);
		if (in.email && !validate_is_email(in.email))
			__builtin_trap();
		if (in.phone && !validate_is_phone(in.phone))
			__builtin_trap();
		if (in.postback_url && !validate_is_http_url(in.postback_url))
			__builtin_trap();
		if (in.document && strlen(in.document) != 11 && strlen(in.document) != 14)
			__builtin_trap();
		charge_fingerprint(&in, fp);
		if (strlen(fp) != 64)
			__builtin_trap();
		charge_input_deinit(&in);
	} else if (err[0] == '\0') {
		__builtin_trap();
	}
	yajl_tree_free(v);
	return 0;
}
